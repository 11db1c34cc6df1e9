"""The compiled vertex clustering (the first level drawn of a big mesh) keeps the shape, the
winding and the face budget, like the renderer's own clustering."""

import numpy as np
import pytest
import trimesh

from app.render.clustering import cluster
from app.render.renderer import _cluster


@pytest.mark.parametrize("target", [500, 2000, 8000])
def test_a_sphere_clusters_to_about_the_target_staying_round_and_outward(target):
    sphere = trimesh.creation.icosphere(subdivisions=6, radius=0.4)
    vertices, faces = cluster(np.asarray(sphere.vertices), np.asarray(sphere.faces), target)
    reference = _cluster(np.asarray(sphere.vertices), np.asarray(sphere.faces), target)[1]
    assert 0.25 * target < len(faces) <= 1.15 * target
    assert abs(len(faces) - len(reference)) <= 0.25 * len(reference)
    assert faces.min() == 0 and faces.max() == len(vertices) - 1  # every vertex used
    radius = np.linalg.norm(vertices, axis=1)
    assert radius.max() <= 0.4 + 1e-9 and radius.min() > 0.37  # cluster means sit just inside
    triangles = vertices[faces]
    normal = np.cross(triangles[:, 1] - triangles[:, 0], triangles[:, 2] - triangles[:, 0])
    outward = np.einsum("ij,ij->i", normal, triangles.mean(axis=1))
    assert np.all(outward > 0)  # winding kept: every face turns outward
    canonical = {tuple(np.roll(f, -int(np.argmin(f)))) for f in faces.tolist()}
    assert len(canonical) == len(faces)  # one copy of each face


def test_a_box_keeps_its_extent():
    box = trimesh.creation.box(extents=(0.2, 0.4, 0.6)).subdivide().subdivide().subdivide()
    vertices, faces = cluster(np.asarray(box.vertices), np.asarray(box.faces), 200)
    assert 0 < len(faces) <= 230
    assert np.allclose(np.ptp(vertices, axis=0), (0.2, 0.4, 0.6), rtol=0.35)
