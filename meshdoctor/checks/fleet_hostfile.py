"""MD401 hostfile: the mlx.launch hostfile is consistent and names this machine.

The rules are those of :mod:`meshdoctor.hostfile.rules`, found once when the hostfile is loaded
(``Hostfile.problems``), the same validation ``probe`` applies (mlx.launch's hostfile format, mlx
0.32.4); each inconsistency fails with the JSON path of the entry (``hosts[2].rdma[2]: must be
null``).
"""

from __future__ import annotations

from typing import Optional

from meshdoctor.checker.model import Check, Doc, fail, ok, skip, warn
from meshdoctor.facts.context import NodeContext
from meshdoctor.mlx.backends import JACCL_BACKENDS
from meshdoctor.hostfile.phrases import n_ranks
from meshdoctor.model import MESH, Export, Result

STDIN_NAME = "<stdin>"  # the path of a hostfile read from standard input (hostfile.load)


def _remedy(hf, path: str) -> str:
    """What to do about the problem at ``path``: edit the file there; for a ``--hosts`` list
    (no file to edit), what to write in the list instead."""
    if hf.path is not None:
        return f"Edit {hf.path} at {path}, or regenerate it with mlx.distributed_config."
    if path.endswith(".ips") and hf.effective_backend == "ring":
        return (
            "--hosts gives each host only its name, and the ring backend connects to IP "
            "addresses: list the hosts by IP (--hosts 10.0.0.1,10.0.0.2: mlx.launch takes an "
            'IP as both), or pass --hostfile with "ips" for each host.'
        )
    return f"Fix the --hosts list at {path}, or pass --hostfile."


def run(ctx: NodeContext):
    hf = ctx.hostfile
    if hf is None:
        return skip("no --hostfile given")
    source = hf.path or "the --hosts list"  # a hostfile built from --hosts has no file
    found = [
        fail(
            f"{path}: {msg}",
            evidence={"hostfile": hf.path, "path": path},
            remediation=_remedy(hf, path),
        )
        for path, msg in hf.problems
    ]
    ev = {
        "hostfile": hf.path,
        "backend": hf.effective_backend,
        "world_size": hf.world_size,
        "local_ranks": ctx.ranks,
    }
    if hf.effective_backend in JACCL_BACKENDS and len(ctx.ranks) > 1:
        found.append(
            warn(
                f"this machine is {ctx.rank_label} of a {hf.effective_backend} "
                "hostfile: JACCL runs one rank per Mac (each rank owns its Thunderbolt "
                "ports)",
                evidence=ev,
                remediation="Give each Mac one entry; check the ssh names and IPs.",
            )
        )
    if not ctx.ranks and hf.world_size:
        found.append(
            warn(
                f"this machine is none of the {hf.world_size} hosts in {source} "
                "(matched by ssh name, host name and local IPs)",
                evidence=ev,
                remediation="Run the check on a node of the mesh, or fix the ssh "
                "names/IPs in the hostfile.",
            )
        )
    if found:
        return found
    return ok(
        f"{n_ranks(hf.world_size)}, backend {hf.effective_backend}; this machine is "
        f"{ctx.rank_label}",
        evidence=ev,
    )


def fleet_merge(r: Result, path: Optional[str]) -> None:
    """A host's result of this check as the fleet check keeps it (in place): each host read
    the hostfile from its standard input, the operator's is ``path`` (None: ``--hosts``);
    a rule about an entry of the file (``hosts[2].rdma[2]``) is the file's, not the host's
    that read it, so it is about the whole mesh."""
    if r.remediation is not None:
        r.remediation.text = r.remediation.text.replace(STDIN_NAME, path or "the --hosts list")
    if r.evidence.get("hostfile") == STDIN_NAME and path:
        r.evidence["hostfile"] = path
    if str(r.evidence.get("path", "")).startswith("hosts"):
        r.host, r.rank = MESH, None


CHECK = Check(
    code="MD401",
    exports=(Export("backend", "backend"),),
    name="fleet.hostfile",
    title="Hostfile",
    run=run,
    fleet_once=True,
    fleet_merge=fleet_merge,
    doc=Doc(
        meaning="""
Checks the mlx.launch hostfile given with --hostfile: a list of hosts or an object with
"backend", "envs" and "hosts"; each host has an "ssh" name, "ips" and for JACCL an "rdma" row.

Fails on each inconsistency, naming the entry: unknown backend, malformed envs, a host without
ssh name, invalid IPs, duplicate hosts (JACCL), a ring hostfile of one rank (mlx.launch hands a
lone ring rank an empty MLX_HOSTFILE that mx.distributed.init() cannot parse), a ring host
without IPs (from --hosts: name the hosts by IP), a JACCL row that does not
have one entry per rank, a non-null diagonal (hosts[i].rdma[i] must be null), a missing device
towards a peer (every peer for jaccl, both ring neighbours for jaccl-ring), no IP on rank 0 (the
coordinator), an IPv6 address where MLX reads "ip:port" (any ring IP, JACCL's coordinator: rank 0's
first IP; MLX splits it at the first colon), more than 8 ranks in a JACCL mesh, an entry that is this machine (by its ssh name
or an address) but lists an address this machine does not have, an entry whose ssh name is
another host but that lists a loopback address beside ranks on other hosts (mlx.launch runs a
rank without ssh only for the ssh name 127.0.0.1; peers cannot reach another host's loopback). Host names hold only letters,
digits and . _ - @ : % (no shell metacharacters). Warns when this machine is not in the hostfile.
""",
        why="""
mlx.launch starts every rank from this file: a wrong entry makes a rank fail or wait forever
(a rank could not listen on an address its machine does not have). `probe` applies the same
rules and refuses such a hostfile (exit 2). A file that cannot be read or is not JSON is a usage
error (exit 2) naming the line and column.
""",
        action="Fix the named entry, or regenerate the file with mlx.distributed_config.",
        sources=(
            "mlx/_distributed_utils/launch.py (the hostfile format)",
            "mlx.distributed_config (MLX distributed documentation)",
            "mlx/distributed/utils.cpp and jaccl/lib/jaccl/tcp.cpp parse_address (mlx 0.30-0.32.4:"
            " 'ip:port' split at the first colon, IPv4 only)",
        ),
    ),
)
