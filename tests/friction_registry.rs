//! The friction-model registry (`model::friction`): a model built from existing row kinds is
//! added through the registry's public API alone (book: Architecture, "Extending the engine").

use bristlecone::model::friction::{
    self, kelvin_voigt, FrictionLaw, KeyError, KeySet, Layout, ModelKeys, Problem, LAWS,
};
use bristlecone::model::rows::MaterialRow;
use bristlecone::scene::FrictionModel;

/// A test model: an undamped Kelvin–Voigt contact given by its stiffness alone (the
/// compliant rows with c = 0).
struct Undamped;

impl FrictionLaw for Undamped {
    fn kind(&self) -> &'static str {
        "undamped"
    }
    fn id(&self) -> u32 {
        kelvin_voigt::MODEL_COMPLIANT
    }
    fn summary(&self) -> &'static str {
        "an undamped spring normal contact"
    }
    fn keys(&self, _: &dyn ModelKeys) -> KeySet {
        KeySet {
            keys: &["stiffness"],
            physical: None,
        }
    }
    fn parse(&self, keys: &dyn ModelKeys) -> Result<FrictionModel, KeyError> {
        Ok(FrictionModel::Compliant {
            stiffness: friction::positive(keys, "stiffness")?,
            damping: 0.0,
        })
    }
    fn layout(&self, row: &MaterialRow) -> Layout {
        kelvin_voigt::KelvinVoigt.layout(row)
    }
}

/// One number key, as a scene's model table would give it.
struct Stiffness(f64);

impl ModelKeys for Stiffness {
    fn number(&self, key: &str) -> Option<f64> {
        (key == "stiffness").then_some(self.0)
    }
    fn text(&self, _: &str) -> Option<&str> {
        None
    }
    fn flag(&self, _: &str) -> Option<bool> {
        None
    }
    fn integer(&self, _: &str) -> Option<i64> {
        None
    }
    fn has(&self, key: &str) -> bool {
        key == "stiffness"
    }
}

#[test]
fn a_model_from_existing_rows_needs_only_the_registry() {
    let laws: Vec<&dyn FrictionLaw> = LAWS.iter().copied().chain([&Undamped as _]).collect();
    assert!(friction::find(LAWS, "undamped").is_none());
    let law = friction::find(&laws, "undamped").expect("registered");
    assert!(friction::kinds(&laws).ends_with(", undamped"));
    let model = law.parse(&Stiffness(2e5)).unwrap();
    let row = model.material_row();
    assert_eq!(row, kelvin_voigt::row(2e5, 0.0));
    assert_eq!(friction::layout(&row), law.layout(&row));
    assert!(friction::layout(&row).compliant_normal && !friction::layout(&row).state);
    let e = law.parse(&Stiffness(-1.0)).unwrap_err();
    assert_eq!(
        (e.key, e.problem),
        ("stiffness", Problem::NotPositive(-1.0))
    );
}
