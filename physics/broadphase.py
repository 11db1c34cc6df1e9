"""Broad phase: which pairs of bodies may touch within this step (sweep and prune).

Each body is bounded by a sphere about its centre of mass (``Model.bound_radius``) grown by the
speculative margin and by how far any of its points can move in the step, so the pairs found
include every pair the narrow phase could turn into a (speculative) contact. Bodies are sorted
along x by the low end of their box and swept once; a pair is kept when the boxes overlap on all
three axes and the grown spheres overlap. Sorting costs O(n log n) and the sweep O(n + pairs) for
piles, where few boxes share an x slab (Baraff 1992; Bullet's btAxisSweep3 does it incrementally).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from .contacts import SPECULATIVE_MARGIN


def reach(vel, omega, bound, h) -> np.ndarray:
    """(n,) m: bounding radius grown by the margin and by 1.5 steps of the fastest point's motion
    (|v| + |ω|·bound), the same allowance the wall contacts use."""
    speed = np.linalg.norm(vel, axis=1) + bound * np.linalg.norm(omega, axis=1)
    return bound + SPECULATIVE_MARGIN + 1.5 * h * speed


@njit(cache=True, nogil=True)
def _sweep(pos, radius, order, out):
    """Fill out (capacity, 2) with candidate pairs (i < j rows); return how many there were
    (may exceed the capacity: the caller retries with a bigger buffer). pos (n, 3) and radius
    (n,) are in sweep order (contiguous, so the inner loop reads memory in sequence); order (n,)
    maps them back to rows."""
    count = 0
    n = order.shape[0]
    for a in range(n):
        hi_x = pos[a, 0] + radius[a]
        for b in range(a + 1, n):
            if pos[b, 0] - radius[b] > hi_x:
                break
            reach_ab = radius[a] + radius[b]
            dy = pos[b, 1] - pos[a, 1]
            dz = pos[b, 2] - pos[a, 2]
            if abs(dy) > reach_ab or abs(dz) > reach_ab:
                continue
            dx = pos[b, 0] - pos[a, 0]
            if dx * dx + dy * dy + dz * dz > reach_ab * reach_ab:
                continue
            if count < out.shape[0]:
                i, j = order[a], order[b]
                out[count, 0] = min(i, j)
                out[count, 1] = max(i, j)
            count += 1
    return count


def candidate_pairs(pos, reach_radius) -> np.ndarray:
    """(p, 2) int64 rows (i < j) whose spheres ``pos`` (n, 3) m, ``reach_radius`` (n,) m overlap,
    in sweep order (deterministic for given positions)."""
    n = len(pos)
    if n < 2:
        return np.zeros((0, 2), dtype=np.int64)
    pos = np.asarray(pos, dtype=float)
    radius = np.asarray(reach_radius, dtype=float)
    order = np.argsort(pos[:, 0] - radius, kind="stable")
    pos, radius = pos[order], radius[order]
    out = np.empty((16 * n, 2), dtype=np.int64)
    count = _sweep(pos, radius, order, out)
    if count > len(out):
        out = np.empty((count, 2), dtype=np.int64)
        _sweep(pos, radius, order, out)
    return out[:count]
