"""psutil, or where it is not installed (a host meshdoctor was shipped to, :mod:`meshdoctor.ship`:
psutil is native and only pure Python travels) the same API read from ``/proc`` or ``ps``
(:mod:`meshdoctor.proctable.lite`). Every module of meshdoctor that reads processes, memory or
interfaces imports ``psutil`` from here, so the node check gives the same verdict either way.
"""

from __future__ import annotations

try:
    import psutil
except ImportError:  # shipped to a host without it
    from meshdoctor.proctable import lite as psutil  # type: ignore[no-redef]

HAVE_PSUTIL = psutil.__name__ == "psutil"

__all__ = ["psutil", "HAVE_PSUTIL"]
