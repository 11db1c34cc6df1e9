"""Clips saved after the fact: a span of the physics thread's history rendered to MP4 in the
background through the offline renderer of ``tumble record`` (docs/architecture.md#history).

The span's first step is rebuilt exactly (``History.world_at``) and run again with the logged
commands, so frame k shows sim time t0 + k/fps as ``tumble record`` would show it, with the
bodies' own meshes and colours (the render thread's records) and the app's camera and gizmos.
"""

from __future__ import annotations

import copy
import threading
import time
from dataclasses import dataclass, replace
from pathlib import Path

from app.gil import PROMPT_GIL_HANDOFF
from app.render.camera import OrbitCamera
from app.render.view import GizmoOptions
from app.video.offline import frame_count, offscreen_context, render_video, world_views
from app.video.recorder import (
    READ_FORMAT,
    RecordingResult,
    VideoWriter,
    prepare_folder,
    timestamped_path,
)
from physics.history import History
from physics.replay import Schedule

INSTANT_REPLAY_SECONDS = 10.0  # s that F10 saves: a throw and its tumble, short to render


def last_seconds(history: History, seconds: float = INSTANT_REPLAY_SECONDS) -> tuple[float, float]:
    """(t0, t1) s: the last ``seconds`` of the history, or all of it if it is shorter."""
    first, _, t1 = history.span()
    return max(first.time, t1 - seconds), t1


def start_clip(history: History, t0: float, t1: float, fps: int, size: tuple[int, int],
               folder: Path, name: str, records: dict, camera: OrbitCamera,
               gizmos: GizmoOptions) -> ClipJob:
    """Start saving the span [t0, t1] s of ``history`` (clamped to it) at ``fps`` and ``size``
    to a new file ``folder/<name>_replay_<time>.mp4``; ValueError for an empty span and
    RecordingError for a folder that cannot take it, with messages saying so."""
    first, _, last = history.span()
    t0, t1 = max(float(t0), first.time), min(float(t1), last)
    if frame_count(t1 - t0, fps) < 1:
        raise ValueError(f"nothing to save: the span {t0:.2f}…{t1:.2f} s holds no frame at "
                         f"{fps} fps")
    path = timestamped_path(prepare_folder(folder), f"{name}_replay", ".mp4")
    return ClipJob(ClipRequest(t0, t1, fps, size, path), history, records, camera, gizmos)


@dataclass(frozen=True)
class ClipRequest:
    """Sim times t0 < t1 (s) of the history to save at ``fps`` and ``size`` (even pixels)."""

    t0: float
    t1: float
    fps: int
    size: tuple[int, int]
    path: Path


def clip_views(history: History, request: ClipRequest, records: dict):
    """The FrameViews of the clip, frame k at sim time t0 + k/fps: the world at t0's step
    rebuilt exactly and run again with the commands logged from there (``records``: body id
    → BodyRecord)."""
    start = history.step_at(request.t0)
    world, hz = history.world_at(start)
    later = tuple(replace(c, step=c.step - start) for c in history.commands()
                  if c.step >= start)
    return world_views(world, records, hz, request.fps,
                       frame_count(request.t1 - request.t0, request.fps), Schedule(later))


class ClipJob:
    """Renders one ``ClipRequest`` on its own thread; ``done`` / ``progress`` / ``result`` /
    ``error`` / ``seconds`` (wall time it took, once done) are read from any thread."""

    def __init__(self, request: ClipRequest, history: History, records: dict,
                 camera: OrbitCamera, gizmos: GizmoOptions):
        self.request = request
        self.count = frame_count(request.t1 - request.t0, request.fps)
        self.frames_done = 0
        self.result: RecordingResult | None = None
        self.error: str | None = None
        self.seconds: float | None = None
        self._history, self._records = history, dict(records)
        self._camera, self._gizmos = copy.deepcopy(camera), gizmos
        self._thread = threading.Thread(target=self._run, name="tumble-clip", daemon=True)
        self._thread.start()

    @property
    def done(self) -> bool:
        return not self._thread.is_alive()

    @property
    def progress(self) -> float:
        """0 … 1 of the frames written."""
        return self.frames_done / max(self.count, 1)

    def _run(self) -> None:
        start = time.perf_counter()
        try:
            # each frame's draws, waits and reads hand the GIL back and take it again ~30
            # times beside the window's thread, which runs Python
            with PROMPT_GIL_HANDOFF:
                self._render()
        except Exception as e:  # reported by the window as a notification; the app goes on
            self.error = f"{type(e).__name__}: {e}"
        self.seconds = time.perf_counter() - start

    def _render(self) -> None:
        request = self.request
        views = clip_views(self._history, request, self._records)
        ctx = offscreen_context()
        try:
            writer = VideoWriter(request.path, request.size, request.fps,
                                 input_format=READ_FORMAT)
            self.result = render_video(views, self.count, writer, self._camera,
                                       self._gizmos, ctx, self._count_frame)
        finally:
            ctx.release()
        if self.result.error:
            self.error = self.result.error

    def _count_frame(self, done: int) -> None:
        self.frames_done = done
