"""Slurm's host-list syntax (meshdoctor.hostfile.hostlist.expand)."""

from __future__ import annotations

import os
import shutil
import subprocess

import pytest

from meshdoctor.hostfile.hostlist import MAX_HOSTS, HostlistError, expand

CASES = {
    "mac01": ["mac01"],
    "mac[01-03,7]": ["mac01", "mac02", "mac03", "mac7"],
    "mac[01-03],gpu-a": ["mac01", "mac02", "mac03", "gpu-a"],
    "r[1-2]n[1-2]": ["r1n1", "r1n2", "r2n1", "r2n2"],
    "n[8-11]": ["n8", "n9", "n10", "n11"],
    "n[098-101]": ["n098", "n099", "n100", "n101"],
    "a,,b": ["a", "b"],
    "": [],
}


@pytest.mark.parametrize("text", sorted(CASES))
def test_expand(text):
    assert expand(text) == CASES[text]


@pytest.mark.parametrize("text", ["mac[01-03", "mac]1", "m[a-3]", "m[5-1]", "m[[1]]", "m[1-]"])
def test_refused(text):
    with pytest.raises(HostlistError):
        expand(text)


def test_too_many():
    with pytest.raises(HostlistError, match=str(MAX_HOSTS)):
        expand(f"n[0-{MAX_HOSTS}]")


@pytest.mark.skipif(shutil.which("scontrol") is None, reason="scontrol (slurm-client) not here")
@pytest.mark.parametrize("text", sorted(t for t in CASES if t and ",," not in t))
def test_same_as_scontrol(text, tmp_path):
    """Slurm's own expander (scontrol show hostnames needs a slurm.conf, no controller): the
    same names as ours."""
    conf = tmp_path / "slurm.conf"
    conf.write_text("ClusterName=x\nSlurmctldHost=localhost\n")
    p = subprocess.run(
        ["scontrol", "show", "hostnames", text],
        capture_output=True,
        text=True,
        timeout=30,
        env=dict(os.environ, SLURM_CONF=str(conf)),
    )
    assert p.returncode == 0, p.stderr
    assert p.stdout.split() == expand(text)
