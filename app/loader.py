"""Loading dropped or opened files off the render thread
(docs/architecture.md#from-a-dropped-file-to-the-screen).

``Loader.request(paths, drop_point)`` (render thread) queues the files for a worker thread, which
reads them — meshes as ``physics.geometry.meshes.load_shape`` does (density 1000, mode auto),
``.toml`` scenes with ``physics.scene.load_scene`` + ``build_world`` — and sends the resulting
commands to the physics thread. A big mesh's body is added as soon as its mass properties and
hull exist; the coarse level it is first drawn with is made meanwhile on a helper thread, and
the renderer makes its real levels of detail afterwards. The outcomes come back through a queue
that ``Loader.poll()`` (render thread, once a frame) applies to the ``AppState``: body records,
notifications, the ``loading`` count. So the UI never waits for a file, and ``AppState`` is
only ever touched by the render thread.

- Each mesh becomes a body standing just above the floor under the drop point (its lowest hull
  point ``CLEARANCE`` above it), inside the container; meshes dropped together are spread on a
  grid so they do not overlap.
- A scene replaces the whole scene: world settings, bodies, and the reset point.
- A bad file (missing, a folder, empty, truncated, not a mesh, NaN, a single triangle, too many
  faces, a bad scene…) is rejected with a notification naming the file and the reason; nothing
  is sent to the physics thread for it, so the scene is untouched.

Log lines (INFO, logger ``tumble``, also shown as notifications):
``loaded <file name>: mass=<kg> kg, mode=<solid|shell>`` and ``rejected <file name>: <reason>``;
for a big mesh also ``timed <file name>: read … s, clean … s, mass … s, hull … s (…)`` and
``timed the first level of <file name>: …``, each stage's wall time and how much of it was spent
on a core, waiting for one and blocked on the GIL (``app.stopwatch``).
"""

from __future__ import annotations

import dataclasses
import logging
import math
import os
import queue
import re
import threading
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from app.app_state import AppState
from app.gil import PROMPT_GIL_HANDOFF
from app.mesh_scale import ScaleMemory, ScaleOffer, implausible
from app.render.clustering import cluster
from app.render.renderer import (
    FIRST_LEVEL_FACES,
    PREPARE_INLINE_FACES,
    MeshArrays,
    adopt_first_level,
    first_level_cluster,
    first_level_posed,
    palette_color,
)
from app.stopwatch import Stopwatch, split
from app.video.offline import added_records
from physics.geometry.decompose import DecompositionError, body_frame, decompose, needs_pieces
from physics.geometry.extremes import extreme_points
from physics.geometry.meshes import (
    Shape,
    builtin_shape,
    clean_triangles,
    mesh_properties,
    read_triangles,
    shape_from_mesh,
    shape_from_properties,
)
from physics.replay import Replay, load_replay, scripted
from physics.scene import BodyRecord, Scene, build_world
from physics.settings import DEFAULT_DENSITY, MAX_FACES

log = logging.getLogger("tumble")

MODE = "auto"      # solid if closed, else shell with a warning (docs/physics.md#thin-shells)
CLEARANCE = 0.02   # m between the floor and a dropped body's lowest hull point
GAP = 0.05         # m between neighbouring bodies dropped together
WALL_MARGIN = 0.01  # m kept between a dropped body and the container walls
SCENE_SUFFIX = ".toml"
_STOP = object()
_ONE_SPLIT = threading.Lock()  # convex decompositions one after the other (Loader._decompose)


def body_color(body_id: int) -> tuple[float, float, float]:
    """The renderer's default colour for a body id (linear RGB), as a record stores it."""
    return tuple(float(c) for c in palette_color(body_id))


@dataclass(frozen=True)
class _Outcome:
    """A result for the render thread: a record to register (or a scene that replaced all),
    a notification, and whether a requested file is finished (the progress count)."""

    record: BodyRecord | None = None
    scene: Path | None = None        # set: the scene was cleared and replaced by this file
    later: dict | None = None        # with scene: records of the bodies a replay will add
    message: str | None = None       # logged at INFO and shown
    warnings: tuple[str, ...] = ()
    file_done: bool = False
    offer: ScaleOffer | None = None  # a mesh of implausible size, held back for the user


class Loader:
    """Loads files on a worker thread; ``poll()`` applies the results on the render thread.

    state      the app's state (sim, bodies, notifications, loading count, scale offers)
    density    kg/m³ of dropped meshes; mode: inertia mode; max_faces: refuse larger meshes
    scales     the scale chosen for each mesh file (None: the user's memory file)
    """

    def __init__(self, state: AppState, *, density: float = DEFAULT_DENSITY, mode: str = MODE,
                 max_faces: int = MAX_FACES, scales: ScaleMemory | None = None):
        self.state = state
        self.density, self.mode, self.max_faces = density, mode, max_faces
        self.scales = ScaleMemory() if scales is None else scales
        self._jobs: queue.SimpleQueue = queue.SimpleQueue()
        self._results: queue.SimpleQueue = queue.SimpleQueue()
        self._shapes: dict[tuple, Shape] = {}  # worker only: one Shape per unchanged file
        # first levels of big meshes; it first loads the compiled code only a big mesh needs
        self._helper = ThreadPoolExecutor(1, thread_name_prefix="tumble-first-level")
        self._helper.submit(_load_big_mesh_code)
        self._worlds = 0  # worlds replaced by a replay (its ids start again at 0): _decompose
        self._replacing = threading.Lock()
        self._thread = threading.Thread(target=self._run, name="tumble-loader", daemon=True)
        self._thread.start()

    # ---- render thread --------------------------------------------------------------------
    def request(self, paths, drop_point=None, set_reset_point: bool = False) -> None:
        """Load ``paths`` (meshes and/or .toml scenes). drop_point (3,) m: world point on the
        floor under which meshes go (None → the container's centre). Scenes are applied first
        (the last one wins), then the meshes. set_reset_point: make the result what Reset
        restores (the files given at start-up)."""
        paths = [Path(os.fspath(p)) for p in paths]
        if not paths:
            return
        point = None if drop_point is None else np.asarray(drop_point, dtype=float).reshape(3)
        self.state.loading += len(paths)
        self._jobs.put((paths, point, set_reset_point))

    def poll(self) -> int:
        """Apply the outcomes ready now; returns how many. Call once a frame."""
        count = 0
        while True:
            try:
                outcome: _Outcome = self._results.get_nowait()
            except queue.Empty:
                return count
            count += 1
            state = self.state
            if outcome.scene is not None:
                state.bodies.clear()
                state.selected = None
                state.scene_path = outcome.scene
                state.later_records = dict(outcome.later or {})
            if outcome.record is not None:
                state.bodies[outcome.record.body_id] = outcome.record
            if outcome.offer is not None:
                state.scale_offers.append(outcome.offer)
            if outcome.message is not None:
                state.notifications.info(outcome.message)
            for warning in outcome.warnings:
                state.notifications.warning(warning)
            if outcome.file_done:
                state.loading = max(0, state.loading - 1)

    def choose_scale(self, offer: ScaleOffer, scale: float) -> None:
        """The user's answer to ``offer``: remember ``scale`` for the file and load it with it
        where it was dropped (1 keeps the file's size)."""
        if offer in self.state.scale_offers:
            self.state.scale_offers.remove(offer)
        self.scales.remember(offer.path, scale)
        log.info("scale %g chosen for %s (remembered for this file)", scale, offer.name)
        self.request([offer.path], drop_point=offer.point)

    def close(self, timeout: float = 5.0) -> None:
        """Stop the worker after the file it is reading (files still queued are dropped)."""
        self._jobs.put(_STOP)
        self._thread.join(timeout)
        self._helper.shutdown(wait=False, cancel_futures=True)

    # ---- worker thread --------------------------------------------------------------------
    def _run(self) -> None:
        while True:
            job = self._jobs.get()
            if job is _STOP:
                return
            paths, point, set_reset_point = job
            try:
                self._load(paths, point, set_reset_point)
            except Exception:  # a bug here must not kill the worker: report, keep serving
                log.exception("loader: unexpected error while loading %s",
                              ", ".join(p.name for p in paths))
                for path in paths:
                    self._results.put(_Outcome(message=f"rejected {path.name}: unexpected "
                                               "error while loading (see the log)",
                                               file_done=True))

    def _load(self, paths: list[Path], point, set_reset_point: bool) -> None:
        scenes = [p for p in paths if p.suffix.lower() == SCENE_SUFFIX]
        meshes = [p for p in paths if p.suffix.lower() != SCENE_SUFFIX]
        last: Future | None = None
        for path in scenes:
            last = self._open_scene(path) or last
        shapes = []
        for path in meshes:
            shape = self._read(path, self._shape)
            if shape is None:
                continue
            if self.scales.get(path) is None and implausible(shape.extent):
                self._results.put(_Outcome(
                    offer=ScaleOffer(path, shape.name, shape.extent, point), file_done=True,
                    message=f"held back {shape.name}: {shape.extent:.4g} m across; asking "
                            "for its scale"))
                continue
            shapes.append(shape)
        if shapes:
            last = self._add_meshes(shapes, point)
        if set_reset_point and last is not None:
            self.state.sim.set_reset_point()

    def _read(self, path: Path, reader):
        """reader(path), or None after sending the rejection for an unusable file."""
        try:
            return reader(path)
        except (ValueError, OSError) as e:  # MeshError, SceneError, InertiaError, I/O errors
            reason = _reason(str(e), path)
        except Exception as e:  # a loader bug on a strange file: still only this file fails
            log.exception("loader: unexpected error reading %s", path)
            reason = f"unexpected {type(e).__name__}: {e}"
        self._results.put(_Outcome(message=f"rejected {path.name}: {reason}", file_done=True))
        return None

    def _shape(self, path: Path) -> Shape:
        stat = path.stat() if path.is_file() else None
        scale = self.scales.get(path) or 1.0
        key = (os.path.abspath(path), stat and (stat.st_mtime_ns, stat.st_size), scale)
        shape = self._shapes.get(key) if stat else None
        if shape is None:
            shape = self._load_shape(path, scale)
            if stat:
                self._shapes[key] = shape
        return shape

    def _load_shape(self, path: Path, scale: float) -> Shape:
        with PROMPT_GIL_HANDOFF:
            return self._load_stages(path, scale)

    def _load_stages(self, path: Path, scale: float) -> Shape:
        """``load_shape``, with a big mesh's first drawn level made on a helper thread while
        the mass properties and the hull are computed (its clustering needs only the clean
        mesh, and all of them run compiled code without the GIL), so the body is drawn as soon
        as it simulates. A big mesh's stages are timed in the log (``timed <file>: read …``)."""
        watch = Stopwatch()
        triangles = read_triangles(path, max_faces=self.max_faces)
        watch.lap("read")
        mesh = clean_triangles(triangles, scale)
        watch.lap("clean")
        if len(mesh.faces) <= PREPARE_INLINE_FACES:
            return shape_from_mesh(mesh, density=self.density, mode=self.mode)
        # the first level's clustering needs only the clean mesh: it runs beside the mass
        # properties and the hull (the helper takes its jobs in order)
        clustered = self._helper.submit(_timed, first_level_cluster, mesh.vertices, mesh.faces)
        props, warnings = mesh_properties(mesh, density=self.density, mode=self.mode)
        watch.lap("mass")
        arrays = self._helper.submit(_first_level_posed, mesh.name, clustered, props)
        shape = shape_from_properties(mesh, props, warnings)
        watch.lap("hull")
        log.info("timed %s: %s", mesh.name, watch.summary())
        # not waited for: the body simulates as soon as it has its hull (should the renderer
        # want the level first, it makes one itself)
        arrays.add_done_callback(lambda done: self._adopt(shape, done))
        return shape

    @staticmethod
    def _adopt(shape: Shape, done: Future) -> None:
        if done.cancelled() or done.exception() is not None:
            return  # the renderer makes the level itself
        adopt_first_level(shape, done.result())

    def _add_meshes(self, shapes: list[Shape], point) -> Future:
        sim = self.state.sim
        container = sim.latest().container_size
        floor = 0.0 if point is None else float(point[1])
        centre = np.zeros(2) if point is None else np.asarray(point, dtype=float)[[0, 2]]
        future = None
        for shape, xz in zip(shapes, spread(shapes, centre, container)):
            future = sim.add_body(shape.body_def(drop_position(shape, xz, floor)))
            future.add_done_callback(lambda f, s=shape: self._added(f, s))
        return future

    def _added(self, future: Future, shape: Shape) -> None:
        """On the physics thread, once the body exists (or the command failed)."""
        if future.exception() is not None:
            self._results.put(_Outcome(message=f"rejected {shape.name}: {future.exception()}",
                                       file_done=True))
            return
        body_id = future.result()
        record = BodyRecord(body_id, shape.name, shape.source, body_color(body_id), shape,
                            self.mode)
        p = shape.properties
        scaled = f", scale={shape.scale:g}" if shape.scale != 1.0 else ""
        self._results.put(_Outcome(
            record=record,
            message=f"loaded {shape.name}: mass={p.mass:.6g} kg, mode={p.mode}{scaled}",
            warnings=shape.warnings, file_done=True))
        self._start_decomposing(record)

    def _start_decomposing(self, record: BodyRecord, dropped: bool = True) -> None:
        """A mesh body collides as its hull at once, and as its convex pieces once they are
        found: on a thread of its own (the split runs in a child process; the thread waits for
        it), so neither the physics nor the loader waits (docs/physics.md#convex-decomposition).
        dropped: a mesh the user dropped (always told how it collides), else a scene's body
        (told only when it had to be split: an opened scene's cached meshes would fill the
        screen with notices)."""
        shape = record.shape
        if shape.kind is None and shape.properties.mode == "solid" and (
                record.collision != "hull"):
            threading.Thread(target=self._decompose, args=(record, dropped, self._worlds),
                             daemon=True, name="tumble-decompose").start()

    def _decompose(self, record: BodyRecord, dropped: bool, world: int) -> None:
        """Split a mesh into convex pieces as its collision mode says (``auto``: if its hull is
        clearly larger than it), and make its body collide as them; says so in notifications
        ("decomposing…" only when the split is not in the cache). One split at a time: each
        keeps every core busy. ``world``: the count of worlds replaced when the body was made;
        a replay opened since numbers its bodies afresh, so the pieces would go to another
        body of the same id."""
        shape, p = record.shape, record.shape.properties
        if not needs_pieces(record.collision, shape.vertices, p.volume):
            return
        with _ONE_SPLIT:
            try:
                found = decompose(shape.name, shape.vertices, shape.faces, p.volume,
                                  on_split=lambda: self._results.put(
                                      _Outcome(message=f"decomposing {shape.name}…")))
            except DecompositionError as e:
                self._results.put(_Outcome(warnings=(str(e),)))
                return
        pieces = body_frame(found.pieces, p.center_of_mass, p.principal_axes)
        with self._replacing:
            if world != self._worlds:
                return
            done = self.state.sim.set_pieces(record.body_id, pieces)
        message = (f"{shape.name} collides as {len(pieces)} pieces "
                   f"({100 * found.volume_excess:+.0f} % volume)")
        if found.cached and not dropped:
            log.info("%s (cached)", message)
            message = None
        # a body removed meanwhile refuses the pieces: nothing to say then
        done.add_done_callback(lambda f: f.exception() is None and self._results.put(_Outcome(
            record=dataclasses.replace(record, pieces=pieces),
            message=message)))

    def _open_scene(self, path: Path) -> Future | None:
        """Validate and build the scene, then replace the simulation's contents with it (a
        replay: see ``_open_replay``)."""
        built = self._read(path, _build_scene)
        if built is None:
            return None
        scene, records, replay = built
        if replay is not None:
            self._open_replay(path, replay)
            return None
        sim = self.state.sim
        sim.clear().add_done_callback(lambda f: self._results.put(_Outcome(scene=path)))
        for what, future in (("container size", sim.set_container(scene.container_size)),
                             ("gravity", sim.set_gravity(scene.gravity)),
                             ("restitution", sim.set_restitution(scene.restitution)),
                             ("friction", sim.set_friction(scene.friction)),
                             ("hz", sim.set_hz(scene.hz))):
            future.add_done_callback(lambda f, what=what: self._refused(f, path, what))
        bodies = [dataclasses.replace(
                      record.shape.body_def(entry.position, entry.orientation, entry.velocity,
                                            entry.angular_velocity, restitution=entry.restitution,
                                            friction=entry.friction),
                      static=entry.static)
                  for entry, record in zip(scene.bodies, records)]
        # one command: the joints are made with their bodies, before any step
        sim.add_group(bodies, [entry.joint for entry in scene.joints]).add_done_callback(
            lambda f: self._scene_bodies(f, records))
        done = sim.set_reset_point()
        count = f"{len(records)} bod{'y' if len(records) == 1 else 'ies'}"
        message = (f"opened scene {path.name}: {count}" if records else
                   f"opened scene {path.name}: it has no bodies — drop mesh files on the "
                   "window to add some")
        done.add_done_callback(lambda f: self._results.put(_Outcome(message=message,
                                                                    file_done=True)))
        return done

    def _open_replay(self, path: Path, replay) -> None:
        """A replay replaces the world with the one ``tumble simulate`` builds of its scene
        (meshes split into their pieces at once), paused at its start; the physics thread
        applies its commands at their steps as it runs (``Simulation.open``). Bodies its
        commands add are drawn as they collide, as ``tumble record`` draws them."""
        built = self._read(path, lambda p: build_world(replay.scene))
        if built is None:
            return
        world, records = built
        records = [dataclasses.replace(r, color=r.color or body_color(r.body_id))
                   for r in records]
        later = added_records(len(records), replay.commands)
        count = f"{len(replay.scene.bodies)} bod{'y' if len(replay.scene.bodies) == 1 else 'ies'}"
        message = (f"opened replay {path.name}: {count}, {len(replay.commands)} commands; "
                   "paused at its start (Space plays it)")

        def opened(future: Future) -> None:
            if future.exception() is not None:  # build_world accepted it, so this is a bug
                self._results.put(_Outcome(message=f"rejected {path.name}: "
                                           f"{future.exception()}", file_done=True))
                return
            self._results.put(_Outcome(scene=path, later=later))
            for record in records:
                self._results.put(_Outcome(record=record))
            self._results.put(_Outcome(message=message, file_done=True))
        with self._replacing:  # no body of the world replaced gets its pieces after this
            self._worlds += 1
            future = self.state.sim.open(world, replay.scene.hz, scripted(replay))
        future.add_done_callback(opened)

    def _refused(self, future: Future, path: Path, what: str) -> None:
        """On the physics thread: a scene value the simulation refused is shown, not only
        logged (the scene file is checked against the same limits, so this is a safety net)."""
        if future.exception() is not None:
            self._results.put(_Outcome(warnings=(
                f"{path.name}: the simulation refused its {what}: {future.exception()}",)))

    def _scene_bodies(self, future: Future, records: list[BodyRecord]) -> None:
        if future.exception() is not None:  # build_world accepted them, so this is a bug
            log.error("the scene's bodies were refused: %s", future.exception())
            return
        for body_id, record in zip(future.result(), records):
            record = dataclasses.replace(record, body_id=body_id,
                                         color=record.color or body_color(body_id))
            self._results.put(_Outcome(record=record))
            self._start_decomposing(record, dropped=False)


def _load_big_mesh_code() -> None:
    """Run the compiled kernels that only a big mesh needs (the first level's clustering, the
    hull's grid search) once on a small mesh, with the array types a drop gives them: loading
    them from numba's cache takes 0.2–1.2 s, which the first big drop would otherwise wait."""
    mesh = builtin_shape("sphere")  # read-only arrays, as a cleaned mesh's
    first_level_cluster(mesh.vertices, mesh.faces)
    vertices = mesh.vertices - mesh.vertices.mean(axis=0)
    cluster(vertices, mesh.faces, FIRST_LEVEL_FACES // 4)  # as prepare_mesh calls it
    extreme_points(vertices, np.eye(3))


def _timed(function, *args) -> tuple:
    """(function(*args), its Lap)."""
    watch = Stopwatch()
    result = function(*args)
    return result, watch.lap("first level")


def _first_level_posed(name: str, clustered: Future, props) -> MeshArrays:
    """The first level from its clustering (done by now: the helper runs its jobs in order),
    its time in the log (``timed the first level of <file>: …``)."""
    coarse, lap = clustered.result()
    watch = Stopwatch()
    arrays = first_level_posed(coarse, props)
    pose = watch.lap("first level")
    log.info("timed the first level of %s: first level %.2f s (%s)", name, lap.wall + pose.wall,
             split([lap, pose]))
    return arrays


def _build_scene(path: Path) -> tuple[Scene, list[BodyRecord], Replay | None]:
    """Read and validate the scene and load every shape (SceneError for any problem); a
    replay (a scene with commands) is only read: ``Loader._open_replay`` builds it."""
    replay = load_replay(path)
    if replay.commands:
        return replay.scene, [], replay
    _, records = build_world(replay.scene, split=False)  # pieces: later (Loader._decompose)
    return replay.scene, records, None


def drop_position(shape: Shape, xz, floor: float = 0.0) -> np.ndarray:
    """Where the mesh origin goes (identity orientation) so the centre of mass is above
    ``xz`` (2,) m and the lowest hull point is ``CLEARANCE`` above ``floor`` (y, m)."""
    com = shape.properties.center_of_mass
    lowest = (com[1] - shape.radius if shape.radius > 0
              else float(np.min(_hull_in_mesh_frame(shape)[:, 1])))
    return np.array([xz[0] - com[0], floor + CLEARANCE - lowest, xz[1] - com[2]])


def spread(shapes: list[Shape], centre, container_size) -> np.ndarray:
    """(n, 2) x, z of the centres of mass of shapes dropped together around ``centre`` (2,):
    a square-ish grid with cells wide enough for the widest shape, each kept inside the
    container (3,) m (None: no walls)."""
    radii = np.array([horizontal_radius(s) for s in shapes])
    n = len(shapes)
    cols = math.ceil(math.sqrt(n))
    rows = math.ceil(n / cols)
    cell = 2.0 * radii.max() + GAP
    k = np.arange(n)
    offsets = np.column_stack(((k % cols - (cols - 1) / 2) * cell,
                               (k // cols - (rows - 1) / 2) * cell))
    xz = np.asarray(centre, dtype=float) + offsets
    if container_size is not None:
        half = np.asarray(container_size, dtype=float)[[0, 2]] / 2
        room = np.maximum(half[None] - radii[:, None] - WALL_MARGIN, 0.0)
        xz = np.clip(xz, -room, room)
    return xz


def horizontal_radius(shape: Shape) -> float:
    """m: how far the collision hull reaches from the centre of mass across the floor plane."""
    if shape.radius > 0:
        return shape.radius
    offsets = _hull_in_mesh_frame(shape) - shape.properties.center_of_mass
    return float(np.max(np.hypot(offsets[:, 0], offsets[:, 2])))


def _hull_in_mesh_frame(shape: Shape) -> np.ndarray:
    """(k,3) hull vertices in the mesh's own frame: mesh = com + A·body (A = principal axes)."""
    return shape.properties.center_of_mass + shape.hull @ shape.mesh_to_body_rotation.T


def _reason(message: str, path: Path) -> str:
    """The error message without the file name it starts with (the log line names the file);
    ``file:12:5: …`` becomes ``line 12, column 5: …``."""
    for prefix in (str(path), os.path.abspath(path), path.name):
        if message.startswith(prefix):
            rest = message[len(prefix):]
            where = re.match(r":(\d+)(?::(\d+))?: ", rest)
            if where:
                column = f", column {where[2]}" if where[2] else ""
                return f"line {where[1]}{column}: {rest[where.end():]}"
            if rest.startswith(": "):
                return rest[2:]
    return message
