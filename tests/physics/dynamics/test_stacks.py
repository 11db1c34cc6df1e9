"""The exact normal solve of islands of unequal masses: which contacts it takes, and its
complementarity solution against enumeration of every active set."""

import itertools

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from physics.collision.contact import Contacts, plane_tangents
from physics.dynamics.stacks import (
    STACK_MASS_RATIO,
    STACK_MAX_CONTACTS,
    _lawson_hanson,
    stack_islands,
)


def contacts_between(pairs) -> Contacts:
    """One contact per (body, other) in pairs (other −1: a wall), at the origin, normal +y."""
    body = np.array([p[0] for p in pairs], dtype=np.int64)
    other = np.array([p[1] for p in pairs], dtype=np.int64)
    k = len(pairs)
    normal = np.tile([0.0, 1.0, 0.0], (k, 1))
    t1, t2 = plane_tangents(normal)
    return Contacts(body, np.arange(k), np.zeros((k, 3)), normal, np.zeros(k), t1, t2, other)


def test_only_islands_of_unequal_masses_are_chosen_with_all_their_contacts():
    # island {0, 1}: a light box on the floor under one ten times heavier; island {2, 3}:
    # equal masses; body 4 asleep (inverse mass 0) under body 3 links nothing
    inv_mass = np.array([1.0, 0.1, 1.0, 1.0, 0.0])
    contacts = contacts_between([(0, -1), (0, -1), (1, 0), (1, 0), (2, -1), (3, 2), (3, 4)])
    chosen, starts = stack_islands(contacts, inv_mass)
    assert chosen.tolist() == [0, 1, 2, 3]
    assert starts.tolist() == [0, 4]


def test_a_sleeping_body_does_not_join_two_islands_and_each_is_solved_alone():
    # 0 and 2 are each much lighter than the sleeping 1 and the heavy 3 and 4 they carry
    inv_mass = np.array([1.0, 0.0, 1.0, 0.01, 0.01])
    contacts = contacts_between([(0, 1), (2, 1), (3, 0), (4, 2)])
    chosen, starts = stack_islands(contacts, inv_mass)
    assert sorted(chosen.tolist()) == [0, 1, 2, 3]
    assert starts.tolist() == [0, 2, 4]
    islands = [set(chosen[starts[i]:starts[i + 1]].tolist()) for i in range(2)]
    assert sorted(map(sorted, islands)) == [[0, 2], [1, 3]]


def test_the_mass_ratio_and_the_island_size_bound_the_choice():
    ratio = STACK_MASS_RATIO
    even = np.array([1.0, 1.0 / (0.99 * ratio)])
    assert stack_islands(contacts_between([(1, 0)]), even)[0].size == 0
    uneven = np.array([1.0, 1.0 / (1.01 * ratio)])
    assert stack_islands(contacts_between([(1, 0)]), uneven)[0].tolist() == [0]
    crowded = contacts_between([(1, 0)] + [(0, -1)] * STACK_MAX_CONTACTS)
    assert stack_islands(crowded, uneven)[0].size == 0


def enumerate_lcp(a_matrix, b):
    """The solution of λ ≥ 0, w = A λ + b ≥ 0, λ·w = 0 by trying every active set."""
    m = len(b)
    for size in range(m + 1):
        for active in itertools.combinations(range(m), size):
            lam = np.zeros(m)
            if active:
                rows = list(active)
                lam[rows] = np.linalg.solve(a_matrix[np.ix_(rows, rows)], -b[rows])
            w = a_matrix @ lam + b
            if lam.min() >= -1e-12 and w.min() >= -1e-9:
                return lam
    raise AssertionError("no solution: A is not positive definite")


@given(st.integers(1, 6), st.integers(0, 2**32 - 1), st.floats(0.0, 3.0))
def test_lawson_hanson_finds_the_complementarity_solution(m, seed, log_ratio):
    """Positive definite A with eigenvalues spread over 10^log_ratio (mass ratios), any b, any
    feasible start: the same λ as enumeration."""
    rng = np.random.default_rng(seed)
    basis, _ = np.linalg.qr(rng.normal(size=(m, m)))
    a_matrix = basis @ np.diag(10.0 ** rng.uniform(0.0, log_ratio, m)) @ basis.T
    b = rng.normal(size=m)
    lam = np.where(rng.random(m) < 0.5, rng.uniform(0.0, 2.0, m), 0.0)
    assert _lawson_hanson(a_matrix, b, lam, 1e-12, 1e9)
    np.testing.assert_allclose(lam, enumerate_lcp(a_matrix, b), rtol=1e-7, atol=1e-9)


@given(st.integers(2, 8), st.integers(0, 2**32 - 1))
def test_a_search_cut_short_is_feasible_and_lowers_the_energy(m, seed):
    """Whatever the budget, λ ≥ 0 and ½ λᵀAλ + bᵀλ (the kinetic energy the normal
    impulses leave, up to a constant) is no higher than at the start."""
    rng = np.random.default_rng(seed)
    half = rng.normal(size=(m, m))
    a_matrix = half @ half.T + 1e-3 * np.eye(m)
    b = rng.normal(size=m)
    start = np.where(rng.random(m) < 0.5, rng.uniform(0.0, 2.0, m), 0.0)

    def energy(lam):
        return 0.5 * lam @ a_matrix @ lam + b @ lam

    previous = energy(start)
    for budget in range(1, 4 * m**3, m**2):  # from one solve to the whole search
        lam = start.copy()
        _lawson_hanson(a_matrix, b, lam, 1e-12, float(budget))
        assert lam.min() >= 0.0
        assert energy(lam) <= previous + 1e-12 * (1.0 + abs(previous))
        previous = energy(lam)


def test_a_failed_solve_leaves_the_start_and_says_so():
    """A non-finite matrix (a body gone bad): the start is kept, not replaced by NaN."""
    a_matrix = np.array([[np.nan, 1.0], [1.0, 1.0]])
    lam = np.array([0.5, 0.0])
    assert not _lawson_hanson(a_matrix, np.array([-1.0, -1.0]), lam, 1e-12, 1e9)
    assert lam.tolist() == [0.5, 0.0]


def test_four_coplanar_points_share_the_load_evenly():
    """A box on a face of four points: A is singular (three constrained motions, four rows);
    the load goes to the four corners equally, the least-norm split."""
    corners = np.array([[x, -0.1, z] for x in (-0.1, 0.1) for z in (-0.1, 0.1)])
    inv_iw = np.eye(3) / (2.0 * 0.2**2 / 12.0 * 2.0)  # 2 kg cube of 0.2 m
    normal = np.array([0.0, 1.0, 0.0])
    arms = np.cross(corners, normal)
    a_matrix = 0.5 + arms @ inv_iw @ arms.T
    lam = np.zeros(4)
    assert _lawson_hanson(a_matrix, np.full(4, -0.04), lam, 1e-12, 1e9)
    np.testing.assert_allclose(lam, 0.02, rtol=1e-8)
