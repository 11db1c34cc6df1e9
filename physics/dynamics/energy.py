"""Energy diagnostics and the passivity of contacts.

Contacts are passive: a wall can take mechanical energy away but never give any. A discrete step
can still gain a little where an impulse is applied at a step boundary instead of the exact instant
(a rotating body's rebound, a penetration projected out), so after the contacts each body's energy
is compared with what it would have had in free flight over the same step, and any excess is
removed by scaling its velocity and angular momentum — never the other way. This is what keeps
"energy never grows through a bounce" true for every e ≤ 1 (docs/physics.md#energy-guard).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from physics.dynamics.integrator import vector_to_body_frame, vector_to_world_frame

# Relative rounding allowance before an excess counts as a gain.
ENERGY_ROUNDING = 1e-13


def kinetic_energy(mass, vel, quat, ang_mom, inv_inertia) -> np.ndarray:
    """Translational + rotational kinetic energy ``½ m v² + ½ L_b·I⁻¹ L_b``; (n,) J.

    mass (n,) kg; vel (n, 3) m/s; quat (n, 4); ang_mom (n, 3) world kg·m²/s; inv_inertia (n, 3).
    """
    out = np.empty(len(mass))
    _kinetic_kernel(np.ascontiguousarray(mass, dtype=float), np.ascontiguousarray(vel, dtype=float),
                    np.ascontiguousarray(quat, dtype=float),
                    np.ascontiguousarray(ang_mom, dtype=float),
                    np.ascontiguousarray(inv_inertia, dtype=float), out)
    return out


@njit(cache=True, nogil=True)
def _kinetic_kernel(mass, vel, quat, ang_mom, inv_inertia, out):
    """Loop body of ``kinetic_energy``, compiled: the energy guard evaluates it every step."""
    for i in range(mass.shape[0]):
        out[i] = _kinetic(mass, vel, quat, ang_mom, inv_inertia, i)


@njit(cache=True, inline="always")
def _kinetic(mass, vel, quat, ang_mom, inv_inertia, i):
    """``kinetic_energy`` of row i, J."""
    return _motion_energy(mass, quat, inv_inertia, i, vel[i, 0], vel[i, 1], vel[i, 2],
                          ang_mom[i, 0], ang_mom[i, 1], ang_mom[i, 2])


def potential_energy(mass, pos, gravity) -> np.ndarray:
    """Gravitational potential energy ``−m g·x`` (zero at the origin); (n,) J."""
    return -mass * (pos @ np.asarray(gravity, dtype=float))


def free_flight_energy(mass, pos, vel_start, vel_end, quat, ang_mom, inv_inertia, gravity, rows,
                       h) -> np.ndarray:
    """(n,) J, filled at ``rows`` (r,) (inf elsewhere): each body's mechanical energy at the end
    of a step of h s had it touched nothing. The centre follows the exact parabola from
    vel_start to vel_end (n, 3) m/s (the velocities before and after the step's forces) and a
    torque-free rotation keeps its kinetic energy, so the kinetic energy is that of vel_end and
    ang_mom (n, 3) world kg·m²/s (after the step's torques); mass (n,) kg, pos (n, 3) m and
    quat (n, 4) at the step's start; inv_inertia (n, 3); gravity (3,) m/s². One compiled pass
    (the guard runs every step)."""
    energy = np.full(len(mass), np.inf)
    _free_flight_kernel(mass, pos, vel_start, vel_end, quat, ang_mom, inv_inertia,
                        np.asarray(gravity, dtype=float), np.asarray(rows, dtype=np.int64),
                        float(h), energy)
    return energy


@njit(cache=True, nogil=True)
def _free_flight_kernel(mass, pos, vel_start, vel_end, quat, ang_mom, inv_inertia, gravity, rows,
                        h, energy):
    for r in rows:
        height = 0.0  # −g·x at the end of the flight, per unit mass
        for a in range(3):
            height -= (pos[r, a] + 0.5 * h * (vel_start[r, a] + vel_end[r, a])) * gravity[a]
        energy[r] = (_kinetic(mass, vel_end, quat, ang_mom, inv_inertia, r)
                     + mass[r] * height)


def remove_energy_gain(allowed, mass, vel, quat, ang_mom, inv_inertia, pos, gravity, rows) -> None:
    """Make sure no body of ``rows`` ends the step with more mechanical energy than ``allowed``
    (n,) J (its free-flight energy over the step), editing vel, ang_mom and pos (n, 3) in place.

    The excess is taken from the kinetic energy first, by scaling v and L (keeps every direction).
    If the contacts lifted a body by more than its kinetic energy can pay for (a resting body
    pivoting on an edge can be raised a few nanometres by its corner constraints), the rest is
    taken back by lowering it along gravity. Each body is its own island of
    ``remove_island_energy_gain``.
    """
    rows = np.asarray(rows, dtype=np.int64)
    remove_island_energy_gain(allowed, mass, vel, quat, ang_mom, inv_inertia, pos, gravity, rows,
                              np.arange(len(rows)), np.ones(len(rows), dtype=bool))


def remove_island_energy_gain(allowed, mass, vel, quat, ang_mom, inv_inertia, pos, gravity, rows,
                              island, walled) -> None:
    """``remove_energy_gain`` for bodies that touched each other: a collision hands energy from
    one body to another, so only an island's total is compared with its free-flight total.

    rows (r,) body rows; island (r,) label ≥ 0 per row (bodies with one label form an island);
    walled (r,) bool: the body touched a wall. A lone body's v and L are scaled by α with
    α² K + U = allowed. In an island of several, all velocities and spins are scaled by one α
    if the island touches a wall (the walls take momentum anyway); a free island keeps its linear
    momentum exact: only the velocities about its centre-of-mass velocity are scaled. What the
    kinetic energy cannot pay for is taken by lowering the whole island along gravity, which
    moves no body relative to another. One compiled pass (the guard runs every step).
    """
    if len(rows) == 0:
        return
    island = np.ascontiguousarray(island, dtype=np.int64)
    _island_guard_kernel(np.ascontiguousarray(allowed, dtype=float), mass, vel, quat, ang_mom,
                         inv_inertia, pos, np.asarray(gravity, dtype=float),
                         np.ascontiguousarray(rows, dtype=np.int64), island,
                         np.ascontiguousarray(walled, dtype=np.bool_), int(island.max()) + 1)


@njit(cache=True)
def _kinetic_scale(spare, kinetic):
    """α in [0, 1] with α² K = spare where that is possible (0 if spare ≤ 0, 1 if spare ≥ K);
    divides only when the quotient is strictly between 0 and 1, so a kinetic energy of a few
    denormals cannot overflow it."""
    if spare <= 0.0:
        return 0.0
    if kinetic <= spare:
        return 1.0
    return np.sqrt(spare / kinetic)


@njit(cache=True, nogil=True)
def _island_guard_kernel(allowed, mass, vel, quat, ang_mom, inv_inertia, pos, gravity, rows,
                         island, walled, labels):
    """Loop body of ``remove_island_energy_gain``; labels: 1 + the largest label.

    Each island's motion is split into the part that is kept and the rest, which is scaled by
    α: for a free island (several bodies, no wall) the kept part is the rigid motion with the
    island's momentum P and angular momentum L about its centre of mass (every body moving with
    V + Ω × (x − X), spinning I_w Ω, with Ω = I_island⁻¹ L), the least kinetic energy those P
    and L allow, so scaling the rest keeps P and L exact and K = K_rigid + α² K_rest
    (docs/physics.md#energy-guard); for a walled or lone body nothing is kept."""
    size = np.zeros(labels, dtype=np.int64)
    total_mass = np.zeros(labels)
    centre = np.zeros((labels, 3))   # m·x summed, then the centre of mass X
    v_cm = np.zeros((labels, 3))     # momentum, then the centre-of-mass velocity V
    touches_wall = np.zeros(labels, dtype=np.bool_)
    for i in range(rows.shape[0]):
        r, g = rows[i], island[i]
        size[g] += 1
        total_mass[g] += mass[r]
        for a in range(3):
            centre[g, a] += mass[r] * pos[r, a]
            v_cm[g, a] += mass[r] * vel[r, a]
        touches_wall[g] |= walled[i]
    free = np.zeros(labels, dtype=np.bool_)
    for g in range(labels):
        free[g] = size[g] > 1 and not touches_wall[g] and total_mass[g] > 0.0
        if free[g]:
            centre[g] /= total_mass[g]
            v_cm[g] /= total_mass[g]
        else:
            centre[g] = 0.0
            v_cm[g] = 0.0
    spin = np.zeros((labels, 3))
    if free.any():
        spin = _island_spin(mass, vel, quat, ang_mom, inv_inertia, pos, rows, island, free,
                            centre, v_cm, labels)
    k_rest, potential, limit, k_kept = (np.zeros(labels), np.zeros(labels), np.zeros(labels),
                                        np.zeros(labels))
    keep_v, keep_l = np.zeros((rows.shape[0], 3)), np.zeros((rows.shape[0], 3))
    for i in range(rows.shape[0]):
        r, g = rows[i], island[i]
        if free[g]:
            _kept_motion(r, g, quat, inv_inertia, pos, centre, v_cm, spin, keep_v[i], keep_l[i])
            k_kept[g] += _motion_energy(mass, quat, inv_inertia, r, keep_v[i, 0],
                                        keep_v[i, 1], keep_v[i, 2], keep_l[i, 0], keep_l[i, 1],
                                        keep_l[i, 2])
        k_rest[g] += _motion_energy(mass, quat, inv_inertia, r, vel[r, 0] - keep_v[i, 0],
                                    vel[r, 1] - keep_v[i, 1], vel[r, 2] - keep_v[i, 2],
                                    ang_mom[r, 0] - keep_l[i, 0], ang_mom[r, 1] - keep_l[i, 1],
                                    ang_mom[r, 2] - keep_l[i, 2])
        potential[g] -= mass[r] * (pos[r, 0] * gravity[0] + pos[r, 1] * gravity[1]
                                   + pos[r, 2] * gravity[2])
        limit[g] += allowed[r]
    g2 = gravity[0] ** 2 + gravity[1] ** 2 + gravity[2] ** 2
    alpha, drop = np.ones(labels), np.zeros(labels)
    gained = np.zeros(labels, dtype=np.bool_)
    for g in range(labels):
        if size[g] == 0:
            continue
        excess = k_rest[g] + k_kept[g] + potential[g] - limit[g]
        if excess <= ENERGY_ROUNDING * (abs(limit[g]) + k_rest[g] + k_kept[g]):
            continue
        gained[g] = True
        # α² K_rest + K_kept + U = allowed (α = 0 if K_kept + U is over)
        alpha[g] = _kinetic_scale(limit[g] - potential[g] - k_kept[g], k_rest[g])
        if g2 > 0.0 and total_mass[g] > 0.0:  # m along gravity/g that pays for the rest
            drop[g] = max(potential[g] + k_kept[g] - limit[g], 0.0) / (total_mass[g] * g2)
    for i in range(rows.shape[0]):
        r, g = rows[i], island[i]
        if not gained[g]:
            continue
        for a in range(3):
            vel[r, a] = keep_v[i, a] + alpha[g] * (vel[r, a] - keep_v[i, a])
            ang_mom[r, a] = keep_l[i, a] + alpha[g] * (ang_mom[r, a] - keep_l[i, a])
            pos[r, a] += drop[g] * gravity[a]


@njit(cache=True, nogil=True)
def _island_spin(mass, vel, quat, ang_mom, inv_inertia, pos, rows, island, free, centre, v_cm,
                 labels):
    """Ω (labels, 3) rad/s of each free island's rigid motion: I_island⁻¹ L, both about the
    island's centre of mass (zero for the others)."""
    moment = np.zeros((labels, 3))
    inertia = np.zeros((labels, 3, 3))
    rot = np.empty((3, 3))  # columns: the body axes in the world
    for i in range(rows.shape[0]):
        r, g = rows[i], island[i]
        if not free[g]:
            continue
        ax, ay, az = pos[r, 0] - centre[g, 0], pos[r, 1] - centre[g, 1], pos[r, 2] - centre[g, 2]
        px = mass[r] * (vel[r, 0] - v_cm[g, 0])
        py = mass[r] * (vel[r, 1] - v_cm[g, 1])
        pz = mass[r] * (vel[r, 2] - v_cm[g, 2])
        moment[g, 0] += ay * pz - az * py + ang_mom[r, 0]
        moment[g, 1] += az * px - ax * pz + ang_mom[r, 1]
        moment[g, 2] += ax * py - ay * px + ang_mom[r, 2]
        for k in range(3):
            rot[0, k], rot[1, k], rot[2, k] = vector_to_world_frame(
                quat, r, 1.0 if k == 0 else 0.0, 1.0 if k == 1 else 0.0, 1.0 if k == 2 else 0.0)
        arm = (ax, ay, az)
        arm2 = ax * ax + ay * ay + az * az
        for a in range(3):
            for b in range(3):
                own = 0.0  # (R diag(I) Rᵀ)[a, b]
                for k in range(3):
                    own += rot[a, k] * rot[b, k] / inv_inertia[r, k]
                parallel = mass[r] * ((arm2 if a == b else 0.0) - arm[a] * arm[b])
                inertia[g, a, b] += own + parallel
    spin = np.zeros((labels, 3))
    for g in range(labels):
        if free[g]:
            spin[g] = np.linalg.solve(inertia[g], moment[g])
    return spin


@njit(cache=True, inline='always')
def _kept_motion(r, g, quat, inv_inertia, pos, centre, v_cm, spin, keep_v, keep_l):
    """Body r's share of its island's rigid motion: keep_v = V + Ω × (x − X), keep_l = I_w Ω
    (= R I Rᵀ Ω)."""
    ax, ay, az = pos[r, 0] - centre[g, 0], pos[r, 1] - centre[g, 1], pos[r, 2] - centre[g, 2]
    wx, wy, wz = spin[g, 0], spin[g, 1], spin[g, 2]
    keep_v[0] = v_cm[g, 0] + wy * az - wz * ay
    keep_v[1] = v_cm[g, 1] + wz * ax - wx * az
    keep_v[2] = v_cm[g, 2] + wx * ay - wy * ax
    bx, by, bz = vector_to_body_frame(quat, r, wx, wy, wz)
    keep_l[0], keep_l[1], keep_l[2] = vector_to_world_frame(
        quat, r, bx / inv_inertia[r, 0], by / inv_inertia[r, 1], bz / inv_inertia[r, 2])


@njit(cache=True, inline='always')
def _motion_energy(mass, quat, inv_inertia, r, vx, vy, vz, mx, my, mz):
    """½ m v² + ½ L_b·I⁻¹ L_b J of body r moving with v = (vx, vy, vz) m/s and the world
    angular momentum (mx, my, mz) kg·m²/s."""
    lx, ly, lz = vector_to_body_frame(quat, r, mx, my, mz)
    return 0.5 * (mass[r] * (vx * vx + vy * vy + vz * vz) + inv_inertia[r, 0] * lx * lx
                  + inv_inertia[r, 1] * ly * ly + inv_inertia[r, 2] * lz * lz)
