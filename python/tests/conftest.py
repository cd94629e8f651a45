"""Shared scenes and paths for the Python package's tests (run on lavapipe without a GPU)."""

import os
import pathlib
import subprocess

import pytest

import bristlecone

ROOT = pathlib.Path(__file__).resolve().parents[2]
SCENES = ROOT / "assets" / "scenes"


def cli():
    """The command line built by `cargo test` (or BRISTLECONE_CLI): a test that needs it fails
    when it is missing, never skips."""
    path = pathlib.Path(os.environ.get("BRISTLECONE_CLI", ROOT / "target" / "debug" / "bristlecone"))
    assert path.is_file(), f"no bristlecone command line at {path}: run `cargo build` (or set BRISTLECONE_CLI)"
    return path


def run_cli(*args):
    out = subprocess.run([str(cli()), *map(str, args)], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    return out


# A sphere (r = 0.05 m, 0.5 kg) launched sliding at 2 m/s without spin on a plane, mu = 0.3,
# with the exact cone (the scene of the Rust test tests/physics.rs `slide`).
SLIDING = dict(r=0.05, v0=2.0, mu=0.3, g=9.81, dt=1e-3)

SLIDING_TOML = """\
[simulation]
dt = 1e-3
steps = 260
gravity = [0.0, 0.0, -9.81]

[solver]
cone = "exact"
max_outer = 3
max_iterations = 12
tolerance = 1e-7
envelope = 0.0025

[[material]]
name = "m"
density = 1000.0
friction = 0.3

[[body]]
radius = 0.05
position = [0.0, 0.0, 0.05]
velocity = [2.0, 0.0, 0.0]
mass = 0.5

[[boundary]]
kind = "plane"
point = [0.0, 0.0, 0.0]
normal = [0.0, 0.0, 1.0]
"""


def sliding_scene(mu=0.3):
    """The sliding sphere built in code, table by table."""
    s = bristlecone.Scene()
    s.simulation(dt=1e-3, steps=260, gravity=[0.0, 0.0, -9.81])
    s.solver(cone="exact", max_outer=3, max_iterations=12, tolerance=1e-7, envelope=0.0025)
    s.material(name="m", density=1000.0, friction=mu)
    s.body(radius=0.05, position=[0.0, 0.0, 0.05], velocity=[2.0, 0.0, 0.0], mass=0.5)
    s.boundary(kind="plane", point=[0.0, 0.0, 0.0], normal=[0.0, 0.0, 1.0])
    return s


@pytest.fixture
def sliding():
    return sliding_scene()
