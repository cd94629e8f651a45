//! The linear complementarity problem of one time step (Golle et al.; Stewart & Trinkle 1996,
//! Anitescu & Potra 1997), solved exactly by [`super::lemke`].
//!
//! Velocity level with the position-level gap term (Golle et al. eq. 3 divided by dt): the
//! normal row is `w_n = v_n⁺ + max(Φ/dt, −v_recover) ≥ 0 ⊥ γ_n ≥ 0`, the same right-hand side
//! `p` as the iterative CCP solvers, so an inelastic impact closes the gap in one step and a
//! resting contact stays at Φ = 0. `v⁺ = v* + M⁻¹ D γ` with the free velocity v*.
//!
//! Friction, per contact with tangent basis (u, w) of the contract (`reference::tangent_basis`):
//!
//! * [`LcpFriction::Pyramid`] (Stewart–Trinkle / Anitescu–Potra): `k` directions
//!   `d_j = cos(2πj/k) u + sin(2πj/k) w`, impulses `β_j ≥ 0` and a slack `λ` (the sliding
//!   speed):
//!   `w_βj = d_jᵀ v⁺ + λ ≥ 0 ⊥ β_j`, `w_λ = μ γ_n − Σ β_j ≥ 0 ⊥ λ`. The friction polygon is
//!   inscribed in the cone, exact for planar motion along ±u when `k` is a multiple of 4
//!   (or k = 2: friction along ±u only, the planar model).
//! * [`LcpFriction::Surplus`] (Golle et al. eq. 5): per tangent t ∈ {u, w} the friction surplus
//!   `s⁺ = μγ_n + γ_t ≥ 0`, `s⁻ = μγ_n − γ_t ≥ 0` and the parts of the slip `g⁺ − g⁻ = v_t⁺`:
//!   `z = (γ_n, s⁺, g⁻)`, `w = (w_n, g⁺ = v_t⁺ + g⁻, s⁻ = 2μγ_n − s⁺)`. Exact Coulomb in the
//!   plane; in 3-D the box |γ_u|, |γ_w| ≤ μγ_n (a 4-sided pyramid with corners at √2 μ).
//!
//! `relaxed = true` adds `−μλ` to the normal row of the pyramid form: the KKT system of the
//! CCP's convex QP over the polygon (Tasora & Anitescu 2011's relaxation, v_n = μ‖v_T‖ while sliding), i.e.
//! exactly the problem the GPU solvers solve when the polygon equals the cone (planar).
//!
//! M is assembled block-sparse (contacts couple only through shared dynamic bodies) into a
//! dense matrix: a solve is O(rows³) at worst, hence the scene warning for large problems.

mod joints;

pub use joints::{apply_impulses_joints, JointPart, BILATERAL_REG};

use super::integrate::Body64;
use super::lemke::{self, LemkeError, LemkeOptions, LemkeSolution};
use super::solve::{frame, inv_inertia, Schur, Vec3};
use crate::model::solver::Contact;
use glam::DVec3;
use nalgebra::{DMatrix, DVector};

/// Jacobian rows (linear, angular) of one contact at one body.
type Rows = Vec<(DVec3, DVec3)>;

/// Friction model of the LCP.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LcpFriction {
    /// Stewart–Trinkle / Anitescu–Potra polygon with this many directions (≥ 2).
    Pyramid { directions: u32 },
    /// Seed 004's positive/negative parts with friction surplus, per tangent u and w.
    Surplus,
}

/// Settings of the exact LCP solver (`[solver] kind = "lemke"`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LcpSettings {
    pub friction: LcpFriction,
    /// Pivot limit per solve (0: automatic, `max(1000, 50 rows)`).
    pub max_pivots: u32,
    /// Start each solve from the previous step's basis (per contact key).
    pub warm_start: bool,
    /// Cap on the penetration recovery speed: the gap term is `max(Φ/dt, −v)`.
    pub recovery_speed: f64,
    /// The CCP relaxation (pyramid only; see the module notes).
    pub relaxed: bool,
    /// Normal compliance 1/k in m/N (Song et al. 2001's compliant normal without damping): adds
    /// `E_n = compliance/dt²` to each normal row's diagonal. 0 = rigid. A rigid contact chain
    /// closed between fixed walls makes the rigid LCP infeasible under round-off (Σ gaps
    /// along the chain < 0 cannot be undone by any velocity); a tiny compliance keeps it
    /// solvable.
    pub compliance: f64,
}

impl Default for LcpSettings {
    fn default() -> Self {
        LcpSettings {
            friction: LcpFriction::Pyramid {
                directions: crate::model::defaults::FRICTION_DIRECTIONS,
            },
            max_pivots: 0,
            warm_start: crate::model::defaults::WARM_START,
            recovery_speed: crate::model::defaults::RECOVERY_SPEED,
            relaxed: false,
            compliance: crate::model::defaults::COMPLIANCE,
        }
    }
}

impl LcpSettings {
    /// LCP rows per contact.
    pub fn rows_per_contact(&self) -> usize {
        match self.friction {
            LcpFriction::Pyramid { directions } => 2 + directions as usize,
            LcpFriction::Surplus => 5,
        }
    }

    /// Velocity rows per contact (normal + friction directions).
    fn vel_rows(&self) -> usize {
        match self.friction {
            LcpFriction::Pyramid { directions } => 1 + directions as usize,
            LcpFriction::Surplus => 3,
        }
    }
}

/// The assembled LCP of a step.
pub struct StepLcp {
    pub m: DMatrix<f64>,
    pub q: DVector<f64>,
    pub settings: LcpSettings,
    /// Per contact: velocity-row directions (normal first) in the world frame.
    dirs: Vec<Vec<DVec3>>,
    mu: Vec<f64>,
    /// Per body: dynamic (contacts sharing only a fixed body are not "involved").
    dynamic: Vec<bool>,
    /// Joint rows (after the contacts' rows), if any ([`StepLcp::with_joints`]).
    joints: Option<JointPart>,
}

/// The result of a step's solve.
#[derive(Clone, Debug)]
pub struct LcpStepSolution {
    /// Impulses per contact in the contact frame (n, u, w), as the GPU solvers return them.
    pub gamma: Vec<Vec3>,
    pub lemke: LemkeSolution,
    /// The perturbation level it solved at (an index of [`LEVELS`]; 0: the exact LCP).
    pub level: usize,
    /// Impulses per joint block (its rows n, u, w; empty without joints).
    pub joint_gamma: Vec<Vec3>,
}

/// A failed solve, with the contacts involved.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[error("{error}{}{}", contacts_text(.contacts), joint_text(.joint_block))]
pub struct LcpError {
    pub error: LemkeError,
    /// (contact index, body A, body B) of the contact whose row failed and of the contacts
    /// sharing a body with it.
    pub contacts: Vec<(usize, u32, u32)>,
    /// The joint block whose row failed (blocks in the order of `joints::blocks_of`).
    pub joint_block: Option<usize>,
}

fn joint_text(b: &Option<usize>) -> String {
    b.map(|b| format!("; joint block #{b}")).unwrap_or_default()
}

fn contacts_text(c: &[(usize, u32, u32)]) -> String {
    if c.is_empty() {
        return String::new();
    }
    let list: Vec<String> = c
        .iter()
        .map(|(i, a, b)| format!("#{i} (bodies {a}–{b})"))
        .collect();
    format!("; contacts involved: {}", list.join(", "))
}

impl StepLcp {
    /// Assembles the LCP for free velocities `bodies[*].vel/omega` and `contacts`.
    pub fn new(bodies: &[Body64], contacts: &[Contact], dt: f64, settings: &LcpSettings) -> Self {
        let rows = settings.rows_per_contact();
        let vr = settings.vel_rows();
        let nc = contacts.len();
        let mut dirs = Vec::with_capacity(nc);
        let mut mu = Vec::with_capacity(nc);
        let mut q = DVector::zeros(rows * nc);
        for (i, c) in contacts.iter().enumerate() {
            let (n, u, w, ra, rb) = frame(c);
            let d: Vec<DVec3> = match settings.friction {
                LcpFriction::Pyramid { directions: k } => std::iter::once(n)
                    .chain((0..k).map(|j| {
                        let a = std::f64::consts::TAU * j as f64 / k as f64;
                        a.cos() * u + a.sin() * w
                    }))
                    .collect(),
                LcpFriction::Surplus => vec![n, u, w],
            };
            let (a, b) = (&bodies[c.ids[0] as usize], &bodies[c.ids[1] as usize]);
            let rel = (b.vel + b.omega.cross(rb)) - (a.vel + a.omega.cross(ra));
            let stab = (c.n_gap[3] as f64 / dt).max(-settings.recovery_speed);
            // q = S p: normal and friction-direction rows take their free velocity.
            let p: Vec<f64> = d.iter().map(|t| t.dot(rel)).collect();
            let base = rows * i;
            q[base] = p[0] + stab;
            match settings.friction {
                LcpFriction::Pyramid { .. } => {
                    for j in 1..vr {
                        q[base + j] = p[j];
                    }
                }
                LcpFriction::Surplus => {
                    q[base + 1] = p[1];
                    q[base + 3] = p[2];
                }
            }
            dirs.push(d);
            mu.push(c.ra[3] as f64);
        }
        let mut lcp = StepLcp {
            m: DMatrix::zeros(rows * nc, rows * nc),
            q,
            settings: *settings,
            dirs,
            mu,
            dynamic: bodies.iter().map(|b| b.inv_mass > 0.0).collect(),
            joints: None,
        };
        lcp.add_schur(bodies, contacts);
        lcp.add_local();
        for i in 0..nc {
            lcp.m[(rows * i, rows * i)] += settings.compliance / (dt * dt);
        }
        lcp
    }

    /// [`StepLcp::new`] with joint blocks: their records and right-hand side offsets as
    /// `reference::joints::write_blocks` returns them (module `joints`).
    pub fn with_joints(
        bodies: &[Body64],
        contacts: &[Contact],
        joints: (&[Contact], &[[f64; 3]]),
        dt: f64,
        settings: &LcpSettings,
    ) -> Self {
        let mut lcp = Self::new(bodies, contacts, dt, settings);
        if !joints.0.is_empty() {
            lcp.add_joints(bodies, contacts, joints.0, joints.1);
        }
        lcp
    }

    /// The joint rows, if any.
    pub fn joint_part(&self) -> Option<&JointPart> {
        self.joints.as_ref()
    }

    /// `S N A` block by block: N = Dᵀ M⁻¹ D summed over each dynamic body's contact pairs.
    fn add_schur(&mut self, bodies: &[Body64], contacts: &[Contact]) {
        let vr = self.settings.vel_rows();
        // Per body: (contact, rows' Jacobian (lin, ang) for this side).
        let mut per_body: Vec<Vec<(usize, Rows)>> = vec![Vec::new(); bodies.len()];
        for (i, c) in contacts.iter().enumerate() {
            let (_, _, _, ra, rb) = frame(c);
            for (side, r, sign) in [(0, ra, -1.0), (1, rb, 1.0)] {
                let b = c.ids[side] as usize;
                if bodies[b].inv_mass == 0.0 {
                    continue;
                }
                let jac = self.dirs[i]
                    .iter()
                    .map(|t| (sign * *t, sign * r.cross(*t)))
                    .collect();
                per_body[b].push((i, jac));
            }
        }
        let mut block = DMatrix::zeros(vr, vr);
        for (b, list) in per_body.iter().enumerate() {
            let body = &bodies[b];
            // M⁻¹ Jᵀ per row of each contact at this body.
            let minv: Vec<Vec<(DVec3, DVec3)>> = list
                .iter()
                .map(|(_, jac)| {
                    jac.iter()
                        .map(|(l, a)| (body.inv_mass * *l, inv_inertia(body, *a)))
                        .collect()
                })
                .collect();
            for (ci, jac_i) in list {
                for (y, (cj, _)) in list.iter().enumerate() {
                    for (r, (l, a)) in jac_i.iter().enumerate() {
                        for (s, (ml, ma)) in minv[y].iter().enumerate() {
                            block[(r, s)] = l.dot(*ml) + a.dot(*ma);
                        }
                    }
                    self.add_block(*ci, *cj, &block);
                }
            }
        }
    }

    /// Adds `S_i N_ij A_j` for a velocity-row block `n` (rows of contact i × rows of j).
    fn add_block(&mut self, i: usize, j: usize, n: &DMatrix<f64>) {
        let rows = self.settings.rows_per_contact();
        let (bi, bj) = (rows * i, rows * j);
        let vr = self.settings.vel_rows();
        match self.settings.friction {
            LcpFriction::Pyramid { .. } => {
                // S and A are the identity on the 1 + k velocity rows.
                for r in 0..vr {
                    for s in 0..vr {
                        self.m[(bi + r, bj + s)] += n[(r, s)];
                    }
                }
            }
            LcpFriction::Surplus => {
                // A_j: γ_n = z0, γ_u = z1 − μ z0, γ_w = z3 − μ z0.
                // S_i: rows 0 (n), 1 (u), 3 (w) take velocity rows 0, 1, 2.
                let mu = self.mu[j];
                for (r, row) in [(0, 0), (1, 1), (2, 3)] {
                    let nr = |s: usize| n[(r, s)];
                    self.m[(bi + row, bj)] += nr(0) - mu * (nr(1) + nr(2));
                    self.m[(bi + row, bj + 1)] += nr(1);
                    self.m[(bi + row, bj + 3)] += nr(2);
                }
            }
        }
    }

    /// The per-contact terms that do not go through the bodies.
    fn add_local(&mut self) {
        let rows = self.settings.rows_per_contact();
        for (i, &mu) in self.mu.iter().enumerate() {
            let b = rows * i;
            match self.settings.friction {
                LcpFriction::Pyramid { directions: k } => {
                    let l = b + 1 + k as usize;
                    for j in 1..=k as usize {
                        self.m[(b + j, l)] += 1.0;
                        self.m[(l, b + j)] -= 1.0;
                    }
                    self.m[(l, b)] += mu;
                    if self.settings.relaxed {
                        self.m[(b, l)] -= mu;
                    }
                }
                LcpFriction::Surplus => {
                    for (sp, gm) in [(1, 2), (3, 4)] {
                        // g⁺ = v_t + g⁻; s⁻ = 2μγ_n − s⁺.
                        self.m[(b + sp, b + gm)] += 1.0;
                        self.m[(b + gm, b)] += 2.0 * mu;
                        self.m[(b + gm, b + sp)] -= 1.0;
                    }
                }
            }
        }
    }

    /// Impulses (n, u, w) per contact from an LCP solution z.
    pub fn impulses(&self, z: &DVector<f64>) -> Vec<Vec3> {
        let rows = self.settings.rows_per_contact();
        (0..self.mu.len())
            .map(|i| {
                let b = rows * i;
                let d = &self.dirs[i];
                let (u, w) = (d_u(d), d_w(d));
                match self.settings.friction {
                    LcpFriction::Pyramid { directions: k } => {
                        let f: DVec3 = (0..k as usize).map(|j| z[b + 1 + j] * d[1 + j]).sum();
                        [z[b], f.dot(u), f.dot(w)]
                    }
                    LcpFriction::Surplus => {
                        let mu = self.mu[i];
                        [z[b], z[b + 1] - mu * z[b], z[b + 3] - mu * z[b]]
                    }
                }
            })
            .collect()
    }

    /// Solves with Lemke's algorithm from an optional warm basis (per LCP row), climbing
    /// [`LADDER`] from its first rung.
    pub fn solve(
        &self,
        warm: Option<&[bool]>,
        contacts: &[Contact],
    ) -> Result<LcpStepSolution, LcpError> {
        self.solve_from_level(warm, contacts, 0)
    }

    /// [`StepLcp::solve`] starting at the first rung of perturbation level `level` (an index
    /// of [`LEVELS`]; a stepper passes the level its last step solved at), after cheap tries
    /// of reusing the warm basis (no pivot; `StepLcp::reuse`). The rungs below `level` are
    /// skipped: on a rank-deficient stack they fail every step and cost a full pivoting run.
    pub fn solve_from_level(
        &self,
        warm: Option<&[bool]>,
        contacts: &[Contact],
        level: usize,
    ) -> Result<LcpStepSolution, LcpError> {
        let opts = LemkeOptions {
            max_pivots: self.settings.max_pivots as usize,
            ..Default::default()
        };
        let mut level = level.min(LEVELS.len() - 1);
        // A warm basis whose exact block is singular (a rank-deficient stack): exact pivoting
        // from it fails (realtime scene, first step: ~230 wasted pivots), start perturbed.
        if level == 0 && warm.is_some_and(|w| lemke::warm_block_singular(&self.m, w)) {
            level = 1;
        }
        let result = match self.reuse(warm, &opts, level) {
            Some(r) => Ok(r),
            None => self.climb(warm, &opts, level),
        };
        match result {
            Ok((sol, level)) => Ok(LcpStepSolution {
                gamma: self.impulses(&sol.z),
                joint_gamma: self
                    .joints
                    .as_ref()
                    .map_or(Vec::new(), |j| j.impulses(&sol.z)),
                lemke: sol,
                level,
            }),
            Err(error) => Err(self.error(error, contacts)),
        }
    }

    /// The warm basis reused without a pivot (an LU of its |J| × |J| block), on the exact LCP
    /// or else perturbed at `max(level, 1)`: on a rank-deficient stack the exact block is
    /// singular but the perturbed one is not, and its answer is accepted only if it solves the
    /// exact LCP (see [`StepLcp::rung`]). With the basis of a step at rest, or a stepper's guess
    /// for new contacts (normal impulse where approaching, no friction), this is the whole
    /// solve.
    fn reuse(
        &self,
        warm: Option<&[bool]>,
        opts: &LemkeOptions,
        level: usize,
    ) -> Option<(LemkeSolution, usize)> {
        let warm = warm?;
        if let Some(sol) = lemke::reuse(&self.m, &self.q, Some(warm), opts) {
            return Some((sol, 0));
        }
        let level = level.max(1);
        let m = self.perturbed(LEVELS[level]);
        let mut sol = lemke::reuse(&m, &self.q, Some(warm), opts)?;
        sol.w = &self.m * &sol.z + &self.q;
        (sol.residual_inf() <= self.accept(opts, level, &sol.z)).then_some((sol, level))
    }

    /// The rungs of [`LADDER`] from the first at `level`: the solution and the level it
    /// solved at, or the first error (with every rung's pivots and starts added).
    fn climb(
        &self,
        warm: Option<&[bool]>,
        opts: &LemkeOptions,
        level: usize,
    ) -> Result<(LemkeSolution, usize), LemkeError> {
        let first = LADDER
            .iter()
            .position(|r| *r == (level, false))
            .unwrap_or(0);
        let (mut spent, mut retries) = (0, 0);
        let mut first_error = None;
        for &(lvl, refactor) in &LADDER[first..] {
            if refactor && self.q.len() > lemke::REFACTOR_EACH_PIVOT_MAX {
                continue;
            }
            match self.rung(warm, opts, lvl, refactor) {
                Ok(mut sol) => {
                    sol.pivots += spent;
                    sol.retries += retries;
                    if retries > 0 {
                        sol.warm_started = false;
                    }
                    return Ok((sol, lvl));
                }
                Err(e) => {
                    spent += e.retry_pivots().unwrap_or(0);
                    retries += e.retries() + 1;
                    if e.retry_pivots().is_none() {
                        // Bad data or the pivot limit: another rung will not help.
                        return Err(first_error.unwrap_or(e));
                    }
                    first_error.get_or_insert(e);
                }
            }
        }
        let e = first_error.expect("the ladder has a rung");
        Err(match e {
            LemkeError::Ray { var, row, .. } => LemkeError::Ray {
                pivots: spent,
                retries: retries - 1,
                var,
                row,
            },
            LemkeError::Inaccurate { residual, .. } => LemkeError::Inaccurate {
                pivots: spent,
                residual,
                retries: retries - 1,
            },
            e => e,
        })
    }

    /// One rung: the LCP with its velocity rows' diagonal raised by `LEVELS[level] · max
    /// diag`, solved with updated factors from the warm basis or with an LU at every pivot
    /// (cold). A perturbed answer is accepted only if it solves the exact LCP to the
    /// tolerance plus what the perturbation explains ([`StepLcp::accept`]; its w and residual
    /// are those of the exact LCP).
    fn rung(
        &self,
        warm: Option<&[bool]>,
        opts: &LemkeOptions,
        level: usize,
        refactor: bool,
    ) -> Result<LemkeSolution, LemkeError> {
        let eps = LEVELS[level];
        let perturbed;
        let m = if eps > 0.0 {
            perturbed = self.perturbed(eps);
            &perturbed
        } else {
            &self.m
        };
        let mut sol = if refactor {
            lemke::refactored(m, &self.q, opts)?
        } else {
            lemke::attempt(m, &self.q, warm, opts)?
        };
        if eps > 0.0 {
            sol.w = &self.m * &sol.z + &self.q;
            let residual = sol.residual_inf();
            if residual > self.accept(opts, level, &sol.z) {
                return Err(LemkeError::Inaccurate {
                    pivots: sol.pivots,
                    residual,
                    retries: sol.retries,
                });
            }
        }
        Ok(sol)
    }

    /// M with `rel · max diag` added to the diagonal of each velocity row (normal and
    /// friction directions; for the pyramid a compliance of ε dt² per row). On the
    /// rank-deficient contact sets of stacks (more rows per body than its 6 degrees of
    /// freedom) Lemke's bases can be numerically singular; N + εI is positive definite, and
    /// the answer is off the exact one by ε γ in velocity (≈ 3e-9 m/s on the realtime
    /// scene's first step at 1e-8).
    /// The largest residual against the exact LCP accepted for an answer z of the LCP
    /// perturbed at `level`: the solver's tolerance plus what the perturbation explains
    /// (`ε ‖z‖∞`; exact at level 0). The perturbed LCP itself was solved to the tolerance.
    fn accept(&self, opts: &LemkeOptions, level: usize, z: &DVector<f64>) -> f64 {
        let eps = LEVELS[level] * self.dmax();
        opts.accept_tol * self.q.amax().max(1.0) + 1.01 * eps * z.amax()
    }

    fn velocity_rows(&self) -> Vec<usize> {
        let rows = self.settings.rows_per_contact();
        let vel_rows: Vec<usize> = match self.settings.friction {
            LcpFriction::Pyramid { directions } => (0..=directions as usize).collect(),
            LcpFriction::Surplus => vec![0, 1, 3],
        };
        (0..self.mu.len())
            .flat_map(|i| {
                vel_rows
                    .iter()
                    .map(move |r| rows * i + r)
                    .collect::<Vec<_>>()
            })
            .chain(self.joints.iter().flat_map(|j| j.velocity_rows()))
            .collect()
    }

    /// The largest diagonal entry of the velocity rows.
    fn dmax(&self) -> f64 {
        let m = &self.m;
        self.velocity_rows()
            .iter()
            .map(|&r| m[(r, r)])
            .fold(0.0, f64::max)
    }

    fn perturbed(&self, rel: f64) -> DMatrix<f64> {
        let all = self.velocity_rows();
        let dmax = self.dmax();
        let mut m = self.m.clone();
        for r in all {
            m[(r, r)] += rel * dmax;
        }
        m
    }

    /// The error of a failed solve with the contacts involved.
    fn error(&self, error: LemkeError, contacts: &[Contact]) -> LcpError {
        let row = match &error {
            LemkeError::Ray { row, .. } | LemkeError::NonFinite { row } => Some(*row),
            _ => None,
        };
        let rows = self.settings.rows_per_contact();
        let nc_rows = rows * self.mu.len();
        let joint_block = row.filter(|&r| r >= nc_rows).and_then(|r| {
            let j = self.joints.as_ref()?;
            j.block_rows
                .iter()
                .position(|&(s, n)| (s..s + n).contains(&r))
        });
        let contacts = match row {
            Some(r) if r >= nc_rows => Vec::new(),
            Some(r) => involved(contacts, r / rows, &self.dynamic),
            None => contacts
                .iter()
                .enumerate()
                .map(|(i, c)| (i, c.ids[0], c.ids[1]))
                .collect(),
        };
        LcpError {
            error,
            contacts,
            joint_block,
        }
    }
}

/// Relative diagonal perturbations of the LCP's velocity rows ([`StepLcp::solve_from_level`]):
/// level 0 is the exact LCP. 1e-8 was the smallest that solved the realtime scene's first step
/// (1e-10 ended in a ray, 1e-12 at garbage); the larger ones are for harder sets (the scene in
/// motion, step 88).
pub const LEVELS: [f64; 4] = [0.0, 1e-8, 1e-6, 1e-4];

/// The solve ladder, climbed in order from a starting level: (level, LU at every pivot).
/// Cheap rungs first: the exact LCP with updated factors (warm, then cold), then the 1e-8
/// perturbation, and only then the exact LCP with an LU at every pivot (O(n³) per pivot: on
/// the realtime scene's cold 24-contact stack it cost ~1 s where the perturbed rung costs
/// about a millisecond), then the larger perturbations.
pub const LADDER: [(usize, bool); 5] = [(0, false), (1, false), (0, true), (2, false), (3, false)];

/// The contact `i` and those sharing a dynamic body with it.
fn involved(contacts: &[Contact], i: usize, dynamic: &[bool]) -> Vec<(usize, u32, u32)> {
    let Some(c) = contacts.get(i) else {
        return Vec::new();
    };
    let dyn_body = |x: u32| dynamic.get(x as usize).copied().unwrap_or(false);
    let shared: Vec<u32> = c.ids[..2]
        .iter()
        .copied()
        .filter(|x| dyn_body(*x))
        .collect();
    contacts
        .iter()
        .enumerate()
        .filter(|(k, o)| *k == i || o.ids[..2].iter().any(|x| shared.contains(x)))
        .map(|(k, o)| (k, o.ids[0], o.ids[1]))
        .collect()
}

/// The contact frame's u and w from a direction list (recomputed from the normal).
fn d_u(d: &[DVec3]) -> DVec3 {
    super::tangent_basis(d[0]).0
}

fn d_w(d: &[DVec3]) -> DVec3 {
    super::tangent_basis(d[0]).1
}

/// `v⁺ = v* + M⁻¹ D γ` for every body (non-dynamic bodies keep v*).
pub fn apply_impulses(
    bodies: &[Body64],
    contacts: &[Contact],
    gamma: &[Vec3],
) -> Vec<(DVec3, DVec3)> {
    let dv = Schur::new(bodies, contacts).delta_v(gamma);
    super::solve::post_velocities(bodies, &dv)
}
