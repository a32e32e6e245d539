"""Fixtures shared by the check tests (tests/conftest.py holds those every test may use)."""

from __future__ import annotations

import os

import pytest

from tests.helpers import FAKE_DIR


@pytest.fixture
def gpu_env(tmp_path, clean_env):
    """``gpu_env("ecc", procs="0:123:456")`` -> an environment where a driver is loaded and
    ``pynvml`` is the fake, in that scenario."""
    drv = tmp_path / "nvidia-version"
    drv.write_text("NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  580.159.04\n")

    def make(scenario: str = "healthy", procs: str = "", **extra: str):
        env = {k: v for k, v in clean_env.items() if not k.startswith("NCCL_")}
        env.update(
            {
                "MESHDOCTOR_NVIDIA_DRIVER_FILE": str(drv),
                "FAKE_NVML": scenario,
                "FAKE_NVML_PROCS": procs,
                "PYTHONPATH": os.pathsep.join(
                    [str(FAKE_DIR)] + [p for p in [env.get("PYTHONPATH", "")] if p]
                ),
            }
        )
        env.update(extra)
        return env

    return make
