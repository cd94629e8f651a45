//! `[[material]] model`: the friction model's table read through the engine's registry
//! (`bristlecone_model::friction::LAWS`, or a program's extension of it), which owns each model's keys and rules; this file adds
//! the file, line and field to its errors, and the rules between materials.

use super::*;
use bristlecone_model::friction::{self, FrictionLaw, ModelKeys};

impl RawFrictionModel {
    fn value(&self, key: &str) -> Option<&S<toml::Value>> {
        self.keys.iter().find(|(k, _)| k == key).map(|(_, v)| v)
    }

    pub(super) fn span_of(&self, key: &str) -> Option<Range<usize>> {
        self.value(key).map(|v| v.span())
    }

    /// Every key given, with its span, in the file's order (the first key a model does not
    /// take is the one reported).
    fn present(&self) -> Vec<(&str, Option<Range<usize>>)> {
        let keys = self.keys.iter();
        keys.map(|(k, v)| (k.as_str(), Some(v.span()))).collect()
    }
}

/// A model's table as the model reads it: each key at the type the model asks for, the
/// first key given at another type remembered for its error (so that a wrong type is never
/// read as an absent key).
struct Typed<'a> {
    table: &'a RawFrictionModel,
    wrong: std::cell::RefCell<Option<(String, &'static str)>>,
}

impl Typed<'_> {
    fn get<T>(
        &self,
        key: &str,
        want: &'static str,
        read: impl Fn(&toml::Value) -> Option<T>,
    ) -> Option<T> {
        let v = self.table.value(key)?;
        let got = read(v.get_ref());
        if got.is_none() && self.wrong.borrow().is_none() {
            *self.wrong.borrow_mut() = Some((key.to_string(), want));
        }
        got
    }
}

impl ModelKeys for Typed<'_> {
    /// A float, or an integer read as one (as TOML's `1000` for a stiffness).
    fn number(&self, key: &str) -> Option<f64> {
        self.get(key, "f64", |v| match v {
            toml::Value::Float(x) => Some(*x),
            toml::Value::Integer(i) => Some(*i as f64),
            _ => None,
        })
    }
    fn text(&self, key: &str) -> Option<&str> {
        let v = self.table.value(key)?;
        let got = v.get_ref().as_str();
        if got.is_none() && self.wrong.borrow().is_none() {
            *self.wrong.borrow_mut() = Some((key.to_string(), "a string"));
        }
        got
    }
    fn flag(&self, key: &str) -> Option<bool> {
        self.get(key, "a boolean", toml::Value::as_bool)
    }
    fn integer(&self, key: &str) -> Option<i64> {
        self.get(key, "i64", toml::Value::as_integer)
    }
    fn has(&self, key: &str) -> bool {
        self.table.value(key).is_some()
    }
}

/// Every key some registered model takes (both parameter sets of each), `kind` first: the
/// list an unknown key's error gives.
fn known_keys(laws: &[&dyn FrictionLaw]) -> Vec<&'static str> {
    struct Given(bool);
    impl ModelKeys for Given {
        fn number(&self, _: &str) -> Option<f64> {
            None
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
        fn has(&self, _: &str) -> bool {
            self.0
        }
    }
    let mut out = vec!["kind"];
    for law in laws {
        for given in [Given(false), Given(true)] {
            for k in law.keys(&given).keys {
                if !out.contains(k) {
                    out.push(k);
                }
            }
        }
    }
    out
}

/// A key no registered model takes, refused in serde's words with the keys there are.
fn unknown_key(cx: &Cx<'_>, fm: &RawFrictionModel, base: &str) -> R<()> {
    let known = known_keys(cx.registries.laws);
    let Some((key, v)) = fm.keys.iter().find(|(k, _)| !known.contains(&k.as_str())) else {
        return Ok(());
    };
    let list: Vec<String> = known.iter().map(|k| format!("`{k}`")).collect();
    Err(cx.err(
        Some(v.span()),
        format!("{base}.{key}"),
        format!("unknown field `{key}`, expected one of {}", list.join(", ")),
    ))
}

/// A material's friction model from its table, by the registry's model of its `kind`.
pub(super) fn friction_model(
    cx: &Cx<'_>,
    fm: &S<RawFrictionModel>,
    base: &str,
) -> R<FrictionModel> {
    let span = fm.span();
    let fm = fm.get_ref();
    let kind = fm.kind.get_ref().as_str();
    let laws = cx.registries.laws;
    let Some(law) = friction::find(laws, kind) else {
        return Err(cx.err(
            Some(fm.kind.span()),
            format!("{base}.kind"),
            format!(
                "unknown friction model kind `{kind}` (expected one of: {})",
                friction::kinds(laws)
            ),
        ));
    };
    unknown_key(cx, fm, base)?;
    let typed = Typed {
        table: fm,
        wrong: Default::default(),
    };
    let set = law.keys(&typed);
    cx.only(base, "friction model", kind, &fm.present(), set.keys)
        .map_err(|e| match set.physical {
            Some(p) => physical_form_hint(e, p),
            None => e,
        })?;
    let model = law.parse(&typed);
    if let Some((key, want)) = typed.wrong.take() {
        let v = fm.value(&key).expect("a given key");
        return Err(cx.err(
            Some(v.span()),
            format!("{base}.{key}"),
            format!("invalid type: {}, expected {want}", unexpected(v.get_ref())),
        ));
    }
    model.map_err(|e| {
        let at = fm.span_of(e.key);
        key_error(cx, e, at, &span, base, ("friction model", kind))
    })
}

/// A value as serde's type errors name it (`string "big"`, `floating point `1.5``).
fn unexpected(v: &toml::Value) -> serde::de::Unexpected<'_> {
    use serde::de::Unexpected;
    match v {
        toml::Value::String(s) => Unexpected::Str(s),
        toml::Value::Integer(i) => Unexpected::Signed(*i),
        toml::Value::Float(x) => Unexpected::Float(*x),
        toml::Value::Boolean(b) => Unexpected::Bool(*b),
        other => Unexpected::Other(other.type_str()),
    }
}

/// Adds to a "does not apply" error which parameter set the physical form takes.
fn physical_form_hint(mut e: SceneError, set: &str) -> SceneError {
    e.message.push_str(&format!(
        " (given as physical quantities this model takes {set}; the direct parameters \
         cannot be mixed in)"
    ));
    e
}

/// LuGre's Stribeck curve falls from μ_s to μ_c = the material's `friction`: μ_s < μ_c is
/// refused (Arslan Waltersson & Karayiannidis need μ_s ≥ μ_c).
pub(super) fn lugre_static_check(
    cx: &Cx<'_>,
    m: &RawMaterial,
    model: &FrictionModel,
    friction: f64,
    base: &str,
) -> R<()> {
    if let (Some(mu_static), Some(fm)) = (model.mu_static(), &m.model) {
        if mu_static < friction {
            return Err(cx.err(
                fm.get_ref().span_of("mu_static"),
                format!("{base}.model.mu_static"),
                format!(
                    "must be ≥ the material's friction = {} (μ_c: the Stribeck curve falls from μ_s to μ_c), got {}",
                    Num(friction),
                    Num(mu_static)
                ),
            ));
        }
    }
    Ok(())
}

/// Two materials of one model must give the same parameter set
/// ([`FrictionModel::parameter_set`]): k and E, or c and e, have no mixing rule
/// (`bristlecone_model::rows::compliant`); two bristle materials, one projection.
pub(super) fn parameter_set_check(
    cx: &Cx<'_>,
    m: &RawMaterial,
    model: &FrictionModel,
    first: &mut Option<(&'static str, usize)>,
    i: usize,
    base: &str,
) -> R<()> {
    let Some(form) = model.parameter_set() else {
        return Ok(());
    };
    match *first {
        Some((f0, i0)) if f0 != form => Err(cx.err(
            m.model.as_ref().map(|fm| fm.span()),
            format!("{base}.model"),
            format!(
                "gives ({form}) but material[{i0}] gives ({f0}): materials of one model \
                 must use the same parameter set (there is no rule to mix them)"
            ),
        )),
        Some(_) => Ok(()),
        None => {
            *first = Some((form, i));
            Ok(())
        }
    }
}
