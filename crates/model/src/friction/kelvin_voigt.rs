//! Kelvin–Voigt compliant normal contact (`kind = "compliant"`), given as a stiffness and a
//! damping or a stiffness and a coefficient of restitution (`crate::rows::compliant`).

use super::MaterialRow;
use super::{FrictionLaw, FrictionModel, KeyError, KeySet, Layout, ModelKeys};
use crate::restitution::{kv_zeta, KV_E_MIN};

/// Kelvin–Voigt compliant normal contact (Song et al. 2001): E_n = 1/(dt² k + dt c) on row 0, normal
/// offset Φ/(dt + c/k) instead of max(Φ/dt, −v_recover) while penetrating; Coulomb cone.
pub const MODEL_COMPLIANT: u32 = 1;

/// Its table row `[1, k, c, ·]` (lanes 3 and 4 free for cohesion).
pub fn row(stiffness: f64, damping: f64) -> MaterialRow {
    super::row(MODEL_COMPLIANT, [stiffness, damping, 0.0], [0.0; 2])
}

/// Its table row given (k, e): `[1, k, 0, 0 | 0, ζ(e), ·, ·]` (ζ: [`kv_zeta`]).
pub fn restitution_row(stiffness: f64, restitution: f64) -> MaterialRow {
    let mut r = [0.0; 8];
    r[0] = MODEL_COMPLIANT as f32;
    r[1] = stiffness as f32;
    r[5] = kv_zeta(restitution) as f32;
    r
}

pub struct KelvinVoigt;

impl FrictionLaw for KelvinVoigt {
    fn kind(&self) -> &'static str {
        "compliant"
    }
    fn id(&self) -> u32 {
        MODEL_COMPLIANT
    }
    fn summary(&self) -> &'static str {
        "Kelvin–Voigt spring–damper normal contact (k and c, or k and a restitution e)"
    }
    fn keys(&self, given: &dyn ModelKeys) -> KeySet {
        if given.has("restitution") {
            KeySet {
                keys: &["stiffness", "restitution"],
                physical: Some("stiffness, restitution"),
            }
        } else {
            KeySet {
                keys: &["stiffness", "damping"],
                physical: None,
            }
        }
    }
    fn parse(&self, keys: &dyn ModelKeys) -> Result<FrictionModel, KeyError> {
        if keys.has("restitution") {
            let restitution = super::restitution(
                keys,
                KV_E_MIN,
                "an overdamped Kelvin–Voigt contact (ζ ≥ 1) is not converted; give `damping`",
            )?;
            return Ok(FrictionModel::CompliantRestitution {
                stiffness: super::positive(keys, "stiffness")?,
                restitution,
            });
        }
        Ok(FrictionModel::Compliant {
            stiffness: super::positive(keys, "stiffness")?,
            damping: super::non_negative(keys, "damping")?,
        })
    }
    fn layout(&self, _: &MaterialRow) -> Layout {
        Layout {
            compliant_normal: true,
            cohesive: true,
            ..Layout::default()
        }
    }
}
