"""Energy diagnostics and the passivity limit."""

import numpy as np
import pytest

from physics.dynamics.energy import (
    kinetic_energy,
    potential_energy,
    remove_energy_gain,
    remove_island_energy_gain,
)
from physics.geometry.rotation import quat_normalize, quat_rotate


def test_kinetic_energy_of_translation_and_rotation():
    q = quat_normalize(np.array([[0.9, 0.1, -0.3, 0.2]]))
    moments = np.array([[1.0, 2.0, 3.0]])
    omega_body = np.array([[0.5, -1.0, 2.0]])
    ang_mom = quat_rotate(q, moments * omega_body)
    energy = kinetic_energy(np.array([2.0]), np.array([[1.0, 2.0, 2.0]]), q, ang_mom, 1 / moments)
    assert energy[0] == pytest.approx(
        0.5 * 2 * 9 + 0.5 * np.sum(moments * omega_body**2), rel=1e-14
    )


def test_potential_energy_is_m_g_h():
    assert potential_energy(np.array([3.0]), np.array([[5.0, 2.0, 1.0]]), [0, -9.81, 0])[0] == \
        pytest.approx(3 * 9.81 * 2)


def test_only_bodies_that_gained_energy_are_scaled_down_to_the_limit():
    mass, q = np.array([1.0, 1.0]), np.array([[1.0, 0, 0, 0]] * 2)
    vel = np.array([[0.0, 2.0, 0.0], [0.0, 2.0, 0.0]])
    ang_mom = np.array([[0.0, 0.0, 1.0], [0.0, 0.0, 1.0]])
    inv_inertia = np.ones((2, 3))
    pos = np.zeros((2, 3))
    allowed = np.array([1.0, 10.0])  # body 0 has 2 + 0.5 = 2.5 J: too much; body 1 is fine
    remove_energy_gain(
        allowed, mass, vel, q, ang_mom, inv_inertia, pos, [0, -9.81, 0], np.array([0, 1])
    )
    after = kinetic_energy(mass, vel, q, ang_mom, inv_inertia)
    assert after[0] == pytest.approx(1.0, rel=1e-12)
    assert after[1] == pytest.approx(2.5, rel=1e-12)
    assert np.allclose(vel[0] / np.linalg.norm(vel[0]), [0, 1, 0])  # direction kept


def test_free_island_keeps_both_momenta_while_its_excess_is_removed():
    """Only the motion the island's rigid motion does not carry is scaled
    (docs/physics.md#energy-guard): P and L about the origin stay, to rounding."""
    rng = np.random.default_rng(3)
    mass = np.array([1.0, 3.0, 2.0])
    q = quat_normalize(rng.normal(size=(3, 4)))
    vel = np.array([[4.0, 0.0, 0.0], [-1.0, 1.0, 0.0], [0.0, 0.0, 5.0]])
    ang_mom = np.array([[0.0, 0.0, 1.0], [0.0, 0.5, 0.0], [0.0, 0.0, 0.0]])
    inv_inertia = 1.0 / np.sort(rng.uniform(0.5, 2.0, (3, 3)), axis=1)
    pos = rng.uniform(-1.0, 1.0, (3, 3))

    def momenta():
        linear = mass[:2, None] * vel[:2]
        return linear.sum(axis=0), (np.cross(pos[:2], linear) + ang_mom[:2]).sum(axis=0)

    momentum, angular = momenta()
    before = kinetic_energy(mass, vel, q, ang_mom, inv_inertia)
    # bodies 0 and 1 form an island allowed 1 J less than they have; body 2 is alone and fine
    allowed = np.array([before[0] + before[1] - 1.0, 0.0, before[2] + 1.0])
    remove_island_energy_gain(allowed, mass, vel, q, ang_mom, inv_inertia, pos, [0, 0, 0],
                              np.arange(3), np.array([0, 0, 2]), np.zeros(3, dtype=bool))
    after = kinetic_energy(mass, vel, q, ang_mom, inv_inertia)
    assert after[0] + after[1] == pytest.approx(before[0] + before[1] - 1.0, rel=1e-12)
    momentum_after, angular_after = momenta()
    assert np.allclose(momentum_after, momentum, rtol=0, atol=1e-13)
    assert np.allclose(angular_after, angular, rtol=0, atol=1e-13)
    assert after[2] == before[2]


def test_island_at_rest_pays_for_a_lift_by_being_lowered_as_a_whole():
    mass, q = np.array([1.0, 1.0]), np.array([[1.0, 0, 0, 0]] * 2)
    vel, ang_mom = np.zeros((2, 3)), np.zeros((2, 3))
    pos = np.array([[0.0, 0.1, 0.0], [0.0, 0.3, 0.0]])
    allowed = potential_energy(mass, pos, [0, -9.81, 0]) - 9.81 * 1e-4  # 0.1 mm too high, each
    remove_island_energy_gain(allowed, mass, vel, q, ang_mom, np.ones((2, 3)), pos, [0, -9.81, 0],
                              np.arange(2), np.zeros(2, dtype=int), np.ones(2, dtype=bool))
    assert np.allclose(pos[:, 1], [0.1 - 1e-4, 0.3 - 1e-4], rtol=0, atol=1e-12)
