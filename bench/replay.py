"""The history's costs: seeking, memory and the price per step, on bench/pile.py's pile.

    python bench/replay.py [--bodies 1000] [--seconds 60] [--seeks 8] [--no-sleep]

N cubes fall into a pile for T s of sim time (240 Hz) on a ``Simulation`` offline, its history
(physics/history.py) as long as the run. Then: seeks to random moments from the pose ring (what
scrubbing shows: the frame and its orientations decoded), seeks to random exact steps (the
checkpoint before, re-run: ``History.world_at``; the worst steps, a whole second re-run, at
moments spread over the run), the bytes the history holds, and what keeping
it costs the physics thread per step (checkpoints and ring frames).

The peer is MuJoCo's viewer history (``simulate``: ``mj_getState(mjSTATE_INTEGRATION)`` every
step into a ring of at most 2 000 states or 100 MB): for the same pile the bytes one of its
states takes, how many seconds its cap holds, the bytes T s of it would take, and the time of
``mj_getState`` / ``mj_setState`` (a seek there loads one state). Never fails on a timing.
Targets: ring seek ≤ 50 ms, exact seek ≤ 1 s, ≤ 100 MB for 60 s of 1 000 bodies.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np  # noqa: E402
from pile import H, mujoco_pile, pile_world  # noqa: E402  (bench/pile.py: the same pile)

from physics.history import History  # noqa: E402
from physics.runtime import configure  # noqa: E402
from physics.simulation import Simulation  # noqa: E402
from physics.warmup import compile_kernels  # noqa: E402

MUJOCO_STATES, MUJOCO_BYTES = 2000, 100e6  # simulate's history cap: states, bytes


def timed_history(sim: Simulation) -> list[float]:
    """Wall seconds of each ``after_step`` call of ``sim``'s history, appended as they run."""
    spent: list[float] = []
    history: History = sim.history
    plain = history.after_step

    def after_step(*args):
        t0 = time.perf_counter()
        plain(*args)
        spent.append(time.perf_counter() - t0)
    history.after_step = after_step
    return spent


def tumble_figures(n: int, seconds: float, seeks: int, sleep: bool) -> dict:
    sim = Simulation(pile_world(n, sleep), hz=1.0 / H)
    sim.history.set_seconds(seconds)
    spent = timed_history(sim)
    steps = int(round(seconds / H))
    run_s, peak = 0.0, 0
    for chunk in [240] * (steps // 240) + [steps % 240]:
        t0 = time.perf_counter()
        sim.run_steps(chunk)
        run_s += time.perf_counter() - t0
        peak = max(peak, sim.history.nbytes())  # counted outside the timing
    history = sim.history
    first, last_step, last_time = history.span()
    rng = np.random.default_rng(0)
    ring = []
    for t in rng.uniform(first.time, last_time, 200):
        t0 = time.perf_counter()
        frame = history.frame_at(t)
        frame.orientations()
        ring.append(time.perf_counter() - t0)
    # the worst steps: each just before a checkpoint (a whole interval re-run), at moments
    # spread over the history, the falling start included
    starts = history._checkpoints[:-1]
    exact = []
    for k in np.linspace(0, len(starts) - 1, seeks).round().astype(int):
        step = history._checkpoints[k + 1].step - 1
        t0 = time.perf_counter()
        history.world_at(int(step))
        exact.append((time.perf_counter() - t0, starts[k].time))
    return {"steps_per_s": steps / run_s, "history_ms_per_step": 1e3 * sum(spent) / steps,
            "ring_ms": (1e3 * statistics.median(ring), 1e3 * max(ring)),
            "exact_s": (statistics.median(e for e, _ in exact), max(exact)),
            "bytes": history.nbytes(), "peak_bytes": peak,
            "span_s": last_time - first.time}


def mujoco_figures(n: int, seconds: float) -> dict | None:
    try:
        import mujoco
    except ImportError:
        print("mujoco not installed: no MuJoCo row (pip install -e '.[bench]')")
        return None
    step, _ = mujoco_pile(n)
    for _ in range(240):  # the pile in motion, contacts in its state's warm start
        step()
    model, data = _model_data(step)
    kind = mujoco.mjtState.mjSTATE_INTEGRATION
    size = mujoco.mj_stateSize(model, kind)
    state = np.empty(size)
    get, put = [], []
    for _ in range(200):
        t0 = time.perf_counter()
        mujoco.mj_getState(model, data, state, kind)
        get.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        mujoco.mj_setState(model, data, state, kind)
        put.append(time.perf_counter() - t0)
    state_bytes = 8 * size
    kept = min(MUJOCO_STATES, int(MUJOCO_BYTES // state_bytes))
    return {"state_bytes": state_bytes, "cap_s": kept * H,
            "bytes": state_bytes * int(round(seconds / H)),
            "get_ms": 1e3 * statistics.median(get), "set_ms": 1e3 * statistics.median(put)}


def _model_data(step):
    """The (model, data) a bench/pile.py MuJoCo step closure steps."""
    cells = {type(c.cell_contents).__name__: c.cell_contents for c in step.__closure__}
    return cells["MjModel"], cells["MjData"]


def main() -> None:
    configure()
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bodies", type=int, default=1000)
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--seeks", type=int, default=8, help="exact seeks timed")
    parser.add_argument("--no-sleep", action="store_true", help="the cubes never fall asleep")
    args = parser.parse_args()
    compile_kernels()
    ours = tumble_figures(args.bodies, args.seconds, args.seeks, not args.no_sleep)
    peer = mujoco_figures(args.bodies, args.seconds)
    mb = 1e-6
    print(f"{args.bodies} cubes, {args.seconds:g} s at 240 Hz, "
          + ("sleeping" if not args.no_sleep else "never sleeping (--no-sleep)")
          + f"; history span {ours['span_s']:.1f} s (timings noisy on a shared machine)")
    print(f"Tumble  run {ours['steps_per_s']:.0f} steps/s, history "
          f"{ours['history_ms_per_step']:.3f} ms/step")
    print(f"Tumble  ring seek     median {ours['ring_ms'][0]:.3f} ms, max "
          f"{ours['ring_ms'][1]:.3f} ms   (target ≤ 50 ms)")
    worst, where = ours["exact_s"][1]
    print(f"Tumble  exact seek    median {ours['exact_s'][0]:.2f} s, max {worst:.2f} s "
          f"(re-running the second from {where:.0f} s)   (target ≤ 1 s)")
    print(f"Tumble  memory        {ours['bytes'] * mb:.1f} MB for {ours['span_s']:.1f} s, "
          f"peak {ours['peak_bytes'] * mb:.1f} MB (target ≤ 100 MB for 60 s of 1 000)")
    if peer:
        print(f"MuJoCo  one state     {peer['state_bytes'] / 1e3:.1f} kB; its viewer's cap "
              f"holds {peer['cap_s']:.1f} s; {args.seconds:g} s of states: "
              f"{peer['bytes'] * mb:.1f} MB "
              f"({peer['bytes'] / max(ours['bytes'], 1):.2f}× Tumble's history)")
        print(f"MuJoCo  mj_getState {peer['get_ms']:.3f} ms, mj_setState {peer['set_ms']:.3f} ms "
              f"(a seek there; exact only at stored states)")


if __name__ == "__main__":
    main()
