"""The plots' memory: the last seconds of sim time in ring buffers, and the lag indicator."""

from __future__ import annotations

import math

import numpy as np

HISTORY_SECONDS = 20.0   # s of sim time shown in the plots
HISTORY_CAPACITY = 4096  # samples kept (two per HISTORY_SECONDS / capacity at least)
BEHIND_SHOWN_SECONDS = 2.0  # "BEHIND" stays red this long after sim time was last dropped


class History:
    """The last ``seconds`` of sim time of the plotted quantities, in numpy ring buffers.

    Each sample: time t (s), the selected body's id (−1: none) and COLUMNS. Samples closer than
    ``seconds / (capacity / 2)`` in time are skipped, so even in slow motion the buffers always
    span the whole window; time going backwards (reset) clears them.
    """

    COLUMNS = ("ke_total", "ke_selected", "L_selected", "w1", "w2", "w3")

    def __init__(self, seconds: float = HISTORY_SECONDS, capacity: int = HISTORY_CAPACITY):
        self.seconds = float(seconds)
        self.capacity = int(capacity)
        self._spacing = self.seconds / (self.capacity // 2)
        self._t = np.zeros(self.capacity)                             # (cap,) s
        self._who = np.full(self.capacity, -1, dtype=np.int64)        # (cap,) body id or −1
        self._values = np.zeros((self.capacity, len(self.COLUMNS)))  # (cap, 6)
        self._next = 0   # slot the next sample goes to
        self._count = 0  # valid samples

    def clear(self) -> None:
        self._next = self._count = 0

    @property
    def last_time(self) -> float | None:
        return float(self._t[self._next - 1]) if self._count else None

    def append(self, t: float, body_id: int, values) -> None:
        """Add one sample (values: len(COLUMNS) numbers; NaN where there is no selection)."""
        last = self.last_time
        if last is not None:
            if t < last:
                self.clear()
            elif t - last < self._spacing:
                return
        self._t[self._next] = t
        self._who[self._next] = body_id
        self._values[self._next] = values
        self._next = (self._next + 1) % self.capacity
        self._count = min(self._count + 1, self.capacity)

    def series(self, body_id: int | None = None) -> tuple[np.ndarray, np.ndarray]:
        """(t (m,), values (m, 6)) of the last ``seconds``, oldest first (copies). The columns
        of the selected body are NaN (a gap in the plot) where another body was selected."""
        order = (np.arange(self._next - self._count, self._next)) % self.capacity
        t, who, values = self._t[order], self._who[order], self._values[order].copy()
        if self._count:
            keep = t >= t[-1] - self.seconds
            t, who, values = t[keep], who[keep], values[keep]
        values[who != (-1 if body_id is None else body_id), 1:] = np.nan
        return t, values


class LagIndicator:
    """What the panel says about sim time dropped to stay real-time: "BEHIND" while it grows
    (and BEHIND_SHOWN_SECONDS after), "kept up" once it has stopped growing, None while none
    was ever dropped. One late batch (a resize, a big mesh loading) is no alarm: a snapshot's
    ``behind`` flag alone is not shown."""

    def __init__(self):
        self._dropped = 0.0         # sim s dropped, as last seen
        self._grew_at = -math.inf   # wall s when that last grew

    def update(self, time_dropped: float, now: float) -> str | None:
        if time_dropped > self._dropped:
            self._grew_at = now
        self._dropped = time_dropped  # a reset or a new scene starts again from 0
        if time_dropped <= 0:
            return None
        return "BEHIND" if now - self._grew_at < BEHIND_SHOWN_SECONDS else "kept up"
