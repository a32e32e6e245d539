"""Tool output given to triage beside the logs: a transcript of ``$ rdma_ctl status``,
``$ ibv_devices`` and ``$ system_profiler SPThunderboltDataType`` (the checks a report pastes
when RDMA will not come up). When a host has MD689 (``[ERROR] HOST does not seem to have RDMA
enabled``, mlx/_distributed_utils/config.py check_rdma) and the transcript of that host (its
name in the file's name, or the only such host) shows RDMA enabled with no device listed, or a
Thunderbolt link of at most 40 Gb/s, the finding says what that proves: Thunderbolt 4 (or older)
hardware, which cannot do RDMA however rdma_ctl is set (MLX distributed docs: RDMA over
Thunderbolt needs Thunderbolt 5; jundot/omlx #3037). Parsing goes through
:mod:`meshdoctor.parsers.ibv`; it reads the head of each input kept as it was read
(:attr:`meshdoctor.triage.findings.Input.head`).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from typing import Dict, List, Optional, Sequence

from meshdoctor.parsers.ibv import parse_ibv_devices, parse_rdma_ctl_status
from meshdoctor.triage.findings import Finding, Input

NO_RDMA = "MD689"
_PROMPT = re.compile(r"^\s*[$%#]\s+(?P<cmd>\S+)")
# system_profiler SPThunderboltDataType: "Speed: Up to 40 Gb/s" (Thunderbolt 4), 80/120 (TB5)
_SPEED = re.compile(r"Speed: Up to (?P<gbps>\d+) Gb/s")
TB4_MAX_GBPS = 40


@dataclass
class Transcript:
    """What one pasted transcript shows: ``enabled`` (``rdma_ctl status``: True, False or None
    when absent), ``devices`` (``ibv_devices`` rows, or None when absent), ``gbps`` (the fastest
    Thunderbolt speed listed, or None)."""

    enabled: Optional[bool] = None
    devices: Optional[int] = None
    gbps: Optional[int] = None


def read_transcript(text: str) -> Transcript:
    """:class:`Transcript` of ``text``: the lines after each ``$ COMMAND`` prompt up to the
    next prompt are that command's output (pure)."""
    blocks: Dict[str, List[str]] = {}
    cmd = ""
    for line in text.splitlines():
        m = _PROMPT.match(line)
        if m:
            cmd = os.path.basename(m.group("cmd"))
            blocks.setdefault(cmd, [])
        elif cmd:
            blocks[cmd].append(line)
    t = Transcript()
    if "rdma_ctl" in blocks:
        t.enabled = parse_rdma_ctl_status("\n".join(blocks["rdma_ctl"]))
    if "ibv_devices" in blocks:
        listed = parse_ibv_devices("\n".join(blocks["ibv_devices"]))
        t.devices = len(listed.devices) if listed.header or listed.devices else None
    speeds = [int(m.group("gbps")) for m in _SPEED.finditer(text)]
    t.gbps = max(speeds) if speeds else None
    return t


def _proof(t: Transcript) -> Optional[str]:
    """What ``t`` proves of a host without RDMA devices, or None."""
    said = []
    if t.enabled is True:
        said.append("`rdma_ctl status` says enabled")
    if t.devices == 0:
        said.append("`ibv_devices` lists no device")
    if t.gbps is not None:
        said.append(f"its Thunderbolt link runs at up to {t.gbps} Gb/s")
    tb4 = t.gbps is not None and t.gbps <= TB4_MAX_GBPS
    if not tb4 and not (t.enabled is True and t.devices == 0 and t.gbps is None):
        return None
    return (
        "; ".join(said)
        + ": Thunderbolt 4 (or older) hardware, which cannot do RDMA whatever rdma_ctl says; "
        "running rdma_ctl enable again will not help: use the ring backend over this link"
    )


def decide(inputs: Sequence[Input], findings: Sequence[Finding]) -> None:
    """Add to each MD689 finding what a transcript of its host among ``inputs`` proves
    (the rule in the module's docstring); changes the findings' meaning in place."""
    hosts = {f.match.groups.get("host", "") for f in findings if f.code == NO_RDMA} - {""}
    if not hosts:
        return
    logs = [i for i in inputs if i.kind == "log" and not i.error and not i.findings]
    for inp in logs:
        name = os.path.basename(inp.source)
        mine = [h for h in hosts if h in name] or (list(hosts) if len(hosts) == 1 else [])
        if len(mine) != 1:
            continue
        text = inp.head or None  # the input's first bytes, kept as it was read
        proof = _proof(read_transcript(text)) if text else None
        if proof is None:
            continue
        for f in findings:
            if f.code == NO_RDMA and f.match.groups.get("host") == mine[0]:
                f.match.meaning += f" Decided by {name}: {proof}."
