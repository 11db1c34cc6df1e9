"""Mass properties: Tumble's ``mass_properties`` against trimesh's, speed and accuracy, same run.

    python bench/inertia.py [--repeats 7] [--subdivisions 8]

Speed: an icosphere with 20·4^s faces (s = 8: 1,310,720), timed alternately — ours, then
trimesh on a fresh ``Trimesh(process=False)`` so its cache is cold — and the medians compared.
Ours includes input checks and the watertight test; trimesh's does neither. Target:
≥ 5×. Numba start-up is shown separately: compiling from scratch (empty cache) and loading the
cache, each in a fresh interpreter. Accuracy: a 1×2×3 box, rotated, at the origin and 1e5 m away,
against the exact values. Prints; never fails on a timing.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # one core for both sides
os.environ.setdefault("OMP_NUM_THREADS", "1")
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # run from a checkout without installing

import numpy as np  # noqa: E402
import trimesh  # noqa: E402
from scipy.spatial.transform import Rotation  # noqa: E402

from physics.geometry.inertia import mass_properties  # noqa: E402
from physics.runtime import configure  # noqa: E402

TARGET = 5.0
# First call in a fresh interpreter: import + numba compile or cache load + a 12-face box.
_STARTUP = """
import sys, time
sys.path.insert(0, {root!r})
import numpy as np, trimesh
box = trimesh.creation.box([1.0, 2.0, 3.0])
t = time.perf_counter()
from physics.geometry.inertia import mass_properties
mass_properties(box.vertices, box.faces)
print(time.perf_counter() - t)
"""


def startup_seconds(cache_dir: str) -> float:
    env = dict(os.environ, NUMBA_CACHE_DIR=cache_dir)
    out = subprocess.run([sys.executable, "-c", _STARTUP.format(root=str(ROOT))], env=env,
                         capture_output=True, text=True, check=True)
    return float(out.stdout.split()[-1])


def speed(subdivisions: int, repeats: int) -> None:
    sphere = trimesh.creation.icosphere(subdivisions=subdivisions)
    vertices, faces = np.asarray(sphere.vertices), np.asarray(sphere.faces)
    print(f"icosphere(subdivisions={subdivisions}): {len(faces):,} faces, "
          f"{len(vertices):,} vertices; {repeats} alternating runs each")
    mass_properties(vertices, faces)  # warm: numba compiled or loaded from its cache
    ours, theirs = [], []
    for _ in range(repeats):
        t = time.perf_counter()
        p = mass_properties(vertices, faces)
        ours.append(time.perf_counter() - t)
        t = time.perf_counter()
        q = trimesh.Trimesh(vertices, faces, process=False).mass_properties
        theirs.append(time.perf_counter() - t)
    a, b = statistics.median(ours), statistics.median(theirs)
    print(f"  Tumble   median {a * 1e3:8.1f} ms   (min {min(ours) * 1e3:.1f})")
    print(f"  trimesh  median {b * 1e3:8.1f} ms   (min {min(theirs) * 1e3:.1f})")
    verdict = "met" if b / a >= TARGET else "NOT met"
    print(f"  ratio trimesh/Tumble (medians) {b / a:.1f}×   target ≥ {TARGET:g}×: {verdict}")
    gap = np.abs(p.inertia - q.inertia).max() / np.abs(q.inertia).max()
    print(f"  the two inertia tensors differ by {gap:.1e} (relative); watertight: {p.watertight}")
    with tempfile.TemporaryDirectory() as cache:
        cold = startup_seconds(cache)
        cached = startup_seconds(cache)
    print(f"  numba start-up (fresh interpreter, import + first call on a box): "
          f"compile {cold:.2f} s, from cache {cached:.2f} s")


def accuracy() -> None:
    extents = np.array([1.0, 2.0, 3.0])
    box = trimesh.creation.box(extents)
    rotation = Rotation.from_euler("xyz", [0.3, -1.1, 2.0]).as_matrix()
    exact = rotation @ np.diag([13.0, 10.0, 5.0]) / 12.0 * 6.0 @ rotation.T  # m(b²+c²)/12, m = 6
    print("1×2×3 box, rotated; relative error of the inertia tensor (max component) and COM (m)")
    for offset in ([0.0, 0.0, 0.0], [1e5, 0.0, 0.0]):
        vertices = box.vertices @ rotation.T + offset
        p = mass_properties(vertices, box.faces)
        q = trimesh.Trimesh(vertices, box.faces, process=False)
        rows = (("Tumble", p.inertia, p.center_of_mass), ("trimesh", q.moment_inertia,
                                                           q.center_mass))
        for name, inertia, com in rows:
            err = np.abs(inertia - exact).max() / np.abs(exact).max()
            com_err = np.abs(com - offset).max()
            print(f"  x = {offset[0]:<8g} {name:<8} inertia {err:9.2e}   COM {com_err:9.2e}")


def main() -> None:
    configure()  # the engine's process settings (physics/runtime.py), as the app sets them
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--subdivisions", type=int, default=8)
    args = parser.parse_args()
    speed(args.subdivisions, max(args.repeats, 5))
    accuracy()


if __name__ == "__main__":
    main()
