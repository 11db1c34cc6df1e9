"""Mesh loading, repair, inertia-mode choice, collision hulls and builtin shapes.

Expected values are closed forms (boxes, tetrahedra, regular prisms and icosahedra, the
parallel-axis theorem) or, for curved non-convex assets, trimesh's independent integration.
"""

import importlib.util
from pathlib import Path

import numpy as np
import pytest
import trimesh
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.spatial import ConvexHull

from physics.geometry.meshes import (
    Mesh,
    MeshError,
    builtin_shape,
    column_ranges,
    convex_hull_vertices,
    load_mesh,
    load_shape,
    mesh_poses,
    shape_from_mesh,
)
from physics.geometry.rotation import quat_from_axis_angle, quat_from_rotvec, quat_to_matrix
from tests.paths import REPO

ASSETS = REPO / "assets" / "meshes"


def write_obj(path: Path, vertices, faces) -> Path:
    """OBJ at full float precision (1-based indices), written without trimesh's processing."""
    lines = [f"v {x!r} {y!r} {z!r}" for x, y, z in np.asarray(vertices, dtype=float).tolist()]
    lines += [f"f {a + 1} {b + 1} {c + 1}" for a, b, c in np.asarray(faces).tolist()]
    path.write_text("\n".join(lines) + "\n")
    return path


def export(mesh: trimesh.Trimesh, path: Path, **options) -> None:
    """trimesh export; .gltf via the in-memory dict (its file export leaves a handle open)."""
    if path.suffix == ".gltf":
        for name, data in mesh.export(file_type="gltf").items():
            (path.parent / (path.name if name == "model.gltf" else name)).write_bytes(data)
    else:
        mesh.export(path, **options)


def parallel_axis(inertia, mass, offset):
    """Inertia (3, 3) about a point displaced by ``offset`` from the COM."""
    d = np.asarray(offset, dtype=float)
    return inertia + mass * (d @ d * np.eye(3) - np.outer(d, d))


def box_inertia(mass, size):
    a, b, c = size
    return mass / 12 * np.diag([b * b + c * c, a * a + c * c, a * a + b * b])


def assert_props(props, volume, com, inertia, rtol, atol_com):
    """Mass properties at density 1 against expected volume, COM and inertia (about the COM)."""
    assert props.volume == pytest.approx(volume, rel=rtol)
    assert np.allclose(props.center_of_mass, com, rtol=0, atol=atol_com)
    scale = np.abs(inertia).max()
    assert np.allclose(props.inertia, inertia, rtol=0, atol=rtol * scale)


# ------------------------------------------------------------------------------------------
# builtin shapes


def t_handle_closed_form(scale=1.0, density=1000.0):
    """T-handle = crossbar 0.3×0.05×0.05 at y 0.025 + stem 0.05×0.15×0.05 at y −0.075."""
    parts = [((0.3, 0.05, 0.05), (0.0, 0.025, 0.0)), ((0.05, 0.15, 0.05), (0.0, -0.075, 0.0))]
    masses = [density * np.prod(size) * scale**3 for size, _ in parts]
    centres = [np.array(c) * scale for _, c in parts]
    mass = sum(masses)
    com = sum(m * c for m, c in zip(masses, centres)) / mass
    inertia = sum(parallel_axis(box_inertia(m, np.array(size) * scale), m, c - com)
                  for m, (size, _), c in zip(masses, parts, centres))
    return mass, com, inertia


def test_t_handle_matches_two_boxes_and_has_distinct_moments():
    shape = builtin_shape("t_handle")
    mass, _, inertia = t_handle_closed_form()
    props = shape.properties
    assert props.mode == "solid" and props.watertight
    assert props.mass == pytest.approx(mass, rel=1e-12)
    assert np.allclose(props.center_of_mass, 0.0, atol=1e-15)
    assert np.allclose(props.inertia, inertia, rtol=0, atol=1e-12 * inertia.max())
    i1, i2, i3 = props.principal_moments
    assert i2 / i1 >= 1.2 and i3 / i2 >= 1.2
    assert np.ptp(shape.vertices, axis=0).max() == pytest.approx(0.3)
    assert len(shape.hull) <= 64


def test_t_handle_scale_scales_moments_by_fifth_power():
    small, big = builtin_shape("t_handle"), builtin_shape("t_handle", [2.0])
    assert np.allclose(big.properties.principal_moments,
                       32 * small.properties.principal_moments, rtol=1e-12)


def test_builtin_box_is_exact_with_its_8_corners_as_hull():
    size = np.array([0.4, 1.0, 0.7])
    shape = builtin_shape("box", size, density=500.0)
    mass = 500.0 * size.prod()
    assert shape.properties.mass == pytest.approx(mass, rel=1e-15)
    assert np.allclose(shape.properties.inertia, box_inertia(mass, size), rtol=1e-15)
    corners = np.array([[x, y, z] for x in (-1, 1) for y in (-1, 1) for z in (-1, 1)]) * size / 2
    in_mesh_axes = shape.hull @ shape.mesh_to_body_rotation.T
    assert len(shape.hull) == 8
    assert sorted(map(tuple, in_mesh_axes.round(15))) == sorted(map(tuple, corners.round(15)))
    assert np.all(np.diff(shape.properties.principal_moments) > 0)
    assert np.linalg.det(shape.mesh_to_body_rotation) == pytest.approx(1.0)


def test_builtin_sphere_has_exact_mass_inertia_and_radius():
    shape = builtin_shape("sphere", [0.3], density=800.0)
    mass = 800.0 * 4 / 3 * np.pi * 0.3**3
    assert shape.radius == 0.3
    assert shape.properties.mass == pytest.approx(mass, rel=1e-14)
    assert np.allclose(shape.properties.principal_moments, 0.4 * mass * 0.09, rtol=1e-14)
    assert 0 < len(shape.hull) <= 64
    assert np.allclose(np.linalg.norm(shape.hull, axis=1), 0.3)  # representative points
    assert np.allclose(np.linalg.norm(shape.vertices, axis=1), 0.3)


def test_builtin_cylinder_is_along_y_with_closed_form_inertia():
    r, h = 0.2, 1.5
    shape = builtin_shape("cylinder", [r, h])
    mass = 1000.0 * np.pi * r * r * h
    assert shape.properties.mass == pytest.approx(mass, rel=1e-14)
    ix = mass * (3 * r * r + h * h) / 12
    assert np.allclose(np.diag(shape.properties.inertia), [ix, mass * r * r / 2, ix], rtol=1e-14)
    assert np.allclose(np.ptp(shape.vertices, axis=0), [2 * r, h, 2 * r])
    assert len(shape.hull) == 64  # 32 sides × 2 rings: the exact prism corners


@pytest.mark.parametrize("kind", ["box", "sphere", "cylinder", "t_handle"])
def test_builtins_are_centred_on_their_centre_of_mass(kind):
    shape = builtin_shape(kind)
    assert np.allclose(shape.properties.center_of_mass, 0.0, atol=1e-15)
    # the drawn mesh is centred too: its own solid COM is the origin
    mesh_com = trimesh.Trimesh(shape.vertices, shape.faces, process=False).center_mass
    assert np.allclose(mesh_com, 0.0, atol=1e-12)


@pytest.mark.parametrize("kind, size, message", [
    ("cone", None, "unknown builtin"),
    ("box", [1, 2], "size must be"),
    ("sphere", [-1.0], "size must be"),
    ("cylinder", [0.1, np.nan], "size must be"),
])
def test_bad_builtin_requests(kind, size, message):
    with pytest.raises(MeshError, match=message):
        builtin_shape(kind, size)


# ------------------------------------------------------------------------------------------
# formats


FORMATS = {  # file name → trimesh export options
    "t.obj": {}, "t.stl": {"file_type": "stl"}, "t_ascii.stl": {"file_type": "stl_ascii"},
    "t.ply": {"encoding": "binary"}, "t_ascii.ply": {"encoding": "ascii"}, "t.off": {},
    "t.glb": {}, "t.gltf": {},
}


@pytest.mark.parametrize("name", FORMATS)
def test_every_format_loads_with_the_same_mass_properties(tmp_path, name):
    builtin = builtin_shape("t_handle")
    mesh = trimesh.Trimesh(builtin.vertices, builtin.faces, process=False)
    export(mesh, tmp_path / name, **FORMATS[name])
    shape = load_shape(tmp_path / name)
    assert shape.properties.mode == "solid" and shape.properties.watertight
    assert shape.warnings == ()
    expected = builtin.properties
    # STL and GLB store float32 coordinates: ~1e-8 relative
    assert shape.properties.mass == pytest.approx(expected.mass, rel=1e-6)
    assert np.allclose(shape.properties.inertia, expected.inertia, rtol=0,
                       atol=1e-6 * expected.inertia.max())
    assert len(shape.vertices) == len(builtin.vertices)  # STL corners merged again


def test_asset_t_handle_is_the_builtin():
    shape, builtin = load_shape(ASSETS / "t_handle.obj"), builtin_shape("t_handle")
    assert shape.properties.mass == pytest.approx(builtin.properties.mass, rel=1e-9)
    assert np.allclose(shape.properties.principal_moments, builtin.properties.principal_moments,
                       rtol=1e-8)


def test_asset_tetrahedron_off_matches_closed_form():
    shape = load_shape(ASSETS / "tetrahedron.off", density=1.0)
    v = np.array([[0.0, 0.0, 0.0], [0.12, 0.0, 0.0], [0.02, 0.09, 0.0], [0.03, 0.02, 0.07]])
    volume = abs(np.linalg.det(v[1:] - v[0])) / 6
    com = v.mean(axis=0)
    s = v.sum(axis=0)
    second = volume / 20 * (v.T @ v + np.outer(s, s))  # ∫ x xᵀ dV of a tetrahedron
    inertia = parallel_axis(np.trace(second) * np.eye(3) - second, -volume, com)  # to COM
    assert_props(shape.properties, volume, com, inertia, rtol=1e-9, atol_com=1e-12)


def test_asset_icosahedron_ply_matches_closed_form():
    shape = load_shape(ASSETS / "icosahedron.ply", density=1.0)
    v = shape.vertices
    edge = np.min([np.linalg.norm(v[0] - w) for w in v[1:]])
    volume = 5 / 12 * (3 + np.sqrt(5)) * edge**3
    moment = volume * edge**2 * (3 + np.sqrt(5)) / 20  # regular icosahedron, m a² φ²/10
    # binary PLY stores float32 coordinates: ~1e-8 relative
    assert_props(shape.properties, volume, np.zeros(3), moment * np.eye(3), rtol=1e-6,
                 atol_com=1e-9)


def test_asset_ascii_stl_cylinder_matches_regular_prism():
    shape = load_shape(ASSETS / "cylinder_ascii.stl", density=1.0)
    n, r, h = 24, 0.05, 0.2
    volume = n / 2 * r * r * np.sin(2 * np.pi / n) * h
    polar = volume * r * r * (1 + 2 * np.cos(np.pi / n) ** 2) / 6  # regular n-gon, about axis
    inertia = np.diag([polar / 2 + volume * h * h / 12, polar, polar / 2 + volume * h * h / 12])
    assert_props(shape.properties, volume, np.zeros(3), inertia, rtol=1e-6, atol_com=1e-9)


@pytest.mark.parametrize("name", ["torus.obj", "wing_nut.stl"])
def test_non_convex_assets_are_closed_solids(name):
    shape = load_shape(ASSETS / name)
    props = shape.properties
    assert props.mode == "solid" and props.watertight and shape.warnings == ()
    reference = trimesh.Trimesh(shape.vertices, shape.faces, process=False)
    assert props.volume == pytest.approx(reference.volume, rel=1e-9)
    assert np.allclose(props.inertia * 1e-3, reference.moment_inertia, rtol=0,
                       atol=1e-9 * np.abs(reference.moment_inertia).max())
    assert ConvexHull(shape.vertices).volume > 1.2 * props.volume  # really non-convex
    assert len(shape.hull) <= 64


def test_glb_scene_is_flattened_with_node_transforms():
    shape = load_shape(ASSETS / "two_boxes.glb", density=1.0)
    size = np.array([0.1, 0.05, 0.05])
    volume = size.prod()
    rotation = quat_to_matrix(quat_from_axis_angle([0, 0, 1], np.pi / 2))  # node box_b
    centres = np.array([[0.1, 0.0, 0.0], [-0.1, 0.05, 0.0]])
    com = centres.mean(axis=0)
    inertia = (parallel_axis(box_inertia(volume, size), volume, centres[0] - com)
               + parallel_axis(rotation @ box_inertia(volume, size) @ rotation.T, volume,
                               centres[1] - com))
    assert_props(shape.properties, 2 * volume, com, inertia, rtol=1e-6, atol_com=1e-8)
    assert shape.properties.watertight


def test_mirrored_scene_node_keeps_outward_winding(tmp_path):
    box = trimesh.creation.box(extents=[1, 2, 3])
    scene = trimesh.Scene()
    mirror = np.diag([-1.0, 1.0, 1.0, 1.0]) @ trimesh.transformations.translation_matrix([5, 0, 0])
    scene.add_geometry(box, node_name="mirrored", geom_name="box", transform=mirror)
    scene.add_geometry(box, node_name="plain", geom_name="box")
    scene.export(tmp_path / "mirror.glb")
    shape = load_shape(tmp_path / "mirror.glb", density=1.0)
    assert shape.properties.volume == pytest.approx(12.0, rel=1e-6) and shape.warnings == ()
    assert np.allclose(shape.properties.center_of_mass, [-2.5, 0, 0], atol=1e-6)


def test_textured_obj_with_missing_material_file_loads_its_geometry(tmp_path):
    path = tmp_path / "painted.obj"
    path.write_text("mtllib painted.mtl\nv 0 0 0\nv 1 0 0\nv 0 1 0\nv 0 0 1\n"
                    "vt 0 0\nvt 1 0\nvt 0 1\nusemtl red\nf 1/1 3/3 2/2\nf 1/1 2/2 4/3\n"
                    "usemtl blue\nf 1/2 4/3 3/1\nf 2/1 3/2 4/3\n")
    shape = load_shape(path, density=1.0)
    assert shape.properties.volume == pytest.approx(1 / 6, rel=1e-12)
    assert len(shape.vertices) == 4 and shape.properties.watertight


def test_open_cup_falls_back_to_shell_in_auto_mode_with_a_warning():
    shape = load_shape(ASSETS / "open_cup.obj", density=2.0)
    assert shape.properties.mode == "shell"
    [warning] = [w for w in shape.warnings if "shell" in w]
    assert "open_cup.obj" in warning and "not closed" in warning and "24 edges" in warning
    n, r, h = 24, 0.04, 0.1
    area = n * 2 * r * np.sin(np.pi / n) * h + n / 2 * r * r * np.sin(2 * np.pi / n)
    assert shape.properties.mass == pytest.approx(2.0 * area, rel=1e-7)
    with pytest.raises(MeshError, match=r"open_cup\.obj.*not closed.*'shell'"):
        load_shape(ASSETS / "open_cup.obj", mode="solid")
    mesh = load_mesh(ASSETS / "open_cup.obj")
    assert not mesh.watertight
    explicit = shape_from_mesh(mesh, density=2.0, mode="shell")
    assert not any("instead of solid" in w for w in explicit.warnings)
    assert explicit.properties.mass == shape.properties.mass


def test_assets_are_small_deterministic_and_up_to_date(tmp_path):
    spec = importlib.util.spec_from_file_location("make_assets", ASSETS.parent / "make_assets.py")
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    script.main(tmp_path / "a", pieces=None)  # the pieces: tests/app/test_resources.py
    script.main(tmp_path / "b", pieces=None)
    made = sorted(f.name for f in (tmp_path / "a").iterdir())
    assert made == sorted(f.name for f in ASSETS.iterdir()) and len(made) == 8
    for name in made:
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes()
        fresh, committed = load_mesh(tmp_path / "a" / name), load_mesh(ASSETS / name)
        assert np.array_equal(fresh.faces, committed.faces), name
        assert np.allclose(fresh.vertices, committed.vertices, rtol=0, atol=1e-12), name
    assert sum(f.stat().st_size for f in ASSETS.iterdir()) < 300_000


# ------------------------------------------------------------------------------------------
# repairs


def test_inverted_winding_is_flipped_with_a_warning(tmp_path):
    t = builtin_shape("t_handle")
    shape = load_shape(write_obj(tmp_path / "inside_out.obj", t.vertices, t.faces[:, ::-1]))
    assert shape.properties.volume == pytest.approx(t.properties.volume, rel=1e-12)
    assert any("inside_out.obj" in w and "inside out" in w for w in shape.warnings)
    assert shape.properties.mode == "solid"


@pytest.mark.parametrize("pick", ["half", "random"])
def test_inconsistent_winding_is_repaired_with_a_warning(tmp_path, pick):
    sphere = trimesh.creation.icosphere(2)
    faces = sphere.faces.copy()
    flip = (np.arange(len(faces)) % 2 == 0 if pick == "half"
            else np.random.default_rng(7).random(len(faces)) < 0.3)
    faces[flip] = faces[flip][:, ::-1]
    shape = load_shape(write_obj(tmp_path / "mixed.obj", sphere.vertices, faces))
    assert shape.properties.mode == "solid" and shape.properties.watertight
    assert shape.properties.volume == pytest.approx(sphere.volume, rel=1e-12)
    [warning] = shape.warnings
    assert "mixed.obj" in warning and "wound the other way" in warning
    count = min(flip.sum(), (~flip).sum())
    assert f"{count} of {len(faces)}" in warning


def test_cavity_keeps_its_inward_winding(tmp_path):
    outer = trimesh.creation.box(extents=[1, 1, 1])
    vertices = np.vstack((outer.vertices, outer.vertices * 0.5))
    faces = np.vstack((outer.faces, outer.faces[:, ::-1] + 8))  # inner box faces the cavity
    hollow = load_shape(write_obj(tmp_path / "hollow.obj", vertices, faces))
    assert hollow.properties.volume == pytest.approx(0.875, rel=1e-12) and hollow.warnings == ()
    inverted = load_shape(write_obj(tmp_path / "hollow_inv.obj", vertices, faces[:, ::-1]))
    assert inverted.properties.volume == pytest.approx(0.875, rel=1e-12)
    assert any("inside out" in w for w in inverted.warnings)


def test_duplicate_vertices_and_degenerate_faces_are_cleaned(tmp_path):
    box = trimesh.creation.box(extents=[1, 2, 3])
    soup = box.vertices[box.faces].reshape(-1, 3)  # every corner separate, like STL
    faces = np.arange(len(soup)).reshape(-1, 3)
    faces = np.vstack((faces, [[0, 0, 1]], faces[:1]))  # a degenerate and a duplicate triangle
    mesh = load_mesh(write_obj(tmp_path / "soup.obj", soup, faces))
    assert len(mesh.vertices) == 8 and len(mesh.faces) == 12 and mesh.watertight
    assert any("removed 2 degenerate or duplicate" in w for w in mesh.warnings)


def test_flat_mesh_auto_uses_shell_and_solid_is_an_error(tmp_path):
    grid = np.array([[x, 0.0, z] for x in (0, 0.5, 1) for z in (0, 0.5, 1)])  # 3 × 3 points
    cells = [(3 * i + j, 3 * i + j + 1, 3 * i + j + 4, 3 * i + j + 3)
             for i in range(2) for j in range(2)]
    faces = [tri for a, b, c, d in cells for tri in ((a, b, c), (a, c, d))]
    path = write_obj(tmp_path / "sheet.obj", grid, faces)
    shape = load_shape(path, density=3.0)
    assert shape.properties.mode == "shell"
    assert any("sheet.obj" in w and "flat" in w and "shell" in w for w in shape.warnings)
    assert shape.properties.mass == pytest.approx(3.0, rel=1e-12)  # 1 m² at 3 kg/m²
    assert len(shape.hull) == 4  # the square's corners
    with pytest.raises(MeshError, match=r"sheet\.obj: .*flat.*zero volume.*'shell'"):
        load_shape(path, mode="solid")


# ------------------------------------------------------------------------------------------
# collision hull


def outside_distance(points, hull_points):
    eq = ConvexHull(hull_points).equations
    return (points @ eq[:, :3].T + eq[:, 3]).max(axis=1)


def test_hull_unreduced_contains_every_vertex():
    sphere = trimesh.creation.icosphere(3)  # 1280 faces, 642 vertices
    hull = convex_hull_vertices(sphere.vertices, max_vertices=1000)
    assert len(hull) == 642
    assert outside_distance(sphere.vertices, hull).max() < 1e-12


@pytest.mark.parametrize("subdivisions", [3, 6])  # 642 points; 40 962 (direction sampling)
def test_hull_reduction_keeps_64_points_that_approximate_the_hull(subdivisions):
    points = trimesh.creation.icosphere(subdivisions).vertices
    hull = convex_hull_vertices(points)
    assert len(hull) == 64
    assert (hull[:, None] == points[None]).all(axis=2).any(axis=1).all()  # a subset
    assert outside_distance(points, hull).max() < 0.08  # unit sphere
    assert np.array_equal(hull.max(axis=0), points.max(axis=0))  # axis extents exact
    assert np.array_equal(hull.min(axis=0), points.min(axis=0))
    assert np.array_equal(hull, convex_hull_vertices(points))  # deterministic


def test_hull_of_a_loaded_mesh_is_in_the_body_frame(tmp_path):
    sphere = trimesh.creation.icosphere(3)
    shape = load_shape(write_obj(tmp_path / "ball.obj", sphere.vertices * 0.2 + [5, 0, 0],
                                 sphere.faces))
    assert len(shape.hull) <= 64 and shape.radius == 0.0
    assert np.allclose(np.linalg.norm(shape.hull, axis=1), 0.2, rtol=1e-6)  # COM-centred


def test_flat_and_degenerate_point_sets():
    square = np.array([[x, y, 0.5] for x in np.linspace(0, 1, 7) for y in np.linspace(0, 1, 5)])
    corners = convex_hull_vertices(square)
    assert sorted(map(tuple, corners)) == [(0, 0, 0.5), (0, 1, 0.5), (1, 0, 0.5), (1, 1, 0.5)]
    with pytest.raises(ValueError, match="one line"):
        convex_hull_vertices(np.outer(np.arange(5.0), [1, 2, 3]))


# ------------------------------------------------------------------------------------------
# placing a shape in a scene


def test_body_def_places_com_and_principal_frame(tmp_path):
    t = builtin_shape("t_handle")
    r0 = quat_to_matrix(quat_from_axis_angle([1, 2, -1], 0.7))
    offset = np.array([0.3, -0.2, 0.5])
    path = write_obj(tmp_path / "t_moved.obj", t.vertices @ r0.T + offset, t.faces)
    shape = load_shape(path)
    assert np.allclose(shape.properties.center_of_mass, offset, atol=1e-12)

    q = quat_from_axis_angle([0, 1, 1], -1.1)
    rq = quat_to_matrix(q)
    p = np.array([1.0, 2.0, -0.5])
    body = shape.body_def(p, q, velocity=[1, 0, 0], angular_velocity=[0, 0, 3],
                          restitution=0.9, friction=0.2)
    assert np.allclose(body.position, p + rq @ offset, atol=1e-12)
    # world inertia from the body frame equals the builtin's, carried by r0 then q
    rb = quat_to_matrix(body.orientation)
    world = rb @ np.diag(body.principal_moments) @ rb.T
    expected = rq @ r0 @ t.properties.inertia @ r0.T @ rq.T
    assert np.allclose(world, expected, rtol=0, atol=1e-9 * expected.max())
    # every hull point lands on a mesh vertex placed by (p, q)
    hull_world = body.hull @ rb.T + body.position
    mesh_world = shape.vertices @ rq.T + p
    gaps = np.linalg.norm(hull_world[:, None] - mesh_world[None], axis=2).min(axis=1)
    assert gaps.max() < 1e-12
    assert body.mass == pytest.approx(t.properties.mass, rel=1e-9)
    assert body.velocity.tolist() == [1, 0, 0] and body.angular_velocity.tolist() == [0, 0, 3]
    assert body.restitution == 0.9 and body.friction == 0.2 and body.radius == 0.0


def test_body_def_of_a_sphere_uses_its_radius():
    body = builtin_shape("sphere", [0.25]).body_def([0, 1, 0])
    assert body.radius == 0.25 and np.allclose(body.position, [0, 1, 0])
    assert body.velocity.tolist() == [0, 0, 0]


# ------------------------------------------------------------------------------------------
# bad input: every case raises MeshError naming the file


def t_handle_bytes(tmp_path, file_type):
    t = builtin_shape("t_handle")
    path = tmp_path / f"source.{file_type}"
    trimesh.Trimesh(t.vertices, t.faces, process=False).export(path, file_type=file_type)
    return path.read_bytes()


PNG = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256)) * 4


def bad_files(tmp_path):
    """name → (content to write, None for no file, "dir", or "link to NAME"; words the message
    must contain)."""
    rng = np.random.default_rng(3)
    stl = t_handle_bytes(tmp_path, "stl")
    glb = t_handle_bytes(tmp_path, "glb")
    ascii_stl = t_handle_bytes(tmp_path, "stl_ascii")
    notes = b"Shopping list:\nmilk\neggs\nbread\nbutter\ncheese\napples\npears\nmore milk\n"
    return {
        "missing.obj": (None, "not found"),
        "loop.obj": ("link to loop.obj", "symbolic link that leads back to itself"),
        "dangling.obj": ("link to nowhere.obj", "symbolic link to 'nowhere.obj', which does not"),
        "folder.obj": ("dir", "folder"),
        "empty.stl": (b"", "empty"),
        "cut.stl": (stl[: len(stl) // 2], "cut short"),
        "cut_ascii.stl": (ascii_stl[: len(ascii_stl) // 2], "cut short"),
        "cut.glb": (glb[: len(glb) // 2], "cut short"),
        "cut.ply": (t_handle_bytes(tmp_path, "ply")[:400], "could not be read as PLY"),
        "noise.stl": (rng.bytes(5000), "not an STL file"),
        "noise.obj": (rng.bytes(5000), "binary data"),
        "noise.ply": (rng.bytes(5000), "not a PLY file"),
        "noise.glb": (rng.bytes(5000), "not a GLB file"),
        "noise.gltf": (rng.bytes(5000), "not a glTF file"),
        "notes.obj": (notes, "no triangles"),
        "notes.off": (notes, "could not be read as OFF"),
        "notes.stl": (notes * 3, "not an STL file"),
        "photo.png": (PNG, "not a mesh format"),
        "photo.obj": (PNG, "binary data"),
        "nan.obj": (b"v 0 0 0\nv 1 0 0\nv 0 nan 0\nv 0 0 1\nf 1 2 3\nf 1 3 4\nf 1 4 2\n"
                    b"f 2 4 3\n", "NaN or infinite"),
        "inf.obj": (b"v 0 0 0\nv 1 0 0\nv 0 1 0\nv 0 0 inf\nf 1 3 2\nf 1 2 4\nf 1 4 3\n"
                    b"f 2 3 4\n", "NaN or infinite"),
        "one.obj": (b"v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 3\n", "only 1 triangle"),
        "slivers.obj": (b"v 0 0 0\nv 1 0 0\nv 2 0 0\nf 1 2 3\nf 1 1 2\n", "zero area"),
        "bad_index.ply": (b"ply\nformat ascii 1.0\nelement vertex 4\nproperty float x\n"
                          b"property float y\nproperty float z\nelement face 4\n"
                          b"property list uchar int vertex_indices\nend_header\n0 0 0\n1 0 0\n"
                          b"0 1 0\n0 0 1\n3 0 2 1\n3 0 1 3\n3 0 3 2\n3 1 2 9\n",
                          "refers to vertex 10, but the file has only 4"),
        "huge.obj": (b"v 0 0 0\nv 1e30 0 0\nv 0 1e30 0\nv 0 0 1e30\nf 1 3 2\nf 1 2 4\n"
                     b"f 1 4 3\nf 2 3 4\n", "is 1e+30 m across; Tumble simulates bodies from"),
        "bad_index.obj": (b"v 0 0 0\nv 1 0 0\nv 0 1 0\nv 0 0 1\nf 1 3 2\nf 1 2 4\nf 1 4 3\n"
                          b"f 2 3 9\n", "bad_index.obj:8: a face refers to vertex 9, but the "
                          "file has 4 vertices (OBJ counts them from 1)"),
    }


BAD_NAMES = ["missing.obj", "loop.obj", "dangling.obj", "folder.obj", "empty.stl", "cut.stl",
             "cut_ascii.stl", "cut.glb",
             "cut.ply", "noise.stl", "noise.obj", "noise.ply", "noise.glb", "noise.gltf",
             "notes.obj", "notes.off", "notes.stl", "photo.png", "photo.obj", "nan.obj",
             "inf.obj", "one.obj", "slivers.obj", "bad_index.ply", "bad_index.obj",
             "huge.obj"]


def test_bad_file_list_is_complete(tmp_path):
    assert sorted(bad_files(tmp_path)) == sorted(BAD_NAMES)


@pytest.mark.parametrize("name", BAD_NAMES)
def test_bad_file_raises_mesh_error_naming_it(tmp_path, name):
    content, words = bad_files(tmp_path)[name]
    path = tmp_path / name
    if content == "dir":
        path.mkdir()
    elif isinstance(content, str) and content.startswith("link to "):
        path.symlink_to(content.removeprefix("link to "))
    elif content is not None:
        path.write_bytes(content)
    with pytest.raises(MeshError) as info:
        load_shape(path)
    message = str(info.value)
    assert message.startswith(name + ":") and words in message


def test_parser_failures_keep_their_cause(tmp_path):
    path = tmp_path / "cut.ply"
    path.write_bytes(t_handle_bytes(tmp_path, "ply")[:400])
    with pytest.raises(MeshError) as info:
        load_mesh(path)
    assert info.value.__cause__ is not None


@pytest.mark.parametrize("file_type", ["stl", "obj"])  # binary STL: checked from its header
def test_too_many_faces(tmp_path, file_type):
    path = tmp_path / f"big.{file_type}"
    trimesh.creation.icosphere(2).export(path, file_type=file_type)
    with pytest.raises(MeshError, match=rf"big\.{file_type}: has 320 triangles.*limit of 100"):
        load_mesh(path, max_faces=100)
    assert len(load_mesh(path, max_faces=320).faces) == 320


def test_gltf_with_missing_buffer_file(tmp_path):
    export(trimesh.creation.box(), tmp_path / "parts.gltf")
    for buffer in tmp_path.glob("*.bin"):
        buffer.unlink()
    with pytest.raises(MeshError, match=r"parts\.gltf: refers to a file that is missing"):
        load_mesh(tmp_path / "parts.gltf")


@pytest.mark.parametrize("kwargs, words", [
    (dict(mode="hollow"), "unknown inertia mode"),
    (dict(density=0.0), "density must be"),
])
def test_bad_options_name_the_file(kwargs, words):
    with pytest.raises(MeshError, match=rf"tetrahedron\.off: {words}"):
        load_shape(ASSETS / "tetrahedron.off", **kwargs)


def test_with_density_equals_recomputing_the_mesh():
    mesh = ASSETS / "t_handle.obj"
    scaled = load_shape(mesh, density=1000.0).with_density(250.0).properties
    fresh = load_shape(mesh, density=250.0).properties
    assert scaled.mass == pytest.approx(fresh.mass, rel=1e-12)
    np.testing.assert_allclose(scaled.inertia, fresh.inertia, rtol=1e-9, atol=1e-15)
    with pytest.raises(ValueError, match="density"):
        load_shape(mesh).with_density(-1.0)


@pytest.mark.parametrize("kind,size", [("box", (0.5, 0.3, 0.2)), ("sphere", (0.25,)),
                                       ("cylinder", (0.1, 0.6)), ("t_handle", (1.7,))])
def test_a_builtin_knows_its_kind_and_size(kind, size):
    shape = builtin_shape(kind, size)
    assert (shape.kind, shape.size) == (kind, size)
    assert shape.with_density(10.0).size == size


def test_mesh_pose_inverts_body_def():
    shape = load_shape(ASSETS / "wing_nut.stl")
    position, orientation = np.array([0.3, 1.2, -0.4]), quat_from_rotvec([0.4, -1.1, 2.0])
    body = shape.body_def(position, orientation)
    p, q = shape.mesh_pose(body.position, body.orientation)
    np.testing.assert_allclose(p, position, atol=1e-12)
    assert abs(np.dot(q, orientation)) == pytest.approx(1.0, abs=1e-12)


def test_mesh_poses_invert_body_def_for_many_bodies_of_several_shapes_at_once():
    shapes = [load_shape(ASSETS / "wing_nut.stl"), load_shape(ASSETS / "tetrahedron.off"),
              builtin_shape("box", (0.4, 0.3, 0.2))] * 20
    rng = np.random.default_rng(3)
    positions = rng.uniform(-1.0, 1.0, (len(shapes), 3))
    orientations = quat_from_rotvec(rng.normal(size=(len(shapes), 3)))
    bodies = [s.body_def(p, q) for s, p, q in zip(shapes, positions, orientations)]
    p, q = mesh_poses(shapes, np.array([b.position for b in bodies]),
                      np.array([b.orientation for b in bodies]))
    np.testing.assert_allclose(p, positions, atol=1e-12)
    np.testing.assert_allclose(np.abs(np.sum(q * orientations, axis=1)), 1.0, atol=1e-12)
    for k in (0, 1, 2, 59):  # each row as the body alone gives it, bit for bit
        alone = shapes[k].mesh_pose(bodies[k].position, bodies[k].orientation)
        assert np.array_equal(alone[0], p[k]) and np.array_equal(alone[1], q[k])


def test_a_sliver_that_closes_a_mesh_is_kept(tmp_path):
    """A cube whose front-bottom edge A–B carries a T-junction at its midpoint M, closed by the
    zero-area triangle A, M, B (CAD exports do this): the mesh is closed, so the sliver stays,
    and the cube is a solid of the right mass, not a shell with a hole."""
    corners = [(0, 0, 0), (1, 0, 0), (1, 1, 0), (0, 1, 0), (0, 0, 1), (1, 0, 1), (1, 1, 1),
               (0, 1, 1), (0.5, 0, 1)]  # A = 5 (0,0,1), B = 6 (1,0,1), M = 9
    faces = [(1, 3, 2), (1, 4, 3),      # z = 0
             (5, 7, 8), (5, 6, 7),      # z = 1: its edge A–B is whole
             (1, 2, 9), (1, 9, 5), (2, 6, 9),  # y = 0: this side's top edge is A–M, M–B
             (5, 9, 6),                 # the sliver A, M, B (collinear)
             (2, 3, 7), (2, 7, 6), (3, 4, 8), (3, 8, 7), (4, 1, 5), (4, 5, 8)]
    path = tmp_path / "t_junction.obj"
    path.write_text("".join(f"v {x} {y} {z}\n" for x, y, z in corners)
                    + "".join(f"f {a} {b} {c}\n" for a, b, c in faces))
    mesh = load_mesh(path)
    assert mesh.watertight and len(mesh.faces) == len(faces)
    assert not any("removed" in w for w in mesh.warnings)
    shape = load_shape(path, density=1000.0)
    assert shape.properties.mode == "solid"
    assert shape.properties.mass == pytest.approx(1000.0, rel=1e-12)


@pytest.mark.parametrize("scale,words", [(1700.0, "is 1700 m across — if the file is in "
                                          "millimetres the object is 1.7 m; scale it by 0.001"),
                                         (1.5e-3, "is only 1.5 mm across")])
def test_a_mesh_of_implausible_size_loads_with_a_warning_that_suggests_the_scale(
        tmp_path, scale, words):
    path = tmp_path / "part.obj"
    trimesh.creation.box(extents=(scale, scale, scale)).export(path)
    shape = load_shape(path)
    assert any(w.startswith("part.obj: ") and words in w for w in shape.warnings)
    assert not any("across" in w for w in load_shape(ASSETS / "wing_nut.stl").warnings)


@settings(max_examples=30, deadline=None)
@given(scale=st.floats(1e-3, 1e3))
def test_a_scale_multiplies_the_file_before_anything_is_computed(scale):
    """A mesh read with ``scale`` s is the file × s: volume × s³, inertia × s⁵ (same density),
    centre of mass × s, the same principal axes — and the scale is kept for a saved scene."""
    plain = load_shape(ASSETS / "wing_nut.stl")
    scaled = load_shape(ASSETS / "wing_nut.stl", scale=scale)
    assert scaled.scale == scale and plain.scale == 1.0
    assert np.array_equal(scaled.vertices, plain.vertices * scale)
    p, q = plain.properties, scaled.properties
    assert q.volume == pytest.approx(p.volume * scale ** 3, rel=1e-9)
    assert q.inertia == pytest.approx(p.inertia * scale ** 5, rel=1e-9, abs=1e-12 * scale ** 5)
    assert q.center_of_mass == pytest.approx(p.center_of_mass * scale, rel=1e-9, abs=1e-12)
    assert scaled.extent == pytest.approx(plain.extent * scale, rel=1e-12)


@pytest.mark.parametrize("name", ["wing_nut.stl", "torus.obj", "open_cup.obj"])
def test_extent_is_the_largest_span_of_the_vertices_down_each_axis(name):
    shape = load_shape(ASSETS / name)
    assert shape.extent == float(np.max(np.ptp(shape.vertices, axis=0)))


def test_a_file_in_millimetres_read_with_scale_0_001_is_plausible_and_in_metres(tmp_path):
    path = tmp_path / "part.obj"
    trimesh.creation.box(extents=(1700.0, 300.0, 50.0)).export(path)
    assert any("scale it by 0.001" in w for w in load_shape(path).warnings)
    shape = load_shape(path, scale=0.001)
    assert shape.extent == pytest.approx(1.7)
    assert shape.properties.mass == pytest.approx(1000.0 * 1.7 * 0.3 * 0.05, rel=1e-9)
    assert not any("across" in w for w in shape.warnings)
    # the size limits apply to the body as simulated: 1.7e7 m × 0.001 is still too large
    trimesh.creation.box(extents=(1.7e7, 1.0, 1.0)).export(path)
    with pytest.raises(MeshError, match="is 1.7e[+]04 m across"):
        load_shape(path, scale=0.001)


@pytest.mark.parametrize("scale", [0.0, -1.0, float("nan"), float("inf"), "big"])
def test_a_bad_scale_is_refused_naming_the_file_and_the_value(scale):
    with pytest.raises(MeshError, match=r"wing_nut.stl: scale must be a number > 0 .*got"):
        load_shape(ASSETS / "wing_nut.stl", scale=scale)


@settings(max_examples=30, deadline=None)
@given(extents=st.tuples(*[st.floats(0.05, 2.0)] * 3).filter(
           lambda e: min(abs(a - b) for a, b in ((e[0], e[1]), (e[1], e[2]), (e[0], e[2])))
           > 0.01),
       rotvec=st.tuples(*[st.floats(-3.0, 3.0)] * 3),
       offset=st.tuples(*[st.floats(-5.0, 5.0)] * 3))
def test_the_oriented_bounding_box_of_a_box_is_the_box(extents, rotvec, offset):
    """Along the principal axes the bounding box of a turned, moved box is that box: its centre,
    its half extents (in the order of the principal moments), every vertex inside."""
    rotation = quat_to_matrix(quat_from_rotvec(np.array(rotvec)))
    box = trimesh.creation.box(extents=extents)
    vertices = box.vertices @ rotation.T + offset
    shape = shape_from_mesh(Mesh("box", None, vertices, np.asarray(box.faces), True))
    obb = shape.obb
    np.testing.assert_allclose(obb.centre, offset, atol=1e-9)
    np.testing.assert_allclose(np.sort(obb.half_extents), np.sort(extents) / 2, rtol=1e-9)
    # the longest side is around the smallest principal moment (I1 ≤ I2 ≤ I3)
    assert np.argmax(obb.half_extents) == 0 and np.argmin(obb.half_extents) == 2
    local = (vertices - obb.centre) @ obb.axes
    assert np.all(np.abs(local) <= obb.half_extents + 1e-9)
    assert np.allclose(np.abs(local).max(axis=0), obb.half_extents, atol=1e-9)


@settings(max_examples=30, deadline=None)
@given(rows=st.integers(1, 3000), seed=st.integers(0, 2**32 - 1))
def test_column_ranges_are_numpys_least_and_greatest_of_each_column(rows, seed):
    """The very values numpy's reductions across the rows give (the bounding box and the
    cleaning's extent are computed with it), signed zeros, ties and transposed input too."""
    rng = np.random.default_rng(seed)
    points = rng.choice([-1.5, -0.0, 0.0, 2.25, 1e-300], size=(rows, 3)) * rng.choice(
        [1.0, rng.normal()], size=(rows, 3))
    for given_points in (points, np.asfortranarray(points), points[::-1]):
        low, high = column_ranges(given_points)
        assert low.tobytes() == given_points.min(axis=0).tobytes()
        assert high.tobytes() == given_points.max(axis=0).tobytes()
