"""Per-step state of N bodies (MuJoCo's mjData): everything ``World.step`` advances.

The angular state is the world angular momentum ``L`` about the centre of mass, not ω: torque-free
``L`` is constant in the world, so storing it keeps that conservation law exact
(docs/physics.md#conventions).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from physics.collision.broadphase import SweptPairs
from physics.collision.manifolds import ManifoldCache
from physics.dynamics.warmstart import ContactCache
from physics.held import StepRecords


def no_step_records() -> StepRecords:
    """What a state starts with before its first step: nothing kept, no contacts."""
    no_ids = np.zeros(0, dtype=np.int64)
    return StepRecords(ContactCache(), SweptPairs(), ManifoldCache(), ManifoldCache(),
                       (no_ids, no_ids.copy()), np.zeros((0, 3)), np.zeros((0, 3)),
                       np.zeros(0, dtype=bool))


@dataclass
class State:
    """time s; pos (n,3) centre of mass m; quat (n,4) principal → world; vel (n,3) m/s;
    ang_mom (n,3) world angular momentum about the COM, kg·m²/s;
    force (n,3) N and torque (n,3) N·m: external loads held until changed (world frame);
    asleep (n,) bool: the body is not simulated until woken (dynamics/sleep.py); slow_time (n,) s
    it has been under the sleep tolerances. carried: what the last step hands the next, held in
    numba (``StepRecords``: the warm start by contact key, the broad phase's last fat sweep,
    the manifolds of the touching body and piece pairs, the ids that pressed together, the
    last step's contacts)."""

    time: float = 0.0
    pos: np.ndarray = field(default_factory=lambda: np.zeros((0, 3)))
    quat: np.ndarray = field(default_factory=lambda: np.zeros((0, 4)))
    vel: np.ndarray = field(default_factory=lambda: np.zeros((0, 3)))
    ang_mom: np.ndarray = field(default_factory=lambda: np.zeros((0, 3)))
    force: np.ndarray = field(default_factory=lambda: np.zeros((0, 3)))
    torque: np.ndarray = field(default_factory=lambda: np.zeros((0, 3)))
    asleep: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=bool))
    slow_time: np.ndarray = field(default_factory=lambda: np.zeros(0))
    carried: StepRecords = field(default_factory=no_step_records)

    ROW_FIELDS = ("pos", "quat", "vel", "ang_mom", "force", "torque", "asleep", "slow_time")

    def extend(self, pos, quat, vel, ang_mom) -> None:
        """Add body rows with no external load: pos, vel, ang_mom (k, 3), quat (k, 4)."""
        k = len(pos)
        self.pos = np.vstack((self.pos, pos))
        self.quat = np.vstack((self.quat, quat))
        self.vel = np.vstack((self.vel, vel))
        self.ang_mom = np.vstack((self.ang_mom, ang_mom))
        self.force = np.vstack((self.force, np.zeros((k, 3))))
        self.torque = np.vstack((self.torque, np.zeros((k, 3))))
        self.asleep = np.append(self.asleep, np.zeros(k, dtype=bool))
        self.slow_time = np.append(self.slow_time, np.zeros(k))

    def delete(self, row: int) -> None:
        """Remove one body row."""
        for name in self.ROW_FIELDS:
            setattr(self, name, np.delete(getattr(self, name), row, axis=0))
