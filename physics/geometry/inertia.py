"""Mass properties of a triangle mesh: solid or thin shell, and the principal frame
(docs/physics.md#mass-properties-of-a-closed-mesh, docs/physics.md#thin-shells).

Solid: every triangle (a, b, c) spans a tetrahedron with a reference point; with
``d = a·(b×c)`` (six times its signed volume) the volume is ``Σd/6``, the first moment
``Σ d·s/24`` and the second moment ``∫ x xᵀ dV = Σ (d/120)(aaᵀ + bbᵀ + ccᵀ + ssᵀ)``, ``s = a+b+c``.
Signed volumes cancel outside the solid, so any reference point works for a closed, consistently
wound surface. Thin shell: each triangle of area ``A`` carries mass ``σA``, first
moment ``σA·s/3`` and ``∫ x xᵀ dA = (A/12)(aaᵀ + bbᵀ + ccᵀ + ssᵀ)``.

Accuracy (docs/physics.md#mass-properties-of-a-closed-mesh): the parallel-axis shift from the
reference point to the centre of mass cancels catastrophically when the mesh sits far from that
point (a 1×2×3 box at x = 1e5 is 9.3 % off in trimesh). So the reference is the mean of the face
corners, subtracted
from the vertices *before* anything is multiplied; sums are float64, accumulated per block of
faces and the block sums added pairwise (``np.sum`` over an axis), then shifted to the centre of
mass.

Speed: one compiled pass over the faces (numba) gathers each triangle once and accumulates only
the 11 numbers needed (Σd, Σ2A, 3 first-moment and 6 unique second-moment components), instead
of trimesh's dozen (m, 3) temporaries. ``watertight`` is decided by a linear-time pass over the
corners per vertex; trimesh's ``is_watertight`` + ``is_winding_consistent`` sort all edges and
take about half as long as its whole ``mass_properties`` on a 1.3M-face sphere (measured: 0.8 s
against 1.7 s), which would be several times our whole budget.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numba import njit

from physics.geometry.surface import EdgeReport, solid_undefined
from physics.settings import INERTIA_FORMULAS

_BLOCK = 1024  # faces per partial sum: rounding grows with the block length, not the mesh size
# |V| below this times area^(3/2) is a flat mesh (a unit sphere has 0.094; a 1 m × 1 m × 1 µm
# plate 3.5e-7): the solid formula then only returns rounding noise.
_FLAT_VOLUME_RATIO = 1e-9
# Principal moments that break I1 + I2 ≥ I3 (or I1 ≥ 0) by at most this fraction of the largest
# are rounding (a needle-thin or flat body); anything more is a broken tensor.
_ROUNDING_MOMENT = 1e-10


class InertiaError(ValueError):
    """Input for which mass properties cannot be computed; the message says what to do."""


@dataclass(frozen=True, eq=False)
class MassProperties:
    """Mass properties of a mesh (the ``tumble inertia --json`` keys of the README).

    mode               "solid" (density kg/m³) or "shell" (density kg/m²)
    watertight         every edge is shared by exactly two faces with opposite orientation
    volume             m³ enclosed (solid; shell: enclosed volume if watertight, else 0.0)
    area               m² of the surface
    mass               kg
    center_of_mass     (3,) m, mesh frame
    inertia            (3, 3) kg·m² about the centre of mass, mesh axes
    principal_moments  (3,) kg·m² ascending
    principal_axes     (3, 3) columns are the axes, det = +1; inertia = A·diag(moments)·Aᵀ
    warnings           tuple of human-readable notes (inverted winding, open surface, clamping)
    """

    mode: str
    watertight: bool
    volume: float
    area: float
    mass: float
    center_of_mass: np.ndarray    # (3,)
    inertia: np.ndarray           # (3, 3)
    principal_moments: np.ndarray  # (3,)
    principal_axes: np.ndarray    # (3, 3)
    warnings: tuple[str, ...]

    def to_json_dict(self) -> dict:
        """Plain Python values (lists, floats, bool, str) under the README's JSON keys."""
        return {
            "mode": self.mode,
            "watertight": bool(self.watertight),
            "volume": float(self.volume),
            "area": float(self.area),
            "mass": float(self.mass),
            "center_of_mass": [float(x) for x in self.center_of_mass],
            "inertia": [[float(x) for x in row] for row in self.inertia],
            "principal_moments": [float(x) for x in self.principal_moments],
            "principal_axes": [[float(x) for x in row] for row in self.principal_axes],
            "warnings": list(self.warnings),
        }


def mass_properties(vertices, faces, density: float = 1.0, mode: str = "solid", *,
                    watertight: bool | None = None) -> MassProperties:
    """Mass, centre of mass, inertia and principal frame of a triangle mesh.

    vertices  (n, 3) float, m
    faces     (m, 3) int vertex indices, counter-clockwise seen from outside (right-hand normal
              pointing out of the solid); for "shell" the winding does not matter
    density   kg/m³ for "solid", kg/m² for "shell"
    mode      "solid": the volume enclosed by a closed surface; "shell": a thin hollow surface
              (also valid for open meshes)
    watertight  whether the surface is closed and consistently wound, when the caller knows
              (a cleaned ``Mesh`` does): that check, a pass over every edge, is then skipped;
              None: checked here

    Raises ``InertiaError`` for unusable input: bad shapes or values, indices out of range, a flat
    or empty-volume mesh in solid mode, a surface that is not closed and consistently wound in
    solid mode (the same refusal, word for word, as ``tumble inertia --mode solid``), a surface
    of zero area. A closed surface wound inward
    (negative volume) is computed as if flipped, with a warning.
    """
    if mode not in INERTIA_FORMULAS:
        raise InertiaError(f"mode must be 'solid' or 'shell', got {mode!r}")
    try:
        density = float(density)
    except (TypeError, ValueError):
        raise InertiaError(f"density must be a number, got {density!r}") from None
    if not (np.isfinite(density) and density > 0):
        raise InertiaError(f"density must be finite and > 0, got {density!r}")
    vertices, faces = _checked_arrays(vertices, faces)
    m = len(faces)

    # Reference point: the mean of the face corners, which lies within the mesh's extent (a
    # weighted mean of its vertices), so the final shift cannot cancel catastrophically.
    counts = np.zeros(len(vertices), dtype=np.int64)
    ref = np.empty(3)
    bad = _corner_counts(vertices, faces, counts, ref)
    if bad >= 0:
        raise InertiaError(f"faces[{bad}] = {faces[bad].tolist()} has a vertex index outside "
                           f"0..{len(vertices) - 1} (there are {len(vertices)} vertices)")
    if watertight is None:
        # int32 links halve the memory the check touches (any mesh that fits in memory has
        # < 2³¹ vertices, but stay correct beyond)
        links = np.empty((3 * m, 2), np.int32 if len(vertices) < 2 ** 31 else np.int64)
        watertight = _closed_and_oriented(faces, counts, links)
    watertight = bool(watertight)

    blocks = np.empty(((m + _BLOCK - 1) // _BLOCK, 11))
    _face_sums(vertices, faces, ref, mode == "shell", blocks)
    sums = np.sum(blocks, axis=0)  # pairwise over the blocks
    six_volume, twice_area = sums[0], sums[1]
    first, second = sums[2:5], sums[5:11]  # Σ w·s; Σ w·(aaᵀ+bbᵀ+ccᵀ+ssᵀ) as xx yy zz xy yz zx
    area = 0.5 * twice_area
    volume = six_volume / 6.0
    if not np.isfinite(sums).all():
        raise InertiaError("the sums overflowed: vertex coordinates are too large "
                           f"(max |x| = {np.abs(vertices).max():g} m)")
    if not area > 0:
        raise InertiaError("the surface has zero area (every face is degenerate); a body needs "
                           "triangles that span an area")

    warnings = []
    if mode == "solid":
        if abs(volume) <= _FLAT_VOLUME_RATIO * area ** 1.5:
            raise InertiaError(f"mesh volume is too small ({volume:.3g} m³ for a surface of "
                               f"{area:.3g} m²): the mesh is flat or its faces cancel; use "
                               "mode 'shell' for a thin surface")
        if not watertight:
            problem = EdgeReport(faces).problem() or "the surface is not closed"
            raise InertiaError(solid_undefined(problem))
        if volume < 0:
            # Everything is linear in d: flipping every face negates every sum
            # (docs/physics.md#mass-properties-of-a-closed-mesh).
            warnings.append(f"mesh volume is negative ({volume:.6g} m³): the faces are wound "
                            "inward (misoriented triangles); the winding was inverted to compute")
            volume, six_volume, first, second = -volume, -six_volume, -first, -second
        measure = volume
        offset = first / (4.0 * six_volume)   # Σ d·s/24 ÷ Σ d/6
        moment2 = second / 120.0               # ∫ x xᵀ dV about ref
    else:
        measure = area
        offset = first / (3.0 * twice_area)   # Σ A·s/3 ÷ Σ A
        moment2 = second / 24.0                # Σ (A/12)(…) with 2A summed
        volume = abs(volume) if watertight else 0.0

    # Second moment about the centre of mass (parallel-axis theorem on ∫ x xᵀ), then
    # I = ρ (tr C · E − C) (docs/physics.md#mass-properties-of-a-closed-mesh).
    xx, yy, zz, xy, yz, zx = moment2 - measure * np.array(
        [offset[0] ** 2, offset[1] ** 2, offset[2] ** 2,
         offset[0] * offset[1], offset[1] * offset[2], offset[2] * offset[0]])
    inertia = density * np.array([[yy + zz, -xy, -zx],
                                  [-xy, zz + xx, -yz],
                                  [-zx, -yz, xx + yy]])
    moments, axes = _principal_frame(inertia, warnings)
    center = ref + offset
    for array in (center, inertia, moments, axes):
        array.setflags(write=False)
    return MassProperties(mode=mode, watertight=watertight, volume=float(volume), area=float(area),
                          mass=float(density * measure), center_of_mass=center, inertia=inertia,
                          principal_moments=moments, principal_axes=axes,
                          warnings=tuple(warnings))


def _checked_arrays(vertices, faces) -> tuple[np.ndarray, np.ndarray]:
    """(n, 3) float64 and (m, 3) int64 C-contiguous arrays, or an InertiaError saying what is
    wrong."""
    try:
        v = np.ascontiguousarray(vertices, dtype=np.float64)
    except (TypeError, ValueError) as e:
        raise InertiaError(f"vertices must be an (n, 3) array of numbers: {e}") from None
    if v.ndim != 2 or v.shape[1] != 3 or len(v) == 0:
        raise InertiaError(f"vertices must have shape (n, 3) with n ≥ 1, got {v.shape}")
    if not np.isfinite(v).all():
        row = int(np.argmin(np.isfinite(v).all(axis=1)))
        raise InertiaError(f"vertices[{row}] = {v[row].tolist()} is not finite (NaN or Inf); "
                           "fix or remove that vertex")
    f = np.asarray(faces)
    if f.ndim != 2 or f.shape[1] != 3 or len(f) == 0:
        raise InertiaError(f"faces must have shape (m, 3) with m ≥ 1 (triangles), got {f.shape}")
    if not np.issubdtype(f.dtype, np.integer):
        raise InertiaError(f"faces must be integer vertex indices, got dtype {f.dtype}")
    return v, np.ascontiguousarray(f, dtype=np.int64)


def _principal_frame(inertia: np.ndarray, warnings: list) -> tuple[np.ndarray, np.ndarray]:
    """Moments (3,) ascending and axes (3, 3) as columns with det +1
    (docs/physics.md#principal-frame).

    A tensor is a body's inertia iff I1 + I2 ≥ I3 (I1 + I2 − I3 = 2∫z² dm along axis 3; this
    also implies I1 ≥ 0). Rounding may break it, or push I1 of a needle below 0, by a tiny
    fraction of I3: that is tolerated (I1 clamped to 0 with a warning); more is an error.
    """
    moments, axes = np.linalg.eigh(0.5 * (inertia + inertia.T))
    if np.linalg.det(axes) < 0:
        axes[:, 2] = -axes[:, 2]  # any one axis: the eigenvector's sign is arbitrary
    if moments[0] + moments[1] - moments[2] < -_ROUNDING_MOMENT * np.abs(moments).max():
        raise InertiaError(f"the inertia tensor is not physical (principal moments "
                           f"{moments.tolist()} break I1 + I2 ≥ I3): the surface does not "
                           "enclose a volume consistently (parts wound inward?); use mode "
                           "'shell' or repair the mesh")
    if moments[0] < 0:
        warnings.append(f"the smallest principal moment {moments[0]:.3g} is rounding below 0 "
                        "(a needle-thin body); clamped to 0")
        moments[0] = 0.0
    return moments, axes


@njit(cache=True, nogil=True)
def _corner_counts(vertices, faces, counts, ref):
    """counts[v] = number of face corners at vertex v and ref (3,) = the mean of the corners;
    returns the first face row with an index out of range, or -1."""
    n = vertices.shape[0]
    for t in range(faces.shape[0]):
        for k in range(3):
            v = faces[t, k]
            if v < 0 or v >= n:
                return t
            counts[v] += 1
    ref[:] = 0.0
    for v in range(n):
        for k in range(3):
            ref[k] += counts[v] * vertices[v, k]
    ref /= 3.0 * faces.shape[0]
    return -1


@njit(cache=True, nogil=True)
def _closed_and_oriented(faces, counts, link):
    """True when every edge is shared by exactly two faces with opposite orientation.

    Face (a, b, c) has the directed edges a→b, b→c, c→a. The condition holds exactly when every
    directed edge occurs once and so does its reverse. With out(u) the targets of edges leaving u
    and in(u) the sources of edges entering u (both have one entry per corner at u): all out(u)
    free of repeats ⇒ every directed edge is unique ⇒ each in(u) is free of repeats too; then
    in(u) ⊆ out(u) with equal sizes means in(u) = out(u), i.e. u→v exists iff v→u does. Checked
    per vertex with a stamp array: linear time, no sort. link (3m, 2) is scratch space.
    """
    n = counts.shape[0]
    start = np.empty(n + 1, np.int64)
    start[0] = 0
    for v in range(n):
        start[v + 1] = start[v] + counts[v]
    fill = start[:n].copy()
    # link[corner] = (target of the edge leaving u, source of the edge entering u), corners
    # grouped by vertex u (counting sort); one row per corner keeps both writes in one cache line
    for t in range(faces.shape[0]):
        a, b, c = faces[t, 0], faces[t, 1], faces[t, 2]
        if a == b or b == c or c == a:
            return False  # a degenerate face's edge is not shared by two faces
        link[fill[a], 0] = b
        link[fill[a], 1] = c
        fill[a] += 1
        link[fill[b], 0] = c
        link[fill[b], 1] = a
        fill[b] += 1
        link[fill[c], 0] = a
        link[fill[c], 1] = b
        fill[c] += 1
    stamp = np.full(n, -1, link.dtype)
    for u in range(n):
        for i in range(start[u], start[u + 1]):
            v = link[i, 0]
            if stamp[v] == u:
                return False  # u→v twice: an edge with three or more faces, or two alike
            stamp[v] = u
        for i in range(start[u], start[u + 1]):
            if stamp[link[i, 1]] != u:
                return False  # w→u without u→w: an open edge or flipped neighbour
    return True


@njit(cache=True, nogil=True)
def _face_sums(vertices, faces, ref, shell, out):
    """Per block of _BLOCK faces (rows of out (k, 11)): Σd, Σ|n|, Σ w·s (3), Σ w·Q (6: xx yy zz
    xy yz zx), with a, b, c the corners minus ref, n = (b−a)×(c−a), d = a·n = a·(b×c),
    s = a+b+c, Q = aaᵀ+bbᵀ+ccᵀ+ssᵀ and the weight w = |n| (shell) or d (solid)."""
    m = faces.shape[0]
    rx, ry, rz = ref[0], ref[1], ref[2]
    for blk in range(out.shape[0]):
        s_d = s_n = s_x = s_y = s_z = 0.0
        q_xx = q_yy = q_zz = q_xy = q_yz = q_zx = 0.0
        for t in range(blk * _BLOCK, min((blk + 1) * _BLOCK, m)):
            i, j, k = faces[t, 0], faces[t, 1], faces[t, 2]
            ax, ay, az = vertices[i, 0] - rx, vertices[i, 1] - ry, vertices[i, 2] - rz
            bx, by, bz = vertices[j, 0] - rx, vertices[j, 1] - ry, vertices[j, 2] - rz
            cx, cy, cz = vertices[k, 0] - rx, vertices[k, 1] - ry, vertices[k, 2] - rz
            ux, uy, uz = bx - ax, by - ay, bz - az
            wx, wy, wz = cx - ax, cy - ay, cz - az
            nx, ny, nz = uy * wz - uz * wy, uz * wx - ux * wz, ux * wy - uy * wx
            d = ax * nx + ay * ny + az * nz
            nn = np.sqrt(nx * nx + ny * ny + nz * nz)
            w = nn if shell else d
            sx, sy, sz = ax + bx + cx, ay + by + cy, az + bz + cz
            s_d += d
            s_n += nn
            s_x += w * sx
            s_y += w * sy
            s_z += w * sz
            q_xx += w * (ax * ax + bx * bx + cx * cx + sx * sx)
            q_yy += w * (ay * ay + by * by + cy * cy + sy * sy)
            q_zz += w * (az * az + bz * bz + cz * cz + sz * sz)
            q_xy += w * (ax * ay + bx * by + cx * cy + sx * sy)
            q_yz += w * (ay * az + by * bz + cy * cz + sy * sz)
            q_zx += w * (az * ax + bz * bx + cz * cx + sz * sx)
        out[blk, 0] = s_d
        out[blk, 1] = s_n
        out[blk, 2] = s_x
        out[blk, 3] = s_y
        out[blk, 4] = s_z
        out[blk, 5] = q_xx
        out[blk, 6] = q_yy
        out[blk, 7] = q_zz
        out[blk, 8] = q_xy
        out[blk, 9] = q_yz
        out[blk, 10] = q_zx
