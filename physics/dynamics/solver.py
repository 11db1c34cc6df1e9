"""Contact impulses: sequential impulses with restitution, friction and speculative gaps
(docs/physics.md#sequential-impulses; the scheme of Box2D v3's contact solver, with the restitution
target taken at the
time of impact inside the step).

Per step, for every contact point with offset r from the centre of mass and normal n:
- normal: the accumulated impulse λ_n ≥ 0 makes the normal velocity v_n = (v + ω × r)·n at least
  −s/h while the gap s > 0 (speculative: the point may close the gap but not cross it) and at
  least 0 once touching. A penetration is never pushed out by a velocity bias, which would inject
  energy; positions are projected instead (world.py).
- friction: the tangential impulse is clamped to the Coulomb cone |λ_t| ≤ μ λ_n.
- body–body impacts (before the warm start): pairwise collisions, v_n' = −e·v_n per approaching
  contact, swept until none approaches faster than the threshold (see ``_impact_kernel``); this
  is what passes an impact along a row of touching balls (Newton's cradle), which a restitution
  target per contact cannot do.
- wall restitution: a contact whose impact speed exceeds a threshold is then driven to
  v_n = −e·v_impact (+ what gravity adds after the impact), with λ_n still clamped ≥ 0, swept
  until the impulses stop changing (so four corners landing together share the impact evenly).
  The impact speed and time come from the gap and the constant acceleration over the step
  (s + v₀t + ½at² = 0), not from the end-of-step velocity, which would overstate it by up to g·h.
- warm start: the previous step's accumulated impulses are applied first.
- islands of very unequal masses (a heavy box on a light one): their normal impulses are solved
  exactly (dynamics/stacks.py) and replace the warm start of those rows, since Gauss–Seidel
  passes an impulse along such a chain far too slowly (docs/physics.md#heavy-on-light).
Impulses change the world angular momentum directly: L += r × P
(docs/physics.md#sequential-impulses), added once per
contact from its total impulse when the sweeps are done (ω follows every impulse meanwhile).
A contact between two bodies is a wall contact whose wall moves: the second body takes −P at its
own offset, velocities are relative and the effective mass adds both bodies' terms.
Body–body penetration left after the step is removed by ``push_apart``, a position pass.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit, prange

from physics.collision.broadphase import chunk_bounds
from physics.collision.contact import Contacts, manifold_end
from physics.dynamics.stacks import solve_stacks
from physics.settings import (
    PARALLEL_MIN_CONTACTS,
    RESTITUTION_MAX_SWEEPS,
    RESTITUTION_TOLERANCE,
    SWEEP_SLABS,
)


class ContactResult(NamedTuple):
    """What the contacts did in one step (a record: compiled code returns it whole).

    Per contact: impulses (k, 3) accumulated normal/tangent impulses, N·s; collision (k,) N·s
    normal impulse of the body–body collision pass; loaded (k,) bool: the accumulated normal
    impulse is positive (the contacts worth warm-starting next step); acted (k,) bool: loaded or
    collided. Per body: touched (n,) bool: a contact acted on it; walled (n,) bool: a wall
    contact acted on it; impact_fraction (n,) in [0, 1]: when in the step its earliest bounce
    happened (1 where none did).
    """

    impulses: np.ndarray
    collision: np.ndarray
    loaded: np.ndarray
    acted: np.ndarray
    touched: np.ndarray
    walled: np.ndarray
    impact_fraction: np.ndarray


class Motion(NamedTuple):
    """The n bodies as the solver reads and moves them (vel and omega change in place).

    pos (n, 3) m centre of mass; vel (n, 3) m/s; omega (n, 3) rad/s world angular velocity;
    accel (n, 3) m/s² the constant acceleration of the step (gravity + force/m); inv_mass (n,)
    1/kg; inv_iw (n, 3, 3) 1/(kg·m²) world inverse inertia.
    """

    pos: np.ndarray
    vel: np.ndarray
    omega: np.ndarray
    accel: np.ndarray
    inv_mass: np.ndarray
    inv_iw: np.ndarray


class ContactRows(NamedTuple):
    """The solver's rows of k contacts (Box2D's contact constraints), made once a step.

    By row, in the order the sweeps visit them (``contact_impulses``: row i holds contact
    order[i], contact c's row is slot[c]): axes (k, 3, 3) the directions: normal, tangent 1,
    tangent 2; jac (k, 12, 3) the Jacobian block (see _ARM); mass (k, 3) kg effective masses
    along the axes; packed (see below). By contact: bounce (k,) bool a wall
    contact hit faster than the restitution threshold; collide (k,) bool a body pair with
    restitution; target (k,) m/s the normal velocity a bounce leaves with (walls; 0 for a
    pair); tau (k,) in [0, 1] when in the step the contact hit (a pair's set by the collision
    pass, 1 until then); packed (k, _ROW) what the sweeps read of each contact, in
    one row (see _ROW): the axes, the Jacobian block and the masses, the gap's bias and the
    friction coefficient. axes, jac and mass are views of packed (``contact_rows``): each
    value is written once, and every kernel reads the same memory.
    """

    axes: np.ndarray
    jac: np.ndarray
    mass: np.ndarray
    bounce: np.ndarray
    collide: np.ndarray
    target: np.ndarray
    tau: np.ndarray
    packed: np.ndarray


# Rows of a contact's Jacobian block ``jac`` (k, 12, 3), Box2D's precomputed contact constraint:
# for each direction d_j of contact c (j = 0 the normal, 1 and 2 the tangents) the first body's
# r × d_j (row _ARM + j) and I_w⁻¹ (r × d_j) (row _TURN + j), then the same of the second body
# (rows _OTHER + …; zero for a wall). Since (ω × r)·d = ω·(r × d), the relative velocity along
# d_j is (v_b − v_o)·d_j + ω_b·(r_b × d_j) − ω_o·(r_o × d_j), and an impulse λ d_j changes ω_b
# by λ I_w⁻¹ (r_b × d_j): each visit of a contact in a sweep is a few dot products.
_ARM, _TURN, _OTHER = 0, 3, 6
# Columns of a row of ``ContactRows.packed`` (k, _ROW), what a sweep reads of a contact: the axes
# row by row (_AXES + 3 j + a: direction j's coordinate a), the Jacobian block row by row (its
# four parts from _B_ARM, _B_TURN, _O_ARM and _O_TURN, each + 3 j + a), the three effective
# masses, the speculative gap's bias max(s, 0)/h m/s, the friction coefficient and one unused
# column, so that a row is 17 triples: rows 0–2 the axes, 3–14 the Jacobian block, 15 the masses
# (``contact_rows`` makes axes, jac and mass those views of it)
_AXES, _JAC, _MASS, _BIAS, _MU, _ROW = 0, 9, 45, 48, 49, 51
_B_ARM, _B_TURN = _JAC + 3 * _ARM, _JAC + 3 * _TURN
_O_ARM, _O_TURN = _JAC + 3 * (_OTHER + _ARM), _JAC + 3 * (_OTHER + _TURN)


@njit(cache=True, inline='always')
def _relative_velocity(r, j, b, o, rows, vel, omega):
    """Velocity of body b's point of the contact of packed row r minus body o's (0 for a
    wall) along its direction j (0 the normal, 1 and 2 the tangents); rows (k, _ROW)
    ``ContactRows.packed``, read as the sweeps read it (2-D and contiguous, cheaper to index
    than the 3-D views axes and jac)."""
    u = 0.0
    for a in range(3):
        u += vel[b, a] * rows[r, _AXES + 3 * j + a] + omega[b, a] * rows[r, _B_ARM + 3 * j + a]
    if o >= 0:
        for a in range(3):
            u -= (vel[o, a] * rows[r, _AXES + 3 * j + a]
                  + omega[o, a] * rows[r, _O_ARM + 3 * j + a])
    return u


@njit(cache=True, inline='always')
def _push(r, j, b, o, impulse, rows, vel, omega, inv_mass):
    """Impulse λ d_j on body b at the contact of packed row r and −λ d_j on body o (if not a
    wall): v += P/m, ω += I_w⁻¹ (r × P). Angular momenta are updated once, from the
    accumulated impulses, at the end of the step (``_restitution_kernel``)."""
    for a in range(3):
        vel[b, a] += inv_mass[b] * impulse * rows[r, _AXES + 3 * j + a]
        omega[b, a] += impulse * rows[r, _B_TURN + 3 * j + a]
    if o >= 0:
        for a in range(3):
            vel[o, a] -= inv_mass[o] * impulse * rows[r, _AXES + 3 * j + a]
            omega[o, a] -= impulse * rows[r, _O_TURN + 3 * j + a]


@njit(cache=True, nogil=True)
def _impact_kernel(contacts, rows, slot, restitution, threshold, collision, motion, h, iterations):
    """The collision pass of the body pairs (``Contacts``, their ``ContactRows``, contact c's
    packed row slot[c]; restitution (k,) per contact; threshold m/s) on the velocities of
    ``motion``; collision (k,) N·s receives the impulses and rows.tau the pairs' impact times.
    Records as plain tuples (docs/architecture.md#records)."""
    contacts, rows, motion = Contacts(*contacts), ContactRows(*rows), Motion(*motion)
    body, other, collide = contacts.body, contacts.other, rows.collide
    k = body.shape[0]
    # Body–body impacts first, from the velocities before any contact impulse (so a resting
    # stack's warm start cannot look like an impact), as pairwise collisions (Guendelman,
    # Bridson & Fedkiw 2003, §5): the approaching points of one pair's manifold leave at
    # v_n' = −e·v_n, sweeping the pairs until none approaches faster than the threshold. Each
    # such collision loses energy (e ≤ 1), and an impact travels along a chain of touching
    # bodies (Newton's cradle) one pair at a time. The points of one manifold (a box landing
    # flat on another: four corners) take their impulses together, converged like the walls'
    # restitution pass: one corner after the other would tip the box and send it sliding.
    # A pair whose two bodies have not changed velocity since its last visit would find what it
    # found then (not approaching): it is skipped. changed (n,) holds when each body last
    # changed, counted in visits (sweep · k + first contact of the pair), so the skip is exact.
    changed = np.full(motion.vel.shape[0], -1, dtype=np.int64)
    target, given = np.empty(k), np.empty(k)  # per contact; one allocation, not one per visit
    # the manifolds that may collide, found once: contacts starts[m]…ends[m] − 1 (the contacts
    # of a pair are consecutive); walls and pairs without restitution are not swept at all
    starts, ends = np.empty(k, dtype=np.int64), np.empty(k, dtype=np.int64)
    runs = 0
    first = 0
    while first < k:
        last = manifold_end(body, other, first)
        if collide[first]:
            starts[runs], ends[runs] = first, last
            runs += 1
        first = last
    # each manifold is collided in the loop's body rather than by a helper taking the records:
    # numba counted a reference of each of their arrays per visit (docs/architecture.md#records)
    sep, packed, impact = contacts.separation, rows.packed, rows.tau
    vel, omega, inv_mass = motion.vel, motion.omega, motion.inv_mass
    for sweep in range(iterations):
        active = False
        for m in range(runs):
            first, last = starts[m], ends[m]
            b, o = body[first], other[first]
            if sweep > 0 and max(changed[b], changed[o]) < (sweep - 1) * k + first:
                continue
            # collide the approaching points first…last − 1 of b and o's manifold together:
            # each is driven to v_n' = −e·v_n with a non-negative impulse, swept to convergence
            approaching = False
            for c in range(first, last):
                given[c] = 0.0
                vn = _relative_velocity(slot[c], 0, b, o, packed, vel, omega)
                gap = max(sep[c], 0.0)
                # slow, or does not close the gap this step: left out (a target it already
                # meets)
                if vn >= -threshold or gap > -vn * h:
                    target[c] = -np.inf
                    continue
                target[c] = -restitution[c] * vn
                if collision[c] == 0.0:
                    impact[c] = gap / (-vn * h)
                approaching = True
            if not approaching:
                continue
            for _ in range(RESTITUTION_MAX_SWEEPS):
                change, total = 0.0, 0.0
                for c in range(first, last):
                    if target[c] == -np.inf:
                        continue
                    r = slot[c]
                    vn = _relative_velocity(r, 0, b, o, packed, vel, omega)
                    new = max(given[c] + packed[r, _MASS] * (target[c] - vn), 0.0)
                    _push(r, 0, b, o, new - given[c], packed, vel, omega, inv_mass)
                    change = max(change, abs(new - given[c]))
                    given[c] = new
                    total = max(total, new)
                if last - first == 1 or change <= RESTITUTION_TOLERANCE * total:
                    break
            for c in range(first, last):
                collision[c] += given[c]
            changed[b] = changed[o] = sweep * k + first
            active = True
        if not active:
            break


@njit(cache=True, nogil=True)
def _warm_start(first, last, order, body, other, rows, impulses, vel, omega, inv_mass):
    """Apply the impulses from the previous step of the contacts of rows first … last − 1
    (row i contact order[i]; before the first sweep).

    ``_push`` per direction, the two bodies' velocities held in locals over the points of one
    manifold, as ``_sweep`` holds them: each push then adds to registers rather than storing
    and reloading the same memory. The same additions in the same order, so the same bits.
    rows (k, _ROW) the packed rows (``ContactRows.packed``), as the sweeps read them."""
    i = first
    while i < last:
        c = order[i]
        b, o = body[c], other[c]
        mb = inv_mass[b]
        vb0, vb1, vb2 = vel[b, 0], vel[b, 1], vel[b, 2]
        wb0, wb1, wb2 = omega[b, 0], omega[b, 1], omega[b, 2]
        mo = vo0 = vo1 = vo2 = wo0 = wo1 = wo2 = 0.0
        if o >= 0:
            mo = inv_mass[o]
            vo0, vo1, vo2 = vel[o, 0], vel[o, 1], vel[o, 2]
            wo0, wo1, wo2 = omega[o, 0], omega[o, 1], omega[o, 2]
        while True:
            for j in range(3):
                impulse = impulses[c, j]
                d, t, u = _AXES + 3 * j, _B_TURN + 3 * j, _O_TURN + 3 * j
                vb0 += mb * impulse * rows[i, d]
                wb0 += impulse * rows[i, t]
                vb1 += mb * impulse * rows[i, d + 1]
                wb1 += impulse * rows[i, t + 1]
                vb2 += mb * impulse * rows[i, d + 2]
                wb2 += impulse * rows[i, t + 2]
                if o >= 0:
                    vo0 -= mo * impulse * rows[i, d]
                    wo0 -= impulse * rows[i, u]
                    vo1 -= mo * impulse * rows[i, d + 1]
                    wo1 -= impulse * rows[i, u + 1]
                    vo2 -= mo * impulse * rows[i, d + 2]
                    wo2 -= impulse * rows[i, u + 2]
            i += 1
            if i == last:
                break
            c = order[i]
            if body[c] != b or other[c] != o:
                break
        vel[b, 0], vel[b, 1], vel[b, 2] = vb0, vb1, vb2
        omega[b, 0], omega[b, 1], omega[b, 2] = wb0, wb1, wb2
        if o >= 0:
            vel[o, 0], vel[o, 1], vel[o, 2] = vo0, vo1, vo2
            omega[o, 0], omega[o, 1], omega[o, 2] = wo0, wo1, wo2


@njit(cache=True, nogil=True, fastmath={'contract'})
def _sweep(first, last, order, body, other, rows, impulses, vel, omega, inv_mass):
    """One Gauss–Seidel sweep over the contacts of rows first … last − 1 (row i contact
    order[i]): normal impulse, then friction.

    The points of one manifold (consecutive contacts of one pair, or of one body with the
    walls) are visited with the two bodies' velocities held in locals, loaded before the first
    point and stored after the last, as Box2D v3's contact solver does per manifold: each
    point's impulse then reaches the next point through registers instead of a store and a
    reload of the same memory. The arithmetic is that of ``_relative_velocity`` and ``_push``,
    term by term, except that a product and the sum it enters may be one fused multiply-add
    (fastmath 'contract': rounding only, no reordering). What a visit reads of a contact is its
    row of rows (k, ``_ROW``), ``ContactRows.packed``: one array indexed where there were
    five, and the gap's bias divided once a step rather than once a sweep (on bench/pile.py's
    1 000 cubes the whole contact solve some 7 % faster, the packing included; the bits the
    same). The rows' axes, jac and mass are views of the packed rows (``contact_rows``), so no
    pass copies them out (docs/architecture.md#records)."""
    i = first
    while i < last:
        c = order[i]
        b, o = body[c], other[c]
        mb = inv_mass[b]
        vb0, vb1, vb2 = vel[b, 0], vel[b, 1], vel[b, 2]
        wb0, wb1, wb2 = omega[b, 0], omega[b, 1], omega[b, 2]
        mo = vo0 = vo1 = vo2 = wo0 = wo1 = wo2 = 0.0
        if o >= 0:
            mo = inv_mass[o]
            vo0, vo1, vo2 = vel[o, 0], vel[o, 1], vel[o, 2]
            wo0, wo1, wo2 = omega[o, 0], omega[o, 1], omega[o, 2]
        while True:
            # normal: v_n = (v_b − v_o)·n + ω_b·(r_b × n) − ω_o·(r_o × n)
            vn = 0.0
            vn += vb0 * rows[i, _AXES] + wb0 * rows[i, _B_ARM]
            vn += vb1 * rows[i, _AXES + 1] + wb1 * rows[i, _B_ARM + 1]
            vn += vb2 * rows[i, _AXES + 2] + wb2 * rows[i, _B_ARM + 2]
            if o >= 0:
                vn -= vo0 * rows[i, _AXES] + wo0 * rows[i, _O_ARM]
                vn -= vo1 * rows[i, _AXES + 1] + wo1 * rows[i, _O_ARM + 1]
                vn -= vo2 * rows[i, _AXES + 2] + wo2 * rows[i, _O_ARM + 2]
            old = impulses[c, 0]
            new = max(old - rows[i, _MASS] * (vn + rows[i, _BIAS]), 0.0)
            impulses[c, 0] = new
            o1, o2 = impulses[c, 1], impulses[c, 2]
            # a speculative contact left apart has the point 0 for its cone: no impulse at all
            if not (new == 0.0 and old == 0.0 and o1 == 0.0 and o2 == 0.0):
                d = new - old
                vb0 += mb * d * rows[i, _AXES]
                vb1 += mb * d * rows[i, _AXES + 1]
                vb2 += mb * d * rows[i, _AXES + 2]
                wb0 += d * rows[i, _B_TURN]
                wb1 += d * rows[i, _B_TURN + 1]
                wb2 += d * rows[i, _B_TURN + 2]
                if o >= 0:
                    vo0 -= mo * d * rows[i, _AXES]
                    vo1 -= mo * d * rows[i, _AXES + 1]
                    vo2 -= mo * d * rows[i, _AXES + 2]
                    wo0 -= d * rows[i, _O_TURN]
                    wo1 -= d * rows[i, _O_TURN + 1]
                    wo2 -= d * rows[i, _O_TURN + 2]
                # Coulomb cone on the two tangent impulses together
                u1 = 0.0
                u1 += vb0 * rows[i, _AXES + 3] + wb0 * rows[i, _B_ARM + 3]
                u1 += vb1 * rows[i, _AXES + 4] + wb1 * rows[i, _B_ARM + 4]
                u1 += vb2 * rows[i, _AXES + 5] + wb2 * rows[i, _B_ARM + 5]
                u2 = 0.0
                u2 += vb0 * rows[i, _AXES + 6] + wb0 * rows[i, _B_ARM + 6]
                u2 += vb1 * rows[i, _AXES + 7] + wb1 * rows[i, _B_ARM + 7]
                u2 += vb2 * rows[i, _AXES + 8] + wb2 * rows[i, _B_ARM + 8]
                if o >= 0:
                    u1 -= vo0 * rows[i, _AXES + 3] + wo0 * rows[i, _O_ARM + 3]
                    u1 -= vo1 * rows[i, _AXES + 4] + wo1 * rows[i, _O_ARM + 4]
                    u1 -= vo2 * rows[i, _AXES + 5] + wo2 * rows[i, _O_ARM + 5]
                    u2 -= vo0 * rows[i, _AXES + 6] + wo0 * rows[i, _O_ARM + 6]
                    u2 -= vo1 * rows[i, _AXES + 7] + wo1 * rows[i, _O_ARM + 7]
                    u2 -= vo2 * rows[i, _AXES + 8] + wo2 * rows[i, _O_ARM + 8]
                l1 = o1 - rows[i, _MASS + 1] * u1
                l2 = o2 - rows[i, _MASS + 2] * u2
                limit = rows[i, _MU] * new
                squared = l1 * l1 + l2 * l2
                if squared > limit * limit:  # sliding (the root only then: it is slow)
                    scale = limit / np.sqrt(squared)
                    l1 *= scale
                    l2 *= scale
                impulses[c, 1] = l1
                impulses[c, 2] = l2
                d1, d2 = l1 - o1, l2 - o2
                vb0 += mb * (d1 * rows[i, _AXES + 3] + d2 * rows[i, _AXES + 6])
                vb1 += mb * (d1 * rows[i, _AXES + 4] + d2 * rows[i, _AXES + 7])
                vb2 += mb * (d1 * rows[i, _AXES + 5] + d2 * rows[i, _AXES + 8])
                wb0 += d1 * rows[i, _B_TURN + 3] + d2 * rows[i, _B_TURN + 6]
                wb1 += d1 * rows[i, _B_TURN + 4] + d2 * rows[i, _B_TURN + 7]
                wb2 += d1 * rows[i, _B_TURN + 5] + d2 * rows[i, _B_TURN + 8]
                if o >= 0:
                    vo0 -= mo * (d1 * rows[i, _AXES + 3] + d2 * rows[i, _AXES + 6])
                    vo1 -= mo * (d1 * rows[i, _AXES + 4] + d2 * rows[i, _AXES + 7])
                    vo2 -= mo * (d1 * rows[i, _AXES + 5] + d2 * rows[i, _AXES + 8])
                    wo0 -= d1 * rows[i, _O_TURN + 3] + d2 * rows[i, _O_TURN + 6]
                    wo1 -= d1 * rows[i, _O_TURN + 4] + d2 * rows[i, _O_TURN + 7]
                    wo2 -= d1 * rows[i, _O_TURN + 5] + d2 * rows[i, _O_TURN + 8]
            i += 1
            if i == last:
                break
            c = order[i]
            if body[c] != b or other[c] != o:
                break
        vel[b, 0], vel[b, 1], vel[b, 2] = vb0, vb1, vb2
        omega[b, 0], omega[b, 1], omega[b, 2] = wb0, wb1, wb2
        if o >= 0:
            vel[o, 0], vel[o, 1], vel[o, 2] = vo0, vo1, vo2
            omega[o, 0], omega[o, 1], omega[o, 2] = wo0, wo1, wo2


@njit(cache=True, nogil=True)
def _serial_sweeps(order, contacts, rows, impulses, motion, iterations):
    """Warm start, then the velocity sweeps over every row in order (row i that of contact
    order[i]), on the calling thread. Records as plain tuples (docs/architecture.md#records)."""
    contacts, rows, motion = Contacts(*contacts), ContactRows(*rows), Motion(*motion)
    body, other = contacts.body, contacts.other
    packed = rows.packed
    vel, omega, inv_mass = motion.vel, motion.omega, motion.inv_mass
    k = body.shape[0]
    _warm_start(0, k, order, body, other, packed, impulses, vel, omega, inv_mass)
    for _ in range(iterations):
        _sweep(0, k, order, body, other, packed, impulses, vel, omega, inv_mass)


@njit(cache=True, nogil=True, parallel=True)
def _slab_sweeps(order, starts, contacts, rows, impulses, motion, iterations):
    """Warm start and the velocity sweeps with the contacts in groups (see ``sweep_groups``):
    the even slab groups side by side, then the odd ones, then the leftover group on this
    thread. Records as plain tuples (docs/architecture.md#records)."""
    contacts, rows, motion = Contacts(*contacts), ContactRows(*rows), Motion(*motion)
    body, other = contacts.body, contacts.other
    packed = rows.packed
    vel, omega, inv_mass = motion.vel, motion.omega, motion.inv_mass
    slabs = starts.shape[0] - 2
    for phase in range(2):
        for t in prange(slabs // 2):
            g = 2 * t + phase
            _warm_start(starts[g], starts[g + 1], order, body, other, packed, impulses, vel,
                        omega, inv_mass)
    _warm_start(starts[slabs], starts[slabs + 1], order, body, other, packed, impulses, vel,
                omega, inv_mass)
    for _ in range(iterations):
        for phase in range(2):
            for t in prange(slabs // 2):
                g = 2 * t + phase
                _sweep(starts[g], starts[g + 1], order, body, other, packed, impulses, vel,
                       omega, inv_mass)
        _sweep(starts[slabs], starts[slabs + 1], order, body, other, packed, impulses, vel,
               omega, inv_mass)


@njit(cache=True, nogil=True)
def _restitution_kernel(contacts, rows, slot, impulses, collision, motion):
    """The wall restitution pass (contact c's packed row slot[c]). Records as plain tuples
    (docs/architecture.md#records)."""
    contacts, rows, motion = Contacts(*contacts), ContactRows(*rows), Motion(*motion)
    body, other = contacts.body, contacts.other
    packed, bounce, target = rows.packed, rows.bounce, rows.target
    vel, omega, inv_mass = motion.vel, motion.omega, motion.inv_mass
    k = body.shape[0]
    # Restitution pass (Box2D: only contacts that carry load and hit faster than the threshold).
    for c in range(k):
        if bounce[c] and impulses[c, 0] <= 0.0:
            bounce[c] = False
    bouncing = np.flatnonzero(bounce)
    # Swept to convergence, not for a fixed count: a box landing flat bounces on four corners
    # whose impulses Gauss–Seidel shares out only geometrically, and a residual after 10 sweeps
    # (~1e-6 relative) would start a spin that grows with every later bounce.
    for _ in range(RESTITUTION_MAX_SWEEPS):
        change, total = 0.0, 0.0
        for c in bouncing:
            b, o, r = body[c], other[c], slot[c]
            vn = _relative_velocity(r, 0, b, o, packed, vel, omega)
            old = impulses[c, 0]
            new = max(old - packed[r, _MASS] * (vn - target[c]), 0.0)
            impulses[c, 0] = new
            _push(r, 0, b, o, new - old, packed, vel, omega, inv_mass)
            change = max(change, abs(new - old))
            total = max(total, new)
        if change <= RESTITUTION_TOLERANCE * total:
            break


@njit(cache=True, nogil=True)
def _angular_impulse_kernel(body, other, point, axes, slot, impulses, collision, pos, vel_forces,
                            accel, impact_fraction, h, ang_mom):
    """L += r × P into ang_mom (n, 3) for the whole impulse P each contact gave (the collision
    pass's and the accumulated one, which includes the warm start; contact c's axes are row
    slot[c] of axes), r from the body's centre at
    the moment ``drift`` (dynamics/integrator.py) lets the impulse act: at the impact
    x + tv₀ + ½at², t = impact_fraction·h, for a body that bounced (v₀ = vel_forces − ah, the
    velocity before this step's forces); at the step's start for one in resting contact (drift
    moves it by h·v₁ from x). The orbital momentum x × mv then changes by exactly c × P, and
    c × P + (p − c) × P = p × P cancels between the two bodies of a contact: total angular
    momentum is kept (docs/physics.md#angular-momentum-of-impacts). The centres are found once
    a body, not once a contact (the same numbers)."""
    centre = np.empty_like(pos)
    for i in range(pos.shape[0]):
        t = impact_fraction[i] * h if impact_fraction[i] < 1.0 else 0.0
        for a in range(3):
            centre[i, a] = _centre(i, a, pos, vel_forces, accel, t, h)
    for c in range(body.shape[0]):
        b, o, r = body[c], other[c], slot[c]
        normal, first, second = impulses[c, 0] + collision[c], impulses[c, 1], impulses[c, 2]
        impulse = (normal * axes[r, 0, 0] + first * axes[r, 1, 0] + second * axes[r, 2, 0],
                   normal * axes[r, 0, 1] + first * axes[r, 1, 1] + second * axes[r, 2, 1],
                   normal * axes[r, 0, 2] + first * axes[r, 1, 2] + second * axes[r, 2, 2])
        x, y, z = point[c, 0], point[c, 1], point[c, 2]
        _add_moment(ang_mom, b, x, y, z, centre, impulse, 1.0)
        if o >= 0:
            _add_moment(ang_mom, o, x, y, z, centre, impulse, -1.0)


@njit(cache=True, inline='always')
def _add_moment(ang_mom, row, x, y, z, centre, impulse, sign):
    """ang_mom[row] += sign · ((x, y, z) − c) × P for the impulse P (a 3-tuple), c = centre[row]
    the body's centre when its impulses act (see ``_angular_impulse_kernel``)."""
    rx = x - centre[row, 0]
    ry = y - centre[row, 1]
    rz = z - centre[row, 2]
    px, py, pz = impulse
    ang_mom[row, 0] += sign * (ry * pz - rz * py)
    ang_mom[row, 1] += sign * (rz * px - rx * pz)
    ang_mom[row, 2] += sign * (rx * py - ry * px)


@njit(cache=True, inline='always')
def _centre(row, a, pos, vel_forces, accel, t, h):
    """Coordinate a of x + t v₀ + ½ a t², v₀ = vel_forces − a h (before the step's forces)."""
    return pos[row, a] + t * (vel_forces[row, a] - accel[row, a] * h) + 0.5 * accel[row, a] * t * t


@njit(cache=True, inline='always')
def _arm(rx, ry, rz, dx, dy, dz, i00, i01, i02, i10, i11, i12, i20, i21, i22):
    """r × d, I_w⁻¹ (r × d) (the rows of I_w⁻¹ i0…, i1…, i2…) and (r × d)·I_w⁻¹ (r × d): one
    direction's Jacobian rows of one body and its term of the effective mass."""
    ax, ay, az = ry * dz - rz * dy, rz * dx - rx * dz, rx * dy - ry * dx
    tx = i00 * ax + i01 * ay + i02 * az
    ty = i10 * ax + i11 * ay + i12 * az
    tz = i20 * ax + i21 * ay + i22 * az
    return ax, ay, az, tx, ty, tz, ax * tx + ay * ty + az * tz


@njit(cache=True, nogil=True)
def _prepare_range(first, last, order, contacts, restitution, friction, motion, h, threshold,
                   rows):
    """Fill in rows first … last − 1 of ``ContactRows`` rows, row i that of contact order[i]
    of ``contacts`` (restitution and friction (k,) per contact, the bodies' ``Motion``, h s,
    threshold m/s): packed row i, and the per-contact fields at order[i].

    Per contact: the directions axes (k, 3, 3) (normal, tangent 1, tangent 2); the Jacobian
    block jac (k, 12, 3) (see _ARM); effective masses (k, 3) along the normal and the tangents:
    1 / (1/m + (r × d)·I_w⁻¹ (r × d) + the same for the other body) — the impulse per unit
    change of the relative velocity along d (docs/physics.md#sequential-impulses); and the
    restitution pass's inputs: bounce (k,) a wall contact hit faster than the threshold this
    step, collide (k,) a body pair with restitution, target (k,) m/s the normal velocity a bounce
    leaves with, tau (k,) when in the step it hit (see solve_contacts) — a body pair's are
    the collision pass's (``_impact_kernel``), which finds its impact time itself, so the rows
    give it no target and tau 1 until that pass sets it; and the rest of each contact's packed
    row for the sweeps (see _ROW): its gap's bias and its friction.

    The records' arrays are taken out once, before the loop, and the loop's body calls no
    helper taking them: a record's field, or an array handed to a helper numba inlines, taken
    per contact cost a reference count each, a fifth of a pile's step
    (docs/architecture.md#records). Each value is computed in locals and stored once into the
    packed row (2-D, contiguous), never read back from the rows' 3-D views: a fifth less time
    than through those views, the same arithmetic in the same order, so the same bits."""
    body, other, point, normal = contacts.body, contacts.other, contacts.point, contacts.normal
    tangent1, tangent2, sep = contacts.tangent1, contacts.tangent2, contacts.separation
    pos, vel, omega, accel = motion.pos, motion.vel, motion.omega, motion.accel
    inv_mass, inv_iw = motion.inv_mass, motion.inv_iw
    bounce, collide, target, tau = rows.bounce, rows.collide, rows.target, rows.tau
    packed = rows.packed
    for i in range(first, last):
        c = order[i]
        b, o = body[c], other[c]
        n0, n1, n2 = normal[c, 0], normal[c, 1], normal[c, 2]
        s0, s1, s2 = tangent1[c, 0], tangent1[c, 1], tangent1[c, 2]
        u0, u1, u2 = tangent2[c, 0], tangent2[c, 1], tangent2[c, 2]
        packed[i, _AXES], packed[i, _AXES + 1], packed[i, _AXES + 2] = n0, n1, n2
        packed[i, _AXES + 3], packed[i, _AXES + 4], packed[i, _AXES + 5] = s0, s1, s2
        packed[i, _AXES + 6], packed[i, _AXES + 7], packed[i, _AXES + 8] = u0, u1, u2
        # the first body's rows, then the second's (zero for a wall)
        rx, ry, rz = point[c, 0] - pos[b, 0], point[c, 1] - pos[b, 1], point[c, 2] - pos[b, 2]
        i00, i01, i02 = inv_iw[b, 0, 0], inv_iw[b, 0, 1], inv_iw[b, 0, 2]
        i10, i11, i12 = inv_iw[b, 1, 0], inv_iw[b, 1, 1], inv_iw[b, 1, 2]
        i20, i21, i22 = inv_iw[b, 2, 0], inv_iw[b, 2, 1], inv_iw[b, 2, 2]
        ax, ay, az, tx, ty, tz, m0 = _arm(rx, ry, rz, n0, n1, n2, i00, i01, i02, i10, i11, i12,
                                          i20, i21, i22)
        arm0, arm1, arm2 = ax, ay, az
        packed[i, _B_ARM], packed[i, _B_ARM + 1], packed[i, _B_ARM + 2] = ax, ay, az
        packed[i, _B_TURN], packed[i, _B_TURN + 1], packed[i, _B_TURN + 2] = tx, ty, tz
        ax, ay, az, tx, ty, tz, m1 = _arm(rx, ry, rz, s0, s1, s2, i00, i01, i02, i10, i11, i12,
                                          i20, i21, i22)
        packed[i, _B_ARM + 3], packed[i, _B_ARM + 4], packed[i, _B_ARM + 5] = ax, ay, az
        packed[i, _B_TURN + 3], packed[i, _B_TURN + 4], packed[i, _B_TURN + 5] = tx, ty, tz
        ax, ay, az, tx, ty, tz, m2 = _arm(rx, ry, rz, u0, u1, u2, i00, i01, i02, i10, i11, i12,
                                          i20, i21, i22)
        packed[i, _B_ARM + 6], packed[i, _B_ARM + 7], packed[i, _B_ARM + 8] = ax, ay, az
        packed[i, _B_TURN + 6], packed[i, _B_TURN + 7], packed[i, _B_TURN + 8] = tx, ty, tz
        mb = inv_mass[b]
        k0, k1, k2 = mb + m0, mb + m1, mb + m2
        if o < 0:
            for j in range(_O_ARM, _O_TURN + 9):
                packed[i, j] = 0.0
        else:
            rx, ry, rz = point[c, 0] - pos[o, 0], point[c, 1] - pos[o, 1], point[c, 2] - pos[o, 2]
            i00, i01, i02 = inv_iw[o, 0, 0], inv_iw[o, 0, 1], inv_iw[o, 0, 2]
            i10, i11, i12 = inv_iw[o, 1, 0], inv_iw[o, 1, 1], inv_iw[o, 1, 2]
            i20, i21, i22 = inv_iw[o, 2, 0], inv_iw[o, 2, 1], inv_iw[o, 2, 2]
            ax, ay, az, tx, ty, tz, m0 = _arm(rx, ry, rz, n0, n1, n2, i00, i01, i02, i10, i11,
                                              i12, i20, i21, i22)
            packed[i, _O_ARM], packed[i, _O_ARM + 1], packed[i, _O_ARM + 2] = ax, ay, az
            packed[i, _O_TURN], packed[i, _O_TURN + 1], packed[i, _O_TURN + 2] = tx, ty, tz
            ax, ay, az, tx, ty, tz, m1 = _arm(rx, ry, rz, s0, s1, s2, i00, i01, i02, i10, i11,
                                              i12, i20, i21, i22)
            packed[i, _O_ARM + 3], packed[i, _O_ARM + 4], packed[i, _O_ARM + 5] = ax, ay, az
            packed[i, _O_TURN + 3], packed[i, _O_TURN + 4], packed[i, _O_TURN + 5] = tx, ty, tz
            ax, ay, az, tx, ty, tz, m2 = _arm(rx, ry, rz, u0, u1, u2, i00, i01, i02, i10, i11,
                                              i12, i20, i21, i22)
            packed[i, _O_ARM + 6], packed[i, _O_ARM + 7], packed[i, _O_ARM + 8] = ax, ay, az
            packed[i, _O_TURN + 6], packed[i, _O_TURN + 7], packed[i, _O_TURN + 8] = tx, ty, tz
            mo = inv_mass[o]
            k0, k1, k2 = (k0 + mo) + m0, (k1 + mo) + m1, (k2 + mo) + m2
        packed[i, _MASS], packed[i, _MASS + 1], packed[i, _MASS + 2] = 1.0 / k0, 1.0 / k1, 1.0 / k2
        gap = sep[c]
        packed[i, _BIAS] = max(gap, 0.0) / h
        packed[i, _MU] = friction[c]
        e = restitution[c]
        bounce[c] = False
        collide[c] = o >= 0 and e > 0.0
        if o >= 0:
            # a body pair's impact is the collision pass's business (see _impact_kernel), which
            # sets its impact time: neither needs the restitution pass's target
            tau[c], target[c] = 1.0, 0.0
            continue
        # walls: the restitution pass's inputs, from the normal's acceleration and velocity
        # (as _relative_velocity sums it)
        an = 0.0
        an += accel[b, 0] * n0
        an += accel[b, 1] * n1
        an += accel[b, 2] * n2
        vn = 0.0
        vn += vel[b, 0] * n0 + omega[b, 0] * arm0
        vn += vel[b, 1] * n1 + omega[b, 1] * arm1
        vn += vel[b, 2] * n2 + omega[b, 2] * arm2
        fraction, v_impact = impact_time(gap, vn - an * h, an, h)
        bounce[c] = fraction <= 1.0 and v_impact < -threshold and e > 0.0
        when = min(fraction, 1.0)
        tau[c] = when
        # after the impact the point leaves at −e·v_impact and gravity acts for the rest of
        # the step
        target[c] = -e * v_impact + an * (1.0 - when) * h


@njit(cache=True, nogil=True)
def _prepare_serial(order, contacts, restitution, friction, motion, h, threshold, rows):
    """The rows of every contact (row i that of contact order[i]), on the calling thread.
    Records as plain tuples (docs/architecture.md#records)."""
    contacts, rows, motion = Contacts(*contacts), ContactRows(*rows), Motion(*motion)
    _prepare_range(0, contacts.body.shape[0], order, contacts, restitution, friction, motion, h,
                   threshold, rows)


@njit(cache=True, nogil=True)
def _prepare_parallel(order, contacts, restitution, friction, motion, h, threshold, rows):
    """``_prepare_serial`` with the rows shared out between the threads (independent), in
    SWEEP_SLABS runs of equal length, as the sweeps share theirs out in SWEEP_SLABS slabs: a
    call of ``_prepare_range`` per contact instead cost more than the rows themselves."""
    contacts, rows, motion = Contacts(*contacts), ContactRows(*rows), Motion(*motion)
    bounds = chunk_bounds(contacts.body.shape[0], SWEEP_SLABS)
    _prepare_threads(bounds, order, contacts, restitution, friction, motion, h, threshold, rows)


@njit(cache=True, nogil=True, parallel=True)
def _prepare_threads(bounds, order, contacts, restitution, friction, motion, h, threshold, rows):
    """``_prepare_parallel``'s loop: the rows bounds[t] … bounds[t + 1] − 1 in one call of
    ``_prepare_range``, so the writes are out of the parfor pass's sight (numba 0.68 took a
    write in the loop to an array that came out of a record's field for dead code unless the
    loop read it back; tests/physics/dynamics/test_solver.py: serial = parallel)."""
    for t in prange(bounds.shape[0] - 1):
        _prepare_range(bounds[t], bounds[t + 1], order, contacts, restitution, friction, motion,
                       h, threshold, rows)


@njit(cache=True)
def impact_time(sep, vn_start, accel_n, h):
    """When in the step a contact point reaches its wall, and how fast.

    sep gap m; vn_start normal velocity at the step's start m/s; accel_n normal acceleration
    m/s²; h the step, s. Solves ``s + v₀ t + ½ a t² = 0`` for its first root t ≥ 0 in the
    stable form ``t = 2s / (−v₀ + √(v₀² − 2as))``; touching points (s ≤ 0) hit at t = 0.
    Returns (fraction t/h — inf where the wall is not reached this step, impact normal
    velocity m/s).
    """
    if sep <= 0.0:
        return 0.0, vn_start
    disc = vn_start ** 2 - 2.0 * accel_n * sep
    root = np.sqrt(max(disc, 0.0))
    denom = root - vn_start
    # a tiny denominator gives inf: that point does not reach its wall this step
    t = 2.0 * sep / denom if disc >= 0.0 and denom > 0.0 else np.inf
    return t / h, -root


def contact_materials(contacts: Contacts, restitution, friction) -> tuple[np.ndarray, np.ndarray]:
    """Restitution and friction (k,) per contact from the bodies' (n,): the body's own against a
    wall; for a pair the larger restitution and the geometric mean of the frictions (Box2D's
    mixing rules)."""
    return materials(contacts.body, contacts.other, np.ascontiguousarray(restitution, dtype=float),
                     np.ascontiguousarray(friction, dtype=float))


@njit(cache=True, nogil=True)
def materials(body, other, restitution, friction):
    """``contact_materials`` of the contacts' rows body, other (k,), compiled."""
    e, mu = np.empty(body.shape[0]), np.empty(body.shape[0])
    for c in range(body.shape[0]):
        b, o = body[c], other[c]
        if o < 0:
            e[c], mu[c] = restitution[b], friction[b]
        else:
            e[c], mu[c] = max(restitution[b], restitution[o]), np.sqrt(friction[b] * friction[o])
    return e, mu


def solve_contacts(contacts: Contacts, motion: Motion, ang_mom, restitution, friction, warm, h,
                   iterations, threshold) -> ContactResult:
    """Solve one step's contacts (walls and body pairs together); updates motion.vel,
    motion.omega and ang_mom (n, 3) in place.

    motion: the bodies' ``Motion``, vel after this step's forces and omega the matching world
    ω; ang_mom (n, 3) world kg·m²/s after this step's forces; restitution, friction (k,) per
    contact; warm (k, 3) warm-start impulses; h s; iterations sweeps; threshold m/s minimum
    impact speed for restitution.
    Velocities and accelerations of a body pair are relative: first body minus second.
    One compiled call (``contact_impulses``); the records cross as plain tuples
    (docs/architecture.md#records).
    """
    return contact_impulses(tuple(contacts), tuple(motion), ang_mom,
                            np.ascontiguousarray(restitution, dtype=float),
                            np.ascontiguousarray(friction, dtype=float),
                            np.asarray(warm, dtype=float), float(h), int(iterations),
                            float(threshold))


@njit(cache=True, nogil=True)
def untouched(n):
    """The ``ContactResult`` of no contact among n bodies: none touched, none walled, no
    impact (fraction 1)."""
    return ContactResult(np.zeros((0, 3)), np.zeros(0), np.empty(0, dtype=np.bool_),
                         np.empty(0, dtype=np.bool_), np.zeros(n, dtype=np.bool_),
                         np.zeros(n, dtype=np.bool_), np.ones(n))


@njit(cache=True, nogil=True)
def contact_impulses(contacts, motion, ang_mom, restitution, friction, warm, h, iterations,
                     threshold):
    """``solve_contacts``, compiled: callable from Python with the records as plain tuples and
    from compiled code with the named records; warm (k, 3) is not changed."""
    contacts, motion = Contacts(*contacts), Motion(*motion)
    k = contacts.body.shape[0]
    n = motion.vel.shape[0]
    if k == 0:  # nothing touches: what the passes below give for no contact, without them
        return untouched(n)
    rows = contact_rows(k)
    vel_forces = motion.vel.copy()  # (n, 3) m/s before any impulse (the sweeps change vel)
    # small steps stay on the calling thread: waking the others costs more than it saves.
    # The packed rows are laid out in the order the sweeps visit them (row i that of contact
    # order[i], contact c's row slot[c]), so that each group's sweep reads its rows one after
    # the other (docs/architecture.md#records); the visits, and so the bits, are the same.
    parallel = k >= PARALLEL_MIN_CONTACTS
    if parallel:
        order, starts = sweep_groups(contacts.body, contacts.other, motion.pos)
        _prepare_parallel(order, contacts, restitution, friction, motion, h, threshold, rows)
    else:
        order, starts = np.arange(k), np.zeros(0, dtype=np.int64)
        _prepare_serial(order, contacts, restitution, friction, motion, h, threshold, rows)
    slot = np.empty(k, dtype=np.int64)
    for i in range(k):
        slot[order[i]] = i
    collision = np.zeros(k)
    impulses = warm.copy()
    _impact_kernel(contacts, rows, slot, restitution, threshold, collision, motion, h,
                   iterations)
    # islands of very unequal masses: their normal impulses solved exactly, as the warm start
    solve_stacks(contacts, motion.inv_mass, rows.axes, rows.jac, slot, impulses, motion.vel,
                 motion.omega, h, _ARM, _TURN, _OTHER)
    if parallel:
        _slab_sweeps(order, starts, contacts, rows, impulses, motion, iterations)
    else:
        _serial_sweeps(order, contacts, rows, impulses, motion, iterations)
    _restitution_kernel(contacts, rows, slot, impulses, collision, motion)
    result = ContactResult(impulses, collision, np.empty(k, dtype=np.bool_),
                           np.empty(k, dtype=np.bool_), np.zeros(n, dtype=np.bool_),
                           np.zeros(n, dtype=np.bool_), np.ones(n))
    _summary_kernel(contacts.body, contacts.other, impulses, collision, rows.bounce, rows.tau,
                    result.loaded, result.acted, result.touched, result.walled,
                    result.impact_fraction)
    _angular_impulse_kernel(contacts.body, contacts.other, contacts.point, rows.axes, slot,
                            impulses, collision, motion.pos, vel_forces, motion.accel,
                            result.impact_fraction, h, ang_mom)
    return result


@njit(cache=True, nogil=True)
def contact_rows(k):
    """Room for the ``ContactRows`` of k contacts: packed (k, _ROW) and axes, jac and mass the
    views of its triples (see _ROW), so that the rows' other kernels read what the sweeps read,
    written once (one array of 51 numbers a contact where there were four with 98)."""
    triples = np.empty((k, _ROW // 3, 3))
    return ContactRows(triples[:, 0:3], triples[:, 3:15], triples[:, 15],
                       np.empty(k, dtype=np.bool_), np.empty(k, dtype=np.bool_), np.empty(k),
                       np.empty(k), triples.reshape((k, _ROW)))


@njit(cache=True, nogil=True)
def sweep_groups(body, other, pos) -> tuple[np.ndarray, np.ndarray]:
    """Contacts (k,) in groups whose sweeps can run side by side: order (k,) the contacts group
    after group (ascending within each), starts (SWEEP_SLABS + 2,) where each group begins.

    The bodies in contact are cut into SWEEP_SLABS slabs of equal count along the axis their
    centres pos (n, 3) spread most; group g holds the contacts within slab g and between slabs
    g and g + 1 (a wall contact is within its body's slab), so groups g and g + 2 share no body
    and the even groups sweep side by side, then the odd ones. Contacts reaching further than
    the next slab (slabs thinner than a body) form a last group, swept on one thread. Gauss–Seidel
    converges whatever the order of its visits (Box2D v3 colours its constraint graph the same
    way, to the same end); the grouping depends on the positions only, never on the thread
    count, so results do not either."""
    order = np.empty(len(body), dtype=np.int64)
    starts = np.zeros(SWEEP_SLABS + 2, dtype=np.int64)
    _group_kernel(body, other, pos, SWEEP_SLABS, order, starts)
    return order, starts


@njit(cache=True, nogil=True)
def _group_kernel(body, other, pos, slabs, order, starts):
    n, k = pos.shape[0], body.shape[0]
    involved = np.zeros(n, dtype=np.bool_)
    for c in range(k):
        involved[body[c]] = True
        if other[c] >= 0:
            involved[other[c]] = True
    rows = np.flatnonzero(involved)
    low, high = np.full(3, np.inf), np.full(3, -np.inf)
    for r in rows:
        for a in range(3):
            low[a] = min(low[a], pos[r, a])
            high[a] = max(high[a], pos[r, a])
    axis = np.argmax(high - low)
    slab = np.zeros(n, dtype=np.int64)
    ranked = rows[np.argsort(pos[rows, axis], kind="mergesort")]
    for i in range(ranked.shape[0]):
        slab[ranked[i]] = i * slabs // ranked.shape[0]
    group = np.empty(k, dtype=np.int64)
    for c in range(k):
        first = slab[body[c]]
        second = slab[other[c]] if other[c] >= 0 else first
        group[c] = min(first, second) if abs(first - second) <= 1 else slabs
        starts[group[c] + 1] += 1
    for g in range(slabs + 1):
        starts[g + 1] += starts[g]
    fill = starts[:-1].copy()
    for c in range(k):  # counting sort: ascending within each group
        order[fill[group[c]]] = c
        fill[group[c]] += 1


@njit(cache=True, nogil=True)
def _summary_kernel(body, other, impulses, collision, bounce, tau, loaded, acted, touched, walled,
                    impact_fraction):
    """Fill ContactResult's flags from the solved impulses: a contact bounced if the restitution
    pass drove it (bounce, (k,)) or the collision pass did (collision > 0); a body's impact
    fraction is the earliest tau (k,) of the contacts that bounced it."""
    for c in range(body.shape[0]):
        b, o = body[c], other[c]
        loaded[c] = impulses[c, 0] > 0.0
        acted[c] = loaded[c] or collision[c] > 0.0
        if acted[c]:
            touched[b] = True
            if o >= 0:
                touched[o] = True
            else:
                walled[b] = True
        if bounce[c] or collision[c] > 0.0:
            impact_fraction[b] = min(impact_fraction[b], tau[c])
            if o >= 0:
                impact_fraction[o] = min(impact_fraction[o], tau[c])


@njit(cache=True, nogil=True)
def _push_kernel(body, other, point, n, sep, pos, vel, omega, inv_mass, h, slop, shift,
                 iterations):
    # depth predicted at the end of the step: −(gap + h·v_n) − slop, v_n the solved relative
    # normal velocity at the contact point (walls, other < 0, are not this pass's business)
    k = body.shape[0]
    depth = np.zeros(k)
    for c in range(k):
        b, o = body[c], other[c]
        if o < 0:
            continue
        rx, ry, rz = point[c, 0] - pos[b, 0], point[c, 1] - pos[b, 1], point[c, 2] - pos[b, 2]
        qx, qy, qz = point[c, 0] - pos[o, 0], point[c, 1] - pos[o, 1], point[c, 2] - pos[o, 2]
        # (v + ω × r) of the first body minus the same of the second, along n
        ux = (vel[b, 0] + omega[b, 1] * rz - omega[b, 2] * ry
              - (vel[o, 0] + omega[o, 1] * qz - omega[o, 2] * qy))
        uy = (vel[b, 1] + omega[b, 2] * rx - omega[b, 0] * rz
              - (vel[o, 1] + omega[o, 2] * qx - omega[o, 0] * qz))
        uz = (vel[b, 2] + omega[b, 0] * ry - omega[b, 1] * rx
              - (vel[o, 2] + omega[o, 0] * qy - omega[o, 1] * qx))
        vn = ux * n[c, 0] + uy * n[c, 1] + uz * n[c, 2]
        depth[c] = -(sep[c] + h * vn) - slop
    for _ in range(iterations):
        for c in range(k):
            if depth[c] <= 0.0:
                continue
            b, o = body[c], other[c]
            # depth still left after the shifts so far (first body moves along +n)
            left = depth[c] - ((shift[b, 0] - shift[o, 0]) * n[c, 0]
                               + (shift[b, 1] - shift[o, 1]) * n[c, 1]
                               + (shift[b, 2] - shift[o, 2]) * n[c, 2])
            if left <= 0.0:
                continue
            w = inv_mass[b] + inv_mass[o]
            for a in range(3):
                shift[b, a] += left * inv_mass[b] / w * n[c, a]
                shift[o, a] -= left * inv_mass[o] / w * n[c, a]


def push_apart(contacts: Contacts, pos, vel, omega, inv_mass, ang_mom, h, slop,
               iterations) -> np.ndarray:
    """(n, 3) m: translations that remove body–body penetration deeper than ``slop`` m.

    The depth at the end of the step is predicted from each contact's gap and its solved
    relative normal velocity (gap + h·v_n); bodies are moved along the normal in inverse
    proportion to their masses, by Gauss–Seidel sweeps over the contacts (Box2D v2's position
    pass, without rotation). A position pass moves bodies but gives them no velocity, so it
    cannot make them fly apart the way a velocity bias would. pos, vel, omega (n, 3) solved.
    Moving a body by s moves its orbital angular momentum by s × mv; that much is taken from
    its spin ang_mom (n, 3) (in place), so the pass keeps total angular momentum
    (docs/physics.md#position-projection). The centre of mass stays where it was: the moves are
    in inverse proportion to the masses.
    """
    shift = np.zeros((len(pos), 3))
    if contacts.count:
        _push_kernel(contacts.body, contacts.other, contacts.point, contacts.normal,
                     contacts.separation, pos, vel, omega, inv_mass, float(h), float(slop),
                     shift, int(iterations))
        _spin_back_kernel(shift, vel, inv_mass, ang_mom)
    return shift


@njit(cache=True, nogil=True)
def _spin_back_kernel(shift, vel, inv_mass, ang_mom):
    """ang_mom[i] −= shift[i] × m vel[i] for every body moved (inv_mass > 0)."""
    for i in range(shift.shape[0]):
        sx, sy, sz = shift[i, 0], shift[i, 1], shift[i, 2]
        if inv_mass[i] <= 0.0 or (sx == 0.0 and sy == 0.0 and sz == 0.0):
            continue
        m = 1.0 / inv_mass[i]
        ang_mom[i, 0] -= m * (sy * vel[i, 2] - sz * vel[i, 1])
        ang_mom[i, 1] -= m * (sz * vel[i, 0] - sx * vel[i, 2])
        ang_mom[i, 2] -= m * (sx * vel[i, 1] - sy * vel[i, 0])
