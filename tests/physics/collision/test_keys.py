"""Contact keys (physics/collision/keys.py): one distinct key per feature, walls ≥ 0, pairs < 0."""

import numpy as np

from physics.collision.keys import (
    body_pair_key,
    clip_tag,
    edge_feature,
    face_feature,
    pair_key,
    piece_pair_keys,
    tag_vertex,
    wall_key,
)
from physics.geometry.polytope import polytope
from physics.settings import MAX_HULL_VERTICES


def _sphere_points(n):
    """n points spread over the unit sphere (a Fibonacci lattice): all on their hull."""
    i = np.arange(n) + 0.5
    polar, turn = np.arccos(1.0 - 2.0 * i / n), np.pi * (1.0 + 5.0 ** 0.5) * i
    return np.column_stack((np.sin(polar) * np.cos(turn), np.cos(polar),
                            np.sin(polar) * np.sin(turn)))


def test_every_face_of_a_hull_of_124_faces_has_its_own_key():
    hull = polytope(_sphere_points(MAX_HULL_VERTICES))
    faces = len(hull.face_normal)
    assert faces == 2 * MAX_HULL_VERTICES - 4 == 124  # triangulated: the most a hull can have
    tag = clip_tag(2, 5)
    keys = {pair_key(7, 9, face_feature(False, f, tag)) for f in range(faces)}
    assert len(keys) == faces
    # faces 3 and 67 got the same key when the face was packed as local_face & 63
    assert (3 & 63) == (67 & 63)
    assert pair_key(7, 9, face_feature(False, 3, tag)) != pair_key(
        7, 9, face_feature(False, 67, tag))


def test_features_within_the_bounds_are_all_distinct():
    """Every feature a pair can have (faces < 128, edges < 256, clip tags < 65 · 64, both
    reference sides) is a different number, below 2²²."""
    face, side, vertex = np.meshgrid(np.arange(128), np.arange(-1, 64), np.arange(64),
                                     indexing="ij")
    tags = clip_tag.py_func(side, vertex).ravel()
    assert np.array_equal(tag_vertex.py_func(tags), vertex.ravel())
    faces = np.repeat(np.arange(128), len(tags) // 128)
    edge_a, edge_b = np.meshgrid(np.arange(256), np.arange(256), indexing="ij")
    features = np.concatenate((
        [0],  # a sphere's contact
        edge_feature.py_func(edge_a.ravel(), edge_b.ravel()),
        face_feature.py_func(False, faces, tags),
        face_feature.py_func(True, faces, tags),
    ))
    assert len(np.unique(features)) == len(features)
    assert features.min() >= 0 and features.max() < 1 << 22


def test_pair_keys_are_negative_wall_keys_not_and_ids_order_matters():
    big = (1 << 20) - 1
    assert pair_key(big, big, (1 << 22) - 1) < 0 and pair_key(0, 0, 0) == -1
    assert pair_key(3, 4, 0) != pair_key(4, 3, 0)
    assert wall_key(0, 0, 0) == 0 and wall_key(big, 15, 63) > 0
    walls = {wall_key(i, w, v) for i in range(3) for w in range(16) for v in range(64)}
    assert len(walls) == 3 * 16 * 64
    assert body_pair_key(3, 4) == body_pair_key(4, 3) != body_pair_key(3, 5)


def test_piece_pair_keys_are_negative_and_below_every_body_pair_key():
    big = (1 << 20) - 1
    extremes = np.array([pair_key(0, 0, 0), pair_key(big, big, (1 << 22) - 1),
                         pair_key(5, 7, face_feature(True, 3, clip_tag(2, 9)))])
    pieces = piece_pair_keys(extremes)
    assert pieces.max() < 0 and pieces.max() < extremes.min()
    assert len(set(pieces.tolist())) == 3  # distinct as the pair keys they came from
