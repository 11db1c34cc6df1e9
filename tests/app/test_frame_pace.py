"""The window's redraw pacing (app/frame_pace.py) on a pyglet clock driven by a fake time: 60
redraws a second, 24 while a clip renders, the change taking effect from inside a redraw; and
the physics first: 30 redraws a second while the physics thread drops sim time, 60 again once
it has kept up, tried again less often each time the try fails."""

import pyglet
import pytest

from app.frame_pace import (
    CLIP_FRAME_INTERVAL,
    FRAME_INTERVAL,
    LAG_HOLD,
    LAG_PROBE,
    LAGGING_FRAME_INTERVAL,
    MAX_LAG_HOLD,
    FramePace,
    PhysicsFirst,
)


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


def frames(pace: PhysicsFirst, start: float, seconds: float, dropped) -> list[float]:
    """The intervals ``pace`` gives, frame by frame (at the interval it gave), over
    ``seconds`` from ``start``; dropped(t): the snapshot's time_dropped at t."""
    intervals, now = [], start
    while now < start + seconds:
        intervals.append(pace.update(dropped(now), now))
        now += intervals[-1]
    return intervals


def test_the_window_draws_60_a_second_while_the_physics_keeps_up():
    pace = PhysicsFirst()
    assert set(frames(pace, 0.0, 30.0, lambda t: 0.0)) == {FRAME_INTERVAL}


def test_dropped_sim_time_brings_30_a_second_until_the_physics_has_kept_up_for_the_hold():
    pace = PhysicsFirst()
    assert pace.update(0.0, 0.0) == FRAME_INTERVAL
    assert pace.update(0.1, 1.0) == LAGGING_FRAME_INTERVAL  # dropped: the physics lags
    # drops go on for 2 s (each ~0.1 s of sim time, a second apart), the last at t = 3
    assert set(frames(pace, 1.0, 1.9, lambda t: 0.1 * (1 + int(t - 1.0)))) == {
        LAGGING_FRAME_INTERVAL}
    assert pace.update(0.3, 3.0) == LAGGING_FRAME_INTERVAL
    assert set(frames(pace, 3.0, LAG_HOLD - 0.05, lambda t: 0.3)) == {LAGGING_FRAME_INTERVAL}
    assert pace.update(0.3, 3.0 + LAG_HOLD) == FRAME_INTERVAL
    # a reset of the world starts time_dropped again from 0: no drop
    assert pace.update(0.0, 3.0 + LAG_HOLD + 0.1) == FRAME_INTERVAL


def test_each_failed_try_doubles_the_hold_up_to_its_cap_and_a_held_try_resets_it():
    pace = PhysicsFirst()
    dropped, now = 0.0, 0.0
    for expected_hold in [LAG_HOLD * 2**k for k in range(1, 6)] + [MAX_LAG_HOLD] * 2:
        dropped += 0.1
        pace.update(dropped, now)  # lags
        now += pace.hold
        assert pace.update(dropped, now) == FRAME_INTERVAL  # held long enough: a try
        dropped += 0.1
        now += LAG_PROBE / 2
        assert pace.update(dropped, now) == LAGGING_FRAME_INTERVAL  # the try failed
        assert pace.hold == min(expected_hold, MAX_LAG_HOLD)
    now += pace.hold
    assert pace.update(dropped, now) == FRAME_INTERVAL
    assert pace.update(dropped, now + LAG_PROBE) == FRAME_INTERVAL  # this try held
    assert pace.hold == LAG_HOLD
    dropped += 0.1
    assert pace.update(dropped, now + 60.0) == LAGGING_FRAME_INTERVAL
    assert pace.hold == LAG_HOLD  # a lag long after a try is no failed try
