"""The real app (``python -m app``) in a private Xvfb server, watched through its status file
(``TUMBLE_STATUS_FILE``, see app/window.py) and its log, driven with xdotool — shared by the
window tests and the in-app recording tests."""

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from physics.scene import load_scene, save_scene
from tests.paths import REPO

REPO = REPO
SOURCE = Path(__file__).with_name("xdnd_source.py")
DEFAULT_SCENE = REPO / "assets" / "scenes" / "default.toml"
DEFAULT_BODIES = 12  # in DEFAULT_SCENE
START_TIMEOUT = 40.0  # s: imports, numba kernels and the default scene on a busy 2-core machine


def require(tool: str, package: str) -> str:
    path = shutil.which(tool)
    if path is None:
        pytest.fail(f"{tool} is not installed; the window tests need it "
                    f"(apt-get install {package}; CI: .ci/setup.sh --test)")
    return path


def start_xvfb() -> tuple[subprocess.Popen, str]:
    """A private X server and its display name; Xvfb picks a free display number itself
    (-displayfd)."""
    binary = require("Xvfb", "xvfb")
    require("xdotool", "xdotool")
    read, write = os.pipe()
    server = subprocess.Popen([binary, "-displayfd", str(write), "-screen", "0", "1600x900x24",
                               "-nolisten", "tcp"], pass_fds=(write,),
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    os.close(write)
    with os.fdopen(read) as pipe:
        number = pipe.readline().strip()  # written once the server accepts clients
    if not number:
        server.kill()
        pytest.fail("Xvfb did not start")
    return server, f":{number}"


@pytest.fixture(scope="module")
def xvfb():
    """A private X server for the tests of one module."""
    server, display = start_xvfb()
    yield display
    server.terminate()
    server.wait(10)


class RunningApp:
    """``python -m app`` on the Xvfb display, with its status file and log."""

    def __init__(self, display: str, folder: Path, *args: str, **env: str):
        """``args``: what ``python -m app`` is given (files to open; the default scene).
        ``env``: more environment; a PYTHONPATH given goes before the repository's."""
        self.display = display
        self.status_path = folder / "status.json"
        self.log_path = folder / "app.log"
        first = [env.pop("PYTHONPATH")] if "PYTHONPATH" in env else []
        path = os.pathsep.join([*first, str(REPO)])
        self.env = dict(os.environ, DISPLAY=display, PYTHONPATH=path,
                        TUMBLE_STATUS_FILE=str(self.status_path), **env)
        self.log_file = open(self.log_path, "w")
        self.process = subprocess.Popen([sys.executable, "-m", "app", *args], cwd=REPO,
                                        env=self.env,
                                        stdout=subprocess.DEVNULL, stderr=self.log_file)
        self.window = None

    def wait_until_ready(self, bodies: int = DEFAULT_BODIES,
                         timeout: float = START_TIMEOUT) -> None:
        """Wait up to ``timeout`` s for the scene given (``bodies`` in it; the default scene's
        by default) and find the window."""
        self.wait_for("the scene", lambda s: s["bodies"] == bodies and s["loading"] == 0,
                      timeout=timeout)
        # the app is up, so its window is the one on screen (a probe window for the GL
        # configuration may have come and gone before)
        found = self.xdotool("search", "--onlyvisible", "--name", "^Tumble$").split()
        assert len(found) == 1, found
        self.window = int(found[0])

    def xdotool(self, *args, timeout=10.0) -> str:
        result = subprocess.run(["xdotool", *map(str, args)], env=self.env, timeout=timeout,
                                capture_output=True, text=True, check=True)
        return result.stdout

    def log(self) -> str:
        return self.log_path.read_text()

    def status(self) -> dict:
        try:
            return json.loads(self.status_path.read_text())
        except (FileNotFoundError, json.JSONDecodeError):
            return {}

    def wait_for(self, what: str, check, timeout=15.0) -> dict:
        """Poll the status file (rewritten every ``STATUS_INTERVAL``) until check(status) holds."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            assert self.process.poll() is None, f"the app ended:\n{self.log()}"
            status = self.status()
            if status and check(status):
                return status
            time.sleep(0.2)
        pytest.fail(f"timed out waiting for {what}; last status {self.status()}\n{self.log()}")

    def wait_frames(self, count: int = 2, timeout=15.0) -> dict:
        """Wait until the window has drawn ``count`` more frames (an input event is handled by
        then), rather than for a fixed time that a slow software renderer may exceed.
        The status found first may predate the caller's last input (app/window.py rewrites it
        every ``STATUS_INTERVAL``), so counting starts from the next write, surely later:
        counting from the stale one let a test read a status from before its own events."""
        stale = self.wait_for("a status", lambda s: "frames" in s)["frames"]
        start = self.wait_for("a new status", lambda s: s["frames"] != stale,
                              timeout=timeout)["frames"]
        return self.wait_for(f"{count} frames", lambda s: s["frames"] >= start + count,
                             timeout=timeout)

    def open_scene(self, path: Path, source: Path = DEFAULT_SCENE) -> dict:
        """Replace whatever earlier tests left with a fresh copy of ``source`` saved as ``path``
        (a name of its own, so its status cannot be an earlier scene's), dropped on the window
        like a user would: each test starts from its own scene."""
        save_scene(load_scene(source), path)  # mesh paths made relative to the copy
        self.drop([path], 300, 300, types=1)
        return self.wait_for(f"the scene {path.name}", lambda s: s.get("scene") == path.name
                             and s["loading"] == 0 and s["bodies"] == s["records"]
                             and s["selected"] is None)

    def wait_for_log(self, text: str, timeout=15.0) -> str:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for line in self.log().splitlines():
                if text in line:
                    return line
            time.sleep(0.2)
        pytest.fail(f"no log line with {text!r}:\n{self.log()}")

    def drop(self, files, x, y, types: int) -> None:
        """A real XDND drop from the python-xlib source, at window pixel (x, y)."""
        result = subprocess.run([sys.executable, str(SOURCE), str(self.window), str(x), str(y),
                                 *map(str, files), "--types", str(types)],
                                env=self.env, capture_output=True, text=True, timeout=20)
        assert result.returncode == 0, result.stderr

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait(10)
        self.log_file.close()


@pytest.fixture(scope="module")
def running_app(xvfb, tmp_path_factory):
    """One app process for a test module (starting one takes seconds); tests take ``app``."""
    folder = tmp_path_factory.mktemp("app")
    # a private config folder: the mesh scale memory of a test never lands in the user's
    running = RunningApp(xvfb, folder, XDG_CONFIG_HOME=str(folder / "config"))
    try:
        running.wait_until_ready()
        yield running
    finally:
        running.stop()


@pytest.fixture
def app(running_app, tmp_path, request):
    """The module's app with a fresh copy of the default scene opened for this test alone, so
    no test depends on what an earlier one left behind or on the order they run in."""
    running_app.open_scene(tmp_path / f"{request.node.name[:60]}.toml")
    return running_app
