"""The suite runs in two processes (pytest-xdist, ``-n 2 --dist loadgroup`` in pyproject.toml):
CI has two cores. Tests that measure the wall clock — frame gaps and frame counts of an app on
an X server, a physics thread keeping real time, a thread ticking while another works — run
one after another on one of them, so that no two of them share the cores at once: two apps
drawing with software OpenGL would starve each other's frames. The other process takes the
rest meanwhile. A module marks itself with ``pytestmark = WALL_CLOCK`` (a test with
``@WALL_CLOCK``); tests/conftest.py adds the window tests by what their module uses."""

import pytest

WALL_CLOCK = pytest.mark.xdist_group("wall clock")
