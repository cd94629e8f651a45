//! Coulomb friction on a rigid contact: the solver's cone (relaxed or exact) with the
//! contact's μ, no compliance; the default model.

use super::MaterialRow;
use super::{FrictionLaw, FrictionModel, KeyError, KeySet, Layout, ModelKeys};

/// Model id of the rigid Coulomb contact.
pub const MODEL_COULOMB: u32 = 0;

pub fn row() -> MaterialRow {
    super::row(MODEL_COULOMB, [0.0; 3], [0.0; 2])
}

pub struct Coulomb;

impl FrictionLaw for Coulomb {
    fn kind(&self) -> &'static str {
        "coulomb"
    }
    fn id(&self) -> u32 {
        MODEL_COULOMB
    }
    fn summary(&self) -> &'static str {
        "rigid contact, Coulomb cone (the default)"
    }
    fn keys(&self, _: &dyn ModelKeys) -> KeySet {
        KeySet {
            keys: &[],
            physical: None,
        }
    }
    fn parse(&self, _: &dyn ModelKeys) -> Result<FrictionModel, KeyError> {
        Ok(FrictionModel::Coulomb)
    }
    fn layout(&self, _: &MaterialRow) -> Layout {
        Layout {
            cohesive: true,
            ..Layout::default()
        }
    }
}
