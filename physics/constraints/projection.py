"""Joints back onto Φ = 0 after the move: Newton steps on every joint's equality rows at once,
then the end velocities onto J v = 0 (docs/physics.md#joint-projection).

Both are one linear system over all the joints' equality rows together, not a sweep joint by
joint: in a chain a Gauss–Seidel sweep carries a correction one link further per sweep,
so a 30-link chain needs hundreds of sweeps to settle, while its system J M⁻¹ Jᵀ is
block-tridiagonal and a sparse factorisation solves it exactly in O(links). Joints forming a
forest are solved by tree elimination (constraints/forest.py); the rest — loops, contacts
resting in the solve — by the general solve here: the system built from the rows' compact form,
dense LU when small, scipy's sparse LU when big (docs/physics.md#joint-projection).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import scipy.sparse as sparse
from numba import njit
from scipy.sparse.linalg import splu

from physics.constraints.forest import (
    CLOSED,
    NOT_SOLVED,
    newton_forest,
    no_factors,
    rows_and_error,
    spin_of,
    turn,
    velocities_forest,
)
from physics.constraints.solve import LOWER, ROWS, UPPER, JointSet
from physics.dynamics.integrator import (
    rotate_free,
    rotation_response,
    to_body_frame,
    world_inverse_inertia,
)
from physics.geometry.rotation import quat_conj, quat_mul, quat_to_matrix
from physics.settings import (
    DENSE_SOLVE_ROWS,
    JOINT_TOLERANCE,
    NEWTON_STEPS,
    REGULARISATION,
    SHAKE_ENERGY_ALLOWANCE,
)


class EqualityRows(NamedTuple):
    """All joints' equality rows at one pose, R rows in all: jac (R, 12) [lin A, ang A, lin B,
    ang B]; phi (R,) m or rad; joint, row (R,) which joint and which of its rows; first, second
    (R,) body rows (second < 0: world)."""

    jac: np.ndarray
    phi: np.ndarray
    joint: np.ndarray
    row: np.ndarray
    first: np.ndarray
    second: np.ndarray


def all_rows(joints: JointSet, pos, quat) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Every joint's rows at poses pos (n, 3), quat (n, 4): jac (m, ROWS, 12), phi (m, ROWS),
    active (m, ROWS) and nblock (m,) (see ``solve.joint_rows``, which writes every entry)."""
    return _rows_and_error(joints, pos, quat)[:4]


def _rows_and_error(joints: JointSet, pos, quat):
    """``all_rows`` and the largest |Φ| of the equality rows, m or rad."""
    m = len(joints.kind)
    jac, phi = np.empty((m, ROWS, 12)), np.empty((m, ROWS))
    active, nblock = np.empty((m, ROWS), np.bool_), np.empty(m, np.int64)
    worst = rows_and_error(joints, pos, quat, jac, phi, active, nblock)
    return jac, phi, active, nblock, worst


def equality_rows(joints: JointSet, jac, phi, nblock) -> EqualityRows:
    """The equality rows out of ``all_rows``' arrays, joint by joint."""
    use = np.arange(ROWS)[None, :] < nblock[:, None]                          # (m, ROWS)
    joint, row = np.nonzero(use)
    return EqualityRows(jac[use], phi[use], joint, row, joints.first[joint],
                        joints.second[joint])


class RowBlock(NamedTuple):
    """K rows on the bodies' velocities, each on one body or two: jac (K, 12) [lin A, ang A,
    lin B, ang B]; first (K,) body rows (always a body); second (K,) body rows (< 0: the world
    or a wall, which takes no part). The compact form of a (K, 6n) matrix whose row k has
    jac[k, 0:6] at body first's six columns (v, ω) and jac[k, 6:12] at second's."""

    jac: np.ndarray
    first: np.ndarray
    second: np.ndarray


def _stacked(*blocks: RowBlock) -> RowBlock:
    return RowBlock(*(np.concatenate(field) for field in zip(*blocks)))


@njit(cache=True, nogil=True)
def _gram_entries(left, right, first, second, inv_mass, inv_iw):
    """The nonzero entries of L W Rᵀ for rows left, right (K, 12) on the same bodies first,
    second (K,) and W the block-diagonal (1/m, inv_iw (n, 3, 3)): as (i, j, value) triplets, a
    pair of rows meeting at each body both touch (duplicates add up). Linear in the rows where
    each body has a few (a chain, a pile), where multiplying sparse matrices built for the
    purpose cost ~30 scipy objects a solve."""
    count = len(first)
    body = np.empty(2 * count, np.int64)
    row = np.empty(2 * count, np.int64)
    side = np.empty(2 * count, np.int64)
    touching = 0
    for k in range(count):
        if first[k] >= 0:
            body[touching], row[touching], side[touching] = first[k], k, 0
            touching += 1
        if second[k] >= 0:
            body[touching], row[touching], side[touching] = second[k], k, 1
            touching += 1
    order = np.argsort(body[:touching], kind="mergesort")
    # each touch weighted once: W times its left row's six entries
    weighted = np.empty((touching, 6))
    for e in range(touching):
        b, k, o = body[e], row[e], 6 * side[e]
        for a in range(3):
            weighted[e, a] = inv_mass[b] * left[k, o + a]
            weighted[e, 3 + a] = (inv_iw[b, a, 0] * left[k, o + 3]
                                  + inv_iw[b, a, 1] * left[k, o + 4]
                                  + inv_iw[b, a, 2] * left[k, o + 5])
    # the touches on one body: order[bounds[g]:bounds[g + 1]], body by body
    owners = body[order]
    bounds = np.concatenate((np.zeros(1, np.int64), np.flatnonzero(owners[1:] != owners[:-1]) + 1,
                             np.full(1, touching, np.int64)))
    sizes = bounds[1:] - bounds[:-1]
    pairs = int((sizes * sizes).sum())
    i = np.empty(pairs, np.int64)
    j = np.empty(pairs, np.int64)
    value = np.empty(pairs)
    p = 0
    for g in range(len(sizes)):
        for x in range(bounds[g], bounds[g + 1]):
            ex = order[x]
            for y in range(bounds[g], bounds[g + 1]):
                ey = order[y]
                o = 6 * side[ey]
                total = 0.0
                for a in range(6):
                    total += weighted[ex, a] * right[row[ey], o + a]
                i[p], j[p], value[p] = row[ex], row[ey], total
                p += 1
    return i, j, value


def _gram(left: RowBlock, right: np.ndarray, inv_mass, inv_iw):
    """L W Rᵀ (K, K) for rows left and right (K, 12) on left's bodies: dense up to
    DENSE_SOLVE_ROWS rows, else scipy CSR (physics/settings.py says why)."""
    count = len(left.first)
    i, j, value = _gram_entries(left.jac, right, left.first, left.second, inv_mass, inv_iw)
    if count <= DENSE_SOLVE_ROWS:
        return np.bincount(i * count + j, value, count * count).reshape(count, count)
    return sparse.csr_matrix((value, (i, j)), shape=(count, count))


def _solve(matrix, rhs: np.ndarray) -> np.ndarray | None:
    """matrix⁻¹ rhs (``_gram``'s dense or sparse matrix) by LU with a tiny regularisation, or
    None if that fails."""
    diagonal = matrix.diagonal()
    scale = float(diagonal.max()) if len(diagonal) else 0.0
    if not np.isfinite(scale) or scale <= 0.0:
        return None
    shift = REGULARISATION * scale
    try:
        if isinstance(matrix, np.ndarray):
            out = np.linalg.solve(matrix + shift * np.eye(len(matrix)), rhs)
        else:
            out = splu((matrix + sparse.identity(matrix.shape[0]) * shift).tocsc()).solve(rhs)
    except (RuntimeError, np.linalg.LinAlgError):  # exactly singular even so
        return None
    return out if np.isfinite(out).all() else None


@njit(cache=True, nogil=True)
def _spread(rows: RowBlock, amounts: np.ndarray, n: int) -> np.ndarray:
    """Rᵀ amounts: the (n, 6) sum over rows (K, 12) of each row's halves times its amount (K,)
    on its bodies (linear, angular)."""
    out = np.zeros((n, 6))
    for k in range(len(amounts)):
        for side, body in enumerate((rows.first[k], rows.second[k])):
            if body >= 0:
                for a in range(6):
                    out[body, a] += rows.jac[k, 6 * side + a] * amounts[k]
    return out


@njit(cache=True, nogil=True)
def _respond(impulse: np.ndarray, inv_mass, inv_iw) -> np.ndarray:
    """W impulse: the (n, 6) motion (linear, angular) an impulse (n, 6) gives the bodies (the
    angular part ``forest.spin_of``'s I_w⁻¹ times the impulse's)."""
    out = np.empty_like(impulse)
    out[:, 3:6] = spin_of(inv_iw, impulse[:, 3:6])
    for i in range(len(impulse)):
        for a in range(3):
            out[i, a] = impulse[i, a] * inv_mass[i]
    return out


@njit(cache=True, nogil=True)
def _rates(rows: RowBlock, motion: np.ndarray) -> np.ndarray:
    """R motion: each row's rate (K,) for the bodies' motions (n, 6)."""
    rate = np.zeros(len(rows.first))
    for k in range(len(rate)):
        for side, body in enumerate((rows.first[k], rows.second[k])):
            if body >= 0:
                for a in range(6):
                    rate[k] += rows.jac[k, 6 * side + a] * motion[body, a]
    return rate


def project_positions(joints: JointSet, start_jac, impulses, pos, quat, vel, ang_mom, inv_mass,
                      inv_inertia, h, free_step=None,
                      resting: KeptRows | None = None, cache: FactorCache | None = None,
                      chord=None):
    """Every joint's equality rows back to Φ = 0 by Newton steps over all of them at once, the
    end velocities onto J v = 0, then violated limits back along their rows. pos, quat, vel,
    ang_mom (n, …) and impulses (m, ROWS) N·s in place; inv_mass (n,), inv_inertia (n, 3) zero
    for bodies held still. free_step: the step's rotation, (start orientations (n, 4), the world
    L (n, 3) the rotation step turned them with), or None (bodies turned as if not spinning).
    resting: contact rows the velocity projections hold at rate 0 (``resting_contacts``).
    cache: the velocity projections' factors, kept for the next step's. chord: the tree factors
    of the step's velocity system at its start poses, the Newton steps' first chord on a forest
    (``forest.newton_forest``), or None. Returns the rows at the end poses (``all_rows``'
    arrays), or None if a limit was pushed after them.

    First as RATTLE does (``_newton`` along the step's start rows start_jac (m, ROWS, 12), the
    velocities taking the matching impulse, then ``project_velocities``): the correction is the
    part of the joints' impulse that the step's curved path needs, so a pendulum keeps its
    energy and period. Where the rows turned too far within the step (a whipping chain) that
    correction would pump energy in: if the two together raised the kinetic energy, the step is
    redone moving along the present rows with no velocity change, which is always safe and loses
    a little energy (docs/physics.md#joint-projection)."""
    saved = (pos.copy(), quat.copy(), vel.copy(), ang_mom.copy(), impulses.copy())
    before = _kinetic(vel, ang_mom, quat, inv_mass, inv_inertia)
    converged, rows = _newton(joints, start_jac, impulses, pos, quat, vel, ang_mom, inv_mass,
                              inv_inertia, h, free_step, resting, chord)
    if converged:
        project_velocities(joints, impulses, pos, quat, vel, ang_mom, inv_mass, inv_inertia,
                           resting, rows, cache=cache)
    after = _kinetic(vel, ang_mom, quat, inv_mass, inv_inertia)
    if not converged or after > before * (1.0 + SHAKE_ENERGY_ALLOWANCE) + 1e-300:
        for array, kept in zip((pos, quat, vel, ang_mom, impulses), saved):
            array[:] = kept
        _, rows = _newton(joints, None, impulses, pos, quat, vel, ang_mom, inv_mass, inv_inertia,
                          h, None, resting)
        project_velocities(joints, impulses, pos, quat, vel, ang_mom, inv_mass, inv_inertia,
                           resting, rows, cache=cache)
    jac, phi, active, nblock = rows
    if (active[:, [LOWER, UPPER]] & (phi[:, [LOWER, UPPER]] < 0.0)).any():
        _push_limits(joints, pos, quat, inv_mass, inv_inertia)
        return None
    return rows


_NO_JACOBIAN = np.zeros((0, ROWS, 12))  # the start rows of a Newton run that takes none


def _kinetic(vel, ang_mom, quat, inv_mass, inv_inertia) -> float:
    """Kinetic energy of the bodies that can move, J (the mass-weighted sum ½ v²/m⁻¹ + ½ L·ω)."""
    return _kinetic_kernel(vel, ang_mom, quat, inv_mass, inv_inertia)


@njit(cache=True, nogil=True)
def _kinetic_kernel(vel, ang_mom, quat, inv_mass, inv_inertia):
    """``_kinetic`` in one pass: L·ω as Σ I⁻¹ (Rᵀ L)² in the principal frame."""
    total = 0.0
    for i in range(len(vel)):
        if inv_mass[i] > 0.0:
            total += (vel[i, 0] ** 2 + vel[i, 1] ** 2 + vel[i, 2] ** 2) / inv_mass[i]
        b0, b1, b2 = to_body_frame(quat, ang_mom, i)
        total += (inv_inertia[i, 0] * b0 * b0 + inv_inertia[i, 1] * b1 * b1
                  + inv_inertia[i, 2] * b2 * b2)
    return 0.5 * total


def _newton(joints, start_jac, impulses, pos, quat, vel, ang_mom, inv_mass, inv_inertia,
            h, free_step=None, resting=None, chord=None):
    """NEWTON_STEPS global Newton steps Δλ = −(J W Kᵀ)⁻¹ Φ: K the start rows with the impulse
    Kᵀ Δλ / h on the velocities (SHAKE), or, start_jac None, K = J the present rows and no
    velocity change. Returns (True if Φ reached JOINT_TOLERANCE, the rows at the poses it left,
    ``all_rows``' arrays).

    A body's centre moves by Kᵀ Δλ / m. In the SHAKE half with free_step given, the impulse's
    angular part joins the L the rotation step used and the body is turned again by the rotation
    step from its start: a spinning body answers a torque gyroscopically, not along I⁻¹, and
    turning it along I⁻¹ while its L took the impulse made the two disagree (a gyroscope lost
    its spin and fell). W is then that rotation step's response (``rotation_response``), so
    Newton converges as fast as for a slow body. Otherwise W = M⁻¹ and the body turns by
    I_w⁻¹ Kᵀ Δλ.

    resting: contact rows C (``resting_contacts``) the moves must not deepen, C·(move) ≥ 0,
    solved in the same system with pushing impulses only (a row that would pull is let go and
    the step solved again) (docs/physics.md#joint-projection). chord: see
    ``project_positions``."""
    n = len(pos)
    shake = start_jac is not None
    spin = shake and free_step is not None
    start_quat, moved, free, later = quat, np.zeros((n, 3)), quat, quat  # unused unless spin
    if spin:
        start_quat, moved = free_step
        moved = moved.copy()
        free = rotate_free(start_quat, moved, inv_inertia, h)
        later = quat_mul(quat, quat_conj(free))  # whatever turned the bodies after that step
    if resting is not None:  # the position projection keeps the contacts from deepening only
        resting = KeptRows(*(field[resting.normal] for field in resting))
    count = 0 if resting is None else len(resting.rate)
    first_step = 0
    if not count:
        # a forest: linear time, all steps in one compiled call; the general solve below
        # takes over from a step the tree could not solve
        status, first_step, *rows = newton_forest(
            tuple(joints), start_jac if shake else _NO_JACOBIAN, shake, spin, start_quat, moved,
            free, later, impulses, pos, quat, vel, ang_mom, inv_mass, inv_inertia, float(h),
            no_factors() if chord is None else chord)
        if status != NOT_SOLVED:
            return status == CLOSED, tuple(rows)
    if count:
        contact = RowBlock(resting.jac, resting.first, resting.second)
        depth = np.zeros(count)   # C · the moves so far, m (< 0: deeper than after the push)
        pushed = np.zeros(count)  # accumulated impulses of the rows, N·s·s (≥ 0)
        held = np.zeros(count, dtype=bool)
    for step in range(first_step, NEWTON_STEPS + 1):
        jac, phi, active, nblock, worst = _rows_and_error(joints, pos, quat)
        closed = worst < JOINT_TOLERANCE
        if closed and (not count or depth.min() > -2 * JOINT_TOLERANCE):
            return True, (jac, phi, active, nblock)
        if step == NEWTON_STEPS:
            return False, (jac, phi, active, nblock)
        if spin:
            response = rotation_response(start_quat, free, moved, inv_inertia, h)
        else:
            response = world_inverse_inertia(quat_to_matrix(quat), inv_inertia)
        rows = equality_rows(joints, jac, phi, nblock)
        joint_rows = len(rows.phi)
        present = RowBlock(rows.jac, rows.first, rows.second)
        along = rows.jac if not shake else start_jac[rows.joint, rows.row]
        # the system of the joints' rows and every resting contact's at once: each attempt of
        # the active set solves the part of it the contacts held pick out
        both = _stacked(present, contact) if count else present
        kinds = both.jac if not shake else np.concatenate((along, both.jac[joint_rows:]))
        system = _gram(both, kinds, inv_mass, response)
        for _attempt in range(2 * count + 2):  # the active set: rows in, rows out
            pick = np.arange(joint_rows)
            if count:
                pick = np.concatenate((pick, joint_rows + np.flatnonzero(held)))
            rhs = np.concatenate((-rows.phi, -depth[held])) if count else -rows.phi
            solved = _solve(system[pick][:, pick], rhs)
            if solved is None:
                return False, (jac, phi, active, nblock)
            impulse = _spread(RowBlock(kinds[pick], both.first[pick], both.second[pick]),
                              solved, n)                                      # N·s·s
            move = _respond(impulse, inv_mass, response)
            if not count:
                break
            pulling = np.flatnonzero(held)[pushed[held] + solved[joint_rows:] < 0.0]
            if len(pulling):
                held[pulling] = False
                continue
            deeper = ~held & (depth + _rates(contact, move) < -JOINT_TOLERANCE)
            if not deeper.any():
                pushed[held] += solved[joint_rows:]
                break
            held |= deeper
        dlam = solved[:joint_rows]
        if count:
            depth += _rates(contact, move)
        pos += move[:, 0:3]
        if spin:
            moved += impulse[:, 3:6] / h
            free = rotate_free(start_quat, moved, inv_inertia, h)
            quat[:] = quat_mul(later, free)
        else:
            turn(quat, np.ascontiguousarray(move[:, 3:6]))
        if shake:
            vel += move[:, 0:3] / h
            ang_mom += impulse[:, 3:6] / h
            np.add.at(impulses, (rows.joint, rows.row), dlam / h)
    return False, all_rows(joints, pos, quat)


def _push_limits(joints, pos, quat, inv_mass, inv_inertia) -> None:
    """Each violated limit (a one-sided row with Φ < 0) back to Φ = 0 along its row, joint by
    joint; velocities untouched (the velocity solve already stopped the approach)."""
    jac, phi, active, _ = all_rows(joints, pos, quat)
    inv_iw = world_inverse_inertia(quat_to_matrix(quat), inv_inertia)
    for j, r in zip(*np.nonzero(active[:, [LOWER, UPPER]] & (phi[:, [LOWER, UPPER]] < 0.0))):
        r = (LOWER, UPPER)[r]
        row = jac[j, r]
        moves = []
        for side, body in ((0, joints.first[j]), (1, joints.second[j])):
            if body >= 0:
                lin, ang = row[6 * side:6 * side + 3], row[6 * side + 3:6 * side + 6]
                moves.append((body, inv_mass[body] * lin, inv_iw[body] @ ang))
        k = sum(lin @ row[6 * s:6 * s + 3] + ang @ row[6 * s + 3:6 * s + 6]
                for s, (_, lin, ang) in enumerate(moves))
        if k <= 0.0:
            continue
        step = -phi[j, r] / k
        for body, lin, ang in moves:
            pos[body] += step * lin
            turn(quat[body:body + 1], step * ang[None])


class KeptRows(NamedTuple):
    """Rows outside the joints whose rates a velocity projection keeps, k of them: jac (k, 12)
    [lin A, ang A, lin B, ang B]; first, second (k,) body rows (second < 0: a wall); rate (k,)
    the rate to keep, m/s; normal (k,) bool: a contact's normal row (the position projection
    keeps only those from deepening), else a tangent row of a sticking contact."""

    jac: np.ndarray
    first: np.ndarray
    second: np.ndarray
    rate: np.ndarray
    normal: np.ndarray


def _contact_rows(direction, body, other, arm_a, arm_b, vel, omega):
    """Rows (k, 12) along direction (k, 3) at arms arm_a, arm_b (k, 3) and their rates (k,)."""
    jac = np.concatenate((direction, np.cross(arm_a, direction), -direction,
                          -np.cross(arm_b, direction)), axis=1)                # (k, 12)
    wall = other < 0
    second = np.maximum(other, 0)
    rate = (np.einsum("ka,ka->k", jac[:, 0:3], vel[body])
            + np.einsum("ka,ka->k", jac[:, 3:6], omega[body])
            + np.where(wall, 0.0, np.einsum("ka,ka->k", jac[:, 6:9], vel[second])
                       + np.einsum("ka,ka->k", jac[:, 9:12], omega[second])))  # (k,) m/s
    return jac, rate


def resting_contacts(body, other, point, normal, tangent1, tangent2, pos, vel, omega, speed,
                     slip) -> KeptRows:
    """Rows of the k contacts given (body, other (k,) rows, other < 0 a wall; point, normal,
    tangent1, tangent2 (k, 3), the normal into body) to be kept at rate 0 by the joints'
    velocity projection (docs/physics.md#joint-projection): the normal row of those that close
    or open slower than speed m/s, and the two tangent rows of those among them that also slide
    slower than slip m/s (friction held them), at the bodies' centres pos and velocities vel,
    omega (n, 3). Zero velocity satisfies every joint and contact at once, so these rows never
    contradict the joints' (a bouncing contact's rebound could)."""
    arm_a = point - pos[body]
    arm_b = np.where((other < 0)[:, None], 0.0, point - pos[np.maximum(other, 0)])
    jac, rate = _contact_rows(normal, body, other, arm_a, arm_b, vel, omega)
    first_jac, first_rate = _contact_rows(tangent1, body, other, arm_a, arm_b, vel, omega)
    second_jac, second_rate = _contact_rows(tangent2, body, other, arm_a, arm_b, vel, omega)
    resting = np.abs(rate) < speed
    stuck = resting & (np.hypot(first_rate, second_rate) < slip)
    jacs = np.concatenate((jac[resting], first_jac[stuck], second_jac[stuck]))
    firsts = np.concatenate((body[resting], body[stuck], body[stuck])).astype(np.int64)
    seconds = np.concatenate((other[resting], other[stuck], other[stuck])).astype(np.int64)
    normals = np.arange(len(firsts)) < int(resting.sum())
    return KeptRows(jacs, firsts, seconds, np.zeros(len(firsts)), normals)


# no joints' rows kept with the factors (``forest_step.Factors``): the Python path keeps none
_NO_ROWS = (np.zeros((0, ROWS, 12)), np.zeros((0, ROWS)), np.zeros((0, ROWS), np.bool_),
            np.zeros(0, np.int64))


class FactorCache:
    """The tree factors of the last velocity projection and what they were made from: the end
    of a step and the start of the next solve the same J M⁻¹ Jᵀ (same joints, poses, masses),
    so the second reuses the first's factors."""

    def __init__(self):
        self.key, self.factors, self.rows = None, None, _NO_ROWS
        # the record of no factors kept, made once: a batch of a world without joints passes
        # it every call (no batch writes into it)
        self._none_kept = (False, np.zeros((0, 3)), np.zeros((0, 4)), np.zeros(0),
                           np.zeros((0, 3)), no_factors(), _NO_ROWS)

    def get(self, joints, pos, quat, inv_mass, inv_inertia):
        key = self.key
        if key is None or key[0] is not joints:
            return None
        for kept, now in zip(key[1:], (pos, quat, inv_mass, inv_inertia)):
            if kept.shape != now.shape or not np.array_equal(kept, now):
                return None
        return self.factors

    def put(self, joints, pos, quat, inv_mass, inv_inertia, factors) -> None:
        self.key = (joints, pos.copy(), quat.copy(), inv_mass.copy(), inv_inertia.copy())
        self.factors, self.rows = factors, _NO_ROWS

    def plain(self, joints) -> tuple:
        """The factors kept for joints as a plain ``forest_step.Factors`` record (not valid
        when none are, or they were made for other joints)."""
        key = self.key
        if key is None or key[0] is not joints:
            return self._none_kept
        return (True, *key[1:], self.factors, self.rows)

    def keep(self, joints, factors) -> None:
        """Keep the factors of a plain ``forest_step.Factors`` record made for joints."""
        valid, pos, quat, inv_mass, inv_inertia, made, rows = factors
        if valid:
            self.key = (joints, pos, quat, inv_mass, inv_inertia)
            self.factors, self.rows = made, rows

    def __deepcopy__(self, memo):  # a copied world starts without (factors are a cache)
        return FactorCache()


def project_velocities(joints: JointSet, impulses, pos, quat, vel, ang_mom, inv_mass,
                       inv_inertia, kept: KeptRows | None = None, rows=None,
                       inv_iw=None, cache: FactorCache | None = None) -> None:
    """The velocities onto J v = 0 at the poses pos, quat, all equality rows at once (the second
    half of RATTLE): λ = −(J M⁻¹ Jᵀ)⁻¹ J v, an M-orthogonal projection, so it can only take
    kinetic energy away. vel, ang_mom (n, 3) and impulses (m, ROWS) in place. kept: rows held
    at their rate with the joints' (resting contacts, ``resting_contacts``), solved in the same
    system; their impulses go to the bodies only. rows: ``all_rows`` at pos, quat, and inv_iw
    (n, 3, 3) the world inverse inertia there, if known; cache: factors kept between calls."""
    n = len(pos)
    jac, phi, active, nblock = all_rows(joints, pos, quat) if rows is None else rows
    if not nblock.any():
        return
    if inv_iw is None:
        inv_iw = world_inverse_inertia(quat_to_matrix(quat), inv_inertia)
    if kept is None or not len(kept.rate):  # a forest: linear time, one compiled call
        factors = None if cache is None else cache.get(joints, pos, quat, inv_mass,
                                                         inv_inertia)
        solved, made = velocities_forest(tuple(joints), (jac, phi, active, nblock), impulses, vel,
                                         ang_mom, inv_mass, inv_iw,
                                         no_factors() if factors is None else factors,
                                         factors is not None)
        if solved:
            if cache is not None and factors is None:
                cache.put(joints, pos, quat, inv_mass, inv_inertia, made)
            return
    omega = np.einsum("nij,nj->ni", inv_iw, ang_mom)
    rows = equality_rows(joints, jac, phi, nblock)
    count = len(rows.phi)
    present = RowBlock(rows.jac, rows.first, rows.second)
    target = np.zeros(count)
    if kept is not None and len(kept.rate):
        present = _stacked(present, RowBlock(kept.jac, kept.first, kept.second))
        target = np.concatenate((target, kept.rate))
    rate = _rates(present, np.concatenate((vel, omega), axis=1))
    lam = _solve(_gram(present, present.jac, inv_mass, inv_iw), target - rate)
    if lam is None:
        return
    impulse = _spread(present, lam, n)
    vel += impulse[:, 0:3] * inv_mass[:, None]
    ang_mom += impulse[:, 3:6]
    np.add.at(impulses, (rows.joint, rows.row), lam[:count])
