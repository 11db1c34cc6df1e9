"""Click selection: a camera ray against each body's convex collision hull.

The ray is moved into each body's principal frame (where ``Shape.hull`` lives) and clipped by the
hull's half-spaces ``n·x + d ≤ 0`` (scipy ``ConvexHull.equations``, computed once per Shape) —
the Cyrus–Beck / Kay–Kajiya slab test generalised to any convex polyhedron: the ray is inside
for t in [max t_enter, min t_exit]. A sphere (``Shape.radius > 0``) is hit analytically.
Bodies sharing a Shape are tested together in one set of array operations.
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass

import numpy as np
from scipy.spatial import ConvexHull, QhullError

from physics.geometry.meshes import Shape
from physics.geometry.rotation import quat_to_matrix

_planes: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # Shape → (f,4) equations


@dataclass(frozen=True)
class Hit:
    """body_id: the body hit; distance: m along the (normalised) ray; point (3,) world, m."""

    body_id: int
    distance: float
    point: np.ndarray


def hull_planes(shape: Shape) -> np.ndarray:
    """(f, 4) outward half-spaces [n, d] (unit n, body frame): n·x + d ≤ 0 inside the hull."""
    planes = _planes.get(shape)
    if planes is None:
        try:
            planes = ConvexHull(shape.hull).equations
        except QhullError:
            # a flat hull (a sheet loaded as a shell): joggle the input so qhull returns a thin
            # solid around the plane, good enough to click on
            planes = ConvexHull(shape.hull, qhull_options="QJ").equations
        _planes[shape] = planes
    return planes


def pick(origin, direction, ids, shapes, pos, quat) -> Hit | None:
    """Nearest body the ray ``origin + t·direction`` (t ≥ 0) hits, or None.

    origin, direction (3,) world (direction need not be unit); ids (n,) body ids;
    shapes: n Shapes; pos (n,3) centre of mass, m; quat (n,4) principal frame → world.
    A ray starting inside a body hits it at distance 0.
    """
    origin = np.asarray(origin, dtype=float)
    direction = np.asarray(direction, dtype=float)
    direction = direction / np.linalg.norm(direction)
    best_t, best_row = np.inf, -1
    groups: dict[int, list[int]] = {}
    for row, shape in enumerate(shapes):
        groups.setdefault(id(shape), []).append(row)
    rot = quat_to_matrix(np.asarray(quat, dtype=float))  # (n,3,3) body → world
    for rows in groups.values():
        rows = np.asarray(rows)
        shape = shapes[rows[0]]
        # body-frame ray: o_b = Rᵀ(o − p), d_b = Rᵀ d (row vectors: v @ R)
        o_b = np.einsum("kij,ki->kj", rot[rows], origin - pos[rows])
        d_b = direction @ rot[rows]
        t = (_sphere_entry(o_b, d_b, shape.radius) if shape.radius > 0
             else _hull_entry(o_b, d_b, hull_planes(shape)))
        k = int(np.argmin(t))
        if t[k] < best_t:
            best_t, best_row = float(t[k]), int(rows[k])
    if best_row < 0 or not np.isfinite(best_t):
        return None
    return Hit(int(ids[best_row]), best_t, origin + best_t * direction)


def _hull_entry(o: np.ndarray, d: np.ndarray, planes: np.ndarray) -> np.ndarray:
    """(k,) entry distance of k unit rays (o, d (k,3)) into a convex hull; inf for a miss."""
    normals, offsets = planes[:, :3], planes[:, 3]
    dist = o @ normals.T + offsets          # (k,f) signed distance of the origin to each plane
    speed = d @ normals.T                   # (k,f) rate at which the ray leaves each plane
    with np.errstate(divide="ignore", invalid="ignore"):
        t = -dist / speed
    entering, leaving = speed < 0, speed > 0
    t_in = np.max(np.where(entering, t, -np.inf), axis=1)
    t_out = np.min(np.where(leaving, t, np.inf), axis=1)
    # parallel to a plane and outside it: never inside
    outside_parallel = np.any((speed == 0) & (dist > 0), axis=1)
    hit = (t_in <= t_out) & (t_out >= 0) & ~outside_parallel
    return np.where(hit, np.maximum(t_in, 0.0), np.inf)


def _sphere_entry(o: np.ndarray, d: np.ndarray, radius: float) -> np.ndarray:
    """(k,) entry distance of unit rays into a sphere of ``radius`` at the origin; inf: miss."""
    b = np.einsum("ki,ki->k", o, d)
    c = np.einsum("ki,ki->k", o, o) - radius ** 2
    disc = b * b - c
    root = np.sqrt(np.maximum(disc, 0.0))
    t_in, t_out = -b - root, -b + root
    hit = (disc >= 0) & (t_out >= 0)
    return np.where(hit, np.maximum(t_in, 0.0), np.inf)
