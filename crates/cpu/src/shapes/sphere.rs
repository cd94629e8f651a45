//! Sphere grains (`shape = "sphere"`): the body's bounding radius is its radius; a pair of
//! spheres is one contact between centres, and spheres are drawn as the particle points.

use super::{BodyShape, Routine, ShapeFamily, ShapeKeys, Solid, SHAPE_SPHERE};
use crate::model::keys::KeyError;
use glam::DVec3;

/// A solid sphere about the body origin.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Sphere {
    pub radius: f64,
}

impl Solid for Sphere {
    fn support(&self, d: DVec3) -> DVec3 {
        d.normalize_or_zero() * self.radius
    }
    fn bounding_radius(&self) -> f64 {
        self.radius
    }
    fn mass_properties(&self, density: f64) -> (f64, [f64; 3]) {
        let r = self.radius;
        let m = density * 4.0 / 3.0 * std::f64::consts::PI * r * r * r;
        (m, [0.4 * m * r * r; 3])
    }
    /// Drawn as its particle (the bounding sphere).
    fn surface(&self) -> Option<super::Surface> {
        None
    }
}

pub struct SphereFamily;

impl ShapeFamily for SphereFamily {
    fn name(&self) -> &'static str {
        "sphere"
    }
    fn id(&self) -> u32 {
        SHAPE_SPHERE
    }
    fn routine(&self) -> Routine {
        Routine::Sphere
    }
    fn keys(&self) -> &'static [&'static str] {
        &["radius"]
    }
    fn parse(&self, keys: &dyn ShapeKeys) -> Option<Result<BodyShape, KeyError>> {
        Some(super::positive(keys, "radius").map(|radius| BodyShape::Sphere { radius }))
    }
}
