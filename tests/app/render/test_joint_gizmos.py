"""Joint gizmos, headless (EGL), from real simulated worlds turned into FrameViews: each shows
up in its colour where the camera projects it (rendered with the toggle on and off, pixels
compared), the hinge arc follows the angle convention of the physics, and frames with no joints
or with joints to bodies not shown draw nothing extra and raise nothing."""

import dataclasses

import numpy as np
import pytest

from app.render.camera import OrbitCamera
from app.render.gizmos import G_REF, body_radius, hinge_arc
from app.render.interpolate import blend
from app.render.view import NO_JOINTS, GizmoOptions, frame_view, gizmo_options
from physics.constraints.joint import WORLD, JointDef
from physics.geometry.meshes import builtin_shape
from physics.model import WorldDef
from physics.simulation import Simulation
from physics.world import World

SIZE = (320, 240)
ON = GizmoOptions(angular_momentum=False, principal_axes=False, joints=True)
OFF = GizmoOptions(angular_momentum=False, principal_axes=False, joints=False)
PIVOT = np.array([0.0, 1.6, 0.0])
CAMERA = OrbitCamera(target=(0.0, 1.2, 0.0), yaw=0.3, pitch=0.15, distance=2.6)


@pytest.fixture(scope="module")
def gl(gl_context):
    return gl_context[1:]


class Record:
    def __init__(self, shape):
        self.shape, self.color, self.pieces = shape, (0.3, 0.3, 0.3), ()


def world_view(build, steps=120, hidden=(), selected_joint=None, **settings):
    """(FrameView, snapshot) of a world without walls (and WorldDef ``settings``) with
    ``build(add, world)`` adding its bodies (``add(shape, position) → id``) and joints, after
    ``steps`` steps; the bodies in ``hidden`` have no record (not shown)."""
    world = World(WorldDef(container_size=None, **settings))
    shapes = {}

    def add(shape, position):
        body = world.add_body(shape.body_def(position))
        shapes[body] = shape
        return body

    build(add, world)
    snapshot = Simulation(world).run_steps(steps)
    records = {i: Record(s) for i, s in shapes.items() if i not in hidden}
    view = frame_view(blend(snapshot, snapshot, 1.0), snapshot, records,
                      lambda ids: np.full((len(ids), 3), 0.3), selected_joint=selected_joint)
    return view, snapshot


def pendulum(limits=(-0.6, 0.9), **joint):
    """A 0.1 m ball hanging 0.8 m under PIVOT on a hinge about z."""
    def build(add, world):
        bob = add(builtin_shape("sphere", [0.1]), PIVOT - (0.0, 0.8, 0.0))
        world.add_joint(JointDef("hinge", bob, WORLD, anchor=PIVOT, axis=[0, 0, 1],
                                 limits=limits, **joint))
    return build


def render(gl, view, options, camera=CAMERA) -> np.ndarray:
    renderer, target = gl
    renderer.render(view, camera, SIZE, options, fbo=target.fbo)
    return target.read().astype(int)


def pixels(image, points, camera=CAMERA) -> np.ndarray:
    """(k, 3) RGB at the projections of world points (k, 3)."""
    xy = camera.project(np.asarray(points, dtype=float).reshape(-1, 3), *SIZE)[:, :2]
    cols, rows = np.round(xy[:, 0]).astype(int), SIZE[1] - 1 - np.round(xy[:, 1]).astype(int)
    return image[rows, cols]


def lime_near(image, points, camera=CAMERA) -> np.ndarray:
    """(k,) a lime pixel within one pixel of each projected point (for lines ~1 px wide)."""
    xy = camera.project(np.asarray(points, dtype=float).reshape(-1, 3), *SIZE)[:, :2]
    cols, rows = np.round(xy[:, 0]).astype(int), SIZE[1] - 1 - np.round(xy[:, 1]).astype(int)
    return np.array([lime(image[r - 1:r + 2, c - 1:c + 2].reshape(-1, 3)).any()
                     for r, c in zip(rows, cols)])


def lime(rgb) -> np.ndarray:
    """The joints' colour, lit (a highlight whitens it): green leads, red well above blue
    (unlike the green axis)."""
    r, g, b = np.asarray(rgb).T
    return (g > 90) & (g >= r + 3) & (r > b + 30) & (g > b + 50)


def orange(rgb) -> np.ndarray:
    """The reaction force's colour: red leads, green about half of it, little blue."""
    r, g, b = np.asarray(rgb).T
    return (r > 100) & (g < 0.8 * r) & (g > 0.3 * r) & (g > b + 30)


def circle(centre, radius, angles) -> np.ndarray:
    """Points of the pendulum's swing: the bob's centre turned by ``angles`` about +z from
    hanging straight down."""
    angles = np.asarray(angles, dtype=float)
    return centre + radius * np.stack([np.sin(angles), -np.cos(angles), 0.0 * angles], 1)


# ---- pendulum: anchor, force, axis, arc -----------------------------------------------------


def test_a_hanging_pendulum_shows_its_anchor_and_an_upward_force_one_radius_long(gl):
    view, _ = world_view(pendulum())
    joints = view.joints
    assert joints.kinds == ("hinge",) and (joints.first_row[0], joints.second_row[0]) == (0, -1)
    np.testing.assert_allclose(joints.anchor_a[0], PIVOT, atol=1e-6)
    mass = view.shapes[0].properties.mass
    radius = body_radius(view.shapes[0])
    # at rest the hinge carries the bob's weight: the reaction on it points up
    np.testing.assert_allclose(joints.force[0], [0.0, mass * G_REF, 0.0], rtol=0.02, atol=0.05)
    on, off = render(gl, view, ON), render(gl, view, OFF)
    assert lime(pixels(on, PIVOT)).all() and not lime(pixels(off, PIVOT)).any()
    up = np.array([0.0, 1.0, 0.0])
    shaft = PIVOT + np.outer([0.45, 0.6, 0.7, 0.8], up * radius)
    assert orange(pixels(on, shaft)).all()
    assert not orange(pixels(off, shaft)).any()
    # one body radius per body weight: nothing orange past its tip, nor under the pivot
    beyond = PIVOT + np.outer([1.4, 1.8, -0.6, -1.0], up * radius)
    assert not orange(pixels(on, beyond)).any()


def test_the_lever_arm_runs_from_the_bob_to_the_pivot(gl):
    view, _ = world_view(pendulum())
    on, off = render(gl, view, ON), render(gl, view, OFF)
    arm = PIVOT - np.outer(np.linspace(0.2, 0.8, 7), [0.0, 0.7, 0.0])  # above the 0.1 m bob
    assert lime(pixels(on, arm)).all() and not lime(pixels(off, arm)).any()


def test_the_hinge_axis_shows_through_the_pivot(gl):
    view, _ = world_view(pendulum())
    side = OrbitCamera(target=PIVOT, yaw=1.2, pitch=0.3, distance=1.4)  # the axis across
    on, off = render(gl, view, ON, side), render(gl, view, OFF, side)
    half = 0.25 * 0.8  # a quarter of the 0.8 m arm, more than 0.9 bob radii
    axis = PIVOT + np.outer([-0.8, -0.5, 0.4], [0.0, 0.0, half])
    assert lime(pixels(on, axis, side)).all() and not lime(pixels(off, axis, side)).any()


def test_the_hinge_arc_ends_at_the_limit_angles(gl):
    lo, hi = -0.6, 0.9
    view, _ = world_view(pendulum((lo, hi)))
    assert abs(view.joints.coordinate[0]) < 1e-3  # hanging as built
    # θ is B's turn relative to A about +z; with B the world the bob turns by −θ: the lower
    # limit lies towards +x, the upper (longer) one towards −x
    arc = hinge_arc(view, 0)
    np.testing.assert_allclose(arc[[0, -1]], circle(PIVOT, 0.8, [-lo, -hi]), atol=2e-3)
    on, off = render(gl, view, ON), render(gl, view, OFF)
    inside = circle(PIVOT, 0.8, [-lo - 0.06, -lo - 0.3, -hi + 0.06, -hi + 0.3])
    assert lime(pixels(on, inside)).all() and not lime(pixels(off, inside)).any()
    outside = circle(PIVOT, 0.8, [-lo + 0.2, -lo + 0.4, -hi - 0.2, -hi - 0.4])
    assert not lime(pixels(on, outside)).any()
    # and the thin spokes from the pivot to both ends
    spokes = PIVOT + np.outer([0.5, 0.7], arc[0] - PIVOT)
    spokes = np.vstack([spokes, PIVOT + np.outer([0.5, 0.7], arc[-1] - PIVOT)])
    assert lime_near(on, spokes).all() and not lime_near(off, spokes).any()


@pytest.mark.parametrize("show_first", [True, False])
def test_the_arc_drawn_at_one_limit_predicts_where_the_body_stops_at_the_other(show_first):
    """The sign convention against the physics: a motor drives a hinge to its upper limit,
    then (another run) to its lower one; the arc drawn at the upper limit ends where the
    moving body's centre (projected ⟂ the axis onto the anchor's plane) comes to rest at
    either. With A shown the arc follows A's centre (B held still by a fixed joint); with A
    not shown, the moving body is B and the arc follows B's centre (A held)."""
    anchor = np.array([0.0, 2.0, 0.0])
    axis = np.array([0.3, 0.4, 1.0]) / np.linalg.norm([0.3, 0.4, 1.0])
    lo, hi = -0.7, 1.1

    def run(speed):
        moving = {}

        def build(add, world):
            shape = builtin_shape("sphere", [0.1])
            still = add(shape, anchor + (0.0, 0.3, 0.0))
            moving["id"] = add(shape, anchor + (0.3, -0.8, 0.0))
            world.add_joint(JointDef("fixed", still, WORLD, anchor=anchor + (0.0, 0.3, 0.0)))
            first, second = (moving["id"], still) if show_first else (still, moving["id"])
            world.add_joint(JointDef("hinge", first, second, anchor=anchor, axis=axis,
                                     limits=(lo, hi), motor_speed=speed, motor_max=20.0))
        view, snapshot = world_view(build, steps=500, hidden=() if show_first else (0,),
                                    gravity=[0.0, 0.0, 0.0])
        centre = snapshot.pos[list(snapshot.ids).index(moving["id"])] - anchor
        return view, anchor + centre - axis * (axis @ centre)

    at_hi, where_hi = run(3.0)
    at_lo, where_lo = run(-3.0)
    assert at_hi.joints.coordinate[1] == pytest.approx(hi, abs=1e-3)
    assert at_lo.joints.coordinate[1] == pytest.approx(lo, abs=1e-3)
    arc = hinge_arc(at_hi, 1)
    np.testing.assert_allclose(arc[-1], where_hi, atol=1e-3)
    np.testing.assert_allclose(arc[0], where_lo, atol=0.02)  # the held body gives a little
    np.testing.assert_allclose(hinge_arc(at_lo, 1)[-1], where_hi, atol=0.02)


# ---- distance and prismatic -------------------------------------------------------------------


def test_a_distance_joint_draws_its_rod_between_the_two_points(gl):
    top = PIVOT + (-0.5, 0.0, 0.0)

    def build(add, world):
        ball = add(builtin_shape("sphere", [0.1]), top + (0.6, -0.8, 0.0))
        world.add_joint(JointDef("distance", ball, WORLD, anchor=top))
    view, _ = world_view(build, steps=2)
    a, b = view.joints.anchor_a[0], view.joints.anchor_b[0]
    np.testing.assert_allclose(a, view.pos[0])  # A's point is its centre
    np.testing.assert_allclose(b, top)
    on, off = render(gl, view, ON), render(gl, view, OFF)
    rod = a + np.outer(np.linspace(0.2, 0.9, 8), b - a)  # out of the ball, up to the anchor
    assert lime(pixels(on, rod)).all() and not lime(pixels(off, rod)).any()
    assert lime(pixels(on, [a, b])).all()  # a dot at each end, A's over the ball


def test_the_slider_rail_spans_its_limits(gl):
    lo, hi = -0.3, 0.5
    centre = PIVOT - (0.0, 0.4, 0.0)
    axis = np.array([1.0, 0.0, 0.0])  # across gravity: the box stays where it is built

    def build(add, world):
        box = add(builtin_shape("box", [0.2, 0.2, 0.2]), centre)
        world.add_joint(JointDef("prismatic", box, WORLD, anchor=centre, axis=axis,
                                 limits=(lo, hi)))
    view, _ = world_view(build)
    assert abs(view.joints.coordinate[0]) < 1e-6
    on, off = render(gl, view, ON), render(gl, view, OFF)
    # where the box's anchor may go along the world-fixed rail: centre − s·axis, lo ≤ s ≤ hi
    rail = centre - np.outer([lo + 0.05, lo + 0.15, hi - 0.05, hi - 0.2, hi - 0.3], axis)
    assert lime(pixels(on, rail)).all() and not lime(pixels(off, rail)).any()
    past = centre - np.outer([lo - 0.15, lo - 0.3, hi + 0.15, hi + 0.3], axis)
    assert not lime(pixels(on, past)).any()


# ---- toggles, selection, no joints, bodies not shown -----------------------------------------


def test_the_toggle_off_draws_exactly_what_a_frame_without_joints_draws(gl):
    view, _ = world_view(pendulum())
    assert lime(render(gl, view, ON).reshape(-1, 3)).sum() > 100
    bare = dataclasses.replace(view, joints=NO_JOINTS)
    np.testing.assert_array_equal(render(gl, view, OFF), render(gl, bare, OFF))
    np.testing.assert_array_equal(render(gl, bare, ON), render(gl, bare, OFF))
    assert gizmo_options(["joints"]).joints and not gizmo_options(["L"]).joints


def test_a_world_without_joints_draws_nothing_extra(gl):
    def build(add, world):
        add(builtin_shape("sphere", [0.1]), PIVOT)
    view, _ = world_view(build)
    assert view.joints is NO_JOINTS
    np.testing.assert_array_equal(render(gl, view, ON), render(gl, view, OFF))


def test_the_selected_joint_is_drawn_thicker(gl):
    plain, _ = world_view(pendulum())
    chosen, _ = world_view(pendulum(), selected_joint=int(plain.joints.ids[0]))
    assert chosen.joints.selected == 0 and plain.joints.selected == -1
    off = render(gl, plain, OFF)

    def drawn(view):
        return np.count_nonzero(np.abs(render(gl, view, ON) - off).max(axis=2) > 40)

    assert drawn(chosen) > 1.3 * drawn(plain)


def test_joints_to_bodies_not_shown(gl):
    """A hinge between two balls with its first body hidden draws the second's side (its lever
    arm, its anchor) and raises nothing; a joint whose bodies are all hidden draws nothing."""
    def build(add, world):
        shape = builtin_shape("sphere", [0.1])
        first = add(shape, PIVOT + (-0.4, -0.4, 0.0))
        second = add(shape, PIVOT + (0.4, -0.4, 0.0))
        world.add_joint(JointDef("hinge", first, second, anchor=PIVOT + (0.0, -0.4, 0.0),
                                 axis=[0, 0, 1], limits=(-0.5, 0.5)))
    half, _ = world_view(build, steps=1, hidden=(0,))
    assert (half.joints.first_row[0], half.joints.second_row[0]) == (-1, 0)
    on, off = render(gl, half, ON), render(gl, half, OFF)
    arm = PIVOT + (0.0, -0.4, 0.0) + np.outer([0.4, 0.55, 0.7], [0.4, 0.0, 0.0])
    assert lime(pixels(on, arm)).all() and not lime(pixels(off, arm)).any()
    # the first body's side: no lever arm to a body that is not drawn
    assert not lime(pixels(on, PIVOT + (0.0, -0.4, 0.0) - np.outer([0.4, 0.55, 0.7],
                                                                  [0.4, 0.0, 0.0]))).any()
    none, _ = world_view(build, steps=1, hidden=(0, 1))
    assert (none.joints.first_row[0], none.joints.second_row[0]) == (-1, -1)
    np.testing.assert_array_equal(render(gl, none, ON), render(gl, none, OFF))
    hidden_pendulum, _ = world_view(pendulum(), hidden=(0,))
    np.testing.assert_array_equal(render(gl, hidden_pendulum, ON),
                                  render(gl, hidden_pendulum, OFF))


def test_selected_only_keeps_the_joints_of_the_selected_body(gl):
    view, _ = world_view(pendulum())
    options = dataclasses.replace(ON, selected_only=True)
    assert not lime(render(gl, view, options).reshape(-1, 3)).any()  # nothing selected
    picked = dataclasses.replace(view, selected=0)
    assert lime(pixels(render(gl, picked, options), PIVOT)).all()
