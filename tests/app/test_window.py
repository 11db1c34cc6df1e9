"""The real app under Xvfb : ``python -m app`` in its own X server, driven
like a user would — real XDND drops (inline types, as GTK sends them, and an XdndTypeList),
a garbage file, a slider dragged with real pointer events — watched through the app's status
file (``TUMBLE_STATUS_FILE``, see app/window.py) and its log, a screenshot saved to
``artifacts/``, and a window close that ends the process with status 0.

The window's geometry helpers (grab spring, floor point, spin couple) are tested first, without
X. The app tests share one app process, but each opens its own fresh scene first (the ``app``
fixture, tests/app/running_app.py) and waits on conditions, never on fixed sleeps, so they pass
alone and in any order.
"""

import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest
import trimesh

from app.frame_pace import FRAME_INTERVAL, LAGGING_FRAME_INTERVAL, MAX_LAG_HOLD
from app.window import (
    GRAB_FREQUENCY,
    SPIN_RATE,
    SPIN_WOBBLE,
    floor_point,
    grab_spring,
    ray_plane,
    spin_impulses,
)
from physics.geometry.meshes import builtin_shape
from physics.geometry.rotation import quat_from_axis_angle
from physics.model import WorldDef
from physics.world import World
from tests.app.running_app import DEFAULT_BODIES, REPO, RunningApp, start_xvfb

ARTIFACTS = REPO / "artifacts"


# ---- helpers of app/window.py (no X needed) ---------------------------------------------------

def test_grab_spring_has_the_set_frequency_and_is_critically_damped():
    for mass in (0.01, 1.0, 250.0):
        k, c = grab_spring(mass)
        assert np.sqrt(k / mass) == pytest.approx(2 * np.pi * GRAB_FREQUENCY)
        assert c / (2 * np.sqrt(k * mass)) == pytest.approx(1.0)


def test_floor_point_under_the_pointer_inside_the_container():
    eye = np.array([0.0, 5.0, 5.0])
    np.testing.assert_allclose(floor_point(eye, [1.0, -5.0, -6.0], (0, 0, 0), (4, 3, 4)),
                               [1.0, 0.0, -1.0])
    # beyond the wall: clamped to the footprint; no container: not clamped
    np.testing.assert_allclose(floor_point(eye, [5.0, -5.0, 0.0], (0, 0, 0), (4, 3, 4)),
                               [2.0, 0.0, 2.0])
    np.testing.assert_allclose(floor_point(eye, [5.0, -5.0, 0.0], (0, 0, 0), None),
                               [5.0, 0.0, 5.0])
    # above the horizon: under the camera's target
    np.testing.assert_allclose(floor_point(eye, [0.0, 0.1, -1.0], (0.5, 0.8, -0.3), None),
                               [0.5, 0.0, -0.3])
    assert ray_plane(eye, [1.0, 0.0, 0.0], (0, 0, 0), (0, 1, 0)) is None  # parallel


def test_spin_couple_spins_about_the_intermediate_axis_without_pushing():
    """The S key's impulses on a T-handle at rest in zero gravity: no linear velocity,
    ω = (0, SPIN_RATE, SPIN_WOBBLE·SPIN_RATE) in the principal frame — and it then flips
    (Dzhanibekov): ω2 changes sign within a few seconds."""
    shape = builtin_shape("t_handle")
    world = World(WorldDef(gravity=(0.0, 0.0, 0.0), container_size=None))
    turn = quat_from_axis_angle(np.array([1.0, 2.0, 0.5]) / np.sqrt(5.25), 0.7)
    body = world.add_body(shape.body_def([0.3, 1.0, -0.2], turn))
    row = world.index_of(body)
    for impulse, point in spin_impulses(world.state.pos[row], world.state.quat[row],
                                        shape.properties.principal_moments):
        world.apply_impulse(body, impulse, point)
    np.testing.assert_allclose(world.state.vel[row], 0.0, atol=1e-12)
    np.testing.assert_allclose(world.body_angular_velocity()[row],
                               [0.0, SPIN_RATE, SPIN_WOBBLE * SPIN_RATE], atol=1e-9)
    w2 = []
    for _ in range(240 * 4):
        world.step(1 / 240)
        w2.append(world.body_angular_velocity()[row][1])
    assert min(w2) < -0.5 * SPIN_RATE, "no flip within 4 s"


# ---- the app under Xvfb ------------------------------------------------------------------------



def box_obj(path: Path, extents) -> Path:
    mesh = trimesh.creation.box(extents=extents)
    path.write_text("".join(f"v {x} {y} {z}\n" for x, y, z in mesh.vertices)
                    + "".join(f"f {a + 1} {b + 1} {c + 1}\n" for a, b, c in mesh.faces))
    return path


def test_the_fix_makes_pyglets_xdnd_enter_accept_inline_types(xvfb):
    """pyglet 2.1.19's own handler raises TypeError on an XdndEnter with inline types (the
    crash); the patched one picks text/uri-list out of them."""
    script = textwrap.dedent("""
        import pyglet
        pyglet.options["shadow_window"] = False
        from types import SimpleNamespace
        from pyglet.libs.x11 import xlib
        from pyglet.window.xlib import XlibWindow
        original = XlibWindow._event_drag_enter
        import app.xdnd_fix
        assert app.xdnd_fix.needed(pyglet.version), pyglet.version
        event = xlib.XEvent()
        event.xclient.data.l[0] = 77              # source window
        event.xclient.data.l[1] = 5 << 24         # version 5, bit 0 clear: types inline
        event.xclient.data.l[2:5] = [301, 302, 0]
        target = SimpleNamespace(_xdnd_atoms={"text/uri-list": 302})
        try:
            original(target, event)
        except TypeError:
            print("original: TypeError")
        XlibWindow._event_drag_enter(target, event)
        print("patched:", target._xdnd_format, target._xdnd_source, target._xdnd_version)
    """)
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                            env=dict(os.environ, DISPLAY=xvfb, PYTHONPATH=str(REPO)), timeout=30)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split("\n")[:2] == ["original: TypeError", "patched: 302 77 5"]


DROP = (440, 520)  # window pixel over the floor inside the container in the start view


def drop_box(app, tmp_path, name="drop me.obj", types=2) -> int:
    """Drop a 0.2 × 0.3 × 0.4 m box at DROP; its body id once it is in the scene."""
    before = set(app.status()["ids"])
    mesh = box_obj(tmp_path / name, (0.2, 0.3, 0.4))
    app.drop([mesh], *DROP, types=types)
    status = app.wait_for("one more body", lambda s: len(s["ids"]) == len(before) + 1
                          and s["records"] == s["bodies"])
    [new] = set(status["ids"]) - before
    return new


def test_xdnd_drop_with_inline_types_adds_a_body(app, tmp_path):
    drop_box(app, tmp_path, "drop me.obj")  # a space: URI quoting
    line = app.wait_for_log("loaded drop me.obj:")
    assert line.endswith("loaded drop me.obj: mass=24 kg, mode=solid")  # 1000 kg/m³ · 0.024 m³
    assert app.status()["bodies"] == DEFAULT_BODIES + 1


def test_click_selects_the_dropped_body_and_ctrl_drag_lifts_it(app, tmp_path):
    """A box dropped at DROP stands on the floor point under that pixel, so a click there hits
    it (camera ray vs hull); Ctrl+drag upwards holds it in the air on the spring (above 0.6 m,
    the target is higher still), and it falls back when let go."""
    dropped = drop_box(app, tmp_path, "click me.obj")
    w = app.window
    app.xdotool("mousemove", "--window", w, *DROP)
    app.wait_frames()
    app.xdotool("click", 1)
    picked = app.wait_for("a selection", lambda s: s["selected"] is not None)
    assert picked["selected"] == dropped
    assert picked["selected_position"][1] < 0.2  # the 0.3 m box stands on the floor
    app.xdotool("keydown", "ctrl", "mousedown", 1)
    for y in range(DROP[1] - 40, DROP[1] - 281, -40):
        app.xdotool("mousemove", "--window", w, DROP[0], y)
        app.wait_frames(1)
    try:
        app.wait_for("the body held up", lambda s: s["selected_position"][1] > 0.6)
    finally:
        app.xdotool("mouseup", 1, "keyup", "ctrl")
    # below the height it was held above (it may come to rest on another body on a machine
    # slow enough that the spring swings it sideways: a box on the scene's sphere is at 0.55 m)
    app.wait_for("the body back down", lambda s: s["selected_position"][1] < 0.6)


def test_xdnd_drop_with_a_type_list_adds_every_file(app, tmp_path):
    files = [box_obj(tmp_path / "a.obj", (0.1, 0.1, 0.1)), REPO / "assets/meshes/torus.obj"]
    app.drop(files, DROP[0] - 120, DROP[1] + 40, types=5)
    assert app.wait_for_log("loaded a.obj:").endswith("loaded a.obj: mass=1 kg, mode=solid")
    app.wait_for_log("loaded torus.obj: mass=")
    app.wait_for("two more bodies", lambda s: s["bodies"] == DEFAULT_BODIES + 2)


def test_a_garbage_drop_is_rejected_and_the_app_lives_on(app, tmp_path):
    garbage = tmp_path / "garbage.stl"
    garbage.write_bytes(bytes(range(256)) * 4)
    app.drop([garbage], *DROP, types=1)
    line = app.wait_for_log("rejected garbage.stl: ")
    assert "STL" in line
    after = app.wait_frames(5)  # frames drawn after the rejection: the app lives on
    assert app.process.poll() is None
    assert after["bodies"] == DEFAULT_BODIES and after["loading"] == 0


def test_the_restitution_slider_follows_real_pointer_events(app):
    w = app.window
    # pause first (Space, over the 3D view): the panel's layout shifts by a line while the
    # physics falls behind now and then on a busy machine, and the press must land on the
    # slider whose place the status file reported
    app.xdotool("mousemove", "--window", w, 300, 300)
    app.wait_frames()
    app.xdotool("key", "space")
    app.wait_for("pause", lambda s: s["paused"])
    before = app.wait_frames()  # a status written with the paused layout
    assert before["restitution"] == 0.5
    x0, y0, x1, y1 = before["widgets"]["restitution"]
    y = int((y0 + y1) / 2)
    # hover, press inside the slider, drag far past its left end (clamps to the minimum), let go
    for args in (("mousemove", "--window", w, int(x0) + 30, y), ("mousedown", 1),
                 ("mousemove", "--window", w, int(x0) + 10, y),
                 ("mousemove", "--window", w, max(int(x0) - 200, 1), y), ("mouseup", 1),
                 ("mousemove", "--window", w, 300, 300), ("key", "space")):
        app.xdotool(*args)
        app.wait_frames()  # each event handled before the next
    after = app.wait_for("restitution 0, running", lambda s: s["restitution"] == 0.0
                         and not s["paused"])
    assert after["friction"] == before["friction"] and after["bodies"] == DEFAULT_BODIES
    # the physics steps with it: sim time advances after the change
    app.wait_for("steps with the new value", lambda s: s["time"] > after["time"] + 0.5
                 and s["restitution"] == 0.0)


def test_the_window_draws_30_a_second_while_the_physics_lags_and_60_once_it_keeps_up(app,
                                                                                     tmp_path):
    """A world no machine steps in real time (40 boxes in a pile at 10 000 steps a second):
    the physics drops sim time, and the window draws 30 frames a second to leave it the CPU
    (app/frame_pace.py); paused, the physics keeps up, and after the hold the window draws 60
    a second again."""
    boxes = "".join(f"""
[[body]]
shape = "box"
size = [0.2, 0.2, 0.2]
position = [{0.25 * (k % 5) - 0.5}, {0.15 + 0.25 * (k // 5)}, 0.0]
""" for k in range(40))
    heavy = tmp_path / "heavy.toml"
    heavy.write_text(f"[world]\nhz = 10000\n\n[container]\nsize = [2.0, 3.0, 2.0]\n{boxes}")
    app.open_scene(tmp_path / "heavy pile.toml", source=heavy)
    # fps: the status's rate over the last 120 frames, all drawn at the lagging pace by then
    app.wait_for("the window at 30 a second", lambda s: s["physics_lagging"]
                 and s["frame_interval"] == LAGGING_FRAME_INTERVAL and s["fps"] <= 31.0,
                 timeout=40)
    app.xdotool("mousemove", "--window", app.window, 300, 300)
    app.xdotool("key", "space")
    paused = app.wait_for("pause", lambda s: s["paused"])
    back = app.wait_for("the window at 60 a second", lambda s: not s["physics_lagging"]
                        and s["frame_interval"] == FRAME_INTERVAL, timeout=MAX_LAG_HOLD + 10)
    assert back["paused"] and back["time"] == paused["time"]
    app.xdotool("key", "space")  # running again for the next test
    app.wait_for("running", lambda s: not s["paused"])


def test_screenshot_of_the_running_app(app):
    """artifacts/app_window.png: the window as X shows it (read from the X server, not from
    the app's GL buffer), and a check that it is not blank."""
    from pyglet.extlibs import png  # pure-Python PNG writer; no window needed
    from Xlib import X, display

    # the camera is still: frames start from the cached floor and sky, and look as below
    app.wait_for("the background cache", lambda s: s["background_cached"])
    d = display.Display(app.display)
    root = d.screen().root
    window = d.create_resource_object("window", app.window)
    size = window.get_geometry()
    corner = window.translate_coords(root, 0, 0)  # minus the window's place on the screen
    raw = root.get_image(-corner.x, -corner.y, size.width, size.height, X.ZPixmap,
                         0xFFFFFFFF).data
    d.close()
    rgb = np.frombuffer(raw, np.uint8).reshape(size.height, size.width, 4)[:, :, 2::-1]
    ARTIFACTS.mkdir(exist_ok=True)
    with open(ARTIFACTS / "app_window.png", "wb") as f:
        png.Writer(size.width, size.height, greyscale=False).write(
            f, rgb.reshape(size.height, -1))
    assert (size.width, size.height) == (1280, 720)
    image = rgb.astype(float)
    assert image.std() > 20, "the window looks blank"
    # the panel (dark, docked right) and the lit floor and sky (light, left)
    assert image[300:700, 1000:1200].mean() < 90
    assert image[50:650, 50:400].mean() > 120


def test_a_big_mesh_is_drawn_coarse_before_its_finest_level_exists(app, tmp_path):
    """A staged drop: the 327,680-face scan simulates as soon as it is loaded and is drawn with
    a coarse first level while its levels of detail are still being made (the renderer logs
    each stage as it uploads it), then with those levels; the window keeps drawing. The loader
    logs its stages' times, and the status says when the drop came."""
    scan = tmp_path / "scan.ply"
    trimesh.creation.icosphere(subdivisions=7, radius=0.12).export(scan)
    bodies = app.status()["bodies"]
    before = time.monotonic()
    app.drop([scan], *DROP, types=1)
    app.wait_for_log("loaded scan.ply: mass=", timeout=60)
    timed = app.wait_for_log("timed scan.ply: read ")
    assert all(f" {stage} " in timed for stage in ("clean", "mass", "hull")), timed
    assert "on a core" in timed
    first = app.wait_for_log("drawing scan.ply with a first level of ", timeout=60)
    full = app.wait_for_log("drawing scan.ply with its levels of detail", timeout=60)
    lines = app.log().splitlines()
    assert lines.index(first) < lines.index(full)
    status = app.wait_for("the scan drawn at full detail, simulating",
                          lambda s: s["bodies"] == bodies + 1
                          and len(s["drawn_faces"].get("scan.ply", [])) > 1)
    assert status["drawn_faces"]["scan.ply"][0] > int(first.split(" first level of ")[1].split()[0])
    assert status["fps"] > 1
    assert 0 < status["frame_gap"] < 2.0  # no frame held up for long by the load
    assert before < status["dropped_at"] < time.monotonic()
    app.wait_for("time goes on", lambda s: s["time"] > status["time"] + 0.5)


def test_the_window_draws_on_while_a_1_3_million_face_scan_loads(tmp_path):
    """A 1,310,720-face PLY (the size of a photo scan) dropped on the window of an app of its
    own, on its own X server (the scan then stays in its memory, not in the other tests'
    app): from the drop until
    the scan is drawn at full detail, no interval between two frames is longer than half a
    second (a stutter, not a freeze) — or than twice the longest of the 120 frames before the
    drop, on a machine so busy that frames stall without any drop (shared by other processes,
    up to 1.6 s was measured). The load runs off the render thread, in compiled code that
    releases the GIL; the render thread's own work stays about 10 ms a frame meanwhile."""
    scan = tmp_path / "big_scan.ply"
    trimesh.creation.icosphere(subdivisions=8, radius=0.12).export(scan)
    server, display = start_xvfb()
    app = RunningApp(display, tmp_path, XDG_CONFIG_HOME=str(tmp_path / "config"))
    try:
        app.wait_until_ready()
        calm = app.wait_frames(120, timeout=60)["frame_gap"]  # 120 frames without a drop
        app.drop([scan], *DROP, types=1)
        app.wait_for_log("drawing big_scan.ply with its levels of detail", timeout=120)
        status = app.wait_frames(2)
    finally:
        app.stop()
        server.terminate()
        server.wait(10)
    assert status["drawn_faces"]["big_scan.ply"][0] > 10_000
    assert status["frame_gap_since_drop"] <= max(0.5, 2 * calm), (calm, status)


def test_the_window_keeps_drawing_while_a_20k_face_mesh_decomposes(app, tmp_path):
    """A 20,000-face torus dropped on the window simulates at once as its hull and is split
    into convex pieces meanwhile (in a child process: V-HACD holds Python's lock); the window
    draws on while it is split, and the body then collides as its pieces."""
    ring = tmp_path / "ring20k.obj"
    trimesh.creation.torus(0.25, 0.06, major_sections=200, minor_sections=50).export(ring)
    bodies = app.status()["bodies"]
    app.drop([ring], *DROP, types=1)
    app.wait_for_log("decomposing ring20k.obj", timeout=60)
    start = app.wait_for("a status", lambda s: "frames" in s)
    done = app.wait_for_log("ring20k.obj collides as", timeout=240)
    status = app.status()
    seconds = status["time"] - start["time"]
    assert status["bodies"] == bodies + 1
    # frames came all along: at least 2 a second of simulated time (the split took seconds)
    assert status["frames"] - start["frames"] >= max(5, 2 * seconds), (start, status)
    assert int(done.split(" collides as ")[1].split()[0]) >= 2


def test_closing_the_window_ends_the_app_with_status_0(tmp_path):
    """Its own app on its own X server: closing it must not take the other tests' app along."""
    server, display = start_xvfb()
    app = RunningApp(display, tmp_path)
    try:
        app.wait_until_ready()
        close_with_the_window_managers_button(app)
        assert app.process.wait(timeout=10) == 0
    finally:
        app.stop()
        server.terminate()
        server.wait(10)
    log = app.log()
    assert "Traceback" not in log and "ERROR" not in log, log


def close_with_the_window_managers_button(app) -> None:
    from Xlib import X, display
    from Xlib.protocol import event

    d = display.Display(app.display)
    window = d.create_resource_object("window", app.window)
    protocols = d.intern_atom("WM_PROTOCOLS")
    close = event.ClientMessage(window=window, client_type=protocols,
                                data=(32, [d.intern_atom("WM_DELETE_WINDOW"), X.CurrentTime,
                                           0, 0, 0]))
    window.send_event(close, event_mask=0)  # what a window manager's close button sends
    d.sync()  # a round trip: Xvfb may drop the requests of a client that disconnects at once
    d.close()


HINGE_SCENE = """[world]
gravity = [0.0, -9.81, 0.0]

[container]
size = [4.0, 3.0, 4.0]

[[body]]
name = "post"
shape = "box"
size = [0.3, 1.6, 0.3]
density = 8000.0
position = [0.0, 0.8, 0.0]

[[body]]
name = "ball"
shape = "sphere"
size = [0.1]
position = [0.9, 2.7, 0.0]
"""


def test_a_hinge_made_with_the_mouse_swings_the_ball(app, tmp_path):
    """Pause, click the ball, Shift+click the post: the panel offers the joint; its Create
    button makes a hinge (about the view direction, at the midpoint), the joint is listed in
    the status, and once running the ball swings about the anchor as a pendulum: to the other
    side of it and back, at a constant distance."""
    w = app.window
    # paused before the scene opens (it keeps the pause): the ball stays where the scene puts
    # it, above the post's top, until the joint holds it (paused after the drop, a loaded
    # machine let it fall to the floor first, where the hinge could not swing it)
    app.xdotool("mousemove", "--window", w, 300, 300)
    app.xdotool("key", "space")
    app.wait_for("pause", lambda s: s["paused"])
    scene = tmp_path / "hinge.toml"
    scene.write_text(HINGE_SCENE)
    app.drop([scene], 300, 300, types=1)
    status = app.wait_for("the hinge scene, paused", lambda s: s.get("scene") == "hinge.toml"
                          and s["loading"] == 0 and s["bodies"] == s["records"] == 2
                          and s["paused"])
    post, ball = status["ids"]
    status = app.wait_frames()
    app.xdotool("mousemove", "--window", w, *map(int, status["body_pixels"][str(ball)]))
    app.wait_frames()
    app.xdotool("click", 1)
    app.wait_for("the ball selected", lambda s: s["selected"] == ball)
    app.xdotool("mousemove", "--window", w, *map(int, status["body_pixels"][str(post)]))
    app.wait_frames()
    app.xdotool("keydown", "shift", "click", 1, "keyup", "shift")
    status = app.wait_for("a joint draft", lambda s: s["joint_draft"] is not None)
    assert status["joint_draft"] == {"first": ball, "second": post, "type": "hinge"}
    status = app.wait_frames(3)  # the panel scrolled to the draft
    x0, y0, x1, y1 = status["widgets"]["joint_create"]
    app.xdotool("mousemove", "--window", w, int((x0 + x1) / 2), int((y0 + y1) / 2))
    app.wait_frames()
    app.xdotool("click", 1)
    status = app.wait_for("the joint made", lambda s: len(s["joints"]) == 1)
    (joint,) = status["joints"]
    assert joint["type"] == "hinge" and joint["bodies"] == [ball, post]
    assert status["joint_draft"] is None
    anchor = np.array(joint["anchor"])
    app.xdotool("mousemove", "--window", w, 300, 300)
    app.wait_frames()
    app.xdotool("key", "space")
    app.wait_for("running", lambda s: not s["paused"])
    sides, distances = set(), []
    deadline = time.monotonic() + 20.0
    while time.monotonic() < deadline and len(sides) < 2:
        position = np.array(app.wait_frames(1)["selected_position"])
        arm = position - anchor
        distances.append(np.linalg.norm(arm))
        if abs(arm[0]) > 0.1:
            sides.add(bool(arm[0] > 0))
    assert sides == {True, False}  # it swung through to the far side of the anchor
    assert max(distances) - min(distances) < 0.01  # on its arm all the way


def test_a_millimetre_part_is_fitted_to_a_typed_size_with_real_clicks(app, tmp_path):
    """Dropped, a 170 mm part read as 170 m waits for its scale; typing 0.5 in the "fit to"
    field and pressing its button adds it 0.5 m long (the scale in the log line). The name is
    new to the scale memory, so the offer is made whatever earlier runs chose."""
    w = app.window
    part = tmp_path / "bracket in mm.stl"
    trimesh.creation.box(extents=(170.0, 40.0, 25.0)).export(part)
    before = app.status()["bodies"]
    app.drop([part], *DROP, types=1)
    status = app.wait_for("the scale offer", lambda s: s["scale_offers"] == 1)
    status = app.wait_frames(2)
    x0, y0, x1, y1 = status["widgets"]["scale_fit_size"]
    app.xdotool("mousemove", "--window", w, int((x0 + x1) / 2), int((y0 + y1) / 2))
    app.wait_frames()
    app.xdotool("click", 1)
    app.wait_frames()
    app.xdotool("key", "ctrl+a")
    app.xdotool("type", "0.5")  # no Enter: pressing the button is what the user does next
    status = app.wait_frames(3)
    fit = next(k for k in range(4) if f"scale_offer:{k}" in status["widgets"]
               and status["widgets"][f"scale_offer:{k}"][1] < y1
               and status["widgets"][f"scale_offer:{k}"][3] > y0)  # the button on its row
    x0, y0, x1, y1 = status["widgets"][f"scale_offer:{fit}"]
    app.xdotool("mousemove", "--window", w, int((x0 + x1) / 2), int((y0 + y1) / 2))
    app.wait_frames()
    app.xdotool("click", 1)
    app.wait_for("the part added", lambda s: s["bodies"] == before + 1 and s["scale_offers"] == 0)
    line = app.wait_for_log("loaded bracket in mm.stl:")
    assert f"scale={0.5 / 170:g}" in line, line  # 0.5 m along its 170 mm length
