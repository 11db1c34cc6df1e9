"""compile_kernels leaves no engine kernel to be compiled at a bad moment later."""

import copy
import pickle
import subprocess
import sys

import numpy as np
import pytest
from numba.core import event

from physics import warmup
from physics.geometry.meshes import builtin_shape, load_shape
from physics.model import WorldDef
from physics.scene import build_world, load_scene
from physics.warmup import compile_kernels
from physics.world import World
from tests.paths import REPO

ASSETS = REPO / "assets"


def test_after_the_warm_up_loading_and_stepping_scenes_compiles_nothing():
    seconds = compile_kernels()
    assert 0.0 < seconds < 120.0
    with event.install_recorder("numba:compile") as compiles:
        load_shape(ASSETS / "meshes" / "wing_nut.stl")  # mass properties + winding checks
        for name in ("default.toml", "bounce.toml", "dzhanibekov.toml", "chain.toml",
                     "newtons_cradle.toml", "slider.toml", "gyroscope.toml",
                     "double_pendulum.toml"):
            world, _ = build_world(load_scene(ASSETS / "scenes" / name))
            for _ in range(120):  # half a second: bodies reach the floor and each other
                world.step(1.0 / 240.0)
            world.joint_view()
            world.contact_points()  # what a snapshot reads
            pickle.loads(pickle.dumps(copy.deepcopy(world.state)))  # a history checkpoint
        pile = World(WorldDef(container_size=[2.0, 2.0, 2.0]))
        shapes = [builtin_shape(kind) for kind in ("box", "sphere", "cylinder", "t_handle")]
        rng = np.random.default_rng(3)
        for i in range(40):  # dropped into a heap: every pair of shape kinds, deep overlaps
            pile.add_body(shapes[i % 4].body_def(rng.uniform([-0.6, 0.3, -0.6], [0.6, 1.8, 0.6])))
        for _ in range(240):
            pile.step(1.0 / 240.0)
    compiled = sorted({e.data["dispatcher"].py_func.__qualname__
                       for _, e in compiles.buffer if e.is_start})
    assert compiled == [], f"compiled after physics.warmup: {compiled}"


def test_the_warm_up_compiles_the_kernels_that_split_large_steps():
    """The floor of boxes has enough contacts, pairs and bodies for every parallel kernel this
    machine would use (the chunked broad and narrow phases only with more than one thread).
    The solver's parallel kernels are compiled into the step's compiled stages, which call
    them (dynamics/advance.py, and ``contact_impulses`` for a jointed world), and those into
    the compiled batch (dynamics/batch.py): those are what numba loads. (The stages the batch
    alone calls, ``advance_into``, are inside the batch's cached code: loading it
    registers no signature of theirs, so whether they have one depends on which tests ran.)"""
    from physics.dynamics import batch, solver

    compile_kernels()
    assert solver.contact_impulses.signatures and batch.run_batch.signatures

def test_the_warm_up_compiles_the_steps_contact_call():
    """The contacts of a step are one compiled call (collision/find.py), the chunked broad and
    narrow phases, the kept axes' table and the pieces' motion compiled into it whatever the
    thread count: the warm-up's scenes must have compiled (or loaded) it."""
    from physics.collision import find

    compile_kernels()
    assert find.find_contacts_plain.signatures


def test_the_warm_up_command_compiles_half_the_parts_in_a_second_process(monkeypatch, capsys):
    """``python -m physics.warmup`` (the setup script's) starts one more interpreter for the
    meshes' and the joints' parts, compiles the others meanwhile, then passes over every part."""
    started, ran = [], []
    real_popen = subprocess.Popen

    def popen(command, **kwargs):
        started.append(command)
        return real_popen(command, **kwargs)

    monkeypatch.setattr(warmup.subprocess, "Popen", popen)
    monkeypatch.setattr(warmup, "PARTS", {name: (lambda name=name: ran.append(name))
                                          for name in warmup.PARTS})
    warmup.main([])
    assert started == [[sys.executable, "-m", "physics.warmup",
                        "--part", "meshes", "--part", "joints"]]
    # this process: its own half, then every part (loaded from the cache by then)
    assert ran == ["stack", "floor", "compound",
                   "meshes", "stack", "floor", "compound", "joints"]
    assert "physics kernels ready in" in capsys.readouterr().out


def test_a_failed_second_process_fails_the_warm_up(monkeypatch):
    real_popen = subprocess.Popen
    monkeypatch.setattr(warmup.subprocess, "Popen", lambda command, **kwargs: real_popen(
        [sys.executable, "-c", "raise SystemExit(3)"], **kwargs))
    monkeypatch.setattr(warmup, "PARTS", {name: lambda: None for name in warmup.PARTS})
    with pytest.raises(SystemExit, match="second process failed \\(exit 3\\)"):
        warmup.main([])


def test_the_warm_up_refuses_an_unknown_part(capsys):
    with pytest.raises(SystemExit) as ended:
        warmup.main(["--part", "wheels"])
    assert ended.value.code == 2
    assert "'wheels'" in capsys.readouterr().err


def test_one_part_compiles_in_this_process(capsys):
    warmup.main(["--part", "meshes"])
    assert "physics kernels ready in" in capsys.readouterr().out


def test_the_warm_up_compiles_the_joints_tree_projection():
    """The joints' Newton steps and velocity projection on their tree are compiled calls
    (constraints/forest.py), which the warm-up's chain must have compiled (or loaded)."""
    from physics.constraints import forest

    compile_kernels(("joints",))
    assert forest.newton_forest.signatures and forest.velocities_forest.signatures
    assert forest.turn.signatures  # the sparse solve's turns (the loop through the world)
