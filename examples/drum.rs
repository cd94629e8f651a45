//! Rotating drum, built in code: a horizontal cylinder container (kinematic, turning about
//! its axis) partly filled with spheres. Prints the torque of the grains on the drum.
//! Run: `cargo run --release --example drum`.

use bristlecone::bodies::*;
use bristlecone::collide::{BoundaryShape, CollideSettings};
use bristlecone::measure::boundary_wrench;
use bristlecone::run::contact_forces;
use bristlecone::solve::SolverSettings;
use bristlecone::step::{ContactSetup, Simulation, StepSettings};

fn main() {
    let ctx = bristlecone::gpu::shared_context();
    let mut state = BodyState::default();
    // Axis along +y: rotate local +z onto +y; base centre at y = -0.025 on the axis.
    let q = glam::Quat::from_rotation_arc(glam::Vec3::Z, glam::Vec3::Y);
    state.push(&BodyInit {
        orientation: q.to_array(),
        motion: MOTION_KINEMATIC,
        ..BodyInit::fixed(SHAPE_CYLINDER_CONTAINER, 0, [0.0, -0.025, 0.07], 0.08)
    });
    let r = 0.002;
    for k in 0..800 {
        let (i, j, l) = (k % 16, (k / 16) % 10, k / 160);
        let p = [
            (i as f32 - 7.5) * 4.2e-3,
            (j as f32 - 4.5) * 4.2e-3,
            0.03 + l as f32 * 4.2e-3,
        ];
        state.push(&BodyInit::sphere(p, r, 2500.0));
    }
    let settings = StepSettings {
        dt: 1e-3,
        gravity: [0.0, 0.0, -9.81],
        contact: Some(ContactSetup {
            models: Vec::new(),
            patch_cells: 0,
            shapes: vec![BoundaryShape::CylinderContainer {
                radius: 0.06,
                height: 0.05,
                open_top: false,
            }],
            collide: CollideSettings {
                envelope: 0.001,
                friction: vec![0.4],
            },
            solver: SolverSettings {
                max_iterations: 50,
                ..Default::default()
            },
        }),
    };
    let mut sim = Simulation::new(ctx, &state, settings).expect("simulation");
    sim.advance(200, 200).expect("settling");
    sim.set_velocity(0, [0.0; 3], [0.0, std::f32::consts::PI, 0.0]);
    for _ in 0..8 {
        sim.advance(100, 100).expect("rotation");
        let s = sim.bodies.download_kinematics(&sim.ctx).expect("state");
        let (c, g) = sim.read_contacts().expect("contacts");
        let forces = contact_forces(&s, &c, &g, sim.settings.dt);
        let (_, torque) = boundary_wrench(&forces, 0, [0.0, 0.0, 0.07]);
        println!(
            "t = {:.1} s: torque of the grains about the axis {:.3e} N·m",
            sim.time(),
            torque[1]
        );
    }
}
