"""app/video/recorder.py: the MP4 writer decoded back with PyAV (count, order, size, orientation,
time stamps, repeats, errors: odd size, unwritable folder, full disk), the sim-time frame
clock, the recordings folder and file names, PNG screenshots, and the in-app recorder:
headless (EGL) reading a framebuffer, and the real app under Xvfb — Record button and F9,
2 s of sim time, a video whose frame count matches sim time × fps, the REC indicator not in
it, F12, and a window closed mid-recording that still leaves a playable file.

Saves artifacts/app_recording_frame.png (a frame of the in-app video)."""

import math
import os
import threading
import time
from datetime import datetime
from pathlib import Path

import av
import moderngl
import numpy as np
import pytest
from av.video.reformatter import VideoReformatter

from app.video.recorder import (
    FrameClock,
    RecordingError,
    ScreenRecording,
    VideoWriter,
    even_size,
    prepare_folder,
    recordings_folder,
    save_png,
    timestamped_path,
    to_yuv420p,
)
from tests.app.running_app import REPO, RunningApp

ARTIFACTS = REPO / "artifacts"
SIZE = (64, 48)


def decode(path) -> list[av.VideoFrame]:
    with av.open(str(path)) as container:
        return list(container.decode(video=0))


def solid(writer: VideoWriter, rgb, bottom_up=False, repeat=1) -> None:
    frame = writer.buffer()
    frame[:] = rgb
    writer.submit(frame, bottom_up=bottom_up, repeat=repeat)


# ---- VideoWriter ---------------------------------------------------------------------------

def test_frames_are_encoded_in_order_at_exact_times(tmp_path):
    """10 grey levels (a buffer pool of 4 is reused), then one repeated 3×: 13 frames of
    64×48, frame k at k/25 s, colours within H.264's rounding."""
    path = tmp_path / "grey.mp4"
    with VideoWriter(path, SIZE, 25) as writer:
        for k in range(10):
            solid(writer, 20 * k + 20)
        solid(writer, (200, 40, 40), repeat=3)
    frames = decode(path)
    assert len(frames) == 13
    assert all((f.width, f.height) == SIZE for f in frames)
    assert [f.time for f in frames] == pytest.approx([k / 25 for k in range(13)])
    means = [f.to_ndarray(format="rgb24").astype(float).mean(axis=(0, 1)) for f in frames]
    for k in range(10):
        np.testing.assert_allclose(means[k], 20 * k + 20, atol=4)
    for k in range(10, 13):
        np.testing.assert_allclose(means[k], (200, 40, 40), atol=8)
    assert writer.close().frames == 13 and writer.error is None


def test_bottom_up_frames_are_flipped_to_image_order(tmp_path):
    """OpenGL rows come bottom row first: a buffer whose first rows are red shows red at the
    bottom of the video."""
    path = tmp_path / "flip.mp4"
    with VideoWriter(path, SIZE, 30) as writer:
        frame = writer.buffer()
        frame[:] = (20, 20, 200)
        frame[:SIZE[1] // 2] = (220, 20, 20)  # rows 0… = the bottom of a GL framebuffer
        writer.submit(frame, bottom_up=True)
    image = decode(path)[0].to_ndarray(format="rgb24").astype(int)
    assert image[-4, 30, 0] > 180 and image[-4, 30, 2] < 80  # bottom: red
    assert image[3, 30, 2] > 180 and image[3, 30, 0] < 80    # top: blue


def test_rgba_buffers_give_the_same_video_as_rgb_ones(tmp_path):
    """The same pictures as (h, w, 4) RGBA buffers (alpha ignored), bottom-up or not, decode
    to exactly the frames of the RGB buffers: only the layout differs."""
    rng = np.random.default_rng(3)
    blocks = [rng.integers(0, 255, (SIZE[1] // 8, SIZE[0] // 8, 3)) for _ in range(3)]
    pictures = [np.kron(b, np.ones((8, 8, 1))).astype(np.uint8) for b in blocks]  # 8×8 tiles
    videos = []
    for input_format in ("rgb24", "rgba"):
        path = tmp_path / f"{input_format}.mp4"
        with VideoWriter(path, SIZE, 30, input_format=input_format) as writer:
            assert writer.channels == (3 if input_format == "rgb24" else 4)
            for k, picture in enumerate(pictures):
                frame = writer.buffer()
                assert frame.shape == (SIZE[1], SIZE[0], writer.channels)
                frame[..., :3] = picture[::-1] if k % 2 else picture
                frame[..., 3:] = rng.integers(0, 255, frame[..., 3:].shape)  # alpha: noise
                writer.submit(frame, bottom_up=bool(k % 2))
        videos.append([f.to_ndarray(format="rgb24") for f in decode(path)])
    rgb, rgba = videos
    assert len(rgb) == len(rgba) == 3
    for a, b, picture in zip(rgb, rgba, pictures):
        np.testing.assert_array_equal(a, b)
        assert np.abs(a.astype(int) - picture).mean() < 12  # the picture, up to H.264's loss


def test_conversion_gives_swscales_colours_in_either_row_order():
    """``to_yuv420p`` (which replaced swscale on the writer thread) against swscale's own
    RGBA → yuv420p with the area filter, on noise and on flat 8×8 tiles, read top down and
    bottom up: every byte of every plane within 1 level, and on average within 0.05."""
    rng = np.random.default_rng(5)
    height, width = 96, 128
    rgba = rng.integers(0, 256, (height, width, 4), dtype=np.uint8)
    tiles = rng.integers(0, 256, (height // 16, width // 8, 4))
    rgba[height // 2:] = np.kron(tiles, np.ones((8, 8, 1))).astype(np.uint8)
    reference = VideoReformatter().reformat(
        av.VideoFrame.from_numpy_buffer(rgba, format="rgba"), format="yuv420p",
        interpolation="AREA")
    expected = [np.frombuffer(p, np.uint8).reshape(p.height, p.line_size)[:, :p.width]
                for p in reference.planes]
    for bottom_up in (False, True):
        planes = [np.zeros((height, width), np.uint8)] \
            + [np.zeros((height // 2, width // 2 + 5), np.uint8) for _ in "uv"]  # padded rows
        pixels = np.ascontiguousarray(rgba[::-1] if bottom_up else rgba)
        to_yuv420p(pixels.view(np.uint32)[..., 0], *planes, bottom_up)
        for plane, want in zip(planes, expected):
            got = plane[:, :want.shape[1]].astype(int)
            assert np.abs(got - want).max() <= 1
            assert np.abs(got - want).mean() < 0.05
        assert not planes[1][:, width // 2:].any()  # the padding is left alone


def test_odd_sizes_and_unwritable_folders_are_refused_with_the_path(tmp_path):
    with pytest.raises(RecordingError, match="even"):
        VideoWriter(tmp_path / "odd.mp4", (65, 48), 30)
    missing = tmp_path / "nope" / "a.mp4"
    with pytest.raises(RecordingError, match=f"{missing}: cannot write the video .*does not "):
        VideoWriter(missing, SIZE, 30)
    assert even_size(1281, 721) == (1280, 720) and even_size(1, 1) == (2, 2)


def test_a_full_disk_stops_encoding_with_a_clear_error_and_close_returns(tmp_path):
    full = tmp_path / "full.mp4"
    full.symlink_to("/dev/full")
    writer = VideoWriter(full, (320, 240), 30)
    noise = np.random.default_rng(1)
    for _ in range(60):
        frame = writer.buffer()
        frame[:] = noise.integers(0, 255, frame.shape, dtype=np.uint8)
        writer.submit(frame)
    result = writer.close()
    assert result.error is not None and "disk is full" in result.error
    assert result.error.startswith(f"{full}: ")
    assert result.frames < 60


def test_closing_part_way_leaves_a_playable_file(tmp_path):
    path = tmp_path / "part.mp4"
    writer = VideoWriter(path, SIZE, 60)
    for k in range(7):
        solid(writer, 30 * k)
    assert writer.close().frames == 7
    assert writer.close().frames == 7  # closing twice is harmless
    with pytest.raises(RecordingError, match="already closed"):
        solid(writer, 0)
    assert len(decode(path)) == 7


def test_a_second_close_on_another_thread_returns_only_once_the_file_is_finished(tmp_path):
    """An ending's watchdog may close the video while the main thread is closing it
    (app/endings.py): the later call must not return (and let the process end) before the
    writer thread has written the file."""
    path = tmp_path / "twice.mp4"
    writer = VideoWriter(path, (640, 480), 60, pool=64)
    for k in range(60):  # ~0.1–1 s of encoding queued
        solid(writer, 4 * k)
    first = threading.Thread(target=writer.close)
    first.start()
    while not writer._closed:  # the first close is under way
        time.sleep(0.001)
    assert writer.close().frames == 60
    assert len(decode(path)) == 60
    first.join()


# ---- FrameClock ----------------------------------------------------------------------------

def test_clock_follows_sim_time_not_display_frames():
    """A 24 Hz display of 2 s of sim time fills 60 fps video: 121 frames (0 … 2 s), each
    display frame standing for 2 or 3 of them; paused or reset time adds none."""
    clock = FrameClock(60)
    counts = [clock.advance(k / 24) for k in range(49)]
    assert sum(counts) == clock.frames == 121
    assert counts[0] == 1 and set(counts[1:]) == {2, 3}
    assert clock.advance(2.0) == 0                  # paused: same sim time
    assert clock.advance(0.0) == 0                  # reset: time went back
    assert clock.advance(0.5) == 30                 # and goes on from there
    fast = FrameClock(30)  # a 120 Hz display: most display frames are not needed
    assert sum(fast.advance(k / 120) for k in range(241)) == 61


def test_slow_motion_records_as_slow_motion():
    """Time scale ¼: 1 s of sim time is 4 s of video."""
    clock = FrameClock(30)
    total = sum(clock.advance(k / 100, time_scale=0.25) for k in range(101))
    assert total == 121
    assert clock.video_time == pytest.approx(4.0)


# ---- folders, names, screenshots -----------------------------------------------------------

def test_recordings_go_to_videos_if_it_exists_else_to_recordings(tmp_path, monkeypatch):
    monkeypatch.delenv("XDG_VIDEOS_DIR", raising=False)
    home, cwd = tmp_path / "home", tmp_path / "work"
    home.mkdir()
    assert recordings_folder(home, cwd) == cwd / "recordings"
    (home / "Videos").mkdir()
    assert recordings_folder(home, cwd) == home / "Videos"
    monkeypatch.setenv("XDG_VIDEOS_DIR", str(tmp_path))
    assert recordings_folder(home, cwd) == tmp_path


def test_file_names_carry_scene_and_time_and_never_overwrite(tmp_path):
    when = datetime(2026, 11, 23, 9, 5, 7)
    first = timestamped_path(tmp_path, "my scene/1", ".mp4", when)
    assert first == tmp_path / "my_scene_1_2026-11-23_09-05-07.mp4"
    first.touch()
    assert timestamped_path(tmp_path, "my scene/1", ".mp4", when).name == \
        "my_scene_1_2026-11-23_09-05-07_2.mp4"


def test_prepare_folder_creates_it_or_says_why_not(tmp_path):
    assert prepare_folder(tmp_path / "a" / "b").is_dir()
    blocker = tmp_path / "file"
    blocker.write_text("")
    with pytest.raises(RecordingError, match=f"{blocker / 'x'}: cannot create"):
        prepare_folder(blocker / "x")


def test_png_screenshot_round_trips_exactly(tmp_path):
    image = np.random.default_rng(2).integers(0, 255, (30, 41, 3), dtype=np.uint8)
    save_png(tmp_path / "s.png", image)
    (frame,) = decode(tmp_path / "s.png")
    np.testing.assert_array_equal(frame.to_ndarray(format="rgb24"), image)
    with pytest.raises(RecordingError, match="cannot write the screenshot"):
        save_png(tmp_path / "missing" / "s.png", image)


# ---- ScreenRecording: a framebuffer, headless ----------------------------------------------

def test_screen_recording_reads_the_framebuffer_by_sim_time(tmp_path):
    """Display frames at 20 Hz of sim time, 30 fps video: each frame's colour lands in the
    video frames it stands for (repeats where the display is slower than the video)."""
    ctx = moderngl.create_standalone_context(backend="egl", require=330)
    fbo = ctx.framebuffer(ctx.renderbuffer(SIZE))
    recording = ScreenRecording(tmp_path / "screen.mp4", SIZE, 30, include_panel=False)
    shown = []
    for k in range(11):  # 0 … 0.5 s
        level = 20 * k + 20
        fbo.clear(level / 255, level / 255, level / 255, 1.0)
        recording.capture(fbo, k / 20, 1.0)
        shown.append(level)
    result = recording.stop()
    ctx.release()
    assert result.frames == recording.frames == 16  # 0 … 0.5 s at 30 fps
    assert (recording.first_time, recording.last_time) == (0.0, 0.5)
    greys = [f.to_ndarray(format="rgb24").mean() for f in decode(result.path)]
    # video frame j shows the first display frame at or after j/30 s
    expected = [shown[math.ceil(j * 20 / 30 - 1e-9)] for j in range(16)]
    np.testing.assert_allclose(greys, expected, atol=4)


# ---- the app under Xvfb --------------------------------------------------------------------

@pytest.fixture(scope="module")
def app(xvfb, tmp_path_factory):
    folder = tmp_path_factory.mktemp("recording_app")
    videos = folder / "Videos"
    videos.mkdir()
    running = RunningApp(xvfb, folder, XDG_VIDEOS_DIR=str(videos))
    running.videos = videos
    try:
        running.wait_until_ready()
        yield running
    finally:
        running.stop()


def click(app, name: str) -> None:
    """Click the panel widget ``name`` once its place is the same in two status files a
    second apart (the panel shifts by a line when the physics first falls behind)."""
    rect = None
    for _ in range(10):
        previous, rect = rect, app.status()["widgets"].get(name)
        if rect is not None and rect == previous:
            break
        time.sleep(1.2)
    x0, y0, x1, y1 = rect
    app.xdotool("mousemove", "--window", app.window, int((x0 + x1) / 2), int((y0 + y1) / 2))
    time.sleep(0.3)
    app.xdotool("click", 1)
    time.sleep(0.3)
    app.xdotool("mousemove", "--window", app.window, 300, 300)  # back over the 3D view


def test_record_button_then_f9_gives_a_video_of_the_sim_time(app):
    """Record (button), ≥ 2 s of sim time, F9 → an MP4 in the Videos folder whose frame count
    is the sim time it covers × 30 fps (+ the first frame), all decodable, of the window's
    size, with motion; the red REC badge at the top left is not in it."""
    app.wait_for("the record button", lambda s: "record" in s["widgets"])
    click(app, "record")
    started = app.wait_for("recording", lambda s: s["recording"] is not None)
    app.wait_for("2 s of sim time recorded", lambda s: s["time"] > started["time"] + 2.5)
    app.xdotool("key", "F9")
    status = app.wait_for("the video saved", lambda s: s["recording"] is None
                          and s["last_video"] is not None)
    video = status["last_video"]
    assert video["error"] is None and video["fps"] == 30
    path = Path(video["path"])
    assert path.parent == app.videos and path.name.startswith("default_")
    covered = video["last_time"] - video["first_time"]
    assert covered >= 2.0
    assert video["frames"] == math.floor(covered * 30 + 1e-6) + 1
    frames = decode(path)
    assert len(frames) == video["frames"]
    assert (frames[0].width, frames[0].height) == (1280, 720)
    images = [frames[k].to_ndarray(format="rgb24").astype(int) for k in (0, len(frames) - 1)]
    assert np.abs(images[0] - images[1]).max(axis=2).astype(bool).sum() > 500  # motion
    for image in images:
        badge = image[14:44, 14:120]
        redness = badge[..., 0] - badge[..., 1:].max(axis=2)
        assert (redness > 100).sum() < 20, "the REC indicator is in the video"
        # no panel: the right side shows the lit scene, not the dark panel
        assert image[300:700, 1000:1200].mean() > 90
    ARTIFACTS.mkdir(exist_ok=True)
    save_png(ARTIFACTS / "app_recording_frame.png", images[1].astype(np.uint8))
    assert "video saved: " + str(path) in app.log()


def test_f12_saves_a_png_screenshot_beside_the_recordings(app):
    before = app.status()["last_file"]
    app.xdotool("key", "F12")
    status = app.wait_for("a screenshot", lambda s: s["last_file"] != before
                          and s["last_file"].endswith(".png"))
    path = Path(status["last_file"])
    assert path.parent == app.videos
    (frame,) = decode(path)
    assert (frame.width, frame.height) == (1280, 720)
    image = frame.to_ndarray(format="rgb24").astype(float)
    assert image.std() > 5  # not blank: sky gradient, floor grid, bodies
    assert image[300:700, 1000:1200].mean() > 90  # the 3D view only (no "include panel")


def test_closing_the_window_mid_recording_leaves_a_playable_video(app):
    """With "include panel": F9, a second of sim time, then the window manager's close →
    the app ends with status 0 and the video (panel included) decodes."""
    click(app, "include_panel")
    # the checkbox takes the click at the panel's next frame, F9 at once: on a loaded machine
    # F9 could come first and start the recording without the panel
    app.wait_for("include panel ticked", lambda s: s["include_panel"])
    app.xdotool("key", "F9")
    started = app.wait_for("recording", lambda s: s["recording"] is not None)
    app.wait_for("some frames", lambda s: s["time"] > started["time"] + 1.0)

    from Xlib import X, display
    from Xlib.protocol import event

    d = display.Display(app.display)
    window = d.create_resource_object("window", app.window)
    close = event.ClientMessage(window=window, client_type=d.intern_atom("WM_PROTOCOLS"),
                                data=(32, [d.intern_atom("WM_DELETE_WINDOW"), X.CurrentTime,
                                           0, 0, 0]))
    window.send_event(close, event_mask=0)
    d.sync()
    d.close()
    assert app.process.wait(timeout=30) == 0
    line = app.wait_for_log("video saved (the window was closed): ")
    path = Path(line.split("closed): ")[1].split(" (")[0])
    frames = int(line.split(" (")[-1].split(" frames")[0])
    decoded = decode(path)
    assert len(decoded) == frames >= 25
    image = decoded[-1].to_ndarray(format="rgb24").astype(int)
    assert image[300:700, 1000:1200].mean() < 90  # the dark panel is in this one
    assert "Traceback" not in app.log() and "ERROR" not in app.log()
    assert os.path.getsize(path) > 1000
