//! Cylinder grains (`shape = "cylinder"`): a solid cylinder of `radius` along body z from
//! −half_length to +half_length. Its pairs use GJK between cores (the twins:
//! `reference::cylinder`, `reference::support`).

use super::{sgn, BodyShape, Routine, ShapeFamily, ShapeKeys, Solid, Surface, SHAPE_CYLINDER};
use crate::model::keys::KeyError;
use glam::DVec3;

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Cylinder {
    pub radius: f64,
    pub half_length: f64,
}

/// The point of the cylinder of radius `r`, half length `hl` farthest along `l`: on the rim
/// of the end disc `l` points to; the disc's centre when `l` is within 1e-6 of the axis
/// (no rim direction).
pub fn support(r: f64, hl: f64, l: DVec3) -> DVec3 {
    let w = l.truncate();
    let ln = w.length();
    let rim = if ln > 1e-6 * l.length() {
        w * (r / ln)
    } else {
        glam::DVec2::ZERO
    };
    rim.extend(sgn(l.z) * hl)
}

/// Mass and principal moments (body frame, axis z) of a solid cylinder:
/// m = ρπr²·2hl, I_z = m r²/2, I_x = I_y = m(3r² + (2hl)²)/12.
pub fn cylinder_mass(density: f64, r: f64, hl: f64) -> (f64, [f64; 3]) {
    let m = density * std::f64::consts::PI * r * r * 2.0 * hl;
    let ip = m * (3.0 * r * r + 4.0 * hl * hl) / 12.0;
    (m, [ip, ip, 0.5 * m * r * r])
}

/// Points around each end circle of a cylinder's surface.
pub const SURFACE_SEGMENTS: u32 = 16;

/// A cylinder's surface: two rings of [`SURFACE_SEGMENTS`] points (ends −hl, +hl), then
/// the two end centres (34 points); 16 side quads and two 16-triangle end fans.
pub fn surface(r: f32, hl: f32) -> Surface {
    let ns = SURFACE_SEGMENTS;
    let mut points = Vec::with_capacity((2 * ns + 2) as usize);
    for z in [-hl, hl] {
        for s in 0..ns {
            let phi = std::f32::consts::TAU * s as f32 / ns as f32;
            points.push([r * phi.cos(), r * phi.sin(), z]);
        }
    }
    points.push([0.0, 0.0, -hl]);
    points.push([0.0, 0.0, hl]);
    let at = |ring: u32, s: u32| ring * ns + s % ns;
    let mut polygons = Vec::with_capacity(3 * ns as usize);
    // Counter-clockwise seen from outside.
    for s in 0..ns {
        polygons.push(vec![at(0, s), at(0, s + 1), at(1, s + 1), at(1, s)]);
        polygons.push(vec![2 * ns, at(0, s + 1), at(0, s)]);
        polygons.push(vec![2 * ns + 1, at(1, s), at(1, s + 1)]);
    }
    Surface { points, polygons }
}

impl Solid for Cylinder {
    fn support(&self, d: DVec3) -> DVec3 {
        support(self.radius, self.half_length, d)
    }
    fn bounding_radius(&self) -> f64 {
        self.radius.hypot(self.half_length)
    }
    fn mass_properties(&self, density: f64) -> (f64, [f64; 3]) {
        cylinder_mass(density, self.radius, self.half_length)
    }
    fn surface(&self) -> Option<Surface> {
        Some(surface(self.radius as f32, self.half_length as f32))
    }
}

pub struct CylinderFamily;

impl ShapeFamily for CylinderFamily {
    fn name(&self) -> &'static str {
        "cylinder"
    }
    fn id(&self) -> u32 {
        SHAPE_CYLINDER
    }
    fn routine(&self) -> Routine {
        Routine::Cylinder
    }
    fn keys(&self) -> &'static [&'static str] {
        &["radius", "half_length"]
    }
    fn parse(&self, keys: &dyn ShapeKeys) -> Option<Result<BodyShape, KeyError>> {
        let size = || {
            Ok(BodyShape::Cylinder {
                radius: super::positive(keys, "radius")?,
                half_length: super::positive(keys, "half_length")?,
            })
        };
        Some(size())
    }
}
