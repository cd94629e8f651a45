//! Joint rows in the LCP of a step (book: Exact LCP, bilateral rows): the block records of
//! `reference::joints::write_blocks` (the GPU joint stage's twin: same rows, same drift
//! stabilisation `C/dt` clamped at the recovery speed) become rows of [`super::StepLcp`].
//!
//! Per row of a block, by its projection:
//!
//! * unilateral (`PROJ_LOWER`: limits, a rope): one LCP row, `w = Jv⁺ + b ≥ 0 ⊥ λ ≥ 0`.
//! * box (`PROJ_BOX`: a motor with a force limit F, impulse bound F·dt): the friction
//!   surplus's positive/negative split with a constant bound, `s⁺ = F + λ`, `s⁻ = F − λ`,
//!   `g⁺ − g⁻ = Jv⁺ + b`: `z = (s⁺, g⁻)`, `w = (g⁺ = Jv⁺ + b + g⁻, s⁻ = 2F − s⁺)`.
//! * bilateral (points, hinges, an unlimited motor): free multipliers, eliminated by a
//!   Schur complement of the bilateral block. With B the bilateral rows and U the rest,
//!   `0 = M_BU z + (M_BB + εI) λ_B + q_B` gives `λ_B = −K (q_B + M_BU z)`, `K = (M_BB + εI)⁻¹`,
//!   and the LCP in z alone is `M_UU − M_UB K M_BU`, `q_U − M_UB K q_B`.
//!
//! Why elimination rather than `λ = λ⁺ − λ⁻`: the split doubles the rows and makes every
//! bilateral pair degenerate (`w⁺ + w⁻ ≡ 0`, both zero at every solution), the case the solve
//! ladder has to perturb around; elimination keeps the LCP at the unilateral size, and the
//! Schur complement of the PSD `N` is PSD, so the reduced LCP is of the same class as the
//! contacts-only one. `ε = BILATERAL_REG · max diag(M_BB)` makes `M_BB + εI` positive
//! definite for redundant joints (a closed four-bar's out-of-plane rows): a compliance of
//! ε·dt² per row, which moves a non-redundant row's velocity by ε·λ (≈ 1e-8 relative).

use super::{LcpFriction, StepLcp};
use crate::model::contact::ContactRecord;
use crate::model::joint::{JOINT_ANGULAR, PROJ_BOX, PROJ_LOWER, WORLD};
use crate::reference::integrate::Body64;
use crate::reference::solve::{frame, inv_inertia, Schur, Vec3};
use glam::DVec3;
use nalgebra::{DMatrix, DVector};

/// Relative regularisation of the bilateral block (see the module notes).
pub const BILATERAL_REG: f64 = 1e-8;

/// How a joint row enters the LCP.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Kind {
    /// Eliminated: its index among the bilateral rows.
    Bilateral(usize),
    /// `z = λ ≥ 0` at this LCP row.
    Lower(usize),
    /// `z = (s⁺, g⁻)` at this LCP row and the next; the bound F (an impulse).
    Box(usize, f64),
}

/// One joint row: its block, its component (0–2), its Jacobian at A and B (linear,
/// angular; none at the world) and `Jv* + b`.
#[derive(Clone, Debug)]
struct Row {
    block: usize,
    comp: usize,
    kind: Kind,
    ids: [u32; 2],
    jac: [(DVec3, DVec3); 2],
    p: f64,
}

/// The joint part of a step's LCP.
#[derive(Clone, Debug)]
pub struct JointPart {
    rows: Vec<Row>,
    /// Block records (`reference::joints::write_blocks`).
    pub records: Vec<ContactRecord>,
    /// LCP rows of the joints (after the contacts' rows).
    pub lcp_rows: usize,
    /// Per block: its LCP rows (first, count).
    pub block_rows: Vec<(usize, usize)>,
    /// Elimination of the bilateral rows: K (M_BB + εI)⁻¹, M_BU, q_B.
    k: DMatrix<f64>,
    m_bu: DMatrix<f64>,
    q_b: DVector<f64>,
}

fn jacobian(c: &ContactRecord, t: DVec3, ra: DVec3, rb: DVec3) -> [(DVec3, DVec3); 2] {
    if c.ids[3] & JOINT_ANGULAR != 0 {
        [(DVec3::ZERO, -t), (DVec3::ZERO, t)]
    } else {
        [(-t, -ra.cross(t)), (t, rb.cross(t))]
    }
}

fn dot_v(bodies: &[Body64], id: u32, j: (DVec3, DVec3)) -> f64 {
    if id == WORLD {
        return 0.0;
    }
    let b = &bodies[id as usize];
    j.0.dot(b.vel) + j.1.dot(b.omega)
}

impl JointPart {
    /// The rows of `records` with offsets `offsets`, their LCP rows numbered from `first`.
    fn new(
        bodies: &[Body64],
        records: &[ContactRecord],
        offsets: &[[f64; 3]],
        first: usize,
    ) -> Self {
        let (mut next, mut nb) = (first, 0);
        let mut rows = Vec::new();
        let mut block_rows = Vec::with_capacity(records.len());
        for (bi, (c, off)) in records.iter().zip(offsets).enumerate() {
            let (n, u, w, ra, rb) = frame(c);
            let start = next;
            for (comp, t) in [n, u, w].into_iter().enumerate() {
                if c.ids[3] >> comp & 1 == 0 {
                    continue;
                }
                let kind = match (c.ids[3] >> 3) & 3 {
                    PROJ_LOWER => {
                        next += 1;
                        Kind::Lower(next - 1)
                    }
                    PROJ_BOX => {
                        next += 2;
                        Kind::Box(next - 2, c.ra[3] as f64)
                    }
                    _ => {
                        nb += 1;
                        Kind::Bilateral(nb - 1)
                    }
                };
                let jac = jacobian(c, t, ra, rb);
                let ids = [c.ids[0], c.ids[1]];
                let p = off[comp] + dot_v(bodies, ids[0], jac[0]) + dot_v(bodies, ids[1], jac[1]);
                rows.push(Row {
                    block: bi,
                    comp,
                    kind,
                    ids,
                    jac,
                    p,
                });
            }
            block_rows.push((start, next - start));
        }
        JointPart {
            rows,
            records: records.to_vec(),
            lcp_rows: next - first,
            block_rows,
            k: DMatrix::zeros(nb, nb),
            m_bu: DMatrix::zeros(nb, 0),
            q_b: DVector::zeros(nb),
        }
    }

    fn n_bilateral(&self) -> usize {
        self.q_b.len()
    }

    /// Velocity-row LCP rows of the joints (unilateral rows and the boxes' g⁺ rows): the
    /// rows the solve ladder perturbs.
    pub fn velocity_rows(&self) -> impl Iterator<Item = usize> + '_ {
        self.rows.iter().filter_map(|r| match r.kind {
            Kind::Lower(i) | Kind::Box(i, _) => Some(i),
            Kind::Bilateral(_) => None,
        })
    }

    /// Whether LCP row `r` is the s⁺ row of a box (motor) row.
    pub fn is_box_first(&self, r: usize) -> bool {
        self.rows
            .iter()
            .any(|x| matches!(x.kind, Kind::Box(i, _) if i == r))
    }

    /// Impulses per block (n, u, w) from the LCP solution z of the reduced problem.
    pub fn impulses(&self, z: &DVector<f64>) -> Vec<Vec3> {
        let lam_b = if self.n_bilateral() > 0 {
            -(&self.k * (&self.q_b + &self.m_bu * z))
        } else {
            DVector::zeros(0)
        };
        let mut out = vec![[0.0; 3]; self.records.len()];
        for r in &self.rows {
            out[r.block][r.comp] = match r.kind {
                Kind::Bilateral(b) => lam_b[b],
                Kind::Lower(i) => z[i],
                Kind::Box(i, f) => z[i] - f,
            };
        }
        out
    }
}

/// Velocity row of the extended problem: its LCP row (S) and the z columns with
/// coefficients and the constant that make its impulse (A).
struct RowMap {
    s: usize,
    a: Vec<(usize, f64)>,
    c: f64,
}

/// A velocity row: its map, its bodies (A, B) and its Jacobian at each.
type VelRow = (RowMap, [u32; 2], [(DVec3, DVec3); 2]);

impl StepLcp {
    /// The contacts' velocity rows: (S, A) and Jacobians per side (bodies, rows).
    fn contact_maps(&self, contacts: &[ContactRecord]) -> Vec<VelRow> {
        let rows = self.settings.rows_per_contact();
        let mut out = Vec::new();
        for (i, c) in contacts.iter().enumerate() {
            let (_, _, _, ra, rb) = frame(c);
            let b = rows * i;
            for (k, t) in self.dirs[i].iter().enumerate() {
                let map = match self.settings.friction {
                    LcpFriction::Pyramid { .. } => RowMap {
                        s: b + k,
                        a: vec![(b + k, 1.0)],
                        c: 0.0,
                    },
                    LcpFriction::Surplus => {
                        let (s, mu) = ([b, b + 1, b + 3][k], self.mu[i]);
                        let a = if k == 0 {
                            vec![(b, 1.0)]
                        } else {
                            vec![(s, 1.0), (b, -mu)]
                        };
                        RowMap { s, a, c: 0.0 }
                    }
                };
                let jac = [(-*t, -ra.cross(*t)), (*t, rb.cross(*t))];
                out.push((map, [c.ids[0], c.ids[1]], jac));
            }
        }
        out
    }

    /// Adds joint blocks (`records` with their right-hand side offsets) to the assembled
    /// contact LCP: the unilateral and box rows join the LCP, the bilateral rows are
    /// eliminated (module notes).
    pub(super) fn add_joints(
        &mut self,
        bodies: &[Body64],
        contacts: &[ContactRecord],
        records: &[ContactRecord],
        offsets: &[[f64; 3]],
    ) {
        let nc_rows = self.q.len();
        let part = JointPart::new(bodies, records, offsets, nc_rows);
        let (nu, nb) = (nc_rows + part.lcp_rows, part.n_bilateral());
        let n = nu + nb;
        let mut f = DMatrix::zeros(n, n);
        f.view_mut((0, 0), (nc_rows, nc_rows)).copy_from(&self.m);
        let mut q = DVector::zeros(n);
        q.rows_mut(0, nc_rows).copy_from(&self.q);
        // Every velocity row: the contacts' then the joints'.
        let mut vel = self.contact_maps(contacts);
        let n_cv = vel.len();
        for r in &part.rows {
            let map = match r.kind {
                Kind::Bilateral(b) => RowMap {
                    s: nu + b,
                    a: vec![(nu + b, 1.0)],
                    c: 0.0,
                },
                Kind::Lower(i) => RowMap {
                    s: i,
                    a: vec![(i, 1.0)],
                    c: 0.0,
                },
                Kind::Box(i, bound) => RowMap {
                    s: i,
                    a: vec![(i, 1.0)],
                    c: -bound,
                },
            };
            q[map.s] += r.p;
            if let Kind::Box(i, bound) = r.kind {
                // g⁺ = v + g⁻; s⁻ = 2F − s⁺.
                f[(i, i + 1)] += 1.0;
                f[(i + 1, i)] -= 1.0;
                q[i + 1] += 2.0 * bound;
            }
            vel.push((map, r.ids, r.jac));
        }
        // N between every velocity row and each joint row, through their shared bodies.
        let nj = coupling(bodies, &vel, n_cv);
        for (x, (mx, _, _)) in vel.iter().enumerate() {
            for (r, (mr, _, _)) in vel[n_cv..].iter().enumerate() {
                let v = nj[(x, r)];
                if v == 0.0 {
                    continue;
                }
                // Row x, the joint row's impulse.
                for &(col, k) in &mr.a {
                    f[(mx.s, col)] += v * k;
                }
                q[mx.s] += v * mr.c;
                // Row of the joint row, a contact row's impulse (joint–joint done above).
                if x < n_cv {
                    for &(col, k) in &mx.a {
                        f[(mr.s, col)] += v * k;
                    }
                }
            }
        }
        self.eliminate(f, q, part, nu);
    }

    /// The reduced LCP (Schur complement of the bilateral block), kept with what recovers λ_B.
    fn eliminate(&mut self, f: DMatrix<f64>, q: DVector<f64>, mut part: JointPart, nu: usize) {
        let nb = f.nrows() - nu;
        if nb == 0 {
            self.m = f;
            self.q = q;
            self.joints = Some(part);
            return;
        }
        let mut m_bb = f.view((nu, nu), (nb, nb)).into_owned();
        let dmax = (0..nb).map(|i| m_bb[(i, i)]).fold(0.0, f64::max);
        let eps = BILATERAL_REG * dmax;
        for i in 0..nb {
            // A row on no dynamic body (diagonal 0) gets λ = 0 from a unit diagonal.
            m_bb[(i, i)] += if m_bb[(i, i)] > 0.0 { eps } else { 1.0 };
        }
        let k = match m_bb.clone().cholesky() {
            Some(c) => c.inverse(),
            None => m_bb.try_inverse().unwrap_or_else(|| DMatrix::zeros(nb, nb)),
        };
        let m_ub = f.view((0, nu), (nu, nb));
        let m_bu = f.view((nu, 0), (nb, nu)).into_owned();
        let q_b = q.rows(nu, nb).into_owned();
        let mk = m_ub * &k;
        self.m = f.view((0, 0), (nu, nu)) - &mk * &m_bu;
        self.q = q.rows(0, nu) - &mk * &q_b;
        part.k = k;
        part.m_bu = m_bu;
        part.q_b = q_b;
        self.joints = Some(part);
    }
}

/// `N[x, r] = J_x M⁻¹ J_rᵀ` for every velocity row x and each joint row r (the rows from
/// `first` on), summed over the dynamic bodies they share.
fn coupling(bodies: &[Body64], vel: &[VelRow], first: usize) -> DMatrix<f64> {
    let mut per_body: Vec<Vec<(usize, (DVec3, DVec3))>> = vec![Vec::new(); bodies.len()];
    for (x, (_, ids, jac)) in vel.iter().enumerate() {
        for side in 0..2 {
            let id = ids[side];
            if id != WORLD && bodies[id as usize].inv_mass > 0.0 {
                per_body[id as usize].push((x, jac[side]));
            }
        }
    }
    let mut n = DMatrix::zeros(vel.len(), vel.len() - first);
    for (b, list) in per_body.iter().enumerate() {
        let body = &bodies[b];
        for &(r, (lr, ar)) in list.iter().filter(|e| e.0 >= first) {
            let (ml, ma) = (body.inv_mass * lr, inv_inertia(body, ar));
            for &(x, (lx, ax)) in list {
                n[(x, r - first)] += lx.dot(ml) + ax.dot(ma);
            }
        }
    }
    n
}

/// `v⁺ = v* + M⁻¹ (D γ + G λ)` for every body with joint blocks (non-dynamic bodies keep v*).
pub fn apply_impulses_joints(
    bodies: &[Body64],
    contacts: &[ContactRecord],
    gamma: &[Vec3],
    records: &[ContactRecord],
    lambda: &[Vec3],
) -> Vec<(DVec3, DVec3)> {
    let all: Vec<ContactRecord> = contacts.iter().chain(records).copied().collect();
    let g: Vec<Vec3> = gamma.iter().chain(lambda).copied().collect();
    let dv = Schur::new(bodies, &all).with_joints(true).delta_v(&g);
    crate::reference::solve::post_velocities(bodies, &dv)
}
