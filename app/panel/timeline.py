"""The timeline along the bottom of the 3D view (docs/architecture.md#history): the history's
span, the time shown, a tick at each command and the span a clip would save. Dragging it
pauses and shows that moment from the ring of poses, then, once the drag pauses, from the
world of that moment re-run exactly (``ExactMoments``: velocities, ω, L and contacts for the
gizmos); Left/Right step through the ring while it is shown; "Resume from here" makes that
moment the live world (a branch: what came after is dropped), Space goes back to the live end
instead."""

from __future__ import annotations

import bisect
import dataclasses
import threading
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
from imgui_bundle import imgui

from app.panel.overlays import PANEL_WIDTH, TIMELINE_HEIGHT
from app.panel.widgets import AMBER
from app.render.interpolate import Pose
from app.video.clip import INSTANT_REPLAY_SECONDS
from physics.history import History
from physics.simulation import Snapshot, world_fields

if TYPE_CHECKING:
    from app.panel import Panel

RESUME_WIDTH = 140.0   # px, the "Resume from here" button
SIZE_EVERY = 1.0       # s of wall time between counts of the history's bytes (a walk of it)
SETTLE_SECONDS = 0.15  # s of wall time a moment shown stays put before it is re-run exactly
_sizes: dict[int, tuple[float, int]] = {}  # id(history) → (when counted, bytes)


def timeline(panel: Panel, time_now: float) -> None:
    """Draw the timeline; ``time_now``: the sim time the live view shows, s."""
    state, history = panel.state, panel.state.sim.history
    first, _, last_time = history.span()
    width, height = imgui.get_io().display_size
    right = width - (PANEL_WIDTH if state.show_panel else 0.0)
    imgui.set_next_window_pos((8.0, height - TIMELINE_HEIGHT - 8.0), imgui.Cond_.always)
    imgui.set_next_window_size((max(right - 16.0, 200.0), TIMELINE_HEIGHT), imgui.Cond_.always)
    flags = (imgui.WindowFlags_.no_title_bar | imgui.WindowFlags_.no_move
             | imgui.WindowFlags_.no_resize | imgui.WindowFlags_.no_saved_settings
             | imgui.WindowFlags_.no_scrollbar)
    imgui.begin("Timeline", None, flags)
    (x, y), (w, h) = imgui.get_window_pos(), imgui.get_window_size()
    panel.item_rects["timeline bar"] = ((x, y), (x + w, y + h))
    shown = state.scrub_time if state.scrub_time is not None else min(time_now, last_time)
    slider = imgui.get_content_region_avail().x - RESUME_WIDTH - 8.0
    panel._item_width = slider
    imgui.set_next_item_width(slider)
    changed, value = imgui.slider_float("##timeline", shown, first.time,
                                        max(last_time, first.time + 1e-6), "%.2f s")
    panel._remember("timeline")
    if imgui.is_item_activated() and not state.sim.latest().paused:
        panel.toggle_pause()
    if changed:  # the ring's moment nearest to it: Left/Right then step whole frames
        state.scrub_time = history.frame_at(float(value)).time
    _clip_span(state.recording.clip_span, first.time, last_time)
    _command_ticks(history, first.time, last_time)
    imgui.same_line()
    if state.scrub_time is not None:
        if imgui.button("Resume from here", (RESUME_WIDTH, 0.0)):
            resume_from_here(panel)
        panel._item_width = RESUME_WIDTH
        panel._remember("resume")
    else:
        imgui.text_colored(AMBER, f"{last_time - first.time:.0f} s · "
                                  f"{megabytes(history_bytes(history))}")
    imgui.end()


def megabytes(size: int) -> str:
    """size (bytes) as the timeline shows it: a tenth of a MB below 10 MB (a small scene's
    history is a fraction of one, which a whole number would show as 0), whole MB above."""
    return f"{size / 1e6:.1f} MB" if size < 9.95e6 else f"{size / 1e6:.0f} MB"


def history_bytes(history: History) -> int:
    """The history's bytes, counted at most once every SIZE_EVERY s (a walk of it)."""
    now = time.perf_counter()
    counted, size = _sizes.get(id(history), (-SIZE_EVERY, 0))
    if now - counted >= SIZE_EVERY:
        _sizes.clear()  # one history at a time
        _sizes[id(history)] = (now, size := history.nbytes())
    return size


def _clip_span(span, start: float, end: float) -> None:
    """The span the panel's "Save clip" saves, as a band under the slider (the last 10 s when
    none was chosen)."""
    t0, t1 = span or (max(start, end - INSTANT_REPLAY_SECONDS), end)
    (x0, _), (x1, y1) = imgui.get_item_rect_min(), imgui.get_item_rect_max()
    scale = (x1 - x0) / max(end - start, 1e-9)
    left, right = x0 + scale * (max(t0, start) - start), x0 + scale * (min(t1, end) - start)
    colour = imgui.get_color_u32(imgui.ImVec4(0.35, 0.65, 1.0, 0.9))
    imgui.get_window_draw_list().add_rect_filled((left, y1 + 1.0), (max(right, left + 2.0),
                                                                    y1 + 4.0), colour)


def _command_ticks(history: History, start: float, end: float) -> None:
    """A small mark above the slider at the time of each logged command."""
    commands = history.commands()
    if not commands:
        return
    (x0, y0), (x1, _) = imgui.get_item_rect_min(), imgui.get_item_rect_max()
    frames = history.frames()
    steps = np.fromiter((f.step for f in frames), np.int64, len(frames))
    times = np.fromiter((f.time for f in frames), float, len(frames))
    rows = np.minimum(np.searchsorted(steps, [c.step for c in commands]), len(frames) - 1)
    # one tick a pixel: a grab sends a command every frame it moves
    xs = np.unique(np.round(x0 + (x1 - x0) * (times[rows] - start) / max(end - start, 1e-9)))
    draw_list = imgui.get_window_draw_list()
    colour = imgui.get_color_u32(imgui.ImVec4(1.0, 0.75, 0.2, 0.9))
    for x in xs.tolist():
        draw_list.add_line((x, y0 - 1.0), (x, y0 + 5.0), colour, 2.0)


def scrub_by(panel: Panel, frames: int) -> None:
    """Left/Right: show the ring frame ``frames`` away from the one shown (pausing)."""
    state, history = panel.state, panel.state.sim.history
    times = [f.time for f in history.frames()]
    shown = state.scrub_time if state.scrub_time is not None else times[-1]
    k = min(max(bisect.bisect_left(times, shown - 1e-9) + frames, 0), len(times) - 1)
    if not state.sim.latest().paused:
        panel.toggle_pause()
    state.scrub_time = times[k]


def resume_from_here(panel: Panel) -> None:
    """The moment shown becomes the live world, running (the old future is dropped)."""
    state = panel.state
    step = state.sim.history.step_at(state.scrub_time)
    panel.watch(state.sim.restore(step), "resume from here")
    panel.watch(state.sim.set_paused(False), "resume")
    state.scrub_time = None


@dataclass(frozen=True)
class Moment:
    """The world exactly as it was at one ring frame (``History.world_at`` of its ``step``):
    the bodies' ``pose`` with their velocities, ω and L, and ``world``, the snapshot fields
    that world decides (``world_fields``: energies, contacts, materials, joints…)."""

    history: History
    step: int
    pose: Pose
    world: dict

    def over(self, live: Snapshot) -> Snapshot:
        """``live`` with the world of this moment: what the gizmos and the inspector show
        (the run controls, errors and broken joints stay the live ones)."""
        return dataclasses.replace(live, step=self.step, **self.world)


class ExactMoments:
    """While the timeline shows a moment, the world of that moment computed exactly once the
    moment has stayed put for ``SETTLE_SECONDS`` (the drag paused), on a thread of its own: the
    ring holds poses only, and re-running up to a second of steps is too slow for every frame
    of a drag. ``at`` is called by the render thread each frame."""

    def __init__(self, clock=time.perf_counter):
        self._clock = clock
        self._wanted: tuple | None = None   # (history id, step) asked for, since when
        self._since = 0.0
        self._done: Moment | None = None
        self._thread: threading.Thread | None = None

    def at(self, history: History, shown: float) -> Moment | None:
        """The exact moment of the ring frame nearest to ``shown`` s, or None while it is
        being computed (or the timeline is still moving)."""
        step = history.frame_at(shown).step
        done = self._done
        if done is not None and done.history is history and done.step == step:
            return done
        now, key = self._clock(), (id(history), step)
        if key != self._wanted:
            self._wanted, self._since = key, now
        elif now - self._since >= SETTLE_SECONDS and not self.busy:
            self._thread = threading.Thread(target=self._compute, args=(history, step),
                                            name="tumble-moment", daemon=True)
            self._thread.start()
        return None

    @property
    def busy(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def _compute(self, history: History, step: int) -> None:
        try:
            world, _ = history.world_at(step)
        except ValueError:  # the history moved on past it meanwhile: the ring frame stays
            return
        s = world.state
        pose = Pose(ids=world.ids.copy(), pos=s.pos.copy(), quat=s.quat.copy(), vel=s.vel.copy(),
                    omega=world.angular_velocity(), ang_mom=s.ang_mom.copy(),
                    time=float(s.time), alpha=1.0)
        self._done = Moment(history, step, pose, world_fields(world))


def ring_pose(history: History, time: float) -> Pose:
    """The bodies as the ring holds them nearest to sim time ``time`` s (no velocities)."""
    frame = history.frame_at(time)
    zeros = np.zeros((len(frame.ids), 3))
    return Pose(ids=frame.ids, pos=frame.positions(), quat=frame.orientations(), vel=zeros,
                omega=zeros, ang_mom=zeros, time=frame.time, alpha=1.0)
