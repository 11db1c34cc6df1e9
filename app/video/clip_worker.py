"""The clip process: clips of the history rendered in a process of the app's own, so that their
drawing never waits for the window's thread to give up the GIL (docs/architecture.md#history).

The app starts it once, a few seconds after the window opens (``CLIP_WORKER_DELAY``: its
interpreter, imports, compiled kernels from numba's cache and an EGL context cost seconds of a
core, which F10 then no longer pays), with ``multiprocessing``'s *spawn* start: a fork would
copy the window's GL context and its threads half-way. It stays idle until a clip is asked
for. Two pipes join them: the app sends each ``ClipOrder`` (app/video/clip.py: the checkpoint
before the span, the commands logged from it, the bodies' records, camera, gizmos, fps, size,
path; pickled on a thread of its own, so a big scene never holds up a frame), and the process
reports back ``("ready",)`` once warm, ``("frame", done)`` as frames reach the encoder and
``("done", result, at)`` or ``("error", message, at)`` at the end (``at``: ``time.monotonic()``,
a clock the two processes share). The window reads the reports without waiting
(``ClipWorker.poll``, once a frame).

Endings: the process returns when the app's end of the orders pipe closes — ``close`` at the
app's end, or the app killed, whose pipes the system closes — and a report it cannot send (the
app gone) ends the clip under way. It reads the pipe only between clips, though, and its first
warm-up in a fresh install compiles for minutes: so a thread of its own also waits on the app's
process and ends this one the moment the app is gone (killed, crashed) whatever it is doing;
it never outlives the app. A process that dies meanwhile
(killed, out of memory) fails the clip under way with a message saying so, and the next clip
starts a new one.
"""

from __future__ import annotations

import multiprocessing
import os
import signal
import threading
import time
from multiprocessing.connection import Connection, wait

from app.video.clip import ClipOrder, ClipRequest
from app.video.recorder import RecordingResult

CLIP_WORKER_DELAY = 3.0  # s after the window opens: its first frames before the process starts
CLOSE_TIMEOUT = 2.0      # s the process may take to end after its pipe closed, before a kill
# added to the process's nice value: when the cores are short (a shared or a loaded machine),
# the window, which the user is looking at, and the app's own start and end come first; on
# cores the window leaves free (it redraws at most 24 times a second during a clip) the clip
# runs as fast as it would without it
CLIP_NICENESS = 5
# llvmpipe's rasteriser threads in the clip process (Mesa's LP_NUM_THREADS; a GPU driver
# ignores it): one is enough for a frame's ~4 ms of shading, as the process's other threads
# (drawing, re-run, encoder) overlap it, and it spends less CPU than two in hand-overs —
# measured on the default scene's 1280x720 clip frames: ~18.5 -> ~17.3 ms of CPU a frame
CLIP_RASTER_THREADS = 1


def serve(orders: Connection, reports: Connection) -> None:
    """The clip process's main: warm up, report ready, then render each ClipOrder received
    until the app's end of ``orders`` closes (see the module docstring)."""
    # Ctrl+C in a terminal reaches the whole process group: the app ends this process (its
    # pipe) when it ends itself, with no traceback of an interrupted import here
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    threading.Thread(target=_end_with_the_app, name="tumble-clip-watch", daemon=True).start()
    os.nice(CLIP_NICENESS)
    os.environ.setdefault("LP_NUM_THREADS", str(CLIP_RASTER_THREADS))  # read at EGL's start
    from app.video.clip import render_clip, warm_up

    try:
        try:
            warm_up()
        except Exception:  # not lost: each clip meets the same failure and reports it
            pass
        reports.send(("ready",))
        while True:
            try:
                order = orders.recv()
            except EOFError:  # the app closed its end, or ended
                return
            try:
                result = render_clip(order, lambda done: reports.send(("frame", done)))
            except ConnectionError:
                raise
            except Exception as e:  # reported to the app, which shows it; the process goes on
                reports.send(("error", f"{type(e).__name__}: {e}", time.monotonic()))
            else:
                reports.send(("done", result, time.monotonic()))
    except ConnectionError:  # a report the app can no longer read: it has ended
        return


def _end_with_the_app() -> None:
    """Wait for the app's process to end, then end this one at once (its pipes tell only when
    read; an unfinished clip file is the app's loss already)."""
    app = multiprocessing.parent_process()
    if app is None:  # not started by an app (called directly)
        return
    wait([app.sentinel])
    os._exit(0)


class ClipJob:
    """One clip in the clip process, as the app sees it: ``request``, ``count`` (frames),
    ``frames_done``, and once ``done`` its ``result``, ``error`` (a message, or None) and
    ``seconds`` (wall s from the order to the file finished). Read from the window's thread:
    ``done`` and ``progress`` read the reports that arrived (``ClipWorker.poll``)."""

    def __init__(self, request: ClipRequest, worker: ClipWorker):
        self.request = request
        self.count = request.count
        self.frames_done = 0
        self.result: RecordingResult | None = None
        self.error: str | None = None
        self.seconds: float | None = None
        self.finished = False
        self.ordered_at = time.monotonic()
        self._worker = worker

    @property
    def done(self) -> bool:
        self._worker.poll()
        return self.finished

    @property
    def progress(self) -> float:
        """0 … 1 of the frames written."""
        self._worker.poll()
        return self.frames_done / max(self.count, 1)

    def finish(self, result: RecordingResult | None, error: str | None, at: float) -> None:
        self.result, self.finished = result, True
        self.error = error or (result.error if result is not None else None)
        self.seconds = at - self.ordered_at


class ClipWorker:
    """The app's side of the clip process: ``start`` it (again, if it died), ``submit`` a
    ClipOrder for a ClipJob, ``poll`` its reports, ``close`` it. One clip at a time. Used
    from one thread (the window's), but for the order's own sending thread."""

    def __init__(self):
        self._process = None
        self._orders: Connection | None = None
        self._reports: Connection | None = None
        self._job: ClipJob | None = None
        self._lock = threading.Lock()  # poll: from ``done`` and ``progress`` alike
        self.ready = False  # warmed up and waiting for orders

    @property
    def pid(self) -> int | None:
        return None if self._process is None else self._process.pid

    @property
    def alive(self) -> bool:
        return self._process is not None and self._process.is_alive()

    def start(self) -> bool:
        """Start the process unless it runs; True if it was started now (it is warm seconds
        later; an order sent meanwhile waits in the pipe)."""
        if self.alive:
            return False
        self.close()  # what is left of one that died
        context = multiprocessing.get_context("spawn")
        orders_read, self._orders = context.Pipe(duplex=False)
        self._reports, reports_write = context.Pipe(duplex=False)
        process = context.Process(target=serve, args=(orders_read, reports_write),
                                  name="tumble-clip", daemon=True)
        try:
            process.start()
        except BaseException:  # e.g. Ctrl+C while it starts: the app's end must not join it
            for end in (self._orders, self._reports):
                end.close()
            self._orders = self._reports = None
            raise
        finally:
            orders_read.close()  # the process's ends: its exit then closes them, which we see
            reports_write.close()
        self._process = process  # only a started one: ``close`` joins it
        return True

    def submit(self, order: ClipOrder) -> ClipJob:
        """Send ``order`` to the process (started now if it does not run) and return its
        ClipJob; RuntimeError while another clip is under way."""
        self.poll()
        if self._job is not None:
            raise RuntimeError("a clip is still being saved")
        self.start()
        job = self._job = ClipJob(order.request, self)
        orders = self._orders
        threading.Thread(target=self._send, args=(orders, order), name="tumble-clip-order",
                         daemon=True).start()
        return job

    @staticmethod
    def _send(orders: Connection, order: ClipOrder) -> None:
        try:
            orders.send(order)
        except (OSError, ValueError):  # the process died first (poll reports it); or closed
            pass

    def poll(self) -> None:
        """Read the reports that arrived, without waiting; a process that ended fails the
        clip under way."""
        with self._lock:
            reports = self._reports
            if reports is None:
                return
            try:
                while reports.poll():
                    self._report(reports.recv())
            except (EOFError, OSError):
                self._ended()

    def _report(self, message: tuple) -> None:
        kind, job = message[0], self._job
        if kind == "ready":
            self.ready = True
        elif job is None:
            return
        elif kind == "frame":
            job.frames_done = message[1]
        elif kind == "done":
            self._job = None
            job.finish(message[1], None, message[2])
        elif kind == "error":
            self._job = None
            job.finish(None, message[1], message[2])

    def _ended(self) -> None:
        """The process is gone: its pipes are closed, the clip under way failed."""
        process = self._process
        if process is not None:
            process.join(CLOSE_TIMEOUT)
        status = None if process is None else process.exitcode
        self._reports.close()
        self._reports, self.ready = None, False
        job, self._job = self._job, None
        if job is not None:
            job.finish(None, f"the clip process ended unexpectedly (exit status {status}); "
                             "the app goes on, and the next clip starts a new one",
                       time.monotonic())

    def close(self) -> None:
        """End the process: at the app's end, or before a new start. Mid-clip its pipes are
        closed and it stops at the next frame (the file finished with the frames so far);
        idle or still warming up, it holds nothing worth the wait (its interpreter's exit
        takes a good part of a second on a busy machine) and is killed, as is one that does
        not end within ``CLOSE_TIMEOUT``."""
        self.poll()  # a report not read yet: the clip may be done
        process, self._process = self._process, None
        for end in (self._orders, self._reports):
            if end is not None:
                end.close()
        mid_clip = self._job is not None
        self._orders = self._reports = None
        self._job, self.ready = None, False
        if process is None:
            return
        if mid_clip:
            process.join(CLOSE_TIMEOUT)
        if process.is_alive():
            process.kill()
        process.join(CLOSE_TIMEOUT)
