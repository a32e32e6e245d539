"""One rule for text from outside: every printer escapes control characters alike, and no field
of a result or an action can forge a line."""

from __future__ import annotations

from meshdoctor import text
from meshdoctor.render import style
from meshdoctor.render import verdict as render


def test_the_escape_helper():
    assert style.plain("a\x1b[0mb\x00c\td\ne") == "a\\x1b[0mb\\x00c\td\ne"
    assert style.clean("[red]x[/]") == "\\[red]x\\[/]"


def test_every_printer_escapes_control_characters_the_same_way():
    """One rule for text from outside: the plain printer, log lines, other hosts' verdicts and
    the fleet table all show a control character as ``\\xNN`` (never obey it, never hide it)."""
    from meshdoctor import signatures
    from meshdoctor.render import fleet as render_fleet
    from meshdoctor.model import Result

    raw = "dev\x1b]0;t\x07\x00"
    want = "dev\\x1b]0;t\\x07\\x00"
    assert style.plain(raw) == want
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
    for printer in (style.plain, text.one_line, signatures.printable, render_fleet.safe):
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
    assert len(lines) == 2 and "kill $'x\\nFAKE" in lines[1], lines  # pastes as the same word


def test_a_command_line_shows_control_characters_and_pastes_as_the_same_words():
    """shell_line of words holding ESC, BEL, U+202E, DEL, a C1 character, a newline, a tab, a
    quote and a backslash: the line holds none of them raw, and real bash reads it back as
    the same words."""
    import subprocess

    words = ["ssh", "m\x1b]0;t\x07\u202e1", "a\nb\tc\x7f\x85", "it's\\", "plain", "a b"]
    line = text.shell_line(words)
    assert line.isprintable(), line
    p = subprocess.run(
        ["bash", "-c", f'for w in {line}; do printf "%s\\0" "$w"; done'],
        capture_output=True,
        timeout=30,
    )
    assert p.stdout.decode().split("\0")[:-1] == words, (line, p.stdout)
