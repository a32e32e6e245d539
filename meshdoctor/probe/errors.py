"""The probe's usage error, light to import: the command line catches it around
:func:`meshdoctor.probe.api.probe` without loading the probe's config code first."""


class ProbeSetupError(ValueError):
    """A usage error (exit 2); ``param`` names the option at fault."""

    def __init__(self, message: str, param: str) -> None:
        super().__init__(message)
        self.param = param


class ProbeNotNow(Exception):
    """The request is valid but this machine cannot run it right now (not enough memory
    available): a state of the machine, not a usage error, so the probe answers with a verdict
    that could not assess (exit 3) instead of exit 2. ``param``: the option whose value
    decides the need; ``need``/``have``: bytes."""

    def __init__(self, message: str, param: str, need: int, have: int) -> None:
        super().__init__(message)
        self.param, self.need, self.have = param, need, have
