"""How often the window redraws: every ``FRAME_INTERVAL``, and no more often than
``CLIP_FRAME_INTERVAL`` while a clip renders in the background, so that the clip gets the
cores the window would spend on frames beyond what looks fluid
(docs/architecture.md#history); and how it draws its 3D view meanwhile (``CLIP_VIEW_SCALE``).

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
# while a clip renders, the window's 3D view is drawn into an offscreen image of this fraction
# of its resolution and copied onto the screen (app/render/scaled_view.py): at 1, the same
# picture (a few dozen pixels apart where bodies meet the floor: the image's depth has the 24
# bits a clip's has, the screen's 32) for ~5 ms less CPU a frame on llvmpipe, since the image
# takes the cached floor's depth by a copy where the screen draws it again. Half the
# resolution saved no more: stretching the image (linear filtering) costs llvmpipe about what
# the pixels not drawn would (docs/architecture.md, clips)
CLIP_VIEW_SCALE = 1.0


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
