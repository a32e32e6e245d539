"""``--format prometheus --output`` read by the real node_exporter (Debian's
prometheus-node-exporter, installed by .ci/run as root): its textfile collector started on a
loopback port with ``--collector.textfile.directory``, scraped over HTTP; every meshdoctor
family is there, and ``node_textfile_scrape_error`` is 0 (node_exporter sets it to 1 for a file
it could not use: a sample timestamp, a bad escape, a family defined twice). The files of
check (a fake Mac, real CLI), probe (real ranks over loopback) and a fleet check (MD404's edge
matrix from the real fleet check) sit side by side in one directory, as on a node."""

from __future__ import annotations

import json
import shutil
import socket
import subprocess
import time
import urllib.request

import pytest
from prometheus_client.parser import text_string_to_metric_families

from meshdoctor.checker.fleet_model import all_fleet_checks, run_fleet_checks
from meshdoctor.model import HostInfo, Result, Verdict
from meshdoctor.output import write_atomic
from meshdoctor.render import prometheus
from tests.checks.fleet.test_fleet_checks import _facts, _view
from tests.checks.test_rdma_checks import mesh
from tests.helpers import run_cli, write

EXPORTER = shutil.which("prometheus-node-exporter") or shutil.which("node_exporter")
pytestmark = pytest.mark.skipif(
    EXPORTER is None,
    reason="prometheus-node-exporter is not installed (.ci/run installs it with apt-get "
    "when run as root on Debian)",
)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _scrape(proc: subprocess.Popen, port: int, bound_s: float = 120.0) -> str:
    """/metrics of the exporter ``proc`` once it answers (it may take a while to listen on a
    loaded box; ``bound_s`` only bounds a hang)."""
    t_end = time.monotonic() + bound_s
    while True:
        assert proc.poll() is None, proc.communicate()
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as r:
                return r.read().decode("utf-8")
        except OSError:
            assert time.monotonic() < t_end, "node_exporter never answered"
            time.sleep(0.2)


@pytest.fixture
def exporter(tmp_path):
    """(textfile directory, scrape()) of a node_exporter of this test only."""
    textfile = tmp_path / "textfile"
    textfile.mkdir()
    for _ in range(5):  # a port taken between choosing and binding: choose again
        port = _free_port()
        proc = subprocess.Popen(
            [
                EXPORTER,
                f"--web.listen-address=127.0.0.1:{port}",
                "--collector.disable-defaults",
                "--collector.textfile",
                f"--collector.textfile.directory={textfile}",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        try:
            _scrape(proc, port, bound_s=60.0)
            break
        except AssertionError:
            proc.kill()
            proc.wait()
    else:
        pytest.fail("node_exporter could not listen on a free loopback port")
    try:
        yield textfile, lambda: _scrape(proc, port)
    finally:
        proc.kill()
        proc.wait()


def _meshdoctor(text: str) -> dict:
    return {
        f.name: f for f in text_string_to_metric_families(text) if f.name.startswith("meshdoctor_")
    }


def _scrape_error(text: str) -> float:
    fams = {f.name: f for f in text_string_to_metric_families(text)}
    return fams["node_textfile_scrape_error"].samples[0].value


def test_node_exporter_reads_every_meshdoctor_metric(exporter, fake_mac, clean_env):
    textfile, scrape = exporter
    env = fake_mac("healthy", "wired-leftover", "one-port-down")
    env = {k: v for k, v in env.items() if not k.startswith(("MLX_", "JACCL_"))}
    hostfile = write(textfile.parent / "hosts.json", json.dumps(mesh()))
    r = run_cli(
        "check", "--local-only", "--hostfile", str(hostfile), "--format", "prometheus",
        "--output", str(textfile / "meshdoctor-check.prom"), env=env,
    )  # fmt: skip
    assert r.rc == 1 and r.out == "", (r.out, r.err)
    r = run_cli(
        "probe", "-n", "2", "--size", "1MiB", "--iters", "2", "--format", "prometheus",
        "--output", str(textfile / "meshdoctor-probe.prom"), env=clean_env, timeout=150,
    )  # fmt: skip
    assert r.rc == 0, (r.out, r.err)
    text = scrape()
    assert _scrape_error(text) == 0, text
    got = _meshdoctor(text)
    info = {s.labels["command"]: s.labels for s in got["meshdoctor_info"].samples}
    assert set(info) == {"check", "probe"} and info["probe"]["backend"] == "ring"
    assert info["check"]["backend"] == "jaccl"  # the hostfile's (MD401)
    assert got["meshdoctor_wired_memory_bytes"].samples[0].value > 0
    assert got["meshdoctor_rdma_devices_active"].samples[0].value == 2  # one port down
    assert got["meshdoctor_rdma_devices_expected"].samples[0].value == 3
    assert got["meshdoctor_probe_busbw_bytes_per_second"].samples[0].value > 0
    seen = set(got)

    # a fleet check's verdict (MD404 from the real cross-node checks) replaces the check file
    fleet = Verdict(command="check", hosts=[HostInfo("m0"), HostInfo("m1")])
    fleet.results = [
        r for _, r in run_fleet_checks(all_fleet_checks(), _view(_facts(0), _facts(1)))
    ]
    fleet.results.append(
        Result("MD302", "node.memory", "ok", "ok", host="m0", evidence={"wired_bytes": 1 << 30})
    )
    write_atomic(
        str(textfile / "meshdoctor-check.prom"), prometheus.render(fleet.finish().to_dict())
    )
    text = scrape()
    assert _scrape_error(text) == 0, text
    got = _meshdoctor(text)
    assert got["meshdoctor_rdma_edges_active"].samples[0].value == 1
    assert got["meshdoctor_rdma_edges_expected"].samples[0].value == 1
    seen |= set(got)
    assert seen == set(prometheus.FAMILIES), set(prometheus.FAMILIES) - seen


def test_a_file_node_exporter_refuses_shows_as_a_scrape_error(exporter):
    """The bed itself: a sample with a client-side timestamp makes node_exporter drop the file
    (what meshdoctor never writes), so a 0 above means the file was read."""
    textfile, scrape = exporter
    (textfile / "bad.prom").write_text("# TYPE meshdoctor_x gauge\nmeshdoctor_x 1 1700000000000\n")
    text = scrape()
    assert _scrape_error(text) == 1
    assert "meshdoctor_x" not in _meshdoctor(text)
