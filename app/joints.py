"""Making a joint with the mouse: the draft between a Shift+click and the panel's Create.

Select a body by clicking it (the point clicked is remembered on the body), then Shift+click a
second body, or empty space for the fixed world. That makes a ``JointDraft``; the panel's Joints
section shows it with the joint type, where the anchor goes and which way the axis points, and
Create turns it into a ``JointDef`` at the bodies' present poses (``joint_of``).

Anchor choices: the point clicked on the first body, the point of the Shift+click (on the second
body, or in empty space on the plane through the first point facing the camera), or the midpoint
of the two (by default the Shift+clicked point for the world, the midpoint between two bodies).
A distance joint joins the first body's centre of mass to its anchor on the second body
(physics/constraints/joint.py): for a rod from the first body, choose the second point.
Axis choices (hinge, prismatic): a world axis, the view direction, or a principal axis of the
first body.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from physics.constraints.joint import AXIS_TYPES, JOINT_TYPES, WORLD, JointDef
from physics.geometry.rotation import quat_to_matrix

ANCHORS = ("first point", "second point", "midpoint")
AXES = ("world x", "world y", "world z", "view direction", "principal axis 1",
        "principal axis 2", "principal axis 3")


@dataclass
class JointDraft:
    """A joint being made. first: body id; first_local (3,) m: the clicked point in the first
    body's principal frame; second: body id or ``WORLD``; second_point (3,) m: the Shift+click
    point, in the second body's principal frame (world frame for the world); view (3,): the
    camera's viewing direction when it was made; kind, anchor, axis: the panel's choices (indices
    into JOINT_TYPES, ANCHORS, AXES)."""

    first: int
    first_local: np.ndarray
    second: int
    second_point: np.ndarray
    view: np.ndarray
    kind: int = JOINT_TYPES.index("hinge")
    anchor: int = 0
    axis: int = AXES.index("world z")

    @property
    def kind_name(self) -> str:
        return JOINT_TYPES[self.kind]


def _pose(snapshot, body_id: int) -> tuple[np.ndarray, np.ndarray] | None:
    rows = np.flatnonzero(snapshot.ids == body_id)
    if not len(rows):
        return None
    row = int(rows[0])
    return snapshot.pos[row], quat_to_matrix(np.asarray(snapshot.quat[row], float)[None])[0]


def draft_points(draft: JointDraft, snapshot) -> tuple[np.ndarray, np.ndarray]:
    """The draft's two points (3,) world, m, at the snapshot's poses; ValueError when one of
    its bodies is gone."""
    first = _pose(snapshot, draft.first)
    if first is None:
        raise ValueError(f"body #{draft.first} is no longer in the scene")
    point_a = first[0] + first[1] @ draft.first_local
    if draft.second == WORLD:
        return point_a, np.asarray(draft.second_point, dtype=float)
    second = _pose(snapshot, draft.second)
    if second is None:
        raise ValueError(f"body #{draft.second} is no longer in the scene")
    return point_a, second[0] + second[1] @ draft.second_point


def joint_of(draft: JointDraft, snapshot) -> JointDef:
    """The joint the draft describes at the snapshot's poses (validated by ``JointDef``)."""
    point_a, point_b = draft_points(draft, snapshot)
    anchor = (point_a, point_b, 0.5 * (point_a + point_b))[draft.anchor]
    kind = draft.kind_name
    axis = None
    if kind in AXIS_TYPES:
        choice = AXES[draft.axis]
        if choice.startswith("world"):
            axis = np.eye(3)["xyz".index(choice[-1])]
        elif choice == "view direction":
            axis = np.asarray(draft.view, dtype=float)
        else:
            _, rotation = _pose(snapshot, draft.first)
            axis = rotation[:, int(choice[-1]) - 1]  # principal frame → world: its columns
    return JointDef(kind, draft.first, draft.second, anchor=anchor, axis=axis)


def new_draft(first: int, first_local, second: int, second_point, view) -> JointDraft:
    """A draft with the defaults a user expects: a hinge about the view direction (it swings
    in the plane on screen), anchored at the Shift+clicked point for the world (a pendulum hung
    where one clicks) and at the midpoint between two bodies."""
    return JointDraft(first, np.asarray(first_local, float), second,
                      np.asarray(second_point, float), np.asarray(view, float),
                      anchor=ANCHORS.index("second point" if second == WORLD else "midpoint"),
                      axis=AXES.index("view direction"))
