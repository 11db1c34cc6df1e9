"""Stages 3–7 of a step with joints in one compiled call, for the common case: the joints form a
forest and no contact rests in their solve (docs/architecture.md#the-step).

``advance_forest`` runs what ``World._advance_jointed`` runs, in its order and with its
arithmetic (so the bits are the same): the joints' velocity solve, the contacts, the joints'
again, the move, the push apart, the energy guard, the joints' projection, reactions and
violations, sleep. Where that step needs what only the Python path has — the general solve (a loop
of joints, contacts resting in the joints' solve, a tree solve that failed), a limit pushed back
along its row, a joint that breaks — it stops and reports so before it has changed anything the
caller owns, and the caller runs the step through the Python path from the same start.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit

from physics.collision.contact import Contacts
from physics.constraints.forest import (
    CLOSED,
    NOT_SOLVED,
    fresh_free,
    newton_forest,
    no_factors,
    spin_of,
    velocities_forest,
    world_response,
)
from physics.constraints.projection import _kinetic_kernel
from physics.constraints.solve import (
    LOWER,
    ROWS,
    UPPER,
    JointRows,
    JointSet,
    one_sided,
    prepare_rows,
    sweep_joints,
    warm_start,
)
from physics.constraints.table import _classify_kernel, _reactions_kernel
from physics.dynamics.advance import (
    Forced,
    Start,
    StepSettings,
    guard_energy,
    held_still,
    hold_static,
    links,
    move,
    separate,
    update_sleep,
    world_materials,
)
from physics.dynamics.integrator import _inverse_inertia_kernel
from physics.dynamics.islands import islands
from physics.dynamics.solver import Motion, contact_impulses, materials
from physics.dynamics.warmstart import ContactCache, cache_of, cached_impulses
from physics.geometry.rotation import _matrix_kernel, _mul_kernel
from physics.model import BodyModel
from physics.settings import SETTLE_PASSES, SHAKE_ENERGY_ALLOWANCE

# how close to a threshold a quantity computed here in another order than the Python path's
# (a contact's normal rate, a joint's reaction) counts as on it: the step is then left to the
# Python path, whose own rounding decides (a few ulps apart at most)
_MARGIN = 1e-9


class Factors(NamedTuple):
    """The joints' velocity system's tree factors kept between calls (``FactorCache``): valid
    whether they are set; pos (n, 3), quat (n, 4), inv_mass (n,), inv_inertia (n, 3) what they
    were made from; factors ``tree.tree_factor``'s; rows the joints' rows at pos, quat (jac
    (m, ROWS, 12), phi, active (m, ROWS), nblock (m,)), or none (0 joints long): the next step
    starts from those poses, so its rows are these."""

    valid: bool
    pos: np.ndarray
    quat: np.ndarray
    inv_mass: np.ndarray
    inv_inertia: np.ndarray
    factors: tuple
    rows: tuple


class ForestStep(NamedTuple):
    """What ``advance_forest`` hands back: done False when the step needs the Python path
    (nothing the caller owns changed, the rest meaningless); else the end state pos (n, 3),
    quat (n, 4), vel (n, 3), ang_mom (n, 3); impulses (m, ROWS) the joints' (next warm start);
    force, torque (m, 3) their reactions, error (m, 2) their violations; factors the kept
    ``Factors``; cache the contacts' warm start; pairs the ids that pressed together; acted
    (k,) bool the contacts that acted. It and its records come back as plain tuples: numba's
    boxing of a named one costs some µs each (docs/architecture.md#records)."""

    done: bool
    pos: np.ndarray
    quat: np.ndarray
    vel: np.ndarray
    ang_mom: np.ndarray
    impulses: np.ndarray
    force: np.ndarray
    torque: np.ndarray
    error: np.ndarray
    factors: Factors
    cache: ContactCache
    pairs: tuple
    acted: np.ndarray


@njit(cache=True, nogil=True)
def advance_forest(contacts, bodies, settings, start, forced, cache, pairs, joints, impulses,
                   break_force, factors, h):
    """Stages 3–7 of a step of h s with joints (``World._advance_jointed``), or done False.

    contacts, bodies, settings, start, forced, cache, pairs as ``advance_into`` takes
    them; joints the ``JointSet``, impulses (m, ROWS) N·s last step's, break_force (m,) N
    (inf: never breaks); factors the kept ``Factors``. Changes nothing it is given but start's
    asleep and slow_time, and those only once the step is done. Returns a plain ``ForestStep``."""
    contacts, bodies, settings = Contacts(*contacts), BodyModel(*bodies), StepSettings(*settings)
    start, forced, cache = Start(*start), Forced(*forced), ContactCache(*cache)
    joints, factors = JointSet(*joints), Factors(*factors)
    n, m = start.pos.shape[0], joints.kind.shape[0]
    vel, ang_mom, omega = forced.vel.copy(), forced.ang_mom.copy(), forced.omega.copy()
    impulses, inv_mass = impulses.copy(), forced.inv_mass
    vel_free, ang_mom_free = vel.copy(), ang_mom.copy()
    inv_inertia = held_still(bodies.inv_inertia, forced.awake)
    inv_iw = np.empty_like(forced.rotm)                                     # R I⁻¹ Rᵀ
    _inverse_inertia_kernel(forced.rotm, inv_inertia, inv_iw)
    restitution, friction = world_materials(bodies, settings)
    e, mu = materials(contacts.body, contacts.other, restitution, friction)
    # 3. the joints (``solve_joint_velocities``), the contacts, the joints again
    # the rows at the start poses: those the last step ended with, kept with its factors
    known = (factors.valid and factors.rows[3].shape[0] == m and _same(factors.pos, start.pos)
             and _same(factors.quat, start.quat))
    if known:
        jac, phi, active, nblock = factors.rows
    else:
        jac, phi = np.zeros((m, ROWS, 12)), np.zeros((m, ROWS))
        active, nblock = np.zeros((m, ROWS), np.bool_), np.zeros(m, np.int64)
    rows = JointRows(jac, phi, active, nblock, np.zeros((m, 6, 6)), np.zeros((m, ROWS)),
                     np.zeros(m), np.zeros((m, ROWS)))
    prepare_rows(joints, start.pos, start.quat, inv_mass, inv_iw, h, rows, known)
    warm_start(joints, rows, impulses, vel, omega, ang_mom, inv_mass, inv_iw)
    swept = one_sided(rows)
    done, factors = _settle(swept, joints, rows, impulses, start.pos, start.quat, vel, omega,
                            ang_mom, inv_mass, inv_iw, inv_inertia, h, settings.iterations,
                            factors)
    if not done:
        return _not_done(factors, cache, pairs)
    result = contact_impulses(
        contacts, Motion(start.pos, vel, omega, forced.accel, inv_mass, inv_iw), ang_mom, e, mu,
        cached_impulses(cache, contacts.key), h, settings.iterations, settings.threshold)
    touched = result.touched
    if swept.shape[0] or _joined_touched(joints, touched):
        if _resting_any(contacts, result.loaded, start.pos, vel, omega, settings.threshold):
            return _not_done(factors, cache, pairs)
        done, factors = _settle(swept, joints, rows, impulses, start.pos, start.quat, vel,
                                omega, ang_mom, inv_mass, inv_iw, inv_inertia, h,
                                settings.iterations, factors)
        if not done:
            return _not_done(factors, cache, pairs)
    # 4. move (a jointed body no contact reached along its joints by the free-flight parabola)
    free = _free_of_contacts(bodies.static, joints, touched)
    impact_fraction = result.impact_fraction.copy()
    moving = touched.copy()
    for i in range(n):
        if free[i]:
            moving[i] = True
            impact_fraction[i] = 0.0
    pos, quat, rotm_end = move(start.pos, start.vel, vel, forced.accel, moving, impact_fraction,
                               start.quat, ang_mom, bodies.inv_inertia, h)
    turned_with = ang_mom.copy()
    # 5. penetration, 6. the energy guard, then the joints back onto Φ = 0
    acted = result.acted
    first, second = links(bodies.static, contacts.body[acted], contacts.other[acted])
    island = islands(n, first, second)
    if contacts.body.shape[0]:
        pushed, lifted = separate(contacts, bodies, settings.planes, start.pos, pos, rotm_end,
                                  vel, omega, inv_mass, ang_mom, h)
        guard_energy(contacts, result, island, pushed, lifted, bodies, settings.gravity, start,
                     vel_free, ang_mom_free, pos, quat, vel, ang_mom, h)
    # the velocity system's factors at the start poses: the projection's first chord
    chord = (factors.factors if _made_at(factors, start.pos, start.quat, inv_mass, inv_inertia)
             else no_factors())
    done, factors, end = _project(joints, rows.jac, impulses, pos, quat, vel, ang_mom, inv_mass,
                                  inv_inertia, h, start.quat, turned_with, factors, chord)
    if not done:
        return _not_done(factors, cache, pairs)
    rotm_end = np.empty((n, 3, 3))
    _matrix_kernel(quat, rotm_end)
    hold_static(bodies.static, start, pos, quat, vel, ang_mom)
    # the joints' reactions and violations; one past its break force: the Python path breaks it
    force, torque = np.empty((m, 3)), np.empty((m, 3))
    _reactions_kernel(joints.first, joints.local_a, rows.jac, impulses, quat, h, force, torque)
    for j in range(m):
        size = np.sqrt(force[j, 0] ** 2 + force[j, 1] ** 2 + force[j, 2] ** 2)
        if size > break_force[j] * (1.0 - _MARGIN):
            return _not_done(factors, cache, pairs)
    error = np.zeros((m, 2))
    _classify_kernel(end[0], end[1], end[2], end[3], error)
    # 7. islands (contacts and joints) at rest fall asleep; the next warm start
    first, second = links(bodies.static, np.concatenate((contacts.body[acted], joints.first)),
                          np.concatenate((contacts.other[acted], joints.second)))
    island = islands(n, first, second)
    pairs = update_sleep(contacts, acted, island, bodies, start.asleep, start.slow_time, vel,
                         ang_mom, rotm_end, forced.force, forced.torque, pairs, h,
                         settings.sleep)
    return ForestStep(True, pos, quat, vel, ang_mom, impulses, force, torque, error, factors[:],
                      cache_of(contacts.key, result.impulses, result.loaded)[:], pairs,
                      acted)[:]


@njit(cache=True, nogil=True)
def _not_done(factors, cache, pairs):
    empty = np.zeros((0, 3))
    return ForestStep(False, empty, np.zeros((0, 4)), empty, empty, np.zeros((0, ROWS)), empty,
                      empty, np.zeros((0, 2)), factors[:], cache[:], pairs,
                      np.zeros(0, np.bool_))[:]


@njit(cache=True, nogil=True)
def _joined_touched(joints, touched):
    """Whether a contact acted on a joined body."""
    for j in range(joints.first.shape[0]):
        if touched[joints.first[j]] or (joints.second[j] >= 0 and touched[joints.second[j]]):
            return True
    return False


@njit(cache=True, nogil=True)
def _resting_any(contacts, loaded, pos, vel, omega, speed):
    """Whether a loaded contact closes or opens slower than speed m/s (within _MARGIN): one
    the joints' solve would hold (``projection.resting_contacts``), which only the general
    solve can."""
    for c in range(loaded.shape[0]):
        if not loaded[c]:
            continue
        b, o = contacts.body[c], contacts.other[c]
        nx, ny, nz = contacts.normal[c, 0], contacts.normal[c, 1], contacts.normal[c, 2]
        rate, size = 0.0, 0.0
        for side in range(2):
            body = b if side == 0 else o
            if body < 0:
                continue
            sign = 1.0 if side == 0 else -1.0
            ax = contacts.point[c, 0] - pos[body, 0]
            ay = contacts.point[c, 1] - pos[body, 1]
            az = contacts.point[c, 2] - pos[body, 2]
            terms = (nx * vel[body, 0], ny * vel[body, 1], nz * vel[body, 2],
                     (ay * nz - az * ny) * omega[body, 0], (az * nx - ax * nz) * omega[body, 1],
                     (ax * ny - ay * nx) * omega[body, 2])
            for t in terms:
                rate += sign * t
                size += abs(t)
        if abs(rate) < speed + _MARGIN * (size + speed):
            return True
    return False


@njit(cache=True, nogil=True)
def _free_of_contacts(static, joints, touched):
    """(n,) bool: the jointed bodies no contact acted on, nor on any body joined to them (they
    move by the free-flight parabola from their end velocity; World._advance_jointed)."""
    n = touched.shape[0]
    free = np.zeros(n, np.bool_)
    for j in range(joints.first.shape[0]):
        free[joints.first[j]] = True
        if joints.second[j] >= 0:
            free[joints.second[j]] = True
    if touched.any():
        first, second = links(static, joints.first, joints.second)
        chained = islands(n, first, second)
        reached = np.zeros(n, np.bool_)  # by island label (a body row)
        for i in range(n):
            if touched[i]:
                reached[chained[i]] = True
        for i in range(n):
            if reached[chained[i]]:
                free[i] = False
    for i in range(n):
        if touched[i]:
            free[i] = False
    return free


@njit(cache=True, nogil=True)
def _same(a, b):
    """``np.array_equal`` of two arrays of the same dimensions."""
    if a.shape != b.shape:
        return False
    x, y = a.ravel(), b.ravel()
    for k in range(x.shape[0]):
        if x[k] != y[k]:
            return False
    return True


@njit(cache=True, nogil=True)
def _made_at(factors, pos, quat, inv_mass, inv_inertia):
    """Whether the kept ``Factors`` are the velocity system's at these poses and masses
    (``FactorCache.get``)."""
    return (factors.valid and _same(factors.pos, pos) and _same(factors.quat, quat)
            and _same(factors.inv_mass, inv_mass) and _same(factors.inv_inertia, inv_inertia))


@njit(cache=True, nogil=True)
def _velocities(joints, rows, impulses, pos, quat, vel, ang_mom, inv_mass, inv_inertia, inv_iw,
                factors):
    """``projection.project_velocities`` without kept rows, on the tree, its factors reused
    when made at the same poses and masses (``FactorCache``); rows (jac, phi, active, nblock),
    kept with new factors (nothing may change them after). Returns (False: the tree solve
    failed, the kept ``Factors``)."""
    if not rows[3].any():
        return True, factors
    have = _made_at(factors, pos, quat, inv_mass, inv_inertia)
    # the joints as the plain tuple Python passes: one compiled signature for both callers
    solved, made = velocities_forest(joints[:], rows, impulses, vel, ang_mom, inv_mass, inv_iw,
                                     factors.factors, have)
    if not solved:
        return False, factors
    if not have:
        factors = Factors(True, pos.copy(), quat.copy(), inv_mass.copy(), inv_inertia.copy(),
                          made, rows)
    return True, factors


@njit(cache=True, nogil=True)
def _settle(swept, joints, rows, impulses, pos, quat, vel, omega, ang_mom, inv_mass, inv_iw,
            inv_inertia, h, iterations, factors):
    """``table.settle_joints`` without kept rows; (False: the tree solve failed, ``Factors``)."""
    passes = SETTLE_PASSES if swept.shape[0] else 1
    four = (rows.jac, rows.phi, rows.active, rows.nblock)
    for _ in range(passes):
        if swept.shape[0]:
            sweep_joints(swept, joints, rows, impulses, vel, omega, ang_mom, inv_mass, inv_iw,
                         h, iterations)
        done, factors = _velocities(joints, four, impulses, pos, quat, vel, ang_mom, inv_mass,
                                    inv_inertia, inv_iw, factors)
        if not done:
            return False, factors
        omega[:] = spin_of(inv_iw, ang_mom)
    return True, factors


@njit(cache=True, nogil=True)
def _project(joints, start_jac, impulses, pos, quat, vel, ang_mom, inv_mass, inv_inertia, h,
             start_quat, turned_with, factors, chord):
    """``projection.project_positions`` on the tree, no contact held: (False where the Python
    path must take over, the kept ``Factors``, the rows at the end poses). chord: the velocity
    system's factors at the start poses (``newton_forest``)."""
    n = pos.shape[0]
    saved = (pos.copy(), quat.copy(), vel.copy(), ang_mom.copy(), impulses.copy())
    before = _kinetic_kernel(vel, ang_mom, quat, inv_mass, inv_inertia)
    moved = turned_with.copy()
    free = fresh_free(start_quat, moved, inv_inertia, h)
    turned = free.copy()
    for i in range(n):
        for a in range(1, 4):
            turned[i, a] = -free[i, a]
    later = np.empty_like(quat)  # whatever turned the bodies after the rotation step
    _mul_kernel(quat, turned, later)
    # the joints a plain tuple and shake, spin computed, not constants, as Python passes them:
    # numba would type constant flags as literals and compile newton_forest again for each
    # (docs/architecture.md#records)
    shake = start_jac.shape[0] == joints.kind.shape[0]  # True, as a value
    status, _, jac, phi, active, nblock = newton_forest(
        joints[:], start_jac, shake, shake, start_quat, moved, free, later, impulses, pos, quat,
        vel, ang_mom, inv_mass, inv_inertia, h, chord)
    if status == NOT_SOLVED:
        return False, factors, (jac, phi, active, nblock)
    converged = status == CLOSED
    if converged:
        done, factors = _velocities(joints, (jac, phi, active, nblock), impulses, pos, quat,
                                    vel, ang_mom, inv_mass, inv_inertia,
                                    world_response(quat, inv_inertia), factors)
        if not done:
            return False, factors, (jac, phi, active, nblock)
    after = _kinetic_kernel(vel, ang_mom, quat, inv_mass, inv_inertia)
    if not converged or after > before * (1.0 + SHAKE_ENERGY_ALLOWANCE) + 1e-300:
        pos[:], quat[:], vel[:], ang_mom[:], impulses[:] = saved
        shake = not shake  # False, as a value
        status, _, jac, phi, active, nblock = newton_forest(
            joints[:], np.zeros((0, ROWS, 12)), shake, shake, quat, np.zeros((n, 3)), quat,
            quat, impulses, pos, quat, vel, ang_mom, inv_mass, inv_inertia, h, chord)
        if status == NOT_SOLVED:
            return False, factors, (jac, phi, active, nblock)
        done, factors = _velocities(joints, (jac, phi, active, nblock), impulses, pos, quat,
                                    vel, ang_mom, inv_mass, inv_inertia,
                                    world_response(quat, inv_inertia), factors)
        if not done:
            return False, factors, (jac, phi, active, nblock)
    for j in range(nblock.shape[0]):  # a violated limit is pushed back in the Python path
        for r in (LOWER, UPPER):
            if active[j, r] and phi[j, r] < 0.0:
                return False, factors, (jac, phi, active, nblock)
    return True, factors, (jac, phi, active, nblock)
