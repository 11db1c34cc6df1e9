"""How the engine's compiled kernels run: on which threads, and with what memory.

Threads: the kernels that split large steps (broad phase, narrow phase, solver sweeps) run on
numba's OpenMP layer (``libgomp1``, installed by the setup script), or TBB where it is installed:
both are safe when two Python threads launch parallel kernels at once (the app steps the world in
its physics thread while the recorder's thread may be busy), which numba's own "workqueue" layer is
not — it would abort the process. With no safe layer numba raises a clear error when ``configure``
starts the layer. It starts it at once, not at the first parallel launch: numba starts its layer
when it compiles a parallel kernel or loads one from its cache itself, but a serial kernel loaded
from the cache carries the parallel kernels it calls inside it (``contact_impulses`` those of the
solver) without starting the layer, and their first launch then crashed the process (reproduced:
the warm-up's stack scene, run from the cache). ``NUMBA_NUM_THREADS`` caps the thread count (1 runs
everything on the calling thread). Results never depend on the thread count: the work is split the
same way whatever the number of threads (see the callers).

Between parallel kernels OpenMP's workers spin before they sleep: libgomp's default, 300 000
turns, keeps them spinning through all the serial work of a step, and where the two cores are
siblings of one physical core (this 2-vCPU machine, some of the time) that spinning halves the
speed of the thread doing the serial work: the N = 1000 pile ran at ~200 steps/s on two threads
against ~240 on one. ``GOMP_SPINCOUNT`` is set to 10 000 turns (tens of µs, enough to bridge the
gap between two kernels of one stage) unless the environment sets it or ``OMP_WAIT_POLICY``;
measured on the same pile: ~300–320 steps/s, run after run (bench/pile.py).

Memory: a step allocates a few arrays of 0.1–2 MB (contacts, Jacobians, world hulls) and frees
them at its end. glibc serves blocks that large with a fresh ``mmap`` each time until its
adaptive threshold catches up, and then hands trimmed heap back to the kernel, so every step
paid page faults on memory it had just freed (a fifth of a 1000-body step here). On glibc the
mmap threshold is raised to 32 MB and freed heap is kept up to 64 MB (``mallopt``; the
``MALLOC_*_`` environment variables set first still win). Elsewhere nothing changes.

numpy asks for transparent huge pages (``madvise(MADV_HUGEPAGE)``) for every array of 4 MB or
more. A huge page is found as a free 2 MB block (compacted for, where the system says
``defrag=madvise``) and zeroed whole when first touched; on the 2-core development machine (a
virtual machine) the first 200 MB of arrays a process made took 0.7–1.3 s in huge pages and
0.15–0.2 s in small ones, which the kernel recycles from memory freed before. A big mesh's load
allocates a few hundred MB of arrays once (reading, cleaning, mass properties, hull): in the app
the loader's thread spent 0.85–1.08 s on a core for a 1.31 M-face PLY with huge pages and
0.63–0.79 s without (docs/architecture.md#from-a-dropped-file-to-the-screen). The engine's own
per-step arrays are small and made by compiled code, not numpy's allocator. So ``configure``
turns numpy's advice off (``ARRAY_HUGE_PAGES``) unless ``NUMPY_MADVISE_HUGEPAGE`` is set: numpy
reads that at import, and the user's choice stands.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os

import numba
from numba.np.ufunc import parallel as _pool  # the thread pool's state

from physics.kernel_cache import drop_stale_kernels
from physics.settings import ARRAY_HUGE_PAGES, MMAP_THRESHOLD, SPIN_COUNT, TRIM_THRESHOLD

_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD = -1, -3  # glibc's malloc.h


_configured = False


def configure() -> None:
    """Set the process-wide options above: numba's thread-safe threading layer, OpenMP's spin count
    (unless the environment sets it or ``OMP_WAIT_POLICY``), glibc's allocator thresholds
    (unless ``MALLOC_*_`` are set) and numpy's huge-page advice (unless
    ``NUMPY_MADVISE_HUGEPAGE`` is set), then start the threading layer; and drop the cached
    kernels compiled from older sources (physics/kernel_cache.py) before any is loaded.
    Importing ``physics`` changes nothing of the process; whoever starts the engine calls this
    once, before the first parallel kernel runs (the threading layer and the spin count are read
    then): the ``tumble`` command, the warm-up, the benchmarks, the test session, and
    ``Simulation.start`` for a program that only runs the physics thread. Later calls do
    nothing."""
    global _configured
    if _configured:
        return
    _configured = True
    drop_stale_kernels()  # before any kernel loads from numba's cache: physics/kernel_cache.py
    numba.config.THREADING_LAYER = "threadsafe"
    if "OMP_WAIT_POLICY" not in os.environ:
        os.environ.setdefault("GOMP_SPINCOUNT", str(SPIN_COUNT))
    _keep_step_memory()
    _array_pages()
    numba.get_num_threads()  # launches the pool, after the layer's choice and its spin count


def parallel_threads() -> int:
    """Threads a parallel kernel launched now, from this thread, would use; the first call
    launches the thread pool.

    Every step asks (collision/find.py: compiled code cannot, numba's answer there is not
    cached with the kernel), so once the pool runs it reads the threading layer's count for
    this thread directly (~0.3 µs) instead of through ``numba.get_num_threads`` (~3 µs here).
    The launch itself must come before a cached kernel that calls a parallel one is loaded
    (docs/architecture.md#the-step); every caller of one asks first."""
    read = getattr(_pool, "_get_num_threads", None)
    if getattr(_pool, "_is_initialized", False) and read is not None:
        return read()
    return numba.get_num_threads()


def use_threads(count: int) -> int:
    """Let the parallel kernels this thread launches use up to ``count`` threads (the setting
    is the calling thread's own); returns the count in effect, at most ``NUMBA_NUM_THREADS``."""
    numba.set_num_threads(max(1, min(int(count), numba.config.NUMBA_NUM_THREADS)))
    return numba.get_num_threads()


def _keep_step_memory() -> None:
    name = ctypes.util.find_library("c")
    try:
        libc = ctypes.CDLL(name)
        mallopt = libc.mallopt
    except (OSError, AttributeError, TypeError):  # not glibc: its allocator is left alone
        return
    if "MALLOC_MMAP_THRESHOLD_" not in os.environ:
        mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD)
    if "MALLOC_TRIM_THRESHOLD_" not in os.environ:
        mallopt(_M_TRIM_THRESHOLD, TRIM_THRESHOLD)


def _array_pages() -> None:
    if "NUMPY_MADVISE_HUGEPAGE" in os.environ:  # numpy applied it at import
        return
    from numpy._core import multiarray

    set_advice = getattr(multiarray, "_set_madvise_hugepage", None)  # numpy's own toggle
    if set_advice is not None:
        set_advice(ARRAY_HUGE_PAGES)
