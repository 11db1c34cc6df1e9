"""The world ``HullSet`` of a step with its faces' planes moved into the world, for checks by
brute force: the narrow phase keeps them in the body frame and moves only those it reads."""

import numpy as np

from physics.collision.narrowphase import _face_plane


def with_world_planes(hulls, pos, rotm):
    """hulls (the narrow phase's world ``HullSet``) with face_normal (F, 3) and face_offset (F,)
    in the world, moved as the narrow phase moves them (``_face_plane``: the same bits), and
    each inner radius as the distance from the centre of mass to the nearest moved plane."""
    planes = np.array([_face_plane(f, r, hulls, pos, rotm)
                       for r in range(len(hulls.face_start) - 1)
                       for f in range(hulls.face_start[r], hulls.face_start[r + 1])])
    planes = planes.reshape(-1, 4)
    return hulls._replace(face_normal=planes[:, :3].copy(), face_offset=planes[:, 3].copy())
