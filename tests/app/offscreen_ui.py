"""ImGui drawn off screen (app/render/imgui_gl.py on a headless EGL context): the fixtures the
panel tests share as ctx, ui and fbo. Each test module sets its framebuffer size as module
constants W, H (px)."""

import moderngl
import pytest

from app.render.imgui_gl import ImGuiRenderer


@pytest.fixture(scope="module", name="ctx")
def offscreen_ctx():
    ctx = moderngl.create_standalone_context(backend="egl", require=330)
    yield ctx
    ctx.release()


@pytest.fixture(name="ui")
def offscreen_ui(ctx, request):
    ui = ImGuiRenderer(ctx)
    ui.on_resize(request.module.W, request.module.H)
    yield ui
    ui.shutdown()


@pytest.fixture(name="fbo")
def offscreen_fbo(ctx, request):
    size = (request.module.W, request.module.H)
    fbo = ctx.framebuffer(color_attachments=[ctx.renderbuffer(size, 4)])
    yield fbo
    fbo.release()
