//! Deep columns of equal spheres for measuring how a solver's sweeps grow with the depth of
//! a bed, all in f64 on the CPU: a simple-cubic lattice (loaded at rest), a random pack
//! (ballistic deposition) or a pyramid of the lattice (a heap at rest), `width × width`
//! grains per layer in an open box, stepped with the twin's contact detection, free velocity,
//! a solver and the position update.

use super::avbd::{self, Avbd};
use super::block_gs::{self, BlockSettings};
use super::collide::detect;
use super::integrate::{free_velocity, to_f64, update_position, Body64};
use super::multilevel::{self, Multilevel};
use super::solve::{self as twin, SolveOutput, WarmStart};
use crate::model::body::{BodyInit, BodyState, SHAPE_BOX_CONTAINER};
use crate::model::contact::{BoundaryShape, CollideSettings};
use crate::model::solver::{Contact, SolverKind, SolverSettings};
use glam::DVec3;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::time::Instant;

/// Grain radius (m), density (kg/m³), friction and time step of every column.
pub const RADIUS: f64 = 0.005;
pub const DENSITY: f64 = 2500.0;
pub const FRICTION: f32 = 0.5;
pub const DT: f64 = 1e-3;
pub const GRAVITY: DVec3 = DVec3::new(0.0, 0.0, -9.81);

/// How a column's grains are placed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Packing {
    /// Simple cubic, every grain touching its neighbours and the walls (gap 0), at rest.
    Lattice,
    /// Ballistic deposition: each grain dropped at a random (x, y) onto the grains below.
    Random,
    /// A simple-cubic pyramid at rest: the base fills the box, and every second layer is one
    /// grain narrower on each side (a heap whose load varies across its width: the centre
    /// carries `layers` grains, the edges one or two). Layers stop where they would be empty.
    Heap,
    /// The engine bench's lattice (`bristlecone bench`, pack `lattice`): square layers of
    /// `width` × `width` and (`width` − 1)² grains in turn, each grain in the hollow of four
    /// below (layers 0.707 d apart, four contacts at 45° each way), 0.002 d between
    /// in-plane neighbours, at rest.
    Staggered,
}

impl Packing {
    pub fn name(self) -> &'static str {
        match self {
            Packing::Lattice => "lattice",
            Packing::Random => "random",
            Packing::Heap => "heap",
            Packing::Staggered => "staggered",
        }
    }
}

/// The solver a column is stepped with.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Candidate {
    /// The twin's projected Jacobi or APGD.
    Twin(SolverKind),
    Block(BlockSettings),
    Multilevel(Multilevel),
    Avbd(Avbd),
}

/// A column being stepped: the fixed box (body 0) and the grains, the contacts at the current
/// positions and the last step's impulses for the warm start.
#[derive(Clone)]
pub struct Column {
    pub bodies: Vec<Body64>,
    pub shapes: Vec<BoundaryShape>,
    pub collide: CollideSettings,
    /// The state the bodies came from (shapes, materials); positions are refreshed from
    /// `bodies` before each detection.
    state: BodyState,
    pub contacts: Vec<Contact>,
    warm_keys: Vec<(u32, u32, u32)>,
    warm_gamma: Vec<[f64; 3]>,
    warm_saved: Vec<[f64; 4]>,
}

/// What one step did.
#[derive(Clone, Debug)]
pub struct StepStats {
    pub sweeps: u32,
    pub converged: bool,
    /// Residual (2-norm, m/s) of each sweep.
    pub history: Vec<f64>,
    /// Worst penetration after the step (m).
    pub penetration: f64,
    /// CPU seconds of the solve (assembly, sweeps, update).
    pub seconds: f64,
    pub contacts: usize,
}

/// Diameter of the grains.
pub fn diameter() -> f64 {
    2.0 * RADIUS
}

impl Column {
    /// A column `layers` grains deep (the random pack has as many grains as the lattice).
    pub fn new(packing: Packing, layers: usize, width: usize, seed: u64) -> Column {
        let d = diameter();
        let half = match packing {
            // The bench's walls: one in-plane gap beyond the outermost grains.
            Packing::Staggered => (width as f64 - 1.0) * d * 1.002 / 2.0 + RADIUS + 0.002 * d,
            _ => width as f64 * RADIUS * (1.0 + 1e-4),
        };
        let height = (layers as f64 + 2.0) * d * if packing == Packing::Random { 3.0 } else { 1.0 };
        let shape = BoundaryShape::BoxContainer {
            half_extents: [half as f32, half as f32, (height / 2.0) as f32],
            open_top: true,
        };
        let box_body = BodyInit::fixed(
            SHAPE_BOX_CONTAINER,
            0,
            [0.0, 0.0, (height / 2.0) as f32],
            (3.0f64.sqrt() * height) as f32,
        );
        let centres = match packing {
            Packing::Lattice => lattice(layers, width),
            Packing::Heap => heap(layers, width),
            Packing::Staggered => staggered(layers, width),
            Packing::Random => deposit(layers * width * width, width, seed),
        };
        let mut inits = vec![box_body];
        inits.extend(
            centres
                .iter()
                .map(|c| BodyInit::sphere(c.as_vec3().to_array(), RADIUS as f32, DENSITY as f32)),
        );
        let collide = CollideSettings {
            envelope: (0.05 * RADIUS) as f32,
            friction: vec![FRICTION],
        };
        Column::from_state(BodyState::from_inits(&inits), vec![shape], collide)
    }

    /// Any bed of spheres among fixed boundaries (a scene's state read back from the GPU),
    /// stepped with the twin's time step and gravity ([`DT`], [`GRAVITY`]); its first step
    /// starts without a warm start.
    pub fn from_state(
        state: BodyState,
        shapes: Vec<BoundaryShape>,
        collide: CollideSettings,
    ) -> Column {
        let mut column = Column {
            bodies: to_f64(&state),
            shapes,
            collide,
            state,
            contacts: Vec::new(),
            warm_keys: Vec::new(),
            warm_gamma: Vec::new(),
            warm_saved: Vec::new(),
        };
        column.detect();
        column
    }

    /// Contacts at the bodies' current positions.
    fn detect(&mut self) {
        for (i, b) in self.bodies.iter().enumerate() {
            let p = b.pos.as_vec3();
            self.state.pos[i] = [p.x, p.y, p.z, b.radius as f32];
            let q = b.rot.as_quat();
            self.state.rot[i] = [q.x, q.y, q.z, q.w];
        }
        self.contacts = detect(&self.state, &self.shapes, &self.collide)
            .iter()
            .map(Contact::from)
            .collect();
    }

    /// Worst penetration of the current contacts (m; 0 when none).
    pub fn penetration(&self) -> f64 {
        self.contacts
            .iter()
            .map(|c| -(c.n_gap[3] as f64))
            .fold(0.0, f64::max)
    }

    /// Forgets the last step's impulses (the next step starts from zero).
    pub fn forget_warm_start(&mut self) {
        self.warm_keys.clear();
        self.warm_gamma.clear();
        self.warm_saved.clear();
    }

    /// The next step's cone problem as the GPU sees it: the state (positions, shapes,
    /// masses) with the free velocities of one step of gravity, and the twin's f64 bodies
    /// with the same velocities.
    pub fn free_problem(&self) -> (BodyState, Vec<Body64>) {
        let mut free = self.bodies.clone();
        for b in &mut free {
            free_velocity(b, GRAVITY, DT);
        }
        let mut state = self.state.clone();
        for (i, b) in free.iter().enumerate() {
            let (v, w) = (b.vel.as_vec3(), b.omega.as_vec3());
            state.vel[i] = [v.x, v.y, v.z, 0.0];
            state.omega[i] = [w.x, w.y, w.z, 0.0];
        }
        (state, free)
    }

    /// One step: free velocity, the solve, the position update, new contacts.
    pub fn step(&mut self, candidate: &Candidate, settings: &SolverSettings) -> StepStats {
        let mut free = self.bodies.clone();
        for b in &mut free {
            free_velocity(b, GRAVITY, DT);
        }
        let warm = (!self.warm_keys.is_empty()).then_some(WarmStart {
            keys: &self.warm_keys,
            gamma: &self.warm_gamma,
            saved: &self.warm_saved,
        });
        let start = Instant::now();
        let out: SolveOutput = match candidate {
            Candidate::Twin(kind) => {
                let st = SolverSettings {
                    kind: *kind,
                    ..*settings
                };
                twin::solve(&free, &self.contacts, &st, DT, warm)
            }
            Candidate::Block(block) => {
                block_gs::solve(&free, &self.contacts, settings, block, DT, warm)
            }
            Candidate::Avbd(a) => avbd::solve(&free, &self.contacts, settings, a, DT, warm),
            Candidate::Multilevel(ml) => {
                multilevel::solve(&free, &self.contacts, settings, ml, DT, warm)
            }
        };
        let seconds = start.elapsed().as_secs_f64();
        for (i, b) in free.iter_mut().enumerate() {
            b.vel = out.vel[i];
            b.omega = out.omega[i];
            update_position(b, DT);
        }
        self.bodies = free;
        self.warm_keys = self.contacts.iter().map(|c| c.key()).collect();
        self.warm_gamma = out.gamma.clone();
        self.warm_saved = out.saved.clone();
        let contacts = self.contacts.len();
        self.detect();
        StepStats {
            sweeps: out.iterations,
            converged: out.converged,
            history: out.history.iter().map(|h| h[0]).collect(),
            penetration: self.penetration(),
            seconds,
            contacts,
        }
    }
}

/// Simple-cubic sites, the lowest layer first, touching the floor, the walls and each other.
fn lattice(layers: usize, width: usize) -> Vec<DVec3> {
    let d = diameter();
    let offset = -(width as f64) * RADIUS + RADIUS;
    let mut out = Vec::with_capacity(layers * width * width);
    for k in 0..layers {
        for j in 0..width {
            for i in 0..width {
                out.push(DVec3::new(
                    offset + i as f64 * d,
                    offset + j as f64 * d,
                    RADIUS + k as f64 * d,
                ));
            }
        }
    }
    out
}

/// The sites of [`Packing::Staggered`], the lowest layer first.
fn staggered(layers: usize, width: usize) -> Vec<DVec3> {
    const GAP: f64 = 0.002;
    let d = diameter();
    let s = d * (1.0 + GAP);
    let h = (d * d - s * s / 2.0).sqrt();
    let mut out = Vec::new();
    for k in 0..layers {
        let side = if k % 2 == 0 { width } else { width - 1 };
        let c = (side as f64 - 1.0) / 2.0;
        for j in 0..side {
            for i in 0..side {
                out.push(DVec3::new(
                    (i as f64 - c) * s,
                    (j as f64 - c) * s,
                    RADIUS + k as f64 * h,
                ));
            }
        }
    }
    out
}

/// The simple-cubic sites of [`Packing::Heap`]: layer k keeps the sites at least ⌊k / 2⌋
/// from each side of the `width × width` base, so every grain rests on the one below it.
fn heap(layers: usize, width: usize) -> Vec<DVec3> {
    let d = diameter();
    let all = lattice(layers, width);
    let inset = |s: f64| {
        let i = ((s + width as f64 * RADIUS - RADIUS) / d).round() as usize;
        i.min(width - 1 - i)
    };
    all.into_iter()
        .filter(|c| {
            let k = ((c.z - RADIUS) / d).round() as usize;
            inset(c.x).min(inset(c.y)) >= k / 2
        })
        .collect()
}

/// Random (x, y) tried for each grain of [`deposit`]; it lands at the lowest.
const DEPOSIT_TRIES: usize = 16;

/// Ballistic deposition: each grain lowered at a uniform random (x, y) inside the walls until
/// it touches the floor or a grain placed before it, the lowest landing of
/// [`DEPOSIT_TRIES`] (x, y) kept (no rolling: a loose, disordered pack).
fn deposit(count: usize, width: usize, seed: u64) -> Vec<DVec3> {
    let d = diameter();
    let span = width as f64 * RADIUS - RADIUS;
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut out: Vec<DVec3> = Vec::with_capacity(count);
    for _ in 0..count {
        let mut best = DVec3::splat(f64::INFINITY);
        for _ in 0..DEPOSIT_TRIES {
            let (x, y) = (
                rng.random_range(-span..=span),
                rng.random_range(-span..=span),
            );
            let z = out
                .iter()
                .filter_map(|c| {
                    let rho2 = (c.x - x).powi(2) + (c.y - y).powi(2);
                    (rho2 < d * d).then(|| c.z + (d * d - rho2).sqrt())
                })
                .fold(RADIUS, f64::max);
            if z < best.z {
                best = DVec3::new(x, y, z);
            }
        }
        out.push(best);
    }
    out
}
