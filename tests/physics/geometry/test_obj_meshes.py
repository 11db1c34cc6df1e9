"""The compiled OBJ reader gives trimesh's arrays exactly — for the shipped meshes and for files
with negative indices, texture and normal indices, comments, objects and groups, unused
vertices, exponents — and steps aside (None) for every layout it does not handle, so trimesh
reads those as before."""

import io

import numpy as np
import pytest
import trimesh
from hypothesis import given, settings
from hypothesis import strategies as st

from physics.geometry.meshes import _flatten, clean_mesh, load_mesh, read_triangles
from physics.geometry.obj_meshes import read_obj
from tests.paths import REPO

MESHES = REPO / "assets" / "meshes"


def trimesh_arrays(data: bytes):
    return _flatten(trimesh.load_scene(io.BytesIO(data), file_type="obj", process=False))


def assert_reads_as_trimesh(data: bytes):
    ours = read_obj(data)
    assert ours is not None, "the fast path stepped aside"
    expected = trimesh_arrays(data)
    for a, b in zip(ours, expected):
        assert a.dtype == b.dtype and a.shape == b.shape
        np.testing.assert_array_equal(a, b)
    return ours


def lumpy_sphere(subdivisions=2):
    s = trimesh.creation.icosphere(subdivisions=subdivisions, radius=0.1)
    v = np.asarray(s.vertices) * (1 + 0.1 * np.sin(7 * np.asarray(s.vertices)[:, :1]))
    return v, np.asarray(s.faces)


def obj_text(vertices, faces, corner="{v}", head="", vertex_format="{:.8f}"):
    """OBJ text: vertex lines, then face lines with each corner written by ``corner`` (v: the
    1-based vertex index, k: 1 or 2 by the corner's place in its face, for texture and normal
    indices: a vertex gets several)."""
    lines = [head] if head else []
    lines += ["v " + " ".join(vertex_format.format(c) for c in row) for row in vertices]
    lines += ["vt 0.5 0.5", "vt 0.25 0.75", "vn 0 0 1", "vn 0 1 0"]
    for face in faces:
        lines.append("f " + " ".join(corner.format(v=i + 1, k=1 + (place % 2))
                                     for place, i in enumerate(face)))
    return ("\n".join(lines) + "\n").encode()


@pytest.mark.parametrize("name", ["open_cup.obj", "t_handle.obj", "torus.obj"])
def test_the_shipped_obj_meshes_read_as_trimesh_reads_them(name):
    assert_reads_as_trimesh((MESHES / name).read_bytes())


@pytest.mark.parametrize("corner", ["{v}", "{v}/{k}", "{v}//{k}", "{v}/{k}/{k}"])
def test_texture_and_normal_indices_split_vertices_as_trimesh_does(corner):
    vertices, faces = lumpy_sphere()
    vertices_read, _ = assert_reads_as_trimesh(obj_text(vertices, faces, corner))
    if corner != "{v}":  # (vertex, texture, normal) references made vertices of their own
        assert len(vertices_read) > len(vertices)


def test_negative_indices_count_back_from_the_last_vertex():
    vertices, faces = lumpy_sphere(1)
    negative = faces - len(vertices)  # -n … -1
    lines = [b"v " + b" ".join(b"%.8f" % c for c in row) for row in vertices]
    lines += [b"f " + b" ".join(b"%d" % i for i in face) for face in negative]
    text = b"\n".join(lines) + b"\n"
    _, faces_read = assert_reads_as_trimesh(text)
    np.testing.assert_array_equal(faces_read, faces)


def test_comments_objects_groups_unused_vertices_and_exponents():
    vertices, faces = lumpy_sphere(1)
    text = (b"# exported by hand\nmtllib parts.mtl\no part\ng outside\nusemtl steel\ns 1\n"
            + obj_text(vertices, faces, vertex_format="{:.6e}", head="# the ball")
            + b"# the end\nv 1e-3 2.5E+1 -0\n")
    vertices_read, _ = assert_reads_as_trimesh(text)
    assert len(vertices_read) == len(vertices)  # the unused last vertex is dropped


def test_windows_line_ends_and_a_last_line_without_one():
    vertices, faces = lumpy_sphere(1)
    assert_reads_as_trimesh(obj_text(vertices, faces).replace(b"\n", b"\r\n").rstrip())


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.floats(1e-6, 1e6), st.sampled_from([-1.0, 1.0, 0.0])),
                min_size=12, max_size=12),
       st.sampled_from(["{:.8f}", "{:.15g}", "{!r}", "{:.3e}", "{:.0f}"]))
def test_coordinates_are_the_correctly_rounded_doubles_trimesh_reads(values, style):
    """Each written number is read as Python (and trimesh, with strtod) reads it — or the file
    is left to trimesh when a number has more digits than can be read exactly."""
    vertices = np.array([size * sign for size, sign in values]).reshape(4, 3)
    text = obj_text(vertices, [[0, 1, 2], [0, 2, 3], [0, 3, 1], [1, 3, 2]],
                    vertex_format=style)
    ours = read_obj(text)
    if ours is None:  # 16 or 17 significant digits ({!r}): trimesh's reading
        assert style == "{!r}"
        return
    written = [[float(style.format(c)) for c in row] for row in vertices]
    np.testing.assert_array_equal(ours[0], written)
    np.testing.assert_array_equal(ours[0], trimesh_arrays(text)[0])


@pytest.mark.parametrize("change", [
    (b"f 1 2 3\n", b"f 1 2 3 4\n"),                    # a quad
    (b"s 1\n", b"usemtl a\nf 1 2 3\nusemtl b\n"),     # two materials
    (b"v 1e-3 2.5E+1 -0\n", b"v 1e-3 2.5E+1 -0 1 0 0\n"),  # a vertex colour
    (b"v 1e-3", b"v 0.12345678901234567"),             # 17 digits
    (b"v 1e-3 2.5E+1", b"v 1e-3\t2.5E+1"),             # a tab
    (b"# exported by hand\n", b"# exported by hand \\\n"),  # a continued comment
    (b"f 1 2 3\n", b"f 1 2 99999\n"),                  # an index out of range
    (b"s 1\n", b"s 1\n  v 1 2 3\n"),                   # an indented line
    (b"s 1\n", b"s 1\nl 1 2\n"),                        # a line element
    (b"f 1 2 3\n", b"f 1  2 3\n"),                      # two spaces
])
def test_layouts_it_does_not_handle_are_left_to_trimesh(change, tmp_path):
    base = (b"# exported by hand\nv 1e-3 2.5E+1 -0\nv 1 0 0\nv 0 1 0\nv 0 0 1\ns 1\n"
            b"f 1 2 3\nf 1 3 4\nf 1 4 2\nf 2 4 3\n")
    assert read_obj(base) is not None
    old, new = change
    assert old in base
    assert read_obj(base.replace(old, new, 1)) is None


def test_a_loaded_obj_mesh_is_what_trimesh_reading_and_cleaning_give(tmp_path):
    """End to end: ``load_mesh`` of an OBJ (now read by the fast path) equals the mesh cleaned
    from trimesh's reading — vertices, faces, closedness and warnings."""
    vertices, faces = lumpy_sphere(4)
    path = tmp_path / "ball.obj"
    data = obj_text(vertices, faces[::-1], corner="{v}/{k}")  # split vertices, face order
    path.write_bytes(data)
    mesh = load_mesh(path)
    expected = clean_mesh("ball.obj", str(path), *trimesh_arrays(data))
    np.testing.assert_array_equal(mesh.vertices, expected.vertices)
    np.testing.assert_array_equal(mesh.faces, expected.faces)
    assert (mesh.watertight, mesh.warnings) == (expected.watertight, expected.warnings)
    assert read_triangles(path)[3].shape == (len(faces), 3)
