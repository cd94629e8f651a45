//! The planar LuGre models on face–face contact patches (book: Contact patches): the
//! reduced model (`bristlecone_engine::patch::couple`) and the distributed one (`bristlecone_engine::patch::stage`),
//! with point LuGre's parameters ([`super::lugre`], per unit normal load).

use super::lugre::{breakaway, parameters};
use super::MaterialRow;
use super::{FrictionLaw, FrictionModel, KeyError, KeySet, Layout, ModelKeys};

/// The reduced planar LuGre model on contact patches (book: Contact patches; table row as LuGre's,
/// `[6, σ0, σ1, σ2 | μ_s, v_s, 0, 0]`): face–face box contacts get a patch block of 3 rows
/// (spin, u, w at the patch centre) — see `bristlecone_engine::patch::couple`; the pair's point
/// contacts keep their normal rows (Coulomb rigid normal, μ = 0 written by collision).
pub const MODEL_LUGRE_REDUCED: u32 = 6;

/// The distributed planar LuGre model on contact patches (book: Contact patches, `lugre_patch`; table
/// row `[7 + ratio/2, σ0, σ1, σ2 | μ_s, v_s, ..]`, the elasto-plastic break-away ratio
/// packed in lane 0 as LuGre's): face–face box contacts get a patch block of 3 rows whose
/// full 3 × 3 compliance comes from the patch's cells, stepped on the GPU by
/// `bristlecone_engine::patch::stage`; the pair's point contacts keep their normal rows.
pub const MODEL_LUGRE_PATCH: u32 = 7;

/// The patch kind of a material row: 0 none, 1 reduced, 2 distributed (collision's
/// `materials[].y`, which picks the patch record's feature).
pub fn patch_kind(row: &MaterialRow) -> u8 {
    match row[0] as u32 {
        MODEL_LUGRE_REDUCED => 1,
        MODEL_LUGRE_PATCH => 2,
        _ => 0,
    }
}

/// Their layout: the state segment and the patch kind.
fn patch_layout(row: &MaterialRow) -> Layout {
    Layout {
        state: true,
        patch: patch_kind(row),
        ..Layout::default()
    }
}

pub struct Reduced;

impl FrictionLaw for Reduced {
    fn kind(&self) -> &'static str {
        "lugre_reduced"
    }
    fn id(&self) -> u32 {
        MODEL_LUGRE_REDUCED
    }
    fn summary(&self) -> &'static str {
        "reduced planar LuGre on face–face contact patches (a 3-row block per patch)"
    }
    fn keys(&self, _: &dyn ModelKeys) -> KeySet {
        KeySet {
            keys: &["sigma0", "sigma1", "sigma2", "mu_static", "v_stribeck"],
            physical: None,
        }
    }
    fn parse(&self, keys: &dyn ModelKeys) -> Result<FrictionModel, KeyError> {
        let ([sigma0, sigma1, sigma2], [mu_static, v_stribeck]) = parameters(keys)?;
        Ok(FrictionModel::LuGreReduced {
            sigma0,
            sigma1,
            sigma2,
            mu_static,
            v_stribeck,
        })
    }
    fn layout(&self, row: &MaterialRow) -> Layout {
        patch_layout(row)
    }
}

pub struct Distributed;

impl FrictionLaw for Distributed {
    fn kind(&self) -> &'static str {
        "lugre_patch"
    }
    fn id(&self) -> u32 {
        MODEL_LUGRE_PATCH
    }
    fn summary(&self) -> &'static str {
        "distributed planar LuGre on face–face contact patches (a grid of bristles per patch)"
    }
    fn keys(&self, _: &dyn ModelKeys) -> KeySet {
        KeySet {
            keys: &[
                "sigma0",
                "sigma1",
                "sigma2",
                "mu_static",
                "v_stribeck",
                "elasto_plastic",
                "breakaway_ratio",
                "cells",
            ],
            physical: None,
        }
    }
    fn parse(&self, keys: &dyn ModelKeys) -> Result<FrictionModel, KeyError> {
        let ([sigma0, sigma1, sigma2], [mu_static, v_stribeck]) = parameters(keys)?;
        Ok(FrictionModel::LuGrePatch {
            sigma0,
            sigma1,
            sigma2,
            mu_static,
            v_stribeck,
            breakaway_ratio: breakaway(keys)?,
            cells: cells(keys)?,
        })
    }
    fn layout(&self, row: &MaterialRow) -> Layout {
        patch_layout(row)
    }
}

/// The grid side: 21 by default (Arslan Waltersson & Karayiannidis's grid), 3 to 64.
fn cells(keys: &dyn ModelKeys) -> Result<u32, KeyError> {
    let Some(n) = keys.integer("cells") else {
        return Ok(21);
    };
    if !(3..=64).contains(&n) {
        return Err(KeyError::invalid(
            "cells",
            format!("the grid side must lie in 3 ..= 64 cells, got {n}"),
        ));
    }
    Ok(n as u32)
}
