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

# ---- history (physics/history.py, docs/architecture.md#history) ------------------------------
HISTORY_SECONDS = 60.0       # s of sim time kept by default: a moment just missed is in it
MAX_HISTORY_SECONDS = 600.0  # s: ten minutes; memory grows with it (bench/replay.py)
CHECKPOINT_INTERVAL = 1.0    # s of sim time between checkpoints: an exact seek re-runs at most
                             # this much (240 steps at 240 Hz)
CHECKPOINT_WORK = 0.5        # s of wall time of the steps since the last checkpoint after
                             # which one is taken early: an exact seek re-runs about this much
                             # on a machine too slow to step a second of a big pile in a second
EARLY_KEPT = 10.0            # s: those early checkpoints are kept this long whatever they cost
                             # (an instant replay's span), and after it while they fit EARLY_BYTES
EARLY_BYTES = 200.0          # bytes a body a second of history that older early checkpoints may
                             # hold (an eighth of the 1 666 that keep a minute of 1 000 bodies
                             # in 100 MB): a big pile's falling seconds stay quick to seek (~6 MB
                             # of early ones for bench/replay.py's 1 000 cubes: its worst exact
                             # seek 4.3 -> 0.5 s), while a scene slow for minutes loses its
                             # oldest ones
RING_HZ = 60.0               # pose frames per s of sim time kept for scrubbing: a display's rate

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
# A compound body pair's contacts (several piece pairs) are reduced as one set: those whose
# normals agree within MANIFOLD_NORMAL_COS (26°) form one manifold of at most MAX_MANIFOLD
# points, picked among the points within MANIFOLD_LEVEL of the deepest, so a piece a few mm off
# the surface (a speculative contact) never takes the place of one that carries the body. Jolt
# merges within cos 8° (PhysicsSettings::mContactNormalCosMaxDeltaRotation), for the triangles
# of one surface; a torus's pieces meet a face along normals tens of degrees apart, and at 8°
# a decomposed heap kept up to 17 points a pair (docs/physics.md#compound-bodies)
MANIFOLD_NORMAL_COS = 0.9
MANIFOLD_LEVEL = 2e-3       # m
MANIFOLD_REUSE_SHIFT = 5e-4          # m a touching pair may move relative to each other …
MANIFOLD_REUSE_TURN = np.radians(1.0)  # … and rad it may turn, before its manifold is found again

# ---- sleep (Box2D's values) ---------------------------------------------------------------
SLEEP_LINEAR_TOLERANCE = 0.01             # m/s
SLEEP_ANGULAR_TOLERANCE = np.radians(2.0)  # rad/s
TIME_TO_SLEEP = 0.5                       # s an island must stay slow
# a sleeping body this close to one struck awake in a step wakes with it, before the step is
# solved: a row of touching bodies (a Newton's cradle) passes a strike on within the step
WAKE_TOUCH_GAP = 1e-3                     # m

# ---- grab (the mouse spring) ------------------------------------------------------------------
GRAB_MIN_ARM = 0.05  # m: lever arm of the grab's spin damping when grabbed at the centre

# ---- meshes ------------------------------------------------------------------------------------
INERTIA_FORMULAS = ("solid", "shell")      # a closed solid, or a thin surface (kg/m²)
INERTIA_MODES = ("auto",) + INERTIA_FORMULAS  # auto: solid if closed, else shell with a warning
MAX_FACES = 5_000_000       # triangles per file by default (a 5 M-face scan loads in seconds)
MAX_HULL_VERTICES = 64      # collision hull vertices, as MuJoCo's hulls
MAX_PIECES = 64             # convex pieces of a compound body (V-HACD's default hull budget)
SIZE_LIMITS = (1e-5, 1e4)   # m across: outside, float64 mass properties (∝ size⁵) and the
                            # millimetre contact tolerances mean nothing, so a mesh is refused
PLAUSIBLE_SIZE = (2e-3, 20.0)  # m across: outside, a mesh is most likely in other units
                               # (CAD parts in millimetres): a warning and the app's offer
DEFAULT_DENSITY = 1000.0    # kg/m³ (water) for meshes and builtins without their own

# ---- convex decomposition (geometry/decompose.py, docs/physics.md#convex-decomposition) ---------
# collision = "auto" splits a closed mesh whose convex hull holds more than this times its volume:
# a box, a cylinder or a sphere mesh are at 1.0, an L-block at 1.17, a wing nut at 1.5, a
# T-handle at 1.8, a torus at 1.6, a bowl at 3.7; an L-block's hull already has a slope over
# its notch that a ball would rest on, while a scan of a convex object with shallow dents stays
# within a few per cent
DECOMPOSE_HULL_RATIO = 1.1
DECOMPOSE_MAX_PIECES = 24       # V-HACD's budget of pieces: the shipped torus splits into 24,
                                # 13 % over its volume, a T-handle into 18, 0.2 % over
DECOMPOSE_RESOLUTION = 100_000  # voxels: V-HACD's default 400 000 took 3.5× as long on a
                                # torus (14 s against 4 s) for pieces 7 points tighter
DECOMPOSE_VOLUME_ERROR = 2.0    # %: a piece within this of its hull's volume is not cut further
# V-HACD spends its whole budget of pieces; pieces are then joined pairwise while a join adds less
# than DECOMPOSE_MERGE_COST of the mesh's volume, and all joins together less than
# DECOMPOSE_MERGE_BUDGET: a T-handle's 18 slabs become 2 (+6 %), a torus's 24 about 7; at 0.01
# the T-handle kept 9; the budget stops a bowl's thin wall from filling its inside
DECOMPOSE_MERGE_COST = 0.02
DECOMPOSE_MERGE_BUDGET = 0.10

# ---- the physics thread -------------------------------------------------------------------------
MIN_TIME_SCALE, MAX_TIME_SCALE = 0.01, 4.0  # slow motion down to 1 %, fast forward up to 4×

# ---- the physics thread's batches ---------------------------------------------------------------
CATCH_UP = 4        # a batch may run up to this many times the steps of one publish interval
ERROR_HISTORY = 32  # command errors kept in snapshots

# ---- broad and narrow phase --------------------------------------------------------------------
BODIES_PER_CHUNK = 256  # fewer bodies per thread are not worth a thread's start-up
FAT_MARGIN = 0.02       # m a fat sphere is wider than the reach sphere it was made from
MAX_REPLACED = 64       # more bodies leaving their fat spheres in one step: a fresh sweep
PAIRS_PER_CHUNK = 256   # fewer pairs per thread are not worth a thread's start-up
FACE_PREFERENCE = 1e-3  # m: an edge axis must separate this much more to beat a face axis
BOX_TOLERANCE = 1e-9    # relative: how exactly a hull must be a box to be treated as one
GJK_MAX_ITERATIONS = 64  # GJK steps at most: a handful settle hulls of 64 vertices; the cap
                         # only stops a cycle that rounding could make (collision/gjk.py)
GJK_TOLERANCE = 1e-12    # relative gap between GJK's two bounds at which it has converged
EDGE_SKIP_MARGIN = 1e-9  # m the GJK distance must be under the edge query's threshold for the
                         # query to be skipped: far above the rounding of either computation

# ---- the contact solver -------------------------------------------------------------------------
RESTITUTION_MAX_SWEEPS = 100  # bound on the restitution pass's sweeps (few contacts: wall impacts)
RESTITUTION_TOLERANCE = 1e-15  # relative impulse change at which that pass has converged
# The velocity sweeps of a large step run on two threads (sweep_groups): slabs, two per phase
SWEEP_SLABS = 4
PARALLEL_MIN_CONTACTS = 1024  # fewer are swept on one thread, in their own order: 20 thread
# hand-overs a step cost more than they save below this (bench/pile.py, N = 100: 0.8×)

# ---- heavy-on-light stacks (dynamics/stacks.py) -------------------------------------------------
# Islands with a body–body contact whose masses differ by more than this are solved exactly;
# below it ten sweeps with warm starting hold a stack (tests/physics/test_stacks.py: 10 : 1)
STACK_MASS_RATIO = 5.0
# At most this many contacts in one island are solved (a dense solve costs m³ / 3): a larger
# island is left to the sweeps alone. A table top on four legs has 32; at 128, the islands of a
# falling heap of mixed sizes (bench/frame.py's 500 builtins, ratios up to ~15) cost 0.5 ms a
# step, a quarter of the whole step, for heaps the sweeps hold anyway (0.12 ms at 48)
STACK_MAX_CONTACTS = 48
# Work allowed per island and step, in p³ summed over the linear solves of p contacts each
# (a solve costs p³ / 3 multiply-adds): a small stack's search always finishes (2 boxes: 8
# contacts, 512 a solve), an island of 48 contacts about 36. A search cut short
# leaves a feasible point with less kinetic energy than the warm start, and the next step goes
# on from it
STACK_SOLVE_BUDGET = 4.0e6
STACK_REGULARIZATION = 1e-8  # relative to A's diagonal: the least-norm split of a singular A
STACK_REFINEMENTS = 2         # solves against the true A after the regularized one
STACK_TOLERANCE = 1e-12       # m/s (plus 1e-9 of the largest |b|): a contact that closes slower
# is taken for at rest, and the search stops

# ---- joints (constraints/): projection onto Φ = 0 (docs/physics.md#joint-projection) ---------
NEWTON_STEPS = 4          # global Newton steps on Φ = 0 per step (quadratic: 3 reach rounding)
JOINT_TOLERANCE = 1e-9    # m or rad: a joint this close to Φ = 0 is closed (far below 1 mm)
# how much the SHAKE velocity correction may raise the kinetic energy (relative) before the
# step is redone along the present rows: a curved path turns the velocity, it does not speed it
SHAKE_ENERGY_ALLOWANCE = 1e-6
# a Newton step reuses the last step's factors (a chord step) while each step cuts |Φ| at least
# this much; a whipping chain's large corrections factor afresh (the chord diverged there)
CHORD_GAIN = 1e-2
# regularisation of J M⁻¹ Jᵀ, relative to its largest diagonal: redundant rows (a closed loop of
# joints) make it singular; this picks the least-norm impulses without changing a regular solve
REGULARISATION = 1e-12
# rows in a projection's general solve (a loop of joints, contacts resting in it) up to which it
# is a dense LU: an 8-link chain lying on the floor has 20–64, where a dense solve costs
# 20–60 µs and building scipy's sparse matrices for it had cost ~300 µs; past ~100 rows
# OpenBLAS splits the LU between threads (4x slower than one thread here with the other core
# busy) and the dense cost grows as rows³, so bigger systems take the sparse LU, linear in a
# chain's links
DENSE_SOLVE_ROWS = 96
# joints with a limit, motor or spring: their sweeps and the exact solve of every joint's
# equality rows take turns this many times a solve, so a limit's or motor's impulse on a body
# other joints hold is not undone by their correction; each turn lets the held body keep about
# half of what the sweep gave it (a motor on a hinge to a welded body reached its stop within
# the test's 2 s at 8, not at 4)
SETTLE_PASSES = 8

# ---- the rotation step (dynamics/integrator.py) -------------------------------------------------
NEWTON_MAX_ITERATIONS = 12  # |h·ω| up to ~20 rad per step converges well inside this
NEWTON_TOLERANCE = 4e-16    # relative to |L_b|; stops at rounding level

# ---- mesh geometry -------------------------------------------------------------------------------
EXTREMES_BY_GRID_ABOVE = 100_000  # points: a hull's candidates found by the grid search
CELLS_PER_AXIS = 16               # grid of the points' bounding box; empty cells cost nothing
COPLANAR_COS = 1.0 - 1e-9         # triangles whose normals agree this well lie in one face
COPLANAR_OFFSET = 1e-9            # m, relative to the hull's size

# ---- the process (physics/runtime.py sets these when the engine starts) --------------------------
SPIN_COUNT = 10_000        # turns an OpenMP worker spins before it sleeps (libgomp reads it)
MMAP_THRESHOLD = 32 << 20  # bytes: glibc's largest (DEFAULT_MMAP_THRESHOLD_MAX on 64-bit)
TRIM_THRESHOLD = 64 << 20  # bytes of free heap kept for the next step
ARRAY_HUGE_PAGES = False   # numpy's huge-page advice for arrays ≥ 4 MB: off, fresh huge pages
                           # cost a big mesh's load ~0.25 s of CPU here (physics/runtime.py)
