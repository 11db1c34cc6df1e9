"""A step's contacts in one compiled call (collision/find.py): the same contacts and kept
caches as the stages called one by one from Python, and callable from other compiled code."""

import numpy as np
import pytest

from physics.collision.broadphase import SweptPairs, pairs_within_reach, reach
from physics.collision.contact import Contacts
from physics.collision.find import NO_BANNED, find_contacts_plain
from physics.collision.manifolds import ManifoldCache
from physics.collision.narrowphase import pair_contacts
from physics.collision.pieces import piece_contacts
from physics.collision.walls import wall_contacts
from physics.constraints.joint import JointDef
from physics.dynamics.advance import apply_forces
from physics.geometry.meshes import builtin_shape
from physics.geometry.rotation import quat_normalize, quat_to_matrix
from physics.model import BodyDef, WorldDef
from physics.runtime import parallel_threads
from physics.world import World
from tests.physics.bodies import box_corners, box_moments

H = 1.0 / 240.0


@pytest.fixture(autouse=True)
def thread_pool():
    """Callers ask for the thread count before the call, which launches numba's pool: the
    cached kernel needs it (collision/find.py)."""
    parallel_threads()


def named(found):
    """find_contacts_plain's plain tuples as the records they are."""
    contacts, swept, manifolds, piece_manifolds = found
    return (Contacts(*contacts), SweptPairs(*swept), ManifoldCache(*manifolds),
            ManifoldCache(*piece_manifolds))


def stage_by_stage(world, rotm, vel, omega, awake, kept):
    """The step's contacts and caches as the stages give them called one by one from Python:
    (contacts, swept, manifolds, piece manifolds), ``kept`` the last three."""
    m, s = world.model, world.state
    swept, manifolds, piece_manifolds = kept
    planes = m.wall_planes()
    walls = wall_contacts(s.pos, rotm, vel, omega, m.ids, m.radius, m.bound_radius,
                          m.hull_points, m.hull_start, planes, H, awake)
    pairs, swept = pairs_within_reach(swept, m.ids, s.pos, reach(vel, omega, m.bound_radius, H))
    pairs = pairs[awake[pairs[:, 0]] | awake[pairs[:, 1]]]
    if world.joints.defs:
        banned = world.joints.unjoined_keys(m.ids)
        keys = pairs.min(axis=1) * m.count + pairs.max(axis=1)
        pairs = pairs[~np.isin(keys, banned)]
    compound = m.compound[pairs[:, 0]] | m.compound[pairs[:, 1]]
    found, manifolds = pair_contacts(pairs[~compound], s.pos, rotm, vel, omega, m, H, manifolds)
    parts = [walls, found]
    if m.compound.any():
        pieces, piece_manifolds = piece_contacts(pairs[compound], s.pos, rotm, vel, omega, m, H,
                                                 piece_manifolds)
        parts.append(pieces)
    contacts = Contacts(*(np.concatenate(columns) for columns in zip(*parts)))
    return contacts, swept, manifolds, piece_manifolds


def ellipsoid_points(rng, count=40) -> np.ndarray:
    """(count, 3) points on an ellipsoid of ~0.1 m, m: a general hull (not a box)."""
    points = rng.normal(size=(count, 3))
    return points / np.linalg.norm(points, axis=1, keepdims=True) * [0.06, 0.045, 0.03]


def scene(seed) -> World:
    """Boxes, balls, 64-vertex hulls and crossed bars (compound) tumbling in a small container,
    two of them joined (their contacts banned) and a few asleep."""
    rng = np.random.default_rng(seed)
    world = World(WorldDef(container_size=[0.8, 1.5, 0.8]))
    bar = builtin_shape("cylinder", [0.05, 0.4]).hull[::2]
    cross = (bar, bar[:, [1, 0, 2]])
    shapes = [
        dict(hull=box_corners((0.1, 0.08, 0.12)), principal_moments=box_moments(1.0, (1, 1, 1))),
        dict(radius=0.06, principal_moments=[1e-3] * 3),
        dict(hull=ellipsoid_points(rng), principal_moments=[1e-3, 2e-3, 3e-3]),
        dict(hull=np.vstack(cross), pieces=cross, principal_moments=[4e-3, 4e-3, 6e-3]),
    ]
    for i in range(24):
        world.add_body(BodyDef(mass=0.5, **shapes[i % len(shapes)],
                               position=rng.uniform([-0.3, 0.05, -0.3], [0.3, 0.6, 0.3]),
                               orientation=quat_normalize(rng.normal(size=4)),
                               velocity=rng.normal(size=3), angular_velocity=rng.normal(size=3)))
    world.add_joint(JointDef("ball", first=int(world.ids[0]), second=int(world.ids[1]),
                             anchor=world.state.pos[0]))
    world.state.asleep[rng.choice(24, 5, replace=False)] = True
    return world


def test_find_contacts_gives_the_stages_contacts_and_caches_bit_for_bit():
    """Over steps of tumbling bodies (walls, spheres, hulls, a compound body, sleepers, a
    joined pair) the one call returns the contacts and kept caches the stages give, bit for
    bit, and it finds contacts of every kind."""
    world = scene(1)
    m, s = world.model, world.state
    kept = (SweptPairs(), ManifoldCache(), ManifoldCache())
    rng = np.random.default_rng(2)
    kinds = set()
    for _ in range(40):
        world.step(H)
        rotm = quat_to_matrix(s.quat)
        vel, omega = s.vel + rng.normal(scale=0.1, size=s.vel.shape), world.angular_velocity()
        awake = ~s.asleep
        awake[rng.choice(m.count, 3, replace=False)] = False
        expected = stage_by_stage(world, rotm, vel, omega, awake, kept)
        banned = world.joints.unjoined_keys(m.ids)
        found = named(find_contacts_plain(m.collision, s.pos, rotm, vel, omega, m.wall_planes(),
                                          awake, H, *(tuple(record) for record in kept),
                                          banned, 2))
        for got, want in zip(found, expected):
            assert type(got) is type(want)
            for a, b in zip(got, want):
                assert a.dtype == b.dtype and a.shape == b.shape
                assert a.tobytes() == b.tobytes()
        contacts = found[0]
        kinds |= {"wall" if other < 0 else "pair" for other in contacts.other}
        kinds |= {"piece" for key in contacts.key if key < -(1 << 62)}
        joined = {(0, 1), (1, 0)}
        assert not joined & set(zip(contacts.body.tolist(), contacts.other.tolist()))
        assert not np.any(s.asleep[contacts.body] & (contacts.other < 0))
        kept = found[1:]
    assert kinds == {"wall", "pair", "piece"}


def test_without_joints_or_contacts_the_call_finds_nothing_and_keeps_empty_caches():
    """Two balls far apart in no container: no contacts, nothing kept but their fat spheres."""
    world = World(WorldDef(container_size=None))
    for x in (-1.0, 1.0):
        world.add_body(BodyDef(mass=1.0, radius=0.1, principal_moments=[4e-3] * 3,
                               position=[x, 0.0, 0.0]))
    m, s = world.model, world.state
    zero = np.zeros((2, 3))
    contacts, swept, manifolds, pieces = named(find_contacts_plain(
        m.collision, s.pos, quat_to_matrix(s.quat), zero, zero, m.wall_planes(),
        np.ones(2, dtype=bool), H, tuple(SweptPairs()), tuple(ManifoldCache()),
        tuple(ManifoldCache()), NO_BANNED, 1))
    assert contacts.count == 0 and len(swept.pairs) == 0
    assert np.array_equal(swept.ids, m.ids) and np.array_equal(swept.centre, s.pos)
    assert manifolds.pose.shape == (0, 12) and pieces.pose.shape == (0, 12)


def test_a_batched_step_finds_the_contacts_the_plain_call_finds(monkeypatch):
    """The batch calls find_contacts from compiled code with the records named
    (dynamics/batch.py): a step it takes keeps the contacts and caches the plain call gives
    from the same start (a joined pair's contacts banned), bit for bit."""
    world = scene(3)
    world.wake_all()  # no sleeper to strike: the step's contacts are the first ones found
    for _ in range(20):
        world.step(H)
    monkeypatch.setattr(World, "_step_in_python", lambda world, h: pytest.fail("not batched"))
    m, s = world.model, world.state
    settings = world._step_settings()
    forced = apply_forces(m.body_model, settings.gravity, world._start(), s.force, s.torque,
                          world._grab_spring(), H)
    assert forced.awake.all()
    kept = s.carried
    contacts, *caches = named(find_contacts_plain(
        m.collision, s.pos, forced.rotm, forced.vel, forced.omega, settings.planes,
        forced.awake, H, tuple(kept.swept), tuple(kept.manifolds), tuple(kept.piece_manifolds),
        world.joints.unjoined_keys(m.ids), parallel_threads()))
    world.step(H)
    assert contacts.count > 10
    kept = s.carried
    assert kept.point.tobytes() == contacts.point.tobytes()
    assert kept.normal.tobytes() == contacts.normal.tobytes()
    for got, want in zip((kept.swept, kept.manifolds, kept.piece_manifolds), caches):
        for a, b in zip(got, want):
            assert a.dtype == b.dtype and a.tobytes() == b.tobytes()


def test_large_scenes_split_between_threads_give_the_same_contacts():
    """600 boxes in a dense layer (over 512 bodies and 512 pairs: the sweep and the narrow
    phase both run in chunks on the threads from inside the call) give the same contacts and
    caches on one thread and on four."""
    world = World(WorldDef(container_size=[4.0, 2.0, 4.0]))
    rng = np.random.default_rng(5)
    grid = np.stack(np.meshgrid(np.arange(25), np.arange(24)), -1).reshape(-1, 2)
    for i, j in grid:
        world.add_body(BodyDef(mass=1.0, principal_moments=box_moments(1.0, (0.1, 0.1, 0.1)),
                               hull=box_corners((0.1, 0.1, 0.1)),
                               position=[-1.9 + 0.105 * i, 0.05 + rng.uniform(0, 0.01),
                                         -1.9 + 0.105 * j],
                               orientation=quat_normalize([1.0, *rng.normal(scale=0.02,
                                                                            size=3)])))
    m, s = world.model, world.state
    rotm, zero = quat_to_matrix(s.quat), np.zeros((m.count, 3))
    args = (m.collision, s.pos, rotm, zero, zero, m.wall_planes(), np.ones(m.count, bool), H,
            tuple(SweptPairs()), tuple(ManifoldCache()), tuple(ManifoldCache()), NO_BANNED)
    one, four = named(find_contacts_plain(*args, 1)), named(find_contacts_plain(*args, 4))
    assert len(one[1].pairs) > 1000 and one[0].count > 2000
    for got, want in zip(four, one):
        for a, b in zip(got, want):
            assert a.tobytes() == b.tobytes()
