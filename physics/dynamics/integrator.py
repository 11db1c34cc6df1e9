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


@njit(cache=True)
def _solve3(a, b, x):
    """x ← a⁻¹ b for one 3×3 matrix (Cramer's rule; a is well conditioned near E)."""
    c0 = a[1, 1] * a[2, 2] - a[1, 2] * a[2, 1]
    c1 = a[1, 2] * a[2, 0] - a[1, 0] * a[2, 2]
    c2 = a[1, 0] * a[2, 1] - a[1, 1] * a[2, 0]
    inv_det = 1.0 / (a[0, 0] * c0 + a[0, 1] * c1 + a[0, 2] * c2)
    x[0] = (b[0] * c0 + a[0, 1] * (b[2] * a[1, 2] - b[1] * a[2, 2])
            + a[0, 2] * (b[1] * a[2, 1] - b[2] * a[1, 1])) * inv_det
    x[1] = (a[0, 0] * (b[1] * a[2, 2] - b[2] * a[1, 2]) + b[0] * c1
            + a[0, 2] * (b[2] * a[1, 0] - b[1] * a[2, 0])) * inv_det
    x[2] = (a[0, 0] * (b[2] * a[1, 1] - b[1] * a[2, 1])
            + a[0, 1] * (b[1] * a[2, 0] - b[2] * a[1, 0]) + b[0] * c2) * inv_det


@njit(cache=True, inline='always')
def to_body_frame(quat, vec, i):
    """Rᵀ v for row i of quat (n, 4) and vec (n, 3), as three floats."""
    return vector_to_body_frame(quat, i, vec[i, 0], vec[i, 1], vec[i, 2])


@njit(cache=True, inline='always')
def vector_to_world_frame(quat, i, bx, by, bz):
    """R v for row i of quat (n, 4) and the body-frame vector v = (bx, by, bz), as three
    floats: the rotation by q = (w, u), v + w t + u × t with t = 2 u × v."""
    w, x, y, z = quat[i, 0], quat[i, 1], quat[i, 2], quat[i, 3]
    tx = 2.0 * (y * bz - z * by)
    ty = 2.0 * (z * bx - x * bz)
    tz = 2.0 * (x * by - y * bx)
    return (bx + w * tx + (y * tz - z * ty), by + w * ty + (z * tx - x * tz),
            bz + w * tz + (x * ty - y * tx))


@njit(cache=True, inline='always')
def vector_to_body_frame(quat, i, lx, ly, lz):
    """Rᵀ v for row i of quat (n, 4) and the vector v = (lx, ly, lz), as three floats: the
    rotation by the conjugate q* = (w, −u), v + w t − u × t with t = −2 u × v."""
    w, x, y, z = quat[i, 0], quat[i, 1], quat[i, 2], quat[i, 3]
    tx = 2.0 * (-y * lz + z * ly)
    ty = 2.0 * (-z * lx + x * lz)
    tz = 2.0 * (-x * ly + y * lx)
    return (lx + w * tx + (-y * tz + z * ty), ly + w * ty + (-z * tx + x * tz),
            lz + w * tz + (-x * ty + y * tx))


@njit(cache=True, nogil=True)
def _rotate_free_kernel(quat, ang_mom, inv_inertia, h, out):
    """Loop body of ``rotate_free`` (one compiled pass over all bodies; see its docstring)."""
    jac = np.empty((3, 3))
    lb = np.empty(3)
    new = np.empty(3)
    mid = np.empty(3)
    om = np.empty(3)
    res = np.empty(3)
    d = np.empty(3)
    for i in range(quat.shape[0]):
        w, x, y, z = quat[i, 0], quat[i, 1], quat[i, 2], quat[i, 3]
        inv = inv_inertia[i]
        lb[0], lb[1], lb[2] = to_body_frame(quat, ang_mom, i)
        scale = np.sqrt(lb[0] ** 2 + lb[1] ** 2 + lb[2] ** 2) + 1e-300
        new[:] = lb
        for _ in range(NEWTON_MAX_ITERATIONS):
            for k in range(3):
                mid[k] = 0.5 * (lb[k] + new[k])
                om[k] = inv[k] * mid[k]
            res[0] = new[0] - lb[0] + h * (om[1] * mid[2] - om[2] * mid[1])
            res[1] = new[1] - lb[1] + h * (om[2] * mid[0] - om[0] * mid[2])
            res[2] = new[2] - lb[2] + h * (om[0] * mid[1] - om[1] * mid[0])
            # Jacobian E + (h/2)([ω_m]× − [L_m]× I⁻¹)  (docs/physics.md#free-rotation)
            g = 0.5 * h
            jac[0, 0] = 1.0
            jac[0, 1] = g * (-om[2] + mid[2] * inv[1])
            jac[0, 2] = g * (om[1] - mid[1] * inv[2])
            jac[1, 0] = g * (om[2] - mid[2] * inv[0])
            jac[1, 1] = 1.0
            jac[1, 2] = g * (-om[0] + mid[0] * inv[2])
            jac[2, 0] = g * (-om[1] + mid[1] * inv[0])
            jac[2, 1] = g * (om[0] - mid[0] * inv[1])
            jac[2, 2] = 1.0
            _solve3(jac, res, d)
            new -= d
            if np.sqrt(d[0] ** 2 + d[1] ** 2 + d[2] ** 2) <= NEWTON_TOLERANCE * scale:
                break
        # q' = q ⊗ cay((h/2) ω_m), with ω_m from the converged midpoint
        ax = 0.5 * h * inv[0] * 0.5 * (lb[0] + new[0])
        ay = 0.5 * h * inv[1] * 0.5 * (lb[1] + new[1])
        az = 0.5 * h * inv[2] * 0.5 * (lb[2] + new[2])
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
    # one scratch for all bodies: numba puts every small array on the heap, and five of them
    # per body cost more than the arithmetic (the joints' Newton steps ask for every body's)
    work = np.empty((5, 3, 3))
    for i in range(quat.shape[0]):
        body_response(quat, quat_end, ang_mom, inv_inertia, h, i, out[i], work)


@njit(cache=True, nogil=True)
def body_response(quat, quat_end, ang_mom, inv_inertia, h, i, out, work):
    """out (3, 3) ← W of body row i (see ``rotation_response``; work (5, 3, 3) scratch). The
    step's midpoint L_m is (Rᵀ L + R'ᵀ L) / 2, since the free step keeps the world L;
    differentiating its defining equation gives δω_m = I⁻¹ A⁻¹ Rᵀ δL with
    A = E + (h/2)([ω_m]× − [L_m]× I⁻¹), the Newton Jacobian of ``rotate_free``, and the Cayley
    update q ⊗ cay(u), u = (h/2) ω_m, turns by δθ_b = 2 (E + [u]×) δu / (1 + |u|²) in the start
    frame."""
    inv = inv_inertia[i]
    a0, a1, a2 = to_body_frame(quat, ang_mom, i)
    b0, b1, b2 = to_body_frame(quat_end, ang_mom, i)
    m0, m1, m2 = 0.5 * (a0 + b0), 0.5 * (a1 + b1), 0.5 * (a2 + b2)
    o0, o1, o2 = inv[0] * m0, inv[1] * m1, inv[2] * m2
    g = 0.5 * h
    jac, adj, cay, body, rot = work[0], work[1], work[2], work[3], work[4]
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
        rot[0, k], rot[1, k], rot[2, k] = vector_to_world_frame(
            quat, i, 1.0 if k == 0 else 0.0, 1.0 if k == 1 else 0.0, 1.0 if k == 2 else 0.0)
    for r in range(3):
        for c in range(3):
            total = 0.0
            for p in range(3):
                for q in range(3):
                    total += rot[r, p] * body[p, q] * rot[c, q]
            out[r, c] = total


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
