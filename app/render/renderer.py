"""The 3D scene with moderngl (GL 3.3 core): background, floor grid, bodies with shadows, gizmos,
translucent container walls.

Per frame (``Renderer.render``):

1. shadow pass: bodies into a depth map from the directional light (orthographic, fitted to
   the bodies and their shadows, snapped to texels so shadow edges don't shimmer, and kept
   while they stay inside it; a corner of the map with texels ``SHADOW_TEXEL_PIXELS`` wide at
   the nearest body); the bodies at rest come from a still layer drawn once and copied;
2. bodies (instanced per Shape and level of detail: one vertex buffer per mesh level, one
   instance per body: model matrix, colour, highlight) and opaque gizmos first, so the costly
   full-screen passes skip what they cover: the floor (grid, fog; PCF shadow lookups only in
   the rectangles where each body's shadow can fall, drawn as one cover that does not
   overlap), then the background gradient at the far plane;
3. translucent gizmos (polhode lines, inertia ellipsoids); the centre-of-mass markers on top.

The translucent container walls have no pass of their own: every opaque surface (bodies, floor,
background, opaque gizmos) tints its own colour by the walls its view ray crosses
(``shaders/walls.glsl``: the far wall, then the near one, as blending them over it would, to
±1 of 255 from the rounding the blends did). Their two blended passes over the container's
footprint cost llvmpipe ~2 ms of a frame's ~14 in ``bench/frame.py`` at 200 bodies (one
rasteriser thread ~3.3 of 14.2), and each opaque pixel pays only a ray–box test; the cached
background holds the walls over the far floor and the sky with them, and without it (a moving
camera) the far floor and the sky test only the pixels of the container's rectangle on screen.

Where a frame's time goes, measured with ``bench/frame.py``'s scene (500 bodies, 1280×720,
the default gizmos, the cached background; CPU of the drawing thread and llvmpipe's threads
together, ~38 ms a frame on the 2-core development machine, noisy): the bodies ~17 ms (their
shading ~9, of which the two shadow lookups ~5; their triangles, ~23 000 at their coarsest
levels already, the rest), the shadow pass ~9, the shadowed floor ~4, the walls ~4 (since
drawn by the opaque surfaces, above), the rest (Python, the background copy, gizmos) ~4.
The shadow pass is since ~4 times cheaper (texels 2 px wide, ``SHADOW_TEXEL_PIXELS``) and
draws the casters at rest once (the still layer, ``_shadow_pass``): docs/architecture.md.
Half the resolution halves the bodies' pass; coarser levels of detail change little (the
builtin meshes are small).

Colours are linear RGB; the shaders light in linear space (hemisphere ambient + a directional
sun) and encode sRGB at the end, so the target framebuffer is an ordinary (non-sRGB) one.
Multisampled targets work as is (``OffscreenTarget`` resolves them for reading).

Meshes: ``prepare_mesh(shape)`` turns a Shape into vertex arrays on the CPU: body frame,
normals smooth within 30° and split at sharper creases, and a chain of coarser levels of detail
made by vertex clustering. Measured on this machine for a 1.31M-face mesh (icosphere, 655k
vertices): building its full-resolution arrays takes 2.7 s, uploading them (``ctx.buffer`` of
31 MB) only ~3 ms, but drawing them costs 170–270 ms per frame, because llvmpipe transforms and
bins every triangle on the render thread while holding the GIL. Upload is therefore not the
problem (< 100 ms, it stays on the render thread); drawing and preparing are: the drawn mesh is
capped at ``MAX_DRAWN_FACES`` (clustered, ~68k faces for that mesh, then ~16 ms per frame) and
each body is drawn with the coarsest level that keeps its triangles about
``PIXELS_PER_TRIANGLE`` pixels on screen. ``prepare_mesh`` (0.7 s for that mesh) is cached per
Shape and thread-safe. A big Shape (above ``PREPARE_INLINE_FACES``) is drawn in two stages, so
its body is drawn soon after it starts simulating and frames never stall: first a single coarse
level (``prepare_first_level``, ~``FIRST_LEVEL_FACES`` faces, clustered in compiled code: the
loader makes it beside the hull and hands it over with ``adopt_first_level``, else the
renderer's worker thread makes it), drawn as soon as it exists; then the real levels of detail,
made on the worker thread, which replace it when they are ready.
"""

from __future__ import annotations

import hashlib
import itertools
import logging
import math
import threading
import weakref
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass

import fast_simplification
import moderngl
import numpy as np
import trimesh
from pyrr import matrix44
from scipy.sparse import coo_matrix
from scipy.sparse.csgraph import connected_components
from scipy.spatial import cKDTree

from app.render.camera import OrbitCamera, look_at
from app.render.clustering import cluster
from app.render.gizmos import Gizmos, set_uniforms, shape_table
from app.render.gl import (
    GL_COLOR_BUFFER_BIT,
    GL_DEPTH_BUFFER_BIT,
    GL_DRAW_FRAMEBUFFER,
    GL_NEAREST,
    GL_READ_FRAMEBUFFER,
    draw_indexed_triangles,
    gl_library,
)
from app.render.view import FrameView, GizmoOptions
from app.resources import load_program
from physics.geometry.inertia import MassProperties
from physics.geometry.meshes import Shape
from physics.geometry.rotation import quat_to_matrix

log = logging.getLogger("tumble")

CREASE_ANGLE = math.radians(30.0)  # adjacent faces further apart than this get split normals
COARSE_CREASE_ANGLE = math.radians(60.0)  # the same on coarser levels, whose facets of a smooth
                                          # surface meet at larger angles (boxes stay sharp)
PREPARE_INLINE_FACES = 20_000      # bigger unprepared meshes are prepared on a worker thread
FIRST_LEVEL_FACES = 2_000          # a big mesh is drawn at about this many faces first, while
                                   # its levels of detail are prepared
MAX_DRAWN_FACES = 60_000           # finest level drawn: ~6 ms per pass on llvmpipe
PIXELS_PER_TRIANGLE = 10.0         # level of detail: coarsest level with triangles ≤ this size
MIN_COARSE_FACES = 16              # levels of detail stop above this many faces
QUADRIC_BELOW = 2048               # coarser levels of meshes this small by quadric collapse
COARSE_DEVIATION = 0.04            # × the mesh's size: how far a small mesh's coarser level
                                   # may stray from it (≤ 1 px where levels switch)
SHADOW_SIZE = 1024                 # shadow map texels per side: each lookup costs bandwidth on
                                   # llvmpipe (2048² made the floor ~50 % slower); a frame uses
                                   # a corner of it (_light_space)
SHADOW_STEP = 64                   # texels: the corner's side is a multiple of this
SHADOW_TEXEL_PIXELS = 2.0          # px: a shadow texel's width on screen at the nearest body
                                   # (or shadow); filling the corner is most of the shadow
                                   # pass on llvmpipe (∝ its texels: 1 px cost ~4 of a 500-body
                                   # frame's 19 ms, 2 px ~1), and the soft edge (~4 texels) is
                                   # then ~7 px wide there, narrower further back
# the still layer of the shadow map (Renderer._shadow_pass): casters that have not moved are
# drawn once into a map of their own, which each frame's pass copies before drawing the others
STILL_FRAMES = 30                   # frames: a body still this long joins the layer (a body
                                   # at the top of its bounce is not: the layer is redrawn
                                   # whenever one of its bodies moves)
STILL_TOLERANCE = 1e-5             # m (and per entry of the rotation): the drawn pose may
                                   # stray this far from where it was and still count as still
                                   # (the interpolation's rounding; a texel is ≥ 2 mm)
STILL_LAYER_MIN = 4                # bodies: fewer still ones are drawn each frame (the copy
                                   # costs llvmpipe 0.03–0.16 ms, 320²–1 024² texels: about
                                   # what drawing a few of them does)
STILL_REBUILD = 0.25               # the layer is redrawn to take in bodies that came to rest
                                   # once they are this fraction of those it holds
FLOOR_HALF_SIZE = 200.0            # m: "no container → just a large floor"
# polygon offset (slope factor, units) of the shadowed floor rectangles: their interpolated depth
# lies within ~5 units of the floor's exact depth (floor_depth; measured over camera poses), and
# a multisampled target takes it at samples up to a pixel's depth slope from the pixel centre,
# where the exact depth is written; this far forward they always cover the whole floor drawn
# behind them at its exact depth
SHADOWED_FLOOR_OFFSET = (-1.0, -16.0)
SHADOW_COVER_CELLS = 48            # the floor's shadowed part is drawn as whole cells of a grid
                                   # this many cells across (_disjoint_cover)

# Light and colours (linear RGB), tuned for demo videos: a warm sun from the upper left-front
# and a cool sky fill.
LIGHT_DIR = np.array([-0.45, 1.0, 0.35]) / np.linalg.norm([-0.45, 1.0, 0.35])  # towards light
LIGHTING = {
    "u_light_dir": LIGHT_DIR,
    "u_light_color": (1.05, 0.98, 0.9),
    "u_sky_ambient": (0.2, 0.24, 0.31),
    "u_ground_ambient": (0.09, 0.08, 0.07),
}
ZENITH, HORIZON, NADIR = (0.06, 0.09, 0.17), (0.4, 0.43, 0.49), (0.22, 0.23, 0.25)
FLOOR_COLOR = (0.3, 0.3, 0.31)
WALL_COLOR = (0.55, 0.72, 0.95)
WALL_DISPLAY_COLOR = np.power(WALL_COLOR, 1.0 / 2.2)  # the walls blend in display space
HIGHLIGHT_COLOR = (1.0, 0.78, 0.25)

# Default body colours (sRGB hex of a muted, distinct palette → linear), picked by body id.
_PALETTE_SRGB = ("4e79a7", "f28e2b", "e15759", "76b7b2", "59a14f", "edc948", "b07aa1",
                 "ff9da7", "9c755f", "86bcb6")
PALETTE = (np.array([[int(h[i:i + 2], 16) for i in (0, 2, 4)] for h in _PALETTE_SRGB])
           / 255.0) ** 2.2


def palette_color(body_id) -> np.ndarray:
    """(3,) linear RGB default colour of a body (when its BodyRecord.color is None), or (k, 3)
    for an array of k body ids."""
    return PALETTE[np.asarray(body_id, dtype=np.int64) % len(PALETTE)].copy()


# ---- meshes (CPU side, any thread) -------------------------------------------------------------


@dataclass(frozen=True)
class MeshArrays:
    """A Shape ready for upload: ``levels`` of detail, finest first, each (vertices (k, 6)
    float32 body-frame position (m) and unit normal, indices (m, 3) uint32); ``two_sided``: the
    surface is open, draw both faces lit."""

    levels: tuple[tuple[np.ndarray, np.ndarray], ...]
    two_sided: bool

    @property
    def face_counts(self) -> np.ndarray:
        """(levels,) faces per level, decreasing."""
        return np.array([len(indices) for _, indices in self.levels])


_prepared: weakref.WeakKeyDictionary[Shape, MeshArrays] = weakref.WeakKeyDictionary()
_prepared_lock = threading.Lock()


def prepare_mesh(shape: Shape) -> MeshArrays:
    """Vertex arrays of ``shape`` in its body (principal) frame, computed once per Shape.

    Thread-safe and cached: call it from the loader thread for big meshes (module docstring)
    so the render thread only uploads. Normals are area-weighted averages over the faces around
    a vertex that meet at less than ``CREASE_ANGLE``; a vertex on a sharper crease is split, so
    a box is flat-shaded and an icosphere smooth. Levels: the mesh itself (clustered down to
    ``MAX_DRAWN_FACES`` if bigger), then clustered to a quarter of the faces each down to
    ``QUADRIC_BELOW``, then halved by quadric edge collapse while within ``COARSE_DEVIATION``;
    those split only at creases sharper than ``COARSE_CREASE_ANGLE``, so a coarse sphere still
    shades smooth.
    """
    with _prepared_lock:
        cached = _prepared.get(shape)
    if cached is not None:
        return cached
    props = shape.properties
    vertices = (np.asarray(shape.vertices, dtype=float) - props.center_of_mass) \
        @ props.principal_axes
    faces = np.asarray(shape.faces, dtype=np.int64)
    if len(faces) > MAX_DRAWN_FACES:
        vertices, faces = cluster(vertices, faces, MAX_DRAWN_FACES)  # compiled, without the GIL
    levels = [_split_normals(vertices, faces, CREASE_ANGLE)]
    while len(faces) > QUADRIC_BELOW:
        coarse_vertices, coarse_faces = _cluster(vertices, faces, len(faces) // 4)
        if len(coarse_faces) > 0.66 * len(faces) or len(coarse_faces) < 40:
            break
        vertices, faces = coarse_vertices, coarse_faces
        levels.append(_split_normals(vertices, faces, COARSE_CREASE_ANGLE))
    # below that, clustering merges whole features (a sphere goes lumpy, a cylinder's rim
    # collapses): quadric edge collapse (M. Garland and P. Heckbert, SIGGRAPH 1997) halves the
    # faces while the surface stays within COARSE_DEVIATION of the mesh's size from points of
    # this level (a T-handle's arms do not)
    size = np.ptp(vertices, axis=0).max()
    reference = _surface_points(vertices, faces)
    while len(faces) >= 2 * MIN_COARSE_FACES:
        # at unit size (the simplifier's thresholds are absolute), in fresh writable arrays
        # (the extension refuses read-only ones, and a Shape's are)
        coarse_vertices, coarse_faces = fast_simplification.simplify(
            vertices / size, np.array(faces, dtype=np.int64), target_count=len(faces) // 2)
        coarse_vertices = coarse_vertices * size
        if (len(coarse_faces) > 0.66 * len(faces) or len(coarse_faces) < MIN_COARSE_FACES
                or _deviation(reference, coarse_vertices, coarse_faces)
                > COARSE_DEVIATION * size):
            break
        vertices, faces = coarse_vertices, coarse_faces
        levels.append(_split_normals(vertices, faces, COARSE_CREASE_ANGLE))
    arrays = MeshArrays(tuple(levels), two_sided=not props.watertight)
    with _prepared_lock:
        return _prepared.setdefault(shape, arrays)


_first_levels: weakref.WeakKeyDictionary[Shape, MeshArrays] = weakref.WeakKeyDictionary()


def prepare_first_level(shape: Shape) -> MeshArrays:
    """One coarse level (about ``FIRST_LEVEL_FACES`` faces) of ``shape`` in its body frame: what
    a big mesh is drawn with from the moment its body exists until ``prepare_mesh`` has made its
    real levels. Thread-safe and cached, like ``prepare_mesh``; ``adopt_first_level`` stores
    one made before the Shape existed."""
    with _prepared_lock:
        cached = _first_levels.get(shape)
    if cached is not None:
        return cached
    return adopt_first_level(shape, first_level(shape.vertices, shape.faces, shape.properties))


def first_level(vertices: np.ndarray, faces: np.ndarray, props: MassProperties) -> MeshArrays:
    """``prepare_first_level`` of a mesh (vertices (n, 3), faces (m, 3), its mass properties)
    before its Shape exists: ``first_level_posed(first_level_cluster(…), props)``."""
    return first_level_posed(first_level_cluster(vertices, faces), props)


def first_level_cluster(vertices: np.ndarray,
                        faces: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The first level's clustering of a mesh (vertices (n, 3), faces (m, 3)) in the mesh's own
    frame: (vertices (k, 3), faces (t, 3)). It needs no mass properties, so the loader starts
    it as soon as the mesh is clean; compiled, without the GIL, so frames, the mass properties
    and the hull go on meanwhile."""
    return cluster(vertices, faces, FIRST_LEVEL_FACES)


def first_level_posed(clustered: tuple[np.ndarray, np.ndarray],
                      props: MassProperties) -> MeshArrays:
    """The first level from ``first_level_cluster``'s output: only the few merged vertices are
    turned to the body frame, then given normals."""
    vertices, faces = clustered
    vertices = (vertices - props.center_of_mass) @ props.principal_axes
    return MeshArrays((_split_normals(vertices, faces, COARSE_CREASE_ANGLE),),
                      two_sided=not props.watertight)


def adopt_first_level(shape: Shape, arrays: MeshArrays) -> MeshArrays:
    """Keep ``arrays`` (from ``first_level``) as ``shape``'s first level, unless it has one."""
    with _prepared_lock:
        return _first_levels.setdefault(shape, arrays)


def _surface_points(vertices: np.ndarray, faces: np.ndarray, count: int = 256) -> np.ndarray:
    """(≤ count, 3) vertices and face centres of a mesh, spread evenly over its lists."""
    points = np.vstack([vertices, vertices[faces].mean(axis=1)])
    return points[np.unique(np.linspace(0, len(points) - 1, count).astype(np.int64))]


def _deviation(points: np.ndarray, coarse_vertices: np.ndarray,
               coarse_faces: np.ndarray, candidates: int = 32) -> float:
    """Largest distance, m, from ``points`` (p, 3) to the surface of a coarser mesh (vertices
    (n, 3), faces (t, 3)), each point measured against the triangles of the ``candidates``
    face centres nearest to it (a large triangle whose centre is farther can only make the
    estimate too high: a level is then kept back, never passed wrongly)."""
    triangles = coarse_vertices[coarse_faces]                                  # (t, 3, 3)
    k = min(candidates, len(triangles))
    _, nearest = cKDTree(triangles.mean(axis=1)).query(points, k=k)            # (p, k)
    nearest = np.asarray(nearest).reshape(len(points), k)
    closest = trimesh.triangles.closest_point(
        triangles[nearest.ravel()], np.repeat(points, k, axis=0))
    distance = np.linalg.norm(closest.reshape(len(points), k, 3) - points[:, None], axis=2)
    return float(distance.min(axis=1).max())


def _cluster(vertices: np.ndarray, faces: np.ndarray, target: int) -> tuple[np.ndarray,
                                                                             np.ndarray]:
    """A coarser mesh of about ``target`` faces by vertex clustering (J. Rossignac and P. Borrel,
    "Multi-resolution 3D approximations for rendering complex scenes", 1993): vertices are
    merged per cell of a uniform grid (at their mean), faces that collapse are dropped.

    vertices (n, 3), faces (m, 3) → (vertices (k, 3), faces (t, 3) int64). The cell size starts
    where a smooth surface keeps about ``target`` faces (one per cell size² of area, measured on
    spheres) and grows by 25 % until the count fits. Faces keep their orientation, so two
    opposite faces on the same vertices (a thin sheet) both stay.
    """
    lo = vertices.min(axis=0)
    cross = np.cross(vertices[faces[:, 1]] - vertices[faces[:, 0]],
                     vertices[faces[:, 2]] - vertices[faces[:, 0]])
    area = 0.5 * np.linalg.norm(cross, axis=1).sum()
    # area-weighted vertex normals: a merged face turned more than 45° from its vertices'
    # surface is a fold-over or an edge-on sliver of the clustering (it would show as a dark
    # speck): dropped, leaving at most a sub-pixel crack
    vertex_normal = np.stack([np.bincount(faces.ravel(), np.repeat(cross[:, k], 3),
                                          minlength=len(vertices)) for k in range(3)], 1)
    cell_size = math.sqrt(max(area, 1e-30) / max(target, 1))
    for _ in range(12):
        cell = np.floor((vertices - lo) / cell_size).astype(np.int64)
        dims = cell.max(axis=0) + 1
        _, cluster = np.unique((cell[:, 0] * dims[1] + cell[:, 1]) * dims[2] + cell[:, 2],
                               return_inverse=True)
        count = np.bincount(cluster)
        merged = np.stack([np.bincount(cluster, vertices[:, k]) for k in range(3)], 1) \
            / count[:, None]
        f = cluster[faces]
        f = f[(f[:, 0] != f[:, 1]) & (f[:, 1] != f[:, 2]) & (f[:, 2] != f[:, 0])]
        surface = np.stack([np.bincount(cluster, vertex_normal[:, k]) for k in range(3)], 1)
        normal = np.cross(merged[f[:, 1]] - merged[f[:, 0]], merged[f[:, 2]] - merged[f[:, 0]])
        around = surface[f].sum(axis=1)
        agree = np.einsum("ij,ij->i", normal, around)
        f = f[agree > 0.7 * np.linalg.norm(normal, axis=1) * np.linalg.norm(around, axis=1)]
        # one copy of each face: rotate the smallest index first (keeps the winding)
        first = np.argmin(f, axis=1)[:, None]
        f = np.take_along_axis(f, (first + np.arange(3)) % 3, axis=1)
        k = len(merged)
        _, unique = np.unique((f[:, 0] * k + f[:, 1]) * k + f[:, 2], return_index=True)
        f = f[np.sort(unique)]
        if len(f) <= 1.15 * target:
            break
        cell_size *= 1.25
    used, f = np.unique(f, return_inverse=True)
    return merged[used], f.reshape(-1, 3)


def _split_normals(vertices: np.ndarray, faces: np.ndarray,
                   crease: float) -> tuple[np.ndarray, np.ndarray]:
    """(vertices (k, 6) float32 position + normal, indices (m, 3) uint32) with crease splitting.

    Each face corner is a node; the corners of one mesh vertex in two faces that share an edge
    through it and meet within the crease angle are joined. Each connected group of corners
    becomes one output vertex whose normal sums the area-weighted normals of its faces.
    """
    m, n = len(faces), len(vertices)
    cross = np.cross(vertices[faces[:, 1]] - vertices[faces[:, 0]],
                     vertices[faces[:, 2]] - vertices[faces[:, 0]])  # (m, 3), |·| = 2 × area
    length = np.linalg.norm(cross, axis=1)
    unit = cross / np.where(length > 0.0, length, 1.0)[:, None]
    # edge k of face f runs from corner 3f+k to corner 3f+(k+1)%3
    corner = np.arange(3 * m).reshape(m, 3)
    start_c, end_c = corner.ravel(), corner[:, [1, 2, 0]].ravel()
    start_v, end_v = faces.ravel(), faces[:, [1, 2, 0]].ravel()
    swap = start_v > end_v
    low_v, high_v = np.where(swap, end_v, start_v), np.where(swap, start_v, end_v)
    low_c, high_c = np.where(swap, end_c, start_c), np.where(swap, start_c, end_c)
    order = np.argsort(low_v * n + high_v)
    key = (low_v * n + high_v)[order]
    first = np.ones(len(key), dtype=bool)
    first[1:] = key[1:] != key[:-1]
    # pair every further copy of an edge with the first copy (manifold edges come in pairs)
    run_start = np.maximum.accumulate(np.where(first, np.arange(len(key)), 0))
    e1, e2 = order[run_start[~first]], order[~first]
    smooth = np.einsum("ij,ij->i", unit[e1 // 3], unit[e2 // 3]) > math.cos(crease)
    e1, e2 = e1[smooth], e2[smooth]
    rows = np.concatenate([low_c[e1], high_c[e1]])
    cols = np.concatenate([low_c[e2], high_c[e2]])
    graph = coo_matrix((np.ones(len(rows), dtype=np.int8), (rows, cols)), shape=(3 * m, 3 * m))
    count, label = connected_components(graph, directed=False)
    weight = np.repeat(cross, 3, axis=0)
    normal = np.stack([np.bincount(label, weight[:, k], minlength=count) for k in range(3)], 1)
    norm = np.linalg.norm(normal, axis=1)
    normal = np.where(norm[:, None] > 0.0, normal / np.where(norm > 0.0, norm, 1.0)[:, None],
                      (0.0, 1.0, 0.0))  # corners of degenerate faces only: any unit normal
    position = np.empty((count, 3))
    position[label] = vertices[start_v]
    return (np.hstack([position, normal]).astype(np.float32),
            label.reshape(m, 3).astype(np.uint32))


# ---- GPU side (render thread) ------------------------------------------------------------------


class _GpuMesh:
    """One level of detail of a Shape on the GPU: vertex + index buffers, a growable
    per-instance buffer, and the vertex arrays binding them to the colour and shadow programs."""

    INSTANCE_FORMAT = "16f 3f 1f/i"  # model matrix (pyrr layout), colour, highlight
    INSTANCE_FLOATS = 20
    _serials = itertools.count(1)

    def __init__(self, ctx: moderngl.Context, level: tuple[np.ndarray, np.ndarray],
                 two_sided: bool, body_prog, depth_prog):
        self.ctx, self.body_prog, self.depth_prog = ctx, body_prog, depth_prog
        self.two_sided = two_sided
        self.serial = next(self._serials)  # names this level in keys (id() may be reused)
        self.vbo = ctx.buffer(level[0])
        self.ibo = ctx.buffer(level[1])
        self.capacity = 0
        self.instances = None
        self.vaos: tuple = ()
        self._still = None  # (instance buffer, shadow vertex array) of draw_still
        self.reserve(1)

    def reserve(self, count: int) -> None:
        """Make room for ``count`` instances (grows by powers of two)."""
        if count <= self.capacity:
            return
        self.release_instances()
        self.capacity = 1 << max(0, count - 1).bit_length()
        self.instances = self.ctx.buffer(reserve=self.capacity * self.INSTANCE_FLOATS * 4,
                                         dynamic=True)
        self.vaos = (
            self.ctx.vertex_array(self.body_prog, [
                (self.vbo, "3f 3f", "in_position", "in_normal"),
                (self.instances, self.INSTANCE_FORMAT, "i_model", "i_color", "i_highlight"),
            ], index_buffer=self.ibo, index_element_size=4),
            self._shadow_vao(self.instances),
        )

    def _shadow_vao(self, instances) -> moderngl.VertexArray:
        """The shadow program's vertex array of this level with the model matrices of the
        instance buffer ``instances`` (the rest of each instance skipped)."""
        return self.ctx.vertex_array(self.depth_prog, [
            (self.vbo, "3f 12x", "in_position"),
            (instances, "16f 16x/i", "i_model"),
        ], index_buffer=self.ibo, index_element_size=4)

    def draw_still(self, instances: np.ndarray) -> None:
        """Draw ``instances`` (k, INSTANCE_FLOATS) float32 with the shadow program from a
        buffer of their own (the still layer's casters; the frame's buffer holds every body)."""
        if self._still is None or self._still[0].size < instances.nbytes:
            self._release_still()
            buffer = self.ctx.buffer(reserve=max(instances.nbytes, 4 * self.INSTANCE_FLOATS))
            self._still = (buffer, self._shadow_vao(buffer))
        self._still[0].write(instances)
        draw_indexed_triangles(self._still[1], len(instances))

    def _release_still(self) -> None:
        if self._still is not None:
            self._still[1].release()
            self._still[0].release()
            self._still = None

    def release_instances(self) -> None:
        for vao in self.vaos:
            vao.release()
        if self.instances is not None:
            self.instances.release()

    def release(self) -> None:
        self.release_instances()
        self._release_still()
        self.vbo.release()
        self.ibo.release()


def _floor_quads(rects: np.ndarray) -> np.ndarray:
    """(6k, 2) float32 triangles (x, z), counter-clockwise seen from above, of the (k, 4)
    rectangles ``rects`` (x min, z min, x max, z max, m) clipped to the floor square."""
    h = FLOOR_HALF_SIZE
    x0, z0, x1, z1 = np.clip(np.asarray(rects, dtype=float), -h, h).T
    corners = [(x0, z0), (x0, z1), (x1, z1), (x0, z0), (x1, z1), (x1, z0)]
    return np.stack([np.stack(c, axis=-1) for c in corners], axis=1).reshape(-1, 2) \
        .astype(np.float32)


def _disjoint_cover(rects: np.ndarray, cells: int = SHADOW_COVER_CELLS) -> np.ndarray:
    """(j, 4) rectangles (x min, z min, x max, z max, m) that do not overlap and together cover
    the (k, 4) ``rects``: the cells of a square grid (``cells`` along the longer side of the
    rectangles' bounding box) that any rectangle touches, merged into runs along z and then
    runs of equal rows along x. Overlapping rectangles would be rasterised once per layer
    (hundreds of bodies' shadow rectangles overlap several times over), the cover once. When
    the cover is larger than the rectangles together (a few bodies far apart), ``rects``."""
    rects = np.asarray(rects, dtype=float).reshape(-1, 4)
    if len(rects) < 2:
        return rects
    lo, hi = rects[:, :2].min(axis=0), rects[:, 2:].max(axis=0)
    step = (hi - lo).max() / cells
    if not step > 0.0:
        return rects
    shape = np.maximum(np.ceil((hi - lo) / step).astype(np.int64), 1)
    first = np.clip(np.floor((rects[:, :2] - lo) / step).astype(np.int64), 0, shape - 1)
    last = np.clip(np.ceil((rects[:, 2:] - lo) / step).astype(np.int64), first + 1, shape)
    # rectangles counted per cell by a summed difference array
    count = np.zeros(shape + 1, dtype=np.int64)
    for rows, cols, sign in ((first[:, 0], first[:, 1], 1), (last[:, 0], first[:, 1], -1),
                             (first[:, 0], last[:, 1], -1), (last[:, 0], last[:, 1], 1)):
        np.add.at(count, (rows, cols), sign)
    covered = count.cumsum(axis=0).cumsum(axis=1)[:-1, :-1] > 0
    # runs of covered cells along z in each row (x)
    edges = np.diff(np.pad(covered, ((0, 0), (1, 1))).astype(np.int8), axis=1)
    row, start = np.nonzero(edges == 1)
    _, end = np.nonzero(edges == -1)
    # the same run in consecutive rows: one rectangle
    order = np.lexsort((row, end, start))
    row, start, end = row[order], start[order], end[order]
    new = np.ones(len(row), dtype=bool)
    new[1:] = (start[1:] != start[:-1]) | (end[1:] != end[:-1]) | (row[1:] != row[:-1] + 1)
    begin = np.flatnonzero(new)
    stop = np.append(begin[1:], len(row)) - 1
    cover = np.stack([lo[0] + row[begin] * step, lo[1] + start[begin] * step,
                      lo[0] + (row[stop] + 1) * step, lo[1] + end[begin] * step], axis=1)
    cover[:, 2:] = np.minimum(cover[:, 2:], hi)
    area = np.prod(rects[:, 2:] - rects[:, :2], axis=1).sum()
    return cover if np.prod(cover[:, 2:] - cover[:, :2], axis=1).sum() <= area else rects


def _copy_frame(target: moderngl.Framebuffer, source: moderngl.Framebuffer,
                size: tuple[int, int], depth: bool) -> None:
    """Copy the colour and, if ``depth``, the depth of ``source`` into ``target`` (same size;
    same formats: llvmpipe then copies memory, ~0.9 ms for both at 1280×720) and leave
    ``target`` bound. Through ctypes, which releases the GIL for the copy and the wait for the
    target's pending draws (moderngl's copy_framebuffer keeps it)."""
    gl = gl_library()
    gl.glBindFramebuffer(GL_READ_FRAMEBUFFER, source.glo)
    gl.glBindFramebuffer(GL_DRAW_FRAMEBUFFER, target.glo)
    gl.glBlitFramebuffer(0, 0, *size, 0, 0, *size,
                         GL_COLOR_BUFFER_BIT | (GL_DEPTH_BUFFER_BIT if depth else 0), GL_NEAREST)
    target.use()  # moderngl's own binding, which the calls above went around


def floor_depth(camera: OrbitCamera, size: tuple[int, int]) -> np.ndarray:
    """(3,) (A, B, C): the window depth of the floor plane y = 0 at pixel centre (x, y) of a
    viewport of ``size`` = (width, height) px is A x + B y + C (a plane's depth is affine in
    screen space), from the camera's view-projection in float64.

    The whole floor's shaders write this depth: the rasteriser's own interpolation over the
    400 m square, clipped at the near plane, strays up to ~150 units of a 24-bit depth buffer
    at some camera poses, so no polygon offset kept the shadowed rectangles in front of it.
    The rectangles keep their interpolated depth (within ~5 units of this: small triangles),
    so llvmpipe still skips their pixels behind bodies before shading them."""
    width, height = size
    vp = camera.view_projection(width / height, np.float64)
    # clip = w (x_ndc, y_ndc, z_ndc, 1) of a point p on the floor: (clip @ vp⁻¹)·ŷ = p_y = 0
    q = np.linalg.inv(vp)[:, 1]
    a, b, c = -q[0] / q[2], -q[1] / q[2], -q[3] / q[2]  # z_ndc = a x_ndc + b y_ndc + c
    # x_ndc = 2 x / width - 1, y_ndc = 2 y / height - 1, depth = (z_ndc + 1) / 2
    return np.array([a / width, b / height, 0.5 * (c - a - b) + 0.5])


def _container_uniform(container_size) -> np.ndarray:
    """(4,) ``u_container`` of walls.glsl: the walls' half width, height and half depth, m,
    and 1, or zeros without a container."""
    if container_size is None:
        return np.zeros(4)
    x, y, z = np.asarray(container_size, dtype=float)
    return np.array([0.5 * x, y, 0.5 * z, 1.0])


def _wall_pixels(container: np.ndarray, vp: np.ndarray,
                 size: tuple[int, int]) -> tuple[int, int, int, int] | None:
    """(x, y, width, height) px, from the bottom left: a rectangle of the viewport of ``size``
    holding every pixel whose view ray crosses the container (``u_container`` of walls.glsl:
    half width, height, half depth, 1; zeros without one) seen with the view-projection ``vp``
    (pyrr layout) — its corners' projections, grown by 2 px. None when no pixel's ray crosses
    it, the whole viewport when a corner lies behind the eye."""
    if container[3] < 0.5:
        return None
    width, height = size
    hx, hy, hz = container[:3]
    corners = np.array([[x, y, z, 1.0] for x in (-hx, hx) for y in (0.0, hy) for z in (-hz, hz)])
    clip = corners @ np.asarray(vp, dtype=np.float64)
    if (clip[:, 3] <= 1e-6).any():
        return (0, 0, width, height)
    ndc = clip[:, :2] / clip[:, 3:]
    low = np.floor((ndc.min(axis=0) + 1.0) * 0.5 * (width, height)) - 2
    high = np.ceil((ndc.max(axis=0) + 1.0) * 0.5 * (width, height)) + 2
    x0, y0 = (int(v) for v in np.maximum(low, 0))
    x1, y1 = int(min(high[0], width)), int(min(high[1], height))
    if x1 <= x0 or y1 <= y0:
        return None
    return (x0, y0, x1 - x0, y1 - y0)


def _around(rect: tuple[int, int, int, int],
            size: tuple[int, int]) -> list[tuple[int, int, int, int]]:
    """The (at most four) rectangles (x, y, width, height) that cover the viewport of ``size``
    but for ``rect``: the bands below and above it, then left and right of it."""
    x, y, w, h = rect
    width, height = size
    bands = [(0, 0, width, y), (0, y + h, width, height - y - h), (0, y, x, h),
             (x + w, y, width - x - w, h)]
    return [band for band in bands if band[2] > 0 and band[3] > 0]


def _rows_by_shape(shapes: tuple[Shape, ...]) -> list[tuple[Shape, np.ndarray]]:
    """(Shape, the rows (k,) of the bodies drawn with it, ascending) for each distinct Shape
    of a frame's ``shapes``, in order of their ids: one sort, without a pass per Shape."""
    if not shapes:
        return []
    keys = np.fromiter((id(s) for s in shapes), dtype=np.int64, count=len(shapes))
    order = np.argsort(keys, kind="stable")
    starts = np.flatnonzero(np.diff(keys[order], prepend=keys[order[0]] - 1))
    return [(shapes[rows[0]], rows) for rows in np.split(order, starts[1:])]


class Renderer:
    """Draws a ``FrameView`` (see module docstring). Use on the thread that owns ``ctx``.

    ``shadows`` can be switched off (tests compare with and without). ``cache_background``
    (off by default; ``tumble record`` sets it, its camera never moves) keeps the unshadowed
    floor and the sky of the last camera pose and size in an offscreen image and starts each
    frame from a copy of it: the floor where shadows can fall is drawn again, the rest of the
    floor only as depth (a shader without shading), so what lies under the floor stays hidden.
    Same shaders, same uniforms: the same pixels up to a stray edge pixel (tested). Measured
    with llvmpipe at 1280×720 and 50 bodies: ~29 → ~19 ms of CPU per frame.

    Meshes are uploaded on first use per Shape object (keyed by ``id(shape)``; the renderer
    keeps the Shape alive until ``release_unused`` drops it).
    """

    def __init__(self, ctx: moderngl.Context, shadow_size: int = SHADOW_SIZE):
        self.ctx = ctx
        self.shadows = True
        self.cache_background = False
        self._background: tuple[bytes, moderngl.Framebuffer] | None = None  # (key, image)
        self.body_prog = load_program(ctx, "body")
        self.depth_prog = load_program(ctx, "depth")
        self.sky_prog = load_program(ctx, "sky")
        self.floor_prog = load_program(ctx, "floor")
        self.far_floor_prog = load_program(ctx, "floor", ("NO_SHADOWS",))
        # the background's pixels whose view ray misses the container skip the walls' test
        self.open_sky_prog = load_program(ctx, "sky", ("NO_WALLS",))
        self.open_floor_prog = load_program(ctx, "floor", ("NO_SHADOWS", "NO_WALLS"))
        self.sky_vao = ctx.vertex_array(self.sky_prog, [])
        self.open_sky_vao = ctx.vertex_array(self.open_sky_prog, [])
        self._floor_vbo = ctx.buffer(reserve=6 * 8, dynamic=True)  # the shadow rectangles
        self.floor_vao = ctx.vertex_array(self.floor_prog, [(self._floor_vbo, "2f", "in_xz")])
        self._far_floor_vbo = ctx.buffer(_floor_quads([(-FLOOR_HALF_SIZE, -FLOOR_HALF_SIZE,
                                                        FLOOR_HALF_SIZE, FLOOR_HALF_SIZE)]))
        self.far_floor_vao = ctx.vertex_array(self.far_floor_prog,
                                              [(self._far_floor_vbo, "2f", "in_xz")])
        self.open_floor_vao = ctx.vertex_array(self.open_floor_prog,
                                               [(self._far_floor_vbo, "2f", "in_xz")])
        self.floor_depth_prog = load_program(ctx, "floor", ("NO_SHADOWS", "DEPTH_ONLY"))
        self.floor_depth_vao = ctx.vertex_array(self.floor_depth_prog,
                                                [(self._far_floor_vbo, "2f", "in_xz")])
        self.shadow_map = ctx.depth_texture((shadow_size, shadow_size))
        self.shadow_map.compare_func = "<="
        self.shadow_map.filter = (moderngl.LINEAR, moderngl.LINEAR)
        self.shadow_map.repeat_x = self.shadow_map.repeat_y = False
        self.shadow_fbo = ctx.framebuffer(depth_attachment=self.shadow_map)
        # cleared now because frames without casters still sample it (branch-free shader), and
        # uninitialised memory can hold denormals that make llvmpipe's lookups several × slower
        self.shadow_fbo.clear(depth=1.0)
        self._shadow_key: bytes | None = None  # what the shadow map holds (_shadow_pass)
        self._shadow_used = shadow_size  # texels per side of the map's corner not all empty
        # (half, centre, texels, reach, camera) of the last frame's _light_space
        self._light_box: tuple | None = None
        # the casters at rest, drawn once (_shadow_pass): the body ids seen (sorted), the
        # model matrix each was last seen to move to and the frame it got there (_track_still)
        self._frame = 0
        self._seen = (np.zeros(0, np.int64), np.zeros((0, 16), np.float32),
                      np.zeros(0, np.int64))
        # the still layer's map, and what it holds: (light_vp bytes, member ids sorted, the
        # frame each came to rest, the serial of the level each was drawn with); None: nothing
        self._layer_map: moderngl.Texture | None = None
        self._layer_fbo: moderngl.Framebuffer | None = None
        self._layer_used = 0  # texels per side of the layer's corner not all empty
        self._layer: tuple | None = None
        self._last_light: bytes | None = None  # the light's box of the last frame (light_vp)
        # this frame's use of the layer ("all" casters drawn, "keep" it, "build" it first) and
        # what a build will hold
        self._layer_plan: tuple[str, tuple | None] = ("all", None)
        self.gizmos = Gizmos(ctx)
        # id(shape) → (shape, levels on the GPU, their face counts, whether they are only the
        # first level drawn while the real ones are prepared)
        self._meshes: dict[int, tuple[Shape, list[_GpuMesh], np.ndarray, bool]] = {}
        self._pending: dict[int, tuple[Shape, Future, Future]] = {}
        self._worker: ThreadPoolExecutor | None = None

    # ---- meshes ---------------------------------------------------------------------------

    def mesh(self, shape: Shape) -> tuple[list[_GpuMesh], np.ndarray] | None:
        """(the uploaded levels of ``shape``, their face counts), or None while nothing of a
        large Shape is ready to draw. A large Shape is prepared on the worker thread in two
        stages: first one coarse level (``prepare_first_level``), drawn as soon as it exists,
        then its real levels, which replace it."""
        entry = self._meshes.get(id(shape))
        if entry is not None and not entry[3]:
            return entry[1], entry[2]
        with _prepared_lock:
            arrays = _prepared.get(shape)
            first = _first_levels.get(shape)
        if arrays is None:
            if len(shape.faces) <= PREPARE_INLINE_FACES:
                arrays = prepare_mesh(shape)
            else:
                self._prepare_later(shape)
                if entry is not None:
                    return entry[1], entry[2]
                if first is None:
                    return None
                self._upload(shape, first, provisional=True)
                log.info("drawing %s with a first level of %d faces while its levels of "
                         "detail are prepared", shape.name, len(first.levels[0][1]))
                return self._meshes[id(shape)][1], self._meshes[id(shape)][2]
        self._pending.pop(id(shape), None)
        if entry is not None:
            self._release_mesh(id(shape))
            log.info("drawing %s with its levels of detail (%s faces)", shape.name,
                     ", ".join(f"{n:,}" for n in arrays.face_counts))
        self._upload(shape, arrays, provisional=False)
        return self._meshes[id(shape)][1], self._meshes[id(shape)][2]

    def _upload(self, shape: Shape, arrays: MeshArrays, provisional: bool) -> None:
        levels = [_GpuMesh(self.ctx, level, arrays.two_sided, self.body_prog, self.depth_prog)
                  for level in arrays.levels]
        self._meshes[id(shape)] = (shape, levels, arrays.face_counts, provisional)

    def _release_mesh(self, key: int) -> None:
        for level in self._meshes.pop(key)[1]:
            level.release()

    @property
    def uploaded(self) -> tuple[Shape, ...]:
        """The Shapes whose meshes are on the GPU now (a first level or their real ones)."""
        return tuple(entry[0] for entry in self._meshes.values())

    @property
    def drawn_faces(self) -> dict[str, list[int]]:
        """Shape name → faces of each level on the GPU now, finest first (a single coarse
        level while a big mesh's levels of detail are prepared)."""
        return {entry[0].name: [int(n) for n in entry[2]] for entry in self._meshes.values()}

    def _prepare_later(self, shape: Shape) -> None:
        if id(shape) in self._pending:
            return
        if self._worker is None:
            self._worker = ThreadPoolExecutor(1, thread_name_prefix="tumble-mesh")
        # one worker, in this order: the first level is ready long before the rest
        self._pending[id(shape)] = (shape, self._worker.submit(prepare_first_level, shape),
                                    self._worker.submit(prepare_mesh, shape))

    def release_unused(self, shapes_in_use) -> None:
        """Free the GPU meshes of every Shape not in ``shapes_in_use`` (an iterable of Shapes)."""
        keep = {id(s) for s in shapes_in_use}
        for key in [k for k in self._meshes if k not in keep]:
            self._release_mesh(key)
        for key in [k for k in self._pending if k not in keep]:
            for future in self._pending.pop(key)[1:]:
                future.cancel()

    def release(self) -> None:
        """Free every GL object (call before the context goes away)."""
        self.release_unused(())
        self._drop_background()
        if self._worker is not None:
            self._worker.shutdown(wait=False, cancel_futures=True)
        self.gizmos.release()
        for obj in (self.sky_vao, self.floor_vao, self.far_floor_vao, self.floor_depth_vao,
                    self.open_sky_vao, self.open_floor_vao, self.open_sky_prog,
                    self.open_floor_prog,
                    self.floor_depth_prog, self._floor_vbo, self._far_floor_vbo,
                    self.shadow_fbo, self.shadow_map, self.body_prog, self.depth_prog,
                    self.sky_prog, self.floor_prog, self.far_floor_prog):
            obj.release()
        if self._layer_map is not None:
            self._layer_fbo.release()
            self._layer_map.release()

    # ---- frame ----------------------------------------------------------------------------

    def render(self, view: FrameView, camera: OrbitCamera, size: tuple[int, int],
               gizmos: GizmoOptions | None = None, fbo: moderngl.Framebuffer | None = None):
        """Draw the whole 3D scene of ``view`` seen by ``camera`` into ``fbo`` (default: the
        screen) over its ``size`` = (width, height) pixels, with the ``gizmos`` chosen."""
        ctx = self.ctx
        width, height = size
        light_vp, texel, shadows, texels = self._light_space(view, camera, height)
        groups = self._upload_instances(view, camera, height, light_vp)
        casting = self.shadows and bool(groups)
        target = fbo if fbo is not None else ctx.screen
        vp = camera.view_projection(width / height)
        frame = {"u_vp": vp, "u_eye": camera.eye, **LIGHTING,
                 "u_container": _container_uniform(view.container_size),
                 "u_wall_color": WALL_DISPLAY_COLOR,
                 "u_floor_depth": floor_depth(camera, size),
                 "u_light_vp": light_vp, "u_shadow_texel": texel,
                 "u_shadows": int(casting), "u_shadow_map": 0}
        # shadow taps are the floor's main cost per pixel, so only the rectangles where shadows
        # can fall (each caster's, a fifth of their bounding box's area in the benchmark) have
        # them; the rest of the floor is drawn without
        fog_start = 12.0 + 1.5 * camera.distance
        floor = dict(u_floor_color=FLOOR_COLOR, u_horizon=HORIZON,
                     u_fog=(fog_start, fog_start + 0.4 * FLOOR_HALF_SIZE))
        background = self._cached_background(camera, size, frame, floor)
        on_screen = target is ctx.screen
        if background is not None:
            # the unshadowed floor and sky, colour and depth (what lies under the floor stays
            # hidden), as copied pixels — before the shadow pass: llvmpipe's copy waits for
            # every pending draw, here only for the last frame's. The window's depth buffer
            # has a format of its own (and a stencil), which a copy cannot fill: there the
            # colour alone, the depth drawn below
            _copy_frame(target, background, size, depth=not on_screen)
            if on_screen:
                gl_library().glClear(GL_DEPTH_BUFFER_BIT)
        if casting:
            self._shadow_pass(groups, light_vp, texels)
        else:
            self._shadow_key = None
        target.use()
        ctx.viewport = (0, 0, width, height)
        if background is None:
            ctx.clear(0.0, 0.0, 0.0, 1.0, depth=1.0)
        self.shadow_map.use(0)
        if casting:
            # grown by the reach of the soft edge (the lookups' spread and the normal offset,
            # ≤ 3 texels in the light's view), stretched like the shadows on the floor
            margin = 4.0 * texel / LIGHT_DIR[1]
            quads = _floor_quads(_disjoint_cover(shadows + (-margin, -margin, margin, margin)))
            if quads.nbytes > self._floor_vbo.size:
                self._floor_vbo.orphan(quads.nbytes)
            self._floor_vbo.write(quads)
        if background is not None and on_screen:
            # the floor's depth as _draw_far_floor_and_sky makes it, with a shader that does
            # not shade; the window's framebuffer takes no
            # colour mask (binding it with one is GL_INVALID_OPERATION, which pyglet raises at
            # close), so blending keeps the colour (0·src + 1·dst)
            ctx.enable(moderngl.BLEND | moderngl.DEPTH_TEST)
            ctx.blend_func = moderngl.ZERO, moderngl.ONE
            ctx.depth_func = "<"
            set_uniforms(self.floor_depth_prog, frame)
            self.floor_depth_vao.render(moderngl.TRIANGLES)
            ctx.disable(moderngl.BLEND)

        # opaque front to back-ish: bodies and gizmos first, so the floor and the background
        # (the costly full-screen shaders on llvmpipe) skip the pixels they cover
        ctx.enable(moderngl.DEPTH_TEST)
        ctx.disable(moderngl.BLEND)
        ctx.depth_func = "<"
        set_uniforms(self.body_prog, frame, u_highlight_color=HIGHLIGHT_COLOR)
        for gpu, instances, _ in groups:
            self._cull_for(gpu)
            draw_indexed_triangles(gpu.vaos[0], len(instances))
        ctx.disable(moderngl.CULL_FACE)

        options = gizmos if gizmos is not None else GizmoOptions()
        self.gizmos.update(view, camera, size, options)
        self.gizmos.draw_opaque(frame)

        if casting:
            ctx.polygon_offset = SHADOWED_FLOOR_OFFSET
            set_uniforms(self.floor_prog, frame, **floor)
            self.floor_vao.render(moderngl.TRIANGLES, vertices=len(quads))
            ctx.polygon_offset = (0.0, 0.0)
        if background is None:
            self._draw_far_floor_and_sky(frame, floor, vp, size)

        self.gizmos.draw_translucent(frame)
        ctx.disable(moderngl.CULL_FACE | moderngl.BLEND)
        ctx.fbo.depth_mask = True

    def _draw_far_floor_and_sky(self, frame: dict, floor: dict, vp: np.ndarray,
                                size: tuple[int, int]) -> None:
        """The whole floor unshadowed where nothing nearer covers it (the shadow rectangles
        included: SHADOWED_FLOOR_OFFSET), then the background gradient at the far plane where
        nothing covers it. Drawn the same with or without the background
        cache, so that its depth is the same to the bit: a body touching the floor shows the
        same pixels either way.

        Both are full-screen: only inside the container's rectangle on screen (``_wall_pixels``)
        do they test their view rays against the walls; around it (up to four rectangles) they
        are drawn by variants without the test (NO_WALLS), which it would leave unchanged."""
        ctx = self.ctx
        sky = dict(u_inverse_vp=np.linalg.inv(vp.astype(np.float64)),
                   **{k: np.power(v, 1.0 / 2.2) for k, v in
                      (("u_zenith", ZENITH), ("u_horizon", HORIZON), ("u_nadir", NADIR))})
        walled = (self.far_floor_prog, self.far_floor_vao, self.sky_prog, self.sky_vao)
        open_ = (self.open_floor_prog, self.open_floor_vao, self.open_sky_prog,
                 self.open_sky_vao)
        inside = _wall_pixels(frame["u_container"], vp, size)
        if inside is None:
            parts = [(open_, None)]
        elif inside == (0, 0, *size):
            parts = [(walled, None)]
        else:
            parts = [(walled, inside)] + [(open_, rect) for rect in _around(inside, size)]
        for (floor_prog, floor_vao, sky_prog, sky_vao), rect in parts:
            ctx.scissor = rect
            set_uniforms(floor_prog, frame, **floor)
            floor_vao.render(moderngl.TRIANGLES)
            ctx.depth_func = "<="  # the background lies on the far plane (depth 1 = clear)
            set_uniforms(sky_prog, frame, **sky)
            sky_vao.render(moderngl.TRIANGLES, vertices=3)
            ctx.depth_func = "<"
        ctx.scissor = None

    def _cached_background(self, camera: OrbitCamera, size: tuple[int, int], frame: dict,
                           floor: dict) -> moderngl.Framebuffer | None:
        """The image of the whole unshadowed floor and the sky for this camera pose and size,
        with its depth (drawn now if they changed), or None when not caching."""
        if not self.cache_background:
            return None
        key = np.concatenate([frame["u_vp"].ravel(), camera.eye, size,
                              frame["u_container"]]).tobytes()  # the walls tint it
        if self._background is not None and self._background[0] == key:
            return self._background[1]
        self._drop_background()
        ctx = self.ctx
        image = ctx.framebuffer(ctx.renderbuffer(size), ctx.depth_renderbuffer(size))
        image.use()
        ctx.viewport = (0, 0, *size)
        ctx.clear(0.0, 0.0, 0.0, 1.0, depth=1.0)
        ctx.enable(moderngl.DEPTH_TEST)
        ctx.disable(moderngl.BLEND | moderngl.CULL_FACE)
        ctx.depth_func = "<"
        self._draw_far_floor_and_sky(frame, floor, frame["u_vp"], size)
        self._background = (key, image)
        return image

    def _drop_background(self) -> None:
        if self._background is not None:
            image = self._background[1]
            for obj in (*image.color_attachments, image.depth_attachment, image):
                obj.release()
            self._background = None

    def _upload_instances(self, view: FrameView, camera: OrbitCamera, height: int,
                          light_vp: np.ndarray) -> list[tuple[_GpuMesh, np.ndarray, int]]:
        """Write the instance buffers of each (Shape, level of detail) in view;
        [(mesh level, its instances (k, INSTANCE_FLOATS) float32, how many of them the shadow
        pass draws: the first, those not in the shadow map's still layer)] of those ready to
        draw. Plans the layer's use for ``light_vp`` (``_plan_layer``)."""
        n = view.count
        self._layer_plan = ("all", None)
        if n == 0:
            return []
        data = np.zeros((n, _GpuMesh.INSTANCE_FLOATS), dtype=np.float32)
        model = data[:, :16].reshape(n, 4, 4)
        # pyrr row-vector layout: p_world = p_body @ M with M[:3,:3] = Rᵀ, M[3,:3] = COM
        model[:, :3, :3] = np.swapaxes(quat_to_matrix(np.asarray(view.quat, dtype=float)), 1, 2)
        model[:, 3, :3] = view.pos
        model[:, 3, 3] = 1.0
        data[:, 16:19] = view.color
        if 0 <= view.selected < n:
            data[view.selected, 19] = 1.0
        # level of detail: a body of radius R covers ~π (R/pixel)² px, half its faces face the
        # camera; take the coarsest level whose triangles stay ≤ PIXELS_PER_TRIANGLE px
        radius = shape_table(view.shapes)[0]
        depth = np.maximum((np.asarray(view.pos, dtype=float) - camera.eye) @ -camera.back,
                           camera.clip_range()[0])
        pixels = radius / camera.world_per_pixel(depth, height)
        budget = 2.0 * math.pi * pixels ** 2 / PIXELS_PER_TRIANGLE  # faces worth drawing
        ids = np.asarray(view.ids, dtype=np.int64)
        still, since = self._track_still(ids, data[:, :16])
        chosen = []
        serial = np.zeros(n, dtype=np.int64)  # of the level each row is drawn with, 0: none
        for shape, rows in _rows_by_shape(view.shapes):
            mesh = self.mesh(shape)
            if mesh is None:
                continue
            levels, faces = mesh
            # the finest level first whose face count fits the budget, else the coarsest
            fits = faces[None, :] <= budget[rows, None]
            level = np.where(fits.any(axis=1), fits.argmax(axis=1), len(faces) - 1)
            for index in sorted(set(level.tolist())):
                gpu, picked = levels[index], rows[level == index]
                serial[picked] = gpu.serial
                chosen.append((gpu, picked))
        layered = np.zeros(n, dtype=bool)
        if self.shadows:
            layered = self._plan_layer(ids, serial, still & (serial > 0), since, light_vp)
        groups = []
        for gpu, picked in chosen:
            # the casters the shadow pass draws each frame first, the still layer's after
            picked = picked[np.argsort(layered[picked], kind="stable")]
            instances = data[picked]
            gpu.reserve(len(instances))
            gpu.instances.write(instances)
            groups.append((gpu, instances, int(np.count_nonzero(~layered[picked]))))
        return groups

    def _track_still(self, ids: np.ndarray, model: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(still (n,) bool, since (n,) int64) for this frame's bodies, ``ids`` (n,) with
        their model matrices (n, 16): since which frame each has stayed within
        ``STILL_TOLERANCE`` of where it was then, and whether that is ``STILL_FRAMES`` or
        more. Bodies asleep, static or paused are still; a body is compared with the pose it
        came to rest at, so one creeping slowly does not stay still."""
        self._frame += 1
        seen_ids, seen_model, seen_since = self._seen
        since = np.full(len(ids), self._frame, dtype=np.int64)
        reference = np.array(model, dtype=np.float32)
        if len(seen_ids) and len(ids):
            at = np.minimum(np.searchsorted(seen_ids, ids), len(seen_ids) - 1)
            close = seen_ids[at] == ids
            close[close] = (np.abs(reference[close] - seen_model[at[close]]).max(axis=1)
                            <= STILL_TOLERANCE)
            since[close] = seen_since[at[close]]
            reference[close] = seen_model[at[close]]
        order = np.argsort(ids)
        self._seen = (ids[order], reference[order], since[order])
        return self._frame - since >= STILL_FRAMES, since

    def _plan_layer(self, ids: np.ndarray, serial: np.ndarray, still: np.ndarray,
                    since: np.ndarray, light_vp: np.ndarray) -> np.ndarray:
        """Which of this frame's casters (``ids`` (n,), the ``serial`` of the level each is
        drawn with, ``still`` and ``since`` from ``_track_still``) the shadow pass takes from
        the still layer rather than drawing them: (n,) bool. Sets ``_layer_plan``.

        The layer as it is serves while the light's box (``light_vp``) is the same and every
        body in it is there, unmoved and drawn with the same level; it is drawn again (with
        every still body) when bodies that came to rest since are ``STILL_REBUILD`` of it, or
        when it cannot serve and the same still bodies and box were there last frame too (an
        orbiting camera or a moving pile changes the box every frame: then every caster is
        drawn, as without a layer)."""
        light = light_vp.tobytes()
        stable, self._last_light = light == self._last_light, light
        if self._layer is not None and self._layer[0] == light:
            layer_ids, layer_since, layer_serial = self._layer[1:]
            at = np.minimum(np.searchsorted(layer_ids, ids), len(layer_ids) - 1)
            member = ((layer_ids[at] == ids) & (layer_since[at] == since)
                      & (layer_serial[at] == serial))
            if np.count_nonzero(member) == len(layer_ids):
                newly = np.count_nonzero(still & ~member)
                if newly < max(1.0, STILL_REBUILD * len(layer_ids)):
                    self._layer_plan = ("keep", None)
                    return member
                return self._plan_build(light, ids, serial, still, since)
        if stable and np.count_nonzero(still) >= STILL_LAYER_MIN:
            return self._plan_build(light, ids, serial, still, since)
        return np.zeros(len(ids), dtype=bool)

    def _plan_build(self, light: bytes, ids: np.ndarray, serial: np.ndarray,
                    still: np.ndarray, since: np.ndarray) -> np.ndarray:
        order = np.argsort(ids[still])
        self._layer_plan = ("build", (light, ids[still][order], since[still][order],
                                      serial[still][order]))
        return still

    def _light_space(self, view: FrameView, camera: OrbitCamera,
                     height: int) -> tuple[np.ndarray, float, np.ndarray, int]:
        """(light view-projection (4, 4) float32, world size of a shadow texel in m, (k, 4)
        rectangles x min, z min, x max, z max in m on the floor where each body's shadow can
        fall, texels per side of the map used): an orthographic box around the bodies and
        their shadows on the floor (only casters need texels; receivers outside read the map's
        empty border), as tight as they are across the light.

        The box is drawn into a corner of the map with texels ``SHADOW_TEXEL_PIXELS`` wide on
        the ``camera``'s viewport ``height`` px tall at the nearest of those points: finer
        would hardly show through the soft edge, and every texel costs the shadow pass its
        clear and its fill."""
        points = [np.zeros((1, 3))]
        shadows = np.zeros((0, 4))
        if view.count:
            radius = shape_table(view.shapes)[0][:, None]
            pos = np.asarray(view.pos, dtype=float)
            shadow = pos - LIGHT_DIR * (np.maximum(pos[:, 1:2], 0.0) / LIGHT_DIR[1])
            # a sphere's shadow on the floor is stretched by 1/cos of the light's slant
            spread = radius / LIGHT_DIR[1]
            points += [pos - radius, pos + radius, shadow - spread, shadow + spread]
            shadows = np.hstack([shadow[:, [0, 2]] - spread, shadow[:, [0, 2]] + spread])
        points = np.concatenate(points)
        look = look_at(LIGHT_DIR, np.zeros(3), np.array([0.0, 1.0, 0.0]))
        across = points @ look[:3, :3]  # along the light's right, up and back axes, m
        low, high = across.min(0), across.max(0)
        # sizes rounded up (half-width to a power of 1.1, texels to SHADOW_STEP) and the centre
        # snapped to whole texels: the map only changes in steps, so shadow edges stay still
        # while bodies move
        half = 1.1 ** math.ceil(math.log(0.5 * (high - low)[:2].max() * 1.02 + 0.05, 1.1))
        reach = 0.5 * np.linalg.norm(high - low) * 1.02 + 0.05  # depth: the whole box's
        size = self.shadow_map.width
        nearest = max(float(((points - camera.eye) @ -camera.back).min()),
                      camera.clip_range()[0])
        per_pixel = SHADOW_TEXEL_PIXELS * camera.world_per_pixel(nearest, height)

        def texels_for(half: float) -> int:
            return int(min(size, SHADOW_STEP * math.ceil(2.0 * half / per_pixel / SHADOW_STEP)))

        # the last frame's box, if the camera has not moved since, while it still holds the
        # points as the fit would (with the fit's margin) and is at most two sizes larger, with
        # as many texels as it would get: a box that does not change keeps the still layer
        # (_plan_layer) and the shadows still
        seen_from = np.concatenate([camera.target, [camera.yaw, camera.pitch,
                                                    camera.distance, camera.fov_y, height]])
        kept = self._light_box
        if kept is not None:
            kept_half, kept_centre, kept_texels, kept_reach, kept_from = kept
            margin = 0.01 * (high - low) + 0.05
            if (np.array_equal(seen_from, kept_from)
                    and half <= kept_half <= 1.1 ** 2 * half and reach <= kept_reach <= 1.5 * reach
                    and texels_for(kept_half) <= kept_texels
                    <= texels_for(kept_half) + SHADOW_STEP
                    and np.all(low[:2] - margin[:2] >= kept_centre[:2] - kept_half)
                    and np.all(high[:2] + margin[:2] <= kept_centre[:2] + kept_half)
                    and np.all(np.abs(across[:, 2] - kept_centre[2]) <= kept_reach)):
                half, reach, texels = kept_half, kept_reach, kept_texels
                centre_light = kept_centre
            else:
                kept = None
        if kept is None:
            texels = texels_for(half)
            texel = 2.0 * half / texels
            centre_light = np.round(0.5 * (low + high) / texel) * texel
        self._light_box = (half, centre_light, texels, reach, seen_from)
        texel = 2.0 * half / texels
        centre = look[:3, :3] @ centre_light  # the look-at rotation is orthonormal
        eye = centre + LIGHT_DIR * 2.0 * reach
        light_view = look_at(eye, centre, np.array([0.0, 1.0, 0.0]))
        proj = matrix44.create_orthogonal_projection(-half, half, -half, half, 0.0, 4.0 * reach)
        corner = np.eye(4)  # light clip space x, y ∈ ±1 → the corner's texels
        corner[0, 0] = corner[1, 1] = texels / size
        corner[3, :2] = texels / size - 1.0
        return (light_view @ proj @ corner).astype(np.float32), texel, shadows, texels

    def _shadow_pass(self, groups, light_vp: np.ndarray, texels: int) -> bool:
        """Draw the casters into the corner of ``texels`` per side of the shadow map —
        unless the map already holds exactly these casters (same meshes, levels, instances and
        light), as when everything rests: the camera may move, the map depends on the bodies
        alone (and the corner's size, in the light's matrix). True if it drew.

        Casters at rest come from the still layer (``_plan_layer``): a map of their own, drawn
        when it changes and copied here (llvmpipe copies the memory); only the others are
        drawn over the copy, with the same depth test, so the map holds the same depths as if
        every caster were drawn."""
        key = hashlib.blake2b(light_vp.tobytes(), digest_size=16)
        for gpu, instances, _ in groups:
            key.update(np.array([gpu.serial], dtype=np.int64).tobytes())
            key.update(instances.tobytes())
        if key.digest() == self._shadow_key:
            return False
        self._shadow_key = key.digest()
        ctx = self.ctx
        size = self.shadow_map.width
        # the rest of the map stays empty, for receivers beyond the corner (a few texels
        # past its edge, where the soft edge's lookups reach)
        used = min(size, texels + 8)
        cleared = max(used, self._shadow_used)
        ctx.viewport = (0, 0, size, size)
        ctx.enable(moderngl.DEPTH_TEST)
        ctx.disable(moderngl.BLEND)
        ctx.depth_func = "<"
        # slope-scaled offset on the casters; the receivers add a normal offset (shadow.glsl)
        ctx.polygon_offset = (1.5, 2.0)
        set_uniforms(self.depth_prog, {"u_light_vp": light_vp})
        plan, layer = self._layer_plan
        if plan == "build":
            self._draw_layer(groups, layer, used)
        if plan == "all":
            self.shadow_fbo.use()
            self.shadow_fbo.clear(depth=1.0, viewport=(0, 0, cleared, cleared))
        else:
            # the layer is empty beyond its corner, which is this frame's (same light)
            gl = gl_library()
            gl.glBindFramebuffer(GL_READ_FRAMEBUFFER, self._layer_fbo.glo)
            gl.glBindFramebuffer(GL_DRAW_FRAMEBUFFER, self.shadow_fbo.glo)
            gl.glBlitFramebuffer(0, 0, cleared, cleared, 0, 0, cleared, cleared,
                                 GL_DEPTH_BUFFER_BIT, GL_NEAREST)
            self.shadow_fbo.use()  # moderngl's own binding, which the calls above went around
        self._shadow_used = used
        for gpu, instances, moving in groups:
            if moving:
                self._cull_for(gpu)
                draw_indexed_triangles(gpu.vaos[1], moving)
        ctx.disable(moderngl.CULL_FACE)
        ctx.polygon_offset = (0.0, 0.0)
        return True

    def _cull_for(self, gpu: _GpuMesh) -> None:
        """Back faces culled for a closed mesh level, drawn for an open (two-sided) one: a
        closed body's faces turned away from the eye, or the light, lie behind its front ones
        (in the shadow pass, which is fill-bound here, culling them stores the same depths for
        half the fragments)."""
        if gpu.two_sided:
            self.ctx.disable(moderngl.CULL_FACE)
        else:
            self.ctx.enable(moderngl.CULL_FACE)

    def _draw_layer(self, groups, layer: tuple, used: int) -> None:
        """Draw the still layer's casters (each group's instances after those drawn every
        frame) into the layer's map, and keep what it now holds (``layer``, from
        ``_plan_layer``). The shadow pass's state (depth test, offset, program) is set."""
        if self._layer_map is None:
            size = self.shadow_map.width
            self._layer_map = self.ctx.depth_texture((size, size))
            self._layer_fbo = self.ctx.framebuffer(depth_attachment=self._layer_map)
            self._layer_fbo.clear(depth=1.0)  # cleared whole, then only where it was drawn
            self._layer_used = 0
        self._layer_fbo.use()
        cleared = max(used, self._layer_used)
        self._layer_fbo.clear(depth=1.0, viewport=(0, 0, cleared, cleared))
        self._layer_used = used
        for gpu, instances, moving in groups:
            if moving < len(instances):
                self._cull_for(gpu)
                gpu.draw_still(instances[moving:])
        self._layer = layer


class OffscreenTarget:
    """An offscreen framebuffer to render into (multisampled when ``samples`` > 0) and read
    back, for tests, screenshots and recording. ``fbo`` is what ``Renderer.render`` draws into;
    ``read()`` resolves the samples and returns the pixels (height, width, 3) uint8, top row
    first (image order)."""

    def __init__(self, ctx: moderngl.Context, size: tuple[int, int], samples: int = 0):
        self.ctx, self.size = ctx, tuple(size)
        self.fbo = ctx.framebuffer(ctx.renderbuffer(self.size, samples=samples),
                                   ctx.depth_renderbuffer(self.size, samples=samples))
        self._resolved = (ctx.framebuffer(ctx.renderbuffer(self.size)) if samples else None)

    def read(self) -> np.ndarray:
        source = self.fbo
        if self._resolved is not None:
            self.ctx.copy_framebuffer(self._resolved, self.fbo)
            source = self._resolved
        width, height = self.size
        pixels = np.frombuffer(source.read(components=3), dtype=np.uint8)
        return pixels.reshape(height, width, 3)[::-1].copy()

    def release(self) -> None:
        for fbo in (self.fbo, self._resolved):
            if fbo is not None:
                for attachment in (*fbo.color_attachments, fbo.depth_attachment):
                    if attachment is not None:
                        attachment.release()
                fbo.release()
