"""A batch of steps in one compiled call (docs/architecture.md#batches).

``run_batch`` is ``World.step``'s table of contents in a loop: the bodies joined to awake ones
woken (``wake_joined``), the forces (stage 1, ``advance.apply_forces``), the contacts (stage 2,
``collision/find.py``), sleeping bodies struck this step woken and the step started again
(``wake_struck``), then impulses, motion, penetration, the energy guard, the joints' solve and
projection and sleep (stages 3–7: ``advance.advance_into`` without joints, in the arrays of
the batch's ``advance.Workspace``, ``constraints/forest_step.advance_forest`` with them). The
GIL is released for the whole batch; Python touches the world only between batches. Each stage
is the compiled function the Python path runs, so a batch of k steps gives the bits of k single
steps. A step with joints that ``advance_forest`` leaves to the Python path (a loop of joints,
contacts resting in the joints' solve, a pushed limit, a breaking joint) ends the batch before
it: ``World`` runs that step in Python, then the next batch.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit

from physics.collision.find import collision_set, find_contacts, no_contacts, nothing_kept
from physics.constraints.forest_step import advance_forest
from physics.constraints.solve import JointSet
from physics.dynamics.advance import (
    Forced,
    GrabSpring,
    Start,
    StepSettings,
    advance_into,
    apply_forces,
    apply_forces_into,
    links,
    workspace,
)
from physics.dynamics.islands import islands
from physics.dynamics.sleep import struck_sleepers
from physics.dynamics.warmstart import ContactCache
from physics.model import BodyModel
from physics.settings import WAKE_TOUCH_GAP


class JointCarried(NamedTuple):
    """What one step of a world with joints hands the next beyond ``State.carried`` (its
    ``JointTable``): impulses (m, ROWS) N·s the joints' warm start; force, torque (m, 3) N,
    N·m and error (m, 2) m, rad the last step's reactions and violations; factors the velocity
    system's kept factors, a plain ``forest_step.Factors``."""

    impulses: np.ndarray
    force: np.ndarray
    torque: np.ndarray
    error: np.ndarray
    factors: tuple


@njit(cache=True, nogil=True)
def run_batch(steps, h, model, settings, force, torque, grab, threads, time, before, carried,
              joints, banned, break_force, joint_carried):
    """Up to ``steps`` steps of h s; returns (the time s, the bodies' ``Start``, the
    ``JointCarried`` after them, how many were done): fewer than steps when the next needs the
    Python path (``advance_forest``), the world then as at that step's start.

    model the ``Model.batch_records``; settings the ``StepSettings``, force, torque (n, 3) N,
    N·m the held loads, grab the ``GrabSpring`` (as plain tuples,
    docs/architecture.md#records); threads how many threads the parallel stages may use
    (``runtime.parallel_threads``); time s and before (a plain ``Start``) the bodies before
    them, whose asleep and slow_time are edited in place; carried the ``State.carried`` records,
    whose fields the batch replaces with the records after them. joints the ``JointSet``
    (none: empty arrays), banned (b,) int64 the sorted keys of the body pairs they keep from
    colliding (``JointTable.unjoined_keys``), break_force (m,) N, joint_carried the
    ``JointCarried`` before them."""
    collision, bodies = collision_set(model.collision), BodyModel(*model.bodies)
    settings, grab = StepSettings(*settings), GrabSpring(*grab)
    pos, quat, vel, ang_mom, asleep, slow_time = before
    cache, swept, manifolds = carried.cache, carried.swept, carried.manifolds
    piece_manifolds, pairs = carried.piece_manifolds, carried.pairs
    point, normal, acted = carried.point, carried.normal, carried.acted
    joints, joint_carried = JointSet(*joints), JointCarried(*joint_carried)
    impulses, reaction, turning = joint_carried.impulses, joint_carried.force, joint_carried.torque
    error, factors = joint_carried.error, joint_carried.factors
    n, m = pos.shape[0], joints.kind.shape[0]
    work = workspace(n)  # what a step without joints writes, made once for the whole batch
    into_first = True  # whether the next such step writes its end state into work.first
    struck = np.zeros(n, dtype=np.bool_)  # woken by a strike within the step
    none = no_contacts()
    for done in range(steps):
        # what the Python path starts from, should this step need it
        # (only a step with joints can need it: a free body's step copies nothing here)
        asleep_before = asleep.copy() if m else asleep
        slow_before = slow_time.copy() if m else slow_time
        kept = (swept, manifolds, piece_manifolds)
        wake_joined(joints.first, joints.second, bodies.static, asleep, slow_time)
        if n == 0 or all_held(asleep, bodies.static):  # nothing moves (the last contacts hold)
            time += h
            continue
        struck[:] = False
        ends = work.first if into_first else work.second
        while True:
            # 1. forces over the step
            start = Start(pos, quat, vel, ang_mom, asleep, slow_time)
            if m:
                forced = apply_forces(bodies, settings.gravity, start, force, torque, grab, h)
            else:  # into the workspace: its vel and ang_mom become the step's end state
                forced = apply_forces_into(
                    bodies, settings.gravity, start, force, torque, grab, h,
                    Forced(ends.vel, ends.ang_mom, work.omega, work.accel, work.inv_mass,
                           work.awake, work.rotm, force, torque))
            # 2. contacts: walls, then body pairs (broad phase → narrow phase)
            if (n > 1 or settings.planes.shape[0] or not nothing_kept(manifolds)
                    or not nothing_kept(piece_manifolds)):
                contacts, swept, manifolds, piece_manifolds = find_contacts(
                    collision, pos, forced.rotm, forced.vel, forced.omega, settings.planes,
                    forced.awake, h, swept, manifolds, piece_manifolds, banned, threads)
            else:  # a lone body without walls meets nothing (and the call's records cost)
                contacts = none
            # the struck bodies (and the bodies joined to them) take part in this step from
            # its start
            if forced.awake.all() or not wake_struck(
                    contacts.body, contacts.other, contacts.point, contacts.normal,
                    contacts.separation, pos, forced.vel, forced.omega, asleep, slow_time,
                    struck, bodies.ids, bodies.static, pairs, joints.first, joints.second, h,
                    settings.threshold):
                break
            wake_joined(joints.first, joints.second, bodies.static, asleep, slow_time)
        # 3.–7. impulses, motion, penetration, energy guard, the joints, sleep
        if m == 0:
            advanced = advance_into(contacts, bodies, settings, start, forced, cache, pairs, h,
                                    work, ends)
            pos, quat, vel, ang_mom = (advanced.pos, advanced.quat, advanced.vel,
                                       advanced.ang_mom)
            cache, pairs, acted = advanced.cache, advanced.pairs, advanced.acted
            into_first = not into_first  # the next step starts from these ends
        else:
            (stepped, pos_end, quat_end, vel_end, ang_mom_end, impulses_end, force_end,
             torque_end, error_end, factors_end, cache_end, pairs_end,
             acted_end) = advance_forest(contacts, bodies, settings, start, forced, cache, pairs,
                                         joints, impulses, break_force, factors, h)
            if not stepped:
                asleep[:], slow_time[:] = asleep_before, slow_before
                swept, manifolds, piece_manifolds = kept
                keep_records(carried, cache, swept, manifolds, piece_manifolds, pairs, point,
                             normal, acted)
                return (time, Start(pos, quat, vel, ang_mom, asleep, slow_time),
                        JointCarried(impulses, reaction, turning, error, factors), done)
            pos, quat, vel, ang_mom = pos_end, quat_end, vel_end, ang_mom_end
            impulses, reaction, turning, error = impulses_end, force_end, torque_end, error_end
            factors, cache = factors_end, ContactCache(*cache_end)
            pairs, acted = pairs_end, acted_end
        point, normal = contacts.point, contacts.normal
        time += h
    keep_records(carried, cache, swept, manifolds, piece_manifolds, pairs, point, normal, acted)
    return (time, Start(pos, quat, vel, ang_mom, asleep, slow_time),
            JointCarried(impulses, reaction, turning, error, factors), steps)


@njit(cache=True, nogil=True)
def keep_records(carried, cache, swept, manifolds, piece_manifolds, pairs, point, normal,
                 acted):
    """Store what a batch hands the next into carried (a ``StepRecords``)."""
    carried.cache, carried.swept, carried.manifolds = cache, swept, manifolds
    carried.piece_manifolds, carried.pairs = piece_manifolds, pairs
    carried.point, carried.normal, carried.acted = point, normal, acted


@njit(cache=True, nogil=True)
def wake_joined(first, second, static, asleep, slow_time):
    """A sleeping body joined to an awake one wakes (until both rest together), through as many
    joints as there are; a static body, never asleep, wakes nothing, as the world does not.
    first, second (m,) the joints' body rows (second < 0: the world); asleep (n,) bool and
    slow_time (n,) s edited in place."""
    if first.shape[0] == 0:
        return
    waking = np.zeros(asleep.shape[0], dtype=np.bool_)
    for _ in range(first.shape[0]):
        found = False
        for j in range(first.shape[0]):
            a, b = first[j], second[j]
            if b < 0:
                continue
            a_moving = not (asleep[a] or static[a])
            b_moving = not (asleep[b] or static[b])
            if b_moving and not a_moving and asleep[a]:
                waking[a], found = True, True
            if a_moving and not b_moving and asleep[b]:
                waking[b], found = True, True
        if not found:
            return
        for i in range(asleep.shape[0]):
            if waking[i]:
                asleep[i], slow_time[i], waking[i] = False, 0.0, False


@njit(cache=True, nogil=True)
def all_held(asleep, static):
    """Whether every body is asleep or static (asleep, static (n,) bool): none moves."""
    for i in range(asleep.shape[0]):
        if not (asleep[i] or static[i]):
            return False
    return True


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
