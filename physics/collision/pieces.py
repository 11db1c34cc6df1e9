"""Contacts of compound bodies: bodies that collide as several convex pieces
(docs/physics.md#compound-bodies).

The broad phase pairs whole bodies (their bounding spheres hold every piece). For a pair in
which either body is compound, each piece of one is paired with each piece of the other (a body
that is not compound is one piece: its hull or sphere) whose bounding spheres come within the
two bodies' speculative reach, and the piece pairs go through the narrow phase
(collision/narrowphase.py) as if each piece were a body: placed at its centre, moving with its
body's velocity there, its manifold carried along while the two pieces barely move against
each other (collision/manifolds.py, keyed by the pieces' ids). Each contact is then handed back
to the two bodies, first body first for all the pair's pieces, so a body pair's contacts are
consecutive and the solver takes them as one manifold set (dynamics/solver.py).

A body pair's contacts are then reduced as Jolt reduces those of a compound pair (its manifold
reduction): contacts whose normals agree within MANIFOLD_NORMAL_COS are one manifold, cut to
MAX_MANIFOLD points the way a hull pair's clipped face is (a first point, the farthest from it,
the largest area), chosen among the points within MANIFOLD_LEVEL of the deepest and starting
from the one farthest from their middle. Places that touch along different normals (a ball
leaning on two sides of a bowl, a ring on both sides of a peg) keep a manifold each; many
pieces resting on one face share four points.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from physics.collision.broadphase import reach
from physics.collision.contact import BodySet, Contacts, manifold_end
from physics.collision.keys import piece_pair_keys
from physics.collision.manifolds import ManifoldCache
from physics.collision.narrowphase import find_pair_contacts, reduce_points
from physics.model import PiecePlacing, ShapeSet
from physics.runtime import parallel_threads
from physics.settings import MANIFOLD_LEVEL, MANIFOLD_NORMAL_COS, MAX_MANIFOLD


def piece_contacts(pairs, pos, rotm, vel, omega, model, h,
                   manifolds: ManifoldCache) -> tuple[Contacts, ManifoldCache]:
    """Contacts between the candidate body pairs (p, 2) of rows, at least one of each pair
    compound, found piece against piece and reduced per body pair; body and other are body
    rows, every pair's contacts consecutive with one body first. The piece pairs' manifolds of
    the last step (``manifolds``, collision/manifolds.py, keyed by piece ids) are carried along
    where the two pieces barely moved against each other; returns the contacts and the piece
    pairs' manifolds to keep for the next step.

    pos (n, 3) m; rotm (n, 3, 3); vel (n, 3) m/s and omega (n, 3) rad/s the velocities the step
    will move with; model the ``Model`` (its ``pieces``); h the step, s."""
    # named records, as the step's compiled call passes them: the same compiled code
    # (docs/architecture.md#records)
    bodies = BodySet(model.ids, model.radius, model.bound_radius, pos, rotm, vel, omega)
    pieces = model.pieces
    shapes = ShapeSet(pieces.ids, pieces.radius, pieces.bound_radius, pieces.hulls,
                      pieces.world_hulls_buffer)
    placing = PiecePlacing(model.piece_first, model.piece_count, model.piece_centre,
                           model.piece_body)
    return find_piece_contacts(np.ascontiguousarray(pairs, dtype=np.int64).reshape(-1, 2),
                               bodies, shapes, placing, float(h), manifolds, parallel_threads())


@njit(cache=True, nogil=True)
def find_piece_contacts(pairs, bodies, shapes, placing, h, manifolds, threads):
    """``piece_contacts`` for compiled callers: bodies the ``BodySet`` of the bodies, shapes
    the ``ShapeSet`` of the pieces, placing the ``PiecePlacing`` of the pieces in their bodies;
    the narrow phase on up to ``threads`` threads."""
    owner = placing.body
    first, second = _sphere_first(pairs, bodies.radius)
    piece_pos, piece_rotm, piece_vel, piece_omega = _piece_motion(
        owner, placing.centre, bodies.pos, bodies.rotm, bodies.vel, bodies.omega)
    extra = reach(bodies.vel, bodies.omega, bodies.bound, h) - bodies.bound        # (n,) m
    piece_pairs = _near_piece_pairs(first, second, placing.first, placing.count, piece_pos,
                                    shapes.bound, extra)
    piece_bodies = BodySet(shapes.ids, shapes.radius, shapes.bound, piece_pos, piece_rotm,
                           piece_vel, piece_omega)
    found, manifolds = find_pair_contacts(piece_pairs, piece_bodies, shapes.hulls, shapes.world,
                                          h, manifolds, threads)
    keep = np.zeros(len(found.body), dtype=np.bool_)
    body, other = owner[found.body], owner[found.other]
    _reduce_kernel(body, other, found.point, found.normal, found.separation, keep)
    return Contacts(body[keep], piece_pair_keys(found.key[keep]), found.point[keep],
                    found.normal[keep], found.separation[keep], found.tangent1[keep],
                    found.tangent2[keep], other[keep]), manifolds


@njit(cache=True, nogil=True)
def _piece_motion(owner, centre, pos, rotm, vel, omega):
    """Where each piece is and how it moves, from its body row owner (P,) and its centre in the
    body frame centre (P, 3) m: (x + R c (P, 3) m, the body's R (P, 3, 3), the velocity there
    v + ω × (R c) (P, 3) m/s, the body's ω (P, 3) rad/s). One pass in place of six gathers
    and products in numpy, which cost more in calls than in arithmetic: 9 µs instead of
    0.13 ms for 500 pieces (bench/decompose.py's heap)."""
    count = owner.shape[0]
    piece_pos, piece_rotm = np.empty((count, 3)), np.empty((count, 3, 3))
    piece_vel, piece_omega = np.empty((count, 3)), np.empty((count, 3))
    for p in range(count):
        b = owner[p]
        for i in range(3):
            piece_pos[p, i] = pos[b, i] + (rotm[b, i, 0] * centre[p, 0]
                                           + rotm[b, i, 1] * centre[p, 1]
                                           + rotm[b, i, 2] * centre[p, 2])
            piece_omega[p, i] = omega[b, i]
            for j in range(3):
                piece_rotm[p, i, j] = rotm[b, i, j]
        rx, ry, rz = (piece_pos[p, 0] - pos[b, 0], piece_pos[p, 1] - pos[b, 1],
                      piece_pos[p, 2] - pos[b, 2])
        wx, wy, wz = omega[b, 0], omega[b, 1], omega[b, 2]
        piece_vel[p, 0] = vel[b, 0] + (wy * rz - wz * ry)
        piece_vel[p, 1] = vel[b, 1] + (wz * rx - wx * rz)
        piece_vel[p, 2] = vel[b, 2] + (wx * ry - wy * rx)
    return piece_pos, piece_rotm, piece_vel, piece_omega


@njit(cache=True, nogil=True)
def _near_piece_pairs(first, second, piece_first, piece_count, piece_pos, piece_bound, extra):
    """(q, 2) piece rows: every piece of body first[i] against every piece of body second[i]
    (p,) whose bounding spheres (piece_pos (P, 3) m, piece_bound (P,) m) come within the two
    bodies' extra reach (n,) m, pair by pair."""
    total = 0
    for i in range(first.shape[0]):
        total += piece_count[first[i]] * piece_count[second[i]]
    out = np.empty((total, 2), dtype=np.int64)
    found = 0
    for i in range(first.shape[0]):
        a, b = first[i], second[i]
        slack = extra[a] + extra[b]
        for pa in range(piece_first[a], piece_first[a] + piece_count[a]):
            for pb in range(piece_first[b], piece_first[b] + piece_count[b]):
                d = np.sqrt((piece_pos[pa, 0] - piece_pos[pb, 0]) ** 2
                            + (piece_pos[pa, 1] - piece_pos[pb, 1]) ** 2
                            + (piece_pos[pa, 2] - piece_pos[pb, 2]) ** 2)
                if d < piece_bound[pa] + piece_bound[pb] + slack:
                    out[found, 0] = pa
                    out[found, 1] = pb
                    found += 1
    return out[:found]


@njit(cache=True, nogil=True)
def _reduce_kernel(body, other, point, normal, sep, keep):
    """Which of the contacts (k,) — each body pair's consecutive, body and other (k,) body
    rows — a body pair keeps: per group of normals within MANIFOLD_NORMAL_COS of each other, at
    most MAX_MANIFOLD points (the module's docstring); keep (k,) bool is set where one stays."""
    k = body.shape[0]
    group = np.empty(k, dtype=np.int64)
    group_normal = np.empty((k, 3))
    members = np.empty(k, dtype=np.int64)
    points, depth = np.empty((k, 3)), np.empty(k)
    chosen = np.empty(MAX_MANIFOLD, dtype=np.int64)
    first = 0
    while first < k:
        last = manifold_end(body, other, first)
        if last - first <= MAX_MANIFOLD:
            keep[first:last] = True
            first = last
            continue
        order = np.argsort(sep[first:last]) + first  # deepest first: the deepest seeds a group
        groups = 0
        for c in order:
            g = 0
            while g < groups and (normal[c, 0] * group_normal[g, 0]
                                  + normal[c, 1] * group_normal[g, 1]
                                  + normal[c, 2] * group_normal[g, 2]) < MANIFOLD_NORMAL_COS:
                g += 1
            if g == groups:
                group_normal[g] = normal[c]
                groups += 1
            group[c] = g
        for g in range(groups):
            count = 0
            for c in order:  # the group's contacts, deepest first
                if group[c] == g:
                    members[count] = c
                    count += 1
            level = 0
            while level < count and sep[members[level]] <= sep[members[0]] + MANIFOLD_LEVEL:
                level += 1
            if level <= MAX_MANIFOLD:  # all that carry, then the nearest of the rest
                for i in range(min(count, MAX_MANIFOLD)):
                    keep[members[i]] = True
                continue
            # as level, they start from the point farthest from their middle (Jolt's
            # PruneContactPoints starts from the longest lever arm): the deepest of points
            # a hair apart in depth could be an inner corner, and the four found from it
            # would not span the touch
            middle = np.zeros(3)
            for i in range(level):
                middle += point[members[i]] / level
            far, farthest = -1.0, 0
            for i in range(level):
                d = ((point[members[i], 0] - middle[0]) ** 2
                     + (point[members[i], 1] - middle[1]) ** 2
                     + (point[members[i], 2] - middle[2]) ** 2)
                if d > far:
                    far, farthest = d, i
            members[0], members[farthest] = members[farthest], members[0]
            for i in range(level):
                points[i] = point[members[i]]
                depth[i] = 0.0
            kept = reduce_points(points, depth, level, group_normal[g, 0], group_normal[g, 1],
                                 group_normal[g, 2], chosen)
            for i in range(kept):
                keep[members[chosen[i]]] = True
        first = last


@njit(cache=True, nogil=True)
def _sphere_first(pairs, radius):
    """The pairs' body rows (first, second) (p,), a sphere first: the narrow phase emits a
    sphere's contacts with the sphere as their first body, so every contact of a pair shares
    one order."""
    first, second = pairs[:, 0].copy(), pairs[:, 1].copy()
    for p in range(len(first)):
        if radius[second[p]] > 0.0 and radius[first[p]] == 0.0:
            first[p], second[p] = second[p], first[p]
    return first, second
