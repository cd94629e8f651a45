//! Box grains (`shape = "box"`): half extents along the body axes; the oriented-box
//! manifold against spheres and boxes, the hull routines against hulls.

use super::{sgn, BodyShape, Routine, ShapeFamily, ShapeKeys, Solid, Surface, SHAPE_BOX};
use crate::model::keys::{KeyError, Num, Problem};
use glam::DVec3;

/// A box's six faces as corner indices, corner v at (±h_x, ±h_y, ±h_z) with bit 0, 1, 2 of v
/// set for +x, +y, +z; each face counter-clockwise seen from outside, the +z face last (an
/// open container leaves it out). The surfaces written for ParaView, drawn by `render` and
/// the box's polytope for the hull narrow phase (`convex::box_polytope`) share it.
pub const BOX_CORNER_FACES: [[u8; 4]; 6] = [
    [0, 4, 6, 2],
    [1, 3, 7, 5],
    [0, 1, 5, 4],
    [2, 6, 7, 3],
    [0, 2, 3, 1],
    [4, 5, 7, 6],
];

/// A solid box of half extents `half_extents` about the body origin.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Cuboid {
    pub half_extents: [f64; 3],
}

/// The corner of the box of half extents `h` farthest along `l` (a face's positive
/// corner when `l` lies in its plane, as the kernels pick it).
pub fn support(h: DVec3, l: DVec3) -> DVec3 {
    DVec3::new(sgn(l.x), sgn(l.y), sgn(l.z)) * h
}

/// Analytic mass properties of a solid box of half extents `h`: mass, principal moments.
pub fn box_mass(density: f64, h: [f64; 3]) -> (f64, [f64; 3]) {
    let m = density * 8.0 * h[0] * h[1] * h[2];
    let sq = h.map(|x| x * x);
    (
        m,
        [
            m * (sq[1] + sq[2]) / 3.0,
            m * (sq[0] + sq[2]) / 3.0,
            m * (sq[0] + sq[1]) / 3.0,
        ],
    )
}

/// The 8 corners (vertex bits as [`BOX_CORNER_FACES`]) and 6 quads of a box of half
/// extents `h`, in f32 as the frames store them.
pub fn surface(h: [f32; 3]) -> Surface {
    let points = (0..8)
        .map(|v| {
            let s = |b: usize| if (v >> b) & 1 == 1 { 1.0 } else { -1.0 };
            [s(0) * h[0], s(1) * h[1], s(2) * h[2]]
        })
        .collect();
    let polygons = BOX_CORNER_FACES
        .iter()
        .map(|f| f.iter().map(|&v| v as u32).collect())
        .collect();
    Surface { points, polygons }
}

impl Solid for Cuboid {
    fn support(&self, d: DVec3) -> DVec3 {
        support(DVec3::from(self.half_extents), d)
    }
    fn bounding_radius(&self) -> f64 {
        let h = self.half_extents;
        (h[0] * h[0] + h[1] * h[1] + h[2] * h[2]).sqrt()
    }
    fn mass_properties(&self, density: f64) -> (f64, [f64; 3]) {
        box_mass(density, self.half_extents)
    }
    fn surface(&self) -> Option<Surface> {
        Some(surface(self.half_extents.map(|x| x as f32)))
    }
}

pub struct BoxFamily;

impl ShapeFamily for BoxFamily {
    fn name(&self) -> &'static str {
        "box"
    }
    fn id(&self) -> u32 {
        SHAPE_BOX
    }
    fn routine(&self) -> Routine {
        Routine::Box
    }
    fn keys(&self) -> &'static [&'static str] {
        &["half_extents"]
    }
    fn parse(&self, keys: &dyn ShapeKeys) -> Option<Result<BodyShape, KeyError>> {
        let key = "half_extents";
        let Some(h) = keys.vector(key) else {
            return Some(Err(KeyError {
                key,
                problem: Problem::Missing,
            }));
        };
        Some(match h.iter().find(|&&x| x.is_nan() || x <= 0.0) {
            Some(&x) => Err(KeyError::invalid(
                key,
                format!("every half extent must be positive (got {})", Num(x)),
            )),
            None => Ok(BodyShape::Box { half_extents: h }),
        })
    }
}
