"""A controller loop: a kinematic box pushed into a pile of beads, reading the contact force
on it every step and stopping the push once it passes a force limit."""

import argparse

import numpy as np

import bristlecone

parser = argparse.ArgumentParser(description=__doc__)
parser.add_argument("--steps", type=int, default=600)
parser.add_argument("--limit", type=float, default=0.5, help="force limit (N)")
args = parser.parse_args()

scene = bristlecone.Scene()
scene.simulation(dt=1e-3, steps=args.steps)
scene.material(name="glass", density=2500.0, friction=0.4)
scene.generator(kind="lattice", radius=0.004, spacing=0.0082,
                region={"kind": "box", "min": [-0.02, -0.03, 0.004], "max": [0.03, 0.03, 0.02]})
scene.body(shape="box", half_extents=[0.01, 0.03, 0.02], position=[-0.05, 0.0, 0.021],
           motion="kinematic", velocity=[0.1, 0.0, 0.0])
scene.boundary(kind="plane", point=[0, 0, 0], normal=[0, 0, 1])

sim = bristlecone.Simulation(scene)
pusher = sim.state()["first_grain"]       # the plane is body 0, the box the first body
for step in range(args.steps):
    sim.step(1)
    c = sim.contacts()
    # Forces are on body B; the box feels the opposite of those where it is B's partner.
    on_box = c["forces"][c["body_b"] == pusher].sum(axis=0) - c["forces"][c["body_a"] == pusher].sum(axis=0)
    push = -on_box[0]
    if step % 50 == 0:
        print(f"t = {sim.time:.3f} s  resistance {push:.4f} N  contacts {len(c['body_a'])}")
    if push > args.limit:
        sim.set_velocity(pusher, [0.0, 0.0, 0.0])
        print(f"force limit reached at t = {sim.time:.3f} s: the box stops")
        break
x = sim.state()["positions"][pusher, 0]
print(f"box at x = {x:.4f} m")
assert np.isfinite(x)
