"""Energy diagnostics and the passivity of contacts.

Contacts are passive: a wall can take mechanical energy away but never give any. A discrete step
can still gain a little where an impulse is applied at a step boundary instead of the exact instant
(a rotating body's rebound, a penetration projected out), so after the contacts each body's energy
is compared with what it would have had in free flight over the same step, and any excess is
removed by scaling its velocity and angular momentum — never the other way. This is what keeps
"energy never grows through a bounce" true for every e ≤ 1 (physics.md §3).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from .integrator import to_body_frame

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
        lx, ly, lz = to_body_frame(quat, ang_mom, i)
        out[i] = 0.5 * mass[i] * (vel[i, 0] ** 2 + vel[i, 1] ** 2 + vel[i, 2] ** 2) + 0.5 * (
            inv_inertia[i, 0] * lx * lx + inv_inertia[i, 1] * ly * ly + inv_inertia[i, 2] * lz * lz)


def potential_energy(mass, pos, gravity) -> np.ndarray:
    """Gravitational potential energy ``−m g·x`` (zero at the origin); (n,) J."""
    return -mass * (pos @ np.asarray(gravity, dtype=float))


def _kinetic_scale(spare, kinetic) -> np.ndarray:
    """(r,) α in [0, 1] with α² K = spare where that is possible (0 if spare < 0, 1 if spare ≥ K).

    spare, kinetic (r,) J. Divides only where the quotient is strictly between 0 and 1, so a
    kinetic energy of a few denormals cannot overflow it."""
    inside = (spare > 0.0) & (kinetic > spare)
    ratio = np.divide(spare, kinetic, out=(spare > 0.0).astype(float), where=inside)
    return np.sqrt(ratio)


def remove_energy_gain(allowed, mass, vel, quat, ang_mom, inv_inertia, pos, gravity, rows) -> None:
    """Make sure no body of ``rows`` ends the step with more mechanical energy than ``allowed``
    (n,) J (its free-flight energy over the step), editing vel, ang_mom and pos (n, 3) in place.

    The excess is taken from the kinetic energy first, by scaling v and L (keeps every direction).
    If the contacts lifted a body by more than its kinetic energy can pay for (a resting body
    pivoting on an edge can be raised a few nanometres by its corner constraints), the rest is
    taken back by lowering it along gravity.
    """
    if len(rows) == 0:
        return
    kinetic = kinetic_energy(mass[rows], vel[rows], quat[rows], ang_mom[rows], inv_inertia[rows])
    potential = potential_energy(mass[rows], pos[rows], gravity)
    limit = allowed[rows]
    excess = kinetic + potential - limit
    gained = excess > ENERGY_ROUNDING * (np.abs(limit) + kinetic)
    if not np.any(gained):
        return
    rows, kinetic, potential, limit = rows[gained], kinetic[gained], potential[gained], limit[gained]
    # ½ m (αv)² + ½ (αL)·(αω) = α² K: choose α so that α² K + U = allowed (α = 0 if U alone is over)
    alpha = _kinetic_scale(limit - potential, kinetic)
    vel[rows] *= alpha[:, None]
    ang_mom[rows] *= alpha[:, None]
    gravity = np.asarray(gravity, dtype=float)
    g2 = gravity @ gravity
    if g2 > 0.0:
        lift = np.maximum(potential - limit, 0.0)  # J of potential energy above the limit
        pos[rows] += (lift / (mass[rows] * g2))[:, None] * gravity


def remove_island_energy_gain(allowed, mass, vel, quat, ang_mom, inv_inertia, pos, gravity, rows,
                              island, walled) -> None:
    """``remove_energy_gain`` for bodies that touched each other: a collision hands energy from
    one body to another, so only an island's total is compared with its free-flight total.

    rows (r,) body rows; island (r,) label per row (bodies with one label form an island);
    walled (r,) bool: the body touched a wall. A lone body is treated exactly as by
    ``remove_energy_gain``. In an island of several, all velocities and spins are scaled by one α
    if the island touches a wall (the walls take momentum anyway); a free island keeps its linear
    momentum exact: only the velocities about its centre-of-mass velocity are scaled. What the
    kinetic energy cannot pay for is taken by lowering the whole island along gravity, which
    moves no body relative to another.
    """
    if len(rows) == 0:
        return
    _, index, size = np.unique(island, return_inverse=True, return_counts=True)
    alone = size[index] == 1
    remove_energy_gain(allowed, mass, vel, quat, ang_mom, inv_inertia, pos, gravity, rows[alone])
    rows, index, walled = rows[~alone], index[~alone], walled[~alone]
    if len(rows) == 0:
        return
    groups = len(size)
    m = mass[rows]
    total_mass = np.bincount(index, m, groups)
    momentum = np.stack([np.bincount(index, m * vel[rows, a], groups) for a in range(3)], axis=1)
    v_cm = momentum / np.where(total_mass > 0, total_mass, 1.0)[:, None]           # (g, 3)
    v_cm[np.bincount(index, walled, groups) > 0] = 0.0  # walled: scale the velocities themselves
    relative = vel[rows] - v_cm[index]
    spin = kinetic_energy(m, np.zeros_like(relative), quat[rows], ang_mom[rows], inv_inertia[rows])
    k_rel = np.bincount(index, 0.5 * m * np.einsum("ij,ij->i", relative, relative) + spin, groups)
    k_cm = 0.5 * total_mass * np.einsum("ij,ij->i", v_cm, v_cm)
    potential = np.bincount(index, potential_energy(m, pos[rows], gravity), groups)
    limit = np.bincount(index, allowed[rows], groups)
    excess = k_rel + k_cm + potential - limit
    gained = excess > ENERGY_ROUNDING * (np.abs(limit) + k_rel + k_cm)
    if not np.any(gained):
        return
    alpha = _kinetic_scale(limit - potential - k_cm, k_rel)
    alpha = np.where(gained, alpha, 1.0)
    vel[rows] = v_cm[index] + alpha[index, None] * relative
    ang_mom[rows] *= alpha[index, None]
    gravity = np.asarray(gravity, dtype=float)
    g2 = gravity @ gravity
    if g2 > 0.0:
        lift = np.where(gained, np.maximum(potential + k_cm - limit, 0.0), 0.0)  # J
        drop = lift / (np.where(total_mass > 0.0, total_mass, 1.0) * g2)  # m along gravity/g
        pos[rows] += drop[index, None] * gravity
