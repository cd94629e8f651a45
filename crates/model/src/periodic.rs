//! Periodic boundaries: a cell whose faces along some axes are identified, so a grain that
//! leaves through one face comes back through the opposite one and grains on either side of
//! the seam touch (Allen & Tildesley, "Computer Simulation of Liquids", 2nd ed. 2017, §1.6).
//!
//! Contacts use the minimum image: the partner's copy nearest to the grain, shifted by a
//! whole number of periods along each periodic axis. The GPU broad phase finds a pair across
//! the seam by visiting the cells around the grain's image on the far side
//! (`shaders/common/periodic.wgsl`); the narrow phase then gets the partner's nearest image,
//! so the normal, gap and both lever arms are those of the pair as it touches. Positions are
//! wrapped back into the cell after each position update (`shaders/integrate.wgsl`); a
//! contact keeps its key (A, B, feature) across a wrap, so the warm start survives it.
//!
//! The minimum image is unique only while no grain can reach two images of one partner: a
//! period must exceed twice the broad phase's reach, 2 (d_max + envelope) with d_max the
//! largest bounding diameter ([`PeriodicCell::check_reach`]). Boundaries (walls, containers,
//! meshes) are not imaged: a boundary touches a grain only where both are.
//!
//! Lees–Edwards boundaries (Lees & Edwards 1972; Allen & Tildesley 2017, §11.3) shear the
//! cell at a rate γ̇: the images one period up the gradient axis move along the flow axis at
//! γ̇ L_g and have moved by δ(t) = γ̇ L_g t (mod L_f). A pair across the gradient seam then
//! touches through the image shifted by δ along the flow ([`PeriodicCell::image`]), its
//! relative velocity includes the image's ±γ̇ L_g, and a grain crossing the gradient seam
//! comes back shifted by ∓δ with its flow velocity changed by ∓γ̇ L_g
//! ([`PeriodicCell::wrap_sheared`]), so its velocity relative to the shear profile is kept.
//! δ is not carried state: it is recomputed from the step index (the time, `step_index × dt`,
//! is computed, not accumulated), so a resumed run shears exactly as the uninterrupted one.

use glam::DVec3;

/// The periodic cell: along axis k, periodic when `length[k] > 0`, over
/// `[origin[k], origin[k] + length[k])`.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct PeriodicCell {
    pub origin: [f64; 3],
    /// Period per axis (m); 0 = not periodic along that axis.
    pub length: [f64; 3],
    /// Lees–Edwards shear of the cell, if any.
    pub shear: Option<LeesEdwards>,
}

/// Simple shear at `rate` γ̇ (1/s): the mean velocity along axis `flow` grows by γ̇ per metre
/// along axis `gradient` (both periodic, different; 0 = x, 1 = y, 2 = z).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LeesEdwards {
    pub rate: f64,
    pub flow: usize,
    pub gradient: usize,
}

const AXES: [&str; 3] = ["x", "y", "z"];

impl PeriodicCell {
    /// Whether any axis is periodic.
    pub fn any(&self) -> bool {
        self.length.iter().any(|&l| l > 0.0)
    }

    /// The shortest separation of `b` from `a`: `b − a` less whole periods along each
    /// periodic axis (the minimum image, nearest integer rounding half away from zero).
    pub fn image_delta(&self, a: DVec3, b: DVec3) -> DVec3 {
        let mut d = (b - a).to_array();
        for (dk, &l) in d.iter_mut().zip(&self.length) {
            if l > 0.0 {
                *dk -= l * (*dk / l).round();
            }
        }
        DVec3::from_array(d)
    }

    /// The flow velocity of the image one period up the gradient axis relative to the
    /// grain, γ̇ L_g (m/s; 0 without shear).
    pub fn shear_speed(&self) -> f64 {
        self.shear.map_or(0.0, |s| s.rate * self.length[s.gradient])
    }

    /// The flow offset δ(t) = γ̇ L_g t, reduced to [0, L_f), of the images one period up the
    /// gradient axis at time `time` (0 without shear).
    pub fn shear_offset(&self, time: f64) -> f64 {
        match self.shear {
            Some(s) => (self.shear_speed() * time).rem_euclid(self.length[s.flow]),
            None => 0.0,
        }
    }

    /// The image of `b` nearest to `a` when the images up the gradient axis are shifted by
    /// `offset` along the flow: (its separation from `a`, how many periods up the gradient
    /// axis it lies, n_g). The image then moves at n_g γ̇ L_g along the flow relative to b.
    /// Without shear, `image_delta` and n_g = 0.
    pub fn image(&self, a: DVec3, b: DVec3, offset: f64) -> (DVec3, i32) {
        let Some(s) = self.shear else {
            return (self.image_delta(a, b), 0);
        };
        let lg = self.length[s.gradient];
        let ng = -((b[s.gradient] - a[s.gradient]) / lg).round();
        let mut shifted = b;
        shifted[s.gradient] += ng * lg;
        shifted[s.flow] += ng * offset;
        (self.image_delta(a, shifted), ng as i32)
    }

    /// Position and velocity of a grain after a step that moved it to `p` (velocity `v`),
    /// wrapped into the cell: across the gradient seam it is moved by ∓δ (`offset`, the offset
    /// at the end of the step) along the flow and its flow velocity changes by ∓γ̇ L_g, as its
    /// image's; then `wrap`.
    pub fn wrap_sheared(&self, p: DVec3, v: DVec3, offset: f64) -> (DVec3, DVec3) {
        let (mut p, mut v) = (p, v);
        if let Some(s) = self.shear {
            let g = s.gradient;
            let k = ((p[g] - self.origin[g]) / self.length[g]).floor();
            p[g] -= k * self.length[g];
            p[s.flow] -= k * offset;
            v[s.flow] -= k * self.shear_speed();
        }
        (self.wrap(p), v)
    }

    /// `p` wrapped into the cell along each periodic axis.
    pub fn wrap(&self, p: DVec3) -> DVec3 {
        let mut x = p.to_array();
        for ((xk, &o), &l) in x.iter_mut().zip(&self.origin).zip(&self.length) {
            if l > 0.0 {
                *xk -= l * ((*xk - o) / l).floor();
                if *xk >= o + l {
                    *xk = o;
                }
            }
        }
        DVec3::from_array(x)
    }

    /// Refuses a period no longer than twice the reach of a contact, `2 (2 r_max +
    /// envelope)` for grains of bounding radius up to `r_max`: a grain could then touch
    /// two images of one partner, and the minimum image would miss one of the contacts.
    pub fn check_reach(&self, r_max: f64, envelope: f64) -> Result<(), String> {
        let need = 2.0 * (2.0 * r_max + envelope);
        for (axis, &l) in AXES.iter().zip(&self.length) {
            if l > 0.0 && l <= need {
                return Err(format!(
                    "the period along {axis} is {l} m, which must exceed 2 × (largest grain \
                     diameter + envelope) = {need} m (so a grain cannot touch two images of \
                     one neighbour)"
                ));
            }
        }
        Ok(())
    }

    /// The cell as the GPU stages take it, in f32: (origin, 0), (periods, 0), (flow axis,
    /// γ̇ L_g), (gradient axis, δ = `offset`); the axes are unit vectors, zero without shear.
    pub fn gpu(&self, offset: f64) -> [[f32; 4]; 4] {
        let o = self.origin.map(|x| x as f32);
        let l = self.length.map(|x| x as f32);
        let mut flow = [0.0f32; 4];
        let mut gradient = [0.0f32; 4];
        if let Some(s) = self.shear {
            flow[s.flow] = 1.0;
            flow[3] = self.shear_speed() as f32;
            gradient[s.gradient] = 1.0;
            gradient[3] = offset as f32;
        }
        [
            [o[0], o[1], o[2], 0.0],
            [l[0], l[1], l[2], 0.0],
            flow,
            gradient,
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn minimum_image_and_wrap() {
        let c = PeriodicCell {
            origin: [0.0, -1.0, 0.0],
            length: [1.0, 2.0, 0.0],
            shear: None,
        };
        let d = c.image_delta(DVec3::new(0.05, -0.9, 0.0), DVec3::new(0.95, 0.9, 5.0));
        assert!((d - DVec3::new(-0.1, -0.2, 5.0)).length() < 1e-12, "{d}");
        let w = c.wrap(DVec3::new(1.25, 1.5, 7.0));
        assert!((w - DVec3::new(0.25, -0.5, 7.0)).length() < 1e-12, "{w}");
        assert!(c.check_reach(0.2, 0.01).is_ok());
        assert!(c.check_reach(0.25, 0.01).unwrap_err().contains("along x"));
    }

    /// Shear along x with gradient y: the image up the gradient is shifted by δ and a grain
    /// crossing the upper face comes back down shifted by −δ, slower by γ̇ L_g.
    #[test]
    fn sheared_image_and_wrap() {
        let c = PeriodicCell {
            origin: [0.0; 3],
            length: [1.0, 2.0, 0.0],
            shear: Some(LeesEdwards {
                rate: 0.5,
                flow: 0,
                gradient: 1,
            }),
        };
        assert_eq!(c.shear_speed(), 1.0);
        assert!((c.shear_offset(2.3) - 0.3).abs() < 1e-12);
        // b near the lower face seen from a near the upper: its image is 2 up and 0.3 along.
        let (d, ng) = c.image(DVec3::new(0.5, 1.9, 0.0), DVec3::new(0.1, 0.05, 0.0), 0.3);
        assert_eq!(ng, 1);
        assert!((d - DVec3::new(-0.1, 0.15, 0.0)).length() < 1e-12, "{d}");
        let (p, v) = c.wrap_sheared(DVec3::new(0.2, 2.1, 0.0), DVec3::new(0.4, 1.0, 0.0), 0.3);
        assert!((p - DVec3::new(0.9, 0.1, 0.0)).length() < 1e-12, "{p}");
        assert!((v - DVec3::new(-0.6, 1.0, 0.0)).length() < 1e-12, "{v}");
    }
}
