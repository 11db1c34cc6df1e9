"""A scripted 20 s run that sends every kind of command the app sends, at fixed steps: drops
(bodies and a jointed group), throws and grabs, deletions, materials, gravity, the container,
the solver, held forces, joints made, edited and removed, a state set, the rate changed."""

import numpy as np

from physics.constraints.joint import WORLD, JointDef
from physics.model import BodyDef, WorldDef
from physics.replay import save_replay
from physics.scene import BodyEntry, Scene, build_world
from physics.simulation import Simulation
from physics.world import World
from tests.physics.bodies import box_body

HZ = 240
SECONDS = 20

SCENE = Scene(
    gravity=(0.0, -9.81, 0.0), hz=HZ, restitution=0.4, friction=0.6,
    container_size=(4.0, 3.0, 4.0),
    bodies=(BodyEntry(shape="box", size=(0.4, 0.3, 0.2), position=(0.0, 0.3, 0.0),
                      angular_velocity=(0.0, 4.0, 0.0)),
            BodyEntry(shape="box", size=(0.4, 0.3, 0.2), position=(0.6, 1.0, 0.2)),
            BodyEntry(shape="cylinder", size=(0.1, 0.3), position=(-0.7, 1.4, -0.3),
                      velocity=(1.0, 0.0, 0.5), angular_velocity=(3.0, 1.0, 2.0)),
            BodyEntry(shape="sphere", size=(0.1,), position=(0.2, 2.0, -0.6),
                      velocity=(-1.0, 0.0, 1.0))))


def ball(position, radius=0.1, **kwargs) -> BodyDef:
    moment = 0.4 * radius**2
    return BodyDef(mass=1.0, principal_moments=[moment] * 3, radius=radius, position=position,
                   **kwargs)


def start_world() -> World:
    """Three boxes and a ball in the default container."""
    world = World(WorldDef(restitution=0.4, friction=0.6))
    world.add_body(box_body((0.4, 0.3, 0.2), position=[0.0, 0.3, 0.0],
                            angular_velocity=[0.0, 4.0, 0.0]))
    world.add_body(box_body((0.4, 0.3, 0.2), position=[0.6, 1.0, 0.2]))
    world.add_body(box_body((0.3, 0.2, 0.1), position=[-0.7, 1.4, -0.3],
                            velocity=[1.0, 0.0, 0.5], angular_velocity=[3.0, 1.0, 2.0]))
    world.add_body(ball([0.2, 2.0, -0.6], velocity=[-1.0, 0.0, 1.0]))
    return world


def script(sim: Simulation) -> list[tuple[int, object]]:
    """(step, send) pairs: each ``send()`` submits commands to ``sim``, in step order."""
    pair = [box_body((0.3, 0.2, 0.1), position=[1.0, 1.5, 1.0]),
            box_body((0.3, 0.2, 0.1), position=[1.0, 1.0, 1.0])]
    hinge = JointDef("hinge", 0, 1, anchor=np.array([1.0, 1.25, 1.0]),
                     axis=np.array([0.0, 0.0, 1.0]))
    return [
        (30, lambda: sim.add_body(ball([0.0, 2.5, 0.1], velocity=[0.5, 0.0, 0.0]))),     # id 4
        (200, lambda: sim.apply_impulse(1, [0.0, 4.0, 1.0], [0.62, 1.0, 0.25])),         # throw
        (420, lambda: sim.set_restitution(0.8)),
        (421, lambda: sim.set_friction(0.2, 2)),
        (600, lambda: sim.add_group(pair, [hinge])),                                     # 5, 6
        (700, lambda: sim.set_grab(0, [0.1, 0.0, 0.0], [0.0, 1.5, 0.0], 200.0, 5.0)),
        (760, lambda: sim.set_grab(0, [0.1, 0.0, 0.0], [0.5, 1.8, 0.3], 200.0, 5.0)),
        (800, lambda: (sim.clear_grab(), sim.apply_impulse(0, [3.0, 2.0, 0.0]))),       # throw
        (960, lambda: sim.set_gravity([1.0, -5.0, 0.0])),
        (1100, lambda: sim.remove_body(3)),
        (1150, lambda: sim.remove_body(5)),
        (1200, lambda: sim.set_body_material(1, restitution=0.9, friction=None)),
        (1300, lambda: sim.add_joint(JointDef("ball", 0, WORLD,
                                              anchor=np.array([0.0, 1.6, 0.0])))),
        (1400, lambda: sim.edit_joint(1, break_force=1e6)),
        (1500, lambda: sim.remove_joint(1)),
        (1700, lambda: sim.set_hz(120)),
        (1900, lambda: sim.set_external_force(2, [0.0, 12.0, 0.0], [0.0, 0.1, 0.0])),
        (2000, lambda: sim.set_solver_iterations(20)),
        (2200, lambda: sim.set_hz(240)),
        (2400, lambda: sim.set_gravity([0.0, -9.81, 0.0])),
        (2600, lambda: sim.set_body_state(4, position=[0.0, 2.0, 0.0], velocity=[0.0, 1.0, 0.0],
                                          angular_velocity=[5.0, 0.0, 0.0])),
        (2800, lambda: sim.set_external_force(2)),
        (3000, lambda: sim.set_container([5.0, 3.0, 5.0])),
        (3300, lambda: sim.remove_body(6)),
        (3500, lambda: sim.add_body(box_body((0.4, 0.3, 0.2), position=[0.0, 2.5, 0.0]))),
        (4000, lambda: sim.set_restitution(0.3, 7)),
    ]


def scripted_run(sim: Simulation, record_every: int = 60,
                 total: int = HZ * SECONDS) -> dict[int, World]:
    """Run the script on ``sim`` offline to step ``total`` (HZ·SECONDS unless told; fewer
    steps of the 120 Hz stretch do not change the count: it counts steps); returns copies of
    the world after each ``record_every``-th step and at each command's step, before that
    step's commands."""
    import copy

    events = [(step, send) for step, send in script(sim) if step <= total]
    marks = sorted(set(range(0, total + 1, record_every)) | {s for s, _ in events})
    recorded, k = {}, 0
    for mark in marks:
        sim.run_steps(mark - sim.latest().step)
        recorded[mark] = copy.deepcopy(sim.world)
        while k < len(events) and events[k][0] == mark:
            events[k][1]()
            k += 1
    sim.run_steps(0)  # the last commands applied
    for future_error in sim.latest().errors:
        raise AssertionError(f"a scripted command failed: {future_error}")
    return recorded


def saved_replay(folder) -> tuple:
    """The script run on SCENE and saved as a replay in ``folder``: (the file's path, the
    worlds recorded live every 200 steps and at each command's step). One run serves the
    replay tests and the command line's (tests/conftest.py ``scripted_replay``)."""
    world, _ = build_world(SCENE)
    sim = Simulation(world, hz=SCENE.hz)
    recorded = scripted_run(sim, record_every=200)
    path = folder / "run.toml"
    save_replay(path, SCENE, sim.history)
    return path, recorded
