"""A batch of steps of a world without joints in one compiled call (docs/architecture.md#batches).

``run_batch`` is ``World.step``'s table of contents in a loop: the forces (stage 1,
``advance.apply_forces``), the contacts (stage 2, ``collision/find.py``), sleeping bodies struck
this step woken and the step started again (``wake_struck``), then impulses, motion,
penetration, the energy guard and sleep (stages 3–7, ``advance.advance_without_joints``). The
GIL is released for the whole batch; Python touches the world only between batches. Each stage
is the compiled function ``World.step`` itself runs, so a batch of k steps gives the bits of k
single steps. A world with joints steps in ``World.step``, whose joints' solve and projection
interleave with these stages.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit

from physics.collision.broadphase import SweptPairs
from physics.collision.find import collision_set, find_contacts
from physics.collision.manifolds import ManifoldCache
from physics.dynamics.advance import (
    GrabSpring,
    Start,
    StepSettings,
    advance_without_joints,
    apply_forces,
    links,
)
from physics.dynamics.islands import islands
from physics.dynamics.sleep import struck_sleepers
from physics.dynamics.warmstart import ContactCache
from physics.model import BodyModel
from physics.settings import WAKE_TOUCH_GAP


class Carried(NamedTuple):
    """What one step hands the next (``State`` and the world's last-step records): time s;
    bodies the ``Start`` of the next step (its asleep and slow_time edited in place); cache the
    warm start (``ContactCache``); swept the broad phase's kept pairs (``SweptPairs``);
    manifolds, piece_manifolds the kept manifolds (``ManifoldCache``); pairs (first, second)
    (p,) int64 the ids that pressed together, kept for sleeping islands; point, normal (k, 3)
    and acted (k,) bool the last step's contacts."""

    time: float
    bodies: Start
    cache: ContactCache
    swept: SweptPairs
    manifolds: ManifoldCache
    piece_manifolds: ManifoldCache
    pairs: tuple
    point: np.ndarray
    normal: np.ndarray
    acted: np.ndarray


@njit(cache=True, nogil=True)
def run_batch(steps, h, collision, bodies, settings, force, torque, grab, threads, carried):
    """``steps`` steps of h s of a world without joints; returns the ``Carried`` after them.

    collision the ``Model.collision`` record and bodies the ``Model.body_model`` one, settings
    the ``StepSettings``, force, torque (n, 3) N, N·m the held loads, grab the ``GrabSpring``
    (all as plain tuples, docs/architecture.md#records); threads how many threads the parallel
    stages may use (``runtime.parallel_threads``); carried the ``Carried`` before them."""
    collision, bodies = collision_set(collision), BodyModel(*bodies)
    settings, grab, carried = StepSettings(*settings), GrabSpring(*grab), Carried(*carried)
    time, (pos, quat, vel, ang_mom, asleep, slow_time) = carried.time, carried.bodies
    cache = ContactCache(*carried.cache)
    swept, manifolds = SweptPairs(*carried.swept), ManifoldCache(*carried.manifolds)
    piece_manifolds, pairs = ManifoldCache(*carried.piece_manifolds), carried.pairs
    point, normal, acted = carried.point, carried.normal, carried.acted
    n = pos.shape[0]
    # no joints: no pair kept from colliding, and none linking islands. Made here, not the
    # global NO_BANNED, which numba would type as a read-only constant: the stages would then
    # be compiled a second time, for that type, beside the one a jointed step calls them with
    nothing = np.zeros(0, dtype=np.int64)
    for _ in range(steps):
        if n == 0 or (asleep | bodies.static).all():  # nothing moves (the last contacts hold)
            time += h
            continue
        struck = np.zeros(n, dtype=np.bool_)  # woken by a strike within this step
        while True:
            # 1. forces over the step
            start = Start(pos, quat, vel, ang_mom, asleep, slow_time)
            forced = apply_forces(bodies, settings.gravity, start, force, torque, grab, h)
            # 2. contacts: walls, then body pairs (broad phase → narrow phase)
            contacts, swept, manifolds, piece_manifolds = find_contacts(
                collision, pos, forced.rotm, forced.vel, forced.omega, settings.planes,
                forced.awake, h, swept, manifolds, piece_manifolds, nothing, threads)
            # the struck bodies take part in this step from its start
            if forced.awake.all() or not wake_struck(
                    contacts.body, contacts.other, contacts.point, contacts.normal,
                    contacts.separation, pos, forced.vel, forced.omega, asleep, slow_time,
                    struck, bodies.ids, bodies.static, pairs, nothing, nothing, h,
                    settings.threshold):
                break
        # 3.–7. impulses, motion, penetration, energy guard, sleep
        done = advance_without_joints(contacts, bodies, settings, start, forced, cache, pairs, h)
        pos, quat, vel, ang_mom = done.pos, done.quat, done.vel, done.ang_mom
        cache, pairs = done.cache, done.pairs
        point, normal, acted = contacts.point, contacts.normal, done.acted
        time += h
    return Carried(time, Start(pos, quat, vel, ang_mom, asleep, slow_time), cache, swept,
                   manifolds, piece_manifolds, pairs, point, normal, acted)


@njit(cache=True, nogil=True)
def wake_struck(body, other, point, normal, separation, pos, vel, omega, asleep, slow_time,
                struck, ids, static, pairs, joined_first, joined_second, h, speed):
    """Wake each sleeping island an awake body strikes faster than ``speed`` m/s within this
    step of h s, and the sleeping bodies touching one struck before (``struck_sleepers``);
    returns whether any woke (the step then starts again).

    body, other (k,) contact rows (other < 0: a wall), point, normal (k, 3), separation (k,) m
    the step's contacts; pos, vel, omega (n, 3) the bodies; asleep (n,) bool, slow_time (n,) s
    and struck (n,) bool (woken by a strike this step) edited in place; ids (n,) int64 and
    static (n,) bool the model's; a sleeping island is linked by pairs (first, second), the ids
    that pressed together before they slept, and by the joints' rows joined_first,
    joined_second (j,) (second < 0: the world)."""
    found = struck_sleepers(body, other, point, normal, separation, pos, vel, omega, asleep,
                            struck, h, speed, WAKE_TOUCH_GAP)
    if not found.any():
        return False
    first = np.concatenate((np.searchsorted(ids, pairs[0]), joined_first))
    second = np.concatenate((np.searchsorted(ids, pairs[1]), joined_second))
    first, second = links(static, first, second)
    island = islands(asleep.shape[0], first, second)
    hit = np.zeros(asleep.shape[0], dtype=np.bool_)  # by island label
    for i in range(asleep.shape[0]):
        if found[i]:
            hit[island[i]] = True
    for i in range(asleep.shape[0]):
        if hit[island[i]] and asleep[i]:
            struck[i] = True
            asleep[i] = False
            slow_time[i] = 0.0
    return True
