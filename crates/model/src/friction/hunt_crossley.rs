//! Hunt–Crossley normal contact F = k δⁿ (1 + 3/2 α δ̇), given by its parameters or as
//! physical quantities (Hertz stiffness from E and ν, damping from a restitution:
//! `crate::rows::compliant`).

use super::MaterialRow;
use super::{FrictionLaw, FrictionModel, KeyError, KeySet, Layout, ModelKeys, Num};
use crate::restitution::{hc_chi, HC_E_MIN};

/// Hunt–Crossley normal contact F = k δⁿ (1 + 3/2 α δ̇) (table row `[3, k, α, n]`), linearised
/// per step at the current penetration δ₀ = −Φ: F ≈ F₀ + k₁ (δ⁺ − δ₀) + c₁ δ̇⁺ with
/// F₀ = k δ₀ⁿ, k₁ = n k δ₀ⁿ⁻¹, c₁ = 3/2 α k δ₀ⁿ, so E_n = 1/(dt² k₁ + dt c₁) and the offset
/// −F₀/(dt k₁ + c₁). Open (Φ > 0) or just touching with n > 1 (k₁ = 0): no force this step
/// (the contact is inactive, η = 0).
pub const MODEL_HUNT_CROSSLEY: u32 = 3;

/// The keys of the physical form.
const PHYSICAL: [&str; 3] = ["youngs_modulus", "poisson_ratio", "restitution"];

pub fn row(stiffness: f64, exponent: f64, damping: f64) -> MaterialRow {
    super::row(
        MODEL_HUNT_CROSSLEY,
        [stiffness, damping, exponent],
        [0.0; 2],
    )
}

/// Its table row from (E, ν, e): `[3, 0, 0, 1.5 | (1−ν²)/E, χ(e), ·, ·]` (χ: [`hc_chi`]).
pub fn hertz_row(youngs_modulus: f64, poisson_ratio: f64, restitution: f64) -> MaterialRow {
    let mut r = [0.0; 8];
    r[0] = MODEL_HUNT_CROSSLEY as f32;
    r[3] = 1.5;
    r[4] = ((1.0 - poisson_ratio * poisson_ratio) / youngs_modulus) as f32;
    r[5] = hc_chi(restitution) as f32;
    r
}

pub struct HuntCrossley;

impl FrictionLaw for HuntCrossley {
    fn kind(&self) -> &'static str {
        "hunt_crossley"
    }
    fn id(&self) -> u32 {
        MODEL_HUNT_CROSSLEY
    }
    fn summary(&self) -> &'static str {
        "Hunt–Crossley normal contact k δⁿ (1 + 3/2 α δ̇), or Hertz from E, ν and a restitution"
    }
    fn keys(&self, given: &dyn ModelKeys) -> KeySet {
        if PHYSICAL.iter().any(|k| given.has(k)) {
            KeySet {
                keys: &PHYSICAL,
                physical: Some("youngs_modulus, poisson_ratio, restitution (n = 1.5)"),
            }
        } else {
            KeySet {
                keys: &["stiffness", "exponent", "damping"],
                physical: None,
            }
        }
    }
    fn parse(&self, keys: &dyn ModelKeys) -> Result<FrictionModel, KeyError> {
        if PHYSICAL.iter().any(|k| keys.has(k)) {
            return hertz(keys);
        }
        let exponent = super::positive(keys, "exponent")?;
        if exponent < 1.0 {
            return Err(KeyError::invalid(
                "exponent",
                format!("must be ≥ 1 (Hertz: 1.5), got {}", Num(exponent)),
            ));
        }
        Ok(FrictionModel::HuntCrossley {
            stiffness: super::positive(keys, "stiffness")?,
            exponent,
            damping: super::non_negative(keys, "damping")?,
        })
    }
    fn layout(&self, row: &MaterialRow) -> Layout {
        Layout {
            // With a restitution: the impact speed v₀ kept at assembly for the save.
            state: row[super::lane::EXT1] > 0.0,
            compliant_normal: true,
            ..Layout::default()
        }
    }
}

/// Hunt–Crossley from physical quantities: Young's modulus, Poisson ratio, restitution
/// (Hertz n = 1.5 per contact).
fn hertz(keys: &dyn ModelKeys) -> Result<FrictionModel, KeyError> {
    let youngs_modulus = super::positive(keys, "youngs_modulus")?;
    let nu = super::required(keys, "poisson_ratio")?;
    if !(nu > -1.0 && nu < 0.5) {
        return Err(KeyError::invalid(
            "poisson_ratio",
            format!("must be in (−1, 0.5), got {}", Num(nu)),
        ));
    }
    let restitution = super::restitution(
        keys,
        HC_E_MIN,
        "a smaller restitution needs a very large damping; give `stiffness`, `exponent`, `damping`",
    )?;
    Ok(FrictionModel::HuntCrossleyHertz {
        youngs_modulus,
        poisson_ratio: nu,
        restitution,
    })
}
