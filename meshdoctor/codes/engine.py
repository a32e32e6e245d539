"""The engine's own codes: those no check, fix, signature or probe outcome declares."""

from __future__ import annotations

from meshdoctor.codes.model import INTERNAL, Doc, Entry

INTERNAL_ERROR = Entry(
    code="MD100",
    kind=INTERNAL,
    title="internal error",
    names=("meshdoctor",),
    doc=Doc(
        meaning="meshdoctor itself failed before it could assess the node (a bug, or a "
        "broken install); the summary names the exception.",
        why="The verdict is 'unknown' (exit 3): nothing was assessed, so a gate must not "
        "launch on it.",
        action="Re-run with --json and report the evidence; reinstall meshdoctor if the "
        "install is broken.",
        sources=("meshdoctor README, exit codes",),
    ),
)
