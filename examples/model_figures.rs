//! Draws the Book figures of the contact models (src/model/rows) into assets/images/, each
//! from small GPU runs of a block (a sphere with I⁻¹ = 0, m = 1 kg, r = 5 cm) on a plane
//! whose material carries the model:
//! `model_tanh.png` (steady creep velocity against the load, tanh friction),
//! `model_lugre.png` (steady LuGre force against sliding velocity, five decades, and the
//! pre-sliding displacement under a constant load), `model_lugre_ep.png` (plain against
//! elasto-plastic LuGre: pre-sliding hysteresis loops and drift under an oscillating load
//! below break-away), `model_bristle.png` (a block held and a
//! block sliding on an incline) and `model_compliant.png` (penetration during a rebound,
//! Kelvin–Voigt and Hunt–Crossley) and `model_hertz.png` (Hunt–Crossley from Young's
//! modulus, Poisson ratio and restitution: penetration against Hertz's peak, and the rebound
//! against the impact speed, compared with a fixed damping α).
//!
//! `cargo run --example model_figures [-- NAME…]` (a few minutes on lavapipe; NAME picks
//! figures: tanh, lugre, lugre_ep, bristle, compliant, hertz)

use bristlecone::bodies::{BodyInit, BodyState, SHAPE_PLANE};
use bristlecone::collide::{BoundaryShape, CollideSettings};
use bristlecone::gpu::shared_context;
use bristlecone::model::rows::material_row;
use bristlecone::plot::{plot_lines, LinePanel};
use bristlecone::scene::FrictionModel;
use bristlecone::solve::{SolverKind, SolverSettings};
use bristlecone::step::{ContactSetup, Simulation, StepSettings};
use std::path::Path;

const G: f64 = 9.81;

/// One sample: (t, x, z, v_x, v_z) of the block.
type Sample = (f64, f64, f64, f64, f64);

/// The block on the plane; gravity tilted by θ (an incline), initial velocity `v0`.
fn run(
    model: FrictionModel,
    mu: f32,
    theta: f64,
    v0: [f32; 3],
    dt: f64,
    steps: u32,
    every: u32,
) -> Vec<Sample> {
    let r = 0.05f32;
    let plane = BodyInit {
        material: 1,
        ..BodyInit::fixed(SHAPE_PLANE, 0, [0.0; 3], 1.0)
    };
    let block = BodyInit {
        inv_mass: 1.0,
        inv_inertia: [0.0; 3],
        material: 0,
        velocity: v0,
        ..BodyInit::sphere([0.0, 0.0, r], r, 1.0)
    };
    let g = if v0[2] < 0.0 { 0.0 } else { G };
    let settings = StepSettings {
        dt,
        gravity: [g * theta.sin(), 0.0, -g * theta.cos()],
        contact: Some(ContactSetup {
            shapes: vec![BoundaryShape::Plane],
            collide: CollideSettings {
                envelope: 0.1 * r,
                friction: vec![mu, mu],
            },
            solver: SolverSettings {
                kind: SolverKind::Apgd,
                max_iterations: 30,
                tolerance: 1e-9,
                recovery_speed: 0.1,
                warm_start: true,
                ..SolverSettings::default()
            },
            models: vec![material_row(&FrictionModel::Coulomb), material_row(&model)],
            patch_cells: 0,
        }),
    };
    let state = BodyState::from_inits(&[plane, block]);
    let mut sim = Simulation::new(shared_context(), &state, settings).unwrap();
    let mut out = Vec::new();
    for k in 1..=steps / every {
        sim.advance(every, every as u64).unwrap();
        let s = sim.read_state().unwrap();
        let (p, v) = (s.pos[1], s.vel[1]);
        let t = (k * every) as f64 * dt;
        out.push((t, p[0] as f64, p[2] as f64, v[0] as f64, v[2] as f64));
    }
    out
}

fn tanh_figure(out: &Path) {
    let (mu, v_s) = (0.5f64, 1e-3);
    let model = FrictionModel::Tanh { slip_velocity: v_s };
    let analytic: Vec<(f64, f64)> = (0..=95)
        .map(|k| {
            let q = k as f64 / 100.0;
            (v_s * q.atanh() * 1e3, q)
        })
        .collect();
    let mut engine = Vec::new();
    for q in [0.1, 0.3, 0.5, 0.7, 0.8, 0.9] {
        let theta = (q * mu).atan();
        let xs = run(model.clone(), mu as f32, theta, [0.0; 3], 1e-3, 500, 100);
        let v = (xs[4].1 - xs[1].1) / 0.3;
        println!("tanh: load {q}: creep {v:.4e} m/s");
        engine.push((v * 1e3, q));
    }
    let panel = LinePanel {
        title: "Smooth friction λ_T = μ tanh(v/v_s) λ_N on an incline (μ = 0.5, v_s = 1 mm/s)"
            .into(),
        x_label: "steady creep velocity (mm/s)".into(),
        y_label: "load tan θ / μ".into(),
        series: vec![
            ("v_s artanh(tan θ/μ)".into(), analytic),
            ("engine (GPU, dt = 1 ms; points joined)".into(), engine),
        ],
    };
    plot_lines(&out.join("model_tanh.png"), vec![panel]).unwrap();
}

fn lugre_figure(out: &Path) {
    let (mu_c, mu_s, v_s, s2) = (0.3, 0.4, 0.1, 4.0);
    let f = |v: f64| mu_c + (mu_s - mu_c) * (-(v / v_s) * (v / v_s)).exp() + s2 * v;
    let model = FrictionModel::LuGre {
        sigma0: 1e6,
        sigma1: 800.0,
        sigma2: s2,
        mu_static: mu_s,
        v_stribeck: v_s,
        breakaway_ratio: None,
    };
    let curve: Vec<(f64, f64)> = (0..=100)
        .map(|k| {
            let lv = -3.0 + 3.0 * k as f64 / 100.0;
            (lv, f(10f64.powf(lv)))
        })
        .collect();
    let mut engine = Vec::new();
    for lv in [-2.0, -1.5, -1.0, -0.5, 0.0] {
        let v: f64 = 10f64.powf(lv);
        let theta = f(v).atan();
        let xs = run(
            model.clone(),
            mu_c as f32,
            theta,
            [v as f32, 0.0, 0.0],
            1e-3,
            300,
            100,
        );
        let vm = (xs[2].1 - xs[1].1) / 0.1;
        println!(
            "LuGre: v = {v:.3e}: measured {vm:.4e}, force {:.4}",
            theta.tan()
        );
        engine.push((vm.log10(), theta.tan()));
    }
    let steady = LinePanel {
        title: "Point LuGre, steady sliding (μ_c 0.3, μ_s 0.4, v_s 0.1 m/s, σ2 4 s/m)".into(),
        x_label: "log10 sliding velocity (m/s)".into(),
        y_label: "friction / normal force".into(),
        series: vec![
            ("g(v) + σ2 v (eq. 12)".into(), curve),
            (
                "engine: incline at tan θ, measured v (points joined)".into(),
                engine,
            ),
        ],
    };
    // Pre-sliding under a constant load below break-away (tan θ = 0.2).
    let s0 = 1e4;
    let pre = FrictionModel::LuGre {
        sigma0: s0,
        sigma1: 100.0,
        sigma2: 0.4,
        mu_static: mu_s,
        v_stribeck: v_s,
        breakaway_ratio: None,
    };
    let theta = 0.2f64.atan();
    let xs = run(pre, mu_c as f32, theta, [0.0; 3], 1e-3, 200, 2);
    let x_ref = -(mu_s / s0) * (1.0 - theta.tan() / mu_s).ln();
    let series = vec![
        (
            "engine x(t)".into(),
            xs.iter().map(|s| (s.0 * 1e3, s.1 * 1e6)).collect(),
        ),
        (
            "−(μ_s/σ0) ln(1 − tan θ/μ_s)".into(),
            vec![(0.0, x_ref * 1e6), (200.0, x_ref * 1e6)],
        ),
        (
            "F/(σ0 f_N) = tan θ/σ0".into(),
            vec![(0.0, 0.2 / s0 * 1e6), (200.0, 0.2 / s0 * 1e6)],
        ),
    ];
    let presliding = LinePanel {
        title: "Point LuGre, pre-sliding under tan θ = 0.2 < μ_s (σ0 = 1e4 /m, σ1 = 100 s/m)"
            .into(),
        x_label: "time (ms)".into(),
        y_label: "displacement (µm)".into(),
        series,
    };
    plot_lines(&out.join("model_lugre.png"), vec![steady, presliding]).unwrap();
}

fn bristle_figure(out: &Path) {
    let (mu, k_b) = (0.5, 1e5);
    let model = FrictionModel::Bristle { stiffness: k_b };
    let hold = run(
        model.clone(),
        mu,
        15f64.to_radians(),
        [0.0; 3],
        1e-3,
        300,
        1,
    );
    let bound = mu as f64 * G * 15f64.to_radians().cos() / k_b;
    let held = LinePanel {
        title: "Bristle friction (k_b = 1e5 N/m, μ = 0.5), 15° incline: the block is held".into(),
        x_label: "time (ms)".into(),
        y_label: "displacement (µm)".into(),
        series: vec![
            (
                "engine x(t)".into(),
                hold.iter().map(|s| (s.0 * 1e3, s.1 * 1e6)).collect(),
            ),
            (
                "μN/k_b".into(),
                vec![(0.0, bound * 1e6), (300.0, bound * 1e6)],
            ),
        ],
    };
    let theta = 35f64.to_radians();
    let slide = run(model, mu, theta, [0.0; 3], 1e-3, 500, 10);
    let a = G * (theta.sin() - mu as f64 * theta.cos());
    let slid = LinePanel {
        title: "35° incline: the block slides".into(),
        x_label: "time (s)".into(),
        y_label: "velocity (m/s)".into(),
        series: vec![
            (
                "engine v(t)".into(),
                slide.iter().map(|s| (s.0, s.3)).collect(),
            ),
            (
                "g (sin θ − μ cos θ) t".into(),
                vec![(0.0, 0.0), (0.5, 0.5 * a)],
            ),
        ],
    };
    plot_lines(&out.join("model_bristle.png"), vec![held, slid]).unwrap();
}

fn compliant_figure(out: &Path) {
    let r = 0.05;
    let cases = [
        (
            "Kelvin–Voigt k = 1e4 N/m, ζ = 0.2",
            FrictionModel::Compliant {
                stiffness: 1e4,
                damping: 40.0,
            },
            4e-5,
        ),
        (
            "Hunt–Crossley k = 1e6 N/m^1.5, n = 1.5, α = 0.2 s/m",
            FrictionModel::HuntCrossley {
                stiffness: 1e6,
                exponent: 1.5,
                damping: 0.2,
            },
            2e-5,
        ),
    ];
    let mut series = Vec::new();
    for (name, model, dt) in cases {
        let xs = run(model, 0.5, 0.0, [0.0, 0.0, -0.5], dt, 2000, 10);
        series.push((
            name.to_string(),
            xs.iter()
                .take_while(|s| s.2 < r + 2e-3)
                .map(|s| (s.0 * 1e3, (r - s.2) * 1e3))
                .collect(),
        ));
    }
    let panel = LinePanel {
        title: "Compliant contact: penetration of a 1 kg sphere hitting the plane at 0.5 m/s"
            .into(),
        x_label: "time (ms)".into(),
        y_label: "penetration (mm)".into(),
        series,
    };
    plot_lines(&out.join("model_compliant.png"), vec![panel]).unwrap();
}

/// The block on a horizontal plane pulled along x by `load(t)` per unit normal force
/// (gravity's x component, set every step after 20 unloaded settling steps), dt = 1 ms.
/// Returns (t, load, x) after every step.
fn run_loaded(model: FrictionModel, steps: u32, load: impl Fn(f64) -> f64) -> Vec<[f64; 3]> {
    let r = 0.05f32;
    let plane = BodyInit {
        material: 1,
        ..BodyInit::fixed(SHAPE_PLANE, 0, [0.0; 3], 1.0)
    };
    let block = BodyInit {
        inv_mass: 1.0,
        inv_inertia: [0.0; 3],
        material: 0,
        ..BodyInit::sphere([0.0, 0.0, r], r, 1.0)
    };
    let settings = StepSettings {
        dt: 1e-3,
        gravity: [0.0, 0.0, -G],
        contact: Some(ContactSetup {
            shapes: vec![BoundaryShape::Plane],
            collide: CollideSettings {
                envelope: 0.05 * r,
                friction: vec![0.3, 0.3],
            },
            solver: SolverSettings {
                kind: SolverKind::Apgd,
                max_iterations: 30,
                tolerance: 1e-10,
                recovery_speed: 0.1,
                warm_start: true,
                ..SolverSettings::default()
            },
            models: vec![material_row(&FrictionModel::Coulomb), material_row(&model)],
            patch_cells: 0,
        }),
    };
    let state = BodyState::from_inits(&[plane, block]);
    let mut sim = Simulation::new(shared_context(), &state, settings).unwrap();
    sim.advance(20, 20).unwrap();
    let x0 = sim.read_state().unwrap().pos[1][0] as f64;
    (0..steps)
        .map(|k| {
            let l = load((k as f64 + 0.5) * 1e-3);
            sim.set_gravity([l * G, 0.0, -G]);
            sim.advance(1, 0).unwrap();
            let x = sim.read_state().unwrap().pos[1][0] as f64 - x0;
            ((k + 1) as f64 * 1e-3, l, x)
        })
        .map(|(t, l, x)| [t, l, x])
        .collect()
}

/// Plain against elasto-plastic point LuGre (σ0 = 1e6 /m, σ1 = 300 s/m, μ_s = 0.4,
/// break-away ratio 0.8), as in `tests/contact_models.rs`: the loop under ±0.75 μ_s f_N at
/// 4 Hz (the cycle after the first quarter) with the quasi-static loops, and x(t) under
/// μ_s f_N (0.45 + 0.3 sin 2π 4 t).
fn lugre_ep_figure(out: &Path) {
    let (mu_s, s0, f, ra) = (0.4f64, 1e6f64, 4.0f64, 0.75f64);
    let model = |ratio: Option<f64>| FrictionModel::LuGre {
        sigma0: s0,
        sigma1: 300.0,
        sigma2: 0.4,
        mu_static: mu_s,
        v_stribeck: 0.01,
        breakaway_ratio: ratio,
    };
    let w = 2.0 * std::f64::consts::PI * f;
    let z_g = mu_s / s0 * 1e6; // µm
    let mut loops = Vec::new();
    for (name, ratio) in [("plain LuGre", None), ("elasto-plastic", Some(0.8))] {
        let xs = run_loaded(model(ratio), 313, |t| ra * mu_s * (w * t).sin());
        let cycle = &xs[62..313];
        let lo = cycle.iter().map(|s| s[2]).fold(f64::MAX, f64::min);
        let pts = cycle.iter().map(|s| ((s[2] - lo) * 1e6, s[1] / mu_s));
        println!("{name}: loop peak-to-peak {:.4e} m", {
            let hi = cycle.iter().map(|s| s[2]).fold(f64::MIN, f64::max);
            hi - lo
        });
        loops.push((format!("engine, {name}"), pts.collect()));
    }
    // Quasi-static loops: plain dz/dx = 1 ∓ z/z_g on the up / down branch (z/z_g = load
    // ratio r); elasto-plastic below z_ba: x = z.
    let n = 100;
    let r_at = |k: usize| -ra + 2.0 * ra * k as f64 / n as f64;
    let mut plain: Vec<(f64, f64)> = (0..=n)
        .map(|k| (z_g * ((1.0 + ra) / (1.0 - r_at(k))).ln(), r_at(k)))
        .collect();
    let top = plain[n].0;
    plain.extend(
        (0..=n)
            .rev()
            .map(|k| (top - z_g * ((1.0 + ra) / (1.0 + r_at(k))).ln(), r_at(k))),
    );
    loops.push(("quasi-static, plain".into(), plain));
    let ep = vec![(0.0, -ra), (2.0 * ra * z_g, ra)];
    loops.push(("quasi-static, elasto-plastic (z < z_ba)".into(), ep));
    let hysteresis = LinePanel {
        title: "Point LuGre pre-sliding under ±0.75 μ_s f_N at 4 Hz (σ0 = 1e6 /m, break-away ratio 0.8)".into(),
        x_label: "displacement from the loop's left end (µm)".into(),
        y_label: "tangential load / (μ_s f_N)".into(),
        series: loops,
    };
    let mut drift = Vec::new();
    for (name, ratio) in [("plain LuGre", None), ("elasto-plastic", Some(0.8))] {
        let load = |t: f64| mu_s * (0.45 + 0.3 * (w * t).sin());
        let xs = run_loaded(model(ratio), 1000, load);
        println!("{name}: x after 4 cycles {:.4e} m", xs[999][2]);
        drift.push((
            format!("engine, {name}"),
            xs.iter().map(|s| (s[0], s[2] * 1e6)).collect(),
        ));
    }
    let drifting = LinePanel {
        title: "Drift under μ_s f_N (0.45 + 0.3 sin 2π 4 t), below break-away".into(),
        x_label: "time (s)".into(),
        y_label: "displacement (µm)".into(),
        series: drift,
    };
    plot_lines(&out.join("model_lugre_ep.png"), vec![hysteresis, drifting]).unwrap();
}

/// A figure's name (for the command line) and its drawing function.
type Figure = (&'static str, fn(&Path));

/// Hertz from (E, ν) with restitution e = 0.7 (and e = 1): a 1 kg sphere, R = 5 cm, on a
/// plane of E = 3 MPa, ν = 0.3 (dt = 4e-5 s, no gravity).
fn hertz_figure(out: &Path) {
    let (r, e_mod, nu, dt) = (0.05f64, 3e6f64, 0.3f64, 4e-5f64);
    let hertz = |e: f64| FrictionModel::HuntCrossleyHertz {
        youngs_modulus: e_mod,
        poisson_ratio: nu,
        restitution: e,
    };
    let e_star = e_mod / (1.0 - nu * nu);
    let peak = |v0: f64| (15.0 * v0 * v0 / (16.0 * e_star * r.sqrt())).powf(0.4);
    let mut series = Vec::new();
    for e in [1.0, 0.7] {
        let xs = run(hertz(e), 0.0, 0.0, [0.0, 0.0, -0.5], dt, 480, 4);
        series.push((
            format!("engine, e = {e}"),
            xs.iter()
                .take_while(|s| s.2 < r + 1e-3)
                .map(|s| (s.0 * 1e3, (r - s.2) * 1e3))
                .collect(),
        ));
    }
    let tc = 2.9432 * peak(0.5) / 0.5 * 1e3;
    series.push((
        "Hertz δ_max = (15 m v₀²/(16 E* √R))^(2/5), to t_c".into(),
        vec![(0.0, peak(0.5) * 1e3), (tc, peak(0.5) * 1e3)],
    ));
    let pen = LinePanel {
        title: "Hertz (E = 3 MPa, ν = 0.3): penetration of a 1 kg sphere at 0.5 m/s".into(),
        x_label: "time (ms)".into(),
        y_label: "penetration (mm)".into(),
        series,
    };
    // Rebound against impact speed: e given (α = 2χ(e)/(3 v₀) per contact) and a fixed α
    // that gives the same e at 0.5 m/s (Hunt–Crossley with k = 4/3 E* √R).
    let k = 4.0 / 3.0 * e_star * r.sqrt();
    let chi = bristlecone::model::rows::compliant::hc_chi(0.7);
    let fixed = FrictionModel::HuntCrossley {
        stiffness: k,
        exponent: 1.5,
        damping: 2.0 * chi / (3.0 * 0.5),
    };
    let speeds = [0.25f64, 0.5, 1.0, 2.0];
    let mut given = Vec::new();
    let mut fixed_a = Vec::new();
    for &v0 in &speeds {
        for (model, out) in [(hertz(0.7), &mut given), (fixed.clone(), &mut fixed_a)] {
            let xs = run(model, 0.0, 0.0, [0.0, 0.0, -v0 as f32], dt, 600, 600);
            out.push((v0, xs[0].4 / v0));
        }
    }
    eprintln!("hertz rebound, e given: {given:?}; fixed α: {fixed_a:?}");
    let reb = LinePanel {
        title: "Rebound against impact speed".into(),
        x_label: "impact speed (m/s)".into(),
        y_label: "restitution".into(),
        series: vec![
            (
                "restitution = 0.7 given (χ(e), v₀ per contact)".into(),
                given,
            ),
            ("fixed α (same e at 0.5 m/s)".into(), fixed_a),
            ("target 0.7".into(), vec![(0.25, 0.7), (2.0, 0.7)]),
        ],
    };
    plot_lines(&out.join("model_hertz.png"), vec![pen, reb]).unwrap();
}

fn main() {
    let out = Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/images");
    let pick: Vec<String> = std::env::args().skip(1).collect();
    let want = |name: &str| pick.is_empty() || pick.iter().any(|p| p == name);
    let figures: [Figure; 6] = [
        ("tanh", tanh_figure),
        ("lugre", lugre_figure),
        ("lugre_ep", lugre_ep_figure),
        ("bristle", bristle_figure),
        ("compliant", compliant_figure),
        ("hertz", hertz_figure),
    ];
    for (name, draw) in figures {
        if want(name) {
            draw(&out);
        }
    }
    println!("wrote model_*.png into {}", out.display());
}
