"""Orbit camera: yaw/pitch/distance around a target point, Y-up; matrices with pyrr.

Matrix layout (pyrr's, as in the recipes' scene.py): matrices are ROW-vector, ``p_clip =
[x, y, z, 1] @ (view @ projection)``. Their C-order bytes are exactly what a GLSL column-major
``mat4`` expects, so they are written to uniforms without a transpose and the shader does
``u_vp * vec4(p, 1)``.

Pixel coordinates follow pyglet: origin at the bottom-left of the window, y up.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from pyrr import matrix44

PITCH_LIMIT = math.radians(89.0)  # stay off the poles, where yaw and the up vector degenerate
MIN_DISTANCE, MAX_DISTANCE = 0.05, 500.0  # m
MIN_BODIES_RADIUS = 0.6  # m: the least view around bodies without walls (a 0.3 m body + arrows)
HOME_CENTER, HOME_RADIUS = (0.0, 1.0, 0.0), 2.9  # m: the start view without a container
ZOOM_PER_STEP = 0.15  # one wheel notch changes the distance by e^0.15 ≈ 16 %


def _unit(x: float, y: float, z: float) -> tuple[float, float, float]:
    norm = math.sqrt(x * x + y * y + z * z)
    return x / norm, y / norm, z / norm


def look_at(eye, target, up, dtype=None) -> np.ndarray:
    """pyrr's ``matrix44.create_look_at`` to the bit (tested), its vectors in Python floats:
    pyrr's ``np.cross`` and normalising on 3-vectors cost ~0.15 ms each, and the renderer
    makes four of these matrices a frame, on the thread the window and a clip share the GIL
    with. The same operations in the same order (IEEE doubles, each rounded) give the same
    bits; the dot products stay numpy's."""
    eye, target, up = (np.asarray(v, dtype=float) for v in (eye, target, up))
    fx, fy, fz = _unit(*(target - eye).tolist())
    ux, uy, uz = up.tolist()
    sx, sy, sz = _unit(fy * uz - fz * uy, fz * ux - fx * uz, fx * uy - fy * ux)
    ux, uy, uz = _unit(sy * fz - sz * fy, sz * fx - sx * fz, sx * fy - sy * fx)
    side, up, forward = np.array((sx, sy, sz)), np.array((ux, uy, uz)), np.array((fx, fy, fz))
    return np.array(((sx, ux, -fx, 0.0), (sy, uy, -fy, 0.0), (sz, uz, -fz, 0.0),
                     (-np.dot(side, eye), -np.dot(up, eye), np.dot(forward, eye), 1.0)),
                    dtype=dtype)


class OrbitCamera:
    """A camera looking at ``target`` from ``distance`` along the direction given by ``yaw``
    (about +Y, 0 = looking along −Z from +Z) and ``pitch`` (up from the floor plane).

    target (3,) m; yaw, pitch rad; distance m; fov_y vertical field of view, degrees.
    """

    def __init__(self, target=(0.0, 0.8, 0.0), yaw: float = math.radians(35.0),
                 pitch: float = math.radians(25.0), distance: float = 8.0, fov_y: float = 45.0):
        self.target = np.array(target, dtype=float).reshape(3)
        self.yaw = float(yaw)
        self.pitch = float(np.clip(pitch, -PITCH_LIMIT, PITCH_LIMIT))
        self.distance = float(np.clip(distance, MIN_DISTANCE, MAX_DISTANCE))
        self.fov_y = float(fov_y)

    # ---- pose ---------------------------------------------------------------------------------

    @property
    def back(self) -> np.ndarray:
        """(3,) unit vector from the target towards the eye."""
        cp = math.cos(self.pitch)
        return np.array([cp * math.sin(self.yaw), math.sin(self.pitch), cp * math.cos(self.yaw)])

    @property
    def eye(self) -> np.ndarray:
        """(3,) eye position, m."""
        return self.target + self.distance * self.back

    @property
    def right(self) -> np.ndarray:
        """(3,) unit vector to the right of the screen (horizontal, since pitch < 90°)."""
        return np.array([math.cos(self.yaw), 0.0, -math.sin(self.yaw)])

    @property
    def up(self) -> np.ndarray:
        """(3,) unit vector up the screen."""
        return np.cross(self.back, self.right)

    # ---- interaction --------------------------------------------------------------------------

    def orbit(self, d_yaw: float, d_pitch: float) -> None:
        """Turn around the target by d_yaw, d_pitch radians (pitch clamped to ±89°)."""
        self.yaw = (self.yaw + d_yaw) % (2.0 * math.pi)
        self.pitch = float(np.clip(self.pitch + d_pitch, -PITCH_LIMIT, PITCH_LIMIT))

    def pan(self, dx: float, dy: float, height: int) -> None:
        """Move the target so a point at the target's depth follows a drag of (dx, dy) pixels
        in a viewport ``height`` pixels tall."""
        per_pixel = self.world_per_pixel(self.distance, height)
        self.target = self.target - per_pixel * (dx * self.right + dy * self.up)

    def zoom(self, steps: float) -> None:
        """Wheel zoom: positive steps move closer, exponentially (same ratio per notch)."""
        self.distance = float(np.clip(self.distance * math.exp(-ZOOM_PER_STEP * steps),
                                      MIN_DISTANCE, MAX_DISTANCE))

    def frame(self, center, radius: float, aspect: float = 1.0) -> None:
        """Look at ``center`` from just far enough that a sphere of ``radius`` m fills the view
        (with a 10 % margin) in both directions of a viewport of the given width/height."""
        self.target = np.array(center, dtype=float).reshape(3)
        half_y = math.radians(self.fov_y) / 2.0
        half_x = math.atan(math.tan(half_y) * aspect)
        half = min(half_x, half_y)
        self.distance = float(np.clip(1.1 * max(float(radius), 1e-3) / math.sin(half),
                                      MIN_DISTANCE, MAX_DISTANCE))

    # ---- matrices -----------------------------------------------------------------------------

    def clip_range(self) -> tuple[float, float]:
        """(near, far) planes, m: scaled with the distance so depth precision follows the zoom;
        far reaches the horizon of the 400 m floor."""
        near = max(1e-3, 0.01 * self.distance)
        return near, max(600.0, 60.0 * self.distance)

    def view(self, dtype=np.float32) -> np.ndarray:
        """(4, 4) view matrix, pyrr row-vector layout (module docstring); float32 for GL."""
        return look_at(self.eye, self.target, np.array([0.0, 1.0, 0.0]), dtype=dtype)

    def projection(self, aspect: float, dtype=np.float32) -> np.ndarray:
        """(4, 4) perspective projection for width/height ``aspect``, pyrr layout."""
        near, far = self.clip_range()
        return matrix44.create_perspective_projection(self.fov_y, aspect, near, far,
                                                      dtype=dtype)

    def view_projection(self, aspect: float, dtype=np.float32) -> np.ndarray:
        """(4, 4) ``view @ projection`` (row vectors: p_clip = p @ vp); computed in float64
        (``project`` and ``ray`` use that), float32 for GL by default."""
        vp = self.view(np.float64) @ self.projection(aspect, np.float64)
        return vp.astype(dtype)

    def world_per_pixel(self, depth: float | np.ndarray, height: int) -> float | np.ndarray:
        """Size in m of one pixel at view depth ``depth`` m in a viewport ``height`` px tall."""
        return 2.0 * np.asarray(depth) * math.tan(math.radians(self.fov_y) / 2.0) / height

    def project(self, points, width: int, height: int) -> np.ndarray:
        """(..., 3) world points → (..., 3): pixel x, pixel y (bottom-left origin) and depth
        along the view direction, m (negative behind the eye)."""
        p = np.asarray(points, dtype=float)
        vp = self.view_projection(width / height, np.float64)
        clip = np.concatenate([p, np.ones(p.shape[:-1] + (1,))], axis=-1) @ vp
        ndc = clip[..., :2] / clip[..., 3:4]
        depth = (p - self.eye) @ -self.back
        return np.concatenate([(ndc * 0.5 + 0.5) * (width, height), depth[..., None]], axis=-1)

    def ray(self, x: float, y: float, width: int, height: int) -> tuple[np.ndarray, np.ndarray]:
        """Picking ray through pixel (x, y) (pyglet: bottom-left origin, y up) of a viewport of
        width × height pixels: (origin (3,) = the eye, unit direction (3,))."""
        inverse = np.linalg.inv(self.view_projection(width / height, np.float64))
        ndc = np.array([2.0 * x / width - 1.0, 2.0 * y / height - 1.0])
        ends = np.array([[ndc[0], ndc[1], -1.0, 1.0], [ndc[0], ndc[1], 1.0, 1.0]]) @ inverse
        near, far = ends[:, :3] / ends[:, 3:]
        direction = far - near
        return self.eye.copy(), direction / np.linalg.norm(direction)


def home_sphere(container_size, bodies=None) -> tuple[tuple[float, float, float], float]:
    """(centre (3,) m, radius m) of the start view: the container seen whole (its lower part
    nearer the middle, where bodies come to rest); without walls the bodies' centres ``bodies``
    (k, 3) m with room for their gizmo arrows (a zero-g scene of one small body fills the view
    instead of being a speck over the floor); with neither, HOME_*."""
    if container_size is None:
        if bodies is None or len(bodies) == 0:
            return HOME_CENTER, HOME_RADIUS
        low, high = np.min(bodies, axis=0), np.max(bodies, axis=0)
        centre = tuple(float(v) for v in (low + high) / 2)
        return centre, max(0.75 * float(np.linalg.norm(high - low)), MIN_BODIES_RADIUS)
    size = np.asarray(container_size, dtype=float)
    return (0.0, size[1] / 3.0, 0.0), 0.45 * float(np.linalg.norm(size))


@dataclass(frozen=True)
class CameraPose:
    """``--camera YAW,PITCH[,DISTANCE]``: degrees, degrees, m; distance None → frame the
    container as the app's start view does."""

    yaw: float
    pitch: float
    distance: float | None = None


def parse_camera(text: str) -> CameraPose:
    """``"35,25"`` or ``"35,25,6"`` → CameraPose; ValueError with what is expected."""
    try:
        values = [float(v) for v in text.split(",")]
    except ValueError:
        values = []
    if len(values) not in (2, 3) or not all(math.isfinite(v) for v in values):
        raise ValueError(f"must be YAW,PITCH or YAW,PITCH,DISTANCE (degrees, degrees, m), "
                         f"got {text!r}")
    if not -89.0 <= values[1] <= 89.0:
        raise ValueError(f"pitch must be between -89 and 89 degrees, got {values[1]:g}")
    if len(values) == 3 and values[2] <= 0:
        raise ValueError(f"distance must be > 0 m, got {values[2]:g}")
    return CameraPose(*values)
