//! Joints in the exact LCP (book: Exact LCP, bilateral rows; `src/reference/lcp/joints.rs`): a
//! pendulum against the exact period and the APGD path, a joint plus a contact against the
//! analytic statics and the APGD GPU solution, a motor at its torque limit, and a resumed
//! scene with every kind of joint row bit-identical on both step paths.

use bristlecone::bodies::{BodyInit, BodyState, SHAPE_PLANE};
use bristlecone::collide::{BoundaryShape, CollideSettings};
use bristlecone::gpu::shared_context;
use bristlecone::joints::{Joint, JointKind, MotorTarget};
use bristlecone::reference::lcp::LcpSettings;
use bristlecone::solve::{SolverKind, SolverSettings};
use bristlecone::step::{ContactSetup, LemkeStep, Simulation, StepSettings};
use glam::DVec3;
use std::path::Path;

const G: f64 = 9.81;

/// A sphere of mass `m` and radius `r` (I = 2/5 m r²) at rest at `p`.
fn ball(p: DVec3, r: f64, m: f64) -> BodyInit {
    let i = 0.4 * m * r * r;
    BodyInit {
        inv_mass: (1.0 / m) as f32,
        inv_inertia: [(1.0 / i) as f32; 3],
        ..BodyInit::sphere([p.x as f32, p.y as f32, p.z as f32], r as f32, 1.0)
    }
}

fn apgd() -> SolverSettings {
    SolverSettings {
        kind: SolverKind::Apgd,
        max_iterations: 200,
        tolerance: 1e-6,
        recovery_speed: 0.5,
        ..SolverSettings::default()
    }
}

/// A simulation of `inits` (boundaries: `shapes`, frictionless), joints placed by `joints`
/// from the initial state, solved by APGD on the GPU or, with `lemke`, by the exact LCP on
/// that step path.
fn simulation(
    inits: &[BodyInit],
    shapes: Vec<BoundaryShape>,
    dt: f64,
    lemke: Option<LemkeStep>,
    joints: impl Fn(&BodyState) -> Vec<Joint>,
) -> Simulation {
    let state = BodyState::from_inits(inits);
    let settings = StepSettings {
        dt,
        gravity: [0.0, 0.0, -G],
        contact: Some(ContactSetup {
            models: Vec::new(),
            patch_cells: 0,
            shapes,
            collide: CollideSettings {
                envelope: 1e-3,
                friction: vec![0.0],
            },
            solver: apgd(),
        }),
    };
    let mut sim = Simulation::new(shared_context(), &state, settings).unwrap();
    sim.set_joints(&joints(&state)).unwrap();
    if let Some(step) = lemke {
        sim.set_lemke(Some(LcpSettings {
            recovery_speed: 0.5,
            ..LcpSettings::default()
        }));
        assert_eq!(sim.set_lemke_step(step).unwrap(), step == LemkeStep::Cpu);
    }
    sim
}

fn v3(a: [f32; 4]) -> DVec3 {
    DVec3::new(a[0] as f64, a[1] as f64, a[2] as f64)
}

/// Complete elliptic integral of the first kind K(k) by the arithmetic–geometric mean.
fn elliptic_k(k: f64) -> f64 {
    let (mut a, mut b) = (1.0f64, (1.0 - k * k).sqrt());
    for _ in 0..20 {
        (a, b) = (0.5 * (a + b), (a * b).sqrt());
    }
    std::f64::consts::PI / (2.0 * a)
}

const L: f64 = 0.1;
const R: f64 = 0.01;
const M: f64 = 0.1;

/// A bob (L, R, M) on a `kind` joint at the origin (axis y), released at rest from θ₀.
fn pendulum(kind: JointKind, th0: f64, dt: f64, lemke: Option<LemkeStep>) -> Simulation {
    let p0 = DVec3::new(L * th0.sin(), 0.0, -L * th0.cos());
    simulation(&[ball(p0, R, M)], Vec::new(), dt, lemke, |s| {
        vec![Joint::new(kind, None, 0).at(s, DVec3::ZERO, DVec3::Y)]
    })
}

/// The exact LCP with the joint's rows eliminated (Schur complement): a pendulum on a
/// revolute joint, released at rest from θ₀ = 60°, swings with the exact
/// period T = 4 √(I_O/(m g L)) K(sin(θ₀/2)) within 0.5 % (dt = 5e-4 s, half period from two
/// passes through θ = 0) and the joint drifts less than 1e-4 L. On a spherical joint its first
/// 50 steps match the APGD GPU path (tolerance 1e-6) within 1e-4 (position / L, velocity /
/// speed) and the Lemke GPU-collision step path within f32 rounding (1e-6, plus the velocity
/// the joint's drift correction makes of the positions' rounding difference, |Δx| / dt).
#[test]
fn pendulum_on_a_joint_matches_the_exact_period_and_apgd() {
    let (th0, dt) = (60f64.to_radians(), 5e-4);
    let i_o = 0.4 * M * R * R + M * L * L;
    let exact = 4.0 * (i_o / (M * G * L)).sqrt() * elliptic_k((th0 / 2.0).sin());
    {
        let kind = JointKind::Revolute;
        let mut sim = pendulum(kind, th0, dt, Some(LemkeStep::Cpu));
        let (mut t, mut prev, mut drift) = (0.0, th0, 0.0f64);
        let mut crossings = Vec::new();
        while crossings.len() < 2 && t < exact {
            sim.advance(8, 8).unwrap();
            t += 8.0 * dt;
            let x = v3(sim.read_state().unwrap().pos[0]);
            let th = x.x.atan2(-x.z);
            drift = drift.max((x.length() - L).abs()).max(x.y.abs());
            if (prev > 0.0) != (th > 0.0) {
                crossings.push(t - 8.0 * dt * th / (th - prev));
            }
            prev = th;
        }
        assert_eq!(crossings.len(), 2, "{kind:?}: two passes through θ = 0");
        let period = 2.0 * (crossings[1] - crossings[0]);
        let err = (period - exact).abs() / exact;
        eprintln!(
            "{kind:?}: period {period:.5} s vs {exact:.5} s ({:.3} %), drift {:.1e} L",
            100.0 * err,
            drift / L
        );
        assert!(err < 5e-3, "{kind:?}: period {period} vs {exact}");
        assert!(drift < 1e-4 * L, "{kind:?}: joint drift {drift}");
    }
    let run = |lemke: Option<LemkeStep>| {
        let mut sim = pendulum(JointKind::Spherical, th0, dt, lemke);
        sim.advance(50, 50).unwrap();
        let s = sim.read_state().unwrap();
        (v3(s.pos[0]), v3(s.vel[0]))
    };
    let cpu = run(Some(LemkeStep::Cpu));
    assert!(cpu.1.length() > 0.1, "it swings: {}", cpu.1);
    // The GPU path is the same f32 algorithm. Where its arithmetic differs from the CPU's
    // (an H200: fused multiply-adds, 2.5-ulp division), positions part by rounding (1.1e-8 m
    // there, 0 on lavapipe) and the joint's drift correction turns that into velocity, up to
    // |Δx| / dt (2.2e-5 m/s; measured 3.4e-6 m/s against lavapipe's 7e-8).
    for (name, other, tol) in [
        ("lemke gpu path", run(Some(LemkeStep::Gpu)), 1e-6),
        ("apgd", run(None), 1e-4),
    ] {
        let (dx, dv) = ((cpu.0 - other.0).length(), (cpu.1 - other.1).length());
        eprintln!("50 steps, lemke cpu vs {name}: |Δx| = {dx:.1e} m, |Δv| = {dv:.1e} m/s");
        assert!(dx < tol * L, "{name}: position {dx}");
        let drift_v = dx / dt;
        assert!(
            dv < tol * cpu.1.length() + drift_v,
            "{name}: velocity {dv} (|Δx| / dt = {drift_v})"
        );
    }
}

/// A joint and a contact in one LCP: the pendulum on a spherical joint held at θ = 30° by a
/// frictionless wall touching the bob (gap 0) on the side gravity swings it to. Statics
/// about the pivot: the wall pushes with N = m g tan θ and the joint holds (−N, 0, m g).
/// After 3 steps the exact solve on the CPU path gives both within 1e-5, on the
/// GPU-collision path (f32 gaps; 4e-5 measured) and APGD on the GPU (tolerance 1e-6; 4e-6)
/// within 2e-4, and the bob stays at rest.
#[test]
fn pendulum_resting_on_a_wall_carries_the_static_forces() {
    // dt = 10 ms: a gap error δΦ moves the impulse by m δΦ/dt (the gap term), i.e. the force
    // by m δΦ/dt²; f32 collision gaps (δΦ ~ 1e-8 m) cost 0.2 % at 1 ms, 2e-5 here.
    const DT_WALL: f64 = 1e-2;
    let th = 30f64.to_radians();
    let p0 = DVec3::new(L * th.sin(), 0.0, -L * th.cos());
    // The wall: a plane whose outward normal is +x, touching the bob on the side it falls to.
    let s = std::f32::consts::FRAC_1_SQRT_2;
    let mut wall = BodyInit::fixed(SHAPE_PLANE, 0, [(p0.x - R) as f32, 0.0, 0.0], 0.0);
    wall.orientation = [0.0, s, 0.0, s];
    let n_exact = M * G * th.tan();
    for lemke in [Some(LemkeStep::Cpu), Some(LemkeStep::Gpu), None] {
        let mut sim = simulation(
            &[wall, ball(p0, R, M)],
            vec![BoundaryShape::Plane],
            DT_WALL,
            lemke,
            |s| vec![Joint::new(JointKind::Spherical, None, 1).at(s, DVec3::ZERO, DVec3::Y)],
        );
        sim.advance(3, 3).unwrap();
        let (contacts, imp) = sim.read_contacts().unwrap();
        assert_eq!(contacts.len(), 1, "{lemke:?}: one wall contact");
        let n = imp[0][0] as f64 / DT_WALL;
        let f = sim.joint_reactions().unwrap()[0].force;
        let v = v3(sim.read_state().unwrap().vel[1]).length();
        let tol = if lemke == Some(LemkeStep::Cpu) {
            1e-5
        } else {
            2e-4
        };
        eprintln!("{lemke:?}: wall {n:.6} N vs {n_exact:.6}, joint {f:.6}, speed {v:.1e}");
        assert!(
            (n - n_exact).abs() < tol * n_exact,
            "{lemke:?}: wall force {n}"
        );
        let f_exact = DVec3::new(-n_exact, 0.0, M * G);
        assert!(
            (f - f_exact).length() < tol * M * G,
            "{lemke:?}: joint force {f}"
        );
        assert!(v < 1e-5, "{lemke:?}: the bob moves at {v} m/s");
    }
}

/// A ball on an arm of length L held horizontal by a revolute motor (velocity target
/// +1 rad/s, lifting) as a box row: with a torque limit of half the gravity torque m g L it
/// stalls at exactly its limit (1e-5) and the arm falls; with twice m g L it lifts the arm at
/// the target speed (1e-4, f32 state) after 60 steps, below its limit.
#[test]
fn motor_stalls_at_its_torque_limit_in_the_lcp() {
    for (factor, stalls) in [(0.5, true), (2.0, false)] {
        let (l, r, m) = (0.2f64, 0.02, 0.5);
        let limit = factor * m * G * l;
        let mut sim = simulation(
            &[ball(DVec3::new(l, 0.0, 0.0), r, m)],
            Vec::new(),
            1e-3,
            Some(LemkeStep::Cpu),
            |s| {
                vec![Joint::new(JointKind::Revolute, None, 0)
                    .at(s, DVec3::ZERO, -DVec3::Y)
                    .with_motor(MotorTarget::Velocity(1.0), limit)]
            },
        );
        sim.advance(60, 60).unwrap();
        let w = -v3(sim.read_state().unwrap().omega[0]).y;
        let tau = sim.joint_reactions().unwrap()[0].motor;
        eprintln!("limit {limit:.5} N·m: torque {tau:.7}, speed {w:.6} rad/s");
        if stalls {
            assert!(
                (tau.abs() - limit).abs() < 1e-5 * limit,
                "torque {tau} vs {limit}"
            );
            assert!(w < 0.0, "the arm falls: ω = {w}");
        } else {
            assert!(tau.abs() < limit, "torque {tau} within {limit}");
            assert!((w - 1.0).abs() < 1e-4, "lifts at the target speed: ω = {w}");
        }
    }
}

/// A scene with every kind of joint row (a revolute arm with limits and a force-limited
/// motor: bilateral, unilateral and box rows; a rope; a spherical joint to a fixed post),
/// solved by Lemke: resumed at step 10 from its checkpoint (which carries the joint basis)
/// it is bit-identical to the straight run (checkpoint, joints.csv), on both step paths;
/// the motor sits at its limit.
#[test]
fn resumed_lemke_scene_with_joints_is_bit_identical() {
    use bristlecone::run::{run_scene, RunOptions, Silent};
    let dir = tempfile::tempdir().unwrap();
    for path in ["cpu", "gpu"] {
        let text = format!(
            r#"[simulation]
dt = 1e-3
steps = 20
[solver]
kind = "lemke"
lemke_step = "{path}"
[[material]]
name = "steel"
density = 7800.0
friction = 0.3
[[body]]
name = "arm"
radius = 0.02
position = [0.1, 0.0, 0.0]
[[body]]
name = "post"
radius = 0.02
position = [0.0, 0.0, 0.5]
motion = "fixed"
[[body]]
name = "bob"
radius = 0.02
position = [0.2, 0.0, 0.0]
[[joint]]
kind = "revolute"
body_b = "arm"
anchor = [0.0, 0.0, 0.0]
axis = [0.0, 1.0, 0.0]
limits = [-1.0, 0.2]
motor_velocity = 0.5
motor_max_force = 0.05
[[joint]]
kind = "distance"
body_a = "arm"
body_b = "bob"
anchor = [0.1, 0.0, 0.0]
anchor_b = [0.2, 0.0, 0.0]
rope = true
[[joint]]
kind = "spherical"
body_a = "post"
body_b = "bob"
anchor = [0.1, 0.0, 0.25]
"#
        );
        let scene = dir.path().join(format!("joints_{path}.toml"));
        std::fs::write(&scene, text).unwrap();
        let run = |out: &Path, steps: Option<u64>, resume: Option<std::path::PathBuf>| {
            let opts = RunOptions {
                out_dir: Some(out.to_path_buf()),
                steps,
                resume,
                from: None,
                overwrite: false,
            };
            let stop = std::sync::atomic::AtomicBool::new(false);
            run_scene(shared_context(), &scene, &opts, &stop, &mut Silent).unwrap()
        };
        let full = dir.path().join(format!("full_{path}"));
        let split = dir.path().join(format!("split_{path}"));
        run(&full, None, None);
        let half = run(&split, Some(10), None);
        let saved = dir.path().join(format!("half_{path}.bin"));
        std::fs::copy(&half.checkpoint, &saved).unwrap();
        run(&split, None, Some(saved));
        for f in ["checkpoint.bin", "measurements/joints.csv"] {
            let x = std::fs::read(full.join(f)).unwrap();
            let y = std::fs::read(split.join(f)).unwrap();
            assert!(x == y, "{path}: {f} of the resumed run differs");
        }
        let csv = std::fs::read_to_string(full.join("measurements/joints.csv")).unwrap();
        let header: Vec<&str> = csv.lines().next().unwrap().split(',').collect();
        let col = header.iter().position(|c| *c == "j0_motor").unwrap();
        let last: f64 = csv
            .lines()
            .last()
            .unwrap()
            .split(',')
            .nth(col)
            .unwrap()
            .parse()
            .unwrap();
        eprintln!("{path}: motor torque {last}");
        assert!(
            (last.abs() - 0.05).abs() < 1e-5,
            "{path}: motor torque {last}"
        );
    }
}

fn turn_about_y(q: [f32; 4]) -> f64 {
    let q = glam::DQuat::from_xyzw(q[0] as f64, q[1] as f64, q[2] as f64, q[3] as f64);
    let x = q * DVec3::X;
    x.z.atan2(x.x)
}

/// Redundant joints: the planar four-bar of `tests/joints.rs` (crank-rocker: ground 0.14 m,
/// crank 0.05, coupler 0.15, rocker 0.12, no gravity) with all four joints revolute (axis y):
/// 20 bilateral rows on 18 freedoms with one mobility, so 3 rows are redundant (the loop's
/// out-of-plane rows), M_BB is singular and only the regularisation `BILATERAL_REG` makes the
/// Schur complement exist. An unlimited velocity motor (a bilateral row) turns the crank at 4 rad/s
/// for 0.3 s on the CPU path: it turns 1.2 rad (1e-4) and the coupler follows the loop-closure
/// kinematics within 1e-5 rad at every sample.
#[test]
fn redundant_four_bar_moves_as_its_kinematics_say() {
    let (a, b, c, d) = (0.05f64, 0.15, 0.12, 0.14);
    let o2 = DVec3::new(d, 0.0, 0.0);
    let joint_c = |phi: f64| {
        let bp = DVec3::new(a * phi.cos(), 0.0, a * phi.sin());
        let v = o2 - bp;
        let l = v.length();
        let x = (b * b - c * c + l * l) / (2.0 * l);
        let h = (b * b - x * x).sqrt();
        let e = v / l;
        (bp, bp + x * e + h * DVec3::new(-e.z, 0.0, e.x))
    };
    let coupler_angle = |phi: f64| {
        let (bp, cp) = joint_c(phi);
        (cp.z - bp.z).atan2(cp.x - bp.x)
    };
    let phi0 = std::f64::consts::FRAC_PI_2;
    let (bp, cp) = joint_c(phi0);
    let rod = |p: DVec3, len: f64| {
        let m = 0.05;
        let i = (m * len * len / 12.0).max(1e-7);
        BodyInit {
            inv_mass: (1.0 / m) as f32,
            inv_inertia: [(1.0 / i) as f32; 3],
            ..BodyInit::sphere([p.x as f32, p.y as f32, p.z as f32], 0.005, 1.0)
        }
    };
    let inits = [
        rod(0.5 * bp, a),
        rod(0.5 * (bp + cp), b),
        rod(0.5 * (o2 + cp), c),
    ];
    let mut sim = simulation(&inits, Vec::new(), 1e-3, Some(LemkeStep::Cpu), |s| {
        vec![
            Joint::new(JointKind::Revolute, None, 0)
                .at(s, DVec3::ZERO, -DVec3::Y)
                .with_motor(MotorTarget::Velocity(4.0), f64::INFINITY),
            Joint::new(JointKind::Revolute, Some(0), 1).at(s, bp, DVec3::Y),
            Joint::new(JointKind::Revolute, Some(1), 2).at(s, cp, DVec3::Y),
            Joint::new(JointKind::Revolute, None, 2).at(s, o2, DVec3::Y),
        ]
    });
    let psi0 = coupler_angle(phi0);
    let (mut worst, mut phi) = (0.0f64, phi0);
    for _ in 0..10 {
        sim.advance(30, 30).unwrap();
        let s = sim.read_state().unwrap();
        phi = phi0 + turn_about_y(s.rot[0]);
        worst = worst.max((psi0 + turn_about_y(s.rot[1]) - coupler_angle(phi)).abs());
    }
    eprintln!(
        "four-bar (lemke): crank turned {:.5} rad, max |coupler − kinematics| {worst:.2e} rad",
        phi - phi0
    );
    assert!(
        (phi - phi0 - 1.2).abs() < 1e-4,
        "crank turned {}",
        phi - phi0
    );
    assert!(worst < 1e-5, "coupler angle off by {worst} rad");
}
