"""Small ImGui helpers the sections share: colours, quantity tables, number rows."""

from __future__ import annotations

import math

import numpy as np
from imgui_bundle import imgui

RED = imgui.ImVec4(1.0, 0.42, 0.38, 1.0)
AMBER = imgui.ImVec4(1.0, 0.78, 0.35, 1.0)
GREEN = imgui.ImVec4(0.45, 0.85, 0.55, 1.0)
DIM = imgui.ImVec4(0.62, 0.65, 0.72, 1.0)


def begin_table(name: str) -> bool:
    """A quantity | x | y | z table (text of a scalar row overflows into the empty columns);
    call ``imgui.end_table()`` when it returns True."""
    if not imgui.begin_table(name, 4, imgui.TableFlags_.no_clip):
        return False
    imgui.table_setup_column("quantity", imgui.TableColumnFlags_.width_fixed, 150)
    for axis in "xyz":
        imgui.table_setup_column(axis, imgui.TableColumnFlags_.width_stretch)
    return True


def row_label(text: str, tooltip: str | None = None) -> None:
    imgui.table_next_row()
    imgui.table_next_column()
    imgui.align_text_to_frame_padding()
    imgui.text_colored(DIM, text)
    if tooltip:
        imgui.set_item_tooltip(tooltip)
    imgui.table_next_column()


def text_row(label: str, value: str) -> None:
    row_label(label)
    imgui.text(value)


def power_of_ten(values) -> float:
    """A power of ten to divide small or large numbers by, so they read as x.xxx (1 if none)."""
    largest = float(np.max(np.abs(values)))
    if largest == 0.0 or 1e-2 <= largest < 1e4:
        return 1.0
    return 10.0 ** math.floor(math.log10(largest))


def units(scale: float, unit: str) -> str:
    """``×1e-04 kg·m²``: the common factor and unit of a row of numbers."""
    return " ".join(x for x in (f"×{scale:.0e}" if scale != 1.0 else "", unit) if x)


def vec_row(label: str, values, unit: str = "", tooltip: str | None = None,
             scale: float | None = None, caption: str | None = None, tiny: float = 0.0) -> None:
    """A row of three right-aligned numbers; the label gets their unit and common power of ten
    (``×1e-04``; ``caption`` replaces the whole label). Parts below 1e-9 of the largest, or not
    above ``tiny``, read 0 (rounding noise)."""
    values = np.asarray(values, dtype=float)
    values = np.where(np.abs(values) <= tiny, 0.0, values)
    scale = power_of_ten(values) if scale is None else scale
    largest = float(np.max(np.abs(values)))
    # one number of decimals for the row: 4 significant digits of its largest entry
    decimals = max(0, 3 - math.floor(math.log10(largest / scale))) if largest > 0 else 0
    row_label(caption if caption is not None else f"{label} {units(scale, unit)}".strip(),
           tooltip)
    for i, v in enumerate(values):
        if i:
            imgui.table_next_column()
        text = "0" if abs(v) <= 1e-9 * largest else f"{v / scale:.{decimals}f}"
        imgui.set_cursor_pos_x(imgui.get_cursor_pos_x() + imgui.get_content_region_avail().x
                               - imgui.calc_text_size(text).x)
        imgui.text(text)


def ellipsis(text: str, length: int) -> str:
    return text if len(text) <= length else "…" + text[-(length - 1):]


def path_field(button: str, hint: str, text: str) -> tuple[bool, str]:
    """A file path field with its button on the right: (go, text) — go when the button is
    pressed or Enter is typed in the field."""
    imgui.set_next_item_width(-70)
    entered, text = imgui.input_text_with_hint(f"##{button}", hint, text,
                                               imgui.InputTextFlags_.enter_returns_true)
    imgui.same_line()
    return imgui.button(button, (-1, 0)) or entered, text
