"""Fix for a pyglet 2.1.19 crash on file drags from GTK (X11), applied when imported on Linux.

XDND lets a drag source list up to three data types inline in its XdndEnter message (bit 0 of
data.l[1] clear) instead of in an XdndTypeList property; GTK3 file managers do that. pyglet's
``XlibWindow._event_drag_enter`` then computes ``ev.xclient.data.l + 2`` (a ctypes array plus an
int), raising a TypeError that escapes ``pyglet.app.run()`` and kills the app the moment a file
is dragged over the window (upstream report: pyglet#1010, "Something in _event_drag_enter is
causing a ValueError", open). The replacement reads the three inline atoms directly and hands
the XdndTypeList case (bit 0 set), which works, to pyglet's own handler.

Applied only to the pyglet versions known to have the bug (the check keeps a future pyglet's
own fix in charge); tests/app/test_window.py drops files with both kinds of source, so a newer
pyglet that still crashes fails there.
"""

from __future__ import annotations

import logging
import sys

import pyglet

log = logging.getLogger("tumble")

AFFECTED = ((2, 0, 0), (2, 1, 19))  # inclusive range of pyglet versions with the inline bug


def _version(text: str) -> tuple[int, ...]:
    parts = []
    for piece in text.split(".")[:3]:
        digits = "".join(ch for ch in piece if ch.isdigit())  # "19rc1" → 19
        parts.append(int(digits) if digits else 0)
    return tuple(parts)


def needed(version: str = pyglet.version, platform: str = sys.platform) -> bool:
    """Whether this pyglet on this platform has the inline-types XdndEnter bug."""
    return platform.startswith("linux") and AFFECTED[0] <= _version(version) <= AFFECTED[1]


def apply() -> bool:
    """Patch ``XlibWindow._event_drag_enter`` once; returns whether the patch is in place."""
    if not needed():
        return False
    from pyglet.window.xlib import XDND_VERSION, XlibWindow

    original = XlibWindow._event_drag_enter
    if getattr(original, "tumble_fix", False):
        return True

    def _event_drag_enter(self, ev) -> None:
        data = ev.xclient.data.l
        if data[1] & 1:  # more than 3 types: pyglet reads the XdndTypeList property correctly
            return original(self, ev)
        self._xdnd_source = data[0]
        self._xdnd_version = data[1] >> 24
        self._xdnd_format = None
        if self._xdnd_version > XDND_VERSION:  # as pyglet: ignore newer protocol versions
            return None
        uri_list = self._xdnd_atoms["text/uri-list"]
        if uri_list in (data[2], data[3], data[4]):  # the inline types (0 = none)
            self._xdnd_format = uri_list
        return None

    _event_drag_enter.tumble_fix = True
    XlibWindow._event_drag_enter = _event_drag_enter
    log.debug("pyglet %s: XdndEnter with inline types patched (pyglet#1010)", pyglet.version)
    return True


apply()
