//! The linear complementarity problem of one time step (seed 004; Stewart & Trinkle 1996,
//! Anitescu & Potra 1997), solved exactly by [`super::lemke`].
//!
//! Velocity level with the position-level gap term (seed 004 eq. 3 divided by dt): the
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
//! * [`LcpFriction::Surplus`] (seed 004 eq. 5): per tangent t ∈ {u, w} the friction surplus
//!   `s⁺ = μγ_n + γ_t ≥ 0`, `s⁻ = μγ_n − γ_t ≥ 0` and the parts of the slip `g⁺ − g⁻ = v_t⁺`:
//!   `z = (γ_n, s⁺, g⁻)`, `w = (w_n, g⁺ = v_t⁺ + g⁻, s⁻ = 2μγ_n − s⁺)`. Exact Coulomb in the
//!   plane; in 3-D the box |γ_u|, |γ_w| ≤ μγ_n (a 4-sided pyramid with corners at √2 μ).
//!
//! `relaxed = true` adds `−μλ` to the normal row of the pyramid form: the KKT system of the
//! CCP's convex QP over the polygon (seed 001's relaxation, v_n = μ‖v_T‖ while sliding), i.e.
//! exactly the problem the GPU solvers solve when the polygon equals the cone (planar).
//!
//! M is assembled block-sparse (contacts couple only through shared dynamic bodies) into a
//! dense matrix: a solve is O(rows³) at worst, hence the scene warning for large problems.

use super::lemke::{self, LemkeError, LemkeOptions, LemkeSolution};
use super::Contact;
use crate::reference::integrate::Body64;
use crate::reference::solve::{frame, inv_inertia, Schur, Vec3};
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
    /// Normal compliance 1/k in m/N (seed 002's compliant normal without damping): adds
    /// `E_n = compliance/dt²` to each normal row's diagonal. 0 = rigid. A rigid contact chain
    /// closed between fixed walls makes the rigid LCP infeasible under round-off (Σ gaps
    /// along the chain < 0 cannot be undone by any velocity); a tiny compliance keeps it
    /// solvable.
    pub compliance: f64,
}

impl Default for LcpSettings {
    fn default() -> Self {
        LcpSettings {
            friction: LcpFriction::Pyramid { directions: 8 },
            max_pivots: 0,
            warm_start: true,
            recovery_speed: 1.0,
            relaxed: false,
            compliance: 0.0,
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
}

/// The result of a step's solve.
#[derive(Clone, Debug)]
pub struct LcpStepSolution {
    /// Impulses per contact in the contact frame (n, u, w), as the GPU solvers return them.
    pub gamma: Vec<Vec3>,
    pub lemke: LemkeSolution,
}

/// A failed solve, with the contacts involved.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[error("{error}{}", contacts_text(.contacts))]
pub struct LcpError {
    pub error: LemkeError,
    /// (contact index, body A, body B) of the contact whose row failed and of the contacts
    /// sharing a body with it.
    pub contacts: Vec<(usize, u32, u32)>,
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
        };
        lcp.add_schur(bodies, contacts);
        lcp.add_local();
        for i in 0..nc {
            lcp.m[(rows * i, rows * i)] += settings.compliance / (dt * dt);
        }
        lcp
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

    /// Solves with Lemke's algorithm from an optional warm basis (per LCP row).
    pub fn solve(
        &self,
        warm: Option<&[bool]>,
        contacts: &[Contact],
    ) -> Result<LcpStepSolution, LcpError> {
        let opts = LemkeOptions {
            max_pivots: self.settings.max_pivots as usize,
            ..Default::default()
        };
        let result = match lemke::solve(&self.m, &self.q, warm, &opts) {
            Err(e) if e.retry_pivots().is_some() => self.solve_perturbed(e, &opts),
            r => r,
        };
        match result {
            Ok(sol) => Ok(LcpStepSolution {
                gamma: self.impulses(&sol.z),
                lemke: sol,
            }),
            Err(error) => {
                let row = match &error {
                    LemkeError::Ray { row, .. } | LemkeError::NonFinite { row } => Some(*row),
                    _ => None,
                };
                let rows = self.settings.rows_per_contact();
                let contacts = match row {
                    Some(r) => involved(contacts, r / rows, &self.dynamic),
                    None => contacts
                        .iter()
                        .enumerate()
                        .map(|(i, c)| (i, c.ids[0], c.ids[1]))
                        .collect(),
                };
                Err(LcpError { error, contacts })
            }
        }
    }
}

impl StepLcp {
    /// The last resort after a ray or an inaccurate end from every start: the same LCP with
    /// `ε = PERTURBATION[k] · max diag` (the first k that solves) added to the diagonal of each velocity row (normal and
    /// friction directions; for the pyramid a compliance of ε dt² per row), solved cold. On
    /// the rank-deficient contact sets of stacks (more rows per body than its 6 degrees of
    /// freedom) Lemke's bases can be numerically singular; the perturbation makes N + εI
    /// positive definite. The answer is then off the exact one by ε γ in velocity (≈ 3e-9
    /// m/s on the realtime scene's first step); its `w` and residual are recomputed against
    /// the unperturbed LCP, so the statistics show the true residual. Errors: the first one.
    fn solve_perturbed(
        &self,
        first: LemkeError,
        opts: &LemkeOptions,
    ) -> Result<lemke::LemkeSolution, LemkeError> {
        let rows = self.settings.rows_per_contact();
        let vel_rows: Vec<usize> = match self.settings.friction {
            LcpFriction::Pyramid { directions } => (0..=directions as usize).collect(),
            LcpFriction::Surplus => vec![0, 1, 3],
        };
        let index = |i: usize| vel_rows.iter().map(move |r| rows * i + r);
        let all = (0..self.mu.len()).flat_map(index);
        let dmax = all.clone().map(|r| self.m[(r, r)]).fold(0.0, f64::max);
        let mut spent = first.retry_pivots().unwrap_or(0);
        for rel in PERTURBATION {
            let mut m = self.m.clone();
            for r in all.clone() {
                m[(r, r)] += rel * dmax;
            }
            match lemke::solve(&m, &self.q, None, opts) {
                Ok(mut sol) => {
                    sol.w = &self.m * &sol.z + &self.q;
                    sol.pivots += spent;
                    sol.warm_started = false;
                    return Ok(sol);
                }
                Err(e) => spent += e.retry_pivots().unwrap_or(0),
            }
        }
        Err(first)
    }
}

/// Relative diagonal perturbations of [`StepLcp::solve_perturbed`], tried in turn: 1e-9 was
/// the smallest that solved the realtime scene's first step (1e-10 ended in a ray, 1e-12 at
/// garbage); the larger ones are for harder sets (the scene in motion, step 88).
pub const PERTURBATION: [f64; 3] = [1e-8, 1e-6, 1e-4];

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
    crate::reference::tangent_basis(d[0]).0
}

fn d_w(d: &[DVec3]) -> DVec3 {
    crate::reference::tangent_basis(d[0]).1
}

/// `v⁺ = v* + M⁻¹ D γ` for every body (non-dynamic bodies keep v*).
pub fn apply_impulses(
    bodies: &[Body64],
    contacts: &[Contact],
    gamma: &[Vec3],
) -> Vec<(DVec3, DVec3)> {
    let dv = Schur::new(bodies, contacts).delta_v(gamma);
    bodies
        .iter()
        .zip(&dv)
        .map(|(b, d)| {
            if b.motion == crate::bodies::MOTION_DYNAMIC {
                (b.vel + d.0, b.omega + d.1)
            } else {
                (b.vel, b.omega)
            }
        })
        .collect()
}
