"""Islands: connected components of the contact graph, walls linking nothing."""

import numpy as np

from physics.dynamics.islands import island_labels


def test_chains_and_walls():
    labels = island_labels(7, np.array([5, 1, 2, 4, 6]), np.array([2, 3, 1, -1, -1]))
    assert labels.tolist() == [0, 1, 1, 1, 4, 1, 6]


def test_matches_scipy_connected_components_on_a_random_graph():
    from scipy.sparse import coo_matrix
    from scipy.sparse.csgraph import connected_components

    rng = np.random.default_rng(3)
    n = 300
    first, second = rng.integers(0, n, 250), rng.integers(0, n, 250)
    labels = island_labels(n, first, second)
    _, expected = connected_components(coo_matrix((np.ones(250), (first, second)), shape=(n, n)),
                                       directed=False)
    for a in range(n):
        assert labels[a] <= a
        same = expected == expected[a]
        assert np.all(labels[same] == labels[a]) and np.all(labels[~same] != labels[a])
