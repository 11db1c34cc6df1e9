"""Kernel threads: a per-thread setting, clamped to what numba started with; a safe layer;
process settings only when the engine is started; numpy's arrays in small pages."""

import json
import os
import re
import subprocess
import sys
import threading

import numba
import pytest

from physics.runtime import SPIN_COUNT, parallel_threads, use_threads
from tests.paths import REPO


def test_use_threads_is_the_calling_threads_own_and_clamped():
    seen = {}

    def physics_thread():
        seen["one"] = use_threads(1)
        seen["after"] = parallel_threads()
        seen["many"] = use_threads(10_000)
        seen["zero"] = use_threads(0)

    before = parallel_threads()
    worker = threading.Thread(target=physics_thread)
    worker.start()
    worker.join()
    assert seen["one"] == seen["after"] == 1
    assert seen["many"] == numba.config.NUMBA_NUM_THREADS
    assert seen["zero"] == 1
    assert parallel_threads() == before


def test_the_threading_layer_is_safe_for_launches_from_two_threads(monkeypatch):
    """The app's physics thread and the recorder's may launch kernels at once: numba must not
    fall back to its workqueue layer, which aborts the process when that happens."""
    import numpy as np

    from physics.collision import broadphase
    from physics.collision.broadphase import candidate_pairs

    monkeypatch.setattr(broadphase, "parallel_threads", lambda: 2)  # launch, even on one core

    rng = np.random.default_rng(0)
    pos = rng.uniform(-2, 2, (1200, 3))
    results = []
    radius = np.full(1200, 0.1)
    workers = [threading.Thread(target=lambda: results.append(candidate_pairs(pos, radius)))
               for _ in range(2)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    assert numba.threading_layer() in ("omp", "tbb")
    assert len(results) == 2 and np.array_equal(results[0], results[1])


def test_openmp_workers_spin_briefly_unless_the_environment_says_otherwise():
    """Set by configure() before libgomp loads (it reads the variable once); a value the user
    set wins."""
    def spin_count(**env):
        child_env = {k: v for k, v in os.environ.items()
                     if k not in ("GOMP_SPINCOUNT", "OMP_WAIT_POLICY")}
        child_env.update(env)
        code = ("import os, physics.runtime, numba, numpy as np\n"
                "physics.runtime.configure()\n"
                "from physics.collision.broadphase import candidate_pairs\n"
                "candidate_pairs(np.random.default_rng(0).uniform(-2, 2, (1200, 3)), "
                "np.full(1200, 0.1))\n"
                "print(os.environ.get('GOMP_SPINCOUNT'), numba.threading_layer())")
        out = subprocess.run([sys.executable, "-c", code], env=child_env, capture_output=True,
                             text=True, check=True)
        return out.stdout.split()

    count, layer = spin_count()
    assert count == "10000" and layer in ("omp", "tbb")
    assert spin_count(GOMP_SPINCOUNT="500")[0] == "500"
    assert spin_count(OMP_WAIT_POLICY="active")[0] == "None"


_PROBE = """
import json, os, sys
sys.path.insert(0, {root!r})
import numba
before = numba.config.THREADING_LAYER
import physics, physics.world, physics.simulation, physics.scene
seen = {{"imported": [numba.config.THREADING_LAYER, os.environ.get("GOMP_SPINCOUNT")],
        "default": before}}
from physics.runtime import configure
configure()
seen["configured"] = [numba.config.THREADING_LAYER, os.environ.get("GOMP_SPINCOUNT")]
print(json.dumps(seen))
"""


def test_importing_the_engine_changes_no_process_setting_until_configure():
    """``import physics`` leaves numba's threading layer and OpenMP's spin count alone;
    ``configure()``, called where the engine is started, sets them."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("GOMP_SPINCOUNT", "OMP_WAIT_POLICY", "NUMBA_THREADING_LAYER")}
    result = subprocess.run([sys.executable, "-c", _PROBE.format(root=str(REPO))], env=env,
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    seen = json.loads(result.stdout)
    assert seen["imported"] == [seen["default"], None]
    assert seen["configured"] == ["threadsafe", str(SPIN_COUNT)]


_HUGE = """
import sys
sys.path.insert(0, {root!r})
import numpy as np
from physics.runtime import configure
if {configure}:
    configure()
array = np.ones(8 << 20)  # 64 MB, every page touched
begin, huge = array.ctypes.data, 0
end = begin + array.nbytes
with open("/proc/self/smaps") as f:  # numpy's advice splits the array's mapping in parts
    for line in f:
        words = line.split()
        if "-" in words[0] and not words[0].endswith(":"):
            low, high = (int(x, 16) for x in words[0].split("-"))
            inside = low < end and begin < high
        elif inside and words[0] == "AnonHugePages:":
            huge += int(words[1])
print(huge)
"""


def _huge_kilobytes(configured: bool, **env) -> int:
    """kB of huge pages backing a fresh 64 MB numpy array in a new process."""
    child_env = {k: v for k, v in os.environ.items() if k != "NUMPY_MADVISE_HUGEPAGE"}
    child_env.update(env)
    out = subprocess.run([sys.executable, "-c", _HUGE.format(root=str(REPO),
                                                             configure=configured)],
                         env=child_env, capture_output=True, text=True, check=True, timeout=120)
    return int(out.stdout)


def test_configure_keeps_big_numpy_arrays_in_small_pages_unless_the_environment_says():
    """numpy advises huge pages for arrays ≥ 4 MB, which the kernel follows in its ``madvise``
    mode; after configure() a big array is in small pages (physics/runtime.py says why), and
    NUMPY_MADVISE_HUGEPAGE set by the user wins."""
    try:
        with open("/sys/kernel/mm/transparent_hugepage/enabled") as f:
            mode = re.search(r"\[(\w+)\]", f.read())[1]
    except OSError:
        mode = None
    if mode != "madvise":
        pytest.skip(f"transparent huge pages here: {mode}; numpy's advice only matters in the "
                    "kernel's madvise mode")
    assert _huge_kilobytes(configured=False) > 0  # numpy's default, which configure changes
    assert _huge_kilobytes(configured=True) == 0
    assert _huge_kilobytes(configured=True, NUMPY_MADVISE_HUGEPAGE="1") > 0


_STACK = """
import sys
sys.path.insert(0, {root!r})
from physics.runtime import configure
configure()
from physics.warmup import _step_a_stack
_step_a_stack()
print("stepped")
"""


def test_compiled_steps_loaded_from_the_cache_reach_their_parallel_kernels():
    """The step's compiled stages carry the solver's parallel kernels inside them, and numba
    loads them from its cache without starting its threading layer: configure starts it, or
    the second of two runs (from the cache the first wrote, at the latest) crashed."""
    for _ in range(2):
        result = subprocess.run([sys.executable, "-c", _STACK.format(root=str(REPO))],
                                capture_output=True, text=True, timeout=600)
        assert result.returncode == 0 and result.stdout.split() == ["stepped"], result.stderr
