"""Why a file that was asked for cannot be opened, in words a user can act on.

``os.path.exists`` is False for a missing file, a dangling symbolic link and a link that loops
back on itself alike; telling a user "not found" for a link they can see in their file manager
sends them looking in the wrong place.
"""

from __future__ import annotations

import errno
import os


def why_missing(path) -> str:
    """The reason ``path`` names no readable file (call it when ``os.path.exists`` is False):
    'not found; …', or what is wrong with the symbolic link it is."""
    path = os.fspath(path)
    if os.path.islink(path):
        try:
            os.stat(path)
        except OSError as e:
            if e.errno == errno.ELOOP:
                return ("is a symbolic link that leads back to itself (a loop), so there is no "
                        "file to read; point the link at the real file")
        return (f"is a symbolic link to {os.readlink(path)!r}, which does not exist; point the "
                "link at the real file")
    return "not found; check the path and spelling"
