//! Bristle friction (Peiret et al.): a tangential spring of stiffness k_b per contact, its
//! state the contact's last tangential impulse.

use super::MaterialRow;
use super::{FrictionLaw, FrictionModel, KeyError, KeySet, Layout, ModelKeys};

/// Bristle friction (Peiret et al.): E_T = 1/(k_b dt²) on rows u and w, offset
/// −E_T γ_T⁻ (the contact's last impulse, found by key like the warm start); projection: the
/// Coulomb cone with the current γ_n (table lane 3 = 0, the default) or the paper's box
/// |γ_u|, |γ_w| ≤ μ γ_n⁻ (lane 3 = 1, [`crate::rows::bristle_box`]; kept in the state
/// segment as [`crate::rows::projection`] encodes it).
pub const MODEL_BRISTLE: u32 = 2;

/// Its table row `[2, k_b, 0, box]`: lane 3 = 1 selects the box projection (pairs: by min,
/// so both sides must have it).
pub fn row(stiffness: f64, projection_box: bool) -> MaterialRow {
    let b = if projection_box { 1.0 } else { 0.0 };
    super::row(MODEL_BRISTLE, [stiffness, 0.0, b], [0.0; 2])
}

pub struct Bristle;

impl FrictionLaw for Bristle {
    fn kind(&self) -> &'static str {
        "bristle"
    }
    fn id(&self) -> u32 {
        MODEL_BRISTLE
    }
    fn summary(&self) -> &'static str {
        "tangential spring k_b per contact (Peiret et al.), cone or box projection"
    }
    fn keys(&self, _: &dyn ModelKeys) -> KeySet {
        KeySet {
            keys: &["stiffness", "projection"],
            physical: None,
        }
    }
    /// The projection: the cone of the current normal impulse (default) or Peiret et al.'s
    /// box of the last one.
    fn parse(&self, keys: &dyn ModelKeys) -> Result<FrictionModel, KeyError> {
        let stiffness = super::positive(keys, "stiffness")?;
        match keys.text("projection") {
            None | Some("cone") => Ok(FrictionModel::Bristle { stiffness }),
            Some("box") => Ok(FrictionModel::BristleBox { stiffness }),
            Some(other) => Err(KeyError::invalid(
                "projection",
                format!("unknown projection `{other}` (expected \"cone\" or \"box\")"),
            )),
        }
    }
    fn layout(&self, row: &MaterialRow) -> Layout {
        Layout {
            state: row[super::lane::N] > 0.0,
            ..Layout::default()
        }
    }
}
