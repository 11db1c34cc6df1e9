"""Hull topology: merged planar faces, consistent orientation, edges with their two faces."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from physics.geometry.polytope import polytope
from physics.model import BodyDef, Model, WorldDef
from physics.world import World
from tests.physics.bodies import box_body, box_corners


def test_box_has_six_square_faces_and_twelve_edges():
    corners = box_corners((1.0, 2.0, 3.0))
    top = polytope(corners)
    assert len(top.face_normal) == 6 and len(top.edge) == 12
    assert np.all(np.diff(top.face_start) == 4)
    # each face: its vertices lie on its plane, every vertex is inside every plane
    for f in range(6):
        loop = top.face_vertex[top.face_start[f]:top.face_start[f + 1]]
        assert np.allclose(corners[loop] @ top.face_normal[f], top.face_offset[f])
        # counter-clockwise seen from outside: the loop's area vector points along the normal
        p = corners[loop]
        area = sum(np.cross(p[i], p[(i + 1) % 4]) for i in range(4))
        assert area @ top.face_normal[f] > 0
    assert np.all(corners @ top.face_normal.T <= top.face_offset + 1e-12)
    # an edge's two faces both contain both its vertices
    for (a, b), (f, g) in zip(top.edge, top.edge_faces):
        for face in (f, g):
            assert np.isclose(corners[a] @ top.face_normal[face], top.face_offset[face])
            assert np.isclose(corners[b] @ top.face_normal[face], top.face_offset[face])


def test_flat_hull_is_one_polygon_seen_from_both_sides():
    square = np.array([[0, 0, 0], [1, 0, 0], [1, 0, 1], [0, 0, 1]], dtype=float)
    top = polytope(square)
    assert len(top.face_normal) == 2 and np.allclose(top.face_normal[0], -top.face_normal[1])
    assert len(top.edge) == 4


def test_model_keeps_topology_rows_in_step_with_bodies():
    model = Model(WorldDef())
    model.append(0, box_body(size=(3.0, 2.0, 1.0)))
    model.append(1, BodyDef(mass=1.0, principal_moments=[1, 1, 1], radius=0.5))
    model.append(2, box_body(size=(0.7, 0.6, 0.5)))
    assert model.face_start.tolist() == [0, 6, 6, 12]
    assert model.edge_start.tolist() == [0, 12, 12, 24]
    model.delete(0)
    assert model.face_start.tolist() == [0, 0, 6] and model.edge_start.tolist() == [0, 0, 12]
    assert model.face_loop_start.tolist() == list(range(0, 28, 4))
    hull = model.hull_points[model.hull_start[1]:model.hull_start[2]]
    loops = model.face_vertex
    for f in range(6):
        p = hull[loops[model.face_loop_start[f]:model.face_loop_start[f + 1]]]
        assert np.allclose(p @ model.face_normal[f], model.face_offset[f])


def test_points_and_segments_have_no_faces():
    for hull in (np.zeros((0, 3)), np.array([[0.0, 0.1, 0.0]]),
                 np.array([[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [2.0, 0.0, 0.0]])):
        top = polytope(hull)
        assert len(top.face_normal) == 0 and len(top.edge) == 0


def noisy_prism(sides: int, noise: float, seed: int) -> np.ndarray:
    """Vertices of a prism whose caps are flat only to ``noise`` m: near-coplanar triangles as
    CAD exports have them, where "coplanar" within a tolerance is not transitive."""
    rng = np.random.default_rng(seed)
    angle = np.sort(rng.uniform(0.0, 2.0 * np.pi, sides))
    cap = np.column_stack((np.cos(angle), 0.5 + rng.normal(0.0, noise, sides), np.sin(angle)))
    return np.vstack((cap, cap * [1.0, -1.0, 1.0]))


@settings(max_examples=200, deadline=None)
@given(sides=st.integers(4, 32), exponent=st.floats(-12.0, -7.0), seed=st.integers(0, 2**32 - 1))
def test_near_coplanar_faces_still_make_a_closed_polytope(sides, exponent, seed):
    """Every edge between exactly two faces, Euler's V − E + F = 2, each face loop wound
    counter-clockwise seen from outside — the topology the narrow phase walks (this used to
    fail with an inhomogeneous-array error on such hulls, so the mesh could not be a body)."""
    vertices = noisy_prism(sides, 10.0**exponent, seed)
    top = polytope(vertices)
    faces = len(top.face_offset)
    used = np.unique(top.face_vertex)
    assert len(used) - len(top.edge) + faces == 2
    assert np.all(top.edge_faces[:, 0] != top.edge_faces[:, 1])
    for f in range(faces):
        loop = vertices[top.face_vertex[top.face_start[f]:top.face_start[f + 1]]]
        area = np.cross(loop - loop[0], np.roll(loop, -1, axis=0) - loop[0]).sum(axis=0)
        assert area @ top.face_normal[f] > 0.0


def test_a_near_coplanar_hull_becomes_a_body():
    world = World()
    hull = noisy_prism(24, 1e-9, 0)
    world.add_body(BodyDef(mass=1.0, principal_moments=[1.0, 1.0, 1.0], hull=hull,
                           position=[0.0, 1.0, 0.0]))
    world.step(1 / 240)
    assert world.count == 1 and np.all(np.isfinite(world.state.pos))


def test_the_same_hull_shares_one_read_only_topology_equal_to_a_fresh_one():
    from physics.geometry.polytope import _polytope

    hull = np.random.default_rng(5).normal(size=(40, 3))
    first, again = polytope(hull), polytope(hull.copy())
    assert first is again  # found once, however many bodies share the shape
    fresh = _polytope(hull)
    for name, array in vars(first).items():
        np.testing.assert_array_equal(array, getattr(fresh, name), err_msg=name)
        assert not array.flags.writeable, name
    moved = polytope(hull + [1e-9, 0.0, 0.0])  # other vertices: computed afresh
    assert moved is not first
