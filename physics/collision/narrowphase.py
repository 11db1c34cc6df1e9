"""Narrow phase: contact manifolds between pairs of bodies
(docs/physics.md#contacts-between-bodies).

Shapes: an exact sphere (``Model.radius`` > 0) or a convex hull with its faces and edges
(geometry/polytope.py; a box is a hull with 6 faces, so box–box is exact).
- sphere–sphere: along the line of centres.
- sphere–hull: the closest point of the hull to the centre (faces, edges, vertices), or the least
  deep face when the centre is inside.
- hull–hull: separating-axis test over the face normals of both hulls and the edge pairs that form
  a face of the Minkowski difference (the Gauss-map test of Gregorius, "The Separating Axis Test
  between Convex Polyhedra", GDC 2013), which skips most edge pairs without projecting anything.
  A face axis gives a face contact: the most anti-parallel face of the other hull is clipped
  against the reference face's side planes (Sutherland–Hodgman) and reduced to at most 4 points
  keeping the deepest and the largest area (Bullet's manifold reduction); an edge axis gives one
  point between the two edges. Face axes win ties so resting boxes keep a face manifold.
  Two boxes get the same answer from the closed-form box SAT (collision/boxes.py); for other hulls
  the face and edge queries skip, exactly, the faces and edges that a bound from the hulls' inner
  radii or from their distance and closest points (GJK, collision/gjk.py) shows cannot matter.

Every pair closer than a speculative distance (the margin plus how far the two can approach in
``REACH_STEPS`` steps) yields contacts with a positive gap, which the solver lets close but not
cross, so a
fast body cannot tunnel through another. Contacts carry keys built from the two body ids and the
features that made them (reference face, clipping edge, incident vertex or edge pair;
collision/keys.py), so the same contact is found again next step and its impulses warm-start.
A touching pair that has barely moved against each other since its manifold was found keeps
that manifold, carried along with the two bodies (collision/manifolds.py: Jolt's body pair cache).

Normals point from the second body (``other``) into the first (``body``), as a wall's normal
points into its body: the first body receives +λn.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from physics.collision.axes import (
    EDGES,
    FACE_OF_FIRST,
    FACE_OF_SECOND,
    NO_AXIS,
    remember,
    swapped,
    unfound,
)
from physics.collision.boxes import box_separations
from physics.collision.broadphase import chunk_bounds
from physics.collision.contact import (
    BodySet,
    ContactBuffer,
    Contacts,
    allocate_buffer,
    buffer_contacts,
)
from physics.collision.gjk import hull_distance, support_vertex
from physics.collision.keys import (
    SPHERE,
    body_pair_key,
    clip_tag,
    edge_feature,
    face_feature,
    pair_key,
    tag_vertex,
)
from physics.collision.manifolds import (
    MIN_TRACE,
    ManifoldCache,
    emit_stored,
    manifold_cache,
)
from physics.dynamics.warmstart import hash_slot
from physics.model import HullSet
from physics.runtime import parallel_threads
from physics.settings import (
    EDGE_SKIP_MARGIN,
    FACE_PREFERENCE,
    MANIFOLD_REUSE_SHIFT,
    MAX_HULL_VERTICES,
    MAX_MANIFOLD,
    PAIRS_PER_CHUNK,
    REACH_STEPS,
    SPECULATIVE_MARGIN,
)

_MAX_EDGES = 3 * MAX_HULL_VERTICES - 6  # edges of a hull (Euler: E ≤ 3V − 6)
_MAX_FACES = 2 * MAX_HULL_VERTICES - 4  # faces of a hull (Euler: F ≤ 2V − 4)
_CLIP_CAPACITY = 256       # points of a clipped polygon: 64 incident vertices + 2 per side plane
# a pair's verdict before the narrow phase (``_sort_pairs``); ≥ 0 is its reusable manifold's row
_NARROW = -1  # the narrow phase finds its contacts
_APART = -2   # no contact can come from it this step
# m beyond a ball's reach at which a hull's face plane dismisses the pair (``_closest_on_hull``):
# a bound far above the rounding of a distance (~1e-16 of the coordinates), far below any gap
# that matters
_FAR_MARGIN = 1e-9
# a dot product of unit normals taken in a body's frame differs from the same taken of the
# moved normals by rounding (~1e-16): this bound, far above it, keeps every face that could
# win in the world in a search done in the body frame
_DOT_MARGIN = 1e-12


@njit(cache=True, inline='always')
def _dot(u, i, v, j):
    """u[i]·v[j] for rows of two (·, 3) arrays, written out: an array expression would
    allocate a temporary, and these run in the narrow phase's innermost loops."""
    return u[i, 0] * v[j, 0] + u[i, 1] * v[j, 1] + u[i, 2] * v[j, 2]


@njit(cache=True, inline='always')
def _area(points, u, v, i, nx, ny, nz):
    """((points[v] − points[u]) × (points[i] − points[u]))·n: twice the signed area of the
    triangle (u, v, i) seen along the normal (nx, ny, nz)."""
    ax, ay, az = (points[v, 0] - points[u, 0], points[v, 1] - points[u, 1],
                  points[v, 2] - points[u, 2])
    bx, by, bz = (points[i, 0] - points[u, 0], points[i, 1] - points[u, 1],
                  points[i, 2] - points[u, 2])
    return (ay * bz - az * by) * nx + (az * bx - ax * bz) * ny + (ax * by - ay * bx) * nz


@njit(cache=True, inline='always')
def _emit(out, out_n, body, other, key, px, py, pz, nx, ny, nz, sep):
    """Write a contact into the ``ContactBuffer`` out at out_n; returns out_n + 1."""
    out.body[out_n] = body
    out.other[out_n] = other
    out.key[out_n] = key
    out.point[out_n, 0] = px
    out.point[out_n, 1] = py
    out.point[out_n, 2] = pz
    out.normal[out_n, 0] = nx
    out.normal[out_n, 1] = ny
    out.normal[out_n, 2] = nz
    out.sep[out_n] = sep
    return out_n + 1


@njit(cache=True, inline='always')
def _moved_normal(f, r, normals, rotm):
    """World normal (3 floats) of face f (global index) of body r: its body-frame normal (row f
    of normals (F, 3)) turned by rotm[r] (n, 3, 3). The world ``HullSet`` keeps the faces in the
    body frame (``world_hulls``): the narrow phase moves only the few planes it reads, most
    faces being dismissed by bounds taken in the body frame (docs/physics.md#faces-moved-on-demand).
    """
    x, y, z = normals[f, 0], normals[f, 1], normals[f, 2]
    return (rotm[r, 0, 0] * x + rotm[r, 0, 1] * y + rotm[r, 0, 2] * z,
            rotm[r, 1, 0] * x + rotm[r, 1, 1] * y + rotm[r, 1, 2] * z,
            rotm[r, 2, 0] * x + rotm[r, 2, 1] * y + rotm[r, 2, 2] * z)


@njit(cache=True, inline='always')
def _turned_back(r, x, y, z, rotm):
    """The world vector (x, y, z) in body r's frame, Rᵀ (x, y, z) of rotm[r] (n, 3, 3) (3
    floats): where a search compares a world direction or point with body-frame normals."""
    return (rotm[r, 0, 0] * x + rotm[r, 1, 0] * y + rotm[r, 2, 0] * z,
            rotm[r, 0, 1] * x + rotm[r, 1, 1] * y + rotm[r, 2, 1] * z,
            rotm[r, 0, 2] * x + rotm[r, 1, 2] * y + rotm[r, 2, 2] * z)


@njit(cache=True, inline='always')
def _moved_offset(f, r, n0, n1, n2, offsets, pos):
    """World offset (m) of face f of body r (pos (n, 3) m) whose world normal is (n0, n1, n2):
    its body-frame offset (offsets (F,)) plus n·x_r."""
    shift = n0 * pos[r, 0]
    shift += n1 * pos[r, 1]
    shift += n2 * pos[r, 2]
    return offsets[f] + shift


@njit(cache=True, inline='always')
def _face_plane(f, r, hulls, pos, rotm):
    """World plane of face f of body r of the ``HullSet`` hulls: (normal x, y, z, offset m)."""
    n0, n1, n2 = _moved_normal(f, r, hulls.face_normal, rotm)
    return n0, n1, n2, _moved_offset(f, r, n0, n1, n2, hulls.face_offset, pos)


@njit(cache=True)
def _closest_on_hull(c, b, hulls, pos, rotm, planes, q, far):
    """Closest point q (3,) of hull b of the world ``HullSet`` hulls (pos (n, 3), rotm (n, 3, 3)
    the bodies' poses) to c (3,); returns (distance, local face index or −1); planes (≥ faces,
    4) receives b's world face planes (normal, offset).

    Inside the hull the distance is the (negative) signed distance to the least deep face, q is
    the projection on it, and the face index says which face's normal to use. A c farther than
    far m from one of the face planes is farther than that from the hull (the planes bound it):
    then the distance returned is that plane's, a lower bound, and q is not set."""
    wpts, hull_start = hulls.hull_points, hulls.hull_start
    face_start, loop_start, face_vertex = hulls.face_start, hulls.face_loop_start, hulls.face_vertex
    edge, edge_start = hulls.edge, hulls.edge_start
    v0 = hull_start[b]
    first, faces = face_start[b], face_start[b + 1] - face_start[b]
    for k in range(faces):
        planes[k, 0], planes[k, 1], planes[k, 2], planes[k, 3] = _face_plane(first + k, b, hulls,
                                                                             pos, rotm)
    best_face, best = -1, -1e300
    for k in range(faces):
        d = planes[k, 0] * c[0] + planes[k, 1] * c[1] + planes[k, 2] * c[2] - planes[k, 3]
        if d > best:
            best, best_face = d, k
    if best <= 0.0:  # inside: push out through the nearest face
        for a in range(3):
            q[a] = c[a] - best * planes[best_face, a]
        return best, best_face
    if best >= far:  # out of the caller's reach: the faces' and edges' closest points unneeded
        return best, -1
    dist2 = 1e300
    for k in range(faces):
        d = planes[k, 0] * c[0] + planes[k, 1] * c[1] + planes[k, 2] * c[2] - planes[k, 3]
        if d <= 0.0 or d * d >= dist2:
            continue
        px = c[0] - d * planes[k, 0]
        py = c[1] - d * planes[k, 1]
        pz = c[2] - d * planes[k, 2]
        inside = True
        lo, hi = loop_start[first + k], loop_start[first + k + 1]
        for m in range(lo, hi):
            i = v0 + face_vertex[m]
            j = v0 + face_vertex[m + 1 if m + 1 < hi else lo]
            ex, ey, ez = wpts[j, 0] - wpts[i, 0], wpts[j, 1] - wpts[i, 1], wpts[j, 2] - wpts[i, 2]
            rx, ry, rz = px - wpts[i, 0], py - wpts[i, 1], pz - wpts[i, 2]
            # (e × r)·n < 0: p is outside this edge of the counter-clockwise loop
            if ((ey * rz - ez * ry) * planes[k, 0] + (ez * rx - ex * rz) * planes[k, 1]
                    + (ex * ry - ey * rx) * planes[k, 2]) < 0.0:
                inside = False
                break
        if inside:
            dist2 = d * d
            q[0], q[1], q[2] = px, py, pz
    for e in range(edge_start[b], edge_start[b + 1]):
        i, j = v0 + edge[e, 0], v0 + edge[e, 1]
        ex, ey, ez = wpts[j, 0] - wpts[i, 0], wpts[j, 1] - wpts[i, 1], wpts[j, 2] - wpts[i, 2]
        length2 = ex * ex + ey * ey + ez * ez
        t = 0.0
        if length2 > 0.0:
            t = ((c[0] - wpts[i, 0]) * ex + (c[1] - wpts[i, 1]) * ey
                 + (c[2] - wpts[i, 2]) * ez) / length2
            t = min(max(t, 0.0), 1.0)
        px, py, pz = wpts[i, 0] + t * ex, wpts[i, 1] + t * ey, wpts[i, 2] + t * ez
        d2 = (c[0] - px) ** 2 + (c[1] - py) ** 2 + (c[2] - pz) ** 2
        if d2 < dist2:
            dist2 = d2
            q[0], q[1], q[2] = px, py, pz
    return np.sqrt(dist2), -1


@njit(cache=True)
def _face_query(a, b, pos, rotm, hulls, floor=-1e300, near=None, bounds=None):
    """Largest separation of hull b from the face planes of hull a: (separation, face, the
    first face reaching it); pos (n, 3) m and rotm (n, 3, 3) the bodies' poses, hulls the world
    ``HullSet`` (faces in the body frame). Only separations above floor (m) are searched: if
    none is, (floor, −1). near (3,) m, if given, is a point of b (or within rounding of one),
    and bounds (≥ faces of a,) then scratch.

    A face is only projected against b's vertices if it can beat the best so far: b's lowest
    point along the face normal n is at most n·x_b − ρ_b (the ball of b's inner radius ρ_b about
    its centre of mass lies inside it), which skips the faces turned away from b exactly, and at
    most n·near, which skips all but the faces about b's point nearest a when near is that
    point (GJK's closest point); the face where that bound is largest is projected first. The
    bounds are taken in a's frame, x_b and near turned into it, so that only the faces
    projected are moved into the world; ``EDGE_SKIP_MARGIN`` covers the rounding of either
    frame (and of a point computed by GJK). The bounds from near are computed in one pass and
    read back by the search: the passes over a's faces, not the projections (about 1.6 a
    query), are most of its cost."""
    normals, offsets, face_start = hulls.face_normal, hulls.face_offset, hulls.face_start
    inner_b = hulls.inner_radius[b]
    if inner_b <= 0.0:
        inner_b = -np.inf  # no ball inside: no bound
    best, best_face = floor, -1
    lo, hi = face_start[a], face_start[a + 1]
    # b's centre of mass in a's frame: Rₐᵀ (x_b − x_a)
    cx, cy, cz = _turned_back(a, pos[b, 0] - pos[a, 0], pos[b, 1] - pos[a, 1],
                              pos[b, 2] - pos[a, 2], rotm)
    first = -1
    if near is not None:
        # each face's bound from near, and the face where it is largest
        qx, qy, qz = _turned_back(a, near[0] - pos[a, 0], near[1] - pos[a, 1],
                                  near[2] - pos[a, 2], rotm)
        for f in range(lo, hi):
            bounds[f - lo] = (normals[f, 0] * qx + normals[f, 1] * qy + normals[f, 2] * qz
                              - offsets[f] + EDGE_SKIP_MARGIN)
        first, top = lo, -np.inf
        for f in range(lo, hi):
            if bounds[f - lo] > top:
                top, first = bounds[f - lo], f
        s = _face_separation(first, a, b, hulls, pos, rotm)
        if s > best:
            best, best_face = s, first
    for f in range(lo, hi):
        if f == first:
            continue
        if near is not None:
            near_bound = bounds[f - lo]
            if near_bound < best:  # the tighter bound first: most faces end here
                continue
        bound = (normals[f, 0] * cx + normals[f, 1] * cy + normals[f, 2] * cz - inner_b
                 - offsets[f] + EDGE_SKIP_MARGIN)
        if near is not None:
            bound = min(bound, near_bound)
        if bound < best:
            continue
        s = _face_separation(f, a, b, hulls, pos, rotm)
        if s > best or (s == best and f < best_face):  # the first face of the largest
            best, best_face = s, f
    return best, best_face


@njit(cache=True, inline='always')
def _face_separation(f, a, b, hulls, pos, rotm):
    """Separation (m) of hull b from the plane of face f (global index) of hull a, of the world
    ``HullSet`` hulls (pos, rotm the bodies' poses): b's lowest vertex along the face's normal,
    the plane moved into the world here (``_face_plane``)."""
    wpts, hull_start = hulls.hull_points, hulls.hull_start
    nx, ny, nz, offset = _face_plane(f, a, hulls, pos, rotm)
    rows = wpts[hull_start[b]:hull_start[b + 1]]  # counted from 0: see gjk.support_vertex
    lowest = 1e300
    for k in range(rows.shape[0]):
        lowest = min(lowest, nx * rows[k, 0] + ny * rows[k, 1] + nz * rows[k, 2])
    return lowest - offset


@njit(cache=True)
def _arc_bound(n1x, n1y, n1z, n2x, n2y, n2z, wx, wy, wz):
    """Upper bound of N·w over the unit vectors N of the shorter great-circle arc from n1 to n2:
    N = (αn1 + βn2)/|αn1 + βn2| with α, β ≥ 0 and |αn1 + βn2| ≥ (α + β) cos(θ/2), θ the arc's
    angle, so N·w ≤ m if m = max(n1·w, n2·w) ≤ 0, and ≤ m / cos(θ/2) otherwise."""
    m = max(n1x * wx + n1y * wy + n1z * wz, n2x * wx + n2y * wy + n2z * wz)
    if m <= 0.0:
        return m
    cos_half2 = 0.5 * (1.0 + n1x * n2x + n1y * n2y + n1z * n2z)
    return m / np.sqrt(cos_half2) if cos_half2 > 1e-24 else np.inf


@njit(cache=True)
def _edge_query(a, b, pos, rotm, hulls, spec, face_best, arcs, kept, moved, axis, near=None):
    """Largest separation over edge pairs forming a Minkowski face: (separation, ea, eb);
    axis (3,) receives that separating direction, pointing from a to b. pos (n, 3) m and rotm
    (n, 3, 3) the bodies' poses, hulls the world ``HullSet`` (faces in the body frame); arcs
    (10, ≥ edges of b), kept (≥ edges of b,) and moved (2, ≥ faces, 3) (the two hulls' world
    normals) are scratch; near (2, 3), if given, a point of a and a point of b (GJK's closest
    points, or within rounding of them). Scalar arithmetic only: this is the innermost loop of
    the narrow phase.

    Only what can matter is searched: an edge pair whose separation is below spec (m) and at most
    face_best + FACE_PREFERENCE (face_best the best face separation) changes no decision of the
    narrow phase, so edges that can only make such pairs are skipped, and the result is exact
    whenever it is ≥ spec or beats the faces. The bounds (exact, per edge): for N in the
    Gauss-map arc of a's edge through p0, a's support along N is N·p0 and b's lowest point along
    N is at most N·x_b − ρ_b, ρ_b the inner radius of b about its centre of mass x_b, and at
    most N·q for any point q of b, so the separation along N is at most N·(x_b − p0) − ρ_b and
    N·(q − p0) (_arc_bound over the arc); q is b's point closest to a when near gives it (the
    tightest such bound, less ``EDGE_SKIP_MARGIN`` for its rounding), else b's vertex deepest
    towards a, which bounds a thin hull (small ρ) much closer than its ball. The same for b's
    edges. The inner radii are the body frame's, less ``EDGE_SKIP_MARGIN`` for their rounding
    in the world."""
    wpts, hull_start, normals = hulls.hull_points, hulls.hull_start, hulls.face_normal
    edge, edge_faces, edge_start = hulls.edge, hulls.edge_faces, hulls.edge_start
    face_start = hulls.face_start
    best, best_a, best_b = -1e300, -1, -1
    va, vb = hull_start[a], hull_start[b]
    threshold = min(spec, face_best + FACE_PREFERENCE)  # keep an edge whose bound reaches it
    inner_a, inner_b = hulls.inner_radius[a], hulls.inner_radius[b]
    if inner_a <= 0.0 or inner_b <= 0.0:
        threshold = -np.inf  # no ball inside: no bound, search everything
    inner_a -= EDGE_SKIP_MARGIN
    inner_b -= EDGE_SKIP_MARGIN
    for r, side in ((b, 1), (a, 0)):  # each face's normal moved into the world once
        first = face_start[r]
        for f in range(first, face_start[r + 1]):
            moved[side, f - first, 0], moved[side, f - first, 1], moved[side, f - first, 2] = (
                _moved_normal(f, r, normals, rotm))
    if near is None:
        tx, ty, tz = pos[b, 0] - pos[a, 0], pos[b, 1] - pos[a, 1], pos[b, 2] - pos[a, 2]
        sa = support_vertex(a, tx, ty, tz, wpts, hull_start)     # a's vertex deepest towards b
        sb = support_vertex(b, -tx, -ty, -tz, wpts, hull_start)  # b's towards a
        qax, qay, qaz = wpts[sa, 0], wpts[sa, 1], wpts[sa, 2]
        qbx, qby, qbz = wpts[sb, 0], wpts[sb, 1], wpts[sb, 2]
        slack = 0.0
    else:
        qax, qay, qaz = near[0, 0], near[0, 1], near[0, 2]
        qbx, qby, qbz = near[1, 0], near[1, 1], near[1, 2]
        slack = EDGE_SKIP_MARGIN
    # b's Gauss-map arcs once per pair, not once per edge pair: c, d = −nb1, −nb2 and d × c,
    # one row per component (arcs[k, e]) so that the first test below runs over b's edges in
    # a branch-free loop the compiler vectorises; kept[e] is the edge of column e
    nb = 0
    for eb in range(edge_start[b], edge_start[b + 1]):
        g1, g2 = edge_faces[eb, 0], edge_faces[eb, 1]
        cx, cy, cz = -moved[1, g1, 0], -moved[1, g1, 1], -moved[1, g1, 2]
        dx, dy, dz = -moved[1, g2, 0], -moved[1, g2, 1], -moved[1, g2, 2]
        q = vb + edge[eb, 0]
        if (_arc_bound(cx, cy, cz, dx, dy, dz, wpts[q, 0] - pos[a, 0], wpts[q, 1] - pos[a, 1],
                       wpts[q, 2] - pos[a, 2]) - inner_a < threshold
                or _arc_bound(cx, cy, cz, dx, dy, dz, wpts[q, 0] - qax, wpts[q, 1] - qay,
                              wpts[q, 2] - qaz) + slack < threshold):
            continue
        arcs[0, nb], arcs[1, nb], arcs[2, nb] = cx, cy, cz
        arcs[3, nb], arcs[4, nb], arcs[5, nb] = dx, dy, dz
        arcs[6, nb], arcs[7, nb] = dy * cz - dz * cy, dz * cx - dx * cz
        arcs[8, nb] = dx * cy - dy * cx
        kept[nb] = eb
        nb += 1
    if nb == 0:
        return best, best_a, best_b
    for ea in range(edge_start[a], edge_start[a + 1]):
        f1, f2 = edge_faces[ea, 0], edge_faces[ea, 1]
        ax, ay, az = moved[0, f1, 0], moved[0, f1, 1], moved[0, f1, 2]
        bx, by, bz = moved[0, f2, 0], moved[0, f2, 1], moved[0, f2, 2]
        p = va + edge[ea, 0]
        if (_arc_bound(ax, ay, az, bx, by, bz, pos[b, 0] - wpts[p, 0], pos[b, 1] - wpts[p, 1],
                       pos[b, 2] - wpts[p, 2]) - inner_b < threshold
                or _arc_bound(ax, ay, az, bx, by, bz, qbx - wpts[p, 0], qby - wpts[p, 1],
                              qbz - wpts[p, 2]) + slack < threshold):
            continue
        # b × a: the great circle of the arc between the edge's two face normals
        bax, bay, baz = by * az - bz * ay, bz * ax - bx * az, bx * ay - by * ax
        # arcs (a, b) and (c, d) = (−nb1, −nb2) cross ⇔ a Minkowski face; first: c and d lie
        # on opposite sides of the great circle through a and b (cba·dba < 0), in arcs[9]
        for e in range(nb):
            arcs[9, e] = ((arcs[0, e] * bax + arcs[1, e] * bay + arcs[2, e] * baz)
                          * (arcs[3, e] * bax + arcs[4, e] * bay + arcs[5, e] * baz))
        i0, i1 = va + edge[ea, 0], va + edge[ea, 1]
        p0x, p0y, p0z = wpts[i0, 0], wpts[i0, 1], wpts[i0, 2]
        e1x, e1y, e1z = wpts[i1, 0] - p0x, wpts[i1, 1] - p0y, wpts[i1, 2] - p0z
        len1 = e1x * e1x + e1y * e1y + e1z * e1z
        for e in range(nb):
            if arcs[9, e] >= 0.0:
                continue
            cba = arcs[0, e] * bax + arcs[1, e] * bay + arcs[2, e] * baz
            adc = ax * arcs[6, e] + ay * arcs[7, e] + az * arcs[8, e]
            bdc = bx * arcs[6, e] + by * arcs[7, e] + bz * arcs[8, e]
            if adc * bdc >= 0.0 or cba * bdc <= 0.0:
                continue
            eb = kept[e]
            sep, nx, ny, nz = _edge_axis_separation(a, pos, wpts, p0x, p0y, p0z, e1x, e1y, e1z,
                                                    len1, vb + edge[eb, 0], vb + edge[eb, 1])
            if sep > best:
                best, best_a, best_b = sep, ea, eb
                axis[0], axis[1], axis[2] = nx, ny, nz
    return best, best_a, best_b


@njit(cache=True)
def _edge_pair_separation(ea, eb, a, b, pos, rotm, wpts, hull_start, normals, edge, edge_faces,
                          face_start):
    """Separation (m) of hulls a and b along the cross product of edge ea of a and edge eb of b
    (global indices), as ``_edge_query`` measures it, or −inf if the two edges do not form a
    face of the Minkowski difference at these poses (or are parallel): then the axis is not one
    the separating-axis test looks at, and says nothing. The world ``HullSet``'s arrays, not
    the record (docs/architecture.md#records): normals (F, 3) the body-frame face normals,
    moved here (``_moved_normal``), rotm (n, 3, 3) the bodies' rotations."""
    f1, f2 = face_start[a] + edge_faces[ea, 0], face_start[a] + edge_faces[ea, 1]
    g1, g2 = face_start[b] + edge_faces[eb, 0], face_start[b] + edge_faces[eb, 1]
    ax, ay, az = _moved_normal(f1, a, normals, rotm)
    bx, by, bz = _moved_normal(f2, a, normals, rotm)
    cx, cy, cz = _moved_normal(g1, b, normals, rotm)
    dx, dy, dz = _moved_normal(g2, b, normals, rotm)
    cx, cy, cz, dx, dy, dz = -cx, -cy, -cz, -dx, -dy, -dz
    # the arcs (a, b) and (c, d) cross: _edge_query's test, term for term
    bax, bay, baz = by * az - bz * ay, bz * ax - bx * az, bx * ay - by * ax
    cba = cx * bax + cy * bay + cz * baz
    if cba * (dx * bax + dy * bay + dz * baz) >= 0.0:
        return -np.inf
    dcx, dcy, dcz = dy * cz - dz * cy, dz * cx - dx * cz, dx * cy - dy * cx
    adc = ax * dcx + ay * dcy + az * dcz
    bdc = bx * dcx + by * dcy + bz * dcz
    if adc * bdc >= 0.0 or cba * bdc <= 0.0:
        return -np.inf
    i0, i1 = hull_start[a] + edge[ea, 0], hull_start[a] + edge[ea, 1]
    p0x, p0y, p0z = wpts[i0, 0], wpts[i0, 1], wpts[i0, 2]
    e1x, e1y, e1z = wpts[i1, 0] - p0x, wpts[i1, 1] - p0y, wpts[i1, 2] - p0z
    sep, _, _, _ = _edge_axis_separation(a, pos, wpts, p0x, p0y, p0z, e1x, e1y, e1z,
                                         e1x * e1x + e1y * e1y + e1z * e1z,
                                         hull_start[b] + edge[eb, 0], hull_start[b] + edge[eb, 1])
    return sep


@njit(cache=True, inline='always')
def _edge_axis_separation(a, pos, wpts, p0x, p0y, p0z, e1x, e1y, e1z, len1, j0, j1):
    """(separation m, unit axis) of hull a's edge from p0 along e1 (len1 = |e1|²) against the
    edge from wpts[j0] to wpts[j1]: along their cross product, turned away from a's centre
    pos[a]; separation −inf (zero axis) for parallel edges, whose axis is a face normal, tested
    as such. The one measure of an edge pair for ``_edge_query`` and a kept axis alike."""
    q0x, q0y, q0z = wpts[j0, 0], wpts[j0, 1], wpts[j0, 2]
    e2x, e2y, e2z = wpts[j1, 0] - q0x, wpts[j1, 1] - q0y, wpts[j1, 2] - q0z
    nx, ny, nz = e1y * e2z - e1z * e2y, e1z * e2x - e1x * e2z, e1x * e2y - e1y * e2x
    length2 = nx * nx + ny * ny + nz * nz
    if length2 < 1e-12 * len1 * (e2x * e2x + e2y * e2y + e2z * e2z):
        return -np.inf, 0.0, 0.0, 0.0
    inv = 1.0 / np.sqrt(length2)
    nx, ny, nz = nx * inv, ny * inv, nz * inv
    if nx * (p0x - pos[a, 0]) + ny * (p0y - pos[a, 1]) + nz * (p0z - pos[a, 2]) < 0.0:
        nx, ny, nz = -nx, -ny, -nz
    return nx * (q0x - p0x) + ny * (q0y - p0y) + nz * (q0z - p0z), nx, ny, nz


@njit(cache=True)
def _kept_apart(a, b, ids, pos, rotm, wpts, hull_start, normals, offsets, face_start, edge,
                edge_faces, edge_start, kept, spec, apart, p):
    """Whether the axis kept (kind, feature of the lower id's hull, of the higher's: a row of
    ``manifolds``' table, collision/axes.py) that kept rows a and b apart last step still
    separates their hulls (the world ``HullSet``'s arrays, faces in the body frame; pos and
    rotm the bodies' poses) by at least spec (m) at these poses; if so it is written into row p
    of apart (p, 3) for the next step. A call, not inlined, and given arrays, not records:
    inlined into ``_pairs_in``'s loop, or given the records, numba counted a reference of each
    of their arrays per pair (docs/architecture.md#records)."""
    swap = ids[a] > ids[b]  # the table holds the lower id first
    kind, first, second = swapped(kept[0], kept[1], kept[2], swap)
    if kind == FACE_OF_FIRST or kind == FACE_OF_SECOND:
        # _face_separation, written out: the lowest vertex of the other hull along the face's
        # normal
        if kind == FACE_OF_FIRST:
            if first >= face_start[a + 1] - face_start[a]:
                return False
            f, owner, other = face_start[a] + first, a, b
        else:
            if second >= face_start[b + 1] - face_start[b]:
                return False
            f, owner, other = face_start[b] + second, b, a
        nx, ny, nz = _moved_normal(f, owner, normals, rotm)
        lowest = 1e300
        for v in range(hull_start[other], hull_start[other + 1]):
            d = nx * wpts[v, 0] + ny * wpts[v, 1] + nz * wpts[v, 2]
            lowest = min(lowest, d)
        s = lowest - _moved_offset(f, owner, nx, ny, nz, offsets, pos)
    else:
        if (first >= edge_start[a + 1] - edge_start[a]
                or second >= edge_start[b + 1] - edge_start[b]):
            return False
        s = _edge_pair_separation(edge_start[a] + first, edge_start[b] + second, a, b, pos,
                                  rotm, wpts, hull_start, normals, edge, edge_faces, face_start)
    if s < spec:
        return False
    apart[p, 0], apart[p, 1], apart[p, 2] = swapped(kind, first, second, swap)
    return True


@njit(cache=True, inline='always')
def _edges_cannot_matter(a, b, hulls, threshold, distance):
    """Whether hulls a and b, at most distance (m) apart (GJK's upper bound), are closer than
    threshold (m) less ``EDGE_SKIP_MARGIN``, so that no edge pair can separate them by
    threshold: the separation along any axis is at most the distance. Only hulls about whose
    centres of mass a ball fits inside (``HullSet.inner_radius`` > 0), whose edge axes
    ``_edge_query`` turns outward."""
    return (distance < threshold - EDGE_SKIP_MARGIN and hulls.inner_radius[a] > 0.0
            and hulls.inner_radius[b] > 0.0)


@njit(cache=True, inline='always')
def _segments_closest(pts, i0, i1, j0, j1, out):
    """Midpoint of the closest points of segments pts[i0]pts[i1] and pts[j0]pts[j1] into out (3,)
    (Ericson, Real-Time Collision Detection §5.1.9)."""
    a = e = f = c = b = 0.0
    for k in range(3):
        d1, d2, r = pts[i1, k] - pts[i0, k], pts[j1, k] - pts[j0, k], pts[i0, k] - pts[j0, k]
        a += d1 * d1
        e += d2 * d2
        f += d2 * r
        c += d1 * r
        b += d1 * d2
    denom = a * e - b * b
    s = 0.0
    if denom > 1e-20:
        s = min(max((b * f - c * e) / denom, 0.0), 1.0)
    t = (b * s + f) / e if e > 0.0 else 0.0
    if t < 0.0:
        t = 0.0
        s = min(max(-c / a, 0.0), 1.0) if a > 0.0 else 0.0
    elif t > 1.0:
        t = 1.0
        s = min(max((b - c) / a, 0.0), 1.0) if a > 0.0 else 0.0
    for k in range(3):
        out[k] = 0.5 * (pts[i0, k] + s * (pts[i1, k] - pts[i0, k])
                        + pts[j0, k] + t * (pts[j1, k] - pts[j0, k]))


@njit(cache=True, inline='always')
def reduce_points(points, depth, count, nx, ny, nz, keep):
    """Indices (≤ 4) into points (count, 3) keeping the deepest point (least depth (count,),
    the separation, m) and the largest area about the normal (nx, ny, nz), written into keep;
    returns how many were kept."""
    if count <= MAX_MANIFOLD:
        for i in range(count):
            keep[i] = i
        return count
    first = 0
    for i in range(count):
        if depth[i] < depth[first]:
            first = i
    second, far = first, -1.0
    for i in range(count):
        d = ((points[i, 0] - points[first, 0]) ** 2 + (points[i, 1] - points[first, 1]) ** 2
             + (points[i, 2] - points[first, 2]) ** 2)
        if d > far:
            far, second = d, i
    third, area = second, 0.0
    for i in range(count):
        s = _area(points, first, second, i, nx, ny, nz)
        if abs(s) > abs(area):
            area, third = s, i
    sign = 1.0 if area >= 0.0 else -1.0  # orient the triangle counter-clockwise about n
    fourth, gain = -1, 0.0
    for i in range(count):
        for u, v in ((first, second), (second, third), (third, first)):
            s = -sign * _area(points, u, v, i, nx, ny, nz)
            if s > gain:
                gain, fourth = s, i
    keep[0], keep[1], keep[2] = first, second, third
    if third == second or third == first:
        return 2
    if fourth < 0:
        return 3
    keep[3] = fourth
    return 4


@njit(cache=True, inline='always')
def _face_contact(ref_body, inc_body, ref_face, flip, hulls, pos, rotm, spec, ids, out, out_n,
                  buf_a, buf_b, tags_a, tags_b, depth, keep):
    """Clip the incident face of inc_body against ref_face of ref_body (hulls the world
    ``HullSet``, faces in the body frame; pos and rotm the bodies' poses); emit ≤ 4 contacts
    into the ``ContactBuffer`` out from out_n on."""
    wpts, hull_start = hulls.hull_points, hulls.hull_start
    face_start, loop_start, face_vertex = hulls.face_start, hulls.face_loop_start, hulls.face_vertex
    nx, ny, nz, ref_offset = _face_plane(ref_face, ref_body, hulls, pos, rotm)
    # the incident face, the most anti-parallel to n, the first of equals among the moved
    # normals: only those whose dot product taken in inc_body's frame (n turned into it, once)
    # is within _DOT_MARGIN of the least can be it, and only they are moved and compared
    normals, lo, hi = hulls.face_normal, face_start[inc_body], face_start[inc_body + 1]
    tx, ty, tz = _turned_back(inc_body, nx, ny, nz, rotm)
    least = np.inf
    for f in range(lo, hi):
        least = min(least, normals[f, 0] * tx + normals[f, 1] * ty + normals[f, 2] * tz)
    inc, lowest = -1, 1e300
    for f in range(lo, hi):
        if normals[f, 0] * tx + normals[f, 1] * ty + normals[f, 2] * tz > least + _DOT_MARGIN:
            continue
        mx, my, mz = _moved_normal(f, inc_body, normals, rotm)
        d = mx * nx + my * ny + mz * nz
        if d < lowest:
            lowest, inc = d, f
    vi = hull_start[inc_body]
    count = 0
    for k in range(loop_start[inc], loop_start[inc + 1]):
        for a in range(3):
            buf_a[count, a] = wpts[vi + face_vertex[k], a]
        tags_a[count] = clip_tag(-1, face_vertex[k])
        count += 1
    vr = hull_start[ref_body]
    lo, hi = loop_start[ref_face], loop_start[ref_face + 1]
    src, dst, src_tags, dst_tags = buf_a, buf_b, tags_a, tags_b  # swapped after each plane
    for k in range(lo, hi):
        p = vr + face_vertex[k]
        q = vr + face_vertex[k + 1 if k + 1 < hi else lo]
        # side plane through the edge p→q, outward: (q − p) × n
        ex, ey, ez = wpts[q, 0] - wpts[p, 0], wpts[q, 1] - wpts[p, 1], wpts[q, 2] - wpts[p, 2]
        sx, sy, sz = ey * nz - ez * ny, ez * nx - ex * nz, ex * ny - ey * nx
        limit = sx * wpts[p, 0] + sy * wpts[p, 1] + sz * wpts[p, 2]
        out_count = 0
        for i in range(count):
            j = i + 1 if i + 1 < count else 0
            di = sx * src[i, 0] + sy * src[i, 1] + sz * src[i, 2] - limit
            dj = sx * src[j, 0] + sy * src[j, 1] + sz * src[j, 2] - limit
            if di <= 0.0 and out_count < _CLIP_CAPACITY:
                for a in range(3):
                    dst[out_count, a] = src[i, a]
                dst_tags[out_count] = src_tags[i]
                out_count += 1
            if (di < 0.0) != (dj < 0.0) and di != dj and out_count < _CLIP_CAPACITY:
                t = di / (di - dj)
                for a in range(3):
                    dst[out_count, a] = src[i, a] + t * (src[j, a] - src[i, a])
                dst_tags[out_count] = clip_tag(k - lo, tag_vertex(src_tags[i]))
                out_count += 1
        count = out_count
        src, dst, src_tags, dst_tags = dst, src, dst_tags, src_tags
        if count == 0:
            return out_n
    kept = 0
    for i in range(count):
        s = nx * src[i, 0] + ny * src[i, 1] + nz * src[i, 2] - ref_offset
        if s < spec:
            for a in range(3):
                buf_a[kept, a] = src[i, a]
            tags_a[kept] = src_tags[i]
            depth[kept] = s
            kept += 1
    m = reduce_points(buf_a, depth, kept, nx, ny, nz, keep)
    # normal from the second body into the first: the reference face's normal points at inc_body
    sign = 1.0 if flip else -1.0
    body, other = (ref_body, inc_body) if not flip else (inc_body, ref_body)
    local_face = ref_face - face_start[ref_body]
    for c in range(m):
        i = keep[c]
        s = depth[i]
        feature = face_feature(flip, local_face, tags_a[i])
        out_n = _emit(out, out_n, body, other, pair_key(ids[body], ids[other], feature),
                      buf_a[i, 0] - 0.5 * s * nx, buf_a[i, 1] - 0.5 * s * ny,  # midway
                      buf_a[i, 2] - 0.5 * s * nz, sign * nx, sign * ny, sign * nz, s)
    return out_n


@njit(cache=True, inline='always')
def _box_facing_face(r, direction, hulls, rotm):
    """Face of box r whose normal is direction (3,), a unit vector along one of its world axes
    (rotm (n, 3, 3) the bodies' rotations): the largest dot product with the body-frame
    normals, direction turned into the body frame once. A box's faces are 1 and ~0 (within
    ``BOX_TOLERANCE``) from it, so the rounding of either frame cannot change the face."""
    face_start, normals = hulls.face_start, hulls.face_normal
    tx, ty, tz = _turned_back(r, direction[0], direction[1], direction[2], rotm)
    best, best_face = -np.inf, -1
    for f in range(face_start[r], face_start[r + 1]):
        d = normals[f, 0] * tx + normals[f, 1] * ty + normals[f, 2] * tz
        if d > best:
            best, best_face = d, f
    return best_face


@njit(cache=True, inline='always')
def _support_edge(r, along, direction, hulls):
    """Edge of body r's hull parallel to the unit vector along (3,) whose midpoint lies farthest
    along direction (3,)."""
    wpts, hull_start = hulls.hull_points, hulls.hull_start
    edge, edge_start = hulls.edge, hulls.edge_start
    best, best_edge = -np.inf, -1
    v0 = hull_start[r]
    for e in range(edge_start[r], edge_start[r + 1]):
        i, j = v0 + edge[e, 0], v0 + edge[e, 1]
        ex, ey, ez = wpts[j, 0] - wpts[i, 0], wpts[j, 1] - wpts[i, 1], wpts[j, 2] - wpts[i, 2]
        cos = ex * along[0] + ey * along[1] + ez * along[2]
        if cos * cos < 0.5 * (ex * ex + ey * ey + ez * ez):
            continue  # a box's edges are parallel or perpendicular to each axis
        d = ((wpts[i, 0] + wpts[j, 0]) * direction[0] + (wpts[i, 1] + wpts[j, 1]) * direction[1]
             + (wpts[i, 2] + wpts[j, 2]) * direction[2])
        if d > best:
            best, best_edge = d, e
    return best_edge


@njit(cache=True, inline='always')
def _box_face(r, axis_index, sign, hulls, rotm, towards):
    """The face of box r whose outward normal is sign × its axis axis_index (collision/boxes.py)."""
    for k in range(3):
        towards[k] = sign * hulls.box_axes[r, axis_index, k]
    return _box_facing_face(r, towards, hulls, rotm)


@njit(cache=True, inline='always')
def _box_edges(a, b, ie, je, hulls, axis, towards):
    """The support edges of boxes a and b along the edge axis A_ie × B_je (axis (3,), from a to
    b): a's farthest along axis, b's farthest against it."""
    ea = _support_edge(a, hulls.box_axes[a, ie], axis, hulls)
    for k in range(3):
        towards[k] = -axis[k]
    return ea, _support_edge(b, hulls.box_axes[b, je], towards, hulls)


@njit(cache=True, nogil=True)
def _sort_pairs(pairs, bodies, hulls, h, manifolds, reach, verdict, apart):
    """What each candidate pair (p, 2) of rows of ``bodies`` (a ``BodySet``) needs this step of
    h s, before any hull is moved into the world: its speculative distance into reach (p,) m,
    and into verdict (p,) int64 the row of its reusable manifold in ``manifolds`` (≥ 0),
    ``_APART`` for a pair no contact can come from, or ``_NARROW`` for the narrow phase. hulls
    the body-frame ``HullSet``. Returns (n,) bool: the bodies whose hulls the narrow phase
    reads, so only those are moved into the world (``transform_hulls``).

    Hull pairs farther apart along the line of their centres than they can close are dismissed
    here, from the body-frame vertices: in a sparse scene most broad-phase pairs end here and
    their hulls (faces above all) are never moved. Such a pair's kept separating axis, if it
    has one, is written into its row of apart (p, 3) as it was, to be tried when the gap no
    longer suffices: only which axis to try comes from an earlier step (collision/axes.py)."""
    # the records' arrays taken out once: handed to the helpers inlined below as records,
    # numba counted a reference of each of their arrays per pair (docs/architecture.md#records);
    # so did the helpers with loops given the arrays alone (the manifold's look-up and the
    # centres' gap), whose code is therefore written out in the loop, term for term
    ids, pos, rotm, vel, omega = bodies.ids, bodies.pos, bodies.rotm, bodies.vel, bodies.omega
    radius, bound = bodies.radius, bodies.bound
    face_start, points, start = hulls.face_start, hulls.hull_points, hulls.hull_start
    centre, semi = hulls.ellipsoid_centre, hulls.ellipsoid_axes
    keys, entry, pose = manifolds.keys, manifolds.entry, manifolds.pose
    axis_keys, axes = manifolds.axis_keys, manifolds.axes
    paired = np.zeros(pos.shape[0], dtype=np.bool_)
    mask = keys.shape[0] - 1
    for p in range(pairs.shape[0]):
        a, b = pairs[p, 0], pairs[p, 1]
        reach[p] = _speculative_distance(a, b, vel, omega, bound, h)
        # manifolds.reusable_entry: the stored manifold's row if the pair's relative pose is
        # still within the thresholds of the one it was found at, else -1
        row = -1
        if mask >= 0:
            key = body_pair_key(ids[a], ids[b])
            s = hash_slot(key, mask)
            while entry[s] >= 0:  # at most half full: an empty slot is near
                if keys[s] == key:
                    row = entry[s]
                    break
                s = (s + 1) & mask
        if row >= 0:
            lo, hi = (a, b) if ids[a] < ids[b] else (b, a)
            shift = 0.0
            for i in range(3):
                r = 0.0
                for k in range(3):
                    r += rotm[lo, k, i] * (pos[hi, k] - pos[lo, k])
                shift += (r - pose[row, i]) ** 2
            trace = 0.0
            for i in range(3, 12):
                line, col = divmod(i - 3, 3)
                r = 0.0
                for k in range(3):
                    r += rotm[lo, k, line] * rotm[hi, k, col]
                trace += pose[row, i] * r
            if shift > MANIFOLD_REUSE_SHIFT * MANIFOLD_REUSE_SHIFT or trace < MIN_TRACE:
                row = -1
        verdict[p] = row
        if verdict[p] >= 0:  # barely moved against each other since their manifold was found
            continue
        verdict[p] = _NARROW
        if radius[a] > 0.0 and radius[b] > 0.0:
            continue
        if radius[a] > 0.0 or radius[b] > 0.0:
            paired[b if radius[a] > 0.0 else a] = True
        elif face_start[a] == face_start[a + 1] or face_start[b] == face_start[b + 1]:
            verdict[p] = _APART  # a point or segment hull has no faces: walls only
        else:
            # the hulls' gap along the line of their centres: any axis's gap is a lower bound
            # on the distance between two convex sets, and this one costs a pass over the
            # vertices (the full SAT: faces × vertices plus edge pairs), so the many broad-phase
            # pairs of a sparse scene whose bounding spheres merely touch are dismissed here.
            # Read from the body-frame vertices, the axis turned into each body's frame (Rᵀ d),
            # so no hull need be moved for it. Where a hull has an enclosing ellipsoid tighter
            # than its bounding sphere, that bounds its extent along the axis first
            # (c·e − |diag(s) e| ≤ its lowest vertex; the sphere: −bound): a pair whose gap
            # between the bounds is at least the reach by _FAR_MARGIN (far above the two
            # computations' rounding) is one the vertices would dismiss too, and their scans are
            # skipped. Two spheres alone cannot: the broad phase found them within reach
            d0, d1, d2 = pos[a, 0] - pos[b, 0], pos[a, 1] - pos[b, 1], pos[a, 2] - pos[b, 2]
            length = np.sqrt(d0 * d0 + d1 * d1 + d2 * d2)
            gap = -np.inf
            if length >= 1e-12:
                d0, d1, d2 = d0 / length, d1 / length, d2 / length
                # a lies on the +d side of b: its lowest point along d against b's highest
                e0, e1, e2 = _turned_back(a, d0, d1, d2, rotm)
                f0, f1, f2 = _turned_back(b, -d0, -d1, -d2, rotm)
                if semi[a, 0] > 0.0 or semi[b, 0] > 0.0:
                    low_a, low_b = -bound[a], -bound[b]
                    if semi[a, 0] > 0.0:
                        low_a = (e0 * centre[a, 0] + e1 * centre[a, 1] + e2 * centre[a, 2]
                                 - np.sqrt((e0 * semi[a, 0]) ** 2 + (e1 * semi[a, 1]) ** 2
                                           + (e2 * semi[a, 2]) ** 2))
                    if semi[b, 0] > 0.0:
                        low_b = (f0 * centre[b, 0] + f1 * centre[b, 1] + f2 * centre[b, 2]
                                 - np.sqrt((f0 * semi[b, 0]) ** 2 + (f1 * semi[b, 1]) ** 2
                                           + (f2 * semi[b, 2]) ** 2))
                    gap = length + low_a + low_b
                if gap < reach[p] + _FAR_MARGIN:  # the bounds leave it open: the vertices
                    lowest = np.inf
                    for v in range(start[a], start[a + 1]):
                        lowest = min(lowest, points[v, 0] * e0 + points[v, 1] * e1
                                     + points[v, 2] * e2)
                    low = d0 * pos[a, 0] + d1 * pos[a, 1] + d2 * pos[a, 2] + lowest
                    lowest = np.inf
                    for v in range(start[b], start[b + 1]):
                        lowest = min(lowest, points[v, 0] * f0 + points[v, 1] * f1
                                     + points[v, 2] * f2)
                    high = d0 * pos[b, 0] + d1 * pos[b, 1] + d2 * pos[b, 2] - lowest
                    gap = low - high
            if gap >= reach[p]:
                verdict[p] = _APART  # farther apart than the step can close: no contact at all
                # manifolds' kept_axis, written out
                slot = -1
                if axis_keys.shape[0]:
                    key = body_pair_key(ids[a], ids[b])
                    s = hash_slot(key, axis_keys.shape[0] - 1)
                    while axes[s, 0] != NO_AXIS:  # at most half full: an empty slot is near
                        if axis_keys[s] == key:
                            slot = s
                            break
                        s = (s + 1) & (axis_keys.shape[0] - 1)
                if slot >= 0:
                    for i in range(3):
                        apart[p, i] = axes[slot, i]
            else:
                paired[a] = paired[b] = True
    return paired


@njit(cache=True, inline='always')
def _speculative_distance(a, b, vel, omega, bound, h):
    """The gap (m) within which rows a and b (vel (n, 3) m/s, omega (n, 3) rad/s, bounding radii
    bound (n,) m) make (speculative) contacts this step of h s: the margin plus
    ``REACH_STEPS`` steps of their fastest points' approach."""
    rel = np.sqrt((vel[a, 0] - vel[b, 0]) ** 2 + (vel[a, 1] - vel[b, 1]) ** 2
                  + (vel[a, 2] - vel[b, 2]) ** 2)
    spin = (bound[a] * np.sqrt(_dot(omega, a, omega, a))
            + bound[b] * np.sqrt(_dot(omega, b, omega, b)))
    return SPECULATIVE_MARGIN + REACH_STEPS * h * (rel + spin)


@njit(cache=True, nogil=True)
def _pairs_in(pairs, bodies, hulls, h, manifolds, out, apart, reach, verdict):
    """Contacts of the candidate pairs (p, 2) of rows of ``bodies`` (a ``BodySet``) with world
    hulls ``hulls`` (a ``HullSet``) for a step of h s, as ``_sort_pairs`` left them (reach,
    verdict (p,)): the pairs whose manifold in ``manifolds`` (a ``ManifoldCache``) can be
    reused carried along, the rest found, into the ``ContactBuffer`` out (room for
    MAX_MANIFOLD per pair); returns their count. The axis that kept a hull pair apart goes
    into its row of apart (p, 3) (``axes.unfound``'s layout), tried first the next step
    (``manifolds``' axes)."""
    pos, rotm = bodies.pos, bodies.rotm
    ids, radius = bodies.ids, bodies.radius
    wpts, normals, face_start = hulls.hull_points, hulls.face_normal, hulls.face_start
    hull_start, edge, edge_start = hulls.hull_start, hulls.edge, hulls.edge_start
    axis_keys, kept_axes = manifolds.axis_keys, manifolds.axes
    out_n = 0
    q = np.empty(3)
    c = np.empty(3)
    axis = np.empty(3)
    mid = np.empty(3)
    buf_a = np.empty((_CLIP_CAPACITY, 3))
    buf_b = np.empty((_CLIP_CAPACITY, 3))
    tags_a = np.empty(_CLIP_CAPACITY, dtype=np.int64)
    tags_b = np.empty(_CLIP_CAPACITY, dtype=np.int64)
    depth = np.empty(_CLIP_CAPACITY)
    keep = np.empty(MAX_MANIFOLD, dtype=np.int64)
    arcs, kept = np.empty((10, _MAX_EDGES)), np.empty(_MAX_EDGES, dtype=np.int64)
    dots, towards = np.empty((3, 3)), np.empty(3)
    simplex, witness = np.empty((4, 3)), np.empty((2, 3))
    weight, trial = np.empty(4), np.empty(4)
    rows = np.empty((4, 2), dtype=np.int64)
    bounds, planes = np.empty(_MAX_FACES), np.empty((_MAX_FACES, 4))
    moved = np.empty((2, _MAX_FACES, 3))
    for p in range(pairs.shape[0]):
        a, b = pairs[p, 0], pairs[p, 1]
        if verdict[p] == _APART:
            continue
        if verdict[p] >= 0:  # the stored manifold, carried along
            out_n = emit_stored(verdict[p], a, b, bodies, manifolds, out, out_n)
            continue
        spec = reach[p]
        if radius[a] > 0.0 and radius[b] > 0.0:
            d = pos[a] - pos[b]
            dist = np.sqrt((d ** 2).sum())
            s = dist - radius[a] - radius[b]
            if s >= spec:
                continue
            nrm = d / dist if dist > 1e-12 else np.array([0.0, 1.0, 0.0])
            pt = pos[b] + (radius[b] + 0.5 * s) * nrm
            out_n = _emit(out, out_n, a, b, pair_key(ids[a], ids[b], SPHERE), pt[0], pt[1],
                          pt[2], nrm[0], nrm[1], nrm[2], s)
        elif radius[a] > 0.0 or radius[b] > 0.0:
            ball, hull = (a, b) if radius[a] > 0.0 else (b, a)
            c[:] = pos[ball]
            # a ball farther from a face plane than its radius and the reach is dismissed
            # before the faces' and edges' closest points: the distance is at least the
            # plane's, and the margin (far above the rounding of either) keeps s ≥ spec
            # wherever the closest point would have given it, so no pair's verdict changes
            dist, face = _closest_on_hull(c, hull, hulls, pos, rotm, planes, q,
                                          spec + radius[ball] + _FAR_MARGIN)
            s = dist - radius[ball]
            if s >= spec:
                continue
            if face >= 0:
                nrm = planes[face, :3].copy()
            elif dist > 1e-12:
                nrm = (c - q) / dist
            else:
                continue
            pt = q + 0.5 * s * nrm
            # nrm points from the hull to the ball; the first body must be the ball
            out_n = _emit(out, out_n, ball, hull, pair_key(ids[ball], ids[hull], SPHERE), pt[0],
                          pt[1], pt[2], nrm[0], nrm[1], nrm[2], s)
        else:
            # the axis that kept them apart last step, if it still does, ends the pair here
            # (axes.kept_axis, written out: docs/architecture.md#records)
            slot = -1
            if axis_keys.shape[0]:
                key = body_pair_key(ids[a], ids[b])
                probe = hash_slot(key, axis_keys.shape[0] - 1)
                while kept_axes[probe, 0] != NO_AXIS:  # at most half full: an empty slot is near
                    if axis_keys[probe] == key:
                        slot = probe
                        break
                    probe = (probe + 1) & (axis_keys.shape[0] - 1)
            if slot >= 0 and _kept_apart(a, b, ids, pos, rotm, wpts, hull_start, normals,
                                         hulls.face_offset, face_start, edge,
                                         hulls.edge_faces, edge_start, kept_axes[slot], spec,
                                         apart, p):
                continue
            # what _face_query (both ways) and _edge_query find; two boxes get the separations
            # in closed form (collision/boxes.py) and only the winning axis's hull features, below
            boxes = hulls.box_half[a, 0] > 0.0 and hulls.box_half[b, 0] > 0.0
            ia = ib = ie = je = 0
            sign_a = sign_b = 1.0
            fa = fb = ea = eb = -1
            if boxes:
                sa, ia, sign_a, sb, ib, sign_b, se, ie, je = box_separations(
                    a, b, hulls.box_axes, hulls.box_centre, hulls.box_half, dots, axis)
                if sa >= spec or sb >= spec or se >= spec:
                    continue
            else:
                # the axis that shows them apart is kept for the next step (collision/axes.py)
                swap = ids[a] > ids[b]
                # the distance and the closest points bound every axis's separation; b's faces
                # matter only where they separate more than a's: searched above sa
                # (docs/physics.md#edge-pairs-bounded-by-the-distance)
                distance, _ = hull_distance(a, b, hulls, pos[a, 0] - pos[b, 0],
                                            pos[a, 1] - pos[b, 1], pos[a, 2] - pos[b, 2],
                                            -np.inf, np.inf, simplex, rows, witness, weight,
                                            trial)
                if distance > 0.0:
                    sa, fa = _face_query(a, b, pos, rotm, hulls, -1e300, witness[1], bounds)
                else:
                    sa, fa = _face_query(a, b, pos, rotm, hulls)
                if sa >= spec:
                    remember(apart[p], FACE_OF_FIRST, fa - face_start[a], -1, swap)
                    continue
                if distance > 0.0:
                    sb, fb = _face_query(b, a, pos, rotm, hulls, sa, witness[0], bounds)
                else:
                    sb, fb = _face_query(b, a, pos, rotm, hulls, sa)
                if sb >= spec:
                    remember(apart[p], FACE_OF_SECOND, -1, fb - face_start[b], swap)
                    continue
                if _edges_cannot_matter(a, b, hulls, min(spec, max(sa, sb) + FACE_PREFERENCE),
                                        distance):
                    se = -np.inf
                elif distance > 0.0:  # bounded by the closest points, as the faces were
                    se, ea, eb = _edge_query(a, b, pos, rotm, hulls, spec, max(sa, sb), arcs,
                                             kept, moved, axis, witness)
                else:
                    se, ea, eb = _edge_query(a, b, pos, rotm, hulls, spec, max(sa, sb), arcs,
                                             kept, moved, axis)
                if se >= spec:
                    remember(apart[p], EDGES, ea - edge_start[a], eb - edge_start[b], swap)
                    continue
            if se > max(sa, sb) + FACE_PREFERENCE:
                if boxes:
                    ea, eb = _box_edges(a, b, ie, je, hulls, axis, towards)
                va, vb = hull_start[a], hull_start[b]
                _segments_closest(wpts, va + edge[ea, 0], va + edge[ea, 1], vb + edge[eb, 0],
                                  vb + edge[eb, 1], mid)
                feature = edge_feature(ea - edge_start[a], eb - edge_start[b])
                out_n = _emit(out, out_n, a, b, pair_key(ids[a], ids[b], feature), mid[0],
                              mid[1], mid[2], -axis[0], -axis[1], -axis[2], se)
            elif sb > sa + FACE_PREFERENCE:
                if boxes:
                    fb = _box_face(b, ib, sign_b, hulls, rotm, towards)
                out_n = _face_contact(b, a, fb, True, hulls, pos, rotm, spec, ids, out, out_n,
                                      buf_a, buf_b, tags_a, tags_b, depth, keep)
            else:
                if boxes:
                    fa = _box_face(a, ia, sign_a, hulls, rotm, towards)
                out_n = _face_contact(a, b, fa, False, hulls, pos, rotm, spec, ids, out, out_n,
                                      buf_a, buf_b, tags_a, tags_b, depth, keep)
    return out_n


def world_hulls(pos, rotm, model, rows) -> HullSet:
    """The model's hulls in the world (``HullSet``: vertices moved, and the boxes' axes as rows
    and centres; the faces' planes and the inner radii stay in the body frame, the narrow phase
    moving the few planes it reads; the topology is the model's), only the bodies ``rows`` (k,)
    filled in (the rest is garbage), so a sparse scene transforms just the few hulls the broad
    phase paired. The record is the model's buffer, valid until the next call.

    pos (n, 3) m; rotm (n, 3, 3) principal → world; model: the ``Model`` holding the hulls."""
    world = model.world_hulls_buffer
    transform_hulls(rows, pos, rotm, model.hulls, world)
    return world


@njit(cache=True, nogil=True)
def transform_hulls(rows, pos, rotm, body, world):
    """Fill in the world ``HullSet`` world of the rows (k,) from the body-frame one body: the
    vertices, and a box's axes and centre. The faces are not moved: a 64-vertex hull has ~124
    of them, and the face queries bound them in the body frame and move only the one or two
    they project (docs/physics.md#faces-moved-on-demand).

    The rotation and the position are read into scalars once per body: read from their arrays
    in the loops, they were read again after every store (the compiler cannot tell the arrays
    apart), a dozen loads a vertex. The arithmetic is the same, term for term."""
    hull_start, hull_points = body.hull_start, body.hull_points
    body_box_axes, body_box_centre, box_half = body.box_axes, body.box_centre, body.box_half
    points, box_axes, box_centre = world.hull_points, world.box_axes, world.box_centre
    for r in rows:
        r00, r01, r02 = rotm[r, 0, 0], rotm[r, 0, 1], rotm[r, 0, 2]
        r10, r11, r12 = rotm[r, 1, 0], rotm[r, 1, 1], rotm[r, 1, 2]
        r20, r21, r22 = rotm[r, 2, 0], rotm[r, 2, 1], rotm[r, 2, 2]
        p0, p1, p2 = pos[r, 0], pos[r, 1], pos[r, 2]
        for v in range(hull_start[r], hull_start[r + 1]):
            x, y, z = hull_points[v, 0], hull_points[v, 1], hull_points[v, 2]
            points[v, 0] = p0 + (r00 * x + r01 * y + r02 * z)
            points[v, 1] = p1 + (r10 * x + r11 * y + r12 * z)
            points[v, 2] = p2 + (r20 * x + r21 * y + r22 * z)
        if box_half[r, 0] == 0.0:  # not a box: its box fields are never read
            continue
        for i in range(3):
            box_centre[r, i] = pos[r, i] + (rotm[r, i, 0] * body_box_centre[r, 0]
                                            + rotm[r, i, 1] * body_box_centre[r, 1]
                                            + rotm[r, i, 2] * body_box_centre[r, 2])
            for k in range(3):  # the body frame stores the axes as columns
                box_axes[r, k, i] = (rotm[r, i, 0] * body_box_axes[r, 0, k]
                                     + rotm[r, i, 1] * body_box_axes[r, 1, k]
                                     + rotm[r, i, 2] * body_box_axes[r, 2, k])


def body_contacts(pairs, pos, rotm, vel, omega, model, h) -> Contacts:
    """Contacts between the candidate pairs (p, 2) of body rows from the broad phase, in pair
    order whatever the number of threads, every manifold found afresh.

    pos (n, 3) m; rotm (n, 3, 3); vel (n, 3) m/s and omega (n, 3) rad/s the velocities the step
    will move with (for the speculative distance); model the ``Model``; h the step, s.
    """
    return pair_contacts(pairs, pos, rotm, vel, omega, model, h, ManifoldCache())[0]


def pair_contacts(pairs, pos, rotm, vel, omega, model, h,
                  manifolds: ManifoldCache) -> tuple[Contacts, ManifoldCache]:
    """``body_contacts``, carrying along the manifolds of the last step's touching pairs that
    have barely moved against each other since (collision/manifolds.py) and trying first the
    axis that kept a hull pair apart last step (collision/axes.py); returns the contacts and
    the ``ManifoldCache`` to keep for the next step."""
    pairs = np.ascontiguousarray(pairs, dtype=np.int64).reshape(-1, 2)
    # named records, as the step's compiled call passes them: the same compiled code
    # (docs/architecture.md#records)
    bodies = BodySet(model.ids, model.radius, model.bound_radius, pos, rotm, vel, omega)
    return find_pair_contacts(pairs, bodies, model.hulls, model.world_hulls_buffer, float(h),
                              manifolds, parallel_threads())


@njit(cache=True, nogil=True)
def find_pair_contacts(pairs, bodies, hulls, world, h, manifolds, threads):
    """``pair_contacts`` for compiled callers: the candidate pairs (p, 2) of rows of the
    ``BodySet`` bodies, their hulls ``hulls`` (body frame) moved into the buffer ``world``
    (both ``HullSet``s), on up to ``threads`` threads; returns (``Contacts``,
    ``ManifoldCache``)."""
    if not len(pairs):  # nothing to find and nothing to keep (a heap of compound bodies)
        return buffer_contacts(allocate_buffer(0, True), 0), _no_manifolds()
    out = allocate_buffer(MAX_MANIFOLD * len(pairs), True)
    apart = unfound(len(pairs))
    reach, verdict = np.empty(len(pairs)), np.empty(len(pairs), dtype=np.int64)
    paired = _sort_pairs(pairs, bodies, hulls, h, manifolds, reach, verdict, apart)
    transform_hulls(np.flatnonzero(paired), bodies.pos, bodies.rotm, hulls, world)
    # pairs are independent: chunks of them go to the threads, each chunk writing its contacts
    # into its own stretch of the output (MAX_MANIFOLD per pair), packed after
    chunks = min(threads, len(pairs) // PAIRS_PER_CHUNK)
    if chunks < 2:
        count = _pairs_in(pairs, bodies, world, h, manifolds, out, apart, reach, verdict)
    else:
        bounds = chunk_bounds(len(pairs), chunks)
        counts = np.zeros(chunks, dtype=np.int64)
        _pair_chunks(bounds, pairs, bodies, world, h, manifolds, out, apart, reach, verdict,
                     counts)
        count = _pack(bounds, counts, out)
    found = ContactBuffer(out.body[:count], out.other[:count], out.key[:count],
                          out.point[:count], out.normal[:count], out.sep[:count],
                          out.source[:count])
    return (buffer_contacts(found, count),
            manifold_cache(found, bodies, manifolds, pairs, apart))


@njit(cache=True, nogil=True)
def _no_manifolds():
    """An empty ``ManifoldCache`` (as ``ManifoldCache()`` makes)."""
    rows = np.zeros(0, dtype=np.int64)
    return ManifoldCache(rows, rows, np.zeros((0, 12)), rows, rows, np.zeros(0, dtype=np.bool_),
                         rows, np.zeros((0, 9)), rows, np.zeros((0, 3), dtype=np.int64))


@njit(cache=True, nogil=True, parallel=True)
def _pair_chunks(bounds, pairs, bodies, hulls, h, manifolds, out, apart, reach, verdict,
                 counts):
    """``_pairs_in`` on the chunks pairs[bounds[t]:bounds[t + 1]] side by side; chunk t
    writes from contact MAX_MANIFOLD · bounds[t] on (and its pairs' rows of apart) and leaves
    its count in counts[t]."""
    for t in prange(len(bounds) - 1):
        lo, hi = bounds[t], bounds[t + 1]
        first, last = MAX_MANIFOLD * lo, MAX_MANIFOLD * hi
        stretch = ContactBuffer(out.body[first:last], out.other[first:last],
                                out.key[first:last], out.point[first:last],
                                out.normal[first:last], out.sep[first:last],
                                out.source[first:last])
        counts[t] = _pairs_in(pairs[lo:hi], bodies, hulls, h, manifolds, stretch, apart[lo:hi],
                              reach[lo:hi], verdict[lo:hi])


@njit(cache=True, nogil=True)
def _pack(bounds, counts, out):
    """Move each chunk's contacts in the ``ContactBuffer`` out down to follow the previous
    chunk's; returns the total."""
    body, other, key, point, normal, sep, source = out
    count = 0
    for t in range(len(counts)):
        first = MAX_MANIFOLD * bounds[t]
        for i in range(first, first + counts[t]):
            body[count], other[count], key[count], sep[count] = body[i], other[i], key[i], sep[i]
            source[count] = source[i]
            for a in range(3):
                point[count, a] = point[i, a]
                normal[count, a] = normal[i, a]
            count += 1
    return count
