"""The compiled mesh cleaning gives exactly what the sorting-based one gave: the same vertices,
faces (so the same winding), watertightness, warnings and errors, for every shipped mesh and for
generated broken ones (duplicates, flipped patches, holes, slivers, non-manifold edges, nested
pieces, one-sided strips), and for random damage to a sphere (hypothesis)."""

import numpy as np
import pytest
import trimesh
from hypothesis import given, settings
from hypothesis import strategies as st

from physics.geometry.inertia import mass_properties
from physics.geometry.meshes import MeshError, clean_mesh, read_triangles
from tests.paths import REPO
from tests.physics.geometry.clean_reference import clean_mesh as reference_clean_mesh

ASSETS = sorted((REPO / "assets" / "meshes").iterdir())


def outcome(clean, vertices, faces):
    """(vertices, faces, watertight, warnings) of a cleaning, or the MeshError's message."""
    try:
        mesh = clean("broken.obj", None, np.array(vertices, dtype=float),
                     np.array(faces, dtype=np.int64))
    except MeshError as e:
        return str(e)
    return mesh.vertices, mesh.faces, mesh.watertight, mesh.warnings


def assert_same_cleaning(vertices, faces):
    ours = outcome(clean_mesh, vertices, faces)
    expected = outcome(reference_clean_mesh, vertices, faces)
    if isinstance(expected, str):
        assert ours == expected
        return
    assert not isinstance(ours, str), ours
    assert ours[0].dtype == expected[0].dtype and ours[1].dtype == expected[1].dtype
    np.testing.assert_array_equal(ours[0], expected[0])
    np.testing.assert_array_equal(ours[1], expected[1])
    assert ours[2:] == expected[2:]


def sphere(subdivisions=2, radius=0.1, centre=(0.0, 0.0, 0.0)):
    s = trimesh.creation.icosphere(subdivisions=subdivisions, radius=radius)
    return np.asarray(s.vertices) + centre, np.asarray(s.faces, dtype=np.int64)


def unmerged(vertices, faces):
    """Every corner its own vertex, as STL stores them."""
    return vertices[faces.ravel()], np.arange(3 * len(faces)).reshape(-1, 3)


def join(*pieces):
    vertices, faces, count = [], [], 0
    for v, f in pieces:
        vertices.append(v)
        faces.append(f + count)
        count += len(v)
    return np.vstack(vertices), np.vstack(faces)


@pytest.mark.parametrize("path", ASSETS, ids=[p.name for p in ASSETS])
def test_every_shipped_mesh_cleans_as_before(path):
    _, _, vertices, faces = read_triangles(path)
    assert_same_cleaning(vertices, faces)


def patch(faces, count):
    """Indices of ``count`` faces grown from face 0 through shared vertices (a connected
    patch)."""
    chosen = [0]
    while len(chosen) < count:
        near = np.flatnonzero(np.isin(faces, faces[chosen]).any(axis=1))
        chosen += [int(t) for t in near if t not in chosen][:count - len(chosen)]
    return np.array(sorted(chosen))


def broken_meshes():
    v, f = sphere()
    flipped = f.copy()
    flipped[patch(f, 30)] = flipped[patch(f, 30)][:, ::-1]
    cup = f[v[f].mean(axis=1)[:, 2] < 0.05]
    # a sliver closing a T-junction: a vertex on the middle of an edge, splitting one side
    a, b, c = f[0]
    mid = len(v)
    t_vertices = np.vstack([v, (v[a] + v[b]) / 2])
    t_faces = np.vstack([np.delete(f, [0], axis=0), [[a, mid, c], [mid, b, c], [a, b, mid]]])
    # non-manifold: a fin (two triangles) hanging on one edge of the sphere
    fin_v = np.vstack([v, v[a] * 1.5, v[b] * 1.6])
    fin_f = np.vstack([f, [[a, b, len(v)], [b, a, len(v) + 1]]])
    # one-sided strip (Möbius): a band whose cross-section turns by half a turn around it
    k = 24
    angle = np.linspace(0, 2 * np.pi, k, endpoint=False)
    centre = np.column_stack([np.cos(angle), np.sin(angle), np.zeros(k)])
    across = np.column_stack([np.cos(angle / 2) * np.cos(angle),
                              np.cos(angle / 2) * np.sin(angle), np.sin(angle / 2)]) * 0.2
    mv = np.vstack([centre - across, centre + across]) * 0.1
    i = np.arange(k)
    last = i == k - 1  # the last quad joins the first with the sides swapped
    low_next, high_next = np.where(last, k, i + 1), np.where(last, 0, i + 1 + k)
    mf = np.vstack([np.column_stack([i, low_next, high_next]),
                    np.column_stack([i, high_next, i + k])])
    rng = np.random.default_rng(3)
    return {
        "stl-like unmerged corners": unmerged(v, f),
        "duplicate faces, rotated": (v, np.vstack([f, np.roll(f[:7], 1, axis=1)])),
        "two-sided duplicate": (v, np.vstack([f, f[:5, ::-1]])),
        "flipped patch": (v, flipped),
        "random flips": (v, np.where(rng.random(len(f))[:, None] < 0.3, f[:, ::-1], f)),
        "inside out": (v, f[:, ::-1]),
        "hole": (v, f[5:]),
        "open cup with flips": (v, np.where(rng.random(len(cup))[:, None] < 0.2, cup[:, ::-1],
                                            cup)),
        "collapsed faces": (v, np.vstack([f, [[0, 0, 1], [2, 3, 3]]])),
        "unreferenced vertices": (np.vstack([v, [[5.0, 5.0, 5.0]]]), f),
        "near-duplicate vertices": (np.vstack([v, v[:10] + 1e-12]),
                                    np.where(f < 10, f + len(v), f)),
        # coordinates that scale to exactly k + ½ (rounded half to even, as numpy rounds)
        "half-way rounding": (np.vstack([v, np.array([[0.5, 1.5, 2.5]]) * 2.0 ** -27
                                         + v[:1], v[:1] + 2.0 ** -28]),
                              np.vstack([f, [[len(v), 1, 2], [len(v) + 1, 2, 1]]])),
        "sliver closing a T-junction": (t_vertices, t_faces),
        "sliver in an open surface": (t_vertices, t_faces[3:]),
        "non-manifold fin": (fin_v, fin_f),
        "nested shells (cavity)": join(sphere(2, 0.2), sphere(1, 0.05)),
        "nested shells, cavity inside out": join(sphere(2, 0.2), (sphere(1, 0.05)[0],
                                                                   sphere(1, 0.05)[1][:, ::-1])),
        "two separate balls, one inside out": join(sphere(1, 0.05), (sphere(1, 0.05, (1, 0, 0))[0],
                                                                     sphere(1, 0.05)[1][:, ::-1])),
        "moebius strip": (mv, mf),
        "flat sheet": (np.array([[0, 0, 0], [1, 0, 0], [1, 1, 0], [0, 1, 0], [0.5, 0.5, 0]]) * 0.1,
                       [[0, 1, 4], [1, 2, 4], [2, 3, 4], [3, 0, 4]]),
        "all collapsed": (v, np.column_stack([f[:, 0], f[:, 0], f[:, 1]])),
        "three triangles": (v, f[:3]),
        "too large": (v * 1e6, f),
        "millimetres": (v * 1000, f),
    }


BROKEN = broken_meshes()


@pytest.mark.parametrize("case", list(BROKEN))
def test_broken_meshes_clean_as_before(case):
    vertices, faces = BROKEN[case]
    assert_same_cleaning(vertices, faces)


@pytest.mark.parametrize("case", list(BROKEN) + [p.name for p in ASSETS])
def test_a_cleaned_mesh_knows_what_the_inertia_check_finds(case):
    """``Mesh.watertight`` (which spares ``mass_properties`` its own pass over the edges) is
    exactly what that pass says of the cleaned triangles."""
    if case in BROKEN:
        vertices, faces = BROKEN[case]
    else:
        _, _, vertices, faces = read_triangles(REPO / "assets" / "meshes" / case)
    try:
        mesh = clean_mesh(case, None, np.array(vertices, dtype=float),
                          np.array(faces, dtype=np.int64))
    except MeshError:
        return  # nothing to compute the inertia of
    checked = mass_properties(mesh.vertices, mesh.faces, mode="shell")
    told = mass_properties(mesh.vertices, mesh.faces, mode="shell", watertight=mesh.watertight)
    assert checked.watertight == mesh.watertight
    assert told.to_json_dict() == checked.to_json_dict()


@settings(max_examples=60, deadline=None)
@given(st.data())
def test_random_damage_cleans_as_before(data):
    """A sphere with random faces flipped, removed, repeated and split into separate corners."""
    v, f = sphere(1)
    m = len(f)
    flip = np.array(data.draw(st.lists(st.booleans(), min_size=m, max_size=m)))
    f = np.where(flip[:, None], f[:, ::-1], f)
    removed = data.draw(st.sets(st.integers(0, m - 1), max_size=12))
    repeated = data.draw(st.lists(st.integers(0, m - 1), max_size=6))
    f = np.vstack([np.delete(f, sorted(removed), axis=0), f[repeated]])
    if data.draw(st.booleans()):
        v, f = unmerged(v, f)
    order = np.array(data.draw(st.permutations(range(len(f)))))
    assert_same_cleaning(v, f[order])


def test_big_closed_sphere_cleans_as_before():
    """A closed, consistently wound mesh of 81,920 faces (the fast path) and its STL form."""
    v, f = sphere(6)
    assert_same_cleaning(v, f)
    assert_same_cleaning(*unmerged(v, f))


@settings(max_examples=40, deadline=None)
@given(st.data())
def test_pieces_are_numbered_as_scipy_numbers_them(data):
    """The hashed edge matching and the closed-surface pass find the same pieces as a sparse
    graph's connected components, numbered alike (the root of each piece decides which side a
    winding repair keeps)."""
    from scipy.sparse import coo_matrix
    from scipy.sparse.csgraph import connected_components

    from physics.geometry.mesh_kernels import closed_pieces
    from physics.geometry.surface import EdgeReport

    balls = [sphere(1, 0.05, (0.2 * k, 0.0, 0.0)) for k in range(data.draw(st.integers(1, 4)))]
    v, f = join(*balls)
    f = f[np.array(data.draw(st.permutations(range(len(f)))))]
    report = EdgeReport(f)
    fa, fb, _ = report.face_pairs()
    graph = coo_matrix((np.ones(len(fa)), (fa, fb)), shape=(len(f), len(f)))
    expected = connected_components(graph, directed=False)[1]
    np.testing.assert_array_equal(report.components(), expected)
    closed, labels = closed_pieces(f, len(v))
    assert closed
    np.testing.assert_array_equal(labels, expected)
    removed = data.draw(st.integers(0, len(f) - 1))
    opened = np.delete(f, removed, axis=0)
    assert not closed_pieces(opened, len(v))[0]
    assert EdgeReport(opened).open == 3
