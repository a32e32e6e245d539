"""meshdoctor.remote: ssh argv and quoting, the host-name rule, commands offered to copy."""

from __future__ import annotations

import json
import os
import shlex

import pytest

from meshdoctor import remote, text


def test_remote_uses_the_same_host_name_rule():
    from meshdoctor.remote import RemoteError, check_host

    with pytest.raises(RemoteError, match="cannot be an ssh destination"):
        check_host("a;touch${IFS}x")


def test_commands_offered_to_copy_quote_every_word_from_outside():
    """A command line shown to the user is built with shlex.quote; an ssh command is offered
    only for a host name the one host-name rule accepts."""
    import shlex

    from meshdoctor import fanout, remote

    hint = fanout.install_hint("m2", "/opt/my py/bin/python3")  # meshdoctor is sent over ssh
    assert shlex.split(hint) == [
        "ssh",
        "m2",
        shlex.join(["/opt/my py/bin/python3", "-m", "pip", "install", "mlx"]),
    ]
    os.environ[fanout.SHIP_ENV] = "installed"  # the remote host's own meshdoctor
    try:
        hint = fanout.install_hint("m2", "/opt/my py/bin/python3")
        src = fanout.install_source()  # meshdoctor is not on PyPI: the source it came from
        assert src and shlex.split(hint) == [
            "ssh",
            "m2",
            shlex.join(["/opt/my py/bin/python3", "-m", "pip", "install", src]),
        ]
        assert "scp -r" not in fanout.install_text("m2")
    finally:
        del os.environ[fanout.SHIP_ENV]
    assert remote.shown_command("user@m2", ["true"]) == "ssh user@m2 true"
    for bad in ("a;rm -rf /", "-oProxyCommand=touch /tmp/X", "host\nFAKE", "$(id)", ""):
        assert fanout.install_hint(bad, "python3") is None, bad
        assert remote.shown_command(bad, ["true"]) is None, bad
    assert text.shell_line(["kill", "-9", 12, "1;reboot"]) == "kill -9 12 '1;reboot'"
    from meshdoctor import execute  # how a command that ran is described in a summary

    got = execute.run(["/opt/no such/python3", "-c", "x;y"], timeout=5).describe()
    assert got == "`'/opt/no such/python3' -c 'x;y'`: no such executable file"


def test_remote_command_quotes_everything():
    env = {"MLX_RANK": "1", "PLAN": json.dumps({"a": "b c'd"})}
    cmd = remote.remote_command(["python3", "-u", "-", "id; rm -rf /"], env)
    words = shlex.split(cmd)
    assert words == [
        "env",
        "MLX_RANK=1",
        f"PLAN={env['PLAN']}",
        "python3",
        "-u",
        "-",
        "id; rm -rf /",
    ]
    argv = remote.ssh_argv("node-1", ["true"])
    assert argv[:3] == ["ssh", "-o", "BatchMode=yes"] and "--" in argv
    assert any(a.startswith("ConnectTimeout=") for a in argv)
    assert argv[argv.index("--") + 1] == "node-1"


@pytest.mark.parametrize("host", ["-oProxyCommand=x", "a b", "", "x\ny"])
def test_remote_refuses_unsafe_hosts(host):
    with pytest.raises(remote.RemoteError):
        remote.ssh_argv(host, ["true"])
    with pytest.raises(remote.RemoteError):
        remote.remote_command(["true"], {"BAD KEY": "1"})


def _calls(monkeypatch, *argvs):
    """remote.run replaced by real local commands, one per call in order (ssh's outcomes:
    a completed call, ssh's own 255, a deadline overrun)."""
    from meshdoctor import execute

    todo = list(argvs)
    monkeypatch.setattr(
        remote, "run", lambda host, argv, timeout, **kw: execute.run(todo.pop(0), timeout=timeout)
    )


def test_a_timeout_on_a_host_that_answered_is_unconfirmed_not_unreachable(monkeypatch):
    _calls(monkeypatch, ["true"], ["sleep", "30"], ["sh", "-c", "exit 255"], ["true"])
    hosts = remote.Hosts()
    assert hosts.run("h0", ["true"], 5).ok and "h0" in hosts.answered
    assert hosts.run("h0", ["x"], 0.5).timed_out
    assert hosts.unreachable == {} and "did not answer within" in hosts.unconfirmed["h0"]
    assert hosts.run("h0", ["x"], 5).returncode == 255 and hosts.unreachable == {}
    assert hosts.run("h0", ["true"], 5).ok and hosts.unconfirmed == {}  # asked again, not skipped


def test_a_host_that_never_answered_is_unreachable_and_skipped(monkeypatch):
    _calls(monkeypatch, ["sleep", "30"])
    hosts = remote.Hosts()
    assert hosts.run("h9", ["x"], 0.5).timed_out
    assert "did not answer within" in hosts.unreachable["h9"]
    assert "skipped" in hosts.run("h9", ["x"], 5).stderr  # no second wait


def test_a_deadline_long_past_the_connect_timeout_means_ssh_got_through():
    """ssh ends a connection that does not come up at its ConnectTimeout with exit 255; a call
    still running well after it reached the host."""
    assert not remote.connected_by(2.0)
    assert not remote.connected_by(remote.CONNECT_TIMEOUT_S)
    assert remote.connected_by(remote.CONNECT_TIMEOUT_S + remote.CONNECTED_SLACK_S)


def test_control_sockets_go_where_a_socket_path_fits(monkeypatch, tmp_path):
    """The run's control-socket folder: 0700 under the state directory when the socket path
    fits a unix socket (about 100 bytes, 104 on macOS), else under the temporary folder."""
    import os
    import stat

    from meshdoctor import receipts

    short = tmp_path.parent / "st"
    monkeypatch.setenv(receipts.STATE_ENV, str(short))
    d = remote._make_dir()
    try:
        assert d.parent == short and stat.S_IMODE(os.stat(d).st_mode) == 0o700
        assert len(str(d / remote.socket_name("a-very-long-host-name.example.org"))) + 17 < 104
    finally:
        os.rmdir(d)
    monkeypatch.setenv(receipts.STATE_ENV, str(tmp_path / ("x" * 90)))
    d = remote._make_dir()
    try:
        assert d is not None and not str(d).startswith(str(tmp_path))
        assert stat.S_IMODE(os.stat(d).st_mode) == 0o700
    finally:
        os.rmdir(d)


def test_ssh_goes_through_the_runs_master_unless_turned_off(monkeypatch):
    monkeypatch.setattr(remote, "SHARED", remote.Shared())
    monkeypatch.setattr(remote.Shared, "path", lambda self, host: f"/s/{remote.socket_name(host)}")
    argv = remote.ssh_argv("node-1", ["true"])
    assert "ControlMaster=auto" in argv and f"ControlPersist={remote.CONTROL_PERSIST_S}" in argv
    assert f'ControlPath="/s/{remote.socket_name("node-1")}"' in argv
    assert argv.index("ControlMaster=auto") < argv.index("--")
    monkeypatch.undo()
    monkeypatch.setenv(remote.MULTIPLEX_ENV, "0")
    assert not any(a.startswith("Control") for a in remote.ssh_argv("node-1", ["true"]))


def test_socket_folders_of_gone_runs_are_removed(monkeypatch, tmp_path):
    """A run killed before its exit leaves its folder: the next run removes it, never one of a
    live run."""
    import os
    import subprocess

    from meshdoctor import receipts

    state = tmp_path.parent / "sw"
    state.mkdir(mode=0o700, exist_ok=True)
    monkeypatch.setenv(receipts.STATE_ENV, str(state))
    p = subprocess.Popen(["true"])
    p.wait()
    gone = state / f"ssh-{p.pid}-abcdefgh"
    live = state / f"ssh-{os.getppid()}-abcdefgh"
    for d in (gone, live):
        d.mkdir(mode=0o700)
    d = remote._make_dir()
    try:
        assert not gone.exists() and live.exists() and d.parent == state
    finally:
        os.rmdir(d)
        os.rmdir(live)
