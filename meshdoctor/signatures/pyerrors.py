"""What Python's built-in exceptions of a program's own mistakes mean: the classes that
report the code's error rather than its environment (a name not defined, a key or index
absent, an attribute of None), and the messages CPython gives them, which a program that
catches an exception and logs ``str(exc)`` prints without the class (``Error processing
prompt: list index out of range``).

Sources: the Python reference, "Built-in Exceptions" (3.9-3.13), and CPython's own message
texts (Objects/listobject.c "list index out of range", Objects/abstract.c "'%.200s' object is
not subscriptable", Python/ceval.c "name '%.200s' is not defined", "cannot access local
variable", Python 3.11+; "local variable ... referenced before assignment" before it);
NumPy's "index N is out of bounds for axis N".
"""

from __future__ import annotations

import re
from typing import Mapping, Optional, Tuple

# the exception classes that report a program's own mistake, not its environment: what each
# says the code did
DEFECTS: Mapping[str, str] = {
    "NameError": "used a name that is not defined where it runs (a typo, or a variable set "
    "only on another branch or at another debug level)",
    "UnboundLocalError": "read a local variable before any branch assigned it",
    "AttributeError": "asked an object for an attribute it does not have (on None: a value "
    "the code expected was never set; on a class: an object of another type or version "
    "than it was written for)",
    "TypeError": "used a value of a type it did not expect (None where a value should be, "
    "or an object of another version of a library)",
    "KeyError": "looked up a key that is absent (a field of a model's or a config's file "
    "that this release does not know, or an entry that was already removed)",
    "IndexError": "indexed past the end of a sequence (an empty list, or fewer items than "
    "it assumed)",
    "AssertionError": "failed one of its own internal checks",
    "ZeroDivisionError": "divided by zero (an empty count or a size of zero)",
    "RecursionError": "recursed without end",
    # anyio's stream exceptions (anyio documentation, "Streams": BrokenResourceError when the
    # other end of a memory object stream was closed, ClosedResourceError on one's own closed
    # end): raised in a library, they report the caller's unhandled case
    "BrokenResourceError": "sent to (or received from) an anyio stream whose other end was "
    "already closed: the consumer or peer went away (disconnected, cancelled, timed out) and "
    "the code did not expect it; unhandled in a task group, it ends the whole group",
    "ClosedResourceError": "used an anyio stream or resource that it had closed itself",
    # json.JSONDecodeError (a ValueError): text that is not JSON, parsed without a fallback
    "JSONDecodeError": "parsed text as JSON that is not JSON: another program's or a "
    "model's output in another format (single-quoted Python literals from a model's tool "
    "call, a response cut short, an HTML error page) with no fallback for it",
    # an input the code was not written for: bytes of another format
    "UnicodeDecodeError": "decoded bytes as text that are not (UTF-8) text: an input of "
    "another format, a binary file, or another program's packet on the port it listens on "
    "(a router's or another service's broadcasts on the same UDP port): the code should "
    "skip what it cannot decode",
}

# CPython's (and NumPy's) messages of those classes, as ``str(exc)`` prints them
_MESSAGES: Tuple[Tuple[str, str], ...] = (
    (
        "IndexError",
        r"\b(?:list|tuple|string) index out of range|index -?\d+ is out of bounds "
        r"for (?:axis|dimension) \d+",
    ),
    (
        "UnboundLocalError",
        r"cannot access local variable '\w+' where it is not associated "
        r"with a value|local variable '\w+' referenced before assignment",
    ),
    ("NameError", r"\bname '\w+' is not defined"),
    ("AttributeError", r"'\w+' object has no attribute '\w+'"),
    (
        "TypeError",
        r"'NoneType' object is not (?:subscriptable|iterable|callable)|object of type "
        r"'NoneType' has no len\(\)|unsupported operand type\(s\) for|argument of type "
        r"'NoneType' is not iterable",
    ),
    ("RecursionError", r"maximum recursion depth exceeded"),
    ("ZeroDivisionError", r"\b(?:float |integer )?division (?:or modulo )?by zero"),
    ("RuntimeError", r"\b(?:dictionary|[Ss]et|dictionary keys) changed (?:size )?during iteration"),
)

# what a message says the code did where its class alone says less (a RuntimeError is not
# always the code's own mistake; this one is)
_RACE = (
    "changed a dict or set while a loop iterated over it: in asynchronous or threaded code, "
    "another task added or removed an entry during the loop (a race: iterate over a copy)"
)
_TEXTS = re.compile("|".join(f"(?P<g{k}>{rx})" for k, (_, rx) in enumerate(_MESSAGES)))


# the package of a frame's file: ".../site-packages/torch/distributed/x.py" -> torch
_PACKAGE = re.compile(r"/(?:site|dist)-packages/([A-Za-z_]\w*)")
# projects whose files run from a checkout as often as from site-packages, by their path's
# folder: ".../exo/src/exo/worker/runner.py" -> exo
_PROJECTS = re.compile(
    r"(?:^|/)(exo|mlx_lm|mlx_vlm|mlx|omlx|vllm|sglang|torch|transformers|deepspeed|megatron)/"
)
# the libraries that only carry a call (an event loop, a stream, a thread pool): an exception
# raised in one of their frames reports the code that called them
PLUMBING = re.compile(r"(?:^|/)(?:anyio|asyncio|trio|concurrent|sniffio)/|(?:^|/)threading\.py$")


def package_of(path: str, checkouts: bool = True) -> Optional[str]:
    """The package whose code a frame's file ``path`` is: the folder under site-packages (or
    dist-packages), else with ``checkouts`` a known project's folder in a source checkout
    (:data:`_PROJECTS`); None for another file (the job's own)."""
    path = path.replace("\\", "/")
    m = _PACKAGE.search(path) or (_PROJECTS.search(path) if checkouts else None)
    return m.group(1) if m else None


def caught(text: str) -> Optional[Tuple[str, str]]:
    """The built-in exception whose message ``text`` holds without its class (a program
    that logged ``str(exc)``): ``(class, the message's words)``, or None."""
    m = _TEXTS.search(text)
    if m is None:
        return None
    return _MESSAGES[int((m.lastgroup or "g0")[1:])][0], m.group(0)


def defect(kind: str, msg: str = "") -> Optional[str]:
    """What an exception of class ``kind`` (its last dotted part) with message ``msg`` says the
    code did, when it reports the code's own mistake; None otherwise."""
    got = caught(msg)
    if got is not None and got[0] == kind:
        return _what(*got)
    return DEFECTS.get(kind)


def _what(kind: str, words: str) -> str:
    return _RACE if "during iteration" in words else DEFECTS[kind]


def reading(text: str) -> Optional[str]:
    """What the generic error-line reading says of a line holding such a message: the class,
    what that code did and what to do; None when ``text`` holds none."""
    got = caught(text)
    if got is None:
        return None
    kind, words = got
    return (
        f"'{words}' is Python's {kind} message: the program caught an exception of its own "
        f"code and logged it, without its traceback; that code {_what(kind, words)}. A bug of "
        "that program's release (or an input it was not written for: a model, config or "
        "request), not the mesh: note its version, upgrade it (a fix may exist), search its "
        "issue tracker for the message, and rerun with its debug logging for the traceback "
        "that says where"
    )
