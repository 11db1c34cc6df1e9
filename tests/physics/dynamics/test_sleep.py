"""Sleep bookkeeping: tolerances, held loads, and whole islands only."""

import numpy as np

from physics.dynamics.sleep import rest
from physics.settings import SLEEP_ANGULAR_TOLERANCE, SLEEP_LINEAR_TOLERANCE, TIME_TO_SLEEP

H = 1.0 / 240.0


def rest_once(vel, omega, loaded, island, asleep, slow_time):
    """Run one ``rest`` on copies; returns (asleep, slow_time, vel, ang_mom) after it."""
    vel, asleep, slow_time = vel.copy(), asleep.copy(), slow_time.copy()
    ang_mom = omega * 2.0  # any angular momentum: it must be zeroed with the velocity
    rest(vel, ang_mom, omega, loaded, island, asleep, slow_time, H)
    return asleep, slow_time, vel, ang_mom


def test_slow_means_under_both_tolerances_and_unloaded():
    vel = np.array(
        [[0, 0, 0], [SLEEP_LINEAR_TOLERANCE * 2, 0, 0], [0, 0, 0], [0, 0, 0]], dtype=float
    )
    omega = np.array([[0, 0, 0], [0, 0, 0], [0, SLEEP_ANGULAR_TOLERANCE * 2, 0], [0, 0, 0]])
    loaded = np.array([False, False, False, True])
    alone = np.arange(4)
    _, slow_time, _, _ = rest_once(vel, omega, loaded, alone, np.zeros(4, dtype=bool),
                                   np.full(4, 0.1))
    # the slow body counts on, the others start again
    assert np.allclose(slow_time, [0.1 + H, 0.0, 0.0, 0.0])


def test_an_island_sleeps_only_when_all_its_bodies_have_rested_long_enough():
    slow_time = np.array([1.0, TIME_TO_SLEEP - H, 0.1, 2.0, 2.0])
    island = np.array([0, 0, 2, 2, 4])
    vel = np.full((5, 3), 0.001)
    omega = np.zeros((5, 3))
    loaded = np.zeros(5, dtype=bool)
    asleep, _, vel_after, ang_mom = rest_once(vel, omega, loaded, island,
                                              np.zeros(5, dtype=bool), slow_time)
    assert asleep.tolist() == [True, True, False, False, True]
    assert np.all(vel_after[asleep] == 0.0) and np.all(ang_mom[asleep] == 0.0)
    assert np.all(vel_after[~asleep] == 0.001)
    # an island still holding a sleeping body waits for it to wake
    was_asleep = np.array([False, True, False, False, False])
    asleep, _, _, _ = rest_once(vel, omega, loaded, island, was_asleep, slow_time)
    assert asleep.tolist() == [False, True, False, False, True]


def test_without_sleep_slow_time_counts_but_no_island_falls_asleep():
    vel, omega = np.zeros((2, 3)), np.zeros((2, 3))
    asleep, slow_time = np.zeros(2, dtype=bool), np.full(2, 10 * TIME_TO_SLEEP)
    rest(vel, omega.copy(), omega, np.zeros(2, dtype=bool), np.arange(2), asleep, slow_time, H,
         sleep=False)
    assert not asleep.any() and np.allclose(slow_time, 10 * TIME_TO_SLEEP + H)
