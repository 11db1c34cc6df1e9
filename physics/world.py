"""The world: a model, a state, and ``World.step`` — the pipeline's table of contents.

Everything outside the physics thread talks to a ``World`` through its methods (each validates
its arguments and raises ValueError naming the bad value, leaving the world unchanged);
``step`` advances the state by one fixed step.
"""

from __future__ import annotations

import copy
import dataclasses
from dataclasses import dataclass

import numpy as np

from physics.collision.broadphase import SweptPairs
from physics.collision.contact import Contacts
from physics.collision.find import NO_BANNED, find_contacts_plain
from physics.collision.manifolds import ManifoldCache
from physics.constraints.joint import WORLD, JointDef
from physics.constraints.projection import resting_contacts
from physics.constraints.solve import one_sided
from physics.constraints.table import (
    JointTable,
    frames_of,
    project,
    reactions,
    settle_joints,
    solve_joint_velocities,
    violations,
    violations_of,
)
from physics.constraints.view import NO_JOINTS, JointView, joint_view
from physics.dynamics.advance import (
    NO_GRAB,
    StepSettings,
    apply_forces,
    guard_energy,
    held_still,
    hold_static,
    links,
    move,
    separate,
    update_sleep,
)
from physics.dynamics.batch import run_batch, wake_joined, wake_struck
from physics.dynamics.energy import (
    kinetic_energy,
    potential_energy,
)
from physics.dynamics.integrator import (
    angular_momentum,
    body_angular_velocity,
    world_inverse_inertia,
    world_omega,
)
from physics.dynamics.islands import islands
from physics.dynamics.solver import Motion, contact_materials, solve_contacts
from physics.dynamics.warmstart import ContactCache
from physics.geometry.rotation import quat_to_matrix
from physics.held import StepRecords
from physics.model import (
    BodyDef,
    Model,
    WorldDef,
    check_container_size,
    check_friction,
    check_restitution,
    check_solver_iterations,
    check_static,
    check_vector,
)
from physics.runtime import parallel_threads
from physics.settings import (
    MAX_STEP,
    SLEEP_LINEAR_TOLERANCE,
    SPECULATIVE_MARGIN,
)
from physics.state import State


@dataclass(frozen=True)
class Grab:
    """A spring from a body point (anchor (3,), body frame, m) to a world target (3,) m."""

    body_id: int
    anchor: np.ndarray
    target: np.ndarray
    stiffness: float  # N/m
    damping: float    # N·s/m


def _checked_step(dt) -> float:
    """The step dt as a float, s; ValueError unless in (0, MAX_STEP]."""
    h = float(dt)
    if not (np.isfinite(h) and 0.0 < h <= MAX_STEP):
        raise ValueError(f"time step must be in (0, {MAX_STEP}] s, got {dt}")
    return h


class World:
    """N rigid bodies in an optional box of walls under uniform gravity."""

    def __init__(self, settings: WorldDef | None = None):
        self.model = Model(settings if settings is not None else WorldDef())
        self.state = State()
        self._next_id = 0
        self._grab: Grab | None = None
        self.joints = JointTable()
        # (id, definition) of the joints that broke since the last ``take_broken_joints``
        self._broken: list[tuple[int, JointDef]] = []
        # within a step: the sleeping bodies woken by a strike (``_wake_struck``), else None
        self._struck: np.ndarray | None = None

    # ---- bodies -------------------------------------------------------------------------
    @property
    def ids(self) -> np.ndarray:
        """(n,) stable body ids, in row order."""
        return self.model.ids

    @property
    def count(self) -> int:
        return self.model.count

    def add_body(self, body: BodyDef) -> int:
        """Add a body; returns its stable id."""
        return self._add_bodies([body])[0]

    def _add_bodies(self, bodies: list[BodyDef]) -> list[int]:
        """Add bodies, every array grown once for all of them (``Model.extend``); returns
        their stable ids. A bad one is refused before anything changes."""
        for body in bodies:
            if not isinstance(body, BodyDef):
                raise ValueError(f"add_body needs a BodyDef, got {type(body).__name__}")
        # validate again on copies: a BodyDef edited after construction must not half-add a body
        bodies = [dataclasses.replace(body) for body in bodies]
        ids = list(range(self._next_id, self._next_id + len(bodies)))
        if not bodies:
            return ids
        rows = {name: np.array([getattr(body, name) for body in bodies])
                for name in ("position", "orientation", "velocity", "angular_velocity",
                             "principal_moments")}
        ang_mom = angular_momentum(rows["orientation"], rows["angular_velocity"],
                                   1.0 / rows["principal_moments"])
        self.model.extend(ids, bodies)
        self.state.extend(rows["position"], rows["orientation"], rows["velocity"], ang_mom)
        self._next_id += len(bodies)
        return ids

    def index_of(self, body_id: int) -> int:
        """Row of the body with this id; ValueError if there is none."""
        rows = np.flatnonzero(self.model.ids == body_id)
        if len(rows) == 0:
            raise ValueError(f"no body with id {body_id}")
        return int(rows[0])

    def remove_body(self, body_id: int) -> None:
        """Remove a body; whatever rested on it or against it wakes up."""
        row = self.index_of(body_id)
        if self.model.static[row]:
            self._wake_near(row)
        first, second = self.state.carried.pairs
        touching = np.concatenate((second[first == body_id], first[second == body_id]))
        self.state.asleep[np.isin(self.model.ids, touching)] = False
        for joint_id in self.joints.touching(body_id):
            self.joints.remove(joint_id)
        self.model.delete(row)
        self.state.delete(row)
        if self._grab is not None and self._grab.body_id == body_id:
            self._grab = None

    def remove_non_finite(self) -> list[int]:
        """Remove every body whose state holds NaN or Inf (a bug, or forces beyond float64), so
        nothing non-finite reaches a snapshot or the bodies it would touch; returns their ids."""
        s = self.state
        bad = ~(np.isfinite(s.pos).all(axis=1) & np.isfinite(s.quat).all(axis=1)
                & np.isfinite(s.vel).all(axis=1) & np.isfinite(s.ang_mom).all(axis=1))
        removed = [int(i) for i in self.model.ids[bad]]
        for body_id in removed:
            self.remove_body(body_id)
        return removed

    def clear(self) -> None:
        """Remove every body (settings stay)."""
        self.model = Model(self.model.settings)
        self.state = State(time=self.state.time)
        self._grab = None
        self.joints = JointTable(next_id=self.joints.next_id)

    # ---- joints -------------------------------------------------------------------------
    def add_joint(self, joint: JointDef) -> int:
        """Add a joint between two bodies (or a body and ``WORLD``), its frames taken from the
        bodies' present poses; returns its stable id."""
        if not isinstance(joint, JointDef):
            raise ValueError(f"add_joint needs a JointDef, got {type(joint).__name__}")
        joint = dataclasses.replace(joint)  # validates again, on a copy
        poses = []
        for body_id in (joint.first, joint.second):
            if body_id == WORLD:
                poses.append((np.zeros(3), np.array([1.0, 0.0, 0.0, 0.0])))
                continue
            if not np.any(self.model.ids == body_id):
                raise ValueError(f"joint body {body_id} does not exist")
            row = self.index_of(body_id)
            poses.append((self.state.pos[row], self.state.quat[row]))
        joint_id = self.joints.add(joint, frames_of(joint, *poses))
        self._wake_joint(joint)
        return joint_id

    def add_group(self, bodies: list[BodyDef], joints: list[JointDef] = ()) -> list[int]:
        """Add bodies and the joints between them at once (a scene): each joint's ``first``
        and ``second`` are indices into ``bodies`` (or ``WORLD``). Returns the new body ids.
        On a bad body or joint the error names it, and nothing is added."""
        before = (self.model, self.state, self.joints, self._next_id)
        self.model, self.state = copy.deepcopy(self.model), copy.deepcopy(self.state)
        self.joints = copy.deepcopy(self.joints)
        try:
            ids = self._add_bodies(list(bodies))
            for index, joint in enumerate(joints):
                ends = {}
                for key in ("first", "second"):
                    end = getattr(joint, key)
                    if end != WORLD and not 0 <= end < len(ids):
                        raise ValueError(f"joint {index + 1} names body {end}, but the group "
                                         f"has {len(ids)}")
                    ends[key] = end if end == WORLD else ids[end]
                try:
                    self.add_joint(dataclasses.replace(joint, **ends))
                except ValueError as e:
                    raise ValueError(f"joint {index + 1}: {e}") from None
        except Exception:
            self.model, self.state, self.joints, self._next_id = before
            raise
        return ids

    def remove_joint(self, joint_id: int) -> None:
        if joint_id not in self.joints.defs:
            raise ValueError(f"no joint with id {joint_id}")
        joint = self.joints.defs[joint_id]
        self.joints.remove(joint_id)
        self._wake_joint(joint)

    def edit_joint(self, joint_id: int, **changes) -> None:
        """Change a joint's limits, motor_speed, motor_max or break_force live (validated; on a
        bad value nothing changes)."""
        if joint_id not in self.joints.defs:
            raise ValueError(f"no joint with id {joint_id}")
        allowed = {"limits", "motor_speed", "motor_max", "break_force"}
        unknown = set(changes) - allowed
        if unknown:
            raise ValueError(f"joint setting {sorted(unknown)[0]!r} cannot be edited; "
                             f"editable: {', '.join(sorted(allowed))}")
        joint = dataclasses.replace(self.joints.defs[joint_id], **changes)
        self.joints.replace(joint_id, joint)
        self._wake_joint(joint)

    def _wake_joint(self, joint: JointDef) -> None:
        for body_id in (joint.first, joint.second):
            if body_id != WORLD:
                self.wake(body_id)

    def joint_reactions(self) -> tuple[np.ndarray, np.ndarray]:
        """Force (m, 3) N and torque (m, 3) N·m of the last step on each joint's first body at
        its anchor (world frame, joints in ``joints.ids`` order)."""
        return self.joints.force.copy(), self.joints.torque.copy()

    def joint_errors(self) -> np.ndarray:
        """(m, 2): each joint's present position (m) and angle (rad) violation."""
        return violations(self.joints.arrays(self.model.ids), self.state.pos, self.state.quat)

    def joint_view(self) -> JointView:
        """Every joint where it is now, with its last reactions and violations."""
        table = self.joints
        if not table.defs:
            return NO_JOINTS
        return joint_view(table.ids, list(table.defs.values()), table.arrays(self.model.ids),
                          self.state.pos, self.state.quat, table.force, table.torque,
                          table.error)

    def take_broken_joints(self) -> list[tuple[int, JointDef]]:
        """(id, definition) of each joint that broke since the last call (they are removed)."""
        broken, self._broken = self._broken, []
        return broken

    # ---- settings and commands ----------------------------------------------------------
    def set_gravity(self, gravity) -> None:
        self.model.settings.gravity = check_vector("gravity", gravity, 3)
        self.wake_all()

    def set_container(self, size) -> None:
        """Container extents (3,) m, or None for no walls."""
        self.model.settings.container_size = None if size is None else check_container_size(size)
        self.wake_all()

    def set_solver_iterations(self, count: int) -> None:
        """Sequential-impulse sweeps per step (1…1000): more make stacks stiffer, cost more."""
        self.model.settings.solver_iterations = check_solver_iterations(count)

    def set_restitution(self, value: float, body_id: int | None = None) -> None:
        """World default (body_id None) or one body's restitution; None for a body → default."""
        if body_id is None:
            self.model.settings.restitution = check_restitution(value, "world restitution")
        else:
            self.set_body_material(body_id, restitution=value)

    def set_friction(self, value: float, body_id: int | None = None) -> None:
        if body_id is None:
            self.model.settings.friction = check_friction(value, "world friction")
        else:
            self.set_body_material(body_id, friction=value)

    def set_body_material(self, body_id: int, restitution=..., friction=...) -> None:
        """Per-body material; pass None to return to the world default, omit to keep."""
        row = self.index_of(body_id)
        new_e = self.model.restitution[row] if restitution is ... else (
            np.nan if restitution is None else check_restitution(restitution))
        new_mu = self.model.friction[row] if friction is ... else (
            np.nan if friction is None else check_friction(friction))
        self.model.restitution[row] = new_e
        self.model.friction[row] = new_mu
        self.wake(body_id)

    def apply_impulse(self, body_id: int, impulse, point=None) -> None:
        """Instantaneous impulse (3,) N·s at a world point (default: the centre of mass); a
        static body, of infinite mass, takes it without moving."""
        row = self.index_of(body_id)
        impulse = check_vector("impulse", impulse, 3)
        offset = (
            np.zeros(3) if point is None else check_vector("point", point, 3) - self.state.pos[row]
        )
        if self.model.static[row]:
            return
        self.wake(body_id)
        self.state.vel[row] += impulse * self.model.inv_mass[row]
        self.state.ang_mom[row] += np.cross(offset, impulse)

    def set_external_force(
        self, body_id: int, force=(0.0, 0.0, 0.0), torque=(0.0, 0.0, 0.0)
    ) -> None:
        """World force (3,) N through the centre of mass and torque (3,) N·m, held until changed."""
        row = self.index_of(body_id)
        force, torque = check_vector("force", force, 3), check_vector("torque", torque, 3)
        self.state.force[row] = force
        self.state.torque[row] = torque
        self.wake(body_id)

    def set_grab(self, body_id: int, anchor, target, stiffness: float, damping: float) -> None:
        """Hold one body by a spring (the mouse grab): a point ``anchor`` (3,) fixed in the body
        frame, m, is pulled towards the world point ``target`` (3,) m with ``stiffness`` N/m and
        ``damping`` N·s/m on the anchor's velocity (and on spin). The force is re-evaluated every
        step, so a
        stiff spring stays stable at the physics rate whatever the display rate. Replaces any
        previous grab; ``clear_grab`` releases it."""
        self.index_of(body_id)
        stiffness, damping = float(stiffness), float(damping)
        if not (
            np.isfinite(stiffness) and stiffness >= 0 and np.isfinite(damping) and damping >= 0
        ):
            raise ValueError(f"grab stiffness and damping must be ≥ 0, got {stiffness}, {damping}")
        self._grab = Grab(
            body_id,
            check_vector("grab anchor", anchor, 3),
            check_vector("grab target", target, 3),
            stiffness,
            damping,
        )
        self.wake(body_id)

    def clear_grab(self) -> None:
        self._grab = None

    def set_body_state(self, body_id: int, position=None, orientation=None, velocity=None,
                       angular_velocity=None) -> None:
        """Overwrite parts of one body's state (world frame); unspecified parts stay."""
        row = self.index_of(body_id)
        s, inv = self.state, self.model.inv_inertia[row]
        new_pos = s.pos[row] if position is None else check_vector("position", position, 3)
        new_quat = s.quat[row]
        if orientation is not None:
            new_quat = check_vector("orientation", orientation, 4)
            if np.linalg.norm(new_quat) < 1e-12:
                raise ValueError("orientation must be a non-zero quaternion (w, x, y, z)")
            new_quat = new_quat / np.linalg.norm(new_quat)
        new_vel = s.vel[row] if velocity is None else check_vector("velocity", velocity, 3)
        omega = (self.angular_velocity()[row] if angular_velocity is None
                 else check_vector("angular_velocity", angular_velocity, 3))
        if self.model.static[row]:
            if new_vel.any() or omega.any():
                raise ValueError(f"body {body_id} is static: it can be placed but not set "
                                 "moving; make it dynamic first")
            self._wake_near(row)  # what rested on it where it was
        s.pos[row], s.quat[row], s.vel[row] = new_pos, new_quat, new_vel
        if not self.model.static[row]:  # a static body's is zero (and its inverse inertia)
            s.ang_mom[row] = angular_momentum(new_quat[None], omega[None], inv[None])[0]
        self.wake(body_id)
        if self.model.static[row]:
            self._wake_near(row)  # what it now touches where it is

    def set_static(self, body_id: int, static: bool) -> None:
        """Make a body scenery — it stops where it is, and never moves under gravity, contacts,
        joints, impulses or the grab — or dynamic again (docs/physics.md#static-bodies).
        Whatever rests on or against it wakes."""
        row = self.index_of(body_id)
        static = check_static(static)
        if static:
            self.state.vel[row] = 0.0
            self.state.ang_mom[row] = 0.0
        self.model.set_static(row, static)
        self.wake(body_id)
        self._wake_near(row)

    def set_pieces(self, body_id: int, pieces) -> None:
        """Make a body collide with other bodies as convex pieces (k_i, 3) in its body frame, m
        (a compound body, docs/physics.md#compound-bodies), or as its own shape again (none);
        it wakes, and so does what touches it. Its mass properties do not change."""
        row = self.index_of(body_id)
        self.model.set_pieces(row, pieces)
        self.wake(body_id)
        self._wake_near(row)

    def _wake_near(self, row: int) -> None:
        """Wake every sleeping body whose bounding sphere comes within the speculative margin
        of body ``row``'s: a static body keeps no island or contact list of what sleeps on it
        (scenery links no island), so a change to it wakes its neighbourhood instead."""
        m, s = self.model, self.state
        gap = np.linalg.norm(s.pos - s.pos[row], axis=1) - m.bound_radius - m.bound_radius[row]
        near = gap <= SPECULATIVE_MARGIN
        s.asleep[near] = False
        s.slow_time[near] = 0.0

    def wake(self, body_id: int) -> None:
        """Wake one body (its sleeping neighbours wake through their contacts with it)."""
        row = self.index_of(body_id)
        self.state.asleep[row] = False
        self.state.slow_time[row] = 0.0

    def wake_all(self) -> None:
        self.state.asleep[:] = False
        self.state.slow_time[:] = 0.0

    def asleep(self) -> np.ndarray:
        """(n,) bool: bodies not simulated until something wakes them (dynamics/sleep.py)."""
        return self.state.asleep.copy()

    # ---- the step -----------------------------------------------------------------------
    def advance(self, dt: float, steps: int) -> None:
        """Advance by ``steps`` fixed steps of dt seconds in one call: the same bits as calling
        ``step(dt)`` that many times (docs/architecture.md#batches). Callers run the steps due
        between two moments they need the world (a frame, a sample, a command) as one batch."""
        if not (isinstance(steps, (int, np.integer)) and steps >= 0):
            raise ValueError(f"advance needs a whole number of steps ≥ 0, got {steps!r}")
        self._advance(_checked_step(dt), int(steps))

    def step(self, dt: float) -> None:
        """Advance by one fixed step of dt seconds (a batch of one)."""
        self._advance(_checked_step(dt), 1)

    def _advance(self, h: float, steps: int) -> None:
        """``steps`` steps of h s in compiled batches (dynamics/batch.py); a step with joints
        that only the Python path can take ends a batch, runs here, and the next batch goes on
        from it (a joint it broke is gone from the next)."""
        while steps:
            steps -= self._run_batch(h, steps)
            if steps:
                self._step_in_python(h)
                steps -= 1

    def _run_batch(self, h: float, steps: int) -> int:
        """Up to ``steps`` steps in one compiled call, the GIL released (dynamics/batch.py);
        returns how many it took."""
        m, s, table = self.model, self.state, self.joints
        joints, unjoined, break_forces = table.batch_arguments(m.ids)
        factors = table.factors.plain(joints)
        # the records cross into the kernel as plain tuples (docs/architecture.md#records),
        # or held in numba (physics/held.py)
        joint_carried = (table.impulses, table.force, table.torque, table.error, factors)
        s.time, bodies, joint_done, count = run_batch(
            steps, h, m.batch_records, tuple(self._step_settings()), s.force, s.torque,
            self._grab_spring(), parallel_threads(), s.time, self._start(), s.carried,
            tuple(joints), unjoined, break_forces, joint_carried)
        s.pos, s.quat, s.vel, s.ang_mom, s.asleep, s.slow_time = bodies
        table.impulses, table.force, table.torque, table.error = joint_done[:4]
        table.factors.keep(joints, joint_done.factors)
        return count

    def _step_in_python(self, h: float) -> None:
        """One step of a world with joints that ``run_batch`` left to Python: stages 1–2 as the
        batch runs them, then ``_advance_jointed``."""
        m, s = self.model, self.state
        joints = self.joints.arrays(m.ids)
        wake_joined(joints.first, joints.second, m.static, s.asleep, s.slow_time)
        # the batch stopped after this point: something moves
        # 1. forces over the step (docs/physics.md#free-rotation: torques go into the world L)
        settings = self._step_settings()
        forced = apply_forces(m.body_model, settings.gravity, self._start(), s.force, s.torque,
                              self._grab_spring(), h)
        # 2. contacts: walls, then body pairs (broad phase → narrow phase)
        contacts = self._find_contacts(forced.rotm, forced.vel, forced.omega, settings.planes,
                                       forced.awake, h)
        if not forced.awake.all() and self._wake_struck(contacts, forced.vel, forced.omega,
                                                         joints, h):
            try:  # the struck bodies take part in this step from its start
                return self._step_in_python(h)
            finally:
                self._struck = None
        # 3.–7. impulses with the joints', motion, penetration, energy guard, joints, sleep
        self._advance_jointed(contacts, forced, joints, settings, h)
        s.time += h

    def _advance_jointed(self, contacts, forced, joints, settings, h) -> None:
        """Stages 3–7 of a step with joints that ``advance_forest`` cannot take, whose solve
        interleaves with the contacts' (docs/physics.md#joint-projection): the compiled stages
        of dynamics/advance.py one by one, the joints' between them, their solves falling back
        to the general one where the tree's cannot serve (constraints/projection.py)."""
        m, s = self.model, self.state
        kept = s.carried.values()  # taken out once, put back changed at the end
        vel, ang_mom, omega, inv_mass = forced.vel, forced.ang_mom, forced.omega, forced.inv_mass
        vel_free, ang_mom_free = vel.copy(), ang_mom.copy()
        inv_inertia = held_still(m.inv_inertia, forced.awake)
        inv_iw = world_inverse_inertia(forced.rotm, inv_inertia)              # (n,3,3) R I⁻¹ Rᵀ
        restitution, friction = contact_materials(contacts, m.effective_restitution(),
                                                  m.effective_friction())
        # joints are swept before the contacts and again after them, so each sees the other
        joint_rows = solve_joint_velocities(joints, self.joints.impulses, s.pos, s.quat, vel,
                                            omega, ang_mom, inv_mass, inv_iw, inv_inertia,
                                            h, m.settings.solver_iterations, self.joints.factors)
        result = solve_contacts(
            contacts, Motion(s.pos, vel, omega, forced.accel, inv_mass, inv_iw), ang_mom,
            restitution, friction, kept["cache"].impulses_of(contacts.key), h,
            m.settings.solver_iterations, m.settings.restitution_threshold)
        resting = None
        swept = one_sided(joint_rows)
        # after the contacts the joints again, unless no contact acted on a joined body and no
        # joint needs sweeping: the velocities then still hold J v = 0 exactly
        if (len(swept) or result.touched[joints.first].any()
                or result.touched[joints.second[joints.second >= 0]].any()):
            # the contacts that pushed and rest: the joints' solve below must not undo them
            loaded = np.flatnonzero(result.loaded)
            resting = resting_contacts(contacts.body[loaded], contacts.other[loaded],
                                       contacts.point[loaded], contacts.normal[loaded],
                                       contacts.tangent1[loaded], contacts.tangent2[loaded],
                                       s.pos, vel, omega, m.settings.restitution_threshold,
                                       SLEEP_LINEAR_TOLERANCE)
            # the sweeps leave a long chain's rows unsettled; a solve over all the joints'
            # equality rows makes J v = 0 exact, the resting contacts held with them
            # (docs/physics.md#joint-projection)
            settle_joints(swept, joints, joint_rows, self.joints.impulses, s.pos, s.quat, vel,
                          omega, ang_mom, inv_mass, inv_iw, inv_inertia, h,
                          m.settings.solver_iterations, resting, self.joints.factors)

        # 4. move: positions per contact regime, orientations by the rotation step
        # a jointed body away from contacts moves as if its end velocity, which the joint solve
        # made honour the joint, had been reached at the step's start: x + h v₁ − ½ a h² (the
        # free-flight parabola from the end), so gravity neither adds nor removes energy
        # — unless a contact acted anywhere on its bodies joined together: a link held at rest
        # by neighbours lying on the floor ends with v₁ = 0 and would rise by ½ g h² a step,
        # which the joints' projection then handed on to its neighbours, lifting the pile (so
        # those move as in resting contact, x + h v₁)
        touched, impact_fraction = result.touched, result.impact_fraction
        free = np.zeros(m.count, dtype=bool)
        free[joints.first] = True
        free[joints.second[joints.second >= 0]] = True
        if touched.any():
            chained = islands(m.count, *links(m.static, joints.first, joints.second))
            free &= ~np.isin(chained, chained[touched])
        free &= ~touched
        touched, impact_fraction = touched | free, np.where(free, 0.0, impact_fraction)
        pos, quat, rotm_end = move(s.pos, s.vel, vel, forced.accel, touched, impact_fraction,
                                   s.quat, ang_mom, m.inv_inertia, h)
        turned_with = ang_mom.copy()  # the projection turns them again

        # 5. penetration is projected out (bodies apart, then out of the walls), 6. the energy
        # guard, then the joints are projected back onto Φ = 0 last: whatever moved a link (the
        # push, the walls, the guard's drop) must not leave its joint open
        # (docs/physics.md#joint-projection)
        acted = result.acted                                                  # (k,)
        island = islands(m.count, *links(m.static, contacts.body[acted], contacts.other[acted]))
        if contacts.count:
            pushed, lifted = separate(tuple(contacts), m.body_model, settings.planes, s.pos, pos,
                                      rotm_end, vel, omega, inv_mass, ang_mom, h)
            guard_energy(tuple(contacts), tuple(result), island, pushed, lifted, m.body_model,
                         settings.gravity, self._start(), vel_free, ang_mom_free,
                         pos, quat, vel, ang_mom, h)
        # the velocity system's factors at the start poses, made or kept by this step's velocity
        # solve on the tree, as the compiled step takes them (none if it was not a forest)
        chord = self.joints.factors.get(joints, s.pos, s.quat, inv_mass, inv_inertia)
        end_rows = project(joints, joint_rows, self.joints.impulses, pos, quat, vel, ang_mom,
                           inv_mass, inv_inertia, h, (s.quat, turned_with), resting,
                           self.joints.factors, chord)
        rotm_end = quat_to_matrix(quat)
        hold_static(m.static, self._start(), pos, quat, vel, ang_mom)
        s.pos, s.quat, s.vel, s.ang_mom = pos, quat, vel, ang_mom
        self._joint_results(joints, joint_rows, h, end_rows)
        island = islands(m.count, *links(
            m.static, np.concatenate((contacts.body[acted], joints.first)),
            np.concatenate((contacts.other[acted], joints.second))))
        # 7. islands at rest fall asleep
        kept["pairs"] = update_sleep(
            tuple(contacts), acted, island, m.body_model, s.asleep, s.slow_time, s.vel,
            s.ang_mom, rotm_end, forced.force, forced.torque, kept["pairs"], h,
            m.settings.sleep)
        kept.update(cache=ContactCache.of(contacts.key, result.impulses, result.loaded),
                    point=contacts.point, normal=contacts.normal, acted=acted)
        s.carried = StepRecords(**kept)

    def _step_settings(self) -> StepSettings:
        """The world's settings and walls as the compiled stages read them."""
        settings = self.model.settings
        return StepSettings(np.asarray(settings.gravity, dtype=float), self.model.wall_planes(),
                            float(settings.restitution), float(settings.friction),
                            int(settings.solver_iterations),
                            float(settings.restitution_threshold), bool(settings.sleep))

    def _start(self) -> tuple:
        """The state at the step's start as a plain ``Start`` record."""
        s = self.state
        return (s.pos, s.quat, s.vel, s.ang_mom, s.asleep, s.slow_time)

    def _joint_results(self, joints, rows, h, end_rows) -> None:
        """Reactions and violations of the step (from end_rows, the rows at the end poses, when
        the projection had them); joints past their break force break."""
        table, s = self.joints, self.state
        table.force, table.torque = reactions(joints, rows, table.impulses, s.pos, s.quat, h)
        table.error = (violations(joints, s.pos, s.quat) if end_rows is None
                       else violations_of(end_rows))
        limit = table.break_forces(self.model.ids)
        broken = np.flatnonzero(np.linalg.norm(table.force, axis=1) > limit)
        for joint_id in [table.ids[k] for k in broken]:
            joint = table.defs[joint_id]
            table.remove(joint_id)
            self._wake_joint(joint)
            self._broken.append((joint_id, joint))

    def _find_contacts(self, rotm, vel, omega, planes, awake, h) -> Contacts:
        """Wall contacts and body-pair contacts of this step, in one list; sleeping bodies have
        none with the walls or with each other (collision/find.py, in one compiled call)."""
        m, s = self.model, self.state
        banned = self.joints.unjoined_keys(m.ids) if self.joints.defs else NO_BANNED
        # the records cross into the kernel and back as plain tuples
        # (docs/architecture.md#records)
        kept = s.carried.values()  # taken out once, put back changed below
        contacts, swept, manifolds, piece_manifolds = find_contacts_plain(
            m.collision, s.pos, rotm, vel, omega, planes, awake, h, tuple(kept["swept"]),
            tuple(kept["manifolds"]), tuple(kept["piece_manifolds"]), banned,
            parallel_threads())
        kept.update(swept=SweptPairs(*swept), manifolds=ManifoldCache(*manifolds),
                    piece_manifolds=ManifoldCache(*piece_manifolds))
        s.carried = StepRecords(**kept)
        return Contacts(*contacts)

    def _wake_struck(self, contacts, vel, omega, joints, h) -> bool:
        """Wake each sleeping island an awake body strikes faster than the restitution
        threshold this step, and the sleeping bodies touching one struck (``struck_sleepers``);
        True when any woke (the step then starts again: ``_struck`` keeps who woke). joints:
        the step's joint arrays, which link a sleeping island with the pairs remembered from
        before it slept."""
        s, m = self.state, self.model
        struck = self._struck if self._struck is not None else np.zeros(m.count, bool)
        woke = wake_struck(contacts.body, contacts.other, contacts.point, contacts.normal,
                           contacts.separation, s.pos, vel, omega, s.asleep, s.slow_time, struck,
                           m.ids, m.static, s.carried.pairs, joints.first, joints.second,
                           float(h), float(m.settings.restitution_threshold))
        if woke:
            self._struck = struck  # kept only while this step starts again
        return woke

    def _grab_spring(self) -> tuple:
        """The grab as a plain ``GrabSpring`` record (``NO_GRAB`` when nothing is held)."""
        g = self._grab
        if g is None:
            return NO_GRAB
        return (self.index_of(g.body_id), g.anchor, g.target, g.stiffness, g.damping)

    # ---- diagnostics ----------------------------------------------------------------------
    def angular_velocity(self) -> np.ndarray:
        """(n, 3) world ω, rad/s."""
        s = self.state
        return world_omega(quat_to_matrix(s.quat), self.model.inv_inertia, s.ang_mom)

    def body_angular_velocity(self) -> np.ndarray:
        """(n, 3) ω in the principal frame (moments ascending), rad/s."""
        return body_angular_velocity(self.state.quat, self.state.ang_mom, self.model.inv_inertia)

    def kinetic_energy(self) -> np.ndarray:
        """(n,) J."""
        m, s = self.model, self.state
        return kinetic_energy(m.mass, s.vel, s.quat, s.ang_mom, m.inv_inertia)

    def potential_energy(self) -> np.ndarray:
        """(n,) J, zero at y = 0 for the default gravity."""
        return potential_energy(self.model.mass, self.state.pos, self.model.settings.gravity)

    def linear_momentum(self) -> np.ndarray:
        """(n, 3) kg·m/s."""
        return self.model.mass[:, None] * self.state.vel

    def contact_points(self) -> tuple[np.ndarray, np.ndarray]:
        """Points (k, 3) and normals (k, 3) of the contacts that carried load in the last step."""
        points, normals, acted = self.state.carried.last_contacts()
        return points[acted], normals[acted]
