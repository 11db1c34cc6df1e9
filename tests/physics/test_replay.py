"""Replay files (physics/replay.py): a scripted run saved as a replay and run again gives the
same bits; every key is checked and an error names the file, the line and the key."""

import numpy as np
import pytest

from physics.constraints.joint import JointDef
from physics.geometry.meshes import builtin_shape
from physics.replay import (
    Schedule,
    history_replay,
    load_replay,
    save_replay,
    scripted,
    write_replay,
)
from physics.scene import BodyEntry, BodyRecord, Scene, SceneError, build_world
from physics.simulation import Simulation
from physics.world import World
from tests.physics.scenes import TURNED
from tests.physics.scripted import HZ, SCENE, SECONDS
from tests.physics.world_compare import assert_same_world


@pytest.fixture
def saved(scripted_replay):
    """The scripted run on SCENE, saved as a replay: (its path, the worlds recorded live)."""
    return scripted_replay


def test_a_saved_replay_run_again_gives_the_live_run_bit_for_bit(saved):
    path, recorded = saved
    replay = load_replay(path)
    assert len(replay.commands) >= 25
    world, _ = build_world(replay.scene)
    schedule, hz = Schedule.of(replay), replay.scene.hz
    for step in range(HZ * SECONDS + 1):
        if step in recorded:
            assert_same_world(world, recorded[step])
        hz = schedule.apply_due(world, step, hz)
        world.step(1.0 / hz)


def test_a_replay_fed_to_a_simulation_gives_the_same_bits(saved):
    path, recorded = saved
    replay = load_replay(path)
    world, _ = build_world(replay.scene)
    sim = Simulation(world, hz=replay.scene.hz)
    schedule = Schedule.of(replay)
    for step in sorted(recorded)[1:12]:
        schedule.run_steps(sim, step - sim.latest().step)
        assert_same_world(sim.world, recorded[step])


def test_the_replay_file_is_readable_toml_with_command_tables(saved):
    path, _ = saved
    text = path.read_text()
    assert text.count("[[command]]") >= 25 and "[[body]]" in text and "[world]" in text
    assert 'name = "apply_impulse"\nbody_id = 1\nimpulse = [0.0, 4.0, 1.0]\n' in text
    assert 'name = "set_hz"\nhz = 120.0\n' in text


def test_a_plain_scene_reads_as_a_replay_without_commands(tmp_path):
    path = tmp_path / "s.toml"
    path.write_text("[world]\nhz = 240\n")
    assert load_replay(path).commands == ()


def test_save_refuses_a_history_that_no_longer_starts_at_the_scene(tmp_path):
    world, _ = build_world(SCENE)
    sim = Simulation(world, hz=SCENE.hz)
    sim.history.set_seconds(1.0)
    sim.run_steps(3 * HZ)
    with pytest.raises(ValueError, match="not at the scene"):
        save_replay(tmp_path / "r.toml", SCENE, sim.history)


BAD = [
    ('[[command]]\nstep = 5\nname = "throw"\n', 6, "name", "name must be one of"),
    ('[[command]]\nstep = -1\nname = "clear"\n', 5, "step", "whole number"),
    ('[[command]]\nstep = 5\nname = "apply_impulse"\nbody_id = 0\nimpulse = [1.0, 0.0, 0.0]\n'
     'force = 3.0\n', 9, "force", "takes no 'force'"),
    ('[[command]]\nstep = 5\nname = "apply_impulse"\nimpulse = [1.0, 0.0, 0.0]\n', 4, None,
     "needs 'body_id'"),
    ('[[command]]\nstep = 5\nname = "add_body"\nbody = { mass = -1.0, principal_moments = '
     '[1.0, 1.0, 1.0], radius = 0.1 }\n', 7, "body", "mass must be"),
    ('[[command]]\nstep = 5\nname = "clear"\n\n[[command]]\nstep = 4\nname = "clear"\n', 9,
     "step", "comes before"),
]


@pytest.mark.parametrize("commands, line, key, message", BAD)
def test_a_bad_command_is_named_by_file_line_and_key(tmp_path, commands, line, key, message):
    path = tmp_path / "bad.toml"
    path.write_text("[world]\nhz = 240\n\n" + commands)
    with pytest.raises(SceneError) as caught:
        load_replay(path)
    text = str(caught.value)
    assert text.startswith(f"{path}:{line}: [[command]] #")
    assert message in text and (key is None or f": {key}: " in text)


def test_a_command_the_world_refuses_names_its_line_when_run(tmp_path):
    path = tmp_path / "refused.toml"
    path.write_text('[world]\nhz = 240\n\n[[command]]\nstep = 3\nname = "remove_body"\n'
                    'body_id = 7\n')
    replay = load_replay(path)
    world, _ = build_world(replay.scene)
    schedule = Schedule.of(replay)
    for step in range(3):
        schedule.apply_due(world, step, 240.0)
    with pytest.raises(SceneError, match=rf"{path}:4: \[\[command\]\] remove_body: no body"):
        schedule.apply_due(world, 3, 240.0)


def test_a_replay_opened_in_a_simulation_runs_as_tumble_simulate_runs_it(saved):
    """Simulation.open (the app opening a replay): its commands applied at their steps by
    the physics thread give the recorded worlds bit for bit, and reset plays them again."""
    path, recorded = saved
    replay = load_replay(path)
    world, _ = build_world(replay.scene)
    sim = Simulation(World(), hz=60.0)  # whatever ran before
    sim.open(world, replay.scene.hz, scripted(replay))
    sim.run_steps(0)
    assert sim.latest().paused and sim.latest().step == 0
    # the recorded worlds are before their step's commands, the open one's after them
    due = {c.step for c in replay.commands}
    steps = [s for s in sorted(recorded) if s % 400 == 0 and s not in due][1:6]
    for step in steps:
        sim.run_steps(step - sim.latest().step)
        assert_same_world(sim.world, recorded[step])
    sim.reset()
    sim.run_steps(steps[-1])
    assert_same_world(sim.world, recorded[steps[-1]])


def test_resume_from_here_ends_an_opened_replay_and_reset_plays_it_again(saved):
    """restore (the timeline's Resume from here) is a branch: the replay's later commands are
    the old future and are not applied; reset goes back to its start with all of them."""
    path, recorded = saved
    replay = load_replay(path)
    sim = Simulation(World(), hz=60.0)
    sim.open(build_world(replay.scene)[0], replay.scene.hz, scripted(replay))
    sim.run_steps(500)  # past the throw at 200 and the restitution change at 420
    sim.restore(100)
    after = sim.run_steps(400)
    assert after.restitution == replay.scene.restitution  # the change at 420 never came
    assert sim.history.commands()[-1].step < 100
    sim.reset()
    sim.run_steps(500)
    assert sim.latest().restitution == 0.8


def test_a_command_the_world_refuses_stops_the_opened_replay_naming_its_line(tmp_path):
    path = tmp_path / "refused.toml"
    path.write_text('[world]\nhz = 240\n\n[[command]]\nstep = 3\nname = "remove_body"\n'
                    'body_id = 7\n')
    replay = load_replay(path)
    sim = Simulation(World(), hz=240.0)
    sim.open(build_world(replay.scene)[0], 240.0, scripted(replay))
    sim.set_paused(False)
    snapshot = sim.run_steps(5)
    assert snapshot.paused
    assert [e.message for e in snapshot.errors] == [
        f"{path}:4: [[command]] remove_body: no body with id 7"]


def test_set_reset_point_starts_the_history_again():
    world, _ = build_world(SCENE)
    sim = Simulation(world, hz=SCENE.hz)
    sim.run_steps(100)
    sim.set_reset_point()
    sim.run_steps(10)
    first, last, _ = sim.history.span()
    assert first.step == 100 and sim.history.frames()[0].step == 100 and last > 100


FLOATING = Scene(  # no gravity and nothing touching: a scene holds all such a world is
    gravity=(0.0, 0.0, 0.0), hz=240.0, container_size=(8.0, 4.0, 8.0),
    bodies=tuple(BodyEntry(shape="box", size=(0.4, 0.3, 0.2), position=(x, 2.0, 0.0),
                           velocity=(0.0, 0.05, 0.0), angular_velocity=(0.3, x, 0.1))
                 for x in (-3.0, -1.5, 0.0, 1.5)))


def test_a_history_saved_mid_run_renumbers_its_bodies_and_joints(tmp_path):
    """history_replay (the app's "Save replay") from a history that no longer starts at the
    scene: the world then becomes the scene (ids renumbered 0, 1, … in its order), the later
    commands follow with their steps and ids renumbered, and the replay re-runs the live run
    to rounding."""
    world, records = build_world(FLOATING)
    records = {r.body_id: r for r in records}
    sim = Simulation(world, hz=FLOATING.hz)
    sim.history.set_seconds(1.0)
    sphere = builtin_shape("sphere", (0.1,))
    sim.remove_body(0)
    added = sim.add_body(sphere.body_def(position=[0.0, 1.0, 2.0]))          # id 4
    sim.add_joint(JointDef("ball", 1, 2, anchor=np.array([-0.75, 2.0, 0.0])))  # joint 0
    sim.run_steps(1)
    sim.remove_joint(0)
    records[added.result()] = BodyRecord(4, "sphere", None, None, sphere)
    sim.run_steps(3 * 240)
    script = [(10, lambda: sim.apply_impulse(4, [0.0, 0.0, -0.2])),
              (20, lambda: sim.add_body(sphere.body_def(position=[2.0, 1.0, 2.0]))),  # id 5
              (30, lambda: sim.add_joint(JointDef("distance", 4, 5,                  # joint 1
                                                  anchor=np.array([2.0, 1.0, 2.0])))),
              (40, lambda: sim.edit_joint(1, break_force=1e6)),
              (50, lambda: sim.set_restitution(0.9, 2)),
              (60, lambda: sim.remove_joint(1))]
    now = sim.latest().step
    for step, send in script:
        sim.run_steps(now + step - sim.latest().step)
        send()
    live = sim.run_steps(240)
    start = sim.history.span()[0].step
    assert start > 0, "the history must no longer start at the scene"
    replay = history_replay(sim.history, records)
    assert [e.shape for e in replay.scene.bodies] == ["box", "box", "box", "sphere"]
    path = tmp_path / "saved.toml"
    write_replay(path, replay)
    again = load_replay(path)
    names = [(c.step, c.name) for c in again.commands]
    assert names == [(now - start + s, n) for (s, _), n in zip(script, (
        "apply_impulse", "add_body", "add_joint", "edit_joint", "set_restitution",
        "remove_joint"))]
    impulse, joint = again.commands[0], again.commands[2]
    assert impulse.args[0] == 3  # body 4 is the scene's fourth
    assert (joint.args[0].first, joint.args[0].second) == (3, 4)  # body 5 the next one made
    assert again.commands[3].args[0] == 0 and again.commands[5].args[0] == 0  # the first joint
    assert again.commands[4].args[1] == 1  # body 2 is the scene's second
    world, _ = build_world(again.scene)
    sim2 = Simulation(world, hz=again.scene.hz)
    replayed = Schedule.of(again).run_steps(sim2, live.step - start)
    assert np.allclose(replayed.pos, live.pos, atol=1e-9)
    assert np.allclose(replayed.ang_mom, live.ang_mom, atol=1e-9)
    assert replayed.restitution == live.restitution
    assert np.array_equal(replayed.body_restitution, live.body_restitution, equal_nan=True)


def test_a_history_from_a_scene_of_turned_spinning_meshes_replays_bit_for_bit(tmp_path):
    """Save replay of a history that starts at a scene writes each body as the scene placed
    it (a mesh's pose in its own frame, ω), not as read back from the world's state through
    the mesh frame and L (to within rounding, which a chaotic run grows): the replay re-runs
    the live run bit for bit."""
    world, records = build_world(TURNED)
    sim = Simulation(world, hz=TURNED.hz)
    sim.run_steps(240)
    sim.apply_impulse(0, [0.0, 0.3, 0.1])
    live = sim.run_steps(480)
    assert len(live.contact_points), "the bodies must touch: rounding would grow"
    path = tmp_path / "turned.toml"
    write_replay(path, history_replay(sim.history, {r.body_id: r for r in records}))
    again = load_replay(path)
    for saved, given in zip(again.scene.bodies, TURNED.bodies):
        assert (saved.position, saved.orientation, saved.velocity, saved.angular_velocity) == (
            given.position, given.orientation, given.velocity, given.angular_velocity)
    world, _ = build_world(again.scene)
    replayed = Schedule.of(again).run_steps(Simulation(world, hz=again.scene.hz), live.step)
    for name in ("pos", "quat", "vel", "ang_mom"):
        assert np.array_equal(getattr(replayed, name), getattr(live, name)), name
