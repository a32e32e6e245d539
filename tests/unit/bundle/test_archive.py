"""The archive of a support bundle: every member, a remote host's share included, goes through
the one redaction pass as it is written."""

from __future__ import annotations

import base64
import io
import tarfile

from meshdoctor.bundle import archive
from meshdoctor.bundle.collect import HostBundle
from tests.unit.bundle.test_redact import LEAKS, PLANTED


def _members(data: bytes) -> dict:
    with tarfile.open(fileobj=io.BytesIO(data)) as tar:
        return {m.name: tar.extractfile(m).read().decode() for m in tar.getmembers() if m.isfile()}


def _share(files: dict, manifest: list) -> HostBundle:
    """A share as a remote host sends it (``bundle --local-only``), here one that was not
    redacted there (another meshdoctor version, or a host that missed a secret)."""
    return HostBundle.from_json(
        {
            "files": {k: base64.b64encode(v.encode()).decode() for k, v in files.items()},
            "manifest": manifest,
        }
    )


def test_a_remote_share_is_redacted_as_it_is_written():
    text = "\n".join(PLANTED.values())
    share = _share(
        {"crash/python3.12-1.ips": text, "env.txt": "NCCL_NET_KEY=k-val-1\n"},
        [{"item": "env.txt", "status": "failed", "bytes": 0, "detail": text}],
    )
    members = _members(archive.build({"mac2": share}, '{"envs": ["HF_AUTH=hfauth-val"]}'))
    leaked = {
        n: [s for s in LEAKS + ("k-val-1", "hfauth-val") if s in t] for n, t in members.items()
    }
    assert not {n: s for n, s in leaked.items() if s}, leaked


def test_names_and_manifest_rows_of_a_remote_share_hold_no_control_character():
    """A remote share whose item names and MANIFEST rows hold ESC, BEL, U+202E, a tab and a
    newline: ``tar tv`` and MANIFEST.txt show none raw, every row keeps its five columns."""
    bad = "x\x1b]0;t\x07\u202e\tz\n.ips"
    share = _share(
        {f"crash/{bad}": "report\n"},
        [{"item": f"crash/{bad}", "status": "collected", "bytes": 7, "detail": f"from {bad}"}],
    )
    data = archive.build({"mac\x1b[2J": share, "mac3": f"unreachable: {bad}"}, None)
    with tarfile.open(fileobj=io.BytesIO(data)) as tar:
        names = tar.getnames()
    raw = ("\x1b", "\x07", "\u202e", "\t", "\n")
    assert not [n for n in names if any(c in n for c in raw)], names
    manifest = _members(data)[next(n for n in names if n.endswith("MANIFEST.txt"))]
    rows = [r for r in manifest.splitlines() if not r.startswith("#")]
    assert len(rows) == 2 and all(r.count("\t") == 4 for r in rows), rows
    assert not [r for r in rows if any(c in r for c in raw[:3])], rows
    member = next(n for n in names if "/crash/" in n)
    assert rows[0].split("\t")[2] == member.split("/", 2)[2]  # the row names the member
