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

use glam::DVec3;

/// The periodic cell: along axis k, periodic when `length[k] > 0`, over
/// `[origin[k], origin[k] + length[k])`.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct PeriodicCell {
    pub origin: [f64; 3],
    /// Period per axis (m); 0 = not periodic along that axis.
    pub length: [f64; 3],
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

    /// The cell as the GPU stages take it: (origin, 0) and (periods, 0), in f32.
    pub fn gpu(&self) -> [[f32; 4]; 2] {
        let o = self.origin.map(|x| x as f32);
        let l = self.length.map(|x| x as f32);
        [[o[0], o[1], o[2], 0.0], [l[0], l[1], l[2], 0.0]]
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
        };
        let d = c.image_delta(DVec3::new(0.05, -0.9, 0.0), DVec3::new(0.95, 0.9, 5.0));
        assert!((d - DVec3::new(-0.1, -0.2, 5.0)).length() < 1e-12, "{d}");
        let w = c.wrap(DVec3::new(1.25, 1.5, 7.0));
        assert!((w - DVec3::new(0.25, -0.5, 7.0)).length() < 1e-12, "{w}");
        assert!(c.check_reach(0.2, 0.01).is_ok());
        assert!(c.check_reach(0.25, 0.01).unwrap_err().contains("along x"));
    }
}
