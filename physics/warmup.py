"""Compile (or load from numba's on-disk cache) every kernel the engine runs, ahead of use.

The kernels are ``@njit(cache=True)``: the first call in a fresh checkout compiles them
(minutes: numba compiles on the calling thread, the compiled batch of steps alone about five
on this machine, as numba optimises an entry point's whole call tree again), later
interpreters load the cache in a few seconds.
Whoever would otherwise pay that first call at a bad moment calls ``compile_kernels()`` first:
the setup script (so a fresh install starts warm), the test session (so a timed test never
waits for the compiler), and the app before its physics thread starts.

    python -m physics.warmup          # every part, split between two processes
    python -m physics.warmup --part meshes --part joints   # those parts, in this process

The setup script's run splits the parts between this process and a second one, which compile
at once on two cores (about 40 % less time than one process); the cache is numba's on-disk
cache, written by whichever process compiled a kernel first (both write a kernel they share,
each file whole, so a signature one of them added to a shared kernel's index can be lost to
the other's write). A last pass over every part then loads it all in one process and compiles
again whatever such a lost write left out.
"""

from __future__ import annotations

import argparse
import dataclasses
import subprocess
import sys
import time

import numpy as np

from physics.constraints.forest import turn
from physics.constraints.joint import WORLD, JointDef
from physics.geometry.binary_meshes import STL_RECORD, read_binary_stl
from physics.geometry.extremes import extreme_points
from physics.geometry.inertia import mass_properties
from physics.geometry.mesh_kernels import column_means, edge_table
from physics.geometry.meshes import builtin_shape, clean_mesh
from physics.geometry.obj_meshes import read_obj
from physics.model import WorldDef
from physics.runtime import configure
from physics.world import World

_STEPS = 10


def compile_kernels(parts: tuple[str, ...] | None = None) -> float:
    """Run each compiled stage once on a tiny scene; returns the seconds it took. ``parts``:
    names from ``PARTS`` (every part when None).

    Together the parts touch every stage: reading an OBJ and an STL, cleaning (closed and
    open), mass properties and hull search of a mesh, free rotation, and in a container a stack
    of two boxes (overlapping) on the floor with two touching balls on top (wall, hull-hull,
    sphere-hull and sphere-sphere contacts, the solver's passes, islands, the energy guard; the
    balls are 5.7 times lighter than the boxes, which the exact solve of unequal masses takes,
    dynamics/stacks.py), then a floor tiled with boxes (the kernels that split large steps
    between threads), then bodies made of convex pieces, then every kind of joint.
    """
    configure()
    start = time.perf_counter()
    for name in PARTS if parts is None else parts:
        PARTS[name]()
    return time.perf_counter() - start


def _compile_meshes() -> None:
    """Reading, cleaning, mass properties and hull search of meshes."""
    box = _box()
    mass_properties(box.vertices, box.faces)  # read-only arrays, as meshes are loaded
    column_means(box.vertices)  # read-only, as a loaded mesh's flatness test takes it
    builtin_shape("t_handle")                 # writable arrays, as builtins are made
    # mesh cleaning: a closed surface, then an open one (the hashed edge matching)
    clean_mesh("warm-up box", None, box.vertices, box.faces)
    clean_mesh("warm-up open box", None, box.vertices, box.faces[1:])
    # a triangle soup as files give them (writable arrays, each corner its own vertex): the
    # merging, renumbering and edge kernels a closed, shared-corner box never reaches
    soup = box.vertices[box.faces].reshape(-1, 3)
    clean_mesh("warm-up soup", None, soup.copy(), np.arange(len(soup)).reshape(-1, 3))
    shared = box.faces.copy()
    shared.setflags(write=False)
    edge_table(shared)  # as a loaded Shape's read-only faces are matched again (closed pieces)
    extreme_points(box.vertices, np.eye(3))  # a big mesh's hull candidates
    read_obj(b"v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 3\n")  # the OBJ reader
    read_binary_stl(_binary_stl(box.vertices[box.faces]))  # the STL reader


def _box():
    return builtin_shape("box", [0.4, 0.2, 0.3])


def _ball():
    return builtin_shape("sphere", [0.1])


def _step_a_stack() -> None:
    """A few steps of two boxes stacked (overlapping) on the floor, two balls on top."""
    box, ball = _box(), _ball()
    world = World(WorldDef(container_size=[2.0, 2.0, 2.0]))
    world.add_body(box.body_def(position=[0.0, 0.1, 0.0], angular_velocity=[0.0, 1.0, 0.0]))
    # 1 cm into the lower box: the position pass runs too
    world.add_body(box.body_def(position=[0.0, 0.29, 0.0], velocity=[0.0, -0.5, 0.0]))
    world.add_body(ball.body_def(position=[-0.1, 0.5, 0.0], velocity=[0.2, 0.0, 0.0]))
    world.add_body(ball.body_def(position=[0.1, 0.5, 0.0]))
    for _ in range(_STEPS):
        world.step(1.0 / 240.0)
    if not np.all(np.isfinite(world.state.pos)):
        raise RuntimeError("warm-up scene produced non-finite positions")
    world.contact_points()  # a snapshot reads the records held in numba (physics/held.py)


def _step_compound_bodies() -> None:
    """A few steps of a box made of two convex halves resting on another such box, itself on
    a static one: the kernels that pair pieces, carry their manifolds and reduce a body pair's
    contacts to one manifold (collision/pieces.py). The default scene's meshes collide as
    pieces: without these, the app's first launch compiled them on the physics thread (a
    stall of seconds)."""
    box = _box()
    halves = tuple(box.hull * [0.5, 1.0, 1.0] + [side * box.hull[:, 0].max() / 2, 0.0, 0.0]
                   for side in (-1.0, 1.0))
    world = World(WorldDef(container_size=[2.0, 2.0, 2.0]))
    world.add_body(dataclasses.replace(box.body_def(position=[0.0, 0.1, 0.0]), static=True))
    for height in (0.29, 0.48):
        world.add_body(dataclasses.replace(box.body_def(position=[0.0, height, 0.0]),
                                           pieces=halves))
    # a ball fast enough to leave its fat sphere: the broad phase's refresh of kept pairs
    world.add_body(builtin_shape("sphere", [0.05]).body_def(position=[0.7, 0.5, 0.0],
                                                            velocity=[-8.0, 0.0, 0.0]))
    for _ in range(_STEPS):
        world.step(1.0 / 240.0)


def _binary_stl(triangles) -> bytes:
    """A binary STL file of triangles (t, 3, 3) m: header, count, then per triangle a normal,
    three corners (float32) and an attribute word."""
    record = np.zeros(len(triangles), dtype=STL_RECORD)
    record["corners"] = triangles
    return bytes(80) + np.uint32(len(triangles)).tobytes() + record.tobytes()


def _step_a_floor_of_boxes() -> None:
    """Two steps of a floor tiled with touching boxes: enough contacts for the solver's
    parallel sweeps and enough pairs for the narrow phase's threads."""
    tile = builtin_shape("box", [0.1, 0.1, 0.1])
    world = World(WorldDef(container_size=[3.0, 2.0, 3.0]))
    for x in np.arange(-1.15, 1.2, 0.1):
        for z in np.arange(-1.15, 1.2, 0.1):
            world.add_body(tile.body_def(position=[x, 0.05, z]))
    for _ in range(2):
        world.step(1.0 / 240.0)


def _step_joints() -> None:
    """A few steps of every joint type: a chain on ball joints hung from the world (the tree
    solve), a hinge with limits and a motor and a slider with limits (the sweeps), a spring
    rope, a weld, a link resting on the floor (contacts held in the joints' solve) and a body on
    two world joints (a loop through the world: the general solve); then the joints' view; then
    a chain alone (the tree's compiled projection)."""
    box, ball = _box(), _ball()
    world = World(WorldDef(container_size=[3.0, 3.0, 3.0]))
    first = world.add_body(ball.body_def(position=[0.0, 2.0, 0.0]))
    second = world.add_body(ball.body_def(position=[0.3, 2.0, 0.0]))
    world.add_joint(JointDef("ball", first, WORLD, anchor=[-0.2, 2.0, 0.0]))
    world.add_joint(JointDef("hinge", second, first, anchor=[0.15, 2.0, 0.0], axis=[0, 0, 1],
                             limits=(-0.5, 0.5), motor_speed=1.0, motor_max=1.0))
    slider = world.add_body(box.body_def(position=[1.0, 0.1, 0.0]))
    world.add_joint(JointDef("prismatic", slider, WORLD, anchor=[1.0, 0.1, 0.0],
                             axis=[1, 0, 0], limits=(-0.1, 0.1)))
    welded = world.add_body(ball.body_def(position=[1.0, 0.4, 0.0]))
    world.add_joint(JointDef("fixed", welded, slider, anchor=[1.0, 0.3, 0.0]))
    hung = world.add_body(ball.body_def(position=[-1.0, 1.5, 0.0]))
    world.add_joint(JointDef("distance", hung, WORLD, anchor=[-1.0, 2.5, 0.3]))
    world.add_joint(JointDef("distance", hung, WORLD, anchor=[-1.0, 2.5, -0.3], max_length=2.0,
                             stiffness=10.0, damping=0.1))
    # Both worlds step on the Python path a batch hands its hard steps to (World._step_in_python).
    # The batch itself, which runs a forest of joints too, is the stack part's compile: stepped
    # here, it would be compiled a second time by the warm-up's second process meanwhile.
    for _ in range(_STEPS):
        world._step_in_python(1.0 / 240.0)
    world.joint_view()
    world.joint_errors()
    # the loop through the world above leaves the projection to the general solve: a chain
    # alone, a forest, no contact resting, takes the tree's compiled path
    # (constraints/forest.py)
    chain = World(WorldDef(container_size=None))
    link = chain.add_body(ball.body_def(position=[0.0, 2.0, 0.0]))
    chain.add_joint(JointDef("ball", link, WORLD, anchor=[-0.2, 2.0, 0.0]))
    end = chain.add_body(ball.body_def(position=[0.3, 2.0, 0.0]))
    chain.add_joint(JointDef("ball", end, link, anchor=[0.15, 2.0, 0.0]))
    for _ in range(_STEPS):
        chain._step_in_python(1.0 / 240.0)
    # the general solve's turns when it moves along the present rows (a step redone), and a
    # limit pushed back: rarer than a few steps of a warm-up scene
    turn(np.array([[1.0, 0.0, 0.0, 0.0]]), np.zeros((1, 3)))


PARTS = {"meshes": _compile_meshes, "stack": _step_a_stack, "floor": _step_a_floor_of_boxes,
         "compound": _step_compound_bodies, "joints": _step_joints}
# the second process's share: the meshes, and the joints' Python path (its own stage calls
# and general solve). The compiled batch, the largest compile (every stage of a step, the
# joints' forest step among them), is the stack part's; the floor and the pieces then find
# theirs compiled into it. Both halves compile the contact stage, which the batch and the
# Python path share, each on its own core
SECOND_PROCESS = ("meshes", "joints")


def compile_in_two_processes() -> float:
    """Compile every part, ``SECOND_PROCESS``'s in a second interpreter meanwhile; returns the
    seconds it took. The stale-kernel check runs here first, so the second process finds the
    cache already cleaned and deletes nothing the first is writing."""
    configure()
    start = time.perf_counter()
    second = subprocess.Popen([sys.executable, "-m", "physics.warmup",
                               *(arg for name in SECOND_PROCESS for arg in ("--part", name))])
    try:
        compile_kernels(tuple(name for name in PARTS if name not in SECOND_PROCESS))
    finally:
        if second.wait() != 0:
            raise SystemExit(f"the warm-up's second process failed (exit {second.returncode})")
    compile_kernels()  # everything, now loaded from the cache
    return time.perf_counter() - start


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="Compile the engine's numba kernels ahead.")
    parser.add_argument("--part", action="append", choices=sorted(PARTS),
                        help="compile only this part, in this process (repeatable)")
    parts = parser.parse_args(argv).part
    seconds = compile_kernels(tuple(parts)) if parts else compile_in_two_processes()
    print(f"physics kernels ready in {seconds:.1f} s")


if __name__ == "__main__":
    main()
