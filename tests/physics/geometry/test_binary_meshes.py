"""The direct binary PLY reader gives trimesh's arrays exactly, the STL reader the same triangles
with each distinct corner once (which clean to the same mesh), and both step aside (None) for
every layout they do not handle, so trimesh reads those as before."""

import io

import numpy as np
import pytest
import trimesh

from physics.geometry.binary_meshes import read_binary_ply, read_binary_stl
from physics.geometry.meshes import (
    MERGE_DIGITS,
    MERGE_TOLERANCE,
    _flatten,
    clean_mesh,
    read_triangles,
)
from tests.paths import REPO


def trimesh_arrays(data: bytes, ftype: str):
    return _flatten(trimesh.load_scene(io.BytesIO(data), file_type=ftype, process=False))


def lumpy_sphere():
    s = trimesh.creation.icosphere(subdivisions=2, radius=0.1)
    v = np.asarray(s.vertices) * (1 + 0.1 * np.sin(7 * np.asarray(s.vertices)[:, :1]))
    return v, np.asarray(s.faces)


def ply_bytes(vertices, faces, order="<", count="u1", index="i4", extra=True):
    """A binary PLY written by hand: x, y, z (float32) and optionally a normal and a colour."""
    fields = [("x", "f4"), ("y", "f4"), ("z", "f4")]
    if extra:
        fields = [("nx", "f4")] + fields + [("red", "u1"), ("alpha", "u1")]
    vtype = np.dtype([(k, order + t) for k, t in fields])
    rows = np.zeros(len(vertices), vtype)
    for k, c in zip("xyz", vertices.T):
        rows[k] = c
    ftype = np.dtype([("n", order + count), ("i", order + index, 3)])
    frows = np.zeros(len(faces), ftype)
    frows["n"] = 3
    frows["i"] = faces
    names = {"f4": "float", "u1": "uchar", "i4": "int", "u4": "uint", "u2": "ushort"}
    header = ["ply", f"format binary_{'little' if order == '<' else 'big'}_endian 1.0",
              "comment hand-written", f"element vertex {len(vertices)}"]
    header += [f"property {names[t]} {k}" for k, t in fields]
    header += [f"element face {len(faces)}",
               f"property list {names[count]} {names[index]} vertex_indices", "end_header"]
    return ("\n".join(header) + "\n").encode() + rows.tobytes() + frows.tobytes()


@pytest.mark.parametrize("order,count,index,extra", [("<", "u1", "i4", False),
                                                     ("<", "u1", "u4", True),
                                                     (">", "u2", "i4", True)])
def test_binary_ply_reads_as_trimesh_reads_it(order, count, index, extra):
    vertices, faces = lumpy_sphere()
    data = ply_bytes(vertices, faces, order, count, index, extra)
    ours = read_binary_ply(data)
    assert ours is not None
    expected = trimesh_arrays(data, "ply")
    for a, b in zip(ours, expected):
        assert a.dtype == b.dtype
        np.testing.assert_array_equal(a, b)


def test_trimesh_exported_ply_reads_as_trimesh_reads_it():
    mesh = trimesh.Trimesh(*lumpy_sphere(), process=False)
    data = mesh.export(file_type="ply")
    ours = read_binary_ply(data)
    assert ours is not None
    for a, b in zip(ours, trimesh_arrays(data, "ply")):
        assert a.dtype == b.dtype
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("path", [None, REPO / "assets" / "meshes" / "wing_nut.stl"])
def test_binary_stl_keeps_each_distinct_corner_once_and_cleans_to_trimesh_s_mesh(path):
    """The triangles' corners are trimesh's, coordinate for coordinate, but a corner shared by
    several triangles is one vertex (in the order of its first copy, not a third of them);
    cleaned, the mesh is the one trimesh's arrays give, warnings included — also with 0.0 and
    −0.0 among the coordinates."""
    if path is None:
        vertices, faces = lumpy_sphere()
        vertices[np.abs(vertices) < 0.03] *= 0.0  # some 0.0 and some −0.0
        data = trimesh.Trimesh(vertices, faces, process=False).export(file_type="stl")
    else:
        data = path.read_bytes()
    ours = read_binary_stl(data)
    assert ours is not None
    expected = trimesh_arrays(data, "stl")
    assert ours[0].dtype == expected[0].dtype and ours[1].dtype == expected[1].dtype
    np.testing.assert_array_equal(ours[0][ours[1]], expected[0][expected[1]])
    assert len(ours[0]) < len(expected[0]) / 2
    _, first = np.unique(ours[1].ravel(), return_index=True)
    assert np.all(np.diff(first) > 0)  # numbered in the order of first copies
    mine, theirs = (clean_mesh("part.stl", None, *arrays) for arrays in (ours, expected))
    np.testing.assert_array_equal(mine.vertices, theirs.vertices)
    np.testing.assert_array_equal(mine.faces, theirs.faces)
    assert (mine.watertight, mine.warnings) == (theirs.watertight, theirs.warnings)


def test_an_stl_with_a_nan_keeps_every_corner_so_the_message_counts_them():
    vertices, faces = lumpy_sphere()
    vertices[faces[0, 0]] = np.nan
    data = trimesh.Trimesh(vertices, faces, process=False).export(file_type="stl")
    ours = read_binary_stl(data)
    for a, b in zip(ours, trimesh_arrays(data, "stl")):
        np.testing.assert_array_equal(a, b)


def test_layouts_it_does_not_handle_are_left_to_trimesh():
    vertices, faces = lumpy_sphere()
    mesh = trimesh.Trimesh(vertices, faces, process=False)
    good = ply_bytes(vertices, faces)
    assert read_binary_ply(good[:-len(faces) * 13]) is None  # cut short
    assert read_binary_ply(mesh.export(file_type="ply", encoding="ascii")) is None
    assert read_binary_ply(good + b"\n") is None          # trailing bytes
    assert read_binary_ply(good.replace(b"vertex_indices", b"corner_list")) is None
    assert read_binary_stl(mesh.export(file_type="stl_ascii").encode()) is None
    assert read_binary_stl(mesh.export(file_type="stl")[:-10]) is None
    # a quad: the count byte says 4
    header, body = good.split(b"end_header\n")
    face_start = len(body) - len(faces) * 13
    body = bytearray(body)
    body[face_start] = 4
    assert read_binary_ply(header + b"end_header\n" + bytes(body)) is None


def test_shipped_ply_reads_alike_both_ways():
    path = REPO / "assets" / "meshes" / "icosahedron.ply"
    data = path.read_bytes()
    ours = read_binary_ply(data)
    expected = trimesh_arrays(data, "ply")
    if ours is not None:
        for a, b in zip(ours, expected):
            np.testing.assert_array_equal(a, b)
    _, _, vertices, faces = read_triangles(path)
    np.testing.assert_array_equal(vertices, expected[0])
    np.testing.assert_array_equal(faces, expected[1])


def test_merge_constants_are_trimesh_s():
    assert MERGE_TOLERANCE == trimesh.tol.merge
    assert MERGE_DIGITS == trimesh.util.decimal_to_digits(trimesh.tol.merge)
