//! f32 positions far from the origin: one small pile (a 3-sphere base and one on top,
//! radius 5 mm, on a plane) placed at x = 0, 1, 10 and 100 km, every other input equal.
//! Prints, per offset, the f32 spacing there, the largest penetration of the last step
//! and how far the top sphere's settled position (relative to the offset) is from the
//! pile's at the origin. The figures behind `scene::precision`'s warning and refusal.
//! Run: `cargo run --release --example far_origin`.

use bristlecone::bodies::*;
use bristlecone::collide::{BoundaryShape, CollideSettings};
use bristlecone::solve::SolverSettings;
use bristlecone::step::{ContactSetup, Simulation, StepSettings};

const RADIUS: f32 = 0.005;
const STEPS: u32 = 300;

/// (largest penetration of the last step, top sphere's position relative to `x0`).
fn settle(x0: f32) -> (f64, [f64; 3]) {
    let ctx = bristlecone::gpu::shared_context();
    let mut state = BodyState::default();
    state.push(&BodyInit::fixed(SHAPE_PLANE, 0, [x0, 0.0, 0.0], 0.0));
    let r = RADIUS;
    let gap = 1.02 * 2.0 * r;
    let base = [[0.0, 0.0], [gap, 0.0], [0.5 * gap, 0.866 * gap]];
    for [x, y] in base {
        state.push(&BodyInit::sphere([x0 + x, y, r], r, 2500.0));
    }
    let top = state.len();
    state.push(&BodyInit::sphere(
        [x0 + 0.5 * gap, 0.289 * gap, 2.8 * r],
        r,
        2500.0,
    ));
    let settings = StepSettings {
        dt: 1e-4,
        gravity: [0.0, 0.0, -9.81],
        contact: Some(ContactSetup {
            models: Vec::new(),
            patch_cells: 0,
            shapes: vec![BoundaryShape::Plane],
            collide: CollideSettings {
                envelope: 0.001,
                friction: vec![0.5],
            },
            solver: SolverSettings {
                max_iterations: 200,
                tolerance: 1e-7,
                ..Default::default()
            },
        }),
    };
    let mut sim = Simulation::new(ctx, &state, settings).expect("simulation");
    let records = sim.advance(STEPS, 1).expect("steps");
    let s = sim.bodies.download_kinematics(&sim.ctx).expect("state");
    let p = s.pos[top];
    let rel = [p[0] as f64 - x0 as f64, p[1] as f64, p[2] as f64];
    let pen = records.last().map_or(0.0, |r| r.max_penetration);
    (pen, rel)
}

fn main() {
    let (pen0, at0) = settle(0.0);
    println!("offset_m,f32_spacing_m,max_penetration_m,top_sphere_shift_m");
    println!("0,{:.3e},{pen0:.3e},0", f32::MIN_POSITIVE);
    for x0 in [1e3f32, 1e4, 1e5] {
        let (pen, at) = settle(x0);
        let shift = (0..3).map(|i| (at[i] - at0[i]).powi(2)).sum::<f64>().sqrt();
        let spacing = x0.next_up() - x0;
        println!("{x0},{spacing:.3e},{pen:.3e},{shift:.3e}");
    }
}
