"""Scene files: strict loading with file:line messages, save/load round trips, build_world."""

from pathlib import Path

import numpy as np
import pytest
import trimesh

from physics.geometry.meshes import MeshError, load_shape
from physics.geometry.rotation import quat_from_axis_angle, quat_rotate, quat_to_matrix
from physics.scene import (
    BodyEntry,
    Scene,
    SceneError,
    build_world,
    load_scene,
    save_scene,
    scene_from_snapshot,
)
from physics.simulation import Simulation
from tests.paths import REPO

SCENES = REPO / "assets" / "scenes"


def write(folder: Path, text: str, name: str = "scene.toml") -> Path:
    path = folder / name
    path.write_text(text, encoding="utf-8")
    return path


def write_box_obj(path: Path, extents=(0.2, 0.4, 0.6), offset=(0.0, 0.0, 0.0)) -> Path:
    """A closed box mesh (outward winding) at full float precision."""
    box = trimesh.creation.box(extents=extents)
    vertices = box.vertices + offset
    lines = [f"v {x!r} {y!r} {z!r}" for x, y, z in vertices.tolist()]
    lines += [f"f {a + 1} {b + 1} {c + 1}" for a, b, c in box.faces.tolist()]
    path.write_text("\n".join(lines) + "\n")
    return path


def error_of(path: Path) -> str:
    with pytest.raises(SceneError) as info:
        load_scene(path)
    return str(info.value)


# ---- reading ---------------------------------------------------------------------------------

def test_defaults_of_a_minimal_file(tmp_path):
    scene = load_scene(write(tmp_path, '[[body]]\nshape = "sphere"\nsize = [0.25]\n'))
    assert scene.gravity == (0.0, -9.81, 0.0)
    assert scene.hz == 240 and scene.dt == 1 / 240
    assert (scene.restitution, scene.friction) == (0.5, 0.5)
    assert scene.container_size is None  # no [container] table: no walls
    (body,) = scene.bodies
    assert body == BodyEntry(shape="sphere", size=(0.25,))
    assert body.line == 1


def test_container_table_without_size_is_the_default_box(tmp_path):
    scene = load_scene(write(tmp_path, "[container]\n"))
    assert scene.container_size == (4.0, 3.0, 4.0)
    assert scene.bodies == ()


def test_every_key_is_read(tmp_path):
    (tmp_path / "meshes").mkdir()
    write_box_obj(tmp_path / "meshes" / "box.obj")
    scene = load_scene(write(tmp_path, """
[world]
gravity = [0.0, -1.62, 0.0]
hz = 120
restitution = 0.25
friction = 0.75

[container]
size = [6, 4.5, 6]

[[body]]
mesh = "meshes/box.obj"
density = 2700.0
inertia = "solid"
position = [0.5, 1.5, -0.5]
orientation = [0.0, 0.0, 1.0, 0.0]
velocity = [1, 2, 3]
angular_velocity = [0.0, 0.0, 5.0]
restitution = 0.9
friction = 0.1
color = [0.9, 0.5, 0.2]
"""))
    assert scene.gravity == (0.0, -1.62, 0.0)
    assert scene.hz == 120 and scene.container_size == (6.0, 4.5, 6.0)
    assert (scene.restitution, scene.friction) == (0.25, 0.75)
    (body,) = scene.bodies
    assert body.mesh == tmp_path / "meshes" / "box.obj"  # resolved relative to the scene file
    assert body.shape is None and body.size is None
    assert (body.density, body.inertia) == (2700.0, "solid")
    assert body.position == (0.5, 1.5, -0.5) and body.orientation == (0.0, 0.0, 1.0, 0.0)
    assert body.velocity == (1.0, 2.0, 3.0) and body.angular_velocity == (0.0, 0.0, 5.0)
    assert (body.restitution, body.friction, body.color) == (0.9, 0.1, (0.9, 0.5, 0.2))
    assert body.line == 11


# ---- errors: file, line, table, key ------------------------------------------------------------

BODY_1 = '[[body]]\nshape = "box"\nsize = [1, 1, 1]\n\n'


@pytest.mark.parametrize("text, line, table, message", [
    # unknown keys, with a suggestion
    (BODY_1 + '[[body]]\nshape = "box"\nsize = [1, 1, 1]\ndensty = 5.0\n', 8, "[[body]] #2",
     "unknown key 'densty' (did you mean 'density'?)"),
    ("[world]\nhz = 240\ngravty = [0, -9.81, 0]\n", 3, "[world]",
     "unknown key 'gravty' (did you mean 'gravity'?)"),
    ("[container]\nsizes = [1, 1, 1]\n", 2, "[container]",
     "unknown key 'sizes' (did you mean 'size'?)"),
    ("[wrld]\ngravity = [0, 0, 0]\n", 1, "", "unknown table or key 'wrld' (did you mean 'world'?)"),
    (BODY_1 + "[[body]]\nzzz = 1\n", 6, "[[body]] #2", "unknown key 'zzz'; known: mesh, shape"),
    # wrong types
    ('[[body]]\nshape = "box"\nsize = [1, 1, 1]\ndensity = "heavy"\n', 4, "[[body]] #1",
     "density must be a number, got 'heavy'"),
    ("[world]\nhz = true\n", 2, "[world]", "hz must be a number, got true"),
    ("[world]\ngravity = -9.81\n", 2, "[world]",
     "gravity must be [number, number, number], got -9.81"),
    ('[world]\ngravity = [0, "down", 0]\n', 2, "[world]",
     "gravity must be [number, number, number]"),
    ("world = 3\n", 1, "", "'world' must be a table, written [world]"),
    ('[body]\nshape = "box"\n', 1, "", "bodies are written as [[body]] tables"),
    ('[[body]]\nmesh = 3\n', 2, "[[body]] #1", "mesh must be a file name in quotes, got 3"),
    # bad vector lengths and values
    (BODY_1 + "position = [1.0, 2.0]\n", 5, "[[body]] #1",
     "position must be [number, number, number], got [1.0, 2.0]"),
    (BODY_1 + "orientation = [0, 0, 0, 0]\n", 5, "[[body]] #1",
     "orientation must be a non-zero quaternion"),
    (BODY_1 + "restitution = 1.5\n", 5, "[[body]] #1",
     "restitution must be between 0 and 1, got 1.5"),
    ("[world]\nfriction = -0.1\n", 2, "[world]", "friction must be a finite number ≥ 0, got -0.1"),
    ("[world]\nrestitution = inf\n", 2, "[world]", "restitution must be finite"),
    ("[world]\nhz = 5\n", 2, "[world]", "hz must be between 10 and 10000 steps per second, got 5"),
    ("[world]\nhz = 1e9\n", 2, "[world]",  # the physics thread's limit, checked at load
     "hz must be between 10 and 10000 steps per second, got 1000000000.0"),
    ("[container]\nsize = [4, 0, 4]\n", 2, "[container]", "size must be > 0 on every axis"),
    (BODY_1 + "color = [1.0, 0.5, 2.0]\n", 5, "[[body]] #1", "color components must be in [0, 1]"),
    (BODY_1 + "density = 0\n", 5, "[[body]] #1", "density must be > 0, got 0"),
    (BODY_1 + "static = 1\n", 5, "[[body]] #1", "static must be true or false, got 1"),
    # shape / mesh rules
    ('[[body]]\nmesh = "a.obj"\nshape = "box"\n', 3, "[[body]] #1",
     "has both 'mesh' and 'shape'; give one of them"),
    ("\n[[body]]\nposition = [0, 1, 0]\n", 2, "[[body]] #1", "needs 'mesh = \"file\"' or 'shape"),
    ('[[body]]\nshape = "spere"\nsize = [1]\n', 2, "[[body]] #1",
     "shape must be one of box, sphere, cylinder, t_handle; got 'spere' (did you mean 'sphere'?)"),
    ('[[body]]\nshape = "box"\n', 2, "[[body]] #1", "shape 'box' needs size = [x, y, z]"),
    ('[[body]]\nshape = "sphere"\nsize = [1, 2]\n', 3, "[[body]] #1",
     "size must be [radius] in m, got [1, 2]"),
    ('[[body]]\nshape = "cylinder"\nsize = [0.5, -1]\n', 3, "[[body]] #1",
     "size must be > 0 on every axis"),
    ('[[body]]\nshape = "box"\nsize = [1, 1, 1]\nscale = 0.5\n', 4, "[[body]] #1",
     "'scale' is for mesh files only"),
    ('[[body]]\nshape = "t_handle"\ninertia = "shell"\n', 3, "[[body]] #1",
     "builtin shapes are solid"),
    ('[[body]]\nshape = "t_handle"\ninertia = "solidd"\n', 3, "[[body]] #1",
     "inertia must be one of auto, solid, shell; got 'solidd' (did you mean 'solid'?)"),
])
def test_errors_name_file_line_table_and_key(tmp_path, text, line, table, message):
    path = write(tmp_path, text)
    error = error_of(path)
    prefix = f"{path}:{line}: " + (f"{table}: " if table else "")
    assert error.startswith(prefix), error
    assert message in error, error


def test_key_lines_survive_multiline_arrays_comments_and_strings(tmp_path):
    path = write(tmp_path, '''# a comment with key = value
[world]
gravity = [
    0.0,
    -9.81,  # down
    0.0,
]

[[body]]   # first
shape = "t_handle"
angular_velocity = [
  0.0, 5.0, 0.0 ]

[[body]]
shape = "t_handle"
position = [0, 1, 0]
velcity = [1, 0, 0]
''')
    assert error_of(path) == (f"{path}:17: [[body]] #2: unknown key 'velcity' "
                              "(did you mean 'velocity'?)")


def test_missing_mesh_file_is_named_with_its_line(tmp_path):
    path = write(tmp_path, BODY_1 + '[[body]]\nmesh = "meshes/gone.obj"\n')
    error = error_of(path)
    assert error.startswith(f"{path}:6: [[body]] #2: mesh file 'meshes/gone.obj' not found")
    assert str(tmp_path / "meshes" / "gone.obj") in error


def test_a_mesh_scale_is_read_checked_and_applied(tmp_path):
    write_box_obj(tmp_path / "box.obj", extents=(200.0, 400.0, 600.0))  # millimetres
    path = write(tmp_path, '[[body]]\nmesh = "box.obj"\nscale = 0.001\nposition = [0, 1, 0]\n')
    assert load_scene(path).bodies[0].scale == 0.001
    world, records = build_world(load_scene(path))
    assert records[0].shape.scale == 0.001
    assert world.model.mass[0] == pytest.approx(1000.0 * 0.2 * 0.4 * 0.6, rel=1e-9)
    for bad in ("0", "-2", '"mm"', "nan"):
        path = write(tmp_path, f'[[body]]\nmesh = "box.obj"\nscale = {bad}\n')
        assert f"{path}:3: [[body]] #1: " in error_of(path)
        assert "scale must be" in error_of(path)


def test_toml_syntax_error_gives_file_and_line(tmp_path):
    path = write(tmp_path, "[world]\nhz = 240\nfriction = = 0.5\n")
    error = error_of(path)
    assert error.startswith(f"{path}:3:") and "TOML syntax error" in error


def test_unclosed_array_points_at_the_end_of_the_file(tmp_path):
    path = write(tmp_path, "[world]\ngravity = [0.0, -9.81,\n")
    assert error_of(path).startswith(f"{path}:2: TOML syntax error: ")
    assert error_of(path).endswith("(at the end of the file)")


def test_unreadable_files(tmp_path):
    assert "scene file not found" in error_of(tmp_path / "nope.toml")
    (tmp_path / "loop.toml").symlink_to("loop.toml")
    assert "scene file is a symbolic link that leads back to itself" in error_of(
        tmp_path / "loop.toml")
    assert "is a folder" in error_of(tmp_path)
    binary = tmp_path / "binary.toml"
    binary.write_bytes(b"[world]\nhz = 240\n\xff\xfe\n")
    assert error_of(binary) == f"{binary}:3: not UTF-8 text, so not a TOML scene file"


def test_mesh_that_fails_to_load_names_scene_body_and_mesh_error(tmp_path):
    (tmp_path / "broken.obj").write_text("this is not a mesh\n")
    path = write(tmp_path, BODY_1 + '[[body]]\nmesh = "broken.obj"\nposition = [0, 1, 0]\n')
    scene = load_scene(path)  # the file exists; its content is only read when building
    with pytest.raises(MeshError) as mesh_error:
        load_shape(tmp_path / "broken.obj")
    with pytest.raises(SceneError) as info:
        build_world(scene)
    assert str(info.value) == f"{path}:5: [[body]] #2: {mesh_error.value}"
    assert str(mesh_error.value).startswith("broken.obj: ")


def test_solid_mode_for_an_open_mesh_is_an_error_naming_the_body(tmp_path):
    box = trimesh.creation.box(extents=(1, 1, 1))
    open_box = trimesh.Trimesh(box.vertices, box.faces[:-2], process=False)
    open_box.export(tmp_path / "open.obj")
    path = write(tmp_path, '[[body]]\nmesh = "open.obj"\ninertia = "solid"\n')
    with pytest.raises(SceneError, match=r"scene\.toml:1: \[\[body\]\] #1: open\.obj: .*shell"):
        build_world(load_scene(path))


# ---- round trips -----------------------------------------------------------------------------

def test_round_trip_load_save_load(tmp_path):
    (tmp_path / "meshes").mkdir()
    write_box_obj(tmp_path / "meshes" / "box.obj")
    original = Scene(
        gravity=(0.1, -9.80665, 1e-17), hz=333, restitution=0.3, friction=0.0,
        container_size=(5.5, 2.25, 3.0),
        bodies=(
            BodyEntry(mesh=tmp_path / "meshes" / "box.obj", scale=0.5, density=1234.5,
                      inertia="shell",
                      position=(0.1, 0.2, 0.3), orientation=(0.5, 0.5, 0.5, 0.5),
                      velocity=(1 / 3, 0.0, -2.0), angular_velocity=(0.0, 2 / 7, 0.0),
                      restitution=0.9, friction=0.05, color=(0.1, 0.2, 0.3)),
            BodyEntry(shape="t_handle", size=(1.5,)),
            BodyEntry(shape="cylinder", size=(0.1, 0.7), restitution=1.0, static=True),
        ),
    )
    first = tmp_path / "first.toml"
    save_scene(original, first)
    loaded = load_scene(first)
    assert loaded == original
    # saved elsewhere: the mesh path is rewritten relative to the new file and still resolves
    (tmp_path / "elsewhere").mkdir()
    second = tmp_path / "elsewhere" / "second.toml"
    save_scene(loaded, second)
    assert 'mesh = "../meshes/box.obj"' in second.read_text()
    assert load_scene(second) == original


def test_a_t_handle_without_a_size_reads_as_the_natural_one(tmp_path):
    path = tmp_path / "t.toml"
    path.write_text('[[body]]\nshape = "t_handle"\n')
    assert load_scene(path).bodies[0].size == (1.0,)


@pytest.mark.parametrize("name", sorted(p.stem for p in SCENES.glob("*.toml")))
def test_shipped_scenes_round_trip(tmp_path, name):
    scene = load_scene(SCENES / f"{name}.toml")
    save_scene(scene, tmp_path / "copy.toml")
    assert load_scene(tmp_path / "copy.toml") == scene


# ---- building worlds -------------------------------------------------------------------------

def test_build_world_places_the_mesh_origin_and_frame(tmp_path):
    """position/orientation are where the MESH's origin and axes go; the World holds the COM."""
    offset = np.array([0.3, -0.1, 0.2])
    write_box_obj(tmp_path / "box.obj", extents=(0.2, 0.4, 0.6), offset=offset)
    q = quat_from_axis_angle(np.array([1.0, 2.0, 3.0]) / np.sqrt(14), 0.7)
    path = write(tmp_path, f"""
[world]
gravity = [0.0, 0.0, 0.0]

[[body]]
mesh = "box.obj"
density = 500.0
position = [1.0, 2.0, 3.0]
orientation = {[float(c) for c in q]!r}
velocity = [0.5, 0.0, 0.0]
angular_velocity = [0.0, 1.0, 2.0]
restitution = 0.8

[[body]]
mesh = "box.obj"
density = 500.0
position = [-1.0, 1.0, 0.0]
color = [0.2, 0.4, 0.6]
""")
    world, records = build_world(load_scene(path))
    assert world.count == 2 and [r.body_id for r in records] == world.ids.tolist()
    mass = 500.0 * 0.2 * 0.4 * 0.6
    assert world.model.mass == pytest.approx([mass, mass], rel=1e-12)
    # the COM sits at the mesh offset carried through the placement
    np.testing.assert_allclose(world.state.pos[0], [1, 2, 3] + quat_rotate(q, offset), atol=1e-12)
    np.testing.assert_allclose(world.state.pos[1], [-1, 1, 0] + offset, atol=1e-12)
    # principal axes: box edges, moments ascending x (0.2) < ... — z (0.6) edge has the smallest
    moments = mass / 12 * np.array([0.2**2 + 0.4**2, 0.2**2 + 0.6**2, 0.4**2 + 0.6**2])
    np.testing.assert_allclose(world.model.inertia[0], moments, rtol=1e-12)
    body_axes = quat_to_matrix(world.state.quat[0])
    mesh_axes = quat_to_matrix(q)
    np.testing.assert_allclose(np.abs(mesh_axes.T @ body_axes), [[0, 0, 1], [0, 1, 0], [1, 0, 0]],
                               atol=1e-12)
    np.testing.assert_allclose(world.state.vel[0], [0.5, 0, 0])
    np.testing.assert_allclose(world.angular_velocity()[0], [0, 1, 2], atol=1e-12)
    assert world.model.restitution[0] == 0.8 and np.isnan(world.model.restitution[1])
    # bookkeeping beside the solver arrays; one Shape shared by both bodies of the same mesh
    assert [r.name for r in records] == ["box.obj", "box.obj"]
    assert records[0].source == str(tmp_path / "box.obj")
    assert records[0].color is None and records[1].color == (0.2, 0.4, 0.6)
    assert records[0].shape is records[1].shape


def test_build_world_of_every_shipped_scene():
    default, default_records = build_world(load_scene(SCENES / "default.toml"))
    assert default.count == len(default_records) >= 8
    np.testing.assert_array_equal(default.model.settings.container_size, [2.5, 2, 2.5])
    np.testing.assert_array_equal(default.model.settings.gravity, [0, -9.81, 0])
    names = {r.name for r in default_records}
    assert {"box", "sphere", "cylinder", "t_handle"} <= names
    assert sum(r.source is not None for r in default_records) >= 4  # sample meshes from assets/
    assert all(Path(r.source).is_file() for r in default_records if r.source is not None)
    # every body starts inside the container, above the floor
    assert np.all(default.state.pos[:, 1] > 0) and np.all(default.state.pos[:, 1] < 2)
    assert np.all(np.abs(default.state.pos[:, [0, 2]]) < 1.25)

    bounce, _ = build_world(load_scene(SCENES / "bounce.toml"))
    restitutions = bounce.model.effective_restitution()
    assert 0.9 in restitutions and 0.3 in restitutions
    assert len(set(bounce.model.effective_friction())) >= 2

    dz_scene = load_scene(SCENES / "dzhanibekov.toml")
    dz, (record,) = build_world(dz_scene)
    assert dz_scene.container_size is None and dz.model.settings.container_size is None
    np.testing.assert_array_equal(dz.model.settings.gravity, [0, 0, 0])
    assert record.name == "t_handle"
    # spun near the middle principal axis: ω in the principal frame is mostly w2, with ~1 % off
    w = dz.body_angular_velocity()[0]
    assert abs(w[1]) > 0.99 * np.linalg.norm(w)
    assert 0.005 < np.hypot(w[0], w[2]) / abs(w[1]) < 0.05


def test_build_world_reports_a_bad_value_in_a_scene_made_in_code():
    scene = Scene(bodies=(BodyEntry(shape="box", size=(1.0, 1.0, 1.0)),
                          BodyEntry(shape="box", size=(1.0, 1.0, 1.0), restitution=2.0)))
    with pytest.raises(SceneError, match=r"^scene: \[\[body\]\] #2: restitution must be between"):
        build_world(scene)


@pytest.mark.parametrize("position, centre", [("[50.0, 1.0, 0.0]", "(50, 1, 0)"),
                                              ("[0.0, -5.0, 0.0]", "(0, -5, 0)")])
def test_a_body_outside_the_container_is_an_error_naming_its_line_and_the_extent(
        tmp_path, position, centre):
    path = tmp_path / "outside.toml"
    path.write_text('[container]\nsize = [2.0, 3.0, 2.0]\n\n[[body]]\nshape = "sphere"\n'
                    'size = [0.1]\nposition = [0.0, 1.0, 0.0]\n\n'
                    f'[[body]]\nshape = "sphere"\nsize = [0.1]\nposition = {position}\n')
    with pytest.raises(SceneError) as error:
        build_world(load_scene(path))
    assert str(error.value) == (
        f"{path}:9: [[body]] #2: position {position} puts the body's centre of mass at "
        f"{centre}, outside the container (x -1…1, y 0…3, z -1…1 m); move the body inside or "
        "make [container] size larger")


def test_a_static_body_is_built_static_and_one_set_moving_is_an_error_naming_it(tmp_path):
    world, _ = build_world(load_scene(write(tmp_path, BODY_1 + "static = true\n" + BODY_1)))
    assert world.model.static.tolist() == [True, False]
    assert world.model.inv_mass[0] == 0.0 and world.model.inv_mass[1] == 1e-3
    path = write(tmp_path, BODY_1 + "static = true\nvelocity = [0, 1, 0]\n")
    with pytest.raises(SceneError, match=r"scene.toml:1: \[\[body\]\] #1: a static body "
                                         r"never moves"):
        build_world(load_scene(path))


def test_a_body_made_static_while_running_is_saved_static(tmp_path):
    world, records = build_world(load_scene(write(tmp_path, BODY_1.replace(
        "\n\n", "\nposition = [0, 2, 0]\n\n"))))
    simulation = Simulation(world)
    simulation.run_steps(24)
    future = simulation.set_static(records[0].body_id, True)
    snapshot = simulation.run_steps(24)
    future.result()
    assert snapshot.static.tolist() == [True] and not snapshot.vel.any()
    saved = scene_from_snapshot(snapshot, {r.body_id: r for r in records})
    assert saved.bodies[0].static
    save_scene(saved, tmp_path / "saved.toml")
    assert "static = true" in (tmp_path / "saved.toml").read_text()
    rebuilt, _ = build_world(load_scene(tmp_path / "saved.toml"))
    assert rebuilt.model.static.tolist() == [True]
    np.testing.assert_allclose(rebuilt.state.pos, snapshot.pos, atol=1e-12)


def test_without_a_container_a_body_may_be_anywhere(tmp_path):
    path = tmp_path / "open.toml"
    path.write_text('[[body]]\nshape = "sphere"\nsize = [0.1]\nposition = [50.0, -5.0, 0.0]\n')
    world, _ = build_world(load_scene(path))
    np.testing.assert_allclose(world.state.pos[0], [50.0, -5.0, 0.0])
