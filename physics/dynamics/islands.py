"""Islands: groups of bodies linked by body–body contacts (union–find, Box2D's islands).

The energy guard (dynamics/energy.py) checks each island as a whole, since a collision moves
energy from one body to another, and resting islands fall asleep together (world.py); the
exact solve of unequal masses (dynamics/stacks.py) works island by island.
"""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True, inline='always')
def island_root(parent, i):
    """The root of row i in the union–find forest parent (n,), halving the path on the way."""
    while parent[i] != i:
        parent[i] = parent[parent[i]]  # path halving
        i = parent[i]
    return i


@njit(cache=True, nogil=True)
def _union_kernel(parent, first, second):
    for c in range(first.shape[0]):
        if second[c] < 0:
            continue
        a, b = island_root(parent, first[c]), island_root(parent, second[c])
        if a != b:
            parent[max(a, b)] = min(a, b)
    for i in range(parent.shape[0]):
        parent[i] = island_root(parent, i)


def island_labels(n: int, first, second) -> np.ndarray:
    """(n,) int64: for each body row the smallest row of its island.

    first, second (k,) int64 body rows of the links (second < 0: a wall, which links nothing)."""
    return islands(n, np.ascontiguousarray(first, dtype=np.int64),
                   np.ascontiguousarray(second, dtype=np.int64))


@njit(cache=True, nogil=True)
def islands(n, first, second):
    """``island_labels``, compiled (first, second int64 arrays)."""
    parent = np.arange(n)
    if first.shape[0]:
        _union_kernel(parent, first, second)
    return parent
