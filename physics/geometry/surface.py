"""What makes a triangle surface closed and consistently wound: the edge statistics that decide
whether the solid-inertia formula applies, and the one message that says why it does not."""

from __future__ import annotations

import numpy as np


def solid_undefined(problem: str) -> str:
    """The refusal of solid inertia for a surface with ``problem`` (from ``EdgeReport``), worded
    once for the library and the command line alike."""
    return (f"{problem}, so solid inertia is undefined; use mode 'shell' (a thin hollow "
            "surface, density in kg/m²) or 'auto', or close the surface in a modeller")


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
