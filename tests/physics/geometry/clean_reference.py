"""The mesh cleaning as it was before it was compiled (numpy sorting, scipy graphs, trimesh):
kept verbatim as the oracle the compiled cleaning must match, output for output, on every
shipped and generated mesh (tests/physics/geometry/test_cleaning.py)."""

import numpy as np
import trimesh
from scipy.sparse import coo_matrix
from scipy.sparse.csgraph import breadth_first_order, connected_components

from physics.geometry.meshes import (  # the size check is not cleaning: the same in both
    Mesh,
    MeshError,
    _check_size,
    _readonly,
)


class EdgeReport:
    """Edge statistics of a triangle mesh (what makes a surface closed and oriented).

    edges (3m, 2) directed edges, face = row // 3; inverse (3m,) undirected-edge id;
    counts (e,) triangles per undirected edge. An edge used once borders a hole; by more than
    two triangles it is non-manifold; by two that run it the same way, misoriented.
    """

    def __init__(self, faces: np.ndarray):
        self.edges = faces[:, [0, 1, 1, 2, 2, 0]].reshape(-1, 2)
        lo, hi = np.sort(self.edges, axis=1).T
        _, self.inverse, self.counts = np.unique(lo * (int(faces.max()) + 1) + hi,
                                                 return_inverse=True, return_counts=True)
        forward = np.bincount(self.inverse, weights=self.edges[:, 0] < self.edges[:, 1])
        # (e,) bool: shared by exactly two triangles that run it in opposite directions
        self.good = (self.counts == 2) & (forward == 1)
        self.open = int(np.sum(self.counts == 1))
        self.nonmanifold = int(np.sum(self.counts > 2))
        self.misoriented = int(np.sum((self.counts == 2) & (forward != 1)))

    @property
    def closed(self) -> bool:
        return self.open == 0 and self.nonmanifold == 0 and self.misoriented == 0

    def problem(self) -> str | None:
        """Why the solid formula does not apply, in words; None when it does."""
        if self.open:
            return f"the surface is not closed ({self.open} edges border a hole)"
        if self.nonmanifold:
            return (f"the surface is not a clean solid ({self.nonmanifold} edges are shared by "
                    "more than two triangles)")
        if self.misoriented:
            return ("the triangles cannot be wound consistently (one-sided surface, "
                    f"{self.misoriented} edges disagree)")
        return None

    def face_pairs(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Faces (a, b) sharing a manifold edge, and whether they disagree on its direction."""
        order = np.argsort(self.inverse, kind="stable")
        starts = np.concatenate(([0], np.cumsum(self.counts)[:-1]))[self.counts == 2]
        ea, eb = order[starts], order[starts + 1]
        return ea // 3, eb // 3, self.edges[ea, 0] == self.edges[eb, 0]


def clean_mesh(name: str, source: str | None, vertices: np.ndarray, faces: np.ndarray) -> Mesh:
    """Validate and repair raw triangles into a ``Mesh`` (the steps after parsing a file).

    vertices (n, 3) m, faces (m, 3) indices. Merges duplicate vertices (STL stores every corner
    separately), removes collapsed and duplicate triangles — and slivers (zero area, three
    distinct corners) only from an open surface: in a closed one a sliver is part of what closes
    it — then repairs the winding.
    """
    vertices = np.asarray(vertices, dtype=float)
    faces = np.asarray(faces, dtype=np.int64)
    bad = ~np.all(np.isfinite(vertices), axis=1)
    if bad.any():
        i = int(np.argmax(bad))
        raise MeshError(f"{name}: {int(bad.sum())} vertices have NaN or infinite coordinates "
                        f"(first: vertex {i + 1} = {vertices[i].tolist()}); the exporter wrote "
                        "invalid numbers — fix or re-export the mesh")
    size_warning = _check_size(name, vertices, faces)
    count = len(faces)
    tm = trimesh.Trimesh(vertices=vertices, faces=faces, process=False, validate=False)
    tm.merge_vertices()
    keep = _first_occurrence(np.asarray(tm.faces)) & _has_three_corners(np.asarray(tm.faces))
    slivers = ~tm.nondegenerate_faces() & keep  # three corners, (almost) no area
    if slivers.any() and not _every_edge_twice(np.asarray(tm.faces)[keep]):
        keep &= ~slivers  # an open surface: a sliver only adds noise to the edges' bookkeeping
    if not keep.all():
        tm.update_faces(keep)
    tm.remove_unreferenced_vertices()
    vertices = np.array(tm.vertices, dtype=float)
    faces = np.array(tm.faces, dtype=np.int64)
    warnings = [size_warning] if size_warning else []
    if len(faces) == 0:
        raise MeshError(f"{name}: all {count} triangles have zero area (corners coincide or lie "
                        "on a line); there is no surface to simulate")
    if len(faces) < 4:
        raise MeshError(f"{name}: has only {len(faces)} triangle{'s' * (len(faces) > 1)}; a body "
                        "needs a surface of at least 4 triangles (a tetrahedron is the smallest "
                        "closed shape) — check that this is the right file")
    if len(faces) < count:
        warnings.append(f"{name}: removed {count - len(faces)} degenerate or duplicate "
                        "triangles (zero area, or the same triangle twice)")
    faces, closed, repairs = _repair_winding(name, vertices, faces)
    warnings += repairs
    return Mesh(name, source, _readonly(vertices), _readonly(faces), closed, tuple(warnings))


def _has_three_corners(faces: np.ndarray) -> np.ndarray:
    """(m,) bool: the triangle's three vertex indices differ (else it collapsed to a segment or
    a point when duplicate vertices were merged, and bounds nothing)."""
    a, b, c = faces.T
    return (a != b) & (b != c) & (c != a)


def _every_edge_twice(faces: np.ndarray) -> bool:
    """Every undirected edge is shared by exactly two triangles: a closed surface. A sliver
    (three distinct corners on a line) in it closes a T-junction — two short edges on one side,
    the long one on the other — so removing it would open the surface."""
    edges = np.sort(faces[:, [0, 1, 1, 2, 2, 0]].reshape(-1, 2), axis=1)
    _, counts = np.unique(edges[:, 0] * (int(faces.max()) + 1) + edges[:, 1],
                          return_counts=True)
    return bool(np.all(counts == 2))


def _first_occurrence(faces: np.ndarray) -> np.ndarray:
    """(m,) bool: False for a repeat of an earlier triangle with the same winding.

    A triangle and its reverse are both kept: together they are a legitimate two-sided sheet.
    """
    # rotate each triangle so its smallest index comes first (keeps the cyclic order)
    shift = np.argmin(faces, axis=1)
    cols = (shift[:, None] + np.arange(3)) % 3
    canonical = np.take_along_axis(faces, cols, axis=1)
    _, first = np.unique(canonical, axis=0, return_index=True)
    keep = np.zeros(len(faces), dtype=bool)
    keep[first] = True
    return keep


def _face_components(m: int, fa: np.ndarray, fb: np.ndarray) -> np.ndarray:
    """(m,) piece label of each triangle: pieces are connected through shared edges (fa, fb)."""
    graph = coo_matrix((np.ones(len(fa)), (fa, fb)), shape=(m, m)).tocsr()
    return connected_components(graph, directed=False)[1]


def _repair_winding(name: str, vertices: np.ndarray,
                    faces: np.ndarray) -> tuple[np.ndarray, bool, list[str]]:
    """Consistent winding (flip triangles against their neighbours), then outward orientation.

    Returns the faces, whether the surface is closed and consistent (``Mesh.watertight``) and
    the warnings.

    trimesh.repair.fix_winding does the first step with a Python BFS over networkx (not a
    dependency, and slow for big meshes); here the same flip parity is propagated along a
    breadth-first spanning forest (scipy) by pointer jumping, fully vectorised.
    """
    warnings = []
    faces = faces.copy()
    report = EdgeReport(faces)
    fa, fb, disagree = report.face_pairs()
    labels = _face_components(len(faces), fa, fb)
    if report.misoriented:
        flip = _flip_parity(len(faces), labels, fa, fb, disagree)
        # the spanning tree's root decides which side is kept; count the smaller side
        flipped = np.bincount(labels, weights=flip)
        size = np.bincount(labels)
        count = int(np.minimum(flipped, size - flipped).sum())
        faces[flip] = faces[flip][:, ::-1]
        warnings.append(f"{name}: {count} of {len(faces)} triangles were wound the other way "
                        "round from their neighbours; flipped them so the winding is consistent "
                        "and faces outward")
        report = EdgeReport(faces)
        if report.misoriented:
            warnings.append(f"{name}: the surface is one-sided (like a Möbius strip): "
                            f"{report.misoriented} edges cannot be wound consistently")
    faces, outward = _orient_outward(name, vertices, faces, labels, report)
    # after a consistency repair the kept side was arbitrary: turning it outward is part of it
    return faces, report.closed, warnings + (outward if not warnings else [])


def _flip_parity(m, labels, fa, fb, disagree) -> np.ndarray:
    """(m,) bool: flip these triangles to make every piece consistently wound.

    fa, fb (p,) triangles sharing a manifold edge; disagree (p,) they run it the same way.
    """
    roots = np.unique(labels, return_index=True)[1]
    # a virtual node m joined to one triangle per piece: one breadth-first search covers all
    rows = np.concatenate((fa, np.full(len(roots), m)))
    cols = np.concatenate((fb, roots))
    graph = coo_matrix((np.ones(len(rows)), (rows, cols)), shape=(m + 1, m + 1)).tocsr()
    _, pred = breadth_first_order(graph, m, directed=False, return_predecessors=True)
    up = pred[:m].copy()
    up[roots] = roots
    # parity of each tree edge (child, parent): look up the pair's disagreement
    key = np.minimum(fa, fb) * m + np.maximum(fa, fb)
    order = np.argsort(key)
    key, disagree = key[order], disagree[order]
    child = np.flatnonzero(up != np.arange(m))
    parent = up[child]
    flip = np.zeros(m, dtype=bool)
    flip[child] = disagree[np.searchsorted(key, np.minimum(child, parent) * m
                                           + np.maximum(child, parent))]
    # pointer jumping: flip[f] becomes the parity of the whole path from f to its root
    while True:
        nxt = up[up]
        if np.array_equal(nxt, up):
            return flip
        flip = flip ^ flip[up]
        up = nxt


def _orient_outward(name, vertices, faces, labels, report) -> tuple[np.ndarray, list[str]]:
    """Flip closed pieces whose volume has the wrong sign (docs/physics.md#mesh-repair).

    A closed piece nested inside k others (its bounding box strictly inside theirs) is a cavity
    when k is odd and must have negative volume; otherwise positive. Open or one-sided pieces
    have no inside and are left as they are.
    """
    npieces = int(labels.max()) + 1
    bad_edge = ~report.good[report.inverse]  # (3m,) per directed edge; face = row // 3
    open_piece = np.bincount(labels[np.flatnonzero(bad_edge) // 3], minlength=npieces) > 0
    tri = vertices[faces] - vertices.mean(axis=0)  # centred: signed volumes stay accurate
    volume = np.bincount(labels, weights=np.linalg.det(tri), minlength=npieces) / 6.0
    extent = np.ptp(vertices, axis=0).max()
    solid = ~open_piece & (np.abs(volume) > 1e-12 * extent**3)
    if not solid.any():
        return faces, []
    lo = np.full((npieces, 3), np.inf)
    hi = np.full((npieces, 3), -np.inf)
    np.minimum.at(lo, labels, tri.min(axis=1))
    np.maximum.at(hi, labels, tri.max(axis=1))
    idx = np.flatnonzero(solid)
    depth = np.zeros(npieces, dtype=int)
    if len(idx) <= 2000:  # O(k²) nesting test; beyond that assume no cavities
        inside = (np.all(lo[idx][:, None] > lo[idx][None], axis=2)
                  & np.all(hi[idx][:, None] < hi[idx][None], axis=2))
        depth[idx] = inside.sum(axis=1)
    wrong = solid & ((volume < 0) != (depth % 2 == 1))
    if not wrong.any():
        return faces, []
    faces = faces.copy()
    flip = wrong[labels]
    faces[flip] = faces[flip][:, ::-1]
    if wrong.sum() == solid.sum():
        msg = (f"{name}: the surface was inside out (its triangles faced inward, giving a "
               "negative volume); flipped it")
    else:
        msg = (f"{name}: {int(wrong.sum())} of {int(solid.sum())} closed parts were inside out "
               "(negative volume); flipped them")
    return faces, [msg]

