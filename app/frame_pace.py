"""How often the window redraws: every ``FRAME_INTERVAL``, and no more often than
``CLIP_FRAME_INTERVAL`` while a clip renders in the background, so that the clip gets the
cores the window would spend on frames beyond what looks fluid
(docs/architecture.md#history).

Input is still handled as it comes (pyglet's event loop wakes for it); only the redraws are
spaced out, and the panel's progress bar moves with every one of them.
"""

from __future__ import annotations

from typing import Callable

import pyglet

FRAME_INTERVAL = 1.0 / 60.0  # s: redraw rate (vsync holds it to a display's where there is one)
# s: while a clip renders, 24 frames/s: above the 20 a moving view needs to look fluid, and
# the window's drawing (~30 ms of CPU a frame on llvmpipe) then leaves the clip most of the
# second core of a 2-core machine
CLIP_FRAME_INTERVAL = 1.0 / 24.0


class FramePace:
    """Calls ``draw(dt)`` (dt: s since its last call) on pyglet's ``clock`` every ``interval``
    s; ``set_interval`` changes the interval from the next frame on, also from inside
    ``draw``."""

    def __init__(self, draw: Callable[[float], None], interval: float = FRAME_INTERVAL,
                 clock: pyglet.clock.Clock | None = None):
        self._clock = clock if clock is not None else pyglet.clock.get_default()
        self._draw = draw
        self.interval = float(interval)
        self._clock.schedule_interval(self._draw, self.interval)

    def set_interval(self, interval: float) -> None:
        """Redraw every ``interval`` s from now on (nothing changes if it already does)."""
        if interval == self.interval:
            return
        self._clock.unschedule(self._draw)
        self.interval = float(interval)
        self._clock.schedule_interval(self._draw, self.interval)

    def stop(self) -> None:
        """No more redraws."""
        self._clock.unschedule(self._draw)
