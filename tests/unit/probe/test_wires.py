"""The probe's message size on a JACCL mesh with several cables per peer: from MLX 0.32.4 a
message under 512 KiB goes over one wire only (MLX PR #4607, ``MESH_MULTI_WIRE_MIN_BYTES``), so
the probe raises --size until every op puts 512 KiB x wires through each peer."""

from __future__ import annotations

import json

from meshdoctor.hostfile.load import parse
from meshdoctor.probe.sizes import MESH_MULTI_WIRE_MIN_BYTES, mesh_wire_floor
from tests.unit.hostfile.test_hostfile import mesh
from tests.unit.probe.test_units import _cfg


def _two_cable_mesh(n=3):
    d = mesh(n)
    for i, h in enumerate(d["hosts"]):
        h["rdma"] = [None if j == i else [f"rdma_en{j + 2}", f"rdma_en{j + 12}"] for j in range(n)]
    return parse(json.dumps(d))


def test_a_small_size_is_raised_so_every_cable_carries_traffic():
    assert MESH_MULTI_WIRE_MIN_BYTES == 512 * 1024
    cfg = _cfg(hostfile=_two_cable_mesh(3), size="64KB", backend="jaccl")
    # all_gather/sum_scatter pass one rank's share (size / 3) per peer: 3 x 2 x 512 KiB
    assert cfg.size == 3 * 2 * MESH_MULTI_WIRE_MIN_BYTES
    one = _cfg(hostfile=_two_cable_mesh(3), size="64KB", backend="jaccl", op="all_sum")
    assert one.size == 2 * MESH_MULTI_WIRE_MIN_BYTES


def test_one_cable_per_peer_and_large_sizes_are_left_alone():
    cfg = _cfg(hostfile=parse(json.dumps(mesh(3))), size="64KB", backend="jaccl")
    assert cfg.size == 64000
    big = _cfg(hostfile=_two_cable_mesh(3), size="256MiB", backend="jaccl")
    assert big.size == 256 << 20
    assert mesh_wire_floor(["all_sum"], 2, 1) == 0
