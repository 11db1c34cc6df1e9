"""Shared test settings: hypothesis profiles sized for CI's two cores; numba kernels compiled
(or loaded from their cache) once, before any test, so no timed test waits for the compiler."""

import pytest
from hypothesis import settings

from physics.warmup import compile_kernels

settings.register_profile("ci", deadline=None, max_examples=30, derandomize=True)
settings.load_profile("ci")


@pytest.fixture(scope="session", autouse=True)
def compiled_kernels():
    compile_kernels()
