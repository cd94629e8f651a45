"""Physics through the Python API: the sliding sphere's transition to rolling."""

import numpy as np

import bristlecone
from conftest import SLIDING, sliding_scene


def stick_time(sim, steps):
    """Steps one at a time; returns the time at which the slip v - w r reaches 0 (linear
    interpolation between the last sliding sample and the first stuck one) and the speeds."""
    r = SLIDING["r"]
    dt = SLIDING["dt"]
    prev = SLIDING["v0"]
    t_stick = None
    speeds = []
    for k in range(1, steps + 1):
        sim.step(1)
        s = sim.state()
        b = s["first_grain"]
        v = float(s["velocities"][b, 0])
        slip = v - float(s["angular_velocities"][b, 1]) * r
        speeds.append(v)
        if t_stick is None and slip <= 1e-6:
            t_stick = (k - 1) * dt + prev * dt / (prev - slip)
        prev = slip
    return t_stick, np.array(speeds)


def test_a_sliding_sphere_built_in_code_rolls_from_t_star(sliding):
    v0, mu, g = SLIDING["v0"], SLIDING["mu"], SLIDING["g"]
    t_star = 2 * v0 / (7 * mu * g)
    t_stick, speeds = stick_time(bristlecone.Simulation(sliding), 260)
    assert t_stick is not None, "the sphere never stopped slipping"
    assert abs(t_stick - t_star) < 1e-2 * t_star, (t_stick, t_star)
    assert abs(speeds[-1] - 5 * v0 / 7) < 1e-2 * 5 * v0 / 7, speeds[-1]


def test_set_friction_changes_the_sliding_deceleration_to_mu_g():
    sim = bristlecone.Simulation(sliding_scene())
    sim.step(20)
    sim.set_friction("m", 0.1)
    v = []
    for _ in range(40):
        sim.step(1)
        s = sim.state()
        v.append(float(s["velocities"][s["first_grain"], 0]))
    decel = -(v[-1] - v[9]) / (30 * SLIDING["dt"])
    assert abs(decel - 0.1 * SLIDING["g"]) < 2e-2 * 0.1 * SLIDING["g"], decel


def test_gravity_set_between_steps_acts_from_the_next_step(sliding):
    sim = bristlecone.Simulation(sliding)
    sim.set_gravity([0.0, 0.0, 9.81])
    sim.step(10)
    s = sim.state()
    vz = float(s["velocities"][s["first_grain"], 2])
    assert abs(vz - 10 * 1e-3 * 9.81) < 1e-4, vz
