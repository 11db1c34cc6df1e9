"""Comparing scenes field by field (the save → load round trips of the panel and the loader),
and scenes the replay tests share."""

import dataclasses

import numpy as np

from physics.constraints.joint import JointDef
from physics.scene import BodyEntry, Scene
from tests.paths import REPO

MESHES = REPO / "assets" / "meshes"
TURNED = Scene(  # meshes and a box turned and spinning, falling onto each other: chaotic
    gravity=(0.0, -9.81, 0.0), hz=240.0, container_size=(0.6, 1.5, 0.6),
    bodies=(BodyEntry(mesh=MESHES / "icosahedron.ply", position=(0.0, 0.2, 0.0),
                      orientation=(0.9, 0.1, 0.3, 0.2), angular_velocity=(2.0, 5.0, -1.0)),
            BodyEntry(mesh=MESHES / "tetrahedron.off", position=(0.02, 0.5, 0.01),
                      orientation=(0.3, -0.5, 0.7, 0.1), velocity=(0.1, 0.0, -0.2),
                      angular_velocity=(-3.0, 1.0, 4.0)),
            BodyEntry(shape="box", size=(0.2, 0.12, 0.08), position=(-0.03, 0.9, 0.02),
                      orientation=(0.8, 0.0, 0.6, 0.0), angular_velocity=(1.0, 0.0, 2.0))))


def assert_same_scene(saved: Scene, original: Scene) -> None:
    """Every field of the two scenes equal: numbers to 1e-12 (a pose goes through the principal
    frame and back), everything else exactly."""
    for f in dataclasses.fields(Scene):
        if f.name in ("bodies", "joints", "source"):
            continue
        a, b = getattr(saved, f.name), getattr(original, f.name)
        if isinstance(b, tuple):
            np.testing.assert_allclose(a, b, rtol=0, atol=1e-12, err_msg=f.name)
        else:
            assert a == b, f.name
    assert len(saved.bodies) == len(original.bodies)
    for index, (a, b) in enumerate(zip(saved.bodies, original.bodies)):
        for f in dataclasses.fields(BodyEntry):
            if f.name == "line":
                continue
            x, y = getattr(a, f.name), getattr(b, f.name)
            where = f"body #{index + 1}: {f.name}"
            if isinstance(y, tuple) and f.name != "size":
                assert x is not None, where
                np.testing.assert_allclose(x, y, rtol=0, atol=1e-12, err_msg=where)
            else:
                assert x == y, f"{where}: saved {x!r}, was {y!r}"
    assert len(saved.joints) == len(original.joints)
    for index, (a, b) in enumerate(zip(saved.joints, original.joints)):
        for f in dataclasses.fields(JointDef):
            x, y = getattr(a.joint, f.name), getattr(b.joint, f.name)
            where = f"joint #{index + 1}: {f.name}"
            if f.name in ("min_length", "max_length", "rest_length") and y is None:
                continue  # "the start distance" is written as the number it was
            if isinstance(y, np.ndarray):
                np.testing.assert_allclose(x, y, rtol=0, atol=1e-12, err_msg=where)
            else:
                assert x == y, f"{where}: saved {x!r}, was {y!r}"
