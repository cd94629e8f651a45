//! The actual shape of a placed body, for the checks that must not stop at its bounding
//! sphere: a sphere's exact gap to it (explicit bodies against each other, generated grains
//! against the bodies already there) and whether a region lies wholly inside it.
//!
//! The gaps are the narrow phase's own (the f64 twins in `bristlecone_cpu::reference`) at
//! an unlimited envelope, so that validation and the solver agree on what touches.

use glam::{DQuat, DVec3};

use bristlecone_cpu::reference::boxes::{sphere_box, Obb};
use bristlecone_cpu::reference::capsule::{capsule_sphere, Capsule};
use bristlecone_cpu::reference::convex::{sphere_hull, Hull};
use bristlecone_cpu::reference::cylinder::{cylinder_sphere, Cylinder};

use super::{BodyDesc, BodyShape};

/// Relative tolerance for "touching is not overlapping", sphere pairs and every other shape
/// alike.
pub(crate) const OVERLAP_TOL: f64 = 1e-9;

/// How far two bodies of bounding radii `ra` and `rb` may overlap and still count as
/// touching: the relative tolerance of [`OVERLAP_TOL`] that sphere pairs use, so that a
/// body resting exactly on another (gap 0 up to rounding) is accepted whatever the shapes.
pub(crate) fn touch_tolerance(ra: f64, rb: f64) -> f64 {
    OVERLAP_TOL * (ra + rb)
}

/// A body's shape placed in world, built once and queried many times.
pub(crate) enum Placed {
    Sphere(DVec3, f64),
    Box(Obb),
    Capsule(Capsule),
    Cylinder(Cylinder),
    Hull(Hull),
    /// Member spheres in world.
    Clump(Vec<(DVec3, f64)>),
}

impl Placed {
    pub(crate) fn of(d: &BodyDesc) -> Placed {
        let p = DVec3::from_array(d.position);
        let q = DQuat::from_array(d.orientation);
        match &d.shape {
            BodyShape::Sphere { radius } => Placed::Sphere(p, *radius),
            BodyShape::Box { half_extents } => {
                Placed::Box(Obb::new(p, q, DVec3::from_array(*half_extents)))
            }
            BodyShape::Capsule {
                radius,
                half_length,
            } => Placed::Capsule(Capsule::new(p, q, *half_length, *radius)),
            BodyShape::Cylinder {
                radius,
                half_length,
            } => Placed::Cylinder(Cylinder::new(p, q, *half_length, *radius)),
            // The hull as the file gives it (f64), not the GPU's f32 copy: a grain resting
            // on a face is judged against the face that was written.
            BodyShape::Convex(h) => {
                let loops: Vec<Vec<u32>> = h.faces.iter().map(|f| f.verts.clone()).collect();
                Placed::Hull(Hull {
                    c: p,
                    q,
                    verts: h.vertices.clone(),
                    planes: h.faces.iter().map(|f| (f.normal, f.offset)).collect(),
                    edges: bristlecone_cpu::shapes::convex::hull_edges(&loops),
                    loops,
                })
            }
            BodyShape::Clump(c) => Placed::Clump(
                c.members
                    .iter()
                    .map(|m| (p + q * DVec3::new(m[0], m[1], m[2]), m[3]))
                    .collect(),
            ),
        }
    }

    /// A sphere (centre `c`, radius `r`) against the shape: the unit normal from the shape
    /// towards the sphere and the signed gap (negative: they overlap by that much). A clump
    /// answers with its nearest member.
    pub(crate) fn sphere_gap(&self, c: DVec3, r: f64) -> (DVec3, f64) {
        let env = f64::INFINITY;
        let point = |p: Option<&bristlecone_cpu::reference::capsule::CPoint>| {
            p.map_or((DVec3::Z, f64::INFINITY), |p| (p.n, p.gap))
        };
        match self {
            Placed::Sphere(p, rp) => sphere_sphere(*p, *rp, c, r),
            Placed::Box(b) => {
                sphere_box(c, r, b, env).map_or((DVec3::Z, f64::INFINITY), |m| (m.0, m.1))
            }
            Placed::Capsule(cap) => point(capsule_sphere(cap, c, r, env).first()),
            Placed::Cylinder(cy) => point(cylinder_sphere(cy, c, r, env).first()),
            Placed::Hull(h) => {
                sphere_hull(c, r, h, env).map_or((DVec3::Z, f64::INFINITY), |m| (m.0, m.1))
            }
            Placed::Clump(members) => members
                .iter()
                .map(|&(p, rp)| sphere_sphere(p, rp, c, r))
                .fold(
                    (DVec3::Z, f64::INFINITY),
                    |a, b| if b.1 < a.1 { b } else { a },
                ),
        }
    }

    /// Whether the box `[lo, hi]` lies wholly inside the shape (within `tol`). The shapes
    /// but the clump are convex, so their 8 corners decide; a clump holds the box only
    /// when one member holds all 8 (a union of spheres may hold a box no member holds,
    /// which this does not claim).
    pub(crate) fn holds_box(&self, lo: [f64; 3], hi: [f64; 3], tol: f64) -> bool {
        let corners = (0..8).map(|k| {
            DVec3::from_array([0, 1, 2].map(|i| if (k >> i) & 1 == 1 { hi[i] } else { lo[i] }))
        });
        match self {
            Placed::Clump(members) => members.iter().any(|&(p, rp)| {
                corners
                    .clone()
                    .all(|x| sphere_sphere(p, rp, x, 0.0).1 <= tol)
            }),
            _ => corners
                .into_iter()
                .all(|x| self.sphere_gap(x, 0.0).1 <= tol),
        }
    }
}

/// Sphere (p, rp) against sphere (c, r): normal from p towards c (+z when they coincide).
fn sphere_sphere(p: DVec3, rp: f64, c: DVec3, r: f64) -> (DVec3, f64) {
    let d = c - p;
    let dist = d.length();
    let n = if dist > 0.0 { d / dist } else { DVec3::Z };
    (n, dist - rp - r)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn body(shape: BodyShape, position: [f64; 3]) -> BodyDesc {
        BodyDesc {
            shape,
            position,
            orientation: [0.0, 0.0, 0.0, 1.0],
            velocity: [0.0; 3],
            angular_velocity: [0.0; 3],
            material: 0,
            motion: super::super::Motion::Fixed,
            mass: 1.0,
            inertia: [1.0; 3],
            schedule: Vec::new(),
        }
    }

    fn slab() -> Placed {
        let half_extents = [0.05, 0.05, 0.005];
        Placed::of(&body(BodyShape::Box { half_extents }, [0.0, 0.0, 0.005]))
    }

    #[test]
    fn a_sphere_resting_on_a_box_touches_it() {
        let (n, gap) = slab().sphere_gap(DVec3::new(0.0, 0.0, 0.015), 0.005);
        assert!(gap.abs() <= touch_tolerance(0.005, 0.0709), "gap {gap}");
        assert!((n - DVec3::Z).length() < 1e-12);
        let (_, gap) = slab().sphere_gap(DVec3::new(0.0, 0.0, 0.014), 0.005);
        assert!((gap + 0.001).abs() < 1e-12, "gap {gap}");
    }

    #[test]
    fn a_box_holds_boxes_inside_it_only() {
        let s = slab();
        assert!(s.holds_box([-0.04, -0.04, 0.001], [0.04, 0.04, 0.009], 0.0));
        assert!(!s.holds_box([-0.04, -0.04, 0.011], [0.04, 0.04, 0.03], 0.0));
        // Inside the slab's bounding sphere, but not inside the slab.
        assert!(!s.holds_box([-0.01, -0.01, 0.011], [0.01, 0.01, 0.02], 0.0));
    }

    #[test]
    fn a_clump_holds_a_box_only_inside_one_member() {
        let c =
            bristlecone_cpu::clump::ClumpMass::new(&[[0.0, 0.0, 0.0, 0.1], [0.1, 0.0, 0.0, 0.1]])
                .unwrap();
        let clump = body(BodyShape::Clump(std::sync::Arc::new(c.clone())), [0.0; 3]);
        let p = Placed::of(&clump);
        // The members in world: the body frame is the centre of mass, at the origin.
        let Placed::Clump(m) = &p else { panic!() };
        let (a, r) = m[0];
        let lo = (a - DVec3::splat(0.03)).to_array();
        let hi = (a + DVec3::splat(0.03)).to_array();
        assert!(r > 0.09 && p.holds_box(lo, hi, 0.0));
        let between = (m[0].0 + m[1].0) * 0.5;
        let lo = (between - DVec3::new(0.08, 0.01, 0.01)).to_array();
        let hi = (between + DVec3::new(0.08, 0.01, 0.01)).to_array();
        assert!(!p.holds_box(lo, hi, 0.0));
    }
}
