"""The world's joints: definitions by stable id, their frames in the bodies, and per-step state
(warm-start impulses, reactions, violations)."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from numba import njit

from physics.constraints.joint import KIND, WORLD, JointDef
from physics.constraints.projection import (
    FactorCache,
    all_rows,
    project_positions,
    project_velocities,
)
from physics.constraints.solve import (
    LOWER,
    NO_MOTOR,
    ROWS,
    UPPER,
    JointRows,
    JointSet,
    empty_rows,
    one_sided,
    prepare_rows,
    sweep_joints,
    warm_start,
)
from physics.dynamics.integrator import vector_to_world_frame
from physics.geometry.rotation import quat_rotate
from physics.settings import SETTLE_PASSES


def _perpendicular(axis: np.ndarray) -> np.ndarray:
    """A unit vector perpendicular to the unit vector axis (3,)."""
    helper = np.array([1.0, 0.0, 0.0]) if abs(axis[0]) < 0.9 else np.array([0.0, 1.0, 0.0])
    perp = np.cross(axis, helper)
    return perp / np.linalg.norm(perp)


def _conj(q: np.ndarray) -> np.ndarray:
    return q * np.array([1.0, -1.0, -1.0, -1.0])


def _qmul(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    w1, x1, y1, z1 = a
    w2, x2, y2, z2 = b
    return np.array([w1 * w2 - x1 * x2 - y1 * y2 - z1 * z2, w1 * x2 + x1 * w2 + y1 * z2 - z1 * y2,
                     w1 * y2 - x1 * z2 + y1 * w2 + z1 * x2, w1 * z2 + x1 * y2 - y1 * x2 + z1 * w2])


@dataclass
class Frames:
    """A joint's frames in its bodies (see ``JointSet``): fixed when the joint is made."""

    local_a: np.ndarray
    local_b: np.ndarray
    axis_a: np.ndarray
    perp_a: np.ndarray
    axis_b: np.ndarray
    perp_b: np.ndarray
    rel_quat: np.ndarray
    rest_length: float
    min_length: float
    max_length: float


def frames_of(joint: JointDef, pose_a, pose_b) -> Frames:
    """Frames of a joint from the poses (pos (3,), quat (4,)) of its bodies at creation."""
    (pa, qa), (pb, qb) = pose_a, pose_b

    def to_body(q, v):
        return quat_rotate(_conj(q)[None], v)[0]

    axis = joint.axis if joint.axis is not None else np.array([0.0, 1.0, 0.0])
    perp = _perpendicular(axis)
    length = 0.0
    local_a = to_body(qa, joint.anchor - pa)
    if joint.kind == "distance":  # from A's centre of mass to the anchor, fixed in B
        local_a = np.zeros(3)
        length = float(np.linalg.norm(joint.anchor - pa))
    hi = length if joint.max_length is None else joint.max_length
    lo = length if joint.min_length is None else joint.min_length
    if joint.min_length is None and joint.max_length is not None:  # a rope
        lo = 0.0
    if lo > hi:
        raise ValueError(f"joint min must be ≤ max, got min {lo} > max {hi} (start distance "
                         f"{length:g} m)")
    if joint.kind == "distance" and not lo - 1e-9 <= length <= hi + 1e-9:
        # Φ(q₀) = 0 is where the motion starts (docs/physics.md#joints): a joint born violated
        # would be yanked shut by the projection in one step
        raise ValueError(f"a distance joint must start within its min and max: the anchor is "
                         f"{length:g} m from the body's centre, outside [{lo:g}, {hi:g}] m")
    return Frames(local_a, to_body(qb, joint.anchor - pb), to_body(qa, axis), to_body(qa, perp),
                  to_body(qb, axis), to_body(qb, perp), _qmul(_conj(qa), qb),
                  float(np.clip(length if joint.rest_length is None else joint.rest_length,
                                lo, hi)), lo, hi)


@dataclass
class JointTable:
    """Joints by stable id, in creation order, with the state the steps carry.

    impulses (m, ROWS) N·s last step's (warm start); force, torque (m, 3) N, N·m the reaction
    on the first body at the anchor in the last step (λ/h, world); error (m, 2) m and rad the
    largest position and angle violations after the last step."""

    defs: dict[int, JointDef] = field(default_factory=dict)
    frames: dict[int, Frames] = field(default_factory=dict)
    next_id: int = 0
    impulses: np.ndarray = field(default_factory=lambda: np.zeros((0, ROWS)))
    force: np.ndarray = field(default_factory=lambda: np.zeros((0, 3)))
    torque: np.ndarray = field(default_factory=lambda: np.zeros((0, 3)))
    error: np.ndarray = field(default_factory=lambda: np.zeros((0, 2)))
    # the kernel arrays of the last ``arrays`` call and the body ids they were made for: a
    # step needs them and they change only with the joints or the bodies
    _cache: tuple | None = field(default=None, repr=False, compare=False)
    # the last velocity projection's factors (the next step starts with the same system)
    factors: FactorCache = field(default_factory=FactorCache, repr=False, compare=False)

    @property
    def ids(self) -> list[int]:
        return list(self.defs)

    def replace(self, joint_id: int, joint: JointDef) -> None:
        """Joint joint_id's definition becomes joint (same bodies, frames kept)."""
        self.defs[joint_id] = joint
        self._cache = None

    def add(self, joint: JointDef, frames: Frames) -> int:
        joint_id = self.next_id
        self.next_id += 1
        self.defs[joint_id] = joint
        self.frames[joint_id] = frames
        self._cache = None
        self.impulses = np.vstack((self.impulses, np.zeros((1, ROWS))))
        self.force = np.vstack((self.force, np.zeros((1, 3))))
        self.torque = np.vstack((self.torque, np.zeros((1, 3))))
        self.error = np.vstack((self.error, np.zeros((1, 2))))
        return joint_id

    def remove(self, joint_id: int) -> None:
        row = self.ids.index(joint_id)
        del self.defs[joint_id]
        del self.frames[joint_id]
        self._cache = None
        for name in ("impulses", "force", "torque", "error"):
            setattr(self, name, np.delete(getattr(self, name), row, axis=0))

    def touching(self, body_id: int) -> list[int]:
        return [k for k, d in self.defs.items() if body_id in (d.first, d.second)]

    def arrays(self, ids: np.ndarray) -> JointSet:
        """The joints as kernel arrays, bodies as rows of ids (n,) (sorted, stable); made again
        only when the joints or the ids changed."""
        if self._cache is not None and np.array_equal(self._cache[0], ids):
            return self._cache[1]
        joints = self._arrays(ids)
        self._cache = (ids.copy(), joints, {})
        return joints

    def unjoined_keys(self, ids: np.ndarray) -> np.ndarray:
        """Sorted keys min·n + max (int64) of the row pairs, rows of ids (n,), that two joints
        keep from colliding (joined, without ``collide``); cached like ``arrays``."""
        joints = self.arrays(ids)
        extras = self._cache[2]
        if "unjoined" not in extras:
            keep = np.array([not d.collide for d in self.defs.values()], dtype=bool)
            keep &= joints.second >= 0
            a, b = joints.first[keep], joints.second[keep]
            n = np.int64(len(ids))
            extras["unjoined"] = np.unique(np.minimum(a, b) * n + np.maximum(a, b))
        return extras["unjoined"]

    def break_forces(self, ids: np.ndarray) -> np.ndarray:
        """(m,) N each joint breaks past (inf: never); cached like ``arrays``."""
        self.arrays(ids)
        extras = self._cache[2]
        if "break" not in extras:
            extras["break"] = np.array([np.inf if d.break_force is None else d.break_force
                                        for d in self.defs.values()], dtype=float)
        return extras["break"]

    def batch_arguments(self, ids: np.ndarray) -> tuple:
        """(``arrays``, ``unjoined_keys``, ``break_forces``) for a batch over body ids (n,), with
        one check of the cache a call (each of the three checks it: a batch is tens of µs)."""
        joints = self.arrays(ids)
        extras = self._cache[2]
        if "batch" not in extras:
            extras["batch"] = (joints, self.unjoined_keys(ids), self.break_forces(ids))
        return extras["batch"]

    def _arrays(self, ids: np.ndarray) -> JointSet:
        defs, frames = list(self.defs.values()), list(self.frames.values())
        m = len(defs)

        def row(body_id):
            return -1 if body_id == WORLD else int(np.searchsorted(ids, body_id))

        def stack(name, width):
            return np.array([getattr(f, name) for f in frames], dtype=float).reshape(m, width)

        limits = [d.limits if d.limits is not None else (0.0, 0.0) for d in defs]
        return JointSet(
            np.array([KIND[d.kind] for d in defs], dtype=np.int64),
            np.array([row(d.first) for d in defs], dtype=np.int64),
            np.array([row(d.second) for d in defs], dtype=np.int64),
            stack("local_a", 3), stack("local_b", 3), stack("axis_a", 3), stack("perp_a", 3),
            stack("axis_b", 3), stack("perp_b", 3), stack("rel_quat", 4),
            np.array([d.limits is not None for d in defs], dtype=np.bool_),
            np.array([lim[0] for lim in limits], dtype=float).reshape(m),
            np.array([lim[1] for lim in limits], dtype=float).reshape(m),
            np.array([d.motor_speed for d in defs], dtype=float).reshape(m),
            np.array([NO_MOTOR if d.motor_max is None else d.motor_max for d in defs],
                     dtype=float).reshape(m),
            stack("min_length", 1).reshape(m), stack("max_length", 1).reshape(m),
            stack("rest_length", 1).reshape(m),
            np.array([d.stiffness for d in defs], dtype=float).reshape(m),
            np.array([d.damping for d in defs], dtype=float).reshape(m))


def solve_joint_velocities(joints: JointSet, impulses, pos, quat, vel, omega, ang_mom, inv_mass,
                           inv_iw, inv_inertia, h, iterations, cache=None) -> JointRows:
    """Prepare the rows, warm-start, sweep the joints with limit, motor or spring rows, then all
    equality rows exactly at once (``project_velocities``); vel, omega, ang_mom (n, 3) and
    impulses (m, ROWS) in place. A joint of equality rows only is not swept: the global solve
    that follows gives the same velocities (it is the M-orthogonal projection, and a sweep's
    impulses lie in the rows' own span), so its sweeps were wasted work
    (docs/physics.md#joint-projection). cache: a ``FactorCache`` kept between steps."""
    rows = empty_rows(len(joints.kind))
    prepare_rows(joints, pos, quat, inv_mass, inv_iw, float(h), rows, False)
    warm_start(joints, rows, impulses, vel, omega, ang_mom, inv_mass, inv_iw)
    settle_joints(one_sided(rows), joints, rows, impulses, pos, quat, vel, omega, ang_mom,
                  inv_mass, inv_iw, inv_inertia, h, iterations, None, cache)
    return rows


def settle_joints(swept, joints: JointSet, rows: JointRows, impulses, pos, quat, vel, omega,
                  ang_mom, inv_mass, inv_iw, inv_inertia, h, iterations, kept, cache) -> None:
    """Sweep the limit, motor and spring rows of the joints ``swept`` (k,) and make the
    equality rows exact by the global projection, in turns: a limit's impulse moves the
    bodies its joint shares with others, which the projection then corrects — once, the
    correction could reopen the limit (a motor driving a hinge into its stop bounced off it
    when one of its bodies hung on a weld), so the two alternate ``SETTLE_PASSES`` times
    (docs/physics.md#joint-projection). vel, omega, ang_mom (n, 3), impulses in place; kept:
    resting contact rows held with the equalities (``project_velocities``)."""
    passes = SETTLE_PASSES if len(swept) else 1
    for _ in range(passes):
        if len(swept):
            sweep_joints(swept, joints, rows, impulses, vel, omega, ang_mom, inv_mass, inv_iw,
                         float(h), int(iterations))
        project_velocities(joints, impulses, pos, quat, vel, ang_mom, inv_mass, inv_inertia,
                           kept, rows=(rows.jac, rows.phi, rows.active, rows.nblock),
                           inv_iw=inv_iw, cache=cache)
        omega[:] = np.einsum("nij,nj->ni", inv_iw, ang_mom)


def project(joints: JointSet, rows: JointRows, impulses, pos, quat, vel, ang_mom, inv_mass,
            inv_inertia, h, free_step=None, resting=None, cache=None, chord=None):
    """Every joint back onto Φ = 0 (Newton steps along the step's start rows ``rows``), then the
    end velocities onto J v = 0; pos, quat, vel, ang_mom and impulses (m, ROWS) in place;
    free_step (start orientations (n, 4), the world L (n, 3) the rotation step used): see
    ``project_positions``; resting: contact rows held at rate 0; cache, chord: the velocity
    system's factors (docs/physics.md#joint-projection). Returns the rows at the end poses, or
    None (see ``project_positions``)."""
    return project_positions(joints, rows.jac, impulses, pos, quat, vel, ang_mom, inv_mass,
                             inv_inertia, float(h), free_step, resting, cache, chord)


def violations(joints: JointSet, pos, quat) -> np.ndarray:
    """(m, 2): largest |Φ| of each joint's position rows (m) and of its angle rows (rad),
    counting violated limits."""
    return violations_of(all_rows(joints, pos, quat))


def violations_of(rows) -> np.ndarray:
    """``violations`` from rows already made at the poses (``all_rows``' arrays)."""
    jac, phi, active, nblock = rows
    out = np.zeros((len(nblock), 2))
    _classify_kernel(jac, phi, active, nblock, out)
    return out


@njit(cache=True)
def _classify_kernel(jac, phi, active, nblock, out):
    """out (m, 2) ← the largest |Φ| of each joint's position and angle rows, violated limits
    counted, from its rows jac (m, ROWS, 12), phi, active (m, ROWS), nblock (m,)."""
    for j in range(len(nblock)):
        for r in range(ROWS):
            if r < nblock[j]:
                value = abs(phi[j, r])
            elif (r == LOWER or r == UPPER) and active[j, r]:
                value = max(-phi[j, r], 0.0)
            else:
                continue
            angular = 1
            for c in range(3):
                if jac[j, r, c] != 0.0 or jac[j, r, 6 + c] != 0.0:
                    angular = 0
            out[j, angular] = max(out[j, angular], value)


def reactions(joints: JointSet, rows: JointRows, impulses, pos, quat, h):
    """Force and torque (m, 3) N, N·m on each joint's first body at its anchor: λ/h summed over
    rows, the torque about the anchor."""
    m = len(joints.kind)
    force, torque = np.empty((m, 3)), np.empty((m, 3))
    _reactions_kernel(joints.first, joints.local_a, rows.jac, impulses, quat, float(h), force,
                      torque)
    return force, torque


@njit(cache=True, nogil=True)
def _reactions_kernel(first, local_a, jac, impulses, quat, h, force, torque):
    """``reactions`` in one pass: Σ λ J_A / h over each joint's rows, its torque taken about
    the anchor R a (a: the anchor in A's frame)."""
    for j in range(len(first)):
        f0 = f1 = f2 = t0 = t1 = t2 = 0.0
        for r in range(jac.shape[1]):
            lam = impulses[j, r]
            f0 += lam * jac[j, r, 0]
            f1 += lam * jac[j, r, 1]
            f2 += lam * jac[j, r, 2]
            t0 += lam * jac[j, r, 3]
            t1 += lam * jac[j, r, 4]
            t2 += lam * jac[j, r, 5]
        f0, f1, f2 = f0 / h, f1 / h, f2 / h
        a0, a1, a2 = vector_to_world_frame(quat, first[j], local_a[j, 0], local_a[j, 1],
                                           local_a[j, 2])
        force[j, 0], force[j, 1], force[j, 2] = f0, f1, f2
        torque[j, 0] = t0 / h - (a1 * f2 - a2 * f1)
        torque[j, 1] = t1 / h - (a2 * f0 - a0 * f2)
        torque[j, 2] = t2 / h - (a0 * f1 - a1 * f0)


