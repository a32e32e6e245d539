"""One rule everywhere, bad input, honest words: what a user sees when `check` and `probe` meet the
same hostfile, a host name a shell would read, a backend the build lacks, a run where nothing
applied, an unreachable host, a hostfile nested too deep, an unusable extra check module, text
with terminal escapes, and a deadline shorter than the collective."""

from __future__ import annotations

import json
import socket
import sys

import pytest

from meshdoctor import text
from meshdoctor.render import verdict as render
from meshdoctor.hostfile import (
    host_name_problem,
    locality_problems,
    n_ranks,
    parse,
    ranks_phrase,
)
from tests.helpers import run_cli, write


def _probe_env(clean_env):
    env = dict(clean_env)
    env.pop("MESHDOCTOR_PROBE_FAULT", None)
    return env


# --- one locality rule, one hostfile validation --------------------------------------------


def test_check_and_probe_give_one_answer_on_a_hostfile_that_contradicts_itself(tmp_path, clean_env):
    me = socket.gethostname()
    hf = write(
        tmp_path / "hosts.json",
        json.dumps([{"ssh": me, "ips": ["10.1.1.1"]}, {"ssh": "localhost", "ips": ["127.0.0.1"]}]),
    )
    said = "hosts[0].ips[0]: 10.1.1.1 is not an address of this machine"
    r = run_cli("check", "--json", "--only", "MD401", "--hostfile", str(hf), env=clean_env)
    assert r.rc == 1 and r.doc["verdict"] == "no-go"  # README: a failure is exit 1
    assert any(
        x["summary"].startswith(said) and x["status"] == "fail" for x in r.results("MD401")
    ), r.results("MD401")
    r = run_cli("probe", "--hostfile", str(hf), "--size", "4096", env=_probe_env(clean_env))
    assert r.rc == 2 and said in r.err and str(hf) in r.err  # README: a hostfile it cannot use


def test_the_locality_rule_names_the_address_and_spares_loopback_and_remote_hosts():
    names = {"vm", "192.168.7.2"}
    hf = parse(
        json.dumps(
            [
                {"ssh": "vm", "ips": ["10.1.1.1", "192.168.7.2"]},
                {"ssh": "other", "ips": ["127.0.0.2"]},
                {"ssh": "far", "ips": ["10.1.1.3"]},
            ]
        )
    )
    got = dict(locality_problems(hf, names))
    assert list(got) == ["hosts[0].ips[0]"]
    assert "its ssh name 'vm' is this machine" in got["hosts[0].ips[0]"]


@pytest.mark.parametrize("name", ["a;touch${IFS}x", "$(reboot)", "`id`", "h|x", "h&", "a'b"])
def test_host_names_a_shell_would_read_are_refused_by_check_and_probe(tmp_path, clean_env, name):
    hf = write(
        tmp_path / "h.json",
        json.dumps(
            [{"ssh": name, "ips": ["198.51.100.7"]}, {"ssh": "localhost", "ips": ["127.0.0.1"]}]
        ),
    )
    r = run_cli("probe", "--hostfile", str(hf), "--size", "4096", env=_probe_env(clean_env))
    assert r.rc == 2 and "cannot be an ssh destination" in r.err, (r.out, r.err)
    r = run_cli(
        "check", "--json", "--only", "MD401", "--local-only", "--hostfile", str(hf), env=clean_env
    )
    assert r.rc == 1
    assert any(x["summary"].startswith("hosts[0].ssh: ") for x in r.results("MD401"))
    assert host_name_problem(name)


def test_ordinary_host_names_pass_the_one_rule():
    for name in ("m1", "mac-studio.local", "user@m2", "10.0.0.1", "fe80::1%en0", "h_1"):
        assert host_name_problem(name) is None, name


def test_remote_uses_the_same_host_name_rule():
    from meshdoctor.remote import RemoteError, check_host

    with pytest.raises(RemoteError, match="cannot be an ssh destination"):
        check_host("a;touch${IFS}x")


@pytest.mark.parametrize("backend", ["nccl", "mpi"])
def test_md102_fails_for_any_hostfile_backend_the_build_lacks(tmp_path, clean_env, backend):
    import mlx.core as mx

    if mx.distributed.is_available(backend=backend):
        pytest.skip(f"this MLX build has {backend}")
    hf = write(
        tmp_path / "h.json",
        json.dumps(
            {
                "backend": backend,
                "hosts": [
                    {"ssh": "localhost", "ips": ["127.0.0.1"]},
                    {"ssh": "m2", "ips": ["198.51.100.9"]},
                ],
            }
        ),
    )
    r = run_cli(
        "check", "--json", "--only", "MD102", "--local-only", "--hostfile", str(hf), env=clean_env
    )
    (res,) = r.results("MD102")
    assert res["status"] == "fail" and r.rc == 1
    assert f"backend {backend} is not available in this build" in res["summary"]


def test_a_run_where_every_check_skipped_is_not_go(clean_env):
    env = dict(clean_env, MESHDOCTOR_PLATFORM="linux")
    r = run_cli("check", "--only", "MD205", "--strict", env=env)
    assert r.rc == 3 and "nothing applied here" in r.out and "GO (exit 0)" not in r.out
    r = run_cli("check", "--json", "--only", "MD205", env=env)
    assert r.rc == 3 and r.doc["verdict"] == "unknown"
    assert [x["status"] for x in r.doc["results"]] == ["skip"]


def test_a_result_about_an_unreachable_host_is_never_ok(clean_env, tmp_path):
    # a network-namespace test host whose link is down: ssh cannot reach it, and no packet
    # leaves this machine
    from tests import netns

    why = netns.unavailable()
    if why:
        pytest.skip(why)
    with netns.TestBed(1) as tb:
        tb.link("h0", False)
        hf = write(
            tmp_path / "hosts.json",
            json.dumps(
                [{"ssh": "h0", "ips": [tb.ips["h0"]]}, {"ssh": "localhost", "ips": ["127.0.0.1"]}]
            ),
        )
        env = dict(_probe_env(clean_env), MESHDOCTOR_SSH_CONFIG=str(tb.ssh_config))
        r = run_cli(
            "probe",
            "--hostfile",
            str(hf),
            "--size",
            "4096",
            "--json",
            "--no-check",
            env=env,
            timeout=120,
        )
    # 3 when its rank is found unstartable first; 1 when group formation already failed on it
    assert r.rc in (1, 3) and r.doc["verdict"] != "go", (r.out, r.err)
    assert not [x for x in r.doc["results"] if x["host"] == "h0" and x["status"] == "ok"]
    left = {x["host"]: x for x in r.doc["results"] if x["code"] == "MD506"}
    assert left["h0"]["status"] != "ok", r.doc["results"]
    assert "not checked for leftovers" in left["h0"]["summary"]
    ok = [x for x in left.values() if x["status"] == "ok"]
    assert all("h0" not in x["summary"] and "localhost" in x["summary"] for x in ok)
    assert {h["host"]: h["reachable"] for h in r.doc["hosts"]}["h0"] is False


def test_mlx_missing_from_meshdoctor_python_is_one_answer_from_check_and_probe(tmp_path, clean_env):
    for python in (str(tmp_path / "no-such-python"), sys.executable + "-missing"):
        env = dict(_probe_env(clean_env), MESHDOCTOR_PYTHON=python)
        c = run_cli("check", "--json", "--only", "MD102", env=env)
        p = run_cli("probe", "-n", "2", "--size", "4096", "--json", env=env)
        assert c.rc == p.rc == 1, (c.out, p.out)
        assert "no such executable file" in c.results("MD102")[0]["summary"]
        assert "no such executable file" in p.results("MD509")[0]["summary"]
        assert "not found on PATH" not in c.out + p.out  # an absolute path is not looked up
    bare = tmp_path / "bin" / "python3"  # an interpreter without mlx
    bare.parent.mkdir()
    bare.write_text(f'#!/bin/sh\nexec {sys.base_prefix}/bin/python3 -S "$@"\n')
    bare.chmod(0o755)
    env = dict(_probe_env(clean_env), MESHDOCTOR_PYTHON=str(bare))
    c = run_cli("check", "--json", "--only", "MD102", env=env)
    p = run_cli("probe", "-n", "2", "--size", "4096", "--json", env=env)
    assert c.rc == p.rc == 1, (c.out, p.out, p.err)
    for said in (c.results("MD102")[0]["summary"], p.results("MD509")[0]["summary"]):
        assert said.startswith("MLX is not importable from ") and "No module named 'mlx'" in said


# --- bad input ---------------------------------------------------------------------------


def test_a_hostfile_nested_too_deep_is_a_usage_error_naming_the_file(tmp_path, clean_env):
    hf = write(tmp_path / "deep.json", "[" * 100000 + "]" * 100000)
    for args in (("check", "--only", "MD401"), ("probe", "--size", "4096")):
        r = run_cli(*args, "--hostfile", str(hf), env=_probe_env(clean_env))
        assert r.rc == 2 and "deep.json" in r.err and "nested too deeply" in r.err, r.err
        assert "Traceback" not in r.err


def test_an_extra_check_module_that_does_not_import_is_a_usage_error(clean_env):
    env = dict(clean_env, MESHDOCTOR_EXTRA_CHECKS="nope.mod")
    for args in (("list-checks",), ("check", "--json"), ("explain", "MD101")):
        r = run_cli(*args, env=env)
        assert r.rc == 2, (args, r.out, r.err)
        assert "'nope.mod', which could not be imported: ModuleNotFoundError" in r.err
        assert "internal error" not in r.err + r.out


def test_text_from_outside_is_escaped_before_it_reaches_the_terminal(clean_env, tmp_path):
    pkg = tmp_path / "site_checks"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "noisy.py").write_text(
        "from meshdoctor.checker.model import Check, Doc, warn\n"
        "def run(ctx):\n"
        "    return warn('tool said \\x1b[2J\\x1b[31mred\\x00 [red]markup[/red] \\x9b done',\n"
        "                remediation='run [bold]this[/bold]\\x07')\n"
        "CHECK = Check(code='MD197', name='test.noisy', title='Noisy \\x1b]0;title\\x07',\n"
        "              run=run, doc=Doc(meaning='prints what a tool printed', why='a test',\n"
        "                               action='nothing', sources=('tests',)))\n"
    )
    env = dict(clean_env, MESHDOCTOR_EXTRA_CHECKS="site_checks.noisy", PYTHONPATH=str(tmp_path))
    r = run_cli("check", "--only", "MD197", env=env)
    assert "\x1b" not in r.out and "\x00" not in r.out and "\x07" not in r.out
    assert "\x9b" not in r.out
    assert "\\x1b[31mred\\x00 [red]markup[/red]" in r.out  # shown, not obeyed
    assert "run [bold]this[/bold]\\x07" in r.out
    r = run_cli("list-checks", env=env)
    assert "\x1b" not in r.out and "Noisy \\x1b]0;title\\x07" in r.out


def test_the_escape_helper():
    assert render.plain("a\x1b[0mb\x00c\td\ne") == "a\\x1b[0mb\\x00c\td\ne"
    assert render.clean("[red]x[/]") == "\\[red]x\\[/]"


def test_a_deadline_shorter_than_the_collective_blames_no_rank():
    from meshdoctor.probe.config import ProbeConfig, local_hostfile
    from meshdoctor.probe.events import RankState
    from meshdoctor.probe.launcher import LaunchOutcome
    from meshdoctor.probe.report import _hang_result

    cfg = ProbeConfig(hostfile=local_hostfile(2), ops=["all_sum"], size=256 << 20, timeout=0.1)
    step = {"op": "all_sum", "phase": "warmup", "iter": 0, "seq": 3}
    ranks = [RankState(r, "localhost", True) for r in range(2)]
    out = LaunchOutcome("hang", "run", ranks, {}, 0.1, None, started_at=0.0)
    out.hang = {
        "step": step,
        "not_arrived": [],
        "no_heartbeat": [],
        "waiting": [dict(step, rank=r, host="localhost", waited_s=0.12) for r in range(2)],
    }
    res = _hang_result(cfg, out)
    assert res.summary.startswith("all 2 ranks entered all_sum #0")
    assert "none left within the 0.1 s deadline (--timeout 0.1)" in res.summary
    assert "the deadline sized for 256MiB would be 23.4 s" in res.summary
    assert "never arrived" not in res.summary + res.remediation.text
    assert "probe again without --timeout" in res.remediation.text
    assert res.host == "mesh" and res.evidence["auto_deadline_s"] == pytest.approx(23.4, 0.01)


def test_a_short_deadline_blames_no_rank_that_was_still_on_its_way():
    """Under load one rank may not have reached the step when a 0.1 s --timeout passes: it is
    late, not faulty (its heartbeat is fresh), so no rank is blamed."""
    from meshdoctor.probe.config import ProbeConfig, local_hostfile
    from meshdoctor.probe.events import RankState
    from meshdoctor.probe.launcher import LaunchOutcome
    from meshdoctor.probe.report import _hang_result

    cfg = ProbeConfig(hostfile=local_hostfile(2), ops=["all_sum"], size=256 << 20, timeout=0.1)
    step = {"op": "all_sum", "phase": "warmup", "iter": 0, "seq": 3}
    ranks = [RankState(r, "localhost", True) for r in range(2)]
    out = LaunchOutcome("hang", "run", ranks, {}, 0.1, None, started_at=0.0)
    out.hang = {
        "step": step,
        "not_arrived": [dict(step, rank=1, host="localhost")],
        "no_heartbeat": [],
        "waiting": [dict(step, rank=0, host="localhost", waited_s=0.12)],
    }
    res = _hang_result(cfg, out)
    assert res.host == "mesh" and "not yet arrived: rank 1" in res.summary, res.summary
    assert "the deadline sized for 256MiB would be 23.4 s" in res.summary
    assert "never arrived" not in res.summary + res.remediation.text
    assert "probe again without --timeout" in res.remediation.text


def test_a_real_short_deadline_on_256mib_all_sum_suggests_a_longer_one(clean_env):
    r = run_cli(
        "probe",
        "-n",
        "2",
        "--op",
        "all_sum",
        "--size",
        "256MiB",
        "--timeout",
        "0.1",
        "--json",
        env=_probe_env(clean_env),
        timeout=120,
    )
    (hang,) = [x for x in r.doc["results"] if x["code"] == "MD503"]
    # whether both ranks were inside the step at 0.1 s depends on the machine's load; either
    # way no rank is blamed and the deadline sized for the message is shown
    assert "the deadline sized for 256MiB would be" in hang["summary"]
    assert "never arrived" not in hang["summary"] and hang["host"] == "mesh"
    assert "probe again without --timeout" in hang["remediation"]["text"]


# --- small things ------------------------------------------------------------------------


def test_rank_counts_and_lists_read_as_english():
    assert n_ranks(1) == "1 rank" and n_ranks(3) == "3 ranks"
    assert ranks_phrase([0]) == "rank 0" and ranks_phrase([0, 1]) == "ranks 0 and 1"
    assert ranks_phrase([0, 1, 2]) == "ranks 0, 1 and 2"
    assert ranks_phrase([0, 1, 2, 3, 4, 7, 9]) == "ranks 0-4, 7 and 9"
    assert ranks_phrase(range(8000)) == "ranks 0-7999"


def test_check_says_one_rank_and_both_ranks_in_words(tmp_path, clean_env):
    one = write(tmp_path / "one.json", json.dumps([{"ssh": "localhost", "ips": ["127.0.0.1"]}]))
    r = run_cli("check", "--json", "--only", "MD401", "--hostfile", str(one), env=clean_env)
    assert r.results("MD401")[0]["summary"] == "1 rank, backend ring; this machine is rank 0"
    two = write(
        tmp_path / "two.json",
        json.dumps(
            [{"ssh": "localhost", "ips": ["127.0.0.1"]}, {"ssh": "localhost", "ips": ["127.0.0.2"]}]
        ),
    )
    r = run_cli("check", "--json", "--only", "MD401", "--hostfile", str(two), env=clean_env)
    assert r.results("MD401")[0]["summary"].endswith("this machine is ranks 0 and 1")


def test_a_non_object_host_entry_is_reported_once():
    got = list(
        parse(
            json.dumps([5, {"ssh": "localhost", "ips": ["127.0.0.1"]}]), names={"localhost"}
        ).problems
    )
    assert got == [("hosts[0]", '5 must be an object with "ssh", "ips", "rdma"')]


def test_explain_completes_every_code_and_name_and_knows_result_names():
    from click.shell_completion import ShellComplete

    from meshdoctor.cli import cli

    comp = ShellComplete(cli, {}, "meshdoctor", "_MESHDOCTOR_COMPLETE")
    words = [c.value for c in comp.get_completions(["explain"], "")]
    assert {
        "MD101",
        "MD503",
        "MD506",
        "MD601",
        "rdma.gid",
        "ring.connect-failed",
        "probe.leftovers",
    } <= set(words)
    assert [c.value for c in comp.get_completions(["explain"], "MD5")][:2] == ["MD501", "MD502"]
    r = run_cli("explain", "probe.leftovers")
    assert r.rc == 0 and r.out.startswith("MD506: probe leftovers")
    r = run_cli("explain", "probe.all_sum")
    assert r.rc == 0 and "MD504" in r.out and "MD505" in r.out


def test_probe_strict_turns_a_warning_into_no_go():
    from meshdoctor.model import Result, Verdict

    v = Verdict(
        command="probe",
        strict=True,
        results=[Result("MD507", "probe.soak", "warn", "soak did not complete")],
    )
    assert v.exit_code == 1
    r = run_cli("probe", "--help")
    assert "--strict" in r.out and "Treat warnings as failures" in r.out


def test_small_bandwidths_keep_their_digits_and_sizes_match_the_elements():
    from meshdoctor.probe.figures import format_rate
    from meshdoctor.probe.sizes import format_size_exact

    assert format_rate(12.3456) == "12.346 GB/s" and format_rate(0.00275) == "2.750 MB/s"
    assert format_rate(2e-7) == "200 B/s" and format_rate(3e-6) == "3.000 KB/s"
    assert format_size_exact(4096) == "4KiB" and format_size_exact(4092) == "4092B"


def test_a_three_rank_probe_labels_all_gather_by_the_bytes_it_checked(clean_env):
    r = run_cli(
        "probe",
        "-n",
        "3",
        "--size",
        "4096",
        "--iters",
        "1",
        "--op",
        "all_gather",
        "--json",
        env=_probe_env(clean_env),
        timeout=120,
    )
    assert r.rc == 0, (r.out, r.err)
    bw = [x for x in r.doc["results"] if x["code"] == "MD505"][0]["summary"]
    fig = r.doc["probe"]["ops"][0]
    assert fig["size_bytes"] == 4092 and bw.startswith("all_gather 4092B: busbw ")
    assert fig["checked"] == 3 * 2 * (4092 // 4)  # ranks x (warmup + iters) x elements
    assert "0.000 GB/s" not in bw


# --- --hostfile - ------------------------------------------------------------------------


def test_hostfile_dash_reads_standard_input(clean_env):
    text = json.dumps([{"ssh": "localhost", "ips": ["127.0.0.1"]}])
    r = run_cli("check", "--json", "--only", "MD401", "--hostfile", "-", env=clean_env, input=text)
    assert r.rc == 0 and r.results("MD401")[0]["evidence"]["hostfile"] == "<stdin>"
    r = run_cli(
        "probe",
        "--hostfile",
        "-",
        "--size",
        "4096",
        env=_probe_env(clean_env),
        input='[{"ssh": "a;b"}, {"ssh": "localhost"}]',
    )
    assert r.rc == 2 and "<stdin>: hosts[0].ssh" in r.err
    r = run_cli("check", "--only", "MD401", "--hostfile", "-", env=clean_env, input="[1,")
    assert r.rc == 2 and "<stdin>: not valid JSON" in r.err


# --- progress ----------------------------------------------------------------------------


def test_progress_lines_in_a_log_come_at_a_bounded_rate_with_step_elapsed_and_deadline():
    import io

    from meshdoctor.probe.log import ProbeLog

    now = [100.0]
    buf = io.StringIO()
    log = ProbeLog(2, 23.4, buf, interval=5.0, clock=lambda: now[0])
    log.tick(force=True)
    for i in range(50):  # a burst of events within one second: no line
        now[0] += 0.02
        log.on_event(
            i % 2, {"ev": "enter", "op": "all_sum", "phase": "timed", "iter": i, "seq": i + 2}, None
        )
    now[0] += 5.0
    log.on_event(
        0, {"ev": "enter", "op": "all_sum", "phase": "timed", "iter": 99, "seq": 101}, None
    )
    lines = buf.getvalue().splitlines()
    assert len(lines) == 2, lines
    assert lines[0] == "probe: starting ranks, ranks ready 0/2, 0.0 s elapsed, step deadline 23.4 s"
    assert lines[1].startswith(
        "probe: all_sum #99 (timed, step 101), ranks ready 0/2, 6.0 s elapsed, step deadline 23.4 s"
    )


def test_a_probe_writing_to_a_log_shows_progress_lines(clean_env):
    r = run_cli(
        "probe",
        "-n",
        "2",
        "--size",
        "4096",
        "--iters",
        "1",
        "--json",
        env=_probe_env(clean_env),
        timeout=120,
    )
    assert r.rc == 0
    lines = [ln for ln in r.err.splitlines() if ln.startswith("probe: ")]
    assert lines and "s elapsed, step deadline 10.0 s" in lines[0]
    r = run_cli(
        "probe",
        "-n",
        "2",
        "--size",
        "4096",
        "--iters",
        "1",
        "--quiet",
        env=_probe_env(clean_env),
        timeout=120,
    )
    assert "probe: " not in r.err  # --quiet stays quiet


def test_the_terminal_progress_label_is_never_blank():
    from meshdoctor.probe.progress import ProbeProgress

    with ProbeProgress(10, 2) as bar:
        bar.on_event(0, {"ev": "ready"}, None)
        bar.on_event(
            0, {"ev": "enter", "op": "all_sum", "phase": "timed", "iter": 0, "seq": 2}, None
        )
        bar.on_event(0, {"ev": "leave", "op": "all_sum", "seq": 2}, None)
        desc = bar.progress.tasks[0].description
    assert desc.startswith("all_sum #0 (timed, step 2)") and "ranks ready 1/2" in desc


# --- requires-python ---------------------------------------------------------------------


def test_requires_python_says_what_mlx_needs():
    """pip must refuse an interpreter MLX cannot install into, and MD101 must agree."""
    import tomllib
    from importlib import metadata
    from pathlib import Path

    from meshdoctor.checks.node_platform import MIN_PYTHON
    from packaging.specifiers import SpecifierSet

    root = Path(__file__).resolve().parents[2]
    ours = SpecifierSet(
        tomllib.loads((root / "pyproject.toml").read_text())["project"]["requires-python"]
    )
    mlx = SpecifierSet(metadata.metadata("mlx")["Requires-Python"] or "")
    for minor in range(6, 16):
        v = f"3.{minor}"
        assert (v in ours) == (v in mlx), (v, str(ours), str(mlx))
    assert f"{MIN_PYTHON[0]}.{MIN_PYTHON[1]}" in ours
    assert f"{MIN_PYTHON[0]}.{MIN_PYTHON[1] - 1}" not in ours
    assert "Python 3.10+" in (root / "README.md").read_text()


def test_every_printer_escapes_control_characters_the_same_way():
    """One rule for text from outside: the plain printer, log lines, other hosts' verdicts and
    the fleet table all show a control character as ``\\xNN`` (never obey it, never hide it)."""
    from meshdoctor import signatures
    from meshdoctor.render import fleet as render_fleet
    from meshdoctor.model import Result

    raw = "dev\x1b]0;t\x07\x00"
    want = "dev\\x1b]0;t\\x07\\x00"
    assert render.plain(raw) == want
    assert signatures.printable("dev\x07\x00") == "dev\\x07\\x00"  # ANSI colour is removed
    got = Result.from_dict(
        {
            "code": "MD201",
            "check": raw,
            "status": "fail",
            "summary": raw,
            "remediation": {"text": raw, "command": raw},
        },
        host="h1",
    )
    assert got.summary == got.check == got.remediation.text == got.remediation.command == want
    assert render_fleet.safe(raw + "\n[red]") == want + "\\n\\[red]"
    assert render.clean_line(raw + "\n[red]") == want + "\\n\\[red]"
    # the Trojan Source bidi controls (CVE-2021-42574) and the Unicode line separators: shown
    # as \uNNNN by every printer, one_line or not
    bidi = "\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u2028\u2029"
    shown = "".join(f"\\u{ord(c):04x}" for c in bidi)
    for printer in (render.plain, text.one_line, signatures.printable, render_fleet.safe):
        assert printer(f"ok{bidi}.exe") == f"ok{shown}.exe", printer
    assert (
        Result.from_dict({"code": "MD201", "status": "fail", "summary": bidi}, host="h").summary
        == shown
    )
    assert text.one_line("a\nb\tc") == "a\\nb\\tc" and text.printable("a\nb\tc") == "a\nb\tc"


def _rendered(v, encoding: str = "utf-8") -> str:
    import io

    from rich.console import Console

    buf = io.TextIOWrapper(io.BytesIO(), encoding=encoding, errors="replace")
    render.verdict(v, out=Console(file=buf, width=100, highlight=False, soft_wrap=True))
    buf.flush()
    return buf.buffer.getvalue().decode(encoding)


def test_no_field_of_a_result_or_an_action_can_forge_a_line():
    """Code, host, title, summary, remediation text and command, and every field of a fix
    action are each printed on one line: a newline from outside shows as \\n."""
    from meshdoctor.model import Remediation, Result, Verdict

    forged = "x\nFAKE \u2714 MD999 all fine\u202e"
    v = Verdict(
        command="check",
        results=[
            Result(
                "MD201",
                "rdma.x",
                "fail",
                forged,
                host=forged,
                title=forged,
                remediation=Remediation(forged, forged),
            ),
            Result("MD101", "node.platform", "ok", "fine", host="localhost"),
        ],
        extra_reboot=[forged],
    )
    out = _rendered(v)
    assert not [ln for ln in out.splitlines() if ln.lstrip().startswith("FAKE")], out
    assert "\u202e" not in out and "x\\nFAKE \u2714 MD999 all fine\\u202e" in out
    assert out.count("x\\nFAKE") == 6  # host, title, summary, remedy, command, reboot

    import io

    from rich.console import Console

    buf = io.StringIO()
    action = {"host": forged, "code": "MD701", "step": forged, "outcome": forged}
    render.actions([dict(action, argv=["kill", forged])], out=Console(file=buf, width=200))
    lines = buf.getvalue().splitlines()
    assert len(lines) == 2 and "kill 'x\\nFAKE" in lines[1], lines


def test_commands_offered_to_copy_quote_every_word_from_outside():
    """A command line shown to the user is built with shlex.quote; an ssh command is offered
    only for a host name the one host-name rule accepts."""
    import shlex

    from meshdoctor import fanout, remote

    hint = fanout.install_hint("m2", "/opt/my py/bin/python3")
    assert shlex.split(hint) == ["ssh", "m2", "'/opt/my py/bin/python3' -m pip install meshdoctor"]
    assert remote.shown_command("user@m2", ["true"]) == "ssh user@m2 true"
    for bad in ("a;rm -rf /", "-oProxyCommand=touch /tmp/X", "host\nFAKE", "$(id)", ""):
        assert fanout.install_hint(bad, "python3") is None, bad
        assert remote.shown_command(bad, ["true"]) is None, bad
    assert text.shell_line(["kill", "-9", 12, "1;reboot"]) == "kill -9 12 '1;reboot'"
    from meshdoctor import execute  # how a command that ran is described in a summary

    got = execute.run(["/opt/no such/python3", "-c", "x;y"], timeout=5).describe()
    assert got == "`'/opt/no such/python3' -c 'x;y'`: no such executable file"


REFUSED_HOSTS = (
    "a;rm -rf /",
    "-oProxyCommand=touch {mark}",
    "host\nFAKE \u2714 MD999 all fine\u202e",
)


@pytest.mark.parametrize("name", REFUSED_HOSTS)
def test_a_refused_host_name_gets_no_command_and_forges_no_line(tmp_path, clean_env, name):
    """Fleet mode with a host the hostfile rule refuses: never reached (no ssh runs), its MD402
    says the name is refused and to fix the hostfile's "ssh" entry, and offers no command;
    nothing of the name forges a line or reorders one. The shell's MLX_METAL_FAST_SYNCH with a
    newline (MD103) is shown on one line too."""
    mark = tmp_path / "X"
    name = name.format(mark=mark)
    hf = write(
        tmp_path / "h.json",
        json.dumps(
            [{"ssh": "localhost", "ips": ["127.0.0.1"]}, {"ssh": name, "ips": ["192.0.2.7"]}]
        ),
    )
    env = dict(clean_env, MLX_METAL_FAST_SYNCH="1\nFAKE \u2714 MD998 fine\u202e")
    args = ("check", "--hostfile", str(hf), "--skip", "MD406", "--timeout", "5")
    r = run_cli(*args, "--json", env=env)
    (reach,) = r.results("MD402")
    assert reach["host"] == name and reach["status"] == "error" and r.rc == 1
    assert reach["summary"].startswith("not checked: the host name is refused: ")
    assert f'Fix this host\'s "ssh" entry in {hf} (MD401' in reach["remediation"]["text"]
    assert "command" not in reach["remediation"] or not reach["remediation"]["command"]
    (md103,) = r.results("MD103")
    assert 'add "MLX_METAL_FAST_SYNCH=1\\nFAKE' in md103["remediation"]["text"]  # JSON, escaped
    human = run_cli(*args, env=env)
    assert human.rc == 1
    lines = human.out.splitlines()
    assert not [ln for ln in lines if ln.lstrip().startswith("FAKE")], human.out
    assert "\u202e" not in human.out and "$ ssh" not in human.out and "pip install" not in human.out
    assert not [ln for ln in lines if "ssh a;rm" in ln or "ssh -oProxy" in ln], human.out
    (line,) = [ln for ln in lines if ln.startswith("? MD402")]
    assert "host name is refused" in line
    assert not mark.exists()
    # the hostfile's envs value with a newline, on the node's own ok line
    hf2 = write(
        tmp_path / "e.json",
        json.dumps({"envs": ["MLX_METAL_FAST_SYNCH=\nFAKE ok"], "hosts": [{"ssh": "localhost"}]}),
    )
    r = run_cli("check", "--local-only", "--hostfile", str(hf2), "--only", "MD103", env=clean_env)
    assert "MLX_METAL_FAST_SYNCH='\\nFAKE ok'" in r.out
    assert not [ln for ln in r.out.splitlines() if ln.startswith("FAKE")], r.out


@pytest.mark.parametrize("encoding", ["ascii", "latin-1"])
def test_the_fleet_table_uses_the_ascii_symbols_where_the_output_cannot_encode_them(
    tmp_path, clean_env, encoding
):
    hf = write(
        tmp_path / "lo2.json",
        json.dumps([{"ssh": "localhost", "ips": ["127.0.0.1"]}] * 2),
    )
    env = dict(clean_env, PYTHONIOENCODING=encoding)
    r = run_cli("check", "--hostfile", str(hf), "--only", "MD401", env=env)
    assert r.rc == 0, (r.out, r.err)
    (row,) = [ln for ln in r.out.splitlines() if "localhost" in ln]
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert cells[:2] == ["localhost", "0"] and cells[2:] and set(cells[2:]) == {"+"}, row
    assert (
        "?" not in r.out
        and "\u2714" not in r.out
        and r.out.rstrip().splitlines()[-1].startswith("GO (exit 0)")
    )
    # an unencodable fleet table cell, a result line and the edge matrix share the table
    from meshdoctor.model import Result, Verdict

    v = Verdict(
        command="check",
        results=[Result("MD402", "fleet.reach", "error", "no answer", host="m2")],
        fleet={
            "hosts": ["m1", "m2"],
            "backend": "jaccl",
            "areas": {
                "reach": {
                    "m1": {"status": "ok", "code": "MD402"},
                    "m2": {"status": "error", "code": "MD402"},
                },
                "node": {"m1": {"status": "warn", "code": "MD103"}},
            },
            "edges": {
                "hosts": ["m1", "m2"],
                "summary": "1 of 2 down",
                "cells": [
                    [None, {"devices": ["rdma_en3"], "states": ["PORT_ACTIVE"]}],
                    [{"devices": ["rdma_en4"], "states": ["PORT_DOWN"]}, None],
                ],
            },
        },
    )
    out = _rendered(v, encoding)
    table, edges = out.split("edges:")
    rows = {
        ln.split("|")[1].strip(): ln.split("|")[3:5] for ln in table.splitlines() if "| m" in ln
    }
    assert rows["m1"] == ["   +   ", "   !   "] and rows["m2"] == ["   ?   ", "   .   "], out
    assert "rdma_en3 +" in edges and "rdma_en4 x PORT_DOWN" in edges, out
    assert out.splitlines()[-2].startswith("? MD402")  # ? means error, in the table and below


def test_fix_and_fleet_run_the_same_interpreter_on_remote_hosts(monkeypatch):
    """Fleet mode, the fixes and the probe reach other hosts with one interpreter rule, like
    mlx.launch's --python: MESHDOCTOR_REMOTE_PYTHON, else this interpreter."""
    import sys

    from meshdoctor import fanout

    from meshdoctor.hostfile import from_list
    from meshdoctor.probe.config import ProbeConfig

    monkeypatch.delenv("MESHDOCTOR_REMOTE_PYTHON", raising=False)
    assert fanout.remote_python() == sys.executable
    assert ProbeConfig(hostfile=from_list("a,b")).remote_python == sys.executable
    monkeypatch.setenv("MESHDOCTOR_REMOTE_PYTHON", "/opt/py/bin/python3")
    assert fanout.remote_python() == "/opt/py/bin/python3"
    assert ProbeConfig(hostfile=from_list("a,b")).remote_python == "/opt/py/bin/python3"


def test_an_ipv6_ring_hostfile_is_refused_by_check_and_probe(tmp_path, clean_env):
    """MLX's ring parses "ip:port" at the first colon (mlx 0.32.4): "::1" cannot launch, so
    check fails MD401 on it and probe refuses the file (exit 2) with the same words."""
    hf = write(
        tmp_path / "v6.json",
        json.dumps(
            {
                "backend": "ring",
                "hosts": [
                    {"ssh": "localhost", "ips": ["::1"]},
                    {"ssh": "localhost", "ips": ["::1"]},
                ],
            }
        ),
    )
    said = "hosts[0].ips[0]: ::1 is an IPv6 address: the ring backend connects to IPv4"
    r = run_cli("check", "--json", "--only", "MD401", "--hostfile", str(hf), env=clean_env)
    assert r.rc == 1, r.out
    assert any(x["summary"].startswith(said) and x["status"] == "fail" for x in r.results("MD401"))
    r = run_cli("probe", "--hostfile", str(hf), "--size", "4096", env=_probe_env(clean_env))
    assert r.rc == 2 and said in r.err and "Can't parse address" in r.err, (r.out, r.err)


def test_ipv6_is_refused_only_where_mlx_reads_ip_port():
    """The JACCL coordinator (rank 0's first IP) is read the same way; an IPv6 address that MLX
    never parses (a later JACCL IP, a one-rank ring) is left alone."""
    rows = [[None, "rdma_en2"], ["rdma_en2", None]]
    jaccl = parse(
        json.dumps(
            {
                "backend": "jaccl",
                "hosts": [
                    {"ssh": "a", "ips": ["fe80::1"], "rdma": rows[0]},
                    {"ssh": "b", "ips": ["10.0.0.2", "fe80::2"], "rdma": rows[1]},
                ],
            }
        ),
        names={"c"},
    )
    assert [p.path for p in jaccl.problems] == ["hosts[0].ips[0]"]
    assert "JACCL's coordinator (MLX_JACCL_COORDINATOR)" in jaccl.problems[0].message
    one = parse(
        json.dumps({"backend": "ring", "hosts": [{"ssh": "a", "ips": ["fe80::1"]}]}), names={"c"}
    )
    assert one.problems == ()


def test_probe_names_the_hostfile_it_blames(tmp_path, clean_env):
    """A backend written in the file is the file's fault (--backend was never passed); a
    one-entry file is named with what else is wrong in it."""
    one = {"backend": "carrier-pigeon", "hosts": [{"ssh": "localhost", "ips": ["127.0.0.1"]}]}
    hf = write(tmp_path / "one.json", json.dumps(one))
    r = run_cli("probe", "--hostfile", str(hf), env=_probe_env(clean_env))
    assert r.rc == 2 and f"{hf}: 1 rank: a probe needs at least 2" in r.err, r.err
    assert "unknown backend 'carrier-pigeon'" in r.err
    two = dict(one, hosts=one["hosts"] * 2)
    hf = write(tmp_path / "two.json", json.dumps(two))
    r = run_cli("probe", "--hostfile", str(hf), env=_probe_env(clean_env))
    assert r.rc == 2 and "--hostfile" in r.err and "'--backend'" not in r.err, r.err
    assert f"{hf}: \"backend\": 'carrier-pigeon' is an unknown backend" in r.err


def test_a_hostfile_whose_every_host_is_refused_is_still_no_go(tmp_path, clean_env):
    """No host can check the hostfile when every name is refused: the file's own problems still
    make the fleet check no-go (MD401 fail), as one reachable host's check would say."""
    hf = write(
        tmp_path / "bad.json",
        json.dumps([{"ssh": "a;b", "ips": ["10.0.0.1"]}, {"ssh": "-oX=y", "ips": ["10.0.0.2"]}]),
    )
    for args in (["--hostfile", str(hf)], ["--hosts", "a;b"]):
        r = run_cli("check", *args, "--json", env=clean_env)
        assert r.rc == 1, r.out
        md401 = [x for x in r.results("MD401") if x["status"] == "fail"]
        assert md401 and all(x["host"] == "mesh" for x in md401)
        assert "'a;b' cannot be an ssh destination" in md401[0]["summary"]
