"""``meshdoctor launch``: the gate, then the real mlx.launch of the installed MLX under
supervision (its output passed through, each rank's status read, survivors and hangs handled),
and an honest exit status. :mod:`meshdoctor.launch.api` is the one way in."""
