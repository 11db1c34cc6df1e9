"""Replay files (physics/replay.py): a scripted run saved as a replay and run again gives the
same bits; every key is checked and an error names the file, the line and the key."""

import pytest

from physics.replay import Schedule, load_replay, save_replay
from physics.scene import BodyEntry, Scene, SceneError, build_world
from physics.simulation import Simulation
from tests.physics.scripted import HZ, SECONDS, scripted_run
from tests.physics.world_compare import assert_same_world

SCENE = Scene(
    gravity=(0.0, -9.81, 0.0), hz=HZ, restitution=0.4, friction=0.6,
    container_size=(4.0, 3.0, 4.0),
    bodies=(BodyEntry(shape="box", size=(0.4, 0.3, 0.2), position=(0.0, 0.3, 0.0),
                      angular_velocity=(0.0, 4.0, 0.0)),
            BodyEntry(shape="box", size=(0.4, 0.3, 0.2), position=(0.6, 1.0, 0.2)),
            BodyEntry(shape="cylinder", size=(0.1, 0.3), position=(-0.7, 1.4, -0.3),
                      velocity=(1.0, 0.0, 0.5), angular_velocity=(3.0, 1.0, 2.0)),
            BodyEntry(shape="sphere", size=(0.1,), position=(0.2, 2.0, -0.6),
                      velocity=(-1.0, 0.0, 1.0))))


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    """The scripted run on SCENE, saved as a replay: (its path, the worlds recorded live)."""
    world, _ = build_world(SCENE)
    sim = Simulation(world, hz=SCENE.hz)
    recorded = scripted_run(sim, record_every=400)
    path = tmp_path_factory.mktemp("replay") / "run.toml"
    save_replay(path, SCENE, sim.history)
    return path, recorded


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
