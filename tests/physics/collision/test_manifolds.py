"""Manifold reuse: a touching pair that barely moved keeps its contacts, carried with the bodies;
one that moved past the thresholds is found afresh."""

import numpy as np
import pytest

from physics.collision import narrowphase
from physics.collision.broadphase import candidate_pairs
from physics.collision.manifolds import ManifoldCache
from physics.collision.narrowphase import body_contacts, pair_contacts
from physics.geometry.rotation import quat_from_axis_angle, quat_mul, quat_to_matrix
from physics.model import Model, WorldDef
from physics.settings import MANIFOLD_REUSE_SHIFT, MANIFOLD_REUSE_TURN
from tests.physics.bodies import box_body, box_heap

H = 1.0 / 240.0
FIELDS = ("body", "other", "key", "point", "normal", "separation")


def box_on_box(ids=(0, 1)):
    """A 0.5 m box resting on a 1 m box, slightly off centre: a four-point face manifold."""
    model = Model(WorldDef())
    bodies = [box_body(size=(1.0, 1.0, 1.0)), box_body(size=(0.5, 0.5, 0.5))]
    for body_id, body in zip(ids, bodies):
        model.append(body_id, body)
    pos = np.array([[0.0, 0.5, 0.0], [0.1, 1.25, 0.1]])
    quat = np.array([[1.0, 0, 0, 0], [1.0, 0, 0, 0]])
    return model, pos, quat


def found(model, pos, quat, cache=None):
    """(contacts, cache) through pair_contacts, the bodies at rest."""
    pairs = np.array([[0, 1]], dtype=np.int64)
    zero = np.zeros((len(pos), 3))
    return pair_contacts(pairs, pos, quat_to_matrix(quat), zero, zero, model, H,
                         ManifoldCache() if cache is None else cache)


def moved(pos, quat, shift, angle):
    """The upper box shifted by shift (3,) m and turned by angle rad about a tilted axis."""
    pos, quat = pos.copy(), quat.copy()
    pos[1] += shift
    axis = np.array([1.0, 0.3, 0.5]) / np.linalg.norm([1.0, 0.3, 0.5])
    quat[1] = quat_mul(quat_from_axis_angle(axis, angle), quat[1])
    return pos, quat


def test_a_pair_that_barely_moved_keeps_its_contacts_carried_with_the_bodies():
    model, pos, quat = box_on_box()
    first, cache = found(model, pos, quat)
    assert first.count == 4
    # sunk 0.3 mm and turned by 0.6°: inside both thresholds
    pos2, quat2 = moved(pos, quat, [0.0001, -0.0003, 0.0], 0.6 * MANIFOLD_REUSE_TURN)
    carried, _ = found(model, pos2, quat2, cache)
    fresh = body_contacts(np.array([[0, 1]]), pos2, quat_to_matrix(quat2), np.zeros((2, 3)),
                          np.zeros((2, 3)), model, H)
    # the same contacts (keys, bodies) as when found, now where the bodies are
    assert np.array_equal(carried.key, first.key) and np.array_equal(carried.body, first.body)
    assert not np.allclose(carried.separation, first.separation, atol=1e-5)
    # the upper box's corners are the incident points, carried exactly: the gaps agree with a
    # fresh manifold to rounding; the points lie midway between a corner and where it touched
    # the lower face when found, so they trail the fresh ones by half the corners' slide
    order = [list(fresh.key).index(k) for k in carried.key]
    assert np.allclose(carried.separation, fresh.separation[order], atol=1e-9)
    slide = np.linalg.norm(carried.point - fresh.point[order], axis=1)
    corner_radius = np.linalg.norm([0.25, 0.25, 0.25])
    assert np.all(
        slide
        <= 0.5 * (np.linalg.norm([0.0001, 0.0003]) + 0.6 * MANIFOLD_REUSE_TURN * corner_radius)
    )
    assert slide.max() > 1e-4
    cos = np.sum(carried.normal * fresh.normal[order], axis=1)
    assert np.all(cos > np.cos(MANIFOLD_REUSE_TURN))


@pytest.mark.parametrize("shift, angle", [([0.0, 2 * MANIFOLD_REUSE_SHIFT, 0.0], 0.0),
                                          ([0.0, 0.0, 0.0], 1.5 * MANIFOLD_REUSE_TURN)])
def test_a_pair_that_moved_past_a_threshold_is_found_afresh(shift, angle):
    model, pos, quat = box_on_box()
    _, cache = found(model, pos, quat)
    pos2, quat2 = moved(pos, quat, shift, angle)
    again, _ = found(model, pos2, quat2, cache)
    fresh = body_contacts(np.array([[0, 1]]), pos2, quat_to_matrix(quat2), np.zeros((2, 3)),
                          np.zeros((2, 3)), model, H)
    for field in FIELDS:
        assert np.array_equal(getattr(again, field), getattr(fresh, field)), field


def test_a_carried_manifold_keeps_the_pose_it_was_found_at():
    """Small moves must not add up: after several steps of 0.2 mm the pair is found afresh."""
    model, pos, quat = box_on_box()
    contacts, cache = found(model, pos, quat)
    for step in range(1, 5):
        p, q = moved(pos, quat, [0.0, 0.0, 0.0002 * step], 0.0)
        contacts, cache = found(model, p, q, cache)
        fresh = body_contacts(np.array([[0, 1]]), p, quat_to_matrix(q), np.zeros((2, 3)),
                              np.zeros((2, 3)), model, H)
        same_as_fresh = all(np.array_equal(getattr(contacts, f), getattr(fresh, f))
                            for f in FIELDS)
        # 0.2 and 0.4 mm from where it was found: carried; 0.6 mm: found afresh, and from
        # there 0.2 mm: carried again
        assert same_as_fresh == (step == 3), step


def test_manifolds_are_kept_by_body_id_not_by_row():
    """Rows shift when a body is removed; a stored manifold must follow its bodies' ids."""
    model, pos, quat = box_on_box(ids=(7, 3))  # the lower box has the higher id
    first, cache = found(model, pos, quat)
    # the same two bodies in swapped rows (ids 3, 7), barely moved
    swapped = Model(WorldDef())
    swapped.append(3, box_body(size=(0.5, 0.5, 0.5)))
    swapped.append(7, box_body(size=(1.0, 1.0, 1.0)))
    pos2, quat2 = moved(pos, quat, [0.0, -0.0002, 0.0], 0.0)
    carried, _ = found(swapped, pos2[::-1].copy(), quat2[::-1].copy(), cache)
    assert np.array_equal(carried.key, first.key)
    # each contact's first body is the same body (by id) as when found, so normals still point
    # into it, and the gap is the 0.2 mm the upper box sank
    assert np.array_equal(swapped.ids[carried.body], model.ids[first.body])
    assert np.allclose(carried.normal, first.normal) and np.allclose(carried.separation, -0.0002)


def test_carried_manifolds_do_not_depend_on_the_thread_count(monkeypatch):
    model, pos, quat, _ = box_heap()
    n = len(pos)
    pairs = candidate_pairs(pos, model.bound_radius + 0.05)
    zero = np.zeros((n, 3))
    _, cache = pair_contacts(pairs, pos, quat_to_matrix(quat), zero, zero, model, H,
                             ManifoldCache())
    # half the bodies barely move, the other half move 1 mm
    pos2 = pos + np.where(np.arange(n)[:, None] % 2 == 0, 1e-4, 1e-3)
    results = {}
    for threads in (1, 2, 3):
        monkeypatch.setattr(narrowphase, "parallel_threads", lambda count=threads: count)
        results[threads] = pair_contacts(pairs, pos2, quat_to_matrix(quat), zero, zero, model, H,
                                         cache)
    assert results[1][0].count > 1000
    for threads in (2, 3):
        for field in FIELDS:
            assert np.array_equal(getattr(results[1][0], field),
                                  getattr(results[threads][0], field)), field
        kept, other = results[1][1], results[threads][1]
        assert np.array_equal(kept.entry, other.entry)
        assert np.array_equal(kept.keys[kept.entry >= 0], other.keys[other.entry >= 0])
        for field in ("pose", "start", "size", "lower_first", "key", "local"):
            assert np.array_equal(getattr(kept, field), getattr(other, field)), field
