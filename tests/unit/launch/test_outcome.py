"""The exit status rule of meshdoctor launch (meshdoctor/launch/outcome.py), case by case."""

from __future__ import annotations

from meshdoctor.launch.outcome import (
    FINISHED,
    HANG,
    INTERRUPTED,
    SURVIVORS,
    JobOutcome,
    RankStatus,
)


def _ranks(*codes):
    out = []
    for r, c in enumerate(codes):
        st = RankStatus(r, "127.0.0.1")
        if c == "none":
            pass
        elif c is None:
            st.status = "completed"
            st.code = 0
        else:
            st.status, st.code = "exited", c
        out.append(st)
    return out


def test_all_completed_is_0():
    assert JobOutcome(FINISHED, _ranks(None, None), launcher_rc=0).exit_status() == 0


def test_the_first_failing_rank_decides_and_a_signal_is_128_plus_n():
    out = JobOutcome(FINISHED, _ranks(-15, -9, 1), launcher_rc=0, first_failed=1)
    assert out.exit_status() == 137


def test_mlx_launch_own_usage_error_passes_through():
    assert JobOutcome(FINISHED, _ranks("none"), launcher_rc=2).exit_status() == 2


def test_a_rank_that_never_reported_after_a_teardown_is_a_failure():
    assert JobOutcome(SURVIVORS, _ranks(None, "none")).exit_status() == 1


def test_hang_is_124_and_interrupt_is_3():
    assert JobOutcome(HANG, _ranks("none", "none")).exit_status() == 124
    out = JobOutcome(INTERRUPTED, _ranks(255), first_failed=0)
    assert out.exit_status() == 3
