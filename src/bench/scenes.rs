//! The benchmark scenes, described once and built for Bristlecone (and for the Rapier peer).
//!
//! Both scenes are monodisperse spheres (radius 5 mm, density 2500 kg/m³, μ = 0.5, restitution
//! 0) stacked as an FCC lattice: square layers with an in-plane centre distance of
//! 2r·(1 + 0.002), each layer in the hollows of the one below (the centres of a grain and of
//! the four under it are exactly 2r apart), the first layer touching the floor. Such a
//! lattice is a stable, dense (φ ≈ 0.74) resting packing — every grain has 4 contacts below,
//! 4 above and 4 in-plane neighbours inside the collision envelope — so nothing has to be
//! settled by a long simulation first, and every size starts from the same kind of state.
//!
//! * **pile**: the lattice resting on a floor plane inside four solid-box walls, about as tall as
//!   wide (a settled bed; it should stay at rest).
//! * **hopper**: the lattice, about twice as tall as wide, in a square bin (four solid-box
//!   walls) whose flat floor is four solid-box plates around a square orifice of side 6 d in the
//!   middle; a catch floor (plane) lies one bin height below. Grains above the orifice fall at
//!   once and the bin discharges.
//!
//! Every wall is a solid box (or, for floors, a plane), so the same geometry is built exactly in
//! Rapier (cuboid colliders; a plane becomes a thick cuboid whose top face is the plane).

use crate::bodies::{BodyInit, BodyState, SHAPE_PLANE, SHAPE_SOLID_BOX};
use crate::collide::{BoundaryShape, CollideSettings};
use crate::solve::SolverSettings;
use crate::step::{ContactSetup, StepSettings};

#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum SceneKind {
    Pile,
    Hopper,
}

impl SceneKind {
    pub fn name(self) -> &'static str {
        match self {
            SceneKind::Pile => "pile",
            SceneKind::Hopper => "hopper",
        }
    }
}

/// A fixed wall.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Wall {
    /// Horizontal floor: solid below z.
    Plane { z: f32 },
    /// Solid axis-aligned box.
    Cuboid { center: [f32; 3], half: [f32; 3] },
}

#[derive(Clone, Debug)]
pub struct BenchScene {
    pub kind: SceneKind,
    pub radius: f32,
    pub density: f32,
    pub friction: f32,
    pub dt: f64,
    pub gravity: [f64; 3],
    /// Collision envelope (Bristlecone keeps contacts with gap ≤ envelope).
    pub envelope: f32,
    pub walls: Vec<Wall>,
    /// Grain centres.
    pub grains: Vec<[f32; 3]>,
    /// Inner half-width of the bin (walls at ±half_width in x and y).
    pub half_width: f32,
    /// Height of the top of the initial lattice.
    pub top: f32,
}

pub const RADIUS: f32 = 0.005;
pub const DENSITY: f32 = 2500.0;
pub const FRICTION: f32 = 0.5;
pub const DT: f64 = 1e-3;
/// In-plane gap between lattice neighbours, relative to the diameter.
const GAP: f32 = 0.002;

/// FCC lattice of exactly `n` spheres in square layers of m × m and (m−1) × (m−1), lowest
/// first; returns the centres and the layer side m.
fn fcc(n: usize, r: f32, m: usize) -> Vec<[f32; 3]> {
    let s = 2.0 * r * (1.0 + GAP);
    let h = (4.0 * r * r - s * s / 2.0).sqrt();
    let mut out = Vec::with_capacity(n);
    let mut layer = 0usize;
    while out.len() < n {
        let side = if layer.is_multiple_of(2) { m } else { m - 1 };
        let c = (side as f32 - 1.0) / 2.0;
        let z = r + layer as f32 * h;
        'layer: for j in 0..side {
            for i in 0..side {
                if out.len() == n {
                    break 'layer;
                }
                out.push([(i as f32 - c) * s, (j as f32 - c) * s, z]);
            }
        }
        layer += 1;
    }
    out
}

/// Layer side m for `n` grains in a lattice `aspect` times as tall as wide.
fn side_for(n: usize, aspect: f64) -> usize {
    // n ≈ layers · m², layers ≈ aspect · m · 2r / (r√2) = aspect · m · √2.
    ((n as f64 / (aspect * std::f64::consts::SQRT_2))
        .cbrt()
        .ceil() as usize)
        .max(2)
}

impl BenchScene {
    pub fn build(kind: SceneKind, n: usize) -> Self {
        let r = RADIUS;
        let d = 2.0 * r;
        let aspect = match kind {
            SceneKind::Pile => 1.0,
            SceneKind::Hopper => 2.0,
        };
        let m = side_for(n, aspect);
        let grains = fcc(n, r, m);
        let s = d * (1.0 + GAP);
        // Walls one in-plane gap away from the outermost grains.
        let half_width = (m as f32 - 1.0) * s / 2.0 + r + GAP * d;
        let top = grains.iter().map(|p| p[2]).fold(0.0f32, f32::max) + r;
        let t = 2.0 * d; // wall thickness
        let hw = half_width;
        let wall_h = top * 1.2 + d;
        let mut walls = Vec::new();
        match kind {
            SceneKind::Pile => walls.push(Wall::Plane { z: 0.0 }),
            SceneKind::Hopper => {
                let a = 3.0 * d; // orifice half-side
                let outer = hw + t;
                let z = -t / 2.0;
                let strip = |x0: f32, x1: f32, y0: f32, y1: f32| Wall::Cuboid {
                    center: [(x0 + x1) / 2.0, (y0 + y1) / 2.0, z],
                    half: [(x1 - x0) / 2.0, (y1 - y0) / 2.0, t / 2.0],
                };
                walls.push(strip(-outer, -a, -outer, outer));
                walls.push(strip(a, outer, -outer, outer));
                walls.push(strip(-a, a, -outer, -a));
                walls.push(strip(-a, a, a, outer));
                walls.push(Wall::Plane { z: -wall_h });
            }
        }
        let zc = wall_h / 2.0;
        let (o, hh) = (hw + t / 2.0, wall_h / 2.0);
        let long = hw + t;
        walls.push(Wall::Cuboid {
            center: [-o, 0.0, zc],
            half: [t / 2.0, long, hh],
        });
        walls.push(Wall::Cuboid {
            center: [o, 0.0, zc],
            half: [t / 2.0, long, hh],
        });
        walls.push(Wall::Cuboid {
            center: [0.0, -o, zc],
            half: [long, t / 2.0, hh],
        });
        walls.push(Wall::Cuboid {
            center: [0.0, o, zc],
            half: [long, t / 2.0, hh],
        });
        BenchScene {
            kind,
            radius: r,
            density: DENSITY,
            friction: FRICTION,
            dt: DT,
            gravity: [0.0, 0.0, -9.81],
            envelope: 0.05 * r,
            walls,
            grains,
            half_width,
            top,
        }
    }

    /// Mass of one grain.
    pub fn grain_mass(&self) -> f32 {
        self.density * 4.0 / 3.0 * std::f32::consts::PI * self.radius.powi(3)
    }

    /// Bodies: the walls (fixed, shape index = wall index), then the grains at rest.
    pub fn body_state(&self) -> BodyState {
        let mut s = BodyState::default();
        for (k, w) in self.walls.iter().enumerate() {
            let (position, radius, shape) = match *w {
                Wall::Plane { z } => ([0.0, 0.0, z], 0.0, SHAPE_PLANE),
                Wall::Cuboid { center, half } => (
                    center,
                    (half[0] * half[0] + half[1] * half[1] + half[2] * half[2]).sqrt(),
                    SHAPE_SOLID_BOX,
                ),
            };
            s.push(&BodyInit::fixed(shape, k as u32, position, radius));
        }
        for p in &self.grains {
            s.push(&BodyInit::sphere(*p, self.radius, self.density));
        }
        s
    }

    pub fn step_settings(&self, solver: SolverSettings) -> StepSettings {
        let shapes = self
            .walls
            .iter()
            .map(|w| match *w {
                Wall::Plane { .. } => BoundaryShape::Plane,
                Wall::Cuboid { half, .. } => BoundaryShape::SolidBox { half_extents: half },
            })
            .collect();
        StepSettings {
            dt: self.dt,
            gravity: self.gravity,
            contact: Some(ContactSetup {
                models: Vec::new(),
                patch_cells: 0,
                shapes,
                collide: CollideSettings {
                    envelope: self.envelope,
                    friction: vec![self.friction],
                },
                solver,
            }),
        }
    }

    /// Contacts a settled lattice of `n` grains holds, estimated for the memory check:
    /// 6 per grain (12 neighbours, each pair once) plus the wall contacts.
    pub fn estimated_contacts(n: usize) -> u64 {
        (6.5 * n as f64).ceil() as u64 + 1024
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lattice_has_exact_count_and_no_overlap() {
        for kind in [SceneKind::Pile, SceneKind::Hopper] {
            let sc = BenchScene::build(kind, 500);
            assert_eq!(sc.grains.len(), 500);
            let d = 2.0 * sc.radius;
            let mut min_gap = f32::MAX;
            for (i, a) in sc.grains.iter().enumerate() {
                assert!(a[2] >= sc.radius * 0.999, "grain below the floor");
                assert!(a[0].abs() + sc.radius < sc.half_width);
                assert!(a[1].abs() + sc.radius < sc.half_width);
                for b in &sc.grains[i + 1..] {
                    let dist =
                        ((a[0] - b[0]).powi(2) + (a[1] - b[1]).powi(2) + (a[2] - b[2]).powi(2))
                            .sqrt();
                    min_gap = min_gap.min(dist - d);
                }
            }
            // Touching (vertical neighbours at exactly 2r, up to rounding), never overlapping.
            assert!(min_gap > -1e-6 * d && min_gap < 1e-3 * d, "{min_gap}");
        }
    }
}
