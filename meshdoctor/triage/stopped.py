"""Where a log stops, read from its last lines, for the reading of a hang with no error
(:mod:`meshdoctor.triage.hung`): a job that hangs prints nothing more, so the last thing it
printed says where it waits.

Four shapes (:func:`where`), each a :class:`Stop` with the line it stopped at and what
helps there:

* **inside NCCL's communicator init**: the last line is an ``NCCL INFO`` line, an init began
  (``NCCL version``, ``Init START``; or the input is NCCL's lines alone, ending at a line that
  names an init stage or three lines or more) and no ``Init COMPLETE`` followed it; the stage
  named by that line (NVLS buffer setup, channel connection, bootstrap) says which part hangs. An
  nccl-tests table that stops short of its ``maxBytes`` with no ``# Avg bus bandwidth`` line
  stopped in that size's collective. (NCCL's own init trace: NCCL_DEBUG=INFO, NCCL
  documentation "Troubleshooting"; nccl-tests' output format, README.)
* **an announced step that never ended**: the last line announces a step (``calling
  sum_scatter``, ``Starting training...``) and nothing follows it.
* **an engine waiting for its workers**: the last line is the serving engine saying its
  workers do not answer (vLLM's shm_broadcast "No available shared memory broadcast block",
  its "RPC call to ... timed out"), with nothing after it.
* **a bare command**: the input holds only the job's command line (``mpirun ... -x
  NCCL_DEBUG=INFO ...``) and no line of output: it stopped before printing anything.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import List, Optional, Sequence, Tuple

from meshdoctor.triage.levels import is_error_line

_NCCL_INFO = re.compile(r"\bNCCL INFO (?P<text>.*)")
_PREFIX = re.compile(r"^\s*(?P<host>[\w.-]+):(?P<pid>\d+):\d+ \[\d+\] ")
_INIT_BEGIN = re.compile(r"\bNCCL version \d|\bInit START\b|\bncclCommInit")
_INIT_DONE = re.compile(r"\bInit COMPLETE\b|\bLaunch mode\b")
_EXCERPT_LINES = 3  # NCCL INFO lines without a banner that read as an init's own trace

# peer-to-peer between the GPUs of one host, when ACS or an IOMMU reroutes it (NCCL
# documentation, Troubleshooting: PCI Access Control Services)
_ONE_HOST = (
    "peer-to-peer over PCIe when ACS or an IOMMU reroutes it (`nvidia-smi topo -m`: GPUs "
    "through PHB/NODE/SYS; `sudo lspci -vvv | grep ACSCtl`): rerun with NCCL_P2P_DISABLE=1 "
    "to confirm, then disable ACS (or boot with iommu=pt)"
)
_CONNECT_HINT = (
    "one transport between the ranks hangs. On one host, "
    + _ONE_HOST
    + "; across hosts, the network: rerun with NCCL_IB_DISABLE=1 (sockets) to tell the RDMA "
    "path from the rest"
)

# (the last NCCL INFO line of an init that never completed, the stage it names, what helps)
_STAGES: Tuple[Tuple["re.Pattern[str]", str, str], ...] = (
    (
        re.compile(r"\bNVLS\b|\bMC handle\b|multicast|\bIMEX\b", re.I),
        "NVLink SHARP (NVLS) buffer setup",
        "NVLS needs the NVSwitch fabric's multicast (nvidia-fabricmanager running and "
        "healthy; IMEX across hosts of a multi-node NVLink domain): rerun with "
        "NCCL_NVLS_ENABLE=0 to init without NVLS, and check `nvidia-smi -q | grep -i fabric` "
        "and the fabric manager's log",
    ),
    (
        re.compile(
            r"\bChannel \d+/\d+|\bTrees?\b|\bRing \d+|via (?:P2P|SHM|NET|CollNet)|"
            r"\bConnected\b|\bP2P\b|\bconnect(?:ed|ing)?\b",
            re.I,
        ),
        "connecting each channel to its peers (the P2P, SHM and network transports)",
        _CONNECT_HINT,
    ),
    (
        re.compile(r".*"),
        "bootstrap and topology discovery (before any connection to a peer)",
        "not every rank reached the bootstrap: a rank that never started or is blocked "
        "before its init, a world size larger than the ranks started, or a bootstrap "
        "address the others cannot reach (NCCL_SOCKET_IFNAME picking an interface the peers "
        "do not share, a firewall between the hosts); compare every rank's log: the one "
        "missing, or stopped earliest, is where to look",
    ),
)

# nccl-tests: "# nThread 1 nGpus 2 minBytes 8 maxBytes 134217728 ...", its rows begin with
# the size in bytes and the element count, "# Avg bus bandwidth" ends a run
TESTS_HEAD = re.compile(r"^#\s*nThread \d+ .*\bmaxBytes (\d+)")
TESTS_ROW = re.compile(r"^\s+(\d+)\s+\d+\s+(?:float|double|half|bfloat16|int8|uint8|int32)")
TESTS_DONE = re.compile(r"^#\s*Avg bus bandwidth")

# a line that announces a step and waits for it: "calling sum_scatter", "Starting training..."
_ANNOUNCE = re.compile(
    r"\b(?:calling|call|starting|start|running|entering|begin(?:ning)?|before|about to|"
    r"waiting (?:for|on)|performing|launching|executing|doing)\b\s+(?P<what>[^\s.:;,()]+"
    r"(?:\s+[^\s.:;,()]+){0,3})|(?P<dots>\S.{0,80}?)(?:\.\.\.|\u2026)\s*$",
    re.I,
)
# a line that is the job's command, not its output
_COMMAND = re.compile(
    r"^\s*(?:\S+@\S+[:~][^$#]*[$#]\s*|[$#]\s*)?(?:\S+/)?(?:mpirun|mpiexec|srun|torchrun|"
    r"mlx\.launch|mlx_lm\.\w+|python3?|deepspeed|accelerate|\S+_perf)\b"
)
_CONTINUED = re.compile(r"^\s*-{1,2}\w|\\\s*$")  # an option line of a command cut with "\"


# an engine that says it waits for its workers (and nothing else follows): vLLM's
# shm_broadcast.py ("No available shared memory broadcast block found in 60 seconds. This
# typically happens when some processes are hanging ..."), its executor's collective_rpc
# ("RPC call to sample_tokens timed out"), PyTorch's c10d monitoring thread
# ("Heartbeat monitor timed out")
_WAITING = re.compile(
    r"No available shared memory broadcast block found in (?P<s>\d+) seconds?"
    r"|RPC call to (?P<rpc>\w+) timed out"
    r"|(?P<hb>Heartbeat monitor timed out|monitoring thread .{0,40}(?:stuck|timed out))",
    re.I,
)
WAITING_HINT = (
    "The engine waits for a worker that does not answer, and no worker printed why: a worker "
    "blocked in a collective whose peers are elsewhere (data- or expert-parallel ranks that "
    "took different paths issue different collectives: speculative decoding near the length "
    "limit, a rank with no requests, CUDA-graph buckets that differ per rank), or a "
    "collective that stopped in NCCL itself (a release with a known hang, CUDA-graph-captured "
    "collectives across nodes: compare with the engine's eager mode, vLLM --enforce-eager). "
    "`py-spy dump --pid PID` of every worker process (VllmWorker, EngineCore_DPn) shows where "
    "each waits: different collectives mean different paths; all in one NCCL collective mean "
    "NCCL or the network (NCCL_DEBUG=INFO, then a newer NCCL)."
)


@dataclass(frozen=True)
class Stop:
    """Where one input's output stops: ``shape`` (``waiting``, ``nccl-init``,
    ``nccl-tests``, ``announced``, ``command``), its ``lineno`` and ``line``, what it says (``here``, a
    phrase) and what helps there (``hint``, a sentence, or empty)."""

    shape: str
    lineno: int
    line: str
    here: str
    hint: str = ""


def _nccl_init(lines: Sequence[Tuple[int, str]]) -> Optional[Stop]:
    began = done = False
    for _, text in lines:
        if _INIT_BEGIN.search(text):
            began, done = True, False
        elif _INIT_DONE.search(text):
            done = True
    lineno, last = lines[-1]
    m = _NCCL_INFO.search(last)
    if not m:
        return None
    step = m.group("text")
    at = next(i for i, (rx, _, _) in enumerate(_STAGES) if rx.search(step))
    specific = at < len(_STAGES) - 1  # the last stage is the catch-all
    # a pasted excerpt of NCCL's lines alone (no banner) that ends at an init step counts too,
    # when it is one: a line or two of NCCL's that name no stage (a setting, a plugin it looked
    # for) say nothing of where an init stopped
    began = began or (
        (specific or len(lines) >= _EXCERPT_LINES) and all(_NCCL_INFO.search(t) for _, t in lines)
    )
    if not (began and not done):
        return None
    _, stage, hint = _STAGES[at]
    prefixes = (_PREFIX.match(t) for _, t in lines)
    ranks = {(p.group("host"), p.group("pid")) for p in prefixes if p}
    hosts = {h for h, _ in ranks}
    here = (
        "NCCL's communicator init never completed (no 'Init COMPLETE'): the log stops in " + stage
    )
    if len(hosts) == 1 and len(ranks) >= 2 and hint != _CONNECT_HINT:
        # every rank on one host: no network between them, the GPUs' own path is the suspect
        here += f"; all {len(ranks)} processes run on one host ({next(iter(hosts))})"
        hint = "every rank is on one host, so no network stands between them: " + _ONE_HOST
    return Stop("nccl-init", lineno, last.strip(), here, hint[:1].upper() + hint[1:] + ".")


def _nccl_tests(lines: Sequence[Tuple[int, str]]) -> Optional[Stop]:
    top = None
    row: Optional[Tuple[int, str, int]] = None
    for lineno, text in lines:
        h = TESTS_HEAD.search(text)
        if h:
            top, row = int(h.group(1)), None
        elif TESTS_DONE.search(text):
            return None
        else:
            r = TESTS_ROW.match(text)
            if r:
                row = (lineno, text.strip(), int(r.group(1)))
    if top is None or row is None or row[2] >= top:
        return None
    lineno, line, size = row
    return Stop(
        "nccl-tests",
        lineno,
        line,
        f"the nccl-tests table stops after the {size}-byte row, short of its maxBytes "
        f"{top}, with no '# Avg bus bandwidth' line: the next size's collective never ended",
        _STAGES[1][2][:1].upper() + _STAGES[1][2][1:] + ".",
    )


def _waiting(lines: Sequence[Tuple[int, str]]) -> Optional[Stop]:
    lineno, last = lines[-1]
    m = _WAITING.search(last)
    if not m:
        return None
    if m.group("s"):
        said = (
            f"the engine found no free broadcast block for {m.group('s')} s: its workers stopped "
            "taking work"
        )
    elif m.group("rpc"):
        said = f"the engine's call '{m.group('rpc')}' to its workers timed out"
    else:
        said = "the process group's heartbeat monitor timed out"
    count = sum(1 for _, t in lines if _WAITING.search(t))
    again = f" ({count} times)" if count > 1 else ""
    return Stop("waiting", lineno, last.strip(), f"{said}{again}", WAITING_HINT)


def _announced(lines: Sequence[Tuple[int, str]]) -> Optional[Stop]:
    lineno, last = lines[-1]
    if _COMMAND.search(last) or is_error_line(last):
        return None  # a command, or an error ("Connect call failed"): not a step announced
    m = _ANNOUNCE.search(last)
    if not m:
        return None
    what = (m.group("what") or m.group("dots") or "").strip()
    return Stop("announced", lineno, last.strip(), f"its last line announces '{what}'")


def _bare_command(lines: Sequence[Tuple[int, str]]) -> Optional[Stop]:
    inside = False
    for _, text in lines:
        if _COMMAND.search(text):
            inside = bool(_CONTINUED.search(text))
        elif inside and (_CONTINUED.search(text) or text.lstrip().startswith("-")):
            inside = bool(_CONTINUED.search(text))
        else:
            return None
    lineno, last = lines[0]
    debug = any("NCCL_DEBUG" in t for _, t in lines)
    return Stop(
        "command",
        lineno,
        last.strip(),
        "it holds only the job's command line and no output"
        + (" (not even NCCL's init lines, which NCCL_DEBUG asks for)" if debug else ""),
        "The job stopped before its first line of output"
        + (", before NCCL's init" if debug else "")
        + ": the launcher or MPI itself (test it alone: `mpirun -np 2 -H HOST1,HOST2 "
        "hostname`; an MPI, UCX or HPC-X build that does not match the installed driver "
        "stack (MLNX_OFED) blocks here), or the program before its init (a rank waiting "
        "for a file, a lock or a GPU another process holds).",
    )


def where(lines: Sequence[Tuple[int, str]]) -> Optional[Stop]:
    """Where an input whose lines are ``lines`` (``(line number, text)``, in order, blank
    lines left out) stops, in one of the shapes of the module's docstring, or None (it ends
    in none of them: finished, or cut where nothing can be said)."""
    lines = [(n, t) for n, t in lines if t.strip()]
    if not lines:
        return None
    for rule in (_waiting, _nccl_tests, _nccl_init, _bare_command, _announced):
        got = rule(lines)
        if got is not None:
            return got
    return None


def stops(inputs_lines: Sequence[Sequence[Tuple[int, str]]]) -> List[Optional[Stop]]:
    """:func:`where` of each input's lines, in order."""
    return [where(lines) for lines in inputs_lines]
