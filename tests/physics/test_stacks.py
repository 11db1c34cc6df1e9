"""Stacks of boxes of very different masses at the default solver settings: a heavy box on a
light one stands, as it does in the world, however large the mass ratio (up to 1000 : 1)."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from physics.model import WorldDef
from physics.scene import build_world, load_scene
from physics.world import World
from tests.paths import REPO
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


def stands(world, kept_awake, seconds=10.0) -> None:
    """Step for ``seconds`` (waking every body before each step if kept_awake, so that sleep
    cannot be what holds the bodies up): none may move by DRIFT or turn by TILT at any step,
    and unless kept awake they end asleep."""
    start, turned_from = world.state.pos.copy(), world.state.quat.copy()
    drift = tilt = 0.0
    for _ in range(int(round(seconds / H))):
        if kept_awake:
            world.wake_all()
        world.step(H)
        drift = max(drift, np.max(np.linalg.norm(world.state.pos - start, axis=1)))
        # the angle each body turned through: the scalar part of q₀* q is q₀·q
        w = np.clip(np.abs(np.sum(world.state.quat * turned_from, axis=1)), 0.0, 1.0)
        tilt = max(tilt, np.max(2.0 * np.arccos(w)))
    assert drift < DRIFT, f"a body moved {drift * 100:.2f} cm"
    assert tilt < TILT, f"a body turned {np.degrees(tilt):.2f}°"
    if not kept_awake:
        assert world.asleep().all(), "still moving after 10 s"


KEPT_AWAKE = pytest.mark.parametrize("kept_awake", [False, True],
                                     ids=["sleeping allowed", "kept awake"])


@KEPT_AWAKE
@pytest.mark.parametrize("masses", stack_masses())
def test_a_stack_of_heavy_and_light_boxes_stands(masses, kept_awake):
    stands(stacked(masses), kept_awake)


@KEPT_AWAKE
def test_a_heavy_box_off_centre_and_turned_on_a_light_one_stands(kept_awake):
    world = World(WorldDef())
    world.add_body(box_body(size=(CUBE, CUBE, CUBE), mass=1.0, position=[0.0, CUBE / 2, 0.0]))
    turn = np.radians(17.0)  # about the vertical
    world.add_body(box_body(size=(CUBE, CUBE, CUBE), mass=1000.0,
                            position=[0.03, 1.5 * CUBE, 0.02],
                            orientation=[np.cos(turn / 2), 0.0, np.sin(turn / 2), 0.0]))
    stands(world, kept_awake)


@KEPT_AWAKE
def test_a_heavy_table_top_on_four_light_legs_stands(kept_awake):
    world = World(WorldDef())
    for x in (-0.3, 0.3):
        for z in (-0.3, 0.3):
            world.add_body(box_body(size=(CUBE, CUBE, CUBE), mass=1.0,
                                    position=[x, CUBE / 2, z]))
    # a 0.9 × 0.9 × 0.1 m slab of 1000 kg, its thin body z axis turned to the vertical
    world.add_body(box_body(size=(0.9, 0.9, 0.1), mass=1000.0, position=[0.0, CUBE + 0.05, 0.0],
                            orientation=[np.cos(-np.pi / 4), np.sin(-np.pi / 4), 0.0, 0.0]))
    stands(world, kept_awake)


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


@given(st.lists(st.tuples(st.floats(0.0, 3.0), st.floats(-0.02, 0.02), st.floats(-0.02, 0.02),
                          st.floats(-0.5, 0.5)), min_size=2, max_size=4))
def test_any_stack_of_boxes_up_to_1000_to_1_stands_kept_awake(boxes):
    """Boxes of masses 1 to 1000 kg (10^0…10^3) in any order, each up to 2 cm off the vertical
    line and turned up to 0.5 rad about it: every such stack stands (3 s, kept awake)."""
    world = World(WorldDef())
    for level, (log_mass, x, z, turn) in enumerate(boxes):
        world.add_body(box_body(size=(CUBE, CUBE, CUBE), mass=10.0**log_mass,
                                position=[x, CUBE * (level + 0.5), z],
                                orientation=[np.cos(turn / 2), 0.0, np.sin(turn / 2), 0.0]))
    stands(world, kept_awake=True, seconds=3.0)


def test_the_heavy_on_light_sample_scene_stands():
    """assets/scenes/heavy_on_light.toml: blocks of 11 000 kg/m³ on blocks of 11 kg/m³ (and a
    slab ten thousand times heavier than each of its four legs), as a user opens it."""
    world, _ = build_world(load_scene(REPO / "assets" / "scenes" / "heavy_on_light.toml"))
    assert world.model.mass.max() / world.model.mass.min() >= 1000.0
    stands(world, kept_awake=False)
