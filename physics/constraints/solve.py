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
# below this det(J M⁻¹ J₀ᵀ) / det(J M⁻¹ Jᵀ) the projection moves along the present rows J,
# not the step's start rows J₀ (docs/physics.md#joint-projection)
SHAKE_DETERMINANT_RATIO = 0.5


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
    (J M⁻¹ Jᵀ)⁻¹ of the equalities; row_mass (m, ROWS) 1/(J M⁻¹ Jᵀ) of the other rows (softened
    for springs); soft (m,) the spring's γ, 1/(N·s/m); target (m, ROWS) velocity bias."""

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


@njit(cache=True, inline='always')
def _cross(a, b, out):
    out[0] = a[1] * b[2] - a[2] * b[1]
    out[1] = a[2] * b[0] - a[0] * b[2]
    out[2] = a[0] * b[1] - a[1] * b[0]


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


@njit(cache=True)
def _qmul(a, b, out):
    out[0] = a[0] * b[0] - a[1] * b[1] - a[2] * b[2] - a[3] * b[3]
    out[1] = a[0] * b[1] + a[1] * b[0] + a[2] * b[3] - a[3] * b[2]
    out[2] = a[0] * b[2] - a[1] * b[3] + a[2] * b[0] + a[3] * b[1]
    out[3] = a[0] * b[3] + a[1] * b[2] - a[2] * b[1] + a[3] * b[0]


@njit(cache=True)
def _pose(row, pos, quat, p, q):
    """p (3,), q (4,) ← the pose of body row (the world's identity if row < 0)."""
    if row < 0:
        p[:] = 0.0
        q[0], q[1], q[2], q[3] = 1.0, 0.0, 0.0, 0.0
    else:
        p[:] = pos[row]
        q[:] = quat[row]


@njit(cache=True)
def _point_row(jac, r, ra, rb, d, n):
    """Row r of jac for the separation rate n·(ṗB − ṗA) of the anchors: ra, rb their arms,
    d = pB − pA (A's direction n turns with A, so A's arm reaches to pB)."""
    t = np.empty(3)
    arm = ra + d
    _cross(arm, n, t)
    jac[r, 0:3] = -n
    jac[r, 3:6] = -t
    _cross(rb, n, t)
    jac[r, 6:9] = n
    jac[r, 9:12] = t


@njit(cache=True)
def joint_rows(j, joints, pos, quat, jac, phi, active):
    """Rows of joint j at the poses pos (n, 3), quat (n, 4): fills jac (ROWS, 12), phi (ROWS,),
    active (ROWS,) and returns the number of equality rows."""
    a, b, kind = joints.first[j], joints.second[j], joints.kind[j]
    pa, qa, pb, qb = np.empty(3), np.empty(4), np.empty(3), np.empty(4)
    _pose(a, pos, quat, pa, qa)
    _pose(b, pos, quat, pb, qb)
    ra_m, rb_m = np.empty((3, 3)), np.empty((3, 3))
    quat_matrix(qa, ra_m)
    quat_matrix(qb, rb_m)
    ra = ra_m @ joints.local_a[j]
    rb = rb_m @ joints.local_b[j]
    d = (pb + rb) - (pa + ra)
    jac[:, :] = 0.0
    phi[:] = 0.0
    active[:] = False
    zero = np.zeros(3)
    e = np.eye(3)
    n = 0
    if kind == BALL or kind == HINGE or kind == FIXED:
        for k in range(3):  # the anchors coincide
            _point_row(jac, n, ra, rb, zero, e[k])
            phi[n] = d[k]
            n += 1
    if kind == HINGE:  # A's axis stays perpendicular to two directions of B's
        ha = ra_m @ joints.axis_a[j]
        b1 = rb_m @ joints.perp_b[j]
        b2 = np.empty(3)
        _cross(rb_m @ joints.axis_b[j], b1, b2)
        t = np.empty(3)
        for bk in (b1, b2):
            _cross(ha, bk, t)
            jac[n, 3:6] = t
            jac[n, 9:12] = -t
            phi[n] = ha @ bk
            n += 1
    if kind == PRISMATIC or kind == FIXED:  # no relative rotation: θ of q_A q_rel q_B*
        qt, qe = np.empty(4), np.empty(4)
        _qmul(qa, joints.rel_quat[j], qt)
        qb_conj = np.array([qb[0], -qb[1], -qb[2], -qb[3]])
        _qmul(qt, qb_conj, qe)
        sign = 1.0 if qe[0] >= 0.0 else -1.0
        for k in range(3):
            jac[n, 3 + k] = 1.0
            jac[n, 9 + k] = -1.0
            phi[n] = 2.0 * sign * qe[1 + k]
            n += 1
    if kind == PRISMATIC:  # the anchors stay on A's axis
        ha = ra_m @ joints.axis_a[j]
        n1 = ra_m @ joints.perp_a[j]
        n2 = np.empty(3)
        _cross(ha, n1, n2)
        for nk in (n1, n2):
            _point_row(jac, n, ra, rb, d, nk)
            phi[n] = nk @ d
            n += 1
    drive = -1.0  # position of the driven coordinate along its row, or none
    if kind == HINGE:
        ha = ra_m @ joints.axis_a[j]
        pa_w, pb_w, t = ra_m @ joints.perp_a[j], rb_m @ joints.perp_b[j], np.empty(3)
        _cross(pa_w, pb_w, t)
        angle = np.arctan2(ha @ t, pa_w @ pb_w)
        jac[DRIVE, 3:6] = -ha
        jac[DRIVE, 9:12] = ha
        drive = angle
    elif kind == PRISMATIC:
        ha = ra_m @ joints.axis_a[j]
        _point_row(jac, DRIVE, ra, rb, d, ha)
        drive = ha @ d
    elif kind == DISTANCE:
        length = np.sqrt(d @ d)
        u = d / length if length > 1e-12 else e[1]
        _point_row(jac, DRIVE, ra, rb, zero, u)
        drive = length
        equal = (joints.min_length[j] == joints.max_length[j]
                 and joints.stiffness[j] == 0.0 and joints.damping[j] == 0.0)
        if equal:  # a rigid rod: one equality row
            jac[0] = jac[DRIVE]
            phi[0] = length - joints.min_length[j]
            n = 1
    if kind == HINGE or kind == PRISMATIC or kind == DISTANCE:
        phi[DRIVE] = drive
        lo, hi = joints.lo[j], joints.hi[j]
        if kind == DISTANCE:
            lo, hi = joints.min_length[j], joints.max_length[j]
        if (kind == DISTANCE and n == 0) or joints.limited[j]:
            jac[LOWER] = jac[DRIVE]
            phi[LOWER] = drive - lo
            # a rope (min 0) has no lower row: its direction is undefined at zero length, and a
            # speculative row there would stop the body at the anchor
            active[LOWER] = not (kind == DISTANCE and lo <= 0.0)
            jac[UPPER] = -jac[DRIVE]
            phi[UPPER] = hi - drive
            active[UPPER] = True
        active[DRIVE] = (joints.motor_max[j] >= 0.0
                         or (kind == DISTANCE and n == 0
                             and (joints.stiffness[j] > 0.0 or joints.damping[j] > 0.0)))
    return n


@njit(cache=True)
def _pair_effective(jr, jc, a, b, inv_mass, inv_iw):
    """jr M⁻¹ jcᵀ of two rows (12,) of the same joint."""
    out = 0.0
    if a >= 0:
        out += inv_mass[a] * (jr[0:3] @ jc[0:3]) + jr[3:6] @ (inv_iw[a] @ jc[3:6])
    if b >= 0:
        out += inv_mass[b] * (jr[6:9] @ jc[6:9]) + jr[9:12] @ (inv_iw[b] @ jc[9:12])
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


@njit(cache=True)
def prepare_rows(joints, pos, quat, inv_mass, inv_iw, h, rows):
    """Fill rows (JointRows) for the step of h s from the start poses; inv_mass (n,) 1/kg and
    inv_iw (n, 3, 3) world inverse inertia (zero for bodies held still)."""
    for j in range(len(joints.kind)):
        a, b = joints.first[j], joints.second[j]
        nb = joint_rows(j, joints, pos, quat, rows.jac[j], rows.phi[j], rows.active[j])
        rows.nblock[j] = nb
        mat = np.zeros((nb, nb))
        _block_matrix(rows.jac[j], nb, a, b, inv_mass, inv_iw, mat)
        rows.block_inv[j, :, :] = 0.0
        if nb > 0 and np.abs(np.linalg.det(mat)) > 1e-300:
            rows.block_inv[j, :nb, :nb] = np.linalg.inv(mat)
        rows.target[j, :] = 0.0
        for r in (LOWER, UPPER, DRIVE):
            if not rows.active[j, r]:
                continue
            k = _through_equalities(rows.jac[j], nb, r, a, b, inv_mass, inv_iw,
                                    rows.block_inv[j])
            rows.row_mass[j, r] = 1.0 / k if k > 1e-300 else 0.0
            if r != DRIVE:  # may close the gap within the step, not more
                rows.target[j, r] = -max(rows.phi[j, r], 0.0) / h
        rows.soft[j] = 0.0
        if rows.active[j, DRIVE]:
            if joints.motor_max[j] >= 0.0:
                rows.target[j, DRIVE] = joints.motor_speed[j]
            else:  # implicit spring-damper: Box2D's soft row
                k = _through_equalities(rows.jac[j], nb, DRIVE, a, b, inv_mass, inv_iw,
                                        rows.block_inv[j])
                gamma = 1.0 / (h * (joints.damping[j] + h * joints.stiffness[j]))
                stretch = rows.phi[j, DRIVE] - joints.rest_length[j]
                rows.target[j, DRIVE] = -stretch * h * joints.stiffness[j] * gamma
                rows.soft[j] = gamma
                rows.row_mass[j, DRIVE] = 1.0 / (k + gamma)


@njit(cache=True)
def _through_equalities(jac, nb, r, a, b, inv_mass, inv_iw, block_inv):
    """The effective mass's inverse of row r of jac (ROWS, 12) with the joint's nb equality rows
    held (a Schur complement): k − cᵀ (J_eq M⁻¹ J_eqᵀ)⁻¹ c, c = J_eq M⁻¹ J_rᵀ. A limit or motor
    row's impulse followed by the equality block's re-solve changes the row's rate by exactly
    this per unit impulse, so a lone joint's limit holds in one sweep even when the equality
    rows carry a much larger mass than the row itself (a bob on a hinge: its spin is light, its
    orbit heavy; docs/physics.md#joints)."""
    k = _effective(jac[r], a, b, inv_mass, inv_iw)
    if nb == 0:
        return k
    c = np.empty(nb)
    for q in range(nb):
        c[q] = _pair_effective(jac[q], jac[r], a, b, inv_mass, inv_iw)
    return k - c @ (np.ascontiguousarray(block_inv[:nb, :nb]) @ c)


@njit(cache=True, inline='always')
def _rate(jr, a, b, vel, omega):
    u = 0.0
    if a >= 0:
        u += jr[0:3] @ vel[a] + jr[3:6] @ omega[a]
    if b >= 0:
        u += jr[6:9] @ vel[b] + jr[9:12] @ omega[b]
    return u


@njit(cache=True)
def _apply(jr, lam, a, b, vel, omega, ang_mom, inv_mass, inv_iw):
    """Impulse Jᵀλ of one row on both bodies: v += λ J_lin / m, L += λ J_ang, ω += I_w⁻¹ λ J_ang."""
    if a >= 0:
        vel[a] += inv_mass[a] * lam * jr[0:3]
        ang_mom[a] += lam * jr[3:6]
        omega[a] += inv_iw[a] @ (lam * jr[3:6])
    if b >= 0:
        vel[b] += inv_mass[b] * lam * jr[6:9]
        ang_mom[b] += lam * jr[9:12]
        omega[b] += inv_iw[b] @ (lam * jr[9:12])


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
    for _ in range(iterations):
        for j in range(len(joints.kind)):
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
                    _solve_block(j, rows, impulses, a, b, vel, omega, ang_mom, inv_mass, inv_iw)
            _solve_block(j, rows, impulses, a, b, vel, omega, ang_mom, inv_mass, inv_iw)


@njit(cache=True)
def _solve_block(j, rows, impulses, a, b, vel, omega, ang_mom, inv_mass, inv_iw):
    """Joint j's equality rows solved together (the seed's A x = b): J v = 0 for all of them."""
    nb = rows.nblock[j]
    if nb == 0:
        return
    rate = np.empty(nb)
    for r in range(nb):
        rate[r] = _rate(rows.jac[j, r], a, b, vel, omega)
    lam = -(np.ascontiguousarray(rows.block_inv[j, :nb, :nb]) @ rate)
    for r in range(nb):
        _apply(rows.jac[j, r], lam[r], a, b, vel, omega, ang_mom, inv_mass, inv_iw)
        impulses[j, r] += lam[r]
