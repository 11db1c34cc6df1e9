"""The orbit camera: projection and picking rays agree, and orbit/pan/zoom/frame keep their
invariants (no GL needed)."""

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from pyrr import matrix44

from app.render.camera import (
    HOME_CENTER,
    HOME_RADIUS,
    MAX_DISTANCE,
    MIN_BODIES_RADIUS,
    MIN_DISTANCE,
    PITCH_LIMIT,
    OrbitCamera,
    home_sphere,
    look_at,
)

W, H = 1280, 720
angles = st.floats(-3.0, 3.0)
points = st.tuples(*[st.floats(-2.0, 2.0)] * 3).map(np.array)


def camera(yaw=0.6, pitch=0.4, distance=7.0, target=(0.2, 0.8, -0.3)) -> OrbitCamera:
    return OrbitCamera(target=target, yaw=yaw, pitch=pitch, distance=distance)


def distance_to_ray(point, origin, direction) -> float:
    v = point - origin
    return float(np.linalg.norm(v - (v @ direction) * direction))


@given(yaw=angles, pitch=st.floats(-1.5, 1.5), point=points)
def test_ray_through_the_projected_pixel_passes_through_the_point(yaw, pitch, point):
    cam = camera(yaw, pitch)
    x, y, depth = cam.project(point, W, H)
    assert depth > 0  # the eye is 7 m out, the points within 3.5 m of the target
    origin, direction = cam.ray(x, y, W, H)
    assert np.allclose(origin, cam.eye)
    assert math.isclose(np.linalg.norm(direction), 1.0, rel_tol=1e-12)
    assert distance_to_ray(point, origin, direction) < 1e-6 * cam.distance
    assert (point - origin) @ direction > 0  # in front, not behind


def test_pixel_origin_is_bottom_left_like_pyglet():
    cam = OrbitCamera(target=(0, 0, 0), yaw=0.0, pitch=0.0, distance=5.0)  # looking along −z
    assert np.allclose(cam.project(np.zeros(3), W, H)[:2], (W / 2, H / 2))
    x, y, _ = cam.project(np.array([0.0, 1.0, 0.0]), W, H)  # up in the world: up on screen
    assert math.isclose(x, W / 2) and y > H / 2
    x, y, _ = cam.project(np.array([1.0, 0.0, 0.0]), W, H)  # +x is to the right
    assert x > W / 2 and math.isclose(y, H / 2)
    _, direction = cam.ray(0, 0, W, H)  # bottom-left pixel: down and to the left
    assert direction[0] < 0 and direction[1] < 0 and direction[2] < 0


def test_matrices_are_float32_pyrr_row_vector_layout():
    cam = camera()
    view, proj = cam.view(), cam.projection(W / H)
    assert view.dtype == proj.dtype == np.float32
    # row vectors: the target lands on the −z axis of the view, d metres away
    target_view = np.append(cam.target, 1.0) @ view.astype(float)
    assert np.allclose(target_view[:3], (0.0, 0.0, -cam.distance), atol=1e-5)
    clip = np.append(cam.target, 1.0) @ cam.view_projection(W / H).astype(float)
    assert np.allclose(clip[:2] / clip[3], 0.0, atol=1e-6)


@given(d_yaw=angles, d_pitch=angles)
def test_orbit_keeps_target_and_distance_and_clamps_pitch(d_yaw, d_pitch):
    cam = camera()
    target = cam.target.copy()
    cam.orbit(d_yaw, d_pitch)
    assert np.allclose(cam.target, target)
    assert math.isclose(np.linalg.norm(cam.eye - cam.target), cam.distance, rel_tol=1e-12)
    assert -PITCH_LIMIT <= cam.pitch <= PITCH_LIMIT
    assert np.allclose(np.cross(cam.right, cam.up), cam.back)  # a right-handed screen frame


def test_pitch_never_reaches_the_pole():
    cam = camera()
    cam.orbit(0.0, 10.0)
    assert cam.pitch == pytest.approx(PITCH_LIMIT)
    assert np.all(np.isfinite(cam.view()))
    cam.orbit(0.0, -20.0)
    assert cam.pitch == pytest.approx(-PITCH_LIMIT)


@given(dx=st.floats(-500, 500), dy=st.floats(-500, 500))
def test_pan_drags_the_point_under_the_cursor_along(dx, dy):
    cam = camera()
    eye_offset = cam.eye - cam.target
    x0, y0, _ = cam.project(cam.target, W, H)
    grabbed = cam.target.copy()  # the world point under the screen centre
    cam.pan(dx, dy, H)
    x1, y1, _ = cam.project(grabbed, W, H)
    assert (x1 - x0, y1 - y0) == pytest.approx((dx, dy), abs=1e-6 * (1 + abs(dx) + abs(dy)))
    assert np.allclose(cam.eye - cam.target, eye_offset)  # pan never turns or zooms


def test_zoom_is_exponential_and_clamped():
    cam = camera(distance=8.0)
    cam.zoom(1)
    d1 = cam.distance
    cam.zoom(1)
    assert cam.distance / d1 == pytest.approx(d1 / 8.0)  # the same ratio per notch
    assert d1 < 8.0
    cam.zoom(-2)
    assert cam.distance == pytest.approx(8.0)
    cam.zoom(1000)
    assert cam.distance == MIN_DISTANCE
    cam.zoom(-1000)
    assert cam.distance == MAX_DISTANCE


@given(center=points, radius=st.floats(0.05, 20.0), yaw=angles, pitch=st.floats(-1.5, 1.5),
       aspect=st.sampled_from([16 / 9, 1.0, 0.5]))
def test_frame_fits_the_sphere_in_view(center, radius, yaw, pitch, aspect):
    cam = camera(yaw, pitch)
    cam.frame(center, radius, aspect)
    assert np.allclose(cam.target, center)
    height = 400
    width = int(round(height * aspect))
    # the sphere's outline lies inside the viewport, touching it within 10 % on one axis
    x, y, _ = cam.project(center, width, height)
    assert (x, y) == pytest.approx((width / 2, height / 2), abs=1e-6)
    edge = np.stack([center + radius * cam.right, center + radius * cam.up])
    (ex, _, _), (_, ey, _) = cam.project(edge, width, height)
    half = min(ex - width / 2, ey - height / 2)
    limit = min(width, height) / 2
    assert 0.75 * limit < half < limit


def test_world_per_pixel_matches_projection():
    cam = camera()
    size = cam.world_per_pixel(cam.distance, H)
    shifted = cam.target + size * 10.0 * cam.right
    assert cam.project(shifted, W, H)[0] - cam.project(cam.target, W, H)[0] == pytest.approx(10.0)


def test_home_sphere_frames_the_container_else_the_bodies_else_the_default():
    centre, radius = home_sphere([4.0, 3.0, 4.0])
    assert centre == (0.0, 1.0, 0.0) and radius == pytest.approx(0.45 * np.sqrt(41.0))
    assert home_sphere(None) == (HOME_CENTER, HOME_RADIUS)
    assert home_sphere(None, np.zeros((0, 3))) == (HOME_CENTER, HOME_RADIUS)
    # zero g, one small body far from the origin: the view is around it, not a speck
    centre, radius = home_sphere(None, [[5.0, 2.0, -1.0]])
    assert centre == (5.0, 2.0, -1.0) and radius == MIN_BODIES_RADIUS
    bodies = np.array([[-3.0, 1.0, 0.0], [3.0, 1.0, 0.0], [0.0, 5.0, 2.0]])
    centre, radius = home_sphere(None, bodies)
    assert np.all(np.linalg.norm(bodies - centre, axis=1) < radius)  # every body in view


coordinates = st.floats(-50.0, 50.0, allow_subnormal=False)


@given(eye=st.tuples(*[coordinates] * 3), target=st.tuples(*[coordinates] * 3),
       up=st.sampled_from([(0.0, 1.0, 0.0), (0.0, 0.0, 1.0), (0.3, 0.9, -0.1)]),
       dtype=st.sampled_from([None, np.float32]))
def test_look_at_is_pyrrs_to_the_bit(eye, target, up, dtype):
    eye, target = np.array(eye), np.array(target)
    if np.linalg.norm(target - eye) < 1e-3 or np.linalg.norm(
            np.cross(target - eye, up)) < 1e-3 * np.linalg.norm(target - eye):
        return  # no view direction, or looking along up: undefined for both
    ours = look_at(eye, target, np.array(up), dtype=dtype)
    theirs = matrix44.create_look_at(eye, target, np.array(up), dtype=dtype)
    assert ours.dtype == theirs.dtype
    assert np.array_equal(ours, theirs)
