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
