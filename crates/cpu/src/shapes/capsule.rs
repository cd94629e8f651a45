//! Capsule grains (`shape = "capsule"`): a segment of half length `half_length` along body
//! z swept by a sphere of `radius`. Its pairs use the segment closest points (the twin:
//! `reference::capsule`).

use super::{sgn, BodyShape, Routine, ShapeFamily, ShapeKeys, Solid, Surface, SHAPE_CAPSULE};
use crate::model::keys::KeyError;
use glam::DVec3;

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Capsule {
    pub radius: f64,
    pub half_length: f64,
}

/// The end of the axis segment (half length `hl`) farthest along `l`: the capsule's core,
/// which the sphere of its radius sweeps.
pub fn segment_support(hl: f64, l: DVec3) -> DVec3 {
    DVec3::new(0.0, 0.0, sgn(l.z) * hl)
}

/// Mass and principal moments (body frame, axis z) of a solid capsule: a cylinder of
/// length 2·hl and two hemispheres; each hemisphere's moment about a perpendicular axis
/// through the capsule's centre is m_h (2r²/5 + hl² + 3·hl·r/4) (parallel axes theorem
/// from its own centroid at 3r/8 from the flat face, where it is 83/320 m_h r²).
pub fn capsule_mass(density: f64, r: f64, hl: f64) -> (f64, [f64; 3]) {
    let pi = std::f64::consts::PI;
    let l = 2.0 * hl;
    let mc = density * pi * r * r * l;
    let mh = density * 2.0 / 3.0 * pi * r * r * r;
    let iz = mc * r * r / 2.0 + 2.0 * mh * 0.4 * r * r;
    let ip = mc * (l * l / 12.0 + r * r / 4.0) + 2.0 * mh * (0.4 * r * r + hl * hl + 0.75 * hl * r);
    (mc + 2.0 * mh, [ip, ip, iz])
}

/// Points around the axis of one capsule surface, and rings: two poles and 6 rings
/// (latitudes −60°, −30°, 0° on the lower hemisphere, 0°, 30°, 60° on the upper).
pub const SURFACE_SEGMENTS: u32 = 12;
pub const SURFACE_RINGS: u32 = 6;

/// A capsule's surface (radius `r`, half length `hl`): [`SURFACE_RINGS`] rings of
/// [`SURFACE_SEGMENTS`] points, then the two poles (74 points); 60 quads and 24 triangles.
pub fn surface(r: f32, hl: f32) -> Surface {
    let (ns, nr) = (SURFACE_SEGMENTS, SURFACE_RINGS);
    let mut points = Vec::with_capacity((ns * nr + 2) as usize);
    for ring in 0..nr {
        let lat = [-60.0f32, -30.0, 0.0, 0.0, 30.0, 60.0][ring as usize].to_radians();
        let z = if ring < 3 { -hl } else { hl } + r * lat.sin();
        for s in 0..ns {
            let phi = std::f32::consts::TAU * s as f32 / ns as f32;
            let rho = r * lat.cos();
            points.push([rho * phi.cos(), rho * phi.sin(), z]);
        }
    }
    points.push([0.0, 0.0, -hl - r]);
    points.push([0.0, 0.0, hl + r]);
    let at = |ring: u32, s: u32| ring * ns + s % ns;
    let mut polygons = Vec::with_capacity((ns * (nr + 1)) as usize);
    for s in 0..ns {
        // Counter-clockwise seen from outside (the axis points up).
        polygons.push(vec![ns * nr, at(0, s + 1), at(0, s)]);
        for ring in 0..nr - 1 {
            polygons.push(vec![
                at(ring, s),
                at(ring, s + 1),
                at(ring + 1, s + 1),
                at(ring + 1, s),
            ]);
        }
        polygons.push(vec![ns * nr + 1, at(nr - 1, s), at(nr - 1, s + 1)]);
    }
    Surface { points, polygons }
}

/// A smooth capsule for pictures: from axis end `a` to `b`, radius `r`, as quads of
/// (point, outward normal) — `lat` rings per hemisphere (around `a`, then `b`; the band
/// between the equators is the cylinder) of `around` points each.
pub fn smooth_quads(
    a: DVec3,
    b: DVec3,
    r: f64,
    around: usize,
    lat: usize,
) -> Vec<[(DVec3, DVec3); 4]> {
    use std::f64::consts::{FRAC_PI_2, TAU};
    let u = (b - a).try_normalize().unwrap_or(DVec3::Z);
    let (e1, e2) = u.any_orthonormal_pair();
    let rings: Vec<(DVec3, f64)> = (0..=lat)
        .map(|k| (a, -FRAC_PI_2 + FRAC_PI_2 * k as f64 / lat as f64))
        .chain((0..=lat).map(|k| (b, FRAC_PI_2 * k as f64 / lat as f64)))
        .collect();
    let at = |ring: usize, s: usize| {
        let (c, lat) = rings[ring];
        let phi = TAU * s as f64 / around as f64;
        let n = lat.cos() * (phi.cos() * e1 + phi.sin() * e2) + lat.sin() * u;
        (c + r * n, n)
    };
    let mut quads = Vec::with_capacity((rings.len() - 1) * around);
    for ring in 0..rings.len() - 1 {
        for s in 0..around {
            quads.push([
                at(ring, s),
                at(ring, s + 1),
                at(ring + 1, s + 1),
                at(ring + 1, s),
            ]);
        }
    }
    quads
}

impl Solid for Capsule {
    fn support(&self, d: DVec3) -> DVec3 {
        segment_support(self.half_length, d) + d.normalize_or_zero() * self.radius
    }
    fn bounding_radius(&self) -> f64 {
        self.radius + self.half_length
    }
    fn mass_properties(&self, density: f64) -> (f64, [f64; 3]) {
        capsule_mass(density, self.radius, self.half_length)
    }
    fn surface(&self) -> Option<Surface> {
        Some(surface(self.radius as f32, self.half_length as f32))
    }
}

pub struct CapsuleFamily;

impl ShapeFamily for CapsuleFamily {
    fn name(&self) -> &'static str {
        "capsule"
    }
    fn id(&self) -> u32 {
        SHAPE_CAPSULE
    }
    fn routine(&self) -> Routine {
        Routine::Capsule
    }
    fn keys(&self) -> &'static [&'static str] {
        &["radius", "half_length"]
    }
    fn parse(&self, keys: &dyn ShapeKeys) -> Option<Result<BodyShape, KeyError>> {
        let size = || {
            Ok(BodyShape::Capsule {
                radius: super::positive(keys, "radius")?,
                half_length: super::positive(keys, "half_length")?,
            })
        };
        Some(size())
    }
}
