"""Snapshot interpolation (app/render/interpolate.py) and the physics → render hand-off, without
GL."""

import time

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from app.render.interpolate import RENDER_DELAY, blend_weight, interpolate
from physics.geometry.rotation import quat_conj, quat_from_axis_angle, quat_mul, quat_to_rotvec
from physics.model import BodyDef, WorldDef
from physics.simulation import Simulation, Snapshot
from physics.world import World
from tests.wall_clock import WALL_CLOCK


def snap(ids, pos, quat=None, wall_time=0.0, sim_time=0.0, vel=None) -> Snapshot:
    """A Snapshot with the given bodies (other per-body arrays zero)."""
    ids = np.asarray(ids, dtype=np.int64)
    n = len(ids)
    pos = np.asarray(pos, dtype=float).reshape(n, 3)
    quat = np.tile([1.0, 0.0, 0.0, 0.0], (n, 1)) if quat is None else np.asarray(quat, float)
    zeros = np.zeros((n, 3))
    return Snapshot(
        time=sim_time, step=0, wall_time=wall_time, ids=ids, pos=pos, quat=quat.reshape(n, 4),
        vel=zeros if vel is None else np.asarray(vel, float), omega=zeros, ang_mom=zeros,
        omega_body=zeros, kinetic=np.zeros(n), potential=np.zeros(n),
        body_restitution=np.full(n, np.nan), body_friction=np.full(n, np.nan),
        contact_points=np.zeros((0, 3)), contact_normals=np.zeros((0, 3)),
        gravity=np.array([0.0, -9.81, 0.0]), container_size=None, restitution=0.5,
        friction=0.5, solver_iterations=10, asleep=np.zeros(n, dtype=bool),
        static=np.zeros(n, dtype=bool), paused=False,
        time_scale=1.0, hz=240.0, behind=False, time_dropped=0.0,
        errors=(), joints=World(WorldDef()).joint_view(), broken_joints=())


def z_turn(angle):
    return quat_from_axis_angle(np.array([0.0, 0.0, 1.0]), np.asarray(angle, dtype=float))


def test_blend_weight_is_the_fraction_of_the_stamp_interval_clamped():
    a = snap([0], [0, 0, 0], wall_time=10.0)
    b = snap([0], [1, 0, 0], wall_time=10.02)
    assert blend_weight(a, b, 10.005) == pytest.approx(0.25)
    assert blend_weight(a, b, 9.0) == 0.0       # before the older stamp: the older state
    assert blend_weight(a, b, 11.0) == 1.0      # after the newer: never extrapolated
    assert blend_weight(b, b, 10.0) == 1.0      # same stamp (a command in between): newest


def test_position_lerp_and_time():
    a = snap([3], [0.0, 1.0, 2.0], wall_time=1.0, sim_time=5.0)
    b = snap([3], [4.0, -1.0, 2.0], wall_time=2.0, sim_time=5.5)
    pose = interpolate(a, b, 1.25)
    np.testing.assert_allclose(pose.pos, [[1.0, 0.5, 2.0]])
    assert pose.time == pytest.approx(5.125)
    assert pose.alpha == pytest.approx(0.25)
    assert pose.ids.tolist() == [3]


def test_orientation_slerp_turns_at_constant_rate_along_the_short_arc():
    a = snap([0], [0, 0, 0], quat=z_turn(0.0), wall_time=0.0)
    b = snap([0], [0, 0, 0], quat=z_turn(np.pi / 2), wall_time=1.0)
    flipped = snap([0], [0, 0, 0], quat=-z_turn(np.pi / 2), wall_time=1.0)  # same rotation
    for t in (0.0, 0.3, 0.5, 1.0):
        expected = z_turn(t * np.pi / 2)
        for new in (b, flipped):
            q = interpolate(a, new, t).quat[0]
            assert abs(np.dot(q, expected)) == pytest.approx(1.0, abs=1e-12)


def test_bodies_are_matched_by_id_added_shown_new_removed_dropped():
    a = snap([1, 2, 7], [[1, 0, 0], [2, 0, 0], [7, 0, 0]], wall_time=0.0)
    # row order changed, 1 removed, 9 added
    b = snap([9, 7, 2], [[9, 9, 9], [7, 2, 0], [2, 4, 0]], wall_time=1.0)
    pose = interpolate(a, b, 0.5)
    assert pose.ids.tolist() == [9, 7, 2]
    np.testing.assert_allclose(pose.pos, [[9, 9, 9], [7, 1, 0], [2, 2, 0]])


def test_empty_snapshots():
    empty = snap([], np.zeros((0, 3)), wall_time=0.0)
    one = snap([0], [1, 1, 1], wall_time=1.0)
    assert interpolate(empty, empty, 0.5).pos.shape == (0, 3)
    np.testing.assert_allclose(interpolate(empty, one, 0.5).pos, [[1, 1, 1]])
    assert interpolate(one, empty, 0.5).ids.shape == (0,)


def test_snapshots_are_not_modified():
    a = snap([0], [0, 0, 0], wall_time=0.0)
    b = snap([0], [1, 0, 0], wall_time=1.0)
    pose = interpolate(a, b, 0.5)
    pose.pos[0, 0] = 99.0
    assert b.pos[0, 0] == 1.0 and a.pos[0, 0] == 0.0


unit = st.lists(st.floats(-1, 1), min_size=4, max_size=4).filter(
    lambda v: np.linalg.norm(v) > 0.1).map(lambda v: np.array(v) / np.linalg.norm(v))


@given(q0=unit, q1=unit, alpha=st.floats(0, 1))
def test_slerp_rotation_angle_is_proportional_to_alpha(q0, q1, alpha):
    a = snap([0], [0, 0, 0], quat=q0, wall_time=0.0)
    b = snap([0], [0, 0, 0], quat=q1, wall_time=1.0)
    q = interpolate(a, b, alpha).quat[0]
    assert np.linalg.norm(q) == pytest.approx(1.0, abs=1e-12)
    total = np.linalg.norm(quat_to_rotvec(quat_mul(quat_conj(q0), q1)))  # ≤ π: shortest arc
    part = np.linalg.norm(quat_to_rotvec(quat_mul(quat_conj(q0), q)))
    assert part == pytest.approx(alpha * total, abs=1e-9)


@WALL_CLOCK
def test_hand_off_from_the_running_physics_thread_is_smooth_and_exact():
    """A ball in free fall on the real physics thread, sampled like a 60 Hz render loop: the
    interpolated sim time advances with the wall clock (no stalls or jumps) and the interpolated
    height is the parabola at that time, up to the lerp error g·Δt²/8 of a snapshot interval.

    Smoothness is the hand-off's claim only while the physics thread is fed: frames where its
    newest snapshot is stale (another process held the CPU — CI has two cores) show the starved
    thread, not the interpolation, so they are left out of the frame-to-frame comparison; the
    loop samples until it has 40 frames the thread kept up with (or 4 s pass)."""
    g, y0 = 9.81, 1000.0
    world = World(WorldDef(container_size=None))
    world.add_body(BodyDef(mass=1.0, principal_moments=[0.4] * 3, radius=0.1,
                           position=[0.0, y0, 0.0]))
    sim = Simulation(world, hz=240.0)
    times, walls, fed = [], [], []
    sim.start()
    try:
        deadline = time.perf_counter() + 4.0
        while time.perf_counter() < deadline and sum(fed) < 40:
            now = time.perf_counter()
            prev, new = sim.latest_two()
            pose = interpolate(prev, new, now - RENDER_DELAY)
            if pose.time > 0.05:  # after the first snapshots
                times.append(pose.time)
                walls.append(now)
                fed.append(now - new.wall_time <= 3.0 / 120.0)  # publish interval 1/120 s
                gap = max(new.wall_time - prev.wall_time, 1 / 240)
                lerp_error = g * gap ** 2 / 8 + 1e-9
                assert pose.pos[0, 1] == pytest.approx(y0 - 0.5 * g * pose.time ** 2,
                                                       abs=lerp_error + g * pose.time / 240)
            time.sleep(1 / 60)
    finally:
        sim.stop()
    steps, wall_steps = np.diff(times), np.diff(walls)
    assert np.all(steps >= 0.0), "interpolated time went backwards"
    both_fed = np.logical_and(fed[:-1], fed[1:])
    assert both_fed.sum() >= 30, f"the physics thread kept up in only {both_fed.sum()} frames"
    # sim time tracks wall time frame by frame (time scale 1) within a physics step or two
    close = np.abs(steps - wall_steps)[both_fed] <= 2.5 / 240
    assert close.mean() >= 0.9, (steps[both_fed], wall_steps[both_fed])
    assert steps[both_fed].sum() == pytest.approx(wall_steps[both_fed].sum(), rel=0.05)
