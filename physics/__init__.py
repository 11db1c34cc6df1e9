"""Tumble's rigid-body engine: pure, headless, numpy + numba (see world.py for the pipeline)."""

from physics import runtime  # noqa: F401  (threading layer and allocator, before any kernel runs)
