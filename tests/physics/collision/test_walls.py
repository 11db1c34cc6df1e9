"""Wall contact generation: which points, how many, and how far (docs/physics.md#wall-contacts)."""

import numpy as np
import pytest

from physics.collision.contact import plane_tangents
from physics.collision.walls import wall_clearance, wall_contacts
from physics.geometry.rotation import quat_from_axis_angle, quat_to_matrix
from physics.model import BodyDef, Model, WorldDef
from physics.settings import MAX_POINTS_PER_PLANE
from tests.physics.bodies import box_body

H = 1.0 / 240.0


def model_with(*bodies, container=(4.0, 3.0, 4.0)) -> Model:
    model = Model(WorldDef(container_size=container))
    for i, body in enumerate(bodies):
        model.append(i, body)
    return model


def contacts_for(model, pos, quat, vel, omega):
    return wall_contacts(
        np.asarray(pos, float),
        quat_to_matrix(np.asarray(quat, float)),
        np.asarray(vel, float),
        np.asarray(omega, float),
        model.ids,
        model.radius,
        model.bound_radius,
        model.hull_points,
        model.hull_start,
        model.wall_planes(),
        H,
    )


def test_box_resting_flat_touches_the_floor_at_its_four_bottom_corners():
    model = model_with(box_body(size=(1.0, 1.0, 1.0)))
    c = contacts_for(model, [[0, 0.5, 0]], [[1, 0, 0, 0]], [[0, 0, 0]], [[0, 0, 0]])
    assert c.count == 4
    assert np.allclose(c.point[:, 1], 0.0) and np.allclose(c.separation, 0.0)
    assert np.allclose(c.normal, [0, 1, 0])
    assert len(set(c.key.tolist())) == 4


def test_fast_vertex_far_from_the_wall_is_a_speculative_contact():
    model = model_with(box_body(size=(0.1, 0.1, 0.1)))
    # 0.2 m above the floor, falling at 60 m/s: crosses the floor within this step
    c = contacts_for(model, [[0, 0.25, 0]], [[1, 0, 0, 0]], [[0, -60.0, 0]], [[0, 0, 0]])
    assert c.count == 4 and np.allclose(c.separation, 0.2)
    # at rest at the same height it is not a contact
    c = contacts_for(model, [[0, 0.25, 0]], [[1, 0, 0, 0]], [[0, 0, 0]], [[0, 0, 0]])
    assert c.count == 0


def test_many_touching_vertices_are_reduced_but_keep_the_support_polygon():
    angles = np.linspace(0, 2 * np.pi, 32, endpoint=False)
    ring = np.stack([0.3 * np.cos(angles), np.zeros(32), 0.3 * np.sin(angles)], axis=1)
    hull = np.vstack([ring + [0, -0.1, 0], ring + [0, 0.1, 0]])  # a cylinder standing on its cap
    model = model_with(BodyDef(mass=1.0, principal_moments=[0.025, 0.025, 0.045], hull=hull))
    c = contacts_for(model, [[0, 0.1, 0]], [[1, 0, 0, 0]], [[0, 0, 0]], [[0, 0, 0]])
    assert 3 <= c.count <= MAX_POINTS_PER_PLANE
    xz = c.point[:, [0, 2]]
    # the chosen points span the cap in both directions
    assert np.ptp(xz[:, 0]) > 0.35 and np.ptp(xz[:, 1]) > 0.35


def test_sphere_contact_is_its_lowest_point():
    model = Model(WorldDef())
    model.append(0, BodyDef(mass=1.0, principal_moments=[0.1] * 3, radius=0.5))
    c = contacts_for(model, [[1.2, 0.505, 0]], [[1, 0, 0, 0]], [[0, 0, 0]], [[0, 0, 0]])
    assert c.count == 1
    assert np.allclose(c.point, [[1.2, 0.005, 0]]) and c.separation[0] == pytest.approx(0.005)


def test_corner_of_the_container_gives_contacts_on_three_walls():
    model = model_with(box_body(size=(0.4, 0.4, 0.4)))
    c = contacts_for(model, [[1.8, 0.2, 1.8]], [[1, 0, 0, 0]], [[0, 0, 0]], [[0, 0, 0]])
    normals = {tuple(n) for n in np.round(c.normal, 6).tolist()}
    assert normals == {(0.0, 1.0, 0.0), (-1.0, 0.0, 0.0), (0.0, 0.0, -1.0)}


def test_clearance_of_a_tilted_box_is_its_lowest_corner():
    model = model_with(box_body(size=(1.0, 1.0, 1.0)))
    q = quat_from_axis_angle(np.array([0.0, 0.0, 1.0]), np.pi / 4)[None]
    clearance = wall_clearance(
        np.array([[0.0, 1.0, 0.0]]),
        quat_to_matrix(q),
        model.radius,
        model.bound_radius,
        model.hull_points,
        model.hull_start,
        model.wall_planes(),
    )
    assert clearance[0, 0] == pytest.approx(1.0 - np.sqrt(0.5), abs=1e-12)
    assert clearance[0, 1] == pytest.approx(3.0 - 1.0 - np.sqrt(0.5), abs=1e-12)


def test_no_container_means_no_contacts():
    model = model_with(box_body(), container=None)
    c = contacts_for(model, [[0, -5, 0]], [[1, 0, 0, 0]], [[0, -9, 0]], [[0, 0, 0]])
    assert c.count == 0


def test_tangents_are_orthonormal_and_fixed_per_normal():
    normals = np.array([[0, 1, 0], [1, 0, 0], [0, 0, -1], [0.6, 0.8, 0.0]], dtype=float)
    t1, t2 = plane_tangents(normals)
    for a, b in ((normals, t1), (normals, t2), (t1, t2)):
        assert np.allclose(np.einsum("ij,ij->i", a, b), 0.0)
    assert np.allclose(np.linalg.norm(t1, axis=1), 1.0) and np.allclose(
        np.linalg.norm(t2, axis=1), 1.0
    )
    assert np.allclose(np.cross(t1, t2), normals)


def test_a_vertex_that_would_end_the_step_in_the_wall_is_kept_by_the_reduction():
    """An octagon 1.8 mm above the floor, tilted so one corner is lowest, turning so the corner
    at +x closes at 0.56 m/s: it would end the step 0.5 mm in the floor, past the slop. It is
    neither the deepest corner nor an extreme along the four diagonal directions the reduction
    keeps, but it is a contact (else the projection would lift the body the solver never
    stopped)."""
    angles = np.radians(np.arange(0, 360, 45))
    radius = 0.2
    ring = np.stack([radius * np.cos(angles), np.zeros(8), radius * np.sin(angles)], axis=1)
    hull = np.vstack([ring, ring + [0.0, 0.3, 0.0]])
    model = model_with(BodyDef(mass=1.0, principal_moments=[0.01, 0.01, 0.02], hull=hull))
    tilt = quat_from_axis_angle(np.array([1.0, 0.0, 0.0]), np.array(1e-3))  # +z corner lowest
    omega = -0.56 / radius  # about z: the +x corner moves down at 0.56 m/s
    closing_corner = np.array([radius, 0.0, 0.0])
    c = contacts_for(model, [[0, 0.0018, 0]], [tilt], [[0, 0, 0]], [[0, 0, omega]])
    floor = c.normal[:, 1] == 1.0
    assert floor.sum() > MAX_POINTS_PER_PLANE - 1  # the reduced set and the closing corner
    gap = np.linalg.norm(c.point[floor][:, [0, 2]] - closing_corner[[0, 2]], axis=1).min()
    assert gap < 1e-9
