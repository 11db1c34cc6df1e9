"""Steps per second of World.step: N free bodies, and N bodies bouncing in the container.

    python bench/step.py [--rounds 3] [--repeats 5] [--only free|walls] [--sizes N …]
                         [--no-sleep]

Same work for the peer in the same run when `mujoco` is installed (extra `bench`): free bodies
with free joints, spread on a lattice so that they tumble without touching, and bodies with the
same 64-vertex hulls bouncing off the same walls and off each other; body–body collision
detection is on in both engines in both cases, as in the app (bench/pile.py measures dense
piles). --no-sleep keeps Tumble's bodies awake (``WorldDef(sleep=False)``), as MuJoCo's are;
by default bouncing bodies that come to rest fall asleep. Tumble runs twice: step by step
(``World.step``) and in batches (``World.advance``, as the app's physics thread and ``tumble
simulate`` run it); the ratio is the batched rate's. The engines run in rounds (``--rounds``,
each from fresh worlds) of ``--repeats`` timed stretches of the same simulated time, taking
turns stretch by stretch, so that whatever else the machine does falls on all alike; the ratio
is also given stretch by stretch (each against the peer's stretch run just after it) and round
by round. Targets: at least MuJoCo's rate for N ≥ 10, one free
body ≥ 100 000 steps/s batched, and 10 000 free bodies and 1 000 wall-bouncing bodies each
≥ 240 steps/s on one core. Prints medians; never fails on a timing.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # one core, as the target says
os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("NUMBA_NUM_THREADS", "1")  # the engine's parallel kernels too

import numpy as np  # noqa: E402
from scipy.spatial import ConvexHull  # noqa: E402

from physics.model import BodyDef, WorldDef  # noqa: E402
from physics.runtime import configure
from physics.world import World  # noqa: E402

H = 1.0 / 240.0
HULL = None


def hull_64() -> np.ndarray:
    """(64, 3) vertices of a convex body of ~0.1 m (points on an ellipsoid), all on its hull."""
    global HULL
    if HULL is None:
        rng = np.random.default_rng(7)
        p = rng.normal(size=(64, 3))
        p /= np.linalg.norm(p, axis=1, keepdims=True)
        HULL = p * [0.06, 0.045, 0.03]
        assert len(ConvexHull(HULL).vertices) == 64
    return HULL


LATTICE = 0.3  # m between free bodies: more than two bounding spheres and their margins


def initial_conditions(n: int, walls: bool, seed: int = 0):
    """Centres (n, 3) m, velocities (n, 3) m/s, ω (n, 3) rad/s and orientations (n, 4).

    Bouncing bodies start anywhere in the container with random velocities, under gravity.
    Free bodies sit on a lattice at rest, without gravity, so they tumble in place without ever
    touching: torque-free motion, with collision detection on in both engines (as in the app)
    but nothing for it to find."""
    rng = np.random.default_rng(seed)
    if walls:
        pos = rng.uniform([-1.8, 0.2, -1.8], [1.8, 2.8, 1.8], size=(n, 3))
        vel = rng.normal(size=(n, 3)) * 2.0
    else:
        side = int(np.ceil(n ** (1 / 3)))
        grid = np.stack(np.unravel_index(np.arange(n), (side, side, side)), axis=1)
        pos, vel = grid * LATTICE, np.zeros((n, 3))
    omega = rng.normal(size=(n, 3)) * 5.0
    quat = rng.normal(size=(n, 4))
    quat /= np.linalg.norm(quat, axis=1, keepdims=True)
    return pos, vel, omega, quat


def ellipsoid_moments(mass=1.0, semi=(0.06, 0.045, 0.03)) -> np.ndarray:
    a, b, c = semi
    return np.sort(mass / 5 * np.array([b * b + c * c, a * a + c * c, a * a + b * b]))


def tumble_world(n: int, walls: bool, sleep: bool = True) -> World:
    world = World(WorldDef(container_size=[4.0, 3.0, 4.0] if walls else None, restitution=0.8,
                           gravity=[0.0, -9.81, 0.0] if walls else [0.0, 0.0, 0.0],
                           sleep=sleep))
    pos, vel, omega, quat = initial_conditions(n, walls)
    moments = ellipsoid_moments()
    world.add_group([BodyDef(mass=1.0, principal_moments=moments, hull=hull_64(), position=pos[i],
                             orientation=quat[i], velocity=vel[i], angular_velocity=omega[i])
                     for i in range(n)])  # at once, as a scene loads
    return world


def mujoco_model(n: int, walls: bool):
    import mujoco

    pos, vel, omega, quat = initial_conditions(n, walls)
    verts = " ".join(f"{v:.6f}" for v in hull_64().ravel())
    bodies = "\n".join(
        f'<body pos="{p[0]} {p[1]} {p[2]}" quat="{q[0]} {q[1]} {q[2]} {q[3]}"><freejoint/>'
        '<geom type="mesh" mesh="hull" mass="1" contype="1" conaffinity="1"/></body>'
        for p, q in zip(pos, quat))
    wall_geoms = ""
    if walls:  # floor y = 0 and four walls, Y-up like Tumble (gravity along −y)
        wall_geoms = """
        <geom type="plane" size="2 2 0.1" pos="0 0 0" zaxis="0 1 0" contype="0" conaffinity="1"/>
        <geom type="plane" size="2 2 0.1" pos="0 3 0" zaxis="0 -1 0" contype="0" conaffinity="1"/>
        <geom type="plane" size="2 2 0.1" pos="-2 0 0" zaxis="1 0 0" contype="0" conaffinity="1"/>
        <geom type="plane" size="2 2 0.1" pos="2 0 0" zaxis="-1 0 0" contype="0" conaffinity="1"/>
        <geom type="plane" size="2 2 0.1" pos="0 0 -2" zaxis="0 0 1" contype="0" conaffinity="1"/>
        <geom type="plane" size="2 2 0.1" pos="0 0 2" zaxis="0 0 -1" contype="0"
        conaffinity="1"/>"""
    gravity = "0 -9.81 0" if walls else "0 0 0"
    xml = f"""<mujoco><option timestep="{H}" gravity="{gravity}"/><size memory="{64 + n // 10}M"/>
      <asset><mesh name="hull" vertex="{verts}"/></asset>
      <worldbody>{wall_geoms}{bodies}</worldbody></mujoco>"""
    model = mujoco.MjModel.from_xml_string(xml)
    data = mujoco.MjData(model)
    for i in range(n):  # free joint qvel: linear (world), angular (body frame)
        data.qvel[6 * i:6 * i + 3] = vel[i]
        data.qvel[6 * i + 3:6 * i + 6] = omega[i]
    return model, data


def interleaved_rates(runners: dict, steps: int, repeats: int) -> dict:
    """Steps per second of each runner (name → a callable that runs k steps) over ``repeats``
    timed stretches of ``steps`` steps, the runners taking turns stretch by stretch, so that
    whatever the machine does at that moment falls on all of them (5 steps each first,
    untimed). Returns name → the stretches' rates."""
    for run in runners.values():
        run(5)
    rates = {name: [] for name in runners}
    for _ in range(repeats):
        for name, run in runners.items():
            t0 = time.perf_counter()
            run(steps)
            rates[name].append(steps / (time.perf_counter() - t0))
    return rates


def one_by_one(world: World):
    """A runner of k steps of ``World.step``, one call a step."""
    def run(k):
        for _ in range(k):
            world.step(H)
    return run


def batched(world: World):
    """A runner of k steps in one ``World.advance`` call, as the app's physics thread and
    ``tumble simulate`` run them."""
    return lambda k: world.advance(H, k)


def mujoco_steps(mujoco, model, data):
    """A runner of k steps of ``mujoco.mj_step``."""
    def run(k):
        for _ in range(k):
            mujoco.mj_step(model, data)
    return run


def main() -> None:
    configure()  # the engine's process settings (physics/runtime.py), as the app sets them
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5,
                        help="timed stretches each engine runs a round")
    parser.add_argument("--rounds", type=int, default=3,
                        help="rounds of all engines, one after the other (default 3)")
    parser.add_argument("--only", choices=("free", "walls"), help="run only these cases")
    parser.add_argument("--sizes", type=int, nargs="+", metavar="N",
                        help="run only the cases of these body counts (default: all)")
    parser.add_argument("--no-sleep", action="store_true",
                        help="Tumble's bodies never fall asleep (MuJoCo's do not)")
    args = parser.parse_args()
    try:
        import mujoco
    except ImportError:
        mujoco = None
        print("mujoco not installed: peer column empty (pip install -e '.[bench]')")
    cases = [(n, False) for n in (1, 100, 1000, 10000)] + [(n, True) for n in (100, 1000)]
    cases = [c for c in cases if (args.only is None or c[1] == (args.only == "walls"))
             and (args.sizes is None or c[0] in args.sizes)]
    print("Tumble " + ("never sleeps (--no-sleep)" if args.no_sleep
                       else "sleeps (islands at rest stop)"))
    print(f"{'case':<22}{'Tumble steps/s':>16}{'batched':>10}{'MuJoCo steps/s':>16}"
          f"{'ratio':>8}   target")
    for n, walls in cases:
        steps = max(20, min(240, 200_000 // (n * (8 if walls else 1))))
        runs = {"single": [], "batched": [], "peer": []}
        by_round = []
        for _ in range(args.rounds):
            runners = {"single": one_by_one(tumble_world(n, walls, sleep=not args.no_sleep)),
                       "batched": batched(tumble_world(n, walls, sleep=not args.no_sleep))}
            if mujoco is not None:
                runners["peer"] = mujoco_steps(mujoco, *mujoco_model(n, walls))
            for name, rates in interleaved_rates(runners, steps, args.repeats).items():
                runs[name] += rates
            if mujoco is not None:
                by_round.append(statistics.median(
                    mine / theirs for mine, theirs in zip(runs["batched"][-args.repeats:],
                                                          runs["peer"][-args.repeats:])))
        single, ours = statistics.median(runs["single"]), statistics.median(runs["batched"])
        peer = ratio = rounds = ""
        if runs["peer"]:
            # each stretch's ratio against the peer's stretch run just after it
            ratios = [mine / theirs for mine, theirs in zip(runs["batched"], runs["peer"])]
            theirs = statistics.median(runs["peer"])
            peer, ratio = f"{theirs:16.0f}", f"{ours / theirs:8.2f}"
            rounds = (f"   median of stretches {statistics.median(ratios):.2f}, of rounds "
                      + " ".join(f"{r:.2f}" for r in by_round))
        label = f"{n} {'wall-bouncing' if walls else 'free'}"
        target = {(10000, False): "≥ 240", (1000, True): "≥ 240",
                  (1, False): "≥ 100 000 batched"}.get((n, walls), "")
        print(f"{label:<22}{single:16.0f}{ours:10.0f}{peer:>16}{ratio:>8}   {target}{rounds}")


if __name__ == "__main__":
    main()
