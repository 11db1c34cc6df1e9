"""The compiled tree projection against dense linear algebra on a chain, numpy's arithmetic bit
for bit, and callable from compiled code."""

import numpy as np

from physics.constraints.forest import (
    CLOSED,
    NOT_SOLVED,
    factor,
    fits,
    newton_forest,
    no_factors,
    spin_of,
    turn,
    velocities_forest,
)
from physics.constraints.joint import WORLD, JointDef
from physics.constraints.projection import all_rows
from physics.dynamics.integrator import rotate_free, world_inverse_inertia
from physics.geometry.rotation import quat_mul, quat_to_matrix
from physics.model import BodyDef, WorldDef
from physics.settings import JOINT_TOLERANCE
from physics.world import World

LINKS = 12


def _chain(closed=False):
    """A hanging chain of LINKS boxes on ball joints (closed: its last link joined to the
    first too, a loop), every pose then nudged off the joints by about a step's drift;
    returns the world."""
    world = World(WorldDef(container_size=None))
    half = np.array([0.05, 0.01, 0.01])
    hull = np.array([[x, y, z] for x in (-1, 1) for y in (-1, 1) for z in (-1, 1)]) * half
    previous = WORLD
    for k in range(LINKS):
        body = world.add_body(BodyDef(mass=0.1 + 0.01 * k, principal_moments=[2e-5, 9e-5, 9e-5],
                                      hull=hull, position=[(k + 0.5) * 0.1, 0.0, 0.0]))
        world.add_joint(JointDef("ball", body, previous, anchor=[k * 0.1, 0.0, 0.0]))
        previous = body
    if closed:
        world.add_joint(JointDef("ball", previous, world.ids[0], anchor=[0.05, 0.0, 0.0]))
    rng = np.random.default_rng(7)
    world.state.pos += rng.normal(scale=1e-4, size=world.state.pos.shape)
    turned = world.state.quat + rng.normal(scale=1e-3, size=world.state.quat.shape)
    world.state.quat = turned / np.linalg.norm(turned, axis=1, keepdims=True)
    world.state.vel = rng.normal(size=world.state.vel.shape)
    world.state.ang_mom = rng.normal(scale=1e-3, size=world.state.ang_mom.shape)
    return world


def _parts(world):
    """The joints (a named ``JointSet``; the compiled solves are given it as a plain tuple, as
    constraints/projection.py gives it, so the tests run the signature the warm-up compiled
    instead of compiling their own) and the bodies' arrays, copies."""
    m, s = world.model, world.state
    return (world.joints.arrays(m.ids), s.pos.copy(), s.quat.copy(), s.vel.copy(),
            s.ang_mom.copy(), m.inv_mass.copy(), m.inv_inertia.copy())


def _dense(jac, nblock, n):
    """The equality rows (R, 6n) as one dense matrix, with each row's (joint, row)."""
    rows, which = [], []
    for j in range(len(nblock)):
        for r in range(nblock[j]):
            row = np.zeros(6 * n)
            row[6 * j:6 * j + 6] = jac[j, r, 0:6]  # link j is body j, its parent body j − 1
            if j > 0:
                row[6 * (j - 1):6 * j] = jac[j, r, 6:12]
            rows.append(row)
            which.append((j, r))
    return np.array(rows), which


def _inverse_mass(inv_mass, inv_iw):
    n = len(inv_mass)
    out = np.zeros((6 * n, 6 * n))
    for i in range(n):
        out[6 * i:6 * i + 3, 6 * i:6 * i + 3] = inv_mass[i] * np.eye(3)
        out[6 * i + 3:6 * i + 6, 6 * i + 3:6 * i + 6] = inv_iw[i]
    return out


def test_newton_on_the_tree_closes_the_chain_as_dense_newton_steps_do():
    joints, pos, quat, vel, ang_mom, inv_mass, inv_inertia = _parts(_chain())
    n = len(pos)
    ref_pos, ref_quat = pos.copy(), quat.copy()
    for _ in range(8):  # full Newton steps, each on the dense J M⁻¹ Jᵀ
        jac, phi, _, nblock = all_rows(joints, ref_pos, ref_quat)
        present, which = _dense(jac, nblock, n)
        weights = _inverse_mass(inv_mass, world_inverse_inertia(quat_to_matrix(ref_quat),
                                                                inv_inertia))
        error = np.array([phi[j, r] for j, r in which])
        move = (weights @ present.T @ np.linalg.solve(present @ weights @ present.T,
                                                      -error)).reshape(n, 6)
        ref_pos += move[:, :3]
        turn(ref_quat, move[:, 3:])
    impulses = np.zeros((len(nblock), 9))
    status, _, jac, phi, _, nblock = newton_forest(
        tuple(joints), np.zeros((0, 9, 12)), False, False, quat, np.zeros((n, 3)), quat, quat,
        impulses, pos, quat, vel, ang_mom, inv_mass, inv_inertia, 1 / 240, no_factors())
    assert status == CLOSED
    assert np.abs(phi[:, :3]).max() < JOINT_TOLERANCE
    # the same first step; the chord steps after it take another path onto the joints, which
    # ends apart from full Newton's at second order in the drift (the centres within 1e-7 m
    # here; the turns, light about the links' long axes, within 2e-6)
    assert np.abs(pos - _parts(_chain())[1]).max() > 1e-5
    np.testing.assert_allclose(pos, ref_pos, rtol=0, atol=1e-6)
    np.testing.assert_allclose(quat, ref_quat, rtol=0, atol=1e-5)
    assert not impulses.any()  # no velocity change without the start rows


def test_a_loop_of_joints_is_left_to_the_sparse_solve_unchanged():
    joints, pos, quat, vel, ang_mom, inv_mass, inv_inertia = _parts(_chain(closed=True))
    n, before = len(pos), (pos.copy(), quat.copy())
    status, step, *_ = newton_forest(
        tuple(joints), np.zeros((0, 9, 12)), False, False, quat, np.zeros((n, 3)), quat, quat,
        np.zeros((LINKS + 1, 9)), pos, quat, vel, ang_mom, inv_mass, inv_inertia, 1 / 240,
        no_factors())
    assert (status, step) == (NOT_SOLVED, 0)
    np.testing.assert_array_equal(pos, before[0])
    np.testing.assert_array_equal(quat, before[1])


def _shake(joints, start_jac, start_quat, pos, vel, ang_mom, inv_mass, inv_inertia, chord):
    """newton_forest's SHAKE steps along start_jac, the bodies turned by the rotation step from
    start_quat with the L ang_mom takes on, on copies: (status, the end poses, the rows' Φ)."""
    h = 1 / 240
    pos, vel, moved = pos.copy(), vel.copy(), ang_mom.copy()
    free = rotate_free(start_quat, moved, inv_inertia, h)
    quat, later = free.copy(), np.tile([1.0, 0.0, 0.0, 0.0], (len(pos), 1))
    status, _, _, phi, _, _ = newton_forest(
        tuple(joints), start_jac, True, True, start_quat, moved, free, later, np.zeros((LINKS, 9)),
        pos, quat, vel, moved.copy(), inv_mass, inv_inertia, h, chord)
    return status, pos, quat, phi


def test_shake_steps_start_as_a_chord_on_the_velocity_systems_factors_where_they_fit():
    joints, start_pos, start_quat, vel, ang_mom, inv_mass, inv_inertia = _parts(_chain())
    start_jac, _, _, nblock = all_rows(joints, start_pos, start_quat)
    inv_iw = world_inverse_inertia(quat_to_matrix(start_quat), inv_inertia)
    made, chord = factor(joints.first, joints.second, nblock, start_jac, start_jac, inv_mass,
                         inv_iw, no_factors())
    assert made and fits(chord, joints.first, joints.second, nblock, inv_mass)
    # the end of a step's move: the centres drifted on from the start's, the bodies turned by
    # the rotation step
    pos = start_pos + np.random.default_rng(11).normal(scale=1e-4, size=start_pos.shape)
    parts = (joints, start_jac, start_quat, pos, vel, ang_mom, inv_mass, inv_inertia)
    fresh, chorded = _shake(*parts, no_factors()), _shake(*parts, chord)
    for status, _, _, phi in (fresh, chorded):
        assert status == CLOSED and np.abs(phi[:, :3]).max() < JOINT_TOLERANCE
    # another path onto the same joints: the same poses to the joints' tolerance, not the same
    # bits
    assert not np.array_equal(chorded[1], fresh[1])
    np.testing.assert_allclose(chorded[1], fresh[1], rtol=0, atol=1e-8)
    np.testing.assert_allclose(chorded[2], fresh[2], rtol=0, atol=1e-8)
    # factors made for other rows (the last joint slack, as a rope's) are not taken
    slack = nblock.copy()
    slack[-1] = 0
    other = factor(joints.first, joints.second, slack, start_jac, start_jac, inv_mass, inv_iw,
                   no_factors())[1]
    assert not fits(other, joints.first, joints.second, nblock, inv_mass)
    assert not fits(no_factors(), joints.first, joints.second, nblock, inv_mass)
    for got, expected in zip(_shake(*parts, other)[1:], fresh[1:]):
        np.testing.assert_array_equal(got, expected)


def test_velocities_on_the_tree_are_the_dense_mass_weighted_projection():
    joints, pos, quat, vel, ang_mom, inv_mass, inv_inertia = _parts(_chain())
    n = len(pos)
    rows = all_rows(joints, pos, quat)
    inv_iw = world_inverse_inertia(quat_to_matrix(quat), inv_inertia)
    present, which = _dense(rows[0], rows[3], n)
    weights = _inverse_mass(inv_mass, inv_iw)
    omega = np.einsum("nij,nj->ni", inv_iw, ang_mom)
    lam = np.linalg.solve(present @ weights @ present.T,
                          -present @ np.concatenate((vel, omega), axis=1).ravel())
    impulse = (present.T @ lam).reshape(n, 6)
    impulses = np.zeros((LINKS, 9))
    solved, factors = velocities_forest(tuple(joints), rows, impulses, vel, ang_mom, inv_mass,
                                        inv_iw, no_factors(), False)
    assert solved
    # the tree's system carries REGULARISATION × its largest diagonal: equal to ~1e-8 m/s
    np.testing.assert_allclose(vel, _parts(_chain())[3] + impulse[:, :3] * inv_mass[:, None],
                               rtol=0, atol=1e-8)
    np.testing.assert_allclose(impulses[:, :3], lam.reshape(LINKS, 3), rtol=0, atol=1e-8)
    rates = present @ np.concatenate((vel, spin_of(inv_iw, ang_mom)), axis=1).ravel()
    assert np.abs(rates).max() < 1e-9  # J v = 0
    # the factors handed back are those of the system: given again, they give its bits
    again = [array.copy() for array in (impulses, vel, ang_mom)]
    assert velocities_forest(tuple(joints), rows, *again, inv_mass, inv_iw, factors, True)[0]
    assert velocities_forest(tuple(joints), rows, impulses, vel, ang_mom, inv_mass, inv_iw,
                             no_factors(), False)[0]
    for array, fresh in zip(again, (impulses, vel, ang_mom)):
        np.testing.assert_array_equal(array, fresh)


def test_turn_and_spin_add_as_numpy_does():
    rng = np.random.default_rng(3)
    quat = rng.normal(size=(500, 4))
    quat /= np.linalg.norm(quat, axis=1, keepdims=True)
    dtheta = rng.normal(scale=1e-2, size=(500, 3))
    turned = quat.copy()
    turn(turned, dtheta)
    half = np.concatenate((np.zeros((500, 1)), 0.5 * dtheta), axis=1)
    expected = quat + quat_mul(half, quat)
    np.testing.assert_allclose(turned, expected / np.linalg.norm(expected, axis=1, keepdims=True),
                               rtol=0, atol=1e-15)
    matrices, momenta = rng.normal(size=(500, 3, 3)), rng.normal(size=(500, 3))
    np.testing.assert_array_equal(spin_of(matrices, momenta),
                                  np.einsum("nij,nj->ni", matrices, momenta))


def test_a_loop_of_joints_stepped_is_held_by_the_sparse_solve_the_tree_hands_over_to():
    world = _chain(closed=True)
    world.state.vel[:] = 0.0  # the nudged poses, at rest: gravity and the joints alone
    world.state.ang_mom[:] = 0.0
    for _ in range(120):
        world.step(1 / 240)
    # held well inside the 1 mm target (its links fold against each other: their contacts
    # join the sparse solve too)
    assert np.abs(world.joint_errors()).max() < 1e-4
    assert world.state.pos[:, 1].min() < -0.05  # it swung down, hanging from the world
