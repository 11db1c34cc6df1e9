"""The loader's stopwatch splits a stage's wall time into time on a core, waiting for a core and
blocked, for the thread that ran it."""

import threading
import time

from app.stopwatch import Lap, Stopwatch, split
from tests.wall_clock import WALL_CLOCK

pytestmark = WALL_CLOCK  # times busy and sleeping threads


def spin(seconds):
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        pass


def test_a_busy_stage_is_on_a_core_and_a_sleeping_one_blocked():
    watch = Stopwatch()
    spin(0.2)
    busy = watch.lap("busy")
    time.sleep(0.2)
    asleep = watch.lap("asleep")
    assert busy.wall >= 0.2 and asleep.wall >= 0.2
    # on a busy machine the spinning thread may wait for a core, but it never blocks
    assert busy.on_core + (busy.waiting or 0.0) > 0.9 * busy.wall
    assert asleep.on_core < 0.05
    if asleep.waiting is not None:  # Linux: the sleep is blocked time
        assert asleep.blocked > 0.15 and busy.blocked < 0.05
    assert [lap.name for lap in watch.laps] == ["busy", "asleep"]


def test_waiting_for_the_gil_counts_as_blocked():
    """A stage that needs the GIL while another thread spins pure Python gets it only every
    other switch interval: that time is not on a core, and it shows as blocked or waiting."""
    holding = threading.Event()
    release = threading.Event()

    def hog():
        holding.set()
        while not release.is_set():  # pure Python: holds the GIL but at the switches
            pass

    other = threading.Thread(target=hog)
    other.start()
    holding.wait()
    try:
        watch = Stopwatch()
        spin(0.2)
        lap = watch.lap("contended")
    finally:
        release.set()
        other.join()
    if lap.waiting is not None:
        assert lap.blocked + lap.waiting > 0.2 * lap.wall


def test_the_summary_names_each_stage_and_the_split():
    laps = [Lap("read", 0.1, 0.08, 0.01), Lap("clean", 0.3, 0.2, 0.05)]
    assert split(laps) == ("0.40 s: on a core 0.28, waiting for a core 0.06, blocked on the GIL "
                           "or disk 0.06")
    assert split([Lap("read", 0.1, 0.08, None)]) == "0.10 s: on a core 0.08"
    watch = Stopwatch()
    watch.laps.extend(laps)
    assert watch.summary() == f"read 0.10 s, clean 0.30 s ({split(laps)})"
