"""The one-line summary of a rank's stacks (meshdoctor/triage/stacks.py) from py-spy's and gdb's
own formats (texts as the tools print them for a ring rank blocked in all_sum)."""

from __future__ import annotations

from meshdoctor.triage.stacks import RankStack, native_block, python_frames, summarise

PY_SPY = """Process 31531: /venv/bin/python /tmp/job.py
Python v3.11.7 (/usr/bin/python3.11)

Thread 31531 (idle): "MainThread"
    eval (/venv/lib/python3.11/site-packages/mlx/core/__init__.py:1)
    step (train.py:42)
    <module> (train.py:50)
Thread 31540 (idle): "Thread-1"
    run (/usr/lib/python3.11/threading.py:975)
"""

GDB = """Thread 2 (Thread 0x7ff502fff6c0 (LWP 31614) "python"):
#0  0x00007ff5058a1234 in recv () from /lib/x86_64-linux-gnu/libc.so.6
#1  0x00007ff504cff57f in void mlx::core::distributed::ring::RingGroup::all_reduce_impl<float, mlx::core::distributed::detail::SumOp<float> >(float*, float*, unsigned long, int, int, int, mlx::core::distributed::detail::SumOp<float>) () from /venv/lib/python3.11/site-packages/mlx/lib/libmlx.so
Thread 1 (Thread 0x7ff5058f0740 (LWP 31531) "python"):
#0  0x00007ff5058a1000 in __futex_abstimed_wait_common64 () from /lib/x86_64-linux-gnu/libc.so.6
"""


def test_python_frames_are_the_first_threads_innermost_first():
    assert python_frames(PY_SPY) == [
        ("eval", "/venv/lib/python3.11/site-packages/mlx/core/__init__.py", 1),
        ("step", "train.py", 42),
        ("<module>", "train.py", 50),
    ]


def test_native_block_names_the_collective_the_backend_and_the_call():
    assert native_block(GDB) == ("all_sum", "ring", "recv")


def test_summary_of_a_blocked_rank_and_of_a_stopped_one():
    st = RankStack(0, 31531, state="sleeping", python=PY_SPY, native=GDB)
    assert summarise(st) == "blocked in all_sum (ring, recv) at train.py:42 (step)"
    st = RankStack(1, 31532, state="stopped", python=PY_SPY)
    assert summarise(st).startswith("stopped (SIGSTOP")


def test_no_stack_says_why():
    st = RankStack(2, 1, tool_errors={"py-spy": "py-spy is not installed"})
    assert summarise(st) == "no stack: py-spy is not installed"
