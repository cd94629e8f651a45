//! Stage: time integration (`shaders/integrate.wgsl`). CPU twin: `reference::integrate`.

use crate::bodies::GpuBodies;
use crate::gpu::{buffers, GpuContext, GpuError, Kernel, ShaderSource};

#[repr(C)]
#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
pub struct StepParams {
    pub gravity: [f32; 3],
    pub dt: f32,
    pub bodies: u32,
    /// Grains (wrapped into a periodic cell) are the bodies from this one on.
    pub first_grain: u32,
    pub _pad: [u32; 2],
    /// The periodic cell (`collide::PeriodicCell::gpu`; zero periods: none).
    pub cell: [[f32; 4]; 4],
}

/// Byte offset in the params uniform of the Lees–Edwards offset δ at the end of the step
/// (the wrap's), which each step's commands copy in.
pub const SHEAR_OFFSET_BYTE: u64 = (std::mem::offset_of!(StepParams, cell) + 3 * 16 + 12) as u64;

pub struct Integrate {
    kernel: Kernel,
    params: wgpu::Buffer,
    bind: wgpu::BindGroup,
    count: u32,
    /// What `params` holds (rewritten whole by the setters).
    current: StepParams,
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
            gravity,
            dt,
            bodies: bodies.count,
            first_grain: 0,
            _pad: [0; 2],
            cell: [[0.0; 4]; 4],
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
            current: p,
        })
    }

    /// Wraps grains (bodies from `first_grain` on) into the periodic cell after each
    /// position update.
    pub fn set_periodic(
        &mut self,
        ctx: &GpuContext,
        cell: &crate::collide::PeriodicCell,
        first_grain: u32,
    ) {
        self.current.first_grain = first_grain;
        self.current.cell = cell.gpu(0.0);
        ctx.queue
            .write_buffer(&self.params, 0, bytemuck::bytes_of(&self.current));
    }

    pub fn params_buffer(&self) -> &wgpu::Buffer {
        &self.params
    }

    /// Changes the time step (e.g. a last, shorter step).
    pub fn set_dt(&mut self, ctx: &GpuContext, gravity: [f32; 3], dt: f32) {
        self.current.gravity = gravity;
        self.current.dt = dt;
        ctx.queue
            .write_buffer(&self.params, 0, bytemuck::bytes_of(&self.current));
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

/// The records this stage shares with its shaders have one layout on both sides.
#[cfg(test)]
#[test]
fn records_have_the_shaders_layout() {
    use crate::gpu::layout::{check, rust_words};
    check(
        "integrate",
        "StepParams",
        rust_words!(StepParams {
            gravity,
            dt,
            bodies,
            first_grain,
            _pad,
            cell
        }),
    );
}
