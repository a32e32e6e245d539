"""``meshdoctor probe``: hang-proof collective probes through the real MLX backend.

Modules, one job each: :mod:`.sizes` (size parsing, memory estimate), :mod:`.worker` (runs inside
every rank; mlx + stdlib only), :mod:`.env` (each rank's environment, pure), :mod:`.events` (the
launcher's view of the ranks, pure), :mod:`.launcher` (start, watch, tear down),
:mod:`.soak` (relaunch or stop after a soak hang, pure), :mod:`.figures` (algbw, busbw,
medians, pure), :mod:`.culprits` (the rank at fault, pure), :mod:`.report` (verdict),
:mod:`.codes` (MD5xx), :mod:`.progress` (rich display, CLI only).
Nothing is imported here, so the worker and the ``--json`` path stay light.
"""
