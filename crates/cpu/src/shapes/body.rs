//! A grain's shape as a scene gives it: one variant per family with a body shape of its own
//! on the GPU (its parameters in the shape table), and the hulls, which every family that
//! has no routine of its own becomes ([`hull_shape`]).

use super::{
    support_hull, Solid, SHAPE_BOX, SHAPE_CAPSULE, SHAPE_CLUMP, SHAPE_CONVEX, SHAPE_CYLINDER,
    SHAPE_SPHERE,
};
use crate::model::contact::BoundaryShape;
use crate::model::keys::KeyError;

/// A grain's shape in its body frame.
#[derive(Debug, Clone, PartialEq)]
pub enum BodyShape {
    Sphere {
        radius: f64,
    },
    /// Centred on the body's position, axes along the body frame.
    Box {
        half_extents: [f64; 3],
    },
    /// A segment of half length `half_length` along the body's z axis, centred on the
    /// body's position, swept by a sphere of `radius`.
    Capsule {
        radius: f64,
        half_length: f64,
    },
    /// A rigid aggregate of spheres; body frame = its centre of mass and principal axes
    /// (`members` are in that frame), see [`super::clump`].
    Clump(std::sync::Arc<super::clump::ClumpMass>),
    /// A solid cylinder of `radius` along the body's z axis from −half_length to
    /// +half_length, centred on the body's position.
    Cylinder {
        radius: f64,
        half_length: f64,
    },
    /// A convex hull; body frame = its centre of mass and principal axes (vertices and
    /// faces are in that frame), see [`super::convex`].
    Convex(std::sync::Arc<super::convex::ConvexHull>),
}

impl BodyShape {
    /// The shape's geometry, as its family computes it.
    pub fn with_solid<R>(&self, f: impl FnOnce(&dyn Solid) -> R) -> R {
        match *self {
            BodyShape::Sphere { radius } => f(&super::sphere::Sphere { radius }),
            BodyShape::Box { half_extents } => f(&super::cuboid::Cuboid { half_extents }),
            BodyShape::Capsule {
                radius,
                half_length,
            } => f(&super::capsule::Capsule {
                radius,
                half_length,
            }),
            BodyShape::Cylinder {
                radius,
                half_length,
            } => f(&super::cylinder::Cylinder {
                radius,
                half_length,
            }),
            BodyShape::Clump(ref c) => f(&**c),
            BodyShape::Convex(ref c) => f(&**c),
        }
    }

    /// Radius of a sphere around the body's origin that contains the shape.
    pub fn bounding_radius(&self) -> f64 {
        self.with_solid(|s| s.bounding_radius())
    }

    /// The same shape scaled by `s` about its body origin (same body frame).
    pub fn scaled(&self, s: f64) -> BodyShape {
        use std::sync::Arc;
        match self {
            BodyShape::Sphere { radius } => BodyShape::Sphere { radius: radius * s },
            BodyShape::Box { half_extents: h } => BodyShape::Box {
                half_extents: h.map(|x| x * s),
            },
            BodyShape::Capsule {
                radius,
                half_length,
            } => BodyShape::Capsule {
                radius: radius * s,
                half_length: half_length * s,
            },
            BodyShape::Cylinder {
                radius,
                half_length,
            } => BodyShape::Cylinder {
                radius: radius * s,
                half_length: half_length * s,
            },
            BodyShape::Clump(c) => BodyShape::Clump(Arc::new(c.scaled(s))),
            BodyShape::Convex(c) => BodyShape::Convex(Arc::new(c.scaled(s))),
        }
    }

    /// Its body shape id (`info.z` of its body, `SHAPE_*` in the shaders).
    pub fn id(&self) -> u32 {
        match self {
            BodyShape::Sphere { .. } => SHAPE_SPHERE,
            BodyShape::Box { .. } => SHAPE_BOX,
            BodyShape::Capsule { .. } => SHAPE_CAPSULE,
            BodyShape::Clump(_) => SHAPE_CLUMP,
            BodyShape::Cylinder { .. } => SHAPE_CYLINDER,
            BodyShape::Convex(_) => SHAPE_CONVEX,
        }
    }

    /// Its record in the collision stage's shape table, in f32; `None` for a sphere (its
    /// radius is its body's).
    pub fn grain_record(&self) -> Option<BoundaryShape> {
        let f = |x: f64| x as f32;
        Some(match self {
            BodyShape::Sphere { .. } => return None,
            BodyShape::Box { half_extents } => BoundaryShape::GrainBox {
                half_extents: half_extents.map(f),
            },
            BodyShape::Capsule {
                radius,
                half_length,
            } => BoundaryShape::GrainCapsule {
                radius: f(*radius),
                half_length: f(*half_length),
            },
            BodyShape::Cylinder {
                radius,
                half_length,
            } => BoundaryShape::GrainCylinder {
                radius: f(*radius),
                half_length: f(*half_length),
            },
            BodyShape::Clump(c) => BoundaryShape::GrainClump {
                members: c.members.iter().map(|m| m.map(f)).collect(),
            },
            BodyShape::Convex(c) => c.grain_shape(),
        })
    }

    /// Mass and principal moments of inertia (body frame) of the solid shape, analytic.
    pub fn mass_properties(&self, density: f64) -> (f64, [f64; 3]) {
        self.with_solid(|s| s.mass_properties(density))
    }
}

/// A convex family with no GPU routine of its own enters a scene as the hull of its support
/// points ([`support_hull`]: exact for a polytope whose vertices the sampled directions
/// reach), which the hull routines collide; a flat or degenerate support is refused at
/// `key`, the key that sized it.
pub fn hull_shape(solid: &(impl Solid + ?Sized), key: &'static str) -> Result<BodyShape, KeyError> {
    support_hull(solid)
        .map(|h| BodyShape::Convex(std::sync::Arc::new(h)))
        .map_err(|e| KeyError::invalid(key, format!("the shape's hull: {e}")))
}
