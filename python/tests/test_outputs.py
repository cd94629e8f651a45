"""What a run writes, from Python: frames, measurements, pictures and checkpoints after a
setter, each checked against the command line's files for the same scene."""

import csv
import math

import numpy as np
import pytest

import bristlecone
from conftest import SLIDING_TOML, run_cli

# Forty grains settling in a box container, with contact output and one measure of every
# kind that needs no heap: frames at steps 0, 20 and 40.
OUTPUTS_TOML = """\
[simulation]
dt = 1e-3
steps = 40

[solver]
max_iterations = 30
envelope = 0.00025

[[material]]
name = "glass"
density = 2500.0
friction = 0.4

[[generator]]
kind = "random_fill"
material = "glass"
region = { kind = "box", min = [-0.025, -0.025, 0.005], max = [0.025, 0.025, 0.025] }
radius = { min = 0.004, max = 0.005 }
count = 40
seed = 3

[[boundary]]
name = "bin"
kind = "box_container"
position = [0.0, 0.0, 0.04]
half_extents = [0.03, 0.03, 0.04]
open_top = true

[output]
frame_every = 20
contacts = true

[[measure]]
name = "height"
kind = "bed_height"
every = 10

[[measure]]
name = "energy"
kind = "kinetic_energy"
every = 7

[[measure]]
name = "coordination"
kind = "coordination"
every = 10

[[measure]]
name = "floor"
kind = "boundary_force"
boundary = "bin"
every = 10

[[measure]]
name = "flow"
kind = "mass_flow"
point = [0.0, 0.0, 0.012]
normal = [0.0, 0.0, -1.0]
every = 5
"""


@pytest.fixture(scope="module")
def cli_run(tmp_path_factory):
    """The scene file and the command line's run of it (40 steps)."""
    tmp = tmp_path_factory.mktemp("outputs")
    scene = tmp / "outputs.toml"
    scene.write_text(OUTPUTS_TOML)
    run_cli("run", scene, "--out", tmp / "cli")
    return scene, tmp / "cli"


@pytest.fixture(scope="module")
def stepped(cli_run):
    """The same scene stepped from Python to the command line's last step."""
    sim = bristlecone.Simulation(bristlecone.Scene.from_file(cli_run[0]))
    sim.step(40)
    return sim


def read_csv(path):
    with open(path, newline="") as f:
        rows = list(csv.reader(f))
    return rows[0], np.array([[float(x) for x in r] for r in rows[1:]])


def test_measurements_are_the_cli_csv_values(cli_run, stepped):
    m = stepped.measurements()
    units = stepped.measurement_units()
    assert list(m) == ["height", "energy", "coordination", "floor", "flow"]
    for name, series in m.items():
        header, rows = read_csv(cli_run[1] / "measurements" / f"{name}.csv")
        assert list(series) == header, name
        assert list(units[name]) == header, name
        for k, column in enumerate(header):
            values = series[column]
            assert values.dtype == np.float64 and values.shape == (len(rows),), (name, column)
            # Bit for bit, NaN where the CSV has NaN (a mass flow's rate at step 0).
            assert np.array_equal(values, rows[:, k], equal_nan=True), (name, column)
    assert units["flow"]["rate"] == "kg/s" and units["floor"]["tz"] == "N m"
    # The grains are falling and touching: the samples are not all zero.
    assert m["energy"]["total"].max() > 0 and m["coordination"]["contacts"][-1] > 0
    assert m["floor"]["fz"][-1] != 0


def test_a_frame_is_the_cli_frame_file_for_file(cli_run, stepped, tmp_path):
    path = stepped.write_frame(tmp_path)
    assert path == tmp_path / "frames" / "particles_00000040.vtp"
    ours = sorted(p.name for p in (tmp_path / "frames").iterdir())
    # Grains, the container's surface, and the last step's contacts (VTK and CSV).
    assert ours == ["boundaries_static.vtp", "contacts_00000040.csv", "contacts_00000040.vtp",
                    "particles_00000040.vtp"], ours
    for name in ours:
        assert (tmp_path / "frames" / name).read_bytes() == \
            (cli_run[1] / "frames" / name).read_bytes(), name
    assert "contact_force" in path.read_text(errors="replace")
    for index in ("particles.pvd", "contacts.pvd", "boundaries.pvd"):
        assert "_00000040" in (tmp_path / index).read_text() or index == "boundaries.pvd"


def test_render_of_a_run_directory_writes_the_cli_png(cli_run, tmp_path):
    run_cli("render", cli_run[1], "--frame", 1, "--width", 160, "--height", 120,
            "--camera", "top", "--out", tmp_path / "cli")
    png = bristlecone.render(cli_run[1], tmp_path / "py.png", frame=1, width=160, height=120,
                             camera="top")
    assert png == tmp_path / "py.png"
    assert png.read_bytes() == (tmp_path / "cli" / "particles_00000020.png").read_bytes()


def test_render_of_a_simulation_is_the_run_directory_s_image_at_that_step(cli_run, stepped):
    image = bristlecone.render(stepped, width=160, height=120)
    assert image.shape == (120, 160, 3) and image.dtype == np.uint8
    # Grains drawn: many pixels differ from the white background.
    assert (image != 255).any(axis=2).sum() > 500
    assert np.array_equal(image, bristlecone.render(cli_run[1], width=160, height=120))


def test_render_refuses_bad_options_naming_them(cli_run, stepped):
    with pytest.raises(ValueError, match="argument 'camera': unknown camera 'side'"):
        bristlecone.render(cli_run[1], camera="side")
    with pytest.raises(ValueError, match="fov must be in"):
        bristlecone.render(cli_run[1], fov=0.5)
    with pytest.raises(ValueError, match="argument 'frame': only for a run directory"):
        bristlecone.render(stepped, frame=0)
    with pytest.raises(TypeError, match="unexpected keyword argument 'zoom'"):
        bristlecone.render(cli_run[1], zoom=2)
    with pytest.raises(ValueError, match="has no frame 9"):
        bristlecone.render(cli_run[1], frame=9)


def test_a_checkpoint_after_setters_resumes_with_them_here_and_in_the_cli(tmp_path):
    scene_path = tmp_path / "sliding.toml"
    scene_path.write_text(SLIDING_TOML)
    scene = bristlecone.Scene.from_file(scene_path)
    a = bristlecone.Simulation(scene)
    a.step(20)
    a.set_friction("m", 0.1)
    a.set_gravity([0.0, 0.0, -5.0])
    a.step(10)
    a.checkpoint(tmp_path / "ck.bin")
    a.step(30)
    b = bristlecone.Simulation.resume(scene, tmp_path / "ck.bin")
    b.step(30)
    assert np.array_equal(a.state()["velocities"], b.state()["velocities"])
    # Not what the scene's own parameters give from the same state.
    plain = bristlecone.Simulation(scene)
    plain.step(60)
    assert not np.array_equal(plain.state()["velocities"], b.state()["velocities"])
    # The command line resumes it with them too, and carries them into its checkpoints.
    out = run_cli("run", scene_path, "--steps", 60, "--resume", tmp_path / "ck.bin",
                  "--out", tmp_path / "cli")
    assert "friction of 'm' 0.1" in out.stdout + out.stderr
    a.checkpoint(tmp_path / "a60.bin")
    assert (tmp_path / "a60.bin").read_bytes() == (tmp_path / "cli" / "checkpoint.bin").read_bytes()
    c = bristlecone.Simulation.resume(scene, tmp_path / "cli" / "checkpoint.bin")
    c.step(5)
    a.step(5)
    assert np.array_equal(a.state()["positions"], c.state()["positions"])
