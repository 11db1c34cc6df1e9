"""Free motion: the rotation step of docs/physics.md#free-rotation against Landau–Lifshitz §37, and
the drift."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy.special import ellipk

from physics.dynamics.integrator import (
    angular_momentum,
    body_angular_velocity,
    drift,
    rotate_free,
    world_inverse_inertia,
    world_omega,
)
from physics.geometry.rotation import quat_mul, quat_normalize, quat_rotate, quat_to_matrix
from physics.model import BodyDef, WorldDef
from physics.world import World

H = 1.0 / 240.0


def flip_interval(moments, omega_body) -> float:
    """Time between sign changes of ω2 for I1 < I2 < I3 (Landau & Lifshitz §37): 2K(k)/λ."""
    i1, i2, i3 = moments
    energy = 0.5 * np.dot(moments, omega_body**2)
    m2 = np.sum((moments * omega_body) ** 2)
    if m2 < 2 * energy * i2:  # the other separatrix side: swap the roles of axes 1 and 3
        i1, i3 = i3, i1
    lam = np.sqrt((i3 - i2) * (m2 - 2 * energy * i1) / (i1 * i2 * i3))
    k2 = (i2 - i1) * (2 * energy * i3 - m2) / ((i3 - i2) * (m2 - 2 * energy * i1))
    return 2.0 * ellipk(k2) / lam


def sign_change_times(t, w):
    """Linearly interpolated times where w changes sign."""
    i = np.flatnonzero(np.sign(w[1:]) != np.sign(w[:-1]))
    return t[i] + (0.0 - w[i]) / (w[i + 1] - w[i]) * (t[i + 1] - t[i])


def test_elliptic_reference_value():
    assert flip_interval(np.array([1.0, 2.0, 3.0]), np.array([0.01, 5.0, 0.01])) == pytest.approx(
        5.025929138, abs=1e-9)


def run_torque_free(world: World, seconds: float):
    """Step a zero-gravity world; return times, ω_b history (steps, 3), energy and world L."""
    steps = int(round(seconds / H))
    t = np.empty(steps + 1)
    omega_body = np.empty((steps + 1, 3))
    t[0], omega_body[0] = 0.0, world.body_angular_velocity()[0]
    energy0, ang_mom0 = world.kinetic_energy()[0], world.state.ang_mom[0].copy()
    for i in range(1, steps + 1):
        world.step(H)
        t[i], omega_body[i] = world.state.time, world.body_angular_velocity()[0]
    return t, omega_body, energy0, ang_mom0


def test_dzhanibekov_flip_conserves_energy_and_momentum_exactly():
    """I = diag(1,2,3), ω_b0 = (0.01, 5, 0.01), h = 1/240, 60 s."""
    moments, omega0 = np.array([1.0, 2.0, 3.0]), np.array([0.01, 5.0, 0.01])
    world = World(WorldDef(gravity=[0, 0, 0], container_size=None))
    # body frame at an arbitrary orientation: the world ω is R ω_b
    q = quat_normalize(np.array([0.3, -0.5, 0.7, 0.2]))
    world.add_body(BodyDef(mass=1.0, principal_moments=moments, hull=np.zeros((1, 3)),
                           orientation=q, angular_velocity=quat_rotate(q, omega0)))
    t, omega_body, energy0, ang_mom0 = run_torque_free(world, 60.0)
    assert abs(world.kinetic_energy()[0] - energy0) / energy0 <= 1e-9
    assert np.linalg.norm(world.state.ang_mom[0] - ang_mom0) / np.linalg.norm(ang_mom0) <= 1e-9
    # the body-frame momentum is recomputed from the orientation: its length must hold too
    lb = moments * omega_body[-1]
    assert abs(np.linalg.norm(lb) - np.linalg.norm(ang_mom0)) / np.linalg.norm(ang_mom0) <= 1e-9
    flips = sign_change_times(t, omega_body[:, 1])
    assert len(flips) >= 10  # it really flips, many times
    assert np.mean(np.diff(flips)) == pytest.approx(flip_interval(moments, omega0), abs=1e-3)


def test_middle_axis_spin_reverses_within_one_flip_interval():
    """The explicit ω += I⁻¹τ dt would keep ω constant when τ = 0; the gyroscopic term reverses
    it."""
    moments, omega0 = np.array([1.0, 2.0, 3.0]), np.array([0.01, 5.0, 0.01])
    world = World(WorldDef(gravity=[0, 0, 0], container_size=None))
    world.add_body(BodyDef(mass=1.0, principal_moments=moments, hull=np.zeros((1, 3)),
                           angular_velocity=omega0))
    _, omega_body, _, _ = run_torque_free(world, 5.2)
    assert omega_body[:, 1].min() < -4.9  # ω2 went from +5 to about −5 within one flip interval


momenta = st.lists(st.floats(-50, 50), min_size=3, max_size=3).map(np.array)
inertias = st.lists(st.floats(0.05, 20), min_size=3, max_size=3).map(lambda v: np.sort(np.array(v)))


@given(momenta, inertias, st.floats(1e-4, 1 / 30))
def test_rotation_step_solves_the_midpoint_rule_and_conserves_energy(ang_mom, moments, h):
    """The body-frame momentum implied by the new orientation, L_b' = R'ᵀ L, solves
    L_b' = L_b − h ω_m × L_m, and ½L_b'·ω_b' = ½L_b·ω_b (dot the update with ω_m)."""
    inv = 1.0 / moments
    q0 = np.array([[1.0, 0.0, 0.0, 0.0]])
    q1 = rotate_free(q0, ang_mom[None], inv[None], h)
    new = (body_angular_velocity(q1, ang_mom[None], inv[None]) / inv)[0]
    scale = np.linalg.norm(ang_mom) + 1e-12
    mid = 0.5 * (ang_mom + new)
    assert np.allclose(new, ang_mom - h * np.cross(inv * mid, mid), atol=1e-11 * scale)
    energy = ang_mom @ (inv * ang_mom)
    assert abs(new @ (inv * new) - energy) <= 1e-12 * (energy + 1e-12)


def test_rotation_step_is_second_order():
    """Halving h divides the orientation error after a fixed time by ~4."""
    moments, omega0 = np.array([1.0, 2.0, 3.0]), np.array([1.0, 0.5, 2.0])
    inv, q0 = 1.0 / moments, np.array([[1.0, 0.0, 0.0, 0.0]])
    ang_mom = quat_rotate(q0, moments * omega0)

    def orientation_after(h, seconds=1.0):
        q = q0
        for _ in range(int(round(seconds / h))):
            q = rotate_free(q, ang_mom, inv[None], h)
        return q[0]

    reference = orientation_after(1 / 3840)
    errors = [np.linalg.norm(orientation_after(h) - reference) for h in (1 / 60, 1 / 120, 1 / 240)]
    ratios = np.array(errors[:-1]) / np.array(errors[1:])
    assert np.all((ratios > 3.5) & (ratios < 4.5)), ratios


def test_quaternion_update_multiplies_on_the_body_side():
    """q̇ = ½ q ⊗ (0, ω_b): a body spinning about its own x axis keeps ω along its own x."""
    q0 = quat_normalize(np.array([[0.8, 0.1, 0.5, -0.3]]))
    moments = np.array([[1.0, 2.0, 3.0]])
    omega_body = np.array([[4.0, 0.0, 0.0]])
    ang_mom = quat_rotate(q0, moments * omega_body)
    q = rotate_free(q0, ang_mom, 1.0 / moments, 0.01)
    assert np.allclose(body_angular_velocity(q, ang_mom, 1.0 / moments), omega_body, atol=1e-12)
    # and the rotation is about the body x axis: q = q0 ⊗ (cos, sin·x̂)
    expected = quat_mul(q0, np.array([[np.cos(0.02), np.sin(0.02), 0, 0]]))
    assert np.allclose(q, expected, atol=1e-6)


def test_free_flight_drift_is_the_exact_parabola():
    pos, vel, accel = (
        np.array([[0.0, 2.0, 0.0]]),
        np.array([[1.0, 3.0, -2.0]]),
        np.array([[0, -9.81, 0]]),
    )
    h = 0.05
    vel_end = vel + accel * h
    new = drift(pos, vel, vel_end, accel, np.array([False]), np.array([1.0]), h)
    assert np.allclose(new, pos + vel * h + 0.5 * accel * h * h, atol=1e-15)


def test_bounce_drift_splits_the_step_at_the_impact():
    """A point hitting y = 0 at τh with e = 1 ends where the exact reflected parabola is."""
    g, h, tau = 9.81, 0.01, 0.3
    v_impact = 4.0
    t_hit = tau * h
    v0 = -(v_impact - g * t_hit)          # downward speed at the start so it reaches −v_impact
    y0 = -(v0 * t_hit - 0.5 * g * t_hit**2)
    v_end = v_impact - g * (h - t_hit)
    new = drift(
        np.array([[0.0, y0, 0.0]]),
        np.array([[0.0, v0, 0.0]]),
        np.array([[0.0, v_end, 0.0]]),
        np.array([[0.0, -g, 0.0]]),
        np.array([True]),
        np.array([tau]),
        h,
    )
    rest = h - t_hit
    assert new[0, 1] == pytest.approx(v_impact * rest - 0.5 * g * rest**2, abs=1e-14)


def test_rotated_off_centre_t_handle_mesh_flips_as_predicted(tmp_path):
    """The same must-pass check with a general (non-diagonal) mesh inertia: a T-handle mesh,
    rotated and moved off the origin, loaded from a file through the whole pipeline
    (mesh → mass properties → principal frame → World)."""
    import trimesh

    from physics.geometry.meshes import builtin_shape, load_shape
    from physics.geometry.rotation import quat_to_matrix

    handle = builtin_shape("t_handle")
    turn = quat_to_matrix(quat_normalize(np.array([0.4, 0.7, -0.2, 0.5])))
    vertices = handle.vertices @ turn.T + [3.0, -2.0, 5.0]
    path = tmp_path / "t_handle_turned.obj"
    trimesh.Trimesh(vertices, handle.faces, process=False).export(path)
    shape = load_shape(path)
    inertia = shape.properties.inertia
    assert np.abs(inertia - np.diag(np.diag(inertia))).max() > 0.1 * np.abs(inertia).max()

    moments, axes = shape.properties.principal_moments, shape.properties.principal_axes
    assert moments[0] < moments[1] < moments[2]
    omega_body = np.array([0.01, 5.0, 0.01])
    world = World(WorldDef(gravity=[0, 0, 0], container_size=None))
    world.add_body(shape.body_def(position=[0.0, 0.0, 0.0], angular_velocity=axes @ omega_body))
    assert np.allclose(world.body_angular_velocity()[0], omega_body, atol=1e-12)
    t, omega_hist, energy0, ang_mom0 = run_torque_free(world, 60.0)
    assert abs(world.kinetic_energy()[0] - energy0) / energy0 <= 1e-9
    assert np.linalg.norm(world.state.ang_mom[0] - ang_mom0) / np.linalg.norm(ang_mom0) <= 1e-9
    flips = sign_change_times(t, omega_hist[:, 1])
    assert len(flips) >= 4
    assert np.mean(np.diff(flips)) == pytest.approx(flip_interval(moments, omega_body), abs=1e-3)


def test_world_inverse_inertia_is_r_inv_i_r_transposed():
    rng = np.random.default_rng(8)
    rotm = quat_to_matrix(quat_normalize(rng.normal(size=(5, 4))))
    inv = rng.uniform(0.5, 3.0, size=(5, 3))
    expected = np.einsum("nij,nj,nkj->nik", rotm, inv, rotm)
    assert np.allclose(world_inverse_inertia(rotm, inv), expected, rtol=1e-14, atol=1e-15)


def test_world_omega_is_r_inv_i_r_transposed_times_l():
    rng = np.random.default_rng(9)
    quat = quat_normalize(rng.normal(size=(5, 4)))
    inv, ang_mom = rng.uniform(0.5, 3.0, size=(5, 3)), rng.normal(size=(5, 3))
    expected = quat_rotate(quat, inv * quat_rotate(quat * [1, -1, -1, -1], ang_mom))
    assert np.allclose(world_omega(quat_to_matrix(quat), inv, ang_mom), expected, rtol=1e-13,
                       atol=1e-14)


def test_angular_momentum_is_the_inverse_of_world_omega():
    """L = R I Rᵀ ω: the state a body given by its world ω starts with gives that ω back."""
    rng = np.random.default_rng(10)
    quat = quat_normalize(rng.normal(size=(5, 4)))
    inv, omega = rng.uniform(0.5, 3.0, size=(5, 3)), rng.normal(size=(5, 3))
    ang_mom = angular_momentum(quat, omega, inv)
    assert np.allclose(world_omega(quat_to_matrix(quat), inv, ang_mom), omega, rtol=1e-13,
                       atol=1e-14)
    # a body turning about a principal axis has L along ω, |L| = I |ω|
    axis = quat_to_matrix(quat)[:, :, 1]
    np.testing.assert_allclose(angular_momentum(quat, 2.0 * axis, inv), 2.0 * axis / inv[:, 1:2],
                               rtol=1e-13)
