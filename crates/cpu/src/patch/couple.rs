//! The reduced planar LuGre model as solver rows (book: Contact patches and "Models as rows"): a material
//! with friction model `lugre_reduced` gives every face–face box contact (box on plane, box
//! on a box container's wall or floor, box on solid box, box on box) a **patch record**
//! besides its ≤ 4 point contacts, and the patch carries the contact's friction.
//!
//! # The patch record (book: Contact patches)
//!
//! Emitted by collision (`shaders/common/collide.wgsl`, f64 twin [`patch_geom`] and
//! `reference::patch_collide`) right after the pair's point contacts, one per body pair:
//! `n_gap = (n, visc)`, `ra = (c − x_A, μ)`, `rb = (c − x_B, r)`,
//! `ids = (A, B, PATCH_FEATURE, materials)`. The patch is the convex polygon of the manifold's
//! points (≤ 4: the corners of the smaller face for box on plane; the clipped polygon's
//! extreme points for box on box) under uniform pressure: `c` its area centroid (= centre
//! of pressure), `r = (1/A) ∫ |ρ − c| dA` the limit-surface radius (τ_max = μ f_N r, exact
//! per edge triangle: (d³/3)|F(t_b/d) − F(t_a/d)|, F(x) = (x√(1+x²) + asinh x)/2), `visc =
//! (1/A) ∫ |ρ − c|² dA / r²` the viscous scale of the spin row (Arslan Waltersson & Karayiannidis eq. 29). Its feature
//! `PATCH_FEATURE` = u32::MAX sorts it after the pair's points, so the contact list stays
//! sorted by key and the existing CSR gathers it; the point contacts of a patch pair get
//! μ = 0 (normal rows only). Edge and vertex contacts of a patch material (fewer than 3
//! points, or a degenerate polygon) and sphere contacts keep Coulomb friction with the
//! material's μ: that is the documented fallback.
//!
//! # The rows
//!
//! The block has three rows in the `gam` lanes (x, y, z) = (spin about n, u, w at c): the
//! gather applies γ_x as a torque about n and (γ_y, γ_z) as a force at c. The reduced model
//! with the ellipsoid limit surface (Arslan Waltersson & Karayiannidis §V with the ellipsoid option, β = 1, Stribeck
//! exponent 2): twist v = (ω_n, v_u, v_w) of B relative to A at c, A v = (r² ω_n, v_u, v_w),
//! ‖v‖_A = √(v_u² + v_w² + r² ω_n²), the bristle state z (3 lanes, spin lane in m²),
//! κ = σ0 s⁻/g(s⁻) frozen at the last slip s⁻, z⁺ = a (z + dt A v⁺), a = 1/(1 + dt κ),
//! l = σ0 z⁺ + σ1 (z⁺ − z)/dt + σ2 diag(visc, 1, 1) A v⁺ = c0 + c1 ∘ v⁺ per unit normal load:
//! `c1_d = ((σ0 + σ1/dt) a dt + σ2 vis_d) S_d` (S = (r², 1, 1), vis = (visc, 1, 1)),
//! `c0_d = ((σ0 + σ1/dt) a − σ1/dt) z_d`. The impulse is γ = −γ_n⁻ l with γ_n⁻ the last
//! step's total normal impulse of the patch's points (found by their keys, lagged like the
//! point LuGre disk): the compliance block is diagonal, E_d = 1/(γ_n⁻ c1_d) (aux.z on the
//! spin lane, aux.w on u and w), the offset c0_d / c1_d. At a steady slide
//! l = g(‖v‖) A v/‖v‖ plus the σ2 term: a pure slide gives μ f_N, a pure spin μ f_N r. Projection: the guard ball
//! ‖(γ_x / r, γ_y, γ_z)‖ ≤ (2 μ_s + (σ1 + σ2) ‖v*‖_A) γ_n⁻ (as the point LuGre disk).
//! Saved record (by the patch's key, so checkpoints carry it): (z⁺, s⁺) with
//! z⁺ = a(s⁻) (z + dt A v⁺) — the state the step's force used (the point LuGre saves with
//! a(s⁺); for the patch that jump in σ1 (z⁺ − z)/dt cost a decelerating slide 4 % of its
//! friction at dt = 1e-3) — and s⁺ = ‖v⁺‖_A from the post-solve velocities. Kept during the
//! solve: state segment (z, a), aux = (guard radius, η of u and w, E_spin, E_T); the spin
//! lane's η in rhs.w (per-lane scaling η_k = 3/(3 B_kk + E_k): the spin and sliding lanes
//! differ by ~r² in scale and compliance, one η for both converged ~100× slower).

use glam::{DVec2, DVec3};

/// Feature id of a patch record (sorts after every point contact of its pair).
pub const PATCH_FEATURE: u32 = u32::MAX;
/// Feature id of a `lugre_patch` (distributed) record: a pair with a material of that model.
pub const PATCH_FEATURE_DIST: u32 = u32::MAX - 1;

/// The feature of a patch record from the pair's material patch kinds (1 reduced, 2
/// distributed; the larger wins).
pub fn patch_feature(ka: u8, kb: u8) -> u32 {
    if ka.max(kb) >= 2 {
        PATCH_FEATURE_DIST
    } else {
        PATCH_FEATURE
    }
}

/// A patch from a face–face manifold, uniform pressure over the polygon of its points.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PatchGeom {
    /// Area centroid (world).
    pub centre: DVec3,
    /// Limit-surface radius: mean distance from the centre.
    pub r: f64,
    /// Mean squared distance / r².
    pub visc: f64,
    pub area: f64,
}

/// ∫ |ρ| dA over the triangle (0, a, b) (see the module docs).
fn tri_mean_dist(a: DVec2, b: DVec2) -> f64 {
    let e = b - a;
    let l = e.length();
    if l <= 0.0 {
        return 0.0;
    }
    let d = a.perp_dot(e).abs() / l;
    if d <= 0.0 {
        return 0.0;
    }
    let f = |x: f64| 0.5 * (x * (1.0 + x * x).sqrt() + x.asinh());
    let (xa, xb) = (a.dot(e) / (l * d), b.dot(e) / (l * d));
    d * d * d / 3.0 * (f(xb) - f(xa)).abs()
}

/// The patch of a manifold with normal `n` and points `pts` (≥ 3, ≤ 4), or None when the
/// polygon is degenerate (area ≤ 1e-4 × its squared extent). Same steps as `patch_geom`
/// in `shaders/common/collide.wgsl`.
pub fn patch_geom(n: DVec3, pts: &[DVec3]) -> Option<PatchGeom> {
    let k = pts.len();
    if k < 3 {
        return None;
    }
    let (u, w) = crate::model::contact::tangent_basis(n);
    let mean = pts.iter().copied().sum::<DVec3>() / k as f64;
    let mut q: Vec<(f64, DVec2)> = pts
        .iter()
        .map(|p| {
            let d = *p - mean;
            let v = DVec2::new(d.dot(u), d.dot(w));
            (v.y.atan2(v.x), v)
        })
        .collect();
    let ext = q
        .iter()
        .map(|(_, v)| v.length_squared())
        .fold(0.0, f64::max);
    // Insertion sort by angle (stable, as the shader's).
    for i in 1..k {
        let mut j = i;
        while j > 0 && q[j - 1].0 > q[j].0 {
            q.swap(j, j - 1);
            j -= 1;
        }
    }
    let q: Vec<DVec2> = q.into_iter().map(|(_, v)| v).collect();
    let (mut area, mut c) = (0.0, DVec2::ZERO);
    for i in 1..k - 1 {
        let a = 0.5 * (q[i] - q[0]).perp_dot(q[i + 1] - q[0]);
        area += a;
        c += a * (q[0] + q[i] + q[i + 1]) / 3.0;
    }
    if area.is_nan() || area <= 1e-4 * ext {
        return None;
    }
    c /= area;
    let (mut md, mut polar) = (0.0, 0.0);
    for i in 0..k {
        let (a, b) = (q[i] - c, q[(i + 1) % k] - c);
        md += tri_mean_dist(a, b);
        polar += a.perp_dot(b).abs() / 12.0 * (a.dot(a) + b.dot(b) + a.dot(b));
    }
    let r = md / area;
    Some(PatchGeom {
        centre: mean + c.x * u + c.y * w,
        r,
        visc: polar / area / (r * r),
        area,
    })
}

/// The rows of a patch block (lanes spin, u, w): compliances (spin, tangential), offsets,
/// the guard radius, the state kept at assembly (z) and the warm start.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PatchRows {
    pub e: [f64; 2],
    pub offset: [f64; 3],
    pub radius: f64,
    pub z: [f64; 3],
    /// a = 1/(1 + dt κ(s⁻)), kept for the save; −1 for a new patch (no saved record).
    pub a: f64,
    pub warm: [f64; 3],
}

/// Parameters of the pair: (σ0, σ1, σ2), (μ_s, v_s), μ_c, the patch's r and visc.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PatchModel {
    pub sigma: [f64; 3],
    pub mu_s: f64,
    pub v_s: f64,
    pub mu_c: f64,
    pub r: f64,
    pub visc: f64,
}

impl PatchModel {
    fn s(&self) -> [f64; 3] {
        [self.r * self.r, 1.0, 1.0]
    }

    /// ‖v‖_A = √(v_u² + v_w² + r² ω²).
    pub fn slip(&self, v: [f64; 3]) -> f64 {
        (self.r * self.r * v[0] * v[0] + v[1] * v[1] + v[2] * v[2]).sqrt()
    }

    /// a = g(s)/(g(s) + dt σ0 s) = 1/(1 + dt κ).
    fn a(&self, s: f64, dt: f64) -> f64 {
        let g = crate::model::rows::stribeck(self.mu_c, self.mu_s, self.v_s, s);
        let den = g + dt * self.sigma[0] * s;
        if den > 0.0 {
            g / den
        } else {
            1.0
        }
    }

    /// The block's rows from the saved record `last` = (z, s⁻) (None: a new patch), the
    /// total last normal impulse `gn` and the free twist `v` (spin, u, w).
    pub fn rows(&self, last: Option<[f64; 4]>, gn: f64, v: [f64; 3], dt: f64) -> PatchRows {
        let found = last.is_some();
        let last = last.unwrap_or([0.0; 4]);
        let [s0, s1, s2] = self.sigma;
        let a = self.a(last[3], dt);
        let a_kept = if found { a } else { -1.0 };
        let big = s0 + s1 / dt;
        let vis = [self.visc, 1.0, 1.0];
        let sc = self.s();
        let z = [last[0], last[1], last[2]];
        let c1 = [0, 1, 2].map(|d| (big * a * dt + s2 * vis[d]) * sc[d]);
        let c0 = z.map(|x| (big * a - s1 / dt) * x);
        if gn <= 0.0 {
            return PatchRows {
                e: [0.0; 2],
                offset: [0.0; 3],
                radius: 0.0,
                z,
                a: a_kept,
                warm: [0.0; 3],
            };
        }
        PatchRows {
            e: [1.0 / (gn * c1[0]), 1.0 / (gn * c1[1])],
            offset: [0, 1, 2].map(|d| c0[d] / c1[d]),
            radius: (2.0 * self.mu_s + (s1 + s2) * self.slip(v)) * gn,
            z,
            a: a_kept,
            warm: [0, 1, 2].map(|d| -gn * (c0[d] + c1[d] * v[d])),
        }
    }

    /// The record saved after the solve from the kept state `z`, the step's rate factor
    /// `a` = a(s⁻) ([`PatchRows::a`]) and the post-solve twist: z⁺ = a (z + dt A v⁺), the
    /// state the step's force used.
    pub fn saved(&self, z: [f64; 3], a: f64, v: [f64; 3], dt: f64) -> [f64; 4] {
        // A new patch (a < 0: no s⁻ known) relaxes with a(s⁺).
        let a = if a < 0.0 { self.a(self.slip(v), dt) } else { a };
        let sc = self.s();
        let zn = [0, 1, 2].map(|d| a * (z[d] + dt * sc[d] * v[d]));
        [zn[0], zn[1], zn[2], self.slip(v)]
    }
}

/// The rows of a distributed (`lugre_patch`) block, lanes (spin, u, w) as [`PatchRows`]
/// (book: Contact patches; the f64 form the assembly will use — not yet wired into the loop).
/// The cells' implicit step with rate factors frozen at the last twist gives the impulse
/// γ = γ_n⁻ w(v⁺) = −γ_n⁻ (C v⁺ + c0), with C = P K Pᵀ, c0 = P k0 the affine wrench per
/// unit normal load ([`super::DistributedCpu::affine`], on the GPU the engine's
/// `DistributedGpu::affine_at`; patch axes x = u, y = w, torque about n at the lane point) permuted to the lanes. The row v⁺ + E γ + offset = 0 then
/// has the full symmetric compliance E = (γ_n⁻ C)⁻¹ and offset C⁻¹ c0 (C couples spin and
/// slide off the centre of pressure: no diagonal form is exact).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DistributedRows {
    pub e: [[f64; 3]; 3],
    pub offset: [f64; 3],
    /// Per-lane η_k = 3/(3 B_kk + Σ_j |E_kj|): with N ≤ 3 diag(B) for the PSD block and
    /// E ≤ diag(Σ_j |E_kj|) (Gershgorin), N + E ≤ diag(3/η) as the solver needs.
    pub eta: [f64; 3],
    /// −γ_n⁻ (C v + c0) at the free twist v.
    pub warm: [f64; 3],
}

/// [`DistributedRows`] from the per-unit-load affine wrench `aff`, the last total normal
/// impulse `gn`, the free twist `v` and the block's diagonal bound `bd` (lanes spin, u, w);
/// None when gn ≤ 0 or C is singular (no friction: the block is dead).
pub fn distributed_rows(
    aff: &super::AffineWrench,
    gn: f64,
    v: [f64; 3],
    bd: [f64; 3],
) -> Option<DistributedRows> {
    const P: [usize; 3] = [2, 0, 1]; // lane ← patch index: spin ← τ, u ← x, w ← y
    let c = P.map(|i| P.map(|j| aff.k[i][j]));
    let c0 = P.map(|i| aff.k0[i]);
    let cm = glam::DMat3::from_cols_array_2d(&c);
    let det = cm.determinant();
    if gn.is_nan() || gn <= 0.0 || det.is_nan() || det <= 0.0 {
        return None;
    }
    let inv = cm.inverse();
    let e = (inv / gn).to_cols_array_2d();
    let off = inv * DVec3::from(c0);
    let cv = cm * DVec3::from(v);
    let eta = [0, 1, 2].map(|k| 3.0 / (3.0 * bd[k] + e[k].iter().map(|x| x.abs()).sum::<f64>()));
    Some(DistributedRows {
        e,
        offset: off.to_array(),
        eta,
        warm: [0, 1, 2].map(|d| -gn * (cv[d] + c0[d])),
    })
}

/// The guard projection ‖(γ_x / r, γ_y, γ_z)‖ ≤ radius (lanes spin, u, w).
pub fn project_patch(g: [f64; 3], radius: f64, r: f64) -> [f64; 3] {
    let t = ((g[0] / r).powi(2) + g[1] * g[1] + g[2] * g[2]).sqrt();
    let k = if t > radius { radius / t } else { 1.0 };
    g.map(|x| x * k)
}
