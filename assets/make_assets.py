"""Write Tumble's sample meshes into assets/meshes/ (deterministic; the outputs are committed),
then the convex pieces of those that collide as pieces into assets/pieces/ (V-HACD's output,
named by each mesh's cache key: the app copies them into the user's cache of pieces, so the
default scene is not split on a first launch; tests/test_assets.py checks they are current).

Run from anywhere:  python assets/make_assets.py

Every format the loader reads appears at least once (physics/geometry/meshes.py):
  t_handle.obj        the builtin T-handle (Dzhanibekov flip), centred on its centre of mass
  wing_nut.stl        binary STL, non-convex: a hub with two raised wings, one closed prism
  tetrahedron.off     convex, irregular (exact closed-form inertia exists)
  icosahedron.ply     convex, regular, binary PLY (isotropic inertia)
  cylinder_ascii.stl  convex, ASCII STL, 24-sided, axis along y
  torus.obj           non-convex, genus 1
  two_boxes.glb       a scene with two nodes sharing one box mesh (flattened into one body)
  open_cup.obj        deliberately open: a cylinder without its lid (auto mode → shell)
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import trimesh

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # run as a script from a checkout: make `physics` importable
    sys.path.insert(0, str(ROOT))

from physics.geometry.decompose import decompose, needs_pieces  # noqa: E402
from physics.geometry.meshes import builtin_shape, load_shape, prism_mesh  # noqa: E402

OUT = ROOT / "assets" / "meshes"
PIECES = ROOT / "assets" / "pieces"

# wing nut profile (x, y) in m, counter-clockwise, star-shaped around the hub centre
WING_NUT_PROFILE = [(-0.012, 0.0), (0.012, 0.0), (0.012, 0.005), (0.032, 0.024), (0.034, 0.034),
                    (0.026, 0.038), (0.010, 0.022), (-0.010, 0.022), (-0.026, 0.038),
                    (-0.034, 0.034), (-0.032, 0.024), (-0.012, 0.005)]
WING_NUT_CENTRE = (0.0, 0.01)
WING_NUT_DEPTH = 0.01

TETRAHEDRON = np.array([[0.0, 0.0, 0.0], [0.12, 0.0, 0.0], [0.02, 0.09, 0.0], [0.03, 0.02, 0.07]])

# two_boxes.glb: one 0.1 × 0.05 × 0.05 box used by two nodes
GLB_BOX = (0.1, 0.05, 0.05)
GLB_NODE_A = trimesh.transformations.translation_matrix([0.1, 0.0, 0.0])
GLB_NODE_B = (trimesh.transformations.translation_matrix([-0.1, 0.05, 0.0])
              @ trimesh.transformations.rotation_matrix(np.pi / 2, [0, 0, 1]))


def y_axis(mesh: trimesh.Trimesh) -> trimesh.Trimesh:
    """Turn a trimesh primitive built along z so its axis runs along y (x, y, z) → (x, z, −y)."""
    mesh.vertices = mesh.vertices[:, [0, 2, 1]] * [1, 1, -1]  # a proper rotation (det +1)
    return mesh


def t_handle() -> trimesh.Trimesh:
    shape = builtin_shape("t_handle")
    return trimesh.Trimesh(shape.vertices, shape.faces, process=False)


def wing_nut() -> trimesh.Trimesh:
    return trimesh.Trimesh(*prism_mesh(WING_NUT_PROFILE, WING_NUT_DEPTH, WING_NUT_CENTRE),
                           process=False)


def tetrahedron() -> trimesh.Trimesh:
    faces = [[0, 2, 1], [0, 1, 3], [1, 2, 3], [0, 3, 2]]  # outward for this vertex order
    return trimesh.Trimesh(TETRAHEDRON, faces, process=False)


def open_cup() -> trimesh.Trimesh:
    """A 24-sided cylinder (r 4 cm, h 10 cm, bottom at y = 0) with its top cap removed."""
    cup = y_axis(trimesh.creation.cylinder(radius=0.04, height=0.1, sections=24))
    cup.vertices = cup.vertices + [0.0, 0.05, 0.0]
    lid = np.all(np.isclose(cup.vertices[cup.faces][:, :, 1], 0.1), axis=1)
    return trimesh.Trimesh(cup.vertices, cup.faces[~lid], process=False)


def two_boxes() -> trimesh.Scene:
    box = trimesh.creation.box(extents=GLB_BOX)
    scene = trimesh.Scene()
    scene.add_geometry(box, node_name="box_a", geom_name="box", transform=GLB_NODE_A)
    scene.add_geometry(box, node_name="box_b", geom_name="box", transform=GLB_NODE_B)
    return scene


def main(out: Path = OUT, pieces: Path | None = PIECES) -> None:
    """The meshes into out, then their pieces into ``pieces`` (None: not split)."""
    out.mkdir(parents=True, exist_ok=True)
    assets = {
        "t_handle.obj": (t_handle(), {}),
        "wing_nut.stl": (wing_nut(), {"file_type": "stl"}),  # binary
        "tetrahedron.off": (tetrahedron(), {}),
        "icosahedron.ply": (trimesh.creation.icosahedron().apply_scale(0.1),
                            {"encoding": "binary"}),
        "cylinder_ascii.stl": (y_axis(trimesh.creation.cylinder(radius=0.05, height=0.2,
                                                                sections=24)),
                               {"file_type": "stl_ascii"}),
        "torus.obj": (trimesh.creation.torus(0.08, 0.025, major_sections=24, minor_sections=12),
                      {}),
        "two_boxes.glb": (two_boxes(), {}),
        "open_cup.obj": (open_cup(), {}),
    }
    for name, (geometry, options) in assets.items():
        path = out / name
        geometry.export(path, **options)
        print(f"{name:20s} {path.stat().st_size:7d} bytes")
    if pieces is not None:
        write_pieces(out, pieces)


def shipped_solids(meshes: Path = OUT):
    """(name, Shape) of each shipped mesh that collides as pieces (``collision = "auto"``), as
    a scene or a drop loads it (scale 1)."""
    for path in sorted(meshes.iterdir()):
        shape = load_shape(path)
        p = shape.properties
        if p.mode == "solid" and needs_pieces("auto", shape.vertices, p.volume):
            yield path.name, shape


def write_pieces(meshes: Path, out: Path) -> None:
    """The pieces of each mesh of ``meshes`` that collides as pieces, split afresh into out."""
    out.mkdir(parents=True, exist_ok=True)
    for stale in out.glob("*.npz"):
        stale.unlink()
    for name, shape in shipped_solids(meshes):
        found = decompose(name, shape.vertices, shape.faces, shape.properties.volume, out)
        print(f"{name:20s} {len(found.pieces):3d} pieces, {100 * found.volume_excess:+.0f} % "
              "volume")


if __name__ == "__main__":
    main()
