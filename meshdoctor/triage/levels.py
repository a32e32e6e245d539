"""Whether a log line is at an error level, whatever program printed it: a level word
(``ERROR``, ``FATAL``, glog's ``E0219 16:52:31``), an error phrase ("failed", "couldn't",
"unable to", "not healthy"), a system error's words
(:mod:`meshdoctor.signatures.syserrors`) or a program's preflight refusal by an estimate
("would require ... but ..."), on a line that is not at INFO or DEBUG level and does not count
zero errors. Shared by the readings that must tell an error line from any other (MD883's
unread error line, a log that stopped at a step it announced)."""

from __future__ import annotations

import re

from meshdoctor.signatures import syserrors

_LEVEL = re.compile(
    r"\b(?:ERROR|FATAL|CRITICAL|PANIC)\b|\[(?:error|fatal)\]|^\s*[EF]\d{4} \d\d:\d\d:\d\d|"
    r"\b(?:[Ee]rror|[Ff]ailed|[Ff]ailure|[Cc]ouldn't|[Cc]annot|[Uu]nable to|not healthy|"
    r"[Ee]xception|[Aa]borted|[Tt]imed out|No such file or directory|[Pp]ermission denied)\b"
)
# a program's own preflight refusal by an estimate ("Prefill would require ~237 GB peak ...
# but dynamic ceiling is 235 GB"): no error word, still the reason nothing ran
ESTIMATE = re.compile(
    r"(?P<estimate>\bwould (?:require|need|use|exceed)\b.{0,160}?\bbut\b)|"
    # the same guard stopping the work when memory passed its ceiling
    r"(?P<peak>\bmemory [\d.]+\s*[KMGT]i?B exceeds (?:the |its )?(?:ceiling|limit)\b)"
)
_NOT_ERROR = re.compile(
    r"\b(?:INFO|DEBUG|TRACE|NOTICE)\b|\[(?:info|debug)\]|^\s*[ID]\d{4} \d\d:\d\d:\d\d|"
    r"\b(?:0|no|zero) errors?\b|\berrors?\s*[:=]\s*0\b|\bfailed\s*[:=]\s*0\b|"
    r"\bexited with (?:code|status) 0\b"
)


def is_error_line(text: str) -> bool:
    """Whether one line is at an error level (the rule in the module's docstring)."""
    return bool(
        (_LEVEL.search(text) or syserrors.names_one(text) or ESTIMATE.search(text))
        and not _NOT_ERROR.search(text)
    )
