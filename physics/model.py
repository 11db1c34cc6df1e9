"""Static model: per-body physical data and world settings (MuJoCo's mjModel, Box2D's body defs).

``World.step`` reads the model and never changes it; only commands applied between steps do.
Bodies are rows of numpy arrays; a body's frame is its principal frame
(docs/physics.md#conventions).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np

from physics.collision.boxes import box_frame
from physics.collision.keys import MAX_PIECE_IDS
from physics.geometry.polytope import Polytope, polytope
from physics.held import ModelRecords
from physics.settings import (
    DEFAULT_CONTAINER,
    DEFAULT_FRICTION,
    DEFAULT_RESTITUTION,
    MAX_HULL_VERTICES,
    MAX_PIECES,
    RESTITUTION_THRESHOLD,
    SOLVER_ITERATIONS,
    SOLVER_ITERATIONS_RANGE,
    STANDARD_GRAVITY,
)


def check_vector(name: str, value, length: int) -> np.ndarray:
    """``value`` as a finite float64 vector of ``length``, or ValueError naming ``name``."""
    try:
        arr = np.asarray(value, dtype=float).reshape(-1)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be {length} numbers, got {value!r}") from None
    if arr.shape != (length,):
        raise ValueError(f"{name} must be {length} numbers, got {value!r}")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} must be finite, got {value!r}")
    return arr


def check_number(what: str, value) -> float:
    """``value`` as a float, or ValueError naming ``what``."""
    try:
        return float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{what} must be a number, got {value!r}") from None


def check_restitution(value: float, what: str = "restitution") -> float:
    """Restitution coefficient in [0, 1]; above 1 a bounce would create energy."""
    value = check_number(what, value)
    if not (0.0 <= value <= 1.0):
        raise ValueError(f"{what} must be between 0 and 1, got {value}")
    return value


def check_friction(value: float, what: str = "friction") -> float:
    """Coulomb friction coefficient μ ≥ 0 (finite)."""
    value = check_number(what, value)
    if not (np.isfinite(value) and value >= 0.0):
        raise ValueError(f"{what} must be a finite number ≥ 0, got {value}")
    return value


@dataclass
class BodyDef:
    """Definition of one rigid body, with defaults (Box2D's ``b2DefaultBodyDef``).

    mass              kg, > 0
    principal_moments (3,) kg·m², ascending, > 0
    hull              (k, 3) collision vertices in the body (principal) frame, k ≤ 64, m
    radius            > 0 → exact sphere collision shape of this radius (hull then unused), m
    pieces            convex pieces (k_i, 3) body frame, m, k_i ≤ 64, at most 64 of them: the body
                      collides with other bodies as these (a compound body); empty → as its hull.
                      The walls always see the hull, which touches a plane where the pieces do
                      (docs/physics.md#compound-bodies)
    position          (3,) centre of mass in the world, m
    orientation       (4,) w, x, y, z: principal frame → world
    velocity          (3,) world, m/s
    angular_velocity  (3,) world, rad/s
    restitution, friction: per-body material; None → the world's default
    static            scenery: never moves, infinite mass (docs/physics.md#static-bodies); its
                      velocity and angular velocity must be zero
    """

    mass: float
    principal_moments: np.ndarray
    hull: np.ndarray = field(default_factory=lambda: np.zeros((0, 3)))
    radius: float = 0.0
    pieces: tuple = ()
    position: np.ndarray = field(default_factory=lambda: np.zeros(3))
    orientation: np.ndarray = field(default_factory=lambda: np.array([1.0, 0.0, 0.0, 0.0]))
    velocity: np.ndarray = field(default_factory=lambda: np.zeros(3))
    angular_velocity: np.ndarray = field(default_factory=lambda: np.zeros(3))
    restitution: float | None = None
    friction: float | None = None
    static: bool = False

    def __post_init__(self) -> None:
        self.mass = float(self.mass)
        if not (np.isfinite(self.mass) and self.mass > 0.0):
            raise ValueError(f"body mass must be a finite number > 0 kg, got {self.mass}")
        self.principal_moments = check_vector("principal_moments", self.principal_moments, 3)
        if np.any(self.principal_moments <= 0.0):
            raise ValueError(
                f"principal moments must be > 0 kg·m², got {self.principal_moments.tolist()}"
            )
        self.radius = float(self.radius)
        if not (np.isfinite(self.radius) and self.radius >= 0.0):
            raise ValueError(f"radius must be a finite number ≥ 0 m, got {self.radius}")
        hull = np.asarray(self.hull, dtype=float).reshape(-1, 3)
        if self.radius == 0.0 and len(hull) == 0:
            raise ValueError("a body needs a collision hull (k×3 vertices) or a sphere radius > 0")
        if len(hull) > MAX_HULL_VERTICES:
            raise ValueError(
                f"collision hull has {len(hull)} vertices; at most {MAX_HULL_VERTICES}"
            )
        if not np.all(np.isfinite(hull)):
            raise ValueError("collision hull vertices must be finite")
        self.hull = hull
        self.pieces = check_pieces(self.pieces, self.radius)
        self.position = check_vector("position", self.position, 3)
        q = check_vector("orientation", self.orientation, 4)
        norm = np.linalg.norm(q)
        if norm < 1e-12:
            raise ValueError(
                f"orientation must be a non-zero quaternion (w, x, y, z), got {q.tolist()}"
            )
        self.orientation = q / norm
        self.velocity = check_vector("velocity", self.velocity, 3)
        self.angular_velocity = check_vector("angular_velocity", self.angular_velocity, 3)
        if self.restitution is not None:
            self.restitution = check_restitution(self.restitution)
        if self.friction is not None:
            self.friction = check_friction(self.friction)
        self.static = check_static(self.static)
        if self.static and (self.velocity.any() or self.angular_velocity.any()):
            raise ValueError("a static body never moves: its velocity and angular_velocity "
                             "must be zero")


def _free_numbers(taken: np.ndarray, count: int, start: int) -> np.ndarray:
    """The first ``count`` numbers start, start + 1, … modulo MAX_PIECE_IDS not in taken (k,)
    int64 (k + count ≤ MAX_PIECE_IDS)."""
    candidates = (start + np.arange(len(taken) + count, dtype=np.int64)) % MAX_PIECE_IDS
    return candidates[~np.isin(candidates, taken)][:count]


def check_pieces(pieces, radius: float = 0.0) -> tuple[np.ndarray, ...]:
    """Convex pieces as a tuple of finite (k, 3) float arrays, 4 ≤ k ≤ MAX_HULL_VERTICES, at most
    MAX_PIECES of them (none for a sphere), or ValueError saying which and why."""
    pieces = tuple(np.asarray(piece, dtype=float) for piece in pieces)
    if pieces and radius > 0.0:
        raise ValueError("a sphere collides as its exact radius: it takes no convex pieces")
    if len(pieces) > MAX_PIECES:
        raise ValueError(f"{len(pieces)} convex pieces; at most {MAX_PIECES}")
    for index, piece in enumerate(pieces):
        if piece.ndim != 2 or piece.shape[1] != 3 or not 4 <= len(piece) <= MAX_HULL_VERTICES:
            raise ValueError(f"convex piece {index + 1} must be k×3 vertices with 4 ≤ k ≤ "
                             f"{MAX_HULL_VERTICES}, got shape {piece.shape}")
        if not np.all(np.isfinite(piece)):
            raise ValueError(f"convex piece {index + 1} has non-finite vertices")
    return pieces


def check_static(value) -> bool:
    """``static`` must be True or False (not 0, 1 or a text)."""
    if not isinstance(value, (bool, np.bool_)):
        raise ValueError(f"static must be true or false, got {value!r}")
    return bool(value)


@dataclass
class WorldDef:
    """World settings with defaults.

    gravity           (3,) m/s²
    restitution       default restitution coefficient for bodies without their own
    friction          default Coulomb μ
    container_size    (3,) full extents of the box of walls (floor at y = 0, centred on x and z), m;
                      None → no walls at all
    solver_iterations sequential-impulse sweeps per step (docs/physics.md#sequential-impulses)
    restitution_threshold  m/s: restitution only applies to impacts faster than this, so resting
                      contacts do not buzz (Box2D uses 1 m/s, Bullet 0.2 m/s)
    sleep             islands at rest fall asleep (docs/physics.md#sleeping); False keeps every
                      body simulated, as engines without sleeping do (the benchmarks' --no-sleep)
    """

    gravity: np.ndarray = field(default_factory=lambda: np.array(STANDARD_GRAVITY))
    restitution: float = DEFAULT_RESTITUTION
    friction: float = DEFAULT_FRICTION
    container_size: np.ndarray | None = field(default_factory=lambda: np.array(DEFAULT_CONTAINER))
    solver_iterations: int = SOLVER_ITERATIONS
    restitution_threshold: float = RESTITUTION_THRESHOLD
    sleep: bool = True

    def __post_init__(self) -> None:
        self.gravity = check_vector("gravity", self.gravity, 3)
        self.restitution = check_restitution(self.restitution, "world restitution")
        self.friction = check_friction(self.friction, "world friction")
        if self.container_size is not None:
            self.container_size = check_container_size(self.container_size)
        self.solver_iterations = check_solver_iterations(self.solver_iterations)
        self.restitution_threshold = float(self.restitution_threshold)
        if not (np.isfinite(self.restitution_threshold) and self.restitution_threshold >= 0):
            raise ValueError(
                f"restitution_threshold must be ≥ 0 m/s, got {self.restitution_threshold}"
            )
        if not isinstance(self.sleep, (bool, np.bool_)):
            raise ValueError(f"sleep must be True or False, got {self.sleep!r}")
        self.sleep = bool(self.sleep)


def check_solver_iterations(value) -> int:
    """Sequential-impulse sweeps per step: a whole number in SOLVER_ITERATIONS_RANGE."""
    low, high = SOLVER_ITERATIONS_RANGE
    problem = f"solver_iterations must be a whole number {low}…{high}, got {value!r}"
    try:
        count = int(value)
    except (TypeError, ValueError, OverflowError):
        raise ValueError(problem) from None
    if count != value or not low <= count <= high:
        raise ValueError(problem)
    return count


def check_container_size(size) -> np.ndarray:
    """Container extents (3,) > 0, in m."""
    size = check_vector("container size", size, 3)
    if np.any(size <= 0.0):
        raise ValueError(f"container size must be > 0 on every axis, got {size.tolist()}")
    return size


class BodyModel(NamedTuple):
    """What the compiled stages after the contacts read of the ``Model`` (dynamics/advance.py):
    the model's own arrays, not copies, made into a record when its rows change.

    ids (n,) int64 stable ids; mass (n,) kg; inv_mass (n,) 1/kg, 0 for a static body;
    inv_inertia (n, 3) 1/(kg·m²) principal; static (n,) bool; radius (n,) m (0 = hull shape);
    bound_radius (n,) m; hull_points (H, 3) m body frame, hull_start (n+1,); restitution,
    friction (n,) each body's own, NaN for the world default.
    """

    ids: np.ndarray
    mass: np.ndarray
    inv_mass: np.ndarray
    inv_inertia: np.ndarray
    static: np.ndarray
    radius: np.ndarray
    bound_radius: np.ndarray
    hull_points: np.ndarray
    hull_start: np.ndarray
    restitution: np.ndarray
    friction: np.ndarray


class HullSet(NamedTuple):
    """The convex hulls of n bodies as the collision kernels read them, flattened (laid out as
    in ``Model``, which holds them in the body frame; ``world_hulls`` in collision/narrowphase.py
    makes the world-frame set of a step).

    hull_points (H, 3) m vertices; hull_start (n+1,) body i owns
    hull_points[hull_start[i]:hull_start[i+1]]; face_normal (F, 3) outward unit normals;
    face_offset (F,) m: inside ⇔ n·x ≤ offset; face_start (n+1,); face_loop_start (F+1,) offsets
    into face_vertex (V,) local vertex indices, counter-clockwise; edge (E, 2) local vertex
    pairs; edge_faces (E, 2) local face pairs; edge_start (n+1,); boxes (collision/boxes.py):
    box_axes (n, 3, 3) unit axes (the body frame's as columns, the world's as rows), box_half
    (n, 3) m half extents (zero for any other shape), box_centre (n, 3) m; inner_radius (n,) m
    the distance from each body's centre of mass to the nearest plane of its faces (+inf for a
    hull without faces; ≤ 0 if the centre is not inside): the ball of that radius about the
    centre lies inside the hull. The narrow phase bounds separations with it
    (collision/narrowphase.py). ellipsoid_centre (n, 3) m and ellipsoid_axes (n, 3) m: an
    ellipsoid aligned with the body's axes that holds every vertex (its vertices' box, grown
    until it does), so that the hull's extent along a body-frame unit vector e is at most
    c·e + |diag(axes) e|: the narrow phase dismisses far pairs with it before looking at any
    vertex. All zero where it is nowhere tighter than the bounding sphere by a tenth (a box,
    a round hull, a hull without vertices): that sphere serves then. The world set moves only
    the vertices and the boxes: its faces' planes, inner radii and ellipsoids are the body
    frame's.
    """

    hull_points: np.ndarray
    hull_start: np.ndarray
    face_normal: np.ndarray
    face_offset: np.ndarray
    face_start: np.ndarray
    face_loop_start: np.ndarray
    face_vertex: np.ndarray
    edge: np.ndarray
    edge_faces: np.ndarray
    edge_start: np.ndarray
    box_axes: np.ndarray
    box_half: np.ndarray
    box_centre: np.ndarray
    inner_radius: np.ndarray
    ellipsoid_centre: np.ndarray
    ellipsoid_axes: np.ndarray


class ShapeSet(NamedTuple):
    """Collision shapes as the contact kernels read them (the bodies, or the convex pieces of
    ``Model.pieces``): ids (n,) int64 stable ids; radius (n,) m (0 = hull shape); bound (n,) m
    bounding radius about the shape's origin; hulls the body-frame ``HullSet``; world the
    ``HullSet`` buffer a step fills with them in the world (``Model.world_hulls_buffer``)."""

    ids: np.ndarray
    radius: np.ndarray
    bound: np.ndarray
    hulls: HullSet
    world: HullSet


class PiecePlacing(NamedTuple):
    """Where the pieces of ``Model.pieces`` sit in the bodies: body i's pieces are rows first[i]
    … first[i] + count[i] − 1 (n,) int64, each at centre (P, 3) m in its body's frame; body (P,)
    int64 the body row of each piece."""

    first: np.ndarray
    count: np.ndarray
    centre: np.ndarray
    body: np.ndarray


class CollisionSet(NamedTuple):
    """The model as a step's contact search reads it (collision/find.py): the bodies' shapes
    (a ``ShapeSet``), compound (n,) bool the bodies that collide as convex pieces, the pieces'
    placing (a ``PiecePlacing``) and their shapes (a ``ShapeSet``). Made once per change of the
    bodies (``Model.collision``)."""

    bodies: ShapeSet
    compound: np.ndarray
    placing: PiecePlacing
    pieces: ShapeSet


@dataclass
class Model:
    """Static data of N bodies (rows) and the world; built and edited by ``World`` only.

    Per body: ids (n,) int64 stable ids; mass, inv_mass (n,) kg, 1/kg; inertia, inv_inertia (n, 3)
    principal moments kg·m² and their inverses (zero for a static body: infinite mass, while mass
    and inertia keep the body's own for the inspector and for making it dynamic again);
    static (n,) bool scenery that never moves (docs/physics.md#static-bodies); radius (n,) m
    (0 = hull shape);
    restitution, friction (n,) with NaN meaning "use the world default".
    Hulls, flattened: hull_points (H, 3) body-frame vertices, hull_start (n+1,) row offsets
    (body i owns hull_points[hull_start[i]:hull_start[i+1]]).
    Hull topology (geometry/polytope.py), flattened the same way, indices local to the body:
    face_normal (F, 3) body-frame outward unit normals, face_offset (F,) m, face_start (n+1,);
    face_loop_start (F+1,) global offsets into face_vertex (V,) (local vertex indices, ccw);
    edge (E, 2) local vertex pairs, edge_faces (E, 2) local face pairs, edge_start (n+1,).
    Spheres (radius > 0) have no hull and no topology.
    Hulls that are boxes (collision/boxes.py), body frame: box_axes (n, 3, 3) unit axes as columns,
    box_half (n, 3) half extents m (zero for any other shape), box_centre (n, 3) m.
    Compound bodies (docs/physics.md#compound-bodies): compound (n,) bool the body collides
    with other bodies as convex pieces; pieces, a Model of shapes only (its rows are collision
    shapes about their own centres; its per-body physical arrays stay empty; None before the
    first body): a compound body's pieces, and for every other body a copy of its own shape (so
    that a pair of a compound body and a plain one is a pair of piece sets); body i's rows are
    piece_first[i] … + piece_count[i] − 1 (n,) int64, each placed at piece_centre (P, 3) m in
    the body frame; piece_body (P,) int64 the body row of each; next_piece_id the number the
    next piece's id starts the search from (``set_pieces``).
    """

    settings: WorldDef
    ids: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    mass: np.ndarray = field(default_factory=lambda: np.zeros(0))
    inv_mass: np.ndarray = field(default_factory=lambda: np.zeros(0))
    inertia: np.ndarray = field(default_factory=lambda: np.zeros((0, 3)))
    inv_inertia: np.ndarray = field(default_factory=lambda: np.zeros((0, 3)))
    static: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=bool))
    radius: np.ndarray = field(default_factory=lambda: np.zeros(0))
    bound_radius: np.ndarray = field(default_factory=lambda: np.zeros(0))
    restitution: np.ndarray = field(default_factory=lambda: np.zeros(0))
    friction: np.ndarray = field(default_factory=lambda: np.zeros(0))
    hull_points: np.ndarray = field(default_factory=lambda: np.zeros((0, 3)))
    hull_start: np.ndarray = field(default_factory=lambda: np.zeros(1, dtype=np.int64))
    face_normal: np.ndarray = field(default_factory=lambda: np.zeros((0, 3)))
    face_offset: np.ndarray = field(default_factory=lambda: np.zeros(0))
    face_start: np.ndarray = field(default_factory=lambda: np.zeros(1, dtype=np.int64))
    face_loop_start: np.ndarray = field(default_factory=lambda: np.zeros(1, dtype=np.int64))
    face_vertex: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    edge: np.ndarray = field(default_factory=lambda: np.zeros((0, 2), dtype=np.int64))
    edge_faces: np.ndarray = field(default_factory=lambda: np.zeros((0, 2), dtype=np.int64))
    edge_start: np.ndarray = field(default_factory=lambda: np.zeros(1, dtype=np.int64))
    box_axes: np.ndarray = field(default_factory=lambda: np.zeros((0, 3, 3)))
    box_half: np.ndarray = field(default_factory=lambda: np.zeros((0, 3)))
    box_centre: np.ndarray = field(default_factory=lambda: np.zeros((0, 3)))
    compound: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=bool))
    pieces: Model | None = None
    piece_first: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    piece_count: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    piece_centre: np.ndarray = field(default_factory=lambda: np.zeros((0, 3)))
    piece_body: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    next_piece_id: int = 0
    # made on first use after a body is added or removed, not on every step: building the
    # records and their arrays cost more than the transform of a small scene's hulls
    _hulls: HullSet | None = field(default=None, init=False, repr=False, compare=False)
    _world_hulls: HullSet | None = field(default=None, init=False, repr=False, compare=False)
    _collision: tuple | None = field(default=None, init=False, repr=False, compare=False)
    _body_model: tuple | None = field(default=None, init=False, repr=False, compare=False)
    # (collision, body_model, the two held in numba): made again whenever either is
    _batch_records: tuple | None = field(default=None, init=False, repr=False, compare=False)

    @property
    def count(self) -> int:
        return len(self.ids)

    @property
    def hulls(self) -> HullSet:
        """The hulls and their topology, body frame, as one record for the kernels."""
        if self._hulls is None:
            self._hulls = HullSet(*(getattr(self, name) for name in HullSet._fields[:-3]),
                                  _inner_radii(self.face_offset, self.face_start),
                                  *_enclosing_ellipsoids(self.hull_points, self.hull_start,
                                                         self.bound_radius))
        return self._hulls

    @property
    def world_hulls_buffer(self) -> HullSet:
        """Room for the hulls in the world frame (collision/narrowphase.py ``world_hulls``):
        the vertices and the boxes to be filled in each step; the rest (the topology, the
        faces' planes, the inner radii, the ellipsoids) shared with ``hulls`` (the narrow phase
        moves the planes it reads)."""
        if self._world_hulls is None:
            body = self.hulls
            self._world_hulls = body._replace(
                hull_points=np.empty_like(body.hull_points),
                box_axes=np.empty_like(body.box_axes),
                box_centre=np.empty_like(body.box_centre))
        return self._world_hulls

    @property
    def collision(self) -> tuple:
        """The ``CollisionSet`` of the bodies as nested plain tuples, as it crosses into a
        compiled kernel (docs/architecture.md#records); made once per change of the bodies."""
        if self._collision is None:
            pieces = self.pieces if self.pieces is not None else Model(self.settings)
            self._collision = (
                _shapes(self), self.compound,
                tuple(PiecePlacing(self.piece_first, self.piece_count, self.piece_centre,
                                   self.piece_body)),
                _shapes(pieces))
        return self._collision

    @property
    def body_model(self) -> tuple:
        """The ``BodyModel`` record as a plain tuple, as it crosses into the compiled stages
        (docs/architecture.md#records); its arrays change in place with the model's (a
        material, a body made static)."""
        if self._body_model is None:
            self._body_model = tuple(getattr(self, name) for name in BodyModel._fields)
        return self._body_model

    @property
    def batch_records(self) -> ModelRecords:
        """``collision`` and ``body_model`` held in numba, as a batch takes them
        (physics/held.py); made again whenever either record is."""
        collision, bodies = self.collision, self.body_model
        held = self._batch_records
        if held is None or held[0] is not collision or held[1] is not bodies:
            held = self._batch_records = (collision, bodies, ModelRecords(collision, bodies))
        return held[2]

    def _hulls_changed(self) -> None:
        """Every row is added or deleted through here (``append_shape``, ``delete_shape``),
        within the method that reassigns the row arrays: the records are made again on use."""
        self._hulls = self._world_hulls = self._collision = self._body_model = None

    def __getstate__(self) -> dict:
        # a copy makes its own numba records from its own arrays (these hold this model's)
        return {**vars(self), "_batch_records": None}

    def effective_restitution(self) -> np.ndarray:
        """(n,) per-body restitution with the world default filled in."""
        return np.where(np.isnan(self.restitution), self.settings.restitution, self.restitution)

    def effective_friction(self) -> np.ndarray:
        """(n,) per-body friction with the world default filled in."""
        return np.where(np.isnan(self.friction), self.settings.friction, self.friction)

    def append(self, body_id: int, body: BodyDef) -> None:
        """Add one body row."""
        self.extend([body_id], [body])

    def extend(self, ids, bodies) -> None:
        """Add body rows: ids (k,) and their ``BodyDef``s. Each array grows once for all of
        them, so a scene of 10 000 bodies loads in seconds (row by row it copied every array
        10 000 times); the rows are those that appending them one by one would give."""
        bodies = list(bodies)
        self._check_piece_room(sum(max(len(body.pieces), 1) for body in bodies))
        first = self.count
        self.mass = np.append(self.mass, [body.mass for body in bodies])
        self.inertia = np.vstack((self.inertia, *(body.principal_moments for body in bodies)))
        self.static = np.append(self.static, np.zeros(len(bodies), dtype=bool))
        self.inv_mass = np.append(self.inv_mass, np.zeros(len(bodies)))
        self.inv_inertia = np.vstack((self.inv_inertia, np.zeros((len(bodies), 3))))
        self.restitution = np.append(
            self.restitution, [np.nan if b.restitution is None else b.restitution for b in bodies])
        self.friction = np.append(
            self.friction, [np.nan if b.friction is None else b.friction for b in bodies])
        self.extend_shapes(ids, [body.hull if body.radius == 0.0 else np.zeros((0, 3))
                                 for body in bodies], [body.radius for body in bodies])
        self.compound = np.append(self.compound, np.zeros(len(bodies), dtype=bool))
        self.piece_first = np.append(self.piece_first, np.zeros(len(bodies), dtype=np.int64))
        self.piece_count = np.append(self.piece_count, np.zeros(len(bodies), dtype=np.int64))
        plain = []  # a run of rows without pieces, given their own shape as a piece at once
        for row, body in enumerate(bodies, start=first):
            self.set_static(row, body.static)
            if body.pieces:
                self._own_pieces(plain)
                plain = []
                self.set_pieces(row, body.pieces)
            else:
                plain.append(row)
        self._own_pieces(plain)

    def extend_shapes(self, ids, hulls, radii, tops=None) -> None:
        """Add collision shape rows: ids (k,); each a hull (m, 3) about the row's origin, m, or
        a sphere of its radius m (hull empty); tops their topologies when known (else
        computed)."""
        self._hulls_changed()
        hulls = [np.asarray(hull, dtype=float).reshape(-1, 3) for hull in hulls]
        if tops is None:
            tops = [polytope(hull) for hull in hulls]
        self.ids = np.append(self.ids, np.asarray(ids, dtype=np.int64))
        self.radius = np.append(self.radius, radii)
        self.bound_radius = np.append(self.bound_radius, [
            radius if radius > 0.0 else np.linalg.norm(hull, axis=1).max()
            for hull, radius in zip(hulls, radii)])
        self.hull_points = np.vstack((self.hull_points, *hulls))
        self.hull_start = _extend_offsets(self.hull_start, [len(hull) for hull in hulls])
        self._extend_topology(hulls, tops)

    def append_shape(self, shape_id: int, hull: np.ndarray, radius: float,
                     top: Polytope | None = None) -> None:
        """Add one collision shape row (``extend_shapes``)."""
        self.extend_shapes([shape_id], [hull], [radius], None if top is None else [top])

    def topology(self, row: int) -> Polytope:
        """The hull topology of one row, its indices local to the row (as ``polytope`` gives)."""
        f_lo, f_hi = self.face_start[row], self.face_start[row + 1]
        e_lo, e_hi = self.edge_start[row], self.edge_start[row + 1]
        loops = self.face_loop_start[f_lo:f_hi + 1]
        return Polytope(self.face_normal[f_lo:f_hi], self.face_offset[f_lo:f_hi],
                        loops - loops[0], self.face_vertex[loops[0]:loops[-1]],
                        self.edge[e_lo:e_hi], self.edge_faces[e_lo:e_hi])

    def set_pieces(self, row: int, pieces) -> None:
        """Make body ``row`` collide with other bodies as these convex pieces (k_i, 3), body
        frame, m (``check_pieces``), or as its own shape (no pieces)."""
        pieces = check_pieces(pieces, self.radius[row])
        self._collision = None
        if self.pieces is None:
            self.pieces = Model(self.settings)
        self._check_piece_room(max(len(pieces), 1) - self.piece_count[row])
        for piece in range(self.piece_count[row] - 1, -1, -1):  # the old ones, last first
            self._delete_piece(self.piece_first[row] + piece)
        self.compound[row] = bool(pieces)
        self.piece_first[row] = self.pieces.count
        self.piece_count[row] = max(len(pieces), 1)
        # the narrow phase keys contacts by shape ids, 20 bits of each (collision/keys.py): a
        # piece's id is the next number after the last one given that no piece holds, modulo
        # MAX_PIECE_IDS, so ids stay unique however high body ids climb, and a number comes
        # back only after 2²⁰ others (a piece pair's manifold kept from the last step,
        # collision/manifolds.py, can never be taken for that of new pieces)
        free = _free_numbers(self.pieces.ids, self.piece_count[row], self.next_piece_id)
        self.next_piece_id = int(free[-1] + 1) % MAX_PIECE_IDS
        if not pieces:  # its own shape, about its centre of mass
            self._add_own_pieces([row], free)
        for index, piece in enumerate(pieces):
            centre = piece.mean(axis=0)  # inside the convex piece: the kernels' bounds need it
            self.pieces.append_shape(free[index], piece - centre, 0.0)
            self._place_piece(row, centre)

    def _own_pieces(self, rows: list[int]) -> None:
        """``set_pieces(row, ())`` for each of the new rows (k,), which have no piece yet, at
        once: each collides as its own shape, a piece of the next free id (``set_pieces``)."""
        if not rows:
            return
        self._collision = None
        if self.pieces is None:
            self.pieces = Model(self.settings)
        self.piece_first[rows] = self.pieces.count + np.arange(len(rows))
        self.piece_count[rows] = 1
        # the ids one by one would take: each the first free one after the last
        free = _free_numbers(self.pieces.ids, len(rows), self.next_piece_id)
        self.next_piece_id = int(free[-1] + 1) % MAX_PIECE_IDS
        self._add_own_pieces(rows, free)

    def _add_own_pieces(self, rows: list[int], ids: np.ndarray) -> None:
        """Add to ``pieces`` a copy of each row's own shape (k rows), about its centre of mass,
        with these ids (k,)."""
        spans = [(self.hull_start[row], self.hull_start[row + 1]) for row in rows]
        self.pieces.extend_shapes(ids, [self.hull_points[lo:hi] for lo, hi in spans],
                                  self.radius[rows], [self.topology(row) for row in rows])
        self.piece_centre = np.vstack((self.piece_centre, np.zeros((len(rows), 3))))
        self.piece_body = np.append(self.piece_body, np.asarray(rows, dtype=np.int64))

    def _check_piece_room(self, more: int) -> None:
        """ValueError, before anything changes, if ``more`` pieces would pass MAX_PIECE_IDS."""
        held = (0 if self.pieces is None else self.pieces.count) + more
        if held > MAX_PIECE_IDS:
            raise ValueError(f"{held} convex pieces in one world; at most {MAX_PIECE_IDS} "
                             f"(every body is at least one): remove bodies or give fewer pieces")

    def _place_piece(self, row: int, centre: np.ndarray) -> None:
        self.piece_centre = np.vstack((self.piece_centre, centre))
        self.piece_body = np.append(self.piece_body, np.int64(row))

    def _delete_piece(self, piece: int) -> None:
        """Remove one row of ``pieces`` (later rows move up by one)."""
        self.pieces.delete_shape(piece)
        self.piece_centre = np.delete(self.piece_centre, piece, axis=0)
        self.piece_body = np.delete(self.piece_body, piece)
        self.piece_first[self.piece_first > piece] -= 1

    def set_static(self, row: int, static: bool) -> None:
        """Make one body scenery (zero inverse mass and inertia) or dynamic again."""
        self.static[row] = static
        self.inv_mass[row] = 0.0 if static else 1.0 / self.mass[row]
        self.inv_inertia[row] = 0.0 if static else 1.0 / self.inertia[row]

    def _extend_topology(self, hulls, tops) -> None:
        """Add rows' topologies (empty for spheres: no hull), hulls (k_i, 3) and tops their
        ``Polytope``s."""
        self.face_normal = np.vstack((self.face_normal, *(top.face_normal for top in tops)))
        self.face_offset = np.concatenate((self.face_offset,
                                           *(top.face_offset for top in tops)))
        self.face_start = _extend_offsets(self.face_start, [len(t.face_offset) for t in tops])
        self.face_loop_start = np.concatenate((self.face_loop_start, *(
            top.face_start[1:] + at for top, at in
            zip(tops, self.face_loop_start[-1] + np.cumsum(
                [0] + [top.face_start[-1] for top in tops[:-1]])))))
        self.face_vertex = np.concatenate((self.face_vertex,
                                           *(top.face_vertex for top in tops)))
        self.edge = np.vstack((self.edge, *(top.edge for top in tops)))
        self.edge_faces = np.vstack((self.edge_faces, *(top.edge_faces for top in tops)))
        self.edge_start = _extend_offsets(self.edge_start, [len(top.edge) for top in tops])
        boxes = [box_frame(hull, top) or (np.eye(3), np.zeros(3), np.zeros(3))
                 for hull, top in zip(hulls, tops)]
        self.box_axes = np.concatenate((self.box_axes, *(box[0][None] for box in boxes)))
        self.box_half = np.vstack((self.box_half, *(box[1] for box in boxes)))
        self.box_centre = np.vstack((self.box_centre, *(box[2] for box in boxes)))

    def delete(self, row: int) -> None:
        """Remove one body row (later rows move up by one)."""
        for piece in range(self.piece_count[row] - 1, -1, -1):
            self._delete_piece(self.piece_first[row] + piece)
        for name in ("mass", "inv_mass", "inertia", "inv_inertia", "static", "restitution",
                     "friction", "compound", "piece_first", "piece_count"):
            setattr(self, name, np.delete(getattr(self, name), row, axis=0))
        self.piece_body[self.piece_body > row] -= 1
        self.delete_shape(row)

    def delete_shape(self, row: int) -> None:
        """Remove one collision shape row (later rows move up by one)."""
        self._hulls_changed()
        lo, hi = self.hull_start[row], self.hull_start[row + 1]
        for name in ("ids", "radius", "bound_radius", "box_axes", "box_half", "box_centre"):
            setattr(self, name, np.delete(getattr(self, name), row, axis=0))
        self.hull_points = np.delete(self.hull_points, np.s_[lo:hi], axis=0)
        self.hull_start = _drop_segment(self.hull_start, row)
        f_lo, f_hi = self.face_start[row], self.face_start[row + 1]
        v_lo, v_hi = self.face_loop_start[f_lo], self.face_loop_start[f_hi]
        e_lo, e_hi = self.edge_start[row], self.edge_start[row + 1]
        self.face_normal = np.delete(self.face_normal, np.s_[f_lo:f_hi], axis=0)
        self.face_offset = np.delete(self.face_offset, np.s_[f_lo:f_hi])
        self.face_vertex = np.delete(self.face_vertex, np.s_[v_lo:v_hi])
        self.face_loop_start = np.concatenate(
            (self.face_loop_start[:f_lo], self.face_loop_start[f_hi:] - (v_hi - v_lo)))
        self.face_start = _drop_segment(self.face_start, row)
        self.edge = np.delete(self.edge, np.s_[e_lo:e_hi], axis=0)
        self.edge_faces = np.delete(self.edge_faces, np.s_[e_lo:e_hi], axis=0)
        self.edge_start = _drop_segment(self.edge_start, row)

    def wall_planes(self) -> np.ndarray:
        """(6, 4) inward unit normals n and offsets d of the container walls: inside ⇔ n·x ≥ d.

        Order: floor, ceiling, −x, +x, −z, +z. Empty (0, 4) when there is no container.
        """
        size = self.settings.container_size
        if size is None:
            return np.zeros((0, 4))
        sx, sy, sz = size
        return np.array([
            [0.0, 1.0, 0.0, 0.0],
            [0.0, -1.0, 0.0, -sy],
            [1.0, 0.0, 0.0, -sx / 2],
            [-1.0, 0.0, 0.0, -sx / 2],
            [0.0, 0.0, 1.0, -sz / 2],
            [0.0, 0.0, -1.0, -sz / 2],
        ])


def _shapes(model: Model) -> tuple:
    """The ``ShapeSet`` of a model's rows as nested plain tuples."""
    return (model.ids, model.radius, model.bound_radius, tuple(model.hulls),
            tuple(model.world_hulls_buffer))


def _inner_radii(face_offset: np.ndarray, face_start: np.ndarray) -> np.ndarray:
    """(n,) m: each hull's least face offset (face_offset (F,) m, face_start (n+1,)), the
    distance from its body-frame origin to its nearest face plane; +inf without faces."""
    radii = np.full(len(face_start) - 1, np.inf)
    has_faces = np.diff(face_start) > 0
    if has_faces.any():
        radii[has_faces] = np.minimum.reduceat(face_offset, face_start[:-1][has_faces])
    return radii


def _enclosing_ellipsoids(points: np.ndarray, start: np.ndarray,
                          bound: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(centres (n, 3) m, semi-axes (n, 3) m) of an ellipsoid aligned with the body frame about
    each hull's vertices (points (H, 3) m, start (n+1,)): centred on their box, its semi-axes
    the box's half extents (at least 1e-9 of the largest, for a flat hull) grown by the one
    factor that takes in every vertex, and by 1e-12 more for rounding. Zero for no vertices,
    and where the ellipsoid's nearest reach, |c| + its least semi-axis, is not under 0.9 of the
    bounding radius bound (n,) m (the vertices' farthest distance from the centre of mass):
    there the bounding sphere bounds the extent about as well, for less."""
    n = len(start) - 1
    centres, axes = np.zeros((n, 3)), np.zeros((n, 3))
    for i in range(n):
        vertices = points[start[i]:start[i + 1]]
        if not len(vertices):
            continue
        low, high = vertices.min(axis=0), vertices.max(axis=0)
        centre, half = (low + high) / 2, (high - low) / 2
        half = np.maximum(half, 1e-9 * max(half.max(), 1e-12))
        grow = np.sqrt((((vertices - centre) / half) ** 2).sum(axis=1)).max()
        semi = half * grow * (1.0 + 1e-12)
        if np.linalg.norm(centre) + semi.min() < 0.9 * bound[i]:
            centres[i], axes[i] = centre, semi
    return centres, axes


def _extend_offsets(start: np.ndarray, sizes) -> np.ndarray:
    """Offsets (n+1,) of a flattened per-row array with rows of these sizes (k,) added."""
    return np.concatenate((start, start[-1] + np.cumsum(np.asarray(sizes, dtype=np.int64))))


def _drop_segment(start: np.ndarray, row: int) -> np.ndarray:
    """Offsets (n+1,) of a flattened per-body array with body ``row``'s segment removed."""
    size = start[row + 1] - start[row]
    return np.concatenate((start[: row + 1], start[row + 2:] - size))
