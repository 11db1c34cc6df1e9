"""Broad phase: exactly the pairs whose grown bounding spheres overlap, at any scale."""

import numpy as np

from physics.collision.broadphase import candidate_pairs, reach


def brute_force(pos, radius):
    n = len(pos)
    return {(i, j) for i in range(n) for j in range(i + 1, n)
            if np.linalg.norm(pos[i] - pos[j]) <= radius[i] + radius[j]}


def test_pairs_match_brute_force_on_random_clouds():
    rng = np.random.default_rng(5)
    for n in (0, 1, 2, 50, 400):
        pos = rng.uniform(-2, 2, (n, 3))
        radius = rng.uniform(0.01, 0.3, n)
        pairs = candidate_pairs(pos, radius)
        assert {tuple(p) for p in pairs.tolist()} == brute_force(pos, radius)
        assert np.all(pairs[:, 0] < pairs[:, 1])


def test_bodies_spread_over_more_strips_than_bodies_give_the_same_pairs_in_the_same_order():
    """The strips are counted into order unless there are more of them than bodies (bodies far
    apart along z), when they are sorted instead: both give one order. A body far above a cloud
    has a strip of its own beyond the cloud's and no partner, so the cloud's pairs, found with
    it by the sort and without it by the count, are the same pairs in the same order."""
    rng = np.random.default_rng(6)
    pos = rng.uniform(-2, 2, (300, 3))
    radius = rng.uniform(0.01, 0.3, 300)
    alone = candidate_pairs(pos, radius)
    far = candidate_pairs(np.vstack([pos, [0.0, 0.0, 1e4]]), np.append(radius, 0.1))
    assert 2 * radius.max() * 301 < 1e4  # more strips than bodies: the sorted path
    assert len(alone) > 100 and np.array_equal(alone, far)
    assert {tuple(p) for p in far.tolist()} == brute_force(pos, radius)


def test_a_body_gone_non_finite_is_swept_apart_from_the_others_whose_pairs_stay():
    """A body whose position went non-finite in a batch (removed after it) has no strip to
    count: the strips are sorted then, and the other bodies keep exactly their pairs."""
    rng = np.random.default_rng(6)
    pos = rng.uniform(-2, 2, (300, 3))
    radius = rng.uniform(0.01, 0.3, 300)
    expected = {(i, j) for i, j in brute_force(pos, radius) if 7 not in (i, j)}
    for bad in (np.nan, np.inf):
        broken = pos.copy()
        broken[7, 2] = bad
        assert {tuple(p) for p in candidate_pairs(broken, radius).tolist()} == expected


def test_dense_cluster_overflows_the_first_buffer_and_still_finds_every_pair():
    pos = np.zeros((60, 3)) + np.arange(60)[:, None] * 1e-3
    pairs = candidate_pairs(pos, np.full(60, 0.5))
    assert len(pairs) == 60 * 59 // 2


def test_reach_grows_with_speed_and_spin():
    bound = np.array([0.1, 0.1, 0.1])
    vel = np.array([[0, 0, 0], [10.0, 0, 0], [0, 0, 0]])
    omega = np.array([[0, 0, 0], [0, 0, 0], [0, 50.0, 0]])
    r = reach(vel, omega, bound, 1 / 240)
    assert r[0] > 0.1 and np.isclose(r[1] - r[0], 1.5 * 10 / 240)
    assert np.isclose(r[2] - r[0], 1.5 * 0.1 * 50 / 240)


def test_large_scenes_swept_in_chunks_give_the_same_pairs_in_the_same_order(monkeypatch):
    """The sweep is shared out between threads in chunks of bodies; the pairs found, and their
    order (which orders the contacts and so the solver's visits), must not depend on how many."""
    from physics.collision import broadphase

    rng = np.random.default_rng(8)
    pos = rng.uniform([-2, 0, -2], [2, 1, 2], (1500, 3))
    radius = rng.uniform(0.05, 0.2, 1500)
    found = {}
    for threads in (1, 2, 5):
        monkeypatch.setattr(broadphase, "parallel_threads", lambda count=threads: count)
        found[threads] = candidate_pairs(pos, radius)
    assert len(found[1]) > 1500
    assert np.array_equal(found[1], found[2]) and np.array_equal(found[1], found[5])
    some = rng.choice(len(pos), 300, replace=False)  # and they are the right pairs
    chosen = set(some.tolist())
    assert ({tuple(p) for p in found[5].tolist() if p[0] in chosen and p[1] in chosen}
            == {(int(some[i]), int(some[j])) if some[i] < some[j] else (int(some[j]), int(some[i]))
                for i, j in brute_force(pos[some], radius[some])})


def test_kept_pairs_are_exactly_a_fresh_sweeps_pairs_step_after_step():
    """Bodies drifting slowly, a few fast ones, reach radii growing and shrinking, now and then
    a body teleported or many moving at once: at every step the pairs from the kept fat spheres
    are the set a fresh sweep finds."""
    from physics.collision.broadphase import MAX_REPLACED, SweptPairs, pairs_within_reach

    rng = np.random.default_rng(12)
    n = 600
    ids = np.arange(n) * 3 + 7
    pos = rng.uniform([-2, 0, -2], [2, 1.5, 2], (n, 3))
    vel = rng.normal(0, 0.002, (n, 3))
    vel[:5] *= 100  # a few fast bodies leave their fat spheres every few steps
    radius = rng.uniform(0.08, 0.2, n)
    kept = SweptPairs()
    refreshed = 0
    for step in range(150):
        pos += vel
        radius = np.clip(radius + rng.normal(0, 0.002, n), 0.05, 0.25)
        if step % 40 == 17:
            pos[rng.integers(n)] = rng.uniform([-2, 0, -2], [2, 1.5, 2])  # teleported
        if step == 90:
            pos += rng.normal(0, 0.05, (n, 3))  # everything jumps: a fresh sweep
        before = kept
        pairs, kept = pairs_within_reach(kept, ids, pos, radius)
        refreshed += kept is not before and len(before.ids) == n
        assert {tuple(p) for p in pairs.tolist()} == {
            tuple(p) for p in candidate_pairs(pos, radius).tolist()}
        assert np.all(pairs[:, 0] < pairs[:, 1])
        assert len({tuple(p) for p in pairs.tolist()}) == len(pairs)  # each pair once
    assert refreshed > 10 and MAX_REPLACED < n


def test_kept_pairs_start_over_when_bodies_come_or_go():
    from physics.collision.broadphase import SweptPairs, pairs_within_reach

    rng = np.random.default_rng(13)
    pos = rng.uniform(-1, 1, (100, 3))
    radius = np.full(100, 0.2)
    _, kept = pairs_within_reach(SweptPairs(), np.arange(100), pos, radius)
    # row 50 deleted: the rows after it shift, and the kept pairs name rows
    ids, pos, radius = np.delete(np.arange(100), 50), np.delete(pos, 50, 0), radius[:99]
    pairs, kept = pairs_within_reach(kept, ids, pos, radius)
    assert {tuple(p) for p in pairs.tolist()} == {
        tuple(p) for p in candidate_pairs(pos, radius).tolist()}
    assert np.array_equal(kept.ids, ids)
