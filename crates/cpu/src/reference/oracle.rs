//! An independent oracle for small CCPs: the same convex cone-constrained QP
//!
//! ```text
//! min ½ γᵀ N γ + pᵀ γ   subject to  γ_i ∈ K_i = { ‖γ_t‖ ≤ μ_i γ_n }
//! ```
//!
//! solved by a primal log-barrier interior-point method (damped Newton on
//! t·f(γ) − Σ log(μ²γ_n² − ‖γ_t‖²), t ← 10 t) with N = Dᵀ M⁻¹ D assembled densely from an
//! explicit Jacobian D (nalgebra), so it shares neither the matrix-free product, nor the
//! projection, nor any iteration with the solver under test. The QP is convex, so every
//! converged method reaches the same minimiser — or, where N is singular, the same
//! velocities v⁺ = v* + M⁻¹ D γ.
//!
//! Needs μ > 0 on every contact (the barrier of a μ = 0 cone is empty inside).

use super::integrate::Body64;
use super::tangent_basis;
use crate::model::body::MOTION_DYNAMIC;
use crate::model::solver::Contact;
use glam::DVec3;
use nalgebra::{DMatrix, DVector};

/// The dense problem data.
pub struct DenseCcp {
    /// Jacobian, 6 nb × 3 nc (column 3i + j: row j of contact i; world frame).
    pub d: DMatrix<f64>,
    /// Inverse mass matrix, 6 nb × 6 nb (block diagonal, world inverse inertia).
    pub minv: DMatrix<f64>,
    pub n: DMatrix<f64>,
    pub p: DVector<f64>,
    pub mu: Vec<f64>,
    /// Free velocities stacked (v, ω) per body.
    pub vstar: DVector<f64>,
}

fn v3(a: [f32; 4]) -> DVec3 {
    DVec3::new(a[0] as f64, a[1] as f64, a[2] as f64)
}

impl DenseCcp {
    pub fn new(bodies: &[Body64], contacts: &[Contact], dt: f64, recovery_speed: f64) -> Self {
        let (nb, nc) = (bodies.len(), contacts.len());
        let mut d = DMatrix::zeros(6 * nb, 3 * nc);
        for (i, c) in contacts.iter().enumerate() {
            let n = v3(c.n_gap);
            let (u, w) = tangent_basis(n);
            for (j, t) in [n, u, w].into_iter().enumerate() {
                for (body, r, sign) in [
                    (c.ids[0] as usize, v3(c.ra), -1.0),
                    (c.ids[1] as usize, v3(c.rb), 1.0),
                ] {
                    let ang = r.cross(t);
                    for k in 0..3 {
                        d[(6 * body + k, 3 * i + j)] += sign * t[k];
                        d[(6 * body + 3 + k, 3 * i + j)] += sign * ang[k];
                    }
                }
            }
        }
        let mut minv = DMatrix::zeros(6 * nb, 6 * nb);
        let mut vstar = DVector::zeros(6 * nb);
        for (b, body) in bodies.iter().enumerate() {
            if body.inv_mass != 0.0 {
                let r = glam::DMat3::from_quat(body.rot);
                let ii = r * glam::DMat3::from_diagonal(body.inv_inertia) * r.transpose();
                for k in 0..3 {
                    minv[(6 * b + k, 6 * b + k)] = body.inv_mass;
                    for l in 0..3 {
                        minv[(6 * b + 3 + k, 6 * b + 3 + l)] = ii.col(l)[k];
                    }
                }
            }
            for k in 0..3 {
                vstar[6 * b + k] = body.vel[k];
                vstar[6 * b + 3 + k] = body.omega[k];
            }
        }
        let n = d.transpose() * &minv * &d;
        let mut p = d.transpose() * &vstar;
        for (i, c) in contacts.iter().enumerate() {
            p[3 * i] += (c.n_gap[3] as f64 / dt).max(-recovery_speed);
        }
        let mu = contacts.iter().map(|c| c.ra[3] as f64).collect();
        DenseCcp {
            d,
            minv,
            n,
            p,
            mu,
            vstar,
        }
    }

    /// The convex models' rows (`crate::model::rows`: Kelvin–Voigt and Hunt–Crossley normal
    /// compliance, bristle tangential compliance and offset): the compliance E (diagonal, per
    /// row) added to N and the assembled right-hand side p (with the models' offsets) in
    /// place of the rigid one, so the problem is min ½ γᵀ (N + E) γ + pᵀ γ over the same cones.
    pub fn with_rows(mut self, p: &[[f64; 3]], e: &[[f64; 3]]) -> Self {
        for (i, (q, ei)) in p.iter().zip(e).enumerate() {
            for k in 0..3 {
                self.p[3 * i + k] = q[k];
                self.n[(3 * i + k, 3 * i + k)] += ei[k];
            }
        }
        self
    }

    pub fn objective(&self, g: &DVector<f64>) -> f64 {
        0.5 * g.dot(&(&self.n * g)) + self.p.dot(g)
    }

    /// v⁺ = v* + M⁻¹ D γ, stacked (v, ω) per body; non-dynamic bodies keep v*.
    pub fn velocities(&self, bodies: &[Body64], g: &DVector<f64>) -> Vec<(DVec3, DVec3)> {
        let v = &self.vstar + &self.minv * (&self.d * g);
        bodies
            .iter()
            .enumerate()
            .map(|(b, body)| {
                let s = if body.motion == MOTION_DYNAMIC {
                    &v
                } else {
                    &self.vstar
                };
                (
                    DVec3::new(s[6 * b], s[6 * b + 1], s[6 * b + 2]),
                    DVec3::new(s[6 * b + 3], s[6 * b + 4], s[6 * b + 5]),
                )
            })
            .collect()
    }
}

/// Barrier value, gradient and Hessian of −Σ log(μ²γ_n² − ‖γ_t‖²); None outside the cones.
fn barrier(g: &DVector<f64>, mu: &[f64]) -> Option<(f64, DVector<f64>, DMatrix<f64>)> {
    let m = mu.len();
    let mut val = 0.0;
    let mut grad = DVector::zeros(3 * m);
    let mut hess = DMatrix::zeros(3 * m, 3 * m);
    for (i, &mu) in mu.iter().enumerate() {
        let (x0, x1, x2) = (g[3 * i], g[3 * i + 1], g[3 * i + 2]);
        let s = mu * mu * x0 * x0 - x1 * x1 - x2 * x2;
        if x0 <= 0.0 || s <= 0.0 {
            return None;
        }
        val -= s.ln();
        let ds = [2.0 * mu * mu * x0, -2.0 * x1, -2.0 * x2];
        let hs = [2.0 * mu * mu, -2.0, -2.0];
        for a in 0..3 {
            grad[3 * i + a] = -ds[a] / s;
            for b in 0..3 {
                let mut h = ds[a] * ds[b] / (s * s);
                if a == b {
                    h -= hs[a] / s;
                }
                hess[(3 * i + a, 3 * i + b)] = h;
            }
        }
    }
    Some((val, grad, hess))
}

/// Result of the oracle.
pub struct OracleSolution {
    pub gamma: Vec<[f64; 3]>,
    pub objective: f64,
    /// Duality-gap bound of the last barrier stage (2 per cone / t).
    pub gap: f64,
    pub newton_steps: usize,
}

/// Solves the dense CCP to a duality gap below `gap_tol` (relative to the scale of p).
pub fn solve(ccp: &DenseCcp, gap_tol: f64) -> OracleSolution {
    let m = ccp.mu.len();
    assert!(
        ccp.mu.iter().all(|&mu| mu > 0.0),
        "the barrier oracle needs μ > 0"
    );
    // Strictly inside every cone.
    let scale = ccp.p.amax().max(1e-12) / ccp.n.amax().max(1e-12);
    let mut g = DVector::zeros(3 * m);
    for i in 0..m {
        g[3 * i] = scale.max(1e-9);
    }
    let mut t = 1.0 / scale.max(1e-12) / ccp.p.amax().max(1e-12);
    let mut steps = 0;
    let fscale = (scale * ccp.p.amax()).max(1e-300);
    loop {
        // Centering: damped Newton on F(γ) = t f(γ) + φ(γ).
        for _ in 0..200 {
            let (bv, bg, bh) = barrier(&g, &ccp.mu).expect("iterate stays interior");
            let grad = t * (&ccp.n * &g + &ccp.p) + bg;
            let hess = t * &ccp.n + bh;
            let step = match hess.clone().cholesky() {
                Some(ch) => ch.solve(&(-&grad)),
                None => hess.lu().solve(&(-&grad)).expect("Newton system"),
            };
            let dec = -grad.dot(&step);
            steps += 1;
            if dec * 0.5 < 1e-13 {
                break;
            }
            let f0 = t * ccp.objective(&g) + bv;
            let mut a = 1.0;
            loop {
                let cand = &g + a * &step;
                if let Some((cv, _, _)) = barrier(&cand, &ccp.mu) {
                    if t * ccp.objective(&cand) + cv <= f0 - 0.25 * a * dec {
                        g = cand;
                        break;
                    }
                }
                a *= 0.5;
                if a < 1e-20 {
                    break;
                }
            }
            if a < 1e-20 {
                break;
            }
        }
        let gap = 2.0 * m as f64 / t;
        if gap < gap_tol * fscale {
            return OracleSolution {
                gamma: (0..m)
                    .map(|i| [g[3 * i], g[3 * i + 1], g[3 * i + 2]])
                    .collect(),
                objective: ccp.objective(&g),
                gap,
                newton_steps: steps,
            };
        }
        t *= 10.0;
    }
}
