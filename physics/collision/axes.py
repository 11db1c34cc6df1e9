"""Separating axes kept between steps (docs/physics.md#separating-axes).

A hull pair that the separating-axis test found too far apart for any contact, even a
speculative one, most often stays apart the next step along the same axis: a face of one hull or
an edge of each. The axis is kept, named by the hulls' own features (which move with their
bodies), and next step its separation is measured again at the new poses before anything else;
only if it no longer reaches the speculative distance does the pair go through the whole test.
Nothing is trusted from the last step but which axis to try: the separation is that of the
current poses, computed as the full test computes it, along an axis the full test looks at, so
the decision is the full test's (the full test skips faces and edges by bounds that hold
exactly; only a separation within a rounding error of the speculative distance, under a bound
that is tight to the last bit, could tell the two apart).

Features are local indices of the hulls of the pair's lower and higher id (rows change when
bodies are removed, ids do not); an index past the hull's faces or edges (a body's pieces
replaced since) is ignored.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from physics.collision.keys import body_pair_key
from physics.dynamics.warmstart import hash_slot

# kinds of a kept axis: a face of the pair's first hull, of its second, or an edge of each; the
# table holds them with the lower id first
NO_AXIS, FACE_OF_FIRST, FACE_OF_SECOND, EDGES = -1, 0, 1, 2


@njit(cache=True, nogil=True)
def unfound(pairs):
    """(pairs, 3) int64 rows for the narrow phase to fill, one per candidate pair: the kind of
    the axis that kept the pair apart (NO_AXIS where none did) and the local features of the
    lower and the higher id's hull, in that order, the lower id's hull counting as the first
    (−1 for the hull without a face in it)."""
    return np.full((pairs, 3), NO_AXIS, dtype=np.int64)


@njit(cache=True, nogil=True)
def axis_table(pairs, ids, found):
    """Hash table of the axes ``found`` (p, 3) (``unfound``'s layout) of the candidate pairs
    (p, 2) of rows with ids (n,): (keys (m,) int64 ``body_pair_key``, axes (m, 3) int64 the
    found rows, kind NO_AXIS in an empty slot); m a power of two at least twice the axes (0 if
    none). Compiled whole: one call a step instead of a numpy call per array."""
    apart = 0
    for p in range(found.shape[0]):
        apart += found[p, 0] != NO_AXIS
    slots = 0
    if apart:
        slots = 2
        while slots < 2 * apart:
            slots *= 2
    keys = np.zeros(slots, dtype=np.int64)  # free slots too: the table is checkpointed state
    axes = np.full((slots, 3), NO_AXIS, dtype=np.int64)
    mask = slots - 1
    for p in range(found.shape[0]):
        if found[p, 0] == NO_AXIS:
            continue
        key = body_pair_key(ids[pairs[p, 0]], ids[pairs[p, 1]])
        s = hash_slot(key, mask)
        while axes[s, 0] != NO_AXIS:
            s = (s + 1) & mask
        keys[s] = key
        for k in range(3):
            axes[s, k] = found[p, k]
    return keys, axes


@njit(cache=True, inline='always')
def kept_axis(a, b, ids, keys, axes):
    """Slot of the axis kept for rows a and b (ids (n,)) in the table (keys, axes), or −1."""
    if keys.shape[0] == 0:
        return -1
    key = body_pair_key(ids[a], ids[b])
    mask = keys.shape[0] - 1
    s = hash_slot(key, mask)
    while axes[s, 0] != NO_AXIS:  # at most half full: an empty slot is near
        if keys[s] == key:
            return s
        s = (s + 1) & mask
    return -1


@njit(cache=True, inline='always')
def swapped(kind, first, second, swap):
    """The axis (kind, feature of the first hull, of the second) as seen with the pair's two
    hulls swapped if swap, else as it is."""
    if not swap:
        return kind, first, second
    if kind != EDGES:
        kind = FACE_OF_SECOND if kind == FACE_OF_FIRST else FACE_OF_FIRST
    return kind, second, first


@njit(cache=True, inline='always')
def remember(row, kind, first, second, swap):
    """Write the axis (kind, local feature of the pair's first hull, of its second) into row
    (3,) (``unfound``'s layout), the hulls swapped if swap (the first has the higher id)."""
    row[0], row[1], row[2] = swapped(kind, first, second, swap)
