"""Fixtures of the app tests: a private X server, one app process per module, and a fresh
scene for each test (tests/app/running_app.py); a clip process (app/video/clip_worker.py) per
module that saves clips."""

import pytest

from app.video.clip_worker import ClipWorker
from tests.app.running_app import app, running_app, xvfb  # noqa: F401 (fixtures)


@pytest.fixture(scope="module")
def clip_worker():
    """A started clip process, ended after the module."""
    worker = ClipWorker()
    worker.start()
    yield worker
    worker.close()
