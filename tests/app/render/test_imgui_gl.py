"""ImGuiRenderer, headless (EGL, no X): real pixels of a drawn window and pyglet events → ImGui."""

import sys

import numpy as np
import pyglet
import pytest
from imgui_bundle import imgui

from app.render.imgui_gl import FALLBACK_FONT_FILES, ImGuiRenderer
from tests.app.offscreen_ui import offscreen_ctx, offscreen_fbo, offscreen_ui  # noqa: F401

if "pyglet.window" not in sys.modules:
    # pyglet.window opens a hidden "shadow" window on import, which needs an X display; the key
    # and mouse constants do not. Import them without it (a real window later works anyway).
    _shadow = pyglet.options["shadow_window"]
    pyglet.options["shadow_window"] = False
    from pyglet.window import key, mouse  # noqa: E402
    pyglet.options["shadow_window"] = _shadow
else:
    from pyglet.window import key, mouse

W, H = 480, 360
CLEAR = (0.2, 0.6, 0.3)  # a green nothing in the dark theme uses


def read_rgb(fbo) -> np.ndarray:
    """(H, W, 3) uint8, row 0 at the TOP (ImGui's y)."""
    return np.frombuffer(fbo.read(components=3), np.uint8).reshape(H, W, 3)[::-1]


class Frame:
    """One ImGui frame with a window at (40, 30) of 260×200 holding a button and a text field;
    records the items' rectangles, what they returned and the wheel."""

    def __init__(self, ui, fbo, text=""):
        ui.new_frame((W, H), 1 / 60)
        self.wheel = imgui.get_io().mouse_wheel  # cleared again when the frame ends
        imgui.set_next_window_pos((40, 30))
        imgui.set_next_window_size((260, 200))
        imgui.begin("Test window")
        self.clicked = imgui.button("Press me", (120, 40))
        self.button = (imgui.get_item_rect_min(), imgui.get_item_rect_max())
        self.text_changed, self.text = imgui.input_text("name", text)
        self.field = (imgui.get_item_rect_min(), imgui.get_item_rect_max())
        imgui.end()
        fbo.use()
        fbo.clear(*CLEAR, 1.0)
        ui.render(fbo)


def settle(ui, fbo, text="", frames=3) -> Frame:
    """A few frames: ImGui trickles queued events (a press and a move) over several frames."""
    for _ in range(frames):
        frame = Frame(ui, fbo, text)
        text = frame.text
    return frame


def centre(rect):
    (x0, y0), (x1, y1) = rect
    return (x0 + x1) / 2, (y0 + y1) / 2


def pyglet_y(y):
    return H - y


def test_window_and_button_pixels(ui, fbo):
    Frame(ui, fbo)  # first frame builds the font atlas (texture protocol)
    frame = Frame(ui, fbo)
    img = read_rgb(fbo).astype(int)
    clear = np.round(np.array(CLEAR) * 255).astype(int)
    # outside the window: untouched clear colour
    assert np.abs(img[300:, 350:] - clear).max() <= 1
    assert np.abs(img[5:25, 5:35] - clear).max() <= 1
    # inside the window body (below the button, left of the widgets' labels): the dark theme's
    # window background blended over the clear colour, not the clear colour
    body = img[190:220, 50:100]
    assert np.all(body.sum(axis=-1) < clear.sum() - 60)
    assert np.ptp(body.reshape(-1, 3), axis=0).max() <= 2  # flat fill
    # the button: its own colour (blue accent), different from the window background
    (bx0, by0), (bx1, by1) = frame.button
    button = img[int(by0) + 4:int(by1) - 4, int(bx0) + 4:int(bx0) + 16].reshape(-1, 3)
    assert np.median(button[:, 2]) > np.median(button[:, 0]) + 20  # bluish
    assert np.abs(np.median(button, axis=0) - np.median(body.reshape(-1, 3), axis=0)).max() > 15
    # the label text is drawn inside the button: some bright pixels near its centre
    cx, cy = centre(frame.button)
    label = img[int(cy) - 6:int(cy) + 6, int(cx) - 30:int(cx) + 30]
    assert label.max() > 200
    # the font atlas texture was created through the 1.92 texture protocol
    assert ui._textures and all(t.width > 0 for t in ui._textures.values())


def test_mouse_position_is_flipped_and_click_reaches_button(ui, fbo):
    frame = Frame(ui, fbo)
    cx, cy = centre(frame.button)
    ui.on_mouse_motion(cx, pyglet_y(cy), 0, 0)
    settle(ui, fbo)
    assert tuple(imgui.get_io().mouse_pos) == pytest.approx((cx, cy))
    assert ui.wants_mouse  # over the window
    ui.on_mouse_press(cx, pyglet_y(cy), mouse.LEFT, 0)
    Frame(ui, fbo)
    assert imgui.get_io().mouse_down[0]
    ui.on_mouse_release(cx, pyglet_y(cy), mouse.LEFT, 0)
    assert Frame(ui, fbo).clicked
    # away from the window the 3D view gets the mouse
    ui.on_mouse_motion(420, pyglet_y(330), 0, 0)
    settle(ui, fbo)
    assert not ui.wants_mouse
    # right and middle buttons map to ImGui's 1 and 2; drag moves the pointer
    ui.on_mouse_press(420, pyglet_y(330), mouse.MIDDLE, 0)
    ui.on_mouse_drag(400, pyglet_y(300), -20, 30, mouse.MIDDLE, 0)
    settle(ui, fbo)
    io = imgui.get_io()
    assert io.mouse_down[2] and not io.mouse_down[1]
    assert tuple(io.mouse_pos) == pytest.approx((400, 300))


def test_wheel_and_leave(ui, fbo):
    ui.on_mouse_scroll(100, pyglet_y(100), 0, -2)
    Frame(ui, fbo)  # the move to (100, 100)
    assert Frame(ui, fbo).wheel == pytest.approx(-2)
    assert tuple(imgui.get_io().mouse_pos) == pytest.approx((100, 100))
    ui.on_mouse_leave(0, 0)
    settle(ui, fbo)
    assert imgui.get_io().mouse_pos[0] < -1e30  # "no mouse"


def test_text_input_keys_and_modifiers(ui, fbo):
    frame = Frame(ui, fbo)
    fx, fy = centre(frame.field)
    ui.on_mouse_press(fx, pyglet_y(fy), mouse.LEFT, 0)
    ui.on_mouse_release(fx, pyglet_y(fy), mouse.LEFT, 0)
    frame = settle(ui, fbo)
    assert ui.wants_keyboard  # the text field is active
    ui.on_text("ωx")
    frame = settle(ui, fbo, frame.text)
    assert frame.text == "ωx"
    ui.on_key_press(key.BACKSPACE, 0)
    ui.on_key_release(key.BACKSPACE, 0)
    frame = settle(ui, fbo, frame.text)
    assert frame.text == "ω"
    # modifiers arrive with the key: Ctrl+A selects all, typing then replaces the selection
    ui.on_key_press(key.LCTRL, key.MOD_CTRL)
    ui.on_key_press(key.A, key.MOD_CTRL)
    frame = settle(ui, fbo, frame.text)
    assert imgui.get_io().key_ctrl and imgui.is_key_down(imgui.Key.a)
    ui.on_key_release(key.A, key.MOD_CTRL)
    ui.on_key_release(key.LCTRL, 0)
    frame = settle(ui, fbo, frame.text)
    assert not imgui.get_io().key_ctrl
    ui.on_text("z")
    frame = settle(ui, fbo, frame.text)
    assert frame.text == "z"
    # F-keys and arrows are mapped too
    ui.on_key_press(key.F1, 0)
    ui.on_key_press(key.RIGHT, key.MOD_SHIFT)
    settle(ui, fbo, frame.text)
    assert imgui.is_key_down(imgui.Key.f1) and imgui.is_key_down(imgui.Key.right_arrow)
    assert imgui.get_io().key_shift


def test_focus_loss_releases_held_keys_and_buttons(ui, fbo):
    ui.on_key_press(key.LSHIFT, key.MOD_SHIFT)
    ui.on_mouse_press(420, pyglet_y(330), mouse.LEFT, 0)
    settle(ui, fbo)
    assert imgui.get_io().key_shift and imgui.get_io().mouse_down[0]
    ui.on_deactivate()
    settle(ui, fbo)
    assert not imgui.get_io().key_shift and not imgui.get_io().mouse_down[0]
    ui.on_activate()
    settle(ui, fbo)


def test_two_renderers_keep_their_own_contexts(ctx, fbo):
    a, b = ImGuiRenderer(ctx), ImGuiRenderer(ctx)
    try:
        a.on_resize(W, H)
        b.on_resize(W, H)
        a.on_mouse_motion(10, pyglet_y(20))
        b.on_mouse_motion(50, pyglet_y(60))
        Frame(a, fbo)
        assert tuple(imgui.get_io().mouse_pos) == pytest.approx((10, 20))
        Frame(b, fbo)
        assert tuple(imgui.get_io().mouse_pos) == pytest.approx((50, 60))
    finally:
        a.shutdown()
        b.shutdown()


def text_pixels(ui, fbo, text: str) -> np.ndarray:
    """(h, w) bool: where ``text`` drawn alone in a window differs from the window's background
    (two frames: the first rasterises the glyphs)."""
    for _ in range(2):
        ui.new_frame((W, H), 1 / 60)
        imgui.set_next_window_pos((40, 30))
        imgui.set_next_window_size((260, 200))
        imgui.begin("Text")
        imgui.text(text)
        imgui.end()
        fbo.use()
        fbo.clear(*CLEAR, 1.0)
        ui.render(fbo)
    img = read_rgb(fbo).astype(int)[60:90, 45:200]
    return np.abs(img - img[-1, -1]).max(axis=2) > 60


def test_cjk_file_names_are_drawn_with_their_own_glyphs(ui, fbo):
    """A file name in Chinese or Japanese shows its characters, not ImGui's fallback glyph for
    each: every character draws differently from the others and from the fallback."""
    assert any(path.is_file() for path in FALLBACK_FONT_FILES), \
        "no CJK font: .ci/setup.sh installs fonts-droid-fallback"
    fallback = text_pixels(ui, fbo, "\uffff")  # a code point no font has
    glyphs = [text_pixels(ui, fbo, char) for char in "箱茶碗ティーポット"]
    assert all(g.sum() > 10 for g in glyphs)  # ink (ー is a short line)
    assert all(not np.array_equal(g, fallback) for g in glyphs)
    assert len({g.tobytes() for g in glyphs}) == len(glyphs)


def test_without_a_cjk_font_such_names_fall_back_cleanly(ctx, fbo, monkeypatch, tmp_path):
    """No CJK font on the machine: the panel still starts and draws, each such character as
    ImGui's fallback glyph (ink, no error), and Latin text as before."""
    import app.render.imgui_gl as imgui_gl
    monkeypatch.setattr(imgui_gl, "FALLBACK_FONT_FILES", (tmp_path / "missing.ttf",))
    ui = ImGuiRenderer(ctx)
    try:
        ui.on_resize(W, H)
        fallback = text_pixels(ui, fbo, "\uffff")
        glyphs = [text_pixels(ui, fbo, char) for char in "箱茶"]
        assert fallback.sum() > 10 and all(np.array_equal(g, fallback) for g in glyphs)
        assert text_pixels(ui, fbo, "box").sum() > 10
    finally:
        ui.shutdown()
