"""Distance between two convex hulls by GJK (docs/physics.md#edge-pairs-bounded-by-the-distance).

Gilbert, Johnson and Keerthi's iteration on the Minkowski difference A − B of two hulls of a
world ``HullSet``: a simplex of up to four points a − b (a vertex of each hull) is moved
towards the origin, each step adding the difference's support point against the simplex's
closest point v and keeping the smallest face of the simplex that still holds the closest
point (Ericson, *Real-Time Collision Detection* §9.5 and §5.1.5–5.1.6 for the closest points;
Jolt's ``GJKClosestPoint`` and Box2D v3's ``b2ShapeDistance`` do the same).

Both ends of the answer are bounds that hold whatever the number of iterations: |v| is the
length of a point of the difference, so the distance is at most |v|; v·w/|v|, w the support
point against v, is the gap along the unit vector v/|v|, so the distance is at least that.
A caller that needs only to compare the distance with a threshold stops as soon as either
bound settles it, and only rounding separates the two bounds from the exact distance when the
iteration runs to its end.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from physics.settings import GJK_MAX_ITERATIONS, GJK_TOLERANCE


@njit(cache=True, inline='always')
def support_vertex(r, dx, dy, dz, points, start):
    """Row of points (the hulls' vertices, (v, 3)) of hull r's vertex farthest along
    (dx, dy, dz); start (n+1,) the hulls' first rows. The first of equals wins.

    The hull's rows are taken as a slice and counted from 0: indexed by a row read from
    start, which could be negative as far as the compiler knows, every access paid numba's
    wrap-around of negative indices (~15 % of the search)."""
    first = start[r]
    rows = points[first:start[r + 1]]
    best, best_k = -np.inf, 0
    for k in range(rows.shape[0]):
        d = rows[k, 0] * dx + rows[k, 1] * dy + rows[k, 2] * dz
        if d > best:
            best, best_k = d, k
    return first + best_k


@njit(cache=True, inline='always')
def _dot3(s, i, j):
    """simplex[i]·simplex[j] for rows of the (4, 3) simplex s."""
    return s[i, 0] * s[j, 0] + s[i, 1] * s[j, 1] + s[i, 2] * s[j, 2]


@njit(cache=True)
def _closest_on_triangle(s, i, j, k, weight):
    """Barycentric weights (into weight (4,), rows i, j, k; the rest untouched) of the point of
    the triangle s[i] s[j] s[k] closest to the origin (Ericson §5.1.5, the query point at 0)."""
    # a, b, c = s[i], s[j], s[k]; Ericson's d1…d6 with p = 0: ab·(−a), ac·(−a), ab·(−b), …
    d1 = -(_dot3(s, j, i) - _dot3(s, i, i))
    d2 = -(_dot3(s, k, i) - _dot3(s, i, i))
    weight[i], weight[j], weight[k] = 0.0, 0.0, 0.0
    if d1 <= 0.0 and d2 <= 0.0:
        weight[i] = 1.0
        return
    d3 = -(_dot3(s, j, j) - _dot3(s, i, j))
    d4 = -(_dot3(s, k, j) - _dot3(s, i, j))
    if d3 >= 0.0 and d4 <= d3:
        weight[j] = 1.0
        return
    vc = d1 * d4 - d3 * d2
    if vc <= 0.0 and d1 >= 0.0 and d3 <= 0.0:
        t = d1 / (d1 - d3)
        weight[i], weight[j] = 1.0 - t, t
        return
    d5 = -(_dot3(s, j, k) - _dot3(s, i, k))
    d6 = -(_dot3(s, k, k) - _dot3(s, i, k))
    if d6 >= 0.0 and d5 <= d6:
        weight[k] = 1.0
        return
    vb = d5 * d2 - d1 * d6
    if vb <= 0.0 and d2 >= 0.0 and d6 <= 0.0:
        t = d2 / (d2 - d6)
        weight[i], weight[k] = 1.0 - t, t
        return
    va = d3 * d6 - d5 * d4
    if va <= 0.0 and d4 - d3 >= 0.0 and d5 - d6 >= 0.0:
        t = (d4 - d3) / ((d4 - d3) + (d5 - d6))
        weight[j], weight[k] = 1.0 - t, t
        return
    denom = 1.0 / (va + vb + vc)
    weight[j], weight[k] = vb * denom, vc * denom
    weight[i] = 1.0 - weight[j] - weight[k]


@njit(cache=True)
def _closest_on_segment(s, i, j, weight):
    """Barycentric weights (rows i, j of weight) of the point of segment s[i] s[j] closest to
    the origin."""
    ex, ey, ez = s[j, 0] - s[i, 0], s[j, 1] - s[i, 1], s[j, 2] - s[i, 2]
    length2 = ex * ex + ey * ey + ez * ez
    t = 0.0
    if length2 > 0.0:
        t = min(max(-(s[i, 0] * ex + s[i, 1] * ey + s[i, 2] * ez) / length2, 0.0), 1.0)
    weight[i], weight[j] = 1.0 - t, t


@njit(cache=True)
def _outside_face(s, i, j, k, m):
    """Whether the origin and s[m] lie on opposite sides of the plane of s[i] s[j] s[k]
    (Ericson §5.1.6); a flat tetrahedron counts every face as one the origin is outside."""
    ux, uy, uz = s[j, 0] - s[i, 0], s[j, 1] - s[i, 1], s[j, 2] - s[i, 2]
    wx, wy, wz = s[k, 0] - s[i, 0], s[k, 1] - s[i, 1], s[k, 2] - s[i, 2]
    nx, ny, nz = uy * wz - uz * wy, uz * wx - ux * wz, ux * wy - uy * wx
    origin = -(nx * s[i, 0] + ny * s[i, 1] + nz * s[i, 2])
    other = nx * (s[m, 0] - s[i, 0]) + ny * (s[m, 1] - s[i, 1]) + nz * (s[m, 2] - s[i, 2])
    if other == 0.0:
        return True
    return origin * other < 0.0


@njit(cache=True)
def _closest_in_simplex(s, count, weight, trial):
    """Weights (count,) in weight (4,) of the point of the simplex s[:count] (4, 3) closest to
    the origin; trial (4,) scratch. Returns False when the origin lies inside a tetrahedron
    (the hulls overlap)."""
    if count == 1:
        weight[0] = 1.0
    elif count == 2:
        _closest_on_segment(s, 0, 1, weight)
    elif count == 3:
        _closest_on_triangle(s, 0, 1, 2, weight)
    else:
        best, inside = np.inf, True
        for i, j, k, m in ((0, 1, 2, 3), (0, 1, 3, 2), (0, 2, 3, 1), (1, 2, 3, 0)):
            if not _outside_face(s, i, j, k, m):
                continue
            inside = False
            trial[m] = 0.0
            _closest_on_triangle(s, i, j, k, trial)
            px = trial[i] * s[i, 0] + trial[j] * s[j, 0] + trial[k] * s[k, 0]
            py = trial[i] * s[i, 1] + trial[j] * s[j, 1] + trial[k] * s[k, 1]
            pz = trial[i] * s[i, 2] + trial[j] * s[j, 2] + trial[k] * s[k, 2]
            d2 = px * px + py * py + pz * pz
            if d2 < best:
                best = d2
                for q in range(4):
                    weight[q] = trial[q]
        if inside:
            return False
    return True


@njit(cache=True)
def hull_distance(a, b, hulls, dx, dy, dz, below, above, simplex, rows, witness, weight, trial):
    """Distance (m) between hulls a and b of the world ``HullSet`` hulls by GJK, started along
    (dx, dy, dz) (the direction from b towards a, e.g. between their centres). Returns (upper,
    lower): bounds on the distance, 0 and 0 if the hulls overlap.

    The iteration stops once the bounds settle a comparison with the thresholds: the distance
    is below ``below`` (upper < below) or at least ``above`` (lower ≥ above); pass −inf and inf
    to run until the bounds meet within ``GJK_TOLERANCE`` (relative). simplex (4, 3), rows
    (4, 2) int64, weight (4,) and trial (4,) are scratch (the simplex's points, the vertex rows
    of a and b they come from, their barycentric weights; the caller's, so that a pair costs no
    allocation); witness (2, 3) receives a point of each hull, a's first, whose distance is the
    upper bound (left as it was if the hulls overlap)."""
    points, start = hulls.hull_points, hulls.hull_start
    weight[:] = 0.0
    trial[:] = 0.0
    count = 0
    vx, vy, vz = dx, dy, dz
    if vx == 0.0 and vy == 0.0 and vz == 0.0:
        vx = 1.0
    upper2, lower = np.inf, 0.0
    for _ in range(GJK_MAX_ITERATIONS):
        # support point of A − B against v: A's farthest along −v less B's farthest along v
        pa = support_vertex(a, -vx, -vy, -vz, points, start)
        pb = support_vertex(b, vx, vy, vz, points, start)
        wx, wy, wz = (points[pa, 0] - points[pb, 0], points[pa, 1] - points[pb, 1],
                      points[pa, 2] - points[pb, 2])
        if count:  # the gap along v/|v| bounds the distance from below
            lower = max(lower, (vx * wx + vy * wy + vz * wz) / np.sqrt(upper2))
            if lower >= above or upper2 - lower * np.sqrt(upper2) <= GJK_TOLERANCE * upper2:
                break
        simplex[count, 0], simplex[count, 1], simplex[count, 2] = wx, wy, wz
        rows[count, 0], rows[count, 1] = pa, pb
        count += 1
        if not _closest_in_simplex(simplex, count, weight, trial):
            return 0.0, 0.0
        # keep the points that hold the closest one; it becomes the new v
        vx = vy = vz = 0.0
        kept = 0
        for q in range(count):
            if weight[q] > 0.0:
                vx += weight[q] * simplex[q, 0]
                vy += weight[q] * simplex[q, 1]
                vz += weight[q] * simplex[q, 2]
                simplex[kept] = simplex[q]
                rows[kept, 0], rows[kept, 1], weight[kept] = rows[q, 0], rows[q, 1], weight[q]
                kept += 1
        count = kept
        length2 = vx * vx + vy * vy + vz * vz
        if length2 == 0.0:
            return 0.0, 0.0
        if length2 >= upper2:  # no progress: rounding has the last word
            break
        upper2 = length2
        for k in range(3):
            witness[0, k] = witness[1, k] = 0.0
            for q in range(count):
                witness[0, k] += weight[q] * points[rows[q, 0], k]
                witness[1, k] += weight[q] * points[rows[q, 1], k]
        if np.sqrt(upper2) < below:
            break
    return np.sqrt(upper2), min(lower, np.sqrt(upper2))
