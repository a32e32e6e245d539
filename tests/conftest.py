"""pytest fixtures shared by the test files; the helpers they import are in tests/helpers.py."""

from __future__ import annotations

import os
from typing import Dict, Optional

import pytest

from tests import stubs


@pytest.fixture
def fake_mac(tmp_path):
    """``fake_mac("healthy", "wired-leftover", extra={...})`` -> env of a fake Mac node."""

    def make(*sets: str, extra: Optional[Dict[str, str]] = None) -> Dict[str, str]:
        return stubs.install(tmp_path / "bin", sets, extra=extra)

    return make


@pytest.fixture
def clean_env():
    """This environment without MLX_*/JACCL_* variables (CI or a developer shell may have some)."""
    return {k: v for k, v in os.environ.items() if not k.startswith(("MLX_", "JACCL_"))}
