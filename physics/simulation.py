"""The physics thread: fixed steps against wall time, a command queue, and snapshot hand-off.

docs/architecture.md#threads: a ``Simulation`` owns its ``World``.
Other threads never touch the world; they send commands (one method per World mutator, plus run
controls), which are applied between steps in arrival order, and they read immutable
``Snapshot``s that the thread publishes after each batch of steps by swapping a reference.

Timing (MuJoCo's ``simulate`` viewer: step until sim time catches up with wall time, but only for
a fraction of a frame, and re-sync instead of chasing a large lag):

- ``dt = 1/hz`` is fixed; wall time (``time.perf_counter``) only decides *how many* steps run,
  never their length, so the threaded run computes exactly what ``run_steps`` computes offline.
- The thread owes ``time_scale × elapsed wall time`` of sim time. It wakes when a step is owed
  (but at most ``publish_hz`` times a second, because building a snapshot of many bodies costs
  about as much as a step) or when a command arrives.
- Catch-up budget: a batch runs the whole steps owed, but at most ``CATCH_UP`` times the steps one
  publish interval needs and for at most ``batch_budget`` seconds of wall time (default 70 % of the
  publish interval, MuJoCo's ``simRefreshFraction``), leaving the rest to the render thread.
- Steps still owed after a batch mark the snapshot ``behind``. If the lag exceeds ``max_lag``
  seconds of wall time (MuJoCo's ``syncMisalign``: 0.1 s) the debt is dropped and counted in
  ``time_dropped``: an overloaded world runs in slow motion instead of spiralling.

Commands return a ``concurrent.futures.Future`` that carries the result (the new body id for
``add_body``) or the exception. A future resolves only after a snapshot that includes the command's
effect has been published. Done-callbacks run on the physics thread in arrival order; keep them
short. A failing command is rolled back (the world is restored from a copy taken just before it),
recorded in ``Snapshot.errors`` and logged; the thread keeps running.
"""

from __future__ import annotations

import collections
import copy
import logging
import math
import queue
import reprlib
import threading
import time
from concurrent.futures import Future
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from physics.constraints.joint import JointDef
from physics.constraints.view import JointView
from physics.history import History, LoggedCommand, NoHistory, check_history_seconds
from physics.model import BodyDef, check_number
from physics.runtime import configure, use_threads
from physics.settings import CATCH_UP, ERROR_HISTORY, MAX_HZ, MAX_TIME_SCALE, MIN_HZ, MIN_TIME_SCALE
from physics.world import World

log = logging.getLogger(__name__)


_WAKE = object()  # queue token that only wakes the thread (stop() puts one)
_short = reprlib.Repr()  # argument descriptions for error reports (keyword form needs 3.12)
_short.maxstring = _short.maxother = 40
_describe = _short.repr


@dataclass(frozen=True)
class CommandError:
    """A command that failed and was rolled back.

    seq: its number in arrival order (from 0; −1 for what no command caused: a step that
    failed, which pauses the simulation, or a body that went non-finite and was removed);
    step: the step count when it was applied;
    command: a short description such as ``set_restitution(-0.5, None)``;
    message: ``"<ExceptionType>: <message>"``.
    """

    seq: int
    step: int
    command: str
    message: str


@dataclass(frozen=True)
class BrokenJoint:
    """A joint that broke past its break force: ``number`` counts breaks from 0 (a reader
    tells new ones by it), ``step`` is the step count of the first snapshot without it, and
    ``joint`` its definition (``JointDef``) when it broke."""

    number: int
    step: int
    joint_id: int
    joint: JointDef


@dataclass(frozen=True, eq=False)
class Snapshot:
    """Immutable state of the world after one batch of steps; every array is a read-only copy
    taken at the same step boundary.

    time            s, sim time of the state
    step            steps taken since construction (reset restores the reset point's count)
    wall_time       s, the ``time.perf_counter()`` instant at which this sim time was due:
                    while running, ``time + time_dropped = time_scale × wall_time + const``
                    holds exactly, so a renderer can interpolate two snapshots by wall time
                    without jitter. Two snapshots with the same wall_time show the same sim
                    time (a command was applied in between).
    ids (n,)        stable body ids, row order of every per-body array
    pos (n,3)       centre of mass, world, m
    quat (n,4)      w, x, y, z: principal frame → world
    vel (n,3)       m/s, world
    omega (n,3)     angular velocity, world, rad/s
    ang_mom (n,3)   angular momentum about the centre of mass, world, kg·m²/s
    omega_body (n,3)  angular velocity in the principal frame (moments ascending), rad/s
    kinetic (n,)    kinetic energy, J;  potential (n,) gravitational potential energy, J
    body_restitution (n,), body_friction (n,)  each body's own material, NaN → the world default
                    (the physics thread owns them: whoever shows or saves them reads them here)
    contact_points (k,3), contact_normals (k,3): contacts that carried load in the last step, m
    gravity (3,) m/s²; container_size (3,) m or None; restitution, friction: world defaults;
    solver_iterations: sequential-impulse sweeps per step; asleep (n,) bool: sleeping bodies;
    static (n,) bool: scenery that never moves (``Simulation.set_static``)
    paused, time_scale, hz: run controls in effect
    behind          the last batch ended with whole steps still owed (sim time lags wall time)
    time_dropped    s of sim time given up so far to stay real-time (see module docstring)
    errors          the most recent failed commands, oldest first
    joints          ``JointView``: every joint now (anchors, axes, reactions, violations), its
                    arrays read-only
    broken_joints   the most recent joints broken by their break force, oldest first
    """

    time: float
    step: int
    wall_time: float
    ids: np.ndarray
    pos: np.ndarray
    quat: np.ndarray
    vel: np.ndarray
    omega: np.ndarray
    ang_mom: np.ndarray
    omega_body: np.ndarray
    kinetic: np.ndarray
    potential: np.ndarray
    body_restitution: np.ndarray
    body_friction: np.ndarray
    contact_points: np.ndarray
    contact_normals: np.ndarray
    gravity: np.ndarray
    container_size: np.ndarray | None
    restitution: float
    friction: float
    solver_iterations: int
    asleep: np.ndarray
    static: np.ndarray
    paused: bool
    time_scale: float
    hz: float
    behind: bool
    time_dropped: float
    errors: tuple[CommandError, ...]
    joints: JointView
    broken_joints: tuple[BrokenJoint, ...]

    @property
    def dt(self) -> float:
        """The fixed step, s."""
        return 1.0 / self.hz


@dataclass(frozen=True)
class Scripted:
    """A replay's command for ``Simulation.open``: a ``LoggedCommand`` (applied after its
    ``step`` steps) and where it was written (``file:line``, for messages)."""

    command: LoggedCommand
    where: str = "replay"


@dataclass
class _Command:
    seq: int
    text: str                 # description for error reports
    apply: Callable[[], Any]  # runs on the physics thread; its return value is the result
    future: Future
    touches_world: bool       # roll the world back if it raises


def world_fields(w: World) -> dict:
    """The ``Snapshot`` fields the world alone decides (its time, bodies, contacts, settings,
    joints), each a read-only copy: the thread's snapshots and a past moment re-run from the
    history (``History.world_at``) read a world the same way."""
    s, settings = w.state, w.model.settings
    points, normals = w.contact_points()
    joints = w.joint_view()
    joints = joints._replace(**{name: _read_only(getattr(joints, name))
                                for name in joints._fields if name != "defs"})
    ids = np.array(w.ids, copy=True)
    ids.flags.writeable = False
    return dict(
        time=float(s.time), ids=ids,
        pos=_frozen(s.pos), quat=_frozen(s.quat), vel=_frozen(s.vel),
        omega=_frozen(w.angular_velocity()), ang_mom=_frozen(s.ang_mom),
        omega_body=_frozen(w.body_angular_velocity()),
        kinetic=_frozen(w.kinetic_energy()), potential=_frozen(w.potential_energy()),
        body_restitution=_frozen(w.model.restitution), body_friction=_frozen(w.model.friction),
        contact_points=_frozen(points), contact_normals=_frozen(normals),
        gravity=_frozen(settings.gravity),
        container_size=(None if settings.container_size is None
                        else _frozen(settings.container_size)),
        restitution=float(settings.restitution), friction=float(settings.friction),
        solver_iterations=int(settings.solver_iterations), asleep=_frozen(w.asleep()),
        static=_read_only(w.model.static), joints=joints)


def _frozen(values) -> np.ndarray:
    arr = np.array(values, dtype=float, copy=True)
    arr.flags.writeable = False
    return arr


def _read_only(values: np.ndarray) -> np.ndarray:
    arr = np.array(values, copy=True)
    arr.flags.writeable = False
    return arr


def _check_hz(hz) -> float:
    hz = check_number("physics rate hz", hz)
    if not MIN_HZ <= hz <= MAX_HZ:  # also refuses NaN
        raise ValueError(f"physics rate hz must be between {MIN_HZ:g} and {MAX_HZ:g} Hz, got {hz}")
    return hz


def _check_time_scale(scale) -> float:
    scale = check_number("time scale", scale)
    if not MIN_TIME_SCALE <= scale <= MAX_TIME_SCALE:
        raise ValueError(
            f"time scale must be between {MIN_TIME_SCALE} and {MAX_TIME_SCALE}, got {scale}")
    return scale


def _check_positive(name: str, value) -> float:
    value = check_number(name, value)
    if not (math.isfinite(value) and value > 0.0):
        raise ValueError(f"{name} must be a finite number > 0, got {value}")
    return value


class Simulation:
    """Runs a ``World`` at a fixed rate on a daemon thread (or offline with ``run_steps``).

    world        the World to own; nobody else may touch it afterwards (``world`` gives it back
                 for offline use)
    hz           physics rate, 10 … 10 000 Hz (dt = 1/hz)
    time_scale   sim seconds per wall second, 0.01 … 4
    paused       start paused
    publish_hz   at most this many batches (and snapshots) per wall second
    batch_budget s of wall time a batch may spend stepping; None → 70 % of 1/publish_hz
    max_lag      s of wall time the thread may lag before it drops the debt
    kernel_threads  threads the engine's parallel kernels may use from the physics thread
                 (physics/runtime.py). 1 by default: the thread runs beside a renderer, and on
                 a software renderer (llvmpipe) the cores are busy rasterising — there kernels
                 split over two threads kept 10–15 % of real time at 500 bodies where one
                 thread kept 34 % (bench/frame.py). Results do not depend on it.
    history      keep the recent past (physics/history.py); False for a run that never goes
                 back (``NoHistory``: no cost per step, ``restore`` refused)
    """

    def __init__(self, world: World, hz: float = 240.0, *, time_scale: float = 1.0,
                 paused: bool = False, publish_hz: float = 120.0,
                 batch_budget: float | None = None, max_lag: float = 0.1,
                 kernel_threads: int = 1, history: bool = True):
        if not isinstance(world, World):
            raise ValueError(f"Simulation needs a World, got {type(world).__name__}")
        self._world = world
        self._hz = _check_hz(hz)
        self._time_scale = _check_time_scale(time_scale)
        self._paused = bool(paused)
        self._publish_hz = _check_positive("publish_hz", publish_hz)
        self._batch_budget = (0.7 / self._publish_hz if batch_budget is None
                              else _check_positive("batch_budget", batch_budget))
        self._max_lag = _check_positive("max_lag", max_lag)
        if not (isinstance(kernel_threads, (int, np.integer)) and kernel_threads >= 1):
            raise ValueError(f"kernel_threads must be a whole number ≥ 1, got {kernel_threads!r}")
        self._kernel_threads = int(kernel_threads)

        self._step = 0
        # the commands a replay still has to apply, each at its step (``open``), in order
        self._script: collections.deque[Scripted] = collections.deque()
        # what ``reset`` goes back to: a world, its step count, the script it had left and the
        # rate it starts at (None: the rate in effect stays)
        self._reset_point = (copy.deepcopy(world), 0, (), None)
        self._history = History(world, 0, self._hz) if history else NoHistory()
        self._behind = False
        self._time_dropped = 0.0
        self._errors: collections.deque[CommandError] = collections.deque(maxlen=ERROR_HISTORY)
        self._broken: collections.deque[BrokenJoint] = collections.deque(maxlen=ERROR_HISTORY)
        self._broken_count = 0

        self._queue: queue.SimpleQueue = queue.SimpleQueue()
        self._submit_lock = threading.Lock()  # keeps seq numbers in queue (arrival) order
        self._next_seq = 0
        self._stopping = threading.Event()
        self._thread: threading.Thread | None = None

        self._snapshot_lock = threading.Lock()
        first = self._make_snapshot(time.perf_counter())
        self._snapshots = (first, first)

    # ---- reading ------------------------------------------------------------------------
    def latest(self) -> Snapshot:
        """The newest snapshot."""
        with self._snapshot_lock:
            return self._snapshots[1]

    def latest_two(self) -> tuple[Snapshot, Snapshot]:
        """(previous, newest) snapshots, for interpolation; the same one twice at the start."""
        with self._snapshot_lock:
            return self._snapshots

    @property
    def world(self) -> World:
        """The owned World. Only for offline use (thread not running); reset and rolled-back
        commands replace the object, so fetch it again after those."""
        return self._world

    @property
    def history(self) -> History | NoHistory:
        """The recent past (physics/history.py): its reading methods are safe from any
        thread."""
        return self._history

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    # ---- thread control -----------------------------------------------------------------
    def start(self) -> None:
        """Start the physics thread (a daemon). Commands queued before are applied first."""
        if self.running:
            raise RuntimeError("the physics thread is already running")
        configure()  # the engine's process settings, before its first parallel kernel
        self._stopping.clear()
        self._thread = threading.Thread(target=self._run, name="tumble-physics", daemon=True)
        self._thread.start()

    def stop(self, timeout: float = 2.0) -> None:
        """Stop the thread and join it; commands submitted before are applied. Safe to repeat.

        Raises TimeoutError if the thread is still inside a step after ``timeout`` seconds.
        """
        thread = self._thread
        if thread is None:
            return
        self._stopping.set()
        self._queue.put(_WAKE)
        thread.join(timeout)
        if thread.is_alive():
            raise TimeoutError(f"the physics thread did not stop within {timeout} s")
        self._thread = None

    def __enter__(self) -> Simulation:
        self.start()
        return self

    def __exit__(self, *exc_info) -> None:
        self.stop()

    def run_steps(self, n: int) -> Snapshot:
        """Offline: take exactly n steps now on the calling thread, applying the queued
        commands first and after the last step (any queued meanwhile, at the boundary of the
        batch under way); ignores pause, time scale and wall time.
        Returns the snapshot it publishes. Same commands at the same step boundaries give
        bit-identical results."""
        if self.running:
            raise RuntimeError("run_steps is for offline use; stop() the physics thread first")
        if not (isinstance(n, (int, np.integer)) and n >= 0):
            raise ValueError(f"run_steps needs a whole number of steps ≥ 0, got {n!r}")
        done: list = []
        try:
            taken = 0
            while taken < n:
                done += self._apply_queued()
                taken += self._advance(int(n) - taken)
            done += self._apply_queued()
        finally:  # a failing step still leaves the applied commands resolved and published
            self._behind = False
            self._publish(time.perf_counter())
            self._resolve(done)
        return self.latest()

    # ---- commands: the World's mutators ---------------------------------------------------
    def add_body(self, body: BodyDef) -> Future[int]:
        """The future's result is the new body's id."""
        return self._world_command("add_body", body)

    def remove_body(self, body_id: int) -> Future[None]:
        return self._world_command("remove_body", body_id)

    def clear(self) -> Future[None]:
        """Remove every body (settings stay)."""
        return self._world_command("clear")

    def add_group(self, bodies: list[BodyDef], joints: list[JointDef] = ()) -> Future[list[int]]:
        """Bodies and the joints between them in one command (World.add_group: joint ends are
        indices into ``bodies``); the future's result is the new body ids."""
        return self._world_command("add_group", list(bodies), list(joints))

    def add_joint(self, joint: JointDef) -> Future[int]:
        """The future's result is the new joint's id; its frames are taken from the bodies'
        poses when the command is applied."""
        return self._world_command("add_joint", joint)

    def remove_joint(self, joint_id: int) -> Future[None]:
        return self._world_command("remove_joint", joint_id)

    def edit_joint(self, joint_id: int, **changes) -> Future[None]:
        """Change a joint's limits, motor_speed, motor_max or break_force."""
        changes = copy.deepcopy(changes)
        text = f"edit_joint({_describe(joint_id)}, {_describe(changes)})"
        return self._submit(text, lambda: self._logged("edit_joint", (joint_id,), changes),
                            touches_world=True)

    def set_gravity(self, gravity) -> Future[None]:
        return self._world_command("set_gravity", gravity)

    def set_container(self, size) -> Future[None]:
        """Container extents (3,) m, or None for no walls."""
        return self._world_command("set_container", size)

    def set_solver_iterations(self, count: int) -> Future[None]:
        return self._world_command("set_solver_iterations", count)

    def set_restitution(self, value: float | None, body_id: int | None = None) -> Future[None]:
        """World default (body_id None) or one body's; None for a body → the world default."""
        return self._world_command("set_restitution", value, body_id)

    def set_friction(self, value: float | None, body_id: int | None = None) -> Future[None]:
        return self._world_command("set_friction", value, body_id)

    def set_body_material(self, body_id: int, restitution=..., friction=...) -> Future[None]:
        """Both materials of one body at once; None → world default, omitted → unchanged."""
        return self._world_command("set_body_material", body_id, restitution, friction)

    def apply_impulse(self, body_id: int, impulse, point=None) -> Future[None]:
        """Impulse (3,) N·s at a world point (default: the centre of mass)."""
        return self._world_command("apply_impulse", body_id, impulse, point)

    def set_external_force(self, body_id: int, force=(0.0, 0.0, 0.0),
                           torque=(0.0, 0.0, 0.0)) -> Future[None]:
        """World force (3,) N through the centre of mass and torque (3,) N·m, held until
        changed."""
        return self._world_command("set_external_force", body_id, force, torque)

    def set_body_state(self, body_id: int, position=None, orientation=None, velocity=None,
                       angular_velocity=None) -> Future[None]:
        return self._world_command("set_body_state", body_id, position, orientation, velocity,
                                   angular_velocity)

    def set_static(self, body_id: int, static: bool) -> Future[None]:
        """Make a body scenery that never moves (True) or dynamic again (World.set_static)."""
        return self._world_command("set_static", body_id, static)

    def set_pieces(self, body_id: int, pieces) -> Future[None]:
        """Make a body collide as convex pieces (k_i, 3) in its body frame, m, or as its own
        shape again (none): World.set_pieces."""
        return self._world_command("set_pieces", body_id, tuple(pieces))

    def set_grab(self, body_id: int, anchor, target, stiffness: float,
                 damping: float) -> Future[None]:
        """Spring from a body-frame anchor (3,) m to a world target (3,) m (see World.set_grab)."""
        return self._world_command("set_grab", body_id, anchor, target, stiffness, damping)

    def clear_grab(self) -> Future[None]:
        return self._world_command("clear_grab")

    # ---- commands: run controls -----------------------------------------------------------
    def reset(self) -> Future[None]:
        """Restore the world and step count of the reset point (construction, ``open`` or
        ``set_reset_point``), and the replay commands it had still to come; run controls (hz,
        time scale, pause) stay, but a replay starts again at its own rate."""
        def apply():
            world, self._step, script, hz = self._reset_point
            self._hz = self._hz if hz is None else hz
            self._world = copy.deepcopy(world)
            self._script = collections.deque(script)
            self._history.restart(self._world, self._step, self._hz)
            self._play_due()
        return self._submit("reset()", apply, touches_world=True)

    def open(self, world: World, hz: float, script=()) -> Future[None]:
        """Replace the world by ``world`` (a scene or replay just built), at step 0 and rate
        ``hz``, paused; ``script``: ``Scripted`` commands (a replay's) to apply each at its
        step, as ``tumble simulate`` does. It becomes the reset point and the history's start;
        the commands at step 0 are applied at once."""
        if not isinstance(world, World):
            raise ValueError(f"open needs a World, got {type(world).__name__}")
        world, script = copy.deepcopy(world), tuple(script)

        def apply():
            self._hz = _check_hz(hz)
            self._world, self._step, self._paused = world, 0, True
            self._reset_point = (copy.deepcopy(world), 0, script, self._hz)
            self._script = collections.deque(script)
            self._history.restart(self._world, 0, self._hz)
            self._play_due()
        return self._submit("open(…)", apply, touches_world=True)

    def restore(self, step: int) -> Future[None]:
        """Go back to the world exactly as it was after ``step`` steps (within the history),
        paused; what came after it is discarded, so running on makes a new branch (a replay
        being played stops there: its later commands are part of the old future)."""
        def apply():
            world, hz = self._history.world_at(int(step))
            self._world, self._hz, self._step = world, hz, int(step)
            self._history.truncate(self._step)
            self._script.clear()
            self._paused = True
        return self._submit(f"restore({_describe(step)})", apply, touches_world=True)

    def set_history_seconds(self, seconds: float) -> Future[None]:
        """How much sim time the history keeps, s (up to ten minutes)."""
        def apply():
            self._history.set_seconds(check_history_seconds(seconds))
        return self._submit(f"set_history_seconds({_describe(seconds)})", apply,
                            touches_world=False)

    def set_reset_point(self) -> Future[None]:
        """Make the current state (at the command's step boundary) the one ``reset`` restores,
        and the start of the history (a scene just opened: its past is another scene's). A
        replay being played stops: the new start has no script."""
        def apply():
            self._reset_point = (copy.deepcopy(self._world), self._step, (), None)
            self._script.clear()
            self._history.restart(self._world, self._step, self._hz)
        return self._submit("set_reset_point()", apply, touches_world=False)

    def set_hz(self, hz: float) -> Future[None]:
        def apply():
            self._hz = _check_hz(hz)
            self._history.log(self._step, "set_hz", (self._hz,))
        return self._submit(f"set_hz({_describe(hz)})", apply, touches_world=False)

    def set_time_scale(self, scale: float) -> Future[None]:
        def apply():
            self._time_scale = _check_time_scale(scale)
        return self._submit(f"set_time_scale({_describe(scale)})", apply, touches_world=False)

    def set_paused(self, paused: bool) -> Future[None]:
        def apply():
            if not isinstance(paused, (bool, np.bool_)):
                raise ValueError(f"set_paused needs True or False, got {paused!r}")
            self._paused = bool(paused)
        return self._submit(f"set_paused({paused!r})", apply, touches_world=False)

    def step_once(self) -> Future[None]:
        """Pause (if running) and advance exactly one step of dt."""
        def apply():
            self._paused = True
            self._advance()
        return self._submit("step_once()", apply, touches_world=True)

    # ---- submission and application -------------------------------------------------------
    def _world_command(self, method: str, *args) -> Future:
        # copy the arguments now: the caller may reuse its arrays before the command is applied
        args = copy.deepcopy(args)
        text = f"{method}({', '.join(_describe(a) for a in args)})"
        return self._submit(text, lambda: self._logged(method, args), touches_world=True)

    def _logged(self, method: str, args: tuple, kwargs: dict | None = None):
        """Apply a World method and, once it succeeded, log it in the history."""
        result = getattr(self._world, method)(*args, **(kwargs or {}))
        self._history.log(self._step, method, args, kwargs)
        return result

    def _advance(self, limit: int = 1) -> int:
        """Up to ``limit`` steps of dt as one batch (``World.advance``), ending early at the
        next step boundary where the history keeps a frame or a checkpoint or the replay has a
        command; counted and remembered, then the replay's commands due there. Returns the
        steps taken (≥ 1)."""
        dt = 1.0 / self._hz
        if self._script:
            limit = min(limit, max(self._script[0].command.step - self._step, 1))
        steps = self._history.steps_until_due(self._world.state.time, dt, max(limit, 1))
        start = time.perf_counter()
        self._world.advance(dt, steps)
        self._step += steps
        self._history.after_step(self._world, self._step, self._hz,
                                 time.perf_counter() - start)
        self._play_due()
        return steps

    def _play_due(self) -> None:
        """Apply the script's commands due at this step boundary (logged like any command).
        One the world refuses stops the replay, paused, with an error naming its line."""
        while self._script and self._script[0].command.step <= self._step:
            scripted = self._script.popleft()
            command = scripted.command
            try:
                if command.name == "set_hz":
                    self._hz = _check_hz(command.args[0])
                    self._history.log(self._step, "set_hz", (self._hz,))
                else:
                    self._logged(command.name, command.args, command.kwargs)
            except ValueError as exc:
                message = f"{scripted.where}: [[command]] {command.name}: {exc}"
                log.warning("replay stopped: %s", message)
                self._errors.append(CommandError(-1, self._step, command.name, message))
                self._script.clear()
                self._paused = True

    def _submit(self, text: str, apply: Callable[[], Any], touches_world: bool) -> Future:
        future: Future = Future()
        with self._submit_lock:
            self._queue.put(_Command(self._next_seq, text, apply, future, touches_world))
            self._next_seq += 1
        return future

    def _apply_queued(self, first=None) -> list[tuple[Future, Any, BaseException | None]]:
        """Apply ``first`` (an item already taken off the queue) and the commands queued so far,
        in order; returns their outcomes, to be resolved once a snapshot showing them is
        published. Commands arriving meanwhile wait for the next step boundary."""
        items = [first] if first is not None else []
        for _ in range(self._queue.qsize()):
            try:
                items.append(self._queue.get_nowait())
            except queue.Empty:
                break
        outcomes = []
        for item in items:
            if item is not _WAKE:
                outcomes += self._apply(item)
        return outcomes

    def _apply(self, command: _Command) -> list:
        if not command.future.set_running_or_notify_cancel():
            return []  # cancelled by the caller before it was applied
        backup = (copy.deepcopy(self._world), self._step) if command.touches_world else None
        try:
            return [(command.future, command.apply(), None)]
        except Exception as exc:  # any failure is reported and rolled back; the thread lives on
            if backup is not None:
                self._world, self._step = backup
            message = f"{type(exc).__name__}: {exc}"
            self._errors.append(CommandError(command.seq, self._step, command.text, message))
            if isinstance(exc, ValueError):
                log.warning("command %s refused: %s", command.text, message)
            else:
                log.error("command %s failed unexpectedly", command.text, exc_info=exc)
            return [(command.future, None, exc)]

    @staticmethod
    def _resolve(outcomes) -> None:
        for future, result, exc in outcomes:
            if exc is None:
                future.set_result(result)
            else:
                future.set_exception(exc)

    # ---- snapshots ----------------------------------------------------------------------
    def _make_snapshot(self, wall_time: float) -> Snapshot:
        return Snapshot(
            **world_fields(self._world), step=self._step, wall_time=wall_time,
            paused=self._paused, time_scale=self._time_scale, hz=self._hz,
            behind=self._behind, time_dropped=self._time_dropped, errors=tuple(self._errors),
            broken_joints=tuple(self._broken))

    def _publish(self, wall_time: float) -> None:
        for body_id in self._world.remove_non_finite():
            self._history.log(self._step, "remove_body", (body_id,))
            message = f"body #{body_id} became non-finite (NaN or Inf) and was removed"
            log.error("physics thread: %s", message)
            self._errors.append(CommandError(-1, self._step, "step", message))
        for joint_id, joint in self._world.take_broken_joints():
            log.info("joint #%d (%s) broke past its break force", joint_id, joint.kind)
            self._broken.append(BrokenJoint(self._broken_count, self._step, joint_id, joint))
            self._broken_count += 1
        snapshot = self._make_snapshot(wall_time)  # built outside the lock: readers never wait
        with self._snapshot_lock:
            self._snapshots = (self._snapshots[1], snapshot)

    # ---- the thread -----------------------------------------------------------------------
    def _run(self) -> None:
        use_threads(self._kernel_threads)
        clock = time.perf_counter
        last = next_batch = clock()
        owed = 0.0       # sim seconds of steps owed to wall time
        woken_by = None  # the command whose arrival ended the last wait
        while True:
            now = clock()
            # the interval just waited ran under the pause/scale in effect before these commands
            owed = 0.0 if self._paused else owed + (now - last) * self._time_scale
            last = now
            outcomes = self._apply_queued(woken_by)
            try:
                stepped = 0
                if not self._paused and now >= next_batch and owed >= 1.0 / self._hz:
                    next_batch = now + 1.0 / self._publish_hz
                    stepped, owed = self._batch(owed)
                if stepped or outcomes:
                    # stamp: the wall instant this sim time was due (owed is still to come)
                    self._publish(now if self._paused else now - owed / self._time_scale)
            except Exception as exc:  # a failing step or snapshot is a bug: report it and pause
                log.error("physics thread: step failed; simulation paused", exc_info=exc)
                self._errors.append(CommandError(-1, self._step, "step",
                                                 f"{type(exc).__name__}: {exc} (paused)"))
                self._paused = True
                self._publish(now)
            finally:
                self._resolve(outcomes)
            if self._stopping.is_set():
                break
            woken_by = self._wait(now, owed, next_batch)
        # commands submitted just before stop() (queued ahead of its wake-up token)
        outcomes = self._apply_queued()
        self._publish(clock())
        self._resolve(outcomes)

    def _batch(self, owed: float) -> tuple[int, float]:
        """Step while steps are owed, within the step cap and wall budget; drop a lag larger than
        max_lag. Returns (steps taken, sim seconds still owed)."""
        dt = 1.0 / self._hz
        cap = max(1, math.ceil(CATCH_UP * self._hz * self._time_scale / self._publish_hz))
        start = time.perf_counter()
        steps = 0
        while owed >= dt and steps < cap:
            taken = self._advance(min(cap - steps, max(int(owed / dt), 1)))
            steps += taken
            owed -= taken * dt
            if time.perf_counter() - start >= self._batch_budget:
                break
        self._behind = owed >= dt
        if self._behind and owed > self._max_lag * self._time_scale:
            self._time_dropped += owed  # re-sync: run slower than real time instead of spiralling
            owed = 0.0
        return steps, owed

    def _wait(self, now: float, owed: float, next_batch: float):
        """Sleep until the next batch is due or something is queued; returns what woke it."""
        if self._paused:
            timeout = None
        else:
            due = now + max(1.0 / self._hz - owed, 0.0) / self._time_scale
            timeout = max(due, next_batch) - time.perf_counter()
            if timeout <= 0.0:
                return None
        try:
            return self._queue.get(timeout=timeout)
        except queue.Empty:
            return None
