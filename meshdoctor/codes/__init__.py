"""Codes: the vocabulary (:mod:`meshdoctor.codes.model`) and the engine's own codes
(:mod:`meshdoctor.codes.engine`). Nothing here imports the rest of meshdoctor."""
