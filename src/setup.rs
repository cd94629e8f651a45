//! From a validated [`Scene`] to what the GPU stages need: the body arrays (boundaries
//! first, then grains) and the step settings.

use crate::bodies::*;
use crate::collide::{BoundaryShape as Shape, CollideSettings};
use crate::scene::SolverKind as SceneSolverKind;
use crate::scene::{BoundaryShape, Motion, Scene};
use crate::solve::{SolverKind, SolverSettings};
use crate::step::{ContactSetup, StepSettings};

fn motion_code(m: Motion) -> u32 {
    match m {
        Motion::Dynamic => MOTION_DYNAMIC,
        Motion::Kinematic => MOTION_KINEMATIC,
        Motion::Fixed => MOTION_FIXED,
    }
}

fn f3(a: [f64; 3]) -> [f32; 3] {
    a.map(|x| x as f32)
}

/// Number of leading bodies that are boundaries.
pub fn boundary_count(scene: &Scene) -> usize {
    scene.boundaries.len()
}

/// Body arrays of the scene: boundaries at indices `0..nb` (shape index = boundary index),
/// then the scene's bodies in order.
pub fn build_bodies(scene: &Scene) -> BodyState {
    let mut s = BodyState::default();
    for (k, b) in scene.boundaries.iter().enumerate() {
        let (shape, bound) = match &b.shape {
            BoundaryShape::Plane => (SHAPE_PLANE, 0.0),
            BoundaryShape::BoxContainer { half_extents, .. } => (
                SHAPE_BOX_CONTAINER,
                glam::DVec3::from_array(*half_extents).length(),
            ),
            BoundaryShape::SolidBox { half_extents } => (
                SHAPE_SOLID_BOX,
                glam::DVec3::from_array(*half_extents).length(),
            ),
            BoundaryShape::CylinderContainer { radius, height, .. } => {
                (SHAPE_CYLINDER_CONTAINER, radius.hypot(*height))
            }
            BoundaryShape::SolidCylinder { radius, height } => {
                (SHAPE_SOLID_CYLINDER, radius.hypot(*height))
            }
            BoundaryShape::Mesh { vertices, .. } => (
                SHAPE_MESH,
                vertices
                    .iter()
                    .map(|v| glam::DVec3::from_array(*v).length())
                    .fold(0.0, f64::max),
            ),
        };
        s.push(&BodyInit {
            position: f3(b.position),
            radius: bound as f32,
            orientation: b.orientation.map(|x| x as f32),
            velocity: f3(b.velocity),
            angular_velocity: f3(b.angular_velocity),
            // Dynamic boundaries carry their explicit mass properties; others none.
            inv_mass: b.mass.map_or(0.0, |(m, _)| (1.0 / m) as f32),
            inv_inertia: b
                .mass
                .map_or([0.0; 3], |(_, i)| i.map(|x| (1.0 / x) as f32)),
            motion: motion_code(b.motion),
            material: b.material as u32,
            shape,
            shape_index: k as u32,
        });
    }
    let mut grains = 0;
    for b in &scene.bodies {
        let radius = b.shape.bounding_radius();
        // A grain with a shape record indexes it after the boundaries' (see
        // `boundary_shapes`), in body order.
        let shape = b.shape.id();
        let shape_index = if shape == SHAPE_SPHERE {
            0
        } else {
            grains += 1;
            (scene.boundaries.len() + grains - 1) as u32
        };
        let dynamic = b.motion == Motion::Dynamic;
        let inv = |x: f64| if dynamic { (1.0 / x) as f32 } else { 0.0 };
        s.push(&BodyInit {
            position: f3(b.position),
            radius: radius as f32,
            orientation: b.orientation.map(|x| x as f32),
            velocity: if b.motion == Motion::Fixed {
                [0.0; 3]
            } else {
                f3(b.velocity)
            },
            angular_velocity: if b.motion == Motion::Fixed {
                [0.0; 3]
            } else {
                f3(b.angular_velocity)
            },
            inv_mass: inv(b.mass),
            inv_inertia: b.inertia.map(inv),
            motion: motion_code(b.motion),
            material: b.material as u32,
            shape,
            shape_index,
        });
    }
    push_pools(scene, &mut s);
    s
}

/// The inflows' pools after the scene's bodies, in inflow order: spheres parked at the
/// centre of their inflow's region (no stage sees them until the run loop activates them).
fn push_pools(scene: &Scene, s: &mut BodyState) {
    for f in &scene.inflows {
        let (lo, hi) = f.region.aabb();
        let centre = [0, 1, 2].map(|k| (0.5 * (lo[k] + hi[k])) as f32);
        for g in &f.pool {
            s.push(&BodyInit {
                position: centre,
                radius: g.radius as f32,
                orientation: [0.0, 0.0, 0.0, 1.0],
                velocity: [0.0; 3],
                angular_velocity: [0.0; 3],
                inv_mass: (1.0 / g.mass) as f32,
                inv_inertia: [(1.0 / g.inertia) as f32; 3],
                motion: MOTION_PARKED,
                material: g.material as u32,
                shape: SHAPE_SPHERE,
                shape_index: 0,
            });
        }
    }
}

/// Shapes for collision: the boundaries' (indexed like the scene's boundaries), then each
/// grain's record (`BodyShape::grain_record`; none for spheres), in body order.
pub fn boundary_shapes(scene: &Scene) -> Vec<Shape> {
    let grains = scene.bodies.iter().filter_map(|b| b.shape.grain_record());
    scene
        .boundaries
        .iter()
        .map(|b| match &b.shape {
            BoundaryShape::Plane => Shape::Plane,
            BoundaryShape::BoxContainer {
                half_extents,
                open_top,
            } => Shape::BoxContainer {
                half_extents: f3(*half_extents),
                open_top: *open_top,
            },
            BoundaryShape::SolidBox { half_extents } => Shape::SolidBox {
                half_extents: f3(*half_extents),
            },
            BoundaryShape::CylinderContainer {
                radius,
                height,
                open_top,
            } => Shape::CylinderContainer {
                radius: *radius as f32,
                height: *height as f32,
                open_top: *open_top,
            },
            BoundaryShape::SolidCylinder { radius, height } => Shape::SolidCylinder {
                radius: *radius as f32,
                height: *height as f32,
            },
            BoundaryShape::Mesh {
                vertices,
                triangles,
                ..
            } => Shape::Mesh {
                vertices: vertices.iter().map(|v| f3(*v)).collect(),
                triangles: triangles.clone(),
            },
        })
        .chain(grains)
        .collect()
}

/// Solver settings of the scene.
pub fn solver_settings(scene: &Scene) -> SolverSettings {
    let s = &scene.solver;
    SolverSettings {
        kind: match s.kind {
            SceneSolverKind::Apgd => SolverKind::Apgd,
            SceneSolverKind::Jacobi => SolverKind::Jacobi,
            SceneSolverKind::GaussSeidel => SolverKind::GaussSeidel,
            // The GPU solver is built but not recorded (see `lemke_settings`).
            SceneSolverKind::Lemke => SolverKind::Apgd,
        },
        max_iterations: s.max_iterations,
        cone: s.cone,
        max_outer: s.max_outer,
        tolerance: s.tolerance as f32,
        omega: s.omega as f32,
        recovery_speed: s.recovery_speed as f32,
        slop: s.slop as f32,
        stabilisation: s.stabilisation as f32,
        warm_start: s.warm_start,
        coarse_slab: s.coarse_slab as f32,
    }
}

/// The exact LCP solver's settings when the scene asks for `kind = "lemke"`
/// (pass to [`crate::step::Simulation::set_lemke`]).
pub fn lemke_settings(scene: &Scene) -> Option<crate::reference::lcp::LcpSettings> {
    let s = &scene.solver;
    (s.kind == SceneSolverKind::Lemke).then_some(crate::reference::lcp::LcpSettings {
        friction: s.lcp_friction,
        max_pivots: s.max_pivots,
        warm_start: s.warm_start,
        recovery_speed: s.recovery_speed,
        relaxed: false,
        compliance: s.compliance,
    })
}

/// Step settings of the scene: integration, collision and the contact solver.
pub fn step_settings(scene: &Scene) -> StepSettings {
    StepSettings {
        dt: scene.sim.dt,
        gravity: scene.sim.gravity,
        contact: Some(ContactSetup {
            shapes: boundary_shapes(scene),
            collide: CollideSettings {
                envelope: scene.solver.envelope as f32,
                friction: scene.materials.iter().map(|m| m.friction as f32).collect(),
            },
            solver: solver_settings(scene),
            models: scene
                .materials
                .iter()
                .map(|m| {
                    let row = crate::model::rows::material_row(&m.model);
                    let row = crate::model::rows::with_cohesion(row, m.cohesion, m.adhesion_energy);
                    crate::model::rows::with_rolling(row, m.rolling_friction, m.spinning_friction)
                })
                .collect(),
            patch_cells: scene
                .materials
                .iter()
                .find_map(|m| m.model.patch_cells())
                .unwrap_or(0),
        }),
    }
}
