"""Tumble's rigid-body engine: pure, headless, numpy + numba (see world.py for the pipeline).

Importing it changes no process-wide setting; ``physics.runtime.configure()`` does, where the
engine is started (docs/architecture.md#threads)."""
