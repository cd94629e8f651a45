//! The friction-model registry (`model::friction`): a model built from existing row kinds is
//! added through the registry's public API alone (book: Architecture, "Extending the engine").

use bristlecone::model::friction::{
    self, kelvin_voigt, FrictionLaw, KeyError, KeySet, Layout, ModelKeys, Problem, LAWS,
};
use bristlecone::model::rows::MaterialRow;
use bristlecone::scene::FrictionModel;

/// A test model: an undamped Kelvin–Voigt contact given by its spring constant alone (the
/// compliant rows with c = 0), under a key no engine model has.
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
            keys: &["spring"],
            physical: None,
        }
    }
    fn parse(&self, keys: &dyn ModelKeys) -> Result<FrictionModel, KeyError> {
        Ok(FrictionModel::Compliant {
            stiffness: friction::positive(keys, "spring")?,
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
        (key == "spring").then_some(self.0)
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
        key == "spring"
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
    assert_eq!((e.key, e.problem), ("spring", Problem::NotPositive(-1.0)));
}

/// A scene names the model by its kind and gives its new key; the loader reads it against
/// the extended registry (the engine's own does not know it), reports the model's rules at
/// the key with the file's line, and sets up its material row for the GPU.
#[test]
fn a_registered_model_enters_a_scene_by_its_own_keys() {
    use bristlecone::scene::{parse_str, parse_str_with, Registries};
    use std::path::Path;
    let laws: Vec<&dyn FrictionLaw> = LAWS.iter().copied().chain([&Undamped as _]).collect();
    let registries = Registries {
        laws: &laws,
        ..Default::default()
    };
    let scene = |model: &str| {
        format!(
            "[simulation]\ndt = 1e-3\nsteps = 1\n[[material]]\nname = \"m\"\ndensity = 1000.0\n\
             friction = 0.3\nmodel = {{ kind = \"undamped\", {model} }}\n[[body]]\nradius = 0.01\n\
             position = [0.0, 0.0, 0.1]\n"
        )
    };
    let file = Path::new("undamped.toml");
    let s = parse_str_with(&scene("spring = 2e5"), file, registries).unwrap();
    assert_eq!(
        s.materials[0].model,
        FrictionModel::Compliant {
            stiffness: 2e5,
            damping: 0.0
        }
    );
    assert_eq!(
        s.materials[0].model.material_row(),
        kelvin_voigt::row(2e5, 0.0)
    );
    let e = parse_str(&scene("spring = 2e5"), file).unwrap_err();
    assert!(
        e.message.contains("unknown friction model kind `undamped`"),
        "{e}"
    );
    let e = parse_str_with(&scene("spring = -1.0"), file, registries).unwrap_err();
    assert_eq!(
        (e.field.as_str(), e.line),
        ("material[0].model.spring", Some(8))
    );
    assert!(e.message.contains("must be positive (got -1)"), "{e}");
    let e = parse_str_with(&scene("stiffness = 2e5"), file, registries).unwrap_err();
    assert!(
        e.message
            .contains("`stiffness` does not apply to friction model `undamped`"),
        "{e}"
    );
}
