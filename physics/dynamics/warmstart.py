"""Warm starting: the accumulated impulses of the previous step's contacts, found again by their
keys (docs/physics.md#sequential-impulses).

A contact keeps its key from one step to the next (collision/keys.py: body ids and the features
that made it), so the impulses it ended the last step with are the solver's first guess
for this one. The cache is an open-addressing hash table (linear probing, Fibonacci hashing)
built and searched in one compiled pass each: a sorted array searched with ``searchsorted`` cost
about half a millisecond a step for a pile of 1000 boxes (a sort, a binary search per contact and
the numpy calls around them), the table a few tens of microseconds.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit

_FIBONACCI = np.uint64(0x9E3779B97F4A7C15)  # 2⁶⁴ / φ: spreads nearby keys over the table


class ContactCache(NamedTuple):
    """Accumulated impulses of the previous step's loaded contacts, by key.

    keys (m,) int64 and impulses (m, 3) normal, tangent 1, tangent 2, N·s: a hash table of m
    slots, a power of two at least twice the number of contacts stored; used (m,) bool marks
    the slots that hold one. Empty (m = 0) before the first step (the empty arrays are shared
    by every empty cache: they have no element to change). A record, so compiled code takes
    it whole (``cached_impulses``, ``cache_of``).
    """

    keys: np.ndarray = np.zeros(0, dtype=np.int64)
    impulses: np.ndarray = np.zeros((0, 3))
    used: np.ndarray = np.zeros(0, dtype=bool)

    @staticmethod
    def of(keys, impulses, keep) -> ContactCache:
        """The cache of the contacts where keep (k,) bool is true; keys (k,) int64 unique,
        impulses (k, 3) N·s."""
        return cache_of(np.ascontiguousarray(keys, dtype=np.int64),
                        np.ascontiguousarray(impulses, dtype=float),
                        np.ascontiguousarray(keep, dtype=bool))

    def impulses_of(self, keys) -> np.ndarray:
        """(k, 3) the cached impulses of the contacts with these keys (k,), zero for new ones."""
        return cached_impulses(tuple(self), np.ascontiguousarray(keys, dtype=np.int64))


@njit(cache=True, nogil=True)
def cache_of(keys, impulses, keep):
    """``ContactCache.of``, compiled: a table of twice the smallest power of two ≥ the count
    kept (at least 1)."""
    slots = 1
    while slots < np.count_nonzero(keep):
        slots *= 2
    cache = ContactCache(np.zeros(2 * slots, dtype=np.int64), np.zeros((2 * slots, 3)),
                         np.zeros(2 * slots, dtype=np.bool_))
    _store_kernel(keys, impulses, keep, cache.keys, cache.impulses, cache.used)
    return cache


@njit(cache=True, nogil=True)
def cached_impulses(cache, keys):
    """``ContactCache.impulses_of``, compiled; cache a ``ContactCache`` (or its plain tuple,
    docs/architecture.md#records)."""
    cache = ContactCache(*cache)
    out = np.zeros((keys.shape[0], 3))
    if cache.keys.shape[0]:
        _lookup_kernel(cache.keys, cache.impulses, cache.used, keys, out)
    return out


@njit(cache=True)
def hash_slot(key, mask):
    """Home slot of a key in a table of mask + 1 slots (the product's top bits, spread by the
    multiplication, folded down by the mask)."""
    return np.int64((np.uint64(key) * _FIBONACCI) >> np.uint64(32)) & mask


@njit(cache=True, nogil=True)
def _store_kernel(keys, impulses, keep, table_keys, table_impulses, used):
    mask = table_keys.shape[0] - 1
    for c in range(keys.shape[0]):
        if not keep[c]:
            continue
        s = hash_slot(keys[c], mask)
        while used[s]:  # at most half full: an empty slot is near
            s = (s + 1) & mask
        used[s] = True
        table_keys[s] = keys[c]
        for j in range(3):
            table_impulses[s, j] = impulses[c, j]


@njit(cache=True, nogil=True)
def _lookup_kernel(table_keys, table_impulses, used, keys, out):
    mask = table_keys.shape[0] - 1
    for c in range(keys.shape[0]):
        s = hash_slot(keys[c], mask)
        while used[s]:  # probing ends at the first empty slot: the key is not there
            if table_keys[s] == keys[c]:
                for j in range(3):
                    out[c, j] = table_impulses[s, j]
                break
            s = (s + 1) & mask
