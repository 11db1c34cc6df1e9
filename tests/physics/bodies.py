"""Small body builders shared by the dynamics tests (boxes with exact inertia)."""

import numpy as np

from physics.model import BodyDef


def box_corners(size) -> np.ndarray:
    """(8, 3) corners of a box with full extents ``size`` centred on the origin."""
    half = np.asarray(size, dtype=float) / 2
    return np.array([[x, y, z] for x in (-1, 1) for y in (-1, 1) for z in (-1, 1)]) * half


def box_moments(mass, size) -> np.ndarray:
    """Principal moments (3,) of a solid box about its centre along x, y, z."""
    a, b, c = size
    return mass / 12.0 * np.array([b * b + c * c, a * a + c * c, a * a + b * b])


def box_body(size=(1.0, 1.0, 1.0), mass=1.0, **kwargs) -> BodyDef:
    """A box body whose body axes are the box's edges; sizes must make moments ascending."""
    moments = box_moments(mass, size)
    assert np.all(np.diff(moments) >= 0), "choose sizes so the moments come out ascending"
    return BodyDef(mass=mass, principal_moments=moments, hull=box_corners(size), **kwargs)
