"""Bodies colliding with each other through ``World.step`` (issue 5's must-pass scenarios):
analytic answers for spheres, conservation laws, stacks that stand and rest, no tunnelling."""

import numpy as np
import pytest

from physics.model import BodyDef, WorldDef
from physics.world import World

from .bodies import box_body

H = 1.0 / 240.0


def ball(position, velocity=(0.0, 0.0, 0.0), radius=0.1, mass=1.0, **kwargs) -> BodyDef:
    moment = 0.4 * mass * radius**2
    return BodyDef(mass=mass, principal_moments=[moment] * 3, radius=radius, position=position,
                   velocity=velocity, **kwargs)


def space(restitution, friction=0.0) -> World:
    """No gravity, no walls: only the bodies act on each other."""
    return World(WorldDef(gravity=[0.0, 0.0, 0.0], container_size=None, restitution=restitution,
                          friction=friction))


def run_conserving_momentum(world, steps):
    """Step, checking the total linear momentum against its start every step (to 1e-12)."""
    start = world.linear_momentum().sum(axis=0)
    for _ in range(steps):
        world.step(H)
        assert np.allclose(world.linear_momentum().sum(axis=0), start, rtol=0, atol=1e-12)


@pytest.mark.parametrize("offset", [0.0, 0.37])
def test_equal_spheres_head_on_elastic_exchange_velocities(offset):
    world = space(restitution=1.0)
    world.add_body(ball([-0.5 + offset, 0.0, 0.0], velocity=[2.0, 0.0, 0.0]))
    world.add_body(ball([0.5, 0.0, 0.0], velocity=[-0.5, 0.0, 0.0]))
    run_conserving_momentum(world, 240)
    assert np.allclose(world.state.vel, [[-0.5, 0, 0], [2.0, 0, 0]], rtol=0, atol=1e-9)
    assert world.state.pos[1, 0] - world.state.pos[0, 0] > 0.2


def test_equal_spheres_head_on_inelastic_move_together():
    world = space(restitution=0.0)
    world.add_body(ball([-0.5, 0.0, 0.0], velocity=[2.0, 0.0, 0.0]))
    world.add_body(ball([0.5, 0.0, 0.0], velocity=[-0.5, 0.0, 0.0]))
    run_conserving_momentum(world, 240)
    assert np.allclose(world.state.vel, [[0.75, 0, 0], [0.75, 0, 0]], rtol=0, atol=1e-9)
    assert 0.19 < world.state.pos[1, 0] - world.state.pos[0, 0] <= 0.2 + 1e-9


def test_newtons_cradle_passes_the_first_ball_speed_to_the_last():
    world = space(restitution=1.0)
    world.add_body(ball([-0.3, 0.0, 0.0], velocity=[1.0, 0.0, 0.0]))
    for i in range(4):
        world.add_body(ball([0.2 * i, 0.0, 0.0]))
    run_conserving_momentum(world, 240)
    vel = world.state.vel[:, 0]
    assert abs(vel[-1] - 1.0) < 0.01
    assert np.all(np.abs(vel[:-1]) < 0.01)
    assert world.kinetic_energy().sum() <= 0.5 + 1e-12
