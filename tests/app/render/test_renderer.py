"""The renderer, headless (EGL, no X): real pixels of known scenes — bodies where the camera
projects them, in their colours and lit; the shadow under a lifted body; translucent walls; the
selection highlight — plus mesh preparation (flat/smooth normals, levels of detail, big meshes
off the render thread) and the shader/asset lookup of app/resources.py it relies on.

Saves artifacts/renderer.png (a demo scene with gizmos) for a person to look at."""

import math
import sys
import threading
import time

import numpy as np
import pytest
import trimesh
from pyglet.extlibs import png

from app import resources
from app.render import renderer as renderer_module
from app.render.camera import OrbitCamera
from app.render.renderer import (
    COARSE_DEVIATION,
    FIRST_LEVEL_FACES,
    FLOOR_HALF_SIZE,
    LIGHT_DIR,
    MAX_DRAWN_FACES,
    PREPARE_INLINE_FACES,
    SHADOW_SIZE,
    SHADOW_TEXEL_PIXELS,
    STILL_FRAMES,
    STILL_LAYER_MIN,
    STILL_TOLERANCE,
    WALL_COLOR,
    OffscreenTarget,
    Renderer,
    _around,
    _disjoint_cover,
    _prepared,
    _prepared_lock,
    _rows_by_shape,
    _wall_pixels,
    palette_color,
    prepare_mesh,
)
from app.render.view import FrameView, GizmoOptions
from physics.geometry.meshes import Mesh, builtin_shape, shape_from_mesh
from physics.geometry.rotation import quat_from_axis_angle
from tests.paths import REPO

SIZE = (320, 240)
NO_GIZMOS = GizmoOptions(angular_momentum=False, principal_axes=False)
RED, GREEN, BLUE = (0.75, 0.04, 0.03), (0.05, 0.6, 0.05), (0.04, 0.1, 0.8)
ARTIFACTS = REPO / "artifacts"


@pytest.fixture(scope="module")
def gl(gl_context):
    return gl_context


def make_view(shapes, pos, colors, quat=None, selected=-1, container=None) -> FrameView:
    n = len(shapes)
    return FrameView(ids=np.arange(n), shapes=tuple(shapes), pos=np.array(pos, dtype=float),
                     quat=np.tile([1.0, 0, 0, 0], (n, 1)) if quat is None else np.array(quat),
                     color=np.array(colors, dtype=float), vel=np.zeros((n, 3)),
                     omega=np.zeros((n, 3)), ang_mom=np.zeros((n, 3)), selected=selected,
                     container_size=None if container is None else np.array(container, float))


def render(gl, view, camera, gizmos=NO_GIZMOS) -> np.ndarray:
    _, renderer, target = gl
    renderer.render(view, camera, SIZE, gizmos, fbo=target.fbo)
    return target.read().astype(int)


def pixel(image, camera, point) -> np.ndarray:
    """RGB at the projection of a world point (camera pixels are bottom-left, images top-down)."""
    x, y, _ = camera.project(np.asarray(point, dtype=float), *SIZE)
    return image[SIZE[1] - 1 - int(round(y)), int(round(x))]


def dominant(rgb) -> int:
    """Index of the clearly strongest channel (−1 if none is twice the others)."""
    k = int(np.argmax(rgb))
    others = np.delete(rgb, k)
    return k if rgb[k] > 2 * others.max() else -1


def luminance(rgb) -> float:
    return float(np.dot(rgb, (0.2126, 0.7152, 0.0722)))


# ---- bodies ------------------------------------------------------------------------------


def test_bodies_appear_where_projected_in_their_colours_lit(gl):
    box, sphere, handle = (builtin_shape("box", [0.5, 0.4, 0.3]), builtin_shape("sphere", [0.3]),
                           builtin_shape("t_handle", [2.0]))
    pos = [(-1.0, 0.4, 0.0), (0.8, 0.5, 0.3), (0.0, 1.0, -0.6)]
    view = make_view([box, sphere, handle], pos, [RED, GREEN, BLUE],
                     quat=quat_from_axis_angle(np.array([[0, 1, 0], [1, 0, 0], [0, 0, 1]]),
                                               np.array([0.5, 0.3, 0.2])))
    cam = OrbitCamera(target=(0, 0.5, 0), yaw=0.3, pitch=0.35, distance=4.0)
    image = render(gl, view, cam)
    for p, channel in zip(pos, (0, 1, 2)):
        assert dominant(pixel(image, cam, p)) == channel, (p, pixel(image, cam, p))
    # lit by the sun: the sphere's side facing the light is brighter than the far side
    centre = np.array(pos[1])
    toward = LIGHT_DIR - (LIGHT_DIR @ cam.back) * cam.back  # the light's direction on screen
    toward /= np.linalg.norm(toward)
    lit_side = pixel(image, cam, centre + 0.2 * toward)
    dark_side = pixel(image, cam, centre - 0.2 * toward)
    assert np.argmax(lit_side) == dominant(dark_side) == 1  # (the lit side has a highlight)
    assert lit_side[1] > 1.4 * dark_side[1]
    # move the bodies away: those pixels show the floor again
    away = make_view([box, sphere, handle], [(p[0] + 30.0, p[1], p[2]) for p in pos],
                     [RED, GREEN, BLUE])
    empty = render(gl, away, cam)
    for p in pos:
        assert dominant(pixel(empty, cam, p)) == -1


def test_shadow_falls_on_the_floor_under_a_lifted_body(gl):
    _, renderer, _ = gl
    sphere = builtin_shape("sphere", [0.3])
    body = np.array([0.0, 1.2, 0.0])
    view = make_view([sphere], [body], [RED])
    cam = OrbitCamera(target=(0.3, 0.0, -0.2), yaw=2.4, pitch=0.9, distance=4.0)
    shadow = body - LIGHT_DIR * body[1] / LIGHT_DIR[1]  # where the light ray through the COM
    lit_floor = np.array([-1.2, 0.0, 0.6])              # meets the floor; and a floor point
    far_floor = np.array([2.0, 0.0, 1.5])               # away from the shadow and the body
    with_shadow = render(gl, view, cam)
    renderer.shadows = False
    try:
        without = render(gl, view, cam)
    finally:
        renderer.shadows = True
    assert dominant(pixel(with_shadow, cam, shadow)) == -1  # floor, not the body
    assert luminance(pixel(with_shadow, cam, shadow)) < 0.75 * luminance(pixel(without, cam,
                                                                               shadow))
    for point in (lit_floor, far_floor):  # elsewhere the floor is the same, no seam
        assert np.abs(pixel(with_shadow, cam, point) - pixel(without, cam, point)).max() <= 3
    # the shadow follows the body
    moved = render(gl, make_view([sphere], [body + (1.5, 0.0, 1.5)], [RED]), cam)
    assert luminance(pixel(moved, cam, shadow)) > 0.95 * luminance(pixel(without, cam, shadow))


def test_shadow_map_is_reused_while_the_casters_rest(gl, monkeypatch):
    """The shadow pass is skipped when the casters and the light are as last drawn (a pile at
    rest, an orbiting camera): the same pixels as a fresh renderer; a moved body, a new body
    or shadows switched off and on draw it again. (Boxes: one level of detail whatever the
    camera distance; the key includes the levels drawn.)"""
    ctx, renderer, _ = gl
    shapes = [builtin_shape("box", [0.5, 0.3, 0.4]), builtin_shape("box", [0.4, 0.3, 0.2])]
    pos = np.array([(0.0, 1.2, 0.0), (-0.8, 0.6, 0.4)])
    cam = OrbitCamera(target=(0.3, 0.0, -0.2), yaw=2.4, pitch=0.9, distance=4.0)
    drawn = []
    monkeypatch.setattr(renderer, "_shadow_key", None)
    original = Renderer._shadow_pass

    def counting(self, *args):
        did = original(self, *args)
        if self is renderer:
            drawn.append(did)
        return did
    monkeypatch.setattr(Renderer, "_shadow_pass", counting)
    first = render(gl, make_view(shapes, pos, [RED, GREEN]), cam)
    orbit = OrbitCamera(target=(0.3, 0.0, -0.2), yaw=2.0, pitch=0.7, distance=4.5)
    again = render(gl, make_view(shapes, pos, [RED, GREEN]), cam)
    turned = render(gl, make_view(shapes, pos, [RED, GREEN]), orbit)
    assert drawn == [True, False, False]
    assert np.array_equal(first, again)
    fresh = Renderer(ctx)
    try:
        target = OffscreenTarget(ctx, SIZE)
        fresh.render(make_view(shapes, pos, [RED, GREEN]), orbit, SIZE, NO_GIZMOS, fbo=target.fbo)
        assert np.array_equal(turned, target.read().astype(int))
        target.release()
    finally:
        fresh.release()
    moved = pos + [(0.0, 0.0, 0.0), (0.0, 0.0, 0.3)]
    render(gl, make_view(shapes, moved, [RED, GREEN]), cam)
    render(gl, make_view(shapes + [shapes[0]], np.vstack([moved, [(1.0, 0.5, 1.0)]]),
                         [RED, GREEN, BLUE]), cam)
    renderer.shadows = False
    try:
        render(gl, make_view(shapes, moved, [RED, GREEN]), cam)
    finally:
        renderer.shadows = True
    render(gl, make_view(shapes, moved, [RED, GREEN]), cam)
    assert drawn == [True, False, False, True, True, True]


def test_casters_at_rest_are_drawn_once_into_the_still_layer(gl, monkeypatch):
    """Bodies that stay put for STILL_FRAMES frames are drawn into the shadow map's still
    layer once; each frame's pass copies it and draws only the moving body — the same pixels
    as drawing every caster. A body of the layer that moves (woken) is no longer taken from
    it: its old shadow is gone, the pixels again those of drawing every caster."""
    _, renderer, _ = gl
    rng = np.random.default_rng(5)
    count = STILL_LAYER_MIN + 8
    shapes = [builtin_shape("box", [0.2, 0.15, 0.1]), builtin_shape("sphere", [0.1])] \
        * (count // 2) + [builtin_shape("sphere", [0.12])]
    resting = np.column_stack([rng.uniform(-1.0, 1.0, count), np.full(count, 0.1),
                               rng.uniform(-1.0, 1.0, count)])
    colors = [RED, GREEN, BLUE] * count
    cam = OrbitCamera(target=(0.0, 0.3, 0.0), yaw=0.5, pitch=0.6, distance=4.0)

    def view(step, woken=0.0):
        pos = np.vstack([resting, [(0.02 * step - 0.5, 0.8, 0.1)]])  # the last one flies
        pos[0, 0] += woken
        return make_view(shapes, pos, colors[:len(shapes)])

    def every_caster(v):
        """The same frame again, every caster drawn into the map (no layer)."""
        plan = renderer._plan_layer
        renderer._shadow_key = None
        renderer._plan_layer = lambda ids, *args: np.zeros(len(ids), dtype=bool)
        try:
            return render(gl, v, cam)
        finally:
            renderer._plan_layer = plan

    shadow_draws = []
    draw = renderer_module.draw_indexed_triangles

    def counting(vao, instances):
        if vao.program is renderer.depth_prog:
            shadow_draws[-1] += instances
        draw(vao, instances)
    monkeypatch.setattr(renderer_module, "draw_indexed_triangles", counting)
    plans = []
    for step in range(STILL_FRAMES + 4):
        shadow_draws.append(0)
        image = render(gl, view(step), cam)
        plans.append(renderer._layer_plan[0])
    assert plans[:STILL_FRAMES] == ["all"] * STILL_FRAMES  # not still long enough yet
    assert "build" in plans and plans[-2:] == ["keep", "keep"]
    assert len(renderer._layer[1]) == count
    assert shadow_draws[-1] == 1  # the flying body alone (its instance in the frame's buffer)
    assert shadow_draws[0] == count + 1
    shadow_draws.append(0)
    assert np.array_equal(image, every_caster(view(STILL_FRAMES + 3)))
    assert shadow_draws[-1] == count + 1
    shaded = np.abs(image - render_unshadowed(gl, view(STILL_FRAMES + 3), cam, NO_GIZMOS))
    assert (shaded.max(axis=2) > 8).sum() > 500  # there are shadows to compare
    # a body of the layer moves: not taken from the layer, its shadow where it is now
    moved = render(gl, view(STILL_FRAMES + 4, woken=0.3), cam)
    assert renderer._layer_plan[0] != "keep"
    assert np.array_equal(moved, every_caster(view(STILL_FRAMES + 4, woken=0.3)))
    assert (np.abs(moved - image).max(axis=2) > 8).sum() > 20


def test_still_means_within_the_tolerance_of_where_a_body_came_to_rest(gl):
    """``_track_still``: a body that does not move is still after STILL_FRAMES frames, one
    that creeps by less than STILL_TOLERANCE a frame is not (it is compared with where it came
    to rest, not with the last frame), one jittering within the tolerance is."""
    ctx, _, _ = gl
    renderer = Renderer(ctx)
    try:
        ids = np.array([7, 3, 5])
        model = np.tile(np.eye(4, dtype=np.float32).ravel(), (3, 1))
        still = []
        for frame in range(3 * STILL_FRAMES):
            m = model.copy()
            m[1, 12] += 0.4 * STILL_TOLERANCE * frame          # creeps
            m[2, 13] += 0.4 * STILL_TOLERANCE * (frame % 2)    # jitters
            still.append(renderer._track_still(ids, m)[0])
        still = np.array(still)
        assert not still[:STILL_FRAMES - 1].any()
        assert still[STILL_FRAMES:, 0].all() and still[STILL_FRAMES:, 2].all()
        assert not still[:, 1].any()
        # a body gone and back starts again
        renderer._track_still(ids[:2], model[:2])
        assert not renderer._track_still(ids, model)[0][2]
    finally:
        renderer.release()


def test_the_lights_box_stays_while_bodies_move_inside_it(gl):
    """``_light_space`` keeps the last frame's box (so the still layer serves) while the
    bodies stay inside it and the camera stays; a body leaving it, or a moved camera, refits."""
    _, renderer, _ = gl
    shapes = [builtin_shape("box", [0.4, 0.3, 0.2]), builtin_shape("sphere", [0.15])] * 3
    pos = np.array([(-1.0, 0.2, -1.0), (1.0, 0.2, 1.0), (0.0, 0.5, 0.0), (0.5, 0.2, -0.5),
                    (-0.5, 1.0, 0.5), (0.2, 0.2, 0.3)])
    cam = OrbitCamera(target=(0.0, 0.3, 0.0), yaw=0.5, pitch=0.6, distance=5.0)
    first = renderer._light_space(make_view(shapes, pos, [RED] * 6), cam, 720)[0]
    inside = pos + np.array([(0.0, 0.0, 0.0)] * 5 + [(0.05, 0.1, -0.05)])
    assert np.array_equal(first,
                          renderer._light_space(make_view(shapes, inside, [RED] * 6), cam, 720)[0])
    outside = pos + np.array([(0.0, 0.0, 0.0)] * 5 + [(2.0, 0.0, 0.0)])
    assert not np.array_equal(
        first, renderer._light_space(make_view(shapes, outside, [RED] * 6), cam, 720)[0])
    renderer._light_space(make_view(shapes, pos, [RED] * 6), cam, 720)
    turned = OrbitCamera(target=(0.0, 0.3, 0.0), yaw=0.6, pitch=0.6, distance=5.0)
    fresh = Renderer(gl[0])
    try:
        assert np.array_equal(
            renderer._light_space(make_view(shapes, inside, [RED] * 6), turned, 720)[0],
            fresh._light_space(make_view(shapes, inside, [RED] * 6), turned, 720)[0])
    finally:
        fresh.release()


def test_shadows_are_drawn_whole_within_each_bodys_floor_rectangle(gl, monkeypatch):
    """The floor looks up shadows only in a rectangle per body (``_light_space``): the same
    image as with the whole floor shadowed, soft edges included, for bodies resting, lifted
    high (their shadows far to the side) and tilted, with gizmos."""
    _, renderer, _ = gl
    shapes = [builtin_shape("t_handle", [1.2]), builtin_shape("box", [0.4, 0.3, 0.2]),
              builtin_shape("sphere", [0.15]), builtin_shape("cylinder", [0.1, 0.5])]
    pos = [(0.2, 1.6, 0.0), (-0.8, 0.16, 0.5), (0.9, 0.9, -0.7), (-0.3, 2.2, -0.9)]
    quat = quat_from_axis_angle(np.array([[1.0, 0.3, 0.0]] * 4), np.array([0.4, 1.0, 0.2, 1.3]))
    # no container: its bottom edges lie in the floor, where which of the two shows is a
    # matter of rounding
    view = make_view(shapes, pos, [RED, GREEN, BLUE, RED], quat=quat)
    options = GizmoOptions(angular_momentum=True, angular_velocity=True, principal_axes=True)
    cam = OrbitCamera(target=(0.0, 0.6, 0.0), yaw=0.4, pitch=0.5, distance=6.0)
    per_body = render(gl, view, cam, options)
    light_space = renderer._light_space
    whole = (-FLOOR_HALF_SIZE, -FLOOR_HALF_SIZE, FLOOR_HALF_SIZE, FLOOR_HALF_SIZE)
    monkeypatch.setattr(renderer, "_light_space",
                        lambda *a: (*light_space(*a)[:2], np.array([whole]), light_space(*a)[3]))
    everywhere = render(gl, view, cam, options)
    assert len(light_space(view, cam, SIZE[1])[2]) == 4
    differ = np.abs(per_body - everywhere).max(axis=2) > 2
    assert differ.sum() <= 4, differ.sum()  # a stray edge pixel at most
    shaded = np.abs(per_body - render_unshadowed(gl, view, cam, options)).max(axis=2) > 8
    assert shaded.sum() > 200  # there are shadows to compare


def test_overlapping_shadow_rectangles_are_drawn_as_a_disjoint_cover(gl, monkeypatch):
    """A crowd of bodies: their floor rectangles overlap several times over and are drawn as
    fewer rectangles that do not overlap; the same image as with the whole floor shadowed."""
    _, renderer, _ = gl
    rng = np.random.default_rng(3)
    shapes = [builtin_shape("box", [0.2, 0.15, 0.1]), builtin_shape("sphere", [0.1])] * 30
    pos = rng.uniform((-1.0, 0.1, -1.0), (1.0, 1.5, 1.0), (len(shapes), 3))
    quat = quat_from_axis_angle(rng.normal(size=(len(shapes), 3)),
                                rng.uniform(0, np.pi, len(shapes)))
    view = make_view(shapes, pos, [RED, GREEN, BLUE] * 20, quat=quat)
    cam = OrbitCamera(target=(0.0, 0.4, 0.0), yaw=0.5, pitch=0.6, distance=5.0)
    drawn = []

    def recording(rects):
        drawn.append((len(rects), _disjoint_cover(rects)))
        return drawn[-1][1]
    monkeypatch.setattr("app.render.renderer._disjoint_cover", recording)
    covered = render(gl, view, cam)
    (rectangles, cover), = drawn
    assert rectangles == len(shapes) and len(cover) < rectangles
    light_space = renderer._light_space
    whole = (-FLOOR_HALF_SIZE, -FLOOR_HALF_SIZE, FLOOR_HALF_SIZE, FLOOR_HALF_SIZE)
    monkeypatch.setattr(renderer, "_light_space",
                        lambda *a: (*light_space(*a)[:2], np.array([whole]), light_space(*a)[3]))
    everywhere = render(gl, view, cam)
    differ = np.abs(covered - everywhere).max(axis=2) > 2
    assert differ.sum() <= 4, differ.sum()  # a stray edge pixel at most
    shaded = np.abs(covered - render_unshadowed(gl, view, cam, NO_GIZMOS)).max(axis=2) > 8
    assert shaded.sum() > 2000  # the floor's shadows among them


@pytest.mark.parametrize("cached", [False, True])
@pytest.mark.parametrize("distance, pitch", [(0.6, 0.3), (1.0, 0.3), (3.0, 1.0), (6.0, 0.1),
                                             (6.0, 0.3), (9.2, 0.44), (15.0, 0.6)])
def test_the_shadow_on_the_floor_shows_from_every_camera_pose(gl, distance, pitch, cached):
    """A body's shadow on the floor, in its rectangle, shows whatever the camera's distance
    and pitch, with and without the cached background: the whole floor behind it is drawn at
    its exact depth (``floor_depth``), where its interpolated depth lay up to ~150 units in
    front of the rectangle at some of these poses, and the shadow went missing."""
    _, renderer, _ = gl
    body = np.array([0.0, 0.5, 0.0])
    view = make_view([builtin_shape("sphere", [0.15])], [body], [RED])
    shadow = body - LIGHT_DIR * body[1] / LIGHT_DIR[1]
    cam = OrbitCamera(target=shadow + (0.0, 0.2, 0.0), yaw=0.6, pitch=pitch, distance=distance)
    renderer.cache_background = cached
    try:
        image = render(gl, view, cam)
    finally:
        renderer.cache_background = False
    unshadowed = render_unshadowed(gl, view, cam, NO_GIZMOS)
    assert dominant(pixel(image, cam, shadow)) == -1  # the floor, not the body
    assert luminance(pixel(image, cam, shadow)) < 0.75 * luminance(pixel(unshadowed, cam, shadow))


@pytest.mark.parametrize("distance, pitch", [(3.0, 0.2), (6.0, 0.4), (9.2, 0.44)])
def test_floor_shadows_are_whole_in_a_multisampled_target(gl, distance, pitch):
    """With 4 samples a pixel (the window's framebuffer) the shadows on the floor cover as
    many pixels as without: the rectangles' depth is taken at the samples, the whole floor's
    exact depth at the pixel centre, up to a pixel's depth slope apart on a grazing floor (a
    rectangle losing there shows as stripes of lit floor across its shadows)."""
    ctx, renderer, _ = gl
    shapes = [builtin_shape("t_handle", [1.2]), builtin_shape("box", [0.4, 0.3, 0.2]),
              builtin_shape("sphere", [0.15])]
    view = make_view(shapes, [(0.2, 1.0, 0.0), (-0.3, 0.16, 0.2), (0.5, 0.5, -0.4)],
                     [RED, GREEN, BLUE])
    cam = OrbitCamera(target=(0.0, 0.3, 0.0), yaw=0.4, pitch=pitch, distance=distance)
    size = (1280, 720)  # the window's
    dark = []
    for samples in (0, 4):
        target = OffscreenTarget(ctx, size, samples=samples)
        try:
            images = []
            for shadows in (True, False):
                renderer.shadows = shadows
                renderer.render(view, cam, size, NO_GIZMOS, fbo=target.fbo)
                images.append(target.read().astype(int))
        finally:
            renderer.shadows = True
            target.release()
        dark.append((np.abs(images[0] - images[1]).max(axis=2) > 20).sum())
    assert dark[0] > 500  # there are shadows to compare
    assert abs(dark[1] - dark[0]) < 0.05 * dark[0], dark


def test_shadow_map_texels_follow_the_pixels_and_the_shadows_stay_put(gl, monkeypatch):
    """The light's box is drawn with texels SHADOW_TEXEL_PIXELS wide where the nearest body
    is: the whole map for a camera close by, a corner of it from afar (and fewer texels for a
    smaller viewport); from afar the shadows (on the floor and on the bodies) cover the same
    pixels as with the whole map, to within their soft edges."""
    _, renderer, _ = gl
    shapes = [builtin_shape("t_handle", [1.2]), builtin_shape("box", [0.4, 0.3, 0.2]),
              builtin_shape("sphere", [0.15])]
    pos = [(0.2, 1.0, 0.0), (-0.3, 0.16, 0.2), (0.5, 0.5, -0.4)]
    view = make_view(shapes, pos, [RED, GREEN, BLUE])
    near = OrbitCamera(target=(0.0, 0.4, 0.0), yaw=0.4, pitch=0.5, distance=1.0)
    far = OrbitCamera(target=(0.0, 0.4, 0.0), yaw=0.4, pitch=0.5, distance=4.0)
    assert renderer._light_space(view, near, 720)[3] == SHADOW_SIZE
    from_afar = renderer._light_space(view, far, SIZE[1])[3]
    assert from_afar < renderer._light_space(view, far, 720)[3] < SHADOW_SIZE
    fitted = render(gl, view, far)
    light_space = renderer._light_space
    monkeypatch.setattr(renderer, "_light_space",
                        lambda v, cam, height: light_space(v, cam, 100 * height))
    assert renderer._light_space(view, far, SIZE[1])[3] == SHADOW_SIZE
    whole = render(gl, view, far)
    unshadowed = render_unshadowed(gl, view, far, NO_GIZMOS)
    dark = [np.abs(image - unshadowed).max(axis=2) > 20 for image in (fitted, whole)]
    assert dark[1].sum() > 300  # there are shadows to compare
    # differences lie on the edges of shadows (within 2 px of both shadow and light), but for
    # a few pixels where a curved body turns from the light (coarser texels self-shadow there:
    # 14 on the sphere's underside here, a band as wide as the fitted texels, 2 px)
    edge = spread(dark[1], 2) & spread(~dark[1], 2)
    assert (dark[0] != dark[1])[~edge].sum() <= 8 * SHADOW_TEXEL_PIXELS
    # (the soft edge's band, where the two differ, is as wide as the fitted texels: 74 of the
    # 411 shadowed pixels here, 18 %, with 2 px texels)
    assert (dark[0] != dark[1]).sum() < 0.1 * SHADOW_TEXEL_PIXELS * dark[1].sum()


def spread(mask: np.ndarray, pixels: int) -> np.ndarray:
    """The (h, w) bool ``mask`` grown by ``pixels`` in every direction (a square's reach)."""
    padded = np.pad(mask, pixels)
    h, w = mask.shape
    return np.any([padded[i:i + h, j:j + w] for i in range(2 * pixels + 1)
                   for j in range(2 * pixels + 1)], axis=0)


def test_the_highlight_by_products_is_pows(gl, monkeypatch):
    """``highlight_power`` (lighting.glsl) raises to the bodies' and the gizmos' shininess by
    products: the same image, highlights included, as lighting.glsl with GLSL's pow."""
    options = GizmoOptions(angular_momentum=True, angular_velocity=True, principal_axes=True,
                           inertia_ellipsoid=True)
    view = make_view([builtin_shape("sphere", [0.3]), builtin_shape("box", [0.4, 0.3, 0.2]),
                      builtin_shape("t_handle", [1.5])],
                     [(0.0, 0.5, 0.0), (0.6, 0.2, 0.3), (-0.5, 0.6, 0.2)], [RED, GREEN, BLUE])
    view = FrameView(**{**view.__dict__, "omega": np.array([[0.0, 3.0, 1.0]] * 3),
                        "ang_mom": np.array([[1.0, 2.0, 0.0]] * 3)})
    cam = OrbitCamera(target=(0.0, 0.4, 0.0), yaw=0.5, pitch=0.4, distance=2.5)
    by_products = "highlight_power(max(dots.y, 0.0), shininess)"
    assert by_products in resources.shader_source("lighting.glsl")
    ctx, _, target = gl
    images = []
    for power in (by_products, "pow(max(dots.y, 0.0), shininess)"):
        source = resources.shader_source
        monkeypatch.setattr(resources, "shader_source",
                            lambda name: source(name).replace(by_products, power))
        for include in resources.INCLUDES:  # read again, through the patch (and after it,
            ctx.includes.pop(include, None)  # the files' own text for later renderers)
        renderer = Renderer(ctx)
        try:
            renderer.render(view, cam, SIZE, options, fbo=target.fbo)
            images.append(target.read().astype(int))
        finally:
            renderer.release()
            monkeypatch.undo()
            for include in resources.INCLUDES:
                ctx.includes.pop(include, None)
    assert np.abs(images[0] - images[1]).max() <= 1
    assert (images[0] > 200).all(axis=2).sum() > 10  # highlights to compare


def test_disjoint_cover_covers_every_rectangle_once():
    """Random rectangles: every point of each lies in exactly one piece of the cover; dense
    ones give fewer pieces, a few far apart are kept as they are (a cover would be larger)."""
    rng = np.random.default_rng(4)
    centre = rng.uniform(-2.0, 2.0, (300, 2))
    half = rng.uniform(0.05, 0.4, (300, 2))
    rects = np.hstack([centre - half, centre + half])
    cover = _disjoint_cover(rects)
    assert len(cover) < len(rects) / 4
    t = rng.uniform(0.0, 1.0, (300, 40, 2))
    points = rects[:, None, :2] + t * (rects[:, None, 2:] - rects[:, None, :2])   # (300, 40, 2)
    inside = ((points[..., None, :] >= cover[:, :2]) & (points[..., None, :] <= cover[:, 2:])
              ).all(axis=-1)                                                       # (300, 40, j)
    assert (inside.sum(axis=-1) >= 1).all()
    interior = ((points[..., None, :] > cover[:, :2]) & (points[..., None, :] < cover[:, 2:])
                ).all(axis=-1)
    assert (interior.sum(axis=-1) <= 1).all()
    area = np.prod(cover[:, 2:] - cover[:, :2], axis=1).sum()
    assert area <= np.prod(rects[:, 2:] - rects[:, :2], axis=1).sum()
    far = np.array([(0.0, 0.0, 0.3, 0.3), (40.0, 5.0, 40.2, 5.4), (-9.0, 30.0, -8.8, 30.1)])
    assert np.array_equal(_disjoint_cover(far), far)
    assert np.array_equal(_disjoint_cover(far[:1]), far[:1])


def render_unshadowed(gl, view, camera, gizmos) -> np.ndarray:
    _, renderer, _ = gl
    renderer.shadows = False
    try:
        return render(gl, view, camera, gizmos)
    finally:
        renderer.shadows = True


def test_cached_background_gives_the_same_pixels_and_follows_the_camera(gl):
    """``cache_background`` (tumble record's fixed camera): the same frames as drawing the
    floor and sky every time — shadows and gizmos included, arrows through the floor still
    hidden under it — for a first frame, a frame with moved bodies, and a moved camera (the
    cache is redrawn); a camera under the floor draws everything as before."""
    _, renderer, _ = gl
    shapes = [builtin_shape("t_handle", [2.0]), builtin_shape("box", [0.4, 0.3, 0.2])]
    options = GizmoOptions(angular_momentum=True, angular_velocity=True, principal_axes=True)

    def scene(shift):
        view = make_view(shapes, [(0.2 + shift, 0.9, 0.0), (-0.8, 0.16, 0.5 - shift)],
                         [RED, GREEN], container=(4, 3, 4))
        spin = np.array([[0.0, -9.0, 1.0], [2.0, -5.0, 0.0]])  # arrows down through the floor
        return FrameView(**{**view.__dict__, "omega": spin, "ang_mom": spin})

    above = OrbitCamera(target=(0.0, 0.8, 0.0), yaw=0.6, pitch=0.45, distance=6.0)
    turned = OrbitCamera(target=(0.2, 0.6, 0.1), yaw=2.2, pitch=0.3, distance=5.0)
    below = OrbitCamera(target=(0.0, 0.3, 0.0), yaw=0.6, pitch=-0.3, distance=5.0)
    frames = [(scene(0.0), above), (scene(0.4), above), (scene(0.4), turned),
              (scene(0.0), below)]
    plain = [render(gl, view, cam, options) for view, cam in frames]
    renderer.cache_background = True
    try:
        cached = [render(gl, view, cam, options) for view, cam in frames]
    finally:
        renderer.cache_background = False
    for a, b in zip(plain, cached):
        differ = np.abs(a - b).max(axis=2) > 2
        assert differ.sum() <= 4, differ.sum()  # a stray edge pixel at most
    assert np.abs(plain[0] - plain[1]).max(axis=2).astype(bool).sum() > 100  # bodies moved


def test_container_walls_are_translucent(gl):
    box = builtin_shape("box", [0.4, 0.4, 0.4])
    inside = np.array([0.0, 0.2, -1.2])
    cam = OrbitCamera(target=(0, 0.8, 0), yaw=0.2, pitch=0.3, distance=8.0)
    walled = render(gl, make_view([box], [inside], [RED], container=(4, 3, 4)), cam)
    open_floor = render(gl, make_view([box], [inside], [RED]), cam)
    # the body behind the near wall keeps its colour
    assert dominant(pixel(walled, cam, inside)) == 0
    # the floor inside, seen through the near wall, is tinted a little but still the floor
    floor = np.array([0.8, 0.0, 0.9])
    difference = np.abs(pixel(walled, cam, floor) - pixel(open_floor, cam, floor))
    assert 0 < difference.max() < 40


def test_walls_tint_what_lies_behind_them_as_blending_would(gl):
    """Each wall a view ray crosses before the surface it meets tints it, the far wall first,
    then the near one, with the wall's alpha (0.06, more at grazing angles) in display space:
    the floor behind the box through two walls, the floor inside through one, the floor beside
    the box not at all. Expected from the five wall planes, one by one, over the same scene
    without the container."""
    box = builtin_shape("box", [0.2, 0.2, 0.2])
    away = [(30.0, 0.1, 30.0)]  # a body out of sight: the floor and sky alone
    cam = OrbitCamera(target=(0, 0.8, 0), yaw=0.5, pitch=0.35, distance=7.0)
    size = np.array([4.0, 3.0, 4.0])
    walled = render(gl, make_view([box], away, [RED], container=size), cam)
    open_floor = render(gl, make_view([box], away, [RED]), cam)
    wall = 255.0 * np.power(WALL_COLOR, 1.0 / 2.2)
    half = np.array([0.5 * size[0], size[1], 0.5 * size[2]])
    faces = [(axis, sign) for axis in (0, 2) for sign in (-1, 1)] + [(1, 1)]  # no floor face

    def expected(point):
        d = point - cam.eye
        crossings = []
        for axis, sign in faces:
            t = (sign * half[axis] - cam.eye[axis]) / d[axis]
            q = cam.eye + t * d
            inside = (abs(q[0]) <= half[0] + 1e-9 and abs(q[2]) <= half[2] + 1e-9
                      and -1e-9 <= q[1] <= half[1] + 1e-9)
            if 0.0 < t < 1.0 and inside:
                grazing = 1.0 - abs(d[axis]) / np.linalg.norm(d)
                crossings.append((t, 0.06 + 0.14 * grazing ** 3))
        color = pixel(open_floor, cam, point).astype(float)
        for _, alpha in sorted(crossings, reverse=True):  # the far wall first
            color = alpha * wall + (1.0 - alpha) * color
        return color, len(crossings)

    seen = set()
    for point in ([-1.0, 0.0, -3.2], [2.6, 0.0, -3.0], [-0.5, 0.0, 0.4], [1.2, 0.0, 1.0],
                  [3.0, 0.0, -1.0], [-2.5, 0.0, 1.0], [0.0, 0.0, -5.0]):
        point = np.array(point)
        want, walls = expected(point)
        seen.add(walls)
        got = pixel(walled, cam, point)
        assert np.abs(got - want).max() <= 2.5, (point, walls, got, want)
    assert seen == {0, 1, 2}  # the points test each case


def test_wall_pixels_hold_every_ray_through_the_container_and_the_rest_is_around():
    """The rectangle where the background tests its rays against the walls holds every pixel
    whose ray crosses the container (checked by rays through a grid of pixel centres), fits the
    container closely, and the rectangles around it cover the rest of the viewport once."""
    size = (160, 120)
    container = np.array([2.0, 3.0, 2.0, 1.0])  # a 4 × 3 × 4 m box
    assert _wall_pixels(np.zeros(4), np.eye(4), size) is None  # no container
    for cam in (OrbitCamera(target=(0, 0.8, 0), yaw=0.5, pitch=0.35, distance=7.0),
                OrbitCamera(target=(3.0, 1.0, 0), yaw=-1.2, pitch=0.1, distance=6.0),
                OrbitCamera(target=(0, 1.0, 0), yaw=0.3, pitch=0.2, distance=1.0)):  # inside
        vp = cam.view_projection(size[0] / size[1], np.float64)
        rect = _wall_pixels(container, vp, size)
        x, y, w, h = rect
        crossing = np.zeros(size[::-1], dtype=bool)
        for py in range(0, size[1], 3):
            for px in range(0, size[0], 3):
                origin, direction = cam.ray(px + 0.5, py + 0.5, *size)
                with np.errstate(divide="ignore", invalid="ignore"):
                    t0 = (-container[:3] * (1, 0, 1) - origin) / direction
                    t1 = (container[:3] - origin) / direction
                enter = np.nanmax(np.minimum(t0, t1))
                leave = np.nanmin(np.maximum(t0, t1))
                crossing[py, px] = leave > max(enter, 0.0)
        ys, xs = np.nonzero(crossing)
        assert len(xs) > 0
        assert x <= xs.min() and xs.max() < x + w and y <= ys.min() and ys.max() < y + h
        if rect != (0, 0, *size):  # not the camera inside: a close fit
            assert w <= xs.max() - xs.min() + 8 and h <= ys.max() - ys.min() + 8
        cover = np.zeros(size[::-1], dtype=int)
        for bx, by, bw, bh in [rect, *_around(rect, size)]:
            cover[by:by + bh, bx:bx + bw] += 1
        assert (cover == 1).all()


def test_without_container_the_floor_reaches_far(gl):
    cam = OrbitCamera(target=(0, 0.5, 0), yaw=0.0, pitch=0.25, distance=6.0)
    view = make_view([builtin_shape("box")], [(0.0, 0.5, 0.0)], [RED])
    image = render(gl, view, cam)
    for far in ((5.0, 0.0, -12.0), (-5.0, 0.0, -12.0)):
        rgb = pixel(image, cam, far)
        assert rgb.max() - rgb.min() < 25 and rgb.max() > 60  # a grey floor, not the sky


def test_selection_highlight_changes_only_the_selected_body(gl):
    box, sphere = builtin_shape("box", [0.5, 0.5, 0.5]), builtin_shape("sphere", [0.3])
    pos = [(-0.7, 0.3, 0.0), (0.7, 0.3, 0.0)]
    cam = OrbitCamera(target=(0, 0.3, 0), yaw=0.0, pitch=0.4, distance=3.5)
    plain = render(gl, make_view([box, sphere], pos, [BLUE, BLUE]), cam)
    chosen = render(gl, make_view([box, sphere], pos, [BLUE, BLUE], selected=0), cam)
    body_pixels = np.array([dominant(rgb) == 2 for rgb in plain.reshape(-1, 3)])
    body_pixels = body_pixels.reshape(plain.shape[:2])
    left = np.zeros_like(body_pixels)
    left[:, : SIZE[0] // 2] = True
    changed = np.abs(chosen - plain).max(axis=2)
    assert changed[body_pixels & left].mean() > 15  # the selected box is tinted and rimmed
    assert changed[body_pixels & ~left].max() <= 2  # the sphere is untouched


def test_default_palette_is_distinct_and_in_range():
    colours = np.array([palette_color(i) for i in range(10)])
    assert np.all((colours >= 0) & (colours <= 1))
    assert len({tuple(c) for c in colours}) == 10
    assert np.allclose(palette_color(12), palette_color(2))


# ---- meshes ------------------------------------------------------------------------------


def test_box_normals_are_flat_and_sphere_normals_smooth():
    box = prepare_mesh(builtin_shape("box", [0.2, 0.4, 0.6])).levels[0]
    vertices, faces = box
    assert vertices.shape == (24, 6) and faces.shape == (12, 3)  # 4 corners per side
    normals = vertices[:, 3:]
    assert np.allclose(np.abs(normals).max(axis=1), 1.0)  # every normal along an axis
    for face in faces:  # and the same at the three corners of a face, facing outwards
        assert np.allclose(normals[face], normals[face[0]])
        assert vertices[face, :3].mean(axis=0) @ normals[face[0]] > 0
    sphere_shape = builtin_shape("sphere", [0.5])
    vertices, faces = prepare_mesh(sphere_shape).levels[0]
    assert len(vertices) == len(sphere_shape.vertices)  # nothing split
    radial = vertices[:, :3] / np.linalg.norm(vertices[:, :3], axis=1, keepdims=True)
    assert np.einsum("ij,ij->i", radial, vertices[:, 3:]).min() > 0.99
    # a cylinder: smooth around its side, split at the rims (32 sides: 64 + 2 × 33)
    vertices, _ = prepare_mesh(builtin_shape("cylinder", [0.2, 0.5])).levels[0]
    assert len(vertices) == 64 + 66


def test_levels_of_detail_get_coarser_and_keep_the_shape():
    shape = builtin_shape("sphere", [0.5])
    arrays = prepare_mesh(shape)
    faces = arrays.face_counts
    assert len(faces) >= 3 and faces[0] == len(shape.faces)
    assert np.all(faces[1:] <= 0.66 * faces[:-1])
    for vertices, indices in arrays.levels[1:]:
        r = np.linalg.norm(vertices[:, :3], axis=1)
        # still a ball of radius 0.5 (quadric collapse may place a vertex a little outside)
        assert np.abs(r - 0.5).max() <= COARSE_DEVIATION * 1.0
        assert indices.max() < len(vertices)
        radial = np.einsum("ij,ij->i", vertices[:, :3] / r[:, None], vertices[:, 3:])
        assert np.median(radial) > 0.97  # and shaded smooth, not faceted
    # a box has no coarser level and keeps its sharp edges
    assert len(prepare_mesh(builtin_shape("box")).levels) == 1


def test_small_meshes_get_coarser_levels_only_while_they_keep_their_shape():
    """Quadric edge collapse: a 128-face cylinder halves at least once and stays a cylinder of
    its radius and length (within COARSE_DEVIATION of its size); a T-handle's arms cannot be
    halved that closely, so it keeps its one level."""
    shape = builtin_shape("cylinder", [0.2, 0.5])  # radius 0.2 m, length 0.5 m
    faces = prepare_mesh(shape).face_counts
    assert faces[0] == 128 and len(faces) >= 2 and np.all(faces[1:] == faces[:-1] // 2)
    size = 0.5
    axis = np.argmax(np.ptp(prepare_mesh(shape).levels[0][0][:, :3], axis=0))  # its length
    for vertices, indices in prepare_mesh(shape).levels[1:]:
        axial = vertices[:, axis]
        radial = np.linalg.norm(np.delete(vertices[:, :3], axis, axis=1), axis=1)
        assert np.ptp(axial) == pytest.approx(0.5, abs=COARSE_DEVIATION * size)
        assert np.abs(radial.max() - 0.2) < COARSE_DEVIATION * size
        assert indices.max() < len(vertices)
    assert len(prepare_mesh(builtin_shape("t_handle")).levels) == 1


def test_a_big_mesh_is_capped_for_drawing():
    mesh = trimesh.creation.icosphere(subdivisions=7, radius=0.4)  # 327 680 faces
    shape = shape_from_mesh(Mesh("big", None, np.asarray(mesh.vertices),
                                 np.asarray(mesh.faces), True, ()))
    vertices, faces = prepare_mesh(shape).levels[0]
    assert len(faces) <= 1.15 * MAX_DRAWN_FACES
    r = np.linalg.norm(vertices[:, :3], axis=1)
    assert r.max() <= 0.4 + 1e-6 and r.min() > 0.39
    radial = np.einsum("ij,ij->i", vertices[:, :3] / r[:, None], vertices[:, 3:])
    assert radial.min() > 0.7 and np.percentile(radial, 99.9) > 0.99  # no folded-over specks


def test_a_large_unprepared_mesh_is_prepared_off_the_render_thread(gl):
    _, renderer, _ = gl
    mesh = trimesh.creation.icosphere(subdivisions=5, radius=0.4)
    assert len(mesh.faces) > PREPARE_INLINE_FACES
    shape = shape_from_mesh(Mesh("ball", None, np.asarray(mesh.vertices),
                                 np.asarray(mesh.faces), True, ()))
    view = make_view([shape], [(0.0, 0.5, 0.0)], [GREEN])
    cam = OrbitCamera(target=(0, 0.5, 0), distance=3.0)
    first = render(gl, view, cam)
    assert dominant(pixel(first, cam, (0.0, 0.5, 0.0))) == -1  # not drawn yet, no wait
    deadline = time.monotonic() + 30.0
    while renderer.mesh(shape) is None:
        assert time.monotonic() < deadline, "the worker thread never prepared the mesh"
        time.sleep(0.01)
    assert dominant(pixel(render(gl, view, cam), cam, (0.0, 0.5, 0.0))) == 1


def test_a_big_mesh_is_drawn_with_a_first_level_before_its_levels_of_detail(gl):
    """Staged preparation: a coarse first level is uploaded and drawn while the real levels are
    still being made on the worker, and they replace it when ready."""
    _, renderer, _ = gl
    mesh = trimesh.creation.icosphere(subdivisions=7, radius=0.4)  # 327,680 faces
    shape = shape_from_mesh(Mesh("big ball", None, np.asarray(mesh.vertices),
                                 np.asarray(mesh.faces), True, ()))
    view = make_view([shape], [(0.0, 0.5, 0.0)], [GREEN])
    cam = OrbitCamera(target=(0, 0.5, 0), distance=3.0)
    render(gl, view, cam)
    deadline = time.monotonic() + 60.0
    while (drawn := renderer.mesh(shape)) is None:
        assert time.monotonic() < deadline, "the worker thread never made the first level"
        time.sleep(0.005)
    first_faces = drawn[1].tolist()
    assert len(first_faces) == 1 and first_faces[0] <= 1.15 * FIRST_LEVEL_FACES
    with _prepared_lock:
        assert shape not in _prepared  # drawn before its finest level exists
    assert dominant(pixel(render(gl, view, cam), cam, (0.0, 0.5, 0.0))) == 1
    while len(renderer.mesh(shape)[1]) == 1:
        assert time.monotonic() < deadline, "the real levels never replaced the first one"
        time.sleep(0.01)
    faces = renderer.mesh(shape)[1]
    assert faces[0] > MAX_DRAWN_FACES / 2 and faces[-1] < faces[0]
    assert renderer.drawn_faces["big ball"] == faces.tolist()
    assert dominant(pixel(render(gl, view, cam), cam, (0.0, 0.5, 0.0))) == 1


def test_a_mesh_prepared_by_the_loader_thread_is_drawn_at_once(gl):
    _, renderer, _ = gl
    mesh = trimesh.creation.icosphere(subdivisions=5, radius=0.3)
    shape = shape_from_mesh(Mesh("ball", None, np.asarray(mesh.vertices),
                                 np.asarray(mesh.faces), True, ()))
    loader = threading.Thread(target=prepare_mesh, args=(shape,))
    loader.start()
    loader.join()
    cam = OrbitCamera(target=(0, 0.5, 0), distance=3.0)
    image = render(gl, make_view([shape], [(0.0, 0.5, 0.0)], [RED]), cam)
    assert dominant(pixel(image, cam, (0.0, 0.5, 0.0))) == 0


def test_release_unused_frees_the_meshes_no_longer_shown(gl):
    _, renderer, _ = gl
    box, sphere = builtin_shape("box"), builtin_shape("sphere")
    render(gl, make_view([box, sphere], [(0, 0.5, 0), (1, 0.5, 0)], [RED, GREEN]),
           OrbitCamera())
    assert {id(box), id(sphere)} <= {id(s) for s in renderer.uploaded}
    renderer.release_unused([box])
    assert box in renderer.uploaded and sphere not in renderer.uploaded


# ---- resources ---------------------------------------------------------------------------


def test_shaders_and_assets_are_found_in_the_checkout():
    assert resources.shader_source("body.vert.glsl").startswith("#version 330")
    assert resources.asset_path("scenes/default.toml").is_file()
    with pytest.raises(FileNotFoundError, match="nope.toml"):
        resources.asset_path("scenes/nope.toml")
    with pytest.raises(FileNotFoundError, match="nope.glsl"):
        resources.shader_source("nope.glsl")


def test_shaders_and_assets_are_found_in_an_installed_wheel(tmp_path, monkeypatch):
    site = tmp_path / "site"
    for package, name, text in (("tumble_shaders", "x.glsl", "// x"),
                                ("tumble_assets", "scenes/s.toml", "# s")):
        (site / package / name).parent.mkdir(parents=True, exist_ok=True)
        (site / package / "__init__.py").write_text("")
        (site / package / name).write_text(text)
    monkeypatch.setattr(resources, "_ROOT", tmp_path / "elsewhere")  # no checkout folders
    monkeypatch.syspath_prepend(str(site))
    for package in ("tumble_shaders", "tumble_assets"):
        monkeypatch.delitem(sys.modules, package, raising=False)
    assert resources.shader_source("x.glsl") == "// x"
    assert resources.asset_path("scenes/s.toml").read_text() == "# s"


def test_a_missing_installation_says_what_to_do(tmp_path, monkeypatch):
    monkeypatch.setattr(resources, "_ROOT", tmp_path)
    monkeypatch.setitem(sys.modules, "tumble_shaders", None)  # not importable
    with pytest.raises(FileNotFoundError, match="reinstall"):
        resources.shader_source("body.vert.glsl")


# ---- artefact ----------------------------------------------------------------------------


def test_demo_scene_artifact(gl):
    """A frame like the app's, with every gizmo kind on, saved for a person to look at."""
    ctx, renderer, _ = gl
    shapes = [builtin_shape("box", [0.5, 0.3, 0.4]), builtin_shape("sphere", [0.25]),
              builtin_shape("cylinder", [0.15, 0.5]), builtin_shape("t_handle", [2.0])]
    pos = [(-1.0, 0.35, -0.6), (0.9, 0.25, 0.5), (0.6, 0.15, -1.0), (-0.1, 1.3, 0.2)]
    quat = quat_from_axis_angle(np.array([[0, 1, 0], [1, 0, 0], [1, 0, 0], [1, 1, 0]]),
                                np.array([0.7, 0.0, math.pi / 2, 0.6]))
    view = make_view(shapes, pos, [palette_color(i) for i in range(4)], quat=quat,
                     selected=3, container=(4, 3, 4))
    omega = np.array([[0, 2.0, 1.0], [3.0, 0, 0], [0, 4.0, 0], [0.4, 6.0, 0.3]])
    moments = np.array([s.properties.principal_moments.mean() for s in shapes])
    t = np.linspace(0, 1, 60)[:, None]
    trail = np.array(pos[3]) + 0.35 * np.hstack([np.cos(6 * t), 1.2 + 0 * t, np.sin(6 * t)])
    view = FrameView(**{**view.__dict__, "omega": omega, "ang_mom": omega * moments[:, None],
                        "vel": np.array([[0.0, 0, 0], [-1.5, 0, 0.5], [0, 0, 0], [0, -2, 0]]),
                        "polhode": {3: trail},
                        "contact_points": np.array([[-1.0, 0.0, -0.6], [0.9, 0.0, 0.5]]),
                        "contact_normals": np.array([[0.0, 1, 0], [0, 1, 0]])})
    options = GizmoOptions(angular_momentum=True, angular_velocity=True, principal_axes=True,
                           inertia_ellipsoid=True, polhode=True, centre_of_mass=True,
                           contacts=True, velocity=True)
    target = OffscreenTarget(ctx, (960, 540), samples=4)
    cam = OrbitCamera(target=(0.0, 0.6, -0.1), yaw=0.55, pitch=0.4, distance=4.3)
    renderer.render(view, cam, target.size, options, fbo=target.fbo)
    image = target.read()
    target.release()
    ARTIFACTS.mkdir(exist_ok=True)
    with open(ARTIFACTS / "renderer.png", "wb") as f:
        png.Writer(960, 540, greyscale=False).write(f, image.reshape(540, -1))
    assert image.std() > 10  # a picture, not a flat fill (the pixel tests check the content)


def test_rows_by_shape_groups_each_shapes_bodies_in_order():
    """Each distinct Shape once, with the rows of its bodies ascending, Shapes in order of
    their ids (the order the instance groups are drawn in)."""
    box, ball = builtin_shape("box", (1.0, 1.0, 1.0)), builtin_shape("sphere", (0.5,))
    shapes = (ball, box, ball, ball, box)
    groups = _rows_by_shape(shapes)
    assert [id(shape) for shape, _ in groups] == sorted({id(box), id(ball)})
    rows = {id(shape): rows.tolist() for shape, rows in groups}
    assert rows == {id(ball): [0, 2, 3], id(box): [1, 4]}
    assert [rows.tolist() for _, rows in _rows_by_shape((box,))] == [[0]]
    assert _rows_by_shape(()) == []
