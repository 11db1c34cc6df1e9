"""Bodies colliding with each other through ``World.step`` (the scenarios bodies must handle):
analytic answers for spheres, conservation laws, stacks that stand and rest, no tunnelling."""


import numpy as np
import pytest

from physics.model import BodyDef, WorldDef
from physics.world import World
from tests.paths import REPO
from tests.physics.bodies import box_body

MESHES = REPO / "assets" / "meshes"

H = 1.0 / 240.0


def ball(position, velocity=(0.0, 0.0, 0.0), radius=0.1, mass=1.0, **kwargs) -> BodyDef:
    moment = 0.4 * mass * radius**2
    return BodyDef(mass=mass, principal_moments=[moment] * 3, radius=radius, position=position,
                   velocity=velocity, **kwargs)


def space(restitution, friction=0.0) -> World:
    """No gravity, no walls: only the bodies act on each other."""
    return World(WorldDef(gravity=[0.0, 0.0, 0.0], container_size=None, restitution=restitution,
                          friction=friction))


def run_conserving_momentum(world, steps):
    """Step, checking the total linear momentum against its start every step (to 1e-12)."""
    start = world.linear_momentum().sum(axis=0)
    for _ in range(steps):
        world.step(H)
        assert np.allclose(world.linear_momentum().sum(axis=0), start, rtol=0, atol=1e-12)


@pytest.mark.parametrize("offset", [0.0, 0.37])
def test_equal_spheres_head_on_elastic_exchange_velocities(offset):
    world = space(restitution=1.0)
    world.add_body(ball([-0.5 + offset, 0.0, 0.0], velocity=[2.0, 0.0, 0.0]))
    world.add_body(ball([0.5, 0.0, 0.0], velocity=[-0.5, 0.0, 0.0]))
    run_conserving_momentum(world, 240)
    assert np.allclose(world.state.vel, [[-0.5, 0, 0], [2.0, 0, 0]], rtol=0, atol=1e-9)
    assert world.state.pos[1, 0] - world.state.pos[0, 0] > 0.2


def test_equal_spheres_head_on_inelastic_move_together():
    world = space(restitution=0.0)
    world.add_body(ball([-0.5, 0.0, 0.0], velocity=[2.0, 0.0, 0.0]))
    world.add_body(ball([0.5, 0.0, 0.0], velocity=[-0.5, 0.0, 0.0]))
    run_conserving_momentum(world, 240)
    assert np.allclose(world.state.vel, [[0.75, 0, 0], [0.75, 0, 0]], rtol=0, atol=1e-9)
    assert 0.19 < world.state.pos[1, 0] - world.state.pos[0, 0] <= 0.2 + 1e-9


def test_newtons_cradle_passes_the_first_ball_speed_to_the_last():
    world = space(restitution=1.0)
    world.add_body(ball([-0.3, 0.0, 0.0], velocity=[1.0, 0.0, 0.0]))
    for i in range(4):
        world.add_body(ball([0.2 * i, 0.0, 0.0]))
    run_conserving_momentum(world, 240)
    vel = world.state.vel[:, 0]
    assert abs(vel[-1] - 1.0) < 0.01
    assert np.all(np.abs(vel[:-1]) < 0.01)
    assert world.kinetic_energy().sum() <= 0.5 + 1e-12


def settle(world, seconds):
    """Step for ``seconds``; return the largest total kinetic energy of the last second."""
    steps = int(round(seconds / H))
    last = []
    for k in range(steps):
        world.step(H)
        assert np.all(np.isfinite(world.state.pos))
        if k >= steps - 240:
            last.append(world.kinetic_energy().sum())
    return max(last)


CUBE = 0.2


def cube(position, **kwargs) -> BodyDef:
    return box_body(size=(CUBE, CUBE, CUBE), mass=1.0, position=position, **kwargs)


def test_tower_of_eight_boxes_stands_and_comes_to_rest():
    world = World(WorldDef())
    for i in range(8):
        world.add_body(cube([0.0, CUBE * (i + 0.5), 0.0]))
    top = world.state.pos[-1].copy()
    assert settle(world, 10.0) < 1e-6
    assert np.linalg.norm(world.state.pos[-1] - top) < 0.01
    assert np.all(np.abs(world.state.pos[:, [0, 2]]) < 0.01)
    assert world.asleep().all()


def test_pyramid_of_fifteen_boxes_stands_and_comes_to_rest():
    world = World(WorldDef())
    for row in range(5):
        for k in range(5 - row):
            x = (k - (4 - row) / 2) * (CUBE + 0.01)
            world.add_body(cube([x, CUBE * (row + 0.5), 0.0]))
    start = world.state.pos.copy()
    assert settle(world, 10.0) < 1e-6
    assert np.max(np.linalg.norm(world.state.pos - start, axis=1)) < 0.01
    assert world.asleep().all()


def test_box_thrown_at_40_m_per_s_does_not_pass_through_a_resting_box():
    world = World(WorldDef(container_size=[20.0, 3.0, 20.0]))
    target = world.add_body(cube([0.0, CUBE / 2, 0.0]))
    thrown = world.add_body(cube([-3.0, CUBE / 2 + 0.001, 0.0], velocity=[40.0, 0.0, 0.0]))
    for _ in range(60):
        world.step(H)
        a, b = world.state.pos[world.index_of(target)], world.state.pos[world.index_of(thrown)]
        assert b[0] < a[0]  # still on its own side
    # the hit moved the target: the impulse went through it, not around it
    assert world.state.pos[world.index_of(target), 0] > 0.5


def random_pile(count=200, seed=11) -> World:
    """``count`` bodies of every sample mesh and builtin shape, random orientations and spins,
    on a grid of drop points filling the lower half of the default 4 × 3 × 4 m container."""
    from physics.geometry.meshes import builtin_shape, load_shape
    from physics.geometry.rotation import quat_normalize

    meshes = sorted(MESHES.glob("*"))
    shapes = [load_shape(path) for path in meshes] + [
        builtin_shape("box", [0.2, 0.15, 0.1]), builtin_shape("sphere", [0.08]),
        builtin_shape("cylinder", [0.07, 0.2]), builtin_shape("t_handle", [0.6])]
    rng = np.random.default_rng(seed)
    world = World(WorldDef(restitution=0.5, friction=0.5))
    grid = [(x, y, z) for y in (0.3, 0.7, 1.1) for x in np.linspace(-1.6, 1.6, 9)
            for z in np.linspace(-1.6, 1.6, 9)]
    for k in range(count):
        shape = shapes[k % len(shapes)]
        world.add_body(shape.body_def(
            position=grid[k], orientation=quat_normalize(rng.normal(size=(1, 4)))[0],
            velocity=rng.uniform(-1, 1, 3), angular_velocity=rng.uniform(-3, 3, 3)))
    return world


def total_energy(world) -> float:
    return float(world.kinetic_energy().sum() + world.potential_energy().sum())


def test_two_hundred_random_bodies_pile_up_in_the_container_honestly():
    from physics.collision.broadphase import candidate_pairs
    from physics.collision.narrowphase import body_contacts
    from physics.geometry.rotation import quat_to_matrix

    world = random_pile()
    start = total_energy(world)
    half = world.model.settings.container_size / 2
    for _ in range(int(4.0 / H)):
        world.step(H)
        s = world.state
        assert np.all(np.isfinite(s.pos)) and np.all(np.isfinite(s.vel))
        assert np.all(np.isfinite(s.ang_mom)) and np.all(np.isfinite(s.quat))
        assert total_energy(world) <= start + 1e-9 * abs(start)
        inside = (np.abs(s.pos[:, [0, 2]]) < half[[0, 2]]) & (s.pos[:, [1]] > 0)
        assert np.all(inside)
        assert np.all(s.pos[:, 1] < world.model.settings.container_size[1])
    # settled: the deepest overlap between any two bodies, from the narrow phase
    s, m = world.state, world.model
    zero = np.zeros_like(s.pos)
    pairs = candidate_pairs(s.pos, m.bound_radius)
    found = body_contacts(pairs, s.pos, quat_to_matrix(s.quat), zero, zero, m, H)
    assert found.count > 100  # it is a pile
    assert found.separation.min() > -0.01
    assert world.kinetic_energy().sum() < 0.05 * start


def sleeping_tower(levels=4) -> World:
    world = World(WorldDef())
    for i in range(levels):
        world.add_body(cube([0.0, CUBE * (i + 0.5), 0.0]))
    for _ in range(int(2.0 / H)):
        world.step(H)
    assert world.asleep().all()
    return world


def test_a_world_without_sleep_keeps_the_resting_tower_simulated():
    """WorldDef(sleep=False): the tower that falls asleep within 2 s by default stays awake,
    at rest all the same (the benchmarks' --no-sleep, against engines that do not sleep)."""
    world = World(WorldDef(sleep=False))
    for i in range(4):
        world.add_body(cube([0.0, CUBE * (i + 0.5), 0.0]))
    for _ in range(int(3.0 / H)):
        world.step(H)
    assert not world.asleep().any()
    assert world.kinetic_energy().sum() < 1e-6
    with pytest.raises(ValueError, match="sleep"):
        WorldDef(sleep="no")


def test_a_sleeping_tower_is_not_simulated_but_stays_put():
    world = sleeping_tower()
    before = world.state.pos.copy()
    for _ in range(240):
        world.step(H)
    assert world.asleep().all() and np.array_equal(world.state.pos, before)
    assert np.all(world.state.vel == 0.0)


def test_a_box_dropped_on_a_sleeping_tower_wakes_it():
    world = sleeping_tower()
    world.add_body(cube([0.0, 1.5, 0.0], velocity=[0.0, -3.0, 0.0]))
    woke = False
    for _ in range(120):
        world.step(H)
        woke |= not world.asleep()[:4].any()
    assert woke
    # and the tower takes the blow and stands again, the new box on top
    for _ in range(int(3.0 / H)):
        world.step(H)
    assert np.all(np.abs(world.state.pos[:, [0, 2]]) < 0.02)
    assert np.isclose(world.state.pos[-1, 1], CUBE * 4.5, atol=0.01)


def test_a_strike_on_a_sleeping_row_passes_through_it_in_the_same_step():
    """Zero gravity, restitution 1: a ball strikes a row of three touching balls that have
    fallen asleep. The struck row wakes before the step is solved (not as a wall that bounces
    the ball back), so momentum is conserved through the strike and the far ball leaves with
    most of it, as in a Newton's cradle."""
    world = space(restitution=1.0)
    for k in range(3):
        world.add_body(ball([0.2001 * k, 0.0, 0.0]))
    for _ in range(int(1.0 / H)):
        world.step(H)
    assert world.asleep().all()
    world.add_body(ball([-0.5, 0.0, 0.0], velocity=[2.0, 0.0, 0.0]))
    run_conserving_momentum(world, int(0.5 / H))
    vx = world.state.vel[:, 0]
    assert vx[2] > 1.6 and abs(vx[3]) < 0.2  # not 2.0 back towards where it came from
    assert world.kinetic_energy().sum() <= 2.0 + 1e-9


def test_commands_wake_what_they_touch():
    world = sleeping_tower()
    top = int(world.ids[-1])
    world.apply_impulse(top, [0.5, 0.0, 0.0])
    assert not world.asleep()[-1] and world.asleep()[:-1].all()
    world.step(H)
    assert not world.asleep()[-2]  # the top pressed on the one below: it woke too
    world = sleeping_tower()
    world.remove_body(int(world.ids[0]))  # the bottom box: the one above must fall
    assert not world.asleep()[0]
    for _ in range(120):
        world.step(H)
    assert np.isclose(world.state.pos[0, 1], CUBE / 2, atol=0.005)
    for call in (lambda w, i: w.set_external_force(i, [1.0, 0, 0]),
                 lambda w, i: w.set_body_state(i, velocity=[0.0, 1.0, 0.0]),
                 lambda w, i: w.set_body_material(i, friction=0.2),
                 lambda w, i: w.set_grab(i, [0, 0, 0], [0, 2, 0], 50.0, 5.0)):
        world = sleeping_tower(2)
        call(world, int(world.ids[1]))
        assert world.asleep().tolist() == [True, False]
    world = sleeping_tower(2)
    world.set_gravity([0.0, -1.0, 0.0])
    assert not world.asleep().any()


def test_contact_points_for_the_gizmos_include_body_body_contacts():
    world = World(WorldDef())
    world.add_body(cube([0.0, CUBE / 2, 0.0]))
    world.add_body(cube([0.05, 1.5 * CUBE, 0.0]))
    world.step(H)
    points, normals = world.contact_points()
    between = np.isclose(points[:, 1], CUBE, atol=1e-3)
    assert np.count_nonzero(between) == 4 and np.count_nonzero(~between) == 4  # + the floor's
    assert np.allclose(np.abs(normals[between]), [0, 1, 0])
    assert np.allclose(np.sort(points[between, 0]), [-0.05, -0.05, 0.1, 0.1])


@pytest.mark.parametrize("restitution", [0.3, 0.8])
def test_a_box_landing_flat_on_another_collides_straight_without_spin(restitution):
    """The four corners of a flat landing take their impulses together: two equal boxes (free,
    no gravity) meet face to face and leave as two particles would, v' = ∓(1 ± e)/2·v, with
    no spin and no sideways motion (one corner after the other would tip them)."""
    world = World(WorldDef(container_size=None, gravity=[0.0, 0.0, 0.0],
                           restitution=restitution, friction=0.5))
    below = world.add_body(cube([0.0, 0.0, 0.0]))
    above = world.add_body(cube([0.0, CUBE + 0.004, 0.0], velocity=[0.0, -2.0, 0.0]))
    for _ in range(3):  # the 4 mm close within the first step
        world.step(H)
    vel, omega = world.state.vel, world.angular_velocity()
    rows = [world.index_of(below), world.index_of(above)]
    expected = [-(1 + restitution), -(1 - restitution)]  # × 2 m/s / 2
    assert np.allclose(vel[rows, 1], expected, rtol=0, atol=1e-9)
    assert np.abs(vel[:, [0, 2]]).max() < 1e-12
    assert np.abs(omega).max() < 1e-9


def test_bodies_added_beside_a_sleeping_tower_step_on():
    """A sleeping tower, a body added beside it (the strike check runs and finds nothing), then
    another thrown at the tower: it strikes, the tower wakes, the steps run (the check once kept
    its per-body array from an earlier step, one body short, and failed at the strike)."""
    world = sleeping_tower()
    world.add_body(cube([1.0, 0.2, 0.0]))
    world.step(H)
    world.add_body(cube([-0.5, CUBE * 0.5, 0.0], velocity=[4.0, 0.0, 0.0]))
    for _ in range(30):
        world.step(H)
    assert world.count == 6 and np.isfinite(world.state.pos).all()
    assert not world.asleep()[0]  # struck
