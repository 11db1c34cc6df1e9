"""Rotations (docs/physics.md#rotation-parameterizations): round trips, singular cases,
composition, slerp.

Rotations are compared up to the quaternion sign (q and −q are one rotation). scipy's
``Rotation`` serves as an independent reference for the conventions (scalar-last there).
"""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.spatial.transform import Rotation

from physics.geometry.rotation import (
    bryant_xyz_to_quat,
    crv_to_quat,
    euler_zxz_to_quat,
    matrix_to_quat,
    quat_cayley,
    quat_conj,
    quat_from_axis_angle,
    quat_from_rotvec,
    quat_mul,
    quat_normalize,
    quat_rotate,
    quat_slerp,
    quat_to_bryant_xyz,
    quat_to_crv,
    quat_to_euler_zxz,
    quat_to_matrix,
    quat_to_rodrigues,
    quat_to_rotvec,
    rodrigues_to_quat,
)

TOL = 1e-12
MANY = settings(max_examples=150, deadline=None)


# ---------------------------------------------------------------- strategies and helpers

def _unit(v):
    v = np.asarray(v, dtype=float)
    return v / np.linalg.norm(v)


axes = st.lists(st.floats(-1.0, 1.0), min_size=3, max_size=3).map(np.array).filter(
    lambda v: np.linalg.norm(v) > 0.1).map(_unit)
tiny = st.floats(-9.0, -3.0).map(lambda e: 10.0**e)  # 1e-9 .. 1e-3, spread over decades
any_angle = st.floats(0.0, np.pi)
near_zero = st.one_of(st.just(0.0), tiny)
near_pi = st.one_of(st.just(np.pi), tiny.map(lambda d: np.pi - d))


def axis_angle_quat(axis, angle):
    """Reference quaternion built directly from q = (cos θ/2, n sin θ/2)."""
    return np.concatenate(([np.cos(angle / 2)], np.sin(angle / 2) * axis))


def quats_with_angle(angles):
    return st.builds(axis_angle_quat, axes, angles)


generic_quats = st.lists(st.floats(-1.0, 1.0), min_size=4, max_size=4).map(np.array).filter(
    lambda q: np.linalg.norm(q) > 0.1).map(_unit)
half_turns = axes.map(lambda n: np.concatenate(([0.0], n)))  # θ = π exactly, w = 0
signs = st.sampled_from([1.0, -1.0])
# Every rotation kind, including θ in 1e-9..1e-3 and π − 1e-9..π, with either quaternion sign.
quats = st.builds(
    lambda q, s: s * q,
    st.one_of(generic_quats, quats_with_angle(any_angle), quats_with_angle(near_zero),
              quats_with_angle(near_pi), half_turns),
    signs,
)
angles = st.floats(-np.pi, np.pi)


def sign_distance(p, q):
    """Largest component difference between two quaternions, up to sign."""
    return min(np.max(np.abs(p - q)), np.max(np.abs(p + q)))


def assert_same_rotation(p, q, tol=TOL):
    assert sign_distance(np.asarray(p), np.asarray(q)) <= tol, (p, q)


def rotation_angle(p, q):
    """Angle (rad, [0, π]) of the rotation taking p to q."""
    d = quat_mul(quat_conj(p), q)
    return 2.0 * np.arctan2(np.linalg.norm(d[..., 1:], axis=-1), np.abs(d[..., 0]))


def wrapped(a):
    return (np.asarray(a) + np.pi) % (2 * np.pi) - np.pi


def scipy_rotation(q):
    return Rotation.from_quat(np.roll(q, -1, axis=-1))


def assert_valid_quat(q):
    assert np.all(np.isfinite(q))
    assert np.abs(np.linalg.norm(q, axis=-1) - 1.0).max() <= 1e-15 * 4


# ---------------------------------------------------------------- matrix

@MANY
@given(quats)
def test_quat_matrix_round_trip(q):
    r = quat_to_matrix(q)
    np.testing.assert_allclose(r.T @ r, np.eye(3), atol=1e-15 * 8)
    np.testing.assert_allclose(r, scipy_rotation(q).as_matrix(), atol=TOL)
    back = matrix_to_quat(r)
    assert back[0] >= 0.0
    assert_valid_quat(back)
    assert_same_rotation(back, q)
    np.testing.assert_allclose(quat_to_matrix(back), r, atol=TOL)


def test_matrix_to_quat_every_diagonal_branch():
    # Half turns about x, y, z and the identity each select a different largest S_ii.
    for q in ([1.0, 0, 0, 0], [0, 1.0, 0, 0], [0, 0, 1.0, 0], [0, 0, 0, 1.0]):
        np.testing.assert_array_equal(matrix_to_quat(quat_to_matrix(np.array(q))), q)
    r = np.array([[0.0, -1.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, 1.0]])  # +90° about z
    np.testing.assert_allclose(matrix_to_quat(r), [np.sqrt(0.5), 0, 0, np.sqrt(0.5)], atol=1e-16)


def test_matrix_to_quat_rejects_non_rotations():
    with pytest.raises(ValueError, match="not a rotation"):
        matrix_to_quat(np.diag([1.0, 1.0, -1.0]))
    with pytest.raises(ValueError, match="not a rotation"):
        matrix_to_quat(2.0 * np.eye(3))
    with pytest.raises(ValueError, match=r"\(\.\.\., 3, 3\)"):
        matrix_to_quat(np.eye(4))
    with pytest.raises(ValueError, match="NaN"):
        matrix_to_quat(np.full((3, 3), np.nan))


# ---------------------------------------------------------------- rotation vector

@MANY
@given(quats)
def test_quat_rotvec_round_trip(q):
    v = quat_to_rotvec(q)
    assert np.linalg.norm(v) <= np.pi + 1e-15
    if abs(q[0]) > 1e-6:  # at θ = π the two vectors ±nπ are equally right
        np.testing.assert_allclose(v, scipy_rotation(q).as_rotvec(), atol=TOL)
    assert_same_rotation(quat_from_rotvec(v), q)


@MANY
@given(axes, st.one_of(any_angle, near_zero, near_pi))
def test_rotvec_quat_round_trip(axis, angle):
    v = angle * axis
    q = quat_from_rotvec(v)
    assert_valid_quat(q)
    assert_same_rotation(q, axis_angle_quat(axis, angle), tol=1e-15 * 2)
    back = quat_to_rotvec(q)
    if np.pi - angle < 1e-12 and back @ v < 0:  # ±nπ: one rotation, w rounds to either sign
        back = -back
    # Relative accuracy, so the small-angle series is really exercised (not just |v| < 1e-12).
    np.testing.assert_allclose(back, v, rtol=1e-14, atol=TOL)


@MANY
@given(axes, tiny)
def test_small_angle_series_is_exact(axis, angle):
    q = quat_from_rotvec(angle * axis)
    np.testing.assert_allclose(q[1:], np.sin(angle / 2) * axis, rtol=1e-15 * 4, atol=1e-300)
    np.testing.assert_allclose(quat_to_rotvec(q), angle * axis, rtol=1e-15 * 4, atol=1e-300)


def test_rotvec_identity_and_series_boundary():
    np.testing.assert_array_equal(quat_from_rotvec(np.zeros(3)), [1.0, 0, 0, 0])
    np.testing.assert_array_equal(quat_to_rotvec(np.array([1.0, 0, 0, 0])), np.zeros(3))
    axis = _unit([1.0, 2.0, 3.0])
    for angle in np.nextafter(1e-3, [0.0, 1.0]):  # both sides of the series switch
        np.testing.assert_allclose(quat_from_rotvec(angle * axis)[1:], np.sin(angle / 2) * axis,
                                   rtol=1e-15 * 2)


def test_rotvec_beyond_pi_is_the_same_rotation():
    axis = _unit([0.3, -0.2, 0.9])
    q = quat_from_rotvec(5.0 * axis)  # 5 rad ≡ −(2π − 5) about the axis
    np.testing.assert_allclose(quat_to_rotvec(q), -(2 * np.pi - 5.0) * axis, atol=TOL)
    assert_valid_quat(quat_from_rotvec(np.array([1e300, -1e300, 0.0])))


# ---------------------------------------------------------------- axis-angle

@given(axes, st.floats(-10.0, 10.0))
def test_axis_angle_matches_scipy(axis, angle):
    q = quat_from_axis_angle(3.0 * axis, angle)  # axis need not be unit
    np.testing.assert_allclose(quat_to_matrix(q), Rotation.from_rotvec(angle * axis).as_matrix(),
                               atol=TOL)


def test_axis_angle_quarter_turn_and_broadcasting():
    q = quat_from_axis_angle(np.array([0.0, 0.0, 1.0]), np.pi / 2)
    np.testing.assert_allclose(quat_rotate(q, [1.0, 0.0, 0.0]), [0.0, 1.0, 0.0], atol=1e-15)
    assert quat_from_axis_angle(np.ones((5, 3)), 0.3).shape == (5, 4)
    assert quat_from_axis_angle([1.0, 0.0, 0.0], np.ones((2, 6))).shape == (2, 6, 4)
    with pytest.raises(ValueError, match="zero-length axis"):
        quat_from_axis_angle(np.zeros(3), 1.0)


# ---------------------------------------------------------------- Rodrigues parameters

@MANY
@given(quats)
def test_quat_rodrigues_round_trip(q):
    r = quat_to_rodrigues(q)
    assert np.all(np.isfinite(r))
    assert_same_rotation(rodrigues_to_quat(r), q)


@MANY
@given(axes, st.one_of(any_angle.filter(lambda a: a < np.pi), near_zero,
                      tiny.map(lambda d: np.pi - d)))
def test_rodrigues_is_two_tan_half_angle(axis, angle):
    q = axis_angle_quat(axis, angle)
    r = quat_to_rodrigues(q)
    np.testing.assert_allclose(r, 2.0 * np.tan(angle / 2) * axis, rtol=1e-12, atol=TOL)
    np.testing.assert_allclose(quat_to_rodrigues(rodrigues_to_quat(r)), r, rtol=1e-12, atol=TOL)


def test_rodrigues_at_half_turn_is_finite_and_reproduces_it():
    for axis in (np.array([1.0, 0, 0]), _unit([1.0, -2.0, 0.5])):
        for q in (np.concatenate(([0.0], axis)), np.concatenate(([-0.0], -axis)),
                  quat_normalize(np.concatenate(([1e-30], axis)))):
            r = quat_to_rodrigues(q)
            assert np.all(np.isfinite(r)) and np.all(np.isfinite(r @ r))
            assert np.linalg.norm(r) > 1e17  # large, along the true axis (either sign is π)
            assert abs(abs(r @ axis) - np.linalg.norm(r)) <= 1e-12 * np.linalg.norm(r)
            back = rodrigues_to_quat(r)
            assert_valid_quat(back)
            assert_same_rotation(back, q)
            np.testing.assert_allclose(quat_to_matrix(back), quat_to_matrix(q), atol=TOL)


def test_rodrigues_to_quat_accepts_huge_vectors():
    q = rodrigues_to_quat(np.array([1e308, -1e308, 1e308]))
    assert_valid_quat(q)
    assert_same_rotation(q, [0.0, *_unit([1.0, -1.0, 1.0])])


# ---------------------------------------------------------------- conformal rotation vector

@MANY
@given(quats)
def test_quat_crv_round_trip(q):
    c = quat_to_crv(q)
    assert np.linalg.norm(c) <= 4.0 + 1e-14
    np.testing.assert_allclose(c, 4.0 * scipy_rotation(q).as_mrp(), atol=TOL)  # MRP = tan(θ/4)n
    assert_same_rotation(crv_to_quat(c), q)


@MANY
@given(axes, st.one_of(any_angle, near_zero, near_pi))
def test_crv_is_four_tan_quarter_angle(axis, angle):
    c = 4.0 * np.tan(angle / 4) * axis
    q = crv_to_quat(c)
    assert_same_rotation(q, axis_angle_quat(axis, angle))
    np.testing.assert_allclose(quat_to_crv(q), c, rtol=1e-13, atol=TOL)


@given(axes, st.one_of(st.floats(4.0, 1e6), st.floats(1e6, 1e300)))
def test_crv_to_quat_accepts_any_vector(axis, length):
    q = crv_to_quat(length * axis)  # |c| > 4: θ = 4 atan(|c|/4) ∈ (π, 2π)
    assert_valid_quat(q)
    assert_same_rotation(q, axis_angle_quat(axis, 4.0 * np.arctan(length / 4.0)), tol=1e-15 * 8)


# ---------------------------------------------------------------- Euler z-x-z

@MANY
@given(quats)
def test_quat_euler_zxz_round_trip(q):
    e = quat_to_euler_zxz(q)
    assert np.all(np.isfinite(e))
    assert -np.pi < e[0] <= np.pi and 0.0 <= e[1] <= np.pi and -np.pi < e[2] <= np.pi
    assert_same_rotation(euler_zxz_to_quat(e), q)


@MANY
@given(angles, st.one_of(st.floats(1e-3, np.pi - 1e-3), tiny.map(lambda d: np.pi - d), tiny),
       angles)
def test_euler_zxz_angles_round_trip(psi, theta, phi):
    e = np.array([psi, theta, phi])
    q = euler_zxz_to_quat(e)
    # z-x-z: R = R(Z,ψ) R(X,θ) R(Z,φ) — scipy's intrinsic "ZXZ".
    np.testing.assert_allclose(quat_to_matrix(q), Rotation.from_euler("ZXZ", e).as_matrix(),
                               atol=TOL)
    back = quat_to_euler_zxz(q)
    assert back[1] == pytest.approx(theta, abs=TOL)
    np.testing.assert_allclose(wrapped(back - e), 0.0, atol=1e-11 if theta < 1e-3 else TOL)


def test_euler_zxz_moving_axes():
    # θ about the x' axis that ψ has already turned: after ψ = 90° about z, x' is world y.
    q = euler_zxz_to_quat(np.array([np.pi / 2, np.pi / 2, 0.0]))
    np.testing.assert_allclose(quat_rotate(q, [0.0, 0.0, 1.0]), [1.0, 0.0, 0.0], atol=1e-15)


@given(angles, angles, st.sampled_from([0.0, np.pi]))
def test_euler_zxz_gimbal_lock(psi, phi, theta):
    q = euler_zxz_to_quat(np.array([psi, theta, phi]))
    for quat in (q, matrix_to_quat(quat_to_matrix(q))):  # exact and matrix-noise inputs
        e = quat_to_euler_zxz(quat)
        assert np.all(np.isfinite(e))
        assert e[2] == 0.0  # all of the rotation about z goes into ψ
        assert e[1] == pytest.approx(theta, abs=1e-13)
        assert_same_rotation(euler_zxz_to_quat(e), q)
        # Only ψ + φ (θ = 0) or ψ − φ (θ = π) is defined; that combination is kept.
        combined = psi + phi if theta == 0.0 else psi - phi
        assert wrapped(e[0] - combined) == pytest.approx(0.0, abs=TOL)


# ---------------------------------------------------------------- Bryant x-y-z

@MANY
@given(quats)
def test_quat_bryant_xyz_round_trip(q):
    b = quat_to_bryant_xyz(q)
    assert np.all(np.isfinite(b))
    assert -np.pi < b[0] <= np.pi and abs(b[1]) <= np.pi / 2 and -np.pi < b[2] <= np.pi
    assert_same_rotation(bryant_xyz_to_quat(b), q)


middle = st.one_of(st.floats(-np.pi / 2 + 1e-3, np.pi / 2 - 1e-3),
                   tiny.map(lambda d: np.pi / 2 - d), tiny.map(lambda d: d - np.pi / 2))


@MANY
@given(angles, middle, angles)
def test_bryant_xyz_angles_round_trip(phi, psi, theta):
    b = np.array([phi, psi, theta])
    q = bryant_xyz_to_quat(b)
    # Bryant x-y-z: R = R(Z,θ) R(Y,ψ) R(X,φ) — scipy's extrinsic "xyz" with (φ, ψ, θ).
    np.testing.assert_allclose(quat_to_matrix(q), Rotation.from_euler("xyz", b).as_matrix(),
                               atol=TOL)
    back = quat_to_bryant_xyz(q)
    assert back[1] == pytest.approx(psi, abs=TOL)
    if abs(psi) <= np.pi / 2 - 1e-3:  # near the lock φ, θ alone are ill-conditioned (~1e-16/cos ψ)
        np.testing.assert_allclose(wrapped(back - b), 0.0, atol=TOL)
    assert_same_rotation(bryant_xyz_to_quat(back), q)


def test_bryant_xyz_fixed_axes():
    # ψ about the fixed Y axis after φ about X: the body x axis ends at world −z for ψ = 90°.
    q = bryant_xyz_to_quat(np.array([np.pi / 2, np.pi / 2, 0.0]))
    np.testing.assert_allclose(quat_rotate(q, [1.0, 0.0, 0.0]), [0.0, 0.0, -1.0], atol=1e-15)
    np.testing.assert_allclose(quat_rotate(q, [0.0, 1.0, 0.0]), [1.0, 0.0, 0.0], atol=1e-15)


@given(angles, angles, st.sampled_from([np.pi / 2, -np.pi / 2]))
def test_bryant_xyz_gimbal_lock(phi, theta, psi):
    q = bryant_xyz_to_quat(np.array([phi, psi, theta]))
    for quat in (q, matrix_to_quat(quat_to_matrix(q))):
        b = quat_to_bryant_xyz(quat)
        assert np.all(np.isfinite(b))
        assert b[0] == 0.0  # all of the rotation goes into θ
        assert b[1] == pytest.approx(psi, abs=1e-13)
        assert_same_rotation(bryant_xyz_to_quat(b), q)
        combined = theta - phi if psi > 0 else theta + phi
        assert wrapped(b[2] - combined) == pytest.approx(0.0, abs=TOL)


# ---------------------------------------------------------------- algebra

@MANY
@given(quats, quats, st.lists(st.floats(-10, 10), min_size=3, max_size=3).map(np.array))
def test_composition_rotation_and_inverse(p, q, v):
    np.testing.assert_allclose(quat_to_matrix(quat_mul(p, q)),
                               quat_to_matrix(p) @ quat_to_matrix(q), atol=TOL)
    np.testing.assert_allclose(quat_rotate(q, v), quat_to_matrix(q) @ v, atol=TOL * 10)
    np.testing.assert_allclose(quat_mul(q, quat_conj(q)), [1.0, 0, 0, 0], atol=TOL)
    np.testing.assert_allclose(quat_mul(quat_conj(q), q), [1.0, 0, 0, 0], atol=TOL)
    np.testing.assert_allclose(quat_to_matrix(quat_conj(q)), quat_to_matrix(q).T, atol=TOL)
    np.testing.assert_allclose(quat_rotate(quat_conj(q), quat_rotate(q, v)), v, atol=TOL * 10)


def test_normalize_rejects_zero_and_bad_shapes():
    with pytest.raises(ValueError, match="zero quaternion"):
        quat_normalize(np.zeros(4))
    with pytest.raises(ValueError, match=r"shape \(\.\.\., 4\)"):
        quat_mul(np.ones(3), np.ones(4))
    with pytest.raises(ValueError, match="NaN"):
        quat_to_rotvec(np.array([np.nan, 0, 0, 1.0]))


@MANY
@given(axes, st.floats(1e-3, 0.1))
def test_cayley_is_unit_and_third_order(axis, theta):
    # A step of angle θ about n: cay(θn/2) rotates by 2 atan(θ/2) = θ − θ³/12 + θ⁵/80 − ...
    cay = quat_cayley(0.5 * theta * axis)
    assert abs(np.linalg.norm(cay) - 1.0) <= 1e-15 * 2
    exact = quat_from_rotvec(theta * axis)
    np.testing.assert_allclose(quat_to_rotvec(quat_mul(quat_conj(exact), cay)),
                               -(theta - 2 * np.arctan(theta / 2)) * axis, atol=1e-15 * 4)
    error = rotation_angle(exact, cay)
    assert error / (theta**3 / 12) == pytest.approx(1.0, abs=0.16 * theta**2)


# ---------------------------------------------------------------- slerp

@MANY
@given(quats, quats, st.floats(0.0, 1.0))
def test_slerp_endpoints_unit_and_constant_speed(q0, q1, t):
    assert_same_rotation(quat_slerp(q0, q1, 0.0), q0)
    assert_same_rotation(quat_slerp(q0, q1, 1.0), q1)
    qt = quat_slerp(q0, q1, t)
    assert_valid_quat(qt)
    total = rotation_angle(q0, q1)  # ∈ [0, π]: shortest path
    assert rotation_angle(q0, qt) == pytest.approx(t * total, abs=1e-11)
    assert rotation_angle(qt, q1) == pytest.approx((1 - t) * total, abs=1e-11)
    if abs(q0 @ q1) > 1e-9:  # at a half-turn apart both ways are equally short
        assert_same_rotation(quat_slerp(q0, -q1, t), qt)  # the sign of q1 does not matter


def test_slerp_takes_the_short_way_and_is_a_geodesic():
    q0 = np.array([1.0, 0, 0, 0])
    q1 = quat_from_axis_angle(np.array([0.0, 0.0, 1.0]), 1.5 * np.pi)  # = −π/2 about z
    mid = quat_slerp(q0, q1, 0.5)
    assert_same_rotation(mid, quat_from_axis_angle(np.array([0.0, 0.0, 1.0]), -np.pi / 4))


@given(quats, st.floats(-12.0, -6.0), st.floats(0.0, 1.0))
def test_slerp_nearly_identical(q0, log_angle, t):
    axis = _unit([0.2, -0.7, 0.4])
    step = 10.0**log_angle
    q1 = quat_mul(q0, quat_from_rotvec(step * axis))
    qt = quat_slerp(q0, q1, t)
    assert_valid_quat(qt)
    assert_same_rotation(qt, quat_mul(q0, quat_from_rotvec(t * step * axis)), tol=1e-15 * 4)
    np.testing.assert_allclose(quat_slerp(q0, q0, t), q0, rtol=0, atol=1e-15)


def test_slerp_broadcasts_t():
    q0 = np.array([1.0, 0, 0, 0])
    q1 = quat_from_axis_angle(np.array([[0.0, 0, 1], [1.0, 0, 0]]), 1.0)  # (2, 4)
    t = np.linspace(0.0, 1.0, 5)[:, None]  # (5, 1)
    qt = quat_slerp(q0, q1, t)
    assert qt.shape == (5, 2, 4)
    np.testing.assert_allclose(rotation_angle(q0, qt), np.broadcast_to(t, (5, 2)), atol=TOL)


# ---------------------------------------------------------------- vectorisation

RNG = np.random.default_rng(20261122)
BATCH_Q = quat_normalize(RNG.normal(size=(5, 7, 4)))
BATCH_Q[0, :3] = [[0.0, 1, 0, 0], [1.0, 0, 0, 0], [-0.0, 0, 0.6, 0.8]]  # singular cases mixed in
BATCH_V = RNG.normal(size=(5, 7, 3))
BATCH_V[1, :2] = 0.0
BATCH_ANGLES = RNG.uniform(-np.pi, np.pi, size=(5, 7, 3))
BATCH_ANGLES[2, 0, 1] = 0.0
BATCH_ANGLES[2, 1, 1] = np.pi / 2


@pytest.mark.parametrize("func, arg", [
    (quat_to_matrix, BATCH_Q), (matrix_to_quat, quat_to_matrix(BATCH_Q)),
    (quat_to_rotvec, BATCH_Q), (quat_from_rotvec, BATCH_V),
    (quat_to_rodrigues, BATCH_Q), (rodrigues_to_quat, BATCH_V),
    (quat_to_crv, BATCH_Q), (crv_to_quat, 3.0 * BATCH_V),
    (quat_to_euler_zxz, BATCH_Q), (euler_zxz_to_quat, BATCH_ANGLES),
    (quat_to_bryant_xyz, BATCH_Q), (bryant_xyz_to_quat, BATCH_ANGLES),
    (quat_normalize, 3.0 * BATCH_Q), (quat_conj, BATCH_Q), (quat_cayley, BATCH_V),
])
def test_unary_functions_are_vectorised(func, arg):
    batch = func(arg)
    for i in np.ndindex(5, 7):
        np.testing.assert_array_equal(batch[i], func(arg[i]))


@pytest.mark.parametrize("func, a, b", [
    (quat_mul, BATCH_Q, BATCH_Q[::-1]), (quat_rotate, BATCH_Q, BATCH_V),
    (quat_from_axis_angle, BATCH_V + 1.0, BATCH_ANGLES[..., 0]),
    (lambda p, q: quat_slerp(p, q, 0.3), BATCH_Q, BATCH_Q[:, ::-1]),
])
def test_binary_functions_are_vectorised(func, a, b):
    batch = func(a, b)
    for i in np.ndindex(5, 7):
        np.testing.assert_allclose(batch[i], func(a[i], b[i]), rtol=0, atol=1e-15)
