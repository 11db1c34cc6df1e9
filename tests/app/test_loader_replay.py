"""Opening a replay in the app (app/loader.py → Simulation.open): paused at its start, its
commands applied at their steps as ``tumble simulate`` applies them (the same bits), and a bad
replay named by file, line and key with the scene kept. No GL: the test polls the loader as
the window does each frame."""

import csv
import time

import numpy as np
import pytest

from app.__main__ import main as tumble
from physics.history import LoggedCommand
from physics.replay import Replay, history_replay, write_replay
from physics.scene import BodyEntry, Scene, save_scene
from tests.app.loading import loader_app, settle  # noqa: F401 (the fixture app)
from tests.paths import REPO
from tests.physics.scenes import TURNED
from tests.physics.scripted import ball

BOUNCE = REPO / "assets" / "scenes" / "bounce.toml"
SCENE = Scene(
    hz=240.0, restitution=0.5, friction=0.5, container_size=(3.0, 3.0, 3.0),
    bodies=(BodyEntry(shape="box", size=(0.4, 0.3, 0.2), position=(0.0, 0.5, 0.0),
                      angular_velocity=(0.0, 3.0, 1.0)),
            BodyEntry(shape="sphere", size=(0.15,), position=(0.5, 1.5, 0.3))))
COMMANDS = (LoggedCommand(30, "add_body", (ball([-0.5, 2.0, 0.0], velocity=[1.0, 0.0, 0.0]),)),
            LoggedCommand(120, "apply_impulse", (0, np.array([0.0, 3.0, 0.5]), None)),
            LoggedCommand(200, "set_gravity", (np.array([0.0, -4.0, 0.0]),)))


def test_an_opened_replay_starts_paused_and_runs_as_tumble_simulate(app, tmp_path):
    state, loader = app
    path = tmp_path / "throw.toml"
    write_replay(path, Replay(SCENE, COMMANDS))
    loader.request([BOUNCE])
    settle(state, loader)
    state.sim.set_paused(False).result(2)
    time.sleep(0.3)  # the scene before runs a while: the replay must not depend on it
    loader.request([path])
    start = settle(state, loader)
    assert start.paused and start.step == 0 and len(start.ids) == 2
    assert state.scene_path == path
    assert sorted(state.bodies) == [0, 1]
    assert sorted(state.later_records) == [2]  # the ball command 30 adds, drawn when it comes
    assert state.later_records[2].shape.radius == 0.1
    assert any("opened replay throw.toml: 2 bodies, 3 commands" in n.text
               for n, _ in state.notifications.visible())
    state.sim.stop()
    app_run = state.sim.run_steps(300)  # the app's run, 1.25 s
    out = tmp_path / "run.csv"
    assert tumble(["simulate", str(path), "--seconds", "1.25", "--out", str(out)]) == 0
    with open(out) as f:
        rows = [r for r in csv.DictReader(f) if float(r["t"]) == 1.25]
    assert [int(r["body"]) for r in rows] == app_run.ids.tolist() == [0, 1, 2]
    simulated = np.array([[float(r[k]) for k in ("x", "y", "z")] for r in rows])
    assert np.array_equal(simulated, app_run.pos)  # the same bits
    assert app_run.gravity[1] == -4.0


BAD = [('[[command]]\nstep = 5\nname = "apply_impulse"\nbody_id = 0\nimpulse = [1.0, 0.0]\n'
        'torque = 1.0\n', 9, 'torque'),
       ('[[command]]\nstep = "soon"\nname = "clear"\n', 5, 'step')]


@pytest.mark.parametrize("command, line, key", BAD)
def test_a_bad_replay_is_named_by_file_line_and_key_and_the_scene_stays(app, tmp_path,
                                                                       command, line, key):
    state, loader = app
    loader.request([BOUNCE])
    before = settle(state, loader)
    path = tmp_path / "bad.toml"
    path.write_text("[world]\nhz = 240\n\n" + command)
    loader.request([path])
    after = settle(state, loader)
    shown = [n.text for n, _ in state.notifications.visible() if "rejected bad.toml" in n.text]
    assert shown and shown[0].startswith(f"rejected bad.toml: line {line}: [[command]] #1: "
                                         f"{key}: "), shown
    assert after.ids.tolist() == before.ids.tolist() and state.scene_path == BOUNCE


@pytest.mark.parametrize("scene", ["bounce", "turned"])
def test_a_scene_opened_in_the_app_and_saved_as_a_replay_runs_the_same_bits(app, tmp_path,
                                                                             scene):
    """The app's Save replay of a run since a scene was opened (its bodies made by commands on
    a world that ran before, their ids not the file's): tumble simulate of the file gives the
    app's run bit for bit — also for meshes and boxes turned and spinning, which the file
    holds as the scene placed them."""
    state, loader = app
    opened = BOUNCE
    if scene == "turned":
        opened = tmp_path / "turned.toml"
        save_scene(TURNED, opened)
    loader.request([BOUNCE])
    settle(state, loader)
    state.sim.set_paused(False).result(2)
    time.sleep(0.2)
    loader.request([opened])  # opened on a world that ran: ids and time go on
    settle(state, loader)
    state.sim.stop()
    first = state.sim.latest()
    assert min(first.ids) > 0 and first.time > 0.0
    state.sim.run_steps(50)
    state.sim.apply_impulse(int(first.ids[1]), [0.0, 3.0, 0.0])
    state.sim.run_steps(70)
    live = state.sim.run_steps(0)
    path = tmp_path / "saved.toml"
    write_replay(path, history_replay(state.sim.history, state.bodies))
    out = tmp_path / "run.csv"
    start = state.sim.history.span()[0].step  # the scene's opening (it ran on since)
    seconds = (live.step - start) / 240
    assert tumble(["simulate", str(path), "--seconds", repr(seconds), "--out", str(out)]) == 0
    with open(out) as f:
        rows = list(csv.DictReader(f))[-len(live.ids):]
    simulated = np.array([[float(r[k]) for k in ("x", "y", "z")] for r in rows])
    assert np.array_equal(simulated, live.pos)


def test_pieces_found_for_a_body_of_a_world_a_replay_replaced_go_nowhere(app, tmp_path,
                                                                       monkeypatch):
    """A mesh's convex pieces come seconds after its body; if a replay replaced the world
    meanwhile, its bodies are numbered from 0 again and the pieces must not reach the body
    that now has the old one's id (nor its record replace the replay's)."""
    import types

    import app.loader as loader_module

    state, loader = app
    loader.request([REPO / "assets" / "meshes" / "tetrahedron.off"])
    settle(state, loader)
    old = state.bodies[0]
    assert old.shape.kind is None  # the mesh, body 0 of the app's first world
    path = tmp_path / "throw.toml"
    write_replay(path, Replay(SCENE, COMMANDS))
    loader.request([path])
    settle(state, loader)
    assert state.bodies[0].shape.kind == "box"
    hull = old.shape.hull
    monkeypatch.setattr(loader_module, "needs_pieces", lambda *args: True)
    monkeypatch.setattr(loader_module, "decompose", lambda *args, **kwargs: types.SimpleNamespace(
        pieces=[hull + old.shape.properties.center_of_mass], volume_excess=0.0, cached=False))
    loader._decompose(old, True, 0)  # the world it was made in
    state.sim.set_paused(True).result(2)  # applied after anything sent before it
    settle(state, loader)
    assert not any(c.name == "set_pieces" for c in state.sim.history.commands())
    assert state.bodies[0].shape.kind == "box"
    loader._decompose(old, True, loader._worlds)  # the control: pieces for the world of now go
    state.sim.set_paused(True).result(2)
    assert [c.name for c in state.sim.history.commands()][-1] == "set_pieces"
