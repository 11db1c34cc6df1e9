"""Sleep bookkeeping: tolerances, held loads, and whole islands only."""

import numpy as np

from physics.sleep import (ANGULAR_TOLERANCE, LINEAR_TOLERANCE, TIME_TO_SLEEP, islands_to_sleep,
                           slow_bodies)


def test_slow_means_under_both_tolerances_and_unloaded():
    vel = np.array([[0, 0, 0], [LINEAR_TOLERANCE * 2, 0, 0], [0, 0, 0], [0, 0, 0]], dtype=float)
    omega = np.array([[0, 0, 0], [0, 0, 0], [0, ANGULAR_TOLERANCE * 2, 0], [0, 0, 0]])
    loaded = np.array([False, False, False, True])
    assert slow_bodies(vel, omega, loaded).tolist() == [True, False, False, False]


def test_an_island_sleeps_only_when_all_its_bodies_have_rested_long_enough():
    timer = np.array([1.0, TIME_TO_SLEEP, 0.1, 2.0, 2.0])
    island = np.array([0, 0, 2, 2, 4])
    asleep = np.array([False, False, False, False, False])
    assert islands_to_sleep(timer, island, asleep).tolist() == [True, True, False, False, True]
    # an island still holding a sleeping body waits for it to wake
    asleep[1] = True
    assert islands_to_sleep(timer, island, asleep).tolist() == [False, False, False, False, True]
