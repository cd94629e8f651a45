//! Compliant contact from physical quantities (book: Contact models): Hertz stiffness from Young's modulus
//! and Poisson ratio, and damping from a coefficient of restitution.
//!
//! The table keeps per material, in lanes 4 and 5 of its [`MaterialRow`] (free for the
//! compliant models): s = (1 − ν²)/E (0 when the stiffness is given) and q, the restitution
//! converted to a dimensionless damping (0 when the damping is given):
//! * **Kelvin–Voigt** (`compliant`, stiffness k and restitution e): q = ζ, the damping ratio
//!   of the spring–damper *without adhesion* (it leaves when k x + c ẋ = 0) whose rebound is
//!   e ([`kv_restitution`], inverted by bisection); per contact c = 2ζ√(k m*) with m* the
//!   contact's effective normal mass 1/(J_n M⁻¹ J_nᵀ). (The classical e = exp(−ζπ/√(1−ζ²))
//!   assumes the damper pulls until x = 0: 0.527 instead of 0.572 at ζ = 0.2.)
//! * **Hunt–Crossley** (`hunt_crossley`, E, ν, e): per contact k = 4/3 E* √R*, n = 1.5,
//!   E* = 1/(s_A + s_B), R* from the lever arms ([`super::rolling_radius`]: a fixed body
//!   or wall is flat); q = χ in F = k δⁿ (1 + χ δ̇/v₀), i.e. α = 2χ/(3 v₀) in the table's
//!   form, v₀ the contact's impact speed. The rebound of this law depends on χ only (scale δ
//!   by (m v₀²/k)^{1/(n+1)}), so χ(e) is the exact inverse of the law's own e(χ)
//!   ([`hc_restitution`], RK4 + bisection) rather than a closed-form fit: Flores et al.'s
//!   χ = 8(1 − e)/(5e) gives e = 0.470 for 0.5 and 0.789 for 0.8, Lankarani–Nikravesh's
//!   3(1 − e²)/4 gives 0.725 for 0.5 (both measured by the same integration); v₀ is the
//!   approach speed −v_n of the contact's first penetrating step (at least [`V0_MIN`]),
//!   saved by contact key in the `w` lane of its record (checkpoints carry it).
//!
//! Pairs: s adds (E* of the two bodies; a Coulomb material is rigid, s = 0), q by max (the
//! lossier surface governs). A scene whose materials of one model mix the two forms (k and E,
//! or damping and restitution) is refused by the scene builder.

use super::{rolling_radius, PairModel, MODEL_COMPLIANT, MODEL_HUNT_CROSSLEY};
use crate::rows::MaterialRow;

/// The conversions between restitution and damping live below the models' registry, which
/// writes a material's row from them (`crate::restitution`).
pub use crate::restitution::{hc_chi, hc_restitution, kv_restitution, kv_zeta, HC_E_MIN, KV_E_MIN};

/// The smallest impact speed a Hunt–Crossley contact with restitution takes (m/s): a contact
/// that forms at rest is then strongly damped (α = 2χ/(3 V0_MIN)) rather than α = ∞.
pub const V0_MIN: f64 = 1e-3;

/// The pair's physical lanes (s_A + s_B, max(q_A, q_B)); `pair_physical` in the shader.
/// Only compliant models read them (a Coulomb material's lanes are 0).
pub fn pair_physical(a: MaterialRow, b: MaterialRow) -> [f64; 2] {
    [(a[4] + b[4]) as f64, (a[5].max(b[5])) as f64]
}

/// Whether a pair model takes its damping from a restitution (lane 5), i.e. needs per
/// contact m* (Kelvin–Voigt) or the impact speed v₀ (Hunt–Crossley).
pub fn needs_impact_speed(model: PairModel, phys: [f64; 2]) -> bool {
    model.0 == MODEL_HUNT_CROSSLEY && phys[1] > 0.0
}

/// The geometry of a contact that the physical parameters need.
#[derive(Clone, Copy, Debug)]
pub struct ContactGeometry {
    /// Lever-arm lengths ‖r_A‖, ‖r_B‖ and whether each body has zero inverse mass.
    pub la: f64,
    pub lb: f64,
    pub a_fixed: bool,
    pub b_fixed: bool,
    /// 1/(J_n M⁻¹ J_nᵀ), 0 when both bodies are fixed.
    pub m_eff: f64,
}

/// The contact's model with its physical parameters resolved, before the impact speed is
/// known: Hertz k (Hunt–Crossley with s > 0) and the Kelvin–Voigt damping c = 2ζ√(k m*).
/// `contact_physical` in `solve_assemble.wgsl`.
pub fn contact_model(model: PairModel, phys: [f64; 2], g: &ContactGeometry) -> PairModel {
    let (id, mut k, mut c, n) = model;
    if id == MODEL_HUNT_CROSSLEY && phys[0] > 0.0 {
        let r = rolling_radius(g.la, g.lb, g.a_fixed, g.b_fixed);
        k = 4.0 / 3.0 * r.sqrt() / phys[0];
    }
    if id == MODEL_COMPLIANT && phys[1] > 0.0 {
        c = 2.0 * phys[1] * (k * g.m_eff).sqrt();
    }
    (id, k, c, n)
}

/// A Hunt–Crossley contact's impact speed v₀: the saved one (record lane w) once set, else
/// the approach speed −v_n of this step, at least V0_MIN; 0 while open (Φ > 0).
pub fn impact_speed(saved: f64, phi: f64, vn: f64) -> f64 {
    if phi > 0.0 {
        0.0
    } else if saved > 0.0 {
        saved
    } else {
        (-vn).max(V0_MIN)
    }
}

/// The model with α = 2χ/(3 v₀) (Hunt–Crossley with restitution and v₀ > 0).
pub fn with_impact_speed(model: PairModel, phys: [f64; 2], v0: f64) -> PairModel {
    if needs_impact_speed(model, phys) && v0 > 0.0 {
        (model.0, model.1, 2.0 * phys[1] / (3.0 * v0), model.3)
    } else {
        model
    }
}
