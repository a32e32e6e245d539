"""``--format``, ``--output`` and ``--unknown-as`` through the real CLI, on check, probe, triage
and fix: each format read back by its consumer's parser (prometheus-client, junitparser, the
80-byte bound node-problem-detector applies), ``--json`` unchanged, ``--output`` replaced
atomically, and the exit contract node-problem-detector's custom plugins read (0 OK, 1 NonOK,
anything else Unknown). The real node_exporter reads the files in test_node_exporter.py."""

from __future__ import annotations

import json
import os
import stat

import pytest
from junitparser import Failure, JUnitXml
from prometheus_client.parser import text_string_to_metric_families

from tests.helpers import run_cli, validate

CHECK = ("check", "--local-only", "--skip", "MD301")


def _mac(fake_mac, clean_env, *sets):
    env = fake_mac(*sets)
    env.update({k: v for k, v in clean_env.items() if k not in env})
    return {k: v for k, v in env.items() if not k.startswith(("MLX_", "JACCL_"))}


@pytest.mark.parametrize(
    "sets,rc,word",
    [
        (("healthy",), 0, "GO"),
        (("healthy", "wired-leftover"), 1, "NO-GO MD302 node.memory"),
        (("rdma-disabled",), 3, "UNKNOWN"),
    ],
)
def test_oneline_is_the_node_problem_detector_contract(fake_mac, clean_env, sets, rc, word):
    env = _mac(fake_mac, clean_env, *sets)
    r = run_cli(*CHECK, "--format", "oneline", env=env)
    assert r.rc == rc, (r.out, r.err)  # 0 OK, 1 NonOK, 3 (anything else) Unknown
    assert r.out.startswith(word + " ") and r.out.count("\n") == 1
    assert len(r.out.encode("utf-8")) <= 80
    doc = run_cli(*CHECK, "--json", env=env).doc
    assert doc["exit_code"] == rc  # the same verdict as the JSON document's


def test_every_format_says_the_same_verdict(fake_mac, clean_env):
    env = _mac(fake_mac, clean_env, "healthy", "wired-leftover")
    doc = run_cli(*CHECK, "--json", env=env).doc
    same = run_cli(*CHECK, "--format", "json", env=env)
    assert same.rc == 1
    validate(json.loads(same.out))
    assert [x["code"] for x in json.loads(same.out)["results"]] == [
        x["code"] for x in doc["results"]
    ]
    prom = run_cli(*CHECK, "--format", "prometheus", env=env)
    assert prom.rc == 1
    fams = {f.name: f for f in text_string_to_metric_families(prom.out)}
    verdict = {s.labels["verdict"]: s.value for s in fams["meshdoctor_verdict"].samples}
    assert verdict["no-go"] == 1
    wired = fams["meshdoctor_wired_memory_bytes"].samples[0].value
    md302 = [x for x in doc["results"] if x["code"] == "MD302"][0]
    assert wired == md302["evidence"]["wired_bytes"]  # bytes, as vm_stat's pages x page size
    xml = run_cli(*CHECK, "--format", "junit", env=env)
    assert xml.rc == 1
    suite = list(JUnitXml.fromstring(xml.out.encode("utf-8")))[0]
    assert suite.tests == len(doc["results"]) and suite.failures >= 1
    failed = [c for c in suite if c.result and isinstance(c.result[0], Failure)]
    assert failed[0].name == "MD302 node.memory"
    human = run_cli(*CHECK, env=env)
    assert human.rc == 1 and "NO-GO (exit 1)" in human.out


def test_json_with_another_format_is_a_usage_error(clean_env):
    r = run_cli("check", "--local-only", "--json", "--format", "junit", env=clean_env)
    assert r.rc == 2 and "--json and --format junit ask for two formats" in r.err


def test_output_is_replaced_atomically_and_nothing_else_is_printed(fake_mac, clean_env, tmp_path):
    env = _mac(fake_mac, clean_env, "healthy")
    out = tmp_path / "textfile"
    out.mkdir()
    target = out / "meshdoctor.prom"
    target.write_text("old\n")
    r = run_cli(*CHECK, "--format", "prometheus", "--output", str(target), env=env)
    assert r.rc == 0 and r.out == "", (r.out, r.err)
    text = target.read_text()
    assert "meshdoctor_info{" in text and text.endswith("\n")
    assert stat.S_IMODE(target.stat().st_mode) & 0o044 == 0o044  # node_exporter's user reads it
    assert os.listdir(out) == ["meshdoctor.prom"]  # no temporary file left behind
    human = out / "verdict.txt"
    assert run_cli(*CHECK, "--output", str(human), env=env).rc == 0
    assert "GO (exit 0)" in human.read_text() and "\x1b[" not in human.read_text()


def test_output_in_a_missing_folder_is_a_usage_error(clean_env, tmp_path):
    r = run_cli("check", "--local-only", "--output", str(tmp_path / "no" / "x.prom"), env=clean_env)
    assert r.rc == 2 and "does not exist" in r.err


def test_an_output_that_cannot_be_written_is_said_and_exits_3(fake_mac, clean_env, tmp_path):
    if os.geteuid() != 0:
        pytest.skip("mknod of a character device needs root")
    full = tmp_path / "full"  # /dev/full's major and minor: every write is ENOSPC (full(4))
    os.mknod(full, stat.S_IFCHR | 0o666, os.stat("/dev/full").st_rdev)
    env = _mac(fake_mac, clean_env, "healthy")
    r = run_cli(*CHECK, "--format", "junit", "--output", str(full), env=env)
    assert r.rc == 3 and r.out == "" and f"cannot write --output {full}: " in r.err, r.err
    assert "No space left on device" in r.err and stat.S_ISCHR(os.lstat(full).st_mode)


def test_an_output_in_a_folder_that_refuses_new_files_is_a_usage_error(clean_env):
    if not os.path.isdir("/proc/self"):
        pytest.skip("no /proc: no folder that refuses a new file even to root")
    r = run_cli("check", "--local-only", "--output", "/proc/self/meshdoctor.xml", env=clean_env)
    assert r.rc == 2 and "cannot be written" in r.err, r.err


def test_unknown_as_chooses_the_exit_status_and_keeps_the_verdict(clean_env):
    only_skips = ("check", "--local-only", "--only", "MD205")  # not applicable on linux: unknown
    assert run_cli(*only_skips, env=clean_env).rc == 3
    go = run_cli(*only_skips, "--unknown-as", "go", "--format", "oneline", env=clean_env)
    assert go.rc == 0 and go.out.startswith("UNKNOWN ")
    nogo = run_cli(*only_skips, "--unknown-as", "no-go", "--format", "json", env=clean_env)
    doc = json.loads(nogo.out)
    validate(doc)
    assert nogo.rc == 1 and doc["verdict"] == "unknown" and doc["exit_code"] == 3
    human = run_cli(*only_skips, "--unknown-as", "go", env=clean_env)
    assert human.rc == 0 and "--unknown-as go: exit 0" in human.out


def test_hosts_takes_the_slurm_syntax_and_says_where_it_is_wrong(clean_env):
    for cmd in ("check", "probe"):
        r = run_cli(cmd, "--hosts", "mac[01-16,20", env=clean_env)
        assert r.rc == 2 and "'[' at column 4 is never closed" in r.err, r.err


def test_triage_and_fix_take_the_formats(fake_mac, clean_env, tmp_path):
    log = tmp_path / "rank0.log"
    log.write_text("[WARN] Node with rank 1 exited with code 255\n")
    r = run_cli("triage", str(log), "--format", "junit", env=clean_env)
    assert r.rc == 1, (r.out, r.err)
    suite = list(JUnitXml.fromstring(r.out.encode("utf-8")))[0]
    assert suite.name == "meshdoctor triage" and suite.tests >= 1
    env = _mac(fake_mac, clean_env, "healthy")
    r = run_cli("fix", "--format", "oneline", env=env, private_pids=True)
    assert r.rc in (0, 1, 3) and r.out.count("\n") == 1, (r.out, r.err)
    assert len(r.out.encode("utf-8")) <= 80


def test_probe_busbw_and_wrong_values_per_op(clean_env):
    r = run_cli(
        "probe", "-n", "2", "--size", "1MiB", "--iters", "2", "--format", "prometheus",
        env=clean_env, timeout=150,
    )  # fmt: skip
    assert r.rc == 0, (r.out, r.err)
    fams = {f.name: f for f in text_string_to_metric_families(r.out)}
    busbw = {
        s.labels["op"]: s.value for s in fams["meshdoctor_probe_busbw_bytes_per_second"].samples
    }
    wrong = {s.labels["op"]: s.value for s in fams["meshdoctor_probe_wrong_values"].samples}
    assert "all_sum" in busbw and busbw["all_sum"] > 0
    assert wrong["all_sum"] == 0
    info = fams["meshdoctor_info"].samples[0].labels
    assert info["command"] == "probe" and info["backend"] == "ring"
    from importlib.metadata import version

    assert info["mlx_version"] == version("mlx"), info  # what the ranks reported


def test_an_internal_error_is_in_the_chosen_format_and_file(clean_env, tmp_path):
    from tests.cli.test_internal_error import _crash

    crash = ("meshdoctor.fixer.engine", "annotate", "check", "--only", "MD101")
    p = _crash(clean_env, *crash, "--format", "oneline")
    assert (
        p.returncode == 3
        and p.stdout == "UNKNOWN MD100 meshdoctor internal error: RuntimeError: boom\n"
    )
    target = tmp_path / "m.prom"
    p = _crash(
        clean_env,
        *crash,
        "--format",
        "prometheus",
        "--output",
        str(target),
        "--unknown-as",
        "no-go",
    )
    assert p.returncode == 1 and p.stdout == "", p.stderr
    fams = {f.name: f for f in text_string_to_metric_families(target.read_text())}
    verdict = {s.labels["verdict"]: s.value for s in fams["meshdoctor_verdict"].samples}
    assert verdict["unknown"] == 1


# a host name holding a terminal title escape, a bell and the right-to-left override
HOSTILE = "m\x1b]0;owned\x07\u202e"
RAW = ("\x1b", "\x07", "\u202e")


@pytest.mark.parametrize("fmt", ["prometheus", "junit", "oneline", "human"])
def test_control_characters_of_host_names_are_escaped_in_every_format(fmt, tmp_path, clean_env):
    """Hostfile entries named with ESC, BEL and U+202E (MD401 refuses them, so nothing is
    contacted): no format writes them raw; each shows them as ``\\x1b`` / ``\\u202e`` and
    still parses."""
    hostfile = tmp_path / "hosts.json"
    hostfile.write_text(
        json.dumps([{"ssh": f"{HOSTILE}{i}", "ips": [f"127.0.0.{i}"]} for i in (1, 2)])
    )
    out = tmp_path / "out"
    r = run_cli(
        "check",
        "--hostfile",
        str(hostfile),
        "--timeout",
        "5",
        "--format",
        fmt,
        "--output",
        str(out),
        env=clean_env,
        timeout=120,
    )
    assert r.rc in (1, 3), r.outcome()
    text = out.read_text()
    assert not [c for c in RAW if c in text], text
    if fmt in ("junit", "human"):  # (prometheus doubles the backslash; oneline is cut)
        assert "\\x1b]0;owned\\x07\\u202e" in text, text
    if fmt == "prometheus":
        hosts = {
            s.labels.get("host")
            for f in text_string_to_metric_families(text)
            for s in f.samples
            if "host" in s.labels
        }
        assert "m\\x1b]0;owned\\x07\\u202e1" in hosts, hosts
    if fmt == "junit":
        classes = {c.classname for suite in JUnitXml.fromstring(text.encode()) for c in suite}
        assert "meshdoctor.check.m\\x1b]0;owned\\x07\\u202e1" in classes, classes
