//! Lemke's complementary pivoting algorithm for the linear complementarity problem (Golle et al.)
//!
//! ```text
//! find z ≥ 0 with w = M z + q ≥ 0 and zᵀ w = 0
//! ```
//!
//! on the CPU in f64 (nalgebra). The textbook scheme (Cottle, Pang & Stone §4.4; Murty §2):
//! the system `I w − M z − d z₀ = q` with the artificial variable `z₀` and covering vector `d`
//! is pivoted from an almost-complementary basis to a complementary one, each leaving
//! variable's complement entering next, until `z₀` leaves (solution) or the entering column
//! has no positive entry (ray termination: the algorithm proves nothing about the LCP, and for
//! the copositive-plus matrices of contact problems this means it has no solution).
//!
//! * **Revised form**: the basis inverse `B⁻¹` (n × n) is updated by one rank-one elimination
//!   per pivot (O(n²)) and refactorised by LU (O(n³)) every [`LemkeOptions::refactor_every`]
//!   pivots (default max(64, n), so refactorising costs no more than pivoting); the returned
//!   basic solution gets two steps of iterative refinement, so z solves its basis to machine
//!   precision. Drift of the updated `B⁻¹` is guarded three ways: z₀ leaves when its ratio ties
//!   the minimum within 1e-9 (relative), a ray is looked at again after a fresh LU, and a cold
//!   ray is redone with an LU at every pivot before it is reported (see [`solve`]).
//! * **Lexicographic ratio test**: ties in the minimum ratio are broken by the rows of
//!   `B⁻¹ B₀` (B₀ the starting basis) divided by the pivot column, the rule under which Lemke's
//!   algorithm cannot cycle on degenerate problems. If `z₀` is among the tied rows it leaves.
//! * **Warm start**: a complementary basis (z_i or w_i basic per row, e.g. the previous time
//!   step's) is tried first: `M_JJ z_J = −q_J` on its active rows J (an LU of |J| × |J|); if
//!   that z and `w = Mz + q` are non-negative it is the solution, with no pivot. Otherwise the
//!   covering vector is `d = B₀ e`, so that in the basis' coordinates `z₀`'s column is `−e`
//!   and the first pivot is the usual "most negative row" start from that basis; a ray from
//!   there is redone cold (d = e), the start for which a ray means no solution.

use nalgebra::{DMatrix, DVector};

/// Settings of one solve.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LemkeOptions {
    /// Most pivots before [`LemkeError::PivotLimit`] (0: `max(1000, 50 n)`).
    pub max_pivots: usize,
    /// Smallest pivot-column entry that may be pivoted on, relative to the column's largest.
    pub pivot_tol: f64,
    /// Values above `−zero_tol` count as non-negative (feasibility of a warm start, the
    /// initial `q ≥ 0` test), relative to `max(1, ‖q‖∞)`.
    pub zero_tol: f64,
    /// Refactorise the basis every this many pivots (0: max(64, n)).
    pub refactor_every: usize,
    /// A returned z must satisfy `‖min(z, Mz + q)‖∞ ≤ accept_tol · max(1, ‖q‖∞)`, else the
    /// attempt failed ([`LemkeError::Inaccurate`]).
    pub accept_tol: f64,
}

impl Default for LemkeOptions {
    fn default() -> Self {
        LemkeOptions {
            max_pivots: 0,
            pivot_tol: 1e-9,
            zero_tol: 1e-12,
            refactor_every: 0,
            accept_tol: 1e-8,
        }
    }
}

/// An LCP solution.
#[derive(Clone, Debug, PartialEq)]
pub struct LemkeSolution {
    pub z: DVector<f64>,
    /// `M z + q`, recomputed from z.
    pub w: DVector<f64>,
    pub pivots: usize,
    /// Per row: true where `z_i` is basic in the final basis (the warm start of a next solve).
    pub basis: Vec<bool>,
    /// Whether the warm-start basis was used (it factorised).
    pub warm_started: bool,
    /// Failed starts (rays or rejected answers) before the one that solved.
    pub retries: u32,
}

impl LemkeSolution {
    /// `‖min(z, w)‖₂`: zero exactly at a solution (the natural residual of the LCP).
    pub fn residual(&self) -> f64 {
        self.z
            .iter()
            .zip(self.w.iter())
            .map(|(z, w)| z.min(*w).powi(2))
            .sum::<f64>()
            .sqrt()
    }

    /// `‖min(z, w)‖∞`.
    pub fn residual_inf(&self) -> f64 {
        self.z
            .iter()
            .zip(self.w.iter())
            .map(|(z, w)| z.min(*w).abs())
            .fold(0.0, f64::max)
    }
}

/// Why a solve produced no solution. Indices are LCP rows (0-based).
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum LemkeError {
    /// The entering variable's column has no positive entry: the ray is unbounded.
    #[error("ray termination after {pivots} pivots: entering {var} of row {row} can grow without bound (no solution is reachable from this start)")]
    Ray {
        pivots: usize,
        /// Failed starts before this one.
        retries: u32,
        /// "z" or "w".
        var: &'static str,
        row: usize,
    },
    #[error("pivot limit of {limit} reached")]
    PivotLimit { limit: usize },
    #[error("the LCP data is not finite (row {row})")]
    NonFinite { row: usize },
    /// The final basis is numerically singular: its basic solution violates the LCP by more
    /// than round-off (`‖min(z, Mz + q)‖∞` above [`LemkeOptions::accept_tol`]).
    #[error("inaccurate after {pivots} pivots: the final basis is numerically singular (‖min(z, Mz + q)‖∞ = {residual:e})")]
    Inaccurate {
        pivots: usize,
        residual: f64,
        retries: u32,
    },
    #[error("M is {rows}×{cols} but q has {len} rows")]
    Shape {
        rows: usize,
        cols: usize,
        len: usize,
    },
}

impl LemkeError {
    /// The pivots spent when another start may succeed (a ray or an inaccurate end).
    pub fn retry_pivots(&self) -> Option<usize> {
        match self {
            LemkeError::Ray { pivots, .. } | LemkeError::Inaccurate { pivots, .. } => Some(*pivots),
            _ => None,
        }
    }

    /// Failed starts before the one that ended in this error.
    pub fn retries(&self) -> u32 {
        match self {
            LemkeError::Ray { retries, .. } | LemkeError::Inaccurate { retries, .. } => *retries,
            _ => 0,
        }
    }

    /// This error after `pivots` more pivots spent in `retries` earlier failed starts.
    pub fn with_spent(mut self, spent: usize, more: u32) -> Self {
        if let LemkeError::Ray {
            pivots, retries, ..
        }
        | LemkeError::Inaccurate {
            pivots, retries, ..
        } = &mut self
        {
            *pivots += spent;
            *retries += more;
        }
        self
    }
}

/// Variable ids: `0..n` are w, `n..2n` are z, `2n` is z₀.
struct Tableau<'a> {
    m: &'a DMatrix<f64>,
    q: &'a DVector<f64>,
    n: usize,
    d: DVector<f64>,
    basic: Vec<usize>,
    binv: DMatrix<f64>,
    x: DVector<f64>,
    /// The starting basis matrix and the lexicographic rows `L = B⁻¹ B₀`, updated with B⁻¹
    /// (None: B₀ = I, L = B⁻¹). Kept rather than recomputed per tie: on degenerate stacks
    /// the ties run over most columns, and `B⁻¹_i · B₀_k` each time made a pivot O(n² ties).
    b0: Option<(DMatrix<f64>, DMatrix<f64>)>,
}

impl Tableau<'_> {
    /// Column of variable `v` in `I w − M z − d z₀ = q`.
    fn column(&self, v: usize) -> DVector<f64> {
        let n = self.n;
        if v < n {
            let mut c = DVector::zeros(n);
            c[v] = 1.0;
            c
        } else if v < 2 * n {
            -self.m.column(v - n)
        } else {
            -&self.d
        }
    }

    fn basis_matrix(&self, vars: &[usize]) -> DMatrix<f64> {
        let mut b = DMatrix::zeros(self.n, self.n);
        for (k, &v) in vars.iter().enumerate() {
            b.set_column(k, &self.column(v));
        }
        b
    }

    /// `B⁻¹ a` for the column of variable `v`.
    fn pivot_column(&self, v: usize) -> DVector<f64> {
        let n = self.n;
        if v < n {
            self.binv.column(v).into_owned()
        } else {
            &self.binv * self.column(v)
        }
    }

    /// Element k of the lexicographic row i: (B⁻¹ B₀)_{ik}.
    fn lex(&self, i: usize, k: usize) -> f64 {
        match &self.b0 {
            None => self.binv[(i, k)],
            Some((_, l)) => l[(i, k)],
        }
    }

    /// `B⁻¹` of the basis `vars` through its non-unit block: with W the positions holding a
    /// `w_i` (unit column e_i) and Z the others (columns C, n × |Z|), R the rows no basic w
    /// covers (|R| = |Z|): `x_Z = C_RZ⁻¹ b_R`, `x_{w_i} = b_i − C_iZ x_Z`. O(|Z|³ + n²|Z|)
    /// instead of O(n³): a warm start of a stack has |Z| ≈ its active contacts, far below n.
    fn inverse(&self, vars: &[usize]) -> Option<DMatrix<f64>> {
        let n = self.n;
        let mut w_at = vec![usize::MAX; n];
        let mut zpos = Vec::new();
        for (k, &v) in vars.iter().enumerate() {
            if v < n {
                w_at[v] = k;
            } else {
                zpos.push(k);
            }
        }
        let rows: Vec<usize> = (0..n).filter(|&i| w_at[i] == usize::MAX).collect();
        if rows.len() != zpos.len() {
            return None;
        }
        let cols: Vec<DVector<f64>> = zpos.iter().map(|&k| self.column(vars[k])).collect();
        let crz = DMatrix::from_fn(rows.len(), zpos.len(), |a, b| cols[b][rows[a]]);
        let crz_inv = crz.lu().try_inverse()?;
        let mut inv = DMatrix::zeros(n, n);
        // Rows of Z positions: C_RZ⁻¹ scattered onto the columns R.
        for (a, &k) in zpos.iter().enumerate() {
            for (b, &i) in rows.iter().enumerate() {
                inv[(k, i)] = crz_inv[(a, b)];
            }
        }
        // Rows of w_i: e_iᵀ − C_iZ C_RZ⁻¹ (on the columns R).
        for i in (0..n).filter(|&i| w_at[i] != usize::MAX) {
            let k = w_at[i];
            inv[(k, i)] = 1.0;
            for (b, &r) in rows.iter().enumerate() {
                let s: f64 = (0..zpos.len()).map(|a| cols[a][i] * crz_inv[(a, b)]).sum();
                inv[(k, r)] = -s;
            }
        }
        Some(inv)
    }

    /// Rebuilds B⁻¹ and x from the basis; false (nothing changed) if B is singular.
    fn refactor(&mut self) -> bool {
        match self.inverse(&self.basic) {
            Some(inv) if inv.iter().all(|v| v.is_finite()) => {
                self.x = &inv * self.q;
                if let Some((b0, l)) = self.b0.as_mut() {
                    *l = &inv * &*b0;
                }
                self.binv = inv;
                true
            }
            _ => false,
        }
    }

    /// Pivots variable `e` (pivot column `col`) into row `r`.
    fn pivot(&mut self, r: usize, e: usize, col: &DVector<f64>) {
        let p = col[r];
        let row_r = (self.binv.row(r) / p).transpose();
        let xr = self.x[r] / p;
        // Rank-one elimination of every other row: B⁻¹ -= c row_rᵀ with c = col, c_r = 0.
        let mut c = col.clone();
        c[r] = 0.0;
        self.binv.ger(-1.0, &c, &row_r, 1.0);
        self.x.axpy(-xr, &c, 1.0);
        self.binv.set_row(r, &row_r.transpose());
        if let Some((_, l)) = self.b0.as_mut() {
            let l_r = (l.row(r) / p).transpose();
            l.ger(-1.0, &c, &l_r, 1.0);
            l.set_row(r, &l_r.transpose());
        }
        self.x[r] = xr;
        self.basic[r] = e;
    }

    /// The lexicographic minimum-ratio row among `rows` (ratios `key(i)/col_i` tied at
    /// the minimum): z₀'s row if present, else the lexicographically smallest `B⁻¹B₀` row.
    fn lex_choose(&self, mut rows: Vec<usize>, col: &DVector<f64>) -> usize {
        if let Some(&r) = rows.iter().find(|&&i| self.basic[i] == 2 * self.n) {
            return r;
        }
        for k in 0..self.n {
            if rows.len() == 1 {
                break;
            }
            let vals: Vec<f64> = rows.iter().map(|&i| self.lex(i, k) / col[i]).collect();
            let min = vals.iter().cloned().fold(f64::INFINITY, f64::min);
            let tol = 1e-12 * min.abs().max(1.0);
            rows = rows
                .iter()
                .zip(&vals)
                .filter(|(_, v)| **v <= min + tol)
                .map(|(i, _)| *i)
                .collect();
        }
        rows[0]
    }

    /// Minimum-ratio leaving row for pivot column `col`; None: ray.
    fn ratio_test(&self, col: &DVector<f64>, pivot_tol: f64) -> Option<usize> {
        // Relative to the column: a pivot many orders below the others is round-off.
        let tol = pivot_tol * col.amax().max(1e-300);
        let rows: Vec<usize> = (0..self.n).filter(|&i| col[i] > tol).collect();
        if rows.is_empty() {
            return None;
        }
        let ratios: Vec<f64> = rows.iter().map(|&i| self.x[i].max(0.0) / col[i]).collect();
        let min = ratios.iter().cloned().fold(f64::INFINITY, f64::min);
        // z₀ leaves whenever its ratio ties the minimum within round-off (of the updated
        // B⁻¹: 1e-9 relative, 1e-12 of ‖q‖∞ absolute): the step that ends at a solution is
        // never lost to a tie that drift has split (seen on the realtime scene in motion, a
        // non-z₀ row leaving by 1e-12 and the next column a ray).
        let z0_tol = 1e-9 * min.abs() + 1e-12 * self.q.amax();
        if let Some((&r, _)) = rows
            .iter()
            .zip(&ratios)
            .find(|(&i, &v)| self.basic[i] == 2 * self.n && v <= min + z0_tol)
        {
            return Some(r);
        }
        let tol = 1e-12 * min.abs().max(1e-300) + 1e-15;
        let tied: Vec<usize> = rows
            .iter()
            .zip(&ratios)
            .filter(|(_, r)| **r <= min + tol)
            .map(|(i, _)| *i)
            .collect();
        Some(self.lex_choose(tied, col))
    }

    /// Iterative refinement of x for B x = q: x += B⁻¹ (q − B x), O(n²) each.
    fn refine(&mut self) {
        for _ in 0..2 {
            let mut r = self.q.clone();
            for (k, &v) in self.basic.iter().enumerate() {
                let xk = self.x[k];
                if v < self.n {
                    r[v] -= xk;
                } else {
                    r.axpy(-xk, &self.column(v), 1.0);
                }
            }
            self.x += &self.binv * r;
        }
    }

    fn solution(&mut self, pivots: usize, warm_started: bool) -> LemkeSolution {
        // z₀ has left: refine the basic solution of the final basis.
        self.refine();
        let n = self.n;
        let mut z = DVector::zeros(n);
        let mut basis = vec![false; n];
        for (r, &v) in self.basic.iter().enumerate() {
            if (n..2 * n).contains(&v) {
                z[v - n] = self.x[r].max(0.0);
                basis[v - n] = true;
            }
        }
        let w = self.m * &z + self.q;
        LemkeSolution {
            z,
            w,
            pivots,
            basis,
            warm_started,
            retries: 0,
        }
    }
}

/// Largest LCP (rows) whose failed cold start is redone with an LU at every pivot (at 256
/// rows an LU is ~10 ms here, a few seconds over a solve; beyond, the caller's fallback).
pub const REFACTOR_EACH_PIVOT_MAX: usize = 256;

/// How negative z and w of a reused warm basis may be: a tenth of the accepted residual.
/// Not `zero_tol`: z_J comes from an ill-conditioned M_JJ on stacks, and at rest the
/// realtime scene's w then missed 1e-12 by round-off (−2.6e-12) on most steps, so each step
/// fell through to a full n × n factorisation of the same basis (10× the solve time).
fn warm_tol(q: &DVector<f64>, opts: &LemkeOptions) -> f64 {
    0.1 * opts.accept_tol * q.amax().max(1.0)
}

/// The warm basis' complementary solution when it is feasible: `M_JJ z_J = −q_J` on the rows J
/// with z basic (an LU of |J| × |J| only, not of the whole basis), `w = M z + q ≥ 0`.
fn warm_feasible(
    m: &DMatrix<f64>,
    q: &DVector<f64>,
    flags: &[bool],
    tol: f64,
) -> Option<LemkeSolution> {
    let n = q.len();
    if flags.len() != n {
        return None;
    }
    let j: Vec<usize> = (0..n).filter(|&i| flags[i]).collect();
    let mut z = DVector::zeros(n);
    if !j.is_empty() {
        let mjj = DMatrix::from_fn(j.len(), j.len(), |a, b| m[(j[a], j[b])]);
        let rhs = DVector::from_fn(j.len(), |a, _| -q[j[a]]);
        let lu = mjj.lu();
        if singular(lu.u().diagonal().as_slice()) {
            return None;
        }
        let zj = lu.solve(&rhs)?;
        for (a, &i) in j.iter().enumerate() {
            if zj[a].is_nan() || zj[a] < -tol {
                return None;
            }
            z[i] = zj[a].max(0.0);
        }
    }
    let w = m * &z + q;
    if (0..n).any(|i| !flags[i] && (w[i].is_nan() || w[i] < -tol)) {
        return None;
    }
    Some(LemkeSolution {
        z,
        w,
        pivots: 0,
        basis: flags.to_vec(),
        warm_started: true,
        retries: 0,
    })
}

/// Solves the LCP (M, q), from the complementary basis `warm` (true: z_i basic) when given.
///
/// `warm`: a previous basis; used directly when it is still feasible (no pivot), else Lemke
/// pivots from it with the covering vector `B₀ e`, and redoes a ray cold ([`attempt`]), then
/// a cold failure with a fresh factorisation at every pivot.
pub fn solve(
    m: &DMatrix<f64>,
    q: &DVector<f64>,
    warm: Option<&[bool]>,
    opts: &LemkeOptions,
) -> Result<LemkeSolution, LemkeError> {
    // A cold ray is redone with a fresh LU of the basis at every pivot: on the
    // rank-deficient LCPs of stacks (more contact rows per body than its 6 degrees of freedom)
    // the rank-one updates of B⁻¹ drift enough over ~200 pivots to split the ratio-test tie
    // that ends at a solution or to hide the positive entries of a column, a false ray
    // (realtime scene in motion, 2×2 layer thrown sideways: rays after 193 and 204 pivots
    // that the refactorised path solves to a residual of 1e-17). This costs O(n³) per pivot,
    // paid only when the updated path fails; its ray is the one reported.
    match attempt(m, q, warm, opts) {
        // An LU per pivot is O(n³) each: only for LCPs up to REFACTOR_EACH_PIVOT_MAX rows.
        Err(e) if e.retry_pivots().is_some() && q.len() <= REFACTOR_EACH_PIVOT_MAX => {
            let (spent, retries) = (e.retry_pivots().unwrap(), e.retries());
            refactored(m, q, opts).map(|mut sol| {
                sol.pivots += spent;
                sol.retries += retries + 1;
                sol.warm_started = false;
                sol
            })
        }
        r => r,
    }
}

/// A cold solve with a fresh LU of the basis at every pivot (O(n³) per pivot), checked.
pub fn refactored(
    m: &DMatrix<f64>,
    q: &DVector<f64>,
    opts: &LemkeOptions,
) -> Result<LemkeSolution, LemkeError> {
    let exact = LemkeOptions {
        refactor_every: 1,
        ..*opts
    };
    checked(q, opts, solve_from(m, q, None, &exact))
}

/// Every answer is checked against the LCP: pivoting through a numerically singular basis
/// (rank-deficient contact sets) can end "successfully" at garbage (realtime scene, step 1:
/// ‖min(z, w)‖ = 0.2), which counts as a failed attempt.
fn checked(
    q: &DVector<f64>,
    opts: &LemkeOptions,
    r: Result<LemkeSolution, LemkeError>,
) -> Result<LemkeSolution, LemkeError> {
    let accept = opts.accept_tol * q.amax().max(1.0);
    r.and_then(|sol| match sol.residual_inf() {
        x if x <= accept => Ok(sol),
        residual => Err(LemkeError::Inaccurate {
            pivots: sol.pivots,
            residual,
            retries: 0,
        }),
    })
}

/// Whether an LU's pivots (the diagonal of U, partial pivoting) show a numerically singular
/// matrix: the smallest below 1e-10 of the largest (round-off of the rank-deficient normal
/// blocks of stacks is ~1e-16 relative; a well-posed contact block is far above).
fn singular(pivots: &[f64]) -> bool {
    let big = pivots.iter().fold(0.0f64, |a, p| a.max(p.abs()));
    pivots.iter().any(|p| p.is_nan() || p.abs() <= 1e-10 * big)
}

/// Whether the warm basis' block `M_JJ` (J: rows with z basic) is numerically singular: the
/// contact set is rank-deficient there (more active rows than the bodies' freedoms), and no
/// basis containing J solves the exact LCP reliably.
pub fn warm_block_singular(m: &DMatrix<f64>, warm: &[bool]) -> bool {
    let j: Vec<usize> = (0..warm.len()).filter(|&i| warm[i]).collect();
    if j.is_empty() || m.nrows() != warm.len() {
        return false;
    }
    let mjj = DMatrix::from_fn(j.len(), j.len(), |a, b| m[(j[a], j[b])]);
    singular(mjj.lu().u().diagonal().as_slice())
}

/// The warm basis' complementary solution when it is feasible and solves the LCP to the
/// accepted residual (a near-singular `M_JJ` can give a non-negative z that does not): no pivot.
pub fn reuse(
    m: &DMatrix<f64>,
    q: &DVector<f64>,
    warm: Option<&[bool]>,
    opts: &LemkeOptions,
) -> Option<LemkeSolution> {
    let sol = warm_feasible(m, q, warm?, warm_tol(q, opts))?;
    checked(q, opts, Ok(sol)).ok()
}

/// One start of Lemke's algorithm with updated factors: the warm basis reused when feasible,
/// else pivoted from (covering vector `B₀ e`), a failure from there redone cold; the answer
/// checked. Errors carry the pivots and starts spent.
pub fn attempt(
    m: &DMatrix<f64>,
    q: &DVector<f64>,
    warm: Option<&[bool]>,
    opts: &LemkeOptions,
) -> Result<LemkeSolution, LemkeError> {
    if let Some(sol) = reuse(m, q, warm, opts) {
        return Ok(sol);
    }
    // Pivoting from an infeasible warm basis (covering vector B₀e) measured slower than a cold
    // start on perturbed piles (benches/lemke.rs), but it also gets through steps where the
    // cold start ends in a ray (assets/scenes/realtime.toml, step 3); its rays prove nothing
    // (B₀e need not be positive), so a warm failure is redone cold.
    match checked(q, opts, solve_from(m, q, warm, opts)) {
        Err(e) if warm.is_some() && e.retry_pivots().is_some() => {
            let spent = e.retry_pivots().unwrap();
            match checked(q, opts, solve_from(m, q, None, opts)) {
                Ok(mut sol) => {
                    sol.pivots += spent;
                    sol.retries += 1;
                    sol.warm_started = false;
                    Ok(sol)
                }
                Err(e) => Err(e.with_spent(spent, 1)),
            }
        }
        r => r,
    }
}

fn solve_from(
    m: &DMatrix<f64>,
    q: &DVector<f64>,
    warm: Option<&[bool]>,
    opts: &LemkeOptions,
) -> Result<LemkeSolution, LemkeError> {
    let n = q.len();
    if m.nrows() != n || m.ncols() != n {
        return Err(LemkeError::Shape {
            rows: m.nrows(),
            cols: m.ncols(),
            len: n,
        });
    }
    if let Some(row) =
        (0..n).find(|&i| !q[i].is_finite() || !m.row(i).iter().all(|v| v.is_finite()))
    {
        return Err(LemkeError::NonFinite { row });
    }
    let max_pivots = if opts.max_pivots == 0 {
        (50 * n).max(1000)
    } else {
        opts.max_pivots
    };
    let zero_tol = opts.zero_tol * q.amax().max(1.0);
    let refactor_every = match opts.refactor_every {
        0 => n.max(64),
        k => k,
    };
    let mut t = Tableau {
        m,
        q,
        n,
        d: DVector::from_element(n, 1.0),
        basic: (0..n).collect(),
        binv: DMatrix::identity(n, n),
        x: q.clone(),
        b0: None,
    };
    let mut warm_started = false;
    if let Some(flags) = warm.filter(|f| f.len() == n && f.iter().any(|&b| b)) {
        let saved = (t.basic.clone(), t.binv.clone(), t.x.clone());
        t.basic = (0..n).map(|i| if flags[i] { n + i } else { i }).collect();
        if t.refactor() {
            warm_started = true;
            let b0 = t.basis_matrix(&t.basic);
            // d = B₀ e: z₀'s column is −e in the warm basis' coordinates.
            t.d = &b0 * DVector::from_element(n, 1.0);
            t.b0 = Some((b0, DMatrix::identity(n, n)));
        } else {
            (t.basic, t.binv, t.x) = saved;
        }
    }
    if n == 0 || t.x.min() >= -zero_tol {
        return Ok(t.solution(0, warm_started));
    }
    // First pivot: z₀ enters at the most negative row (lexicographically smallest row).
    let z0 = 2 * n;
    let col = t.pivot_column(z0);
    let min = t.x.min();
    let tol = 1e-12 * min.abs() + 1e-15;
    let tied: Vec<usize> = (0..n).filter(|&i| t.x[i] <= min + tol).collect();
    // All pivot-column entries are −1, so "smallest x_i/−1" is the lexicographic maximum
    // of −(x_i, L_i): choose on the negated column.
    let r = t.lex_choose(tied, &(-&col));
    let mut leaving = t.basic[r];
    t.pivot(r, z0, &col);
    let mut pivots = 1;
    let mut since_refactor = 1;
    loop {
        let entering = if leaving < n {
            leaving + n
        } else {
            leaving - n
        };
        let mut col = t.pivot_column(entering);
        let mut r = t.ratio_test(&col, opts.pivot_tol);
        // A ray seen through a B⁻¹ that rank-one updates have carried since its last LU may be
        // their round-off (the realtime scene in motion, step 2: a false ray after 193
        // pivots that a fresh factorisation of the same basis does not show): refactorise and
        // look again before reporting it.
        if r.is_none() && since_refactor > 0 && t.refactor() {
            since_refactor = 0;
            col = t.pivot_column(entering);
            r = t.ratio_test(&col, opts.pivot_tol);
        }
        let Some(r) = r else {
            return Err(LemkeError::Ray {
                pivots,
                retries: 0,
                var: if entering < n { "w" } else { "z" },
                row: entering % n,
            });
        };
        leaving = t.basic[r];
        t.pivot(r, entering, &col);
        pivots += 1;
        since_refactor += 1;
        if leaving == z0 {
            return Ok(t.solution(pivots, warm_started));
        }
        if pivots >= max_pivots {
            return Err(LemkeError::PivotLimit { limit: max_pivots });
        }
        if since_refactor >= refactor_every && t.refactor() {
            since_refactor = 0;
        }
    }
}
