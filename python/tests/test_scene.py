"""Scenes from files and built in code: the loader's validation and exact TOML."""

import numpy as np
import pytest

import bristlecone
from conftest import ROOT, SCENES, SLIDING_TOML, run_cli, sliding_scene


def test_scene_error_is_a_value_error_with_file_line_and_field(tmp_path):
    bad = tmp_path / "bad.toml"
    bad.write_text(SLIDING_TOML.replace("friction = 0.3", "friction = -1.0"))
    with pytest.raises(bristlecone.SceneError) as e:
        bristlecone.Scene.from_file(bad)
    assert isinstance(e.value, ValueError)
    assert f"{bad}:16:12: material[0].friction: must be non-negative (got -1)" in str(e.value)


def test_a_bad_builder_argument_is_named_and_nothing_is_half_created():
    s = bristlecone.Scene()
    s.material(name="glass", density=2500.0, friction=0.5)
    before = s.to_toml()
    with pytest.raises(bristlecone.SceneError, match=r"material\[1\]\.friction: must be non-negative"):
        s.material(name="steel", density=7800.0, friction=-1)
    assert s.to_toml() == before
    with pytest.raises(bristlecone.SceneError, match=r"body\[0\]\.radius: must be positive"):
        s.body(radius=-0.01, position=[0.0, 0.0, 0.1])
    assert s.to_toml() == before
    with pytest.raises(TypeError, match="argument 'position\\[1\\]'"):
        s.body(radius=0.01, position=[0.0, object(), 0.1])
    assert s.to_toml() == before


def test_a_scene_built_in_code_equals_the_same_scene_from_toml_after_100_steps():
    a = bristlecone.Simulation(sliding_scene())
    b = bristlecone.Simulation(bristlecone.Scene.from_toml(SLIDING_TOML))
    a.step(100)
    b.step(100)
    sa, sb = a.state(), b.state()
    for key in ("positions", "orientations", "velocities", "angular_velocities"):
        assert np.array_equal(sa[key], sb[key]), key
    assert sa["time"] == sb["time"] == pytest.approx(0.1)


def test_a_scene_built_in_code_written_to_toml_runs_in_the_cli_to_the_same_checkpoint(tmp_path):
    scene = sliding_scene()
    path = tmp_path / "sliding.toml"
    scene.write(path)
    assert bristlecone.Scene.from_file(path).to_toml() == scene.to_toml()
    run_cli("run", path, "--steps", 30, "--out", tmp_path / "cli")
    sim = bristlecone.Simulation(scene)
    sim.step(30)
    sim.checkpoint(tmp_path / "py.bin")
    assert (tmp_path / "py.bin").read_bytes() == (tmp_path / "cli" / "checkpoint.bin").read_bytes()


def test_the_default_scene_at_small_scale_gives_the_cli_checkpoint_and_frame(tmp_path):
    default = SCENES / "default.toml"
    run_cli("run", default, "--scale", 0.01, "--steps", 20, "--out", tmp_path / "cli")
    sim = bristlecone.Simulation(bristlecone.Scene.from_file(default, scale=0.01))
    sim.step(20)
    sim.checkpoint(tmp_path / "py.bin")
    assert (tmp_path / "py.bin").read_bytes() == (tmp_path / "cli" / "checkpoint.bin").read_bytes()
    frame = sim.write_frame(tmp_path / "py")
    name = "frames/particles_00000020.vtp"
    assert frame == tmp_path / "py" / name
    assert frame.read_bytes() == (tmp_path / "cli" / name).read_bytes()
    # And the command line resumes the Python checkpoint as its own.
    run_cli("run", default, "--scale", 0.01, "--steps", 25, "--resume", tmp_path / "py.bin",
            "--out", tmp_path / "resumed")
    sim.step(5)
    sim.checkpoint(tmp_path / "py25.bin")
    assert (tmp_path / "py25.bin").read_bytes() == (tmp_path / "resumed" / "checkpoint.bin").read_bytes()
