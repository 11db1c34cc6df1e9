"""Files shipped with the app (app/resources.py): the convex pieces of the sample meshes, copied
into the user's cache so the default scene is not split on a first launch."""

import importlib.util
import os
import shutil
import subprocess
import sys

import pytest

from app.resources import seed_piece_cache
from physics.geometry.decompose import decompose
from tests.paths import REPO

PIECES = REPO / "assets" / "pieces"


def make_assets():
    spec = importlib.util.spec_from_file_location("make_assets", REPO / "assets" / "make_assets.py")
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    return script


def test_the_shipped_pieces_are_those_of_the_shipped_meshes_today(tmp_path):
    """Each sample mesh that collides as pieces finds its file among the shipped ones (a change
    to the cleaning or to the split's parameters changes the key: run assets/make_assets.py),
    and nothing else is shipped."""
    shutil.copytree(PIECES, tmp_path, dirs_exist_ok=True)
    solids = list(make_assets().shipped_solids())
    assert {name for name, _ in solids} == {"t_handle.obj", "torus.obj", "wing_nut.stl",
                                            "two_boxes.glb"}
    for name, shape in solids:
        found = decompose(name, shape.vertices, shape.faces, shape.properties.volume, tmp_path)
        assert found.cached, f"{name}: assets/pieces/ is stale; run assets/make_assets.py"
        assert len(found.pieces) >= 2
    assert len(list(tmp_path.glob("*.npz"))) == len(solids)


def test_seeding_copies_what_the_cache_lacks_and_keeps_what_it_has(monkeypatch, tmp_path):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    cache = tmp_path / "tumble" / "pieces"
    shipped = sorted(p.name for p in PIECES.glob("*.npz"))
    cache.mkdir(parents=True)
    (cache / shipped[0]).write_bytes(b"the user's own")
    assert seed_piece_cache() == len(shipped) - 1
    assert (cache / shipped[0]).read_bytes() == b"the user's own"
    for name in shipped[1:]:
        assert (cache / name).read_bytes() == (PIECES / name).read_bytes()
    assert seed_piece_cache() == 0
    assert not list(cache.glob("*.seeding"))


def test_a_cache_that_cannot_be_written_is_skipped(monkeypatch, tmp_path):
    blocker = tmp_path / "a file"
    blocker.write_text("")
    monkeypatch.setenv("XDG_CACHE_HOME", str(blocker))  # the cache folder cannot be made
    assert seed_piece_cache() == 0


def test_the_default_scene_collides_as_pieces_from_the_first_run_without_splitting(tmp_path):
    """A fresh user (empty cache): ``tumble simulate`` of the default scene reads every mesh's
    pieces from the cache instead of running V-HACD (seconds of both cores)."""
    env = dict(os.environ, PYTHONPATH=str(REPO), XDG_CACHE_HOME=str(tmp_path))
    result = subprocess.run(
        [sys.executable, "-m", "app", "simulate", REPO / "assets" / "scenes" / "default.toml",
         "--seconds", "0", "--out", tmp_path / "out.csv", "--verbose"],
        cwd=REPO, env=env, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    lines = [line for line in result.stderr.splitlines() if "collides as" in line]
    assert len(lines) == 4, result.stderr
    assert all(line.endswith(", cached)") for line in lines), result.stderr


@pytest.fixture(autouse=True)
def _no_stray_files():
    """The shipped folder is read, never written, by these tests."""
    before = sorted(p.name for p in PIECES.iterdir())
    yield
    assert sorted(p.name for p in PIECES.iterdir()) == before
