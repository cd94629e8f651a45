//! Figure for the book (Shapes: capsule bodies): a capsule rod (r = 1 cm, 20 cm between
//! the cap centres) released at rest at 0.5 rad on a frictionless plane, θ(t) from the
//! engine (GPU, dt = 1 ms) beside the rigid-body answer (lower cap on the plane, centre of
//! mass falling vertically; the ODE of `tests/capsule.rs::falling_rod`) and, for contrast,
//! a rod hinged at its lower end. Writes `assets/images/capsule_rod_fall.png`.
//! Run: `cargo run --release --example rod_fall_figure`.

use bristlecone::gpu::shared_context;
use bristlecone::plot::{plot_lines, LinePanel};
use bristlecone::reference::capsule::capsule_mass;
use bristlecone::scene::parse_str;
use bristlecone::setup;
use bristlecone::step::Simulation;
use glam::{DQuat, DVec3};
use std::path::Path;

const G: f64 = 9.81;

/// θ(t) at steps of `h` until θ < 0 (RK4 at 1e-5 s): sliding end, or hinged with `pinned`.
fn rigid(m: f64, i: f64, hl: f64, theta0: f64, pinned: bool) -> Vec<(f64, f64)> {
    let acc = |th: f64, w: f64| {
        let (s, c) = th.sin_cos();
        if pinned {
            return -m * G * hl * c / (i + m * hl * hl);
        }
        (m * hl * hl * c * s * w * w - m * G * hl * c) / (m * hl * hl * c * c + i)
    };
    let h = 1e-5;
    let (mut th, mut w, mut out) = (theta0, 0.0f64, vec![(0.0, theta0)]);
    for k in 1..100_000 {
        let (k1t, k1w) = (w, acc(th, w));
        let (k2t, k2w) = (
            w + 0.5 * h * k1w,
            acc(th + 0.5 * h * k1t, w + 0.5 * h * k1w),
        );
        let (k3t, k3w) = (
            w + 0.5 * h * k2w,
            acc(th + 0.5 * h * k2t, w + 0.5 * h * k2w),
        );
        let (k4t, k4w) = (w + h * k3w, acc(th + h * k3t, w + h * k3w));
        th += h / 6.0 * (k1t + 2.0 * k2t + 2.0 * k3t + k4t);
        w += h / 6.0 * (k1w + 2.0 * k2w + 2.0 * k3w + k4w);
        if th < 0.0 {
            break;
        }
        if k % 100 == 0 {
            out.push((k as f64 * h, th));
        }
    }
    out
}

fn main() {
    let (r, hl, rho, theta0) = (0.01f64, 0.1f64, 1000.0, 0.5f64);
    let (m, i) = capsule_mass(rho, r, hl);
    let phi = std::f64::consts::FRAC_PI_2 - theta0;
    let text = format!(
        "[simulation]\ndt = 1e-3\nduration = 1.0\n[solver]\nmax_iterations = 60\ntolerance = 1e-7\n\
         [[material]]\nname = \"m\"\ndensity = {rho}\nfriction = 0.0\n\
         [[body]]\nshape = \"capsule\"\nradius = {r}\nhalf_length = {hl}\nposition = [0.0, 0.0, {z}]\n\
         orientation = [0.0, {qy}, 0.0, {qw}]\nmaterial = \"m\"\n\
         [[boundary]]\nkind = \"plane\"\npoint = [0.0, 0.0, 0.0]\nnormal = [0.0, 0.0, 1.0]\nmaterial = \"m\"\n",
        z = r + hl * theta0.sin(),
        qy = (0.5 * phi).sin(),
        qw = (0.5 * phi).cos()
    );
    let scene = parse_str(&text, Path::new("rod.toml")).expect("scene");
    let state = setup::build_bodies(&scene);
    let mut sim =
        Simulation::new(shared_context(), &state, setup::step_settings(&scene)).expect("sim");
    let mut engine = vec![(0.0, theta0)];
    for k in 1..=40 {
        sim.advance(5, 0).expect("steps");
        let q = sim.read_state().expect("state").rot[1];
        let axis = DQuat::from_xyzw(q[0] as f64, q[1] as f64, q[2] as f64, q[3] as f64) * DVec3::Z;
        engine.push((5.0 * k as f64, axis.z.asin()));
        if axis.z.asin() < 1e-3 {
            break;
        }
    }
    let ms = |v: Vec<(f64, f64)>| v.into_iter().map(|(t, th)| (t * 1e3, th)).collect();
    let panel = LinePanel {
        title: "Capsule rod falling on a frictionless plane (r 1 cm, 2·hl 20 cm, θ0 0.5 rad)"
            .into(),
        x_label: "time (ms)".into(),
        y_label: "θ above the plane (rad)".into(),
        series: vec![
            (
                "rigid body, sliding end".into(),
                ms(rigid(m, i[0], hl, theta0, false)),
            ),
            (
                "rigid body, hinged end".into(),
                ms(rigid(m, i[0], hl, theta0, true)),
            ),
            ("engine (GPU, dt = 1 ms; every 5 ms)".into(), engine),
        ],
    };
    let out = Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/images/capsule_rod_fall.png");
    plot_lines(&out, vec![panel]).expect("plot");
    println!("wrote {}", out.display());
}
