"""Every host's share, the hostfile and the MANIFEST in one ``.tar.gz``: :func:`build` makes the
bytes, :func:`write` puts them at a path atomically (:func:`meshdoctor.receipts.write_path`).

Layout (one top folder ``meshdoctor-bundle-<UTC stamp>/``): ``MANIFEST.txt`` (one row per item:
host, status, item, bytes, detail; a host that could not be collected is one ``failed`` row),
``MANIFEST.json`` (the same rows), ``hostfile.json``, and per host ``<host>/`` with
its share (:mod:`meshdoctor.bundle.collect`). Members carry no owner name, uid 0, mode 0644.
Every member, a remote host's share included, goes through the one redaction pass
(:func:`meshdoctor.bundle.redact.scrub_bytes`) as it is written.
"""

from __future__ import annotations

import io
import json
import os
import re
import tarfile
import time
from typing import Any, Dict, List, Optional, Union

from meshdoctor.bundle.collect import FAILED, HostBundle
from meshdoctor.bundle.redact import scrub_bytes, secret_values
from meshdoctor.text import one_line

_UNSAFE = re.compile(r"[^A-Za-z0-9._-]")


def folder_name(host: str) -> str:
    """``host`` as a folder name inside the archive (anything but letters, digits, ``._-``
    becomes ``_``; never empty, never ``.``/``..``)."""
    name = _UNSAFE.sub("_", host) or "_"
    return "_" + name if name in (".", "..") else name


def member_name(item: str) -> str:
    """An item's name (``crash/NAME``, as a host named it: a remote share or a report's file
    name may hold anything) as a path inside the host's folder: each part as
    :func:`folder_name` makes it, so ``tar tv`` shows no control character; ``*`` and empty
    parts (``crash/``, a MANIFEST row about the folder) stay."""
    return "/".join(p if p in ("", "*") else folder_name(p) for p in str(item).split("/"))


def manifest_rows(shares: Dict[str, Union[HostBundle, str]]) -> List[Dict[str, Any]]:
    """One row per item of every host (``host``, ``status``, ``item``, ``bytes``, ``detail``);
    a host whose share is a string (why it could not be collected) is one failed row."""
    rows: List[Dict[str, Any]] = []
    for host, share in shares.items():
        if isinstance(share, str):
            rows.append({"host": host, "status": FAILED, "item": "*", "bytes": 0, "detail": share})
            continue
        rows.extend(
            {"host": host, **m, "item": member_name(m.get("item", ""))} for m in share.manifest
        )
    return rows


def _manifest_text(rows: List[Dict[str, Any]], created: str) -> str:
    lines = [
        f"# meshdoctor support bundle, created {created}",
        "# host\tstatus\titem\tbytes\tdetail",
    ]
    lines += [  # one row per line, one field per column, whatever a host sent
        "\t".join(one_line(r.get(k, "")) for k in ("host", "status", "item", "bytes", "detail"))
        for r in rows
    ]
    return "\n".join(lines) + "\n"


def build(
    shares: Dict[str, Union[HostBundle, str]],
    hostfile_text: Optional[str],
    now: Optional[float] = None,
) -> bytes:
    """The archive's bytes (gzip-compressed tar) for ``shares`` (host -> its share, or why there
    is none) and the hostfile's text (None: no hostfile)."""
    now = time.time() if now is None else now
    stamp = time.strftime("%Y%m%d-%H%M%S", time.gmtime(now))
    created = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(now))
    top = f"meshdoctor-bundle-{stamp}"
    rows = manifest_rows(shares)
    secrets = secret_values(os.environ)
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:

        def put(name: str, data: bytes) -> None:
            data = scrub_bytes(data, secrets=secrets)  # every file, whoever collected it
            info = tarfile.TarInfo(f"{top}/{name}")
            info.size, info.mtime, info.mode = len(data), int(now), 0o644
            info.uid = info.gid = 0
            info.uname = info.gname = ""
            tar.addfile(info, io.BytesIO(data))

        put("MANIFEST.txt", _manifest_text(rows, created).encode())
        put(
            "MANIFEST.json",
            (json.dumps({"created": created, "items": rows}, indent=1) + "\n").encode(),
        )
        if hostfile_text is not None:
            put("hostfile.json", hostfile_text.encode())
        for host, share in shares.items():
            if isinstance(share, HostBundle):
                for name, data in share.files.items():
                    put(f"{folder_name(host)}/{member_name(name)}", data)
    return buf.getvalue()


def write(path: str, data: bytes) -> None:
    """Put the archive ``data`` at ``path`` atomically (a reader never sees half of it)."""
    from meshdoctor.receipts import write_path

    write_path(path, data)
