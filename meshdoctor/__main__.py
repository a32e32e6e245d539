"""``python -m meshdoctor`` and the ``meshdoctor`` console script.

:func:`main` routes SIGINT, SIGTERM and SIGHUP to one :class:`meshdoctor.interrupts.Interrupts`
before anything else is imported (click and a command take tens of milliseconds to import): from
then on a signal is recorded until the command can answer for it, so an interrupt at any moment
ends as exit 3 (``check --json``: one verdict document), never a traceback or the shell's
128 + signal number. Only the interpreter's own start, before any meshdoctor code runs, is
outside it.
"""


def _install():
    from meshdoctor.interrupts import Interrupts  # stdlib only (signal, threading)

    interrupts = Interrupts()
    interrupts.install()
    return interrupts


def main() -> None:
    """Console entry point: install the interrupt handling, then run :func:`meshdoctor.cli.main`."""
    try:
        interrupts = _install()
    except KeyboardInterrupt:  # Ctrl-C while installing: Python's own handler raised it
        interrupts = _install()
        interrupts.pending = "SIGINT"
    from meshdoctor.cli import main as run

    run(interrupts)


if __name__ == "__main__":
    main()
