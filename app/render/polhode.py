"""The polhode: the trail of a body's ω tip on its Poinsot inertia ellipsoid, kept for the
selected body and drawn by the gizmos (app/render/gizmos.py) as a fading line."""

from __future__ import annotations

import collections
import dataclasses
import math

import numpy as np

from app.render.gizmos import ELLIPSOID_SIZE, body_radius
from app.render.view import FrameView
from physics.geometry.rotation import quat_rotate

POLHODE_SECONDS = 4.0  # s of sim time kept in the ω-tip trail


class PolhodeTrail:
    """The ω-tip trail of one body on its Poinsot inertia ellipsoid (the polhode).

    Samples are kept in the BODY frame, scaled onto the ellipsoid the gizmos draw
    (xᵀ I x = c with the longest semi-axis ELLIPSOID_SIZE · R, R the body radius, so
    c = (ELLIPSOID_SIZE · R)² I1): the point is ω·√(c / ωᵀIω) — Poinsot's construction
    (Landau–Lifshitz, Mechanics §37). Drawn with the body's current pose, the curve rides on
    the ellipsoid as the body turns.
    """

    def __init__(self):
        self.body_id: int | None = None
        self._points: collections.deque = collections.deque()  # (sim time, (3,) body frame)

    def update(self, body_id: int | None, shape, snapshot) -> None:
        """Add the newest snapshot's ω of ``body_id`` (restart on a new body or a reset)."""
        if body_id != self.body_id or (self._points and snapshot.time < self._points[-1][0]):
            self._points.clear()
            self.body_id = body_id
        if body_id is None or shape is None:
            return
        rows = np.flatnonzero(snapshot.ids == body_id)
        if not len(rows) or (self._points and snapshot.time == self._points[-1][0]):
            return
        omega = snapshot.omega_body[rows[0]]
        moments = shape.properties.principal_moments
        energy2 = float(omega @ (moments * omega))  # ωᵀIω = 2 T_rot
        if energy2 > 0.0:
            c = (ELLIPSOID_SIZE * body_radius(shape)) ** 2 * moments[0]
            self._points.append((snapshot.time, omega * math.sqrt(c / energy2)))
        while self._points and self._points[0][0] < snapshot.time - POLHODE_SECONDS:
            self._points.popleft()

    def world(self, pos, quat) -> np.ndarray:
        """(m,3) trail points in the world for a body at pos (3,), quat (4,)."""
        if not self._points:
            return np.zeros((0, 3))
        body = np.array([p for _, p in self._points])
        return pos + quat_rotate(np.asarray(quat)[None], body)

    def attach(self, view: FrameView, snapshot, enabled: bool) -> FrameView:
        """``view`` with the selected body's trail as its polhode when ``enabled`` (the window
        draws the polhode of the selected body only); the trail follows the selection and takes
        ``snapshot``'s ω first."""
        shown = 0 <= view.selected < view.count
        body_id = int(view.ids[view.selected]) if shown else None
        self.update(body_id, view.shapes[view.selected] if shown else None, snapshot)
        if not (shown and enabled):
            return view
        return dataclasses.replace(view, polhode={body_id: self.world(
            view.pos[view.selected], view.quat[view.selected])})
