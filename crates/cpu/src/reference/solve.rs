//! f64 twin of the GPU CCP solver (`shaders/solve_*.wgsl`, the engine's `solve`): the same assembly,
//! the same sweeps (step → product → scalar logic → commit), the same branch decisions, so the
//! GPU and CPU can be compared iteration for iteration. Only the summation order of the
//! reductions differs (here sequential, on the GPU a fixed tree).

use super::integrate::Body64;
use super::tangent_basis;
use crate::model::rows::{self, compliant, Cone, MaterialRow, Projection};
use crate::model::solver::{Contact, SolverKind, SolverSettings};
use crate::patch::couple::{
    project_patch, PatchModel, PatchRows, PATCH_FEATURE, PATCH_FEATURE_DIST,
};
use glam::DVec3;

pub type Vec3 = [f64; 3];

/// Result of one solve.
#[derive(Clone, Debug, Default)]
pub struct SolveOutput {
    /// Returned impulses (n, u, w) per contact (APGD: the iterate with the smallest residual).
    pub gamma: Vec<Vec3>,
    /// Per sweep: (residual of the trial, best residual, L, accepted as 0/1).
    pub history: Vec<[f64; 4]>,
    /// Velocities after the update (every body; non-dynamic ones unchanged).
    pub vel: Vec<DVec3>,
    pub omega: Vec<DVec3>,
    pub iterations: u32,
    /// Residual of the returned impulses.
    pub residual: f64,
    /// Residual of the starting impulses.
    pub residual0: f64,
    pub max_penetration: f64,
    pub converged: bool,
    /// Right-hand side p (exact cone: with the last correction s) and scaling η per contact.
    pub p: Vec<Vec3>,
    pub eta: Vec<f64>,
    /// Exact cone: cone problems solved (0 with the relaxed cone).
    pub outer: u32,
    /// Sliding contacts with A ≤ 0 (see [`painleve_count`]).
    pub painleve: u32,
    /// The record each contact saves for the next step (`rows::saved_record`: γ, or the
    /// tanh / LuGre state), as the GPU's warm-start buffer holds it.
    pub saved: Vec<[f64; 4]>,
    /// Rows 3–5 (spin, roll u, roll w) of every contact (not joint blocks) when the model
    /// table has rolling or spinning resistance; empty otherwise.
    pub gamma_rolling: Vec<Vec3>,
}

/// Warm-start data: the previous step's sorted keys and impulses.
#[derive(Clone, Copy, Debug)]
pub struct WarmStart<'a> {
    pub keys: &'a [(u32, u32, u32)],
    pub gamma: &'a [Vec3],
    /// The full saved records (`SolveOutput::saved`), which replace `gamma` when not empty
    /// (models with state: tanh, LuGre).
    pub saved: &'a [[f64; 4]],
}

impl WarmStart<'_> {
    /// The saved record of key index k.
    fn record(&self, k: usize) -> [f64; 4] {
        if self.saved.is_empty() {
            let g = self.gamma[k];
            [g[0], g[1], g[2], 0.0]
        } else {
            self.saved[k]
        }
    }
}

fn v3(a: [f32; 4]) -> DVec3 {
    DVec3::new(a[0] as f64, a[1] as f64, a[2] as f64)
}

fn add(a: Vec3, b: Vec3) -> Vec3 {
    [a[0] + b[0], a[1] + b[1], a[2] + b[2]]
}

fn sub(a: Vec3, b: Vec3) -> Vec3 {
    [a[0] - b[0], a[1] - b[1], a[2] - b[2]]
}

fn scale(s: f64, a: Vec3) -> Vec3 {
    [s * a[0], s * a[1], s * a[2]]
}

fn dot(a: Vec3, b: Vec3) -> f64 {
    a[0] * b[0] + a[1] * b[1] + a[2] * b[2]
}

/// Projection onto K = { γ_n ≥ 0, ‖γ_t‖ ≤ μ γ_n } (same three cases as the shader).
pub fn project_cone(g: Vec3, mu: f64) -> Vec3 {
    let t = (g[1] * g[1] + g[2] * g[2]).sqrt();
    // `g[0] >= 0`: with μ = 0 and no tangential part, 0 ≤ μ g_n holds for a negative g_n too.
    if t <= mu * g[0] && g[0] >= 0.0 {
        return g;
    }
    if mu * t <= -g[0] {
        return [0.0; 3];
    }
    let gn = (mu * t + g[0]) / (mu * mu + 1.0);
    [gn, g[1] * (mu * gn / t), g[2] * (mu * gn / t)]
}

/// The tanh / LuGre projection (`src/model/rows`): γ_n ≥ 0 and ‖γ_T‖ ≤ r.
pub fn project_disk(g: Vec3, r: f64) -> Vec3 {
    let t = (g[1] * g[1] + g[2] * g[2]).sqrt();
    let k = if t > r { r / t } else { 1.0 };
    [g[0].max(0.0), g[1] * k, g[2] * k]
}

/// A contact's projection on its set (`project_state` in `shaders/common/solve.wgsl`); the
/// cone shifted to γ_n ≥ −shift is Π(γ + shift e_n) − shift e_n (cohesion, `rows::with_cohesion`).
pub fn project_contact(g: Vec3, set: Projection) -> Vec3 {
    match set {
        Projection::Cone { mu, shift: 0.0 } => project_cone(g, mu),
        Projection::Cone { mu, shift } => {
            let p = project_cone([g[0] + shift, g[1], g[2]], mu);
            [p[0] - shift, p[1], p[2]]
        }
        Projection::Disk { radius } => project_disk(g, radius),
        Projection::Box { half_width } => rows::project_box(g, half_width),
    }
}

/// Whether record `c` is a joint block (only looked at when the problem has joint rows,
/// like the shaders' uniform flag).
pub fn is_joint(c: &Contact, joints: bool) -> bool {
    joints && c.ids[3] & crate::model::joint::JOINT_BIT != 0
}

/// Whether record `c` is a patch block (feature `PATCH_FEATURE`; only looked at when the
/// model table has a patch model, like the shaders' `HAS_PATCHES`).
pub fn is_patch(c: &Contact, patches: bool) -> bool {
    patches && c.ids[2] >= PATCH_FEATURE_DIST && c.ids[3] & crate::model::joint::JOINT_BIT == 0
}

/// Whether record `c` is a lugre_patch (distributed) block (feature `PATCH_FEATURE_DIST`).
pub fn is_dist_patch(c: &Contact, patches: bool) -> bool {
    is_patch(c, patches) && c.ids[2] == PATCH_FEATURE_DIST
}

// The reduced model's feature sorts last (PATCH_FEATURE_DIST is the one below it).
const _: () = assert!(PATCH_FEATURE == PATCH_FEATURE_DIST + 1);

fn joint_mask(flags: u32) -> Vec3 {
    [
        (flags & 1) as f64,
        ((flags >> 1) & 1) as f64,
        ((flags >> 2) & 1) as f64,
    ]
}

/// Projection of a joint block's impulse (`project_joint` in `shaders/common/solve.wgsl`).
pub fn project_joint(g: Vec3, flags: u32, bound: f64) -> Vec3 {
    let m = joint_mask(flags);
    let proj = (flags >> 3) & 3;
    let mut x = [g[0] * m[0], g[1] * m[1], g[2] * m[2]];
    for v in &mut x {
        if proj == crate::model::joint::PROJ_LOWER {
            *v = v.max(0.0);
        } else if proj == crate::model::joint::PROJ_BOX {
            *v = v.clamp(-bound, bound);
        }
    }
    x
}

/// The projection of constraint `c`: the cone for contacts, the block's rule for joints.
pub fn project_row(g: Vec3, c: &Contact, joints: bool) -> Vec3 {
    if is_joint(c, joints) {
        project_joint(g, c.ids[3], c.ra[3] as f64)
    } else {
        project_cone(g, c.ra[3] as f64)
    }
}

/// Warm-start key: (A, B, feature), or (WORLD, 0, block) for a joint block.
pub fn warm_key(c: &Contact, joints: bool) -> (u32, u32, u32) {
    if is_joint(c, joints) {
        (crate::model::joint::WORLD, 0, c.ids[2])
    } else {
        c.key()
    }
}

/// (Δv or v) of a joint's body: none for the world.
fn body_or_world<T: Copy + Default>(v: &[T], b: u32) -> T {
    if b == crate::model::joint::WORLD {
        T::default()
    } else {
        v[b as usize]
    }
}

/// World inverse inertia times v: R diag(I⁻¹) Rᵀ v.
pub fn inv_inertia(b: &Body64, v: DVec3) -> DVec3 {
    b.rot * (b.inv_inertia * (b.rot.inverse() * v))
}

/// The contact frame (n, u, w) and lever arms.
pub fn frame(c: &Contact) -> (DVec3, DVec3, DVec3, DVec3, DVec3) {
    let n = v3(c.n_gap);
    let (u, w) = tangent_basis(n);
    (n, u, w, v3(c.ra), v3(c.rb))
}

/// Residual of γ per contact with g_d = η_i: (γ − Π(γ − η g)) / η.
pub fn residual_vec(gamma: Vec3, grad: Vec3, eta: f64, mu: f64) -> Vec3 {
    residual_row(gamma, grad, [eta; 3], |x| project_cone(x, mu))
}

/// [`residual_vec`] with the constraint's own projection `project` (the contact's cone or
/// disk, or a joint block's rule) and per-row scaling `e` (a joint block's; `[η; 3]` for a
/// contact).
pub fn residual_row(gamma: Vec3, grad: Vec3, e: Vec3, project: impl Fn(Vec3) -> Vec3) -> Vec3 {
    if e[0] <= 0.0 {
        return [0.0; 3];
    }
    let t = project([0, 1, 2].map(|k| gamma[k] - e[k] * grad[k]));
    [0, 1, 2].map(|k| (gamma[k] - t[k]) / e[k])
}

/// The matrix-free product, as the GPU does it: per body Δv = M⁻¹ Σ D γ, then per contact Dᵀ Δv.
pub struct Schur<'a> {
    pub bodies: &'a [Body64],
    pub contacts: &'a [Contact],
    frames: Vec<(DVec3, DVec3, DVec3, DVec3, DVec3)>,
    /// Compliance diag(E_n, E_T, E_T) per contact (empty: all 0), added by [`Schur::apply`].
    pub(crate) compliance: Vec<Vec3>,
    /// Off-diagonal compliance (E_01, E_02, E_12) of full symmetric blocks (lugre_patch;
    /// empty: none).
    pub(crate) coupling: Vec<Vec3>,
    /// Whether the records include joint blocks (see [`is_joint`]).
    joints: bool,
    /// Whether the records include patch blocks (see [`is_patch`]).
    patches: bool,
}

impl<'a> Schur<'a> {
    pub fn new(bodies: &'a [Body64], contacts: &'a [Contact]) -> Self {
        Schur {
            bodies,
            contacts,
            frames: contacts.iter().map(frame).collect(),
            compliance: Vec::new(),
            coupling: Vec::new(),
            joints: false,
            patches: false,
        }
    }

    /// Off-diagonal compliance of full symmetric blocks (see [`Schur::apply`]).
    pub fn with_coupling(mut self, coupling: Vec<Vec3>) -> Self {
        self.coupling = coupling;
        self
    }

    /// The records include patch blocks (a patch friction model in the table).
    pub fn with_patches(mut self, patches: bool) -> Self {
        self.patches = patches;
        self
    }

    /// The records include joint blocks.
    pub fn with_joints(mut self, joints: bool) -> Self {
        self.joints = joints;
        self
    }

    /// The product (N + E)γ with E = diag(E_n, E_T, E_T) per contact (`src/model/rows`).
    pub fn with_compliance(mut self, compliance: Vec<Vec3>) -> Self {
        self.compliance = compliance;
        self
    }

    /// The block's diagonal along the world direction `d` at contact i: Σ over its bodies of
    /// m⁻¹ + (r × d)·I⁻¹(r × d), a body without inverse mass counting nothing.
    pub fn inverse_mass_along(&self, i: usize, d: DVec3) -> f64 {
        let c = &self.contacts[i];
        let (_, _, _, ra, rb) = self.frames[i];
        [(c.ids[0], ra), (c.ids[1], rb)]
            .iter()
            .map(|&(id, r)| body_inverse_mass_between(&self.bodies[id as usize], r, d, d))
            .sum()
    }

    /// Δv (linear, angular) per body for impulses γ.
    pub fn delta_v(&self, gamma: &[Vec3]) -> Vec<(DVec3, DVec3)> {
        let mut acc = vec![(DVec3::ZERO, DVec3::ZERO); self.bodies.len()];
        for (i, c) in self.contacts.iter().enumerate() {
            let (n, u, w, ra, rb) = self.frames[i];
            let g = gamma[i];
            if is_joint(c, self.joints) {
                let m = joint_mask(c.ids[3]);
                let f = g[0] * m[0] * n + g[1] * m[1] * u + g[2] * m[2] * w;
                let ang = c.ids[3] & crate::model::joint::JOINT_ANGULAR != 0;
                for (side, body, r) in [(-1.0, c.ids[0], ra), (1.0, c.ids[1], rb)] {
                    if body == crate::model::joint::WORLD {
                        continue;
                    }
                    let e = &mut acc[body as usize];
                    if ang {
                        e.1 += side * f;
                    } else {
                        e.0 += side * f;
                        e.1 += side * r.cross(f);
                    }
                }
                continue;
            }
            // A patch block's lane 0 is a torque about n, not a normal force.
            let (f, tq) = if is_patch(c, self.patches) {
                (g[1] * u + g[2] * w, g[0] * n)
            } else {
                (g[0] * n + g[1] * u + g[2] * w, DVec3::ZERO)
            };
            let (a, b) = (c.ids[0] as usize, c.ids[1] as usize);
            acc[a].0 -= f;
            acc[a].1 -= ra.cross(f) + tq;
            acc[b].0 += f;
            acc[b].1 += rb.cross(f) + tq;
        }
        acc.iter()
            .zip(self.bodies)
            .map(|(&(lin, ang), b)| {
                if b.inv_mass == 0.0 {
                    (DVec3::ZERO, DVec3::ZERO)
                } else {
                    (b.inv_mass * lin, inv_inertia(b, ang))
                }
            })
            .collect()
    }

    /// D_iᵀ (Δv_A, Δv_B) per contact.
    pub fn contact_velocity(&self, dv: &[(DVec3, DVec3)]) -> Vec<Vec3> {
        self.contacts
            .iter()
            .enumerate()
            .map(|(i, c)| {
                let (n, u, w, ra, rb) = self.frames[i];
                if is_joint(c, self.joints) {
                    let (a, b) = (body_or_world(dv, c.ids[0]), body_or_world(dv, c.ids[1]));
                    let rel = if c.ids[3] & crate::model::joint::JOINT_ANGULAR != 0 {
                        b.1 - a.1
                    } else {
                        (b.0 + b.1.cross(rb)) - (a.0 + a.1.cross(ra))
                    };
                    let m = joint_mask(c.ids[3]);
                    return [m[0] * n.dot(rel), m[1] * u.dot(rel), m[2] * w.dot(rel)];
                }
                let (a, b) = (dv[c.ids[0] as usize], dv[c.ids[1] as usize]);
                let rel = (b.0 + b.1.cross(rb)) - (a.0 + a.1.cross(ra));
                // A patch block's lane 0 is the spin about n.
                let x = if is_patch(c, self.patches) {
                    n.dot(b.1 - a.1)
                } else {
                    n.dot(rel)
                };
                [x, u.dot(rel), w.dot(rel)]
            })
            .collect()
    }

    /// (N + E) γ.
    pub fn apply(&self, gamma: &[Vec3]) -> Vec<Vec3> {
        self.apply_from(&self.delta_v(gamma), gamma)
    }

    /// (N + E) γ from the bodies' Δv = M⁻¹ D γ (a solver that keeps Δv up to date).
    pub(crate) fn apply_from(&self, dv: &[(DVec3, DVec3)], gamma: &[Vec3]) -> Vec<Vec3> {
        let mut v = self.contact_velocity(dv);
        for (i, e) in self.compliance.iter().enumerate() {
            for k in 0..3 {
                v[i][k] += e[k] * gamma[i][k];
            }
        }
        for (i, o) in self.coupling.iter().enumerate() {
            let g = gamma[i];
            v[i][0] += o[0] * g[1] + o[1] * g[2];
            v[i][1] += o[0] * g[0] + o[2] * g[2];
            v[i][2] += o[1] * g[0] + o[2] * g[1];
        }
        v
    }

    /// Constraint i's rows one at a time: per side (body, linear rows, angular rows), so
    /// that row k of D_iᵀ v is Σ_sides lin[k]·v + ang[k]·ω and D_i γ applies the same rows
    /// transposed (what [`Schur::delta_v`] and [`Schur::contact_velocity`] do for all).
    pub(crate) fn row_jacobian(&self, i: usize) -> [(u32, [DVec3; 3], [DVec3; 3]); 2] {
        let c = &self.contacts[i];
        let (n, u, w, ra, rb) = self.frames[i];
        let t = [n, u, w];
        let sides = [(-1.0, c.ids[0], ra), (1.0, c.ids[1], rb)];
        if is_joint(c, self.joints) {
            let m = joint_mask(c.ids[3]);
            let angular = c.ids[3] & crate::model::joint::JOINT_ANGULAR != 0;
            return sides.map(|(s, body, r)| {
                let row = |k: usize| s * m[k] * t[k];
                if angular {
                    (body, [DVec3::ZERO; 3], [0, 1, 2].map(row))
                } else {
                    (body, [0, 1, 2].map(row), [0, 1, 2].map(|k| r.cross(row(k))))
                }
            });
        }
        // A patch block's lane 0 is a torque about n, not a normal force.
        let patch = is_patch(c, self.patches);
        sides.map(|(s, body, r)| {
            let lin = [0, 1, 2].map(|k| {
                if k == 0 && patch {
                    DVec3::ZERO
                } else {
                    s * t[k]
                }
            });
            let ang = [0, 1, 2].map(|k| {
                if k == 0 && patch {
                    s * n
                } else {
                    r.cross(s * t[k])
                }
            });
            (body, lin, ang)
        })
    }
}

/// p_i = [max(Φ/dt, −v_recover), 0, 0] + D_iᵀ v*, η_i = 3/trace(B_ii), where B_ii is N_ii with
/// each body's inverse mass and inertia multiplied by its number of contacts n_b (≥ 1), so that
/// N ≤ blockdiag(B) ≤ diag(3/η) (see `shaders/solve_assemble.wgsl`): projected Jacobi's η (an
/// APGD solve steps with n_b = 1, see [`solve`]).
pub fn assemble(
    bodies: &[Body64],
    contacts: &[Contact],
    dt: f64,
    recovery_speed: f64,
) -> (Vec<Vec3>, Vec<f64>) {
    let rigid = rows::RigidOffset::plain(recovery_speed);
    let (p, eta, _) = assemble_models(bodies, contacts, dt, rigid, &[]);
    (p, eta)
}

/// [`assemble`] with a per-material model table (`crate::model::rows`): also returns the
/// compliance (E_n, E_T, E_T) per contact, which adds to the diagonal bound
/// (3/η = trace + E_n + E_T). The bristle offset −E_T γ_T⁻ and the tanh / LuGre rows, which
/// need the previous step's records, are added by [`solve_models`].
pub fn assemble_models(
    bodies: &[Body64],
    contacts: &[Contact],
    dt: f64,
    rigid: rows::RigidOffset,
    models: &[MaterialRow],
) -> (Vec<Vec3>, Vec<f64>, Vec<Vec3>) {
    let a = assemble_rows(
        bodies,
        contacts,
        dt,
        rigid,
        models,
        None,
        &[],
        &[],
        false,
        DVec3::ZERO,
    );
    (a.p, a.eta, a.compliance)
}

/// What assembly gives the sweeps: p, η, compliance, the projection's μ, and per contact the
/// previous record (if found), the warm-start impulse, the model id and the LuGre state.
struct Assembled {
    p: Vec<Vec3>,
    eta: Vec<f64>,
    compliance: Vec<Vec3>,
    mu: Vec<f64>,
    /// A contact's set (None for joint and patch blocks, which have their own rules).
    projection: Vec<Option<Projection>>,
    /// A patch block's guard radius (0 for other records).
    guard: Vec<f64>,
    warm: Vec<Option<Vec3>>,
    models: Vec<(rows::PairModel, [f64; 4])>,
    state: Vec<[f64; 2]>,
    /// Per-row scaling (a joint block's rows; `[η; 3]` for a contact).
    eta_rows: Vec<Vec3>,
    /// The residual's per-row scaling: `eta_rows`, but an APGD contact's count-scaled η
    /// (its step takes the plain diagonal; `res_eta` in shaders/common/solve_sweep.wgsl).
    res_rows: Vec<Vec3>,
    /// Rows 3–5 of every contact when the table has rolling or spinning resistance (empty
    /// otherwise; joint blocks have none).
    ext: Vec<ExtRows>,
    /// A patch block's model and rows (None for other records).
    patch: Vec<Option<(PatchModel, PatchRows)>>,
    /// Off-diagonal compliance per record (lugre_patch blocks; 0 for the others).
    coupling: Vec<Vec3>,
    /// A lugre_patch block's patch radius r (None for other records).
    dist_r: Vec<Option<f64>>,
}

/// A contact's rolling and spinning rows 3–5 (`assemble_ext` in `solve_assemble.wgsl`).
#[derive(Clone, Copy, Debug, Default)]
struct ExtRows {
    p: Vec3,
    /// η_e = 3/(2 trace B_ang), 0 when the rows are not live.
    eta: f64,
    /// (spin, roll) bounds.
    bounds: [f64; 2],
}

/// Rows 3–5 of a contact (see `crate::model::rows`, "Rolling and spinning").
fn assemble_ext(
    bodies: &[Body64],
    c: &Contact,
    coef: [f64; 2],
    live: bool,
    gn_last: f64,
    nb: &dyn Fn(u32) -> f64,
) -> ExtRows {
    let (n, u, w, ra, rb) = frame(c);
    let (a, b) = (&bodies[c.ids[0] as usize], &bodies[c.ids[1] as usize]);
    let r_eff = rows::rolling_radius(
        ra.length(),
        rb.length(),
        a.inv_mass == 0.0,
        b.inv_mass == 0.0,
    );
    let bounds = rows::rolling_bounds(coef, r_eff, gn_last);
    let ang = |body: &Body64| {
        [n, u, w]
            .iter()
            .map(|t| t.dot(inv_inertia(body, *t)))
            .sum::<f64>()
    };
    let tr = nb(c.ids[0]) * ang(a) + nb(c.ids[1]) * ang(b);
    let on = live && tr > 0.0 && (bounds[0] > 0.0 || bounds[1] > 0.0);
    let relw = b.omega - a.omega;
    ExtRows {
        p: [n.dot(relw), u.dot(relw), w.dot(relw)],
        eta: if on { 1.5 / tr } else { 0.0 },
        bounds,
    }
}

#[allow(clippy::too_many_arguments)]
fn assemble_rows(
    bodies: &[Body64],
    contacts: &[Contact],
    dt: f64,
    rigid: rows::RigidOffset,
    models: &[MaterialRow],
    warm: Option<(WarmStart, bool)>,
    joint_offsets: &[Vec3],
    dist_sums: &[Option<[f64; 7]>],
    apgd: bool,
    shear_flow: DVec3,
) -> Assembled {
    let nc = contacts.len();
    let joints = !joint_offsets.is_empty();
    let first_joint = nc - joint_offsets.len();
    let mut out = Assembled {
        p: Vec::with_capacity(nc),
        eta: Vec::with_capacity(nc),
        compliance: Vec::with_capacity(nc),
        mu: Vec::with_capacity(nc),
        projection: Vec::with_capacity(nc),
        guard: Vec::with_capacity(nc),
        warm: Vec::with_capacity(nc),
        models: Vec::with_capacity(nc),
        state: Vec::with_capacity(nc),
        eta_rows: Vec::with_capacity(nc),
        res_rows: Vec::with_capacity(nc),
        ext: Vec::new(),
        patch: Vec::with_capacity(nc),
        coupling: Vec::with_capacity(nc),
        dist_r: Vec::with_capacity(nc),
    };
    let patches = rows::has_patches(models);
    let rolling = rows::has_rolling(models);
    let mut count = vec![0u32; bodies.len()];
    for c in contacts {
        for b in [c.ids[0], c.ids[1]] {
            if b != crate::model::joint::WORLD {
                count[b as usize] += 1;
            }
        }
    }
    let nb = |b: u32| count[b as usize].max(1) as f64;
    let inputs = ContactInputs {
        bodies,
        dt,
        rigid,
        models,
        warm,
        apgd,
        shear_flow,
        rolling,
    };
    for (i, c) in contacts.iter().enumerate() {
        out.coupling.push([0.0; 3]);
        out.dist_r.push(None);
        if is_joint(c, joints) {
            let (q, e, rows) = assemble_joint(bodies, c, joint_offsets[i - first_joint], &nb);
            // The joint block's last impulse by its key (warm start only: no model state).
            let last = warm
                .filter(|&(_, warm_start)| warm_start && e > 0.0)
                .and_then(|(ws, _)| {
                    ws.keys
                        .binary_search(&warm_key(c, joints))
                        .ok()
                        .map(|k| ws.record(k))
                })
                .map(|l| [l[0], l[1], l[2]]);
            out.p.push(q);
            out.eta.push(e);
            out.eta_rows.push(rows);
            out.res_rows.push(rows);
            out.compliance.push([0.0; 3]);
            out.mu.push(0.0);
            out.projection.push(None);
            out.guard.push(0.0);
            out.warm.push(last);
            out.models
                .push(((rows::MODEL_COULOMB, 0.0, 0.0, 0.0), [0.0; 4]));
            out.state.push([0.0; 2]);
            out.patch.push(None);
            continue;
        }
        if is_dist_patch(c, patches) {
            let ws = warm.map(|w| w.0);
            let sums = dist_sums.get(i).copied().flatten().unwrap_or([0.0; 7]);
            assemble_dist_patch(&mut out, bodies, contacts, i, models, ws, sums, &nb);
            if rolling {
                out.ext.push(ExtRows::default());
            }
            continue;
        }
        if is_patch(c, patches) {
            let ws = warm.map(|w| w.0);
            assemble_patch(&mut out, bodies, contacts, i, models, dt, ws, &nb);
            if rolling {
                out.ext.push(ExtRows::default());
            }
            continue;
        }
        push_contact_rows(&mut out, &inputs, c, &nb);
    }
    out
}

/// What a contact's rows read besides the contact itself: the bodies, the step, the
/// materials, the previous step's records and the solver's choices.
struct ContactInputs<'a> {
    bodies: &'a [Body64],
    dt: f64,
    rigid: rows::RigidOffset,
    models: &'a [MaterialRow],
    warm: Option<(WarmStart<'a>, bool)>,
    /// APGD's step is the plain diagonal; Jacobi's counts each body's constraints.
    apgd: bool,
    shear_flow: DVec3,
    /// Some material rolls: every contact carries its rows 3–5 (`ExtRows`).
    rolling: bool,
}

/// A contact's rows 0–2 (and 3–5 when materials roll): its model's compliance, offset and
/// projection, the step η, the warm start and the model state it carries.
fn push_contact_rows(
    out: &mut Assembled,
    inputs: &ContactInputs,
    c: &Contact,
    nb: &dyn Fn(u32) -> f64,
) {
    let ContactInputs {
        bodies,
        dt,
        rigid,
        models,
        warm,
        apgd,
        shear_flow,
        rolling,
    } = *inputs;
    let (n, u, w, ra, rb) = frame(c);
    let (a, b) = (&bodies[c.ids[0] as usize], &bodies[c.ids[1] as usize]);
    // B's image moves along the flow at rb[3] relative to B (Lees–Edwards; 0 otherwise).
    let v_image = c.rb[3] as f64 * shear_flow;
    let rel = (b.vel + v_image + b.omega.cross(rb)) - (a.vel + a.omega.cross(ra));
    let (model, ext, phys) = if models.is_empty() {
        ((rows::MODEL_COULOMB, 0.0, 0.0, 0.0), [0.0; 4], [0.0; 2])
    } else {
        let (ma, mb) = rows::contact_materials(c.ids[3]);
        let m = |k: usize| models[k.min(models.len() - 1)];
        let phys = compliant::pair_physical(m(ma), m(mb));
        let geo = compliant::ContactGeometry {
            la: ra.length(),
            lb: rb.length(),
            a_fixed: a.inv_mass == 0.0,
            b_fixed: b.inv_mass == 0.0,
            m_eff: normal_mass(a, b, ra, rb, n),
        };
        let model = compliant::contact_model(rows::pair_model(m(ma), m(mb)), phys, &geo);
        (model, rows::pair_ext(m(ma), m(mb)), phys)
    };
    let mut model = model;
    let phi = c.n_gap[3] as f64;
    let (e0, mut stab) = rows::normal_rows(model, phi, dt, rigid);
    let mut e_t = rows::tangent_compliance(model, dt);
    // E_n = ∞ (Hunt–Crossley not yet penetrating): no force, the contact is inactive.
    let active = e0.is_finite();
    let mut e = if active { e0 } else { 0.0 };
    let share = |body: &Body64, r: DVec3| {
        3.0 * body.inv_mass
            + [n, u, w]
                .iter()
                .map(|t| {
                    let x = r.cross(*t);
                    x.dot(inv_inertia(body, x))
                })
                .sum::<f64>()
    };
    let (sa, sb) = (share(a, ra), share(b, rb));
    let tr = nb(c.ids[0]) * sa + nb(c.ids[1]) * sb;
    let active = active && tr > 0.0;
    let stateful = model.0 == rows::MODEL_TANH || model.0 == rows::MODEL_LUGRE;
    let hc_v0 = compliant::needs_impact_speed(model, phys);
    // The previous record by key (the warm start; the bristle's γ_T⁻; tanh / LuGre state;
    // a Hunt–Crossley contact's impact speed).
    let mut last = None;
    if let Some((ws, warm_start)) = warm {
        if active && (warm_start || e_t > 0.0 || stateful || rolling || hc_v0) {
            if let Ok(k) = ws.keys.binary_search(&c.key()) {
                last = Some(ws.record(k));
            }
        }
    }
    let l = last.unwrap_or([0.0; 4]);
    let mut state = [0.0; 2];
    if hc_v0 && active {
        // α = 2χ/(3 v₀): the damping needs the impact speed (liveness does not).
        let v0 = compliant::impact_speed(l[3], phi, n.dot(rel));
        model = compliant::with_impact_speed(model, phys, v0);
        let (e1, s1) = rows::normal_rows(model, phi, dt, rigid);
        (e, stab) = (e1, s1);
        state[0] = v0;
    }
    let vt = [u.dot(rel), w.dot(rel)];
    let mut pt = [vt[0] - e_t * l[1], vt[1] - e_t * l[2]];
    let mu = c.ra[3] as f64;
    let mut projection = rows::bristle_box(model, mu, l[0]).unwrap_or(Projection::cone(mu));
    let mut wt = [l[1], l[2]];
    if let Some(t) = rows::stateful_rows(model, ext, mu, l, vt, dt) {
        e_t = t.e_t;
        pt = [vt[0] + t.offset[0], vt[1] + t.offset[1]];
        projection = t.projection;
        wt = t.warm_t;
        state = t.state;
    }
    let mut eta = if active { 3.0 / (tr + e + e_t) } else { 0.0 };
    // APGD's step: the plain diagonal (n_b = 1); the residual keeps the counted η.
    let mut eta_step = match (apgd, active) {
        (true, true) => 3.0 / (sa + sb + e + e_t),
        (true, false) => 0.0,
        (false, _) => eta,
    };
    if rolling {
        let (ma, mb) = rows::contact_materials(c.ids[3]);
        let m = |k: usize| models[k.min(models.len() - 1)];
        let coef = rows::pair_rolling(m(ma), m(mb));
        let x = assemble_ext(bodies, c, coef, active, l[0], nb);
        if x.eta > 0.0 {
            // The 6-row block's bound halves the linear rows' step.
            eta = 1.5 / (tr + e + e_t);
            eta_step = eta;
        }
        out.ext.push(x);
    }
    out.compliance.push([e, e_t, e_t]);
    out.p.push([stab + n.dot(rel), pt[0], pt[1]]);
    out.eta.push(eta_step);
    if let (Projection::Cone { shift, .. }, false) = (&mut projection, models.is_empty()) {
        let (ma, mb) = rows::contact_materials(c.ids[3]);
        let m = |k: usize| models[k.min(models.len() - 1)];
        let r_eff = rows::rolling_radius(
            ra.length(),
            rb.length(),
            a.inv_mass == 0.0,
            b.inv_mass == 0.0,
        );
        *shift = rows::pull_off(rows::pair_cohesion(m(ma), m(mb)), r_eff) * dt;
    }
    out.mu.push(mu);
    out.projection.push(Some(projection));
    out.guard.push(0.0);
    out.warm.push(last.map(|l| [l[0], wt[0], wt[1]]));
    out.models.push((model, ext));
    out.state.push(state);
    out.eta_rows.push([eta_step; 3]);
    out.res_rows.push([eta; 3]);
    out.patch.push(None);
}

/// The contact's effective normal mass 1/(J_n M⁻¹ J_nᵀ) (`normal_mass` in the shader); 0 when
/// neither body moves.
fn normal_mass(a: &Body64, b: &Body64, ra: DVec3, rb: DVec3, n: DVec3) -> f64 {
    let ang = |body: &Body64, r: DVec3| {
        let x = r.cross(n);
        x.dot(inv_inertia(body, x))
    };
    let d = a.inv_mass + b.inv_mass + ang(a, ra) + ang(b, rb);
    if d > 0.0 {
        1.0 / d
    } else {
        0.0
    }
}

/// B's twist relative to A at a patch block's centre: (spin about n, u, w).
fn patch_twist(c: &Contact, vel: &[DVec3], omega: &[DVec3]) -> Vec3 {
    let (n, u, w, ra, rb) = frame(c);
    let (a, b) = (c.ids[0] as usize, c.ids[1] as usize);
    let rel = (vel[b] + omega[b].cross(rb)) - (vel[a] + omega[a].cross(ra));
    [n.dot(omega[b] - omega[a]), u.dot(rel), w.dot(rel)]
}

/// The last total normal impulse of patch block i's points: the pair's records before it
/// with its normal, by their keys (`patch_last_normal` in `solve_assemble.wgsl`).
fn patch_last_normal(contacts: &[Contact], i: usize, ws: &WarmStart) -> f64 {
    let c = &contacts[i];
    let n = v3(c.n_gap);
    contacts[..i]
        .iter()
        .rev()
        .take_while(|p| p.ids[0] == c.ids[0] && p.ids[1] == c.ids[1])
        .filter(|p| v3(p.n_gap).dot(n) > 0.9999)
        .filter_map(|p| ws.keys.binary_search(&p.key()).ok())
        .map(|k| ws.record(k)[0])
        .sum()
}

/// A patch block's diagonal bound (spin, tangential), count-scaled as the bound: nᵀI⁻¹n
/// and the larger of the u, w rows' m⁻¹ + |r×t|²_I⁻¹ of both bodies (`patch_diag` in
/// `solve_assemble.wgsl`).
fn patch_block_diag(bodies: &[Body64], c: &Contact, nb: &dyn Fn(u32) -> f64) -> [f64; 2] {
    let (n, u, w, ra, rb) = frame(c);
    let diag = |b: u32, r: DVec3| {
        let body = &bodies[b as usize];
        let (cu, cw) = (r.cross(u), r.cross(w));
        let t = body.inv_mass
            + cu.dot(inv_inertia(body, cu))
                .max(cw.dot(inv_inertia(body, cw)));
        [nb(b) * n.dot(inv_inertia(body, n)), nb(b) * t]
    };
    let (da, db) = (diag(c.ids[0], ra), diag(c.ids[1], rb));
    [da[0] + db[0], da[1] + db[1]]
}

/// A patch block's rows (`assemble_patch` in `solve_assemble.wgsl`, the model
/// [`PatchModel::rows`]): diagonal compliance (E_spin, E_T, E_T), offset, guard radius,
/// per-lane η_k = 3/(3 B_kk + E_k) and the warm start −γ_n⁻ (c0 + c1 v*), projected.
#[allow(clippy::too_many_arguments)]
fn assemble_patch(
    out: &mut Assembled,
    bodies: &[Body64],
    contacts: &[Contact],
    i: usize,
    models: &[MaterialRow],
    dt: f64,
    ws: Option<WarmStart>,
    nb: &dyn Fn(u32) -> f64,
) {
    let c = &contacts[i];
    let (ma, mb) = rows::contact_materials(c.ids[3]);
    let m = |k: usize| models[k.min(models.len() - 1)];
    let (_, s0, s1, s2) = rows::pair_model(m(ma), m(mb));
    let ext = rows::pair_ext(m(ma), m(mb));
    let model = PatchModel {
        sigma: [s0, s1, s2],
        mu_s: ext[0],
        v_s: ext[1],
        mu_c: c.ra[3] as f64,
        r: c.rb[3] as f64,
        visc: c.n_gap[3] as f64,
    };
    let vel: Vec<DVec3> = bodies.iter().map(|b| b.vel).collect();
    let omega: Vec<DVec3> = bodies.iter().map(|b| b.omega).collect();
    let v = patch_twist(c, &vel, &omega);
    let last = ws.and_then(|w| w.keys.binary_search(&c.key()).ok().map(|k| w.record(k)));
    let gn = ws.map_or(0.0, |w| patch_last_normal(contacts, i, &w));
    let pr = model.rows(last, gn, v, dt);
    let bd = patch_block_diag(bodies, c, nb);
    let live = bd[0] + bd[1] > 0.0 && gn > 0.0;
    let eta = [0, 1].map(|k| {
        if live {
            3.0 / (3.0 * bd[k] + pr.e[k])
        } else {
            0.0
        }
    });
    out.p.push(add(v, pr.offset));
    out.eta.push(eta[0]);
    out.eta_rows.push([eta[0], eta[1], eta[1]]);
    out.res_rows.push([eta[0], eta[1], eta[1]]);
    out.compliance.push([pr.e[0], pr.e[1], pr.e[1]]);
    out.mu.push(0.0);
    out.projection.push(None);
    out.guard.push(pr.radius);
    out.warm
        .push(Some(project_patch(pr.warm, pr.radius, model.r)));
    out.models
        .push(((rows::MODEL_LUGRE_REDUCED, s0, s1, s2), ext));
    out.state.push([0.0; 2]); // its state is in `patch`
    out.patch.push(Some((model, pr)));
}

/// A lugre_patch block's rows (`assemble_dist_patch` in `solve_assemble.wgsl`): from the
/// patch stage's affine sums per unit normal load (`patch::stage`), the full symmetric
/// compliance E = (γ_n⁻ C)⁻¹, offset C⁻¹ c0, guard radius, per-lane η (u and w share the
/// smaller) and the warm start −γ_n⁻ (C v* + c0), projected.
#[allow(clippy::too_many_arguments)]
fn assemble_dist_patch(
    out: &mut Assembled,
    bodies: &[Body64],
    contacts: &[Contact],
    i: usize,
    models: &[MaterialRow],
    ws: Option<WarmStart>,
    s: [f64; 7],
    nb: &dyn Fn(u32) -> f64,
) {
    let c = &contacts[i];
    let (ma, mb) = rows::contact_materials(c.ids[3]);
    let m = |k: usize| models[k.min(models.len() - 1)];
    let (_, s0, s1, s2) = rows::pair_model(m(ma), m(mb));
    let ext = rows::pair_ext(m(ma), m(mb));
    let vel: Vec<DVec3> = bodies.iter().map(|b| b.vel).collect();
    let omega: Vec<DVec3> = bodies.iter().map(|b| b.omega).collect();
    let v = patch_twist(c, &vel, &omega);
    let gn = ws.map_or(0.0, |w| patch_last_normal(contacts, i, &w));
    let r = c.rb[3] as f64;
    let aff = crate::patch::cpu::affine_from_sums(&s, 1.0);
    let [bs, bt] = patch_block_diag(bodies, c, nb);
    let bd = [bs, bt, bt];
    let rows = (bd[0] + bd[1] > 0.0)
        .then(|| crate::patch::couple::distributed_rows(&aff, gn, v, bd))
        .flatten();
    let model = ((rows::MODEL_LUGRE_PATCH, s0, s1, s2), ext);
    out.mu.push(0.0);
    out.projection.push(None);
    out.models.push(model);
    out.state.push([0.0; 2]);
    out.patch.push(None);
    out.dist_r.pop();
    out.dist_r.push(Some(r));
    let Some(dr) = rows else {
        out.p.push(v);
        out.eta.push(0.0);
        out.eta_rows.push([0.0; 3]);
        out.res_rows.push([0.0; 3]);
        out.compliance.push([0.0; 3]);
        out.guard.push(0.0);
        out.warm.push(Some([0.0; 3]));
        return;
    };
    let slip = (r * r * v[0] * v[0] + v[1] * v[1] + v[2] * v[2]).sqrt();
    let radius = (2.0 * ext[0] + (s1 + s2) * slip) * gn;
    let eta_t = dr.eta[1].min(dr.eta[2]);
    out.p.push(add(v, dr.offset));
    out.eta.push(dr.eta[0]);
    out.eta_rows.push([dr.eta[0], eta_t, eta_t]);
    out.res_rows.push([dr.eta[0], eta_t, eta_t]);
    out.compliance.push([dr.e[0][0], dr.e[1][1], dr.e[2][2]]);
    out.coupling.pop();
    out.coupling.push([dr.e[0][1], dr.e[0][2], dr.e[1][2]]);
    out.guard.push(radius);
    out.warm.push(Some(project_patch(dr.warm, radius, r)));
}

/// A joint block's (p, η, per-row η) (`assemble_joint` in `shaders/solve_assemble.wgsl`):
/// η_k = 3/(k B_kk) over its k rows; inactive rows (and η) take the first active row's.
fn assemble_joint(
    bodies: &[Body64],
    c: &Contact,
    off: Vec3,
    nb: &dyn Fn(u32) -> f64,
) -> (Vec3, f64, Vec3) {
    let (n, u, w, ra, rb) = frame(c);
    let t = [n, u, w];
    let m = joint_mask(c.ids[3]);
    let ang = c.ids[3] & crate::model::joint::JOINT_ANGULAR != 0;
    let vel = |b: u32| {
        if b == crate::model::joint::WORLD {
            (DVec3::ZERO, DVec3::ZERO)
        } else {
            (bodies[b as usize].vel, bodies[b as usize].omega)
        }
    };
    let (va, vb) = (vel(c.ids[0]), vel(c.ids[1]));
    let rel = if ang {
        vb.1 - va.1
    } else {
        (vb.0 + vb.1.cross(rb)) - (va.0 + va.1.cross(ra))
    };
    let p = [0, 1, 2].map(|k| (off[k] + t[k].dot(rel)) * m[k]);
    let diag = |b: u32, r: DVec3| {
        if b == crate::model::joint::WORLD {
            return [0.0; 3];
        }
        let body = &bodies[b as usize];
        t.map(|tk| {
            let s = if ang {
                tk.dot(inv_inertia(body, tk))
            } else {
                let x = r.cross(tk);
                body.inv_mass + x.dot(inv_inertia(body, x))
            };
            nb(b) * s
        })
    };
    let (da, db) = (diag(c.ids[0], ra), diag(c.ids[1], rb));
    let rows: f64 = m.iter().sum();
    let e = [0, 1, 2].map(|k| {
        let d = da[k] + db[k];
        if m[k] != 0.0 && d > 0.0 {
            3.0 / (rows * d)
        } else {
            0.0
        }
    });
    let first = if m[0] != 0.0 {
        e[0]
    } else if m[1] != 0.0 {
        e[1]
    } else {
        e[2]
    };
    let eta = if first <= 0.0 { 0.0 } else { first };
    let ev = [0, 1, 2].map(|k| if k == 0 || m[k] == 0.0 { eta } else { e[k] });
    (p, eta, ev)
}

/// One cone problem's solver state: what the sweeps need and return.
pub(crate) struct Sweeps<'a> {
    pub(crate) schur: &'a Schur<'a>,
    pub(crate) settings: &'a SolverSettings,
    pub(crate) p: &'a mut [Vec3],
    /// With the exact cone, each contact's p_n before the offset (its offset s is p_n's
    /// excess over it), which Gauss–Seidel's visits move with the contact's slip
    /// ([`Sweeps::follow_slip`]).
    pub(crate) p_n: Option<&'a [f64]>,
    /// Each contact's μ (0 for joint and patch blocks).
    pub(crate) mu: &'a [f64],
    pub(crate) eta: &'a [f64],
    projection: &'a [Option<Projection>],
    guard: &'a [f64],
    /// Per-row scaling (a joint block's rows; `[η; 3]` for a contact).
    pub(crate) eta_rows: &'a [Vec3],
    /// The residual's per-row scaling (see `Assembled::res_rows`).
    res_rows: &'a [Vec3],
    /// Bounds (spin, roll) of the constraints that are a contact's rows 3–5.
    ext_bounds: &'a [Option<[f64; 2]>],
    /// The patch radius r of the constraints that are patch blocks.
    patch_r: &'a [Option<f64>],
    /// Constraints the tolerance counts (3 rows each): contacts and joint blocks, as on
    /// the GPU (rows 3–5 add to the residual, not to the count).
    n_tol: usize,
    pub(crate) history: &'a mut Vec<[f64; 4]>,
    pub(crate) iterations: &'a mut u32,
}

impl Sweeps<'_> {
    /// The exact cone in a Gauss–Seidel visit (`follow_slip` in the shader, which says why):
    /// contact i's offset from its slip in u, its velocity at the visit; p follows and u_n
    /// with it. Nothing for the relaxed cone, a joint or patch block or rows 3–5.
    pub(crate) fn follow_slip(&mut self, i: usize, u: &mut Vec3) {
        let Some(p_n) = self.p_n.filter(|p_n| i < p_n.len() && self.mu[i] > 0.0) else {
            return;
        };
        let u_n = u[0] - (self.p[i][0] - p_n[i]);
        let s = slip_offset(self.schur, i, self.mu[i], u_n, [u[1], u[2]], true);
        u[0] += p_n[i] + s - self.p[i][0];
        self.p[i][0] = p_n[i] + s;
    }

    /// Σ_k d_k²/η_k (`sq_over_eta` in the shader).
    fn sq_over_eta(&self, d: Vec3, i: usize) -> f64 {
        (0..3).map(|k| d[k] * d[k] / self.eta_rows[i][k]).sum()
    }

    pub(crate) fn project(&self, g: Vec3, i: usize) -> Vec3 {
        if let Some(b) = self.ext_bounds[i] {
            return rows::project_rolling(g, b);
        }
        if let Some(r) = self.patch_r[i] {
            return project_patch(g, self.guard[i], r);
        }
        match self.projection[i] {
            Some(set) => project_contact(g, set),
            None => {
                let c = &self.schur.contacts[i];
                project_joint(g, c.ids[3], c.ra[3] as f64)
            }
        }
    }

    fn grad(&self, ng: &[Vec3], i: usize) -> Vec3 {
        add(ng[i], self.p[i])
    }

    pub(crate) fn residual(&self, g: &[Vec3], ng: &[Vec3]) -> f64 {
        (0..g.len())
            .map(|i| {
                let r = residual_row(g[i], self.grad(ng, i), self.res_rows[i], |x| {
                    self.project(x, i)
                });
                dot(r, r)
            })
            .sum::<f64>()
            .sqrt()
    }

    /// Whether constraint i is a contact's normal row with a cone or disk (not a joint, patch
    /// or rolling block).
    pub(crate) fn is_plain_contact(&self, i: usize) -> bool {
        i < self.n_tol
            && self.patch_r[i].is_none()
            && !is_joint(&self.schur.contacts[i], self.schur.joints)
    }

    /// Constraint i's patch radius r when it is a patch block (its guard ball is
    /// ‖(γ_s / r, γ_u, γ_w)‖ ≤ ρ).
    pub(crate) fn patch_radius(&self, i: usize) -> Option<f64> {
        self.patch_r.get(i).copied().flatten()
    }

    /// Constraint i's set when it is a contact's Coulomb cone: (μ, the cohesive shift of
    /// its normal); `None` for the other sets (disk, box, joint rules, patch and rolling
    /// blocks).
    pub(crate) fn cone(&self, i: usize) -> Option<(f64, f64)> {
        self.projection[i].and_then(|set| set.as_cone())
    }

    /// Constraint i's per-row scaling of the residual (the tolerance's η).
    pub(crate) fn residual_rows(&self, i: usize) -> Vec3 {
        self.res_rows[i]
    }

    /// The records (contacts, joint and patch blocks): the first constraints; after them,
    /// with rolling or spinning resistance, record i's rows 3–5 are constraint records + i.
    pub(crate) fn records(&self) -> usize {
        self.n_tol
    }

    /// The tolerance as a 2-norm over the rows the tolerance counts (see [`Sweeps::run`]).
    pub(crate) fn tolerance_norm(&self) -> f64 {
        self.settings.tolerance as f64 * ((3 * self.n_tol.max(1)) as f64).sqrt()
    }

    /// APGD's initial Lipschitz estimate in the metric diag(1/η) (1 if not finite).
    fn lipschitz(&self, gamma: &[Vec3]) -> f64 {
        let eta = self.eta;
        let shifted: Vec<Vec3> = gamma.iter().map(|g| sub(*g, [1.0; 3])).collect();
        let nsh = self.schur.apply(&shifted);
        let live = || (0..gamma.len()).filter(|&i| eta[i] > 0.0);
        let e = self.eta_rows;
        let a: f64 = live()
            .map(|i| (0..3).map(|k| e[i][k] * nsh[i][k] * nsh[i][k]).sum::<f64>())
            .sum();
        let b: f64 = live().map(|i| self.sq_over_eta(shifted[i], i)).sum();
        let l = a.sqrt() / b.sqrt();
        if l > 0.0 && l < 3.0e38 {
            l
        } else {
            1.0
        }
    }

    /// Sweeps from γ (residual `res0`, N γ = `ngamma`) as the GPU runs them; returns the
    /// impulses (APGD: the best iterate), their residual and whether the tolerance was met.
    fn run(
        &mut self,
        mut gamma: Vec<Vec3>,
        mut ngamma: Vec<Vec3>,
        res0: f64,
    ) -> (Vec<Vec3>, f64, bool) {
        let settings = self.settings;
        let eta = self.eta;
        let nc = gamma.len();
        // The tolerance is an RMS per row (3 rows per contact); compared as a 2-norm here.
        let tol = settings.tolerance as f64 * ((3 * self.n_tol.max(1)) as f64).sqrt();
        let mut converged = res0 <= tol;
        let mut best_res = res0;
        let mut best = gamma.clone();
        let mut y = gamma.clone();
        let mut ny = ngamma.clone();
        let apgd = settings.kind == SolverKind::Apgd;
        let mut lip = 1.0;
        let mut theta: f64 = 1.0;
        if apgd && !converged {
            lip = self.lipschitz(&gamma);
        }
        for _ in 0..settings.max_iterations {
            if converged {
                break;
            }
            let trial: Vec<Vec3> = (0..nc)
                .map(|i| {
                    if eta[i] <= 0.0 {
                        return [0.0; 3];
                    }
                    if apgd {
                        let (e, gr) = (self.eta_rows[i], self.grad(&ny, i));
                        self.project([0, 1, 2].map(|k| y[i][k] - e[k] / lip * gr[k]), i)
                    } else {
                        let (e, gr) = (self.eta_rows[i], self.grad(&ngamma, i));
                        let w = settings.omega as f64;
                        self.project([0, 1, 2].map(|k| gamma[i][k] - w * e[k] * gr[k]), i)
                    }
                })
                .collect();
            let ntrial = self.schur.apply(&trial);
            *self.iterations += 1;
            let r = self.residual(&trial, &ntrial);
            if !apgd {
                best_res = r;
                self.history.push([r, r, 0.0, 1.0]);
                gamma = trial;
                ngamma = ntrial;
                converged = r <= tol;
                continue;
            }
            let mut dnd = 0.0;
            let mut dd = 0.0;
            let mut gdg = 0.0;
            for i in 0..nc {
                let d = sub(trial[i], y[i]);
                dnd += dot(d, sub(ntrial[i], ny[i]));
                if eta[i] > 0.0 {
                    dd += self.sq_over_eta(d, i);
                }
                gdg += dot(self.grad(&ny, i), sub(trial[i], gamma[i]));
            }
            if dnd > lip * dd {
                self.history.push([r, best_res, lip, 0.0]);
                lip *= 2.0;
                continue;
            }
            let mut th_new = 0.5 * (-theta * theta + theta * (theta * theta + 4.0).sqrt());
            let mut beta = theta * (1.0 - theta) / (theta * theta + th_new);
            if gdg > 0.0 {
                beta = 0.0;
                th_new = 1.0;
            }
            let better = r < best_res;
            if better {
                best_res = r;
            }
            self.history.push([r, best_res, lip, 1.0]);
            theta = th_new;
            lip *= 0.9;
            for i in 0..nc {
                y[i] = add(trial[i], scale(beta, sub(trial[i], gamma[i])));
                ny[i] = sub(scale(1.0 + beta, ntrial[i]), scale(beta, ngamma[i]));
                if better {
                    best[i] = trial[i];
                }
            }
            gamma = trial;
            ngamma = ntrial;
            converged = r <= tol;
        }
        (if apgd { best } else { gamma }, best_res, converged)
    }
}

/// The whole solve + velocity update, mirroring the GPU sweep for sweep. With the exact cone
/// (`crate::model::rows`), a sequence of cone problems whose normal offset is corrected by
/// s = μ‖u_T‖, u = Nγ + p, of the previous solution (the first from γ⁰), until no contact's s
/// moves by more than the tolerance or `max_outer` problems were solved.
pub fn solve(
    bodies: &[Body64],
    contacts: &[Contact],
    settings: &SolverSettings,
    dt: f64,
    warm: Option<WarmStart>,
) -> SolveOutput {
    solve_models(bodies, contacts, settings, dt, warm, &[])
}

/// [`solve`] with a per-material model table (`Solve::set_models` on the GPU).
pub fn solve_models(
    bodies: &[Body64],
    contacts: &[Contact],
    settings: &SolverSettings,
    dt: f64,
    warm: Option<WarmStart>,
    models: &[MaterialRow],
) -> SolveOutput {
    solve_all(bodies, contacts, settings, dt, warm, models, &[])
}

/// [`solve_models`] with lugre_patch blocks: `dist_sums[i]` is record i's affine sums per
/// unit normal load from the patch stage (`patch::stage::twin_prepare`), which the GPU's
/// stage writes into the solver's segments before the solve.
pub fn solve_with_patch_sums(
    bodies: &[Body64],
    contacts: &[Contact],
    settings: &SolverSettings,
    dt: f64,
    warm: Option<WarmStart>,
    models: &[MaterialRow],
    dist_sums: &[Option<[f64; 7]>],
) -> SolveOutput {
    let extra = Extra {
        models,
        dist_sums,
        ..Extra::default()
    };
    solve_with(bodies, contacts, settings, dt, warm, extra)
}

/// [`solve_models`] for contacts followed by joint blocks (the last `joint_offsets.len()`
/// records; offsets as `reference::joints::write_blocks` returns them).
pub fn solve_all(
    bodies: &[Body64],
    contacts: &[Contact],
    settings: &SolverSettings,
    dt: f64,
    warm: Option<WarmStart>,
    models: &[MaterialRow],
    joint_offsets: &[Vec3],
) -> SolveOutput {
    let extra = Extra {
        models,
        joint_offsets,
        ..Extra::default()
    };
    solve_with(bodies, contacts, settings, dt, warm, extra)
}

/// What a solve has besides its bodies and contacts ([`solve_with`]; all empty for plain
/// contacts).
#[derive(Clone, Copy, Default)]
pub struct Extra<'a> {
    /// The per-material model table.
    pub models: &'a [MaterialRow],
    /// Joint blocks: the last `joint_offsets.len()` records are joints (see [`solve_all`]).
    pub joint_offsets: &'a [Vec3],
    /// lugre_patch sums (see [`solve_with_patch_sums`]).
    pub dist_sums: &'a [Option<[f64; 7]>],
    /// APGD steps with projected Jacobi's count-scaled η instead of the plain diagonal, as
    /// before (`benches/precondition.rs` compares the two).
    pub counted_step: bool,
    /// Lees–Edwards: the flow axis (unit; zero without shear). A contact's `rb[3]` is then the
    /// flow velocity of B's image relative to B, added to B's velocity in the assembly.
    pub shear_flow: [f64; 3],
}

/// Sweeps of a cone problem other than the twin's projected Jacobi and APGD
/// (`reference::block_gs`): from γ (residual `res0`, (N + E)γ = `ngamma`) to the returned
/// impulses, their residual and whether the tolerance was met, recording each sweep in
/// `sweeps.history` and `sweeps.iterations` as [`Sweeps::run`] does.
pub(crate) trait SweepMethod {
    fn run(
        &self,
        sweeps: &mut Sweeps,
        gamma: Vec<Vec3>,
        ngamma: Vec<Vec3>,
        res0: f64,
    ) -> (Vec<Vec3>, f64, bool);
}

/// [`solve`] with everything a solve can have.
pub fn solve_with(
    bodies: &[Body64],
    contacts: &[Contact],
    settings: &SolverSettings,
    dt: f64,
    warm: Option<WarmStart>,
    extra: Extra,
) -> SolveOutput {
    solve_with_method(bodies, contacts, settings, dt, warm, extra, None)
}

/// [`solve_with`] whose cone problems are swept by `method` (None: `settings.kind`). The
/// assembly, warm start, exact cone's outer loop, velocity update and saved records are
/// the twin's.
pub(crate) fn solve_with_method(
    bodies: &[Body64],
    contacts: &[Contact],
    settings: &SolverSettings,
    dt: f64,
    warm: Option<WarmStart>,
    extra: Extra,
    method: Option<&dyn SweepMethod>,
) -> SolveOutput {
    let Extra {
        models,
        joint_offsets,
        dist_sums,
        counted_step,
        shear_flow,
    } = extra;
    let rigid = rows::RigidOffset {
        v_recover: settings.recovery_speed as f64,
        slop: settings.slop as f64,
        beta: settings.stabilisation as f64,
    };
    let mut asm = assemble_rows(
        bodies,
        contacts,
        dt,
        rigid,
        models,
        warm.map(|w| (w, settings.warm_start)),
        joint_offsets,
        dist_sums,
        settings.kind == SolverKind::Apgd && !counted_step,
        DVec3::from_array(shear_flow),
    );
    let n_tol = contacts.len();
    let mut rs = RowSet::new(&mut asm, contacts, !joint_offsets.is_empty());
    let gamma = initial_impulses(&rs, &asm, settings, n_tol);
    // The Painlevé diagnostic is about rigid tangential rows (E_T = 0, no patch block).
    let compliant_t: Vec<bool> = (0..rs.contacts.len())
        .map(|i| rs.compliance[i][1] > 0.0 || rs.patch_r[i].is_some())
        .collect();
    let schur = Schur::new(bodies, &rs.contacts)
        .with_compliance(std::mem::take(&mut rs.compliance))
        .with_coupling(std::mem::take(&mut rs.coupling))
        .with_joints(rs.joints)
        .with_patches(rows::has_patches(models));
    let max_penetration = rs
        .contacts
        .iter()
        .map(|c| (-c.n_gap[3] as f64).max(0.0))
        .fold(0.0, f64::max);
    let mut p = std::mem::take(&mut rs.p);
    let solved = solve_cone_problems(&schur, &rs, &mut p, settings, gamma, n_tol, method);
    let (vel, omega): (Vec<DVec3>, Vec<DVec3>) =
        post_velocities(bodies, &schur.delta_v(&solved.gamma))
            .into_iter()
            .unzip();
    let saved = saved_records(&asm, &rs, &solved.gamma, &vel, &omega, dt, n_tol);
    let mut gamma = solved.gamma;
    let gamma_rolling = gamma[n_tol..].to_vec();
    let tol = settings.tolerance as f64;
    let painleve = painleve_rigid(
        bodies,
        &rs.contacts,
        &p,
        &rs.eta,
        tol,
        &compliant_t,
        rs.joints,
    );
    gamma.truncate(n_tol);
    p.truncate(n_tol);
    rs.eta.truncate(n_tol);
    SolveOutput {
        saved,
        gamma_rolling,
        history: solved.history,
        vel,
        omega,
        iterations: solved.iterations,
        residual: solved.residual,
        residual0: solved.res0,
        max_penetration,
        converged: solved.converged,
        painleve,
        gamma,
        p,
        eta: rs.eta,
        outer: solved.outer,
    }
}

/// The constraints the sweeps see: every record (contact, joint block, patch block), then,
/// with rolling or spinning resistance, each contact's rows 3–5 as an angular block
/// [0; ±(n, u, w)] of its own (the GPU keeps them in extension segments at the contact's
/// index; the rows and sums are the same).
struct RowSet {
    contacts: Vec<Contact>,
    p: Vec<Vec3>,
    eta: Vec<f64>,
    eta_rows: Vec<Vec3>,
    res_rows: Vec<Vec3>,
    compliance: Vec<Vec3>,
    mu: Vec<f64>,
    projection: Vec<Option<Projection>>,
    guard: Vec<f64>,
    ext_bounds: Vec<Option<[f64; 2]>>,
    patch_r: Vec<Option<f64>>,
    coupling: Vec<Vec3>,
    /// Whether some constraint is a joint-like block (joints, or rows 3–5).
    joints: bool,
}

impl RowSet {
    /// Takes the rows' vectors out of `asm` (its warm start, models, states and patch rows
    /// stay for the impulses' start and the saved records).
    fn new(asm: &mut Assembled, contacts: &[Contact], joints: bool) -> Self {
        let nc = contacts.len();
        let mut rs = RowSet {
            contacts: contacts.to_vec(),
            p: std::mem::take(&mut asm.p),
            eta: std::mem::take(&mut asm.eta),
            eta_rows: std::mem::take(&mut asm.eta_rows),
            res_rows: std::mem::take(&mut asm.res_rows),
            compliance: std::mem::take(&mut asm.compliance),
            mu: std::mem::take(&mut asm.mu),
            projection: std::mem::take(&mut asm.projection),
            guard: std::mem::take(&mut asm.guard),
            ext_bounds: vec![None; nc],
            patch_r: asm
                .patch
                .iter()
                .zip(&asm.dist_r)
                .map(|(x, d)| x.map(|(m, _)| m.r).or(*d))
                .collect(),
            coupling: std::mem::take(&mut asm.coupling),
            joints: joints || !asm.ext.is_empty(),
        };
        for (k, x) in asm.ext.iter().enumerate() {
            let mut v = contacts[k];
            v.ids = [
                v.ids[0],
                v.ids[1],
                k as u32,
                crate::model::joint::JOINT_BIT | crate::model::joint::JOINT_ANGULAR | 7,
            ];
            rs.contacts.push(v);
            rs.p.push(x.p);
            rs.eta.push(x.eta);
            rs.eta_rows.push([x.eta; 3]);
            rs.res_rows.push([x.eta; 3]);
            rs.compliance.push([0.0; 3]);
            rs.mu.push(0.0);
            rs.projection.push(None);
            rs.guard.push(0.0);
            rs.ext_bounds.push(Some(x.bounds));
            rs.patch_r.push(None);
            rs.coupling.push([0.0; 3]);
        }
        rs
    }
}

/// γ⁰: the previous record found by key, projected on the contact's cone (warm start on);
/// a patch block starts from its model's impulse either way (as `assemble_patch` writes it).
fn initial_impulses(
    rs: &RowSet,
    asm: &Assembled,
    settings: &SolverSettings,
    n_tol: usize,
) -> Vec<Vec3> {
    let mut gamma = vec![[0.0; 3]; rs.contacts.len()];
    for (i, gi) in gamma.iter_mut().enumerate().take(n_tol) {
        let Some(g) = asm.warm[i] else {
            continue;
        };
        let c = &rs.contacts[i];
        *gi = if rs.patch_r[i].is_some() {
            g
        } else if !settings.warm_start {
            continue;
        } else if let Some(set) = rs.projection[i] {
            project_contact(g, set)
        } else {
            project_joint(g, c.ids[3], c.ra[3] as f64)
        };
    }
    gamma
}

/// What the sweeps of a solve's cone problems leave.
struct Solved {
    gamma: Vec<Vec3>,
    history: Vec<[f64; 4]>,
    iterations: u32,
    res0: f64,
    residual: f64,
    converged: bool,
    outer: u32,
}

/// The exact cone's offset μ‖u_T‖ for the slip left once a still approaching contact
/// (u_n < 0) has taken the normal impulse −u_n / N_nn that stops it and that impulse's
/// friction μ (N_TT / N_nn)(−u_n) off the slip (the shader's `slip_offset`, which says why).
fn slip_offset(schur: &Schur, i: usize, mu: f64, u_n: f64, u_t: [f64; 2], cone: bool) -> f64 {
    let slip = (u_t[0] * u_t[0] + u_t[1] * u_t[1]).sqrt();
    if !cone || slip == 0.0 || mu == 0.0 {
        return 0.0;
    }
    let (n, u, w, _, _) = schur.frames[i];
    let f = (u_t[0] * u + u_t[1] * w) / slip;
    let n_nn = schur.inverse_mass_along(i, n);
    let k = if n_nn > 0.0 {
        schur.inverse_mass_along(i, f) / n_nn
    } else {
        0.0
    };
    mu * (slip - mu * k * (-u_n).max(0.0)).max(0.0)
}

/// The cone problems of one solve from γ⁰: one with the relaxed cone; with the exact cone up
/// to `max_outer`, each with the normal offset corrected by μ‖u_T‖ of the γ before it (the
/// offset ends up in `p`, the rows' free velocities).
fn solve_cone_problems(
    schur: &Schur,
    rs: &RowSet,
    p: &mut [Vec3],
    settings: &SolverSettings,
    mut gamma: Vec<Vec3>,
    n_tol: usize,
    method: Option<&dyn SweepMethod>,
) -> Solved {
    let nc = rs.contacts.len();
    let p_n: Vec<f64> = p.iter().map(|q| q[0]).collect();
    let exact = settings.cone == Cone::Exact;
    let problems = if exact { settings.max_outer.max(1) } else { 1 };
    let mut history = Vec::new();
    let mut iterations = 0;
    let mut s = vec![0.0; nc];
    let (mut res0, mut residual, mut converged, mut outer) = (0.0, 0.0, false, 0);
    for k in 0..problems {
        let ngamma = schur.apply(&gamma);
        if exact {
            let s_new: Vec<f64> = (0..nc)
                .map(|i| {
                    let u = add(ngamma[i], p[i]);
                    let u_n = ngamma[i][0] + p_n[i];
                    slip_offset(schur, i, rs.mu[i], u_n, [u[1], u[2]], rs.eta[i] > 0.0)
                })
                .collect();
            // Per contact in m/s, like the shader's `outer_offset` (not a norm over contacts).
            let s_tol = settings.tolerance as f64;
            let moved = (0..nc).filter(|&i| (s_new[i] - s[i]).abs() > s_tol).count();
            s = s_new;
            for i in 0..nc {
                p[i][0] = p_n[i] + s[i];
            }
            // The fixed point (γ solves the problem with this offset to within the tolerance),
            // or the last problem hit the sweep cap (its error hides a better offset; the
            // warm start carries this one to the next step).
            if k > 0 && (moved == 0 || !converged) {
                break;
            }
            outer = k + 1;
        }
        let mut sw = Sweeps {
            schur,
            settings,
            p: &mut *p,
            p_n: exact.then_some(&p_n[..]),
            mu: &rs.mu,
            eta: &rs.eta,
            projection: &rs.projection,
            guard: &rs.guard,
            eta_rows: &rs.eta_rows,
            res_rows: &rs.res_rows,
            ext_bounds: &rs.ext_bounds,
            patch_r: &rs.patch_r,
            n_tol,
            history: &mut history,
            iterations: &mut iterations,
        };
        let r = sw.residual(&gamma, &ngamma);
        if k == 0 {
            res0 = r;
        }
        let gauss = super::gauss_seidel::ColouredGaussSeidel;
        let method = method
            .or((settings.kind == SolverKind::GaussSeidel).then_some(&gauss as &dyn SweepMethod));
        (gamma, residual, converged) = match method {
            Some(m) => m.run(&mut sw, gamma, ngamma, r),
            None => sw.run(gamma, ngamma, r),
        };
        if exact {
            // The offsets Gauss–Seidel's visits left (the shader's aux.y).
            for i in 0..nc {
                s[i] = p[i][0] - p_n[i];
            }
        }
    }
    Solved {
        gamma,
        history,
        iterations,
        res0,
        residual,
        converged,
        outer,
    }
}

/// v⁺ = v* + M⁻¹ D γ (`dv`, per body) for the dynamic bodies; the others keep their
/// prescribed motion. Shared by the CCP twin and the LCP paths.
pub fn post_velocities(bodies: &[Body64], dv: &[(DVec3, DVec3)]) -> Vec<(DVec3, DVec3)> {
    bodies
        .iter()
        .zip(dv)
        .map(|(b, d)| {
            if b.motion == crate::model::body::MOTION_DYNAMIC {
                (b.vel + d.0, b.omega + d.1)
            } else {
                (b.vel, b.omega)
            }
        })
        .collect()
}

/// Each record's saved row for the next step's warm start and model state (`save_warm`).
fn saved_records(
    asm: &Assembled,
    rs: &RowSet,
    gamma: &[Vec3],
    vel: &[DVec3],
    omega: &[DVec3],
    dt: f64,
    n_tol: usize,
) -> Vec<[f64; 4]> {
    (0..n_tol)
        .map(|i| {
            let c = &rs.contacts[i];
            let (model, ext) = asm.models[i];
            if is_joint(c, rs.joints) {
                // A joint block saves its impulse only (no model state; A may be the world).
                return rows::saved_record(model, ext, 0.0, gamma[i], [0.0; 2], [0.0; 2], dt);
            }
            if let Some((m, pr)) = asm.patch[i] {
                return m.saved(pr.z, pr.a, patch_twist(c, vel, omega), dt);
            }
            if asm.dist_r[i].is_some() {
                // The cells are the state (the patch stage carries them); γ for the record.
                return [gamma[i][0], gamma[i][1], gamma[i][2], 0.0];
            }
            let (_, u, w, ra, rb) = frame(c);
            let (a, b) = (c.ids[0] as usize, c.ids[1] as usize);
            let rel = (vel[b] + omega[b].cross(rb)) - (vel[a] + omega[a].cross(ra));
            let vt = [u.dot(rel), w.dot(rel)];
            rows::saved_record(model, ext, rs.mu[i], gamma[i], asm.state[i], vt, dt)
        })
        .collect()
}

/// Painlevé diagnostic (Song et al. 2001; `painleve` in `shaders/solve_iterate.wgsl`): the contacts
/// sliding before the solve (free tangential velocity v_T = (p_u, p_w) above `tol`) whose
/// A = J_N M⁻¹ (J_N + μ J_f̂)ᵀ ≤ 0, with f̂ = −v_T/‖v_T‖ the direction of their friction.
pub fn painleve_count(
    bodies: &[Body64],
    contacts: &[Contact],
    p: &[Vec3],
    eta: &[f64],
    tol: f64,
    joints: bool,
) -> u32 {
    painleve_rigid(bodies, contacts, p, eta, tol, &[], joints)
}

/// [`painleve_count`] skipping the contacts marked in `skip` (tangentially compliant ones).
fn painleve_rigid(
    bodies: &[Body64],
    contacts: &[Contact],
    p: &[Vec3],
    eta: &[f64],
    tol: f64,
    skip: &[bool],
    joints: bool,
) -> u32 {
    let mut count = 0;
    for (i, c) in contacts.iter().enumerate() {
        if is_joint(c, joints) {
            continue;
        }
        let (mu, q) = (c.ra[3] as f64, p[i]);
        let t = (q[1] * q[1] + q[2] * q[2]).sqrt();
        if !(mu > 0.0 && eta[i] > 0.0 && t > tol) || skip.get(i) == Some(&true) {
            continue;
        }
        let (n, u, w, ra, rb) = frame(c);
        let pdir = n - mu * (q[1] * u + q[2] * w) / t;
        let (a, b) = (&bodies[c.ids[0] as usize], &bodies[c.ids[1] as usize]);
        // The normal velocity change per unit normal impulse of direction P = n + μ f̂.
        let share =
            body_inverse_mass_between(a, ra, n, pdir) + body_inverse_mass_between(b, rb, n, pdir);
        if share <= 0.0 {
            count += 1;
        }
    }
    count
}

/// Body b's velocity change along `a` per unit impulse along `d` at the lever `r`:
/// m⁻¹ a·d + (r × a)·I⁻¹(r × d); a body without inverse mass counts nothing
/// (`body_inverse_mass_between` in `shaders/common/solve_exact.wgsl`).
fn body_inverse_mass_between(b: &Body64, r: DVec3, a: DVec3, d: DVec3) -> f64 {
    if b.inv_mass == 0.0 {
        return 0.0;
    }
    b.inv_mass * a.dot(d) + r.cross(a).dot(inv_inertia(b, r.cross(d)))
}

/// The residual (same definition as the solver's) of arbitrary impulses.
pub fn residual(
    bodies: &[Body64],
    contacts: &[Contact],
    gamma: &[Vec3],
    dt: f64,
    recovery_speed: f64,
) -> f64 {
    let (p, eta) = assemble(bodies, contacts, dt, recovery_speed);
    let ng = Schur::new(bodies, contacts).apply(gamma);
    (0..contacts.len())
        .map(|i| {
            let r = residual_vec(gamma[i], add(ng[i], p[i]), eta[i], contacts[i].ra[3] as f64);
            dot(r, r)
        })
        .sum::<f64>()
        .sqrt()
}
