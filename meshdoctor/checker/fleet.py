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
from meshdoctor.fanout import HostReply, install_hint, install_text, remote_python, run_meshdoctor
from meshdoctor.hostfile.model import Hostfile
from meshdoctor.hostfile.rules import host_name_problem
from meshdoctor.hostfile.locality import local_ranks, machines, ssh_to_self
from meshdoctor.mlx.launch_rules import LOCAL_SSH_NAME
from meshdoctor.model import (
    CRITICAL,
    ERROR,
    FAIL,
    OK,
    SKIP,
    WARN,
    HostInfo,
    Remediation,
    Result,
    Verdict,
)

STARTUP_S = 5.0  # interpreter start and JSON transfer on a slow host, on top of the checks
HOSTFILE_CHECK_S = 5.0  # deadline of the hostfile check (MD401) run here when no host ran it
REACH_CODE = FLEET_REACH.code  # MD402
HOSTFILE_CODE = "MD401"
IN_USE_CODE = "MD411"  # a running job's ranks on a host (meshdoctor.checks.fleet.in_use)
STDIN_NAME = "<stdin>"  # the path of a hostfile read from standard input (--hostfile -)
ORDER = [FAIL, ERROR, WARN, OK, SKIP]
# fleet table columns: node result codes by hundred, then the cross-node checks' areas
NODE_AREAS = {"1": "node", "2": "rdma", "3": "procs", "4": "node"}
AREAS = [
    "reach",
    "node",
    "rdma",
    "procs",
    "versions",
    "edges",
    "cabling",
    "addressing",
    "env",
    "ports",
]


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
        return ["MD103"], [], fleet_sel, False
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


def fleet_remedy(command: str, host: str, source: Optional[str], remote_host: bool):
    """The command of a remedy a host's node check sent, as the operator running the fleet
    check should paste it: a ``meshdoctor fix ...`` keeps the hostfile that produced it
    (``meshdoctor fix stale-ranks --hostfile h.json --yes``: ``--yes`` alone would clean only
    the machine it is pasted on); any other command of a remote host runs there
    (:func:`meshdoctor.remote.shown_remedy`). ``source``: the hostfile's path (None: ``--hosts``,
    the command then targets the host alone)."""
    import shlex

    from meshdoctor.text import shell_line

    try:
        argv = shlex.split(command)
    except ValueError:
        argv = []
    if argv[:2] == ["meshdoctor", "fix"] and "--hostfile" not in argv:
        if source:
            rest = [w for w in argv[2:] if w != "--yes"]
            return shell_line(
                ["meshdoctor", "fix", *rest, "--hostfile", source]
                + (["--yes"] if "--yes" in argv else [])
            )
        if not remote_host:
            return command
    return remote.shown_remedy(host, command) if remote_host else command


def fleet_prose(text: str, host: str, source: Optional[str], remote_host: bool) -> str:
    """A remedy's prose as the operator running the fleet check should read it: each command
    it quotes in backquotes (`kill -KILL 332`) is rewritten as :func:`fleet_remedy` rewrites
    the remedy's command (run on the remote host through ``ssh HOST``, a ``meshdoctor fix``
    keeping the hostfile); an ``ssh ...`` command is left as it is."""
    import re

    def one(m: "re.Match") -> str:
        command = m.group(1)
        if command.split(" ", 1)[0] == "ssh":
            return m.group(0)
        shown = fleet_remedy(command, host, source, remote_host)
        return f"`{shown}`" if shown else m.group(0)

    return re.sub(r"`([^`\n]+)`", one, text)


def _results(
    items: List[Any], host: str, source: Optional[str] = None, remote_host: bool = False
) -> List[Result]:
    """A host's results, each remedy's command as the operator should paste it
    (:func:`fleet_remedy`); one it sent in a shape this version cannot read becomes an
    error."""
    out = []
    for d in items:
        try:
            r = Result.from_dict(d, host=host)
            if r.remediation is not None and r.remediation.command:
                r.remediation.command = fleet_remedy(
                    r.remediation.command, host, source, remote_host
                )
            if r.remediation is not None and "`" in r.remediation.text:
                r.remediation.text = fleet_prose(r.remediation.text, host, source, remote_host)
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
            f'"ssh" entry in {source} (MD401 names it)' if source else "name in the --hosts list"
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


def _area(code: str) -> str:
    return "reach" if code == REACH_CODE else NODE_AREAS.get(code[2:3], "node")


def _table(
    results: List[Result],
    area_of: Dict[int, str],
    fleet_results,
    names: List[str],
    reached: List[str],
):
    """The fleet table (area -> host -> worst ``{status, code, summary}``) and the edge matrix
    (from the edges check's evidence, None without one). A result about the whole mesh counts
    for every host that answered; a host no finding of a cross-node check names is ok there."""
    from meshdoctor.checker.fleet_model import cell_hosts

    areas: Dict[str, Dict[str, Any]] = {a: {} for a in AREAS}
    edges = None
    for r in results:
        a = area_of.get(id(r)) or _area(r.code)
        if "edge_matrix" in r.evidence:
            edges = r.evidence["edge_matrix"]
        for h in cell_hosts(r.to_dict(), names, reached):
            cell = areas.setdefault(a, {}).get(h)
            if cell is None or ORDER.index(r.status) < ORDER.index(cell["status"]):
                areas[a][h] = {"status": r.status, "code": r.code, "summary": r.summary}
    if areas["reach"]:  # only worth a column when a host did not answer
        for h in reached:
            areas["reach"].setdefault(h, {"status": OK, "code": REACH_CODE, "summary": "answered"})
    for fc in {fc.code: fc for fc, _ in fleet_results}.values():
        cells = areas.setdefault(fc.area, {})
        if (
            fc.area in NODE_AREAS.values()
            or not cells
            or all(c["status"] == SKIP for c in cells.values())
        ):
            continue
        for h in reached:
            cells.setdefault(h, {"status": OK, "code": fc.code, "summary": "nothing found"})
    return areas, edges


def _hostfile_results(hf: Hostfile, only: List[str], skip: List[str]) -> List[Result]:
    """MD401 on this machine when no host could check the hostfile (every host unreachable or
    its name refused): the file's problems are the file's, whatever answers, so a hostfile that
    names no usable host is still no-go, as one host's check would have said. The results are
    about the whole mesh (host ``mesh``, no rank)."""
    from meshdoctor.checker.fleet_model import MESH
    from meshdoctor.checker.here import context, run_here
    from meshdoctor.checker.registry import all_checks

    checks = [c for c in all_checks() if c.code == HOSTFILE_CODE]
    ctx = context(hostfile=hf, ranks=[], host=MESH, timeout=HOSTFILE_CHECK_S)
    results = run_here(ctx, checks, only or [HOSTFILE_CODE], skip, timeout=HOSTFILE_CHECK_S)
    return [r for r in results if r.code == HOSTFILE_CODE]


def check_fleet(hf: Hostfile, verdict: Verdict, opts: FleetOptions) -> None:
    """``meshdoctor check --hostfile``: fill ``verdict`` with every host's node check, then the
    cross-node checks, and the ``fleet`` section (hosts, table areas, edge matrix)."""
    from meshdoctor.checker.fleet_model import MESH, HostView, FleetView, run_fleet_checks

    node_only, node_skip, fleet_checks, keep_node = select_checks(opts)
    python = opts.python or remote_python()
    node_opts = FleetOptions(timeout=opts.timeout, only=node_only, skip=node_skip)
    order: Dict[str, List[int]] = machines(hf)  # the entries that are this machine: one host
    here = local_ranks(hf)
    local_hosts = {hf.hosts[here[0]].ssh} if here else set()
    text = hf.to_launch_json()
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
            stdin=text,
            local=lambda host: host in local_hosts,
            parallel=opts.parallel,
        )
    except fanout.Interrupted as exc:  # the hosts that had answered are kept and reported
        interrupted, replies = exc, exc.replies
    views: Dict[str, HostView] = {}
    seen_hostfile = False
    area_of: Dict[int, str] = {}
    for host, rep in replies.items():
        ranks = order[host]
        doc = rep.doc
        node_hosts = doc.get("hosts") if doc else None
        if doc is None or not isinstance(doc.get("results"), list):
            verdict.hosts.append(
                HostInfo(
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
            )
            r = _unreached(host, rep, python, opts.deadline, hf.path)
            verdict.results.append(r)
            views[host] = HostView(host, ranks, False)
            continue
        first = node_hosts[0] if node_hosts else {}
        facts = first.get("facts") or {}
        verdict.hosts.append(
            HostInfo(
                host=host,
                rank=ranks[0],
                reachable=True,
                platform=first.get("platform") or {},
                facts=facts,
                node={
                    "verdict": doc.get("verdict", "unknown"),
                    "exit_code": doc.get("exit_code", 3),
                    "via": rep.via,
                    "ranks": list(ranks),
                    "duration_s": round(rep.duration_s, 3),
                    "tool_version": str((doc.get("tool") or {}).get("version", "")),
                },
            )
        )
        source = hf.path if hf.path and hf.path != STDIN_NAME else None
        results = _results(doc["results"], host, source, rep.via == "ssh")
        if not keep_node:  # --only named cross-node checks alone
            results = []
        elif seen_hostfile:  # the hostfile's own rules (MD401) once, not once per host
            results = [r for r in results if r.code != HOSTFILE_CODE]
        seen_hostfile = seen_hostfile or any(r.code == HOSTFILE_CODE for r in results)
        for r in results:
            if r.code != HOSTFILE_CODE:
                continue
            if r.remediation is not None:
                source = hf.path or "the --hosts list"
                r.remediation.text = r.remediation.text.replace("<stdin>", source)
            if r.evidence.get("hostfile") == STDIN_NAME and hf.path:
                r.evidence["hostfile"] = hf.path
            # a rule about an entry of the file is the file's, not the host's that read it
            if str(r.evidence.get("path", "")).startswith("hosts"):
                r.host, r.rank = MESH, None
        verdict.results.extend(results)
        verdict.extra_reboot.extend(host for x in doc.get("needs_reboot") or [] if x)
        views[host] = HostView(host, ranks, True, facts, [r.to_dict() for r in results])
    if interrupted is not None:
        _interrupted(hf, verdict, order, replies, interrupted, opts.deadline, local_hosts)
    for name, o in self_ssh.wait(reach_s + 1.0).items():
        r = _self_reach(hf, next(iter(local_hosts)), name, o.value if o.finished else None)
        if r is not None:
            verdict.results.append(r)
    if keep_node and not seen_hostfile and hf.problems:
        verdict.results.extend(_hostfile_results(hf, node_only, node_skip))
    view = FleetView(hf, views)
    fleet_results = run_fleet_checks(fleet_checks, view)
    for fc, r in fleet_results:
        area_of[id(r)] = fc.area
        verdict.results.append(r)
    names = list(order)
    areas, edges = _table(
        verdict.results, area_of, fleet_results, names, [h for h in names if views[h].reachable]
    )
    verdict.fleet = {
        "hosts": names,
        "backend": hf.effective_backend,
        "deadline_s": opts.deadline,
        "areas": areas,
        **({"edges": edges} if edges is not None else {}),
    }


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
    from meshdoctor.checker.fleet_model import MESH
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
    areas, _ = _table(verdict.results, {}, [], names, [h for h in names if h in replies])
    verdict.fleet = {
        "hosts": names,
        "backend": hf.effective_backend,
        "deadline_s": deadline_s,
        "areas": areas,
    }
    raise Interrupted([], exc.signame, len(missing), len(order), unit="hosts", host=MESH)


def gate_probe(
    hf: Hostfile,
    verdict: Verdict,
    opts: Optional[FleetOptions] = None,
    beside_running_job: bool = False,
) -> bool:
    """``meshdoctor probe --hostfile``: run the fleet check first. On a no-go, put the check's
    hosts, its failed results and the ``fleet`` section into the probe's ``verdict`` and return
    False (do not launch); otherwise attach only the ``fleet`` section and return True (a host
    that could not be assessed is left to the probe, which names it in its own terms). A
    running job's ranks on any host (MD411) refuse the launch too, as a fail naming the job,
    unless ``beside_running_job``."""
    check = Verdict(command="check")
    check_fleet(hf, check, opts or FleetOptions())
    verdict.fleet = check.fleet
    in_use = [r for r in check.results if r.code == IN_USE_CODE and r.status == WARN]
    if in_use and not beside_running_job:
        verdict.hosts.extend(check.hosts)
        for r in in_use:
            r.status, r.severity = FAIL, CRITICAL
            r.summary = "not launched: " + r.summary
            if r.remediation is not None:
                r.remediation.text = (
                    "A probe beside a running job shares its RDMA devices' queue pairs and can "
                    "break it: let the job finish, or pass --beside-running-job to probe anyway."
                )
        verdict.results.extend(r for r in check.results if r.status in (FAIL, ERROR, WARN))
        return False
    if check.verdict != "no-go":
        return True
    verdict.hosts.extend(check.hosts)
    verdict.results.extend(r for r in check.results if r.status in (FAIL, ERROR, WARN))
    return False
