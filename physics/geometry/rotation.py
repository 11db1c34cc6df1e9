"""Quaternion algebra and rotation parameterizations (docs/physics.md#rotation-parameterizations).

Conventions: quaternions are scalar-first ``(w, x, y, z)`` and map body → world,
``x_world = R(q) · x_body``. Every function is vectorised over leading axes: a quaternion
argument has shape ``(..., 4)``, a vector ``(..., 3)``, a matrix ``(..., 3, 3)``; leading
axes broadcast. Angles are in radians. The unit quaternion is also called the "Euler
parameters" ``(e0, e)``; θ is the rotation angle about the unit axis n.

Functions taking a quaternion to a parameterization normalise it first, so a slightly
non-unit input is accepted; those producing a quaternion from a parameterization return a
unit quaternion whose sign is not canonicalised (q and −q are the same rotation) unless the
docstring says otherwise.
"""

from __future__ import annotations

import numpy as np
from numba import njit

# Euler/Bryant gimbal lock: when the quaternion part that fixes one angle combination is
# smaller than this, that combination is undefined and set to a fixed choice (see those
# functions); the rotation then changes by at most about this angle (rad).
_GIMBAL_TOL = 1e-14
# Rodrigues parameters are infinite at θ = π; w is clamped to at least this, which keeps
# |r| ≤ 2^61 (its square stays far from float64 overflow) while the rotation it stands for
# differs from the true one by < 2^-58 rad, below float64 resolution of a unit quaternion.
_RODRIGUES_MIN_W = 2.0**-60
# Below this angle (rad) the exp/log maps use their Taylor series
# (docs/physics.md#rotation-parameterizations):
# the first omitted term is < 1e-18 relative there.
_SERIES_ANGLE = 1e-3


def _array(x, size: int, name: str, finite: bool = True) -> np.ndarray:
    """``x`` as a float64 array whose last axis has length ``size``; ValueError otherwise."""
    a = np.asarray(x, dtype=np.float64)
    if a.ndim == 0 or a.shape[-1] != size:
        raise ValueError(f"{name}: expected an array of shape (..., {size}), got shape {a.shape}")
    if finite and not np.all(np.isfinite(a)):
        raise ValueError(f"{name}: contains NaN or Inf; pass finite values")
    return a


def _canonical(q: np.ndarray) -> np.ndarray:
    """The same rotation with w ≥ 0 (q and −q are one rotation); (..., 4)."""
    return np.where(q[..., :1] < 0.0, -q, q)


def _wrap(angle: np.ndarray) -> np.ndarray:
    """Angles in (-2π, 2π] folded into (-π, π]."""
    angle = np.where(angle > np.pi, angle - 2.0 * np.pi, angle)
    return np.where(angle <= -np.pi, angle + 2.0 * np.pi, angle)


def _norm(v: np.ndarray) -> np.ndarray:
    """Euclidean norm over the last axis, (...,)."""
    return np.sqrt(np.einsum("...i,...i->...", v, v))


def _normalize_homogeneous(w: np.ndarray, v: np.ndarray) -> np.ndarray:
    """Unit quaternion along ``(w, v)`` for any finite w (...,) and v (..., 3), without overflow.

    Dividing by the largest magnitude first keeps the squares finite for huge parameters
    (Rodrigues near θ = π, CRV of many turns).
    """
    q = np.concatenate((w[..., None], v), axis=-1)
    q = q / np.max(np.abs(q), axis=-1, keepdims=True)
    return q / _norm(q)[..., None]


def quat_mul(p: np.ndarray, q: np.ndarray) -> np.ndarray:
    """Hamilton product ``p ⊗ q``; shapes (..., 4) broadcast → (..., 4).

    ``R(p ⊗ q) = R(p) R(q)``: apply q first, then p.
    """
    p = _array(p, 4, "quat_mul p", finite=False)
    q = _array(q, 4, "quat_mul q", finite=False)
    shape = np.broadcast_shapes(p.shape, q.shape)
    out = np.empty(shape)
    _mul_kernel(np.ascontiguousarray(np.broadcast_to(p, shape)).reshape(-1, 4),
                np.ascontiguousarray(np.broadcast_to(q, shape)).reshape(-1, 4),
                out.reshape(-1, 4))
    return out


@njit(cache=True, nogil=True)
def _mul_kernel(p, q, out):
    """Loop body of ``quat_mul`` over rows of p, q (k, 4) into out (k, 4), compiled: the joint
    projection multiplies all bodies' orientations several times a step, where numpy's stack
    of sixteen products cost more than the arithmetic."""
    for i in range(p.shape[0]):
        pw, px, py, pz = p[i, 0], p[i, 1], p[i, 2], p[i, 3]
        qw, qx, qy, qz = q[i, 0], q[i, 1], q[i, 2], q[i, 3]
        out[i, 0] = pw * qw - px * qx - py * qy - pz * qz
        out[i, 1] = pw * qx + px * qw + py * qz - pz * qy
        out[i, 2] = pw * qy - px * qz + py * qw + pz * qx
        out[i, 3] = pw * qz + px * qy - py * qx + pz * qw


def quat_conj(q: np.ndarray) -> np.ndarray:
    """Conjugate ``(w, -x, -y, -z)``: the inverse rotation of a unit quaternion; (..., 4)."""
    return _array(q, 4, "quat_conj q", finite=False) * np.array([1.0, -1.0, -1.0, -1.0])


def quat_normalize(q: np.ndarray) -> np.ndarray:
    """Unit quaternion along ``q``; (..., 4). Raises ValueError for a zero quaternion."""
    q = _array(q, 4, "quat_normalize q", finite=False)
    n = np.linalg.norm(q, axis=-1, keepdims=True)
    if np.any(n == 0.0):
        raise ValueError("quat_normalize: zero quaternion has no direction; pass a non-zero q")
    return q / n


def quat_rotate(q: np.ndarray, v: np.ndarray) -> np.ndarray:
    """Rotate vectors by unit quaternions: ``R(q) v``; q (..., 4), v (..., 3) → (..., 3).

    Uses ``v' = v + 2w (u × v) + 2 u × (u × v)`` with ``u = (x, y, z)``, which is the
    sandwich product ``q ⊗ (0, v) ⊗ q*`` expanded (two cross products, no matrix).
    """
    q = _array(q, 4, "quat_rotate q", finite=False)
    v = _array(v, 3, "quat_rotate v", finite=False)
    w = q[..., :1]
    u = q[..., 1:]
    uv = np.cross(u, v)
    return v + 2.0 * (w * uv + np.cross(u, uv))


def quat_to_matrix(q: np.ndarray) -> np.ndarray:
    """Rotation matrix of unit quaternions; (..., 4) → (..., 3, 3) (columns = body axes in world).

    ``R = (2w² − 1) I + 2 e eᵀ + 2 w ẽ`` with ``e = (x, y, z)``.
    """
    q = _array(q, 4, "quat_to_matrix q", finite=False)
    flat = np.ascontiguousarray(q.reshape(-1, 4))
    out = np.empty((len(flat), 3, 3))
    _matrix_kernel(flat, out)
    return out.reshape(q.shape[:-1] + (3, 3))


@njit(cache=True, nogil=True)
def _matrix_kernel(q, out):
    """Loop body of ``quat_to_matrix`` over q (k, 4) into out (k, 3, 3), compiled: the physics
    step needs the matrices of all bodies twice a step, and numpy's dozen calls cost more than
    the arithmetic."""
    for i in range(q.shape[0]):
        w, x, y, z = q[i, 0], q[i, 1], q[i, 2], q[i, 3]
        xx, yy, zz = x * x, y * y, z * z
        xy, xz, yz = x * y, x * z, y * z
        wx, wy, wz = w * x, w * y, w * z
        out[i, 0, 0], out[i, 0, 1], out[i, 0, 2] = 1 - 2 * (yy + zz), 2 * (xy - wz), 2 * (xz + wy)
        out[i, 1, 0], out[i, 1, 1], out[i, 1, 2] = 2 * (xy + wz), 1 - 2 * (xx + zz), 2 * (yz - wx)
        out[i, 2, 0], out[i, 2, 1], out[i, 2, 2] = 2 * (xz - wy), 2 * (yz + wx), 1 - 2 * (xx + yy)


def matrix_to_quat(matrix: np.ndarray) -> np.ndarray:
    """Unit quaternion of rotation matrices, w ≥ 0; (..., 3, 3) → (..., 4).

    Largest-diagonal method (docs/physics.md#rotation-parameterizations): ``S = 4 q qᵀ`` is
    built from R;
    its largest diagonal entry ``S_ii = 4 q_i²`` is ≥ 1, so ``q_k = S_ik / (2 √S_ii)``
    never divides by a small number — unlike the trace-only formula of §3.3.1, which fails
    near θ = π. (Eq. 62 prints ``S_ii/(4e_i)``; the seed's C++ code, §3.3.3, uses ``S_ik``.)
    The result is renormalised and given the canonical sign w ≥ 0 (at θ = π, w = 0 and
    either sign of the axis is returned).

    Raises ValueError if a matrix is not a rotation (|RᵀR − I| > 1e-6 or det R < 0).
    """
    r = np.asarray(matrix, dtype=np.float64)
    if r.ndim < 2 or r.shape[-2:] != (3, 3):
        raise ValueError(f"matrix_to_quat: expected shape (..., 3, 3), got {r.shape}")
    if not np.all(np.isfinite(r)):
        raise ValueError("matrix_to_quat: matrix contains NaN or Inf; pass finite values")
    if r.size:
        off = np.max(np.abs(np.swapaxes(r, -1, -2) @ r - np.eye(3)))
        if off > 1e-6 or np.any(np.linalg.det(r) < 0.0):
            raise ValueError(
                f"matrix_to_quat: not a rotation matrix (max |RᵀR − I| = {off:.3g}, or det < 0); "
                "pass an orthonormal, right-handed matrix")
    r00, r01, r02 = r[..., 0, 0], r[..., 0, 1], r[..., 0, 2]
    r10, r11, r12 = r[..., 1, 0], r[..., 1, 1], r[..., 1, 2]
    r20, r21, r22 = r[..., 2, 0], r[..., 2, 1], r[..., 2, 2]
    d0 = 1.0 + r00 + r11 + r22
    d1 = 1.0 + r00 - r11 - r22
    d2 = 1.0 - r00 + r11 - r22
    d3 = 1.0 - r00 - r11 + r22
    a, b, c = r21 - r12, r02 - r20, r10 - r01  # 4w·(x, y, z)
    xy, xz, yz = r01 + r10, r02 + r20, r12 + r21  # 4·(xy, xz, yz)
    s = np.stack(
        (
            np.stack((d0, a, b, c), axis=-1),
            np.stack((a, d1, xy, xz), axis=-1),
            np.stack((b, xy, d2, yz), axis=-1),
            np.stack((c, xz, yz, d3), axis=-1),
        ),
        axis=-2,
    )  # (..., 4, 4)
    diag = np.stack((d0, d1, d2, d3), axis=-1)
    i = np.argmax(diag, axis=-1)[..., None]
    row = np.take_along_axis(s, i[..., None], axis=-2)[..., 0, :]
    q = row / (2.0 * np.sqrt(np.take_along_axis(diag, i, axis=-1)))
    return _canonical(q / _norm(q)[..., None])


def quat_from_axis_angle(axis: np.ndarray, angle: np.ndarray) -> np.ndarray:
    """Rotation by ``angle`` (rad, (...)) about ``axis`` ((..., 3), any non-zero length) → (..., 4).

    ``q = (cos θ/2, n sin θ/2)``; not sign-canonicalised, so angles beyond
    π give w < 0. Raises ValueError for a zero-length axis.
    """
    axis = _array(axis, 3, "quat_from_axis_angle axis")
    angle = np.asarray(angle, dtype=np.float64)
    if not np.all(np.isfinite(angle)):
        raise ValueError("quat_from_axis_angle: angle contains NaN or Inf; pass finite values")
    length = _norm(axis)
    if np.any(length == 0.0):
        raise ValueError("quat_from_axis_angle: zero-length axis; pass a non-zero axis vector")
    shape = np.broadcast_shapes(axis.shape[:-1], angle.shape)
    n = np.broadcast_to(axis / length[..., None], shape + (3,))
    half = np.broadcast_to(0.5 * angle, shape)[..., None]
    return np.concatenate((np.cos(half), np.sin(half) * n), axis=-1)


def quat_from_rotvec(rotvec: np.ndarray) -> np.ndarray:
    """Exponential map: rotation vector ``Ψ = nθ`` (rad, (..., 3)) → unit quaternion (..., 4).

    ``q = (cos θ/2, Ψ sin(θ/2)/θ)``; below θ = 1e-3 the factor ``sin(θ/2)/θ`` uses its Taylor
    series ``1/2 − θ²/48 + θ⁴/3840``, exact at Ψ = 0. Any finite
    Ψ is accepted; θ > π gives w < 0 (the sign is not canonicalised, so the map stays smooth).
    """
    v = _array(rotvec, 3, "quat_from_rotvec rotvec")
    theta = np.hypot(np.hypot(v[..., 0], v[..., 1]), v[..., 2])  # no overflow for huge Ψ
    small = theta < _SERIES_ANGLE
    theta2 = np.where(small, theta, 0.0) ** 2
    safe = np.where(small, 1.0, theta)
    k = np.where(small, 0.5 - theta2 / 48.0 + theta2 * theta2 / 3840.0, np.sin(0.5 * safe) / safe)
    return np.concatenate((np.cos(0.5 * theta)[..., None], k[..., None] * v), axis=-1)


def quat_to_rotvec(q: np.ndarray) -> np.ndarray:
    """Logarithm map: unit quaternion (..., 4) → rotation vector ``Ψ = nθ`` (..., 3), θ ∈ [0, π].

    q is normalised and its sign made w ≥ 0, then ``θ = 2 atan2(|e|, w)`` — accurate at both
    ends, unlike ``acos w`` near 0 or ``asin |e|`` near π. ``Ψ = e·θ/|e|``; for
    ``|e|/w < 1e-3`` the factor uses ``(2/w)·atan(x)/x = (2/w)(1 − x²/3 + x⁴/5)`` with
    ``x = |e|/w``. At θ = π exactly both ±nπ are the same rotation; the one along the
    quaternion's e is returned.
    """
    q = _canonical(quat_normalize(_array(q, 4, "quat_to_rotvec q")))
    w, e = q[..., 0], q[..., 1:]
    s = _norm(e)
    small = s < _SERIES_ANGLE * w  # implies w > 0.99 for a unit q
    x2 = np.where(small, (s / np.where(small, w, 1.0)) ** 2, 0.0)
    series = (2.0 / np.where(small, w, 1.0)) * (1.0 - x2 / 3.0 + x2 * x2 / 5.0)
    k = np.where(small, series, 2.0 * np.arctan2(s, w) / np.where(small, 1.0, s))
    return k[..., None] * e


def quat_to_rodrigues(q: np.ndarray) -> np.ndarray:
    """Rodrigues parameters ``r = 2 tan(θ/2) n = 2e/w``; (..., 4) → (..., 3).

    q is normalised and made w ≥ 0, so θ ∈ [0, π]. Singular at θ = π (w = 0, r infinite):
    w is clamped below at 2⁻⁶⁰, so the result is always finite — a vector along the true axis
    with |r| ≤ 2⁶¹ — and ``rodrigues_to_quat`` of it gives the intended rotation to < 2⁻⁵⁸ rad.
    Such vectors are not meaningful for arithmetic (e.g. the composition rule eq. 50).
    """
    q = _canonical(quat_normalize(_array(q, 4, "quat_to_rodrigues q")))
    w = np.maximum(q[..., :1], _RODRIGUES_MIN_W)
    return 2.0 * q[..., 1:] / w


def rodrigues_to_quat(rodrigues: np.ndarray) -> np.ndarray:
    """Unit quaternion (w > 0) of Rodrigues parameters ``r = 2 tan(θ/2) n``; (..., 3) → (..., 4).

    ``q ∝ (1, r/2)`` (inverse of eq. 53), normalised without overflow, so any finite r is
    accepted; huge |r| approaches θ = π.
    """
    r = _array(rodrigues, 3, "rodrigues_to_quat rodrigues")
    return _normalize_homogeneous(np.ones(r.shape[:-1]), 0.5 * r)


def quat_to_crv(q: np.ndarray) -> np.ndarray:
    """Conformal rotation vector ``c = 4 tan(θ/4) n = 4e/(1 + w)``; → (..., 3).

    q is normalised and made w ≥ 0, so θ ∈ [0, π], |c| ≤ 4 and 1 + w ≥ 1: never singular.
    """
    q = _canonical(quat_normalize(_array(q, 4, "quat_to_crv q")))
    return 4.0 * q[..., 1:] / (1.0 + q[..., :1])


def crv_to_quat(crv: np.ndarray) -> np.ndarray:
    """Unit quaternion of a conformal rotation vector ``c = 4 tan(θ/4) n``; (..., 3) → (..., 4).

    With ``u = c/4``: ``q ∝ (1 − |u|², 2u)`` (from eq. 64–65, tan(θ/4) = |u|). Any finite c is
    accepted: |c| > 4 means θ > π (w < 0, not canonicalised); huge |c| tends to the identity
    (θ → 2π). Normalised without overflow.
    """
    u = 0.25 * _array(crv, 3, "crv_to_quat crv")
    m = np.maximum(1.0, np.max(np.abs(u), axis=-1))  # (1 − |u|², 2u)/m² without overflow
    uh = u / m[..., None]
    return _normalize_homogeneous((1.0 / m) ** 2 - np.einsum("...i,...i->...", uh, uh),
                                  2.0 * uh / m[..., None])


def euler_zxz_to_quat(angles: np.ndarray) -> np.ndarray:
    """Euler angles z-x-z ``(ψ, θ, φ)`` (rad, (..., 3)) → unit quaternion (..., 4).

    Rotate ψ about z, then θ about the *moved* x' axis, then φ about the
    twice-moved z'' axis (body-fixed, intrinsic axes), i.e.
    ``R = R(Z, ψ) R(X, θ) R(Z, φ)`` (eq. 83; the same matrix as fixed axes taken in the
    reverse order φ, θ, ψ). As a quaternion ``q = q_z(ψ) ⊗ q_x(θ) ⊗ q_z(φ)``:
    ``(cos θ/2 cos Σ, sin θ/2 cos Δ, sin θ/2 sin Δ, cos θ/2 sin Σ)``, Σ = (ψ+φ)/2, Δ = (ψ−φ)/2.
    (Seed eq. 88's entry R₁₂ has a typo: its last factor should be cos φ.)
    """
    a = _array(angles, 3, "euler_zxz_to_quat angles")
    psi, theta, phi = a[..., 0], a[..., 1], a[..., 2]
    c, s = np.cos(0.5 * theta), np.sin(0.5 * theta)
    sigma, delta = 0.5 * (psi + phi), 0.5 * (psi - phi)
    return np.stack((c * np.cos(sigma), s * np.cos(delta), s * np.sin(delta), c * np.sin(sigma)),
                    axis=-1)


def quat_to_euler_zxz(q: np.ndarray) -> np.ndarray:
    """Euler angles z-x-z ``(ψ, θ, φ)`` of unit quaternions (see ``euler_zxz_to_quat``); → (..., 3).

    Ranges: ψ, φ ∈ (−π, π], θ ∈ [0, π]; computed with atan2 only (accurate everywhere):
    ``Σ = atan2(z, w)``, ``Δ = atan2(y, x)``, ``θ = 2 atan2(√(x²+y²), √(w²+z²))``.

    Gimbal lock (limitation): at θ = 0 only ψ + φ is defined, at θ = π only ψ − φ. When
    sin(θ/2) or cos(θ/2) is below 1e-14 the result puts all of that rotation into ψ and
    returns φ = 0; the angles are finite and reproduce the rotation to ~1e-14 rad. Close to
    the lock ψ and φ individually are ill-conditioned (their error grows like 1e-16/sin θ),
    though the rotation they represent stays accurate.
    """
    w, x, y, z = np.moveaxis(quat_normalize(_array(q, 4, "quat_to_euler_zxz q")), -1, 0)
    sin_half, cos_half = np.hypot(x, y), np.hypot(w, z)
    theta = 2.0 * np.arctan2(sin_half, cos_half)
    sigma, delta = np.arctan2(z, w), np.arctan2(y, x)
    lock0, lock_pi = sin_half < _GIMBAL_TOL, cos_half < _GIMBAL_TOL
    psi = np.where(lock0, 2.0 * sigma, np.where(lock_pi, 2.0 * delta, sigma + delta))
    phi = np.where(lock0 | lock_pi, 0.0, sigma - delta)
    return np.stack((_wrap(psi), theta, _wrap(phi)), axis=-1)


def bryant_xyz_to_quat(angles: np.ndarray) -> np.ndarray:
    """Bryant angles x-y-z ``(φ, ψ, θ)`` (rad, (..., 3)) → unit quaternion (..., 4).

    Rotate φ about the space-fixed X axis, then ψ about fixed Y, then θ about
    fixed Z (extrinsic axes), ``R = R(Z, θ) R(Y, ψ) R(X, φ)`` (eq. 67) — equivalently
    body-fixed z, y', x'' in the order θ, ψ, φ. ``q = q_z(θ) ⊗ q_y(ψ) ⊗ q_x(φ)``.
    """
    a = _array(angles, 3, "bryant_xyz_to_quat angles")
    phi, psi, theta = a[..., 0], a[..., 1], a[..., 2]
    c1, s1 = np.cos(0.5 * theta), np.sin(0.5 * theta)
    c2, s2 = np.cos(0.5 * psi), np.sin(0.5 * psi)
    c3, s3 = np.cos(0.5 * phi), np.sin(0.5 * phi)
    return np.stack(
        (
            c1 * c2 * c3 + s1 * s2 * s3,
            c1 * c2 * s3 - s1 * s2 * c3,
            c1 * s2 * c3 + s1 * c2 * s3,
            s1 * c2 * c3 - c1 * s2 * s3,
        ),
        axis=-1,
    )


def quat_to_bryant_xyz(q: np.ndarray) -> np.ndarray:
    """Bryant angles x-y-z ``(φ, ψ, θ)`` of unit quaternions (..., 4) → (..., 3).

    Definition as in ``bryant_xyz_to_quat``.

    Ranges: φ, θ ∈ (−π, π], ψ ∈ [−π/2, π/2]. Instead of ``asin(2(wy − xz))``, which loses
    half the digits near ψ = ±π/2, the identities (from the product in ``bryant_xyz_to_quat``)
    ``w + y = A cos β``, ``z − x = A sin β``, ``w − y = B cos α``, ``z + x = B sin α`` with
    ``A = cos ψ/2 + sin ψ/2``, ``B = cos ψ/2 − sin ψ/2``, α = (θ+φ)/2, β = (θ−φ)/2 give
    ``ψ = 2 atan2(A, B) − π/2`` and α, β by atan2 — accurate for every rotation.

    Gimbal lock (limitation): at ψ = +π/2 only θ − φ is defined, at ψ = −π/2 only θ + φ.
    When B (resp. A) is below 1e-14 the result puts all of that rotation into θ and returns
    φ = 0; finite, reproducing the rotation to ~1e-14 rad. Near the lock φ and θ individually
    are ill-conditioned (error ~1e-16/cos ψ) though the rotation stays accurate.
    """
    w, x, y, z = np.moveaxis(quat_normalize(_array(q, 4, "quat_to_bryant_xyz q")), -1, 0)
    big_a, big_b = np.hypot(w + y, z - x), np.hypot(w - y, z + x)
    psi = 2.0 * np.arctan2(big_a, big_b) - 0.5 * np.pi
    alpha, beta = np.arctan2(z + x, w - y), np.arctan2(z - x, w + y)
    lock_up, lock_down = big_b < _GIMBAL_TOL, big_a < _GIMBAL_TOL
    theta = np.where(lock_up, 2.0 * beta, np.where(lock_down, 2.0 * alpha, alpha + beta))
    phi = np.where(lock_up | lock_down, 0.0, alpha - beta)
    return np.stack((_wrap(phi), psi, _wrap(theta)), axis=-1)


def quat_slerp(q0: np.ndarray, q1: np.ndarray, t: np.ndarray) -> np.ndarray:
    """Spherical linear interpolation from q0 (t = 0) to q1 (t = 1) along the shortest path.

    q0, q1 (..., 4) unit quaternions (normalised here), t (...) any real (outside [0, 1]
    extrapolates); all broadcast → (..., 4). q1 is negated when ``q0·q1 < 0`` so the rotation
    angle travelled is ≤ π (for rotations exactly a half-turn apart, ``q0·q1 = 0``, both ways
    are equally short and the one towards q1 as given is taken). With α the angle between the
    4-vectors, ``q = [sin((1−t)α) q0 + sin(tα) q1] / sin α`` is evaluated as
    ``(1−t) sinc((1−t)α)/sinc α · q0 + t sinc(tα)/sinc α · q1``, which is well conditioned down
    to α = 0 (there it is the linear blend), so nearly identical quaternions need no branch.
    α = 2 atan2(|q0 − q1|, |q0 + q1|) is accurate for tiny angles where ``acos(q0·q1)`` is not.
    The rotation angle grows as t·(angle from q0 to q1): constant angular speed.
    """
    q0 = quat_normalize(_array(q0, 4, "quat_slerp q0"))
    q1 = quat_normalize(_array(q1, 4, "quat_slerp q1"))
    t = np.asarray(t, dtype=np.float64)
    if not np.all(np.isfinite(t)):
        raise ValueError("quat_slerp: t contains NaN or Inf; pass finite values")
    q1 = np.where(np.einsum("...i,...i->...", q0, q1)[..., None] < 0.0, -q1, q1)
    alpha = 2.0 * np.arctan2(_norm(q0 - q1), _norm(q0 + q1))  # ∈ [0, π/2]
    t = t[..., None]
    alpha = alpha[..., None]
    sinc_a = np.sinc(alpha / np.pi)  # np.sinc(x) = sin(πx)/(πx), exact 1 at 0
    k0 = (1.0 - t) * np.sinc((1.0 - t) * alpha / np.pi) / sinc_a
    k1 = t * np.sinc(t * alpha / np.pi) / sinc_a
    q = k0 * q0 + k1 * q1
    return q / _norm(q)[..., None]


def quat_cayley(half_angle_vector: np.ndarray) -> np.ndarray:
    """Cayley map: the unit quaternion ``normalize(1, a)`` for ``a = (h/2)·ω``; (..., 3) → (..., 4).

    docs/physics.md#free-rotation step 3: ``q' = q ⊗ cay((h/2) ω_b)``. It equals the exact
    exponential up to
    an under-rotation of about θ³/12 per step, and is exactly unit length.
    """
    a = _array(half_angle_vector, 3, "quat_cayley half_angle_vector", finite=False)
    q = np.concatenate((np.ones(a.shape[:-1] + (1,)), a), axis=-1)
    return q / np.sqrt(1.0 + np.einsum("...i,...i->...", a, a))[..., None]
