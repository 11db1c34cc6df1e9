"""Compound bodies in the world: bodies that collide as several convex pieces."""

import numpy as np
import pytest

from physics.geometry.rotation import quat_from_axis_angle
from physics.model import BodyDef, WorldDef
from physics.world import World
from tests.physics.bodies import box_corners, box_moments, v_block

H = 1.0 / 240.0


def block(size, centre) -> np.ndarray:
    """(8, 3) corners of a box piece of full extents ``size`` centred at ``centre``, m."""
    return box_corners(size) + np.asarray(centre, dtype=float)


def cup_pieces(wall=0.1, size=1.0, height=0.6) -> tuple[np.ndarray, ...]:
    """A square cup, open at the top, as five box pieces about its middle: a floor ``wall`` m
    thick and four walls, ``size`` m across and ``height`` m tall."""
    half, inner = size / 2, size - 2 * wall
    return (block((size, wall, size), (0, wall / 2 - height / 2, 0)),
            block((wall, height, size), (-half + wall / 2, 0, 0)),
            block((wall, height, size), (half - wall / 2, 0, 0)),
            block((inner, height, wall), (0, 0, -half + wall / 2)),
            block((inner, height, wall), (0, 0, half - wall / 2)))


def cup(position, pieces=True, **kwargs) -> BodyDef:
    """The cup of ``cup_pieces`` (hull: its outer box), compound unless ``pieces`` is false."""
    return BodyDef(mass=50.0, principal_moments=box_moments(50.0, (1.0, 0.6, 1.0)) * [1, 1, 1],
                   hull=box_corners((1.0, 0.6, 1.0)), pieces=cup_pieces() if pieces else (),
                   position=position, **kwargs)


def ball(position, radius=0.15, **kwargs) -> BodyDef:
    moment = 0.4 * radius**2
    return BodyDef(mass=1.0, principal_moments=[moment] * 3, radius=radius, position=position,
                   **kwargs)


def run(world: World, seconds: float) -> None:
    for _ in range(int(round(seconds / H))):
        world.step(H)


@pytest.mark.parametrize("pieces, rest_height", [(True, 0.1 + 0.15), (False, 0.6 + 0.15)])
def test_a_ball_dropped_into_a_static_cup_rests_on_its_floor_not_on_its_hull(pieces,
                                                                             rest_height):
    world = World(WorldDef(restitution=0.2))
    world.add_body(cup([0.0, 0.3, 0.0], pieces=pieces, static=True))
    world.add_body(ball([0.05, 1.5, -0.03]))
    run(world, 2.0)
    assert world.state.pos[1, 1] == pytest.approx(rest_height, abs=3e-3)
    assert world.asleep()[1]


def test_pieces_given_between_steps_are_what_the_next_step_collides_with():
    """A ball at rest on a solid static box; the box is then given the cup's pieces
    (``World.set_pieces``): the ball falls in and rests on the cup's floor. The batch reads the
    model through records held in numba between steps (``Model.batch_records``), which must
    follow the new pieces."""
    world = World(WorldDef(restitution=0.2))
    box = world.add_body(cup([0.0, 0.3, 0.0], pieces=False, static=True))
    world.add_body(ball([0.05, 1.5, -0.03]))
    run(world, 2.0)
    assert world.state.pos[1, 1] == pytest.approx(0.6 + 0.15, abs=3e-3)
    world.set_pieces(box, cup_pieces())
    run(world, 2.0)
    assert world.state.pos[1, 1] == pytest.approx(0.1 + 0.15, abs=3e-3)
    assert world.asleep()[1]


def test_a_box_dropped_into_a_dynamic_cup_stays_inside_and_both_come_to_rest():
    world = World(WorldDef(restitution=0.2))
    world.add_body(cup([0.0, 0.3, 0.0]))
    box = BodyDef(mass=1.0, principal_moments=box_moments(1.0, (0.3, 0.2, 0.1)),
                  hull=box_corners((0.3, 0.2, 0.1)), position=[0.1, 1.2, 0.0],
                  angular_velocity=[1.0, 2.0, 0.5])
    world.add_body(box)
    run(world, 3.0)
    x, y, z = world.state.pos[1]
    assert 0.1 < y < 0.3 and abs(x) < 0.4 and abs(z) < 0.4  # on the cup's floor, inside
    assert world.state.pos[0, 1] == pytest.approx(0.3, abs=2e-3)  # the cup on the container floor
    assert world.asleep().all()


def test_two_compound_bodies_colliding_in_free_space_keep_momentum():
    world = World(WorldDef(gravity=[0.0, 0.0, 0.0], container_size=None, restitution=0.7))
    world.add_body(cup([0.0, 0.0, 0.0], velocity=[1.0, 0.0, 0.1],
                       angular_velocity=[0.0, 0.5, 0.0]))
    world.add_body(cup([1.3, 0.2, 0.0], velocity=[-2.0, 0.0, 0.0],
                       angular_velocity=[0.3, 0.0, 0.0]))
    p0 = world.linear_momentum().sum(axis=0)
    l0 = (np.cross(world.state.pos, world.linear_momentum()) + world.state.ang_mom).sum(axis=0)
    e0 = world.kinetic_energy().sum()
    touched = False
    for _ in range(240):
        world.step(H)
        touched |= len(world.contact_points()[0]) > 0
    assert touched
    p1 = world.linear_momentum().sum(axis=0)
    l1 = (np.cross(world.state.pos, world.linear_momentum()) + world.state.ang_mom).sum(axis=0)
    np.testing.assert_allclose(p1, p0, atol=1e-12 * 100)
    np.testing.assert_allclose(l1, l0, atol=1e-12 * 100)
    assert world.kinetic_energy().sum() <= e0 * (1 + 1e-12)
    assert world.state.vel[1, 0] > world.state.vel[0, 0]  # bounced apart


def test_pieces_are_set_and_removed_and_a_body_removed_takes_its_pieces():
    world = World(WorldDef(container_size=None))
    first = world.add_body(ball([0.0, 0.0, 0.0]))
    middle = world.add_body(cup([3.0, 0.0, 0.0]))
    last = world.add_body(cup([6.0, 0.0, 0.0], pieces=False))
    m = world.model
    assert m.compound.tolist() == [False, True, False]
    assert m.piece_count.tolist() == [1, 5, 1] and m.pieces.count == 7
    world.set_pieces(last, cup_pieces()[:2])
    assert m.piece_count.tolist() == [1, 5, 2] and m.pieces.count == 8
    world.remove_body(middle)
    m = world.model
    assert m.piece_count.tolist() == [1, 2] and m.pieces.count == 3
    assert m.piece_body.tolist() == [0, 1, 1]
    # each piece is held about its own centre, placed there in the body frame
    np.testing.assert_allclose(m.piece_centre[1:], [p.mean(axis=0) for p in cup_pieces()[:2]])
    for row in (1, 2):
        lo, hi = m.pieces.hull_start[row], m.pieces.hull_start[row + 1]
        np.testing.assert_allclose(m.pieces.hull_points[lo:hi].mean(axis=0), 0.0, atol=1e-15)
    world.set_pieces(last, ())
    assert not world.model.compound.any() and world.model.pieces.count == 2
    assert world.index_of(first) == 0


@pytest.mark.parametrize("pieces, radius, message", [
    ((box_corners((1, 1, 1)),) * 65, 0.0, "at most 64"),
    ((np.zeros((3, 3)),), 0.0, "4 ≤ k ≤ 64"),
    ((np.full((8, 3), np.nan),), 0.0, "non-finite"),
    ((box_corners((1, 1, 1)),), 0.5, "takes no convex pieces"),
])
def test_bad_pieces_are_refused(pieces, radius, message):
    with pytest.raises(ValueError, match=message):
        BodyDef(mass=1.0, principal_moments=[1, 1, 1], hull=box_corners((1, 1, 1)),
                radius=radius, pieces=pieces)


def test_a_box_in_a_static_v_block_of_pieces_rests_on_both_sides_and_sleeps():
    """Two places of touch along two normals, each of four pieces: the pair's manifold keeps
    points on both plates, so the box settles where it is wedged and stays."""
    vee = v_block()
    world = World(WorldDef(restitution=0.2))
    world.add_body(BodyDef(mass=10.0, principal_moments=[1.0, 1.0, 1.0], hull=np.vstack(vee),
                           pieces=vee, position=[0.0, 0.2, 0.0], static=True))
    turn = quat_from_axis_angle([0.0, 0.0, 1.0], np.pi / 4)
    world.add_body(BodyDef(mass=1.0, principal_moments=box_moments(1.0, (0.4, 0.4, 0.8)),
                           hull=box_corners((0.4, 0.4, 0.8)), position=[0.0, 1.0, 0.0],
                           orientation=turn))
    run(world, 3.0)
    # faces on the plates: 0.25 m from each mid-plane along its normal (0.05 + 0.2)
    np.testing.assert_allclose(world.state.pos[1], [0.0, 0.2 + 0.25 * np.sqrt(2.0), 0.0],
                               atol=2e-3)
    assert world.asleep()[1]
    points, normals = world.contact_points()
    assert set(np.sign(np.round(normals[:, 0], 6))) == {-1.0, 1.0}


def test_contact_keys_stay_unique_beyond_sixteen_thousand_body_ids():
    """Piece contacts are keyed by the pieces' own numbers, not by body ids. Compound cubes with
    ids 1 and 2¹⁴ + 1 rest alike on a compound slab (id 2), and a plain cube (id 64) on a plain
    slab (id 128): when a piece's number was its body id × 64 + its index, taken modulo 2²⁰ in
    a key, all three pairs were the pair (64, 128), and the two compound cubes' contacts shared
    their four keys."""
    world = World(WorldDef(container_size=None))
    cube, slab = box_corners((0.2, 0.2, 0.2)), box_corners((9.0, 0.2, 1.0))

    def body(hull, x, y, **kwargs):
        return BodyDef(mass=1.0, principal_moments=[0.1, 0.2, 0.3], hull=hull,
                       position=[x, y, 0.0], **kwargs)

    wanted = {1: body(cube, -3.0, 0.199, pieces=(cube,)),
              2: body(slab, 0.0, 0.0, pieces=(slab,), static=True),
              64: body(cube, -3.0, 5.199), 128: body(slab, 0.0, 5.0, static=True),
              (1 << 14) + 1: body(cube, 3.0, 0.199, pieces=(cube,))}
    for body_id, definition in sorted(wanted.items()):
        # ids are handed out in order and never again: as if the bodies between had been added
        # and removed (doing that 16 000 times took a minute)
        world._next_id = body_id
        assert world.add_body(definition) == body_id
    assert sorted(world.ids.tolist()) == sorted(wanted)
    world.step(H)
    cache = world.state.carried.cache
    keys = cache.keys[cache.used]
    assert len(keys) == 3 * 4  # three cubes resting on four corners each
    assert len(np.unique(keys)) == len(keys)


def test_a_world_holds_at_most_its_number_of_piece_ids_and_says_so(monkeypatch):
    monkeypatch.setattr("physics.model.MAX_PIECE_IDS", 8)
    world = World(WorldDef(container_size=None))
    world.add_body(cup([0.0, 0.0, 0.0]))  # 5 pieces
    world.add_body(ball([3.0, 0.0, 0.0]))  # 1: a plain body is its own piece
    plain = world.add_body(cup([6.0, 0.0, 0.0], pieces=False))  # 1
    with pytest.raises(ValueError, match="12 convex pieces in one world; at most 8"):
        world.add_body(cup([9.0, 0.0, 0.0]))
    with pytest.raises(ValueError, match="11 convex pieces in one world; at most 8"):
        world.set_pieces(plain, cup_pieces())
    # nothing was half added or changed
    assert world.count == 3 and world.model.piece_count.tolist() == [5, 1, 1]
    assert world.model.pieces.count == 7 and world.state.pos.shape == (3, 3)
