"""Find the GLSL programs (shaders/) and the sample assets (assets/) at run time.

From a checkout they are the folders ``shaders/`` and ``assets/`` at the top of the repo (next to
``app/``); an installed wheel carries the same folders as the packages ``tumble_shaders`` and
``tumble_assets`` (pyproject.toml ``package-dir``), found with ``importlib.resources``. The checkout
wins when both exist, so an edited shader is what runs.
"""

from __future__ import annotations

import importlib.resources
import os
from pathlib import Path

_ROOT = Path(__file__).resolve().parent.parent


def _folder(checkout: str, package: str) -> Path:
    """The folder of shaders or assets: the checkout's, else the installed package's."""
    local = _ROOT / checkout
    if local.is_dir():
        return local
    try:
        found = importlib.resources.files(package)
    except ModuleNotFoundError:
        raise FileNotFoundError(
            f"no {checkout}/ folder next to {_ROOT / 'app'} and no installed package "
            f"{package!r}; run from a Tumble checkout or reinstall the wheel") from None
    # wheels are installed unzipped, so the package is a real folder on disk
    return Path(str(found))


def shader_dir() -> Path:
    """The folder holding the ``*.glsl`` files."""
    return _folder("shaders", "tumble_shaders")


def asset_path(relative: str | Path) -> Path:
    """Path of ``relative`` (e.g. ``"scenes/default.toml"``) inside the assets folder.

    Raises FileNotFoundError naming the path looked at when it does not exist.
    """
    path = _folder("assets", "tumble_assets") / relative
    if not path.exists():
        raise FileNotFoundError(f"asset {str(relative)!r} not found (looked at {path})")
    return path


def seed_piece_cache() -> int:
    """Copy the convex pieces of the shipped meshes (``assets/pieces/``, made by
    ``assets/make_assets.py``) into the user's cache of pieces where it lacks them, so the
    default scene's meshes collide as themselves from the first launch instead of keeping both
    cores busy splitting them for seconds. A file already there is left alone; one that cannot
    be copied is skipped (the mesh is then split as any other). Returns how many were copied."""
    from physics.geometry.decompose import cache_folder  # light: no kernels, no scipy

    try:
        shipped = sorted(_folder("assets", "tumble_assets").joinpath("pieces").glob("*.npz"))
    except FileNotFoundError:
        return 0
    cache, copied = cache_folder(), 0
    for source in shipped:
        target = cache / source.name  # named by the mesh's key: same content, same name
        if target.exists():
            continue
        try:
            cache.mkdir(parents=True, exist_ok=True)
            partial = target.with_suffix(".seeding")
            partial.write_bytes(source.read_bytes())
            os.replace(partial, target)  # a reader never sees half a file
            copied += 1
        except OSError:
            continue
    return copied


def shader_source(name: str) -> str:
    """Text of the shader file ``name`` (e.g. ``"body.frag.glsl"``); FileNotFoundError naming the
    folder when it is missing."""
    path = shader_dir() / name
    if not path.is_file():
        raise FileNotFoundError(f"shader {name!r} not found in {path.parent}")
    return path.read_text(encoding="utf-8")


# shared GLSL pieces, pasted in by `#include "…"`
INCLUDES = ("lighting.glsl", "shadow.glsl", "walls.glsl")


def load_program(ctx, name: str, defines: tuple[str, ...] = ()):
    """The moderngl program ``name.vert.glsl`` + ``name.frag.glsl`` (+ ``name.geom.glsl`` when
    there is one), with ``#define`` lines for ``defines`` after the ``#version`` line; the shared
    pieces of ``INCLUDES`` are registered in ``ctx.includes`` first (GLSL 3.30 has no include of
    its own, moderngl resolves them)."""
    for include in INCLUDES:
        if include not in ctx.includes:
            ctx.includes[include] = shader_source(include)

    def source(path: str) -> str:
        version, _, rest = shader_source(path).partition("\n")
        return "\n".join([version, *(f"#define {d}" for d in defines), rest])

    geometry = f"{name}.geom.glsl"
    return ctx.program(vertex_shader=source(f"{name}.vert.glsl"),
                       fragment_shader=source(f"{name}.frag.glsl"),
                       geometry_shader=source(geometry)
                       if (shader_dir() / geometry).is_file() else None)
