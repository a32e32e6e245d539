"""Checks: one module per check, each defining ``CHECK`` (see :mod:`meshdoctor.checker.model`)."""
