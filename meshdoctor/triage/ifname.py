"""An NCCL_SOCKET_IFNAME that names no interface of the host, read across the lines of a log.

NCCL picks its bootstrap and socket interface by NCCL_SOCKET_IFNAME (NCCL v2.30.7
src/misc/socket.cc ``ncclFindInterfaces``: a comma list of name prefixes, ``^`` to exclude,
``=`` for exact names). It says the setting in an INFO line (``NCCL INFO NCCL_SOCKET_IFNAME set by
environment to eth2``) and, when an interface matched, the one it uses (``Bootstrap : Using
eth0:10.0.0.1<0>``, ``NET/Socket : Using [0]eth0:...``). When none matches, older releases warn
(``Bootstrap : no socket interface found``); NCCL 2.27 went on without an address and failed
later with ``ncclSocketInit: connecting to address  with family 59936 is neither AF_INET(2) nor
AF_INET6(10)``, the family being uninitialised memory (NVIDIA/nccl #1837). Neither line names
the setting; together with it they do. Triage names it with MD894, a finding it makes itself.

The rule (:func:`readings`): one log input holds the setting (NCCL's INFO line, or
``NCCL_SOCKET_IFNAME=VALUE`` as an environment dump or a command line prints it, or a
Python dict of the environment), or, when the failing log does not, another input of the job
does (its command line: mpirun's ``-x NCCL_SOCKET_IFNAME=enp6s0``); no line shows NCCL using
an interface the setting matches, and a finding of that input says NCCL had no interface or
no address (``no socket interface found``, ``No usable listening interface found``, ``no
interface found``, ``neither AF_INET``) or, for a setting of one name (no list, no ``^``) and
no NCCL WARN line, an NCCL internal error or invalid usage, which releases before 2.27
returned at init for it (nccl-tests' ``Test NCCL failure common.cu:959 'internal error
...'``). The finding sits on the setting's line; its role is ``cause``: the failures that
follow are its consequences.
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import List, Optional, Sequence, Tuple

from meshdoctor import signatures
from meshdoctor.codes.model import SIGNATURE, Entry
from meshdoctor.signatures.model import causes_text, signature
from meshdoctor.triage.alone import _lines as input_lines  # head and tail lines, each once
from meshdoctor.triage.collect import SEQ_STRIDE
from meshdoctor.triage.findings import Finding, Input

CODE = "MD894"

IFNAME_SIG = signature(
    CODE,
    "triage.nccl-ifname-not-found",
    None,
    "NCCL_SOCKET_IFNAME names no network interface of this host, so NCCL found no interface "
    "to bootstrap on and had no address of its own: its later errors ('Bootstrap : no socket "
    "interface found', or 'ncclSocketInit: connecting to address with family N is neither "
    "AF_INET nor AF_INET6', N being uninitialised memory; an internal error or invalid usage "
    "at init) follow from it. Local configuration of this host, not a peer, the network or "
    "the NCCL version.",
    "Set NCCL_SOCKET_IFNAME to an interface that exists (with an address) on every host, "
    "or unset it: `ip -br addr` on each host lists them; a comma list of prefixes matches "
    "hosts whose names differ (`eth,en`), `^lo,docker` excludes instead, and a leading `=` "
    "asks for exact names. Look where it is set: the job's environment, the launcher's "
    "(mpirun -x, a batch script), /etc/nccl.conf or ~/.nccl.conf.",
    "NVIDIA/nccl #1837 (NCCL_SOCKET_IFNAME set to an interface the host lacks: 'family "
    "59936 is neither AF_INET(2) nor AF_INET6(10)'); NCCL v2.30.7 src/misc/socket.cc "
    "(ncclFindInterfaces); NCCL environment variables (NCCL_SOCKET_IFNAME)",
    examples=(),
    causes=[
        (
            "an interface name of another machine or image (eth0 where this host has ens5, "
            "ib0 on a host without it)",
            "`ip -br addr` on the failing host lacks the name",
        ),
        (
            "an exact name (`=eth2`) or a prefix that matches nothing here",
            "the value in the 'NCCL_SOCKET_IFNAME set to' line",
        ),
        (
            "an interface that exists but has no address (down, or IPv6 only with an IPv4 peer)",
            "`ip -br addr` shows it without an inet address",
        ),
    ],
)

IFNAME_SIG = replace(
    IFNAME_SIG,
    doc=replace(
        IFNAME_SIG.doc,
        why="No line says the interface is missing: NCCL fails later with an address it "
        "never filled in, which reads like a peer's or a version's fault; fix the setting "
        "before reading those errors.",
    ),
)

ENTRY = Entry(
    code=CODE,
    kind=SIGNATURE,
    title="triage NCCL_SOCKET_IFNAME names no interface",
    doc=IFNAME_SIG.doc,
    names=(IFNAME_SIG.name,),
    details=(("Known causes, most common first", causes_text(IFNAME_SIG)),),
)

# NCCL's INFO line of the setting, or the setting as an environment or a command line shows it
_SETTING = re.compile(
    r"NCCL_SOCKET_IFNAME set (?:by environment )?to (?P<info>\S+)"
    r"|\bNCCL_SOCKET_IFNAME=(?P<env>[^\s'\"]+)"
    r"|['\"]NCCL_SOCKET_IFNAME['\"]: ['\"](?P<dict>[^'\"]+)"  # a Python dict of os.environ
)
# the interface NCCL says it uses (bootstrap, the socket transport, an OOB line)
_USING = re.compile(r"(?:Bootstrap|NET/Socket|OOB)\s*:?\s*Using\s+(?:\[\d+\])?(?P<iface>[\w.@-]+):")
# NCCL's texts of no interface or no address (NCCL v2.30.7 src/bootstrap.cc,
# src/transport/net_socket.cc, src/misc/socket.cc)
_NO_INTERFACE = re.compile(
    r"no socket interface found|No usable listening interface found|NET/Socket : no "
    r"interface found|no NCCL_SOCKET_IFNAME interface|neither AF_INET"
)
_LOGS = ("log", "stdin")
# what NCCL releases before 2.27 returned at init when no interface matched, as the failing
# tool prints it (nccl-tests' "Test NCCL failure common.cu:N 'internal error ...'", MLX's and
# PyTorch's NCCL error lines): read as this failure only with a one-name setting that no line
# shows in use
_INIT_ERROR = re.compile(r"internal error|ncclInternalError|invalid usage|ncclInvalidUsage")


def matches(setting: str, iface: str) -> bool:
    """Whether NCCL_SOCKET_IFNAME's value ``setting`` selects interface ``iface`` (NCCL's
    ``ncclFindInterfaces``/``matchIfList``: a comma list of prefixes, ``^`` excludes them, a
    leading ``=`` makes the names exact)."""
    exclude = setting.startswith("^")
    body = setting[1:] if exclude else setting
    exact = body.startswith("=")
    body = body[1:] if exact else body
    names = [n.split(":")[0] for n in body.split(",") if n]
    hit = any(iface == n if exact else iface.startswith(n) for n in names)
    return not hit if exclude else hit


def _setting(inp: Input) -> Optional[Tuple[int, str, str]]:
    """``(line number, value, line)`` of the first NCCL_SOCKET_IFNAME setting in an input."""
    for lineno, text in input_lines(inp):
        m = _SETTING.search(text)
        if m:
            return (
                lineno,
                (m.group("info") or m.group("env") or m.group("dict")).strip("'\"`,;"),
                text.strip(),
            )
    return None


def _used(inp: Input) -> List[str]:
    """The interfaces an input's NCCL lines say NCCL uses."""
    return [m.group("iface") for _, text in input_lines(inp) for m in _USING.finditer(text)]


def _no_interface(inp: Input, own: Sequence[Finding], one_name: bool) -> Optional[Tuple[int, str]]:
    """``(line number, text)`` of the first line of an input (a finding's, or one of its head
    and tail: PyTorch prints NCCL's WARN text bare after 'Last error:') saying NCCL had no
    interface or address, or, when the setting is ``one_name`` (one interface, not a list or
    an exclusion), an NCCL internal error or invalid usage (what releases before 2.27
    returned at init); None when none does or the input has no finding (nothing failed)."""
    if not own:
        return None
    hits = [(f.match.lineno, f.match.line) for f in own if _NO_INTERFACE.search(f.match.line)]
    hits += [(n, t.strip()) for n, t in input_lines(inp) if _NO_INTERFACE.search(t)]
    if not hits and one_name and not any(f.match.name == "nccl.warn" for f in own):
        # an NCCL WARN line would name the call that failed; without one, the init error
        # of a one-name setting that no line shows in use is read as that setting's
        hits = [
            (f.match.lineno, f.match.line)
            for f in own
            if f.match.name == "nccl.error" and _INIT_ERROR.search(f.match.line)
        ]
    return min(hits) if hits else None


def readings(inputs: Sequence[Input], findings: Sequence[Finding]) -> List[Finding]:
    """The MD894 findings (the rule in the module's docstring), one per input at most:
    ``inputs`` in the order read (their index gives the finding's ``seq``); ``findings`` the
    others (the no-interface failure is read from them)."""
    out: List[Finding] = []
    # the job's setting, where its own log does not print it: its command line or environment
    # given as another input (mpirun's `-x NCCL_SOCKET_IFNAME=...`)
    given = next(
        (
            (x, found)
            for x in inputs
            if x.kind in _LOGS and not x.error
            for found in [_setting(x)]
            if found is not None
        ),
        None,
    )
    used = [iface for x in inputs if x.kind in _LOGS and not x.error for iface in _used(x)]
    for i, inp in enumerate(inputs):
        if inp.kind not in _LOGS or inp.error:
            continue
        own = [f for f in findings if f.source == inp.source]
        found = _setting(inp)
        at = inp
        if found is None and given is not None and own:
            at, found = given
        if found is None:
            continue
        lineno, value, text = found
        said = _no_interface(inp, own, one_name=not re.search(r"[,^]", value))
        if said is None:
            continue
        if any(matches(value, iface) for iface in _used(inp) + used):
            continue  # an interface matched: the failure is something else
        first = min(own, key=lambda f: f.seq)
        m = signatures.Match(
            code=CODE,
            name=IFNAME_SIG.name,
            meaning=f"{IFNAME_SIG.meaning} Here: NCCL_SOCKET_IFNAME is '{value}' "
            f"({at.source}:{lineno}); no line shows NCCL using an interface it matches, and "
            f"NCCL then failed with no interface or address: {said[1]} "
            f"({inp.source}:{said[0]})"
            + (
                "; one setting passed to every host (mpirun -x, a shared environment) names "
                "one interface, while hosts often name theirs differently (enp6s0 on one, "
                "enp4s0 on another: predictable names follow the PCI slot): list each "
                "host's name or a common prefix, or set it per host (/etc/nccl.conf)"
                if not re.search(r"[,^]", value)
                else ""
            )
            + ".",
            remedy=IFNAME_SIG.remedy,
            line=signatures.printable(text),
            lineno=lineno,
            groups={"ifname": value},
            sig=IFNAME_SIG,
        )
        out.append(
            Finding(
                match=m,
                source=at.source,
                # a setting read from another input (the command line) comes just before
                # the failing input's lines
                seq=i * SEQ_STRIDE + (lineno if at is inp else 0),
                role=m.role,
                host=first.host if first.host is not None else inp.host,
                rank=first.rank if first.rank is not None else inp.rank,
                time=first.time,
                last_lineno=lineno,
            )
        )
    return out
