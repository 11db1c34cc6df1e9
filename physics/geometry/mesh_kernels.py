"""Compiled passes behind mesh cleaning: matching equal vertices, triangles and edges by hashing
(linear time, one pass each) instead of sorting, and the per-piece sums of winding repair.

Each function gives exactly what the sorting-based formulation gave (trimesh's
``merge_vertices``, ``np.unique``'s first occurrences, scipy's connected components), so a mesh
cleans to the same arrays; only the cost changes. The hash tables are open-addressed with
linear probing, sized to a power of two at least twice the number of keys.
"""

from __future__ import annotations

import numpy as np
from numba import njit

EMPTY_SLOT = -1  # an empty slot of a hash table


@njit(cache=True, nogil=True, inline="always")
def _root(parent, a):
    """Union–find: the root of a's set, halving the path on the way (in place)."""
    while parent[a] != a:
        parent[a] = parent[parent[a]]
        a = parent[a]
    return a


@njit(cache=True, nogil=True, inline="always")
def hash3(x, y, z, mask):
    """Slot for the int64 triple (x, y, z) in a table of mask + 1 slots (a multiplicative mix)."""
    h = np.uint64(x) * np.uint64(0x9E3779B97F4A7C15)
    h ^= np.uint64(y) * np.uint64(0xC2B2AE3D27D4EB4F)
    h ^= np.uint64(z) * np.uint64(0x165667B19E3779F9)
    h ^= h >> np.uint64(29)
    return np.int64(h & np.uint64(mask))


def table_size(keys: int) -> int:
    """Slots of an open-addressed table for ``keys`` keys: a power of two, at least twice."""
    return 1 << max(4, (2 * max(keys, 1) - 1).bit_length())


def merge_vertices(vertices: np.ndarray, faces: np.ndarray,
                   digits: int) -> tuple[np.ndarray, np.ndarray]:
    """trimesh's ``merge_vertices``: vertices (n, 3) whose coordinates agree when rounded to
    ``digits`` decimals (x·10^digits rounded half to even, as numpy rounds) become one, the
    first one (in index order) standing for all; vertices no face uses are dropped. Returns
    (vertices (k, 3) in index order of their first copy, faces (m, 3) renumbered)."""
    vertices = np.ascontiguousarray(vertices, dtype=np.float64)
    faces = np.ascontiguousarray(faces, dtype=np.int64)
    referenced = np.zeros(len(vertices), dtype=np.bool_)
    _mark(faces, referenced)
    # int32 slots halve the table (64 MB of new pages for an STL scan's 3.9 M corners)
    table = np.full(table_size(len(vertices)), EMPTY_SLOT,
                    dtype=np.int32 if len(vertices) < 2 ** 31 else np.int64)
    inverse = np.zeros(len(vertices), dtype=np.int64)
    kept = np.empty(len(vertices), dtype=np.int64)
    count = _merge(vertices, float(10 ** digits), referenced, table, inverse, kept)
    renumbered = np.empty_like(faces)  # numpy's own: a Mesh keeps it, and a Shape shares it
    _renumber(faces, inverse, renumbered)
    return vertices[kept[:count]], renumbered


@njit(cache=True, nogil=True)
def _mark(faces, used):
    for t in range(faces.shape[0]):
        for k in range(3):
            used[faces[t, k]] = True


@njit(cache=True, nogil=True)
def _renumber(faces, inverse, out):
    for t in range(faces.shape[0]):
        for k in range(3):
            out[t, k] = inverse[faces[t, k]]


@njit(cache=True, nogil=True)
def used_extent(vertices, faces):
    """(3,) max − min of the vertices the faces use, per axis (m); zeros for no faces."""
    used = np.zeros(vertices.shape[0], np.bool_)
    _mark(faces, used)
    low = np.full(3, np.inf)
    high = np.full(3, -np.inf)
    for v in range(vertices.shape[0]):
        if used[v]:
            for c in range(3):
                low[c] = min(low[c], vertices[v, c])
                high[c] = max(high[c], vertices[v, c])
    if faces.shape[0] == 0:
        return np.zeros(3)
    return high - low


@njit(cache=True, nogil=True)
def _merge(vertices, scale, referenced, table, inverse, kept):
    """inverse[i] = the merged index of vertex i; kept[:count] = the first vertex of each key
    (the coordinates times ``scale``, rounded half to even)."""
    mask = table.shape[0] - 1
    count = 0
    for i in range(vertices.shape[0]):
        if not referenced[i]:
            continue
        x = np.int64(np.rint(vertices[i, 0] * scale))
        y = np.int64(np.rint(vertices[i, 1] * scale))
        z = np.int64(np.rint(vertices[i, 2] * scale))
        slot = hash3(x, y, z, mask)
        while True:
            j = table[slot]
            if j == EMPTY_SLOT:
                table[slot] = count
                kept[count] = i
                inverse[i] = count
                count += 1
                break
            k = kept[j]
            if (np.int64(np.rint(vertices[k, 0] * scale)) == x
                    and np.int64(np.rint(vertices[k, 1] * scale)) == y
                    and np.int64(np.rint(vertices[k, 2] * scale)) == z):
                inverse[i] = j
                break
            slot = (slot + 1) & mask
    return count


def distinct_faces(faces: np.ndarray) -> np.ndarray:
    """(m,) bool: the triangle has three different corners and is not a repeat of an earlier
    triangle with the same winding (the same corners in the same cyclic order). A triangle and
    its reverse are both kept: together they are a legitimate two-sided sheet."""
    keep = np.zeros(len(faces), dtype=np.bool_)
    table = np.full(table_size(len(faces)), EMPTY_SLOT, dtype=np.int64)
    _distinct(faces, table, keep)
    return keep


@njit(cache=True, nogil=True)
def _distinct(faces, table, keep):
    mask = table.shape[0] - 1
    canonical = np.empty(3, np.int64)
    for t in range(faces.shape[0]):
        a, b, c = faces[t, 0], faces[t, 1], faces[t, 2]
        if a == b or b == c or c == a:
            continue
        # rotate so the smallest index comes first (keeps the cyclic order)
        if a < b and a < c:
            canonical[0], canonical[1], canonical[2] = a, b, c
        elif b < c:
            canonical[0], canonical[1], canonical[2] = b, c, a
        else:
            canonical[0], canonical[1], canonical[2] = c, a, b
        slot = hash3(canonical[0], canonical[1], canonical[2], mask)
        while True:
            s = table[slot]
            if s == EMPTY_SLOT:
                table[slot] = t
                keep[t] = True
                break
            p, q, r = faces[s, 0], faces[s, 1], faces[s, 2]
            if ((p == canonical[0] and q == canonical[1] and r == canonical[2])
                    or (q == canonical[0] and r == canonical[1] and p == canonical[2])
                    or (r == canonical[0] and p == canonical[1] and q == canonical[2])):
                break  # a repeat: not kept
            slot = (slot + 1) & mask


@njit(cache=True, nogil=True)
def maybe_slivers(vertices, faces, tolerance):
    """(m,) bool: triangles that may have an edge of length ≤ ``tolerance`` or a height ≤ it
    (trimesh's ``nondegenerate`` test), with a factor-2 margin for rounding: every triangle that
    test flags is among these, and only these need its exact verdict."""
    out = np.zeros(faces.shape[0], np.bool_)
    limit = 2.0 * tolerance
    for t in range(faces.shape[0]):
        i, j, k = faces[t, 0], faces[t, 1], faces[t, 2]
        ax, ay, az = vertices[j, 0] - vertices[i, 0], vertices[j, 1] - vertices[i, 1], \
            vertices[j, 2] - vertices[i, 2]
        bx, by, bz = vertices[k, 0] - vertices[i, 0], vertices[k, 1] - vertices[i, 1], \
            vertices[k, 2] - vertices[i, 2]
        la = np.sqrt(ax * ax + ay * ay + az * az)
        lb = np.sqrt(bx * bx + by * by + bz * bz)
        nx, ny, nz = ay * bz - az * by, az * bx - ax * bz, ax * by - ay * bx
        twice_area = np.sqrt(nx * nx + ny * ny + nz * nz)
        out[t] = la <= limit or lb <= limit or twice_area <= limit * max(la, lb)
    return out


def edge_table(faces: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray,
                                           np.ndarray]:
    """The undirected edges of the triangles (m, 3), matched by hashing.

    Directed edge e = 3f + k runs from faces[f, k] to faces[f, (k + 1) % 3]. Returns
    (inverse (3m,) edge id of each directed edge, counts (E,) directed edges per id, forward
    (E,) how many of them run from the lower to the higher vertex index, first (E,) and
    second (E,) the first two directed edges of each id, −1 where missing). Ids are numbered in
    order of first appearance.
    """
    m = len(faces)
    table = np.full(table_size(3 * m // 2 + 1), EMPTY_SLOT, dtype=np.int64)
    inverse = np.empty(3 * m, dtype=np.int64)
    counts = np.zeros(3 * m, dtype=np.int64)
    forward = np.zeros(3 * m, dtype=np.int64)
    first = np.full(3 * m, -1, dtype=np.int64)
    second = np.full(3 * m, -1, dtype=np.int64)
    n = _edges(faces, table, inverse, counts, forward, first, second)
    return inverse, counts[:n], forward[:n], first[:n], second[:n]


@njit(cache=True, nogil=True)
def _edges(faces, table, inverse, counts, forward, first, second):
    mask = table.shape[0] - 1
    flat = faces.ravel()
    n = 0
    for e in range(flat.shape[0]):
        a = flat[e]
        b = flat[e + 1] if e % 3 != 2 else flat[e - 2]
        lo, hi = min(a, b), max(a, b)
        slot = hash3(lo, hi, 0, mask)
        while True:
            s = table[slot]
            if s == EMPTY_SLOT:
                table[slot] = n
                first[n] = e
                s = n
                n += 1
                break
            f = first[s]
            c = flat[f]
            d = flat[f + 1] if f % 3 != 2 else flat[f - 2]
            if min(c, d) == lo and max(c, d) == hi:
                if counts[s] == 1:
                    second[s] = e
                break
            slot = (slot + 1) & mask
        inverse[e] = s
        counts[s] += 1
        if a < b:
            forward[s] += 1
    return n


@njit(cache=True, nogil=True)
def face_components(m, first, second, counts):
    """(m,) piece label of each triangle: triangles are joined through the edges that exactly
    two share (first/second/counts from ``edge_table``). Labels are numbered in order of each
    piece's first triangle, as scipy's ``connected_components`` numbers them."""
    parent = np.arange(m)
    for s in range(counts.shape[0]):
        if counts[s] != 2:
            continue
        a, b = first[s] // 3, second[s] // 3
        a, b = _root(parent, a), _root(parent, b)
        if a != b:
            if a < b:
                parent[b] = a
            else:
                parent[a] = b
    return _first_appearance(parent)


def closed_pieces(faces: np.ndarray, n: int) -> tuple[bool, np.ndarray]:
    """(closed, labels): closed when every edge of the triangles (m, 3) on n vertices is shared
    by exactly two of them running it in opposite directions; then labels (m,) numbers the
    pieces joined through those edges in order of each piece's first triangle (as
    ``face_components``), else it is empty.

    The matching needs no hashing: corners are grouped by vertex (counting sort), and at each
    vertex u every edge u→v leaving it must be unique and met by one edge v→u entering it
    (stamps, as in ``physics.geometry.inertia``), whose triangle is then joined to the first.
    """
    # int32 scratch halves the memory the pass touches (below 2³¹ vertices and triangles)
    small = max(n, len(faces)) < 2 ** 31
    link = np.empty((3 * len(faces), 3), np.int32 if small else np.int64)
    return _closed_pieces(faces, n, link)


@njit(cache=True, nogil=True)
def _closed_pieces(faces, n, link):
    m = faces.shape[0]
    start = np.zeros(n + 1, np.int64)
    for t in range(m):
        a, b, c = faces[t, 0], faces[t, 1], faces[t, 2]
        if a == b or b == c or c == a:
            return False, np.empty(0, np.int64)
        start[a + 1] += 1
        start[b + 1] += 1
        start[c + 1] += 1
    for v in range(n):
        start[v + 1] += start[v]
    fill = start[:n].copy()
    # link[corner at u] = the target of the edge leaving u, the source of the edge entering it,
    # and the triangle
    for t in range(m):
        for k in range(3):
            u = faces[t, k]
            i = fill[u]
            link[i, 0] = faces[t, (k + 1) % 3]
            link[i, 1] = faces[t, (k + 2) % 3]
            link[i, 2] = t
            fill[u] = i + 1
    stamp = np.full(n, -1, np.int64)
    face_of = np.empty(n, np.int64)
    parent = np.arange(m)
    for u in range(n):
        for i in range(start[u], start[u + 1]):
            v = link[i, 0]
            if stamp[v] == u:
                return False, np.empty(0, np.int64)  # u→v twice
            stamp[v] = u
            face_of[v] = link[i, 2]
        for i in range(start[u], start[u + 1]):
            w = link[i, 1]
            if stamp[w] != u:
                return False, np.empty(0, np.int64)  # w→u without u→w
            a, b = link[i, 2], face_of[w]
            a, b = _root(parent, a), _root(parent, b)
            if a < b:
                parent[b] = a
            elif b < a:
                parent[a] = b
    return True, _first_appearance(parent)


@njit(cache=True, nogil=True)
def _first_appearance(parent):
    """Labels of a union-find forest (parent (m,), every root its piece's smallest member),
    numbered in order of each piece's first member."""
    m = parent.shape[0]
    labels = np.empty(m, np.int64)
    count = 0
    for t in range(m):
        root = t
        while parent[root] != root:
            root = parent[root]
        if root == t:
            labels[t] = count
            count += 1
        else:
            labels[t] = labels[root]
    return labels


@njit(cache=True, nogil=True)
def piece_sums(vertices, centre, faces, labels, pieces, open_face):
    """Per piece (labels (m,) < pieces): six times the signed volume about ``centre`` (3,),
    whether one of its triangles has open_face set, and the box of its corners relative to
    ``centre`` (low (pieces, 3), high (pieces, 3))."""
    volume = np.zeros(pieces)
    is_open = np.zeros(pieces, np.bool_)
    low = np.full((pieces, 3), np.inf)
    high = np.full((pieces, 3), -np.inf)
    corner = np.empty((3, 3))
    for t in range(faces.shape[0]):
        p = labels[t]
        if open_face[t]:
            is_open[p] = True
        for k in range(3):
            v = faces[t, k]
            for c in range(3):
                x = vertices[v, c] - centre[c]
                corner[k, c] = x
                low[p, c] = min(low[p, c], x)
                high[p, c] = max(high[p, c], x)
        a, b, c = corner[0], corner[1], corner[2]
        volume[p] += (a[0] * (b[1] * c[2] - b[2] * c[1]) - a[1] * (b[0] * c[2] - b[2] * c[0])
                      + a[2] * (b[0] * c[1] - b[1] * c[0]))
    return volume, is_open, low, high


@njit(cache=True, nogil=True)
def column_means(points):
    """(d,) the mean of each column of points (n, d): the very values of numpy's
    ``points.mean(axis=0)``, which adds the rows one after the other a few numbers at a time
    (~13 ms for a scan's 655 k vertices, asked three times by its load); the same sums in the
    same order here, in compiled code without the GIL (~3 ms)."""
    total = np.zeros(points.shape[1])
    for i in range(points.shape[0]):
        for c in range(points.shape[1]):
            total[c] += points[i, c]
    return total / points.shape[0]


def singular_values(points: np.ndarray) -> np.ndarray:
    """(3,) singular values, largest first, of ``points`` (n, 3) — those of the triangular
    factor R of points = Q·R (Householder, in compiled code without the GIL: numpy's SVD of a
    scan's 655 k vertices holds the GIL for 25–150 ms, which stalls the render thread while a
    big mesh loads). Householder QR is backward stable, so these equal the SVD's to rounding
    (~1e-16 of the largest); they decide only whether a point set is flat."""
    r = _triangular_factor(np.ascontiguousarray(points, dtype=np.float64))
    return np.linalg.svd(r, compute_uv=False)


@njit(cache=True, nogil=True)
def _triangular_factor(points):
    """R (3, 3) upper triangular of points (n, 3) = Q·R, by three Householder reflections."""
    a = points.copy()
    n = a.shape[0]
    r = np.zeros((3, 3))
    for k in range(min(3, n)):
        square = 0.0
        for i in range(k, n):
            square += a[i, k] * a[i, k]
        if square == 0.0:
            continue
        alpha = -np.sqrt(square) if a[k, k] > 0.0 else np.sqrt(square)
        head = a[k, k] - alpha  # the reflection's vector: (head, a[k+1:, k])
        length = square - a[k, k] * a[k, k] + head * head
        a[k, k] = head
        r[k, k] = alpha
        for j in range(k + 1, 3):
            dot = 0.0
            for i in range(k, n):
                dot += a[i, k] * a[i, j]
            factor = 2.0 * dot / length
            for i in range(k, n):
                a[i, j] -= factor * a[i, k]
            r[k, j] = a[k, j]
    return r
