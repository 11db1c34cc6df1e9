"""Gizmos, headless (EGL, no X): each kind shows up in its colour where the camera projects it
(rendered on and off, pixels compared), the arrow-length mapping of app/render/gizmos.py, the
principal-axis triad coloured by I1 < I2 < I3, Poinsot's ellipsoid proportions, and arrows
that stay readable far away."""

import numpy as np
import pytest

from app.render.camera import OrbitCamera
from app.render.gizmos import (
    BOX_CORNERS,
    BOX_EDGES,
    ELLIPSOID_SIZE,
    MIN_PIXELS,
    OMEGA_REF,
    TRIAD_LENGTH,
    VELOCITY_TIME,
    Gizmos,
    arrow_vectors,
    body_radius,
    set_uniforms,
)
from app.render.view import ALL_BODIES_UP_TO, FrameView, GizmoOptions
from physics.geometry.meshes import builtin_shape

SIZE = (320, 240)
OFF = GizmoOptions(angular_momentum=False, principal_axes=False)
GREY = (0.3, 0.3, 0.3)


@pytest.fixture(scope="module")
def gl(gl_context):
    return gl_context[1:]


def make_view(shapes, pos, *, omega=None, ang_mom=None, vel=None, selected=-1, **more):
    n = len(shapes)
    zeros = np.zeros((n, 3))
    return FrameView(ids=np.arange(n), shapes=tuple(shapes), pos=np.array(pos, dtype=float),
                     quat=np.tile([1.0, 0, 0, 0], (n, 1)), color=np.tile(GREY, (n, 1)),
                     vel=zeros if vel is None else np.array(vel, float),
                     omega=zeros if omega is None else np.array(omega, float),
                     ang_mom=zeros if ang_mom is None else np.array(ang_mom, float),
                     selected=selected, **more)


def render(gl, view, camera, options, size=SIZE) -> np.ndarray:
    renderer, target = gl
    renderer.render(view, camera, size, options, fbo=target.fbo)
    return target.read().astype(int)


def pixels(image, camera, points) -> np.ndarray:
    """(k, 3) RGB at the projections of world points (k, 3)."""
    xy = camera.project(np.asarray(points, dtype=float), *SIZE)[:, :2]
    cols, rows = np.round(xy[:, 0]).astype(int), SIZE[1] - 1 - np.round(xy[:, 1]).astype(int)
    return image[rows, cols]


def along(start, vector, fractions=np.linspace(0.55, 0.85, 7)) -> np.ndarray:
    return np.asarray(start, float) + np.outer(fractions, vector)


def gold(rgb) -> np.ndarray:
    """L's colour, lit or in its own shade: red ≥ green ≫ blue."""
    r, g, b = np.asarray(rgb).T
    return (r > 80) & (g > 0.6 * r) & (g <= r + 5) & (b < 0.45 * r)


def cyan(rgb) -> np.ndarray:
    """ω's colour: blue ≥ green ≫ red."""
    r, g, b = np.asarray(rgb).T
    return (b > 80) & (g > 0.5 * b) & (g <= b + 5) & (r < 0.6 * b)


def only(channel: int, rgb) -> np.ndarray:
    """The channel clearly leads (a specular highlight lifts the others a little)."""
    rgb = np.asarray(rgb)
    others = np.delete(rgb, channel, axis=-1)
    return rgb[..., channel] > others.max(axis=-1) + 30


def box():
    """0.6 × 0.4 × 0.2 m: principal axes 1, 2, 3 along its long, middle, short sides."""
    return builtin_shape("box", [0.6, 0.4, 0.2])


def box_edge_midpoints(centre) -> np.ndarray:
    """(12, 3) world midpoints of the edges of ``box()`` placed unturned at ``centre``."""
    corners = BOX_CORNERS * np.array([0.3, 0.2, 0.1])
    return corners[BOX_EDGES].mean(axis=1) + centre


CAMERA = OrbitCamera(target=(0.0, 0.6, 0.0), yaw=0.6, pitch=0.45, distance=3.2)


# ---- the mapping -------------------------------------------------------------------------


def test_arrow_lengths_follow_the_documented_mapping():
    sphere, handle = builtin_shape("sphere", [0.3]), builtin_shape("t_handle", [1.0])
    moments = handle.properties.principal_moments
    omega = np.array([[0.0, 3.0, 0.0], [0.0, 0.0, 5.0]])
    # the T-handle spins about its principal axis 3 (world z with an identity quaternion)
    ang_mom = np.array([sphere.properties.principal_moments * omega[0], moments * omega[1]])
    view = make_view([sphere, handle], [(0, 1, 0), (1, 1, 0)], omega=omega, ang_mom=ang_mom,
                     vel=[[2.0, 0, 0], [0, -4.0, 0]])
    vectors = arrow_vectors(view, arrow_scale=1.0)
    r_sphere, r_handle = body_radius(sphere), body_radius(handle)
    assert r_sphere == pytest.approx(0.3)
    w = np.linalg.norm(vectors["angular_velocity"], axis=1)
    assert w == pytest.approx([r_sphere * 3.0 / OMEGA_REF, r_handle * 5.0 / OMEGA_REF])
    length = np.linalg.norm(vectors["angular_momentum"], axis=1)
    assert length[0] == pytest.approx(w[0])  # a sphere: L and ω arrows coincide
    assert length[1] / w[1] == pytest.approx(moments[2] / moments.mean())
    assert np.allclose(np.cross(vectors["angular_momentum"], ang_mom), 0.0)  # along L
    assert np.linalg.norm(vectors["velocity"], axis=1) == pytest.approx(
        [2.0 * VELOCITY_TIME, 4.0 * VELOCITY_TIME])
    doubled = arrow_vectors(view, arrow_scale=2.0)
    for key in vectors:
        assert np.allclose(doubled[key], 2.0 * vectors[key])


# ---- arrows in pixels --------------------------------------------------------------------


def test_angular_momentum_arrow_appears_along_l(gl):
    shape = box()
    pos = (0.0, 0.6, 0.0)
    ang_mom = np.array([[0.0, 1.0, 0.6]]) * 4.0 * shape.properties.principal_moments.mean()
    view = make_view([shape], [pos], ang_mom=ang_mom)
    tip = arrow_vectors(view, 1.0)["angular_momentum"][0]
    assert np.linalg.norm(tip) > 2 * body_radius(shape)  # reaches well outside the body
    on = render(gl, view, CAMERA, GizmoOptions(angular_momentum=True, principal_axes=False))
    off = render(gl, view, CAMERA, OFF)
    samples = along(pos, tip)
    assert gold(pixels(on, CAMERA, samples)).all()
    assert not gold(pixels(off, CAMERA, samples)).any()


def test_angular_velocity_arrow_has_its_own_colour(gl):
    shape = box()
    pos = (0.0, 0.6, 0.0)
    view = make_view([shape], [pos], omega=[[4.0, 4.0, 0.0]])
    tip = arrow_vectors(view, 1.0)["angular_velocity"][0]
    on = render(gl, view, CAMERA, GizmoOptions(angular_momentum=False, angular_velocity=True,
                                               principal_axes=False))
    samples = along(pos, tip)
    assert cyan(pixels(on, CAMERA, samples)).all()
    assert not cyan(pixels(render(gl, view, CAMERA, OFF), CAMERA, samples)).any()


def test_velocity_arrow(gl):
    pos = (0.0, 0.6, 0.0)
    view = make_view([builtin_shape("sphere", [0.1])], [pos], vel=[[-6.0, 0.0, 6.0]])
    tip = arrow_vectors(view, 1.0)["velocity"][0]
    on = render(gl, view, CAMERA, GizmoOptions(angular_momentum=False, principal_axes=False,
                                               velocity=True))
    rgb = pixels(on, CAMERA, along(pos, tip))
    assert (rgb.min(axis=1) > 150).all() and (np.ptp(rgb, axis=1) < 40).all()  # white


def test_principal_axes_triad_is_red_green_blue_by_moment(gl):
    shape = box()
    moments = shape.properties.principal_moments
    assert moments[0] < moments[1] < moments[2]
    pos = np.array([0.0, 0.6, 0.0])
    view = make_view([shape], [pos])  # identity: principal axes 1, 2, 3 = world x, y, z
    on = render(gl, view, CAMERA, GizmoOptions(angular_momentum=False, principal_axes=True))
    radius = body_radius(shape)
    for channel, axis in enumerate(np.eye(3)):
        # past the box's faces (0.3, 0.2, 0.1 m), before the arrow's end (1.35 R ≈ 0.5 m)
        samples = along(pos, axis * TRIAD_LENGTH * radius, np.linspace(0.7, 0.8, 3))
        assert only(channel, pixels(on, CAMERA, samples)).all(), channel
    # the box's long side lies along the red axis (I1 is the moment about the long axis)
    vertices = (shape.vertices - shape.properties.center_of_mass) \
        @ shape.properties.principal_axes
    assert np.ptp(vertices, axis=0) == pytest.approx([0.6, 0.4, 0.2])


def test_inertia_ellipsoid_has_poinsots_proportions(gl):
    shape = box()
    moments = shape.properties.principal_moments
    radius = body_radius(shape)
    semi = ELLIPSOID_SIZE * radius * np.sqrt(moments[0] / moments)
    pos = np.array([0.0, 0.6, 0.0])
    view = make_view([shape], [pos])
    top = OrbitCamera(target=pos, yaw=0.0, pitch=np.pi / 2, distance=4.0)  # looking down −y
    on = render(gl, view, top, GizmoOptions(angular_momentum=False, principal_axes=False,
                                            inertia_ellipsoid=True))
    off = render(gl, view, top, OFF)
    changed = np.abs(on - off).max(axis=2)

    def change_at(point):
        (x, y), = top.project(np.array([point]), *SIZE)[:, :2]
        return changed[SIZE[1] - 1 - int(round(y)), int(round(x))]

    # axis 1 (x): the shell reaches 1.25 R, past the box's end at 0.3 m
    assert semi[0] > 0.42 and change_at(pos + (0.38, 0.0, 0.0)) > 3
    # axis 3 (z): the shell stops at semi[2] ∝ 1/√I3, well before 0.38 m (and past the box's
    # side at 0.1 m)
    assert 0.15 < semi[2] < 0.33
    assert change_at(pos + (0.0, 0.0, 0.85 * semi[2])) > 3
    assert change_at(pos + (0.0, 0.0, 0.38)) == 0


def test_polhode_trail_is_drawn(gl):
    shape = builtin_shape("sphere", [0.15])
    t = np.linspace(0.0, 2.0 * np.pi, 80)[:, None]
    trail = np.hstack([0.6 * np.cos(t), 1.1 + 0.0 * t, 0.6 * np.sin(t)])
    view = make_view([shape], [(0.0, 0.6, 0.0)], polhode={0: trail})
    on = render(gl, view, CAMERA, GizmoOptions(angular_momentum=False, principal_axes=False,
                                               polhode=True))
    newest = trail[-20:-1]  # opaque end of the fading trail
    assert cyan(pixels(on, CAMERA, newest)).mean() > 0.8
    assert not cyan(pixels(render(gl, view, CAMERA, OFF), CAMERA, newest)).any()


def test_centre_of_mass_marker_shows_through_the_body(gl):
    pos = (0.0, 0.6, 0.0)
    view = make_view([box()], [pos])
    on = render(gl, view, CAMERA, GizmoOptions(angular_momentum=False, principal_axes=False,
                                               centre_of_mass=True))
    assert pixels(on, CAMERA, [pos]).min() > 200
    assert pixels(render(gl, view, CAMERA, OFF), CAMERA, [pos]).max() < 200


def test_contacts_show_points_and_normals(gl):
    point, normal = np.array([0.5, 0.0, 0.4]), np.array([0.0, 1.0, 0.0])
    view = make_view([builtin_shape("sphere", [0.2])], [(-0.6, 0.2, -0.6)],
                     contact_points=np.array([point]), contact_normals=np.array([normal]))
    on = render(gl, view, CAMERA, GizmoOptions(angular_momentum=False, principal_axes=False,
                                               contacts=True))
    off = render(gl, view, CAMERA, OFF)
    length = 0.2  # the median body radius
    samples = np.vstack([[point], along(point, normal * length, np.linspace(0.3, 0.7, 3))])
    rgb = pixels(on, CAMERA, samples)
    assert (rgb[:, 0] - rgb[:, 1] > 40).all() and (rgb[:, 2] > rgb[:, 1]).all()  # pink
    assert (np.abs(pixels(off, CAMERA, samples) - rgb).max(axis=1) > 40).all()


def test_selected_only_draws_the_selected_body_alone(gl):
    shapes = [box(), box()]
    pos = [(-0.8, 0.6, 0.0), (0.8, 0.6, 0.0)]
    ang_mom = np.array([[0.0, 1.0, 0.0]] * 2) * 4.0 * shapes[0].properties.principal_moments.mean()
    view = make_view(shapes, pos, ang_mom=ang_mom, selected=1)
    tips = arrow_vectors(view, 1.0)["angular_momentum"]
    options = GizmoOptions(angular_momentum=True, principal_axes=False, selected_only=True)
    image = render(gl, view, CAMERA, options)
    assert not gold(pixels(image, CAMERA, along(pos[0], tips[0]))).any()
    assert gold(pixels(image, CAMERA, along(pos[1], tips[1]))).all()


@pytest.mark.parametrize("count, chosen, both", [
    (ALL_BODIES_UP_TO, None, True),        # automatic: every body up to the limit
    (ALL_BODIES_UP_TO + 1, None, False),   # past it the selected body alone
    (ALL_BODIES_UP_TO + 1, False, True),   # the user's toggle brings back all
    (2, True, False),                      # and the user's True holds in a small scene
])
def test_past_the_limit_gizmos_default_to_the_selected_body(gl, count, chosen, both):
    shapes = [box()] * count
    # two bodies in view; the rest 50 m off, only counted
    pos = [(-0.8, 0.6, 0.0), (0.8, 0.6, 0.0)] + [(0.0, 0.6, 50.0 + k) for k in range(count - 2)]
    spin = 4.0 * shapes[0].properties.principal_moments.mean()
    ang_mom = np.array([[0.0, 1.0, 0.0]] * count) * spin
    view = make_view(shapes, pos, ang_mom=ang_mom, selected=1)
    tips = arrow_vectors(view, 1.0)["angular_momentum"]
    options = GizmoOptions(angular_momentum=True, principal_axes=False, selected_only=chosen)
    image = render(gl, view, CAMERA, options)
    assert gold(pixels(image, CAMERA, along(pos[1], tips[1]))).all()
    unselected = gold(pixels(image, CAMERA, along(pos[0], tips[0])))
    assert unselected.all() if both else not unselected.any()


def test_arrows_stay_readable_far_away(gl):
    shape = builtin_shape("sphere", [0.05])
    pos = np.array([0.0, 0.5, 0.0])
    ang_mom = np.array([[0.0, 1.0, 0.0]]) * 80.0 * shape.properties.principal_moments.mean()
    view = make_view([shape], [pos], ang_mom=ang_mom)
    tip = arrow_vectors(view, 1.0)["angular_momentum"][0]
    options = GizmoOptions(angular_momentum=True, principal_axes=False)
    thickness = []
    for distance in (2.0, 30.0):
        cam = OrbitCamera(target=pos + 0.5 * tip, yaw=0.3, pitch=0.2, distance=distance)
        image = render(gl, view, cam, options)
        (x0, y0), (x1, y1) = cam.project(np.array([pos, pos + tip]), *SIZE)[:, :2]
        length_px = np.hypot(x1 - x0, y1 - y0)
        assert length_px > 10
        thickness.append(gold(image.reshape(-1, 3)).sum() / length_px)  # solid gold px across
    # 2.5 % of the radius is 0.4 px at 2 m and 0.03 px at 30 m: the on-screen minimum
    # (MIN_PIXELS radius, less the anti-aliased edge) holds at both
    assert min(thickness) >= MIN_PIXELS
    assert thickness[1] == pytest.approx(thickness[0], rel=0.3)


def test_collision_hulls_show_as_wireframes_along_the_hull_edges(gl):
    shapes = [box(), builtin_shape("sphere", [0.25])]
    pos = [(-0.6, 0.3, 0.0), (0.6, 0.3, 0.0)]
    view = make_view(shapes, pos)
    on = render(gl, view, CAMERA, GizmoOptions(angular_momentum=False, principal_axes=False,
                                               collision_hulls=True))
    off = render(gl, view, CAMERA, OFF)
    # midpoints of the box's 12 edges, and points on the sphere's silhouette-facing great circle
    mids = box_edge_midpoints(pos[0])
    angle = np.linspace(0.0, 2 * np.pi, 16, endpoint=False) + 0.1
    circle = np.stack([np.cos(angle), np.sin(angle), np.zeros(16)], 1) * 0.25
    ring = np.vstack([circle, circle[:, [2, 0, 1]], circle[:, [1, 2, 0]]]) + pos[1]
    # the box hides its back edges (depth-tested, as the gizmos are): 8 of 12 show from here;
    # the sphere's three great circles show on its front half
    for points, least in ((mids, 8), (ring, 16)):
        rgb = pixels(on, CAMERA, points)
        violet = (rgb[:, 2] > rgb[:, 1] + 40) & (rgb[:, 0] > rgb[:, 1] + 20)
        changed = np.abs(pixels(off, CAMERA, points) - rgb).max(axis=1) > 40
        assert np.count_nonzero(violet & changed) >= least, rgb
    # away from every edge, the box's face looks the same with and without the wireframe
    face = np.array(pos[0]) + [0.08, 0.05, 0.1]
    assert np.abs(pixels(off, CAMERA, [face]) - pixels(on, CAMERA, [face])).max() < 10


def test_a_compound_bodys_pieces_show_each_in_its_own_colour(gl):
    """The box split into its two halves along its long side: the edges of the left half are
    drawn red (the first piece colour), those of the right half green (the second)."""
    half = BOX_CORNERS * np.array([0.15, 0.2, 0.1])
    pieces = (half + [-0.15, 0.0, 0.0], half + [0.15, 0.0, 0.0])
    centre = np.array([0.0, 0.3, 0.0])
    view = make_view([box()], [centre], pieces=(pieces,))
    image = render(gl, view, CAMERA, GizmoOptions(angular_momentum=False, principal_axes=False,
                                                  collision_hulls=True))
    for x, first, second in ((-0.15, 0, 1), (0.15, 1, 2)):
        # the midpoints of the half's four edges along x, a quarter of the way along them
        mids = np.array([[x + 0.04, y, z] for y in (-0.2, 0.2) for z in (-0.1, 0.1)]) + centre
        rgb = pixels(image, CAMERA, mids)
        own = (rgb[:, first] > rgb[:, second] + 40) & (rgb[:, first] > rgb[:, 3 - first - second]
                                                        + 40)
        assert np.count_nonzero(own) >= 2, rgb


def test_thin_arrows_and_tubes_are_impostors_thick_ones_meshes(gl):
    """Below THIN_PIXELS of radius on screen, arrows and wireframe tubes are flat impostors
    (llvmpipe pays per triangle); close up they are real cylinders and cones."""
    renderer, _ = gl
    shape = box()
    ang_mom = np.array([[0.0, 1.0, 0.0]]) * 8.0 * shape.properties.principal_moments.mean()
    view = make_view([shape], [(0.0, 0.6, 0.0)], ang_mom=ang_mom)
    options = GizmoOptions(angular_momentum=True, principal_axes=False, collision_hulls=True)
    batches = renderer.gizmos.batches
    far = OrbitCamera(target=(0.0, 0.6, 0.0), yaw=0.6, pitch=0.45, distance=40.0)
    render(gl, view, far, options)
    assert batches["thin_arrows"].count == 1 and batches["thin_tubes"].count >= 12
    assert batches["shafts"].count == batches["heads"].count == 0
    near = OrbitCamera(target=(0.0, 0.6, 0.0), yaw=0.6, pitch=0.45, distance=0.9)
    image = render(gl, view, near, options)
    assert batches["thin_arrows"].count == 0 and batches["heads"].count == 1
    assert batches["shafts"].count >= 1 + 12 - batches["thin_tubes"].count
    assert gold(image.reshape(-1, 3)).sum() > 200  # the thick L arrow is drawn


def test_the_bounding_box_gizmo_outlines_the_box_along_the_principal_axes(gl):
    """A box's bounding box along its principal axes is the box: the cyan outline runs along its
    edges (8 of 12 face the camera), and the face between them is unchanged."""
    shapes = [box()]
    pos = [(0.0, 0.3, 0.0)]
    view = make_view(shapes, pos)
    on = render(gl, view, CAMERA, GizmoOptions(angular_momentum=False, principal_axes=False,
                                               bounding_box=True))
    off = render(gl, view, CAMERA, OFF)
    mids = box_edge_midpoints(pos[0])
    rgb = pixels(on, CAMERA, mids)
    cyan = (rgb[:, 1] > rgb[:, 0] + 40) & (rgb[:, 2] > rgb[:, 0] + 40)
    changed = np.abs(pixels(off, CAMERA, mids) - rgb).max(axis=1) > 40
    assert np.count_nonzero(cyan & changed) >= 8, rgb
    face = np.array(pos[0]) + [0.08, 0.05, 0.1]
    assert np.abs(pixels(off, CAMERA, [face]) - pixels(on, CAMERA, [face])).max() < 10


def test_container_edges_follow_the_camera_and_the_container(gl):
    """The edges' instances are kept while the container and the camera stay put, and made
    again when either changes: a gizmo set made from scratch for the new pose has the same."""
    renderer, _ = gl
    view = make_view([box()], [[0.0, 0.5, 0.0]], container_size=(2.0, 1.0, 2.0))
    near, far = OrbitCamera(distance=4.0), OrbitCamera(distance=40.0)

    def edges(gizmos, camera, size=(2.0, 1.0, 2.0)):
        parts = {"thin_tubes": [], "shafts": []}
        gizmos._camera, gizmos._height = camera, SIZE[1]
        gizmos._container_edges(np.array(size), parts)
        return np.concatenate(parts["thin_tubes"] + parts["shafts"])

    render(gl, view, near, OFF)
    kept = edges(renderer.gizmos, near)
    assert kept.tobytes() == edges(renderer.gizmos, near).tobytes()
    fresh = Gizmos(renderer.ctx)
    try:
        for camera, size in ((far, (2.0, 1.0, 2.0)), (near, (3.0, 1.0, 2.0))):
            moved = edges(renderer.gizmos, camera, size)
            assert moved.tobytes() != kept.tobytes()
            np.testing.assert_array_equal(moved, edges(fresh, camera, size))
    finally:
        fresh.release()


def test_set_uniforms_writes_each_new_value_and_skips_others(gl):
    """A value is written as the uniform's numbers; the same value again leaves it; a changed
    one is written; names the program does not use are ignored."""
    renderer, _ = gl
    program = renderer.floor_prog
    set_uniforms(program, {"u_wall_color": (0.25, 0.5, 0.75), "u_unused": 3})
    assert program["u_wall_color"].value == (0.25, 0.5, 0.75)
    set_uniforms(program, {}, u_wall_color=np.array([0.25, 0.5, 0.75]))
    assert program["u_wall_color"].value == (0.25, 0.5, 0.75)
    set_uniforms(program, {}, u_wall_color=[1.0, 0.5, 0.0])
    assert program["u_wall_color"].value == (1.0, 0.5, 0.0)
    matrix = np.arange(16, dtype=float).reshape(4, 4)
    set_uniforms(program, {"u_vp": matrix})
    assert program["u_vp"].value == tuple(matrix.ravel())
