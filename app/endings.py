"""Every way the desktop app can end goes through the same shutdown.

The close button (WM_DELETE_WINDOW) and Ctrl+C (KeyboardInterrupt out of the event loop) already
did; three ways did not, and each left a broken video behind:

- The window destroyed from outside (``xdotool windowclose``, a crashed window manager):
  pyglet has no handler for X's DestroyNotify, so the loop went on drawing into a window that no
  longer existed — llvmpipe failed with GL_OUT_OF_MEMORY and the process grew without end. The
  handler ends the event loop instead, without touching GL (its drawable is gone).
- SIGTERM (a session logging out, ``kill``): Python's default ends the process at once. The
  handler ends the event loop, so ``main``'s shutdown runs and the exit status is 0.
- The X server gone: Xlib calls its I/O error handler, then exit(1) if the handler returns.
  The handler finishes the video being recorded and ends the process with status 0 itself
  (nothing else can run: every X call would fail).

``watch_endings(app)`` installs all three for an ``App`` (app/window.py).
"""

from __future__ import annotations

import logging
import os
import signal
import sys

import pyglet

log = logging.getLogger("tumble")


def watch_endings(app) -> None:
    """Install the handlers above for ``app`` (has ``window``, ``closed`` and
    ``stop_recording``); call once, on the main thread, after the window exists."""
    signal.signal(signal.SIGTERM, lambda signum, frame: _end_loop(app, "SIGTERM"))
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


_installed: list = []  # the ctypes callback, referenced for as long as Xlib may call it


def _watch_server(app) -> None:
    from pyglet.libs.x11 import xlib

    def server_gone(display) -> int:
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
