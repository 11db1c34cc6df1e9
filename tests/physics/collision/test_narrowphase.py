"""Narrow phase: manifolds of sphere and hull pairs against exact geometry."""

import numpy as np

from physics.collision.contact import BodySet
from physics.collision.manifolds import ManifoldCache
from physics.collision.narrowphase import _APART, _NARROW, _sort_pairs, body_contacts
from physics.geometry.rotation import (
    quat_from_axis_angle,
    quat_normalize,
    quat_to_matrix,
)
from physics.model import BodyDef, Model, WorldDef
from physics.settings import SPECULATIVE_MARGIN
from tests.physics.bodies import box_body, box_corners, box_heap, round_hull
from tests.physics.collision.planes import with_world_planes

H = 1.0 / 240.0


def sphere(radius=0.5, **kwargs):
    return BodyDef(mass=1.0, principal_moments=[0.1, 0.1, 0.1], radius=radius, **kwargs)


def contacts(bodies, pos, quat=None, vel=None):
    model = Model(WorldDef())
    for i, body in enumerate(bodies):
        model.append(i, body)
    n = len(bodies)
    pos = np.asarray(pos, dtype=float)
    quat = np.tile([1.0, 0, 0, 0], (n, 1)) if quat is None else np.asarray(quat, dtype=float)
    vel = np.zeros((n, 3)) if vel is None else np.asarray(vel, dtype=float)
    pairs = np.array([[i, j] for i in range(n) for j in range(i + 1, n)], dtype=np.int64)
    return body_contacts(pairs, pos, quat_to_matrix(quat), vel, np.zeros((n, 3)), model, H)


def test_spheres_touch_along_the_line_of_centres():
    c = contacts([sphere(0.5), sphere(0.3)], [[0, 0, 0], [0.55, 0.55, 0]])
    gap = np.sqrt(2 * 0.55**2) - 0.8
    assert c.count == 1 and np.isclose(c.separation[0], gap)
    # the normal points from the second body into the first
    assert np.allclose(c.normal[0], -np.array([1, 1, 0]) / np.sqrt(2))
    assert c.body[0] == 0 and c.other[0] == 1
    assert contacts([sphere(0.5), sphere(0.3)], [[0, 0, 0], [0.9, 0, 0]]).count == 0


def test_box_resting_on_box_touches_at_four_corners_of_the_smaller_face():
    c = contacts([box_body(size=(1.0, 1.0, 1.0)), box_body(size=(0.5, 0.5, 0.5))],
                 [[0, 0.5, 0], [0.1, 1.25, 0.1]])
    assert c.count == 4 and np.allclose(c.separation, 0.0)
    upward = np.where(c.body == 1, 1.0, -1.0)[:, None] * c.normal
    assert np.allclose(upward, [0, 1, 0])
    assert np.allclose(c.point[:, 1], 1.0)
    assert np.allclose(np.sort(c.point[:, 0]), [-0.15, -0.15, 0.35, 0.35])
    assert len(set(c.key.tolist())) == 4 and np.all(c.key < 0)


def test_penetrating_tilted_box_reports_its_depth():
    q = quat_from_axis_angle(np.array([0.0, 0.0, 1.0]), np.pi / 4)
    # a cube standing on an edge, sunk 1 cm into a wide slab
    top = 0.5 + np.sqrt(0.5) * 1.0 - 0.01
    c = contacts([BodyDef(mass=1.0, principal_moments=[1, 1, 1], hull=box_corners(
        (4.0, 1.0, 4.0))), box_body()], [[0, 0.0, 0], [0, top, 0]],
        quat=[[1, 0, 0, 0], q])
    assert c.count == 2 and np.allclose(c.separation, -0.01)
    assert np.allclose(np.abs(c.point[:, 2]), 0.5)


def test_crossed_edges_give_one_contact_between_them():
    qa = quat_from_axis_angle(np.array([1.0, 0.0, 0.0]), np.pi / 4)
    qb = quat_from_axis_angle(np.array([0.0, 0.0, 1.0]), np.pi / 4)
    half_diag = np.sqrt(0.5)
    # box a: edge along x on top; box b: edge along z at the bottom, 2 mm above it
    c = contacts([box_body(), box_body()], [[0, 0, 0], [0, 2 * half_diag + 0.002, 0]],
                 quat=[qa, qb])
    assert c.count == 1
    assert np.isclose(c.separation[0], 0.002)
    assert np.allclose(np.abs(c.normal[0]), [0, 1, 0], atol=1e-9)
    assert np.allclose(c.point[0], [0, half_diag + 0.001, 0], atol=1e-9)


def test_sphere_on_box_face_edge_and_corner():
    box = box_body()
    for centre, closest in (([0.2, 0.9, 0.1], [0.2, 0.5, 0.1]),
                            ([0.8, 0.8, 0.0], [0.5, 0.5, 0.0]),
                            ([0.75, 0.75, 0.75], [0.5, 0.5, 0.5])):
        centre = np.array(centre)
        c = contacts([box, sphere(0.5)], [[0, 0, 0], centre])
        dist = np.linalg.norm(centre - closest)
        assert c.count == 1 and c.body[0] == 1 and np.isclose(c.separation[0], dist - 0.5)
        assert np.allclose(c.normal[0], (centre - closest) / dist)
    # centre inside the box: out through the nearest face
    c = contacts([box, sphere(0.5)], [[0, 0, 0], [0.0, 0.4, 0.0]])
    assert np.allclose(c.normal[0], [0, 1, 0]) and np.isclose(c.separation[0], -0.6)


def test_fast_box_far_away_is_already_a_speculative_contact():
    bodies = [box_body(size=(0.2, 0.2, 0.2)), box_body(size=(0.2, 0.2, 0.2))]
    pos = [[0, 0.1, 0], [0.4, 0.1, 0]]
    assert contacts(bodies, pos).count == 0
    c = contacts(bodies, pos, vel=[[0, 0, 0], [-40.0, 0, 0]])
    assert c.count == 4 and np.allclose(c.separation, 0.2)


def test_pruned_edge_query_changes_no_decision():
    """The edge query skips edges whose separation bound (inner radii, Gauss-map arcs) cannot
    reach the speculative distance nor beat the faces: against the unpruned query on random
    pairs of round and T-shaped hulls, its answer is identical whenever that answer matters,
    and otherwise it matters no more than the full one."""
    from physics.collision.narrowphase import (
        _MAX_EDGES,
        _MAX_FACES,
        FACE_PREFERENCE,
        _edge_query,
        _face_query,
        world_hulls,
    )
    from physics.geometry.meshes import builtin_shape
    from physics.geometry.rotation import quat_normalize

    rng = np.random.default_rng(2)
    shapes = [builtin_shape(kind) for kind in ("cylinder", "t_handle", "box")]
    mattered = 0
    for _ in range(300):
        model = Model(WorldDef())
        for i in range(2):
            model.append(i, shapes[rng.integers(3)].body_def(np.zeros(3)))
        direction = rng.normal(size=3)
        direction /= np.linalg.norm(direction)
        pos = np.array([np.zeros(3), direction * rng.uniform(0.3, 1.0) * model.bound_radius.sum()])
        rotm = quat_to_matrix(quat_normalize(rng.normal(size=(2, 4))))
        hulls, spec = world_hulls(pos, rotm, model, np.arange(2)), 0.01
        face_best = max(_face_query(0, 1, pos, rotm, hulls)[0],
                        _face_query(1, 0, pos, rotm, hulls)[0])

        def query(spec, axis):
            return _edge_query(0, 1, pos, rotm, hulls, spec, face_best,
                               np.empty((10, _MAX_EDGES)), np.empty(_MAX_EDGES, dtype=np.int64),
                               np.empty((2, _MAX_FACES, 3)), axis)
        full_axis, pruned_axis = np.empty(3), np.empty(3)
        full, pruned = query(-np.inf, full_axis), query(spec, pruned_axis)
        if full[0] >= spec or full[0] > face_best + FACE_PREFERENCE:
            mattered += 1
            assert pruned == full and np.array_equal(pruned_axis, full_axis)
        else:
            assert pruned[0] < spec and pruned[0] <= face_best + FACE_PREFERENCE
    assert mattered > 30


def test_a_ball_beyond_a_face_plane_is_dismissed_with_the_verdict_the_closest_point_gives():
    """``_closest_on_hull`` stops at a face plane farther than ``far``: what it returns then is
    at least far and at most the distance (to rounding), which is beyond far − _FAR_MARGIN (so a
    ball's pair dismissed by the plane is one the closest point would have dismissed); nearer,
    it returns the closest point's distance, point and face, bit for bit."""
    from physics.collision.narrowphase import (
        _FAR_MARGIN,
        _MAX_FACES,
        _closest_on_hull,
        world_hulls,
    )
    from physics.geometry.meshes import builtin_shape
    from physics.geometry.rotation import quat_normalize

    rng = np.random.default_rng(9)
    model = Model(WorldDef())
    model.append(0, builtin_shape("t_handle").body_def(np.zeros(3)))
    rotm = quat_to_matrix(quat_normalize(rng.normal(size=(1, 4))))
    pos, planes = np.zeros((1, 3)), np.empty((_MAX_FACES, 4))
    hulls = world_hulls(pos, rotm, model, np.arange(1))
    cut = whole = 0
    for _ in range(400):
        c = rng.normal(size=3) * rng.uniform(0.05, 1.5) * model.bound_radius[0]
        full_q, q = np.zeros(3), np.zeros(3)
        full, full_face = _closest_on_hull(c, 0, hulls, pos, rotm, planes, full_q, np.inf)
        far = full + rng.uniform(-0.05, 0.02)
        dist, face = _closest_on_hull(c, 0, hulls, pos, rotm, planes, q, far)
        if dist >= far:
            cut += 1
            assert dist <= full + 1e-12 and full >= far - _FAR_MARGIN
        else:
            whole += 1
            assert (dist, face) == (full, full_face) and np.array_equal(q, full_q)
    assert cut > 50 and whole > 50


def test_face_query_skipping_faces_turned_away_finds_the_exact_best_face():
    """Against the brute force (every face of one hull against every vertex of the other):
    the same largest separation and the same first face reaching it."""
    from physics.collision.narrowphase import _face_query, world_hulls
    from physics.geometry.meshes import builtin_shape
    from physics.geometry.rotation import quat_normalize

    rng = np.random.default_rng(4)
    shapes = [builtin_shape(kind) for kind in ("cylinder", "t_handle", "box")]
    for _ in range(200):
        model = Model(WorldDef())
        for i in range(2):
            model.append(i, shapes[rng.integers(3)].body_def(np.zeros(3)))
        direction = rng.normal(size=3)
        pos = np.array([np.zeros(3), direction / np.linalg.norm(direction)
                        * rng.uniform(0.3, 1.2) * model.bound_radius.sum()])
        rotm = quat_to_matrix(quat_normalize(rng.normal(size=(2, 4))))
        hulls = world_hulls(pos, rotm, model, np.arange(2))
        planes = with_world_planes(hulls, pos, rotm)
        points, normals, offsets = hulls.hull_points, planes.face_normal, planes.face_offset
        m = model
        for a, b in ((0, 1), (1, 0)):
            faces = slice(m.face_start[a], m.face_start[a + 1])
            vertices = points[m.hull_start[b]:m.hull_start[b + 1]]
            n = normals[faces][:, None, :]   # the dot products summed in the kernel's order
            brute = (n[..., 0] * vertices[:, 0] + n[..., 1] * vertices[:, 1]
                     + n[..., 2] * vertices[:, 2]).min(axis=1) - offsets[faces]
            sep, face = _face_query(a, b, pos, rotm, hulls)
            assert sep == brute.max() and face == m.face_start[a] + np.argmax(brute)


def test_contacts_are_the_same_whatever_the_thread_count(monkeypatch):
    """Pairs are shared out between threads in chunks; the contacts and their order must not
    depend on how many (a heap of overlapping boxes: many manifolds of every kind)."""
    from physics.collision import narrowphase
    from physics.collision.broadphase import candidate_pairs

    model, pos, quat, rng = box_heap()
    n = len(pos)
    rotm = quat_to_matrix(quat)
    vel = rng.uniform(-1, 1, (n, 3))
    pairs = candidate_pairs(pos, model.bound_radius + 0.05)
    found = {}
    for threads in (1, 2, 3):
        monkeypatch.setattr(narrowphase, "parallel_threads", lambda count=threads: count)
        found[threads] = body_contacts(pairs, pos, rotm, vel, np.zeros((n, 3)), model, H)
    assert found[1].count > 1000
    for threads in (2, 3):
        for field in ("body", "other", "key", "point", "normal", "separation"):
            assert np.array_equal(getattr(found[1], field), getattr(found[threads], field)), field


def round_hulls(count) -> Model:
    """A model of count different round hulls of ~0.1 m (semi-axes 0.1, 0.06, 0.08 m)."""
    model = Model(WorldDef())
    for i in range(count):
        model.append(i, BodyDef(mass=1.0, principal_moments=[0.01] * 3,
                                hull=round_hull(seed=i, semi=(0.1, 0.06, 0.08))))
    return model


def test_the_gap_along_the_line_of_centres_from_body_frame_vertices_is_the_moved_hulls_gap():
    """The gap that dismisses a pair before the narrow phase is read from the body-frame
    vertices, the axis turned into each body's frame: it equals the gap of the hulls moved into
    the world, to rounding, at random poses. Seen through the verdict: resting pairs reach
    SPECULATIVE_MARGIN, so a pair set 1e-9 m beyond it along the line of centres is dismissed
    and one 1e-9 m short of it goes on to the narrow phase."""
    rng = np.random.default_rng(11)
    model = round_hulls(2)
    still = np.zeros((2, 3))
    for _ in range(50):
        pos = rng.normal(size=(2, 3)) * 0.2
        rotm = quat_to_matrix(quat_normalize(rng.normal(size=(2, 4))))
        d = (pos[0] - pos[1]) / np.linalg.norm(pos[0] - pos[1])
        for beyond, verdict in ((1e-9, _APART), (-1e-9, _NARROW)):
            moved = [pos[i] + model.hulls.hull_points[model.hulls.hull_start[i]:
                                                      model.hulls.hull_start[i + 1]] @ rotm[i].T
                     for i in range(2)]
            gap = (moved[0] @ d).min() - (moved[1] @ d).max()
            placed = pos.copy()
            placed[1] -= (SPECULATIVE_MARGIN + beyond - gap) * d  # along d: the gap moves as much
            bodies = BodySet(model.ids, model.radius, model.bound_radius, placed, rotm, still,
                             still)
            reach, found = np.empty(1), np.empty(1, dtype=np.int64)
            _sort_pairs(np.array([[0, 1]]), bodies, model.hulls, H, ManifoldCache(), reach,
                        found, np.zeros((1, 3), dtype=np.int64))
            assert reach[0] == SPECULATIVE_MARGIN and found[0] == verdict


def test_the_enclosing_ellipsoids_dismiss_only_pairs_the_vertices_dismiss():
    """Each hull's body-frame ellipsoid holds its vertices: along random directions its extent
    is at least theirs (a cube has none: its bounding sphere is as tight). The pairs the
    ellipsoids (or a cube's sphere) dismiss before the vertices are scanned are pairs the moved
    vertices' gap dismisses: at random poses and distances (round, T-shaped, slab and cube
    hulls), every verdict is the brute force's, and the bounds alone decide many."""
    from physics.geometry.meshes import builtin_shape

    rng = np.random.default_rng(12)
    model = Model(WorldDef())
    model.append(0, BodyDef(mass=1.0, principal_moments=[0.01] * 3,
                            hull=round_hull(seed=5, semi=(0.1, 0.06, 0.08))))
    model.append(1, builtin_shape("t_handle").body_def(np.zeros(3)))
    model.append(2, BodyDef(mass=1.0, principal_moments=[0.01] * 3,
                            hull=box_corners((0.2, 0.1, 0.3))))
    model.append(3, BodyDef(mass=1.0, principal_moments=[0.01] * 3,
                            hull=box_corners((0.2, 0.2, 0.2))))
    hulls = model.hulls
    vertices = [hulls.hull_points[hulls.hull_start[i]:hulls.hull_start[i + 1]] for i in range(4)]
    assert not hulls.ellipsoid_axes[3].any()
    for i in range(3):
        assert hulls.ellipsoid_axes[i].all()
        e = rng.normal(size=(500, 3))
        e /= np.linalg.norm(e, axis=1, keepdims=True)
        ellipsoid = e @ hulls.ellipsoid_centre[i] + np.linalg.norm(e * hulls.ellipsoid_axes[i],
                                                                   axis=1)
        assert np.all(ellipsoid >= (e @ vertices[i].T).max(axis=1))
    still = np.zeros((4, 3))

    def extent(r, e):  # the bound of hull r's lowest point along the body-frame e, from 0
        if not hulls.ellipsoid_axes[r].any():
            return -model.bound_radius[r]
        return e @ hulls.ellipsoid_centre[r] - np.linalg.norm(e * hulls.ellipsoid_axes[r])

    decided = checked = 0
    for _ in range(600):
        a, b = rng.choice(4, 2, replace=False)
        pos = np.zeros((4, 3))
        rotm = quat_to_matrix(quat_normalize(rng.normal(size=(4, 4))))
        d = rng.normal(size=3)
        d /= np.linalg.norm(d)
        pos[a] = d * rng.uniform(0.1, 0.8)
        moved = [pos[i] + vertices[i] @ rotm[i].T for i in (a, b)]
        gap = (moved[0] @ d).min() - (moved[1] @ d).max()
        if abs(gap - SPECULATIVE_MARGIN) < 1e-6:
            continue  # within rounding of the threshold: the other test's business
        checked += 1
        bound = d @ (pos[a] - pos[b]) + extent(a, rotm[a].T @ d) + extent(b, rotm[b].T @ -d)
        decided += bound >= SPECULATIVE_MARGIN + 1e-6
        bodies = BodySet(model.ids, model.radius, model.bound_radius, pos, rotm, still, still)
        reach, found = np.empty(1), np.empty(1, dtype=np.int64)
        _sort_pairs(np.array([[a, b]]), bodies, hulls, H, ManifoldCache(), reach, found,
                    np.zeros((1, 3), dtype=np.int64))
        assert found[0] == (_APART if gap >= SPECULATIVE_MARGIN else _NARROW)
    assert checked > 500 and decided > 150


def test_only_the_hulls_of_pairs_the_gap_leaves_are_moved_into_the_world():
    """Two hulls close together and a third far from both (its bounding sphere within reach of
    theirs, as a fast body's is): the close pair's hulls are moved into the world buffer and
    give contacts; the far hull's rows of the buffer are never written."""
    model = round_hulls(3)
    pos = np.array([[0.0, 0.0, 0.0], [0.0, 0.11, 0.0], [0.5, 0.0, 0.0]])
    rotm = quat_to_matrix(np.tile([1.0, 0.0, 0.0, 0.0], (3, 1)))
    # the far hull flies at 40 m/s: its speculative reach (0.26 m) nearly spans the 0.31 m gap
    vel = np.array([[0.0, 0.0, 0.0], [0.0, 0.0, 0.0], [-40.0, 0.0, 0.0]])
    world = model.world_hulls_buffer
    world.hull_points[:] = np.nan
    pairs = np.array([[0, 1], [0, 2], [1, 2]], dtype=np.int64)
    found = body_contacts(pairs, pos, rotm, vel, np.zeros((3, 3)), model, H)
    assert found.count > 0 and set(found.body.tolist()) | set(found.other.tolist()) == {0, 1}
    far = slice(model.hulls.hull_start[2], model.hulls.hull_start[3])
    assert np.isnan(world.hull_points[far]).all()
    near = slice(model.hulls.hull_start[0], model.hulls.hull_start[2])
    assert np.isfinite(world.hull_points[near]).all()


def test_the_inner_radius_is_the_centres_distance_to_the_nearest_face_plane():
    """The inner radius the face and edge queries bound separations with is the body frame's
    (the least face offset), shared by the world set: at random poses far from the origin it
    is the least of offset − n·x over the face planes as the narrow phase moves them, to
    rounding (which the queries' margin covers). A sphere's row (no faces) holds +inf and a
    ball of the radius about the centre lies inside the hull."""
    from physics.collision.narrowphase import world_hulls

    model = round_hulls(3)
    model.append(3, sphere(0.2))
    rng = np.random.default_rng(4)
    for _ in range(10):
        pos = rng.uniform(-50.0, 50.0, size=(4, 3))
        rotm = quat_to_matrix(quat_normalize(rng.normal(size=(4, 4))))
        hulls = world_hulls(pos, rotm, model, np.arange(4))
        planes = with_world_planes(hulls, pos, rotm)
        assert hulls.inner_radius is model.hulls.inner_radius
        for r in range(3):
            faces = slice(hulls.face_start[r], hulls.face_start[r + 1])
            n, offset = planes.face_normal[faces], planes.face_offset[faces]
            brute = (offset - (n[:, 0] * pos[r, 0] + n[:, 1] * pos[r, 1]
                               + n[:, 2] * pos[r, 2])).min()
            assert abs(brute - hulls.inner_radius[r]) < 1e-12
            assert brute > 0.05  # the ellipsoid's least semi-axis is 0.06 m
        assert hulls.inner_radius[3] == np.inf
