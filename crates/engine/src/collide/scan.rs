//! Exclusive prefix sum of a `u32` buffer on the GPU (`shaders/scan_exclusive.wgsl`):
//! a fixed-length, multi-level block scan (1024 elements per workgroup). Integer adds in a
//! fixed tree, so the result is deterministic.

use crate::gpu::{buffers, GpuContext, GpuError, Kernel};

/// Elements one workgroup scans.
pub const SCAN_BLOCK: u32 = 1024;

/// `ScanParams` in shaders/scan_exclusive.wgsl.
#[repr(C)]
#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
struct ScanParams {
    count: u32,
    _pad: [u32; 3],
}

/// The recorded levels of one scan of a given buffer and length.
pub struct Scan {
    /// (bind group, number of blocks) per level, finest first.
    levels: Vec<(wgpu::BindGroup, u32)>,
    /// Keeps the per-level buffers alive (sums and uniforms).
    _buffers: Vec<wgpu::Buffer>,
}

impl Scan {
    /// Prepares an in-place exclusive scan of the first `n` elements of `data`.
    pub fn new(
        ctx: &GpuContext,
        kernel: &Kernel,
        data: &wgpu::Buffer,
        n: u32,
    ) -> Result<Self, GpuError> {
        let mut levels = Vec::new();
        let mut keep = Vec::new();
        let mut n = n.max(1);
        let mut current = data.clone();
        loop {
            let blocks = n.div_ceil(SCAN_BLOCK);
            let sums = buffers::storage_zeroed(ctx, "scan sums", blocks as u64 * 4)?;
            let p = ScanParams {
                count: n,
                _pad: [0; 3],
            };
            let params = buffers::uniform_from(ctx, "scan params", &p);
            let bg = kernel.bind(ctx, &[&params, &current, &sums]);
            levels.push((bg, blocks));
            keep.push(params);
            keep.push(sums.clone());
            if blocks == 1 {
                break;
            }
            current = sums;
            n = blocks;
        }
        Ok(Scan {
            levels,
            _buffers: keep,
        })
    }

    /// Records the scan into a compute pass.
    pub fn record(&self, kernel: &Kernel, pass: &mut wgpu::ComputePass) {
        for (bg, blocks) in &self.levels {
            kernel.dispatch_groups(pass, "scan_block", bg, *blocks);
        }
        for (bg, blocks) in self.levels.iter().rev() {
            if *blocks > 1 {
                kernel.dispatch_groups(pass, "scan_add", bg, *blocks);
            }
        }
    }
}

/// The uniform this stage shares with its shader has one layout on both sides.
#[cfg(test)]
#[test]
fn uniform_has_the_shaders_layout() {
    use crate::gpu::layout::{check, rust_words};
    check(
        "scan_exclusive",
        "ScanParams",
        rust_words!(ScanParams { count, _pad }),
    );
}
