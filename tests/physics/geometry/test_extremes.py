"""The grid search for the points farthest along many directions returns exactly what the full
product and argmax return, ties and near-ties between symmetric points included."""

import numpy as np
import pytest
import trimesh
from hypothesis import given, settings
from hypothesis import strategies as st

from physics.geometry.extremes import extreme_points
from physics.geometry.meshes import _directions, _seed_directions


def brute_force(points, directions):
    return np.unique(np.argmax(directions @ points.T, axis=1))


def point_sets():
    rng = np.random.default_rng(1)
    cylinder = np.asarray(trimesh.creation.cylinder(0.5, 1.0, sections=512).subdivide().vertices)
    return {
        "icosphere": np.asarray(trimesh.creation.icosphere(6).vertices),
        "subdivided box (exact ties)": np.asarray(
            trimesh.creation.box((1, 2, 3)).subdivide().subdivide().subdivide().vertices),
        "cylinder (rims tie)": cylinder,
        "flat normal cloud": rng.normal(size=(50_000, 3)) * [1.0, 1e-3, 1.0],
        "far from the origin": rng.normal(size=(20_000, 3)) + [1e4, -3e3, 5.0],
    }


POINTS = point_sets()


@pytest.mark.parametrize("dim", [3, 2])
@pytest.mark.parametrize("name", list(POINTS))
def test_the_same_points_as_the_full_product(name, dim):
    points = POINTS[name] - POINTS[name].mean(axis=0)
    points = np.ascontiguousarray(points[:, :dim])  # 2D: the cylinder's rims coincide
    directions = np.vstack((_seed_directions(dim), _directions(dim, 512)))
    np.testing.assert_array_equal(extreme_points(points, directions),
                                  brute_force(points, directions))


@settings(max_examples=30, deadline=None)
@given(st.integers(1, 3000), st.integers(0, 2**32 - 1), st.sampled_from([2, 3]),
       st.booleans())
def test_random_clouds_with_repeated_points(count, seed, dim, grid):
    """Random points, some repeated and some snapped to a coarse grid (many exact ties)."""
    rng = np.random.default_rng(seed)
    points = rng.normal(size=(count, dim))
    if grid:
        points = np.round(points * 2) / 2
    points = np.vstack([points, points[rng.integers(0, count, size=count // 3)]])
    directions = np.vstack((_seed_directions(dim), rng.normal(size=(64, dim))))
    np.testing.assert_array_equal(extreme_points(points, directions),
                                  brute_force(points, directions))
