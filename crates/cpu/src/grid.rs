//! The broad phase's plan: the grid cell size and which grains are large, the same for the
//! GPU collision stage and its CPU twin (`reference::collide`).

use crate::model::body::BodyState;
use crate::shapes::boundary_count;

/// Grains whose bounding radius exceeds this multiple of the median are "large": kept out
/// of the grid (whose cell then follows the other grains) and paired by brute force.
pub const LARGE_RATIO: f32 = 3.0;
/// At most this many large grains: each costs a pass over all grains per detection, so
/// beyond it one grid sized by the largest grain is cheaper (the split is not made).
pub const LARGE_MAX: usize = 64;

/// The broad phase's plan: grid cell size and which grains are large.
///
/// Why: the grid cell must hold the largest grain's reach (every contact between
/// neighbouring cells), so one boulder among sand would make every cell hold ~ratio³ grains
/// and the pair tests grow by that factor. Large grains (bounding radius > ratio × median,
/// at most [`LARGE_MAX`]) instead sit in one extra slot after the hash table: each small
/// grain tests them all after its 27 cells (pairs j > i), and each large grain tests every
/// grain of higher index in index order (its row comes out sorted). Cost: ng·L sphere
/// tests per detection for L large grains, in L threads.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct GridPlan {
    /// Grid cell size.
    pub cell: f32,
    /// Grains with a bounding radius above this are large (f32::MAX: none).
    pub large_radius: f32,
    /// How many grains are large.
    pub large: usize,
}

impl GridPlan {
    /// The plan for these grains: large above `ratio` × the median bounding radius when
    /// there are 1 to [`LARGE_MAX`] of them (infinite ratio: one grid for all).
    pub fn new(state: &BodyState, envelope: f32, ratio: f32) -> Self {
        let nb = boundary_count(state);
        let mut r: Vec<f32> = state.pos[nb..].iter().map(|p| p[3]).collect();
        r.sort_by(f32::total_cmp);
        let median = r.get(r.len() / 2).copied().unwrap_or(0.0);
        let limit = ratio * median;
        let large = r.iter().filter(|&&x| x > limit).count();
        let (large_radius, large) = if large > 0 && large <= LARGE_MAX && limit.is_finite() {
            (limit, large)
        } else {
            (f32::MAX, 0)
        };
        let rmax = r[..r.len() - large].last().copied().unwrap_or(0.0);
        let mut cell = (2.0 * rmax + envelope) * (1.0 + 1e-4);
        if cell <= 0.0 || !cell.is_finite() {
            cell = 1.0;
        }
        GridPlan {
            cell,
            large_radius,
            large,
        }
    }
}
