"""The bodies' draw through ctypes (app/render/gl.py ``draw_indexed_triangles``), headless
(EGL): the same pixels as moderngl's ``render``, and other threads run Python while llvmpipe
works inside it, as they cannot inside moderngl's call."""

import threading
import time

import moderngl
import numpy as np
import trimesh

import app.render.renderer as renderer_module
from app.render.camera import OrbitCamera
from app.render.gl import draw_indexed_triangles
from app.render.renderer import _GpuMesh
from app.render.view import FrameView, GizmoOptions
from physics.geometry.meshes import builtin_shape
from tests.wall_clock import WALL_CLOCK

SIZE = (320, 240)


def bodies_view() -> FrameView:
    shapes = (builtin_shape("box", (0.4, 0.3, 0.5)), builtin_shape("sphere", (0.25,)),
              builtin_shape("box", (0.4, 0.3, 0.5)))
    n = len(shapes)
    return FrameView(ids=np.arange(n), shapes=shapes,
                     pos=np.array([[-0.6, 0.3, 0.0], [0.0, 0.6, 0.2], [0.7, 0.3, -0.3]]),
                     quat=np.tile([1.0, 0, 0, 0], (n, 1)),
                     color=np.array([[0.8, 0.1, 0.1], [0.1, 0.7, 0.1], [0.1, 0.1, 0.8]]),
                     vel=np.zeros((n, 3)), omega=np.zeros((n, 3)), ang_mom=np.zeros((n, 3)),
                     selected=1, container_size=None)


def test_the_bodies_drawn_through_ctypes_are_moderngls_pixels(gl_context, monkeypatch):
    _, renderer, target = gl_context
    camera = OrbitCamera()
    camera.frame((0.0, 0.4, 0.0), 1.5, SIZE[0] / SIZE[1])
    options = GizmoOptions(angular_momentum=False, principal_axes=False)

    def image(view):
        renderer.render(view, camera, SIZE, options, fbo=target.fbo)
        return target.read()

    ours = image(bodies_view())
    monkeypatch.setattr(renderer_module, "draw_indexed_triangles",
                        lambda vao, instances: vao.render(moderngl.TRIANGLES,
                                                          instances=instances))
    theirs = image(bodies_view())
    assert np.array_equal(ours, theirs)
    empty = image(FrameView(ids=np.zeros(0, int), shapes=(), pos=np.zeros((0, 3)),
                            quat=np.zeros((0, 4)), color=np.zeros((0, 3)),
                            vel=np.zeros((0, 3)), omega=np.zeros((0, 3)),
                            ang_mom=np.zeros((0, 3)), selected=-1, container_size=None))
    assert (np.abs(ours.astype(int) - empty).sum(axis=2) > 30).mean() > 0.02  # bodies drawn


@WALL_CLOCK
def test_other_threads_run_python_while_the_bodies_are_drawn(gl_context):
    """A Python thread notes the time over and over while this one draws many instances of a
    fine sphere (llvmpipe shades their vertices on the calling thread): through the ctypes draw
    it goes on, through moderngl's, which holds the GIL, it is stopped from start to end."""
    ctx, renderer, target = gl_context
    sphere = trimesh.creation.icosphere(subdivisions=4)
    level = (np.hstack([sphere.vertices, sphere.vertex_normals]).astype(np.float32),
             sphere.faces.astype(np.uint32))
    mesh = _GpuMesh(ctx, level, False, renderer.body_prog, renderer.depth_prog)
    target.fbo.use()

    def moderngl_draw():
        mesh.vaos[0].render(moderngl.TRIANGLES, instances=count)

    def timed(draw) -> float:
        ctx.finish()
        start = time.perf_counter()
        draw()
        ctx.finish()
        return time.perf_counter() - start

    # A faster machine (more llvmpipe threads) draws 400 in well under 0.1 s: double the count
    # until a draw is heavy enough to tell a stop from a thread's ordinary switching. The
    # lighter of two draws decides: the first at a new count also uploads the instances (CI
    # measured 0.2 s for it, then 0.08 s for the same draw)
    count = 200
    drawn = 0.0
    while drawn < 0.2 and count < 200 * 2 ** 8:
        count *= 2
        mesh.reserve(count)
        instances = np.zeros((count, _GpuMesh.INSTANCE_FLOATS), np.float32)
        instances[:, [0, 5, 10, 15]] = 0.01
        mesh.instances.write(instances)
        drawn = min(timed(moderngl_draw), timed(moderngl_draw))
    stamps: list[float] = []
    stop = threading.Event()

    def note_the_time():
        while not stop.is_set():
            stamps.append(time.perf_counter())

    def longest_stop(draw) -> tuple[float, float]:
        """(the draw's wall s, the longest s within it that the other thread noted nothing)"""
        ctx.finish()
        start = time.perf_counter()
        draw()
        end = time.perf_counter()
        noted = [start] + [t for t in list(stamps) if start < t < end] + [end]
        return end - start, max(b - a for a, b in zip(noted, noted[1:]))

    noting = threading.Thread(target=note_the_time, daemon=True)
    noting.start()
    try:
        time.sleep(0.05)
        ours, ours_stop = longest_stop(lambda: draw_indexed_triangles(mesh.vaos[0], count))
        theirs, theirs_stop = longest_stop(moderngl_draw)
    finally:
        stop.set()
        noting.join()
        mesh.release()
    assert min(ours, theirs) > 0.1, "the draw is too light to tell"
    assert theirs_stop > 0.8 * theirs, (theirs_stop, theirs)
    assert ours_stop < 0.3 * ours, (ours_stop, ours)
