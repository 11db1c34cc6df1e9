"""The frame's data contract (app/render/view.py): joints carried by the drawn bodies."""

import numpy as np

from app.render.interpolate import blend
from app.render.view import NO_JOINTS, frame_view
from physics.constraints.joint import WORLD, JointDef
from physics.model import BodyDef, WorldDef
from physics.simulation import Simulation
from physics.world import World


class Record:
    shape, color, pieces = None, None, ()


def pendulum_snapshots():
    """Two snapshots of a 1 m hinge pendulum 2 steps apart (the app publishes at 120 Hz),
    mid-swing."""
    world = World(WorldDef(container_size=None))
    bob = world.add_body(BodyDef(mass=1.0, principal_moments=[1e-3] * 3, radius=0.05,
                                 position=[1.0, 2.0, 0.0]))
    other = world.add_body(BodyDef(mass=1.0, principal_moments=[1e-3] * 3, radius=0.05,
                                   position=[5.0, 2.0, 0.0]))
    world.add_joint(JointDef("hinge", bob, WORLD, anchor=[0.0, 2.0, 0.0], axis=[0, 0, 1],
                             limits=(-0.5, 2.0)))
    sim = Simulation(world)
    first = sim.run_steps(40)
    return first, sim.run_steps(2), bob, other


def test_joint_points_ride_on_the_drawn_bodies():
    prev, new, bob, other = pendulum_snapshots()
    records = {bob: Record(), other: Record()}
    for alpha in (0.0, 0.5, 1.0):
        pose = blend(prev, new, alpha)
        view = frame_view(pose, new, records, lambda ids: np.zeros((len(ids), 3)),
                          selected_joint=0)
        joints = view.joints
        assert joints.kinds == ("hinge",) and joints.selected == 0
        assert (joints.first_row[0], joints.second_row[0]) == (0, -1)
        # the bob's pivot point stays at the pivot: the bob swings about it (the blend of two
        # poses 2 steps apart is not exactly a turn about it: within 0.1 mm)
        np.testing.assert_allclose(joints.anchor_a[0], [0.0, 2.0, 0.0], atol=1e-4)
        np.testing.assert_array_equal(joints.anchor_b[0], [0.0, 2.0, 0.0])  # the world's
        # the point keeps its distance from the drawn bob's centre
        np.testing.assert_allclose(np.linalg.norm(joints.anchor_a[0] - view.pos[0]),
                                   np.linalg.norm(new.joints.anchor_a[0] - new.pos[0]),
                                   rtol=1e-12)
        np.testing.assert_allclose(joints.axis[0], [0.0, 0.0, 1.0], atol=1e-12)
        np.testing.assert_array_equal(joints.limits[0], [-0.5, 2.0])
    assert frame_view(blend(prev, new, 1.0), new, {}, lambda ids: np.zeros((len(ids), 3))
                      ).joints.first_row[0] == -1  # a body not shown


def test_no_joints_gives_the_empty_frame():
    world = World(WorldDef(container_size=None))
    snapshot = Simulation(world).latest()
    view = frame_view(blend(snapshot, snapshot, 1.0), snapshot, {}, lambda ids: ids)
    assert view.joints is NO_JOINTS and view.joints.count == 0
