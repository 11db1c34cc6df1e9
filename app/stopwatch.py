"""Where the time of a load goes, stage by stage, for the log line a big mesh's load ends with
(docs/architecture.md#from-a-dropped-file-to-the-screen).

Each lap is the stage's wall time split three ways for the thread that ran it: on a core, waiting
for a core (runnable but not running: the machine or the app's other threads were busy), and
blocked (waiting for the GIL, or for the disk). Linux reports the first two per thread in
``/proc/thread-self/schedstat`` (nanoseconds on a core, nanoseconds waiting on a run queue);
elsewhere the thread's CPU time stands for the first and the split of the rest is unknown.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

_SCHEDSTAT = "/proc/thread-self/schedstat"


def _thread_clock() -> tuple[float, float | None]:
    """(s on a core, s waiting for a core or None when unknown) of the calling thread so far."""
    try:
        with open(_SCHEDSTAT) as f:
            on_core, waiting, _ = f.read().split()
        return int(on_core) * 1e-9, int(waiting) * 1e-9
    except (OSError, ValueError):
        return time.thread_time(), None


@dataclass(frozen=True)
class Lap:
    """One stage: wall seconds, and of them on a core, waiting for a core (None: unknown) and
    blocked (the rest: the GIL or the disk; None when the waiting is unknown)."""

    name: str
    wall: float
    on_core: float
    waiting: float | None

    @property
    def blocked(self) -> float | None:
        if self.waiting is None:
            return None
        return max(self.wall - self.on_core - self.waiting, 0.0)


class Stopwatch:
    """Laps of the calling thread: ``lap(name)`` ends the stage that began at the last lap (or
    at creation). Use it from one thread."""

    def __init__(self):
        self.laps: list[Lap] = []
        self._wall = time.perf_counter()
        self._clock = _thread_clock()

    def lap(self, name: str) -> Lap:
        wall, clock = time.perf_counter(), _thread_clock()
        waiting = None if clock[1] is None else clock[1] - self._clock[1]
        lap = Lap(name, wall - self._wall, clock[0] - self._clock[0], waiting)
        self._wall, self._clock = wall, clock
        self.laps.append(lap)
        return lap

    def summary(self) -> str:
        """``read 0.05 s, clean 0.31 s, … (1.20 s: on a core 0.60, waiting for a core 0.55,
        blocked on the GIL or disk 0.05)``."""
        stages = ", ".join(f"{lap.name} {lap.wall:.2f} s" for lap in self.laps)
        return f"{stages} ({split(self.laps)})"


def split(laps: list[Lap]) -> str:
    """The laps' total wall time and how it divides (``Stopwatch.summary``)."""
    wall = sum(lap.wall for lap in laps)
    on_core = sum(lap.on_core for lap in laps)
    if any(lap.waiting is None for lap in laps):
        return f"{wall:.2f} s: on a core {on_core:.2f}"
    waiting = sum(lap.waiting for lap in laps)
    blocked = sum(lap.blocked for lap in laps)
    return (f"{wall:.2f} s: on a core {on_core:.2f}, waiting for a core {waiting:.2f}, "
            f"blocked on the GIL or disk {blocked:.2f}")
