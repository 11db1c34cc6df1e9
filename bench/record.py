"""Offline video speed: ``tumble record``'s pipeline against the plain one, same scene, same run.

    python bench/record.py [--seconds 10] [--fps 60] [--size 1280x720] [--bodies 50]
                           [--repeats 3]

The scene: ``--bodies`` builtin bodies (boxes, spheres, cylinders, T-handles of 0.1–0.2 m,
spinning, on a jittered grid) in the 4 × 3 × 4 m container, with the L, ω and principal-axes
gizmos on every body, rendered headless (EGL; Mesa llvmpipe on a machine without a GPU) and
encoded to H.264 (libx264, yuv420p).

Pipelines, each producing T × fps frames at exact sim times (``app.record.sim_time_views``):

- plain: step → render → ``read_into`` → RGB→YUV + encode, all on one thread (recipe 07b's
  loop without its writer thread): every stage waits for the one before;
- tumble: ``app.record.render_video`` as ``tumble record`` runs it — the next frame is stepped
  and rendered while the writer thread converts and encodes the previous one (PyAV releases the
  GIL), frames read back into pooled buffers.

Prints, per pipeline, the median over ``--repeats`` runs of frames/s and of the ratio to real
time (video seconds per wall second: ≥ 1 is faster than real time), and tumble ÷ plain.
Never fails on a timing.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

import av
import numpy as np

from app.record import frame_count, make_camera, offscreen_context, render_video, sim_time_views
from app.recorder import ENCODER_OPTIONS, PIXEL_FORMAT, VideoWriter
from app.renderer import OffscreenTarget, Renderer
from app.view import gizmo_options
from physics.rotation import quat_from_axis_angle
from physics.scene import BodyEntry, Scene

CONTAINER = (4.0, 3.0, 4.0)
GIZMOS = ("L", "omega", "axes")
SHAPES = (("box", (0.2, 0.12, 0.16)), ("sphere", (0.09,)), ("cylinder", (0.06, 0.2)),
          ("t_handle", (0.6,)))


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
    camera, gizmos = make_camera(None, size), gizmo_options(GIZMOS)
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
    writer = VideoWriter(path, size, fps)
    render_video(sim_time_views(scene, fps, count), count, writer, make_camera(None, size),
                 gizmo_options(GIZMOS), ctx)
    ctx.release()


def main() -> None:
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
    with tempfile.TemporaryDirectory() as folder:
        tumble(scene, args.fps, args.fps, size, Path(folder) / "warm.mp4")  # shader JIT, numba
        for _ in range(args.repeats):  # interleaved, so machine load hits both alike
            for name, run in (("plain", plain), ("tumble", tumble)):
                path = Path(folder) / f"{name}.mp4"
                start = time.perf_counter()
                run(scene, count, args.fps, size, path)
                rates[name].append(count / (time.perf_counter() - start))
                with av.open(str(path)) as container:
                    assert container.streams.video[0].frames == count
    medians = {name: statistics.median(r) for name, r in rates.items()}
    for name, rate in medians.items():
        runs = " ".join(f"{r:.1f}" for r in rates[name])
        print(f"  {name:7s} {rate:6.1f} frames/s  = {rate / args.fps:4.2f}× real time  "
              f"(runs: {runs})")
    print(f"  tumble ÷ plain: {medians['tumble'] / medians['plain']:.2f}×")


if __name__ == "__main__":
    main()
