"""OpenGL entry points called through ctypes, for what moderngl does only with the GIL held
(waiting in glFinish, copying framebuffers) or not at all (clearing the depth alone). GLVND's
libOpenGL dispatches to whatever context is current: pyglet's window or an EGL one."""

from __future__ import annotations

import ctypes
import ctypes.util
import functools

GL_DEPTH_BUFFER_BIT, GL_COLOR_BUFFER_BIT = 0x0100, 0x4000
GL_READ_FRAMEBUFFER, GL_DRAW_FRAMEBUFFER = 0x8CA8, 0x8CA9
GL_NEAREST = 0x2600


@functools.cache
def gl_library() -> ctypes.CDLL:
    """libOpenGL (ctypes releases the GIL during each call)."""
    return ctypes.CDLL(ctypes.util.find_library("OpenGL") or "libOpenGL.so.0")
