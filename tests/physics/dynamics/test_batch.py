"""A batch of steps in one compiled call (dynamics/batch.py): it holds no GIL while it runs, it
wakes a struck sleeping island within the step as ``World.step`` always did, it wakes the
sleeping bodies joined to awake ones, it never writes an array the world handed out, and a
lone free body's step allocates next to nothing."""

import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np

from physics.dynamics.batch import wake_joined
from physics.model import BodyDef, WorldDef
from physics.world import World
from tests.physics.bodies import box_body
from tests.wall_clock import WALL_CLOCK

H = 1.0 / 240.0
MAX_ALLOCATIONS_PER_STEP = 10  # what a lone free body's step may allocate (10 measured)


def heap(n=150, seed=1) -> World:
    rng = np.random.default_rng(seed)
    world = World(WorldDef(container_size=[2.0, 3.0, 2.0], sleep=False))
    for k in range(n):
        world.add_body(box_body((0.1, 0.08, 0.06), position=rng.uniform([-0.8, 0.1, -0.8],
                                                                       [0.8, 2.8, 0.8]),
                                velocity=rng.normal(size=3)))
    return world


@WALL_CLOCK
def test_a_batch_holds_no_gil_while_it_runs():
    """Another Python thread keeps running through a long batch (1 000 steps of 150 boxes that
    never sleep): the longest pause between its loop turns stays far below the batch's length
    (a call holding the GIL would stop it for the whole batch)."""
    world = heap()
    world.advance(H, 2)  # compiled and loaded before timing
    done = threading.Event()
    took = []

    def run():
        t0 = time.perf_counter()
        world.advance(H, 1000)
        took.append(time.perf_counter() - t0)
        done.set()

    thread = threading.Thread(target=run)
    turns = [time.perf_counter()]
    thread.start()
    while not done.is_set():
        turns.append(time.perf_counter())
    thread.join()
    assert took[0] > 0.3  # long enough to see a stall
    assert np.max(np.diff(turns)) < took[0] / 3


def test_a_strike_wakes_the_sleeping_row_within_the_step():
    """Three boxes asleep in a row on the floor; a fourth slides into the row's end: the whole
    row wakes in the step of the strike (it is part of one island through the pairs remembered
    from before it slept), and the far box moves off."""
    world = World(WorldDef(restitution=1.0, friction=0.0, container_size=[6.0, 2.0, 2.0]))
    for x in (0.0, 0.2, 0.4):
        world.add_body(box_body((0.2, 0.1, 0.1), position=[x, 0.05, 0.0]))
    for _ in range(240 * 3):
        world.step(H)
    assert world.asleep().all()
    before = world.state.pos[2, 0]
    striker = world.add_body(BodyDef(mass=1.0, principal_moments=[0.004] * 3, radius=0.05,
                                     position=[-0.6, 0.05, 0.0], velocity=[3.0, 0.0, 0.0]))
    for _ in range(240):
        world.advance(H, 1)
        if not world.asleep()[:3].all():
            break
    assert not world.asleep()[:3].any()  # woken together
    world.advance(H, 120)
    assert world.state.pos[2, 0] > before + 0.05  # the impulse passed down the row
    assert world.state.vel[world.index_of(striker), 0] < 1.0


def test_sleeping_bodies_wake_through_their_joints_from_an_awake_one():
    """Rows 1–4 asleep hang one from the next off awake row 0 (joints listed far end first,
    so waking takes a round per joint); row 5 sleeps on a joint to the world, and row 7 on a
    joint to static row 6: neither wakes, nor does row 8, asleep and joined to nothing."""
    first = np.array([4, 3, 2, 1, 5, 7], dtype=np.int64)
    second = np.array([3, 2, 1, 0, -1, 6], dtype=np.int64)
    static = np.zeros(9, dtype=bool)
    static[6] = True
    asleep = np.array([False, True, True, True, True, True, False, True, True])
    slow_time = np.full(9, 0.25)
    wake_joined(first, second, static, asleep, slow_time)
    np.testing.assert_array_equal(asleep, [False, False, False, False, False, True, False, True,
                                           True])
    np.testing.assert_array_equal(slow_time, [0.25, 0, 0, 0, 0, 0.25, 0.25, 0.25, 0.25])


def test_a_batch_never_writes_the_arrays_the_world_handed_out():
    """The steps of a batch write their end state into the batch's own arrays, two sets in
    turn (dynamics/advance.py ``Workspace``): the state arrays the world held before a batch
    (which a snapshot or the history may hold too) keep their values through later batches of
    every parity, while the world moves on."""
    world = heap(n=20, seed=2)
    world.advance(H, 3)
    handed_out = []
    for steps in (1, 2, 3, 4):
        s = world.state
        arrays = (s.pos, s.quat, s.vel, s.ang_mom)
        handed_out.append((arrays, [a.copy() for a in arrays]))
        world.advance(H, steps)
    for arrays, values in handed_out:
        for array, value in zip(arrays, values):
            assert np.array_equal(array, value)
    assert not np.array_equal(world.state.pos, handed_out[-1][1][0])  # the world moved


_COUNT_ALLOCATIONS = """
import json, sys
sys.path.insert(0, {root!r})
from numba.core.runtime import rtsys
from physics.model import BodyDef, WorldDef
from physics.runtime import configure
from physics.world import World
configure()
world = World(WorldDef(gravity=[0.0, 0.0, 0.0], container_size=None))
world.add_body(BodyDef(mass=1.0, principal_moments=[0.01, 0.02, 0.03], radius=0.1,
                       angular_velocity=[1.0, 2.0, 3.0]))
world.advance(1 / 240, 5)
counts = []
for steps in (1, 101):
    before = rtsys.get_allocation_stats().alloc
    world.advance(1 / 240, steps)
    counts.append(rtsys.get_allocation_stats().alloc - before)
print(json.dumps(counts))
"""


def test_a_lone_free_bodys_step_allocates_next_to_nothing():
    """A free body alone, no container: the batch's steps allocate almost no array each
    (numba's allocation count, switched on in a fresh interpreter), the walls, the broad
    phase and the contacts' stages having nothing to do (docs/architecture.md#batches); before
    the batch's workspace it was 75 a step."""
    root = Path(__file__).resolve().parents[3]
    result = subprocess.run([sys.executable, "-c", _COUNT_ALLOCATIONS.format(root=str(root))],
                            env={**os.environ, "NUMBA_NRT_STATS": "1"}, capture_output=True,
                            text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    one, hundred_and_one = json.loads(result.stdout)
    assert (hundred_and_one - one) / 100 <= MAX_ALLOCATIONS_PER_STEP
