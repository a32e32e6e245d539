"""An NCCL setting NCCL never reads, its name misspelt, in a job that failed in NCCL.

NCCL reads its settings by exact name, from the environment and its configuration files
(NCCL v2.30.7 src/misc/param.cc, src/include/param.h ``NCCL_PARAM``); a name it does not
know is ignored without a word. ``NCCL_SOCKET_IFNAMES=eth0``, ``NCCL_IB_HCAS=mlx5_0`` or
``NCCL_P2P_DISABLED=1`` therefore change nothing: the job runs with the default the user meant
to override, and fails as if the setting had never been given. The names NCCL reads are the
table ``sites/nccl_params.tsv`` (``tools/extract_nccl_params.py``, from NCCL's sources of
v2.18 to v2.30.7). Triage names it with MD877, a finding it makes itself.

The rule (:func:`readings`): some finding is an NCCL failure (a signature of the ``nccl.``
family, or one of triage's NCCL readings), and a log read (its first and last bytes) sets a
name ``NCCL_X`` (``NCCL_X=value`` on a command line, in an environment dump, ``export``,
``-x``/``-e``/``--env``, a Python or JSON dict, ``os.environ["NCCL_X"]``) that no release of the
table has, that is not another program's (PyTorch's legacy ``NCCL_BLOCKING_WAIT`` and the like,
the SHARP plugin's ``NCCL_SHARP_*``/``NCCL_IBEXT_*``, nccl-tests' ``NCCL_TESTS_*``) and that is
close to a name NCCL reads (``difflib`` ratio at least :data:`CLOSE`); a ``..._DISABLE`` whose
NCCL name is ``..._ENABLE`` is read as that one too. The finding names the first such line and comes
just before the NCCL failures, which become its consequences (they ran without the setting).
"""

from __future__ import annotations

import difflib
import functools
import re
from importlib import resources
from typing import Dict, FrozenSet, List, Optional, Sequence, Tuple

from meshdoctor import signatures
from meshdoctor.signatures.model import signature
from meshdoctor.triage import reading
from meshdoctor.triage.alone import _lines as input_lines  # head and tail lines, each once
from meshdoctor.triage.findings import Finding, Input
from meshdoctor.triage.reading import entry, with_why

CODE = "MD877"

MISSPELT_SIG = signature(
    CODE,
    "triage.nccl-setting-misspelt",
    None,
    "The job sets an NCCL setting under a name NCCL does not read: NCCL looks its settings "
    "up by exact name (environment, NCCL_CONF_FILE, ~/.nccl.conf, /etc/nccl.conf) and "
    "ignores any other NCCL_ name without a word, so the job ran with the default this "
    "setting was meant to change, and its NCCL failure is what that default does here.",
    "Rename the setting to the name NCCL reads (named after 'Here:') wherever it is set "
    "(the launch line, mpirun -x, the batch script, the container's environment, "
    "/etc/nccl.conf), then rerun with NCCL_DEBUG=INFO: NCCL prints 'NAME set by environment "
    "to VALUE' for each setting it took, so the line must appear for this one.",
    "NCCL v2.30.7 src/include/param.h (NCCL_PARAM), src/misc/param.cc (ncclGetEnv, "
    "NCCL_CONF_FILE); NCCL environment variables documentation; the table of names "
    "sites/nccl_params.tsv (tools/extract_nccl_params.py, NCCL v2.18-v2.30.7)",
    examples=(),
    causes=[
        (
            "a misspelt name (a plural, a missing or extra underscore, DISABLED for DISABLE)",
            "no 'NAME set by environment to' line for it under NCCL_DEBUG=INFO",
        ),
        (
            "a switch named the other way round (NCCL_NVLS_DISABLE=1 where NCCL reads "
            "NCCL_NVLS_ENABLE=0)",
            "NCCL's documentation lists the _ENABLE name only",
        ),
    ],
)

MISSPELT_SIG = with_why(
    MISSPELT_SIG,
    "NCCL never says it ignored a setting: the failure reads like the problem the setting "
    "was meant to fix, while the fix never reached NCCL.",
)

ENTRY = entry(MISSPELT_SIG, "triage NCCL setting misspelt")

CLOSE = 0.85  # difflib's ratio from which a name reads as a misspelling of another

# another program's NCCL_ names: PyTorch's legacy ProcessGroupNCCL settings (torch/csrc/
# distributed/c10d/ProcessGroupNCCL.hpp, TORCH_NCCL_* with their NCCL_* aliases), the
# NCCL-RDMA-SHARP plugin's, nccl-tests'
_FOREIGN = re.compile(
    r"NCCL_(?:SHARP_|IBEXT_|TESTS_|BLOCKING_WAIT$|ASYNC_ERROR_HANDLING$|DESYNC_DEBUG$|"
    r"ENABLE_TIMING$|ENABLE_MONITORING$|HEARTBEAT_TIMEOUT_SEC$|TRACE_BUFFER_SIZE$|"
    r"DUMP_ON_TIMEOUT$|AVOID_RECORD_STREAMS$|USE_COMM_NONBLOCKING$)"
)

# NAME=value, NAME: value in a dict, os.environ["NAME"] =, NAME set by environment
_SET = re.compile(r"(?<![A-Za-z0-9_])(?P<name>NCCL_[A-Z0-9_]+)(?:['\"]?\s*\]?\s*=|['\"]\s*:)")


@functools.lru_cache(maxsize=1)
def known_names() -> FrozenSet[str]:
    """The NCCL settings of ``sites/nccl_params.tsv`` (every release of the table)."""
    text = (
        resources.files("meshdoctor.signatures")
        .joinpath("sites", "nccl_params.tsv")
        .read_text("utf-8")
    )
    return frozenset(
        line.split("\t", 1)[0] for line in text.splitlines() if line.startswith("NCCL_")
    )


def meant(name: str) -> Optional[str]:
    """The NCCL setting that ``name`` (an ``NCCL_*`` name) misspells, or None when ``name`` is
    one NCCL reads, another program's, or close to none."""
    known = known_names()
    if name in known or _FOREIGN.match(name):
        return None
    if name.endswith("_DISABLE") and name[: -len("_DISABLE")] + "_ENABLE" in known:
        return name[: -len("_DISABLE")] + "_ENABLE"
    close = difflib.get_close_matches(name, sorted(known), n=1, cutoff=CLOSE)
    return close[0] if close else None


_LOGS = ("log", "stdin")


def _is_nccl(f: Finding) -> bool:
    return f.match.name.startswith(("nccl.", "triage.nccl-"))


def readings(inputs: Sequence[Input], findings: Sequence[Finding]) -> List[Finding]:
    """The MD877 finding (the rule in the module's docstring) for what triage read, or none:
    ``inputs`` in the order read (their index gives the finding's ``seq``); ``findings`` the
    others (an NCCL failure among them)."""
    if not any(_is_nccl(f) for f in findings):
        return []
    # misspelt name -> (input index, line, text) of its first setting
    seen: Dict[str, Tuple[int, int, str]] = {}
    for i, inp in enumerate(inputs):
        if inp.kind not in _LOGS or inp.error:
            continue
        for lineno, text in input_lines(inp):
            for m in _SET.finditer(text):
                name = m.group("name")
                if name not in seen and meant(name):
                    seen[name] = (i, lineno, text.strip())
    if not seen:
        return []
    first = min(seen.values())
    i, lineno, text = first
    names = sorted(seen, key=lambda n: seen[n])
    here = "; ".join(f"{n} is not a setting NCCL reads: NCCL reads {meant(n)}" for n in names)
    m = reading.match(
        MISSPELT_SIG,
        here + ".",
        line=signatures.printable(text),
        lineno=lineno,
        groups={"names": ",".join(names), "meant": ",".join(str(meant(n)) for n in names)},
    )
    return [reading.explains(m, inputs[i], [f for f in findings if _is_nccl(f)])]
