"""Threads for the kernels that split their work (narrow phase, solver): how many, and which
threading layer numba runs them on.

The layer is OpenMP (``libgomp1``, installed by the setup script), or TBB where it is installed:
both are safe when two Python threads launch parallel kernels at once (the app steps the world
in its physics thread while the recorder's thread may be busy), which numba's own "workqueue"
layer is not — it would abort the process. With no safe layer numba raises a clear error on the
first parallel launch instead. ``NUMBA_NUM_THREADS`` caps the thread count (1 runs everything
on the calling thread). Results never depend on the thread count: the work is split the same
way whatever the number of threads (see the callers).
"""

from __future__ import annotations

import numba

numba.config.THREADING_LAYER = "threadsafe"


def parallel_threads() -> int:
    """Threads a parallel kernel launched now would use."""
    return numba.get_num_threads()
