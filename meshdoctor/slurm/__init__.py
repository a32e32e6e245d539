"""Slurm adapters: a node check's verdict as the node's Slurm state (:mod:`.drain`)."""
