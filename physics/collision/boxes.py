"""Boxes among the convex hulls: recognised when a body is added, and their separating-axis test
in closed form.

A hull with 8 vertices and 6 faces in 3 perpendicular pairs is a box with axes A_k, half extents
h_k and a centre c. Its extent along a unit axis L is Σ h_k |A_k·L|, so the 15 axes of the
box–box SAT (the 3 + 3 face normals and the 9 products A_i × B_j; Gottschalk, Lin & Manocha,
"OBBTree", SIGGRAPH 1996; ODE's dBoxBox) cost a few dot products each, with no loop over vertices
or edge pairs. The separations are the ones collision/narrowphase.py's general queries find: a
face's is the
same support gap, and the edge pairs of two boxes that form Minkowski faces (Gregorius' Gauss-map
test) are exactly their support edges along ±A_i × B_j. So collision/narrowphase.py takes from here
only which
axis separates most and by how much, and builds the contacts from the same hull features as
for any other hull.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from physics.geometry.polytope import Polytope
from physics.settings import BOX_TOLERANCE

PARALLEL_SINE2 = 1e-12    # |A_i × B_j|² below this: parallel edges, whose axis is a face's


def box_frame(vertices: np.ndarray, top: Polytope):
    """(axes (3, 3) unit columns, half extents (3,) m, centre (3,) m) of a hull that is a box,
    in the frame of ``vertices`` (k, 3); None for any other hull. ``top`` is its topology."""
    if len(vertices) != 8 or len(top.face_normal) != 6:
        return None
    axes = []
    for normal in top.face_normal:
        if all(abs(normal @ axis) < 1.0 - BOX_TOLERANCE for axis in axes):
            axes.append(normal)
    if len(axes) != 3:
        return None
    axes = np.array(axes).T
    if np.abs(axes.T @ axes - np.eye(3)).max() > BOX_TOLERANCE:
        return None
    along = vertices @ axes                                                 # (8, 3)
    low, high = along.min(axis=0), along.max(axis=0)
    half, middle = (high - low) / 2, (high + low) / 2
    # every vertex must be a corner: ±h_k from the middle along each axis
    scale = max(half.max(), 1e-300)
    if np.abs(np.abs(along - middle) - half).max() > BOX_TOLERANCE * scale:
        return None
    return axes, half, axes @ middle


@njit(cache=True, inline='always')
def box_separations(a, b, axes, centre, half, dots, axis):
    """The box–box SAT of bodies a and b (both boxes): returns
    (sa, ia, sign_a, sb, ib, sign_b, se, ie, je).

    sa: largest separation, m, along a face normal of a: that of a's axis ia, the face facing b
    having outward normal sign_a·A_ia; sb, ib, sign_b the same for b's faces (facing a);
    se: largest separation over the edge axes A_ie × B_je (−inf if all are parallel), with that
    unit axis, pointing from a to b, in axis (3,). axes (n, 3, 3) world box axes (row k is axis
    k) and centre (n, 3) m, filled for a and b; half (n, 3) half extents m; dots (3, 3) scratch.
    """
    # half extents read as half[a, i], not through row views (each view costs numba a
    # reference count, and this runs for every box pair)
    tx, ty, tz = (centre[b, 0] - centre[a, 0], centre[b, 1] - centre[a, 1],
                  centre[b, 2] - centre[a, 2])
    for i in range(3):
        for j in range(3):
            dots[i, j] = abs(axes[a, i, 0] * axes[b, j, 0] + axes[a, i, 1] * axes[b, j, 1]
                             + axes[a, i, 2] * axes[b, j, 2])
    sa, ia, sign_a = -np.inf, 0, 1.0
    for i in range(3):
        t = tx * axes[a, i, 0] + ty * axes[a, i, 1] + tz * axes[a, i, 2]
        s = abs(t) - half[a, i] - (half[b, 0] * dots[i, 0] + half[b, 1] * dots[i, 1]
                                   + half[b, 2] * dots[i, 2])
        if s > sa:
            sa, ia, sign_a = s, i, (1.0 if t >= 0.0 else -1.0)
    sb, ib, sign_b = -np.inf, 0, 1.0
    for j in range(3):
        t = tx * axes[b, j, 0] + ty * axes[b, j, 1] + tz * axes[b, j, 2]
        s = abs(t) - half[b, j] - (half[a, 0] * dots[0, j] + half[a, 1] * dots[1, j]
                                   + half[a, 2] * dots[2, j])
        if s > sb:
            sb, ib, sign_b = s, j, (-1.0 if t >= 0.0 else 1.0)
    se, ie, je = -np.inf, -1, -1
    for i in range(3):
        i1, i2 = (i + 1) % 3, (i + 2) % 3
        for j in range(3):
            j1, j2 = (j + 1) % 3, (j + 2) % 3
            lx = axes[a, i, 1] * axes[b, j, 2] - axes[a, i, 2] * axes[b, j, 1]
            ly = axes[a, i, 2] * axes[b, j, 0] - axes[a, i, 0] * axes[b, j, 2]
            lz = axes[a, i, 0] * axes[b, j, 1] - axes[a, i, 1] * axes[b, j, 0]
            length2 = lx * lx + ly * ly + lz * lz
            if length2 < PARALLEL_SINE2:
                continue
            # |A_k·(A_i × B_j)| = |A_m·B_j| and |B_k·(A_i × B_j)| = |A_i·B_m| for the third
            # axes m of orthonormal frames: the radii are sums of the |A·B| products (Gottschalk)
            radii = (half[a, i1] * dots[i2, j] + half[a, i2] * dots[i1, j]
                     + half[b, j1] * dots[i, j2] + half[b, j2] * dots[i, j1])
            inv = 1.0 / np.sqrt(length2)
            t = (tx * lx + ty * ly + tz * lz) * inv
            s = abs(t) - radii * inv
            if s > se:
                sign = inv if t >= 0.0 else -inv
                se, ie, je = s, i, j
                axis[0], axis[1], axis[2] = sign * lx, sign * ly, sign * lz
    return sa, ia, sign_a, sb, ib, sign_b, se, ie, je
