"""A steel ball rolling into a bed of glass beads: the manual's first Python example."""

import argparse

import bristlecone

parser = argparse.ArgumentParser(description=__doc__)
parser.add_argument("--steps", type=int, default=400)
args = parser.parse_args()

scene = bristlecone.Scene()
scene.simulation(dt=1e-3, steps=args.steps)
scene.material(name="glass", density=2500.0, friction=0.4)
scene.material(name="steel", density=7800.0, friction=0.3)
scene.generator(kind="lattice", material="glass", radius=0.005, spacing=0.0102,
                region={"kind": "box", "min": [-0.05, -0.05, 0.005], "max": [0.05, 0.05, 0.02]})
scene.body(radius=0.01, material="steel", position=[-0.1, 0.0, 0.04], velocity=[1.0, 0.0, 0.0])
scene.boundary(kind="plane", material="steel", point=[0, 0, 0], normal=[0, 0, 1])

sim = bristlecone.Simulation(scene)
sim.step(args.steps)
state = sim.state()                       # NumPy arrays, boundaries first
print(sim.time, state["positions"].shape, len(sim.contacts()["body_a"]))
