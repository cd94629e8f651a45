"""Milliseconds per step from Python against the command line on the same scene (the
10^4-grain pile: the default scene's bin filled with --count grains of 2.5-3.5 mm), and the cost of
state() per body. Needs the command line (BRISTLECONE_CLI or target/release/bristlecone)."""

import argparse
import os
import pathlib
import subprocess
import tempfile
import time

import bristlecone

ROOT = pathlib.Path(__file__).resolve().parents[2]
parser = argparse.ArgumentParser(description=__doc__)
parser.add_argument("--count", type=int, default=10000)
parser.add_argument("--steps", type=int, default=200)
parser.add_argument("--warmup", type=int, default=50)
args = parser.parse_args()
cli = os.environ.get("BRISTLECONE_CLI", str(ROOT / "target" / "release" / "bristlecone"))

text = (ROOT / "assets" / "scenes" / "default.toml").read_text()
text = text.replace("count = 3000", f"count = {args.count}").replace(
    "radius = { min = 0.004, max = 0.006 }", "radius = { min = 0.0025, max = 0.0035 }").replace(
    "frame_interval = 0.03", "frame_every = 100000").replace("vtk = true", "vtk = false")
with tempfile.TemporaryDirectory() as tmp:
    path = pathlib.Path(tmp) / "pile.toml"
    path.write_text(text)
    scene = bristlecone.Scene.from_file(path)

    sim = bristlecone.Simulation(scene)
    sim.step(args.warmup)
    t0 = time.perf_counter()
    sim.step(args.steps)
    py_ms = (time.perf_counter() - t0) * 1e3 / args.steps
    # The first read-back of a simulation has a one-time cost; the mean of ten after it is
    # what a loop calling state() pays.
    t0 = time.perf_counter()
    state = sim.state()
    first_us = (time.perf_counter() - t0) * 1e6 / len(state["ids"])
    t0 = time.perf_counter()
    for _ in range(10):
        state = sim.state()
    state_us = (time.perf_counter() - t0) * 1e6 / 10 / len(state["ids"])

    # The command line's own per-step wall times (stats.csv, column wall_ms) after the warm-up.
    subprocess.run([cli, "run", str(path), "--steps", str(args.warmup + args.steps),
                    "--out", str(pathlib.Path(tmp) / "cli")], check=True, capture_output=True)
    rows = (pathlib.Path(tmp) / "cli" / "stats.csv").read_text().splitlines()
    header = rows[0].split(",")
    col = header.index("wall_ms")
    walls = [float(r.split(",")[col]) for r in rows[1:] if int(r.split(",")[0]) > args.warmup]
    cli_ms = sum(walls) / len(walls)

print(f"{len(state['ids'])} bodies, {args.steps} steps after {args.warmup} of warm-up")
print(f"Python: {py_ms:.2f} ms/step   command line: {cli_ms:.2f} ms/step   ratio {py_ms / cli_ms:.3f}")
print(f"state(): {state_us:.3f} µs per body (the first call: {first_us:.3f} µs per body)")
