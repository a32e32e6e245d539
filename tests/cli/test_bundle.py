"""``meshdoctor bundle`` on this machine, a fake Mac (tests/fixtures/mac): the archive holds the
check verdict, the tools' raw outputs, versions, the environment that matters and the recent
crash reports, never a planted secret, private key or the home path; MANIFEST lists what failed."""

from __future__ import annotations

import json
import os
import stat
import tarfile
import time

from tests.helpers import run_cli

SECRET = "nccl-tok-5f2b9c1e7d"
PEM = "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n-----END OPENSSH PRIVATE KEY-----"


def members(path):
    with tarfile.open(path) as tar:
        return {
            m.name.split("/", 1)[1]: tar.extractfile(m).read().decode()
            for m in tar.getmembers()
            if m.isfile()
        }


def test_local_bundle_collects_redacts_and_lists_failures(fake_mac, clean_env, tmp_path):
    env = dict(clean_env, **fake_mac("healthy", extra={"ifconfig.exit": "1"}))
    (tmp_path / "bin" / "pmset").unlink()  # a Mac image without pmset: the tool is missing
    home = tmp_path / "home"
    reports = home / "Library" / "Logs" / "DiagnosticReports"
    reports.mkdir(parents=True)
    crash = reports / "python3.12-2026-01-05-100004.ips"
    crash.write_text(
        '{"app_name":"python3.12"}\n'
        f'{{"path": "{home}/venv/bin/python3.12", "note": "{PEM}", "token": "{SECRET}"}}\n'
    )
    old = reports / "python3.12-2020-01-01-000000.ips"
    old.write_text("{}\n")
    os.utime(old, (time.time() - 3 * 86400,) * 2)
    env.update(
        HOME=str(home),
        NCCL_IB_TOKEN=SECRET,
        NCCL_SOCKET_IFNAME="en0",
        MLX_METAL_FAST_SYNCH="1",
        MY_API_KEY=SECRET,
    )
    out = tmp_path / "support.tar.gz"
    r = run_cli("bundle", "-o", str(out), "--since", "1d", "--json", env=env, timeout=120)
    assert r.rc == 0, r.outcome()
    assert r.results("MD412")[-1]["summary"].startswith(f"wrote {out}")
    files = members(out)
    host = next(n.split("/")[0] for n in files if n.endswith("/check.json"))
    assert json.loads(files[f"{host}/check.json"])["command"] == "check"
    tools = {n.split("/", 2)[2] for n in files if n.startswith(f"{host}/tools/")}
    assert {
        "ibv_devinfo-v.txt",
        "ibv_devices.txt",
        "rdma_ctl-status.txt",
        "system_profiler-SPThunderboltDataType.json",
        "networksetup-listallhardwareports.txt",
        "vm_stat.txt",
        "sysctl.txt",
        "sw_vers.txt",
    } <= tools
    assert "PORT_ACTIVE" in files[f"{host}/tools/ibv_devinfo-v.txt"]  # the tool's raw output
    env_txt = files[f"{host}/env.txt"]
    assert "NCCL_IB_TOKEN=<removed>" in env_txt and "NCCL_SOCKET_IFNAME=en0" in env_txt
    assert "MLX_METAL_FAST_SYNCH=1" in env_txt and "MY_API_KEY" not in env_txt
    versions = json.loads(files[f"{host}/versions.json"])
    assert versions["platform"] == "darwin" and versions["meshdoctor"]
    assert list(n for n in files if "/crash/" in n) == [f"{host}/crash/{crash.name}"]
    assert "~/venv/bin/python3.12" in files[f"{host}/crash/{crash.name}"]
    everything = "\n".join(files.values())
    assert SECRET not in everything and "PRIVATE KEY-----\nb3Bl" not in everything
    assert str(home) not in everything
    manifest = files["MANIFEST.txt"].splitlines()
    assert any(
        row.startswith(f"{host}\tfailed\ttools/ifconfig.txt") and "exited 1" in row
        for row in manifest
    ), manifest
    assert any(row.startswith(f"{host}\tmissing\ttools/pmset-g.txt") for row in manifest)
    assert f"{host}\tcollected\tcheck.json" in files["MANIFEST.txt"]
    assert r.status("MD412") == "warn"  # the host's result names what failed
    assert "failed: tools/ifconfig.txt" in r.results("MD412")[0]["summary"]


def test_a_hung_tool_is_cut_at_its_deadline_and_listed(fake_mac, clean_env, tmp_path):
    env = dict(clean_env, **fake_mac("healthy", "vm-stat-hang"))
    env["HOME"] = str(tmp_path)
    out = tmp_path / "b.tar.gz"
    r = run_cli("bundle", "-o", str(out), env=env, timeout=180)
    assert r.rc == 0, r.outcome()
    manifest = members(out)["MANIFEST.txt"]
    row = next(x for x in manifest.splitlines() if "tools/vm_stat.txt" in x)
    assert "\tfailed\t" in row and "did not finish within" in row, row


def test_an_archive_that_cannot_be_written_is_an_error(clean_env, tmp_path):
    r = run_cli(
        "bundle",
        "-o",
        str(tmp_path / "no" / "such" / "b.tar.gz"),
        "--json",
        env=dict(clean_env, HOME=str(tmp_path)),
        timeout=120,
    )
    assert r.rc == 2 and "does not exist" in r.err  # judged before anything is collected
    if os.geteuid() != 0:
        return
    full = tmp_path / "full"  # /dev/full's major and minor: the write itself fails (ENOSPC)
    os.mknod(full, stat.S_IFCHR | 0o666, os.stat("/dev/full").st_rdev)
    r = run_cli("bundle", "-o", str(full), "--json", env=dict(clean_env, HOME=str(tmp_path)))
    assert r.rc == 3 and "could not write" in r.results("MD412")[-1]["summary"]
    assert stat.S_ISCHR(os.lstat(full).st_mode)


def test_no_planted_secret_reaches_any_file_of_the_bundle(fake_mac, clean_env, tmp_path):
    """One planted example of each secret (tests/unit/bundle/test_redact.py: PGP and PuTTY
    private keys, a URL password, GitHub, OpenAI and Slack tokens, session= and auth_key:
    pairs) in a crash report, and secret-named values in the hostfile's envs: none is in
    any member of the archive, the hostfile keeps its names."""
    from tests.unit.bundle.test_redact import LEAKS, PLANTED

    env = dict(clean_env, **fake_mac("healthy"))
    home = tmp_path / "home"
    reports = home / "Library" / "Logs" / "DiagnosticReports"
    reports.mkdir(parents=True)
    (reports / "python3.12-2026-01-05-100004.ips").write_text(
        '{"app_name":"python3.12"}\n' + json.dumps({"notes": "\n".join(PLANTED.values())}) + "\n"
    )
    hostfile = tmp_path / "hosts.json"
    hostfile.write_text(
        json.dumps(
            {
                "backend": "ring",
                "envs": [
                    "WANDB_KEY=wandbkey-val",
                    "SSH_PRIVATE=sshpriv-val",
                    "HTTP_AUTH=httpauth-val",
                ],
                "hosts": [{"ssh": "127.0.0.1", "ips": ["127.0.0.1"]}],  # this machine, no ssh
            }
        )
    )
    env["HOME"] = str(home)
    out = tmp_path / "support.tar.gz"
    r = run_cli(
        "bundle",
        "--hostfile",
        str(hostfile),
        "-o",
        str(out),
        "--since",
        "1d",
        "--json",
        env=env,
        timeout=180,
    )
    assert out.is_file(), r.outcome()
    files = members(out)
    assert any("/crash/" in n for n in files), sorted(files)
    leaked = {n: [s for s in LEAKS if s in text] for n, text in files.items()}
    assert not {n: s for n, s in leaked.items() if s}, leaked
    assert "WANDB_KEY=<removed>" in files["hostfile.json"], files["hostfile.json"]
