//! Stage: time integration (`shaders/integrate.wgsl`). CPU twin: `reference::integrate`.

use crate::bodies::GpuBodies;
use crate::gpu::{buffers, GpuContext, GpuError, Kernel, ShaderSource};

#[repr(C)]
#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
pub struct StepParams {
    pub gravity_dt: [f32; 4],
    pub counts: [u32; 4],
}

pub struct Integrate {
    kernel: Kernel,
    params: wgpu::Buffer,
    bind: wgpu::BindGroup,
    count: u32,
}

impl Integrate {
    pub fn new(
        ctx: &GpuContext,
        bodies: &GpuBodies,
        gravity: [f32; 3],
        dt: f32,
    ) -> Result<Self, GpuError> {
        let kernel = Kernel::new(ctx, ShaderSource::by_name("integrate").unwrap())?;
        let p = StepParams {
            gravity_dt: [gravity[0], gravity[1], gravity[2], dt],
            counts: [bodies.count, 0, 0, 0],
        };
        let params = buffers::uniform_from(ctx, "integrate params", &p);
        let b = bodies;
        let bind = kernel.bind(
            ctx,
            &[
                &params,
                &b.pos,
                &b.rot,
                &b.vel,
                &b.omega,
                &b.mass_props,
                &b.force,
                &b.torque,
                &b.info,
            ],
        );
        Ok(Integrate {
            kernel,
            params,
            bind,
            count: bodies.count,
        })
    }

    /// Changes the time step (e.g. a last, shorter step).
    pub fn set_dt(&self, ctx: &GpuContext, gravity: [f32; 3], dt: f32) {
        let p = StepParams {
            gravity_dt: [gravity[0], gravity[1], gravity[2], dt],
            counts: [self.count, 0, 0, 0],
        };
        ctx.queue
            .write_buffer(&self.params, 0, bytemuck::bytes_of(&p));
    }

    pub fn record_free_velocity(&self, pass: &mut wgpu::ComputePass) {
        self.kernel
            .dispatch(pass, "free_velocity", &self.bind, self.count);
    }

    pub fn record_update_positions(&self, pass: &mut wgpu::ComputePass) {
        self.kernel
            .dispatch(pass, "update_positions", &self.bind, self.count);
    }
}
