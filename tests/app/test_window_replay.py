"""Replays in the running app under Xvfb (app/window.py, app/loader.py, the panel): one given
on the command line opens paused at its start, Space plays its commands at their steps,
"Save replay" writes the run again, a dropped replay starts over, and a bad one is refused
with the scene kept."""

from physics.replay import Replay, load_replay, write_replay
from tests.app.running_app import RunningApp, start_xvfb
from tests.app.test_loader_replay import COMMANDS, SCENE


def test_a_replay_given_on_the_command_line_plays_saves_and_opens_by_drop(tmp_path):
    path = tmp_path / "throw.toml"
    write_replay(path, Replay(SCENE, COMMANDS))
    videos = tmp_path / "videos"
    videos.mkdir()
    server, display = start_xvfb()
    app = RunningApp(display, tmp_path, str(path), XDG_VIDEOS_DIR=str(videos),
                     XDG_CONFIG_HOME=str(tmp_path / "config"))
    try:
        app.wait_until_ready(bodies=2)
        start = app.wait_frames(3)
        assert start["paused"] and start["time"] == 0.0 and start["scene"] == "throw.toml"
        assert start["records"] == 2
        for second in (False, True):  # played, then played again after R
            app.xdotool("key", "--window", app.window, "space")
            played = app.wait_for("the replay's commands", lambda s: s["bodies"] == 3
                                  and s["gravity"][1] == -4.0, timeout=60)
            assert not played["paused"]
            app.wait_for("the body command 30 adds drawn", lambda s: s["records"] == 3,
                         timeout=60)
            app.xdotool("key", "--window", app.window, "space")
            app.wait_for("paused", lambda s: s["paused"], timeout=60)
            if not second:
                app.xdotool("key", "--window", app.window, "r")
                app.wait_for("the replay's start", lambda s: s["bodies"] == 2
                             and s["records"] == 2 and s["gravity"][1] != -4.0, timeout=60)
        # close Simulation and open After the fact, so its end is on a 720 px screen
        for section in ("Simulation", "After the fact"):
            x0, y0, x1, y1 = app.wait_frames(3)["widgets"][f"section {section}"]
            app.xdotool("mousemove", "--window", app.window, int((x0 + x1) / 2),
                        int((y0 + y1) / 2), "click", 1)
        app.wait_for("the section open", lambda s: "replay_save" in s["widgets"], timeout=60)
        x0, y0, x1, y1 = app.wait_frames(3)["widgets"]["replay_save"]
        assert y1 < 720
        app.xdotool("mousemove", "--window", app.window, int((x0 + x1) / 2),
                    int((y0 + y1) / 2), "click", 1)
        app.wait_for_log("saved replay", timeout=60)
        saved = sorted(videos.glob("throw_replay_*.toml"))
        assert len(saved) == 1
        again = load_replay(saved[0])
        assert [(c.step, c.name) for c in again.commands] == [(c.step, c.name)
                                                              for c in COMMANDS]
        assert len(again.scene.bodies) == 2
        app.drop([path], 300, 300, types=1)
        app.wait_for("the replay from its start", lambda s: s["time"] == 0.0
                     and s["bodies"] == 2 and s["paused"] and s["gravity"][1] != -4.0,
                     timeout=60)
        bad = tmp_path / "bad.toml"
        bad.write_text('[world]\nhz = 240\n\n[[command]]\nstep = 5\nname = "throw"\n')
        app.drop([bad], 300, 300, types=1)
        line = app.wait_for_log("rejected bad.toml", timeout=60)
        assert "line 6: [[command]] #1: name: name must be one of" in line, line
        kept = app.wait_frames(3)
        assert kept["bodies"] == 2 and kept["scene"] == "throw.toml"
    finally:
        app.stop()
        server.kill()
        server.wait(10)
