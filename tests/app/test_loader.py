"""Loading files off the render thread (app/loader.py), against a running physics thread.

No GL: the test plays the render thread, calling ``Loader.poll()`` as the window does each frame.
"""

import logging
import os
import subprocess
import sys
import textwrap
import threading
import time
from concurrent.futures import Future
from pathlib import Path

import numpy as np
import pytest

from app.app_state import AppState
from app.gil import GIL_HANDOFF, PromptGilHandoff
from app.loader import CLEARANCE, Loader, _reason, horizontal_radius
from physics.geometry.meshes import load_shape
from physics.geometry.rotation import quat_rotate
from physics.model import WorldDef
from physics.scene import load_scene, scene_from_snapshot
from physics.simulation import Simulation
from physics.world import World
from tests.app.loading import loader_app, settle  # noqa: F401 (the fixture app)
from tests.paths import REPO
from tests.physics.scenes import assert_same_scene

REPO = REPO
MESHES = REPO / "assets" / "meshes"
SCENES = REPO / "assets" / "scenes"
TETRA = MESHES / "tetrahedron.off"


def notices(state, monkeypatch) -> list[str]:
    """The list every notification's text is added to from now on (a notice fades in 7.5 s;
    a split on a busy machine can take longer)."""
    told = []
    push = state.notifications.push
    monkeypatch.setattr(state.notifications, "push",
                        lambda level, text: (told.append(text), push(level, text)))
    return told


def splits_finished(timeout=120.0) -> None:
    """Wait for the splits earlier tests started (a dropped torus is split on a thread of its
    own): one still under way reads $XDG_CACHE_HOME when it saves, and would put its pieces in
    the cache folder a test has just made its own."""
    for thread in threading.enumerate():
        if thread.name == "tumble-decompose":
            thread.join(timeout)
            assert not thread.is_alive(), "a split of an earlier test never ended"


def wait_for_pieces(state, loader, body_id, timeout=120.0) -> tuple:
    """Poll like the render loop until the body's record has its convex pieces; them."""
    deadline = time.monotonic() + timeout
    while not state.bodies[body_id].pieces:
        loader.poll()
        assert time.monotonic() < deadline, "no pieces"
        time.sleep(0.01)
    return state.bodies[body_id].pieces


def world_hull(state, snapshot, body_id):
    """(k,3) world collision hull points of one body in the snapshot."""
    row = list(snapshot.ids).index(body_id)
    shape = state.bodies[body_id].shape
    return snapshot.pos[row] + quat_rotate(snapshot.quat[row][None], shape.hull)


def info_lines(caplog):
    return [r.getMessage() for r in caplog.records if r.name == "tumble"
            and r.levelno == logging.INFO]


def test_a_dropped_mesh_stands_on_the_floor_under_the_drop_point(app, caplog):
    caplog.set_level(logging.INFO, logger="tumble")
    state, loader = app
    loader.request([TETRA], drop_point=[0.7, 0.0, -0.4])
    assert state.loading == 1                       # the progress indicator shows it
    snap = settle(state, loader)
    assert len(snap.ids) == 1 and list(state.bodies) == [int(snap.ids[0])]
    body_id = int(snap.ids[0])
    record = state.bodies[body_id]
    assert record.name == "tetrahedron.off" and record.color is not None
    np.testing.assert_allclose(snap.pos[0][[0, 2]], [0.7, -0.4], atol=1e-12)
    assert world_hull(state, snap, body_id)[:, 1].min() == pytest.approx(CLEARANCE, abs=1e-12)
    shape = load_shape(TETRA)
    assert (f"loaded tetrahedron.off: mass={shape.properties.mass:.6g} kg, mode=solid"
            in info_lines(caplog))
    assert shape.properties.mass == pytest.approx(1000.0 * shape.properties.volume)


def test_several_files_become_several_bodies_that_do_not_overlap(app):
    state, loader = app
    files = [MESHES / n for n in ("t_handle.obj", "icosahedron.ply", "torus.obj",
                                  "wing_nut.stl", "two_boxes.glb")]
    loader.request(files, drop_point=[0.0, 0.0, 0.0])
    snap = settle(state, loader)
    assert len(snap.ids) == 5 == len(state.bodies)
    assert sorted(r.name for r in state.bodies.values()) == sorted(f.name for f in files)
    radii = [horizontal_radius(state.bodies[int(i)].shape) for i in snap.ids]
    for a in range(5):
        for b in range(a):
            gap = np.hypot(*(snap.pos[a] - snap.pos[b])[[0, 2]])
            assert gap >= radii[a] + radii[b], "two dropped bodies overlap"
    for i in snap.ids:
        hull = world_hull(state, snap, int(i))
        assert hull[:, 1].min() == pytest.approx(CLEARANCE, abs=1e-9)
    assert len({state.bodies[int(i)].color for i in snap.ids}) == 5


def test_a_drop_by_the_wall_stays_inside_the_container(app):
    state, loader = app
    loader.request([MESHES / "t_handle.obj"], drop_point=[1.99, 0.0, -5.0])
    snap = settle(state, loader)
    hull = world_hull(state, snap, int(snap.ids[0]))
    assert hull[:, 0].max() <= 2.0 and hull[:, 2].min() >= -2.0


def test_the_same_file_twice_shares_one_shape(app):
    state, loader = app
    loader.request([TETRA, TETRA])
    settle(state, loader)
    a, b = state.bodies.values()
    assert a.shape is b.shape  # one mesh upload, instanced


def bad_files(tmp_path: Path) -> dict[str, str]:
    """file name → a word the reason must contain, one per kind of bad file."""
    (tmp_path / "empty.obj").write_bytes(b"")
    (tmp_path / "folder.obj").mkdir()
    (tmp_path / "garbage.stl").write_bytes(bytes(range(256)) * 3)
    (tmp_path / "words.obj").write_text("this is not a mesh\n")
    (tmp_path / "nan.obj").write_text("v nan 0 0\nv 1 0 0\nv 0 1 0\nv 0 0 1\n"
                                      "f 1 2 3\nf 1 3 4\nf 1 4 2\nf 2 4 3\n")
    (tmp_path / "one.obj").write_text("v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 3\n")
    (tmp_path / "cut.stl").write_bytes((MESHES / "wing_nut.stl").read_bytes()[:300])
    (tmp_path / "broken.toml").write_text("[world\n")
    (tmp_path / "lost.toml").write_text('[[body]]\nmesh = "nowhere.obj"\n')
    return {"missing.obj": "not found", "empty.obj": "empty", "folder.obj": "folder",
            "garbage.stl": "STL", "words.obj": "no triangles", "nan.obj": "NaN",
            "one.obj": "1 triangle", "cut.stl": "cut short", "broken.toml": "line 1",
            "lost.toml": "nowhere.obj"}


def test_every_bad_file_is_rejected_with_its_reason_and_the_scene_is_untouched(
        app, tmp_path, caplog):
    caplog.set_level(logging.INFO, logger="tumble")
    state, loader = app
    loader.request([TETRA])
    before = settle(state, loader)
    bodies_before = dict(state.bodies)
    expected = bad_files(tmp_path)
    loader.request([tmp_path / name for name in expected], drop_point=[0.0, 0.0, 0.0])
    assert state.loading == len(expected)
    after = settle(state, loader)
    lines = info_lines(caplog)
    shown = [n.text for n, _ in state.notifications.visible()]
    for name, word in expected.items():
        line = next((text for text in lines if text.startswith(f"rejected {name}: ")), None)
        assert line is not None, f"no rejection logged for {name}: {lines}"
        assert word in line, line
        assert not line.startswith(f"rejected {name}: {name}"), "file name repeated"
        assert line in shown
    np.testing.assert_array_equal(after.ids, before.ids)
    np.testing.assert_array_equal(after.pos, before.pos)
    assert state.bodies == bodies_before and state.loading == 0


def test_too_many_faces_is_rejected(tmp_path, caplog):
    caplog.set_level(logging.INFO, logger="tumble")
    sim = Simulation(World(WorldDef()), paused=True)
    state = AppState(sim=sim)
    with sim:
        loader = Loader(state, max_faces=10)
        loader.request([MESHES / "icosahedron.ply"])  # 20 faces
        snap = settle(state, loader)
        loader.close()
    assert len(snap.ids) == 0
    assert any(text.startswith("rejected icosahedron.ply: ") and "20" in text
               for text in info_lines(caplog))


def test_a_scene_replaces_everything_and_becomes_the_reset_point(app):
    state, loader = app
    loader.request([TETRA])
    settle(state, loader)
    path = SCENES / "bounce.toml"
    scene = load_scene(path)
    loader.request([path])
    snap = settle(state, loader)
    assert len(snap.ids) == len(scene.bodies)
    assert sorted(state.bodies) == sorted(int(i) for i in snap.ids)
    assert state.scene_path == path and state.selected is None
    assert snap.restitution == scene.restitution and snap.friction == scene.friction
    np.testing.assert_allclose(snap.container_size, scene.container_size)
    colours = [state.bodies[int(i)].color for i in snap.ids]
    assert colours == [b.color for b in scene.bodies]  # the scene's own colours
    start = snap.pos.copy()
    state.sim.set_paused(False).result(2)
    time.sleep(0.2)
    state.sim.set_paused(True).result(2)
    assert not np.allclose(state.sim.latest().pos, start)  # the balls fell
    state.sim.reset().result(2)
    np.testing.assert_allclose(state.sim.latest().pos, start)


def test_a_scene_value_the_simulation_refuses_is_shown(app, monkeypatch):
    """Safety net behind the scene file's own checks: whatever the physics thread refuses of a
    scene being opened appears as a notification naming the file and the value."""
    state, loader = app
    refuse_hz = Future()
    refuse_hz.set_exception(ValueError("physics rate hz must be between 10 and 10000 Hz"))
    monkeypatch.setattr(state.sim, "set_hz", lambda hz: refuse_hz)
    loader.request([SCENES / "bounce.toml"])
    settle(state, loader)
    shown = [n.text for n, _ in state.notifications.visible()]
    assert ("bounce.toml: the simulation refused its hz: physics rate hz must be between 10 and "
            "10000 Hz") in shown


def test_a_scene_of_one_body_says_body(app):
    state, loader = app
    loader.request([SCENES / "pendulum.toml"])
    settle(state, loader)
    assert "opened scene pendulum.toml: 1 body" in [n.text for n, _ in
                                                     state.notifications.visible()]


def test_an_empty_scene_says_so(app, tmp_path):
    state, loader = app
    loader.request([TETRA])
    settle(state, loader)
    (tmp_path / "empty.toml").write_text("[world]\n")
    loader.request([tmp_path / "empty.toml"])
    assert len(settle(state, loader).ids) == 0
    shown = [n.text for n, _ in state.notifications.visible()]
    assert ("opened scene empty.toml: it has no bodies — drop mesh files on the window to add "
            "some") in shown


@pytest.mark.parametrize("path", sorted(SCENES.glob("*.toml")), ids=lambda p: p.stem)
def test_an_opened_scene_is_what_its_file_says(app, path):
    """Every field of every body, per-body materials included, arrives in the snapshots as the
    file gives it, so saving the scene writes the same file back."""
    state, loader = app
    loader.request([path])
    snapshot = settle(state, loader)
    assert_same_scene(scene_from_snapshot(snapshot, state.bodies), load_scene(path))


def test_an_opened_scene_keeps_its_static_bodies_and_convex_pieces(app, tmp_path):
    state, loader = app
    (tmp_path / "scenery.toml").write_text(
        f'[[body]]\nmesh = "{MESHES / "two_boxes.glb"}"\nstatic = true\n'
        f'\n[[body]]\nmesh = "{MESHES / "two_boxes.glb"}"\ncollision = "hull"\n'
        'position = [0.0, 2.0, 0.0]\n')
    loader.request([tmp_path / "scenery.toml"])
    snapshot = settle(state, loader)
    assert snapshot.static.tolist() == [True, False]
    assert [r.collision for r in state.bodies.values()] == ["auto", "hull"]
    # two boxes joined at an edge: their hull is 2.4× their volume, so "auto" splits them, off
    # the loader thread: the scene simulates with hulls meanwhile
    first, second = (int(i) for i in snapshot.ids)
    pieces = wait_for_pieces(state, loader, first)
    model = state.sim.world.model
    assert model.compound.tolist() == [True, False] and model.piece_count[0] == len(pieces) >= 2
    assert state.bodies[second].pieces == ()


def test_a_dropped_torus_collides_as_its_hull_at_once_then_as_its_pieces(app, monkeypatch,
                                                                        tmp_path):
    state, loader = app
    splits_finished()
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))  # not split before: V-HACD runs
    shown = notices(state, monkeypatch)
    loader.request([MESHES / "torus.obj"])
    snapshot = settle(state, loader)
    (body_id,) = (int(i) for i in snapshot.ids)
    assert state.bodies[body_id].pieces == ()  # simulating already, as its hull
    pieces = wait_for_pieces(state, loader, body_id)
    model = state.sim.world.model
    assert model.compound.tolist() == [True] and model.piece_count[0] == len(pieces) >= 2
    assert "decomposing torus.obj…" in shown
    assert any(t.startswith(f"torus.obj collides as {len(pieces)} pieces") for t in shown)


def test_a_mesh_split_before_says_how_it_collides_without_decomposing_again(app, tmp_path,
                                                                          monkeypatch):
    """The second drop of a mesh reads its pieces from the cache: no "decomposing…" notice; a
    scene opened with it says nothing of its pieces (an opened scene's meshes would fill the
    screen with notices), though it collides as them."""
    state, loader = app
    splits_finished()
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    loader.request([MESHES / "torus.obj"])
    first = int(settle(state, loader).ids[0])
    wait_for_pieces(state, loader, first)
    shown = notices(state, monkeypatch)
    loader.request([MESHES / "torus.obj"])
    second = int(settle(state, loader).ids[-1])
    pieces = wait_for_pieces(state, loader, second)
    assert any(t.startswith(f"torus.obj collides as {len(pieces)} pieces") for t in shown)
    assert not any("decomposing" in t for t in shown), shown
    (tmp_path / "ring.toml").write_text(f'[[body]]\nmesh = "{MESHES / "torus.obj"}"\n')
    shown = notices(state, monkeypatch)
    loader.request([tmp_path / "ring.toml"])
    (body_id,) = (int(i) for i in settle(state, loader).ids)
    assert len(wait_for_pieces(state, loader, body_id)) == len(pieces)
    time.sleep(0.2)  # a notice would be queued with the pieces: poll once more
    loader.poll()
    assert not any("decomposing" in t or "collides as" in t for t in shown), shown


def test_a_dropped_convex_mesh_is_not_decomposed(app):
    state, loader = app
    loader.request([TETRA, MESHES / "cylinder_ascii.stl"])
    settle(state, loader)
    time.sleep(0.5)  # the decomposition threads have decided
    loader.poll()
    assert not state.sim.world.model.compound.any()
    assert not any("decomposing" in n.text for n, _ in state.notifications.visible())


def test_scene_and_mesh_together_and_startup_reset_point(app):
    state, loader = app
    scene = load_scene(SCENES / "dzhanibekov.toml")
    loader.request([TETRA, SCENES / "dzhanibekov.toml"], set_reset_point=True)
    snap = settle(state, loader)
    assert len(snap.ids) == len(scene.bodies) + 1  # the scene first, then the mesh on top
    assert "tetrahedron.off" in {r.name for r in state.bodies.values()}
    state.sim.reset().result(2)
    assert len(state.sim.latest().ids) == len(snap.ids)  # reset keeps the start-up mesh


def test_reason_drops_the_file_name_and_names_lines():
    path = Path("/x/scene.toml")
    assert _reason("/x/scene.toml:3:7: TOML syntax error: bad", path) == \
        "line 3, column 7: TOML syntax error: bad"
    assert _reason("/x/scene.toml:12: [[body]] #2: unknown key", path) == \
        "line 12: [[body]] #2: unknown key"
    assert _reason("scene.toml: is a folder", path) == "is a folder"
    assert _reason("something else", path) == "something else"


def test_a_big_mesh_gets_its_first_drawn_level_from_the_loader(app, tmp_path):
    """The loader makes a big mesh's coarse first level beside its hull, so the renderer finds
    it ready; the body and its properties are those of ``load_shape``."""
    import trimesh

    from app.render.renderer import FIRST_LEVEL_FACES, _first_levels, _prepared_lock

    state, loader = app
    path = tmp_path / "ball.ply"
    trimesh.creation.icosphere(subdivisions=6, radius=0.2).export(path)  # 81,920 faces
    loader.request([path])
    settle(state, loader)
    (record,) = state.bodies.values()
    expected = load_shape(path)
    np.testing.assert_array_equal(record.shape.hull, expected.hull)
    assert record.shape.properties.mass == expected.properties.mass
    deadline = time.monotonic() + 20.0
    while True:
        with _prepared_lock:
            arrays = _first_levels.get(record.shape)
        if arrays is not None:
            break
        assert time.monotonic() < deadline, "no first level was made"
        time.sleep(0.01)
    assert len(arrays.levels) == 1 and len(arrays.levels[0][1]) <= 1.15 * FIRST_LEVEL_FACES


def test_while_a_mesh_loads_other_threads_hand_the_gil_back_promptly(app, tmp_path,
                                                                      monkeypatch):
    """Python's switch interval is at most GIL_HANDOFF while the loader reads and cleans a
    mesh, and what it was again afterwards, after a file that fails too."""
    import app.loader as loader_module

    seen = []
    read = loader_module.read_triangles

    def reading(path, **kwargs):
        seen.append(sys.getswitchinterval())
        return read(path, **kwargs)

    monkeypatch.setattr(loader_module, "read_triangles", reading)
    state, loader = app
    before = sys.getswitchinterval()
    assert before > GIL_HANDOFF  # Python's default: the loader changes it
    loader.request([TETRA, tmp_path / "missing.stl"])
    settle(state, loader)
    assert seen == [GIL_HANDOFF, GIL_HANDOFF]
    assert len(state.bodies) == 1
    assert sys.getswitchinterval() == before


def test_loads_under_way_at_once_restore_the_interval_after_the_last_whatever_the_order():
    """Two loaders' loads overlap (the first ends before the second): the interval stays
    GIL_HANDOFF until both have ended, then is what it was before either began."""
    before = sys.getswitchinterval()
    handoff = PromptGilHandoff()
    handoff.__enter__()
    handoff.__enter__()
    handoff.__exit__(None, None, None)  # the first load ends while the second goes on
    assert sys.getswitchinterval() == GIL_HANDOFF
    handoff.__exit__(None, None, None)
    assert sys.getswitchinterval() == before


def test_the_loader_loads_the_big_mesh_kernels_before_any_drop():
    """A fresh process: once a Loader exists, its helper has loaded the compiled code only big
    meshes use (the first level's clustering, the hull's grid search), with the array types a
    drop gives them — the first big drop does not wait for numba's cache."""
    script = textwrap.dedent("""
        import time
        from app.app_state import AppState
        from app.loader import Loader
        from app.render import clustering
        from physics.geometry import extremes
        from physics.model import WorldDef
        from physics.simulation import Simulation
        from physics.world import World

        kernels = (clustering._cluster_pass, clustering._vertex_normals, extremes._candidates)
        before = [len(k.signatures) for k in kernels]
        loader = Loader(AppState(sim=Simulation(World(WorldDef()), paused=True)))
        deadline = time.monotonic() + 120
        while any(len(k.signatures) < 2 for k in kernels[:2]) or not kernels[2].signatures:
            assert time.monotonic() < deadline, [k.signatures for k in kernels]
            time.sleep(0.05)
        print(before, [len(k.signatures) for k in kernels])
    """)
    result = subprocess.run([sys.executable, "-c", script], cwd=REPO, capture_output=True,
                            text=True, timeout=180, env={**os.environ, "PYTHONPATH": str(REPO)})
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("[0, 0, 0]"), result.stdout
