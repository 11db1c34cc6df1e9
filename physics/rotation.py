"""Quaternion algebra and rotation parameterizations (seed 003 §3, physics.md §5).

Conventions: quaternions are scalar-first ``(w, x, y, z)`` and map body → world,
``x_world = R(q) · x_body``. Every function is vectorised over leading axes: a quaternion
argument has shape ``(..., 4)``, a vector ``(..., 3)``, a matrix ``(..., 3, 3)``.
"""

from __future__ import annotations

import numpy as np


def quat_mul(p: np.ndarray, q: np.ndarray) -> np.ndarray:
    """Hamilton product ``p ⊗ q``; shapes (..., 4) broadcast → (..., 4)."""
    pw, px, py, pz = np.moveaxis(np.asarray(p, dtype=float), -1, 0)
    qw, qx, qy, qz = np.moveaxis(np.asarray(q, dtype=float), -1, 0)
    return np.stack(
        (
            pw * qw - px * qx - py * qy - pz * qz,
            pw * qx + px * qw + py * qz - pz * qy,
            pw * qy - px * qz + py * qw + pz * qx,
            pw * qz + px * qy - py * qx + pz * qw,
        ),
        axis=-1,
    )


def quat_conj(q: np.ndarray) -> np.ndarray:
    """Conjugate ``(w, -x, -y, -z)``: the inverse rotation of a unit quaternion; (..., 4)."""
    q = np.asarray(q, dtype=float)
    return q * np.array([1.0, -1.0, -1.0, -1.0])


def quat_normalize(q: np.ndarray) -> np.ndarray:
    """Unit quaternion along ``q``; (..., 4)."""
    q = np.asarray(q, dtype=float)
    return q / np.linalg.norm(q, axis=-1, keepdims=True)


def quat_rotate(q: np.ndarray, v: np.ndarray) -> np.ndarray:
    """Rotate vectors by unit quaternions: ``R(q) v``; q (..., 4), v (..., 3) → (..., 3).

    Uses ``v' = v + 2w (u × v) + 2 u × (u × v)`` with ``u = (x, y, z)``, which is the
    sandwich product ``q ⊗ (0, v) ⊗ q*`` expanded (two cross products, no matrix).
    """
    q = np.asarray(q, dtype=float)
    v = np.asarray(v, dtype=float)
    w = q[..., :1]
    u = q[..., 1:]
    uv = np.cross(u, v)
    return v + 2.0 * (w * uv + np.cross(u, uv))


def quat_to_matrix(q: np.ndarray) -> np.ndarray:
    """Rotation matrix of unit quaternions; (..., 4) → (..., 3, 3) (columns = body axes in world)."""
    w, x, y, z = np.moveaxis(np.asarray(q, dtype=float), -1, 0)
    xx, yy, zz = x * x, y * y, z * z
    xy, xz, yz = x * y, x * z, y * z
    wx, wy, wz = w * x, w * y, w * z
    m = np.stack(
        (
            1 - 2 * (yy + zz), 2 * (xy - wz), 2 * (xz + wy),
            2 * (xy + wz), 1 - 2 * (xx + zz), 2 * (yz - wx),
            2 * (xz - wy), 2 * (yz + wx), 1 - 2 * (xx + yy),
        ),
        axis=-1,
    )
    return m.reshape(m.shape[:-1] + (3, 3))


def quat_cayley(half_angle_vector: np.ndarray) -> np.ndarray:
    """Cayley map: the unit quaternion ``normalize(1, a)`` for ``a = (h/2)·ω``; (..., 3) → (..., 4).

    physics.md §2 step 3: ``q' = q ⊗ cay((h/2) ω_b)``. It equals the exact exponential up to
    an under-rotation of about θ³/12 per step, and is exactly unit length.
    """
    a = np.asarray(half_angle_vector, dtype=float)
    q = np.concatenate((np.ones(a.shape[:-1] + (1,)), a), axis=-1)
    return q / np.sqrt(1.0 + np.einsum("...i,...i->...", a, a))[..., None]
