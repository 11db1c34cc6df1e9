"""Every tunable of the engine in one place, with its unit and the reason for its value.

Other modules import these names; none repeats a value. Numbers that are definitions rather
than choices (bit widths of contact keys, rounding guards of a formula) stay with their formula.

The compiled kernels read these as constants when numba compiles them, and numba's on-disk
cache is keyed by the kernel's own source file: after changing a value here, delete the cache
(``find physics -name '*.nb[ci]' -delete``) or the kernels keep the old one.
"""

from __future__ import annotations

import numpy as np

# ---- time ------------------------------------------------------------------------------------
MAX_STEP = 0.1            # s: longer steps are refused (contacts and Newton would be meaningless)
MIN_HZ = 1.0 / MAX_STEP   # steps per second: the physics rate allowed by MAX_STEP
MAX_HZ = 10_000.0         # steps per second: beyond this the app cannot keep real time with a
                          # single body, and a headless run of minutes would take hours
DEFAULT_HZ = 240            # steps per second: four steps per 60 Hz frame (smooth, cheap)

# ---- world defaults ----------------------------------------------------------------------------
STANDARD_GRAVITY = (0.0, -9.81, 0.0)   # m/s², y up
DEFAULT_RESTITUTION = 0.5              # a lively bounce that still settles
DEFAULT_FRICTION = 0.5                 # Coulomb μ of wood on wood, roughly
DEFAULT_CONTAINER = (4.0, 3.0, 4.0)    # m: full extents of the box of walls (floor at y = 0)
SOLVER_ITERATIONS = 10                 # sequential-impulse sweeps per step (Box2D's default, 8…10)
SOLVER_ITERATIONS_RANGE = (1, 1000)    # whole sweeps; beyond 1000 a step takes seconds
RESTITUTION_THRESHOLD = 0.2            # m/s: slower impacts do not bounce, so resting contacts
                                       # do not buzz (Bullet 0.2 m/s, Box2D 1 m/s)

# ---- contacts ----------------------------------------------------------------------------------
SPECULATIVE_MARGIN = 0.01   # m: gap within which a point is a contact even at rest
REACH_STEPS = 1.5           # steps of motion a contact is looked for ahead (speculative reach
                            # = SPECULATIVE_MARGIN + REACH_STEPS·h·speed; broad phase, walls and
                            # narrow phase use the same, so they agree on which pairs matter)
PENETRATION_SLOP = 5e-4     # m: deeper penetrations are projected out at the end of a step
PUSH_ITERATIONS = 4         # Gauss–Seidel sweeps of the body–body position pass
MAX_POINTS_PER_PLANE = 5    # wall contacts per body and plane: deepest + 4 in-plane extremes
MAX_MANIFOLD = 4            # contact points per hull pair (Box2D, Bullet, Jolt)
MANIFOLD_REUSE_SHIFT = 5e-4          # m a touching pair may move relative to each other …
MANIFOLD_REUSE_TURN = np.radians(1.0)  # … and rad it may turn, before its manifold is found again

# ---- sleep (Box2D's values) ---------------------------------------------------------------
SLEEP_LINEAR_TOLERANCE = 0.01             # m/s
SLEEP_ANGULAR_TOLERANCE = np.radians(2.0)  # rad/s
TIME_TO_SLEEP = 0.5                       # s an island must stay slow

# ---- grab (the mouse spring) ------------------------------------------------------------------
GRAB_MIN_ARM = 0.05  # m: lever arm of the grab's spin damping when grabbed at the centre

# ---- meshes ------------------------------------------------------------------------------------
INERTIA_FORMULAS = ("solid", "shell")      # a closed solid, or a thin surface (kg/m²)
INERTIA_MODES = ("auto",) + INERTIA_FORMULAS  # auto: solid if closed, else shell with a warning
MAX_FACES = 5_000_000       # triangles per file by default (a 5 M-face scan loads in seconds)
MAX_HULL_VERTICES = 64      # collision hull vertices, as MuJoCo's hulls
SIZE_LIMITS = (1e-5, 1e4)   # m across: outside, float64 mass properties (∝ size⁵) and the
                            # millimetre contact tolerances mean nothing, so a mesh is refused
PLAUSIBLE_SIZE = (2e-3, 20.0)  # m across: outside, a mesh is most likely in other units
                               # (CAD parts in millimetres): a warning and the app's offer
DEFAULT_DENSITY = 1000.0    # kg/m³ (water) for meshes and builtins without their own

# ---- the physics thread -------------------------------------------------------------------------
MIN_TIME_SCALE, MAX_TIME_SCALE = 0.01, 4.0  # slow motion down to 1 %, fast forward up to 4×
