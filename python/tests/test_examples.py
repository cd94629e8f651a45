"""The examples run, at small scale."""

import pathlib
import re
import subprocess
import sys

EXAMPLES = pathlib.Path(__file__).resolve().parents[1] / "examples"


def run(name, *args):
    out = subprocess.run([sys.executable, str(EXAMPLES / name), *map(str, args)],
                         capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    return out.stdout


def test_the_first_example_prints_time_shape_and_contacts():
    m = re.fullmatch(r"(\S+) \((\d+), 3\) (\d+)\n", run("first.py", "--steps", 50))
    assert m, "unexpected output"
    assert abs(float(m[1]) - 0.05) < 1e-12
    assert int(m[2]) > 2 and int(m[3]) > 0


def test_the_robot_loop_reads_a_rising_force_and_stops_the_box():
    out = run("robot.py", "--steps", 400, "--limit", 0.05)
    assert "force limit reached" in out, out


def test_the_friction_sweep_heap_rises_with_every_mu():
    out = run("friction_sweep.py", "--plot", "")
    rows = re.findall(r"mu = (\S+): angle of repose (\S+) degrees, heap height (\S+) mm", out)
    assert [float(r[0]) for r in rows] == [0.05, 0.15, 0.3, 0.6], out
    angles = [float(r[1]) for r in rows]
    heights = [float(r[2]) for r in rows]
    assert all(a < b for a, b in zip(angles, angles[1:])), out
    assert all(a < b for a, b in zip(heights, heights[1:])), out
    # A heap, not a monolayer, at the rough end.
    assert angles[-1] > 8 and heights[-1] > 2.5 * heights[0], out


def test_the_calibration_brackets_the_target_and_reproduces_it_within_its_tolerance():
    out = run("calibrate.py")
    rates = [float(r) for r in re.findall(r"-> (\S+) kg/s", out)]
    assert len(rates) == 4 and min(rates) < 0.115 < max(rates), out
    m = re.search(r"calibrated friction: (\S+), which gives (\S+) kg/s: (\S+) % from", out)
    assert m, out
    assert 0.05 < float(m[1]) < 0.5 and abs(float(m[2]) - 0.115) <= 0.05 * 0.115, out
