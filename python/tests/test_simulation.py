"""Stepping, arrays, setters, checkpoints, Ctrl-C and threads."""

import os
import signal
import threading
import time

import numpy as np
import pytest

import bristlecone
from conftest import sliding_scene


def test_state_arrays_have_the_documented_shapes_and_dtypes_and_own_their_memory(sliding):
    sim = bristlecone.Simulation(sliding)
    sim.step(5)
    s = sim.state()
    n = 2
    shapes = {
        "positions": ((n, 3), np.float32),
        "orientations": ((n, 4), np.float32),
        "velocities": ((n, 3), np.float32),
        "angular_velocities": ((n, 3), np.float32),
        "ids": ((n,), np.uint32),
        "shape": ((n,), np.uint32),
        "motion": ((n,), np.uint32),
        "material": ((n,), np.uint32),
        "radius": ((n,), np.float32),
        "sizes": ((n, 3), np.float32),
    }
    for key, (shape, dtype) in shapes.items():
        assert s[key].shape == shape and s[key].dtype == dtype, key
    assert s["first_grain"] == 1 and s["step"] == 5
    assert list(s["shape"]) == [1, 0] and list(s["motion"]) == [2, 0]
    # Copies: writing into one changes nothing the simulation gives next.
    s2 = sim.state()
    s2["positions"][:] = 7.0
    assert not np.array_equal(s["positions"], s2["positions"])
    assert np.array_equal(sim.state()["positions"], s["positions"])
    kept = {k: v.copy() for k, v in s.items() if isinstance(v, np.ndarray)}
    sim.step(20)
    del sim
    for key, v in kept.items():
        assert np.array_equal(s[key], v), key
    assert s["positions"][1, 0] == pytest.approx(5 * 1e-3 * 2.0, rel=1e-2)


def test_contacts_of_a_resting_sphere_carry_its_weight(sliding):
    sim = bristlecone.Simulation(sliding)
    assert len(sim.contacts()["body_a"]) == 0
    sim.set_velocity(1, [0.0, 0.0, 0.0])
    sim.step(20)
    c = sim.contacts()
    assert c["body_a"].tolist() == [0] and c["body_b"].tolist() == [1]
    assert c["points"].shape == (1, 3) and c["normals"].dtype == np.float32
    assert c["forces"][0, 2] == pytest.approx(0.5 * 9.81, rel=1e-3)


def test_bad_arguments_raise_naming_them_and_change_nothing(sliding):
    sim = bristlecone.Simulation(sliding)
    sim.step(3)
    before = sim.state()
    with pytest.raises(ValueError, match=r"argument 'velocity': expected shape \(3,\)"):
        sim.set_velocity(1, [1.0, 2.0])
    with pytest.raises(TypeError, match="argument 'gravity'"):
        sim.set_gravity("down")
    with pytest.raises(ValueError, match="material 'm': friction must be ≥ 0"):
        sim.set_friction("m", -1.0)
    with pytest.raises(ValueError, match="no material 'glass'"):
        sim.set_friction("glass", 0.5)
    with pytest.raises(ValueError, match="body 0 is fixed"):
        sim.set_velocity(0, [1.0, 0.0, 0.0])
    with pytest.raises(ValueError, match="body 7 does not exist"):
        sim.set_velocity(7, [1.0, 0.0, 0.0])
    with pytest.raises(ValueError, match="not kinematic"):
        sim.set_kinematic_pose(1, [0.0, 0.0, 1.0])
    with pytest.raises(ValueError, match="argument 'n'"):
        sim.step(-1)
    with pytest.raises(ValueError, match="argument 'backend'"):
        bristlecone.Simulation(sliding, backend="metal")
    after = sim.state()
    for key in ("positions", "velocities", "angular_velocities"):
        assert np.array_equal(before[key], after[key]), key
    assert sim.step_index == 3


def test_setting_the_same_friction_is_bit_identical_to_not_setting_it(sliding):
    a, b = bristlecone.Simulation(sliding), bristlecone.Simulation(sliding)
    a.step(30)
    b.step(30)
    b.set_friction("m", 0.3)
    a.step(30)
    b.step(30)
    assert np.array_equal(a.state()["velocities"], b.state()["velocities"])


def test_a_kinematic_body_is_placed_and_keeps_its_velocity():
    s = sliding_scene()
    s.body(radius=0.02, position=[1.0, 0.0, 0.5], motion="kinematic", velocity=[0.0, 0.0, -0.1])
    sim = bristlecone.Simulation(s)
    kin = 2  # plane, sliding sphere, then this one
    sim.set_kinematic_pose(kin, [1.0, 1.0, 0.4])
    sim.step(10)
    p = sim.state()["positions"][kin]
    assert np.allclose(p, [1.0, 1.0, 0.4 - 10 * 1e-3 * 0.1], atol=1e-6), p


def test_a_checkpoint_resumes_bit_identically(sliding, tmp_path):
    a = bristlecone.Simulation(sliding)
    a.step(40)
    a.checkpoint(tmp_path / "ck.bin")
    a.step(40)
    b = bristlecone.Simulation.resume(sliding, tmp_path / "ck.bin")
    assert b.step_index == 40
    b.step(40)
    assert np.array_equal(a.state()["positions"], b.state()["positions"])
    other = sliding_scene(mu=0.5)
    with pytest.raises(ValueError, match="different scene"):
        bristlecone.Simulation.resume(other, tmp_path / "ck.bin")


def test_ctrl_c_during_step_raises_keyboard_interrupt_and_leaves_a_checkpointable_simulation(sliding, tmp_path):
    sim = bristlecone.Simulation(sliding)
    # Python raises KeyboardInterrupt only where it installed its own SIGINT handler, which it
    # does not when started with SIGINT ignored (a background job of a non-interactive shell):
    # install it for this test, so the test checks the extension, not how it was started.
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    timer = threading.Timer(0.5, lambda: os.kill(os.getpid(), signal.SIGINT))
    try:
        timer.start()
        with pytest.raises(KeyboardInterrupt):
            sim.step(10_000_000)
        timer.join()
    finally:
        signal.signal(signal.SIGINT, previous)
    done = sim.step_index
    assert 0 < done < 10_000_000 and done % 50 == 0, done
    sim.checkpoint(tmp_path / "ck.bin")
    resumed = bristlecone.Simulation.resume(sliding, tmp_path / "ck.bin")
    assert resumed.step_index == done
    sim.step(10)
    resumed.step(10)
    assert np.array_equal(sim.state()["positions"], resumed.state()["positions"])


def test_simulations_stepped_in_threads_equal_one_stepped_alone(sliding):
    alone = bristlecone.Simulation(sliding)
    alone.step(200)
    sims = [bristlecone.Simulation(sliding) for _ in range(3)]
    threads = [threading.Thread(target=s.step, args=(200,)) for s in sims]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for s in sims:
        assert np.array_equal(s.state()["positions"], alone.state()["positions"])


def test_stepping_releases_the_gil(sliding):
    sim = bristlecone.Simulation(sliding)
    ticks = []
    stop = threading.Event()

    def count():
        while not stop.is_set():
            ticks.append(time.perf_counter())
            time.sleep(0.001)

    t = threading.Thread(target=count)
    t.start()
    t0 = time.perf_counter()
    sim.step(600)
    t1 = time.perf_counter()
    stop.set()
    t.join()
    during = [x for x in ticks if t0 < x < t1]
    # The counting thread ran all along: with the GIL held through each batch (at most 50
    # steps) it could tick only between the 12 batches.
    assert len(during) > 2 * 12, (len(during), t1 - t0)
