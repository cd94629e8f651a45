//! `[[material]] model`: the friction model's table read through the engine's registry
//! (`bristlecone_model::friction::LAWS`), which owns each model's keys and rules; this file adds
//! the file, line and field to its errors, and the rules between materials.

use super::*;
use bristlecone_model::friction::{self, KeyError, ModelKeys, Problem};

/// The keys of `RawFrictionModel` by type, and each key's span (for errors).
macro_rules! model_keys {
    (numbers: $($n:ident),*; flags: $($f:ident),*; texts: $($t:ident),*; integers: $($i:ident),*) => {
        impl ModelKeys for RawFrictionModel {
            fn number(&self, key: &str) -> Option<f64> {
                match key {
                    $(stringify!($n) => self.$n.as_ref().map(|v| *v.get_ref()),)*
                    _ => None,
                }
            }
            fn flag(&self, key: &str) -> Option<bool> {
                match key {
                    $(stringify!($f) => self.$f.as_ref().map(|v| *v.get_ref()),)*
                    _ => None,
                }
            }
            fn text(&self, key: &str) -> Option<&str> {
                match key {
                    $(stringify!($t) => self.$t.as_ref().map(|v| v.get_ref().as_str()),)*
                    _ => None,
                }
            }
            fn integer(&self, key: &str) -> Option<i64> {
                match key {
                    $(stringify!($i) => self.$i.as_ref().map(|v| *v.get_ref()),)*
                    _ => None,
                }
            }
            fn has(&self, key: &str) -> bool {
                self.span_of(key).is_some()
            }
        }

        impl RawFrictionModel {
            fn span_of(&self, key: &str) -> Option<Range<usize>> {
                match key {
                    $(stringify!($n) => self.$n.as_ref().map(|v| v.span()),)*
                    $(stringify!($f) => self.$f.as_ref().map(|v| v.span()),)*
                    $(stringify!($t) => self.$t.as_ref().map(|v| v.span()),)*
                    $(stringify!($i) => self.$i.as_ref().map(|v| v.span()),)*
                    _ => None,
                }
            }

            /// Every key with its span when given, in the struct's order (the first key a
            /// model does not take is the one reported).
            fn present(&self) -> Vec<(&'static str, Option<Range<usize>>)> {
                KEY_ORDER.into_iter().map(|k| (k, self.span_of(k))).collect()
            }
        }
    };
}

/// The keys of `RawFrictionModel` in its order.
const KEY_ORDER: [&str; 16] = [
    "stiffness",
    "damping",
    "exponent",
    "slip_velocity",
    "sigma0",
    "sigma1",
    "sigma2",
    "mu_static",
    "v_stribeck",
    "elasto_plastic",
    "breakaway_ratio",
    "youngs_modulus",
    "poisson_ratio",
    "restitution",
    "projection",
    "cells",
];

model_keys!(
    numbers: stiffness, damping, exponent, slip_velocity, sigma0, sigma1, sigma2, mu_static,
        v_stribeck, breakaway_ratio, youngs_modulus, poisson_ratio, restitution;
    flags: elasto_plastic;
    texts: projection;
    integers: cells
);

/// A material's friction model from its table, by the registry's model of its `kind`.
pub(super) fn friction_model(
    cx: &Cx<'_>,
    fm: &S<RawFrictionModel>,
    base: &str,
) -> R<FrictionModel> {
    let span = fm.span();
    let fm = fm.get_ref();
    let kind = fm.kind.get_ref().as_str();
    let Some(law) = friction::find(friction::LAWS, kind) else {
        return Err(cx.err(
            Some(fm.kind.span()),
            format!("{base}.kind"),
            format!(
                "unknown friction model kind `{kind}` (expected one of: {})",
                friction::kinds(friction::LAWS)
            ),
        ));
    };
    let set = law.keys(fm);
    cx.only(base, "friction model", kind, &fm.present(), set.keys)
        .map_err(|e| match set.physical {
            Some(p) => physical_form_hint(e, p),
            None => e,
        })?;
    law.parse(fm)
        .map_err(|e| key_error(cx, fm, &span, base, kind, e))
}

/// A model's key error as a scene error at the key (at the table for a missing key).
fn key_error(
    cx: &Cx<'_>,
    fm: &RawFrictionModel,
    table: &Range<usize>,
    base: &str,
    kind: &str,
    e: KeyError,
) -> SceneError {
    let (key, field) = (e.key, format!("{base}.{}", e.key));
    let at = fm.span_of(key);
    match e.problem {
        Problem::Missing => cx.err(
            Some(table.clone()),
            field,
            format!("missing field `{key}` (required for friction model `{kind}`)"),
        ),
        Problem::NotPositive(x) => cx.err(at, field, format!("must be positive (got {})", Num(x))),
        Problem::Negative(x) => cx.err(at, field, format!("must be non-negative (got {})", Num(x))),
        Problem::Invalid(message) => cx.err(at, field, message),
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
                fm.get_ref().mu_static.as_ref().map(|e| e.span()),
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
