"""The code passes the linter configured in pyproject.toml ([tool.ruff]: pyflakes, pycodestyle,
import order, line length 100), so CI — which runs the README's test command — runs it too."""

import subprocess
import sys

from tests.paths import REPO


def test_ruff_check_is_clean():
    result = subprocess.run([sys.executable, "-m", "ruff", "check", "--no-cache", "."],
                            cwd=REPO, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr
