"""The panel's actions: every change it makes, as commands to the physics thread, with no ImGui.

The window's keys use the same methods (Space: ``toggle_pause``, Right arrow: ``step_once``,
R: ``reset``, Del: ``delete(state.selected)``), and the tests call them without a GL context.
Futures resolve on the physics thread, so their outcomes are handed back through a queue and
applied on the render thread in ``process_results``.
"""

from __future__ import annotations

import dataclasses
import math
import os
import queue
import threading
from concurrent.futures import Future
from pathlib import Path
from typing import Callable

import numpy as np

from app.app_state import AppState
from app.joints import joint_of
from app.video.recorder import RecordingError, prepare_folder, timestamped_path
from physics.constraints.joint import WORLD
from physics.constraints.view import def_at_present
from physics.geometry.meshes import builtin_shape
from physics.model import BodyDef
from physics.replay import history_replay, write_replay
from physics.scene import BodyRecord, save_scene, scene_from_snapshot
from physics.simulation import Snapshot


def own_materials(snapshot: Snapshot, row: int) -> dict[str, float | None]:
    """{"restitution": …, "friction": …} of one body: its own values, None for the world's."""
    return {name: None if math.isnan(value) else float(value)
            for name, value in (("restitution", snapshot.body_restitution[row]),
                                ("friction", snapshot.body_friction[row]))}


class PanelActions:
    """Commands to ``state.sim`` and their follow-ups on the render thread."""

    def __init__(self, state: AppState):
        self.state = state
        self._results: queue.SimpleQueue = queue.SimpleQueue()  # (future, what, then)
        self._pending: dict[str, tuple[object, Future]] = {}   # slider key → (value, future)
        self._known: dict[int, BodyRecord] = {}  # every record seen, for reset
        self._sim = state.sim
        self._broken_seen = 0  # Snapshot.broken_joints numbers below this were shown

    def watch(self, future: Future, what: str, then: Callable | None = None,
              otherwise: Callable | None = None) -> Future:
        """Report the future's failure as a notification ("<what> failed: <error>") and run
        ``otherwise(error)``, else run ``then(result)`` — all on the render thread
        (``process_results``). The window may use it for the commands it sends (grab, spin)."""
        future.add_done_callback(lambda f: self._results.put((f, what, then, otherwise)))
        return future

    def process_results(self) -> None:
        """Apply the outcomes of finished commands (render thread; ``draw`` calls it)."""
        self._known.update(self.state.bodies)  # records from the loader too, for reset
        while True:
            try:
                future, what, then, otherwise = self._results.get_nowait()
            except queue.Empty:
                return
            if future.cancelled():
                continue
            error = future.exception()
            if error is not None:
                self.state.notifications.error(f"{what} failed: {error}")
                if otherwise is not None:
                    otherwise(error)
            elif then is not None:
                then(future.result())

    def _send(self, key: str, value, future: Future, what: str) -> Future:
        """A setting's command: its value is shown until the snapshot carries it."""
        self._pending[key] = (value, future)
        return self.watch(future, what)

    def _shown(self, key: str, actual):
        """The value to show for a setting: the one just sent while its command is pending."""
        pending = self._pending.get(key)
        if pending is not None:
            if not pending[1].done():
                return pending[0]
            del self._pending[key]
        return actual

    def toggle_pause(self) -> Future:
        paused = not self._shown("paused", self.state.sim.latest().paused)
        return self._send("paused", paused, self.state.sim.set_paused(paused),
                          "resume" if not paused else "pause")

    def step_once(self) -> Future:
        self._pending["paused"] = (True, self.watch(self.state.sim.step_once(), "single step"))
        return self._pending["paused"][1]

    def reset(self) -> Future:
        """Back to the reset point; the body table follows (module docstring)."""
        return self.watch(self.state.sim.reset(), "reset", lambda _: self._after_reset())

    def _after_reset(self) -> None:
        state = self.state
        ids = [int(i) for i in state.sim.latest().ids]
        state.bodies.clear()
        state.bodies.update({i: self._known[i] for i in ids if i in self._known})
        if state.selected not in state.bodies:
            state.selected = None

    def set_restitution(self, value: float) -> Future:
        """World restitution; takes effect at the next step."""
        return self._send("restitution", value, self.state.sim.set_restitution(value),
                          "set restitution")

    def set_friction(self, value: float) -> Future:
        """World friction coefficient; takes effect at the next step."""
        return self._send("friction", value, self.state.sim.set_friction(value), "set friction")

    def set_time_scale(self, scale: float) -> Future:
        return self._send("time_scale", scale, self.state.sim.set_time_scale(scale),
                          "set time scale")

    def set_hz(self, hz: float) -> Future:
        return self._send("hz", hz, self.state.sim.set_hz(hz), "set physics rate")

    def set_solver_iterations(self, count: int) -> Future:
        """Sequential-impulse sweeps per step; takes effect at the next step."""
        return self._send("solver_iterations", count,
                          self.state.sim.set_solver_iterations(count), "set solver iterations")

    def set_gravity(self, gravity) -> Future:
        gravity = np.asarray(gravity, dtype=float)
        return self._send("gravity", gravity, self.state.sim.set_gravity(gravity), "set gravity")

    def set_body_material(self, body_id: int, **values) -> Future:
        """restitution= / friction=: a value overrides the world default, None returns to it."""
        future = self.state.sim.set_body_material(body_id, **values)
        for name, value in values.items():
            self._pending[f"{name}:{body_id}"] = (value, future)
        return self.watch(future, f"set {'/'.join(values)} of body #{body_id}")

    def set_static(self, body_id: int, static: bool) -> Future:
        """Make a body scenery that never moves, or dynamic again."""
        return self._send(f"static:{body_id}", static,
                          self.state.sim.set_static(body_id, static),
                          f"make body #{body_id} {'static' if static else 'dynamic'}")

    def delete(self, body_id: int | None) -> Future | None:
        """Remove a body (None: nothing to do); its record goes once the physics agrees."""
        if body_id is None:
            return None

        def done(_):
            self.state.bodies.pop(body_id, None)
            if self.state.selected == body_id:
                self.state.selected = None
        return self.watch(self.state.sim.remove_body(body_id), f"remove body #{body_id}", done)

    def duplicate(self, body_id: int) -> Future | None:
        """Add a copy of a body beside it (module docstring); the copy is selected."""
        record = self.state.bodies.get(body_id)
        row = self._row(body_id)
        if record is None or row is None:
            self.state.notifications.warning(f"body #{body_id} is not in the simulation")
            return None
        snapshot = self.state.sim.latest()
        shape = record.shape
        position, orientation = shape.mesh_pose(snapshot.pos[row], snapshot.quat[row])
        offset = self._beside(snapshot, snapshot.pos[row], shape.bound_radius)
        body = shape.body_def(position + offset, orientation, snapshot.vel[row],
                              snapshot.omega[row], **own_materials(snapshot, row))
        body = dataclasses.replace(body, static=bool(snapshot.static[row]), pieces=record.pieces)

        def done(new_id):
            self._register(dataclasses.replace(record, body_id=new_id))
            self.state.selected = new_id
        return self.watch(self.state.sim.add_body(body), f"duplicate {record.name}", done)

    @staticmethod
    def _beside(snapshot: Snapshot, centre, radius: float) -> np.ndarray:
        """Offset (3,) m to a free spot next to a body of this radius, inside the container."""
        gap = 2.0 * radius + 0.05
        candidates = np.array([[gap, 0, 0], [-gap, 0, 0], [0, 0, gap], [0, 0, -gap], [0, gap, 0]])
        if snapshot.container_size is None:
            return candidates[0]
        half = np.asarray(snapshot.container_size) / 2
        low, high = np.array([-half[0], 0.0, -half[2]]), np.array([half[0], 2 * half[1], half[2]])
        for offset in candidates:
            p = np.asarray(centre) + offset
            if np.all(p - radius >= low) and np.all(p + radius <= high):
                return offset
        return candidates[-1]

    def add_builtin(self, kind: str, size, density: float) -> Future | None:
        """Add a builtin shape at rest in the middle of the container, up in the air."""
        try:
            shape = builtin_shape(kind, size, density=density)
        except ValueError as e:  # MeshError: names the shape and the bad value
            self.state.notifications.error(str(e))
            return None
        container = self.state.sim.latest().container_size
        height = 1.5 if container is None else 0.6 * float(container[1])
        body = shape.body_def([0.0, max(height, shape.bound_radius + 0.05), 0.0])
        record = BodyRecord(-1, kind, None, None, shape)
        return self.watch(self.state.sim.add_body(body), f"add {kind}",
                          lambda new_id: self._add_done(record, new_id))

    def _add_done(self, record: BodyRecord, new_id: int) -> None:
        self._register(dataclasses.replace(record, body_id=new_id))
        self.state.selected = new_id

    def set_density(self, body_id: int, density: float) -> tuple[Future, Future] | None:
        """Give a body another density: replaced by a body with the rescaled mass properties at
        the same pose and velocities (module docstring). Returns the (remove, add) futures."""
        record = self.state.bodies.get(body_id)
        row = self._row(body_id)
        if record is None or row is None:
            self.state.notifications.warning(f"body #{body_id} is not in the simulation")
            return None
        try:
            shape = record.shape.with_density(density)
        except ValueError as e:
            self.state.notifications.error(f"{record.name}: {e}")
            return None
        s = self.state.sim.latest()
        p = shape.properties
        body = BodyDef(mass=p.mass, principal_moments=p.principal_moments, hull=shape.hull,
                       radius=shape.radius, position=s.pos[row], orientation=s.quat[row],
                       velocity=s.vel[row], angular_velocity=s.omega[row],
                       static=bool(s.static[row]), pieces=record.pieces,
                       **own_materials(s, row))
        # removing the body removes its joints: they are made again on the new body
        view = s.joints
        joints = [def_at_present(view, k) for k in range(len(view.ids))
                  if body_id in (int(view.first[k]), int(view.second[k]))]
        removed = self.watch(self.state.sim.remove_body(body_id),
                             f"change the density of {record.name}")

        def done(new_id):
            if removed.exception() is not None:  # the old body vanished meanwhile: undo
                self.watch(self.state.sim.remove_body(new_id), "undo the density change")
                return
            for joint in joints:
                ends = {k: new_id for k in ("first", "second") if getattr(joint, k) == body_id}
                self.watch(self.state.sim.add_joint(dataclasses.replace(joint, **ends)),
                           f"keep the {joint.kind} joint of {record.name}")
            was_selected = self.state.selected == body_id
            self.state.bodies.pop(body_id, None)
            self._register(dataclasses.replace(record, body_id=new_id, shape=shape))
            if was_selected:
                self.state.selected = new_id
        added = self.watch(self.state.sim.add_body(body),
                           f"change the density of {record.name}", done)
        return removed, added

    def _register(self, record: BodyRecord) -> None:
        self.state.bodies[record.body_id] = record
        self._known[record.body_id] = record

    def open_files(self, text: str) -> None:
        """Load a mesh or open a scene by path (the window's loader, off the render thread)."""
        path = os.path.expanduser(text.strip())
        if not path:
            self.state.notifications.warning("type a file path first")
            return
        self.state.request_files([path])

    def save_scene(self, path) -> bool:
        """Write the current world (newest snapshot) as a scene file; True when written."""
        path = Path(os.path.expanduser(os.fspath(path).strip()))
        if not path.name:
            self.state.notifications.warning("type a file path to save the scene to")
            return False
        scene = scene_from_snapshot(self.state.sim.latest(), self.state.bodies)
        try:
            save_scene(scene, path)
        except (OSError, ValueError) as e:
            self.state.notifications.error(f"could not save the scene to {path}: {e}")
            return False
        self.state.scene_path = path
        self.state.notifications.info(f"saved scene {path.name}: {len(scene.bodies)} bodies")
        return True

    def save_replay(self, text: str = "") -> threading.Thread | None:
        """Write the history as a replay file (physics/replay.py ``history_replay``: the world
        at its start as a scene, then the commands since) to the path typed, or to a new
        ``<scene>_replay_<time>.toml`` in the recordings folder, on a thread of its own (a
        history of 1 000 bodies takes a second or two); a notification names the file. The
        thread, or None when no path could be made."""
        state = self.state
        text = os.path.expanduser(text.strip())
        try:
            if text:
                path = Path(text)
            else:
                name = state.scene_path.stem if state.scene_path is not None else "tumble"
                path = timestamped_path(prepare_folder(state.recording.folder),
                                        f"{name}_replay", ".toml")
        except RecordingError as e:
            state.notifications.error(f"could not save the replay: {e}")
            return None
        history, records = state.sim.history, dict(state.bodies)

        def write() -> None:
            try:
                replay = history_replay(history, records)
                write_replay(path, replay)
            except (OSError, ValueError) as e:
                state.notifications.error(f"could not save the replay to {path}: {e}")
                return
            state.recording.last_file = path
            state.notifications.info(f"saved replay {path}: {len(replay.scene.bodies)} "
                                     f"bodies, {len(replay.commands)} commands")
        thread = threading.Thread(target=write, name="tumble-replay", daemon=True)
        thread.start()
        return thread

    def set_history_seconds(self, seconds: float) -> Future:
        """How much sim time the timeline keeps, s (60 s … 10 min)."""
        return self.watch(self.state.sim.set_history_seconds(seconds), "history length")

    def _row(self, body_id: int | None) -> int | None:
        if body_id is None:
            return None
        rows = np.flatnonzero(self.state.sim.latest().ids == body_id)
        return int(rows[0]) if len(rows) else None

    # ---- joints (app/joints.py makes the drafts) ----------------------------------------------
    def create_joint(self) -> Future | None:
        """Make the drafted joint at the bodies' present poses. The draft goes at once: the
        physics thread shows the joint in a snapshot before its command's outcome reaches the
        render thread, and a draft kept until then was drawn beside its own joint. A draft the
        world refuses comes back (unless another was begun meanwhile), like one refused here,
        with the reason shown, for another choice."""
        draft = self.state.joint_draft
        if draft is None:
            return None
        try:
            joint = joint_of(draft, self.state.sim.latest())
        except ValueError as e:
            self.state.notifications.error(f"cannot make the joint: {e}")
            return None
        self.state.joint_draft = None

        def done(joint_id):
            self.state.selected_joint = joint_id
            self.state.notifications.info(f"made {joint.kind} joint #{joint_id}")

        def refused(_error):
            if self.state.joint_draft is None:
                self.state.joint_draft = draft
        return self.watch(self.state.sim.add_joint(joint), f"make the {joint.kind} joint", done,
                          refused)

    def delete_joint(self, joint_id: int) -> Future:
        def done(_):
            if self.state.selected_joint == joint_id:
                self.state.selected_joint = None
        return self.watch(self.state.sim.remove_joint(joint_id), f"delete joint #{joint_id}",
                          done)

    def edit_joint(self, joint_id: int, **changes) -> Future:
        """limits=, motor_speed=, motor_max=, break_force= (None: off), live."""
        future = self.state.sim.edit_joint(joint_id, **changes)
        for name, value in changes.items():
            self._pending[f"joint {name}:{joint_id}"] = (value, future)
        return self.watch(future, f"edit joint #{joint_id}")

    def report_broken_joints(self, snapshot: Snapshot) -> None:
        """A toast for each joint broken since the last call (Snapshot.broken_joints)."""
        for broken in snapshot.broken_joints:
            if broken.number < self._broken_seen:
                continue
            self._broken_seen = broken.number + 1
            joint = broken.joint
            self.state.notifications.warning(
                f"{joint.kind} joint #{broken.joint_id} ({self.body_label(joint.first)}–"
                f"{self.body_label(joint.second)}) broke: its reaction passed its break force "
                f"of {joint.break_force:g} N")

    def body_label(self, body_id: int) -> str:
        """A body as the joint list names it: its scene name, else its name and id."""
        if body_id == WORLD:
            return "world"
        record = self.state.bodies.get(body_id)
        if record is None:
            return f"#{body_id}"
        return record.scene_name or f"{record.name} #{body_id}"
