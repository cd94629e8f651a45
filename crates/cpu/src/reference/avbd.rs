//! Augmented-Lagrangian block descent over bodies, after AVBD (Giles, Diaz, Yuksel et al.
//! 2025, "Augmented Vertex Block Descent"), adapted to the twin's cone problem: an f64
//! prototype measured by `benches/depth.rs` (see `docs/solver-depth.md`).
//!
//! Each constraint j keeps a dual impulse λ_j (warm-started as the twin's impulses are) and a
//! stiffness k_j = κ_j η_j (η_j: the row scaling of projected Jacobi, so κ is dimensionless).
//! Its impulse at the bodies' current velocity change Δv is the projected augmented one
//!
//!   γ_j(Δv) = Π_j(λ_j − k_j u_j),  u_j = D_jᵀ Δv + E_j λ_j + p_j,
//!
//! with the constraint's own set Π_j (cone, disk, joint bounds). A sweep visits the bodies by
//! colour (no two bodies of a colour share a constraint, so a colour's bodies can move at
//! once) and moves each body's Δv_b by one Newton step on its momentum balance
//! M_b Δv_b = Σ_j D_{j,b} γ_j(Δv), the Hessian bounded from above by
//! M_b + Σ_j k_j D_{j,b} S_j D_{j,b}ᵀ with S_j every row of a contact that carries an impulse
//! (the projection is nonexpansive), none of a separating one. After the sweep, λ_j ← γ_j(Δv) and κ_j grows by
//! `ramp` up to `stiffness_max` on the constraints that carry load or close (AVBD's
//! stiffness ramp).
//!
//! A fixed point has λ_j = Π_j(λ_j − k_j u_j) and Δv = M⁻¹ D λ: the twin's variational
//! inequality, so the solution is the CCP's. The returned impulses are λ, whose residual is
//! the twin's (N + E)λ + p, and the bodies' velocities follow from λ as for every solver.

use super::block_gs::{
    compliance_product, hash32, phases, Block, BlockSettings, SweepOrder, Twist,
};
use super::integrate::Body64;
use super::solve::{
    inv_inertia, solve_with_method, Extra, SolveOutput, SweepMethod, Sweeps, Vec3, WarmStart,
};
use crate::model::solver::{Contact, SolverKind, SolverSettings};
use glam::DVec3;
use nalgebra::{Matrix6, Vector6};

/// Settings of the augmented-Lagrangian block descent.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Avbd {
    /// The bodies' order: `Colours`, or bands along gravity (`band`, `gravity`); `relaxation`,
    /// `inner` and `two_level` are not used.
    pub order: BlockSettings,
    /// κ at the start of a step.
    pub stiffness: f64,
    /// κ's factor after each sweep on a loaded or closing constraint.
    pub ramp: f64,
    pub stiffness_max: f64,
}

/// One cone problem (the twin's assembly and update around the sweeps).
pub fn solve(
    bodies: &[Body64],
    contacts: &[Contact],
    settings: &SolverSettings,
    avbd: &Avbd,
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
        Some(&AvbdMethod { settings: *avbd }),
    )
}

struct AvbdMethod {
    settings: Avbd,
}

/// The bodies' colours (Jones–Plassmann, as `block_gs` colours constraints): two bodies that
/// share a constraint differ.
fn colour_bodies(blocks: &[Block], n_bodies: usize) -> Vec<u32> {
    let mut neighbours: Vec<Vec<usize>> = vec![Vec::new(); n_bodies];
    for b in blocks {
        let s: Vec<usize> = b.sides.iter().flatten().map(|x| x.0).collect();
        if let [x, y] = s[..] {
            neighbours[x].push(y);
            neighbours[y].push(x);
        }
    }
    let priority = |i: usize| (hash32(i as u32), i);
    let mut colour = vec![u32::MAX; n_bodies];
    let mut left: Vec<usize> = (0..n_bodies).collect();
    let mut round = 0;
    while !left.is_empty() {
        let wins: Vec<bool> = left
            .iter()
            .map(|&i| {
                neighbours[i]
                    .iter()
                    .all(|&j| colour[j] != u32::MAX || priority(j) < priority(i))
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
    colour
}

/// A body's 6 × 6 mass matrix (linear, angular) in world axes.
fn mass_matrix(body: &Body64) -> Matrix6<f64> {
    let mut m = Matrix6::zeros();
    let mass = 1.0 / body.inv_mass;
    for k in 0..3 {
        m[(k, k)] = mass;
    }
    let inv = nalgebra::Matrix3::from_fn(|r, c| {
        let e = [DVec3::X, DVec3::Y, DVec3::Z][c];
        inv_inertia(body, e)[r]
    });
    if let Some(i) = inv.try_inverse() {
        m.fixed_view_mut::<3, 3>(3, 3).copy_from(&i);
    }
    m
}

/// A side's row k as a 6-vector (linear, angular).
fn row6(lin: &[DVec3; 3], ang: &[DVec3; 3], k: usize) -> Vector6<f64> {
    Vector6::new(lin[k].x, lin[k].y, lin[k].z, ang[k].x, ang[k].y, ang[k].z)
}

impl AvbdMethod {
    /// γ_j at the current Δv and which rows the projection passes through.
    fn augmented(
        &self,
        sw: &Sweeps,
        blocks: &[Block],
        j: usize,
        lambda: Vec3,
        k: Vec3,
        dv: &[Twist],
    ) -> (Vec3, [bool; 3]) {
        let v = blocks[j].velocity(dv);
        let c = compliance_product(sw, j, lambda);
        let trial = [0, 1, 2].map(|r| lambda[r] - k[r] * (v[r] + c[r] + sw.p[j][r]));
        let g = sw.project(trial, j);
        // The projection is nonexpansive, so k D Dᵀ on every row of a constraint that carries
        // an impulse bounds the Hessian from above: the body's step never overshoots (a
        // sliding contact's friction turns with the slip, which the normal row alone misses).
        let passes = if g == [0.0; 3] {
            [false; 3]
        } else if sw.is_plain_contact(j) {
            [true; 3]
        } else {
            [0, 1, 2].map(|r| g[r] != 0.0)
        };
        (g, passes)
    }

    /// One Newton step on body b's momentum balance.
    #[allow(clippy::too_many_arguments)]
    fn relax_body(
        &self,
        sw: &Sweeps,
        blocks: &[Block],
        touching: &[(usize, usize)],
        b: usize,
        lambda: &[Vec3],
        k: &[Vec3],
        dv: &mut [Twist],
    ) {
        let body = &sw.schur.bodies[b];
        let m = mass_matrix(body);
        let x = Vector6::new(
            dv[b].0.x, dv[b].0.y, dv[b].0.z, dv[b].1.x, dv[b].1.y, dv[b].1.z,
        );
        let mut r = m * x;
        let mut h = m;
        for &(j, side) in touching {
            if sw.eta[j] <= 0.0 {
                continue;
            }
            let Some((_, lin, ang)) = &blocks[j].sides[side] else {
                continue;
            };
            let (g, passes) = self.augmented(sw, blocks, j, lambda[j], k[j], dv);
            for row in 0..3 {
                let d = row6(lin, ang, row);
                r -= g[row] * d;
                if passes[row] {
                    h += k[j][row] * d * d.transpose();
                }
            }
        }
        if let Some(ch) = nalgebra::Cholesky::new(h) {
            let step = ch.solve(&r);
            dv[b].0 -= DVec3::new(step[0], step[1], step[2]);
            dv[b].1 -= DVec3::new(step[3], step[4], step[5]);
        }
    }
}

impl SweepMethod for AvbdMethod {
    fn run(
        &self,
        sw: &mut Sweeps,
        mut lambda: Vec<Vec3>,
        _ngamma: Vec<Vec3>,
        res0: f64,
    ) -> (Vec<Vec3>, f64, bool) {
        let s = &self.settings;
        let schur = sw.schur;
        let n_bodies = schur.bodies.len();
        let blocks: Vec<Block> = (0..lambda.len())
            .map(|j| Block::new(schur, j, sw.eta_rows[j]))
            .collect();
        let mut touching: Vec<Vec<(usize, usize)>> = vec![Vec::new(); n_bodies];
        for (j, blk) in blocks.iter().enumerate() {
            for (side, x) in blk.sides.iter().enumerate() {
                if let Some((b, _, _)) = x {
                    touching[*b].push((j, side));
                }
            }
        }
        let colours = colour_bodies(&blocks, n_bodies);
        let up = -s.order.gravity.normalize_or_zero();
        let bands: Vec<i64> = schur
            .bodies
            .iter()
            .map(|b| (b.pos.dot(up) / s.order.band).floor() as i64)
            .collect();
        let orders = match s.order.order {
            SweepOrder::Colours => vec![phases(&colours, &bands, None)],
            SweepOrder::TopDown => vec![phases(&colours, &bands, Some(true))],
            SweepOrder::BottomUp => vec![phases(&colours, &bands, Some(false))],
            SweepOrder::Alternating => vec![
                phases(&colours, &bands, Some(true)),
                phases(&colours, &bands, Some(false)),
            ],
        };
        let mut kappa = vec![s.stiffness; lambda.len()];
        let tol = sw.tolerance_norm();
        let cap = sw.settings.max_iterations;
        let mut dv = schur.delta_v(&lambda);
        let (mut residual, mut converged) = (res0, res0 <= tol);
        let (mut sweeps, mut best) = (0u32, res0);
        while !converged && sweeps < cap {
            let k: Vec<Vec3> = (0..lambda.len())
                .map(|j| sw.eta_rows[j].map(|e| kappa[j] * e))
                .collect();
            for phase in &orders[sweeps as usize % orders.len()] {
                for &b in phase {
                    if schur.bodies[b].inv_mass > 0.0 && !touching[b].is_empty() {
                        self.relax_body(sw, &blocks, &touching[b], b, &lambda, &k, &mut dv);
                    }
                }
            }
            for j in 0..lambda.len() {
                if sw.eta[j] <= 0.0 {
                    lambda[j] = [0.0; 3];
                    continue;
                }
                let (g, _) = self.augmented(sw, &blocks, j, lambda[j], k[j], &dv);
                lambda[j] = g;
                let u_n = blocks[j].velocity(&dv)[0] + sw.p[j][0];
                if g[0] > 0.0 || u_n < 0.0 {
                    kappa[j] = (kappa[j] * s.ramp).min(s.stiffness_max);
                }
            }
            sweeps += 1;
            *sw.iterations += 1;
            residual = sw.residual(&lambda, &schur.apply(&lambda));
            best = best.min(residual);
            sw.history.push([residual, best, 0.0, 1.0]);
            converged = residual <= tol;
        }
        (lambda, residual, converged)
    }
}
