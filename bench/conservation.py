"""Torque-free conservation table (docs/physics.md#free-rotation): Tumble beside MuJoCo's
integrators.

    python bench/conservation.py [--seconds 60]

I = diag(1, 2, 3), ω_b0 = (0.01, 5, 0.01), h = 1/240: relative change of kinetic energy and of
|L| (world), the drift of the world L vector, and the mean flip interval (sign changes of ω2)
against the elliptic-integral value. MuJoCo rows appear when `mujoco` is installed (extra
`bench`). Prints only; never fails.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from scipy.special import ellipk

from physics.model import BodyDef, WorldDef
from physics.runtime import configure
from physics.world import World

MOMENTS = np.array([1.0, 2.0, 3.0])
OMEGA0 = np.array([0.01, 5.0, 0.01])
H = 1.0 / 240.0


def exact_flip_interval() -> float:
    """2K(k)/λ of Landau & Lifshitz §37 for MOMENTS, OMEGA0 (M² > 2E·I2 here)."""
    i1, i2, i3 = MOMENTS
    energy = 0.5 * MOMENTS @ OMEGA0**2
    m2 = np.sum((MOMENTS * OMEGA0) ** 2)
    lam = np.sqrt((i3 - i2) * (m2 - 2 * energy * i1) / (i1 * i2 * i3))
    k2 = (i2 - i1) * (2 * energy * i3 - m2) / ((i3 - i2) * (m2 - 2 * energy * i1))
    return 2.0 * ellipk(k2) / lam


def summarise(t, omega_body, ang_mom_world):
    """Relative ΔE, Δ|L|, |ΔL vector| and the mean flip interval from histories."""
    energy = 0.5 * np.sum(MOMENTS * omega_body**2, axis=1)
    norm = np.linalg.norm(ang_mom_world, axis=1)
    w2 = omega_body[:, 1]
    i = np.flatnonzero(np.sign(w2[1:]) != np.sign(w2[:-1]))
    flips = t[i] - w2[i] * (t[i + 1] - t[i]) / (w2[i + 1] - w2[i])
    return ((energy[-1] - energy[0]) / energy[0], (norm[-1] - norm[0]) / norm[0],
            np.linalg.norm(ang_mom_world[-1] - ang_mom_world[0]) / norm[0],
            np.mean(np.diff(flips)) if len(flips) > 1 else np.nan)


def run_tumble(seconds):
    world = World(WorldDef(gravity=[0, 0, 0], container_size=None))
    world.add_body(BodyDef(mass=1.0, principal_moments=MOMENTS, hull=np.zeros((1, 3)),
                           angular_velocity=OMEGA0))
    steps = int(round(seconds / H))
    t, wb, lw = np.zeros(steps + 1), np.zeros((steps + 1, 3)), np.zeros((steps + 1, 3))
    wb[0], lw[0] = world.body_angular_velocity()[0], world.state.ang_mom[0]
    start = time.perf_counter()
    for k in range(1, steps + 1):
        world.step(H)
        t[k], wb[k], lw[k] = (
            world.state.time,
            world.body_angular_velocity()[0],
            world.state.ang_mom[0],
        )
    return summarise(t, wb, lw), time.perf_counter() - start


def run_mujoco(integrator, seconds):
    import mujoco

    xml = f"""<mujoco><option timestep="{H}" gravity="0 0 0" integrator="{integrator}"/>
      <worldbody><body><freejoint/><inertial pos="0 0 0" mass="1" diaginertia="1 2 3"/></body>
      </worldbody></mujoco>"""
    model = mujoco.MjModel.from_xml_string(xml)
    data = mujoco.MjData(model)
    data.qvel[3:6] = OMEGA0  # free-joint angular velocity is in the body frame
    mujoco.mj_forward(model, data)  # fills xmat for the first record
    steps = int(round(seconds / H))
    t, wb, lw = np.zeros(steps + 1), np.zeros((steps + 1, 3)), np.zeros((steps + 1, 3))

    def record(k):
        t[k], wb[k] = data.time, data.qvel[3:6]
        lw[k] = data.xmat[1].reshape(3, 3) @ (MOMENTS * data.qvel[3:6])

    record(0)
    start = time.perf_counter()
    for k in range(1, steps + 1):
        mujoco.mj_step(model, data)
        record(k)
    return summarise(t, wb, lw), time.perf_counter() - start


def main() -> None:
    configure()  # the engine's process settings (physics/runtime.py), as the app sets them
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=60.0)
    args = parser.parse_args()
    exact = exact_flip_interval()
    print(f"I = diag(1,2,3), ω_b0 = (0.01, 5, 0.01), h = 1/240, {args.seconds:g} s; "
          f"exact flip interval {exact:.9f} s")
    print(f"{'integrator':<34}{'ΔE/E':>12}{'Δ|L|/|L|':>12}{'|ΔL|/|L|':>12}{'flip − exact':>14}")
    rows = [("Tumble: implicit midpoint + Cayley", run_tumble(args.seconds)[0])]
    try:
        import mujoco  # noqa: F401

        for name in ("Euler", "implicitfast", "RK4"):
            rows.append((f"MuJoCo {name}", run_mujoco(name, args.seconds)[0]))
    except ImportError:
        print("(mujoco not installed: pip install -e '.[bench]' for the peer rows)")
    for name, (d_energy, d_norm, d_vec, flip) in rows:
        print(f"{name:<34}{d_energy:12.2e}{d_norm:12.2e}{d_vec:12.2e}{flip - exact:14.2e}")


if __name__ == "__main__":
    main()
