//! The yardstick for kernel performance: a plain copy kernel's bandwidth on this adapter.
//! Kernels are reported as effective bandwidth ÷ this number, a ratio that carries over
//! between adapters where absolute times do not (book: Benchmarks).

use super::{buffers, GpuContext, GpuError, Kernel, ShaderSource};
use std::time::Instant;

/// `CopyParams` in shaders/copy.wgsl.
#[repr(C)]
#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
struct CopyParams {
    /// vec4 elements.
    count: u32,
    _pad: [u32; 3],
}

/// A copy of `n` `vec4<f32>` elements, ready to be timed.
pub struct CopyKernel {
    kernel: Kernel,
    bind: wgpu::BindGroup,
    n: u32,
}

impl CopyKernel {
    pub fn new(ctx: &GpuContext, n: u32) -> Result<Self, GpuError> {
        let kernel = Kernel::new(ctx, ShaderSource::by_name("copy").unwrap())?;
        let p = CopyParams {
            count: n,
            _pad: [0; 3],
        };
        let params = buffers::uniform_from(ctx, "copy params", &p);
        let src = buffers::storage_zeroed(ctx, "copy src", n as u64 * 16)?;
        let dst = buffers::storage_zeroed(ctx, "copy dst", n as u64 * 16)?;
        let bind = kernel.bind(ctx, &[&params, &src, &dst]);
        Ok(CopyKernel { kernel, bind, n })
    }

    /// Bytes moved by one copy (read + write).
    pub fn bytes(&self) -> u64 {
        self.n as u64 * 32
    }

    pub fn record(&self, pass: &mut wgpu::ComputePass) {
        self.kernel.dispatch(pass, "copy", &self.bind, self.n);
    }

    /// Seconds for `reps` copies in one submission, after a warm-up.
    pub fn time(&self, ctx: &GpuContext, reps: u32) -> f64 {
        let run = |reps: u32| {
            let mut enc = ctx.device.create_command_encoder(&Default::default());
            {
                let mut pass = enc.begin_compute_pass(&Default::default());
                for _ in 0..reps {
                    self.record(&mut pass);
                }
            }
            let t = Instant::now();
            ctx.queue.submit([enc.finish()]);
            ctx.wait();
            t.elapsed().as_secs_f64()
        };
        run(1);
        run(reps)
    }

    /// Bytes/s of the best of three timings of `reps` copies.
    fn best_bandwidth(&self, ctx: &GpuContext, reps: u32) -> f64 {
        let best = (0..3)
            .map(|_| self.time(ctx, reps))
            .fold(f64::MAX, f64::min);
        self.bytes() as f64 * reps as f64 / best
    }
}

/// Copy bandwidth in bytes/s over `n` vec4 elements (best of three timings).
pub fn copy_bandwidth(ctx: &GpuContext, n: u32, reps: u32) -> Result<f64, GpuError> {
    Ok(CopyKernel::new(ctx, n)?.best_bandwidth(ctx, reps))
}

/// Copy bandwidth with as many copies per submission as fill `min_seconds` (at least 5): on
/// a real GPU one copy of a few hundred MiB takes well under a millisecond, and a fixed
/// five would mostly time the submission.
pub fn copy_bandwidth_for(ctx: &GpuContext, n: u32, min_seconds: f64) -> Result<f64, GpuError> {
    let k = CopyKernel::new(ctx, n)?;
    let one = k.time(ctx, 1).max(1e-6);
    let reps = ((min_seconds / one).ceil() as u32).clamp(5, 2000);
    Ok(k.best_bandwidth(ctx, reps))
}

/// The uniform this stage shares with its shader has one layout on both sides.
#[cfg(test)]
#[test]
fn uniform_has_the_shaders_layout() {
    use crate::gpu::layout::{check, rust_words};
    check(
        "copy",
        "CopyParams",
        rust_words!(CopyParams { count, _pad }),
    );
}
