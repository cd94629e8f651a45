//! Cell states of the distributed model carried by patch key (book: Contact patches, `lugre_patch`): each
//! step's patches come sorted by key (A, B, feature), as the contact list; a patch found among
//! the previous step's keys takes its cells, a new one starts at rest (as the warm start and
//! the reduced model's saved record, `couple.rs`). GPU stage `shaders/patch_cells.wgsl`,
//! [`CellRemapGpu`]; CPU twin [`remap_cells`] (a copy: the two agree bit for bit).

use crate::gpu::{buffers, GpuContext, GpuError, Kernel, ShaderSource};

/// A patch's key: (body A, body B, feature), as `warm_key` of a contact.
pub type PatchKey = [u32; 3];

/// The cells (`cells` per patch, patch after patch) of the patches `keys` from those of the
/// previous step's patches `prev_keys` (both sorted, unique): found keys keep their cells,
/// new ones get zeros.
pub fn remap_cells(
    prev_keys: &[PatchKey],
    prev_z: &[[f32; 2]],
    keys: &[PatchKey],
    cells: usize,
) -> Vec<[f32; 2]> {
    assert_eq!(
        prev_z.len(),
        prev_keys.len() * cells,
        "cells per previous patch"
    );
    let mut out = Vec::with_capacity(keys.len() * cells);
    for key in keys {
        match prev_keys.binary_search(key) {
            Ok(k) => out.extend_from_slice(&prev_z[k * cells..(k + 1) * cells]),
            Err(_) => out.resize(out.len() + cells, [0.0; 2]),
        }
    }
    out
}

#[repr(C)]
#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
struct RemapParams {
    count: u32,
    prev_count: u32,
    cells: u32,
    _pad: u32,
}

/// The remap on the GPU: one invocation per new cell, a binary search over the previous keys.
pub struct CellRemapGpu {
    kernel: Kernel,
}

fn key4(k: &PatchKey) -> [u32; 4] {
    [k[0], k[1], k[2], 0]
}

impl CellRemapGpu {
    pub fn new(ctx: &GpuContext) -> Result<Self, GpuError> {
        let kernel = Kernel::new(ctx, ShaderSource::by_name("patch_cells").unwrap())?;
        Ok(CellRemapGpu { kernel })
    }

    /// The new cell buffer (`keys.len() × cells` deflections) from the previous one.
    pub fn remap(
        &self,
        ctx: &GpuContext,
        prev_keys: &[PatchKey],
        prev_z: &wgpu::Buffer,
        keys: &[PatchKey],
        cells: usize,
    ) -> Result<wgpu::Buffer, GpuError> {
        let n = keys.len() * cells;
        let z = buffers::storage_zeroed(ctx, "patch cells", 8 * n as u64)?;
        let p = RemapParams {
            count: keys.len() as u32,
            prev_count: prev_keys.len() as u32,
            cells: cells as u32,
            _pad: 0,
        };
        let uniform = buffers::uniform_from(ctx, "patch cells params", &p);
        let pk: Vec<[u32; 4]> = prev_keys.iter().map(key4).collect();
        let nk: Vec<[u32; 4]> = keys.iter().map(key4).collect();
        let pk = buffers::storage_from(ctx, "patch cells prev keys", &pk)?;
        let nk = buffers::storage_from(ctx, "patch cells keys", &nk)?;
        let bind = self.kernel.bind(ctx, &[&uniform, &pk, &nk, prev_z, &z]);
        let mut enc = ctx.device.create_command_encoder(&Default::default());
        {
            let mut pass = enc.begin_compute_pass(&Default::default());
            self.kernel.dispatch(&mut pass, "remap", &bind, n as u32);
        }
        ctx.queue.submit([enc.finish()]);
        Ok(z)
    }

    /// [`Self::remap`] from and to host memory (tests, checkpoint restore).
    pub fn remap_host(
        &self,
        ctx: &GpuContext,
        prev_keys: &[PatchKey],
        prev_z: &[[f32; 2]],
        keys: &[PatchKey],
        cells: usize,
    ) -> Result<Vec<[f32; 2]>, GpuError> {
        assert_eq!(
            prev_z.len(),
            prev_keys.len() * cells,
            "cells per previous patch"
        );
        let prev = buffers::storage_from(ctx, "patch cells prev", prev_z)?;
        let z = self.remap(ctx, prev_keys, &prev, keys, cells)?;
        buffers::read_buffer(ctx, &z, keys.len() * cells)
    }
}

#[repr(C)]
#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
struct WeightsParams {
    count: u32,
    n: u32,
    _pad: [u32; 2],
}

#[repr(C)]
#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
struct GpuPolygon {
    v: [[f32; 2]; 8],
    count: u32,
    _pad: [u32; 3],
}

/// Most vertices of a patch polygon (a box face clipped by another has at most 8).
pub const MAX_POLYGON: usize = 8;

/// A patch's cell grid from [`PolygonWeightsGpu`]: cell size, centre of pressure, weights.
#[derive(Clone, Debug, PartialEq)]
pub struct CellGrid {
    pub h: f32,
    pub cop: [f32; 2],
    /// `n × n` weights, Σ = 1 (all 0 for a polygon that covers no sub-sample).
    pub weights: Vec<f32>,
}

/// The per-step cell weights of lugre_patch contacts on the GPU (`shaders/patch_weights.wgsl`):
/// uniform pressure over each patch's polygon, as `PatchShape::new` with
/// `Pressure::Uniform(Outline::Polygon)` (the twin).
pub struct PolygonWeightsGpu {
    kernel: Kernel,
}

impl PolygonWeightsGpu {
    pub fn new(ctx: &GpuContext) -> Result<Self, GpuError> {
        let kernel = Kernel::new(ctx, ShaderSource::by_name("patch_weights").unwrap())?;
        Ok(PolygonWeightsGpu { kernel })
    }

    /// The `n × n` grids of `polygons` (patch frame, origin at the patch centre, 3 to
    /// [`MAX_POLYGON`] vertices each: more is an error, not a truncation).
    pub fn grids(
        &self,
        ctx: &GpuContext,
        polygons: &[Vec<[f64; 2]>],
        n: usize,
    ) -> Result<Vec<CellGrid>, String> {
        if n == 0 || n * n > 1 << 16 {
            return Err(format!("grid {n}x{n}: n must be >= 1, at most 65536 cells"));
        }
        let mut ps = Vec::with_capacity(polygons.len());
        for (k, p) in polygons.iter().enumerate() {
            if !(3..=MAX_POLYGON).contains(&p.len()) {
                return Err(format!(
                    "patch {k}: {} vertices (3 to {MAX_POLYGON})",
                    p.len()
                ));
            }
            let mut g = GpuPolygon {
                v: [[0.0; 2]; 8],
                count: p.len() as u32,
                _pad: [0; 3],
            };
            for (d, s) in g.v.iter_mut().zip(p) {
                *d = s.map(|x| x as f32);
            }
            ps.push(g);
        }
        self.run(ctx, &ps, n).map_err(|e| e.to_string())
    }

    fn run(
        &self,
        ctx: &GpuContext,
        ps: &[GpuPolygon],
        n: usize,
    ) -> Result<Vec<CellGrid>, GpuError> {
        let cells = n * n;
        let wp = WeightsParams {
            count: ps.len() as u32,
            n: n as u32,
            _pad: [0; 2],
        };
        let uniform = buffers::uniform_from(ctx, "patch weights params", &wp);
        let polys = buffers::storage_from(ctx, "patch polygons", ps)?;
        let w = buffers::storage_zeroed(ctx, "patch weights", 4 * (ps.len() * cells) as u64)?;
        let out = buffers::storage_zeroed(ctx, "patch weights out", 16 * ps.len() as u64)?;
        let bind = self.kernel.bind(ctx, &[&uniform, &polys, &w, &out]);
        let mut enc = ctx.device.create_command_encoder(&Default::default());
        {
            let mut pass = enc.begin_compute_pass(&Default::default());
            self.kernel
                .dispatch_groups(&mut pass, "weights_main", &bind, ps.len() as u32);
        }
        ctx.queue.submit([enc.finish()]);
        let w: Vec<f32> = buffers::read_buffer(ctx, &w, ps.len() * cells)?;
        let o: Vec<[f32; 4]> = buffers::read_buffer(ctx, &out, ps.len())?;
        Ok(o.iter()
            .zip(w.chunks(cells.max(1)))
            .map(|(o, w)| CellGrid {
                h: o[0],
                cop: [o[1], o[2]],
                weights: w.to_vec(),
            })
            .collect())
    }
}

/// The records this stage shares with its shaders have one layout on both sides.
#[cfg(test)]
#[test]
fn records_have_the_shaders_layout() {
    use crate::gpu::layout::{check, rust_words};
    let remap = rust_words!(RemapParams {
        count,
        prev_count,
        cells,
        _pad
    });
    check("patch_cells", "RemapParams", remap);
    check(
        "patch_weights",
        "WeightsParams",
        rust_words!(WeightsParams { count, n, _pad }),
    );
    check(
        "patch_weights",
        "Polygon",
        rust_words!(GpuPolygon { v, count, _pad }),
    );
}
