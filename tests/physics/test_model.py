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
