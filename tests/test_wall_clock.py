"""The wall-clock group (tests/wall_clock.py): which tests run one after another on one worker."""

import tomllib
from types import SimpleNamespace

from tests import conftest
from tests.app import running_app, test_window
from tests.app.render import test_interpolate
from tests.paths import REPO
from tests.physics import test_simulation, test_world
from tests.wall_clock import WALL_CLOCK


def grouped(module, fixturenames=()):
    marks = []
    item = SimpleNamespace(module=module, fixturenames=list(fixturenames), add_marker=marks.append)
    conftest.pytest_collection_modifyitems([item])
    return marks == [WALL_CLOCK]


def test_window_tests_join_the_group_by_what_their_module_uses():
    assert grouped(test_window)  # RunningApp and start_xvfb
    assert grouped(SimpleNamespace(start_xvfb=running_app.start_xvfb))
    assert grouped(SimpleNamespace(), fixturenames=["tmp_path", "xvfb"])  # the module's server
    assert not grouped(test_world)
    assert not grouped(None)  # an item with no Python module


def test_the_group_is_one_xdist_group_and_modules_of_real_time_threads_are_in_it():
    assert WALL_CLOCK.name == "xdist_group" and WALL_CLOCK.args == ("wall clock",)
    assert test_simulation.pytestmark is WALL_CLOCK
    hand_off = test_interpolate.test_hand_off_from_the_running_physics_thread_is_smooth_and_exact
    assert WALL_CLOCK.mark in hand_off.pytestmark


def test_the_suite_runs_in_two_processes_grouped():
    """pyproject.toml's pytest options: two workers, groups kept whole."""
    options = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["pytest"]
    assert options["ini_options"]["addopts"].split() == ["-ra", "-n", "2", "--dist", "loadgroup"]
