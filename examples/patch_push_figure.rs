//! Book figure of planar LuGre patches in the loop (book: Contact patches): the box of
//! `assets/scenes/patch_push.toml` pushed off-centre by a frictionless kinematic sphere,
//! run once with `lugre_patch` (21 × 21 bristle cells on the base) and once with
//! `lugre_reduced` (3 states, ellipsoid limit surface). Each run's turn rate ω/v_x against
//! limit-surface theory at the pusher's current lateral offset y_b (box frame): the exact
//! uniform-square surface (`patch::cpu::push_turn_rate`) and the ellipsoid's −y_b/r².
//! Writes assets/images/patch_push.png.
//! Run: `cargo run --release --example patch_push_figure`. (Body 0 is the plane.)

use bristlecone::gpu::shared_context;
use bristlecone::patch::{cpu, LugreParams, Outline, PatchShape, Pressure};
use bristlecone::plot::{plot_lines, LinePanel};
use bristlecone::scene::parse_str;
use bristlecone::setup;
use bristlecone::step::Simulation;
use glam::{DQuat, DVec3};
use std::path::Path;

type Series = Vec<(f64, f64)>;

/// (simulated ω/v_x, exact-surface prediction, ellipsoid prediction) over time.
fn run(text: &str, file: &Path, square: &cpu::Patch) -> (Series, Series, Series) {
    let scene = parse_str(text, file).unwrap();
    let state = setup::build_bodies(&scene);
    let mut sim = Simulation::new(shared_context(), &state, setup::step_settings(&scene)).unwrap();
    let r = (2f64.sqrt() + (1.0 + 2f64.sqrt()).ln()) / 6.0 * 0.1;
    let p = LugreParams {
        sigma2: 0.0,
        ..LugreParams::default()
    };
    let (mut got, mut exact, mut ellipsoid) = (Vec::new(), Vec::new(), Vec::new());
    for k in 1..=50 {
        sim.advance(10, 0).unwrap();
        let st = sim.read_state().unwrap();
        let d = |v: [f32; 4]| DVec3::new(v[0] as f64, v[1] as f64, v[2] as f64);
        let q = st.rot[1].map(|x| x as f64);
        let q = DQuat::from_xyzw(q[0], q[1], q[2], q[3]);
        let vx = d(st.vel[1]).dot(q * DVec3::X);
        if vx < 1e-3 {
            continue; // before the pusher arrives
        }
        let yb = (q.inverse() * (d(st.pos[2]) - d(st.pos[1]))).y;
        let t = k as f64 * 1e-2;
        got.push((t, d(st.omega[1]).z / vx));
        exact.push((t, cpu::push_turn_rate(&p, square, yb)));
        ellipsoid.push((t, -yb / (r * r)));
    }
    (got, exact, ellipsoid)
}

fn main() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let file = root.join("assets/scenes/patch_push.toml");
    let text = std::fs::read_to_string(&file).unwrap();
    let reduced = text.replace(
        "kind = \"lugre_patch\", sigma0 = 1e5, sigma1 = 300.0, sigma2 = 0.0, mu_static = 0.3, v_stribeck = 1e-3, cells = 21",
        "kind = \"lugre_reduced\", sigma0 = 1e5, sigma1 = 300.0, sigma2 = 0.0, mu_static = 0.3, v_stribeck = 1e-3",
    );
    assert_ne!(
        reduced, text,
        "the scene's model line changed: update this example"
    );
    let shape = PatchShape::new(
        &Pressure::Uniform(Outline::Rectangle { a: 0.1, b: 0.1 }),
        21,
        21,
        None,
        1.0,
    )
    .unwrap();
    let square = cpu::Patch { shape, f_n: 1.0 };
    let (dist, exact, ellipsoid) = run(&text, &file, &square);
    let (red, _, _) = run(&reduced, &file, &square);
    let panels = vec![LinePanel {
        title: "box pushed 2.5 cm off centre: turn rate ω/v_x".into(),
        x_label: "time [s]".into(),
        y_label: "ω / v_x [1/m]".into(),
        series: vec![
            ("lugre_patch (21 × 21 cells)".into(), dist),
            ("theory, exact square limit surface".into(), exact),
            ("lugre_reduced (ellipsoid)".into(), red),
            ("theory, ellipsoid −y/r²".into(), ellipsoid),
        ],
    }];
    let out = root.join("assets/images/patch_push.png");
    plot_lines(&out, panels).unwrap();
    println!("wrote {}", out.display());
}
