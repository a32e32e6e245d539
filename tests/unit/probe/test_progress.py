"""The probe's progress: log lines (meshdoctor.probe.log) and the terminal bar
(meshdoctor.probe.progress)."""

from __future__ import annotations


def test_progress_lines_in_a_log_come_at_a_bounded_rate_with_step_elapsed_and_deadline():
    import io

    from meshdoctor.probe.log import ProbeLog

    now = [100.0]
    buf = io.StringIO()
    log = ProbeLog(2, 23.4, buf, interval=5.0, clock=lambda: now[0])
    log.tick(force=True)
    for i in range(50):  # a burst of events within one second: no line
        now[0] += 0.02
        log.on_event(
            i % 2, {"ev": "enter", "op": "all_sum", "phase": "timed", "iter": i, "seq": i + 2}, None
        )
    now[0] += 5.0
    log.on_event(
        0, {"ev": "enter", "op": "all_sum", "phase": "timed", "iter": 99, "seq": 101}, None
    )
    lines = buf.getvalue().splitlines()
    assert len(lines) == 2, lines
    assert (
        lines[0]
        == "probe: starting ranks, ranks ready 0/2, 0.0 s elapsed, per-step deadline 23.4 s"
    )
    assert lines[1].startswith(
        "probe: all_sum #99 (timed, step 101), ranks ready 0/2, 6.0 s elapsed, per-step deadline 23.4 s"
    )


def test_the_terminal_progress_label_is_never_blank():
    from meshdoctor.probe.progress import ProbeProgress

    with ProbeProgress(10, 2) as bar:
        bar.on_event(0, {"ev": "ready"}, None)
        bar.on_event(
            0, {"ev": "enter", "op": "all_sum", "phase": "timed", "iter": 0, "seq": 2}, None
        )
        bar.on_event(0, {"ev": "leave", "op": "all_sum", "seq": 2}, None)
        desc = bar.progress.tasks[0].description
    assert desc.startswith("all_sum #0 (timed, step 2)") and "ranks ready 1/2" in desc


def test_a_timed_batch_advances_the_bar_by_its_steps_and_its_heartbeat_names_the_step():
    from meshdoctor.probe.progress import ProbeProgress

    with ProbeProgress(20, 1) as bar:
        bar.on_event(
            0, {"ev": "enter", "op": "all_sum", "phase": "timed", "iter": 0, "seq": 5}, None
        )
        step = {"op": "all_sum", "phase": "timed", "iter": 7, "seq": 12}
        bar.on_event(0, {"ev": "hb", "seq": 12, "op": "all_sum", "step": step}, None)
        assert bar.progress.tasks[0].description.startswith("all_sum #7 (timed, step 12)")
        bar.on_event(0, {"ev": "leave", "op": "all_sum", "seq": 14, "steps": 10}, None)
        assert bar.progress.tasks[0].completed == 10
