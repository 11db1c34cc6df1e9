"""A step's contacts in one compiled call: the wall contacts, the broad phase with its kept
pairs, the pairs of bodies asleep or joined dropped, compound bodies' pairs piece by piece, the
narrow phase with its manifold caches, and the contacts joined into one list
(docs/architecture.md#the-step).

``find_contacts`` takes named records and is called from compiled code (a compiled step);
``find_contacts_plain`` is the same called from Python, the records as plain tuples
(docs/architecture.md#records). Each stage is the function its own module runs for Python
too, so there is one implementation of each. Whoever calls either asks
``runtime.parallel_threads`` for the thread count first, which launches numba's thread pool:
loaded from the disk cache without it, the call crashes (docs/architecture.md#the-step).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from physics.collision.broadphase import SweptPairs, kept_pairs_within_reach, reach
from physics.collision.contact import BodySet, Contacts, join_contacts
from physics.collision.manifolds import ManifoldCache
from physics.collision.narrowphase import find_pair_contacts
from physics.collision.pieces import find_piece_contacts
from physics.collision.walls import find_wall_contacts
from physics.model import CollisionSet, HullSet, PiecePlacing, ShapeSet

NO_BANNED = np.zeros(0, dtype=np.int64)  # no joints: no pair kept from colliding


@njit(cache=True, nogil=True)
def find_contacts_plain(collision, pos, rotm, vel, omega, planes, awake, h, swept, manifolds,
                        piece_manifolds, banned, threads):
    """``find_contacts`` called from Python: collision is ``Model.collision`` (a
    ``CollisionSet`` as nested plain tuples), swept, manifolds and piece_manifolds plain
    tuples of a ``SweptPairs`` and two ``ManifoldCache``s; the four records it returns are
    plain tuples too: numba's boxing of a named one cost ~5 µs more each here."""
    contacts, swept, manifolds, piece_manifolds = find_contacts(
        collision_set(collision), pos, rotm, vel, omega, planes, awake, h, SweptPairs(*swept),
        ManifoldCache(*manifolds), ManifoldCache(*piece_manifolds), banned, threads)
    return contacts[:], swept[:], manifolds[:], piece_manifolds[:]


@njit(cache=True, inline="always")
def collision_set(plain):
    """The ``CollisionSet`` named again from ``Model.collision``'s nested plain tuples."""
    bodies, compound, placing, pieces = plain
    return CollisionSet(_shape_set(bodies), compound, PiecePlacing(*placing), _shape_set(pieces))


@njit(cache=True, inline="always")
def _shape_set(plain):
    ids, radius, bound, hulls, world = plain
    return ShapeSet(ids, radius, bound, HullSet(*hulls), HullSet(*world))


@njit(cache=True, nogil=True)
def find_contacts(collision, pos, rotm, vel, omega, planes, awake, h, swept, manifolds,
                  piece_manifolds, banned, threads):
    """The contacts of a step with the walls and between bodies, in one ``Contacts`` (the
    walls' first, then the body pairs', then those of pairs with a compound body); sleeping
    bodies have none with the walls or with each other. Returns them with the ``SweptPairs``,
    the ``ManifoldCache`` and the pieces' ``ManifoldCache`` to keep for the next step.

    collision the model's ``CollisionSet``; pos (n, 3) m; rotm (n, 3, 3) principal → world;
    vel (n, 3) m/s and omega (n, 3) rad/s the velocities the step will move with; planes
    (p, 4) the walls (``Model.wall_planes``); awake (n,) bool the bodies that move this step;
    h the step, s; swept, manifolds, piece_manifolds what the last step kept; banned (b,)
    int64 sorted keys min·n + max of the row pairs joints keep from colliding
    (``JointTable.unjoined_keys``; ``NO_BANNED`` without joints); threads: how many threads
    the parallel stages may use (``runtime.parallel_threads``)."""
    shapes = collision.bodies
    bodies = BodySet(shapes.ids, shapes.radius, shapes.bound, pos, rotm, vel, omega)
    walls = find_wall_contacts(bodies, shapes.hulls.hull_points, shapes.hulls.hull_start,
                               planes, awake, h)
    pairs, swept = kept_pairs_within_reach(swept, shapes.ids, pos,
                                           reach(vel, omega, shapes.bound, h), threads)
    pairs = _without_held(pairs, awake, banned)
    if not len(pairs) and nothing_kept(manifolds) and nothing_kept(piece_manifolds):
        # no pair, and none last step: the narrow phase would find nothing and keep nothing
        # (a lone free body's step, whose every allocation shows)
        return walls, swept, manifolds, piece_manifolds
    compound = collision.compound
    with_pieces = np.zeros(len(pairs), dtype=np.bool_)
    for p in range(len(pairs)):
        with_pieces[p] = compound[pairs[p, 0]] or compound[pairs[p, 1]]
    found, manifolds = find_pair_contacts(pairs[~with_pieces], bodies, shapes.hulls,
                                          shapes.world, h, manifolds, threads)
    if compound.any():  # compound bodies meet piece by piece
        pieces, piece_manifolds = find_piece_contacts(pairs[with_pieces], bodies,
                                                      collision.pieces, collision.placing, h,
                                                      piece_manifolds, threads)
        if len(pieces.body):
            found = join_contacts(found, pieces)
    if len(found.body):
        walls = join_contacts(walls, found)
    return walls, swept, manifolds, piece_manifolds


@njit(cache=True, nogil=True)
def no_contacts():
    """A ``Contacts`` of none, for a step whose bodies can meet nothing (a compiled batch makes
    it once and hands it on step after step: it has no element to change)."""
    none = np.zeros(0, dtype=np.int64)
    return Contacts(none, none, np.zeros((0, 3)), np.zeros((0, 3)), np.zeros(0),
                    np.zeros((0, 3)), np.zeros((0, 3)), none)


@njit(cache=True, inline="always")
def nothing_kept(manifolds):
    """Whether the ``ManifoldCache`` holds no pair and no separating axis (an empty table
    holds nothing else)."""
    return manifolds.keys.shape[0] == 0 and manifolds.axis_keys.shape[0] == 0


@njit(cache=True, nogil=True)
def _without_held(pairs, awake, banned):
    """The candidate pairs (p, 2) of rows less those of two sleeping bodies (awake (n,) bool)
    and those two joints keep from colliding (banned, sorted keys min·n + max)."""
    if len(pairs) == 0:
        return pairs
    n = awake.shape[0]
    keep = np.zeros(len(pairs), dtype=np.bool_)
    for p in range(len(pairs)):
        a, b = pairs[p, 0], pairs[p, 1]
        keep[p] = awake[a] or awake[b]
        if keep[p] and len(banned):
            key = min(a, b) * n + max(a, b)
            at = min(np.searchsorted(banned, key), len(banned) - 1)
            keep[p] = banned[at] != key
    return pairs[keep]
