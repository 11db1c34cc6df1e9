"""Fixtures of the app tests: a private X server, one app process per module, and a fresh
scene for each test (tests/app/running_app.py)."""

from tests.app.running_app import app, running_app, xvfb  # noqa: F401 (fixtures)
