"""The MLX build a launch would use, probed in a subprocess under a deadline.

Importing mlx can hang (a wedged GPU or RDMA stack) or crash (a broken wheel); it therefore runs
in ``ctx.python`` as a child with a deadline, never in the doctor. The child prints one JSON line:
version, package path, which backends ``mx.distributed.is_available(backend=...)`` reports, the
native libraries shipped in ``mlx/lib``, and Metal's recommended working set when there is one.
The doctor then looks for the JACCL progress guard in those libraries itself: a build with the
guard (the JACCL progress-timeout patch) contains the string ``JACCL_PROGRESS_TIMEOUT_MS``
; upstream MLX (0.32.4) has none.

On Linux the answer for a CPU build is kept between runs by :mod:`.mlx_cache`, keyed by the
interpreter, the environment and every file the import read (the child reports them under
``_files``, which never reaches the evidence); any change to them runs the child again.
"""

from __future__ import annotations

import mmap
import os
from typing import Any, Dict, List, Optional

from meshdoctor.parsers import json_text
from meshdoctor.facts.context import NodeContext, hang_proven
from meshdoctor.parsers.macos import version_tuple
from meshdoctor.ranks import PROBE_MARKER_ENV, RANK_ENV_KEYS
from meshdoctor.facts import mlx_cache
from meshdoctor.mlx.backends import CORE_BACKENDS

GUARD_STRING = b"JACCL_PROGRESS_TIMEOUT_MS"
BACKENDS = CORE_BACKENDS  # mx.distributed.is_available(backend=...) names

_PROBE = r"""
import json, os, sys
out = {"python": sys.version.split()[0], "executable": sys.executable}
def sig(p):
    try:
        st = os.stat(p)
    except (OSError, ValueError):
        return None
    return [st.st_mtime_ns, st.st_size, st.st_ino]
files = {p: sig(p) for p in sys.path if p}  # before the import reads them
try:
    import mlx.core as mx
except Exception as e:
    out["installed"] = False
    out["import_error"] = type(e).__name__ + ": " + str(e)
    print(json.dumps(out)); sys.exit(0)
import mlx
out["installed"] = True
for d in list(getattr(mlx, "__path__", [])):
    files[d] = sig(d)
    for sub in (d, os.path.join(d, "lib")):
        files[sub] = sig(sub)
        try:
            names = os.listdir(sub)
        except OSError:
            continue
        for f in names:
            if sub != d or (f.startswith("core") and (f.endswith(".so") or f.endswith(".dylib"))):
                files[os.path.join(sub, f)] = sig(os.path.join(sub, f))
if getattr(mx, "__file__", None):
    files[mx.__file__] = sig(mx.__file__)
out["_files"] = files
out["version"] = getattr(mx, "__version__", "")
# mlx is a namespace package (no __init__.py, mlx 0.32.x wheels): its folder is __path__[0]
pkg = os.path.dirname(mlx.__file__) if getattr(mlx, "__file__", None) else list(mlx.__path__)[0]
out["path"] = pkg
libdir = os.path.join(pkg, "lib")
out["libs"] = sorted(os.path.join(libdir, f) for f in os.listdir(libdir)) if os.path.isdir(libdir) else []
out["libs"] += sorted(os.path.join(pkg, f) for f in os.listdir(pkg) if f.startswith("core") and (f.endswith(".so") or f.endswith(".dylib")))
b = {}
for name in BACKENDS_PLACEHOLDER:
    try:
        b[name] = bool(mx.distributed.is_available(backend=name))
    except Exception as e:
        b[name] = None
out["backends"] = b
try:
    info = mx.device_info() if hasattr(mx, "device_info") else {}
    out["max_recommended_working_set_size"] = info.get("max_recommended_working_set_size")
except Exception:
    out["max_recommended_working_set_size"] = None
cu = {"available": None, "packages": []}
try:
    cu["available"] = bool(mx.cuda.is_available()) if hasattr(mx, "cuda") else False
except Exception as e:
    cu["error"] = type(e).__name__ + ": " + str(e)
try:
    cu["packages"] = [nm + "==" + ver for nm, ver in mlx_cuda_dists()]
except Exception:
    pass
out["cuda"] = cu
print(json.dumps(out))
"""

# The installed MLX CUDA packages (mlx[cuda12] and mlx[cuda13] install mlx-cuda-12 /
# mlx-cuda-13) as ``(name, version)``, read the way importlib.metadata finds distributions (a
# ``<name>-<version>.dist-info`` or ``.egg-info`` directory on sys.path, its METADATA or PKG-INFO
# headers; PEP 376, PEP 503 name normalization) but without importing importlib.metadata and the
# email package, which cost more than importing mlx itself.
_SCAN_CUDA = r"""
import os, sys
def mlx_cuda_dists():
    found = []
    for entry in sys.path:
        try:
            names = sorted(os.listdir(entry or "."))
        except OSError:
            continue
        for f in names:
            low = f.lower()
            if not low.startswith(("mlx_cuda", "mlx-cuda", "mlx.cuda")):
                continue
            if low.endswith(".dist-info"):
                meta = os.path.join(entry or ".", f, "METADATA")
            elif low.endswith(".egg-info"):
                meta = os.path.join(entry or ".", f, "PKG-INFO")
            else:
                continue
            head = {}
            try:
                with open(meta, encoding="utf-8", errors="replace") as fh:
                    for line in fh:
                        if not line.strip():
                            break
                        k, _, v = line.partition(":")
                        head.setdefault(k.strip().lower(), v.strip())
            except OSError:
                continue
            nm = head.get("name", "").lower().replace("_", "-").replace(".", "-")
            if nm.startswith("mlx-cuda"):
                found.append((nm, head.get("version", "")))
    return found
"""

_PROBE = _SCAN_CUDA + _PROBE.replace("BACKENDS_PLACEHOLDER", repr(BACKENDS))

# Without importing mlx: the names of the installed MLX CUDA packages, one per line.
_CUDA_PACKAGES = (
    _SCAN_CUDA
    + r"""
for nm, _ in mlx_cuda_dists():
    print(nm)
"""
)


def has_guard(paths: List[str]) -> Optional[bool]:
    """True if any library in ``paths`` contains :data:`GUARD_STRING`; None if none is readable."""
    readable = False
    for p in paths:
        try:
            with open(p, "rb") as fh:
                if os.fstat(fh.fileno()).st_size == 0:
                    continue
                readable = True
                with mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ) as mm:
                    if mm.find(GUARD_STRING) != -1:
                        return True
        except (OSError, ValueError):
            continue
    return False if readable else None


def gather_mlx(ctx: NodeContext) -> Dict[str, Any]:
    """Facts about the MLX of ``ctx.python``.

    Returns a dict: ``probe`` is ``ok``, ``timeout``, ``crashed`` or ``unrunnable`` (with
    ``detail``; on ``timeout`` also ``hung``: it overran a deadline long enough to prove a hang,
    :func:`meshdoctor.facts.context.hang_proven`); on ``ok``: ``installed`` (bool), ``version`` (str), ``version_tuple``,
    ``backends`` (backend -> bool/None), ``libs`` (paths), ``jaccl_guard`` (True/False, or None
    when JACCL is not available or no library could be read),
    ``max_recommended_working_set_size`` (bytes or None).
    """
    # an inspection, not a rank: without the rank variables a shell may carry (MLX_RANK), so
    # MD301 never mistakes this child for a stale rank
    env = {k: v for k, v in os.environ.items() if k not in RANK_ENV_KEYS + (PROBE_MARKER_ENV,)}
    from meshdoctor.receipts import StateDirError

    cache_key, refused = None, None
    if mlx_cache.enabled(ctx.platform):  # computed before the child runs: what it will see
        try:
            cache_key = mlx_cache.key(ctx.python, env, _PROBE)
            cached = mlx_cache.load(cache_key)
        except StateDirError as exc:  # refused (not ours, writable by others): said, not used
            cache_key = cached = None
            refused = str(exc)
        except Exception:  # a cache that cannot be used (a file in it unreadable...)
            cache_key = cached = None  # is no reason to lose the inspection: run the child
        if cached is not None:
            return _finish(cached)
    got = _inspect(ctx, env, cache_key)
    if refused:
        got["cache_refused"] = refused
    return got


def _inspect(ctx: NodeContext, env: Dict[str, str], cache_key: Any) -> Dict[str, Any]:
    """Run the build probe's child (``env``: its environment) and keep its answer under
    ``cache_key`` (None: not kept); the fact :func:`gather_mlx` returns."""
    res = ctx.command(ctx.python, "-c", _PROBE, env=env)
    if res.missing:
        return {"probe": "unrunnable", "detail": res.describe(), "python": ctx.python}
    if res.timed_out:
        return {
            "probe": "timeout",
            "detail": res.describe(),
            "python": ctx.python,
            "hung": hang_proven(res),  # overran a deadline long enough to prove a hang
        }
    line = next((ln for ln in reversed(res.stdout.splitlines()) if ln.startswith("{")), "")
    try:
        data = json_text.loads(line)
    except ValueError:
        data = None
    if res.returncode != 0 or not isinstance(data, dict):
        sig = -res.returncode if res.returncode is not None and res.returncode < 0 else None
        return {
            "probe": "crashed",
            "returncode": res.returncode,
            "signal": sig,
            "detail": res.describe(),
            "stderr_tail": res.stderr[-1500:],
            "python": ctx.python,
        }
    files = data.pop("_files", None)
    if cache_key is not None and isinstance(files, dict):
        try:
            mlx_cache.store(cache_key, data, files)
        except Exception:  # not kept: the next run inspects again
            pass
    return _finish(data)


def _finish(data: Dict[str, Any]) -> Dict[str, Any]:
    """The child's answer (fresh or cached) with what the doctor derives from it."""
    data = dict(data)
    data["probe"] = "ok"
    if data.get("installed"):
        data["version_tuple"] = list(version_tuple(data.get("version", "")))
        jaccl = (data.get("backends") or {}).get("jaccl")
        data["jaccl_guard"] = has_guard(data.get("libs", [])) if jaccl else None
    return data


def cuda_packages(python: str, timeout: float = 10.0) -> List[str]:
    """Names of the MLX CUDA packages (``mlx-cuda-12``, ``mlx-cuda-13``) installed for
    ``python``, read from package metadata without importing mlx (fast, no GPU touched); ``[]``
    when none, or when the interpreter cannot be run within ``timeout`` seconds."""
    from meshdoctor import execute

    res = execute.run([python, "-c", _CUDA_PACKAGES], timeout=timeout)
    if res.returncode != 0:
        return []
    return [ln.strip() for ln in res.stdout.splitlines() if ln.strip()]


def cuda_major_of(packages: List[str]) -> Optional[int]:
    """The CUDA major version an MLX CUDA build targets, from its package name
    (``mlx-cuda-13`` -> 13); None when no name carries one."""
    for p in packages:
        tail = p.split("==")[0].rsplit("-", 1)[-1]
        if tail.isdigit():
            return int(tail)
    return None
