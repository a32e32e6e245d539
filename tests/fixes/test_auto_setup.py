"""`meshdoctor fix auto-setup` on this (Linux) machine without a hostfile: the fix configures
Macs' Thunderbolt RDMA, so it says it does not apply here, as `fix bridge0` does (the fleet runs
are in tests/netns/test_fix_auto_setup.py)."""

from __future__ import annotations

import sys

import pytest

from tests.helpers import run_cli

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="a Linux host's answer")


def test_auto_setup_on_linux_without_a_hostfile_is_not_applicable_as_bridge0_is(clean_env):
    for name, code in (("auto-setup", "MD703"), ("bridge0", "MD704")):
        r = run_cli("fix", name, "--json", env=clean_env)
        assert r.rc == 0, (name, r.out, r.err)
        got = [x for x in r.doc["results"] if x["code"] == code]
        assert got and got[0]["status"] == "ok", got
        assert "not applicable on linux (applies to darwin)" in got[0]["summary"], got
        assert not r.doc.get("actions"), r.doc.get("actions")
