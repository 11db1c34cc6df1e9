"""``tumble record SCENE.toml --seconds T [--fps 60] [--size WxH] [--gizmos …] [--camera …]
--out FILE.mp4``: a scene rendered offscreen to MP4.

No display: moderngl's EGL context (Mesa llvmpipe without a GPU) and the app's own
``Renderer``, so the video looks like the window (shadows, gizmos, walls; no MSAA, as the app
on a software renderer). Frame k shows the world at sim time exactly k/fps: the world steps at
the scene's fixed rate and the two steps around k/fps are blended (``app.render.interpolate.blend``;
with hz a multiple of fps the blend weight is 1, the stepped state itself). Nothing depends on
wall time, so the same scene gives identical frames on every run, on a fast or a slow
machine.

Pipeline (``render_video``), three threads and llvmpipe's rasteriser threads: the world is
stepped a couple of frames ahead on a physics thread (``Prefetched``), this thread draws frame
k and waits for the rasteriser without holding the GIL (so the physics and writer threads run
meanwhile), and the writer thread (``app.video.recorder.VideoWriter``) converts frame k−1 to YUV
and encodes it. Ctrl+C stops at a frame boundary and the file is still finalised.
"""

from __future__ import annotations

import argparse
import itertools
import math
import queue
import sys
import threading
from functools import partial
from typing import Callable, TextIO

import moderngl
import numpy as np
from scipy.spatial import ConvexHull

from app.progress import Progress
from app.render.camera import CameraPose, OrbitCamera, home_sphere
from app.render.interpolate import blend, sim_time_weight
from app.render.renderer import OffscreenTarget, Renderer, palette_color
from app.render.view import GizmoOptions, frame_view
from app.video.recorder import (
    READ_FORMAT,
    RecordingError,
    RecordingResult,
    VideoWriter,
    finish_drawing,
)
from physics.geometry.inertia import MassProperties
from physics.geometry.meshes import Mesh, builtin_shape, shape_from_properties
from physics.replay import Schedule, load_replay
from physics.scene import BodyRecord, Scene, SceneError, build_world
from physics.simulation import Simulation
from physics.world import World

VIEWS_AHEAD = 2           # frames the physics thread may step ahead of the drawing


def make_camera(pose: CameraPose | None, size: tuple[int, int],
                container_size=None, bodies=None) -> OrbitCamera:
    """The app's start view for a scene with this container ((3,) m or None), bodies ((k, 3) m
    start positions, framed when there are no walls) and frame size (``home_sphere``, default
    yaw and pitch), turned and moved by ``pose``."""
    camera = (OrbitCamera() if pose is None
              else OrbitCamera(yaw=math.radians(pose.yaw), pitch=math.radians(pose.pitch)))
    camera.frame(*home_sphere(container_size, bodies), size[0] / size[1])
    if pose is not None and pose.distance is not None:
        camera.distance = pose.distance
    return camera


def frame_count(seconds: float, fps: int) -> int:
    """Frames of a video of ``seconds`` at ``fps``: T × fps, rounded to whole frames."""
    return int(round(seconds * fps))


def sim_time_views(scene: Scene, fps: int, count: int, schedule: Schedule | None = None):
    """Yield the FrameView of frame k = 0 … count−1: the world of ``scene`` at sim time k/fps
    (given a replay's ``schedule``, with its commands applied at their steps).

    The world steps offline (``Simulation.run_steps``) at the scene's rate; frame k's time
    lies between steps ⌈k·hz/fps⌉ − 1 and ⌈k·hz/fps⌉, whose snapshots are blended — or, when
    k·hz/fps is a whole number (hz a multiple of fps), is step k·hz/fps itself, and only that
    snapshot is made (a snapshot costs about as much as a step of a few bodies).
    """
    world, records = build_world(scene)
    return world_views(world, {r.body_id: r for r in records}, scene.hz, fps, count, schedule)


def world_views(world: World, by_id: dict, hz: float, fps: int, count: int,
                schedule: Schedule | None = None):
    """``sim_time_views`` of a world already built (``by_id``: body id → BodyRecord; bodies
    without one are drawn as their hulls): frame k at the world's time + k/fps, the commands
    of ``schedule`` counted in steps from the world as given."""
    by_id = dict(by_id)
    sim = Simulation(world, hz=hz, history=False)  # it never goes back
    run_steps = sim.run_steps if schedule is None else partial(schedule.run_steps, sim)
    prev = new = sim.latest()
    start = new.time
    steps = 0
    for k in range(count):
        t = start + k / fps
        exact = k * hz / fps
        target = math.ceil(exact - 1e-9)  # first step at or after t
        between = target - exact > 1e-9
        if between and target - 1 > steps:
            new = run_steps(target - 1 - steps)
            steps = target - 1
        if target > steps:
            prev, new = new, run_steps(target - steps)
            steps = target
        pose = blend(prev, new, sim_time_weight(prev, new, t) if between else 1.0)
        for body_id in set(new.ids.tolist()) - by_id.keys():  # added by a replay's command
            by_id[body_id] = hull_record(sim.world, body_id)
        yield frame_view(pose, new, by_id, palette_color)


def hull_record(world: World, body_id: int) -> BodyRecord:
    """A record that draws a body known only to the world (a replay's command added it, with
    no mesh file) as what it collides as: its convex hull, or its sphere."""
    m, row = world.model, world.index_of(body_id)
    hull = m.hull_points[m.hull_start[row]:m.hull_start[row + 1]]
    return collision_record(body_id, float(m.radius[row]), hull, float(m.mass[row]),
                            m.inertia[row])


def added_records(first_id: int, commands) -> dict[int, BodyRecord]:
    """Records for the bodies a replay's ``add_body`` and ``add_group`` commands (LoggedCommand)
    will add to a world whose next body id is ``first_id``, drawn as they collide (their
    hulls or spheres): the app shows them as ``tumble record`` does."""
    records, next_id = {}, first_id
    for command in commands:
        if command.name == "add_body":
            bodies = command.args[:1]
        elif command.name == "add_group":
            bodies = command.args[0]
        else:
            continue
        for body in bodies:
            records[next_id] = collision_record(next_id, body.radius, body.hull, body.mass,
                                                body.principal_moments)
            next_id += 1
    return records


def collision_record(body_id: int, radius: float, hull, mass: float, moments) -> BodyRecord:
    """A record drawing a body as its sphere (``radius`` > 0, m) or its convex ``hull`` (k, 3)
    body frame, m; ``mass`` kg and principal ``moments`` (3,) kg·m² for the inspector."""
    if radius > 0.0:
        shape = builtin_shape("sphere", (radius,))
    else:
        hull = np.asarray(hull, dtype=float)
        found = ConvexHull(hull)
        faces = found.simplices.copy()
        # wind each face counter-clockwise seen from outside: its normal away from the centre
        normals = np.cross(hull[faces[:, 1]] - hull[faces[:, 0]],
                           hull[faces[:, 2]] - hull[faces[:, 0]])
        inward = np.einsum("ij,ij->i", normals, hull[faces[:, 0]] - hull.mean(axis=0)) < 0
        faces[inward] = faces[inward][:, ::-1]
        moments = np.asarray(moments, dtype=float)
        props = MassProperties(mode="solid", watertight=True, volume=found.volume,
                               area=found.area, mass=mass,
                               center_of_mass=np.zeros(3), inertia=np.diag(moments),
                               principal_moments=moments, principal_axes=np.eye(3), warnings=())
        shape = shape_from_properties(Mesh("hull", None, hull, faces, True), props, [])
    return BodyRecord(body_id, shape.name, None, None, shape)


class Prefetched:
    """The items of ``iterable``, made up to ``depth`` ahead on a daemon thread and handed out
    in order (an iterator); an exception raised while making one is raised here, in its place.

    For the world's steps: its kernels release the GIL, and the rest runs while the drawing
    thread waits for the rasteriser. ``close()`` stops the thread (it finishes the item it is
    making); the iterable is then left part-way.
    """

    def __init__(self, iterable, depth: int = VIEWS_AHEAD, name: str = "tumble-physics"):
        self._items: queue.Queue = queue.Queue(depth)
        self._stop = threading.Event()
        self._end: BaseException | None = None  # StopIteration or the producer's error
        self._thread = threading.Thread(target=self._run, args=(iter(iterable),), name=name,
                                        daemon=True)
        self._thread.start()

    def __iter__(self) -> Prefetched:
        return self

    def __next__(self):
        if self._end is None:
            item, self._end = self._items.get()
            if self._end is None:
                return item
        raise self._end

    def close(self) -> None:
        self._stop.set()
        self._thread.join()

    def _run(self, items) -> None:
        try:
            for item in items:
                if not self._put((item, None)):
                    return
        except Exception as e:  # not swallowed: ``__next__`` raises it in the consumer
            self._put((None, e))
            return
        self._put((None, StopIteration()))

    def _put(self, entry) -> bool:
        """Queue ``entry`` once there is room; False if closed first."""
        while not self._stop.is_set():
            try:
                self._items.put(entry, timeout=0.1)
                return True
            except queue.Full:
                pass
        return False


def offscreen_context() -> moderngl.Context:
    """A headless OpenGL 3.3 context (EGL); RecordingError with what to install if none."""
    try:
        return moderngl.create_standalone_context(backend="egl", require=330)
    except Exception as e:  # moderngl raises plain Exception for a missing EGL/driver
        raise RecordingError(f"no offscreen OpenGL 3.3 context (EGL): {e}; install Mesa's "
                             "EGL driver (apt-get install libegl1 libegl-mesa0 "
                             "libgl1-mesa-dri)") from None


def render_video(views, count: int, writer: VideoWriter, camera: OrbitCamera,
                 gizmos: GizmoOptions, ctx: moderngl.Context,
                 on_frame: Callable[[int], None] = lambda done: None) -> RecordingResult:
    """Draw ``count`` FrameViews from the iterable ``views`` into ``writer`` and close it (also
    on Ctrl+C or an error, which then propagates after the file is finalised). ``on_frame(done)``
    is called as frames reach the writer.

    ``views`` is consumed on a physics thread (``Prefetched``). The renderer keeps the
    unshadowed floor and sky of the fixed camera with their depth (``Renderer.cache_background``:
    the same pixels for much less work on llvmpipe). Each frame is waited for with the GIL released
    (``finish_drawing``; moderngl's read would wait holding it) and then copied in the writer's
    layout (``READ_FORMAT`` is the copy that costs least on llvmpipe), bottom row first: the
    writer's conversion reads the rows in reverse at no cost.
    """
    renderer = Renderer(ctx)
    renderer.cache_background = True  # the camera never moves here
    target = OffscreenTarget(ctx, writer.size)
    ahead = Prefetched(views)
    try:
        for done, view in enumerate(itertools.islice(ahead, count), start=1):
            if writer.error:
                break
            renderer.render(view, camera, writer.size, gizmos, fbo=target.fbo)
            finish_drawing()
            frame = writer.buffer()
            target.fbo.read_into(frame, components=writer.channels)
            writer.submit(frame, bottom_up=True)
            on_frame(done)
    finally:
        ahead.close()
        result = writer.close()
        target.release()
        renderer.release()
    return result


def main(args: argparse.Namespace, stream: TextIO = sys.stderr) -> int:
    """Run ``tumble record`` with parsed arguments (app/__main__.py); raises SceneError for a
    scene it cannot use, RecordingError for an output it cannot write or an encoder failure."""
    count = frame_count(args.seconds, args.fps)
    if count < 1:
        raise RecordingError(f"--seconds {args.seconds:g} at --fps {args.fps} gives no frame; "
                             f"record at least {1 / args.fps:.3g} s")
    replay = load_replay(args.scene)  # a scene, or a replay: a scene and its commands
    scene = replay.scene
    for command, line in zip(replay.commands, replay.lines):
        if command.name == "set_hz":  # frame k's step is k·hz/fps: one rate for the video
            raise SceneError(f"{args.scene}:{line}: [[command]] set_hz: tumble record keeps "
                             f"the scene's rate ({scene.hz:g} Hz); a replay that changes it "
                             "can be run by tumble simulate")
    ctx = offscreen_context()
    writer = VideoWriter(args.out, args.size, args.fps, input_format=READ_FORMAT)
    views = sim_time_views(scene, args.fps, count, Schedule.of(replay))
    camera = make_camera(args.camera, args.size, scene.container_size,
                         [body.position for body in scene.bodies])
    progress = Progress(count, stream, unit="frames", rate_unit="fps")
    try:
        result = render_video(views, count, writer, camera, args.gizmos, ctx, progress.update)
    except KeyboardInterrupt:
        progress.finish()
        result = writer.close()
        stream.write(f"tumble record: interrupted; {result.path} holds the first "
                     f"{result.frames} frames ({result.seconds:.2f} s)\n")
        return 130
    finally:
        ctx.release()
    progress.finish()
    if result.error:
        raise RecordingError(f"{result.error}; {result.path} holds the first {result.frames} "
                             "frames")
    stream.write(f"tumble record: {result.frames} frames ({result.seconds:.2f} s at "
                 f"{result.fps} fps) → {result.path}\n")
    return 0
