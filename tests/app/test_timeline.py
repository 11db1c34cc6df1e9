"""The timeline (app/panel/timeline.py) in the running app under Xvfb: dragging it back
pauses and shows that moment, Left steps back through it, "Resume from here" carries on from
that moment."""

import numpy as np

from tests.app.running_app import RunningApp, start_xvfb


def test_drag_back_five_seconds_step_back_and_resume_from_there(tmp_path):
    server, display = start_xvfb()
    app = RunningApp(display, tmp_path, XDG_CONFIG_HOME=str(tmp_path / "config"))
    try:
        app.wait_until_ready()
        status = app.wait_for("8 s of sim time", lambda s: s["time"] >= 8.0, timeout=120)
        x0, y0, x1, y1 = status["widgets"]["timeline"]
        start, end = status["history"]
        target = status["time"] - 5.0
        x = x0 + (x1 - x0) * (target - start) / (end - start)
        app.xdotool("mousemove", "--window", app.window, int(x), int((y0 + y1) / 2),
                    "mousedown", 1, "mouseup", 1)
        shown = app.wait_for("the moment 5 s back", lambda s: s["scrub"] is not None
                             and s["paused"])
        assert abs(shown["scrub"] - target) < 1.0, shown
        live = shown["time"]
        assert live - shown["scrub"] > 3.0  # the live world is still where it was
        # the drawn bodies are the ring's, not the live world's
        assert shown["selected_position"] is None
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
    finally:
        app.stop()
        server.kill()
        server.wait(10)
