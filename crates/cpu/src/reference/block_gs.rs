//! Coloured block Gauss–Seidel over constraints, with over-relaxation and an optional
//! two-level (aggregation) correction of the normal rows: an f64 prototype of a solver whose
//! sweeps grow slowly with the depth of a bed (see `docs/solver-depth.md`).
//!
//! It solves the twin's cone problem (`reference::solve`: the same assembly, rows E, offsets,
//! projections, warm start, exact cone's outer loop and residual) with other sweeps:
//!
//! - each constraint's block (3 rows) is solved with the current impulses of the others, as in
//!   nonsmooth Gauss–Seidel (Jean 1999; Preclik & Rüde 2015): an unconstrained Newton step on
//!   the 3 × 3 block N_ii + E_ii, kept when it is already in the constraint's set, else a few
//!   projected-gradient steps on the block (step 1/λ_max of the block in the metric of the
//!   rows' η), then over-relaxed by ω and projected again;
//! - the bodies' Δv = M⁻¹ D γ is kept up to date, so a block reads its neighbours' latest
//!   impulses; constraints are coloured so that no two of a colour share a moving body, hence
//!   all blocks of a colour can be solved at once and the order inside a colour changes
//!   nothing (Jones & Plassmann 1993 colouring, priorities from an integer hash);
//! - the colours are swept in index order, or band by band along gravity (top to bottom,
//!   bottom to top, or alternating), each band's colours in index order;
//! - the two-level correction (aggregation multigrid, Vaněk, Mandel & Brezina 1996, without
//!   smoothing of the prolongator): the normal rows of the active contacts are grouped by grid
//!   cell (or horizontal slab, or box: [`Aggregates`]), each contact weighted by |n·ĝ| (the
//!   share of the vertical load its normal carries); one coarse unknown per cell adds
//!   w_i δ_cell to every normal impulse of the cell. The
//!   Galerkin matrix Pᵀ N P is summed body by body (P's columns as body impulses), solved
//!   exactly (it has one row per cell), and the corrected normals are projected.
//!
//! Every fixed point is the twin's: a block at its local minimiser over its set satisfies the
//! same variational inequality ⟨(N + E)γ + p, k − γ⟩ ≥ 0 as a fixed point of the projected
//! Jacobi step. Rows covered: every constraint the twin has (contacts of every model, joint
//! blocks, patch blocks, rolling rows), through the twin's own projection and compliance; the
//! two-level correction touches only contacts' normal rows.

use super::integrate::Body64;
use super::solve::{
    inv_inertia, solve_with_method, Extra, Schur, SolveOutput, SweepMethod, Sweeps, Vec3, WarmStart,
};
use crate::model::solver::{Contact, SolverKind, SolverSettings};
use glam::DVec3;
use nalgebra::{DMatrix, DVector};
use std::collections::BTreeMap;

/// The order in which a sweep visits the colours.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SweepOrder {
    /// Colour 0, 1, … over the whole bed (the fewest phases: one per colour).
    Colours,
    /// Band by band along gravity from the top (one phase per band and colour).
    TopDown,
    /// Band by band from the bottom.
    BottomUp,
    /// Top down on odd sweeps, bottom up on even ones (symmetric Gauss–Seidel).
    Alternating,
}

/// The shape of a coarse level's aggregates: which contacts share a coarse unknown, by the
/// position of the contact's point.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Aggregates {
    /// Cubic cells of this edge (m) on the world's axes. The coarse problem has one unknown
    /// per occupied cell (about grains / 8 at 2 d) and is banded along the grid: a GPU would
    /// solve it by its own multigrid hierarchy, with reductions per pair of cells.
    Cells { edge: f64 },
    /// Horizontal slabs of this height (m) along gravity, each spanning the whole bed: one
    /// coarse unknown per band. With a height of at least one diameter a body's contacts touch
    /// at most two adjacent slabs, so the unsmoothed coarse matrix is tridiagonal, its entries
    /// and right-hand side are sums per band, and the coarse problem is small enough for one
    /// workgroup to solve directly (Thomas's algorithm). What it cannot represent is a load
    /// that varies across the width of the bed: one slab moves all its contacts together.
    Slabs { height: f64 },
    /// Boxes `horizontal` wide in both horizontal directions and `height` high along gravity:
    /// between the two (columns of `horizontal` cells, split into bands).
    Boxes { horizontal: f64, height: f64 },
}

impl Aggregates {
    /// The aggregate of a point, as integer coordinates (`down`: the unit direction of
    /// gravity; the last coordinate of slabs and boxes is the band along it, counted up).
    pub(crate) fn key(&self, x: DVec3, down: DVec3) -> [i64; 3] {
        let band = |height: f64| (x.dot(-down) / height).floor() as i64;
        match *self {
            Aggregates::Cells { edge } => {
                let x = x / edge;
                [x.x.floor() as i64, x.y.floor() as i64, x.z.floor() as i64]
            }
            Aggregates::Slabs { height } => [0, 0, band(height)],
            Aggregates::Boxes { horizontal, height } => {
                // Gravity along −z gives the x and y axes.
                let (a, b) = if down == DVec3::ZERO {
                    (DVec3::X, DVec3::Y)
                } else {
                    (-down).any_orthonormal_pair()
                };
                [
                    (x.dot(a) / horizontal).floor() as i64,
                    (x.dot(b) / horizontal).floor() as i64,
                    band(height),
                ]
            }
        }
    }
}

/// The two-level correction of the normal rows.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TwoLevel {
    /// Which contacts share a coarse unknown.
    pub aggregates: Aggregates,
    /// A coarse correction follows each sweep whose residual is above `stall` × the one
    /// before (1: never; 0: after every sweep).
    pub stall: f64,
}

/// What the block solver adds to [`SolverSettings`] (whose cap, tolerance, warm start and
/// cone it keeps).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BlockSettings {
    pub order: SweepOrder,
    /// Height of the bands of the ordered sweeps (m).
    pub band: f64,
    /// Over-relaxation ω of each block's update (1: plain Gauss–Seidel; < 2).
    pub relaxation: f64,
    /// Projected-gradient steps on a block whose Newton step leaves its set.
    pub inner: u32,
    /// Direction of gravity (the bands' "down").
    pub gravity: DVec3,
    pub two_level: Option<TwoLevel>,
}

impl BlockSettings {
    /// Plain coloured Gauss–Seidel, colours in index order.
    pub fn coloured(band: f64) -> Self {
        BlockSettings {
            order: SweepOrder::Colours,
            band,
            relaxation: 1.0,
            inner: 32,
            gravity: DVec3::NEG_Z,
            two_level: None,
        }
    }
}

/// One cone problem with block Gauss–Seidel sweeps (the twin's assembly and update around
/// them; `settings.kind` is ignored: the rows are assembled as for projected Jacobi).
pub fn solve(
    bodies: &[Body64],
    contacts: &[Contact],
    settings: &SolverSettings,
    block: &BlockSettings,
    dt: f64,
    warm: Option<WarmStart>,
) -> SolveOutput {
    solve_with(
        bodies,
        contacts,
        settings,
        block,
        dt,
        warm,
        Extra::default(),
    )
}

/// [`solve`] with the twin's model table, joint blocks or patch sums.
pub fn solve_with(
    bodies: &[Body64],
    contacts: &[Contact],
    settings: &SolverSettings,
    block: &BlockSettings,
    dt: f64,
    warm: Option<WarmStart>,
    extra: Extra,
) -> SolveOutput {
    let jacobi_rows = SolverSettings {
        kind: SolverKind::Jacobi,
        ..*settings
    };
    let method = BlockGaussSeidel { settings: *block };
    solve_with_method(
        bodies,
        contacts,
        &jacobi_rows,
        dt,
        warm,
        extra,
        Some(&method),
    )
}

pub(crate) struct BlockGaussSeidel {
    pub(crate) settings: BlockSettings,
}

/// A moving body of a constraint and the constraint's linear and angular rows on it.
pub(crate) type Side = (usize, [DVec3; 3], [DVec3; 3]);

/// A constraint's rows as the sweeps use them.
pub(crate) struct Block {
    /// Per side: the body (None when it does not move) and its linear and angular rows.
    pub(crate) sides: [Option<Side>; 2],
    /// N_ii + E_ii.
    pub(crate) a: [[f64; 3]; 3],
    inverse: Option<[[f64; 3]; 3]>,
    /// Projected-gradient step: 1/λ_max of the block in the metric of the rows' η.
    tau: f64,
}

pub(crate) type Twist = (DVec3, DVec3);

impl Block {
    pub(crate) fn new(schur: &Schur, i: usize, eta_rows: Vec3) -> Block {
        let bodies = schur.bodies;
        let sides = schur.row_jacobian(i).map(|(b, lin, ang)| {
            let moves = b != crate::model::joint::WORLD && bodies[b as usize].inv_mass > 0.0;
            moves.then_some((b as usize, lin, ang))
        });
        let mut a = [[0.0; 3]; 3];
        for (b, lin, ang) in sides.iter().flatten() {
            let body = &bodies[*b];
            for k in 0..3 {
                for l in 0..3 {
                    a[k][l] +=
                        body.inv_mass * lin[k].dot(lin[l]) + ang[k].dot(inv_inertia(body, ang[l]));
                }
            }
        }
        if let Some(e) = schur.compliance.get(i) {
            (0..3).for_each(|k| a[k][k] += e[k]);
        }
        if let Some(o) = schur.coupling.get(i) {
            for (k, l, x) in [(0, 1, o[0]), (0, 2, o[1]), (1, 2, o[2])] {
                a[k][l] += x;
                a[l][k] += x;
            }
        }
        // Gershgorin bound of D^½ A D^½, D = diag(η rows).
        let d = eta_rows.map(|x| x.max(0.0).sqrt());
        let bound = (0..3)
            .map(|k| (0..3).map(|l| (d[k] * d[l] * a[k][l]).abs()).sum::<f64>())
            .fold(0.0, f64::max);
        Block {
            sides,
            a,
            inverse: invert3(&a),
            tau: if bound > 0.0 { 1.0 / bound } else { 0.0 },
        }
    }

    /// D_iᵀ Δv.
    pub(crate) fn velocity(&self, dv: &[Twist]) -> Vec3 {
        let mut u = [0.0; 3];
        for (b, lin, ang) in self.sides.iter().flatten() {
            for k in 0..3 {
                u[k] += lin[k].dot(dv[*b].0) + ang[k].dot(dv[*b].1);
            }
        }
        u
    }

    /// Δv += M⁻¹ D_i d.
    pub(crate) fn push(&self, bodies: &[Body64], d: Vec3, dv: &mut [Twist]) {
        for (b, lin, ang) in self.sides.iter().flatten() {
            let body = &bodies[*b];
            let f = d[0] * lin[0] + d[1] * lin[1] + d[2] * lin[2];
            let t = d[0] * ang[0] + d[1] * ang[1] + d[2] * ang[2];
            dv[*b].0 += body.inv_mass * f;
            dv[*b].1 += inv_inertia(body, t);
        }
    }

    fn times(&self, x: Vec3) -> Vec3 {
        mat_vec(&self.a, x)
    }
}

fn mat_vec(a: &[[f64; 3]; 3], x: Vec3) -> Vec3 {
    [0, 1, 2].map(|k| a[k][0] * x[0] + a[k][1] * x[1] + a[k][2] * x[2])
}

/// Inverse of a symmetric 3 × 3 matrix (None when singular relative to its size).
fn invert3(a: &[[f64; 3]; 3]) -> Option<[[f64; 3]; 3]> {
    let m = nalgebra::Matrix3::from_fn(|r, c| a[r][c]);
    let scale = m.abs().max();
    if scale.is_nan() || scale <= 0.0 || m.determinant().abs() <= 1e-12 * scale.powi(3) {
        return None;
    }
    let inv = m.try_inverse()?;
    Some([0, 1, 2].map(|r| [0, 1, 2].map(|c| inv[(r, c)])))
}

/// A 32-bit integer hash (Wellons' lowbias32): the colouring's priorities, the same on a GPU.
pub(crate) fn hash32(mut x: u32) -> u32 {
    x ^= x >> 16;
    x = x.wrapping_mul(0x7feb_352d);
    x ^= x >> 15;
    x = x.wrapping_mul(0x846c_a68b);
    x ^ (x >> 16)
}

/// Jones–Plassmann colouring: in each round, every uncoloured constraint whose priority
/// (hash, index) beats every uncoloured neighbour's (a constraint sharing a moving body)
/// takes the round's colour. Rounds decide from the state at their start, so the result does
/// not depend on the order of the scan.
pub(crate) fn colour(blocks: &[Block], n_bodies: usize) -> Vec<u32> {
    let mut by_body: Vec<Vec<usize>> = vec![Vec::new(); n_bodies];
    for (i, b) in blocks.iter().enumerate() {
        for (body, _, _) in b.sides.iter().flatten() {
            by_body[*body].push(i);
        }
    }
    let priority = |i: usize| (hash32(i as u32), i);
    let mut colour = vec![u32::MAX; blocks.len()];
    let mut left: Vec<usize> = (0..blocks.len()).collect();
    let mut round = 0;
    while !left.is_empty() {
        let wins: Vec<bool> = left
            .iter()
            .map(|&i| {
                blocks[i].sides.iter().flatten().all(|(body, _, _)| {
                    by_body[*body]
                        .iter()
                        .all(|&j| j == i || colour[j] != u32::MAX || priority(j) < priority(i))
                })
            })
            .collect();
        for (&i, &w) in left.iter().zip(&wins) {
            if w {
                colour[i] = round;
            }
        }
        left = left
            .iter()
            .zip(&wins)
            .filter(|(_, &w)| !w)
            .map(|(&i, _)| i)
            .collect();
        round += 1;
    }
    debug_assert!(
        by_body.iter().all(|list| {
            let mut c: Vec<u32> = list.iter().map(|&i| colour[i]).collect();
            c.sort_unstable();
            c.windows(2).all(|w| w[0] != w[1])
        }),
        "two constraints of one colour share a moving body"
    );
    colour
}

/// A constraint's point (the contact point, or the centre of a moving body).
pub(crate) fn point(schur: &Schur, i: usize) -> DVec3 {
    let c = &schur.contacts[i];
    let v = |a: [f32; 4]| DVec3::new(a[0] as f64, a[1] as f64, a[2] as f64);
    for (id, r) in [(c.ids[0], c.ra), (c.ids[1], c.rb)] {
        if id != crate::model::joint::WORLD && (id as usize) < schur.bodies.len() {
            return schur.bodies[id as usize].pos + v(r);
        }
    }
    DVec3::ZERO
}

/// The sweep's phases: lists of constraints of one colour (and one band), in sweep order.
pub(crate) fn phases(colours: &[u32], bands: &[i64], band_order: Option<bool>) -> Vec<Vec<usize>> {
    let mut keyed: Vec<(i64, u32, usize)> = (0..colours.len())
        .map(|i| {
            let band = match band_order {
                None => 0,
                Some(top_down) if top_down => -bands[i],
                Some(_) => bands[i],
            };
            (band, colours[i], i)
        })
        .collect();
    keyed.sort_unstable();
    let mut out: Vec<Vec<usize>> = Vec::new();
    let mut last = None;
    for (band, c, i) in keyed {
        if last != Some((band, c)) {
            out.push(Vec::new());
            last = Some((band, c));
        }
        out.last_mut().expect("pushed").push(i);
    }
    out
}

/// The aggregate and weight |n·ĝ| of each contact's normal row in the two-level correction.
fn aggregates(
    sw: &Sweeps,
    s: &BlockSettings,
    shape: Aggregates,
) -> (Vec<Option<(usize, f64)>>, usize) {
    let n = sw.schur.contacts.len();
    let down = s.gravity.normalize_or_zero();
    let keys: Vec<Option<[i64; 3]>> = (0..n)
        .map(|i| {
            if !sw.is_plain_contact(i) || sw.eta[i] <= 0.0 {
                return None;
            }
            Some(shape.key(point(sw.schur, i), down))
        })
        .collect();
    let mut index = BTreeMap::new();
    for k in keys.iter().flatten() {
        let next = index.len();
        index.entry(*k).or_insert(next);
    }
    let agg = keys
        .iter()
        .enumerate()
        .map(|(i, k)| {
            let c = &sw.schur.contacts[i];
            let normal = DVec3::new(c.n_gap[0] as f64, c.n_gap[1] as f64, c.n_gap[2] as f64);
            k.map(|k| (index[&k], normal.dot(down).abs()))
        })
        .collect();
    (agg, index.len())
}

impl BlockGaussSeidel {
    /// One block's update from the current Δv; returns the change of its impulse.
    fn relax(&self, sw: &Sweeps, blk: &Block, i: usize, g: Vec3, dv: &[Twist]) -> Vec3 {
        if sw.eta[i] <= 0.0 {
            return [0, 1, 2].map(|k| -g[k]);
        }
        let u0 = {
            let (v, c) = (blk.velocity(dv), compliance_product(sw, i, g));
            [0, 1, 2].map(|k| v[k] + c[k] + sw.p[i][k])
        };
        // The block's velocity at x: u0 + A (x − g).
        let at = |x: Vec3| add(u0, blk.times(sub(x, g)));
        // The block's objective relative to g: ½ (x − g)ᵀ A (x − g) + u0ᵀ (x − g).
        let local = |x: Vec3| {
            let dx = sub(x, g);
            let ax = blk.times(dx);
            (0..3).map(|k| dx[k] * (0.5 * ax[k] + u0[k])).sum::<f64>()
        };
        let mut start = g;
        if let Some(inv) = blk.inverse {
            let newton = sub(g, mat_vec(&inv, u0));
            // Every projection returns a point of its set unchanged: then the Newton step is
            // the block's minimiser.
            let projected = sw.project(newton, i);
            if projected == newton {
                return self.relaxed(sw, i, g, newton);
            }
            // Projected steps from the better of g and the projected Newton step: at the
            // solution g is the minimiser and the steps leave it there (an exact fixed point).
            if local(projected) < local(g) {
                start = projected;
            }
        }
        let x = self.projected_steps(sw, blk, i, start, &at);
        self.relaxed(sw, i, g, x)
    }

    /// Over-relaxation of a block's new impulse x from g, projected; returns the change.
    fn relaxed(&self, sw: &Sweeps, i: usize, g: Vec3, x: Vec3) -> Vec3 {
        let w = self.settings.relaxation;
        let y = if w == 1.0 {
            x
        } else {
            sw.project([0, 1, 2].map(|k| g[k] + w * (x[k] - g[k])), i)
        };
        sub(y, g)
    }

    fn projected_steps(
        &self,
        sw: &Sweeps,
        blk: &Block,
        i: usize,
        mut x: Vec3,
        at: &dyn Fn(Vec3) -> Vec3,
    ) -> Vec3 {
        let e = sw.eta_rows[i];
        for _ in 0..self.settings.inner {
            let u = at(x);
            let next = sw.project([0, 1, 2].map(|k| x[k] - blk.tau * e[k] * u[k]), i);
            if next == x {
                break;
            }
            x = next;
        }
        x
    }

    /// One Gauss–Seidel sweep over the phases.
    pub(crate) fn sweep(
        &self,
        sw: &Sweeps,
        blocks: &[Block],
        order: &[Vec<usize>],
        gamma: &mut [Vec3],
        dv: &mut [Twist],
    ) {
        let bodies = sw.schur.bodies;
        for phase in order {
            for &i in phase {
                let d = self.relax(sw, &blocks[i], i, gamma[i], dv);
                if d != [0.0; 3] {
                    gamma[i] = add(gamma[i], d);
                    blocks[i].push(bodies, d, dv);
                }
            }
        }
    }

    /// The two-level correction of the active contacts' normal rows (see the module notes);
    /// false when it was rejected (or the coarse matrix is singular) and nothing changed.
    fn coarse(
        &self,
        sw: &Sweeps,
        blocks: &[Block],
        (agg, n_agg): (&[Option<(usize, f64)>], usize),
        gamma: &mut [Vec3],
        dv: &mut [Twist],
    ) -> bool {
        let bodies = sw.schur.bodies;
        let mut terms: Vec<(usize, usize, DVec3, DVec3)> = Vec::new();
        let mut a_c = DMatrix::<f64>::zeros(n_agg, n_agg);
        let mut rhs = DVector::<f64>::zeros(n_agg);
        let mut active = vec![false; gamma.len()];
        for (i, entry) in agg.iter().enumerate() {
            let Some((a, w)) = *entry else { continue };
            let blk = &blocks[i];
            let u_n = blk.velocity(dv)[0] + compliance_product(sw, i, gamma[i])[0] + sw.p[i][0];
            if w == 0.0 || !(gamma[i][0] > 0.0 || u_n <= 0.0) {
                continue;
            }
            active[i] = true;
            rhs[a] += w * u_n;
            a_c[(a, a)] += w * w * sw.schur.compliance.get(i).map_or(0.0, |e| e[0]);
            for (b, lin, ang) in blk.sides.iter().flatten() {
                terms.push((*b, a, w * lin[0], w * ang[0]));
            }
        }
        // Pᵀ N P body by body: the body-space impulses of each cell's unit correction.
        terms.sort_by_key(|t| (t.0, t.1));
        let mut merged: Vec<(usize, usize, DVec3, DVec3)> = Vec::new();
        for t in terms {
            match merged.last_mut() {
                Some(m) if m.0 == t.0 && m.1 == t.1 => {
                    m.2 += t.2;
                    m.3 += t.3;
                }
                _ => merged.push(t),
            }
        }
        for group in merged.chunk_by(|x, y| x.0 == y.0) {
            let body = &bodies[group[0].0];
            for x in group {
                for y in group {
                    a_c[(x.1, y.1)] +=
                        body.inv_mass * x.2.dot(y.2) + x.3.dot(inv_inertia(body, y.3));
                }
            }
        }
        for a in 0..n_agg {
            if a_c[(a, a)] <= 0.0 {
                a_c[(a, a)] = 1.0;
            }
        }
        let Some(chol) = nalgebra::Cholesky::new(a_c) else {
            return false;
        };
        let delta = chol.solve(&(-rhs));
        // Kept only when it lowers the cone problem's objective (each block solve does), so
        // the whole method stays a descent method when the projection changes the active set.
        let before = (
            objective(sw, blocks, gamma, dv),
            gamma.to_vec(),
            dv.to_vec(),
        );
        for (i, entry) in agg.iter().enumerate() {
            let Some((a, w)) = *entry else { continue };
            if !active[i] {
                continue;
            }
            let g = gamma[i];
            let y = sw.project([g[0] + w * delta[a], g[1], g[2]], i);
            let d = sub(y, g);
            gamma[i] = y;
            blocks[i].push(bodies, d, dv);
        }
        if objective(sw, blocks, gamma, dv) >= before.0 {
            gamma.copy_from_slice(&before.1);
            dv.copy_from_slice(&before.2);
            return false;
        }
        true
    }
}

/// The cone problem's objective ½ γᵀ(N + E)γ + pᵀγ, with Nγ from the bodies' Δv.
pub(crate) fn objective(sw: &Sweeps, blocks: &[Block], gamma: &[Vec3], dv: &[Twist]) -> f64 {
    (0..gamma.len())
        .map(|i| {
            let (v, c) = (blocks[i].velocity(dv), compliance_product(sw, i, gamma[i]));
            (0..3)
                .map(|k| gamma[i][k] * (0.5 * (v[k] + c[k]) + sw.p[i][k]))
                .sum::<f64>()
        })
        .sum()
}

/// (E γ)_i: the compliance and coupling part of constraint i's product.
pub(crate) fn compliance_product(sw: &Sweeps, i: usize, g: Vec3) -> Vec3 {
    let mut v = [0.0; 3];
    if let Some(e) = sw.schur.compliance.get(i) {
        v = [0, 1, 2].map(|k| e[k] * g[k]);
    }
    if let Some(o) = sw.schur.coupling.get(i) {
        v[0] += o[0] * g[1] + o[1] * g[2];
        v[1] += o[0] * g[0] + o[2] * g[2];
        v[2] += o[1] * g[0] + o[2] * g[1];
    }
    v
}

/// Every constraint's block and the sweep's phases (one list for each sweep direction of
/// the order: two for `Alternating`).
pub(crate) fn blocks_and_orders(
    sw: &Sweeps,
    s: &BlockSettings,
) -> (Vec<Block>, Vec<Vec<Vec<usize>>>) {
    let schur = sw.schur;
    let n = schur.contacts.len();
    let blocks: Vec<Block> = (0..n)
        .map(|i| Block::new(schur, i, sw.eta_rows[i]))
        .collect();
    let colours = colour(&blocks, schur.bodies.len());
    let up = -s.gravity.normalize_or_zero();
    let bands: Vec<i64> = (0..n)
        .map(|i| (point(schur, i).dot(up) / s.band).floor() as i64)
        .collect();
    let orders = match s.order {
        SweepOrder::Colours => vec![phases(&colours, &bands, None)],
        SweepOrder::TopDown => vec![phases(&colours, &bands, Some(true))],
        SweepOrder::BottomUp => vec![phases(&colours, &bands, Some(false))],
        SweepOrder::Alternating => vec![
            phases(&colours, &bands, Some(true)),
            phases(&colours, &bands, Some(false)),
        ],
    };
    (blocks, orders)
}

impl SweepMethod for BlockGaussSeidel {
    fn run(
        &self,
        sw: &mut Sweeps,
        mut gamma: Vec<Vec3>,
        _ngamma: Vec<Vec3>,
        res0: f64,
    ) -> (Vec<Vec3>, f64, bool) {
        let s = &self.settings;
        let schur = sw.schur;
        let (blocks, orders) = blocks_and_orders(sw, s);
        let agg = s.two_level.map(|t| aggregates(sw, s, t.aggregates));
        let tol = sw.tolerance_norm();
        let cap = sw.settings.max_iterations;
        let mut dv = schur.delta_v(&gamma);
        let (mut residual, mut converged) = (res0, res0 <= tol);
        let (mut sweeps, mut gs_sweeps) = (0u32, 0usize);
        let mut best = res0;
        let (mut coarse_wait, mut rejected) = (0u32, 0u32);
        while !converged && sweeps < cap {
            let order = &orders[gs_sweeps % orders.len()];
            self.sweep(sw, &blocks, order, &mut gamma, &mut dv);
            gs_sweeps += 1;
            sweeps += 1;
            *sw.iterations += 1;
            let last = residual;
            let ng = schur.apply_from(&dv, &gamma);
            residual = sw.residual(&gamma, &ng);
            best = best.min(residual);
            sw.history.push([residual, best, 0.0, 1.0]);
            converged = residual <= tol;
            // The coarse correction when the smoother has stalled: a sweep that did not halve
            // the residual is working on errors smooth across many contacts.
            if let (Some((a, n_agg)), Some(t)) = (&agg, s.two_level) {
                let stalled = residual > t.stall * last;
                if stalled && coarse_wait > 0 {
                    coarse_wait -= 1;
                } else if stalled && !converged && sweeps < cap {
                    // After a rejected correction (see `coarse`) the next one waits for
                    // 2, 4, 8, … stalled sweeps.
                    if !self.coarse(sw, &blocks, (a, *n_agg), &mut gamma, &mut dv) {
                        rejected += 1;
                        coarse_wait = 1 << rejected.min(16);
                    }
                    sweeps += 1;
                    *sw.iterations += 1;
                    let ng = schur.apply_from(&dv, &gamma);
                    residual = sw.residual(&gamma, &ng);
                    best = best.min(residual);
                    sw.history.push([residual, best, 0.0, 1.0]);
                    converged = residual <= tol;
                }
            }
        }
        (gamma, residual, converged)
    }
}

pub(crate) fn add(a: Vec3, b: Vec3) -> Vec3 {
    [a[0] + b[0], a[1] + b[1], a[2] + b[2]]
}

pub(crate) fn sub(a: Vec3, b: Vec3) -> Vec3 {
    [a[0] - b[0], a[1] - b[1], a[2] - b[2]]
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Cells keep the cubic grid; a slab is one band along gravity whatever the horizontal
    /// position; a box splits the band into horizontal cells.
    #[test]
    fn aggregate_keys_follow_their_shapes() {
        let d = 0.01;
        let down = DVec3::NEG_Z;
        let cells = Aggregates::Cells { edge: 2.0 * d };
        let slabs = Aggregates::Slabs { height: 2.0 * d };
        let boxes = Aggregates::Boxes {
            horizontal: 8.0 * d,
            height: 2.0 * d,
        };
        let (a, b, c) = (
            DVec3::new(-0.5 * d, 0.3 * d, 0.5 * d),
            DVec3::new(7.5 * d, -3.0 * d, 1.5 * d),
            DVec3::new(0.5 * d, 0.3 * d, 2.5 * d),
        );
        assert_eq!(cells.key(a, down), [-1, 0, 0]);
        assert_eq!(cells.key(b, down), [3, -2, 0]);
        assert_eq!(slabs.key(a, down), slabs.key(b, down));
        assert_eq!(slabs.key(a, down), [0, 0, 0]);
        assert_eq!(slabs.key(c, down), [0, 0, 1]);
        assert_eq!(boxes.key(a, down), [-1, 0, 0]);
        assert_eq!(boxes.key(b, down), [0, -1, 0]);
        assert_eq!(boxes.key(c, down), [0, 0, 1]);
        // Gravity along +x: the bands count along −x.
        assert_eq!(slabs.key(b, DVec3::X), [0, 0, -4]);
    }
}
