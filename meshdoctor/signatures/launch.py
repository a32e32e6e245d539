"""What ``mlx.launch`` (``mlx/_distributed_utils/launch.py``) and MLX's distributed init say
about the ranks as a whole: the backend chosen or unavailable (``mlx/distributed``,
``mlx.core.distributed.init``), a collective no backend has, a rank that ended
(``Node with rank R exited with code C``), and the exit statuses a rank ends with (POSIX wait
status, ssh(1), the JACCL progress guard's 75), as :mod:`meshdoctor.mlx.exits` explains them.
Codes are stable: never renumber, only add."""

from __future__ import annotations

import re

from typing import Mapping, Optional

from meshdoctor.signatures.exo_classes import PLACEMENT
from meshdoctor.signatures.mlx_classes import LAUNCH
from meshdoctor.signatures.model import CONSEQUENCE, EITHER, signature

# what a shell's job-status word says of the signal that ended the job (zsh's and bash's
# strsignal texts, macOS's "Killed: 9" / "Abort trap: 6")
_SHELL_SIGNAL = (
    (
        "kill",
        "SIGKILL: the process could not clean up; most often the memory ran out (Linux's OOM "
        "killer: `dmesg | grep -i oom`; macOS's jetsam: a JetsamEvent report) or kill -9",
    ),
    (
        "abort",
        "SIGABRT: an uncaught C++ exception or a failed assertion (the libc++abi line above "
        "it names the exception)",
    ),
    ("segmentation", "SIGSEGV: a native crash (its crash report names the faulting frame)"),
    ("bus error", "SIGBUS: a native crash (its crash report names the faulting frame)"),
    ("terminated", "SIGTERM: something stopped it (mlx.launch's teardown, Slurm, a timeout)"),
)


def shell_signal(groups: Mapping[str, str]) -> Optional[str]:
    """What the job-status word in group ``sig`` of a shell line says (the signal, its usual
    causes), or None."""
    word = (groups.get("sig") or "").lower()
    return next((why for key, why in _SHELL_SIGNAL if key in word), None)


# a library's folder of per-model modules: mlx_lm.models.<model_type>,
# mlx_lm.chat_templates.<type>, mlx_vlm.models.<model_type>, mlx_lm.tool_parsers.<name>
_PER_MODEL = re.compile(
    r"^(?P<pkg>mlx_lm|mlx_vlm|mlx_audio|mlx_embeddings)\.(?P<kind>models|chat_templates|"
    r"tool_parsers|speculative)\.(?P<name>\w+)$"
)


def _module_detail(module: str) -> str:
    """What a missing module's dotted name says: one of a library's per-model modules
    (``mlx_lm.chat_templates.gemma4``: a model newer than that release), or one with a
    private part below its package (``huggingface_hub.utils._errors``: a release of that
    package moved or removed a module that another package imported though it was not
    public); "" otherwise."""
    per = _PER_MODEL.match(module)
    if per:
        return (
            f": {per.group('pkg')} is installed, but this release has no "
            f"{per.group('kind').replace('_', ' ')} module '{per.group('name')}' that the "
            "model's files ask for (its config.json's model_type or its tokenizer config's "
            f"template type): a model newer than this {per.group('pkg')}; upgrade it (or "
            "the app that bundles it) to a release that has it"
        )
    parts = module.split(".")
    if len(parts) < 2 or not any(p.startswith("_") and not p.startswith("__") for p in parts[1:]):
        return ""
    return (
        f": '{parts[0]}' is installed, but its private module '{module}' is not in this "
        f"release: another package imports {parts[0]}'s internals, and a newer {parts[0]} "
        f"moved or removed them. Upgrade the package in the traceback that imports it (its "
        f"fixed release imports the public name), or pin {parts[0]} to the release before "
        "the change"
    )


def _backend_unavailable(groups: Mapping[str, str]) -> Optional[str]:
    """MD623's detail for the mpi backend (group ``mpi``): MLX's mpi init (strict) found no
    Open MPI library it could load. MLX dlopens libmpi by name (mlx/distributed/mpi/mpi.cpp's
    get_libmpi_name): before 0.24.1 (MLX PR #1975) the name was libmpi.dylib on every platform,
    so on Linux it never loaded (mlx #1964)."""
    if not groups.get("mpi"):
        return None
    return (
        "mx.distributed.init(backend='mpi') could not load Open MPI's shared library; MLX "
        "opens it by name: on Linux, MLX before 0.24.1 looks for libmpi.dylib (the macOS name) "
        "instead of libmpi.so and fails even with Open MPI installed (mlx #1964, fixed by MLX "
        "PR #1975): upgrade MLX; with 0.24.1+ libmpi.so itself must be on the loader's path "
        "(Debian/Ubuntu: libopenmpi-dev), or set MLX_MPI_LIBNAME (0.29.4+) to the library, or "
        "use the ring backend meanwhile"
    )


# what the signal that ended exo's runner says (POSIX; macOS's memory-pressure killer and
# Linux's OOM killer send SIGKILL)
_RUNNER_END = {
    "9": "SIGKILL: killed from outside, most often by memory pressure: macOS's jetsam (`log "
    "show --last 1h --predicate 'eventMessage CONTAINS \"jetsam\"'`) or Linux's OOM killer "
    "(`dmesg | grep -i oom`) when the model, its KV cache and other apps exceed the memory; "
    "a smaller model or context, or fewer apps, fits",
    "6": "SIGABRT: the runner aborted itself, most often an uncaught C++ exception of MLX (a "
    "Metal command buffer error, an out-of-memory, a jaccl or ring error) printed just "
    "before on its stderr",
    "11": "SIGSEGV: a native crash in MLX or a library it loaded; its crash report "
    "(~/Library/Logs/DiagnosticReports/*.ips) names the frame",
    "10": "SIGBUS: a native crash (a bad memory access, in MLX or the RDMA driver); its crash "
    "report names the frame",
    "15": "SIGTERM: exo stopped the runner itself (the instance was deleted, the node shut "
    "down or another node failed first): a consequence; look at the first failure",
}

SIGNATURES = (
    signature(
        "MD618",
        "rank.exit-255-silent",
        None,
        "A rank exited with status 255 and printed no [jaccl] line: usually a native crash "
        "over ssh.",
        "Look for a crash report (~/Library/Logs/DiagnosticReports/*.ips) on that node "
        "(`meshdoctor triage --crash-reports`).",
        "ssh(1) exit status",
        causes=[
            (
                "a native crash of a remote rank (SIGSEGV in the Thunderbolt RDMA driver)",
                "a .ips crash report on that host",
            ),
            ("ssh itself failed (host down, auth)", "ssh's own message on stderr"),
            ("the rank called exit(255) / os._exit(-1)", "a Python error before it"),
        ],
        role=EITHER,
        examples=("[WARN] Node with rank 2 exited with code 255",),
        exit_status=255,
        exit_unless="[jaccl]",
    ),
    signature(
        "MD622",
        "jaccl.exit-75",
        None,
        "A rank exited with status 75: the JACCL progress guard tore the group down after a "
        "peer stopped answering.",
        "Find the dead or stalled peer; re-form the group.",
        "JACCL progress guard PR",
        causes=[("a peer died or stalled", "the peer's log or crash report")],
        role=CONSEQUENCE,
        examples=("[WARN] Node with rank 1 exited with code 75",),
        exit_status=75,
    ),
    signature(
        "MD623",
        "backend.unavailable",
        r"Cannot initialize (?:(?P<backend>[\w-]+) distributed backend|(?P<mpi>MPI)\b)",
        "This MLX build cannot start that backend: JACCL needs macOS 26.2 or later on Apple "
        "silicon with RDMA enabled and mlx 0.30.1 or later; mpi and nccl need their libraries "
        "(the mpi backend says 'Cannot initialize MPI' when it cannot load Open MPI's libmpi).",
        "Run `meshdoctor check` on that host (MD102 lists the backends its MLX has), or probe "
        "with --backend ring. For mpi: on Linux upgrade MLX to 0.24.1 or later (earlier "
        "versions dlopen the macOS name libmpi.dylib there), make libmpi.so loadable (Debian "
        "and Ubuntu ship that name only in libopenmpi-dev) or name the library in "
        "MLX_MPI_LIBNAME (MLX 0.29.4+); or launch with the ring backend.",
        "MLX distributed init (observed with 0.32.4); mlx/distributed/mpi/mpi.cpp "
        "(get_libmpi_name, MLX PR #1975 in 0.24.1, MLX_MPI_LIBNAME MLX PR #2741 in 0.29.4); "
        "https://github.com/ml-explore/mlx/issues/1964",
        causes=[
            ("backend not compiled into this MLX build (mlx[cpu] has no nccl)", "MD102"),
            ("librdma cannot load (macOS < 26.2, RDMA disabled)", "MD201"),
            (
                "mpi on Linux with MLX older than 0.24.1: it looks for libmpi.dylib, the macOS "
                "name, so it fails with Open MPI installed (mlx #1964, fixed by MLX PR #1975)",
                "'Cannot initialize MPI' on a Linux host (/home paths, a container); "
                "`python -c 'import mlx.core as mx; print(mx.__version__)'`",
            ),
            (
                "mpi: libmpi.so (Linux) or libmpi.dylib (macOS) is not on the loader's path, or "
                "only a versioned file (libmpi.so.40) is installed",
                "`ldconfig -p | grep libmpi` (Linux), DYLD_LIBRARY_PATH (macOS)",
            ),
        ],
        check="MD102",
        refine=_backend_unavailable,
        examples=(
            "RuntimeError: Cannot initialize jaccl distributed backend.",
            "RuntimeError: Cannot initialize mpi distributed backend.",
            "RuntimeError: Cannot initialize MPI",
        ),
    ),
    signature(
        "MD640",
        "backend.sum-scatter-unsupported",
        r"sum_scatter not supported|\[mpi\] sum_scatter not yet implemented",
        "This backend has no sum_scatter (ring, mpi; JACCL before 0.32.1).",
        "Upgrade MLX (JACCL 0.32.1+), use nccl, or all_sum then slice.",
        "MLX v0.32.1 jaccl sum_scatter",
        fixed_in="0.32.1",
        examples=(
            "RuntimeError: [jaccl] sum_scatter not supported.",
            "RuntimeError: [ring] sum_scatter not supported.",
            "RuntimeError: [mpi] sum_scatter not yet implemented.",
        ),
    ),
    signature(
        "MD655",
        "backend.none",
        r"\[distributed\] Couldn't initialize any backend",
        "No distributed backend could start (strict init).",
        "`meshdoctor check` lists the backends this MLX has (MD102).",
        "MLX distributed init",
        check="MD102",
        causes=[
            ("no backend compiled in and strict init", "MD102"),
            ("every backend's environment missing (started outside mlx.launch)", "MD103"),
        ],
        examples=("RuntimeError: [distributed] Couldn't initialize any backend",),
    ),
    signature(
        "MD656",
        "mlx.too-old-for-backend",
        r"valid values for backend are 'any', 'mpi' and 'ring' but '(?P<backend>[^']+)' was "
        r"provided",
        "This MLX is older than 0.30.1 and has no JACCL.",
        "Upgrade mlx to 0.30.1 or later (0.32.1+ recommended).",
        "MLX 0.30.1 release",
        check="MD102",
        fixed_in="0.30.1",
        examples=(
            "ValueError: The valid values for backend are 'any', 'mpi' and 'ring' but "
            "'jaccl' was provided",
        ),
    ),
    signature(
        "MD657",
        "launch.rank-exited",
        r"(?:Node with rank|\b[Rr]ank) (?P<rank>\d+) (?:with PID \d+ on node (?P<node>\S+) )?"
        r"(exited with code (?P<code>-?\d+)|(?P<killed>was killed)|"
        r"exited on(?: signal (?P<signal>\d+)|\s*$))",
        "mlx.launch (or Open MPI's prterun/mpirun: `noticed that process rank N ... exited on "
        "signal S`) saw a rank end. mlx.launch itself still exits 0: wrappers must not trust "
        "its exit status.",
        "Read the rank's own log; the exit code is explained in the finding.",
        "mlx/_distributed_utils/launch.py; Open MPI prterun(1) (its abort report)",
        role=EITHER,
        causes=[
            ("the rank's own failure (its log names it)", "the rank's log"),
            (
                "mlx.launch stopping survivors after another rank failed (-15)",
                "another rank exited first",
            ),
        ],
        examples=(
            "[WARN] Node with rank 2 exited with code 255",
            "\x1b[33m[WARN] Node with rank 3 was killed\x1b[0m",
            "2026-01-05 10:00:06,000 ERROR supervisor: rank 2 exited with code 255.",
            "mpirun noticed that process rank 1 with PID 4242 on node m2 exited on signal 11 "
            "(Segmentation fault: 11).",
            "prterun noticed that process rank 0 with PID 62282 on node node01 exited on",
        ),
        # launch.py prints "was killed" only for a rank its own terminate() stopped
        role_of=lambda g: CONSEQUENCE if g.get("killed") else None,
        role_note="'Node with rank R was killed' is mlx.launch's own teardown of a survivor "
        "(its terminate() after another rank failed, or Ctrl-C): a consequence; an exit code "
        "has the role its status gives (-15, mlx.launch's SIGTERM: a consequence).",
    ),
    signature(
        "MD658",
        "rank.killed-by-signal",
        None,
        "A rank was killed by a signal (negative code from mlx.launch or subprocess; 128+N "
        "from a shell).",
        "See the signal named: SIGKILL from outside is often the OOM killer; "
        "SIGTERM from mlx.launch is its teardown of the survivors.",
        "POSIX wait status",
        causes=[
            ("mlx.launch's own SIGTERM of survivors (-15)", "another rank failed first"),
            ("out-of-memory killer (SIGKILL, -9/137)", "dmesg | grep -i oom / jetsam"),
            ("native crash (SIGSEGV -11/139, SIGBUS, SIGABRT -6/134)", "a crash report"),
        ],
        role=EITHER,
        examples=(
            "[WARN] Node with rank 3 exited with code -9",
            "[WARN] Node with rank 0 exited with code 137",
        ),
    ),
    signature(
        "MD859",
        "shell.remote-syntax-error",
        # bash's parse error of a -c command, in any locale: "bash: -c: line 0: syntax error
        # near unexpected token `('", "bash: -c: 行 0: 未预期的符号“(”附近有语法错误"
        r"\bbash: -c: \S+ \d+: (?P<msg>.+)",
        "The remote shell could not parse the command a launcher sent it (pdsh, ssh, "
        "mpirun's rsh agent: `bash -c '...'` on each host): a value the launcher put on the "
        "command line unquoted holds characters the shell reads as syntax, most often an "
        "exported environment variable whose value has parentheses, spaces or semicolons "
        "(Slurm's SLURM_JOB_CPUS_PER_NODE=64(x2)). No rank started on that host.",
        "Find the variable in the launcher's printed command (`cmd = pdsh ... export NAME=...`) "
        "whose value holds ( ) ; & | or spaces, and keep it out of what the launcher exports "
        "(DeepSpeed: its .deepspeed_env file or the exported prefixes; unset it before "
        "launching) or quote it; then run the printed command's ssh part by hand on one host.",
        "GNU Bash (its parse error of a -c command string); DeepSpeed launcher runner.py "
        "(pdsh exports); https://github.com/deepspeedai/DeepSpeed/issues/5878",
        causes=[
            (
                "an exported variable with shell characters in its value (Slurm's "
                "SLURM_JOB_CPUS_PER_NODE=64(x2), a path with spaces)",
                "the launcher's cmd line shows `export NAME=value(` unquoted",
            ),
        ],
        examples=(
            "server22: bash: -c: line 0: syntax error near unexpected token `('",
            "server22: bash: -c: 行 0: 未预期的符号“(”附近有语法错误",
        ),
    ),
    signature(
        "MD695",
        "shell.job-killed",
        r"^(?:zsh: (?P<sig>killed|abort|segmentation fault|bus error|terminated)\b"
        r"|\S+: line \d+: +\d+ (?P<sig2>Killed|Aborted|Segmentation fault|Bus error|Terminated)\b"
        r"|(?P<sig3>Killed: 9|Abort trap: 6|Killed|Terminated: 15|Terminated|"
        r"(?:Aborted|Segmentation fault|Bus error) \(core dumped\))$)",
        "The shell that ran the job says a signal ended it (zsh's `zsh: killed  CMD`, bash's "
        "`line N: PID Killed  CMD`, macOS's `Killed: 9`): the process printed nothing more "
        "because it could not.",
        "Read what the signal means below: for SIGKILL look for memory first (dmesg, a "
        "JetsamEvent report: `meshdoctor triage --crash-reports`), for SIGABRT/SIGSEGV the "
        "crash report and the line before it.",
        "zsh and bash job status messages (strsignal); POSIX wait status",
        causes=[
            ("memory ran out (OOM killer, jetsam): SIGKILL", "dmesg | grep -i oom; JetsamEvent"),
            ("an uncaught C++ exception: SIGABRT", "a libc++abi line before it"),
            ("a native crash: SIGSEGV, SIGBUS", "a crash report of the process"),
        ],
        role=EITHER,
        refine=lambda g: shell_signal(
            {"sig": g.get("sig") or g.get("sig2") or g.get("sig3") or ""}
        ),
        examples=(
            "zsh: killed     python train.py",
            "zsh: abort      python -m mlx_lm.generate --model m",
            "bash: line 1: 12345 Killed                  python3 train.py",
            "Killed: 9",
            "Aborted (core dumped)",
        ),
    ),
    signature(
        "MD659",
        "rank.exit-1",
        None,
        "A rank exited with status 1: an uncaught Python exception, or NCCL's exit(1) after "
        "'NCCL error'/'CUDA error'.",
        "Read the rank's log for the traceback or NCCL line.",
        "Python; MLX nccl backend",
        role=EITHER,
        causes=[
            ("an uncaught Python exception", "a traceback in the rank's log"),
            ("NCCL's or CUDA's exit(1)", "'NCCL error' or 'CUDA error' before it"),
        ],
        examples=("[WARN] Node with rank 1 exited with code 1",),
    ),
    signature(
        "MD660",
        "launch.exit-0-hides-failure",
        None,
        "mlx.launch exited 0 although a rank failed: its exit status cannot be trusted.",
        "Gate on the ranks' own status (grep '[WARN] Node with rank' or use meshdoctor "
        "triage), not on mlx.launch's exit code.",
        "mlx/_distributed_utils/launch.py",
        role=CONSEQUENCE,
        examples=("\x1b[33m[WARN] Node with rank 1 exited with code 255\x1b[0m",),
    ),
    signature(
        "MD664",
        "rank.exit-nonzero",
        None,
        "A rank exited with a non-zero status that has no specific meaning.",
        "Read the rank's log.",
        "POSIX exit status",
        role=EITHER,
        examples=("[WARN] Node with rank 1 exited with code 3",),
    ),
    signature(
        "MD665",
        "backend.split-unsupported",
        r"(Group split not supported|Cannot split the distributed group further)",
        "The program called group.split() on a backend without it (ring, jaccl, nccl in MLX "
        "0.32.x; only mpi splits), or on a single-process group.",
        "Do without split (one group of every rank), or run on mpi.",
        "MLX distributed.cpp, ring.cpp, jaccl.cpp (v0.32.1)",
        examples=(
            "RuntimeError: [ring] Group split not supported.",
            "RuntimeError: [jaccl] Group split not supported.",
            "RuntimeError: Cannot split the distributed group further.",
        ),
    ),
    signature(
        "MD666",
        "backend.empty-group",
        r"Communication not implemented in an empty distributed group",
        "A collective ran on the single-process fallback group: init found no backend (a "
        "non-strict init returns that group) and the program communicated anyway.",
        "Start the ranks with mlx.launch and init with strict=True to see why no backend "
        "started; `meshdoctor check` lists the backends this MLX has (MD102).",
        "MLX distributed.cpp (v0.32.1)",
        check="MD102",
        examples=("RuntimeError: Communication not implemented in an empty distributed group.",),
    ),
    signature(
        "MD667",
        "backend.invalid-name",
        # the names listed are the release's own: 'any', 'mpi' and 'ring' before 0.30.1
        r"The only valid values for backend are(?: (?P<valid>'any'[^\n]*?) but "
        r"'(?P<backend>[^']*)' was provided)?",
        "The program or MLX_DISTRIBUTED_BACKEND asked for a backend name this MLX does not "
        "know: a misspelt name (jaccl-ring is an mlx.launch name: init takes 'jaccl'), or a "
        "backend newer than the installed MLX (the names the message lists are its release's "
        "own: before MLX 0.30.1 only 'any', 'mpi' and 'ring', no 'jaccl' and no 'nccl').",
        "Pass one of the names the message lists; for jaccl or nccl install MLX 0.30.1 or "
        "later on every host (`python -c 'import mlx.core as mx; print(mx.__version__)'`; a "
        "program that asks for jaccl must require mlx>=0.30.1). The hostfile's jaccl-ring is "
        "launched as jaccl.",
        "MLX distributed.cpp (v0.32.1; v0.30.0 and before list 'any', 'mpi' and 'ring', "
        "jaccl and nccl came with v0.30.1)",
        refine=lambda g: (
            f"'{g['backend']}' is a backend of newer MLX releases: the installed MLX lists "
            f"only {g['valid']}; upgrade mlx to 0.30.1 or later on every host"
            if g.get("valid")
            and g.get("backend") in ("jaccl", "nccl")
            and f"'{g['backend']}'" not in g["valid"]
            else None
        ),
        examples=(
            "ValueError: [distributed] The only valid values for backend are 'any', 'mpi' "
            "and 'ring' but 'jaccl' was provided.",
            "ValueError: [distributed] The only valid values for backend are 'any', 'mpi', "
            "'nccl', 'jaccl' and 'ring' but 'jacl' was provided.",
        ),
    ),
    signature(
        "MD668",
        "mpi.single-process",
        r"\[mpi\] The world has a single process",
        "The mpi backend was asked for (strict) but the program was not started by mpirun, so "
        "the MPI world has one process.",
        "Launch with mpirun (or mlx.launch --backend mpi), or use another backend.",
        "MLX PR #4210",
        examples=(
            "RuntimeError: [mpi] The world has a single process. Launch with mpirun to "
            "initialize the mpi backend.",
        ),
    ),
    signature(
        "MD669",
        "mpi.not-open-mpi",
        r"\[mpi\] MPI found but it does not appear to be Open MPI\.?\s*(?:MLX requires Open MPI "
        r"but this is (?P<version>.+))?",
        "MLX loaded an MPI library that is not Open MPI (MPICH, Intel MPI, ...) and gave the mpi "
        "backend up: MLX's mpi backend works only with Open MPI. MLX prints this on stderr and "
        "goes on, so init then starts another backend or none.",
        "Install Open MPI (`brew install open-mpi`, `apt-get install libopenmpi-dev`) and point "
        "MLX at its library (first on the library path, or MLX_MPI_LIBNAME=/path/to/libmpi), or "
        "launch with the ring or jaccl backend instead (`mlx.launch --backend ring`).",
        "MLX mlx/distributed/mpi/mpi.cpp (v0.30.1-v0.32.1: the version check after dlopen, "
        "printed to std::cerr)",
        check="MD102",
        refine=lambda g: (
            f"the MPI library found is {g['version'].strip()}" if g.get("version") else None
        ),
        examples=(
            # mpi.cpp prints the two sentences with no space between them
            "[mpi] MPI found but it does not appear to be Open MPI.MLX requires Open MPI but "
            "this is MPICH Version:\t4.1.2",
        ),
    ),
    signature(
        "MD670",
        "launch.malformed-hostfile",
        r"(The hostfile is malformed: (?P<what>.+)|Malformed hostfile for jaccl backend|"
        r"Rank 0 should have an IP reachable from all other ranks)",
        "mlx.launch refused the hostfile: the RDMA matrix does not match the hosts (0.32.4: "
        "row count, a non-null device to itself, or a pair with no device; older: one message "
        'for all of these), or rank 0\'s entry has no IP (its "ips" list) that the other '
        "ranks can reach, which the jaccl and nccl launchers give the ranks as their "
        "coordinator's address.",
        "`meshdoctor check --only MD401 --hostfile FILE` names the entry; give rank 0 an "
        'address every other host reaches in its "ips", or regenerate the hostfile with '
        "`mlx.distributed_config`.",
        "mlx/_distributed_utils/launch.py (0.32.4)",
        check="MD401",
        examples=(
            "mlx.launch: error: The hostfile is malformed: number of RDMA devices does not "
            "match hosts",
            "mlx.launch: error: The hostfile is malformed: RDMA device of self should be null",
            "mlx.launch: error: The hostfile is malformed: no RDMA device is listed for m1 to m3",
            "mlx.launch: error: Rank 0 should have an IP reachable from all other ranks",
            "mlx.launch: error: Malformed hostfile for jaccl backend",
        ),
    ),
    # mlx.distributed_config's own [ERROR] lines (python/mlx/_distributed_utils/config.py,
    # mlx 0.32.4: log_error prints "[ERROR] ..." in red on stderr; colour codes are removed first)
    signature(
        "MD680",
        "config.incomplete-mesh",
        r"\[ERROR\] Incomplete mesh, (?P<a>\S+) is not connected to (?P<b>\S+)",
        "mlx.distributed_config found no Thunderbolt cable between the two hosts it names "
        "(system_profiler SPThunderboltDataType on each): a JACCL mesh needs every pair cabled.",
        "Cable the pair named (Thunderbolt 5 ports on both), check the link on each Mac "
        "(`meshdoctor check --only MD205`), or build a ring instead (`--backend jaccl-ring` or "
        "`ring`); `mlx.distributed_config --dot` draws what it sees.",
        "mlx/_distributed_utils/config.py check_valid_mesh (0.32.4)",
        check="MD205",
        causes=[
            ("a cable missing, loose or in a Thunderbolt 4 port", "MD205 on both hosts"),
            ("more hosts than a full mesh can cable (each Mac has few ports)", "the host count"),
        ],
        examples=("\x1b[31m[ERROR] Incomplete mesh, m1 is not connected to m3 \x1b[0m",),
    ),
    signature(
        "MD687",
        "config.no-ring",
        r"\[ERROR\] (?:Could not find a full ring\.|Rings found:)",
        "mlx.distributed_config could not find a Thunderbolt ring through every host: some "
        "host has fewer than two cabled neighbours in the cycle (it lists the rings it found).",
        "Cable the hosts into one cycle (each host to two others), check each link "
        "(`meshdoctor check --only MD205`); `mlx.distributed_config --dot` draws what it sees.",
        "mlx/_distributed_utils/config.py check_valid_ring (0.32.4)",
        check="MD205",
        examples=("[ERROR] Could not find a full ring.", "[ERROR] Rings found:"),
    ),
    signature(
        "MD688",
        "config.no-ssh",
        r"\[ERROR\] Could not ssh to the following hosts:",
        "mlx.distributed_config could not run `ssh -o BatchMode=yes -o ConnectTimeout=5 HOST` "
        "on the hosts listed after this line (no key, a prompt, the host down): it needs "
        "password-less ssh to each, as mlx.launch does.",
        "Make `ssh -o BatchMode=yes HOST true` work for every host listed (a key in "
        "authorized_keys, the name in your ssh config); `meshdoctor check --hostfile FILE` "
        "names each host it cannot reach (MD402).",
        "mlx/_distributed_utils/config.py check_ssh_connections (0.32.4)",
        examples=("[ERROR] Could not ssh to the following hosts:",),
    ),
    signature(
        "MD689",
        "config.no-rdma",
        r"\[(?:ERROR|WARN)\] (?P<host>\S+) does not seem to have RDMA enabled",
        "mlx.distributed_config (or mlx.launch for jaccl and jaccl-ring) found no rdma_* "
        "device in `ibv_devices` on that host: most often its Thunderbolt hardware cannot do "
        "RDMA at all (Thunderbolt 4 or older, 40 Gb/s: RDMA over Thunderbolt needs Thunderbolt "
        "5, and `rdma_ctl status` says enabled all the same), else RDMA is not enabled there "
        "(macOS: from Recovery) or its Thunderbolt 5 cables are not up.",
        "If `rdma_ctl status` says enabled while `ibv_devices` lists no rdma_* device, or the "
        "link runs at 40 Gb/s or less (system_profiler SPThunderboltDataType), the hardware is "
        "Thunderbolt 4 or older: RDMA cannot work there and enabling it again will not help: "
        "launch with the ring backend over the Thunderbolt link (`mlx.launch --backend ring`, "
        "`mlx.distributed_config --backend ring`), not jaccl or jaccl-ring. Only if `rdma_ctl "
        "status` says disabled on a Thunderbolt 5 Mac: `rdma_ctl enable` from Recovery, then "
        "reboot, and check `meshdoctor check --only MD201` there.",
        "mlx/_distributed_utils/config.py check_rdma (0.32.4); MLX distributed docs (RDMA); "
        "https://github.com/ml-explore/mlx/issues/3777; https://github.com/exo-explore/exo/pull/1813; "
        "https://github.com/jundot/omlx/issues/3037",
        refine=lambda g: (
            f"{g['host']} has no RDMA device; on a 40 Gb/s (Thunderbolt 4) link that is the "
            "hardware, not a setting"
            if g.get("host")
            else None
        ),
        check="MD201",
        causes=[
            (
                "Thunderbolt 4 (or older) hardware, at most 40 Gb/s: RDMA over Thunderbolt needs "
                "Thunderbolt 5; use the ring backend",
                "the link runs at 40 Gb/s or less (system_profiler SPThunderboltDataType); "
                "`ibv_devices` stays empty although `rdma_ctl status` says enabled",
            ),
            (
                "RDMA not enabled on that Mac",
                "`rdma_ctl status` says disabled: `rdma_ctl enable` from Recovery, then reboot",
            ),
            ("its Thunderbolt 5 cables are not up", "`meshdoctor check --only MD205`"),
        ],
        examples=(
            "[ERROR] m2 does not seem to have RDMA enabled",
            "[WARN] m2 does not seem to have RDMA enabled",
        ),
    ),
    signature(
        "MD870",
        "python.module-missing",
        r"(?:(?P<python>\S{0,200}python[\w.]*): Error while finding module specification for "
        r"'(?P<target>[^']+)' \((?:ModuleNotFoundError|ImportError): No module named "
        r"'(?P<missing>[^']+)'\)|(?P<py>\S{0,200}python[\w.]*): No module named (?P<bare>[\w.]+)$|"
        r"^ModuleNotFoundError: No module named '(?P<module>[^']+)')",
        "A rank's Python could not import a module the job needs: the interpreter that "
        "started it has no such package. On a remote rank this is most often the wrong "
        "interpreter: mlx.launch runs the command as written on each host (`python3` over a "
        "non-interactive ssh finds the system /usr/bin/python3, not the virtual environment "
        "the job's packages are in), unless --python names one.",
        "Start every rank with the interpreter of the environment that holds the package, at "
        "a path that exists on every host: `mlx.launch --python /path/to/venv/bin/python ...` "
        "(mlx.launch's --python prefixes the command with it on each host), or the venv's "
        "python by its absolute path in the command; or install the package into the "
        "interpreter that ran (`ssh HOST PYTHON -m pip install PACKAGE`). Check what a host "
        "runs: `ssh HOST 'command -v python3; python3 -c \"import PACKAGE\"'`.",
        "Python's runpy (python -m: 'Error while finding module specification'); MLX 0.32 "
        "python/mlx/_distributed_utils/launch.py (--python: 'Launch the command with this "
        "python interpreter on the remote hosts'); https://github.com/jundot/omlx/issues/2735",
        causes=[
            (
                "the rank ran the system Python (/usr/bin/python3) instead of the job's "
                "virtual environment: a bare `python3` in the command, found on ssh's PATH",
                "the path printed before the error is /usr/bin/python3 or another "
                "interpreter than the job's",
            ),
            (
                "the environment exists on this host only: the venv or conda path differs "
                "on the other host (another user name, another home)",
                "`ssh HOST ls PATH/bin/python` fails",
            ),
            (
                "the package is not installed on that host at all",
                "`ssh HOST PYTHON -c 'import PACKAGE'` fails with the right interpreter",
            ),
        ],
        refine=lambda g: (
            f"{g.get('python') or g.get('py') or 'this Python'} has no module "
            f"'{g.get('missing') or g.get('bare') or g.get('module')}'"
            + (
                " (the system interpreter, not a virtual environment: name the job's "
                "interpreter with mlx.launch --python)"
                if (g.get("python") or g.get("py") or "").startswith(("/usr/bin/", "/bin/"))
                else ""
            )
            + _module_detail(g.get("missing") or g.get("bare") or g.get("module") or "")
        ),
        examples=(
            "/usr/bin/python3: Error while finding module specification for "
            "'omlx.cluster.inference_worker' (ModuleNotFoundError: No module named 'omlx')",
            "/usr/bin/python3: No module named mlx_lm",
            "ModuleNotFoundError: No module named 'mlx'",
        ),
    ),
    signature(
        "MD699",
        "mpi.job-aborted",
        r"(?:Unable to connect to the peer (?P<peer>\S+) on port (?P<port>\d+): (?P<why>.+)|"
        r"\*\*\* (?P<fatal>MPI_ERRORS_ARE_FATAL)|"
        r"(?:prterun|mpirun) has exited due to process rank (?P<rank>\d+) with PID \d+ on node "
        r"(?P<node>\S+) calling)",
        "Open MPI aborted the job (the mpi backend): a rank's MPI call failed and "
        "MPI_ERRORS_ARE_FATAL ended every process, or one called MPI_Abort.",
        "Read the first Open MPI error before the abort. Unable to connect to the peer: let the "
        "ranks reach each other on Open MPI's TCP ports (not only ssh): name the interface "
        "(`mpirun --mca btl_tcp_if_include IFACE`, the one whose addresses reach every host), "
        "check the peer's address is routed from this host (`ping IP`, `route get IP`) and, "
        "when ping answers, that no firewall drops the ports (`nc -vz IP PORT` on the port "
        "the error names).",
        "Open MPI (btl_tcp_endpoint.c, MPI_ERRORS_ARE_FATAL, prterun); "
        "https://github.com/ml-explore/mlx/issues/2540",
        causes=[
            (
                "the MPI data port unreachable although ssh works: Open MPI picked an address "
                "or interface the peer cannot route to, or a firewall drops its ports",
                "btl_tcp_endpoint ... Unable to connect to the peer IP on port P: No route to host",
            ),
            ("a rank's own error before the abort", "an MLX error or traceback before it"),
        ],
        role=EITHER,
        # MPI_ERRORS_ARE_FATAL and "exited due to process rank N ... calling" are Open MPI's
        # teardown after a failure (the banner says "processes in this communicator will now
        # abort"): in mixed mpirun output of two hosts a rank's own error (a Metal GPU timeout,
        # an MLX exception) may be printed after it, and is still its cause
        role_of=lambda g: CONSEQUENCE if g.get("fatal") or g.get("rank") else None,
        role_note="The MPI_ERRORS_ARE_FATAL banner and mpirun's 'exited due to process rank N "
        "... calling' are Open MPI's teardown: consequences of the error a rank printed, "
        "beside them in any order; 'Unable to connect to the peer' is a cause when alone.",
        refine=lambda g: (
            f"Open MPI's TCP transport could not reach {g['peer']} port {g['port']} "
            f"({g.get('why', '').strip()}): its data ports are not reachable although ssh "
            "(which only starts the ranks) works"
            if g.get("peer")
            else "MPI_ERRORS_ARE_FATAL: an MPI call failed and Open MPI ends every process; a "
            "rank's own error beside it (before or after it in mixed output) is the cause"
            if g.get("fatal")
            else f"rank {g['rank']} on {g['node']} called abort: the error it printed first is "
            "the cause"
            if g.get("rank")
            else None
        ),
        examples=(
            "[balthasar][[59259,1],0][btl_tcp_endpoint.c:857:mca_btl_tcp_endpoint_start_connect] "
            "peer: melchior Unable to connect to the peer 192.168.68.53 on port 1024: No route "
            "to host",
            "[balthasar:00000] *** MPI_ERRORS_ARE_FATAL (processes in this communicator will "
            "now abort,",
            "prterun has exited due to process rank 0 with PID 0 on node balthasar calling",
        ),
    ),
    signature(
        "MD600",
        "launch.message",
        # mlx.launch's own [WARN]/[ERROR]: log_warning and log_error print the tag first on
        # the line (its colour is stripped before matching); not another program's tag
        # ("[TensorRT-LLM][ERROR]"), a logger's level behind its timestamp ("2024-05-01
        # 10:00:00 [ERROR] ..."), nor one before its file ("[ERROR] [launch.py:321:f]", as
        # DeepSpeed's launcher logs)
        r"(?:^\s*\[WARN\] (?!\[[\w.]+:\d+:)|^\s*\[ERROR\] (?!\[[\w.]+:\d+:)|"
        r"\bmlx\.(?:launch|distributed_config): error: )"
        r"(?P<msg>.*)|"
        r"(?P<notice>\[jaccl\] Connection attempt \d+ waiting \d+ ms)",
        "mlx.launch or mlx.distributed_config printed a warning, an error or a usage error "
        "(its [WARN]/[ERROR] lines, argparse's 'error:' line), or a JACCL rank a retry notice; "
        "the failure class it names says what it means here.",
        "Read the message with the lines around it; the class named says what to do.",
        "MLX 0.32.4 wheel mlx/_distributed_utils/launch.py, config.py, common.py (log_warning, "
        "log_error, parser.error)",
        role=EITHER,
        envelope=True,
        classes=LAUNCH,
        examples=(
            "[WARN] 'FOO' is an invalid environment variable so it is ignored",
            "mlx.launch: error: No script is provided",
            "[ERROR] Neither thunderbolt mesh nor ring found.",
            "[jaccl] Connection attempt 2 waiting 1000 ms",
        ),
    ),
    # -- Open MPI's banners after a rank exited non-zero (consequences) --------------------
    signature(
        "MD831",
        "mpi.rank-exited",
        r"Primary job\s+terminated normally, but (?P<n>\d+) process(?:es)? returned|"
        r"An MPI communication peer process has unexpectedly disconnected",
        "Open MPI's launcher (mpirun, prterun) reports that a process of the job exited with "
        "a non-zero status and it aborted the others ('Primary job terminated normally, but "
        "N process returned a non-zero exit code'), or a process lost its MPI peer ('An MPI "
        "communication peer process has unexpectedly disconnected'): the echo of that "
        "process's own failure, which it printed before (nccl-tests' 'Test CUDA failure', an "
        "NCCL error, a traceback).",
        "Find the error the failed process printed first (its stderr, above the banner) and "
        "fix that one; the banner itself says nothing about the cause.",
        "Open MPI mpirun(1) / PRRTE help texts (help-prterun.txt 'Primary job terminated "
        "normally'; ompi/mca/pml help 'unexpectedly disconnected'); NVIDIA/nccl-tests #338",
        role=CONSEQUENCE,
        examples=(
            "Primary job  terminated normally, but 1 process returned",
            "An MPI communication peer process has unexpectedly disconnected.  This",
        ),
    ),
    # -- other launchers' and engines' own refusals ----------------------------------------
    signature(
        "MD881",
        "deepspeed.no-slot",
        r"rror: No slot '(?P<slot>[^']+)' specified on host '(?P<host>[^']+)'",
        "DeepSpeed's launcher filtered its resource pool by --include/--exclude (or by "
        "CUDA_VISIBLE_DEVICES, which it turns into --include localhost:...) and the pool has "
        "no such GPU slot. DeepSpeed before 0.15.2 numbers a host's slots 0..N-1 from the "
        "count of visible GPUs, so a CUDA_VISIBLE_DEVICES that is not 0..N-1 (0,2) names a "
        "slot it never made; else the hostfile gives that host fewer slots.",
        "Upgrade DeepSpeed to 0.15.2 or later (it keeps the GPUs' own indices); or unset "
        "CUDA_VISIBLE_DEVICES and pass the GPUs to the launcher (`deepspeed --include "
        "localhost:0,2 ...`); check the host's slots=N in the hostfile.",
        "DeepSpeed deepspeed/launcher/runner.py (parse_resource_filter: 'No slot ... specified "
        "on host'); https://github.com/deepspeedai/DeepSpeed/pull/6530 (DeepSpeed 0.15.2)",
        causes=[
            (
                "DeepSpeed before 0.15.2 with a CUDA_VISIBLE_DEVICES that skips GPUs",
                "CUDA_VISIBLE_DEVICES=0,2 (or the like) in the launcher's environment",
            ),
            ("a hostfile that gives the host fewer slots", "slots=N below the slot named"),
        ],
        examples=("ValueError: No slot '2' specified on host 'localhost'",),
    ),
    signature(
        "MD882",
        "vllm.platform-without-ray",
        r"rror: current platform (?P<platform>\w+) does not support ray",
        "vLLM's Ray executor (--distributed-executor-backend ray) places its workers by the "
        "platform's Ray device resource, and the platform vLLM detected has none. 'cpu' on a "
        "machine with an accelerator means vLLM did not take the accelerator's platform: on a "
        "Mac, a vLLM-Metal release without Ray support (its platform declares no Ray device "
        "key); on a GPU host, a CPU-only torch or vLLM build, or the platform plugin not "
        "installed.",
        "On one host use --distributed-executor-backend mp; for Ray on Macs take a vLLM-Metal "
        "release whose platform registers a Ray resource and start each node with it (`ray "
        "start --resources='{\"mlx\": 1}'`); on a GPU host check `python -c 'import torch; "
        "print(torch.cuda.is_available())'` and the vLLM build.",
        "vLLM vllm/platforms/interface.py (ray_device_key) and its Ray executor; "
        "https://github.com/vllm-project/vllm-metal/pull/417",
        causes=[
            (
                "a platform plugin without a Ray device key (vLLM-Metal before its Ray support)",
                "a Mac; 'current platform cpu'",
            ),
            ("vLLM or torch built without the GPU", "torch.cuda.is_available() is False"),
        ],
        examples=("ValueError: current platform cpu does not support ray.",),
    ),
    signature(
        "MD899",
        "container.sshd-missing",
        r": line \d+: (?P<path>\S*/sshd): No such file or directory",
        "The worker's container has no SSH server: the command that should start sshd found "
        "no binary. A launcher that reaches workers over ssh (mpirun in an MPIJob, "
        "DeepSpeed's pdsh, mlx.launch) then cannot start a rank there, and the job fails "
        "without one rank's output.",
        "Use a worker image with an SSH server (openssh-server installed, /usr/sbin/sshd "
        "present, host keys generated), or the launcher's way without ssh for that runtime; "
        "check with `ls /usr/sbin/sshd` in the image.",
        "OpenSSH sshd(8); Kubeflow MPI Operator (workers run sshd for mpirun)",
        causes=[
            ("an image without openssh-server", "`ls /usr/sbin/sshd` fails in the image"),
        ],
        examples=("/bin/bash: line 1: /usr/sbin/sshd: No such file or directory",),
    ),
    signature(
        "MD889",
        "exo.no-peers",
        r"Current number of known peers: 0\b|No new peers discovered in the last grace period",
        "exo's peer discovery found no other node: this node will run the model alone. exo "
        "discovers by UDP broadcast on the local network; cloud virtual networks (VPCs) do "
        "not forward broadcast, hosts on different subnets or VLANs do not hear each other, "
        "and a firewall can drop the discovery port.",
        "On a cloud network or across subnets, use exo's manual discovery (a config file "
        "listing the peers) or an overlay such as Tailscale; on one LAN, check that the nodes "
        "share a subnet and that the discovery port is open both ways.",
        "exo (UDP broadcast discovery; manual discovery module)",
        causes=[
            ("a cloud VPC that does not forward UDP broadcast", "nodes on a cloud network"),
            ("nodes on different subnets or a firewall on the port", "`ip -br addr` differs"),
        ],
        role=EITHER,
        examples=("Current number of known peers: 0. Waiting 5 seconds to discover more...",),
    ),
    signature(
        "MD818",
        "exo.placement",
        "(?P<msg>" + "|".join(f"(?:{c.regex.pattern})" for c in PLACEMENT) + ")",
        "exo's master could not place the model: no set of nodes (a cycle, the nodes of one "
        "instance in ring order) meets what the request needs, so no instance starts. exo "
        "answers it as an HTTP 400 error and shows it in the placement previews; the nodes "
        "themselves are fine.",
        "Do what the reading of the message says (after 'Here:'), then place the model "
        "again; `curl -s http://NODE:52415/state` shows the nodes, links and memory exo "
        "placed from.",
        "exo-explore/exo src/exo/master/placement.py (place_instance: its ValueError texts)",
        classes=PLACEMENT,
        class_remedy=True,
        examples=(
            '{"detail":"Requested RDMA (MlxJaccl) but no RDMA-connected cycles available"}',
            "ValueError: No cycles found with sufficient memory",
            "No tensor sharding found for model with hidden_size=7168, num_key_value_heads=8 "
            "across candidate cycles",
        ),
    ),
    signature(
        "MD821",
        "exo.runner-terminated",
        r"Runner terminated with (?:signal=(?P<sig>\d+)(?: \((?P<desc>[^)]*)\))?|"
        r"exitcode=(?P<code>-?\d+))",
        "exo's runner (the child process of a node that loads the model and runs MLX) ended "
        "with a failure, and the node's instance with it. The runner's own error, when it "
        "printed one, is in the lines exo relays before this one ('Runner stderr: ...') and "
        "is the cause; the signal or status says how it ended.",
        "Read the runner's own stderr lines above (the MLX or Python error); then what the "
        "signal says (after 'Here:'); restart the instance once the cause is dealt with.",
        "exo-explore/exo src/exo/worker/runner/supervisor.py ('Runner terminated with "
        "signal=N (...)' / 'exitcode=N'), commit b5375f8; POSIX signals",
        role=EITHER,
        role_of=lambda g: CONSEQUENCE if g.get("sig") == "15" else None,
        role_note="A runner ended by SIGTERM was stopped by exo itself: a consequence.",
        refine=lambda g: (
            _RUNNER_END.get(g.get("sig") or "", None)
            or (
                f"status {g['code']}: the runner's Python raised an exception it did not catch (its "
                "traceback is in the runner's stderr lines above)"
                if g.get("code") not in (None, "0")
                else None
            )
        ),
        examples=(
            "[ 12:01:44.120 | ERROR | exo.worker.runner.supervisor:_watch:399 ] Runner "
            "terminated with signal=9 (Killed: 9)",
            "Runner terminated with exitcode=1",
        ),
    ),
    signature(
        "MD812",
        "exo.download-hash",
        r"(?:Exception|Error): Downloaded file (?P<path>\S+) has(?: hash (?P<have>[0-9a-f]+) "
        r"but remote hash is (?P<want>\S+))?",
        "exo's model downloader finished a file whose hash is not the one the server "
        "announced (its ETag), and retries the download until it gives up: the model never "
        "loads. When the two hashes printed are the same but for a suffix ('-gzip'), the file "
        "is right and the check is wrong: a server that compressed its answer sends the ETag "
        "with that suffix, which exo releases before its fix compared as it was (exo PR "
        "#737); when they differ, the file is corrupt or partial.",
        "Compare the two hashes in the message (the line after it): equal but for '-gzip' -> "
        "upgrade exo (the fix strips the suffix); different -> delete the file it names and "
        "its folder's partial downloads, check disk space and any proxy between the node and "
        "the model hub, and download again.",
        "exo download/new_shard_download.py ('Downloaded file ... has hash ... but remote "
        "hash is ...'); https://github.com/exo-explore/exo/pull/737",
        causes=[
            (
                "a gzip-compressed answer whose ETag carries '-gzip', compared as it was "
                "(exo before PR #737)",
                "the remote hash is the file's hash followed by '-gzip'",
            ),
            ("a corrupt or partial download", "the two hashes differ"),
        ],
        refine=lambda g: (
            "the remote hash is the file's own hash with a suffix: the file is right, the "
            "check is exo's bug (upgrade exo)"
            if g.get("have") and g.get("want", "").startswith(g["have"]) and g["want"] != g["have"]
            else None
        ),
        examples=(
            "Exception: Downloaded file /tmp/exo/org--model/model.safetensors.index.json has",
        ),
    ),
    signature(
        "MD809",
        "ssh.auth-refused",
        r"Permission denied \((?P<methods>[\w,-]*publickey[\w,-]*)\)",
        "ssh reached the host but it refused every key offered (publickey authentication "
        "failed): the key ssh used is not in the remote user's authorized_keys, or a tool "
        "that manages its own key pair (a cluster app's dedicated key) has keys that no "
        "longer match. A launcher that runs ranks over ssh cannot start them; a tool may "
        "report it in other words (a missing interpreter, a probe failed).",
        "Run the same ssh by hand from the launching host (`ssh -v USER@HOST true`) and read "
        "which key it offers; put that public key in the remote authorized_keys "
        "(`ssh-copy-id`), and for an app that keeps its own cluster key, exchange that key "
        "again in both directions (and upgrade the app if its key handling was fixed).",
        "OpenSSH ssh(1), sshd(8) (publickey authentication, authorized_keys)",
        causes=[
            (
                "the launching host's key not in the remote authorized_keys",
                "`ssh -v` shows the key offered and refused",
            ),
            ("an app's own cluster key pair mismatched or rotated", "the user's own ssh works"),
        ],
        examples=(
            "user@worker.local: Permission denied (publickey,password,keyboard-interactive).",
        ),
    ),
    signature(
        "MD810",
        "ssh.no-pty",
        r"PTY allocation request failed on channel \d+",
        "The remote sshd refused the terminal ssh asked for. mlx.launch runs remote ranks "
        "with `ssh -tt` (a PTY, so that a rank dies with the launcher); a key whose "
        "authorized_keys line holds `restrict` (which implies no-pty) or `no-pty` gets none, "
        "and the remote rank exits with 255 before it starts.",
        "Allow a PTY on that key: `restrict,pty` (or drop no-pty) on its line of the remote "
        "authorized_keys, or check sshd's PermitTTY; `ssh -tt HOST true` must then succeed.",
        "OpenSSH sshd(8) AUTHORIZED_KEYS FILE FORMAT (restrict, no-pty, pty); MLX "
        "python/mlx/_distributed_utils/launch.py (ssh -tt for remote ranks)",
        causes=[
            ("an authorized_keys entry with restrict or no-pty", "the key's line on the worker"),
            ("sshd with PermitTTY no", "`sshd -T | grep permittty`"),
        ],
        examples=("PTY allocation request failed on channel 0",),
    ),
    signature(
        "MD811",
        "sshd.key-permissions",
        r"Unable to load host key:? \"?(?P<key>[^\":]+)\"?: bad permissions",
        "sshd ignored a key file whose mode lets others read it (OpenSSH refuses a private "
        "key more open than 0600); with no other host key it exits, so the node runs no "
        "sshd and a launcher that reaches it over ssh (mpirun in an MPIJob) cannot. A key "
        "mounted from a Kubernetes Secret gets mode 0644 unless the volume sets one.",
        "Give the key mode 0600 (in a pod: defaultMode: 0600, or items[].mode, on the Secret "
        "volume; or copy it and chmod in the entrypoint), owned by the user sshd runs as; "
        "then `sshd -t` must pass.",
        "OpenSSH sshd(8) (host keys, 'bad permissions'); Kubernetes Secret volumes (defaultMode)",
        causes=[
            (
                "a key mounted from a Secret with the default mode 0644",
                "'Permissions 0644 for ... are too open'",
            ),
        ],
        examples=('Unable to load host key "/root/.ssh/id_rsa": bad permissions',),
    ),
)
