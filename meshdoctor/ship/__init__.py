"""meshdoctor shipped to another host over the ssh session itself: nothing to install there.

As Ansible ships its modules (its "AnsiballZ" zip payload run by the remote Python, Ansible's
docs "Ansible module architecture"), the fan-out (:mod:`meshdoctor.fanout`) runs meshdoctor on
a remote host from a zip application (:mod:`zipapp`, PEP 441) of this very package and the
pure-Python packages the remote side imports (:data:`BUNDLED`: click, platformdirs; psutil is
optional there, see :mod:`meshdoctor.proctable`), built once per run in memory
(:func:`payload`) and keyed by its SHA-256. The remote side keeps it in the user's cache
directory (``$XDG_CACHE_HOME/meshdoctor`` or ``~/.cache/meshdoctor``; ``~/Library/Caches/
meshdoctor`` on macOS: platformdirs' ``user_cache_dir``) as ``<sha256>.pyz``, the folder made
0700, the file written to a temporary name and renamed, and runs it only after reading it
back and checking its hash.

Every step is one ``python -c`` of :data:`BOOT` (standard library only, syntax that any Python
still parses, so an old interpreter is named rather than failing on a newer syntax):

* ``BOOT run HASH MODULE ARGS...``: runs ``python -m MODULE ARGS`` (``meshdoctor`` or one of
  its modules) from the cached copy when it is there,
  ours (a regular file owned by this user in a folder of ours that nobody else may write) and
  whole (its SHA-256 is ``HASH``), the copy first on ``PYTHONPATH`` too (a child it starts
  with ``sys.executable -m meshdoctor`` finds it); else exits :data:`EXIT_ABSENT` and never
  runs it. A Python
  older than :data:`MIN_PYTHON` exits :data:`EXIT_TOO_OLD` naming its version.
* ``BOOT store HASH``: reads the zip application base64-encoded on standard input, checks its
  hash, and writes it to the cache (temporary file, fsync, rename).

The zip is built deterministically (sorted names, fixed times and modes), so the same
meshdoctor gives the same hash on every run and the copy cached by one run serves the next.
"""

from __future__ import annotations

import base64
import hashlib
import io
import importlib
import zipfile
from functools import lru_cache
from pathlib import Path
from typing import Iterator, List, Sequence, Tuple

MIN_PYTHON = (3, 10)  # pyproject's requires-python (mlx 0.30-0.32.4 wheels: >=3.10)
BUNDLED = ("meshdoctor", "click", "platformdirs")  # pure Python, imported on the remote side
EXIT_TOO_OLD = 90  # the remote Python is older than MIN_PYTHON
EXIT_ABSENT = 91  # no cached copy of that hash there (or one that is not whole, or not ours)
EXIT_UNSAFE = 92  # the cache folder is not ours alone: nothing is stored or run from it
EXIT_BAD_UPLOAD = 93  # what arrived on standard input does not have the hash it was sent with
MARK = "meshdoctor-ship:"  # the first word of every line BOOT writes to standard error
_EPOCH = (1980, 1, 1, 0, 0, 0)  # the earliest time a zip entry holds: the same bytes every run

BOOT = r"""
import sys, os, hashlib
def say(why, code):
    sys.stderr.write("meshdoctor-ship: " + why + "\n")
    sys.exit(code)
if tuple(sys.version_info[:2]) < (%(major)d, %(minor)d):
    say("Python %%d.%%d.%%d at %%s is older than %(major)d.%(minor)d" %% (
        tuple(sys.version_info[:3]) + (sys.executable,)), %(too_old)d)
mode, want = sys.argv[1], sys.argv[2]
home = os.path.expanduser("~")
if sys.platform == "darwin":
    base = os.path.join(home, "Library", "Caches")
else:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(home, ".cache")
folder = os.path.join(base, "meshdoctor")
path = os.path.join(folder, want + ".pyz")
if mode == "store":
    try:
        os.makedirs(folder, 0o700)
    except OSError:
        pass
try:
    st = os.lstat(folder)
except OSError:
    say("absent: no cache folder " + folder, %(absent)d)
import stat
if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.geteuid() or st.st_mode & 0o022:
    say("unsafe: " + folder + " is not a folder of this user that only it may write", %(unsafe)d)
if mode == "store":
    import base64, tempfile
    data = base64.b64decode(sys.stdin.read())
    if hashlib.sha256(data).hexdigest() != want:
        say("the upload does not have its hash " + want, %(bad)d)
    try:  # never replace what is not a regular file of ours (a link, a folder, a FIFO)
        old = os.lstat(path)
    except OSError:
        old = None
    if old is not None and (not stat.S_ISREG(old.st_mode) or old.st_uid != os.geteuid()):
        say("unsafe: " + path + " is there and is not a regular file of this user", %(unsafe)d)
    fd, tmp = tempfile.mkstemp(prefix="." + want + ".", suffix=".tmp", dir=folder)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise
    sys.stdout.write("stored " + path + "\n")
    sys.exit(0)
try:
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
except OSError:
    say("absent: " + path, %(absent)d)
with os.fdopen(fd, "rb") as f:
    st = os.fstat(f.fileno())
    if not stat.S_ISREG(st.st_mode) or st.st_uid != os.geteuid():
        say("absent: " + path + " is not a regular file of this user", %(absent)d)
    digest = hashlib.sha256(f.read()).hexdigest()
if digest != want:
    say("absent: " + path + " is not whole (its SHA-256 is " + digest + ")", %(absent)d)
module = sys.argv[3]
if module != "meshdoctor" and not module.startswith("meshdoctor."):
    say("not a module of meshdoctor: " + module, %(absent)d)
sys.path.insert(0, path)
old = os.environ.get("PYTHONPATH")
os.environ["PYTHONPATH"] = path + (os.pathsep + old if old else "")  # its own children
sys.argv = [path] + sys.argv[4:]
import runpy
runpy.run_module(module, run_name="__main__", alter_sys=True)
""" % {
    "major": MIN_PYTHON[0],
    "minor": MIN_PYTHON[1],
    "too_old": EXIT_TOO_OLD,
    "absent": EXIT_ABSENT,
    "unsafe": EXIT_UNSAFE,
    "bad": EXIT_BAD_UPLOAD,
}

_MAIN = b"import runpy\nrunpy.run_module('meshdoctor', run_name='__main__', alter_sys=True)\n"


def _files(package: str) -> Iterator[Tuple[str, Path]]:
    """``(name in the zip, path)`` for every file of the installed ``package`` but compiled
    caches: its modules and its package data."""
    mod = importlib.import_module(package)
    root = Path(next(iter(mod.__path__))).resolve()
    for p in sorted(root.rglob("*")):
        if p.is_file() and "__pycache__" not in p.parts and p.suffix not in (".pyc", ".pyo"):
            yield f"{package}/{p.relative_to(root).as_posix()}", p


@lru_cache(maxsize=1)
def payload() -> bytes:
    """The zip application (bytes) of :data:`BUNDLED` as installed here, with a
    ``__main__.py`` that runs meshdoctor (``python app.pyz ARGS`` works too); the same bytes for
    the same files (sorted entries, fixed times and modes). Built once per process."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        entries: List[Tuple[str, bytes]] = [("__main__.py", _MAIN)]
        for package in BUNDLED:
            entries += [(name, p.read_bytes()) for name, p in _files(package)]
        for name, data in sorted(entries):
            info = zipfile.ZipInfo(name, _EPOCH)
            info.external_attr = 0o644 << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            z.writestr(info, data)
    return buf.getvalue()


def digest() -> str:
    """The SHA-256 (hex) of :func:`payload`: the name of its cached copy on every host."""
    return hashlib.sha256(payload()).hexdigest()


def upload_text() -> str:
    """:func:`payload` base64-encoded: the standard input of ``BOOT store``."""
    return base64.b64encode(payload()).decode("ascii")


def run_argv(python: str, args: Sequence[str], module: str = "meshdoctor") -> List[str]:
    """The remote argv that runs ``python -m MODULE ARGS`` (``meshdoctor`` or one of its
    modules) from the cached copy with ``python``."""
    return [python, "-c", BOOT, "run", digest(), module, *args]


def store_argv(python: str) -> List[str]:
    """The remote argv that stores the copy sent on its standard input (:func:`upload_text`)."""
    return [python, "-c", BOOT, "store", digest()]


def boot_said(stderr: str) -> str:
    """The reason BOOT gave on ``stderr`` (its last :data:`MARK` line, without the mark), or
    an empty string when it said nothing."""
    lines = [ln.strip() for ln in stderr.splitlines() if ln.strip().startswith(MARK)]
    return lines[-1][len(MARK) :].strip() if lines else ""
