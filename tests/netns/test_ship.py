"""meshdoctor sent over ssh to hosts that have nothing of it (meshdoctor.ship, meshdoctor.fanout).

Each host of a 3-host bed is its own fake Mac (tests/netns/fleet_bed.py). A host "without
meshdoctor" runs the system interpreter (/usr/bin/python3): it sees MLX (the fake mlx package
on its PYTHONPATH) and neither meshdoctor, nor the venv, nor click, platformdirs or psutil.
Every host keeps its cache in a folder of its own (the bed's XDG_CACHE_HOME), as separate
machines do.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import subprocess
import zipfile
from pathlib import Path

import pytest

from tests import netns
from tests.cli.test_bundle import members
from tests.helpers import run_cli
from tests.netns.fleet_bed import NO_MESHDOCTOR_PY, MacMesh

why = netns.unavailable()
pytestmark = pytest.mark.skipif(why is not None, reason=why or "")

TIMEOUT = "60"  # per-check deadline on each host: a bound on a hang, never waited out by a
# passing test (a loaded 2-core CI box has taken over 20 s for one remote check)


@pytest.fixture(scope="module")
def bed():
    with netns.TestBed(3) as tb:
        tb.mesh = MacMesh(tb)
        tb.hostfile = tb.mesh.hostfile(tb.dir / "hosts.json")
        tb.env = {k: v for k, v in os.environ.items() if not k.startswith(("MLX_", "JACCL_"))}
        tb.env["MESHDOCTOR_SSH_CONFIG"] = str(tb.ssh_config)
        yield tb


def fleet(bed, *extra, env=None):
    return run_cli(
        "check",
        "--hostfile",
        str(bed.hostfile),
        "--python",
        bed.mesh.python,
        "--timeout",
        TIMEOUT,
        "--json",
        *extra,
        env=dict(bed.env, **(env or {})),
        timeout=240,
    )


def answers(r):
    """What a verdict says, without its timings and the words that name the interpreter."""
    return (
        r.rc,
        r.doc["verdict"],
        sorted((x["code"], x.get("host"), x["status"]) for x in r.doc["results"]),
    )


def differences(a, b):
    one, other = set(answers(a)[2]), set(answers(b)[2])
    return [
        x for x in a.doc["results"] if (x["code"], x.get("host"), x["status"]) in one - other
    ], sorted(other - one)


def cached(bed, host):
    return sorted((bed.dir / f"cache-{host}" / "meshdoctor").glob("*.pyz"))


def test_the_system_python_has_nothing_of_ours():
    """The premise: the interpreter of the hosts without meshdoctor cannot import it, nor its
    dependencies, nor psutil."""
    for mod in ("meshdoctor", "click", "platformdirs", "psutil"):
        p = subprocess.run(
            [NO_MESHDOCTOR_PY, "-c", f"import {mod}"], capture_output=True, cwd="/", timeout=30
        )
        assert p.returncode == 1 and b"ModuleNotFoundError" in p.stderr, mod


def installed_there(bed, hosts):
    """Each of ``hosts`` runs the system interpreter with meshdoctor installed for it: this
    checkout and the venv's packages (psutil among them) on its path, after its fake mlx."""
    import sysconfig

    where = [str(Path(__file__).resolve().parents[2]), sysconfig.get_paths()["purelib"]]
    return {
        h: {"PYTHONPATH": ":".join([str(bed.dir / "macs" / h / "pylib"), *where])} for h in hosts
    }


def test_hosts_with_mlx_and_nothing_of_ours_give_the_installed_verdict(bed):
    """The same interpreters, once with meshdoctor (and psutil) installed for them, once with
    nothing of ours: the same verdict, result by result."""
    bed.mesh.write(no_meshdoctor=["h1", "h2"], env=installed_there(bed, ["h1", "h2"]))
    installed = fleet(bed, env={"MESHDOCTOR_SHIP": "installed"})
    assert installed.rc == 0, json.dumps(installed.doc["results"])[:3000]
    assert not cached(bed, "h1")
    bed.mesh.write(no_meshdoctor=["h1", "h2"])
    first = fleet(bed)
    assert answers(first) == answers(installed), differences(first, installed)
    (h1,) = [x for x in first.results("MD102") if x["host"] == "h1"]
    assert h1["evidence"]["executable"] == NO_MESHDOCTOR_PY
    for h in ("h1", "h2"):
        (entry,) = cached(bed, h)
        assert (entry.parent.stat().st_mode & 0o777) == 0o700
        assert hashlib.sha256(entry.read_bytes()).hexdigest() == entry.stem
    stored = [(p, p.stat().st_ino, p.stat().st_mtime_ns) for p in cached(bed, "h1")]
    again = fleet(bed)  # the cached copies serve the next run: nothing is sent again
    assert answers(again) == answers(installed)
    assert [(p, p.stat().st_ino, p.stat().st_mtime_ns) for p in cached(bed, "h1")] == stored
    human = run_cli(
        "check",
        "--hostfile",
        str(bed.hostfile),
        "--python",
        bed.mesh.python,
        "--timeout",
        TIMEOUT,
        env=bed.env,
        timeout=240,
    )
    assert human.rc == 0 and "GO" in human.out


def test_a_tampered_cache_entry_is_never_run(bed):
    bed.mesh.write(no_meshdoctor=["h1", "h2"])
    assert fleet(bed).rc == 0
    (entry,) = cached(bed, "h1")
    planted = bed.dir / "planted-ran"
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:  # a whole zip of another meshdoctor, under our name
        z.writestr("meshdoctor/__init__.py", "")
        z.writestr("meshdoctor/__main__.py", f"open({str(planted)!r}, 'w').write('ran')\n")
    entry.write_bytes(buf.getvalue())
    r = fleet(bed)
    assert r.rc == 0, json.dumps(r.doc["results"])[:3000]
    assert not planted.exists()
    assert hashlib.sha256(entry.read_bytes()).hexdigest() == entry.stem  # replaced by ours


def test_a_host_without_psutil_reads_the_same_processes(bed):
    """A rank of a running job on a host whose interpreter has no psutil: the stale-rank
    check (MD301) finds it as it does with psutil."""
    bed.mesh.write()
    rank = bed.ssh(
        "h1",
        "cd /; MLX_RANK=1 MLX_HOSTFILE=/dev/null setsid sleep 300 </dev/null >/dev/null "
        "2>&1 & echo $!",
    )
    assert rank.returncode == 0, rank.stderr
    try:
        with_psutil = fleet(bed, "--only", "MD301", env={"MESHDOCTOR_SHIP": "installed"})
        bed.mesh.write(no_meshdoctor=["h1"])
        without = fleet(bed, "--only", "MD301")
        assert answers(without) == answers(with_psutil), differences(without, with_psutil)
        (mine,) = [x for x in without.results("MD301") if x["host"] == "h1"]
        (theirs,) = [x for x in with_psutil.results("MD301") if x["host"] == "h1"]
        assert mine["status"] == theirs["status"] != "ok"
        assert "sleep, rank 1" in mine["summary"] and "sleep, rank 1" in theirs["summary"]
    finally:
        bed.ssh("h1", f"kill {rank.stdout.strip()}")


def test_a_host_whose_python_is_too_old_is_named(bed):
    """An interpreter that reports Python 3.8 (this box has no older Python: a sitecustomize
    on its path makes /usr/bin/python3 say so, the only thing the check reads)."""
    old = bed.dir / "old-python"
    old.mkdir(exist_ok=True)
    (old / "sitecustomize.py").write_text("import sys\nsys.version_info = (3, 8, 10, 'final', 0)\n")
    site = bed.dir / "macs" / "h2" / "pylib"
    bed.mesh.write(no_meshdoctor=["h2"], env={"h2": {"PYTHONPATH": f"{old}:{site}"}})
    r = fleet(bed)
    assert r.rc == 3
    (res,) = [x for x in r.results("MD402") if x["host"] == "h2"]
    assert "h2's Python is too old" in res["summary"]
    assert f"Python 3.8.10 at {NO_MESHDOCTOR_PY} is older than 3.10" in res["summary"]
    assert "--python" in res["remediation"]["text"]


def test_a_host_without_mlx_is_named_with_the_command_that_installs_it(bed):
    bed.mesh.write(no_meshdoctor=["h2"], env={"h2": {"PYTHONPATH": str(bed.dir / "empty")}})
    r = fleet(bed)
    assert r.rc == 1, json.dumps(r.doc["results"])[:3000]
    (res,) = [x for x in r.results("MD102") if x["host"] == "h2"]
    assert res["status"] == "fail" and "MLX is not importable" in res["summary"]
    assert res["remediation"]["command"].startswith("ssh h2 "), res["remediation"]
    assert "pip install" in res["remediation"]["command"]


def test_a_support_bundle_of_a_host_without_meshdoctor(bed, tmp_path):
    """bundle runs meshdoctor on each host, and that one runs a check of its own in a child
    (``python -m meshdoctor``): the child finds the shipped copy too."""
    bed.mesh.write(no_meshdoctor=["h1"])
    out = tmp_path / "fleet.tar.gz"
    r = run_cli(
        "bundle",
        "--hostfile",
        str(bed.hostfile),
        "--python",
        bed.mesh.python,
        "-o",
        str(out),
        "--json",
        env=bed.env,
        timeout=240,
    )
    assert r.rc == 0, r.outcome()
    files = members(out)
    doc = json.loads(files["h1/check.json"])
    assert doc["command"] == "check" and doc["verdict"] in ("go", "no-go")
    rows = [x.split("\t") for x in files["MANIFEST.txt"].splitlines() if not x.startswith("#")]
    assert not [x for x in rows if x[0] == "h1" and x[1] == "failed"], rows
