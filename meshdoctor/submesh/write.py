"""``--healthy-hostfile OUT``: the restricted hostfile written atomically, and the one result
(MD410) that lists passing and failing hosts and says what was written."""

from __future__ import annotations

from typing import Optional

from meshdoctor.codes.engine import HEALTHY_SUBMESH
from meshdoctor.hostfile.model import Hostfile
from meshdoctor.model import ERROR, OK, WARN, Remediation, Result
from meshdoctor.submesh.select import Split, passing_ranks, restrict

MESH = "mesh"


def _result(status: str, summary: str, evidence: dict, remedy: Optional[Remediation]) -> Result:
    return Result(
        code=HEALTHY_SUBMESH.code,
        check=HEALTHY_SUBMESH.names[0],
        title=HEALTHY_SUBMESH.title,
        status=status,
        summary=summary,
        host=MESH,
        evidence=evidence,
        remediation=remedy,
    )


def report(hf: Hostfile, split: Split, out: str) -> Result:
    """Write the hostfile ``split`` leaves (:func:`meshdoctor.submesh.select.restrict`) to
    ``out`` and say so; nothing is written when the passing hosts hold fewer than two ranks or
    ``split.blocked``.
    Evidence: ``passing``, ``failing`` (host -> reasons), ``cables_cut`` ("host rank->peer:
    kept devices"), ``written`` (the path, or None)."""
    from meshdoctor.text import shell_line

    failing = {h: split.failing[h] for h in split.hosts if h in split.failing}
    cut = [
        f"rank {i}->{j}: {'+'.join(devs) or '(none)'}"
        for (i, j), devs in sorted(split.cables.items())
        if any(i in split.ranks[h] for h in split.passing)
        and any(j in split.ranks[h] for h in split.passing)
    ]
    evidence = {
        "passing": list(split.passing),
        "failing": failing,
        "cables_cut": cut,
        "blocked": list(split.blocked),
        "written": None,
    }
    lists = f"passing: {', '.join(split.passing) or 'none'}; failing: " + (
        "; ".join(f"{h} ({failing[h][0][:160]})" for h in failing) or "none"
    )
    if split.blocked:
        return _result(
            WARN,
            f"no healthy hostfile written: a finding about the whole mesh names no host "
            f"({split.blocked[0][:200]}); {lists}",
            evidence,
            Remediation("Fix what that finding names, then check again."),
        )
    sub = restrict(hf, split)
    if sub is None:
        ranks = passing_ranks(split)
        return _result(
            WARN,
            f"no healthy hostfile written: fewer than two ranks pass ({ranks} rank(s) on "
            f"{len(split.passing)} of {len(split.hosts)} host(s)); {lists}",
            evidence,
            Remediation(
                "Repair the failing hosts named, then check again."
                if failing
                else "Nothing failed, and a mesh needs two ranks or more: there is no sub-mesh "
                "to write; launch the hostfile as it is."
            ),
        )
    from meshdoctor.receipts import write_path

    try:
        write_path(out, (sub.to_launch_json() + "\n").encode())
    except OSError as exc:
        return _result(
            ERROR,
            f"could not write the healthy hostfile {out}: {exc.strerror or exc}; {lists}",
            evidence,
            Remediation("Name a path in a folder you can write with --healthy-hostfile."),
        )
    evidence["written"] = out
    evidence["world_size"] = sub.world_size
    status = OK if not failing and not cut else WARN
    what = (
        f"{len(split.passing)} of {len(split.hosts)} hosts pass, wrote {out} "
        f"(ranks 0-{sub.world_size - 1}"
        + (f", {len(cut) // 2} cable(s) cut" if cut else "")
        + f"); {lists}"
    )
    return _result(
        status,
        what,
        evidence,
        Remediation(
            f"Launch on what is left (mlx.launch --hostfile {shell_line([out])} and your "
            "script); repair the failing hosts, then check the whole hostfile again."
        ),
    )
