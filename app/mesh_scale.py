"""The offer to rescale a dropped mesh of implausible size, and the per-file memory of the answer.

A CAD part exported in millimetres reads as a body a thousand times too large (a 17 cm bracket
becomes 170 m across and 1.7e7 kg). When a dropped mesh is over ``PLAUSIBLE_SIZE`` (or under
it), the loader does not put it in the scene: it hands the render thread a ``ScaleOffer``, the
window shows it (``draw_scale_offer``), and the body is added once the user has chosen —
millimetres → metres, fit to a size the user types (``FIT_SIZE`` to start with), or keep it as
it is. The choice is remembered for that
file (``ScaleMemory``, a small JSON file in the user's config folder), so the next drop of the
same file loads at once with it, and the scale travels into saved scenes (``scale = …``).
"""

from __future__ import annotations

import json
import logging
import math
import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from physics.settings import PLAUSIBLE_SIZE

log = logging.getLogger("tumble")

FIT_SIZE = 0.3        # m: "fit to" starts here (a hand-held object, like the builtins)
FIT_RANGE = (0.01, 10.0)  # m: the sizes "fit to" accepts (plausible, PLAUSIBLE_SIZE, with room)
MEMORY_FILE = "mesh_scales.json"


@dataclass(frozen=True)
class ScaleOffer:
    """A mesh held back from the scene until the user picks its scale.

    path     the mesh file; name its file name; extent (m) its largest extent as read
    point    (3,) the drop point on the floor (None: the container's centre)
    """

    path: Path
    name: str
    extent: float
    point: np.ndarray | None = None

    @property
    def too_large(self) -> bool:
        return self.extent > PLAUSIBLE_SIZE[1]

    def question(self) -> str:
        if self.too_large:
            return (f"{self.name} is {self.extent:.4g} m across. If the file is in millimetres, "
                    f"the object is {self.extent / 1000:.4g} m.")
        return f"{self.name} is only {self.extent * 1000:.3g} mm across."

    def choices(self, fit_size: float = FIT_SIZE) -> list[tuple[str, float]]:
        """(button label, scale factor) in the order shown; "Fit to" brings the largest extent
        to ``fit_size`` m; the last keeps the file's size."""
        fit = fit_size / self.extent
        if self.too_large:
            options = [("Millimetres to metres (× 0.001)", 0.001),
                       ("Centimetres to metres (× 0.01)", 0.01)]
        else:
            options = [("Metres to millimetres (× 1000)", 1000.0)]
        return options + [(f"Fit to {fit_size:g} m (× {fit:.3g})", fit), ("Keep as is", 1.0)]


def implausible(extent: float) -> bool:
    """True when a body ``extent`` m across is most likely in other units (PLAUSIBLE_SIZE)."""
    low, high = PLAUSIBLE_SIZE
    return not low <= extent <= high


def memory_path() -> Path:
    """``$XDG_CONFIG_HOME/tumble/mesh_scales.json`` (default ``~/.config``)."""
    base = os.environ.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"), ".config")
    return Path(base) / "tumble" / MEMORY_FILE


class ScaleMemory:
    """The scale chosen for each mesh file (by absolute path), kept across runs.

    A missing, unreadable or damaged memory file counts as empty (with a log line): it only
    saves the user a question, so it must never stop a file from loading.
    """

    def __init__(self, path: Path | None = None):
        self.path = memory_path() if path is None else Path(path)
        self._scales = self._read()

    def get(self, mesh: Path) -> float | None:
        """The remembered scale for ``mesh``, or None if the user was never asked."""
        return self._scales.get(_key(mesh))

    def remember(self, mesh: Path, scale: float) -> None:
        """Keep ``scale`` (> 0, finite) for ``mesh`` and write the memory file; a write that
        fails is logged (the choice still holds for this run)."""
        if not (math.isfinite(scale) and scale > 0):
            raise ValueError(f"scale must be a number > 0, got {scale}")
        self._scales[_key(mesh)] = float(scale)
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            temporary = self.path.with_suffix(".tmp")
            temporary.write_text(json.dumps(self._scales, indent=1, sort_keys=True))
            os.replace(temporary, self.path)
        except OSError as e:
            log.warning("could not save the mesh scale memory %s: %s", self.path, e)

    def _read(self) -> dict[str, float]:
        try:
            data = json.loads(self.path.read_text())
        except FileNotFoundError:
            return {}
        except (OSError, ValueError) as e:
            log.warning("ignored the mesh scale memory %s (%s); choices start afresh",
                        self.path, e)
            return {}
        if not isinstance(data, dict):
            log.warning("ignored the mesh scale memory %s (not a table)", self.path)
            return {}
        return {str(k): float(v) for k, v in data.items()
                if isinstance(v, (int, float)) and math.isfinite(v) and v > 0}


def _key(mesh: Path) -> str:
    return os.path.abspath(os.fspath(mesh))


def draw_scale_offer(imgui, offers: list[ScaleOffer], choose, item_rects: dict,
                     fit_size: list[float]) -> None:
    """The first pending offer as a small window in the middle of the view: the question and
    one button per choice; ``choose(offer, scale)`` is called with the button's factor. The
    "Fit to" button has a field for the size, m, kept in ``fit_size`` (a one-item list the
    caller owns, so the size typed stays for the next offer). ``item_rects["scale_offer:<k>"]``
    keeps each button's rectangle and ``item_rects["scale_fit_size"]`` the field's (tests click
    them)."""
    if not offers:
        return
    offer = offers[0]
    size = imgui.get_io().display_size
    imgui.set_next_window_pos(imgui.ImVec2(size.x * 0.5, size.y * 0.4), imgui.Cond_.always,
                              imgui.ImVec2(0.5, 0.5))
    flags = (imgui.WindowFlags_.no_collapse | imgui.WindowFlags_.always_auto_resize
             | imgui.WindowFlags_.no_saved_settings)
    imgui.begin("Scale of the dropped mesh", None, flags)
    imgui.text(offer.question())
    imgui.text("Choose its scale (remembered for this file):")
    for k, (label, scale) in enumerate(offer.choices(fit_size[0])):
        # "###": an ID that stays when the label does (typing a size changes "Fit to …" as the
        # field loses focus, which is the press on this very button)
        if imgui.button(f"{label}###choice{k}"):
            choose(offer, scale)
        (x0, y0), (x1, y1) = imgui.get_item_rect_min(), imgui.get_item_rect_max()
        item_rects[f"scale_offer:{k}"] = ((x0, y0), (x1, y1))
        if label.startswith("Fit to"):
            imgui.same_line()
            imgui.set_next_item_width(90)
            changed, typed = imgui.input_float("m across##fit", fit_size[0], 0.0, 0.0, "%.3g")
            (x0, y0), (_, y1) = imgui.get_item_rect_min(), imgui.get_item_rect_max()
            item_rects["scale_fit_size"] = ((x0, y0), (x0 + 90, y1))  # the field, not its label
            if changed and math.isfinite(typed):
                fit_size[0] = min(max(typed, FIT_RANGE[0]), FIT_RANGE[1])
    if len(offers) > 1:
        imgui.text_disabled(f"{len(offers) - 1} more waiting")
    imgui.end()
