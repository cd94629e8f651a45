"""The examples run, at small scale."""

import contextlib
import io
import pathlib
import re
import runpy
import sys

EXAMPLES = pathlib.Path(__file__).resolve().parents[1] / "examples"


def run(name, *args):
    """Runs the example as its command line would (`args` its arguments), in this process: its
    simulations then share the device and the compiled kernels of every other test (a process
    of its own would compile them all again). Returns what it printed."""
    out = io.StringIO()
    argv = sys.argv
    sys.argv = [str(EXAMPLES / name), *map(str, args)]
    try:
        with contextlib.redirect_stdout(out):
            runpy.run_path(str(EXAMPLES / name), run_name="__main__")
    except SystemExit as e:
        assert not e.code, f"{name} exited with {e.code!r}:\n{out.getvalue()}"
    finally:
        sys.argv = argv
    return out.getvalue()


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
