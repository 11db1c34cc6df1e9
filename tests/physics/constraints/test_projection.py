"""The general solve of the joint projection (physics/constraints/projection.py): its system
L W Rᵀ built from the rows' compact form against dense matrices, dense and sparse LU giving the
same answer, and the two solving the same chain on the floor alike."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import physics.constraints.projection as projection
from physics.constraints.projection import RowBlock, _gram, _rates, _respond, _solve, _spread
from tests.physics.constraints.test_forest import _inverse_mass
from tests.physics.constraints.test_forest_step import H, _chain


def _dense_rows(rows: RowBlock, n: int) -> np.ndarray:
    """rows as the (K, 6n) matrix they stand for."""
    out = np.zeros((len(rows.first), 6 * n))
    for k, (a, b) in enumerate(zip(rows.first, rows.second)):
        out[k, 6 * a:6 * a + 6] += rows.jac[k, 0:6]
        if b >= 0:
            out[k, 6 * b:6 * b + 6] += rows.jac[k, 6:12]
    return out


def _problem(seed: int, n: int, count: int):
    """count random rows on n bodies (some to the world, never twice on one body), masses and
    symmetric positive inverse inertias."""
    rng = np.random.default_rng(seed)
    first = rng.integers(0, n, count)
    second = rng.integers(-1, n, count)
    second[second == first] = -1
    rows = RowBlock(rng.normal(size=(count, 12)), first, second)
    right = rng.normal(size=(count, 12))
    inv_mass = rng.uniform(0.1, 10.0, n)
    spin = rng.normal(size=(n, 3, 3))
    inv_iw = spin @ spin.transpose(0, 2, 1) + 0.1 * np.eye(3)
    return rows, right, inv_mass, inv_iw


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(1, 8), count=st.integers(1, 20))
def test_the_system_and_its_products_are_those_of_the_dense_matrices(seed, n, count):
    rows, right, inv_mass, inv_iw = _problem(seed, n, count)
    left_dense = _dense_rows(rows, n)
    right_dense = _dense_rows(RowBlock(right, rows.first, rows.second), n)
    weights = _inverse_mass(inv_mass, inv_iw)
    np.testing.assert_allclose(_gram(rows, right, inv_mass, inv_iw),
                               left_dense @ weights @ right_dense.T, rtol=1e-12, atol=1e-12)
    amounts = np.random.default_rng(seed + 1).normal(size=count)
    impulse = _spread(rows, amounts, n)
    np.testing.assert_allclose(impulse.ravel(), left_dense.T @ amounts, rtol=1e-12, atol=1e-12)
    motion = _respond(impulse, inv_mass, inv_iw)
    np.testing.assert_allclose(motion.ravel(), weights @ impulse.ravel(), rtol=1e-12,
                               atol=1e-12)
    np.testing.assert_allclose(_rates(rows, motion), left_dense @ motion.ravel(), rtol=1e-12,
                               atol=1e-12)


def test_dense_and_sparse_solves_agree_and_both_refuse_a_zero_system(monkeypatch):
    rows, _, inv_mass, inv_iw = _problem(3, 6, 18)
    rhs = np.random.default_rng(4).normal(size=18)
    dense = _gram(rows, rows.jac, inv_mass, inv_iw)
    monkeypatch.setattr(projection, "DENSE_SOLVE_ROWS", 0)
    sparse = _gram(rows, rows.jac, inv_mass, inv_iw)
    assert isinstance(dense, np.ndarray) and not isinstance(sparse, np.ndarray)
    np.testing.assert_allclose(sparse.toarray(), dense, rtol=0, atol=1e-13)
    x = _solve(dense, rhs)
    np.testing.assert_allclose(dense @ x, rhs, rtol=0, atol=1e-8)
    np.testing.assert_allclose(_solve(sparse, rhs), x, rtol=1e-9, atol=1e-9)
    for empty in (np.zeros((3, 3)), sparse * 0.0):
        assert _solve(empty, rhs[:empty.shape[0]]) is None


def _landed(monkeypatch, dense_rows: int) -> tuple[np.ndarray, int]:
    """Where an 8-link chain hung low in a box, swung onto its floor, is after 100 steps, solved
    dense up to dense_rows rows, and how many of its steps went through the general solve (its
    links resting on the floor)."""
    monkeypatch.setattr(projection, "DENSE_SOLVE_ROWS", dense_rows)
    general = []
    original = projection._gram
    monkeypatch.setattr(projection, "_gram",
                        lambda *args: general.append(1) or original(*args))
    world = _chain(links=8, container=[3.0, 2.5, 3.0], height=0.3)
    world.advance(H, 100)
    return np.concatenate((world.state.pos, world.state.quat), axis=1), len(general)


def test_the_chain_on_the_floor_moves_alike_solved_dense_or_sparse(monkeypatch):
    (dense, dense_solves), (sparse, sparse_solves) = (_landed(monkeypatch, 10**9),
                                                      _landed(monkeypatch, 0))
    assert dense_solves == sparse_solves > 60  # both took the general solve, as often
    assert np.abs(dense - sparse).max() < 1e-9
