//! The friction and contact models a material selects: one file per model (its parameters,
//! the keys it takes and their validation, its material-table row and what its rows need of
//! the solver's layout), and one registry, [`LAWS`], that the scene loader's parsing, the
//! material table, the layout flags and the docs' model list are driven from
//! (`crate::rows` holds the row math the kernels and the f64 twin share).
//!
//! Adding a model built from existing row kinds (an existing model id's compliance, offset
//! and projection) touches this file (its `FrictionModel` variant, `mod` line and [`LAWS`]
//! entry), the model's own file, and its rows in the book's Scene reference.

pub mod bristle;
pub mod coulomb;
pub mod hunt_crossley;
pub mod kelvin_voigt;
mod keys;
pub mod lugre;
pub mod lugre_patch;
pub mod tanh;

pub use keys::{non_negative, positive, required, restitution, KeyError, ModelKeys, Num, Problem};

/// One material's row parameters as the solver's model table stores them (two `vec4` per
/// material index): `[model id, stiffness k (N/m), damping c (N·s/m), exponent n | ext]`,
/// the second `vec4` (ext) holding the parameters of models that need more (LuGre: μ_s, v_s)
/// and, in lanes 6 and 7, the rolling and spinning coefficients (any model).
pub type MaterialRow = [f32; 8];

/// A material's friction and contact model with its parameters (each variant's rules live
/// in its model's file).
#[derive(Debug, Clone, PartialEq)]
pub enum FrictionModel {
    Coulomb,
    Bristle {
        stiffness: f64,
    },
    /// Bristle friction with the paper's per-component box |γ_u|, |γ_w| ≤ μ γ_n⁻ as its
    /// projection (`projection = "box"`; `crate::rows::MODEL_BRISTLE`).
    BristleBox {
        stiffness: f64,
    },
    Compliant {
        stiffness: f64,
        damping: f64,
    },
    /// Hunt–Crossley normal force F = k δⁿ (1 + 3/2 α δ̇): stiffness k (N/mⁿ), exponent n ≥ 1,
    /// damping α (s/m).
    HuntCrossley {
        stiffness: f64,
        exponent: f64,
        damping: f64,
    },
    /// Kelvin–Voigt with the damping given as a coefficient of restitution e (the damping
    /// ratio ζ(e) of the spring–damper without adhesion; c = 2ζ√(k m*) per contact, see
    /// `crate::rows::compliant`).
    CompliantRestitution {
        stiffness: f64,
        restitution: f64,
    },
    /// Hunt–Crossley from physical quantities: Hertz stiffness k = 4/3 E* √R* (n = 1.5) per
    /// contact from Young's modulus E (Pa) and Poisson ratio ν, and the damping from the
    /// restitution e at the contact's impact speed (`crate::rows::compliant`).
    HuntCrossleyHertz {
        youngs_modulus: f64,
        poisson_ratio: f64,
        restitution: f64,
    },
    Tanh {
        slip_velocity: f64,
    },
    LuGre {
        sigma0: f64,
        sigma1: f64,
        sigma2: f64,
        mu_static: f64,
        v_stribeck: f64,
        /// The elasto-plastic variant (Dupont et al. 2002, as Arslan Waltersson & Karayiannidis eqs. 16–18) with break-away
        /// deflection z_ba = ratio × z_ss, ratio in (0, 1); None: plain LuGre.
        breakaway_ratio: Option<f64>,
    },
    /// The reduced planar LuGre model on face–face contact patches (book: Contact patches,
    /// `bristlecone_engine::patch::couple`), parameters as LuGre's (per unit normal load).
    LuGreReduced {
        sigma0: f64,
        sigma1: f64,
        sigma2: f64,
        mu_static: f64,
        v_stribeck: f64,
    },
    /// The distributed planar LuGre model (Arslan Waltersson & Karayiannidis) on face–face
    /// contact patches (`bristlecone_engine::patch::stage`): a `cells × cells` grid of
    /// bristles per patch, stepped on the GPU; parameters as LuGre's (per unit normal load).
    LuGrePatch {
        sigma0: f64,
        sigma1: f64,
        sigma2: f64,
        mu_static: f64,
        v_stribeck: f64,
        breakaway_ratio: Option<f64>,
        cells: u32,
    },
}

/// What a model's contacts need of the solver's layout, read from a material row.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Layout {
    /// The per-contact state segment (a projection other than the plain cone, or a model
    /// state carried to the save).
    pub state: bool,
    /// A compliant normal row: contacts penetrate by design.
    pub compliant_normal: bool,
    /// Lanes 3 and 4 are free for cohesion (`crate::rows::with_cohesion`).
    pub cohesive: bool,
    /// The patch kind: 0 none, 1 reduced, 2 distributed (collision's `materials[].y`).
    pub patch: u8,
}

/// The keys a model takes, given the keys present (a model with two parameter sets picks
/// one by the keys given), and how to name the set in a "does not apply" error.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KeySet {
    pub keys: &'static [&'static str],
    /// For a model given as physical quantities: the set, added to the error's message.
    pub physical: Option<&'static str>,
}

/// One friction model as the registry knows it.
pub trait FrictionLaw: Sync {
    /// The scene file's `kind`.
    fn kind(&self) -> &'static str;
    /// The model id of its rows (lane 0 of the material row, `MODEL_*` in the shaders).
    fn id(&self) -> u32;
    /// One line for the docs' model list.
    fn summary(&self) -> &'static str;
    fn keys(&self, given: &dyn ModelKeys) -> KeySet;
    /// The model from its keys (those outside [`FrictionLaw::keys`] are refused before).
    fn parse(&self, keys: &dyn ModelKeys) -> Result<FrictionModel, KeyError>;
    /// What a row of this model needs of the layout.
    fn layout(&self, row: &MaterialRow) -> Layout;
}

/// The registry of friction models, in the order the scene reference lists them.
pub static LAWS: &[&dyn FrictionLaw] = &[
    &coulomb::Coulomb,
    &bristle::Bristle,
    &kelvin_voigt::KelvinVoigt,
    &hunt_crossley::HuntCrossley,
    &tanh::Tanh,
    &lugre::LuGre,
    &lugre_patch::Reduced,
    &lugre_patch::Distributed,
];

/// The model a scene's `kind` names in `laws` (the registry, [`LAWS`], or an extension of it).
pub fn find<'a>(laws: &[&'a dyn FrictionLaw], kind: &str) -> Option<&'a dyn FrictionLaw> {
    laws.iter().copied().find(|l| l.kind() == kind)
}

/// The model of a material row (by its id lane) in [`LAWS`].
pub fn law_of_row(row: &MaterialRow) -> Option<&'static dyn FrictionLaw> {
    let id = row[0] as u32;
    LAWS.iter().copied().find(|l| l.id() == id)
}

/// The layout a material row needs (an unknown id needs nothing: it is never written).
pub fn layout(row: &MaterialRow) -> Layout {
    law_of_row(row).map(|l| l.layout(row)).unwrap_or_default()
}

/// The scene kinds of `laws`, comma-separated (error messages, docs).
pub fn kinds(laws: &[&dyn FrictionLaw]) -> String {
    laws.iter().map(|l| l.kind()).collect::<Vec<_>>().join(", ")
}

/// Lanes of a material row ([`MaterialRow`]): the id, three parameters, two extension
/// parameters and the rolling and spinning coefficients (any model).
pub mod lane {
    pub const ID: usize = 0;
    /// Stiffness k (N/m), tanh's v_s, LuGre's σ0.
    pub const K: usize = 1;
    /// Damping c (N·s/m), Hunt–Crossley's α, LuGre's σ1.
    pub const C: usize = 2;
    /// Hunt–Crossley's exponent n, LuGre's σ2, bristle's box flag, Coulomb's and
    /// Kelvin–Voigt's cohesion F_0.
    pub const N: usize = 3;
    /// LuGre's μ_s; (1 − ν²)/E of a Hertz contact; Coulomb's and Kelvin–Voigt's work of
    /// adhesion W.
    pub const EXT0: usize = 4;
    /// LuGre's v_s; the restitution's dimensionless damping of a compliant contact.
    pub const EXT1: usize = 5;
    pub const ROLLING: usize = 6;
    pub const SPINNING: usize = 7;
}

/// A material row: the id, (k, c, n) and the extension lanes (rolling and spinning 0).
pub fn row(id: u32, kcn: [f64; 3], ext: [f64; 2]) -> MaterialRow {
    let mut r = [0.0f32; 8];
    r[lane::ID] = id as f32;
    r[lane::K] = kcn[0] as f32;
    r[lane::C] = kcn[1] as f32;
    r[lane::N] = kcn[2] as f32;
    r[lane::EXT0] = ext[0] as f32;
    r[lane::EXT1] = ext[1] as f32;
    r
}

impl FrictionModel {
    /// Its material-table row (rolling, spinning and cohesion lanes 0).
    pub fn material_row(&self) -> MaterialRow {
        use FrictionModel as M;
        match *self {
            M::Coulomb => coulomb::row(),
            M::Bristle { stiffness } => bristle::row(stiffness, false),
            M::BristleBox { stiffness } => bristle::row(stiffness, true),
            M::Compliant { stiffness, damping } => kelvin_voigt::row(stiffness, damping),
            M::CompliantRestitution {
                stiffness,
                restitution,
            } => kelvin_voigt::restitution_row(stiffness, restitution),
            M::HuntCrossley {
                stiffness,
                exponent,
                damping,
            } => hunt_crossley::row(stiffness, exponent, damping),
            M::HuntCrossleyHertz {
                youngs_modulus,
                poisson_ratio,
                restitution,
            } => hunt_crossley::hertz_row(youngs_modulus, poisson_ratio, restitution),
            M::Tanh { slip_velocity } => tanh::row(slip_velocity),
            M::LuGre {
                sigma0,
                sigma1,
                sigma2,
                mu_static,
                v_stribeck,
                breakaway_ratio,
            } => lugre::row(
                lugre::MODEL_LUGRE,
                [sigma0, sigma1, sigma2],
                [mu_static, v_stribeck],
                breakaway_ratio,
            ),
            M::LuGreReduced {
                sigma0,
                sigma1,
                sigma2,
                mu_static,
                v_stribeck,
            } => lugre::row(
                lugre_patch::MODEL_LUGRE_REDUCED,
                [sigma0, sigma1, sigma2],
                [mu_static, v_stribeck],
                None,
            ),
            M::LuGrePatch {
                sigma0,
                sigma1,
                sigma2,
                mu_static,
                v_stribeck,
                breakaway_ratio,
                ..
            } => lugre::row(
                lugre_patch::MODEL_LUGRE_PATCH,
                [sigma0, sigma1, sigma2],
                [mu_static, v_stribeck],
                breakaway_ratio,
            ),
        }
    }

    /// The parameter set of a model with more than one (compliant models, a bristle's
    /// projection): two materials of one model must give the same set, having no rule to
    /// mix k with E or c with e. None for the others.
    pub fn parameter_set(&self) -> Option<&'static str> {
        use FrictionModel as M;
        match self {
            M::Compliant { .. } => Some("stiffness, damping"),
            M::CompliantRestitution { .. } => Some("stiffness, restitution"),
            M::HuntCrossley { .. } => Some("stiffness, exponent, damping"),
            M::HuntCrossleyHertz { .. } => Some("youngs_modulus, poisson_ratio, restitution"),
            M::Bristle { .. } => Some("projection = \"cone\""),
            M::BristleBox { .. } => Some("projection = \"box\""),
            _ => None,
        }
    }

    /// Whether its rows take cohesion (a shifted normal cone).
    pub fn takes_cohesion(&self) -> bool {
        layout(&self.material_row()).cohesive
    }

    /// LuGre's static coefficient μ_s (point and patch models); None for the others.
    pub fn mu_static(&self) -> Option<f64> {
        match *self {
            FrictionModel::LuGre { mu_static, .. }
            | FrictionModel::LuGreReduced { mu_static, .. }
            | FrictionModel::LuGrePatch { mu_static, .. } => Some(mu_static),
            _ => None,
        }
    }

    /// The distributed patch model's grid side; None for the others.
    pub fn patch_cells(&self) -> Option<u32> {
        match *self {
            FrictionModel::LuGrePatch { cells, .. } => Some(cells),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The shaders' `const MODEL_*: u32 = Nu;` (by name: MODEL_LUGRE_PATCH is `lugre_patch`)
    /// are the registry's ids, so a model's id is declared once in Rust and checked in WGSL.
    #[test]
    fn shader_model_ids_are_the_registry_ids() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../engine/shaders");
        let mut seen = 0;
        for dir in [root.clone(), root.join("common")] {
            for entry in std::fs::read_dir(&dir).unwrap() {
                let path = entry.unwrap().path();
                if path.extension().is_none_or(|e| e != "wgsl") {
                    continue;
                }
                for line in std::fs::read_to_string(&path).unwrap().lines() {
                    let Some(rest) = line.trim().strip_prefix("const MODEL_") else {
                        continue;
                    };
                    let (name, value) = rest
                        .split_once(": u32 =")
                        .expect("const MODEL_X: u32 = Nu;");
                    let value: u32 = value
                        .trim()
                        .trim_end_matches(';')
                        .trim_end_matches('u')
                        .parse()
                        .unwrap();
                    let kind = name.to_lowercase();
                    let law =
                        find(LAWS, &kind).unwrap_or_else(|| panic!("{path:?}: no model `{kind}`"));
                    assert_eq!(law.id(), value, "{path:?}: MODEL_{name}");
                    seen += 1;
                }
            }
        }
        assert!(seen >= 7, "only {seen} model ids found in the shaders");
    }

    /// Kinds and ids are unique, and each model's row carries its own id.
    #[test]
    fn the_registry_is_one_to_one() {
        for (i, a) in LAWS.iter().enumerate() {
            for b in &LAWS[i + 1..] {
                assert_ne!(a.kind(), b.kind());
                assert_ne!(a.id(), b.id());
            }
            assert_eq!(
                law_of_row(&row(a.id(), [0.0; 3], [0.0; 2])).unwrap().kind(),
                a.kind()
            );
        }
    }
}
