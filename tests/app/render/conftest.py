"""What the renderer tests share: one headless GL context per test module."""

import moderngl
import pytest

from app.render.renderer import OffscreenTarget, Renderer


@pytest.fixture(scope="module")
def gl_context(request):
    """(ctx, renderer, offscreen target of the test module's SIZE), headless (EGL)."""
    ctx = moderngl.create_standalone_context(backend="egl", require=330)
    renderer = Renderer(ctx)
    target = OffscreenTarget(ctx, request.module.SIZE)
    yield ctx, renderer, target
    target.release()
    renderer.release()
    ctx.release()
