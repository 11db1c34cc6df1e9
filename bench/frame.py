"""Frame time of the renderer with every gizmo on, while the physics thread runs.

    python bench/frame.py [--bodies 50 500] [--frames 200] [--samples 0] [--size 1280x720]
                          [--gizmos all|default|none] [--gil-finish]

For each body count: a World with that many builtin bodies (boxes, spheres, cylinders and
T-handles of 0.1–0.2 m, spinning) in the 4 × 3 × 4 m container runs on its
``physics.simulation.Simulation`` thread at 240 Hz; the main thread builds each frame's
``FrameView`` as the window does (``App._frame_view``: the two newest snapshots interpolated
``RENDER_DELAY`` behind, one body selected, its polhode trail attached) and renders it with
``app.render.renderer`` into an offscreen framebuffer (1280×720 unless ``--size``).

Rendering is headless (moderngl's EGL context, Mesa llvmpipe here): the window is not needed to
measure the renderer, and presenting a frame through pyglet adds only the buffer swap. MSAA is
off by default (``--samples 4`` measures it: on llvmpipe every sample is shaded and stored).

Each frame ends with glFinish, so its time includes the rendering itself, not just queuing it
(llvmpipe rasterises on worker threads until then). By default glFinish is called through
ctypes, which releases the GIL while it waits — as the window's buffer swap (pyglet, ctypes)
does — so the physics thread runs meanwhile, as in the app. ``--gil-finish`` uses moderngl's
``ctx.finish()`` instead, which keeps the GIL and starves the physics thread.
Frames are paced as the window paces them (``app.frame_pace.PhysicsFirst``): 60 a second, 30
while the physics thread drops sim time, so that the physics gets the CPU of the frames not
drawn; ``--unpaced`` draws them back to back (the renderer's cost with nothing held back).
The first WARM_UP_SECONDS (shader JIT, uploads, and the pace finding its rate) are not measured.
The camera is still, so the renderer starts each frame from its cached floor and sky as the
window does (``--moving-camera`` turns that off). ``--gizmos default`` measures the app's
start-up set (L and the principal axes; the selected body's alone past 100 bodies), ``none`` the
scene alone. Prints p50/p99 frame times, the physics rate reached and the CPU per frame of
the drawing thread, llvmpipe's rasteriser threads and the physics thread (what bounds the frame
rate when they share two cores); never fails on a timing.
Targets on the 2-core development machine (``--bodies 200 500 --gizmos default``): physics at
100 % of real time with p50 ≤ 33 ms at 500 bodies, p50 ≤ 16.7 ms at 200.
"""

from __future__ import annotations

import argparse
import os
import time

import moderngl
import numpy as np
from record import ThreadCPU, bench_scene  # bench/record.py: the same 50/500-body scene

from app.frame_pace import PhysicsFirst
from app.render.camera import OrbitCamera
from app.render.interpolate import RENDER_DELAY, interpolate
from app.render.polhode import PolhodeTrail
from app.render.renderer import Renderer, palette_color
from app.render.view import GizmoOptions, frame_view
from app.video.recorder import finish_drawing
from physics.runtime import configure
from physics.scene import build_world
from physics.simulation import Simulation
from physics.world import World

ALL_GIZMOS = GizmoOptions(angular_momentum=True, angular_velocity=True, principal_axes=True,
                          inertia_ellipsoid=True, polhode=True, centre_of_mass=True,
                          contacts=True, velocity=True, selected_only=False)  # every body's
WARM_UP_SECONDS = 3.0  # s of frames before the measured ones
GIZMO_SETS = {"all": ALL_GIZMOS, "default": GizmoOptions(),
              "none": GizmoOptions(angular_momentum=False, principal_axes=False)}


def build(count: int, seed: int = 1) -> tuple[World, dict]:
    """A world with ``count`` spinning bodies on a jittered grid in the container (the scene
    bench/record.py records), and its body records (body id → BodyRecord)."""
    world, records = build_world(bench_scene(count, seed))
    return world, {record.body_id: record for record in records}


def run(count: int, frames: int, size: tuple[int, int], samples: int, gizmos: str,
        gil_finish: bool, moving: bool, paced: bool = True) -> None:
    options = GIZMO_SETS[gizmos]
    ctx = moderngl.create_standalone_context(backend="egl", require=330)
    finish = ctx.finish if gil_finish else finish_drawing  # the latter without the GIL
    fbo = ctx.framebuffer(ctx.renderbuffer(size, samples=samples),
                          ctx.depth_renderbuffer(size, samples=samples))
    renderer = Renderer(ctx)
    renderer.cache_background = not moving  # as the window does while its camera is still
    camera = OrbitCamera()
    camera.frame((0.0, 1.2, 0.0), 3.2, size[0] / size[1])
    world, records = build(count)
    selected = int(world.ids[0])
    trail = PolhodeTrail()
    with Simulation(world) as sim:
        def draw() -> float:
            """One frame as the window builds it; its wall time, s."""
            t0 = time.perf_counter()
            prev, new = sim.latest_two()
            view = frame_view(interpolate(prev, new, t0 - RENDER_DELAY), new, records,
                              palette_color, selected)
            view = trail.attach(view, new, options.polhode)
            renderer.render(view, camera, size, options, fbo=fbo)
            finish()
            return time.perf_counter() - t0

        pace = PhysicsFirst()

        def frame() -> float:
            """A frame drawn, then the wait the window's pace leaves after it; its draw time."""
            start = time.perf_counter()
            took = draw()
            if paced:
                interval = pace.update(sim.latest().time_dropped, start)
                time.sleep(max(0.0, start + interval - time.perf_counter()))
            return took

        warm_up_end = time.perf_counter() + WARM_UP_SECONDS
        while time.perf_counter() < warm_up_end:
            frame()
        start_time, start_wall = sim.latest().time, time.perf_counter()
        with ThreadCPU() as by_thread:
            times = [frame() for _ in range(frames)]
        wall = time.perf_counter() - start_wall
        sim_rate = (sim.latest().time - start_time) / wall
    p50, p99 = np.percentile(1000.0 * np.array(times), [50, 99])
    print(f"{count:4d} bodies, {gizmos:7s} gizmos, {size[0]}x{size[1]}, msaa {samples}"
          f"{', ctx.finish' if gil_finish else ''}{', moving camera' if moving else ''}: "
          f"frame p50 {p50:6.1f} ms  p99 {p99:6.1f} ms ({1000 / p50:5.1f} fps); physics at "
          f"{100 * sim_rate:.0f} % of real time; drawn at {frames / wall:.1f} frames/s"
          f"{' (paced as the window: 30 while the physics lags)' if paced else ', unpaced'}"
          f"  [{ctx.info['GL_RENDERER']}]")
    # what bounds the frame on a machine whose cores are shared: the CPU each thread used per
    # frame against the cores' CPU in a 60 Hz frame
    ms = {name: 1000.0 * s / frames for name, s in by_thread.seconds.most_common()}
    render = ms.get("MainThread", 0.0) + ms.get("llvmpipe", 0.0)
    print(f"      CPU per frame: drawing {ms.get('MainThread', 0.0):.1f} + llvmpipe "
          f"{ms.get('llvmpipe', 0.0):.1f} = {render:.1f} ms, physics "
          f"{ms.get('tumble-physics', 0.0):.1f} ms; "
          f"budget at 60 fps {1000.0 * os.cpu_count() / 60:.1f} ms ({os.cpu_count()} cores)")
    renderer.release()
    ctx.release()


def main() -> None:
    configure()  # the engine's process settings (physics/runtime.py), as the app sets them
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bodies", type=int, nargs="+", default=[50, 500])
    parser.add_argument("--frames", type=int, default=200)
    parser.add_argument("--samples", type=int, default=0)
    parser.add_argument("--size", default="1280x720")
    parser.add_argument("--gizmos", choices=sorted(GIZMO_SETS), default="all")
    parser.add_argument("--gil-finish", action="store_true",
                        help="end frames with moderngl's ctx.finish(), which keeps the GIL")
    parser.add_argument("--unpaced", action="store_true",
                        help="draw frames back to back, not at the window's pace")
    parser.add_argument("--moving-camera", action="store_true",
                        help="no background cache (the window caches it while the camera is "
                             "still, as here by default)")
    args = parser.parse_args()
    size = tuple(int(v) for v in args.size.lower().split("x"))
    for count in args.bodies:
        run(count, args.frames, size, args.samples, args.gizmos, args.gil_finish,
            args.moving_camera, not args.unpaced)


if __name__ == "__main__":
    main()
