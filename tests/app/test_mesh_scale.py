"""The offer to rescale a mesh of implausible size and its per-file memory (app/mesh_scale.py),
with the loader against a running physics thread (no GL: the test plays the render thread)."""

import json

import pytest
import trimesh

from app.app_state import AppState
from app.loader import Loader
from app.mesh_scale import FIT_SIZE, ScaleMemory, ScaleOffer, implausible, memory_path
from physics.model import WorldDef
from physics.simulation import Simulation
from physics.world import World
from tests.app.test_loader import settle


@pytest.fixture
def app(tmp_path):
    """(state, loader, memory file) with a paused physics thread and a private memory file."""
    sim = Simulation(World(WorldDef()), paused=True)
    state = AppState(sim=sim)
    sim.start()
    memory = tmp_path / "config" / "mesh_scales.json"
    loader = Loader(state, scales=ScaleMemory(memory))
    yield state, loader, memory
    loader.close()
    sim.stop()


def millimetre_part(folder, name="bracket.stl", extents=(170.0, 40.0, 25.0)):
    """A box-shaped part exported in millimetres (170 mm long)."""
    path = folder / name
    trimesh.creation.box(extents=extents).export(path)
    return path


def test_a_millimetre_part_is_held_back_until_its_scale_is_chosen(app, tmp_path):
    state, loader, memory = app
    path = millimetre_part(tmp_path)
    loader.request([path], drop_point=[0.5, 0.0, -0.5])
    settle(state, loader)
    assert len(state.sim.latest().ids) == 0, "an implausible mesh must not enter the scene"
    [offer] = state.scale_offers
    assert offer.name == "bracket.stl" and offer.extent == pytest.approx(170.0)
    assert "170 m across" in offer.question() and "0.17 m" in offer.question()
    loader.choose_scale(offer, 0.001)
    settle(state, loader)
    assert state.scale_offers == []
    snapshot = state.sim.latest()
    [body_id] = snapshot.ids.tolist()
    shape = state.bodies[body_id].shape
    assert shape.scale == 0.001 and shape.extent == pytest.approx(0.17)
    assert shape.properties.mass == pytest.approx(1000.0 * 0.17 * 0.04 * 0.025, rel=1e-9)
    assert snapshot.pos[0][[0, 2]] == pytest.approx([0.5, -0.5], abs=1e-9)  # where it was dropped
    assert json.loads(memory.read_text()) == {str(path): 0.001}


def test_the_choice_is_remembered_for_the_file_across_runs(app, tmp_path):
    state, loader, memory = app
    path = millimetre_part(tmp_path)
    ScaleMemory(memory).remember(path, 0.001)  # chosen in an earlier run
    loader.scales = ScaleMemory(memory)
    loader.request([path])
    settle(state, loader)
    assert state.scale_offers == []
    [record] = state.bodies.values()
    assert record.shape.scale == 0.001
    assert any("scale=0.001" in n.text for n, _ in state.notifications.visible())


def test_keep_as_is_is_remembered_and_loads_the_file_unscaled(app, tmp_path):
    state, loader, memory = app
    path = millimetre_part(tmp_path, extents=(25.0, 25.0, 25.0))
    loader.request([path])
    settle(state, loader)
    [offer] = state.scale_offers
    assert offer.choices()[-1] == ("Keep as is", 1.0)
    loader.choose_scale(offer, 1.0)
    settle(state, loader)
    assert [r.shape.scale for r in state.bodies.values()] == [1.0]
    loader.request([path])  # again: no question this time
    settle(state, loader)
    assert state.scale_offers == [] and len(state.bodies) == 2


def test_a_plausible_mesh_is_never_held_back(app, tmp_path):
    state, loader, _ = app
    path = millimetre_part(tmp_path, extents=(0.17, 0.04, 0.025))
    loader.request([path])
    settle(state, loader)
    assert state.scale_offers == [] and len(state.bodies) == 1


@pytest.mark.parametrize("extent, first", [(170.0, 0.001), (1.5e-3, 1000.0)])
def test_the_choices_bring_the_body_to_a_plausible_size(extent, first):
    offer = ScaleOffer(None, "part.stl", extent)
    choices = offer.choices()
    assert choices[0][1] == first and choices[-1] == ("Keep as is", 1.0)
    fit = dict((label.split(" (")[0], scale) for label, scale in choices)["Fit to 0.3 m"]
    assert extent * fit == pytest.approx(FIT_SIZE)
    label, fit = offer.choices(fit_size=0.05)[-2]  # a size the user typed
    assert label.startswith("Fit to 0.05 m") and extent * fit == pytest.approx(0.05)
    assert implausible(extent) and not implausible(extent * first)


def test_a_damaged_memory_file_counts_as_empty_and_is_rewritten(tmp_path, caplog):
    memory = tmp_path / "mesh_scales.json"
    for text in ("{not json", "[1, 2]", '{"a": "big", "b": -1}'):
        memory.write_text(text)
        scales = ScaleMemory(memory)
        assert scales.get(tmp_path / "a") is None and scales.get(tmp_path / "b") is None
    scales.remember(tmp_path / "part.stl", 0.01)
    assert ScaleMemory(memory).get(tmp_path / "part.stl") == 0.01
    with pytest.raises(ValueError, match="scale must be a number > 0"):
        scales.remember(tmp_path / "part.stl", float("nan"))


def test_the_memory_lives_in_the_config_folder(monkeypatch, tmp_path):
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))
    assert memory_path() == tmp_path / "tumble" / "mesh_scales.json"
