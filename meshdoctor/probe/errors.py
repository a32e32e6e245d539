"""The probe's usage error, light to import: the command line catches it around
:func:`meshdoctor.probe.api.probe` without loading the probe's config code first."""


class ProbeSetupError(ValueError):
    """A usage error (exit 2); ``param`` names the option at fault."""

    def __init__(self, message: str, param: str) -> None:
        super().__init__(message)
        self.param = param
