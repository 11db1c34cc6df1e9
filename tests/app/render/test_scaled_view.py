"""The 3D view drawn at a fraction of the window's resolution and stretched onto it
(app/render/scaled_view.py), headless (EGL): the same picture as drawn at full size, only
softer; at scale 1 the same pixels; its offscreen image follows the size and scale."""

import numpy as np
import pytest

from app.render.camera import OrbitCamera
from app.render.renderer import OffscreenTarget
from app.render.scaled_view import ScaledView, scaled_size
from app.render.view import FrameView, GizmoOptions
from physics.geometry.meshes import builtin_shape

SIZE = (320, 240)
RED, BLUE = (0.75, 0.04, 0.03), (0.04, 0.1, 0.8)


@pytest.fixture(scope="module")
def gl(gl_context):
    return gl_context


@pytest.fixture
def scaled(gl):
    ctx, _, _ = gl
    view = ScaledView(ctx)
    yield view
    view.release()


def scene() -> tuple[FrameView, OrbitCamera]:
    shapes = (builtin_shape("box", [0.5, 0.4, 0.3]), builtin_shape("sphere", [0.3]))
    n = len(shapes)
    spin = np.array([[0.0, 4.0, 1.0], [2.0, 0.0, 0.0]])
    view = FrameView(ids=np.arange(n), shapes=shapes,
                     pos=np.array([(-0.6, 0.4, 0.0), (0.7, 0.3, 0.2)]),
                     quat=np.tile([1.0, 0, 0, 0], (n, 1)), color=np.array([RED, BLUE]),
                     vel=np.zeros((n, 3)), omega=spin, ang_mom=spin, selected=-1,
                     container_size=np.array([4.0, 3.0, 4.0]))
    return view, OrbitCamera(target=(0.0, 0.5, 0.0), yaw=0.6, pitch=0.45, distance=5.0)


def strongly(image: np.ndarray, channel: int) -> np.ndarray:
    """(h, w) bool: pixels whose ``channel`` clearly dominates (a body's colour, lit)."""
    others = np.delete(image, channel, axis=2).max(axis=2)
    return image[..., channel] > 2 * others + 20


def test_scaled_size_rounds_and_keeps_a_pixel():
    assert scaled_size((1280, 720), 0.5) == (640, 360)
    assert scaled_size((1281, 721), 0.75) == (961, 541)
    assert scaled_size((3, 1), 0.1) == (1, 1)


@pytest.mark.parametrize("cached", [False, True])
def test_half_scale_shows_the_full_size_picture_softer(gl, scaled, cached):
    ctx, renderer, target = gl
    view, camera = scene()
    options = GizmoOptions(angular_momentum=True, principal_axes=True)
    renderer.cache_background = cached
    try:
        renderer.render(view, camera, SIZE, options, fbo=target.fbo)
        full = target.read().astype(int)
        scaled.render(renderer, view, camera, SIZE, 0.5, options, screen=target.fbo)
        half = target.read().astype(int)
    finally:
        renderer.cache_background = False
    assert scaled.size == (160, 120)
    assert ctx.fbo == target.fbo and tuple(ctx.viewport) == (0, 0, *SIZE)
    # the same picture: averaged over 8×8 blocks the two agree closely (edges, gizmo lines and
    # the floor's finest grid lines differ), and the bodies' colours are where they were
    blocks = [image.reshape(SIZE[1] // 8, 8, SIZE[0] // 8, 8, 3).mean(axis=(1, 3))
              for image in (full, half)]
    assert np.abs(blocks[0] - blocks[1]).mean() < 4.0
    assert np.abs(blocks[0] - blocks[1]).max() < 80.0
    for rgb in (RED, BLUE):
        where = [np.argwhere(strongly(image, int(np.argmax(rgb)))) for image in (full, half)]
        assert len(where[1]) > 0.5 * len(where[0]) > 100  # its blurred edge pixels are lost
        assert np.abs(where[0].mean(axis=0) - where[1].mean(axis=0)).max() < 2.0
    assert np.abs(full - half).max(axis=2).astype(bool).sum() > 100  # it is softer, not equal


def test_full_scale_gives_the_same_pixels_and_the_image_follows_the_size(gl, scaled):
    ctx, renderer, target = gl
    view, camera = scene()
    renderer.render(view, camera, SIZE, fbo=target.fbo)
    direct = target.read().astype(int)
    scaled.render(renderer, view, camera, SIZE, 1.0, screen=target.fbo)
    assert scaled.size == SIZE
    assert np.abs(target.read().astype(int) - direct).max() == 0
    larger = OffscreenTarget(ctx, (400, 300))
    try:
        scaled.render(renderer, view, camera, (400, 300), 0.5, screen=larger.fbo)
        assert scaled.size == (200, 150)
    finally:
        larger.release()
    scaled.release()
    assert scaled.size is None
