//! Smooth tanh friction (Song et al. 2001), linearised per step at the last slip speed.

use super::MaterialRow;
use super::{FrictionLaw, FrictionModel, KeyError, KeySet, Layout, ModelKeys};

/// Smooth friction λ_T = −μ tanh(‖v_T‖/v_s) λ_N v̂_T (Song et al. 2001; table row `[4, v_s, 0, 0]`),
/// linearised per step by its secant at the contact's last slip speed s⁻ (saved by key in the
/// `w` lane of its impulse) and last normal impulse γ_n⁻: the friction is the damper
/// v_T⁺ + E_T γ_T = 0 with E_T = s⁻ / (μ γ_n⁻ tanh(s⁻/v_s)) (→ v_s/(μ γ_n⁻) at rest), no
/// offset, projection: γ_n ≥ 0 and the disk ‖γ_T‖ ≤ μ γ_n⁻ (the tanh law's bound; it binds
/// while a slide accelerates past the secant, which then is Coulomb sliding with the lagged
/// normal impulse, and never lifts the contact off as the relaxed cone would). At a steady
/// slip s⁻ = s⁺ and the row is the tanh law exactly; the lagged secant is a contraction in
/// time (factor < h/(m + h), h = 1/E_T). A contact with no previous normal impulse has no
/// friction for its first step.
pub const MODEL_TANH: u32 = 4;

pub fn row(slip_velocity: f64) -> MaterialRow {
    super::row(MODEL_TANH, [slip_velocity, 0.0, 0.0], [0.0; 2])
}

pub struct Tanh;

impl FrictionLaw for Tanh {
    fn kind(&self) -> &'static str {
        "tanh"
    }
    fn id(&self) -> u32 {
        MODEL_TANH
    }
    fn summary(&self) -> &'static str {
        "smooth friction μ tanh(‖v_T‖/v_s) (Song et al. 2001)"
    }
    fn keys(&self, _: &dyn ModelKeys) -> KeySet {
        KeySet {
            keys: &["slip_velocity"],
            physical: None,
        }
    }
    fn parse(&self, keys: &dyn ModelKeys) -> Result<FrictionModel, KeyError> {
        Ok(FrictionModel::Tanh {
            slip_velocity: super::positive(keys, "slip_velocity")?,
        })
    }
    fn layout(&self, _: &MaterialRow) -> Layout {
        Layout {
            state: true,
            ..Layout::default()
        }
    }
}
