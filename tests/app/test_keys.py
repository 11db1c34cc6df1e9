"""One table of keys (app/keys.py): the window's handler calls what it says, the README lists
exactly it, and every key and action exists."""

import pyglet
import pytest

from app.keys import KEY_BINDINGS, MOUSE_ACTIONS
from app.window import App
from tests.paths import REPO

_shadow = pyglet.options["shadow_window"]
pyglet.options["shadow_window"] = False  # pyglet.window's hidden window needs an X display
from pyglet.window import key  # noqa: E402

pyglet.options["shadow_window"] = _shadow


def readme_table(header: str) -> list[tuple[str, str]]:
    """The rows of the README table whose header row is ``| header | |``."""
    lines = (REPO / "README.md").read_text(encoding="utf-8").splitlines()
    start = lines.index(f"| {header} | |") + 2  # after the header and the |---| line
    rows = []
    for line in lines[start:]:
        if not line.startswith("|"):
            break
        first, second = (cell.strip() for cell in line.strip("|").split("|"))
        rows.append((first, second))
    return rows


def test_the_readme_lists_exactly_the_keys_of_the_table():
    assert readme_table("key") == [(b.label, b.description) for b in KEY_BINDINGS]


def test_the_readme_lists_exactly_the_mouse_actions():
    assert readme_table("mouse") == list(MOUSE_ACTIONS)


def test_every_key_exists_and_every_action_is_a_method_of_the_app():
    for binding in KEY_BINDINGS:
        assert isinstance(getattr(key, binding.key), int), binding.key
        assert callable(getattr(App, binding.action, None)), binding.action
    assert len({b.key for b in KEY_BINDINGS}) == len(KEY_BINDINGS), "a key bound twice"


@pytest.mark.parametrize("binding", KEY_BINDINGS, ids=lambda b: b.key)
def test_the_handler_calls_the_bound_action(binding):
    """on_key_press looks the key up in the table and calls that action, nothing else."""
    class Ui:
        wants_keyboard = False

    calls = []
    fake = type("FakeApp", (), {"ui": Ui()})()
    for other in KEY_BINDINGS:
        setattr(fake, other.action, lambda name=other.action: calls.append(name))
    App.on_key_press(fake, getattr(key, binding.key), 0)
    assert calls == [binding.action]
