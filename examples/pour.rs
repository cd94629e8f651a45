//! Pour and settle, built in code: spheres on a lattice fall into an open box.
//! Prints the kinetic energy as the bed settles, then the mean height and the largest
//! contact force. Run: `cargo run --release --example pour`.

use bristlecone::bodies::*;
use bristlecone::collide::{BoundaryShape, CollideSettings};
use bristlecone::measure;
use bristlecone::run::contact_forces;
use bristlecone::solve::SolverSettings;
use bristlecone::step::{ContactSetup, Simulation, StepSettings};

fn main() {
    let ctx = bristlecone::gpu::shared_context();
    let mut state = BodyState::default();
    state.push(&BodyInit::fixed(
        SHAPE_BOX_CONTAINER,
        0,
        [0.0, 0.0, 0.1],
        0.2,
    ));
    let r = 0.004;
    for k in 0..1000 {
        let (i, j, l) = (k % 10, (k / 10) % 10, k / 100);
        let p = [i as f32 - 4.5, j as f32 - 4.5, l as f32 + 1.0].map(|x| x * 2.2 * r);
        state.push(&BodyInit::sphere(p, r, 2500.0));
    }
    let settings = StepSettings {
        dt: 1e-3,
        gravity: [0.0, 0.0, -9.81],
        contact: Some(ContactSetup {
            models: Vec::new(),
            patch_cells: 0,
            shapes: vec![BoundaryShape::BoxContainer {
                half_extents: [0.05, 0.05, 0.1],
                open_top: true,
            }],
            collide: CollideSettings {
                envelope: 0.001,
                friction: vec![0.4],
            },
            solver: SolverSettings::default(),
        }),
    };
    let mut sim = Simulation::new(ctx, &state, settings).expect("simulation");
    for _ in 0..10 {
        let rec = sim.advance(50, 50).expect("steps");
        let last = rec.last().unwrap();
        println!(
            "t = {:.2} s  kinetic energy {:.3e} J  contacts {}",
            last.time, last.totals.kinetic_energy, last.contacts
        );
    }
    let s = sim.read_state().expect("state");
    let mean_z = s.pos[1..].iter().map(|p| p[2] as f64).sum::<f64>() / 1000.0;
    println!(
        "mean height {mean_z:.4} m, bed height (95 %) {:.4} m",
        measure::bed_height(&s, 1, 0.95)
    );
    let (contacts, impulses) = sim.read_contacts().expect("contacts");
    let forces = contact_forces(&s, &contacts, &impulses, sim.settings.dt);
    let fmax = forces
        .iter()
        .map(|c| c.force_on_b.iter().map(|x| x * x).sum::<f64>().sqrt())
        .fold(0.0, f64::max);
    let (floor, _) = measure::boundary_wrench(&forces, 0, [0.0; 3]);
    println!(
        "largest contact force {fmax:.3e} N; force on the box {:.3} N (weight {:.3} N)",
        floor[2],
        -9.81 * 1000.0 * 2500.0 * 4.0 / 3.0 * std::f64::consts::PI * (r as f64).powi(3)
    );
}
