"""Where the repository and its assets are, for every test."""

from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
ASSETS = REPO / "assets"
