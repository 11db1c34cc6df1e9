"""Click picking (app/render/picking.py): camera ray vs body convex hulls, spheres analytic."""

import numpy as np
import pytest
import trimesh
from hypothesis import given
from hypothesis import strategies as st

from app.render.picking import hull_planes, pick
from physics.geometry.meshes import Mesh, builtin_shape, shape_from_mesh
from physics.geometry.rotation import (
    quat_conj,
    quat_from_axis_angle,
    quat_normalize,
    quat_rotate,
)

BOX = builtin_shape("box", [0.4, 0.2, 0.6])  # full extents x, y, z
BALL = builtin_shape("sphere", [0.25])
IDENTITY = np.array([1.0, 0.0, 0.0, 0.0])


def body_quat(shape, mesh_quat=IDENTITY):
    """Principal-frame orientation of ``shape`` placed with mesh orientation ``mesh_quat``."""
    return shape.body_def([0, 0, 0], mesh_quat).orientation


def hull_ray_points(shape, pos, quat, origin, direction) -> np.ndarray:
    """(h,3) points where the ray meets the triangles of the shape's world hull (trimesh's
    convex hull mesh), by the Möller–Trumbore test — independent of the half-space clipping."""
    hull = trimesh.convex.convex_hull(pos + quat_rotate(np.asarray(quat)[None], shape.hull))
    a, b, c = (hull.vertices[hull.faces[:, i]] for i in range(3))
    e1, e2 = b - a, c - a
    p = np.cross(direction, e2)
    det = np.einsum("ij,ij->i", e1, p)
    ok = np.abs(det) > 1e-14
    inv = np.where(ok, 1.0 / np.where(ok, det, 1.0), 0.0)
    s = origin - a
    u = np.einsum("ij,ij->i", s, p) * inv
    q = np.cross(s, e1)
    v = (q @ direction) * inv
    t = np.einsum("ij,ij->i", e2, q) * inv
    hit = ok & (u >= -1e-12) & (v >= -1e-12) & (u + v <= 1 + 1e-12) & (t >= 0)
    return origin + t[hit, None] * direction


def test_box_face_hit_distance_and_point():
    q = body_quat(BOX)
    hit = pick([0.1, 0.05, 5.0], [0, 0, -2.0], [7], [BOX], np.zeros((1, 3)), q[None])
    assert hit.body_id == 7
    assert hit.distance == pytest.approx(5.0 - 0.3, abs=1e-9)   # front face at z = +0.3
    np.testing.assert_allclose(hit.point, [0.1, 0.05, 0.3], atol=1e-9)


def test_rotated_box_matches_the_analytic_entry():
    """Box (x 0.4, z 0.6) turned 45° about y, ray along −z through its centre: both its −x and
    +z faces now face the ray; it is inside only past both planes, i.e. past the nearer one to
    the centre, the −x face at 0.2 / sin 45° (the +z face is 0.3 / cos 45° out)."""
    turn = quat_from_axis_angle(np.array([0.0, 1.0, 0.0]), np.pi / 4)
    pos = np.array([[1.0, 0.5, -2.0]])
    hit = pick([1.0, 0.5, 3.0], [0, 0, -1], [0], [BOX], pos, body_quat(BOX, turn)[None])
    assert hit.distance == pytest.approx(5.0 - 0.2 / np.sin(np.pi / 4), abs=1e-9)


def test_sphere_is_exact_and_nearest_body_wins():
    pos = np.array([[0.0, 0.0, 0.0], [0.0, 0.0, 2.0], [0.0, 0.0, -2.0]])
    quats = np.tile(IDENTITY, (3, 1))
    hit = pick([0.0, 0.1, 10.0], [0, 0, -1], [3, 4, 5], [BALL, BALL, BOX], pos, quats)
    assert hit.body_id == 4
    assert hit.distance == pytest.approx(8.0 - np.sqrt(0.25**2 - 0.1**2), abs=1e-12)
    assert np.linalg.norm(hit.point - pos[1]) == pytest.approx(0.25, abs=1e-12)


def test_misses_and_bodies_behind_the_ray():
    pos = np.zeros((2, 3))
    quats = np.vstack((body_quat(BOX), IDENTITY))
    assert pick([0.0, 2.0, 5.0], [0, 0, -1], [0, 1], [BOX, BALL], pos, quats) is None
    assert pick([0.0, 0.0, 5.0], [0, 0, 1], [0, 1], [BOX, BALL], pos, quats) is None
    assert pick([0.0, 0.0, 5.0], [0, 0, -1], [], [], np.zeros((0, 3)), np.zeros((0, 4))) is None


def test_ray_from_inside_hits_at_zero():
    hit = pick([0.05, 0.0, 0.0], [1, 0, 0], [2], [BOX], np.zeros((1, 3)),
               body_quat(BOX)[None])
    assert hit.body_id == 2 and hit.distance == 0.0


def test_flat_sheet_can_be_picked():
    """An open square (shell inertia, flat hull) is still clickable."""
    v = np.array([[0, 0, 0], [1, 0, 0], [1, 0, 1], [0, 0, 1]], dtype=float)
    sheet = shape_from_mesh(Mesh("sheet", None, v, np.array([[0, 2, 1], [0, 3, 2]]), False))
    assert len(hull_planes(sheet)) >= 4
    hit = pick([0.1, 3.0, 0.2], [0, -1, 0], [9], [sheet], np.zeros((1, 3)),
               body_quat(sheet)[None])
    assert hit.body_id == 9 and hit.distance == pytest.approx(3.0, abs=1e-6)


def test_hull_planes_are_computed_once_per_shape():
    assert hull_planes(BOX) is hull_planes(BOX)
    np.testing.assert_allclose(np.linalg.norm(hull_planes(BOX)[:, :3], axis=1), 1.0)


T_HANDLE = builtin_shape("t_handle")


@given(origin=st.lists(st.floats(-2, 2), min_size=3, max_size=3),
       target=st.lists(st.floats(-0.15, 0.15), min_size=3, max_size=3),
       q=st.lists(st.floats(-1, 1), min_size=4, max_size=4).filter(
           lambda v: np.linalg.norm(v) > 0.1))
def test_agrees_with_trimesh_ray_triangle_on_the_hull(origin, target, q):
    """Random rays from outside towards a randomly turned T-handle: same nearest point as
    a ray/triangle intersection with the world hull mesh."""
    quat = quat_normalize(np.array(q))
    pos = np.array([0.3, 0.4, -0.2])
    o = np.array(origin) + [0.0, 0.0, 3.0]
    d = pos + target - o
    hit = pick(o, d, [1], [T_HANDLE], pos[None], quat[None])
    points = hull_ray_points(T_HANDLE, pos, quat, o, d)
    if len(points) == 0:
        # the triangles missed (the ray grazes an edge or vertex, within rounding): a hit, if
        # any, must still be a point of the hull's boundary on the ray
        if hit is not None:
            np.testing.assert_allclose(hit.point, o + hit.distance * d / np.linalg.norm(d),
                                       atol=1e-9)
            body = quat_rotate(quat_conj(quat)[None], (hit.point - pos)[None])[0]
            planes = hull_planes(T_HANDLE)
            assert np.max(planes[:, :3] @ body + planes[:, 3]) == pytest.approx(0.0, abs=1e-7)
    else:
        nearest = points[np.argmin(np.linalg.norm(points - o, axis=1))]
        assert hit is not None
        np.testing.assert_allclose(hit.point, nearest, atol=1e-7)
        assert hit.distance == pytest.approx(np.linalg.norm(nearest - o), abs=1e-7)
