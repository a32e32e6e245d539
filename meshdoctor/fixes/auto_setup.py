"""MD703 auto-setup: one run of ``mlx.distributed_config --auto-setup`` per boot, in order, with
receipts (resolves MD203: a Thunderbolt port without an IPv4-mapped GID).

``mlx.distributed_config --auto-setup`` (MLX ``python/mlx/_distributed_utils/config.py``) runs
one ssh command per host joined by ``;`` whose status it never checks: ``sudo ifconfig bridge0
down``, then per cable an IPv4 /30 address and a host route. The settings do not survive a reboot
on purpose (MLX PR #1902), so it is needed once after every full-fleet reboot; a failed or partial
run leaves hosts half configured, and the runbook JACCL cluster operators follow answers that with
another full-fleet reboot, not a second run.

Preconditions, each reported as an action: ssh and passwordless sudo (``sudo -n true``) on every
host (without it the tool stops and waits for Enter), no MLX rank running anywhere, every host
booted after the last failed or partial attempt, and no successful auto-setup already on this
boot. Then exactly one run, then the fleet verification (MD202 PORT_ACTIVE, MD203 IPv4-mapped
GIDs, MD205 IPv4 and bridge0 down, on every host, with the new hostfile). Each run leaves a
receipt (:mod:`meshdoctor.receipts`) with every host's boot time and the outcome.
"""

from __future__ import annotations

import datetime as _dt
import os
import time
from typing import Any, Dict, List, Optional

from meshdoctor import execute, receipts
from meshdoctor.mlx.backends import JACCL_BACKENDS
from meshdoctor.fixer.model import (
    DISRUPTIVE,
    DONE,
    FAILED,
    FLEET_SCOPE,
    OK,
    PLANNED,
    SKIPPED,
    Action,
    Doc,
    Fix,
    FixContext,
    Verification,
)

CODE = "MD703"
TOOL = "mlx.distributed_config"
RUN_TIMEOUT_S = 300.0
SUDO_TIMEOUT_S = 15.0
VERIFY_CODES = ("MD202", "MD203", "MD205")
SAME_BOOT_S = 2.0  # boot times read twice on one boot differ by less than this
KIND = "auto-setup"


def _iso(epoch: float) -> str:
    return _dt.datetime.fromtimestamp(epoch, _dt.timezone.utc).isoformat(timespec="seconds")


def _state(ctx: FixContext) -> Dict[str, Any]:
    return ctx.options.setdefault("auto_setup", {})


def _output_path(ctx: FixContext) -> str:
    if ctx.output_hostfile:
        return ctx.output_hostfile
    try:
        return str(receipts.state_dir() / "auto-setup-hostfile.json")
    except receipts.StateDirError:  # refused by the receipt step; the path is only shown
        return str(receipts.state_path() / "auto-setup-hostfile.json")


def _pre(host: str, step: str, problem: Optional[str], **detail: Any) -> Action:
    return Action(
        CODE,
        host,
        step,
        [],
        mutates=False,
        outcome=f"{FAILED}: {problem}" if problem else OK,
        detail=detail,
    )


def _sudo(ctx: FixContext) -> List[Action]:
    hx = ctx.hosts
    got = hx.each(lambda t: hx.run(t.name, ["sudo", "-n", "true"], SUDO_TIMEOUT_S))
    out = []
    for host, r in got.items():
        if isinstance(r, Exception):
            why = str(r)
        elif r.ok:
            why = None
        elif host in hx.unreachable:
            why = f"ssh failed: {hx.unreachable[host]}"
        elif r.timed_out or host in hx.unconfirmed:  # slow, not a refusal: not known either way
            why = f"not confirmed: {hx.unconfirmed.get(host) or r.describe()}"
        else:
            why = f"no passwordless sudo ({r.describe()})"
        out.append(_pre(host, "ssh and passwordless sudo (`sudo -n true`)", why))
        out[-1].argv = ["sudo", "-n", "true"]
    return out


def _ranks(ctx: FixContext) -> List[Action]:
    hx = ctx.hosts
    got = hx.each(lambda t: hx.fix(t, ["stale-ranks"], apply=False, include_running=True))
    out = []
    for host, v in got.items():
        if isinstance(v, Exception):
            out.append(_pre(host, "no MLX rank running", f"could not look: {v}"))
            continue
        pids = [a.detail.get("pid") for a in v[0] if a.detail.get("pid")]
        out.append(
            _pre(
                host,
                "no MLX rank running",
                f"{len(pids)} rank(s) running (pids {', '.join(map(str, pids))}); "
                "stop them first (`meshdoctor fix stale-ranks`)"
                if pids
                else None,
                pids=pids,
            )
        )
    return out


def _boots(ctx: FixContext) -> Dict[str, Any]:
    hx = ctx.hosts
    return hx.each(hx.boot_time)


def _backend_pre(backend: str) -> Action:
    """The precondition that the hostfile's backend is one auto-setup configures (JACCL)."""
    return _pre(
        "mesh",
        "the hostfile's backend is JACCL (Thunderbolt RDMA)",
        None
        if backend in JACCL_BACKENDS
        else f"this hostfile's backend is {backend or 'none'}: {TOOL} --auto-setup "
        "configures Thunderbolt RDMA for JACCL (--over thunderbolt), nothing a "
        f"{backend or 'ring'} mesh uses",
        backend=backend,
    )


def _boot_pres(ctx: FixContext, st: Dict[str, Any]) -> List[Action]:
    """Each host's boot time, readable (kept in ``st["boots"]``)."""
    boots = _boots(ctx)
    st["boots"] = {h: b for h, b in boots.items() if not isinstance(b, Exception)}
    return [
        _pre(
            h,
            "boot time readable",
            str(b) if isinstance(b, Exception) else None,
            boot_time=None if isinstance(b, Exception) else b,
        )
        for h, b in boots.items()
    ]


def _receipt_pres(st: Dict[str, Any], names: List[str]) -> List[Action]:
    """The preconditions the receipts of earlier runs set (``st["last"]``: the last run that
    changed something): every receipt readable (fail closed); after a failed or partial run,
    every host rebooted since (``st["reboot"]``); after a successful one on this boot, nothing
    to do (``st["unnecessary"]``)."""
    out: List[Action] = []
    try:
        found, unreadable = receipts.scan(KIND)
    except receipts.StateDirError as exc:
        found, unreadable = [], [str(exc)]
    # a receipt without the time of its run cannot say which boot it taints: as unreadable
    unreadable += [f"{x['path']} has no started_epoch" for x in found if "started_epoch" not in x]
    found = [x for x in found if "started_epoch" in x]
    if unreadable:  # fail closed: an unreadable receipt may be the one of a failed run
        out.append(
            _pre(
                "mesh",
                "every auto-setup receipt readable",
                "cannot tell whether auto-setup ran on this boot: "
                + "; ".join(unreadable[:3])
                + (f" (and {len(unreadable) - 3} more)" if len(unreadable) > 3 else "")
                + "; move the file away once you know how that run ended",
            )
        )
    # a run that changed nothing (its own pre-check stopped it) neither taints nor clears a boot
    counted = [x for x in found if x.get("outcome") != "unchanged"]
    last = counted[-1] if counted else None
    st["last"] = last
    known = st["boots"]
    if last and last.get("outcome") in ("failed", "partial"):
        taint = float(last["started_epoch"])
        older = [h for h in names if h in known and known[h] <= taint]
        st["reboot"] = {
            h: f"booted before the {last['outcome']} auto-setup of {_iso(taint)}" for h in older
        }
        why = (
            (
                f"reboot every node first: the auto-setup of {_iso(taint)} ended "
                f"{last['outcome']}, which taints that boot; booted before it: " + ", ".join(older)
            )
            if older
            else None
        )
        out.append(
            _pre(
                "mesh",
                "every host booted after the last failed or partial auto-setup",
                why,
                receipt=last.get("path"),
            )
        )
    elif last and last.get("outcome") == "ok":
        then = {h: (v or {}).get("boot_time") for h, v in (last.get("hosts") or {}).items()}
        same = all(
            h in then
            and then[h] is not None
            and h in known
            and abs(known[h] - float(then[h])) < SAME_BOOT_S
            for h in names
        )
        if same:
            st["unnecessary"] = (
                f"auto-setup already succeeded on this boot "
                f"({_iso(float(last['started_epoch']))}, receipt "
                f"{os.path.basename(last.get('path', ''))}); not run again"
            )
        out.append(
            _pre("mesh", "no successful auto-setup on this boot yet", None, already=bool(same))
        )
    return out


def _run_steps(
    ctx: FixContext, st: Dict[str, Any], pres: List[Action], names: List[str], backend: str
) -> List[Action]:
    """The steps after the preconditions ``pres``: the one run of the tool (skipped, saying
    why, when a precondition failed or it already succeeded on this boot; ``st["refused"]``
    names the failed ones), then the verification."""
    failed = [a for a in pres if a.failed]
    argv = [
        TOOL,
        "--auto-setup",
        "--over",
        "thunderbolt",
        "--backend",
        backend if backend in JACCL_BACKENDS else "jaccl",
        "--hosts",
        ",".join(names),
        "--output-hostfile",
        _output_path(ctx),
    ]
    once = f"run {TOOL} --auto-setup once"
    if failed:
        st["refused"] = "; ".join(
            f"{a.host}: {a.step}: {a.outcome[len(FAILED) + 2 :]}" for a in failed
        )
        why = "a precondition failed"
        return [Action(CODE, "mesh", once, argv, mutates=False, outcome=f"{SKIPPED}: {why}")]
    if st.get("unnecessary"):
        why = st["unnecessary"]
        return [Action(CODE, "mesh", once, argv, mutates=False, outcome=f"{SKIPPED}: {why}")]
    return [
        Action(
            CODE,
            "mesh",
            f"{once} for {len(names)} host(s), writing {_output_path(ctx)}",
            argv,
        ),
        Action(
            CODE,
            "mesh",
            "verify every host: " + ", ".join(VERIFY_CODES) + " with the new hostfile",
            [],
            mutates=False,
        ),
    ]


def plan(ctx: FixContext) -> List[Action]:
    """The steps this fix would take now (reads state only; changes nothing): the
    preconditions (a hostfile, its backend, sudo, no rank running, boot times, the receipts of
    earlier runs), then the run and its verification (:func:`_run_steps`)."""
    st = _state(ctx)
    if ctx.hostfile is None:
        st["refused"] = (
            "auto-setup configures a whole fleet: pass --hostfile with every host of the mesh"
        )
        return [_pre("mesh", "a hostfile names the fleet", st["refused"])]
    names = ctx.hosts.names()
    backend = ctx.hostfile.effective_backend
    out = [_backend_pre(backend)]
    out += _sudo(ctx) + _ranks(ctx)
    out += _boot_pres(ctx, st)
    out += _receipt_pres(st, names)
    return out + _run_steps(ctx, st, out, names, backend)


def _verify_hosts(ctx: FixContext, hostfile) -> Dict[str, List[str]]:
    """host -> problems after the run; empty list = configured: every check of
    :data:`VERIFY_CODES` passed there (one that failed, erred or only skipped, as they do on a
    host that is not a Mac, is a problem: a skip proves nothing was set up)."""
    hx = ctx.hosts
    got = hx.each(lambda t: hx.check(t, list(VERIFY_CODES), hostfile=hostfile))
    out: Dict[str, List[str]] = {}
    for h, v in got.items():
        if isinstance(v, Exception):
            out[h] = [f"could not verify: {v}"]
            continue
        out[h] = [f"{r['code']} {r['summary']}" for r in v if r["status"] in ("fail", "error")]
        passed = {r["code"] for r in v if r["status"] == "ok"}
        for code in VERIFY_CODES:
            if code not in passed and not any(p.startswith(code) for p in out[h]):
                said = next((r["summary"] for r in v if r["code"] == code), "no result")
                out[h].append(f"{code} not assessed there ({said})")
    return out


def _said(r: "execute.CommandResult") -> str:
    """What the tool said last (its last non-empty stderr or stdout line), else how it
    ended; never empty."""
    for text in (r.stderr, r.stdout):
        lines = [ln.strip() for ln in (text or "").splitlines() if ln.strip()]
        if lines:
            return lines[-1][:300]
    return r.describe() or f"exit status {r.returncode}, no output"


def apply(ctx: FixContext, actions: List[Action]) -> None:
    """Carry out ``actions`` (from :func:`plan`), recording each one's outcome and changed."""
    from meshdoctor.hostfile.load import HostfileError, load

    st = _state(ctx)
    run = next(a for a in actions if a.argv[:1] == [TOOL] and a.outcome == PLANNED)
    try:  # the state before, to tell a run that changed nothing (its own pre-check stopped it)
        before: Optional[Dict[str, List[str]]] = _verify_hosts(ctx, ctx.hostfile)
    except Exception:
        before = None
    started = time.time()
    ctx.progress(f"running {TOOL} --auto-setup (up to {RUN_TIMEOUT_S:g} s)")
    r = execute.run(run.argv, timeout=RUN_TIMEOUT_S, input="")
    run.changed = True  # it ran: whatever it did is done
    out_path = _output_path(ctx)
    try:
        new_hf = load(out_path) if os.path.exists(out_path) else None
    except HostfileError:
        new_hf = None
    try:
        problems = _verify_hosts(ctx, new_hf or ctx.hostfile)
    except Exception as exc:  # the run happened: its receipt must still be written
        problems = {
            h: [f"verification raised {type(exc).__name__}: {exc}"] for h in ctx.hosts.names()
        }
    good = [h for h, p in problems.items() if not p]
    if r.ok and len(good) == len(problems):
        outcome = "ok"
    elif not r.ok and new_hf is None and before is not None and problems == before:
        outcome = "unchanged"  # it stopped before changing anything: the boot is not tainted
    elif good:
        outcome = "partial"
    else:
        outcome = "failed"
    if outcome == "unchanged":
        run.changed = False
        run.outcome = f"{FAILED}: {TOOL} stopped before changing anything: {_said(r)}"
    else:
        run.outcome = (
            f"{DONE}: exit {r.returncode}"
            if outcome == "ok"
            else f"{FAILED}: {outcome} ({_said(r)}; configured: {', '.join(good) or 'none'})"
        )
    for a in actions:
        if a.step.startswith("verify every host"):
            bad = "; ".join(f"{h}: {p[0]}" for h, p in problems.items() if p)
            a.outcome = (
                OK
                if outcome == "ok"
                else f"{FAILED}: " + (bad or f"{TOOL} did not succeed: {_said(r)}")
            )
            a.detail = {"problems": problems}
    receipt = receipts.write(
        KIND,
        {
            "started_epoch": started,
            "started_at": _iso(started),
            "finished_epoch": time.time(),
            "outcome": outcome,
            "argv": run.argv,
            "returncode": r.returncode,
            "output_hostfile": out_path if new_hf is not None else None,
            "hosts": {
                h: {
                    "boot_time": st.get("boots", {}).get(h),
                    "configured": not problems[h],
                    "problems": problems[h][:5],
                }
                for h in problems
            },
        },
    )
    run.detail = {
        "receipt": str(receipt),
        "outcome": outcome,
        "host_receipts": _record_on_hosts(ctx, started, outcome, problems, str(receipt)),
    }
    st.update(outcome=outcome, problems=problems, receipt=str(receipt), said=_said(r))


def _record_on_hosts(
    ctx: FixContext, started: float, outcome: str, problems: Dict[str, List[str]], receipt: str
) -> Dict[str, str]:
    """Each host's own record of this run (:data:`meshdoctor.receipts.HOST_SETUP`, in its state
    directory, so a second operator's meshdoctor sees it: the check MD206 reads it): its boot
    time, whether it was configured, the outcome. host -> path there, or why not."""
    from meshdoctor.checker.here import this_host_name

    st = _state(ctx)
    hx = ctx.hosts
    by = this_host_name()

    def one(t):
        return hx.record(
            t,
            receipts.HOST_SETUP,
            {
                "started_epoch": started,
                "started_at": _iso(started),
                "outcome": outcome,
                "boot_time": st.get("boots", {}).get(t.name),
                "configured": not problems.get(t.name),
                "by": by,
                "operator_receipt": receipt,
            },
        )

    got = hx.each(one)
    return {h: (f"not recorded: {v}" if isinstance(v, Exception) else v) for h, v in got.items()}


def verify(ctx: FixContext) -> Verification:
    """Look again, as the checks this fix resolves do, and say whether it is resolved."""
    st = _state(ctx)
    if st.get("refused"):
        return Verification(
            False, "refused: " + st["refused"], refused=True, needs_reboot=st.get("reboot") or {}
        )
    if st.get("unnecessary"):  # it ran on this boot: is what it set up still there?
        from meshdoctor.hostfile.load import HostfileError, load

        last = st.get("last") or {}
        hf = ctx.hostfile
        try:
            if last.get("output_hostfile") and os.path.exists(last["output_hostfile"]):
                hf = load(last["output_hostfile"])
        except HostfileError:
            pass
        problems = _verify_hosts(ctx, hf)
        if any(problems.values()):
            return Verification(
                False,
                f"{st['unnecessary']}, but what it set up is gone on this boot: "
                + "; ".join(f"{h}: {p[0]}" for h, p in problems.items() if p)
                + "; find what undid it (a port or interface taken down), or reboot every node "
                "and run it once more",
                evidence={"receipt": last.get("path"), "problems": problems},
            )
        return Verification(True, f"{st['unnecessary']}; {', '.join(VERIFY_CODES)} pass")
    problems = st.get("problems")
    if problems is None:  # not applied and nothing pending cannot happen; be explicit anyway
        return Verification(False, "auto-setup did not run")
    ev = {"receipt": st.get("receipt"), "problems": problems}
    if st.get("outcome") == "unchanged":
        return Verification(
            False,
            f"{TOOL} stopped before changing anything ({st.get('said')}): this boot is not "
            "tainted; fix what it says (ssh between the hosts, sudo), then run it again",
            evidence=ev,
        )
    if st.get("outcome") == "ok":
        return Verification(
            True,
            f"every host configured ({', '.join(VERIFY_CODES)} pass); receipt {st.get('receipt')}",
            evidence=ev,
        )
    reboot = {
        h: ("not configured: " + p[0])
        if p
        else "configured, but a failed or partial auto-setup taints this boot of the fleet"
        for h, p in problems.items()
    }
    return Verification(
        False,
        f"auto-setup ended {st['outcome']}: reboot every node, then run it once more",
        needs_reboot=reboot,
        evidence=ev,
    )


FIX = Fix(
    code=CODE,
    name="auto-setup",
    title="mlx.distributed_config --auto-setup, once per boot",
    resolves=("MD203",),
    risk=DISRUPTIVE,
    scope=FLEET_SCOPE,
    platforms=("darwin",),  # the Macs it configures; from a controller of any OS with --hostfile
    backends=JACCL_BACKENDS,  # it configures Thunderbolt RDMA (--over thunderbolt) for JACCL
    plan=plan,
    apply=apply,
    verify=verify,
    doc=Doc(
        meaning="""
Runs `mlx.distributed_config --auto-setup` once for the hostfile's hosts, after a full-fleet
reboot, and confirms the result. The tool takes bridge0 down and gives every Thunderbolt
interface an IPv4 address and route on every host; the settings do not survive a reboot (MLX
PR #1902).

Before it runs, each precondition is reported: ssh and passwordless sudo (`sudo -n true`) on
every host, no MLX rank running anywhere, every host booted after the last failed or partial
attempt ("reboot every node first" names the hosts that were not), and no successful auto-setup
on this boot already (then it is not run again). Afterwards every host must pass MD202 (ports
PORT_ACTIVE), MD203 (IPv4-mapped GIDs) and MD205 (IPv4, bridge0 down) with the new hostfile
(--output-hostfile). Each run leaves a receipt (mode 0600) with every host's boot time and the
outcome in meshdoctor's state directory.
""",
        why="""
A failed or partial run leaves the fleet half configured: the answer is another full-fleet
reboot, not a second run. That is why it runs once per boot and refuses on a tainted boot.
""",
        action="""
Plan first: `meshdoctor fix auto-setup --hostfile FILE` lists the preconditions and the steps;
add --yes to run it.
""",
        sources=(
            "MLX PR #1902 (mlx.distributed_config --auto-setup)",
            "MLX distributed documentation (mlx.distributed_config)",
        ),
    ),
)
