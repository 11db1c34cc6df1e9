"""Small body builders shared by the physics tests (boxes with exact inertia, round hulls)."""

import numpy as np

from physics.geometry.rotation import quat_from_axis_angle, quat_to_matrix
from physics.model import BodyDef, Model, WorldDef


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


def box_heap(n=400, seed=4):
    """A heap of n overlapping 0.3 × 0.2 × 0.1 m boxes at random poses (many manifolds of every
    kind): (model, pos (n, 3), unit quat (n, 4), the generator to draw more from)."""
    rng = np.random.default_rng(seed)
    model = Model(WorldDef())
    for i in range(n):
        model.append(i, box_body((0.3, 0.2, 0.1)))
    pos = rng.uniform([-0.8, 0, -0.8], [0.8, 0.6, 0.8], (n, 3))
    quat = rng.normal(size=(n, 4))
    quat /= np.linalg.norm(quat, axis=1, keepdims=True)
    return model, pos, quat, rng


def v_block(plates=4) -> tuple[np.ndarray, ...]:
    """A V of two plates 1 m wide and 0.1 m thick at ±45° about z, their mid-planes meeting at
    the origin, each ``plates`` box pieces along z (1 m in all): the V's pieces."""
    pieces = []
    for sign in (-1.0, 1.0):  # the left plate runs up-left, the right one up-right
        turn = quat_to_matrix(quat_from_axis_angle([0.0, 0.0, 1.0], sign * np.pi / 4)[None])[0]
        for k in range(plates):
            slab = box_corners((1.0, 0.1, 1.0 / plates)) + [0.0, 0.0, (k + 0.5) / plates - 0.5]
            pieces.append(slab @ turn.T + [sign * 0.35, 0.35, 0.0])
    return tuple(pieces)


def round_hull(n=64, seed=0, semi=(0.2, 0.12, 0.15)) -> np.ndarray:
    """(n, 3) points on an ellipsoid of semi-axes semi (m), all on its hull (not a box: the
    general hull–hull test)."""
    rng = np.random.default_rng(seed)
    points = rng.normal(size=(n, 3))
    return points / np.linalg.norm(points, axis=1, keepdims=True) * list(semi)
