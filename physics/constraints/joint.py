"""Joint definitions: what the user asks for, validated (static model, world frame at creation).

A joint links body ``first`` to body ``second`` (ids), or to the fixed world (``WORLD``).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np

from physics.model import check_vector

WORLD = -1                      # body id of the fixed world
JOINT_TYPES = ("ball", "hinge", "prismatic", "fixed", "distance")
KIND = {name: code for code, name in enumerate(JOINT_TYPES)}
AXIS_TYPES = ("hinge", "prismatic")


def _finite(name: str, value, minimum: float | None = None) -> float:
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"joint {name} must be a number, got {value!r}") from None
    if not np.isfinite(number) or (minimum is not None and number < minimum):
        bound = "" if minimum is None else f" ≥ {minimum:g}"
        raise ValueError(f"joint {name} must be a finite number{bound}, got {value!r}")
    return number


@dataclass(eq=False)
class JointDef:
    """One joint, as created.

    kind         one of JOINT_TYPES
    first        body id; second: body id or WORLD
    anchor       (3,) world point at creation, m
    axis         (3,) world direction at creation (hinge, prismatic), normalised
    limits       (lo, hi) rad (hinge) or m (prismatic), or None
    motor_speed  rad/s or m/s target, with motor_max N·m or N (> 0), or motor_max None: no motor
    min_length, max_length  distance only, m (None: the distance at creation)
    stiffness    N/m, damping N·s/m: distance only, a spring towards rest_length
    rest_length  distance only, m: the spring's rest length (None: the distance at creation,
                 kept within [min_length, max_length])
    break_force  N: past it the joint breaks; None: never
    collide      the two bodies collide with each other
    """

    kind: str
    first: int
    second: int = WORLD
    anchor: np.ndarray = None
    axis: np.ndarray | None = None
    limits: tuple[float, float] | None = None
    motor_speed: float = 0.0
    motor_max: float | None = None
    min_length: float | None = None
    max_length: float | None = None
    rest_length: float | None = None
    stiffness: float = 0.0
    damping: float = 0.0
    break_force: float | None = None
    collide: bool = False

    def __post_init__(self) -> None:
        if self.kind not in JOINT_TYPES:
            raise ValueError(f"joint type must be one of {', '.join(JOINT_TYPES)}, "
                             f"got {self.kind!r}")
        if self.first == self.second:
            raise ValueError(f"a joint needs two different bodies, got {self.first} twice")
        if self.first == WORLD:  # the world is always second
            self.first, self.second = self.second, WORLD
        self.anchor = check_vector("joint anchor", self.anchor, 3)
        if self.kind in AXIS_TYPES:
            if self.axis is None:
                raise ValueError(f"a {self.kind} joint needs an axis")
            axis = check_vector("joint axis", self.axis, 3)
            norm = np.linalg.norm(axis)
            if norm < 1e-9:
                raise ValueError(f"joint axis must be non-zero, got {axis.tolist()}")
            # a unit axis is kept as given: normalising it again would move its last digit,
            # and a saved scene would not read back equal
            self.axis = axis if abs(norm - 1.0) < 1e-12 else axis / norm
        elif self.axis is not None:
            raise ValueError(f"a {self.kind} joint takes no axis, got {self.axis!r}")
        self._check_limits_and_motor()
        self._check_distance()
        if self.break_force is not None:
            self.break_force = _finite("break_force", self.break_force, 0.0)
        if not isinstance(self.collide, (bool, np.bool_)):
            raise ValueError(f"joint collide must be true or false, got {self.collide!r}")
        self.collide = bool(self.collide)

    def __eq__(self, other) -> bool:  # field by field: anchor and axis are arrays
        if not isinstance(other, JointDef):
            return NotImplemented
        return all(np.array_equal(a, b) if isinstance(a, np.ndarray) else a == b
                   for a, b in zip(dataclasses.astuple(self), dataclasses.astuple(other)))

    def _check_limits_and_motor(self) -> None:
        if self.kind not in AXIS_TYPES and (self.limits is not None or self.motor_max is not None):
            raise ValueError(f"a {self.kind} joint takes no limits or motor")
        if self.limits is not None:
            if len(self.limits) != 2:
                raise ValueError(f"joint limits must be [lo, hi], got {self.limits!r}")
            lo, hi = _finite("limits", self.limits[0]), _finite("limits", self.limits[1])
            if lo > hi:
                raise ValueError(f"joint limits must have lo ≤ hi, got [{lo}, {hi}]")
            if self.kind == "hinge" and not (-np.pi < lo and hi < np.pi):
                raise ValueError(f"hinge limits must lie inside (−π, π) rad, got [{lo}, {hi}]")
            self.limits = (lo, hi)
        self.motor_speed = _finite("motor speed", self.motor_speed)
        if self.motor_max is not None:
            self.motor_max = _finite("motor max torque/force", self.motor_max, 0.0)

    def _check_distance(self) -> None:
        if self.kind != "distance":
            if ((self.min_length, self.max_length, self.rest_length) != (None, None, None)
                    or self.stiffness or self.damping):
                raise ValueError(f"a {self.kind} joint takes no min, max, rest_length, "
                                 "stiffness or damping")
            return
        if self.min_length is not None:
            self.min_length = _finite("min", self.min_length, 0.0)
        if self.max_length is not None:
            self.max_length = _finite("max", self.max_length, 0.0)
        if (self.min_length is not None and self.max_length is not None
                and self.min_length > self.max_length):
            raise ValueError(f"joint min must be ≤ max, got min {self.min_length} > max "
                             f"{self.max_length}")
        if self.rest_length is not None:
            self.rest_length = _finite("rest_length", self.rest_length, 0.0)
        self.stiffness = _finite("stiffness", self.stiffness, 0.0)
        self.damping = _finite("damping", self.damping, 0.0)
