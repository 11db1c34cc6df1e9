"""What one frame shows: the data contract between the window, the renderer and the gizmos.

The window builds a ``FrameView`` each frame from two interpolated physics snapshots and the body
table; the renderer and the gizmos only read it (they never see the simulation).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from physics.geometry.meshes import Shape

# ``tumble record --gizmos`` names → GizmoOptions fields
GIZMO_FLAGS = {"L": "angular_momentum", "omega": "angular_velocity", "axes": "principal_axes",
               "ellipsoid": "inertia_ellipsoid", "com": "centre_of_mass",
               "contacts": "contacts", "v": "velocity", "obb": "bounding_box"}


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
    selected_only: bool = False
    arrow_scale: float = 1.0         # multiplies every arrow's length (slider)


@dataclass(frozen=True)
class FrameView:
    """One frame's bodies (n rows, in the physics row order of the newest snapshot).

    ids (n,) stable body ids; shapes: n ``Shape`` objects (rows sharing a Shape share a mesh);
    pos (n,3) centre of mass, m; quat (n,4) principal frame → world (w,x,y,z);
    color (n,3) linear RGB 0…1; vel (n,3) m/s; omega (n,3) rad/s world; ang_mom (n,3) kg·m²/s
    world; selected: row of the selected body or −1; contact_points, contact_normals (k,3);
    container_size (3,) m or None; polhode: body id → (m,3) world points of the ω-tip trail.
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
    return GizmoOptions(**{**off, **chosen})


def frame_view(pose, snapshot, records: dict, default_colors, selected: int | None = None,
               polhode: dict | None = None) -> FrameView:
    """The FrameView of an interpolated ``pose`` (app.render.interpolate.Pose) of ``snapshot``'s
    bodies: only bodies with a record (body id → BodyRecord) are shown, in the record's colour
    or else ``default_colors(ids)`` ((k,) body ids → (k, 3)); ``selected`` body id;
    ``polhode`` as in FrameView."""
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
        polhode=polhode or {})
