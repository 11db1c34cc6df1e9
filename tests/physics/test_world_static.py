"""Static bodies (scenery): never moved by anything, yet everything collides with them."""

import numpy as np
import pytest

from physics.constraints.joint import WORLD, JointDef
from physics.model import WorldDef
from physics.world import World
from tests.physics.bodies import box_body

H = 1.0 / 240.0
LYING = [np.sqrt(0.5), np.sqrt(0.5), 0.0, 0.0]  # a quarter turn about x: body z → world −y


def slab(width, thickness, **kwargs):
    """A static horizontal slab ``width`` (x) × ``thickness`` (y) × ``width`` (z), m: box_body's
    ascending moments need x ≥ y ≥ z, so a box thin in z is turned to lie flat."""
    return box_body((width + 0.01, width, thickness), orientation=LYING, static=True, **kwargs)


def shelf_world(height=1.0, container=(4.0, 6.0, 4.0)) -> tuple[World, int]:
    """A static 3 × 0.2 × 3 m shelf of 50 kg floating at ``height`` m (its centre)."""
    world = World(WorldDef(container_size=None if container is None else list(container)))
    shelf = world.add_body(slab(3.0, 0.2, mass=50.0, position=[0.0, height, 0.0]))
    return world, shelf


def run(world: World, seconds: float) -> None:
    for _ in range(int(round(seconds / H))):
        world.step(H)


def test_a_static_body_never_moves_under_100_stacked_bodies():
    world, shelf = shelf_world()
    start_pos = world.state.pos[0].copy()
    start_quat = world.state.quat[0].copy()
    # 4 layers of 5 × 5 boxes of 1 kg, 50 % of the shelf's mass in all, dropped in a heap
    for layer in range(4):
        for i in range(5):
            for k in range(5):
                world.add_body(box_body((0.24, 0.22, 0.2), mass=1.0,
                                        position=[-0.8 + 0.4 * i, 1.3 + 0.3 * layer,
                                                  -0.8 + 0.4 * k]))
    assert world.count == 101
    run(world, 3.0)
    row = world.index_of(shelf)
    np.testing.assert_array_equal(world.state.pos[row], start_pos)
    np.testing.assert_array_equal(world.state.quat[row], start_quat)
    np.testing.assert_array_equal(world.state.vel[row], 0.0)
    np.testing.assert_array_equal(world.state.ang_mom[row], 0.0)
    # the stack rests on the shelf, not on the floor below it: every box above its top
    others = np.arange(world.count) != row
    assert np.all(world.state.pos[others, 1] > 1.1)
    assert world.asleep()[others].all()


def test_a_dynamic_body_resting_on_a_static_one_falls_asleep_and_the_static_one_does_not():
    world, shelf = shelf_world(container=None)
    box = world.add_body(box_body((0.24, 0.22, 0.2), position=[0.3, 1.3, 0.0]))
    run(world, 2.0)
    asleep = world.asleep()
    assert asleep[world.index_of(box)]
    assert not asleep[world.index_of(shelf)]
    # resting on the shelf's top (1.1 m) on its 0.22 m side, within the contact slop
    assert world.state.pos[world.index_of(box), 1] == pytest.approx(1.1 + 0.11, abs=2e-3)


def test_removing_a_static_body_wakes_what_slept_on_it():
    world, shelf = shelf_world()
    box = world.add_body(box_body((0.24, 0.22, 0.2), position=[0.3, 1.3, 0.0]))
    run(world, 2.0)
    assert world.asleep()[world.index_of(box)]
    world.remove_body(shelf)
    run(world, 0.5)
    assert not world.asleep()[world.index_of(box)]
    assert world.state.pos[world.index_of(box), 1] < 1.0  # falling to the floor


def test_gravity_impulses_the_grab_and_held_forces_do_not_move_a_static_body():
    world, shelf = shelf_world(container=None)
    world.apply_impulse(shelf, [10.0, 50.0, 0.0], point=[1.0, 1.0, 0.5])
    world.set_external_force(shelf, force=[0.0, 100.0, 0.0], torque=[5.0, 0.0, 0.0])
    world.set_grab(shelf, [1.0, 0.0, 0.0], [2.0, 3.0, 0.0], stiffness=1e4, damping=10.0)
    before = world.state.pos[0].copy(), world.state.quat[0].copy()
    run(world, 0.5)
    np.testing.assert_array_equal(world.state.pos[0], before[0])
    np.testing.assert_array_equal(world.state.quat[0], before[1])
    assert world.kinetic_energy()[0] == 0.0


def test_a_pendulum_hung_from_a_static_body_swings_and_the_body_stays():
    world, shelf = shelf_world(height=2.0, container=None)
    bob = world.add_body(box_body((0.1, 0.1, 0.1), position=[0.5, 1.0, 0.0]))
    world.add_joint(JointDef("ball", first=bob, second=shelf, anchor=[0.0, 1.9, 0.0]))
    before = world.state.pos[0].copy()
    lowest = np.inf
    for _ in range(240):
        world.step(H)
        lowest = min(lowest, world.state.pos[1, 1])
    np.testing.assert_array_equal(world.state.pos[0], before)
    # swung through the bottom of its arc: the anchor less the rod's length, √(0.5² + 0.9²)
    assert lowest == pytest.approx(1.9 - np.hypot(0.5, 0.9), abs=5e-3)


def test_a_static_body_may_stand_in_a_wall_and_is_not_pushed_out():
    world = World(WorldDef(container_size=[4.0, 3.0, 4.0]))
    ramp = world.add_body(slab(1.0, 0.4, position=[0.0, 0.1, 0.0]))
    world.add_body(box_body((0.24, 0.22, 0.2), position=[1.0, 0.5, 0.0]))
    run(world, 0.5)
    np.testing.assert_array_equal(world.state.pos[world.index_of(ramp)], [0.0, 0.1, 0.0])


def test_making_a_body_static_stops_it_and_dynamic_again_lets_it_fall():
    world = World(WorldDef(container_size=None))
    body = world.add_body(box_body(position=[0.0, 5.0, 0.0], velocity=[1.0, 0.0, 0.0],
                                   angular_velocity=[0.0, 2.0, 0.0]))
    run(world, 0.1)
    world.set_static(body, True)
    held = world.state.pos[0].copy()
    assert world.kinetic_energy()[0] == 0.0
    assert world.model.inv_mass[0] == 0.0 and not world.model.inv_inertia[0].any()
    assert world.model.mass[0] == 1.0  # its own mass is kept for the inspector and for later
    run(world, 0.5)
    np.testing.assert_array_equal(world.state.pos[0], held)
    world.set_static(body, False)
    run(world, 0.5)
    # free fall from rest: ½ g t²
    assert world.state.pos[0, 1] == pytest.approx(held[1] - 0.5 * 9.81 * 0.5**2, rel=1e-6)


def test_a_box_dropped_on_a_static_box_stops_on_it_as_on_the_floor():
    world = World(WorldDef(container_size=None, restitution=0.0))
    world.add_body(box_body((1.0, 1.0, 1.0), position=[0.0, 0.5, 0.0], static=True))
    world.add_body(box_body((0.4, 0.4, 0.4), position=[0.1, 2.0, 0.0]))
    run(world, 1.5)
    assert world.state.pos[1, 1] == pytest.approx(1.2, abs=2e-3)
    assert np.linalg.norm(world.state.vel[1]) < 1e-2


@pytest.mark.parametrize("call, message", [
    (lambda w, b: w.set_static(b, "yes"), "static must be true or false"),
    (lambda w, b: w.set_body_state(b, velocity=[1.0, 0.0, 0.0]), "is static"),
    (lambda w, b: w.add_body(slab(1.0, 0.1, velocity=[0.0, 1.0, 0.0])),
     "a static body never moves"),
])
def test_bad_static_commands_are_refused(call, message):
    world, shelf = shelf_world()
    with pytest.raises(ValueError, match=message):
        call(world, shelf)
    assert world.count == 1 and world.model.static[0]


def test_placing_a_static_body_moves_it_and_wakes_what_slept_on_it():
    world, shelf = shelf_world()
    box = world.add_body(box_body((0.24, 0.22, 0.2), position=[0.3, 1.3, 0.0]))
    run(world, 2.0)
    assert world.asleep()[world.index_of(box)]
    world.set_body_state(shelf, position=[0.0, 0.5, 0.0])
    np.testing.assert_array_equal(world.state.pos[world.index_of(shelf)], [0.0, 0.5, 0.0])
    assert not world.asleep()[world.index_of(box)]


def test_a_static_body_joined_to_the_world_does_not_keep_a_sleeper_awake():
    world, shelf = shelf_world(container=None)
    world.add_joint(JointDef("fixed", first=shelf, second=WORLD, anchor=[0.0, 1.0, 0.0]))
    box = world.add_body(box_body((0.24, 0.22, 0.2), position=[0.3, 1.3, 0.0]))
    world.add_joint(JointDef("ball", first=box, second=shelf, anchor=[0.3, 1.2, 0.0],
                             collide=True))
    run(world, 2.0)
    assert world.asleep()[world.index_of(box)]
