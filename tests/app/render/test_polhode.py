"""The polhode trail (app/render/polhode.py): ω-tip points on the inertia ellipsoid the gizmos draw,
kept for the selected body only and attached to the frame's view when the gizmo is on."""

import numpy as np

from app.render.gizmos import ELLIPSOID_SIZE, body_radius
from app.render.polhode import PolhodeTrail
from app.render.view import FrameView
from physics.geometry.meshes import builtin_shape
from physics.model import WorldDef
from physics.simulation import Simulation
from physics.world import World


def test_polhode_points_lie_on_the_drawn_inertia_ellipsoid():
    """Trail points in the body frame satisfy xᵀ I x = (1.25 R)² I1: Poinsot's ellipsoid as the
    gizmos draw it (longest semi-axis ELLIPSOID_SIZE × body radius R); they move with the
    body."""
    shape = builtin_shape("t_handle")
    world = World(WorldDef(gravity=(0.0, 0.0, 0.0), container_size=None))
    body = world.add_body(shape.body_def([0.0, 1.0, 0.0], angular_velocity=[0.3, 5.0, 0.2]))
    sim = Simulation(world, hz=240.0)
    trail = PolhodeTrail()
    snapshot = sim.latest()
    for _ in range(60):
        snapshot = sim.run_steps(8)
        trail.update(body, shape, snapshot)
    moments = shape.properties.principal_moments
    points = trail.world(np.zeros(3), np.array([1.0, 0.0, 0.0, 0.0]))  # body frame
    assert len(points) == 60
    np.testing.assert_allclose(np.einsum("ij,j,ij->i", points, moments, points),
                               (ELLIPSOID_SIZE * body_radius(shape)) ** 2 * moments[0], rtol=1e-9)
    assert np.ptp(points[:, 0]) > 0.1 * body_radius(shape)  # a curve, not one point
    trail.update(None, None, snapshot)  # deselected: the trail is gone
    assert len(trail.world(np.zeros(3), [1.0, 0, 0, 0])) == 0
    assert ELLIPSOID_SIZE == 1.25


def view_of(snapshot, shapes, selected):
    n = len(snapshot.ids)
    return FrameView(ids=snapshot.ids, shapes=tuple(shapes), pos=snapshot.pos,
                     quat=snapshot.quat, color=np.full((n, 3), 0.5), vel=snapshot.vel,
                     omega=snapshot.omega, ang_mom=snapshot.ang_mom, selected=selected)


def test_attach_gives_the_selected_body_its_trail_and_nobody_else():
    shapes = [builtin_shape("t_handle"), builtin_shape("box", [0.3, 0.2, 0.1])]
    world = World(WorldDef(gravity=(0.0, 0.0, 0.0), container_size=None))
    ids = [world.add_body(shape.body_def([2.0 * k, 1.0, 0.0], angular_velocity=[0.3, 5.0, 0.2]))
           for k, shape in enumerate(shapes)]
    sim = Simulation(world, hz=240.0)
    trail = PolhodeTrail()
    for _ in range(20):
        snapshot = sim.run_steps(8)
        view = trail.attach(view_of(snapshot, shapes, selected=1), snapshot, enabled=True)
    assert list(view.polhode) == [ids[1]] and len(view.polhode[ids[1]]) == 20
    # the points ride with the body: centred near its centre of mass, on its ellipsoid
    offset = view.polhode[ids[1]] - snapshot.pos[1]
    assert np.linalg.norm(offset, axis=1).max() <= ELLIPSOID_SIZE * body_radius(shapes[1]) + 1e-9
    off = trail.attach(view_of(snapshot, shapes, selected=1), snapshot, enabled=False)
    assert off.polhode == {}
    # another selection starts a new trail; no selection, no trail
    snapshot = sim.run_steps(8)
    other = trail.attach(view_of(snapshot, shapes, selected=0), snapshot, enabled=True)
    assert list(other.polhode) == [ids[0]] and len(other.polhode[ids[0]]) == 1
    none = trail.attach(view_of(snapshot, shapes, selected=-1), snapshot, enabled=True)
    assert none.polhode == {}
