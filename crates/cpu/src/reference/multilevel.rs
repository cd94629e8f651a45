//! Coloured block Gauss–Seidel (`reference::block_gs`'s sweeps) with a better coarse level:
//! smoothed aggregation, an optional recursive (V-cycle) solve of the coarse problem, the
//! coarse correction on the tangential rows too or not, and an optional projected line
//! search. An f64 prototype measured by `benches/depth.rs` (see `docs/solver-depth.md`).
//!
//! The coarse correction, after a sweep that did not reduce the residual enough:
//!
//! - fine unknowns F: the normal rows of the active contacts (γ_n > 0 or approaching), and
//!   with [`CoarseRows::All`] or [`CoarseRows::Ray`] the tangential rows of the contacts that
//!   carry load;
//! - tentative prolongator P₀: one column per aggregate (a cubic cell, or a horizontal slab or
//!   box: [`Aggregates`]), w_i = |n_i·ĝ| on the normal row of each active contact in it (the
//!   share of the vertical load its normal carries; `Ray`: w_i γ_i / γ_i,n on the three rows
//!   of a loaded contact);
//! - smoothed aggregation (Vaněk, Mandel & Brezina 1996): P = (I − ω D⁻¹ A_FF) P₀ with A_FF
//!   the operator N + E on F, D its diagonal and ω = 4 / (3 ρ(D⁻¹ A_FF)), ρ estimated by
//!   power iteration or assumed ([`Multilevel::radius`]). The smoothing step spreads each
//!   cell's load over the neighbouring rows (with `All`, onto the tangential rows; and onto
//!   the wall contacts, whose w is 0), so the coarse space represents smooth errors far
//!   better than piecewise-constant aggregates;
//! - the Galerkin problem Pᵀ A_FF P δ = −Pᵀ u (u = (N + E)γ + p), summed body by body, solved
//!   exactly (Cholesky) or by V-cycles of the same construction on 2 × 2 × 2 coarser cells
//!   (symmetric Gauss–Seidel smoothing, a direct solve below [`COARSEST`] unknowns);
//! - the step γ ← Π(γ + α P δ), constraint by constraint, kept when the cone problem's
//!   objective ½γᵀ(N + E)γ + pᵀγ falls (the projection can raise it when it changes the active
//!   set): α = 1, or with the line search the first of 1, ½, ¼, ⅛ that lowers it; nothing
//!   changes when none does.
//!
//! The smoother (`block_gs`'s block sweeps, or with [`Multilevel::momentum`] the twin of the
//! GPU's coloured Gauss–Seidel with Nesterov's momentum) and the objective check keep every
//! fixed point the twin's (see `block_gs`).

use super::block_gs::{
    blocks_and_orders, compliance_product, objective, point, sub, Aggregates, Block,
    BlockGaussSeidel, BlockSettings, Twist,
};
use super::gauss_seidel::ColouredGaussSeidel;
use super::integrate::Body64;
use super::solve::{
    inv_inertia, solve_with_method, Extra, SolveOutput, SweepMethod, Sweeps, Vec3, WarmStart,
};
use crate::model::solver::{Contact, SolverKind, SolverSettings};
use glam::DVec3;
use nalgebra::{DMatrix, DVector};
use std::collections::BTreeMap;

/// The rows the coarse correction acts on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CoarseRows {
    /// The active contacts' normal rows.
    Normal,
    /// Each loaded contact's impulse along its own ray γ_i / γ_i,n (normal and friction
    /// scaled together: a sliding contact stays on its cone), the normal row of the others.
    Ray,
    /// The normal rows and the tangential rows of the contacts that carry load, P₀ on the
    /// normal rows only (the smoothing step gives the tangential rows their share).
    All,
}

/// How the coarse problem is solved.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CoarseSolve {
    /// Cholesky of the whole coarse matrix.
    Direct,
    /// This many V-cycles over 2 × 2 × 2 coarser cells, from zero.
    VCycles(u32),
}

/// Settings of the multilevel block solver (the smoother's `two_level` is not used).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Multilevel {
    pub smoother: BlockSettings,
    /// Sweep with the twin of the GPU's coloured Gauss–Seidel with Nesterov's momentum
    /// (`reference::gauss_seidel`, ω from the solver settings) instead of `smoother`'s block
    /// sweeps (of `smoother`, only the direction of gravity is used). The momentum restarts
    /// after each kept correction: the correction is not a step of the sweeps' iteration, so
    /// the difference of the last two iterates is no longer a direction of it (O'Donoghue &
    /// Candès 2015 restart the momentum when it stops being one).
    pub momentum: bool,
    /// The aggregates of the first coarse level.
    pub aggregates: Aggregates,
    /// A coarse correction follows each sweep whose residual is above `stall` × the one
    /// before (after a rejected one, or one that failed `gain_check`: 2, 4, 8, … such
    /// sweeps later).
    pub stall: f64,
    /// Smoothed aggregation (false: the tentative prolongator P₀).
    pub smoothed: bool,
    /// The spectral radius ρ(D⁻¹ A_FF) the smoothing's ω = 4 / (3ρ) assumes; `None`: estimated
    /// by 15 steps of power iteration (15 products with A_FF, each a sweep's traffic, which a
    /// GPU correction would rather not pay: on the columns ρ is 2.4–2.9).
    pub radius: Option<f64>,
    pub rows: CoarseRows,
    pub solve: CoarseSolve,
    /// Backtracking α = 1, ½, ¼, ⅛ (false: α = 1 or nothing).
    pub line_search: bool,
    /// Back off (as after a rejection) also when a kept correction lowered the objective
    /// less than the sweep before it did.
    pub gain_check: bool,
    /// Re-solves of the coarse problem without the unloaded contacts its direction pushes
    /// below γ_n = 0 (each costs a sweep).
    pub bound_passes: u32,
}

impl Multilevel {
    /// What the GPU's slab correction runs (`[solver] coarse_slab`, engine `solve::slabs`):
    /// the GPU's momentum Gauss–Seidel, slabs `height` high stacked against `gravity`, the
    /// active contacts' normal rows, the smoothed prolongator with ρ assumed 3, the stall
    /// test at ½, the direct coarse solve and the gain check.
    pub fn gpu_slabs(height: f64, gravity: DVec3) -> Multilevel {
        Multilevel {
            smoother: BlockSettings {
                gravity,
                ..BlockSettings::coloured(height)
            },
            momentum: true,
            aggregates: Aggregates::Slabs { height },
            stall: 0.5,
            smoothed: true,
            radius: Some(3.0),
            rows: CoarseRows::Normal,
            solve: CoarseSolve::Direct,
            line_search: false,
            gain_check: true,
            bound_passes: 0,
        }
    }
}

/// Below this many unknowns a V-cycle's level is solved directly.
pub const COARSEST: usize = 32;

/// One cone problem (the twin's assembly and update around the sweeps; `settings.kind` is
/// ignored: the rows are assembled as for projected Jacobi).
pub fn solve(
    bodies: &[Body64],
    contacts: &[Contact],
    settings: &SolverSettings,
    ml: &Multilevel,
    dt: f64,
    warm: Option<WarmStart>,
) -> SolveOutput {
    let jacobi_rows = SolverSettings {
        kind: SolverKind::Jacobi,
        ..*settings
    };
    solve_with_method(
        bodies,
        contacts,
        &jacobi_rows,
        dt,
        warm,
        Extra::default(),
        Some(&MultilevelMethod { settings: *ml }),
    )
}

struct MultilevelMethod {
    settings: Multilevel,
}

/// A sparse set of columns (coarse unknowns) over fine rows: (fine row, column, value).
type Entries = Vec<(usize, usize, f64)>;

/// The fine unknowns F of a coarse correction: (constraint, row) and the cells.
struct Fine {
    rows: Vec<(usize, usize)>,
    cell_keys: Vec<[i64; 3]>,
    tentative: Entries,
}

/// Each body's share of a set of columns: per body, (column, linear, angular impulse),
/// sorted by column.
fn body_columns(
    blocks: &[Block],
    fine: &Fine,
    cols: &Entries,
    n_bodies: usize,
) -> Vec<Vec<(usize, DVec3, DVec3)>> {
    let mut per: Vec<Vec<(usize, DVec3, DVec3)>> = vec![Vec::new(); n_bodies];
    for &(f, c, v) in cols {
        let (i, k) = fine.rows[f];
        for (b, lin, ang) in blocks[i].sides.iter().flatten() {
            per[*b].push((c, v * lin[k], v * ang[k]));
        }
    }
    for list in &mut per {
        list.sort_by_key(|t| t.0);
        let mut merged: Vec<(usize, DVec3, DVec3)> = Vec::with_capacity(list.len());
        for t in list.drain(..) {
            match merged.last_mut() {
                Some(m) if m.0 == t.0 => {
                    m.1 += t.1;
                    m.2 += t.2;
                }
                _ => merged.push(t),
            }
        }
        *list = merged;
    }
    per
}

/// The diagonal compliance of fine row f.
fn row_compliance(sw: &Sweeps, fine: &Fine, f: usize) -> f64 {
    let (i, k) = fine.rows[f];
    sw.schur.compliance.get(i).map_or(0.0, |e| e[k])
}

impl MultilevelMethod {
    /// F, its cells and the tentative prolongator at the current impulses.
    fn fine(&self, sw: &Sweeps, u: &[Vec3], gamma: &[Vec3], at_bound: &[bool]) -> Fine {
        let s = &self.settings;
        let down = s.smoother.gravity.normalize_or_zero();
        let mut index = BTreeMap::new();
        let mut fine = Fine {
            rows: Vec::new(),
            cell_keys: Vec::new(),
            tentative: Vec::new(),
        };
        for i in 0..gamma.len() {
            if !sw.is_plain_contact(i) || sw.eta[i] <= 0.0 {
                continue;
            }
            if at_bound[i] || !(gamma[i][0] > 0.0 || u[i][0] <= 0.0) {
                continue;
            }
            let key = s.aggregates.key(point(sw.schur, i), down);
            let next = index.len();
            let cell = *index.entry(key).or_insert(next);
            if cell == fine.cell_keys.len() {
                fine.cell_keys.push(key);
            }
            let c = &sw.schur.contacts[i];
            let normal = DVec3::new(c.n_gap[0] as f64, c.n_gap[1] as f64, c.n_gap[2] as f64);
            let w = normal.dot(down).abs();
            let loaded = gamma[i][0] > 0.0;
            let share = match s.rows {
                CoarseRows::Ray if loaded => gamma[i].map(|x| x / gamma[i][0]),
                CoarseRows::All if loaded => [1.0, 0.0, 0.0],
                _ => {
                    fine.rows.push((i, 0));
                    if w > 0.0 {
                        fine.tentative.push((fine.rows.len() - 1, cell, w));
                    }
                    continue;
                }
            };
            for (k, x) in share.iter().enumerate() {
                fine.rows.push((i, k));
                if w > 0.0 && *x != 0.0 {
                    fine.tentative.push((fine.rows.len() - 1, cell, w * x));
                }
            }
        }
        fine
    }

    /// A_FF x (matrix-free, through the bodies).
    fn apply_fine(&self, sw: &Sweeps, fine: &Fine, x: &[f64]) -> Vec<f64> {
        let mut g = vec![[0.0; 3]; sw.schur.contacts.len()];
        for (f, &(i, k)) in fine.rows.iter().enumerate() {
            g[i][k] = x[f];
        }
        let y = sw.schur.apply(&g);
        fine.rows.iter().map(|&(i, k)| y[i][k]).collect()
    }

    /// ρ(D⁻¹ A_FF) by power iteration.
    fn spectral_radius(&self, sw: &Sweeps, fine: &Fine, diag: &[f64]) -> f64 {
        let n = fine.rows.len();
        // A deterministic start with every component nonzero.
        let mut x: Vec<f64> = (0..n)
            .map(|f| 1.0 + 0.5 * ((f * 7919) % 13) as f64 / 13.0)
            .collect();
        let mut rho = 0.0;
        for _ in 0..15 {
            let ax = self.apply_fine(sw, fine, &x);
            let y: Vec<f64> = ax.iter().zip(diag).map(|(a, d)| a / d).collect();
            let norm = |v: &[f64]| v.iter().map(|a| a * a).sum::<f64>().sqrt();
            let (ny, nx) = (norm(&y), norm(&x));
            if ny == 0.0 || nx == 0.0 {
                break;
            }
            rho = ny / nx;
            x = y.iter().map(|a| a / ny).collect();
        }
        rho
    }

    /// The prolongator: P₀, smoothed by one damped-Jacobi step of A_FF when asked.
    fn prolongator(&self, sw: &Sweeps, blocks: &[Block], fine: &Fine, diag: &[f64]) -> Entries {
        if !self.settings.smoothed {
            return fine.tentative.clone();
        }
        let bodies = sw.schur.bodies;
        let rho = match self.settings.radius {
            Some(rho) => rho,
            None => self.spectral_radius(sw, fine, diag),
        };
        if !(rho > 0.0 && rho.is_finite()) {
            return fine.tentative.clone();
        }
        let omega = 4.0 / (3.0 * rho);
        let per_body = body_columns(blocks, fine, &fine.tentative, bodies.len());
        // (A P₀) row by row: each row reads the columns its bodies carry.
        let mut p: BTreeMap<(usize, usize), f64> = BTreeMap::new();
        for &(f, c, v) in &fine.tentative {
            *p.entry((f, c)).or_insert(0.0) +=
                v * (1.0 - omega * row_compliance(sw, fine, f) / diag[f]);
        }
        for (f, &(i, k)) in fine.rows.iter().enumerate() {
            for (b, lin, ang) in blocks[i].sides.iter().flatten() {
                let body = &bodies[*b];
                for (c, l, a) in &per_body[*b] {
                    let ap = body.inv_mass * lin[k].dot(*l) + ang[k].dot(inv_inertia(body, *a));
                    *p.entry((f, *c)).or_insert(0.0) -= omega * ap / diag[f];
                }
            }
        }
        p.into_iter().map(|((f, c), v)| (f, c, v)).collect()
    }

    /// The coarse matrix Pᵀ A_FF P (body by body, plus the rows' compliance).
    fn galerkin(&self, sw: &Sweeps, blocks: &[Block], fine: &Fine, p: &Entries) -> DMatrix<f64> {
        let bodies = sw.schur.bodies;
        let n_c = fine.cell_keys.len();
        let mut a = DMatrix::<f64>::zeros(n_c, n_c);
        for (b, list) in body_columns(blocks, fine, p, bodies.len())
            .iter()
            .enumerate()
        {
            let body = &bodies[b];
            for x in list {
                for y in list {
                    a[(x.0, y.0)] += body.inv_mass * x.1.dot(y.1) + x.2.dot(inv_inertia(body, y.2));
                }
            }
        }
        // P is sorted by row: the compliance couples the columns of one row.
        for row in p.chunk_by(|x, y| x.0 == y.0) {
            let e = row_compliance(sw, fine, row[0].0);
            if e == 0.0 {
                continue;
            }
            for x in row {
                for y in row {
                    a[(x.1, y.1)] += e * x.2 * y.2;
                }
            }
        }
        for c in 0..n_c {
            if a[(c, c)] <= 0.0 {
                a[(c, c)] = 1.0;
            }
        }
        a
    }

    /// The coarse correction; returns the sweeps it cost and the objective's fall (0: it was
    /// rejected and nothing changed).
    fn correct(
        &self,
        sw: &Sweeps,
        blocks: &[Block],
        gamma: &mut [Vec3],
        dv: &mut [Twist],
    ) -> (u32, f64) {
        let u: Vec<Vec3> = (0..gamma.len())
            .map(|i| {
                let (v, c) = (blocks[i].velocity(dv), compliance_product(sw, i, gamma[i]));
                [0, 1, 2].map(|k| v[k] + c[k] + sw.p[i][k])
            })
            .collect();
        // A contact at γ_n = 0 that the direction pushes further down stays at its bound:
        // it leaves F and the coarse problem is solved again (an active-set step).
        let mut at_bound = vec![false; gamma.len()];
        let mut cost = 0;
        let mut d = Vec::new();
        for _ in 0..=self.settings.bound_passes {
            cost += 1;
            let Some(next) = self.direction(sw, blocks, &u, gamma, &at_bound) else {
                return (cost, 0.0);
            };
            d = next;
            let mut changed = false;
            for i in 0..gamma.len() {
                if gamma[i][0] <= 0.0 && d[i][0] < 0.0 {
                    at_bound[i] = true;
                    changed = true;
                }
            }
            if !changed {
                break;
            }
        }
        let (tries, gain) = self.line_search(sw, blocks, gamma, dv, &d);
        (cost + tries - 1, gain)
    }

    /// The coarse correction's direction P δ (None when there is no coarse problem), the
    /// contacts marked `at_bound` left out.
    fn direction(
        &self,
        sw: &Sweeps,
        blocks: &[Block],
        u: &[Vec3],
        gamma: &[Vec3],
        at_bound: &[bool],
    ) -> Option<Vec<Vec3>> {
        let fine = self.fine(sw, u, gamma, at_bound);
        if fine.tentative.is_empty() {
            return None;
        }
        let diag: Vec<f64> = fine
            .rows
            .iter()
            .map(|&(i, k)| blocks[i].a[k][k].max(f64::MIN_POSITIVE))
            .collect();
        let p = self.prolongator(sw, blocks, &fine, &diag);
        let a_c = self.galerkin(sw, blocks, &fine, &p);
        let mut rhs = DVector::<f64>::zeros(fine.cell_keys.len());
        for &(f, c, v) in &p {
            let (i, k) = fine.rows[f];
            rhs[c] -= v * u[i][k];
        }
        let delta = match self.settings.solve {
            CoarseSolve::Direct => match nalgebra::Cholesky::new(a_c) {
                Some(ch) => ch.solve(&rhs),
                None => return None,
            },
            CoarseSolve::VCycles(n) => {
                let h = Hierarchy::new(a_c, &fine.cell_keys);
                let mut x = DVector::zeros(rhs.len());
                for _ in 0..n {
                    h.cycle(0, &rhs, &mut x);
                }
                x
            }
        };
        let mut d = vec![[0.0; 3]; gamma.len()];
        for &(f, c, v) in &p {
            let (i, k) = fine.rows[f];
            d[i][k] += v * delta[c];
        }
        Some(d)
    }

    /// γ ← Π(γ + α d) for the first α of 1, ½, ¼, ⅛ that lowers the objective; returns the
    /// trials and the objective's fall.
    fn line_search(
        &self,
        sw: &Sweeps,
        blocks: &[Block],
        gamma: &mut [Vec3],
        dv: &mut [Twist],
        d: &[Vec3],
    ) -> (u32, f64) {
        let bodies = sw.schur.bodies;
        let f0 = objective(sw, blocks, gamma, dv);
        let tries = if self.settings.line_search { 4 } else { 1 };
        let mut alpha = 1.0;
        for t in 0..tries {
            let (mut g, mut v) = (gamma.to_vec(), dv.to_vec());
            for i in 0..g.len() {
                if d[i] == [0.0; 3] {
                    continue;
                }
                let y = sw.project([0, 1, 2].map(|k| g[i][k] + alpha * d[i][k]), i);
                blocks[i].push(bodies, sub(y, g[i]), &mut v);
                g[i] = y;
            }
            let f1 = objective(sw, blocks, &g, &v);
            if f1 < f0 {
                gamma.copy_from_slice(&g);
                dv.copy_from_slice(&v);
                return (t + 1, f0 - f1);
            }
            alpha *= 0.5;
        }
        (tries, 0.0)
    }
}

/// When the next coarse correction may run: after one rejected (or, under `gain_check`,
/// worth less than the sweeps it cost), wait 2, 4, 8, … stalled sweeps.
#[derive(Default)]
struct Backoff {
    wait: u32,
    rejected: u32,
}

/// What a correction updates: the impulses, the bodies' Δv, the sweep count and the best
/// residual so far.
type CorrectionState<'a> = (&'a mut [Vec3], &'a mut [Twist], &'a mut u32, &'a mut f64);

impl MultilevelMethod {
    /// After a stalled sweep whose objective fell by `sweep_gain`: a coarse correction,
    /// unless the back-off says wait. Its passes count as sweeps and it is recorded as
    /// APGD's steps are (the last field 0 when it was rejected). Returns the objective's fall
    /// and the residual after it when one ran.
    fn correct_after_stall(
        &self,
        sw: &mut Sweeps,
        blocks: &[Block],
        (gamma, dv, sweeps, best): CorrectionState<'_>,
        backoff: &mut Backoff,
        sweep_gain: f64,
    ) -> Option<(f64, f64)> {
        if backoff.wait > 0 {
            backoff.wait -= 1;
            return None;
        }
        let (cost, gain) = self.correct(sw, blocks, gamma, dv);
        let worth = if self.settings.gain_check {
            gain > sweep_gain * cost as f64
        } else {
            gain > 0.0
        };
        if worth {
            backoff.rejected = 0;
        } else {
            backoff.rejected += 1;
            backoff.wait = 1 << backoff.rejected.min(16);
        }
        *sweeps += cost;
        *sw.iterations += cost;
        let residual = sw.residual(gamma, &sw.schur.apply_from(dv, gamma));
        *best = best.min(residual);
        let kept = if gain > 0.0 { 1.0 } else { 0.0 };
        sw.history.push([residual, *best, cost as f64, kept]);
        Some((gain, residual))
    }

    /// The sweeps of [`Multilevel::momentum`]: the GPU's coloured Gauss–Seidel with
    /// Nesterov's momentum, its iteration and its records unchanged, with the coarse
    /// correction applied to the swept (projected) impulses after a stalled sweep, as under
    /// the block sweeps; a kept correction restarts the momentum.
    fn run_momentum(
        &self,
        sw: &mut Sweeps,
        mut gamma: Vec<Vec3>,
        res0: f64,
    ) -> (Vec<Vec3>, f64, bool) {
        let s = &self.settings;
        let schur = sw.schur;
        // The block rows the correction reads (velocities, body impulses, the objective).
        let blocks: Vec<Block> = (0..schur.contacts.len())
            .map(|i| Block::new(schur, i, sw.eta_rows[i]))
            .collect();
        let colouring = ColouredGaussSeidel::prepare(sw);
        let tol = sw.tolerance_norm();
        let cap = sw.settings.max_iterations;
        let mut dv = schur.delta_v(&gamma);
        let (mut residual, mut converged) = (res0, res0 <= tol);
        // The cap counts sweeps; the corrections count in the iterations (as the GPU's).
        let mut sweeps = 0u32;
        let mut corrections = 0u32;
        let mut best = res0;
        let mut backoff = Backoff::default();
        let mut theta = 1.0f64;
        let mut previous = gamma.clone();
        let mut dv_previous = dv.clone();
        let mut f = objective(sw, &blocks, &gamma, &dv);
        let mut low = res0;
        // The impulses before each sweep (the extrapolated y), for the restart test.
        let mut before = gamma.clone();
        while !converged && sweeps < cap {
            before.clone_from(&gamma);
            ColouredGaussSeidel::sweep(sw, &colouring, &mut gamma, &mut dv);
            sweeps += 1;
            *sw.iterations += 1;
            let r = sw.residual(&gamma, &schur.apply_from(&dv, &gamma));
            let last = residual;
            let mut beta;
            let fresh = theta == 1.0;
            low = ColouredGaussSeidel::lowest(fresh, low, r);
            let swept = (&before[..], &gamma[..], &previous[..]);
            let restart = ColouredGaussSeidel::restarts(fresh, swept, r, low);
            (beta, theta) = ColouredGaussSeidel::momentum(theta, restart);
            residual = r;
            best = best.min(r);
            sw.history.push([r, best, beta, 1.0]);
            converged = r <= tol;
            if converged {
                break;
            }
            // The iteration's fall of the objective, from the last swept (or corrected)
            // impulses: what a correction has to beat under `gain_check`.
            let f_sweep = f;
            f = objective(sw, &blocks, &gamma, &dv);
            let sweep_gain = f_sweep - f;
            if residual > s.stall * last && sweeps < cap {
                let step = (&mut gamma[..], &mut dv[..], &mut corrections, &mut best);
                if let Some((gain, r)) =
                    self.correct_after_stall(sw, &blocks, step, &mut backoff, sweep_gain)
                {
                    f -= gain;
                    residual = r;
                    converged = residual <= tol;
                    if converged {
                        break;
                    }
                    if gain > 0.0 {
                        (beta, theta) = (0.0, 1.0);
                    }
                }
            }
            ColouredGaussSeidel::extrapolate(
                beta,
                &mut gamma,
                &mut previous,
                &mut dv,
                &mut dv_previous,
            );
        }
        // As `gauss_finish`: at the cap, the last swept (or corrected) γ.
        if !converged && sweeps > 0 {
            gamma = previous;
        }
        (gamma, residual, converged)
    }
}

/// The coarse levels of a V-cycle: level 0 is the correction's coarse problem; each next
/// level aggregates 2 × 2 × 2 cells with a smoothed prolongator.
struct Hierarchy {
    a: Vec<DMatrix<f64>>,
    /// P from level l + 1 to level l.
    p: Vec<DMatrix<f64>>,
    coarsest: Option<nalgebra::Cholesky<f64, nalgebra::Dyn>>,
}

impl Hierarchy {
    fn new(a0: DMatrix<f64>, keys: &[[i64; 3]]) -> Hierarchy {
        let mut h = Hierarchy {
            a: vec![a0],
            p: Vec::new(),
            coarsest: None,
        };
        let mut keys = keys.to_vec();
        loop {
            let a = h.a.last().expect("level 0");
            let n = a.nrows();
            if n <= COARSEST {
                break;
            }
            let mut index = BTreeMap::new();
            let next: Vec<usize> = keys
                .iter()
                .map(|k| {
                    let key = k.map(|x| x.div_euclid(2));
                    let len = index.len();
                    *index.entry(key).or_insert(len)
                })
                .collect();
            let m = index.len();
            if m == n {
                break;
            }
            let mut p0 = DMatrix::<f64>::zeros(n, m);
            for (i, &c) in next.iter().enumerate() {
                p0[(i, c)] = 1.0;
            }
            let p = smooth_dense(a, p0);
            let ac = p.transpose() * a * &p;
            let mut new_keys = vec![[0; 3]; m];
            for (k, &c) in index.iter() {
                new_keys[c] = *k;
            }
            keys = new_keys;
            h.p.push(p);
            h.a.push(ac);
        }
        h.coarsest = nalgebra::Cholesky::new(h.a.last().expect("level").clone());
        h
    }

    /// One V(1, 1) cycle on level l: x improved towards A_l x = b.
    fn cycle(&self, l: usize, b: &DVector<f64>, x: &mut DVector<f64>) {
        let a = &self.a[l];
        if l + 1 == self.a.len() {
            if let Some(ch) = &self.coarsest {
                *x = ch.solve(b);
            } else {
                gauss_seidel(a, b, x, false);
                gauss_seidel(a, b, x, true);
            }
            return;
        }
        gauss_seidel(a, b, x, false);
        let r = b - a * &*x;
        let p = &self.p[l];
        let rc = p.transpose() * r;
        let mut xc = DVector::zeros(rc.len());
        self.cycle(l + 1, &rc, &mut xc);
        *x += p * xc;
        gauss_seidel(a, b, x, true);
    }
}

/// P = (I − ω D⁻¹ A) P₀, ω = 4 / (3 ρ(D⁻¹ A)) (power iteration).
fn smooth_dense(a: &DMatrix<f64>, p0: DMatrix<f64>) -> DMatrix<f64> {
    let n = a.nrows();
    let dinv = DVector::from_iterator(n, (0..n).map(|i| 1.0 / a[(i, i)]));
    let mut x = DVector::from_iterator(n, (0..n).map(|i| 1.0 + ((i * 7919) % 13) as f64 / 26.0));
    let mut rho = 0.0;
    for _ in 0..15 {
        let y = (a * &x).component_mul(&dinv);
        let (ny, nx) = (y.norm(), x.norm());
        if ny == 0.0 || nx == 0.0 {
            break;
        }
        rho = ny / nx;
        x = y / ny;
    }
    if !(rho > 0.0 && rho.is_finite()) {
        return p0;
    }
    let omega = 4.0 / (3.0 * rho);
    let mut ap = a * &p0;
    for (i, mut row) in ap.row_iter_mut().enumerate() {
        row *= omega * dinv[i];
    }
    p0 - ap
}

/// One Gauss–Seidel sweep on A x = b, forward or backward.
fn gauss_seidel(a: &DMatrix<f64>, b: &DVector<f64>, x: &mut DVector<f64>, backward: bool) {
    let n = a.nrows();
    for s in 0..n {
        let i = if backward { n - 1 - s } else { s };
        let sum: f64 = (0..n).filter(|&j| j != i).map(|j| a[(i, j)] * x[j]).sum();
        x[i] = (b[i] - sum) / a[(i, i)];
    }
}

impl SweepMethod for MultilevelMethod {
    fn run(
        &self,
        sw: &mut Sweeps,
        mut gamma: Vec<Vec3>,
        _ngamma: Vec<Vec3>,
        res0: f64,
    ) -> (Vec<Vec3>, f64, bool) {
        let s = &self.settings;
        if s.momentum {
            return self.run_momentum(sw, gamma, res0);
        }
        let schur = sw.schur;
        let (blocks, orders) = blocks_and_orders(sw, &s.smoother);
        let smoother = BlockGaussSeidel {
            settings: s.smoother,
        };
        let tol = sw.tolerance_norm();
        let cap = sw.settings.max_iterations;
        let mut dv = schur.delta_v(&gamma);
        let (mut residual, mut converged) = (res0, res0 <= tol);
        let (mut sweeps, mut gs_sweeps) = (0u32, 0usize);
        let mut best = res0;
        let mut backoff = Backoff::default();
        let mut f = objective(sw, &blocks, &gamma, &dv);
        while !converged && sweeps < cap {
            let order = &orders[gs_sweeps % orders.len()];
            smoother.sweep(sw, &blocks, order, &mut gamma, &mut dv);
            gs_sweeps += 1;
            sweeps += 1;
            *sw.iterations += 1;
            let last = residual;
            residual = sw.residual(&gamma, &schur.apply_from(&dv, &gamma));
            best = best.min(residual);
            sw.history.push([residual, best, 0.0, 1.0]);
            converged = residual <= tol;
            // The sweep's fall of the objective: what a coarse correction, which costs about
            // as much as a sweep, has to beat under `gain_check`. (Smooth errors carry little
            // energy, so on a deep static bed a useful correction can fall short of it.)
            let f_sweep = f;
            f = objective(sw, &blocks, &gamma, &dv);
            let sweep_gain = f_sweep - f;
            let stalled = residual > s.stall * last;
            if !stalled || converged || sweeps >= cap {
                continue;
            }
            let step = (&mut gamma[..], &mut dv[..], &mut sweeps, &mut best);
            if let Some((gain, r)) =
                self.correct_after_stall(sw, &blocks, step, &mut backoff, sweep_gain)
            {
                f -= gain;
                residual = r;
                converged = residual <= tol;
            }
        }
        (gamma, residual, converged)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A V-cycle on a 1-D Laplacian of 200 unknowns (a column's normal problem, cells stacked
    /// along z) cuts the error's energy norm by a factor that does not depend on the size.
    #[test]
    fn v_cycles_reduce_a_column_laplacian_error_fast() {
        let n = 200;
        let a = DMatrix::from_fn(n, n, |i, j| match i.abs_diff(j) {
            0 => 2.0 + 1e-9,
            1 => -1.0,
            _ => 0.0,
        });
        let keys: Vec<[i64; 3]> = (0..n as i64).map(|z| [0, 0, z]).collect();
        let h = Hierarchy::new(a.clone(), &keys);
        assert!(h.a.len() > 2, "no coarse levels were built");
        let b = DVector::from_element(n, 1.0);
        let exact = a.clone().cholesky().expect("SPD").solve(&b);
        let energy = |x: &DVector<f64>| {
            let e = x - &exact;
            e.dot(&(&a * &e)).sqrt()
        };
        let mut x = DVector::zeros(n);
        let mut last = energy(&x);
        for cycle in 0..4 {
            h.cycle(0, &b, &mut x);
            let e = energy(&x);
            eprintln!("cycle {cycle}: {e:e}");
            assert!(e <= last / 3.0, "cycle {cycle}: error {e:e} after {last:e}");
            last = e;
        }
    }
}
