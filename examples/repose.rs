//! Angle of repose against the rolling-resistance coefficient: a column of spheres released
//! on a floor collapses into a conical heap; `measure::repose_angle` fits its flank. Grains
//! and floor share one material (μ = 0.5) with rolling_friction μ_r (the pair takes the min).
//! Writes `assets/images/repose_rolling.png` and prints the table.
//! Run: `cargo run --release --example repose [-- GRAINS_PER_SIDE LAYERS SECONDS]`.

use bristlecone::bodies::*;
use bristlecone::collide::{BoundaryShape, CollideSettings};
use bristlecone::measure::{repose_angle, HeapAxis, Repose};
use bristlecone::model::rows::{material_row, with_rolling};
use bristlecone::plot::{plot_lines, LinePanel};
use bristlecone::scene::FrictionModel;
use bristlecone::solve::SolverSettings;
use bristlecone::step::{ContactSetup, Simulation, StepSettings};
use std::path::Path;

/// The heap left by a square column of `side × side × layers` spheres (r = 2.5 mm, spacing
/// 2.1 r, a deterministic jitter so the stack is not an equilibrium) after `seconds`, with
/// rolling resistance `mu_r`. Returns the fitted slope and the final kinetic energy.
pub fn heap(side: usize, layers: usize, seconds: f64, mu_r: f64) -> (Repose, f64) {
    let ctx = bristlecone::gpu::shared_context();
    let mut state = BodyState::default();
    state.push(&BodyInit::fixed(SHAPE_PLANE, 0, [0.0; 3], 0.2));
    let r = 0.0025f32;
    let a = 2.1 * r;
    let c = (side as f32 - 1.0) / 2.0;
    for k in 0..side * side * layers {
        let (i, j, l) = (k % side, (k / side) % side, k / (side * side));
        let jitter = |s: usize| ((s * 7919 % 101) as f32 / 101.0 - 0.5) * 0.1 * r;
        let p = [
            (i as f32 - c) * a + jitter(k),
            (j as f32 - c) * a + jitter(k + 37),
            r * 1.05 + l as f32 * a,
        ];
        state.push(&BodyInit::sphere(p, r, 2500.0));
    }
    let row = with_rolling(material_row(&FrictionModel::Coulomb), mu_r, 0.0);
    let settings = StepSettings {
        dt: 1e-3,
        gravity: [0.0, 0.0, -9.81],
        contact: Some(ContactSetup {
            models: vec![row],
            patch_cells: 0,
            shapes: vec![BoundaryShape::Plane],
            collide: CollideSettings {
                envelope: 0.0015,
                friction: vec![0.5],
            },
            solver: SolverSettings {
                max_iterations: 50,
                ..Default::default()
            },
        }),
    };
    let mut sim = Simulation::new(ctx, &state, settings).expect("simulation");
    let steps = (seconds / 1e-3).round() as u32;
    let rec = sim.advance(steps, steps.max(1) as u64).expect("steps");
    let ke = rec.last().map_or(f64::NAN, |r| r.totals.kinetic_energy);
    let s = sim.read_state().expect("state");
    (
        repose_angle(&s, 1, HeapAxis::Radial, Some([0.0, 0.0]), None),
        ke,
    )
}

fn main() {
    let args: Vec<f64> = std::env::args()
        .skip(1)
        .map(|a| a.parse().unwrap())
        .collect();
    let (side, layers, seconds) = match args[..] {
        [s, l, t] => (s as usize, l as usize, t),
        _ => (8, 24, 1.5),
    };
    let mut points = Vec::new();
    println!("{} grains, {seconds} s", side * side * layers);
    println!("mu_r  angle_deg  slope  bins  kinetic_energy_J");
    for mu_r in [0.0, 0.05, 0.1, 0.2, 0.4] {
        let (h, ke) = heap(side, layers, seconds, mu_r);
        println!(
            "{mu_r:.2}  {:.2}  {:.4}  {}  {ke:.2e}",
            h.angle_deg, h.slope, h.bins
        );
        points.push((mu_r, h.angle_deg));
    }
    let panel = LinePanel {
        title: format!(
            "Angle of repose of a collapsed column ({} spheres, μ = 0.5) against rolling resistance",
            side * side * layers
        ),
        x_label: "rolling_friction μ_r".into(),
        y_label: "repose angle (°)".into(),
        series: vec![("engine (repose_angle fit)".into(), points)],
    };
    let out = Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/images/repose_rolling.png");
    plot_lines(&out, vec![panel]).expect("plot");
    println!("wrote {}", out.display());
}
