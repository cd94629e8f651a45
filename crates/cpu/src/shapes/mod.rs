//! Grain shapes: one file per shape family (its f64 support function, bounding radius,
//! mass properties, surface for the VTK frames, and the narrow-phase routine its pairs
//! use), the body shape ids the kernels read, and one registry, [`FAMILIES`], that the
//! grain test, the scene loader (each family's `[[body]]` keys and [`BodyShape`]), the check
//! of the kernels' pair routine table and of the book's shape list read.
//!
//! A family's geometry is a [`Solid`] in its body frame; a convex shape needs only its
//! support function: its bounding radius, mass properties and surface then come from the
//! hull of its support points ([`support_hull`]), exact for a polytope whose vertices are
//! extreme along one of [`HULL_DIRECTIONS`]. The analytic families override all three.
//!
//! The GPU narrow phase has no function pointers: a pair's routine is the higher of its
//! two shapes' [`Routine`]s, chosen by one `switch` in `shaders/collide_pairs.wgsl`
//! (`pair_routine`, the ids checked against [`Routine`] by `step::shared_ids`).

use glam::DVec3;

mod body;
pub mod capsule;
pub mod clump;
pub mod convex;
pub mod cuboid;
pub mod cylinder;
pub mod sphere;

/// The shape ids are the vocabulary's (`bristlecone_model::body`).
pub use crate::model::body::{
    SHAPE_BOX, SHAPE_BOX_CONTAINER, SHAPE_CAPSULE, SHAPE_CLUMP, SHAPE_CONVEX, SHAPE_CYLINDER,
    SHAPE_CYLINDER_CONTAINER, SHAPE_MESH, SHAPE_PLANE, SHAPE_SOLID_BOX, SHAPE_SOLID_CYLINDER,
    SHAPE_SPHERE,
};

use crate::model::keys::KeyError;
pub use body::{hull_shape, BodyShape};

/// Whether a shape kind is a grain (a body the broad phase pairs), not a boundary: a
/// family of [`FAMILIES`].
pub fn is_grain_shape(kind: u32) -> bool {
    by_id(FAMILIES, kind).is_some()
}

/// Number of leading boundary bodies; every body after them must be a grain (sphere or box).
pub fn boundary_count(state: &crate::model::body::BodyState) -> usize {
    state
        .info
        .iter()
        .position(|i| is_grain_shape(i[2]))
        .unwrap_or(state.len())
}

/// The narrow-phase routine of a family's pairs, ranked: a pair runs the higher of its two
/// shapes' routines (a clump's member spheres against any grain, a cylinder's GJK against
/// any grain but a clump, ...), the order the kernel's routines take over each other.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
#[repr(u32)]
pub enum Routine {
    /// One contact between the bounding spheres.
    Sphere = 0,
    /// The oriented-box manifold (boxes and spheres).
    Box = 1,
    /// Segment closest points (capsules against spheres, boxes and capsules).
    Capsule = 2,
    /// The hull routines (SAT polytopes, sphere and capsule against a hull).
    Convex = 3,
    /// GJK between cores (`reference::support`): a cylinder against any grain.
    Cylinder = 4,
    /// Member spheres against the partner's routine.
    Clump = 5,
}

impl Routine {
    /// The routine of a pair of these two.
    pub fn of_pair(a: Routine, b: Routine) -> Routine {
        a.max(b)
    }
}

/// A body's surface in its body frame: points, and polygons as point indices
/// (counter-clockwise seen from outside), as the VTK frames write them.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Surface {
    pub points: Vec<[f32; 3]>,
    pub polygons: Vec<Vec<u32>>,
}

impl Surface {
    /// The points at a pose (centre, unit quaternion `[x, y, z, w]` body → world), in f32
    /// as the frames store them.
    pub fn posed(
        &self,
        centre: [f32; 3],
        rotation: [f32; 4],
    ) -> impl Iterator<Item = [f32; 3]> + '_ {
        let q = glam::Quat::from_array(rotation);
        let c = glam::Vec3::from_array(centre);
        self.points
            .iter()
            .map(move |&l| (c + q * glam::Vec3::from_array(l)).to_array())
    }
}

/// One grain's geometry, in its body frame (origin at the centre of mass, principal axes).
pub trait Solid {
    /// A point of the solid farthest along `d` (not necessarily unit).
    fn support(&self, d: DVec3) -> DVec3;
    /// Radius of a sphere about the origin that holds the solid.
    fn bounding_radius(&self) -> f64 {
        let h = hull_or_panic(self);
        h.vertices
            .iter()
            .map(|&v| (h.com + h.axes * v).length())
            .fold(0.0, f64::max)
    }
    /// Mass and principal moments of inertia at `density`.
    fn mass_properties(&self, density: f64) -> (f64, [f64; 3]) {
        hull_or_panic(self).mass_properties(density)
    }
    /// Its surface for the frames and pictures; `None`: drawn as spheres (its bounding
    /// sphere, or a clump's members).
    fn surface(&self) -> Option<Surface> {
        let h = hull_or_panic(self);
        Some(Surface {
            points: h
                .vertices
                .iter()
                .map(|&v| (h.com + h.axes * v).as_vec3().to_array())
                .collect(),
            polygons: h.faces.iter().map(|f| f.verts.clone()).collect(),
        })
    }
}

/// One shape family as the registry knows it.
pub trait ShapeFamily: Sync {
    /// The scene file's `shape`.
    fn name(&self) -> &'static str;
    /// Its body shape id (`info.z` of its bodies, `SHAPE_*` in the shaders).
    fn id(&self) -> u32;
    /// The narrow-phase routine its pairs use.
    fn routine(&self) -> Routine;
    /// The `[[body]]` keys that give its size (from [`SIZE_KEYS`]) or its data (`spheres`,
    /// `points`, `file`); the scene loader refuses every other.
    fn keys(&self) -> &'static [&'static str];
    /// Its shape from its size keys; `None` for a family given by data that the scene loader
    /// reads itself (a clump's `spheres`, a hull's `points` or `file`).
    fn parse(&self, keys: &dyn ShapeKeys) -> Option<Result<BodyShape, KeyError>>;
}

/// The size keys a `[[body]]` table gives a family through [`ShapeKeys`]: `radius`,
/// `half_length` and `height` are numbers, `half_extents` a vector.
pub const SIZE_KEYS: [&str; 4] = ["radius", "half_extents", "half_length", "height"];

/// A `[[body]]`'s size keys as the scene file gives them.
pub trait ShapeKeys {
    fn number(&self, key: &str) -> Option<f64>;
    fn vector(&self, key: &str) -> Option<[f64; 3]>;
}

/// A required number > 0.
pub fn positive(keys: &dyn ShapeKeys, key: &'static str) -> Result<f64, KeyError> {
    crate::model::keys::positive(key, keys.number(key))
}

/// The registry of grain shape families, in the order the scene reference lists them.
pub static FAMILIES: &[&dyn ShapeFamily] = &[
    &sphere::SphereFamily,
    &cuboid::BoxFamily,
    &capsule::CapsuleFamily,
    &cylinder::CylinderFamily,
    &clump::ClumpFamily,
    &convex::ConvexFamily,
];

/// The family a scene's `shape` names in `families` (the registry or an extension of it).
pub fn find<'a>(families: &[&'a dyn ShapeFamily], name: &str) -> Option<&'a dyn ShapeFamily> {
    families.iter().copied().find(|f| f.name() == name)
}

/// The names of `families`, in order, for a message: "sphere, box, ...".
pub fn names(families: &[&dyn ShapeFamily]) -> String {
    let names: Vec<&str> = families.iter().map(|f| f.name()).collect();
    names.join(", ")
}

/// The family of a body shape id in `families`.
pub fn by_id<'a>(families: &[&'a dyn ShapeFamily], id: u32) -> Option<&'a dyn ShapeFamily> {
    families.iter().copied().find(|f| f.id() == id)
}

/// The directions [`support_hull`] samples: the 6 axes, 12 edge and 8 corner directions
/// of a cube (every vertex of a box, an octahedron or a cuboctahedron in the body frame
/// is extreme along one of them).
pub const HULL_DIRECTIONS: usize = 26;

/// The hull of a solid's support points along [`HULL_DIRECTIONS`] directions: the solid
/// itself for a polytope whose vertices those directions reach, an inscribed polytope
/// otherwise (its volume a lower bound).
pub fn support_hull(s: &(impl Solid + ?Sized)) -> Result<convex::ConvexHull, convex::HullError> {
    let mut points: Vec<[f64; 3]> = Vec::with_capacity(HULL_DIRECTIONS);
    for x in -1..=1 {
        for y in -1..=1 {
            for z in -1..=1 {
                if (x, y, z) == (0, 0, 0) {
                    continue;
                }
                let p = s
                    .support(DVec3::new(x as f64, y as f64, z as f64))
                    .to_array();
                if !points.contains(&p) {
                    points.push(p);
                }
            }
        }
    }
    convex::ConvexHull::new(&points)
}

/// A solid given by its support alone must have a hull with volume: a flat or degenerate
/// support is a programming error of the family, not a scene's.
fn hull_or_panic(s: &(impl Solid + ?Sized)) -> convex::ConvexHull {
    support_hull(s).unwrap_or_else(|e| panic!("a support function's hull: {e}"))
}

/// The sign the support functions use: +1 at 0, so a direction in a shape's mid-plane
/// picks the positive side, as the kernels do.
pub(crate) fn sgn(x: f64) -> f64 {
    if x >= 0.0 {
        1.0
    } else {
        -1.0
    }
}
