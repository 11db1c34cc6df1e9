"""Sleeping: islands that have rested long enough stop being simulated (Box2D's sleep).

A body is slow when its centre moves slower than ``LINEAR_TOLERANCE`` and it turns slower than
``ANGULAR_TOLERANCE`` and nothing holds a force or torque on it. Each body counts how long it
has been slow; an island (bodies linked by contacts, islands.py) falls asleep when every body in
it has been slow for ``TIME_TO_SLEEP``: its velocities are zeroed and it is skipped by gravity,
the integrator and the solver (a sleeping body acts as a fixed one) until something wakes it —
a contact with an awake body that carries load, or a command touching it (world.py).
"""

from __future__ import annotations

import numpy as np
from numba import njit

LINEAR_TOLERANCE = 0.01                # m/s (Box2D v2.4: b2_linearSleepTolerance)
ANGULAR_TOLERANCE = np.radians(2.0)    # rad/s (Box2D: 2°/s)
TIME_TO_SLEEP = 0.5                    # s (Box2D: b2_timeToSleep)


def slow_bodies(vel, omega, loaded) -> np.ndarray:
    """(n,) bool: under both sleep tolerances and without a held load.

    vel (n, 3) m/s; omega (n, 3) rad/s; loaded (n,) bool: a force, torque or grab acts."""
    return ((np.einsum("ij,ij->i", vel, vel) < LINEAR_TOLERANCE**2)
            & (np.einsum("ij,ij->i", omega, omega) < ANGULAR_TOLERANCE**2) & ~loaded)


def islands_to_sleep(timer, island, asleep) -> np.ndarray:
    """(n,) bool: awake bodies whose whole island has been slow for ``TIME_TO_SLEEP``.

    timer (n,) s each body has been slow; island (n,) labels; asleep (n,) bool. An island that
    still holds a sleeping body (one just touched by an awake one) waits until it has woken."""
    n = len(timer)
    ready = np.where(asleep, -1.0, timer)
    shortest = np.full(n, np.inf)
    np.minimum.at(shortest, island, ready)
    return (shortest[island] >= TIME_TO_SLEEP) & ~asleep


def wake_pressed(body, other, acted, asleep, slow_time) -> None:
    """Wake, in place, the sleeping bodies that an awake body pressed on this step.

    body, other (k,) int64 contact rows (other < 0: a wall); acted (k,) bool: the contact
    carried an impulse; asleep (n,) bool and slow_time (n,) s are edited. Decided on the sleep
    states before any of these wakes (a body woken here wakes no further sleeper this step)."""
    _wake_kernel(body, other, acted, asleep.copy(), asleep, slow_time)


@njit(cache=True, nogil=True)
def _wake_kernel(body, other, acted, was_asleep, asleep, slow_time):
    for c in range(body.shape[0]):
        b, o = body[c], other[c]
        if not acted[c] or o < 0 or was_asleep[b] == was_asleep[o]:
            continue
        woken = b if was_asleep[b] else o
        asleep[woken] = False
        slow_time[woken] = 0.0
