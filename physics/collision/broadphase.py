"""Broad phase: which pairs of bodies may touch within this step (sweep and prune).

Each body is bounded by a sphere about its centre of mass (``Model.bound_radius``) grown by the
speculative margin and by how far any of its points can move in the step, so the pairs found
include every pair the narrow phase could turn into a (speculative) contact. Bodies are cut
into strips along z one largest diameter wide, sorted within each strip along x by the low end of
their box, and each strip is swept against itself and the next one; a pair is kept when the boxes
overlap on all three axes and the grown spheres overlap. Sorting costs O(n log n) and the sweeps
O(n + pairs) when few boxes share a slab of a strip (sweep and prune: Baraff 1992; Bullet's
btAxisSweep3 does it incrementally; the strips keep a pile spread over the floor from putting
every body of an x slab in one sweep).

Between steps the pairs are kept (``SweptPairs``: Box2D's dynamic tree with fat boxes, here
fat spheres): each body has a fat sphere, its reach sphere grown by ``FAT_MARGIN`` when it was
last placed, and the kept pairs are those whose fat spheres overlap. While a body's reach sphere
stays inside its fat sphere, every pair within reach is among them; a body that leaves its fat
sphere gets a new one and is checked against every other fat sphere (a fresh sweep when many
leave at once). Each step then filters the kept pairs by the exact sphere test, which gives the
very pairs a fresh sweep would (in the kept order, which depends on the history only).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit, prange

from physics.runtime import parallel_threads
from physics.settings import (
    BODIES_PER_CHUNK,
    FAT_MARGIN,
    MAX_REPLACED,
    REACH_STEPS,
    SPECULATIVE_MARGIN,
)


class SweptPairs(NamedTuple):
    """Pairs (p, 2) int64 rows (i < j) whose fat spheres — centres (n, 3) m, radii fat (n,) m —
    overlap, for the bodies ids (n,) in these rows. Empty before the first step. A record, so
    it crosses into and out of compiled code (docs/architecture.md#records)."""

    pairs: np.ndarray = np.zeros((0, 2), dtype=np.int64)
    ids: np.ndarray = np.zeros(0, dtype=np.int64)
    centre: np.ndarray = np.zeros((0, 3))
    fat: np.ndarray = np.zeros(0)


def pairs_within_reach(kept: SweptPairs, ids, pos, reach_radius) -> tuple[np.ndarray, SweptPairs]:
    """Candidate pairs (p, 2): the same set as ``candidate_pairs(pos, reach_radius)``, from the
    kept fat spheres, refreshed for the bodies that left theirs; returns them and what to keep
    for the next step. ids (n,) body ids; pos (n, 3) m; reach_radius (n,) m."""
    pos = np.ascontiguousarray(pos, dtype=float)
    reach_radius = np.ascontiguousarray(reach_radius, dtype=float)
    # a named record, as the step's compiled call passes it: the same compiled code
    # (docs/architecture.md#records)
    return kept_pairs_within_reach(kept, np.asarray(ids, dtype=np.int64), pos, reach_radius,
                                   parallel_threads())


@njit(cache=True, nogil=True)
def kept_pairs_within_reach(kept, ids, pos, reach_radius, threads):
    """``pairs_within_reach`` for compiled callers: kept a ``SweptPairs``; a fresh sweep runs
    on up to ``threads`` threads (``candidate_pairs``)."""
    n = pos.shape[0]
    outside = np.zeros(n, dtype=np.bool_)
    same_bodies = n == kept.ids.shape[0]
    for i in range(n if same_bodies else 0):
        same_bodies = same_bodies and ids[i] == kept.ids[i]
    leaving_count = 0
    if same_bodies:
        # 1 nm of slack: positions are rounded to well under that
        _outside_fat(pos, reach_radius, kept.centre, kept.fat, 1e-9, outside)
        leaving_count = np.count_nonzero(outside)
    if not same_bodies or leaving_count > MAX_REPLACED:
        fat = reach_radius + FAT_MARGIN
        kept = SweptPairs(sweep_pairs(pos, fat, threads), ids.copy(), pos.copy(), fat)
    elif leaving_count:
        leaving = np.flatnonzero(outside)
        centre, fat = kept.centre.copy(), kept.fat.copy()
        for e in leaving:
            centre[e] = pos[e]
            fat[e] = reach_radius[e] + FAT_MARGIN
        new = _fat_neighbours(leaving, outside, centre, fat)
        # the kept pairs of bodies that stayed inside their fat spheres, then the new ones
        pairs = np.empty((len(kept.pairs) + len(new), 2), dtype=np.int64)
        count = _refresh_pairs(kept.pairs, outside, new, pairs)
        kept = SweptPairs(pairs[:count], kept.ids, centre, fat)
    if kept.pairs.shape[0] == 0:  # none kept, none within reach (and nothing to allocate)
        return kept.pairs[:0], kept
    within = np.empty_like(kept.pairs)
    count = _within_reach(kept.pairs, pos, reach_radius, within)
    return within[:count], kept


@njit(cache=True, nogil=True)
def _outside_fat(pos, radius, centre, fat, slack, outside):
    """outside[i]: body i's reach sphere is no longer inside its fat sphere (less slack)."""
    for i in range(pos.shape[0]):
        moved = np.sqrt((pos[i, 0] - centre[i, 0]) ** 2 + (pos[i, 1] - centre[i, 1]) ** 2
                        + (pos[i, 2] - centre[i, 2]) ** 2)
        outside[i] = moved + radius[i] > fat[i] - slack


@njit(cache=True, nogil=True)
def _fat_neighbours(leaving, outside, centre, fat):
    """(q, 2) pairs (i < j) of each body in leaving (rows) with every body whose fat sphere its
    new one overlaps; a pair of two leaving bodies once."""
    count = _fat_overlaps(leaving, outside, centre, fat, np.empty((0, 2), dtype=np.int64))
    out = np.empty((count, 2), dtype=np.int64)
    _fat_overlaps(leaving, outside, centre, fat, out)
    return out


@njit(cache=True, inline='always')
def _fat_overlaps(leaving, outside, centre, fat, out):
    """Count the pairs of ``_fat_neighbours``, writing them into out when it has room."""
    count = 0
    for e in leaving:
        for i in range(centre.shape[0]):
            if i == e or (outside[i] and i < e):
                continue
            reach_ei = fat[e] + fat[i]
            d2 = ((centre[i, 0] - centre[e, 0]) ** 2 + (centre[i, 1] - centre[e, 1]) ** 2
                  + (centre[i, 2] - centre[e, 2]) ** 2)
            if d2 <= reach_ei * reach_ei:
                if count < out.shape[0]:
                    out[count, 0], out[count, 1] = min(e, i), max(e, i)
                count += 1
    return count


@njit(cache=True, nogil=True)
def _refresh_pairs(pairs, outside, new, out):
    """Write into out the pairs (p, 2) with neither body outside its fat sphere, then the new
    pairs (q, 2); returns how many were written."""
    count = 0
    for p in range(pairs.shape[0]):
        if not (outside[pairs[p, 0]] or outside[pairs[p, 1]]):
            out[count, 0], out[count, 1] = pairs[p, 0], pairs[p, 1]
            count += 1
    for p in range(new.shape[0]):
        out[count, 0], out[count, 1] = new[p, 0], new[p, 1]
        count += 1
    return count


@njit(cache=True, nogil=True)
def _within_reach(pairs, pos, radius, out):
    """Write into out, in order, the pairs (p, 2) that pass ``_sweep``'s sphere test (the same
    arithmetic, so the same answer at the boundary); returns how many."""
    count = 0
    for p in range(pairs.shape[0]):
        a, b = pairs[p, 0], pairs[p, 1]
        reach_ab = radius[a] + radius[b]
        dy = pos[b, 1] - pos[a, 1]
        dz = pos[b, 2] - pos[a, 2]
        dx = pos[b, 0] - pos[a, 0]
        if (abs(dy) <= reach_ab and abs(dz) <= reach_ab
                and dx * dx + dy * dy + dz * dz <= reach_ab * reach_ab):
            out[count, 0], out[count, 1] = a, b
            count += 1
    return count


@njit(cache=True, nogil=True)
def reach(vel, omega, bound, h):
    """(n,) m: bounding radius grown by the margin and by REACH_STEPS steps of the fastest point's
    motion (|v| + |ω|·bound), the same allowance the wall contacts use."""
    n = vel.shape[0]
    out = np.empty(n)
    steps = REACH_STEPS * h
    for i in range(n):
        speed = (np.sqrt(vel[i, 0] * vel[i, 0] + vel[i, 1] * vel[i, 1] + vel[i, 2] * vel[i, 2])
                 + bound[i] * np.sqrt(omega[i, 0] * omega[i, 0] + omega[i, 1] * omega[i, 1]
                                      + omega[i, 2] * omega[i, 2]))
        out[i] = bound[i] + SPECULATIVE_MARGIN + steps * speed
    return out


@njit(cache=True, nogil=True)
def _sweep(pos, radius, strip, order, end, wide, first_body, last_body, out):
    """Fill out (capacity, 2) with the candidate pairs (i < j rows) of the bodies first_body…
    last_body − 1 with the bodies after them; return how many there were (may exceed the
    capacity: the caller retries with a bigger buffer). pos (n, 3), radius (n,) and strip (n,)
    are sorted by strip, then by the low end along x (contiguous, so the loops read memory in
    sequence); order (n,) maps them back to rows; end (n,) one past the last body of each
    body's strip; wide m: the largest diameter."""
    n = order.shape[0]
    count = 0
    for a in range(first_body, last_body):
        hi_x = pos[a, 0] + radius[a]
        # the rest of a's strip, then the next strip from the first body whose box can reach
        # back to a's low end
        first = end[a]
        ahead, ahead_end = first, first
        if first < n and strip[first] == strip[a] + 1:
            lo, hi = first, end[first]
            low = pos[a, 0] - radius[a] - wide
            while lo < hi:
                mid = (lo + hi) // 2
                if pos[mid, 0] - radius[mid] < low:
                    lo = mid + 1
                else:
                    hi = mid
            ahead, ahead_end = lo, end[first]
        for part in range(2):
            b, last = (a + 1, end[a]) if part == 0 else (ahead, ahead_end)
            while b < last:
                if pos[b, 0] - radius[b] > hi_x:
                    break
                # the spheres overlap: written out here rather than in a helper, which numba's
                # inlining gave a reference count of its arrays per candidate
                # (docs/architecture.md#records)
                reach_ab = radius[a] + radius[b]
                dy = pos[b, 1] - pos[a, 1]
                dz = pos[b, 2] - pos[a, 2]
                if abs(dy) <= reach_ab and abs(dz) <= reach_ab:
                    dx = pos[b, 0] - pos[a, 0]
                    if dx * dx + dy * dy + dz * dz <= reach_ab * reach_ab:
                        if count < out.shape[0]:
                            i, j = order[a], order[b]
                            out[count, 0] = min(i, j)
                            out[count, 1] = max(i, j)
                        count += 1
                b += 1
    return count


@njit(cache=True, nogil=True)
def _strip_ends(strip):
    """(n,) one past the last body of each body's strip (strip (n,) sorted)."""
    n = strip.shape[0]
    end = np.empty(n, dtype=np.int64)
    end[n - 1] = n
    for a in range(n - 2, -1, -1):
        end[a] = end[a + 1] if strip[a + 1] == strip[a] else a + 1
    return end


@njit(cache=True, nogil=True, parallel=True)
def _sweep_chunks(pos, radius, strip, order, end, wide, bounds, out, counts):
    """``_sweep`` of the bodies bounds[t]…bounds[t + 1] − 1 side by side, chunk t writing into
    its own equal stretch of out."""
    chunks = bounds.shape[0] - 1
    capacity = out.shape[0] // chunks
    for t in prange(chunks):
        counts[t] = _sweep(pos, radius, strip, order, end, wide, bounds[t], bounds[t + 1],
                           out[t * capacity:(t + 1) * capacity])


def candidate_pairs(pos, reach_radius) -> np.ndarray:
    """(p, 2) int64 rows (i < j) whose spheres ``pos`` (n, 3) m, ``reach_radius`` (n,) m overlap
    (deterministic for given positions, and in the same order whatever the thread count)."""
    pos = np.ascontiguousarray(pos, dtype=float)
    return sweep_pairs(pos, np.ascontiguousarray(reach_radius, dtype=float), parallel_threads())


@njit(cache=True, nogil=True)
def sweep_pairs(pos, radius, threads):
    """``candidate_pairs`` for compiled callers, on up to ``threads`` threads.

    Bodies are cut into strips along z one largest diameter wide, so a body's partners lie in its
    own strip or the next one, and each strip is swept along x: a dense pile compares each body
    with a few neighbours instead of every body in its x slab. Large scenes are swept in chunks
    of bodies on the threads (physics/runtime.py)."""
    n = pos.shape[0]
    if n < 2:
        return np.zeros((0, 2), dtype=np.int64)
    # a pair has |Δz| ≤ r_i + r_j ≤ wide: strips at most one apart (the margin covers rounding)
    wide = 2.0 * radius.max()
    width = wide * (1.0 + 1e-9) + 1e-300
    low_z = pos[:, 2].min()
    strip = np.empty(n, dtype=np.int64)
    low_x = np.empty(n)
    for i in range(n):
        strip[i] = np.int64(np.floor((pos[i, 2] - low_z) / width))
        low_x[i] = pos[i, 0] - radius[i]
    # by strip, then by the low end along x: two stable sorts, the last key first; the strips,
    # numbers from 0 (a few dozen in a container), by counting, which gives the stable sort's
    # order in one pass, unless bodies far apart make more strips than bodies or a position is
    # not finite (its strip is no count's index)
    order = np.argsort(low_x, kind="mergesort")
    strips = strip.max() + 1
    if strip.min() >= 0 and strips <= n:
        first = np.zeros(strips + 1, dtype=np.int64)
        for i in range(n):
            first[strip[i] + 1] += 1
        for t in range(strips):
            first[t + 1] += first[t]
        by_x, order = order, np.empty(n, dtype=np.int64)
        for i in by_x:
            order[first[strip[i]]] = i
            first[strip[i]] += 1
    else:
        order = order[np.argsort(strip[order], kind="mergesort")]
    pos, radius, strip = pos[order], radius[order], strip[order]
    end = _strip_ends(strip)
    chunks = min(threads, n // BODIES_PER_CHUNK)
    if chunks < 2:
        out = np.empty((16 * n, 2), dtype=np.int64)
        count = _sweep(pos, radius, strip, order, end, wide, 0, n, out)
        if count > len(out):
            out = np.empty((count, 2), dtype=np.int64)
            _sweep(pos, radius, strip, order, end, wide, 0, n, out)
        return out[:count]
    bounds = chunk_bounds(n, chunks)
    capacity = 16 * (n // chunks + 1)
    counts = np.zeros(chunks, dtype=np.int64)
    out = np.empty((chunks * capacity, 2), dtype=np.int64)
    _sweep_chunks(pos, radius, strip, order, end, wide, bounds, out, counts)
    if counts.max() > capacity:
        capacity = counts.max()
        out = np.empty((chunks * capacity, 2), dtype=np.int64)
        _sweep_chunks(pos, radius, strip, order, end, wide, bounds, out, counts)
    pairs = np.empty((counts.sum(), 2), dtype=np.int64)
    count = 0
    for t in range(chunks):
        pairs[count:count + counts[t]] = out[t * capacity:t * capacity + counts[t]]
        count += counts[t]
    return pairs


@njit(cache=True, nogil=True)
def chunk_bounds(items, chunks):
    """(chunks + 1,) int64: where each of ``chunks`` equal runs of ``items`` starts, and the
    end (numpy's ``linspace(0, items, chunks + 1)`` cut to integers)."""
    bounds = np.empty(chunks + 1, dtype=np.int64)
    step = items / chunks
    for t in range(chunks):
        bounds[t] = np.int64(t * step)
    bounds[chunks] = items
    return bounds
