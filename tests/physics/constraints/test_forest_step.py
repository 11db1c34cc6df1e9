"""The compiled jointed step (constraints/forest_step.py) gives the bits of the Python path it
stands in for, leaves to it the steps it cannot take (a loop of joints, contacts resting in the
joints' solve, a joint breaking) and is callable from compiled code."""

import numpy as np
import pytest
from numba import njit

import physics.world as world_module
from physics.constraints.forest_step import advance_forest
from physics.constraints.joint import WORLD, JointDef
from physics.model import BodyDef, WorldDef
from physics.world import World

H = 1.0 / 240.0


def _chain(links=12, container=None, loop=False, break_force=None, height=1.0):
    """A chain of box links on ball joints hung from the world height m up, straight and level
    (it swings down and whips); loop: its last link joined to the first too."""
    world = World(WorldDef(container_size=container))
    half = np.array([0.05, 0.01, 0.01])
    hull = np.array([[x, y, z] for x in (-1, 1) for y in (-1, 1) for z in (-1, 1)]) * half
    previous = WORLD
    for k in range(links):
        body = world.add_body(BodyDef(mass=0.1, principal_moments=[7e-6, 9e-5, 9e-5], hull=hull,
                                      position=[(k + 0.5) * 0.1, height, 0.0]))
        world.add_joint(JointDef("ball", body, previous, anchor=[k * 0.1, height, 0.0],
                                 break_force=break_force if k == 0 else None))
        previous = body
    if loop:
        world.add_joint(JointDef("ball", previous, world.ids[0], anchor=[0.05, height, 0.0]))
    return world


@pytest.fixture
def took(monkeypatch):
    """Whether each step's ``advance_forest`` call did the step (True) or left it to the
    Python path (False), in order."""
    record = []

    def spy(*args):
        done = advance_forest(*args)
        record.append(bool(done.done))
        return done
    monkeypatch.setattr(world_module, "advance_forest", spy)
    return record


def _python_path(world):
    """world, stepping every jointed step through the Python path."""
    world._advance_jointed = world._advance_general
    return world


def _assert_same(a, b):
    for name in ("pos", "quat", "vel", "ang_mom", "asleep", "slow_time"):
        np.testing.assert_array_equal(getattr(a.state, name), getattr(b.state, name), name)
    for name in ("impulses", "force", "torque", "error"):
        np.testing.assert_array_equal(getattr(a.joints, name), getattr(b.joints, name), name)


def test_a_whipping_chain_steps_in_one_call_to_the_python_paths_bits(took):
    compiled, python = _chain(), _python_path(_chain())
    for _ in range(240):
        compiled.step(H)
        python.step(H)
    _assert_same(compiled, python)
    assert took == [True] * 240
    assert np.abs(compiled.joint_errors()).max() < 1e-6  # and it holds its joints


def test_a_chain_landing_in_a_pile_is_left_to_the_python_path_when_it_rests(took):
    # the links come to rest on the floor and on each other: those contacts are held in the
    # joints' solve, which only the sparse solve can; the swinging before is compiled
    compiled = _chain(links=8, container=[3.0, 2.5, 3.0], height=0.3)
    python = _python_path(_chain(links=8, container=[3.0, 2.5, 3.0], height=0.3))
    for _ in range(600):
        compiled.step(H)
        python.step(H)
        _assert_same(compiled, python)
    assert True in took and False in took


def test_a_loop_of_joints_is_left_to_the_python_paths_sparse_solve(took):
    compiled, python = _chain(loop=True), _python_path(_chain(loop=True))
    for _ in range(60):
        compiled.step(H)
        python.step(H)
    _assert_same(compiled, python)
    assert took == [False] * 60


def test_a_joint_breaking_breaks_at_the_step_the_python_path_breaks_it(took):
    compiled = _chain(break_force=8.0)
    python = _python_path(_chain(break_force=8.0))
    broke = []
    for step in range(240):
        compiled.step(H)
        python.step(H)
        mine, theirs = compiled.take_broken_joints(), python.take_broken_joints()
        assert [i for i, _ in mine] == [i for i, _ in theirs]
        if mine:
            broke.append(step)
    _assert_same(compiled, python)
    assert len(broke) == 1 and took[broke[0]] is False  # the breaking step is the Python path's
    assert took[:broke[0]] == [True] * broke[0]       # the swing before it was compiled
    assert len(compiled.joints.defs) == 11


@njit
def _from_compiled(*args):
    return advance_forest(*args)


def test_the_jointed_step_is_callable_from_compiled_code(monkeypatch):
    calls = []

    def both(*args):
        copies = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
        start = args[3]
        kept = tuple(a.copy() for a in start)
        from_python = advance_forest(*copies)
        asleep, slow_time = start[4].copy(), start[5].copy()
        start[4][:], start[5][:] = kept[4], kept[5]  # the sleep stage edits them in place
        from_compiled = _from_compiled(*args)
        np.testing.assert_array_equal(asleep, start[4])
        np.testing.assert_array_equal(slow_time, start[5])
        for a, b in zip(from_python[1:9], from_compiled[1:9]):
            np.testing.assert_array_equal(a, b)
        calls.append(from_compiled.done)
        return from_compiled
    monkeypatch.setattr(world_module, "advance_forest", both)
    world = _chain(links=4)
    for _ in range(5):
        world.step(H)
    assert calls == [True] * 5
