//! Continuous inflow and outflow: `[[inflow]]` tables insert grains over time, `[[outflow]]`
//! tables take them out again (the run loop's side is the app's `run::flow`; the keys are
//! checked in `build/flow.rs`).
//!
//! An inflow's grains are allocated when the scene is loaded (its *pool*, drawn from the
//! size and material distributions with the inflow's seed) and start parked: the body count
//! never changes during a run, and a grain enters the scene by being activated.

pub use super::generate::Region;

/// How fast an inflow inserts grains.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum FlowRate {
    /// Grains per second.
    Grains(f64),
    /// Kilograms per second.
    Mass(f64),
}

/// One grain of an inflow's pool: a sphere of this radius and material.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PoolGrain {
    pub radius: f64,
    /// Index into [`super::Scene::materials`].
    pub material: usize,
    pub mass: f64,
    /// Principal moment of inertia (a solid sphere: 2/5 m r²).
    pub inertia: f64,
}

/// An `[[inflow]]` table, validated.
#[derive(Debug, Clone, PartialEq)]
pub struct Inflow {
    /// Its measurement file is `measurements/NAME.csv`.
    pub name: String,
    /// Where grains are placed: whole grains inside it, clear of every live grain.
    pub region: Region,
    pub rate: FlowRate,
    /// Mean initial velocity, and the half width of the uniform spread of each component.
    pub velocity: [f64; 3],
    pub velocity_spread: f64,
    pub angular_velocity: [f64; 3],
    pub angular_velocity_spread: f64,
    /// Seed of the pool's draws and of every insertion wave (with the wave's step index).
    pub seed: u64,
    /// Steps between insertion waves.
    pub every: u64,
    /// Candidate positions tried per grain in a wave before the rest waits for the next one.
    pub max_attempts: u32,
    /// The grains it can insert, in the order it inserts them (those an outflow takes out
    /// come back to it).
    pub pool: Vec<PoolGrain>,
}

/// Where an outflow takes grains out: those whose centre is inside.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum OutflowRegion {
    Region(Region),
    /// The half-space on the side `normal` points to from `point`.
    HalfSpace {
        point: [f64; 3],
        normal: [f64; 3],
    },
}

impl OutflowRegion {
    pub fn contains(&self, c: [f64; 3]) -> bool {
        match self {
            OutflowRegion::Region(r) => r.contains_sphere(c, 0.0),
            OutflowRegion::HalfSpace { point, normal } => {
                (0..3).map(|k| (c[k] - point[k]) * normal[k]).sum::<f64>() > 0.0
            }
        }
    }
}

/// An `[[outflow]]` table, validated.
#[derive(Debug, Clone, PartialEq)]
pub struct Outflow {
    /// Its measurement file is `measurements/NAME.csv`.
    pub name: String,
    pub region: OutflowRegion,
    /// Steps between removals.
    pub every: u64,
}
