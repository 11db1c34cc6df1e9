"""Frames → MP4 (H.264, yuv420p) with PyAV on a writer thread (docs/architecture.md#threads).

The render thread fills a frame buffer from a small pool (``VideoWriter.buffer``: reading into
it reuses memory, so a recording allocates nothing per frame), hands it over with
``submit`` and goes on drawing; the writer thread converts it to YUV 4:2:0 (``to_yuv420p``,
compiled, without the GIL), encodes it with libx264 and muxes it — PyAV releases the GIL in
x264 (recipe 07c), so both threads run at once. The pool is bounded: when the encoder falls
behind, ``buffer`` waits for a free one instead of queueing frames without limit. Buffers are
RGB or RGBA (``INPUT_FORMATS``): RGBA is what ``glReadPixels`` copies fastest (Mesa: a plain
copy, ~0.1 ms for 1280×720, against ~1.2 ms for RGB, which it packs pixel by pixel while the
caller holds the GIL), and what the conversion reads.

Time: frame k of a video has presentation time k/fps exactly (time base 1/fps). What frame k
shows is the caller's choice; ``FrameClock`` makes it follow *simulation* time: the video
clock advances by Δsim / time_scale, so slow motion (time scale < 1) plays as slow motion,
a machine that falls behind (sim time dropped) records smooth motion instead of jumps, and a
display frame that comes late is repeated rather than skipped over (the video keeps its length).

Every ending finalises the file: ``close`` (stop, window closed, Ctrl+C in a ``finally``)
flushes the encoder and writes the MP4 index; an encoder or disk error stops encoding, and
``close`` still writes what it can and then reports the error. ``RecordingError`` messages name
the file and say what to do; nothing here ends the app.
"""

from __future__ import annotations

import errno
import math
import os
import queue
import threading
from dataclasses import dataclass
from datetime import datetime
from fractions import Fraction
from pathlib import Path

import av
import numpy as np
from numba import njit

from app.render.gl import gl_library

CODEC = "libx264"
PIXEL_FORMAT = "yuv420p"   # what every player decodes; needs even width and height
# ultrafast at crf 20, tuned for animation (on ultrafast that adds 2 B-frames): measured on
# this 2-core machine, one encoder thread, 1280×720 frames of the 50-body benchmark scene —
#   superfast             ~6.1 ms of CPU per frame, 12.4 kB per frame, Y PSNR 46.6 dB
#   ultrafast             ~3.8 ms                   17.3 kB              46.4 dB
#   ultrafast + animation ~3.6 ms                   15.9 kB (7.6 Mbit/s at 60 fps), 46.3 dB
# (PSNR against the YUV input: the encoder's loss; 4:2:0 chroma alone caps RGB PSNR at ~37.6
# dB for all three). The CPU goes to rendering, which is what keeps recording real-time; the
# flat-shaded scenes stay clean at this quality, for files ~30 % bigger than superfast's.
ENCODER_OPTIONS = {"preset": "ultrafast", "tune": "animation", "crf": "20"}
# One encoder thread: x264's frame threads cost more CPU in hand-overs than they save on 2
# cores that llvmpipe already keeps busy — measured at 1280×720: x264 superfast 7.3 → 5.0 ms of
# CPU per frame. One thread also keeps 1280×720 at 60 fps within its budget (~4 ms of the 16.7
# ms per frame).
ENCODER_THREADS = 1
INPUT_FORMATS = {"rgb24": 3, "rgba": 4}  # buffer layouts ``submit`` takes: bytes per pixel
READ_FORMAT = "rgba"       # what frames read back from GL use: llvmpipe's cheapest read
POOL_SIZE = 4              # frame buffers: one being filled, the rest queued or encoding
FPS_CHOICES = (30, 60)     # the app's frame-rate choice


class RecordingError(Exception):
    """A recording that cannot start or that failed; the message names the file."""


@dataclass(frozen=True)
class RecordingResult:
    """What a finished recording left: path, frames written, seconds of video, and the error
    that ended it early (None when it ended normally)."""

    path: Path
    frames: int
    fps: int
    error: str | None = None

    @property
    def seconds(self) -> float:
        return self.frames / self.fps


def even_size(width: int, height: int) -> tuple[int, int]:
    """(width, height) rounded down to even numbers ≥ 2 (yuv420p halves both for chroma)."""
    return max(2, int(width) // 2 * 2), max(2, int(height) // 2 * 2)


def _describe(error: BaseException) -> str:
    """A short reason for an OS or FFmpeg error, with what to do for the usual ones."""
    number = getattr(error, "errno", None)
    reason = getattr(error, "strerror", None) or str(error) or type(error).__name__
    if number == errno.ENOSPC:
        return f"{reason}: the disk is full; free some space and record again"
    if number in (errno.EACCES, errno.EPERM, errno.EROFS):
        return f"{reason}: choose a folder you can write to"
    if number in (errno.ENOENT, errno.ENOTDIR):
        return f"{reason}: the folder does not exist"
    return reason


def check_writable(path: Path) -> None:
    """Create (or truncate) ``path`` now, so a folder that is missing or not writable is
    reported before any frame is rendered (PyAV itself opens the file only at the first
    packet). Raises RecordingError."""
    try:
        with open(path, "wb"):
            pass
    except OSError as e:
        raise RecordingError(f"{path}: cannot write the video ({_describe(e)})") from None


class VideoWriter:
    """An MP4 being written by its own thread.

    path: output file (.mp4); size: (width, height) px, both even; fps: frames per second;
    input_format: the buffers' layout, "rgb24" (height, width, 3) or "rgba" (height, width,
    4; alpha is ignored), with ``channels`` 3 or 4. Use from one thread: ``buffer()`` → fill
    → ``submit()``, …, then ``close()`` (also as a context manager). ``error`` is set (a
    one-line message) once encoding has failed; later submits are dropped and ``close``
    reports it.
    """

    def __init__(self, path, size: tuple[int, int], fps: int, *,
                 options: dict | None = None, pool: int = POOL_SIZE,
                 input_format: str = "rgb24"):
        width, height = size
        if width % 2 or height % 2 or width < 2 or height < 2:
            raise RecordingError(f"video size must be even and ≥ 2, got {width}x{height}")
        self.path, self.size, self.fps = Path(path), (int(width), int(height)), int(fps)
        self.input_format, self.channels = input_format, INPUT_FORMATS[input_format]
        shape = (height, width, self.channels)
        check_writable(self.path)
        try:
            self._container = av.open(str(self.path), mode="w")
            stream = self._container.add_stream(CODEC, rate=self.fps,
                                                options=dict(options or ENCODER_OPTIONS))
            stream.width, stream.height, stream.pix_fmt = width, height, PIXEL_FORMAT
            stream.codec_context.thread_count = ENCODER_THREADS
            stream.codec_context.time_base = stream.time_base = Fraction(1, self.fps)
        except (OSError, av.FFmpegError) as e:
            raise RecordingError(f"{self.path}: cannot start the video ({_describe(e)})") \
                from None
        self._stream = stream
        # the picture x264 is given, converted into in place (x264 copies it in: one will do),
        # and its planes as arrays, rows line_size bytes apart
        self._picture = av.VideoFrame(width, height, PIXEL_FORMAT)
        self._planes = tuple(np.frombuffer(plane, np.uint8).reshape(plane.height,
                                                                    plane.line_size)
                             for plane in self._picture.planes)
        # RGB buffers are widened to RGBA here first, the layout the conversion reads
        self._rgba = np.zeros((height, width, 4), np.uint8) if self.channels == 3 else None
        self._free: queue.Queue = queue.Queue()
        for _ in range(pool):
            self._free.put(np.empty(shape, dtype=np.uint8))
        self._todo: queue.Queue = queue.Queue()
        self.frames = 0            # frames submitted (= presentation index of the next one)
        self.encoded = 0           # frames the writer thread has encoded
        self.error: str | None = None
        self._closed = False
        self._thread = threading.Thread(target=self._run, name="tumble-video", daemon=True)
        self._thread.start()

    # ---- render thread ---------------------------------------------------------------------
    def buffer(self) -> np.ndarray:
        """A free (height, width, 3 or 4) uint8 buffer to fill (waits while the encoder has
        every buffer; its old content is undefined)."""
        while True:
            try:
                return self._free.get(timeout=0.5)
            except queue.Empty:
                if not self._thread.is_alive():  # the writer died: never wait forever
                    return np.empty((self.size[1], self.size[0], self.channels), np.uint8)

    def submit(self, frame: np.ndarray, *, bottom_up: bool = False, repeat: int = 1) -> None:
        """Queue a buffer from ``buffer()`` as the next ``repeat`` frames (``bottom_up``:
        rows in OpenGL order, last row first, as ``glReadPixels`` gives them). The buffer goes
        back to the pool once encoded."""
        if self._closed:
            raise RecordingError(f"{self.path}: the video is already closed")
        if repeat < 1:
            self._free.put(frame)
            return
        self._todo.put((frame, bottom_up, repeat))
        self.frames += repeat

    def close(self) -> RecordingResult:
        """Encode what is queued, flush the encoder and write the file's index; safe to
        repeat, and from two threads at once: each call returns once the file is finished.
        Returns what was written (with the error, if encoding failed)."""
        if not self._closed:
            self._closed = True
            self._todo.put(None)
        self._thread.join()
        return RecordingResult(self.path, self.encoded, self.fps, self.error)

    def __enter__(self) -> VideoWriter:
        return self

    def __exit__(self, *exc_info) -> None:
        self.close()

    # ---- writer thread ---------------------------------------------------------------------
    def _run(self) -> None:
        stream, container = self._stream, self._container
        try:
            while (item := self._todo.get()) is not None:
                frame, bottom_up, repeat = item
                if self.error is None:
                    try:
                        self._encode(frame, bottom_up, repeat)
                    except (OSError, av.FFmpegError, ValueError) as e:
                        self.error = f"{self.path}: encoding stopped ({_describe(e)})"
                self._free.put(frame)
            if self.error is None:
                for packet in stream.encode(None):  # flush the frames x264 still holds
                    container.mux(packet)
        except (OSError, av.FFmpegError, ValueError) as e:
            self.error = self.error or f"{self.path}: encoding stopped ({_describe(e)})"
        finally:
            try:
                container.close()  # writes the moov atom: the file plays up to the last packet
            except (OSError, av.FFmpegError) as e:
                self.error = self.error or f"{self.path}: the video could not be finished " \
                                           f"({_describe(e)})"

    def _encode(self, frame: np.ndarray, bottom_up: bool, repeat: int) -> None:
        if self._rgba is not None:
            self._rgba[..., :3] = frame
            frame = self._rgba
        # convert once, encode ``repeat`` times (a repeated frame costs x264 almost nothing)
        to_yuv420p(frame.view(np.uint32)[..., 0], *self._planes, bottom_up)
        for _ in range(repeat):
            self._picture.pts = self.encoded
            for packet in self._stream.encode(self._picture):
                self._container.mux(packet)
            self.encoded += 1


# BT.601 limited range (Y 16…235, U and V 16…240) in swscale's fixed point (libswscale's
# RGB2YUV_SHIFT and its rounded weights), so that the colours of videos stay what they were
# when swscale converted them: within 1 level of it, 0.03 on average (tested)
_SHIFT = 15
_Y_WEIGHTS = tuple(round(w * 219 / 255 * (1 << _SHIFT)) for w in (0.299, 0.587, 0.114))
_U_WEIGHTS = tuple(round(w * 224 / 255 * (1 << _SHIFT)) for w in (-0.169, -0.331, 0.5))
_V_WEIGHTS = tuple(round(w * 224 / 255 * (1 << _SHIFT)) for w in (0.5, -0.419, -0.081))


@njit("void(uint32[:, ::1], uint8[:, ::1], uint8[:, ::1], uint8[:, ::1], boolean)",
      cache=True, nogil=True)
def to_yuv420p(rgba, y, u, v, bottom_up):
    """RGBA pixels → yuv420p planes, without the GIL (~0.6 ms for 1280×720 on this machine,
    against ~2.4 ms for swscale with the area filter).

    rgba: (H, W) uint32, one pixel each (R in the lowest byte, alpha ignored), image order or,
    ``bottom_up``, OpenGL's (last row first: read in reverse, no flip needed); y: (H, ≥ W),
    u and v: (H/2, ≥ W/2) uint8 planes, filled in their first W or W/2 columns. Each chroma
    sample is the mean of its 2×2 block (swscale's area filter). Written as loops over whole
    pixels (the bytes by shifts) so that LLVM vectorises them.
    """
    height, width = rgba.shape
    ry, gy, by = _Y_WEIGHTS
    ru, gu, bu = _U_WEIGHTS
    rv, gv, bv = _V_WEIGHTS
    y_offset = (16 << _SHIFT) + (1 << (_SHIFT - 1))        # + 0.5: rounds to nearest
    c_offset = (128 << (_SHIFT + 2)) + (1 << (_SHIFT + 1))  # on sums of 4 pixels
    for row in range(height // 2):
        top = rgba[height - 1 - 2 * row] if bottom_up else rgba[2 * row]
        bottom = rgba[height - 2 - 2 * row] if bottom_up else rgba[2 * row + 1]
        for line, out in ((top, y[2 * row]), (bottom, y[2 * row + 1])):
            for x in range(width):
                p = line[x]
                out[x] = (y_offset + ry * (p & 255) + gy * ((p >> 8) & 255)
                          + by * ((p >> 16) & 255)) >> _SHIFT
        u_row, v_row = u[row], v[row]
        for x in range(width // 2):
            a, b, c, d = top[2 * x], top[2 * x + 1], bottom[2 * x], bottom[2 * x + 1]
            red = (a & 255) + (b & 255) + (c & 255) + (d & 255)
            green = ((a >> 8) & 255) + ((b >> 8) & 255) + ((c >> 8) & 255) + ((d >> 8) & 255)
            blue = ((a >> 16) & 255) + ((b >> 16) & 255) + ((c >> 16) & 255) + ((d >> 16) & 255)
            u_row[x] = (c_offset + ru * red + gu * green + bu * blue) >> (_SHIFT + 2)
            v_row[x] = (c_offset + rv * red + gv * green + bv * blue) >> (_SHIFT + 2)


class FrameClock:
    """Which video frames a display frame stands for, by simulation time.

    ``advance(sim_time, time_scale)`` is called once per display frame with the sim time it
    shows; it returns how many video frames that display frame fills: frames are due every
    1/fps s of *video* time, and video time grows by Δsim / time_scale (module docstring).
    A paused simulation, or a sim time that went back (reset), adds no video time.
    """

    def __init__(self, fps: int):
        self.fps = int(fps)
        self.video_time = 0.0   # s of video the display frames so far have covered
        self.frames = 0         # frames handed out
        self._last_sim: float | None = None

    def advance(self, sim_time: float, time_scale: float = 1.0) -> int:
        if self._last_sim is None:  # the first display frame is frame 0
            self._last_sim = sim_time
            self.frames = 1
            return 1
        delta = sim_time - self._last_sim
        self._last_sim = sim_time
        if delta > 0.0 and time_scale > 0.0:
            self.video_time += delta / time_scale
        # frame k (k ≥ 1) is due once video time reaches k/fps; a tiny tolerance keeps float
        # sums of exact step sizes from missing a frame boundary they land on
        due = math.floor(self.video_time * self.fps + 1e-6) + 1
        count = max(0, due - self.frames)
        self.frames += count
        return count


def recordings_folder(home: Path | None = None, cwd: Path | None = None) -> Path:
    """Where the app saves videos and screenshots: the user's Videos folder if it exists
    (``$XDG_VIDEOS_DIR`` first, else ~/Videos), otherwise ./recordings (created when used)."""
    home = Path.home() if home is None else home
    candidates = [os.environ.get("XDG_VIDEOS_DIR"), home / "Videos"]
    for folder in candidates:
        if folder and Path(folder).expanduser().is_dir():
            return Path(folder).expanduser()
    return (Path.cwd() if cwd is None else cwd) / "recordings"


def timestamped_path(folder: Path, scene: str, suffix: str, now: datetime | None = None) -> Path:
    """``folder/<scene>_YYYY-MM-DD_HH-MM-SS<suffix>`` (``_2``, ``_3``… if taken); the scene name
    is kept to letters, digits, ``-`` and ``_``."""
    stamp = (now or datetime.now()).strftime("%Y-%m-%d_%H-%M-%S")
    name = "".join(c if c.isalnum() or c in "-_" else "_" for c in scene) or "tumble"
    path = folder / f"{name}_{stamp}{suffix}"
    number = 2
    while path.exists():
        path = folder / f"{name}_{stamp}_{number}{suffix}"
        number += 1
    return path


def prepare_folder(folder: Path) -> Path:
    """Create ``folder`` if needed; RecordingError if it cannot be created or written."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise RecordingError(f"{folder}: cannot create the recordings folder "
                             f"({_describe(e)})") from None
    if not os.access(folder, os.W_OK | os.X_OK):
        raise RecordingError(f"{folder}: the recordings folder is not writable; "
                             "choose a folder you can write to")
    return folder


def save_png(path: Path, image: np.ndarray) -> None:
    """Write an (h, w, 3) uint8 RGB image (top row first) as PNG, with FFmpeg's PNG encoder
    (PyAV is already here; ~0.1 s for 1280×720). RecordingError if it cannot be written."""
    height, width, _ = image.shape
    codec = av.CodecContext.create("png", "w")
    codec.width, codec.height, codec.pix_fmt = width, height, "rgb24"
    codec.time_base = Fraction(1, 1)
    packets = codec.encode(av.VideoFrame.from_ndarray(np.ascontiguousarray(image), "rgb24"))
    packets += codec.encode(None)
    try:
        with open(path, "wb") as f:
            for packet in packets:
                f.write(bytes(packet))
    except OSError as e:
        raise RecordingError(f"{path}: cannot write the screenshot ({_describe(e)})") from None


def finish_drawing() -> None:
    """glFinish of the current context through ctypes, which releases the GIL while the
    rasteriser (llvmpipe: several ms a frame) finishes; moderngl's ``finish()`` and ``read()``
    keep the GIL while they wait (recipe 05b), stalling the physics and writer threads."""
    gl_library().glFinish()


class ScreenRecording:
    """A recording of the app's window (F9 / Record): each display frame, ``capture`` reads the
    framebuffer into a pooled buffer (``glReadPixels`` waits for the frame, holding the GIL
    only for the copy) and queues it for as many video frames as ``FrameClock`` says it
    stands for; encoding runs on the writer thread.

    size: the video's (width, height), even (the window's framebuffer, rounded down).
    ``started`` (monotonic s) and ``frames`` are for the REC indicator and the status file.
    """

    def __init__(self, path: Path, size: tuple[int, int], fps: int, include_panel: bool):
        self.writer = VideoWriter(path, size, fps, input_format=READ_FORMAT)
        self.clock = FrameClock(fps)
        self.include_panel = include_panel
        self.first_time: float | None = None   # sim time of the first frame, s
        self.last_time: float | None = None    # sim time of the newest frame, s

    @property
    def path(self) -> Path:
        return self.writer.path

    @property
    def frames(self) -> int:
        return self.writer.frames

    @property
    def seconds(self) -> float:
        """s of video so far."""
        return self.writer.frames / self.writer.fps

    def capture(self, fbo, sim_time: float, time_scale: float) -> None:
        """Read ``fbo`` (the frame as drawn so far, bottom-left origin) if this display frame
        shows new video time at ``sim_time`` (s) under ``time_scale``."""
        count = self.clock.advance(sim_time, time_scale)
        if count == 0:
            return
        if self.first_time is None:
            self.first_time = sim_time
        self.last_time = sim_time
        frame = self.writer.buffer()
        width, height = self.writer.size
        finish_drawing()  # the wait without the GIL; the copy below is then short
        fbo.read_into(frame, viewport=(0, 0, width, height), components=self.writer.channels)
        self.writer.submit(frame, bottom_up=True, repeat=count)

    def stop(self) -> RecordingResult:
        """Finish the file (see ``VideoWriter.close``)."""
        return self.writer.close()
