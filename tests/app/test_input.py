"""Input the panel takes never reaches the 3D view (app/window.py ``_ui_has``): the wheel, a
drag that starts on the panel, keys typed into a text field. Driven with real pointer and key
events (xdotool) in the running app; each test measures from the state it finds."""

import pytest

from tests.app.running_app import RunningApp

VIEW_POINT = (400, 300)  # window pixels over the 3D view


@pytest.fixture
def app(xvfb, tmp_path):
    """An app of its own for each test: these tests scroll and focus the panel, which a scene
    of its own would not reset."""
    running = RunningApp(xvfb, tmp_path)
    try:
        running.wait_until_ready()
        yield running
    finally:
        running.stop()




def settle_frames(app) -> dict:
    """The status once the events sent before are handled, by the app and by ImGui: ImGui
    takes a press, the moves and a release sent in one burst over successive frames (its input
    queue trickles them, one kind of change a frame), so a release can reach it four frames
    after the app read it, and a press in the view before that finds the panel's widget still
    held."""
    return app.wait_frames(6)


def test_the_wheel_over_the_panel_scrolls_the_panel_not_the_view(app):
    panel = settle_frames(app)["widgets"]["panel"]
    # the panel scrolled to its top first (an earlier test may have left it at the bottom)
    app.xdotool("mousemove", "--window", app.window, int(panel[0]) + 60, 300,
                *["click", 4] * 20)
    settle_frames(app)
    app.xdotool("mousemove", "--window", app.window, *VIEW_POINT)
    before = settle_frames(app)
    # onto the panel and the wheel at once, before ImGui's next frame has seen the pointer
    app.xdotool("mousemove", "--window", app.window, int(panel[0]) + 60, 300,
                "click", 5, "click", 5, "click", 5)
    after = settle_frames(app)
    assert after["camera"] == before["camera"]
    assert after["widgets"]["mesh_path"][1] < before["widgets"]["mesh_path"][1]  # it scrolled
    app.xdotool("mousemove", "--window", app.window, *VIEW_POINT, "click", 4)
    assert settle_frames(app)["camera"][2] < after["camera"][2]  # over the view: zoom in


def test_a_drag_that_starts_on_the_panel_does_not_orbit_the_view(app):
    panel = settle_frames(app)["widgets"]["panel"]
    before = app.status()["camera"]
    app.xdotool("mousemove", "--window", app.window, int(panel[0]) + 5, 700,
                "mousedown", 1, "mousemove", "--window", app.window, 300, 400,
                "mousemove", "--window", app.window, 200, 300, "mouseup", 1)
    assert settle_frames(app)["camera"] == before
    app.xdotool("mousemove", "--window", app.window, *VIEW_POINT, "mousedown", 1,
                "mousemove", "--window", app.window, VIEW_POINT[0] + 80, VIEW_POINT[1],
                "mouseup", 1)
    assert settle_frames(app)["camera"][0] != before[0]  # from the view: it orbits


def test_keys_typed_into_a_text_field_are_not_shortcuts(app):
    status = settle_frames(app)
    while status["widgets"]["mesh_path"][3] > status["window"][1] - 10:  # scroll it into view
        app.xdotool("mousemove", "--window", app.window, int(status["widgets"]["panel"][0]) + 60,
                    300, "click", 5)
        status = settle_frames(app)
    x0, y0, x1, y1 = status["widgets"]["mesh_path"]
    app.xdotool("mousemove", "--window", app.window, int(x0 + 20), int((y0 + y1) / 2),
                "click", 1)
    before = settle_frames(app)
    app.xdotool("type", "--delay", "50", "r s")  # R: reset, Space: pause, S: spin
    after = settle_frames(app)
    assert after["paused"] == before["paused"] is False
    assert after["time"] > before["time"]  # not reset to the start
    app.xdotool("key", "Escape")  # leave the field
    # and give the focus back to the view, as the other tests expect to find it
    app.xdotool("mousemove", "--window", app.window, *VIEW_POINT, "click", 1)
    settle_frames(app)
