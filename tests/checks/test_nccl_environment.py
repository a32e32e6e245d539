"""MD114 (nccl.environment): NCCL variables left in the shell, with what they do."""

from __future__ import annotations

from tests.checks.test_gpu_checks import results
from tests.helpers import run_cli


def test_nccl_variables_left_in_the_shell_warn_with_what_they_do(gpu_env):
    r = run_cli(
        "check",
        "--only",
        "MD114",
        "--json",
        env=gpu_env(
            NCCL_P2P_DISABLE="1",
            NCCL_SOCKET_IFNAME="eth9",
            NCCL_IB_DISABLE="0",
            NCCL_NVLS_ENABLE="0",
        ),
    )
    assert r.rc == 0
    got = {x["evidence"]["variable"]: x for x in results(r, "MD114")}
    assert set(got) == {"NCCL_P2P_DISABLE", "NCCL_SOCKET_IFNAME"}  # IB_DISABLE=0 acts not
    assert "peer-to-peer" in got["NCCL_P2P_DISABLE"]["summary"]
    assert got["NCCL_SOCKET_IFNAME"]["remediation"]["text"].startswith("unset NCCL_SOCKET")
    assert (
        run_cli("check", "--only", "MD114", "--strict", "--json", env=gpu_env(NCCL_DEBUG="INFO")).rc
        == 1
    )
