"""Vertex clustering in compiled code (numba, without the GIL): a coarse level of a big mesh in a
fraction of a second, the first thing drawn of a dropped scan while its real levels of detail
are made (``app.render.renderer.prepare_first_level``). An attempt at a cell size that yields
too many faces stops as soon as it has them.

The same clustering as the renderer's ``_cluster`` (J. Rossignac and P. Borrel, 1993): vertices
merged per cell of a uniform grid at their mean, collapsed and folded-over faces dropped, one
copy of each face kept; the cells are matched by hashing instead of sorting, and each attempt at
a cell size is one pass over the faces.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
from numba import njit

_EMPTY = -1


def cluster(vertices: np.ndarray, faces: np.ndarray, target: int) -> tuple[np.ndarray,
                                                                           np.ndarray]:
    """A coarser mesh of about ``target`` faces: vertices (n, 3), faces (m, 3) → (vertices
    (k, 3), faces (t, 3) int64). The cell size starts where a smooth surface keeps about
    ``target`` faces (one per cell size² of area) and grows by 25 % until the count is at most
    1.15 × target (12 tries at most). Faces keep their orientation."""
    vertices = np.ascontiguousarray(vertices, dtype=np.float64)
    faces = np.ascontiguousarray(faces, dtype=np.int64)
    normals, area = _vertex_normals(vertices, faces)
    n = len(vertices)
    # one set of work arrays for every attempt: memory touched for the first time costs more
    # than the pass itself (page faults), and rows past the clusters found are never touched
    scratch = _Scratch(table=np.empty(_table_size(n), np.int64),
                       cluster=np.empty(n, np.int64), cell=np.empty((n, 3), np.int64),
                       sums=np.empty((n, 3)), surface=np.empty((n, 3)),
                       counts=np.empty(n, np.int64))
    cell_size = math.sqrt(max(area, 1e-30) / max(target, 1))
    limit = int(1.15 * target)
    for attempt in range(12):
        # a pass is cut short past the limit (so its face table stays small), but the last
        # one is kept whatever its count
        cap = limit if attempt < 11 else len(faces)
        face_table = np.empty(_table_size(cap + 1), np.int64)
        out = np.empty((min(cap + 1, len(faces)), 3), np.int64)
        merged, count = _cluster_pass(vertices, faces, normals, cell_size, scratch, face_table,
                                      out, cap)
        if count <= limit:
            break
        cell_size *= 1.25
    out = out[:count]
    used, out = np.unique(out, return_inverse=True)
    return merged[used], out.reshape(-1, 3)


class _Scratch(NamedTuple):
    """Work arrays of the clustering passes over n vertices (only the first k rows of the
    per-cluster ones are used, k clusters)."""

    table: np.ndarray    # (2^j ≥ 2n,) int64: open-addressed grid cell → cluster, or _EMPTY
    cluster: np.ndarray  # (n,) int64: the cluster of each vertex
    cell: np.ndarray     # (n, 3) int64: the grid cell of each cluster
    sums: np.ndarray     # (n, 3) m: sum of each cluster's vertices
    surface: np.ndarray  # (n, 3): sum of each cluster's vertex normals
    counts: np.ndarray   # (n,) int64: vertices in each cluster


def _table_size(keys: int) -> int:
    """Slots of an open-addressed table for ``keys`` keys: a power of two, at least twice."""
    return 1 << max(4, (2 * keys).bit_length())


@njit(cache=True, nogil=True)
def _vertex_normals(vertices, faces):
    """Area-weighted vertex normals (n, 3) (sums of the faces' cross products) and the area."""
    normals = np.zeros_like(vertices)
    area = 0.0
    for t in range(faces.shape[0]):
        i, j, k = faces[t, 0], faces[t, 1], faces[t, 2]
        ux, uy, uz = (vertices[j, 0] - vertices[i, 0], vertices[j, 1] - vertices[i, 1],
                      vertices[j, 2] - vertices[i, 2])
        wx, wy, wz = (vertices[k, 0] - vertices[i, 0], vertices[k, 1] - vertices[i, 1],
                      vertices[k, 2] - vertices[i, 2])
        nx, ny, nz = uy * wz - uz * wy, uz * wx - ux * wz, ux * wy - uy * wx
        area += 0.5 * np.sqrt(nx * nx + ny * ny + nz * nz)
        for v in (i, j, k):
            normals[v, 0] += nx
            normals[v, 1] += ny
            normals[v, 2] += nz
    return normals, area


@njit(cache=True, nogil=True, inline="always")
def _slot(a, b, c, mask):
    h = np.uint64(a) * np.uint64(0x9E3779B97F4A7C15)
    h ^= np.uint64(b) * np.uint64(0xC2B2AE3D27D4EB4F)
    h ^= np.uint64(c) * np.uint64(0x165667B19E3779F9)
    h ^= h >> np.uint64(29)
    return np.int64(h & np.uint64(mask))


@njit(cache=True, nogil=True)
def _cluster_pass(vertices, faces, normals, cell_size, scratch, face_table, out, limit):
    """One clustering at ``cell_size``: (cluster positions (k, 3), how many faces it keeps,
    written to ``out`` in cluster indices) — cut short once there are more than ``limit``
    faces (too fine: the caller tries a coarser cell)."""
    n, m = vertices.shape[0], faces.shape[0]
    lo = np.empty(3)
    for c in range(3):
        lo[c] = vertices[:, c].min()
    table, cluster, cell, sums, surface, counts = scratch
    mask = table.shape[0] - 1
    table[:] = _EMPTY
    key = np.empty(3, np.int64)
    k = 0
    for v in range(n):
        for c in range(3):
            key[c] = np.int64(np.floor((vertices[v, c] - lo[c]) / cell_size))
        slot = _slot(key[0], key[1], key[2], mask)
        while True:
            s = table[slot]
            if s == _EMPTY:
                table[slot] = k
                s = k
                k += 1
                for c in range(3):
                    cell[s, c] = key[c]
                    sums[s, c] = 0.0
                    surface[s, c] = 0.0
                counts[s] = 0
                break
            if cell[s, 0] == key[0] and cell[s, 1] == key[1] and cell[s, 2] == key[2]:
                break
            slot = (slot + 1) & mask
        cluster[v] = s
        counts[s] += 1
        for c in range(3):
            sums[s, c] += vertices[v, c]
            surface[s, c] += normals[v, c]
    merged = np.empty((k, 3))
    for s in range(k):
        for c in range(3):
            merged[s, c] = sums[s, c] / counts[s]
    face_mask = face_table.shape[0] - 1
    face_table[:] = _EMPTY
    count = 0
    for t in range(m):
        a, b, c = cluster[faces[t, 0]], cluster[faces[t, 1]], cluster[faces[t, 2]]
        if a == b or b == c or c == a:
            continue
        # a face turned more than 45° from its clusters' surface is a fold-over or an edge-on
        # sliver of the clustering (a dark speck when drawn)
        ux, uy, uz = merged[b, 0] - merged[a, 0], merged[b, 1] - merged[a, 1], \
            merged[b, 2] - merged[a, 2]
        wx, wy, wz = merged[c, 0] - merged[a, 0], merged[c, 1] - merged[a, 1], \
            merged[c, 2] - merged[a, 2]
        nx, ny, nz = uy * wz - uz * wy, uz * wx - ux * wz, ux * wy - uy * wx
        sx = surface[a, 0] + surface[b, 0] + surface[c, 0]
        sy = surface[a, 1] + surface[b, 1] + surface[c, 1]
        sz = surface[a, 2] + surface[b, 2] + surface[c, 2]
        agree = nx * sx + ny * sy + nz * sz
        if agree <= 0.7 * np.sqrt(nx * nx + ny * ny + nz * nz) * np.sqrt(sx * sx + sy * sy
                                                                          + sz * sz):
            continue
        # one copy of each face: the smallest index first (keeps the winding)
        if b < a and b < c:
            a, b, c = b, c, a
        elif c < a and c < b:
            a, b, c = c, a, b
        slot = _slot(a, b, c, face_mask)
        while True:
            s = face_table[slot]
            if s == _EMPTY:
                face_table[slot] = count
                out[count, 0], out[count, 1], out[count, 2] = a, b, c
                count += 1
                if count > limit:
                    return merged, count
                break
            if out[s, 0] == a and out[s, 1] == b and out[s, 2] == c:
                break
            slot = (slot + 1) & face_mask
    return merged, count
