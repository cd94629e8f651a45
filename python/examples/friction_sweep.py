"""Angle of repose against the friction coefficient: a squat column of beads collapses on a
plane for each mu and settles into a heap; the heap's flank slope is fitted from the grains'
tops and its height read (plotted with matplotlib when it is installed). Spheres on a flat
plane roll away without rolling resistance, so the beads have some (rolling_friction = 0.3,
Tasora & Anitescu 2013); the angle then rises with mu up to about mu = 0.5, where it levels
off. At the default size (200 beads, 0.3 s) both the angle and the height rise with every mu
of the default sweep."""

import argparse

import numpy as np

import bristlecone

parser = argparse.ArgumentParser(description=__doc__)
parser.add_argument("--mu", type=float, nargs="+", default=[0.05, 0.15, 0.3, 0.6])
parser.add_argument("--count", type=int, default=200)
parser.add_argument("--steps", type=int, default=300)
parser.add_argument("--plot", default="repose.png", help="the plot's file ('': none)")
args = parser.parse_args()

# The column keeps its shape (and packing) as the bead count changes.
SIZE = (args.count / 200) ** (1 / 3)


def heap(mu):
    s = bristlecone.Scene()
    s.simulation(dt=1e-3, steps=args.steps)
    s.solver(max_iterations=50, tolerance=1e-6)
    s.material(name="glass", density=2500.0, friction=mu, rolling_friction=0.3)
    s.generator(kind="random_fill", radius={"min": 0.002, "max": 0.0025}, count=args.count, seed=1,
                region={"kind": "cylinder", "base": [0, 0, 0.003], "radius": 0.013 * SIZE,
                        "height": 0.035 * SIZE})
    s.boundary(kind="plane", point=[0, 0, 0], normal=[0, 0, 1])
    return s


def repose_angle(state):
    """The slope of the heap's flank: the highest grain top per radial bin, fitted over the
    middle of the heap's reach (degrees)."""
    g = state["first_grain"]
    p, r = state["positions"][g:], state["radius"][g:]
    dist = np.hypot(p[:, 0], p[:, 1])
    top = p[:, 2] + r
    reach = np.quantile(dist, 0.98)
    edges = np.linspace(0.2 * reach, 0.8 * reach, 9)
    which = np.digitize(dist, edges)
    centres, heights = [], []
    for b in range(1, len(edges)):
        if np.any(which == b):
            centres.append(0.5 * (edges[b - 1] + edges[b]))
            heights.append(top[which == b].max())
    slope = np.polyfit(centres, heights, 1)[0]
    return np.degrees(np.arctan(-slope))


angles, heights = [], []
for mu in args.mu:
    sim = bristlecone.Simulation(heap(mu))
    sim.step(args.steps)
    state = sim.state()
    g = state["first_grain"]
    angles.append(repose_angle(state))
    heights.append(float(np.max(state["positions"][g:, 2] + state["radius"][g:])))
    print(f"mu = {mu:.2f}: angle of repose {angles[-1]:.1f} degrees, heap height "
          f"{1e3 * heights[-1]:.1f} mm")

try:
    if not args.plot:
        raise ImportError
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
except ImportError:
    print("no plot (none asked for, or matplotlib is not installed)")
else:
    plt.plot(args.mu, angles, "o-")
    plt.xlabel("friction coefficient μ")
    plt.ylabel("angle of repose (degrees)")
    plt.savefig(args.plot, dpi=120)
    print(f"plot: {args.plot}")
