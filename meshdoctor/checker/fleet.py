"""Fleet mode: run meshdoctor on every host of a hostfile at once and merge the answers.

Entry points:

* :func:`check_fleet` is ``meshdoctor check --hostfile``: the node check on every host
  (``check --local-only --json --facts``, the hostfile on stdin, through the fan-out of
  :mod:`meshdoctor.fanout`), merged into one verdict (a section per host, every result tagged
  with its host), then the cross-node checks of :mod:`meshdoctor.checker.fleet_model` on the merged facts.
* :func:`gate_probe` runs that check before ``meshdoctor probe --hostfile`` launches.

The node side (``check --local-only --facts``) is :func:`meshdoctor.checker.here.run_here`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional

from meshdoctor import deadline, remote
from meshdoctor.codes.engine import FLEET_REACH
from meshdoctor import fanout
from meshdoctor.checker.fleet_model import HostView
from meshdoctor.fanout import HostReply, install_hint, install_text, remote_python, run_meshdoctor
from meshdoctor.hostfile.model import Hostfile
from meshdoctor.hostfile.rules import host_name_problem
from meshdoctor.hostfile.locality import local_ranks, machines, ssh_to_self
from meshdoctor.mlx.launch_rules import LOCAL_SSH_NAME
from meshdoctor.render import fleet_table
from meshdoctor.model import (
    ERROR,
    FAIL,
    MESH,
    WARN,
    HostInfo,
    Remediation,
    Result,
    Verdict,
)

STARTUP_S = 5.0  # interpreter start and JSON transfer on a slow host, on top of the checks
ONCE_CHECK_S = 5.0  # deadline of a check about the hostfile run here when no host ran it
REACH_CODE = FLEET_REACH.code
STDIN_NAME = "<stdin>"  # the path of a hostfile read from standard input (--hostfile -)


# --- check --hostfile -------------------------------------------------------------------------


@dataclass
class FleetOptions:
    """What ``meshdoctor check`` passes to every node: the per-check ``timeout`` (s), ``only``
    and ``skip`` codes, ``python`` for remote hosts (None: :func:`meshdoctor.fanout.remote_python`),
    ``parallel``: at most this many hosts at once (``--max-parallel``)."""

    timeout: float = 10.0
    only: List[str] = field(default_factory=list)
    skip: List[str] = field(default_factory=list)
    python: Optional[str] = None
    parallel: int = remote.MAX_PARALLEL

    @property
    def deadline(self) -> float:
        """Seconds each host gets: its checks' deadline, ssh's connect timeout, start-up."""
        return self.timeout + remote.CONNECT_TIMEOUT_S + STARTUP_S


def select_checks(opts: FleetOptions):
    """``(node only, node skip, fleet checks, keep node results)`` from ``opts``: each code or
    name goes to the node checks (run on every host) or the cross-node checks it belongs to.
    Raises :class:`meshdoctor.checker.selection.SelectionError` for an unknown name or a
    selection that runs nothing."""
    from meshdoctor.checker.fleet_model import all_fleet_checks
    from meshdoctor.checker.registry import all_checks
    from meshdoctor.checker.selection import (
        NOTHING_TO_RUN,
        SelectionError,
        keys,
        refuse_unknown,
        select,
    )

    node, fleet = all_checks(), all_fleet_checks()
    node_keys = set().union(*(keys(c) for c in node))
    refuse_unknown(opts.only + opts.skip, node + fleet)
    only = [k.lower() for k in opts.only]
    skip = [k.lower() for k in opts.skip]
    node_only = [k for k in only if k in node_keys]
    node_skip = [k for k in skip if k in node_keys]
    fleet_sel = select(fleet, only, skip)
    node_sel = [] if only and not node_only else select(node, node_only, node_skip)
    if not node_sel and not fleet_sel:
        raise SelectionError(NOTHING_TO_RUN)
    if not node_sel:  # only cross-node checks: each host still reports its facts
        return [c.code for c in node if c.reports_facts], [], fleet_sel, False
    return node_only, node_skip, fleet_sel, True


def node_args(ranks: List[int], opts: FleetOptions) -> List[str]:
    """The arguments of the node check one host runs, the hostfile on its standard input
    (:func:`meshdoctor.checker.here.check_args`) and its node facts added."""
    from meshdoctor.checker.here import check_args
    from meshdoctor.hostfile.load import STDIN

    return check_args(
        timeout=opts.timeout,
        only=opts.only,
        skip=opts.skip,
        hostfile=STDIN,
        ranks=ranks,
        facts=True,
    )


def _results(
    items: List[Any], host: str, source: Optional[str] = None, remote_host: bool = False
) -> List[Result]:
    """A host's results, each remedy's command as the operator should paste it
    (:func:`meshdoctor.remote.fleet_remediation`); one it sent in a shape this version cannot read becomes an
    error."""
    out = []
    for d in items:
        try:
            r = Result.from_dict(d, host=host)
            remote.fleet_remediation(r.remediation, host, source, remote_host)
            out.append(r)
        except (ValueError, TypeError, AttributeError) as exc:
            out.append(
                Result(
                    code=REACH_CODE,
                    check="fleet.reach",
                    title=FLEET_REACH.title,
                    status=ERROR,
                    host=host,
                    summary=f"{host} sent a result this meshdoctor cannot read "
                    f"({type(exc).__name__}: {exc}); are the versions far "
                    "apart?",
                    evidence={"hosts": [host]},
                )
            )
    return out


def _unreached(
    host: str, rep: HostReply, python: str, deadline: float, source: Optional[str] = None
) -> Result:
    """MD402 for a host without a verdict; ``source``: the hostfile's path (None: --hosts)."""
    refused = host_name_problem(host)
    hint = install_hint(host, python)
    if refused:  # never reached: no command to offer, the hostfile is what to fix
        where = (
            f'"ssh" entry in {source} ({_once_codes()} names it)'
            if source
            else "name in the --hosts list"
        )
        summary = f"not checked: the host name is refused: {refused}"
        text = (
            f"Fix this host's {where}; nothing is run on a host whose name a shell or ssh "
            "would misread."
        )
        hint = None
    elif rep.unfit == fanout.TOO_OLD:
        summary = f"{host}'s Python is too old for meshdoctor and MLX: {rep.error}"
        text = (
            f"MLX and meshdoctor need Python 3.10 or newer on {host}: install one there with "
            "MLX (the command below, with that interpreter) and name it with --python, "
            "MESHDOCTOR_REMOTE_PYTHON or the hostfile's python."
        )
    elif rep.unfit == fanout.UNSAFE_CACHE:
        summary = f"meshdoctor was not run on {host}: {rep.error}"
        text = (
            "meshdoctor runs on a remote host from a copy it keeps in the user's cache "
            "folder there, and only from a folder that nobody else may write: make it the "
            f"user's own with mode 0700 on {host}."
        )
        hint = None
    elif rep.missing:
        summary = f"meshdoctor does not run on {host} with {python}: {rep.error}"
        text = (
            f"{python} cannot run meshdoctor on {host}: name the interpreter the ranks use "
            "with --python (or MESHDOCTOR_REMOTE_PYTHON). " + install_text(host)
        )
    elif not rep.reachable:
        summary = f"cannot reach {host} over ssh: {rep.error}"
        text = (
            f"Check that `{remote.shown_command(host, ['true'])}` works without a prompt "
            "(BatchMode: a key, the host in your ssh config) and that the host is up; "
            "mlx.launch needs the same. If meshdoctor is missing there, install it: "
            + install_text(host)
        )
    else:
        summary = f"{host} gave no verdict: {rep.error}"
        there = (
            remote.shown_command(host, ["meshdoctor", "check", "--local-only"])
            if rep.via == "ssh"
            else None
        ) or "meshdoctor check --local-only"
        text = (
            f"Run the node check there by hand (`{there}`) and look "
            "at its error; the remote meshdoctor may be too old for fleet mode."
        )
    return Result(
        code=REACH_CODE,
        check="fleet.reach",
        title=FLEET_REACH.title,
        status=ERROR,
        host=host,
        summary=summary,
        remediation=Remediation(text, hint),
        evidence={
            "hosts": [host],
            "error": rep.error,
            "stderr": rep.stderr,
            "returncode": rep.returncode,
            "via": rep.via,
            "deadline_s": deadline,
            "duration_s": round(rep.duration_s, 3),
            "python": python,
        },
    )


def _self_reach(hf: Hostfile, host: str, name: str, res) -> Optional[Result]:
    """MD402 (fail) when ``ssh -o BatchMode=yes NAME true`` did not succeed for ``name``, an
    ssh name of this machine that mlx.launch reaches with ssh (it runs a rank without ssh only
    for ``127.0.0.1``: MLX 0.32.4 ``mlx/_distributed_utils/launch.py``); None when it did.
    ``res``: the :class:`meshdoctor.execute.CommandResult`, None when it did not finish."""
    if res is not None and res.returncode == 0:
        return None
    if res is None or res.timed_out:
        why = f"no answer within {remote.CONNECT_TIMEOUT_S + STARTUP_S:g} s"
    else:
        lines = [ln.strip() for ln in res.stderr.strip().splitlines() if ln.strip()]
        why = lines[-1][:300] if lines else res.describe()
    ranks = [h.rank for h in hf.hosts if h.ssh == name]
    label = ", ".join(map(str, ranks))
    return Result(
        code=REACH_CODE,
        check="fleet.reach",
        title=FLEET_REACH.title,
        status=FAIL,
        host=host,
        summary=f"mlx.launch reaches rank(s) {label} ({name}, this machine) with ssh, and "
        f"`ssh {name}` fails: {why}",
        remediation=Remediation(
            f"mlx.launch runs a rank without ssh only when its ssh name is exactly "
            f'{LOCAL_SSH_NAME} (MLX launch.py): write "ssh": "{LOCAL_SSH_NAME}" for the ranks '
            f"on this machine, or make `ssh -o BatchMode=yes {name} true` work here (an sshd "
            "on this machine, a key, the host in your ssh config).",
            remote.shown_command(name, ["true"]),
        ),
        evidence={
            "hosts": [host],
            "ssh": name,
            "ranks": ranks,
            "error": why,
            "returncode": None if res is None else res.returncode,
            "via": "ssh",
        },
    )


def _once_checks():
    """The node checks about the hostfile rather than the host (``Check.fleet_once``)."""
    from meshdoctor.checker.registry import all_checks

    return [c for c in all_checks() if c.fleet_once]


def _once_codes() -> str:
    """The codes of :func:`_once_checks`, as prose names them (``MD401``)."""
    return ", ".join(c.code for c in _once_checks())


def _hostfile_results(hf: Hostfile, only: List[str], skip: List[str]) -> List[Result]:
    """The checks about the hostfile (``Check.fleet_once``: MD401) on this machine when no
    host could run them (every host unreachable or its name refused): the file's problems are
    the file's, whatever answers, so a hostfile that names no usable host is still no-go, as
    one host's check would have said. The results are about the whole mesh (host ``mesh``, no
    rank)."""
    from meshdoctor.checker.here import context, run_here

    checks = _once_checks()
    codes = [c.code for c in checks]
    ctx = context(hostfile=hf, ranks=[], host=MESH, timeout=ONCE_CHECK_S)
    results = run_here(ctx, checks, only or codes, skip, timeout=ONCE_CHECK_S)
    return [r for r in results if r.code in codes]


def _unanswered(host: str, ranks: List[int], rep: HostReply) -> HostInfo:
    """The host section of a host that sent no verdict."""
    return HostInfo(
        host=host,
        rank=ranks[0],
        reachable=rep.reachable,
        node={
            "verdict": "unknown",
            "exit_code": 3,
            "via": rep.via,
            "ranks": list(ranks),
            "error": rep.error or "",
            "duration_s": round(rep.duration_s, 3),
        },
    )


def _answered(host: str, ranks: List[int], rep: HostReply) -> HostInfo:
    """The host section of a host whose node check answered (``rep.doc``, its verdict)."""
    doc = rep.doc or {}
    first = (doc.get("hosts") or [{}])[0]
    return HostInfo(
        host=host,
        rank=ranks[0],
        reachable=True,
        platform=first.get("platform") or {},
        facts=first.get("facts") or {},
        node={
            "verdict": doc.get("verdict", "unknown"),
            "exit_code": doc.get("exit_code", 3),
            "via": rep.via,
            "ranks": list(ranks),
            "duration_s": round(rep.duration_s, 3),
            "tool_version": str((doc.get("tool") or {}).get("version", "")),
        },
    )


@dataclass
class _Merge:
    """What merging the hosts' replies keeps: a host view each (for the cross-node checks)
    and the codes of the checks about the hostfile already kept (once, not once per host)."""

    hf: Hostfile
    keep_node: bool
    once: Dict[str, Any]  # code -> Check with fleet_once
    views: Dict[str, HostView] = field(default_factory=dict)
    seen_once: set = field(default_factory=set)

    def host_results(self, host: str, rep: HostReply) -> List[Result]:
        """The node results ``host`` sent, as the fleet keeps them: remedies in the operator's
        terms, a check about the hostfile once (the first host's), said through its
        ``fleet_merge``; none when only cross-node checks were selected."""
        source = self.hf.path if self.hf.path and self.hf.path != STDIN_NAME else None
        results = _results(rep.doc["results"], host, source, rep.via == "ssh")
        if not self.keep_node:  # --only named cross-node checks alone
            return []
        results = [r for r in results if r.code not in self.seen_once]
        self.seen_once.update(r.code for r in results if r.code in self.once)
        for r in results:
            merge = self.once[r.code].fleet_merge if r.code in self.once else None
            if merge is not None:
                merge(r, self.hf.path)
        return results

    def add(self, verdict: Verdict, host: str, ranks: List[int], rep: HostReply, fail) -> None:
        """Merge one host's reply into ``verdict``; ``fail(host, rep)``: the reach result of a
        host without a verdict."""
        doc = rep.doc
        if doc is None or not isinstance(doc.get("results"), list):
            verdict.hosts.append(_unanswered(host, ranks, rep))
            verdict.results.append(fail(host, rep))
            self.views[host] = HostView(host, ranks, False)
            return
        info = _answered(host, ranks, rep)
        verdict.hosts.append(info)
        results = self.host_results(host, rep)
        verdict.results.extend(results)
        verdict.extra_reboot.extend(host for x in doc.get("needs_reboot") or [] if x)
        self.views[host] = HostView(host, ranks, True, info.facts, [r.to_dict() for r in results])


def _fleet_section(
    hf: Hostfile,
    verdict: Verdict,
    names: List[str],
    reached: List[str],
    deadline_s: float,
    area_of: Optional[Dict[int, str]] = None,
    fleet_results=(),
    edges: bool = True,
) -> Dict[str, Any]:
    """The verdict's ``fleet`` section: hosts, backend, deadline, the table's areas
    (:mod:`meshdoctor.render.fleet_table`) and, when ``edges`` and a result exports one, the
    edge matrix."""
    areas = fleet_table.areas(
        verdict.results,
        area_of or {},
        [(fc.code, fc.area) for fc, _ in fleet_results],
        names,
        reached,
    )
    matrix = fleet_table.edge_matrix(verdict.results) if edges else None
    return {
        "hosts": names,
        "backend": hf.effective_backend,
        "deadline_s": deadline_s,
        "areas": areas,
        **({"edges": matrix} if matrix is not None else {}),
    }


def check_fleet(hf: Hostfile, verdict: Verdict, opts: FleetOptions) -> None:
    """``meshdoctor check --hostfile``: fill ``verdict`` with every host's node check, then the
    cross-node checks, and the ``fleet`` section (hosts, table areas, edge matrix)."""
    from meshdoctor.checker.fleet_model import FleetView, run_fleet_checks

    node_only, node_skip, fleet_checks, keep_node = select_checks(opts)
    python = opts.python or remote_python()
    node_opts = FleetOptions(timeout=opts.timeout, only=node_only, skip=node_skip)
    order: Dict[str, List[int]] = machines(hf)  # the entries that are this machine: one host
    here = local_ranks(hf)
    local_hosts = {hf.hosts[here[0]].ssh} if here else set()
    self_names = [n for n in ssh_to_self(hf) if not host_name_problem(n)]
    reach_s = remote.CONNECT_TIMEOUT_S + STARTUP_S
    self_ssh = deadline.start(
        {n: (lambda n=n: remote.run(n, ["true"], reach_s)) for n in self_names},
        name="fleet-self-ssh",
    )
    interrupted: Optional[fanout.Interrupted] = None
    try:
        replies = run_meshdoctor(
            list(order),
            lambda host: node_args(order[host], node_opts),
            timeout=opts.deadline,
            python=python,
            stdin=hf.to_launch_json(),
            local=lambda host: host in local_hosts,
            parallel=opts.parallel,
        )
    except fanout.Interrupted as exc:  # the hosts that had answered are kept and reported
        interrupted, replies = exc, exc.replies
    merge = _Merge(hf, keep_node, {c.code: c for c in _once_checks()})
    for host, rep in replies.items():
        merge.add(
            verdict,
            host,
            order[host],
            rep,
            lambda host, rep: _unreached(host, rep, python, opts.deadline, hf.path),
        )
    if interrupted is not None:
        _interrupted(hf, verdict, order, replies, interrupted, opts.deadline, local_hosts)
    for name, o in self_ssh.wait(reach_s + 1.0).items():
        r = _self_reach(hf, next(iter(local_hosts)), name, o.value if o.finished else None)
        if r is not None:
            verdict.results.append(r)
    if keep_node and not merge.seen_once and hf.problems:
        verdict.results.extend(_hostfile_results(hf, node_only, node_skip))
    fleet_results = run_fleet_checks(fleet_checks, FleetView(hf, merge.views))
    verdict.results.extend(r for _, r in fleet_results)
    names = list(order)
    verdict.fleet = _fleet_section(
        hf,
        verdict,
        names,
        [h for h in names if merge.views[h].reachable],
        opts.deadline,
        {id(r): fc.area for fc, r in fleet_results},
        fleet_results,
    )


def _interrupted(
    hf: Hostfile,
    verdict: Verdict,
    order: Dict[str, List[int]],
    replies: Dict[str, HostReply],
    exc: "fanout.Interrupted",
    deadline_s: float,
    local_hosts: set,
) -> None:
    """End an interrupted fleet check: the hosts that had answered stay in ``verdict`` (their
    results are already there), each host that had not is listed as not assessed, the
    ``fleet`` section names them all; raises :class:`meshdoctor.checker.runner.Interrupted`
    (no cross-node check runs on part of the mesh)."""
    from meshdoctor.checker.runner import Interrupted

    missing = [h for h in order if h not in replies]
    for host in missing:
        verdict.hosts.append(
            HostInfo(
                host=host,
                rank=order[host][0],
                reachable=True,  # not known to be unreachable: it had not answered yet
                node={
                    "verdict": "unknown",
                    "exit_code": 3,
                    "via": "local" if host in local_hosts else "ssh",
                    "error": f"interrupted by {exc.signame} before it answered",
                },
            )
        )
    names = list(order)
    # in hostfile order, as an uninterrupted check lists them (they came in as they answered)
    verdict.hosts.sort(key=lambda h: names.index(h.host) if h.host in names else len(names))
    reached = [h for h in names if h in replies]
    verdict.fleet = _fleet_section(hf, verdict, names, reached, deadline_s, edges=False)
    raise Interrupted([], exc.signame, len(missing), len(order), unit="hosts", host=MESH)


def gate_probe(
    hf: Hostfile,
    verdict: Verdict,
    opts: Optional[FleetOptions] = None,
    beside_running_job: bool = False,
    override: str = "pass --beside-running-job to probe anyway",
) -> bool:
    """``meshdoctor probe --hostfile``: run the fleet check first. On a no-go, put the check's
    hosts, its failed results and the ``fleet`` section into the probe's ``verdict`` and return
    False (do not launch); otherwise attach only the ``fleet`` section and return True (a host
    that could not be assessed is left to the probe, which names it in its own terms). A
    result a cross-node check's ``probe_gate`` says refuses the launch (a running job's ranks
    on any host, MD411) refuses it too, unless ``beside_running_job``; ``override``: the
    remedy's words for the caller's way past it, handed to the ``probe_gate``."""
    from meshdoctor.checker.fleet_model import all_fleet_checks

    check = Verdict(command="check")
    check_fleet(hf, check, opts or FleetOptions())
    verdict.fleet = check.fleet
    gates = {fc.code: fc.probe_gate for fc in all_fleet_checks() if fc.probe_gate is not None}
    refused = (
        []
        if beside_running_job
        else [r for r in check.results if r.code in gates and gates[r.code](r, override)]
    )
    if refused or check.verdict == "no-go":
        verdict.hosts.extend(check.hosts)
        verdict.results.extend(r for r in check.results if r.status in (FAIL, ERROR, WARN))
        return False
    return True
