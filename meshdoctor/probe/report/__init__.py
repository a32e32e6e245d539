"""Turns a :class:`~meshdoctor.probe.outcome.ProbeRun` into the verdict: MD5xx results and the
``probe`` section (its shape: ``$defs/probe`` in ``verdict.schema.json``; per-rank exit status,
signal, stderr tail and failure signatures).

Pure: reads the run's data only (no processes, no files, no printing); what needs the machine
(the interpreter lookup, NVML) the launcher records in the outcome. One module per job:

* :mod:`.outcomes`: one function per way a launch ends: the rank start-up failed (``start``),
  the group did not form (``init``, or a rank died or hung before it formed), it formed
  (``ok``), a rank died (``dead``), a step hung (``hang``) or the whole-run deadline passed
  (``deadline``), meshdoctor was interrupted (``interrupted``); a probe that never launched is
  a ``preflight`` failure;
* :mod:`.measures`: every run's correctness and bandwidth results per op (a value mismatch is a
  correctness failure), GPU clock slowdown, the pair matrix and the soak; the numbers come from
  :mod:`meshdoctor.probe.figures` (algbw, busbw, medians, nccl-tests doc/PERFORMANCE.md), the
  soak's hang rate from :mod:`meshdoctor.probe.soak`;
* :mod:`.leftovers`: survivors of teardown, GPU memory still held, hosts not reached;
* :mod:`.section`: the ``probe`` section and :func:`build`, which puts it all together;
* :mod:`.view`: what those parts read of the last launch (:class:`~.view.LaunchView`).

The rank at fault comes from :mod:`meshdoctor.probe.culprits`.
"""

from meshdoctor.probe.report.section import build

__all__ = ["build"]
