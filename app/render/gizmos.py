"""Gizmos: angular momentum L, angular velocity ω, principal axes, inertia ellipsoid, polhode
trail, centre-of-mass marker, contacts, velocity, collision hulls and joints — as lit,
depth-tested 3D shapes.

Every gizmo is an instance of a few unit meshes (cylinder, cone, two spheres) drawn with
``gizmo.*.glsl``: arrows are a cylinder shaft plus a cone head, so a frame of gizmos for any
number of bodies costs a handful of draw calls. The polhode trails are lines (``line.*.glsl``).
The container's 12 edges are drawn here too, as thin tubes (part of the walls, always on).

Arrow lengths (the mapping behind ``GizmoOptions.arrow_scale``, per body of radius R — the
largest distance of its hull from the centre of mass — and mean principal moment Ī):

- ω: ``length = arrow_scale · R · |ω| / ω_ref`` with ``ω_ref = 2 rad/s``: a body turning at
  2 rad/s gets an arrow as long as its own radius, whatever its size (arrows start at the COM,
  inside the body, so typical spins of 3–10 rad/s show 1.5–5 R of arrow outside it);
- L: ``length = arrow_scale · R · |L| / (Ī · ω_ref)`` — the same normalisation, so L = Iω
  and ω have equal arrows for a sphere, and about a principal axis k the L arrow is I_k/Ī
  times the ω arrow (longer about the major axis). Length ∝ |L| per body over time, so a
  torque-free body's arrow keeps its length while the body tumbles;
- velocity: ``length = arrow_scale · |v| · 0.1 s`` (where the COM will be in 0.1 s).

Arrow thickness follows the body (2.5 % of R) but never drops below ``MIN_PIXELS`` pixels at
the arrow's distance from the camera, so arrows stay readable at any zoom. The principal-axis
triad (red, green, blue = axes of I1 ≤ I2 ≤ I3; right-handed, as the principal frame is) is
1.35 R long; Poinsot's inertia ellipsoid has semi-axes ∝ 1/√I_k, scaled so the longest (along
axis 1) is 1.25 R. The polhode trail is drawn as 2.5 px wide lines fading with age. Contact
normals are arrows one median body radius long from pink contact dots; the centre-of-mass
marker is a white ball drawn on top (the COM is inside the body). Collision hulls (what the
physics collides: the convex hull of a mesh, or an exact sphere, drawn as three great circles)
are violet wireframes of thin tubes, so a non-convex mesh colliding as its hull surprises nobody;
a body colliding as convex pieces shows each piece's edges in a colour of its own.

Joints (``GizmoOptions.joints``, from ``FrameView.joints``) are lime, a colour no other gizmo
uses; sizes follow the joint's first body (radius R, mass m), or its second when the first is
not shown; a joint with neither body shown is not drawn:

- anchors: a dot at A's point of the joint, and one at B's where the two stand apart (a
  distance joint, a joint pulled open), drawn on top like the centre-of-mass marker (an anchor
  is often inside or on a body);
- links: a thin tube from each shown body's centre of mass to its anchor, the lever arm; a
  distance joint's rod or rope from A's centre to B's point (thicker when min = max, a rigid
  rod; a rope or spring is the thin one);
- hinge: its axis through the anchor, a tube behind and an arrow ahead (θ is right-handed
  about the arrow), and with limits an arc about the anchor in the plane ⟂ the axis from the
  lower limit to the upper, with thin spokes to its ends: where A's centre of mass would be at
  each angle with B held where it is (``hinge_arc``), so a pendulum's arc spans its swing;
- prismatic: a rail along the axis, likewise in B's frame: where A's anchor may slide with B
  held (B's point − axis·s, s from lo to hi), discs at the stops; unlimited, it reaches one R
  past both anchors;
- the reaction force on A at its anchor, an orange arrow of ``length = arrow_scale · R · |F| /
  (m · 9.81 m/s²)``: one body radius per body weight, so a pendulum hanging at rest shows an
  arrow one bob radius long, pointing up.

The selected joint is drawn lighter and 1.7 times as thick.
"""

from __future__ import annotations

import math
import weakref

import moderngl
import numpy as np

from app.render.camera import OrbitCamera
from app.render.view import FrameView, GizmoOptions
from app.resources import load_program
from physics.geometry.meshes import Shape
from physics.geometry.polytope import polytope
from physics.geometry.rotation import quat_to_matrix

OMEGA_REF = 2.0             # rad/s ↔ an arrow of one body radius
VELOCITY_TIME = 0.1         # s: the velocity arrow shows 0.1 s of travel
ARROW_RADIUS = 0.025        # × body radius
TRIAD_LENGTH = 1.35         # × body radius
MIN_PIXELS = 1.6            # smallest arrow radius on screen, px (≈ 3 px thick)
LINE_PIXELS = 2.5           # polhode line width, px
LINE_STEP = 3.0             # polhode points closer than this on screen, px, are merged
ELLIPSOID_SIZE = 1.25       # × body radius: the inertia ellipsoid's longest semi-axis
HEAD_LENGTH, HEAD_RADIUS = 4.5, 2.4  # cone size in shaft radii

L_COLOR = (1.0, 0.72, 0.05, 1.0)        # gold
OMEGA_COLOR = (0.1, 0.75, 1.0, 1.0)     # cyan
VELOCITY_COLOR = (0.92, 0.92, 0.92, 1.0)
AXIS_COLORS = ((0.95, 0.12, 0.1, 1.0), (0.15, 0.8, 0.15, 1.0), (0.15, 0.3, 1.0, 1.0))
ELLIPSOID_COLOR = (0.75, 0.8, 1.0, 0.22)
POLHODE_COLOR = OMEGA_COLOR             # the trail of the ω arrow's tip
COM_COLOR = (1.0, 1.0, 1.0, 1.0)
CONTACT_COLOR = (1.0, 0.25, 0.55, 1.0)  # pink: unlike any axis or arrow colour
EDGE_COLOR = (0.75, 0.85, 0.95, 1.0)    # the container's frame
HULL_COLOR = (0.7, 0.35, 1.0, 1.0)      # violet: collision hull wireframes
# the convex pieces of a compound body, each in its own colour (cycled), so neighbours differ
PIECE_COLORS = np.array([(1.0, 0.3, 0.3, 1.0), (0.3, 0.9, 0.3, 1.0), (0.3, 0.5, 1.0, 1.0),
                         (1.0, 0.85, 0.2, 1.0), (0.2, 0.9, 0.9, 1.0), (1.0, 0.4, 0.9, 1.0)])
BOX_COLOR = (0.2, 0.85, 0.85, 1.0)      # cyan: bounding boxes along the principal axes
JOINT_COLOR = (0.55, 1.0, 0.08, 1.0)    # lime: anchors, links, axes, rails and limit arcs
JOINT_SELECTED_COLOR = (0.78, 1.0, 0.4, 1.0)  # the selected joint: lighter (and thicker)
FORCE_COLOR = (1.0, 0.42, 0.0, 1.0)     # orange: a joint's reaction force on its first body
CIRCLE_SEGMENTS = 32                    # per great circle of a sphere's wireframe
G_REF = 9.81                # m/s²: a force of one body weight ↔ a force arrow of one body radius
ANCHOR_SIZE = 0.09          # × body radius: an anchor dot's radius…
ANCHOR_PIXELS = 3.5         # …but at least this many pixels
LINK_RADIUS = 0.03          # × body radius: links, hinge axes, rails and arcs
HINGE_AXIS = 0.9            # × body radius: a hinge axis reaches this far each side of its anchor
ARC_SEGMENTS = 48           # a hinge limit arc's segments per full turn
SELECTED_WIDEN = 1.7        # the selected joint's tubes and dots are this much thicker

_radius_cache: weakref.WeakKeyDictionary[Shape, float] = weakref.WeakKeyDictionary()
# the corners of the box [−1, 1]³ and its 12 edges (corner pairs differing in one coordinate)
BOX_CORNERS = np.array([[x, y, z] for x in (-1.0, 1.0) for y in (-1.0, 1.0) for z in (-1.0, 1.0)])
BOX_EDGES = np.array([(a, b) for a in range(8) for b in range(a + 1, 8)
                      if bin(a ^ b).count("1") == 1])
_wire_cache: weakref.WeakKeyDictionary[Shape, np.ndarray] = weakref.WeakKeyDictionary()


def hull_wireframe(shape: Shape) -> np.ndarray:
    """(e, 2, 3) segments, body (principal) frame, m: the edges of the shape's collision hull
    (physics/geometry/polytope.py), or three great circles of its collision sphere. Cached per
    Shape."""
    wire = _wire_cache.get(shape)
    if wire is None:
        if shape.radius > 0.0:
            angle = np.linspace(0.0, 2.0 * np.pi, CIRCLE_SEGMENTS + 1)
            ring = np.stack([np.cos(angle), np.sin(angle), np.zeros_like(angle)], 1)
            ring *= shape.radius
            circles = [ring, ring[:, [2, 0, 1]], ring[:, [1, 2, 0]]]
            wire = np.concatenate([np.stack([c[:-1], c[1:]], 1) for c in circles])
        else:
            hull = np.asarray(shape.hull, dtype=float)
            wire = hull[polytope(hull).edge].reshape(-1, 2, 3)
        _wire_cache[shape] = wire
    return wire


_piece_wire_cache: dict[int, tuple[tuple, np.ndarray, np.ndarray]] = {}


def pieces_wireframe(pieces: tuple) -> tuple[np.ndarray, np.ndarray]:
    """((e, 2, 3) segments, body frame, m; (e, 4) RGBA): the edges of each convex piece in its
    own colour (PIECE_COLORS, cycled). Cached per pieces tuple (a record keeps its own)."""
    cached = _piece_wire_cache.get(id(pieces))
    if cached is None or cached[0] is not pieces:
        wires = [np.asarray(p)[polytope(np.asarray(p)).edge].reshape(-1, 2, 3) for p in pieces]
        colors = np.concatenate([np.broadcast_to(PIECE_COLORS[k % len(PIECE_COLORS)],
                                                 (len(w), 4)) for k, w in enumerate(wires)])
        cached = (pieces, np.concatenate(wires), colors)
        _piece_wire_cache[id(pieces)] = cached
    return cached[1], cached[2]


_UNIFORM_TYPES = {"f": np.float32, "i": np.int32, "I": np.uint32, "d": np.float64}


def set_uniforms(program: moderngl.Program, values: dict, **more) -> None:
    """Set the uniforms of ``values`` and ``more`` that ``program`` uses (others are skipped,
    so one dict serves every program). Each value is written as the uniform's own numbers
    (floats, ints), flattened: matrices in the pyrr layout (see render/camera.py).

    A uniform whose bytes did not change since the program last got them is not written: a
    fixed camera's uniforms (a clip, a still window) then cost a byte comparison a frame. The
    renderer's programs get their uniforms from here only, so the bytes kept are what GL
    holds."""
    members = _uniform_members(program)
    for name, value in {**values, **more}.items():
        entry = members.get(name)
        if entry is None:
            continue
        member, dtype = entry
        data = np.asarray(value, dtype=dtype).tobytes()
        if member.extra != data:
            member.write(data)
            member.extra = data


def _uniform_members(program: moderngl.Program) -> dict:
    """name → (Uniform, its numbers' dtype) of the uniforms of ``program``, kept on the
    program (``extra``) after the first call."""
    if program.extra is None:
        program.extra = {name: (member, _UNIFORM_TYPES[member.fmt[-1]])
                         for name in program
                         if isinstance(member := program[name], moderngl.Uniform)}
    return program.extra


def body_radius(shape: Shape) -> float:
    """Largest distance of the shape from its centre of mass, m (cached per Shape)."""
    radius = _radius_cache.get(shape)
    if radius is None:
        points = np.asarray(shape.hull, dtype=float)
        if len(points) == 0:
            points = np.asarray(shape.vertices, dtype=float) - shape.properties.center_of_mass
        radius = max(float(shape.radius), float(np.linalg.norm(points, axis=1).max(initial=0.0)))
        _radius_cache[shape] = radius = radius if radius > 0.0 else 0.1
    return radius


_last_table: list = [None]  # [(shapes tuple, table)]: swapped whole, so any thread may read it


def shape_table(shapes: tuple[Shape, ...]) -> tuple[np.ndarray, np.ndarray]:
    """(radius (n,) m — see ``body_radius`` —, principal moments (n, 3) kg·m²) per body of a
    frame, computed once per distinct Shape (hundreds of bodies share a few Shapes) and
    remembered for the same ``shapes`` tuple (the renderer and the gizmos both ask)."""
    last = _last_table[0]
    if last is not None and last[0] is shapes:
        return last[1]
    keys = np.fromiter((id(s) for s in shapes), dtype=np.int64, count=len(shapes))
    _, first, inverse = np.unique(keys, return_index=True, return_inverse=True)
    unique = [shapes[i] for i in first]
    radius = np.array([body_radius(s) for s in unique]).reshape(-1)[inverse]
    moments = np.array([s.properties.principal_moments for s in unique],
                       dtype=float).reshape(-1, 3)[inverse]
    _last_table[0] = shapes, (radius, moments)
    return radius, moments


def arrow_vectors(view: FrameView, arrow_scale: float) -> dict[str, np.ndarray]:
    """World vectors (n, 3), m, from each COM to the tip of its L, ω and velocity arrows
    (module docstring); keys "angular_momentum", "angular_velocity", "velocity". The window can
    use ``pos + result["angular_velocity"]`` as the polhode (ω-tip) trail points."""
    radius, moments = shape_table(view.shapes)
    mean_moment = moments.mean(axis=1, keepdims=True)
    k = arrow_scale * radius[:, None] / OMEGA_REF
    return {
        "angular_momentum": k * np.asarray(view.ang_mom, dtype=float) / mean_moment,
        "angular_velocity": k * np.asarray(view.omega, dtype=float),
        "velocity": arrow_scale * VELOCITY_TIME * np.asarray(view.vel, dtype=float),
    }


def hinge_arc(view: FrameView, j: int) -> np.ndarray:
    """(s + 1, 3) world points, m, of the limit arc of hinge joint ``j`` of ``view.joints``
    (finite limits, a body shown), from the lower limit to the upper: where A's centre of mass
    would be at the angles lo…hi with B held where it is, on a circle about the anchor in the
    plane ⟂ the axis. The angle θ is B's turn relative to A about the axis, so A at θ' is A now
    turned by −(θ' − θ); with A not shown, B's centre turned by +(θ' − θ). A centre on the axis
    (a wheel) gives no direction: then the body's principal axis most ⟂ the joint axis, at
    1.2 body radii."""
    joints = view.joints
    first, second = int(joints.first_row[j]), int(joints.second_row[j])
    row, sign = (first, -1.0) if first >= 0 else (second, 1.0)
    anchor = np.asarray(joints.anchor_a[j], dtype=float)
    axis = np.asarray(joints.axis[j], dtype=float)
    arm = np.asarray(view.pos[row], dtype=float) - anchor
    arm -= axis * (axis @ arm)
    length = float(np.linalg.norm(arm))
    radius = body_radius(view.shapes[row])
    if length < 0.25 * radius:
        columns = quat_to_matrix(np.asarray(view.quat[row], dtype=float)[None])[0].T
        arm = columns[np.argmin(np.abs(columns @ axis))]
        arm = arm - axis * (axis @ arm)
        arm, length = arm / np.linalg.norm(arm), 1.2 * radius
    else:
        arm /= length
    lo, hi = np.asarray(joints.limits[j], dtype=float)
    count = max(2, int(math.ceil(ARC_SEGMENTS * (hi - lo) / (2.0 * math.pi))))
    turn = sign * (np.linspace(lo, hi, count + 1) - float(joints.coordinate[j]))
    return anchor + length * (np.outer(np.cos(turn), arm)
                              + np.outer(np.sin(turn), np.cross(axis, arm)))


def _basis(direction: np.ndarray) -> np.ndarray:
    """(k, 3, 3) rotations whose y column is the unit ``direction`` (k, 3); right-handed."""
    helper = np.where(np.abs(direction[:, :1]) < 0.9, [[1.0, 0.0, 0.0]], [[0.0, 0.0, 1.0]])
    x = np.cross(direction, helper)
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    return np.stack([x, direction, np.cross(x, direction)], axis=-1)


def _instances(rotation, scale, offset, color) -> np.ndarray:
    """(k, 19) float32 rows: rotation (k,3,3) as a GLSL mat3 (columns first), scale (k,3),
    offset (k,3), colour (k,4)."""
    rows = np.empty((len(offset), 19), dtype=np.float32)
    rows[:, :9] = np.swapaxes(rotation, 1, 2).reshape(-1, 9)
    rows[:, 9:12] = scale
    rows[:, 12:15] = offset
    rows[:, 15:] = color
    return rows


def _cylinder(n: int) -> tuple[np.ndarray, np.ndarray]:
    """The side of a unit cylinder with n segments (radius 1, y 0…1; its ends are hidden in the
    body and under the cone), smooth normals."""
    a = 2.0 * np.pi * np.arange(n) / n
    ring = np.stack([np.cos(a), np.zeros(n), np.sin(a)], axis=1)
    i, j = np.arange(n), (np.arange(n) + 1) % n
    return (np.vstack([np.hstack([ring, ring]), np.hstack([ring + (0.0, 1.0, 0.0), ring])]),
            np.concatenate([np.stack([i, n + j, j], 1), np.stack([i, n + i, n + j], 1)]))


def _cone(n: int) -> tuple[np.ndarray, np.ndarray]:
    """A unit cone with n segments (base radius 1 at y = 0, apex at y = 1) and its base: side
    normals perpendicular to the 45° slant, one apex vertex per segment (normal: the segment's
    middle), a flat base (a fan of n − 2 triangles)."""
    a = 2.0 * np.pi * np.arange(n) / n
    mid = a + np.pi / n
    ring = np.stack([np.cos(a), np.zeros(n), np.sin(a)], axis=1)
    up = np.broadcast_to([0.0, 1.0, 0.0], (n, 3))
    slant = (ring + up) / math.sqrt(2.0)
    apex_normal = np.stack([np.cos(mid), np.ones(n), np.sin(mid)], 1) / math.sqrt(2.0)
    down = np.broadcast_to([0.0, -1.0, 0.0], (n, 3))
    i, j, k = np.arange(n), (np.arange(n) + 1) % n, np.arange(1, n - 1)
    return (np.vstack([np.hstack([ring, slant]), np.hstack([up, apex_normal]),
                       np.hstack([ring, down])]),
            np.concatenate([np.stack([i, n + i, j], 1),
                            np.stack([np.full(n - 2, 2 * n), 2 * n + k, 2 * n + k + 1], 1)]))


def _unit_meshes() -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Indexed unit meshes: name → (vertices (k, 6) float32 position + normal, or (k, 2)
    float32 quad corners, indices (t, 3) uint32). llvmpipe sets up ~2·10⁶ triangles/s on the
    render thread, and 500 bodies with every gizmo are ~4000 arrows and ~1800 balls, so
    triangles are the budget: arrows close enough to be thick are a cylinder and a cone of 8
    segments (smooth normals hide the facets); thin arrows and tubes, balls and ellipsoids are
    impostors of two or three triangles (``arrow.*.glsl``, ``ellipsoid.*.glsl``)."""
    square = np.array([[-1.0, -1.0], [1.0, -1.0], [1.0, 1.0], [-1.0, 1.0]])
    quad = np.array([[0, 1, 2], [0, 2, 3]])  # counter-clockwise: facing the camera
    # an arrow's outline (arrow.vert.glsl): (side, 0 tail / 1 neck of shaft / 2 neck of head /
    # 3 tip)
    outline = np.array([[-1.0, 0.0], [1.0, 0.0], [1.0, 1.0], [-1.0, 1.0], [-1.0, 2.0],
                        [1.0, 2.0], [0.0, 3.0]])
    meshes = {"cylinder": _cylinder(8), "cone": _cone(8), "square": (square, quad),
              "outline": (outline, np.array([[0, 1, 2], [0, 2, 3], [4, 5, 6]])),
              "tube": (outline[:4], quad)}  # an outline without a head
    return {k: (v.astype(np.float32), f.astype(np.uint32)) for k, (v, f) in meshes.items()}


class _Batch:
    """Instances of one unit mesh drawn by one program: a growable per-instance buffer and its
    vertex array. ``corners``: the mesh is an impostor's quad (2 floats a vertex) instead of
    position + normal."""

    def __init__(self, ctx: moderngl.Context, program, vbo, ibo, corners: bool):
        self.ctx, self.program, self.vbo, self.ibo = ctx, program, vbo, ibo
        self.vertex_format = ("2f", "in_corner") if corners else ("3f 3f", "in_position",
                                                                  "in_normal")
        self.capacity, self.count = 0, 0
        self.buffer = self.vao = None

    def write(self, rows: np.ndarray) -> None:
        self.count = len(rows)
        if self.count > self.capacity:
            self.release()
            self.capacity = 1 << (self.count - 1).bit_length()
            self.buffer = self.ctx.buffer(reserve=self.capacity * 19 * 4, dynamic=True)
            self.vao = self.ctx.vertex_array(self.program, [
                (self.vbo, *self.vertex_format),
                (self.buffer, "9f 3f 3f 4f/i", "i_rotation", "i_scale", "i_offset", "i_color"),
            ], index_buffer=self.ibo, index_element_size=4)
        if self.count:
            self.buffer.write(rows)

    def render(self) -> None:
        if self.count:
            self.vao.render(moderngl.TRIANGLES, instances=self.count)

    def release(self) -> None:
        if self.vao is not None:
            self.vao.release()
            self.buffer.release()
            self.buffer = self.vao = None


_BATCHES = {  # instance batch → (program, unit mesh)
    "shafts": ("gizmo", "cylinder"), "heads": ("gizmo", "cone"),
    "thin_arrows": ("arrow", "outline"), "thin_tubes": ("arrow", "tube"),
    "dots": ("ellipsoid", "square"),
    "ellipsoids": ("ellipsoid", "square"), "markers": ("ellipsoid", "square")}
OPAQUE = ("shafts", "heads", "thin_arrows", "thin_tubes", "dots")
THIN_PIXELS = 2.5  # arrows and tubes thinner than this radius on screen are impostors


class Gizmos:
    """Builds and draws the gizmos of a frame; owned by the Renderer, which calls ``update``
    then ``draw_opaque`` (with the bodies) and ``draw_translucent`` (after the floor and
    background; over the walls, which the opaque surfaces tint in: shaders/walls.glsl)."""

    def __init__(self, ctx: moderngl.Context):
        self.ctx = ctx
        self.programs = {name: load_program(ctx, name) for name in ("gizmo", "arrow", "ellipsoid")}
        self.line_program = load_program(ctx, "line")
        self._buffers = []
        meshes = {}
        for name, (vertices, indices) in _unit_meshes().items():
            meshes[name] = (ctx.buffer(vertices), ctx.buffer(indices), vertices.shape[1] == 2)
            self._buffers += meshes[name][:2]
        self.batches = {name: _Batch(ctx, self.programs[program], *meshes[mesh])
                        for name, (program, mesh) in _BATCHES.items()}
        self._lines = ctx.buffer(reserve=4096, dynamic=True)
        self._lines_vao = self._line_vao()
        self._line_count = 0
        self._edges: tuple | None = None  # (container and camera, instances by batch)

    def update(self, view: FrameView, camera: OrbitCamera, size: tuple[int, int],
               options: GizmoOptions) -> None:
        """Build this frame's instances from ``view`` for the gizmos ``options`` turns on."""
        self._size, self._height = tuple(size), size[1]
        self._camera = camera
        parts = {name: [] for name in self.batches}
        parts["arrows"] = []  # (origin, vector, nominal radius, colour) groups, built at once
        if options.only_selected(view.count):
            rows = np.array([view.selected] if 0 <= view.selected < view.count else [], dtype=int)
        else:
            rows = np.arange(view.count)
        if len(rows):
            self._body_gizmos(view, rows, options, parts)
        if options.contacts and len(view.contact_points):
            self._contacts(view, parts)
        if options.collision_hulls and len(rows):
            self._hulls(view, rows, parts)
        if options.bounding_box and len(rows):
            self._bounding_boxes(view, rows, parts)
        if options.joints and view.joints.count:
            self._joints(view, options, parts)
        if view.container_size is not None:
            self._container_edges(np.asarray(view.container_size, dtype=float), parts)
        if parts["arrows"]:
            self._arrows(parts, *(np.concatenate(a) for a in zip(*parts["arrows"])))
        self._write_lines(self._polhode(view, options) if options.polhode else None)
        for name, batch in self.batches.items():
            batch.write(np.concatenate(parts[name]) if parts[name]
                        else np.zeros((0, 19), np.float32))

    # ---- building -----------------------------------------------------------------------------

    def _per_pixel(self, points: np.ndarray) -> np.ndarray:
        """(k,) width of a pixel, m, at ``points`` (k, 3)."""
        cam = self._camera
        depth = np.maximum((points - cam.eye) @ -cam.back, cam.clip_range()[0])
        return cam.world_per_pixel(depth, self._height)

    @staticmethod
    def _thickness(nominal: np.ndarray, per_pixel: np.ndarray) -> np.ndarray:
        """(k,) radius, m: ``nominal`` but at least MIN_PIXELS on screen, where a pixel is
        ``per_pixel`` (k,) m wide (``_per_pixel``)."""
        return np.maximum(nominal, MIN_PIXELS * per_pixel)

    @staticmethod
    def _arrow(parts, origin, vector, nominal_radius, color) -> None:
        """Queue arrows from ``origin`` (k, 3) along ``vector`` (k, 3) with shaft radius
        ``nominal_radius`` (k,) or scalar, m, and one RGBA ``color``."""
        k = len(origin)
        parts["arrows"].append((np.asarray(origin, dtype=float).reshape(k, 3),
                                np.asarray(vector, dtype=float).reshape(k, 3),
                                np.broadcast_to(nominal_radius, (k,)).astype(float),
                                np.broadcast_to(np.asarray(color, dtype=float), (k, 4))))

    def _arrows(self, parts, origin, vector, nominal_radius, color) -> None:
        """Instances of all queued arrows at once; zero vectors are skipped."""
        length = np.sqrt(np.einsum("ij,ij->i", vector, vector))
        keep = length > 1e-9
        if not keep.all():
            origin, vector, length = origin[keep], vector[keep], length[keep]
            nominal_radius, color = nominal_radius[keep], color[keep]
        if not len(length):
            return
        per_pixel = self._per_pixel(origin)
        radius = self._thickness(nominal_radius, per_pixel)
        direction = vector / length[:, None]
        rotation = _basis(direction)
        head = np.minimum(HEAD_LENGTH * radius, 0.45 * length)   # short arrows: smaller head
        head_radius = (HEAD_RADIUS / HEAD_LENGTH) * head
        shaft_radius = np.minimum(radius, head_radius / 1.5)
        thin = radius < THIN_PIXELS * per_pixel
        parts["thin_arrows"].append(_instances(
            rotation[thin], np.stack([shaft_radius[thin], length[thin], head_radius[thin]], 1),
            origin[thin], color[thin]))
        if thin.all():
            return
        thick = ~thin
        rotation, origin, color = rotation[thick], origin[thick], color[thick]
        length, head = length[thick], head[thick]
        head_radius, shaft_radius = head_radius[thick], shaft_radius[thick]
        parts["shafts"].append(_instances(
            rotation, np.stack([shaft_radius, length - head, shaft_radius], 1), origin, color))
        parts["heads"].append(_instances(
            rotation, np.stack([head_radius, head, head_radius], 1),
            origin + direction[thick] * (length - head)[:, None], color))

    def _body_gizmos(self, view: FrameView, rows: np.ndarray, options: GizmoOptions,
                     parts) -> None:
        radius, moments = (a[rows] for a in shape_table(view.shapes))
        pos = np.asarray(view.pos, dtype=float)[rows]
        rotation = quat_to_matrix(np.asarray(view.quat, dtype=float)[rows])  # columns: axes
        vectors = {k: v[rows] for k, v in arrow_vectors(view, options.arrow_scale).items()}
        if options.principal_axes:
            for axis in range(3):
                self._arrow(parts, pos, rotation[:, :, axis] * (TRIAD_LENGTH * radius)[:, None],
                            0.8 * ARROW_RADIUS * radius, AXIS_COLORS[axis])
        if options.angular_momentum:
            self._arrow(parts, pos, vectors["angular_momentum"], ARROW_RADIUS * radius, L_COLOR)
        if options.angular_velocity:
            self._arrow(parts, pos, vectors["angular_velocity"], ARROW_RADIUS * radius,
                        OMEGA_COLOR)
        if options.velocity:
            self._arrow(parts, pos, vectors["velocity"], ARROW_RADIUS * radius, VELOCITY_COLOR)
        if options.inertia_ellipsoid:
            moments = np.maximum(moments, 1e-9 * moments.max(axis=1, keepdims=True) + 1e-300)
            # Poinsot: semi-axes ∝ 1/√I_k; the longest (axis 1, I1 smallest) just outside the
            # body, so the translucent shell shows around it
            semi = ELLIPSOID_SIZE * radius[:, None] * np.sqrt(moments[:, :1] / moments)
            parts["ellipsoids"].append(_instances(rotation, semi, pos, ELLIPSOID_COLOR))
        if options.centre_of_mass:
            marker = self._thickness(0.06 * radius, self._per_pixel(pos)) * 2.5
            parts["markers"].append(_instances(np.broadcast_to(np.eye(3), (len(pos), 3, 3)),
                                               np.repeat(marker[:, None], 3, 1), pos, COM_COLOR))

    def _polhode(self, view: FrameView, options: GizmoOptions) -> np.ndarray | None:
        """(2s, 7) float32 line-segment vertices (position, RGBA) of the ω-tip trails, fading
        from transparent (oldest) to opaque (newest). Screen-space wide lines, not tubes: every
        body's trail is tens of segments, too many triangles for llvmpipe as tubes."""
        ids = list(view.polhode)
        if options.only_selected(view.count):
            selected = int(view.ids[view.selected]) if 0 <= view.selected < view.count else None
            ids = [i for i in ids if i == selected]
        trails = [np.asarray(view.polhode[i], dtype=float).reshape(-1, 3) for i in ids]
        trails = [t for t in trails if len(t) >= 2]
        if not trails:
            return None
        points = np.concatenate(trails)
        lengths = np.array([len(t) for t in trails])
        first = np.cumsum(lengths) - lengths                # index of each trail's oldest point
        age = (np.arange(len(points)) - np.repeat(first, lengths)) / np.repeat(lengths - 1,
                                                                                lengths)
        # keep a point per LINE_STEP pixels along each trail (plus both ends): hundreds of
        # trails of a far-away crowd collapse to a few segments each
        xy = self._camera.project(points, *self._size)[:, :2]
        step = np.linalg.norm(np.diff(xy, axis=0), axis=1)
        along = np.concatenate([[0.0], np.cumsum(np.nan_to_num(step, posinf=0.0))])
        along -= np.repeat(along[first], lengths)
        bucket = np.floor(along / LINE_STEP)
        keep = np.ones(len(points), dtype=bool)
        keep[1:] = bucket[1:] != bucket[:-1]
        keep[first] = keep[first + lengths - 1] = True
        points, age = points[keep], age[keep]
        lengths = np.add.reduceat(keep.astype(np.int64), first)
        last = np.cumsum(lengths) - 1                       # index of each trail's newest point
        starts = np.setdiff1d(np.arange(len(points) - 1), last[:-1])
        ends = np.stack([starts, starts + 1], 1).ravel()
        color = np.broadcast_to(POLHODE_COLOR, (len(ends), 4)).copy()
        color[:, 3] = age[ends]
        return np.hstack([points[ends], color]).astype(np.float32)

    def _write_lines(self, vertices: np.ndarray | None) -> None:
        self._line_count = 0 if vertices is None else len(vertices)
        if not self._line_count:
            return
        if vertices.nbytes > self._lines.size:
            self._lines_vao.release()
            self._lines.release()
            self._lines = self.ctx.buffer(reserve=1 << (vertices.nbytes - 1).bit_length(),
                                          dynamic=True)
            self._lines_vao = self._line_vao()
        self._lines.write(vertices)

    def _line_vao(self):
        return self.ctx.vertex_array(self.line_program,
                                     [(self._lines, "3f 4f", "in_position", "in_color")])

    def _contacts(self, view: FrameView, parts) -> None:
        points = np.asarray(view.contact_points, dtype=float)
        normals = np.asarray(view.contact_normals, dtype=float)
        scale = float(np.median(shape_table(view.shapes)[0])) if view.count else 0.2
        dot = self._thickness(0.04 * scale, self._per_pixel(points)) * 1.8
        parts["dots"].append(_instances(np.broadcast_to(np.eye(3), (len(points), 3, 3)),
                                        np.repeat(dot[:, None], 3, 1), points, CONTACT_COLOR))
        self._arrow(parts, points, normals * scale, ARROW_RADIUS * 0.7 * scale,
                    CONTACT_COLOR)

    def _hulls(self, view: FrameView, rows: np.ndarray, parts) -> None:
        """Collision shapes of ``rows`` as wireframes of thin tubes: the hull (violet,
        ``hull_wireframe``) or each convex piece in its own colour (``pieces_wireframe``)."""
        rotation = quat_to_matrix(np.asarray(view.quat, dtype=float)[rows])
        pos = np.asarray(view.pos, dtype=float)[rows]
        wires, colors = [], []
        for row, r, p in zip(rows, rotation, pos):
            if view.pieces and view.pieces[row]:
                wire, color = pieces_wireframe(view.pieces[row])
            else:
                wire = hull_wireframe(view.shapes[row])
                color = np.broadcast_to(HULL_COLOR, (len(wire), 4))
            wires.append(np.einsum("ij,ksj->ksi", r, wire) + p)             # (e, 2, 3) world
            colors.append(color)
        segments, color = np.concatenate(wires), np.concatenate(colors)
        self._tubes(segments[:, 0], segments[:, 1] - segments[:, 0], 0.0015, color, parts)

    def _bounding_boxes(self, view: FrameView, rows: np.ndarray, parts) -> None:
        """Each body's bounding box along its principal axes (``Shape.obb``) as thin tubes: in
        the body frame the box's edges run along x, y and z."""
        rotation = quat_to_matrix(np.asarray(view.quat, dtype=float)[rows])
        pos = np.asarray(view.pos, dtype=float)[rows]
        segments = []
        for row, r, p in zip(rows, rotation, pos):
            shape = view.shapes[row]
            obb = shape.obb
            centre = obb.axes.T @ (obb.centre - shape.properties.center_of_mass)  # body frame
            corners = centre + BOX_CORNERS * obb.half_extents
            segments.append(corners[BOX_EDGES] @ r.T + p)
        segments = np.concatenate(segments)                                 # (12k, 2, 3) world
        self._tubes(segments[:, 0], segments[:, 1] - segments[:, 0], 0.0015, BOX_COLOR, parts)

    def _tubes(self, start, step, nominal_radius, color, parts, widen=1.0) -> None:
        """Thin lit tubes from ``start`` (k, 3) along ``step`` (k, 3), m, at least ~1 px wide;
        ``nominal_radius`` m and ``widen`` (a factor on the radius after that floor) scalars or
        (k,), ``color`` one RGBA or (k, 4)."""
        k = len(start)
        nominal_radius = np.broadcast_to(np.asarray(nominal_radius, dtype=float), (k,))
        widen = np.broadcast_to(np.asarray(widen, dtype=float), (k,))
        color = np.broadcast_to(np.asarray(color, dtype=float), (k, 4))
        length = np.linalg.norm(step, axis=1)
        keep = length > 1e-9
        start, step, length = start[keep], step[keep], length[keep]
        nominal_radius, widen, color = nominal_radius[keep], widen[keep], color[keep]
        per_pixel = self._per_pixel(start + 0.5 * step)
        radius = self._thickness(nominal_radius, per_pixel) * 0.6 * widen
        rows = _instances(_basis(step / length[:, None]),
                          np.stack([radius, length, radius], 1), start, color)
        thin = radius < THIN_PIXELS * per_pixel
        rows[thin, 11] = 0.0  # as an impostor: head radius 0, no head
        parts["thin_tubes"].append(rows[thin])
        parts["shafts"].append(rows[~thin])

    def _joints(self, view: FrameView, options: GizmoOptions, parts) -> None:
        """The joint gizmos (module docstring) of every joint with a body shown, or with
        ``selected_only`` of the joints of the selected body and the selected joint. Sizes
        follow the joint's first body (its second when the first is not shown)."""
        joints = view.joints
        first, second = joints.first_row, joints.second_row
        drawn = (first >= 0) | (second >= 0)
        if options.only_selected(view.count):
            mine = np.zeros(joints.count, dtype=bool)
            if view.selected >= 0:
                mine |= (first == view.selected) | (second == view.selected)
            if 0 <= joints.selected < joints.count:
                mine[joints.selected] = True
            drawn &= mine
        k = np.flatnonzero(drawn)
        if not len(k):
            return
        first, second = first[k], second[k]
        kinds = [joints.kinds[j] for j in k]
        anchor_a = np.asarray(joints.anchor_a, dtype=float)[k]
        anchor_b = np.asarray(joints.anchor_b, dtype=float)[k]
        axis = np.asarray(joints.axis, dtype=float)[k]
        limits = np.asarray(joints.limits, dtype=float).reshape(-1, 2)[k]
        coordinate = np.asarray(joints.coordinate, dtype=float)[k]
        pos = np.asarray(view.pos, dtype=float)
        ref = np.where(first >= 0, first, second)      # the body that sizes the joint's gizmos
        radius = shape_table(view.shapes)[0][ref]
        selected = k == joints.selected
        widen = np.where(selected, SELECTED_WIDEN, 1.0)
        color = np.where(selected[:, None], JOINT_SELECTED_COLOR, JOINT_COLOR)
        tubes = []  # (start, end, nominal radius, index into k, widening) of every joint tube

        def tube(start, end, nominal, j, wider=1.5):
            tubes.append((start, end, nominal, j, wider))

        for j, kind in enumerate(kinds):
            a, b, r = anchor_a[j], anchor_b[j], radius[j]
            link = LINK_RADIUS * r
            # the lever arms: each shown body's centre of mass to its point of the joint (a
            # distance joint's A point is A's centre: no arm there, the rod instead)
            if first[j] >= 0:
                tube(pos[first[j]], a, link, j)
            if second[j] >= 0:
                tube(pos[second[j]], b, link, j)
            if kind == "distance":
                low, high = joints.lengths[k[j], :2]
                tube(a, b, link * (1.4 if low == high else 0.6), j)  # a rod thicker than a rope
            elif kind == "hinge":
                # long enough to read beside a long arm (a pendulum's small bob)
                arm = np.linalg.norm(pos[ref[j]] - a)
                half = max(HINGE_AXIS * r, 0.25 * arm) * axis[j]
                tube(a - half, a, link, j)
                self._arrow(parts, a[None], half[None], link * widen[j], color[j])
                if np.isfinite(limits[j]).all():
                    points = hinge_arc(view, k[j])
                    for p, q in zip(points[:-1], points[1:]):
                        tube(p, q, link, j, 1.2)
                    tube(a, points[0], 0.5 * link, j, 1.0)   # thin spokes to the limits
                    tube(a, points[-1], 0.5 * link, j, 1.0)
            elif kind == "prismatic":
                # the rail in the other body's frame, like the hinge's arc: the offset is
                # s = axis·(b − a), so with B held A's anchor is at b − s·axis, s in [lo, hi]
                # (with A not shown: B's anchor at a + s·axis, A held)
                lo, hi = limits[j]
                origin, sign = (b, -1.0) if first[j] >= 0 else (a, 1.0)
                if not np.isfinite(limits[j]).all():  # unlimited: one radius past both anchors
                    lo, hi = min(0.0, coordinate[j]) - r, max(0.0, coordinate[j]) + r
                else:  # end stops: discs across the rail
                    stops = origin + sign * np.outer([lo, hi], axis[j])
                    size = self._thickness(5.0 * link, 2.5 * self._per_pixel(stops)) * widen[j]
                    parts["dots"].append(_instances(
                        np.repeat(_basis(axis[j][None]), 2, 0),
                        np.stack([size, 0.25 * size, size], 1), stops, color[j]))
                tube(origin + sign * lo * axis[j], origin + sign * hi * axis[j], link, j)
        if tubes:
            start, end, nominal, index, wider = (np.array(v) for v in zip(*tubes))
            self._tubes(start, end - start, nominal, color[index], parts, widen[index] * wider)
        # the reaction force on A at its anchor: one radius of the sizing body per its weight
        mass = np.array([view.shapes[row].properties.mass for row in ref], dtype=float)
        force = np.asarray(joints.force, dtype=float)[k]
        scale = options.arrow_scale * radius / (np.maximum(mass, 1e-12) * G_REF)
        self._arrow(parts, anchor_a, force * scale[:, None], ARROW_RADIUS * radius * widen,
                    FORCE_COLOR)
        # anchor dots, drawn on top (an anchor is often inside or on a body), B's where it
        # stands apart from A's
        dot = np.maximum(ANCHOR_SIZE * radius, ANCHOR_PIXELS * self._per_pixel(anchor_a))
        dot = dot * widen
        apart = np.linalg.norm(anchor_b - anchor_a, axis=1) > dot
        centres = np.vstack([anchor_a, anchor_b[apart]])
        size = np.concatenate([dot, dot[apart]])
        parts["markers"].append(_instances(np.broadcast_to(np.eye(3), (len(centres), 3, 3)),
                                           np.repeat(size[:, None], 3, 1), centres,
                                           np.vstack([color, color[apart]])))

    def _container_edges(self, size: np.ndarray, parts) -> None:
        """The 12 edges of the container as thin lit tubes (part of the walls, always drawn);
        their instances depend on the container and the camera alone, so they are kept from
        the frame before while neither moves (a clip's frames, a still window)."""
        cam = self._camera
        key = (size.tobytes(), cam.target.tobytes(), cam.yaw, cam.pitch, cam.distance,
               cam.fov_y, self._height)
        if self._edges is None or self._edges[0] != key:
            corners = (BOX_CORNERS + [0.0, 1.0, 0.0]) * size / 2  # the floor at y = 0
            start, end = corners[BOX_EDGES[:, 0]], corners[BOX_EDGES[:, 1]]
            edges = {"thin_tubes": [], "shafts": []}
            self._tubes(start, end - start, 0.0025, EDGE_COLOR, edges)
            self._edges = (key, edges)
        for name, rows in self._edges[1].items():
            parts[name] += rows

    # ---- drawing ------------------------------------------------------------------------------

    def draw_opaque(self, frame: dict) -> None:
        """Arrows, triads, polhode and contacts: depth-tested and lit, like the bodies."""
        ctx = self.ctx
        for program in self.programs.values():
            set_uniforms(program, frame, u_head_ratio=HEAD_LENGTH / HEAD_RADIUS)
        ctx.enable(moderngl.DEPTH_TEST | moderngl.CULL_FACE)
        ctx.disable(moderngl.BLEND)
        for name in OPAQUE:
            self.batches[name].render()
        ctx.disable(moderngl.CULL_FACE)

    def draw_translucent(self, frame: dict) -> None:
        """Blended, after everything opaque, without depth writes: the polhode trails (they
        fade out with age), the inertia ellipsoids (outer surface; the body shows through), then
        the centre-of-mass markers on top of everything (the COM is inside the body)."""
        ctx = self.ctx
        ctx.enable(moderngl.DEPTH_TEST | moderngl.BLEND)
        ctx.blend_func = moderngl.SRC_ALPHA, moderngl.ONE_MINUS_SRC_ALPHA
        ctx.fbo.depth_mask = False
        # drawn over the walls, as when the walls were blended passes before them: untinted
        ellipsoid = self.programs["ellipsoid"]
        set_uniforms(ellipsoid, {"u_container": np.zeros(4)})
        if self._line_count:
            set_uniforms(self.line_program, frame, u_viewport=self._size, u_width=LINE_PIXELS)
            self._lines_vao.render(moderngl.LINES, vertices=self._line_count)
        self.batches["ellipsoids"].render()
        ctx.fbo.depth_mask = True
        ctx.disable(moderngl.BLEND | moderngl.DEPTH_TEST)
        self.batches["markers"].render()
        ctx.enable(moderngl.DEPTH_TEST)

    def release(self) -> None:
        for batch in self.batches.values():
            batch.release()
        for obj in (*self._buffers, self._lines_vao, self._lines, *self.programs.values(),
                    self.line_program):
            obj.release()
