"""MD114 NCCL variables: ``NCCL_*`` settings left in the shell (or in the hostfile's ``envs``)
that change or slow the transport of MLX's nccl backend.

What each does: NCCL environment variables documentation (docs.nvidia.com/deeplearning/nccl,
"Environment Variables"). The ranks inherit the shell's environment (mlx.launch and
``meshdoctor probe`` both pass it on), so a variable exported for one debugging session keeps
changing every later job.
"""

from __future__ import annotations

import os

from meshdoctor.checker.model import Check, Doc, ok, warn
from meshdoctor.facts.context import NodeContext

EFFECTS = {
    "NCCL_P2P_DISABLE": "disables direct GPU-to-GPU transfers (NVLink/PCIe peer-to-peer): "
    "traffic between GPUs of one host goes through host memory",
    "NCCL_SHM_DISABLE": "disables the shared-memory transport between processes of one host: "
    "NCCL falls back to the network",
    "NCCL_IB_DISABLE": "disables InfiniBand/RoCE: NCCL uses TCP sockets between hosts",
    "NCCL_SOCKET_IFNAME": "pins NCCL's bootstrap and socket traffic to the named interfaces: "
    "init hangs or fails when they do not exist on every host",
    "NCCL_DEBUG": "makes NCCL print to every rank's stderr (INFO and TRACE slow start-up and "
    "bury real errors)",
}


def _disabling(name: str, value: str) -> bool:
    """``NCCL_*_DISABLE`` variables only act when set to a true value (1)."""
    return not name.endswith("_DISABLE") or value.strip() not in ("0", "")


def run(ctx: NodeContext):
    found = {}
    for k, v in os.environ.items():
        if k.startswith("NCCL_"):
            found[k] = ("shell", v)
    if ctx.hostfile is not None:
        for k, v in ctx.hostfile.env_dict().items():
            if k.startswith("NCCL_"):
                found[k] = ("hostfile envs", v)
    risky = {k: sv for k, sv in found.items() if k in EFFECTS and _disabling(k, sv[1])}
    others = sorted(k for k in found if k not in risky)
    if not risky:
        return ok(
            "no NCCL variable that changes the transport is set"
            + (f" (also set: {', '.join(others)})" if others else ""),
            evidence={"set": {k: v for k, (_, v) in found.items()}},
        )
    out = []
    for k, (src, v) in sorted(risky.items()):
        out.append(
            warn(
                f"{k}={v} ({src}): {EFFECTS[k]}",
                evidence={"variable": k, "value": v, "source": src, "others_set": others},
                remediation=f"unset {k} before launching, unless you set it on purpose"
                if src == "shell"
                else f'remove {k} from the hostfile\'s "envs" unless it is meant for every job',
            )
        )
    return out


CHECK = Check(
    code="MD114",
    name="nccl.environment",
    title="NCCL variables left in the environment",
    run=run,
    platforms=("linux",),
    doc=Doc(
        meaning="""
Looks for NCCL_* variables in the shell that runs the launch and in the hostfile's "envs". Warns
on those that change or slow the transport, saying what each does: NCCL_P2P_DISABLE (no
NVLink/PCIe peer-to-peer), NCCL_SHM_DISABLE (no shared memory inside a host), NCCL_IB_DISABLE
(TCP sockets instead of InfiniBand/RoCE), NCCL_SOCKET_IFNAME (pins traffic to interfaces that
must exist on every host) and NCCL_DEBUG (stderr noise, slower start-up). Other NCCL_* variables
are listed in the evidence.
""",
        why="""
The ranks inherit them (mlx.launch and meshdoctor probe both pass the environment on), so a
variable exported for one debugging session keeps changing or slowing every later job.
""",
        action="""
Unset them unless they are meant for every job (NCCL documentation, "Environment Variables").
""",
        sources=(
            "NCCL environment variables documentation "
            '(docs.nvidia.com/deeplearning/nccl, "Environment Variables")',
            "MLX mlx.launch (mlx/_distributed_utils/launch.py: ranks inherit the environment)",
        ),
    ),
)
