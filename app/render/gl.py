"""OpenGL entry points called through ctypes, for what moderngl does only with the GIL held
(waiting in glFinish, copying framebuffers, drawing the bodies) or not at all (clearing the
depth alone). GLVND's libOpenGL dispatches to whatever context is current: pyglet's window or
an EGL one."""

from __future__ import annotations

import ctypes
import ctypes.util
import functools

GL_DEPTH_BUFFER_BIT, GL_COLOR_BUFFER_BIT = 0x0100, 0x4000
GL_READ_FRAMEBUFFER, GL_DRAW_FRAMEBUFFER = 0x8CA8, 0x8CA9
GL_NEAREST, GL_LINEAR = 0x2600, 0x2601
GL_TRIANGLES, GL_UNSIGNED_INT = 0x0004, 0x1405


@functools.cache
def gl_library() -> ctypes.CDLL:
    """libOpenGL (ctypes releases the GIL during each call)."""
    return ctypes.CDLL(ctypes.util.find_library("OpenGL") or "libOpenGL.so.0")


def draw_indexed_triangles(vao, instances: int) -> None:
    """What ``vao.render(moderngl.TRIANGLES, instances=instances)`` does for a vertex array
    with a 32-bit index buffer (use its program, bind it, draw all its indices), through
    ctypes, which releases the GIL: llvmpipe runs the vertex shader and bins the triangles on
    the calling thread, after waiting for the shadow map it samples to be drawn — ~5 ms of a
    1280×720 frame of the default scene in which moderngl's call kept every other thread
    (the window's, a clip's) out of Python."""
    gl = gl_library()
    gl.glUseProgram(vao.program.glo)
    gl.glBindVertexArray(vao.glo)
    gl.glDrawElementsInstanced(GL_TRIANGLES, vao.vertices, GL_UNSIGNED_INT, None, int(instances))
