"""Binary PLY and STL read straight into arrays, the two formats big scans and CAD exports come
in: no parser loop and no trimesh import (a third of a second, a third of ``tumble inertia``).

The PLY reader returns exactly the arrays trimesh's loader would (``load_scene(process=False)``,
then flattened): vertices (n, 3) float64, faces (m, 3) int64. The STL reader returns the same
triangles with each distinct corner once (trimesh keeps every corner of every triangle: 3.9 M
for a 1.3 M-face scan), found by hashing the stored float32 values in compiled code: the mesh
then cleans to the same arrays (equal coordinates merge anyway, the first copy standing for
all) without converting and merging every copy. Both return None for any layout they do not
handle (ASCII, polygons other than triangles, extra elements, trailing bytes), which trimesh
then reads as before.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from physics.geometry.mesh_kernels import EMPTY_SLOT, hash3, table_size

# PLY scalar type names (both spellings) → numpy type codes without byte order
_PLY_TYPES = {"char": "i1", "int8": "i1", "uchar": "u1", "uint8": "u1", "short": "i2",
              "int16": "i2", "ushort": "u2", "uint16": "u2", "int": "i4", "int32": "i4",
              "uint": "u4", "uint32": "u4", "float": "f4", "float32": "f4", "double": "f8",
              "float64": "f8"}
# one triangle of a binary STL: its normal, three corners (float32) and an attribute word
STL_RECORD = np.dtype([("normal", "<f4", 3), ("corners", "<f4", (3, 3)), ("attribute", "<u2")])


def read_binary_stl(data: bytes) -> tuple[np.ndarray, np.ndarray] | None:
    """A binary STL (80-byte header, uint32 count n, n 50-byte records) whose size matches its
    count: each distinct corner once, in the order of its first copy — or, when
    a coordinate is not finite, every corner its own vertex, as stored (the loader's message
    counts them). None otherwise."""
    if len(data) < 84:
        return None
    count = int(np.frombuffer(data, "<u4", 1, 80)[0])
    if len(data) != 84 + 50 * count or count == 0:
        return None
    corners = np.frombuffer(data, STL_RECORD, count, 84)["corners"]  # (n, 3, 3) float32
    if not np.isfinite(corners).all():
        return (corners.reshape(-1, 3).astype(np.float64),
                np.arange(3 * count, dtype=np.int64).reshape(-1, 3))
    table = np.full(table_size(3 * count), EMPTY_SLOT, dtype=np.int32)
    vertices = np.empty((3 * count, 3))  # pages past the distinct corners are never touched
    faces = np.empty((count, 3), dtype=np.int64)
    distinct = _distinct_corners(corners.view("<u4"), corners, table, vertices, faces)
    return vertices[:distinct].copy(), faces


@njit(cache=True, nogil=True)
def _distinct_corners(bits, corners, table, vertices, faces):
    """Each distinct corner of ``corners`` (n, 3, 3) float32 (``bits``: the same memory as
    uint32) once into ``vertices`` (float64, in the order of first copies) and each triangle's
    corners as indices into them into ``faces`` (n, 3); returns how many are distinct."""
    mask = table.shape[0] - 1
    count = 0
    for t in range(bits.shape[0]):
        for c in range(3):
            x, y, z = bits[t, c, 0], bits[t, c, 1], bits[t, c, 2]
            slot = hash3(np.int64(x), np.int64(y), np.int64(z), mask)
            while True:
                j = table[slot]
                if j == EMPTY_SLOT:
                    table[slot] = count
                    for k in range(3):
                        vertices[count, k] = corners[t, c, k]
                    faces[t, c] = count
                    count += 1
                    break
                # equal values (0.0 and −0.0 hash apart; merged or not, they merge when cleaned)
                if (vertices[j, 0] == corners[t, c, 0] and vertices[j, 1] == corners[t, c, 1]
                        and vertices[j, 2] == corners[t, c, 2]):
                    faces[t, c] = j
                    break
                slot = (slot + 1) & mask
    return count



def read_binary_ply(data: bytes) -> tuple[np.ndarray, np.ndarray] | None:
    """A binary PLY holding exactly a vertex element (with x, y, z among scalar properties) and
    then a face element of one vertex-index list, every face a triangle. None otherwise."""
    end = data.find(b"end_header", 0, 65536)
    if end < 0:
        return None
    body = data.find(b"\n", end) + 1
    try:
        lines = data[:end].decode("ascii").splitlines()
    except UnicodeDecodeError:
        return None
    words = [line.split() for line in lines[1:] if line.strip()]
    words = [w for w in words if w[0] not in ("comment", "obj_info")]
    if not words or words[0][:2] not in (["format", "binary_little_endian"],
                                         ["format", "binary_big_endian"]):
        return None
    order = "<" if words[0][1] == "binary_little_endian" else ">"
    elements = []  # [name, count, [property words]]
    for w in words[1:]:
        if w[0] == "element" and len(w) == 3:
            elements.append((w[1], int(w[2]), []))
        elif w[0] == "property" and elements:
            elements[-1][2].append(w[1:])
        else:
            return None
    if [e[0] for e in elements] != ["vertex", "face"]:
        return None
    (_, n, vertex_props), (_, m, face_props) = elements
    if any(len(p) != 2 or p[0] not in _PLY_TYPES for p in vertex_props):
        return None
    names = [p[1] for p in vertex_props]
    if not {"x", "y", "z"} <= set(names) or len(set(names)) != len(names):
        return None
    if (len(face_props) != 1 or len(face_props[0]) != 4 or face_props[0][0] != "list"
            or face_props[0][3] not in ("vertex_indices", "vertex_index")
            or face_props[0][1] not in _PLY_TYPES or face_props[0][2] not in _PLY_TYPES):
        return None
    count_type, index_type = (order + _PLY_TYPES[t] for t in face_props[0][1:3])
    if index_type[-2] == "f" or count_type[-2] == "f":
        return None
    vertex_type = np.dtype([(p[1], order + _PLY_TYPES[p[0]]) for p in vertex_props])
    face_type = np.dtype([("count", count_type), ("corners", index_type, 3)])
    if len(data) != body + n * vertex_type.itemsize + m * face_type.itemsize or m == 0:
        return None
    vertex_rows = np.frombuffer(data, vertex_type, n, body)
    face_rows = np.frombuffer(data, face_type, m, body + n * vertex_type.itemsize)
    if np.any(face_rows["count"] != 3):
        return None
    vertices = np.empty((n, 3))  # each column cast in place: no per-column copies to stack
    for column, key in enumerate("xyz"):
        vertices[:, column] = vertex_rows[key]
    return vertices, face_rows["corners"].astype(np.int64)
