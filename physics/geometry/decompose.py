"""Convex decomposition: a non-convex mesh split into convex pieces, so that it collides as
itself instead of as its hull (docs/physics.md#convex-decomposition).

The split is V-HACD's (the ``vhacdx`` binding, which trimesh uses): the mesh is voxelised and
cut recursively along planes until every piece is within a volume error of its convex hull. A
mesh is split only when its convex hull is clearly larger than the mesh (``needs_pieces``), and
each result is cached on disk by the mesh's content and the parameters, so a second load of the
same mesh costs a file read.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import os
import subprocess
import sys
import tempfile
import time
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from physics.settings import (
    DECOMPOSE_HULL_RATIO,
    DECOMPOSE_MAX_PIECES,
    DECOMPOSE_MERGE_BUDGET,
    DECOMPOSE_MERGE_COST,
    DECOMPOSE_RESOLUTION,
    DECOMPOSE_VOLUME_ERROR,
    MAX_HULL_VERTICES,
)

COLLISION_MODES = ("auto", "hull", "decomposed")  # how a mesh body collides with other bodies
# what the cached pieces depend on besides the mesh: a change here makes new cache files
_PARAMETERS = (f"vhacd max_hulls={DECOMPOSE_MAX_PIECES} resolution={DECOMPOSE_RESOLUTION} "
               f"error={DECOMPOSE_VOLUME_ERROR} vertices={MAX_HULL_VERTICES} "
               f"merge={DECOMPOSE_MERGE_COST},{DECOMPOSE_MERGE_BUDGET} v2")
HULL_SAMPLE = 4096  # vertices whose hull decides whether "auto" splits a mesh (needs_pieces)


class DecompositionError(ValueError):
    """The library could not split a mesh; the message names it and says it keeps its hull."""


@dataclass(frozen=True)
class Decomposition:
    """A mesh's convex pieces.

    pieces          (k_i, 3) vertices of each convex piece in the mesh's own frame, m,
                    k_i ≤ MAX_HULL_VERTICES
    volume_excess   Σ piece volumes / mesh volume − 1: how much the pieces overfill the mesh
    seconds         wall time of the split (or of the cache read)
    cached          read from the cache instead of computed
    """

    pieces: tuple[np.ndarray, ...]
    volume_excess: float
    seconds: float
    cached: bool


def load_hull_code() -> None:
    """Import what ``hull_ratio`` needs (scipy.spatial, for Qhull): ~0.2 s of imports that
    hold the GIL, which a caller with compiled work to do meanwhile (that releases it) can run
    on another thread instead of after that work."""
    import scipy.spatial  # noqa: F401


def hull_ratio(vertices: np.ndarray, volume: float) -> float:
    """Volume of the convex hull of vertices (n, 3) m over the mesh's ``volume`` m³ (> 0)."""
    from scipy.spatial import ConvexHull  # imported here: scipy.spatial takes 0.2 s to import

    return float(ConvexHull(vertices).volume / volume)


def needs_pieces(collision: str, vertices, volume: float | None) -> bool:
    """Whether a mesh collides as pieces: ``collision`` "decomposed" always, "hull" never, and
    "auto" when it is a closed solid (``volume`` m³ not None) whose convex hull holds more than
    DECOMPOSE_HULL_RATIO times its volume — a hull that much larger has room the mesh does not
    fill (a bowl's hollow, a torus's hole, a T's armpits) that a body would rest on."""
    if collision not in COLLISION_MODES:
        raise ValueError(f"collision must be one of {', '.join(COLLISION_MODES)}, got "
                         f"{collision!r}")
    if collision != "auto":
        return collision == "decomposed"
    return volume is not None and volume > 0 and hull_ratio(_sample(vertices), volume) > (
        DECOMPOSE_HULL_RATIO)


def _sample(vertices) -> np.ndarray:
    """At most HULL_SAMPLE of vertices (n, 3), evenly strided: the hull of a million-vertex scan
    takes seconds, a sample's tens of milliseconds, and lying inside the whole hull it can only
    err towards leaving a nearly convex mesh whole."""
    vertices = np.asarray(vertices, dtype=float)
    return vertices[::max(1, -(-len(vertices) // HULL_SAMPLE))]


def cache_folder() -> Path:
    """Where decompositions are kept: $XDG_CACHE_HOME/tumble/pieces, else ~/.cache/…."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "tumble" / "pieces"


def decompose(name: str, vertices: np.ndarray, faces: np.ndarray, volume: float,
              folder: Path | None = None,
              on_split: Callable[[], None] | None = None) -> Decomposition:
    """The convex pieces of a closed mesh (vertices (n, 3) m, faces (m, 3), enclosing
    ``volume`` m³), from the cache in ``folder`` (default ``cache_folder()``) when it holds
    them, else split by V-HACD and stored there; ``on_split()`` is called first then (a split
    takes seconds: the app says so, a cache read it does not). DecompositionError naming
    ``name`` when the library fails or gives nothing usable; a cache file that cannot be read
    or does not match is ignored and replaced, never trusted."""
    vertices = np.ascontiguousarray(vertices, dtype=np.float64)
    faces = np.ascontiguousarray(faces, dtype=np.int64)
    key = _key(vertices, faces)
    path = (cache_folder() if folder is None else Path(folder)) / f"{key}.npz"
    start = time.perf_counter()
    pieces = _read(path, key)
    cached = pieces is not None
    if pieces is None:
        if on_split is not None:
            on_split()
        pieces = _split(name, vertices, faces, volume)
        _write(path, key, pieces)
    return Decomposition(pieces, volume_excess(pieces, volume), time.perf_counter() - start,
                         cached)


def volume_excess(pieces, volume: float) -> float:
    """Σ volumes of the convex pieces (k_i, 3) m / the mesh's ``volume`` m³ − 1: how much
    the pieces overfill the mesh (the same in any frame the pieces are moved to)."""
    return float(sum(_volume(piece) for piece in pieces) / volume - 1.0)


def body_frame(pieces, center_of_mass, principal_axes) -> tuple[np.ndarray, ...]:
    """Pieces (k_i, 3) in the mesh frame → the body (principal) frame: Rᵀ (x − com)."""
    axes = np.asarray(principal_axes, dtype=float)
    return tuple((np.asarray(piece) - center_of_mass) @ axes for piece in pieces)


def _key(vertices, faces) -> str:
    digest = hashlib.sha256()
    for part in (vertices.tobytes(), faces.tobytes(), _PARAMETERS.encode()):
        digest.update(part)
    return digest.hexdigest()


def _split(name, vertices, faces, volume) -> tuple[np.ndarray, ...]:
    """The pieces of a closed mesh of ``volume`` m³: V-HACD's, then those that fit together
    joined (``_merge``); a mesh as good as convex is one piece, its hull (V-HACD cut a
    tetrahedron into four, and took seconds over it)."""
    from physics.geometry.meshes import convex_hull_vertices

    if _volume(vertices) <= volume * (1.0 + DECOMPOSE_MERGE_COST):
        return (convex_hull_vertices(vertices, MAX_HULL_VERTICES),)
    try:
        hulls = _vhacd_hulls(vertices, faces)
    except RuntimeError as e:
        raise DecompositionError(f"{name}: convex decomposition failed ({e}); it collides as "
                                 "its hull") from e
    pieces = [convex_hull_vertices(points, MAX_HULL_VERTICES) for points in hulls
              if len(points) >= 4 and _volume(points) > 0.0]  # V-HACD may return slivers
    if not pieces:
        raise DecompositionError(f"{name}: convex decomposition gave no pieces; it collides "
                                 "as its hull")
    return tuple(_merge(pieces, volume))


def _merge(pieces: list[np.ndarray], volume: float) -> list[np.ndarray]:
    """Pieces joined pairwise while joining costs little: V-HACD spends its whole budget even
    where fewer pieces fit as well (a T-handle's two bars came out as 18 slabs), and every piece
    is a hull the narrow phase tests against every piece near it. Greedy: join the pair whose
    joint hull adds the least volume over the two, while that is under DECOMPOSE_MERGE_COST of
    the mesh's ``volume`` m³ and all joins together stay under DECOMPOSE_MERGE_BUDGET of it
    (docs/physics.md#convex-decomposition)."""
    from physics.geometry.meshes import convex_hull_vertices

    pieces = list(pieces)
    own = [_volume(piece) for piece in pieces]
    cost = {}  # (i, j), i < j → the volume joining them adds, m³

    def price(i, j):
        cost[i, j] = _volume(np.vstack((pieces[i], pieces[j]))) - own[i] - own[j]

    for i in range(len(pieces)):
        for j in range(i + 1, len(pieces)):
            price(i, j)
    spent = 0.0  # m³ the joins added so far
    while cost:
        (i, j), added = min(cost.items(), key=lambda item: item[1])
        if (added > DECOMPOSE_MERGE_COST * volume
                or spent + added > DECOMPOSE_MERGE_BUDGET * volume):
            break
        spent += max(added, 0.0)
        pieces[i] = convex_hull_vertices(np.vstack((pieces[i], pieces[j])), MAX_HULL_VERTICES)
        own[i], pieces[j] = _volume(pieces[i]), None
        cost = {pair: value for pair, value in cost.items() if i not in pair and j not in pair}
        for k in range(len(pieces)):
            if k != i and pieces[k] is not None:
                price(min(i, k), max(i, k))
    return [piece for piece in pieces if piece is not None]


def _vhacd_hulls(vertices, faces) -> list[np.ndarray]:
    """V-HACD's hulls (each (k, 3) m) of the mesh, computed in a child process: the binding
    holds Python's global lock for the whole split (seconds), which in this process would stop
    every other thread — the app's render loop with them. RuntimeError with the child's last
    words when it fails."""
    sent = io.BytesIO()
    np.savez(sent, vertices=vertices, faces=faces)
    result = subprocess.run([sys.executable, "-m", "physics.geometry.decompose"],
                            input=sent.getvalue(), capture_output=True, check=False)
    if result.returncode != 0:
        words = result.stderr.decode(errors="replace").strip().splitlines()
        raise RuntimeError(words[-1] if words else f"exit status {result.returncode}")
    with np.load(io.BytesIO(result.stdout), allow_pickle=False) as data:
        return [np.array(data[f"hull{i}"], dtype=float) for i in range(int(data["count"]))]


def _child() -> None:
    """The child process of ``_vhacd_hulls``: the mesh as .npz on stdin, the hulls on stdout."""
    import vhacdx

    # below the app's threads: a split in the background must not starve the frames (its
    # threads keep every core busy for seconds)
    os.nice(10)

    with np.load(io.BytesIO(sys.stdin.buffer.read()), allow_pickle=False) as data:
        vertices, faces = data["vertices"], data["faces"]
    # V-HACD takes VTK's polygon layout: each face as (3, a, b, c)
    polygons = np.column_stack((np.full(len(faces), 3), faces)).ravel().astype(np.uint32)
    hulls = vhacdx.compute_vhacd(
        vertices, polygons, maxConvexHulls=DECOMPOSE_MAX_PIECES,
        resolution=DECOMPOSE_RESOLUTION,
        minimumVolumePercentErrorAllowed=DECOMPOSE_VOLUME_ERROR,
        maxNumVerticesPerCH=MAX_HULL_VERTICES)
    sent = io.BytesIO()
    np.savez(sent, count=np.array(len(hulls)),
             **{f"hull{i}": points for i, (points, _) in enumerate(hulls)})
    sys.stdout.buffer.write(sent.getvalue())


def _volume(points) -> float:
    from scipy.spatial import ConvexHull, QhullError

    try:
        return float(ConvexHull(points).volume)
    except (QhullError, ValueError):
        return 0.0


def _read(path: Path, key: str) -> tuple[np.ndarray, ...] | None:
    """The pieces stored at path for this key, or None when the file is missing, unreadable,
    for another key, or holds anything but finite (k, 3) pieces of 4…64 vertices."""
    try:
        with np.load(path, allow_pickle=False) as data:
            if str(data["key"]) != key:
                return None
            count = int(data["count"])
            pieces = tuple(np.array(data[f"piece{i}"], dtype=float) for i in range(count))
    except (OSError, KeyError, ValueError, EOFError, TypeError, zipfile.BadZipFile):
        return None
    if not 1 <= len(pieces) <= DECOMPOSE_MAX_PIECES or not all(
            p.ndim == 2 and p.shape[1] == 3 and 4 <= len(p) <= MAX_HULL_VERTICES
            and np.isfinite(p).all() for p in pieces):
        return None
    return pieces


def _write(path: Path, key: str, pieces) -> None:
    """Store the pieces at path, atomically (a reader never sees half a file); a cache that
    cannot be written is skipped: the next load splits the mesh again."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        file = tempfile.NamedTemporaryFile(dir=path.parent, suffix=".npz", delete=False)
    except OSError:
        return
    try:
        with file:
            np.savez(file, key=np.array(key), count=np.array(len(pieces)),
                     **{f"piece{i}": p for i, p in enumerate(pieces)})
        os.replace(file.name, path)
    except OSError:
        with contextlib.suppress(OSError):
            os.unlink(file.name)


if __name__ == "__main__":
    _child()
