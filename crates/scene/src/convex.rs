//! `shape = "convex"` in `[[body]]`: the hull of `points = [[x, y, z], …]` or of the
//! vertices of `file` (OBJ/STL), validated with file:line:field errors; the pairs the
//! narrow phase does not build yet are refused; the exact overlap test with spheres.

use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use glam::{DQuat, DVec3};

use super::joints::ErrFn;
use super::mesh::load_mesh;
use super::raw::RawBody;
use super::{BodyDesc, BodyShape, SceneError};
use bristlecone_cpu::convex::{ConvexHull, HullError};

type R<T> = Result<T, SceneError>;

/// A `[[body]]`'s convex shape: exactly one of `points` and `file` (the loader has refused
/// every other key).
pub(super) fn convex_shape(
    file: &Path,
    err: ErrFn,
    b: &RawBody,
    span: Range<usize>,
    base: &str,
) -> R<BodyShape> {
    let hull = match (&b.points, &b.file) {
        (Some(p), None) => {
            let pts: Vec<[f64; 3]> = p.get_ref().iter().map(|x| *x.get_ref()).collect();
            ConvexHull::new(&pts).map_err(|e| {
                let (s, f) = match e {
                    HullError::NonFinite(k) => {
                        (p.get_ref()[k].span(), format!("{base}.points[{k}]"))
                    }
                    _ => (p.span(), format!("{base}.points")),
                };
                err(Some(s), f, e.to_string())
            })?
        }
        (None, Some(f)) => {
            let rel = PathBuf::from(f.get_ref());
            let source = if rel.is_absolute() {
                rel
            } else {
                file.parent().unwrap_or(Path::new("")).join(rel)
            };
            let at = |m: String| err(Some(f.span()), format!("{base}.file"), m);
            let (vertices, _) = load_mesh(&source, 1.0).map_err(at)?;
            ConvexHull::new(&vertices)
                .map_err(|e| at(format!("the hull of `{}`: {e}", source.display())))?
        }
        (Some(p), Some(_)) => {
            return Err(err(
                Some(p.span()),
                format!("{base}.points"),
                "give either `points` or `file` for shape `convex`, not both".into(),
            ))
        }
        (None, None) => {
            return Err(err(
                Some(span),
                format!("{base}.points"),
                "shape `convex` needs `points = [[x, y, z], …]` or `file = \"part.obj|stl\"`"
                    .into(),
            ))
        }
    };
    Ok(BodyShape::Convex(Arc::new(hull)))
}

/// The gap of a hull and a sphere, capsule, hull or box (the narrow phase at zero envelope;
/// the smallest point gap of a manifold); infinity for other pairs (refused by
/// the scene builder or checked elsewhere).
pub(super) fn convex_gap(a: &BodyDesc, b: &BodyDesc) -> f64 {
    use bristlecone_cpu::reference::convex::{sphere_hull, Hull};
    let poly = |d: &BodyDesc| {
        let shape = match &d.shape {
            BodyShape::Convex(h) => h.grain_shape(),
            BodyShape::Box { half_extents } => {
                bristlecone_model::contact::BoundaryShape::GrainBox {
                    half_extents: half_extents.map(|v| v as f32),
                }
            }
            _ => return None,
        };
        let (c, q) = (
            DVec3::from_array(d.position),
            DQuat::from_array(d.orientation),
        );
        Some(Hull::new(c, q, &shape))
    };
    let radius = |d: &BodyDesc| match d.shape {
        BodyShape::Sphere { radius } => Some(radius),
        _ => None,
    };
    let capsule = |d: &BodyDesc| match d.shape {
        BodyShape::Capsule {
            radius,
            half_length,
        } => {
            let q = DQuat::from_array(d.orientation);
            let (c, ax) = (DVec3::from_array(d.position), q * DVec3::Z * half_length);
            Some((c - ax, c + ax, radius))
        }
        _ => None,
    };
    let min_gap = |m: bristlecone_cpu::reference::boxes::Manifold| {
        m.pts.iter().map(|p| p.gap).fold(f64::INFINITY, f64::min)
    };
    if let (Some(h), Some((p0, p1, r))) = (poly(a), capsule(b)) {
        return min_gap(bristlecone_cpu::reference::convex::capsule_hull(
            p0, p1, r, &h, 0.0,
        ));
    }
    if let (Some((p0, p1, r)), Some(h)) = (capsule(a), poly(b)) {
        return min_gap(bristlecone_cpu::reference::convex::capsule_hull(
            p0, p1, r, &h, 0.0,
        ));
    }
    match (poly(a), poly(b), radius(a), radius(b)) {
        (Some(ha), Some(hb), _, _) => min_gap(bristlecone_cpu::reference::polytope::polytope_pair(
            &ha, &hb, 1.0, 1.0, 0.0,
        )),
        (Some(h), None, _, Some(r)) => {
            sphere_hull(DVec3::from_array(b.position), r, &h, 0.0).map_or(f64::INFINITY, |m| m.1)
        }
        (None, Some(h), Some(r), _) => {
            sphere_hull(DVec3::from_array(a.position), r, &h, 0.0).map_or(f64::INFINITY, |m| m.1)
        }
        _ => f64::INFINITY,
    }
}
