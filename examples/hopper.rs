//! Hopper discharge, built in code: a conical mesh hopper (orifice radius 12 mm) closed by
//! a kinematic gate, filled with spheres; the gate slides away and the discharged mass is
//! counted with `measure::MassFlow`. Run: `cargo run --release --example hopper`.

use bristlecone::bodies::*;
use bristlecone::collide::{BoundaryShape, CollideSettings};
use bristlecone::measure::{steady_rate, MassFlow};
use bristlecone::solve::SolverSettings;
use bristlecone::step::{ContactSetup, Simulation, StepSettings};

fn boundary(position: [f32; 3], motion: u32, shape: u32, index: u32) -> BodyInit {
    BodyInit {
        motion,
        ..BodyInit::fixed(shape, index, position, 0.2)
    }
}

/// Cone from radius 12 mm at z = 0 to 50 mm at z = 45 mm, then a bin up to 165 mm.
fn hopper_mesh() -> BoundaryShape {
    let rings = [(0.012f32, 0.0f32), (0.05, 0.045), (0.05, 0.165)];
    let n = 48u32;
    let mut vertices = Vec::new();
    for (r, z) in rings {
        for k in 0..n {
            let a = std::f32::consts::TAU * k as f32 / n as f32;
            vertices.push([r * a.cos(), r * a.sin(), z]);
        }
    }
    let mut triangles = Vec::new();
    for ring in 0..2 {
        for k in 0..n {
            let (a0, a1) = (ring * n + k, ring * n + (k + 1) % n);
            triangles.push([a0, a1 + n, a1]);
            triangles.push([a0, a0 + n, a1 + n]);
        }
    }
    BoundaryShape::Mesh {
        vertices,
        triangles,
    }
}

fn main() {
    let ctx = bristlecone::gpu::shared_context();
    let mut state = BodyState::default();
    state.push(&boundary([0.0, 0.0, 0.1], MOTION_FIXED, SHAPE_MESH, 0));
    state.push(&boundary(
        [0.0, 0.0, 0.097],
        MOTION_KINEMATIC,
        SHAPE_SOLID_BOX,
        1,
    ));
    let r = 0.0018;
    let mut k = 0;
    while state.len() < 2 + 1500 {
        let (i, j, l) = (k % 20, (k / 20) % 20, k / 400);
        k += 1;
        let (x, y) = ((i as f32 - 9.5) * 4.2e-3, (j as f32 - 9.5) * 4.2e-3);
        if x.hypot(y) < 0.044 {
            state.push(&BodyInit::sphere(
                [x, y, 0.15 + l as f32 * 4.2e-3],
                r,
                2500.0,
            ));
        }
    }
    let shapes = vec![
        hopper_mesh(),
        BoundaryShape::SolidBox {
            half_extents: [0.025, 0.025, 0.003],
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
                friction: vec![0.4],
            },
            solver: SolverSettings {
                max_iterations: 50,
                ..Default::default()
            },
        }),
    };
    let mut sim = Simulation::new(ctx, &state, settings).expect("simulation");
    sim.advance(300, 300).expect("filling");
    // Open the gate: slide it sideways for 0.1 s.
    sim.set_velocity(1, [0.5, 0.0, 0.0], [0.0; 3]);
    let mut flow = MassFlow::new([0.0, 0.0, 0.09], [0.0, 0.0, -1.0], &state, 2, 0.3);
    let (mut t, mut m) = (Vec::new(), Vec::new());
    for step in 0..60 {
        if step == 10 {
            sim.set_velocity(1, [0.0; 3], [0.0; 3]);
        }
        sim.advance(10, 10).expect("discharge");
        let s = sim.bodies.download_kinematics(&sim.ctx).expect("state");
        let sample = flow.update(&s, sim.time());
        t.push(sample.time);
        m.push(sample.mass_positive);
    }
    let (rate, se, dev) = steady_rate(&t, &m, (0.45, 0.9));
    println!(
        "discharged {:.4} kg; rate {rate:.4} ± {se:.4} kg/s (quarter slopes within {:.0} %)",
        m.last().unwrap(),
        100.0 * dev
    );
}
