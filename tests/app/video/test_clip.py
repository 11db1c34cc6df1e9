"""Clips (app/video/clip.py): frame k of a clip of the history is the frame ``tumble record``
makes of the same run at t0 + k/fps (the same world, bit for bit, and the same pixels); and
F10 in the running app under Xvfb: the last 10 s of the history saved as a video in the
background while the window keeps drawing, at its lower pace meanwhile (app/frame_pace.py)."""

import itertools
import sys
import time

import av
import numpy as np

from app.frame_pace import CLIP_FRAME_INTERVAL, FRAME_INTERVAL
from app.gil import GIL_HANDOFF
from app.render.renderer import OffscreenTarget, Renderer
from app.render.view import gizmo_options
from app.resources import asset_path
from app.video.clip import ClipRequest, clip_views, start_clip
from app.video.offline import make_camera, offscreen_context, sim_time_views
from physics.scene import build_world, load_scene
from physics.simulation import Simulation
from tests.app.running_app import RunningApp, start_xvfb

SIZE = (320, 180)


def pixels(views, camera, gizmos) -> list[np.ndarray]:
    """The offline renderer's frames of ``views`` (as ``tumble record`` draws them)."""
    ctx = offscreen_context()
    renderer, target = Renderer(ctx), OffscreenTarget(ctx, SIZE)
    try:
        frames = []
        for view in views:
            renderer.render(view, camera, SIZE, gizmos, fbo=target.fbo)
            frames.append(np.frombuffer(target.fbo.read(components=3), np.uint8).copy())
        return frames
    finally:
        target.release()
        renderer.release()
        ctx.release()


def test_clip_frame_k_is_the_tumble_record_frame_at_t0_plus_k_over_fps(tmp_path):
    scene = load_scene(asset_path("scenes/bounce.toml"))
    world, records = build_world(scene)
    sim = Simulation(world, hz=scene.hz)
    sim.run_steps(round(2.5 * scene.hz))
    fps, first = 30, 30                        # the clip starts at frame 30 of the run: 1 s
    request = ClipRequest(first / fps, 2.0, fps, SIZE, tmp_path / "clip.mp4")
    clip = list(clip_views(sim.history, request, {r.body_id: r for r in records}))
    assert len(clip) == round((request.t1 - request.t0) * fps) == 30
    recorded = list(itertools.islice(sim_time_views(scene, fps, first + len(clip)), first, None))
    for k, (ours, theirs) in enumerate(zip(clip, recorded)):
        for name in ("ids", "pos", "quat", "vel", "omega", "ang_mom", "contact_points"):
            assert np.array_equal(getattr(ours, name), getattr(theirs, name)), (k, name)
    camera = make_camera(None, SIZE, scene.container_size, [b.position for b in scene.bodies])
    gizmos = gizmo_options(["L", "axes", "joints"])  # tumble record's default
    ends = [0, len(clip) - 1]
    ours, theirs = (pixels([views[k] for k in ends], camera, gizmos) for views in (clip, recorded))
    for a, b in zip(ours, theirs):
        assert np.array_equal(a, b)
    assert not np.array_equal(ours[0], ours[1]), "the balls do not move"


def test_a_clip_renders_with_the_gil_handed_back_promptly_then_the_interval_returns(tmp_path):
    """While a clip renders, Python's switch interval is GIL_HANDOFF (app/gil.py): its thread
    takes the GIL back after each draw and wait without waiting out the window's 5 ms."""
    scene = load_scene(asset_path("scenes/bounce.toml"))
    world, records = build_world(scene)
    sim = Simulation(world, hz=scene.hz)
    sim.run_steps(round(1.5 * scene.hz))
    before = sys.getswitchinterval()
    assert before > GIL_HANDOFF  # Python's default: the clip changes it
    camera = make_camera(None, SIZE, scene.container_size, [b.position for b in scene.bodies])
    job = start_clip(sim.history, 0.5, 1.5, 30, SIZE, tmp_path, "bounce",
                     {r.body_id: r for r in records}, camera, gizmo_options(["L"]))
    seen = set()
    while not job.done:
        seen.add(sys.getswitchinterval())
        time.sleep(0.001)
    assert job.error is None and job.frames_done == 30
    assert GIL_HANDOFF in seen
    assert sys.getswitchinterval() == before


def test_f10_saves_the_last_ten_seconds_while_the_app_keeps_drawing(tmp_path):
    server, display = start_xvfb()
    app = RunningApp(display, tmp_path, XDG_VIDEOS_DIR=str(tmp_path),
                     XDG_CONFIG_HOME=str(tmp_path / "config"))
    try:
        app.wait_until_ready()
        # the history starts when the scene is opened
        app.wait_for("10.5 s of history", lambda s: s["time"] - s["history"][0] >= 10.5,
                     timeout=120)
        app.xdotool("key", "--window", app.window, "F10")
        rendering = app.wait_for("the clip under way", lambda s: (s["clip"] or 0) >= 5,
                                 timeout=60)
        rendering_at = time.monotonic()
        # the window draws on while the clip renders, at most CLIP_FRAME_INTERVAL apart
        assert rendering["frame_interval"] == CLIP_FRAME_INTERVAL
        meanwhile = app.wait_for("frames drawn meanwhile", lambda s: s["frames"]
                                 >= rendering["frames"] + 20 and s["clip"] is not None,
                                 timeout=60)
        seconds = time.monotonic() - rendering_at
        # (the status file is written every 0.2 s: either one may be that old)
        assert meanwhile["frames"] - rendering["frames"] <= (seconds + 0.5) / CLIP_FRAME_INTERVAL
        after = app.wait_for("the clip saved", lambda s: s["last_clip"] is not None,
                             timeout=600)
        done = after["last_clip"]
        assert after["frame_interval"] == FRAME_INTERVAL  # the window's own pace again
    finally:
        app.stop()
        server.kill()
        server.wait(10)
    assert done["error"] is None, app.log()
    assert done["t1"] - done["t0"] == 10.0
    assert done["count"] == round((done["t1"] - done["t0"]) * done["fps"]) == 300
    with av.open(done["path"]) as container:
        frames = [f.to_ndarray(format="rgb24") for f in container.decode(video=0)]
    assert len(frames) == done["count"] == done["frames"]
    changes = [np.abs(a.astype(int) - b).mean() for a, b in zip(frames[::30], frames[30::30])]
    assert min(changes) > 0.05, "the clip does not move"
    assert "clip saved" in app.log()
