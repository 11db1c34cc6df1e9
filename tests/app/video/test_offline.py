"""``tumble record`` (app/video/offline.py), run as a user would — a subprocess of ``python -m app``
with no display — and decoded back with PyAV: exact frame count and size, motion, identical
frames on a second run, frames at exact sim times, Ctrl+C, and one-line errors.

Saves artifacts/record_frame.png (a frame of the recorded video) for a person to look at."""

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import av
import numpy as np
import pytest

from app.video.offline import Prefetched, frame_count, sim_time_views
from app.video.recorder import save_png
from physics.scene import load_scene
from tests.app.test_cli import assert_one_line_error
from tests.paths import REPO

REPO = REPO
ARTIFACTS = REPO / "artifacts"

SMALL_SCENE = """
[world]
gravity = [0.0, 0.0, 0.0]     # zero-g: the T-handle tumbles all the time
hz = 240

[container]
size = [2.0, 2.0, 2.0]

[[body]]
shape = "t_handle"
size = [2.0]
position = [0.0, 1.0, 0.0]
angular_velocity = [0.2, 8.0, 0.1]
velocity = [0.0, 2.0, 0.0]

[[body]]
shape = "box"
size = [0.4, 0.3, 0.2]
position = [-0.5, 1.5, 0.3]
velocity = [1.0, 0.0, -0.5]
angular_velocity = [3.0, 1.0, 0.0]
color = [0.9, 0.3, 0.2]
"""


def record(*args, cwd=None, **popen) -> subprocess.CompletedProcess:
    """``python -m app record …`` without a display."""
    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY")}
    env["PYTHONPATH"] = str(REPO)
    return subprocess.run([sys.executable, "-m", "app", "record", *map(str, args)],
                          cwd=cwd or REPO, env=env, capture_output=True, text=True, timeout=120)


def decode(path: Path) -> list[np.ndarray]:
    with av.open(str(path)) as container:
        return [f.to_ndarray(format="rgb24") for f in container.decode(video=0)]


@pytest.fixture
def scene(tmp_path) -> Path:
    path = tmp_path / "small.toml"
    path.write_text(SMALL_SCENE)
    return path


def test_small_scene_gives_exact_frames_with_motion_and_twice_the_same(scene, tmp_path):
    """2 s at 30 fps, 320×180 → exactly 60 frames of that size; bodies move; a second run
    decodes to identical frames (nothing depends on the machine's speed)."""
    outputs = []
    for run in ("a", "b"):
        out = tmp_path / f"{run}.mp4"
        result = record(scene, "--seconds", "2", "--fps", "30", "--size", "320x180",
                        "--gizmos", "L,omega,axes", "--out", out)
        assert result.returncode == 0, result.stderr
        assert "60/60 frames" in result.stderr and "fps" in result.stderr  # the progress bar
        assert result.stderr.splitlines()[-1].endswith(f"60 frames (2.00 s at 30 fps) → {out}")
        outputs.append(decode(out))
    first, second = outputs
    assert len(first) == 60
    assert all(frame.shape == (180, 320, 3) for frame in first)
    changes = [np.abs(a.astype(int) - b).mean() for a, b in zip(first, first[1:])]
    assert min(changes) > 0.05, "some consecutive frames are the same: no motion"
    moved = np.abs(first[0].astype(int) - first[-1]).max(axis=2) > 40
    assert moved.sum() > 300, "the bodies did not move across the 2 s"
    assert len(second) == 60
    for a, b in zip(first, second):
        np.testing.assert_array_equal(a, b)
    ARTIFACTS.mkdir(exist_ok=True)
    save_png(ARTIFACTS / "record_frame.png", first[20])


def test_frames_show_exact_sim_times_between_steps(tmp_path):
    """hz = 100 is no multiple of 30 fps: frame k blends the steps around k/30 s. A body
    drifting at constant velocity (no gravity, no walls) is at p0 + v·k/30 exactly."""
    path = tmp_path / "drift.toml"
    path.write_text('[world]\ngravity = [0.0, 0.0, 0.0]\nhz = 100\n\n'
                    '[[body]]\nshape = "sphere"\nsize = [0.1]\nposition = [0.0, 1.0, 0.0]\n'
                    'velocity = [0.3, 0.0, -0.6]\n')
    views = list(sim_time_views(load_scene(path), fps=30, count=31))
    assert len(views) == frame_count(31 / 30, 30) == 31
    for k, view in enumerate(views):
        np.testing.assert_allclose(view.pos[0], [0.3 * k / 30, 1.0, -0.6 * k / 30], atol=1e-12)


def replay_of_small_scene(path: Path, tmp_path: Path, commands) -> Path:
    """SMALL_SCENE with ``commands`` (LoggedCommand) written as a replay file."""
    from physics.replay import Replay, write_replay

    write_replay(tmp_path / "replay.toml", Replay(load_scene(path), tuple(commands)))
    return tmp_path / "replay.toml"


def test_a_replay_is_recorded_with_its_commands_at_their_steps(scene, tmp_path):
    """Frame k of a replay's video shows the live run with the same commands at step 8k
    (240 Hz, 30 fps): a throw, gravity switched on and a body removed change what it shows."""
    from physics.history import LoggedCommand
    from physics.replay import Schedule, load_replay
    from physics.scene import build_world
    from physics.simulation import Simulation

    commands = [LoggedCommand(40, "apply_impulse", (1, [0.0, 3.0, 0.0])),
                LoggedCommand(100, "set_gravity", ([0.0, -9.81, 0.0],)),
                LoggedCommand(200, "remove_body", (0,))]
    replay = load_replay(replay_of_small_scene(scene, tmp_path, commands))
    views = list(sim_time_views(replay.scene, fps=30, count=40, schedule=Schedule.of(replay)))
    world, _ = build_world(load_scene(scene))
    live = Simulation(world, hz=240)
    for k, view in enumerate(views):
        for command in commands:
            if command.step == 8 * k - 8 or (k and 8 * k - 8 < command.step < 8 * k):
                live.run_steps(command.step - live.latest().step)
                getattr(live, command.name)(*command.args)
        snap = live.run_steps(8 * k - live.latest().step)
        assert np.array_equal(view.ids, snap.ids), k
        np.testing.assert_allclose(view.pos, snap.pos, rtol=0, atol=1e-12, err_msg=str(k))
    assert len(views[-1].ids) == 1 and views[0].pos[1, 1] < views[12].pos[1, 1] - 0.1


def test_bodies_a_replay_adds_are_drawn_as_their_hulls(scene, tmp_path):
    """A box and a ball dropped by commands (no mesh file) show in the video as their hull and
    sphere: frames after the drop differ where they fall."""
    from physics.history import LoggedCommand
    from tests.physics.bodies import box_body
    from tests.physics.scripted import ball

    commands = [LoggedCommand(24, "add_body", (box_body((0.4, 0.3, 0.2),
                                                        position=[0.5, 1.6, -0.5]),)),
                LoggedCommand(24, "add_body", (ball([-0.5, 1.6, 0.5], radius=0.15),))]
    path = replay_of_small_scene(scene, tmp_path, commands)
    views = list(sim_time_views(load_replay_scene(path), fps=30, count=10,
                                schedule=schedule_of(path)))
    assert [len(v.ids) for v in views] == [2, 2, 2, 2, 4, 4, 4, 4, 4, 4]
    box, sphere = views[-1].shapes[2], views[-1].shapes[3]
    np.testing.assert_allclose(np.sort(np.abs(box.vertices), axis=0)[-1], [0.2, 0.15, 0.1])
    assert box.faces.shape == (12, 3) and sphere.radius == 0.15
    out = tmp_path / "drop.mp4"
    result = record(path, "--seconds", "0.5", "--fps", "30", "--size", "320x180", "--out", out)
    assert result.returncode == 0, result.stderr
    frames = decode(out)
    assert len(frames) == 15
    assert np.abs(frames[14].astype(int) - frames[4]).max(axis=2).__gt__(40).sum() > 100


def load_replay_scene(path):
    from physics.replay import load_replay

    return load_replay(path).scene


def schedule_of(path):
    from physics.replay import Schedule, load_replay

    return Schedule.of(load_replay(path))


def test_record_refuses_a_replay_that_changes_the_rate(scene, tmp_path):
    from physics.history import LoggedCommand

    path = replay_of_small_scene(scene, tmp_path, [LoggedCommand(10, "set_hz", (120.0,))])
    result = record(path, "--seconds", "1", "--out", tmp_path / "o.mp4")
    assert_one_line_error(result, 1, f"{path}:", "set_hz: tumble record keeps the scene's rate")


def test_prefetched_items_come_in_order_made_on_another_thread():
    makers = []

    def squares():
        for k in range(50):
            makers.append(threading.current_thread())
            yield k * k

    assert list(Prefetched(squares(), depth=3)) == [k * k for k in range(50)]
    assert set(makers) == {makers[0]} and makers[0] is not threading.current_thread()


def test_prefetched_raises_the_error_of_the_item_it_could_not_make():
    def failing():
        yield 1
        raise ValueError("scene.toml:3: bad")

    items = Prefetched(failing())
    assert next(items) == 1
    with pytest.raises(ValueError, match="scene.toml:3: bad"):
        next(items)
    with pytest.raises(ValueError):  # and again, never a hang
        next(items)
    empty = Prefetched(iter(()))
    assert list(empty) == [] and list(empty) == []


def test_closing_prefetched_stops_its_thread_part_way():
    made = []

    def endless():
        while True:
            made.append(len(made))
            yield made[-1]

    items = Prefetched(endless(), depth=2)
    assert [next(items) for _ in range(5)] == [0, 1, 2, 3, 4]
    items.close()
    stopped = len(made)
    time.sleep(0.3)
    assert len(made) == stopped <= 5 + 2 + 1  # the ones taken, the queue, the one being made


def test_ctrl_c_stops_and_still_leaves_a_playable_file(scene, tmp_path):
    out = tmp_path / "long.mp4"
    env = {k: v for k, v in os.environ.items() if k != "DISPLAY"}
    process = subprocess.Popen(
        [sys.executable, "-m", "app", "record", str(scene), "--seconds", "60", "--fps", "30",
         "--size", "320x180", "--out", str(out)], cwd=REPO, env=dict(env, PYTHONPATH=str(REPO)),
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        # Ctrl+C's default action even when this run inherited SIGINT ignored (a test run
        # started in the background by a non-interactive shell), as a terminal gives it
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        first = process.stderr.readline()  # progress reaches 10 % (180 frames)
        assert "/1800 frames" in first, first + process.stderr.read()
        process.send_signal(signal.SIGINT)
        _, rest = process.communicate(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
    assert process.returncode == 130, rest
    last = rest.splitlines()[-1]
    assert last.startswith(f"tumble record: interrupted; {out} holds the first "), rest
    written = int(last.split("first ")[1].split()[0])
    frames = decode(out)
    assert 180 <= len(frames) == written < 1800


@pytest.mark.parametrize("args, words", [
    (("nope.toml", "--seconds", "1"), ("nope.toml", "scene file not found")),
    (("{scene}", "--seconds", "1", "--size", "321x180"), ("--size", "even", "321x180")),
    (("{scene}", "--seconds", "1", "--size", "wide"), ("--size", "WIDTHxHEIGHT", "wide")),
    (("{scene}", "--seconds", "-1"), ("--seconds", "≥ 0")),
    (("{scene}", "--seconds", "0"), ("--seconds 0", "no frame")),
    (("{scene}", "--seconds", "1", "--fps", "0"), ("--fps", "≥ 1")),
    (("{scene}", "--seconds", "1", "--gizmos", "L,spin"), ("--gizmos", "'spin'", "omega")),
    (("{scene}", "--seconds", "1", "--camera", "30"), ("--camera", "YAW,PITCH")),
    (("{scene}", "--seconds", "1", "--camera", "30,95"), ("--camera", "pitch", "95")),
])
def test_bad_arguments_are_one_line_with_status_2(scene, tmp_path, args, words):
    args = [a.format(scene=scene) for a in args]
    result = record(*args, "--out", tmp_path / "o.mp4")
    assert_one_line_error(result, 2, *words)
    assert not (tmp_path / "o.mp4").exists() or "no frame" in words[1]


def test_unwritable_output_is_one_line_naming_it(scene, tmp_path):
    out = tmp_path / "missing folder" / "o.mp4"
    assert_one_line_error(record(scene, "--seconds", "1", "--out", out), 2, str(out),
                          "cannot write the video", "folder does not exist")
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o500)
    try:
        if os.access(locked, os.W_OK):  # root ignores permissions: a read-only mount instead
            out = Path("/proc/o.mp4")
        else:
            out = locked / "o.mp4"
        assert_one_line_error(record(scene, "--seconds", "1", "--out", out), 2, str(out),
                              "cannot write the video")
    finally:
        locked.chmod(0o700)


def test_an_invalid_scene_is_one_line_with_status_1(tmp_path):
    bad = tmp_path / "bad.toml"
    bad.write_text('[[body]]\nshape = "box"\nsize = [1, 1]\n')
    assert_one_line_error(record(bad, "--seconds", "1", "--out", tmp_path / "o.mp4"), 1,
                          f"{bad}:3: [[body]] #1: size")


def test_a_full_disk_is_reported_not_a_traceback(scene, tmp_path):
    full = tmp_path / "full.mp4"
    full.symlink_to("/dev/full")  # every write fails with ENOSPC
    start = time.monotonic()
    result = record(scene, "--seconds", "2", "--fps", "30", "--size", "320x180", "--out", full)
    assert result.returncode == 2, result.stderr
    last = result.stderr.splitlines()[-1]
    assert last.startswith(f"tumble record: error: {full}: encoding stopped"), result.stderr
    assert "disk is full" in last and "Traceback" not in result.stderr
    assert time.monotonic() - start < 100
