"""Shared test settings: hypothesis profiles sized for CI's two cores; numba kernels compiled
(or loaded from their cache) once, before any test, so no timed test waits for the compiler."""

import os

import pytest
from hypothesis import settings

from physics.runtime import configure
from physics.warmup import compile_kernels
from tests.physics.scripted import saved_replay
from tests.wall_clock import WALL_CLOCK

configure()  # the engine's process settings, as the app and the CLI set them

settings.register_profile("ci", deadline=None, max_examples=30, derandomize=True)
settings.load_profile("ci")


@pytest.fixture(scope="session", autouse=True)
def compiled_kernels():
    compile_kernels()


def _private_folder(tmp_path_factory, variable: str, name: str):
    """Point the environment variable at a new folder for the session, then restore it."""
    folder = tmp_path_factory.mktemp(name)
    previous = os.environ.get(variable)
    os.environ[variable] = str(folder)
    yield folder
    if previous is None:
        os.environ.pop(variable, None)
    else:
        os.environ[variable] = previous


@pytest.fixture(scope="session", autouse=True)
def private_config_folder(tmp_path_factory):
    """The app remembers per-user choices (mesh scales) under $XDG_CONFIG_HOME: tests, and the
    app processes they start, use a folder of their own, never the user's."""
    yield from _private_folder(tmp_path_factory, "XDG_CONFIG_HOME", "config")


@pytest.fixture(scope="session", autouse=True)
def private_cache_folder(tmp_path_factory):
    """Convex decompositions are cached under $XDG_CACHE_HOME: tests, and the app processes
    they start, use a folder of their own (shared by the session, so each mesh is split once),
    never the user's."""
    yield from _private_folder(tmp_path_factory, "XDG_CACHE_HOME", "cache")


@pytest.fixture(scope="session")
def scripted_replay(tmp_path_factory):
    """The scripted 20 s run saved as a replay (tests/physics/scripted.py): run once for the
    session, read by the replay and command-line tests, which never change it."""
    return saved_replay(tmp_path_factory.mktemp("replay"))


@pytest.hookimpl(tryfirst=True)  # before pytest-xdist reads the groups
def pytest_collection_modifyitems(items):
    """The tests that drive the app on an X server are in the wall-clock group too
    (tests/wall_clock.py), found by what their module uses."""
    for item in items:
        module = getattr(item, "module", None)
        if hasattr(module, "RunningApp") or hasattr(module, "start_xvfb") \
                or "xvfb" in item.fixturenames:
            item.add_marker(WALL_CLOCK)
