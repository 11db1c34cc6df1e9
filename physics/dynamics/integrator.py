"""Free motion of N bodies over one fixed step: the rotation step of docs/physics.md#free-rotation
and helpers.

Rotation: implicit midpoint on the body-frame angular momentum plus the Cayley quaternion update.
It conserves |L_b| and the kinetic energy ½ L_b·ω_b exactly (dot the update with L_m, then with
ω_m) and keeps the world L constant, so a torque-free body shows the Dzhanibekov flip with no
energy drift. The explicit ``ω += I⁻¹τ dt`` has no gyroscopic term and cannot flip: not used.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from physics.geometry.rotation import quat_conj, quat_rotate
from physics.settings import NEWTON_MAX_ITERATIONS, NEWTON_TOLERANCE


@njit(cache=True, inline='always')
def _solve3(a00, a01, a02, a10, a11, a12, a20, a21, a22, b0, b1, b2):
    """a⁻¹ b for one 3×3 matrix a and vector b given by their entries, as three floats
    (Cramer's rule; a is well conditioned near E)."""
    c0 = a11 * a22 - a12 * a21
    c1 = a12 * a20 - a10 * a22
    c2 = a10 * a21 - a11 * a20
    inv_det = 1.0 / (a00 * c0 + a01 * c1 + a02 * c2)
    return ((b0 * c0 + a01 * (b2 * a12 - b1 * a22) + a02 * (b1 * a21 - b2 * a11)) * inv_det,
            (a00 * (b1 * a22 - b2 * a12) + b0 * c1 + a02 * (b2 * a10 - b1 * a20)) * inv_det,
            (a00 * (b2 * a11 - b1 * a21) + a01 * (b1 * a20 - b2 * a10) + b0 * c2) * inv_det)


@njit(cache=True, inline='always')
def to_body_frame(quat, vec, i):
    """Rᵀ v for row i of quat (n, 4) and vec (n, 3), as three floats."""
    return vector_to_body_frame(quat, i, vec[i, 0], vec[i, 1], vec[i, 2])


@njit(cache=True, inline='always')
def vector_to_world_frame(quat, i, bx, by, bz):
    """R v for row i of quat (n, 4) and the body-frame vector v = (bx, by, bz), as three
    floats (``rotate``)."""
    return rotate(quat[i, 0], quat[i, 1], quat[i, 2], quat[i, 3], bx, by, bz)


@njit(cache=True, inline='always')
def vector_to_body_frame(quat, i, lx, ly, lz):
    """Rᵀ v for row i of quat (n, 4) and the vector v = (lx, ly, lz), as three floats
    (``rotate_back``)."""
    return rotate_back(quat[i, 0], quat[i, 1], quat[i, 2], quat[i, 3], lx, ly, lz)


@njit(cache=True, inline='always')
def rotate(w, x, y, z, bx, by, bz):
    """R v for the unit quaternion (w, x, y, z) and v = (bx, by, bz), as three floats: the
    rotation by q = (w, u), v + w t + u × t with t = 2 u × v. Floats in, floats out: a helper
    taking arrays costs a reference count for each at every call (docs/architecture.md#records)."""
    tx = 2.0 * (y * bz - z * by)
    ty = 2.0 * (z * bx - x * bz)
    tz = 2.0 * (x * by - y * bx)
    return (bx + w * tx + (y * tz - z * ty), by + w * ty + (z * tx - x * tz),
            bz + w * tz + (x * ty - y * tx))


@njit(cache=True, inline='always')
def rotate_back(w, x, y, z, lx, ly, lz):
    """Rᵀ v for the unit quaternion (w, x, y, z) and v = (lx, ly, lz), as three floats: the
    rotation by the conjugate q* = (w, −u), v + w t − u × t with t = −2 u × v."""
    tx = 2.0 * (-y * lz + z * ly)
    ty = 2.0 * (-z * lx + x * lz)
    tz = 2.0 * (-x * ly + y * lx)
    return (lx + w * tx + (-y * tz + z * ty), ly + w * ty + (-z * tx + x * tz),
            lz + w * tz + (-x * ty + y * tx))


@njit(cache=True, nogil=True)
def _rotate_free_kernel(quat, ang_mom, inv_inertia, h, out):
    """Loop body of ``rotate_free`` (one compiled pass over all bodies; see its docstring), on
    floats: no scratch array, no helper taking arrays (docs/architecture.md#records)."""
    for i in range(quat.shape[0]):
        w, x, y, z = quat[i, 0], quat[i, 1], quat[i, 2], quat[i, 3]
        inv0, inv1, inv2 = inv_inertia[i, 0], inv_inertia[i, 1], inv_inertia[i, 2]
        lb0, lb1, lb2 = rotate_back(w, x, y, z, ang_mom[i, 0], ang_mom[i, 1], ang_mom[i, 2])
        scale = np.sqrt(lb0 ** 2 + lb1 ** 2 + lb2 ** 2) + 1e-300
        new0, new1, new2 = lb0, lb1, lb2
        for _ in range(NEWTON_MAX_ITERATIONS):
            mid0, mid1, mid2 = 0.5 * (lb0 + new0), 0.5 * (lb1 + new1), 0.5 * (lb2 + new2)
            om0, om1, om2 = inv0 * mid0, inv1 * mid1, inv2 * mid2
            res0 = new0 - lb0 + h * (om1 * mid2 - om2 * mid1)
            res1 = new1 - lb1 + h * (om2 * mid0 - om0 * mid2)
            res2 = new2 - lb2 + h * (om0 * mid1 - om1 * mid0)
            # Jacobian E + (h/2)([ω_m]× − [L_m]× I⁻¹)  (docs/physics.md#free-rotation)
            g = 0.5 * h
            d0, d1, d2 = _solve3(1.0, g * (-om2 + mid2 * inv1), g * (om1 - mid1 * inv2),
                                 g * (om2 - mid2 * inv0), 1.0, g * (-om0 + mid0 * inv2),
                                 g * (-om1 + mid1 * inv0), g * (om0 - mid0 * inv1), 1.0,
                                 res0, res1, res2)
            new0, new1, new2 = new0 - d0, new1 - d1, new2 - d2
            if np.sqrt(d0 ** 2 + d1 ** 2 + d2 ** 2) <= NEWTON_TOLERANCE * scale:
                break
        # q' = q ⊗ cay((h/2) ω_m), with ω_m from the converged midpoint
        ax = 0.5 * h * inv0 * 0.5 * (lb0 + new0)
        ay = 0.5 * h * inv1 * 0.5 * (lb1 + new1)
        az = 0.5 * h * inv2 * 0.5 * (lb2 + new2)
        nw = w - x * ax - y * ay - z * az
        nx = x + w * ax + y * az - z * ay
        ny = y + w * ay - x * az + z * ax
        nz = z + w * az + x * ay - y * ax
        norm = np.sqrt(nw * nw + nx * nx + ny * ny + nz * nz)
        out[i, 0] = nw / norm
        out[i, 1] = nx / norm
        out[i, 2] = ny / norm
        out[i, 3] = nz / norm


def rotate_free(
    quat: np.ndarray, ang_mom: np.ndarray, inv_inertia: np.ndarray, h: float
) -> np.ndarray:
    """One torque-free rotation step; returns the new orientations (n, 4).

    quat (n, 4) principal → world; ang_mom (n, 3) world L, kg·m²/s (unchanged by a torque-free
    step); inv_inertia (n, 3) 1/(kg·m²); h s. Implements docs/physics.md#free-rotation steps 1–3:
    ``L_b = Rᵀ L``;
    solve ``L_b' = L_b − h·ω_m × L_m`` with ``L_m = (L_b + L_b')/2``, ``ω_m = I⁻¹ L_m`` by Newton
    (Jacobian ``E + (h/2)([ω_m]× − [L_m]× I⁻¹)``, starting from L_b' = L_b, within h|ω| of the
    root); ``q' = q ⊗ cay((h/2) ω_m)``. Compiled: a numpy version spends ~0.5 ms per step in
    call overhead even for one body.
    """
    out = np.empty((len(quat), 4))
    _rotate_free_kernel(
        np.ascontiguousarray(quat, dtype=float), np.ascontiguousarray(ang_mom, dtype=float),
        np.ascontiguousarray(inv_inertia, dtype=float), float(h), out,
    )
    return out


def rotation_response(quat, quat_end, ang_mom, inv_inertia, h) -> np.ndarray:
    """(n, 3, 3) world matrices W: how the end orientation of ``rotate_free`` from quat (n, 4)
    with the world angular momentum ang_mom (n, 3) turns when ang_mom changes, δθ ≈ h W δL
    (δθ a small world rotation vector, rad); quat_end (n, 4) is that step's result, inv_inertia
    (n, 3) the principal inverse moments. For a slow body W is R I⁻¹ Rᵀ; for a spinning one the
    midpoint rule's gyroscopic term turns the response aside (docs/physics.md#joint-projection).
    """
    out = np.empty((len(quat), 3, 3))
    _response_kernel(np.ascontiguousarray(quat), np.ascontiguousarray(quat_end),
                     np.ascontiguousarray(ang_mom), np.ascontiguousarray(inv_inertia), float(h),
                     out)
    return out


@njit(cache=True, nogil=True)
def _response_kernel(quat, quat_end, ang_mom, inv_inertia, h, out):
    """out (n, 3, 3) ← W of each body (see ``rotation_response``). The step's midpoint L_m is
    (Rᵀ L + R'ᵀ L) / 2, since the free step keeps the world L; differentiating its defining
    equation gives δω_m = I⁻¹ A⁻¹ Rᵀ δL with A = E + (h/2)([ω_m]× − [L_m]× I⁻¹), the Newton
    Jacobian of ``rotate_free``, and the Cayley update q ⊗ cay(u), u = (h/2) ω_m, turns by
    δθ_b = 2 (E + [u]×) δu / (1 + |u|²) in the start frame. One scratch for all bodies, and
    the loop passes no array to a helper: numba puts every small array on the heap and counts
    a reference to each array a helper takes, which cost more than the arithmetic (the joints'
    Newton steps ask for every body's; docs/architecture.md#records)."""
    work = np.empty((5, 3, 3))
    jac, adj, cay, body, rot = work[0], work[1], work[2], work[3], work[4]
    g = 0.5 * h
    for i in range(quat.shape[0]):
        inv = (inv_inertia[i, 0], inv_inertia[i, 1], inv_inertia[i, 2])
        w, x, y, z = quat[i, 0], quat[i, 1], quat[i, 2], quat[i, 3]
        a0, a1, a2 = rotate_back(w, x, y, z, ang_mom[i, 0], ang_mom[i, 1], ang_mom[i, 2])
        b0, b1, b2 = rotate_back(quat_end[i, 0], quat_end[i, 1], quat_end[i, 2],
                                 quat_end[i, 3], ang_mom[i, 0], ang_mom[i, 1], ang_mom[i, 2])
        m0, m1, m2 = 0.5 * (a0 + b0), 0.5 * (a1 + b1), 0.5 * (a2 + b2)
        o0, o1, o2 = inv[0] * m0, inv[1] * m1, inv[2] * m2
        jac[0, 0] = 1.0
        jac[0, 1] = g * (-o2 + m2 * inv[1])
        jac[0, 2] = g * (o1 - m1 * inv[2])
        jac[1, 0] = g * (o2 - m2 * inv[0])
        jac[1, 1] = 1.0
        jac[1, 2] = g * (-o0 + m0 * inv[2])
        jac[2, 0] = g * (-o1 + m1 * inv[0])
        jac[2, 1] = g * (o0 - m0 * inv[1])
        jac[2, 2] = 1.0
        # A⁻¹ by its adjugate (A is near E for slow bodies, well conditioned for any spin)
        for r in range(3):
            for c in range(3):
                r1, r2, c1, c2 = (c + 1) % 3, (c + 2) % 3, (r + 1) % 3, (r + 2) % 3
                adj[r, c] = jac[r1, c1] * jac[r2, c2] - jac[r1, c2] * jac[r2, c1]
        det = jac[0, 0] * adj[0, 0] + jac[0, 1] * adj[1, 0] + jac[0, 2] * adj[2, 0]
        u0, u1, u2 = g * o0, g * o1, g * o2
        turn = 1.0 / (1.0 + u0 * u0 + u1 * u1 + u2 * u2)
        # cay: (E + [u]×) / (1 + |u|²)
        cay[0, 0], cay[0, 1], cay[0, 2] = turn, -u2 * turn, u1 * turn
        cay[1, 0], cay[1, 1], cay[1, 2] = u2 * turn, turn, -u0 * turn
        cay[2, 0], cay[2, 1], cay[2, 2] = -u1 * turn, u0 * turn, turn
        # body: (E + [u]×)/(1 + |u|²) I⁻¹ A⁻¹
        for r in range(3):
            for c in range(3):
                body[r, c] = (cay[r, 0] * inv[0] * adj[0, c] + cay[r, 1] * inv[1] * adj[1, c]
                              + cay[r, 2] * inv[2] * adj[2, c]) / det
        # rot: R of the start, column k = R e_k
        for k in range(3):
            rot[0, k], rot[1, k], rot[2, k] = rotate(
                w, x, y, z, 1.0 if k == 0 else 0.0, 1.0 if k == 1 else 0.0,
                1.0 if k == 2 else 0.0)
        for r in range(3):
            for c in range(3):
                total = 0.0
                for p in range(3):
                    for q in range(3):
                        total += rot[r, p] * body[p, q] * rot[c, q]
                out[i, r, c] = total


def body_angular_velocity(
    quat: np.ndarray, ang_mom: np.ndarray, inv_inertia: np.ndarray
) -> np.ndarray:
    """ω in the principal frame, ``ω_b = I⁻¹ Rᵀ L``; (n, 3) rad/s."""
    return inv_inertia * quat_rotate(quat_conj(quat), ang_mom)


def angular_momentum(quat: np.ndarray, omega: np.ndarray, inv_inertia: np.ndarray) -> np.ndarray:
    """World angular momentum ``L = R I Rᵀ ω`` (n, 3) kg·m²/s of bodies turning at the world
    ω (n, 3) rad/s: the inverse of ``world_omega``, for states given by their velocities."""
    return quat_rotate(quat, quat_rotate(quat_conj(quat), omega) / inv_inertia)


def drift(pos, vel_start, vel_end, accel, touched, impact_fraction, h):
    """New centres of mass (n, 3) m after one step of length h s.

    vel_start (n, 3) velocity at the step's start; vel_end (n, 3) after forces and contact
    impulses; accel (n, 3) the step's constant acceleration (gravity + force/m);
    touched (n,) bool: a contact impulse acted; impact_fraction (n,) in [0, 1]: when a bounce
    happened (1 where none). Three cases, each exact for what it models:
    - free flight: ``x + h(v₀ + v₁)/2``, the exact parabola under a constant force, so the
      mechanical energy of a thrown body is conserved to rounding (semi-implicit Euler would lose
      ½mg²h² every step);
    - resting or sliding contact: ``x + h v₁`` (semi-implicit Euler): the solver made v₁ honour
      the gap, so a body on the floor neither sinks nor creeps up;
    - a bounce at time τh: free flight until the impact, then free flight from the rebound
      velocity — ``x + τh v₀ + ½a(τh)² + (1−τ)h v₁ − ½a((1−τ)h)²`` — so bounce heights do not
      depend on where in a step the impact fell.
    """
    new = np.empty_like(pos)
    _drift_kernel(pos, vel_start, vel_end, accel, touched, impact_fraction, float(h), new)
    return new


@njit(cache=True, nogil=True)
def _drift_kernel(pos, vel_start, vel_end, accel, touched, impact_fraction, h, new):
    """Loop body of ``drift`` (the three cases of its docstring), compiled."""
    for i in range(pos.shape[0]):
        tau = impact_fraction[i] * h
        rest = h - tau
        for a in range(3):
            if not touched[i]:
                new[i, a] = pos[i, a] + 0.5 * h * (vel_start[i, a] + vel_end[i, a])
            elif impact_fraction[i] < 1.0:
                new[i, a] = (pos[i, a] + tau * vel_start[i, a] + 0.5 * accel[i, a] * tau**2
                             + rest * vel_end[i, a] - 0.5 * accel[i, a] * rest**2)
            else:
                new[i, a] = pos[i, a] + h * vel_end[i, a]


def world_inverse_inertia(rotm, inv_inertia) -> np.ndarray:
    """(n, 3, 3) world inverse inertia ``R I⁻¹ Rᵀ`` (docs/physics.md#sequential-impulses: needed
    for impulses, never
    integrated) of rotations rotm (n, 3, 3) and principal inverse moments inv_inertia (n, 3)."""
    out = np.empty_like(rotm)
    _inverse_inertia_kernel(np.ascontiguousarray(rotm), np.ascontiguousarray(inv_inertia), out)
    return out


@njit(cache=True, nogil=True)
def _inverse_inertia_kernel(rotm, inv_inertia, out):
    for n in range(rotm.shape[0]):
        for i in range(3):
            for j in range(3):
                out[n, i, j] = (rotm[n, i, 0] * inv_inertia[n, 0] * rotm[n, j, 0]
                                + rotm[n, i, 1] * inv_inertia[n, 1] * rotm[n, j, 1]
                                + rotm[n, i, 2] * inv_inertia[n, 2] * rotm[n, j, 2])


def world_omega(rotm, inv_inertia, ang_mom) -> np.ndarray:
    """(n, 3) world ω = R I⁻¹ Rᵀ L, rad/s, for rotations rotm (n, 3, 3), principal inverse
    moments inv_inertia (n, 3) and world angular momenta ang_mom (n, 3); one compiled pass."""
    out = np.empty_like(ang_mom)
    _world_omega_kernel(np.ascontiguousarray(rotm), np.ascontiguousarray(inv_inertia),
                        np.ascontiguousarray(ang_mom), out)
    return out


@njit(cache=True, nogil=True)
def _world_omega_kernel(rotm, inv_inertia, ang_mom, out):
    for n in range(rotm.shape[0]):
        # ω_b = I⁻¹ Rᵀ L, then ω = R ω_b
        b0 = inv_inertia[n, 0] * (rotm[n, 0, 0] * ang_mom[n, 0] + rotm[n, 1, 0] * ang_mom[n, 1]
                                  + rotm[n, 2, 0] * ang_mom[n, 2])
        b1 = inv_inertia[n, 1] * (rotm[n, 0, 1] * ang_mom[n, 0] + rotm[n, 1, 1] * ang_mom[n, 1]
                                  + rotm[n, 2, 1] * ang_mom[n, 2])
        b2 = inv_inertia[n, 2] * (rotm[n, 0, 2] * ang_mom[n, 0] + rotm[n, 1, 2] * ang_mom[n, 1]
                                  + rotm[n, 2, 2] * ang_mom[n, 2])
        for i in range(3):
            out[n, i] = rotm[n, i, 0] * b0 + rotm[n, i, 1] * b1 + rotm[n, i, 2] * b2
