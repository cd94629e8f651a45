//! Angle of repose of a cohesive heap against the granular Bond number Bo = F_c / (m g), the
//! pull-off force per contact over a grain's weight. The heap is `assets/scenes/cohesive_heap.toml`
//! (a free column of glass beads released on a floor, μ = 0.5, rolling resistance μ_r = 0.1
//! so that the cohesionless reference forms a heap rather than rolling apart) run with its material's
//! `cohesion` set to Bo m g for each Bo: same grains, geometry and seed. `measure::repose_angle`
//! fits the flank; a fit whose RMS residual exceeds a grain radius, or that has fewer than 4
//! bins, has no straight flank to measure and is reported as such.
//! `height_kept` (the final over the initial column height) tells a heap from a column that
//! stood, whose flat top the band would fit at a slope near 0. Prints the table and writes
//! `assets/images/cohesive_heap.png` (the height kept against Bo).
//!
//! Cohesive powders stand at steeper angles as the cohesive force outgrows the grain weight
//! (Nase, Vargas, Abatan & McCarthy 2001, Powder Technol.; Castellanos 2005, Adv. Phys.): the
//! angle should rise with Bo from the cohesionless one. With the scene's converged solve
//! (Gauss–Seidel) this lattice column stands from Bo = 0.25 on, so what the sweep shows is
//! the height kept; the angle's rise needs poured heaps (book: Contact models).
//!
//! Run: `cargo run --example cohesive_heap [-- SCALE SECONDS]` (the scene's full size and
//! duration by default).

use bristlecone::bodies::BodyState;
use bristlecone::gpu::shared_context;
use bristlecone::measure::{bed_height, repose_angle, HeapAxis, Repose};
use bristlecone::plot::{plot_points_on_lines, LinePanel};
use bristlecone::scene::{parse_str_scaled, Scene};
use bristlecone::setup;
use bristlecone::step::Simulation;
use std::path::Path;

/// The Bond numbers swept; 0 is the cohesionless reference.
const BOND: [f64; 5] = [0.0, 0.25, 0.5, 1.0, 1.5];

/// One settled heap.
struct Heap {
    fit: Repose,
    /// Kinetic energy at the end, J: near zero once the heap has come to rest.
    kinetic_energy: f64,
    /// Kinetic energy at its peak during the collapse, J (the scale for "near zero").
    peak_kinetic_energy: f64,
    grain_radius: f64,
    /// The column's height (99 % quantile of the grain tops) at the end over at the start.
    height_kept: f64,
}

impl Heap {
    /// Whether the fit found a straight flank (see the module comment).
    fn flank_is_straight(&self) -> bool {
        self.fit.bins >= 4 && self.fit.flank_rms <= self.grain_radius
    }
}

/// Runs `scene` with every material's cohesion set to `bond` times the first grain's weight.
fn heap(scene: &Scene, bond: f64, steps: u32) -> Heap {
    let mut scene = scene.clone();
    let nb = setup::boundary_count(&scene);
    let first = setup::build_bodies(&scene);
    let weight = scene.sim.gravity.iter().map(|g| g * g).sum::<f64>().sqrt()
        / first.mass_props[nb][3] as f64;
    for m in &mut scene.materials {
        m.cohesion = bond * weight;
    }
    let state = setup::build_bodies(&scene);
    let mut sim =
        Simulation::new(shared_context(), &state, setup::step_settings(&scene)).expect("sim");
    let rec = sim.advance(steps, 10).expect("steps");
    let energies: Vec<f64> = rec.iter().map(|r| r.totals.kinetic_energy).collect();
    let s = sim.read_state().expect("state");
    let height = |s: &BodyState| bed_height(s, nb, 0.99);
    Heap {
        height_kept: height(&s) / height(&state),
        fit: repose_angle(&s, nb, HeapAxis::Radial, Some([0.0, 0.0]), None),
        kinetic_energy: *energies.last().expect("records"),
        peak_kinetic_energy: energies.iter().copied().fold(0.0, f64::max),
        grain_radius: s.pos[nb][3] as f64,
    }
}

fn main() {
    let args: Vec<f64> = std::env::args()
        .skip(1)
        .map(|a| a.parse().expect("arguments: SCALE SECONDS"))
        .collect();
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/scenes/cohesive_heap.toml");
    let text = std::fs::read_to_string(&path).expect("scene file");
    let scale = args.first().copied().unwrap_or(1.0);
    let scene = parse_str_scaled(&text, &path, scale).unwrap_or_else(|e| panic!("{e}"));
    let steps = args
        .get(1)
        .map_or(scene.sim.steps, |s| (s / scene.sim.dt).round() as u64) as u32;
    println!(
        "{} grains, {} s",
        scene.bodies.len(),
        steps as f64 * scene.sim.dt
    );
    println!("Bo  angle_deg  bins  flank_rms/r  height_kept  kinetic_energy_J  KE/peak  flank");
    let mut points = Vec::new();
    for bond in BOND {
        let h = heap(&scene, bond, steps);
        let straight = h.flank_is_straight();
        println!(
            "{bond:.2}  {:.1}  {}  {:.2}  {:.2}  {:.2e}  {:.1e}  {}",
            h.fit.angle_deg,
            h.fit.bins,
            h.fit.flank_rms / h.grain_radius,
            h.height_kept,
            h.kinetic_energy,
            h.kinetic_energy / h.peak_kinetic_energy,
            if straight {
                "straight"
            } else {
                "NO STRAIGHT FLANK: angle not a repose angle"
            }
        );
        points.push((bond, h.height_kept));
    }
    // The height kept, not the angle: a column that stands has no flank to fit.
    let panel = LinePanel {
        title: format!(
            "Cohesive column released on a floor ({} beads, μ = 0.5, μ_r = 0.1)",
            scene.bodies.len()
        ),
        x_label: "Bond number F_c / (m g)".into(),
        y_label: "height kept at the end".into(),
        series: Vec::new(),
    };
    let points = vec![("engine, one column per Bond number".into(), points)];
    let out = Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/images/cohesive_heap.png");
    plot_points_on_lines(&out, panel, points).expect("plot");
    println!("wrote {}", out.display());
}
