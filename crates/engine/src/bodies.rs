//! Body storage: a structure of arrays, one `vec4` array per quantity, so every kernel
//! reads only what it needs with coalesced loads (128 bytes per body in all).
//!
//! Static and moving boundaries (planes, containers, meshes) are bodies too — fixed or
//! kinematic, with a boundary shape kind — so a wall's contacts, forces and prescribed
//! motion use the same machinery as grains.

use crate::gpu::{buffers, GpuContext, GpuError};

pub const MOTION_DYNAMIC: u32 = 0;
pub const MOTION_KINEMATIC: u32 = 1;
pub const MOTION_FIXED: u32 = 2;
/// A grain held out of the scene (an inflow's pool, or taken out by an outflow): collision,
/// integration and statistics skip it, outputs leave it out, until it is activated.
pub const MOTION_PARKED: u32 = 3;

/// The shape ids and the box's faces live with their families (`crate::shapes`).
pub use crate::shapes::cuboid::BOX_CORNER_FACES;
pub use crate::shapes::{
    is_grain_shape, SHAPE_BOX, SHAPE_BOX_CONTAINER, SHAPE_CAPSULE, SHAPE_CLUMP, SHAPE_CONVEX,
    SHAPE_CYLINDER, SHAPE_CYLINDER_CONTAINER, SHAPE_MESH, SHAPE_PLANE, SHAPE_SOLID_BOX,
    SHAPE_SOLID_CYLINDER, SHAPE_SPHERE,
};

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
        let m = density * 4.0 / 3.0 * std::f32::consts::PI * radius.powi(3);
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

/// The bodies on the GPU: one storage buffer per array of [`BodyState`].
pub struct GpuBodies {
    pub count: u32,
    pub pos: wgpu::Buffer,
    pub rot: wgpu::Buffer,
    pub vel: wgpu::Buffer,
    pub omega: wgpu::Buffer,
    pub mass_props: wgpu::Buffer,
    pub force: wgpu::Buffer,
    pub torque: wgpu::Buffer,
    pub info: wgpu::Buffer,
}

impl GpuBodies {
    pub fn upload(ctx: &GpuContext, s: &BodyState) -> Result<Self, GpuError> {
        let need = s.len() as u64 * 16;
        if need > ctx.max_binding() {
            return Err(GpuError::TooLarge {
                what: format!("{} bodies", s.len()),
                needed: need,
                limit: ctx.max_binding(),
            });
        }
        Ok(GpuBodies {
            count: s.len() as u32,
            pos: buffers::storage_from(ctx, "pos", &s.pos)?,
            rot: buffers::storage_from(ctx, "rot", &s.rot)?,
            vel: buffers::storage_from(ctx, "vel", &s.vel)?,
            omega: buffers::storage_from(ctx, "omega", &s.omega)?,
            mass_props: buffers::storage_from(ctx, "mass_props", &s.mass_props)?,
            force: buffers::storage_from(ctx, "force", &s.force)?,
            torque: buffers::storage_from(ctx, "torque", &s.torque)?,
            info: buffers::storage_from(ctx, "info", &s.info)?,
        })
    }

    /// Overwrites the GPU arrays with `s` (same body count).
    pub fn write(&self, ctx: &GpuContext, s: &BodyState) {
        assert_eq!(
            s.len() as u32,
            self.count,
            "body count is fixed for a GpuBodies"
        );
        let q = &ctx.queue;
        q.write_buffer(&self.pos, 0, bytemuck::cast_slice(&s.pos));
        q.write_buffer(&self.rot, 0, bytemuck::cast_slice(&s.rot));
        q.write_buffer(&self.vel, 0, bytemuck::cast_slice(&s.vel));
        q.write_buffer(&self.omega, 0, bytemuck::cast_slice(&s.omega));
        q.write_buffer(&self.mass_props, 0, bytemuck::cast_slice(&s.mass_props));
        q.write_buffer(&self.force, 0, bytemuck::cast_slice(&s.force));
        q.write_buffer(&self.torque, 0, bytemuck::cast_slice(&s.torque));
        q.write_buffer(&self.info, 0, bytemuck::cast_slice(&s.info));
    }

    pub fn download(&self, ctx: &GpuContext) -> Result<BodyState, GpuError> {
        let n = self.count as usize;
        let f = |b: &wgpu::Buffer| buffers::read_buffer::<[f32; 4]>(ctx, b, n);
        Ok(BodyState {
            pos: f(&self.pos)?,
            rot: f(&self.rot)?,
            vel: f(&self.vel)?,
            omega: f(&self.omega)?,
            mass_props: f(&self.mass_props)?,
            force: f(&self.force)?,
            torque: f(&self.torque)?,
            info: buffers::read_buffer::<[u32; 4]>(ctx, &self.info, n)?,
        })
    }

    /// Positions, orientations, velocities and kinds only (what output frames need: the
    /// kinds say which grains are parked).
    pub fn download_kinematics(&self, ctx: &GpuContext) -> Result<BodyState, GpuError> {
        let n = self.count as usize;
        let f = |b: &wgpu::Buffer| buffers::read_buffer::<[f32; 4]>(ctx, b, n);
        Ok(BodyState {
            pos: f(&self.pos)?,
            rot: f(&self.rot)?,
            vel: f(&self.vel)?,
            omega: f(&self.omega)?,
            info: buffers::read_buffer::<[u32; 4]>(ctx, &self.info, n)?,
            ..Default::default()
        })
    }
}
