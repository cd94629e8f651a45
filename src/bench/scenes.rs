//! The benchmark scenes, described once and built for Bristlecone (and for the Rapier peer).
//!
//! Every scene is monodisperse spheres (radius 5 mm, density 2500 kg/m³, μ = 0.5, restitution
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
//! * **column**: the pile's bin, [`COLUMN_SIDE`] grains wide whatever its depth: the bed whose
//!   depth alone grows (a solver that moves a load about a layer per sweep needs more sweeps
//!   the deeper it is).
//!
//! Each scene comes as the lattice ([`Pack::Lattice`]) or as a random pack of the same grains
//! in the same bin ([`Pack::Random`]): a `random_fill` at a solid fraction of 0.45, settled
//! under gravity by the bench before it is measured (`bench::settled`).
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
    Column,
}

impl SceneKind {
    pub fn name(self) -> &'static str {
        match self {
            SceneKind::Pile => "pile",
            SceneKind::Hopper => "hopper",
            SceneKind::Column => "column",
        }
    }

    /// Height ÷ width of the lattice (the column's width is fixed instead).
    fn aspect(self) -> f64 {
        match self {
            SceneKind::Pile | SceneKind::Column => 1.0,
            SceneKind::Hopper => 2.0,
        }
    }

    /// The layer side m of the lattice of `n` grains.
    pub fn side(self, n: usize) -> usize {
        match self {
            SceneKind::Column => COLUMN_SIDE,
            _ => side_for(n, self.aspect()),
        }
    }

    /// The layer side m of the lattice `layers` layers deep (as tall as `side` gives for
    /// its grain count).
    pub fn side_for_layers(self, layers: usize) -> usize {
        match self {
            SceneKind::Column => COLUMN_SIDE,
            // layers ≈ aspect · m · √2
            _ => ((layers as f64 / (self.aspect() * std::f64::consts::SQRT_2)).round() as usize)
                .max(2),
        }
    }

    /// Grains of the lattice `layers` layers deep: layers of m × m and (m−1) × (m−1) in turn.
    pub fn grains_for_layers(self, layers: usize) -> usize {
        let m = self.side_for_layers(layers);
        layers.div_ceil(2) * m * m + layers / 2 * (m - 1) * (m - 1)
    }
}

/// How the grains are packed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Pack {
    /// The FCC lattice built at rest.
    Lattice,
    /// A random fill of the same grains in the same bin, settled under gravity.
    Random,
}

impl Pack {
    pub fn name(self) -> &'static str {
        match self {
            Pack::Lattice => "lattice",
            Pack::Random => "random",
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
    pub pack: Pack,
    /// Layers of the lattice (a random pack: of the lattice with the same grains).
    pub layers: usize,
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
/// Grains across a layer of the column (layers of 6 × 6 and 5 × 5 in turn).
pub const COLUMN_SIDE: usize = 6;
/// Solid fraction of the random fill a random pack settles from: low enough that
/// `random_fill` places it in one pass of random sequential addition plus a short overlap
/// removal, high enough that the grains fall little before they touch.
const RANDOM_FILL_FRACTION: f64 = 0.45;
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

/// The bin: a floor plane (pile, column) or four plates around a 6 d orifice with a catch
/// plane below (hopper), and four solid-box walls `wall_h` high.
fn walls(kind: SceneKind, hw: f32, wall_h: f32) -> Vec<Wall> {
    let d = 2.0 * RADIUS;
    let t = 2.0 * d; // wall thickness
    let mut walls = Vec::new();
    match kind {
        SceneKind::Pile | SceneKind::Column => walls.push(Wall::Plane { z: 0.0 }),
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
    walls
}

/// Layers of the lattice of `n` grains with layer side m.
fn fcc_layers(n: usize, m: usize) -> usize {
    let pair = m * m + (m - 1) * (m - 1);
    let rest = n % pair;
    2 * (n / pair) + usize::from(rest > 0) + usize::from(rest > m * m)
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
    /// The lattice of `n` grains.
    pub fn build(kind: SceneKind, n: usize) -> Self {
        Self::lattice(kind, n, kind.side(n))
    }

    /// The lattice `layers` layers deep.
    pub fn with_layers(kind: SceneKind, layers: usize) -> Self {
        let m = kind.side_for_layers(layers);
        Self::lattice(kind, kind.grains_for_layers(layers), m)
    }

    fn lattice(kind: SceneKind, n: usize, m: usize) -> Self {
        let r = RADIUS;
        let d = 2.0 * r;
        let grains = fcc(n, r, m);
        let s = d * (1.0 + GAP);
        // Walls one in-plane gap away from the outermost grains.
        let half_width = (m as f32 - 1.0) * s / 2.0 + r + GAP * d;
        let top = grains.iter().map(|p| p[2]).fold(0.0f32, f32::max) + r;
        BenchScene {
            kind,
            pack: Pack::Lattice,
            layers: fcc_layers(n, m),
            radius: r,
            density: DENSITY,
            friction: FRICTION,
            dt: DT,
            gravity: [0.0, 0.0, -9.81],
            envelope: 0.05 * r,
            walls: walls(kind, half_width, top * 1.2 + d),
            grains,
            half_width,
            top,
        }
    }

    /// The same grains in the same bin as a `random_fill` (through the scene loader, seed
    /// `seed`) at a solid fraction of [`RANDOM_FILL_FRACTION`], not yet settled: a box as
    /// wide as the bin's inside, as tall as that fraction needs, and walls above its top.
    pub fn random_fill(&self, seed: u64) -> Result<BenchScene, String> {
        let n = self.grains.len();
        let (r, hw) = (self.radius as f64, self.half_width as f64);
        let grain_volume = 4.0 / 3.0 * std::f64::consts::PI * r * r * r;
        let height = n as f64 * grain_volume / (RANDOM_FILL_FRACTION * 4.0 * hw * hw);
        let text = format!(
            "[simulation]\ndt = {dt}\nsteps = 1\n\n[[material]]\nname = \"grain\"\ndensity = {rho}\n\
             friction = {mu}\n\n[[generator]]\nkind = \"random_fill\"\nmaterial = \"grain\"\n\
             radius = {r}\ncount = {n}\nseed = {seed}\n\
             region = {{ kind = \"box\", min = [{lo}, {lo}, 0.0], max = [{hw}, {hw}, {height}] }}\n",
            dt = self.dt,
            rho = self.density,
            mu = self.friction,
            lo = -hw,
        );
        let file = std::path::Path::new("<bench random pack>");
        let scene = crate::scene::parse_str(&text, file).map_err(|e| e.to_string())?;
        let grains: Vec<[f32; 3]> = (scene.bodies.iter())
            .map(|b| b.position.map(|x| x as f32))
            .collect();
        let top = grains.iter().map(|p| p[2]).fold(0.0f32, f32::max) + self.radius;
        let d = 2.0 * self.radius;
        Ok(BenchScene {
            pack: Pack::Random,
            walls: walls(
                self.kind,
                self.half_width,
                (top * 1.1 + d).max(self.top * 1.2 + d),
            ),
            grains,
            top,
            ..self.clone()
        })
    }

    /// The same bin with the grains at `grains` (a settled pack).
    pub fn with_grains(&self, grains: Vec<[f32; 3]>) -> BenchScene {
        let top = grains.iter().map(|p| p[2]).fold(0.0f32, f32::max) + self.radius;
        BenchScene {
            grains,
            top,
            ..self.clone()
        }
    }

    /// Mass of one grain.
    pub fn grain_mass(&self) -> f32 {
        // r³ as products, not `powi(3)`, whose rounding depends on inlining (`BodyInit::sphere`).
        let r = self.radius;
        self.density * 4.0 / 3.0 * std::f32::consts::PI * (r * r * r)
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

    #[test]
    fn a_depth_in_layers_builds_the_lattice_that_deep() {
        for kind in [SceneKind::Column, SceneKind::Pile, SceneKind::Hopper] {
            for layers in [2, 3, 25, 50] {
                let sc = BenchScene::with_layers(kind, layers);
                assert_eq!(sc.layers, layers, "{kind:?}");
                assert_eq!(sc.grains.len(), kind.grains_for_layers(layers));
                // The lattice's layers are h = r·√2 (1 + small gap) apart.
                let h = sc.radius * std::f32::consts::SQRT_2;
                let expected = sc.radius * 2.0 + (layers - 1) as f32 * h;
                assert!(
                    (sc.top - expected).abs() < 0.01 * h * layers as f32,
                    "{kind:?}"
                );
                // The same lattice by its grain count.
                assert_eq!(BenchScene::build(kind, sc.grains.len()).layers, layers);
            }
        }
        assert_eq!(
            SceneKind::Column.grains_for_layers(200),
            100 * 36 + 100 * 25
        );
        // A pile as tall as wide: 25 layers of 18 × 18 and 17 × 17.
        assert_eq!(SceneKind::Pile.side_for_layers(25), 18);
    }

    #[test]
    fn a_random_fill_keeps_the_grains_in_the_bin_and_apart() {
        let lattice = BenchScene::with_layers(SceneKind::Column, 10);
        let fill = lattice.random_fill(1).unwrap();
        assert_eq!(fill.pack, Pack::Random);
        assert_eq!(fill.grains.len(), lattice.grains.len());
        let (r, hw) = (fill.radius, fill.half_width);
        for (i, a) in fill.grains.iter().enumerate() {
            assert!(a[0].abs() + r <= hw * 1.0001 && a[1].abs() + r <= hw * 1.0001);
            assert!(a[2] >= r * 0.9999, "grain {i} below the floor");
            for b in &fill.grains[i + 1..] {
                let d2: f32 = (0..3).map(|k| (a[k] - b[k]).powi(2)).sum();
                assert!(d2.sqrt() > 2.0 * r * 0.9999, "grains overlap");
            }
        }
        // Looser than the lattice, and the walls stand above it.
        assert!(
            fill.top > lattice.top * 1.3,
            "{} vs {}",
            fill.top,
            lattice.top
        );
        for w in &fill.walls {
            if let Wall::Cuboid { center, half } = w {
                assert!(center[2] + half[2] > fill.top);
            }
        }
        assert_eq!(fill.grains, lattice.random_fill(1).unwrap().grains);
    }
}
