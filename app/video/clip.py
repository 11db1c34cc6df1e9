"""Clips saved after the fact: a span of the physics thread's history rendered to MP4 through
the offline renderer of ``tumble record``, in the app's clip process (app/video/clip_worker.py;
docs/architecture.md#history).

The span's first step is rebuilt exactly (from the checkpoint before it and the logged
commands, ``ClipSpan``) and run again with the logged commands, so frame k shows sim time
t0 + k/fps as ``tumble record`` would show it, with the bodies' own meshes and colours (the
render thread's records) and the app's camera and gizmos. A ``ClipOrder`` holds all of it and
pickles: the app builds it, the clip process renders it (``render_clip``).
"""

from __future__ import annotations

import copy
import tempfile
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Callable

from app.render.camera import OrbitCamera
from app.render.view import GizmoOptions
from app.resources import asset_path
from app.video.offline import frame_count, offscreen_context, render_video, world_views
from app.video.recorder import (
    READ_FORMAT,
    RecordingResult,
    VideoWriter,
    prepare_folder,
    timestamped_path,
)
from physics.history import Checkpoint, History, LoggedCommand, run_log
from physics.replay import Schedule
from physics.runtime import configure
from physics.scene import build_world, load_scene

INSTANT_REPLAY_SECONDS = 10.0  # s that F10 saves: a throw and its tumble, short to render
WARM_UP_SCENE = "scenes/bounce.toml"  # what the clip process draws before its first clip:
# spheres and boxes, no mesh file to read


def last_seconds(history: History, seconds: float = INSTANT_REPLAY_SECONDS) -> tuple[float, float]:
    """(t0, t1) s: the last ``seconds`` of the history, or all of it if it is shorter."""
    first, _, t1 = history.span()
    return max(first.time, t1 - seconds), t1


def clip_order(history: History, t0: float, t1: float, fps: int, size: tuple[int, int],
               folder: Path, name: str, records: dict, camera: OrbitCamera,
               gizmos: GizmoOptions) -> ClipOrder:
    """What saving the span [t0, t1] s of ``history`` (clamped to it) at ``fps`` and ``size``
    to a new file ``folder/<name>_replay_<time>.mp4`` needs; ValueError for an empty span and
    RecordingError for a folder that cannot take it, with messages saying so."""
    first, _, last = history.span()
    t0, t1 = max(float(t0), first.time), min(float(t1), last)
    if frame_count(t1 - t0, fps) < 1:
        raise ValueError(f"nothing to save: the span {t0:.2f}…{t1:.2f} s holds no frame at "
                         f"{fps} fps")
    path = timestamped_path(prepare_folder(folder), f"{name}_replay", ".mp4")
    return ClipOrder(ClipRequest(t0, t1, fps, size, path), clip_span(history, t0),
                     dict(records), copy.deepcopy(camera), gizmos)


@dataclass(frozen=True)
class ClipRequest:
    """Sim times t0 < t1 (s) of the history to save at ``fps`` and ``size`` (even pixels)."""

    t0: float
    t1: float
    fps: int
    size: tuple[int, int]
    path: Path

    @property
    def count(self) -> int:
        """Frames of the clip: round((t1 − t0)·fps)."""
        return frame_count(self.t1 - self.t0, self.fps)


@dataclass(frozen=True)
class ClipSpan:
    """The history a clip re-runs: the ``checkpoint`` at or before its first step ``start``
    and the ``commands`` logged from the checkpoint on (LoggedCommand, in order)."""

    checkpoint: Checkpoint
    commands: tuple[LoggedCommand, ...]
    start: int


def clip_span(history: History, t0: float) -> ClipSpan:
    """The ``ClipSpan`` of a clip from sim time ``t0`` s (the step nearest to it)."""
    start = history.step_at(t0)
    checkpoint, commands = history.checkpoint_at(start)
    return ClipSpan(checkpoint, tuple(commands), start)


@dataclass(frozen=True)
class ClipOrder:
    """A clip to render: the request, its span of history, the bodies' records (body id →
    BodyRecord), and the camera and gizmos to draw them with."""

    request: ClipRequest
    span: ClipSpan
    records: dict
    camera: OrbitCamera
    gizmos: GizmoOptions


def clip_views(span: ClipSpan, request: ClipRequest, records: dict):
    """The FrameViews of the clip, frame k at sim time t0 + k/fps: the world at t0's step
    rebuilt exactly and run again with the commands logged from there (``records``: body id
    → BodyRecord)."""
    checkpoint, start = span.checkpoint, span.start
    world = checkpoint.world()
    hz = run_log(world, checkpoint.hz, checkpoint.step, start, span.commands)
    later = tuple(replace(c, step=c.step - start) for c in span.commands if c.step >= start)
    return world_views(world, records, hz, request.fps, request.count, Schedule(later))


def render_clip(order: ClipOrder,
                on_frame: Callable[[int], None] = lambda done: None) -> RecordingResult:
    """Render ``order`` to its file (an EGL context of its own), calling ``on_frame(done)`` as
    frames reach the encoder; the result carries an encoder error, if one ended it early."""
    request = order.request
    views = clip_views(order.span, request, order.records)
    ctx = offscreen_context()
    try:
        writer = VideoWriter(request.path, request.size, request.fps, input_format=READ_FORMAT)
        return render_video(views, request.count, writer, order.camera, order.gizmos, ctx,
                            on_frame)
    finally:
        ctx.release()


def warm_up() -> None:
    """What a clip process does once, before its first order, so that no clip pays it: the
    engine's process options, a few frames of the default scene stepped (its kernels load from
    numba's cache), drawn (the renderer's shaders compile) and encoded, to a file thrown
    away."""
    configure()
    scene = load_scene(asset_path(WARM_UP_SCENE))
    world, records = build_world(scene)
    count, size = 2, (64, 64)
    views = world_views(world, {r.body_id: r for r in records}, scene.hz, 60, count)
    camera = OrbitCamera()
    ctx = offscreen_context()
    try:
        with tempfile.TemporaryDirectory() as folder:
            writer = VideoWriter(Path(folder) / "warm-up.mp4", size, 60, input_format=READ_FORMAT)
            render_video(views, count, writer, camera, GizmoOptions(), ctx)
    finally:
        ctx.release()
