"""Hosts whose NCCL picked a different network: one host's NCCL loads an external net plugin
(``NET/Plugin: Loaded net plugin ...``, ``Plugin Path : /opt/hpcx/.../libnccl-net.so``) while
another uses NCCL's internal one (``NET/Plugin : No plugin found (libnccl-net.so)``, ``Could
not find: libnccl-net.so. Using internal network plugin.``), or one host's NCCL uses IB and
another's sockets (``Using network IB`` / ``Using network Socket``), or the hosts list a
different number of RDMA devices (``NET/IB : Using [0]mlx5_0:1/IB [1]mlx5_1:1/IB``). Ranks of one communicator
must speak the same transport to each other: with different plugins or networks their
connection setup waits for a peer that never answers in kind, and the job hangs in init or
fails with errors that name neither side (NCCL's environment variables: NCCL_NET,
NCCL_NET_PLUGIN; NCCL's init log lines, NCCL_DEBUG=INFO). Triage names it with MD895, a finding
it makes itself across the inputs.

The rule (:func:`readings`): in the logs read (their first and last bytes), each NCCL line's
host (its ``host:pid:tid [dev]`` prefix, else the input's name) says which net plugin and
which network it chose; two hosts that chose differently are the finding, on the first line
of the host in the minority. Its role is ``cause``: what follows (a hang in init, a
connection error) is its consequence.
"""

from __future__ import annotations

import re
from collections import Counter
from typing import Dict, List, Sequence, Tuple

from meshdoctor import signatures
from meshdoctor.signatures.model import signature
from meshdoctor.triage import reading
from meshdoctor.triage.alone import _lines as input_lines  # head and tail lines, each once
from meshdoctor.triage.findings import Finding, Input
from meshdoctor.triage.reading import entry, with_why

CODE = "MD895"

NETDIFF_SIG = signature(
    CODE,
    "triage.nccl-network-differs",
    None,
    "The hosts' NCCL chose different networks: one loads an external net plugin (HPC-X's "
    "or aws-ofi-nccl's libnccl-net.so) or IB while another uses NCCL's internal plugin or "
    "sockets. The ranks of one communicator must talk the same transport, so connection "
    "setup waits for a peer that never answers in kind: a hang in init, or errors that name "
    "neither host.",
    "Make every host load the same NCCL network: the same net plugin on every host (the "
    "same LD_LIBRARY_PATH and container image: HPC-X's `nccl_rdma_sharp_plugin/lib` on all "
    "or none), or pin it for the job: NCCL_NET_PLUGIN=NAME (HPC-X's plugin off everywhere: "
    "NCCL_IBEXT_DISABLE=1) and NCCL_NET='IB' or 'Socket', passed to every rank (`mpirun -x "
    "...`); then compare the ranks' 'NET/Plugin' and 'Using network' lines again "
    "(NCCL_DEBUG=INFO).",
    "NCCL environment variables (NCCL_NET, NCCL_NET_PLUGIN); NVIDIA HPC-X documentation, "
    "NCCL-RDMA-SHARP plugins (NCCL_IBEXT_DISABLE); NCCL's init lines "
    "'NET/Plugin', 'Using network' (NCCL_DEBUG=INFO, NCCL_DEBUG_SUBSYS=INIT,NET); "
    "https://github.com/NVIDIA/nccl/issues/1634",
    examples=(),
    causes=[
        (
            "a net plugin (HPC-X, aws-ofi-nccl) on the library path of some hosts only",
            "'Plugin Path' or 'Loaded net plugin' on one host, 'Using internal network "
            "plugin' or 'No plugin found' on another",
        ),
        (
            "IB usable on some hosts only (a driver, a missing libibverbs, NCCL_IB_DISABLE "
            "set on some)",
            "'Using network IB' on one host, 'Using network Socket' on another",
        ),
        (
            "hosts with a different number of usable RDMA devices (a port down, a NIC "
            "missing, NCCL_IB_HCA naming devices some hosts lack)",
            "'NET/IB : Using [0]... [1]...' lists more devices on one host than another",
        ),
    ],
)

NETDIFF_SIG = with_why(
    NETDIFF_SIG,
    "No rank says the networks differ: each waits for or fails on the other, and those "
    "hangs and errors are consequences of this; fix it first.",
)

ENTRY = entry(NETDIFF_SIG, "triage NCCL network differs between hosts")

_PREFIX = re.compile(r"^\s*(?P<host>[\w.-]+):\d+:\d+ \[\d+\] NCCL INFO ")
# (what is chosen, its regex; the value: the plugin or network it names, "internal" for none)
_CHOICES: Tuple[Tuple[str, "re.Pattern[str]"], ...] = (
    (
        "net plugin",
        re.compile(
            r"NET/Plugin\s*:?\s*(?:Loaded net plugin (?P<name>\S+)|Plugin Path : (?P<path>\S+)|"
            r"Loaded (?:net|collnet) plugin (?P<n2>\S+))"
            r"|Plugin Path : (?P<path2>\S+)"
            r"|(?P<internal>No plugin found|Could not find: libnccl-net|Using internal network "
            r"plugin)"
        ),
    ),
    ("network", re.compile(r"\bUsing network (?P<net>\w+)")),
    # "NET/IB : Using [0]mlx5_0:1/IB [1]mlx5_1:1/RoCE ; OOB eth0:10.0.0.1<0>": its devices
    ("RDMA devices", re.compile(r"\bNET/IB : Using (?P<devs>(?:\[\d+\]\S+\s*)+)")),
)
_DEVICE = re.compile(r"\[\d+\]")
_LOGS = ("log", "stdin")


def _value(rx_name: str, m: "re.Match[str]") -> str:
    g = {k: v for k, v in m.groupdict().items() if v}
    if rx_name == "network":
        return g["net"]
    if rx_name == "RDMA devices":
        return f"{len(_DEVICE.findall(g['devs']))} device(s)"
    if "internal" in g:
        return "internal"
    v = g.get("name") or g.get("n2") or g.get("path") or g.get("path2") or ""
    return v.rsplit("/", 1)[-1] if "/" in v and not v.endswith(".so") else v


def readings(inputs: Sequence[Input], findings: Sequence[Finding]) -> List[Finding]:
    """The MD895 finding (the rule in the module's docstring) for what triage read, or none:
    ``inputs`` in the order read; ``findings`` the others (unused)."""
    del findings
    # choice -> host -> (value, input index, line number, text)
    seen: Dict[str, Dict[str, Tuple[str, int, int, str]]] = {}
    for i, inp in enumerate(inputs):
        if inp.kind not in _LOGS or inp.error:
            continue
        for lineno, text in input_lines(inp):
            if "NCCL INFO" not in text:
                continue
            p = _PREFIX.match(text)
            host = p.group("host") if p else inp.host or inp.source
            for what, rx in _CHOICES:
                m = rx.search(text)
                if m:
                    seen.setdefault(what, {}).setdefault(
                        host, (_value(what, m), i, lineno, text.strip())
                    )
    for what, by_host in seen.items():
        values = Counter(v for v, *_ in by_host.values())
        if len(values) < 2:
            continue
        odd = min(values, key=lambda v: (values[v], v))
        host, (value, i, lineno, text) = min(
            ((h, x) for h, x in by_host.items() if x[0] == odd), key=lambda hx: hx[1][1:3]
        )
        listed = "; ".join(
            f"{v} on {', '.join(sorted(h for h, x in by_host.items() if x[0] == v))}"
            for v in sorted(values)
        )
        m = reading.match(
            NETDIFF_SIG,
            f"the hosts differ in their {what}: {listed}.",
            line=signatures.printable(text),
            lineno=lineno,
            groups={"choice": what, "values": ", ".join(sorted(values))},
        )
        f = reading.at_input(m, i, inputs[i])
        f.host = f.host or (host if host != inputs[i].source else None)
        return [f]
    return []
