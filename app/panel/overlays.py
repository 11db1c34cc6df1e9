"""What the panel draws over the 3D view: the REC badge, notification toasts, the help window."""

from __future__ import annotations

from typing import TYPE_CHECKING

from imgui_bundle import imgui

from app.keys import KEY_BINDINGS, MOUSE_ACTIONS
from app.panel.widgets import AMBER, DIM

if TYPE_CHECKING:
    from app.panel import Panel

PANEL_WIDTH = 380.0      # px, the panel docked at the right edge of the window
TIMELINE_HEIGHT = 40.0   # px, the timeline along the bottom of the 3D view (timeline.py)
_TOAST_COLOURS = {40: (0.55, 0.13, 0.13), 30: (0.50, 0.36, 0.08)}  # logging level → rgb
_TOAST_INFO = (0.16, 0.20, 0.28)



def rec_indicator(panel: Panel) -> None:
    """A red "● REC mm:ss" badge at the top left of the 3D view while recording (drawn in
    the foreground list, which a recording does not capture)."""
    seconds = panel.state.recording.seconds
    if seconds is None:
        return
    text = f"REC {int(seconds) // 60:02d}:{int(seconds) % 60:02d}"
    draw_list = imgui.get_foreground_draw_list()
    size = imgui.calc_text_size(text)
    x0, y0, pad, radius = 14.0, 14.0, 8.0, 6.0
    x1, y1 = x0 + 3 * pad + 2 * radius + size.x, y0 + 2 * pad + size.y
    draw_list.add_rect_filled((x0, y0), (x1, y1),
                              imgui.get_color_u32(imgui.ImVec4(0.0, 0.0, 0.0, 0.6)), 6.0)
    red = imgui.get_color_u32(imgui.ImVec4(0.95, 0.15, 0.12, 1.0))
    draw_list.add_circle_filled((x0 + pad + radius, (y0 + y1) / 2), radius, red)
    draw_list.add_text((x0 + 2 * pad + 2 * radius, y0 + pad), red, text)


def toasts(panel: Panel) -> None:
    """Notifications as rounded cards at the bottom right of the 3D view, newest lowest,
    fading out (Notifications.visible gives the opacity)."""
    visible = panel.state.notifications.visible()
    if not visible:
        return
    width, height = imgui.get_io().display_size
    right = width - (PANEL_WIDTH if panel.state.show_panel else 0.0) - 16.0
    wrap, pad = min(440.0, max(120.0, right - 40.0)), 10.0
    font, size = imgui.get_font(), imgui.get_font_size()
    draw_list = imgui.get_foreground_draw_list()
    y = height - 16.0 - TIMELINE_HEIGHT
    for note, opacity in reversed(visible):
        text_size = imgui.calc_text_size(note.text, False, wrap)
        x0, y0 = right - text_size.x - 2 * pad, y - text_size.y - 2 * pad
        rgb = _TOAST_COLOURS.get(note.level, _TOAST_INFO) if note.level >= 30 else _TOAST_INFO
        draw_list.add_rect_filled((x0, y0), (right, y),
                                  imgui.get_color_u32(imgui.ImVec4(*rgb, 0.92 * opacity)), 6.0)
        draw_list.add_text(font, size, (x0 + pad, y0 + pad),
                           imgui.get_color_u32(imgui.ImVec4(1.0, 1.0, 1.0, opacity)),
                           note.text, wrap)
        y = y0 - 8.0
        if y < 40.0:
            break


def help_window(panel: Panel) -> None:
    width, height = imgui.get_io().display_size
    view = width - (PANEL_WIDTH if panel.state.show_panel else 0.0)
    imgui.set_next_window_pos((view / 2, height / 2), imgui.Cond_.always, (0.5, 0.5))
    imgui.set_next_window_bg_alpha(0.92)
    flags = (imgui.WindowFlags_.always_auto_resize | imgui.WindowFlags_.no_saved_settings
             | imgui.WindowFlags_.no_collapse | imgui.WindowFlags_.no_move)
    expanded, still_open = imgui.begin("Help — keys and mouse (F1 closes)", True, flags)
    if expanded:
        for title, items in (("Keys", [(b.label, b.description) for b in KEY_BINDINGS]),
                                 ("Mouse", MOUSE_ACTIONS)):
            imgui.separator_text(title)
            if imgui.begin_table(title, 2, imgui.TableFlags_.row_bg):
                imgui.table_setup_column("input", imgui.TableColumnFlags_.width_fixed, 250)
                imgui.table_setup_column("action", imgui.TableColumnFlags_.width_fixed, 330)
                for what, action in items:
                    imgui.table_next_row()
                    imgui.table_next_column()
                    imgui.text_colored(AMBER, what)
                    imgui.table_next_column()
                    imgui.text(action)
                imgui.end_table()
        imgui.text_colored(DIM, "ImGui gets the mouse over the panel; the view gets the rest.")
    imgui.end()
    if not still_open:
        panel.state.show_help = False
