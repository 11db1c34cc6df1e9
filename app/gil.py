"""Python's switch interval while work that hands the GIL back and forth is under way.

A thread that runs compiled code, numpy or GL calls without the GIL takes it back after each
call, and waits each time up to Python's switch interval (5 ms) while another thread runs
Python: the loader reading a mesh (docs/architecture.md#from-a-dropped-file-to-the-screen).
``PROMPT_GIL_HANDOFF`` shortens the interval to ``GIL_HANDOFF`` while any such work runs.
(A clip renders in a process of its own, app/video/clip_worker.py, and shares no GIL.)
"""

from __future__ import annotations

import sys
import threading

GIL_HANDOFF = 0.001  # s another thread may keep the GIL from one that wants it back
                     # (Python's own interval is 0.005)


class PromptGilHandoff:
    """Python's switch interval at most ``GIL_HANDOFF`` while some ``with`` block of it is
    under way: the loader's thread of a 1.31 M-face PLY drop was blocked 0.15–0.39 s (median
    0.33 s of 6) with Python's 5 ms, 0.12–0.34 s (median 0.15 s) with 1 ms. The interval is
    the process's, so blocks under way at once share one change: the interval
    from before the first comes back after the last, in whatever order they end."""

    def __init__(self):
        self._lock = threading.Lock()
        self._users = 0
        self._before = 0.0

    def __enter__(self):
        with self._lock:
            if self._users == 0:
                self._before = sys.getswitchinterval()
                sys.setswitchinterval(min(self._before, GIL_HANDOFF))
            self._users += 1

    def __exit__(self, *exception):
        with self._lock:
            self._users -= 1
            if self._users == 0:
                sys.setswitchinterval(self._before)


PROMPT_GIL_HANDOFF = PromptGilHandoff()  # the one every user of the process shares
