"""The joints as a reader sees them at a step boundary: where they are now, what they carry, and
each one's definition re-taken at the present poses (what saving a scene writes)."""

from __future__ import annotations

import dataclasses
import logging
from typing import NamedTuple

import numpy as np

from physics.constraints.joint import JointDef
from physics.constraints.projection import all_rows
from physics.constraints.solve import DISTANCE, DRIVE, JointSet
from physics.geometry.rotation import quat_rotate

log = logging.getLogger(__name__)

# hinge limits re-taken at a pose far from the creation pose stay strictly inside (−π, π)
_HINGE_LIMIT_MARGIN = 1e-6  # rad


class JointView(NamedTuple):
    """The m joints of a world in id order, world frame, after the last step.

    ids (m,) int64 stable joint ids; defs: the m ``JointDef`` as made or last edited (anchor
    and axis as at creation); first, second (m,) int64 body ids (second ``WORLD`` = −1: the world)
    anchor_a, anchor_b (m, 3) m  the joint's point on each body now (they coincide while a
        ball, hinge or fixed joint holds; a distance joint's A point is A's centre of mass)
    axis (m, 3)          the joint axis carried by the first body now (unit; +y where none)
    coordinate (m,)      hinge angle rad, slider offset m (both from the creation pose) or
                         distance m; 0 for ball and fixed
    lengths (m, 3)       distance joints: min, max and rest length, m (0 for the others)
    force, torque (m, 3) N, N·m  reaction on the first body at its anchor in the last step
    error (m, 2)         position violation m, angle violation rad
    """

    ids: np.ndarray
    defs: tuple
    first: np.ndarray
    second: np.ndarray
    anchor_a: np.ndarray
    anchor_b: np.ndarray
    axis: np.ndarray
    coordinate: np.ndarray
    lengths: np.ndarray
    force: np.ndarray
    torque: np.ndarray
    error: np.ndarray


def _empty(*shape, dtype=float) -> np.ndarray:
    array = np.zeros(shape, dtype=dtype)
    array.flags.writeable = False
    return array


# the view of a world without joints (read-only, shared)
NO_JOINTS = JointView(_empty(0, dtype=np.int64), (), _empty(0, dtype=np.int64),
                      _empty(0, dtype=np.int64), _empty(0, 3), _empty(0, 3), _empty(0, 3),
                      _empty(0), _empty(0, 3), _empty(0, 3), _empty(0, 3), _empty(0, 2))


def joint_view(ids, defs, joints: JointSet, pos, quat, force, torque, error) -> JointView:
    """The view of ``joints`` (kernel arrays, rows of the bodies pos (n, 3), quat (n, 4))."""
    m = len(defs)
    a, b = joints.first, joints.second
    anchor_a = pos[a] + quat_rotate(quat[a], joints.local_a)
    axis = quat_rotate(quat[a], joints.axis_a)
    held = np.maximum(b, 0)  # the world's anchor is its own local point
    anchor_b = np.where((b < 0)[:, None], joints.local_b,
                        pos[held] + quat_rotate(quat[held], joints.local_b))
    coordinate = all_rows(joints, pos, quat)[1][:, DRIVE]
    lengths = np.stack((joints.min_length, joints.max_length, joints.rest_length), axis=1)
    lengths[joints.kind != DISTANCE] = 0.0
    return JointView(np.asarray(ids, dtype=np.int64), tuple(defs),
                     np.array([d.first for d in defs], dtype=np.int64).reshape(m),
                     np.array([d.second for d in defs], dtype=np.int64).reshape(m),
                     anchor_a, anchor_b, axis, coordinate, lengths.reshape(m, 3),
                     np.array(force).reshape(m, 3), np.array(torque).reshape(m, 3),
                     np.array(error).reshape(m, 2))


def def_at_present(view: JointView, k: int) -> JointDef:
    """Joint k of ``view`` defined anew at the present poses: the same joint, so that a world
    rebuilt from the bodies' present poses and this definition behaves as the present one
    (hinge and slider limits shifted by the present angle or offset, distance lengths explicit)."""
    joint = view.defs[k]
    # B's point: for a joint to the world it is the fixed point itself, never a drifted copy
    changes = {"anchor": view.anchor_b[k]}
    if joint.kind in ("hinge", "prismatic"):
        changes["axis"] = view.axis[k]
        if joint.limits is not None:
            lo, hi = (limit - view.coordinate[k] for limit in joint.limits)
            if joint.kind == "hinge":
                bound = np.pi - _HINGE_LIMIT_MARGIN
                if lo < -bound or hi > bound:
                    log.warning("hinge joint #%d: limits re-taken %.3f rad from their start "
                                "pose are cut to (−π, π)", view.ids[k], view.coordinate[k])
                lo, hi = float(np.clip(lo, -bound, bound)), float(np.clip(hi, -bound, bound))
            changes["limits"] = (float(lo), float(hi))
    if joint.kind == "distance":
        low, high, rest = (float(v) for v in view.lengths[k])
        changes.update(min_length=low, max_length=high)
        if joint.stiffness or joint.damping:
            changes["rest_length"] = rest
    return dataclasses.replace(joint, **changes)

