"""The joints' projection when they form a forest, compiled: the Newton steps on Φ = 0 and the
velocities onto J v = 0, each solved by the tree factorisation (constraints/tree.py) in one
compiled call, no Python between the steps (docs/physics.md#joint-projection).

constraints/projection.py calls these first; it solves with its general solve only what they
cannot (joints not a forest, resting contacts held with the joints, a solve that came out
not finite). Each runs the arithmetic, in the order, of the step-by-step functions it replaced
(numpy's ``einsum`` of three terms adds the first and the third first), so the bits are the same.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from physics.constraints.solve import ROWS, JointSet, joint_rows
from physics.constraints.tree import (
    body_impulses,
    fits,
    largest_diagonal,
    row_rates,
    tree_factor,
    tree_resolve,
)
from physics.dynamics.integrator import (
    _inverse_inertia_kernel,
    _response_kernel,
    _rotate_free_kernel,
)
from physics.geometry.rotation import _matrix_kernel, _mul_kernel
from physics.settings import CHORD_GAIN, JOINT_TOLERANCE, NEWTON_STEPS, REGULARISATION

CLOSED, OPEN, NOT_SOLVED = 1, 0, -1  # what ``newton_forest`` ended with


@njit(cache=True, nogil=True)
def rows_and_error(joints, pos, quat, jac, phi, active, nblock):
    """Every joint's rows at poses pos (n, 3), quat (n, 4) into jac (m, ROWS, 12), phi, active
    (m, ROWS), nblock (m,) (``solve.joint_rows``); returns the largest |Φ| of the equality
    rows, m or rad."""
    joint_rows(joints, pos, quat, jac, phi, active, nblock)
    worst = 0.0
    for j in range(len(joints.kind)):
        for r in range(nblock[j]):
            worst = max(worst, abs(phi[j, r]))
    return worst


@njit(cache=True, nogil=True)
def factor(first, second, nblock, present, along, inv_mass, response, shape):
    """(True, ``tree.tree_factor``'s factors) of J W Kᵀ + εE, ε REGULARISATION times its
    largest diagonal, or (False, empty factors): not a forest, or nothing to solve. shape:
    factors made before, whose tree serves again where it fits (``tree.fits``)."""
    scale = largest_diagonal(first, second, nblock, present, along, inv_mass, response)
    if not (np.isfinite(scale) and scale > 0.0):
        return False, no_factors()
    return tree_factor(first, second, nblock, present, along, inv_mass, response,
                       REGULARISATION * scale, shape)


@njit(cache=True, nogil=True)
def no_factors():
    """Empty factors, of the type ``factor`` returns."""
    empty = np.zeros((0, 6, 6))
    return (np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0, np.int64), empty, empty,
            empty)


@njit(cache=True, nogil=True)
def resolve(factors, rhs, x, y):
    """x (m, 6), y (n, 6) from ``factor``'s factors and rhs (m, ≥nb); False if not finite."""
    tree_resolve(factors, rhs, x, y)
    return _finite(x) and _finite(y)


@njit(cache=True, nogil=True)
def _finite(values):
    """Whether every entry of values (k, l) is finite (without the (k, l) array of flags that
    ``np.isfinite`` makes: a Newton step resolves several times)."""
    for i in range(values.shape[0]):
        for k in range(values.shape[1]):
            if not np.isfinite(values[i, k]):
                return False
    return True


@njit(cache=True, nogil=True)
def world_response(quat, inv_inertia):
    """(n, 3, 3) R I⁻¹ Rᵀ of orientations quat (n, 4), principal inverse moments (n, 3)."""
    rotm = np.empty((quat.shape[0], 3, 3))
    _matrix_kernel(quat, rotm)
    out = np.empty_like(rotm)
    _inverse_inertia_kernel(rotm, inv_inertia, out)
    return out


@njit(cache=True, nogil=True)
def turn(quat, dtheta):
    """quat (k, 4) turned by small world rotation vectors dtheta (k, 3) rad, renormalised, in
    place: q + ½ (0, δθ) ⊗ q, the sums in numpy's order (``projection._turn``)."""
    for i in range(quat.shape[0]):
        w, v0, v1, v2 = quat[i, 0], quat[i, 1], quat[i, 2], quat[i, 3]
        h0, h1, h2 = 0.5 * dtheta[i, 0], 0.5 * dtheta[i, 1], 0.5 * dtheta[i, 2]
        nw = w - ((h0 * v0 + h1 * v1) + h2 * v2)
        n0 = (v0 + h0 * w) + (h1 * v2 - h2 * v1)
        n1 = (v1 + h1 * w) + (h2 * v0 - h0 * v2)
        n2 = (v2 + h2 * w) + (h0 * v1 - h1 * v0)
        norm = np.sqrt(((nw * nw + n0 * n0) + n1 * n1) + n2 * n2)
        quat[i, 0], quat[i, 1], quat[i, 2], quat[i, 3] = nw / norm, n0 / norm, n1 / norm, n2 / norm


@njit(cache=True, nogil=True)
def spin_of(inv_iw, ang_mom):
    """(n, 3) ω = I_w⁻¹ L of world inverse inertias inv_iw (n, 3, 3) and ang_mom (n, 3), each
    sum as numpy's ``einsum("nij,nj->ni")`` adds it (first and third term first)."""
    out = np.empty_like(ang_mom)
    for n in range(ang_mom.shape[0]):
        for i in range(3):
            out[n, i] = ((inv_iw[n, i, 0] * ang_mom[n, 0] + inv_iw[n, i, 2] * ang_mom[n, 2])
                         + inv_iw[n, i, 1] * ang_mom[n, 1])
    return out


@njit(cache=True, nogil=True)
def newton_forest(joints, start_jac, shake, spin, start_quat, moved, free, later, impulses,
                  pos, quat, vel, ang_mom, inv_mass, inv_inertia, h, chord):
    """``projection._newton``'s Newton steps Δλ = −(J W Kᵀ)⁻¹ Φ, each solved on the joints'
    tree (chord steps: the factors kept while each step gains CHORD_GAIN). chord: with shake,
    the tree factors of the step's velocity system J M⁻¹ Jᵀ at its start poses, which the
    first step takes as its chord where they fit the rows (``fits``; ``no_factors()``: none).

    shake: K the start rows start_jac (m, ROWS, 12) and the impulse Kᵀ Δλ / h on vel, ang_mom
    and impulses, else K = J (no velocity change); spin (with shake): a body turns by the
    rotation step from start_quat (n, 4) with the L moved (n, 3, edited in place), then by
    later (n, 4), W the response of that step as first taken (to free (n, 4)); else W = M⁻¹.
    pos, quat, vel, ang_mom (n, …) and impulses (m, ROWS) change in place. Returns (CLOSED,
    OPEN or NOT_SOLVED, the step it ended at, the rows jac, phi, active, nblock at the poses it
    left): NOT_SOLVED when that step's tree solve failed (not a forest, or not finite), to be
    done by the general solve. joints: the ``JointSet``, plain or named
    (docs/architecture.md#records)."""
    joints = JointSet(*joints)
    n, m = pos.shape[0], len(joints.kind)
    jac, phi = np.empty((m, ROWS, 12)), np.empty((m, ROWS))
    active, nblock = np.empty((m, ROWS), np.bool_), np.empty(m, np.int64)
    x, move, impulse = np.empty((m, 6)), np.empty((n, 6)), np.empty((n, 6))
    fresh = np.empty((n, 4))
    last_worst = np.inf
    have, factors = False, no_factors()
    for step in range(NEWTON_STEPS + 1):
        worst = rows_and_error(joints, pos, quat, jac, phi, active, nblock)
        if worst < JOINT_TOLERANCE:
            return CLOSED, step, jac, phi, active, nblock
        if step == NEWTON_STEPS:
            return OPEN, step, jac, phi, active, nblock
        along = start_jac if shake else jac
        if step == 0 and shake and fits(chord, joints.first, joints.second, nblock, inv_mass):
            # J M⁻¹ Jᵀ at the start is J W Kᵀ to first order in h: a chord step on it saves a
            # factorisation, and the gain test below refactors where it served too little
            # (docs/physics.md#joint-projection)
            have, factors = True, chord
        if worst > CHORD_GAIN * last_worst:  # the chord step gained too little: factor afresh
            have = False
        last_worst = worst
        if not have:
            if spin:
                response = np.empty((n, 3, 3))
                _response_kernel(start_quat, free, moved, inv_inertia, h, response)
            else:
                response = world_response(quat, inv_inertia)
            have, factors = factor(joints.first, joints.second, nblock, jac, along, inv_mass,
                                   response, factors)
        if not have or not resolve(factors, -phi, x, move):
            return NOT_SOLVED, step, jac, phi, active, nblock
        body_impulses(joints.first, joints.second, nblock, along, x, impulse)
        for i in range(n):
            for a in range(3):
                pos[i, a] += move[i, a]
        if spin:
            for i in range(n):
                for a in range(3):
                    moved[i, a] += impulse[i, 3 + a] / h
            _mul_kernel(later, fresh_free(start_quat, moved, inv_inertia, h), fresh)
            quat[:] = fresh
        else:
            turn(quat, move[:, 3:6])
        if shake:
            for i in range(n):
                for a in range(3):
                    vel[i, a] += move[i, a] / h
                    ang_mom[i, a] += impulse[i, 3 + a] / h
            for j in range(m):
                for s in range(6):
                    impulses[j, s] += x[j, s] / h
    return OPEN, NEWTON_STEPS, jac, phi, active, nblock


@njit(cache=True, nogil=True)
def fresh_free(start_quat, moved, inv_inertia, h):
    """(n, 4) the rotation step from start_quat with the world L moved (``rotate_free``)."""
    out = np.empty_like(start_quat)
    _rotate_free_kernel(start_quat, moved, inv_inertia, h, out)
    return out


@njit(cache=True, nogil=True)
def velocities_forest(joints, rows, impulses, vel, ang_mom, inv_mass, inv_iw, factors, have):
    """``projection.project_velocities`` without kept rows: λ = −(J M⁻¹ Jᵀ)⁻¹ J v on the
    joints' tree, at the rows (jac, phi, active, nblock) and the world inverse inertias inv_iw
    (n, 3, 3) there; vel, ang_mom (n, 3) and impulses (m, ROWS) in place. factors: the tree's
    factors of that system when have, else made here. Returns (True, the factors used), or
    (False, …) with nothing changed when the tree solve failed. joints: the ``JointSet``, plain
    or named."""
    joints = JointSet(*joints)
    jac, _, _, nblock = rows
    n, m = vel.shape[0], nblock.shape[0]
    omega = spin_of(inv_iw, ang_mom)
    rate = np.zeros((m, ROWS))
    row_rates(joints.first, joints.second, nblock, jac, vel, omega, rate)
    if not have:
        have, factors = factor(joints.first, joints.second, nblock, jac, jac, inv_mass, inv_iw,
                               factors)
    x, y = np.empty((m, 6)), np.empty((n, 6))
    if not have or not resolve(factors, -rate, x, y):
        return False, factors
    impulse = np.empty((n, 6))
    body_impulses(joints.first, joints.second, nblock, jac, x, impulse)
    for i in range(n):
        for a in range(3):
            vel[i, a] += impulse[i, a] * inv_mass[i]
            ang_mom[i, a] += impulse[i, 3 + a]
    for j in range(m):
        for s in range(6):
            impulses[j, s] += x[j, s]
    return True, factors
