"""The panel's sections, one function each, drawn in ``SECTIONS`` order under collapsing headers.

Each takes the ``Panel`` (its actions and the state it keeps between frames) and the newest
snapshot; they read the world only from the snapshot and change it only through the panel's
actions (docs/architecture.md#from-a-slider-to-the-solver).
"""

from __future__ import annotations

import dataclasses
import math
import time
from typing import TYPE_CHECKING

import numpy as np
from imgui_bundle import imgui, implot

from app.frame_pace import CLIP_FRAME_INTERVAL, CLIP_VIEW_SCALE
from app.panel.actions import own_materials
from app.panel.joints import joints
from app.panel.overlays import PANEL_WIDTH
from app.panel.timeline import history_bytes
from app.panel.widgets import (
    AMBER,
    DIM,
    GREEN,
    RED,
    begin_table,
    ellipsis,
    path_field,
    power_of_ten,
    row_label,
    text_row,
    units,
    vec_row,
)
from app.render.view import ALL_BODIES_UP_TO, GizmoOptions
from app.video.clip import last_seconds
from app.video.recorder import FPS_CHOICES
from physics.geometry.meshes import BUILTIN_SIZES
from physics.geometry.rotation import (
    quat_to_bryant_xyz,
    quat_to_crv,
    quat_to_euler_zxz,
    quat_to_rodrigues,
    quat_to_rotvec,
)
from physics.settings import (
    HISTORY_SECONDS,
    MAX_HISTORY_SECONDS,
    MAX_TIME_SCALE,
    MIN_TIME_SCALE,
    SOLVER_ITERATIONS_RANGE,
)
from physics.simulation import Snapshot

if TYPE_CHECKING:
    from app.panel import Panel

HZ_RANGE = (30.0, 2000.0)          # physics rate slider, Hz (log)
HISTORY_RANGE = (HISTORY_SECONDS, MAX_HISTORY_SECONDS)  # the history length slider, s
ARROW_SCALE_RANGE = (0.05, 20.0)   # gizmo arrow length multiplier (log)
FRICTION_MAX = 2.0       # slider end; Ctrl+click the slider to type a larger μ
GIMBAL_WARN = 0.02       # |sin| below which Euler/Bryant angles are flagged as near gimbal lock
GIZMO_LABELS = {  # GizmoOptions field → checkbox label
    "angular_momentum": "angular momentum L",
    "angular_velocity": "angular velocity ω",
    "principal_axes": "principal axes",
    "inertia_ellipsoid": "inertia ellipsoid",
    "polhode": "polhode (ω-tip trail)",
    "centre_of_mass": "centre of mass",
    "contacts": "contacts",
    "velocity": "velocity",
    "collision_hulls": "collision hulls",
    "bounding_box": "bounding box (principal axes)",
    "joints": "joints (anchors, axes, limits, force)",
    "selected_only": "selected body only",
}


def simulation(panel: Panel, s: Snapshot) -> None:
    paused = panel._shown("paused", s.paused)
    if imgui.button("  Play  " if paused else "Pause", (80, 0)):
        panel.toggle_pause()
    imgui.same_line()
    if imgui.button("Step", (60, 0)):
        panel.step_once()
    imgui.same_line()
    if imgui.button("Reset", (60, 0)):
        panel.reset()
    imgui.same_line()
    imgui.text_colored(AMBER if paused else GREEN, "paused" if paused else "running")

    now = time.perf_counter()
    wall, step, rate = panel._rate
    if now - wall >= 0.5:
        rate = max(0.0, (s.step - step) / (now - wall))
        panel._rate = (now, s.step, rate)
    imgui.text(f"t = {s.time:.3f} s    {rate:.0f} steps/s    dt = {1000 * s.dt:.2f} ms")
    sleeping = int(np.count_nonzero(s.asleep))
    imgui.text(f"{len(s.contact_points)} contacts    {sleeping} of {len(s.ids)} bodies asleep")
    imgui.set_item_tooltip("contact points that pushed in the last step (body–body and "
                           "walls); sleeping bodies rest until something touches them")
    lag = panel._lag.update(s.time_dropped, now)
    if lag is not None:
        imgui.text_colored(RED if lag == "BEHIND" else DIM,
                           f"{lag}: {s.time_dropped:.2f} s of sim time dropped to stay "
                           "real-time")
        imgui.set_item_tooltip("The physics could not keep up with wall time, so the "
                               "simulation runs in slow motion instead of spiralling.")

    scale = panel._shown("time_scale", s.time_scale)
    panel._item_width = imgui.calc_item_width()
    changed, scale = imgui.slider_float("time scale", scale, MIN_TIME_SCALE, MAX_TIME_SCALE,
                                        "%.2f×", imgui.SliderFlags_.logarithmic)
    panel._remember("time_scale")
    if changed:
        panel.set_time_scale(min(max(scale, MIN_TIME_SCALE), MAX_TIME_SCALE))
    iterations = int(panel._shown("solver_iterations", s.solver_iterations))
    panel._item_width = imgui.calc_item_width()
    changed, iterations = imgui.input_int("solver iterations", iterations)
    panel._remember("solver_iterations")
    imgui.set_item_tooltip("sequential-impulse sweeps per step: more make stacks stiffer "
                           "and cost more time (1…1000)")
    if changed:
        panel.set_solver_iterations(min(max(iterations, SOLVER_ITERATIONS_RANGE[0]),
                                           SOLVER_ITERATIONS_RANGE[1]))
    hz = panel._shown("hz", s.hz)
    changed, hz = imgui.slider_float("physics rate", hz, *HZ_RANGE, "%.0f Hz",
                                     imgui.SliderFlags_.logarithmic)
    if changed:
        panel.set_hz(min(max(round(hz), HZ_RANGE[0]), HZ_RANGE[1]))

    gravity = np.asarray(panel._shown("gravity", s.gravity), dtype=float)
    on = bool(np.any(gravity != 0.0))
    changed, on_now = imgui.checkbox("gravity", on)
    if changed:
        if on_now:
            panel.set_gravity(panel._gravity_off)
        else:
            panel._gravity_off = gravity.copy()
            panel.set_gravity(np.zeros(3))
    imgui.same_line()
    imgui.set_next_item_width(-1)
    shown = gravity if on else panel._gravity_off
    changed, vector = imgui.drag_float3("##gravity", shown.tolist(), 0.05, -100.0, 100.0,
                                        "%.2f")
    imgui.set_item_tooltip("gravity vector, m/s² (Y up)")
    if changed:
        if on:
            panel.set_gravity(vector)
        else:
            panel._gravity_off = np.asarray(vector, dtype=float)


def materials(panel: Panel, s: Snapshot) -> None:
    restitution = panel._shown("restitution", s.restitution)
    panel._item_width = imgui.calc_item_width()
    changed, restitution = imgui.slider_float("restitution", restitution, 0.0, 1.0, "%.2f")
    panel._remember("restitution")
    imgui.set_item_tooltip("world default bounce: 0 = no bounce, 1 = elastic")
    if changed:
        panel.set_restitution(min(max(restitution, 0.0), 1.0))
    friction = panel._shown("friction", s.friction)
    panel._item_width = imgui.calc_item_width()
    changed, friction = imgui.slider_float("friction", friction, 0.0, FRICTION_MAX, "%.2f")
    panel._remember("friction")
    imgui.set_item_tooltip("world default Coulomb μ (Ctrl+click to type a larger value)")
    if changed:
        panel.set_friction(max(friction, 0.0))
    imgui.text_colored(DIM, "Per-body overrides: in the Inspector.")


def bodies(panel: Panel, s: Snapshot) -> None:
    state = panel.state
    imgui.text(f"{len(s.ids)} bodies")
    if state.loading > 0:
        imgui.same_line()
        imgui.progress_bar(-1.0 * imgui.get_time(), (-1, 0),
                           f"loading {state.loading} file{'s' if state.loading > 1 else ''}…")
    rows = min(max(len(s.ids), 3), 8)
    list_height = rows * imgui.get_text_line_height_with_spacing() + 8
    if imgui.begin_child("list", (-1, list_height), imgui.ChildFlags_.borders):
        ids = s.ids.tolist()
        scroll_to = (ids.index(state.selected)
                     if state.selected in ids and panel._listed != state.selected else None)
        # only the visible rows are built: hundreds of bodies cost nothing per frame
        clipper = imgui.ListClipper()
        clipper.begin(len(ids))
        if scroll_to is not None:
            clipper.include_item_by_index(scroll_to)
        while clipper.step():
            for index in range(clipper.display_start, clipper.display_end):
                _list_row(panel, ids[index], index == scroll_to)
        clipper.end()
    imgui.end_child()
    selected = state.selected if state.selected in state.bodies else None
    imgui.begin_disabled(selected is None)
    if imgui.button("Duplicate"):
        panel.duplicate(selected)
    imgui.same_line()
    if imgui.button("Delete"):
        panel.delete(selected)
    imgui.end_disabled()
    imgui.same_line()
    imgui.begin_disabled(state.selected is None)
    if imgui.button("Deselect"):
        state.selected = None
    imgui.end_disabled()

    imgui.separator_text("Add a builtin shape")
    kinds = list(BUILTIN_SIZES)
    imgui.set_next_item_width(110)
    _, panel._new_kind = imgui.combo("##kind", panel._new_kind, kinds)
    kind = kinds[panel._new_kind]
    imgui.same_line()
    size = panel._new_size[kind]
    imgui.set_next_item_width(-1)
    input_size = {1: imgui.input_float, 2: imgui.input_float2, 3: imgui.input_float3}
    if len(size) == 1:
        _, size[0] = imgui.input_float("##size", size[0], 0.0, 0.0, "%.3g")
    else:
        _, panel._new_size[kind] = input_size[len(size)]("##size", size, "%.3g")
    imgui.set_item_tooltip(f"size: {BUILTIN_SIZES[kind].meaning}")
    imgui.set_next_item_width(140)
    _, panel._new_density = imgui.input_float("kg/m³", panel._new_density, 0.0, 0.0, "%.6g")
    imgui.same_line()
    if imgui.button("Add", (-1, 0)):
        panel.add_builtin(kind, panel._new_size[kind], panel._new_density)

    imgui.separator_text("Load a mesh file")
    imgui.set_next_item_width(-70)
    panel._item_width = imgui.calc_item_width()
    entered, panel._mesh_path = imgui.input_text_with_hint(
        "##mesh", "path/to/mesh.obj", panel._mesh_path,
        imgui.InputTextFlags_.enter_returns_true)
    panel._remember("mesh_path")
    imgui.same_line()
    if imgui.button("Load", (-1, 0)) or entered:
        panel.open_files(panel._mesh_path)


def _list_row(panel: Panel, body_id: int, scroll_here: bool) -> None:
    state = panel.state
    record = state.bodies.get(body_id)
    name = record.name if record is not None else "(loading…)"
    mass = f"{record.shape.properties.mass:.3g} kg" if record is not None else ""
    clicked, _ = imgui.selectable(f"{name}##{body_id}", state.selected == body_id)
    if clicked:
        state.selected = panel._listed = body_id
    elif scroll_here:  # selected in the view: bring it into the list
        imgui.set_scroll_here_y()
        panel._listed = body_id
    imgui.same_line(PANEL_WIDTH - 150)
    imgui.text_colored(DIM, f"{mass:>10}  #{body_id}")


def inspector(panel: Panel, live: Snapshot) -> None:
    """The selected body: what it is, and its state in the world shown — the live one, or
    the moment the timeline shows once it has been re-run exactly (``AppState.moment``), said
    so above it; its settings are changed in the live world only."""
    state = panel.state
    past = state.scrub_time is not None
    s = state.moment if past else live
    panel.inspected = s
    body_id = state.selected
    if body_id is None:
        imgui.text_colored(DIM, "Click a body, or pick one in the list.")
        return
    if past:
        imgui.push_text_wrap_pos(0.0)
        imgui.text_colored(AMBER, f"The past: t = {state.scrub_time:.3f} s on the timeline "
                           f"(live: {live.time:.3f} s)" + (" · computing that moment…"
                                                           if s is None else ""))
        imgui.pop_text_wrap_pos()
        imgui.set_item_tooltip("values of the moment the timeline shows; Resume from here "
                               "to change it, Space to go back to the live world")
        if s is None:
            return
    record = state.bodies.get(body_id)
    rows = np.flatnonzero(s.ids == body_id)
    if record is None or not len(rows):
        imgui.text_colored(DIM, f"Body #{body_id} is not in the scene"
                           + (" at that moment." if past else "."))
        return
    row = int(rows[0])
    shape, p = record.shape, record.shape.properties
    imgui.text(f"{record.name}  #{body_id}")
    if record.source:
        imgui.text_colored(DIM, ellipsis(record.source, 46))
        imgui.set_item_tooltip(record.source)
    if begin_table("mass"):
        text_row("mass", f"{p.mass:.6g} kg")
        if p.mode == "shell":
            text_row("area", f"{p.area:.6g} m²")
        else:
            text_row("volume", f"{p.volume:.6g} m³")
        row_label("density", "type a density and press Enter: the mass properties are "
               "recomputed and the body replaced")
        imgui.set_next_item_width(150)
        unit = "kg/m²" if p.mode == "shell" else "kg/m³"
        imgui.begin_disabled(past)
        entered, density = imgui.input_float("##density", shape.density, 0.0, 0.0,
                                             f"%.6g {unit}",
                                             imgui.InputTextFlags_.enter_returns_true)
        imgui.end_disabled()
        if entered and not math.isclose(density, shape.density, rel_tol=1e-9):
            panel.set_density(body_id, density)
        text_row("inertia mode", p.mode + ("" if p.watertight else " (surface not closed)"))
        for label, value in collision_rows(record):
            text_row(label, value)
        imgui.end_table()
    imgui.push_text_wrap_pos(0.0)
    for warning in shape.warnings:
        imgui.text_colored(AMBER, warning)
    imgui.pop_text_wrap_pos()

    if begin_table("inertia"):
        vec_row("COM, mesh", p.center_of_mass, "m",
                 "centre of mass in the mesh file's own frame",
                 tiny=1e-9 * shape.bound_radius)
        vec_row("COM, world", s.pos[row], "m")
        scale = power_of_ten(p.inertia)
        captions = ("inertia tensor", units(scale, "kg·m²"), "(COM, mesh axes)")
        for caption, values in zip(captions, p.inertia):
            vec_row("", values, tooltip="about the centre of mass, in the mesh axes",
                     scale=scale, caption=caption)
        vec_row("I1 I2 I3", p.principal_moments, "kg·m²", "principal moments, ascending",
                 power_of_ten(p.principal_moments))
        imgui.end_table()

    imgui.separator_text("Orientation (principal frame to world)")
    _orientation(panel, s.quat[row])

    static = panel._shown(f"static:{body_id}", bool(s.static[row]))
    imgui.begin_disabled(past)
    changed, static = imgui.checkbox("static", static)
    imgui.end_disabled()
    panel.item_rects["static"] = (tuple(imgui.get_item_rect_min()),
                                  tuple(imgui.get_item_rect_max()))
    imgui.set_item_tooltip("scenery: never moves (infinite mass), not moved by gravity, "
                           "contacts, joints, impulses or the grab; everything collides with it")
    if changed:
        panel.set_static(body_id, static)

    imgui.separator_text("Motion")
    if begin_table("motion"):
        omega, omega_b, ang_mom = s.omega[row], s.omega_body[row], s.ang_mom[row]
        vec_row("velocity", s.vel[row], "m/s")
        vec_row("ω world", omega, "rad/s")
        vec_row("ω body", omega_b, "rad/s",
                 "w1, w2, w3: angular velocity in the principal frame (I1 ≤ I2 ≤ I3)")
        vec_row("L world", ang_mom, "kg·m²/s", "angular momentum about the centre of mass")
        text_row("|ω|", f"{np.linalg.norm(omega):.6g} rad/s")
        text_row("|L|", f"{np.linalg.norm(ang_mom):.6g} kg·m²/s")
        text_row("kinetic energy", f"{s.kinetic[row]:.6g} J")
        imgui.end_table()

    imgui.separator_text("Material overrides")
    imgui.begin_disabled(past)
    own = own_materials(s, row)
    for name, world, top in (("restitution", s.restitution, 1.0),
                             ("friction", s.friction, FRICTION_MAX)):
        value = panel._shown(f"{name}:{body_id}", own[name])
        changed, on = imgui.checkbox(f"own {name}", value is not None)
        if changed:
            panel.set_body_material(body_id, **{name: world if on else None})
        imgui.same_line(150)
        imgui.set_next_item_width(-1)
        if value is None:
            imgui.begin_disabled()
            imgui.slider_float(f"##{name}", world, 0.0, top, "%.2f (world default)")
            imgui.end_disabled()
        else:
            changed, value = imgui.slider_float(f"##{name}", value, 0.0, top, "%.2f")
            if changed:
                panel.set_body_material(body_id, **{name: max(0.0, min(value, top))})
    imgui.end_disabled()


def collision_rows(record) -> list[tuple[str, str]]:
    """The inspector's rows (label, value) on how a ``BodyRecord`` collides: its convex pieces
    and how much they overfill the mesh, or its sphere or hull."""
    if not record.pieces:
        return [("collides as", "its sphere" if record.shape.radius > 0 else "its convex hull")]
    rows = [("collides as", f"{len(record.pieces)} convex pieces")]
    if record.volume_excess is not None:
        rows.append(("pieces' volume", f"{100 * record.volume_excess:+.1f} % over the mesh"))
    return rows


def _orientation(panel: Panel, q) -> None:
    if not begin_table("orientation"):
        return
    q = np.asarray(q, dtype=float)
    rotvec = quat_to_rotvec(q)
    euler = quat_to_euler_zxz(q)
    bryant = quat_to_bryant_xyz(q)
    text_row("quaternion w", f"{q[0]:.4f}")
    vec_row("quaternion x y z", q[1:], scale=1.0)
    vec_row("rotation vector", rotvec, f"{np.degrees(np.linalg.norm(rotvec)):.1f}°",
             "θ n, rad")
    vec_row("Rodrigues", quat_to_rodrigues(q), "", "2 tan(θ/2) n", 1.0)
    vec_row("CRV", quat_to_crv(q), "", "conformal rotation vector 4 tan(θ/4) n", 1.0)
    vec_row("Euler z-x-z", np.degrees(euler), "°", "ψ, θ, φ: z, then x', then z''", 1.0)
    vec_row("Bryant x-y-z", np.degrees(bryant), "°", "φ, ψ, θ about fixed x, y, z", 1.0)
    imgui.end_table()
    notes = []
    if abs(math.sin(euler[1])) < GIMBAL_WARN:
        notes.append("Euler z-x-z near gimbal lock (θ ≈ 0° or 180°): only ψ ± φ is "
                     "defined; ψ and φ are shown with φ taking the rest.")
    if abs(math.cos(bryant[1])) < GIMBAL_WARN:
        notes.append("Bryant x-y-z near gimbal lock (ψ ≈ ±90°): only θ − φ (at +90°) or "
                     "θ + φ (at −90°) is defined.")
    if abs(q[0]) / np.linalg.norm(q) < GIMBAL_WARN:
        notes.append("Rotation near 180°: the Rodrigues parameters grow without bound.")
    imgui.push_text_wrap_pos(0.0)
    for note in notes:
        imgui.text_colored(AMBER, note)
    imgui.pop_text_wrap_pos()


_SELECTED_ONLY_TIP = (f"Draw the gizmos of the selected body alone. Turns on by itself in a scene "
                      f"of more than {ALL_BODIES_UP_TO} bodies (drawing every body's gizmos "
                      "would slow the window) until you set it.")


def gizmos(panel: Panel, s: Snapshot) -> None:
    options: GizmoOptions = panel.state.gizmos
    if options.selected_only is None and options.only_selected(len(s.ids)):
        imgui.text_colored(DIM, f"Over {ALL_BODIES_UP_TO} bodies: the selected body's gizmos "
                           "only" + ("." if panel.state.selected is not None else
                                     " (click a body)."))
    if imgui.begin_table("gizmos", 2):
        for field in dataclasses.fields(GizmoOptions):
            value = getattr(options, field.name)
            if field.name == "selected_only":  # as it applies now; a click: the user's
                value = options.only_selected(len(s.ids))
            if isinstance(value, bool):  # every toggle, also ones added later
                imgui.table_next_column()
                label = GIZMO_LABELS.get(field.name, field.name.replace("_", " "))
                changed, value = imgui.checkbox(label, value)
                if field.name == "selected_only":
                    imgui.set_item_tooltip(_SELECTED_ONLY_TIP)
                    if not changed:
                        continue
                setattr(options, field.name, value)
        imgui.end_table()
    _, options.arrow_scale = imgui.slider_float("arrow scale", options.arrow_scale,
                                                *ARROW_SCALE_RANGE, "%.2f×",
                                                imgui.SliderFlags_.logarithmic)


def plot_range(columns: np.ndarray, signed: bool) -> tuple[float, float]:
    """The y range of a plot of ``columns`` (k, c), NaN where no sample: 0 … 1.15 × the largest
    magnitude (± for a signed quantity), so a magnitude never shows below zero and a constant
    reads as a flat line; 0 … 1 (± 1) when everything is zero or missing."""
    top = 1.15 * np.nanmax(np.abs(columns)) if np.any(np.isfinite(columns)) else 1.0
    top = top if top > 0.0 else 1.0
    return (-top if signed else 0.0), top


def plots(panel: Panel, s: Snapshot) -> None:
    t, values = panel.history.series(panel.state.selected)
    if len(t) == 0:
        imgui.text_colored(DIM, "No samples yet.")
        return
    x = t - t[-1]
    # the moment the timeline shows, when the plots reach back to it: a vertical line
    shown = panel.state.scrub_time
    shown = shown if shown is not None and x[0] <= shown - t[-1] <= 0.0 else None
    imgui.text_colored(DIM, f"last {panel.history.seconds:.0f} s of sim time"
                       + ("" if panel.state.selected is not None else "; select a body"))
    # (title, unit, signed, (column, legend)…); y spans 0…max (or ±max for ω) so a
    # conserved quantity reads as a flat line, not as magnified rounding noise
    plots = (("Kinetic energy", "J", False, ((0, "total"), (1, "selected"))),
             ("|L| of the selected body", "kg·m²/s", False, ((2, "|L|"),)),
             ("ω in the body frame", "rad/s", True, ((3, "w1"), (4, "w2"), (5, "w3"))))
    for title, unit, signed, lines in plots:
        low, top = plot_range(values[:, [column for column, _ in lines]], signed)
        if implot.begin_plot(title, (-1, 165)):
            implot.setup_axes("s", unit)
            implot.setup_axis_limits(implot.ImAxis_.x1, -panel.history.seconds, 0.0,
                                     imgui.Cond_.always)
            implot.setup_axis_limits(implot.ImAxis_.y1, low, top, imgui.Cond_.always)
            implot.setup_axis_ticks(implot.ImAxis_.x1, -panel.history.seconds, 0.0, 5)
            implot.setup_legend(implot.Location_.north_west)
            for column, label in lines:
                implot.plot_line(label, x, np.ascontiguousarray(values[:, column]))
            if shown is not None:
                implot.plot_inf_lines("shown", np.array([shown - t[-1]]))
            implot.end_plot()


def scenes(panel: Panel, s: Snapshot) -> None:
    imgui.text("Built-in scenes")
    for path in panel._builtin_scenes:
        if imgui.button(path.stem):
            panel.state.request_files([str(path)])
        imgui.set_item_tooltip(str(path))
        imgui.same_line()
    imgui.new_line()
    imgui.separator_text("Open a scene file")
    go, panel._scene_path = path_field("Open", "path/to/scene.toml", panel._scene_path)
    if go:
        panel.open_files(panel._scene_path)
    imgui.separator_text("Save the current scene")
    if not panel._save_path and panel.state.scene_path is not None:
        panel._save_path = str(panel.state.scene_path)
    go, panel._save_path = path_field("Save", "path/to/saved.toml", panel._save_path)
    if go:
        panel.save_scene(panel._save_path)
    imgui.text_colored(DIM, "Saves poses, velocities, materials and settings.")


def recording(panel: Panel, s: Snapshot) -> None:
    settings = panel.state.recording
    active = settings.seconds is not None
    if active:
        imgui.push_style_color(imgui.Col_.button, imgui.ImVec4(0.62, 0.12, 0.12, 1.0))
    clicked = imgui.button("Stop  (F9)" if active else "Record  (F9)", (120, 0))
    panel._item_width = 120.0
    panel._remember("record")
    if active:
        imgui.pop_style_color()
    if clicked:
        settings.toggle()
    imgui.same_line()
    if imgui.button("Screenshot  (F12)", (-1, 0)):
        settings.screenshot()
    imgui.begin_disabled(active)  # size and rate are fixed while a video is being written
    _, settings.include_panel = imgui.checkbox("include panel", settings.include_panel)
    panel._item_width = imgui.get_frame_height()
    panel._remember("include_panel")
    for fps in FPS_CHOICES:
        imgui.same_line()
        if imgui.radio_button(f"{fps} fps", settings.fps == fps):
            settings.fps = fps
    imgui.end_disabled()
    imgui.set_item_tooltip("video frames per second of simulation time: slow motion "
                           "records as slow motion, a slow machine still records smoothly")
    imgui.push_text_wrap_pos(0.0)
    imgui.text_colored(DIM, f"Folder: {settings.folder}")
    if settings.last_file is not None:
        imgui.text(f"Last saved: {settings.last_file}")
    imgui.pop_text_wrap_pos()


# under the progress bar: the 3D view redraws less often meanwhile (and more coarsely below
# full scale), so the user knows why (app/frame_pace.py)
VIEW_WHILE_CLIP = (f"the view redraws at {1 / CLIP_FRAME_INTERVAL:.0f} fps meanwhile"
                   + (f", at {CLIP_VIEW_SCALE:.0%} resolution" if CLIP_VIEW_SCALE < 1 else ""))


def after_the_fact(panel: Panel, s: Snapshot) -> None:
    """The history kept for the timeline (its length, its memory), a span of it saved as a
    clip (with a progress bar while it renders) and the whole of it saved as a replay file."""
    settings, history = panel.state.recording, panel.state.sim.history
    first, _, last = history.span()
    seconds = history.seconds
    panel._item_width = imgui.calc_item_width()
    changed, seconds = imgui.slider_float("history", seconds, HISTORY_RANGE[0],
                                          HISTORY_RANGE[1], "%.0f s")
    panel._remember("history_seconds")
    if changed:
        panel.set_history_seconds(seconds)
    imgui.set_item_tooltip("how much of the past the timeline keeps, up to ten minutes")
    imgui.text_colored(DIM, f"holds {last - first.time:.0f} s in "
                            f"{history_bytes(history) / 1e6:.1f} MB")
    t0, t1 = settings.clip_span or last_seconds(history)
    t0, t1 = max(t0, first.time), min(t1, last)
    panel._item_width = imgui.calc_item_width()
    changed, span = imgui.drag_float2("clip span", [t0, t1], 0.02, first.time, last, "%.2f s")
    panel._remember("clip_span")
    if changed:
        settings.clip_span = (min(span), max(span))
    shown = panel.state.scrub_time
    imgui.begin_disabled(shown is None)
    if imgui.button("start here"):
        settings.clip_span = (shown, max(shown, t1))
    panel._item_width = imgui.get_item_rect_size().x
    panel._remember("clip_start_here")
    imgui.same_line()
    if imgui.button("end here"):
        settings.clip_span = (min(t0, shown), shown)
    panel._item_width = imgui.get_item_rect_size().x
    panel._remember("clip_end_here")
    imgui.end_disabled()
    imgui.set_item_tooltip("the moment the timeline shows (drag it back first)")
    imgui.same_line()
    if imgui.button("last 10 s"):
        settings.clip_span = None
    for fps in FPS_CHOICES:
        if imgui.radio_button(f"{fps} fps##clip", settings.clip_fps == fps):
            settings.clip_fps = fps
        panel._item_width = imgui.get_frame_height()
        panel._remember(f"clip_fps_{fps}")
        imgui.same_line()
    busy = settings.clip is not None
    imgui.begin_disabled(busy)
    if imgui.button("Save clip  (F10: last 10 s)", (-1, 0)):
        settings.save_clip(t0, t1, settings.clip_fps)
    imgui.end_disabled()
    panel._item_width = imgui.get_item_rect_size().x
    panel._remember("clip_save")
    if busy:
        clip = settings.clip
        imgui.progress_bar(clip.progress, (-1, 0), f"{clip.frames_done} / {clip.count} frames")
        panel._item_width = imgui.get_item_rect_size().x
        panel._remember("clip_progress")
        imgui.text_colored(DIM, VIEW_WHILE_CLIP)
        panel._item_width = imgui.get_item_rect_size().x
        panel._remember("clip_view_note")
    else:
        panel.item_rects.pop("clip_progress", None)
        panel.item_rects.pop("clip_view_note", None)
    imgui.separator_text("Replay file")
    imgui.push_text_wrap_pos(0.0)
    imgui.text_colored(DIM, "The world at the history's start as a scene, and every command "
                            "since at its step (tumble simulate/record run it; drop it to open)")
    imgui.pop_text_wrap_pos()
    go, panel._replay_path = path_field("Save", "(a new file in the folder)",
                                        panel._replay_path)
    panel._item_width = imgui.get_item_rect_size().x
    panel._remember("replay_save")
    if go:
        panel.save_replay(panel._replay_path)


SECTIONS = (("Simulation", simulation), ("Recording", recording),
            ("After the fact", after_the_fact), ("Materials", materials),
            ("Bodies", bodies), ("Inspector", inspector), ("Joints", joints), ("Gizmos", gizmos),
            ("Plots", plots), ("Scenes", scenes))
