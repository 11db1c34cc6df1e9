"""What one frame shows: the data contract between the window, the renderer and the gizmos.

The window builds a ``FrameView`` each frame from two interpolated physics snapshots and the body
table; the renderer and the gizmos only read it (they never see the simulation).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from physics.geometry.meshes import Shape
from physics.geometry.rotation import quat_to_matrix

ALL_BODIES_UP_TO = 100  # bodies: above, gizmos default to the selected body (GizmoOptions)

# ``tumble record --gizmos`` names → GizmoOptions fields
GIZMO_FLAGS = {"L": "angular_momentum", "omega": "angular_velocity", "axes": "principal_axes",
               "ellipsoid": "inertia_ellipsoid", "com": "centre_of_mass",
               "contacts": "contacts", "v": "velocity", "obb": "bounding_box",
               "joints": "joints"}


@dataclass
class GizmoOptions:
    """Which gizmos are drawn, for all bodies or only the selected one (panel toggles)."""

    angular_momentum: bool = True    # L, world, about the centre of mass
    angular_velocity: bool = False   # ω, world
    principal_axes: bool = True      # triad coloured by I1 < I2 < I3
    inertia_ellipsoid: bool = False  # Poinsot's ellipsoid
    polhode: bool = False            # trail of the ω tip
    centre_of_mass: bool = False
    contacts: bool = False           # contact points and normals
    velocity: bool = False           # linear velocity arrow
    collision_hulls: bool = False    # each body's collision shape as a wireframe
    bounding_box: bool = False       # the bounding box along the principal axes
    joints: bool = True              # anchors, links, axes, limits and reaction forces
    # None: automatic, the selected body alone once a scene has more than ALL_BODIES_UP_TO
    # bodies (every body's gizmos at 500 bodies cost llvmpipe a third of a frame); the panel's
    # toggle turns it into the user's own True or False
    selected_only: bool | None = None
    arrow_scale: float = 1.0         # multiplies every arrow's length (slider)

    def only_selected(self, count: int) -> bool:
        """Whether a frame of ``count`` bodies draws the gizmos of the selected body alone."""
        return count > ALL_BODIES_UP_TO if self.selected_only is None else self.selected_only


@dataclass(frozen=True)
class JointFrame:
    """One frame's joints (m of them, in the snapshot's joint order), carried by the drawn
    (interpolated) bodies: each body's points and axis move rigidly with it.

    ids (m,) stable joint ids; kinds: m names ("ball", "hinge", "prismatic", "fixed",
    "distance"); first_row, second_row (m,) rows of the FrameView bodies (−1: the world, or a
    body not shown); anchor_a, anchor_b (m, 3) the joint's point on each body, m (a distance
    joint's A point is A's centre of mass); axis (m, 3) unit joint axis carried by A (hinge,
    prismatic); limits (m, 2) rad or m, NaN where none; coordinate (m,) hinge angle rad / slider
    offset m / distance m; lengths (m, 3) distance min, max, rest, m; force (m, 3) N reaction on
    A at its anchor; error (m, 2) m, rad; selected: index of the selected joint or −1.
    """

    ids: np.ndarray
    kinds: tuple[str, ...]
    first_row: np.ndarray
    second_row: np.ndarray
    anchor_a: np.ndarray
    anchor_b: np.ndarray
    axis: np.ndarray
    limits: np.ndarray
    coordinate: np.ndarray
    lengths: np.ndarray
    force: np.ndarray
    error: np.ndarray
    selected: int = -1

    @property
    def count(self) -> int:
        return len(self.ids)


NO_JOINTS = JointFrame(np.zeros(0, np.int64), (), np.zeros(0, np.int64), np.zeros(0, np.int64),
                       np.zeros((0, 3)), np.zeros((0, 3)), np.zeros((0, 3)), np.zeros((0, 2)),
                       np.zeros(0), np.zeros((0, 3)), np.zeros((0, 3)), np.zeros((0, 2)))


@dataclass(frozen=True)
class FrameView:
    """One frame's bodies (n rows, in the physics row order of the newest snapshot).

    ids (n,) stable body ids; shapes: n ``Shape`` objects (rows sharing a Shape share a mesh);
    pos (n,3) centre of mass, m; quat (n,4) principal frame → world (w,x,y,z);
    color (n,3) linear RGB 0…1; vel (n,3) m/s; omega (n,3) rad/s world; ang_mom (n,3) kg·m²/s
    world; selected: row of the selected body or −1; contact_points, contact_normals (k,3);
    container_size (3,) m or None; polhode: body id → (m,3) world points of the ω-tip trail;
    joints: the ``JointFrame``; pieces: per row the convex pieces (k_i, 3) body frame, m, the
    body collides as (empty: its hull), or () for none at all.
    A Shape's vertices are in the mesh frame: body-frame vertices are
    ``(v − properties.center_of_mass) @ properties.principal_axes``.
    """

    ids: np.ndarray
    shapes: tuple[Shape, ...]
    pos: np.ndarray
    quat: np.ndarray
    color: np.ndarray
    vel: np.ndarray
    omega: np.ndarray
    ang_mom: np.ndarray
    selected: int = -1
    contact_points: np.ndarray = field(default_factory=lambda: np.zeros((0, 3)))
    contact_normals: np.ndarray = field(default_factory=lambda: np.zeros((0, 3)))
    container_size: np.ndarray | None = None
    polhode: dict = field(default_factory=dict)
    joints: JointFrame = NO_JOINTS
    pieces: tuple = ()

    @property
    def count(self) -> int:
        return len(self.ids)


def gizmo_options(names) -> GizmoOptions:
    """GizmoOptions with exactly the gizmos named (keys of GIZMO_FLAGS; "none" or nothing
    for none); ValueError naming an unknown one and the choices."""
    chosen = {}
    for name in names:
        if name == "none":
            continue
        if name not in GIZMO_FLAGS:
            raise ValueError(f"unknown gizmo {name!r}; choose from "
                             f"{','.join(GIZMO_FLAGS)} or none")
        chosen[GIZMO_FLAGS[name]] = True
    off = {field: False for field in GIZMO_FLAGS.values()}
    return GizmoOptions(**{**off, **chosen}, selected_only=False)  # asked for: every body


def frame_view(pose, snapshot, records: dict, default_colors, selected: int | None = None,
               polhode: dict | None = None, selected_joint: int | None = None) -> FrameView:
    """The FrameView of an interpolated ``pose`` (app.render.interpolate.Pose) of ``snapshot``'s
    bodies: only bodies with a record (body id → BodyRecord) are shown, in the record's colour
    or else ``default_colors(ids)`` ((k,) body ids → (k, 3)); ``selected`` body id;
    ``polhode`` as in FrameView; ``selected_joint`` joint id."""
    rows = np.flatnonzero(np.isin(pose.ids, np.fromiter(records, dtype=np.int64,
                                                        count=len(records))))
    ids = pose.ids[rows]
    shown = [records[i] for i in ids.tolist()]
    shapes = tuple(record.shape for record in shown)
    color = np.array(default_colors(ids), dtype=float).reshape(-1, 3)
    for row, record in enumerate(shown):
        if record.color:
            color[row] = record.color
    row_of = {i: r for r, i in enumerate(ids.tolist())}
    return FrameView(
        ids=ids, shapes=shapes, pos=pose.pos[rows], quat=pose.quat[rows], color=color,
        vel=pose.vel[rows], omega=pose.omega[rows], ang_mom=pose.ang_mom[rows],
        selected=row_of.get(selected, -1), contact_points=snapshot.contact_points,
        contact_normals=snapshot.contact_normals, container_size=snapshot.container_size,
        polhode=polhode or {}, joints=joint_frame(pose, snapshot, ids, selected_joint),
        pieces=tuple(record.pieces for record in shown))


def joint_frame(pose, snapshot, shown_ids: np.ndarray, selected: int | None) -> JointFrame:
    """The snapshot's joints moved with the interpolated bodies of ``pose``: a point fixed in
    a body at the snapshot's pose is carried to the body's drawn pose (rigidly), so anchors stay
    on their bodies between physics steps."""
    joints = snapshot.joints
    m = len(joints.ids)
    if m == 0:
        return NO_JOINTS

    def carry(body_ids, points, directions=None):
        s, p = _rows(snapshot.ids, body_ids), _rows(pose.ids, body_ids)
        moved = (s >= 0) & (p >= 0)  # not the world, nor a body the pose does not have
        points, directions = points.copy(), None if directions is None else directions.copy()
        if moved.any():
            s, p = s[moved], p[moved]
            turn = (quat_to_matrix(np.asarray(pose.quat, dtype=float)[p])
                    @ quat_to_matrix(np.asarray(snapshot.quat, dtype=float)[s]).transpose(0, 2, 1))
            points[moved] = pose.pos[p] + np.einsum("kij,kj->ki", turn,
                                                    points[moved] - snapshot.pos[s])
            if directions is not None:
                directions[moved] = np.einsum("kij,kj->ki", turn, directions[moved])
        return points, directions

    anchor_a, axis = carry(joints.first, np.asarray(joints.anchor_a, dtype=float),
                           np.asarray(joints.axis, dtype=float))
    anchor_b, _ = carry(joints.second, np.asarray(joints.anchor_b, dtype=float))
    limits = np.array([d.limits if d.limits is not None else (np.nan, np.nan)
                       for d in joints.defs], dtype=float).reshape(m, 2)
    ids = np.asarray(joints.ids, dtype=np.int64)
    return JointFrame(
        ids=ids, kinds=tuple(d.kind for d in joints.defs),
        first_row=_rows(shown_ids, joints.first), second_row=_rows(shown_ids, joints.second),
        anchor_a=anchor_a, anchor_b=anchor_b, axis=axis, limits=limits,
        coordinate=np.asarray(joints.coordinate, dtype=float),
        lengths=np.asarray(joints.lengths, dtype=float),
        force=np.asarray(joints.force, dtype=float), error=np.asarray(joints.error, dtype=float),
        selected=int(np.flatnonzero(ids == selected)[0]) if selected in ids.tolist() else -1)


def _rows(ids: np.ndarray, wanted: np.ndarray) -> np.ndarray:
    """(k,) int64: the row of each of ``wanted`` (k,) body ids in the sorted ``ids``, −1 where
    it is not there (the world, −1, never is)."""
    ids, wanted = np.asarray(ids, dtype=np.int64), np.asarray(wanted, dtype=np.int64)
    if len(ids) == 0:
        return np.full(len(wanted), -1, dtype=np.int64)
    at = np.minimum(np.searchsorted(ids, wanted), len(ids) - 1)
    return np.where(ids[at] == wanted, at, -1).astype(np.int64)
