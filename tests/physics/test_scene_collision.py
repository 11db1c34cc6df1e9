"""Meshes that collide as themselves: the scene key ``collision`` and decomposed bodies in
motion (meshes made by trimesh, split by V-HACD, cached in the session's folder)."""

import logging

import numpy as np
import pytest
import trimesh

from physics.geometry import decompose as decompose_module
from physics.geometry.rotation import quat_to_matrix
from physics.scene import SceneError, build_world, load_scene, save_scene
from physics.settings import DECOMPOSE_MAX_PIECES

H = 1.0 / 240.0
UPRIGHT = trimesh.transformations.rotation_matrix(-np.pi / 2, [1, 0, 0])  # z up → y up


def bowl(radius=0.3, wall=0.03) -> trimesh.Trimesh:
    """A hemispherical bowl, open at the top (y up), its rim at y = 0 and its bottom at −radius."""
    angles = np.linspace(0, np.pi / 2, 8)
    outer = np.c_[radius * np.sin(angles), -radius * np.cos(angles)]
    inner = (radius - wall) / radius * outer[::-1]
    profile = np.vstack(([0.0, -radius], outer[1:], inner[:-1], [0.0, wall - radius]))
    mesh = trimesh.creation.revolve(profile, sections=24)
    mesh.apply_transform(UPRIGHT)
    return mesh


def flat_torus() -> trimesh.Trimesh:
    """A torus lying flat (axis along y): major radius 0.3 m, minor 0.08 m."""
    mesh = trimesh.creation.torus(0.3, 0.08, major_sections=24, minor_sections=8)
    mesh.apply_transform(UPRIGHT)
    return mesh


def mug() -> trimesh.Trimesh:
    """A mug, y up, its bottom at y = 0: a cup 0.1 m across and 0.11 m tall (walls 8 mm, bottom
    10 mm) with a ring handle beside it, two solids in one mesh."""
    cup = trimesh.creation.revolve(np.array([[0.0, 0.0], [0.05, 0.0], [0.05, 0.11],
                                             [0.042, 0.11], [0.042, 0.01], [0.0, 0.01]]),
                                   sections=32)
    handle = trimesh.creation.torus(0.03, 0.007, major_sections=24, minor_sections=8)
    handle.apply_transform(trimesh.transformations.rotation_matrix(np.pi / 2, [1, 0, 0]))
    handle.apply_translation([0.078, 0.0, 0.055])
    mesh = trimesh.util.concatenate([cup, handle])
    mesh.apply_transform(UPRIGHT)
    return mesh


@pytest.fixture(scope="module")
def meshes(tmp_path_factory):
    folder = tmp_path_factory.mktemp("meshes")
    bowl().export(folder / "bowl.obj")
    flat_torus().export(folder / "torus.obj")
    mug().export(folder / "mug.obj")
    return folder


def scene(folder, bodies: str) -> str:
    path = folder / "scene.toml"
    path.write_text('[container]\nsize = [2.0, 2.0, 2.0]\n' + bodies)
    return path


def ball(y, radius=0.05, x=0.01):
    return (f'\n[[body]]\nshape = "sphere"\nsize = [{radius}]\nposition = [{x}, {y}, 0.0]\n'
            'restitution = 0.1\n')


def settle(path, seconds=2.5):
    world, records = build_world(load_scene(path))
    for _ in range(int(seconds / H)):
        world.step(H)
    return world, records


@pytest.mark.parametrize("collision", ["auto", "hull"])
def test_a_ball_dropped_into_a_static_bowl_ends_inside_below_the_rim_or_on_its_hull(
        meshes, collision):
    path = scene(meshes, f'\n[[body]]\nmesh = "bowl.obj"\nposition = [0.0, 0.3, 0.0]\n'
                         f'static = true\ncollision = "{collision}"\n' + ball(1.0))
    world, records = settle(path)
    y = world.state.pos[1, 1]
    if collision == "auto":  # the bowl's hull is 3.7× its volume: auto splits it
        assert 2 <= len(records[0].pieces) <= DECOMPOSE_MAX_PIECES
        assert world.model.compound.tolist() == [True, False]
        # at the bottom of the hollow (its inside at 0.03 m, the pieces overfill it a little),
        # wholly below the rim; it may still roll there: nothing resists a rolling ball
        assert 0.03 + 0.05 - 0.005 < y < 0.15
        np.testing.assert_allclose(world.state.pos[1, [0, 2]], 0.0, atol=0.15)
    else:  # on the lid of the hull, which is not there, at rest
        assert records[0].pieces == () and not world.model.compound.any()
        assert y == pytest.approx(0.3 + 0.05, abs=3e-3)
        assert world.asleep()[1]


@pytest.mark.parametrize("collision", ["auto", "hull"])
def test_a_small_ball_falls_through_the_hole_of_a_flat_torus_to_the_floor(meshes, collision):
    path = scene(meshes, f'\n[[body]]\nmesh = "torus.obj"\nposition = [0.0, 0.08, 0.0]\n'
                         f'collision = "{collision}"\n' + ball(0.8))
    world, _ = settle(path)
    expected = 0.05 if collision == "auto" else 0.08 + 0.08 + 0.05  # the floor, or the hull
    assert world.state.pos[1, 1] == pytest.approx(expected, abs=5e-3)


@pytest.mark.parametrize("collision", ["decomposed", "hull"])
def test_a_torus_dropped_over_a_static_peg_ends_around_it(meshes, collision):
    peg = ('\n[[body]]\nshape = "box"\nsize = [0.1, 0.6, 0.1]\nposition = [0.0, 0.3, 0.0]\n'
           'static = true\n')
    path = scene(meshes, peg + f'\n[[body]]\nmesh = "torus.obj"\nposition = [0.02, 0.9, 0.0]\n'
                              f'collision = "{collision}"\n')
    world, _ = settle(path)
    y = world.state.pos[1, 1]
    if collision == "decomposed":  # down the peg to the floor, the peg through its hole
        assert y == pytest.approx(0.08, abs=5e-3)
        assert np.hypot(*world.state.pos[1, [0, 2]]) < 0.3
    else:  # the hull's lid sits on top of the peg
        assert y == pytest.approx(0.6 + 0.08, abs=5e-3)


def test_collision_is_read_saved_back_and_refused_where_it_means_nothing(meshes, tmp_path):
    path = scene(meshes, '\n[[body]]\nmesh = "torus.obj"\ncollision = "hull"\n'
                         '\n[[body]]\nmesh = "bowl.obj"\nposition = [0.0, 1.0, 0.0]\n')
    loaded = load_scene(path)
    assert [b.collision for b in loaded.bodies] == ["hull", "auto"]
    save_scene(loaded, tmp_path / "copy.toml")
    text = (tmp_path / "copy.toml").read_text()
    assert text.count("collision") == 1 and 'collision = "hull"' in text
    assert load_scene(tmp_path / "copy.toml") == loaded
    bad = scene(meshes, '\n[[body]]\nmesh = "torus.obj"\ncollision = "convex"\n')
    with pytest.raises(SceneError, match=r"collision must be one of auto, hull, decomposed; "
                                         r"got 'convex'"):
        load_scene(bad)
    bad = scene(meshes, '\n[[body]]\nshape = "box"\nsize = [1, 1, 1]\ncollision = "hull"\n')
    with pytest.raises(SceneError, match="'collision' is for mesh files only"):
        load_scene(bad)


def test_a_mesh_the_library_fails_on_keeps_its_hull_with_a_message_naming_it(
        meshes, monkeypatch, caplog, tmp_path):
    def fails(*args):
        raise RuntimeError("out of memory")
    monkeypatch.setattr(decompose_module, "_vhacd_hulls", fails)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))  # nothing cached: the library is asked
    path = scene(meshes, '\n[[body]]\nmesh = "torus.obj"\ncollision = "decomposed"\n'
                         'position = [0.0, 0.5, 0.0]\n')
    with caplog.at_level(logging.WARNING):
        world, records = build_world(load_scene(path))
    assert records[0].pieces == () and not world.model.compound.any()
    assert "torus.obj: convex decomposition failed (out of memory); it collides as its hull" in (
        caplog.text)


def test_a_mug_dropped_on_its_side_comes_to_rest_on_the_floor(meshes):
    """On its side (turned a quarter about x: its opening towards +z, the handle up), it falls,
    rolls and rests with its mesh touching the floor, not held above it by anything."""
    side = [float(np.sqrt(0.5)), float(np.sqrt(0.5)), 0.0, 0.0]
    path = scene(meshes, f'\n[[body]]\nmesh = "mug.obj"\nposition = [0.0, 0.3, 0.0]\n'
                         f'orientation = {side}\nrestitution = 0.1\n')
    world, records = settle(path, seconds=4.0)
    assert len(records[0].pieces) >= 2  # its hull is over 3× its volume: split
    assert world.asleep()[0]
    shape = records[0].shape
    rotm = quat_to_matrix(world.state.quat[:1])[0]
    body = (shape.vertices - shape.properties.center_of_mass) @ shape.mesh_to_body_rotation
    lowest = (world.state.pos[0] + body @ rotm.T)[:, 1].min()
    assert lowest == pytest.approx(0.0, abs=3e-3)
