"""Contact impulses against the closed form of docs/physics.md#sequential-impulses and the impact
timing."""

import numpy as np
import pytest

from physics.collision.contact import Contacts, plane_tangents
from physics.dynamics.solver import Motion, impact_time, solve_contacts


def single_contact(point, normal, separation=0.0):
    normal = np.array([normal], dtype=float)
    t1, t2 = plane_tangents(normal)
    return Contacts(np.array([0]), np.array([0]), np.array([point], dtype=float), normal,
                    np.array([separation]), t1, t2)


@pytest.mark.parametrize("restitution", [0.0, 0.4, 1.0])
def test_one_point_impulse_matches_seed_001(restitution):
    """Q = −(1+e) v_n / (1/m + n·((I_w⁻¹ (r×n)) × r)) for one point hitting a wall."""
    mass, inv_iw = 2.0, np.diag([1 / 0.3, 1 / 0.5, 1 / 0.4])
    pos = np.zeros((1, 3))
    vel = np.array([[0.5, -3.0, 0.2]])
    omega = np.array([[1.0, 0.3, -2.0]])
    ang_mom = np.linalg.solve(inv_iw, omega[0])[None]
    r = np.array([0.2, -0.4, 0.1])
    n = np.array([0.0, 1.0, 0.0])
    vn = (vel[0] + np.cross(omega[0], r)) @ n
    expected = -(1 + restitution) * vn / (1 / mass + n @ np.cross(inv_iw @ np.cross(r, n), r))
    contacts = single_contact(r, n)
    motion = Motion(pos, vel, omega, np.zeros((1, 3)), np.array([1 / mass]), inv_iw[None])
    result = solve_contacts(contacts, motion, ang_mom, np.array([restitution]), np.array([0.0]),
                            np.zeros((1, 3)), 1e-3, 10, 0.2)
    assert result.impulses[0, 0] == pytest.approx(expected, rel=1e-12)
    vn_after = (vel[0] + np.cross(omega[0], r)) @ n
    assert vn_after == pytest.approx(-restitution * vn, abs=1e-12)
    assert np.allclose(
        ang_mom[0], np.linalg.solve(inv_iw, [1.0, 0.3, -2.0]) + np.cross(r, expected * n)
    )


def test_friction_impulse_stays_inside_the_coulomb_cone():
    pos, vel = np.zeros((1, 3)), np.array([[4.0, -1.0, 3.0]])
    omega, ang_mom = np.zeros((1, 3)), np.zeros((1, 3))
    contacts = single_contact([0.0, -0.1, 0.0], [0.0, 1.0, 0.0])
    motion = Motion(pos, vel, omega, np.zeros((1, 3)), np.array([1.0]), np.eye(3)[None] * 10)
    result = solve_contacts(contacts, motion, ang_mom, np.array([0.0]), np.array([0.3]),
                            np.zeros((1, 3)), 1e-3, 20, 0.2)
    normal, tangent = result.impulses[0, 0], np.hypot(*result.impulses[0, 1:])
    assert normal > 0 and tangent == pytest.approx(0.3 * normal, rel=1e-9)


def test_speculative_gap_lets_the_point_arrive_but_not_cross():
    h, gap = 1e-2, 0.01
    pos, vel = np.zeros((1, 3)), np.array([[0.0, -5.0, 0.0]])
    contacts = single_contact([0.0, -0.5, 0.0], [0.0, 1.0, 0.0], separation=gap)
    motion = Motion(pos, vel, np.zeros((1, 3)), np.zeros((1, 3)), np.array([1.0]),
                    np.eye(3)[None])
    solve_contacts(contacts, motion, np.zeros((1, 3)), np.array([0.0]), np.array([0.0]),
                   np.zeros((1, 3)), h, 10, 0.2)
    assert vel[0, 1] == pytest.approx(-gap / h, rel=1e-12)


def test_impact_time_solves_the_constant_acceleration_path():
    sep, v0, a, h = np.array([0.02, 0.0, 0.5, 0.01]), np.array([-3.0, -1.0, -1.0, 2.0]), -9.81, 0.01
    fraction, v_impact = np.array([impact_time(s, v, a, h) for s, v in zip(sep, v0)]).T
    t = fraction * h
    assert sep[0] + v0[0] * t[0] + 0.5 * a * t[0] ** 2 == pytest.approx(0.0, abs=1e-15)
    assert v_impact[0] == pytest.approx(v0[0] + a * t[0], rel=1e-12)
    assert fraction[1] == 0.0 and v_impact[1] == -1.0   # already touching
    assert fraction[2] > 1.0                             # too far to arrive this step
    assert fraction[3] > 1.0 or np.isinf(fraction[3])    # moving away


def test_box_landing_flat_on_four_corners_bounces_without_spin():
    """The restitution pass is swept to convergence: the four corner impulses come out equal to
    rounding, so a flat landing seeds no spin for later bounces to grow."""
    corners = np.array([[x, -0.4, z] for x in (-0.5, 0.5) for z in (-0.3, 0.3)])
    normal = np.tile([0.0, 1.0, 0.0], (4, 1))
    t1, t2 = plane_tangents(normal)
    contacts = Contacts(np.zeros(4, dtype=np.int64), np.arange(4), corners, normal,
                        np.zeros(4), t1, t2)
    inv_iw = np.diag(1.0 / np.array([0.8**2 + 0.6**2, 1.0 + 0.6**2, 1.0 + 0.8**2]) * 12.0)
    vel, omega, ang_mom = np.array([[0.0, -6.0, 0.0]]), np.zeros((1, 3)), np.zeros((1, 3))
    motion = Motion(np.zeros((1, 3)), vel, omega, np.zeros((1, 3)), np.array([1.0]),
                    inv_iw[None])
    result = solve_contacts(contacts, motion, ang_mom, np.ones(4), np.zeros(4), np.zeros((4, 3)),
                            1.0 / 240.0, 10, 0.2)
    assert vel[0, 1] == pytest.approx(6.0, rel=1e-12)
    assert np.abs(omega).max() < 1e-12 and np.abs(ang_mom).max() < 1e-12
    assert np.ptp(result.impulses[:, 0]) < 1e-12


def test_pair_impulses_conserve_linear_and_angular_momentum():
    """Two bodies meeting at three points with friction: whatever the solver does, it moves
    momentum from one body to the other, and each body's L changes by Σ r × P of its impulses."""
    rng = np.random.default_rng(5)
    pos = np.array([[0.0, 0.0, 0.0], [0.3, 0.9, -0.1]])
    mass = np.array([2.0, 3.0])
    rot = np.linalg.qr(rng.normal(size=(2, 3, 3)))[0]
    inv_moments = np.array([[4.0, 2.0, 1.0], [3.0, 2.5, 1.5]])
    inv_iw = rot @ (inv_moments[:, :, None] * rot.transpose(0, 2, 1))
    vel = np.array([[0.1, 2.0, -0.3], [0.2, -1.5, 0.4]])
    omega = np.array([[1.0, -0.5, 2.0], [0.3, 0.2, -1.0]])
    ang_mom = np.linalg.solve(inv_iw, omega[:, :, None])[:, :, 0]
    normal = np.tile(-np.array([0.0, 1.0, 0.0]), (3, 1))  # from the second body into the first
    t1, t2 = plane_tangents(normal)
    point = np.array([[0.1, 0.45, 0.0], [-0.1, 0.45, 0.1], [0.2, 0.45, -0.1]])
    contacts = Contacts(np.zeros(3, dtype=np.int64), np.arange(3), point, normal, np.zeros(3),
                        t1, t2, np.ones(3, dtype=np.int64))
    momentum = mass @ vel
    about_origin = ang_mom.sum(axis=0) + np.cross(pos, mass[:, None] * vel).sum(axis=0)
    motion = Motion(pos, vel, omega, np.zeros((2, 3)), 1.0 / mass, inv_iw)
    solve_contacts(contacts, motion, ang_mom, np.full(3, 0.5), np.full(3, 0.6), np.zeros((3, 3)),
                   1.0 / 240.0, 10, 0.2)
    assert np.allclose(mass @ vel, momentum, rtol=0, atol=1e-12)
    after = ang_mom.sum(axis=0) + np.cross(pos, mass[:, None] * vel).sum(axis=0)
    assert np.allclose(after, about_origin, rtol=0, atol=1e-12)
    # ω and L stay consistent: ω = I_w⁻¹ L for both bodies
    assert np.allclose(omega, (inv_iw @ ang_mom[:, :, None])[:, :, 0], rtol=0, atol=1e-12)


def random_body_contacts(n=300, k=1500, seed=2):
    """k contacts between random pairs of n bodies spread along x, mostly near neighbours
    (no walls)."""
    rng = np.random.default_rng(seed)
    pos = np.column_stack((np.linspace(-3, 3, n), rng.uniform(-0.2, 0.2, (n, 2))))
    first = rng.integers(0, n - 1, k)
    second = np.minimum(first + rng.integers(1, 4, k), n - 1)  # mostly neighbours along x
    far = rng.random(k) < 0.05  # and a few across the scene (the leftover group's)
    second = np.where(far, rng.integers(0, n, k), second)
    second = np.where(second == first, (first + 1) % n, second)
    normal = rng.normal(size=(k, 3))
    normal /= np.linalg.norm(normal, axis=1, keepdims=True)
    t1, t2 = plane_tangents(normal)
    point = 0.5 * (pos[first] + pos[second]) + rng.uniform(-0.05, 0.05, (k, 3))
    contacts = Contacts(first, np.arange(k), point, normal, rng.uniform(-0.01, 0.002, k), t1, t2,
                        second)
    return contacts, pos, rng


def test_sweep_groups_keep_bodies_of_side_by_side_groups_apart():
    from physics.dynamics.solver import SWEEP_SLABS, sweep_groups

    contacts, pos, _ = random_body_contacts()
    order, starts = sweep_groups(contacts.body, contacts.other, pos)
    assert sorted(order.tolist()) == list(range(contacts.count))  # every contact once
    groups = [order[starts[g]:starts[g + 1]] for g in range(SWEEP_SLABS + 1)]
    assert all(np.all(np.diff(g) > 0) for g in groups)  # in their own order within a group
    touched = [set(contacts.body[g]) | set(contacts.other[g]) for g in groups]
    for g in range(SWEEP_SLABS - 2):
        assert not touched[g] & touched[g + 2]
    assert min(len(g) for g in groups[:SWEEP_SLABS]) > 0.1 * contacts.count
    assert 0 < len(groups[SWEEP_SLABS]) < 0.1 * contacts.count


def test_many_contacts_swept_on_threads_conserve_momentum():
    """Above PARALLEL_MIN_CONTACTS the sweeps run in slab groups; every impulse is still equal
    and opposite, so linear and angular momentum (about the origin) are conserved: the orbital
    part about each body's centre when its impulses act, the impact for a body that bounced
    (docs/physics.md#angular-momentum-of-impacts)."""
    from physics.dynamics.solver import PARALLEL_MIN_CONTACTS

    contacts, pos, rng = random_body_contacts()
    assert contacts.count >= PARALLEL_MIN_CONTACTS
    n = len(pos)
    mass = rng.uniform(0.5, 3.0, n)
    inv_iw = np.array([np.diag(1 / rng.uniform(0.01, 0.1, 3)) for _ in range(n)])
    vel = rng.uniform(-2, 2, (n, 3))
    omega = rng.uniform(-3, 3, (n, 3))
    ang_mom = np.linalg.solve(inv_iw, omega[..., None])[..., 0]

    def momenta(centre):
        return mass @ vel, (ang_mom + np.cross(centre, mass[:, None] * vel)).sum(axis=0)

    start_vel = vel.copy()
    p0, l0 = momenta(pos)
    k = contacts.count
    motion = Motion(pos, vel, omega, np.zeros((n, 3)), 1.0 / mass, inv_iw)
    result = solve_contacts(contacts, motion, ang_mom, np.full(k, 0.3), np.full(k, 0.5),
                            np.zeros((k, 3)), 1 / 240, 10, 0.2)
    assert result.loaded.sum() > 100  # the impulses did something
    bounced = result.impact_fraction < 1.0
    assert bounced.sum() > 10
    impact = np.where(bounced, result.impact_fraction, 0.0)[:, None] / 240
    p1, l1 = momenta(pos + impact * start_vel)  # (x + τh v₀) × m v₀ = x × m v₀ before
    assert np.allclose(p1, p0, rtol=0, atol=1e-12 * np.abs(mass[:, None] * vel).sum())
    assert np.allclose(l1, l0, rtol=0, atol=1e-11 * (np.abs(ang_mom).sum() + np.abs(l0).sum()))


def test_rows_prepared_on_threads_are_the_ones_prepared_serially():
    """Every field of the solver's rows, wall and pair contacts alike (numba's parfor pass once
    dropped the flags' writes), and the packed rows in the order asked for (row i that of
    contact order[i]), the per-contact fields by contact."""
    from physics.dynamics.solver import (
        _AXES,
        _BIAS,
        _JAC,
        _MASS,
        _MU,
        _ROW,
        Motion,
        _prepare_parallel,
        _prepare_serial,
        contact_rows,
    )

    contacts, pos, rng = random_body_contacts()
    n, k = len(pos), contacts.count
    walls = rng.random(k) < 0.3
    contacts = contacts._replace(other=np.where(walls, -1, contacts.other))
    motion = Motion(pos, rng.normal(size=(n, 3)), rng.normal(size=(n, 3)),
                    rng.normal(size=(n, 3)), rng.uniform(0.5, 2.0, n),
                    np.tile(np.eye(3), (n, 1, 1)) * rng.uniform(1.0, 5.0, (n, 1, 1)))
    restitution, friction = rng.uniform(0.0, 1.0, k), rng.uniform(0.0, 1.0, k)

    def rows():
        made = contact_rows(k)
        for field in made:
            field[:] = 0
        return made
    order = rng.permutation(k)
    serial = rows()  # records as plain tuples, as solve_contacts passes them
    _prepare_serial(order, tuple(contacts), restitution, friction, tuple(motion), 0.01, 0.1,
                    tuple(serial))
    assert serial.bounce.any() and serial.collide.any() and serial.target.any()
    threaded = rows()
    _prepare_parallel(order, tuple(contacts), restitution, friction, tuple(motion), 0.01, 0.1,
                      tuple(threaded))
    for field in serial._fields:
        assert np.array_equal(getattr(serial, field), getattr(threaded, field)), field
    in_order = rows()
    _prepare_serial(np.arange(k), tuple(contacts), restitution, friction, tuple(motion), 0.01,
                    0.1, tuple(in_order))
    for field in ("axes", "jac", "mass", "packed"):
        assert np.array_equal(getattr(serial, field), getattr(in_order, field)[order]), field
    for field in ("bounce", "collide", "target", "tau"):
        assert np.array_equal(getattr(serial, field), getattr(in_order, field)), field
    # each packed row holds what the sweeps read: the contact's axes, Jacobian block and masses
    # (the very arrays the other kernels read), its gap's bias and its friction
    packed = serial.packed
    assert packed.shape == (k, _ROW)
    assert np.array_equal(packed[:, _AXES:_JAC], serial.axes.reshape(k, 9))
    assert np.array_equal(packed[:, _JAC:_MASS], serial.jac.reshape(k, 36))
    assert np.array_equal(packed[:, _MASS:_BIAS], serial.mass)
    for view in (serial.axes, serial.jac, serial.mass):
        assert np.shares_memory(view, packed)
    assert np.array_equal(packed[:, _BIAS], np.maximum(contacts.separation[order], 0.0) / 0.01)
    assert np.array_equal(packed[:, _MU], friction[order])


def test_no_contact_changes_no_velocity_and_touches_nobody():
    """The solve of an empty contact list (free flight: most steps of a thrown body) leaves
    every velocity and angular momentum as the forces left them, and reports nobody touched."""
    rng = np.random.default_rng(2)
    n = 3
    vel, omega, ang_mom = rng.normal(size=(n, 3)), rng.normal(size=(n, 3)), rng.normal(size=(n, 3))
    before = vel.copy(), omega.copy(), ang_mom.copy()
    none = single_contact([0.0, 0.0, 0.0], [0.0, 1.0, 0.0])
    none = Contacts(*(field[:0] for field in none))
    motion = Motion(rng.normal(size=(n, 3)), vel, omega, np.zeros((n, 3)), np.ones(n),
                    np.tile(np.eye(3), (n, 1, 1)))
    result = solve_contacts(none, motion, ang_mom, np.zeros(0), np.zeros(0), np.zeros((0, 3)),
                            1 / 240, 10, 0.2)
    for after, start in zip((vel, omega, ang_mom), before):
        np.testing.assert_array_equal(after, start)
    assert result.impulses.shape == (0, 3) and len(result.loaded) == len(result.acted) == 0
    assert not result.touched.any() and not result.walled.any()
    np.testing.assert_array_equal(result.impact_fraction, np.ones(n))
