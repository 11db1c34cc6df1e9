"""The history (physics/history.py): a checkpoint and the logged commands give back any past
step bit for bit; the ring holds the poses; memory stays bounded; a restore makes a branch."""

import copy

import numpy as np
import pytest

from physics.history import QUAT_SCALE, History
from physics.settings import CHECKPOINT_INTERVAL, EARLY_BYTES, RING_HZ
from physics.simulation import Simulation
from tests.physics.scripted import HZ, SECONDS, scripted_run, start_world
from tests.physics.world_compare import assert_same_world


@pytest.fixture(scope="module")
def scripted():
    """The scripted 20 s run: (its simulation, the worlds recorded along it), checkpoints by
    sim time alone (not sooner on a slow machine), so where they fall does not vary."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr("physics.history.CHECKPOINT_WORK", float("inf"))
        sim = Simulation(start_world(), hz=HZ)
        return sim, scripted_run(sim)


@pytest.fixture(scope="module")
def short():
    """The same scripted run again with a history of 5 s: (its simulation, its last world)."""
    sim = Simulation(start_world(), hz=HZ)
    sim.history.set_seconds(5.0)
    return sim, scripted_run(sim, record_every=HZ * SECONDS)[HZ * SECONDS]


def test_same_commands_at_same_steps_give_the_same_bits(scripted, short):
    """And the history's length changes nothing of the physics."""
    _, recorded = scripted
    assert_same_world(short[1], recorded[HZ * SECONDS])


def test_every_recorded_step_comes_back_bit_for_bit(scripted):
    sim, recorded = scripted
    history = sim.history
    checkpoint_steps = {c.step for c in history._checkpoints}
    # steps right at, just before and just after checkpoints and commands, and every 1.25 s
    commands = {c.step for c in history.commands()}
    chosen = sorted(s for s in recorded
                    if s % 300 == 0 or s in commands or s + 1 in checkpoint_steps
                    or s in checkpoint_steps)
    assert len(commands) >= 24 and len(chosen) >= 40
    for step in chosen:
        world, _ = history.world_at(step)
        try:
            assert_same_world(world, recorded[step])
        except AssertionError as e:
            raise AssertionError(f"step {step}: {e}") from None


def test_the_log_holds_every_command_kind_with_its_step(scripted):
    sim, _ = scripted
    names = {c.name for c in sim.history.commands()}
    assert names >= {"add_body", "add_group", "apply_impulse", "set_restitution", "set_friction",
                     "set_grab", "clear_grab", "set_gravity", "remove_body", "set_body_material",
                     "add_joint", "edit_joint", "set_hz", "set_external_force",
                     "set_solver_iterations", "remove_joint", "set_body_state", "set_container"}
    steps = [c.step for c in sim.history.commands()]
    assert steps == sorted(steps) and steps[0] == 30 and steps[-1] == 4000


def test_checkpoints_are_one_second_of_sim_time_apart(scripted):
    sim, _ = scripted
    times = np.array([c.time for c in sim.history._checkpoints])
    gaps = np.diff(times)
    assert len(times) >= SECONDS and np.all(gaps > CHECKPOINT_INTERVAL - 1e-9)
    assert np.all(gaps < CHECKPOINT_INTERVAL + 1.0 / 120 + 1e-9)  # one step at most, at 120 Hz


def slow_start():
    """A world and its history after 8 steps that cost 0.3 s of wall time each and a cheap
    one: checkpoints at steps 0 and, early, 2, 4, 6 and 8."""
    world = start_world()
    history = History(world, 0, HZ)
    for step in range(1, 9):
        world.step(1.0 / HZ)
        history.after_step(world, step, HZ, cost=0.3)
    assert [c.step for c in history._checkpoints] == [0, 2, 4, 6, 8]
    world.step(1.0 / HZ)
    history.after_step(world, 9, HZ, cost=0.0)  # a cheap step: the interval rules again
    assert len(history._checkpoints) == 5
    return world, history


def test_slow_steps_bring_the_next_checkpoint_forward():
    """Steps that cost 0.3 s of wall time each: a checkpoint every second step (0.6 s of
    work ≥ CHECKPOINT_WORK), so an exact seek never re-runs much more than that."""
    slow_start()


def run_cheap_steps(world, history, until: int) -> None:
    for step in range(10, until):
        world.step(1.0 / HZ)
        history.after_step(world, step, HZ)


def test_early_checkpoints_older_than_early_kept_stay_while_they_fit_their_bytes():
    """A big pile's falling seconds stay quick to seek after EARLY_KEPT (bench/replay.py's
    1 000 cubes: an exact seek into the first second re-ran all of it, 4.3 s, once its early
    checkpoints were dropped); their bytes are bounded by EARLY_BYTES a body a second."""
    world, history = slow_start()
    run_cheap_steps(world, history, 12 * HZ)
    kept = history._checkpoints
    assert [c.step for c in kept if c.early] == [2, 4, 6, 8]
    assert [c.step for c in kept] == [0, 2, 4, 6, 8, *range(8 + HZ, 12 * HZ, HZ)]
    assert sum(len(c.packed) for c in kept if c.early) <= (
        EARLY_BYTES * len(world.ids) * history.seconds)


def test_early_checkpoints_beyond_their_bytes_go_oldest_first(monkeypatch):
    world, history = slow_start()
    run_cheap_steps(world, history, 2 * HZ)  # the early ones all within EARLY_KEPT: all kept
    assert [c.step for c in history._checkpoints if c.early] == [2, 4, 6, 8]
    one = max(len(c.packed) for c in history._checkpoints if c.early)
    # room for one and a half of them a body a second: the newest old early one stays
    monkeypatch.setattr("physics.history.EARLY_BYTES",
                        1.5 * one / (len(world.ids) * history.seconds))
    run_cheap_steps(world, history, 12 * HZ)
    assert [c.step for c in history._checkpoints if c.early] == [8]


def test_ring_frames_hold_the_poses_at_display_rate(scripted):
    sim, recorded = scripted
    frames = sim.history.frames()
    times = np.array([f.time for f in frames])
    assert np.all(np.diff(times) > 0)
    assert np.median(np.diff(times)) == pytest.approx(1.0 / RING_HZ, rel=1e-6)
    for frame in frames:
        if frame.step in recorded and frame.step % 600 == 0:
            world = recorded[frame.step]
            assert np.array_equal(frame.ids, world.ids)
            extent = np.ptp(world.state.pos, axis=0)
            np.testing.assert_allclose(frame.positions(), world.state.pos, rtol=0,
                                       atol=extent.max() / 65535 + 1e-12)
            # a quaternion and its negative are the same turn; int16 steps are 1 / 32767
            q = frame.orientations()
            dots = np.abs(np.sum(q * world.state.quat, axis=1))
            assert np.all(dots > 1.0 - 2.0 / QUAT_SCALE)
    nearest = sim.history.frame_at(10.004)
    assert abs(nearest.time - 10.004) <= 0.5 / RING_HZ + 1e-9


def test_step_at_maps_sim_time_to_steps_across_rate_changes(scripted):
    sim, _ = scripted
    history = sim.history
    for frame in history.frames()[::97]:
        assert history.step_at(frame.time) == frame.step


def test_a_short_history_keeps_only_its_seconds_and_still_seeks_exactly(scripted, short):
    _, recorded = scripted
    sim, _ = short
    first, last_step, last_time = sim.history.span()
    # trimmed at each checkpoint: it keeps the one at or before 5 s back
    assert last_time - 5.0 - 2 * CHECKPOINT_INTERVAL <= first.time <= last_time - 5.0
    assert all(c.step >= first.step for c in sim.history.commands())
    assert sim.history.frames()[0].time >= first.time
    for step in (first.step, first.step + 1, last_step - 100, last_step):
        if step in recorded:
            assert_same_world(sim.history.world_at(step)[0], recorded[step])
    with pytest.raises(ValueError, match="outside the history"):
        sim.history.world_at(first.step - 1)


def test_memory_stays_bounded_while_the_run_goes_on(monkeypatch):
    """Histories of 3 s and 6 s over 24 s of 60 bodies: each stops growing once full, and what
    the longer one holds more is what a second of history costs a body (the model, kept once
    however long the history, is not part of that cost; checkpoints by sim time alone: early
    ones, on a loaded machine, come and go with the load)."""
    from tests.physics.bodies import box_body

    monkeypatch.setattr("physics.history.CHECKPOINT_WORK", float("inf"))
    full = {}
    for seconds in (3.0, 6.0):
        world = start_world()
        for k in range(60):
            position = [-1.5 + 0.5 * (k % 7), 0.3 + 0.3 * (k // 7), -1.5 + 0.4 * (k % 5)]
            world.add_body(box_body((0.3, 0.2, 0.1), position=position))
        sim = Simulation(world, hz=HZ)
        sim.history.set_seconds(seconds)
        sizes = []
        for _ in range(8):
            sim.run_steps(3 * HZ)
            sizes.append(sim.history.nbytes())
        assert max(sizes[3:]) <= 1.1 * min(sizes[3:])
        span = sim.history.span()
        assert span[2] - span[0].time <= seconds + 1.0 + 1e-9
        full[seconds] = sizes[-1]
    per_body_second = (full[6.0] - full[3.0]) / (64 * 3.0)
    assert 0 < per_body_second < 1_600  # bytes: 100 MB hold a minute of 1 000 bodies at 1 666


def test_five_minutes_of_500_bodies_stay_within_the_bound(monkeypatch):
    """500 boxes dropped in a heap, 5 minutes of sim time with the default 60 s history: the
    history never holds more than 100 MB per minute of 1 000 bodies allow (1 666 bytes a body
    a second), and stops growing once it is full; once the heap rests, its ring frames share
    their arrays. At a 60 Hz physics rate, which the ring's rate matches, to keep the test
    short."""
    from tests.physics.bodies import box_body

    monkeypatch.setattr("physics.history.CHECKPOINT_WORK", float("inf"))
    world = start_world()
    for k in range(500):
        position = [-1.8 + 0.45 * (k % 9), 0.2 + 0.25 * (k // 45), -1.8 + 0.45 * (k // 9 % 5)]
        world.add_body(box_body((0.2, 0.15, 0.1), position=position))
    sim = Simulation(world, hz=60.0)
    assert sim.history.seconds == 60.0
    bound = 100e6 / (1000 * 60.0) * len(world.ids) * sim.history.seconds
    sizes = []
    for _ in range(30):
        sim.run_steps(600)
        sizes.append(sim.history.nbytes())
    assert sim.latest().time == pytest.approx(300.0)
    assert max(sizes) <= bound, [round(size / 1e6, 1) for size in sizes]
    assert max(sizes[8:]) <= 1.05 * max(sizes[:8])  # full after 61 s: no growth after
    frames = sim.history.frames()[-60:]
    assert len({id(frame.pos) for frame in frames}) == 1  # at rest: one array for a second


def test_checkpoints_share_the_model_while_no_command_changes_it(monkeypatch):
    monkeypatch.setattr("physics.history.CHECKPOINT_WORK", float("inf"))
    sim = Simulation(start_world(), hz=HZ)
    sim.run_steps(3 * HZ)
    models = {id(c.model) for c in sim.history._checkpoints}
    assert len(sim.history._checkpoints) == 4 and len(models) == 1
    sim.set_restitution(0.9)
    sim.run_steps(2 * HZ)
    first, *_, last = sim.history._checkpoints
    assert last.model is not first.model
    assert last.world().model.settings.restitution == 0.9
    assert first.world().model.settings.restitution == 0.4


def test_restore_goes_back_and_running_on_makes_a_new_branch(scripted):
    _, recorded = scripted
    sim = Simulation(start_world(), hz=HZ)
    scripted_run(sim, record_every=HZ * SECONDS, total=2400)  # past 1500 is enough
    sim.restore(1500)
    snap = sim.run_steps(0)
    assert snap.step == 1500 and snap.paused
    assert_same_world(sim.world, recorded[1500])
    # the old future is gone: the history ends here, its commands from 1500 on dropped
    _, last_step, _ = sim.history.span()
    assert last_step == 1500 and max(c.step for c in sim.history.commands()) < 1500
    # a new branch: gravity upward this time, and the history follows it exactly
    sim.set_gravity([0.0, 9.81, 0.0])
    sim.run_steps(2 * HZ)
    branch = copy.deepcopy(sim.world)
    assert not np.array_equal(branch.state.pos, recorded[1500 + 2 * HZ].state.pos)
    assert_same_world(sim.history.world_at(1500 + 2 * HZ)[0], branch)


def test_reset_starts_the_history_again():
    sim = Simulation(start_world(), hz=HZ)
    sim.run_steps(2 * HZ)
    sim.set_gravity([0.0, -1.0, 0.0])
    sim.run_steps(HZ)
    sim.reset()
    sim.run_steps(0)
    first, last_step, _ = sim.history.span()
    assert first.step == 0 and last_step == 0 and sim.history.commands() == []


def test_a_reader_never_sees_a_restarting_history_empty():
    """The render thread reads the span every frame while the physics thread restarts the
    history (a scene opened): it found it empty in between and the status file failed."""
    import threading

    world = start_world()
    history = History(world, 0, HZ)
    failures, done = [], threading.Event()

    def read():
        while not done.is_set():
            try:
                history.span()
            except IndexError as e:
                failures.append(e)

    reader = threading.Thread(target=read)
    reader.start()
    for _ in range(300):
        history.restart(world, 0, HZ)
    done.set()
    reader.join()
    assert not failures


def test_history_length_is_checked():
    history = History(start_world(), 0, HZ)
    for bad in (0, -1, 601, float("nan"), "long"):
        with pytest.raises(ValueError, match="history length"):
            history.set_seconds(bad)
    history.set_seconds(600)
    assert history.seconds == 600


def test_batches_keep_frames_and_checkpoints_on_the_steps_of_single_steps(monkeypatch):
    """The physics thread runs the steps up to the next ring frame or checkpoint as one batch
    (``steps_until_due``): the history it keeps is the one stepping one by one keeps."""
    monkeypatch.setattr("physics.history.CHECKPOINT_WORK", float("inf"))
    single_world, batch_world = start_world(), start_world()
    single, batched = History(single_world, 0, HZ), History(batch_world, 0, HZ)
    for step in range(1, 3 * HZ + 1):
        single_world.step(1.0 / HZ)
        single.after_step(single_world, step, HZ)
    step, sizes = 0, []
    while step < 3 * HZ:
        size = batched.steps_until_due(batch_world.state.time, 1.0 / HZ, 3 * HZ - step)
        batch_world.advance(1.0 / HZ, size)
        step += size
        sizes.append(size)
        batched.after_step(batch_world, step, HZ)
    assert max(sizes) == HZ // RING_HZ and len(sizes) == 3 * RING_HZ  # 4 steps a frame
    assert [f.step for f in batched.frames()] == [f.step for f in single.frames()]
    assert ([(c.step, c.time) for c in batched._checkpoints]
            == [(c.step, c.time) for c in single._checkpoints])
    assert len(single._checkpoints) == 4
