"""The joints' rows and their velocity solve (sequential impulses, each joint's equality rows
as one small linear system); the position projection is constraints/projection.py.

Every joint j has up to ROWS rows, each a Jacobian row (12,) = [linear A, angular A, linear B,
angular B] so that J v is the rate of the row's position error Φ (B relative to A):
  rows 0 … nblock−1  equalities (Φ = 0), solved together: (J M⁻¹ Jᵀ) λ = −J v, one small
                     (≤ 6×6) solve per joint, so a single joint to the world is exact at once;
  row LOWER, UPPER   one-sided (Φ ≥ 0, λ ≥ 0): limits and distance min/max, speculative so a
                     fast approach stops at the limit within the step;
  row DRIVE          a motor (J v → speed, |λ| ≤ max·h) or a spring-damper (soft row).
Impulses on A are +Jᵀλ over its columns, on B likewise; the world (index < 0) takes none.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit

BALL, HINGE, PRISMATIC, FIXED, DISTANCE = 0, 1, 2, 3, 4
ROWS = 9
LOWER, UPPER, DRIVE = 6, 7, 8
NO_MOTOR = -1.0


class JointSet(NamedTuple):
    """The static joints of a world, m of them, frames fixed at creation.

    kind (m,) int64 (BALL…DISTANCE); first, second (m,) int64 body rows (second < 0: world);
    local_a, local_b (m, 3) anchor in each body's principal frame (world frame for the world), m;
    axis_a, perp_a (m, 3) joint axis and a perpendicular in A's frame; axis_b, perp_b (m, 3) the
    same two directions in B's frame; rel_quat (m, 4) B's orientation in A's frame at creation;
    limited (m,) bool, lo, hi (m,) rad or m; motor_speed (m,) rad/s or m/s, motor_max (m,)
    N·m or N (NO_MOTOR: none); min_length, max_length, rest_length (m,) m; stiffness (m,) N/m,
    damping (m,) N·s/m.
    """

    kind: np.ndarray
    first: np.ndarray
    second: np.ndarray
    local_a: np.ndarray
    local_b: np.ndarray
    axis_a: np.ndarray
    perp_a: np.ndarray
    axis_b: np.ndarray
    perp_b: np.ndarray
    rel_quat: np.ndarray
    limited: np.ndarray
    lo: np.ndarray
    hi: np.ndarray
    motor_speed: np.ndarray
    motor_max: np.ndarray
    min_length: np.ndarray
    max_length: np.ndarray
    rest_length: np.ndarray
    stiffness: np.ndarray
    damping: np.ndarray


class JointRows(NamedTuple):
    """One step's rows (see the module docstring), m joints: jac (m, ROWS, 12); phi (m, ROWS)
    position error, m or rad; active (m, ROWS) bool; nblock (m,) int64; block_inv (m, 6, 6)
    (J M⁻¹ Jᵀ)⁻¹ of the equalities of the joints the sweeps visit (zero for the others);
    row_mass (m, ROWS) 1/(J M⁻¹ Jᵀ) of the other rows (softened for springs); soft (m,) the
    spring's γ, 1/(N·s/m); target (m, ROWS) velocity bias."""

    jac: np.ndarray
    phi: np.ndarray
    active: np.ndarray
    nblock: np.ndarray
    block_inv: np.ndarray
    row_mass: np.ndarray
    soft: np.ndarray
    target: np.ndarray


def empty_rows(m: int) -> JointRows:
    return JointRows(np.zeros((m, ROWS, 12)), np.zeros((m, ROWS)), np.zeros((m, ROWS), np.bool_),
                     np.zeros(m, np.int64), np.zeros((m, 6, 6)), np.zeros((m, ROWS)),
                     np.zeros(m), np.zeros((m, ROWS)))


# Small vectors are 3-tuples of floats in the kernels below: a joint's rows are built and solved
# many times a step (1 000 joints: ~10 000 row builds), and numba allocates every small array
# on the heap, which cost more than the arithmetic (bench/joints.py)


@njit(cache=True, inline='always')
def _cross(a, b):
    return (a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0])


@njit(cache=True, inline='always')
def _dot(a, b):
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]


@njit(cache=True, inline='always')
def _add(a, b):
    return (a[0] + b[0], a[1] + b[1], a[2] + b[2])


@njit(cache=True, inline='always')
def _sub(a, b):
    return (a[0] - b[0], a[1] - b[1], a[2] - b[2])


@njit(cache=True, inline='always')
def _rotate(q, v):
    """R(q) v for the quaternion q (w, x, y, z) and v, both tuples: v + w t + u × t, t = 2 u × v."""
    w, x, y, z = q
    tx = 2.0 * (y * v[2] - z * v[1])
    ty = 2.0 * (z * v[0] - x * v[2])
    tz = 2.0 * (x * v[1] - y * v[0])
    return (v[0] + w * tx + (y * tz - z * ty), v[1] + w * ty + (z * tx - x * tz),
            v[2] + w * tz + (x * ty - y * tx))


@njit(cache=True)
def quat_matrix(q, out):
    """out (3, 3) ← rotation matrix of the unit quaternion q (w, x, y, z)."""
    w, x, y, z = q[0], q[1], q[2], q[3]
    out[0, 0] = 1 - 2 * (y * y + z * z)
    out[0, 1] = 2 * (x * y - w * z)
    out[0, 2] = 2 * (x * z + w * y)
    out[1, 0] = 2 * (x * y + w * z)
    out[1, 1] = 1 - 2 * (x * x + z * z)
    out[1, 2] = 2 * (y * z - w * x)
    out[2, 0] = 2 * (x * z - w * y)
    out[2, 1] = 2 * (y * z + w * x)
    out[2, 2] = 1 - 2 * (x * x + y * y)


@njit(cache=True, inline='always')
def _qmul(a, b):
    return (a[0] * b[0] - a[1] * b[1] - a[2] * b[2] - a[3] * b[3],
            a[0] * b[1] + a[1] * b[0] + a[2] * b[3] - a[3] * b[2],
            a[0] * b[2] - a[1] * b[3] + a[2] * b[0] + a[3] * b[1],
            a[0] * b[3] + a[1] * b[2] - a[2] * b[1] + a[3] * b[0])


@njit(cache=True, inline='always')
def _point_row(jac, j, r, ra, rb, d, n):
    """Row r of joint j in jac (m, ROWS, 12) for the separation rate n·(ṗB − ṗA) of the
    anchors: ra, rb their arms, d = pB − pA (A's direction n turns with A, so A's arm reaches to
    pB)."""
    t = _cross(_add(ra, d), n)
    u = _cross(rb, n)
    for k in range(3):
        jac[j, r, k] = -n[k]
        jac[j, r, 3 + k] = -t[k]
        jac[j, r, 6 + k] = n[k]
        jac[j, r, 9 + k] = u[k]


@njit(cache=True, nogil=True)
def joint_rows(joints, pos, quat, jac, phi, active, nblock):
    """Every joint's rows at the poses pos (n, 3), quat (n, 4): fills jac (m, ROWS, 12), phi
    (m, ROWS), active (m, ROWS) and nblock (m,), the number of equality rows of each.

    One loop over the joints with the frames read in it: numba counts a reference to every
    array an inlined helper takes, at each call, and with the joints' twenty arrays (and a
    view of jac, phi and active per joint) the counting cost more than the rows (a 100-link
    chain's rows went from 24 to 11 µs; docs/architecture.md#records)."""
    for j in range(len(joints.kind)):
        a, b, kind = joints.first[j], joints.second[j], joints.kind[j]
        pa, qa = (0.0, 0.0, 0.0), (1.0, 0.0, 0.0, 0.0)  # the world's pose
        if a >= 0:
            pa = (pos[a, 0], pos[a, 1], pos[a, 2])
            qa = (quat[a, 0], quat[a, 1], quat[a, 2], quat[a, 3])
        pb, qb = (0.0, 0.0, 0.0), (1.0, 0.0, 0.0, 0.0)
        if b >= 0:
            pb = (pos[b, 0], pos[b, 1], pos[b, 2])
            qb = (quat[b, 0], quat[b, 1], quat[b, 2], quat[b, 3])
        # the joint's frames in its bodies, as tuples
        local_a = (joints.local_a[j, 0], joints.local_a[j, 1], joints.local_a[j, 2])
        local_b = (joints.local_b[j, 0], joints.local_b[j, 1], joints.local_b[j, 2])
        axis_a = (joints.axis_a[j, 0], joints.axis_a[j, 1], joints.axis_a[j, 2])
        perp_a = (joints.perp_a[j, 0], joints.perp_a[j, 1], joints.perp_a[j, 2])
        axis_b = (joints.axis_b[j, 0], joints.axis_b[j, 1], joints.axis_b[j, 2])
        perp_b = (joints.perp_b[j, 0], joints.perp_b[j, 1], joints.perp_b[j, 2])
        ra = _rotate(qa, local_a)
        rb = _rotate(qb, local_b)
        d = _sub(_add(pb, rb), _add(pa, ra))
        for r in range(ROWS):
            for c in range(12):
                jac[j, r, c] = 0.0
            phi[j, r] = 0.0
            active[j, r] = False
        zero = (0.0, 0.0, 0.0)
        n = 0
        if kind == BALL or kind == HINGE or kind == FIXED:
            for k in range(3):  # the anchors coincide
                axis = (1.0 if k == 0 else 0.0, 1.0 if k == 1 else 0.0, 1.0 if k == 2 else 0.0)
                _point_row(jac, j, n, ra, rb, zero, axis)
                phi[j, n] = d[k]
                n += 1
        if kind == HINGE:  # A's axis stays perpendicular to two directions of B's
            ha = _rotate(qa, axis_a)
            b1 = _rotate(qb, perp_b)
            b2 = _cross(_rotate(qb, axis_b), b1)
            for bk in (b1, b2):
                t = _cross(ha, bk)
                for k in range(3):
                    jac[j, n, 3 + k] = t[k]
                    jac[j, n, 9 + k] = -t[k]
                phi[j, n] = _dot(ha, bk)
                n += 1
        if kind == PRISMATIC or kind == FIXED:  # no relative rotation: θ of q_A q_rel q_B*
            rel = (joints.rel_quat[j, 0], joints.rel_quat[j, 1], joints.rel_quat[j, 2],
                   joints.rel_quat[j, 3])
            qe = _qmul(_qmul(qa, rel), (qb[0], -qb[1], -qb[2], -qb[3]))
            sign = 1.0 if qe[0] >= 0.0 else -1.0
            for k in range(3):
                jac[j, n, 3 + k] = 1.0
                jac[j, n, 9 + k] = -1.0
                phi[j, n] = 2.0 * sign * qe[1 + k]
                n += 1
        if kind == PRISMATIC:  # the anchors stay on A's axis
            ha = _rotate(qa, axis_a)
            n1 = _rotate(qa, perp_a)
            n2 = _cross(ha, n1)
            for nk in (n1, n2):
                _point_row(jac, j, n, ra, rb, d, nk)
                phi[j, n] = _dot(nk, d)
                n += 1
        drive = -1.0  # position of the driven coordinate along its row, or none
        if kind == HINGE:
            ha = _rotate(qa, axis_a)
            pa_w = _rotate(qa, perp_a)
            pb_w = _rotate(qb, perp_b)
            angle = np.arctan2(_dot(ha, _cross(pa_w, pb_w)), _dot(pa_w, pb_w))
            for k in range(3):
                jac[j, DRIVE, 3 + k] = -ha[k]
                jac[j, DRIVE, 9 + k] = ha[k]
            drive = angle
        elif kind == PRISMATIC:
            ha = _rotate(qa, axis_a)
            _point_row(jac, j, DRIVE, ra, rb, d, ha)
            drive = _dot(ha, d)
        elif kind == DISTANCE:
            length = np.sqrt(_dot(d, d))
            u = ((d[0] / length, d[1] / length, d[2] / length) if length > 1e-12
                 else (0.0, 1.0, 0.0))
            _point_row(jac, j, DRIVE, ra, rb, zero, u)
            drive = length
            equal = (joints.min_length[j] == joints.max_length[j]
                     and joints.stiffness[j] == 0.0 and joints.damping[j] == 0.0)
            if equal:  # a rigid rod: one equality row
                for c in range(12):
                    jac[j, 0, c] = jac[j, DRIVE, c]
                phi[j, 0] = length - joints.min_length[j]
                n = 1
        if kind == HINGE or kind == PRISMATIC or kind == DISTANCE:
            phi[j, DRIVE] = drive
            lo, hi = joints.lo[j], joints.hi[j]
            if kind == DISTANCE:
                lo, hi = joints.min_length[j], joints.max_length[j]
            if (kind == DISTANCE and n == 0) or joints.limited[j]:
                for c in range(12):
                    jac[j, LOWER, c] = jac[j, DRIVE, c]
                    jac[j, UPPER, c] = -jac[j, DRIVE, c]
                phi[j, LOWER] = drive - lo
                # a rope (min 0) has no lower row: its direction is undefined at zero length,
                # and a speculative row there would stop the body at the anchor
                active[j, LOWER] = not (kind == DISTANCE and lo <= 0.0)
                phi[j, UPPER] = hi - drive
                active[j, UPPER] = True
            active[j, DRIVE] = (joints.motor_max[j] >= 0.0
                                or (kind == DISTANCE and n == 0
                                    and (joints.stiffness[j] > 0.0 or joints.damping[j] > 0.0)))
        nblock[j] = n


@njit(cache=True, inline='always')
def _pair_effective(jr, jc, a, b, inv_mass, inv_iw):
    """jr M⁻¹ jcᵀ of two rows (12,) of the same joint."""
    out = 0.0
    if a >= 0:
        out += inv_mass[a] * (jr[0] * jc[0] + jr[1] * jc[1] + jr[2] * jc[2])
        for p in range(3):
            for q in range(3):
                out += jr[3 + p] * inv_iw[a, p, q] * jc[3 + q]
    if b >= 0:
        out += inv_mass[b] * (jr[6] * jc[6] + jr[7] * jc[7] + jr[8] * jc[8])
        for p in range(3):
            for q in range(3):
                out += jr[9 + p] * inv_iw[b, p, q] * jc[9 + q]
    return out


@njit(cache=True)
def _effective(jr, a, b, inv_mass, inv_iw):
    """J M⁻¹ Jᵀ of one row jr (12,)."""
    return _pair_effective(jr, jr, a, b, inv_mass, inv_iw)


@njit(cache=True)
def _block_matrix(jac, nb, a, b, inv_mass, inv_iw, out):
    """out[:nb, :nb] ← J M⁻¹ Jᵀ of the first nb rows of jac (ROWS, 12)."""
    for r in range(nb):
        for c in range(nb):
            out[r, c] = _pair_effective(jac[r], jac[c], a, b, inv_mass, inv_iw)


@njit(cache=True, inline='always')
def invert_small(mat, nb, out, work):
    """out[:nb, :nb] ← mat[:nb, :nb]⁻¹ by Gauss–Jordan elimination with partial pivoting (nb ≤
    6; work (6, 12) scratch); False, out untouched, if a pivot is exactly zero (singular).
    Inlined, so that a caller passing nb as a constant gets loops of known length."""
    for r in range(nb):
        for c in range(nb):
            work[r, c] = mat[r, c]
            work[r, nb + c] = 1.0 if r == c else 0.0
    for c in range(nb):
        best, pivot = c, abs(work[c, c])
        for r in range(c + 1, nb):
            if abs(work[r, c]) > pivot:
                best, pivot = r, abs(work[r, c])
        if not pivot > 1e-300:
            return False
        if best != c:
            for k in range(2 * nb):
                work[c, k], work[best, k] = work[best, k], work[c, k]
        scale = 1.0 / work[c, c]
        for k in range(2 * nb):
            work[c, k] *= scale
        for r in range(nb):
            if r != c and work[r, c] != 0.0:
                f = work[r, c]
                for k in range(2 * nb):
                    work[r, k] -= f * work[c, k]
    for r in range(nb):
        for c in range(nb):
            out[r, c] = work[r, nb + c]
    return True


@njit(cache=True)
def prepare_rows(joints, pos, quat, inv_mass, inv_iw, h, rows, known):
    """Fill rows (JointRows) for the step of h s from the start poses; inv_mass (n,) 1/kg and
    inv_iw (n, 3, 3) world inverse inertia (zero for bodies held still). known: rows' jac,
    phi, active and nblock already hold the rows at these poses (``joint_rows``)."""
    if not known:
        joint_rows(joints, pos, quat, rows.jac, rows.phi, rows.active, rows.nblock)
    mat, work, c = np.empty((6, 6)), np.empty((6, 12)), np.empty(6)
    for j in range(len(joints.kind)):
        a, b = joints.first[j], joints.second[j]
        nb = rows.nblock[j]
        rows.block_inv[j, :, :] = 0.0
        swept = rows.active[j, LOWER] or rows.active[j, UPPER] or rows.active[j, DRIVE]
        if nb > 0 and swept:  # only the sweeps read it (``one_sided``)
            _block_matrix(rows.jac[j], nb, a, b, inv_mass, inv_iw, mat)
            invert_small(mat, nb, rows.block_inv[j], work)
        for r in range(ROWS):
            rows.target[j, r] = 0.0
        for r in (LOWER, UPPER, DRIVE):
            if not rows.active[j, r]:
                continue
            k = _through_equalities(rows.jac[j], nb, r, a, b, inv_mass, inv_iw,
                                    rows.block_inv[j], c)
            rows.row_mass[j, r] = 1.0 / k if k > 1e-300 else 0.0
            if r != DRIVE:  # may close the gap within the step, not more
                rows.target[j, r] = -max(rows.phi[j, r], 0.0) / h
        rows.soft[j] = 0.0
        if rows.active[j, DRIVE]:
            if joints.motor_max[j] >= 0.0:
                rows.target[j, DRIVE] = joints.motor_speed[j]
            else:  # implicit spring-damper: Box2D's soft row
                k = _through_equalities(rows.jac[j], nb, DRIVE, a, b, inv_mass, inv_iw,
                                        rows.block_inv[j], c)
                gamma = 1.0 / (h * (joints.damping[j] + h * joints.stiffness[j]))
                stretch = rows.phi[j, DRIVE] - joints.rest_length[j]
                rows.target[j, DRIVE] = -stretch * h * joints.stiffness[j] * gamma
                rows.soft[j] = gamma
                rows.row_mass[j, DRIVE] = 1.0 / (k + gamma)


@njit(cache=True)
def _through_equalities(jac, nb, r, a, b, inv_mass, inv_iw, block_inv, c):
    """The effective mass's inverse of row r of jac (ROWS, 12) with the joint's nb equality rows
    held (a Schur complement): k − cᵀ (J_eq M⁻¹ J_eqᵀ)⁻¹ c, c = J_eq M⁻¹ J_rᵀ (c (6,) scratch).
    A limit or motor row's impulse followed by the equality block's re-solve changes the row's
    rate by exactly this per unit impulse, so a lone joint's limit holds in one sweep even when
    the equality rows carry a much larger mass than the row itself (a bob on a hinge: its spin
    is light, its orbit heavy; docs/physics.md#joints)."""
    k = _effective(jac[r], a, b, inv_mass, inv_iw)
    for q in range(nb):
        c[q] = _pair_effective(jac[q], jac[r], a, b, inv_mass, inv_iw)
    for p in range(nb):
        for q in range(nb):
            k -= c[p] * block_inv[p, q] * c[q]
    return k


@njit(cache=True, inline='always')
def _rate(jr, a, b, vel, omega):
    u = 0.0
    if a >= 0:
        for k in range(3):
            u += jr[k] * vel[a, k] + jr[3 + k] * omega[a, k]
    if b >= 0:
        for k in range(3):
            u += jr[6 + k] * vel[b, k] + jr[9 + k] * omega[b, k]
    return u


@njit(cache=True, inline='always')
def _apply(jr, lam, a, b, vel, omega, ang_mom, inv_mass, inv_iw):
    """Impulse Jᵀλ of one row on both bodies: v += λ J_lin / m, L += λ J_ang, ω += I_w⁻¹ λ J_ang."""
    for side in range(2):
        body = a if side == 0 else b
        if body < 0:
            continue
        o = 6 * side
        for k in range(3):
            vel[body, k] += inv_mass[body] * lam * jr[o + k]
            ang_mom[body, k] += lam * jr[o + 3 + k]
            omega[body, k] += lam * (inv_iw[body, k, 0] * jr[o + 3] + inv_iw[body, k, 1]
                                     * jr[o + 4] + inv_iw[body, k, 2] * jr[o + 5])


@njit(cache=True)
def warm_start(joints, rows, impulses, vel, omega, ang_mom, inv_mass, inv_iw):
    """Apply last step's impulses (m, ROWS) N·s (zeroed where a row is not in use)."""
    for j in range(len(joints.kind)):
        a, b = joints.first[j], joints.second[j]
        for r in range(ROWS):
            if r >= rows.nblock[j] and not rows.active[j, r]:
                impulses[j, r] = 0.0
            elif impulses[j, r] != 0.0:
                _apply(rows.jac[j, r], impulses[j, r], a, b, vel, omega, ang_mom, inv_mass,
                       inv_iw)


@njit(cache=True)
def solve_velocities(joints, rows, impulses, vel, omega, ang_mom, inv_mass, inv_iw, h,
                     iterations):
    """Gauss–Seidel sweeps over the joints: in each, the one-sided and drive rows one by one,
    then the equality rows together. Accumulates the step's impulses (m, ROWS) N·s."""
    sweep_joints(np.arange(len(joints.kind)), joints, rows, impulses, vel, omega, ang_mom,
                 inv_mass, inv_iw, h, iterations)


@njit(cache=True, nogil=True)
def one_sided(rows: JointRows) -> np.ndarray:
    """(k,) int64 the joints with a limit, motor or spring row in use this step: the ones the
    sweeps must visit (the equality rows alone are solved exactly by the global projection,
    docs/physics.md#joint-projection). Compiled: the Python path and the forest step
    (constraints/forest_step.py) both call it."""
    keep = np.zeros(rows.active.shape[0], np.bool_)
    for j in range(keep.shape[0]):
        for r in range(LOWER, ROWS):
            keep[j] |= rows.active[j, r]
    return np.flatnonzero(keep)


@njit(cache=True)
def sweep_joints(swept, joints, rows, impulses, vel, omega, ang_mom, inv_mass, inv_iw, h,
                 iterations):
    """``solve_velocities`` over the joints swept (k,) only, in that order."""
    rate = np.empty(6)
    for _ in range(iterations):
        for j in swept:
            a, b = joints.first[j], joints.second[j]
            for r in (DRIVE, LOWER, UPPER):
                if not rows.active[j, r]:
                    continue
                jr = rows.jac[j, r]
                old = impulses[j, r]
                lam = -rows.row_mass[j, r] * (_rate(jr, a, b, vel, omega) - rows.target[j, r]
                                              + rows.soft[j] * old * (r == DRIVE))
                new = old + lam
                if r != DRIVE:
                    new = max(new, 0.0)
                elif joints.motor_max[j] >= 0.0:
                    limit = joints.motor_max[j] * h
                    new = min(max(new, -limit), limit)
                if new != old:
                    _apply(jr, new - old, a, b, vel, omega, ang_mom, inv_mass, inv_iw)
                    impulses[j, r] = new
                    # the equality rows at once after each: the row's mass assumed they hold
                    _solve_block(j, rows, impulses, a, b, vel, omega, ang_mom, inv_mass, inv_iw,
                                 rate)
            _solve_block(j, rows, impulses, a, b, vel, omega, ang_mom, inv_mass, inv_iw, rate)


@njit(cache=True)
def _solve_block(j, rows, impulses, a, b, vel, omega, ang_mom, inv_mass, inv_iw, rate):
    """Joint j's equality rows solved together (the seed's A x = b): J v = 0 for all of them;
    rate (6,) scratch."""
    nb = rows.nblock[j]
    for r in range(nb):
        rate[r] = _rate(rows.jac[j, r], a, b, vel, omega)
    for r in range(nb):
        lam = 0.0
        for c in range(nb):
            lam -= rows.block_inv[j, r, c] * rate[c]
        _apply(rows.jac[j, r], lam, a, b, vel, omega, ang_mom, inv_mass, inv_iw)
        impulses[j, r] += lam
