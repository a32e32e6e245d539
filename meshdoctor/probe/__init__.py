"""``meshdoctor probe``: hang-proof collective probes through the real MLX backend.

Modules, one job each: :mod:`.sizes` (size parsing, memory estimate), :mod:`.worker` (runs inside
every rank; mlx + stdlib only), :mod:`.env` (each rank's environment, pure), :mod:`.events` (the
launcher's view of the ranks, pure), :mod:`.launcher` (start, watch, tear down),
:mod:`.outcome` (what a launch leaves behind, data), :mod:`.soak` (relaunch or stop after a
soak hang, pure), :mod:`.figures` (algbw, busbw, medians, pure), :mod:`.culprits` (the rank at
fault, pure), :mod:`.report` (the verdict, a package: outcomes, measures, leftovers, section;
pure), :mod:`.codes` (MD5xx), :mod:`.progress` (rich display, CLI only), :mod:`.setup` (the
checked config and its usage errors, :mod:`.errors`), :mod:`.api` (the probe called from code:
request in, verdict out; the command and the reset-group fix go through it).
Nothing is imported here, so the worker and the ``--json`` path stay light.
"""
