"""Wavefront OBJ read into arrays by one compiled pass over the file (numba, without the GIL):
a 1.3 M-face scan in a fraction of trimesh's time, with exactly the arrays trimesh's loader gives
(``load_scene(process=False)``, then flattened) — the same vertices in the same order and the
same faces, down to trimesh's own readings of the format: a negative index counts back from the
file's last vertex, index 0 is the first vertex, vertices no face uses are dropped, and faces
that refer to texture coordinates or normals split their vertices as its ``unmerge_faces`` does.

``read_obj`` handles the layout exporters write: ``v x y z``, triangles ``f`` whose lines all
hold as many indices (``a b c``, ``a/t …``, ``a//n …`` or ``a/t/n …``), single spaces, ``vt``
and ``vn`` lines, comments, ``o``, ``g``, ``s`` and ``mtllib`` lines and at most one ``usemtl``
before the faces. A coordinate is read as the correctly rounded double of its decimal (exact
integer mantissa of at most 15 digits scaled by an exact power of ten of at most 22: one
rounding, W. D. Clinger, PLDI 1990), as trimesh's ``strtod`` reads it. Anything else (polygons,
several materials, vertex colours, longer numbers, tabs, continuation lines, an index out of
range…) gives None, and trimesh reads the file as before — so a damaged file gets trimesh's
reading and the loader's messages.
"""

from __future__ import annotations

import numpy as np
from numba import njit

_OTHER_KEYWORDS = {b"o", b"g", b"s", b"mtllib", b"usemtl"}  # lines kept out of the geometry
_NEWLINE, _SPACE, _SLASH, _MINUS, _PLUS, _DOT, _BACKSLASH = (ord(c) for c in "\n /-+.\\")
_USEMTL = np.frombuffer(b"usemtl ", np.uint8)
_ZERO, _NINE = ord("0"), ord("9")
_MAX_DIGITS = 15  # significant digits of a coordinate read exactly (10^15 < 2^53)
_POWERS = np.array([float(10**k) for k in range(23)])  # exact powers of ten as doubles
_FAILED = (-1, 0, 0, 0)  # what _scan returns for a file it does not read


def read_obj(data: bytes) -> tuple[np.ndarray, np.ndarray] | None:
    """An OBJ file's vertices (n, 3) float64 and faces (m, 3) int64, as trimesh would read them
    (module docstring), or None for a layout this reader leaves to trimesh."""
    text = data.strip()  # trimesh's normalisation: stripped, "\r\n" → "\n", a newline each side
    if b"\r" in text:
        text = text.replace(b"\r\n", b"\n")
    buf = np.empty(len(text) + 2, dtype=np.uint8)  # filled without the GIL, unlike bytes
    buf[0] = buf[-1] = _NEWLINE
    buf[1:-1] = np.frombuffer(text, np.uint8)
    vertex_count, face_count, lines, first_face, first_end, continued, materials = _survey(buf)
    if continued or vertex_count == 0 or face_count == 0:
        return None  # trimesh joins a continued line (a comment with what follows it)
    sample = buf[first_face + 2:first_end].tobytes().decode("ascii", "replace")
    columns = len(sample.replace("/", " ").split())
    if columns not in (3, 6, 9):
        return None
    vertices = np.empty((vertex_count, 3))
    indices = np.empty((face_count, columns), dtype=np.int64)
    others = np.empty((lines, 2), dtype=np.int64)
    vertices_read, faces_read, other_count, normals = _scan(buf, vertices, indices, others,
                                                            _POWERS)
    if (vertices_read != vertex_count or faces_read != face_count
            or not _others_fit(buf, others[:other_count], first_face, materials)):
        return None
    kept, faces = _faces(indices, sample, normals > 0, vertex_count)
    if faces is None:
        return None
    return vertices[kept], faces


def _others_fit(buf: np.ndarray, lines: np.ndarray, first_face: int, materials: int) -> bool:
    """The ``lines`` (k, 2) (start, end in ``buf``) are ``o``, ``g``, ``s``, ``mtllib`` or one
    ``usemtl`` before the first face — nothing that changes which triangles trimesh reads or
    how it groups them; ``materials``: how often "usemtl " appears in the text."""
    found = 0
    for start, end in lines.tolist():
        keyword = buf[start:end].tobytes().split(b" ", 1)[0]
        if keyword not in _OTHER_KEYWORDS:
            return False
        if keyword == b"usemtl":
            found += 1
            if start > first_face:
                return False
    # trimesh splits the faces wherever "usemtl " appears, even inside a comment
    return found <= 1 and materials == found


def _faces(indices: np.ndarray, sample: str, normals: bool,
           vertex_count: int) -> tuple[np.ndarray | None, np.ndarray | None]:
    """(the vertices kept: (n,) indices into the file's ``vertex_count`` vertices, faces (m, 3)
    int64 into those kept) as trimesh's ``load_obj`` makes them from the indices (m, columns)
    of the face lines — deciding from the first one (``sample``) which are texture and normal
    indices, as trimesh does; ``normals``: the file has ``vn`` lines. (None, None) when an
    index is out of range."""
    columns = indices.shape[1]
    indices[indices > 0] -= 1  # OBJ counts from 1; trimesh keeps 0 and negative indices as is
    per_ref = columns // 3
    faces = indices[:, ::per_ref]
    texture = normal = None
    if columns == 6:
        slashes = "".join(token.strip("/") for token in sample.split()).count("/")
        if slashes == 6:    # a//n
            normal = indices[:, 1::2]
        elif slashes == 3:  # a/t
            texture = indices[:, 1::2]
    elif columns == 9:      # a/t/n
        texture, normal = indices[:, 1::3], indices[:, 2::3]
    if faces.min() < -vertex_count or faces.max() >= vertex_count:
        return None, None  # trimesh's IndexError becomes the loader's message naming the line
    if texture is not None or (normal is not None and normals):
        return _unmerged(faces, texture, normal)
    used = np.zeros(vertex_count, dtype=bool)
    used[faces] = True
    inverse = np.zeros(vertex_count, dtype=np.int64)
    inverse[used] = np.arange(used.sum())
    return np.flatnonzero(used), inverse[faces]


def _unmerged(faces, texture, normal) -> tuple[np.ndarray, np.ndarray]:
    """Faces that refer to texture coordinates (and normals) or to normals alone get a vertex
    per distinct (vertex, texture, normal) reference, as trimesh's ``load_obj`` does it (its
    own function, imported only for such files)."""
    from trimesh.visual.texture import unmerge_faces

    if texture is not None:
        found = (unmerge_faces(faces, texture, normal) if normal is not None
                 else unmerge_faces(faces, texture))
    else:
        found = unmerge_faces(faces, normal)
    return found[1], np.asarray(found[0], dtype=np.int64)


@njit(cache=True, nogil=True)
def _survey(buf):
    """What ``_scan`` needs to know first, from the text ``buf`` (uint8, a newline at each end):
    (how many lines start with ``v `` and with ``f ``, how many lines, where the first ``f ``
    line starts and ends, whether a backslash ends a line, how often "usemtl " appears)."""
    n = buf.shape[0]
    vertex_lines = face_lines = lines = materials = 0
    first = -1
    continued = False
    for i in range(n - 1):
        c = buf[i]
        if c == _NEWLINE:
            lines += 1
            if i + 2 < n and buf[i + 2] == _SPACE:
                if buf[i + 1] == ord("v"):
                    vertex_lines += 1
                elif buf[i + 1] == ord("f"):
                    face_lines += 1
                    if first < 0:
                        first = i + 1
        elif c == _BACKSLASH and buf[i + 1] == _NEWLINE:
            continued = True
        elif c == ord("u") and i + _USEMTL.shape[0] <= n:
            same = True
            for k in range(1, _USEMTL.shape[0]):
                if buf[i + k] != _USEMTL[k]:
                    same = False
                    break
            if same:
                materials += 1
    end = first
    if first >= 0:
        while buf[end] != _NEWLINE:
            end += 1
    return vertex_lines, face_lines, lines, first, end, continued, materials


@njit(cache=True, nogil=True)
def _scan(buf, vertices, indices, others, powers):
    """One pass over the text ``buf`` (uint8; it starts and ends with a newline): the vertex
    lines' coordinates into ``vertices`` (n, 3), the face lines' numbers into ``indices``
    (m, columns), where the other lines start and end into ``others`` (k, 2) (skipping empty
    lines, comments, ``vt`` and ``vn``). Returns (vertex lines, face lines, other lines, ``vn``
    lines), or _FAILED at the first line it does not read as the module docstring says."""
    n = buf.shape[0]
    columns = indices.shape[1]
    nv = nf = no = nn = 0
    i = 1  # past the leading newline
    while i < n:
        c = buf[i]
        after = buf[i + 1] if i + 1 < n else _NEWLINE
        if c == _NEWLINE:
            i += 1
            continue
        if c == ord("v") and after == _SPACE:
            if nv == vertices.shape[0]:
                return _FAILED
            j = i + 2
            for k in range(3):
                value, j = _float(buf, j, powers)
                if j < 0:
                    return _FAILED
                vertices[nv, k] = value
                if buf[j] != (_SPACE if k < 2 else _NEWLINE):
                    return _FAILED
                j += 1
            nv += 1
            i = j
            continue
        if c == ord("f") and after == _SPACE:
            if nf == indices.shape[0]:
                return _FAILED
            j = i + 2
            count = spaces = 0
            while True:
                value, j = _int(buf, j)
                if j < 0 or count == columns:
                    return _FAILED
                indices[nf, count] = value
                count += 1
                d = buf[j]
                if d == _SLASH:
                    j += 1
                    if buf[j] == _SLASH:  # a//n: no texture index
                        j += 1
                elif d == _SPACE:
                    spaces += 1
                    j += 1
                elif d == _NEWLINE:
                    break
                else:
                    return _FAILED
            if count != columns or spaces != 2:
                return _FAILED
            nf += 1
            i = j + 1
            continue
        if c == _SPACE:  # trimesh does not see an indented line
            return _FAILED
        other = False
        if c == ord("v") and (after == ord("n") or after == ord("t")) and buf[i + 2] == _SPACE:
            if after == ord("n"):
                nn += 1
        elif c != ord("#"):
            other = True
            others[no, 0] = i
        while buf[i] != _NEWLINE:
            i += 1
        if other:
            others[no, 1] = i
            no += 1
        i += 1
    return nv, nf, no, nn


@njit(cache=True, nogil=True, inline="always")
def _int(buf, j):
    """(the integer at buf[j:], the index after it), or j = -1 when there is none."""
    negative = buf[j] == _MINUS
    if negative:
        j += 1
    value = 0
    digits = 0
    while _ZERO <= buf[j] <= _NINE and digits < 18:
        value = value * 10 + (buf[j] - _ZERO)
        digits += 1
        j += 1
    if digits == 0 or _ZERO <= buf[j] <= _NINE:
        return 0, -1
    return (-value if negative else value), j


@njit(cache=True, nogil=True, inline="always")
def _float(buf, j, powers):
    """(the decimal number at buf[j:] as the correctly rounded double, the index after it), or
    j = -1 when it is not a plain decimal this reads exactly (module docstring)."""
    negative = buf[j] == _MINUS
    if negative or buf[j] == _PLUS:
        j += 1
    mantissa = 0
    significant = digits = scale = 0
    while _ZERO <= buf[j] <= _NINE:
        if mantissa or buf[j] != _ZERO:
            significant += 1
        mantissa = mantissa * 10 + (buf[j] - _ZERO)
        digits += 1
        j += 1
        if significant > _MAX_DIGITS:
            return 0.0, -1
    if buf[j] == _DOT:
        j += 1
        while _ZERO <= buf[j] <= _NINE:
            if mantissa or buf[j] != _ZERO:
                significant += 1
            mantissa = mantissa * 10 + (buf[j] - _ZERO)
            digits += 1
            scale -= 1
            j += 1
            if significant > _MAX_DIGITS:
                return 0.0, -1
    if digits == 0:
        return 0.0, -1
    if buf[j] == ord("e") or buf[j] == ord("E"):
        j += 1
        minus = buf[j] == _MINUS
        if minus or buf[j] == _PLUS:
            j += 1
        exponent = 0
        exponent_digits = 0
        while _ZERO <= buf[j] <= _NINE and exponent_digits < 4:
            exponent = exponent * 10 + (buf[j] - _ZERO)
            exponent_digits += 1
            j += 1
        if exponent_digits == 0 or _ZERO <= buf[j] <= _NINE:
            return 0.0, -1
        scale += -exponent if minus else exponent
    value = float(mantissa)
    if mantissa != 0:
        if 0 <= scale <= 22:
            value = value * powers[scale]
        elif -22 <= scale < 0:
            value = value / powers[-scale]
        else:
            return 0.0, -1
    return (-value if negative else value), j
