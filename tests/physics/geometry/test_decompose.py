"""Convex decomposition: when a mesh is split, the split itself, and its cache on disk."""

import threading
import time

import numpy as np
import pytest
import trimesh
from scipy.spatial import ConvexHull

from physics.geometry import decompose as decompose_module
from physics.geometry.decompose import (
    DecompositionError,
    cache_folder,
    decompose,
    needs_pieces,
)
from physics.settings import DECOMPOSE_MAX_PIECES, MAX_HULL_VERTICES
from tests.paths import REPO
from tests.wall_clock import WALL_CLOCK


def torus() -> trimesh.Trimesh:
    return trimesh.creation.torus(0.3, 0.08, major_sections=24, minor_sections=8)


def test_auto_splits_a_torus_but_not_a_box_and_the_other_modes_are_what_they_say():
    box = trimesh.creation.box((0.3, 0.2, 0.1))
    ring = torus()
    assert not needs_pieces("auto", box.vertices, box.volume)
    assert needs_pieces("auto", ring.vertices, ring.volume)   # its hull fills the hole: 1.7×
    assert not needs_pieces("auto", ring.vertices, None)      # not a closed solid: its hull
    assert not needs_pieces("hull", ring.vertices, ring.volume)
    assert needs_pieces("decomposed", box.vertices, box.volume)
    with pytest.raises(ValueError, match="collision must be one of auto, hull, decomposed"):
        needs_pieces("convex", box.vertices, box.volume)


@pytest.fixture(scope="module")
def split_block(tmp_path_factory):
    """(pieces, cache file) of one L-block split by V-HACD: the tests of the cache start from a
    copy of its file instead of splitting again, and use the L, which splits 4x as fast as the
    torus (seconds each)."""
    block = l_block()
    folder = tmp_path_factory.mktemp("pieces")
    found = decompose("L", block.vertices, block.faces, block.volume, folder)
    assert not found.cached
    (path,) = folder.glob("*.npz")
    return found, path


def cached_block(split_block, folder):
    """The shared split's cache file copied into folder; its path there."""
    path = folder / split_block[1].name
    path.write_bytes(split_block[1].read_bytes())
    return path


def test_a_torus_splits_into_convex_pieces_that_leave_its_hole_empty(tmp_path):
    ring = torus()
    found = decompose("torus", ring.vertices, ring.faces, ring.volume, tmp_path)
    assert not found.cached
    assert 2 <= len(found.pieces) <= DECOMPOSE_MAX_PIECES
    assert all(4 <= len(p) <= MAX_HULL_VERTICES for p in found.pieces)
    # the pieces fill the ring, and not much more: their volumes add up to about the torus's
    assert -0.1 < found.volume_excess < 0.3
    total = sum(ConvexHull(p).volume for p in found.pieces)
    assert total / ring.volume - 1 == pytest.approx(found.volume_excess, abs=1e-12)
    # no piece reaches the middle of the hole (the axis, up to half the inner radius 0.22 m)
    for piece in found.pieces:
        hull = ConvexHull(piece)
        inside = hull.equations[:, :3] @ np.zeros(3) + hull.equations[:, 3] <= 0
        assert not inside.all()
        assert np.hypot(piece[:, 0], piece[:, 1]).max() > 0.11


def test_the_second_load_is_read_from_the_cache_fast_and_identical(split_block, tmp_path):
    block = l_block()
    first = split_block[0]
    cached_block(split_block, tmp_path)
    start = time.perf_counter()
    second = decompose("L", block.vertices, block.faces, block.volume, tmp_path)
    assert time.perf_counter() - start < 0.2 and second.cached
    assert len(second.pieces) == len(first.pieces)
    for a, b in zip(first.pieces, second.pieces):
        np.testing.assert_array_equal(a, b)
    # another mesh (the same L, scaled) has a cache file of its own
    scaled = decompose("L", block.vertices * 1.5, block.faces, block.volume * 1.5**3, tmp_path)
    assert not scaled.cached and len(list(tmp_path.glob("*.npz"))) == 2


@pytest.mark.parametrize("spoil", ["garbage", "truncated", "other key", "bad piece"])
def test_a_corrupt_cache_file_is_ignored_and_rebuilt(split_block, tmp_path, spoil):
    block = l_block()
    first = split_block[0]
    path = cached_block(split_block, tmp_path)
    assert decompose("L", block.vertices, block.faces, block.volume, tmp_path).cached
    if spoil == "garbage":
        path.write_bytes(b"not a cache file")
    elif spoil == "truncated":
        path.write_bytes(path.read_bytes()[:200])
    else:
        key = "0" * 64 if spoil == "other key" else path.stem
        pieces = [np.full((8, 3), np.nan)] if spoil == "bad piece" else first.pieces
        np.savez(path, key=np.array(key), count=np.array(len(pieces)),
                 **{f"piece{i}": p for i, p in enumerate(pieces)})
    again = decompose("L", block.vertices, block.faces, block.volume, tmp_path)
    assert not again.cached
    assert len(again.pieces) == len(first.pieces)
    for a, b in zip(first.pieces, again.pieces):
        np.testing.assert_array_equal(a, b)
    assert decompose("L", block.vertices, block.faces, block.volume, tmp_path).cached


def test_the_cache_folder_follows_xdg_cache_home(monkeypatch, tmp_path):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert cache_folder() == tmp_path / "tumble" / "pieces"
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert cache_folder() == tmp_path / "home" / ".cache" / "tumble" / "pieces"


def test_a_library_failure_names_the_mesh_and_says_it_keeps_its_hull(monkeypatch, tmp_path):
    ring = torus()
    faces = ring.faces.copy()
    faces[0, 0] = 10**7  # V-HACD refuses it in the child process, which says why
    with pytest.raises(DecompositionError, match=r"^ring\.obj: convex decomposition failed "
                                                 r"\(ValueError: faces reference a vertex index "
                                                 r"out of range\); it collides as its hull$"):
        decompose("ring.obj", ring.vertices, faces, ring.volume, tmp_path)
    monkeypatch.setattr(decompose_module, "_vhacd_hulls", lambda *args: [np.zeros((3, 3))])
    with pytest.raises(DecompositionError, match="^ring.obj: convex decomposition gave no "
                                                 "pieces; it collides as its hull$"):
        decompose("ring.obj", ring.vertices, ring.faces, ring.volume, tmp_path)
    assert not list(tmp_path.glob("*.npz"))  # nothing cached from a failure


@WALL_CLOCK
def test_the_split_runs_in_a_child_process_and_leaves_this_one_free(tmp_path):
    """V-HACD holds the global lock while it works: in the app's process it would stop the
    render thread. Here a thread of this process keeps ticking while a torus is split."""
    ring = trimesh.creation.torus(0.3, 0.08, major_sections=48, minor_sections=16)
    ticks, gaps = [], []
    worker = threading.Thread(target=lambda: ticks.append(
        decompose("torus", ring.vertices, ring.faces, ring.volume, tmp_path)))
    worker.start()
    last = time.perf_counter()
    while worker.is_alive():
        time.sleep(0.005)
        now = time.perf_counter()
        gaps.append(now - last)
        last = now
    assert ticks and not ticks[0].cached and len(gaps) > 20
    assert max(gaps) < 0.5


L_PROFILE = [[0.0, 0.0], [0.2, 0.0], [0.2, 0.1], [0.1, 0.1], [0.1, 0.2], [0.0, 0.2]]


def l_block() -> trimesh.Trimesh:
    """An L of three 0.1 m squares, 0.1 m deep: its hull is 3.5 squares, the block 3 (1.17×)."""
    from physics.geometry.meshes import prism_mesh

    return trimesh.Trimesh(*prism_mesh(L_PROFILE, 0.1, [0.05, 0.05]))


def inside_any(pieces, points, tolerance=1e-9) -> np.ndarray:
    """(k,) bool: which points (k, 3) lie inside some piece's convex hull."""
    found = np.zeros(len(points), dtype=bool)
    for piece in pieces:
        planes = ConvexHull(piece).equations                                   # (f, 4)
        found |= np.all(points @ planes[:, :3].T + planes[:, 3] <= tolerance, axis=1)
    return found


def test_an_l_block_is_split_into_two_pieces_that_leave_its_notch_empty(tmp_path):
    block = l_block()
    assert needs_pieces("auto", block.vertices, block.volume)  # its hull slopes over the notch
    found = decompose("L", block.vertices, block.faces, block.volume, tmp_path)
    assert len(found.pieces) == 2
    assert found.volume_excess == pytest.approx(0.0, abs=0.05)
    notch = np.array([[0.15, 0.15, 0.0], [0.12, 0.18, 0.03], [0.18, 0.12, -0.03]])
    assert not inside_any(found.pieces, notch).any()
    solid = np.array([[0.05, 0.05, 0.0], [0.15, 0.05, 0.0], [0.05, 0.15, 0.0]])
    assert inside_any(found.pieces, solid, tolerance=1e-3).all()


def test_pieces_that_fit_together_are_joined():
    """V-HACD cuts boxes into slabs; the join keeps the cheap joins and refuses the dear."""
    slabs = [np.array([[x, y, z] for x in (a, a + 0.1) for y in (0, 1) for z in (0, 1)], float)
             for a in np.arange(0.0, 1.0, 0.1)]            # a 1 m cube in ten slabs
    joined = decompose_module._merge(slabs, 1.0)
    assert len(joined) == 1
    assert ConvexHull(joined[0]).volume == pytest.approx(1.0, rel=1e-12)
    # two cubes 1 m apart: joining them would add a whole cube of air
    apart = [slabs[0], slabs[0] + [2.0, 0.0, 0.0]]
    assert len(decompose_module._merge(apart, 0.2)) == 2


def test_the_shipped_t_handle_is_two_pieces(tmp_path):
    from physics.geometry.meshes import load_mesh

    mesh = load_mesh(REPO / "assets" / "meshes" / "t_handle.obj")
    solid = trimesh.Trimesh(mesh.vertices, mesh.faces)
    found = decompose("T", mesh.vertices, mesh.faces, solid.volume, tmp_path)
    assert len(found.pieces) == 2
    assert found.volume_excess < 0.1


def test_a_convex_mesh_asked_to_split_is_one_piece_its_hull(tmp_path):
    box = trimesh.creation.box(extents=[0.1, 0.2, 0.3])
    found = decompose("box", box.vertices, box.faces, box.volume, tmp_path)
    assert len(found.pieces) == 1
    assert found.volume_excess == pytest.approx(0.0, abs=1e-12)
    assert sorted(map(tuple, found.pieces[0])) == sorted(map(tuple, box.vertices))


def test_big_meshes_are_judged_on_a_sample():
    scan = trimesh.creation.icosphere(subdivisions=7, radius=0.1)  # 163,842 vertices
    bumpy = scan.vertices * (1.0 + 0.002 * np.sin(40 * scan.vertices[:, :1]))
    assert not needs_pieces("auto", bumpy, scan.volume)
    ring = trimesh.creation.torus(0.2, 0.05, major_sections=512, minor_sections=128)
    assert len(ring.vertices) > decompose_module.HULL_SAMPLE
    assert needs_pieces("auto", ring.vertices, ring.volume)


def test_auto_splits_from_a_hull_one_point_one_times_the_volume():
    """The README's figure: a hull over 1.1 times the mesh's volume splits, under it does not."""
    cube = trimesh.creation.box((1.0, 1.0, 1.0)).vertices              # its hull: 1 m³
    assert needs_pieces("auto", cube, 1.0 / 1.12)
    assert not needs_pieces("auto", cube, 1.0 / 1.08)
