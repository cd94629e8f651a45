//! `shape = "convex"` in `[[body]]`: the hull of `points = [[x, y, z], …]` or of the
//! vertices of `file` (OBJ/STL), validated with file:line:field errors; the pairs the
//! narrow phase does not build yet are refused; the exact overlap test with spheres.

use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use glam::{DQuat, DVec3};

use super::joints::ErrFn;
use super::mesh::load_mesh;
use super::raw::{RawBody, RawScene};
use super::{BodyDesc, BodyShape, Boundary, BoundaryShape, SceneError};
use crate::convex::{ConvexHull, HullError};

type R<T> = Result<T, SceneError>;

/// A `[[body]]`'s convex shape: exactly one of `points` and `file`.
pub(super) fn convex_shape(
    file: &Path,
    err: ErrFn,
    b: &RawBody,
    span: Range<usize>,
    base: &str,
    fields: &[(&str, Option<Range<usize>>)],
) -> R<BodyShape> {
    for (name, s) in fields {
        if let (Some(s), false) = (s, ["points", "file"].contains(name)) {
            return Err(err(
                Some(s.clone()),
                format!("{base}.{name}"),
                format!("`{name}` does not apply to shape `convex` (it takes `points` or `file`)"),
            ));
        }
    }
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

/// Hull bodies meet spheres, planes and box containers only (the narrow phase built so
/// far): any other body shape or boundary kind in a scene with a hull is refused.
pub(super) fn convex_pairs(
    err: ErrFn,
    line: &dyn Fn(&Range<usize>) -> usize,
    raw: &RawScene,
    bodies: &[BodyDesc],
    origins: &[(String, Range<usize>)],
    boundaries: &[Boundary],
) -> R<()> {
    let Some(c) = bodies
        .iter()
        .position(|b| matches!(b.shape, BodyShape::Convex(_)))
    else {
        return Ok(());
    };
    let other = bodies
        .iter()
        .enumerate()
        .find(|&(k, b)| k != c && !matches!(b.shape, BodyShape::Sphere { .. }));
    if let Some((k, _)) = other {
        let (j, i) = (c.max(k), c.min(k));
        return Err(err(
            Some(origins[j].1.clone()),
            format!("body[{j}].shape"),
            format!(
                "{} and {} defined on line {}: a convex hull body meets only spheres, planes \
                 and box containers yet (no narrow phase for hulls against other hulls, boxes, \
                 capsules or clumps)",
                origins[j].0,
                origins[i].0,
                line(&origins[i].1)
            ),
        ));
    }
    for (i, bd) in boundaries.iter().enumerate() {
        if !matches!(
            bd.shape,
            BoundaryShape::Plane | BoundaryShape::BoxContainer { .. }
        ) {
            let kind = &raw.boundary[i].get_ref().kind;
            return Err(err(
                Some(kind.span()),
                format!("boundary[{i}].kind"),
                format!(
                    "convex hull bodies cannot meet a `{}` boundary yet (supported: plane, box_container)",
                    kind.get_ref()
                ),
            ));
        }
    }
    Ok(())
}

/// The gap of a hull and a sphere (the narrow phase at zero envelope); infinity for other
/// pairs (refused by [`convex_pairs`]).
pub(super) fn convex_gap(a: &BodyDesc, b: &BodyDesc) -> f64 {
    use crate::reference::convex::{sphere_hull, Hull};
    let (h, s) = match (&a.shape, &b.shape) {
        (BodyShape::Convex(h), BodyShape::Sphere { .. }) => (h, b),
        (BodyShape::Sphere { .. }, BodyShape::Convex(h)) => (h, a),
        _ => return f64::INFINITY,
    };
    let BodyShape::Sphere { radius } = s.shape else {
        return f64::INFINITY;
    };
    let d = if matches!(a.shape, BodyShape::Convex(_)) {
        a
    } else {
        b
    };
    let hull = Hull::new(
        DVec3::from_array(d.position),
        DQuat::from_array(d.orientation),
        &h.grain_shape(),
    );
    sphere_hull(DVec3::from_array(s.position), radius, &hull, 0.0).map_or(f64::INFINITY, |m| m.1)
}
