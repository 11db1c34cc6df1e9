"""Topology of a convex collision hull: its faces (planar polygons) and edges.

The narrow phase (collision/narrowphase.py) needs more than vertices: the separating-axis test runs
over face
normals and edge pairs, and contact points come from clipping one face against another. Qhull
triangulates the hull; coplanar triangles are merged back into one polygon per plane, so a box has
6 square faces and 12 edges (not 12 triangles and 18 edges), which keeps manifolds stable and
the edge-pair loop small. A flat hull (a sheet) is a polygon with two faces, one per side.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from physics.settings import COPLANAR_COS, COPLANAR_OFFSET


@dataclass
class Polytope:
    """Faces and edges of one convex hull with vertices (k, 3).

    face_normal (f, 3) unit outward; face_offset (f,) m: inside ⇔ n·x ≤ offset;
    face_start (f+1,) and face_vertex (Σ,) int: face i's polygon is
    face_vertex[face_start[i]:face_start[i+1]], counter-clockwise seen from outside;
    edge (e, 2) int vertex pairs; edge_faces (e, 2) int: the two faces meeting at the edge.
    """

    face_normal: np.ndarray
    face_offset: np.ndarray
    face_start: np.ndarray
    face_vertex: np.ndarray
    edge: np.ndarray
    edge_faces: np.ndarray


# hulls whose topology is kept: a scene of many bodies of one shape (a pile of the same mesh, a
# benchmark's lattice) finds its topology once; Qhull and the merge take ~30 ms a 64-vertex hull
KEPT_TOPOLOGIES = 64


def polytope(vertices: np.ndarray) -> Polytope:
    """Faces and edges of the convex hull of ``vertices`` (k, 3), all of them on the hull; none
    for fewer than 3 vertices or collinear ones. The same vertices give the same record, whose
    arrays are read-only: it is shared."""
    vertices = np.ascontiguousarray(vertices, dtype=float)
    return _kept_polytope(vertices.tobytes(), vertices.shape)


@lru_cache(maxsize=KEPT_TOPOLOGIES)
def _kept_polytope(data: bytes, shape: tuple) -> Polytope:
    top = _polytope(np.frombuffer(data).reshape(shape))
    for array in vars(top).values():
        array.setflags(write=False)
    return top


def _polytope(vertices: np.ndarray) -> Polytope:
    """``polytope`` of vertices (k, 3) float, computed."""
    # imported here: scipy.spatial takes 0.2 s to import, and `tumble inertia` needs no hull
    from scipy.spatial import ConvexHull, QhullError

    if len(vertices) < 3 or np.linalg.matrix_rank(vertices - vertices[0], tol=1e-12) < 2:
        return no_polytope()  # a point or a segment: nothing to clip against
    centre = vertices.mean(axis=0)
    scale = max(np.abs(vertices - centre).max(), 1e-12)
    try:
        hull = ConvexHull(vertices)
        normals, offsets = hull.equations[:, :3], -hull.equations[:, 3]
        polygons = _merge_coplanar(vertices, hull, normals, offsets, scale)
    except QhullError:  # flat: one polygon seen from both sides
        polygons = _flat_faces(vertices, centre)
    face_normal = np.array([n for n, _, _ in polygons])
    face_offset = np.array([d for _, d, _ in polygons])
    loops = [loop for _, _, loop in polygons]
    face_start = np.concatenate(([0], np.cumsum([len(loop) for loop in loops])))
    edge_faces: dict[tuple[int, int], list[int]] = {}
    for f, loop in enumerate(loops):
        corners = loop.tolist()
        for a, b in zip(corners, corners[1:] + corners[:1]):
            edge_faces.setdefault((min(a, b), max(a, b)), []).append(f)
    edges = sorted(edge_faces)
    return Polytope(face_normal, face_offset, face_start.astype(np.int64),
                    np.concatenate(loops).astype(np.int64),
                    np.array(edges, dtype=np.int64).reshape(-1, 2),
                    np.array([edge_faces[e][:2] for e in edges], dtype=np.int64).reshape(-1, 2))


def no_polytope() -> Polytope:
    """The empty topology of a shape without a hull (an exact sphere)."""
    none = np.zeros((0, 2), dtype=np.int64)
    return Polytope(np.zeros((0, 3)), np.zeros(0), np.zeros(1, dtype=np.int64),
                    np.zeros(0, dtype=np.int64), none, none.copy())


def _merge_coplanar(vertices, hull, normals, offsets, scale):
    """[(normal, offset, ccw vertex loop)] with coplanar triangles merged into one polygon.

    A face grows from a seed triangle across shared edges to neighbours in the seed's plane, and
    its loop is the chain of the face's boundary edges. Built from the triangulation's own
    edges, two neighbouring faces always share the same edges, so every hull edge has exactly
    two faces, even where tolerance makes "coplanar" intransitive or a vertex lies almost on a
    neighbour's edge (real CAD meshes do both; sorting a face's vertices by angle then gave
    loops that disagreed with their neighbours'). A region whose boundary is not one loop (not
    seen in practice) is kept as separate triangles.
    """
    simplices = _outward(vertices, hull.simplices, normals)
    faces = []
    used = np.zeros(len(simplices), dtype=bool)
    for t in range(len(simplices)):
        if used[t]:
            continue
        coplanar = (normals @ normals[t] > COPLANAR_COS) & (
            np.abs(offsets - offsets[t]) < COPLANAR_OFFSET * scale + 1e-12)
        region = _grow(t, hull.neighbors, coplanar & ~used)
        used[region] = True
        loop = _boundary_loop(simplices[region])
        if loop is None:
            faces += [(normals[r], offsets[r], simplices[r]) for r in region]
            continue
        faces.append((normals[t], offsets[t], _start_farthest(vertices, loop, normals[t])))
    return faces


def _outward(vertices, simplices, normals):
    """The triangles (m, 3) wound counter-clockwise seen from outside (Qhull's order is
    arbitrary)."""
    a, b, c = (vertices[simplices[:, i]] for i in range(3))
    flip = np.einsum("ij,ij->i", np.cross(b - a, c - a), normals) < 0
    return np.where(flip[:, None], simplices[:, ::-1], simplices)


def _grow(seed, neighbors, allowed):
    """Triangles reachable from ``seed`` through shared edges within ``allowed`` (m,) bool."""
    region, frontier = [seed], [seed]
    seen = {seed}
    while frontier:
        t = frontier.pop()
        for u in neighbors[t]:
            if allowed[u] and u not in seen:
                seen.add(u)
                region.append(u)
                frontier.append(u)
    return np.array(sorted(region))


def _boundary_loop(triangles):
    """The face's boundary as one ccw vertex loop, from triangles (r, 3) wound outward: the
    directed edges whose reverse is not in the face, chained; None if they are not one loop."""
    directed = {edge for a, b, c in triangles.tolist() for edge in ((a, b), (b, c), (c, a))}
    following = {a: b for a, b in directed if (b, a) not in directed}
    if not following:
        return None
    start = next(iter(following))
    loop = [start]
    while len(loop) <= len(following):
        nxt = following.get(loop[-1])
        if nxt is None:
            return None
        if nxt == start:
            break
        loop.append(nxt)
    return np.array(loop) if len(loop) == len(following) else None


def _start_farthest(vertices, loop, normal):
    """The loop rotated to start where ``_ccw_loop`` starts the same vertices: a start fixed by
    the face's shape, not by the order Qhull listed its triangles."""
    first = _ccw_loop(vertices, np.sort(loop), normal)[0]
    k = int(np.flatnonzero(loop == first)[0])
    return np.concatenate((loop[k:], loop[:k]))


def _flat_faces(vertices, centre):
    """The two sides of a flat hull (all vertices in one plane)."""
    _, _, axes = np.linalg.svd(vertices - centre)
    normal = axes[2]
    loop = _ccw_loop(vertices, np.arange(len(vertices)), normal)
    offset = normal @ centre
    return [(normal, offset, loop), (-normal, -offset, loop[::-1])]


def _ccw_loop(vertices, members, normal):
    """Indices ``members`` ordered counter-clockwise about ``normal`` (they lie on one face)."""
    p = vertices[members]
    c = p.mean(axis=0)
    u = p[np.argmax(np.linalg.norm(p - c, axis=1))] - c
    u /= np.linalg.norm(u)
    # normal × u written out (np.cross's arithmetic, without its cost on one pair of vectors)
    w = np.array([normal[1] * u[2] - normal[2] * u[1], normal[2] * u[0] - normal[0] * u[2],
                  normal[0] * u[1] - normal[1] * u[0]])
    angle = np.arctan2((p - c) @ w, (p - c) @ u)
    return members[np.argsort(angle)]
