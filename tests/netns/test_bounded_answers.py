"""A remote host that never stops printing: its answer is cut at the cap (meshdoctor.execute),
that host's finding says so, and the fleet verdict comes (real ssh, network-namespace hosts)."""

from __future__ import annotations

import json
import os

import pytest

from tests import netns
from tests.helpers import run_cli, write

why = netns.unavailable()
pytestmark = pytest.mark.skipif(why is not None, reason=why or "")


def test_a_remote_answer_without_end_is_cut_and_named(tmp_path):
    with netns.TestBed(2) as bed:
        hf = write(
            tmp_path / "hosts.json",
            json.dumps([{"ssh": h, "ips": [bed.ips[h]]} for h in bed.hosts]),
        )
        endless = write(tmp_path / "endless-python", "#!/bin/sh\nexec yes '{\"a\": 1}'\n")
        endless.chmod(0o755)
        env = {k: v for k, v in os.environ.items() if not k.startswith(("MLX_", "JACCL_"))}
        env["MESHDOCTOR_SSH_CONFIG"] = str(bed.ssh_config)
        r = run_cli(
            "check",
            "--hostfile",
            str(hf),
            "--python",
            str(endless),
            "--json",
            env=env,
            timeout=180,
        )
        assert r.rc in (1, 3), r.err[-2000:]
        text = json.dumps(r.doc["results"])
        for h in bed.hosts:
            assert f"the answer from {h} was cut" in text, text[:3000]
        assert "printed more than 8388608 bytes on stdout (cut there and killed)" in text
