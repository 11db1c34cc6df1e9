"""A progress bar for the long commands (``tumble record``, ``tumble simulate``)."""

from __future__ import annotations

import math
import time
from typing import Callable, TextIO

PROGRESS_INTERVAL = 0.25  # s between redraws on a terminal: smooth, yet cheap to write
BAR_WIDTH = 30


class Progress:
    """A progress bar on ``stream``: units done, their rate, the time left. On a terminal it
    redraws one line a few times a second; otherwise (a log, a test) it writes a line per 10 %.
    Nothing is shown before ``delay`` seconds have passed, so short runs stay quiet.
    """

    def __init__(self, total: int, stream: TextIO, *, unit: str, rate_unit: str,
                 delay: float = 0.0, clock: Callable[[], float] = time.monotonic):
        self.total, self.stream, self.clock = total, stream, clock
        self.unit, self.rate_unit, self.delay = unit, rate_unit, delay
        self.start = self.last = clock()
        self.tty = stream.isatty()
        self._tenths = 0
        self._shown = False

    def update(self, done: int) -> None:
        now = self.clock()
        if now - self.start < self.delay:
            return
        if self.tty:
            if now - self.last < PROGRESS_INTERVAL and done < self.total:
                return
            self.last = now
            self.stream.write("\r" + self.line(done, now))
        else:
            tenths = 10 * done // max(self.total, 1)
            if tenths <= self._tenths and done < self.total:
                return
            self._tenths = tenths
            self.stream.write(self.line(done, now) + "\n")
        self._shown = True
        self.stream.flush()

    def line(self, done: int, now: float) -> str:
        elapsed = max(now - self.start, 1e-9)
        rate = done / elapsed
        eta = (self.total - done) / rate if rate > 0 else math.inf
        filled = BAR_WIDTH * done // max(self.total, 1)
        eta_text = ("--:--" if not math.isfinite(eta)
                    else f"{int(eta) // 60:02d}:{int(eta) % 60:02d}")
        return (f"[{'#' * filled}{'.' * (BAR_WIDTH - filled)}] {done}/{self.total} {self.unit}  "
                f"{rate:5.1f} {self.rate_unit}  ETA {eta_text}")

    def finish(self) -> None:
        if self.tty and self._shown:
            self.stream.write("\n")
            self.stream.flush()
