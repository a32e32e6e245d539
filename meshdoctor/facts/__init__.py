"""Facts about this node, each read under a deadline and cached in the node context: RDMA
(:mod:`.verbs`), Thunderbolt links (:mod:`.thunderbolt`), the MLX build (:mod:`.mlx_build`),
processes using MLX (:mod:`.mlx_processes`), NVIDIA GPUs (:mod:`.nvml`), the boot time
(:mod:`.boottime`) and the summary a host reports to fleet mode (:mod:`.summary`). Parsing of
tools' text is in :mod:`meshdoctor.parsers`."""
