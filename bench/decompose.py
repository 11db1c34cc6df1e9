"""Convex decomposition: its time and volume excess per mesh, and a heap of decomposed bodies.

    python bench/decompose.py [--bodies 100] [--seconds 5] [--repeats 3] [--only-tumble]

First, for the shipped closed meshes (assets/meshes) and four non-convex ones made by trimesh
(a torus, a bowl, a mug, an L-block): faces, the hull's volume over the mesh's (collision =
"auto" splits above DECOMPOSE_HULL_RATIO), the pieces V-HACD gives (physics/geometry/
decompose.py), how far their volumes add up over the mesh's, the time of the split (in a fresh
cache folder) and of the second load (from the cache).

Then a heap: N bodies, torus, T-handle, wing nut and L-block in turn, each colliding as its
pieces, start at rest with random orientations on a grid over a 2.5 × 4 × 2.5 m walled bin and
fall; dt = 1/240 s. MuJoCo (extra `bench`) runs the same: each body a set of mesh geoms made from
the same pieces (body frame), the same mass and principal moments, implicitfast and CG as in
bench/heap.py. Prints the median over repeats of steps/s, CPU per step, how the heap ended, and
Tumble over MuJoCo. The machine's other load shows in the seconds: compare within a run. Never
fails on a timing.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # numpy's BLAS; OpenMP is numba's

import numba  # noqa: E402
import numpy as np  # noqa: E402
import trimesh  # noqa: E402
from heap import CONTAINER, initial_conditions, mujoco_body  # noqa: E402  (bench/heap.py's bin and grid)
from pile import mujoco_walls, run  # noqa: E402  (bench/pile.py: its timing loop and bin, shared)

from physics.geometry.decompose import body_frame, decompose, hull_ratio, needs_pieces  # noqa: E402
from physics.geometry.meshes import clean_mesh, load_shape, prism_mesh, shape_from_mesh  # noqa: E402
from physics.model import BodyDef, WorldDef  # noqa: E402
from physics.runtime import configure  # noqa: E402
from physics.warmup import compile_kernels  # noqa: E402
from physics.world import World  # noqa: E402

H = 1.0 / 240.0
MESHES = Path(__file__).resolve().parent.parent / "assets" / "meshes"
SHIPPED = ("t_handle.obj", "torus.obj", "wing_nut.stl", "two_boxes.glb", "icosahedron.ply")
FRICTION, RESTITUTION = 0.5, 0.5
REST_ENERGY = 1e-3  # J


def made_by_trimesh() -> dict[str, trimesh.Trimesh]:
    """Four non-convex closed meshes, metres, about 0.3–0.6 m across."""
    up = trimesh.transformations.rotation_matrix(-np.pi / 2, [1, 0, 0])
    torus = trimesh.creation.torus(0.2, 0.06, major_sections=32, minor_sections=12)
    angles = np.linspace(0, np.pi / 2, 10)
    outer = np.c_[0.25 * np.sin(angles), -0.25 * np.cos(angles)]
    profile = np.vstack(([0.0, -0.25], outer[1:], 0.22 / 0.25 * outer[::-1][:-1], [0.0, -0.22]))
    bowl = trimesh.creation.revolve(profile, sections=32)
    bowl.apply_transform(up)
    # a mug: a cup (walls 8 mm, bottom 10 mm) and a ring handle beside it, as two solids
    cup = trimesh.creation.revolve(np.array([[0.0, 0.0], [0.05, 0.0], [0.05, 0.11],
                                             [0.042, 0.11], [0.042, 0.01], [0.0, 0.01]]),
                                   sections=32)
    handle = trimesh.creation.torus(0.03, 0.007, major_sections=24, minor_sections=8)
    handle.apply_transform(trimesh.transformations.rotation_matrix(np.pi / 2, [1, 0, 0]))
    handle.apply_translation([0.078, 0.0, 0.055])
    mug = trimesh.util.concatenate([cup, handle])
    mug.apply_transform(up)
    block = trimesh.Trimesh(*prism_mesh([[0, 0], [0.3, 0], [0.3, 0.1], [0.1, 0.1], [0.1, 0.3],
                                         [0, 0.3]], 0.1, [0.05, 0.05]))
    return {"torus (trimesh)": torus, "bowl (trimesh)": bowl, "mug (trimesh)": mug,
            "L-block (trimesh)": block}


def shapes() -> dict[str, object]:
    found = {name: load_shape(MESHES / name) for name in SHIPPED}
    for name, mesh in made_by_trimesh().items():
        found[name] = shape_from_mesh(clean_mesh(name, None, np.asarray(mesh.vertices, float),
                                                 np.asarray(mesh.faces, dtype=np.int64)))
    return found


def table(kinds: dict) -> dict[str, tuple]:
    """Print the decomposition of each shape; returns name → body-frame pieces."""
    print(f"{'mesh':<20}{'faces':>7}{'hull/mesh':>10}{'auto':>6}{'pieces':>8}{'excess':>9}"
          f"{'split s':>9}{'cached s':>10}")
    pieces = {}
    with tempfile.TemporaryDirectory() as folder:
        for name, shape in kinds.items():
            p = shape.properties
            ratio = hull_ratio(shape.vertices, p.volume)
            auto = needs_pieces("auto", shape.vertices, p.volume)
            first = decompose(name, shape.vertices, shape.faces, p.volume, Path(folder))
            start = time.perf_counter()
            decompose(name, shape.vertices, shape.faces, p.volume, Path(folder))
            cached = time.perf_counter() - start
            pieces[name] = body_frame(first.pieces, p.center_of_mass, p.principal_axes)
            print(f"{name:<20}{len(shape.faces):7d}{ratio:10.2f}{'yes' if auto else 'no':>6}"
                  f"{len(first.pieces):8d}{100 * first.volume_excess:8.1f}%"
                  f"{first.seconds:9.2f}{cached:10.3f}", flush=True)
    return pieces


def tumble(n, kinds, pieces, sleep: bool):
    world = World(WorldDef(container_size=CONTAINER, friction=FRICTION, restitution=RESTITUTION,
                           sleep=sleep))
    pos, quat = initial_conditions(n, kinds)
    for i, (p, q) in enumerate(zip(pos, quat)):
        shape, parts = kinds[i % len(kinds)], pieces[i % len(kinds)]
        world.add_body(BodyDef(mass=shape.properties.mass,
                               principal_moments=shape.properties.principal_moments,
                               hull=shape.hull, pieces=parts, position=p, orientation=q))

    def summary():
        points, _ = world.contact_points()
        return world.kinetic_energy().sum(), len(points), world.state.pos[:, 1].max()
    return (lambda: world.step(H)), summary


def mujoco_heap(n, kinds, pieces):
    import mujoco

    pos, quat = initial_conditions(n, kinds)
    meshes = "\n".join(
        f'<mesh name="m{k}_{j}" vertex="{" ".join(f"{v:.9g}" for v in piece.ravel())}"/>'
        for k, parts in enumerate(pieces) for j, piece in enumerate(parts))
    bodies = []
    for i, (p, q) in enumerate(zip(pos, quat)):
        k = i % len(kinds)
        geoms = "".join(f'<geom type="mesh" mesh="m{k}_{j}"/>' for j in range(len(pieces[k])))
        bodies.append(mujoco_body(p, q, kinds[k].properties, geoms))
    walls = mujoco_walls(CONTAINER)
    xml = f"""<mujoco><option timestep="{H}" gravity="0 -9.81 0" solver="CG"
      integrator="implicitfast"><flag energy="enable"/></option>
      <size memory="{256 + n}M"/>
      <default><geom friction="{FRICTION} 0.005 0.0001"/></default>
      <asset>{meshes}</asset>
      <worldbody>{walls}{"".join(bodies)}</worldbody></mujoco>"""
    model = mujoco.MjModel.from_xml_string(xml)
    data = mujoco.MjData(model)

    def summary():
        mujoco.mj_energyVel(model, data)
        return data.energy[1], data.ncon, data.xpos[1:, 1].max()
    return (lambda: mujoco.mj_step(model, data)), summary


def main() -> None:
    configure()
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bodies", type=int, default=100)
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--only-tumble", action="store_true", help="skip MuJoCo")
    args = parser.parse_args()
    compile_kernels()
    every = shapes()
    pieces = table(every)
    names = ("torus.obj", "t_handle.obj", "wing_nut.stl", "L-block (trimesh)")
    kinds = [every[name] for name in names]
    parts = [pieces[name] for name in names]
    engines = [("Tumble sleep", lambda: tumble(args.bodies, kinds, parts, True)),
               ("Tumble no-sleep", lambda: tumble(args.bodies, kinds, parts, False))]
    if not args.only_tumble:
        try:
            import mujoco  # noqa: F401
            engines.append(("MuJoCo", lambda: mujoco_heap(args.bodies, kinds, parts)))
        except ImportError:
            print("mujoco not installed: no MuJoCo row (pip install -e '.[bench]')")
    steps = int(round(args.seconds / H))
    print(f"\n{args.bodies} decomposed bodies ({', '.join(names)}: "
          f"{'/'.join(str(len(p)) for p in parts)} pieces) into a "
          f"{' × '.join(f'{x:g}' for x in CONTAINER)} m bin; {steps} steps of 1/240 s, median of "
          f"{args.repeats}; Tumble on {numba.config.NUMBA_NUM_THREADS} thread(s), MuJoCo on one")
    print(f"{'engine':<16}{'steps/s':>10}{'CPU ms/step':>13}   end: {'KE J':>9} {'at rest':>8} "
          f"{'contacts':>8} {'top m':>6}")
    results = []
    for name, make in engines:
        rate, cpu, (kinetic, contacts, top) = run(lambda _: make(), 0, steps, args.repeats,
                                                  numba.config.NUMBA_NUM_THREADS)
        results.append((name, rate))
        rest = "yes" if kinetic < REST_ENERGY else "no"
        print(f"{name:<16}{rate:10.1f}{cpu:13.2f}        {kinetic:9.3g} {rest:>8} "
              f"{contacts:8d} {top:6.2f}", flush=True)
    peers = [rate for name, rate in results if name == "MuJoCo"]
    if peers:
        print("Tumble / MuJoCo: " + ", ".join(
            f"{name.removeprefix('Tumble ')} {rate / peers[0]:.2f}"
            for name, rate in results if name.startswith("Tumble")))


if __name__ == "__main__":
    main()
