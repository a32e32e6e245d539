"""A cache of the MLX build probe's answer, kept between runs while nothing it depends on changed.

The probe (:func:`meshdoctor.facts.mlx_build.gather_mlx`) starts an interpreter that imports mlx;
its answer is a function of the files that import reads, the environment it runs in and, for
backends that load system libraries (MPI), the dynamic linker's cache. One entry per key is kept
in ``<state dir>/cache/mlx_build/`` (the state directory of :func:`meshdoctor.receipts.state_dir`),
a JSON file of mode 0600 written atomically; the folder and its files are opened and checked as
:mod:`meshdoctor.receipts` says (no link followed, only our own regular files read). An entry is used only when all of these are unchanged:

* the key: the probe's own text, the interpreter path, its resolved path and that file's
  (mtime_ns, size, inode), any ``pyvenv.cfg`` beside it, the working directory (the child's
  ``sys.path[0]``) and its mtime, a digest of the child's environment (without per-session
  variables such as ``SSH_CLIENT``), the boot id (``/proc/sys/kernel/random/boot_id``: a reboot or
  a new kernel), ``/etc/ld.so.cache`` (rewritten by ``ldconfig`` on library installs) and the
  dynamic linker's default directories (a ``libmpi.so`` copied there changes what
  ``is_available(backend="mpi")`` answers);
* the files the child reported, each by (mtime_ns, size, inode): every ``sys.path`` entry (a
  directory's mtime changes when a package or ``.pth`` file is added or removed in it), the mlx
  package directories, its core extension (``mlx/core*.so``) and the libraries in ``mlx/lib``.

Only Linux answers of a CPU build are kept (``mx.cuda.is_available()`` False, no ``mlx-cuda-*``
package, no nccl backend): a GPU can fall off the bus and Metal's working set follows
``iogpu.wired_limit_mb`` without any file changing, so those are probed every run. A file that
cannot be read or parsed, or does not have the expected shape, is ignored (and replaced).
``MESHDOCTOR_MLX_CACHE=0`` turns the cache off.
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any, Dict, List, Optional
from meshdoctor.parsers import json_text

FORMAT = 1
DISABLE_ENV = "MESHDOCTOR_MLX_CACHE"
MAX_ENTRIES = 16
# per-session variables that cannot change what importing mlx finds
SESSION_ENV = frozenset(
    (
        "_",
        "PWD",
        "OLDPWD",
        "SHLVL",
        "SSH_CLIENT",
        "SSH_CONNECTION",
        "SSH_TTY",
        "TERM_SESSION_ID",
        "WINDOWID",
        "COLUMNS",
        "LINES",
    )
)
BOOT_ID = "/proc/sys/kernel/random/boot_id"
LD_CACHE = "/etc/ld.so.cache"
# the dynamic linker's default directories (ld.so(8)); MLX dlopens libmpi.so for its mpi backend
LIB_DIRS = ("/lib", "/usr/lib", "/lib64", "/usr/lib64")


def stat_sig(path: str) -> Optional[List[int]]:
    """``[mtime_ns, size, inode]`` of ``path`` (followed if a link), None when it does not
    exist or cannot be read."""
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return None
    return [st.st_mtime_ns, st.st_size, st.st_ino]


# What MESHDOCTOR_MLX_CACHE may say (empty or unset: on).
CACHE_OFF = ("0", "no", "off", "false")
CACHE_ON = ("1", "yes", "on", "true")


def env_problem() -> Optional[str]:
    """What is wrong with ``MESHDOCTOR_MLX_CACHE`` (a value neither in :data:`CACHE_OFF` nor
    in :data:`CACHE_ON`, which would otherwise leave the cache on without a word), or None."""
    raw = os.environ.get(DISABLE_ENV, "")
    if raw.strip() and raw.strip().lower() not in CACHE_OFF + CACHE_ON:
        return (
            f"{DISABLE_ENV}={raw!r} is neither on nor off; set it to one of "
            f"{', '.join(CACHE_OFF)} (off) or {', '.join(CACHE_ON)} (on)"
        )
    return None


def enabled(platform: str) -> bool:
    """Whether answers may be cached here: Linux (really, not simulated) and not turned off."""
    return (
        platform == "linux"
        and sys.platform == "linux"
        and os.environ.get(DISABLE_ENV, "1").strip().lower() not in CACHE_OFF
    )


def cacheable(answer: Dict[str, Any]) -> bool:
    """True for the answer of an installed CPU build (see the module docstring)."""
    cuda = answer.get("cuda")
    backends = answer.get("backends")
    return (
        answer.get("installed") is True
        and isinstance(cuda, dict)
        and cuda.get("available") is False
        and cuda.get("packages") == []
        and "error" not in cuda
        and isinstance(backends, dict)
        and backends.get("nccl") is not True
        and answer.get("max_recommended_working_set_size") is None
    )


def key(python: str, env: Dict[str, str], probe: str) -> Dict[str, Any]:
    """What the child's answer depends on besides the files it reports (module docstring)."""
    import hashlib
    import shutil

    exe = python
    if os.sep not in python:  # a bare name runs what PATH finds first
        exe = shutil.which(python, path=env.get("PATH", os.defpath)) or python
    real = os.path.realpath(exe)
    here = os.path.dirname(os.path.abspath(exe))
    try:
        cwd: Optional[str] = os.getcwd()
    except OSError:  # removed under us: the child's sys.path[0] is then nothing we can stamp
        cwd = None
    try:
        with open(BOOT_ID, encoding="ascii") as fh:
            boot = fh.read().strip()
    except OSError:
        boot = None
    env_items = sorted((k, v) for k, v in env.items() if k not in SESSION_ENV)
    return {
        "format": FORMAT,
        "probe": hashlib.sha256(probe.encode()).hexdigest(),
        "python": python,
        "python_real": real,
        "python_stat": stat_sig(real),
        "pyvenv_cfg": [
            stat_sig(os.path.join(d, "pyvenv.cfg")) for d in (here, os.path.dirname(here))
        ],
        "cwd": cwd,
        "cwd_stat": stat_sig(cwd) if cwd is not None else None,
        "env": hashlib.sha256(json.dumps(env_items).encode()).hexdigest(),
        "boot_id": boot,
        "ld_cache": stat_sig(LD_CACHE),
        "lib_dirs": [stat_sig(d) for d in _lib_dirs()],
    }


def _lib_dirs() -> List[str]:
    arch = getattr(sys.implementation, "_multiarch", None)  # Debian's /usr/lib/x86_64-linux-gnu
    return list(LIB_DIRS) + ([f"/lib/{arch}", f"/usr/lib/{arch}"] if arch else [])


CACHE_DIR = ("cache", "mlx_build")
ENTRY_MAX_BYTES = 4 * 1024 * 1024  # the most read of one entry; those written are a few KB


def _name(k: Dict[str, Any]) -> str:
    import hashlib

    return hashlib.sha256(json.dumps(k, sort_keys=True).encode()).hexdigest()[:32] + ".json"


def load(k: Dict[str, Any]) -> Optional[Dict[str, Any]]:
    """The cached answer for key ``k`` when its entry exists, parses, has the expected shape,
    carries the same key and every file it lists still has the same (mtime_ns, size, inode);
    None otherwise (never raises for a missing, corrupt or foreign file, nor for a state
    directory whose files cannot be read; a link, FIFO or file not ours is never read:
    :func:`meshdoctor.receipts.read_file`). Raises :class:`meshdoctor.receipts.StateDirError`
    when the state directory fails the checks of :func:`meshdoctor.receipts.folder` (not ours,
    writable by others): the caller says the cache was not used, and why."""
    from meshdoctor.receipts import StateDirError, folder, read_file

    try:
        with folder(*CACHE_DIR) as d:
            entry = json_text.loads(read_file(d, _name(k), ENTRY_MAX_BYTES).decode("utf-8"))
    except StateDirError:
        raise
    except (OSError, ValueError):
        return None
    if not isinstance(entry, dict) or entry.get("key") != k:
        return None
    files, answer = entry.get("files"), entry.get("answer")
    if not isinstance(files, dict) or not files or not isinstance(answer, dict):
        return None
    for path, sig in files.items():
        if stat_sig(path) != sig:
            return None
    return answer if cacheable(answer) else None


def store(k: Dict[str, Any], answer: Dict[str, Any], files: Dict[str, Any]) -> bool:
    """Keep ``answer`` with the ``files`` it depends on under key ``k`` when it is
    :func:`cacheable` and lists files; True when written (temporary file + fsync + rename in the
    checked folder: :func:`meshdoctor.receipts.write_file`). A write that fails (read-only or
    untrusted state directory, full disk) is not an error: the next run probes again."""
    if not cacheable(answer) or not isinstance(files, dict) or not files:
        return False
    from meshdoctor.receipts import folder, write_file

    try:
        with folder(*CACHE_DIR) as d:
            body = json.dumps({"key": k, "files": files, "answer": answer})
            write_file(d, _name(k), body.encode("utf-8"))
            _prune(d)
        return True
    except OSError:
        return False


def _prune(dir_fd: int) -> None:
    """Keep the :data:`MAX_ENTRIES` most recently written entries of the folder ``dir_fd``
    (links are removed, never followed)."""
    import stat

    try:
        entries = []
        for name in os.listdir(dir_fd):
            if name.endswith(".json"):
                st = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
                entries.append((0 if stat.S_ISLNK(st.st_mode) else st.st_mtime_ns, name))
        entries.sort(reverse=True)
        for _, name in entries[MAX_ENTRIES:]:
            os.unlink(name, dir_fd=dir_fd)
    except OSError:
        pass
