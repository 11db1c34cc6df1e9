"""Boxes: recognised among hulls, and their closed-form SAT gives the general narrow phase's
contacts exactly."""

import dataclasses

import numpy as np

from physics.collision.boxes import box_frame
from physics.collision.narrowphase import body_contacts
from physics.geometry.meshes import builtin_shape
from physics.geometry.polytope import polytope
from physics.geometry.rotation import quat_from_axis_angle, quat_normalize, quat_to_matrix
from physics.model import BodyDef, Model, WorldDef
from tests.physics.bodies import box_corners

H = 1.0 / 240.0


def test_a_rotated_shifted_box_is_recognised_with_its_frame():
    rot = quat_to_matrix(quat_from_axis_angle(np.array([1.0, 2.0, 3.0]), 0.7))
    corners = box_corners((0.4, 0.2, 0.3)) @ rot.T + [0.1, -0.2, 0.05]
    axes, half, centre = box_frame(corners, polytope(corners))
    assert np.allclose(np.sort(half), [0.1, 0.15, 0.2])
    assert np.allclose(centre, [0.1, -0.2, 0.05])
    assert np.allclose(axes.T @ axes, np.eye(3))
    # each axis is one of the box's edge directions
    assert np.allclose(np.sort(np.abs(rot.T @ axes).max(axis=0)), 1.0)


def test_other_hulls_are_not_boxes():
    corners = box_corners((0.4, 0.2, 0.3))
    skewed = corners.copy()
    skewed[0] += [0.0, 0.0, -0.01]           # still 8 vertices, no longer a box
    wedge = corners[corners[:, 1] < 0.0]      # 4 vertices
    for hull in (skewed, wedge, builtin_shape("cylinder").body_def(np.zeros(3)).hull):
        assert box_frame(hull, polytope(hull)) is None


def pair_contacts(model, pos, quat, vel):
    pairs = np.array([[0, 1]], dtype=np.int64)
    return body_contacts(pairs, pos, quat_to_matrix(quat), vel, np.zeros((2, 3)), model, H)


def test_box_pairs_get_exactly_the_general_hull_contacts():
    """Random boxes at random orientations, from overlapping by a few cm to just within the
    speculative distance: the closed-form SAT picks the same features, so the contacts (keys,
    points, normals, gaps) are those of the general SAT over faces and Gauss-map edge pairs."""
    rng = np.random.default_rng(11)
    kinds = {"face": 0, "edge": 0}
    for _ in range(300):
        sizes = rng.uniform(0.1, 0.5, size=(2, 3))
        model = Model(WorldDef())
        for i, size in enumerate(sizes):
            model.append(i, BodyDef(mass=1.0, principal_moments=[1.0, 1.0, 1.0],
                                    hull=box_corners(size)))
        general = dataclasses.replace(model, box_half=np.zeros_like(model.box_half))
        quat = quat_normalize(rng.normal(size=(2, 4)))
        direction = rng.normal(size=3)
        direction /= np.linalg.norm(direction)
        reach = 0.5 * (np.linalg.norm(sizes[0]) + np.linalg.norm(sizes[1]))
        pos = np.array([np.zeros(3), direction * rng.uniform(0.3, 1.0) * reach])
        vel = np.array([np.zeros(3), -direction * rng.uniform(0.0, 2.0)])
        fast, slow = pair_contacts(model, pos, quat, vel), pair_contacts(general, pos, quat, vel)
        assert np.all(model.box_half > 0.0)
        assert fast.count == slow.count
        assert np.array_equal(fast.key, slow.key)
        assert np.array_equal(fast.body, slow.body) and np.array_equal(fast.other, slow.other)
        assert np.allclose(fast.point, slow.point, rtol=0, atol=1e-12)
        assert np.allclose(fast.normal, slow.normal, rtol=0, atol=1e-12)
        assert np.allclose(fast.separation, slow.separation, rtol=0, atol=1e-12)
        if fast.count:
            kinds["edge" if fast.count == 1 else "face"] += 1
    assert kinds["face"] > 30 and kinds["edge"] > 10  # both kinds of manifold were compared


def test_deleting_a_body_keeps_the_box_rows_aligned():
    model = Model(WorldDef())
    model.append(0, BodyDef(mass=1.0, principal_moments=[1.0, 1.0, 1.0], radius=0.1))
    model.append(1, BodyDef(mass=1.0, principal_moments=[1.0, 1.0, 1.0],
                            hull=box_corners((0.2, 0.4, 0.6))))
    model.delete(0)
    assert model.box_half.shape == (1, 3) and np.allclose(np.sort(model.box_half[0]),
                                                          [0.1, 0.2, 0.3])
