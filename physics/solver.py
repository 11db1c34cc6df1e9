"""Contact impulses: sequential impulses with restitution, friction and speculative gaps
(physics.md §3; the scheme of Box2D v3's contact solver, with the restitution target taken at the
time of impact inside the step).

Per step, for every contact point with offset r from the centre of mass and normal n:
- normal: the accumulated impulse λ_n ≥ 0 makes the normal velocity v_n = (v + ω × r)·n at least
  −s/h while the gap s > 0 (speculative: the point may close the gap but not cross it) and at
  least 0 once touching. A penetration is never pushed out by a velocity bias, which would inject
  energy; positions are projected instead (world.py).
- friction: the tangential impulse is clamped to the Coulomb cone |λ_t| ≤ μ λ_n.
- body–body impacts (before the warm start): pairwise collisions, v_n' = −e·v_n per approaching
  contact, swept until none approaches faster than the threshold (see ``_solve_kernel``); this
  is what passes an impact along a row of touching balls (Newton's cradle), which a restitution
  target per contact cannot do.
- wall restitution: a contact whose impact speed exceeds a threshold is then driven to
  v_n = −e·v_impact (+ what gravity adds after the impact), with λ_n still clamped ≥ 0.
  The impact speed and time come from the gap and the constant acceleration over the step
  (s + v₀t + ½at² = 0), not from the end-of-step velocity, which would overstate it by up to g·h.
- warm start: the previous step's accumulated impulses are applied first.
Impulses change the world angular momentum directly: L += r × P (physics.md §3).
A contact between two bodies is a wall contact whose wall moves: the second body takes −P at its
own offset, velocities are relative and the effective mass adds both bodies' terms.
Body–body penetration left after the step is removed by ``push_apart``, a position pass.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numba import njit

from .contacts import Contacts


@dataclass
class ContactResult:
    """impulses (k, 3) accumulated normal/tangent impulses, N·s; bounced (k,) bool: restitution
    applied; impact_fraction (k,) in [0, 1]: when in the step the point reached the wall;
    collision (k,) N·s normal impulse of the body–body collision pass."""

    impulses: np.ndarray
    bounced: np.ndarray
    impact_fraction: np.ndarray
    collision: np.ndarray


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
def _relative_velocity(b, o, r, r2, c, vel, omega, d):
    """((v + ω × r) of body b − the same of body o, or 0 for a wall (o < 0))·d for contact c."""
    rx, ry, rz = r[c, 0], r[c, 1], r[c, 2]
    u = ((vel[b, 0] + omega[b, 1] * rz - omega[b, 2] * ry) * d[c, 0]
         + (vel[b, 1] + omega[b, 2] * rx - omega[b, 0] * rz) * d[c, 1]
         + (vel[b, 2] + omega[b, 0] * ry - omega[b, 1] * rx) * d[c, 2])
    if o >= 0:
        rx, ry, rz = r2[c, 0], r2[c, 1], r2[c, 2]
        u -= ((vel[o, 0] + omega[o, 1] * rz - omega[o, 2] * ry) * d[c, 0]
              + (vel[o, 1] + omega[o, 2] * rx - omega[o, 0] * rz) * d[c, 1]
              + (vel[o, 2] + omega[o, 0] * ry - omega[o, 1] * rx) * d[c, 2])
    return u


@njit(cache=True)
def _apply_pair(b, o, r, r2, c, px, py, pz, vel, ang_mom, omega, inv_mass, inv_iw):
    """Impulse P on body b at its contact point c and −P on body o (if not a wall)."""
    _apply(b, r[c, 0], r[c, 1], r[c, 2], px, py, pz, vel, ang_mom, omega, inv_mass, inv_iw)
    if o >= 0:
        _apply(o, r2[c, 0], r2[c, 1], r2[c, 2], -px, -py, -pz, vel, ang_mom, omega, inv_mass,
               inv_iw)


@njit(cache=True, nogil=True)
def _solve_kernel(body, other, r, r2, n, t1, t2, sep, mass_n, mass_t1, mass_t2, mu, bounce,
                  target, impulses, collide, restitution, threshold, collision, impact,
                  vel, ang_mom, omega, inv_mass, inv_iw, h, iterations):
    k = body.shape[0]
    # Body–body impacts first, from the velocities before any contact impulse (so a resting
    # stack's warm start cannot look like an impact), as pairwise collisions (Guendelman,
    # Bridson & Fedkiw 2003, §5): each approaching contact reverses its current normal velocity,
    # v_n' = −e·v_n, sweeping until none approaches faster than the threshold. Each such
    # impulse loses ½ m_eff v_n² (1 − e²) ≥ 0, and an impact travels along a chain of touching
    # bodies (Newton's cradle) one pair at a time.
    for _ in range(iterations):
        active = False
        for c in range(k):
            if not collide[c]:
                continue
            b, o = body[c], other[c]
            vn = _relative_velocity(b, o, r, r2, c, vel, omega, n)
            gap = max(sep[c], 0.0)
            if vn >= -threshold or gap > -vn * h:  # slow, or does not close the gap this step
                continue
            dl = -(1.0 + restitution[c]) * vn * mass_n[c]
            if collision[c] == 0.0:
                impact[c] = gap / (-vn * h)
            collision[c] += dl
            _apply_pair(b, o, r, r2, c, dl * n[c, 0], dl * n[c, 1], dl * n[c, 2],
                        vel, ang_mom, omega, inv_mass, inv_iw)
            active = True
        if not active:
            break
    for c in range(k):  # warm start
        ln, l1, l2 = impulses[c, 0], impulses[c, 1], impulses[c, 2]
        _apply_pair(body[c], other[c], r, r2, c,
                    ln * n[c, 0] + l1 * t1[c, 0] + l2 * t2[c, 0],
                    ln * n[c, 1] + l1 * t1[c, 1] + l2 * t2[c, 1],
                    ln * n[c, 2] + l1 * t1[c, 2] + l2 * t2[c, 2],
                    vel, ang_mom, omega, inv_mass, inv_iw)
    for _ in range(iterations):
        for c in range(k):
            b, o = body[c], other[c]
            vn = _relative_velocity(b, o, r, r2, c, vel, omega, n)
            old = impulses[c, 0]
            new = max(old - mass_n[c] * (vn + max(sep[c], 0.0) / h), 0.0)
            impulses[c, 0] = new
            dl = new - old
            _apply_pair(b, o, r, r2, c, dl * n[c, 0], dl * n[c, 1], dl * n[c, 2],
                        vel, ang_mom, omega, inv_mass, inv_iw)
            # Coulomb cone on the two tangent impulses together
            o1, o2 = impulses[c, 1], impulses[c, 2]
            l1 = o1 - mass_t1[c] * _relative_velocity(b, o, r, r2, c, vel, omega, t1)
            l2 = o2 - mass_t2[c] * _relative_velocity(b, o, r, r2, c, vel, omega, t2)
            limit = mu[c] * new
            norm = np.sqrt(l1 * l1 + l2 * l2)
            if norm > limit:
                scale = limit / norm
                l1 *= scale
                l2 *= scale
            impulses[c, 1] = l1
            impulses[c, 2] = l2
            d1, d2 = l1 - o1, l2 - o2
            _apply_pair(b, o, r, r2, c,
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
            b, o = body[c], other[c]
            vn = _relative_velocity(b, o, r, r2, c, vel, omega, n)
            old = impulses[c, 0]
            new = max(old - mass_n[c] * (vn - target[c]), 0.0)
            impulses[c, 0] = new
            dl = new - old
            _apply_pair(b, o, r, r2, c, dl * n[c, 0], dl * n[c, 1], dl * n[c, 2],
                        vel, ang_mom, omega, inv_mass, inv_iw)


@njit(cache=True)
def _angular_term(b, rx, ry, rz, d, inv_iw):
    """(r × d)·I_w⁻¹ (r × d) of body b."""
    cx, cy, cz = ry * d[2] - rz * d[1], rz * d[0] - rx * d[2], rx * d[1] - ry * d[0]
    m = inv_iw[b]
    return (cx * (m[0, 0] * cx + m[0, 1] * cy + m[0, 2] * cz)
            + cy * (m[1, 0] * cx + m[1, 1] * cy + m[1, 2] * cz)
            + cz * (m[2, 0] * cx + m[2, 1] * cy + m[2, 2] * cz))


@njit(cache=True, nogil=True)
def _prepare_kernel(body, other, point, n, t1, t2, pos, vel, omega, accel, inv_mass, inv_iw,
                    r, r2, vn, accel_n, mass_n, mass_t1, mass_t2):
    """Per contact: offsets r, r2 (k, 3) from the centres of mass; relative normal velocity vn
    and acceleration accel_n (k,); effective masses along n, t1, t2 (k,):
    1 / (1/m + d·((I_w⁻¹ (r × d)) × r) + the same for the other body) — the impulse per unit
    change of the relative velocity along d (seed 001; physics.md §3 for two bodies)."""
    for c in range(body.shape[0]):
        b, o = body[c], other[c]
        for a in range(3):
            r[c, a] = point[c, a] - pos[b, a]
            r2[c, a] = point[c, a] - pos[o, a] if o >= 0 else 0.0
        wn = inv_mass[b] + _angular_term(b, r[c, 0], r[c, 1], r[c, 2], n[c], inv_iw)
        w1 = inv_mass[b] + _angular_term(b, r[c, 0], r[c, 1], r[c, 2], t1[c], inv_iw)
        w2 = inv_mass[b] + _angular_term(b, r[c, 0], r[c, 1], r[c, 2], t2[c], inv_iw)
        an = accel[b, 0] * n[c, 0] + accel[b, 1] * n[c, 1] + accel[b, 2] * n[c, 2]
        if o >= 0:
            wn += inv_mass[o] + _angular_term(o, r2[c, 0], r2[c, 1], r2[c, 2], n[c], inv_iw)
            w1 += inv_mass[o] + _angular_term(o, r2[c, 0], r2[c, 1], r2[c, 2], t1[c], inv_iw)
            w2 += inv_mass[o] + _angular_term(o, r2[c, 0], r2[c, 1], r2[c, 2], t2[c], inv_iw)
            an -= accel[o, 0] * n[c, 0] + accel[o, 1] * n[c, 1] + accel[o, 2] * n[c, 2]
        mass_n[c], mass_t1[c], mass_t2[c] = 1.0 / wn, 1.0 / w1, 1.0 / w2
        accel_n[c] = an
        vn[c] = _relative_velocity(b, o, r, r2, c, vel, omega, n)


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
    """Solve one step's contacts (walls and body pairs together); updates vel, ang_mom and
    omega (n, 3) in place.

    pos (n, 3) m; vel (n, 3) m/s and ang_mom (n, 3) world kg·m²/s after this step's forces;
    omega (n, 3) rad/s the matching world ω; inv_mass (n,); inv_inertia_world (n, 3, 3);
    accel (n, 3) m/s² the constant acceleration of the step (gravity + force/m);
    restitution, friction (k,) per contact; warm (k, 3) warm-start impulses; h s;
    iterations sweeps; threshold m/s minimum impact speed for restitution.
    Velocities and accelerations of a body pair are relative: first body minus second.
    """
    body, other, n = contacts.body, contacts.other, contacts.normal
    t1, t2 = contacts.tangent1, contacts.tangent2
    pair = other >= 0
    k = contacts.count
    r, r2 = np.empty((k, 3)), np.empty((k, 3))
    vn_now, accel_n, mass_n, mass_t1, mass_t2 = (np.empty(k) for _ in range(5))
    _prepare_kernel(body, other, contacts.point, n, t1, t2, pos, vel, omega, accel, inv_mass,
                    inv_inertia_world, r, r2, vn_now, accel_n, mass_n, mass_t1, mass_t2)
    fraction, v_impact = impact_times(contacts.separation, vn_now - accel_n * h, accel_n, h)
    # walls: restitution pass; body pairs: collision pass (see _solve_kernel)
    bounce = ~pair & (fraction <= 1.0) & (v_impact < -threshold) & (restitution > 0.0)
    collide = pair & (restitution > 0.0)
    collision = np.zeros(contacts.count)
    tau = np.minimum(fraction, 1.0)  # walls; the collision pass sets the pairs' impact times
    # after the impact the point leaves at −e·v_impact and gravity acts for the rest of the step
    target = -restitution * v_impact + accel_n * (1.0 - tau) * h
    impulses = np.array(warm, dtype=float)
    _solve_kernel(
        body, other, r, r2, n, t1, t2, contacts.separation, mass_n, mass_t1, mass_t2,
        np.ascontiguousarray(friction, dtype=float), bounce, target, impulses,
        collide, np.ascontiguousarray(restitution, dtype=float), float(threshold), collision, tau,
        vel, ang_mom, omega, inv_mass, inv_inertia_world, float(h), int(iterations),
    )
    bounced = bounce | (collision > 0.0)
    return ContactResult(impulses, bounced, np.where(bounced, tau, 1.0), collision)


@njit(cache=True, nogil=True)
def _push_kernel(body, other, n, depth, inv_mass, shift, iterations):
    for _ in range(iterations):
        for c in range(body.shape[0]):
            b, o = body[c], other[c]
            # depth still left after the shifts so far (first body moves along +n)
            left = depth[c] - ((shift[b, 0] - shift[o, 0]) * n[c, 0]
                               + (shift[b, 1] - shift[o, 1]) * n[c, 1]
                               + (shift[b, 2] - shift[o, 2]) * n[c, 2])
            if left <= 0.0:
                continue
            w = inv_mass[b] + inv_mass[o]
            for a in range(3):
                shift[b, a] += left * inv_mass[b] / w * n[c, a]
                shift[o, a] -= left * inv_mass[o] / w * n[c, a]


def push_apart(contacts: Contacts, pos, vel, omega, inv_mass, h, slop, iterations) -> np.ndarray:
    """(n, 3) m: translations that remove body–body penetration deeper than ``slop`` m.

    The depth at the end of the step is predicted from each contact's gap and its solved
    relative normal velocity (gap + h·v_n); bodies are moved along the normal in inverse
    proportion to their masses, by Gauss–Seidel sweeps over the contacts (Box2D v2's position
    pass, without rotation). A position pass moves bodies but gives them no velocity, so it
    cannot make them fly apart the way a velocity bias would. pos, vel, omega (n, 3) solved.
    """
    shift = np.zeros((len(pos), 3))
    pair = contacts.other >= 0
    if not np.any(pair):
        return shift
    body, other, n = contacts.body[pair], contacts.other[pair], contacts.normal[pair]
    point = contacts.point[pair]
    r, r2 = point - pos[body], point - pos[other]
    vn = np.einsum("ki,ki->k", vel[body] + np.cross(omega[body], r)
                   - vel[other] - np.cross(omega[other], r2), n)
    depth = -(contacts.separation[pair] + h * vn) - slop
    deep = depth > 0.0
    if np.any(deep):
        _push_kernel(body[deep], other[deep], np.ascontiguousarray(n[deep]), depth[deep],
                     inv_mass, shift, int(iterations))
    return shift
