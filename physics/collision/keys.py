"""Contact keys: the one place where a contact's identity is packed into an int64 (Box2D's
``B2_MAKE_ID``).

A key names a contact by the bodies' stable ids and the features that made it, so the same
contact found next step has the same key and its impulses warm-start (dynamics/warmstart.py
compares keys for equality only). Wall contacts have keys ≥ 0, body-pair contacts keys < 0, so
the two never meet.

Bounds the layout relies on (model.py, geometry/polytope.py): a hull has at most
MAX_HULL_VERTICES = 64 vertices, so by Euler at most 2·64 − 4 = 124 faces and 3·64 − 6 = 186
edges, and a face at most 64 vertices (a flat hull's face holds them all); the container has 6
walls.

- wall: ``id · 2¹⁰ + wall · 2⁶ + vertex`` (wall < 16, vertex < 64; a sphere's vertex is 0).
- body pair: ``−1 − ((id_a · 2²⁰ + id_b) · 2²² + feature)``, ids taken modulo 2²⁰, with the
  22-bit feature: kind in bits 20–21, then
  - a sphere's contact (kind 0): 0;
  - an edge pair (kind 1): a's edge · 2⁸ + b's edge (local edges < 256);
  - a face contact (kind 2: the reference face is the first body's, 3: the second's):
    reference face · 2¹³ + point (local face < 128; point < 2¹³, see ``clip_tag``).
- piece pair (collision/pieces.py): the body-pair key of the two pieces, whose ids are the
  pieces' own numbers (``Model.set_pieces``: < 2²⁰, reused once free), less 2⁶², so it never
  equals a body pair's key (those take 62 bits).
"""

from __future__ import annotations

from numba import njit

VERTEX_BITS = 6            # hull vertex < 64
WALL_BITS = 4              # wall plane < 16
ID_BITS = 20               # body ids in a pair key, modulo 2²⁰
FEATURE_BITS = 22          # kind (2 bits) and what it names (20 bits)
FACE_BITS = 7              # local face < 128 (≤ 124 faces)
EDGE_BITS = 8              # local edge < 256 (≤ 186 edges)
POINT_BITS = 13            # clip tag < 2¹³ (see clip_tag)
_ID_MASK = (1 << ID_BITS) - 1
MAX_PIECE_IDS = 1 << ID_BITS  # convex pieces in one world: each has its own id in a pair key
PIECE_FLAG = 1 << (2 * ID_BITS + FEATURE_BITS)  # 2⁶²: the bit above a body pair's key
_KIND_SHIFT = FEATURE_BITS - 2
SPHERE, EDGE_PAIR, FACE_OF_FIRST, FACE_OF_SECOND = 0, 1, 2, 3  # kinds of a pair feature


@njit(cache=True, inline='always')
def wall_key(body_id, wall, vertex):
    """Key (≥ 0) of the contact of hull vertex ``vertex`` (local, < 64; 0 for a sphere) of the
    body with id ``body_id`` against wall plane ``wall`` (< 16)."""
    return (((body_id << WALL_BITS) | wall) << VERTEX_BITS) | vertex


@njit(cache=True, inline='always')
def pair_key(id_a, id_b, feature):
    """Key (< 0) of a contact between the bodies with ids id_a (the contact's first body) and
    id_b, made by ``feature`` (< 2²², from the functions below)."""
    return -1 - ((((((id_a & _ID_MASK) << ID_BITS) | (id_b & _ID_MASK)) << FEATURE_BITS))
                 | feature)


@njit(cache=True, nogil=True)
def piece_pair_keys(keys):
    """Keys (k,) int64 of piece-pair contacts made from the body-pair keys the narrow phase gave
    them (the pieces' ids in place of body ids): −1 − (2⁶² + what the pair key holds)."""
    return keys - PIECE_FLAG


@njit(cache=True, inline='always')
def edge_feature(edge_a, edge_b):
    """Feature of the contact between local edge edge_a (< 256) of the first body's hull and
    edge_b of the second's."""
    return (EDGE_PAIR << _KIND_SHIFT) | (edge_a << EDGE_BITS) | edge_b


@njit(cache=True, inline='always')
def face_feature(of_second, face, tag):
    """Feature of a face contact point: reference face ``face`` (local, < 128) of the first body
    (of_second false) or of the second, and the point's ``clip_tag``."""
    kind = FACE_OF_SECOND if of_second else FACE_OF_FIRST
    return (kind << _KIND_SHIFT) | (face << POINT_BITS) | tag


@njit(cache=True, inline='always')
def clip_tag(side, vertex):
    """Which point of a clipped incident face: ``vertex`` (local, < 64) is the incident vertex
    the point came from, ``side`` the reference face's side edge (< 64) that last cut it, −1
    if none did (the vertex itself). < 65 · 64 ≤ 2¹³."""
    return ((side + 1) << VERTEX_BITS) | vertex


@njit(cache=True, inline='always')
def tag_vertex(tag):
    """The incident vertex a ``clip_tag`` names."""
    return tag & ((1 << VERTEX_BITS) - 1)


@njit(cache=True, inline='always')
def body_pair_key(id_a, id_b):
    """One int64 ≥ 0 per unordered pair of body ids (< 2³¹): the manifold cache's key of a
    pair (collision/manifolds.py)."""
    return (min(id_a, id_b) << 31) | max(id_a, id_b)
