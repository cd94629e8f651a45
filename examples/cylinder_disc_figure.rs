//! Book figure of the cylinder end-disc patch (book: Contact patches): a cylinder (R = 5 cm,
//! half length 2 cm, μ = 0.3) spun at 20 rad/s standing on its end, with `lugre_reduced`
//! (the disc's patch: torque μ m g · 2R/3, spin decays at 4μg/(3R)) and with Coulomb
//! friction on its 4 rim points (exact cone: torque μ m g R, 2μg/R), against both
//! analytic lines. Writes assets/images/cylinder_disc_spin.png.
//! Run: `cargo run --release --example cylinder_disc_figure`.

use bristlecone::gpu::shared_context;
use bristlecone::plot::{plot_lines, LinePanel};
use bristlecone::scene::parse_str;
use bristlecone::setup;
use bristlecone::step::Simulation;
use std::path::Path;

const LUGRE: &str = r#"model = { kind = "lugre_reduced", sigma0 = 1e5, sigma1 = 300.0, sigma2 = 0.0, mu_static = 0.3, v_stribeck = 1e-3 }"#;

/// ω(t) every 5 ms for 0.3 s of the spun cylinder with the material line `model`.
fn spin(model: &str) -> Vec<(f64, f64)> {
    let text = format!(
        r#"
[simulation]
dt = 1e-3
duration = 0.3
[solver]
max_iterations = 100
tolerance = 1e-6
cone = "exact"
[[material]]
name = "m"
density = 1000.0
friction = 0.3
{model}
[[body]]
shape = "cylinder"
radius = 0.05
half_length = 0.02
position = [0.0, 0.0, 0.02]
angular_velocity = [0.0, 0.0, 20.0]
material = "m"
[[boundary]]
kind = "plane"
point = [0.0, 0.0, 0.0]
normal = [0.0, 0.0, 1.0]
material = "m"
"#
    );
    let scene = parse_str(&text, Path::new("disc.toml")).unwrap();
    let state = setup::build_bodies(&scene);
    let mut sim = Simulation::new(shared_context(), &state, setup::step_settings(&scene)).unwrap();
    let mut w = Vec::new();
    for k in 0..=60 {
        w.push((
            k as f64 * 5e-3,
            sim.read_state().unwrap().omega[1][2] as f64,
        ));
        sim.advance(5, 0).unwrap();
    }
    w
}

fn main() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let (mu, g, r) = (0.3, 9.81, 0.05);
    let line = |decel: f64| -> Vec<(f64, f64)> {
        (0..=60)
            .map(|k| {
                let t = k as f64 * 5e-3;
                (t, (20.0 - decel * t).max(0.0))
            })
            .collect()
    };
    let panels = vec![LinePanel {
        title: "cylinder spun on its end (R = 5 cm, 20 rad/s, μ = 0.3)".into(),
        x_label: "time [s]".into(),
        y_label: "spin ω [rad/s]".into(),
        series: vec![
            ("lugre_reduced: disc patch".into(), spin(LUGRE)),
            ("disc: 4μg/(3R)".into(), line(4.0 * mu * g / (3.0 * r))),
            ("Coulomb on the 4 rim points".into(), spin("")),
            ("rim: 2μg/R".into(), line(2.0 * mu * g / r)),
        ],
    }];
    let out = root.join("assets/images/cylinder_disc_spin.png");
    plot_lines(&out, panels).unwrap();
    println!("wrote {}", out.display());
}
