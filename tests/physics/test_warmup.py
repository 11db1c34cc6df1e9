"""compile_kernels leaves no engine kernel to be compiled at a bad moment later."""

from pathlib import Path

from numba.core import event

from physics.meshes import load_shape
from physics.scene import build_world, load_scene
from physics.warmup import compile_kernels

ASSETS = Path(__file__).resolve().parents[2] / "assets"


def test_after_the_warm_up_loading_and_stepping_scenes_compiles_nothing():
    seconds = compile_kernels()
    assert 0.0 < seconds < 120.0
    with event.install_recorder("numba:compile") as compiles:
        load_shape(ASSETS / "meshes" / "wing_nut.stl")  # mass properties + winding checks
        for name in ("default.toml", "bounce.toml", "dzhanibekov.toml"):
            world, _ = build_world(load_scene(ASSETS / "scenes" / name))
            for _ in range(120):  # half a second: bodies reach the floor and each other
                world.step(1.0 / 240.0)
    compiled = sorted({e.data["dispatcher"].py_func.__qualname__
                       for _, e in compiles.buffer if e.is_start})
    assert compiled == [], f"compiled after physics.warmup: {compiled}"
