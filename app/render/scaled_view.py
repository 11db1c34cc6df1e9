"""The window's 3D view drawn into an offscreen image (of the window's size, or a fraction of
it) and copied (or stretched) onto the screen, for the frames drawn while a clip renders
(app/frame_pace.py's CLIP_VIEW_SCALE, docs/architecture.md, clips). The panel is drawn over
it on the screen at full size.

The offscreen image has a depth buffer of the background cache's format, so a cached floor and
sky come in by one copy with their depth, where on the screen the floor's depth is drawn again
(app/render/renderer.py): at the window's size that saves more than the copy onto the screen
costs. On llvmpipe, writing the screen costs about the same whatever the source (~4 ms of CPU
at 1280×720: its format is not the image's), and stretching with linear filtering about twice
that.
"""

from __future__ import annotations

import moderngl

from app.render.camera import OrbitCamera
from app.render.gl import (
    GL_COLOR_BUFFER_BIT,
    GL_DRAW_FRAMEBUFFER,
    GL_LINEAR,
    GL_NEAREST,
    GL_READ_FRAMEBUFFER,
    gl_library,
)
from app.render.renderer import OffscreenTarget, Renderer
from app.render.view import FrameView, GizmoOptions


def scaled_size(size: tuple[int, int], scale: float) -> tuple[int, int]:
    """(width, height) px of the offscreen image for a window of ``size`` at ``scale`` (at
    least 1 px each way)."""
    return max(1, round(size[0] * scale)), max(1, round(size[1] * scale))


class ScaledView:
    """Draws the 3D view through an offscreen image ``scale`` times the screen's size (kept
    between frames, made again when that size changes) and stretches it onto the screen with
    linear filtering; the screen is left bound with the whole of it as viewport."""

    def __init__(self, ctx: moderngl.Context):
        self.ctx = ctx
        self._target: OffscreenTarget | None = None

    @property
    def size(self) -> tuple[int, int] | None:
        """The offscreen image's size, or None before the first frame (and after release)."""
        return None if self._target is None else self._target.size

    def render(self, renderer: Renderer, view: FrameView, camera: OrbitCamera,
               size: tuple[int, int], scale: float, gizmos: GizmoOptions | None = None,
               screen: moderngl.Framebuffer | None = None) -> None:
        """``renderer.render`` of ``view`` into the offscreen image for a screen of ``size``
        px, then that image onto ``screen`` (default: the window's)."""
        screen = screen if screen is not None else self.ctx.screen
        small = scaled_size(size, scale)
        if self._target is None or self._target.size != small:
            self.release()
            self._target = OffscreenTarget(self.ctx, small)
        renderer.render(view, camera, size=small, gizmos=gizmos, fbo=self._target.fbo)
        gl = gl_library()
        gl.glBindFramebuffer(GL_READ_FRAMEBUFFER, self._target.fbo.glo)
        gl.glBindFramebuffer(GL_DRAW_FRAMEBUFFER, screen.glo)
        gl.glBlitFramebuffer(0, 0, *small, 0, 0, *size, GL_COLOR_BUFFER_BIT,
                             GL_NEAREST if small == tuple(size) else GL_LINEAR)
        screen.use()  # moderngl's own binding, which the calls above went around
        self.ctx.viewport = (0, 0, *size)

    def release(self) -> None:
        if self._target is not None:
            self._target.release()
            self._target = None
