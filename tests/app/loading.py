"""The loader without a window (app/loader.py): a fixture (``app``) and the polling the render
loop does, shared by the loader's tests."""

import time

import pytest

from app.app_state import AppState
from app.loader import Loader
from physics.model import WorldDef
from physics.simulation import Simulation
from physics.world import World


@pytest.fixture(name="app")
def loader_app():
    """(state, loader) with the physics thread paused (bodies stay where they were put) and
    always stopped."""
    sim = Simulation(World(WorldDef()), paused=True)
    state = AppState(sim=sim)
    sim.start()
    loader = Loader(state)
    yield state, loader
    loader.close()
    sim.stop()


def settle(state, loader, timeout=60.0):
    """Poll like the render loop until no file is in flight; the newest snapshot."""
    deadline = time.monotonic() + timeout
    while state.loading:
        loader.poll()
        assert time.monotonic() < deadline, "files still loading"
        time.sleep(0.01)
    loader.poll()
    return state.sim.latest()
