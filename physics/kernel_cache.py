"""Keeps numba's on-disk kernel cache true to the sources it was compiled from.

numba keys a cached kernel by its own source file alone (its time stamp and size). Everything
else the kernel took in when it was compiled is frozen into the cached machine code: constants
read from ``physics/settings.py``, and the jitted helpers it calls from other modules. After an
edit of those alone — a tuned setting, a fixed helper, or a ``git pull`` that changed only
them — the cached kernel would go on running the old values and the old code, silently.

So each module's source hash is kept beside the cache (``physics/__pycache__/``, in
``STAMP_NAME``). At start (``physics.runtime.configure``), when a hash differs, the cached
kernels of that module and of every module importing it, directly or through others, are
deleted, and compile again at their next use (the warm-up of ``.ci/setup.sh`` does it ahead).
When nothing changed, the check costs one read of each source (a few ms). A cache numba keeps
elsewhere (a read-only install, ``NUMBA_CACHE_DIR``) is not checked.
"""

from __future__ import annotations

import ast
import hashlib
import json
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent
STAMP_NAME = "kernel-sources.json"


def drop_stale_kernels(package: Path = PACKAGE) -> list[str]:
    """Delete the cached kernels of every module of ``package`` whose source, or the source of
    a module it imports (transitively), changed since the last call; with no record of the
    last call, every cached kernel. Returns the names of the modules whose kernels went."""
    sources = {_module_name(path, package): path for path in sorted(package.rglob("*.py"))}
    hashes = {name: hashlib.sha256(path.read_bytes()).hexdigest()
              for name, path in sources.items()}
    stamp = package / "__pycache__" / STAMP_NAME
    try:
        known = json.loads(stamp.read_text())
    except (OSError, ValueError):
        known = {}
    changed = {name for name, digest in hashes.items() if known.get(name) != digest}
    if not changed and set(known) == set(hashes):
        return []
    stale = _importers_of(changed, sources, package.name) if known else set(sources)
    for name in sorted(stale):
        path = sources[name]
        for cached in path.parent.glob(f"__pycache__/{path.stem}.*.nb[ic]"):
            cached.unlink(missing_ok=True)
    try:
        stamp.parent.mkdir(exist_ok=True)
        stamp.write_text(json.dumps(hashes, indent=0, sort_keys=True))
    except OSError:  # a read-only install: numba cannot cache here either
        pass
    return sorted(stale)


def _module_name(path: Path, package: Path) -> str:
    parts = path.relative_to(package.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _importers_of(changed: set[str], sources: dict[str, Path], root: str) -> set[str]:
    """``changed`` and every module that imports one of them, directly or through others."""
    importers: dict[str, set[str]] = {name: set() for name in sources}
    for name, path in sources.items():
        for imported in _imports(path, root):
            if imported in importers:
                importers[imported].add(name)
    stale, todo = set(changed), list(changed)
    while todo:
        for importer in importers.get(todo.pop(), ()):
            if importer not in stale:
                stale.add(importer)
                todo.append(importer)
    return stale


def _imports(path: Path, root: str) -> set[str]:
    """The package's modules ``path`` imports: ``from a.b import c`` counts both ``a.b`` and,
    where it is a module, ``a.b.c``."""
    try:
        tree = ast.parse(path.read_bytes())
    except SyntaxError:
        return set()
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
            found.update(f"{node.module}.{alias.name}" for alias in node.names)
    return {name for name in found if name == root or name.startswith(root + ".")}
