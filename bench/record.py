"""Offline video speed: ``tumble record``'s pipeline against the plain one, same scene, same run.

    python bench/record.py [--seconds 10] [--fps 60] [--size 1280x720] [--bodies 50]
                           [--repeats 3]

The scene: ``--bodies`` builtin bodies (boxes, spheres, cylinders, T-handles of 0.1–0.2 m,
spinning, on a jittered grid) in the 4 × 3 × 4 m container, with the L, ω and principal-axes
gizmos on every body, rendered headless (EGL; Mesa llvmpipe on a machine without a GPU) and
encoded to H.264 (libx264, yuv420p).

Pipelines, each producing T × fps frames at exact sim times (``app.video.offline.sim_time_views``):

- plain: step → render → ``read_into`` → RGB→YUV + encode, all on one thread (recipe 07b's
  loop without its writer thread): every stage waits for the one before;
- tumble: ``app.video.offline.render_video`` as ``tumble record`` runs it — the world is stepped a
  couple of frames ahead on a physics thread, the drawing thread waits for the rasteriser
  without the GIL and reads RGBA, and the writer thread converts the frame before to YUV
  (``app.video.recorder.to_yuv420p``, compiled, without the GIL) and encodes it (PyAV releases the
  GIL); the unshadowed floor and the sky of the fixed camera, with their depth, are drawn once
  (``Renderer.cache_background``).

Then the app's side (target: the app keeps ≥ 30 fps while recording with 50 bodies): the
draw loop of the window (no background cache, glFinish through ctypes as the buffer swap)
with and without the F9 recorder capturing every frame.

Prints, per pipeline, the median over ``--repeats`` runs of frames/s and of the ratio to real
time (video seconds per wall second: ≥ 1 is faster than real time), the CPU time per frame of
all the process's threads (llvmpipe's and x264's included: what bounds frames/s on a machine
whose cores are shared) against the budget for real time (cores × 1 s / fps), tumble's CPU per
frame by thread (physics, drawing, llvmpipe's rasteriser, writer: ``ThreadCPU``), and
tumble ÷ plain. Never fails on a timing.
"""

from __future__ import annotations

import argparse
import collections
import os
import statistics
import tempfile
import threading
import time
from pathlib import Path

import av
import numpy as np

from app.render.renderer import OffscreenTarget, Renderer
from app.render.view import gizmo_options
from app.video.offline import (
    frame_count,
    make_camera,
    offscreen_context,
    render_video,
    sim_time_views,
)
from app.video.recorder import (
    ENCODER_OPTIONS,
    PIXEL_FORMAT,
    READ_FORMAT,
    ScreenRecording,
    VideoWriter,
    finish_drawing,
)
from physics.geometry.rotation import quat_from_axis_angle
from physics.runtime import configure
from physics.scene import BodyEntry, Scene

CONTAINER = (4.0, 3.0, 4.0)
GIZMOS = ("L", "omega", "axes")
SHAPES = (("box", (0.2, 0.12, 0.16)), ("sphere", (0.09,)), ("cylinder", (0.06, 0.2)),
          ("t_handle", (0.6,)))


def stat_cpu(path: str) -> float:
    """CPU seconds (user + system) a /proc ``…/stat`` file counts (Linux)."""
    with open(path) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime + stime


class TaskCPU:
    """CPU seconds of process ``pid``'s threads (``"self"``: this process) since this was
    made, summed under ``group(tid, comm)`` of each thread, read from /proc/PID/task (Linux) at
    each ``sample``: a thread first seen later counts from 0, one that ends keeps what it was
    last seen using."""

    def __init__(self, pid: int | str, group):
        self.pid, self.group = pid, group
        self._first: dict[int, tuple[str, float]] = {}  # tid → (group, CPU s at the start)
        self._last: dict[int, float] = {}               # tid → CPU s when last seen
        self.sample(started=False)

    def sample(self, started: bool = True) -> None:
        """Read every thread's CPU; one first seen after the start counts from 0."""
        for tid in map(int, os.listdir(f"/proc/{self.pid}/task")):
            try:
                cpu = stat_cpu(f"/proc/{self.pid}/task/{tid}/stat")
                if tid not in self._first:
                    with open(f"/proc/{self.pid}/task/{tid}/comm") as f:
                        comm = f.read().strip()
                    self._first[tid] = (self.group(tid, comm), 0.0 if started else cpu)
            except OSError:  # the thread ended meanwhile
                continue
            self._last[tid] = cpu

    def spent(self) -> collections.Counter:
        """group → CPU s since this was made, read now."""
        self.sample()
        spent: collections.Counter = collections.Counter()
        for tid, (group, first) in self._first.items():
            spent[group] += self._last[tid] - first
        return spent


def _thread_name(tid: int, comm: str) -> str:
    """A thread of this process by its ``threading`` name, llvmpipe's rasteriser threads
    together as "llvmpipe", other native threads (x264's) by the kernel's name."""
    if comm.startswith("llvmpipe"):
        return "llvmpipe"
    return {t.native_id: t.name for t in threading.enumerate()}.get(tid, comm)


class ThreadCPU:
    """CPU seconds per thread of this process (``TaskCPU`` by ``_thread_name``), read every
    ``interval`` s on a daemon thread while in a ``with`` block; ``seconds``: name → CPU s
    used in the block. A thread's last ≤ ``interval`` s before it ends are missed (the physics
    thread ends a few frames before the drawing: ≤ 2 % of its CPU in a 10 s run at 30 fps)."""

    def __init__(self, interval: float = 0.25):
        self.interval = interval
        self.seconds: collections.Counter = collections.Counter()
        self._tasks: TaskCPU | None = None
        self._stop = threading.Event()
        self._watcher = threading.Thread(target=self._watch, name="bench-thread-cpu",
                                         daemon=True)

    def __enter__(self) -> ThreadCPU:
        self._tasks = TaskCPU("self", _thread_name)
        self._watcher.start()
        return self

    def __exit__(self, *exc_info) -> None:
        self._stop.set()
        self._watcher.join()
        self.seconds.update(self._tasks.spent())

    def _watch(self) -> None:
        while not self._stop.wait(self.interval):
            self._tasks.sample()


def bench_scene(count: int, seed: int = 1) -> Scene:
    """``count`` spinning builtin bodies on a jittered grid inside the container."""
    rng = np.random.default_rng(seed)
    side = int(np.ceil(count ** (1 / 3)))
    cells = np.stack(np.meshgrid(*[np.arange(side)] * 3, indexing="ij"), -1).reshape(-1, 3)
    cells = cells[rng.permutation(len(cells))[:count]]
    size = np.array(CONTAINER) - 0.5
    pos = (cells + 0.5) / side * size - [size[0] / 2, -0.25, size[2] / 2]
    pos += rng.uniform(-0.03, 0.03, pos.shape)
    quat = quat_from_axis_angle(rng.normal(size=(count, 3)), rng.uniform(0, np.pi, count))
    bodies = tuple(
        BodyEntry(shape=SHAPES[i % 4][0], size=SHAPES[i % 4][1], position=tuple(pos[i]),
                  orientation=tuple(quat[i]), velocity=tuple(rng.normal(0, 0.5, 3)),
                  angular_velocity=tuple(rng.normal(0, 4.0, 3)))
        for i in range(count))
    return Scene(container_size=CONTAINER, bodies=bodies)


def plain(scene: Scene, count: int, fps: int, size, path: Path) -> None:
    """Everything on one thread, one stage after the other."""
    ctx = offscreen_context()
    renderer, target = Renderer(ctx), OffscreenTarget(ctx, size)
    camera, gizmos = make_camera(None, size, scene.container_size), gizmo_options(GIZMOS)
    frame = np.empty((size[1], size[0], 3), dtype=np.uint8)
    with av.open(str(path), mode="w") as container:
        stream = container.add_stream("libx264", rate=fps, options=dict(ENCODER_OPTIONS))
        stream.width, stream.height, stream.pix_fmt = *size, PIXEL_FORMAT
        stream.thread_type = "AUTO"
        for view in sim_time_views(scene, fps, count):
            renderer.render(view, camera, size, gizmos, fbo=target.fbo)
            target.fbo.read_into(frame, components=3)
            video_frame = av.VideoFrame.from_ndarray(np.ascontiguousarray(frame[::-1]), "rgb24")
            for packet in stream.encode(video_frame):
                container.mux(packet)
        for packet in stream.encode(None):
            container.mux(packet)
    target.release()
    renderer.release()
    ctx.release()


def tumble(scene: Scene, count: int, fps: int, size, path: Path) -> None:
    """``tumble record``'s own pipeline."""
    ctx = offscreen_context()
    writer = VideoWriter(path, size, fps, input_format=READ_FORMAT)
    camera = make_camera(None, size, scene.container_size)
    render_video(sim_time_views(scene, fps, count), count, writer, camera,
                 gizmo_options(GIZMOS), ctx)
    ctx.release()


def app_loop(scene: Scene, count: int, size, folder: Path, record: bool) -> float:
    """frames/s of the app's draw (background not cached: its camera moves) with, if
    ``record``, the F9 recorder reading every frame (``ScreenRecording.capture`` at 30 fps of
    sim time, display frames 1/60 s of sim time apart, encoding on its writer thread)."""
    ctx = offscreen_context()
    renderer, target = Renderer(ctx), OffscreenTarget(ctx, size)
    camera, gizmos = make_camera(None, size, scene.container_size), gizmo_options(GIZMOS)
    views = list(sim_time_views(scene, 60, count))
    recording = ScreenRecording(folder / "app.mp4", size, 30, False) if record else None
    start = time.perf_counter()
    for k, view in enumerate(views):
        renderer.render(view, camera, size, gizmos, fbo=target.fbo)
        if recording is not None:
            recording.capture(target.fbo, k / 60, 1.0)
        finish_drawing()  # as the window's buffer swap: without the GIL
    rate = count / (time.perf_counter() - start)
    if recording is not None:
        recording.stop()
    target.release()
    renderer.release()
    ctx.release()
    return rate


def main() -> None:
    configure()  # the engine's process settings (physics/runtime.py), as the app sets them
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--fps", type=int, default=60)
    parser.add_argument("--size", default="1280x720")
    parser.add_argument("--bodies", type=int, default=50)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    size = tuple(int(v) for v in args.size.lower().split("x"))
    count = frame_count(args.seconds, args.fps)
    scene = bench_scene(args.bodies)
    print(f"{args.bodies} bodies, gizmos {','.join(GIZMOS)}, {count} frames "
          f"({args.seconds:g} s at {args.fps} fps), {size[0]}x{size[1]}, libx264 "
          f"{ENCODER_OPTIONS}; median of {args.repeats}")
    rates: dict[str, list[float]] = {"plain": [], "tumble": []}
    cpu_ms: dict[str, list[float]] = {"plain": [], "tumble": []}  # all threads of the process
    threads: list[collections.Counter] = []  # tumble's CPU s per thread, per run
    with tempfile.TemporaryDirectory() as folder:
        tumble(scene, args.fps, args.fps, size, Path(folder) / "warm.mp4")  # shader JIT, numba
        for _ in range(args.repeats):  # interleaved, so machine load hits both alike
            for name, run in (("plain", plain), ("tumble", tumble)):
                path = Path(folder) / f"{name}.mp4"
                start, cpu = time.perf_counter(), time.process_time()
                with ThreadCPU() as by_thread:
                    run(scene, count, args.fps, size, path)
                rates[name].append(count / (time.perf_counter() - start))
                cpu_ms[name].append(1000.0 * (time.process_time() - cpu) / count)
                if name == "tumble":
                    threads.append(by_thread.seconds)
                with av.open(str(path)) as container:
                    assert container.streams.video[0].frames == count
    budget = 1000.0 * os.cpu_count() / args.fps
    medians = {name: statistics.median(r) for name, r in rates.items()}
    for name, rate in medians.items():
        runs = " ".join(f"{r:.1f}" for r in rates[name])
        cpu = statistics.median(cpu_ms[name])
        print(f"  {name:7s} {rate:6.1f} frames/s  = {rate / args.fps:4.2f}× real time  "
              f"(runs: {runs});  CPU {cpu:5.1f} ms/frame, all threads")
    print(f"  tumble ÷ plain: {medians['tumble'] / medians['plain']:.2f}× frames/s, "
          f"{statistics.median(cpu_ms['plain']) / statistics.median(cpu_ms['tumble']):.2f}× "
          "less CPU per frame")
    per_thread = {n: 1000.0 * statistics.median(run[n] for run in threads) / count
                  for n in {n for run in threads for n in run}}
    print("  tumble's CPU by thread, ms/frame: " + ", ".join(
        f"{n} {ms:.1f}" for n, ms in sorted(per_thread.items(), key=lambda item: -item[1])
        if ms >= 0.05))
    print(f"  real time needs ≤ {budget:.1f} ms of CPU per frame ({os.cpu_count()} cores × "
          f"1/{args.fps} s), with the cores free of other work")
    count_app = min(count, 300)
    app = {"draw": [], "draw + F9": []}
    with tempfile.TemporaryDirectory() as folder:
        for _ in range(args.repeats):
            for name in app:
                app[name].append(app_loop(scene, count_app, size, Path(folder),
                                          record=name != "draw"))
    print(f"In the app ({count_app} display frames, 30 fps video, encoded on the writer "
          "thread):")
    for name, runs in app.items():
        print(f"  {name:10s} {statistics.median(runs):6.1f} frames/s  "
              f"(runs: {' '.join(f'{r:.1f}' for r in runs)})")
    print(f"  draw + F9 ÷ draw: "
          f"{statistics.median(app['draw + F9']) / statistics.median(app['draw']):.2f}×")
    print(f"  load average during the run: {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores "
          "(other processes take their share of the cores)")


if __name__ == "__main__":
    main()
