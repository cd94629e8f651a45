//! The bodies on the GPU: one storage buffer per array of the host copy [`BodyState`] (the
//! vocabulary's layout, `crate::model::body`), uploaded, overwritten and read back whole.

use crate::gpu::{buffers, GpuContext, GpuError};

/// The host copy of the bodies and the motion and shape ids are the vocabulary's.
pub use crate::model::body::{
    BodyInit, BodyState, MOTION_DYNAMIC, MOTION_FIXED, MOTION_KINEMATIC, MOTION_PARKED, SHAPE_BOX,
    SHAPE_BOX_CONTAINER, SHAPE_CAPSULE, SHAPE_CLUMP, SHAPE_CONVEX, SHAPE_CYLINDER,
    SHAPE_CYLINDER_CONTAINER, SHAPE_MESH, SHAPE_PLANE, SHAPE_SOLID_BOX, SHAPE_SOLID_CYLINDER,
    SHAPE_SPHERE,
};
/// The box's faces and the grain test live with the shape families (`crate::shapes`).
pub use crate::shapes::cuboid::BOX_CORNER_FACES;
pub use crate::shapes::is_grain_shape;

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
