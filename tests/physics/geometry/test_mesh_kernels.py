"""The compiled kernels behind mesh cleaning that the cleaning tests do not reach directly:
the singular values of a point set, which decide whether a mesh is flat, and the centre a mesh
is measured about."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from physics.geometry.mesh_kernels import _triangular_factor, column_means, singular_values


@settings(max_examples=40, deadline=None)
@given(st.integers(4, 400), st.sampled_from([3, 2, 1]), st.floats(1e-3, 1e3),
       st.integers(0, 2**32 - 1))
def test_singular_values_are_numpy_s_svd_to_rounding(count, rank, size, seed):
    """Solid, flat and straight point sets, centred as the loader centres them: the values of
    the triangular factor are the SVD's to 1e-13 of the largest, so rank decisions agree."""
    rng = np.random.default_rng(seed)
    axes = np.linalg.qr(rng.normal(size=(3, 3)))[0]
    points = size * rng.normal(size=(count, rank)) @ axes[:rank]
    points = points - points.mean(axis=0)
    ours, theirs = singular_values(points), np.linalg.svd(points, compute_uv=False)
    assert np.all(np.diff(ours) <= 0)
    np.testing.assert_allclose(ours, theirs, rtol=0, atol=1e-13 * theirs[0])
    assert np.sum(ours > 1e-9 * ours[0]) == np.sum(theirs > 1e-9 * theirs[0]) == rank


def test_singular_values_of_a_scan_sized_set_and_a_point():
    rng = np.random.default_rng(7)
    points = rng.normal(size=(655_362, 3)) * [0.1, 0.2, 0.05]
    np.testing.assert_allclose(singular_values(points),
                               np.linalg.svd(points, compute_uv=False), rtol=1e-13)
    np.testing.assert_array_equal(singular_values(np.zeros((5, 3))), np.zeros(3))


@pytest.mark.parametrize("kernel", [_triangular_factor])
def test_the_factorisation_releases_the_gil(kernel):
    """numpy's SVD holds the GIL for the whole factorisation (25–150 ms for a scan); this runs
    as compiled code that releases it, so the render thread draws meanwhile."""
    assert kernel.targetoptions.get("nogil") is True


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 20_000), st.sampled_from([3, 2]), st.floats(-8, 8), st.floats(-3, 6),
       st.integers(0, 2**32 - 1))
def test_column_means_are_numpy_s_to_the_last_bit(count, columns, size, offset, seed):
    """Spreads from 1e-8 to 1e8 around offsets up to 1e6 (the sums lose digits), rounded to
    a grid or not: the same float64 values as ``mean(axis=0)``, so what is measured about the
    centre (hull candidates, piece volumes, flatness) does not change."""
    rng = np.random.default_rng(seed)
    points = rng.normal(size=(count, columns)) * 10.0 ** size + rng.normal(size=columns) \
        * 10.0 ** offset
    for a in (points, np.round(points, 3)):
        assert np.array_equal(column_means(a), a.mean(axis=0))
