"""The step but its contacts, compiled: the forces before the contacts are found
(``apply_forces``, stage 1 of docs/architecture.md#the-step), and after them the impulses,
motion, penetration, the energy guard, the static bodies held, sleep and the next step's warm
start (stages 3–7), for a world without joints in one call (``advance_into``, which the
compiled batch runs: dynamics/batch.py).

Each stage group is one compiled function, callable from Python (records as plain tuples,
named again in the function's first line: docs/architecture.md#records) and from compiled code
(records named); a world with joints, whose stages interleave with the contacts' solve, calls
them one by one (``World._advance_jointed``). Each runs the kernels of its stage's own module,
in the order and with the arithmetic the stage-by-stage functions use, so both give the same
bits.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit

from physics.collision.contact import Contacts
from physics.collision.walls import _deepest_kernel
from physics.dynamics.energy import _free_flight_kernel, _island_guard_kernel
from physics.dynamics.integrator import (
    _drift_kernel,
    _inverse_inertia_kernel,
    _rotate_free_kernel,
    _world_omega_kernel,
)
from physics.dynamics.islands import islands
from physics.dynamics.sleep import _rest_kernel, _wake_kernel
from physics.dynamics.solver import (
    ContactResult,
    Motion,
    _push_kernel,
    _spin_back_kernel,
    contact_impulses,
    materials,
    untouched,
)
from physics.dynamics.warmstart import ContactCache, cache_of, cached_impulses
from physics.geometry.rotation import _matrix_kernel
from physics.model import BodyModel
from physics.settings import (
    GRAB_MIN_ARM,
    PENETRATION_SLOP,
    PUSH_ITERATIONS,
    SLEEP_ANGULAR_TOLERANCE,
    SLEEP_LINEAR_TOLERANCE,
    TIME_TO_SLEEP,
)

# the sleep test's squared tolerances, squared here as dynamics/sleep.py ``rest`` squares them
_LINEAR2 = SLEEP_LINEAR_TOLERANCE**2
_ANGULAR2 = SLEEP_ANGULAR_TOLERANCE**2
_GRAB_ARM2 = GRAB_MIN_ARM**2  # m², as the grab's spin damping adds it


class StepSettings(NamedTuple):
    """The world's settings as the compiled stages read them (``WorldDef``).

    gravity (3,) m/s²; planes (p, 4) the container's walls (``Model.wall_planes``, p = 0
    without one); restitution, friction the world defaults; iterations sweeps; threshold m/s
    the least impact speed that bounces; sleep whether rested islands fall asleep.
    """

    gravity: np.ndarray
    planes: np.ndarray
    restitution: float
    friction: float
    iterations: int
    threshold: float
    sleep: bool


class Start(NamedTuple):
    """The state at the step's start (``State``): pos (n, 3) m, quat (n, 4), vel (n, 3) m/s,
    ang_mom (n, 3) kg·m²/s world; asleep (n,) bool and slow_time (n,) s, which the sleep stage
    edits in place."""

    pos: np.ndarray
    quat: np.ndarray
    vel: np.ndarray
    ang_mom: np.ndarray
    asleep: np.ndarray
    slow_time: np.ndarray


class Forced(NamedTuple):
    """The bodies after the step's forces (stage 1): vel (n, 3) m/s and ang_mom (n, 3)
    kg·m²/s, which the contacts then change in place; omega (n, 3) rad/s the world ω of that
    ang_mom; accel (n, 3) m/s² the step's constant acceleration; inv_mass (n,) 1/kg, 0 for a
    body held still; awake (n,) bool not held (asleep or static); rotm (n, 3, 3) the start
    orientations; force, torque (n, 3) N, N·m the held loads with the grab's."""

    vel: np.ndarray
    ang_mom: np.ndarray
    omega: np.ndarray
    accel: np.ndarray
    inv_mass: np.ndarray
    awake: np.ndarray
    rotm: np.ndarray
    force: np.ndarray
    torque: np.ndarray


class Ends(NamedTuple):
    """Arrays a step writes the end state of n bodies into: pos (n, 3) m, quat (n, 4),
    vel (n, 3) m/s, ang_mom (n, 3) kg·m²/s world (``Start``'s first four)."""

    pos: np.ndarray
    quat: np.ndarray
    vel: np.ndarray
    ang_mom: np.ndarray


class Workspace(NamedTuple):
    """The arrays the steps of a batch without joints write, made once per batch
    (``workspace``) instead of once per step (docs/architecture.md#batches).

    first, second the ``Ends`` the steps write in turn, each reading the other's as its start
    (the batch's first step reads the world's arrays, which no step writes); omega, accel
    (n, 3), inv_mass (n,), awake (n,) bool, rotm (n, 3, 3) the ``Forced`` fields but vel and
    ang_mom; rotm_end (n, 3, 3) the end orientations; untouched the ``ContactResult`` of a step
    without contacts and alone (n,) int64 its islands, each body its own; no_cache the empty
    ``ContactCache`` such a step hands the next. Those last three are only read."""

    first: Ends
    second: Ends
    omega: np.ndarray
    accel: np.ndarray
    inv_mass: np.ndarray
    awake: np.ndarray
    rotm: np.ndarray
    rotm_end: np.ndarray
    untouched: ContactResult
    alone: np.ndarray
    no_cache: ContactCache


class GrabSpring(NamedTuple):
    """The mouse grab as the forces stage reads it: row the grabbed body's (−1: none); anchor
    (3,) m body frame, pulled towards target (3,) m world with stiffness N/m and damping
    N·s/m (World.set_grab)."""

    row: int
    anchor: np.ndarray
    target: np.ndarray
    stiffness: float
    damping: float


NO_GRAB = (-1, np.zeros(3), np.zeros(3), 0.0, 0.0)  # a plain GrabSpring that holds nothing


class Advanced(NamedTuple):
    """What ``advance_into`` hands back: the end state pos (n, 3), quat (n, 4), vel
    (n, 3), ang_mom (n, 3); cache the next step's warm start; pairs (first, second) the ids
    that pressed together, kept for the sleeping (``update_sleep``); acted (k,) bool the
    contacts that carried load or collided."""

    pos: np.ndarray
    quat: np.ndarray
    vel: np.ndarray
    ang_mom: np.ndarray
    cache: ContactCache
    pairs: tuple
    acted: np.ndarray


@njit(cache=True, nogil=True)
def apply_forces(bodies, gravity, start, force, torque, grab, h):
    """Stage 1, the forces over a step of h s: gravity (3,) m/s² and the held forces (n, 3) N
    into the velocity, the held torques (n, 3) N·m into the world L (docs/physics.md#free-rotation),
    with the grab's spring (``GrabSpring``) at its anchor; a sleeping or static body is held
    still: no gravity, and infinite mass for the solver. Returns ``Forced``; bodies the
    ``BodyModel``, start the ``Start`` (both plain or named)."""
    n = start[0].shape[0]
    return apply_forces_into(bodies, gravity, start, force, torque, grab, h,
                             Forced(np.empty((n, 3)), np.empty((n, 3)), np.empty((n, 3)),
                                    np.empty((n, 3)), np.empty(n), np.empty(n, dtype=np.bool_),
                                    np.empty((n, 3, 3)), force, torque))


@njit(cache=True, nogil=True)
def apply_forces_into(bodies, gravity, start, force, torque, grab, h, out):
    """``apply_forces`` written into the arrays of out, a ``Forced`` (its force and torque
    unread), none of them start's; returns the ``Forced`` of those arrays and the loads."""
    bodies, start, grab = BodyModel(*bodies), Start(*start), GrabSpring(*grab)
    rotm, vel, ang_mom, accel = out.rotm, out.vel, out.ang_mom, out.accel
    _matrix_kernel(start.quat, rotm)
    force, torque = grab_loads(bodies, start, rotm, force, torque, grab)
    for i in range(start.pos.shape[0]):
        awake = not (start.asleep[i] or bodies.static[i])
        out.awake[i] = awake
        out.inv_mass[i] = bodies.inv_mass[i] if awake else 0.0
        for a in range(3):
            accel[i, a] = gravity[a] + force[i, a] * bodies.inv_mass[i] if awake else 0.0
            vel[i, a] = start.vel[i, a] + accel[i, a] * h
            ang_mom[i, a] = start.ang_mom[i, a] + (torque[i, a] if awake else 0.0) * h
    _world_omega_kernel(rotm, bodies.inv_inertia, ang_mom, out.omega)
    return Forced(vel, ang_mom, out.omega, accel, out.inv_mass, out.awake, rotm, force, torque)


@njit(cache=True, nogil=True)
def grab_loads(bodies, start, rotm, force, torque, grab):
    """Held forces and torques (n, 3), plus the grab spring's at its anchor (new arrays then;
    the same without a grab). rotm (n, 3, 3) the start orientations. The spin is damped too,
    as if the damper also acted at the anchor's distance, so a held body stops swinging about
    the grab point the way an object held in the hand does."""
    if grab.row < 0:
        return force, torque
    r = grab.row
    offset = np.dot(rotm[r], grab.anchor)  # numpy's product, as the grab was first written
    spin = np.empty((1, 3))
    _world_omega_kernel(rotm[r:r + 1], bodies.inv_inertia[r:r + 1], start.ang_mom[r:r + 1], spin)
    omega = spin[0]
    anchor_vel = start.vel[r] + _cross(omega, offset)
    pull = grab.stiffness * (grab.target - (start.pos[r] + offset)) - grab.damping * anchor_vel
    spin_damping = grab.damping * (np.dot(offset, offset) + _GRAB_ARM2)
    force, torque = force.copy(), torque.copy()
    force[r] += pull
    torque[r] += _cross(offset, pull) - spin_damping * omega
    return force, torque


@njit(cache=True, inline='always')
def _cross(a, b):
    """a × b of two (3,) vectors, each product rounded before its difference (as np.cross)."""
    return np.array([a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2],
                     a[0] * b[1] - a[1] * b[0]])


@njit(cache=True, nogil=True)
def workspace(n):
    """A ``Workspace`` for a batch of steps of n bodies."""
    return Workspace(_ends(n), _ends(n), np.empty((n, 3)), np.empty((n, 3)), np.empty(n),
                     np.empty(n, dtype=np.bool_), np.empty((n, 3, 3)), np.empty((n, 3, 3)),
                     untouched(n), np.arange(n), ContactCache(np.zeros(0, dtype=np.int64),
                                                              np.zeros((0, 3)),
                                                              np.zeros(0, dtype=np.bool_)))


@njit(cache=True, nogil=True)
def _ends(n):
    return Ends(np.empty((n, 3)), np.empty((n, 4)), np.empty((n, 3)), np.empty((n, 3)))


@njit(cache=True, nogil=True)
def advance_into(contacts, bodies, settings, start, forced, cache, pairs, h, work, ends):
    """Stages 3–7 of a step of h s for a world without joints, from its ``Contacts``: the
    records above (plain tuples or named), cache the last step's ``ContactCache``, pairs
    (first, second) the pressing ids kept so far, work a ``Workspace`` whose arrays it uses:
    the end positions and orientations are written into ends (``Ends``, whose vel and ang_mom
    are forced's), and a step no contact touches allocates nothing the next does not keep.
    Returns ``Advanced``; start's asleep and slow_time change in place, and so do forced's vel
    and ang_mom."""
    contacts, bodies, settings = Contacts(*contacts), BodyModel(*bodies), StepSettings(*settings)
    start, forced, cache = Start(*start), Forced(*forced), ContactCache(*cache)
    touching = contacts.body.shape[0] > 0
    vel, ang_mom = forced.vel, forced.ang_mom
    # before any contact: the energy guard's reference, which only a step with contacts reads
    vel_free, ang_mom_free = (vel.copy(), ang_mom.copy()) if touching else (vel, ang_mom)
    # 3. impulses
    result = (solve(contacts, bodies, settings, start.pos, forced, cache, h) if touching
              else work.untouched)
    # 4. motion: positions by the contact regime, orientations by the rotation step
    pos, quat, rotm_end = ends.pos, ends.quat, work.rotm_end
    move_into(start.pos, start.vel, vel, forced.accel, result.touched, result.impact_fraction,
              start.quat, ang_mom, bodies.inv_inertia, h, pos, quat, rotm_end)
    acted = result.acted
    if acted.any():
        first, second = links(bodies.static, contacts.body[acted], contacts.other[acted])
        island = islands(bodies.ids.shape[0], first, second)
    else:  # no link: each body its own island
        island = work.alone
    if touching:
        # 5. penetration projected out (bodies apart, then out of the walls)
        pushed, lifted = separate(contacts, bodies, settings.planes, start.pos, pos, rotm_end,
                                  vel, forced.omega, forced.inv_mass, ang_mom, h)
        # 6. no island ends the step above its free-flight energy
        guard_energy(contacts, result, island, pushed, lifted, bodies, settings.gravity, start,
                     vel_free, ang_mom_free, pos, quat, vel, ang_mom, h)
    hold_static(bodies.static, start, pos, quat, vel, ang_mom)
    # 7. islands at rest fall asleep; the warm start of the next step
    pairs = update_sleep(contacts, acted, island, bodies, start.asleep, start.slow_time, vel,
                         ang_mom, rotm_end, forced.force, forced.torque, pairs, h,
                         settings.sleep)
    cache = (cache_of(contacts.key, result.impulses, result.loaded) if touching
             else work.no_cache)
    return Advanced(pos, quat, vel, ang_mom, cache, pairs, acted)


@njit(cache=True, nogil=True)
def solve(contacts, bodies, settings, pos, forced, cache, h):
    """Stage 3 for a world without joints: the contacts' materials, their warm start from the
    cache and their impulses (dynamics/solver.py ``solve_contacts``), a ``ContactResult``;
    forced's vel, omega and ang_mom change in place. pos (n, 3) m at the step's start."""
    contacts, bodies, settings = Contacts(*contacts), BodyModel(*bodies), StepSettings(*settings)
    forced = Forced(*forced)
    if contacts.body.shape[0]:
        restitution, friction = world_materials(bodies, settings)
        e, mu = materials(contacts.body, contacts.other, restitution, friction)
        inv_iw = np.empty_like(forced.rotm)  # R I⁻¹ Rᵀ, zero for a body held still
        _inverse_inertia_kernel(forced.rotm, held_still(bodies.inv_inertia, forced.awake),
                                inv_iw)
    else:  # nothing touches: the solve reads no material and no inertia
        e, mu, inv_iw = np.empty(0), np.empty(0), np.empty((0, 3, 3))
    motion = Motion(pos, forced.vel, forced.omega, forced.accel, forced.inv_mass, inv_iw)
    return contact_impulses(contacts, motion, forced.ang_mom, e, mu,
                            cached_impulses(cache, contacts.key), h, settings.iterations,
                            settings.threshold)


@njit(cache=True, nogil=True)
def world_materials(bodies, settings):
    """Restitution and friction (n,) of each body, the world's defaults where its own is NaN
    (``Model.effective_restitution``, ``effective_friction``)."""
    bodies, settings = BodyModel(*bodies), StepSettings(*settings)
    restitution, friction = bodies.restitution.copy(), bodies.friction.copy()
    for i in range(restitution.shape[0]):
        if np.isnan(restitution[i]):
            restitution[i] = settings.restitution
        if np.isnan(friction[i]):
            friction[i] = settings.friction
    return restitution, friction


@njit(cache=True, nogil=True)
def held_still(inv_inertia, awake):
    """(n, 3) the inverse moments inv_inertia (n, 3), zero for a body not awake (n,) bool:
    a body held still has infinite inertia for the solver."""
    out = np.zeros_like(inv_inertia)
    for i in range(awake.shape[0]):
        if awake[i]:
            out[i] = inv_inertia[i]
    return out


@njit(cache=True, nogil=True)
def move(pos, vel_start, vel_end, accel, touched, impact_fraction, quat, ang_mom, inv_inertia,
         h):
    """Stage 4: the centres (n, 3) by ``drift``, the orientations (n, 4) by ``rotate_free``
    and their matrices (n, 3, 3) (dynamics/integrator.py, geometry/rotation.py)."""
    new_pos, new_quat = np.empty_like(pos), np.empty_like(quat)
    rotm = np.empty((quat.shape[0], 3, 3))
    move_into(pos, vel_start, vel_end, accel, touched, impact_fraction, quat, ang_mom,
              inv_inertia, h, new_pos, new_quat, rotm)
    return new_pos, new_quat, rotm


@njit(cache=True, nogil=True)
def move_into(pos, vel_start, vel_end, accel, touched, impact_fraction, quat, ang_mom,
              inv_inertia, h, new_pos, new_quat, rotm):
    """``move`` written into new_pos (n, 3), new_quat (n, 4) and rotm (n, 3, 3), none of
    them an array it reads."""
    _drift_kernel(pos, vel_start, vel_end, accel, touched, impact_fraction, h, new_pos)
    _rotate_free_kernel(quat, ang_mom, inv_inertia, h, new_quat)
    _matrix_kernel(new_quat, rotm)


@njit(cache=True, nogil=True)
def links(static, first, second):
    """Links between body rows first, second (k,) int64 (second < 0: a wall) for islands, with
    those touching a static body (static (n,) bool) cut as a wall's are (second = −1):
    scenery joins no island (Box2D's static set), so what rests on it sleeps on its own.
    Returns (first, second) as new arrays."""
    cut = second.copy()
    for c in range(first.shape[0]):
        if static[first[c]] or (second[c] >= 0 and static[second[c]]):
            cut[c] = -1
    return first.copy(), cut


@njit(cache=True, nogil=True)
def on_scenery(static, first, second):
    """(n,) bool: the bodies of links first, second (k,) rows whose other end is static
    (static (n,) bool)."""
    touching = np.zeros(static.shape[0], dtype=np.bool_)
    for c in range(first.shape[0]):
        if second[c] >= 0 and static[second[c]]:
            touching[first[c]] = True
        if second[c] >= 0 and static[first[c]]:
            touching[second[c]] = True
    return touching


@njit(cache=True, nogil=True)
def separate(contacts, bodies, planes, pos_start, pos, rotm, vel, omega, inv_mass, ang_mom, h):
    """Stage 5: body–body penetration pushed apart (dynamics/solver.py ``push_apart``, from the
    start centres pos_start, taking the spin its move carries from ang_mom in place), then the
    bodies sunk deeper than the slop into a wall of planes (p, 4) lifted out along its normal
    (rotm (n, 3, 3) the end orientations). pos (n, 3) m, the end centres, changes in place.
    Returns pushed, lifted (n,) bool: the bodies the push or the walls moved."""
    contacts, bodies = Contacts(*contacts), BodyModel(*bodies)
    n = pos.shape[0]
    shift = np.zeros((n, 3))
    _push_kernel(contacts.body, contacts.other, contacts.point, contacts.normal,
                 contacts.separation, pos_start, vel, omega, inv_mass, h, PENETRATION_SLOP, shift,
                 PUSH_ITERATIONS)
    _spin_back_kernel(shift, vel, inv_mass, ang_mom)
    pushed = np.zeros(n, dtype=np.bool_)
    for i in range(n):
        for a in range(3):
            pos[i, a] += shift[i, a]
            pushed[i] |= shift[i, a] != 0.0
    return pushed, out_of_walls(bodies, planes, pos, rotm)


@njit(cache=True, nogil=True)
def out_of_walls(bodies, planes, pos, rotm):
    """Move bodies that sank deeper than the slop into a wall of planes (p, 4) back out along
    its normal, pos (n, 3) m in place (rotm (n, 3, 3) their orientations); a static body stays
    (scenery may stand in a wall: it does not collide with walls). Returns (n,) bool: moved."""
    bodies = BodyModel(*bodies)
    n, p = pos.shape[0], planes.shape[0]
    lifted = np.zeros(n, dtype=np.bool_)
    if p == 0:
        return lifted
    clearance = np.zeros((n, p))
    _deepest_kernel(pos, rotm, bodies.radius, bodies.bound_radius, bodies.hull_points,
                    bodies.hull_start, planes, 0.0, clearance)
    for i in range(n):
        if bodies.static[i]:
            continue
        for a in range(3):
            along = 0.0
            for w in range(p):
                along += max(-clearance[i, w] - PENETRATION_SLOP, 0.0) * planes[w, a]
            moved = pos[i, a] + along
            lifted[i] |= moved != pos[i, a]
            pos[i, a] = moved
    return lifted


@njit(cache=True, nogil=True)
def guard_energy(contacts, result, island, pushed, lifted, bodies, gravity, start, vel_free,
                 ang_mom_free, pos, quat, vel, ang_mom, h):
    """Stage 6: no island ends the step above its free-flight energy (dynamics/energy.py
    ``free_flight_energy``, ``remove_island_energy_gain``), vel, ang_mom and pos (n, 3) edited
    in place. result the contacts' ``ContactResult``; island (n,) labels of the acted links;
    pushed, lifted (n,) bool from ``separate``; start the ``Start`` record; vel_free,
    ang_mom_free (n, 3) after the step's forces, before any contact; quat (n, 4) at the end."""
    contacts, result, bodies, start = (Contacts(*contacts), ContactResult(*result),
                                       BodyModel(*bodies), Start(*start))
    n = pos.shape[0]
    acted = result.acted
    moved = result.touched | lifted | pushed
    rows = np.flatnonzero(moved)
    guarded = island
    if pushed.any():
        # a body pushed apart got its spin changed to keep the angular momentum whether or not
        # an impulse acted on it: the guard sees it in one island with what it was pushed from
        linked = acted.copy()
        for c in range(linked.shape[0]):
            o = contacts.other[c]
            linked[c] |= o >= 0 and (pushed[contacts.body[c]] or pushed[o])
        first, second = links(bodies.static, contacts.body[linked], contacts.other[linked])
        guarded = islands(n, first, second)
    allowed = np.full(n, np.inf)  # J, each body's free-flight energy
    _free_flight_kernel(bodies.mass, start.pos, start.vel, vel_free, start.quat, ang_mom_free,
                        bodies.inv_inertia, gravity, rows, h, allowed)
    # a body lifted out of a wall gains m g Δy whether or not a contact acted on it, and a body
    # on scenery is guarded as one against a wall (scenery links no island)
    walled = result.walled | lifted | start.asleep
    if bodies.static.any():
        walled |= on_scenery(bodies.static, contacts.body[acted], contacts.other[acted])
    if rows.shape[0] == 0:
        return
    labels = guarded[rows]
    _island_guard_kernel(allowed, bodies.mass, vel, quat, ang_mom, bodies.inv_inertia, pos,
                         gravity, rows, labels, walled[rows], labels.max() + 1)


@njit(cache=True, nogil=True)
def hold_static(static, start, pos, quat, vel, ang_mom):
    """Static bodies (static (n,) bool) end the step exactly where start (``Start``) had them,
    at rest, whatever rounding the stages did: pos, quat, vel, ang_mom edited in place."""
    start = Start(*start)
    for i in range(static.shape[0]):
        if static[i]:
            pos[i], quat[i] = start.pos[i], start.quat[i]
            vel[i], ang_mom[i] = 0.0, 0.0


@njit(cache=True, nogil=True)
def update_sleep(contacts, acted, island, bodies, asleep, slow_time, vel, ang_mom, rotm, force,
                 torque, pairs, h, sleep):
    """Stage 7 (dynamics/sleep.py): wake the sleeping bodies the awake ones pressed on, count
    slow time and put rested islands (labels island (n,)) to sleep, asleep (n,) bool,
    slow_time (n,) s, vel and ang_mom (n, 3) edited in place; rotm (n, 3, 3) the end
    orientations; force, torque (n, 3) the held loads (a loaded body never sleeps); sleep
    false: none falls asleep. pairs (first, second) (p,) int64: the ids of the bodies that
    pressed together before; returns them for the next step, those of this step's pressing
    contacts (acted (k,) bool, not with scenery) after those of the earlier pairs both of
    whose bodies now sleep (sleeping pairs find no contacts: they are remembered)."""
    contacts, bodies = Contacts(*contacts), BodyModel(*bodies)
    if contacts.body.shape[0] or pairs[0].shape[0]:  # else none pressed, then or now
        _wake_kernel(contacts.body, contacts.other, acted, asleep.copy(), asleep, slow_time)
        pairs = pressing_pairs(contacts, acted, bodies, asleep, pairs)
    # a static body counts as loaded, so it never falls asleep: it is not simulated anyway,
    # and asleep it would be woken by every strike on it, each time starting the step again
    loaded = bodies.static.copy()
    for i in range(loaded.shape[0]):
        for a in range(3):
            loaded[i] |= force[i, a] != 0.0 or torque[i, a] != 0.0
    omega = np.empty_like(ang_mom)
    _world_omega_kernel(rotm, bodies.inv_inertia, ang_mom, omega)
    _rest_kernel(vel, ang_mom, omega, loaded, island, asleep, slow_time, h, _LINEAR2, _ANGULAR2,
                 TIME_TO_SLEEP if sleep else np.inf)
    return pairs


@njit(cache=True, nogil=True)
def pressing_pairs(contacts, acted, bodies, asleep, pairs):
    """``update_sleep``'s pairs for the next step, from contacts (a ``Contacts``), bodies (a
    ``BodyModel``) and asleep (n,) bool after this step's wakes."""
    _, other = links(bodies.static, contacts.body, contacts.other)
    pressed = acted & (other >= 0)
    first, second = bodies.ids[contacts.body[pressed]], bodies.ids[contacts.other[pressed]]
    before_a, before_b = pairs
    size = 1 + max(bodies.ids.max() if bodies.ids.shape[0] else 0,
                   before_a.max() if before_a.shape[0] else 0,
                   before_b.max() if before_b.shape[0] else 0)
    sleeping = np.zeros(size, dtype=np.bool_)  # by body id
    for i in range(asleep.shape[0]):
        if asleep[i]:
            sleeping[bodies.ids[i]] = True
    kept = np.zeros(before_a.shape[0], dtype=np.bool_)
    for c in range(before_a.shape[0]):
        kept[c] = sleeping[before_a[c]] and sleeping[before_b[c]]
    return np.concatenate((before_a[kept], first)), np.concatenate((before_b[kept], second))
