"""The contacts of one step: the ``Contacts`` record every contact source fills (walls,
body pairs) and the solver reads, the ``BodySet`` those sources read, and the friction
tangents of a contact normal.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit


class _ContactFields(NamedTuple):
    body: np.ndarray
    key: np.ndarray
    point: np.ndarray
    normal: np.ndarray
    separation: np.ndarray
    tangent1: np.ndarray
    tangent2: np.ndarray
    other: np.ndarray


class Contacts(_ContactFields):
    """Contact points of one step (k of them): a record of arrays, which the solver's kernels
    take whole.

    body (k,) int64 body row; key (k,) int64 stable identity (collision/keys.py); point (k, 3)
    world, m; normal (k, 3) unit, pointing out of the wall (or the other body) into the body;
    separation (k,) m along the normal (negative = penetration); tangent1, tangent2 (k, 3) unit
    friction directions; other (k,) int64 row of the second body, −1 for a wall (the default).
    """

    __slots__ = ()

    def __new__(cls, body, key, point, normal, separation, tangent1, tangent2, other=None):
        if other is None:
            other = np.full(len(body), -1, dtype=np.int64)
        return super().__new__(cls, body, key, point, normal, separation, tangent1, tangent2,
                               other)

    @property
    def count(self) -> int:
        return len(self.body)



class BodySet(NamedTuple):
    """The n bodies as the collision kernels read them: what they are (from the ``Model``) and
    where they are and go this step.

    ids (n,) int64 stable ids; radius (n,) m (0 = hull shape); bound (n,) m bounding radius
    about the centre of mass; pos (n, 3) m centre of mass; rotm (n, 3, 3) principal → world;
    vel (n, 3) m/s and omega (n, 3) rad/s the velocities the step will move with.
    """

    ids: np.ndarray
    radius: np.ndarray
    bound: np.ndarray
    pos: np.ndarray
    rotm: np.ndarray
    vel: np.ndarray
    omega: np.ndarray


class ContactBuffer(NamedTuple):
    """Room for up to m contacts, which a contact kernel fills from the front (``Contacts``'
    fields before tangents are added).

    body (m,) int64 row of the first body; other (m,) int64 row of the second, −1 for a wall;
    key (m,) int64 (collision/keys.py); point (m, 3) world, m; normal (m, 3) unit, from the
    other body (or wall) into the first; sep (m,) m along the normal (negative = penetration);
    source (m,) int64 the stored manifold a body-pair contact was carried from, −1 if found
    this step (collision/manifolds.py); empty (0,) for wall contacts, which have none.
    """

    body: np.ndarray
    other: np.ndarray
    key: np.ndarray
    point: np.ndarray
    normal: np.ndarray
    sep: np.ndarray
    source: np.ndarray



@njit(cache=True, nogil=True)
def allocate_buffer(capacity, sources):
    """A ``ContactBuffer`` for ``capacity`` contacts, source −1 (or empty without
    ``sources``), the rest unset."""
    return ContactBuffer(np.empty(capacity, dtype=np.int64), np.empty(capacity, dtype=np.int64),
                         np.empty(capacity, dtype=np.int64), np.empty((capacity, 3)),
                         np.empty((capacity, 3)), np.empty(capacity),
                         np.full(capacity if sources else 0, -1, dtype=np.int64))


@njit(cache=True, nogil=True)
def buffer_contacts(out, count):
    """The first ``count`` contacts of the ``ContactBuffer`` out, with their friction tangents
    (a ``Contacts``)."""
    normal = out.normal[:count]
    t1, t2 = np.empty((count, 3)), np.empty((count, 3))
    _tangents_kernel(normal, t1, t2)
    return Contacts(out.body[:count], out.key[:count], out.point[:count], normal,
                    out.sep[:count], t1, t2, out.other[:count])


@njit(cache=True, nogil=True)
def join_contacts(first, second):
    """The ``Contacts`` of both, first's then second's."""
    return Contacts(np.concatenate((first.body, second.body)),
                    np.concatenate((first.key, second.key)),
                    np.concatenate((first.point, second.point)),
                    np.concatenate((first.normal, second.normal)),
                    np.concatenate((first.separation, second.separation)),
                    np.concatenate((first.tangent1, second.tangent1)),
                    np.concatenate((first.tangent2, second.tangent2)),
                    np.concatenate((first.other, second.other)))


@njit(cache=True, inline='always')
def manifold_end(body, other, first):
    """One past the last contact of the manifold that starts at contact first: the contacts of
    one pair (or of one body with the walls) are consecutive, body and other (k,) rows."""
    last = first + 1
    while last < body.shape[0] and body[last] == body[first] and other[last] == other[first]:
        last += 1
    return last


def plane_tangents(normals: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Two unit tangents per unit normal (k, 3), fixed for a fixed normal so warm-started friction
    impulses keep their meaning from one step to the next."""
    normals = np.ascontiguousarray(normals, dtype=float)
    t1, t2 = np.empty_like(normals), np.empty_like(normals)
    _tangents_kernel(normals, t1, t2)
    return t1, t2


@njit(cache=True, nogil=True)
def _tangents_kernel(normals, t1, t2):
    """Loop body of ``plane_tangents``, compiled (it runs on every step's contacts)."""
    for c in range(normals.shape[0]):
        (t1[c, 0], t1[c, 1], t1[c, 2],
         t2[c, 0], t2[c, 1], t2[c, 2]) = tangent_pair(normals[c, 0], normals[c, 1], normals[c, 2])


@njit(cache=True, nogil=True)
def tangent_pair(nx, ny, nz):
    """Unit tangents (t1x, t1y, t1z, t2x, t2y, t2z) of the unit normal n, in scalars:
    t1 = n × helper / |…| with helper = x̂ where |n_x| < 0.6, else ẑ; t2 = n × t1."""
    if abs(nx) < 0.6:
        ax, ay, az = 0.0, nz, -ny
    else:
        ax, ay, az = ny, -nx, 0.0
    length = np.sqrt(ax * ax + ay * ay + az * az)
    ax, ay, az = ax / length, ay / length, az / length
    return ax, ay, az, ny * az - nz * ay, nz * ax - nx * az, nx * ay - ny * ax
