"""Joints in scene files: named bodies, [[joint]] tables, strict messages, exact round trips,
and saving a moving jointed world so that it carries on as it was."""

import numpy as np
import pytest

from physics.constraints.joint import WORLD, JointDef
from physics.scene import (
    SceneError,
    build_world,
    load_scene,
    save_scene,
    scene_from_snapshot,
)
from physics.simulation import Simulation

HEADER = """[world]
gravity = [0.0, -9.81, 0.0]

[[body]]
name = "bob"
shape = "sphere"
size = [0.05]
position = [0.0, 1.0, 0.0]

[[body]]
name = "slider"
shape = "box"
size = [0.2, 0.1, 0.1]
position = [0.5, 1.0, 0.0]
"""

HINGE = """
[[joint]]
type = "hinge"
bodies = ["bob", "world"]
anchor = [0.0, 2.0, 0.0]
axis = [0.0, 0.0, 1.0]
limits = [-1.0, 1.0]
motor = { speed = 2.0, max_torque = 5.0 }
break_force = 1e9
collide = true
"""

EVERY_TYPE = HINGE + """
[[joint]]
type = "prismatic"
bodies = ["slider", "bob"]
anchor = [0.5, 1.0, 0.0]
axis = [1.0, 0.0, 0.0]
limits = [-0.1, 0.3]
motor = { speed = 0.5, max_force = 3.0 }

[[joint]]
type = "distance"
bodies = ["world", "slider"]
anchor = [0.5, 2.0, 0.0]
min = 0.5
max = 1.5
stiffness = 20.0
damping = 0.5
"""


def write(tmp_path, text, name="joints.toml"):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def records_of(records):
    return {r.body_id: r for r in records}


def test_joints_and_names_are_read(tmp_path):
    scene = load_scene(write(tmp_path, HEADER + EVERY_TYPE))
    assert [b.name for b in scene.bodies] == ["bob", "slider"]
    hinge, slider, rope = (entry.joint for entry in scene.joints)
    assert hinge == JointDef("hinge", 0, WORLD, anchor=[0, 2, 0], axis=[0, 0, 1],
                             limits=(-1.0, 1.0), motor_speed=2.0, motor_max=5.0,
                             break_force=1e9, collide=True)
    assert (slider.first, slider.second, slider.motor_max, slider.limits) == (1, 0, 3.0,
                                                                              (-0.1, 0.3))
    # "world" written first: the world is always the second body
    assert (rope.first, rope.second) == (1, WORLD)
    assert (rope.min_length, rope.max_length, rope.stiffness, rope.damping) == (0.5, 1.5, 20.0,
                                                                                0.5)
    assert [entry.line for entry in scene.joints] == [16, 26, 34]


def test_build_world_makes_the_joints_between_the_named_bodies(tmp_path):
    world, records = build_world(load_scene(write(tmp_path, HEADER + EVERY_TYPE)))
    bob, slider = (r.body_id for r in records)
    assert [(d.kind, d.first, d.second) for d in world.joints.defs.values()] == [
        ("hinge", bob, WORLD), ("prismatic", slider, bob), ("distance", slider, WORLD)]
    assert [r.scene_name for r in records] == ["bob", "slider"]


def test_save_load_round_trip_is_exact(tmp_path):
    scene = load_scene(write(tmp_path, HEADER + EVERY_TYPE))
    world, records = build_world(scene)
    saved = scene_from_snapshot(Simulation(world).latest(), records_of(records))
    save_scene(saved, tmp_path / "a.toml")
    again = load_scene(tmp_path / "a.toml")
    assert again == saved
    save_scene(again, tmp_path / "b.toml")
    assert (tmp_path / "a.toml").read_text() == (tmp_path / "b.toml").read_text()
    # at the start the saved joints are the file's, with the lengths made explicit
    assert [e.joint for e in saved.joints[:2]] == [e.joint for e in scene.joints[:2]]
    rope = saved.joints[2].joint
    assert (rope.min_length, rope.max_length, rope.rest_length) == (0.5, 1.5, 1.0)


def test_a_scene_saved_in_motion_carries_on_as_the_running_world(tmp_path):
    """Saved mid-swing (hinge and slider moved from their start, the spring stretched), the
    file rebuilds the same joints: limits shifted by the present angle and offset, the spring's
    rest length kept, so the rebuilt world follows the running one. (Only the warm starts are
    lost; no limit is touching here, where that would show as a solver difference.)"""
    text = HEADER + EVERY_TYPE.replace("limits = [-0.1, 0.3]", "limits = [-1.0, 1.0]")
    world, records = build_world(load_scene(write(tmp_path, text)))
    snapshot = Simulation(world).run_steps(120)
    angle, offset, _ = snapshot.joints.coordinate
    assert abs(angle) > 0.3 and abs(offset) > 0.3  # really moved
    save_scene(scene_from_snapshot(snapshot, records_of(records)), tmp_path / "mid.toml")
    saved = load_scene(tmp_path / "mid.toml")
    hinge, slider, spring = (e.joint for e in saved.joints)
    np.testing.assert_allclose(hinge.limits, np.array([-1.0, 1.0]) - angle, rtol=1e-12)
    np.testing.assert_allclose(slider.limits, np.array([-1.0, 1.0]) - offset, rtol=1e-12)
    assert (spring.min_length, spring.max_length, spring.rest_length) == (0.5, 1.5, 1.0)
    rebuilt, _ = build_world(saved)
    for _ in range(240):
        world.step(1 / 240)
        rebuilt.step(1 / 240)
    np.testing.assert_allclose(rebuilt.state.pos, world.state.pos, atol=1e-5)
    np.testing.assert_allclose(rebuilt.state.vel, world.state.vel, atol=1e-4)


def test_unnamed_jointed_bodies_get_names_when_saved(tmp_path):
    scene = load_scene(write(tmp_path, HEADER.replace('name = "bob"\n', '') .replace(
        'name = "slider"', 'name = "body0"')))
    world, records = build_world(scene)
    sim = Simulation(world)
    bob = records[0].body_id
    sim.add_joint(JointDef("ball", bob, WORLD, anchor=[0.0, 2.0, 0.0]))
    snapshot = sim.run_steps(0)
    saved = scene_from_snapshot(snapshot, records_of(records))
    # body0 is taken by the other body: the jointed one is body0-2
    assert [b.name for b in saved.bodies] == ["body0-2", "body0"]
    save_scene(saved, tmp_path / "named.toml")
    again = load_scene(tmp_path / "named.toml")
    assert again.joints[0].joint.first == 0 and again.joints[0].joint.second == WORLD


BAD = [
    ('bodies = ["bob", "world"]', 'bodies = ["bbo", "world"]', "bodies",
     "no body is named 'bbo' (did you mean 'bob'?)"),
    ('bodies = ["bob", "world"]', 'bodies = ["nobody", "world"]', "bodies",
     "no body is named 'nobody'; give a [[body]] name = 'nobody'"),
    ('bodies = ["bob", "world"]', 'bodies = ["bob", "bob"]', "bodies",
     "a joint needs two different bodies, got 'bob' twice"),
    ('bodies = ["bob", "world"]', 'bodies = "bob"', "bodies", "bodies must be two names"),
    ('axis = [0.0, 0.0, 1.0]', 'axis = [0.0, 0.0, 0.0]', "axis", "joint axis must be non-zero"),
    ('axis = [0.0, 0.0, 1.0]', 'axis = [0.0, nan, 1.0]', "axis", "axis must be finite"),
    ('anchor = [0.0, 2.0, 0.0]', 'anchor = [0.0, inf, 0.0]', "anchor", "anchor must be finite"),
    ('limits = [-1.0, 1.0]', 'limits = [1.0, -1.0]', "limits",
     "joint limits must have lo ≤ hi, got [1.0, -1.0]"),
    ('limits = [-1.0, 1.0]', 'limits = [-4.0, 1.0]', "limits", "hinge limits must lie inside"),
    ('type = "hinge"', 'type = "hnge"', "type", "(did you mean 'hinge'?)"),
    ('motor = { speed = 2.0, max_torque = 5.0 }', 'motor = { speed = 2.0, max_force = 5.0 }',
     "motor", "motor is written { speed = 2.0, max_torque = 5.0 }"),
    ('motor = { speed = 2.0, max_torque = 5.0 }', 'motor = { speed = 2.0, max_torque = -5.0 }',
     "motor", "motor max torque/force must be a finite number ≥ 0"),
    ('break_force = 1e9', 'break_force = -1.0', "break_force",
     "break_force must be a finite number ≥ 0"),
    ('break_force = 1e9', 'break_force = nan', "break_force", "break_force must be finite"),
    ('collide = true', 'collide = 1', "collide", "collide must be true or false"),
    ('collide = true', 'min = 0.5', "min", "a hinge joint takes no min, max, rest_length"),
    ('collide = true', 'colide = true', "colide", "unknown key 'colide' (did you mean 'collide'?)"),
    ('anchor = [0.0, 2.0, 0.0]\n', '', None, "needs anchor = [x, y, z]"),
]


@pytest.mark.parametrize("old, new, key, message", BAD)
def test_bad_joints_name_file_line_key_and_value(tmp_path, old, new, key, message):
    text = HEADER + HINGE.replace(old, new)
    error = error_text(write(tmp_path, text))
    lines = text.splitlines()
    line = (next(i for i, t in enumerate(lines, 1) if t.startswith(key + " ") or
                 t.startswith(key + "="))
            if key else lines.index("[[joint]]") + 1)
    assert error.startswith(f"{tmp_path / 'joints.toml'}:{line}: [[joint]] #1: "), error
    assert message in error


def test_a_rope_longer_than_its_max_at_the_start_is_refused_when_built(tmp_path):
    text = HEADER + """
[[joint]]
type = "distance"
bodies = ["bob", "world"]
anchor = [0.0, 3.0, 0.0]
min = 0.1
max = 1.0
"""
    scene = load_scene(write(tmp_path, text))
    with pytest.raises(SceneError) as info:
        build_world(scene)
    assert "joints.toml:16: [[joint]] #1: a distance joint must start within its min and max: " \
        "the anchor is 2 m from the body's centre, outside [0.1, 1] m" in str(info.value)


@pytest.mark.parametrize("old, new, message", [
    ('name = "slider"', 'name = "bob"', "name 'bob' is already the name of [[body]] #1"),
    ('name = "slider"', 'name = "world"', "other than 'world'"),
    ('name = "slider"', 'name = ""', "name must be a non-empty text"),
    ('name = "slider"', 'name = 3', "name must be a non-empty text"),
])
def test_bad_body_names(tmp_path, old, new, message):
    error = error_text(write(tmp_path, HEADER.replace(old, new)))
    assert ":11: [[body]] #2: " in error and message in error


def error_text(path) -> str:
    with pytest.raises(SceneError) as info:
        load_scene(path)
    return str(info.value)
