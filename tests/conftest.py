"""Shared test settings: hypothesis profiles sized for CI's two cores; numba kernels compiled
(or loaded from their cache) once, before any test, so no timed test waits for the compiler."""

import os

import pytest
from hypothesis import settings

from physics.runtime import configure
from physics.warmup import compile_kernels

configure()  # the engine's process settings, as the app and the CLI set them

settings.register_profile("ci", deadline=None, max_examples=30, derandomize=True)
settings.load_profile("ci")


@pytest.fixture(scope="session", autouse=True)
def compiled_kernels():
    compile_kernels()


@pytest.fixture(scope="session", autouse=True)
def private_config_folder(tmp_path_factory):
    """The app remembers per-user choices (mesh scales) under $XDG_CONFIG_HOME: tests, and the
    app processes they start, use a folder of their own, never the user's."""
    folder = tmp_path_factory.mktemp("config")
    previous = os.environ.get("XDG_CONFIG_HOME")
    os.environ["XDG_CONFIG_HOME"] = str(folder)
    yield folder
    if previous is None:
        os.environ.pop("XDG_CONFIG_HOME", None)
    else:
        os.environ["XDG_CONFIG_HOME"] = previous


@pytest.fixture(scope="session", autouse=True)
def private_cache_folder(tmp_path_factory):
    """Convex decompositions are cached under $XDG_CACHE_HOME: tests, and the app processes
    they start, use a folder of their own (shared by the session, so each mesh is split once),
    never the user's."""
    folder = tmp_path_factory.mktemp("cache")
    previous = os.environ.get("XDG_CACHE_HOME")
    os.environ["XDG_CACHE_HOME"] = str(folder)
    yield folder
    if previous is None:
        os.environ.pop("XDG_CACHE_HOME", None)
    else:
        os.environ["XDG_CACHE_HOME"] = previous
