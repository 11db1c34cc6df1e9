"""The shipped joint scenes (assets/scenes/) do what their comments say."""

import numpy as np
from scipy.special import ellipk

from physics.scene import build_world, load_scene
from tests.paths import REPO

SCENES = REPO / "assets" / "scenes"
G = 9.81


def world_of(name):
    scene = load_scene(SCENES / f"{name}.toml")
    world, records = build_world(scene)
    return scene, world, {r.scene_name: r.body_id for r in records}


def energy(world) -> float:
    return float(world.kinetic_energy().sum() + world.potential_energy().sum())


def test_slider_is_the_worked_example_after_one_step():
    scene, world, _ = world_of("slider")
    assert scene.dt == 0.01 and np.isclose(world.model.mass[0], 1.0)
    world.step(scene.dt)
    np.testing.assert_allclose(world.state.vel[0], [0.04905, -0.04905, 0.0], atol=1e-9)
    np.testing.assert_allclose(world.angular_velocity()[0], 0.0, atol=1e-9)
    for _ in range(300):  # slides down its rail to the limit, and stops there
        world.step(scene.dt)
    assert abs(world.joint_view().coordinate[0] + 1.6) < 1e-3
    assert np.linalg.norm(world.state.vel[0]) < 0.05


def test_pendulum_swings_with_the_large_angle_period():
    scene, world, _ = world_of("pendulum")
    r, length, theta0 = 0.08, 1.2, np.radians(60)
    i_pivot = 0.4 * r**2 + length**2  # per kg
    period = 4 * np.sqrt(i_pivot / (G * length)) * ellipk(np.sin(theta0 / 2) ** 2)
    x_before, crossings = world.state.pos[0, 0], []
    for k in range(int(2.2 * period * scene.hz)):
        world.step(scene.dt)
        x = world.state.pos[0, 0]
        if x_before > 0.0 >= x:
            crossings.append((k + x_before / (x_before - x)) * scene.dt)
        x_before = x
    assert abs((crossings[1] - crossings[0]) / period - 1.0) < 2e-3


def test_double_pendulum_holds_and_never_gains_energy():
    scene, world, _ = world_of("double_pendulum")
    start = energy(world)
    for _ in range(int(3.0 * scene.hz)):
        world.step(scene.dt)
        assert energy(world) <= start + 1e-6
        assert world.joint_errors()[:, 0].max() < 1e-6


def test_newtons_cradle_sends_the_last_ball_out():
    scene, world, ids = world_of("newtons_cradle")
    first, last = (world.index_of(ids[name]) for name in ("ball1", "ball5"))
    swing = 0.0
    while world.state.vel[last, 0] < 0.1:  # a quarter swing down to the strike
        swing = max(swing, world.state.vel[first, 0])
        world.step(scene.dt)
    for _ in range(3):  # the blow runs along the row within a few steps
        world.step(scene.dt)
    assert world.state.vel[last, 0] > 0.75 * swing  # the last ball leaves with most of it
    assert abs(world.state.vel[first, 0]) < 0.1 * swing  # the first one stays
    assert world.joint_errors()[:, 0].max() < 1e-6
    assert np.abs(world.state.pos[:, 2]).max() < 1e-9  # the swing stays in its plane


def test_chain_hangs_together():
    scene, world, _ = world_of("chain")
    assert len(world.joints.defs) == world.count == 30
    start = energy(world)
    for _ in range(int(2.0 * scene.hz)):
        world.step(scene.dt)
        assert world.joint_errors()[:, 0].max() < 1e-3
    assert energy(world) <= start and np.isfinite(world.state.pos).all()


def test_gyroscope_precesses_with_its_axle_level():
    scene, world, _ = world_of("gyroscope")
    pivot = world.joint_view().anchor_b[0]
    mass, moments = world.model.mass[0], world.model.inertia[0]
    spin = np.linalg.norm(world.angular_velocity()[0] @ np.array([1.0, 0.0, 0.0]))
    d = np.linalg.norm(world.state.pos[0] - pivot)
    rate = mass * G * d / (moments.max() * spin)  # I₃: the disc's axis is its largest moment
    angles = []
    for _ in range(int(3.0 * scene.hz)):
        world.step(scene.dt)
        arm = world.state.pos[0] - pivot
        assert abs(np.degrees(np.arcsin(arm[1] / d))) < 1.0  # the axle stays level
        angles.append(np.arctan2(-arm[2], arm[0]))
    turned = np.unwrap(angles)[-1] - np.unwrap(angles)[0]
    assert abs(turned / ((len(angles) - 1) * scene.dt) / rate - 1.0) < 0.01
