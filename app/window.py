"""The desktop app: a pyglet window drawing the running simulation (docs/architecture.md#threads).

Threads: the physics thread (``Simulation``) steps at its fixed rate; the loader thread reads
files; this (main) thread runs pyglet's event loop, and once per display frame

    poll the loader → interpolate the latest two snapshots → FrameView → renderer (+ gizmos)
    → ImGui panel → flip

Input goes to ImGui first (its ``wants_mouse`` / ``wants_keyboard``); the 3D view gets the rest:

    left-drag       orbit                     middle-drag, Shift+left-drag   pan
    wheel           zoom                      click                          select (ray vs hull)
    Ctrl+left-drag  grab the body with a spring (release to throw it)
    Shift+click     a joint from the selected body to the body clicked, or to the world for
                    empty space: the panel's Joints section offers type, anchor and axis
    F  frame the selection (or the scene)     S  spin the selection about its intermediate axis
    Space  pause/run    →  single step    R  reset    Del  remove selection    F1  help
    F9  start/stop recording a video          F12  screenshot (PNG beside the recordings)
    Esc  clear the selection (pyglet's default, closing the window, is not wanted here)

Nothing that goes wrong in a frame, an input handler or a file ends the app: the error is logged
with its traceback, shown as a notification, and the loop goes on.

Recording (F9 or the panel's Record button): the frame is read back after the 3D view, or
after the panel with "include panel", and always before the overlay (notifications, the red
REC indicator); ``app.video.recorder.ScreenRecording`` places it in the video by simulation time and
encodes it on its writer thread. Closing the window, a resize or an encoder error finishes the
file; failures are notifications and the app goes on.

Testing/diagnostics hook: with the environment variable ``TUMBLE_STATUS_FILE=PATH`` the app
writes a small JSON object to PATH five times a second (atomically; see ``App.status``): body
count, body ids, frames drawn, the scene file last opened,
world restitution and friction, sim time, pause state, files loading, the selected body and its
centre of mass, frame rate, the longest interval between two of the last 120 frames
(``frame_gap``, s), when files were last dropped on the window (``dropped_at``:
``time.monotonic()``, a clock another process on the machine shares, so it can time what
follows a drop) and the longest interval between two frames since then
(``frame_gap_since_drop``, s), whether the floor and sky come from the still camera's cache,
window size,
the faces of each level on the GPU per mesh name (``drawn_faces``: one coarse
level while a big mesh's levels of detail are prepared), the recording (``recording``: frames
so far or null; ``last_video``: path, frames, fps and the sim times of its first and last
frames; ``last_file``), the timeline (``scrub``: the sim time shown, or null for the live
world; ``scrub_exact``: that moment is drawn re-run exactly, not from the ring;
``inspected``: the sim time and step of the world the inspector shows and the selected
body's ω in it, or null when it shows none; ``history``:
its first and last sim times; ``clip``: frames of the clip being saved; ``last_clip``: the
last one saved, with the wall seconds it took; ``clip_worker``: the clip process's pid, and
whether it is warm and alive; ``frame_interval``: s between redraws, longer
while a clip renders or the physics lags (``physics_lagging``), app/frame_pace.py;
``view_scale``: null while the 3D view is drawn on the screen, else the fraction of the
window's resolution it is drawn at offscreen) and
the panel's widget rectangles ``[x0, y0, x1, y1]`` (window pixels
from the top-left) of ``Panel.item_rects`` — so a test can drive a slider with real pointer
events; the joints (id, type, body ids, reaction force, anchor, violation), the joint draft, and
each body's centre on screen (``body_pixels``, window pixels from the top-left), so a test can
click a body; and how many dropped meshes wait for their scale (``scale_offers``).
"""

from __future__ import annotations

import collections
import dataclasses
import functools
import json
import logging
import math
import os
import sys
import threading
import time
from pathlib import Path

import moderngl
import numpy as np
import pyglet
from imgui_bundle import imgui

from app.app_state import AppState
from app.endings import watch_endings
from app.frame_pace import (
    CLIP_FRAME_INTERVAL,
    CLIP_VIEW_SCALE,
    FRAME_INTERVAL,
    FramePace,
    PhysicsFirst,
)
from app.joints import new_draft
from app.keys import KEY_BINDINGS
from app.loader import Loader
from app.mesh_scale import FIT_SIZE, draw_scale_offer
from app.panel import PANEL_WIDTH, Panel
from app.panel.timeline import ExactMoments, ring_pose, scrub_by
from app.render.camera import OrbitCamera, home_sphere
from app.render.gizmos import body_radius
from app.render.imgui_gl import ImGuiRenderer
from app.render.interpolate import RENDER_DELAY, interpolate
from app.render.picking import pick
from app.render.polhode import PolhodeTrail
from app.render.renderer import Renderer, palette_color
from app.render.scaled_view import ScaledView
from app.render.view import FrameView, frame_view
from app.resources import asset_path
from app.video.clip import clip_order, last_seconds
from app.video.clip_worker import CLIP_WORKER_DELAY, ClipWorker
from app.video.recorder import (
    RecordingError,
    ScreenRecording,
    even_size,
    prepare_folder,
    save_png,
    timestamped_path,
)
from physics.constraints.joint import WORLD
from physics.geometry.rotation import quat_to_matrix
from physics.model import WorldDef
from physics.simulation import Simulation
from physics.world import World

log = logging.getLogger("tumble")

TITLE = "Tumble"
SIZE = (1280, 720)
PHYSICS_HZ = 240.0            # until a scene sets its own
ORBIT_PER_PIXEL = 0.008       # rad
CLICK_SLOP = 4                # px a press may move and still count as a click
GRAB_FREQUENCY = 4.0          # Hz: natural frequency of the grab spring with the body's mass
SPIN_RATE = 2.0 * 2.0 * math.pi   # rad/s about the intermediate axis given by S (2 turns/s)
SPIN_WOBBLE = 0.02            # fraction about the major axis: seeds the flip (Dzhanibekov)
STATUS_INTERVAL = 0.2          # s between writes of the status file (tests wait on it)
SOFTWARE_RENDERERS = ("llvmpipe", "softpipe", "swrast")  # GL_RENDERER names of Mesa's CPU paths
STATUS_ENV = "TUMBLE_STATUS_FILE"
ERROR_REPEAT_SECONDS = 5.0    # the same error is shown at most this often
NO_POINTS = np.zeros((0, 3))


def main(files: list[str]) -> int:
    """``tumble [FILES…]``: open the window with the files (default scene when none); returns
    the exit status when the window is closed."""
    logging.basicConfig(level=logging.INFO, format="%(levelname)s: %(message)s",
                        stream=sys.stderr)
    logging.getLogger().setLevel(min(logging.getLogger().level, logging.INFO))
    try:
        app = App([Path(f) for f in files] or [asset_path("scenes/default.toml")],
                  status_path=os.environ.get(STATUS_ENV) or None)
    except _no_window_errors() as e:
        log.error("cannot open a window (%s); 'tumble simulate' and 'tumble record' run "
                  "without a display", e)
        return 1
    try:
        pyglet.app.run(None)  # the App paces its own redraws (app/frame_pace.py)
    finally:
        app.shutdown()
    return 0


def _no_window_errors() -> tuple[type[Exception], ...]:
    """What pyglet raises when it cannot open a window: a missing X display has its own
    class, outside the WindowException family."""
    errors: tuple = (pyglet.window.WindowException,)
    if sys.platform.startswith("linux"):
        from pyglet.display.xlib import NoSuchDisplayException
        errors += (NoSuchDisplayException,)
    return errors


def _create_window() -> pyglet.window.Window:
    """1280×720 resizable GL 3.3 core window, with 4× MSAA when the GPU has it.

    A software rasterizer (Mesa llvmpipe, as in CI and on machines without a GPU) gets no MSAA:
    measured here at 1280×720 it halves the frame rate of the default scene (13 → 25 fps), so
    the window is opened again without it.
    """
    # one window, one context: no hidden shadow window (pyglet creates it on the first import
    # of pyglet.window, which would also need a display before main() can report there is none)
    pyglet.options["shadow_window"] = False
    from app import xdnd_fix  # noqa: F401  (importing it patches pyglet's XDND handler)

    base = dict(major_version=3, minor_version=3, forward_compatible=True, depth_size=24,
                double_buffer=True)
    for extra in (dict(sample_buffers=1, samples=4), {}):
        try:
            window = pyglet.window.Window(*SIZE, caption=TITLE, resizable=True, vsync=True,
                                          file_drops=True, visible=False,  # shown when kept
                                          config=pyglet.gl.Config(**base, **extra))
        except pyglet.window.NoSuchConfigException:
            log.info("no OpenGL 3.3 configuration with %s", extra or "these settings")
            continue
        renderer = window.context.get_info().get_renderer()
        if extra and any(name in renderer.lower() for name in SOFTWARE_RENDERERS):
            log.info("%s renders in software: no MSAA", renderer)
            window.close()
            continue
        window.set_visible(True)
        return window
    raise pyglet.window.NoSuchConfigException("no OpenGL 3.3 core configuration available")


def _guarded(handler):
    """Run an event handler so that an exception is reported instead of ending the app."""
    @functools.wraps(handler)
    def run(self, *args):
        try:
            return handler(self, *args)
        except Exception as e:
            self.report(e, f"{handler.__name__}")
            return pyglet.event.EVENT_HANDLED
    return run


def grab_spring(mass: float) -> tuple[float, float]:
    """(stiffness N/m, damping N·s/m) of the mouse spring for a body of ``mass`` kg: natural
    frequency GRAB_FREQUENCY whatever the mass (k = m ω²), critically damped (c = 2 m ω), so
    the body follows the pointer within ~1/ω without ringing."""
    omega = 2.0 * math.pi * GRAB_FREQUENCY
    return mass * omega ** 2, 2.0 * mass * omega


def ray_plane(origin, direction, point, normal) -> np.ndarray | None:
    """Where the ray origin + t·direction (t > 0) meets the plane through ``point`` with
    ``normal`` (all (3,)); None when it runs parallel to it or points away."""
    facing = float(np.dot(direction, normal))
    if abs(facing) < 1e-9:
        return None
    t = float(np.dot(np.subtract(point, origin), normal)) / facing
    return None if t <= 0 else np.asarray(origin, dtype=float) + t * np.asarray(direction)


def floor_point(origin, direction, fallback, container_size) -> np.ndarray:
    """(3,) point on the floor (y = 0) hit by the ray, kept inside the container's footprint
    (container_size (3,) m or None); a ray that misses the floor (above the horizon) drops at
    the point under ``fallback`` (the camera's target)."""
    point = ray_plane(origin, direction, (0.0, 0.0, 0.0), (0.0, 1.0, 0.0))
    point = np.array(fallback if point is None else point, dtype=float)
    point[1] = 0.0
    if container_size is not None:
        half = np.asarray(container_size, dtype=float)[[0, 2]] / 2
        point[[0, 2]] = np.clip(point[[0, 2]], -half, half)
    return point


def spin_impulses(pos, quat, moments) -> list[tuple[np.ndarray, np.ndarray]]:
    """Two (impulse (3,) N·s, world point (3,)) pairs that spin a body at pos (3,), quat (4,)
    with principal moments (3,) by SPIN_RATE about its intermediate axis (plus SPIN_WOBBLE of
    that about the major axis, which seeds the Dzhanibekov flip) without moving its centre of
    mass. The angular impulse ΔL = R·(0, I2 ω, wobble·I3 ω) is given as a couple, +F at
    c + u and −F at c − u with unit u ⊥ ΔL: ΔL = 2 u × F, and F = ½ ΔL × u since
    u × (ΔL × u) = ΔL."""
    axes = quat_to_matrix(np.asarray(quat, dtype=float))  # columns: principal axes, world
    delta_l = axes @ (SPIN_RATE * np.array([0.0, moments[1], SPIN_WOBBLE * moments[2]]))
    direction = delta_l / np.linalg.norm(delta_l)
    u = np.cross(direction, [1.0, 0.0, 0.0] if abs(direction[0]) < 0.9 else [0.0, 1.0, 0.0])
    u /= np.linalg.norm(u)
    force = 0.5 * np.cross(delta_l, u)
    centre = np.asarray(pos, dtype=float)
    return [(force, centre + u), (-force, centre - u)]


class App:
    """Everything the window shows and owns; pyglet calls its ``on_*`` handlers."""

    def __init__(self, files: list[Path], status_path: str | None = None):
        self.window = _create_window()
        self.ctx = moderngl.create_context()  # pyglet's context, current after creation
        log.info("OpenGL: %s (%s), %d samples", self.ctx.info["GL_RENDERER"],
                 self.ctx.info["GL_VERSION"], self.window.config.samples or 0)
        self.sim = Simulation(World(WorldDef()), hz=PHYSICS_HZ)
        self.state = AppState(sim=self.sim)
        self.loader = Loader(self.state)
        self.state.request_files = self.loader.request
        self.camera = OrbitCamera()
        self.renderer = Renderer(self.ctx)
        self.scaled_view = ScaledView(self.ctx)  # the 3D view while a clip renders
        self.ui = ImGuiRenderer(self.ctx)
        imgui.get_io().config_error_recovery_enable_assert = False  # recover at the frame end
        self.panel = Panel(self.state)
        self.polhode = PolhodeTrail()
        self.status_path = status_path
        self.closed = False
        self.shutting_down = False  # set when shutdown() begins (app/endings.py reads it)
        self._view: FrameView | None = None
        self._shapes_in_use: frozenset = frozenset()
        self._seen_ids: set[int] = set()
        self._press = None            # (x, y, button, modifiers) of a press the 3D view owns
        self._dragged = False
        self._grab = None             # (body id, plane point (3,), plane normal (3,), anchor)
        self._fit_size = [FIT_SIZE]   # m: "fit to" of the scale offer, as last typed
        self._last_frame = time.perf_counter()
        self._frame_times: collections.deque = collections.deque(maxlen=120)
        self._frames = 0  # frames drawn (the status file's "frames")
        self._errors: dict[str, float] = {}
        self._framed_container = ()   # (container size, bodies framed) of the last home view
        self._last_pose: tuple = ()   # camera pose and framebuffer size of the previous frame
        self.recording: ScreenRecording | None = None
        # held while a recording is stopped: an ending's watchdog (app/endings.py) that comes
        # while the main thread stops it waits until the file is finished, not ends the process
        # half-way through (reentrant: an X error handler may run on a thread that holds it)
        self._recording_stop = threading.RLock()
        self._last_video: dict | None = None      # the status file's "last_video"
        self._last_clip: dict | None = None       # the status file's "last_clip"
        self._shown_time = 0.0                    # sim time of the pose drawn this frame, s
        self._moments = ExactMoments()            # the timeline's moment, re-run exactly
        self._scrub_exact = False                 # this frame shows it (the status file's)
        self._screenshot_wanted = False
        self._view_scale: float | None = None     # this frame's _scale_of_view
        self._dropped_at: float | None = None     # time.monotonic() of the last file drop
        self._gap_since_drop = 0.0                # s: longest frame interval since that drop
        self.state.recording.toggle = self.toggle_recording
        self.state.recording.screenshot = self.request_screenshot
        self.state.recording.save_clip = self.save_clip

        # the app's handlers first, ImGui's pushed on top: ImGui sees every event first and
        # passes it on (its handlers return None); bound methods are held weakly by pyglet,
        # so self keeps both objects alive (recipe 03's pitfall)
        self.window.push_handlers(self)
        watch_endings(self)
        self.window.push_handlers(self.ui)
        self.ui.on_resize(*self.window.get_size())

        self.pace = FramePace(self._redraw, FRAME_INTERVAL)
        self.physics_first = PhysicsFirst()  # fewer redraws while the physics lags
        self.clip_worker = ClipWorker()
        pyglet.clock.schedule_once(self._start_clip_worker, CLIP_WORKER_DELAY)
        self.sim.start()
        self.loader.request(files, set_reset_point=True)
        if status_path:
            pyglet.clock.schedule_interval(self._write_status, STATUS_INTERVAL)

    # ---- errors -------------------------------------------------------------------------------
    def report(self, error: Exception, where: str) -> None:
        """Log the traceback and show a notification; an error repeating every frame is
        reported again only every few seconds."""
        text = f"unexpected error in {where}: {type(error).__name__}: {error}"
        now = time.monotonic()
        if now - self._errors.get(text, -math.inf) < ERROR_REPEAT_SECONDS:
            return
        self._errors[text] = now
        self.state.notifications.error(text)  # shown, and logged as one line
        log.error("where it happened (%s):", where, exc_info=error)

    # ---- the frame ----------------------------------------------------------------------------
    def _redraw(self, dt: float) -> None:
        """What pyglet's own pacing does each frame: the window drawn and flipped while it is
        open."""
        if self.window in pyglet.app.windows:
            self.window.draw(dt)

    def on_draw(self):
        if self.closed:
            return pyglet.event.EVENT_HANDLED
        ui_open = False
        try:
            now = time.perf_counter()
            dt, self._last_frame = now - self._last_frame, now
            self._frame_times.append(now)
            if self._dropped_at is not None:  # the first interval holds the drop's handling
                self._gap_since_drop = max(self._gap_since_drop, dt)
            self._frames += 1
            self.loader.poll()
            self._poll_clip()
            prev, new = self.sim.latest_two()
            self._pace_for(new, now)
            self._frame_new_container(new)
            self._forget_removed(new)
            view = self._frame_view(prev, new, now - RENDER_DELAY)
            self._view = view
            self._release_unused_meshes(view)
            width, height = self.window.get_framebuffer_size()
            self._cache_background_while_still((width, height))
            self._view_scale = scale = self._scale_of_view()
            if scale is None:
                self.renderer.render(view, self.camera, size=(width, height),
                                     gizmos=self.state.gizmos)
            else:
                self.scaled_view.render(self.renderer, view, self.camera, (width, height),
                                        scale, gizmos=self.state.gizmos)
            capture = self._capture_hook(new.time_scale, (width, height))
            with_panel = self.state.recording.include_panel
            if capture is not None and not with_panel:
                capture()
            self.panel.record_plots(new)  # once per snapshot (it skips repeats)
            self.ui.new_frame(self.window.get_size(), dt)
            ui_open = True
            self.panel.draw(new)
            draw_scale_offer(imgui, self.state.scale_offers, self.loader.choose_scale,
                             self.panel.item_rects, self._fit_size)
            ui_open = False
            self.ui.render(before_overlay=capture if with_panel else None)
        except Exception as e:
            self.report(e, "frame")
            if ui_open:  # close the ImGui frame (error recovery ends unmatched Begin/Push)
                try:
                    self.ui.render()
                except Exception as e2:
                    log.error("ImGui could not recover from the frame error", exc_info=e2)
        return pyglet.event.EVENT_HANDLED

    def _pace_for(self, snapshot, now: float) -> None:
        """The redraw interval from the next frame on: the physics first (``PhysicsFirst``),
        and no more than ``CLIP_FRAME_INTERVAL`` allows while a clip renders."""
        interval = self.physics_first.update(snapshot.time_dropped, now)
        if self.state.recording.clip is None:
            self.pace.set_interval(interval)

    def _scale_of_view(self) -> float | None:
        """None: the 3D view is drawn on the screen; a number: through an offscreen image of
        that fraction of the window's resolution (app/render/scaled_view.py). The latter while
        a clip renders (CLIP_VIEW_SCALE, app/frame_pace.py), unless this frame is read back
        (an F9 recording, an F12 screenshot) or, at full scale, the camera moves: the image
        saves the screen's redrawing of the cached floor's depth, and without the cache there
        is nothing to save."""
        if (self.state.recording.clip is None or self.recording is not None
                or self._screenshot_wanted):
            return None
        if CLIP_VIEW_SCALE == 1.0 and not self.renderer.cache_background:
            return None
        return CLIP_VIEW_SCALE

    def _cache_background_while_still(self, size) -> None:
        """While the camera stays put, the renderer starts frames from a copy of the floor and
        sky (Renderer.cache_background: the same pixels for less work on a software renderer);
        while it moves, caching would redraw the copy every frame, so it is off. Not on a
        multisampled screen, which a copy from a single-sampled image cannot fill."""
        cam = self.camera
        pose = (cam.yaw, cam.pitch, cam.distance, cam.fov_y, *cam.target.tolist(), *size)
        still, self._last_pose = pose == self._last_pose, pose
        self.renderer.cache_background = still and not self.window.config.samples

    def _forget_removed(self, snapshot) -> None:
        """Drop records of bodies that were shown before and are gone now (removed, reset):
        ids are reused after a reset. A record whose body has not appeared yet stays; a body an
        opened replay's command made gets its record each time it appears."""
        present = set(snapshot.ids.tolist())
        for body_id in [i for i in self.state.bodies if i in self._seen_ids and i not in present]:
            del self.state.bodies[body_id]
        later = self.state.later_records  # a replay's command added it (again)
        for body_id in (present - self.state.bodies.keys()) & later.keys():
            self.state.bodies[body_id] = later[body_id]
        self._seen_ids = present
        if self.state.selected is not None and self.state.selected not in self.state.bodies:
            self.state.selected = None
        draft = self.state.joint_draft
        if draft is not None and not ({draft.first, draft.second} - {WORLD}) <= present:
            self.state.joint_draft = None  # one of its bodies went away
        if self.state.selected_joint not in snapshot.joints.ids.tolist():
            self.state.selected_joint = None

    def _frame_view(self, prev, new, render_time: float) -> FrameView:
        scrub = self.state.scrub_time
        moment = None if scrub is None else self._moments.at(self.sim.history, scrub)
        self._scrub_exact = moment is not None
        self.state.moment = shown = None if moment is None else moment.over(new)
        if scrub is None:
            pose, shown = interpolate(prev, new, render_time), new
        elif moment is None:  # poses from the ring; no contacts until the moment is exact
            pose = ring_pose(self.sim.history, scrub)
            shown = dataclasses.replace(new, contact_points=NO_POINTS, contact_normals=NO_POINTS)
        else:
            pose = moment.pose
        self._shown_time = pose.time
        records, selected = self.state.bodies, self.state.selected
        view = frame_view(pose, shown, records, palette_color, selected,
                          selected_joint=self.state.selected_joint)
        return self.polhode.attach(view, new, self.state.gizmos.polhode)  # the live trail

    def _release_unused_meshes(self, view: FrameView) -> None:
        in_use = frozenset(id(s) for s in view.shapes)
        if in_use != self._shapes_in_use:
            self._shapes_in_use = in_use
            self.renderer.release_unused(view.shapes)

    # ---- picking and dragging -----------------------------------------------------------------
    def _ray(self, x, y):
        return self.camera.ray(x, y, *self.window.get_size())

    def _pick(self, x, y):
        view = self._view
        if view is None or view.count == 0:
            return None
        origin, direction = self._ray(x, y)
        return pick(origin, direction, view.ids, view.shapes, view.pos, view.quat)

    def _start_grab(self, x, y) -> None:
        hit = self._pick(x, y)
        if hit is None:
            return
        self._select(hit)
        # the target moves on the plane through the grab point facing the camera
        self._grab = (hit.body_id, hit.point, self.camera.back.copy(), self._body_point(hit))
        self._send_grab(hit.point)

    def _send_grab(self, target) -> None:
        body_id, _, _, anchor = self._grab
        stiffness, damping = grab_spring(self.state.bodies[body_id].shape.properties.mass)
        self.sim.set_grab(body_id, anchor, target, stiffness, damping)

    def _drag_grab(self, x, y) -> None:
        _, point, normal, _ = self._grab
        target = ray_plane(*self._ray(x, y), point, normal)
        if target is not None:
            self._send_grab(target)

    def _end_grab(self) -> None:
        self._grab = None
        self.sim.clear_grab()

    def _select(self, hit) -> None:
        """Select the body a click hit (None: clear), remembering where on it (a joint made
        next starts there)."""
        self.state.selected = None if hit is None else hit.body_id
        self.state.selected_point = None if hit is None else self._body_point(hit)

    def _body_point(self, hit) -> np.ndarray:
        """(3,) m: a pick's point in its body's principal frame (as the body is drawn now)."""
        view = self._view
        row = int(np.flatnonzero(view.ids == hit.body_id)[0])
        return quat_to_matrix(view.quat[row]).T @ (hit.point - view.pos[row])

    def _draft_joint(self, x, y) -> None:
        """Shift+click: a joint from the selected body to the body clicked, or to the world
        for empty space (app/joints.py); the panel's Joints section takes it from there."""
        state, view = self.state, self._view
        if state.selected is None or view is None or not (0 <= view.selected < view.count):
            state.notifications.warning("to make a joint, click a body first, then Shift+click "
                                        "a second body or empty space (the world)")
            return
        row = view.selected
        rotation = quat_to_matrix(view.quat[row])
        first_local = (state.selected_point if state.selected_point is not None
                       else np.zeros(3))
        first_point = view.pos[row] + rotation @ first_local
        hit = self._pick(x, y)
        if hit is not None and hit.body_id == state.selected:
            state.notifications.warning("Shift+click a second body, or empty space for the "
                                        "world: a joint needs two")
            return
        if hit is None:
            point = ray_plane(*self._ray(x, y), first_point, self.camera.back)
            if point is None:
                return
            second, second_point = WORLD, point
        else:
            second, second_point = hit.body_id, self._body_point(hit)
        state.joint_draft = new_draft(state.selected, first_local, second, second_point,
                                      -self.camera.back)
        self.panel.show_joints()

    def floor_point(self, x, y) -> np.ndarray:
        """World point on the floor under window pixel (x, y) (see ``floor_point``)."""
        return floor_point(*self._ray(x, y), self.camera.target,
                           self.sim.latest().container_size)

    # ---- actions ------------------------------------------------------------------------------
    def look_at(self, center, radius: float) -> None:
        """Frame a sphere (center (3,), radius m) in the part of the window the panel leaves
        free: the camera frames it for that area's aspect, then pans it to that area's middle."""
        width, height = self.window.get_size()
        covered = min(PANEL_WIDTH, width / 2) if self.state.show_panel else 0.0
        self.camera.frame(center, radius, (width - covered) / max(height, 1))
        self.camera.pan(-covered / 2, 0.0, height)

    def _frame_new_container(self, snapshot) -> None:
        """A scene with another container starts in the home view that fits it; one without
        walls, once its bodies are there, in the view that fits them and their joints."""
        size = snapshot.container_size
        key = (None if size is None else tuple(np.asarray(size, dtype=float).tolist()),
               size is None and len(snapshot.ids) > 0)
        if key != self._framed_container:
            self._framed_container = key
            # the joints' fixed points too: a pendulum is seen with its pivot
            points = np.vstack((snapshot.pos, snapshot.joints.anchor_b))
            self.look_at(*home_sphere(size, points))

    def frame_selection(self) -> None:
        """F: the selected body, else every body (else the container)."""
        view = self._view
        if view is None or view.count == 0:
            self.look_at(*home_sphere(view.container_size if view else None))  # no bodies
            return
        radii = np.array([body_radius(s) for s in view.shapes])
        if 0 <= view.selected < view.count:
            self.look_at(view.pos[view.selected], 2.0 * radii[view.selected])  # + its gizmos
            return
        low = (view.pos - radii[:, None]).min(axis=0)
        high = (view.pos + radii[:, None]).max(axis=0)
        self.look_at((low + high) / 2, float(np.linalg.norm(high - low)) / 2)

    def spin_selection(self) -> None:
        """Angular impulse about the selected body's intermediate principal axis (plus a
        little about the major one, so the Dzhanibekov flip shows up quickly)."""
        view, body_id = self._view, self.state.selected
        if view is None or body_id is None or not (0 <= view.selected < view.count):
            return
        row = view.selected
        moments = self.state.bodies[body_id].shape.properties.principal_moments
        for impulse, point in spin_impulses(view.pos[row], view.quat[row], moments):
            self.sim.apply_impulse(body_id, impulse, point)

    # ---- recording and screenshots -----------------------------------------------------------
    def toggle_recording(self) -> None:
        """F9 / Record: start a video, or finish the one being recorded."""
        if self.recording is None:
            self.start_recording()
        else:
            self.stop_recording()

    def start_recording(self) -> None:
        settings = self.state.recording
        try:
            folder = prepare_folder(settings.folder)
            path = timestamped_path(folder, self._scene_name(), ".mp4")
            size = even_size(*self.window.get_framebuffer_size())
            self.recording = ScreenRecording(path, size, settings.fps, settings.include_panel)
        except RecordingError as e:
            self.state.notifications.error(f"cannot record: {e}")
            return
        settings.seconds = 0.0
        self.state.notifications.info(f"recording {size[0]}x{size[1]} at {settings.fps} fps "
                                      f"to {path}")

    def stop_recording(self, reason: str | None = None) -> None:
        """Finish the video being recorded (if any): a playable file in every case, and a
        notification saying where it is (and why it stopped, when not by the user). A stop
        under way on another thread is waited for."""
        with self._recording_stop:
            recording, self.recording = self.recording, None
            if recording is not None:
                self._finish_recording(recording, reason)

    def _finish_recording(self, recording: ScreenRecording, reason: str | None) -> None:
        settings = self.state.recording
        settings.seconds = None
        result = recording.stop()
        settings.last_file = result.path
        self._last_video = {"path": str(result.path), "frames": result.frames,
                            "fps": result.fps, "first_time": recording.first_time,
                            "last_time": recording.last_time, "error": result.error}
        because = f" ({reason})" if reason else ""
        if result.error:
            self.state.notifications.error(f"{result.error}; {result.path} holds the first "
                                           f"{result.seconds:.1f} s")
        else:
            self.state.notifications.info(f"video saved{because}: {result.path} "
                                          f"({result.frames} frames, {result.seconds:.1f} s)")

    def save_instant_replay(self) -> None:
        """F10: the last 10 s of the history (or all of it, if shorter) saved as a video in the
        background, at the clip rate chosen in the panel and the window's size."""
        settings = self.state.recording
        self.save_clip(*last_seconds(self.sim.history), settings.clip_fps)

    def save_clip(self, t0: float, t1: float, fps: int) -> None:
        """The span [t0, t1] s of the history saved as a video in the background (the panel's
        progress bar follows it), with the view and gizmos of now."""
        settings, notifications = self.state.recording, self.state.notifications
        if settings.clip is not None:
            notifications.warning("a clip is still being saved; save the next when it is done")
            return
        try:
            order = clip_order(self.sim.history, t0, t1, fps,
                               even_size(*self.window.get_framebuffer_size()), settings.folder,
                               self._scene_name(), self.state.bodies, self.camera,
                               self.state.gizmos)
        except (ValueError, RecordingError) as e:
            notifications.error(f"cannot save the clip: {e}")
            return
        warm = self.clip_worker.ready and self.clip_worker.alive
        settings.clip = self.clip_worker.submit(order)
        self.pace.set_interval(CLIP_FRAME_INTERVAL)
        request = order.request
        notifications.info(f"saving {request.t0:.1f}…{request.t1:.1f} s at {fps} fps to "
                           f"{request.path}" + ("" if warm else " (the clip process is "
                                                "starting: its first seconds go to that)"))

    def _start_clip_worker(self, dt: float = 0.0) -> None:
        """The clip process, started once the window has drawn its first frames
        (app/video/clip_worker.py); a clip asked for sooner starts it itself."""
        if not self.shutting_down:
            self.clip_worker.start()

    def _poll_clip(self) -> None:
        """Once a clip is written: a notification, and the status file's "last_clip"."""
        self.clip_worker.poll()
        clip = self.state.recording.clip
        if clip is None or not clip.done:
            return
        self.state.recording.clip = None
        self.pace.set_interval(self.physics_first.interval)
        self.scaled_view.release()  # the view is drawn on the screen again from the next frame
        result = clip.result
        self._last_clip = {"path": str(clip.request.path), "frames": clip.frames_done,
                           "count": clip.count, "t0": clip.request.t0, "t1": clip.request.t1,
                           "fps": clip.request.fps, "error": clip.error,
                           "seconds": clip.seconds}
        if clip.error:
            self.state.notifications.error(f"clip not saved: {clip.error}")
        else:
            self.state.recording.last_file = result.path
            self.state.notifications.info(f"clip saved: {result.path} ({result.frames} frames)")

    def request_screenshot(self) -> None:
        """F12: save the next frame as PNG (3D view, with the panel if "include panel")."""
        self._screenshot_wanted = True

    def _scene_name(self) -> str:
        path = self.state.scene_path
        return path.stem if path is not None else "tumble"

    def _capture_hook(self, time_scale: float, size: tuple[int, int]):
        """What reads this frame back (recording, screenshot), or None when nothing does."""
        recording = self.recording
        if recording is not None and even_size(*size) != recording.writer.size:
            self.stop_recording("the window was resized")
            recording = None
        if recording is None and not self._screenshot_wanted:
            return None

        def capture():
            if recording is not None:
                try:
                    recording.capture(self.ctx.screen, self._shown_time, time_scale)
                except RecordingError:
                    if self.recording is recording:
                        raise
                    # stopped on another thread meanwhile (the X server gone, a signal), its
                    # file finished: this frame comes too late for it
                else:
                    self.state.recording.seconds = recording.seconds
                    if recording.writer.error:
                        self.stop_recording()
            if self._screenshot_wanted:
                self._screenshot_wanted = False
                self._screenshot(size)
            # moderngl selects GL_COLOR_ATTACHMENT0 as the read buffer, which the window's own
            # framebuffer does not have: the pixels come from its back buffer all the same, but
            # GL_INVALID_OPERATION stays pending and pyglet would raise it at its next checked
            # call (closing the window). Reading the error clears it.
            error = self.ctx.error
            if error not in ("GL_NO_ERROR", "GL_INVALID_OPERATION"):
                log.warning("OpenGL error after reading the frame back: %s", error)
        return capture

    def _screenshot(self, size: tuple[int, int]) -> None:
        """Read the frame now; encode and write the PNG on a thread (the frame goes on)."""
        width, height = size
        pixels = np.frombuffer(self.ctx.screen.read(viewport=(0, 0, width, height),
                                                    components=3), dtype=np.uint8)
        image = pixels.reshape(height, width, 3)[::-1]
        settings, notifications = self.state.recording, self.state.notifications

        def write():
            try:
                folder = prepare_folder(settings.folder)
                path = timestamped_path(folder, self._scene_name(), ".png")
                save_png(path, image)
            except RecordingError as e:
                notifications.error(f"no screenshot: {e}")
                return
            settings.last_file = path
            notifications.info(f"screenshot saved: {path}")
        threading.Thread(target=write, name="tumble-screenshot", daemon=True).start()

    # ---- pyglet events (pyglet.window is imported once _create_window set pyglet's options) --
    @_guarded
    def on_mouse_press(self, x, y, button, modifiers):
        from pyglet.window import key, mouse

        if self._ui_has(x, y):
            self._press = None
            return
        self._press, self._dragged = (x, y, button, modifiers), False
        if button == mouse.LEFT and modifiers & key.MOD_CTRL:
            self._start_grab(x, y)

    @_guarded
    def on_mouse_drag(self, x, y, dx, dy, buttons, modifiers):
        from pyglet.window import key, mouse

        if self._press is None:
            return  # the press belonged to ImGui
        px, py, button, press_modifiers = self._press
        self._dragged = self._dragged or abs(x - px) + abs(y - py) > CLICK_SLOP
        if self._grab is not None:
            self._drag_grab(x, y)
        elif buttons & mouse.MIDDLE or (buttons & mouse.LEFT and modifiers & key.MOD_SHIFT):
            self.camera.pan(dx, dy, self.window.height)
        elif buttons & mouse.LEFT and not press_modifiers & key.MOD_CTRL:
            self.camera.orbit(-dx * ORBIT_PER_PIXEL, -dy * ORBIT_PER_PIXEL)

    @_guarded
    def on_mouse_release(self, x, y, button, modifiers):
        from pyglet.window import key, mouse

        press, self._press = self._press, None
        if self._grab is not None:
            self._end_grab()
        elif press is not None and press[2] == mouse.LEFT and not self._dragged:
            if press[3] & key.MOD_SHIFT:
                self._draft_joint(x, y)
            else:
                self._select(self._pick(x, y))

    @_guarded
    def on_mouse_scroll(self, x, y, scroll_x, scroll_y):
        if not self._ui_has(x, y):
            self.camera.zoom(scroll_y)

    def _ui_has(self, x, y) -> bool:
        """The pointer's event at window pixel (x, y) (y up) belongs to ImGui, not the 3D view.
        ImGui learns where the pointer is only at its next frame, so its own answer is a frame
        late: a wheel turned right after the pointer moved onto the panel reached the camera,
        and one right after it left was lost (and a click on the timeline picked the body
        behind it). The rectangles of the panel and the timeline decide at once; beyond them,
        only a widget in use (a slider dragged off the panel) keeps the pointer."""
        rects = [self.panel.item_rects.get(name) for name in ("panel", "timeline bar")]
        top_down = self.window.height - y
        inside = any(rect[0][0] <= x <= rect[1][0] and rect[0][1] <= top_down <= rect[1][1]
                     for rect in rects if rect is not None)
        if rects[0] is None:  # the panel is hidden
            return inside or self.ui.wants_mouse
        return inside or self.ui.holds_an_item

    @_guarded
    def on_key_press(self, symbol, modifiers):
        from pyglet.window import key

        if self.ui.wants_keyboard:
            return pyglet.event.EVENT_HANDLED
        for binding in KEY_BINDINGS:  # app/keys.py: the one table of keys
            if symbol == getattr(key, binding.key):
                getattr(self, binding.action)()
                break
        return pyglet.event.EVENT_HANDLED  # never pyglet's default (Esc closes the window)

    # ---- key actions not already methods (the panel's are the same code paths as its buttons)
    def toggle_pause(self) -> None:
        self.state.scrub_time = None  # from the timeline back to the live world
        self.panel.toggle_pause()

    def step_once(self) -> None:
        if self.state.scrub_time is None:
            self.panel.step_once()
        else:
            scrub_by(self.panel, 1)

    def step_back(self) -> None:
        scrub_by(self.panel, -1)

    def reset(self) -> None:
        self.state.scrub_time = None
        self.panel.reset()

    def delete_selection(self) -> None:
        self.panel.delete(self.state.selected)

    def deselect(self) -> None:
        self.state.selected = None
        self.state.show_help = False

    def toggle_help(self) -> None:
        self.state.show_help = not self.state.show_help

    @_guarded
    def on_file_drop(self, x, y, paths):
        self._dropped_at = time.monotonic()
        self._gap_since_drop = 0.0
        log.info("dropped %s at (%d, %d)", ", ".join(Path(p).name for p in paths), x, y)
        self.loader.request(paths, drop_point=self.floor_point(x, y))

    def on_close(self):
        """Release GL objects while the context exists; pyglet then closes the window."""
        self.closed = True
        self.stop_recording("the window was closed")
        try:
            self.scaled_view.release()
            self.renderer.release()
            self.ui.shutdown()
        except Exception as e:
            log.error("releasing GL objects failed", exc_info=e)

    def shutdown(self) -> None:
        """Stop the loader and the physics thread (after the event loop ended)."""
        self.shutting_down = True  # the signal watchdog (app/endings.py) leaves it to us
        pyglet.clock.unschedule(self._write_status)
        self.pace.stop()
        pyglet.clock.unschedule(self._start_clip_worker)
        self.stop_recording("the app ended")
        self.clip_worker.close()  # a clip under way stops at a frame: its file holds those so far
        self.loader.close(timeout=1.0)  # a file still being read is abandoned (daemon thread)
        try:
            self.sim.stop()
        except TimeoutError as e:
            log.error("%s", e)
        if not self.window.has_exit:
            try:
                self.window.close()
            except pyglet.gl.lib.GLException as e:
                # an interrupt (Ctrl+C) that landed inside a GL call can leave the context
                # unusable; the video is saved and the process ends anyway, with its own status
                log.info("the window closed with its GL context already unusable (%s)", e)

    # ---- testing/diagnostics hook -------------------------------------------------------------
    def status(self) -> dict:
        """What the status file holds (module docstring)."""
        snapshot = self.sim.latest()
        rows = np.flatnonzero(snapshot.ids == self.state.selected)
        times = self._frame_times
        fps = (len(times) - 1) / (times[-1] - times[0]) if len(times) > 1 and \
            times[-1] > times[0] else 0.0
        return {
            "time": snapshot.time, "bodies": int(len(snapshot.ids)), "ids": snapshot.ids.tolist(),
            "frames": self._frames,
            "scene": None if self.state.scene_path is None else Path(self.state.scene_path).name,
            "records": len(self.state.bodies), "restitution": snapshot.restitution,
            "friction": snapshot.friction, "gravity": snapshot.gravity.tolist(),
            "paused": snapshot.paused, "loading": self.state.loading,
            "selected": self.state.selected,
            "selected_position": snapshot.pos[rows[0]].tolist() if len(rows) else None,
            "fps": round(fps, 1),
            "frame_gap": float(np.diff(times).max()) if len(times) > 1 else 0.0,
            "dropped_at": self._dropped_at,
            "frame_gap_since_drop": self._gap_since_drop,
            "background_cached": self.renderer.cache_background,
            "recording": None if self.recording is None else self.recording.frames,
            "include_panel": self.state.recording.include_panel,
            "last_video": self._last_video,
            "clip": None if self.state.recording.clip is None
            else self.state.recording.clip.frames_done,
            "last_clip": self._last_clip,
            "clip_worker": {"pid": self.clip_worker.pid, "ready": self.clip_worker.ready,
                            "alive": self.clip_worker.alive},
            "frame_interval": self.pace.interval, "view_scale": self._view_scale,
            "physics_lagging": self.physics_first.lagging,
            "scrub": self.state.scrub_time, "scrub_exact": self._scrub_exact,
            "inspected": self._inspected(),
            "history": [self.sim.history.span()[0].time, self.sim.history.span()[2]],
            "last_file": None if self.state.recording.last_file is None
            else str(self.state.recording.last_file),
            "window": list(self.window.get_size()),
            "drawn_faces": self.renderer.drawn_faces,
            "camera": [self.camera.yaw, self.camera.pitch, self.camera.distance],
            "widgets": {name: [*rect[0], *rect[1]]
                        for name, rect in self.panel.item_rects.items()},
            "joints": [{"id": int(i), "type": d.kind, "bodies": [int(d.first), int(d.second)],
                        "force": snapshot.joints.force[k].tolist(),
                        "anchor": snapshot.joints.anchor_b[k].tolist(),
                        "error": snapshot.joints.error[k].tolist()}
                       for k, (i, d) in enumerate(zip(snapshot.joints.ids,
                                                      snapshot.joints.defs))],
            "joint_draft": None if self.state.joint_draft is None
            else {"first": self.state.joint_draft.first,
                  "second": self.state.joint_draft.second,
                  "type": self.state.joint_draft.kind_name},
            "body_pixels": self._body_pixels(snapshot),
            "scale_offers": len(self.state.scale_offers),
        }

    def _inspected(self) -> dict | None:
        """The sim time of the world the inspector showed last and the selected body's ω
        (rad/s) in it; None when it showed none."""
        shown = self.panel.inspected
        if shown is None:
            return None
        rows = np.flatnonzero(shown.ids == self.state.selected)
        return {"time": shown.time, "step": shown.step,
                "omega": shown.omega[rows[0]].tolist() if len(rows) else None}

    def _body_pixels(self, snapshot) -> dict[str, list[float]]:
        """Where each body's centre is on screen now: window pixels from the top-left (what
        xdotool takes), so a test can click a body."""
        width, height = self.window.get_size()
        if len(snapshot.ids) == 0:
            return {}
        pixels = self.camera.project(snapshot.pos, width, height)
        return {str(int(i)): [float(p[0]), float(height - p[1])]
                for i, p in zip(snapshot.ids, pixels)}

    def _write_status(self, dt=0.0) -> None:
        try:
            tmp = f"{self.status_path}.tmp"
            with open(tmp, "w", encoding="utf-8") as f:
                json.dump(self.status(), f)
            os.replace(tmp, self.status_path)
        except Exception as e:
            self.report(e, "status file")
