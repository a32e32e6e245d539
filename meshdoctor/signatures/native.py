"""Failures of what lies under MLX: Apple's Thunderbolt RDMA driver (its crash in
``tbt_post_recv``/``tbt_post_send``, mlx #4192/#4319; a wedged fabric), Metal command buffers,
native crash signals (POSIX signals, macOS exception types) and Python's uncaught exceptions.
Codes are stable: never renumber, only add."""

from __future__ import annotations

import re
from typing import Mapping, Optional, Tuple

from meshdoctor.signatures.mlx_classes import MLX_ERROR, MLX_OPS, UNTAGGED
from meshdoctor.signatures.pyerrors import defect, package_of
from meshdoctor.signatures.model import (
    CONSEQUENCE,
    CRASH,
    EITHER,
    TRACEBACK,
    role_by_group,
    signature,
)

# Python's exceptions for a socket the other end closed or reset (errno 32 EPIPE, 104/54
# ECONNRESET, 103/53 ECONNABORTED): the peer went away first (Python docs, "OS exceptions")
_PEER_WENT_AWAY = {
    "BrokenPipeError": CONSEQUENCE,
    "ConnectionResetError": CONSEQUENCE,
    "ConnectionAbortedError": CONSEQUENCE,
}

# The bracketed component MLX names at the start of its error messages (``[metal::Device]``,
# ``[jaccl]``, ``[malloc]``, ...: mlx/backend/*, mlx/distributed/* throw std::runtime_error with
# it); a message that starts with one was raised by MLX itself.
MLX_COMPONENT = (
    r"\[(?P<component>metal(?:::\w+)?|METAL|jaccl|ring|nccl|mpi|distributed|malloc(?:_or_wait)?|"
    r"cuda(?:::\w+)?|[A-Z]\w*::\w+)\]"  # the last: an MLX op's own, [Matmul::eval_cpu]
)

# Python's built-in exception classes (the builtins module of 3.9-3.13) a program raises or
# lets through; a line that starts with one of them and a colon is an exception's last line.
BUILTIN_EXCEPTIONS = (
    "ArithmeticError AssertionError AttributeError BlockingIOError BrokenPipeError "
    "BufferError ChildProcessError ConnectionAbortedError ConnectionError "
    "ConnectionRefusedError ConnectionResetError EOFError EnvironmentError Exception "
    "FileExistsError FileNotFoundError FloatingPointError IOError ImportError "
    "IndentationError IndexError InterruptedError IsADirectoryError KeyError LookupError "
    "MemoryError ModuleNotFoundError NameError NotADirectoryError NotImplementedError "
    "OSError OverflowError PermissionError ProcessLookupError RecursionError ReferenceError "
    "RuntimeError SyntaxError SystemError TabError TimeoutError TypeError "
    "UnboundLocalError UnicodeDecodeError UnicodeEncodeError UnicodeError "
    "UnicodeTranslateError ValueError ZeroDivisionError"
).split()

# what mlx.launch's own frames are (the launcher process, not a rank): mlx 0.2x's
# mlx/distributed_run.py, 0.2x-0.32's mlx/_distributed_utils/launch.py
_LAUNCHER_FILES = ("mlx/distributed_run.py", "mlx/_distributed_utils/launch.py")


# mlx-lm's distributed loaders call model.model.pipeline(group) (pipeline parallelism) or
# model.shard(group) (tensor parallelism), methods only some model families define: an older
# example script fails on the missing attribute (mlx-examples #1293), mlx_lm.utils.sharded_load
# says so itself ("The model does not support pipelining but a pipeline_group was provided")
_NO_SHARDING = re.compile(
    r"'(?P<cls>\w+)' object has no attribute '(?P<attr>pipeline|shard)'|"
    r"The model does not support (?P<what>pipelining|tensor parallelism|any sharding)"
)
_SHARDING_KIND = {
    "pipeline": "pipeline",
    "pipelining": "pipeline",
    "shard": "tensor",
    "tensor parallelism": "tensor",
}


def _no_sharding(msg: str) -> Optional[str]:
    """The detail of an exception that says a model family has no pipeline- or
    tensor-parallel support in mlx-lm (mlx-examples #1293; mlx_lm/utils.py sharded_load), or
    None."""
    m = _NO_SHARDING.search(msg)
    if m is None:
        return None
    kind = _SHARDING_KIND.get(m.group("attr") or m.group("what") or "")
    what = f"{kind}-parallel" if kind else "pipeline- or tensor-parallel"
    who = f"this model's architecture ({m.group('cls')})" if m.group("cls") else "this model"
    return (
        f"{who} has no {what} support in mlx-lm (its model class defines no "
        f"{'pipeline()' if kind == 'pipeline' else 'shard()' if kind else 'pipeline() or shard()'}"
        "): the job's own Python error, raised alike on every rank before any communication, "
        "not a network or backend fault. Use a model family whose mlx-lm model defines it "
        "(pipeline: DeepSeek V2/V3 at first, more in newer mlx-lm: upgrade it; mlx_lm's "
        "sharded_load tries tensor parallelism first), or run the model on one machine if it "
        "fits there"
    )


# the component of a crashed thread's library (its image name), for the finding's words
_COMPONENTS = (
    (re.compile(r"^libnccl|\bnccl\w*::|^nccl[A-Z]"), "NCCL"),
    (re.compile(r"^lib(?:mlx[45]|ibverbs|rdmacm|efa)"), "rdma-core or the RDMA driver"),
    (re.compile(r"^lib(?:jaccl|mlx)|\b(?:jaccl|mlx)::"), "MLX"),
    (re.compile(r"^lib(?:torch|c10)|\bc10(?:d)?::"), "PyTorch"),
    (re.compile(r"^libuc[ptsm]\."), "UCX"),
    (re.compile(r"^lib(?:cuda|nvidia|cudart)"), "the NVIDIA driver or CUDA runtime"),
    (re.compile(r"^lib(?:mpi|open-pal|open-rte|pmix)"), "Open MPI"),
)


# a crash line in UCX's signal handler's form ("[host:pid:thread:n] Caught signal 11 (...)",
# UCX ucs/debug/debug.c): the process loaded UCX, which NVSHMEM, Open MPI and UCC bring
_UCX_NOTE = (
    "UCX's signal handler printed it ('[host:pid:thread] Caught signal'), so the process "
    "loaded UCX (through NVSHMEM, Open MPI or UCC). When every rank of a host crashes alike "
    "in a library under UCX, the library installed on that host is not the build the caller "
    "needs: an NVSHMEM other than the one the caller was built against (DeepEP needs its own "
    "NVSHMEM build: `nvshmem-info -a`), or another UCX (`ucx_info -v`); compare them with "
    "what the caller's build names and with a host where it works; the backtrace UCX prints "
    "below the line names the library"
)


def _crash_frame(g) -> Optional[str]:
    """What a crash record's culprit frame (group ``frame``: ``image symbol``) says: the
    library it is in and that library's component (NCCL, MLX, UCX, ...)."""
    frame = g.get("frame")
    if not frame:
        return _UCX_NOTE if g.get("ucx") else None
    comp = next((name for rx, name in _COMPONENTS if rx.search(frame)), None)
    return (
        f"the crashed thread's first frame that is not the system's is {frame}"
        + (f", in {comp}: a crash inside {comp} itself" if comp else "")
        + (" (report it to MLX)" if comp == "MLX" else "")
        + ", not one of a known failure"
    )


# what a traceback cut inside one of these calls says of its missing error: (the call's words,
# the note)
_CUT_CALLS = (
    (
        ("set_device", "_cuda_setDevice", "cudaSetDevice"),
        "; a cut inside set_device is that process failing to select its GPU (CUDA's "
        "'invalid device ordinal'): it sees fewer GPUs than its rank asks for, often because "
        "CUDA was initialised before the launcher set CUDA_VISIBLE_DEVICES for it (an import "
        "at module level that touches CUDA), so the variable was read too early",
    ),
    (
        ("SymmMemCommunicator", "torch_symm_mem", "symm_mem.rendezvous"),
        "; a cut inside vLLM's symmetric-memory all-reduce (SymmMemCommunicator, PyTorch's "
        "symmetric memory rendezvous) is that optional all-reduce path failing to set up on "
        "these GPUs or this PyTorch: turn it off with VLLM_ALLREDUCE_USE_SYMM_MEM=0 (vLLM's "
        "environment variable), or take a vLLM release that leaves it off where it fails",
    ),
    (
        ("init_process_group", "_new_process_group_helper", "rendezvous"),
        "; a cut inside init_process_group is that rank failing to join: read its error for "
        "the store address (MASTER_ADDR, MASTER_PORT) and the other ranks' logs",
    ),
)


def cut_note(call: str) -> str:
    """The note of :data:`_CUT_CALLS` for a traceback cut at ``call`` (its innermost line of
    code), or ``""``."""
    return next((note for words, note in _CUT_CALLS if any(w in call for w in words)), "")


def _assertion(groups: Mapping[str, str]) -> Optional[str]:
    """MD854's detail: whose check failed, by the file it names (MLX's small_vector.h: an
    index past a shape's end, mlx #4070)."""
    file = groups.get("file") or groups.get("gfile") or ""
    if file.endswith("small_vector.h"):
        return (
            "MLX's small_vector checked an index against its size: an op read a dimension the "
            "array does not have; a collective called on a 0-dimensional array (a scalar) "
            "reads axis 0 of an empty shape (mx.distributed.sum_scatter before MLX's fix, "
            "mlx #4070): give it an array with at least one dimension whose axis 0 divides "
            "by the group size, and upgrade mlx"
        )
    return f"the check of {file}" if file else None


# mlx/_distributed_utils/common.py: "Failed to parse hostfile PATH (EXC)", EXC a KeyError's
_HOSTFILE_KEY = re.compile(r"Failed to parse hostfile \S+ \('(\w+)'\)")


# the advice a message gives in its own words, after its first sentence or clause: "...
# detected. Please add it to ...", "... is set. Consider using ...", "...: try ..."
_ADVICE = re.compile(
    r"(?:[.!;:]\s+|\s-+\s+|\(\s*)(?P<advice>(?:Please|Consider|Try|Make sure|Ensure|Check "
    r"(?:that|if|whether|your)|Did you|You (?:must|should|need to|may need to|can|might want "
    r"to)|To (?:fix|resolve|avoid|use) |Set|Unset|Use|Install|Upgrade|Update|Add|Remove|Increase|"
    r"Reduce|Pass|Run|Rebuild|Reinstall|Restart)\b.*)$"
)


def _own_diagnosis(msg: str) -> Optional[str]:
    """The reading of an exception message that states its own cause and remedy (the raising
    code's check says what failed and what to do: :data:`_ADVICE`), or None. The advice is
    the raising package's own; a table or check of a package that lags the hardware or
    another package is first fixed by upgrading it."""
    m = _ADVICE.search(msg)
    if m is None or m.start() < 12:
        return None
    what, advice = msg[: m.start()].strip(" .:;(-"), m.group("advice").strip().rstrip(".")
    return (
        f"the message is the raising code's own diagnosis: what failed: '{what}'; what to "
        f"do, in its words: '{advice}'. Follow it; when the check is a package's table or "
        "version test that does not know this machine or another package's release, upgrade "
        "that package first (a newer release may know the case)"
    )


# a source line that only writes debug output: "if DEBUG >= 2: print(...)",
# "logger.debug(f'...')", "log.debug(...)"
_DEBUG_OUTPUT = re.compile(
    r"^\s*if\s+(?:self\.)?(?:DEBUG|debug|VERBOSE|verbose)\b.*:\s*\S|\.debug\("
)


# Python before 3.12 rejects what PEP 701 allows in f-strings (the 3.11 parser's messages)
_FSTRING = re.compile(
    r"f-string expression part cannot include (?:a backslash|'#')|f-string: expecting '\}'"
)

# a tokenizer where a multimodal processor was expected (transformers' AutoProcessor falls
# back to AutoTokenizer when it finds no processor class for the model: transformers
# processing_auto.py)
_BARE_TOKENIZER = re.compile(
    r"'(?P<cls>\w*Tokenizer(?:Fast)?)' object has no attribute "
    r"'(?P<attr>tokenizer|image_processor|feature_extractor|video_processor)'"
)

_EXPECTED_SHAPE = re.compile(
    r"Expected shape \((?P<want>[\d, ]*)\) but received shape \((?P<got>[\d, ]*)\)"
    r"(?:\s*for parameter (?P<param>\S+))?"
)


def _permuted_shapes(msg: str) -> Optional[str]:
    """What MLX's load_weights shape check says when the two shapes hold the same sizes in
    another order: the weight is in another layout (a convolution's weight left in PyTorch's
    (out, in, k...) order where MLX's is (out, k..., in): MLX nn.Conv1d/2d/3d weights), or
    None."""
    m = _EXPECTED_SHAPE.search(msg)
    if not m:
        return None
    want, got = (tuple(int(x) for x in m.group(g).split(",") if x.strip()) for g in ("want", "got"))
    if want == got or sorted(want) != sorted(got):
        return None
    return (
        f"{m.group('param') or 'the weight'} holds the right sizes in another order "
        f"({m.group('got')} for {m.group('want')}): the weight is in another layout than the "
        "model's MLX code expects, most often a convolution's weight left in PyTorch's (out, "
        "in, k...) order where MLX's is (out, k..., in), or transposed again when the "
        "checkpoint was already converted: the loader (the model's sanitize step) did not "
        "tell the checkpoint's layout: a bug of that loader's release for this model, or a "
        "checkpoint not converted for MLX; upgrade the engine or reconvert the model"
    )


def weights_detail(msg: str) -> Optional[str]:
    """What MLX's load_weights shape message ``msg`` says beyond its class: two quantization
    layouts (:func:`_packed_bits`) or one weight in another axis order
    (:func:`_permuted_shapes`); None otherwise."""
    return _packed_bits(msg) or _permuted_shapes(msg)


# MLX's load_weights shape check (python/mlx/nn/layers/base.py): the model's shape first
_LOAD_SHAPES = re.compile(r"Expected shape \(([\d, ]+)\) but received shape \(([\d, ]+)\)")
_BITS = (2, 3, 4, 5, 6, 8)  # the bits MLX's affine quantization supports (mlx/ops.cpp)


def _packed_bits(msg: str) -> Optional[str]:
    """What a load_weights shape mismatch says when only the last axis differs by a ratio of
    two quantization bit widths: MLX packs 32/bits values into each uint32 of a quantized
    weight (mlx.core.quantize), so a layer built at b1 bits holds in*b1/32 columns where the
    file's, quantized at b2, holds in*b2/32. None otherwise."""
    m = _LOAD_SHAPES.search(msg)
    if m is None:
        return None
    want = [int(x) for x in m.group(1).replace(" ", "").split(",") if x]
    got = [int(x) for x in m.group(2).replace(" ", "").split(",") if x]
    if len(want) != len(got) or want[:-1] != got[:-1] or not want or want[-1] == got[-1]:
        return None
    # the file's weight packed (fewer columns) against a dense layer, or the reverse
    file_bits = next((b for b in _BITS if want[-1] * b == got[-1] * 32), None)
    model_bits = next((b for b in _BITS if got[-1] * b == want[-1] * 32), None)
    if file_bits or model_bits:
        built, held = (
            ("unquantized (dense)", f"quantized at {file_bits} bits")
            if file_bits
            else (f"quantized at {model_bits} bits", "unquantized (dense)")
        )
        return (
            f"only the last axis differs, {want[-1]} against {got[-1]} columns, by 32/bits "
            "(MLX packs 32/bits values into each uint32 of a quantized weight): the model "
            f"built this layer {built} while the file holds it {held}. The config's "
            "'quantization' does not describe these weights (a quantized checkpoint whose "
            "config lost or renamed its quantization entry, or whose loader does not apply it "
            "to this layer; or the reverse), a bug of the loader's release or of the "
            "conversion: upgrade the library, or reconvert"
        )
    pairs = [
        (b1, b2)
        for b1 in _BITS
        for b2 in _BITS
        if b1 != b2 and want[-1] * b2 == got[-1] * b1 and (want[-1] * 32) % b1 == 0
    ]
    if not pairs:
        return None
    b1, b2 = next((p for p in pairs if 4 in p or 8 in p), pairs[0])
    return (
        f"only the last axis differs, {want[-1]} against {got[-1]} columns: the ratio of "
        f"{b1}-bit to {b2}-bit packed weights (MLX packs 32/bits values into each uint32). "
        f"The model built this layer at {b1} bits while the file holds it at {b2} bits: a "
        "mixed-precision model whose per-layer quantization entries in config.json "
        "('quantization': {'<layer path>': {'bits': ...}}) the loader did not apply (their "
        "keys name the checkpoint's paths and the library renamed the layers, a bug of that "
        "library's release: upgrade it), or a config whose bits differ from the weights'"
    )


def _sequence_axis(groups: Mapping[str, str]) -> Optional[str]:
    """MD804's detail for two shapes (groups ``a`` and ``b``) that differ by one in a single
    axis (aligned from the right, as broadcasting aligns them): an off-by-one in a length;
    else for two 4-D shapes (batch, heads, length, head size) that differ only in their
    length axis: keys or values of two lengths, a KV cache's buffer against its logical
    length. None otherwise."""
    a = [x for x in groups.get("a", "").replace(" ", "").split(",") if x]
    b = [x for x in groups.get("b", "").replace(" ", "").split(",") if x]
    n = min(len(a), len(b))
    differ = [k for k in range(1, n + 1) if a[-k] != b[-k] and "1" not in (a[-k], b[-k])]
    if n >= 2 and len(differ) == 1 and abs(int(a[-differ[0]]) - int(b[-differ[0]])) == 1:
        k = differ[0]
        return (
            f"the two differ by one in one axis ({a[-k]} against {b[-k]}), all else "
            "aligned: an off-by-one in a sequence length, one array a token longer than the "
            "other (a chunked prefill that holds back the last token while features, a mask "
            "or positions cover the whole prompt; a mask one longer than the keys). A bug of "
            "the model or engine code at that step: upgrade it"
        )
    if len(a) != 4 or len(b) != 4 or a[-2] == b[-2] or a[:2] + a[3:] != b[:2] + b[3:]:
        return None
    return (
        f"the two are (batch, heads, length, head size) arrays that differ only in length, "
        f"{a[-2]} against {b[-2]}: keys or values of a KV cache whose buffer and logical "
        "length disagree: a rotating (sliding-window) cache trimmed or rewound by a plain "
        "slice (prompt or prefix cache reuse, speculative decoding's rewind), or a cache kept "
        "from another request. A bug of the engine's or model library's cache handling: "
        "upgrade it; until then turn off prompt-cache reuse and speculative decoding"
    )


def _api_detail(groups: Mapping[str, str]) -> Optional[str]:
    """MD849's detail when the callee missing an argument is a model's ModelArgs (mlx-lm's
    and mlx-vlm's dataclasses built from config.json, ``ModelArgs.from_dict``): the config
    lacks a field that model class requires. None otherwise."""
    callee = groups.get("missing", "")
    if not re.search(r"(?:ModelArgs|Config)(?:\.__init__)?$", callee):
        return None
    return (
        f"{callee}() is the model's arguments built from its config.json, and the config "
        f"lacks {groups.get('args', 'a field')}: a checkpoint whose config.json is laid out "
        "another way than this release of the model library reads it (a newer transformers "
        "writes some fields nested, such as rope_theta inside rope_parameters), or a newer "
        "variant of the family. Upgrade the model library (mlx-lm, mlx-vlm), or use a "
        "conversion made for this release"
    )


def _python_exception(groups: Mapping[str, str]) -> Optional[str]:
    """MD663's detail: a model family without mlx-lm's pipeline or tensor parallelism
    (:func:`_no_sharding`), a message that states its own cause and remedy
    (:func:`_own_diagnosis`), a line read without its traceback, or one raised in mlx.launch
    itself (its innermost frame, group ``file``, in the launcher's own files)."""
    sharding = _no_sharding(groups.get("msg", ""))
    if sharding:
        return sharding
    packed = _packed_bits(groups.get("msg", ""))
    if packed:
        return packed
    if not groups.get("cut") and _DEBUG_OUTPUT.search(groups.get("call", "")):
        return (
            f"it was raised by the program's own debug output (`{groups['call'][:160]}`): "
            "a line that runs only at a higher debug level uses a name or value that does "
            "not exist there, a bug of that program, not of the job; run with its debug "
            "level lowered (DEBUG=0 or unset, the logger at INFO) and upgrade it (a fixed "
            "release may exist)"
        )
    if _FSTRING.search(groups.get("msg", "")):
        return (
            "the code uses an f-string that Python 3.12 allows (PEP 701: quotes, backslashes "
            "or comments inside its replacement fields) and this interpreter is older: run "
            "it with Python 3.12 or later (the program's declared requires-python), or use a "
            "release of the program that supports this Python"
        )
    bare_tok = _BARE_TOKENIZER.search(groups.get("msg", ""))
    if bare_tok:
        return (
            f"the code asked a processor for its {bare_tok.group('attr')}, but got a bare "
            f"{bare_tok.group('cls')}: transformers' AutoProcessor returns the tokenizer alone "
            "when the installed transformers has no processor class for this model (a release "
            "older than the model's processor, or the processor's files missing from the "
            "model's repository); upgrade transformers (`pip install -U transformers`) to the "
            "release the model's card names, and check the repository has its "
            "preprocessor_config.json / processor_config.json"
        )
    own = _own_diagnosis(groups.get("msg", ""))
    if own:
        return own + (
            f" (a bare {groups['bare']} line: its traceback, which says where it was raised, "
            "is in the process's own log)"
            if groups.get("bare")
            else ""
        )
    key = _HOSTFILE_KEY.search(groups.get("msg", ""))
    if key:
        return (
            f"the error in parentheses is the KeyError of the key '{key.group(1)}': the "
            f"hostfile's JSON object lacks it; releases of MLX before its fix (mlx #4039) "
            f"required 'backend' and 'envs' beside 'hosts' in the object form: add them "
            f'(\'"backend": "", "envs": []\'), use the list form ([{{"ssh": ...}}]) or '
            f"upgrade mlx (0.32.4 reads both as optional)"
        )
    layout = _permuted_shapes(groups.get("msg", ""))
    if layout:
        return layout
    if "no Stream(" in groups.get("msg", "") and "current thread" in groups.get("msg", ""):
        return (
            "MLX 0.31.2 made streams thread-local, so a stream made in one thread does not "
            "exist in another: a server or generator that evaluates in a worker thread with a "
            "module-level stream fails like this (mlx-lm issue #1181); upgrade mlx-lm to "
            "0.31.3 or later, or pin mlx 0.31.1"
        )
    if groups.get("cut"):
        inner = groups.get("file", "")
        pkg = package_of(inner, checkouts=False)
        return (
            "a traceback cut before its exception line: the input ends inside it, so the error "
            "itself (its last line) is missing"
            + (
                f"; its innermost frame is in {pkg} ({inner})"
                if pkg
                else (f"; its innermost frame is {inner}" if inner else "")
            )
            + (f", at `{groups['call']}`" if groups.get("call") else "")
            + cut_note(groups.get("call", ""))
            + "; give triage the whole traceback, to its exception line, from the process's own "
            "log (a log cut where it was pasted loses it)"
        )
    if groups.get("bare"):
        kind = groups["bare"].rsplit(".", 1)[-1]
        missing = (
            "the `Traceback (most recent call last):` header and the frames that say where "
            "it was raised are not in the input; find the full traceback in the process's "
            "own log"
        )
        cls_attr = _CLASS_ATTR.search(groups.get("msg", ""))
        if cls_attr:
            return (
                f"the class {cls_attr.group(1)} has no attribute {cls_attr.group(2)} in the "
                "installed release of its package: code written for another release of that "
                "package (an API renamed or removed, or not yet added) calls it; upgrade the "
                "caller to a release made for the installed one, or install the release it "
                f"was written for (a bare {kind} line: {missing})"
            )
        what = defect(kind, groups.get("msg", ""))
        if what is None:
            return f"a bare {groups['bare']} line: {missing}"
        return (
            f"a bare {kind} line: the code that raised it {what}. A bug of that program's or "
            "library's release, or an input it was not written for (a request's parameter of "
            "another type, a model or config it does not know), not the mesh: upgrade the "
            "program and its model library (a fix may exist) and search their issue trackers "
            f"for the message; {missing}, which names whose code it is"
        )
    if groups.get("file", "").replace("\\", "/").endswith(_LAUNCHER_FILES):
        return (
            "raised inside mlx.launch itself (a launcher fault, not the job's cause): its "
            "thread that relays the ranks' output failed (a BlockingIOError when the rank and "
            "the launcher share a non-blocking stdout, MLX issue #2144); the ranks may be fine: "
            "read their own status and logs"
        )
    return _program_defect(groups)


# AttributeError's text for a class (not an instance): "type object 'X' has no attribute 'y'"
_CLASS_ATTR = re.compile(r"type object '(\w+)' has no attribute '(\w+)'")


def _article(word: str) -> str:
    """'an' before a word that starts with a vowel, else 'a'."""
    return "an" if word[:1] in "AEIOUaeiou" else "a"


def _program_defect(groups: Mapping[str, str]) -> Optional[str]:
    """MD663's detail for a whole traceback whose exception class reports the code's own
    mistake (:func:`~meshdoctor.signatures.pyerrors.defect`): where it was raised (the
    innermost frame: groups ``file``, ``lineno``, ``func``, ``call``) and whose code that is
    (a package under site-packages, a project's checkout, else the job's own file). Such an exception is a bug of that code
    (or an input it was not written for), not the mesh; None for other classes, a bare line
    or a cut traceback."""
    kind = groups.get("type", "").rsplit(".", 1)[-1]
    what, file = defect(kind, groups.get("msg", "")), groups.get("file", "").replace("\\", "/")
    if what is None or not file or groups.get("cut") or groups.get("bare"):
        return None
    carried = ""
    if groups.get("own_file"):  # raised in a library that only carried the call (anyio)
        carried = f" (raised inside {package_of(file) or file}, called from here)"
        file = groups["own_file"].replace("\\", "/")
        groups = {
            **groups,
            "lineno": groups.get("own_lineno", "?"),
            "func": groups.get("own_func", ""),
            "call": "",
        }
    pkg = package_of(file)
    where = (
        f"{file}, line {groups.get('lineno', '?')}"
        + (f", in {groups['func']}" if groups.get("func") else "")
        + (f": `{groups['call'][:160]}`" if groups.get("call") else "")
        + carried
    )
    if pkg is None:
        return (
            f"it was raised in the job's own code ({where}): the code {what}; a bug of the "
            "script there, not of the mesh: fix that line (the traceback's frames above it "
            "show how it was reached)"
        )
    return (
        f"it was raised in {pkg}'s own code ({where}): {_article(kind)} {kind} means that code {what}. "
        f"Not the mesh nor its settings: a bug of that {pkg} release, or an input it was not "
        f"written for (a model, config or request). Note its version (`pip show {pkg}`, or "
        f"the checkout's commit), upgrade to its newest release (a fix may exist), and search "
        f"its issue tracker for the exception's text; report it with this traceback when none "
        "matches"
    )


_SHAPE = re.compile(r"\((\d+(?:,\s*\d+)*),?\)")
_MATMULS = ("matmul", "addmm", "quantized_matmul", "gather_qmm", "gather_mm", "qqmm")


def _inner_sizes(msg: str) -> Optional[Tuple[int, int]]:
    """A matrix product's two inner sizes from its message (the first input's last axis,
    the second input's second to last), or None when it names fewer than two shapes."""
    shapes = [[int(x) for x in sh.split(",")] for sh in _SHAPE.findall(msg)]
    if len(shapes) < 2 or len(shapes[1]) < 2:
        return None
    return shapes[0][-1], shapes[1][-2]


def _op_arguments(groups: Mapping[str, str]) -> Optional[str]:
    """MD817's detail: which check (group ``op``); for a matrix product, its two inner
    sizes and what their ratio tells: 32/bits (MLX packs 32/bits quantized values into each
    uint32 of a weight, mlx.core.quantize: 16 for 2-bit, 8 for 4-bit, 4 for 8-bit) is a
    packed weight used as a dense one, the world size a layer sharded on one side only; a reshape's heads
    that do not divide by the world size."""
    op, msg = groups.get("op", ""), groups.get("msg", "")
    if op == "quantized_matmul" and "should be uint32" in msg:
        return (
            "a layer built as quantized got a dense (float) weight: the checkpoint leaves "
            "some layers unquantized (often lm_head or the embeddings) and the loader "
            "quantized every Linear instead of following the config's per-layer "
            "'quantization' entries; a bug of that loader's release: upgrade it, or use a "
            "checkpoint quantized whole"
        )
    if op in _MATMULS:
        sizes = _inner_sizes(msg)
        lo, hi = sorted(sizes) if sizes else (0, 0)
        if lo and hi % lo == 0 and hi > lo:
            r = hi // lo
            packed = (
                f"{r} = 32/bits of a {32 // r}-bit quantized weight: a packed weight used as "
                "a dense one, or quantized at other bits than the config says (compare "
                "config.json's 'quantization', bits and group_size, with the weights). "
                if r in (4, 8, 16)
                else ""
            )
            return (
                f"the inner sizes are {sizes[0]} and {sizes[1]}, a factor of {r} apart. "
                + packed
                + f"If {r} is the job's world size, it may instead be a layer sharded on one "
                "side only (a tensor-parallel shard of the weight but not of its input, or the "
                "reverse): run the model on one host to tell the two apart"
            )
        return (
            f"[{op}]'s inner dimensions do not match: a weight of another size than the "
            "activations it multiplies (a config whose hidden size or head counts differ "
            "from the weights, or a tensor-parallel layer sharded on one side only)"
        )
    if "VJP with respect to indices" in msg or "JVP with respect to indices" in msg:
        return (
            f"a gradient was asked through the integer indices of [{op}]: indices that the "
            "forward pass computed from trainable values (an MoE router's top-k experts, a "
            "sparse attention's top-k keys: argpartition, argsort, topk) reach a gather or "
            "scatter without mx.stop_gradient, so training (LoRA, fine-tuning) asks for a "
            "derivative that does not exist. A bug of that model's code in the library "
            "(fixed by wrapping the indices in mx.stop_gradient): upgrade the model library, "
            "or patch the model; inference is unaffected"
        )
    if op == "quantize" and "divisible by" in msg:
        return (
            "the last axis of the array to quantize is not a multiple of the group size: "
            "quantization groups split that axis (a head size of 96 or 80 with group size "
            "64, as in KV-cache quantization, or a layer of an odd width); use a group size "
            "that divides it (32), or leave that array unquantized (no KV quantization for "
            "this model)"
        )
    conv_in = re.search(
        r"input: \((?:\d+,){1,3}(?P<cin>\d+)\) and weight: \((?P<w>\d+(?:,\d+){2,4})\)", msg
    )
    if op.startswith("conv") and conv_in:
        w = conv_in.group("w").split(",")
        if w[1] == conv_in.group("cin") and w[-1] != conv_in.group("cin"):
            return (
                f"the weight ({conv_in.group('w')}) has the input's {w[1]} channels on its "
                "second axis: it is in PyTorch's layout (out, in, kernel...) where MLX wants "
                "(out, kernel..., in): the model's weights were not transposed on load (its "
                "sanitize skipped this weight, for example a kernel of size 1 its shape test "
                "misses), a bug of the model library's release: upgrade it"
            )
    if op == "reshape" and "empty array" in msg:
        return (
            "a reshape with an inferred axis (-1) of an array with no elements: the step got "
            "an empty input (zero tokens: an empty prompt chunk, a batch row that is all "
            "padding in a chunked or batched prefill, an empty image or audio segment); a "
            "bug of the caller that slices its input, or an empty request: upgrade the "
            "engine or model library, and send non-empty inputs"
        )
    if op in ("argpartition", "partition", "topk") and "kth" in msg:
        return (
            f"[{op}] was asked for the k-th element of an axis shorter than k: a top-k over "
            "fewer entries than k (an MoE model with as many experts as experts per token, "
            "top-k routing written as argpartition(kth=k) where k-1 is the last valid index), "
            "a bug of the model code at that config; upgrade the model library"
        )
    if op == "reshape":
        return (
            "a reshape to a size the array does not have: in a sharded model most often a "
            "head count (attention or KV heads) that does not divide by the world size, or a "
            "config that does not fit the weights; try the model on one host, then with a "
            "world size that divides num_key_value_heads"
        )
    if op in ("concatenate", "slice_update"):
        return (
            f"[{op}] got arrays of sizes that do not join: most often a cache (KV or prompt "
            "cache) kept from another request, or a shard's state against another's"
        )
    if op.startswith("conv") and re.search(r"type u?int\d+", msg):
        return (
            f"[{op}] got an integer array where activations should be floating point: the "
            "model's code cast its inputs (image pixels, audio features) to the dtype of a "
            "weight that is quantized, whose storage is packed integers (uint32 weights, "
            "uint8 scales of nvfp4/mxfp4), not a float: a bug of that model code with "
            "quantized models; upgrade the model library (mlx-vlm, mlx-audio), or use a model "
            "whose vision or audio tower is not quantized"
        )
    if op in ("dequantize", "quantize") and "uint32" in msg:
        return (
            f"[{op}] was handed a weight that is not a packed quantized matrix (uint32): "
            "the model's config.json says quantized (its 'quantization' entry) where the "
            "weight is dense, or the model was quantized twice: `mlx_lm.convert -q` run on a "
            "model that was already quantized (an mlx-community model with '4bit' or '8bit' "
            "in its config, whatever its name) quantizes its packed weights again; convert "
            "from the original (unquantized) weights, or dequantize first (`mlx_lm.convert "
            "--dequantize`)"
        )
    return f"the check of MLX's {op} operation (mlx/ops.cpp)" if op else None


# kIOGPUCommandBufferCallbackError<Name>, the name Metal gives a failed command buffer
_COMMAND_BUFFER: Mapping[str, str] = {
    "OutOfMemory": "the GPU ran out of memory (unified memory: the model, its caches and "
    "every other process on the Mac share it). Which memory, by when it failed: at load or "
    "warm-up, before any request, the weights and the warm-up did not fit in what was free "
    "then: another process still held memory (an earlier instance of the server not yet "
    "exited, another model server or app; check `ps` and Activity Monitor, wait for the old "
    "process to exit) or the model is too large for the Mac; in a distributed job, a rank "
    "holding more than its shard (the whole model loaded before sharding, mlx-vlm #1383); in "
    "a server after many requests, something that grows request by request: MLX's buffer "
    "cache (freed buffers MLX keeps for reuse up to its cache limit, which defaults to the "
    "memory limit; a program that sets mx.set_cache_limit at or above the Mac's memory lets "
    "it grow without bound: lower it, or call mx.clear_cache() between requests) or a KV "
    "prefix or prompt cache evicted only after a prefill completes (cap it or evict it "
    "before each prefill, exo PR #2212); then lower the batch, the context or the prefill "
    "chunk",
    "PageFault": "a GPU page fault: a kernel touched memory it does not own (an MLX or custom "
    "kernel bug); report it with the MLX version",
    "InnocentVictim": "this command buffer was killed because another one on the GPU faulted: "
    "look for the first command buffer error before it (in any process on this Mac)",
    "Innocent": "this command buffer was killed because another one on the GPU faulted: look "
    "for the first command buffer error before it (in any process on this Mac)",
    "NotPermitted": "the GPU refused the work (not permitted: the process lost GPU access, e.g. "
    "running in the background or after a GPU reset)",
    "ImpactingInteractivity": "macOS's GPU watchdog ended one command buffer that ran too "
    "long (seconds) while the GPU also serves the display. Not memory: most often one huge "
    "kernel dispatch, full attention over a very long context in a single prefill step "
    "(MLX's fused attention dispatches every key at once and crosses the watchdog near 65K "
    "keys, MLX issue #3302), else a graph of many ops in one buffer. Prefill in smaller "
    "chunks (a smaller prefill step size) or with a shorter context (MLX PR #3307 chunks "
    "attention over long keys); for many small ops make each "
    "evaluated graph smaller (MLX_MAX_OPS_PER_BUFFER, MLX_MAX_MB_PER_BUFFER); or run the node "
    "without a display session using the GPU",
    "Hang": "the GPU stopped making progress on this command buffer and macOS reset the "
    "GPU (not memory, not the watchdog on one long buffer): a kernel that never finishes "
    "(a custom Metal kernel that loops or spins on a value another kernel or a peer never "
    "writes; an MLX kernel bug at this shape or dtype) or a GPU or driver fault; rerun the "
    "step alone with Metal's shader validation (MTL_SHADER_VALIDATION=1) to find the "
    "kernel, check the macOS version against the "
    "MLX release, and report it to MLX with both versions",
    "SubmissionsIgnored": "Metal ignored this process's submissions after earlier GPU errors: "
    "the first command buffer error before it is the cause",
}


# Metal's descriptions of those errors (what MLX prints after "execution failed: ", the
# error's localizedDescription), spaces removed, to their names above
_DESCRIPTION: Mapping[str, str] = {
    "ImpactingInteractivity": "ImpactingInteractivity",
    "InsufficientMemory": "OutOfMemory",
    "PageFault": "PageFault",
    "CausedGPUHangError": "Hang",
}


# MLX's check_error (mlx/backend/metal/eval.cpp before v0.32.0) throwing from Metal's
# completion handler: the frame, or the dispatch queue of the thread it runs on
_CHECK_ERROR = re.compile(r"check_error\(MTL::CommandBuffer")
_COMPLETION_QUEUE = "com.Metal.CompletionQueueDispatch"


def _completion_abort(groups: Mapping[str, str]) -> Optional[str]:
    """The abort of a command-buffer error thrown in Metal's completion handler, named by a
    quoted ``check_error(MTL::CommandBuffer*)`` frame (group ``abort``, or a crash record's
    ``frame``) or by the crashed thread's queue (group ``queue``, or a record's ``thread``),
    or None."""
    frame = groups.get("abort") or groups.get("frame") or ""
    queue = groups.get("queue") or groups.get("thread") or ""
    if not (_CHECK_ERROR.search(frame) or _COMPLETION_QUEUE in queue):
        return None
    return (
        "the command buffer completed with an error and MLX's check_error threw it from "
        "Metal's completion handler (thread com.Metal.CompletionQueueDispatch), where nothing "
        "can catch it: libc++abi terminated the process (abort: SIGABRT, EXC_CRASH, a crash "
        "report of bug_type 309). MLX before 0.32.0 does this (mlx #3390, #3224; since 0.32.0 "
        "the error is raised at the next synchronisation, MLX PR #3523). A crash report or its "
        "summary does not hold the error's name: the process's stderr ('[METAL] Command buffer "
        "execution failed: ...') or the report's Application Specific Information does. Not "
        "an RDMA or network fault"
    )


def _command_buffer(groups: Mapping[str, str]) -> Optional[str]:
    """MD661's detail: the error name Metal gave the command buffer (group ``error``), else
    its status code (group ``status``) where one is known, else the abort of one thrown in
    Metal's completion handler (:func:`_completion_abort`)."""
    if groups.get("error") in _COMMAND_BUFFER:
        return _COMMAND_BUFFER[groups["error"]]
    desc = _DESCRIPTION.get((groups.get("desc") or "").replace(" ", ""))
    if desc:
        return _COMMAND_BUFFER[desc]
    if (groups.get("status") or "").lower() == "0000000e":
        return (
            "status 0000000e (Internal Error) is what a command buffer that ran too long "
            "reports (MLX issue #1231): the GPU timed out; make each evaluated graph smaller "
            "(MLX_MAX_OPS_PER_BUFFER, MLX_MAX_MB_PER_BUFFER) or run fewer processes per GPU"
        )
    return _completion_abort(groups)


# the MLX part a bracketed component names (MD697's detail)
_COMPONENT = {
    "metal": "the Metal GPU backend",
    "METAL": "the Metal GPU backend (a command buffer)",
    "jaccl": "the JACCL distributed backend (RDMA over Thunderbolt)",
    "ring": "the ring distributed backend (TCP sockets)",
    "nccl": "the NCCL distributed backend",
    "mpi": "the MPI distributed backend",
    "distributed": "MLX's distributed init",
    "malloc": "MLX's host-memory allocator",
    # MLX before 0.15 (mlx/backend/metal/allocator.cpp): the Metal allocator waited for
    # memory to be freed, then gave up with this message
    "malloc_or_wait": "MLX's Metal allocator of releases before 0.15, which gives up when "
    "the memory a step needs is not free: the process ran out of (unified) memory, most "
    "often a long prompt processed in one pass with an unbounded KV cache on a Mac of "
    "little memory; upgrade mlx and mlx-lm (later releases prefill in chunks and can bound "
    "the KV cache: --max-kv-size), shorten the prompt or use a smaller model",
    "cuda": "the CUDA GPU backend",
}


def _mlx_component(groups: Mapping[str, str]) -> Optional[str]:
    """MD697's detail: which MLX component raised the message (group ``component``)."""
    comp = groups.get("component", "")
    what = _COMPONENT.get(comp) or _COMPONENT.get(comp.split("::")[0])
    if not what and "::" in comp:  # [Matmul::eval_cpu]: the op and the device it ran on
        op, method = comp.split("::", 1)
        where = " on the CPU" if "cpu" in method else " on the GPU" if "gpu" in method else ""
        what = f"the {op} operation{where} (MLX refused it: an unsupported dtype or shape there)"
        if "gpu" in method and re.search(
            r"\bNYI\b|not (?:yet )?implemented", groups.get("msg", "")
        ):
            return (
                f"[{comp}] says {op} has no GPU implementation in this MLX (NYI: not yet "
                "implemented); MLX runs it on the CPU only: pass stream=mx.cpu to that call "
                "(or run it under `with mx.stream(mx.cpu):`), or upgrade mlx if a later "
                "release added it"
            )
    if not what:
        return None
    return (
        f"[{comp}] is {what}; report the message with the MLX version "
        "(`python -c 'import mlx.core as mx; print(mx.__version__)'`) if no MLX issue has it"
    )


def _missing_kernel(groups: Mapping[str, str]) -> Optional[str]:
    """MD698's detail: what the missing kernel (group ``kernel``) says."""
    k = groups.get("kernel", "")
    if k == "input_coherent":
        return (
            "input_coherent is the kernel of MLX_METAL_FAST_SYNCH=1 (the fast CPU/GPU fence), "
            "which MLX's PyPI wheels did not ship (MLX issue #1993): unset MLX_METAL_FAST_SYNCH "
            "on every rank or build MLX from source"
        )
    if "__" in k or re.search(r"[a-z](?:float|bfloat|int|uint)\d+$", k):
        return (
            f"the name {k} is malformed (an empty part, '__', or a dtype glued to the word "
            "before it): MLX built the kernel's name wrongly for this op and size, a bug of "
            "this MLX release, not a missing install (the large-input depthwise conv1d "
            "asked for 'depthwise_conv_1d__large<dtype>' before MLX 0.31.2, PR #3289): "
            "upgrade mlx; until then avoid that op's path (a smaller input, another op)"
        )
    if "_nax_" in k and "float32" in k:
        return (
            f"{k} is a NAX kernel (the matrix units of M5-class GPUs) for float32: MLX runs "
            "float32 matmuls on them at reduced precision by default (TF32), and this "
            "release's metallib has that kernel for float16 and bfloat16 only: set "
            "MLX_ENABLE_TF32=0 (full float32, MLX's precision documentation), run the model "
            "in float16 or bfloat16, or upgrade mlx"
        )
    bits = re.search(r"(?:quantize|qmm|qmv|qvm|gather_q\w*)\w*_b_(\d+)", k)
    if bits and int(bits.group(1)) not in _BITS:
        return (
            f"{k} is a quantized kernel for {bits.group(1)}-bit weights, and this MLX has "
            "affine quantization kernels for 2, 3, 4, 5, 6 and 8 bits only: the model was "
            f"quantized at {bits.group(1)} bits by a tool or fork that supports them; use a "
            "model quantized at a supported width, or the MLX build that model was made for"
        )
    if k:
        return (
            f"the installed metallib has no kernel {k}: mlx and mlx-metal of different "
            "versions, or an op and dtype this MLX has no Metal kernel for; in mlx-swift "
            "(SwiftPM compiles its own metallib from a list of kernel sources) a kernel whose "
            "source that release's build leaves out: update mlx-swift. When the next line "
            "says 'Compiler encountered an internal error', the kernel was compiled on this "
            "device and Metal's compiler failed: a GPU older than MLX supports (Apple GPU "
            "family 7 and later: M1, A14 / iPhone 12) or a compiler bug of this OS"
        )
    return None


# Metal's descriptions of a metallib it refuses (MTLLibrary load errors, as MLX appends them
# to its own message), most specific first: (regex, what it says)
_METALLIB_REFUSED = (
    (
        # Metal's reason, whole or cut where the message was wrapped
        r"language version (?P<lang>\d+(?:\.\d+)*)(?:,? (?:which|that) is not supported|\s*$)",
        "the metallib was compiled for Metal language {lang}, newer than this macOS supports "
        "(Metal 3.1 needs macOS 14, 3.2 macOS 15, 4.0 macOS 26): the program's MLX is a build "
        "for a newer macOS than this Mac runs. Upgrade macOS, or install the build for this "
        "macOS (pip picks MLX's wheel by its platform tag, macosx_14_0 / 15_0 / 26_0, so "
        "`pip install --force-reinstall mlx mlx-metal` on this Mac; an app: its vendor's "
        "build for this macOS)",
    ),
    (
        r"deployment target \((?P<target>0x[0-9a-fA-F]+)\) that is not supported on this OS",
        "the metallib was stamped with a deployment target ({target}) newer than this macOS: "
        "it was built with a newer SDK for a newer macOS than this Mac runs. Upgrade macOS, "
        "or install a build of the program (and its MLX) made for this macOS",
    ),
)


def _metallib(groups: Mapping[str, str]) -> Optional[str]:
    """MD823's detail: why Metal refused the library (:data:`_METALLIB_REFUSED`, from the
    text after MLX's message, group ``rest``, or Metal's reason on a line of its own, group
    ``refused``), else where the build left no library, told by
    the paths in the line (a SwiftPM checkout, an app bundle, a Python environment)."""
    rest = groups.get("rest") or groups.get("refused") or ""
    for regex, said in _METALLIB_REFUSED:
        m = re.search(regex, rest)
        if m:
            return said.format(**m.groupdict())
    line = (groups.get("before") or "") + rest
    if re.search(r"SourcePackages|mlx-swift|\.build/|/Cmlx/|<default\.metallib>", line):
        return (
            "the program links mlx-swift (a Swift package checkout in its path, or the "
            "default.metallib that SwiftPM bundles): a Swift "
            "program built with `swift build` has no metallib, since SwiftPM on the command "
            "line does not compile MLX's Metal shaders; build it with Xcode or `xcodebuild` "
            "(mlx-swift README), which puts default.metallib in the mlx-swift_Cmlx.bundle "
            "beside the binary"
        )
    if ".app/Contents" in line:
        return (
            "the program runs from an app bundle that lacks MLX's library (mlx.metallib, or "
            "mlx-swift_Cmlx.bundle with default.metallib, beside the binary or in its "
            "Resources): a packaging defect of that app's release; update or reinstall the "
            "app"
        )
    if "MLX error: " in line:  # mlx-c's default error handler: no Python in this program
        return (
            "the program calls MLX through mlx-c (mlx-swift or another binding, not Python), "
            "so its metallib is the default.metallib of an mlx-swift_Cmlx.bundle beside its "
            "binary: a program built with `swift build` has none (build with Xcode or "
            "`xcodebuild`), an app that ships without the bundle has a packaging defect of its "
            "release (update or reinstall the app); under `swift test` the test bundle's "
            "resources are nested where MLX does not look (Swift Build's layout: an MLX with "
            "that lookup, ml-explore/mlx #4527, or `swift test --build-system native`)"
        )
    if "site-packages" in line:
        return (
            "this Python's mlx has no mlx.metallib beside its libmlx: mlx-metal missing or "
            "of another version (`pip install --force-reinstall mlx mlx-metal`)"
        )
    return None


# mlx-c's " at FILE:LINE" at the end of a message (mlx/c/error.cpp, _mlx_error)
_MLX_C_AT = re.compile(r" at (\S{0,300}/mlx/c/[\w/]{1,100}\.cpp):(\d+)\s*$")


def _mlx_c(groups: Mapping[str, str]) -> Optional[str]:
    """MD824's detail: which mlx-c file passed the message on (its ' at FILE:LINE', from group
    ``where2`` or the end of ``msg``) and, for a Go program's panic on a stream of another
    thread, how to pin MLX work to one OS thread; None without mlx-c's file."""
    m = _MLX_C_AT.search(groups.get("msg") or "")
    where = groups.get("where2") or (m.group(1) if m else "")
    if not where:
        return None
    said = f"mlx-c's {where.rsplit('/', 1)[-1]} passed it on"
    if "in current thread" in (groups.get("msg") or groups.get("msg2") or "") and groups.get(
        "panic"
    ):
        said += (
            "; a Go program (panic: mlx: ...) evaluates MLX arrays on whichever OS thread the "
            "goroutine runs, and MLX's streams belong to one thread: pin MLX work to one OS "
            "thread (runtime.LockOSThread)"
        )
    return said


SIGNATURES = (
    signature(
        "MD612",
        "tbt.post-recv-sigsegv",
        r"(libthunderboltrdma.*tbt_post_(recv|send)|tbt_post_(recv|send).*libthunderboltrdma)",
        "Apple Thunderbolt RDMA driver crash in tbt_post_recv/tbt_post_send.",
        "Reboot the crashed node; check port state; no known prevention.",
        "mlx #4192, #4319; Apple FB24371487",
        needs_reboot=True,
        causes=[
            ("a Thunderbolt cable was unplugged mid-collective", "both ends die; mlx #4192"),
            (
                "the driver crashed on its own after hours, no cable touched",
                "ports still PORT_ACTIVE after the crash; mlx #4319",
            ),
        ],
        examples=(
            "0 libthunderboltrdma.dylib tbt_post_recv + 44",
            "0   libthunderboltrdma.dylib   0x0000000104c0d52c tbt_post_recv + 44",
            "Exception Type:  EXC_BAD_ACCESS (SIGSEGV)\n"
            "  frame #0: libthunderboltrdma.dylib`tbt_post_recv + 44",
        ),
        frame=r"tbt_post_(recv|send)|libthunderboltrdma[^`]*`tbt_",
    ),
    signature(
        "MD616",
        "metal.gpu-timeout",
        r"kIOGPUCommandBufferCallbackErrorTimeout|Command buffer execution failed: Caused GPU "
        r"Timeout Error",
        "The Metal GPU watchdog killed a command buffer that ran too long (seconds). In a "
        "distributed job most often a collective inside it (a distributed all_sum, "
        "all_gather, send or recv on the GPU stream) waited on a slower or stalled peer (on "
        "mixed Macs the faster rank waits on the slower one); in one process, or right after "
        "a model loaded, one command buffer did too much work: a single mx.eval over a huge "
        "graph (every parameter of a very large model evaluated at once after loading, a "
        "long prompt's prefill in one step).",
        "Run collectives on stream=mx.cpu and evaluate them separately (mlx-lm's trainer does "
        "for its loss and token reductions since mlx-examples PR #1200: upgrade mlx-lm when "
        "mlx_lm.lora times out at its first validation loss); that is not always "
        "enough (mlx-vlm #2179: a LoRA run on a Gigabit LAN still timed out with it): keep GPU "
        "work from waiting on a collective's result in the same command buffer, use smaller "
        "command buffers (MLX_MAX_OPS_PER_BUFFER, MLX_MAX_MB_PER_BUFFER) so each GPU wait is "
        "short, sync less often (gradient accumulation) or move to a faster link. In one "
        "process, with no collective: evaluate in smaller pieces (a model's parameters in "
        "chunks after load, not one mx.eval(model.parameters()); a smaller prefill step) and "
        "upgrade the loader (mlx-lm #1572, jundot/omlx PR #3180 evaluate parameters in "
        "chunks).",
        "Apple Metal; https://github.com/Blaizzy/mlx-vlm/issues/2179; "
        "https://github.com/ml-explore/mlx-examples/issues/1185 (mlx-examples PR #1200); "
        "https://github.com/ml-explore/mlx/issues/1804; "
        "https://github.com/ml-explore/mlx-lm/issues/1572",
        causes=[
            ("a slow or dead peer during a GPU-stream collective", "the peer's log"),
            (
                "one command buffer doing too much work: one mx.eval over every parameter of "
                "a very large model right after load, or a huge prefill step",
                "no distributed job, or the abort right after the weights loaded and before "
                "the first token",
            ),
            (
                "mlx-lm's LoRA trainer before mlx-examples PR #1200 reduced the validation loss "
                "with all_sum on the GPU stream: Macs of different speeds time out at the "
                "first validation loss (mlx-examples #1185)",
                "mlx_lm.lora over mpirun or mlx.launch; the abort right after 'Starting training'",
            ),
            (
                "a peer stalled out of memory (swapping): mlx-lm's pipeline parallelism gives "
                "every rank an equal share of the layers, so the host with the least RAM cannot "
                "hold its share and stops answering (mlx #1804)",
                "a rank that printed nothing (no mlx-lm memory warning, no error) while this "
                "one timed out; hosts of unequal RAM; that host's memory pressure or swap",
            ),
            (
                "network latency on a slow link (Gigabit Ethernet, Wi-Fi) during the collective: "
                "each gradient sync outlasts the watchdog",
                "every rank alive; `meshdoctor probe` shows the link's rate; a fast link passes",
            ),
            (
                "collectives still tied to GPU buffers (their inputs or outputs evaluated in a "
                "GPU command buffer), so stream=mx.cpu on the op alone does not take the wait "
                "off the GPU",
                "the timeout stays after moving the collectives to stream=mx.cpu",
            ),
        ],
        role=EITHER,  # the watchdog fires here because a peer was slow or dead: often an echo
        examples=(
            "[METAL] Command buffer execution failed: Caused GPU Timeout Error "
            "(00000002:kIOGPUCommandBufferCallbackErrorTimeout)",
        ),
    ),
    signature(
        "MD619",
        "fabric.wedged",
        r"(`ibv_devinfo[^`]*` did not finish within|ibv_devinfo.*(hung|timed out))",
        "The RDMA fabric or driver is wedged: ibv_devinfo hangs, ports drop to PORT_DOWN, "
        "processes sit in uninterruptible sleep.",
        "Full-fleet reboot, then one mlx.distributed_config --auto-setup, then confirm edges.",
        "mlx #4530",
        needs_reboot=True,
        causes=[
            (
                "the Thunderbolt RDMA driver is wedged after JACCL errors or a link drop",
                "ports PORT_DOWN, processes in U state; only a reboot clears it",
            ),
            ("a rank still holds the device in the kernel", "MD301 lists it"),
        ],
        examples=("`ibv_devinfo -v` did not finish within 3.0 s (killed)",),
    ),
    signature(
        "MD661",
        "metal.command-buffer-failed",
        # Metal's description of the error after the colon (its localizedDescription,
        # "Impacting Interactivity"), then its status and name in parentheses, which a
        # terminal or a paste may have put on the next line
        r"Command buffer execution failed"
        r"(?!.*(?:kIOGPUCommandBufferCallbackErrorTimeout|Caused GPU Timeout Error))"
        r"(?::\s*(?P<desc>[A-Z][A-Za-z ]*[a-z]))?"
        r"(?:.*\((?P<status>[0-9a-fA-F]{8}):\s*(?:kIOGPUCommandBufferCallbackError(?P<error>\w+)"
        r"|[^)]*)\))?"
        # the abort it causes, as a crash summary quotes it: MLX's check_error frame, the
        # crashed (or "triggered") thread on Metal's completion queue
        r"|(?P<abort>check_error\(MTL::CommandBuffer\b)"
        r"|(?P<queue>(?:Crashed|[Tt]riggered)\b.*com\.Metal\.CompletionQueueDispatch)",
        "A Metal command buffer failed (a timeout named kIOGPUCommandBufferCallbackErrorTimeout "
        "has its own code, MD616). When MLX's check_error throws the error from Metal's "
        "completion handler (MLX before 0.32.0) it cannot be caught and the process aborts "
        "(SIGABRT on com.Metal.CompletionQueueDispatch).",
        "Read the error name: out of memory -> smaller working set (each rank only its shard); "
        "page fault -> MLX bug; innocent victim or submissions ignored -> the first GPU error "
        "before it. No name at hand (a crash report or its summary): find it in the process's "
        "stderr ('[METAL] Command buffer execution failed: ...') or in `log show --last 1h "
        "--predicate 'eventMessage CONTAINS \"IOGPU\"'`. Stop GPU monitors that poll the GPU "
        "during inference (exo #2088: the macmon that EXO.app starts; use mactop or none); "
        "for a timeout run collectives on stream=mx.cpu (MD616); upgrade MLX to 0.32.0 or "
        "later, where the error is raised as a RuntimeError instead of aborting.",
        "Apple Metal MTLCommandBufferError; https://github.com/Blaizzy/mlx-vlm/issues/1383; "
        "https://github.com/exo-explore/exo/issues/2088; https://github.com/ml-explore/mlx/"
        "issues/3390 (check_error in the completion handler; MLX PR #3523, v0.32.0)",
        causes=[
            (
                "GPU out of memory (kIOGPUCommandBufferCallbackErrorOutOfMemory), in a "
                "distributed job often a rank holding more than its shard (the whole model "
                "loaded before sharding)",
                "the error name in the message; each rank's memory against its shard's size",
            ),
            (
                "another process polling the GPU during inference: the macmon monitor EXO.app "
                "starts as its child (exo #2088, seen on two rigs)",
                "`ps -ax | grep macmon` (or another GPU monitor) while the job runs; aborts "
                "on several nodes within seconds",
            ),
            (
                "a GPU watchdog timeout (a long command buffer, a collective on the GPU stream "
                "waiting for a peer)",
                "'Timeout' or status 0000000e in the message (MD616)",
            ),
            ("GPU page fault or hang", "kIOGPUCommandBufferCallbackErrorPageFault/Hang"),
            (
                "another command buffer faulted first and this one was killed with it",
                "kIOGPUCommandBufferCallbackErrorInnocentVictim, SubmissionsIgnored",
            ),
        ],
        fixed_in="0.32.0",
        refine=_command_buffer,
        examples=(
            "[METAL] Command buffer execution failed: Insufficient Memory "
            "(00000008:kIOGPUCommandBufferCallbackErrorOutOfMemory)",
            # https://github.com/ml-explore/mlx/issues/1231
            "RuntimeError: [METAL] Command buffer execution failed: Internal Error "
            "(0000000e:Internal Error)",
            "libc++abi: terminating due to uncaught exception of type std::runtime_error: "
            "[METAL] Command buffer execution failed: Insufficient Memory "
            "(00000008:kIOGPUCommandBufferCallbackErrorOutOfMemory)",
            "Exception Type:  EXC_CRASH (SIGABRT)\n"
            "  frame #3: 0x000000019b7c1a2c Metal`MTLReportFailure + 500",
            # https://github.com/exo-explore/exo/issues/2088 (a summary of the crash reports)
            "- `libmlx::check_error(MTL::CommandBuffer*)` throws -> libc++abi terminates -> "
            "`abort()`",
            "Crashed Thread:        4  Dispatch queue: com.Metal.CompletionQueueDispatch",
        ),
        # a crashed thread in Metal's command-buffer code, or any Metal frame of an abort
        frame=r"MTLCommandBuffer|IOGPUMetal|kIOGPUCommandBuffer|MTLReportFailure"
        r"|check_error\(MTL::CommandBuffer",
        abort_frame=r"^[^`]*Metal[^`]*`",
        report_remedy="Read the abort message in the report's Application Specific "
        "Information (the Metal error name): out of memory -> smaller working set; page fault "
        "-> report it to MLX with the report, the MLX and the macOS versions. An abort from "
        "MLX's check_error on com.Metal.CompletionQueueDispatch: stop GPU monitors that poll "
        "the GPU during inference (exo #2088: macmon; use mactop or none), lower memory "
        "pressure, and upgrade MLX to 0.32.0 or later (the error is raised, not aborted).",
    ),
    signature(
        "MD871",
        "native.rust-panic",
        None,
        "A process aborted on a Rust panic: its crashed thread goes through Rust's panic "
        "machinery (std::panicking, core::panicking, rust_panic) to abort(), so the panic was "
        "raised by the function below those frames, a Rust library's own code (a binding "
        "built with PyO3, a tokio worker), not MLX, Metal or the RDMA driver.",
        "Report the crash with this file to the project of the library whose function raised "
        "the panic (the frame named here), with its version; update that project first (the "
        "panic may be fixed), and read its own log just before the crash for the panic's "
        "message ('thread ... panicked at ...').",
        "Rust std::panicking and the panic=abort strategy (The Rust Reference, panic); Rust "
        "v0 symbol mangling (RFC 2603); https://github.com/exo-explore/exo/issues/1325",
        causes=[
            (
                "a bug in that library: an unwrap() or expect() on an error it did not "
                "handle (a peer-to-peer networking setup that failed, a lock poisoned)",
                "the frame's crate and function; its log's 'panicked at' line",
            ),
            (
                "a panic that cannot unwind through a foreign-function boundary (a Rust "
                "callback called from C or Python) aborts the process",
                "an FFI wrapper (a PyO3 binding) among the frames below the panic",
            ),
        ],
        examples=(
            "Exception Type:  EXC_CRASH (SIGABRT)\n"
            "Crashed Thread:        7  tokio-runtime-worker\n"
            "Thread 7 Crashed:: tokio-runtime-worker\n"
            "0   libsystem_kernel.dylib    0x000000018e0b9388 __pthread_kill + 8\n"
            "1   libsystem_c.dylib         0x000000018dfc2908 abort + 124\n"
            "2   libfoo.dylib              0x0000000104e1a2b0 std::panicking::rust_panic_with_hook "
            "+ 1120\n"
            "3   libfoo.dylib              0x0000000104c5a1d0 foo::net::Handle::new + 2044",
        ),
        frame=r"(?:^|`|::)(?:rust_panic\w*|__rust_start_panic|rust_begin_unwind)\b|"
        r"(?:^|`)(?:core|std)::panicking::",
        refine=lambda g: (
            f"the panic was raised in {g['frame']}, below Rust's panic frames"
            + (f" (thread {g['thread']})" if g.get("thread") else "")
            if g.get("frame")
            else None
        ),
        report_remedy="Report the crash with this file to the project of the library whose "
        "function raised the panic (the frame named here), with its version; update that "
        "project first, and read its own log just before the crash for the panic's message "
        "('thread ... panicked at ...').",
    ),
    signature(
        "MD836",
        "native.heap-corruption",
        r"(?P<msg>double free or corruption(?: \(\w+\))?|(?:free|malloc|realloc|calloc|"
        r"munmap_chunk|malloc_consolidate|_int_free|_int_malloc|_int_realloc|tcache_thread_"
        r"shutdown)\(\): (?:corrupted|invalid|unaligned|double free|unsorted|smallbin|largebin)"
        r"[^\n]*|corrupted size vs\. prev_size[^\n]*|corrupted double-linked list[^\n]*)",
        "glibc found the process's heap corrupted and aborted it (SIGABRT): native code wrote "
        "past memory it owned or freed memory twice. The library at fault is not named here; "
        "what is known: it is native code of the job (NCCL, the framework, a plugin), not "
        "Python.",
        "Upgrade the native libraries first, NCCL above all, to a release that supports these "
        "GPUs and this scale (NCCL_DEBUG=INFO prints the 'NCCL version' loaded); make sure "
        "only one libnccl and one CUDA runtime are loaded (`ldd`, LD_LIBRARY_PATH, a net "
        "plugin built for another NCCL); to name the library, rerun under gdb (`bt` at the "
        "abort) or with MALLOC_CHECK_=3.",
        "glibc malloc/malloc.c (malloc_printerr: 'free(): corrupted unsorted chunks', 'double "
        "free or corruption', 'munmap_chunk(): invalid pointer'); NVIDIA/nccl #1611 (NCCL "
        "2.21.5 on GB200 at 10+ nodes: heap corruption, fixed by NCCL 2.25.1)",
        causes=[
            (
                "a native library release that does not support this hardware or scale (an "
                "NCCL older than the GPUs: 2.21 on GB200)",
                "works on fewer nodes or GPUs, fails past a count; the 'NCCL version' line",
            ),
            (
                "two builds of one library in the process (a system libnccl and the wheel's, a "
                "net plugin built for another NCCL, mixed CUDA runtimes)",
                "`ldd` or /proc/PID/maps list two copies",
            ),
            ("a bug in the job's own native extension", "it fails on one host too"),
        ],
        refine=lambda g: f"glibc's words: '{g['msg'].strip()}'" if g.get("msg") else None,
        examples=(
            "free(): corrupted unsorted chunks",
            "double free or corruption (out)",
            "munmap_chunk(): invalid pointer",
            "free(): double free detected in tcache 2",
        ),
    ),
    signature(
        "MD662",
        "native.crash",
        None,
        "A process died of a native crash signal that no known failure's frame explains.",
        "Find the crash report (~/Library/Logs/DiagnosticReports/*.ips) and triage it; on "
        "Linux get the crashed thread's frames instead: the backtrace a signal handler "
        "printed after this line (Open MPI's, UCX's), a core dump (`coredumpctl gdb`, then "
        "`bt`) or a rerun under gdb; the library of the first frame that is not the system's "
        "is the one at fault.",
        "POSIX signals; Open MPI's and UCX's signal handlers",
        causes=[
            (
                "Thunderbolt RDMA driver crash seen without its frame",
                "tbt_post_recv among the crashed thread's frames in the crash report (MD612)",
            ),
            ("a bug in a native library", "the library of the crashed thread's top frame"),
        ],
        examples=(
            "Segmentation fault: 11",
            "Exception Type:  EXC_BAD_ACCESS (SIGSEGV)",
            "Exception Type:  EXC_BAD_ACCESS (SIGSEGV)\n"
            "Crashed Thread:        0  Dispatch queue: com.apple.main-thread\n"
            "Thread 0 Crashed::  Dispatch queue: com.apple.main-thread\n"
            "0   libobjc.A.dylib    0x000000018c3d0c20 objc_release + 16",
        ),
        fallback=CRASH,
        refine=_crash_frame,
        report_remedy="Read the faulting frame (named after 'Here:'): upgrade the library it "
        "is in first (a fixed release may exist), then report the crash with this file to "
        "that library's project (MLX for libmlx/libjaccl, NVIDIA/nccl for libnccl, PyTorch "
        "for libtorch/libc10, UCX for libucp/libuct), with its version and the OS's.",
    ),
    signature(
        "MD845",
        "mpi.rank-signal",
        r"\*\*\* Process received signal \*\*\*",
        "Open MPI's signal handler reports that a rank died of a signal (the lines after it "
        "name the signal, 'Signal: Segmentation fault (11)' or 'Aborted (6)', and the frames "
        "when it could print them). After an error of the rank's own it is that error's "
        "abort; with no error before it, the crash itself is the failure.",
        "Read the error just before it in the same rank's output, if any: that is the cause. "
        "Else read the frames it printed below it (the first one that is not libc's or "
        "libpthread's names the library at fault), or get them from a core dump "
        "(`coredumpctl gdb`, then `bt`) or a rerun under gdb; a crash inside NCCL right after "
        "its init lines: upgrade NCCL, and if it is in a service thread (RAS, proxy) try the "
        "release's switch for it (NCCL_RAS_ENABLE=0).",
        "Open MPI opal/util/stacktrace.c (the signal handler's '*** Process received signal "
        "***'); https://github.com/NVIDIA/nccl/issues/1669",
        role=CONSEQUENCE,
        examples=("[rtptest1621:405884] *** Process received signal ***",),
    ),
    signature(
        "MD844",
        "job.wrong-result",
        r"AssertionError: (?P<msg>.*?(?:\btensor\(|\barray\(|Tensor-likes are not (?:close|"
        r"equal)|Mismatched elements).*)|Mismatched elements: (?P<bad>\d+) / (?P<all>\d+)",
        "The program's own check of a result failed: a collective (or a kernel) returned "
        "wrong data and nothing raised an error. Silent corruption has few causes: the "
        "communication library, the transport under it, or the ranks' calls not matching.",
        "Reproduce it outside the program with the library's own checked test (nccl-tests "
        "with -c 1; `meshdoctor probe`, whose collectives check exact values, on MLX), then "
        "narrow it: NCCL_PROTO=Simple and NCCL_ALGO=Ring (a protocol or algorithm bug), "
        "NCCL_P2P_DISABLE=1 and NCCL_SHM_DISABLE=1 (a transport), another NCCL release (a "
        "defect fixed upstream); check that every rank calls the collective with the same "
        "size, dtype and op, and that the program waits for it before reading the output.",
        "NCCL environment variables (NCCL_PROTO, NCCL_ALGO, NCCL_P2P_DISABLE); nccl-tests "
        "README (-c, check); https://github.com/NVIDIA/nccl/issues/1950 (an AVG reduction "
        "leaving its last elements unreduced, fixed in NCCL 2.29.7)",
        causes=[
            (
                "a defect of the NCCL release for this operation, datatype or size",
                "only some sizes, dtypes or ops are wrong; another NCCL release is right",
            ),
            (
                "a transport corrupting data (P2P over PCIe, a NIC, RoCE without lossless "
                "settings)",
                "right with NCCL_P2P_DISABLE=1 or NCCL_IB_DISABLE=1",
            ),
            (
                "ranks calling the collective differently (sizes, dtypes, ops) or reading "
                "the output before it completed",
                "the wrong part is the tail or a whole rank's share",
            ),
        ],
        refine=lambda g: (
            f"{g['bad']} of {g['all']} elements differ"
            if g.get("bad")
            else ("the check's words: " + g["msg"].strip()[:160] if g.get("msg") else None)
        ),
        examples=(
            "AssertionError: Last entries are: tensor([-1.1953,  0.2295,  0.0000,  0.0000], "
            "device='cuda:0', dtype=torch.bfloat16) vs tensor([-1.1953,  0.2295,  1.6016])",
            "AssertionError: Tensor-likes are not close!",
            "Mismatched elements: 8 / 4096 (0.2%)",
        ),
    ),
    signature(
        "MD854",
        "native.assertion-failed",
        # macOS libc's assert: "Assertion failed: (expr), function f, file x.h, line 315.";
        # glibc's: "prog: x.cpp:315: T f(): Assertion `expr' failed."
        r"Assertion failed: \((?P<expr>.{0,400}?)\), function (?P<func>.{1,300}?), file (?P<file>[^,]{1,300}), "
        r"line (?P<line>\d+)|(?P<gfile>[\w./-]{1,200}\.(?:c|cc|cpp|cu|h|hpp)):(?P<gline>\d+): "
        r"(?P<gfunc>.{1,300}?): Assertion `(?P<gexpr>.*)' failed",
        "A native assertion failed: a C or C++ library checked a condition it relies on, found "
        "it false and aborted the process (SIGABRT) on the spot, with no exception to catch. "
        "The file it names says whose check it is; the condition says what was out of range.",
        "Read the file and condition: a library's own header or source (MLX's small_vector.h, "
        "a CUDA library's) is that library's check of the arguments it was given: find the "
        "call of the job that gave it something it does not handle (an array with fewer "
        "dimensions than the op reads, an index out of range) and upgrade the library, whose "
        "newer release may raise a readable error instead; report it to that project with the "
        "call if it persists.",
        "POSIX assert(3) (macOS libc and glibc messages); "
        "https://github.com/ml-explore/mlx/issues/4070 (sum_scatter of a scalar read shape()[0] "
        "of an empty shape: small_vector's bounds assertion)",
        refine=_assertion,
        causes=[
            (
                "an op called with an array it does not handle: a collective (sum_scatter, "
                "all_gather) of a 0-dimensional array reads axis 0 of an empty shape",
                "the condition is a bounds check (size() > index) in small_vector.h; the "
                "job passes a scalar to the collective",
            ),
            ("a bug of the library's release", "a newer release raises an error instead"),
        ],
        examples=(
            "Assertion failed: (size() > index), function operator[], file small_vector.h, line "
            "315.",
            "python3: /src/mlx/small_vector.h:315: T& mlx::core::SmallVector<T>::operator[](size_t)"
            ": Assertion `size() > index' failed.",
        ),
    ),
    signature(
        "MD849",
        "python.api-mismatch",
        r"^(?:\[rank\d+\]:\s*|\[\d+,\d+\]<std(?:out|err)>:\s*)?(?:"
        r"TypeError: (?P<callee>[\w.<>]+)\(\) got an unexpected keyword argument '(?P<arg>\w+)'"
        r"|TypeError: (?P<missing>[\w.<>]+)\(\) missing \d+ required (?:positional |keyword-only )?"
        r"arguments?: (?P<args>.+)"
        r"|TypeError: (?P<given>[\w.<>]+)\(\) takes (?:from \d+ to )?\d+ positional arguments? "
        r"but \d+ (?:were|was) given"
        r"|ImportError: cannot import name '(?P<name>\w+)' from '(?P<module>[\w.]+)'"
        r"|AttributeError: module '(?P<mod>[\w.]+)' has no attribute '(?P<attr>\w+)')",
        "A call and the code it calls disagree on its interface: a keyword argument the "
        "callee does not take, a required argument the caller does not pass, a name a module "
        "does not export. Code written against one version of a package met another: two "
        "packages of the job at versions that were not released together (a framework and "
        "the library it calls, an engine and its model code), or the job's own script against "
        "an upgraded library.",
        "Find the two sides: the package that defines the callee (the innermost frame of the "
        "traceback, `python -c 'import PKG; print(PKG.__version__, PKG.__file__)'`) and the "
        "one that calls it (the frame above); install the versions the caller's release "
        "declares (`pip show CALLER` lists its requirements; `pip install 'CALLEE==X'`), or "
        "upgrade both together, on every host and in every container of the job. When both "
        "sides are one project, it is that release's bug: upgrade it or take its fix.",
        "Python reference: TypeError for call arguments, ImportError 'cannot import name', "
        "AttributeError on a module; pip show (Requires); "
        "https://github.com/exo-explore/exo/issues/2228 (mlx-lm's ArraysCache.make_mask "
        "called with keywords it did not take)",
        causes=[
            (
                "two packages at versions not released together (an engine and the library it "
                "calls: exo and mlx-lm, vLLM and transformers, TRL and vLLM)",
                "the callee's package is another project than the caller's; `pip show` of both",
            ),
            (
                "one host or container with other versions than the rest",
                "the error on some ranks only; `pip freeze` differs between hosts",
            ),
            (
                "a bug of one release calling its own code wrongly",
                "caller and callee in the same package; a newer release fixes it",
            ),
        ],
        refine=_api_detail,
        examples=(
            "TypeError: ArraysCache.make_mask() got an unexpected keyword argument 'return_array'",
            "ImportError: cannot import name 'cached_download' from 'huggingface_hub'",
            "AttributeError: module 'transformers' has no attribute 'Qwen3ForCausalLM'",
            "TypeError: forward() missing 1 required positional argument: 'attn_metadata'",
            "TypeError: DSElasticAgent._set_master_addr_port() takes 3 positional arguments but 4 "
            "were given",
        ),
    ),
    signature(
        "MD663",
        "python.exception",
        # a rank's prefix first when its launcher tags lines (torchrun's "[rank0]: ", Open
        # MPI's --tag-output "[1,0]<stderr>:")
        r"^(?:\[rank\d+\]:\s*|\[\d+,\d+\]<std(?:out|err)>:\s*)?"
        # a program's own failure line that carries the exception ("Process exited before
        # becoming ready: ValueError: ...", "Runner error: KeyError: ..."): one clause that
        # says something failed, then the exception
        r"(?:[^:\n]{0,120}?\b(?:exited|failed|[Ee]rror|crashed)\b[^:\n]{0,120}?: "
        r"(?=[A-Za-z_.]{1,120}: ))?"
        r"(?:\s+(?=(?:[a-z_]\w*\.)+[A-Z]\w*(?:Error|Exception)\s*$))?"
        # a built-in class, or a package's own by its dotted name (anyio.BrokenResourceError),
        # the latter alone on its line too, as a traceback's last line shows one without text
        r"(?P<bare>"
        + "|".join(BUILTIN_EXCEPTIONS)
        + r"|(?:[a-z_]\w*\.)+[A-Z]\w*(?:Error|Exception))"
        r"(?:: (?!" + MLX_COMPONENT + r"|EXC_)(?P<msg>\S.*)|(?<=[a-z])(?=\s*$))",
        "An uncaught Python exception (no known signature in it): it ends the process when "
        "raised in the main thread; one raised in another thread ends only that thread, and "
        "the process may go on.",
        "Read the exception; it is the cause unless another rank failed first. If the process "
        "went on, look at what that thread did (a failed collective in a worker thread leaves "
        "its peers waiting). One raised in mlx.launch's own frames is the launcher's fault: "
        "read the ranks' own status.",
        "Python; https://github.com/ml-explore/mlx/issues/2144",
        classes=UNTAGGED,
        role=EITHER,
        causes=[
            ("the job's own error", "its frames are in the job's files"),
            (
                "a model family without mlx-lm's pipeline or tensor parallelism: the loader "
                "calls model.model.pipeline() or model.shard(), which that model class lacks "
                "(mlx-examples #1293)",
                "AttributeError: '...Model' object has no attribute 'pipeline' (or 'shard'), "
                "or 'The model does not support pipelining', on every rank",
            ),
            (
                "a launcher fault: mlx.launch's output relay failed (BlockingIOError in "
                "node_thread), the ranks may be fine",
                "frames in mlx/_distributed_utils/launch.py or mlx/distributed_run.py",
            ),
        ],
        refine=_python_exception,
        envelope=True,
        examples=(
            "Traceback (most recent call last):\n"
            '  File "/srv/serve.py", line 40, in <module>\n'
            "    main()\n"
            '  File "/srv/serve.py", line 31, in main\n'
            "    cfg = json.load(fh)\n"
            "json.decoder.JSONDecodeError: Expecting value: line 1 column 1 (char 0)",
            "NameError: name 'log_warning' is not defined",
            "[rank0]: AssertionError: expected the batch to be divisible by the world size",
            "ValueError: The model does not support pipelining but a pipeline_group was provided",
            "Traceback (most recent call last):\n"
            '  File "/usr/lib/python3.12/threading.py", line 1010, in run\n'
            "    self._target(*self._args, **self._kwargs)\n"
            '  File "/opt/mlx/python/mlx/distributed_run.py", line 292, in node_thread\n'
            "    outfile.write(msg)\n"
            "BlockingIOError: [Errno 35] write could not complete without blocking",
            "Traceback (most recent call last):\n"
            '  File "/srv/serve.py", line 52, in <module>\n'
            "    conn.sendall(reply)\n"
            "BrokenPipeError: [Errno 32] Broken pipe",
        ),
        fallback=TRACEBACK,
        role_of=role_by_group("type", _PEER_WENT_AWAY),
        role_note="A BrokenPipeError, ConnectionResetError or ConnectionAbortedError is the "
        "other end of a socket going away first: a consequence.",
    ),
    signature(
        "MD816",
        "mlx.eval-in-transform",
        r"(?:rror|xception):? \[eval\] Attempting to eval an array (?P<what>without a "
        r"primitive|during function transformations)",
        "MLX was asked to evaluate an array it cannot: one without a primitive (no operation "
        "that computes it), which a function compiled with mx.compile hands out when its "
        "inputs or outputs are not captured, or one inside a transformation (compile, vmap) "
        "that only traces.",
        "Compile only a pure function of arrays: pass every array it uses as an input (not a "
        "global or a model attribute read inside), and return arrays, not a container of "
        "them (a model's output object); keep .item(), numpy conversion and mx.eval out of the "
        "compiled or vmapped function; or turn compiling off for that model (a server's "
        "compile option) and upgrade the program that compiles it.",
        "MLX 0.32.4 libmlx ('[eval] Attempting to eval an array without a primitive. If you "
        "are compiling a function, make sure all the inputs and outputs are captured'); MLX "
        "documentation, compile: pure functions; https://github.com/jundot/omlx/pull/283",
        causes=[
            (
                "a compiled function whose outputs are not arrays made by its own operations "
                "(a model's __call__ returning an output container, an embedding or reranker "
                "model compiled whole)",
                "'without a primitive' right after a compiled call",
            ),
            (
                "an array read inside the compiled function that is not one of its inputs",
                "a global or attribute array changed between calls",
            ),
            (
                "an eval, .item() or numpy conversion inside compile or vmap",
                "'during function transformations'",
            ),
        ],
        refine=lambda g: (
            "the array has no primitive: the compiled function's inputs or outputs are not "
            "captured (compile a function that takes its arrays as inputs and returns the "
            "arrays themselves, or run it uncompiled); or the function evaluates inside "
            "itself (.item(), a print or numpy conversion of an array, an mx.eval); or an "
            "earlier call raised an exception while mx.compile traced it (an argument check "
            "inside the compiled function), which leaves the compiled function broken so "
            "every later call fails here: look for the first error before this one, and keep "
            "checks that raise outside the compiled function; or compiled functions ran on "
            "several threads at once (concurrent requests of a server) and shared state they "
            "capture (MLX's global random state, its tracing state): run them on one thread "
            "or under a lock; with no compile in the program, a loader that handed out "
            "arrays it never computed (MLX 0.11's GGUF loader of quantized weights): upgrade "
            "mlx"
            if g.get("what", "").startswith("without")
            else "an evaluation was asked for while compile or vmap traces the function: move "
            "it outside the transformed function"
        ),
        examples=(
            "RuntimeError: [eval] Attempting to eval an array without a primitive.",
            "RuntimeError: [eval] Attempting to eval an array during function transformations "
            "like compile or vmap is not allowed.",
        ),
    ),
    signature(
        "MD817",
        "mlx.op-arguments",
        r"(?:[Ee]rror\b[^\n\[]{0,80}?|std::invalid_argument: |what\(\):\s+)\[(?P<op>"
        + "|".join(MLX_OPS)
        + r")\] (?P<msg>\S.*)",
        "An MLX operation refused its arguments: the op's own check of shapes, dtypes or "
        "axes failed (MLX's mlx/ops.cpp throws std::invalid_argument, a ValueError in "
        "Python). Not the mesh: the code that called it handed arrays that do not fit, most "
        "often model weights or a config that do not match the model's code (another "
        "quantization, hidden size or head count; a model variant this release does not "
        "build right), a tensor-parallel or pipeline shard whose sizes do not divide by the "
        "world size, or a cache kept from another request.",
        "Find the call in the traceback's innermost frame of the model's code; compare the "
        "shapes in the message with the model's config.json (hidden_size, "
        "num_attention_heads, num_key_value_heads, quantization bits and group_size); run the "
        "model on one host to tell the shard from the model; upgrade the engine and MLX "
        "together (a new model needs the release that added it); reconvert the model with "
        "the release that loads it.",
        "MLX v0.32.1 mlx/ops.cpp (each op's argument check, '[op] ...'); MLX documentation, "
        "mlx.core.quantize (32/bits values packed per uint32)",
        causes=[
            (
                "weights quantized or converted with other settings than the config says",
                "two sizes in the message a factor of 2, 4 or 8 apart; config.json's "
                "'quantization'",
            ),
            (
                "a shard whose sizes do not divide by the world size (heads, KV heads, experts)",
                "works on one host, fails with more",
            ),
            ("a cache or state kept from another request", "the second request fails"),
            ("the job's own code", "its frames are in the job's files"),
        ],
        refine=_op_arguments,
        examples=(
            "ValueError: [matmul] Last dimension of first input with shape (1,8,4096) must "
            "match second to last dimension of second input with shape (512,4096).",
            "libc++abi: terminating due to uncaught exception of type std::invalid_argument: "
            "[reshape] Cannot reshape array of size 4096 into shape (1,8,3,128).",
            "Error processing prompt: [concatenate] All the input array dimensions must match "
            "exactly except for the concatenation axis. However, the provided shapes are "
            "(1,8,40,128), (1,8,1,64), and the concatenation axis is 2.",
        ),
    ),
    signature(
        "MD672",
        "metal.resource-limit",
        r"Resource limit \((?P<limit>\d+)\) exceeded",
        "Metal refused another buffer: the process holds as many Metal resources as the "
        "device allows (499000 on recent Macs): a count of live buffers, not of bytes (it "
        "fails with memory to spare), usually many small arrays kept alive (a growing KV "
        "cache, un-evaluated graphs, a training step over very many parameters: LoRA on a "
        "mixture-of-experts model gives every expert's adapter and its gradients and "
        "optimizer state buffers of their own).",
        "Evaluate and release arrays sooner (mx.eval in the loop), lower the prompt cache or "
        "batch size, and upgrade mlx-lm; in training, fewer buffers per step: a lower LoRA "
        "rank, fewer adapted layers (--num-layers), or not adapting the experts' layers.",
        "mlx-lm #831, #1672; MLX's device_info()['resource_limit']",
        causes=[
            (
                "many small arrays kept alive in inference (a growing cache, graphs never "
                "evaluated)",
                "a server or generation loop; the count grows with requests",
            ),
            (
                "training over very many parameter arrays (LoRA on a mixture-of-experts "
                "model: per-expert adapters, their gradients and optimizer state)",
                "mlx_lm.lora on an MoE model; memory far from full",
            ),
        ],
        examples=("RuntimeError: [metal::malloc] Resource limit (499000) exceeded.",),
    ),
    signature(
        "MD673",
        "metal.buffer-too-large",
        # the message as one line, or wrapped where it was pasted (the size alone on the line)
        r"(?:Attempting to allocate |^\s*)(?P<bytes>\d+) bytes which is greater than the "
        r"maximum allowed buffer size(?: of (?P<max>\d+))?",
        "One array is larger than the largest Metal buffer this GPU allows (a single "
        "allocation, not the total memory: the limit is Metal's maxBufferLength for this GPU, "
        "well below its memory). It is one intermediate of one operation, most "
        "often one that grows with the square of a length: the attention scores of a long "
        "prompt in one step (heads x length x length), a vision model's image step over many "
        "image patches (the vision tower's attention, or merging the image features into the "
        "text embeddings in one piece: it grows with the image's size and the number of "
        "images in the request), a whole unsharded weight or embedding, or an operation's "
        "own scratch buffer (MLX's transposed convolutions with a stride above 1 unfolded "
        "their input in one piece before 0.32.1, PR #3845).",
        "Make that one step smaller: prefill in chunks (a smaller prefill step size), cap the "
        "image size or the number of image patches (the processor's max pixels), send one "
        "image per request or encode images one at a time, shard the weights; upgrade the "
        "model library (a release that splits the step may exist); or run that op on the CPU "
        "stream.",
        "MLX metal allocator (mlx/backend/metal/allocator.cpp: 'Attempting to allocate N "
        "bytes which is greater than the maximum allowed buffer size of M bytes'); Apple "
        "MTLDevice.maxBufferLength",
        causes=[
            (
                "a vision model's image step over a large image or many images (the image "
                "features merged or attended over in one piece)",
                "an image in the request; frames in the model's vision or merge code",
            ),
            (
                "attention over a long prompt computed in one step",
                "a long context; the size grows with the square of the prompt's length",
            ),
            ("a weight or embedding that is not sharded", "the size of one weight matrix"),
            (
                "an operation's own scratch buffer, larger than its output: MLX's transposed "
                "convolutions with a stride above 1 unfolded their whole input into one "
                "buffer before 0.32.1 (PR #3845 tiles it under the limit): upgrade mlx",
                "conv_transpose1d/2d/3d in the program; the output itself fits",
            ),
        ],
        refine=lambda g: (
            f"{g['bytes']} bytes is more than 2^63: a negative size that wrapped around, not "
            "a real array: the size was computed from an empty input (zero frames or tokens: "
            "an audio chunk shorter than one hop, an empty segment or prompt chunk), a bug "
            "of the code that sizes it; skip or pad empty inputs, and upgrade the library"
            if g.get("bytes") and int(g["bytes"]) >= 2**63
            else f"the array would take {int(g['bytes']) / 2**30:.1f} GiB, "
            f"{int(g['bytes']) / int(g['max']):.1f} times the largest buffer "
            f"({int(g['max']) / 2**30:.1f} GiB): that one step must shrink by that factor"
            if g.get("bytes") and g.get("max") and int(g["max"])
            else None
        ),
        examples=(
            "RuntimeError: [metal::malloc] Attempting to allocate 77309411328 bytes which is "
            "greater than the maximum allowed buffer size of 57982058496 bytes.",
        ),
    ),
    signature(
        "MD820",
        "mlx-swift.fatal-error",
        r"MLX/ErrorHandler\.swift:\d+: Fatal error: (?P<inner>\S.*)",
        "mlx-swift's error handler ended the process: with no error handler installed, "
        "mlx-swift turns every MLX error into Swift's fatalError (SIGTRAP, a crash report), "
        "so one failed operation kills the whole app or server. The MLX error in the message "
        "is the cause; this line is how it ended the process.",
        "Deal with the MLX error it carries (its own reading, on this line or the next); in "
        "the app, run MLX work inside `try withError { ... }` (or install a handler with "
        "withErrorHandler) so an MLX error becomes a Swift error the app can answer, not a "
        "crash.",
        "ml-explore/mlx-swift Source/MLX/ErrorHandler.swift (dispatch: fatalError when no "
        "handler is set; withError, withErrorHandler), commit 09051ed",
        role=EITHER,
        classes=UNTAGGED,
        examples=(
            "MLX/ErrorHandler.swift:345: Fatal error: [metal::malloc] Attempting to allocate",
        ),
    ),
    signature(
        "MD822",
        "mlx.weights-file",
        r"\[load(?:_safetensors|_gguf)?\] (?P<what>Failed to open|Invalid json header length|"
        r"The JSON header is \d+ bytes long but the file is only \d+ bytes\. Perhaps an "
        r"incomplete download or corrupt|Invalid json metadata|Invalid header in|Tensor '[^']*' "
        r"invalid data offsets)(?P<rest>.*)",
        "MLX could not read a weights file (mlx.core.load of .safetensors, .npz or .gguf): the "
        "file is missing, or it is not what its name says: a Git LFS pointer (a model "
        "repository cloned without git-lfs leaves files of about 130 bytes of text, whose "
        "first 8 bytes MLX reads as an impossible header length), a download that stopped "
        "part way, or a corrupt file. In a distributed job each host reads its own copy, so "
        "one host's file can be bad while the others load.",
        "On the host that failed: `ls -l FILE` (a size of a few hundred bytes is a pointer; "
        "`head -c 200 FILE` shows 'version https://git-lfs...'), then `git lfs pull` in the "
        "model folder or download it again with `hf download REPO`; delete a partial file and "
        "download again (check `df -h` for room); put the same files at the same path on "
        "every host.",
        "MLX v0.32.1 mlx/io/safetensors.cpp (load_safetensors: 'Invalid json header length', "
        "'Perhaps an incomplete download or corrupt file?'), mlx/io/load.cpp, "
        "mlx/io/gguf.cpp; Git LFS pointer files (git-lfs spec)",
        causes=[
            (
                "a Git LFS pointer in place of the weights (cloned without git-lfs)",
                "'Invalid json header length'; the file is a few hundred bytes of text",
            ),
            (
                "an incomplete or corrupt download",
                "'Perhaps an incomplete download', a file smaller than the others",
            ),
            ("the file is not at that path on this host", "'Failed to open'"),
        ],
        refine=lambda g: {
            "Failed to open": "the file is not there or not readable on this host: its path, "
            "its permissions, or a model folder that exists on other hosts only",
            "Invalid json header length": "the first 8 bytes are no safetensors header: most "
            "often a Git LFS pointer (a clone without git-lfs), else a file of another format",
        }.get(g.get("what", "")),
        examples=(
            "RuntimeError: [load_safetensors] Invalid json header length "
            "/models/m/model-00001-of-00002.safetensors",
            "[load_safetensors] The JSON header is 51234 bytes long but the file is only 4096 "
            "bytes. Perhaps an incomplete download or corrupt file?",
        ),
    ),
    signature(
        "MD674",
        "malloc.failed",
        r"\[malloc\] Unable to allocate",
        "MLX could not allocate host memory for an array: the node is out of memory.",
        "Free memory (other processes, leftover ranks: MD301), use a smaller model or shard "
        "it over more ranks.",
        "MLX allocator",
        check="MD302",
        examples=("RuntimeError: [malloc] Unable to allocate 17179869184 bytes.",),
    ),
    signature(
        "MD675",
        "metal.residency-set",
        r"Unable to construct residency set",
        "Metal could not build the residency set that keeps MLX's buffers wired (MLX 0.32.2+): "
        "wired memory is exhausted or held by another process, or the Mac is a virtual "
        "machine (a macOS VM, a CI runner's VM), whose Metal device cannot build residency "
        "sets at all: there every MLX program fails at start (ml-explore/mlx #1537).",
        "Stop leftover ranks and measure wired memory again (MD302); lower "
        "MLX_RESIDENCY_SET_MAX_PCT or the wired limit; reboot if memory stays wired. In a "
        "macOS VM: run on the host's macOS, or use an MLX release that goes on without a "
        "residency set there.",
        "MLX 0.32.2 release (MLX_RESIDENCY_SET_MAX_PCT)",
        check="MD302",
        examples=("RuntimeError: [metal::Device] Unable to construct residency set.",),
    ),
    signature(
        "MD679",
        "python.address-in-use",
        r"(?:OSError: )?\[Errno (?:98|48)\] Address already in use"
        # Rust's std::io::Error, as a Python binding raises it: "Address already in use (os
        # error 98)"
        r"|Address already in use \(os error (?:98|48)\)"
        # asyncio's create_server, as uvicorn logs it: "ERROR:    [Errno 98] error while
        # attempting to bind on address ('0.0.0.0', 8000): address already in use"
        r"|\[Errno (?:98|48)\] error while attempting to bind on address "
        r"\((?P<addr>[^)]*)\): address already in use",
        "The application's own socket (a server the job opens: an HTTP API, a coordinator "
        "port) could not bind: another process already holds the port, most often a rank or "
        "server of the last run that never exited.",
        "Find what holds the port (`ss -ltnp`, `lsof -iTCP -sTCP:LISTEN`), stop leftover ranks "
        "(MD301), and check the mesh's ports are free (`meshdoctor check --hostfile HOSTFILE "
        "--only MD408`).",
        "Python socket.bind (errno 98 EADDRINUSE on Linux, 48 on macOS); errno(3)",
        check="MD301",
        causes=[
            ("a leftover rank or server of the last run", "`meshdoctor check --only MD301`"),
            ("another job using the same port", "`ss -ltnp` names the process"),
            (
                "the program binding its own port twice: a server that reserves its port early "
                "and then lets its HTTP server bind it again (vLLM's API server on its "
                "--disable-frontend-multiprocessing path, vllm #8638, fixed by #8537)",
                "nothing else holds the port (`ss -ltnp` before the start shows it free) and "
                "the error comes right after the server's own 'startup complete'",
            ),
        ],
        examples=(
            "OSError: [Errno 98] Address already in use",
            "OSError: [Errno 48] Address already in use",
            "[Errno 48] Address already in use",
            "ERROR:    [Errno 98] error while attempting to bind on address ('0.0.0.0', 8000): "
            "address already in use",
        ),
    ),
    signature(
        "MD678",
        "metal.fence-timeout",
        r"\[Fence::wait\] Timed out",
        "A CPU-stream operation (the distributed backends run there) waited for a Metal fence "
        "that the GPU never signalled: the GPU work it depends on hung or was lost (a GPU "
        "timeout, wired memory exhausted, or a peer's collective that never completed).",
        "Look for the first failure on every rank (a peer that died, a JACCL or ring error "
        "before it); stop leftover ranks and measure wired memory (MD302); if it recurs on one "
        "Mac, reboot it.",
        "MLX mlx/backend/metal/fence.cpp (Fence::wait); exo issues #2208, #2173",
        role=EITHER,
        check="MD302",
        causes=[
            ("a peer's collective never completed (it died or hung)", "a peer's earlier error"),
            ("GPU work hung or was lost (GPU timeout)", "MTLCommandBuffer errors before it"),
            ("wired memory exhausted", "MD302, Metal resource-limit errors"),
            (
                "an MLX fence bug with JACCL and MLX_METAL_FAST_SYNCH=1 (builds patched for it "
                "deadlocked instead)",
                "MLX_METAL_FAST_SYNCH in the ranks' environment; exo issue #2208",
            ),
        ],
        examples=(
            "libc++abi: terminating due to uncaught exception of type "
            "std::runtime_error: [Fence::wait] Timed out",
        ),
    ),
    signature(
        "MD692",
        "mlx.wait-hang",
        # the Fence::wait frame: a GPU event wait alone (IOSurfaceSharedEvent) is what any
        # thread blocked behind a stuck stream shows, a spinning JACCL peer's too (mlx #3910)
        r"(?P<fence>mlx::core::Fence::wait\()"
        r"|(?P<cuda>mlx::core::cu::(?:AtomicEvent::wait|event_wait)\b)"
        r"|(?P<exo>mlx_item evaluation timed out after (?P<secs>\d+)s)",
        "A hung rank waits inside MLX for work that never completes: its sampled stack "
        "(`sample PID`, `py-spy dump --native`) sits in a Metal fence or GPU event wait, or a "
        "CUDA event wait, or a runner's watchdog gave up on an MLX evaluation. The rank is "
        "alive, the network need not be at fault.",
        "Read which wait below. A Metal fence with MLX_METAL_FAST_SYNCH=1: unset it and run "
        "again. A CUDA event: an MLX CUDA bug on that GPU generation, report it with the GPU "
        "and MLX version. A watchdog: give the first evaluation more time or faster storage. "
        "Otherwise look for the first failure on the other ranks (a collective that never "
        "completed) and for GPU timeouts (MD616).",
        "https://github.com/ml-explore/mlx/issues/3830 (Metal fence, FAST_SYNCH); "
        "https://github.com/ml-explore/mlx/issues/3876 (CUDA event); "
        "https://github.com/exo-explore/exo/issues/1826 (exo's mlx_item watchdog); MLX "
        "mlx/backend/metal/fence.cpp",
        role=EITHER,
        causes=[
            (
                "MLX_METAL_FAST_SYNCH=1: the Metal fence handoff deadlock (pipeline generation "
                "over the ring backend, the socket threads idle)",
                "the variable in the ranks' environment; a Fence::wait frame",
            ),
            (
                "a CUDA completion event never signalled (MLX's CUDA build on a new GPU "
                "generation, a barrier's all_sum waiting for ever)",
                "cu::AtomicEvent::wait under eval; the sockets healthy",
            ),
            (
                "the first evaluation outlasting a runner's watchdog (a huge model loaded from "
                "slow storage)",
                "exo's 'mlx_item evaluation timed out after 10s'",
            ),
            ("a peer's collective never completed", "a peer's earlier error or its own hang"),
        ],
        refine=lambda g: (
            "a Metal fence or GPU event wait: with MLX_METAL_FAST_SYNCH=1 the fence handoff "
            "deadlock (MLX issue #3830); unset it"
            if g.get("fence")
            else "a CUDA event that never signalled (MLX issue #3876): not the network"
            if g.get("cuda")
            else f"exo's watchdog ended the runner after {g.get('secs')} s of one MLX "
            "evaluation: a first evaluation slowed by loading (slow storage) or a FAST_SYNCH "
            "hang (exo issue #1826)"
            if g.get("exo")
            else None
        ),
        examples=(
            "  ... mlx::core::Fence::wait(mlx::core::Stream, mlx::core::array const&)::$_2 ...",
            "    mlx::core::cu::AtomicEvent::wait (libmlx.so)",
            "[ 2026-04-01 12:46:18.963 | ERROR    | exo.worker.engines.mlx.auto_parallel:watchdog:99 "
            "] mlx_item evaluation timed out after 10s. This may indicate an issue with "
            "FAST_SYNCH and tensor parallel sharding. Terminating process.",
        ),
    ),
    signature(
        "MD676",
        "macos.kernel-panic",
        r"panic\(cpu \d+ caller 0x[0-9a-fA-F]+\): (?P<msg>.+)",
        "The Mac's kernel panicked and rebooted (a crash report of bug_type 210): every rank "
        "on it died at that moment, so its peers' errors that follow are echoes.",
        "Read the panic's message: an IOGPUMemory assertion (prepare count underflow) is GPU "
        "memory accounting in the kernel, seen after Metal or JACCL failures; update macOS, "
        "report it to Apple with the panic file, and re-run after the reboot.",
        "Apple, kernel panic reports (bug_type 210)",
        causes=[
            (
                "GPU-wired memory accounting broke (IOGPUMemory prepare count underflow)",
                "IOGPUMemory.cpp in the panic message",
            ),
            ("a driver fault (Thunderbolt, RDMA)", "the kernel extension named in the panic"),
        ],
        refine=lambda g: (
            "the GPU memory driver (IOGPUMemory) panicked: wired-memory accounting underflowed"
            if "IOGPUMemory" in g.get("msg", "")
            else None
        ),
        examples=(
            "panic(cpu 2 caller 0xfffffe002f8c1234): IOGPUMemory.cpp:550 Assertion failed: "
            "prepare count underflow",
        ),
    ),
    signature(
        "MD677",
        "macos.jetsam",
        r"memorystatus: (?P<why>killing_\w+) pid (?P<pid>\d+) \[(?P<proc>[^\]]*)\] "
        r"\((?P<cause>[\w-]+)",
        "macOS killed the process for memory (jetsam, a report of bug_type 298): a rank that "
        "ended with SIGKILL and no error of its own was taken by the system, not by MLX.",
        "Use a smaller model or shard it over more ranks, lower the wired limit "
        "(iogpu.wired_limit_mb) so the OS keeps room, and stop other large processes.",
        "xnu bsd/kern/kern_memorystatus.c (memorystatus kill log)",
        check="MD302",
        examples=(
            "1733050000.123 memorystatus: killing_top_process pid 4242 [python3.12] "
            "(vm-pageshortage 10) - memorystatus_available_pages: 1200",
        ),
    ),
    signature(
        "MD696",
        "native.uncaught-exception",
        r"(?:libc\+\+abi(?:\.dylib)?: terminating (?:due to|with) uncaught exception of type "
        r"(?P<type>[\w:]+)|Terminating due to uncaught exception): (?!" + MLX_COMPONENT + r")"
        r"(?P<msg>\S.*)"
        r"|terminate called after throwing an instance of '(?P<type2>[^']+)'",
        "A C++ exception nobody caught ended the process (std::terminate, then abort: SIGABRT); "
        "the message after the type is what went wrong. MLX prints `Terminating due to "
        "uncaught exception: MSG` for one raised in its stream threads.",
        "Read the message: a known one has its own finding on the same line; otherwise it is "
        "the cause on this rank (report it with the MLX version if MLX raised it).",
        "libc++abi (std::terminate); MLX mlx/scheduler.h abort_with_exception",
        causes=[
            ("an error MLX raised in a thread where Python cannot catch it", "the message"),
            ("a native library's own exception (a C++ extension, a driver)", "the message"),
        ],
        envelope=True,
        examples=(
            "libc++abi: terminating due to uncaught exception of type std::runtime_error: "
            "Failed to open the weights file",
            "Terminating due to uncaught exception: Failed to open the weights file",
            # libstdc++ (Linux; exo-explore/exo#690): the message follows on the what(): line
            "terminate called after throwing an instance of 'std::runtime_error'\n"
            "  what():  Failed to open the weights file",
        ),
    ),
    signature(
        "MD697",
        "mlx.error",
        r"(?:\b[A-Z]\w*(?:Error|Exception)|std::\w+|uncaught exception|what\(\)): +"
        + MLX_COMPONENT
        + r" ?(?P<msg>.*)",
        "MLX error (no specific signature): MLX raised this error, and the bracketed name in "
        "front of the message says which MLX component did.",
        "Read the message after the component; search MLX's issues for it and report it with "
        "the MLX version and the whole log if none has it.",
        "MLX sources (mlx/backend, mlx/distributed: errors raised with their component in "
        "brackets)",
        check="MD102",
        refine=_mlx_component,
        envelope=True,
        classes=MLX_ERROR,
        examples=(
            "RuntimeError: [metal::Device] Unable to build metal library from source",
            "libc++abi: terminating due to uncaught exception of type std::runtime_error: "
            "[metal::Device] Unable to build metal library from source",
        ),
    ),
    signature(
        "MD698",
        "metal.kernel-missing",
        r"Unable to load (?:kernel|function) (?P<kernel>\w+)",
        "MLX's Metal backend could not find a kernel in the metallib installed with it: the "
        "library does not have that kernel.",
        "Unset MLX_METAL_FAST_SYNCH (or build MLX from source to use it); install mlx and "
        "mlx-metal of the same version on every host (`pip install -U mlx mlx-metal`, then "
        "`pip show mlx mlx-metal`).",
        "https://github.com/ml-explore/mlx/issues/1993; "
        "https://github.com/ml-explore/mlx-examples/issues/1296",
        check="MD102",
        causes=[
            (
                "MLX_METAL_FAST_SYNCH=1 with a build that has no such kernel (PyPI wheels)",
                "the kernel is input_coherent; MLX_METAL_FAST_SYNCH in the ranks' environment",
            ),
            (
                "mlx and mlx-metal wheels of different versions",
                "`pip show mlx mlx-metal` gives two versions",
            ),
        ],
        refine=_missing_kernel,
        # a kernel of a newer Metal language than the OS's is MD868's, on the next line
        role=EITHER,
        examples=(
            "Terminating due to uncaught exception: [metal::Device] Unable to load kernel "
            "input_coherent",
            "RuntimeError: [metal::Device] Unable to load kernel input_coherent",
        ),
    ),
    signature(
        "MD804",
        "mlx.shapes-not-broadcast",
        r"Shapes \((?P<a>[\d, ]*)\) and \((?P<b>[\d, ]*)\) cannot be broadcast",
        "An MLX operation got two arrays whose shapes do not broadcast. In a sharded or "
        "distributed model's step it is most often state kept between requests that no "
        "longer fits the new one: a KV cache of an earlier request (a prompt or prefix cache "
        "reused for a follow-up) whose sequence length differs from the new attention mask on "
        "one shard; else shards of different model configurations, or the job's own code.",
        "Rerun the request with a fresh cache (turn off the engine's prompt or prefix cache "
        "reuse, or give each request its own cache and ID) and check that every shard loads "
        "the same model revision and config; upgrade the engine (a fixed release may exist); "
        "then the traceback's innermost frame of the job's code says which operation.",
        "MLX broadcast_shapes ('Shapes ... cannot be broadcast'); exo's sharded inference "
        "engine (per-request caches)",
        causes=[
            (
                "a KV cache of an earlier request reused for a new prompt on one shard",
                "the second prompt of a conversation fails, the first works; the two shapes "
                "differ in one sequence length",
            ),
            ("shards of different model configurations", "the model revision differs by host"),
        ],
        refine=lambda g: (
            _sequence_axis(g)
            or (
                f"both shapes are one-dimensional (({g['a']}) and ({g['b']})): not an attention "
                "mask or a KV cache (those have two to five axes) but vectors: most often the "
                "sampling code's per-token state around the model (a repetition penalty's ring "
                "of recent tokens, a logits processor) sized from a wrong length (a prompt's "
                "batch axis read as its length), a bug of the library that generates: upgrade it "
                "or turn that sampling option off until then; when one size is the model's "
                "hidden size, a norm or bias weight of another model configuration"
                if g.get("a") and g.get("b") and "," not in g["a"].strip(", ") + g["b"].strip(", ")
                else None
            )
        ),
        examples=(
            "Error processing tensor for shard Shard(model_id='m', start_layer=16, "
            "end_layer=31, n_layers=32): Shapes (1,8,4,39,77) and (39,39) cannot be broadcast.",
            "ValueError: [broadcast_shapes] Shapes (2,3) and (4,3) cannot be broadcast.",
        ),
    ),
    signature(
        "MD868",
        "metal.language-version",
        r"Function (?P<kernel>\w+) is using language version (?P<ver>[\d.]+) which is "
        r"incompatible with this OS",
        "The installed MLX's Metal library was compiled for a newer Metal shading language "
        "than this macOS supports, so Metal refuses to load its kernels: the MLX build "
        "(or the app that bundles it, such as exo) needs a newer macOS than this host runs "
        "(Metal language 4.0 needs macOS 26 Tahoe; 3.2 macOS 15, 3.1 macOS 14).",
        "Upgrade macOS on this host to the version the MLX build (or the app's release "
        "notes) requires, or install an MLX build made for this macOS (an earlier mlx and "
        "mlx-metal release, or a source build on this host); every host of the job needs "
        "it.",
        "Apple Metal Shading Language specification (language versions and the OS that "
        "supports each); MLX Metal device (kernel load errors); exo README (macOS 26.2 or "
        "later)",
        causes=[
            (
                "an MLX (or exo) build for macOS 26 on a host that runs macOS 15 or earlier",
                "'language version 4.0'; `sw_vers` says 15.x",
            ),
        ],
        examples=(
            "Function fence_update is using language version 4.0 which is incompatible with "
            "this OS.",
        ),
    ),
    signature(
        "MD867",
        "python.tls-verify",
        r"certificate verify failed: (?P<why>[^(\]'\")]+)",
        "Python's TLS (the ssl module, under aiohttp, requests or urllib) refused the "
        "server's certificate: it found no trusted CA for it in the bundle it reads. 'unable "
        "to get local issuer certificate' means the process has no CA bundle that holds the "
        "issuer: a python.org Python on macOS whose 'Install Certificates.command' was never "
        "run (it does not read the system keychain), a slim container image without "
        "ca-certificates, or a TLS-inspecting proxy whose CA is not in the bundle. A model "
        "download that fails so stops the node that runs it.",
        "Give that Python a CA bundle: on macOS with python.org's Python run "
        '`"/Applications/Python 3.X/Install Certificates.command"` (X its version), or '
        "`pip install -U certifi` and `export SSL_CERT_FILE=$(python3 -m certifi)`; in a "
        "container install ca-certificates; behind a TLS-inspecting proxy add its CA "
        "(SSL_CERT_FILE, REQUESTS_CA_BUNDLE). Then retry on every node: each downloads its "
        "own shard.",
        "Python ssl module documentation (certificate verification, SSL_CERT_FILE); "
        "python.org macOS installer ReadMe (Install Certificates.command); certifi",
        causes=[
            (
                "a python.org Python on macOS without its certificates installed",
                "'unable to get local issuer certificate'; Python from /Library/Frameworks",
            ),
            ("a TLS-inspecting proxy", "'self-signed certificate in certificate chain'"),
            ("a container image without ca-certificates", "/etc/ssl/certs empty"),
        ],
        examples=(
            "Cannot connect to host huggingface.co:443 ssl:True [SSLCertVerificationError: (1, "
            "'[SSL: CERTIFICATE_VERIFY_FAILED] certificate verify failed: unable to get local "
            "issuer certificate (_ssl.c:1000)')]",
        ),
    ),
    signature(
        "MD693",
        "macos.gpu-restart",
        r'"bug_type"\s*:\s*"284"',
        "The Mac's GPU hung or faulted and macOS restarted it (a GPU restart report, bug_type "
        "284, written by DumpGPURestart): every Metal command buffer in flight on that Mac "
        "failed at that moment, so a rank's Metal errors or aborts right after it are its "
        "consequences.",
        "See what ran on the GPU at that time (the report names the process when it can); "
        "lower memory pressure (smaller model or batch, a lower MLX memory limit with "
        "mx.set_memory_limit, the wired limit iogpu.wired_limit_mb) and shorter command "
        "buffers (MLX_MAX_OPS_PER_BUFFER, MLX_MAX_MB_PER_BUFFER); update macOS, and report it "
        "to Apple with the report file.",
        "DumpGPURestart, the macOS tool that saves a GPU restart report after a GPU hang or "
        "reset (peterspath.net, 'What are DumpGPURestart and DumpPanic?'); the report's "
        "bug_type from its JSON header line",
        causes=[
            ("GPU memory pressure (wired memory exhausted)", "MD302; Metal out-of-memory errors"),
            ("a GPU hang in a long command buffer", "GPU timeout errors (MD616) before it"),
            ("a GPU driver fault", "the report's text; repeats after a macOS update or not"),
        ],
        examples=(
            '{"bug_type":"284","timestamp":"2026-01-05 10:00:03.00 +0100",'
            '"os_version":"macOS 26.2 (25C56)","name":"GPURestart"}',
        ),
    ),
    signature(
        "MD694",
        "macos.exc-resource",
        r"EXC_RESOURCE -> (?P<proc>[^\[]*)\[(?P<pid>\d+)\] exceeded mem limit: "
        r"(?P<limit>\w+) (?P<mb>\d+) MB \((?P<fatal>fatal|non-fatal)\)"
        r"|^\s*Exception Type:\s+(?P<report>EXC_RESOURCE)\b",
        "A process went over a macOS resource limit (EXC_RESOURCE: memory, CPU, wakeups or "
        "disk writes). Over a hard memory limit it is killed for memory; over a CPU, wakeups "
        "or disk-writes limit, or a soft memory limit, it is only reported and goes on.",
        "Read which resource and limit: for memory, use a smaller model or shard it over more "
        "ranks and lower the wired limit (iogpu.wired_limit_mb); for CPU or wakeups, nothing "
        "stopped the process, so look for the first failure elsewhere.",
        "xnu bsd/kern/kern_memorystatus.c (memorystatus_log_exception); Apple, Understanding "
        "the exception types in a crash report (EXC_RESOURCE)",
        role=EITHER,
        check="MD302",
        causes=[
            ("over a hard (fatal) memory limit: killed", "'(fatal)' or Action taken: killed"),
            ("over a CPU or wakeups limit: a warning", "Event: cpu usage / wakeups"),
        ],
        refine=lambda g: (
            f"{g.get('proc') or 'the process'} crossed its {g.get('limit')} limit of "
            f"{g.get('mb')} MB and "
            + (
                "was killed for memory"
                if g.get("fatal") == "fatal"
                else "went on (a warning, not killed)"
            )
            if g.get("mb")
            else (
                "a crash report of type EXC_RESOURCE: the process was killed for going over "
                "the limit its Exception Subtype line names (MEMORY: killed for memory; "
                "CPU_FATAL: for CPU time)"
                if g.get("report")
                else None
            )
        ),
        examples=(
            "EXC_RESOURCE -> python3.12[48213] exceeded mem limit: ActiveHard 6144 MB (fatal)",
            "Exception Type:  EXC_RESOURCE",
        ),
    ),
    # --- MLX's Metal kernel library not loaded: the process cannot run a single GPU op ---
    signature(
        "MD823",
        "metal.metallib-load",
        r"^(?P<before>.*?)(?:Failed to load the (?:default )?metallib|Failed to load the metallib from|"
        r"Failed to load device library from|(?:rror: |mlx: )Can not load metallib from specified "
        r"location|"
        r"(?:std::runtime_error|RuntimeError): library not found\s*$)(?P<rest>.*)"
        # Metal's reason alone on the next line, as a message printed over two lines shows it
        r"|(?P<refused>[Tt]his library is using (?:language version [\d.]+|a deployment target "
        r"\(0x[0-9a-fA-F]+\)),? (?:which|that) is not supported on this OS.*)",
        "MLX could not load its Metal kernel library (the metallib), so not one GPU operation "
        "can run: the process ends at its first MLX call, before any model or collective. "
        "MLX looks for mlx.metallib beside libmlx (and in Resources/), for default.metallib "
        "in a SwiftPM bundle (mlx-swift_Cmlx.bundle), then at the path it was built with "
        "(MLX_METALLIB_PATH overrides it). Metal's own reason follows the message: 'library "
        "not found' (no file where MLX looked: a build or package that left it out), or a "
        "library Metal refuses on this macOS (built for a newer one: 'language version X "
        "... not supported on this OS', 'deployment target ... not supported').",
        "Read Metal's reason after the message: 'not supported on this OS' means a build "
        "for a newer macOS (upgrade macOS or install the build for this one); 'library not "
        "found' means the metallib is missing: a Swift program must be built with Xcode or "
        "xcodebuild (SwiftPM on the command line compiles no Metal shaders), an app bundle "
        "must ship it beside its binary (update or reinstall the app), a Python environment "
        "needs mlx and mlx-metal of one version (`pip install --force-reinstall mlx "
        "mlx-metal`); unset MLX_METALLIB_PATH unless it names a metallib of this MLX.",
        "MLX v0.32.1 mlx/backend/metal/device.cpp (load_default_library, load_library); "
        "ml-explore/mlx-swift README (SwiftPM cannot build the Metal shaders: build with "
        "xcodebuild); Apple Metal Shading Language Specification (language versions by OS)",
        check="MD102",
        causes=[
            (
                "a build for a newer macOS than this Mac runs (its metallib's language "
                "version or deployment target)",
                "'language version ... not supported on this OS' or 'deployment target ... "
                "not supported on this OS'",
            ),
            (
                "a Swift program built with `swift build` (SwiftPM compiles no Metal shaders)",
                "'library not found'; the path is a Swift package checkout (SourcePackages, "
                "mlx-swift)",
            ),
            (
                "an app bundle shipped without MLX's metallib or its mlx-swift_Cmlx.bundle",
                "'library not found' from a program inside Something.app/Contents",
            ),
            (
                "mlx-metal missing or of another version than mlx; MLX_METALLIB_PATH pointing away",
                "'library not found' from a Python program; `pip show mlx mlx-metal`",
            ),
        ],
        refine=_metallib,
        examples=(
            "MLX error: Failed to load the default metallib. library not found",
            "RuntimeError: Failed to load the default metallib. This library is using "
            "language version 4.0 which is not supported on this OS library not found",
            "Failed to load device library from <default.metallib>",
        ),
    ),
    # --- an MLX error through mlx-c, MLX's C API (mlx-swift, Go and other bindings) --------
    signature(
        "MD824",
        "mlx-c.error",
        # linear on any line: the message greedy to the end (the ' at FILE:LINE' is read from
        # it by the refinement), the bare form anchored and bounded
        r"(?:\bMLX error: |(?P<panic>\bpanic: )?\bmlx: )(?P<msg>\S.*)"
        r"|^(?=.*/mlx/c/)(?P<msg2>.*\S) at (?P<where2>\S{0,300}/mlx/c/[\w/]{1,100}\.cpp):"
        r"(?P<at2>\d+)\s*$",
        "An MLX error reported through mlx-c, MLX's C API, which the programs that call MLX "
        "from another language than Python use (mlx-swift, Ollama's MLX runner and other Go, "
        "Rust or C bindings): mlx-c adds ' at FILE:LINE' (its own wrapper function, not where "
        "MLX failed) and hands the message to the error handler; its default handler prints "
        "'MLX error: MESSAGE' and exits the process, a program's own handler ends it its own "
        "way (a Go panic 'mlx: MESSAGE', a Swift fatalError). The MLX message is the cause.",
        "Deal with the MLX message it carries (its own reading where it has one); the mlx-c "
        "file and line say only which C API call the program made (mlx_eval in "
        "transforms.cpp: evaluating arrays). Report it to the program that embeds MLX with "
        "its version and the MLX version it bundles.",
        "ml-explore/mlx-c mlx/c/error.cpp (_mlx_error appends ' at FILE:LINE'; the default "
        "handler prints 'MLX error: %s' and exits), commit fba4470",
        envelope=True,
        classes=MLX_ERROR + UNTAGGED,
        role=EITHER,
        refine=_mlx_c,
        examples=(
            "panic: mlx: There is no Stream(gpu, 1) in current thread. at /private/tmp/mlx-c-"
            "0.6.0/mlx/c/transforms.cpp:73",
            "MLX error: There is no Stream(cpu, 0) in current thread. at "
            "/src/mlx-c/mlx/c/transforms.cpp:73",
        ),
    ),
    # --- the GPU driver refusing to unmap GPU memory at teardown (IOKit) --------------------
    signature(
        "MD828",
        "metal.unmap-failed",
        r"IOConnectUnmapMemory(?:64)? failed: kr=(?P<kr>0x[0-9a-fA-F]+)",
        "The GPU driver refused to unmap a GPU memory mapping (IOKit's IOConnectUnmapMemory; "
        "0xe00002bc is kIOReturnError, a general failure) while a process released its Metal "
        "resources: its GPU teardown failed part way, most often because it raced other GPU "
        "work: a process still tearing down while a new one (a restarted runner or worker) "
        "already starts on the GPU, or a process killed in the middle of GPU work. The node "
        "may hang after it (GPU calls that never return).",
        "Let the old process exit fully before the next one starts on the GPU (an app that "
        "restarts its runner after a peer left: exo-explore/exo PR #1801 waits for the old "
        "runner to stop; upgrade it); if the node hangs, stop its GPU processes (`ps -ax | "
        "grep -i python`, kill them) and reboot when the GPU stays wedged.",
        "Apple IOKit (IOConnectUnmapMemory, IOReturn.h: kIOReturnError = 0xe00002bc); "
        "exo-explore/exo PR #1801",
        check="MD301",
        examples=("IOConnectUnmapMemory failed: kr=0xe00002bc",),
    ),
    # --- a chat request to a model without a chat template (transformers' apply_chat_template)
    signature(
        "MD826",
        "model.no-chat-template",
        r"Cannot use chat template functions because tokenizer\.chat_template is not set",
        "The model's tokenizer has no chat template, so a chat request (messages, not a "
        "plain prompt) cannot be turned into its prompt: most often a base (pretrained) "
        "model, which ships none, where its instruct or chat variant was meant (the '-it', "
        "'-Instruct' or '-chat' repository), else a conversion that dropped the template "
        "(tokenizer_config.json's chat_template, or chat_template.jinja).",
        "Use the instruct variant of the model for chat (the same name with -it, -Instruct "
        "or -chat), or pass a template (the server's chat-template option, or "
        "tokenizer_config.json's chat_template); a base model serves only completions "
        "(/v1/completions with a raw prompt).",
        "Hugging Face transformers (PreTrainedTokenizerBase.apply_chat_template: 'Cannot use "
        "chat template functions because tokenizer.chat_template is not set'); Hugging Face "
        "chat templating documentation",
        examples=(
            "ValueError: Cannot use chat template functions because tokenizer.chat_template is "
            "not set and no template argument was passed!",
        ),
    ),
    # --- a Rust program's panic (a helper a cluster app runs: exo's macmon) ---------------
    signature(
        "MD827",
        "rust.panic",
        # as the program that ran it reports it ("... failed with return code -6: thread
        # 'main' panicked at ..."): a bare panic line holds none of the scanner's anchors
        r"^(?P<before>.{0,300}?(?:ailed|rror|SIG).{0,300}?)thread '(?P<thread>[^']*)' panicked at "
        r"(?P<where>\S+?):?(?:\s|$)",
        "A Rust program panicked: it hit a case its code does not handle (an unwrap of an "
        "error, an index out of range, a device or OS it does not know) and aborted (a "
        "return code of -6 or 134 is SIGABRT). The file and line are in that program's own "
        "source; the program that ran it reports the failure in its own words on the same "
        "line (read from such a line: a panic printed alone is not).",
        "Name the program (the words before the panic), note its version and upgrade it; "
        "report the panic's file and line to it. A helper an app runs (exo runs macmon, its "
        "GPU and power monitor, at start) can be updated, replaced by the build the app "
        "pins, or left out.",
        "The Rust reference, panics ('thread NAME panicked at FILE:LINE:COL'); exo-explore/exo "
        "PR #1747 (macmon pinned to a fork that knows newer Apple chips)",
        refine=lambda g: (
            f"the program is macmon (panic at {g.get('where')}), the GPU and power monitor exo "
            "runs at start (its preflight): a macmon build that does not know this Mac's chip "
            "panics reading its power sources (src/sources.rs): an exo app that bundled the "
            "upstream macmon instead of the fork exo pins (exo PR #1747); update exo, or "
            "install the macmon exo pins"
            if "macmon" in (g.get("before") or "")
            else None
        ),
        examples=(
            "macmon preflight failed with return code -6: thread 'main' panicked at "
            "src/sources.rs:394:41",
        ),
    ),
    # --- Metal API validation (MTL_DEBUG_LAYER, Xcode's GPU validation) --------------------
    signature(
        "MD825",
        "metal.validation",
        r"failed assertion `(?P<what>[^`']+)",
        "Metal's API validation layer (MTL_DEBUG_LAYER=1, or a run under Xcode) stopped the "
        "process at a misuse of the Metal API: the text says which rule broke. Without "
        "validation the same misuse shows as wrong values (NaNs, garbage) or a GPU fault, "
        "not an error.",
        "Read the rule: 'references deallocated object' is a use-after-free of a buffer or "
        "pipeline state a command buffer still used (in MLX: a custom mx.fast.metal_kernel "
        "called with different dtypes in one graph evicted its own pipeline before MLX "
        "0.32.0, PR #3662: upgrade MLX, or give each dtype its own kernel name); other rules "
        "name the encoder or buffer misused. Report it to ml-explore/mlx with the program "
        "and MLX version when MLX's own kernels trip it.",
        "Apple Metal API validation (MTL_DEBUG_LAYER); MLX PR #3662 (v0.32.0: custom kernel "
        "names carry their dtypes)",
        causes=[
            (
                "a custom Metal kernel called with different input dtypes in one graph (MLX "
                "before 0.32.0 evicts the pipeline another dtype still uses)",
                "'command buffer references deallocated object'; mx.fast.metal_kernel in "
                "the program",
            ),
            ("a Metal object released while the GPU still used it", "'deallocated object'"),
        ],
        refine=lambda g: (
            "a Metal object (a buffer or compute pipeline) was released while a command "
            "buffer not yet finished still used it: a use-after-free in MLX or in the "
            "program's custom kernels; in MLX before 0.32.0 a custom kernel called with two "
            "dtypes in one graph did this (PR #3662)"
            if "deallocated object" in g.get("what", "")
            else "one thread committed the command buffer while another still added work to "
            "it: MLX was used from two threads at once on one stream (a server that runs "
            "concurrent requests on threads of their own); serialise MLX work (one worker "
            "thread, a lock, or the engine's batching mode that runs requests in one loop)"
            if re.search(
                r"after commit|already committed|encoder is already|uncommitted encoder",
                g.get("what", ""),
            )
            else None
        ),
        examples=(
            "failed assertion `command buffer references deallocated object which previously "
            "existed at address 0x...'",
            "-[_MTLCommandBuffer addCompletedHandler:]:1011: failed assertion `Completed "
            "handler provided after commit call'",
        ),
    ),
    # --- MLX not importable on a node: its native library missing or of another build ------
    signature(
        "MD876",
        "mlx.not-importable",
        r"(?P<lib>libmlx[\w.-]*\.(?:so|dylib)[\w.]*)(?:: cannot open shared object file|"
        r"' \(no such file)"
        r"|Library not loaded: (?P<rpath>\S*libmlx[\w.-]*)"
        # older macOS dyld puts the symbol in parentheses: "Symbol not found: (_sym)"
        r"|(?P<how>undefined symbol|Symbol not found): \(?(?P<sym>_{1,2}ZN3mlx\w*)"
        # a system library's symbol that this macOS lacks, for MLX's extension or libmlx
        r"|dlopen\([^,)]*mlx[^,)]*(?:, \w+)?\): Symbol not found: \(?"
        r"(?P<ossym>_(?!_?ZN3mlx)[^\s)]+)"
        # dyld refusing a libmlx built for a newer macOS than this one
        r"|(?P<newer>libmlx[\w.-]*\.dylib) \(built for macOS (?P<built>[\d.]+) which is newer "
        r"than running OS\)"
        # nanobind registering mlx.core's types twice: two copies of the extension loaded
        r"|refusing to add duplicate key \"[^\"]*\" to enumeration \"(?P<dup>mlx\.[\w.]+)\"",
        "MLX cannot be imported on this host: `import mlx.core` failed because the native "
        "library the Python package loads (libmlx) is missing or comes from another MLX "
        "build. The MLX install of this node is incomplete or mismatched: not the network, "
        "not the job. On Linux the `mlx` wheel holds no libmlx of its own: it needs its "
        "backend package (`mlx[cpu]`, or `mlx[cuda]` for NVIDIA GPUs), so a plain `pip install "
        "mlx` gives 'libmlx.so: cannot open shared object file'; on macOS libmlx.dylib comes "
        "with mlx-metal. An undefined symbol (or 'Symbol not found') means the Python "
        "extension and libmlx are of different MLX versions. A runner or rank that imports "
        "MLX exits at once (exo: 'Runner terminated with exitcode=1').",
        "In the environment that runs the rank or runner, install MLX with its backend, one "
        'version for all its packages: `pip install "mlx[cpu]"` (or `"mlx[cuda]"`; '
        "exo: `uv sync --extra mlx_cpu`), on macOS `pip install -U mlx mlx-metal`; compare "
        '`pip show mlx mlx-cpu mlx-cuda mlx-metal` (one version); then `python -c "import '
        'mlx.core"` on every host.',
        "https://github.com/exo-explore/exo/issues/2156; "
        "https://github.com/ml-explore/mlx/issues/2390; "
        "https://github.com/ml-explore/mlx/issues/2500; MLX installation documentation "
        "(Linux: pip install mlx[cpu], mlx[cuda]; macOS >= 14.0)",
        check="MD102",
        causes=[
            (
                "on Linux, mlx installed without its backend package (mlx[cpu] or mlx[cuda]; "
                "exo's mlx_cpu extra)",
                "'libmlx.so: cannot open shared object file'; `pip show mlx-cpu mlx-cuda` "
                "finds neither",
            ),
            (
                "mlx and its backend package (mlx-cpu, mlx-cuda, mlx-metal) of different "
                "versions, or a stale copy of one left by an upgrade",
                "'undefined symbol: _ZN3mlx...' / 'Symbol not found'; `pip show` gives two "
                "versions",
            ),
            (
                "a macOS older than the MLX build needs (MLX: macOS 14.0 or later)",
                "'Symbol not found: _...' of a system framework ('Expected in: "
                "/System/Library/Frameworks/...'); `sw_vers`",
            ),
            (
                "the rank runs another interpreter or venv than the one MLX was installed in",
                "the path of the failing file is not the venv's site-packages",
            ),
        ],
        refine=lambda g: (
            f"{g.get('lib') or g.get('rpath')} is not there for this Python: "
            + (
                "on Linux the mlx wheel needs mlx[cpu] or mlx[cuda] beside it"
                if ".so" in (g.get("lib") or g.get("rpath") or "")
                else "on macOS mlx-metal provides it (reinstall mlx and mlx-metal together)"
            )
            if g.get("lib") or g.get("rpath")
            else f"the Python extension needs {g.get('sym')}, which the libmlx it loaded "
            "lacks: two MLX builds mixed (mlx and mlx-cpu/mlx-cuda/mlx-metal of different "
            "versions)"
            if g.get("sym")
            else f"libmlx needs {g.get('ossym')}, which this macOS's system libraries lack "
            "(the 'Expected in:' line names the framework): this MLX build needs a newer "
            "macOS than this Mac runs (MLX needs macOS 14.0 or later; a $NEWLAPACK symbol is "
            "Accelerate's LAPACK interface of macOS 13.3 and later): upgrade macOS, or use "
            "a program that does not need MLX on this Mac"
            if g.get("ossym")
            else f"{g.get('dup')} was registered twice: two copies of MLX's extension are "
            "loaded into one process (an app's bundled mlx and another install found first: "
            "pip's user site, PYTHONPATH, a Homebrew libmlx through DYLD_* variables): "
            "remove the extra copy or keep it off the paths (`python -c 'import mlx.core as "
            "m; print(m.__file__)'`, `pip list --user | grep mlx`, `env | grep -E "
            "'PYTHONPATH|DYLD_'`)"
            if g.get("dup")
            else f"{g.get('newer')} was built for macOS {g.get('built')}, newer than the "
            "macOS this Mac runs, so the dynamic loader refuses it: upgrade macOS to at least "
            "that version, or install an MLX release built for this macOS"
            if g.get("newer")
            else None
        ),
        examples=(
            "ImportError: libmlx.so: cannot open shared object file: No such file or directory",
            "Error when loading model: ImportError: dlopen(/venv/lib/python3.11/site-packages/"
            "mlx/core.cpython-311-darwin.so, 0x0002): Symbol not found: _cblas_dgemm$NEWLAPACK",
            "Runner error: ImportError: libmlx.so: cannot open shared object file: No such "
            "file or directory",
            "ImportError: /venv/lib/python3.12/site-packages/mlx/core.cpython-312-x86_64-"
            "linux-gnu.so: undefined symbol: _ZN3mlx4core5arrayD1Ev",
            "ImportError: dlopen(/venv/lib/python3.12/site-packages/mlx/core.cpython-312-"
            "darwin.so, 0x0002): Library not loaded: @rpath/libmlx.dylib",
        ),
    ),
    # --- end mlx.not-importable -----------------------------------------------------------
)
