"""``meshdoctor bundle``: one support archive, what maintainers ask people to paste by hand.

:mod:`~meshdoctor.bundle.redact` removes secrets and home paths from everything collected;
:mod:`~meshdoctor.bundle.collect` gathers one host's share (its check verdict, the raw outputs
of the tools the checks run, versions, the MLX_*/JACCL_*/NCCL_* environment, recent crash
reports), bounded in bytes and time; :mod:`~meshdoctor.bundle.archive` puts every host's share,
the hostfile and a MANIFEST of what was collected and what failed into one ``.tar.gz``, written
atomically.
"""
