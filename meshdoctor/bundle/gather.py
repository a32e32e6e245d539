"""Every host's share at once: this machine's collected here, the others' by running
``meshdoctor bundle --local-only`` there over ssh (:func:`meshdoctor.fanout.run_meshdoctor`, the
hostfile on stdin), each host under one deadline (:func:`host_deadline`)."""

from __future__ import annotations

from typing import Dict, List, Optional, Union

from meshdoctor import deadline, remote
from meshdoctor.bundle import collect
from meshdoctor.bundle.collect import HostBundle

STARTUP_S = 10.0  # interpreter start and the transfer of a few MiB on a slow link


def host_deadline(timeout: float) -> float:
    """Seconds one host gets: its check (``2 x timeout + 10``), its tools (all at once), the
    reports, ssh's connect timeout and start-up."""
    return 2 * timeout + 10 + collect.TOOL_S + 2 + remote.CONNECT_TIMEOUT_S + STARTUP_S


def share_args(since_s: float, timeout: float, with_hostfile: bool) -> List[str]:
    """The arguments of ``meshdoctor bundle`` that make a host collect its own share."""
    from meshdoctor.hostfile.load import STDIN

    args = ["bundle", "--local-only", "--since", f"{since_s:g}", "--timeout", f"{timeout:g}"]
    return args + (["--hostfile", STDIN] if with_hostfile else [])


def gather(
    hosts: List[str],
    local_hosts: List[str],
    hostfile_text: Optional[str],
    since_s: float,
    timeout: float,
    python: Optional[str] = None,
) -> Dict[str, Union[HostBundle, str]]:
    """host -> its share, or one line saying why there is none, in ``hosts`` order;
    ``local_hosts`` are collected in this process."""
    from meshdoctor.fanout import run_meshdoctor

    limit = host_deadline(timeout)
    mine = [h for h in hosts if h in local_hosts]
    others = [h for h in hosts if h not in local_hosts]
    here = deadline.start(
        {h: (lambda: collect.collect_here(hostfile_text, since_s, timeout)) for h in mine[:1]},
        name="bundle-here",
    )
    replies = (
        run_meshdoctor(
            others,
            share_args(since_s, timeout, hostfile_text is not None),
            timeout=limit,
            python=python,
            stdin=hostfile_text,
        )
        if others
        else {}
    )
    got = here.wait(limit)
    out: Dict[str, Union[HostBundle, str]] = {}
    for h in hosts:
        if h in local_hosts:
            o = got.get(mine[0]) if mine else None
            if o is not None and o.finished and o.error is None:
                out[h] = o.value
            else:
                why = repr(o.error) if o is not None and o.error else f"not done in {limit:g} s"
                out[h] = f"could not collect on this machine: {why}"
            continue
        rep = replies[h]
        try:
            if rep.doc is None:
                raise ValueError(rep.error or "no answer")
            out[h] = HostBundle.from_json(rep.doc.get("bundle"))
        except ValueError as exc:
            out[h] = f"could not collect on {h}: {exc}"
    return out
