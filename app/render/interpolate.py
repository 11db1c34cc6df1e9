"""Snapshot interpolation: smooth motion at any display rate
(docs/architecture.md#from-a-dropped-file-to-the-screen).

The physics thread publishes a ``Snapshot`` after each batch of fixed steps, stamped with the
wall instant its sim time was due (``Snapshot.wall_time``). The renderer draws the state at a
render instant between the two latest stamps — position by lerp, orientation by slerp — the
"interpolate the previous and current state" scheme of Glenn Fiedler's "Fix Your Timestep!".

A render instant at or after the newest stamp would show the newest state (alpha clamped to 1),
so motion would stall between batches; the window therefore renders ``RENDER_DELAY`` behind the
clock, one publish interval of the physics thread, which keeps the render instant between the
latest two stamps.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from physics.geometry.rotation import quat_slerp
from physics.simulation import Snapshot

RENDER_DELAY = 1.0 / 120.0  # s: Simulation's default publish interval (publish_hz = 120)


@dataclass(frozen=True)
class Pose:
    """Interpolated state of the bodies of the newest snapshot, in its row order.

    ids (n,) body ids; pos (n,3) centre of mass, m; quat (n,4) w,x,y,z principal → world;
    vel (n,3) m/s, omega (n,3) rad/s, ang_mom (n,3) kg·m²/s — world frame, blended linearly;
    time: interpolated sim time, s; alpha: blend weight of the newest snapshot, 0…1.
    """

    ids: np.ndarray
    pos: np.ndarray
    quat: np.ndarray
    vel: np.ndarray
    omega: np.ndarray
    ang_mom: np.ndarray
    time: float
    alpha: float


def blend_weight(prev: Snapshot, new: Snapshot, render_time: float) -> float:
    """Weight of ``new`` at wall instant ``render_time`` (s, ``time.perf_counter`` clock):
    0 at ``prev.wall_time``, 1 at ``new.wall_time``, clamped to 0…1 (never extrapolated, so a
    late snapshot never makes bodies overshoot). Equal stamps show the same sim time → 1."""
    span = new.wall_time - prev.wall_time
    if span <= 0.0:
        return 1.0
    return float(np.clip((render_time - prev.wall_time) / span, 0.0, 1.0))


def sim_time_weight(prev: Snapshot, new: Snapshot, sim_time: float) -> float:
    """Weight of ``new`` that shows sim time ``sim_time`` (s): 0 at ``prev.time``, 1 at
    ``new.time``, clamped to 0…1 (offline rendering at exact sim times, app/video/offline.py)."""
    span = new.time - prev.time
    if span <= 0.0:
        return 1.0
    return float(np.clip((sim_time - prev.time) / span, 0.0, 1.0))


def interpolate(prev: Snapshot, new: Snapshot, render_time: float) -> Pose:
    """The bodies of ``new`` as they were at wall instant ``render_time`` (see ``blend``)."""
    return blend(prev, new, blend_weight(prev, new, render_time))


def blend(prev: Snapshot, new: Snapshot, alpha: float) -> Pose:
    """The bodies of ``new`` blended with ``prev`` by weight ``alpha`` (0…1) of ``new``.

    Bodies are matched by id: one that is only in ``new`` (just added) is shown at its new
    state; one only in ``prev`` (removed) is dropped. Orientation is slerped along the shortest
    arc (``quat_slerp``), everything else lerped.
    """
    n = len(new.ids)
    pos, quat = np.array(new.pos, copy=True), np.array(new.quat, copy=True)
    vel, omega = np.array(new.vel, copy=True), np.array(new.omega, copy=True)
    ang_mom = np.array(new.ang_mom, copy=True)
    if alpha < 1.0 and n and len(prev.ids):
        rows_new, rows_prev = _matching_rows(prev.ids, new.ids)
        if len(rows_new):
            a = alpha
            for out, old in ((pos, prev.pos), (vel, prev.vel), (omega, prev.omega),
                             (ang_mom, prev.ang_mom)):
                out[rows_new] = (1.0 - a) * old[rows_prev] + a * out[rows_new]
            quat[rows_new] = quat_slerp(prev.quat[rows_prev], new.quat[rows_new], a)
    time = (1.0 - alpha) * prev.time + alpha * new.time
    return Pose(ids=np.array(new.ids, copy=True), pos=pos, quat=quat, vel=vel, omega=omega,
                ang_mom=ang_mom, time=float(time), alpha=alpha)


def _matching_rows(prev_ids: np.ndarray, new_ids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Rows of the ids present in both snapshots: (rows in new, rows in prev), same order."""
    order = np.argsort(prev_ids, kind="stable")
    sorted_ids = prev_ids[order]
    slot = np.minimum(np.searchsorted(sorted_ids, new_ids), len(sorted_ids) - 1)
    found = sorted_ids[slot] == new_ids
    return np.flatnonzero(found), order[slot[found]]
