//! The bodies as the engine stores them: a structure of arrays, one `vec4` array per quantity,
//! so every kernel reads only what it needs with coalesced loads (128 bytes per body in all),
//! and the ids of a body's motion and shape kinds that the kernels and the CPU twins switch on.
//!
//! Static and moving boundaries (planes, containers, meshes) are bodies too — fixed or
//! kinematic, with a boundary shape kind — so a wall's contacts, forces and prescribed
//! motion use the same machinery as grains.

pub const MOTION_DYNAMIC: u32 = 0;
pub const MOTION_KINEMATIC: u32 = 1;
pub const MOTION_FIXED: u32 = 2;
/// A grain held out of the scene (an inflow's pool, or taken out by an outflow): collision,
/// integration and statistics skip it, outputs leave it out, until it is activated.
pub const MOTION_PARKED: u32 = 3;

/// Shape kinds (`info[2]` of a body). The grain families' geometry and registry are the CPU
/// crate's (`bristlecone_cpu::shapes`).
pub const SHAPE_SPHERE: u32 = 0;
pub const SHAPE_PLANE: u32 = 1;
pub const SHAPE_BOX_CONTAINER: u32 = 2;
pub const SHAPE_SOLID_BOX: u32 = 3;
pub const SHAPE_CYLINDER_CONTAINER: u32 = 4;
pub const SHAPE_SOLID_CYLINDER: u32 = 5;
pub const SHAPE_MESH: u32 = 6;
/// A box grain: half extents in the collide shape table at the body's shape index.
pub const SHAPE_BOX: u32 = 7;
/// A capsule grain (axis = body z): radius and half length in the collide shape table.
pub const SHAPE_CAPSULE: u32 = 9;
/// A clump grain (rigid aggregate of spheres): members in the collide shape table at the
/// body's shape index (`collide::BoundaryShape::GrainClump`); pos.w = bounding radius.
pub const SHAPE_CLUMP: u32 = 10;
/// A cylinder grain (axis = body z): radius and half length in the collide shape table.
pub const SHAPE_CYLINDER: u32 = 12;
/// A convex hull grain: vertices, face planes and loops in the collide shape table at the
/// body's shape index (`collide::BoundaryShape::GrainConvex`); pos.w = bounding radius.
pub const SHAPE_CONVEX: u32 = 11;

/// Host copy of every body, in the GPU layout.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct BodyState {
    /// Position xyz, w = bounding radius.
    pub pos: Vec<[f32; 4]>,
    /// Orientation, unit quaternion (x, y, z, w), body → world.
    pub rot: Vec<[f32; 4]>,
    /// Linear velocity (world), w unused.
    pub vel: Vec<[f32; 4]>,
    /// Angular velocity (world), w unused.
    pub omega: Vec<[f32; 4]>,
    /// Principal inverse inertia (body frame) xyz, w = inverse mass; zeros for fixed/kinematic.
    pub mass_props: Vec<[f32; 4]>,
    /// Applied force (world), w unused.
    pub force: Vec<[f32; 4]>,
    /// Applied torque (world), w unused.
    pub torque: Vec<[f32; 4]>,
    /// Motion kind, material index, shape kind, shape index.
    pub info: Vec<[u32; 4]>,
}

/// One body's initial values, for building a [`BodyState`] in code.
#[derive(Clone, Copy, Debug)]
pub struct BodyInit {
    pub position: [f32; 3],
    pub radius: f32,
    pub orientation: [f32; 4],
    pub velocity: [f32; 3],
    pub angular_velocity: [f32; 3],
    pub inv_mass: f32,
    pub inv_inertia: [f32; 3],
    pub motion: u32,
    pub material: u32,
    pub shape: u32,
    pub shape_index: u32,
}

impl BodyInit {
    /// A fixed boundary body at rest: `shape` kind, index into the boundary shapes, bounding
    /// radius `bound` (0 for unbounded shapes such as planes), identity orientation.
    pub fn fixed(shape: u32, shape_index: u32, position: [f32; 3], bound: f32) -> Self {
        BodyInit {
            position,
            radius: bound,
            orientation: [0.0, 0.0, 0.0, 1.0],
            velocity: [0.0; 3],
            angular_velocity: [0.0; 3],
            inv_mass: 0.0,
            inv_inertia: [0.0; 3],
            motion: MOTION_FIXED,
            material: 0,
            shape,
            shape_index,
        }
    }

    /// A dynamic solid sphere of the given density.
    pub fn sphere(position: [f32; 3], radius: f32, density: f32) -> Self {
        // r³ as products, not `powi(3)`: Rust leaves powi's rounding unspecified, and LLVM folds
        // it for a constant radius to the once-rounded cube but computes (r·r)·r at run time,
        // so the mass (and every result after it) would depend on whether the call is inlined.
        let m = density * 4.0 / 3.0 * std::f32::consts::PI * (radius * radius * radius);
        let i = 0.4 * m * radius * radius;
        BodyInit {
            position,
            radius,
            orientation: [0.0, 0.0, 0.0, 1.0],
            velocity: [0.0; 3],
            angular_velocity: [0.0; 3],
            inv_mass: 1.0 / m,
            inv_inertia: [1.0 / i; 3],
            motion: MOTION_DYNAMIC,
            material: 0,
            shape: SHAPE_SPHERE,
            shape_index: 0,
        }
    }
}

impl BodyState {
    pub fn len(&self) -> usize {
        self.pos.len()
    }

    pub fn is_empty(&self) -> bool {
        self.pos.is_empty()
    }

    pub fn push(&mut self, b: &BodyInit) {
        let [x, y, z] = b.position;
        self.pos.push([x, y, z, b.radius]);
        self.rot.push(b.orientation);
        self.vel
            .push([b.velocity[0], b.velocity[1], b.velocity[2], 0.0]);
        let w = b.angular_velocity;
        self.omega.push([w[0], w[1], w[2], 0.0]);
        let ii = b.inv_inertia;
        self.mass_props.push([ii[0], ii[1], ii[2], b.inv_mass]);
        self.force.push([0.0; 4]);
        self.torque.push([0.0; 4]);
        self.info
            .push([b.motion, b.material, b.shape, b.shape_index]);
    }

    pub fn from_inits(inits: &[BodyInit]) -> Self {
        let mut s = BodyState::default();
        for b in inits {
            s.push(b);
        }
        s
    }

    /// The f32 arrays in GPU binding order (pos, rot, vel, omega, mass_props, force, torque).
    fn float_arrays(&self) -> [&Vec<[f32; 4]>; 7] {
        [
            &self.pos,
            &self.rot,
            &self.vel,
            &self.omega,
            &self.mass_props,
            &self.force,
            &self.torque,
        ]
    }

    /// Raw bytes of every array, for checkpoints.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.len() * 128 + 8);
        out.extend_from_slice(&(self.len() as u64).to_le_bytes());
        for a in self.float_arrays() {
            out.extend_from_slice(bytemuck::cast_slice(a));
        }
        out.extend_from_slice(bytemuck::cast_slice(&self.info));
        out
    }

    /// Inverse of [`BodyState::to_bytes`]; `None` when the length does not match.
    pub fn from_bytes(bytes: &[u8]) -> Option<Self> {
        let n = u64::from_le_bytes(bytes.get(..8)?.try_into().ok()?) as usize;
        if bytes.len() != 8 + n.checked_mul(128)? {
            return None;
        }
        let chunk = |k: usize| &bytes[8 + k * n * 16..8 + (k + 1) * n * 16];
        let f = |k: usize| -> Vec<[f32; 4]> { bytemuck::pod_collect_to_vec(chunk(k)) };
        Some(BodyState {
            pos: f(0),
            rot: f(1),
            vel: f(2),
            omega: f(3),
            mass_props: f(4),
            force: f(5),
            torque: f(6),
            info: bytemuck::pod_collect_to_vec(chunk(7)),
        })
    }
}
