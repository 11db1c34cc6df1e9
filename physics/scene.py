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

import dataclasses
import difflib
import logging
import math
import os
import re
import tomllib
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

import numpy as np
import tomli_w

from physics.constraints.joint import JOINT_TYPES, WORLD, JointDef
from physics.constraints.view import def_at_present
from physics.files import why_missing
from physics.geometry.decompose import (
    COLLISION_MODES,
    DecompositionError,
    body_frame,
    decompose,
    needs_pieces,
    volume_excess,
)
from physics.geometry.meshes import (
    BUILTIN_SIZES,
    Shape,
    builtin_shape,
    load_shape,
    mesh_poses,
)
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
             "velocity", "angular_velocity", "restitution", "friction", "color", "name",
             "static", "collision")
JOINT_KEYS = ("type", "bodies", "anchor", "axis", "limits", "motor", "min", "max", "rest_length",
              "stiffness", "damping", "break_force", "collide")
MOTOR_KEYS = {"hinge": ("speed", "max_torque"), "prismatic": ("speed", "max_force")}
TOP_KEYS = ("world", "container", "body", "joint")
WORLD_NAME = "world"  # what joints call the fixed world in a scene file

log = logging.getLogger(__name__)


class SceneError(ValueError):
    """A scene that cannot be used; the message is ``file:line: table: problem``."""


@dataclass(frozen=True)
class BodyEntry:
    """One ``[[body]]`` of a scene file (values as in the file; vectors as tuples of floats).

    name              what joints call the body (unique in the file), or None
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
    static            scenery that never moves (docs/physics.md#static-bodies)
    collision         meshes: "auto" | "hull" | "decomposed" — how it collides with other bodies
                      (docs/physics.md#convex-decomposition); "auto" for builtins
    line              line of the ``[[body]]`` header in the source file (messages only)
    """

    mesh: Path | None = None
    name: str | None = None
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
    static: bool = False
    collision: str = "auto"
    line: int | None = field(default=None, compare=False)


@dataclass(frozen=True)
class JointEntry:
    """One ``[[joint]]`` of a scene file: its definition with ``first`` and ``second`` as
    indices into the scene's bodies (``WORLD`` for the world), and the line of its header."""

    joint: JointDef
    line: int | None = field(default=None, compare=False)


@dataclass(frozen=True)
class Scene:
    """World settings and bodies of a scene file.

    gravity (3,) m/s²; hz fixed physics rate (steps per second); restitution, friction: world
    defaults; container_size (3,) m or None (no walls); bodies in file order; joints in file
    order; source: the file it was read from (messages and relative paths only).
    """

    gravity: tuple[float, float, float] = STANDARD_GRAVITY
    hz: float = DEFAULT_HZ
    restitution: float = DEFAULT_RESTITUTION
    friction: float = DEFAULT_FRICTION
    container_size: tuple[float, float, float] | None = None
    bodies: tuple[BodyEntry, ...] = ()
    joints: tuple[JointEntry, ...] = ()
    source: Path | None = field(default=None, compare=False)

    @property
    def dt(self) -> float:
        """The fixed step, s."""
        return 1.0 / self.hz

    def world_def(self) -> WorldDef:
        return WorldDef(gravity=self.gravity, restitution=self.restitution,
                        friction=self.friction, container_size=self.container_size)


@dataclass(frozen=True)
class Placement:
    """A body as its scene entry placed it: the entry's ``position``, ``orientation``,
    ``velocity`` and ``angular_velocity`` (as in ``BodyEntry``) and ``state``, the bytes of
    the state row the world made of them (``state_bytes``). A body still in that state is
    saved with the entry's values again, which give that state back bit for bit: the way
    back from a state (``mesh_poses`` through the mesh frame, ω from L) is exact only to
    rounding (docs/architecture.md#replays)."""

    position: tuple[float, ...]
    orientation: tuple[float, ...]
    velocity: tuple[float, ...]
    angular_velocity: tuple[float, ...]
    state: bytes


def state_bytes(pos, quat, vel, ang_mom) -> bytes:
    """One body's state row, pos (3,) m, quat (4,), vel (3,) m/s, ang_mom (3,) kg·m²/s, as
    bytes: equal bytes, equal bits."""
    return np.concatenate([pos, quat, vel, ang_mom]).astype(float).tobytes()


@dataclass(frozen=True, eq=False)
class BodyRecord:
    """Bookkeeping for one body of a built world (not solver data): its stable id, a display
    name (mesh file name or builtin kind), the mesh file (None for builtins), colour (None → the
    renderer chooses), the ``Shape`` (mesh for drawing, mass properties, hull) and the inertia
    mode asked for (``auto`` stays ``auto`` when the scene is saved, whatever it chose);
    ``scene_name`` is the scene's name for it (what joints call it), or None; ``collision`` the
    collision mode asked for (saved as asked, like ``inertia``) and ``pieces`` the convex pieces
    it collides as, body frame (empty: its hull; docs/physics.md#convex-decomposition);
    ``placement`` how its scene entry placed it (``Placement``), None for a body not read from
    a scene."""

    body_id: int
    name: str
    source: str | None
    color: tuple[float, float, float] | None
    shape: Shape
    inertia: str = "auto"
    scene_name: str | None = None
    collision: str = "auto"
    pieces: tuple = ()
    placement: Placement | None = None

    @cached_property
    def volume_excess(self) -> float | None:
        """How much the convex pieces overfill the mesh (Σ their volumes / the mesh's − 1),
        None when it collides as its hull or sphere; found once per record."""
        volume = self.shape.properties.volume
        return volume_excess(self.pieces, volume) if self.pieces and volume else None


# --------------------------------------------------------------------------------------------
# Reading


def load_scene(path) -> Scene:
    """Read and validate a scene file; raises ``SceneError`` naming file, line and key."""
    path, text, data = read_toml(path)
    return _Reader(path, text).scene(data)


def read_toml(path) -> tuple[Path, str, dict]:
    """(path, text, parsed tables) of a TOML file; ``SceneError`` naming the file (and the line
    of a syntax error) when it cannot be read or parsed."""
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
    return path, text, data


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


_ARRAYS = ("body", "joint")  # the arrays of tables a scene holds


class _KeyLines:
    """Line numbers of table headers and keys, from a scan of the TOML text.

    Tables are ``()`` (top level), ``("world",)``, ``("container",)``, ``("body", i)`` for the
    i-th ``[[body]]`` (0-based; ``("joint", i)`` likewise), or the dotted name of any other
    header. A key spanning several
    lines (a multi-line array) is found at its first line; text inside multi-line strings is
    skipped.
    """

    _HEADER = re.compile(r"\s*(\[\[?)\s*([^\[\]]+?)\s*\]\]?\s*(#.*)?$")
    _KEY = re.compile(r"""\s*("[^"]*"|'[^']*'|[A-Za-z0-9_-]+)\s*[.=]""")

    def __init__(self, text: str):
        self.headers: dict[tuple, int] = {}
        self.keys: dict[tuple[tuple, str], int] = {}
        table: tuple = ()
        counts = {name: 0 for name in _ARRAYS}  # [[body]] and [[joint]] tables so far
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
                if len(parts) == 1 and parts[0] in counts and header[1] == "[[":
                    table = (parts[0], counts[parts[0]])
                    counts[parts[0]] += 1
                else:
                    table = parts
                    # a sub-table header such as [body.extra] is a key of its parent table
                    seen = counts.get(parts[0], 0)
                    parent = (parts[0], seen - 1) if parts[0] in counts and seen else parts[:1]
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
    """``[world]``, ``[[body]] #2``, ``[[joint]] #1`` … for messages (numbers are 1-based)."""
    if not table:
        return ""
    if table[0] in _ARRAYS and len(table) == 2:
        return f"[[{table[0]}]] #{table[1] + 1}"
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
        joints = data.get("joint", [])
        if not (isinstance(joints, list) and all(isinstance(j, dict) for j in joints)):
            raise self.error((), "joint", "joints are written as [[joint]] tables, one per joint")
        body_entries = tuple(self.body(i, b) for i, b in enumerate(bodies))
        names = self.body_names(body_entries)
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
            bodies=body_entries,
            joints=tuple(self.joint(i, j, names) for i, j in enumerate(joints)),
            source=self.path,
        )

    def body_names(self, bodies: tuple[BodyEntry, ...]) -> dict[str, int]:
        """Body index by name; names are unique and none is the world's."""
        names: dict[str, int] = {}
        for index, body in enumerate(bodies):
            if body.name is None:
                continue
            if body.name in names:
                raise self.error(("body", index), "name", f"name {body.name!r} is already the "
                                 f"name of [[body]] #{names[body.name] + 1}; names are unique")
            names[body.name] = index
        return names

    def joint(self, index: int, values: dict, names: dict[str, int]) -> JointEntry:
        t = ("joint", index)
        self.check_keys(t, values, JOINT_KEYS)
        for key, example in (("type", '"hinge" (' + ", ".join(JOINT_TYPES) + ")"),
                             ("bodies", '["bob", "world"] (two body names; "world" is the '
                              "fixed world)"),
                             ("anchor", "[x, y, z] (a world point at the scene's start, m)")):
            if key not in values:
                raise self.error(t, None, f"needs {key} = {example}")
        kind = self.choice(t, "type", values["type"], JOINT_TYPES)
        first, second = self.joint_bodies(t, values["bodies"], names)
        numbers = {key: self.number(t, key, values[key]) for key in
                   ("min", "max", "rest_length", "stiffness", "damping", "break_force")
                   if key in values}
        collide = values.get("collide", False)
        if not isinstance(collide, bool):
            raise self.error(t, "collide", f"collide must be true or false, got {_toml(collide)}")
        motor_speed, motor_max = self.motor(t, kind, values.get("motor"))
        try:
            joint = JointDef(
                kind, first, second, anchor=self.vector(t, "anchor", values["anchor"], 3),
                axis=self.vector(t, "axis", values["axis"], 3) if "axis" in values else None,
                limits=self.vector(t, "limits", values["limits"], 2) if "limits" in values
                else None,
                motor_speed=motor_speed, motor_max=motor_max, min_length=numbers.get("min"),
                max_length=numbers.get("max"), rest_length=numbers.get("rest_length"),
                stiffness=numbers.get("stiffness", 0.0), damping=numbers.get("damping", 0.0),
                break_force=numbers.get("break_force"), collide=collide)
        except ValueError as e:
            key = next((k for k in JOINT_KEYS if k in values and re.search(rf"\b{k}\b", str(e))),
                       None)
            raise self.error(t, key, str(e)) from None
        return JointEntry(joint, line=self.lines.line(t))

    def joint_bodies(self, table: tuple, value, names: dict[str, int]) -> tuple[int, int]:
        """The two body indices (``WORLD`` for the world) a joint's ``bodies`` names."""
        if not (isinstance(value, list) and len(value) == 2
                and all(isinstance(v, str) for v in value)):
            raise self.error(table, "bodies", 'bodies must be two names in quotes such as '
                             f'["bob", "world"], got {_toml(value)}')
        if value[0] == value[1]:
            raise self.error(table, "bodies", f"a joint needs two different bodies, got "
                             f"{value[0]!r} twice")
        indices = []
        for name in value:
            if name == WORLD_NAME:
                indices.append(WORLD)
                continue
            if name not in names:
                known = [WORLD_NAME, *names]
                close = difflib.get_close_matches(name, known, n=1)
                hint = (f" (did you mean '{close[0]}'?)" if close else
                        f"; give a [[body]] name = {name!r}, or use one of: {', '.join(known)}")
                raise self.error(table, "bodies", f"no body is named {name!r}{hint}")
            indices.append(names[name])
        return indices[0], indices[1]

    def motor(self, table: tuple, kind: str, value) -> tuple[float, float | None]:
        """(speed, max torque or force) of a joint's ``motor`` table, or (0, None) without."""
        if value is None:
            return 0.0, None
        if kind not in MOTOR_KEYS:
            raise self.error(table, "motor", f"a {kind} joint takes no motor (hinge and "
                             "prismatic joints do)")
        speed_key, max_key = MOTOR_KEYS[kind]
        if not isinstance(value, dict) or set(value) != {speed_key, max_key}:
            raise self.error(table, "motor", f"a {kind} joint's motor is written "
                             f"{{ {speed_key} = 2.0, {max_key} = 5.0 }}, got {_toml(value)}")
        return (self.number(table, "motor", value[speed_key]),
                self.number(table, "motor", value[max_key]))

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
        name = values.get("name")
        if name is not None and not (isinstance(name, str) and name.strip()
                                     and name != WORLD_NAME):
            raise self.error(t, "name", f"name must be a non-empty text in quotes other than "
                             f"{WORLD_NAME!r} (joints call the fixed world so), got {_toml(name)}")
        if ("mesh" in values) == ("shape" in values):
            problem = ("has both 'mesh' and 'shape'; give one of them" if "mesh" in values else
                       "needs 'mesh = \"file\"' or 'shape = \"box\"' (box, sphere, cylinder, "
                       "t_handle)")
            raise self.error(t, "shape" if "mesh" in values else None, problem)
        inertia = self.choice(t, "inertia", values.get("inertia", "auto"), INERTIA_MODES)
        mesh = shape = size = None
        scale = 1.0
        collision = "auto"
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
            collision = self.choice(t, "collision", values.get("collision", "auto"),
                                    COLLISION_MODES)
        else:
            if "scale" in values:
                raise self.error(t, "scale", "'scale' is for mesh files only; a builtin shape "
                                 "takes its dimensions in 'size'")
            if "collision" in values:
                raise self.error(t, "collision", "'collision' is for mesh files only; a builtin "
                                 "shape collides as itself")
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
            mesh=mesh, name=name, scale=scale, shape=shape, size=size, density=density,
            inertia=inertia,
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
            static=self.flag(t, "static", values.get("static", False)),
            collision=collision,
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

    def flag(self, table: tuple, key: str, value) -> bool:
        """``true`` or ``false`` (not 0, 1 or a text)."""
        if not isinstance(value, bool):
            raise self.error(table, key, f"{key} must be true or false, got {_toml(value)}")
        return value

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
        if body.name is not None:
            out.append(_toml_line("name", body.name))
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
        if body.static:
            out.append(_toml_line("static", True))
        if body.collision != "auto":
            out.append(_toml_line("collision", body.collision))
    for entry in scene.joints:
        out.append("\n[[joint]]\n")
        out += _joint_lines(entry.joint, scene.bodies)
    path.write_text("".join(out), encoding="utf-8")


def _joint_lines(joint: JointDef, bodies: tuple[BodyEntry, ...]) -> list[str]:
    """The lines of one ``[[joint]]`` (first and second: indices into ``bodies``)."""
    def name(index):
        if index == WORLD:
            return WORLD_NAME
        if bodies[index].name is None:
            raise ValueError(f"[[body]] #{index + 1} is in a joint but has no name")
        return bodies[index].name

    out = [_toml_line("type", joint.kind),
           _toml_line("bodies", [name(joint.first), name(joint.second)]),
           _toml_line("anchor", joint.anchor)]
    if joint.axis is not None:
        out.append(_toml_line("axis", joint.axis))
    if joint.limits is not None:
        out.append(_toml_line("limits", joint.limits))
    if joint.motor_max is not None:
        speed_key, max_key = MOTOR_KEYS[joint.kind]
        out.append(f"motor = {{ {speed_key} = {joint.motor_speed!r}, "
                   f"{max_key} = {joint.motor_max!r} }}\n")
    for key, value in (("min", joint.min_length), ("max", joint.max_length),
                       ("rest_length", joint.rest_length), ("break_force", joint.break_force)):
        if value is not None:
            out.append(_toml_line(key, float(value)))
    for key in ("stiffness", "damping"):
        if getattr(joint, key):
            out.append(_toml_line(key, float(getattr(joint, key))))
    if joint.collide:
        out.append(_toml_line("collide", True))
    return out


def _toml_text(text: str) -> str:
    """A string as TOML writes it, quotes and escapes included."""
    return tomli_w.dumps({"k": text})[4:].strip()


def scene_from_snapshot(snapshot: Snapshot, records: dict[int, BodyRecord]) -> Scene:
    """The world of a snapshot as a ``Scene``: its settings and, for each body with a record,
    shape, density, inertia mode, mesh-origin pose, velocities, own materials and colour.
    Bodies still loading (no record yet) are left out, and so are the joints touching them.
    Joints are defined anew at the present poses (``def_at_present``); a jointed body without
    a scene name is given one (``body<id>``)."""
    view = snapshot.joints
    jointed = {int(b) for b in np.concatenate((view.first, view.second)) if b != WORLD}
    entries, index_of, taken = [], {}, {r.scene_name for r in records.values()}
    rows = [row for row, body_id in enumerate(snapshot.ids.tolist()) if body_id in records]
    positions, orientations = mesh_poses([records[int(snapshot.ids[row])].shape for row in rows],
                                         snapshot.pos[rows], snapshot.quat[rows])
    for k, row in enumerate(rows):
        body_id = int(snapshot.ids[row])
        record = records[body_id]
        name = record.scene_name
        if name is None and body_id in jointed:
            name = _free_name(f"body{body_id}", taken)
            taken.add(name)
        index_of[body_id] = len(entries)
        shape = record.shape
        placed = _still_placed(record.placement, snapshot, row)
        position, orientation, velocity, angular_velocity = (
            (positions[k], orientations[k], snapshot.vel[row], snapshot.omega[row])
            if placed is None else (placed.position, placed.orientation, placed.velocity,
                                    placed.angular_velocity))
        entries.append(BodyEntry(
            mesh=None if shape.kind else Path(record.source or shape.source), name=name,
            scale=shape.scale, shape=shape.kind, size=shape.size,
            # 12 digits: 1000, not 1000.0000000000001 from mass/volume (tidier file, and the
            # same eigen-decomposition when moments are equal, e.g. a cylinder's I2 = I3)
            density=float(f"{shape.density:.12g}"), inertia=record.inertia,
            position=_floats(position), orientation=_floats(orientation),
            velocity=_floats(velocity), angular_velocity=_floats(angular_velocity),
            restitution=_own(snapshot.body_restitution[row]),
            friction=_own(snapshot.body_friction[row]),
            color=None if record.color is None else _floats(record.color),
            static=bool(snapshot.static[row]), collision=record.collision))
    index_of[WORLD] = WORLD
    joints = []
    for k in range(len(view.ids)):
        first, second = int(view.first[k]), int(view.second[k])
        if first in index_of and second in index_of:
            joint = dataclasses.replace(def_at_present(view, k), first=index_of[first],
                                        second=index_of[second])
            joints.append(JointEntry(joint))
    return Scene(gravity=_floats(snapshot.gravity), hz=float(snapshot.hz),
                 restitution=snapshot.restitution, friction=snapshot.friction,
                 container_size=(None if snapshot.container_size is None
                                 else _floats(snapshot.container_size)),
                 bodies=tuple(entries), joints=tuple(joints))


def _still_placed(placement: Placement | None, snapshot: Snapshot, row: int) -> Placement | None:
    """``placement`` while the body in ``row`` of the snapshot is still in the state it made
    (a scene just opened, a history that starts there), else None."""
    if placement is None:
        return None
    now = state_bytes(snapshot.pos[row], snapshot.quat[row], snapshot.vel[row],
                      snapshot.ang_mom[row])
    return placement if now == placement.state else None


def _free_name(name: str, taken: set) -> str:
    """``name``, or ``name-2``, ``name-3`` … the first not in ``taken``."""
    candidate, number = name, 1
    while candidate in taken:
        number += 1
        candidate = f"{name}-{number}"
    return candidate


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
    """``key = value``: arrays of numbers or texts on one line (tomli_w would spread them over
    lines, harder to read and edit); everything else formatted by tomli_w."""
    if isinstance(value, (list, tuple, np.ndarray)):
        items = (_toml_text(v) if isinstance(v, str) else repr(float(v)) for v in value)
        return f"{key} = [{', '.join(items)}]\n"
    return tomli_w.dumps({key: value})


# --------------------------------------------------------------------------------------------
# Building


def build_world(scene: Scene, split: bool = True) -> tuple[World, list[BodyRecord]]:
    """A new ``World`` with the scene's settings and bodies, and one record per body (in order).
    split false: every mesh collides as its hull, its pieces left to the caller (the app finds
    them off its loader thread, docs/physics.md#convex-decomposition).

    Each mesh or builtin is loaded once per (source, density, mode) and shared by the bodies
    that use it. A shape that fails to load → ``SceneError`` naming the scene file, the body and
    the mesh error.
    """
    world = World(scene.world_def())
    records: list[BodyRecord] = []
    shapes: dict[tuple, Shape] = {}
    pieces: dict[tuple, tuple] = {}
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
            if key + (body.collision,) not in pieces:
                pieces[key + (body.collision,)] = (collision_pieces(shape, body.collision)
                                                   if split else ())
            body_pieces = pieces[key + (body.collision,)]
            body_def = shape.body_def(
                body.position, body.orientation, body.velocity, body.angular_velocity,
                restitution=body.restitution, friction=body.friction)
            body_def = dataclasses.replace(body_def, static=body.static, pieces=body_pieces)
            _check_inside(scene.container_size, body, body_def.position)
            body_id = world.add_body(body_def)
        except ValueError as e:  # MeshError, or a bad value in a Scene built in code
            raise SceneError(f"{where}{e}") from e
        s = world.state
        placement = Placement(body.position, body.orientation, body.velocity,
                              body.angular_velocity,
                              state_bytes(s.pos[-1], s.quat[-1], s.vel[-1], s.ang_mom[-1]))
        records.append(BodyRecord(body_id, display, source, body.color, shape, body.inertia,
                                  body.name, body.collision, body_pieces, placement))
    for index, entry in enumerate(scene.joints):
        joint = entry.joint
        ids = [WORLD if i == WORLD else records[i].body_id for i in (joint.first, joint.second)]
        try:
            world.add_joint(dataclasses.replace(joint, first=ids[0], second=ids[1]))
        except ValueError as e:
            raise SceneError(f"{_where(name, entry.line, ('joint', index))}{e}") from e
    return world, records


def collision_pieces(shape: Shape, collision: str) -> tuple[np.ndarray, ...]:
    """The convex pieces, body frame, a mesh shape collides as under ``collision`` (empty: its
    hull; docs/physics.md#convex-decomposition). A mesh the library fails on keeps its hull,
    with a warning naming it; ``"decomposed"`` for a mesh that is no closed solid is an error."""
    p = shape.properties
    solid = shape.kind is None and shape.radius == 0.0 and p.mode == "solid"
    if not solid:
        if collision == "decomposed":
            raise ValueError(f"{shape.name}: collision = \"decomposed\" needs a closed solid "
                             "mesh; this one collides as its hull")
        return ()
    if not needs_pieces(collision, shape.vertices, p.volume):
        return ()
    try:
        found = decompose(shape.name, shape.vertices, shape.faces, p.volume)
    except DecompositionError as e:
        log.warning("%s", e)
        return ()
    log.info("%s collides as %d pieces (%.0f %% over its volume, %.2f s%s)", shape.name,
             len(found.pieces), 100 * found.volume_excess, found.seconds,
             ", cached" if found.cached else "")
    return body_frame(found.pieces, p.center_of_mass, p.principal_axes)


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
