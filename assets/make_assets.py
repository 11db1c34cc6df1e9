"""Write Tumble's sample meshes into assets/meshes/ (deterministic; the outputs are committed).

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

from physics.geometry.meshes import builtin_shape, prism_mesh  # noqa: E402

OUT = ROOT / "assets" / "meshes"

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


def main(out: Path = OUT) -> None:
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


if __name__ == "__main__":
    main()
