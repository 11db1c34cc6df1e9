"""Stacks of boxes of very different masses at the default solver settings: a heavy box on a
light one stands, as it does in the world, however large the mass ratio (up to 1000 : 1)."""

import numpy as np
import pytest

from physics.model import WorldDef
from physics.world import World
from tests.physics.bodies import box_body

H = 1.0 / 240.0  # the default physics rate
CUBE = 0.2       # m, edge of every box
DRIFT = 0.01     # m: the most any box may move while the stack stands
TILT = np.radians(1.0)  # the most any box may tip


def stack_masses():
    """(id, masses bottom to top): two boxes with the heavy one on top, and four boxes with it
    on top or in the middle (on one light box, or under one)."""
    cases = [pytest.param([1.0, 1.0], id="2 equal"), pytest.param([1.0] * 4, id="4 equal")]
    for ratio in (10.0, 100.0, 1000.0):
        r = f"{ratio:g}"
        marks = []
        cases += [pytest.param([1.0, ratio], id=f"2 heavy top {r}", marks=marks),
                  pytest.param([1.0, 1.0, 1.0, ratio], id=f"4 heavy top {r}", marks=marks),
                  pytest.param([1.0, ratio, 1.0, 1.0], id=f"4 heavy second {r}", marks=marks),
                  pytest.param([1.0, 1.0, ratio, 1.0], id=f"4 heavy third {r}", marks=marks),
                  pytest.param([1.0, ratio, ratio, 1.0], id=f"4 heavy middle pair {r}",
                               marks=marks)]
    return cases


def stacked(masses, gap=0.0, **settings) -> World:
    """Boxes of the given masses (bottom to top) one on another, ``gap`` m apart, on the
    floor of the default container."""
    world = World(WorldDef(**settings))
    for level, mass in enumerate(masses):
        world.add_body(box_body(size=(CUBE, CUBE, CUBE), mass=mass,
                                position=[0.0, (CUBE + gap) * level + CUBE / 2, 0.0]))
    return world


@pytest.mark.parametrize("kept_awake", [False, True], ids=["sleeping allowed", "kept awake"])
@pytest.mark.parametrize("masses", stack_masses())
def test_a_stack_of_heavy_and_light_boxes_stands_for_ten_seconds(masses, kept_awake):
    world = stacked(masses)
    start, turned_from = world.state.pos.copy(), world.state.quat.copy()
    drift = tilt = 0.0
    for _ in range(int(round(10.0 / H))):
        if kept_awake:  # sleep must not be what holds the stack up
            world.wake_all()
        world.step(H)
        drift = max(drift, np.max(np.linalg.norm(world.state.pos - start, axis=1)))
        # the angle each box turned through: the scalar part of q₀* q is q₀·q
        w = np.clip(np.abs(np.sum(world.state.quat * turned_from, axis=1)), 0.0, 1.0)
        tilt = max(tilt, np.max(2.0 * np.arccos(w)))
    assert drift < DRIFT, f"a box moved {drift * 100:.2f} cm"
    assert tilt < TILT, f"a box turned {np.degrees(tilt):.2f}°"
    if not kept_awake:
        assert world.asleep().all(), "the stack is still moving after 10 s"


@pytest.mark.parametrize("masses",
                         [[1.0, 1000.0], [1.0, 1.0, 1.0, 1000.0], [1.0, 1000.0, 1.0, 1.0]],
                         ids=["2 heavy top", "4 heavy top", "4 heavy second"])
def test_one_step_carries_the_whole_weight_of_a_heavy_box(masses):
    """From rest, the first step's contacts hold every box still: the normal impulses are
    those of the exact solution, not the fraction that ten sweeps pass along the stack."""
    world = stacked(masses)
    world.step(H)
    assert np.max(np.abs(world.state.vel)) < 1e-9
    assert np.max(np.abs(world.angular_velocity())) < 1e-9


@pytest.mark.parametrize("restitution", [0.0, 0.5, 1.0])
@pytest.mark.parametrize("masses", [[1.0, 1000.0], [1000.0, 1.0], [1.0, 1.0, 1000.0, 1.0]],
                         ids=["heavy on light", "light on heavy", "heavy third"])
def test_boxes_dropped_on_a_stack_of_unequal_masses_never_gain_energy(masses, restitution):
    """Each box falls 5 cm onto the one below and the stack comes to rest: the total energy
    never rises above where it was, at any step."""
    world = stacked(masses, gap=0.05, restitution=restitution)
    energy = (world.kinetic_energy() + world.potential_energy()).sum()
    for _ in range(int(round(3.0 / H))):
        world.step(H)
        now = (world.kinetic_energy() + world.potential_energy()).sum()
        assert now <= energy + 1e-9 * abs(energy)
        energy = now
    assert world.asleep().all()
