"""The MLX contract meshdoctor relies on, one fact in one place: the backends mlx.launch starts
(:mod:`~meshdoctor.mlx.backends`), its ports and the ring's port layout
(:mod:`~meshdoctor.mlx.ports`), the per-rank environment (:mod:`~meshdoctor.mlx.env`) and what an
exit status means (:mod:`~meshdoctor.mlx.exits`)."""
