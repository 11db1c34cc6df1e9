"""GJK distance between hulls against the exact distance, and the narrow phase's use of it:
skipping the edge query only where no edge pair can matter."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from physics.collision.gjk import hull_distance
from physics.collision.narrowphase import (
    _MAX_EDGES,
    _MAX_FACES,
    _edge_query,
    _edges_cannot_matter,
    _face_query,
    world_hulls,
)
from physics.geometry.rotation import quat_normalize, quat_to_matrix
from physics.model import BodyDef, Model, WorldDef
from physics.settings import FACE_PREFERENCE
from tests.physics.collision.planes import with_world_planes

ALL = (-np.inf, np.inf)  # thresholds that settle nothing: GJK runs until its bounds meet


def random_hull(rng) -> np.ndarray:
    """(k, 3) points on an ellipsoid of 5–25 cm, all on its hull, k from 6 to 40."""
    points = rng.normal(size=(int(rng.integers(6, 41)), 3))
    return points / np.linalg.norm(points, axis=1, keepdims=True) * rng.uniform(0.05, 0.25, 3)


def placed_pair(seed, gap):
    """Two random hulls in random orientations, the second moved from the first along a random
    direction until their gap along it is ``gap`` m: (model, pos (2, 3), world hulls, rotm)."""
    rng = np.random.default_rng(seed)
    model = Model(WorldDef())
    for i in range(2):
        model.append(i, BodyDef(mass=1.0, principal_moments=[0.01, 0.01, 0.01],
                                hull=random_hull(rng)))
    rotm = quat_to_matrix(quat_normalize(rng.normal(size=(2, 4))))
    direction = rng.normal(size=3)
    direction /= np.linalg.norm(direction)
    start = model.hulls.hull_start
    local = [model.hulls.hull_points[start[i]:start[i + 1]] for i in range(2)]
    reach_a = (local[0] @ rotm[0].T @ direction).max()
    reach_b = -(local[1] @ rotm[1].T @ direction).min()
    pos = np.array([np.zeros(3), direction * (reach_a + reach_b + gap)])
    return model, pos, world_hulls(pos, rotm, model, np.arange(2)), rotm


def exact_distance(model, hulls):
    """Distance (m) between hulls 0 and 1, independently of GJK: the largest gap between their
    projections over every direction the closest points can lie along (face normals of
    either, cross products of an edge of each, vertex to vertex, vertex to the nearest point of
    an edge of the other). Each gap is at most the distance and the closest points' direction
    is among them."""
    points = [hulls.hull_points[hulls.hull_start[i]:hulls.hull_start[i + 1]] for i in range(2)]
    edges = [hulls.edge[hulls.edge_start[i]:hulls.edge_start[i + 1]] for i in range(2)]
    normals = [hulls.face_normal[hulls.face_start[i]:hulls.face_start[i + 1]] for i in range(2)]
    a, b = points
    ea, eb = (points[i][edges[i][:, 1]] - points[i][edges[i][:, 0]] for i in range(2))
    cross = np.cross(ea[:, None], eb[None]).reshape(-1, 3)
    directions = [normals[1], -normals[0], cross, -cross,       # from b towards a
                  (a[:, None] - b[None]).reshape(-1, 3)]
    for (p, q, e, sign) in ((a, points[1], edges[1], 1.0), (b, points[0], edges[0], -1.0)):
        start, end = q[e[:, 0]], q[e[:, 1]]
        along = end - start
        t = np.clip(((p[:, None] - start[None]) * along[None]).sum(-1)
                    / (along ** 2).sum(-1)[None], 0.0, 1.0)
        nearest = start[None] + t[..., None] * along[None]
        directions.append(sign * (p[:, None] - nearest).reshape(-1, 3))
    n = np.concatenate(directions)
    length = np.linalg.norm(n, axis=1)
    n = n[length > 1e-12] / length[length > 1e-12, None]
    gaps = (n @ a.T).min(axis=1) - (n @ b.T).max(axis=1)
    return gaps.max(), n[np.argmax(gaps)]


def distance(hulls, pos, below=-np.inf, above=np.inf):
    """GJK between hulls 0 and 1: (upper, lower, witness (2, 3) a point of each)."""
    witness = np.full((2, 3), np.nan)
    d = pos[0] - pos[1]
    upper, lower = hull_distance(0, 1, hulls, d[0], d[1], d[2], below, above, np.empty((4, 3)),
                                 np.empty((4, 2), dtype=np.int64), witness, np.empty(4),
                                 np.empty(4))
    return upper, lower, witness


def inside(point, r, hulls, slack=1e-12):
    faces = slice(hulls.face_start[r], hulls.face_start[r + 1])
    return np.all(hulls.face_normal[faces] @ point - hulls.face_offset[faces] <= slack)


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), gap=st.floats(1e-4, 0.3))
def test_the_distance_of_separated_hulls_is_the_exact_one(seed, gap):
    """Random hull pairs apart: GJK's two bounds meet the exact distance within 1e-9 m."""
    model, pos, hulls, rotm = placed_pair(seed, gap)
    planes = with_world_planes(hulls, pos, rotm)
    exact, _ = exact_distance(model, planes)
    upper, lower, witness = distance(hulls, pos)
    assert lower <= upper
    assert abs(upper - exact) < 1e-9 and abs(lower - exact) < 1e-9
    assert abs(np.linalg.norm(witness[0] - witness[1]) - upper) < 1e-12
    assert inside(witness[0], 0, planes) and inside(witness[1], 1, planes)


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), gap=st.floats(1e-4, 0.3))
def test_where_a_face_holds_the_closest_points_gjk_points_along_its_normal(seed, gap):
    """Pairs whose gap is the separating-axis test's face separation (a face against a vertex
    or more): the GJK direction from the second hull to the first is that face's normal within
    1e-6 rad, the contact normal the narrow phase would give the pair."""
    model, pos, hulls, rotm = placed_pair(seed, gap)
    sa, fa = _face_query(0, 1, pos, rotm, hulls)
    sb, fb = _face_query(1, 0, pos, rotm, hulls)
    upper, _, witness = distance(hulls, pos)
    closest = witness[0] - witness[1]
    planes = with_world_planes(hulls, pos, rotm)
    sep, normal = max((sa, -planes.face_normal[fa]), (sb, planes.face_normal[fb]),
                      key=lambda s: s[0])
    if abs(sep - upper) > 1e-12:
        return  # closest points on an edge pair or a vertex pair: no face normal to compare
    cosine = np.clip(closest @ normal / np.linalg.norm(closest), -1.0, 1.0)
    assert np.arccos(cosine) < 1e-6


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32 - 1))
def test_overlapping_hulls_are_at_distance_zero(seed):
    """The second hull moved so that the two hulls' vertex centroids, inside each, coincide."""
    model, pos, hulls, rotm = placed_pair(seed, 0.0)
    start = hulls.hull_start
    centroid = [hulls.hull_points[start[i]:start[i + 1]].mean(axis=0) for i in range(2)]
    pos = np.array([pos[0], pos[1] + centroid[0] - centroid[1]])
    assert distance(world_hulls(pos, rotm, model, np.arange(2)), pos)[:2] == (0.0, 0.0)


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), gap=st.floats(1e-4, 0.3),
       threshold=st.floats(0.0, 0.4))
def test_bounds_that_stop_early_still_bound_the_distance(seed, gap, threshold):
    """Stopped as soon as the distance is known to be under or over a threshold, the bounds
    still hold, and the one that stopped it says which."""
    model, pos, hulls, rotm = placed_pair(seed, gap)
    exact, _ = exact_distance(model, with_world_planes(hulls, pos, rotm))
    upper, lower, _ = distance(hulls, pos, threshold, threshold)
    assert lower - 1e-12 <= exact <= upper + 1e-12
    assert (upper < threshold) == (exact < threshold) or abs(exact - threshold) < 1e-9


def inner_radius(r, pos, hulls):
    """Distance (m) from pos[r] to the nearest face plane of hull r (> 0: inside it)."""
    faces = slice(hulls.face_start[r], hulls.face_start[r + 1])
    return (hulls.face_offset[faces] - hulls.face_normal[faces] @ pos[r]).min()


def test_the_edge_query_is_skipped_only_when_no_edge_pair_can_matter():
    """On random hull pairs near and apart: wherever the GJK distance says the edge pairs
    cannot matter, the full edge query (no pruning) finds no edge pair that separates them by
    the speculative distance or beats the faces; and it says so for every pair apart whose
    closest points a face holds (its distance is the face separation), hulls with their
    centres inside."""
    rng = np.random.default_rng(11)
    skipped = face_held = 0
    for _ in range(300):
        model, pos, hulls, rotm = placed_pair(int(rng.integers(2**32)),
                                              rng.uniform(-0.02, 0.08))
        planes = with_world_planes(hulls, pos, rotm)
        spec = rng.uniform(0.01, 0.1)
        face_best = max(_face_query(0, 1, pos, rotm, hulls)[0],
                        _face_query(1, 0, pos, rotm, hulls)[0])
        threshold = min(spec, face_best + FACE_PREFERENCE)
        skip = _edges_cannot_matter(0, 1, hulls, threshold, distance(hulls, pos)[0])
        full, _, _ = _edge_query(0, 1, pos, rotm, hulls, -np.inf, face_best,
                                 np.empty((10, _MAX_EDGES)), np.empty(_MAX_EDGES, dtype=np.int64),
                                 np.empty((2, _MAX_FACES, 3)), np.empty(3))
        if skip:
            skipped += 1
            assert full < spec and full <= face_best + FACE_PREFERENCE
        if not 0.0 < face_best < spec - 1e-6:
            continue  # the face separation is a gap, at most the distance: not held by a face
        exact, _ = exact_distance(model, planes)
        if (abs(exact - face_best) < 1e-12
                and min(inner_radius(0, pos, planes), inner_radius(1, pos, planes)) > 0.0):
            face_held += 1
            assert skip
    assert face_held > 40 and skipped >= face_held


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), gap=st.floats(-0.02, 0.1))
def test_face_queries_bounded_by_the_closest_points_find_the_exact_best_face(seed, gap):
    """Each hull's faces searched about the other's GJK witness point, and the second hull's
    above the first's best: the same separation and the same first face reaching it as the
    brute force (every face against every vertex), where it matters."""
    model, pos, hulls, rotm = placed_pair(seed, gap)
    planes = with_world_planes(hulls, pos, rotm)
    upper, _, witness = distance(hulls, pos)
    found = []
    for a, b in ((0, 1), (1, 0)):
        faces = slice(hulls.face_start[a], hulls.face_start[a + 1])
        vertices = hulls.hull_points[hulls.hull_start[b]:hulls.hull_start[b + 1]]
        n = planes.face_normal[faces][:, None, :]  # summed in the kernel's order
        brute = (n[..., 0] * vertices[:, 0] + n[..., 1] * vertices[:, 1]
                 + n[..., 2] * vertices[:, 2]).min(axis=1) - planes.face_offset[faces]
        floor = found[0][0] if found else -1e300
        near = witness[1 - a] if upper > 0.0 else None
        sep, face = (_face_query(a, b, pos, rotm, hulls, floor, near, np.empty(_MAX_FACES))
                     if near is not None
                     else _face_query(a, b, pos, rotm, hulls, floor))
        if brute.max() > floor:
            assert sep == brute.max() and face == hulls.face_start[a] + np.argmax(brute)
        else:
            assert (sep, face) == (floor, -1)
        found.append((sep, face))


@settings(max_examples=80, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), gap=st.floats(1e-4, 0.08), spec=st.floats(0.0, 0.1))
def test_edge_queries_bounded_by_the_closest_points_decide_as_the_full_query(seed, gap, spec):
    """The edge query given GJK's closest points (which bound each edge's separation from
    above, as the faces' are): wherever the unpruned query finds an edge pair separating the
    hulls by the speculative distance or beating the faces by ``FACE_PREFERENCE``, the bounded
    one finds the same pair and separation; elsewhere it too stays below that threshold."""
    model, pos, hulls, rotm = placed_pair(seed, gap)
    upper, _, witness = distance(hulls, pos)
    face_best = max(_face_query(0, 1, pos, rotm, hulls)[0],
                    _face_query(1, 0, pos, rotm, hulls)[0])
    threshold = min(spec, face_best + FACE_PREFERENCE)

    def query(spec, face_best, near=None):
        scratch = (np.empty((10, _MAX_EDGES)), np.empty(_MAX_EDGES, dtype=np.int64),
                   np.empty((2, _MAX_FACES, 3)), np.empty(3))
        if near is None:
            return _edge_query(0, 1, pos, rotm, hulls, spec, face_best, *scratch)
        return _edge_query(0, 1, pos, rotm, hulls, spec, face_best, *scratch, near)

    full = query(-np.inf, -np.inf)
    bounded = query(spec, face_best, witness)
    if full[0] >= threshold:
        assert bounded == full
    else:
        assert bounded[0] < threshold
