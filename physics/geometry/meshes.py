"""Mesh files → rigid-body shapes: load, validate and repair; mass properties; hull.

Pipeline (docs/architecture.md#from-a-dropped-file-to-the-screen):

1. ``load_mesh``: read OBJ, STL (binary/ASCII), PLY, OFF, GLB/GLTF (``read_triangles``: binary
   PLY and STL straight into arrays, ``physics.geometry.binary_meshes``, and OBJ in whole-file
   passes, ``physics.geometry.obj_meshes``, each giving trimesh's arrays; the rest with trimesh,
   scenes flattened into one body with their node transforms applied); reject bad files with
   a ``MeshError`` that names the file, says what is wrong and what to do; then ``clean_mesh``:
   merge duplicate vertices; drop degenerate and duplicate triangles; make the winding
   consistent and outward (docs/physics.md#mesh-repair: negative volume ⇒ inverted, flip it and
   say so) — matching vertices, triangles and edges by hashing in compiled code
   (``physics.geometry.mesh_kernels``), and skipping every repair a closed, consistently wound
   mesh does not need.
2. ``shape_from_mesh``: pick solid or shell inertia (``mode="auto"``: solid for a closed,
   consistently wound surface that encloses a volume; otherwise **shell**, with a warning that
   says why — an open cup or a sheet is a thin hollow surface, and the shell formula is defined for
   any surface, whereas a convex-hull solid would fill the cup and fails for a flat sheet),
   compute ``physics.geometry.inertia.mass_properties`` (``mesh_properties``; all that
   ``tumble inertia`` needs) and the collision hull in the principal frame.
3. ``Shape.body_def``: place the shape in a scene (mesh origin/frame → principal frame).

Builtin shapes (``builtin_shape``) are centred on their centre of mass. Box, sphere and cylinder
use the closed-form mass properties of the ideal solid (the tessellated sphere/cylinder are for
drawing; a sphere collides as an exact sphere); the T-handle is a polyhedron, integrated exactly.
"""

from __future__ import annotations

import dataclasses
import functools
import io
import json
import math
import os
import struct
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from physics.files import why_missing
from physics.geometry.binary_meshes import STL_RECORD, read_binary_ply, read_binary_stl
from physics.geometry.extremes import extreme_points
from physics.geometry.inertia import InertiaError, MassProperties, mass_properties
from physics.geometry.mesh_kernels import (
    closed_pieces,
    column_means,
    distinct_faces,
    maybe_slivers,
    merge_vertices,
    piece_sums,
    singular_values,
    used_extent,
)
from physics.geometry.obj_meshes import read_obj
from physics.geometry.rotation import (
    matrix_to_quat,
    quat_conj,
    quat_mul,
    quat_normalize,
    quat_rotate,
)
from physics.geometry.surface import EdgeReport, solid_undefined
from physics.model import BodyDef, check_vector
from physics.settings import (
    DEFAULT_DENSITY,
    EXTREMES_BY_GRID_ABOVE,
    INERTIA_MODES,
    MAX_FACES,
    MAX_HULL_VERTICES,
    PLAUSIBLE_SIZE,
    SIZE_LIMITS,
)

# extension → trimesh file type; the only formats Tumble promises to read (README)
FORMATS = {".obj": "obj", ".stl": "stl", ".ply": "ply", ".off": "off", ".glb": "glb",
           ".gltf": "gltf"}
# m: trimesh's tolerance (trimesh.tol.merge): vertices that agree to MERGE_DIGITS decimals are
# merged, as trimesh.Trimesh.merge_vertices rounds; a triangle with an edge or a height at most
# this long is degenerate
MERGE_TOLERANCE = 1e-8
MERGE_DIGITS = 8
_FLAT_RTOL = 1e-9  # singular value ratio below which a point set counts as flat (rank < 3)


class MeshError(ValueError):
    """A mesh that cannot be used: the message names the file, the problem and what to do."""


@dataclass(frozen=True, eq=False)
class Mesh:
    """A cleaned triangle mesh in its own frame.

    name        file name (basename) or builtin name, used in every message
    source      path it was read from; None for generated meshes
    vertices    (n, 3) float64, m, mesh frame; every vertex is used by a face
    faces       (m, 3) int64 vertex indices, wound counter-clockwise seen from outside
    watertight  True when the surface is closed, manifold and consistently wound, so the
                solid-inertia formula applies (docs/physics.md#mass-properties-of-a-closed-mesh)
    warnings    repairs made while loading, one sentence each
    scale       the factor the file's coordinates were multiplied by (1: the file's own units)

    ``clean_mesh`` makes vertices and faces read-only arrays that own their data; a Shape made
    from the mesh shares them rather than copying them.
    """

    name: str
    source: str | None
    vertices: np.ndarray
    faces: np.ndarray
    watertight: bool
    warnings: tuple[str, ...] = ()
    scale: float = 1.0


@dataclass(frozen=True)
class OrientedBox:
    """The smallest box along a shape's principal axes that holds its mesh
    (docs/physics.md#oriented-bounding-box). centre (3,) m and axes (3, 3) (columns, the principal
    axes) in the mesh frame; half_extents (3,) m along those axes."""

    centre: np.ndarray
    axes: np.ndarray
    half_extents: np.ndarray

    def to_json_dict(self) -> dict:
        return {"center": self.centre.tolist(), "axes": self.axes.tolist(),
                "half_extents": self.half_extents.tolist()}


@dataclass(frozen=True, eq=False)
class Shape:
    """A rigid-body shape: mesh, mass properties and collision hull.

    name, source           as in ``Mesh``
    vertices (n, 3), faces (m, 3)   the mesh in its own frame (for drawing), m
    properties             ``MassProperties`` of the mesh (mesh axes, about the COM)
    hull (k, 3)            collision vertices in the BODY (principal) frame, k ≤ 64, m
    radius                 > 0 only for an exact sphere (collision uses the radius), m
    mesh_to_body_rotation  (3, 3) = properties.principal_axes; body = Rᵀ (mesh − com)
    warnings               load repairs, the inertia-mode fallback, inertia warnings
    kind, size             a builtin's kind ("box", "sphere", "cylinder", "t_handle") and size
                           (BUILTIN_SIZES meaning); None for a mesh file
    scale                  a mesh file's coordinates were multiplied by this (``load_mesh``)
    """

    name: str
    source: str | None
    vertices: np.ndarray
    faces: np.ndarray
    properties: MassProperties
    hull: np.ndarray
    radius: float
    mesh_to_body_rotation: np.ndarray
    warnings: tuple[str, ...] = ()
    kind: str | None = None
    size: tuple[float, ...] | None = None
    scale: float = 1.0

    @functools.cached_property
    def obb(self) -> OrientedBox:
        """The oriented bounding box along the principal axes (``OrientedBox``)."""
        return oriented_box(self.vertices, self.properties)

    @property
    def extent(self) -> float:
        """m: the mesh's largest extent along its own axes (what the size limits measure); the
        very value of ``np.ptp`` down the rows, at a fifth of its cost (``column_ranges``): a
        dropped scan's is asked for before its body is added."""
        low, high = column_ranges(self.vertices)
        return float(np.max(high - low))

    @property
    def bound_radius(self) -> float:
        """m: the farthest collision point from the centre of mass."""
        return self.radius if self.radius > 0 else float(np.max(np.linalg.norm(self.hull, axis=1)))

    @property
    def density(self) -> float:
        """kg/m³ of a solid shape, kg/m² of a shell."""
        p = self.properties
        return p.mass / (p.area if p.mode == "shell" else p.volume)

    def with_density(self, density: float) -> Shape:
        """The same shape at another density. Mass properties are linear in density (m = ρV,
        I = ρ∫r²dV, likewise per area for a shell), so they are scaled, not recomputed: instant
        for a million-face mesh, and a builtin keeps its closed-form moments. Centre of mass,
        axes, hull and mesh are unchanged. ValueError for a bad value."""
        density = float(density)
        if not (np.isfinite(density) and density > 0.0):
            raise ValueError(f"density must be a finite number > 0, got {density}")
        k = density / self.density
        p = self.properties
        props = dataclasses.replace(p, mass=p.mass * k, inertia=p.inertia * k,
                                    principal_moments=p.principal_moments * k)
        return dataclasses.replace(self, properties=props)

    @functools.cached_property
    def principal_quat(self) -> np.ndarray:
        """(4,) the quaternion of ``mesh_to_body_rotation`` (principal frame → mesh frame),
        found once: it costs more than the rest of a pose's conversion."""
        return _readonly(matrix_to_quat(self.mesh_to_body_rotation))

    def mesh_pose(self, position, orientation) -> tuple[np.ndarray, np.ndarray]:
        """Where the mesh's own origin and frame are for a body whose principal frame is at
        ``position`` (3,) m (centre of mass) with ``orientation`` (4,) (principal → world):
        ``mesh_poses`` of this one body. Returns ((3,), (4,))."""
        positions, orientations = mesh_poses((self,), np.reshape(position, (1, 3)),
                                             np.reshape(orientation, (1, 4)))
        return positions[0], orientations[0]

    def body_def(self, position, orientation=(1.0, 0.0, 0.0, 0.0), velocity=0.0,
                 angular_velocity=0.0, restitution=None, friction=None) -> BodyDef:
        """The ``BodyDef`` of this shape placed with scene-file semantics
        (docs/architecture.md#files-and-the-command-line).

        position (3,) m: where the mesh's own origin goes; orientation (4,) w, x, y, z: the mesh
        frame → world. Returns the principal frame: COM ``p + R(q)·com`` and orientation
        ``q ⊗ matrix_to_quat(principal_axes)`` (x_world = R(q)(R_p x_body + com) + p).
        velocity (3,) m/s of the COM and angular_velocity (3,) rad/s, both world frame (a scalar
        0 means zero); restitution/friction None → world default.
        """
        p = _vec(self.name, "position", position, 3)
        q = _vec(self.name, "orientation", orientation, 4)
        if np.linalg.norm(q) < 1e-12:
            raise ValueError(f"{self.name}: orientation must be a non-zero quaternion "
                             f"(w, x, y, z), got {q.tolist()}")
        q = quat_normalize(q)
        q_body = quat_normalize(quat_mul(q, self.principal_quat))
        return BodyDef(
            mass=self.properties.mass,
            principal_moments=self.properties.principal_moments,
            hull=self.hull,
            radius=self.radius,
            position=p + quat_rotate(q, self.properties.center_of_mass),
            orientation=q_body,
            velocity=_vec(self.name, "velocity", velocity, 3),
            angular_velocity=_vec(self.name, "angular_velocity", angular_velocity, 3),
            restitution=restitution,
            friction=friction,
        )


def mesh_poses(shapes, positions, orientations) -> tuple[np.ndarray, np.ndarray]:
    """Where the meshes' own origins and frames are for bodies of ``shapes`` (k Shapes) whose
    principal frames are at ``positions`` (k, 3) m (centres of mass) with ``orientations``
    (k, 4) (principal → world); (k, 3), (k, 4). The inverse of ``Shape.body_def`` to within
    rounding: q_mesh = q ⊗ conj(q_p), p_mesh = p − R(q_mesh)·com, with q_p the quaternion of
    the principal axes; all bodies at once (a scene of 1 000 bodies is saved in milliseconds,
    not the 1.4 s one body at a time took)."""
    count = len(shapes)
    q_axes = np.array([s.principal_quat for s in shapes], dtype=float).reshape(count, 4)
    com = np.array([s.properties.center_of_mass for s in shapes], dtype=float).reshape(count, 3)
    q_mesh = quat_normalize(quat_mul(np.asarray(orientations, float), quat_conj(q_axes)))
    return np.asarray(positions, float) - quat_rotate(q_mesh, com), q_mesh


def oriented_box(vertices: np.ndarray, properties: MassProperties) -> OrientedBox:
    """The smallest box along the principal axes of ``properties`` that holds ``vertices``
    (n, 3), m, in the mesh frame."""
    axes = np.asarray(properties.principal_axes, dtype=float)
    low, high = column_ranges((vertices - properties.center_of_mass) @ axes)
    centre = properties.center_of_mass + axes @ ((low + high) / 2)
    return OrientedBox(_readonly(centre), _readonly(axes.copy()), _readonly((high - low) / 2))


def column_ranges(points: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(low (d,), high (d,)): the least and the greatest value of each column of points (n, d),
    the very values of ``points.min(axis=0)`` and ``points.max(axis=0)`` at a fifth of their
    cost: numpy reduces an (n, 3) array across its rows three numbers at a time (~24 ms each
    for a scan's 655 k vertices), a contiguous copy of its columns at full speed."""
    columns = np.ascontiguousarray(np.asarray(points).T)
    return columns.min(axis=1), columns.max(axis=1)


def _vec(name: str, key: str, value, length: int) -> np.ndarray:
    """value as a finite float vector (length,); a scalar 0 is accepted for a zero vector."""
    if np.ndim(value) == 0 and value == 0:
        return np.zeros(length)
    return check_vector(f"{name}: {key}", value, length)


# --------------------------------------------------------------------------------------------
# Loading


def load_mesh(path, *, max_faces: int = MAX_FACES, scale: float = 1.0) -> Mesh:
    """Read, validate and repair a mesh file; raises ``MeshError`` for anything unusable.

    Formats: .obj .stl (binary or ASCII) .ply .off .glb .gltf (all nodes of a scene, node
    transforms applied, become one body). ``max_faces`` limits the triangle count. ``scale``
    multiplies the file's coordinates (0.001 reads a file in millimetres as metres) before any
    check, so the size limits apply to the body as it will be simulated.
    """
    return clean_triangles(read_triangles(path, max_faces=max_faces), scale)


def clean_triangles(triangles: tuple[str, str, np.ndarray, np.ndarray],
                    scale: float = 1.0) -> Mesh:
    """The second half of ``load_mesh``: ``clean_mesh`` of what ``read_triangles`` gave (name,
    path, vertices, faces), the coordinates times ``scale`` first."""
    name, path, vertices, faces = triangles
    scale = check_scale(name, scale)
    mesh = clean_mesh(name, path, vertices * scale if scale != 1.0 else vertices, faces)
    return dataclasses.replace(mesh, scale=scale) if scale != 1.0 else mesh


def read_triangles(path, *, max_faces: int = MAX_FACES) -> tuple[str, str, np.ndarray,
                                                                  np.ndarray]:
    """The raw triangles of a mesh file, before any repair: (name, path, vertices (n, 3) m,
    faces (m, 3) int64). The reading half of ``load_mesh``, with the same checks and
    ``MeshError`` messages."""
    path = os.fspath(path)
    name = os.path.basename(path.rstrip("/\\")) or path
    data, ftype = _read_checked(path, name, max_faces)
    arrays = (read_binary_ply(data) if ftype == "ply" else
              read_binary_stl(data) if ftype == "stl" else
              read_obj(data) if ftype == "obj" else None)
    vertices, faces = arrays if arrays is not None else _read_with_trimesh(path, name, data,
                                                                            ftype)
    if len(faces) == 0:
        raise MeshError(f"{name}: contains no triangles, so it is not a mesh (or only points "
                        "and lines); export the object as a triangle mesh")
    if len(faces) > max_faces:
        raise MeshError(_too_many(name, len(faces), max_faces))
    if faces.min() < 0 or faces.max() >= len(vertices):
        raise MeshError(f"{name}: a triangle refers to vertex {int(faces.max()) + 1}, but the "
                        f"file has only {len(vertices)} vertices; the file is damaged — export "
                        "it again")
    return name, path, vertices, faces


def _read_with_trimesh(path: str, name: str, data: bytes,
                       ftype: str) -> tuple[np.ndarray, np.ndarray]:
    """The triangles of a file in any format trimesh reads (its scene flattened)."""
    import trimesh  # here, not at the top: a binary PLY or STL is read without it (0.3 s)

    try:
        if ftype == "gltf":  # a .gltf refers to sibling .bin/.png files: trimesh needs the path
            scene = trimesh.load_scene(path, file_type="gltf", process=False)
        else:
            scene = trimesh.load_scene(io.BytesIO(data), file_type=ftype, process=False)
    except FileNotFoundError as e:
        raise MeshError(
            f"{name}: refers to a file that is missing ({e.args[0] if e.args else e}); a .gltf "
            "keeps its data in separate files — keep them next to it, or export as .glb") from e
    except Exception as e:  # trimesh's parsers raise many types (ValueError, KeyError, …)
        if ftype == "obj":
            _check_obj_face_indices(name, data)
        raise MeshError(
            f"{name}: could not be read as {ftype.upper()} ({type(e).__name__}: {e}); the file "
            f"is damaged, cut short or not really {ftype.upper()} — export it again") from e
    return _flatten(scene)


def check_scale(name: str, scale) -> float:
    """``scale`` as a float, or a MeshError naming it when it is not a positive finite number."""
    try:
        value = float(scale)
    except (TypeError, ValueError):
        value = math.nan
    if not (math.isfinite(value) and value > 0):
        raise MeshError(f"{name}: scale must be a number > 0 (0.001 reads millimetres as "
                        f"metres), got {scale!r}")
    return value


def _check_obj_face_indices(name: str, data: bytes) -> None:
    """A MeshError naming the line of the first OBJ face that refers to a vertex the file does
    not have, counted as OBJ counts (from 1; negative: back from the last vertex so far), so a
    user can find it in the file — rather than the 0-based array index the parser fails with."""
    vertices = sum(1 for line in data.splitlines() if line.startswith(b"v "))
    so_far = 0
    for number, line in enumerate(data.splitlines(), start=1):
        if line.startswith(b"v "):
            so_far += 1
        elif line.startswith(b"f "):
            for token in line.split()[1:]:
                try:
                    index = int(token.split(b"/")[0])
                except ValueError:
                    continue
                if not (1 <= index <= vertices or -so_far <= index <= -1):
                    raise MeshError(
                        f"{name}:{number}: a face refers to vertex {index}, but the file has "
                        f"{vertices} vertices (OBJ counts them from 1); the file is damaged — "
                        "export it again")


def _flatten(scene) -> tuple[np.ndarray, np.ndarray]:
    """All triangle meshes of a scene as one: vertices (n, 3) in the scene's frame, faces (m, 3).

    Every node's world transform is applied (a mirroring transform also reverses the winding so
    it stays outward). Only geometry is kept: trimesh's own ``Scene.dump``/``load_mesh`` copies
    materials, which fails for textured files when Pillow is not installed.
    """
    import trimesh

    vertices, faces, count = [], [], 0
    for node in scene.graph.nodes_geometry:
        transform, geometry_name = scene.graph[node]
        geometry = scene.geometry[geometry_name]
        if not isinstance(geometry, trimesh.Trimesh) or len(geometry.faces) == 0:
            continue  # points, lines
        f = np.asarray(geometry.faces, dtype=np.int64)
        vertices.append(trimesh.transformations.transform_points(geometry.vertices, transform))
        faces.append((f[:, ::-1] if np.linalg.det(transform[:3, :3]) < 0 else f) + count)
        count += len(geometry.vertices)
    if not faces:
        return np.zeros((0, 3)), np.zeros((0, 3), dtype=np.int64)
    return np.vstack(vertices), np.vstack(faces)


def _too_many(name: str, count: int, max_faces: int) -> str:
    return (f"{name}: has {count:,} triangles, more than the limit of {max_faces:,}; simplify "
            "it (e.g. Decimate in Blender) or raise max_faces")


def _read_checked(path: str, name: str, max_faces: int) -> tuple[bytes, str]:
    """The file's bytes and trimesh file type, after checks that give clear messages."""
    if os.path.isdir(path):
        raise MeshError(f"{name}: is a folder, not a mesh file; choose a file inside it "
                        f"({' '.join(FORMATS)})")
    if not os.path.exists(path):
        raise MeshError(f"{name}: file {why_missing(path)} ({path})")
    ext = os.path.splitext(name)[1].lower()
    if ext not in FORMATS:
        raise MeshError(f"{name}: '{ext or 'no extension'}' is not a mesh format Tumble reads; "
                        f"export it as one of {' '.join(FORMATS)}")
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as e:
        raise MeshError(f"{name}: cannot be read ({e.strerror}); check its permissions") from e
    if not data:
        raise MeshError(f"{name}: the file is empty (0 bytes); it was not saved or copied "
                        "completely — export it again")
    ftype = FORMATS[ext]
    if ftype == "stl":
        _check_stl(name, data, max_faces)
    elif ftype in ("obj", "off"):
        data = _as_utf8_text(name, data, ftype)
    elif ftype == "ply" and not data.startswith(b"ply"):
        raise MeshError(f"{name}: is not a PLY file (it does not start with 'ply'); it may be "
                        "another kind of file with the wrong extension")
    elif ftype == "glb":
        _check_glb(name, data)
    elif ftype == "gltf":
        try:
            json.loads(data)
        except (UnicodeDecodeError, json.JSONDecodeError) as e:
            raise MeshError(f"{name}: is not a glTF file (a .gltf must be JSON text: {e}); it "
                            "may be damaged or another kind of file") from e
    return data, ftype


def _looks_binary(data: bytes) -> bool:
    """NUL bytes or many control characters: not a text file (images, binary STL, noise)."""
    head = data[:65536]
    control = sum(head.count(bytes([c])) for c in range(32) if c not in (9, 10, 12, 13))
    return b"\x00" in head or control > 0.01 * len(head)


def _as_utf8_text(name: str, data: bytes, ftype: str) -> bytes:
    """Text formats (OBJ, OFF) as UTF-8 bytes; binary data is 'not a mesh'.

    trimesh guesses the encoding of non-UTF-8 text with an optional package, so legacy
    (Latin-1) text is converted here and binary data is rejected with a clear message.
    """
    if data.isascii():  # what exporters write: no decoding (a scan's 50 MB held the GIL 0.1 s)
        return data
    try:
        data.decode("utf-8")
        return data
    except UnicodeDecodeError:
        if _looks_binary(data):
            raise MeshError(f"{name}: contains binary data, but {ftype.upper()} files are text; "
                            "this is not a mesh file (or it has the wrong extension)") from None
        return data.decode("latin-1").encode("utf-8")


def _check_stl(name: str, data: bytes, max_faces: int) -> None:
    """Binary STL: 80-byte header, uint32 count n, n × 50-byte records; else ASCII 'solid'."""
    n = struct.unpack_from("<I", data, 80)[0] if len(data) >= 84 else None
    if n is not None and len(data) == 84 + 50 * n:
        if n > max_faces:  # checked before parsing: rejecting a huge file should be instant
            raise MeshError(_too_many(name, n, max_faces))
        return
    if data.lstrip()[:5].lower() == b"solid" and not _looks_binary(data):
        if b"endsolid" not in data[-4096:].lower():
            raise MeshError(f"{name}: this ASCII STL ends without 'endsolid': the file was cut "
                            "short (interrupted save, copy or download); export it again")
        return
    if n is None:
        raise MeshError(f"{name}: is too short ({len(data)} bytes) to be an STL file (even an "
                        "empty binary STL has 84 bytes); export it again")
    if len(data) < 84 + 50 * n and _plausible_stl_records(data):
        raise MeshError(f"{name}: is cut short: its header announces {n:,} triangles "
                        f"({84 + 50 * n:,} bytes) but the file has only {len(data):,} bytes; "
                        "it was not saved or copied completely — export it again")
    raise MeshError(f"{name}: is not an STL file: neither ASCII STL (starting with 'solid') nor "
                    "binary STL (its size does not match its triangle count); it may be another "
                    "kind of file with the wrong extension")


def _plausible_stl_records(data: bytes) -> bool:
    """Do the first complete 50-byte records look like STL triangles (unit or zero normal,
    finite corners)? Tells a cut-short STL from unrelated bytes with an .stl name."""
    count = min((len(data) - 84) // 50, 100)
    if count == 0:
        return False
    rec = np.frombuffer(data, dtype=STL_RECORD, count=count, offset=84)
    with np.errstate(all="ignore"):
        norm = np.linalg.norm(rec["normal"].astype(float), axis=1)
    unit_or_zero = (np.abs(norm - 1) < 1e-3) | (norm == 0)
    return bool(np.all(np.isfinite(rec["corners"])) and np.all(unit_or_zero))


def _check_glb(name: str, data: bytes) -> None:
    """GLB header: magic 'glTF', version, total length (Khronos glTF 2.0 §4.4.2)."""
    if data[:4] != b"glTF":
        raise MeshError(f"{name}: is not a GLB file (it does not start with 'glTF'); it may be "
                        "another kind of file with the wrong extension")
    if len(data) < 12 or struct.unpack_from("<I", data, 8)[0] > len(data):
        expected = struct.unpack_from("<I", data, 8)[0] if len(data) >= 12 else "?"
        raise MeshError(f"{name}: is cut short: its header announces {expected} bytes but the "
                        f"file has only {len(data)}; export it again")


# --------------------------------------------------------------------------------------------
# Cleaning and winding repair


def clean_mesh(name: str, source: str | None, vertices: np.ndarray, faces: np.ndarray) -> Mesh:
    """Validate and repair raw triangles into a ``Mesh`` (the steps after parsing a file).

    vertices (n, 3) m, faces (m, 3) indices. Merges duplicate vertices (STL stores every corner
    separately), removes collapsed and duplicate triangles — and slivers (zero area, three
    distinct corners) only from an open surface: in a closed one a sliver is part of what closes
    it — then repairs the winding. Equal vertices, triangles and edges are matched by hashing
    (``physics.geometry.mesh_kernels``), and a closed, consistently wound mesh skips every
    repair it does not need.
    """
    vertices = np.asarray(vertices, dtype=float)
    faces = np.asarray(faces, dtype=np.int64)
    if not np.isfinite(vertices).all():  # one flat pass; the rows only for the message
        bad = ~np.all(np.isfinite(vertices), axis=1)
        i = int(np.argmax(bad))
        raise MeshError(f"{name}: {int(bad.sum())} vertices have NaN or infinite coordinates "
                        f"(first: vertex {i + 1} = {vertices[i].tolist()}); the exporter wrote "
                        "invalid numbers — fix or re-export the mesh")
    size_warning = _check_size(name, vertices, faces)
    count = len(faces)
    vertices, faces = merge_vertices(vertices, faces, MERGE_DIGITS)
    pieces = closed_pieces(faces, len(vertices))
    if not pieces[0]:  # a closed, consistently wound surface has nothing of this to remove
        keep = distinct_faces(faces)
        slivers = _slivers(vertices, faces) & keep  # three corners, (almost) no area
        if slivers.any() and not np.all(EdgeReport(faces[keep]).counts == 2):
            keep &= ~slivers  # an open surface: a sliver only adds noise to the edges' books
        if not keep.all():
            faces = faces[keep]
            used = np.zeros(len(vertices), dtype=bool)
            used[faces] = True
            if not used.all():
                vertices = vertices[used]
                faces = (np.cumsum(used) - 1)[faces]
            pieces = None  # removing triangles may have closed the surface
    warnings = [size_warning] if size_warning else []
    if len(faces) == 0:
        raise MeshError(f"{name}: all {count} triangles have zero area (corners coincide or lie "
                        "on a line); there is no surface to simulate")
    if len(faces) < 4:
        raise MeshError(f"{name}: has only {len(faces)} triangle{'s' * (len(faces) > 1)}; a body "
                        "needs a surface of at least 4 triangles (a tetrahedron is the smallest "
                        "closed shape) — check that this is the right file")
    if len(faces) < count:
        warnings.append(f"{name}: removed {count - len(faces)} degenerate or duplicate "
                        "triangles (zero area, or the same triangle twice)")
    faces, closed, repairs = _repair_winding(name, vertices, faces, pieces)
    warnings += repairs
    return Mesh(name, source, _readonly(vertices), _readonly(faces), closed, tuple(warnings))


def _slivers(vertices: np.ndarray, faces: np.ndarray) -> np.ndarray:
    """(m,) bool: trimesh's degenerate triangles (an edge or a height ≤ its merge tolerance),
    its exact verdict asked only for the few a compiled pass finds near that limit."""
    maybe = np.flatnonzero(maybe_slivers(vertices, faces, MERGE_TOLERANCE))
    slivers = np.zeros(len(faces), dtype=bool)
    if len(maybe):
        import trimesh

        near = trimesh.Trimesh(vertices, faces[maybe], process=False, validate=False)
        slivers[maybe] = ~near.nondegenerate_faces()
    return slivers


def _check_size(name: str, vertices: np.ndarray, faces: np.ndarray) -> str | None:
    """MeshError for a mesh too large or too small to simulate (SIZE_LIMITS); a warning that
    suggests the scale for one of implausible size (PLAUSIBLE_SIZE); else None. Only the
    vertices that triangles use count (an exporter may leave stray points behind)."""
    if len(faces) == 0:  # no triangles: the vertices are all there is to measure
        if len(vertices) == 0:
            return None
        extent = float(np.max(np.ptp(vertices, axis=0)))
    elif faces.min() < 0 or faces.max() >= len(vertices):
        return None  # the callers report what is wrong
    else:
        extent = float(np.max(used_extent(np.ascontiguousarray(vertices, dtype=float),
                                          np.ascontiguousarray(faces, dtype=np.int64))))
    low, high = SIZE_LIMITS
    if not low <= extent <= high:
        raise MeshError(f"{name}: is {extent:.3g} m across; Tumble simulates bodies from {low:g} "
                        f"m to {high:g} m across — check the file's units, or load it with a "
                        "scale (tumble inertia --scale, scale = in a scene)")
    low, high = PLAUSIBLE_SIZE
    if extent > high:
        return (f"{name}: is {extent:.4g} m across — if the file is in millimetres the object "
                f"is {extent / 1000:.4g} m; scale it by 0.001 (tumble inertia --scale 0.001, "
                "scale = 0.001 in a scene, or the app's offer)")
    if extent < low:
        return (f"{name}: is only {extent * 1000:.3g} mm across — if that is not its real "
                "size, scale it up (--scale in tumble inertia, scale = in a scene, or the app's "
                "offer)")
    return None


def _readonly(a: np.ndarray) -> np.ndarray:
    a.setflags(write=False)
    return a


def _frozen(a, dtype) -> np.ndarray:
    """A read-only array of ``a``'s values as ``dtype``: ``a`` itself when it already is one
    that owns its data (as a cleaned ``Mesh``'s arrays: nothing can write to them, and a copy of
    a big mesh costs more in new pages than in copying), else a read-only copy."""
    if (isinstance(a, np.ndarray) and a.dtype == dtype and not a.flags.writeable
            and a.flags.owndata and a.flags.c_contiguous):
        return a
    return _readonly(np.array(a, dtype=dtype))


def _repair_winding(name: str, vertices: np.ndarray, faces: np.ndarray,
                    pieces=None) -> tuple[np.ndarray, bool, list[str]]:
    """Consistent winding (flip triangles against their neighbours), then outward orientation.

    pieces: ``closed_pieces(faces, len(vertices))`` if known. Returns the faces, whether the
    surface is closed and consistent (``Mesh.watertight``) and the warnings.

    trimesh.repair.fix_winding does the first step with a Python BFS over networkx (not a
    dependency, and slow for big meshes); here the same flip parity is propagated along a
    breadth-first spanning forest (scipy) by pointer jumping, fully vectorised — only for a
    mesh that needs it: a consistently wound one costs one hashed pass over its edges.
    """
    warnings = []
    closed, labels = closed_pieces(faces, len(vertices)) if pieces is None else pieces
    if closed:  # nothing to repair but, perhaps, the side that faces out
        faces, outward = _orient_outward(name, vertices, faces, labels,
                                         np.zeros(len(faces), dtype=bool))
        return faces, True, outward
    report = EdgeReport(faces)
    labels = report.components()
    if report.misoriented:
        fa, fb, disagree = report.face_pairs()
        flip = _flip_parity(len(faces), labels, fa, fb, disagree)
        # the spanning tree's root decides which side is kept; count the smaller side
        flipped = np.bincount(labels, weights=flip)
        size = np.bincount(labels)
        count = int(np.minimum(flipped, size - flipped).sum())
        faces = faces.copy()
        faces[flip] = faces[flip][:, ::-1]
        warnings.append(f"{name}: {count} of {len(faces)} triangles were wound the other way "
                        "round from their neighbours; flipped them so the winding is consistent "
                        "and faces outward")
        report = EdgeReport(faces)
        if report.misoriented:
            warnings.append(f"{name}: the surface is one-sided (like a Möbius strip): "
                            f"{report.misoriented} edges cannot be wound consistently")
    open_face = ~report.good[report.inverse].reshape(-1, 3).all(axis=1)
    faces, outward = _orient_outward(name, vertices, faces, labels, open_face)
    # after a consistency repair the kept side was arbitrary: turning it outward is part of it
    return faces, report.closed, warnings + (outward if not warnings else [])


def _flip_parity(m, labels, fa, fb, disagree) -> np.ndarray:
    """(m,) bool: flip these triangles to make every piece consistently wound.

    fa, fb (p,) triangles sharing a manifold edge; disagree (p,) they run it the same way.
    """
    from scipy.sparse import coo_matrix
    from scipy.sparse.csgraph import breadth_first_order

    roots = np.unique(labels, return_index=True)[1]
    # a virtual node m joined to one triangle per piece: one breadth-first search covers all
    rows = np.concatenate((fa, np.full(len(roots), m)))
    cols = np.concatenate((fb, roots))
    graph = coo_matrix((np.ones(len(rows)), (rows, cols)), shape=(m + 1, m + 1)).tocsr()
    _, pred = breadth_first_order(graph, m, directed=False, return_predecessors=True)
    up = pred[:m].copy()
    up[roots] = roots
    # parity of each tree edge (child, parent): look up the pair's disagreement
    key = np.minimum(fa, fb) * m + np.maximum(fa, fb)
    order = np.argsort(key)
    key, disagree = key[order], disagree[order]
    child = np.flatnonzero(up != np.arange(m))
    parent = up[child]
    flip = np.zeros(m, dtype=bool)
    flip[child] = disagree[np.searchsorted(key, np.minimum(child, parent) * m
                                           + np.maximum(child, parent))]
    # pointer jumping: flip[f] becomes the parity of the whole path from f to its root
    while True:
        nxt = up[up]
        if np.array_equal(nxt, up):
            return flip
        flip = flip ^ flip[up]
        up = nxt


def _orient_outward(name, vertices, faces, labels,
                    open_face) -> tuple[np.ndarray, list[str]]:
    """Flip closed pieces whose volume has the wrong sign (docs/physics.md#mesh-repair).

    A closed piece nested inside k others (its bounding box strictly inside theirs) is a cavity
    when k is odd and must have negative volume; otherwise positive. Open or one-sided pieces
    have no inside and are left as they are. labels (m,) the piece of each triangle; open_face
    (m,) bool: the triangle has an edge not shared with exactly one oppositely wound neighbour.
    """
    npieces = int(labels.max()) + 1
    centre = column_means(vertices)  # centred: signed volumes stay accurate
    six_volume, open_piece, lo, hi = piece_sums(vertices, centre, faces, labels, npieces,
                                                open_face)
    volume = six_volume / 6.0
    low, high = column_ranges(vertices)
    extent = (high - low).max()
    solid = ~open_piece & (np.abs(volume) > 1e-12 * extent**3)
    if not solid.any():
        return faces, []
    idx = np.flatnonzero(solid)
    depth = np.zeros(npieces, dtype=int)
    if len(idx) <= 2000:  # O(k²) nesting test; beyond that assume no cavities
        inside = (np.all(lo[idx][:, None] > lo[idx][None], axis=2)
                  & np.all(hi[idx][:, None] < hi[idx][None], axis=2))
        depth[idx] = inside.sum(axis=1)
    wrong = solid & ((volume < 0) != (depth % 2 == 1))
    if not wrong.any():
        return faces, []
    faces = faces.copy()
    flip = wrong[labels]
    faces[flip] = faces[flip][:, ::-1]
    if wrong.sum() == solid.sum():
        msg = (f"{name}: the surface was inside out (its triangles faced inward, giving a "
               "negative volume); flipped it")
    else:
        msg = (f"{name}: {int(wrong.sum())} of {int(solid.sum())} closed parts were inside out "
               "(negative volume); flipped them")
    return faces, [msg]


# --------------------------------------------------------------------------------------------
# Shapes


def load_shape(path, density: float = DEFAULT_DENSITY, mode: str = "auto",
               max_faces: int = MAX_FACES, scale: float = 1.0) -> Shape:
    """``shape_from_mesh(load_mesh(path))``: a mesh file (coordinates × ``scale``) as a
    rigid-body shape."""
    return shape_from_mesh(load_mesh(path, max_faces=max_faces, scale=scale), density=density,
                           mode=mode)


def shape_from_mesh(mesh: Mesh, density: float = DEFAULT_DENSITY, mode: str = "auto") -> Shape:
    """Mass properties and collision hull of a mesh (``mesh_properties``, then the hull)."""
    return shape_from_properties(mesh, *mesh_properties(mesh, density, mode))


def shape_from_properties(mesh: Mesh, props: MassProperties, warnings) -> Shape:
    """The Shape of a mesh whose ``mesh_properties`` are known: computes its collision hull."""
    return _shape(mesh.name, mesh.source, mesh.vertices, mesh.faces, props, 0.0, warnings,
                  scale=mesh.scale)


def mesh_properties(mesh: Mesh, density: float = DEFAULT_DENSITY,
                    mode: str = "auto") -> tuple[MassProperties, list[str]]:
    """Mass properties of a mesh, and every warning so far (the load's, the inertia mode's,
    the integration's): what a shape needs before its hull.

    density: kg/m³ for solid, kg/m² for shell. mode: "solid", "shell" or "auto" — solid when
    the surface is closed, consistently wound and encloses a volume; otherwise shell inertia
    (a thin hollow surface, the same density number read as kg/m²) with a warning saying why.
    Explicit "solid" on an open or flat mesh is a ``MeshError``. ``mesh.watertight`` is trusted
    (``load_mesh`` computes it).
    """
    name = mesh.name
    if mode not in INERTIA_MODES:
        raise MeshError(f"{name}: unknown inertia mode {mode!r}; use 'auto', 'solid' or 'shell'")
    density = float(density)
    if not (np.isfinite(density) and density > 0):
        raise MeshError(f"{name}: density must be a finite number > 0, got {density}")
    vertices, faces = mesh.vertices, mesh.faces
    rank = _rank(vertices)
    if rank < 2:
        raise MeshError(f"{name}: all vertices lie on one line, so it is not a body; check that "
                        "this is the right file")
    problem = ("the mesh is flat (all vertices lie in one plane) and encloses zero volume"
               if rank == 2 else None if mesh.watertight else EdgeReport(faces).problem())
    warnings = list(mesh.warnings)
    chosen = mode
    if mode == "solid" and problem:
        raise MeshError(f"{name}: {solid_undefined(problem)}")
    if mode == "auto":
        chosen = "shell" if problem else "solid"
        if problem:
            warnings.append(f"{name}: {problem}; used shell inertia (a thin hollow surface, "
                            f"density {density:g} read as kg/m²) instead of solid — choose mode "
                            "'shell' to accept this, or close the surface for a solid body")
    try:
        props = mass_properties(vertices, faces, density=density, mode=chosen,
                                watertight=mesh.watertight)
    except InertiaError as e:  # its messages say what to do (e.g. "use mode 'shell'")
        raise MeshError(f"{name}: {e}") from e
    return props, warnings + list(props.warnings)


def _shape(name, source, vertices, faces, props, radius, warnings, kind=None,
           size=None, scale=1.0) -> Shape:
    axes = np.asarray(props.principal_axes, dtype=float)
    body = (vertices - props.center_of_mass) @ axes  # body = Rᵀ (mesh − com), row-wise
    try:
        hull = convex_hull_vertices(body, MAX_HULL_VERTICES)
    except ValueError as e:
        raise MeshError(f"{name}: no collision hull: {e}") from e
    return Shape(name=name, source=source, vertices=_frozen(vertices, np.float64),
                 faces=_frozen(faces, np.int64), properties=props,
                 hull=_readonly(hull), radius=float(radius),
                 mesh_to_body_rotation=_readonly(axes.copy()),
                 warnings=tuple(dict.fromkeys(warnings)), kind=kind, size=size, scale=scale)


def _rank(points: np.ndarray) -> int:
    """Dimension of the affine span of points (n, 3): 3 solid, 2 flat, ≤ 1 line/point."""
    s = singular_values(points - column_means(points))  # without the GIL
    return int(np.sum(s > s[0] * _FLAT_RTOL)) if s[0] > 0 else 0


# --------------------------------------------------------------------------------------------
# Collision hull


def convex_hull_vertices(points, max_vertices: int = MAX_HULL_VERTICES) -> np.ndarray:
    """Vertices (k, 3), k ≤ max_vertices, of the convex hull of points (n, 3) (scipy Qhull).

    Hulls with more vertices are reduced like MuJoCo's (docs/physics.md#collision-shapes): start
    from the extreme
    points along the axes and the diagonals (so the axis-aligned extent in this frame is exact),
    then repeatedly add the hull vertex farthest outside the hull of those chosen. The result is
    a subset of the points (so inside the true hull), deterministic, in input order. Flat point
    sets give the polygon of their plane. Above 4096 points, Qhull only sees the extreme points
    along the axes, the diagonals and 512 evenly spread directions (each one a hull vertex):
    Qhull takes seconds on a finely tessellated sphere, and a hull vertex missed that way is one
    where the surface turns by less than the ~9° spacing of the directions. Above
    ``EXTREMES_BY_GRID_ABOVE`` points those are found by a grid search
    (``physics.geometry.extremes``): the same points, without the GIL, in a fraction of the
    time.
    """
    from scipy.spatial import ConvexHull, QhullError  # here: `tumble inertia` needs no hull

    pts = np.asarray(points, dtype=float)
    if pts.ndim != 2 or pts.shape[1] != 3 or len(pts) == 0:
        raise ValueError(f"points must be an (n, 3) array, got shape {pts.shape}")
    if not np.all(np.isfinite(pts)):
        raise ValueError("points must be finite")
    if max_vertices < 4:
        raise ValueError(f"max_vertices must be ≥ 4, got {max_vertices}")
    x = pts - column_means(pts)
    s = singular_values(x)  # without the GIL; the vectors (costly for many points): if flat
    rank = int(np.sum(s > s[0] * _FLAT_RTOL)) if s[0] > 0 else 0
    if rank < 2:
        raise ValueError("all points lie on one line or at one point")
    y = x if rank == 3 else x @ np.linalg.svd(x, full_matrices=False)[2][:2].T  # in the plane
    candidates = (np.arange(len(y)) if len(y) <= 4096 else
                  _extremes(y, np.vstack((_seed_directions(rank), _directions(rank, 512)))))
    try:
        idx = candidates[np.sort(ConvexHull(y[candidates]).vertices)]
    except QhullError as e:
        raise ValueError(f"Qhull could not build the convex hull ({e})") from e
    if len(idx) > max_vertices:
        idx = idx[_reduce(y[idx], max_vertices)]
    return pts[idx].copy()


def _extremes(points: np.ndarray, directions: np.ndarray) -> np.ndarray:
    """Sorted unique indices of the points (n, d) farthest along each direction (r, d)."""
    if len(points) > EXTREMES_BY_GRID_ABOVE:  # the same indices, searched cell by cell
        return extreme_points(points, directions)
    columns = np.ascontiguousarray(points.T)  # (d, n): BLAS-friendly
    step = max(1, 8_000_000 // len(points))  # directions per chunk: ≤ 64 MB of projections
    return np.unique(np.concatenate([
        np.argmax(directions[i:i + step] @ columns, axis=1)
        for i in range(0, len(directions), step)]))


def _seed_directions(dim: int) -> np.ndarray:
    """The axes, face and body diagonals (26 in 3D, 8 in 2D), not normalised."""
    signs = np.array(np.meshgrid(*[[-1.0, 0.0, 1.0]] * dim)).reshape(dim, -1).T
    return signs[np.count_nonzero(signs, axis=1) > 0]


def _directions(dim: int, count: int) -> np.ndarray:
    """count unit vectors spread evenly: Fibonacci sphere (3D) or circle (2D)."""
    i = np.arange(count) + 0.5
    if dim == 2:
        a = 2 * np.pi * i / count
        return np.column_stack((np.cos(a), np.sin(a)))
    z = 1 - 2 * i / count
    r = np.sqrt(1 - z * z)
    a = np.pi * (3 - np.sqrt(5)) * i
    return np.column_stack((r * np.cos(a), r * np.sin(a), z))


def _reduce(points: np.ndarray, k: int) -> np.ndarray:
    """Sorted indices of k of the hull vertices points (h, d), h > k, approximating their hull."""
    from scipy.spatial import ConvexHull, QhullError

    seeds = _seed_directions(points.shape[1])
    chosen = list(dict.fromkeys(np.argmax(seeds @ points.T, axis=1).tolist()))[:k]
    while len(chosen) < k:
        try:
            eq = ConvexHull(points[chosen]).equations  # rows (n, d): n·x + d ≤ 0 inside
            dist = (points @ eq[:, :-1].T + eq[:, -1]).max(axis=1)
        except QhullError:  # the seeds may be degenerate (e.g. coplanar): spread out first
            dist = np.min(np.linalg.norm(points[:, None] - points[chosen][None], axis=2), axis=1)
        dist[chosen] = -np.inf
        chosen.append(int(np.argmax(dist)))
    return np.sort(chosen)


# --------------------------------------------------------------------------------------------
# Builtin shapes

class BuiltinSize(NamedTuple):
    """How a builtin kind is sized: ``default`` when no size is given (m, or the T-handle's
    scale), what the numbers mean (for messages and tooltips), and ``new_body``: the size the
    panel offers for a new body, which fits a desktop-sized container."""

    default: tuple[float, ...]
    meaning: str
    new_body: tuple[float, ...]


BUILTIN_SIZES = {  # the one table of builtin kinds and their sizes
    "box": BuiltinSize((1.0, 1.0, 1.0), "[x, y, z] full extents in m", (0.4, 0.3, 0.2)),
    "sphere": BuiltinSize((0.5,), "[radius] in m", (0.15,)),
    "cylinder": BuiltinSize((0.5, 1.0), "[radius, height] in m, axis along y", (0.12, 0.4)),
    "t_handle": BuiltinSize((1.0,), "[scale] (1 → about 0.3 m)", (1.0,)),
}

# T-handle profile (x, y) in m, counter-clockwise: a 0.3 × 0.05 crossbar along x on top of a
# 0.05 × 0.15 stem along −y, extruded 0.05 along z. Principal moments ≈ (3.6, 5.9, 9.1)e-6 m⁵·ρ
# — ratios 1.65 and 1.53, so the intermediate-axis flip is plain to see.
_T_PROFILE = np.array([[-0.025, -0.15], [0.025, -0.15], [0.025, 0.0], [0.15, 0.0],
                       [0.15, 0.05], [-0.15, 0.05], [-0.15, 0.0], [-0.025, 0.0]])
_T_FAN_CENTRE = np.array([0.0, 0.025])  # sees every profile vertex (inside the junction)
_T_DEPTH = 0.05


def prism_mesh(profile, depth: float, centre) -> tuple[np.ndarray, np.ndarray]:
    """Closed prism: a polygon profile (k, 2) in x, y (counter-clockwise, star-shaped around
    ``centre`` (2,)) extruded over z ∈ [−depth/2, depth/2].

    One closed polyhedron (no boolean union needed): caps are triangle fans from ``centre``,
    sides are quads. Returns vertices (2k + 2, 3) and faces (4k, 3), wound outward.
    """
    profile = np.asarray(profile, dtype=float)
    centre = np.asarray(centre, dtype=float)
    k = len(profile)
    nxt = np.roll(np.arange(k), -1)
    e1, e2 = profile - centre, profile[nxt] - centre
    if np.any(e1[:, 0] * e2[:, 1] - e1[:, 1] * e2[:, 0] <= 0):
        raise ValueError("profile must be counter-clockwise and star-shaped around centre")
    half = depth / 2.0
    ring = np.column_stack((profile, np.zeros(k)))
    vertices = np.vstack((ring + [0, 0, -half], ring + [0, 0, half],
                          [[*centre, -half], [*centre, half]]))
    i = np.arange(k)
    bottom, top, cb, ct = i, i + k, 2 * k, 2 * k + 1
    faces = np.vstack((
        np.column_stack((np.full(k, ct), top, top[nxt])),          # top cap, normal +z
        np.column_stack((np.full(k, cb), bottom[nxt], bottom)),    # bottom cap, normal −z
        np.column_stack((bottom, bottom[nxt], top[nxt])),          # sides, outward
        np.column_stack((bottom, top[nxt], top)),
    ))
    return vertices, faces.astype(np.int64)


def builtin_shape(kind: str, size=None, density: float = DEFAULT_DENSITY) -> Shape:
    """A builtin shape centred on its centre of mass
    (docs/architecture.md#files-and-the-command-line).

    kind: "box" size [x, y, z] full extents (default 1 m cube); "sphere" [radius] (0.5);
    "cylinder" [radius, height] axis along y ([0.5, 1]); "t_handle" [scale] (~0.3 m at 1).
    density kg/m³. Box, sphere and cylinder carry the closed-form properties of the ideal
    solid (the sphere's icosphere and the 32-sided cylinder are for drawing; the sphere collides
    as an exact sphere, the cylinder with its 64 prism corners).
    """
    import trimesh

    name = f"builtin {kind}"
    if kind not in BUILTIN_SIZES:
        raise MeshError(f"{name}: unknown builtin shape; use one of {', '.join(BUILTIN_SIZES)}")
    default, meaning, _ = BUILTIN_SIZES[kind]
    try:
        dims = np.asarray(default if size is None else size, dtype=float).reshape(len(default))
    except (TypeError, ValueError):
        raise MeshError(f"{name}: size must be {meaning}, got {size!r}") from None
    if not np.all(np.isfinite(dims) & (dims > 0)):
        raise MeshError(f"{name}: size must be {meaning}, all > 0, got {dims.tolist()}")
    density = float(density)
    if not (np.isfinite(density) and density > 0):
        raise MeshError(f"{name}: density must be a finite number > 0, got {density}")
    size = tuple(float(d) for d in dims)
    radius = 0.0
    if kind == "box":
        mesh = trimesh.creation.box(extents=dims)
        x, y, z = dims
        volume, area = x * y * z, 2 * (x * y + y * z + z * x)
        moments = volume * density / 12 * np.array([y * y + z * z, x * x + z * z, x * x + y * y])
    elif kind == "sphere":
        radius = dims[0]
        mesh = trimesh.creation.icosphere(subdivisions=3, radius=radius)
        volume, area = 4 / 3 * np.pi * radius**3, 4 * np.pi * radius**2
        moments = np.full(3, 0.4 * volume * density * radius**2)
    elif kind == "cylinder":
        r, h = dims
        mesh = trimesh.creation.cylinder(radius=r, height=h, sections=32)
        mesh.vertices = mesh.vertices[:, [0, 2, 1]] * [1, 1, -1]  # axis z → y, det +1
        volume, area = np.pi * r * r * h, 2 * np.pi * r * (r + h)
        m = volume * density
        moments = np.array([m * (3 * r * r + h * h) / 12, m * r * r / 2,
                            m * (3 * r * r + h * h) / 12])
    else:
        vertices, faces = prism_mesh(_T_PROFILE * dims[0], _T_DEPTH * dims[0],
                                     _T_FAN_CENTRE * dims[0])
        com = mass_properties(vertices, faces, density=density, mode="solid").center_of_mass
        vertices = vertices - com
        props = mass_properties(vertices, faces, density=density, mode="solid")
        return _shape(name, None, vertices, faces, props, 0.0, list(props.warnings), kind, size)
    props = _diagonal_properties(volume, area, density, moments)
    return _shape(name, None, np.asarray(mesh.vertices), np.asarray(mesh.faces), props, radius,
                  [], kind, size)


def _diagonal_properties(volume, area, density, moments_xyz) -> MassProperties:
    """Closed-form properties of a solid centred at the origin with inertia diag(moments_xyz).

    Principal axes are the coordinate axes sorted by moment (stable, so ties keep x, y, z
    order), the last one negated if needed for det = +1.
    """
    order = np.argsort(moments_xyz, kind="stable")
    axes = np.eye(3)[:, order]
    if np.linalg.det(axes) < 0:
        axes[:, 2] = -axes[:, 2]
    return MassProperties(
        mode="solid", watertight=True, volume=float(volume), area=float(area),
        mass=float(volume * density), center_of_mass=np.zeros(3),
        inertia=np.diag(moments_xyz).astype(float), principal_moments=np.asarray(moments_xyz,
                                                                                dtype=float)[order],
        principal_axes=axes, warnings=(),
    )
