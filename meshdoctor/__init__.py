"""meshdoctor: doctor and repair tool for the meshes that run MLX distributed jobs."""

__version__ = "0.1.0"
