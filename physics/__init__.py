"""Tumble's rigid-body engine: pure, headless, numpy + numba (see world.py for the pipeline)."""

from . import threads  # noqa: F401  (the thread-safe threading layer, before any kernel runs)
