"""The tree factorisation against dense linear algebra on a branched tree of every joint kind:
blocks of 1, 3, 5 and 6 rows, so that the elimination's constant-size cases (a body's 6 under a
ball joint's 3 and back) and its general one all run."""

import numpy as np

from physics.constraints.forest import no_factors
from physics.constraints.joint import WORLD, JointDef
from physics.constraints.projection import all_rows
from physics.constraints.tree import fits, tree_factor, tree_resolve
from physics.dynamics.integrator import world_inverse_inertia
from physics.geometry.rotation import quat_to_matrix
from physics.model import BodyDef, WorldDef
from physics.world import World

REGULAR = 1e-12


def _tree():
    """Seven boxes: a ball joint to the world at the root, below it a ball chain of two, and
    hinge, fixed, prismatic and rigid distance joints branching off; every pose nudged off the
    joints. Returns (joints, pos, quat, inv_mass, inv_iw)."""
    world = World(WorldDef(container_size=None))
    half = np.array([0.05, 0.02, 0.01])
    hull = np.array([[x, y, z] for x in (-1, 1) for y in (-1, 1) for z in (-1, 1)]) * half
    ids = [world.add_body(BodyDef(mass=0.1 + 0.02 * k, principal_moments=[2e-5, 5e-5, 9e-5],
                                  hull=hull, position=[0.1 * k, -0.05 * (k % 3), 0.0]))
           for k in range(7)]
    x, z = [1.0, 0.0, 0.0], [0.0, 0.0, 1.0]
    for kind, first, second, axis in (("ball", ids[0], WORLD, None), ("ball", ids[1], ids[0], None),
                                      ("ball", ids[2], ids[1], None),
                                      ("hinge", ids[3], ids[0], z), ("fixed", ids[4], ids[3], None),
                                      ("prismatic", ids[5], ids[1], x),
                                      ("distance", ids[6], ids[2], None)):
        anchor = world.state.pos[world.index_of(first)] - [0.05, 0.0, 0.0]
        world.add_joint(JointDef(kind, first, second, anchor=anchor, axis=axis))
    rng = np.random.default_rng(11)
    pos = world.state.pos + rng.normal(scale=1e-3, size=world.state.pos.shape)
    quat = world.state.quat + rng.normal(scale=1e-2, size=world.state.quat.shape)
    quat /= np.linalg.norm(quat, axis=1, keepdims=True)
    m = world.model
    return (world.joints.arrays(m.ids), pos, quat, m.inv_mass.copy(),
            world_inverse_inertia(quat_to_matrix(quat), m.inv_inertia))


def _dense(joints, jac, nblock, n):
    """The equality rows (R, 6n) as one dense matrix, and each row's (joint, row)."""
    rows, which = [], []
    for j in range(len(nblock)):
        for r in range(nblock[j]):
            row = np.zeros(6 * n)
            for side, body in enumerate((joints.first[j], joints.second[j])):
                if body >= 0:
                    row[6 * body:6 * body + 6] = jac[j, r, 6 * side:6 * side + 6]
            rows.append(row)
            which.append((j, r))
    return np.array(rows), which


def test_the_tree_solve_of_a_branched_tree_of_every_joint_kind_is_the_dense_solve():
    joints, pos, quat, inv_mass, inv_iw = _tree()
    n, m = len(pos), len(joints.kind)
    jac, _, _, nblock = all_rows(joints, pos, quat)
    assert sorted(set(nblock)) == [1, 3, 5, 6]
    present, which = _dense(joints, jac, nblock, n)
    weights = np.zeros((6 * n, 6 * n))
    for i in range(n):
        weights[6 * i:6 * i + 3, 6 * i:6 * i + 3] = inv_mass[i] * np.eye(3)
        weights[6 * i + 3:6 * i + 6, 6 * i + 3:6 * i + 6] = inv_iw[i]
    rhs = np.random.default_rng(5).normal(size=(m, 9))
    b = np.array([rhs[j, r] for j, r in which])
    lam = np.linalg.solve(present @ weights @ present.T + REGULAR * np.eye(len(b)), b)
    factored, factors = tree_factor(joints.first, joints.second, nblock, jac, jac, inv_mass,
                                    inv_iw, REGULAR, no_factors())
    assert factored
    x, y = np.full((m, 6), np.nan), np.full((n, 6), np.nan)
    tree_resolve(factors, rhs, x, y)
    np.testing.assert_allclose([x[j, r] for j, r in which], lam, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(y.ravel(), weights @ present.T @ lam, rtol=1e-9, atol=1e-12)
    for j in range(m):  # the rows a joint does not have stay zero
        assert not x[j, nblock[j]:].any()


def _solved(factors, m, n):
    """The factors' (x, y) for a fixed right-hand side (their blocks' unused corners are
    never read)."""
    x, y = np.zeros((m, 6)), np.zeros((n, 6))
    tree_resolve(factors, np.random.default_rng(9).normal(size=(m, 9)), x, y)
    return x, y


def test_factors_made_before_lend_their_tree_only_to_rows_of_the_same_forest():
    joints, pos, quat, inv_mass, inv_iw = _tree()
    n, m = len(pos), len(joints.kind)
    jac, _, _, nblock = all_rows(joints, pos, quat)
    args = (joints.first, joints.second, nblock, jac, jac, inv_mass, inv_iw, REGULAR)
    fresh = tree_factor(*args, no_factors())[1]
    assert fits(fresh, joints.first, joints.second, nblock, inv_mass)
    again = tree_factor(*args, fresh)[1]
    assert again[0] is fresh[0] and again[1] is fresh[1]  # the tree lent, not found again
    for made, kept in zip(_solved(again, m, n), _solved(fresh, m, n)):
        np.testing.assert_array_equal(made, kept)
    # another forest: a joint gone slack, a body held still; each finds its own tree again
    slack = nblock.copy()
    slack[-1] = 0
    held = inv_mass.copy()
    held[1] = 0.0  # the ball chain's middle link: the joints below it hang from it as a root
    for rows, masses in ((slack, inv_mass), (nblock, held)):
        assert not fits(fresh, joints.first, joints.second, rows, masses)
        other = (joints.first, joints.second, rows, jac, jac, masses, inv_iw, REGULAR)
        lent, found = tree_factor(*other, fresh)[1], tree_factor(*other, no_factors())[1]
        np.testing.assert_array_equal(lent[0], found[0])
        np.testing.assert_array_equal(lent[1], found[1])
        for made, kept in zip(_solved(lent, m, n), _solved(found, m, n)):
            np.testing.assert_array_equal(made, kept)
