"""The ``tumble`` command line, run as a user would: a subprocess of ``python -m app``."""

import csv
import gc
import json
import os
import subprocess
import sys
import threading
import tomllib
from pathlib import Path

import numpy as np
import pytest
import trimesh

from physics.geometry.rotation import quat_rotate
from tests.paths import REPO

REPO = REPO
COLUMNS = "t,body,x,y,z,qw,qx,qy,qz,vx,vy,vz,wx,wy,wz,lx,ly,lz,w1,w2,w3,ke,pe"


def tumble(*args, cwd=None) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(REPO))
    return subprocess.run([sys.executable, "-m", "app", *map(str, args)], cwd=cwd or REPO,
                          env=env, capture_output=True, text=True, timeout=60)


def assert_one_line_error(result, status, *words):
    assert result.returncode == status, result.stderr
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    assert "Traceback" not in result.stderr
    for word in words:
        assert word in lines[0], lines[0]


def read_csv(path: Path) -> tuple[list[str], list[list[str]]]:
    with open(path, newline="") as f:
        rows = list(csv.reader(f))
    return rows[0], rows[1:]


# ---- tumble inertia --------------------------------------------------------------------------

def test_inertia_json_of_a_box_is_exact(tmp_path):
    """A 1 × 2 × 3 m box with a corner at the origin, ρ = 250: every closed-form value."""
    box = trimesh.creation.box(extents=(1.0, 2.0, 3.0))
    lines = [f"v {x!r} {y!r} {z!r}" for x, y, z in (box.vertices + [0.5, 1.0, 1.5]).tolist()]
    lines += [f"f {a + 1} {b + 1} {c + 1}" for a, b, c in box.faces.tolist()]
    (tmp_path / "box.obj").write_text("\n".join(lines) + "\n")
    result = tumble("inertia", tmp_path / "box.obj", "--density", "250", "--json")
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    assert list(data) == ["mode", "watertight", "volume", "area", "mass", "center_of_mass",
                          "inertia", "principal_moments", "principal_axes", "obb", "scale",
                          "pieces", "warnings"]
    mass = 250.0 * 6.0
    assert data["mode"] == "solid" and data["watertight"] is True and data["warnings"] == []
    assert data["volume"] == pytest.approx(6.0, rel=1e-12)
    assert data["area"] == pytest.approx(22.0, rel=1e-12)
    assert data["mass"] == pytest.approx(mass, rel=1e-12)
    np.testing.assert_allclose(data["center_of_mass"], [0.5, 1.0, 1.5], rtol=1e-12)
    moments_xyz = mass / 12 * np.array([4.0 + 9.0, 1.0 + 9.0, 1.0 + 4.0])
    np.testing.assert_allclose(data["inertia"], np.diag(moments_xyz), rtol=1e-12, atol=1e-12 * mass)
    np.testing.assert_allclose(data["principal_moments"], np.sort(moments_xyz), rtol=1e-12)
    axes = np.array(data["principal_axes"])
    # columns: z, y, x edges (ascending moments), right-handed
    np.testing.assert_allclose(np.abs(axes), [[0, 0, 1], [0, 1, 0], [1, 0, 0]], atol=1e-12)
    # the bounding box along those axes is the box itself (docs/physics.md#oriented-bounding-box)
    np.testing.assert_allclose(data["obb"]["center"], [0.5, 1.0, 1.5], rtol=1e-12)
    np.testing.assert_allclose(data["obb"]["axes"], axes, rtol=0, atol=0)
    np.testing.assert_allclose(data["obb"]["half_extents"], [1.5, 1.0, 0.5], rtol=1e-12)
    assert np.linalg.det(axes) == pytest.approx(1.0, abs=1e-12)
    assert data["scale"] == 1.0
    assert data["pieces"] is None  # convex: it collides as its hull


def write_torus(path: Path) -> Path:
    trimesh.creation.torus(0.3, 0.08, major_sections=24, minor_sections=8).export(path)
    return path


def test_decompose_prints_each_piece_and_inertia_reports_the_count(tmp_path):
    torus = write_torus(tmp_path / "torus.obj")
    result = tumble("decompose", torus, "--json")
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    assert list(data) == ["pieces", "volume_excess", "hull_ratio", "auto", "seconds", "cached"]
    assert data["auto"] is True and data["hull_ratio"] > 1.3
    assert 2 <= len(data["pieces"]) <= 24
    assert all(4 <= p["vertices"] <= 64 and p["volume"] > 0 for p in data["pieces"])
    volume = trimesh.load(torus).volume
    total = sum(p["volume"] for p in data["pieces"])
    assert total / volume - 1 == pytest.approx(data["volume_excess"], rel=1e-9)
    table = tumble("decompose", torus)
    assert table.returncode == 0, table.stderr
    lines = table.stdout.splitlines()
    assert lines[0].startswith(f"torus.obj: {len(data['pieces'])} convex pieces")
    assert "cached" in lines[0]  # the second run reads the first one's pieces
    assert len(lines) == 2 + len(data["pieces"])
    inertia = json.loads(tumble("inertia", torus, "--json").stdout)
    assert inertia["pieces"] == len(data["pieces"])


def test_inertia_imports_the_hull_code_meanwhile_and_a_failure_there_stays_quiet(monkeypatch):
    """The work ``tumble inertia`` starts on another thread (the hull's imports, while the
    integrals run) runs beside the caller, holds up the exit until done, and a failure there
    prints nothing: the main thread does the same work and reports what goes wrong."""
    from app.__main__ import _meanwhile

    release, ran_on = threading.Event(), []

    def waits():
        release.wait(10)
        ran_on.append(threading.get_ident())

    thread = _meanwhile(waits)
    assert thread.is_alive() and not ran_on and not thread.daemon  # the caller went on
    release.set()
    thread.join(10)
    assert ran_on == [thread.ident] and thread.ident != threading.get_ident()

    def fails():
        raise ImportError("No module named 'scipy.spatial'")

    unhandled = []  # what Python would print as "Exception in thread …" and a traceback
    monkeypatch.setattr(threading, "excepthook", unhandled.append)
    _meanwhile(fails).join(10)
    assert unhandled == []


def test_the_process_leaves_python_s_teardown_nothing_to_collect(monkeypatch, capsys):
    """The console script and ``python -m app`` run ``process_main``: the command, then every
    object frozen, so the collections of Python's teardown (~0.5 s over numba's objects) skip
    them; the command's status and output are main's."""
    import app.__main__ as cli

    scripts = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"][
        "scripts"]
    assert scripts["tumble"] == "app.__main__:process_main"
    mesh = REPO / "assets" / "meshes" / "icosahedron.ply"
    monkeypatch.setattr(sys, "argv", ["tumble", "inertia", str(mesh), "--json"])
    frozen = gc.get_freeze_count()
    try:
        assert cli.process_main() == 0
        assert gc.get_freeze_count() > frozen
    finally:
        gc.unfreeze()  # this test process goes on collecting
    data = json.loads(capsys.readouterr().out)
    assert data["watertight"] is True and data["pieces"] is None


def test_inertia_runs_without_collections_and_restores_the_collector(capsys):
    """Numba's set-up makes objects that live as long as the process: collecting while the
    command runs frees nothing, so it does not; a caller in the same process gets the collector
    back as it was."""
    import app.__main__ as cli

    mesh = REPO / "assets" / "meshes" / "torus.obj"
    collections = []
    gc.callbacks.append(collecting := lambda phase, info: collections.append(phase))
    try:
        assert cli.main(["inertia", str(mesh), "--json"]) == 0
    finally:
        gc.callbacks.remove(collecting)
    assert collections == [] and gc.isenabled()
    assert json.loads(capsys.readouterr().out)["pieces"] >= 2  # the same report


def test_decompose_refuses_an_open_mesh_in_one_line(tmp_path):
    cup = REPO / "assets" / "meshes" / "open_cup.obj"
    assert_one_line_error(tumble("decompose", cup), 1, "open_cup.obj", "not a closed solid")


def test_inertia_scale_reads_a_file_in_millimetres_as_metres(tmp_path):
    """The mm part warns and suggests --scale 0.001; with it, the same part in metres."""
    trimesh.creation.box(extents=(1000.0, 2000.0, 3000.0)).export(tmp_path / "part.stl")
    plain = json.loads(tumble("inertia", tmp_path / "part.stl", "--json").stdout)
    assert any("--scale 0.001" in w for w in plain["warnings"])
    result = tumble("inertia", tmp_path / "part.stl", "--scale", "0.001", "--json")
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    assert data["scale"] == 0.001 and data["warnings"] == []
    assert data["volume"] == pytest.approx(6.0, rel=1e-12)
    assert data["mass"] == pytest.approx(6000.0, rel=1e-12)
    table = tumble("inertia", tmp_path / "part.stl", "--scale", "0.001").stdout
    assert "scale 0.001" in table.splitlines()[0]
    bad = tumble("inertia", tmp_path / "part.stl", "--scale", "0")
    assert bad.returncode == 2 and "--scale" in bad.stderr


def test_inertia_table_by_default_and_shell_mode(tmp_path):
    box = trimesh.creation.box(extents=(1.0, 1.0, 1.0))
    box.export(tmp_path / "cube.stl")
    result = tumble("inertia", tmp_path / "cube.stl", "--mode", "shell", "--density", "2")
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("cube.stl: shell (watertight), density 2 kg/m²")
    assert "mass                12 kg" in result.stdout            # 6 m² × 2 kg/m²
    assert "principal moments" in result.stdout and "principal axes" in result.stdout


def test_inertia_of_a_bad_file_is_one_line_naming_it(tmp_path):
    (tmp_path / "garbage.stl").write_bytes(b"\x00\x01not an stl at all")
    assert_one_line_error(tumble("inertia", tmp_path / "garbage.stl", "--json"), 1, "garbage.stl")
    assert_one_line_error(tumble("inertia", tmp_path / "missing.obj"), 2,
                          "missing.obj", "not found")
    (tmp_path / "loop.obj").symlink_to("loop.obj")
    assert_one_line_error(tumble("inertia", tmp_path / "loop.obj"), 2,
                          "loop.obj", "symbolic link that leads back to itself")


def test_inertia_warns_of_a_part_in_millimetres(tmp_path):
    trimesh.creation.box(extents=(1700.0, 200.0, 50.0)).export(tmp_path / "bracket.stl")
    result = tumble("inertia", tmp_path / "bracket.stl")
    assert result.returncode == 0
    assert ("warning: bracket.stl: is 1700 m across — if the file is in millimetres the object "
            "is 1.7 m; scale it by 0.001") in result.stdout


# ---- tumble simulate -------------------------------------------------------------------------

SMALL_SCENE = """
[world]
gravity = [0.0, -9.81, 0.0]
hz = 200

[[body]]
shape = "sphere"
size = [0.1]
position = [0.0, 10.0, 0.0]
velocity = [1.5, 3.0, -0.5]

[[body]]
shape = "box"
size = [0.1, 0.2, 0.3]
position = [2.0, 5.0, 0.0]
angular_velocity = [0.3, 2.0, -1.0]
"""


def test_simulate_writes_every_sampled_row_at_full_precision(tmp_path):
    scene = tmp_path / "small.toml"
    scene.write_text(SMALL_SCENE)
    out = tmp_path / "run.csv"
    result = tumble("simulate", scene, "--seconds", "1.5", "--every", "4", "--out", out)
    assert result.returncode == 0, result.stderr
    assert out.read_text().splitlines()[0] == COLUMNS
    header, rows = read_csv(out)
    samples = 300 // 4 + 1                        # steps 0, 4, …, 300 (t = 0 included)
    assert len(rows) == 2 * samples
    assert all(len(r) == 23 for r in rows)
    # full precision: each number is the shortest text of a float and reads back exactly
    for row in rows:
        assert row[1] in ("0", "1")
        for text in row[:1] + row[2:]:
            assert repr(float(text)) == text
    data = np.array(rows, dtype=float)
    t = data[:, 0].reshape(samples, 2)
    np.testing.assert_array_equal(t[:, 0], np.arange(samples) * 4 / 200)
    np.testing.assert_array_equal(data[:, 1], np.tile([0, 1], samples))

    # the free-falling sphere follows the parabola (the step is exact for constant gravity)
    sphere = data[data[:, 1] == 0]
    ts = sphere[:, 0]
    np.testing.assert_allclose(sphere[:, 2], 1.5 * ts, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(sphere[:, 3], 10.0 + 3.0 * ts - 0.5 * 9.81 * ts**2,
                               rtol=1e-12, atol=1e-11)
    np.testing.assert_allclose(sphere[:, 10], 3.0 - 9.81 * ts, rtol=1e-12, atol=1e-12)
    # energies: kinetic + potential conserved in free flight
    energy = sphere[:, 21] + sphere[:, 22]
    np.testing.assert_allclose(energy, energy[0], rtol=1e-12)

    # the spinning box: world L constant, |q| = 1, body ω consistent with world ω
    box = data[data[:, 1] == 1]
    np.testing.assert_allclose(box[:, 15:18], np.broadcast_to(box[0, 15:18], (samples, 3)),
                               rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(np.linalg.norm(box[:, 5:9], axis=1), 1.0, atol=1e-14)
    # q maps the principal frame to the world: R(q)·(w1, w2, w3) = (wx, wy, wz)
    np.testing.assert_allclose(quat_rotate(box[:, 5:9], box[:, 18:21]), box[:, 12:15],
                               rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(box[0, 12:15], [0.3, 2.0, -1.0], rtol=1e-12)


def test_dzhanibekov_scene_flips(tmp_path):
    """The shipped scene: w2 (ω about the T-handle's middle axis) changes sign at least twice."""
    out = tmp_path / "dz.csv"
    result = tumble("simulate", REPO / "assets" / "scenes" / "dzhanibekov.toml",
                    "--seconds", "8", "--every", "2", "--out", out)
    assert result.returncode == 0, result.stderr
    header, rows = read_csv(out)
    data = np.array(rows, dtype=float)
    w2 = data[:, header.index("w2")]
    flips = np.count_nonzero(np.diff(np.sign(w2)) != 0)
    assert flips >= 2
    # torque-free: kinetic energy and world angular momentum stay put through the flips
    ke = data[:, header.index("ke")]
    np.testing.assert_allclose(ke, ke[0], rtol=1e-9)
    L = data[:, [header.index(c) for c in ("lx", "ly", "lz")]]
    np.testing.assert_allclose(L, np.broadcast_to(L[0], L.shape), rtol=1e-9, atol=1e-12)


def test_simulate_zero_seconds_writes_the_initial_state(tmp_path):
    out = tmp_path / "zero.csv"
    result = tumble("simulate", REPO / "assets" / "scenes" / "bounce.toml", "--seconds", "0",
                    "--out", out)
    assert result.returncode == 0, result.stderr
    header, rows = read_csv(out)
    assert len(rows) == 7 and {r[0] for r in rows} == {"0.0"}


def test_simulate_an_empty_scene_says_so(tmp_path):
    scene = tmp_path / "empty.toml"
    scene.write_text("[world]\nhz = 100\n")
    result = tumble("simulate", scene, "--seconds", "1", "--out", tmp_path / "empty.csv")
    assert result.returncode == 0
    assert "empty.toml: the scene has no bodies" in result.stderr
    assert (tmp_path / "empty.csv").read_text().count("\n") == 1  # the header


def test_simulate_shows_progress_on_a_long_run(tmp_path, monkeypatch, capsys):
    """Past SIMULATE_PROGRESS_DELAY a run reports steps done, steps/s and the time left (here
    the delay is 0, in process; a short run at the real delay shows nothing, as above)."""
    import app.__main__ as cli
    monkeypatch.setattr(cli, "SIMULATE_PROGRESS_DELAY", 0.0)
    scene = REPO / "assets" / "scenes" / "dzhanibekov.toml"
    assert cli.main(["simulate", str(scene), "--seconds", "1", "--out",
                     str(tmp_path / "p.csv")]) == 0
    lines = capsys.readouterr().err.splitlines()
    progress = [line for line in lines if "steps/s" in line]
    assert len(progress) >= 10 and progress[-1].split()[1] == "240/240"
    assert "ETA" in progress[-1]


def test_simulate_bad_arguments_exit_2_with_one_line(tmp_path):
    scene = REPO / "assets" / "scenes" / "dzhanibekov.toml"
    out = tmp_path / "x.csv"
    assert_one_line_error(
        tumble("simulate", tmp_path / "none.toml", "--seconds", "1", "--out", out),
        2, "none.toml", "not found")
    assert_one_line_error(tumble("simulate", scene, "--seconds", "-1", "--out", out),
                          2, "--seconds")
    assert_one_line_error(tumble("simulate", scene, "--seconds", "1", "--every", "0", "--out", out),
                          2, "--every")
    assert_one_line_error(tumble("simulate", scene, "--seconds", "1"), 2, "--out")
    assert_one_line_error(
        tumble("simulate", scene, "--seconds", "0.1", "--out", tmp_path / "no" / "dir" / "x.csv"),
        2, "x.csv", "cannot write")
    assert not out.exists()


def test_simulate_invalid_scene_is_one_line_with_file_and_line(tmp_path):
    scene = tmp_path / "bad.toml"
    scene.write_text('[[body]]\nshape = "box"\nsize = [1, 1, 1]\nrestitution = 1.5\n')
    assert_one_line_error(tumble("simulate", scene, "--seconds", "1", "--out", tmp_path / "o.csv"),
                          1, f"{scene}:4: [[body]] #1: restitution must be between 0 and 1")


def test_simulate_a_replay_gives_the_live_run_bit_for_bit(tmp_path, scripted_replay):
    """A scripted run (every command kind) saved as a replay: ``tumble simulate`` of it writes
    the live run's states to the last bit, through a stretch at another physics rate."""
    from app.__main__ import _sample

    replay, recorded = scripted_replay
    out = tmp_path / "run.csv"
    result = tumble("simulate", replay, "--seconds", "10", "--every", "200", "--out", out)
    assert result.returncode == 0, result.stderr
    _, rows = read_csv(out)
    written = np.array([[float(v) for v in row] for row in rows])
    start = 0
    for step in range(0, 2401, 200):
        live = _sample(recorded[step], 0.0)
        block = written[start:start + len(live)]
        start += len(live)
        assert np.array_equal(block[:, 1:], live[:, 1:]), f"step {step}"
        assert block[0, 0] == pytest.approx(recorded[step].state.time, abs=1e-9)
    assert start == len(written)


def test_simulate_a_replay_with_a_bad_command_is_one_line_naming_it(tmp_path):
    replay = tmp_path / "bad.toml"
    replay.write_text('[world]\nhz = 240\n\n[[command]]\nstep = 5\nname = "apply_impulse"\n'
                      'body_id = 0\nimpulse = [1.0, 0.0]\nspin = 2.0\n')
    assert_one_line_error(tumble("simulate", replay, "--seconds", "1", "--out",
                                 tmp_path / "o.csv"),
                          1, f"{replay}:9: [[command]] #1: spin: apply_impulse takes no 'spin'")
    refused = tmp_path / "refused.toml"
    refused.write_text('[world]\nhz = 240\n\n[[body]]\nshape = "sphere"\nsize = [0.1]\n\n'
                       '[[command]]\nstep = 5\nname = "remove_body"\nbody_id = 3\n')
    assert_one_line_error(tumble("simulate", refused, "--seconds", "1", "--out",
                                 tmp_path / "o.csv"),
                          1, f"{refused}:8: [[command]] remove_body: no body with id 3")


# ---- the rest of the command line -----------------------------------------------------------

def test_help_lists_every_command_and_version_prints():
    result = tumble("--help")
    assert result.returncode == 0
    for usage in (
        "tumble [-h] [--version] [SCENE.toml | MESH ...]",
        "tumble inertia MESH [--density RHO] [--mode auto|solid|shell] [--scale S] [--json]",
        "tumble simulate SCENE.toml --seconds T [--every K] --out FILE.csv",
        "tumble record SCENE.toml --seconds T",
    ):
        assert usage in result.stdout
    version = tumble("--version")
    assert version.returncode == 0 and version.stdout.startswith("tumble 0.")


def test_simulate_writes_the_joints_csv(tmp_path):
    """A 2 kg ball hanging at rest 1 m below a hinge: no violation, and the joint holds it up
    with exactly its weight."""
    scene = tmp_path / "hang.toml"
    scene.write_text('[[body]]\nname = "bob"\nshape = "sphere"\nsize = [0.1]\n'
                     f'density = {2.0 / (4 / 3 * np.pi * 0.1**3)!r}\nposition = [0.0, 1.0, 0.0]\n'
                     '\n[[joint]]\ntype = "hinge"\nbodies = ["bob", "world"]\n'
                     'anchor = [0.0, 2.0, 0.0]\naxis = [0.0, 0.0, 1.0]\n')
    out, joints = tmp_path / "bodies.csv", tmp_path / "joints.csv"
    result = tumble("simulate", scene, "--seconds", "0.5", "--every", "10", "--out", out,
                    "--joints", joints)
    assert result.returncode == 0, result.stderr
    header, rows = read_csv(joints)
    assert header == "t,joint,type,error_m,error_rad,fx,fy,fz,tx,ty,tz".split(",")
    assert len(rows) == 120 // 10 + 1 and {(r[1], r[2]) for r in rows} == {("0", "hinge")}
    data = np.array([[float(v) for i, v in enumerate(r) if i != 2] for r in rows])
    assert np.abs(data[:, 2:4]).max() < 1e-9
    np.testing.assert_allclose(data[1:, 4:7], [[0.0, 2.0 * 9.81, 0.0]] * 12, atol=1e-9)
    np.testing.assert_allclose(data[:, 7:10], 0.0, atol=1e-9)
