"""On-screen notifications that fade, each also logged."""

from __future__ import annotations

import logging
import threading
import time
from dataclasses import dataclass

log = logging.getLogger("tumble")

SHOW_SECONDS = 6.0   # fully visible
FADE_SECONDS = 1.5   # then fades out


@dataclass(frozen=True)
class Notification:
    level: int      # logging level
    text: str
    created: float  # time.monotonic()


class Notifications:
    """Thread-safe list of recent messages (the loader thread pushes, the panel draws)."""

    def __init__(self, clock=time.monotonic):
        self._clock = clock
        self._items: list[Notification] = []
        self._lock = threading.Lock()

    def push(self, level: int, text: str) -> None:
        """Show ``text`` and log it at ``level`` (logging.INFO / WARNING / ERROR)."""
        log.log(level, text)
        with self._lock:
            self._items.append(Notification(level, text, self._clock()))

    def info(self, text: str) -> None:
        self.push(logging.INFO, text)

    def warning(self, text: str) -> None:
        self.push(logging.WARNING, text)

    def error(self, text: str) -> None:
        self.push(logging.ERROR, text)

    def visible(self) -> list[tuple[Notification, float]]:
        """(notification, opacity 0…1) of those still on screen, oldest first; drops the rest."""
        now = self._clock()
        life = SHOW_SECONDS + FADE_SECONDS
        with self._lock:
            self._items = [n for n in self._items if now - n.created < life]
            items = list(self._items)
        return [(n, min(1.0, (life - (now - n.created)) / FADE_SECONDS)) for n in items]
