"""How often the window redraws: every ``FRAME_INTERVAL``, and no more often than
``CLIP_FRAME_INTERVAL`` while a clip renders in the background, so that the clip gets the
cores the window would spend on frames beyond what looks fluid
(docs/architecture.md#history); and how it draws its 3D view meanwhile (``CLIP_VIEW_SCALE``).
When the physics thread cannot keep real time, the window yields it CPU too
(``PhysicsFirst``: docs/architecture.md#threads).

Input is still handled as it comes (pyglet's event loop wakes for it); only the redraws are
spaced out, and the panel's progress bar moves with every one of them.
"""

from __future__ import annotations

import math
from typing import Callable

import pyglet

FRAME_INTERVAL = 1.0 / 60.0  # s: redraw rate (vsync holds it to a display's where there is one)
# s: while a clip renders, 24 frames/s: above the 20 a moving view needs to look fluid, and
# the window's drawing (~30 ms of CPU a frame on llvmpipe) then leaves the clip most of the
# second core of a 2-core machine
CLIP_FRAME_INTERVAL = 1.0 / 24.0
# while a clip renders, the window's 3D view is drawn into an offscreen image of this fraction
# of its resolution and copied onto the screen (app/render/scaled_view.py): at 1, the same
# picture (a few dozen pixels apart where bodies meet the floor: the image's depth has the 24
# bits a clip's has, the screen's 32) for ~5 ms less CPU a frame on llvmpipe, since the image
# takes the cached floor's depth by a copy where the screen draws it again. Half the
# resolution saved no more: stretching the image (linear filtering) costs llvmpipe about what
# the pixels not drawn would (docs/architecture.md, clips)
CLIP_VIEW_SCALE = 1.0
# s: while the physics thread falls behind real time, 30 frames/s: fluid still, and on a machine
# whose cores the renderer and the physics share (llvmpipe on 2 cores: the 500-body scene of
# bench/frame.py draws in ~29 ms of the main thread's and the rasteriser's CPU a frame, its
# physics needs ~0.85 of a core) the frames it does not draw are the physics' CPU; a world in
# real time matters more to the sandbox than frames beyond 30
LAGGING_FRAME_INTERVAL = 1.0 / 30.0
# s at 30 frames/s without sim time dropped before the window tries 60 again; doubled (up to
# MAX_LAG_HOLD) each time the physics falls behind again within LAG_PROBE s of the try, so a
# machine that cannot have both tries rarely (each try drops ~0.1 s of sim time: the physics
# thread's max_lag, physics/simulation.py)
LAG_HOLD = 5.0
MAX_LAG_HOLD = 80.0
LAG_PROBE = 3.0


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


class PhysicsFirst:
    """The redraw interval that leaves the physics thread the CPU it needs for real time:
    ``FRAME_INTERVAL`` while it keeps up, ``LAGGING_FRAME_INTERVAL`` once it has dropped sim
    time (``Snapshot.time_dropped`` grew: it lagged past its ``max_lag``), back to
    ``FRAME_INTERVAL`` after ``hold`` s without a drop. A drop within ``LAG_PROBE`` s of going
    back doubles ``hold`` (up to ``MAX_LAG_HOLD``); a try that holds sets it back to
    ``LAG_HOLD``."""

    def __init__(self):
        self.lagging = False
        self.hold = LAG_HOLD           # s at the lagging interval before the next try
        self._dropped = 0.0            # sim s dropped, as last seen
        self._last_drop = -math.inf    # s (the caller's clock) the drops last grew
        self._tried_at = -math.inf     # s the window last went back to FRAME_INTERVAL

    @property
    def interval(self) -> float:
        return LAGGING_FRAME_INTERVAL if self.lagging else FRAME_INTERVAL

    def update(self, time_dropped: float, now: float) -> float:
        """The interval for the frames after this one; time_dropped: the newest snapshot's
        (s of sim time, only ever growing but for a reset), now: s of a monotonic clock."""
        dropped = time_dropped > self._dropped
        self._dropped = time_dropped  # a reset or a new scene starts again from 0
        if dropped:
            self._last_drop = now
            if not self.lagging:
                if now - self._tried_at < LAG_PROBE:  # the try failed: wait longer next time
                    self.hold = min(2.0 * self.hold, MAX_LAG_HOLD)
                self.lagging = True
        elif self.lagging and now - self._last_drop >= self.hold:
            self.lagging, self._tried_at = False, now
        elif not self.lagging and now - self._tried_at >= LAG_PROBE:
            self.hold = LAG_HOLD  # 60 frames/s held: the next lag starts from the short hold
        return self.interval
