//! Ball drop, built in code: a lattice bed in a box and a steel ball starting above it
//! (it falls while the bed settles). Prints the ball's height and the largest contact
//! force on it. Run: `cargo run --release --example ball_drop`.

use bristlecone::bodies::*;
use bristlecone::collide::{BoundaryShape, CollideSettings};
use bristlecone::run::contact_forces;
use bristlecone::solve::SolverSettings;
use bristlecone::step::{ContactSetup, Simulation, StepSettings};

fn main() {
    let ctx = bristlecone::gpu::shared_context();
    let mut state = BodyState::default();
    state.push(&BodyInit::fixed(
        SHAPE_BOX_CONTAINER,
        0,
        [0.0, 0.0, 0.06],
        0.1,
    ));
    let r = 0.0025;
    for k in 0..(18 * 18 * 5) {
        let (i, j, l) = (k % 18, (k / 18) % 18, k / 324);
        let p = [i as f32 - 8.5, j as f32 - 8.5, l as f32 + 0.55].map(|x| x * 5.3e-3);
        state.push(&BodyInit::sphere(p, r, 2500.0));
    }
    let ball = state.len() as u32;
    state.push(&BodyInit {
        velocity: [0.0, 0.0, -1.0],
        material: 1,
        ..BodyInit::sphere([0.0, 0.0, 0.09], 0.0075, 7800.0)
    });
    let settings = StepSettings {
        dt: 1e-3,
        gravity: [0.0, 0.0, -9.81],
        contact: Some(ContactSetup {
            models: Vec::new(),
            patch_cells: 0,
            shapes: vec![BoundaryShape::BoxContainer {
                half_extents: [0.05, 0.05, 0.06],
                open_top: true,
            }],
            collide: CollideSettings {
                envelope: 0.0015,
                friction: vec![0.4, 0.3],
            },
            solver: SolverSettings {
                max_iterations: 100,
                tolerance: 1e-5,
                ..Default::default()
            },
        }),
    };
    let mut sim = Simulation::new(ctx, &state, settings).expect("simulation");
    for _ in 0..10 {
        sim.advance(10, 10).expect("steps");
        let s = sim.bodies.download_kinematics(&sim.ctx).expect("state");
        let (c, g) = sim.read_contacts().expect("contacts");
        let on_ball = contact_forces(&s, &c, &g, sim.settings.dt)
            .into_iter()
            .filter(|f| f.body_a == ball || f.body_b == ball)
            .map(|f| f.force_on_b.iter().map(|x| x * x).sum::<f64>().sqrt())
            .fold(0.0, f64::max);
        let b = s.pos[ball as usize];
        println!(
            "t = {:.3} s: ball z = {:.4} m, vz = {:.3} m/s, largest contact force {on_ball:.3} N",
            sim.time(),
            b[2],
            s.vel[ball as usize][2]
        );
    }
}
