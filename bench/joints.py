"""Steps per second of a swinging chain: N box links on ball joints, hung from the world.

    python bench/joints.py [--sizes 10 100 1000] [--repeats 3] [--only-tumble]

N links of 10 × 2 × 2 cm and 0.1 kg, joined end to end by ball joints at their end faces, hang
from the world at one end; the chain starts straight and level (out of equilibrium, at rest),
so it swings down and whips; dt = 1/240 s, no walls. The same chain runs in MuJoCo and PyBullet
when installed (extra `bench`), in the same process, one after the other, as a user of each
would write it:

- MuJoCo: a kinematic tree of N nested bodies, each with a ball joint at its parent's end and a
  box geom (default options: Euler, Newton solver). Its joints hold by construction (the state
  is the joint angles), so its violation is zero; contacts are left as MuJoCo makes them
  (between non-adjacent links, parent and child excluded), as in Tumble, whose joined links do
  not collide and the others do. With the default Euler step the whipping chain blows up
  (MuJoCo warns and resets the state; the note says so), as it does with implicitfast; RK4
  holds it, so a second row runs RK4 (up to N = RK4_UP_TO), which a user would switch to.
  Only peers that ran stably count as "best peer".
- PyBullet: N free boxes and N point-to-point constraints (`JOINT_POINT2POINT`), DIRECT mode,
  default solver settings; collisions between the two links of each joint are switched off
  (their end faces touch at the joint), the others left on. "PyBullet ×4" is the same chain
  stepped FRAME_STEPS steps a call by its own sub-stepping (``numSubSteps``), the peer of
  "Tumble ×4".

Each engine runs the chain `repeats` times from the start (the first step of each run not
timed: first-call costs), in rounds: a run of every engine a round, so that whatever else the
machine does falls on all engines alike (on a noisy 2-core machine a peer's rate moved ±25 %
between blocks of runs). A warm-up run comes first, and an engine slower than RUN_SECONDS a run
runs fewer steps (the steps column says how many). Prints the median steps/s, the ratio of
Tumble to each peer, the ratio to the best stable peer of each round (Tumble's a step a call
against the peers stepped so, Tumble ×4 against them all) and their median, and the
worst joint violation over every step of the last run (Tumble:
``World.joint_errors``; PyBullet: the distance between the two anchor points of each joint),
and where the chain's tip is at the end, so a fast but wrong engine would show. "Tumble 1T"
holds Tumble's compiled kernels to one thread. "Tumble ×4" advances the chain FRAME_STEPS steps a
call (``World.advance``), as the app runs the steps due in a frame at 60 fps and ``tumble
simulate`` its batches: a call crosses into compiled code once for all of them (its
violation is taken after each call, every fourth step). Never fails on a timing.
Target: Tumble at least the best peer at N = 100 and 1 000, violation ≤ 1 mm.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # numpy's BLAS; OpenMP is numba's (below)

import numba  # noqa: E402
import numpy as np  # noqa: E402
from pile import FRAME_STEPS, engines_to_run  # noqa: E402  (bench/pile.py: the rows, shared)

from physics.constraints.joint import WORLD, JointDef  # noqa: E402
from physics.model import BodyDef, WorldDef  # noqa: E402
from physics.runtime import configure  # noqa: E402
from physics.warmup import compile_kernels  # noqa: E402
from physics.world import World  # noqa: E402

H = 1.0 / 240.0
LENGTH, WIDTH, MASS = 0.1, 0.02, 0.1   # m, m, kg per link
STEPS = {10: 2400, 100: 480, 1000: 120}  # per run: 10 s, 2 s, 0.5 s of swing
RUN_SECONDS = 10.0  # wall time a run may take: slower engines run fewer steps
MIN_STEPS = 6
RK4_UP_TO = 100     # links: beyond, MuJoCo's RK4 takes seconds a step


def steps_for(n: int) -> int:
    return STEPS.get(n, max(120, 48000 // max(n, 1)))


def tumble_chain(n: int, batch: int = 1):
    """(step, violation, tip, note) for Tumble: step() advances ``batch`` steps in one call
    (``World.advance``, as the app runs the steps of a frame) and returns how many;
    violation() the worst joint error now, m; tip() the last link's centre (3,) m; note() what
    the run says about itself (the peers: same, their step() one step)."""
    world = World(WorldDef(container_size=None, gravity=(0.0, -9.81, 0.0)))
    half = np.array([LENGTH, WIDTH, WIDTH]) / 2
    hull = np.array([[x, y, z] for x in (-1, 1) for y in (-1, 1) for z in (-1, 1)]) * half
    moments = MASS / 12 * np.array([2 * WIDTH**2, LENGTH**2 + WIDTH**2, LENGTH**2 + WIDTH**2])
    previous = WORLD
    for k in range(n):
        body = world.add_body(BodyDef(mass=MASS, principal_moments=moments, hull=hull,
                                      position=[(k + 0.5) * LENGTH, 0.0, 0.0]))
        world.add_joint(JointDef("ball", body, previous, anchor=[k * LENGTH, 0.0, 0.0]))
        previous = body
    def step() -> int:
        world.advance(H, batch)
        return batch

    return step, (lambda: float(world.joint_errors()[:, 0].max())), (
        lambda: world.state.pos[-1].copy()), (lambda: "")


def tumble_chain_frames(n: int):
    """``tumble_chain`` advanced FRAME_STEPS steps a call: the app's batch at 60 fps."""
    return tumble_chain(n, FRAME_STEPS)


def mujoco_chain(n: int, integrator: str = "EULER"):
    import mujoco

    spec = mujoco.MjSpec()  # built in code: MuJoCo's XML refuses nesting 1 000 bodies deep
    spec.option.timestep = H
    spec.option.gravity = [0.0, -9.81, 0.0]
    spec.option.integrator = getattr(mujoco.mjtIntegrator, f"mjINT_{integrator}")
    parent = spec.worldbody
    for k in range(n):
        parent = parent.add_body(pos=[LENGTH / 2 if k == 0 else LENGTH, 0.0, 0.0])
        parent.add_joint(type=mujoco.mjtJoint.mjJNT_BALL, pos=[-LENGTH / 2, 0.0, 0.0])
        parent.add_geom(type=mujoco.mjtGeom.mjGEOM_BOX, size=[LENGTH / 2, WIDTH / 2, WIDTH / 2],
                        mass=MASS)
    model = spec.compile()
    data = mujoco.MjData(model)

    def note():  # MuJoCo resets the state when the accelerations blow up, and warns
        resets = data.warning[mujoco.mjtWarning.mjWARN_BADQACC].number
        return f" unstable: reset {resets}× (tip since the reset)" if resets else ""
    return (lambda: mujoco.mj_step(model, data)), (lambda: 0.0), (
        lambda: data.xpos[-1].copy()), note


def mujoco_rk4_chain(n: int):
    return mujoco_chain(n, "RK4")


def pybullet_chain(n: int, batch: int = 1):
    import pybullet

    client = pybullet.connect(pybullet.DIRECT)
    pybullet.setGravity(0, -9.81, 0, physicsClientId=client)
    # batch steps of H a call: its own sub-stepping (a call of batch·H in batch sub-steps)
    pybullet.setTimeStep(H * batch, physicsClientId=client)
    if batch > 1:
        pybullet.setPhysicsEngineParameter(numSubSteps=batch, physicsClientId=client)
    shape = pybullet.createCollisionShape(pybullet.GEOM_BOX,
                                          halfExtents=[LENGTH / 2, WIDTH / 2, WIDTH / 2],
                                          physicsClientId=client)
    links = [pybullet.createMultiBody(MASS, shape, basePosition=[(k + 0.5) * LENGTH, 0, 0],
                                      physicsClientId=client) for k in range(n)]
    end, start = [LENGTH / 2, 0, 0], [-LENGTH / 2, 0, 0]
    pybullet.createConstraint(links[0], -1, -1, -1, pybullet.JOINT_POINT2POINT, [0, 0, 0], start,
                              [0, 0, 0], physicsClientId=client)
    for a, b in zip(links, links[1:]):
        pybullet.createConstraint(a, -1, b, -1, pybullet.JOINT_POINT2POINT, [0, 0, 0], end,
                                  start, physicsClientId=client)
        pybullet.setCollisionFilterPair(a, b, -1, -1, 0, physicsClientId=client)

    def anchors():
        ends, starts = [], []
        for link in links:
            where, turn = pybullet.getBasePositionAndOrientation(link, physicsClientId=client)
            rot = np.array(pybullet.getMatrixFromQuaternion(turn)).reshape(3, 3)
            ends.append(where + rot @ end)
            starts.append(where + rot @ start)
        return np.array(ends), np.array(starts)

    def violation():
        ends, starts = anchors()
        gaps = np.linalg.norm(starts[1:] - ends[:-1], axis=1)
        return float(max(np.linalg.norm(starts[0]), gaps.max(initial=0.0)))

    def tip():
        return np.array(pybullet.getBasePositionAndOrientation(
            links[-1], physicsClientId=client)[0])
    def step() -> int:
        pybullet.stepSimulation(physicsClientId=client)
        return batch

    return step, violation, tip, (lambda: "")


def pybullet_chain_frames(n: int):
    """``pybullet_chain`` advanced FRAME_STEPS steps a call, as ``tumble_chain_frames``."""
    return pybullet_chain(n, FRAME_STEPS)


def planned_steps(make, n: int, threads: int) -> int:
    """How many steps a run of this engine takes: ``steps_for(n)``, fewer for an engine that
    would take more than RUN_SECONDS (measured by a warm-up run of up to a tenth of them,
    which also pays the first-call costs)."""
    numba.set_num_threads(threads)
    step = make(n)[0]
    t0, done = time.perf_counter(), 0
    while done < max(steps_for(n) // 10, 2) and time.perf_counter() - t0 < RUN_SECONDS / 4:
        done += step() or 1
    guess = done / (time.perf_counter() - t0)
    return int(min(steps_for(n), max(MIN_STEPS, guess * RUN_SECONDS)))


def one_run(make, n: int, steps: int, threads: int, measure: bool):
    """One run of the chain from its start: (steps/s, the worst violation over its steps if
    measure else 0, m, the tip at its end, the engine's note); the first step not timed."""
    numba.set_num_threads(threads)
    step, violation, where, says = make(n)
    first = step() or 1  # first-call costs (this chain's arrays) are not the steady rate
    spent, done, worst = 0.0, first, 0.0
    while done < steps:
        t0 = time.perf_counter()
        done += step() or 1
        spent += time.perf_counter() - t0
        if measure:
            worst = max(worst, violation())
    numba.set_num_threads(numba.config.NUMBA_NUM_THREADS)
    return (done - first) / spent, worst, where(), says()


def run_rounds(engines, n: int, repeats: int) -> list[tuple]:
    """Every engine's runs in rounds, one run of each engine a round, so that whatever else
    the machine does falls on all of them alike (the ratios are taken within a round). Returns
    per engine (name, median steps/s, steps, worst violation of the last run, tip, note, the
    rates of each round); an engine slower than a step a second runs one round (MuJoCo at
    N = 1 000: its mass matrix is dense for a chain)."""
    plans = [(name, make, threads, planned_steps(make, n, threads))
             for name, make, threads in engines]
    rates = {name: [] for name, *_ in plans}
    last = {}
    for index in range(repeats):
        for name, make, threads, steps in plans:
            if index and steps <= MIN_STEPS:
                continue
            rate, worst, tip, note = one_run(make, n, steps, threads, index == repeats - 1
                                             or steps <= MIN_STEPS)
            rates[name].append(rate)
            if index == repeats - 1 or steps <= MIN_STEPS:
                last[name] = (steps, worst, tip, note)
    return [(name, statistics.median(rates[name]), *last[name], rates[name])
            for name, *_ in plans]


def main() -> None:
    configure()  # the engine's process settings (physics/runtime.py), as the app sets them
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10, 100, 1000])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--only-tumble", action="store_true",
                        help="skip the peers (quick checks of Tumble alone)")
    args = parser.parse_args()
    compile_kernels()
    threads = numba.config.NUMBA_NUM_THREADS
    engines = engines_to_run(tumble_chain, (("MuJoCo", "mujoco", mujoco_chain),
                                            ("MuJoCo RK4", "mujoco", mujoco_rk4_chain),
                                            ("PyBullet", "pybullet", pybullet_chain),
                                            ("PyBullet ×4", "pybullet", pybullet_chain_frames)),
                             args.only_tumble)
    engines.insert(1, ("Tumble ×4", tumble_chain_frames, threads))
    print(f"dt 1/240 s, median of {args.repeats} round(s) (a run of each engine a round, "
          f"ratios within a round); Tumble on {threads} thread(s) (NUMBA_NUM_THREADS), 1T on "
          f"one, the peers on one")
    print(f"{'N':>5} {'steps':>6} {'engine':<11}{'steps/s':>10}{'Tumble/it':>11}"
          f"{'worst viol. mm':>16}   tip at the end, m")
    for n in args.sizes:
        results = run_rounds([row for row in engines
                              if not (row[0] == "MuJoCo RK4" and n > RK4_UP_TO)], n,
                             args.repeats)
        ours = results[0][1]
        for name, rate, steps, worst, tip, note, _ in results:
            if name.startswith("MuJoCo"):
                note = " (a tree: no violation by construction)" + note
            print(f"{n:>5} {steps:>6} {name:<11}{rate:10.1f}{ours / rate:10.2f}x"
                  f"{1000 * worst:16.4f}   {np.array2string(tip, precision=3)}{note}")
        # the best peer that ran the chain to its end (a reset run is not that chain's motion):
        # for a step a call, among the peers stepped so; for FRAME_STEPS a call, among all
        peers = [(name, rate, rounds) for name, rate, _, _, _, note, rounds in results
                 if not name.startswith("Tumble") and "unstable" not in note]
        for name, rate, *_, rounds in results:
            if name not in ("Tumble", "Tumble ×4"):
                continue
            rivals = [peer for peer in peers if name == "Tumble ×4" or "×" not in peer[0]]
            if not rivals:
                continue
            _, best_rate, best_rounds = max(rivals, key=lambda peer: peer[1])
            if len(rounds) != len(best_rounds):
                continue
            ratios = [ours_one / peer_one for ours_one, peer_one in zip(rounds, best_rounds)]
            calls = "a step a call" if name == "Tumble" else f"{FRAME_STEPS} steps a call"
            print(f"{n:>5} {name} / best stable peer, {calls}: {rate / best_rate:.2f} "
                  f"(median of rounds {statistics.median(ratios):.2f}, rounds "
                  + " ".join(f"{r:.2f}" for r in ratios)
                  + ")   (target ≥ 1 at N ≥ 100, violation ≤ 1 mm)")
        if n > RK4_UP_TO and any(name == "MuJoCo RK4" for name, _, _ in engines):
            print(f"{n:>5} MuJoCo RK4 not run: four times MuJoCo's step")


if __name__ == "__main__":
    main()
