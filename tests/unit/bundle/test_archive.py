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
