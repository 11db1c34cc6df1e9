"""A world with joints steps in compiled batches (constraints/forest_step.py ``advance_forest``
inside dynamics/batch.py ``run_batch``) to the bits of the Python path, which takes the steps
the batch cannot (a loop of joints, contacts resting in the joints' solve, a joint breaking)
at the step they happen."""

import numpy as np
import pytest

from physics.constraints.joint import WORLD, JointDef
from physics.constraints.projection import FactorCache, all_rows
from physics.model import WorldDef
from physics.world import World
from tests.physics.bodies import box_body

H = 1.0 / 240.0


def _chain(links=12, container=None, loop=False, break_force=None, height=1.0):
    """A chain of box links on ball joints hung from the world height m up, straight and level
    (it swings down and whips); loop: its last link joined to the first too."""
    world = World(WorldDef(container_size=container))
    previous = WORLD
    for k in range(links):
        body = world.add_body(box_body((0.1, 0.02, 0.02), mass=0.1,
                                       position=[(k + 0.5) * 0.1, height, 0.0]))
        world.add_joint(JointDef("ball", body, previous, anchor=[k * 0.1, height, 0.0],
                                 break_force=break_force if k == 0 else None))
        previous = body
    if loop:
        world.add_joint(JointDef("ball", previous, world.ids[0], anchor=[0.05, height, 0.0]))
    return world


@pytest.fixture
def in_python(monkeypatch):
    """(world, step number) of each step a batch left to the Python path."""
    record = []
    original = World._step_in_python

    def spy(self, h):
        record.append((self, round(self.state.time / H)))
        return original(self, h)
    monkeypatch.setattr(World, "_step_in_python", spy)
    return record


def _python_path(world):
    """world, every step of it taken by the Python path (its batches take none)."""
    world._run_batch = lambda h, steps: 0
    return world


def _assert_same(a, b):
    for name in ("pos", "quat", "vel", "ang_mom", "asleep", "slow_time"):
        np.testing.assert_array_equal(getattr(a.state, name), getattr(b.state, name), name)
    for name in ("impulses", "force", "torque", "error"):
        np.testing.assert_array_equal(getattr(a.joints, name), getattr(b.joints, name), name)


def _steps_of(record, world):
    return [step for who, step in record if who is world]


def test_a_whipping_chain_steps_in_batches_to_the_python_paths_bits(in_python):
    batched, python = _chain(), _python_path(_chain())
    for size in (1, 7, 32, 200):
        batched.advance(H, size)
        python.advance(H, size)
    _assert_same(batched, python)
    assert _steps_of(in_python, batched) == []
    assert len(_steps_of(in_python, python)) == 240
    assert np.abs(batched.joint_errors()).max() < 1e-6  # and the joints hold


def test_a_chain_landing_in_a_pile_goes_to_the_python_path_where_it_rests(in_python):
    # the links come to rest on the floor and on each other: those contacts are held in the
    # joints' solve, which only the sparse solve can; the swinging before is batched (the
    # chain lands a quarter of a second in, after which nearly every step rests)
    batched = _chain(links=8, container=[3.0, 2.5, 3.0], height=0.3)
    python = _python_path(_chain(links=8, container=[3.0, 2.5, 3.0], height=0.3))
    for _ in range(12):
        batched.advance(H, 10)
        for _ in range(10):
            python.step(H)
        _assert_same(batched, python)
    in_python_steps = _steps_of(in_python, batched)
    assert in_python_steps and in_python_steps[0] >= 30  # batched until it lands
    assert len(in_python_steps) < 120


def test_a_loop_of_joints_steps_in_the_python_path(in_python):
    batched, python = _chain(loop=True), _python_path(_chain(loop=True))
    batched.advance(H, 60)
    for _ in range(60):
        python.step(H)
    _assert_same(batched, python)
    assert _steps_of(in_python, batched) == list(range(60))


def test_a_joint_breaking_within_a_batch_breaks_at_the_python_paths_step(in_python):
    batched, python = _chain(break_force=8.0), _python_path(_chain(break_force=8.0))
    broke_at = None
    for step in range(240):
        python.step(H)
        if python.take_broken_joints():
            broke_at = step
    batched.advance(H, 240)
    _assert_same(batched, python)
    assert broke_at is not None
    assert [joint for joint, _ in batched.take_broken_joints()] == [0]
    assert len(batched.joints.defs) == 11
    # the batch ran up to the breaking step, which the Python path took; batches after it
    assert _steps_of(in_python, batched) == [broke_at]


def test_the_rows_kept_for_the_next_step_are_those_at_its_start_poses():
    world = _chain()
    world.advance(H, 30)
    jac, phi, active, nblock = world.joints.factors.rows  # the end of the last step's
    joints, state = world.joints.arrays(world.model.ids), world.state
    for kept, fresh in zip((jac, phi, active, nblock), all_rows(joints, state.pos, state.quat)):
        np.testing.assert_array_equal(kept, fresh)
    # a link moved between steps: the kept rows and factors are not those of its poses, and the
    # step goes as from none kept
    moved, cleared = world, _chain()
    cleared.advance(H, 30)
    for each in (moved, cleared):
        each.set_body_state(each.ids[5], position=each.state.pos[5] + [0.0, 1e-3, 0.0])
    cleared.joints.factors = FactorCache()
    moved.advance(H, 3)
    cleared.advance(H, 3)
    _assert_same(moved, cleared)
