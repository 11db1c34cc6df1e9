"""The history's costs: seeking, memory and the price per step, on bench/pile.py's pile; and
with ``--clip``, a clip saved after the fact in the running app.

    python bench/replay.py [--bodies 1000] [--seconds 60] [--seeks 8] [--no-sleep]
    python bench/replay.py --clip [--repeats 3]

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

``--clip`` (needs Xvfb and xdotool, as the window tests): the app (``python -m app``, its
default scene, its 1280×720 window) in a private X server; once it holds 10.5 s of history, the
panel's 60 fps clip rate is clicked and F10 pressed, ``--repeats`` times, each clip after the one
before is saved: the clip's render speed (10 s of video over the wall seconds the clip job took:
≥ 1× real time is the target) and the app's frame rate meanwhile (frames drawn over that time,
and the worst of its 2-second rates; target ≥ 20 fps), against the app's own frame rate with no
clip, with the CPU each of the app's threads spent (its drawing thread, llvmpipe's rasteriser
threads, the rest: physics, the loader's), the clip process's (app/video/clip_worker.py: its
drawing thread, llvmpipe's, the rest: the re-run, x264) and the X server's; then the same
clip path without the app (a clip process started from this one, warm, saving a history run
offline; CPU by thread).
The peer is ``tumble record`` of the same scene, 10 s at 60 fps and 1280×720, in this
process with the app closed (the same offscreen pipeline, alone on the cores). Medians; the
machine's 2 cores are shared with other work, so the figures are noisy; never fails on a
timing.
"""

from __future__ import annotations

import argparse
import io
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np  # noqa: E402
from pile import H, mujoco_pile, pile_world  # noqa: E402  (bench/pile.py: the same pile)

from physics.history import History  # noqa: E402
from physics.runtime import configure  # noqa: E402
from physics.simulation import Simulation  # noqa: E402
from physics.warmup import compile_kernels  # noqa: E402

MUJOCO_STATES, MUJOCO_BYTES = 2000, 100e6  # simulate's history cap: states, bytes
ROOT = Path(__file__).resolve().parents[1]
CLIP_SECONDS, CLIP_FPS = 10.0, 60  # what F10 saves, at the panel's higher rate
WINDOW_RATE_SECONDS = 2.0          # s: the app's frame rate is also taken over windows this long
APP_START_TIMEOUT = 180.0          # s: the app's start on a machine other work keeps busy


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


def clip_figures(repeats: int) -> list[dict]:
    """Per clip saved by F10 in the running app: its wall seconds, the app's frames/s before
    it (no clip) and while it rendered (overall and the worst ``WINDOW_RATE_SECONDS``), and
    the CPU seconds of the app's threads and of the X server meanwhile."""
    sys.path.insert(0, str(ROOT))
    from tests.app.running_app import RunningApp, start_xvfb

    server, display = start_xvfb()
    runs = []
    with tempfile.TemporaryDirectory() as folder:
        folder = Path(folder)
        app = RunningApp(display, folder, XDG_VIDEOS_DIR=str(folder),
                         XDG_CONFIG_HOME=str(folder / "config"))
        try:
            app.wait_until_ready(timeout=APP_START_TIMEOUT)
            app.wait_for(f"{CLIP_SECONDS + 0.5:g} s of history", lambda s: s["time"]
                         - s["history"][0] >= CLIP_SECONDS + 0.5, timeout=180)
            for widget in ("section After the fact", f"clip_fps_{CLIP_FPS}"):
                _click(app, widget)
            for _ in range(repeats):
                idle = _frame_rates(app, WINDOW_RATE_SECONDS)
                runs.append({"idle_fps": idle[0], **_one_clip(app, server.pid)})
        finally:
            app.stop()
            server.terminate()
            server.wait(10)
    return runs


def _click(app, widget: str) -> None:
    x0, y0, x1, y1 = app.wait_for(widget, lambda s: widget in s["widgets"])["widgets"][widget]
    app.xdotool("mousemove", "--window", app.window, int((x0 + x1) / 2), int((y0 + y1) / 2),
                "click", 1)
    app.wait_frames(3)


def _frame_rates(app, seconds: float) -> tuple[float, list]:
    """The app's frames/s over ``seconds`` of wall time, and its (time, frames) samples."""
    samples = [(time.monotonic(), app.status()["frames"])]
    while samples[-1][0] - samples[0][0] < seconds:
        time.sleep(0.2)
        samples.append((time.monotonic(), app.status()["frames"]))
    return _rate(samples), samples


def _rate(samples) -> float:
    (t0, f0), (t1, f1) = samples[0], samples[-1]
    return (f1 - f0) / (t1 - t0)


def _one_clip(app, server_pid: int) -> dict:
    from record import TaskCPU, stat_cpu  # bench/record.py

    def group(tid: int, comm: str) -> str:
        """The app's main thread ("drawing": the window's), llvmpipe's rasteriser threads, and
        the others together (physics, the loader's: Python 3.11 does not name its threads for
        the kernel)."""
        return ("drawing" if tid == app.process.pid else
                "llvmpipe" if comm.startswith("llvmpipe") else "other")

    before = app.status().get("last_clip")
    worker = app.wait_for("the clip process warm",
                          lambda s: s["clip_worker"]["ready"], timeout=120)["clip_worker"]
    threads = TaskCPU(app.process.pid, group)
    clip_threads = TaskCPU(worker["pid"], clip_group(worker["pid"]))
    server_cpu = stat_cpu(f"/proc/{server_pid}/stat")
    samples = [(time.monotonic(), app.status()["frames"])]
    app.xdotool("key", "--window", app.window, "F10")
    while True:
        time.sleep(0.2)
        threads.sample()
        clip_threads.sample()
        status = app.status()
        samples.append((time.monotonic(), status["frames"]))
        if status["last_clip"] is not None and status["last_clip"] != before:
            break
        if samples[-1][0] - samples[0][0] > 600:
            raise RuntimeError(f"no clip saved within 600 s:\n{app.log()}")
    clip = status["last_clip"]
    if clip["error"] or clip["fps"] != CLIP_FPS or clip["frames"] != clip["count"]:
        raise RuntimeError(f"the clip is not what was asked for: {clip}")
    windows = [_rate([a, b]) for k, a in enumerate(samples) for b in samples[k + 1:]
               if b[0] - a[0] >= WINDOW_RATE_SECONDS and b[0] - a[0] < WINDOW_RATE_SECONDS + 0.3]
    return {"seconds": clip["seconds"], "frames": clip["frames"], "fps": _rate(samples),
            "worst_fps": min(windows, default=_rate(samples)),
            "app_frames": samples[-1][1] - samples[0][1],
            "cpu": {**threads.spent(), **clip_threads.spent()},
            "server_cpu": stat_cpu(f"/proc/{server_pid}/stat") - server_cpu,
            "wall": samples[-1][0] - samples[0][0]}


def clip_group(pid: int):
    """Groups of the clip process's threads (app/video/clip_worker.py): its main thread
    ("clip drawing"), llvmpipe's rasteriser threads, the others (the re-run, x264)."""
    def group(tid: int, comm: str) -> str:
        return ("clip drawing" if tid == pid else
                "clip llvmpipe" if comm.startswith("llvmpipe") else "clip other")
    return group


def record_figures(repeats: int) -> list[tuple[float, float]]:
    """(wall s, CPU s of all threads) of ``tumble record`` of the app's default scene,
    CLIP_SECONDS at CLIP_FPS and 1280×720 with its default gizmos, in this process (a first
    run compiles)."""
    from app.__main__ import build_parser
    from app.video import offline

    scene = ROOT / "assets" / "scenes" / "default.toml"
    runs = []
    with tempfile.TemporaryDirectory() as folder:
        for run in range(repeats + 1):
            args = build_parser().parse_args(
                ["record", str(scene), "--seconds", f"{CLIP_SECONDS:g}", "--fps", str(CLIP_FPS),
                 "--out", str(Path(folder) / f"record{run}.mp4")])
            start, cpu = time.perf_counter(), time.process_time()
            offline.main(args, stream=io.StringIO())
            runs.append((time.perf_counter() - start, time.process_time() - cpu))
    return runs[1:]


def headless_clip_figures(repeats: int) -> list[tuple[float, dict]]:
    """(wall s, CPU s by thread) of the app's clip path without the app: the last
    CLIP_SECONDS of a history of the default scene run offline, saved at CLIP_FPS and
    1280×720 by a clip process (app/video/clip_worker.py, warm) started from this one."""
    from record import TaskCPU  # bench/record.py

    from app.render.camera import OrbitCamera
    from app.render.view import GizmoOptions
    from app.video.clip import clip_order, last_seconds
    from app.video.clip_worker import ClipWorker
    from physics.scene import build_world, load_scene

    scene = load_scene(ROOT / "assets" / "scenes" / "default.toml")
    world, records = build_world(scene)
    sim = Simulation(world, hz=scene.hz)
    sim.run_steps(round((CLIP_SECONDS + 0.5) * scene.hz))
    camera = OrbitCamera()
    camera.frame((0.0, 1.0, 0.0), 3.0, 16 / 9)
    worker = ClipWorker()
    worker.start()
    runs = []
    try:
        while not worker.ready:
            worker.poll()
            time.sleep(0.05)
        with tempfile.TemporaryDirectory() as folder:
            for _ in range(repeats):
                start = time.perf_counter()
                threads = TaskCPU(worker.pid, clip_group(worker.pid))
                job = worker.submit(clip_order(sim.history, *last_seconds(sim.history),
                                               CLIP_FPS, (1280, 720), Path(folder), "bench",
                                               {r.body_id: r for r in records}, camera,
                                               GizmoOptions()))
                while not job.done:
                    time.sleep(0.05)
                    threads.sample()
                if job.error:
                    raise RuntimeError(job.error)
                runs.append((time.perf_counter() - start, dict(threads.spent())))
    finally:
        worker.close()
    return runs


def print_clip_figures(repeats: int) -> None:
    runs = clip_figures(repeats)
    records = record_figures(repeats)
    record = [wall for wall, _ in records]
    headless = headless_clip_figures(repeats)
    med = {key: statistics.median(r[key] for r in runs)
           for key in ("seconds", "fps", "worst_fps", "idle_fps", "server_cpu", "wall")}
    clips = [r["seconds"] for r in runs]
    speed, record_speed = CLIP_SECONDS / med["seconds"], CLIP_SECONDS / statistics.median(record)
    print(f"F10 in the app (Xvfb, llvmpipe), its default scene, {CLIP_SECONDS:g} s at "
          f"{CLIP_FPS} fps, 1280x720, median of {repeats}; load average "
          f"{os.getloadavg()[0]:.1f} on {os.cpu_count()} cores shared with other work: noisy")
    print(f"Tumble  clip          {med['seconds']:.1f} s = {speed:.2f}× real time   "
          f"(runs: {' '.join(f'{s:.1f}' for s in clips)} s; target ≥ 1×: "
          f"{'met' if speed >= 1 else 'NOT met'})")
    print(f"Tumble  app meanwhile {med['fps']:.1f} frames/s, worst {WINDOW_RATE_SECONDS:g} s "
          f"{med['worst_fps']:.1f} (target ≥ 20: {'met' if med['worst_fps'] >= 20 else 'NOT met'})"
          f"; {med['idle_fps']:.1f} frames/s with no clip")
    cores = {name: statistics.median(r["cpu"].get(name, 0.0) / r["wall"] for r in runs)
             for name in ("drawing", "llvmpipe", "other", "clip drawing", "clip llvmpipe",
                          "clip other")}
    print("Tumble  cores used meanwhile: " + ", ".join(f"{n} {c:.2f}" for n, c in cores.items())
          + f", X server {med['server_cpu'] / med['wall']:.2f}")
    per_frame = statistics.median(1e3 * sum(r["cpu"].values()) / r["frames"] for r in runs)
    window = statistics.median(1e3 * r["cpu"].get("drawing", 0.0) / max(r["app_frames"], 1)
                               for r in runs)
    print(f"Tumble  CPU per clip frame, all the app's threads and the clip process's: "
          f"{per_frame:.1f} ms (real time "
          f"needs ≤ {1e3 * os.cpu_count() / CLIP_FPS:.1f} ms with both cores free); the "
          f"window's drawing thread {window:.1f} ms a frame it drew")
    frames = CLIP_SECONDS * CLIP_FPS
    alone = statistics.median(wall for wall, _ in headless)
    by_thread = {name: 1e3 * statistics.median(run.get(name, 0.0) for _, run in headless)
                 / frames for name in {n for _, run in headless for n in run}}
    print(f"Tumble  the clip path without the app: {alone:.1f} s = {CLIP_SECONDS / alone:.2f}× "
          f"real time; CPU ms per frame by thread: " + ", ".join(
              f"{n} {ms:.1f}" for n, ms in sorted(by_thread.items(), key=lambda i: -i[1])
              if ms >= 0.05))
    print(f"Record  tumble record {statistics.median(record):.1f} s = {record_speed:.2f}× real "
          f"time, alone (runs: {' '.join(f'{s:.1f}' for s in record)} s), CPU "
          f"{1e3 * statistics.median(c for _, c in records) / frames:.1f} ms/frame; the clip "
          f"takes {med['seconds'] / statistics.median(record):.2f}× as long beside the app's "
          "drawing")


def main() -> None:
    configure()
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bodies", type=int, default=1000)
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--seeks", type=int, default=8, help="exact seeks timed")
    parser.add_argument("--no-sleep", action="store_true", help="the cubes never fall asleep")
    parser.add_argument("--clip", action="store_true",
                        help="a clip saved by F10 in the running app instead (needs Xvfb)")
    parser.add_argument("--repeats", type=int, default=3, help="clips saved (--clip)")
    args = parser.parse_args()
    if args.clip:
        print_clip_figures(args.repeats)
        return
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
