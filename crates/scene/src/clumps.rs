//! `shape = "clump"` in `[[body]]` and `[[generator]]`: the member list, its validation
//! (file:line:field errors), the body frame (centre of mass, principal axes), generator
//! templates at random orientations, and the overlap test of explicit clumps.

use std::ops::Range;
use std::sync::Arc;

use glam::{DQuat, DVec3};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use super::joints::ErrFn;
use super::num::Num;
use super::raw::S;
use super::{BodyDesc, BodyShape, SceneError};
use bristlecone_cpu::clump::{ClumpError, ClumpMass};

type R<T> = Result<T, SceneError>;

/// The clump of a `spheres = [[x, y, z, r], …]` list (`base` = `body[i]` or `generator[i]`).
pub(super) fn clump_mass(err: ErrFn, list: &S<Vec<S<[f64; 4]>>>, base: &str) -> R<ClumpMass> {
    let spheres: Vec<[f64; 4]> = list.get_ref().iter().map(|s| *s.get_ref()).collect();
    let at = |k: usize| -> (Option<Range<usize>>, String) {
        (
            Some(list.get_ref()[k].span()),
            format!("{base}.spheres[{k}]"),
        )
    };
    ClumpMass::new(&spheres).map_err(|e| {
        let (span, field) = match e {
            ClumpError::Empty | ClumpError::TooMany(_) => {
                (Some(list.span()), format!("{base}.spheres"))
            }
            ClumpError::BadSphere(k) | ClumpError::Disconnected(k) => at(k),
        };
        let msg = match e {
            ClumpError::BadSphere(k) => format!(
                "a clump sphere needs a positive radius and a finite centre (got radius {})",
                Num(spheres[k][3])
            ),
            e => e.to_string(),
        };
        err(span, field, msg)
    })
}

/// A `[[body]]`'s clump shape.
pub(super) fn clump_shape(err: ErrFn, list: &S<Vec<S<[f64; 4]>>>, base: &str) -> R<BodyShape> {
    Ok(BodyShape::Clump(Arc::new(clump_mass(err, list, base)?)))
}

/// The body pose of a shape placed at (position, orientation): a clump's body frame is its
/// centre of mass and principal axes; other shapes keep the pose.
pub(super) fn body_frame(
    shape: &BodyShape,
    position: [f64; 3],
    orientation: [f64; 4],
) -> ([f64; 3], [f64; 4]) {
    match shape {
        BodyShape::Clump(c) => c.frame(position, orientation),
        BodyShape::Convex(c) => c.frame(position, orientation),
        _ => (position, orientation),
    }
}

/// Uniform random orientations (Shoemake), seeded: the k-th draw of a generator is a
/// function of its seed only.
pub(super) struct Orientations(ChaCha8Rng);

impl Orientations {
    pub(super) fn new(seed: u64) -> Self {
        Orientations(ChaCha8Rng::seed_from_u64(seed ^ 0xC1u64 << 56))
    }

    pub(super) fn next(&mut self) -> [f64; 4] {
        let (u1, u2, u3): (f64, f64, f64) = (self.0.random(), self.0.random(), self.0.random());
        let tau = std::f64::consts::TAU;
        let (a, b) = ((1.0 - u1).sqrt(), u1.sqrt());
        let q = DQuat::from_xyzw(
            a * (tau * u2).sin(),
            a * (tau * u2).cos(),
            b * (tau * u3).sin(),
            b * (tau * u3).cos(),
        );
        q.normalize().to_array()
    }
}

/// Members of body `d` in world: centre, radius (a sphere is its own member).
fn world_members(d: &BodyDesc) -> Vec<(DVec3, f64)> {
    let p = DVec3::from_array(d.position);
    let q = DQuat::from_array(d.orientation);
    match &d.shape {
        BodyShape::Clump(c) => c
            .members
            .iter()
            .map(|m| (p + q * DVec3::new(m[0], m[1], m[2]), m[3]))
            .collect(),
        BodyShape::Sphere { radius } => vec![(p, *radius)],
        BodyShape::Box { .. }
        | BodyShape::Capsule { .. }
        | BodyShape::Cylinder { .. }
        | BodyShape::Convex(_) => Vec::new(),
    }
}

/// Penetration depth of two bodies of which one at least is a clump, when they overlap
/// (member spheres against the other's spheres, box or capsule). `None` for other pairs.
pub(super) fn overlap(a: &BodyDesc, b: &BodyDesc) -> Option<f64> {
    use bristlecone_cpu::reference::boxes::{sphere_box, Obb};
    use bristlecone_cpu::reference::capsule::{capsule_sphere, Capsule};
    let (ca, cb) = (
        matches!(a.shape, BodyShape::Clump(_)),
        matches!(b.shape, BodyShape::Clump(_)),
    );
    if !(ca || cb) {
        return None;
    }
    let (pa, pb) = (DVec3::from_array(a.position), DVec3::from_array(b.position));
    if pa.distance(pb) >= a.shape.bounding_radius() + b.shape.bounding_radius() {
        return None;
    }
    let (clump, other) = if ca { (a, b) } else { (b, a) };
    let mut gap = f64::INFINITY;
    for (c, r) in world_members(clump) {
        match &other.shape {
            BodyShape::Box { half_extents } => {
                let obb = Obb::new(
                    DVec3::from_array(other.position),
                    DQuat::from_array(other.orientation),
                    DVec3::from_array(*half_extents),
                );
                if let Some(m) = sphere_box(c, r, &obb, 0.0) {
                    gap = gap.min(m.1);
                }
            }
            BodyShape::Capsule {
                radius,
                half_length,
            } => {
                let cap = Capsule::new(
                    DVec3::from_array(other.position),
                    DQuat::from_array(other.orientation),
                    *half_length,
                    *radius,
                );
                for p in capsule_sphere(&cap, c, r, 0.0) {
                    gap = gap.min(p.gap);
                }
            }
            _ => {
                for (c2, r2) in world_members(other) {
                    gap = gap.min(c.distance(c2) - r - r2);
                }
            }
        }
    }
    (gap < 0.0).then_some(-gap)
}
