"""Scene files (TOML) ↔ world settings and bodies (docs/architecture.md#files-and-the-command-line).

``load_scene`` reads and strictly validates a file: every unknown key, wrong type or bad value is
a ``SceneError`` naming the file, the LINE, the table (``[world]``, ``[[body]] #2``) and the key,
with a spelling suggestion for unknown keys. ``save_scene`` writes a scene back (``load_scene``
of the result gives an equal ``Scene``). ``build_world`` loads each body's shape
(``physics.geometry.meshes``) and adds it to a new ``World``; names, paths, colours and shapes go
into a separate table of records keyed by body id, not into the solver arrays
(docs/architecture.md#from-a-dropped-file-to-the-screen).

tomllib reports no positions for keys, so ``_KeyLines`` finds them with a line scan of the text
that tracks table headers and ``key =`` lines — enough for files written the way save_scene writes
them
(one key per line; arrays may span lines).
"""

from __future__ import annotations

import difflib
import logging
import math
import os
import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import tomli_w

from physics.files import why_missing
from physics.geometry.meshes import BUILTIN_SIZES, Shape, builtin_shape, load_shape
from physics.model import WorldDef, check_friction, check_restitution
from physics.settings import (
    DEFAULT_CONTAINER,
    DEFAULT_DENSITY,
    DEFAULT_FRICTION,
    DEFAULT_HZ,
    DEFAULT_RESTITUTION,
    INERTIA_MODES,
    MAX_HZ,
    MIN_HZ,
    STANDARD_GRAVITY,
)
from physics.simulation import Snapshot
from physics.world import World

WORLD_KEYS = ("gravity", "hz", "restitution", "friction")
CONTAINER_KEYS = ("size",)
BODY_KEYS = ("mesh", "shape", "size", "scale", "density", "inertia", "position", "orientation",
             "velocity", "angular_velocity", "restitution", "friction", "color")
TOP_KEYS = ("world", "container", "body")

log = logging.getLogger(__name__)


class SceneError(ValueError):
    """A scene that cannot be used; the message is ``file:line: table: problem``."""


@dataclass(frozen=True)
class BodyEntry:
    """One ``[[body]]`` of a scene file (values as in the file; vectors as tuples of floats).

    mesh              absolute path of the mesh file (the file holds it relative to itself), or
    scale             meshes: the factor the file's coordinates are multiplied by (0.001 reads a
                      file in millimetres as metres); 1 for builtins
    shape             a builtin kind (box, sphere, cylinder, t_handle) — exactly one of the two
    size              builtin size (meshes.BUILTIN_SIZES), m; None for meshes
    density           kg/m³ (kg/m² with inertia = "shell")
    inertia           "auto" | "solid" | "shell" (builtins: auto or solid)
    position          (3,) m, where the mesh's own origin goes (builtins: their centre of mass)
    orientation       (4,) w, x, y, z of the mesh frame → world (not necessarily normalised)
    velocity          (3,) m/s, angular_velocity (3,) rad/s — world frame
    restitution, friction   per-body material; None → the world's default
    color             (3,) RGB in [0, 1], or None → the renderer chooses
    line              line of the ``[[body]]`` header in the source file (messages only)
    """

    mesh: Path | None = None
    scale: float = 1.0
    shape: str | None = None
    size: tuple[float, ...] | None = None
    density: float = DEFAULT_DENSITY
    inertia: str = "auto"
    position: tuple[float, float, float] = (0.0, 0.0, 0.0)
    orientation: tuple[float, float, float, float] = (1.0, 0.0, 0.0, 0.0)
    velocity: tuple[float, float, float] = (0.0, 0.0, 0.0)
    angular_velocity: tuple[float, float, float] = (0.0, 0.0, 0.0)
    restitution: float | None = None
    friction: float | None = None
    color: tuple[float, float, float] | None = None
    line: int | None = field(default=None, compare=False)


@dataclass(frozen=True)
class Scene:
    """World settings and bodies of a scene file.

    gravity (3,) m/s²; hz fixed physics rate (steps per second); restitution, friction: world
    defaults; container_size (3,) m or None (no walls); bodies in file order; source: the file it
    was read from (messages and relative paths only).
    """

    gravity: tuple[float, float, float] = STANDARD_GRAVITY
    hz: float = DEFAULT_HZ
    restitution: float = DEFAULT_RESTITUTION
    friction: float = DEFAULT_FRICTION
    container_size: tuple[float, float, float] | None = None
    bodies: tuple[BodyEntry, ...] = ()
    source: Path | None = field(default=None, compare=False)

    @property
    def dt(self) -> float:
        """The fixed step, s."""
        return 1.0 / self.hz

    def world_def(self) -> WorldDef:
        return WorldDef(gravity=self.gravity, restitution=self.restitution,
                        friction=self.friction, container_size=self.container_size)


@dataclass(frozen=True, eq=False)
class BodyRecord:
    """Bookkeeping for one body of a built world (not solver data): its stable id, a display
    name (mesh file name or builtin kind), the mesh file (None for builtins), colour (None → the
    renderer chooses), the ``Shape`` (mesh for drawing, mass properties, hull) and the inertia
    mode asked for (``auto`` stays ``auto`` when the scene is saved, whatever it chose)."""

    body_id: int
    name: str
    source: str | None
    color: tuple[float, float, float] | None
    shape: Shape
    inertia: str = "auto"


# --------------------------------------------------------------------------------------------
# Reading


def load_scene(path) -> Scene:
    """Read and validate a scene file; raises ``SceneError`` naming file, line and key."""
    path = Path(os.fspath(path))
    name = str(path)
    if path.is_dir():
        raise SceneError(f"{name}: is a folder, not a scene file")
    try:
        raw = path.read_bytes()
    except OSError as e:
        if not path.exists():  # missing, or a broken or looping symbolic link
            raise SceneError(f"{name}: scene file {why_missing(path)}") from None
        raise SceneError(f"{name}: cannot be read ({e.strerror})") from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        line = raw.count(b"\n", 0, e.start) + 1
        raise SceneError(f"{name}:{line}: not UTF-8 text, so not a TOML scene file") from None
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise SceneError(_syntax_message(name, text, str(e))) from None
    return _Reader(path, text).scene(data)


def _syntax_message(name: str, text: str, message: str) -> str:
    """``file:line:column: TOML syntax error: …`` from tomllib's "… (at line L, column C)"."""
    m = re.search(r"\s*\(at line (\d+), column (\d+)\)$", message)
    if m:
        return f"{name}:{m[1]}:{m[2]}: TOML syntax error: {message[:m.start()]}"
    m = re.search(r"\s*\(at end of document\)$", message)
    if m:  # e.g. an unclosed array: the end of the file is where tomllib noticed
        last = max(1, len(text.splitlines()))
        return f"{name}:{last}: TOML syntax error: {message[:m.start()]} (at the end of the file)"
    return f"{name}: TOML syntax error: {message}"


class _KeyLines:
    """Line numbers of table headers and keys, from a scan of the TOML text.

    Tables are ``()`` (top level), ``("world",)``, ``("container",)``, ``("body", i)`` for the
    i-th ``[[body]]`` (0-based), or the dotted name of any other header. A key spanning several
    lines (a multi-line array) is found at its first line; text inside multi-line strings is
    skipped.
    """

    _HEADER = re.compile(r"\s*(\[\[?)\s*([^\[\]]+?)\s*\]\]?\s*(#.*)?$")
    _KEY = re.compile(r"""\s*("[^"]*"|'[^']*'|[A-Za-z0-9_-]+)\s*[.=]""")

    def __init__(self, text: str):
        self.headers: dict[tuple, int] = {}
        self.keys: dict[tuple[tuple, str], int] = {}
        table: tuple = ()
        bodies = 0
        in_string = False
        for number, line in enumerate(text.splitlines(), start=1):
            quotes = line.count('"""') + line.count("'''")
            if in_string:
                in_string = quotes % 2 == 0
                continue
            header = self._HEADER.match(line)
            key = self._KEY.match(line)
            if header:
                parts = tuple(p.strip().strip("\"'") for p in header[2].split("."))
                if parts == ("body",) and header[1] == "[[":
                    table = ("body", bodies)
                    bodies += 1
                else:
                    table = parts
                    # a sub-table header such as [body.extra] is a key of its parent table
                    parent = ("body", bodies - 1) if parts[0] == "body" and bodies else parts[:1]
                    if len(parts) > 1:
                        self.keys.setdefault((parent, parts[1]), number)
                    self.keys.setdefault(((), parts[0]), number)
                self.headers.setdefault(table, number)
            elif key:
                self.keys.setdefault((table, key[1].strip("\"'")), number)
            in_string = quotes % 2 == 1

    def line(self, table: tuple, key: str | None = None) -> int | None:
        """Line of ``key`` in ``table`` (or of the table's header), None if not found."""
        if key is not None and (table, key) in self.keys:
            return self.keys[(table, key)]
        return self.headers.get(table)


def _table_label(table: tuple) -> str:
    """``[world]``, ``[[body]] #2`` … for messages (body numbers are 1-based)."""
    if not table:
        return ""
    if table[0] == "body" and len(table) == 2:
        return f"[[body]] #{table[1] + 1}"
    return f"[{'.'.join(map(str, table))}]"


def _where(name: str, line: int | None, table: tuple) -> str:
    label = _table_label(table)
    return f"{name}{f':{line}' if line else ''}: {label + ': ' if label else ''}"


class _Reader:
    """Validates the parsed TOML of one file, one table at a time."""

    def __init__(self, path: Path, text: str):
        self.path = path
        self.name = str(path)
        self.lines = _KeyLines(text)

    def error(self, table: tuple, key: str | None, problem: str) -> SceneError:
        return SceneError(_where(self.name, self.lines.line(table, key), table) + problem)

    def scene(self, data: dict) -> Scene:
        self.check_keys((), data, TOP_KEYS, what="table or key")
        world = self.table(data, "world")
        self.check_keys(("world",), world, WORLD_KEYS)
        container = self.table(data, "container") if "container" in data else None
        if container is not None:
            self.check_keys(("container",), container, CONTAINER_KEYS)
        bodies = data.get("body", [])
        if not (isinstance(bodies, list) and all(isinstance(b, dict) for b in bodies)):
            raise self.error((), "body", "bodies are written as [[body]] tables, one per body")
        w = ("world",)
        hz = self.number(w, "hz", world.get("hz", DEFAULT_HZ))
        if not MIN_HZ <= hz <= MAX_HZ:  # the same limits as the physics thread's set_hz
            raise self.error(w, "hz", f"hz must be between {MIN_HZ:g} and {MAX_HZ:g} steps per "
                             f"second, got {hz}")
        return Scene(
            gravity=self.vector(w, "gravity", world.get("gravity", STANDARD_GRAVITY), 3),
            hz=hz,
            restitution=self.checked(
                w, "restitution", world.get("restitution", DEFAULT_RESTITUTION), check_restitution
            ),
            friction=self.checked(
                w, "friction", world.get("friction", DEFAULT_FRICTION), check_friction
            ),
            container_size=None
            if container is None
            else self.positive_vector(
                ("container",), "size", container.get("size", DEFAULT_CONTAINER), 3
            ),
            bodies=tuple(self.body(i, b) for i, b in enumerate(bodies)),
            source=self.path,
        )

    def table(self, data: dict, key: str) -> dict:
        value = data.get(key, {})
        if not isinstance(value, dict):
            raise self.error((), key, f"'{key}' must be a table, written [{key}]")
        return value

    def check_keys(self, table: tuple, values: dict, allowed: tuple, what: str = "key") -> None:
        for key in values:
            if key in allowed:
                continue
            close = difflib.get_close_matches(key, allowed, n=1)
            hint = f" (did you mean '{close[0]}'?)" if close else f"; known: {', '.join(allowed)}"
            raise self.error(table, key, f"unknown {what} {key!r}{hint}")

    def body(self, index: int, values: dict) -> BodyEntry:
        t = ("body", index)
        self.check_keys(t, values, BODY_KEYS)
        if ("mesh" in values) == ("shape" in values):
            problem = ("has both 'mesh' and 'shape'; give one of them" if "mesh" in values else
                       "needs 'mesh = \"file\"' or 'shape = \"box\"' (box, sphere, cylinder, "
                       "t_handle)")
            raise self.error(t, "shape" if "mesh" in values else None, problem)
        inertia = self.choice(t, "inertia", values.get("inertia", "auto"), INERTIA_MODES)
        mesh = shape = size = None
        scale = 1.0
        if "mesh" in values:
            mesh = self.mesh_path(t, values["mesh"])
            if "scale" in values:
                scale = self.number(t, "scale", values["scale"])
                if not (math.isfinite(scale) and scale > 0):
                    raise self.error(t, "scale", f"scale must be a number > 0 (0.001 reads a "
                                     f"file in millimetres as metres), got {values['scale']}")
            if "size" in values:
                raise self.error(t, "size", "'size' is for builtin shapes only; a mesh keeps the "
                                 "size it has in its file")
        else:
            if "scale" in values:
                raise self.error(t, "scale", "'scale' is for mesh files only; a builtin shape "
                                 "takes its dimensions in 'size'")
            shape = self.choice(t, "shape", values["shape"], tuple(BUILTIN_SIZES))
            default, meaning, _ = BUILTIN_SIZES[shape]
            if "size" in values:
                size = self.positive_vector(t, "size", values["size"], len(default),
                                            meaning=meaning)
            elif shape == "t_handle":  # its size is a scale: 1 is the natural T-handle
                size = tuple(default)
            else:
                raise self.error(t, "shape", f"shape {shape!r} needs size = {meaning}")
            if inertia == "shell":
                raise self.error(t, "inertia", "builtin shapes are solid; inertia = \"shell\" is "
                                 "for mesh files")
        density = self.number(t, "density", values.get("density", DEFAULT_DENSITY))
        if density <= 0:
            raise self.error(t, "density", f"density must be > 0, got {density}")
        orientation = self.vector(t, "orientation", values.get("orientation", (1, 0, 0, 0)), 4)
        if math.hypot(*orientation) < 1e-12:
            raise self.error(t, "orientation", "orientation must be a non-zero quaternion "
                             f"[w, x, y, z], got {list(orientation)}")
        color = None
        if "color" in values:
            color = self.vector(t, "color", values["color"], 3)
            if not all(0.0 <= c <= 1.0 for c in color):
                raise self.error(t, "color", f"color components must be in [0, 1], got "
                                 f"{list(color)}")
        return BodyEntry(
            mesh=mesh, scale=scale, shape=shape, size=size, density=density, inertia=inertia,
            position=self.vector(t, "position", values.get("position", (0, 0, 0)), 3),
            orientation=orientation,
            velocity=self.vector(t, "velocity", values.get("velocity", (0, 0, 0)), 3),
            angular_velocity=self.vector(t, "angular_velocity",
                                         values.get("angular_velocity", (0, 0, 0)), 3),
            restitution=(self.checked(t, "restitution", values["restitution"], check_restitution)
                         if "restitution" in values else None),
            friction=(self.checked(t, "friction", values["friction"], check_friction)
                      if "friction" in values else None),
            color=color,
            line=self.lines.line(t),
        )

    def mesh_path(self, table: tuple, value) -> Path:
        if not isinstance(value, str) or not value.strip():
            raise self.error(table, "mesh", f"mesh must be a file name in quotes, got {value!r}")
        path = Path(os.path.abspath(self.path.parent / Path(value).expanduser()))
        if not path.is_file():
            reason = "is a folder" if path.is_dir() else "not found"
            raise self.error(table, "mesh", f"mesh file {value!r} {reason} ({path}); paths are "
                             "relative to the scene file")
        return path

    def number(self, table: tuple, key: str, value) -> float:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise self.error(table, key, f"{key} must be a number, got {_toml(value)}")
        if not math.isfinite(value):
            raise self.error(table, key, f"{key} must be finite, got {value}")
        return value if isinstance(value, int) else float(value)

    def vector(self, table: tuple, key: str, value, *lengths: int, meaning: str = "") -> tuple:
        what = meaning or f"[{', '.join(['number'] * lengths[0])}]"
        if not isinstance(value, (list, tuple)) or len(value) not in lengths:
            raise self.error(table, key, f"{key} must be {what}, got {_toml(value)}")
        for v in value:
            if isinstance(v, bool) or not isinstance(v, (int, float)):
                raise self.error(table, key, f"{key} must be {what} (numbers), got {_toml(value)}")
            if not math.isfinite(v):
                raise self.error(table, key, f"{key} must be finite, got {_toml(value)}")
        return tuple(float(v) for v in value)

    def positive_vector(self, table: tuple, key: str, value, *lengths: int,
                        meaning: str = "") -> tuple:
        v = self.vector(table, key, value, *lengths, meaning=meaning)
        if not all(x > 0 for x in v):
            raise self.error(table, key, f"{key} must be > 0 on every axis, got {list(v)}")
        return v

    def choice(self, table: tuple, key: str, value, options: tuple) -> str:
        if value in options:
            return value
        close = difflib.get_close_matches(value, options, n=1) if isinstance(value, str) else []
        hint = f" (did you mean '{close[0]}'?)" if close else ""
        raise self.error(table, key, f"{key} must be one of {', '.join(options)}; got "
                         f"{_toml(value)}{hint}")

    def checked(self, table: tuple, key: str, value, check) -> float:
        """A number validated by a model check (the World's own rules and wording)."""
        number = self.number(table, key, value)
        try:
            return check(number, key)
        except ValueError as e:
            raise self.error(table, key, str(e)) from None


def _toml(value) -> str:
    """A value as it looks in TOML, for messages."""
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_toml(v) for v in value) + "]"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dict):
        return "a table"
    return repr(value) if isinstance(value, str) else str(value)


# --------------------------------------------------------------------------------------------
# Writing


def save_scene(scene: Scene, path) -> None:
    """Write ``scene`` as TOML; mesh paths are written relative to the new file's folder."""
    path = Path(os.fspath(path))
    folder = Path(os.path.abspath(path.parent))
    out = ["# Tumble scene (keys: README \"Scenes are TOML\")\n", "[world]\n"]
    out += [_toml_line("gravity", scene.gravity), _toml_line("hz", scene.hz),
            _toml_line("restitution", scene.restitution), _toml_line("friction", scene.friction)]
    if scene.container_size is not None:
        out += ["\n[container]\n", _toml_line("size", scene.container_size)]
    for body in scene.bodies:
        out.append("\n[[body]]\n")
        if body.mesh is not None:
            out.append(_toml_line("mesh", _relative(Path(body.mesh), folder)))
            if body.scale != 1.0:
                out.append(_toml_line("scale", body.scale))
        else:
            out.append(_toml_line("shape", body.shape))
            if body.size is not None:
                out.append(_toml_line("size", body.size))
        for key in ("density", "inertia", "position", "orientation", "velocity",
                    "angular_velocity", "restitution", "friction", "color"):
            value = getattr(body, key)
            if value is not None:
                out.append(_toml_line(key, value))
    path.write_text("".join(out), encoding="utf-8")


def scene_from_snapshot(snapshot: Snapshot, records: dict[int, BodyRecord]) -> Scene:
    """The world of a snapshot as a ``Scene``: its settings and, for each body with a record,
    shape, density, inertia mode, mesh-origin pose, velocities, own materials and colour.
    Bodies still loading (no record yet) are left out."""
    entries = []
    for row, body_id in enumerate(snapshot.ids):
        record = records.get(int(body_id))
        if record is None:
            continue
        shape = record.shape
        position, orientation = shape.mesh_pose(snapshot.pos[row], snapshot.quat[row])
        entries.append(BodyEntry(
            mesh=None if shape.kind else Path(record.source or shape.source),
            scale=shape.scale, shape=shape.kind, size=shape.size,
            # 12 digits: 1000, not 1000.0000000000001 from mass/volume (tidier file, and the
            # same eigen-decomposition when moments are equal, e.g. a cylinder's I2 = I3)
            density=float(f"{shape.density:.12g}"), inertia=record.inertia,
            position=_floats(position), orientation=_floats(orientation),
            velocity=_floats(snapshot.vel[row]), angular_velocity=_floats(snapshot.omega[row]),
            restitution=_own(snapshot.body_restitution[row]),
            friction=_own(snapshot.body_friction[row]),
            color=None if record.color is None else _floats(record.color)))
    return Scene(gravity=_floats(snapshot.gravity), hz=float(snapshot.hz),
                 restitution=snapshot.restitution, friction=snapshot.friction,
                 container_size=(None if snapshot.container_size is None
                                 else _floats(snapshot.container_size)),
                 bodies=tuple(entries))


def _floats(values) -> tuple[float, ...]:
    return tuple(float(v) for v in values)


def _own(value: float) -> float | None:
    """A body's own material value; NaN (the world default) → None."""
    return None if math.isnan(value) else float(value)


def _relative(mesh: Path, folder: Path) -> str:
    """Mesh path relative to the scene's folder, with '/' (portable), so a folder of scenes and
    meshes can be moved; absolute when the two share nothing but the root (or the drive)."""
    mesh = Path(os.path.abspath(mesh))
    try:
        common = Path(os.path.commonpath([mesh, folder]))
    except ValueError:  # different drives (Windows)
        return mesh.as_posix()
    if common == Path(common.anchor):
        return mesh.as_posix()
    return Path(os.path.relpath(mesh, folder)).as_posix()


def _toml_line(key: str, value) -> str:
    """``key = value``: number vectors on one line (tomli_w would spread them over lines,
    harder to read and edit); everything else formatted by tomli_w."""
    if isinstance(value, (list, tuple)):
        return f"{key} = [{', '.join(repr(float(v)) for v in value)}]\n"
    return tomli_w.dumps({key: value})


# --------------------------------------------------------------------------------------------
# Building


def build_world(scene: Scene) -> tuple[World, list[BodyRecord]]:
    """A new ``World`` with the scene's settings and bodies, and one record per body (in order).

    Each mesh or builtin is loaded once per (source, density, mode) and shared by the bodies
    that use it. A shape that fails to load → ``SceneError`` naming the scene file, the body and
    the mesh error.
    """
    world = World(scene.world_def())
    records: list[BodyRecord] = []
    shapes: dict[tuple, Shape] = {}
    name = str(scene.source) if scene.source is not None else "scene"
    for index, body in enumerate(scene.bodies):
        where = _where(name, body.line, ("body", index))
        try:
            if body.mesh is not None:
                key = ("mesh", os.path.abspath(body.mesh), body.density, body.inertia)
                display, source = Path(body.mesh).name, str(body.mesh)
            else:
                key = ("shape", body.shape, body.size, body.density)
                display, source = body.shape, None
            if key not in shapes:
                shapes[key] = _load(body)
            shape = shapes[key]
            body_def = shape.body_def(
                body.position, body.orientation, body.velocity, body.angular_velocity,
                restitution=body.restitution, friction=body.friction)
            _check_inside(scene.container_size, body, body_def.position)
            body_id = world.add_body(body_def)
        except ValueError as e:  # MeshError, or a bad value in a Scene built in code
            raise SceneError(f"{where}{e}") from e
        records.append(BodyRecord(body_id, display, source, body.color, shape, body.inertia))
    return world, records


def _check_inside(container_size, body: BodyEntry, centre) -> None:
    """ValueError when the body's centre of mass ``centre`` (3,) m is outside the container:
    the walls would throw it in at the first step, or hold it under the floor for good."""
    if container_size is None:
        return
    sx, sy, sz = container_size
    low, high = np.array([-sx / 2, 0.0, -sz / 2]), np.array([sx / 2, sy, sz / 2])
    if np.all((low <= centre) & (centre <= high)):
        return
    extent = ", ".join(f"{axis} {lo:g}…{hi:g}" for axis, lo, hi in zip("xyz", low, high))
    raise ValueError(f"position {list(body.position)} puts the body's centre of mass at "
                     f"({', '.join(f'{c:.4g}' for c in centre)}), outside the container "
                     f"({extent} m); move the body inside or make [container] size larger")


def _load(body: BodyEntry) -> Shape:
    if body.mesh is not None:
        shape = load_shape(body.mesh, density=body.density, mode=body.inertia, scale=body.scale)
    else:
        shape = builtin_shape(body.shape, body.size, density=body.density)
    log.info("loaded %s: mass=%.6g kg, mode=%s", shape.name, shape.properties.mass,
             shape.properties.mode)
    for warning in shape.warnings:
        log.warning("%s", warning)
    return shape
