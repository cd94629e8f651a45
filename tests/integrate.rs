//! Time integration on the GPU against analytic results and against the f64 CPU twin.

use bristlecone::bodies::{BodyInit, BodyState, MOTION_DYNAMIC, MOTION_FIXED, MOTION_KINEMATIC};
use bristlecone::gpu::shared_context;
use bristlecone::reference::integrate as cpu;
use bristlecone::step::{Simulation, StepSettings};
use glam::{DQuat, DVec3};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

fn sim(state: &BodyState, dt: f64, gravity: [f64; 3]) -> Simulation {
    Simulation::new(
        shared_context(),
        state,
        StepSettings {
            dt,
            gravity,
            contact: None,
        },
    )
    .expect("simulation")
}

/// Symplectic Euler on constant gravity gives v_n = v0 + n dt g and
/// x_n = x0 + n dt v0 + dt² g n(n+1)/2, i.e. exactly x(t_n) + ½ g dt t_n.
/// So the discretisation error is ½|g| dt t (first order), and the GPU (f32) must match the
/// discrete solution to within accumulated rounding: n steps × ulp(|x|max).
#[test]
fn free_fall_of_1000_spheres_matches_the_analytic_trajectory() {
    let mut rng = ChaCha8Rng::seed_from_u64(7);
    let mut inits = Vec::new();
    for _ in 0..1000 {
        let mut b = BodyInit::sphere(
            [
                rng.random_range(-5.0..5.0),
                rng.random_range(-5.0..5.0),
                rng.random_range(0.0..10.0),
            ],
            rng.random_range(0.01..0.1),
            2500.0,
        );
        b.velocity = [
            rng.random_range(-1.0..1.0),
            rng.random_range(-1.0..1.0),
            rng.random_range(0.0..3.0),
        ];
        inits.push(b);
    }
    let state = BodyState::from_inits(&inits);
    let (dt, g, n) = (1e-3, -9.81, 1000u64);
    let mut s = sim(&state, dt, [0.0, 0.0, g]);
    s.advance(n as u32, n).unwrap();
    let out = s.read_state().unwrap();
    let t = n as f64 * dt;
    let nf = n as f64;
    let mut worst_discrete: f64 = 0.0;
    for (i, b) in inits.iter().enumerate() {
        let (z0, vz0) = (b.position[2] as f64, b.velocity[2] as f64);
        let analytic = z0 + vz0 * t + 0.5 * g * t * t;
        let discrete = z0 + nf * dt * vz0 + dt * dt * g * nf * (nf + 1.0) / 2.0;
        let z = out.pos[i][2] as f64;
        let zmax = analytic.abs().max(z0.abs()) + 10.0;
        let rounding = nf * (zmax as f32).next_up().sub_ulp(zmax as f32);
        assert!(
            (z - discrete).abs() <= rounding,
            "body {i}: z = {z}, discrete {discrete}, bound {rounding}"
        );
        // Distance from the exact parabola is ½|g| dt t, up to the same rounding.
        let disc_err = 0.5 * g.abs() * dt * t;
        assert!(
            ((z - analytic).abs() - disc_err).abs() <= rounding,
            "body {i}: |z - x(t)| = {}, expected {disc_err} ± {rounding}",
            (z - analytic).abs()
        );
        let vz = out.vel[i][2] as f64;
        assert!((vz - (vz0 + g * t)).abs() <= 1e-4, "body {i}: vz {vz}");
        // Horizontal motion is uniform.
        let x = out.pos[i][0] as f64;
        let xe = b.position[0] as f64 + b.velocity[0] as f64 * t;
        assert!((x - xe).abs() <= rounding, "body {i}: x {x} vs {xe}");
        worst_discrete = worst_discrete.max((z - discrete).abs());
    }
    eprintln!("free fall: worst |z - z_discrete| = {worst_discrete:e}");
}

trait SubUlp {
    fn sub_ulp(self, lower: f32) -> f64;
}
impl SubUlp for f32 {
    fn sub_ulp(self, lower: f32) -> f64 {
        (self - lower) as f64
    }
}

/// A torque-free asymmetric body (I = 1, 2, 3) spinning near its stable major axis with a
/// wobble, and one near the unstable intermediate axis, 10⁴ steps of 1 ms. The scheme itself
/// (f64 twin) keeps kinetic energy to 1e-6 relative (implicit-midpoint gyroscopic term) and
/// world angular momentum to 5e-4 (first-order orientation update); the GPU in f32 adds
/// rounding drift, so it must hold both to 1e-3 for the stable axes and 5e-3 for the chaotic
/// intermediate-axis spin. Explicit Euler on the gyroscopic term gains energy every step.
/// The quaternion stays unit to 1e-6.
#[test]
fn torque_free_asymmetric_body_conserves_energy_and_angular_momentum() {
    let inertia = [1.0f32, 2.0, 3.0];
    let mut inits = Vec::new();
    for (k, w) in [[0.3f32, 0.2, 4.0], [4.0, 0.2, 0.3], [0.1, 2.0, 0.1]]
        .iter()
        .enumerate()
    {
        inits.push(BodyInit {
            position: [k as f32 * 3.0, 0.0, 0.0],
            radius: 1.0,
            orientation: glam::Quat::from_euler(glam::EulerRot::XYZ, 0.3, -0.2, 0.1 * k as f32)
                .to_array(),
            velocity: [0.0; 3],
            angular_velocity: *w,
            inv_mass: 1.0,
            inv_inertia: inertia.map(|i| 1.0 / i),
            motion: MOTION_DYNAMIC,
            material: 0,
            shape: 0,
            shape_index: 0,
        });
    }
    let state = BodyState::from_inits(&inits);
    let mut s = sim(&state, 1e-3, [0.0; 3]);
    let ref0 = cpu::to_f64(&state);
    let mut bodies64 = ref0.clone();
    for _ in 0..10_000 {
        cpu::step(&mut bodies64, DVec3::ZERO, 1e-3);
    }
    s.advance(10_000, 10_000).unwrap();
    let out = cpu::to_f64(&s.read_state().unwrap());
    for k in 0..inits.len() {
        let (e0, l0) = (
            cpu::kinetic_energy(&ref0[k]),
            cpu::angular_momentum(&ref0[k]),
        );
        let (e, l) = (cpu::kinetic_energy(&out[k]), cpu::angular_momentum(&out[k]));
        let (e64, l64) = (
            cpu::kinetic_energy(&bodies64[k]),
            cpu::angular_momentum(&bodies64[k]),
        );
        eprintln!(
            "body {k}: GPU dE/E = {:e}, dL/L = {:e}; f64 twin dE/E = {:e}, dL/L = {:e}",
            (e - e0) / e0,
            (l - l0).length() / l0.length(),
            (e64 - e0) / e0,
            (l64 - l0).length() / l0.length()
        );
        assert!(
            ((e64 - e0) / e0).abs() < 1e-6,
            "f64 body {k}: energy {e0} -> {e64}"
        );
        assert!(
            (l64 - l0).length() / l0.length() < 5e-4,
            "f64 body {k}: L {l0} -> {l64}"
        );
        let tol = if k == 2 { 5e-3 } else { 1e-3 };
        assert!(((e - e0) / e0).abs() < tol, "body {k}: energy {e0} -> {e}");
        assert!(
            (l - l0).length() / l0.length() < tol,
            "body {k}: L {l0} -> {l}"
        );
        assert!((out[k].rot.length() - 1.0).abs() < 1e-6);
    }
}

/// The intermediate-axis (tennis racket) flip: a body spun about its middle axis must flip,
/// as in the exact dynamics, while keeping E and |L|.
#[test]
fn intermediate_axis_spin_flips_and_keeps_invariants() {
    let b = BodyInit {
        position: [0.0; 3],
        radius: 1.0,
        orientation: [0.0, 0.0, 0.0, 1.0],
        velocity: [0.0; 3],
        angular_velocity: [0.01, 3.0, 0.01],
        inv_mass: 1.0,
        inv_inertia: [1.0, 0.5, 1.0 / 3.0],
        motion: MOTION_DYNAMIC,
        material: 0,
        shape: 0,
        shape_index: 0,
    };
    let state = BodyState::from_inits(&[b]);
    let mut s = sim(&state, 1e-3, [0.0; 3]);
    let mut min_y_body = f64::MAX;
    for _ in 0..50 {
        s.advance(200, 200).unwrap();
        let st = cpu::to_f64(&s.read_state().unwrap());
        let wb = st[0].rot.inverse() * st[0].omega;
        min_y_body = min_y_body.min(wb.y);
    }
    eprintln!("min body-frame ω_y = {min_y_body}");
    assert!(
        min_y_body < -2.5,
        "no flip: min body-frame ω_y = {min_y_body}"
    );
    let st = cpu::to_f64(&s.read_state().unwrap());
    let r0 = cpu::to_f64(&state);
    let (e0, e) = (cpu::kinetic_energy(&r0[0]), cpu::kinetic_energy(&st[0]));
    assert!(((e - e0) / e0).abs() < 5e-3, "energy {e0} -> {e}");
}

fn random_state(n: usize, seed: u64) -> BodyState {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut s = BodyState::default();
    for i in 0..n {
        let q = DQuat::from_xyzw(
            rng.random_range(-1.0..1.0),
            rng.random_range(-1.0..1.0),
            rng.random_range(-1.0..1.0),
            rng.random_range(-1.0..1.0),
        )
        .normalize();
        let motion = match i % 10 {
            8 => MOTION_KINEMATIC,
            9 => MOTION_FIXED,
            _ => MOTION_DYNAMIC,
        };
        let mut b = BodyInit::sphere(
            [
                rng.random_range(-10.0..10.0),
                rng.random_range(-10.0..10.0),
                rng.random_range(-10.0..10.0),
            ],
            rng.random_range(0.01..0.5),
            rng.random_range(500.0..8000.0),
        );
        b.orientation = q.as_quat().to_array();
        b.velocity = [
            rng.random_range(-3.0..3.0),
            rng.random_range(-3.0..3.0),
            rng.random_range(-3.0..3.0),
        ];
        b.angular_velocity = [
            rng.random_range(-10.0..10.0),
            rng.random_range(-10.0..10.0),
            rng.random_range(-10.0..10.0),
        ];
        b.inv_inertia = [
            rng.random_range(0.5..5.0),
            rng.random_range(0.5..5.0),
            rng.random_range(0.5..5.0),
        ];
        b.inv_mass = rng.random_range(0.1..10.0);
        b.motion = motion;
        s.push(&b);
        let k = s.len() - 1;
        s.force[k] = [
            rng.random_range(-5.0..5.0),
            rng.random_range(-5.0..5.0),
            rng.random_range(-5.0..5.0),
            0.0,
        ];
        s.torque[k] = [
            rng.random_range(-5.0..5.0),
            rng.random_range(-5.0..5.0),
            rng.random_range(-5.0..5.0),
            0.0,
        ];
    }
    s
}

/// 10⁵ random bodies (asymmetric inertia, forces, torques, all motion kinds), 20 steps:
/// GPU (f32) and the CPU twin (f64) agree to 2e-5 relative on velocities and 1e-5 absolute
/// (plus 2e-6 relative) on positions; orientations to 1e-5; quaternions stay unit to 1e-6.
#[test]
fn gpu_integrator_matches_cpu_twin_on_100k_random_bodies() {
    let state = random_state(100_000, 11);
    let (dt, g) = (1e-3, [0.3, -0.2, -9.81]);
    let mut s = sim(&state, dt, g);
    s.advance(20, 20).unwrap();
    let gpu = cpu::to_f64(&s.read_state().unwrap());
    let mut cpu_b = cpu::to_f64(&state);
    for _ in 0..20 {
        cpu::step(&mut cpu_b, DVec3::from_array(g), dt);
    }
    let mut worst = [0.0f64; 4];
    for (i, (a, b)) in gpu.iter().zip(&cpu_b).enumerate() {
        let dv = (a.vel - b.vel).length() / (1.0 + b.vel.length());
        let dw = (a.omega - b.omega).length() / (1.0 + b.omega.length());
        let dx = (a.pos - b.pos).length() / (1.0 + 0.2 * b.pos.length());
        let dq = a.rot.dot(b.rot).abs();
        worst = [
            worst[0].max(dv),
            worst[1].max(dw),
            worst[2].max(dx),
            worst[3].max(1.0 - dq),
        ];
        assert!(dv < 2e-5, "body {i}: v {} vs {}", a.vel, b.vel);
        assert!(dw < 2e-5, "body {i}: ω {} vs {}", a.omega, b.omega);
        assert!(dx < 1e-5, "body {i}: x {} vs {}", a.pos, b.pos);
        assert!(1.0 - dq < 1e-5, "body {i}: q {} vs {}", a.rot, b.rot);
        assert!(
            (a.rot.length() - 1.0).abs() < 1e-6,
            "body {i}: |q| = {}",
            a.rot.length()
        );
        if a.motion == MOTION_FIXED {
            assert_eq!(a.pos, b.pos);
        }
    }
    eprintln!(
        "GPU vs CPU worst: dv {:e} dω {:e} dx {:e} 1-|q·q'| {:e}",
        worst[0], worst[1], worst[2], worst[3]
    );
}

/// GPU statistics reduction equals the f64 sums over the same (f32) state.
#[test]
fn gpu_statistics_match_cpu_sums() {
    let state = random_state(50_000, 3);
    let s = sim(&state, 1e-3, [0.0, 0.0, -9.81]);
    let t = s.totals().unwrap();
    let b = cpu::to_f64(&state);
    let dynamic: Vec<_> = b.iter().filter(|b| b.motion == MOTION_DYNAMIC).collect();
    let e: f64 = dynamic.iter().map(|b| cpu::kinetic_energy(b)).sum();
    let p: DVec3 = dynamic.iter().map(|b| b.vel / b.inv_mass).sum();
    let l: DVec3 = dynamic.iter().map(|b| cpu::angular_momentum(b)).sum();
    assert!(
        (t.kinetic_energy - e).abs() / e < 1e-5,
        "{} vs {e}",
        t.kinetic_energy
    );
    let scale_p: f64 = dynamic.iter().map(|b| b.vel.length() / b.inv_mass).sum();
    assert!((DVec3::from_array(t.momentum) - p).length() / scale_p < 1e-5);
    let scale_l: f64 = dynamic
        .iter()
        .map(|b| cpu::angular_momentum(b).length())
        .sum();
    assert!((DVec3::from_array(t.angular_momentum) - l).length() / scale_l < 1e-5);
}
