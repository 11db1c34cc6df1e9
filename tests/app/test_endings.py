"""Every way of ending the app (app/endings.py) ends it within 2 s, with status 0 (130 for
Ctrl+C), and leaves the video being recorded playable. Each test runs the real app in its own
Xvfb server (one of them takes the server away)."""

import os
import signal
import subprocess
import sys
import time

import av
import pytest
from Xlib import X, protocol
from Xlib import display as xdisplay

from app.endings import STUCK_GRACE
from tests.app.running_app import RunningApp, start_xvfb

ENDING_TIMEOUT = 2.0  # s


def close_button(app, server) -> None:
    """What a window manager's close button sends: WM_DELETE_WINDOW."""
    connection = xdisplay.Display(app.display)
    window = connection.create_resource_object("window", app.window)
    protocols = connection.intern_atom("WM_PROTOCOLS")
    delete = connection.intern_atom("WM_DELETE_WINDOW")
    window.send_event(protocol.event.ClientMessage(
        window=window, client_type=protocols, data=(32, [delete, X.CurrentTime, 0, 0, 0])),
        event_mask=X.NoEventMask)
    connection.sync()
    connection.close()


ENDINGS = {
    "close button": (close_button, 0),
    "window destroyed": (lambda app, server: app.xdotool("windowclose", app.window), 0),
    "SIGTERM": (lambda app, server: app.process.send_signal(signal.SIGTERM), 0),
    "SIGINT": (lambda app, server: app.process.send_signal(signal.SIGINT), 130),
    "X server gone": (lambda app, server: server.kill(), 0),
}


@pytest.mark.parametrize("ending", list(ENDINGS))
def test_every_ending_is_quick_clean_and_keeps_the_recording(ending, tmp_path):
    end, status = ENDINGS[ending]
    server, display = start_xvfb()
    app = RunningApp(display, tmp_path, XDG_VIDEOS_DIR=str(tmp_path))
    try:
        app.wait_until_ready()
        app.xdotool("key", "--window", app.window, "F9")
        app.wait_for("a recording under way", lambda s: (s["recording"] or 0) >= 10)
        start = time.monotonic()
        end(app, server)
        try:
            code = app.process.wait(ENDING_TIMEOUT + 1.0)
        except subprocess.TimeoutExpired:
            app.process.send_signal(signal.SIGUSR1)  # its threads' stacks into the log
            time.sleep(1.0)
            pytest.fail(f"the app was still running {ENDING_TIMEOUT + 1} s after {ending}:\n"
                        f"{app.log()}")
        assert time.monotonic() - start <= ENDING_TIMEOUT, app.log()
        assert code == status, app.log()
        # a frame the main thread was drawing meanwhile is no error (the recording was stopped
        # by the ending, on another thread)
        assert "unexpected error" not in app.log(), app.log()
    finally:
        app.stop()
        server.kill()
        server.wait(10)
    videos = list(tmp_path.glob("*.mp4"))
    assert len(videos) == 1, app.log()
    with av.open(str(videos[0])) as container:
        frames = sum(1 for _ in container.decode(video=0))
    assert frames >= 10, app.log()
    assert "video saved" in app.log()


WATCHED_WINDOW = """
import sys, threading, time
from types import SimpleNamespace
from Xlib import X, display
from app import endings

connection = display.Display()
screen = connection.screen()
window = screen.root.create_window(0, 0, 64, 64, 0, screen.root_depth)
window.map()
connection.sync()
app = SimpleNamespace(shutting_down=False, stop_recording=lambda why: None)
threading.Thread(target=endings._end_if_stuck, args=(app, window.id), daemon=True).start()
time.sleep(0.5)  # the watchdog has selected the window's events
app.shutting_down = sys.argv[1] == "shutting-down"  # as App.shutdown sets it
window.destroy()
connection.sync()
time.sleep(endings.STUCK_GRACE + 1.5)  # a shutdown slowed down by a busy machine
sys.exit(3)
"""


@pytest.mark.parametrize("main", ["shutting-down", "stuck"])
def test_the_watchdog_leaves_a_slow_shutdown_alone_and_ends_a_stuck_draw(main):
    """The close button destroys the window too: if the loop ended and main's shutdown is merely
    slow, the watchdog must not end the process with an error under it (it did on a loaded
    machine); if main never got there (a draw stuck in the renderer), it ends the process."""
    server, display = start_xvfb()
    try:
        run = subprocess.run([sys.executable, "-c", WATCHED_WINDOW, main], capture_output=True,
                             text=True, timeout=30, env={**os.environ, "DISPLAY": display})
    finally:
        server.terminate()
        server.wait(10)
    if main == "shutting-down":
        assert run.returncode == 3 and "ERROR" not in run.stderr, run.stderr
    else:
        assert run.returncode == 0 and "event loop did not end" in run.stderr, run.stderr


# loaded by the app's Python before anything else (a sitecustomize on its PYTHONPATH): stopping a
# recording takes longer than the watchdog's grace, as it can on a loaded machine
SLOW_STOP = f"""
import time
from app.video import recorder
stop = recorder.ScreenRecording.stop
def slow_stop(self):
    time.sleep({STUCK_GRACE + 1.0})
    return stop(self)
recorder.ScreenRecording.stop = slow_stop
"""


def test_a_video_still_being_finished_when_the_watchdog_comes_is_kept(tmp_path):
    """The window destroyed, the main thread stops the recording, and the stop outlasts the
    watchdog's grace (app/endings.py): the watchdog must wait for the file, not end the process
    with the video half-written (CI once left an MP4 PyAV could not open)."""
    preload = tmp_path / "preload"
    preload.mkdir()
    (preload / "sitecustomize.py").write_text(SLOW_STOP)
    videos = tmp_path / "videos"
    videos.mkdir()
    server, display = start_xvfb()
    app = RunningApp(display, tmp_path, XDG_VIDEOS_DIR=str(videos), PYTHONPATH=str(preload))
    try:
        app.wait_until_ready()
        app.xdotool("key", "--window", app.window, "F9")
        app.wait_for("a recording under way", lambda s: (s["recording"] or 0) >= 10)
        app.xdotool("windowclose", app.window)
        assert app.process.wait(ENDING_TIMEOUT + STUCK_GRACE + 10.0) == 0, app.log()
    finally:
        app.stop()
        server.kill()
        server.wait(10)
    [video] = videos.glob("*.mp4")
    with av.open(str(video)) as container:
        frames = sum(1 for _ in container.decode(video=0))
    assert frames >= 10, app.log()
    assert "video saved (the window was destroyed)" in app.log()
