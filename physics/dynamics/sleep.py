"""Sleeping: islands that have rested long enough stop being simulated (Box2D's sleep).

A body is slow when its centre moves slower than ``SLEEP_LINEAR_TOLERANCE`` and it turns slower than
``SLEEP_ANGULAR_TOLERANCE`` and nothing holds a force or torque on it. Each body counts how long it
has been slow; an island (bodies linked by contacts, dynamics/islands.py) falls asleep when every
body in
it has been slow for ``TIME_TO_SLEEP``: its velocities are zeroed and it is skipped by gravity,
the integrator and the solver (a sleeping body acts as a fixed one) until something wakes it —
a contact with an awake body that carries load, or a command touching it (world.py).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from physics.settings import SLEEP_ANGULAR_TOLERANCE, SLEEP_LINEAR_TOLERANCE, TIME_TO_SLEEP


def rest(vel, ang_mom, omega, loaded, island, asleep, slow_time, h, sleep=True) -> None:
    """Count slow time and put rested islands to sleep, in place, in one compiled pass.

    A body is slow when under both tolerances with no held load; slow_time (n,) s grows by h
    for each slow awake body and is reset for the others. An island (labels island (n,))
    falls asleep when every body in it has been slow for ``TIME_TO_SLEEP``, unless it still
    holds a sleeping body (one just touched by an awake one: it waits until that has woken);
    its bodies are marked in asleep (n,) bool and their vel (n, 3) m/s and ang_mom (n, 3)
    kg·m²/s are zeroed. omega (n, 3) rad/s: the world angular velocities; loaded (n,) bool: a
    force, torque or grab acts; h the step, s; sleep false (``WorldDef.sleep``): slow time is
    counted but no island ever falls asleep."""
    _rest_kernel(vel, ang_mom, omega, loaded, island, asleep, slow_time, float(h),
                 SLEEP_LINEAR_TOLERANCE**2, SLEEP_ANGULAR_TOLERANCE**2,
                 TIME_TO_SLEEP if sleep else np.inf)


@njit(cache=True, nogil=True)
def _rest_kernel(vel, ang_mom, omega, loaded, island, asleep, slow_time, h, linear2, angular2,
                 time_to_sleep):
    n = vel.shape[0]
    shortest = np.full(n, np.inf)  # per island label: its least rested body (−1: one sleeps)
    for i in range(n):
        speed2 = vel[i, 0] ** 2 + vel[i, 1] ** 2 + vel[i, 2] ** 2
        spin2 = omega[i, 0] ** 2 + omega[i, 1] ** 2 + omega[i, 2] ** 2
        slow = speed2 < linear2 and spin2 < angular2 and not loaded[i]
        slow_time[i] = slow_time[i] + h if slow and not asleep[i] else 0.0
        ready = -1.0 if asleep[i] else slow_time[i]
        shortest[island[i]] = min(shortest[island[i]], ready)
    for i in range(n):
        if not asleep[i] and shortest[island[i]] >= time_to_sleep:
            asleep[i] = True
            for a in range(3):
                vel[i, a] = 0.0
                ang_mom[i, a] = 0.0


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


@njit(cache=True, nogil=True)
def struck_sleepers(body, other, point, normal, separation, pos, vel, omega, asleep, struck,
                    h, speed, touch_gap):
    """(n,) bool: sleeping bodies that an awake body strikes within this step — a body–body
    contact closing faster than ``speed`` m/s that closes within h s — or that lie within
    ``touch_gap`` m of a body already ``struck`` (n,) bool this step.

    A sleeping body is fixed for the solver, so a strike on it would bounce back as off a wall
    and move nothing (a Newton's cradle would not pass its impulse on): such a body, and the row
    of bodies touching it, must wake before the step is solved (docs/physics.md#sleeping).
    body, other (k,) contact rows (other < 0: a wall); point, normal (k, 3) (normal into
    ``body``); separation (k,) m; pos, vel, omega (n, 3) world; asleep (n,) bool."""
    found = np.zeros(asleep.shape[0], dtype=np.bool_)
    for c in range(body.shape[0]):
        b, o = body[c], other[c]
        if o < 0 or asleep[b] == asleep[o]:
            continue
        if (struck[b] or struck[o]) and separation[c] < touch_gap:
            found[o if asleep[o] else b] = True
            continue
        closing = 0.0  # −(v_body − v_other)·n at the contact point
        rb = point[c] - pos[b]
        ro = point[c] - pos[o]
        for a in range(3):
            vb = vel[b, a] + (omega[b, (a + 1) % 3] * rb[(a + 2) % 3]
                              - omega[b, (a + 2) % 3] * rb[(a + 1) % 3])
            vo = vel[o, a] + (omega[o, (a + 1) % 3] * ro[(a + 2) % 3]
                              - omega[o, (a + 2) % 3] * ro[(a + 1) % 3])
            closing -= (vb - vo) * normal[c, a]
        if closing > speed and separation[c] < closing * h:
            found[o if asleep[o] else b] = True
    return found
