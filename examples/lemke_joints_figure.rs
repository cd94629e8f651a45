//! Joints in the exact LCP (`[solver] kind = "lemke"`): `assets/images/lemke_joints.png`.
//! Top: a revolute pendulum (L = 0.1 m, bob r = 0.01 m) released at rest from 60°, its angle
//! over one exact period T = 4 √(I_O/(m g L)) K(sin 30°) with the joint eliminated from the
//! LCP (CPU step path) and with APGD on the GPU. Bottom: a revolute motor lifting an arm
//! (target 1 rad/s) with a torque limit of 0.5 and 2 m g L: its torque (a box row of the LCP)
//! sits at the limit when it stalls and settles at what the motion needs when it does not.
//!
//! `cargo run --release --example lemke_joints_figure`

use bristlecone::bodies::{BodyInit, BodyState};
use bristlecone::collide::CollideSettings;
use bristlecone::gpu::shared_context;
use bristlecone::joints::{Joint, JointKind, MotorTarget};
use bristlecone::plot::{plot_lines, LinePanel};
use bristlecone::reference::lcp::LcpSettings;
use bristlecone::solve::{SolverKind, SolverSettings};
use bristlecone::step::{ContactSetup, LemkeStep, Simulation, StepSettings};
use glam::DVec3;
use std::path::Path;

const G: f64 = 9.81;

fn ball(p: DVec3, r: f64, m: f64) -> BodyInit {
    let i = 0.4 * m * r * r;
    BodyInit {
        inv_mass: (1.0 / m) as f32,
        inv_inertia: [(1.0 / i) as f32; 3],
        ..BodyInit::sphere([p.x as f32, p.y as f32, p.z as f32], r as f32, 1.0)
    }
}

/// One ball at `p` on the joint `joint` (built from the initial state), solved by Lemke on
/// the CPU or by APGD on the GPU.
fn sim(
    p: DVec3,
    r: f64,
    m: f64,
    dt: f64,
    lemke: bool,
    joint: impl Fn(&BodyState) -> Joint,
) -> Simulation {
    let state = BodyState::from_inits(&[ball(p, r, m)]);
    let settings = StepSettings {
        dt,
        gravity: [0.0, 0.0, -G],
        contact: Some(ContactSetup {
            models: Vec::new(),
            patch_cells: 0,
            shapes: Vec::new(),
            collide: CollideSettings {
                envelope: 1e-3,
                friction: vec![0.0],
            },
            solver: SolverSettings {
                kind: SolverKind::Apgd,
                max_iterations: 200,
                tolerance: 1e-6,
                recovery_speed: 0.5,
                ..SolverSettings::default()
            },
        }),
    };
    let mut s = Simulation::new(shared_context(), &state, settings).unwrap();
    s.set_joints(&[joint(&state)]).unwrap();
    if lemke {
        s.set_lemke(Some(LcpSettings {
            recovery_speed: 0.5,
            ..LcpSettings::default()
        }));
        s.set_lemke_step(LemkeStep::Cpu).unwrap();
    }
    s
}

fn elliptic_k(k: f64) -> f64 {
    let (mut a, mut b) = (1.0f64, (1.0 - k * k).sqrt());
    for _ in 0..20 {
        (a, b) = (0.5 * (a + b), (a * b).sqrt());
    }
    std::f64::consts::PI / (2.0 * a)
}

/// θ(t) in degrees over one period.
fn pendulum(lemke: bool) -> (Vec<(f64, f64)>, f64) {
    let (l, r, m, th0, dt) = (0.1f64, 0.01, 0.1, 60f64.to_radians(), 5e-4);
    let period =
        4.0 * ((0.4 * m * r * r + m * l * l) / (m * G * l)).sqrt() * elliptic_k((th0 / 2.0).sin());
    let p0 = DVec3::new(l * th0.sin(), 0.0, -l * th0.cos());
    let mut s = sim(p0, r, m, dt, lemke, |st| {
        Joint::new(JointKind::Revolute, None, 0).at(st, DVec3::ZERO, DVec3::Y)
    });
    let mut out = vec![(0.0, th0.to_degrees())];
    let steps = (period / dt).round() as u32;
    for k in (0..steps).step_by(10) {
        s.advance(10, 10).unwrap();
        let x = s.read_state().unwrap().pos[0];
        out.push((
            (k + 10) as f64 * dt,
            (x[0] as f64).atan2(-x[2] as f64).to_degrees(),
        ));
    }
    (out, period)
}

/// The motor's torque over 0.1 s for a limit of `factor` m g L.
fn motor(factor: f64) -> Vec<(f64, f64)> {
    let (l, r, m, dt) = (0.2f64, 0.02, 0.5, 1e-3);
    let limit = factor * m * G * l;
    let mut s = sim(DVec3::new(l, 0.0, 0.0), r, m, dt, true, |st| {
        Joint::new(JointKind::Revolute, None, 0)
            .at(st, DVec3::ZERO, -DVec3::Y)
            .with_motor(MotorTarget::Velocity(1.0), limit)
    });
    (1..=100)
        .map(|k| {
            s.advance(1, 1).unwrap();
            (k as f64 * dt, s.joint_reactions().unwrap()[0].motor.abs())
        })
        .collect()
}

fn main() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let (lemke, period) = pendulum(true);
    let (apgd, _) = pendulum(false);
    let mgl = 0.5 * G * 0.2;
    let flat = |y: f64| vec![(0.0, y), (0.1, y)];
    let panels = vec![
        LinePanel {
            title: format!("revolute pendulum from 60°, one exact period T = {period:.4} s"),
            x_label: "time [s]".into(),
            y_label: "angle [°]".into(),
            series: vec![
                ("Lemke (joint rows in the LCP)".into(), lemke),
                ("APGD on the GPU".into(), apgd),
                ("t = T".into(), vec![(period, -60.0), (period, 60.0)]),
            ],
        },
        LinePanel {
            title: "revolute motor lifting an arm (target 1 rad/s), box row of the LCP".into(),
            x_label: "time [s]".into(),
            y_label: "motor torque [N·m]".into(),
            series: vec![
                ("limit 0.5 m g L: stalls".into(), motor(0.5)),
                ("limit 2 m g L: lifts".into(), motor(2.0)),
                ("0.5 m g L".into(), flat(0.5 * mgl)),
                ("2 m g L".into(), flat(2.0 * mgl)),
            ],
        },
    ];
    let out = root.join("assets/images/lemke_joints.png");
    plot_lines(&out, panels).unwrap();
    println!("wrote {}", out.display());
}
