"""Slurm's host-list syntax (hostfile/hostlist.py): padding, ranges, comma lists inside and
outside brackets, several brackets, and errors that say what is wrong and at which column."""

from __future__ import annotations

import os
import shutil
import subprocess

import pytest
from hypothesis import given
from hypothesis import strategies as st

from meshdoctor.hostfile.hostlist import MAX_HOSTS, HostListError, expand
from meshdoctor.hostfile.load import HostfileError, from_list


@pytest.mark.parametrize(
    "text,names",
    [
        ("mac[01-03,20]", ["mac01", "mac02", "mac03", "mac20"]),
        ("mac[8-10]", ["mac8", "mac9", "mac10"]),  # the first number sets the width
        ("mac[008-010]", ["mac008", "mac009", "mac010"]),
        ("r[1-2]m[1-2]", ["r1m1", "r1m2", "r2m1", "r2m2"]),  # the last bracket fastest
        ("mac[1-2]-tb, studio ,10.0.0.1", ["mac1-tb", "mac2-tb", "studio", "10.0.0.1"]),
        ("[1-2]", ["1", "2"]),
        ("fe80::1,::1", ["fe80::1", "::1"]),
        ("mac[ 1 , 3 ]", ["mac1", "mac3"]),
    ],
)
def test_expands(text, names):
    assert expand(text) == names


@pytest.mark.parametrize(
    "text,message",
    [
        ("mac[01-16", "'[' at column 4 is never closed"),
        ("mac01]", "']' at column 6 has no '[' before it"),
        ("m[1[2]]", "'[' at column 4 is inside the bracket opened at column 2"),
        ("mac[]", "an empty item in the bracket at column 4"),
        ("mac[1,,2]", "an empty item in the bracket at column 4"),
        ("mac[a-b]", "'a-b' in the bracket at column 4 is not a number or a range like 01-16"),
        ("mac[1-]", "'1-' in the bracket at column 4 is not a number"),
        ("mac[1-2-3]", "'1-2-3' in the bracket at column 4 is not a number"),
        ("mac[16-01]", "the range '16-01' in the bracket at column 4 goes down (16 > 01)"),
        ("a,,b", "entry 1 (column 3) is empty"),
        ("a[1-2],", "entry 1 (column 8) is empty"),
        ("m[0-99999999]", f"names more than {MAX_HOSTS} hosts"),
        ("a[0-999]b[0-999]", f"the entry at column 1 names more than {MAX_HOSTS} hosts"),
        ("mac[١-٣]", "is not a number"),  # digits of another script are not numbers here
    ],
)
def test_errors_say_what_and_where(text, message):
    with pytest.raises(HostListError) as exc:
        expand(text)
    assert message in str(exc.value)


def test_hosts_option_uses_it_and_names_the_option():
    hf = from_list("mac[01-02],10.0.0.9")
    assert [h.ssh for h in hf.hosts] == ["mac01", "mac02", "10.0.0.9"]
    assert [h.ips for h in hf.hosts] == [(), (), ("10.0.0.9",)]
    with pytest.raises(HostfileError, match=r"--hosts 'mac\[01-': '\[' at column 4"):
        from_list("mac[01-")


@given(st.lists(st.from_regex(r"[a-z][a-z0-9.-]{0,12}", fullmatch=True), min_size=1, max_size=8))
def test_a_plain_list_expands_to_itself(names):
    assert expand(",".join(names)) == names


@given(
    prefix=st.from_regex(r"[a-z][a-z-]{0,6}", fullmatch=True),
    ranges=st.lists(
        st.tuples(st.integers(0, 120), st.integers(0, 30), st.integers(1, 4)),
        min_size=1,
        max_size=4,
    ),
)
def test_a_bracket_is_its_numbers_padded_to_the_first_ones_width(prefix, ranges):
    items, want = [], []
    for lo, span, width in ranges:
        first = str(lo).zfill(width)
        items.append(f"{first}-{lo + span}" if span else first)
        want += [prefix + str(n).zfill(len(first)) for n in range(lo, lo + span + 1)]
    assert expand(f"{prefix}[{','.join(items)}]") == want


@pytest.mark.skipif(shutil.which("scontrol") is None, reason="scontrol (slurm-client) not here")
@pytest.mark.parametrize(
    "text",
    ["mac01", "mac[01-03,7]", "mac[01-03],gpu-a", "r[1-2]n[1-2]", "n[8-11]", "n[098-101]"],
)
def test_same_names_as_slurms_own_expander(text, tmp_path):
    """``scontrol show hostnames`` (it needs a slurm.conf, no controller) gives the same names."""
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
