"""The panel's "After the fact" area (app/panel/sections.py ``after_the_fact``), driven by real
ImGui clicks over a Simulation stepped offline, drawn headless (EGL): the history length, a
clip of a span chosen on the timeline at the rate chosen (its progress bar while it renders,
then exactly round((t1 − t0)·fps) frames), and "Save replay"."""

import sys
import time

import av
import numpy as np
import pyglet
import pytest

from app.app_state import AppState
from app.panel import Panel
from app.render.camera import OrbitCamera
from app.resources import asset_path
from app.video.clip import clip_order
from physics.replay import Schedule, load_replay
from physics.scene import build_world, load_scene
from physics.simulation import Simulation
from tests.app.offscreen_ui import offscreen_ctx, offscreen_fbo, offscreen_ui  # noqa: F401

if "pyglet.window" not in sys.modules:  # as test_panel.py: no shadow window without a display
    _shadow = pyglet.options["shadow_window"]
    pyglet.options["shadow_window"] = False
    from pyglet.window import mouse  # noqa: E402
    pyglet.options["shadow_window"] = _shadow
else:
    from pyglet.window import mouse

W, H = 1280, 1600  # tall: every section open and the Recording section's end on screen


def bounce(tmp_path) -> tuple[AppState, Panel]:
    scene = load_scene(asset_path("scenes/bounce.toml"))
    world, records = build_world(scene)
    state = AppState(sim=Simulation(world, hz=scene.hz), bodies={r.body_id: r for r in records},
                     scene_path=scene.source)
    state.recording.folder = tmp_path
    panel = Panel(state)
    panel.expand_all()  # the After the fact section starts closed
    return state, panel


def frame(ui, fbo, panel):
    snapshot = panel.state.sim.latest()
    panel.record_plots(snapshot)
    ui.new_frame((W, H), 1 / 60)
    panel.draw(snapshot)
    fbo.use()
    fbo.clear(0.3, 0.36, 0.42, 1.0)
    ui.render(fbo)


def click(ui, fbo, panel, name, along=0.5) -> None:
    """A left click on the widget ``name`` (``along`` its width), a frame each for hover,
    press and release."""
    (x0, y0), (x1, y1) = panel.item_rects[name]
    x, y = x0 + along * (x1 - x0), (y0 + y1) / 2
    assert y1 < H, f"{name} is off the screen"
    ui.on_mouse_motion(x, H - y, 0, 0)
    frame(ui, fbo, panel)
    ui.on_mouse_press(x, H - y, mouse.LEFT, 0)
    frame(ui, fbo, panel)
    ui.on_mouse_release(x, H - y, mouse.LEFT, 0)
    frame(ui, fbo, panel)


def test_the_history_length_is_set_by_its_slider(ui, fbo, tmp_path):
    state, panel = bounce(tmp_path)
    frame(ui, fbo, panel)
    assert state.sim.history.seconds == 60.0
    click(ui, fbo, panel, "history_seconds", along=0.5)
    state.sim.run_steps(0)
    panel.process_results()
    assert 300.0 < state.sim.history.seconds < 360.0  # halfway from 60 s to 10 min
    click(ui, fbo, panel, "history_seconds", along=0.999)
    state.sim.run_steps(0)
    assert state.sim.history.seconds == pytest.approx(600.0, abs=2.0)


def test_a_span_chosen_on_the_timeline_is_saved_at_60_fps_with_a_progress_bar(ui, fbo,
                                                                            tmp_path,
                                                                            clip_worker):
    state, panel = bounce(tmp_path)
    state.sim.run_steps(3 * 240)
    jobs = []

    def save_clip(t0, t1, fps):  # what the window does, at a small size
        jobs.append(clip_worker.submit(clip_order(state.sim.history, t0, t1, fps, (320, 180),
                                                  tmp_path, "bounce", state.bodies,
                                                  OrbitCamera(), state.gizmos)))
        state.recording.clip = jobs[-1]
    state.recording.save_clip = save_clip
    frame(ui, fbo, panel)
    frame(ui, fbo, panel)
    times = [f.time for f in state.sim.history.frames()]
    state.scrub_time = times[30]                       # 0.5 s
    click(ui, fbo, panel, "clip_start_here")
    state.scrub_time = times[105]                      # 1.75 s
    click(ui, fbo, panel, "clip_end_here")
    assert state.recording.clip_span == (times[30], times[105])
    click(ui, fbo, panel, "clip_fps_60")
    assert state.recording.clip_fps == 60
    click(ui, fbo, panel, "clip_save")
    assert len(jobs) == 1
    job = jobs[0]
    seen_bar = False
    deadline = time.monotonic() + 300
    while not job.done:
        frame(ui, fbo, panel)
        seen_bar = seen_bar or "clip_progress" in panel.item_rects
        # with the note under it that the view redraws less meanwhile
        assert ("clip_progress" in panel.item_rects) == ("clip_view_note" in panel.item_rects)
        assert time.monotonic() < deadline
        time.sleep(0.01)
    assert job.error is None, job.error
    assert seen_bar, "no progress bar while the clip rendered"
    t0, t1 = job.request.t0, job.request.t1
    assert (t0, t1) == (times[30], times[105])
    expected = round((t1 - t0) * 60)
    assert job.count == expected == 75
    with av.open(str(job.request.path)) as container:
        assert sum(1 for _ in container.decode(video=0)) == expected


@pytest.mark.parametrize("t0, t1, fps", [(0.3, 1.234, 30), (0.01, 0.99, 60)])
def test_a_clip_of_t0_t1_has_round_t1_minus_t0_times_fps_frames(tmp_path, t0, t1, fps,
                                                                clip_worker):
    state, _ = bounce(tmp_path)
    state.sim.run_steps(300)
    job = clip_worker.submit(clip_order(state.sim.history, t0, t1, fps, (160, 96), tmp_path,
                                        "span", state.bodies, OrbitCamera(), state.gizmos))
    deadline = time.monotonic() + 300
    while not job.done:
        assert time.monotonic() < deadline
        time.sleep(0.05)
    assert job.error is None, job.error
    with av.open(str(job.request.path)) as container:
        frames = sum(1 for _ in container.decode(video=0))
    assert frames == job.frames_done == round((t1 - t0) * fps)


def test_save_replay_writes_the_history_and_names_the_file(ui, fbo, tmp_path):
    state, panel = bounce(tmp_path)
    state.sim.run_steps(100)
    state.sim.apply_impulse(0, [0.0, 2.0, 0.5])
    state.sim.run_steps(100)
    state.sim.set_gravity([0.0, -3.0, 0.0])
    live = state.sim.run_steps(100)
    frame(ui, fbo, panel)
    frame(ui, fbo, panel)
    writing = []
    save_replay = panel.save_replay
    panel.save_replay = lambda text: writing.append(save_replay(text))  # to wait for it
    click(ui, fbo, panel, "replay_save")
    assert len(writing) == 1
    writing[0].join(60)
    saved = sorted(tmp_path.glob("bounce_replay_*.toml"))
    assert len(saved) == 1
    texts = [n.text for n, _ in state.notifications.visible()]
    assert any(str(saved[0]) in t and "saved replay" in t for t in texts), texts
    replay = load_replay(saved[0])
    assert [(c.step, c.name) for c in replay.commands] == [(100, "apply_impulse"),
                                                           (200, "set_gravity")]
    world, _ = build_world(replay.scene)
    again = Schedule.of(replay).run_steps(Simulation(world, hz=replay.scene.hz), 300)
    assert np.array_equal(again.pos, live.pos)  # the history starts at the scene: exact


def test_save_replay_to_a_folder_that_cannot_be_written_says_so(tmp_path):
    state, panel = bounce(tmp_path)
    (tmp_path / "file").write_text("")
    panel.save_replay(str(tmp_path / "file" / "r.toml")).join(60)
    texts = [n.text for n, _ in state.notifications.visible()]
    assert any(t.startswith(f"could not save the replay to {tmp_path / 'file' / 'r.toml'}")
               for t in texts), texts


def test_the_plots_mark_the_moment_the_timeline_shows(ctx, ui, tmp_path):
    tall = (W, 3200)  # every section open, the plots at the end
    ui.on_resize(*tall)
    target = ctx.framebuffer(color_attachments=[ctx.renderbuffer(tall, 4)])
    state, panel = bounce(tmp_path)  # no body selected: the inspector shows none, as it was
    for _ in range(240):
        state.sim.run_steps(2)
        panel.record_plots(state.sim.latest())

    def plots() -> np.ndarray:
        for _ in range(3):
            ui.new_frame(tall, 1 / 60)
            panel.draw(state.sim.latest())
            target.use()
            target.clear(0.3, 0.36, 0.42, 1.0)
            ui.render(target)
        img = np.frombuffer(target.read(components=3), np.uint8).reshape(tall[1], W, 3)[::-1]
        assert "plots" not in panel.item_rects
        return img[:, W - 380:].astype(int)

    try:
        live = plots()
        state.scrub_time = state.sim.history.frames()[60].time  # 1 s of the 2 s plotted
        marked = plots()
    finally:
        target.release()
    changed = np.abs(marked - live).sum(axis=2) > 30
    # a vertical line through the three plots (the buttons that act on the moment shown are
    # enabled too, a shorter change)
    columns = np.flatnonzero(changed.sum(axis=0) > 150)
    assert len(columns) and columns.max() - columns.min() <= 6, columns
    # at -1 s of the plots' last 20 s: 95 % along their axis
    assert 0.85 < columns.mean() / 380 < 0.95
