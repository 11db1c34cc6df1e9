"""Dear ImGui (1.92, imgui-bundle) drawn with moderngl, fed by pyglet input events.

One ``ImGuiRenderer`` owns an ImGui context and an ImPlot context. Per frame::

    ui.new_frame(size=(w, h), dt=dt)   # imgui.new_frame() with this window size and frame time
    ...imgui / implot calls (app.panel.Panel.draw)...
    ui.render(fbo)                     # imgui.render() + draw the draw data over the 3D scene

Input: call the ``on_*`` methods with pyglet's event arguments (or ``window.push_handlers(ui)``
after the window's own handlers — pyglet stores bound methods weakly, so keep ``ui`` alive).
They only queue events into ImGui's io and return None, so the event also reaches the next
handler; ``wants_mouse`` / ``wants_keyboard`` say whether the 3D view should ignore it.
Mouse y is flipped with the window height of ``on_resize`` or the last ``new_frame``. ImGui
trickles events: a press and a move queued in one frame are seen over two frames, so quick
clicks are not lost at a low frame rate.

Drawing follows the moderngl recipe proven on this machine (shared/recipes/imgui_moderngl.py):
the 1.92 texture protocol (``BackendFlags_.renderer_has_textures``: ImGui asks the backend to
create/update/destroy textures, e.g. the dynamic font atlas, through ``platform_io.textures``),
one indexed draw per command with its scissor rectangle. imgui-bundle uses 32-bit indices, so
``vtx_offset`` is always 0 and no base-vertex draw is needed (moderngl has none).
Frame time comes from the caller: imgui-bundle's own pyglet backend sets a wrong delta time
(shared/recipes/03c_bundled_backend_dt_bug.py), which is why this module exists.
"""

from __future__ import annotations

import ctypes
from pathlib import Path
from typing import Callable

import imgui_bundle
import moderngl
import numpy as np
from imgui_bundle import imgui, implot

FONT_SIZE = 16.0  # px, Roboto (bundled with imgui-bundle); ImGui's default is 13 px ProggyClean
FONT_FILE = Path(imgui_bundle.__file__).parent / "assets/fonts/Roboto/Roboto-Regular.ttf"
# Merged behind Roboto for the glyphs it lacks (Chinese, Japanese and Korean file names): the
# first of these that exists. Debian's fonts-droid-fallback (installed by .ci/setup.sh) is the
# smallest with all three; without any, such characters show as ImGui's fallback glyph.
FALLBACK_FONT_FILES = (
    Path("/usr/share/fonts/truetype/droid/DroidSansFallbackFull.ttf"),
    Path("/usr/share/fonts/truetype/wqy/wqy-microhei.ttc"),
    Path("/usr/share/fonts/opentype/noto/NotoSansCJK-Regular.ttc"),
)

_VERTEX_SHADER = """
#version 330
uniform mat4 projection;
in vec2 in_pos;
in vec2 in_uv;
in vec4 in_color;
out vec2 uv;
out vec4 color;
void main() {
    uv = in_uv;
    color = in_color;
    gl_Position = projection * vec4(in_pos, 0.0, 1.0);
}
"""
_FRAGMENT_SHADER = """
#version 330
uniform sampler2D tex;
in vec2 uv;
in vec4 color;
out vec4 frag_color;
void main() { frag_color = color * texture(tex, uv); }
"""


class ImGuiRenderer:
    """ImGui + ImPlot contexts, their moderngl drawing and pyglet input translation.

    ctx: the moderngl context to draw with (pyglet's, or a standalone EGL one in tests).
    Logical pixels = framebuffer pixels (no HiDPI scaling).
    """

    def __init__(self, ctx: moderngl.Context):
        self.ctx = ctx
        self.context = imgui.create_context()
        self.plot_context = implot.create_context()
        self._use_contexts()
        io = imgui.get_io()
        io.set_ini_filename("")  # no imgui.ini in the user's working folder
        io.backend_flags |= imgui.BackendFlags_.renderer_has_textures
        pio = imgui.get_platform_io()
        pio.renderer_texture_max_width = pio.renderer_texture_max_height = int(
            ctx.info["GL_MAX_TEXTURE_SIZE"])
        if imgui.VERTEX_SIZE != 20 or imgui.INDEX_SIZE != 4:  # layout assumed by the VAO below
            raise RuntimeError(f"unexpected ImGui vertex/index size {imgui.VERTEX_SIZE}/"
                               f"{imgui.INDEX_SIZE}; expected 20/4 (imgui-bundle ≥ 1.92)")
        _apply_style()
        self._height = 0.0  # window height, logical px: pyglet's y is up, ImGui's is down
        self._textures: dict[int, moderngl.Texture] = {}
        self._program = ctx.program(vertex_shader=_VERTEX_SHADER, fragment_shader=_FRAGMENT_SHADER)
        self._program["tex"].value = 0
        self._vbo = ctx.buffer(reserve=1 << 16, dynamic=True)
        self._ibo = ctx.buffer(reserve=1 << 16, dynamic=True)
        # ImDrawVert: pos 2×f32, uv 2×f32, colour 4×u8 (normalised) = 20 bytes
        self._vao = ctx.vertex_array(
            self._program, [(self._vbo, "2f 2f 4f1", "in_pos", "in_uv", "in_color")],
            index_buffer=self._ibo, index_element_size=4)

    # ---- frame ---------------------------------------------------------------------------
    def new_frame(self, size: tuple[int, int], dt: float) -> None:
        """Start an ImGui frame for a window of ``size`` (w, h) logical px after ``dt`` s."""
        self._use_contexts()
        io = imgui.get_io()
        self._height = float(size[1])
        io.display_size = (float(size[0]), float(size[1]))
        io.display_framebuffer_scale = (1.0, 1.0)
        io.delta_time = max(float(dt), 1e-4)  # ImGui asserts delta_time > 0
        imgui.new_frame()

    def render(self, fbo: moderngl.Framebuffer | None = None,
               before_overlay: Callable[[], None] | None = None) -> None:
        """End the frame and draw it over ``fbo`` (default: the window's screen framebuffer).

        ``before_overlay`` is called once the windows are drawn and before the foreground draw
        list (notifications, the REC indicator): a recording of the panel reads the frame there.

        Leaves blending and the scissor test off and restores the viewport; depth test and
        face culling are left disabled (the 3D renderer sets what it needs every frame).
        """
        self._use_contexts()
        overlay = imgui.get_foreground_draw_list()  # only valid inside the frame
        imgui.render()
        draw_data = imgui.get_draw_data()
        for tex in imgui.get_platform_io().textures:
            if tex.status != imgui.ImTextureStatus.ok:
                self._update_texture(tex)
        width, height = draw_data.display_size
        if width <= 0 or height <= 0:
            return
        ctx = self.ctx
        target = fbo if fbo is not None else ctx.screen
        target.use()
        viewport = ctx.viewport
        ctx.viewport = (0, 0, int(width), int(height))
        ctx.disable(moderngl.DEPTH_TEST | moderngl.CULL_FACE)
        ctx.enable(moderngl.BLEND)
        # premultiplied-friendly: colour blends by alpha, destination alpha accumulates coverage
        ctx.blend_func = (moderngl.SRC_ALPHA, moderngl.ONE_MINUS_SRC_ALPHA,
                          moderngl.ONE, moderngl.ONE_MINUS_SRC_ALPHA)
        left, top = draw_data.display_pos
        self._program["projection"].write(_ortho(left, top, width, height).tobytes())
        try:
            for cmd_list in draw_data.cmd_lists:
                if cmd_list is overlay and before_overlay is not None:
                    before_overlay()
                    before_overlay = None
                    target.use()
                self._upload(cmd_list)
                for cmd in cmd_list.cmd_buffer:
                    x1, y1, x2, y2 = cmd.clip_rect
                    x1, x2 = max(x1 - left, 0.0), min(x2 - left, width)
                    y1, y2 = max(y1 - top, 0.0), min(y2 - top, height)
                    if x2 <= x1 or y2 <= y1:
                        continue
                    # GL's scissor origin is bottom-left
                    ctx.scissor = (int(x1), int(height - y2), int(x2 - x1), int(y2 - y1))
                    texture = self._textures.get(cmd.tex_ref.get_tex_id())
                    if texture is not None:
                        texture.use(0)
                    self._vao.render(moderngl.TRIANGLES, vertices=cmd.elem_count,
                                     first=cmd.idx_offset)
        finally:
            ctx.scissor = None
            ctx.disable(moderngl.BLEND)
            ctx.viewport = viewport
        if before_overlay is not None:  # no overlay this frame
            before_overlay()

    @property
    def wants_mouse(self) -> bool:
        """ImGui uses the mouse (pointer over a window, or dragging a widget): keep it from the
        3D view."""
        self._use_contexts()
        return bool(imgui.get_io().want_capture_mouse)

    @property
    def holds_an_item(self) -> bool:
        """A widget is being used (a slider dragged, a text field being typed in): it keeps the
        pointer wherever it goes."""
        self._use_contexts()
        return bool(imgui.is_any_item_active())

    @property
    def wants_keyboard(self) -> bool:
        """ImGui uses the keyboard (a text field or widget is active): no 3D shortcuts."""
        self._use_contexts()
        return bool(imgui.get_io().want_capture_keyboard)

    def shutdown(self) -> None:
        """Release GL objects and destroy the ImPlot and ImGui contexts. Safe to repeat."""
        for texture in self._textures.values():
            texture.release()
        self._textures.clear()
        for obj in (self._vao, self._vbo, self._ibo, self._program):
            obj.release()
        if self.context is not None:
            self._use_contexts()
            implot.destroy_context(self.plot_context)
            imgui.destroy_context(self.context)
            self.context = self.plot_context = None

    # ---- pyglet input (pyglet's argument order; y measured up from the bottom) -------------
    def on_mouse_motion(self, x, y, dx=0, dy=0):
        self._io().add_mouse_pos_event(float(x), self._height - float(y))

    def on_mouse_drag(self, x, y, dx, dy, buttons, modifiers):
        self.on_mouse_motion(x, y)

    def on_mouse_press(self, x, y, button, modifiers=0):
        self._mouse_button(x, y, button, True)

    def on_mouse_release(self, x, y, button, modifiers=0):
        self._mouse_button(x, y, button, False)

    def on_mouse_scroll(self, x, y, scroll_x, scroll_y):
        self.on_mouse_motion(x, y)
        self._io().add_mouse_wheel_event(float(scroll_x), float(scroll_y))

    def on_resize(self, width, height):
        self._height = float(height)

    def on_mouse_leave(self, x, y):
        self._io().add_mouse_pos_event(-imgui.FLT_MAX, -imgui.FLT_MAX)

    def on_text(self, text):
        io = self._io()
        for char in text:
            io.add_input_character(ord(char))

    def on_key_press(self, symbol, modifiers):
        self._key(symbol, modifiers, True)

    def on_key_release(self, symbol, modifiers):
        self._key(symbol, modifiers, False)

    def on_activate(self):
        self._io().add_focus_event(True)

    def on_deactivate(self):
        # losing focus: ImGui releases held keys and buttons (no stuck Ctrl after Alt+Tab)
        self._io().add_focus_event(False)

    # ---- internals -----------------------------------------------------------------------
    def _use_contexts(self) -> None:
        # several renderers may exist (tests); ImGui and ImPlot use a "current" global context
        imgui.set_current_context(self.context)
        implot.set_current_context(self.plot_context)

    def _io(self) -> imgui.IO:
        self._use_contexts()
        return imgui.get_io()

    def _mouse_button(self, x, y, button, down: bool) -> None:
        self.on_mouse_motion(x, y)
        index = _mouse_buttons().get(button)
        if index is not None:
            self._io().add_mouse_button_event(index, down)

    def _key(self, symbol: int, modifiers: int, down: bool) -> None:
        from pyglet.window import key

        io = self._io()
        # modifier state first, as ImGui's own backends do: shortcuts read it with the key
        io.add_key_event(imgui.Key.mod_ctrl, bool(modifiers & key.MOD_CTRL))
        io.add_key_event(imgui.Key.mod_shift, bool(modifiers & key.MOD_SHIFT))
        io.add_key_event(imgui.Key.mod_alt, bool(modifiers & key.MOD_ALT))
        io.add_key_event(imgui.Key.mod_super, bool(modifiers & (key.MOD_WINDOWS | key.MOD_COMMAND)))
        imgui_key = _key_map().get(symbol)
        if imgui_key is not None:
            io.add_key_event(imgui_key, down)

    def _upload(self, cmd_list) -> None:
        """Copy one command list's vertices and indices into the GL buffers (zero-copy views)."""
        vertex_bytes = cmd_list.vtx_buffer.size() * imgui.VERTEX_SIZE
        index_bytes = cmd_list.idx_buffer.size() * imgui.INDEX_SIZE
        if vertex_bytes > self._vbo.size:
            self._vbo.orphan(vertex_bytes * 2)
        if index_bytes > self._ibo.size:
            self._ibo.orphan(index_bytes * 2)
        self._vbo.write(_view(cmd_list.vtx_buffer.data_address(), vertex_bytes))
        self._ibo.write(_view(cmd_list.idx_buffer.data_address(), index_bytes))

    def _update_texture(self, tex) -> None:
        """ImGui 1.92 texture protocol: create, update (sub-rectangles) or destroy one texture."""
        status = imgui.ImTextureStatus
        if tex.status == status.want_create:
            if tex.format != imgui.ImTextureFormat.rgba32:
                raise RuntimeError(f"ImGui asked for texture format {tex.format}; only RGBA32 "
                                   "is supported (io.fonts.tex_desired_format)")
            texture = self.ctx.texture((tex.width, tex.height), 4,
                                       tex.get_pixels_array().tobytes())
            texture.filter = (moderngl.LINEAR, moderngl.LINEAR)
            texture.repeat_x = texture.repeat_y = False
            self._textures[texture.glo] = texture
            tex.set_tex_id(texture.glo)
            tex.status = status.ok
        elif tex.status == status.want_updates:
            texture = self._textures[tex.tex_id]
            pixels = tex.get_pixels_array().reshape(tex.height, tex.width, 4)
            for r in tex.updates:
                block = np.ascontiguousarray(pixels[r.y:r.y + r.h, r.x:r.x + r.w])
                texture.write(block.tobytes(), viewport=(r.x, r.y, r.w, r.h))
            tex.status = status.ok
        elif tex.status == status.want_destroy:
            texture = self._textures.pop(tex.tex_id, None)
            if texture is not None:
                texture.release()
            tex.set_tex_id(0)
            tex.status = status.destroyed


def _view(address: int, size: int) -> np.ndarray:
    """The bytes of a C++ vector as a numpy array, without copying."""
    return np.ctypeslib.as_array((ctypes.c_ubyte * size).from_address(address))


def _ortho(left: float, top: float, width: float, height: float) -> np.ndarray:
    """Column-major projection from ImGui's pixels (y down) to clip space, as float32 (4, 4)."""
    right, bottom = left + width, top + height
    return np.array([[2.0 / width, 0.0, 0.0, 0.0],
                     [0.0, -2.0 / height, 0.0, 0.0],
                     [0.0, 0.0, -1.0, 0.0],
                     [-(right + left) / width, (top + bottom) / height, 0.0, 1.0]], dtype="f4")


def _apply_style() -> None:
    """Dark theme with rounded corners, a blue accent and the 16 px Roboto font."""
    imgui.style_colors_dark()
    implot.style_colors_dark()
    style = imgui.get_style()
    style.window_rounding = 8.0
    style.child_rounding = style.popup_rounding = 6.0
    style.frame_rounding = 5.0
    style.grab_rounding = style.scrollbar_rounding = style.tab_rounding = 4.0
    style.window_padding = (10.0, 10.0)
    style.frame_padding = (8.0, 4.0)
    style.item_spacing = (8.0, 6.0)
    style.window_border_size = 0.0
    colors = {
        imgui.Col_.window_bg: (0.10, 0.11, 0.14, 0.94),
        imgui.Col_.header: (0.20, 0.35, 0.55, 0.55),
        imgui.Col_.header_hovered: (0.26, 0.45, 0.70, 0.80),
        imgui.Col_.header_active: (0.30, 0.52, 0.80, 1.00),
        imgui.Col_.frame_bg: (0.17, 0.19, 0.24, 1.00),
        imgui.Col_.frame_bg_hovered: (0.22, 0.26, 0.33, 1.00),
        imgui.Col_.frame_bg_active: (0.26, 0.31, 0.40, 1.00),
        imgui.Col_.title_bg: (0.08, 0.09, 0.12, 1.00),
        imgui.Col_.title_bg_active: (0.12, 0.20, 0.32, 1.00),
        imgui.Col_.button: (0.20, 0.35, 0.55, 0.70),
        imgui.Col_.button_hovered: (0.26, 0.45, 0.70, 1.00),
        imgui.Col_.slider_grab: (0.40, 0.62, 0.92, 1.00),
        imgui.Col_.check_mark: (0.45, 0.70, 1.00, 1.00),
    }
    for col, rgba in colors.items():
        style.set_color_(col, imgui.ImVec4(*rgba))
    io = imgui.get_io()
    if FONT_FILE.is_file():
        io.fonts.add_font_from_file_ttf(str(FONT_FILE), FONT_SIZE)
    else:  # an imgui-bundle without its fonts: the default font, scaled up
        io.fonts.add_font_default()
        style.font_scale_main = FONT_SIZE / 13.0
    fallback = next((path for path in FALLBACK_FONT_FILES if path.is_file()), None)
    if fallback is not None:
        merge = imgui.ImFontConfig()
        merge.merge_mode = True  # glyphs ImGui rasterises on first use (1.92's dynamic fonts)
        io.fonts.add_font_from_file_ttf(str(fallback), FONT_SIZE, merge)
    style.font_size_base = FONT_SIZE


_KEYS: dict[int, int] = {}
_BUTTONS: dict[int, int] = {}


def _mouse_buttons() -> dict[int, int]:
    """pyglet mouse button → ImGui button index (0 left, 1 right, 2 middle)."""
    if not _BUTTONS:
        from pyglet.window import mouse  # imported late: pyglet.window needs a display

        _BUTTONS.update({mouse.LEFT: 0, mouse.RIGHT: 1, mouse.MIDDLE: 2})
    return _BUTTONS


def _key_map() -> dict[int, int]:
    """pyglet key symbol → imgui.Key (letters, digits, F-keys, navigation, editing, modifiers)."""
    if not _KEYS:
        from pyglet.window import key  # imported late: pyglet.window needs a display

        k = imgui.Key
        _KEYS.update({
            key.TAB: k.tab, key.LEFT: k.left_arrow, key.RIGHT: k.right_arrow, key.UP: k.up_arrow,
            key.DOWN: k.down_arrow, key.PAGEUP: k.page_up, key.PAGEDOWN: k.page_down,
            key.HOME: k.home, key.END: k.end, key.INSERT: k.insert, key.DELETE: k.delete,
            key.BACKSPACE: k.backspace, key.SPACE: k.space, key.RETURN: k.enter,
            key.ESCAPE: k.escape, key.NUM_ENTER: k.keypad_enter, key.MENU: k.menu,
            key.LCTRL: k.left_ctrl, key.RCTRL: k.right_ctrl, key.LSHIFT: k.left_shift,
            key.RSHIFT: k.right_shift, key.LALT: k.left_alt, key.RALT: k.right_alt,
            key.LWINDOWS: k.left_super, key.RWINDOWS: k.right_super,
            key.APOSTROPHE: k.apostrophe, key.COMMA: k.comma, key.MINUS: k.minus,
            key.PERIOD: k.period, key.SLASH: k.slash, key.SEMICOLON: k.semicolon,
            key.EQUAL: k.equal, key.BRACKETLEFT: k.left_bracket, key.BACKSLASH: k.backslash,
            key.BRACKETRIGHT: k.right_bracket, key.GRAVE: k.grave_accent,
            key.NUM_DECIMAL: k.keypad_decimal, key.NUM_DIVIDE: k.keypad_divide,
            key.NUM_MULTIPLY: k.keypad_multiply, key.NUM_SUBTRACT: k.keypad_subtract,
            key.NUM_ADD: k.keypad_add,
        })
        for letter in "ABCDEFGHIJKLMNOPQRSTUVWXYZ":
            _KEYS[getattr(key, letter)] = getattr(k, letter.lower())
        for digit in range(10):
            _KEYS[getattr(key, f"_{digit}")] = getattr(k, f"_{digit}")
            _KEYS[getattr(key, f"NUM_{digit}")] = getattr(k, f"keypad{digit}")
        for n in range(1, 13):
            _KEYS[getattr(key, f"F{n}")] = getattr(k, f"f{n}")
    return _KEYS
