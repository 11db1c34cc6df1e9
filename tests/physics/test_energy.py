"""Energy diagnostics and the passivity limit."""

import numpy as np
import pytest

from physics.energy import kinetic_energy, potential_energy, remove_energy_gain
from physics.rotation import quat_normalize, quat_rotate


def test_kinetic_energy_of_translation_and_rotation():
    q = quat_normalize(np.array([[0.9, 0.1, -0.3, 0.2]]))
    moments = np.array([[1.0, 2.0, 3.0]])
    omega_body = np.array([[0.5, -1.0, 2.0]])
    ang_mom = quat_rotate(q, moments * omega_body)
    energy = kinetic_energy(np.array([2.0]), np.array([[1.0, 2.0, 2.0]]), q, ang_mom, 1 / moments)
    assert energy[0] == pytest.approx(0.5 * 2 * 9 + 0.5 * np.sum(moments * omega_body**2), rel=1e-14)


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
    remove_energy_gain(allowed, mass, vel, q, ang_mom, inv_inertia, pos, [0, -9.81, 0], np.array([0, 1]))
    after = kinetic_energy(mass, vel, q, ang_mom, inv_inertia)
    assert after[0] == pytest.approx(1.0, rel=1e-12)
    assert after[1] == pytest.approx(2.5, rel=1e-12)
    assert np.allclose(vel[0] / np.linalg.norm(vel[0]), [0, 1, 0])  # direction kept
