"""The panel's Joints section: the joint being made with the mouse (app/joints.py), the list of
joints with their live reaction and violation, and the chosen joint's limits, motor and break
force, edited live, or deleted."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np
from imgui_bundle import imgui

from app.joints import ANCHORS, AXES, draft_points
from app.panel.widgets import AMBER, DIM
from physics.constraints.joint import AXIS_TYPES, JOINT_TYPES
from physics.simulation import Snapshot

if TYPE_CHECKING:
    from app.panel import Panel

BREAK_FORCE_DEFAULT = 100.0  # N: where the break-force field starts when switched on
MOTOR_MAX_DEFAULT = 1.0      # N·m or N: where the motor's limit starts when switched on


def joints(panel: Panel, s: Snapshot) -> None:
    if panel.state.joint_draft is not None:
        _draft(panel, s)
        imgui.separator()
    view = s.joints
    count = len(view.ids)
    imgui.text(f"{count} joint{'s' if count != 1 else ''}")
    imgui.same_line()
    imgui.text_colored(DIM, "(select a body, Shift+click another or empty space)")
    if count == 0:
        return
    if imgui.begin_table("joints", 4, imgui.TableFlags_.row_bg | imgui.TableFlags_.borders_inner_v):
        imgui.table_setup_column("joint", imgui.TableColumnFlags_.width_stretch)
        imgui.table_setup_column("|F| N", imgui.TableColumnFlags_.width_fixed, 62)
        imgui.table_setup_column("Δx mm", imgui.TableColumnFlags_.width_fixed, 52)
        imgui.table_setup_column("Δθ mrad", imgui.TableColumnFlags_.width_fixed, 58)
        imgui.table_headers_row()
        for k, joint_id in enumerate(view.ids.tolist()):
            joint = view.defs[k]
            imgui.table_next_row()
            imgui.table_next_column()
            label = (f"#{joint_id} {joint.kind}: {panel.body_label(joint.first)}–"
                     f"{panel.body_label(joint.second)}")
            chosen = panel.state.selected_joint == joint_id
            if imgui.selectable(f"{label}##{joint_id}", chosen,
                                imgui.SelectableFlags_.span_all_columns)[0]:
                panel.state.selected_joint = None if chosen else joint_id
            for value in (np.linalg.norm(view.force[k]), 1e3 * view.error[k, 0],
                          1e3 * view.error[k, 1]):
                imgui.table_next_column()
                imgui.text(f"{value:.3g}")
        imgui.end_table()
    if panel.state.selected_joint in view.ids.tolist():
        k = view.ids.tolist().index(panel.state.selected_joint)
        _editor(panel, int(view.ids[k]), view.defs[k], view.coordinate[k])


def _draft(panel: Panel, s: Snapshot) -> None:
    draft = panel.state.joint_draft
    if panel._scroll_to_draft:  # just made: bring it into view, however long the panel is
        imgui.set_scroll_here_y(0.0)
        panel._scroll_to_draft = False
    imgui.text_colored(AMBER, f"New joint: {panel.body_label(draft.first)} – "
                              f"{panel.body_label(draft.second)}")
    imgui.set_next_item_width(150)
    _, draft.kind = imgui.combo("type", draft.kind, list(JOINT_TYPES))
    imgui.set_next_item_width(150)
    _, draft.anchor = imgui.combo("anchor", draft.anchor, list(ANCHORS))
    imgui.set_item_tooltip("first point: where you clicked the selected body; second point: "
                           "the Shift+click (a distance joint joins the first body's centre to "
                           "this anchor)")
    if draft.kind_name in AXIS_TYPES:
        imgui.set_next_item_width(150)
        _, draft.axis = imgui.combo("axis", draft.axis, list(AXES))
    try:
        a, b = draft_points(draft, s)
        imgui.text_colored(DIM, f"points {np.linalg.norm(b - a):.3f} m apart")
    except ValueError as e:
        imgui.text_colored(DIM, str(e))
    clicked = imgui.button("Create", (90, 0))
    panel._item_width = 90.0
    panel._remember("joint_create")
    if clicked:
        panel.create_joint()
    imgui.same_line()
    if imgui.button("Cancel", (90, 0)):
        panel.state.joint_draft = None


def _editor(panel: Panel, joint_id: int, joint, coordinate: float) -> None:
    imgui.separator_text(f"Joint #{joint_id} ({joint.kind})")
    if joint.kind in AXIS_TYPES:
        angular = joint.kind == "hinge"
        unit, scale = ("°", 180.0 / math.pi) if angular else ("m", 1.0)
        imgui.text(f"{'angle' if angular else 'offset'} {coordinate * scale:.4g} {unit} "
                   "from its start")
        limits = panel._shown(f"joint limits:{joint_id}", joint.limits)
        changed, on = imgui.checkbox("limits", limits is not None)
        if changed:  # on: a range about where it is now
            span, end = (math.pi / 2, math.pi - 1e-3) if angular else (0.5, math.inf)
            around = (max(coordinate - span, -end), min(coordinate + span, end))
            panel.edit_joint(joint_id, limits=around if on else None)
        elif limits is not None:
            lo_hi = [v * scale for v in limits]
            imgui.set_next_item_width(-60)
            changed, lo_hi = imgui.drag_float2(f"{unit}##limits", lo_hi, 0.01,
                                               -179.9 if angular else -1e3,
                                               179.9 if angular else 1e3, "%.3f")
            if changed and lo_hi[0] <= lo_hi[1]:
                panel.edit_joint(joint_id, limits=tuple(v / scale for v in lo_hi))
        _motor(panel, joint_id, joint, angular)
    _break_force(panel, joint_id, joint)
    if imgui.button("Delete joint"):
        panel.delete_joint(joint_id)


def _motor(panel: Panel, joint_id: int, joint, angular: bool) -> None:
    limit = panel._shown(f"joint motor_max:{joint_id}", joint.motor_max)
    toggled, on = imgui.checkbox("motor", limit is not None)
    if toggled:
        panel.edit_joint(joint_id, motor_max=MOTOR_MAX_DEFAULT if on else None)
        return
    if limit is None:
        return
    speed = panel._shown(f"joint motor_speed:{joint_id}", joint.motor_speed)
    imgui.set_next_item_width(-110)
    changed, speed = imgui.drag_float("rad/s" if angular else "m/s", speed, 0.05, -1e3, 1e3,
                                      "%.3f")
    if changed:
        panel.edit_joint(joint_id, motor_speed=speed)
    imgui.set_next_item_width(-110)
    changed, limit = imgui.drag_float("max N·m" if angular else "max N", limit, 0.05, 0.0, 1e6,
                                      "%.3f")
    if changed:
        panel.edit_joint(joint_id, motor_max=max(limit, 0.0))


def _break_force(panel: Panel, joint_id: int, joint) -> None:
    force = panel._shown(f"joint break_force:{joint_id}", joint.break_force)
    toggled, on = imgui.checkbox("breaks", force is not None)
    imgui.set_item_tooltip("the joint breaks when its reaction force passes this")
    if toggled:
        panel.edit_joint(joint_id, break_force=BREAK_FORCE_DEFAULT if on else None)
        return
    if force is None:
        return
    imgui.same_line()
    imgui.set_next_item_width(-60)
    changed, force = imgui.drag_float("N##break", force, 1.0, 0.0, 1e9, "%.1f")
    if changed:
        panel.edit_joint(joint_id, break_force=max(force, 0.0))
