"""The app's keys: one table that the window's key handler, the help window (F1) and the
README's key table all follow (tests/app/test_keys.py checks the README against it)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class KeyBinding:
    """key: the pyglet key name (``pyglet.window.key.<key>``); label: how the help and the
    README name it; action: the ``App`` method the key calls; description: what it does."""

    key: str
    label: str
    action: str
    description: str


KEY_BINDINGS = (
    KeyBinding("SPACE", "Space", "toggle_pause", "pause / resume"),
    KeyBinding("RIGHT", "Right arrow", "step_once",
               "one physics step (pauses); on the timeline, the next moment"),
    KeyBinding("LEFT", "Left arrow", "step_back", "on the timeline, the moment before (pauses)"),
    KeyBinding("R", "R", "reset", "reset the scene to its start"),
    KeyBinding("DELETE", "Del", "delete_selection", "remove the selected body"),
    KeyBinding("F", "F", "frame_selection", "frame the selection in the view"),
    KeyBinding("S", "S", "spin_selection", "spin the selected body about its middle axis"),
    KeyBinding("ESCAPE", "Esc", "deselect", "deselect; close the help"),
    KeyBinding("F1", "F1", "toggle_help", "help window with every key and mouse action"),
    KeyBinding("F9", "F9", "toggle_recording", "start / stop recording a video"),
    KeyBinding("F10", "F10", "save_instant_replay", "save the last 10 s as a video"),
    KeyBinding("F12", "F12", "request_screenshot", "save a screenshot (PNG)"),
)

MOUSE_ACTIONS = (
    ("left-drag on empty space", "orbit"),
    ("middle-drag, or Shift + left-drag", "pan"),
    ("wheel", "zoom"),
    ("click a body", "select it"),
    ("Shift + click (a body selected)", "make a joint to the body clicked, or to the world"),
    ("Ctrl + left-drag a body", "grab it with a spring; let go to throw it"),
    ("drop files on the window", "meshes become bodies; a scene replaces the scene"),
)
