"""The ImGui side panel: controls, inspector, plots, scenes, toasts, help
(docs/architecture.md#from-a-slider-to-the-solver).

The package: ``actions`` (every change, as commands, testable without ImGui), ``sections``
(one drawing function per section), ``history`` (the plots' ring buffers), ``widgets`` (shared
ImGui helpers), ``overlays`` (REC badge, toasts, help window); ``Panel`` ties them together.

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

import time

import numpy as np
from imgui_bundle import imgui

from app.app_state import AppState
from app.panel import overlays, sections, timeline
from app.panel.actions import PanelActions
from app.panel.history import BEHIND_SHOWN_SECONDS, HISTORY_SECONDS, History, LagIndicator
from app.panel.overlays import PANEL_WIDTH
from app.panel.widgets import DIM
from app.resources import asset_path
from physics.geometry.meshes import BUILTIN_SIZES
from physics.settings import STANDARD_GRAVITY
from physics.simulation import Snapshot

__all__ = ["BEHIND_SHOWN_SECONDS", "PANEL_WIDTH", "History", "LagIndicator", "Panel"]


class Panel(PanelActions):
    """The side panel and overlays for one ``AppState``.

    item_rects: screen rectangles ((x0, y0), (x1, y1)), ImGui pixels (y down), of the slider
    frames (labels excluded) "restitution", "friction", "time_scale" and "solver_iterations" (the
    number field with its − and + buttons at the right end), the "record" button, the
    "include_panel" checkbox box and the "mesh_path" text field from the last draw, for tests
    that drive them with real pointer events; and of the "panel" itself while it is shown and
    the "timeline bar" (the window keeps the pointer's events inside them from the 3D view);
    each section's header is "section <title>".
    inspected: the snapshot the inspector showed in the last draw (the live one, or the
    timeline's moment re-run exactly), None when it showed none (closed, hidden, or the moment
    still being computed).
    """

    def __init__(self, state: AppState, history_seconds: float = HISTORY_SECONDS):
        super().__init__(state)
        self.history = History(history_seconds)
        self.item_rects: dict[str, tuple[tuple[float, float], tuple[float, float]]] = {}
        self._recorded: Snapshot | None = None
        self.inspected: Snapshot | None = None
        self._rate = (time.perf_counter(), 0, 0.0)  # (wall s, step, steps/s) for the display
        self._lag = LagIndicator()
        self._open_all: bool | None = None
        self._open_joints = False
        self._scroll_to_draft = False
        self._listed: int | None = None  # selection the body list last scrolled to
        self._item_width = 0.0  # width of the slider about to be drawn (item_rects)
        self._gravity_off = np.array(STANDARD_GRAVITY)  # restored when gravity is switched on
        self._new_kind = 0
        self._new_size = {kind: list(size.new_body) for kind, size in BUILTIN_SIZES.items()}
        self._new_density = 1000.0
        self._mesh_path = ""
        self._scene_path = ""
        self._save_path = ""
        self._replay_path = ""
        self._builtin_scenes = sorted(asset_path("scenes").glob("*.toml"))
        self._step_errors: set[tuple[int, str]] = set()  # failed steps already reported

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

    def expand_all(self, expanded: bool = True) -> None:
        """Open (or close) every section at the next draw."""
        self._open_all = expanded

    def draw(self, snapshot: Snapshot) -> None:
        """Issue this frame's ImGui calls: the panel (if shown), toasts and the help overlay."""
        state = self.state
        if state.sim is not self._sim:  # a new simulation: nothing pending carries over
            self._sim, self._pending, self._known, self._step_errors = state.sim, {}, {}, set()
            self._broken_seen = 0
            self.history = History(self.history.seconds)
        self.process_results()
        self._report_step_errors(snapshot)
        self.report_broken_joints(snapshot)
        self.inspected = None  # until the inspector draws
        if state.show_panel:
            self._draw_panel(snapshot)
        else:
            self.item_rects.pop("panel", None)
        timeline.timeline(self, snapshot.time)
        overlays.toasts(self)
        overlays.rec_indicator(self)
        if state.show_help:
            overlays.help_window(self)

    def _report_step_errors(self, snapshot: Snapshot) -> None:
        """A step that failed (a bug; the simulation paused itself) is no command's future:
        report it from the snapshot's error list, once."""
        for error in snapshot.errors:
            key = (error.step, error.message)
            if error.seq == -1 and key not in self._step_errors:
                self._step_errors.add(key)
                what = ("the physics step failed" if error.command == "step"
                        else "the replay stopped")  # a replay's command the world refused
                self.state.notifications.error(f"{what} at step {error.step}: {error.message}")

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
            imgui.text_colored(DIM, "F1 help · drop meshes or scenes on the view")
            for title, draw in sections.SECTIONS:
                if self._open_all is not None:
                    imgui.set_next_item_open(self._open_all, imgui.Cond_.always)
                elif title == "Joints" and self._open_joints:
                    imgui.set_next_item_open(True, imgui.Cond_.always)
                    self._open_joints = False
                default = title in ("Simulation", "Materials", "Bodies", "Inspector", "Joints",
                                    "Recording")
                header_flags = imgui.TreeNodeFlags_.default_open if default else 0
                opened = imgui.collapsing_header(title, header_flags)
                self._item_width = imgui.get_item_rect_size().x
                self._remember(f"section {title}")
                if opened:
                    imgui.push_id(title)
                    draw(self, snapshot)
                    imgui.pop_id()
                    imgui.spacing()
            self._open_all = None
        imgui.end()

    def show_joints(self) -> None:
        """Open the Joints section at the next draw and scroll to it (a joint draft waits
        there)."""
        self._open_joints = self._scroll_to_draft = True

    def _remember(self, name: str) -> None:
        """Keep the last item's frame rectangle (without its label) in ``item_rects``."""
        (x0, y0), (_, y1) = imgui.get_item_rect_min(), imgui.get_item_rect_max()
        self.item_rects[name] = ((x0, y0), (x0 + self._item_width, y1))
