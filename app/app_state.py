"""The app's shared state: what the window, the panel and the input handlers read and change.

Physics state is never here: it lives in the physics thread and arrives as snapshots.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import numpy as np

from app.joints import JointDraft
from app.notifications import Notifications
from app.render.view import GizmoOptions
from app.video.recorder import FPS_CHOICES, recordings_folder
from physics.scene import BodyRecord
from physics.simulation import Simulation, Snapshot


@dataclass
class RecordingSettings:
    """The panel's Recording section. include_panel: record the panel too (else the 3D view
    alone); fps: 30 or 60; folder: where videos and screenshots go; last_file: the last video
    or screenshot saved; seconds: video length so far while recording, None when not;
    toggle / screenshot: start-stop and F12, set by the window.
    After the fact: clip_span (t0, t1) s of sim time to save from the history, None for the
    last 10 s; clip_fps: 30 or 60; clip: the ``ClipJob`` being saved (its progress), or None;
    save_clip(t0, t1, fps): starts one, set by the window (it knows the view and its size)."""

    include_panel: bool = False
    fps: int = FPS_CHOICES[0]
    folder: Path = field(default_factory=recordings_folder)
    last_file: Path | None = None
    seconds: float | None = None
    toggle: Callable[[], None] = lambda: None
    screenshot: Callable[[], None] = lambda: None
    clip_span: tuple[float, float] | None = None
    clip_fps: int = FPS_CHOICES[0]
    clip: Any = None
    save_clip: Callable[[float, float, int], None] = lambda t0, t1, fps: None


@dataclass
class AppState:
    """sim: the physics thread; bodies: body id → BodyRecord (name, source, colour, Shape);
    selected: selected body id or None; scene_path: the scene last opened or saved;
    request_files: call with file paths to load meshes/scenes off the render thread (the
    window sets it); loading: number of files being loaded now (progress indicator);
    show_help: the F1 overlay; show_panel: the ImGui panel;
    recording: video and screenshot settings (F9, F12); scale_offers: dropped meshes of
    implausible size waiting for the user to choose their scale (app/mesh_scale.py);
    selected_point: where the selected body was clicked, (3,) m in its principal frame (None:
    its centre); joint_draft: a joint being made with the mouse (app/joints.py), or None;
    selected_joint: the joint id chosen in the panel, or None; scrub_time: the sim time the
    timeline shows from the history (s), or None for the live world; moment: the world at
    that time re-run exactly (``ExactMoments``, set by the window: what the inspector shows),
    None while it is being computed or when the live world is shown; later_records: body id →
    BodyRecord of the bodies an opened replay's commands add, registered each time the body
    appears (the replay may run again from its start)."""

    sim: Simulation
    notifications: Notifications = field(default_factory=Notifications)
    bodies: dict[int, BodyRecord] = field(default_factory=dict)
    selected: int | None = None
    gizmos: GizmoOptions = field(default_factory=GizmoOptions)
    scene_path: Path | None = None
    request_files: Callable[[list[str]], None] = lambda paths: None
    loading: int = 0
    show_help: bool = False
    show_panel: bool = True
    recording: RecordingSettings = field(default_factory=RecordingSettings)
    scale_offers: list = field(default_factory=list)
    selected_point: np.ndarray | None = None
    joint_draft: JointDraft | None = None
    selected_joint: int | None = None
    scrub_time: float | None = None
    moment: Snapshot | None = None
    later_records: dict[int, BodyRecord] = field(default_factory=dict)
