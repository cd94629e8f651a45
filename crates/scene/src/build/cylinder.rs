//! `shape = "cylinder"` in `[[body]]`: its fields, and the boundaries it may meet (the
//! cylinder narrow phase covers every grain kind, planes, box and cylinder containers;
//! solid boxes, solid cylinders and meshes are refused with the field that brings them).

use super::*;

/// The gap between a cylinder and a sphere, box, capsule, hull or cylinder (the narrow
/// phase at zero envelope: the smallest point gap); infinity for clumps (checked per member
/// elsewhere) and other pairs.
pub(super) fn cylinder_gap(a: &BodyDesc, b: &BodyDesc) -> f64 {
    use bristlecone_cpu::reference::convex::Hull;
    use bristlecone_cpu::reference::cylinder::{cylinder_sphere, Cylinder};
    use bristlecone_cpu::reference::support::{cylinder_convex, Kind, Shape};
    let (c, x) = if matches!(a.shape, BodyShape::Cylinder { .. }) {
        (a, b)
    } else {
        (b, a)
    };
    let BodyShape::Cylinder {
        radius,
        half_length,
    } = c.shape
    else {
        return f64::INFINITY;
    };
    let pose = |d: &BodyDesc| {
        (
            DVec3::from_array(d.position),
            DQuat::from_array(d.orientation),
        )
    };
    let (pc, qc) = pose(c);
    let (px, qx) = pose(x);
    let hull;
    let kind = match &x.shape {
        BodyShape::Sphere { radius: rs } => {
            let cy = Cylinder::new(pc, qc, half_length, radius);
            let pts = cylinder_sphere(&cy, px, *rs, 0.0);
            return pts.first().map_or(f64::INFINITY, |p| p.gap);
        }
        BodyShape::Box { half_extents: h } => Kind::Box {
            h: DVec3::from_array(*h),
        },
        BodyShape::Capsule {
            radius,
            half_length,
        } => Kind::Capsule {
            r: *radius,
            hl: *half_length,
        },
        BodyShape::Cylinder {
            radius,
            half_length,
        } => Kind::Cylinder {
            r: *radius,
            hl: *half_length,
        },
        BodyShape::Convex(h) => {
            hull = Hull::new(px, qx, &h.grain_shape());
            Kind::Hull(&hull)
        }
        BodyShape::Clump(_) => return f64::INFINITY,
    };
    let shape = |kind, c: DVec3, q: DQuat, d: &BodyDesc| {
        Shape::grain(kind, c, q, d.shape.bounding_radius())
    };
    let cyl = Kind::Cylinder {
        r: radius,
        hl: half_length,
    };
    let m = cylinder_convex(&shape(cyl, pc, qc, c), &shape(kind, px, qx, x), 0.0);
    m.pts.iter().map(|p| p.gap).fold(f64::INFINITY, f64::min)
}
