"""The RDMA checks together (MD201-MD205) through the real CLI on fake Macs: each fixture set
gives the verdict and codes an operator would expect, with evidence naming device, port and GID
index; a hung ibv_devinfo is a critical finding within the deadline; on Linux without RDMA the
checks skip cleanly; Thunderbolt 4 hardware is never told to enable RDMA in Recovery, its advice
is the ring backend. Each check's own tests: tests/checks/test_rdma_<check>.py and
test_thunderbolt_links.py."""

from __future__ import annotations

import json
import os

import pytest

from tests.helpers import run_cli, write

RDMA = ("--only", "MD201,MD202,MD203,MD204,MD205")
CODES = ("MD201", "MD202", "MD203", "MD204", "MD205")
PEER_IPS = ["127.0.0.1", "198.51.100.12", "198.51.100.13", "198.51.100.14"]


def mesh(rows=None, backend="jaccl", n=4):
    """A hostfile whose rank 0 is this machine (ssh ``localhost``)."""
    rows = rows or [
        [None, "rdma_en2", "rdma_en3", "rdma_en4"],
        ["rdma_en2", None, "rdma_en3", "rdma_en4"],
        ["rdma_en2", "rdma_en3", None, "rdma_en4"],
        ["rdma_en2", "rdma_en3", "rdma_en4", None],
    ]
    hosts = [
        {
            "ssh": "localhost" if i == 0 else f"m{i + 1}",
            "ips": [PEER_IPS[i] if i < 4 else f"198.51.100.{20 + i}"],
            "rdma": rows[i],
        }
        for i in range(n)
    ]
    return {"backend": backend, "hosts": hosts}


def statuses(r):
    return {c: r.status(c) for c in CODES}


# (fixture sets on top of healthy, hostfile or None, exit code, expected worst status per code)
CASES = [
    ("healthy", None, 0, dict(MD201="ok", MD202="ok", MD203="ok", MD204="skip", MD205="ok")),
    (
        "rdma-disabled",
        None,
        0,
        dict(MD201="warn", MD202="skip", MD203="skip", MD204="skip", MD205="ok"),
    ),
    (
        "enabled-no-devices",
        None,
        0,
        dict(MD201="warn", MD202="skip", MD203="skip", MD204="skip", MD205="warn"),
    ),
    (
        "one-port-down",
        None,
        0,
        dict(MD201="ok", MD202="warn", MD203="ok", MD204="skip", MD205="ok"),
    ),
    ("fe80-only", None, 1, dict(MD201="ok", MD202="ok", MD203="fail", MD205="fail")),
    ("mapped-gid-2", None, 0, dict(MD201="ok", MD202="ok", MD203="warn", MD205="ok")),
    ("tb4-link", None, 0, dict(MD201="ok", MD202="ok", MD203="ok", MD205="warn")),
    ("bridge0-active", None, 1, dict(MD201="ok", MD202="ok", MD203="ok", MD205="fail")),
    ("truncated", None, 3, dict(MD201="ok", MD202="warn", MD203="ok", MD205="error")),
    (
        "garbage",
        None,
        3,
        dict(MD201="error", MD202="error", MD203="error", MD204="error", MD205="error"),
    ),
    ("healthy", "mesh", 0, dict(MD201="ok", MD202="ok", MD203="ok", MD204="ok", MD205="ok")),
    (
        "rdma-disabled",
        "mesh",
        1,
        dict(MD201="fail", MD202="fail", MD203="fail", MD204="fail", MD205="ok"),
    ),
    ("one-port-down", "mesh", 1, dict(MD202="fail", MD203="ok", MD204="ok")),
    ("truncated", "mesh", 3, dict(MD202="error", MD205="error")),
    # every check chosen skipped: nothing was assessed, so not go (exit 3)
    (
        "healthy",
        "ring",
        3,
        dict(MD201="skip", MD202="skip", MD203="skip", MD204="skip", MD205="skip"),
    ),
]


@pytest.mark.parametrize(
    "fixture_set, hostfile, rc, expect",
    CASES,
    ids=[f"{c[0]}-{c[1] or 'nohostfile'}" for c in CASES],
)
def test_fixture_sets_give_the_expected_verdict(
    fake_mac, tmp_path, fixture_set, hostfile, rc, expect
):
    env = fake_mac("healthy", fixture_set)
    args = list(RDMA)
    if hostfile:
        doc = mesh(backend="ring" if hostfile == "ring" else "jaccl")
        args += ["--local-only", "--hostfile", str(write(tmp_path / "hosts.json", json.dumps(doc)))]
    r = run_cli("check", "--json", *args, env=env)
    got = statuses(r)
    assert r.rc == rc, (got, r.out)
    assert {c: got[c] for c in expect} == expect, r.out
    assert r.doc["needs_reboot"] == []


def test_healthy_evidence_names_devices_ports_and_gid_indexes(fake_mac):
    r = run_cli("check", "--json", *RDMA, env=fake_mac("healthy"))
    gid = r.results("MD203")[0]
    assert gid["evidence"]["reader"] == "ibv_devinfo"
    assert gid["evidence"]["ports"] == [
        {"device": "rdma_en2", "port": 1, "gid_index": 1, "gid": "::ffff:169.254.37.21"},
        {"device": "rdma_en3", "port": 1, "gid_index": 1, "gid": "::ffff:169.254.140.7"},
        {"device": "rdma_en4", "port": 1, "gid_index": 1, "gid": "::ffff:169.254.201.88"},
    ]
    assert gid["evidence"]["tables"]["rdma_en2/1"][1] == {
        "index": 1,
        "gid": "::ffff:169.254.37.21",
        "ipv4": "169.254.37.21",
    }
    ports = r.results("MD202")[0]
    assert "rdma_en2 port 1, rdma_en3 port 1, rdma_en4 port 1" in ports["summary"]
    links = r.results("MD205")[0]["evidence"]["links"]
    assert [
        (ln["hardware_port"], ln["interface"], ln["rdma_device"], ln["speed_gbps"]) for ln in links
    ] == [
        ("Thunderbolt 1", "en2", "rdma_en2", 80.0),
        ("Thunderbolt 2", "en3", "rdma_en3", 80.0),
        ("Thunderbolt 3", "en4", "rdma_en4", 80.0),
    ]


def test_hung_ibv_devinfo_on_a_short_deadline_is_not_assessed_not_a_reboot(fake_mac):
    # an overrun of a 0.9 s deadline proves a slow machine, not a wedged stack
    r = run_cli(
        "check", "--json", *RDMA, "--timeout", "2", env=fake_mac("healthy", "ibv_devinfo-hang")
    )
    assert r.rc == 3, r.outcome()
    for code in ("MD201", "MD202", "MD203", "MD204"):
        (f,) = r.results(code)
        assert f["status"] == "error" and "not assessed" in f["summary"], f
        assert not f.get("needs_reboot") and "--timeout 45" in f["remediation"]["text"]
    assert r.doc["needs_reboot"] == []


def test_after_a_jaccl_error_the_suggested_check_proves_the_wedged_stack(fake_mac, tmp_path):
    # exo-explore/exo#1847: JACCL errors on a Mac Studio mesh; ibv_devinfo then hangs until a
    # reboot (MLX #3910, #4278). The check triage suggests has a deadline long enough to prove
    # the hang, so it answers "wedged: reboot", never "not assessed".
    import shlex

    log = tmp_path / "runner.log"
    log.write_text("RuntimeError: [jaccl] Changing queue pair to RTR failed with errno 22\n")
    t = run_cli("triage", str(log), "--json")
    (r,) = [x for x in t.doc["results"] if x["code"] == "MD601"]
    cmd = shlex.split(r["remediation"]["command"])
    assert cmd[:4] == ["meshdoctor", "check", "--only", "MD203"] and "--timeout" in cmd, cmd
    c = run_cli(*cmd[1:], "--json", env=fake_mac("healthy", "ibv_devinfo-hang"))
    assert c.rc == 1, c.outcome()
    (f,) = c.results("MD203")
    assert f["status"] == "fail" and f["needs_reboot"], f
    assert "RDMA stack wedged" in f["summary"] and "not assessed" not in f["summary"]
    assert c.doc["needs_reboot"], c.doc


def test_hung_ibv_devinfo_is_critical_not_a_hang(fake_mac, monkeypatch):
    from meshdoctor.checks import _rdma
    from meshdoctor.facts import verbs
    from meshdoctor.facts.context import HANG_PROOF_S

    inv = verbs.Inventory(
        verbs.WEDGED, "ibv_devinfo", detail="`ibv_devinfo -v` did not finish within 20.2 s"
    )
    inv.attempts.append({"reader": "ibv_devinfo", "outcome": "timeout", "duration_s": 20.3})
    assert HANG_PROOF_S <= 20.3
    f = _rdma.wedged_finding(inv, "ports")
    assert f.status == "fail" and f.needs_reboot is True
    assert "RDMA stack wedged (known to follow JACCL errors)" in f.summary
    assert "reboot" in f.remediation.lower()


def test_linux_without_rdma_skips_cleanly_and_fails_only_when_the_hostfile_needs_it(tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MLX_", "JACCL_"))}
    env["MESHDOCTOR_PLATFORM"] = "linux"
    env["PATH"] = os.pathsep.join(
        p
        for p in env.get("PATH", "").split(os.pathsep)
        if not os.path.exists(os.path.join(p, "ibv_devinfo"))
    )
    r = run_cli("check", "--json", *RDMA, env=env)
    assert r.rc == 3, r.out  # every check chosen skipped: nothing applied here, never go
    got = statuses(r)
    assert got == dict(MD201="skip", MD202="skip", MD203="skip", MD204="skip", MD205="skip")
    assert all(x["severity"] == "info" for x in r.doc["results"])
    hf = write(tmp_path / "hosts.json", json.dumps(mesh()))
    r = run_cli("check", "--json", *RDMA, "--local-only", "--hostfile", str(hf), env=env)
    assert r.rc == 1 and r.status("MD202") == "fail"
    assert "needs RDMA (rdma_en2, rdma_en3, rdma_en4)" in r.results("MD202")[0]["summary"]


def test_unreadable_details_with_a_device_list_warn_without_guessing(fake_mac):
    env = fake_mac("healthy", extra={"ibv_devinfo__v.txt": "??\n"})
    r = run_cli("check", "--json", "--only", "MD202,MD203", env=env)
    assert r.rc == 0
    (w,) = r.results("MD202")
    assert w["status"] == "warn" and w["summary"].startswith("port state of rdma_en2, rdma_en3")
    assert "could not be read" in r.results("MD203")[0]["summary"]


ONLY = ("--only", "MD201,MD205")


def ring_over_tb(env_result):
    text = env_result["remediation"]["text"]
    return "ring backend over the Thunderbolt network" in text


def jaccl_hostfile(tmp_path):
    doc = {
        "backend": "jaccl",
        "hosts": [
            {"ssh": "localhost", "ips": ["127.0.0.1"], "rdma": [None, "rdma_en2"]},
            {"ssh": "m2", "ips": ["198.51.100.2"], "rdma": ["rdma_en2", None]},
        ],
    }
    return str(write(tmp_path / "hosts.json", json.dumps(doc)))


def test_tb4_mac_with_rdma_disabled_is_not_sent_to_recovery(fake_mac, tmp_path):
    env = fake_mac("healthy", "rdma-disabled", "tb4-mac")
    r = run_cli("check", "--json", *ONLY, env=env)
    assert r.doc is not None
    (f,) = r.results("MD201")
    assert f["status"] == "warn" and r.rc == 0, r.out
    assert f["summary"].startswith(
        "this Mac has Thunderbolt 4 hardware (no Thunderbolt 5 "
        "receptacle; the ports top out at 40 Gb/s: Thunderbolt 2 "
        "(Up to 40 Gb/s), Thunderbolt 3 (Up to 40 Gb/s)): it can "
        "never do RDMA"
    )
    assert "enabling it from Recovery would not help" in f["summary"]
    assert "rdma_ctl enable` in Recovery changes" in f["remediation"]["text"]
    assert "shut down, hold the power button" not in f["remediation"]["text"]
    assert ring_over_tb(f)
    assert f["evidence"]["chain"]["thunderbolt_hardware"]["generation"] == "tb4"
    # under a jaccl hostfile the launch cannot work: fail, still no Recovery advice
    r = run_cli(
        "check",
        "--json",
        "--local-only",
        "--only",
        "MD201,MD202,MD203,MD204,MD205",
        "--hostfile",
        jaccl_hostfile(tmp_path),
        env=env,
    )
    (f,) = r.results("MD201")
    assert f["status"] == "fail" and r.rc == 1 and ring_over_tb(f)
    # no other RDMA check sends this Mac to Recovery either
    for code in ("MD202", "MD203", "MD204"):
        (x,) = r.results(code)
        assert x["summary"].endswith(
            "this Mac has Thunderbolt 4 hardware, which never does RDMA"
        ), x
        assert "Recovery" not in x["remediation"]["text"]
        assert "ring backend over the Thunderbolt network" in x["remediation"]["text"]


def test_tb4_mac_lists_rdma_devices_that_are_never_usable(fake_mac, tmp_path):
    env = fake_mac("healthy", "tb4-devices-listed")
    r = run_cli(
        "check",
        "--json",
        "--local-only",
        "--only",
        "MD201,MD202,MD205",
        "--hostfile",
        jaccl_hostfile(tmp_path),
        env=env,
    )
    assert r.rc == 1, r.out
    (f,) = r.results("MD201")
    assert f["status"] == "fail"
    assert (
        "`ibv_devices` lists rdma_en2, rdma_en3, rdma_en4, but they are never usable on "
        "Thunderbolt 4 (ports PORT_DOWN)"
    ) in f["summary"]
    assert ring_over_tb(f)
    # the 40 Gb/s link on this Mac is the hardware, not the cable
    (link,) = [x for x in r.results("MD205") if "links at 40 Gb/s" in x["summary"]]
    assert link["status"] == "fail" and link["evidence"]["cause"] == "hardware"
    assert link["summary"].startswith(
        "Thunderbolt 1 (en2, rdma_en2) links at 40 Gb/s: this "
        "Mac's ports top out at 40 Gb/s (Thunderbolt 4 hardware"
    )
    assert "no cable or dock changes that" in link["summary"]
    assert "ring backend" in link["remediation"]["text"]
    # the port is down because of the hardware: no advice to reseat cables or enable the peer
    (port,) = r.results("MD202")
    assert port["summary"] == (
        "rdma_en2 (towards rank 1 (m2)) is not active: port 1 PORT_DOWN "
        "(Thunderbolt 4 hardware: never usable for RDMA)"
    )
    assert "ring backend" in port["remediation"]["text"]
    assert "peer also has RDMA enabled" not in port["remediation"]["text"]
    r = run_cli("check", "--json", "--only", "MD202", env=env)
    ws = r.results("MD202")
    assert ws and all(
        "Thunderbolt 4 hardware" in w["summary"] and "ring backend" in w["remediation"]["text"]
        for w in ws
    ), ws


def test_every_port_cabled_at_40_gbps_leaves_the_hardware_open(fake_mac):
    """No port shows its capability (all cabled at 40 Gb/s): neither Recovery nor a macOS bug is
    asserted; the first step is to learn whether the ports are Thunderbolt 5."""
    sp = {
        "SPThunderboltDataType": [
            {
                "_name": "thunderboltusb4_bus_0",
                "domain_uuid_key": "5B1C2D3E-0A1B-4C2D-8E3F-0123456789C1",
                "receptacle_1_tag": {
                    "receptacle_id_key": "1",
                    "current_speed_key": "40 Gb/s",
                    "receptacle_status_key": "receptacle_connected",
                },
                "_items": [
                    {"_name": "Mac mini", "domain_uuid_key": "7C2A0F11-3D4E-4F50-9A6B-1C2D3E4F5C02"}
                ],
            }
        ]
    }
    extra = {"system_profiler__SPThunderboltDataType_json.txt": json.dumps(sp)}
    r = run_cli("check", "--json", *ONLY, env=fake_mac("healthy", "rdma-disabled", extra=extra))
    (f,) = r.results("MD201")
    assert "whether its ports are Thunderbolt 5 is not visible" in f["summary"]
    assert f["remediation"]["text"].startswith("First make sure this Mac has Thunderbolt 5 ports")
    assert f["evidence"]["chain"]["thunderbolt_hardware"]["generation"] == "unknown"
    r = run_cli(
        "check", "--json", *ONLY, env=fake_mac("healthy", "enabled-no-devices", extra=extra)
    )
    (f,) = r.results("MD201")
    assert "a Thunderbolt 4 Mac never lists RDMA devices" in f["summary"]
    (link,) = [x for x in r.results("MD205") if "40 Gb/s" in x["summary"]]
    assert link["evidence"]["cause"] == "unknown"


def test_no_thunderbolt_link(fake_mac, tmp_path):
    env = fake_mac(
        "healthy",
        extra={"system_profiler__SPThunderboltDataType_json.txt": '{"SPThunderboltDataType": []}'},
    )
    r = run_cli("check", "--json", "--only", "MD201,MD205", env=env)
    assert r.status("MD205") == "skip"
    assert (
        r.status("MD201") == "warn"
        and "no Thunderbolt link is connected" in r.results("MD201")[0]["summary"]
    )
    hf = write(tmp_path / "hosts.json", json.dumps(mesh()))
    r = run_cli(
        "check", "--json", "--only", "MD201,MD205", "--local-only", "--hostfile", str(hf), env=env
    )
    assert r.status("MD201") == "fail" and r.status("MD205") == "fail"


def test_hung_system_profiler_is_could_not_assess_not_a_hang(fake_mac):
    env = fake_mac("healthy", extra={"system_profiler.hang": ""})
    r = run_cli("check", "--json", "--only", "MD201,MD205", "--timeout", "2", env=env)
    assert r.rc == 3, r.outcome()
    assert r.elapsed < 30, (
        r.elapsed
    )  # bounded: a verdict at all, not the hang (the figure: benchmarks/check_speed.py)
    (e,) = r.results("MD205")
    assert e["status"] == "error" and "did not finish within" in e["summary"]
    assert "system_profiler SPThunderboltDataType -json" in e["remediation"]["text"]
    (m,) = r.results("MD201")
    assert m["status"] == "ok" and "Thunderbolt links not read" in m["summary"]
