"""Clips (app/video/clip.py, app/video/clip_worker.py): frame k of a clip of the history is the
frame ``tumble record`` makes of the same run at t0 + k/fps (the same world, bit for bit, and
the same pixels); a clip renders in the clip process, which ends when closed or when its app
is killed (even mid warm-up), and one that dies fails its clip with a message while the next
clip starts a new one; and F10 in the running app under Xvfb: the last 10 s of the history
saved as a video in the clip process while the window keeps drawing, at its lower pace and
through an offscreen image meanwhile (app/frame_pace.py), the process ending with the app,
and a clip process killed mid-clip leaving the app running with the error shown."""

import itertools
import os
import signal
import subprocess
import sys
import time
from contextlib import contextmanager
from pathlib import Path

import av
import numpy as np

from app.frame_pace import (
    CLIP_FRAME_INTERVAL,
    CLIP_VIEW_SCALE,
    FRAME_INTERVAL,
    LAGGING_FRAME_INTERVAL,
)
from app.render.renderer import OffscreenTarget, Renderer
from app.render.view import gizmo_options
from app.resources import asset_path
from app.video.clip import ClipRequest, clip_order, clip_span, clip_views
from app.video.clip_worker import CLIP_NICENESS, CLIP_RASTER_THREADS, ClipWorker, serve
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
    clip = list(clip_views(clip_span(sim.history, request.t0), request,
                           {r.body_id: r for r in records}))
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


def bounce_history(seconds: float):
    """A Simulation of the bounce scene run ``seconds`` s, with its records and camera."""
    scene = load_scene(asset_path("scenes/bounce.toml"))
    world, records = build_world(scene)
    sim = Simulation(world, hz=scene.hz)
    sim.run_steps(round(seconds * scene.hz))
    camera = make_camera(None, SIZE, scene.container_size, [b.position for b in scene.bodies])
    return sim, {r.body_id: r for r in records}, camera


def wait_done(job, timeout: float = 300.0) -> None:
    deadline = time.monotonic() + timeout
    while not job.done:
        assert time.monotonic() < deadline, "the clip did not finish"
        time.sleep(0.02)


def ended(pid: int) -> bool:
    """The process ``pid`` has exited (gone, or a zombie nobody has reaped yet)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] in ("Z", "X")
    except FileNotFoundError:
        return True


def test_a_clip_renders_in_the_clip_process_which_ends_when_closed(tmp_path):
    sim, records, camera = bounce_history(1.5)
    worker = ClipWorker()
    try:
        assert worker.start() and not worker.start()  # once
        pid = worker.pid
        assert pid != os.getpid()
        job = worker.submit(clip_order(sim.history, 0.5, 1.5, 30, SIZE, tmp_path, "bounce",
                                       records, camera, gizmo_options(["L"])))
        progress = set()
        deadline = time.monotonic() + 300
        while not job.done:
            progress.add(job.frames_done)
            assert time.monotonic() < deadline
            time.sleep(0.005)
        assert job.error is None and job.frames_done == job.count == 30
        assert job.seconds > 0 and worker.ready and worker.pid == pid
        # it yields to the app when the cores are short
        assert os.getpriority(os.PRIO_PROCESS, pid) == min(
            os.getpriority(os.PRIO_PROCESS, 0) + CLIP_NICENESS, 19)
        # its llvmpipe shades with CLIP_RASTER_THREADS threads (unless the user chose)
        rasterisers = [task for task in os.listdir(f"/proc/{pid}/task")
                       if open(f"/proc/{pid}/task/{task}/comm").read().startswith("llvmpipe")]
        wanted = int(os.environ.get("LP_NUM_THREADS", CLIP_RASTER_THREADS))
        assert len(rasterisers) == wanted, rasterisers
        assert len(progress) > 2, "the progress did not move"
        with av.open(str(job.request.path)) as container:
            assert sum(1 for _ in container.decode(video=0)) == 30
    finally:
        worker.close()
    assert ended(pid) and not worker.alive


def serve_warming_up_for_minutes(orders, reports, marker: str) -> None:
    """The clip process's ``serve`` as it runs in a fresh install, whose first warm-up compiles
    for minutes: here it sleeps two, after touching ``marker``."""
    import app.video.clip as clip

    def warm_up():
        Path(marker).touch()
        time.sleep(120)
    clip.warm_up = warm_up
    serve(orders, reports)


def test_a_clip_process_still_warming_up_ends_as_soon_as_its_app_is_killed(tmp_path):
    marker = tmp_path / "warming"
    app = subprocess.Popen([sys.executable, "-c", f"""
import multiprocessing, time
from tests.app.video.test_clip import serve_warming_up_for_minutes
context = multiprocessing.get_context("spawn")
orders, _ = context.Pipe(duplex=False)
_, reports = context.Pipe(duplex=False)
process = context.Process(target=serve_warming_up_for_minutes,
                          args=(orders, reports, {str(marker)!r}), daemon=True)
process.start()
print(process.pid, flush=True)
time.sleep(600)
"""], cwd=Path(__file__).resolve().parents[3], stdout=subprocess.PIPE, text=True)
    pid = int(app.stdout.readline())
    try:
        deadline = time.monotonic() + 120
        while not marker.exists():
            assert time.monotonic() < deadline and app.poll() is None, "never warmed up"
            time.sleep(0.05)
        app.kill()  # as a crash or the OOM killer would: no ``close``, no pipe read
        app.wait(10)
        deadline = time.monotonic() + 10  # its warm-up alone would take 120 s
        while not ended(pid):
            assert time.monotonic() < deadline, "the clip process outlived its app"
            time.sleep(0.05)
    finally:
        app.kill()
        if not ended(pid):
            os.kill(pid, signal.SIGKILL)


def test_a_start_interrupted_by_ctrl_c_leaves_nothing_for_the_apps_end_to_join(monkeypatch):
    """A SIGINT that lands while the clip process starts (the CI caught one inside
    multiprocessing's own imports) ends the app; its end closes the worker, which must not try
    to join a process that never started (that raised, and the app exited 1, not 130)."""
    import multiprocessing.context

    def interrupted(self):
        raise KeyboardInterrupt
    monkeypatch.setattr(multiprocessing.context.SpawnProcess, "start", interrupted)
    worker = ClipWorker()
    try:
        worker.start()
    except KeyboardInterrupt:
        pass
    else:
        raise AssertionError("the interrupt did not reach the caller")
    assert worker.pid is None and not worker.alive
    worker.close()  # the app's end: nothing to join, nothing raised
    assert worker.pid is None


def test_a_dead_clip_process_fails_its_clip_with_a_message_and_the_next_starts_anew(tmp_path):
    sim, records, camera = bounce_history(4.0)
    worker = ClipWorker()
    try:
        def order():  # 120 frames at 1280×720: a few seconds, long enough to be killed in
            return clip_order(sim.history, 0.0, 4.0, 30, (1280, 720), tmp_path, "bounce",
                              records, camera, gizmo_options(["L"]))
        job = worker.submit(order())  # not started: the order starts it
        first = worker.pid
        deadline = time.monotonic() + 300
        while job.frames_done < 3:
            assert not job.done and time.monotonic() < deadline, job.error
            time.sleep(0.005)
        os.kill(first, signal.SIGKILL)
        wait_done(job, timeout=10)
        assert job.result is None
        assert job.error.startswith("the clip process ended unexpectedly (exit status -9)")
        assert not worker.alive
        again = worker.submit(order())
        wait_done(again)
        assert again.error is None and again.frames_done == 120
        assert worker.pid != first
    finally:
        worker.close()


@contextmanager
def running_app(tmp_path):
    """The app under a private Xvfb, ready, saving its videos in tmp_path; killed after."""
    server, display = start_xvfb()
    app = RunningApp(display, tmp_path, XDG_VIDEOS_DIR=str(tmp_path),
                     XDG_CONFIG_HOME=str(tmp_path / "config"))
    try:
        app.wait_until_ready()
        yield app
    finally:
        app.stop()
        server.kill()
        server.wait(10)


def test_f10_saves_the_last_ten_seconds_while_the_app_keeps_drawing(tmp_path):
    with running_app(tmp_path) as app:  # killed after: the clip process must notice and end
        # the history starts when the scene is opened
        before = app.wait_for("10.5 s of history",
                              lambda s: s["time"] - s["history"][0] >= 10.5, timeout=120)
        assert before["view_scale"] is None  # the 3D view drawn on the screen
        app.xdotool("key", "--window", app.window, "F10")
        rendering = app.wait_for("the clip under way", lambda s: (s["clip"] or 0) >= 5,
                                 timeout=60)
        rendering_at = time.monotonic()
        worker = rendering["clip_worker"]  # started before F10, warm: F10 waits for nothing
        assert worker["alive"] and worker["ready"] and worker["pid"] != app.process.pid
        # the window draws on while the clip renders, at most CLIP_FRAME_INTERVAL apart
        assert rendering["frame_interval"] == CLIP_FRAME_INTERVAL
        # …its 3D view through an offscreen image (the camera is still: the floor is cached)
        assert rendering["view_scale"] == CLIP_VIEW_SCALE
        meanwhile = app.wait_for("frames drawn meanwhile", lambda s: s["frames"]
                                 >= rendering["frames"] + 20 and s["clip"] is not None,
                                 timeout=60)
        seconds = time.monotonic() - rendering_at
        # (the status file is written every 0.2 s: either one may be that old)
        assert meanwhile["frames"] - rendering["frames"] <= (seconds + 0.5) / CLIP_FRAME_INTERVAL
        after = app.wait_for("the clip saved", lambda s: s["last_clip"] is not None,
                             timeout=600)
        done = after["last_clip"]
        # the window's own pace again (30 a second if the physics dropped time meanwhile)
        assert after["frame_interval"] == (LAGGING_FRAME_INTERVAL if after["physics_lagging"]
                                           else FRAME_INTERVAL)
        assert after["view_scale"] is None                # and its view on the screen
    deadline = time.monotonic() + 10
    while not ended(worker["pid"]):
        assert time.monotonic() < deadline, "the clip process outlived the app"
        time.sleep(0.05)
    assert done["error"] is None, app.log()
    assert done["t1"] - done["t0"] == 10.0
    assert done["count"] == round((done["t1"] - done["t0"]) * done["fps"]) == 300
    with av.open(done["path"]) as container:
        frames = [f.to_ndarray(format="rgb24") for f in container.decode(video=0)]
    assert len(frames) == done["count"] == done["frames"]
    changes = [np.abs(a.astype(int) - b).mean() for a, b in zip(frames[::30], frames[30::30])]
    assert min(changes) > 0.05, "the clip does not move"
    assert "clip saved" in app.log()


def test_a_clip_process_killed_mid_clip_is_an_error_in_the_panel_and_the_app_goes_on(tmp_path):
    with running_app(tmp_path) as app:
        ready = app.wait_for("the clip process warm", lambda s: s["clip_worker"]["ready"]
                             and s["time"] >= 3.0, timeout=120)
        app.xdotool("key", "--window", app.window, "F10")  # all of the 3 s or more so far
        app.wait_for("the clip under way", lambda s: (s["clip"] or 0) >= 5, timeout=60)
        os.kill(ready["clip_worker"]["pid"], signal.SIGKILL)
        failed = app.wait_for("the clip failed", lambda s: s["last_clip"] is not None,
                              timeout=30)
        assert failed["last_clip"]["error"].startswith("the clip process ended unexpectedly")
        assert failed["clip"] is None and not failed["clip_worker"]["alive"]
        app.wait_for("frames drawn after it", lambda s: s["frames"] >= failed["frames"] + 30)
        assert "clip not saved: the clip process ended unexpectedly" in app.log()
        app.xdotool("key", "--window", app.window, "F10")  # the next clip: a new process
        again = app.wait_for("the next clip under way", lambda s: (s["clip"] or 0) >= 5,
                             timeout=120)
        assert again["clip_worker"]["pid"] != ready["clip_worker"]["pid"]
        assert app.process.poll() is None
