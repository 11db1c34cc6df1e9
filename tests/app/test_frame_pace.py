"""The window's redraw pacing (app/frame_pace.py) on a pyglet clock driven by a fake time: 60
redraws a second, 24 while a clip renders, the change taking effect from inside a redraw."""

import pyglet
import pytest

from app.frame_pace import CLIP_FRAME_INTERVAL, FRAME_INTERVAL, FramePace


class FakeTime:
    def __init__(self):
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def run_for(clock: pyglet.clock.Clock, time: FakeTime, seconds: float, step: float = 1e-4):
    """Tick the clock every ``step`` s of fake time for ``seconds``."""
    end = time.now + seconds
    while time.now < end - 1e-12:
        time.now += step
        clock.tick()


@pytest.fixture
def clock_and_time():
    time = FakeTime()
    return pyglet.clock.Clock(time_function=time), time


def test_the_window_redraws_60_times_a_second_and_24_while_a_clip_renders(clock_and_time):
    clock, time = clock_and_time
    drawn = []
    pace = FramePace(lambda dt: drawn.append(time.now), FRAME_INTERVAL, clock)
    run_for(clock, time, 2.0)
    assert 119 <= len(drawn) <= 121
    pace.set_interval(CLIP_FRAME_INTERVAL)
    before = len(drawn)
    run_for(clock, time, 2.0)
    assert 47 <= len(drawn) - before <= 49
    gaps = [b - a for a, b in zip(drawn[before:], drawn[before + 1:])]
    assert min(gaps) >= CLIP_FRAME_INTERVAL - 2e-3
    pace.set_interval(FRAME_INTERVAL)
    before = len(drawn)
    run_for(clock, time, 1.0)
    assert 59 <= len(drawn) - before <= 61


def test_a_redraw_may_change_the_pace_and_stop_ends_the_redraws(clock_and_time):
    clock, time = clock_and_time
    drawn = []
    pace = None

    def draw(dt):  # as the window does: a clip started from the panel, inside a frame
        drawn.append(time.now)
        if len(drawn) == 10:
            pace.set_interval(CLIP_FRAME_INTERVAL)

    pace = FramePace(draw, FRAME_INTERVAL, clock)
    run_for(clock, time, 10 * FRAME_INTERVAL + 1.0)
    assert pace.interval == CLIP_FRAME_INTERVAL
    after = [b - a for a, b in zip(drawn[9:], drawn[10:])]
    assert after and min(after) >= CLIP_FRAME_INTERVAL - 2e-3
    assert 9 + 23 <= len(drawn) <= 10 + 25
    pace.set_interval(CLIP_FRAME_INTERVAL)  # unchanged: the schedule stays as it is
    count = len(drawn)
    run_for(clock, time, 0.5)
    assert 11 <= len(drawn) - count <= 13
    pace.stop()
    count = len(drawn)
    run_for(clock, time, 0.5)
    assert len(drawn) == count
