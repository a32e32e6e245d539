"""triage/pasted.py's pure reading of a pasted rdma_ctl / ibv_devices / system_profiler
transcript (formats: tests/fixtures/mac and jundot/omlx #3037)."""

from __future__ import annotations

from meshdoctor.triage.pasted import read_transcript


def test_transcript_of_a_thunderbolt_4_mac():
    t = read_transcript(
        "$ rdma_ctl status\nenabled\n$ ibv_devices\n    device                 node GUID\n"
        "    ------              ----------------\n"
        "$ system_profiler SPThunderboltDataType | grep Speed\n          Speed: Up to 40 Gb/s\n"
    )
    assert (t.enabled, t.devices, t.gbps) == (True, 0, 40)


def test_transcript_with_devices_and_no_speed():
    t = read_transcript(
        "% /usr/bin/ibv_devices\n    device          \t   node GUID\n    ------          \t----\n"
        "    rdma_en3        \t0123456789abcdef\n"
    )
    assert (t.enabled, t.devices, t.gbps) == (None, 1, None)
