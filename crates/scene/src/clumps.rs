//! `shape = "clump"` in `[[body]]` and `[[generator]]`: the member list, its validation
//! (file:line:field errors), the body frame (centre of mass, principal axes), generator
//! templates at random orientations, and the overlap test of explicit clumps.

use std::ops::Range;
use std::sync::Arc;

use glam::{DQuat, DVec3};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use super::gap::{touch_tolerance, Placed};
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

/// Penetration depth of two bodies of which one at least is a clump, when they overlap by
/// more than [`touch_tolerance`]: each member sphere against the other body's actual shape
/// (its members, for a clump). `None` for other pairs.
pub(super) fn overlap(a: &BodyDesc, b: &BodyDesc) -> Option<f64> {
    let (ca, cb) = (
        matches!(a.shape, BodyShape::Clump(_)),
        matches!(b.shape, BodyShape::Clump(_)),
    );
    if !(ca || cb) {
        return None;
    }
    let (ra, rb) = (a.shape.bounding_radius(), b.shape.bounding_radius());
    let (pa, pb) = (DVec3::from_array(a.position), DVec3::from_array(b.position));
    if pa.distance(pb) >= ra + rb {
        return None;
    }
    let (clump, other) = if ca { (a, b) } else { (b, a) };
    let Placed::Clump(members) = Placed::of(clump) else {
        return None;
    };
    let other = Placed::of(other);
    let gap = members
        .iter()
        .map(|&(c, r)| other.sphere_gap(c, r).1)
        .fold(f64::INFINITY, f64::min);
    (gap < -touch_tolerance(ra, rb)).then_some(-gap)
}
