"""Boxes among the convex hulls: recognised when a body is added, and their separating-axis test
in closed form.

A hull with 8 vertices and 6 faces in 3 perpendicular pairs is a box with axes A_k, half extents
h_k and a centre c. Its extent along a unit axis L is Σ h_k |A_k·L|, so the 15 axes of the
box–box SAT (the 3 + 3 face normals and the 9 products A_i × B_j; Gottschalk, Lin & Manocha,
"OBBTree", SIGGRAPH 1996; ODE's dBoxBox) cost a few dot products each, with no loop over vertices
or edge pairs. The separations are the ones collide.py's general queries find: a face's is the
same support gap, and the edge pairs of two boxes that form Minkowski faces (Gregorius' Gauss-map
test) are exactly their support edges along ±A_i × B_j. So collide.py takes from here only which
axis separates most and by how much, and builds the contacts from the same hull features as
for any other hull.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from .polytope import Polytope

BOX_TOLERANCE = 1e-9      # relative: how exactly the hull must be a box to be treated as one
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


@njit(cache=True)
def _world_box(r, rotm, pos, box_axes, box_centre, axes, centre):
    """World axes (3, 3) (row k is axis k) and centre (3,) of body r's box, into the scratch."""
    rot = rotm[r]
    for i in range(3):
        centre[i] = pos[r, i] + (rot[i, 0] * box_centre[r, 0] + rot[i, 1] * box_centre[r, 1]
                                 + rot[i, 2] * box_centre[r, 2])
        for k in range(3):
            axes[k, i] = (rot[i, 0] * box_axes[r, 0, k] + rot[i, 1] * box_axes[r, 1, k]
                          + rot[i, 2] * box_axes[r, 2, k])


@njit(cache=True)
def box_separations(a, b, pos, rotm, box_axes, box_half, box_centre, wa, wb, ca, cb, dots, axis):
    """The box–box SAT of bodies a and b (both boxes): returns
    (sa, ia, sign_a, sb, ib, sign_b, se, ie, je).

    sa: largest separation, m, along a face normal of a: that of a's axis ia, the face facing b
    having outward normal sign_a·A_ia; sb, ib, sign_b the same for b's faces (facing a);
    se: largest separation over the edge axes A_ie × B_je (−inf if all are parallel), with that
    unit axis, pointing from a to b, in axis (3,). pos (n, 3), rotm (n, 3, 3), box_axes (n, 3, 3),
    box_half (n, 3), box_centre (n, 3) as in ``Model``; wa, wb, dots (3, 3), ca, cb (3,) scratch.
    """
    _world_box(a, rotm, pos, box_axes, box_centre, wa, ca)
    _world_box(b, rotm, pos, box_axes, box_centre, wb, cb)
    ha, hb = box_half[a], box_half[b]
    tx, ty, tz = cb[0] - ca[0], cb[1] - ca[1], cb[2] - ca[2]
    for i in range(3):
        for j in range(3):
            dots[i, j] = abs(wa[i, 0] * wb[j, 0] + wa[i, 1] * wb[j, 1] + wa[i, 2] * wb[j, 2])
    sa, ia, sign_a = -np.inf, 0, 1.0
    for i in range(3):
        t = tx * wa[i, 0] + ty * wa[i, 1] + tz * wa[i, 2]
        s = abs(t) - ha[i] - (hb[0] * dots[i, 0] + hb[1] * dots[i, 1] + hb[2] * dots[i, 2])
        if s > sa:
            sa, ia, sign_a = s, i, (1.0 if t >= 0.0 else -1.0)
    sb, ib, sign_b = -np.inf, 0, 1.0
    for j in range(3):
        t = tx * wb[j, 0] + ty * wb[j, 1] + tz * wb[j, 2]
        s = abs(t) - hb[j] - (ha[0] * dots[0, j] + ha[1] * dots[1, j] + ha[2] * dots[2, j])
        if s > sb:
            sb, ib, sign_b = s, j, (-1.0 if t >= 0.0 else 1.0)
    se, ie, je = -np.inf, -1, -1
    for i in range(3):
        for j in range(3):
            lx = wa[i, 1] * wb[j, 2] - wa[i, 2] * wb[j, 1]
            ly = wa[i, 2] * wb[j, 0] - wa[i, 0] * wb[j, 2]
            lz = wa[i, 0] * wb[j, 1] - wa[i, 1] * wb[j, 0]
            length2 = lx * lx + ly * ly + lz * lz
            if length2 < PARALLEL_SINE2:
                continue
            inv = 1.0 / np.sqrt(length2)
            lx, ly, lz = lx * inv, ly * inv, lz * inv
            t = tx * lx + ty * ly + tz * lz
            s = abs(t)
            for k in range(3):
                s -= ha[k] * abs(wa[k, 0] * lx + wa[k, 1] * ly + wa[k, 2] * lz)
                s -= hb[k] * abs(wb[k, 0] * lx + wb[k, 1] * ly + wb[k, 2] * lz)
            if s > se:
                sign = 1.0 if t >= 0.0 else -1.0
                se, ie, je = s, i, j
                axis[0], axis[1], axis[2] = sign * lx, sign * ly, sign * lz
    return sa, ia, sign_a, sb, ib, sign_b, se, ie, je
