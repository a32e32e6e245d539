"""NCCL bootstrapping on an address that the other hosts cannot reach, in a job whose connections
failed.

NCCL chooses one interface for its bootstrap and socket traffic (NCCL v2.30.7
src/misc/socket.cc ``ncclFindInterfaces``: NCCL_SOCKET_IFNAME, else an ``ib*`` interface, else
any but ``docker*`` and ``lo``, those last) and prints it (``NCCL INFO Bootstrap : Using
eth0:10.0.0.1<0>``); a peer's address appears in its connect errors (``Connect to
169.254.3.1<40123> failed``). Three kinds of address are good on one host only:

* IPv4 link-local ``169.254.0.0/16`` (RFC 3927) and IPv6 link-local ``fe80::/10`` (RFC 4291):
  an interface that got no configured address, or IPv6 chosen where only link-local IPv6
  exists; a link-local address is not routed, and ``fe80::`` needs its scope (``%eth0``) on
  every host;
* a container or VM bridge (``docker0``, ``virbr*``, ``veth*``, ``cni*``, ``br-*``; docker0's
  own ``172.17.0.1``): each host has its own with the same addresses;
* loopback (``lo``, ``127.0.0.0/8``) for bootstrap while NCCL_SOCKET_IFNAME names another
  interface or NCCL_COMM_ID another host: NCCL did not take the interface it was given
  (NCCL 2.29 chooses the bootstrap interface on NCCL_COMM_ID's subnet, and its IPv4 subnet
  match was inverted, so it took ``lo``: NVIDIA/nccl #2047, fixed in 2.30.3). This one is a
  finding with or without a failure after it.

A multi-host job bootstrapping there waits for peers that never arrive or connects to itself.
Triage names it with MD879, a finding it makes itself. (On Macs, 169.254 addresses on the
Thunderbolt link are how MLX's ring and JACCL work: lines of MLX's backends are not read here.)

The rule (:func:`readings`): a log read (its first and last bytes) shows NCCL bootstrapping on
loopback as above; or some finding is an NCCL or PyTorch connection failure (a signature of
the ``nccl.`` or ``torch.`` family, or a hang with no error), and a log shows NCCL
bootstrapping on a link-local or bridge address or interface, or a failure line names such an
address. The finding names the first such line and comes just before those failures,
which become its consequences.
"""

from __future__ import annotations

import ipaddress
import re
from typing import List, Optional, Sequence, Tuple

from meshdoctor import signatures
from meshdoctor.signatures.model import signature
from meshdoctor.triage import reading
from meshdoctor.triage.alone import _lines as input_lines  # head and tail lines, each once
from meshdoctor.triage.findings import Finding, Input
from meshdoctor.triage.reading import entry, with_why

CODE = "MD879"

ADDRESS_SIG = signature(
    CODE,
    "triage.nccl-unroutable-address",
    None,
    "NCCL bootstrapped (or a peer was dialled) on an address that only works inside one "
    "host: a link-local address (169.254.x.x, fe80::) or a container or VM bridge "
    "(docker0, virbr, veth, cni: the same on every host), or loopback while the job was "
    "told to use another interface. The other hosts cannot reach it, so bootstrap waits for "
    "peers that never connect, or connects to the wrong machine; the connection errors and "
    "timeouts that follow are this.",
    "Pin the interface that joins the hosts, on every rank: NCCL_SOCKET_IFNAME=NAME (the "
    "interface with the address the other hosts reach, from `ip -br addr`; `^docker,lo,virbr` "
    "excludes instead), GLOO_SOCKET_IFNAME the same for PyTorch's Gloo, and "
    "NCCL_SOCKET_FAMILY=AF_INET when NCCL chose an IPv6 link-local (fe80::) address; in "
    "containers use host networking (`--network host`) or give the pod a routable address. "
    "Then check the 'Bootstrap : Using' line names that interface (NCCL_DEBUG=INFO).",
    "NCCL v2.30.7 src/misc/socket.cc (ncclFindInterfaces; NCCL_SOCKET_IFNAME, "
    "NCCL_SOCKET_FAMILY); NCCL environment variables documentation; RFC 3927 (169.254/16), "
    "RFC 4291 (fe80::/10); Docker networking (docker0, 172.17.0.0/16)",
    examples=(),
    causes=[
        (
            "a container's bridge (docker0, cni, veth) chosen, or a pod without host networking",
            "'Bootstrap : Using docker0:172.17.0.1' or an address of 172.17.x.x",
        ),
        (
            "an interface without a configured address (only link-local 169.254.x.x), or "
            "IPv6 link-local chosen",
            "'Using eth0:169.254...' or 'fe80::...'; `ip -br addr` on the host",
        ),
    ],
)

ADDRESS_SIG = with_why(
    ADDRESS_SIG,
    "The errors that follow (timeouts, refused or aborted connections) name no interface: "
    "they read like a dead peer or a firewall while the address was never reachable.",
)

ENTRY = entry(ADDRESS_SIG, "triage NCCL address other hosts cannot reach")

_BOOTSTRAP = re.compile(r"\bBootstrap\s*:\s*Using\s+\[?\d*\]?(?P<ifname>[\w.-]+):(?P<addr>[^<\s]+)")
_PEER = re.compile(
    r"\b(?:Connect to|connect to|connecting to|Connection to|to address)\s+\[?"
    r"(?P<addr>[0-9a-fA-F:.%\w]+?)\]?(?:<(?:\d+|[^>\s]*)>|:\d+)"
)
_BRIDGE = re.compile(r"^(?:docker\d*|virbr\d*|veth\w*|cni\d*|br-\w+|lxcbr\d*)$")
_MLX = re.compile(r"\[(?:ring|jaccl)\]")
_LOGS = ("log", "stdin")


def unroutable(addr: str, ifname: Optional[str] = None) -> Optional[str]:
    """Why ``addr`` (an IPv4/IPv6 text, maybe with ``%scope``) on ``ifname`` is good inside one
    host only (``"link-local"``, ``"bridge"``), or None."""
    if ifname and _BRIDGE.match(ifname):
        return "bridge"
    try:
        ip = ipaddress.ip_address(addr.split("%", 1)[0])
    except ValueError:
        return None
    if ip.is_link_local:
        return "link-local"
    if str(ip) == "172.17.0.1":  # docker0's own address in Docker's default bridge network
        return "bridge"
    return None


def _address(text: str) -> Optional[Tuple[str, str]]:
    """``(address, why)`` of an unroutable bootstrap choice or peer address in ``text``."""
    b = _BOOTSTRAP.search(text)
    if b:
        why = unroutable(b.group("addr"), b.group("ifname"))
        if why:
            return f"{b.group('ifname')}:{b.group('addr')}", why
    p = _PEER.search(text)
    why = unroutable(p.group("addr")) if p else None
    return (p.group("addr"), why) if p and why else None


def _bears(f: Finding) -> bool:
    return f.match.name.startswith(("nccl.", "torch.")) or f.match.name == (
        "triage.hang-without-error"
    )


_IFNAME = re.compile(r"\bNCCL_SOCKET_IFNAME(?: set by environment to |=)(?P<v>[\^=]?[\w.,-]+)")
_COMM_ID = re.compile(r"\bNCCL_COMM_ID(?: set by environment to |=)(?P<v>[\w.-]+):\d+")
_V229 = re.compile(r"\bNCCL version 2\.29\.")


def _loopback(inputs: Sequence[Input]) -> Optional[Tuple[int, int, str, str]]:
    """``(input index, line, text, why)`` of a bootstrap on loopback that NCCL's settings
    ask not to use (NCCL_SOCKET_IFNAME naming another interface, NCCL_COMM_ID another host),
    or None."""
    for i, inp in enumerate(inputs):
        if inp.kind not in _LOGS or inp.error:
            continue
        lines = list(input_lines(inp))
        boot = next(((n, t) for n, t in lines if (b := _BOOTSTRAP.search(t)) and _is_loop(b)), None)
        if boot is None:
            continue
        ifname = next((m.group("v") for _, t in lines if (m := _IFNAME.search(t))), None)
        comm = next((m.group("v") for _, t in lines if (m := _COMM_ID.search(t))), None)
        asked = []
        if ifname and not ifname.lstrip("=").startswith("lo") and not ifname.startswith("^"):
            asked.append(f"NCCL_SOCKET_IFNAME={ifname}")
        if comm and not comm.startswith(("127.", "localhost")):
            asked.append(f"NCCL_COMM_ID on {comm}")
        if not asked:
            continue
        why = f"loopback, though {' and '.join(asked)} asked for another interface"
        if comm and any(_V229.search(t) for _, t in lines):
            why += (
                "; NCCL 2.29 picks the bootstrap interface on NCCL_COMM_ID's subnet and its "
                "IPv4 subnet match was inverted, so it took lo (NVIDIA/nccl #2047, fixed in "
                "2.30.3): upgrade NCCL"
            )
        return i, boot[0], boot[1].strip(), why
    return None


def _is_loop(b: "re.Match[str]") -> bool:
    if b.group("ifname") == "lo":
        return True
    try:
        return ipaddress.ip_address(b.group("addr").split("%", 1)[0]).is_loopback
    except ValueError:
        return False


def readings(inputs: Sequence[Input], findings: Sequence[Finding]) -> List[Finding]:
    """The MD879 finding (the rule in the module's docstring) for what triage read, or none:
    ``inputs`` in the order read (their index gives the finding's ``seq``); ``findings`` the
    others (an NCCL or PyTorch failure among them)."""
    failures = [f for f in findings if _bears(f)]
    loop = _loopback(inputs)
    if loop is not None:
        i, lineno, text, why = loop
        m = reading.match(
            ADDRESS_SIG,
            f"NCCL bootstrapped on {why}.",
            line=signatures.printable(text),
            lineno=lineno,
            groups={"kind": "loopback"},
        )
        if failures:
            return [reading.explains(m, inputs[i], failures)]
        return [reading.at_input(m, i, inputs[i])]
    if not failures:
        return []
    at: Optional[Tuple[int, int, str, str, str]] = None  # index, line, text, address, why
    for i, inp in enumerate(inputs):
        if inp.kind not in _LOGS or inp.error:
            continue
        for lineno, text in input_lines(inp):
            if _MLX.search(text):
                continue
            found = _address(text)
            if found and (at is None or (i, lineno) < at[:2]):
                at = (i, lineno, text.strip(), found[0], found[1])
                break
    if at is None:
        return []
    i, lineno, text, addr, why = at
    what = {
        "link-local": "a link-local address, not routed between hosts",
        "bridge": "a container or VM bridge: every host has its own",
    }[why]
    m = reading.match(
        ADDRESS_SIG,
        f"{addr} is {what}.",
        line=signatures.printable(text),
        lineno=lineno,
        groups={"address": addr, "kind": why},
    )
    return [reading.explains(m, inputs[i], failures)]
