"""The recent past of a world: checkpoints, the command log, and a ring of poses
(docs/architecture.md#history).

The engine is deterministic: the same world given the same commands at the same step
boundaries computes the same bits. So the past is kept as

- a **checkpoint** (the whole ``World``: model, state with its warm-start, manifold and
  broad-phase caches, sleep timers, joints) every ``CHECKPOINT_INTERVAL`` of sim time, or
  sooner once the steps since the last one took ``CHECKPOINT_WORK`` of wall time (those early
  ones are kept for the last ``EARLY_KEPT`` s, and older ones while they fit ``EARLY_BYTES`` a
  body a second of history, the newest first, so they cost memory while they matter), taken
  right after a step and before the commands of that step boundary, all but the model pickled
  and compressed (a pile's contact caches are mostly empty hash slots: 3× smaller);
- the **log** of every command that changed the world, with the step boundary it was applied at;
- a **ring** of poses (positions and orientations, 14 bytes a body) every ``1 / RING_HZ`` s of
  sim time, for scrubbing without simulating.

Any past step is then exact: copy the checkpoint at or before it and re-run the logged commands
(``world_at``). Checkpoints share the model with the one before them while no command was
applied in between, so a quiet minute of 1 000 bodies costs state, not hulls. Pickle is safe
here: the bytes never leave the app (a clip's worker process, started by it, reads them).

The physics thread writes (``after_step``, ``log``, ``restart``, ``truncate``); any thread may
read (``span``, ``frame_at``, ``world_at``, ``nbytes``): the lock is held only while lists are
read or changed, and a checkpoint is never stepped (``world_at`` steps a copy of it).
"""

from __future__ import annotations

import bisect
import copy
import dataclasses
import pickle
import threading
import zlib
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from physics.settings import (
    CHECKPOINT_INTERVAL,
    CHECKPOINT_WORK,
    EARLY_BYTES,
    EARLY_KEPT,
    HISTORY_SECONDS,
    MAX_HISTORY_SECONDS,
    RING_HZ,
)
from physics.world import World

# the run controls a log also carries (not World methods): they change how the steps run
RUN_COMMANDS = ("set_hz",)
QUAT_SCALE = 32767.0  # a unit quaternion component in int16: steps of 3e-5, far below a pixel
POS_LEVELS = 65535.0  # int16 positions across a frame's bounding box: 0.06 mm over 4 m
COMPRESSION = 3       # zlib level of checkpoints: as small as 6 in half the time


@dataclass(frozen=True)
class LoggedCommand:
    """A command that changed the world: applied at the boundary after ``step`` steps, before
    the next one. ``name`` is a ``World`` method or a run control (``RUN_COMMANDS``)."""

    step: int
    name: str
    args: tuple = ()
    kwargs: dict = field(default_factory=dict)


@dataclass(frozen=True)
class Checkpoint:
    """The world after ``step`` steps (sim time ``time`` s, running at ``hz``), before that
    boundary's commands: its ``model`` (shared by checkpoints, never changed) and the rest of
    it ``packed`` (pickled, compressed); ``early``: taken before the interval had passed,
    because the steps were slow."""

    step: int
    time: float
    hz: float
    model: object
    packed: bytes
    early: bool = False

    def world(self) -> World:
        """A new World as it was (its own copy of the model)."""
        world = World.__new__(World)
        vars(world).update(pickle.loads(zlib.decompress(self.packed)))
        world.model = copy.deepcopy(self.model)
        return world


@dataclass(frozen=True)
class PoseFrame:
    """Poses of the bodies after ``step`` steps, at sim time ``time`` s: ids (n,) int64 (shared
    between frames while the bodies stay the same); pos (n, 3) uint16 levels between the
    frame's ``low`` and ``high`` corners (3,) m; quat (n, 4) int16 (w, x, y, z times
    ``QUAT_SCALE``)."""

    step: int
    time: float
    ids: np.ndarray
    low: np.ndarray
    high: np.ndarray
    pos: np.ndarray
    quat: np.ndarray

    def positions(self) -> np.ndarray:
        """(n, 3) float64 centres of mass, m."""
        return self.low + self.pos * ((self.high - self.low) / POS_LEVELS)

    def orientations(self) -> np.ndarray:
        """(n, 4) float64 unit quaternions."""
        quat = self.quat.astype(float)
        return quat / np.linalg.norm(quat, axis=1, keepdims=True)


def apply_command(world: World, command: LoggedCommand, hz: float) -> float:
    """Apply one logged command to ``world``; returns the physics rate after it."""
    if command.name == "set_hz":
        return float(command.args[0])
    getattr(world, command.name)(*command.args, **command.kwargs)
    return hz


def run_log(world: World, hz: float, step: int, until: int, commands) -> float:
    """Step ``world`` (after ``step`` steps, at ``hz``) to ``until`` steps, applying each of
    ``commands`` (LoggedCommand, in order) at its boundary; returns the rate in effect. The
    commands at ``until`` itself are not applied."""
    pending = [c for c in commands if step <= c.step < until]
    k = 0
    while step < until:
        while k < len(pending) and pending[k].step == step:
            hz = apply_command(world, pending[k], hz)
            k += 1
        batch_end = pending[k].step if k < len(pending) else until
        world.advance(1.0 / hz, batch_end - step)
        step = batch_end
    return hz


def check_history_seconds(seconds) -> float:
    """History length in s, (0, MAX_HISTORY_SECONDS]."""
    try:
        seconds = float(seconds)
    except (TypeError, ValueError):
        raise ValueError(f"history length must be a number of seconds, got {seconds!r}") from None
    if not 0.0 < seconds <= MAX_HISTORY_SECONDS:
        raise ValueError(f"history length must be between 0 and {MAX_HISTORY_SECONDS:g} s, "
                         f"got {seconds}")
    return seconds


class History:
    """The last ``seconds`` of sim time of one world (see the module docstring).

    Starts from ``world`` after ``step`` steps at ``hz``; the physics thread then calls
    ``after_step`` after every step and ``log`` after every command that changed the world.
    """

    def __init__(self, world: World, step: int, hz: float, seconds: float = HISTORY_SECONDS,
                 ring_hz: float = RING_HZ):
        self._lock = threading.RLock()  # restart holds it through its first checkpoint
        self._seconds = check_history_seconds(seconds)
        self._ring_dt = 1.0 / float(ring_hz)
        self.restart(world, step, hz)

    # ---- writing (the physics thread) ---------------------------------------------------
    def restart(self, world: World, step: int, hz: float) -> None:
        """Forget everything: the history starts again at ``world`` (a reset, a new scene)."""
        with self._lock:  # a reader (the timeline, on the render thread) never sees it empty
            self._checkpoints: list[Checkpoint] = []
            self._commands: list[LoggedCommand] = []
            self._frames: list[PoseFrame] = []
            self._frame_times: list[float] = []
            self._model_copy = None  # the last checkpoint's model, while no command changed it
            self._checkpoint(world, step, hz)
            self._add_frame(world, step)

    def after_step(self, world: World, step: int, hz: float, cost: float = 0.0) -> None:
        """Called after each step (which took ``cost`` s of wall time): a checkpoint when the
        interval has passed or the steps since the last one cost ``CHECKPOINT_WORK``, a ring
        frame at each tick of the ring."""
        now = world.state.time
        self._work += cost
        if now >= self._frame_due():
            self._add_frame(world, step)
        due = now >= self._checkpoint_due()
        if due or self._work >= CHECKPOINT_WORK:
            self._checkpoint(world, step, hz, early=not due)
            self._trim(now, EARLY_BYTES * world.model.count * self._seconds)

    def steps_until_due(self, time: float, dt: float, limit: int) -> int:
        """How many steps of dt from sim time ``time`` s reach the next ring frame or
        checkpoint, at most ``limit`` (≥ 1): the physics thread runs them as one batch and
        calls ``after_step`` at its end, so every frame and checkpoint lands on the step it
        would have one step at a time. The times are summed as the step sums them."""
        due = min(self._frame_due(), self._checkpoint_due())
        steps = 1
        time += dt
        while time < due and steps < limit:
            time += dt
            steps += 1
        return steps

    def _frame_due(self) -> float:
        """Sim time s from which the next ring frame is kept (a rounding's worth early)."""
        return self._frame_times[-1] + self._ring_dt * (1.0 - 1e-9)

    def _checkpoint_due(self) -> float:
        """Sim time s from which the next checkpoint is due by the interval."""
        return self._checkpoints[-1].time + CHECKPOINT_INTERVAL * (1.0 - 1e-9)

    def log(self, step: int, name: str, args: tuple = (), kwargs: dict | None = None) -> None:
        """A command applied at the boundary after ``step`` steps changed the world."""
        command = LoggedCommand(step, name, copy.deepcopy(tuple(args)),
                                copy.deepcopy(dict(kwargs or {})))
        with self._lock:
            self._commands.append(command)
            self._model_copy = None  # the model may have changed: the next checkpoint copies it

    def truncate(self, step: int) -> None:
        """Drop the future after ``step`` steps (a branch): checkpoints and frames after it,
        and the commands at its boundary and later."""
        with self._lock:
            self._checkpoints = [c for c in self._checkpoints if c.step <= step]
            self._commands = [c for c in self._commands if c.step < step]
            keep = bisect.bisect_right([f.step for f in self._frames], step)
            del self._frames[keep:], self._frame_times[keep:]
            self._model_copy = None

    def set_seconds(self, seconds) -> None:
        """History length in s of sim time (validated; up to MAX_HISTORY_SECONDS)."""
        self._seconds = check_history_seconds(seconds)

    def _checkpoint(self, world: World, step: int, hz: float, early: bool = False) -> None:
        model = self._model_copy if self._model_copy is not None else copy.deepcopy(world.model)
        # a deep copy first: it leaves out what a copy must not keep (the joints' factors)
        rest = copy.deepcopy({k: v for k, v in vars(world).items() if k != "model"})
        packed = zlib.compress(pickle.dumps(rest, protocol=pickle.HIGHEST_PROTOCOL), COMPRESSION)
        with self._lock:
            self._checkpoints.append(Checkpoint(step, float(world.state.time), float(hz), model,
                                                packed, early))
            self._model_copy = model
            self._work = 0.0

    def _add_frame(self, world: World, step: int) -> None:
        s = world.state
        ids = world.ids
        if self._frames and np.array_equal(self._frames[-1].ids, ids):
            ids = self._frames[-1].ids
        else:
            ids = ids.copy()
        low = s.pos.min(axis=0) if len(s.pos) else np.zeros(3)
        high = np.maximum(s.pos.max(axis=0), low + 1e-9) if len(s.pos) else np.ones(3)
        levels = np.round((s.pos - low) * (POS_LEVELS / (high - low))).astype(np.uint16)
        quat = np.round(s.quat * QUAT_SCALE).astype(np.int16)
        if self._frames and ids is self._frames[-1].ids:
            # a world at rest (asleep, or paused) gives the same frame 60 times a second: share
            # the last frame's arrays, so a settled scene's ring costs next to nothing
            last = self._frames[-1]
            if np.array_equal(last.low, low) and np.array_equal(last.high, high):
                low, high = last.low, last.high
                if np.array_equal(last.pos, levels):
                    levels = last.pos
                if np.array_equal(last.quat, quat):
                    quat = last.quat
        frame = PoseFrame(step, float(s.time), ids, low, high, levels, quat)
        with self._lock:
            self._frames.append(frame)
            self._frame_times.append(frame.time)

    def _trim(self, now: float, early_bytes: float) -> None:
        """Keep the newest checkpoint at or before ``now − seconds`` and everything after it,
        less the early checkpoints older than ``EARLY_KEPT`` beyond the newest of them whose
        packed bytes fit ``early_bytes``."""
        with self._lock:
            held, kept = 0, []
            for c in reversed(self._checkpoints[1:]):
                if c.early and c.time < now - EARLY_KEPT:
                    held += len(c.packed)
                    if held > early_bytes:
                        continue
                kept.append(c)
            self._checkpoints[1:] = kept[::-1]
            start = 0
            while (start + 1 < len(self._checkpoints)
                   and self._checkpoints[start + 1].time <= now - self._seconds):
                start += 1
            if start == 0:
                return
            del self._checkpoints[:start]
            first = self._checkpoints[0]
            self._commands = [c for c in self._commands if c.step >= first.step]
            drop = bisect.bisect_left(self._frame_times, first.time)
            del self._frames[:drop], self._frame_times[:drop]

    # ---- reading (any thread) -----------------------------------------------------------
    @property
    def seconds(self) -> float:
        return self._seconds

    def span(self) -> tuple[Checkpoint, int, float]:
        """(the first checkpoint, the newest step and its sim time s) of the history."""
        with self._lock:
            last = self._frames[-1]
            return self._checkpoints[0], last.step, last.time

    def commands(self) -> list[LoggedCommand]:
        """The logged commands from the history's start on, in the order applied."""
        with self._lock:
            return list(self._commands)

    def frame_at(self, time: float) -> PoseFrame:
        """The ring frame nearest to sim time ``time`` s (clamped to the history)."""
        with self._lock:
            k = bisect.bisect_left(self._frame_times, time)
            if k == len(self._frames):
                return self._frames[-1]
            if k > 0 and time - self._frame_times[k - 1] < self._frame_times[k] - time:
                k -= 1
            return self._frames[k]

    def frames(self) -> list[PoseFrame]:
        with self._lock:
            return list(self._frames)

    def step_at(self, time: float) -> int:
        """The step whose sim time is nearest to ``time`` s within the history (from the
        checkpoints' times and rates: exact while the rate did not change between them)."""
        with self._lock:
            times = [c.time for c in self._checkpoints]
            k = max(bisect.bisect_right(times, time) - 1, 0)
            start = self._checkpoints[k]
            rates = [c for c in self._commands if c.name == "set_hz" and c.step >= start.step]
            last = self._frames[-1].step
        step, t, hz = start.step, start.time, start.hz
        for change in rates:  # walk the rate changes after the checkpoint
            reach = t + (change.step - step) / hz
            if time < reach:
                break
            step, t, hz = change.step, reach, float(change.args[0])
        return int(min(max(step + round((time - t) * hz), start.step), last))

    def checkpoint_at(self, step: int) -> tuple[Checkpoint, list[LoggedCommand]]:
        """The checkpoint at or before ``step`` and the commands logged from it on: all that
        re-runs that step and the ones after it (both pickle, for a clip's own process)."""
        with self._lock:
            first, last = self._checkpoints[0].step, self._frames[-1].step
            if not first <= step <= last:
                raise ValueError(f"step {step} is outside the history (steps {first}…{last})")
            k = bisect.bisect_right([c.step for c in self._checkpoints], step) - 1
            start = self._checkpoints[k]
            return start, [c for c in self._commands if c.step >= start.step]

    def world_at(self, step: int) -> tuple[World, float]:
        """A new ``World`` exactly as it was after ``step`` steps (before that boundary's
        commands), and the physics rate then: the checkpoint at or before it, re-run."""
        start, commands = self.checkpoint_at(step)
        world = start.world()
        hz = run_log(world, start.hz, start.step, step, commands)
        return world, hz

    def nbytes(self) -> int:
        """Bytes of data the history holds (checkpoints, ring, logged arguments), each array
        counted once however many checkpoints share it."""
        with self._lock:
            held = (self._checkpoints, self._frames, self._commands)
            return _array_bytes(held, set())


class NoHistory:
    """What a run that never looks back keeps instead of a ``History`` (``Simulation(…,
    history=False)``: ``tumble record``, a clip's own re-run): nothing, and no checkpoint,
    frame or copied argument per step (a history costs 0.2–0.6 ms a step at 1 000 bodies).
    Going back is refused."""

    seconds = 0.0

    def restart(self, world: World, step: int, hz: float) -> None:
        pass

    def after_step(self, world: World, step: int, hz: float, cost: float = 0.0) -> None:
        pass

    def steps_until_due(self, time: float, dt: float, limit: int) -> int:
        return limit

    def log(self, step: int, name: str, args: tuple = (), kwargs: dict | None = None) -> None:
        pass

    def truncate(self, step: int) -> None:
        pass

    def set_seconds(self, seconds) -> None:
        raise ValueError("this simulation keeps no history")

    def world_at(self, step: int) -> tuple[World, float]:
        raise ValueError("this simulation keeps no history to go back to")


def _array_bytes(value: Any, seen: set) -> int:
    """Bytes of the numpy arrays and byte strings reachable from ``value`` through
    dataclasses, named tuples, containers and plain objects; each array once (by identity,
    views by their base)."""
    if id(value) in seen:
        return 0
    seen.add(id(value))
    if isinstance(value, np.ndarray):
        base = value
        while isinstance(base.base, np.ndarray):
            base = base.base
        if base is not value:
            return _array_bytes(base, seen)
        return value.nbytes
    if isinstance(value, bytes):
        return len(value)
    if isinstance(value, dict):
        return sum(_array_bytes(v, seen) for v in value.values())
    if isinstance(value, (list, tuple, set, frozenset)):
        return sum(_array_bytes(v, seen) for v in value)
    if dataclasses.is_dataclass(value) or hasattr(value, "__dict__"):
        return sum(_array_bytes(v, seen) for v in vars(value).values())
    return 0
