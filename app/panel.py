"""The ImGui side panel (docs/architecture.md#from-a-slider-to-the-solver): controls, inspector, plots, scenes, toasts, help.

``Panel(state)`` draws between ``ImGuiRenderer.new_frame`` and ``render``::

    panel.record_plots(snapshot)   # every frame (cheap; keeps the last HISTORY_SECONDS)
    panel.draw(snapshot)           # snapshot = state.sim.latest()

The panel never touches the world: every change is a command to ``state.sim`` whose Future is
watched. Futures resolve on the physics thread (physics/simulation.py: done-callbacks run there),
so their outcomes are handed back through a thread-safe queue and applied to ``AppState`` on the
render thread in ``process_results()`` (called by ``draw``): a failure becomes an error
notification, a success runs its follow-up (register a new body's record, drop a deleted one…).
The actions are public methods so the window's keys use the same code paths (Space:
``toggle_pause``, Right arrow: ``step_once``, R: ``reset``, Del: ``delete(state.selected)``).

Design choices:
- Density edit: mass properties are linear in density (m = ρV, I = ρ∫r²dV, the same for a
  shell with ρ per area), so the shape is rebuilt by scaling its ``MassProperties`` — exactly what
  ``shape_from_mesh`` / ``builtin_shape`` give at the new density (tested), but instant for a
  million-face mesh and keeping a builtin's closed-form moments and exact sphere. The body is then
  replaced (remove + add in one batch, same pose and velocities, materials and colour kept); its
  new id stays selected.
- Duplicate: the same ``Shape`` (so the renderer shares its mesh) re-added with
  ``Shape.body_def`` at the body's current pose and velocities, shifted beside it (the first of
  ±x, ±z, +y that stays inside the container).
- Reset: the world returns to its reset point; the body table is rebuilt from every record the
  panel has seen, for the ids the reset world holds (ids are never reused within one reset span).
- Per-body materials are the physics thread's: the panel shows and saves what the snapshot
  carries, so a scene's own values, a duplicate's and the panel's edits are all the same thing.
"""

from __future__ import annotations

import dataclasses
import math
import os
import queue
import time
from concurrent.futures import Future
from pathlib import Path
from typing import Callable

import numpy as np
from imgui_bundle import imgui, implot

from app.app_state import AppState
from app.render.view import GizmoOptions
from app.resources import asset_path
from app.video.recorder import FPS_CHOICES
from physics.geometry.meshes import BUILTIN_SIZES, builtin_shape
from physics.geometry.rotation import (
    quat_to_bryant_xyz,
    quat_to_crv,
    quat_to_euler_zxz,
    quat_to_rodrigues,
    quat_to_rotvec,
)
from physics.model import BodyDef
from physics.scene import BodyRecord, save_scene, scene_from_snapshot
from physics.settings import (
    MAX_TIME_SCALE,
    MIN_TIME_SCALE,
    SOLVER_ITERATIONS_RANGE,
    STANDARD_GRAVITY,
)
from physics.simulation import Snapshot

PANEL_WIDTH = 380.0      # px, the panel docked at the right edge of the window
HISTORY_SECONDS = 20.0   # s of sim time shown in the plots
HISTORY_CAPACITY = 4096  # samples kept (two per HISTORY_SECONDS / capacity at least)
HZ_RANGE = (30.0, 2000.0)          # physics rate slider, Hz (log)
ARROW_SCALE_RANGE = (0.05, 20.0)   # gizmo arrow length multiplier (log)
BEHIND_SHOWN_SECONDS = 2.0  # "BEHIND" stays red this long after sim time was last dropped
FRICTION_MAX = 2.0       # slider end; Ctrl+click the slider to type a larger μ
GIMBAL_WARN = 0.02       # |sin| below which Euler/Bryant angles are flagged as near gimbal lock

HELP_KEYS = (
    ("Space", "pause / resume"),
    ("Right arrow", "one physics step (pauses)"),
    ("R", "reset the scene to its start"),
    ("Del", "remove the selected body"),
    ("F", "frame the selection in the view"),
    ("S", "spin the selected body"),
    ("Esc", "deselect; close this help"),
    ("F1", "show / hide this help"),
    ("F9", "start / stop recording a video (Recording section)"),
    ("F12", "save a screenshot (PNG, beside the recordings)"),
)
HELP_MOUSE = (
    ("left-drag on empty space", "orbit the camera"),
    ("middle-drag, or Shift + left-drag", "pan"),
    ("wheel", "zoom"),
    ("click a body", "select it"),
    ("Ctrl + left-drag a body", "grab it with a spring; let go to throw"),
    ("drop files on the window", "meshes become bodies; a scene replaces the scene"),
)

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
    "selected_only": "selected body only",
}

_RED = imgui.ImVec4(1.0, 0.42, 0.38, 1.0)
_AMBER = imgui.ImVec4(1.0, 0.78, 0.35, 1.0)
_GREEN = imgui.ImVec4(0.45, 0.85, 0.55, 1.0)
_DIM = imgui.ImVec4(0.62, 0.65, 0.72, 1.0)
_TOAST_COLOURS = {40: (0.55, 0.13, 0.13), 30: (0.50, 0.36, 0.08)}  # logging level → rgb
_TOAST_INFO = (0.16, 0.20, 0.28)


def own_materials(snapshot: Snapshot, row: int) -> dict[str, float | None]:
    """{"restitution": …, "friction": …} of one body: its own values, None for the world's."""
    return {name: None if math.isnan(value) else float(value)
            for name, value in (("restitution", snapshot.body_restitution[row]),
                                ("friction", snapshot.body_friction[row]))}


# --------------------------------------------------------------------------------------------
# Plot history


class History:
    """The last ``seconds`` of sim time of the plotted quantities, in numpy ring buffers.

    Each sample: time t (s), the selected body's id (−1: none) and COLUMNS. Samples closer than
    ``seconds / (capacity / 2)`` in time are skipped, so even in slow motion the buffers always
    span the whole window; time going backwards (reset) clears them.
    """

    COLUMNS = ("ke_total", "ke_selected", "L_selected", "w1", "w2", "w3")

    def __init__(self, seconds: float = HISTORY_SECONDS, capacity: int = HISTORY_CAPACITY):
        self.seconds = float(seconds)
        self.capacity = int(capacity)
        self._spacing = self.seconds / (self.capacity // 2)
        self._t = np.zeros(self.capacity)                             # (cap,) s
        self._who = np.full(self.capacity, -1, dtype=np.int64)        # (cap,) body id or −1
        self._values = np.zeros((self.capacity, len(self.COLUMNS)))  # (cap, 6)
        self._next = 0   # slot the next sample goes to
        self._count = 0  # valid samples

    def clear(self) -> None:
        self._next = self._count = 0

    @property
    def last_time(self) -> float | None:
        return float(self._t[self._next - 1]) if self._count else None

    def append(self, t: float, body_id: int, values) -> None:
        """Add one sample (values: len(COLUMNS) numbers; NaN where there is no selection)."""
        last = self.last_time
        if last is not None:
            if t < last:
                self.clear()
            elif t - last < self._spacing:
                return
        self._t[self._next] = t
        self._who[self._next] = body_id
        self._values[self._next] = values
        self._next = (self._next + 1) % self.capacity
        self._count = min(self._count + 1, self.capacity)

    def series(self, body_id: int | None = None) -> tuple[np.ndarray, np.ndarray]:
        """(t (m,), values (m, 6)) of the last ``seconds``, oldest first (copies). The columns
        of the selected body are NaN (a gap in the plot) where another body was selected."""
        order = (np.arange(self._next - self._count, self._next)) % self.capacity
        t, who, values = self._t[order], self._who[order], self._values[order].copy()
        if self._count:
            keep = t >= t[-1] - self.seconds
            t, who, values = t[keep], who[keep], values[keep]
        values[who != (-1 if body_id is None else body_id), 1:] = np.nan
        return t, values


# --------------------------------------------------------------------------------------------
# The panel



class LagIndicator:
    """What the panel says about sim time dropped to stay real-time: "BEHIND" while it grows
    (and BEHIND_SHOWN_SECONDS after), "kept up" once it has stopped growing, None while none
    was ever dropped. One late batch (a resize, a big mesh loading) is no alarm: a snapshot's
    ``behind`` flag alone is not shown."""

    def __init__(self):
        self._dropped = 0.0         # sim s dropped, as last seen
        self._grew_at = -math.inf   # wall s when that last grew

    def update(self, time_dropped: float, now: float) -> str | None:
        if time_dropped > self._dropped:
            self._grew_at = now
        self._dropped = time_dropped  # a reset or a new scene starts again from 0
        if time_dropped <= 0:
            return None
        return "BEHIND" if now - self._grew_at < BEHIND_SHOWN_SECONDS else "kept up"


class Panel:
    """The side panel and overlays for one ``AppState``.

    item_rects: screen rectangles ((x0, y0), (x1, y1)), ImGui pixels (y down), of the slider
    frames (labels excluded) "restitution", "friction", "time_scale" and "solver_iterations" (the
    number field with its − and + buttons at the right end), the "record" button, the
    "include_panel" checkbox box and the "mesh_path" text field from the last draw, for tests
    that drive them with real pointer events; and of the "panel" itself while it is shown (the
    window keeps the pointer's events inside it from the 3D view).
    """

    def __init__(self, state: AppState, history_seconds: float = HISTORY_SECONDS):
        self.state = state
        self.history = History(history_seconds)
        self.item_rects: dict[str, tuple[tuple[float, float], tuple[float, float]]] = {}
        self._results: queue.SimpleQueue = queue.SimpleQueue()  # (future, what, then)
        self._pending: dict[str, tuple[object, Future]] = {}   # slider key → (value, future)
        self._known: dict[int, BodyRecord] = {}  # every record seen, for reset
        self._sim = state.sim
        self._recorded: Snapshot | None = None
        self._rate = (time.perf_counter(), 0, 0.0)  # (wall s, step, steps/s) for the display
        self._lag = LagIndicator()
        self._open_all: bool | None = None
        self._listed: int | None = None  # selection the body list last scrolled to
        self._item_width = 0.0  # width of the slider about to be drawn (item_rects)
        self._gravity_off = np.array(STANDARD_GRAVITY)  # restored when gravity is switched on
        self._new_kind = 0
        self._new_size = {kind: list(size.new_body) for kind, size in BUILTIN_SIZES.items()}
        self._new_density = 1000.0
        self._mesh_path = ""
        self._scene_path = ""
        self._save_path = ""
        self._builtin_scenes = sorted(asset_path("scenes").glob("*.toml"))
        self._step_errors: set[tuple[int, str]] = set()  # failed steps already reported

    # ---- command plumbing ------------------------------------------------------------------
    def watch(self, future: Future, what: str, then: Callable | None = None) -> Future:
        """Report the future's failure as a notification ("<what> failed: <error>"), else run
        ``then(result)`` — both on the render thread (``process_results``). The window may use
        it for the commands it sends (grab, spin)."""
        future.add_done_callback(lambda f: self._results.put((f, what, then)))
        return future

    def process_results(self) -> None:
        """Apply the outcomes of finished commands (render thread; ``draw`` calls it)."""
        self._known.update(self.state.bodies)  # records from the loader too, for reset
        while True:
            try:
                future, what, then = self._results.get_nowait()
            except queue.Empty:
                return
            if future.cancelled():
                continue
            error = future.exception()
            if error is not None:
                self.state.notifications.error(f"{what} failed: {error}")
            elif then is not None:
                then(future.result())

    def _send(self, key: str, value, future: Future, what: str) -> Future:
        """A setting's command: its value is shown until the snapshot carries it."""
        self._pending[key] = (value, future)
        return self.watch(future, what)

    def _shown(self, key: str, actual):
        """The value to show for a setting: the one just sent while its command is pending."""
        pending = self._pending.get(key)
        if pending is not None:
            if not pending[1].done():
                return pending[0]
            del self._pending[key]
        return actual

    # ---- actions (also for the window's keys) -----------------------------------------------
    def toggle_pause(self) -> Future:
        paused = not self._shown("paused", self.state.sim.latest().paused)
        return self._send("paused", paused, self.state.sim.set_paused(paused),
                          "resume" if not paused else "pause")

    def step_once(self) -> Future:
        self._pending["paused"] = (True, self.watch(self.state.sim.step_once(), "single step"))
        return self._pending["paused"][1]

    def reset(self) -> Future:
        """Back to the reset point; the body table follows (module docstring)."""
        return self.watch(self.state.sim.reset(), "reset", lambda _: self._after_reset())

    def _after_reset(self) -> None:
        state = self.state
        ids = [int(i) for i in state.sim.latest().ids]
        state.bodies.clear()
        state.bodies.update({i: self._known[i] for i in ids if i in self._known})
        if state.selected not in state.bodies:
            state.selected = None

    def set_restitution(self, value: float) -> Future:
        """World restitution; takes effect at the next step."""
        return self._send("restitution", value, self.state.sim.set_restitution(value),
                          "set restitution")

    def set_friction(self, value: float) -> Future:
        """World friction coefficient; takes effect at the next step."""
        return self._send("friction", value, self.state.sim.set_friction(value), "set friction")

    def set_time_scale(self, scale: float) -> Future:
        return self._send("time_scale", scale, self.state.sim.set_time_scale(scale),
                          "set time scale")

    def set_hz(self, hz: float) -> Future:
        return self._send("hz", hz, self.state.sim.set_hz(hz), "set physics rate")

    def set_solver_iterations(self, count: int) -> Future:
        """Sequential-impulse sweeps per step; takes effect at the next step."""
        return self._send("solver_iterations", count,
                          self.state.sim.set_solver_iterations(count), "set solver iterations")

    def set_gravity(self, gravity) -> Future:
        gravity = np.asarray(gravity, dtype=float)
        return self._send("gravity", gravity, self.state.sim.set_gravity(gravity), "set gravity")

    def set_body_material(self, body_id: int, **values) -> Future:
        """restitution= / friction=: a value overrides the world default, None returns to it."""
        future = self.state.sim.set_body_material(body_id, **values)
        for name, value in values.items():
            self._pending[f"{name}:{body_id}"] = (value, future)
        return self.watch(future, f"set {'/'.join(values)} of body #{body_id}")

    def delete(self, body_id: int | None) -> Future | None:
        """Remove a body (None: nothing to do); its record goes once the physics agrees."""
        if body_id is None:
            return None

        def done(_):
            self.state.bodies.pop(body_id, None)
            if self.state.selected == body_id:
                self.state.selected = None
        return self.watch(self.state.sim.remove_body(body_id), f"remove body #{body_id}", done)

    def duplicate(self, body_id: int) -> Future | None:
        """Add a copy of a body beside it (module docstring); the copy is selected."""
        record = self.state.bodies.get(body_id)
        row = self._row(body_id)
        if record is None or row is None:
            self.state.notifications.warning(f"body #{body_id} is not in the simulation")
            return None
        snapshot = self.state.sim.latest()
        shape = record.shape
        position, orientation = shape.mesh_pose(snapshot.pos[row], snapshot.quat[row])
        offset = self._beside(snapshot, snapshot.pos[row], shape.bound_radius)
        body = shape.body_def(position + offset, orientation, snapshot.vel[row],
                              snapshot.omega[row], **own_materials(snapshot, row))

        def done(new_id):
            self._register(dataclasses.replace(record, body_id=new_id))
            self.state.selected = new_id
        return self.watch(self.state.sim.add_body(body), f"duplicate {record.name}", done)

    @staticmethod
    def _beside(snapshot: Snapshot, centre, radius: float) -> np.ndarray:
        """Offset (3,) m to a free spot next to a body of this radius, inside the container."""
        gap = 2.0 * radius + 0.05
        candidates = np.array([[gap, 0, 0], [-gap, 0, 0], [0, 0, gap], [0, 0, -gap], [0, gap, 0]])
        if snapshot.container_size is None:
            return candidates[0]
        half = np.asarray(snapshot.container_size) / 2
        low, high = np.array([-half[0], 0.0, -half[2]]), np.array([half[0], 2 * half[1], half[2]])
        for offset in candidates:
            p = np.asarray(centre) + offset
            if np.all(p - radius >= low) and np.all(p + radius <= high):
                return offset
        return candidates[-1]

    def add_builtin(self, kind: str, size, density: float) -> Future | None:
        """Add a builtin shape at rest in the middle of the container, up in the air."""
        try:
            shape = builtin_shape(kind, size, density=density)
        except ValueError as e:  # MeshError: names the shape and the bad value
            self.state.notifications.error(str(e))
            return None
        container = self.state.sim.latest().container_size
        height = 1.5 if container is None else 0.6 * float(container[1])
        body = shape.body_def([0.0, max(height, shape.bound_radius + 0.05), 0.0])
        record = BodyRecord(-1, kind, None, None, shape)
        return self.watch(self.state.sim.add_body(body), f"add {kind}",
                          lambda new_id: self._add_done(record, new_id))

    def _add_done(self, record: BodyRecord, new_id: int) -> None:
        self._register(dataclasses.replace(record, body_id=new_id))
        self.state.selected = new_id

    def set_density(self, body_id: int, density: float) -> tuple[Future, Future] | None:
        """Give a body another density: replaced by a body with the rescaled mass properties at
        the same pose and velocities (module docstring). Returns the (remove, add) futures."""
        record = self.state.bodies.get(body_id)
        row = self._row(body_id)
        if record is None or row is None:
            self.state.notifications.warning(f"body #{body_id} is not in the simulation")
            return None
        try:
            shape = record.shape.with_density(density)
        except ValueError as e:
            self.state.notifications.error(f"{record.name}: {e}")
            return None
        s = self.state.sim.latest()
        p = shape.properties
        body = BodyDef(mass=p.mass, principal_moments=p.principal_moments, hull=shape.hull,
                       radius=shape.radius, position=s.pos[row], orientation=s.quat[row],
                       velocity=s.vel[row], angular_velocity=s.omega[row],
                       **own_materials(s, row))
        removed = self.watch(self.state.sim.remove_body(body_id),
                             f"change the density of {record.name}")

        def done(new_id):
            if removed.exception() is not None:  # the old body vanished meanwhile: undo
                self.watch(self.state.sim.remove_body(new_id), "undo the density change")
                return
            was_selected = self.state.selected == body_id
            self.state.bodies.pop(body_id, None)
            self._register(dataclasses.replace(record, body_id=new_id, shape=shape))
            if was_selected:
                self.state.selected = new_id
        added = self.watch(self.state.sim.add_body(body),
                           f"change the density of {record.name}", done)
        return removed, added

    def _register(self, record: BodyRecord) -> None:
        self.state.bodies[record.body_id] = record
        self._known[record.body_id] = record

    def open_files(self, text: str) -> None:
        """Load a mesh or open a scene by path (the window's loader, off the render thread)."""
        path = os.path.expanduser(text.strip())
        if not path:
            self.state.notifications.warning("type a file path first")
            return
        self.state.request_files([path])

    def save_scene(self, path) -> bool:
        """Write the current world (newest snapshot) as a scene file; True when written."""
        path = Path(os.path.expanduser(os.fspath(path).strip()))
        if not path.name:
            self.state.notifications.warning("type a file path to save the scene to")
            return False
        scene = scene_from_snapshot(self.state.sim.latest(), self.state.bodies)
        try:
            save_scene(scene, path)
        except (OSError, ValueError) as e:
            self.state.notifications.error(f"could not save the scene to {path}: {e}")
            return False
        self.state.scene_path = path
        self.state.notifications.info(f"saved scene {path.name}: {len(scene.bodies)} bodies")
        return True

    def _row(self, body_id: int | None) -> int | None:
        if body_id is None:
            return None
        rows = np.flatnonzero(self.state.sim.latest().ids == body_id)
        return int(rows[0]) if len(rows) else None

    # ---- plots -------------------------------------------------------------------------------
    def record_plots(self, snapshot: Snapshot) -> None:
        """Add the snapshot to the plot history (once per snapshot): total kinetic energy and,
        for the selected body, its kinetic energy, |L| and ω in the body frame."""
        if snapshot is self._recorded:
            return
        self._recorded = snapshot
        values = np.full(len(History.COLUMNS), np.nan)
        values[0] = float(np.sum(snapshot.kinetic))
        selected = self.state.selected
        rows = np.flatnonzero(snapshot.ids == selected) if selected is not None else ()
        if len(rows):
            r = rows[0]
            values[1] = snapshot.kinetic[r]
            values[2] = np.linalg.norm(snapshot.ang_mom[r])
            values[3:6] = snapshot.omega_body[r]
        self.history.append(snapshot.time, selected if len(rows) else -1, values)

    # ---- drawing -----------------------------------------------------------------------------
    def expand_all(self, expanded: bool = True) -> None:
        """Open (or close) every section at the next draw."""
        self._open_all = expanded

    def draw(self, snapshot: Snapshot) -> None:
        """Issue this frame's ImGui calls: the panel (if shown), toasts and the help overlay."""
        state = self.state
        if state.sim is not self._sim:  # a new simulation: nothing pending carries over
            self._sim, self._pending, self._known, self._step_errors = state.sim, {}, {}, set()
            self.history = History(self.history.seconds)
        self.process_results()
        self._report_step_errors(snapshot)
        if state.show_panel:
            self._draw_panel(snapshot)
        else:
            self.item_rects.pop("panel", None)
        self._draw_toasts()
        self._draw_rec_indicator()
        if state.show_help:
            self._draw_help()

    def _report_step_errors(self, snapshot: Snapshot) -> None:
        """A step that failed (a bug; the simulation paused itself) is no command's future:
        report it from the snapshot's error list, once."""
        for error in snapshot.errors:
            key = (error.step, error.message)
            if error.seq == -1 and key not in self._step_errors:
                self._step_errors.add(key)
                self.state.notifications.error(
                    f"the physics step failed at step {error.step}: {error.message}")

    def _draw_panel(self, snapshot: Snapshot) -> None:
        width, height = imgui.get_io().display_size
        imgui.set_next_window_pos((width - PANEL_WIDTH, 0.0), imgui.Cond_.always)
        imgui.set_next_window_size((PANEL_WIDTH, height), imgui.Cond_.always)
        flags = (imgui.WindowFlags_.no_move | imgui.WindowFlags_.no_resize
                 | imgui.WindowFlags_.no_saved_settings)
        expanded, _ = imgui.begin("Tumble", None, flags)
        (x, y), (w, h) = imgui.get_window_pos(), imgui.get_window_size()
        self.item_rects["panel"] = ((x, y), (x + w, y + h))
        if expanded:
            imgui.text_colored(_DIM, "F1 help · drop meshes or scenes on the view")
            sections = (("Simulation", self._simulation), ("Recording", self._recording),
                        ("Materials", self._materials_section),
                        ("Bodies", self._bodies), ("Inspector", self._inspector),
                        ("Gizmos", self._gizmos), ("Plots", self._plots),
                        ("Scenes", self._scenes))
            for title, draw in sections:
                if self._open_all is not None:
                    imgui.set_next_item_open(self._open_all, imgui.Cond_.always)
                default = title in ("Simulation", "Materials", "Bodies", "Inspector",
                                    "Recording")
                header_flags = imgui.TreeNodeFlags_.default_open if default else 0
                if imgui.collapsing_header(title, header_flags):
                    imgui.push_id(title)
                    draw(snapshot)
                    imgui.pop_id()
                    imgui.spacing()
            self._open_all = None
        imgui.end()

    def _remember(self, name: str) -> None:
        """Keep the last item's frame rectangle (without its label) in ``item_rects``."""
        (x0, y0), (_, y1) = imgui.get_item_rect_min(), imgui.get_item_rect_max()
        self.item_rects[name] = ((x0, y0), (x0 + self._item_width, y1))

    # ---- sections ----------------------------------------------------------------------------
    def _simulation(self, s: Snapshot) -> None:
        paused = self._shown("paused", s.paused)
        if imgui.button("  Play  " if paused else "Pause", (80, 0)):
            self.toggle_pause()
        imgui.same_line()
        if imgui.button("Step", (60, 0)):
            self.step_once()
        imgui.same_line()
        if imgui.button("Reset", (60, 0)):
            self.reset()
        imgui.same_line()
        imgui.text_colored(_AMBER if paused else _GREEN, "paused" if paused else "running")

        now = time.perf_counter()
        wall, step, rate = self._rate
        if now - wall >= 0.5:
            rate = max(0.0, (s.step - step) / (now - wall))
            self._rate = (now, s.step, rate)
        imgui.text(f"t = {s.time:.3f} s    {rate:.0f} steps/s    dt = {1000 * s.dt:.2f} ms")
        sleeping = int(np.count_nonzero(s.asleep))
        imgui.text(f"{len(s.contact_points)} contacts    {sleeping} of {len(s.ids)} bodies asleep")
        imgui.set_item_tooltip("contact points that pushed in the last step (body–body and "
                               "walls); sleeping bodies rest until something touches them")
        lag = self._lag.update(s.time_dropped, now)
        if lag is not None:
            imgui.text_colored(_RED if lag == "BEHIND" else _DIM,
                               f"{lag}: {s.time_dropped:.2f} s of sim time dropped to stay "
                               "real-time")
            imgui.set_item_tooltip("The physics could not keep up with wall time, so the "
                                   "simulation runs in slow motion instead of spiralling.")

        scale = self._shown("time_scale", s.time_scale)
        self._item_width = imgui.calc_item_width()
        changed, scale = imgui.slider_float("time scale", scale, MIN_TIME_SCALE, MAX_TIME_SCALE,
                                            "%.2f×", imgui.SliderFlags_.logarithmic)
        self._remember("time_scale")
        if changed:
            self.set_time_scale(min(max(scale, MIN_TIME_SCALE), MAX_TIME_SCALE))
        iterations = int(self._shown("solver_iterations", s.solver_iterations))
        self._item_width = imgui.calc_item_width()
        changed, iterations = imgui.input_int("solver iterations", iterations)
        self._remember("solver_iterations")
        imgui.set_item_tooltip("sequential-impulse sweeps per step: more make stacks stiffer "
                               "and cost more time (1…1000)")
        if changed:
            self.set_solver_iterations(min(max(iterations, SOLVER_ITERATIONS_RANGE[0]),
                                               SOLVER_ITERATIONS_RANGE[1]))
        hz = self._shown("hz", s.hz)
        changed, hz = imgui.slider_float("physics rate", hz, *HZ_RANGE, "%.0f Hz",
                                         imgui.SliderFlags_.logarithmic)
        if changed:
            self.set_hz(min(max(round(hz), HZ_RANGE[0]), HZ_RANGE[1]))

        gravity = np.asarray(self._shown("gravity", s.gravity), dtype=float)
        on = bool(np.any(gravity != 0.0))
        changed, on_now = imgui.checkbox("gravity", on)
        if changed:
            if on_now:
                self.set_gravity(self._gravity_off)
            else:
                self._gravity_off = gravity.copy()
                self.set_gravity(np.zeros(3))
        imgui.same_line()
        imgui.set_next_item_width(-1)
        shown = gravity if on else self._gravity_off
        changed, vector = imgui.drag_float3("##gravity", shown.tolist(), 0.05, -100.0, 100.0,
                                            "%.2f")
        imgui.set_item_tooltip("gravity vector, m/s² (Y up)")
        if changed:
            if on:
                self.set_gravity(vector)
            else:
                self._gravity_off = np.asarray(vector, dtype=float)

    def _materials_section(self, s: Snapshot) -> None:
        restitution = self._shown("restitution", s.restitution)
        self._item_width = imgui.calc_item_width()
        changed, restitution = imgui.slider_float("restitution", restitution, 0.0, 1.0, "%.2f")
        self._remember("restitution")
        imgui.set_item_tooltip("world default bounce: 0 = no bounce, 1 = elastic")
        if changed:
            self.set_restitution(min(max(restitution, 0.0), 1.0))
        friction = self._shown("friction", s.friction)
        self._item_width = imgui.calc_item_width()
        changed, friction = imgui.slider_float("friction", friction, 0.0, FRICTION_MAX, "%.2f")
        self._remember("friction")
        imgui.set_item_tooltip("world default Coulomb μ (Ctrl+click to type a larger value)")
        if changed:
            self.set_friction(max(friction, 0.0))
        imgui.text_colored(_DIM, "Per-body overrides: in the Inspector.")

    def _bodies(self, s: Snapshot) -> None:
        state = self.state
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
                         if state.selected in ids and self._listed != state.selected else None)
            # only the visible rows are built: hundreds of bodies cost nothing per frame
            clipper = imgui.ListClipper()
            clipper.begin(len(ids))
            if scroll_to is not None:
                clipper.include_item_by_index(scroll_to)
            while clipper.step():
                for index in range(clipper.display_start, clipper.display_end):
                    self._list_row(ids[index], index == scroll_to)
            clipper.end()
        imgui.end_child()
        selected = state.selected if state.selected in state.bodies else None
        imgui.begin_disabled(selected is None)
        if imgui.button("Duplicate"):
            self.duplicate(selected)
        imgui.same_line()
        if imgui.button("Delete"):
            self.delete(selected)
        imgui.end_disabled()
        imgui.same_line()
        imgui.begin_disabled(state.selected is None)
        if imgui.button("Deselect"):
            state.selected = None
        imgui.end_disabled()

        imgui.separator_text("Add a builtin shape")
        kinds = list(BUILTIN_SIZES)
        imgui.set_next_item_width(110)
        _, self._new_kind = imgui.combo("##kind", self._new_kind, kinds)
        kind = kinds[self._new_kind]
        imgui.same_line()
        size = self._new_size[kind]
        imgui.set_next_item_width(-1)
        input_size = {1: imgui.input_float, 2: imgui.input_float2, 3: imgui.input_float3}
        if len(size) == 1:
            _, size[0] = imgui.input_float("##size", size[0], 0.0, 0.0, "%.3g")
        else:
            _, self._new_size[kind] = input_size[len(size)]("##size", size, "%.3g")
        imgui.set_item_tooltip(f"size: {BUILTIN_SIZES[kind].meaning}")
        imgui.set_next_item_width(140)
        _, self._new_density = imgui.input_float("kg/m³", self._new_density, 0.0, 0.0, "%.6g")
        imgui.same_line()
        if imgui.button("Add", (-1, 0)):
            self.add_builtin(kind, self._new_size[kind], self._new_density)

        imgui.separator_text("Load a mesh file")
        imgui.set_next_item_width(-70)
        self._item_width = imgui.calc_item_width()
        entered, self._mesh_path = imgui.input_text_with_hint(
            "##mesh", "path/to/mesh.obj", self._mesh_path,
            imgui.InputTextFlags_.enter_returns_true)
        self._remember("mesh_path")
        imgui.same_line()
        if imgui.button("Load", (-1, 0)) or entered:
            self.open_files(self._mesh_path)

    def _list_row(self, body_id: int, scroll_here: bool) -> None:
        state = self.state
        record = state.bodies.get(body_id)
        name = record.name if record is not None else "(loading…)"
        mass = f"{record.shape.properties.mass:.3g} kg" if record is not None else ""
        clicked, _ = imgui.selectable(f"{name}##{body_id}", state.selected == body_id)
        if clicked:
            state.selected = self._listed = body_id
        elif scroll_here:  # selected in the view: bring it into the list
            imgui.set_scroll_here_y()
            self._listed = body_id
        imgui.same_line(PANEL_WIDTH - 150)
        imgui.text_colored(_DIM, f"{mass:>10}  #{body_id}")

    def _inspector(self, s: Snapshot) -> None:
        state = self.state
        body_id = state.selected
        record = state.bodies.get(body_id) if body_id is not None else None
        rows = np.flatnonzero(s.ids == body_id) if body_id is not None else ()
        if record is None or not len(rows):
            imgui.text_colored(_DIM, "Click a body, or pick one in the list."
                               if body_id is None else f"Body #{body_id} is not in the scene.")
            return
        row = int(rows[0])
        shape, p = record.shape, record.shape.properties
        imgui.text(f"{record.name}  #{body_id}")
        if record.source:
            imgui.text_colored(_DIM, _ellipsis(record.source, 46))
            imgui.set_item_tooltip(record.source)
        if _begin_table("mass"):
            _row("mass", f"{p.mass:.6g} kg")
            if p.mode == "shell":
                _row("area", f"{p.area:.6g} m²")
            else:
                _row("volume", f"{p.volume:.6g} m³")
            _label("density", "type a density and press Enter: the mass properties are "
                   "recomputed and the body replaced")
            imgui.set_next_item_width(150)
            unit = "kg/m²" if p.mode == "shell" else "kg/m³"
            entered, density = imgui.input_float("##density", shape.density, 0.0, 0.0,
                                                 f"%.6g {unit}",
                                                 imgui.InputTextFlags_.enter_returns_true)
            if entered and not math.isclose(density, shape.density, rel_tol=1e-9):
                self.set_density(body_id, density)
            _row("inertia mode", p.mode + ("" if p.watertight else " (surface not closed)"))
            imgui.end_table()
        imgui.push_text_wrap_pos(0.0)
        for warning in shape.warnings:
            imgui.text_colored(_AMBER, warning)
        imgui.pop_text_wrap_pos()

        if _begin_table("inertia"):
            _vec_row("COM, mesh", p.center_of_mass, "m",
                     "centre of mass in the mesh file's own frame",
                     tiny=1e-9 * shape.bound_radius)
            _vec_row("COM, world", s.pos[row], "m")
            scale = _scale(p.inertia)
            captions = ("inertia tensor", _units(scale, "kg·m²"), "(COM, mesh axes)")
            for caption, values in zip(captions, p.inertia):
                _vec_row("", values, tooltip="about the centre of mass, in the mesh axes",
                         scale=scale, caption=caption)
            _vec_row("I1 I2 I3", p.principal_moments, "kg·m²", "principal moments, ascending",
                     _scale(p.principal_moments))
            imgui.end_table()

        imgui.separator_text("Orientation (principal frame to world)")
        self._orientation(s.quat[row])

        imgui.separator_text("Motion")
        if _begin_table("motion"):
            omega, omega_b, ang_mom = s.omega[row], s.omega_body[row], s.ang_mom[row]
            _vec_row("velocity", s.vel[row], "m/s")
            _vec_row("ω world", omega, "rad/s")
            _vec_row("ω body", omega_b, "rad/s",
                     "w1, w2, w3: angular velocity in the principal frame (I1 ≤ I2 ≤ I3)")
            _vec_row("L world", ang_mom, "kg·m²/s", "angular momentum about the centre of mass")
            _row("|ω|", f"{np.linalg.norm(omega):.6g} rad/s")
            _row("|L|", f"{np.linalg.norm(ang_mom):.6g} kg·m²/s")
            _row("kinetic energy", f"{s.kinetic[row]:.6g} J")
            imgui.end_table()

        imgui.separator_text("Material overrides")
        own = own_materials(s, row)
        for name, world, top in (("restitution", s.restitution, 1.0),
                                 ("friction", s.friction, FRICTION_MAX)):
            value = self._shown(f"{name}:{body_id}", own[name])
            changed, on = imgui.checkbox(f"own {name}", value is not None)
            if changed:
                self.set_body_material(body_id, **{name: world if on else None})
            imgui.same_line(150)
            imgui.set_next_item_width(-1)
            if value is None:
                imgui.begin_disabled()
                imgui.slider_float(f"##{name}", world, 0.0, top, "%.2f (world default)")
                imgui.end_disabled()
            else:
                changed, value = imgui.slider_float(f"##{name}", value, 0.0, top, "%.2f")
                if changed:
                    self.set_body_material(body_id, **{name: max(0.0, min(value, top))})

    def _orientation(self, q) -> None:
        if not _begin_table("orientation"):
            return
        q = np.asarray(q, dtype=float)
        rotvec = quat_to_rotvec(q)
        euler = quat_to_euler_zxz(q)
        bryant = quat_to_bryant_xyz(q)
        _row("quaternion w", f"{q[0]:.4f}")
        _vec_row("quaternion x y z", q[1:], scale=1.0)
        _vec_row("rotation vector", rotvec, f"{np.degrees(np.linalg.norm(rotvec)):.1f}°",
                 "θ n, rad")
        _vec_row("Rodrigues", quat_to_rodrigues(q), "", "2 tan(θ/2) n", 1.0)
        _vec_row("CRV", quat_to_crv(q), "", "conformal rotation vector 4 tan(θ/4) n", 1.0)
        _vec_row("Euler z-x-z", np.degrees(euler), "°", "ψ, θ, φ: z, then x', then z''", 1.0)
        _vec_row("Bryant x-y-z", np.degrees(bryant), "°", "φ, ψ, θ about fixed x, y, z", 1.0)
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
            imgui.text_colored(_AMBER, note)
        imgui.pop_text_wrap_pos()

    def _gizmos(self, s: Snapshot) -> None:
        options: GizmoOptions = self.state.gizmos
        if imgui.begin_table("gizmos", 2):
            for field in dataclasses.fields(GizmoOptions):
                value = getattr(options, field.name)
                if isinstance(value, bool):  # every toggle, also ones added later
                    imgui.table_next_column()
                    label = GIZMO_LABELS.get(field.name, field.name.replace("_", " "))
                    _, value = imgui.checkbox(label, value)
                    setattr(options, field.name, value)
            imgui.end_table()
        _, options.arrow_scale = imgui.slider_float("arrow scale", options.arrow_scale,
                                                    *ARROW_SCALE_RANGE, "%.2f×",
                                                    imgui.SliderFlags_.logarithmic)

    def _plots(self, s: Snapshot) -> None:
        t, values = self.history.series(self.state.selected)
        if len(t) == 0:
            imgui.text_colored(_DIM, "No samples yet.")
            return
        x = t - t[-1]
        imgui.text_colored(_DIM, f"last {self.history.seconds:.0f} s of sim time"
                           + ("" if self.state.selected is not None else "; select a body"))
        # (title, unit, signed, (column, legend)…); y spans 0…max (or ±max for ω) so a
        # conserved quantity reads as a flat line, not as magnified rounding noise
        plots = (("Kinetic energy", "J", False, ((0, "total"), (1, "selected"))),
                 ("|L| of the selected body", "kg·m²/s", False, ((2, "|L|"),)),
                 ("ω in the body frame", "rad/s", True, ((3, "w1"), (4, "w2"), (5, "w3"))))
        for title, unit, signed, lines in plots:
            columns = values[:, [column for column, _ in lines]]
            top = 1.15 * np.nanmax(np.abs(columns)) if np.any(np.isfinite(columns)) else 1.0
            top = top if top > 0.0 else 1.0
            if implot.begin_plot(title, (-1, 165)):
                implot.setup_axes("s", unit)
                implot.setup_axis_limits(implot.ImAxis_.x1, -self.history.seconds, 0.0,
                                         imgui.Cond_.always)
                implot.setup_axis_limits(implot.ImAxis_.y1, -top if signed else 0.0, top,
                                         imgui.Cond_.always)
                implot.setup_axis_ticks(implot.ImAxis_.x1, -self.history.seconds, 0.0, 5)
                implot.setup_legend(implot.Location_.north_west)
                for column, label in lines:
                    implot.plot_line(label, x, np.ascontiguousarray(values[:, column]))
                implot.end_plot()

    def _scenes(self, s: Snapshot) -> None:
        imgui.text("Built-in scenes")
        for path in self._builtin_scenes:
            if imgui.button(path.stem):
                self.state.request_files([str(path)])
            imgui.set_item_tooltip(str(path))
            imgui.same_line()
        imgui.new_line()
        imgui.separator_text("Open a scene file")
        imgui.set_next_item_width(-70)
        entered, self._scene_path = imgui.input_text_with_hint(
            "##open", "path/to/scene.toml", self._scene_path,
            imgui.InputTextFlags_.enter_returns_true)
        imgui.same_line()
        if imgui.button("Open", (-1, 0)) or entered:
            self.open_files(self._scene_path)
        imgui.separator_text("Save the current scene")
        if not self._save_path and self.state.scene_path is not None:
            self._save_path = str(self.state.scene_path)
        imgui.set_next_item_width(-70)
        entered, self._save_path = imgui.input_text_with_hint(
            "##save", "path/to/saved.toml", self._save_path,
            imgui.InputTextFlags_.enter_returns_true)
        imgui.same_line()
        if imgui.button("Save", (-1, 0)) or entered:
            self.save_scene(self._save_path)
        imgui.text_colored(_DIM, "Saves poses, velocities, materials and settings.")

    def _recording(self, s: Snapshot) -> None:
        settings = self.state.recording
        active = settings.seconds is not None
        if active:
            imgui.push_style_color(imgui.Col_.button, imgui.ImVec4(0.62, 0.12, 0.12, 1.0))
        clicked = imgui.button("Stop  (F9)" if active else "Record  (F9)", (120, 0))
        self._item_width = 120.0
        self._remember("record")
        if active:
            imgui.pop_style_color()
        if clicked:
            settings.toggle()
        imgui.same_line()
        if imgui.button("Screenshot  (F12)", (-1, 0)):
            settings.screenshot()
        imgui.begin_disabled(active)  # size and rate are fixed while a video is being written
        _, settings.include_panel = imgui.checkbox("include panel", settings.include_panel)
        self._item_width = imgui.get_frame_height()
        self._remember("include_panel")
        for fps in FPS_CHOICES:
            imgui.same_line()
            if imgui.radio_button(f"{fps} fps", settings.fps == fps):
                settings.fps = fps
        imgui.end_disabled()
        imgui.set_item_tooltip("video frames per second of simulation time: slow motion "
                               "records as slow motion, a slow machine still records smoothly")
        imgui.push_text_wrap_pos(0.0)
        imgui.text_colored(_DIM, f"Folder: {settings.folder}")
        if settings.last_file is not None:
            imgui.text(f"Last saved: {settings.last_file}")
        imgui.pop_text_wrap_pos()

    # ---- overlays ----------------------------------------------------------------------------
    def _draw_rec_indicator(self) -> None:
        """A red "● REC mm:ss" badge at the top left of the 3D view while recording (drawn in
        the foreground list, which a recording does not capture)."""
        seconds = self.state.recording.seconds
        if seconds is None:
            return
        text = f"REC {int(seconds) // 60:02d}:{int(seconds) % 60:02d}"
        draw_list = imgui.get_foreground_draw_list()
        size = imgui.calc_text_size(text)
        x0, y0, pad, radius = 14.0, 14.0, 8.0, 6.0
        x1, y1 = x0 + 3 * pad + 2 * radius + size.x, y0 + 2 * pad + size.y
        draw_list.add_rect_filled((x0, y0), (x1, y1),
                                  imgui.get_color_u32(imgui.ImVec4(0.0, 0.0, 0.0, 0.6)), 6.0)
        red = imgui.get_color_u32(imgui.ImVec4(0.95, 0.15, 0.12, 1.0))
        draw_list.add_circle_filled((x0 + pad + radius, (y0 + y1) / 2), radius, red)
        draw_list.add_text((x0 + 2 * pad + 2 * radius, y0 + pad), red, text)

    def _draw_toasts(self) -> None:
        """Notifications as rounded cards at the bottom right of the 3D view, newest lowest,
        fading out (Notifications.visible gives the opacity)."""
        visible = self.state.notifications.visible()
        if not visible:
            return
        width, height = imgui.get_io().display_size
        right = width - (PANEL_WIDTH if self.state.show_panel else 0.0) - 16.0
        wrap, pad = min(440.0, max(120.0, right - 40.0)), 10.0
        font, size = imgui.get_font(), imgui.get_font_size()
        draw_list = imgui.get_foreground_draw_list()
        y = height - 16.0
        for note, opacity in reversed(visible):
            text_size = imgui.calc_text_size(note.text, False, wrap)
            x0, y0 = right - text_size.x - 2 * pad, y - text_size.y - 2 * pad
            rgb = _TOAST_COLOURS.get(note.level, _TOAST_INFO) if note.level >= 30 else _TOAST_INFO
            draw_list.add_rect_filled((x0, y0), (right, y),
                                      imgui.get_color_u32(imgui.ImVec4(*rgb, 0.92 * opacity)), 6.0)
            draw_list.add_text(font, size, (x0 + pad, y0 + pad),
                               imgui.get_color_u32(imgui.ImVec4(1.0, 1.0, 1.0, opacity)),
                               note.text, wrap)
            y = y0 - 8.0
            if y < 40.0:
                break

    def _draw_help(self) -> None:
        width, height = imgui.get_io().display_size
        view = width - (PANEL_WIDTH if self.state.show_panel else 0.0)
        imgui.set_next_window_pos((view / 2, height / 2), imgui.Cond_.always, (0.5, 0.5))
        imgui.set_next_window_bg_alpha(0.92)
        flags = (imgui.WindowFlags_.always_auto_resize | imgui.WindowFlags_.no_saved_settings
                 | imgui.WindowFlags_.no_collapse | imgui.WindowFlags_.no_move)
        expanded, still_open = imgui.begin("Help — keys and mouse (F1 closes)", True, flags)
        if expanded:
            for title, items in (("Keys", HELP_KEYS), ("Mouse", HELP_MOUSE)):
                imgui.separator_text(title)
                if imgui.begin_table(title, 2, imgui.TableFlags_.row_bg):
                    imgui.table_setup_column("input", imgui.TableColumnFlags_.width_fixed, 250)
                    imgui.table_setup_column("action", imgui.TableColumnFlags_.width_fixed, 330)
                    for what, action in items:
                        imgui.table_next_row()
                        imgui.table_next_column()
                        imgui.text_colored(_AMBER, what)
                        imgui.table_next_column()
                        imgui.text(action)
                    imgui.end_table()
            imgui.text_colored(_DIM, "ImGui gets the mouse over the panel; the view gets the rest.")
        imgui.end()
        if not still_open:
            self.state.show_help = False


# --------------------------------------------------------------------------------------------
# Small formatting helpers


def _begin_table(name: str) -> bool:
    """A quantity | x | y | z table (text of a scalar row overflows into the empty columns);
    call ``imgui.end_table()`` when it returns True."""
    if not imgui.begin_table(name, 4, imgui.TableFlags_.no_clip):
        return False
    imgui.table_setup_column("quantity", imgui.TableColumnFlags_.width_fixed, 150)
    for axis in "xyz":
        imgui.table_setup_column(axis, imgui.TableColumnFlags_.width_stretch)
    return True


def _label(text: str, tooltip: str | None = None) -> None:
    imgui.table_next_row()
    imgui.table_next_column()
    imgui.align_text_to_frame_padding()
    imgui.text_colored(_DIM, text)
    if tooltip:
        imgui.set_item_tooltip(tooltip)
    imgui.table_next_column()


def _row(label: str, value: str) -> None:
    _label(label)
    imgui.text(value)


def _scale(values) -> float:
    """A power of ten to divide small or large numbers by, so they read as x.xxx (1 if none)."""
    largest = float(np.max(np.abs(values)))
    if largest == 0.0 or 1e-2 <= largest < 1e4:
        return 1.0
    return 10.0 ** math.floor(math.log10(largest))


def _units(scale: float, unit: str) -> str:
    """``×1e-04 kg·m²``: the common factor and unit of a row of numbers."""
    return " ".join(x for x in (f"×{scale:.0e}" if scale != 1.0 else "", unit) if x)


def _vec_row(label: str, values, unit: str = "", tooltip: str | None = None,
             scale: float | None = None, caption: str | None = None, tiny: float = 0.0) -> None:
    """A row of three right-aligned numbers; the label gets their unit and common power of ten
    (``×1e-04``; ``caption`` replaces the whole label). Parts below 1e-9 of the largest, or not
    above ``tiny``, read 0 (rounding noise)."""
    values = np.asarray(values, dtype=float)
    values = np.where(np.abs(values) <= tiny, 0.0, values)
    scale = _scale(values) if scale is None else scale
    largest = float(np.max(np.abs(values)))
    # one number of decimals for the row: 4 significant digits of its largest entry
    decimals = max(0, 3 - math.floor(math.log10(largest / scale))) if largest > 0 else 0
    _label(caption if caption is not None else f"{label} {_units(scale, unit)}".strip(),
           tooltip)
    for i, v in enumerate(values):
        if i:
            imgui.table_next_column()
        text = "0" if abs(v) <= 1e-9 * largest else f"{v / scale:.{decimals}f}"
        imgui.set_cursor_pos_x(imgui.get_cursor_pos_x() + imgui.get_content_region_avail().x
                               - imgui.calc_text_size(text).x)
        imgui.text(text)


def _ellipsis(text: str, length: int) -> str:
    return text if len(text) <= length else "…" + text[-(length - 1):]
