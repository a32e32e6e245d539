"""The probe: hang-proof collective probes through the real MLX backend."""
