//! Book figure of the `lugre_reduced` coupling (book: Contact patches): the box of
//! `assets/scenes/patch_spin.toml` (10 cm square base, μ = 0.3) spun at 20 rad/s and slid at
//! 0.3 m/s on a plane, its spin ω(t) and speed v(t) against the analytic limit-surface
//! deceleration of a pure spin, μ m g r / I with r = 0.3826 a (valid while the slide is
//! slow next to r ω: the combined motion decelerates the spin less, as the limit surface
//! predicts). Writes assets/images/patch_spin.png.
//! Run: `cargo run --release --example patch_spin_figure`.

use bristlecone::gpu::shared_context;
use bristlecone::plot::{plot_lines, LinePanel};
use bristlecone::run::load_scene;
use bristlecone::setup;
use bristlecone::step::Simulation;
use std::path::Path;

fn main() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let (scene, _) = load_scene(&root.join("assets/scenes/patch_spin.toml")).unwrap();
    let state = setup::build_bodies(&scene);
    let mut sim = Simulation::new(shared_context(), &state, setup::step_settings(&scene)).unwrap();
    let (mu, g, a) = (0.3, 9.81, 0.1);
    let r = (2f64.sqrt() + (1.0 + 2f64.sqrt()).ln()) / 6.0 * a;
    let decel = 6.0 * mu * g * r / (a * a);
    let (mut w, mut v, mut wa) = (Vec::new(), Vec::new(), Vec::new());
    for k in 0..=60 {
        let st = sim.read_state().unwrap();
        let t = k as f64 * 5e-3;
        let om = st.omega[1][2] as f64;
        let vel = st.vel[1];
        w.push((t, om));
        v.push((t, (vel[0] as f64).hypot(vel[1] as f64)));
        wa.push((t, (20.0 - decel * t).max(0.0)));
        sim.advance(5, 0).unwrap();
    }
    let panels = vec![
        LinePanel {
            title: "box spun (20 rad/s) and slid (0.3 m/s) on a plane, lugre_reduced".into(),
            x_label: "time [s]".into(),
            y_label: "spin ω [rad/s]".into(),
            series: vec![
                ("simulation".into(), w),
                ("pure spin: μ m g r / I".into(), wa),
            ],
        },
        LinePanel {
            title: "sliding speed of the box centre".into(),
            x_label: "time [s]".into(),
            y_label: "speed [m/s]".into(),
            series: vec![("simulation".into(), v)],
        },
    ];
    let out = root.join("assets/images/patch_spin.png");
    plot_lines(&out, panels).unwrap();
    println!("wrote {}", out.display());
}
