"""A calibration loop: the glass beads' friction coefficient that gives the hopper scene a
target discharge rate, by bisection (the rate falls as friction rises). Each trial is the
scene file's simulation with the friction set before the first step."""

import argparse
import pathlib

import numpy as np

import bristlecone

ROOT = pathlib.Path(__file__).resolve().parents[2]
parser = argparse.ArgumentParser(description=__doc__)
parser.add_argument("--target", type=float, default=0.05, help="discharge rate (kg/s)")
parser.add_argument("--scale", type=float, default=0.1, help="the hopper's grain count, scaled")
parser.add_argument("--steps", type=int, default=1000)
parser.add_argument("--trials", type=int, default=5)
args = parser.parse_args()

scene = bristlecone.Scene.from_file(ROOT / "assets" / "scenes" / "hopper.toml", scale=args.scale)
OUTLET_Z = 0.09
DENSITY = 2500.0


def mass_below_outlet(sim):
    s = sim.state()
    grains = slice(s["first_grain"], None)
    below = s["positions"][grains, 2] < OUTLET_Z
    return DENSITY * 4.0 / 3.0 * np.pi * np.sum(s["radius"][grains][below].astype(float) ** 3)


def discharge_rate(mu):
    """Mass crossing the outlet plane per second over the second half of the run (the gate
    opens at t = 0.35 s)."""
    sim = bristlecone.Simulation(scene)
    sim.set_friction("glass", mu)
    sim.step(args.steps // 2)
    before, t0 = mass_below_outlet(sim), sim.time
    sim.step(args.steps - args.steps // 2)
    return (mass_below_outlet(sim) - before) / (sim.time - t0)


lo, hi = 0.05, 1.0
for trial in range(args.trials):
    mu = 0.5 * (lo + hi)
    rate = discharge_rate(mu)
    print(f"trial {trial}: mu = {mu:.3f} -> {rate:.4f} kg/s (target {args.target})")
    if rate > args.target:
        lo = mu
    else:
        hi = mu
print(f"calibrated friction: {0.5 * (lo + hi):.3f}")
