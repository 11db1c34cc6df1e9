"""The ImGui panel with a real Simulation stepped offline (run_steps, no thread), drawn headless
(EGL): every section, the actions behind its widgets, plots, scene saving, density edits."""

import dataclasses
import sys
import time

import numpy as np
import pyglet
import pytest
from pyglet.extlibs import png

from app.app_state import AppState
from app.panel import BEHIND_SHOWN_SECONDS, PANEL_WIDTH, History, LagIndicator, Panel, sections
from app.panel.overlays import TIMELINE_HEIGHT
from app.panel.sections import collision_rows
from app.panel.timeline import ExactMoments
from app.resources import asset_path
from physics.geometry.meshes import builtin_shape
from physics.model import BodyDef, WorldDef
from physics.scene import BodyRecord, build_world, load_scene, scene_from_snapshot
from physics.simulation import CommandError, Simulation
from physics.world import World
from tests.app.offscreen_ui import offscreen_ctx, offscreen_fbo, offscreen_ui  # noqa: F401
from tests.paths import REPO
from tests.physics.scenes import assert_same_scene

if "pyglet.window" not in sys.modules:
    # pyglet.window opens a hidden "shadow" window on import, which needs an X display; the
    # mouse constants do not (see test_imgui_gl.py).
    _shadow = pyglet.options["shadow_window"]
    pyglet.options["shadow_window"] = False
    from pyglet.window import mouse  # noqa: E402
    pyglet.options["shadow_window"] = _shadow
else:
    from pyglet.window import mouse

W, H = 1280, 720
CLEAR = (0.30, 0.36, 0.42)
ARTIFACTS = REPO / "artifacts"  # gitignored


def open_scene(name: str) -> tuple[AppState, Panel]:
    scene = load_scene(asset_path(f"scenes/{name}.toml"))
    world, records = build_world(scene)
    state = AppState(sim=Simulation(world, hz=scene.hz), bodies={r.body_id: r for r in records})
    return state, Panel(state)


def frame(ui, fbo, panel, size=(W, H)):
    """One UI frame of the panel over a plain background."""
    snapshot = panel.state.sim.latest()
    panel.record_plots(snapshot)
    ui.new_frame(size, 1 / 60)
    panel.draw(snapshot)
    fbo.use()
    fbo.clear(*CLEAR, 1.0)
    ui.render(fbo)


def click(ui, fbo, panel, x, y) -> None:
    """A left click at panel pixel (x, y) (y down) through pyglet-style events, a frame for
    each: hover, press, release."""
    ui.on_mouse_motion(x, H - y, 0, 0)
    frame(ui, fbo, panel)
    ui.on_mouse_press(x, H - y, mouse.LEFT, 0)
    frame(ui, fbo, panel)
    ui.on_mouse_release(x, H - y, mouse.LEFT, 0)
    frame(ui, fbo, panel)


def read_rgb(fbo, size=(W, H)) -> np.ndarray:
    w, h = size
    return np.frombuffer(fbo.read(components=3), np.uint8).reshape(h, w, 3)[::-1]


def settle(state: AppState, panel: Panel) -> None:
    """Apply queued commands (no step) and hand their results to the panel."""
    state.sim.run_steps(0)
    panel.process_results()


def row(snapshot, body_id) -> int:
    return int(np.flatnonzero(snapshot.ids == body_id)[0])


def test_every_section_with_each_body_selected_and_the_panel_png(ui, fbo):
    state, panel = open_scene("default")
    state.loading = 2
    state.show_help = True
    state.notifications.info("loaded t_handle.obj: mass=1.13 kg, mode=solid")
    state.notifications.warning("open_cup.obj: open surface; used shell inertia")
    state.notifications.error("rejected garbage.stl: not a mesh")
    panel.expand_all()
    for body_id in [None, *state.bodies]:
        state.selected = body_id
        state.sim.run_steps(24)
        frame(ui, fbo, panel)
        frame(ui, fbo, panel)
    img = read_rgb(fbo).astype(int)
    clear = np.round(np.array(CLEAR) * 255).astype(int)
    # the panel fills the right edge with the dark theme; the 3D view left of it is untouched
    # except for the centred help window, the toasts at its bottom right and the timeline
    panel_px = img[100:700, int(W - PANEL_WIDTH) + 4:W - 20].reshape(-1, 3)
    assert np.median(panel_px.sum(axis=1)) < 120
    assert np.abs(img[5:60, 5:300] - clear).max() <= 1
    toast_row = img[H - 40 - int(TIMELINE_HEIGHT), int(W - PANEL_WIDTH) - 200:
                    int(W - PANEL_WIDTH) - 20]
    assert np.abs(toast_row - clear).max() > 40  # the newest toast (red error card)
    assert toast_row[:, 0].mean() > toast_row[:, 2].mean() + 40
    # the timeline: a dark bar along the bottom of the 3D view, under the toasts
    timeline_row = img[H - 8 - int(TIMELINE_HEIGHT) // 2, 20:int(W - PANEL_WIDTH) - 20]
    assert np.median(timeline_row.sum(axis=1)) < 200


def test_restitution_slider_takes_effect_at_the_next_step(ui, fbo):
    state, panel = open_scene("bounce")
    frame(ui, fbo, panel)
    # the factored action the slider calls
    panel.set_restitution(0.9)
    state.sim.run_steps(1)
    assert state.sim.world.model.settings.restitution == 0.9
    assert state.sim.latest().restitution == 0.9
    # the real widget: a click at 80 % of the slider frame, through pyglet-style mouse events
    frame(ui, fbo, panel)
    (x0, y0), (x1, y1) = panel.item_rects["restitution"]
    x, y = x0 + 0.8 * (x1 - x0), (y0 + y1) / 2
    ui.on_mouse_motion(x, H - y, 0, 0)
    ui.on_mouse_press(x, H - y, mouse.LEFT, 0)
    for _ in range(3):
        frame(ui, fbo, panel)
    ui.on_mouse_release(x, H - y, mouse.LEFT, 0)
    frame(ui, fbo, panel)
    assert state.sim.world.model.settings.restitution == 0.9  # not before a step boundary
    state.sim.run_steps(1)
    assert state.sim.world.model.settings.restitution == pytest.approx(0.8, abs=0.04)
    # and friction through its action
    panel.set_friction(1.25)
    state.sim.run_steps(1)
    assert state.sim.world.model.settings.friction == 1.25


def test_a_refused_command_becomes_an_error_notification(ui, fbo):
    state, panel = open_scene("bounce")
    panel.set_restitution(1.5)
    panel.set_time_scale(0.25)
    settle(state, panel)
    texts = [n.text for n, _ in state.notifications.visible()]
    assert any("set restitution failed" in t and "between 0 and 1" in t for t in texts), texts
    assert state.sim.latest().restitution == 0.5  # rolled back, the rest applied
    assert state.sim.latest().time_scale == 0.25
    frame(ui, fbo, panel)  # the toast draws
    # a failed step (no command's future) is reported from the snapshot, once
    failed = dataclasses.replace(state.sim.latest(), errors=(
        CommandError(-1, 42, "step", "FloatingPointError: overflow (paused)"),))
    for _ in range(2):
        ui.new_frame((W, H), 1 / 60)
        panel.draw(failed)
        ui.render(fbo)
    texts = [n.text for n, _ in state.notifications.visible()]
    assert sum("step failed at step 42" in t and "overflow" in t for t in texts) == 1, texts


def test_history_keeps_the_last_seconds_in_a_ring_buffer():
    history = History(seconds=2.0, capacity=64)
    for k in range(1001):  # 10 s at 100 Hz, more samples than the buffer holds
        history.append(k / 100, 7, [k, k, 0, 0, 0, 0])
    t, values = history.series(7)
    spacing = 2.0 / 32  # seconds / (capacity / 2)
    assert 10.0 - spacing <= t[-1] <= 10.0
    assert t[0] >= t[-1] - 2.0 - 1e-9 and t[0] <= t[-1] - 2.0 + spacing  # the whole window
    assert np.all(np.diff(t) >= spacing - 1e-9) and len(t) <= 64
    assert np.array_equal(values[:, 0], np.round(t * 100))  # samples stay with their times
    # another selection: its columns are gaps, the total stays
    _, other = history.series(3)
    assert np.all(np.isnan(other[:, 1:])) and not np.any(np.isnan(other[:, 0]))
    history.append(1.0, 7, [0] * 6)  # time went back (reset): start over
    assert len(history.series(7)[0]) == 1


def test_body_frame_omega_of_a_dzhanibekov_t_handle_changes_sign(ui, fbo):
    state, panel = open_scene("dzhanibekov")
    state.selected = next(iter(state.bodies))
    for _ in range(2 * 240 * 8 // 24):  # 8 s: two flips, ~3.9 s apart
        state.sim.run_steps(12)
        panel.record_plots(state.sim.latest())
    t, values = panel.history.series(state.selected)
    w2, ang_mom = values[:, 4], values[:, 2]
    assert t[-1] - t[0] > 7.9
    assert w2.max() > 5.0 and w2.min() < -5.0  # spinning about the stem, then flipped over
    assert np.count_nonzero(np.diff(np.sign(w2))) >= 2
    assert np.ptp(ang_mom) < 1e-6 * ang_mom.max()  # torque-free: |L| stays put
    save_panel_png(ui, fbo.ctx, panel)


def save_panel_png(ui, ctx, panel):
    """The artefact a person looks at: the whole panel, every section open, in a tall frame."""
    size = (W, 2500)
    fbo = ctx.framebuffer(color_attachments=[ctx.renderbuffer(size, 4)])
    panel.expand_all()
    for _ in range(3):
        frame(ui, fbo, panel, size)
    pixels = read_rgb(fbo, size)[:, int(W - PANEL_WIDTH) - 10:]
    ARTIFACTS.mkdir(exist_ok=True)
    png.from_array(pixels.reshape(size[1], -1), "RGB").save(str(ARTIFACTS / "panel.png"))
    fbo.release()


def test_delete_then_reset_restores_the_body_table():
    state, panel = open_scene("default")
    victim = next(iter(state.bodies))
    record = state.bodies[victim]
    state.selected = victim
    panel.delete(victim)
    assert victim in state.bodies  # only once the physics agrees
    settle(state, panel)
    assert victim not in state.bodies and state.selected is None
    assert victim not in state.sim.latest().ids
    panel.reset()
    settle(state, panel)
    assert state.bodies[victim] is record
    assert set(state.bodies) == {int(i) for i in state.sim.latest().ids}


def test_duplicate_re_adds_the_same_shape_beside_it():
    state, panel = open_scene("default")
    body_id = next(i for i, r in state.bodies.items() if r.name == "t_handle")
    state.sim.run_steps(30)
    before = state.sim.latest()
    panel.duplicate(body_id)
    settle(state, panel)
    after = state.sim.latest()
    new_id = state.selected
    assert new_id not in (None, body_id) and state.bodies[new_id].shape is state.bodies[
        body_id].shape
    a, b = row(before, body_id), row(after, new_id)
    offset = after.pos[b] - before.pos[a]
    assert np.linalg.norm(offset) > 0.1 and np.count_nonzero(np.abs(offset) > 1e-9) == 1
    assert abs(np.dot(after.quat[b], before.quat[a])) == pytest.approx(1.0, abs=1e-12)
    np.testing.assert_allclose(after.vel[b], before.vel[a], atol=1e-12)
    np.testing.assert_allclose(after.omega[b], before.omega[a], atol=1e-9)


def test_add_builtin_registers_and_selects_it():
    state, panel = open_scene("bounce")
    panel.add_builtin("sphere", [0.2], 500.0)
    settle(state, panel)
    record = state.bodies[state.selected]
    assert record.name == "sphere"
    assert record.shape.properties.mass == pytest.approx(500.0 * 4 / 3 * np.pi * 0.2**3)
    panel.add_builtin("box", [0.1, -1.0, 0.1], 500.0)  # bad size: notification, nothing sent
    assert "size" in state.notifications.visible()[-1][0].text


def test_density_edit_replaces_the_body_with_new_mass_properties():
    state, panel = open_scene("default")
    body_id = next(i for i, r in state.bodies.items() if r.name == "box")
    old = state.bodies[body_id].shape
    state.selected = body_id
    panel.set_body_material(body_id, restitution=0.3)
    state.sim.run_steps(20)
    panel.process_results()
    before = state.sim.latest()
    panel.set_density(body_id, 1234.0)
    settle(state, panel)
    after = state.sim.latest()
    new_id = state.selected
    assert new_id != body_id and body_id not in state.bodies and body_id not in after.ids
    shape = state.bodies[new_id].shape
    expected = builtin_shape("box", old.size, density=1234.0).properties
    assert shape.properties.mass == pytest.approx(expected.mass, rel=1e-12)
    np.testing.assert_allclose(shape.properties.principal_moments, expected.principal_moments,
                               rtol=1e-12)
    assert state.sim.world.model.mass[row(after, new_id)] == pytest.approx(expected.mass)
    a, b = row(before, body_id), row(after, new_id)
    for name in ("pos", "quat", "vel", "omega"):
        np.testing.assert_allclose(getattr(after, name)[b], getattr(before, name)[a], atol=1e-12)
    assert after.body_restitution[b] == 0.3 and np.isnan(after.body_friction[b])
    assert state.sim.world.model.restitution[b] == 0.3


def test_saved_scene_loads_back_with_the_same_bodies(tmp_path):
    state, panel = open_scene("default")
    sphere = next(i for i, r in state.bodies.items() if r.name == "sphere")
    panel.set_body_material(sphere, restitution=0.95, friction=0.1)
    panel.set_gravity([0.0, -5.0, 0.0])
    state.sim.run_steps(60)
    panel.process_results()
    path = tmp_path / "sub" / "saved.toml"
    path.parent.mkdir()
    assert panel.save_scene(str(path))
    assert state.scene_path == path
    snapshot = state.sim.latest()
    scene = load_scene(path)
    assert scene == scene_from_snapshot(snapshot, state.bodies)
    world, records = build_world(scene)
    assert len(records) == len(snapshot.ids) == len(state.bodies)
    np.testing.assert_allclose(world.model.settings.gravity, [0.0, -5.0, 0.0])
    for new_row, (record, body_id) in enumerate(zip(records, snapshot.ids)):
        old_row = row(snapshot, body_id)
        old = state.bodies[int(body_id)].shape.properties
        assert record.name == state.bodies[int(body_id)].name
        assert record.shape.properties.mass == pytest.approx(old.mass, rel=1e-9)
        np.testing.assert_allclose(world.state.pos[new_row], snapshot.pos[old_row], atol=1e-9)
        # the mesh's attitude (a principal frame is arbitrary where two moments are equal)
        _, q_old = state.bodies[int(body_id)].shape.mesh_pose(snapshot.pos[old_row],
                                                              snapshot.quat[old_row])
        _, q_new = record.shape.mesh_pose(world.state.pos[new_row], world.state.quat[new_row])
        assert abs(np.dot(q_new, q_old)) == pytest.approx(1.0, abs=1e-9)
        np.testing.assert_allclose(world.state.vel[new_row], snapshot.vel[old_row], atol=1e-9)
        np.testing.assert_allclose(world.angular_velocity()[new_row], snapshot.omega[old_row],
                                   atol=1e-8)
    sphere_row = row(snapshot, sphere)
    assert world.model.restitution[sphere_row] == 0.95
    assert world.model.friction[sphere_row] == 0.1


def test_lag_indicator_is_red_only_while_sim_time_is_being_dropped():
    lag = LagIndicator()
    assert lag.update(0.0, now=10.0) is None  # never behind: nothing shown
    assert lag.update(0.3, now=11.0) == "BEHIND"
    assert lag.update(0.3, now=11.0 + BEHIND_SHOWN_SECONDS / 2) == "BEHIND"
    assert lag.update(0.3, now=11.0 + BEHIND_SHOWN_SECONDS + 0.1) == "kept up"
    assert lag.update(0.5, now=20.0) == "BEHIND"  # dropping again
    assert lag.update(0.0, now=20.5) is None  # reset: the count starts again
    assert lag.update(0.1, now=21.0) == "BEHIND"


def test_solver_iterations_are_edited_with_the_plus_button(ui, fbo):
    state, panel = open_scene("default")
    state.sim.run_steps(240)  # the scene's bodies have landed
    snapshot = state.sim.latest()
    assert len(snapshot.contact_points) > 0 and snapshot.solver_iterations == 10
    frame(ui, fbo, panel)
    (x0, y0), (x1, y1) = panel.item_rects["solver_iterations"]
    x, y = x1 - (y1 - y0) / 2, (y0 + y1) / 2  # the "+" button: the last square of the field
    click(ui, fbo, panel, x, y)
    state.sim.run_steps(1)
    assert state.sim.world.model.settings.solver_iterations == 11
    assert state.sim.latest().solver_iterations == 11
    panel.set_solver_iterations(3)
    state.sim.run_steps(1)
    assert state.sim.world.model.settings.solver_iterations == 3


def test_the_static_checkbox_makes_the_selected_body_scenery_and_dynamic_again(ctx, ui):
    state, panel = open_scene("bounce")
    state.selected = next(iter(state.bodies))
    tall = (W, 2000)  # the inspector sits below the body list of seven bodies
    ui.on_resize(*tall)
    fbo = ctx.framebuffer(color_attachments=[ctx.renderbuffer(tall, 4)])

    def click_static():
        frame(ui, fbo, panel, tall)
        (x0, y0), (_, y1) = panel.item_rects["static"]
        assert y1 < tall[1], "the checkbox is drawn inside the panel"
        x, y = x0 + (y1 - y0) / 2, tall[1] - (y0 + y1) / 2  # its box; pyglet's y is up
        for event in (lambda: ui.on_mouse_motion(x, y, 0, 0),
                      lambda: ui.on_mouse_press(x, y, mouse.LEFT, 0),
                      lambda: ui.on_mouse_release(x, y, mouse.LEFT, 0)):
            event()
            frame(ui, fbo, panel, tall)

    click_static()
    state.sim.run_steps(1)
    assert state.sim.world.model.static.tolist() == [True] + [False] * 6
    held = state.sim.latest().pos[0].copy()
    state.sim.run_steps(60)
    np.testing.assert_array_equal(state.sim.latest().pos[0], held)
    click_static()
    state.sim.run_steps(60)
    assert not state.sim.world.model.static.any()
    assert state.sim.latest().pos[0, 1] < held[1]  # falling again
    fbo.release()


def test_the_inspector_shows_the_piece_count_and_how_much_the_pieces_overfill_the_mesh(ctx, ui):
    """A 0.4 m box colliding as two halves each 10 % longer: 2 pieces, +10 % over the mesh —
    one row more in the inspector, which moves the static checkbox below it down."""
    shape = builtin_shape("box", [0.4, 0.2, 0.3])
    halves = tuple(np.array([[x, y, z] for x in (0.0, sign * 0.22) for y in (-0.1, 0.1)
                             for z in (-0.15, 0.15)]) for sign in (-1.0, 1.0))
    world = World(WorldDef())
    body_id = world.add_body(BodyDef(mass=shape.properties.mass,
                                     principal_moments=shape.properties.principal_moments,
                                     hull=shape.hull, pieces=halves, position=[0.0, 0.5, 0.0]))
    hull = BodyRecord(body_id, "box", None, None, shape)
    pieces = dataclasses.replace(hull, pieces=halves)
    assert collision_rows(hull) == [("collides as", "its convex hull")]
    assert collision_rows(pieces) == [("collides as", "2 convex pieces"),
                                      ("pieces' volume", "+10.0 % over the mesh")]
    state = AppState(sim=Simulation(world), bodies={body_id: hull}, selected=body_id)
    panel = Panel(state)
    panel.expand_all()
    fbo = ctx.framebuffer(color_attachments=[ctx.renderbuffer((W, H), 4)])
    checkbox = {}
    for record in (hull, pieces):
        state.bodies[body_id] = record
        frame(ui, fbo, panel)
        frame(ui, fbo, panel)
        checkbox[record.pieces != ()] = panel.item_rects["static"][0][1]
    assert 10 < checkbox[True] - checkbox[False] < 40  # one text row more (~17–25 px a row)
    fbo.release()


@pytest.mark.parametrize("path", sorted(asset_path("scenes").glob("*.toml")),
                         ids=lambda p: p.stem)
def test_every_shipped_scene_survives_open_save_open(path, tmp_path):
    """Open a shipped scene as the app does, save it from the panel into another folder, open
    the saved file: every field of the world and of every body (materials, colours, density,
    inertia mode, mesh paths, poses, velocities) is what the original file says."""
    original = load_scene(path)
    state, panel = open_scene(path.stem)
    saved_path = tmp_path / "elsewhere" / "saved.toml"
    saved_path.parent.mkdir()
    assert panel.save_scene(str(saved_path))
    assert_same_scene(load_scene(saved_path), original)


# ---- joints --------------------------------------------------------------------------------

def test_a_drafted_joint_is_made_listed_edited_and_deleted_from_the_panel(ui, fbo):
    """A draft as the window makes it on Shift+click (bob → empty space above it), drawn in the
    Joints section; Create makes the hinge at the clicked point, the list shows it with its
    live reaction, limits and break force are edited live, and Delete removes it."""
    from app.joints import ANCHORS, AXES, new_draft
    from physics.constraints.joint import WORLD
    state, panel = open_scene("pendulum")
    bob = next(iter(state.bodies))
    state.sim.remove_joint(0)  # the scene's own hinge: this test makes one
    settle(state, panel)
    s = state.sim.latest()
    pivot = s.pos[0] + [0.0, 0.5, 0.0]
    state.joint_draft = new_draft(bob, [0.0, 0.0, 0.0], WORLD, pivot, [0.0, 0.0, -1.0])
    assert ANCHORS[state.joint_draft.anchor] == "second point"
    assert AXES[state.joint_draft.axis] == "view direction"
    panel.show_joints()
    frame(ui, fbo, panel)
    frame(ui, fbo, panel)  # the panel scrolled to the draft
    assert "joint_create" in panel.item_rects, panel.item_rects
    assert panel.item_rects["joint_create"][1][1] < H, panel.item_rects["joint_create"]
    # the real Create button, through pyglet-style mouse events
    (x0, y0), (x1, y1) = panel.item_rects["joint_create"]
    click(ui, fbo, panel, (x0 + x1) / 2, (y0 + y1) / 2)
    # the draft goes at once, never drawn beside the joint a snapshot shows before the
    # command's outcome reaches the panel
    assert state.joint_draft is None and len(state.sim.latest().joints.ids) == 0
    settle(state, panel)
    view = state.sim.latest().joints
    assert state.joint_draft is None and list(view.ids) == [state.selected_joint]
    joint = view.defs[0]
    assert joint.kind == "hinge" and joint.first == bob and joint.second == WORLD
    np.testing.assert_allclose(joint.anchor, pivot)
    np.testing.assert_allclose(joint.axis, [0.0, 0.0, -1.0])
    state.sim.run_steps(24)
    view = state.sim.latest().joints
    assert np.linalg.norm(view.force[0]) > 1.0 and view.error[0, 0] < 1e-6  # holds the bob
    frame(ui, fbo, panel)  # the list row and the editor draw
    joint_id = state.selected_joint
    panel.edit_joint(joint_id, limits=(-0.2, 0.2), break_force=1e6)
    settle(state, panel)
    edited = state.sim.latest().joints.defs[0]
    assert edited.limits == (-0.2, 0.2) and edited.break_force == 1e6
    frame(ui, fbo, panel)
    panel.delete_joint(joint_id)
    settle(state, panel)
    assert len(state.sim.latest().joints.ids) == 0 and state.selected_joint is None


def test_a_bad_draft_is_refused_with_its_reason_and_kept():
    from app.joints import new_draft
    from physics.constraints.joint import JOINT_TYPES, WORLD
    state, panel = open_scene("pendulum")
    bob = next(iter(state.bodies))
    s = state.sim.latest()
    # a prismatic joint along the view direction, but the view direction is zero
    state.joint_draft = new_draft(bob, [0.0, 0.0, 0.0], WORLD, s.pos[0], [0.0, 0.0, 0.0])
    state.joint_draft.kind = JOINT_TYPES.index("prismatic")
    assert panel.create_joint() is None
    texts = [n.text for n, _ in state.notifications.visible()]
    assert any("cannot make the joint: joint axis must be non-zero" in t for t in texts), texts
    assert state.joint_draft is not None and len(state.sim.latest().joints.ids) == 1


def test_a_draft_the_world_refuses_comes_back_with_the_reason():
    """The bob is deleted before the joint's command is applied: the world refuses the joint,
    the error names why, and the draft is offered again."""
    from app.joints import new_draft
    from physics.constraints.joint import WORLD
    state, panel = open_scene("pendulum")
    bob = next(iter(state.bodies))
    s = state.sim.latest()
    draft = new_draft(bob, [0.0, 0.0, 0.0], WORLD, s.pos[0] + [0.0, 0.5, 0.0], [0.0, 0.0, 1.0])
    state.joint_draft = draft
    state.sim.remove_body(bob)  # queued ahead of the joint
    assert panel.create_joint() is not None and state.joint_draft is None
    settle(state, panel)
    texts = [n.text for n, _ in state.notifications.visible()]
    assert any(t.startswith("make the hinge joint failed: ") and str(bob) in t
               for t in texts), texts
    assert state.joint_draft is draft and len(state.sim.latest().joints.ids) == 0


def test_a_broken_joint_shows_a_toast_once(ui, fbo):
    state, panel = open_scene("pendulum")
    panel.edit_joint(0, break_force=1.0)  # the bob weighs far more
    state.sim.run_steps(2)
    for _ in range(3):
        frame(ui, fbo, panel)
    texts = [n.text for n, _ in state.notifications.visible()]
    assert sum("hinge joint #0 (bob–world) broke" in t and "1 N" in t for t in texts) == 1, texts


def test_density_edit_keeps_the_bodys_joints():
    state, panel = open_scene("double_pendulum")
    upper = next(i for i, r in state.bodies.items() if r.scene_name == "upper")
    state.sim.run_steps(30)
    panel.set_density(upper, 1400.0)
    settle(state, panel)
    settle(state, panel)
    view = state.sim.latest().joints
    new_upper = next(i for i, r in state.bodies.items() if r.scene_name == "upper")
    assert new_upper != upper and len(view.ids) == 2
    assert sorted((d.first, d.second) for d in view.defs) == sorted(
        [(new_upper, -1), (next(i for i, r in state.bodies.items() if r.scene_name == "lower"),
                           new_upper)])
    state.sim.run_steps(24)
    assert state.sim.latest().joints.error[:, 0].max() < 1e-6


def test_a_magnitude_plot_never_reaches_below_zero():
    """|L| of a body at rest is 0 all along: its plot spans 0 … 1, not an area below zero; ω
    (signed) spans ± its largest value; no samples at all: 0 … 1."""
    from app.panel.sections import plot_range
    assert plot_range(np.zeros((50, 1)), signed=False) == (0.0, 1.0)
    assert plot_range(np.full((5, 1), np.nan), signed=False) == (0.0, 1.0)
    assert plot_range(np.array([[0.5], [2.0]]), signed=False) == (0.0, pytest.approx(2.3))
    assert plot_range(np.array([[-3.0, 1.0], [np.nan, 2.0]]), signed=True) == (
        pytest.approx(-3.45), pytest.approx(3.45))
    state, panel = open_scene("bounce")
    state.selected = next(iter(state.bodies))
    for _ in range(3):
        panel.record_plots(state.sim.run_steps(1))
    _, values = panel.history.series(state.selected)
    assert plot_range(values[:, [2]], signed=False)[0] == 0.0


def test_the_timeline_ticks_each_command_and_a_click_shows_that_moment(ui, fbo):
    state, panel = open_scene("bounce")
    state.sim.run_steps(240)
    state.sim.set_gravity([0.0, -5.0, 0.0])
    state.sim.run_steps(240)
    frame(ui, fbo, panel)
    frame(ui, fbo, panel)
    img = read_rgb(fbo).astype(int)
    x0, y0, x1, y1 = (round(v) for corner in panel.item_rects["timeline"] for v in corner)
    amber = (img[y0 - 1:y0 + 5, x0:x1, 0] > 200) & (img[y0 - 1:y0 + 5, x0:x1, 2] < 120)
    columns = np.flatnonzero(amber.any(axis=0))
    # one tick, halfway along (1 s of the 2 s kept)
    assert len(columns) and columns.max() - columns.min() <= 4
    assert abs(columns.mean() / (x1 - x0) - 0.5) < 0.03
    # a click a quarter along pauses and shows 0.5 s from the ring
    click(ui, fbo, panel, x0 + (x1 - x0) * 0.25, (y0 + y1) / 2)
    settle(state, panel)
    assert state.sim.latest().paused
    assert abs(state.scrub_time - 0.5) < 0.05
    assert state.scrub_time in [f.time for f in state.sim.history.frames()]


def test_the_inspector_shows_the_moment_the_timeline_shows_once_re_run(ctx, ui, monkeypatch):
    """Scrubbed back, the inspector shows the selected body in the world of that moment
    (``History.world_at``), says so, and leaves the live world's settings alone; while the
    moment is still being computed it shows no state at all, never the live one."""
    state, panel = open_scene("bounce")
    body_id = state.selected = next(iter(state.bodies))
    state.sim.run_steps(480)  # 2 s
    live = state.sim.latest()
    clock = [0.0]
    moments = ExactMoments(clock=lambda: clock[0])
    frame_shown = state.sim.history.frames()[30]  # 0.5 s: still falling
    exact, _ = state.sim.history.world_at(frame_shown.step)
    drawn: list[tuple[str, object]] = []
    for name in ("vec_row", "text_row"):
        real = getattr(sections, name)
        monkeypatch.setattr(sections, name, lambda label, value, *a, real=real, **k:
                            (drawn.append((label, value)), real(label, value, *a, **k)))
    real_note = sections.imgui.text_colored
    monkeypatch.setattr(sections.imgui, "text_colored", lambda colour, text:
                        (drawn.append(("note", text)), real_note(colour, text)))
    tall = (W, 2000)  # the inspector below the body list of seven bodies
    ui.on_resize(*tall)
    fbo = ctx.framebuffer(color_attachments=[ctx.renderbuffer(tall, 4)])
    panel.expand_all()

    def inspector() -> dict:
        """The rows drawn by label, and "note": every coloured line."""
        drawn.clear()
        frame(ui, fbo, panel, tall)
        rows = dict(drawn)
        rows["note"] = " | ".join(text for label, text in drawn if label == "note")
        return rows

    try:
        rows = inspector()
        assert panel.inspected is live
        assert np.array_equal(rows["velocity"], live.vel[row(live, body_id)])
        state.scrub_time = frame_shown.time  # the timeline dragged back; not re-run yet
        rows = inspector()
        assert "velocity" not in rows and panel.inspected is None
        assert "computing that moment" in rows["note"] and "t = 0.500 s" in rows["note"]
        moments.at(state.sim.history, state.scrub_time)
        clock[0] = 1.0  # the timeline stayed put: it is re-run
        deadline = time.monotonic() + 60
        while (moment := moments.at(state.sim.history, state.scrub_time)) is None:
            assert time.monotonic() < deadline
            time.sleep(0.01)
        state.moment = moment.over(live)  # what the window does each frame
        rows = inspector()
        r = int(np.flatnonzero(exact.ids == body_id)[0])
        assert np.array_equal(rows["velocity"], exact.state.vel[r])
        assert not np.allclose(rows["velocity"], live.vel[row(live, body_id)])
        assert np.array_equal(rows["COM, world"], exact.state.pos[r])
        assert np.array_equal(rows["L world"], exact.state.ang_mom[r])
        assert np.array_equal(rows["ω world"], exact.angular_velocity()[r])
        assert rows["kinetic energy"] == f"{exact.kinetic_energy()[r]:.6g} J"
        assert "The past: t = 0.500 s on the timeline (live: 2.000 s)" in rows["note"]
        assert "computing" not in rows["note"]
        assert panel.inspected.time == frame_shown.time
        # its static checkbox is the past's, shown and not editable: a click changes nothing
        (x0, y0), (_, y1) = panel.item_rects["static"]
        x, y = x0 + (y1 - y0) / 2, tall[1] - (y0 + y1) / 2
        for event in (lambda: ui.on_mouse_motion(x, y, 0, 0),
                      lambda: ui.on_mouse_press(x, y, mouse.LEFT, 0),
                      lambda: ui.on_mouse_release(x, y, mouse.LEFT, 0)):
            event()
            frame(ui, fbo, panel, tall)
        state.sim.run_steps(0)
        assert not state.sim.world.model.static.any()
        state.scrub_time = state.moment = None  # Space: the live world again
        rows = inspector()
        assert np.array_equal(rows["velocity"], live.vel[row(live, body_id)])
        assert "The past" not in rows["note"]
    finally:
        fbo.release()
