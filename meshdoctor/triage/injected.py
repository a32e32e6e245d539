"""An NCCL topology or graph file injected into a job whose NCCL init failed: NCCL_DEBUG=INFO
prints ``Loading topology file PATH`` (NCCL_TOPO_FILE) and ``NCCL_GRAPH_FILE set by environment
to PATH`` (src/graph/search.cc) when it takes the system's topology or its rings from an XML
file instead of detecting them. NCCL reads both from the environment and from its
configuration files (NCCL_CONF_FILE, ``~/.nccl.conf``, ``/etc/nccl.conf``: src/misc/param.cc),
so the job's environment may not show them. A file made for other GPUs (a graph for 4 GPUs on
a run of 2 or 3) makes init fail with an error that names no file: ``XML Import Channel : dev
N not found`` behind NCCL WARN when NCCL_DEBUG is on, else only ``unhandled system error``
(NVIDIA/nccl #1008: NCCL_GRAPH_FILE set in /etc/nccl.conf; -g 4 worked, -g 2 and -g 3 failed).
Triage names it with MD834, a finding it makes itself across the inputs.

The rule (:func:`readings`): the logs read (their first and last bytes) hold such a line, some
finding is an NCCL failure (a signature of the ``nccl.`` family), and no finding is a
``cause`` (a specific cause, e.g. MD833's 'dev N not found' or a CUDA error, already explains
the failure). The finding sits on the first graph-file line, else the first topology-file line;
its role is ``cause``: the NCCL errors that follow are its consequences.
"""

from __future__ import annotations

import re
from typing import Dict, List, Sequence, Tuple

from meshdoctor import signatures
from meshdoctor.signatures.model import signature
from meshdoctor.triage import reading
from meshdoctor.triage.alone import _lines as input_lines  # head and tail lines, each once
from meshdoctor.triage.findings import Finding, Input
from meshdoctor.triage.reading import entry, with_why

CODE = "MD834"

INJECTED_SIG = signature(
    CODE,
    "triage.nccl-injected-topology",
    None,
    "NCCL's init failed in a job where NCCL took the topology or its rings from an XML file "
    "(NCCL_TOPO_FILE: 'Loading topology file'; NCCL_GRAPH_FILE: 'NCCL_GRAPH_FILE set by "
    "environment to') instead of detecting them. A file made for other GPUs than those in "
    "use (a graph for 4 GPUs on a run of 2 or 3) makes NCCL miss a device it was told to use "
    "('XML Import Channel : dev N not found') and fail with 'unhandled system error'. NCCL "
    "reads these settings from NCCL_CONF_FILE, ~/.nccl.conf and /etc/nccl.conf too, so the "
    "job's environment may not show them.",
    "Find where NCCL_GRAPH_FILE and NCCL_TOPO_FILE are set: `env | grep NCCL_`, "
    "NCCL_CONF_FILE, `cat ~/.nccl.conf /etc/nccl.conf`; remove NCCL_GRAPH_FILE (or give one "
    "made for these GPUs) and keep NCCL_TOPO_FILE only where it describes the real machine "
    "(the VM images that ship one); rerun with NCCL_DEBUG=INFO to see whether 'dev N not "
    "found' is gone.",
    "NCCL v2.30.7 src/graph/search.cc (NCCL_GRAPH_FILE), src/graph/topo.cc (NCCL_TOPO_FILE, "
    "'Loading topology file'), src/graph/xml.cc ('XML Import Channel : dev %d not found'), "
    "src/misc/param.cc (NCCL_CONF_FILE, ~/.nccl.conf, /etc/nccl.conf); NVIDIA/nccl #1008",
    examples=(),
    causes=[
        (
            "NCCL_GRAPH_FILE set in /etc/nccl.conf or ~/.nccl.conf for another GPU count",
            "only some GPU counts fail (-g 4 works, -g 2 fails); the file's <graph> lists "
            "more GPUs than the job uses",
        ),
        (
            "an NCCL_TOPO_FILE of another machine type",
            "the topology file's GPUs or NICs differ from `nvidia-smi topo -m`",
        ),
    ],
)

INJECTED_SIG = with_why(
    INJECTED_SIG,
    "NCCL's own error names no file (a system error at init): what follows it is a "
    "consequence of the file it was given.",
)

ENTRY = entry(INJECTED_SIG, "triage NCCL topology or graph file injected")

_GRAPH = re.compile(r"\bNCCL_GRAPH_FILE set by environment to (?P<path>\S+)")
_TOPO = re.compile(
    r"\b(?:Loading topology file|NCCL_TOPO_FILE set by environment to) (?P<path>\S+)"
)
# nccl-tests' header ("# nThread 1 nGpus 2 minBytes 8 ...") and its command line ("-g 2")
_NGPUS = re.compile(r"\bnGpus (?P<n>\d+)\b|_perf\b.*?\s-g\s*(?P<g>\d+)\b")
_LOGS = ("log", "stdin")


def readings(inputs: Sequence[Input], findings: Sequence[Finding]) -> List[Finding]:
    """The MD834 finding (the rule in the module's docstring) for what triage read, or none:
    ``inputs`` in the order read (their index gives the finding's ``seq``); ``findings`` the
    others (an NCCL failure among them, and no ``cause``)."""
    if not any(f.match.name.startswith("nccl.") for f in findings):
        return []
    if any(f.role == signatures.CAUSE for f in findings):
        return []
    # kind ("graph", "topology") -> path -> (input index, line, text) of its first line
    seen: Dict[str, Dict[str, Tuple[int, int, str]]] = {"graph": {}, "topology": {}}
    ngpus = set()
    for i, inp in enumerate(inputs):
        if inp.kind not in _LOGS or inp.error:
            continue
        for lineno, text in input_lines(inp):
            g = _NGPUS.search(text)
            if g:
                ngpus.add(int(g.group("n") or g.group("g")))
            for kind, rx in (("graph", _GRAPH), ("topology", _TOPO)):
                m = rx.search(text)
                if m:
                    seen[kind].setdefault(m.group("path"), (i, lineno, text.strip()))
    kind = "graph" if seen["graph"] else "topology"
    if not seen[kind]:
        return []
    i, lineno, text = min(seen[kind].values())
    inp = inputs[i]
    files = "; ".join(
        f"{k} file {', '.join(sorted(seen[k]))}" for k in ("graph", "topology") if seen[k]
    )
    here = (
        f"NCCL loaded the {files}"
        + (
            "; a graph file describes rings for one set of GPUs"
            if seen["graph"]
            else "; no NCCL_GRAPH_FILE line was printed (NCCL prints it with NCCL_DEBUG=INFO "
            "and NCCL_DEBUG_SUBSYS including ENV or GRAPH): look for it in the configuration "
            "files too"
        )
        + (
            f"; this run uses {', '.join(map(str, sorted(ngpus)))} GPU(s) per process "
            "(nccl-tests' -g): a file made for another GPU count fails"
            if ngpus
            else ""
        )
        + "."
    )
    m = reading.match(
        INJECTED_SIG,
        here,
        line=signatures.printable(text),
        lineno=lineno,
        groups={"files": files},
    )
    return [reading.at_input(m, i, inp)]
