"""Contact points between bodies and the container walls (docs/physics.md#wall-contacts).

A body's collision shape is its convex hull (≤ 64 vertices) or an exact sphere. Against a plane
the contact candidates are the hull vertices within a speculative distance of it: a vertex that is
still apart but would cross the plane during the step at its current speed is already a contact,
and the solver lets it approach only as far as the gap (Box2D's speculative contacts) — so nothing
tunnels, however fast. Many vertices on one plane (a cylinder standing on its cap) are reduced to
the deepest one and the extremes along four directions of the plane, which keeps the support
polygon and bounds the solver's work — plus every vertex that, at its present approach speed,
would end the step deeper in the wall than the penetration slop: left out, the solver would not
stop it, and the projection out of the wall at the end of the step would lift the body by hand,
energy the solver never saw (docs/physics.md#wall-contacts).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from physics.collision.contact import (
    BodySet,
    Contacts,
    allocate_buffer,
    buffer_contacts,
    tangent_pair,
)
from physics.collision.keys import wall_key
from physics.settings import (
    MAX_POINTS_PER_PLANE,
    PENETRATION_SLOP,
    REACH_STEPS,
    SPECULATIVE_MARGIN,
)


@njit(cache=True, nogil=True)
def _fill_wall_contacts(bodies, hull_points, hull_start, planes, awake, h, out):
    """Fill the ``ContactBuffer`` out (capacity n·planes·2·MAX_POINTS_PER_PLANE; no sources)
    with the contacts of ``bodies`` (a ``BodySet``); return the count."""
    pos, rotm, vel, omega = bodies.pos, bodies.rotm, bodies.vel, bodies.omega
    ids, radius, bound = bodies.ids, bodies.radius, bodies.bound
    out_body, out_other, out_key = out.body, out.other, out.key
    out_point, out_normal, out_sep = out.point, out.normal, out.sep
    count = 0
    n_planes = planes.shape[0]
    world = np.empty((64, 3))
    sep = np.empty(64)
    end = np.empty(64)  # separation at the end of the step at the present approach speed
    cand = np.empty(64, dtype=np.int64)
    chosen = np.empty(2 * MAX_POINTS_PER_PLANE, dtype=np.int64)
    for b in range(pos.shape[0]):
        if not awake[b]:
            continue
        # bounding-sphere cull: no point of the body can come within reach of any wall this step
        reach = SPECULATIVE_MARGIN + REACH_STEPS * h * (
            np.sqrt(vel[b, 0] ** 2 + vel[b, 1] ** 2 + vel[b, 2] ** 2)
            + bound[b] * np.sqrt(omega[b, 0] ** 2 + omega[b, 1] ** 2 + omega[b, 2] ** 2))
        near = False
        for pl in range(n_planes):
            centre = (
                planes[pl, 0] * pos[b, 0] + planes[pl, 1] * pos[b, 1] + planes[pl, 2] * pos[b, 2]
            )
            if centre - planes[pl, 3] - bound[b] < reach:
                near = True
        if not near:
            continue
        lo, hi = hull_start[b], hull_start[b + 1]
        # a ball's contact comes from its centre: its hull's vertices are not read below
        nv = hi - lo if radius[b] <= 0.0 else 0
        for j in range(nv):  # scalar indexing: a row view would cost a reference count
            v = lo + j
            for a in range(3):
                world[j, a] = (
                    pos[b, a]
                    + rotm[b, a, 0] * hull_points[v, 0]
                    + rotm[b, a, 1] * hull_points[v, 1]
                    + rotm[b, a, 2] * hull_points[v, 2]
                )
        for pl in range(n_planes):
            nx, ny, nz, d = planes[pl, 0], planes[pl, 1], planes[pl, 2], planes[pl, 3]
            if nx * pos[b, 0] + ny * pos[b, 1] + nz * pos[b, 2] - d - bound[b] >= reach:
                continue  # the same cull, per wall: this one is out of reach
            if radius[b] > 0.0:
                s = nx * pos[b, 0] + ny * pos[b, 1] + nz * pos[b, 2] - d - radius[b]
                # the sphere's lowest point moves with the centre's normal velocity
                un = nx * vel[b, 0] + ny * vel[b, 1] + nz * vel[b, 2]
                if s < SPECULATIVE_MARGIN + max(0.0, -un) * h * 1.5:
                    out_body[count], out_other[count] = b, -1
                    out_key[count] = wall_key(ids[b], pl, 0)
                    out_point[count, 0] = pos[b, 0] - radius[b] * nx
                    out_point[count, 1] = pos[b, 1] - radius[b] * ny
                    out_point[count, 2] = pos[b, 2] - radius[b] * nz
                    out_normal[count, 0], out_normal[count, 1], out_normal[count, 2] = nx, ny, nz
                    out_sep[count] = s
                    count += 1
                continue
            nc = 0
            deepest = -1
            for j in range(nv):
                s = nx * world[j, 0] + ny * world[j, 1] + nz * world[j, 2] - d
                rx = world[j, 0] - pos[b, 0]
                ry = world[j, 1] - pos[b, 1]
                rz = world[j, 2] - pos[b, 2]
                # vertex velocity v + ω × r along the normal
                un = (nx * (vel[b, 0] + omega[b, 1] * rz - omega[b, 2] * ry)
                      + ny * (vel[b, 1] + omega[b, 2] * rx - omega[b, 0] * rz)
                      + nz * (vel[b, 2] + omega[b, 0] * ry - omega[b, 1] * rx))
                if s < SPECULATIVE_MARGIN + max(0.0, -un) * h * 1.5:
                    cand[nc] = j
                    sep[j] = s
                    end[j] = s + min(un, 0.0) * h
                    if deepest < 0 or s < sep[deepest]:
                        deepest = j
                    nc += 1
            if nc == 0:
                continue
            n_chosen = 0
            if nc <= MAX_POINTS_PER_PLANE:
                for c in range(nc):
                    chosen[n_chosen] = cand[c]
                    n_chosen += 1
            else:
                chosen[0] = deepest
                n_chosen = 1
                # in-plane directions: two tangents t1, t2 of the normal and their diagonals
                t1x, t1y, t1z, t2x, t2y, t2z = tangent_pair(nx, ny, nz)
                for k in range(4):
                    su = 1.0 if k % 2 == 0 else -1.0
                    sv = 1.0 if k < 2 else -1.0
                    dx, dy, dz = su * t1x + sv * t2x, su * t1y + sv * t2y, su * t1z + sv * t2z
                    best = cand[0]
                    best_val = -1e300
                    for c in range(nc):
                        j = cand[c]
                        val = dx * world[j, 0] + dy * world[j, 1] + dz * world[j, 2]
                        if val > best_val:
                            best_val = val
                            best = j
                    duplicate = False
                    for m in range(n_chosen):
                        if chosen[m] == best:
                            duplicate = True
                    if not duplicate:
                        chosen[n_chosen] = best
                        n_chosen += 1
                # the vertices that would end the step past the slop, deepest first (at most
                # MAX_POINTS_PER_PLANE more: a body turning into a wall has few of them)
                while n_chosen < 2 * MAX_POINTS_PER_PLANE:
                    worst, worst_end = -1, -PENETRATION_SLOP
                    for c in range(nc):
                        j = cand[c]
                        if end[j] < worst_end:
                            taken = False
                            for m in range(n_chosen):
                                if chosen[m] == j:
                                    taken = True
                            if not taken:
                                worst, worst_end = j, end[j]
                    if worst < 0:
                        break
                    chosen[n_chosen] = worst
                    n_chosen += 1
            for m in range(n_chosen):
                j = chosen[m]
                out_body[count], out_other[count] = b, -1
                out_key[count] = wall_key(ids[b], pl, j)
                out_point[count, 0] = world[j, 0]
                out_point[count, 1] = world[j, 1]
                out_point[count, 2] = world[j, 2]
                out_normal[count, 0], out_normal[count, 1], out_normal[count, 2] = nx, ny, nz
                out_sep[count] = sep[j]
                count += 1
    return count


def wall_contacts(pos, rotm, vel, omega, ids, radius, bound, hull_points, hull_start, planes,
                  h, awake=None) -> Contacts:
    """Contacts of N bodies against the container planes.

    pos (n, 3) m; rotm (n, 3, 3) principal → world; vel (n, 3) m/s and omega (n, 3) rad/s (the
    velocities the step will move with, used for the speculative distance); ids (n,) stable ids;
    radius (n,) m; bound (n,) m bounding radius about the centre of mass; hull_points (H, 3),
    hull_start (n+1,) as in ``Model``; planes (p, 4) from
    ``Model.wall_planes``; h the step, s; awake (n,) bool: the bodies to collide (default all;
    a sleeping body has no wall contacts).
    """
    # a named record, as the step's compiled call passes it: the same compiled code
    # (docs/architecture.md#records)
    bodies = BodySet(ids, radius, bound, pos, rotm, vel, omega)
    return find_wall_contacts(bodies, hull_points, hull_start, planes,
                              np.ones(len(pos), dtype=bool) if awake is None else awake, float(h))


@njit(cache=True, nogil=True)
def find_wall_contacts(bodies, hull_points, hull_start, planes, awake, h):
    """``wall_contacts`` of the ``BodySet`` bodies (a ``Contacts``), for compiled callers."""
    n, n_planes = bodies.pos.shape[0], planes.shape[0]
    if n_planes == 0:  # no container: no contact, as empty views (nothing to allocate)
        none, nowhere = bodies.ids[:0], bodies.pos[:0]
        return Contacts(none, none, nowhere, nowhere, bodies.bound[:0], nowhere, nowhere, none)
    out = allocate_buffer(max(n * n_planes * 2 * MAX_POINTS_PER_PLANE, 1), False)
    count = 0
    if n and n_planes:
        count = _fill_wall_contacts(bodies, hull_points, hull_start, planes, awake, h, out)
    return buffer_contacts(out, count)


@njit(cache=True, nogil=True)
def _deepest_kernel(pos, rotm, radius, bound, hull_points, hull_start, planes, cutoff, out):
    for b in range(pos.shape[0]):
        r = rotm[b]
        for pl in range(planes.shape[0]):
            nx, ny, nz, d = planes[pl, 0], planes[pl, 1], planes[pl, 2], planes[pl, 3]
            centre = nx * pos[b, 0] + ny * pos[b, 1] + nz * pos[b, 2] - d
            if radius[b] > 0.0:
                out[b, pl] = centre - radius[b]
                continue
            if centre - bound[b] >= cutoff:  # the bounding sphere is already clear enough
                out[b, pl] = centre - bound[b]
                continue
            lowest = 1e300
            for j in range(hull_start[b], hull_start[b + 1]):
                px, py, pz = hull_points[j, 0], hull_points[j, 1], hull_points[j, 2]
                s = centre + (nx * (r[0, 0] * px + r[0, 1] * py + r[0, 2] * pz)
                              + ny * (r[1, 0] * px + r[1, 1] * py + r[1, 2] * pz)
                              + nz * (r[2, 0] * px + r[2, 1] * py + r[2, 2] * pz))
                lowest = min(lowest, s)
            out[b, pl] = lowest


def wall_clearance(pos, rotm, radius, bound, hull_points, hull_start, planes,
                   cutoff=np.inf) -> np.ndarray:
    """(n, p) smallest separation of each body from each wall plane, m (negative = penetration).

    Exact where it is below ``cutoff`` m; elsewhere a lower bound that is ≥ cutoff (the bounding
    sphere's clearance), which is all a penetration test needs. Other arguments as in
    ``wall_contacts``.
    """
    out = np.zeros((len(pos), len(planes)))
    if len(pos) and len(planes):
        _deepest_kernel(
            pos, rotm, radius, bound, hull_points, hull_start, planes, float(cutoff), out
        )
    return out
