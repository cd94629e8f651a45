//! Column collapse, built in code: a column of spheres in a tube (a kinematic cylinder
//! container, open end down) on a floor plane; the tube is lifted and the column spreads.
//! Prints the runout. Run: `cargo run --release --example column_collapse`.

use bristlecone::bodies::*;
use bristlecone::collide::{BoundaryShape, CollideSettings};
use bristlecone::solve::SolverSettings;
use bristlecone::step::{ContactSetup, Simulation, StepSettings};

fn boundary(
    position: [f32; 3],
    orientation: [f32; 4],
    motion: u32,
    shape: u32,
    index: u32,
) -> BodyInit {
    BodyInit {
        orientation,
        motion,
        ..BodyInit::fixed(shape, index, position, 0.2)
    }
}

fn main() {
    let ctx = bristlecone::gpu::shared_context();
    let mut state = BodyState::default();
    let identity = [0.0, 0.0, 0.0, 1.0];
    state.push(&boundary([0.0; 3], identity, MOTION_FIXED, SHAPE_PLANE, 0));
    // Axis pointing down: the closed cap is at the top, the open end on the floor.
    let down = glam::Quat::from_rotation_arc(glam::Vec3::Z, glam::Vec3::NEG_Z).to_array();
    state.push(&boundary(
        [0.0, 0.0, 0.105],
        down,
        MOTION_KINEMATIC,
        SHAPE_CYLINDER_CONTAINER,
        1,
    ));
    let r = 0.0025;
    for k in 0..(11 * 11 * 19) {
        let (i, j, l) = (k % 11, (k / 11) % 11, k / 121);
        // A deterministic ±0.14 mm jitter: a perfect simple-cubic stack of frictional spheres
        // is an equilibrium and would stand as columns after the tube is lifted.
        let jitter = |s: usize| ((s * 7919 % 101) as f32 / 101.0 - 0.5) * 2.8e-4;
        let (x, y) = (
            (i as f32 - 5.0) * 5.3e-3 + jitter(k),
            (j as f32 - 5.0) * 5.3e-3 + jitter(k + 37),
        );
        if x.hypot(y) < 0.027 {
            state.push(&BodyInit::sphere(
                [x, y, (l as f32 + 0.55) * 5.3e-3],
                r,
                2500.0,
            ));
        }
    }
    let shapes = vec![
        BoundaryShape::Plane,
        BoundaryShape::CylinderContainer {
            radius: 0.03,
            height: 0.105,
            open_top: true,
        },
    ];
    let settings = StepSettings {
        dt: 1e-3,
        gravity: [0.0, 0.0, -9.81],
        contact: Some(ContactSetup {
            models: Vec::new(),
            patch_cells: 0,
            shapes,
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
    sim.advance(100, 100).expect("settling");
    sim.set_velocity(1, [0.0, 0.0, 1.0], [0.0; 3]);
    for _ in 0..5 {
        sim.advance(100, 100).expect("collapse");
        let s = sim.bodies.download_kinematics(&sim.ctx).expect("state");
        let runout = s.pos[2..]
            .iter()
            .map(|p| (p[0] as f64).hypot(p[1] as f64))
            .fold(0.0, f64::max);
        let top = s.pos[2..].iter().map(|p| p[2]).fold(0.0, f32::max);
        println!(
            "t = {:.1} s: runout {runout:.3} m, top {top:.3} m",
            sim.time()
        );
    }
}
