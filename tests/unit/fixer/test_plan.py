"""The fix command's flow (meshdoctor.fixer.plan): what a remote host's fix result tells the
operator to paste runs on that host, and a meshdoctor command keeps the plan's options."""

from __future__ import annotations

from meshdoctor.fixer.plan import _remote_remedy
from meshdoctor.model import Remediation


def test_a_remote_hosts_command_and_the_commands_in_its_prose_carry_ssh_host():
    rem = Remediation(
        "Stop it with SIGTERM; if it is still there after a few seconds, `kill -KILL 332`.",
        "kill -TERM 332",
    )
    _remote_remedy(rem, "h1")
    assert rem.command == "ssh h1 'kill -TERM 332'"
    assert "`ssh h1 'kill -KILL 332'`" in rem.text and "`kill -KILL 332`" not in rem.text


def test_meshdoctor_and_ssh_commands_are_left_as_they_are():
    rem = Remediation(
        "Run `meshdoctor fix stale-ranks --hostfile h.json --yes` or `ssh h1 true`.",
        "meshdoctor fix stale-ranks --hostfile h.json --yes",
    )
    _remote_remedy(rem, "h1")
    assert rem.command == "meshdoctor fix stale-ranks --hostfile h.json --yes"
    assert "`meshdoctor fix stale-ranks --hostfile h.json --yes`" in rem.text
    assert "`ssh h1 true`" in rem.text


def test_a_refused_host_name_gets_no_ssh_command():
    rem = Remediation("x", "kill 5")
    _remote_remedy(rem, "h1;rm")
    assert rem.command is None  # no command: `kill 5` pasted here would signal a local pid
