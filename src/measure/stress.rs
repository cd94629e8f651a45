//! The stress tensor and the solid fraction of the grains in a box region.
//!
//! Stress (compression positive), the average over the region's volume V of the grains whose
//! centre lies in it (Christoffersen, Mehrabadi & Nemat-Nasser 1981; Andreotti, Forterre &
//! Pouliquen, *Granular Media*, 2013, §2.2):
//!
//! σ = −(1/V) Σ_grains Σ_contacts ½ (r ⊗ f + f ⊗ r) + (1/V) Σ_grains m v′ ⊗ v′,
//!
//! r the lever arm from the grain's centre to the contact point, f the contact force on the
//! grain, v′ = v − the streaming velocity: the region's mass-weighted mean velocity v̄, and in
//! a Lees–Edwards cell also the imposed shear profile about the grains' mean position,
//! v̄ + γ̇ (x_g − x̄_g) e_f (a sheared cell's mean flow is no velocity fluctuation: about v̄
//! alone it would add ρ_b γ̇² ⟨(x_g − x̄_g)²⟩ to σ_ff). For a contact between two grains
//! in the region the two terms add up to the branch-vector form ½ (f ⊗ ℓ + ℓ ⊗ f), ℓ from A's
//! centre to B's; the lever arms are those the collision wrote, so a pair across a periodic
//! seam counts with its image, and a boundary contact counts on the grain's side. Every grain
//! counts whole where its centre is: the region should span many grains.

use glam::{DMat3, DVec3};

use crate::bodies::BodyState;
use crate::collide::{ContactRecord, LeesEdwards};

/// An axis-aligned box [min, max) (m).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Region {
    pub min: [f64; 3],
    pub max: [f64; 3],
}

impl Region {
    pub fn volume(&self) -> f64 {
        (0..3).map(|k| self.max[k] - self.min[k]).product()
    }

    pub fn contains(&self, p: [f32; 4]) -> bool {
        (0..3).all(|k| (self.min[k]..self.max[k]).contains(&(p[k] as f64)))
    }
}

/// The region's stress (Pa, symmetric, compression positive): the contacts' part and the
/// kinetic part.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RegionStress {
    pub contact: DMat3,
    pub kinetic: DMat3,
}

impl RegionStress {
    pub fn total(&self) -> DMat3 {
        self.contact + self.kinetic
    }

    /// The CSV row: the total's xx, yy, zz, xy, xz, yz, its pressure tr/3, and the kinetic
    /// part's pressure.
    pub fn row(&self) -> Vec<f64> {
        let s = self.total();
        let c = |i: usize, j: usize| s.col(j)[i];
        let p = (c(0, 0) + c(1, 1) + c(2, 2)) / 3.0;
        let k = &self.kinetic;
        let pk = (k.x_axis.x + k.y_axis.y + k.z_axis.z) / 3.0;
        vec![c(0, 0), c(1, 1), c(2, 2), c(0, 1), c(0, 2), c(1, 2), p, pk]
    }
}

/// The stress columns of [`RegionStress::row`].
pub const STRESS_COLUMNS: [&str; 8] = [
    "sxx",
    "syy",
    "szz",
    "sxy",
    "sxz",
    "syz",
    "pressure",
    "kinetic_pressure",
];

fn v3(a: [f32; 4]) -> DVec3 {
    DVec3::new(a[0] as f64, a[1] as f64, a[2] as f64)
}

fn sym_outer(a: DVec3, b: DVec3) -> DMat3 {
    let m = DMat3::from_cols(a * b.x, a * b.y, a * b.z);
    (m + m.transpose()) * 0.5
}

/// The stress in `region` from the contacts of a step (records and their impulses
/// γ = (n, u, w)·dt·force, `dt` the step) and the grains' velocities (bodies
/// `first_grain..`; needs `pos`, `vel` and `mass_props`). Grains of inverse mass 0 add no
/// kinetic part, taken about the streaming velocity (with `shear`, the cell's profile).
pub fn region_stress(
    state: &BodyState,
    first_grain: usize,
    contacts: &[ContactRecord],
    impulses: &[[f32; 4]],
    dt: f64,
    region: &Region,
    shear: Option<&LeesEdwards>,
) -> RegionStress {
    let inside = |b: u32| b as usize >= first_grain && region.contains(state.pos[b as usize]);
    let mut contact = DMat3::ZERO;
    for (c, g) in contacts.iter().zip(impulses) {
        let n = v3(c.n_gap);
        let (u, w) = crate::collide::tangent_basis(n);
        let on_b = (g[0] as f64 * n + g[1] as f64 * u + g[2] as f64 * w) / dt;
        if inside(c.ids[0]) {
            contact -= sym_outer(v3(c.ra), -on_b);
        }
        if inside(c.ids[1]) {
            contact -= sym_outer(v3(c.rb), on_b);
        }
    }
    let grains: Vec<(f64, DVec3, DVec3)> = (first_grain..state.len())
        .filter(|&b| inside(b as u32) && state.mass_props[b][3] > 0.0)
        .map(|b| {
            let m = 1.0 / state.mass_props[b][3] as f64;
            (m, v3(state.pos[b]), v3(state.vel[b]))
        })
        .collect();
    let mass: f64 = grains.iter().map(|g| g.0).sum();
    let mean = |f: &dyn Fn(DVec3, DVec3) -> DVec3| match mass > 0.0 {
        true => grains.iter().map(|&(m, x, v)| m * f(x, v)).sum::<DVec3>() / mass,
        false => DVec3::ZERO,
    };
    let (v_mean, x_mean) = (mean(&|_, v| v), mean(&|x, _| x));
    let streaming = |x: DVec3| match shear {
        Some(s) => {
            let mut u = v_mean;
            u[s.flow] += s.rate * (x[s.gradient] - x_mean[s.gradient]);
            u
        }
        None => v_mean,
    };
    let kinetic = grains
        .iter()
        .map(|&(m, x, v)| {
            let c = v - streaming(x);
            sym_outer(c, c) * m
        })
        .fold(DMat3::ZERO, |a, b| a + b);
    let scale = 1.0 / region.volume();
    RegionStress {
        contact: contact * scale,
        kinetic: kinetic * scale,
    }
}

/// The solid fraction of `region`: the volume of the grains whose centre lies in it
/// (`volumes[k]` of body `first_grain + k`) over the region's.
pub fn solid_fraction(
    state: &BodyState,
    first_grain: usize,
    volumes: &[f64],
    region: &Region,
) -> f64 {
    let solid: f64 = volumes
        .iter()
        .enumerate()
        .filter(|&(k, _)| region.contains(state.pos[first_grain + k]))
        .map(|(_, v)| v)
        .sum();
    solid / region.volume()
}
