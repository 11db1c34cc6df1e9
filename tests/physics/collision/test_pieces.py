"""Contacts of compound bodies: piece pairs through the narrow phase, one body pair's contacts
reduced to a manifold of at most four points per direction of touch."""

import numpy as np
import pytest
from scipy.spatial import ConvexHull

from physics.collision.manifolds import ManifoldCache
from physics.collision.pieces import piece_contacts
from physics.geometry.rotation import quat_from_axis_angle, quat_to_matrix
from physics.model import BodyDef, Model, WorldDef
from physics.settings import MAX_MANIFOLD
from tests.physics.bodies import box_corners, box_moments, v_block

H = 1.0 / 240.0


def tiles(count, size, thickness, fill=1.0) -> tuple[np.ndarray, ...]:
    """A square plate ``size`` m across and ``thickness`` m thick, centred on the origin, as
    count × count box pieces side by side, each ``fill`` of its share wide."""
    step = size / count
    return tuple(box_corners((fill * step, thickness, fill * step))
                 + [-size / 2 + (i + 0.5) * step, 0.0, -size / 2 + (j + 0.5) * step]
                 for i in range(count) for j in range(count))


def compound(pieces, hull, mass=1.0) -> BodyDef:
    return BodyDef(mass=mass, principal_moments=box_moments(mass, (1.0, 1.0, 1.0)), hull=hull,
                   pieces=pieces)


def contacts_between(bodies, pos, quat=None, manifolds=None, model=None):
    """The reduced contacts between bodies 0 and 1 of ``bodies`` (BodyDefs, or ``model``) at
    rest at pos, and the piece pairs' manifolds to keep (``manifolds`` those of the step
    before)."""
    if model is None:
        model = Model(WorldDef())
        for body_id, body in enumerate(bodies):
            model.append(body_id, body)
    pos = np.asarray(pos, dtype=float)
    quat = np.tile([1.0, 0, 0, 0], (len(pos), 1)) if quat is None else np.asarray(quat)
    zero = np.zeros((len(pos), 3))
    found, kept = piece_contacts(np.array([[0, 1]]), pos, quat_to_matrix(quat), zero, zero,
                                 model, H, ManifoldCache() if manifolds is None else manifolds)
    return (found, kept) if manifolds is not None else found


def footprint(points) -> float:
    """Area m² of the horizontal convex hull of points (k, 3)."""
    return ConvexHull(points[:, [0, 2]]).volume


def test_a_plate_of_sixteen_pieces_on_a_plate_of_sixteen_touches_at_four_corners():
    # tiles 5 cm apart, beyond the speculative reach of their neighbours
    plate = compound(tiles(4, 1.0, 0.1, fill=0.8), box_corners((1.0, 0.1, 1.0)))
    found = contacts_between([plate, plate], [[0.0, 0.099, 0.0], [0.0, 0.0, 0.0]])
    # unreduced, each of the 16 upper tiles would touch the one below at four points
    assert found.count == MAX_MANIFOLD
    assert np.allclose(found.normal, [0.0, 1.0, 0.0])
    assert np.allclose(found.separation, -0.001)
    # the four kept points span the whole 0.95 m square, as a single hull pair's corners do
    assert footprint(found.point) == pytest.approx(0.95 ** 2, rel=1e-6)
    assert len(np.unique(found.key)) == MAX_MANIFOLD


def test_a_bridge_on_a_slab_keeps_points_under_both_feet():
    feet = (tiles(2, 0.2, 0.1) + tuple(t + [0.8, 0.0, 0.0] for t in tiles(2, 0.2, 0.1)))
    bridge = compound(feet, np.vstack(feet))
    slab = compound((), box_corners((2.0, 0.1, 2.0)))
    found = contacts_between([bridge, slab], [[-0.4, 0.099, 0.0], [0.0, 0.0, 0.0]])
    assert found.count == MAX_MANIFOLD
    x = found.point[:, 0]
    assert (x < -0.3).sum() == 2 and (x > 0.3).sum() == 2  # two under each foot
    assert footprint(found.point) == pytest.approx(0.2 * 1.0, rel=1e-6)


def test_a_box_in_a_v_block_keeps_a_manifold_on_each_side():
    pieces = v_block()
    vee = compound(pieces, np.vstack(pieces))
    box = compound((), box_corners((0.4, 0.4, 0.8)))
    # turned 45° its faces lie on the plates (0.05 + 0.2 m from each mid-plane), 1 mm deep
    height = (0.25 - 0.001) * np.sqrt(2.0)
    turn = quat_from_axis_angle([0.0, 0.0, 1.0], np.pi / 4)
    found = contacts_between([box, vee], [[0.0, height, 0.0], [0.0, 0.0, 0.0]],
                             [turn, [1.0, 0, 0, 0]])
    sides = np.sign(found.normal[:, 0])
    assert set(sides) == {-1.0, 1.0}  # it leans on both plates (16 raw points each)
    for side in (-1.0, 1.0):
        assert (sides == side).sum() == MAX_MANIFOLD
        # the four points of a side span its whole 0.4 × 0.8 m face
        on_side = found.point[sides == side]
        span = on_side.max(axis=0) - on_side.min(axis=0)
        assert span[2] == pytest.approx(0.8, abs=1e-6)


def test_piece_manifolds_are_carried_while_the_bodies_barely_move_and_found_again_after():
    model = Model(WorldDef())
    plate = compound(tiles(4, 1.0, 0.1, fill=0.8), box_corners((1.0, 0.1, 1.0)))
    for body_id in range(2):
        model.append(body_id, plate)
    pos = np.array([[0.0, 0.099, 0.0], [0.0, 0.0, 0.0]])
    first, manifolds = contacts_between(None, pos, manifolds=ManifoldCache(), model=model)
    assert len(manifolds.size) == 16  # each upper tile on the one below
    # 0.1 mm down: within MANIFOLD_REUSE_SHIFT, the manifolds are carried with the bodies
    pos[0, 1] -= 1e-4
    carried, kept = contacts_between(None, pos, manifolds=manifolds, model=model)
    np.testing.assert_array_equal(kept.pose, manifolds.pose)  # still the pose found at
    np.testing.assert_array_equal(carried.key, first.key)
    np.testing.assert_allclose(carried.separation, first.separation - 1e-4, atol=1e-12)
    # 1 mm sideways: found afresh at the new pose
    pos[0, 0] += 1e-3
    _, fresh = contacts_between(None, pos, manifolds=kept, model=model)
    assert not np.array_equal(fresh.pose, kept.pose)
