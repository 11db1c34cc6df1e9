"""Contact impulses: sequential impulses with restitution, friction and speculative gaps
(physics.md §3; the scheme of Box2D v3's contact solver, with the restitution target taken at the
time of impact inside the step).

Per step, for every contact point with offset r from the centre of mass and normal n:
- normal: the accumulated impulse λ_n ≥ 0 makes the normal velocity v_n = (v + ω × r)·n at least
  −s/h while the gap s > 0 (speculative: the point may close the gap but not cross it) and at
  least 0 once touching. A penetration is never pushed out by a velocity bias, which would inject
  energy; positions are projected instead (world.py).
- friction: the tangential impulse is clamped to the Coulomb cone |λ_t| ≤ μ λ_n.
- restitution: a contact whose impact speed exceeds a threshold is then driven to
  v_n = −e·v_impact (+ what gravity adds after the impact), with λ_n still clamped ≥ 0.
  The impact speed and time come from the gap and the constant acceleration over the step
  (s + v₀t + ½at² = 0), not from the end-of-step velocity, which would overstate it by up to g·h.
- warm start: the previous step's accumulated impulses are applied first.
Impulses change the world angular momentum directly: L += r × P (physics.md §3).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numba import njit

from .contacts import Contacts


@dataclass
class ContactResult:
    """impulses (k, 3) accumulated normal/tangent impulses, N·s; bounced (k,) bool: restitution
    applied; impact_fraction (k,) in [0, 1]: when in the step the point reached the wall."""

    impulses: np.ndarray
    bounced: np.ndarray
    impact_fraction: np.ndarray


@njit(cache=True)
def _apply(b, rx, ry, rz, px, py, pz, vel, ang_mom, omega, inv_mass, inv_iw):
    """Apply impulse P at offset r to body b: v += P/m, L += r × P, ω += I_w⁻¹ (r × P)."""
    vel[b, 0] += inv_mass[b] * px
    vel[b, 1] += inv_mass[b] * py
    vel[b, 2] += inv_mass[b] * pz
    lx = ry * pz - rz * py
    ly = rz * px - rx * pz
    lz = rx * py - ry * px
    ang_mom[b, 0] += lx
    ang_mom[b, 1] += ly
    ang_mom[b, 2] += lz
    for a in range(3):
        omega[b, a] += inv_iw[b, a, 0] * lx + inv_iw[b, a, 1] * ly + inv_iw[b, a, 2] * lz


@njit(cache=True)
def _point_velocity(b, r, c, vel, omega, d):
    """(v + ω × r)·d for contact c of body b."""
    rx, ry, rz = r[c, 0], r[c, 1], r[c, 2]
    return ((vel[b, 0] + omega[b, 1] * rz - omega[b, 2] * ry) * d[c, 0]
            + (vel[b, 1] + omega[b, 2] * rx - omega[b, 0] * rz) * d[c, 1]
            + (vel[b, 2] + omega[b, 0] * ry - omega[b, 1] * rx) * d[c, 2])


@njit(cache=True)
def _solve_kernel(body, r, n, t1, t2, sep, mass_n, mass_t1, mass_t2, mu, bounce, target,
                  impulses, vel, ang_mom, omega, inv_mass, inv_iw, h, iterations):
    k = body.shape[0]
    for c in range(k):  # warm start
        b = body[c]
        ln, l1, l2 = impulses[c, 0], impulses[c, 1], impulses[c, 2]
        _apply(b, r[c, 0], r[c, 1], r[c, 2],
               ln * n[c, 0] + l1 * t1[c, 0] + l2 * t2[c, 0],
               ln * n[c, 1] + l1 * t1[c, 1] + l2 * t2[c, 1],
               ln * n[c, 2] + l1 * t1[c, 2] + l2 * t2[c, 2],
               vel, ang_mom, omega, inv_mass, inv_iw)
    for _ in range(iterations):
        for c in range(k):
            b = body[c]
            vn = _point_velocity(b, r, c, vel, omega, n)
            old = impulses[c, 0]
            new = max(old - mass_n[c] * (vn + max(sep[c], 0.0) / h), 0.0)
            impulses[c, 0] = new
            dl = new - old
            _apply(b, r[c, 0], r[c, 1], r[c, 2], dl * n[c, 0], dl * n[c, 1], dl * n[c, 2],
                   vel, ang_mom, omega, inv_mass, inv_iw)
            # Coulomb cone on the two tangent impulses together
            o1, o2 = impulses[c, 1], impulses[c, 2]
            l1 = o1 - mass_t1[c] * _point_velocity(b, r, c, vel, omega, t1)
            l2 = o2 - mass_t2[c] * _point_velocity(b, r, c, vel, omega, t2)
            limit = mu[c] * new
            norm = np.sqrt(l1 * l1 + l2 * l2)
            if norm > limit:
                scale = limit / norm
                l1 *= scale
                l2 *= scale
            impulses[c, 1] = l1
            impulses[c, 2] = l2
            d1, d2 = l1 - o1, l2 - o2
            _apply(b, r[c, 0], r[c, 1], r[c, 2],
                   d1 * t1[c, 0] + d2 * t2[c, 0], d1 * t1[c, 1] + d2 * t2[c, 1],
                   d1 * t1[c, 2] + d2 * t2[c, 2], vel, ang_mom, omega, inv_mass, inv_iw)
    # Restitution pass (Box2D: only contacts that carry load and hit faster than the threshold).
    for c in range(k):
        if bounce[c] and impulses[c, 0] <= 0.0:
            bounce[c] = False
    for _ in range(iterations):
        for c in range(k):
            if not bounce[c]:
                continue
            b = body[c]
            vn = _point_velocity(b, r, c, vel, omega, n)
            old = impulses[c, 0]
            new = max(old - mass_n[c] * (vn - target[c]), 0.0)
            impulses[c, 0] = new
            dl = new - old
            _apply(b, r[c, 0], r[c, 1], r[c, 2], dl * n[c, 0], dl * n[c, 1], dl * n[c, 2],
                   vel, ang_mom, omega, inv_mass, inv_iw)


def _effective_mass(r, d, inv_mass_rows, inv_iw_rows):
    """1 / (1/m + d·((I_w⁻¹ (r × d)) × r)): the impulse per unit velocity change along d (seed 001)."""
    rd = np.cross(r, d)
    return 1.0 / (inv_mass_rows + np.einsum("ki,kij,kj->k", rd, inv_iw_rows, rd))


def impact_times(sep, vn_start, accel_n, h):
    """When in the step each contact point reaches its wall, and how fast.

    sep (k,) gap m; vn_start (k,) normal velocity at the step's start m/s; accel_n (k,) normal
    acceleration m/s². Solves ``s + v₀ t + ½ a t² = 0`` for its first root t ≥ 0 in the stable
    form ``t = 2s / (−v₀ + √(v₀² − 2as))``; touching points (s ≤ 0) hit at t = 0.
    Returns (fraction t/h (k,) — inf where the wall is not reached this step, impact normal
    velocity (k,) m/s).
    """
    disc = vn_start**2 - 2.0 * accel_n * np.maximum(sep, 0.0)
    root = np.sqrt(np.maximum(disc, 0.0))
    denom = root - vn_start
    with np.errstate(divide="ignore", invalid="ignore"):
        t = np.where((disc >= 0.0) & (denom > 0.0), 2.0 * np.maximum(sep, 0.0) / denom, np.inf)
    t = np.where(sep <= 0.0, 0.0, t)
    v_impact = np.where(sep <= 0.0, vn_start, -root)
    return t / h, v_impact


def solve_contacts(contacts: Contacts, pos, vel, ang_mom, omega, inv_mass, inv_inertia_world, accel,
                   restitution, friction, warm, h, iterations, threshold) -> ContactResult:
    """Solve one step's contacts; updates vel, ang_mom and omega (n, 3) in place.

    pos (n, 3) m; vel (n, 3) m/s and ang_mom (n, 3) world kg·m²/s after this step's forces;
    omega (n, 3) rad/s the matching world ω; inv_mass (n,); inv_inertia_world (n, 3, 3);
    accel (n, 3) m/s² the constant acceleration of the step (gravity + force/m);
    restitution, friction (k,) per contact; warm (k, 3) warm-start impulses; h s;
    iterations sweeps; threshold m/s minimum impact speed for restitution.
    """
    body, n = contacts.body, contacts.normal
    r = contacts.point - pos[body]
    rows_m, rows_i = inv_mass[body], inv_inertia_world[body]
    vn_now = np.einsum("ki,ki->k", vel[body] + np.cross(omega[body], r), n)
    accel_n = np.einsum("ki,ki->k", accel[body], n)
    fraction, v_impact = impact_times(contacts.separation, vn_now - accel_n * h, accel_n, h)
    bounce = (fraction <= 1.0) & (v_impact < -threshold) & (restitution > 0.0)
    tau = np.minimum(fraction, 1.0)
    # after the impact the point leaves at −e·v_impact and gravity acts for the rest of the step
    target = -restitution * v_impact + accel_n * (1.0 - tau) * h
    impulses = np.array(warm, dtype=float)
    _solve_kernel(
        body, r, n, contacts.tangent1, contacts.tangent2, contacts.separation,
        _effective_mass(r, n, rows_m, rows_i),
        _effective_mass(r, contacts.tangent1, rows_m, rows_i),
        _effective_mass(r, contacts.tangent2, rows_m, rows_i),
        np.ascontiguousarray(friction, dtype=float), bounce, target, impulses,
        vel, ang_mom, omega, inv_mass, inv_inertia_world, float(h), int(iterations),
    )
    return ContactResult(impulses, bounce, np.where(bounce, tau, 1.0))
