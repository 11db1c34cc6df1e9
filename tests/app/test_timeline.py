"""The timeline (app/panel/timeline.py) in the running app under Xvfb: dragging it back
pauses and shows that moment (then that moment re-run exactly, for the gizmos), Left steps
back through it, "Resume from here" carries on from that moment. And ``ExactMoments`` alone:
the world of a moment that stays put, computed off the render thread; and the history's size
as the timeline writes it."""

import time

import numpy as np

from app.panel.timeline import ExactMoments, megabytes, ring_pose
from app.resources import asset_path
from physics.scene import build_world, load_scene
from physics.simulation import Simulation
from tests.app.running_app import RunningApp, start_xvfb


def test_the_history_size_shows_tenths_below_ten_megabytes_and_whole_ones_above():
    assert megabytes(0) == "0.0 MB"
    assert megabytes(340_000) == "0.3 MB"  # a small scene's minute: not "0 MB"
    assert megabytes(9_940_000) == "9.9 MB"
    assert megabytes(9_960_000) == "10 MB"
    assert megabytes(87_400_000) == "87 MB"


def test_a_moment_that_stays_put_is_re_run_exactly_with_its_velocities():
    scene = load_scene(asset_path("scenes/dzhanibekov.toml"))
    world, _ = build_world(scene)
    sim = Simulation(world, hz=scene.hz)
    sim.run_steps(round(2 * scene.hz))
    history, frames = sim.history, sim.history.frames()
    clock = [0.0]
    moments = ExactMoments(clock=lambda: clock[0])
    assert moments.at(history, frames[40].time) is None
    clock[0] = 0.1
    assert moments.at(history, frames[41].time) is None  # dragged on: it waits again
    clock[0] = 0.2
    assert moments.at(history, frames[41].time) is None and not moments.busy  # 0.1 s put
    clock[0] = 0.3
    assert moments.at(history, frames[41].time) is None  # 0.2 s put: the re-run starts
    # under way, or (one body re-runs in well under a millisecond) done already
    assert moments.busy or moments.at(history, frames[41].time) is not None
    deadline = time.monotonic() + 60
    while moments.busy:
        assert time.monotonic() < deadline
        time.sleep(0.01)
    moment = moments.at(history, frames[41].time)
    assert moment is not None and moment.step == frames[41].step
    exact, _ = history.world_at(frames[41].step)
    assert np.array_equal(moment.pose.omega, exact.angular_velocity())
    assert np.array_equal(moment.pose.ang_mom, exact.state.ang_mom)
    assert np.array_equal(moment.world["contact_points"], exact.contact_points()[0])
    assert np.abs(moment.pose.omega).max() > 1.0  # the T-handle spins: gizmos to show
    assert moment.pose.time == frames[41].time
    ring = ring_pose(history, frames[41].time)
    assert np.allclose(ring.pos, moment.pose.pos, atol=1e-3)
    assert not ring.omega.any()  # what the ring alone would have shown


def test_drag_back_five_seconds_step_back_and_resume_from_there(tmp_path):
    server, display = start_xvfb()
    app = RunningApp(display, tmp_path, XDG_CONFIG_HOME=str(tmp_path / "config"))
    try:
        app.wait_until_ready()
        # the history starts when the scene is opened
        status = app.wait_for("8 s of history", lambda s: s["time"] - s["history"][0] >= 8.0,
                              timeout=120)
        selected = _select_a_body(app, status)
        status = app.wait_for("its inspector", lambda s: s["inspected"] is not None)
        assert abs(status["inspected"]["time"] - status["time"]) < 0.5  # the live world's
        x0, y0, x1, y1 = status["widgets"]["timeline"]
        start, end = status["history"]
        target = status["time"] - 5.0
        x = x0 + (x1 - x0) * (target - start) / (end - start)
        app.xdotool("mousemove", "--window", app.window, int(x), int((y0 + y1) / 2),
                    "mousedown", 1, "mouseup", 1)
        shown = app.wait_for("the moment 5 s back", lambda s: s["scrub"] is not None
                             and s["paused"])
        assert abs(shown["scrub"] - target) < 1.0, shown
        exact = app.wait_for("that moment re-run exactly", lambda s: s["scrub_exact"]
                             and s["inspected"] is not None, timeout=60)
        live = shown["time"]
        assert live - shown["scrub"] > 3.0  # the live world is still where it was
        # the inspector shows the selected body in the world of that moment, not the live one
        assert exact["selected"] == selected and exact["time"] == live
        assert exact["inspected"]["time"] == exact["scrub"]
        assert exact["inspected"]["omega"] is not None
        app.wait_frames(3)  # the slider let go (ImGui spreads a click over frames)
        app.xdotool("key", "--window", app.window, "Left")
        back = app.wait_for("one moment back", lambda s: s["scrub"] < shown["scrub"])
        assert abs(back["scrub"] - (shown["scrub"] - 1 / 60)) < 1e-9
        rect = back["widgets"]["resume"]
        app.xdotool("mousemove", "--window", app.window, int((rect[0] + rect[2]) / 2),
                    int((rect[1] + rect[3]) / 2), "click", 1)
        resumed = app.wait_for("the branch running", lambda s: s["scrub"] is None
                               and not s["paused"] and s["time"] > back["scrub"] + 0.5)
        assert resumed["time"] < live, "it went on from the moment chosen, not from the end"
        assert np.isclose(resumed["history"][1], resumed["time"], atol=0.5)
        assert resumed["inspected"]["time"] > back["scrub"]  # the live world's again
    finally:
        app.stop()
        server.kill()
        server.wait(10)


def _select_a_body(app: RunningApp, status: dict) -> int:
    """Click the bodies where the status says they are until one is selected; its id."""
    for body, (x, y) in status["body_pixels"].items():
        app.xdotool("mousemove", "--window", app.window, int(x), int(y))
        app.wait_frames()
        app.xdotool("click", 1)
        if app.wait_frames()["selected"] == int(body):
            return int(body)
    raise AssertionError(f"no body selected by a click: {status['body_pixels']}")
