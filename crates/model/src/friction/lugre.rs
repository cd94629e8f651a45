//! Point LuGre friction (Arslan Waltersson & Karayiannidis with one cell) and its
//! elasto-plastic variant (Dupont et al. 2002); the patch models share its parameters
//! ([`super::lugre_patch`]).

use super::MaterialRow;
use super::{FrictionLaw, FrictionModel, KeyError, KeySet, Layout, ModelKeys, Num};

/// Point LuGre (Arslan Waltersson & Karayiannidis with one cell; table row `[5, σ0, σ1, σ2 | μ_s, v_s, 0, 0]`, μ_c = the
/// contact's μ, Stribeck exponent 2): the implicit bristle update (book: Contact models, "Models as rows") with κ =
/// σ0 s⁻/g(s⁻) frozen at the last slip speed, per unit normal load l = c0 + c1 v_T⁺,
/// c1 = (σ0 + σ1/dt) a dt + σ2, c0 = ((σ0 + σ1/dt) a − σ1/dt) z, a = 1/(1 + dt κ), and the
/// friction impulse γ_T = −γ_n⁻ l: E_T = 1/(γ_n⁻ c1), offset c0/c1. The state z (2-D, in the
/// contact's (u, w) frame) and s⁻ replace the tangential impulse in the saved record
/// (γ_n, z_u, z_w, s⁻), so checkpoints carry them; z⁺ is formed when the record is saved
/// ([`crate::rows::saved_record`]), from z kept in the state segment of `gam` at assembly.
/// Projection: γ_n ≥ 0 and a guard disk ‖γ_T‖ ≤ (2 μ_s + (σ1 + σ2) ‖v*_T‖) γ_n⁻; no
/// friction on a contact's first step (no γ_n⁻).
///
/// **Elasto-plastic variant** (Dupont et al. 2002, as Arslan Waltersson & Karayiannidis eqs. 16–18; table lane 0 =
/// 5 + ratio/2, see [`lugre_lane`]): κ = β(z, v) σ0 s/g(s) with the paper's
/// multi-dimensional β ([`crate::elasto_plastic::beta`], the patch model's formula): 0 while ‖z‖ ≤
/// z_ba = ratio × z_ss (z_ss = g(s)/σ0), a sine ramp up to z_ss, 1 beyond, times
/// (ẑ·v̂ + 1)/2. The save evaluates β at (z⁻, v⁺) and stores κ⁺/σ0 = β s⁺/g(s⁺) in the
/// record's `w` lane instead of s⁺ (the next step's frozen κ needs β, whose direction
/// factor s⁺ alone does not carry); a = 1/(1 + dt σ0 w) equals plain LuGre's g/(g + dt σ0 s)
/// at β = 1. Below break-away β = 0, a = 1: the bristle is a pure spring (no drift).
pub const MODEL_LUGRE: u32 = 5;

/// The keys of point LuGre.
const KEYS: [&str; 7] = [
    "sigma0",
    "sigma1",
    "sigma2",
    "mu_static",
    "v_stribeck",
    "elasto_plastic",
    "breakaway_ratio",
];

/// A LuGre-family row `[id + ratio/2, σ0, σ1, σ2 | μ_s, v_s]`: the elasto-plastic
/// break-away ratio rides in the id lane ([`lugre_lane`]).
pub fn row(id: u32, sigma: [f64; 3], mu_v: [f64; 2], breakaway_ratio: Option<f64>) -> MaterialRow {
    let mut r = super::row(id, sigma, mu_v);
    r[super::lane::ID] = id_lane(id, breakaway_ratio);
    r
}

/// Lane 0 of a LuGre-family row: the id plus ratio/2 for the elasto-plastic variant (in
/// (id, id + 0.5), so every `u32(lane 0)` reads the id and f32 keeps the ratio to ~1e-6).
fn id_lane(id: u32, breakaway_ratio: Option<f64>) -> f32 {
    id as f32 + 0.5 * breakaway_ratio.unwrap_or(0.0) as f32
}

/// Table lane 0 of a point LuGre material (see [`MODEL_LUGRE`]).
pub fn lugre_lane(breakaway_ratio: Option<f64>) -> f32 {
    id_lane(MODEL_LUGRE, breakaway_ratio)
}

/// The break-away ratio packed in a LuGre or distributed-patch row's lane 0 (0: plain).
pub fn breakaway_ratio(row: MaterialRow) -> f64 {
    let id = row[0] as u32;
    if id == MODEL_LUGRE || id == super::lugre_patch::MODEL_LUGRE_PATCH {
        2.0 * (row[0] as f64 - id as f64)
    } else {
        0.0
    }
}

/// LuGre's parameters (σ0, σ1, σ2, μ_s, v_s), shared by the patch models.
pub fn parameters(keys: &dyn ModelKeys) -> Result<([f64; 3], [f64; 2]), KeyError> {
    let sigma0 = super::positive(keys, "sigma0")?;
    let sigma1 = super::non_negative(keys, "sigma1")?;
    let sigma2 = super::non_negative(keys, "sigma2")?;
    let mu_static = super::non_negative(keys, "mu_static")?;
    let v_stribeck = super::positive(keys, "v_stribeck")?;
    Ok(([sigma0, sigma1, sigma2], [mu_static, v_stribeck]))
}

/// The elasto-plastic keys: `elasto_plastic = true` selects the variant and
/// `breakaway_ratio` (z_ba / z_ss in (0, 1), default 0.9 as the patch model's) sets its
/// break-away deflection; a ratio without `elasto_plastic = true` is refused (plain LuGre
/// would ignore it).
pub fn breakaway(keys: &dyn ModelKeys) -> Result<Option<f64>, KeyError> {
    let ep = keys.flag("elasto_plastic").unwrap_or(false);
    let Some(x) = keys.number("breakaway_ratio") else {
        return Ok(ep.then_some(0.9));
    };
    if !ep {
        return Err(KeyError::invalid(
            "breakaway_ratio",
            "belongs to the elasto-plastic variant: set `elasto_plastic = true` too (plain LuGre has no break-away deflection)",
        ));
    }
    if !(x > 0.0 && x < 1.0) {
        return Err(KeyError::invalid(
            "breakaway_ratio",
            format!("must lie in (0, 1) (z_ba = ratio × z_ss), got {}", Num(x)),
        ));
    }
    Ok(Some(x))
}

pub struct LuGre;

impl FrictionLaw for LuGre {
    fn kind(&self) -> &'static str {
        "lugre"
    }
    fn id(&self) -> u32 {
        MODEL_LUGRE
    }
    fn summary(&self) -> &'static str {
        "point LuGre bristle friction with a Stribeck curve, optionally elasto-plastic"
    }
    fn keys(&self, _: &dyn ModelKeys) -> KeySet {
        KeySet {
            keys: &KEYS,
            physical: None,
        }
    }
    fn parse(&self, keys: &dyn ModelKeys) -> Result<FrictionModel, KeyError> {
        let ([sigma0, sigma1, sigma2], [mu_static, v_stribeck]) = parameters(keys)?;
        Ok(FrictionModel::LuGre {
            sigma0,
            sigma1,
            sigma2,
            mu_static,
            v_stribeck,
            breakaway_ratio: breakaway(keys)?,
        })
    }
    fn layout(&self, _: &MaterialRow) -> Layout {
        Layout {
            state: true,
            ..Layout::default()
        }
    }
}
