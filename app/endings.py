"""Every way the desktop app can end goes through the same shutdown.

The close button (WM_DELETE_WINDOW) and Ctrl+C (KeyboardInterrupt out of the event loop) already
did; three ways did not, and each left a broken video behind:

- The window destroyed from outside (``xdotool windowclose``, a crashed window manager):
  pyglet has no handler for X's DestroyNotify, so the loop went on drawing into a window that no
  longer existed — llvmpipe failed with GL_OUT_OF_MEMORY and the process grew without end. The
  handler ends the event loop instead, without touching GL (its drawable is gone). A draw under
  way when the drawable went can block inside llvmpipe for good, before the loop sees the event:
  a watchdog on its own X connection then saves the video and ends the process.
- SIGTERM (a session logging out, ``kill``): Python's default ends the process at once. The
  handler ends the event loop, so ``main``'s shutdown runs and the exit status is 0. For SIGTERM
  and Ctrl+C alike, a watchdog ends the process itself (video saved, status 0 or 130) if the
  main thread, blocked in the renderer, has not ended it within STUCK_GRACE s.
- The X server gone: Xlib calls its I/O error handler, then exit(1) if the handler returns.
  The handler finishes the video being recorded and ends the process with status 0 itself
  (nothing else can run: every X call would fail).

``watch_endings(app)`` installs all of these for an ``App`` (app/window.py).
"""

from __future__ import annotations

import ctypes
import faulthandler
import logging
import os
import signal
import sys
import threading
import time

import pyglet

log = logging.getLogger("tumble")


def watch_endings(app) -> None:
    """Install the handlers above for ``app`` (has ``window``, ``closed`` and
    ``stop_recording``); call once, on the main thread, after the window exists."""
    signal.signal(signal.SIGTERM, lambda signum, frame: _end_loop(app, "SIGTERM"))
    # a shell that starts a program in the background without job control leaves SIGINT
    # ignored, and Python then keeps it ignored: Ctrl+C and `kill -INT` must end the app anyway
    signal.signal(signal.SIGINT, signal.default_int_handler)
    _watch_signals(app)
    # ``kill -USR1`` prints every thread's stack to stderr: how a hang is found (the tests do it
    # before they give up on an app that does not end)
    faulthandler.register(signal.SIGUSR1, all_threads=True)
    if sys.platform.startswith("linux"):
        _watch_destroy(app)
        _watch_server(app)


def _end_loop(app, why: str) -> None:
    log.info("ending: %s", why)
    pyglet.app.exit()


def _watch_destroy(app) -> None:
    from pyglet.libs.x11 import xlib

    window = app.window

    def destroyed(event) -> None:
        if event.xdestroywindow.window != window._window:  # a child (pyglet's view) goes too
            return
        app.closed = True  # no more drawing: the drawable is gone
        window.has_exit = True  # pyglet must not destroy it a second time
        app.stop_recording("the window was destroyed")
        _end_loop(app, "the window was destroyed")

    window._event_handlers[xlib.DestroyNotify] = destroyed
    threading.Thread(target=_end_if_stuck, args=(app, window._window), name="ending watchdog",
                     daemon=True).start()


# s after the window was destroyed before a stuck process is ended: a draw under way when X
# destroyed the drawable can block for good inside the software renderer (about 1 run in 20 under
# load), and the event loop never sees the DestroyNotify; the promise is to end within 2 s
STUCK_GRACE = 1.5
# held by whoever ends the process from outside the event loop, so two endings at once cannot
# cut each other's video short
_final_exit = threading.Lock()


def _end_if_stuck(app, window_id) -> None:
    """Watch the window from a second X connection (the app's own may be blocked in GL); once it
    is destroyed, give the event loop STUCK_GRACE s to end the app, else save the video and end
    the process here. Runs on a daemon thread, so a normal ending never waits for it; the close
    button destroys the window too, and a shutdown slowed by a busy machine is not stuck."""
    from pyglet.libs.x11 import xlib

    display = xlib.XOpenDisplay(None)
    if not display:
        return
    xlib.XSelectInput(display, window_id, xlib.StructureNotifyMask)
    xlib.XFlush(display)
    event = xlib.XEvent()
    while True:  # XNextEvent blocks in C, without the GIL
        xlib.XNextEvent(display, ctypes.byref(event))
        if event.type == xlib.DestroyNotify and event.xdestroywindow.window == window_id:
            break
    time.sleep(STUCK_GRACE)
    if getattr(app, "shutting_down", False):  # the loop ended: main's shutdown saves and ends
        return
    log.error("the window was destroyed and the event loop did not end within %.1f s (a draw "
              "that did not return, or a video still being finished): the app ends",
              STUCK_GRACE)
    with _final_exit:
        try:
            # the encoder only, no GL; if the main thread is finishing the video already, this
            # waits for the file
            app.stop_recording("the window was destroyed")
        finally:
            logging.shutdown()
            os._exit(0)


# status the process ends with when the watchdog ends it after a signal (as main's would)
_SIGNAL_STATUS = {signal.SIGINT: 130, signal.SIGTERM: 0}


def _watch_signals(app) -> None:
    """Python runs a signal's handler (Ctrl+C's KeyboardInterrupt, SIGTERM's loop exit) on the
    main thread only, between bytecodes: a main thread blocked in the software renderer (a
    buffer swap under load) would not see it for seconds. The C-level handler also writes the
    signal's number to a wakeup pipe at once; a daemon thread reads it, gives the main thread
    STUCK_GRACE s to end the app as usual, else saves the video and ends the process with the
    status main would have returned."""
    read, write = os.pipe()
    os.set_blocking(write, False)
    signal.set_wakeup_fd(write, warn_on_full_buffer=False)

    def watch() -> None:
        while True:
            number = os.read(read, 1)  # blocks without the GIL
            if number and number[0] in _SIGNAL_STATUS:
                break
        time.sleep(STUCK_GRACE)
        if getattr(app, "shutting_down", False):  # main got there: its shutdown saves the video
            return
        name = signal.Signals(number[0]).name
        log.error("%s arrived while the main thread was busy in the renderer: the app ends",
                  name)
        with _final_exit:
            try:
                app.stop_recording(f"the app ended ({name})")  # the encoder only: no GL
            finally:
                logging.shutdown()
                os._exit(_SIGNAL_STATUS[number[0]])

    threading.Thread(target=watch, name="signal watchdog", daemon=True).start()


_installed: list = []  # the ctypes callback, referenced for as long as Xlib may call it


def _watch_server(app) -> None:
    from pyglet.libs.x11 import xlib

    def server_gone(display) -> int:
        # both X connections (the app's and the watchdog's) report it: the first one in saves
        # the video and ends the process, the other waits here until it has
        with _final_exit:
            log.error("the X server went away: the app ends")
            try:
                app.stop_recording("the X server went away")
            finally:
                logging.shutdown()
                os._exit(0)  # returning would let Xlib exit(1) in the middle of an X call
        return 0  # not reached

    handler = xlib.XIOErrorHandler(server_gone)
    _installed.append(handler)
    xlib.XSetIOErrorHandler(handler)
