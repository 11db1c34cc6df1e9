"""Replay files: a scene and the commands sent to it, each at its step
(docs/architecture.md#replays).

A replay is a scene file (``[world]``, ``[container]``, ``[[body]]``, ``[[joint]]``, read by
physics/scene.py) plus ``[[command]]`` tables, in the order they were applied::

    [[command]]
    step = 200                    # applied after this many steps, before the next
    name = "apply_impulse"        # a World method the history logs, or "set_hz"
    body_id = 1                   # its arguments by name
    impulse = [0.0, 4.0, 1.0]

A ``BodyDef`` or ``JointDef`` argument is an inline table of its fields; ``"none"`` stands for
Python's None (TOML has no null) where it is not the argument's default. Floats are written
with every digit, so the world built from the scene and given the commands at their steps
computes the same bits as the run the history recorded. Every table and key is checked when
read: an error names the file, the line and the key.
"""

from __future__ import annotations

import dataclasses
import inspect
import math
import re
from collections import deque
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import tomli_w

from physics.constraints.joint import WORLD, JointDef
from physics.history import History, LoggedCommand, apply_command
from physics.model import BodyDef
from physics.scene import (
    BodyRecord,
    Scene,
    SceneError,
    _Reader,
    read_toml,
    save_scene,
    scene_from_snapshot,
)
from physics.simulation import Scripted, Simulation, Snapshot
from physics.world import World

# the commands a replay may hold: what the physics thread logs (physics/simulation.py)
COMMANDS = ("add_body", "remove_body", "clear", "add_group", "add_joint", "remove_joint",
            "edit_joint", "set_gravity", "set_container", "set_solver_iterations",
            "set_restitution", "set_friction", "set_body_material", "apply_impulse",
            "set_external_force", "set_body_state", "set_static", "set_pieces", "set_grab",
            "clear_grab", "set_hz")
NONE = "none"  # how None is written
# arguments that are definitions, read back into their classes
_DEFINITIONS = {"body": BodyDef, "bodies": BodyDef, "joint": JointDef, "joints": JointDef}


@dataclass(frozen=True)
class Replay:
    """A scene and the commands sent to the world built from it, in order (``lines``: the
    line of each ``[[command]]`` header, for messages)."""

    scene: Scene
    commands: tuple[LoggedCommand, ...]
    lines: tuple[int | None, ...] = ()


def _parameters(name: str) -> dict[str, inspect.Parameter]:
    """The arguments a command takes, by name (the World method's, or set_hz's)."""
    method = Simulation.set_hz if name == "set_hz" else getattr(World, name)
    params = dict(inspect.signature(method).parameters)
    params.pop("self")
    return params


# --------------------------------------------------------------------------------------------
# Writing


def save_replay(path, scene: Scene, history: History) -> None:
    """Write the history as a replay of ``scene``: the history must start at the world
    ``build_world(scene)`` made, before any step (a reset or a scene just opened)."""
    first, _, _ = history.span()
    if first.step != 0 or first.time != 0.0:
        raise ValueError(f"the history starts {first.time:.3f} s into the run, not at the "
                         "scene; a replay starts at its scene")
    write_replay(path, Replay(scene, tuple(history.commands())))


def history_replay(history: History, records: dict[int, BodyRecord]) -> Replay:
    """The history as a replay wherever it starts (the app's "Save replay"): the world at its
    first checkpoint written as a scene (``scene_from_snapshot``: poses, velocities,
    materials, joints at that moment; ``records``: body id → BodyRecord, one for every body),
    then the commands logged since, their steps counted from there and their body and joint
    ids renumbered as the scene's world numbers them.

    Exact while the history starts at a scene just opened (its bodies are written as the
    scene placed them: ``Placement``); from a moment mid-run, a pose read back through a
    mesh's frame is exact only to rounding and what a scene cannot hold (contact caches, sleep
    timers) starts afresh too, so a chaotic run drifts from the live one."""
    while True:  # the start and the log of one moment (the physics thread trims both)
        first, _, _ = history.span()
        logged = history.commands()
        if history.span()[0] is first:
            break
    world = first.world()
    missing = [int(i) for i in world.ids if int(i) not in records]
    if missing:
        raise ValueError(f"body #{missing[0]} is still loading; save the replay once it is in")
    snapshot = Simulation(world, hz=first.hz, history=False).latest()
    scene = scene_from_snapshot(snapshot, records)
    # a mesh still colliding as its hull then gets its pieces from a logged set_pieces
    entries = tuple(dataclasses.replace(entry, collision="hull")
                    if entry.mesh is not None and not world.model.compound[row] else entry
                    for row, entry in enumerate(scene.bodies))
    scene = dataclasses.replace(scene, bodies=entries)
    bodies = _renumbering(world.ids, world._next_id)
    joints = _renumbering(world.joint_view().ids, world.joints.next_id)
    commands = tuple(_renumbered(c, first.step, bodies, joints) for c in logged)
    return Replay(scene, commands)


def _renumbering(present, next_id: int):
    """old id → new id: the ids ``present`` (in order) become 0, 1, …; ids made later (from
    ``next_id`` on) follow on, as both worlds count them alike."""
    index = {int(old): new for new, old in enumerate(present)}
    return lambda old: index[int(old)] if int(old) in index else int(old) - next_id + len(index)


def _renumbered(command: LoggedCommand, start: int, bodies, joints) -> LoggedCommand:
    params = [n for n, p in _parameters(command.name).items()
              if p.kind is not inspect.Parameter.VAR_KEYWORD]
    values = dict(zip(params, command.args))
    values.update(command.kwargs)
    if values.get("body_id") is not None:
        values["body_id"] = bodies(values["body_id"])
    if values.get("joint_id") is not None:
        values["joint_id"] = joints(values["joint_id"])
    if isinstance(values.get("joint"), JointDef):
        joint = values["joint"]
        ends = {end: getattr(joint, end) for end in ("first", "second")}
        values["joint"] = dataclasses.replace(joint, **{
            end: WORLD if body == WORLD else bodies(body) for end, body in ends.items()})
    args = tuple(values.pop(name) for name in params if name in values)
    return LoggedCommand(command.step - start, command.name, args, values)


def scripted(replay: Replay) -> tuple[Scripted, ...]:
    """The replay's commands for ``Simulation.open``, each with its ``file:line``."""
    lines = replay.lines or (None,) * len(replay.commands)
    return tuple(Scripted(c, f"{replay.scene.source}:{line or '?'}")
                 for c, line in zip(replay.commands, lines))


def write_replay(path, replay: Replay) -> None:
    """Write a replay file: the scene as ``save_scene`` writes it, then its commands."""
    path = Path(path)
    save_scene(replay.scene, path)
    out = ["\n# commands, each applied after `step` steps (README \"Replay files\")\n"]
    for command in replay.commands:
        out += ["\n[[command]]\n", f"step = {command.step}\n", f"name = {_value(command.name)}\n"]
        params = _parameters(command.name)
        names = [n for n, p in params.items() if p.kind is not inspect.Parameter.VAR_KEYWORD]
        values = dict(zip(names, command.args))
        values.update(command.kwargs)
        for key, value in values.items():
            default = params[key].default if key in params else inspect.Parameter.empty
            if default is not inspect.Parameter.empty and _same(value, default):
                continue
            out.append(f"{key} = {_value(value)}\n")
    with open(path, "a", encoding="utf-8") as f:
        f.write("".join(out))


def _same(value, default) -> bool:
    if value is default:
        return True
    try:
        return bool(np.array_equal(value, default))
    except Exception:
        return False


def _value(value) -> str:
    """A value in TOML, one line, floats with every digit."""
    if value is None:
        return f'"{NONE}"'
    if isinstance(value, (bool, np.bool_)):
        return "true" if value else "false"
    if isinstance(value, (int, np.integer)):
        return str(int(value))
    if isinstance(value, (float, np.floating)):
        return repr(float(value))
    if isinstance(value, str):
        return tomli_w.dumps({"v": value})[4:].strip()
    if isinstance(value, (BodyDef, JointDef)):
        fields = {f.name: getattr(value, f.name) for f in dataclasses.fields(value)}
        return "{ " + ", ".join(f"{k} = {_value(v)}" for k, v in fields.items()) + " }"
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{k} = {_value(v)}" for k, v in value.items()) + " }"
    if isinstance(value, (list, tuple, np.ndarray)):
        return "[" + ", ".join(_value(v) for v in value) + "]"
    raise ValueError(f"a replay cannot hold {type(value).__name__} values ({value!r})")


# --------------------------------------------------------------------------------------------
# Reading


def is_replay(data: dict) -> bool:
    """Whether parsed TOML is a replay (it has commands) rather than a plain scene."""
    return "command" in data


def load_replay(path) -> Replay:
    """Read and check a replay (or a plain scene: no commands); ``SceneError`` naming the
    file, the line and the key of the first problem."""
    path, text, data = read_toml(path)
    scene = _Reader(path, text).scene({k: v for k, v in data.items() if k != "command"})
    tables = data.get("command", [])
    lines = _command_lines(text)
    if not (isinstance(tables, list) and all(isinstance(t, dict) for t in tables)):
        raise SceneError(f"{path}:{lines[0][0] if lines else 1}: commands are written as "
                         "[[command]] tables, one per command")
    commands, previous = [], 0
    for index, table in enumerate(tables):
        header, keys = lines[index] if index < len(lines) else (None, {})
        command = _command(table, lambda key, problem: SceneError(
            f"{path}:{keys.get(key, header) or '?'}: [[command]] #{index + 1}: "
            + (f"{key}: " if key else "") + problem))
        if command.step < previous:
            raise SceneError(f"{path}:{keys.get('step', header)}: [[command]] #{index + 1}: "
                             f"step: {command.step} comes before the previous command's "
                             f"{previous}; commands are in the order applied")
        previous = command.step
        commands.append(command)
    return Replay(scene, tuple(commands), tuple(h for h, _ in lines[:len(commands)]))


def _command(table: dict, error) -> LoggedCommand:
    step = table.get("step")
    if not isinstance(step, int) or isinstance(step, bool) or step < 0:
        raise error("step", f"step must be a whole number ≥ 0, got {step!r}")
    name = table.get("name")
    if name not in COMMANDS:
        raise error("name", f"name must be one of {', '.join(COMMANDS)}, got {name!r}")
    params = _parameters(name)
    keyword = next((p for p in params.values() if p.kind is inspect.Parameter.VAR_KEYWORD),
                   None)
    args, kwargs = [], {}
    for key, value in table.items():
        if key in ("step", "name"):
            continue
        if key not in params and keyword is None:
            raise error(key, f"{name} takes no {key!r}; it takes "
                        f"{', '.join(params) or 'no arguments'}")
        try:
            value = _read_value(key, value)
        except (TypeError, ValueError) as e:
            raise error(key, str(e)) from None
        kwargs[key] = value
    for key, param in params.items():
        if param.kind is inspect.Parameter.VAR_KEYWORD:
            continue
        if key in kwargs:
            args.append(kwargs.pop(key))
        elif param.default is inspect.Parameter.empty:
            raise error(None, f"{name} needs {key!r}")
        else:
            args.append(param.default)
    return LoggedCommand(step, name, tuple(args), kwargs)


def _read_value(key: str, value):
    if value == NONE:
        return None
    if key in _DEFINITIONS:
        kind = _DEFINITIONS[key]
        if key.endswith("s"):
            if not isinstance(value, list):
                raise ValueError(f"{key} must be a list of tables")
            return [_definition(kind, v) for v in value]
        return _definition(kind, value)
    if isinstance(value, dict):
        raise ValueError(f"{key} must be a number, a list or \"{NONE}\", not a table")
    return value


def _definition(kind, value):
    if not isinstance(value, dict):
        raise ValueError(f"a {kind.__name__} is written as a table of its fields")
    fields = {f.name for f in dataclasses.fields(kind)}
    unknown = sorted(set(value) - fields)
    if unknown:
        raise ValueError(f"a {kind.__name__} has no field {unknown[0]!r}; its fields: "
                         f"{', '.join(sorted(fields))}")
    return kind(**{k: None if v == NONE else v for k, v in value.items()})


_HEADER = re.compile(r"\s*\[\[\s*command\s*\]\]")
_OTHER_HEADER = re.compile(r"\s*\[")
_KEY = re.compile(r"\s*([A-Za-z0-9_-]+)\s*=")


def _command_lines(text: str) -> list[tuple[int, dict[str, int]]]:
    """(header line, {key: line}) of each ``[[command]]`` table, in order."""
    found: list[tuple[int, dict[str, int]]] = []
    inside = False
    for number, line in enumerate(text.splitlines(), start=1):
        if _HEADER.match(line):
            found.append((number, {}))
            inside = True
        elif _OTHER_HEADER.match(line):
            inside = False
        elif inside and (key := _KEY.match(line)):
            found[-1][1].setdefault(key[1], number)
    return found


# --------------------------------------------------------------------------------------------
# Running


class Schedule:
    """Feeds a replay's commands to a world or a ``Simulation`` at their steps."""

    def __init__(self, commands, lines=(), source: Path | None = None):
        """commands: LoggedCommand in order; lines: each one's line in ``source`` (messages)."""
        commands = tuple(commands)
        self._pending = deque(zip(commands, tuple(lines) or (None,) * len(commands)))
        self._source = source

    @classmethod
    def of(cls, replay: Replay) -> Schedule:
        return cls(replay.commands, replay.lines, replay.scene.source)

    def apply_due(self, world: World, step: int, hz: float) -> float:
        """Apply to ``world`` the commands due after ``step`` steps; returns the rate after."""
        while self._pending and self._pending[0][0].step == step:
            command, line = self._pending.popleft()
            try:
                hz = apply_command(world, command, hz)
            except ValueError as e:
                raise SceneError(f"{self._source}:{line or '?'}: [[command]] {command.name}: "
                                 f"{e}") from None
        return hz

    def next_step(self, after: int) -> float:
        """The step of the next command due after ``after`` steps (inf when none is)."""
        for command, _ in self._pending:
            if command.step > after:
                return command.step
        return math.inf

    def run_steps(self, sim: Simulation, n: int) -> Snapshot:
        """``sim.run_steps(n)`` with each command submitted at its step."""
        step = sim.latest().step
        end = step + n
        snapshot = sim.latest()
        while True:
            while self._pending and self._pending[0][0].step == step:
                command, _ = self._pending.popleft()
                getattr(sim, command.name)(*command.args, **command.kwargs)
            until = min(self._pending[0][0].step, end) if self._pending else end
            snapshot = sim.run_steps(until - step)
            step = until
            if step >= end:
                return snapshot
