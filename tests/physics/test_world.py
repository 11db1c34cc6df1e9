"""World.step against analytic answers: bounces, rest, friction, tunnelling, extremes."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from physics.collision.walls import wall_clearance
from physics.geometry.meshes import builtin_shape
from physics.geometry.rotation import quat_normalize, quat_to_matrix
from physics.model import BodyDef, WorldDef
from physics.world import World
from tests.physics.bodies import box_body

H = 1.0 / 240.0


def total_energy(world: World) -> float:
    return float(np.sum(world.kinetic_energy() + world.potential_energy()))


def floor_clearance(world: World) -> np.ndarray:
    m = world.model
    return wall_clearance(
        world.state.pos,
        quat_to_matrix(world.state.quat),
        m.radius,
        m.bound_radius,
        m.hull_points,
        m.hull_start,
        m.wall_planes(),
    )[:, 0]


def bounce_apexes(restitution: float, seconds: float) -> list[float]:
    """1 m cube dropped flat (bottom face 2 m above the floor), no spin, μ = 0: apex heights."""
    world = World(WorldDef(restitution=restitution, friction=0.0, container_size=[4.0, 6.0, 4.0]))
    world.add_body(box_body(position=[0.0, 2.5, 0.0]))
    heights = []
    for _ in range(int(seconds / H)):
        world.step(H)
        heights.append(world.state.pos[0, 1] - 0.5)
    y = np.array(heights)
    peak = (y[1:-1] >= y[:-2]) & (y[1:-1] > y[2:]) & (y[1:-1] > 1e-3)
    return list(y[1:-1][peak])


@pytest.mark.parametrize("restitution", [0.5, 0.8])
def test_cube_bounce_apexes_follow_e_squared(restitution):
    apexes = bounce_apexes(restitution, seconds=4.0)
    assert apexes[0] == pytest.approx(2.0 * restitution**2, rel=0.02)
    assert apexes[1] == pytest.approx(2.0 * restitution**4, rel=0.02)


def first_rebound_ratio(shape, lowest: float, restitution: float, drop: float) -> float:
    """Apex of the first rebound over the drop height, for a builtin shape released at rest,
    unturned, with its lowest point (``lowest`` m below its centre) ``drop`` m above the floor
    (no friction, 240 Hz)."""
    world = World(WorldDef(restitution=restitution, friction=0.0, container_size=[4.0, 4.0, 4.0]))
    world.add_body(shape.body_def([0.0, lowest + drop, 0.0]))
    rose, apex = False, 0.0
    for _ in range(int(4.0 / H)):
        world.step(H)
        height, up = world.state.pos[0, 1] - lowest, world.state.vel[0, 1]
        rose = rose or up > 0.0
        if rose:
            apex = max(apex, height)
            if up < 0.0:
                return apex / drop
    raise AssertionError("no rebound")


@pytest.mark.parametrize("kind, size, lowest", [("sphere", [0.1], 0.1),
                                                ("box", [0.3, 0.2, 0.25], 0.1)])
def test_first_rebound_reaches_e_squared_of_the_drop_from_any_height(kind, size, lowest):
    """50 drop heights, so the last step before impact ends anywhere within the speculative gap:
    the bounce uses the true impact speed (time of impact within the step), never the speed the
    gap allows in a step (docs/physics.md#restitution)."""
    shape, e = builtin_shape(kind, size), 0.5
    ratios = [first_rebound_ratio(shape, lowest, e, drop) for drop in np.linspace(0.3, 1.7, 50)]
    assert np.max(np.abs(np.array(ratios) - e * e)) <= 1e-3, ratios


def drop_energies(restitution, seconds, orientation, angular_velocity, height, friction=0.0):
    world = World(
        WorldDef(restitution=restitution, friction=friction, container_size=[4.0, 6.0, 4.0])
    )
    world.add_body(box_body(size=(1.0, 0.8, 0.6), position=[0.3, height, -0.2],
                            orientation=orientation, angular_velocity=angular_velocity))
    energies = [total_energy(world)]
    for _ in range(int(seconds / H)):
        world.step(H)
        energies.append(total_energy(world))
        assert np.all(np.isfinite(world.state.pos))
    return np.array(energies)


def test_elastic_cube_keeps_its_energy_over_20_s_flat_drop():
    energies = drop_energies(1.0, 20.0, [1, 0, 0, 0], [0, 0, 0], 2.5)
    assert energies.max() <= energies[0] * (1 + 1e-6)
    assert energies.min() >= energies[0] * (1 - 1e-3)  # and it is really elastic: no hidden damping


quaternions = st.lists(st.floats(-1, 1), min_size=4, max_size=4).filter(
    lambda q: np.linalg.norm(q) > 0.1).map(lambda q: quat_normalize(np.array(q)))
spins = st.lists(st.floats(-8, 8), min_size=3, max_size=3)


@settings(max_examples=6)
@given(quaternions, st.one_of(st.just([0.0, 0.0, 0.0]), spins), st.floats(1.0, 4.5))
def test_elastic_random_drops_never_gain_energy(orientation, angular_velocity, height):
    """e = 1, with and without spin, random orientation and height: over 20 s the total energy
    never exceeds its start by more than 1e-6 relative."""
    energies = drop_energies(1.0, 20.0, orientation, angular_velocity, height)
    assert energies.max() <= energies[0] * (1 + 1e-6)


@settings(max_examples=10)
@given(st.floats(0.0, 1.0), quaternions, spins, st.floats(0.0, 1.0))
def test_energy_never_grows_through_any_bounce(
    restitution, orientation, angular_velocity, friction
):
    energies = drop_energies(restitution, 4.0, orientation, angular_velocity, 2.0, friction)
    assert np.all(np.diff(energies) <= 1e-9 * energies[0])


def test_box_dropped_with_low_restitution_comes_to_rest_without_sinking():
    world = World(WorldDef(restitution=0.3, friction=0.5))
    world.add_body(box_body(size=(0.4, 0.3, 0.2), mass=2.0, position=[0.0, 1.5, 0.0],
                            orientation=quat_normalize(np.array([0.9, 0.2, 0.3, 0.1])),
                            angular_velocity=[1.0, 2.0, 3.0]))
    for _ in range(int(5.0 / H)):
        world.step(H)
    assert np.linalg.norm(world.state.vel[0]) < 1e-3
    assert np.linalg.norm(world.angular_velocity()[0]) < 1e-2
    assert floor_clearance(world)[0] > -1e-3  # sinks less than 1 mm


def test_sliding_box_decelerates_at_mu_g():
    world = World(WorldDef(restitution=0.0, friction=0.4))
    world.add_body(
        box_body(size=(0.2, 0.2, 0.2), position=[-1.5, 0.1, 0.0], velocity=[5.0, 0.0, 0.0])
    )
    for _ in range(24):  # settle the contact
        world.step(H)
    v0, t0 = world.state.vel[0, 0], world.state.time
    for _ in range(120):
        world.step(H)
    deceleration = (v0 - world.state.vel[0, 0]) / (world.state.time - t0)
    assert deceleration == pytest.approx(0.4 * 9.81, rel=0.02)


def test_fast_small_box_never_leaves_the_container():
    world = World(WorldDef(restitution=0.5, friction=0.3))
    world.add_body(box_body(size=(0.05, 0.05, 0.05), mass=0.1, position=[0.0, 1.5, 0.0],
                            velocity=[60.0, 5.0, 20.0], angular_velocity=[30.0, 10.0, 5.0]))
    for _ in range(int(3.0 / H)):
        world.step(H)
        x, y, z = world.state.pos[0]
        assert abs(x) < 2.0 and abs(z) < 2.0 and 0.0 < y < 3.0
        assert floor_clearance(world)[0] > -5e-3


def test_extreme_but_legal_inputs_stay_finite():
    """Mass ratio 1e6, ω = 500 rad/s, dt = 1/30."""
    world = World(WorldDef(restitution=1.0, friction=0.5))
    world.add_body(box_body(size=(1.0, 0.5, 0.3), mass=1e3, position=[0, 1, 0],
                            angular_velocity=[500.0, -300.0, 200.0]))
    world.add_body(box_body(size=(0.1, 0.05, 0.02), mass=1e-3, position=[1, 2, 1],
                            angular_velocity=[0.0, 500.0, 0.0], velocity=[30.0, 0.0, 0.0]))
    energy0 = total_energy(world)
    for _ in range(300):
        world.step(1.0 / 30.0)
        for array in (world.state.pos, world.state.quat, world.state.vel, world.state.ang_mom):
            assert np.all(np.isfinite(array))
        assert np.all(world.state.pos[:, 1] > -0.1)
    assert total_energy(world) <= energy0 * (1 + 1e-9)


def test_sphere_rolls_and_rests_on_its_exact_radius():
    world = World(WorldDef(restitution=0.2, friction=0.5))
    radius, mass = 0.25, 3.0
    world.add_body(BodyDef(mass=mass, principal_moments=[0.4 * mass * radius**2] * 3, radius=radius,
                           position=[0.0, 1.0, 0.0], velocity=[1.0, 0.0, 0.0]))
    for _ in range(int(3.0 / H)):
        world.step(H)
    assert world.state.pos[0, 1] == pytest.approx(radius, abs=1e-3)
    # rolling without slipping: v = ω × r about the contact
    omega = world.angular_velocity()[0]
    assert world.state.vel[0, 0] == pytest.approx(-omega[2] * radius, abs=1e-3)


def test_restitution_change_takes_effect_on_the_next_step():
    world = World(WorldDef(restitution=0.0, friction=0.0))
    body = world.add_body(box_body(position=[0.0, 0.7, 0.0]))
    world.set_restitution(1.0, body_id=body)
    for _ in range(60):
        world.step(H)
    assert world.state.vel[0, 1] > 1.5  # bounced back up: the per-body value was used
    world.set_restitution(None, body_id=body)  # back to the world default 0
    world.set_body_state(body, position=[0.0, 0.7, 0.0], velocity=[0, 0, 0])
    for _ in range(60):
        world.step(H)
    assert abs(world.state.vel[0, 1]) < 1e-3


def test_bodies_are_added_and_removed_by_stable_id():
    world = World()
    a = world.add_body(box_body(position=[0, 1, 0]))
    b = world.add_body(box_body(position=[1, 1, 0], mass=2.0))
    c = world.add_body(box_body(position=[-1, 1, 0], mass=3.0))
    world.remove_body(b)
    assert list(world.ids) == [a, c]
    assert world.model.mass.tolist() == [1.0, 3.0]
    assert world.model.hull_start.tolist() == [0, 8, 16]
    world.step(H)
    with pytest.raises(ValueError, match="no body with id"):
        world.remove_body(b)


@pytest.mark.parametrize("call, message", [
    (lambda w, i: w.set_restitution(1.5), "between 0 and 1"),
    (lambda w, i: w.set_restitution(None), "must be a number"),
    (lambda w, i: w.set_friction(-1.0, body_id=i), "≥ 0"),
    (lambda w, i: w.set_gravity([0, np.nan, 0]), "finite"),
    (lambda w, i: w.set_container([4, 0, 4]), "> 0"),
    (lambda w, i: w.apply_impulse(i, [1, 2]), "3 numbers"),
    (lambda w, i: w.step(0.5), "time step"),
    (lambda w, i: w.set_body_state(i, orientation=[0, 0, 0, 0]), "non-zero"),
])
def test_bad_commands_are_refused_and_change_nothing(call, message):
    world = World()
    body = world.add_body(box_body(position=[0, 1, 0]))
    before = (world.state.pos.copy(), world.state.quat.copy(), world.model.settings.gravity.copy())
    with pytest.raises(ValueError, match=message):
        call(world, body)
    assert np.array_equal(world.state.pos, before[0]) and np.array_equal(
        world.state.quat, before[1]
    )
    assert np.array_equal(world.model.settings.gravity, before[2])


def test_impulse_off_centre_changes_angular_momentum_by_r_cross_p():
    world = World(WorldDef(gravity=[0, 0, 0], container_size=None))
    body = world.add_body(box_body(position=[0, 1, 0]))
    world.apply_impulse(body, [0, 0, 2.0], point=[0.5, 1.0, 0.0])
    assert np.allclose(world.state.vel[0], [0, 0, 2.0])
    assert np.allclose(world.state.ang_mom[0], np.cross([0.5, 0, 0], [0, 0, 2.0]))


def test_external_force_and_torque_are_held_between_steps():
    world = World(WorldDef(gravity=[0, 0, 0], container_size=None))
    body = world.add_body(box_body(mass=2.0))
    world.set_external_force(body, force=[4.0, 0, 0], torque=[0, 0, 1.0])
    for _ in range(240):
        world.step(H)
    assert world.state.vel[0, 0] == pytest.approx(2.0, rel=1e-12)       # a = F/m for 1 s
    assert world.state.pos[0, 0] == pytest.approx(1.0, rel=1e-12)       # ½ a t², exact parabola
    assert world.state.ang_mom[0, 2] == pytest.approx(1.0, rel=1e-12)   # L = τ t


def test_a_body_definition_edited_after_validation_is_refused_whole():
    world = World()
    world.add_body(box_body(position=[0, 1, 0]))
    body = box_body(position=[1, 1, 0])
    body.hull = np.zeros((4, 2))  # broken after construction
    with pytest.raises(ValueError):
        world.add_body(body)
    assert (
        world.count == 1 and len(world.state.pos) == 1 and world.model.hull_start.tolist() == [0, 8]
    )


def test_grab_spring_pulls_the_anchor_to_the_target_and_settles():
    """A body hung from its grab point by a damped spring ends at rest with the anchor mg/k below
    the target and the centre of mass straight below the anchor (it pivots about the grab)."""
    world = World(WorldDef(friction=0.0, container_size=None))
    body = world.add_body(box_body(size=(0.4, 0.4, 0.4), mass=2.0, position=[0.0, 1.0, 0.0]))
    k, c = 400.0, 2 * np.sqrt(400.0 * 2.0)
    anchor, target = np.array([0.2, 0.2, 0.0]), np.array([1.0, 2.0, 0.5])
    world.set_grab(body, anchor, target, stiffness=k, damping=c)
    for _ in range(int(10 / H)):
        world.step(H)
    offset = quat_to_matrix(world.state.quat[0]) @ anchor
    assert np.allclose(world.state.pos[0] + offset, target + [0.0, -2.0 * 9.81 / k, 0.0], atol=1e-4)
    assert np.allclose(offset[[0, 2]], 0.0, atol=1e-3) and offset[1] > 0  # COM below the anchor
    world.clear_grab()
    world.step(H)
    assert world.state.vel[0, 1] < 0  # falls once released
    with pytest.raises(ValueError, match="no body with id"):
        world.set_grab(99, anchor, target, k, c)


def test_add_group_adds_bodies_and_joints_at_once_or_nothing():
    from physics.constraints.joint import WORLD, JointDef
    world = World(WorldDef(container_size=None))
    world.add_body(BodyDef(mass=1.0, principal_moments=[0.1] * 3, radius=0.1))
    bodies = [BodyDef(mass=1.0, principal_moments=[0.1] * 3, radius=0.1, position=[x, 1.0, 0])
              for x in (0.0, 1.0)]
    ids = world.add_group(bodies, [JointDef("ball", 1, 0, anchor=[0.5, 1.0, 0.0]),
                                   JointDef("hinge", 0, WORLD, anchor=[0, 2, 0], axis=[0, 0, 1])])
    assert ids == [1, 2] and world.count == 3
    assert [(d.first, d.second) for d in world.joints.defs.values()] == [(2, 1), (1, WORLD)]
    before = (world.count, len(world.joints.defs), world.state.pos.copy())
    with pytest.raises(ValueError, match="joint 2: a distance joint must start within"):
        world.add_group(bodies, [JointDef("ball", 1, 0, anchor=[0.5, 1.0, 0.0]),
                                 JointDef("distance", 0, WORLD, anchor=[0.0, 5.0, 0.0],
                                          min_length=0.1, max_length=1.0)])
    with pytest.raises(ValueError, match="joint 1 names body 2, but the group has 2"):
        world.add_group(bodies, [JointDef("ball", 2, 0, anchor=[0.5, 1.0, 0.0])])
    assert (world.count, len(world.joints.defs)) == before[:2]
    np.testing.assert_array_equal(world.state.pos, before[2])
    assert world.add_body(bodies[0]) == 3  # no id was used up by the refused group


def batch_world(jointed: bool) -> World:
    """Every kind of step a world takes at once: a pile falling asleep on a static plate, a
    held force and the grab, walls, and (jointed) a hinged link swinging into it."""
    from physics.constraints.joint import WORLD, JointDef
    world = World(WorldDef(restitution=0.3))
    flat = [np.cos(np.pi / 4), np.sin(np.pi / 4), 0.0, 0.0]  # its thin z side up
    world.add_body(box_body((1.2, 1.2, 0.05), position=[0.0, 0.3, 0.0], orientation=flat,
                            static=True))
    for k in range(6):
        world.add_body(box_body((0.2, 0.15, 0.1), position=[0.05 * k, 0.5 + 0.2 * k, 0.0],
                                angular_velocity=[0.0, k, 0.0]))
    link = world.add_body(box_body((0.3, 0.05, 0.05), position=[0.9, 1.2, 0.0]))
    if jointed:
        world.add_joint(JointDef("hinge", link, WORLD, anchor=[0.75, 1.2, 0.0], axis=[0, 0, 1]))
    world.set_external_force(2, force=[0.5, 0.0, 0.0])
    world.set_grab(3, [0.05, 0.0, 0.0], [0.2, 1.5, 0.0], 50.0, 2.0)
    return world


@pytest.mark.parametrize("jointed", [False, True])
def test_advancing_in_batches_gives_the_bits_of_stepping_one_by_one(jointed):
    """A world without joints runs a batch as one compiled call (dynamics/batch.py), a world
    with joints step by step: either way the bits of single steps."""
    from tests.physics.world_compare import assert_same_world
    one_by_one, batched, whole = (batch_world(jointed) for _ in range(3))
    for _ in range(720):
        one_by_one.step(H)
    sizes = (1, 2, 3, 5, 7, 11, 13, 17, 19, 23, 619)  # batches of all sizes
    assert sum(sizes) == 720
    for size in sizes:
        batched.advance(H, size)
    whole.advance(H, 720)
    assert one_by_one.asleep().sum() >= 3  # the pile on the plate went to sleep on the way
    assert_same_world(batched, one_by_one)
    assert_same_world(whole, one_by_one)


@pytest.mark.parametrize("steps", [-1, 2.0, "3", None])
def test_advance_refuses_a_step_count_that_is_not_a_whole_number(steps):
    world = batch_world(jointed=False)
    before = world.state.pos.copy()
    with pytest.raises(ValueError, match="whole number of steps"):
        world.advance(H, steps)
    np.testing.assert_array_equal(world.state.pos, before)
    world.advance(H, 0)
    np.testing.assert_array_equal(world.state.pos, before)
