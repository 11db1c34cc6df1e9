"""Separating axes kept between steps: a hull pair found apart tries the axis that showed it
first the next step, and the contacts are those of the full separating-axis test every step."""

import numpy as np

from physics.collision.axes import EDGES, FACE_OF_FIRST, FACE_OF_SECOND, NO_AXIS, kept_axis
from physics.collision.manifolds import ManifoldCache
from physics.collision.narrowphase import (
    _MAX_EDGES,
    _MAX_FACES,
    _edge_pair_separation,
    _edge_query,
    _kept_apart,
    body_contacts,
    pair_contacts,
    world_hulls,
)
from physics.geometry.meshes import builtin_shape
from physics.geometry.rotation import quat_from_axis_angle, quat_mul, quat_normalize, quat_to_matrix
from physics.held import StepRecords
from physics.model import BodyDef, Model, WorldDef
from physics.settings import SPECULATIVE_MARGIN
from physics.world import World
from tests.physics.bodies import round_hull

H = 1.0 / 240.0
FIELDS = ("body", "other", "key", "point", "normal", "separation")


def hull_model(*hulls, ids=None) -> Model:
    model = Model(WorldDef())
    for body_id, hull in zip(ids or range(len(hulls)), hulls):
        model.append(body_id, BodyDef(mass=1.0, principal_moments=[0.01, 0.01, 0.01],
                                      hull=hull))
    return model


def still_apart(a, b, ids, pos, rotm, hulls, cache):
    """Whether the axis the ``ManifoldCache`` cache kept for rows a and b still keeps their
    world ``HullSet`` hulls SPECULATIVE_MARGIN apart (``_kept_apart``, given the cache's row as
    ``_pairs_in`` gives it); False without a kept axis."""
    slot = kept_axis(a, b, ids, cache.axis_keys, cache.axes)
    if slot < 0:
        return False
    return _kept_apart(a, b, ids, pos, rotm, hulls.hull_points, hulls.hull_start,
                       hulls.face_normal, hulls.face_offset, hulls.face_start, hulls.edge,
                       hulls.edge_faces, hulls.edge_start, cache.axes[slot], SPECULATIVE_MARGIN,
                       np.empty((1, 3), dtype=np.int64), 0)


def assert_same(found, fresh):
    for field in FIELDS:
        assert np.array_equal(getattr(found, field), getattr(fresh, field)), field


def test_a_kept_axis_changes_no_contact_while_pairs_approach_touch_and_part():
    """Random hull pairs on random paths through each other, turning (apart, speculative,
    touching, deep, apart again): every step the contacts with the kept axes equal those of a
    fresh test, and the kept axis decides most steps of a pair that it kept apart the step
    before."""
    rng = np.random.default_rng(5)
    shapes = [round_hull(seed=1), round_hull(24, seed=2),
              builtin_shape("cylinder", [0.1, 0.3]).hull, builtin_shape("t_handle", [0.8]).hull]
    decided = had_axis = touching = 0
    kinds = set()
    zero = np.zeros((2, 3))
    for _ in range(12):
        model = hull_model(shapes[rng.integers(4)], shapes[rng.integers(4)])
        pairs = np.array([[0, 1]] if rng.random() < 0.5 else [[1, 0]], dtype=np.int64)
        start = rng.normal(size=3)
        start *= 0.8 / np.linalg.norm(start)
        end = -start + rng.uniform(-0.1, 0.1, 3)
        axis = rng.normal(size=3)
        axis /= np.linalg.norm(axis)
        quat = quat_normalize(rng.normal(size=(2, 4)))
        cache = ManifoldCache()
        for k in range(300):
            pos = np.array([np.zeros(3), start + (end - start) * k / 300])
            turned = quat.copy()
            turned[1] = quat_mul(quat_from_axis_angle(axis, 0.01 * k), quat[1])
            rotm = quat_to_matrix(turned)
            hulls = world_hulls(pos, rotm, model, np.arange(2))
            had_axis += np.any(cache.axes[:, 0] != NO_AXIS)
            kept = still_apart(pairs[0, 0], pairs[0, 1], model.ids, pos, rotm, hulls, cache)
            found, cache = pair_contacts(pairs, pos, rotm, zero, zero, model, H, cache)
            kinds |= set(cache.axes[:, 0].tolist())
            assert_same(found, body_contacts(pairs, pos, rotm, zero, zero, model, H))
            touching += found.count > 0
            assert not (kept and found.count)
            decided += kept
    assert touching > 300 and had_axis > 500
    assert decided > 0.8 * had_axis
    assert {FACE_OF_FIRST, FACE_OF_SECOND, EDGES} <= kinds


def kept_apart_by_a_face():
    """Two round hulls a few centimetres apart along a face of the first: (model, pairs, rotm,
    zero velocities, the direction from the first to the second, the cache keeping that face)."""
    model = hull_model(round_hull(seed=3), round_hull(seed=4))
    pairs = np.array([[0, 1]], dtype=np.int64)
    rotm = quat_to_matrix(np.array([[1.0, 0, 0, 0], [1.0, 0, 0, 0]]))
    zero = np.zeros((2, 3))
    along = np.array([0.7, 0.5, 0.4]) / np.linalg.norm([0.7, 0.5, 0.4])
    apart = np.array([np.zeros(3), 0.33 * along])
    nothing, cache = pair_contacts(pairs, apart, rotm, zero, zero, model, H, ManifoldCache())
    assert nothing.count == 0
    return model, pairs, rotm, zero, along, cache


def test_the_kept_axis_is_not_trusted_once_the_pair_has_moved_past_it():
    """The second hull then moves into the first, along the line of centres and across it:
    the kept face no longer separates them and the contacts are the fresh test's, the same
    step."""
    model, pairs, rotm, zero, along, cache = kept_apart_by_a_face()
    kept = cache.axes[cache.axes[:, 0] != NO_AXIS]
    assert len(kept) == 1 and kept[0, 0] == FACE_OF_FIRST
    for moved in (0.31 * along, 0.25 * along, 0.25 * along + [0.0, 0.05, -0.05]):
        pos = np.array([np.zeros(3), moved])
        found, _ = pair_contacts(pairs, pos, rotm, zero, zero, model, H, cache)
        fresh = body_contacts(pairs, pos, rotm, zero, zero, model, H)
        assert found.count > 0
        assert_same(found, fresh)


def test_a_kept_axis_naming_features_a_hull_no_longer_has_is_ignored():
    """The ids of a pair kept apart by a face past the fourth now belong to two tetrahedra
    (a body's pieces replaced): the axis is ignored and the touching pair gets its contacts."""
    _, pairs, rotm, zero, _, cache = kept_apart_by_a_face()
    kept = cache.axes[cache.axes[:, 0] != NO_AXIS]
    assert len(kept) == 1 and kept[0, 1] >= 4
    tetra = np.array([[0.0, 0.3, 0.0], [0.3, -0.1, 0.0], [-0.15, -0.1, 0.26],
                      [-0.15, -0.1, -0.26]])
    tetra_model = hull_model(tetra, -tetra)
    pos = np.array([[0.0, 0.0, 0.0], [0.0, 0.55, 0.0]])  # tip into tip, 5 cm
    found, _ = pair_contacts(pairs, pos, rotm, zero, zero, tetra_model, H, cache)
    fresh = body_contacts(pairs, pos, rotm, zero, zero, tetra_model, H)
    assert found.count > 0
    assert_same(found, fresh)


def test_an_edge_pair_is_measured_as_the_edge_query_measures_it():
    """The separation along a kept edge pair is the edge query's, bit for bit, where the edges
    form a face of the Minkowski difference; the best pair of the full query always does."""
    rng = np.random.default_rng(8)
    shapes = [builtin_shape(kind).hull for kind in ("cylinder", "t_handle")] + [round_hull()]
    checked = 0
    for _ in range(200):
        model = hull_model(shapes[rng.integers(3)], shapes[rng.integers(3)])
        direction = rng.normal(size=3)
        pos = np.array([np.zeros(3), direction / np.linalg.norm(direction)
                        * rng.uniform(0.3, 1.2) * model.bound_radius.sum()])
        rotm = quat_to_matrix(quat_normalize(rng.normal(size=(2, 4))))
        hulls = world_hulls(pos, rotm, model, np.arange(2))
        axis = np.empty(3)
        best, ea, eb = _edge_query(0, 1, pos, rotm, hulls, -np.inf, -np.inf,
                                   np.empty((10, _MAX_EDGES)), np.empty(_MAX_EDGES, np.int64),
                                   np.empty((2, _MAX_FACES, 3)), axis)
        if ea < 0:
            continue
        checked += 1
        assert _edge_pair_separation(ea, eb, 0, 1, pos, rotm, hulls.hull_points,
                                     hulls.hull_start, hulls.face_normal, hulls.edge,
                                     hulls.edge_faces, hulls.face_start) == best
    assert checked > 150


def cross_pieces() -> tuple[np.ndarray, ...]:
    """Two crossed bars of 24-sided prisms (not boxes: the general separating-axis test)."""
    bar = builtin_shape("cylinder", [0.05, 0.4]).hull[::2]
    along_x = bar[:, [1, 0, 2]]
    return (bar, along_x)


def dropped_crosses(count=12) -> World:
    world = World(WorldDef(container_size=[1.0, 2.0, 1.0], sleep=False))
    rng = np.random.default_rng(9)
    for i in range(count):
        world.add_body(BodyDef(mass=0.5, principal_moments=[4e-3, 4e-3, 6e-3],
                               hull=np.vstack(cross_pieces()), pieces=cross_pieces(),
                               position=[rng.uniform(-0.3, 0.3), 0.2 + 0.15 * i,
                                         rng.uniform(-0.3, 0.3)],
                               orientation=quat_normalize(rng.normal(size=4))))
    return world


def test_a_heap_of_compound_bodies_moves_bit_for_bit_as_without_kept_axes():
    """Crossed bars dropped into a heap (their pieces meet along faces and edges, apart and
    touching), with and without the axes kept: the same states, bit for bit, every step."""
    kept_world, plain_world = dropped_crosses(), dropped_crosses()
    kinds = set()
    for _ in range(360):
        kept_world.step(H)
        kept = kept_world.state.carried
        for cache in (kept.manifolds, kept.piece_manifolds):
            kinds |= set(cache.axes[:, 0].tolist())
        plain_world.step(H)
        # the step's contacts are found in one compiled call (collision/find.py): the axes it
        # kept are dropped from the state instead, as an empty table (no axis) has them
        s = plain_world.state
        kept = s.carried.values()
        for name in ("manifolds", "piece_manifolds"):
            kept[name] = kept[name]._replace(axis_keys=np.zeros(0, dtype=np.int64),
                                             axes=np.zeros((0, 3), dtype=np.int64))
        s.carried = StepRecords(**kept)
        for name in ("pos", "quat", "vel", "ang_mom"):
            assert np.array_equal(getattr(kept_world.state, name),
                                  getattr(plain_world.state, name)), name
    assert {FACE_OF_FIRST, FACE_OF_SECOND} <= kinds


def test_kept_axes_are_the_same_whatever_the_thread_count(monkeypatch):
    """Pairs are shared out between threads in chunks, each writing the axes of its own pairs:
    a heap of round hulls, found twice (the second time with the first's axes), gives the same
    contacts and the same table of axes on one, two or three threads."""
    from physics.collision import narrowphase
    from physics.collision.broadphase import candidate_pairs

    rng = np.random.default_rng(10)
    model = hull_model(*[round_hull(seed=k % 5) for k in range(300)])
    pos = rng.uniform([-0.9, 0, -0.9], [0.9, 0.6, 0.9], (300, 3))
    rotm = quat_to_matrix(quat_normalize(rng.normal(size=(300, 4))))
    pairs = candidate_pairs(pos, model.bound_radius + 0.05)
    zero = np.zeros((300, 3))
    results = {}
    for threads in (1, 2, 3):
        monkeypatch.setattr(narrowphase, "parallel_threads", lambda count=threads: count)
        _, cache = pair_contacts(pairs, pos, rotm, zero, zero, model, H, ManifoldCache())
        moved = pos + rng.normal(scale=1e-3, size=pos.shape) if threads == 1 else results[1][2]
        found, cache = pair_contacts(pairs, moved, rotm, zero, zero, model, H, cache)
        results[threads] = (found, cache, moved)
    assert len(pairs) > 3 * narrowphase.PAIRS_PER_CHUNK
    assert np.count_nonzero(results[1][1].axes[:, 0] != NO_AXIS) > 100
    for threads in (2, 3):
        assert_same(results[threads][0], results[1][0])
        table, reference = results[threads][1], results[1][1]
        used = reference.axes[:, 0] != NO_AXIS  # the other slots' keys are never read
        assert np.array_equal(table.axes, reference.axes)
        assert np.array_equal(table.axis_keys[used], reference.axis_keys[used])
