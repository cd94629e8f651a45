//! `shape = "cylinder"` in `[[body]]`: its fields, and the partners it may meet (the
//! cylinder narrow phase covers spheres, planes, box and cylinder containers; other
//! scenes are refused with the field that brings the missing pair).

use super::*;

/// `shape = "cylinder"`: `radius` and `half_length` (axis along body z).
pub(super) fn cylinder_shape(
    cx: &Cx<'_>,
    b: &RawBody,
    span: &Range<usize>,
    base: &str,
    fields: &[(&str, Option<Range<usize>>)],
) -> R<BodyShape> {
    cx.only(
        base,
        "shape",
        "cylinder",
        fields,
        &["radius", "half_length"],
    )?;
    let get = |v, name| {
        let f = cx.require(v, span, base, name, "shape", "cylinder")?;
        cx.positive(f, &format!("{base}.{name}"))
    };
    Ok(BodyShape::Cylinder {
        radius: get(&b.radius, "radius")?,
        half_length: get(&b.half_length, "half_length")?,
    })
}

/// A cylinder meets only spheres and clumps: a second cylinder, or a box, capsule or hull
/// beside a cylinder, is refused at the later body.
pub(super) fn cylinder_bodies(cx: &Cx<'_>, bodies: &[BodyDesc], origins: &[Origin]) -> R<()> {
    let is_cyl = |b: &BodyDesc| matches!(b.shape, BodyShape::Cylinder { .. });
    let Some(c) = bodies.iter().position(is_cyl) else {
        return Ok(());
    };
    let other = |b: &BodyDesc| !matches!(b.shape, BodyShape::Sphere { .. } | BodyShape::Clump(_));
    let Some(k) = (0..bodies.len()).find(|&k| k != c && other(&bodies[k])) else {
        return Ok(());
    };
    let (j, i) = (c.max(k), c.min(k));
    Err(cx.err(
        Some(origins[j].span.clone()),
        format!("body[{j}].shape"),
        format!(
            "{} and {} defined on line {}: a cylinder meets only spheres and clumps yet (no \
             cylinder–box, –capsule, –hull or –cylinder narrow phase)",
            origins[j].label,
            origins[i].label,
            cx.line(&origins[i].span)
        ),
    ))
}

/// Cylinders meet the boundaries plane, box_container and cylinder_container only.
pub(super) fn cylinder_boundaries(
    cx: &Cx<'_>,
    raw: &RawScene,
    bodies: &[BodyDesc],
    boundaries: &[Boundary],
) -> R<()> {
    if !bodies
        .iter()
        .any(|b| matches!(b.shape, BodyShape::Cylinder { .. }))
    {
        return Ok(());
    }
    for (i, bd) in boundaries.iter().enumerate() {
        if !matches!(
            bd.shape,
            BoundaryShape::Plane
                | BoundaryShape::BoxContainer { .. }
                | BoundaryShape::CylinderContainer { .. }
        ) {
            let kind = &raw.boundary[i].get_ref().kind;
            return Err(cx.err(
                Some(kind.span()),
                format!("boundary[{i}].kind"),
                format!(
                    "cylinder bodies cannot meet a `{}` boundary yet (supported with cylinders: plane, box_container, cylinder_container)",
                    kind.get_ref()
                ),
            ));
        }
    }
    Ok(())
}

/// The gap between a cylinder and a sphere (the cylinder narrow phase at zero envelope);
/// other partners are refused by `cylinder_bodies`, so infinity.
pub(super) fn cylinder_gap(a: &BodyDesc, b: &BodyDesc) -> f64 {
    use crate::reference::cylinder::{cylinder_sphere, Cylinder};
    let (c, s) = match (&a.shape, &b.shape) {
        (BodyShape::Cylinder { .. }, BodyShape::Sphere { .. }) => (a, b),
        (BodyShape::Sphere { .. }, BodyShape::Cylinder { .. }) => (b, a),
        _ => return f64::INFINITY,
    };
    let (
        BodyShape::Cylinder {
            radius,
            half_length,
        },
        BodyShape::Sphere { radius: rs },
    ) = (&c.shape, &s.shape)
    else {
        return f64::INFINITY;
    };
    let q = DQuat::from_array(c.orientation);
    let cy = Cylinder::new(DVec3::from_array(c.position), q, *half_length, *radius);
    let pts = cylinder_sphere(&cy, DVec3::from_array(s.position), *rs, 0.0);
    pts.first().map_or(f64::INFINITY, |p| p.gap)
}
