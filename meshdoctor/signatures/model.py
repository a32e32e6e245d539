"""The vocabulary of the failure signatures: the roles, :class:`Cause`, :class:`Signature` (one
known failure, with its catalogue :class:`~meshdoctor.codes.model.Doc` and its example lines)
and :class:`Match` (a signature found in a text).

A signature's *role* says what it is when several ranks fail together: a :data:`CAUSE`
(something went wrong here), :data:`EITHER` (a cause when alone, often the echo of another
rank's failure, e.g. RTR errno 22 on survivors), or a :data:`CONSEQUENCE` (another rank failed
first, e.g. ``[jaccl] Recv failed with errno=2``). The role is also what its Doc says under
"Why it matters" (:data:`ROLE_WHY`).

How the scanner (:mod:`meshdoctor.signatures.scanner`) recognises a signature is declared on
the signature itself: a line ``pattern``; a ``frame`` (the faulting frame of a native crash:
searched in the crashed thread's frames, ``image`symbol``, of a crash record or a crash report,
:mod:`meshdoctor.signatures.frames`) and an ``abort_frame`` (the same, only for SIGABRT); a
``report_remedy`` (what helps when the finding came from the crash report itself); a
``fallback`` record (:data:`CRASH`: a crash signal whose frame
never came; :data:`TRACEBACK`: a Python traceback whose exception line matched nothing); an
``exit_status``. A meaning that depends on a matched group (which errno, which NCCL message)
comes from the signature's ``refine`` hook; a role that depends on one (the ring's errno 32 or
104 is a peer's death seen from here, errno 14 a fault of this rank) from its ``role_of`` hook,
and each :class:`Match` carries the role of what it matched. This module imports nothing of
meshdoctor but the code vocabulary (:mod:`meshdoctor.codes.model`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Callable, Dict, List, Mapping, Optional, Pattern, Sequence, Tuple

from meshdoctor.codes.model import CAUSE, CONSEQUENCE, EITHER, ROLES, Doc
from meshdoctor.signatures import syserrors


# what each role means for a job: the "Why it matters" part of every signature's Doc
ROLE_WHY: Dict[str, str] = {
    CAUSE: "A first cause: the rank that printed it could not go on, and the job with it; the "
    "other ranks' errors that follow are its consequences.",
    EITHER: "A first cause when it is the only failure; when another rank failed earlier (often "
    "in the same second) it is that failure's echo: deal with the earliest failure "
    "first.",
    CONSEQUENCE: "Usually a consequence of another rank's failure: look for the first cause.",
}

# the multi-line records a signature may name when no other signature claims them
CRASH, TRACEBACK = "crash", "traceback"

# refine hook: the regex groups of a match -> what this match says in particular, or None
Refine = Callable[[Mapping[str, str]], Optional[str]]
# role hook: the regex groups of a match -> this match's role (one of ROLES), or None for the
# signature's own
RoleOf = Callable[[Mapping[str, str]], Optional[str]]


@dataclass(frozen=True)
class Cause:
    """One known cause of a signature and the ``evidence`` that tells it from the others."""

    what: str
    evidence: str

    def to_dict(self) -> Dict[str, str]:
        return {"cause": self.what, "evidence": self.evidence}


@dataclass(frozen=True)
class FailureClass:
    """One failure class of a signature that reads many texts of one component (NCCL's
    ``WARN`` lines): the ``name``, the ``regex`` searched in the match's ``msg`` group (its
    whole line when it has none), what it means here (``meaning``), its ``cause``, what helps
    (``remedy``) and its public ``source`` (the files and version whose sites it reads);
    ``role``: the role of a match in this class when it is not the signature's (one of
    :data:`ROLES`: a class whose cause is this host's own setup, a full /dev/shm, is a
    ``cause`` even when the signature's other texts are often echoes), or None."""

    name: str
    regex: Pattern[str]
    meaning: str
    cause: str
    remedy: str
    source: str
    role: Optional[str] = None

    def text(self) -> str:
        """The class as one sentence: meaning, cause and what helps."""
        return f"{self.meaning} (cause: {self.cause}); what helps: {self.remedy}"


def failure_class(
    name: str, regex: str, meaning: str, cause: str, remedy: str, source: str
) -> FailureClass:
    """Declare a :class:`FailureClass` (``regex`` compiled; every part required)."""
    for part, text in (
        ("meaning", meaning),
        ("cause", cause),
        ("remedy", remedy),
        ("source", source),
    ):
        if not text.strip():
            raise ValueError(f"failure class {name}: empty {part}")
    return FailureClass(name, re.compile(regex), meaning, cause, remedy, source)


@dataclass(frozen=True)
class Signature:
    """One known failure, as :func:`signature` declares it.

    ``code`` (MD6xx) and ``name`` (``family.what``); ``pattern`` (a compiled regex searched line
    by line, or None for a signature recognised by other means); ``doc`` (its catalogue
    explanation, built at declaration); ``remedy`` (what helps, as a match shows it: the Doc's
    action without the check); ``causes`` (most common first); ``role`` (one of
    :data:`ROLES`); ``check`` (the meshdoctor check code that looks at the likely cause, or
    None); ``fixed_in`` (the MLX version whose upgrade removes or clarifies the failure, or
    None); ``examples`` (real lines, or multi-line records, it must match: see
    tests/unit/signatures/test_signatures.py); ``refine`` (see :data:`Refine`); ``frame`` (the faulting frame
    that names a native crash, searched after a crash signal); ``fallback`` (:data:`CRASH` or
    :data:`TRACEBACK`: the record it names when no other signature does); ``exit_status`` (the
    rank exit status that means it) and ``exit_unless`` (text whose presence in the rank's
    output means the exit status is explained otherwise); ``envelope``: a generic wrapper of
    other messages (``NCCL WARN ...``), dropped where a specific signature matches the same
    line; ``role_of`` (see :data:`RoleOf`): the role of one match when its groups decide it
    (:meth:`role_for`); ``abort_frame`` (a frame that names this signature only when the process aborted,
    SIGABRT: a frame in Metal's own image); ``report_remedy`` (the remedy when the finding
    came from the crash report itself, an ``.ips`` file or a crash report's text with its
    frames: it never sends the reader to find that report); ``classes``: the
    :class:`FailureClass` readings of a signature that reads many texts (the first whose
    regex finds the match's groups names it, before ``refine``); ``needs_reboot``: when this
    signature is a first cause, the host it was seen on needs a reboot (the verdict's
    ``needs_reboot``); ``class_remedy``: a match's remedy starts with its class's
    (:meth:`remedy_for`)."""

    code: str
    name: str
    pattern: Optional[Pattern[str]]
    doc: Doc
    remedy: str
    causes: Tuple[Cause, ...] = ()
    role: str = CAUSE
    check: Optional[str] = None
    fixed_in: Optional[str] = None
    examples: Tuple[str, ...] = ()
    refine: Optional[Refine] = None
    frame: Optional[Pattern[str]] = None
    fallback: Optional[str] = None
    exit_status: Optional[int] = None
    exit_unless: Optional[str] = None
    envelope: bool = False
    role_of: Optional[RoleOf] = None
    abort_frame: Optional[Pattern[str]] = None
    report_remedy: Optional[str] = None
    classes: Tuple[FailureClass, ...] = ()
    needs_reboot: bool = False
    class_remedy: bool = False

    def failure_class(self, groups: Mapping[str, str]) -> Optional[FailureClass]:
        """The first of :attr:`classes` whose regex finds the text of a match's groups (its
        ``component`` in brackets first, as MLX prints it), or None."""
        text = " ".join(v for k, v in groups.items() if k != "component")
        if groups.get("component"):
            text = f"[{groups['component']}] {text}"
        return next((c for c in self.classes if c.regex.search(text)), None)

    def remedy_for(self, groups: Mapping[str, str]) -> str:
        """What helps for one match with regex ``groups``: with :attr:`class_remedy`, the
        remedy of the class of :attr:`classes` that names them, then :attr:`remedy`; else
        :attr:`remedy`."""
        cls = self.failure_class(groups) if self.class_remedy and self.classes else None
        return f"{cls.remedy[:1].upper()}{cls.remedy[1:]}. {self.remedy}" if cls else self.remedy

    def role_for(self, groups: Mapping[str, str]) -> str:
        """The role of one match with regex ``groups``: what :attr:`role_of` says of them,
        else its failure class's (:attr:`FailureClass.role`), else :attr:`role`."""
        role = self.role_of(groups) if self.role_of is not None else None
        if role not in ROLES and self.classes:
            c = self.failure_class(groups)
            role = c.role if c is not None else None
        return role if role in ROLES else self.role

    @property
    def meaning(self) -> str:
        """What the signature says was found (its Doc's meaning)."""
        return self.doc.meaning

    @property
    def source(self) -> str:
        """The public source of the fact (its Doc's source)."""
        return self.doc.sources[0]

    def meaning_for(self, groups: Mapping[str, str]) -> str:
        """The meaning of one match with regex ``groups``: :attr:`meaning`, followed by
        ``Here: ...`` when :attr:`refine` knows what these groups say or one of
        :attr:`classes` names them (both, the class first, when both do: the class says
        what the text means, the refinement what else this match shows)."""
        cls = self.failure_class(groups) if self.classes else None
        parts = [cls.text() if cls is not None else None]
        parts.append(self.refine(groups) if self.refine is not None else None)
        if cls is None and (self.envelope or self.fallback is not None):
            # a generic reading (a message of no known class): the system error its text
            # ends in says what kind of failure it is
            parts.append(syserrors.reading(groups.get("msg", "")))
        detail = "; ".join(p for p in parts if p)
        return f"{self.meaning} Here: {detail}." if detail else self.meaning


def signature(
    code: str,
    name: str,
    regex: Optional[str],
    meaning: str,
    remedy: str,
    source: str,
    *,
    examples: Sequence[str],
    causes: Sequence[Tuple[str, str]] = (),
    role: str = CAUSE,
    check: Optional[str] = None,
    fixed_in: Optional[str] = None,
    refine: Optional[Refine] = None,
    frame: Optional[str] = None,
    fallback: Optional[str] = None,
    exit_status: Optional[int] = None,
    exit_unless: Optional[str] = None,
    envelope: bool = False,
    role_of: Optional[RoleOf] = None,
    role_note: str = "",
    abort_frame: Optional[str] = None,
    report_remedy: Optional[str] = None,
    classes: Sequence[FailureClass] = (),
    needs_reboot: bool = False,
    class_remedy: bool = False,
) -> Signature:
    """Declare a :class:`Signature`: ``regex`` and ``frame`` compiled; ``causes`` as
    ``(what, evidence)`` pairs; its Doc built from ``meaning``, the role's why
    (:data:`ROLE_WHY`, then ``role_note``: which matches ``role_of`` gives another role, plus
    the MLX version of ``fixed_in``), ``remedy`` (plus the ``check`` to run) and ``source``.
    Raises ValueError (naming the signature) for an empty part, or a ``role_of`` without its
    ``role_note``."""
    if role not in ROLES:
        raise ValueError(f"signature {code} {name}: role {role!r} is not one of {ROLES}")
    if role_of is not None and not role_note.strip():
        raise ValueError(f"signature {code} {name}: role_of needs a role_note saying when")
    if fallback not in (None, CRASH, TRACEBACK):
        raise ValueError(f"signature {code} {name}: fallback {fallback!r} is not a record")
    why = ROLE_WHY[role]
    if role_note:
        why += " " + role_note.strip()
    if fixed_in:
        why += f" Fixed or made clear in: MLX {fixed_in}."
    action = remedy
    if check:
        action += f" Check: meshdoctor check --only {check}"
    try:
        doc = Doc(meaning=meaning, why=why, action=action, sources=(source,))
    except ValueError as exc:
        raise ValueError(f"signature {code} {name}: {exc}") from None
    return Signature(
        code=code,
        name=name,
        pattern=re.compile(regex) if regex else None,
        doc=doc,
        remedy=remedy,
        causes=tuple(Cause(w, e) for w, e in causes),
        role=role,
        check=check,
        fixed_in=fixed_in,
        examples=tuple(examples),
        refine=refine,
        frame=re.compile(frame) if frame else None,
        fallback=fallback,
        exit_status=exit_status,
        exit_unless=exit_unless,
        envelope=envelope,
        role_of=role_of,
        abort_frame=re.compile(abort_frame) if abort_frame else None,
        report_remedy=report_remedy,
        classes=tuple(classes),
        needs_reboot=needs_reboot,
        class_remedy=class_remedy,
    )


def by_group(group: str, table: Mapping[str, str]) -> Refine:
    """A :data:`Refine` hook: what ``table`` says of the value of regex group ``group``."""

    def refine(groups: Mapping[str, str]) -> Optional[str]:
        return table.get(groups.get(group, ""))

    return refine


def role_by_group(group: str, table: Mapping[str, str]) -> RoleOf:
    """A :data:`RoleOf` hook: the role ``table`` gives the value of regex group ``group``
    (None, the signature's own role, for a value it does not list)."""

    def role_of(groups: Mapping[str, str]) -> Optional[str]:
        return table.get(groups.get(group, ""))

    return role_of


def causes_text(s: Signature) -> str:
    """The known causes of ``s``, most common first, each with the evidence that tells it
    apart (one numbered line each); empty when none are known."""
    return "\n".join(f"{i}. {c.what} (tell: {c.evidence})" for i, c in enumerate(s.causes, 1))


@dataclass
class Match:
    """A signature found in a text: the signature's fields plus the ``line`` that matched
    (stripped, at most :data:`meshdoctor.signatures.scanner.LINE_CHARS` characters), the regex
    ``groups``, the 1-based ``lineno`` where the record starts and up to
    :data:`meshdoctor.signatures.scanner.CONTEXT_LINES` ``context`` lines (the other lines of a
    multi-line record). ``role`` is this match's role (:meth:`Signature.role_for` its groups,
    filled in from the signature when not given)."""

    code: str
    name: str
    meaning: str
    remedy: str
    line: str
    groups: Dict[str, str] = field(default_factory=dict)
    lineno: int = 0
    context: List[str] = field(default_factory=list)
    # the Signature it is a match of (set by the scanner; not part of its value)
    sig: Optional["Signature"] = field(default=None, compare=False, repr=False)
    role: str = ""

    def __post_init__(self) -> None:
        if not self.role and self.sig is not None:
            self.role = self.sig.role_for(self.groups)

    def failure_class(self) -> Optional[FailureClass]:
        """The failure class of :attr:`Signature.classes` this match's groups name, or None
        (no signature, or one without classes)."""
        if self.sig is None or not self.sig.classes:
            return None
        return self.sig.failure_class(self.groups)

    @property
    def signature(self) -> Signature:
        """The catalogued :class:`Signature` of this match's code."""
        if self.sig is None:
            raise LookupError(f"match of {self.code} made outside the scanner")
        return self.sig

    def to_dict(self) -> Dict[str, object]:
        d: Dict[str, object] = {
            "code": self.code,
            "name": self.name,
            "meaning": self.meaning,
            "remedy": self.remedy,
            "line": self.line,
        }
        if self.groups:
            d["groups"] = self.groups
        return d
