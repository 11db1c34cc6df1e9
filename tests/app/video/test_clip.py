"""F10 in the running app (app/video/clip.py through app/window.py), under Xvfb: the last 10 s
of the history saved as a video in the background while the window keeps drawing."""

import av
import numpy as np

from tests.app.running_app import RunningApp, start_xvfb


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
        # the window draws on while the clip renders
        app.wait_for("frames drawn meanwhile", lambda s: s["frames"] >= rendering["frames"] + 20
                     and s["clip"] is not None, timeout=60)
        done = app.wait_for("the clip saved", lambda s: s["last_clip"] is not None,
                            timeout=600)["last_clip"]
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
