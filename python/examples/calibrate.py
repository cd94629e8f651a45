"""A calibration loop: the glass beads' friction coefficient that gives the hopper scene a
target discharge rate, by bisection (the rate falls as friction rises).

The hopper is filled once with the scene's friction and checkpointed just before its gate
opens; each trial resumes that checkpoint, sets the friction and lets the hopper discharge,
reading the rate from the scene's own mass-flow measure (`Simulation.measurements()`). The
beads are 5-6 mm across, so that the 24 mm outlet is 4-5 bead diameters wide, where friction
governs the flow (Beverloo, Leniger & van de Velde 1961); with finer beads the rate barely
depends on it. With a few hundred beads the rate scatters by a few per cent between nearby
frictions, so neighbouring trials can come out of order; the bracket still closes on the
target, and a last run checks the calibrated friction: its rate must be within --tolerance
(5 %) of the target."""

import argparse
import pathlib
import sys
import tempfile

import numpy as np

import bristlecone

ROOT = pathlib.Path(__file__).resolve().parents[2]
parser = argparse.ArgumentParser(description=__doc__)
parser.add_argument("--target", type=float, default=0.115, help="discharge rate (kg/s)")
parser.add_argument("--beads", type=int, default=300, help="beads in the hopper")
parser.add_argument("--trials", type=int, default=4)
parser.add_argument("--range", type=float, nargs=2, default=[0.05, 0.5], help="friction bracket")
parser.add_argument("--tolerance", type=float, default=0.05, help="relative, of the target")
args = parser.parse_args()

HOPPER = ROOT / "assets" / "scenes" / "hopper.toml"
text = HOPPER.read_text().replace("count = 3000", f"count = {args.beads}").replace(
    "radius = { min = 0.0015, max = 0.002 }", "radius = { min = 0.0025, max = 0.003 }")
# The same directory as the scene file, for its relative mesh path.
scene = bristlecone.Scene.from_toml(text, HOPPER)
GATE_OPENS = 350  # steps: the gate's schedule starts at t = 0.35 s
WINDOW = (0.45, 0.51)  # s: the gate is clear of the outlet, the hopper not yet empty


def discharge_rate(checkpoint, mu):
    """Mass through the outlet per second over WINDOW (the flow measure: every 10 steps)."""
    sim = bristlecone.Simulation.resume(scene, checkpoint)
    sim.set_friction("glass", mu)
    sim.step(round(WINDOW[1] / 1e-3) - sim.step_index)
    flow = sim.measurements()["flow"]
    crossed = np.interp(WINDOW, flow["time"], flow["net_mass"])
    return (crossed[1] - crossed[0]) / (WINDOW[1] - WINDOW[0])


with tempfile.TemporaryDirectory() as tmp:
    filled = pathlib.Path(tmp) / "filled.bin"
    fill = bristlecone.Simulation(scene)
    fill.step(GATE_OPENS - 10)
    fill.checkpoint(filled)

    lo, hi = args.range
    for trial in range(args.trials):
        mu = 0.5 * (lo + hi)
        rate = discharge_rate(filled, mu)
        print(f"trial {trial}: mu = {mu:.3f} -> {rate:.4f} kg/s (target {args.target})")
        if rate > args.target:
            lo = mu
        else:
            hi = mu
    mu = 0.5 * (lo + hi)
    rate = discharge_rate(filled, mu)

error = abs(rate - args.target) / args.target
print(f"calibrated friction: {mu:.3f}, which gives {rate:.4f} kg/s: {100 * error:.1f} % from the "
      f"target (tolerance {100 * args.tolerance:.0f} %)")
if error > args.tolerance:
    sys.exit("the calibrated friction does not reproduce the target within the tolerance")
