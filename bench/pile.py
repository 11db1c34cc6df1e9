"""Steps per second of a pile: N cubes dropped into a walled box .

    python bench/pile.py [--sizes 100 500 1000] [--seconds 5] [--repeats 1] [--only-tumble]
                         [--no-sleep]

N cubes of 0.2 m with random orientations start at rest on a grid (0.36 m apart, no overlaps)
over a 4 × 4 m walled container and fall into a pile; dt = 1/240 s, 5 s simulated. The same
initial conditions run in MuJoCo (CG solver) and PyBullet when installed (extra `bench`), in the
same process, one after the other. Prints the median over repeats of steps/s for each engine,
the ratio of Tumble to the best peer, and how the pile ended (kinetic energy, contact count,
height of the highest cube) so that a fast but wrong engine would show. Tumble's contact count is
of the contacts that pushed in the last step; islands asleep (physics/dynamics/sleep.py) have none
and
cost nothing, which is part of its rate once the pile rests (the peers here do not sleep);
--no-sleep keeps Tumble's bodies awake (``WorldDef(sleep=False)``), so it does the peers' work.
Tumble's narrow phase and solver split large steps between threads (physics/runtime.py); a
second row, "Tumble 1T", holds it to one thread, and every row gives the CPU time per step of
all threads, so the cost in cores shows next to the speed. "Tumble ×4" advances the pile
FRAME_STEPS steps a call (``World.advance``), as the app's physics thread runs the steps due in a
frame at 60 fps and ``tumble simulate`` its batches: a call crosses into compiled code once for
all of them (about 0.07 ms a call at N = 100 that a step a call pays every step); the peers are
stepped one step a call (their call costs a few µs). The engines run in rounds (a run of each a
round), so that whatever else the machine does falls on all alike, and the ratios are given by
round too. Never fails on a timing.
Target: at least the best peer at every N, and ≥ 240 steps/s at N = 1000.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # numpy's BLAS; OpenMP is numba's (below)

import numba
import numpy as np  # noqa: E402

from physics.model import BodyDef, WorldDef  # noqa: E402
from physics.runtime import configure
from physics.warmup import compile_kernels
from physics.world import World  # noqa: E402

H = 1.0 / 240.0
SIDE = 0.2          # m, cube edge
MASS = 8.0          # kg (1000 kg/m³)
SPACING = 0.36      # m between drop points: more than a cube's diagonal (0.346 m)
CONTAINER = (4.0, 6.0, 4.0)
FRICTION, RESTITUTION = 0.5, 0.5
FRAME_STEPS = 4     # steps a call in the "Tumble ×4" row: 240 Hz at 60 frames a second


def initial_conditions(n: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Centres (n, 3) m on a grid over the container, layer by layer, and orientations (n, 4)."""
    per_row = int((CONTAINER[0] - SPACING) // SPACING) + 1
    ticks = (np.arange(per_row) - (per_row - 1) / 2) * SPACING
    layer = [(x, z) for x in ticks for z in ticks]
    pos = np.array([(layer[i % len(layer)][0], 0.2 + SPACING * (i // len(layer)),
                     layer[i % len(layer)][1]) for i in range(n)])
    rng = np.random.default_rng(seed)
    quat = rng.normal(size=(n, 4))
    return pos, quat / np.linalg.norm(quat, axis=1, keepdims=True)


def pile_world(n: int, sleep: bool = True) -> World:
    """The pile's start as a Tumble world; sleep false: its bodies never fall asleep."""
    world = World(WorldDef(container_size=CONTAINER, friction=FRICTION, restitution=RESTITUTION,
                           sleep=sleep))
    pos, quat = initial_conditions(n)
    half = SIDE / 2
    corners = np.array([[x, y, z] for x in (-half, half) for y in (-half, half)
                        for z in (-half, half)])
    moment = MASS * SIDE**2 / 6
    for p, q in zip(pos, quat):
        world.add_body(BodyDef(mass=MASS, principal_moments=[moment] * 3, hull=corners, position=p,
                               orientation=q))
    return world


def tumble(n: int, sleep: bool = True, per_call: int = 1):
    """(step, summary) for Tumble, step advancing per_call steps; sleep false: its bodies never
    fall asleep."""
    world = pile_world(n, sleep)

    def summary():
        points, _ = world.contact_points()
        return world.kinetic_energy().sum(), len(points), world.state.pos[:, 1].max()
    if per_call > 1:
        return (lambda: world.advance(H, per_call)), summary
    return (lambda: world.step(H)), summary


def mujoco_walls(container) -> str:
    """MJCF of the five planes of a bin of full extents container (x, y, z) m, floor at y = 0
    (the pile's, heap's and decomposed heap's MuJoCo models share it)."""
    sx, sy, sz = container
    return f"""
        <geom type="plane" size="{sx} {sz} 0.1" pos="0 0 0" zaxis="0 1 0"/>
        <geom type="plane" size="{sy} {sz} 0.1" pos="{-sx / 2} 0 0" zaxis="1 0 0"/>
        <geom type="plane" size="{sy} {sz} 0.1" pos="{sx / 2} 0 0" zaxis="-1 0 0"/>
        <geom type="plane" size="{sx} {sy} 0.1" pos="0 0 {-sz / 2}" zaxis="0 0 1"/>
        <geom type="plane" size="{sx} {sy} 0.1" pos="0 0 {sz / 2}" zaxis="0 0 -1"/>"""


def mujoco_pile(n: int):
    import mujoco

    pos, quat = initial_conditions(n)
    cubes = "\n".join(
        f'<body pos="{p[0]} {p[1]} {p[2]}" quat="{q[0]} {q[1]} {q[2]} {q[3]}"><freejoint/>'
        f'<geom type="box" size="{SIDE / 2} {SIDE / 2} {SIDE / 2}" mass="{MASS}"/></body>'
        for p, q in zip(pos, quat))
    walls = mujoco_walls(CONTAINER)
    xml = f"""<mujoco><option timestep="{H}" gravity="0 -9.81 0" solver="CG">
      <flag energy="enable"/></option>
      <size memory="{64 + n // 4}M"/>
      <default><geom friction="{FRICTION} 0.005 0.0001"/></default>
      <worldbody>{walls}{cubes}</worldbody></mujoco>"""
    model = mujoco.MjModel.from_xml_string(xml)
    data = mujoco.MjData(model)

    def summary():
        return data.energy[1], data.ncon, data.xpos[1:, 1].max()
    return (lambda: mujoco.mj_step(model, data)), summary


def pybullet_pile(n: int):
    import pybullet

    pos, quat = initial_conditions(n)
    client = pybullet.connect(pybullet.DIRECT)
    pybullet.setGravity(0, -9.81, 0, physicsClientId=client)
    pybullet.setTimeStep(H, physicsClientId=client)
    sx, sy, sz = CONTAINER
    for centre, half in (((0, -0.5, 0), (sx, 0.5, sz)), ((-sx / 2 - 0.5, sy / 2, 0), (0.5, sy, sz)),
                         ((sx / 2 + 0.5, sy / 2, 0), (0.5, sy, sz)),
                         ((0, sy / 2, -sz / 2 - 0.5), (sx, sy, 0.5)),
                         ((0, sy / 2, sz / 2 + 0.5), (sx, sy, 0.5))):
        shape = pybullet.createCollisionShape(pybullet.GEOM_BOX, halfExtents=half,
                                              physicsClientId=client)
        wall = pybullet.createMultiBody(0, shape, basePosition=centre, physicsClientId=client)
        pybullet.changeDynamics(wall, -1, lateralFriction=FRICTION, restitution=RESTITUTION,
                                physicsClientId=client)
    shape = pybullet.createCollisionShape(pybullet.GEOM_BOX, halfExtents=[SIDE / 2] * 3,
                                          physicsClientId=client)
    bodies = []
    for p, q in zip(pos, quat):
        body = pybullet.createMultiBody(MASS, shape, basePosition=p,
                                        baseOrientation=[q[1], q[2], q[3], q[0]],
                                        physicsClientId=client)
        pybullet.changeDynamics(body, -1, lateralFriction=FRICTION, restitution=RESTITUTION,
                                physicsClientId=client)
        bodies.append(body)

    def summary():
        kinetic, top = 0.0, -np.inf
        moment = MASS * SIDE**2 / 6
        for body in bodies:
            v, w = pybullet.getBaseVelocity(body, physicsClientId=client)
            kinetic += 0.5 * MASS * np.dot(v, v) + 0.5 * moment * np.dot(w, w)
            where, _ = pybullet.getBasePositionAndOrientation(body, physicsClientId=client)
            top = max(top, where[1])
        contacts = len(pybullet.getContactPoints(physicsClientId=client))
        pybullet.disconnect(client)
        return kinetic, contacts, top
    return (lambda: pybullet.stepSimulation(physicsClientId=client)), summary


def run(make, n: int, steps: int, repeats: int, threads: int, per_call: int = 1):
    """Median steps/s over repeats (each a fresh pile, timed over all its steps), the median
    CPU time per step of all the process's threads, ms, and the end state of the last pile.
    threads: how many Tumble's parallel kernels may use (the peers step on one); per_call:
    steps each call of make's step advances."""
    rates, cpu, end = [], [], None
    numba.set_num_threads(threads)
    calls = max(1, (steps - per_call) // per_call)
    for _ in range(repeats):
        step, summary = make(n)
        step()  # first-call costs (this pile's arrays, the threads' start) are not the steady rate
        t0, c0 = time.perf_counter(), time.process_time()
        for _ in range(calls):
            step()
        rates.append(calls * per_call / (time.perf_counter() - t0))
        cpu.append(1000 * (time.process_time() - c0) / (calls * per_call))
        end = summary()
    numba.set_num_threads(numba.config.NUMBA_NUM_THREADS)
    return statistics.median(rates), statistics.median(cpu), end


def engines_to_run(make_tumble, peers, only_tumble: bool) -> list[tuple]:
    """(name, make, threads) rows: Tumble on NUMBA_NUM_THREADS threads, again on one (the
    single-core comparison) when that is more, then each peer (name, module, make) whose module
    is installed, on one thread (unless only_tumble); a missing peer is said."""
    threads = numba.config.NUMBA_NUM_THREADS
    engines = [("Tumble", make_tumble, threads)]
    if threads > 1:
        engines.append(("Tumble 1T", make_tumble, 1))
    for name, module, make in () if only_tumble else peers:
        try:
            __import__(module)
            engines.append((name, make, 1))
        except ImportError:
            print(f"{module} not installed: no {name} column (pip install -e '.[bench]')")
    return engines


def main() -> None:
    configure()  # the engine's process settings (physics/runtime.py), as the app sets them
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[100, 500, 1000])
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--only-tumble", action="store_true",
                        help="skip the peers (quick checks of Tumble alone)")
    parser.add_argument("--no-sleep", action="store_true",
                        help="Tumble's bodies never fall asleep (the peers do not sleep)")
    args = parser.parse_args()
    # every kernel loaded from numba's cache before any timing: the solver's kernels would
    # otherwise load (~0.1 s) at the first contact of whichever row runs first
    compile_kernels()
    threads = numba.config.NUMBA_NUM_THREADS
    sleep = not args.no_sleep

    def make_tumble(n):
        return tumble(n, sleep)

    def make_tumble_frames(n):
        return tumble(n, sleep, FRAME_STEPS)
    engines = engines_to_run(make_tumble, (("MuJoCo CG", "mujoco", mujoco_pile),
                                           ("PyBullet", "pybullet", pybullet_pile)),
                             args.only_tumble)
    engines.insert(1, ("Tumble ×4", make_tumble_frames, threads))
    steps = int(round(args.seconds / H))
    print(f"{steps} steps of 1/240 s, median of {args.repeats} round(s) (a run of each engine a "
          f"round); Tumble on {threads} thread(s) (NUMBA_NUM_THREADS), 1T on one, the peers on "
          "one; Tumble " + ("sleeps (islands at rest stop)" if sleep
                            else "never sleeps (--no-sleep)"))
    print(f"{'N':>5} {'engine':<10}{'steps/s':>10}{'vs Tumble':>11}{'CPU ms/step':>13}"
          f"   end: KE J, contacts, top m")
    for n in args.sizes:
        rounds = {name: [] for name, _, _ in engines}
        for _ in range(args.repeats):
            for name, make, count in engines:
                per_call = FRAME_STEPS if name == "Tumble ×4" else 1
                rounds[name].append(run(make, n, steps, 1, count, per_call))
        results = [(name, statistics.median(r[0] for r in runs),
                    statistics.median(r[1] for r in runs), runs[-1][2])
                   for name, runs in rounds.items()]
        ours = results[0][1]
        for name, rate, cpu, (kinetic, contacts, top) in results:
            print(f"{n:>5} {name:<10}{rate:10.1f}{ours / rate:10.2f}x{cpu:13.2f}   "
                  f"{kinetic:10.3g} {contacts:6d} {top:6.2f}")
        peers = [name for name, *_ in results if not name.startswith("Tumble")]
        if not peers:
            continue
        for name in ("Tumble", "Tumble ×4"):
            # the best peer of each round, against this row's run of the same round
            ratios = [runs[0] / max(rounds[peer][k][0] for peer in peers)
                      for k, runs in enumerate(rounds[name])]
            best = max(statistics.median(r[0] for r in rounds[peer]) for peer in peers)
            ours = statistics.median(r[0] for r in rounds[name])
            calls = "a step a call" if name == "Tumble" else f"{FRAME_STEPS} steps a call"
            print(f"{n:>5} {name} / best peer, {calls}: {ours / best:.2f} (median of rounds "
                  f"{statistics.median(ratios):.2f}, rounds "
                  + " ".join(f"{r:.2f}" for r in ratios) + ")"
                  + ("   (target ≥ 240 steps/s on one thread)" if n == 1000 else ""))


if __name__ == "__main__":
    main()
