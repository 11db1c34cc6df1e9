"""Contacts of compound bodies: bodies that collide as several convex pieces
(docs/physics.md#compound-bodies).

The broad phase pairs whole bodies (their bounding spheres hold every piece). For a pair in
which either body is compound, each piece of one is paired with each piece of the other (a body
that is not compound is one piece: its hull or sphere) whose bounding spheres come within the
two bodies' speculative reach, and the piece pairs go through the narrow phase's own kernel
(collision/narrowphase.py) as if each piece were a body: placed at its centre, moving with its
body's velocity there. Each contact is then handed back to the two bodies, first body first for
all the pair's pieces, so a body pair's contacts are consecutive and the solver takes them as
one manifold set (dynamics/solver.py), however many pieces touched.
"""

from __future__ import annotations

import numpy as np

from physics.collision.broadphase import reach
from physics.collision.contact import BodySet, ContactBuffer, Contacts
from physics.collision.narrowphase import fresh_contacts, world_hulls


def compound_pairs(pairs: np.ndarray, compound: np.ndarray) -> np.ndarray:
    """(p,) bool: which candidate pairs (p, 2) of body rows hold a compound body (compound (n,)
    bool, ``Model.compound``)."""
    return compound[pairs[:, 0]] | compound[pairs[:, 1]]


def piece_contacts(pairs, pos, rotm, vel, omega, model, h) -> Contacts:
    """Contacts between the candidate body pairs (p, 2) of rows, at least one of each pair
    compound, found piece against piece; body and other are body rows, every pair's contacts
    consecutive with one body first.

    pos (n, 3) m; rotm (n, 3, 3); vel (n, 3) m/s and omega (n, 3) rad/s the velocities the step
    will move with; model the ``Model`` (its ``pieces``); h the step, s."""
    shapes, owner, centre = model.pieces, model.piece_body, model.piece_centre
    first, second = _sphere_first(pairs, model.radius)
    # every piece of the first body against every piece of the second
    count_a, count_b = model.piece_count[first], model.piece_count[second]
    per_pair = count_a * count_b
    pair = np.repeat(np.arange(len(first)), per_pair)
    local = np.arange(len(pair)) - np.repeat(np.cumsum(per_pair) - per_pair, per_pair)
    piece_a = model.piece_first[first][pair] + local // count_b[pair]
    piece_b = model.piece_first[second][pair] + local % count_b[pair]
    # the pieces' world centres, and whether their spheres come within the bodies' reach
    piece_pos = pos[owner] + np.einsum("pij,pj->pi", rotm[owner], centre)      # (P, 3)
    extra = reach(vel, omega, model.bound_radius, h) - model.bound_radius          # (n,) m
    gap = (np.linalg.norm(piece_pos[piece_a] - piece_pos[piece_b], axis=1)
           - shapes.bound_radius[piece_a] - shapes.bound_radius[piece_b]
           - extra[first[pair]] - extra[second[pair]])
    near = gap < 0.0
    if not near.any():
        return ContactBuffer.allocate(0).contacts(0)
    piece_pairs = np.stack((piece_a[near], piece_b[near]), axis=1)
    # each piece moves with its body: at its centre v + ω × (R c)
    piece_vel = vel[owner] + np.cross(omega[owner], piece_pos - pos[owner])
    bodies = BodySet(shapes.ids, shapes.radius, shapes.bound_radius, piece_pos, rotm[owner],
                     piece_vel, omega[owner])
    hulls = world_hulls(piece_pos, rotm[owner], shapes, np.unique(piece_pairs))
    found = fresh_contacts(piece_pairs, bodies, hulls, h)
    return found._replace(body=owner[found.body], other=owner[found.other])


def _sphere_first(pairs, radius) -> tuple[np.ndarray, np.ndarray]:
    """The pairs' body rows (first, second), a sphere first: the narrow phase emits a sphere's
    contacts with the sphere as their first body, so every contact of a pair shares one order."""
    first, second = pairs[:, 0], pairs[:, 1]
    swap = (radius[second] > 0.0) & (radius[first] == 0.0)
    return np.where(swap, second, first), np.where(swap, first, second)
