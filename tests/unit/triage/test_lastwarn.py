"""The bare NCCL WARN texts PyTorch prints under its NCCL error (MD653 by lastwarn)."""

from __future__ import annotations

from meshdoctor.triage.lastwarn import site_of


def test_a_warn_text_is_found_with_or_without_a_space_before_its_colon():
    for text in (
        "Duplicate GPU detected : rank 1 and rank 0 both on CUDA device 1b000",
        "Duplicate GPU detected: rank 1 and rank 0 both on CUDA device 1b000",
    ):
        assert site_of(text) and site_of(text).startswith("src/init.cc:")
