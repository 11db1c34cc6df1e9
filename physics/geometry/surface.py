"""What makes a triangle surface closed and consistently wound: the edge statistics that decide
whether the solid-inertia formula applies, and the one message that says why it does not."""

from __future__ import annotations

import numpy as np

from physics.geometry.mesh_kernels import edge_table, face_components


def solid_undefined(problem: str) -> str:
    """The refusal of solid inertia for a surface with ``problem`` (from ``EdgeReport``), worded
    once for the library and the command line alike."""
    return (f"{problem}, so solid inertia is undefined; use mode 'shell' (a thin hollow "
            "surface, density in kg/m²) or 'auto', or close the surface in a modeller")


class EdgeReport:
    """Edge statistics of a triangle mesh (what makes a surface closed and oriented).

    faces (m, 3); inverse (3m,) the undirected-edge id of each directed edge (edge e = 3f + k
    runs from faces[f, k] to faces[f, (k + 1) % 3]); counts (e,) triangles per undirected edge.
    An edge used once borders a hole; by more than two triangles it is non-manifold; by two that
    run it the same way, misoriented. Edges are matched by hashing (``edge_table``): linear time.
    """

    def __init__(self, faces: np.ndarray):
        self.faces = np.ascontiguousarray(faces, dtype=np.int64)
        self.inverse, self.counts, forward, self._first, self._second = edge_table(self.faces)
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

    def components(self) -> np.ndarray:
        """(m,) piece label of each triangle: pieces are joined through the edges exactly two
        triangles share; labels numbered in order of each piece's first triangle."""
        return face_components(len(self.faces), self._first, self._second, self.counts)

    def face_pairs(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Faces (a, b) sharing a manifold edge, and whether they run it the same way; in order
        of the edges' (lower, higher) vertex indices, a before b in face order."""
        two = np.flatnonzero(self.counts == 2)
        ea, eb = self._first[two], self._second[two]
        flat = self.faces.ravel()
        start, end = flat[ea], flat[ea - ea % 3 + (ea % 3 + 1) % 3]
        n = int(flat.max()) + 1
        order = np.argsort(np.minimum(start, end) * n + np.maximum(start, end))
        ea, eb = ea[order], eb[order]
        return ea // 3, eb // 3, flat[ea] == flat[eb]
