"""The check engine: the registry of checks, running them on this machine (:mod:`.here`) or on
every host of a hostfile (:mod:`.fleet`), and :func:`run`, the check called from code (a
:class:`CheckRequest` in, a verdict out; :mod:`.api`)."""

from meshdoctor.checker.api import CheckRequest, run

__all__ = ["CheckRequest", "run"]
