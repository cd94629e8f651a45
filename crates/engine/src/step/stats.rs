//! Stage: per-step statistics reduced on the GPU (`shaders/stats.wgsl`).

use crate::bodies::GpuBodies;
use crate::gpu::{buffers, GpuContext, GpuError, Kernel, ShaderSource, WORKGROUP_SIZE};

/// Totals over dynamic bodies, as reduced on the GPU.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct BodyTotals {
    pub kinetic_energy: f64,
    pub momentum: [f64; 3],
    pub angular_momentum: [f64; 3],
    pub max_speed: f64,
}

/// `StatsParams` in shaders/stats.wgsl.
#[repr(C)]
#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
struct StatsParams {
    bodies: u32,
    /// Partial sums: the workgroups of pass 1.
    groups: u32,
    _pad: [u32; 2],
}

pub struct Stats {
    kernel: Kernel,
    bind: wgpu::BindGroup,
    totals: wgpu::Buffer,
    count: u32,
}

impl Stats {
    pub fn new(ctx: &GpuContext, b: &GpuBodies) -> Result<Self, GpuError> {
        let kernel = Kernel::new(ctx, ShaderSource::by_name("stats").unwrap())?;
        let groups = b.count.div_ceil(WORKGROUP_SIZE).max(1);
        let p = StatsParams {
            bodies: b.count,
            groups,
            _pad: [0; 2],
        };
        let params = buffers::uniform_from(ctx, "stats params", &p);
        let partials = buffers::storage_zeroed(ctx, "stats partials", groups as u64 * 32)?;
        let totals = buffers::storage_zeroed(ctx, "stats totals", 32)?;
        let bind = kernel.bind(
            ctx,
            &[
                &params,
                &b.pos,
                &b.rot,
                &b.vel,
                &b.omega,
                &b.mass_props,
                &b.info,
                &partials,
                &totals,
            ],
        );
        Ok(Stats {
            kernel,
            bind,
            totals,
            count: b.count,
        })
    }

    pub fn record(&self, pass: &mut wgpu::ComputePass) {
        self.kernel
            .dispatch(pass, "reduce_bodies", &self.bind, self.count);
        self.kernel
            .dispatch_groups(pass, "reduce_partials", &self.bind, 1);
    }

    /// The 32-byte totals buffer, to copy into a readback ring.
    pub fn totals_buffer(&self) -> &wgpu::Buffer {
        &self.totals
    }

    pub fn decode(raw: &[[f32; 4]]) -> BodyTotals {
        let (a, b) = (raw[0], raw[1]);
        BodyTotals {
            kinetic_energy: a[0] as f64,
            momentum: [a[1] as f64, a[2] as f64, a[3] as f64],
            angular_momentum: [b[0] as f64, b[1] as f64, b[2] as f64],
            max_speed: b[3] as f64,
        }
    }

    pub fn read(&self, ctx: &GpuContext) -> Result<BodyTotals, GpuError> {
        Ok(Self::decode(&buffers::read_buffer::<[f32; 4]>(
            ctx,
            &self.totals,
            2,
        )?))
    }
}

/// The uniform this stage shares with its shader has one layout on both sides.
#[cfg(test)]
#[test]
fn uniform_has_the_shaders_layout() {
    use crate::gpu::layout::{check, rust_words};
    let params = rust_words!(StatsParams {
        bodies,
        groups,
        _pad
    });
    check("stats", "StatsParams", params);
}
