"""Mass properties against closed forms (docs/physics.md#mass-properties-of-a-closed-mesh): solids,
thin shells, far from the origin.

Expected values are textbook formulas, never the code under test: box m(b²+c²)/12, axis-aligned
octahedron m(b²+c²)/10, the tetrahedron covariance (V/20)·Σ qᵢqᵢᵀ about its centroid, a right
triangle's area moments (bh³/36, −b²h²/72) for prisms, thin plates with the parallel-axis theorem
for a box surface, and the sphere limits 2/5·m r² (solid) and 2/3·m r² (shell).
"""

import json
from dataclasses import FrozenInstanceError

import numpy as np
import pytest
import trimesh
from hypothesis import given
from hypothesis import strategies as st
from scipy.spatial import ConvexHull
from scipy.spatial.transform import Rotation

from physics.geometry.inertia import InertiaError, MassProperties, mass_properties
from physics.geometry.meshes import MeshError, load_shape

JSON_KEYS = ["mode", "watertight", "volume", "area", "mass", "center_of_mass", "inertia",
             "principal_moments", "principal_axes", "warnings"]


# ---------------------------------------------------------------------------------------------
# meshes and closed forms

def convex_mesh(points):
    """Hull of points (k, 3) with every triangle wound counter-clockwise seen from outside."""
    points = np.asarray(points, dtype=float)
    hull = ConvexHull(points)
    faces = hull.simplices.copy()
    a, b, c = (points[faces[:, i]] for i in range(3))
    inward = np.einsum("ij,ij->i", np.cross(b - a, c - a), hull.equations[:, :3]) < 0
    faces[inward] = faces[inward][:, ::-1]
    return points, faces


def box_mesh(extents, center=(0.0, 0.0, 0.0)):
    corners = np.array([[x, y, z] for x in (-0.5, 0.5) for y in (-0.5, 0.5) for z in (-0.5, 0.5)])
    return convex_mesh(corners * extents + center)


def box_inertia(extents, mass):
    a, b, c = extents
    return mass / 12.0 * np.diag([b * b + c * c, a * a + c * c, a * a + b * b])


def prism_mesh(polygon, cap, height):
    """Right prism over a counter-clockwise polygon (k, 2) in z ∈ [0, height]; cap (t, 3) is a
    triangulation of the polygon wound counter-clockwise."""
    k = len(polygon)
    vertices = np.vstack([np.column_stack([polygon, np.zeros(k)]),
                          np.column_stack([polygon, np.full(k, height)])])
    cap = np.asarray(cap)
    sides = [[i, (i + 1) % k, k + (i + 1) % k] for i in range(k)]
    sides += [[i, k + (i + 1) % k, k + i] for i in range(k)]
    return vertices, np.vstack([cap[:, ::-1], cap + k, sides])


def tensor_from_covariance(cov, density):
    """I = ρ (tr C · E − C) for C = ∫ x xᵀ dV about the centre of mass."""
    return density * (np.trace(cov) * np.eye(3) - cov)


def random_rotation(seed):
    return Rotation.random(random_state=seed).as_matrix()


def assert_tensor(got, want, rel):
    """Every component within rel of the tensor's largest component (zeros included)."""
    scale = np.abs(want).max()
    assert np.abs(np.asarray(got) - want).max() <= rel * scale, (got, want)


def assert_frame(props, rel=1e-12):
    """Principal moments ascending, axes orthonormal and right-handed, A·diag·Aᵀ = inertia."""
    axes, moments = props.principal_axes, props.principal_moments
    assert np.all(np.diff(moments) >= 0)
    assert np.allclose(axes.T @ axes, np.eye(3), atol=1e-12)
    assert np.linalg.det(axes) == pytest.approx(1.0, abs=1e-12)
    assert_tensor(axes @ np.diag(moments) @ axes.T, props.inertia, rel)


# ---------------------------------------------------------------------------------------------
# solids near the origin: exact to 1e-12

def test_box_matches_closed_form():
    extents, center, rho = np.array([1.0, 2.0, 3.0]), np.array([0.2, -0.1, 0.3]), 7.5
    p = mass_properties(*box_mesh(extents, center), density=rho)
    mass = rho * 6.0
    assert (p.mode, p.watertight, p.warnings) == ("solid", True, ())
    assert p.volume == pytest.approx(6.0, rel=1e-12)
    assert p.area == pytest.approx(22.0, rel=1e-12)
    assert p.mass == pytest.approx(mass, rel=1e-12)
    assert np.abs(p.center_of_mass - center).max() <= 1e-12
    assert_tensor(p.inertia, box_inertia(extents, mass), 1e-12)
    assert np.allclose(p.principal_moments, np.sort(np.diag(box_inertia(extents, mass))),
                       rtol=1e-12, atol=0)
    # the longest side (z) has the smallest moment: axes z, y, x
    assert np.allclose(np.abs(p.principal_axes), np.eye(3)[:, ::-1], atol=1e-12)
    assert_frame(p)


def test_general_tetrahedron_matches_covariance_formula():
    pts = np.array([[0.1, 0.2, -0.3], [1.3, 0.1, 0.2], [0.4, 1.7, 0.1], [0.3, 0.5, 1.9]])
    rho = 2.0
    p = mass_properties(*convex_mesh(pts), density=rho)
    volume = abs(np.linalg.det(pts[1:] - pts[0])) / 6.0
    centroid = pts.mean(axis=0)
    q = pts - centroid
    cov = volume / 20.0 * q.T @ q  # ∫ x xᵀ dV about the centroid of a tetrahedron
    assert p.volume == pytest.approx(volume, rel=1e-12)
    assert p.mass == pytest.approx(rho * volume, rel=1e-12)
    assert np.abs(p.center_of_mass - centroid).max() <= 1e-12
    assert_tensor(p.inertia, tensor_from_covariance(cov, rho), 1e-12)
    assert_frame(p)


def test_octahedron_matches_closed_form():
    a, b, c = 1.0, 1.5, 2.0
    center = np.array([0.3, -0.2, 0.1])
    tips = np.array([[a, 0, 0], [-a, 0, 0], [0, b, 0], [0, -b, 0], [0, 0, c], [0, 0, -c]])
    p = mass_properties(*convex_mesh(tips + center))
    mass = 4.0 / 3.0 * a * b * c  # |x|/a + |y|/b + |z|/c ≤ 1
    assert p.mass == pytest.approx(mass, rel=1e-12)
    assert np.abs(p.center_of_mass - center).max() <= 1e-12
    assert_tensor(p.inertia, mass / 10.0 * np.diag([b * b + c * c, a * a + c * c, a * a + b * b]),
                  1e-12)


def test_triangular_prism_matches_closed_form():
    legs, height, rho = (1.5, 0.8), 2.5, 3.0   # right triangle, right angle at the origin
    bx, hy = legs
    p = mass_properties(*prism_mesh([[0, 0], [bx, 0], [0, hy]], [[0, 1, 2]], height),
                        density=rho)
    area = bx * hy / 2.0
    # centroidal area moments of a right triangle: ∫y² = b h³/36, ∫x² = h b³/36, ∫xy = −b²h²/72
    cov = height * np.array([[hy * bx ** 3 / 36, -(bx * hy) ** 2 / 72, 0],
                             [-(bx * hy) ** 2 / 72, bx * hy ** 3 / 36, 0],
                             [0, 0, area * height ** 2 / 12]])
    assert p.volume == pytest.approx(area * height, rel=1e-12)
    assert np.abs(p.center_of_mass - [bx / 3, hy / 3, height / 2]).max() <= 1e-12
    assert_tensor(p.inertia, tensor_from_covariance(cov, rho), 1e-12)
    assert_frame(p)


def test_non_convex_l_prism_is_the_sum_of_its_boxes():
    polygon = [[0, 0], [2, 0], [2, 1], [1, 1], [1, 2], [0, 2]]
    cap = [[0, 1, 2], [0, 2, 3], [0, 3, 4], [0, 4, 5]]
    p = mass_properties(*prism_mesh(polygon, cap, 0.5))
    parts = [(np.array([2.0, 1.0, 0.5]), np.array([1.0, 0.5, 0.25])),
             (np.array([1.0, 1.0, 0.5]), np.array([0.5, 1.5, 0.25]))]
    masses = [np.prod(e) for e, _ in parts]
    com = sum(m * c for m, (_, c) in zip(masses, parts)) / sum(masses)
    want = sum(box_inertia(e, m) + m * (np.dot(c - com, c - com) * np.eye(3)
                                        - np.outer(c - com, c - com))
               for m, (e, c) in zip(masses, parts))
    assert p.watertight
    assert p.volume == pytest.approx(1.5, rel=1e-12)
    assert np.abs(p.center_of_mass - com).max() <= 1e-12
    assert_tensor(p.inertia, want, 1e-12)


def test_agrees_with_trimesh_near_the_origin():
    sphere = trimesh.creation.icosphere(subdivisions=3, radius=0.7)
    sphere.apply_translation([0.1, 0.2, -0.05])
    p = mass_properties(sphere.vertices, sphere.faces, density=3.0)
    ref = trimesh.Trimesh(sphere.vertices, sphere.faces, process=False)
    ref.density = 3.0
    assert p.mass == pytest.approx(ref.mass, rel=1e-12)
    assert np.abs(p.center_of_mass - ref.center_mass).max() <= 1e-12
    assert_tensor(p.inertia, ref.moment_inertia, 1e-12)


# ---------------------------------------------------------------------------------------------
# far from the origin, arbitrarily rotated: 1e-9 (vertices there carry only ~1e-11 m)

@pytest.mark.parametrize("seed", range(4))
def test_far_rotated_box_and_tetrahedron(seed):
    rotation = random_rotation(seed)
    offset = np.array([1e5, -2e4, 3e4]) if seed % 2 else np.array([0.0, 1e5, 0.0])
    extents = np.array([1.0, 2.0, 3.0])
    p = mass_properties(box_mesh(extents)[0] @ rotation.T + offset, box_mesh(extents)[1])
    assert p.mass == pytest.approx(6.0, rel=1e-9)
    assert np.abs(p.center_of_mass - offset).max() <= 1e-9 * 3.0
    assert_tensor(p.inertia, rotation @ box_inertia(extents, 6.0) @ rotation.T, 1e-9)
    assert np.allclose(p.principal_moments, np.sort(np.diag(box_inertia(extents, 6.0))),
                       rtol=1e-9, atol=0)
    assert_frame(p, 1e-9)

    pts = np.array([[0.0, 0.0, 0.0], [1.3, 0.1, 0.2], [0.4, 1.7, 0.1], [0.3, 0.5, 1.9]])
    verts, faces = convex_mesh(pts)
    q = pts - pts.mean(axis=0)
    volume = abs(np.linalg.det(pts[1:] - pts[0])) / 6.0
    want = rotation @ tensor_from_covariance(volume / 20.0 * q.T @ q, 1.0) @ rotation.T
    p = mass_properties(verts @ rotation.T + offset, faces)
    assert p.volume == pytest.approx(volume, rel=1e-9)
    assert np.abs(p.center_of_mass - (rotation @ pts.mean(axis=0) + offset)).max() <= 2e-9
    assert_tensor(p.inertia, want, 1e-9)


unit = st.floats(-1.0, 1.0)


@given(quat=st.tuples(unit, unit, unit, unit).filter(lambda q: np.linalg.norm(q) > 0.1),
       offset=st.tuples(*[st.floats(-1e5, 1e5)] * 3),
       extents=st.tuples(*[st.floats(0.1, 10.0)] * 3))
def test_rigid_motion_of_a_box_rotates_the_tensor(quat, offset, extents):
    w, x, y, z = np.asarray(quat) / np.linalg.norm(quat)
    rotation = Rotation.from_quat([x, y, z, w]).as_matrix()
    extents = np.asarray(extents)
    verts, faces = box_mesh(extents)
    p = mass_properties(verts @ rotation.T + offset, faces, density=2.0)
    mass = 2.0 * np.prod(extents)
    assert p.mass == pytest.approx(mass, rel=1e-9)
    assert np.abs(p.center_of_mass - offset).max() <= 1e-9 * extents.max()
    assert_tensor(p.inertia, rotation @ box_inertia(extents, mass) @ rotation.T, 1e-9)
    assert_frame(p, 1e-9)


# ---------------------------------------------------------------------------------------------
# thin shells

def test_box_surface_is_six_plates():
    extents, sigma = np.array([1.0, 2.0, 3.0]), 0.5
    p = mass_properties(*box_mesh(extents, [0.1, 0.2, 0.3]), density=sigma, mode="shell")
    want = np.zeros((3, 3))
    for normal in range(3):
        u, v = [k for k in range(3) if k != normal]
        plate = sigma * extents[u] * extents[v]
        sizes = np.zeros(3)
        sizes[[u, v]] = extents[[u, v]]
        cov = plate * np.diag(sizes ** 2 / 12.0)    # thin plate about its own centre
        shift = np.zeros(3)
        shift[normal] = extents[normal] / 2.0       # two plates at ± half the extent
        cov = cov + plate * np.outer(shift, shift)  # parallel-axis theorem (same for ±)
        want += 2 * tensor_from_covariance(cov, 1.0)
    area = 2 * (2.0 + 6.0 + 3.0)
    assert p.mode == "shell" and p.watertight
    assert p.area == pytest.approx(area, rel=1e-12)
    assert p.mass == pytest.approx(sigma * area, rel=1e-12)
    assert p.volume == pytest.approx(6.0, rel=1e-12)
    assert np.abs(p.center_of_mass - [0.1, 0.2, 0.3]).max() <= 1e-12
    assert_tensor(p.inertia, want, 1e-12)


@pytest.mark.parametrize("mode, factor", [("solid", 2 / 5), ("shell", 2 / 3)])
def test_sphere_limit(mode, factor):
    """Icosphere → 2/5 m r² (solid), 2/3 m r² (shell); the polyhedron's error is second order in
    the edge length e (measured ≈ 0.21 (e/r)², so (e/r)²/4 bounds it)."""
    errors = []
    for subdivisions in (3, 4):
        s = trimesh.creation.icosphere(subdivisions=subdivisions, radius=2.0)
        p = mass_properties(s.vertices, s.faces, mode=mode)
        edge = np.linalg.norm(s.vertices[s.edges[:, 0]] - s.vertices[s.edges[:, 1]], axis=1).max()
        error = np.abs(p.principal_moments / (factor * p.mass * 4.0) - 1).max()
        assert error <= (edge / 2.0) ** 2 / 4
        assert np.ptp(p.principal_moments) <= 1e-12 * p.principal_moments[2]  # isotropic
        errors.append(error)
    assert 3.5 < errors[0] / errors[1] < 4.5  # halving the edge quarters the error


def test_open_mesh_works_as_a_shell():
    a, b, sigma = 2.0, 3.0, 1.5   # rectangle in the z = 1 plane, two triangles
    verts = np.array([[0, 0, 1], [a, 0, 1], [a, b, 1], [0, b, 1]], dtype=float)
    p = mass_properties(verts, [[0, 1, 2], [0, 2, 3]], density=sigma, mode="shell")
    mass = sigma * a * b
    assert (p.watertight, p.volume, p.warnings) == (False, 0.0, ())
    assert p.mass == pytest.approx(mass, rel=1e-12)
    assert np.abs(p.center_of_mass - [a / 2, b / 2, 1]).max() <= 1e-12
    assert_tensor(p.inertia, mass / 12 * np.diag([b * b, a * a, a * a + b * b]), 1e-12)


def test_needle_shell_clamps_a_rounding_negative_moment():
    """A sliver triangle has a true smallest moment ~1e-16 of the largest; rounding can push it
    below zero, which is clamped with a warning (seed 0 already does)."""
    clamped = None
    for seed in range(40):
        tri = np.array([[0, 0, 0], [1, 0, 0], [0.5, 1e-9, 0]]) @ random_rotation(seed).T + 3.0
        p = mass_properties(tri, [[0, 1, 2]], mode="shell")
        assert p.principal_moments[0] >= 0
        if p.warnings:
            clamped = p
            break
    assert clamped is not None
    assert clamped.principal_moments[0] == 0.0
    assert "clamped to 0" in clamped.warnings[0]
    # the other two: a rod of length 1 whose mass per length is a triangle peaking mid-way
    # (the sliver's width), variance 1/24
    assert clamped.principal_moments[1:] == pytest.approx([clamped.mass / 24] * 2, rel=1e-6)


# ---------------------------------------------------------------------------------------------
# winding, topology, invariances

def test_inverted_winding_gives_positive_volume_and_a_warning():
    verts, faces = box_mesh([1.0, 2.0, 3.0])
    good = mass_properties(verts, faces)
    p = mass_properties(verts, faces[:, ::-1])
    assert p.volume == pytest.approx(6.0, rel=1e-12) and p.mass > 0
    assert p.watertight
    assert len(p.warnings) == 1 and "inverted" in p.warnings[0] and "negative" in p.warnings[0]
    assert_tensor(p.inertia, good.inertia, 1e-14)


def test_watertight_detects_open_flipped_and_non_manifold_surfaces():
    verts, faces = box_mesh([1.0, 2.0, 3.0])
    assert mass_properties(verts, faces).watertight
    flipped = faces.copy()
    flipped[0] = flipped[0, ::-1]
    cases = {"open": faces[1:], "one face flipped": flipped,
             "three faces on an edge": np.vstack([faces, faces[:1]]),
             "degenerate face": np.vstack([faces, [[0, 0, 1]]])}
    for name, f in cases.items():
        assert not mass_properties(verts, f, mode="shell").watertight, name
    # unmerged corners: geometrically closed, topologically open — solid is refused (the
    # library cannot tell a surface that still encloses its volume from one with a hole)
    split_faces = np.arange(faces.size).reshape(-1, 3)
    with pytest.raises(InertiaError, match="not closed .*so solid inertia is undefined"):
        mass_properties(verts[faces].reshape(-1, 3), split_faces)
    assert not mass_properties(verts[faces].reshape(-1, 3), split_faces, mode="shell").watertight


def test_solid_on_an_open_surface_is_refused_as_the_command_line_refuses_it(tmp_path):
    """The library and ``tumble inertia --mode solid`` give the same refusal, word for word
    (the command line adds the file's name)."""
    verts, faces = box_mesh([1.0, 2.0, 3.0])
    with pytest.raises(InertiaError) as library:
        mass_properties(verts, faces[1:], mode="solid")
    path = tmp_path / "open box.obj"
    path.write_text("".join(f"v {x} {y} {z}\n" for x, y, z in verts) +
                    "".join(f"f {a + 1} {b + 1} {c + 1}\n" for a, b, c in faces[1:]))
    with pytest.raises(MeshError) as command_line:
        load_shape(path, mode="solid")
    assert str(command_line.value) == f"{path.name}: {library.value}"


def test_two_separate_boxes_add_up():
    v1, f1 = box_mesh([1.0, 1.0, 1.0], [-2.0, 0.0, 0.0])
    v2, f2 = box_mesh([1.0, 2.0, 1.0], [3.0, 0.0, 0.0])
    p = mass_properties(np.vstack([v1, v2]), np.vstack([f1, f2 + len(v1)]))
    com = (1 * np.array([-2.0, 0, 0]) + 2 * np.array([3.0, 0, 0])) / 3
    want = box_inertia([1, 1, 1], 1.0) + box_inertia([1, 2, 1], 2.0)
    for m, c in ((1.0, [-2.0, 0, 0]), (2.0, [3.0, 0, 0])):
        d = np.asarray(c) - com
        want = want + m * (d @ d * np.eye(3) - np.outer(d, d))
    assert p.watertight
    assert np.abs(p.center_of_mass - com).max() <= 1e-12
    assert_tensor(p.inertia, want, 1e-12)


def test_invariant_under_reindexing_face_order_and_corner_rotation():
    sphere = trimesh.creation.icosphere(subdivisions=2)
    verts = sphere.vertices * [1.0, 1.5, 0.7] + [0.3, 0.0, -0.2]
    faces = sphere.faces
    base = mass_properties(verts, faces)
    rng = np.random.default_rng(3)
    perm = rng.permutation(len(verts))              # new index of old vertex i is inverse[i]
    inverse = np.argsort(perm)
    extra = rng.normal(size=(5, 3)) * 100           # unused vertices must not matter
    shuffled = np.roll(inverse[faces][rng.permutation(len(faces))], 1, axis=1)
    p = mass_properties(np.vstack([verts[perm], extra]), shuffled)
    assert p.watertight
    assert p.mass == pytest.approx(base.mass, rel=1e-13)
    assert np.abs(p.center_of_mass - base.center_of_mass).max() <= 1e-13
    assert_tensor(p.inertia, base.inertia, 1e-13)


def test_density_scales_mass_and_inertia_only():
    verts, faces = box_mesh([1.0, 2.0, 3.0], [1.0, 1.0, 1.0])
    one, two = mass_properties(verts, faces), mass_properties(verts, faces, density=2500.0)
    assert two.mass == pytest.approx(2500.0 * one.mass, rel=1e-14)
    assert two.volume == one.volume and np.array_equal(two.center_of_mass, one.center_of_mass)
    assert_tensor(two.inertia, 2500.0 * one.inertia, 1e-14)


# ---------------------------------------------------------------------------------------------
# the result object

def test_result_is_frozen_and_serialises_to_the_design_keys():
    p = mass_properties(*box_mesh([1.0, 2.0, 3.0]), density=1000.0)
    assert isinstance(p, MassProperties)
    with pytest.raises(FrozenInstanceError):
        p.mass = 1.0
    with pytest.raises(ValueError):
        p.inertia[0, 0] = 1.0  # arrays are read-only too
    d = p.to_json_dict()
    assert list(d) == JSON_KEYS
    back = json.loads(json.dumps(d))
    assert back == d
    assert isinstance(d["watertight"], bool) and isinstance(d["mass"], float)
    assert isinstance(d["inertia"][0][0], float) and isinstance(d["warnings"], list)
    assert np.allclose(np.array(d["principal_axes"]), p.principal_axes, rtol=0, atol=0)


# ---------------------------------------------------------------------------------------------
# unusable input

def test_flat_closed_mesh_in_solid_mode_suggests_shell():
    verts = np.array([[0, 0, 0], [1, 0, 0], [1, 1, 0], [0, 1, 0]], dtype=float)
    pillow = np.array([[0, 1, 2], [0, 2, 3], [0, 2, 1], [0, 3, 2]])  # both sides of a square
    with pytest.raises(InertiaError, match="volume is too small.*shell"):
        mass_properties(verts, pillow)
    assert mass_properties(verts, pillow, mode="shell").mass == pytest.approx(2.0, rel=1e-12)


@pytest.mark.parametrize("plate, small_center", [
    ([2.0, 2.0, 2.0], [10.0, 0.0, 0.0]),  # far negative mass: I_yy, I_zz < 0
    ([4.0, 4.0, 0.2], [0.0, 0.0, 1.0]),   # above a plate: all moments > 0 but I1 + I2 < I3
])
def test_inward_wound_part_gives_a_non_physical_tensor_error(plate, small_center):
    """A closed box plus a small inward-wound box: negative mass there; each part is closed, so
    the edge test alone cannot see it."""
    v1, f1 = box_mesh(plate)
    v2, f2 = box_mesh([0.5, 0.5, 0.5], small_center)
    with pytest.raises(InertiaError, match="not physical.*I1 \\+ I2 ≥ I3"):
        mass_properties(np.vstack([v1, v2]), np.vstack([f1, f2[:, ::-1] + len(v1)]))


@pytest.mark.parametrize("verts, faces, match", [
    ([[0, 0, 0], [1, 0, 0], [0, 1, np.nan]], [[0, 1, 2]], r"vertices\[2\].*not finite"),
    ([[0, 0, 0], [np.inf, 0, 0], [0, 1, 0]], [[0, 1, 2]], r"vertices\[1\].*not finite"),
    (np.zeros((0, 3)), [[0, 1, 2]], r"vertices must have shape \(n, 3\)"),
    ([[0, 0], [1, 0], [0, 1]], [[0, 1, 2]], r"vertices must have shape \(n, 3\)"),
    ([["a", "b", "c"]], [[0, 0, 0]], "vertices must be an"),
    ([[0, 0, 0], [1, 0, 0], [0, 1, 0]], np.zeros((0, 3), int), r"faces must have shape"),
    ([[0, 0, 0], [1, 0, 0], [0, 1, 0]], [[0, 1, 2, 0]], r"faces must have shape"),
    ([[0, 0, 0], [1, 0, 0], [0, 1, 0]], [[0.0, 1.0, 2.0]], "integer"),
    ([[0, 0, 0], [1, 0, 0], [0, 1, 0]], [[0, 1, 2], [0, 1, 3]], r"faces\[1\].*outside 0\.\.2"),
    ([[0, 0, 0], [1, 0, 0], [0, 1, 0]], [[0, -1, 2]], r"faces\[0\].*outside"),
    ([[0, 0, 0], [0, 0, 0], [0, 0, 0]], [[0, 1, 2]], "zero area"),
    ([[0, 0, 0], [1e300, 0, 0], [0, 1e300, 0]], [[0, 1, 2]], "overflow"),
])
def test_bad_input_is_a_clear_error(verts, faces, match):
    with pytest.raises(InertiaError, match=match):
        mass_properties(verts, faces, mode="shell")


@pytest.mark.parametrize("kwargs, match", [
    ({"mode": "hollow"}, "mode must be 'solid' or 'shell'"),
    ({"density": 0.0}, "density must be finite and > 0"),
    ({"density": float("nan")}, "density must be finite"),
    ({"density": "heavy"}, "density must be a number"),
])
def test_bad_options_are_clear_errors(kwargs, match):
    with pytest.raises(InertiaError, match=match):
        mass_properties(*box_mesh([1.0, 1.0, 1.0]), **kwargs)
    assert issubclass(InertiaError, ValueError)
