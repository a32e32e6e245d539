"""The MLX contract meshdoctor relies on, one fact in one place: the backends mlx.launch starts
(:mod:`~meshdoctor.mlx.backends`), its ports and the ring's port layout
(:mod:`~meshdoctor.mlx.ports`), the per-rank environment (:mod:`~meshdoctor.mlx.env`), what an
exit status means (:mod:`~meshdoctor.mlx.exits`) and which ranks it reaches with ssh
(:mod:`~meshdoctor.mlx.launch_rules`)."""
