"""Steps per second of a heap: 300 bodies of the shipped sample meshes dropped into a bin.

    python bench/heap.py [--bodies 300] [--seconds 10] [--repeats 3] [--only-tumble]

The four sample meshes of assets/meshes (wing_nut.stl, t_handle.obj, icosahedron.ply,
tetrahedron.off, loaded with physics.geometry.meshes.load_shape, in turn) start at rest with
random orientations on a grid (no overlaps) over a 2.5 × 4 × 2.5 m walled bin and fall into a
heap; dt = 1/240 s, 10 s simulated. MuJoCo (extra `bench`) runs the same initial conditions in
the same process: each body a mesh geom made from the same convex-hull vertices (the body's
principal frame) with the same mass and principal moments given explicitly, the floor and walls
as planes, the CG solver as in bench/pile.py but the implicitfast integrator (with the default
Euler integrator the heap blows up within a second: NaN in qacc, and MuJoCo resets the state),
with its default pyramidal friction cone and with the elliptic one. Tumble runs twice: as the
app does (islands at rest fall asleep, physics/dynamics/sleep.py) and without sleeping
(``WorldDef(sleep=False)``: the same work as MuJoCo, which does not sleep). Prints the median
over repeats of steps/s for each, Tumble over MuJoCo, the CPU time per step of all threads, and
how the heap ended — kinetic energy, whether it came to rest (below REST_ENERGY), contacts, the
highest centre — so that a fast but wrong engine would show, and Tumble's rates over the faster
MuJoCo's. Tumble's parallel kernels use NUMBA_NUM_THREADS threads (physics/runtime.py), MuJoCo
one. Never fails on a timing.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # numpy's BLAS; OpenMP is numba's

import numba  # noqa: E402
import numpy as np  # noqa: E402
from pile import mujoco_walls, run  # noqa: E402  (bench/pile.py: its timing loop and bin, shared)

from physics.geometry.meshes import load_shape  # noqa: E402
from physics.model import BodyDef, WorldDef  # noqa: E402
from physics.runtime import configure  # noqa: E402
from physics.warmup import compile_kernels  # noqa: E402
from physics.world import World  # noqa: E402

H = 1.0 / 240.0
MESHES = Path(__file__).resolve().parent.parent / "assets" / "meshes"
FILES = ("wing_nut.stl", "t_handle.obj", "icosahedron.ply", "tetrahedron.off")
CONTAINER = (2.5, 4.0, 2.5)  # m: a bin, so that 300 bodies make a heap, not a layer
CLEARANCE = 0.02             # m between the bounding spheres of neighbours on the drop grid
FRICTION, RESTITUTION = 0.5, 0.5
REST_ENERGY = 1e-3           # J: a heap with less kinetic energy than this has come to rest


def shapes():
    """The sample meshes' shapes, in the order the bodies take them."""
    return [load_shape(MESHES / name) for name in FILES]


def initial_conditions(n: int, kinds, seed: int = 0):
    """Centres of mass (n, 3) m on a grid over the bin, layer by layer, one shape each
    (kinds[i % len(kinds)]), and orientations (n, 4) w, x, y, z of their principal frames."""
    spacing = 2 * max(np.linalg.norm(s.hull, axis=1).max() for s in kinds) + CLEARANCE
    per_row = int((CONTAINER[0] - spacing) // spacing) + 1
    ticks = (np.arange(per_row) - (per_row - 1) / 2) * spacing
    layer = [(x, z) for x in ticks for z in ticks]
    pos = np.array([(layer[i % len(layer)][0], spacing / 2 + spacing * (i // len(layer)),
                     layer[i % len(layer)][1]) for i in range(n)])
    if pos[:, 1].max() + spacing / 2 > CONTAINER[1]:
        raise SystemExit(f"{n} bodies do not fit under the bin's lid")
    rng = np.random.default_rng(seed)
    quat = rng.normal(size=(n, 4))
    return pos, quat / np.linalg.norm(quat, axis=1, keepdims=True)


def tumble(n: int, kinds, sleep: bool):
    """(step, summary) for Tumble."""
    world = World(WorldDef(container_size=CONTAINER, friction=FRICTION, restitution=RESTITUTION,
                           sleep=sleep))
    pos, quat = initial_conditions(n, kinds)
    for i, (p, q) in enumerate(zip(pos, quat)):
        shape = kinds[i % len(kinds)]
        world.add_body(BodyDef(mass=shape.properties.mass,
                               principal_moments=shape.properties.principal_moments,
                               hull=shape.hull, position=p, orientation=q))

    def summary():
        points, _ = world.contact_points()
        return world.kinetic_energy().sum(), len(points), world.state.pos[:, 1].max()
    return (lambda: world.step(H)), summary


def mujoco_body(p, q, props, geoms: str) -> str:
    """MJCF of a free body at position p (3,) m and orientation q (4,) with the mass and
    principal moments of props (its principal frame is the body frame) and the geoms given."""
    moments = " ".join(f"{m:.9g}" for m in props.principal_moments)
    return (f'<body pos="{p[0]} {p[1]} {p[2]}" quat="{q[0]} {q[1]} {q[2]} {q[3]}"><freejoint/>'
            f'<inertial pos="0 0 0" mass="{props.mass:.9g}" diaginertia="{moments}"/>'
            f'{geoms}</body>')


def mujoco_heap(n: int, kinds, cone: str):
    import mujoco

    pos, quat = initial_conditions(n, kinds)
    meshes = "\n".join(
        f'<mesh name="m{k}" vertex="{" ".join(f"{v:.9g}" for v in s.hull.ravel())}"/>'
        for k, s in enumerate(kinds))
    bodies = [mujoco_body(p, q, kinds[i % len(kinds)].properties,
                          f'<geom type="mesh" mesh="m{i % len(kinds)}"/>')
              for i, (p, q) in enumerate(zip(pos, quat))]
    walls = mujoco_walls(CONTAINER)
    xml = f"""<mujoco><option timestep="{H}" gravity="0 -9.81 0" solver="CG"
      integrator="implicitfast" cone="{cone}">
      <flag energy="enable"/></option>
      <size memory="{64 + n // 4}M"/>
      <default><geom friction="{FRICTION} 0.005 0.0001"/></default>
      <asset>{meshes}</asset>
      <worldbody>{walls}{"".join(bodies)}</worldbody></mujoco>"""
    model = mujoco.MjModel.from_xml_string(xml)
    data = mujoco.MjData(model)

    def summary():
        mujoco.mj_energyVel(model, data)  # the kinetic energy of the state the step ended in
        return data.energy[1], data.ncon, data.xpos[1:, 1].max()
    return (lambda: mujoco.mj_step(model, data)), summary


def main() -> None:
    configure()  # the engine's process settings (physics/runtime.py), as the app sets them
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bodies", type=int, default=300)
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--only-tumble", action="store_true", help="skip MuJoCo")
    args = parser.parse_args()
    compile_kernels()  # every kernel loaded from numba's cache before any timing
    kinds, n = shapes(), args.bodies
    engines = [("Tumble sleep", lambda: tumble(n, kinds, True)),
               ("Tumble no-sleep", lambda: tumble(n, kinds, False))]
    if not args.only_tumble:
        try:
            import mujoco  # noqa: F401
            engines.append(("MuJoCo pyramid", lambda: mujoco_heap(n, kinds, "pyramidal")))
            engines.append(("MuJoCo elliptic", lambda: mujoco_heap(n, kinds, "elliptic")))
        except ImportError:
            print("mujoco not installed: no MuJoCo row (pip install -e '.[bench]')")
    steps = int(round(args.seconds / H))
    hulls = "/".join(str(len(s.hull)) for s in kinds)
    print(f"{n} bodies ({', '.join(FILES)}: hulls of {hulls} vertices) into a "
          f"{' × '.join(f'{x:g}' for x in CONTAINER)} m bin; {steps} steps of 1/240 s, median "
          f"of {args.repeats} run(s); Tumble on {numba.config.NUMBA_NUM_THREADS} thread(s) "
          f"(NUMBA_NUM_THREADS), MuJoCo on one")
    print(f"{'engine':<16}{'steps/s':>10}{'CPU ms/step':>13}   end: "
          f"{'KE J':>9} {'at rest':>8} {'contacts':>8} {'top m':>6}")
    results = []
    for name, make in engines:
        # bench/pile.py's timing (a fresh heap a repeat; n unused: each make builds its heap)
        rate, cpu, (kinetic, contacts, top) = run(lambda _: make(), 0, steps, args.repeats,
                                                  numba.config.NUMBA_NUM_THREADS)
        results.append((name, rate))
        rest = "yes" if kinetic < REST_ENERGY else "no"
        print(f"{name:<16}{rate:10.1f}{cpu:13.2f}        {kinetic:9.3g} {rest:>8} "
              f"{contacts:8d} {top:6.2f}", flush=True)
    peers = [rate for name, rate in results if name.startswith("MuJoCo")]
    if peers:
        print("Tumble / best MuJoCo: " + ", ".join(
            f"{name.removeprefix('Tumble ')} {rate / max(peers):.2f}"
            for name, rate in results if name.startswith("Tumble")))


if __name__ == "__main__":
    main()
