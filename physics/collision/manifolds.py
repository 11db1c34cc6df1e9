"""Manifold reuse: a touching pair whose relative pose has barely changed since its contacts
were found keeps them (Jolt's body pair cache, ``PhysicsSettings::
mBodyPairCacheMaxDeltaPositionSq`` and ``mBodyPairCacheCosMaxDeltaRotationDiv2``: 1 mm and 2°
there, ``MANIFOLD_REUSE_SHIFT`` and ``MANIFOLD_REUSE_TURN`` here).

Most touching pairs of a pile hardly move against each other from one step to the next: over
bench/pile.py's N = 1000 run, 83 % of them were within 0.5 mm and 1° of the pose their manifold
was found at. Finding a manifold (a box pair's SAT and face clipping) costs ~0.7 µs, carrying it
along ~0.1 µs.

A stored contact is the point on each body, P₁ = point + ½ s n on the first and P₂ = point − ½ s n
on the second, each in its own body's principal frame, and the normal in the first body's frame.
Reused, they move with their bodies: n and both points back to the world, the gap s = (P₁ − P₂)·n
and the point midway. So a reused contact still sees the two bodies approach or part along its
normal (an approaching pair cannot pass through); what it cannot see is a change of which
features touch, and the thresholds bound that to about MANIFOLD_REUSE_SHIFT +
MANIFOLD_REUSE_TURN × the hull's size. Keys are kept, so warm starting is unchanged. Pairs without
contacts keep no manifold (whether they touch depends on the speculative distance, which changes
with the bodies' speeds), only the axis that showed them apart, tried first the next step
(collision/axes.py).

The pose of a pair is that of the body with the higher id in the frame of the one with the lower
id (rows change when bodies are removed, ids do not).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit

from physics.collision.axes import axis_table
from physics.collision.contact import manifold_end
from physics.collision.keys import body_pair_key
from physics.dynamics.warmstart import hash_slot
from physics.settings import MANIFOLD_REUSE_TURN

# trace(R₀ᵀ R) = 1 + 2 cos θ for the rotation θ between two orientations
MIN_TRACE = 1.0 + 2.0 * np.cos(MANIFOLD_REUSE_TURN)


_NO_ROWS = np.zeros(0, dtype=np.int64)


class ManifoldCache(NamedTuple):
    """The manifolds of the touching pairs of the last step, and the separating axes of the
    hull pairs it found apart.

    A hash table of m slots (a power of two at least twice the number of pairs): keys (m,) int64
    pair keys, entry (m,) int64 the pair's row below, −1 for an empty slot. Per pair (p,):
    pose (p, 12) the relative pose the manifold was found at (position (3,) m, then the rotation
    matrix (3, 3) row by row), start (p,) and size (p,) int64 its stored contacts. Per stored
    contact (c,): lower_first bool (the contact's first body is the pair's lower id), key int64
    its warm-start key, local (c, 9): P₁ in the first body's frame m, P₂ in the second's m, the
    normal in the first's. Empty (m = 0) before the first step. Only the slots' entries and
    keys are cleared when a cache is made (the rest is all written): a step's cache is ~1 MB
    for a pile of 1000 boxes. axis_keys (a,) and axes (a, 3): the table of separating axes
    (collision/axes.py, ``axis_table``), empty before the first step.
    """

    keys: np.ndarray = _NO_ROWS
    entry: np.ndarray = _NO_ROWS
    pose: np.ndarray = np.zeros((0, 12))
    start: np.ndarray = _NO_ROWS
    size: np.ndarray = _NO_ROWS
    lower_first: np.ndarray = np.zeros(0, dtype=bool)
    key: np.ndarray = _NO_ROWS
    local: np.ndarray = np.zeros((0, 9))
    axis_keys: np.ndarray = _NO_ROWS
    axes: np.ndarray = np.zeros((0, 3), dtype=np.int64)



@njit(cache=True, nogil=True)
def manifold_cache(found, bodies, old, candidates, apart):
    """The ``ManifoldCache`` of this step's body-pair contacts ``found`` (a ``ContactBuffer``
    of k contacts, consecutive per pair), where found.source is the pair row of ``old`` (the
    last step's ``ManifoldCache``) a reused manifold came from (−1: found this step); bodies the
    ``BodySet`` (collision/contact.py) at the poses the contacts were found or carried at; and
    of the axes apart (p, 3) that kept the candidate pairs (p, 2) of rows apart
    (collision/axes.py)."""
    pairs = _count_pairs(found.body, found.other)
    k = found.body.shape[0]
    bits, rest = 0, max(pairs - 1, 0)
    while rest:
        bits, rest = bits + 1, rest >> 1
    slots = 2 * (1 << bits)
    axis_keys, axes = axis_table(candidates, bodies.ids, apart)
    # free slots' keys are never read, but zeroed all the same: the cache is part of the
    # state a checkpoint keeps, and leftover bytes there made equal worlds differ
    cache = ManifoldCache(
        np.zeros(slots, dtype=np.int64), np.full(slots, -1, dtype=np.int64),
        np.empty((pairs, 12)), np.empty(pairs, dtype=np.int64),
        np.empty(pairs, dtype=np.int64), np.empty(k, dtype=np.bool_),
        np.empty(k, dtype=np.int64), np.empty((k, 9)), axis_keys, axes)
    _store(found, bodies, old, cache)
    return cache


@njit(cache=True, nogil=True)
def _count_pairs(body, other):
    runs = 0
    first = 0
    while first < body.shape[0]:
        first = manifold_end(body, other, first)
        runs += 1
    return runs


@njit(cache=True, inline='always')
def _relative_pose(lo, hi, pos, rotm, i):
    """Entry i of a pair's relative pose (the layout of ``ManifoldCache.pose``): 0–2 the
    position Rₗᵀ (x_h − x_l) m, 3–11 the rotation Rₗᵀ R_h row by row. The narrow phase's
    ``_sort_pairs`` compares a pair's pose now with the stored one term for term as this
    computes it, written out in its loop (docs/architecture.md#records)."""
    r = 0.0
    if i < 3:
        for k in range(3):
            r += rotm[lo, k, i] * (pos[hi, k] - pos[lo, k])
    else:
        row, col = divmod(i - 3, 3)
        for k in range(3):
            r += rotm[lo, k, row] * rotm[hi, k, col]
    return r


@njit(cache=True, inline='always')
def emit_stored(row, a, b, bodies, manifolds, out, out_n):
    """Write the contacts stored in pair row ``row`` of ``manifolds`` for rows a and b of
    ``bodies`` (a ``BodySet``), carried to their poses now (see the module's docstring), into
    the ``ContactBuffer`` out from out_n on; returns the new output count."""
    ids, pos, rotm = bodies.ids, bodies.pos, bodies.rotm
    start, count, local = manifolds.start, manifolds.size, manifolds.local
    lower_first, stored_key = manifolds.lower_first, manifolds.key
    out_body, out_other, out_key, out_source = out.body, out.other, out.key, out.source
    out_point, out_normal, out_sep = out.point, out.normal, out.sep
    lo, hi = (a, b) if ids[a] < ids[b] else (b, a)
    for c in range(start[row], start[row] + count[row]):
        first, second = (lo, hi) if lower_first[c] else (hi, lo)
        p1x = pos[first, 0]
        p1y = pos[first, 1]
        p1z = pos[first, 2]
        p2x = pos[second, 0]
        p2y = pos[second, 1]
        p2z = pos[second, 2]
        nx = ny = nz = 0.0
        for k in range(3):
            p1x += rotm[first, 0, k] * local[c, k]
            p1y += rotm[first, 1, k] * local[c, k]
            p1z += rotm[first, 2, k] * local[c, k]
            p2x += rotm[second, 0, k] * local[c, 3 + k]
            p2y += rotm[second, 1, k] * local[c, 3 + k]
            p2z += rotm[second, 2, k] * local[c, 3 + k]
            nx += rotm[first, 0, k] * local[c, 6 + k]
            ny += rotm[first, 1, k] * local[c, 6 + k]
            nz += rotm[first, 2, k] * local[c, 6 + k]
        out_body[out_n] = first
        out_other[out_n] = second
        out_key[out_n] = stored_key[c]
        out_point[out_n, 0] = 0.5 * (p1x + p2x)
        out_point[out_n, 1] = 0.5 * (p1y + p2y)
        out_point[out_n, 2] = 0.5 * (p1z + p2z)
        out_normal[out_n, 0] = nx
        out_normal[out_n, 1] = ny
        out_normal[out_n, 2] = nz
        out_sep[out_n] = (p1x - p2x) * nx + (p1y - p2y) * ny + (p1z - p2z) * nz
        out_source[out_n] = row
        out_n += 1
    return out_n


@njit(cache=True, nogil=True)
def _store(found, bodies, old, cache):
    """Fill the manifolds of ``cache`` (``manifold_cache``)."""
    body, other, key, point, normal, sep, source = found
    ids, pos, rotm = bodies.ids, bodies.pos, bodies.rotm
    old_pose, old_start, old_count = old.pose, old.start, old.size
    old_lower_first, old_key, old_local = old.lower_first, old.key, old.local
    keys, entry, pose, start, count = cache.keys, cache.entry, cache.pose, cache.start, cache.size
    lower_first, stored_key, local = cache.lower_first, cache.key, cache.local
    mask = keys.shape[0] - 1
    k = body.shape[0]
    first = 0
    filled = 0
    row = -1
    while first < k:
        last = manifold_end(body, other, first)
        a, b = body[first], other[first]
        lo, hi = (a, b) if ids[a] < ids[b] else (b, a)
        pk = body_pair_key(ids[a], ids[b])
        slot = hash_slot(pk, mask)
        while entry[slot] >= 0:
            slot = (slot + 1) & mask
        row += 1
        entry[slot] = row
        keys[slot] = pk
        start[row] = filled
        old = source[first]
        if old >= 0:  # carried: keep what it was found at, so small moves cannot add up
            count[row] = old_count[old]
            for j in range(12):
                pose[row, j] = old_pose[old, j]
            for i in range(old_count[old]):
                c = old_start[old] + i
                lower_first[filled + i] = old_lower_first[c]
                stored_key[filled + i] = old_key[c]
                for j in range(9):
                    local[filled + i, j] = old_local[c, j]
            filled += old_count[old]
        else:
            count[row] = last - first
            for i in range(12):
                pose[row, i] = _relative_pose(lo, hi, pos, rotm, i)
            for c in range(first, last):
                f, o = body[c], other[c]
                lower_first[filled] = f == lo
                stored_key[filled] = key[c]
                # P₁ − x_f and P₂ − x_o in the world, then Rᵀ of each, and Rᵀ n
                half = 0.5 * sep[c]
                d1x = point[c, 0] + half * normal[c, 0] - pos[f, 0]
                d1y = point[c, 1] + half * normal[c, 1] - pos[f, 1]
                d1z = point[c, 2] + half * normal[c, 2] - pos[f, 2]
                d2x = point[c, 0] - half * normal[c, 0] - pos[o, 0]
                d2y = point[c, 1] - half * normal[c, 1] - pos[o, 1]
                d2z = point[c, 2] - half * normal[c, 2] - pos[o, 2]
                for i in range(3):
                    local[filled, i] = (
                        rotm[f, 0, i] * d1x + rotm[f, 1, i] * d1y + rotm[f, 2, i] * d1z
                    )
                    local[filled, 3 + i] = (rotm[o, 0, i] * d2x + rotm[o, 1, i] * d2y
                                            + rotm[o, 2, i] * d2z)
                    local[filled, 6 + i] = (
                        rotm[f, 0, i] * normal[c, 0]
                        + rotm[f, 1, i] * normal[c, 1]
                        + rotm[f, 2, i] * normal[c, 2]
                    )
                filled += 1
        first = last
