"""Hull topology: merged planar faces, consistent orientation, edges with their two faces."""

import numpy as np

from physics.geometry.polytope import polytope
from physics.model import BodyDef, Model, WorldDef
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
