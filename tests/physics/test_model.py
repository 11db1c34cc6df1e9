"""Body and world definitions validate their values with clear messages."""

import numpy as np
import pytest

from physics.model import BodyDef, Model, WorldDef


@pytest.mark.parametrize("kwargs, message", [
    (dict(mass=0.0), "mass"),
    (dict(mass=np.inf), "mass"),
    (dict(principal_moments=[1, 0, 1]), "principal moments"),
    (dict(principal_moments=[1, 1]), "principal_moments must be 3 numbers"),
    (dict(hull=np.zeros((0, 3))), "collision hull"),
    (dict(hull=np.zeros((65, 3))), "at most 64"),
    (dict(orientation=[0, 0, 0, 0]), "non-zero quaternion"),
    (dict(velocity=[1, np.nan, 0]), "velocity must be finite"),
    (dict(restitution=1.2), "between 0 and 1"),
    (dict(friction=-0.1), "friction"),
])
def test_bad_body_definitions_name_the_value(kwargs, message):
    base = dict(mass=1.0, principal_moments=[1, 1, 1], hull=np.zeros((1, 3)))
    with pytest.raises(ValueError, match=message):
        BodyDef(**{**base, **kwargs})


def test_orientation_is_normalised():
    body = BodyDef(mass=1.0, principal_moments=[1, 1, 1], radius=0.1, orientation=[2, 0, 0, 0])
    assert np.allclose(body.orientation, [1, 0, 0, 0])


@pytest.mark.parametrize("kwargs, message", [
    (dict(restitution=-0.1), "world restitution"),
    (dict(friction=np.nan), "world friction"),
    (dict(container_size=[1, 2]), "container size"),
    (dict(solver_iterations=0), "solver_iterations"),
])
def test_bad_world_definitions_name_the_value(kwargs, message):
    with pytest.raises(ValueError, match=message):
        WorldDef(**kwargs)


def test_wall_planes_enclose_the_container():
    planes = Model(WorldDef(container_size=[4.0, 3.0, 2.0])).wall_planes()
    inside, outside = np.array([1.9, 2.9, 0.9]), np.array([0.0, 3.1, 0.0])
    assert np.all(planes[:, :3] @ inside >= planes[:, 3])
    assert not np.all(planes[:, :3] @ outside >= planes[:, 3])
    assert Model(WorldDef(container_size=None)).wall_planes().shape == (0, 4)


def test_material_defaults_fill_in_per_body_values():
    model = Model(WorldDef(restitution=0.25, friction=0.75))
    model.append(0, BodyDef(mass=1, principal_moments=[1, 1, 1], radius=1))
    model.append(
        1, BodyDef(mass=1, principal_moments=[1, 1, 1], radius=1, restitution=0.9, friction=0.1)
    )
    assert model.effective_restitution().tolist() == [0.25, 0.9]
    assert model.effective_friction().tolist() == [0.75, 0.1]


def _mixed_bodies():
    """Hulls of several shapes, spheres, a static body and bodies of convex pieces, mixed."""
    rng = np.random.default_rng(3)
    cube = np.array([[x, y, z] for x in (-0.1, 0.1) for y in (-0.1, 0.1) for z in (-0.1, 0.1)])
    halves = (cube * [0.5, 1, 1] - [0.05, 0, 0], cube * [0.5, 1, 1] + [0.05, 0, 0])
    bodies = []
    for i in range(12):
        kind = i % 4
        common = dict(mass=1.0 + i, principal_moments=[0.1, 0.2, 0.3], position=[i, 0, 0],
                      restitution=0.5 if i % 3 == 0 else None, static=i == 5)
        if kind == 0:
            bodies.append(BodyDef(hull=rng.normal(size=(20, 3)) * 0.1, **common))
        elif kind == 1:
            bodies.append(BodyDef(radius=0.05 + 0.01 * i, **common))
        elif kind == 2:
            bodies.append(BodyDef(hull=cube, pieces=halves, **common))
        else:
            bodies.append(BodyDef(hull=cube * (1 + 0.1 * i), **common))
    return bodies


def _rows(model: Model) -> dict:
    """Every array of a model and of its pieces' model."""
    arrays = {name: value for name, value in vars(model).items()
              if isinstance(value, np.ndarray)}
    arrays |= {f"pieces.{name}": value for name, value in vars(model.pieces).items()
               if isinstance(value, np.ndarray)}
    return arrays | {"next_piece_id": np.array(model.next_piece_id)}


def test_extending_at_once_gives_the_rows_appending_one_by_one_gives():
    bodies = _mixed_bodies()
    one_by_one, at_once = Model(WorldDef()), Model(WorldDef())
    for body_id, body in enumerate(bodies):
        one_by_one.append(body_id, body)
    at_once.extend(range(4), bodies[:4])  # twice: the offsets continue from rows already there
    at_once.extend(range(4, len(bodies)), bodies[4:])
    expected, got = _rows(one_by_one), _rows(at_once)
    assert expected.keys() == got.keys()
    for name in expected:
        np.testing.assert_array_equal(got[name], expected[name], err_msg=name)
        assert got[name].dtype == expected[name].dtype, name
    assert at_once.pieces.count == sum(max(len(b.pieces), 1) for b in bodies)


def test_a_bad_body_among_many_adds_none_of_them():
    from physics.world import World

    world = World()
    world.add_body(BodyDef(mass=1.0, principal_moments=[1, 1, 1], radius=0.1))
    bodies = _mixed_bodies()
    bodies[7].mass = -1.0  # edited after validation
    with pytest.raises(ValueError, match="mass"):
        world.add_group(bodies)
    assert world.count == 1 and world.model.pieces.count == 1
