"""The compiled stages after the contacts (dynamics/advance.py) give the bits the stage-by-stage
functions give, from Python and from compiled code."""

import copy

import numpy as np
import pytest
from numba import njit

from physics.collision.contact import Contacts
from physics.collision.walls import wall_clearance
from physics.dynamics.advance import (
    NO_GRAB,
    Forced,
    apply_forces,
    links,
    on_scenery,
)
from physics.dynamics.energy import free_flight_energy, remove_island_energy_gain
from physics.dynamics.integrator import drift, rotate_free, world_inverse_inertia, world_omega
from physics.dynamics.islands import island_labels, islands
from physics.dynamics.sleep import rest, wake_pressed
from physics.dynamics.solver import (
    PARALLEL_MIN_CONTACTS,
    Motion,
    _angular_impulse_kernel,
    _impact_kernel,
    _prepare_parallel,
    _prepare_serial,
    _restitution_kernel,
    _serial_sweeps,
    _slab_sweeps,
    _summary_kernel,
    contact_impulses,
    contact_materials,
    contact_rows,
    push_apart,
    solve_contacts,
    sweep_groups,
)
from physics.dynamics.stacks import solve_stacks
from physics.dynamics.warmstart import ContactCache, cache_of, cached_impulses
from physics.geometry.rotation import quat_to_matrix
from physics.model import BodyDef, WorldDef
from physics.settings import PENETRATION_SLOP, PUSH_ITERATIONS
from physics.world import World
from tests.physics.dynamics.test_solver import random_body_contacts

H = 1.0 / 240.0


def solve_stage_by_stage(contacts, motion, ang_mom, restitution, friction, warm, h, iterations,
                         threshold):
    """The contacts' solve as its kernels run one by one from Python. The records go in named,
    as ``contact_impulses`` passes them: as plain tuples they would be another signature of
    each kernel, compiled for this test alone (a minute in CI)."""
    k, n = contacts.count, len(motion.vel)
    rows = contact_rows(k)
    vel_forces = motion.vel.copy()
    many = k >= PARALLEL_MIN_CONTACTS
    # the rows in the sweeps' order: row i contact order[i], contact c's row slot[c]
    order, starts = (sweep_groups(contacts.body, contacts.other, motion.pos) if many
                     else (np.arange(k), None))
    slot = np.argsort(order)
    prepare = _prepare_parallel if many else _prepare_serial
    prepare(order, contacts, restitution, friction, motion, h, threshold, rows)
    collision, impulses = np.zeros(k), warm.copy()
    _impact_kernel(contacts, rows, slot, restitution, threshold, collision, motion, h,
                   iterations)
    solve_stacks(contacts, motion.inv_mass, rows.axes, rows.jac, slot, impulses, motion.vel,
                 motion.omega, h, 0, 3, 6)
    if many:
        _slab_sweeps(order, starts, contacts, rows, impulses, motion, iterations)
    else:
        _serial_sweeps(order, contacts, rows, impulses, motion, iterations)
    _restitution_kernel(contacts, rows, slot, impulses, collision, motion)
    flags = (np.empty(k, dtype=bool), np.empty(k, dtype=bool), np.zeros(n, dtype=bool),
             np.zeros(n, dtype=bool), np.ones(n))
    _summary_kernel(contacts.body, contacts.other, impulses, collision, rows.bounce, rows.tau,
                    *flags)
    _angular_impulse_kernel(contacts.body, contacts.other, contacts.point, rows.axes, slot,
                            impulses, collision, motion.pos, vel_forces, motion.accel, flags[4],
                            h, ang_mom)
    return (impulses, collision) + flags


def random_motion(n, rng):
    return Motion(rng.uniform(-3, 3, (n, 3)), rng.normal(size=(n, 3)), rng.normal(size=(n, 3)),
                  np.tile([0.0, -9.81, 0.0], (n, 1)), rng.uniform(0.2, 3.0, n),
                  np.tile(np.eye(3), (n, 1, 1)) * rng.uniform(1.0, 20.0, (n, 1, 1)))


@pytest.mark.parametrize("many", [False, True])
def test_contact_impulses_equal_the_solver_kernels_run_one_by_one(many):
    """On one thread and above PARALLEL_MIN_CONTACTS (slab sweeps), with walls, pairs of
    unequal masses (the exact stack solve) and a warm start: every output, bit for bit."""
    contacts, pos, rng = random_body_contacts(seed=5)
    if not many:
        contacts = Contacts(*(field[:200] for field in contacts))
    k, n = contacts.count, len(pos)
    contacts = contacts._replace(other=np.where(rng.random(k) < 0.3, -1, contacts.other))
    motion = random_motion(n, rng)._replace(pos=pos)
    motion.inv_mass[::7] *= 100.0  # light bodies among heavy ones
    ang_mom = rng.normal(size=(n, 3))
    restitution, friction = rng.uniform(0, 1, k), rng.uniform(0, 1, k)
    warm = np.abs(rng.normal(size=(k, 3))) * 0.01
    args = (restitution, friction, warm, H, 10, 0.5)
    expected_motion, expected_ang_mom = copy.deepcopy(motion), ang_mom.copy()
    expected = solve_stage_by_stage(contacts, expected_motion, expected_ang_mom, *args)
    result = solve_contacts(contacts, motion, ang_mom, *args)
    assert k >= PARALLEL_MIN_CONTACTS if many else k < PARALLEL_MIN_CONTACTS
    assert result.loaded.any() and result.collision.any() and not result.touched.all()
    for got, want in zip(result, expected):
        assert np.array_equal(got, want)
    for got, want in zip((motion.vel, motion.omega, ang_mom),
                         (expected_motion.vel, expected_motion.omega, expected_ang_mom)):
        assert np.array_equal(got, want)
    assert np.array_equal(warm, args[2])  # the warm start is read, not changed


def test_links_and_scenery_are_the_array_formulas():
    rng = np.random.default_rng(4)
    n, k = 40, 200
    static = rng.random(n) < 0.2
    first = rng.integers(0, n, k)
    second = np.where(rng.random(k) < 0.3, -1, rng.integers(0, n, k))
    cut = static[first] | (static[np.maximum(second, 0)] & (second >= 0))
    got_first, got_second = links(static, first, second)
    assert np.array_equal(got_first, first)
    assert np.array_equal(got_second, np.where(cut, -1, second))
    on = np.zeros(n, dtype=bool)
    on[first[(second >= 0) & static[np.maximum(second, 0)]]] = True
    on[np.maximum(second, 0)[static[first] & (second >= 0)]] = True
    assert np.array_equal(on_scenery(static, first, second), on)
    assert np.array_equal(islands(n, first, second), island_labels(n, first, second))


def stepped_world(seed, static_floor, container, sleeping):
    """Boxes dropped on one another, stepped a while: contacts of every kind, a warm start, and
    with ``sleeping`` some islands asleep; its ``WorldDef`` varies the materials."""
    rng = np.random.default_rng(seed)
    world = World(WorldDef(container_size=[1.0, 3.0, 1.0] if container else None,
                           restitution=0.3, friction=0.6, sleep=sleeping,
                           gravity=[0.0, -9.81, 0.0]))
    half = 0.05
    box = np.array([[x, y, z] for x in (-half, half) for y in (-half, half)
                    for z in (-half, half)])
    for i in range(24):
        q = rng.normal(size=4)
        world.add_body(BodyDef(mass=rng.uniform(0.5, 2.0), principal_moments=np.full(3, 0.002),
                               hull=box, position=[rng.uniform(-0.1, 0.1), 0.1 + 0.11 * i,
                                                   rng.uniform(-0.1, 0.1)],
                               orientation=q / np.linalg.norm(q),
                               velocity=0.3 * rng.normal(size=3),
                               restitution=0.8 if i % 5 else None))
    if static_floor or not container:
        plate = np.array([[x, y, z] for x in (-2.0, 2.0) for y in (-0.02, 0.02)
                          for z in (-2.0, 2.0)])
        world.add_body(BodyDef(mass=10.0, principal_moments=[1.0, 1.0, 2.0], hull=plate,
                               position=[0.0, 0.03, 0.0], static=True))
    world.set_external_force(world.ids[3], force=[0.5, 0.0, 0.0])
    for _ in range(960 if sleeping else 240):
        world.step(H)
    return world


def step_one(world):
    """Stage 1 (its bits: test_the_forces_are_those_of_the_array_formulas) and the contacts of
    a step of ``world`` as World.step makes them."""
    s, settings = world.state, world._step_settings()
    forced = apply_forces(world.model.body_model, settings.gravity, world._start(), s.force,
                          s.torque, NO_GRAB, H)
    contacts = world._find_contacts(forced.rotm, forced.vel, forced.omega, settings.planes,
                                    forced.awake, H)
    return forced, contacts


def advance_stage_by_stage(world, contacts, forced):
    """Stages 3–7 as World.step ran them before they were compiled: each stage's function from
    Python, the glue between them in numpy. Edits world.state's asleep and slow_time; returns
    pos, quat, vel, ang_mom, the cache, the pairs and acted."""
    m, s = world.model, world.state
    static, planes = m.static, m.wall_planes()
    vel, ang_mom, omega = forced.vel, forced.ang_mom, forced.omega
    vel_free, ang_mom_free = vel.copy(), ang_mom.copy()
    inv_iw = world_inverse_inertia(forced.rotm,
                                   np.where(forced.awake[:, None], m.inv_inertia, 0.0))
    e, mu = contact_materials(contacts, m.effective_restitution(), m.effective_friction())
    result = solve_contacts(contacts, Motion(s.pos, vel, omega, forced.accel, forced.inv_mass,
                                             inv_iw), ang_mom, e, mu,
                            s.carried.cache.impulses_of(contacts.key), H,
                            m.settings.solver_iterations, m.settings.restitution_threshold)
    pos = drift(s.pos, s.vel, vel, forced.accel, result.touched, result.impact_fraction, H)
    quat = rotate_free(s.quat, ang_mom, m.inv_inertia, H)
    rotm_end = quat_to_matrix(quat)

    def cut(first, second):
        if len(first) == 0 or not static.any():
            return first, second
        gone = static[first] | (static[np.maximum(second, 0)] & (second >= 0))
        return first, np.where(gone, -1, second)

    acted = result.acted
    island = island_labels(m.count, *cut(contacts.body[acted], contacts.other[acted]))
    if contacts.count:
        shift = push_apart(contacts, s.pos, vel, omega, forced.inv_mass, ang_mom, H,
                           PENETRATION_SLOP, PUSH_ITERATIONS)
        pos = pos + shift
        pushed = np.any(shift != 0.0, axis=1)
        projected = pos
        if len(planes):
            clearance = wall_clearance(pos, rotm_end, m.radius, m.bound_radius, m.hull_points,
                                       m.hull_start, planes, cutoff=0.0)
            depth = np.maximum(-clearance - PENETRATION_SLOP, 0.0)
            depth[static] = 0.0
            projected = pos + depth @ planes[:, :3]
        lifted = np.any(projected != pos, axis=1)
        pos = projected
        rows = np.flatnonzero(result.touched | lifted | pushed)
        guarded = island
        if pushed.any():
            other = np.maximum(contacts.other, 0)
            linked = acted | ((contacts.other >= 0) & (pushed[contacts.body] | pushed[other]))
            guarded = island_labels(m.count, *cut(contacts.body[linked], contacts.other[linked]))
        allowed = free_flight_energy(m.mass, s.pos, s.vel, vel_free, s.quat, ang_mom_free,
                                     m.inv_inertia, m.settings.gravity, rows, H)
        walled = result.walled | lifted | s.asleep
        if static.any():
            first, second = contacts.body[acted], contacts.other[acted]
            on = np.zeros(m.count, dtype=bool)
            on[first[(second >= 0) & static[np.maximum(second, 0)]]] = True
            on[np.maximum(second, 0)[static[first] & (second >= 0)]] = True
            walled = walled | on
        remove_island_energy_gain(allowed, m.mass, vel, quat, ang_mom, m.inv_inertia, pos,
                                  m.settings.gravity, rows, guarded[rows], walled[rows])
    pos[static], quat[static] = s.pos[static], s.quat[static]
    vel[static], ang_mom[static] = 0.0, 0.0
    wake_pressed(contacts.body, contacts.other, acted, s.asleep, s.slow_time)
    _, other = cut(contacts.body, contacts.other)
    pressed = acted & (other >= 0)
    first, second = m.ids[contacts.body[pressed]], m.ids[contacts.other[pressed]]
    sleeping = np.zeros(world._next_id, dtype=bool)
    sleeping[m.ids[s.asleep]] = True
    before_a, before_b = s.carried.pairs
    kept = sleeping[before_a] & sleeping[before_b]
    pairs = (np.concatenate((before_a[kept], first)), np.concatenate((before_b[kept], second)))
    loaded = static | np.any(forced.force != 0.0, axis=1) | np.any(forced.torque != 0.0, axis=1)
    rest(vel, ang_mom, world_omega(rotm_end, m.inv_inertia, ang_mom), loaded, island, s.asleep,
         s.slow_time, H, m.settings.sleep)
    cache = ContactCache.of(contacts.key, result.impulses, result.loaded)
    return pos, quat, vel, ang_mom, cache, pairs, acted


@pytest.mark.parametrize("seed, static_floor, container, sleeping", [
    (1, False, True, False), (2, True, True, False), (3, True, False, False),
    (4, False, True, True), (5, True, True, True)])
def test_a_batched_step_gives_the_bits_of_the_stages_run_one_by_one(seed, static_floor,
                                                                   container, sleeping):
    """The batch runs stages 3–7 in one compiled call with the records named
    (``advance_into``, dynamics/batch.py): the step it takes ends where the stage-by-stage
    functions from Python end, bit for bit, asleep or not, with walls or without."""
    world = stepped_world(seed, static_floor, container, sleeping)
    batched = copy.deepcopy(world)
    forced, contacts = step_one(world)
    expected = advance_stage_by_stage(world, contacts, copy.deepcopy(forced))
    batched.step(H)
    s = batched.state
    kept = s.carried.values()
    acted = kept["acted"]
    assert contacts.count >= 6 and acted.any()
    assert s.asleep.any() == sleeping
    for got, want in zip((s.pos, s.quat, s.vel, s.ang_mom), expected[:4]):
        assert got.tobytes() == want.tobytes()
    for got, want in zip(kept["cache"], expected[4]):
        assert np.array_equal(got, want)
    for got, want in zip(kept["pairs"] + (acted,), expected[5] + (expected[6],)):
        assert np.array_equal(got, want)
    assert np.array_equal(s.asleep, world.state.asleep)
    assert np.array_equal(s.slow_time, world.state.slow_time)


@njit(cache=True)
def _cache_round_trip(keys, impulses, keep):
    return cached_impulses(cache_of(keys, impulses, keep), keys)


def test_the_warm_start_keeps_the_impulses_of_the_contacts_it_keeps():
    keys = np.arange(40, dtype=np.int64) * 7
    impulses = np.random.default_rng(0).normal(size=(len(keys), 3))
    keep = np.arange(len(keys)) % 3 != 0
    assert np.array_equal(_cache_round_trip(keys, impulses, keep),
                          np.where(keep[:, None], impulses, 0.0))


def test_contact_impulses_from_python_takes_plain_tuples_and_returns_the_result_record():
    contacts, pos, rng = random_body_contacts(n=30, k=60, seed=3)
    motion = random_motion(len(pos), rng)._replace(pos=pos)
    k = contacts.count
    result = contact_impulses(tuple(contacts), tuple(motion), np.zeros((len(pos), 3)),
                              np.full(k, 0.5), np.full(k, 0.5), np.zeros((k, 3)), H, 10, 0.5)
    assert type(result).__name__ == "ContactResult" and result.acted.any()


def forces_stage_by_stage(world, grab):
    """Stage 1 as World.step ran it before it was compiled, the grab as (row, anchor, target,
    stiffness, damping) or None."""
    from physics.settings import GRAB_MIN_ARM

    m, s = world.model, world.state
    rotm = quat_to_matrix(s.quat)
    force, torque = s.force, s.torque
    if grab is not None:
        row, anchor, target, stiffness, damping = grab
        offset = rotm[row] @ anchor
        omega = world_omega(rotm[row:row + 1], m.inv_inertia[row:row + 1],
                            s.ang_mom[row:row + 1])[0]
        anchor_vel = s.vel[row] + np.cross(omega, offset)
        pull = stiffness * (target - (s.pos[row] + offset)) - damping * anchor_vel
        spin_damping = damping * (offset @ offset + GRAB_MIN_ARM**2)
        force, torque = s.force.copy(), s.torque.copy()
        force[row] += pull
        torque[row] += np.cross(offset, pull) - spin_damping * omega
    held = s.asleep | m.static
    awake = ~held
    accel = np.where(awake[:, None], m.settings.gravity + force * m.inv_mass[:, None], 0.0)
    inv_mass = np.where(awake, m.inv_mass, 0.0)
    vel = s.vel + accel * H
    ang_mom = s.ang_mom + np.where(awake[:, None], torque, 0.0) * H
    omega = world_omega(rotm, m.inv_inertia, ang_mom)
    return Forced(vel, ang_mom, omega, accel, inv_mass, awake, rotm, force, torque)


@pytest.mark.parametrize("grabbed", [False, True])
def test_the_forces_are_those_of_the_array_formulas(grabbed):
    """Held loads, a static and sleeping bodies, and the grab's spring, bit for bit."""
    world = stepped_world(5, True, True, True)
    rng = np.random.default_rng(8)
    world.state.torque[2] = [0.1, -0.2, 0.3]
    grab = None
    if grabbed:
        grab = (4, rng.normal(size=3) * 0.05, rng.normal(size=3), 300.0, 7.0)
    expected = forces_stage_by_stage(world, grab)
    s = world.state
    forced = apply_forces(world.model.body_model, np.asarray(world.model.settings.gravity),
                          world._start(), s.force, s.torque, NO_GRAB if grab is None else grab,
                          H)
    assert s.asleep.any() and world.model.static.any() and s.force.any()
    for field, got, want in zip(Forced._fields, forced, expected):
        assert np.array_equal(got, want), field
