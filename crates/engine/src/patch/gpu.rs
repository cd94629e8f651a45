//! GPU stages of the patch models: `shaders/patch_step.wgsl` (distributed, one invocation
//! per patch), `shaders/patch_steady.wgsl` (steady state and limit-surface tables) and
//! `shaders/patch_reduced.wgsl` (reduced, one invocation per patch). CPU twins:
//! [`super::cpu`].

use super::cpu::{affine_from_sums, Patch, ReducedPatch};
use super::limit::{self, LimitSurface};
use super::{AffineWrench, Integrator, LugreParams, Twist, Wrench};
use crate::gpu::{buffers, GpuContext, GpuError, Kernel, ShaderSource};

#[repr(C)]
#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
struct GpuParams {
    mu_c: f32,
    mu_s: f32,
    v_s: f32,
    gamma: f32,
    sigma0: f32,
    sigma1: f32,
    sigma2: f32,
    z_ba_ratio: f32,
    dt: f32,
    flags: u32,
    count: u32,
    _pad: u32,
}

const FLAG_EP: u32 = 1;
const FLAG_STABILITY: u32 = 2;
const FLAG_IMPLICIT: u32 = 4;
const FLAG_STEADY: u32 = 8;
/// Rate factors from the lagged twists (the second half of the twist buffer).
const FLAG_LINEARISED: u32 = 16;
/// Cells left as they are (the affine block only).
const FLAG_KEEP: u32 = 32;
/// Patches per workgroup of `patch_step.wgsl` (one invocation per patch).
const STEP_WG: u32 = 64;

impl GpuParams {
    fn new(p: &LugreParams, dt: f64, flags: u32, count: usize) -> Self {
        let mut f = flags;
        if p.elasto_plastic {
            f |= FLAG_EP;
        }
        if p.stability {
            f |= FLAG_STABILITY;
        }
        GpuParams {
            mu_c: p.mu_c as f32,
            mu_s: p.mu_s as f32,
            v_s: p.v_s as f32,
            gamma: p.gamma as f32,
            sigma0: p.sigma0 as f32,
            sigma1: p.sigma1 as f32,
            sigma2: p.sigma2 as f32,
            z_ba_ratio: p.z_ba_ratio as f32,
            dt: dt as f32,
            flags: f,
            count: count as u32,
            _pad: 0,
        }
    }
}

#[repr(C)]
#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
struct PatchDesc {
    nx: u32,
    ny: u32,
    offset: u32,
    _pad: u32,
    h: f32,
    f_n: f32,
    cop: [f32; 2],
}

#[repr(C)]
#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
struct SteadyJob {
    twist: [f32; 4],
    patch: u32,
    _pad: [u32; 3],
}

fn twist4(t: &Twist) -> [f32; 4] {
    [t.vx as f32, t.vy as f32, t.omega as f32, 0.0]
}

fn int_flag(int: Integrator) -> u32 {
    match int {
        Integrator::Explicit => 0,
        Integrator::Implicit => FLAG_IMPLICIT,
    }
}

/// One batch of consecutive patches whose buffers fit a storage binding: its own cell
/// buffers and bind group (lavapipe binds at most 128 MiB, 10⁵ patches of 21 × 21 need 350 MB
/// of deflections).
struct Chunk {
    /// Index of its first patch and the number of patches.
    first: usize,
    count: usize,
    cells: usize,
    uniform: wgpu::Buffer,
    descs: wgpu::Buffer,
    weights: wgpu::Buffer,
    twists: wgpu::Buffer,
    z: wgpu::Buffer,
    out: wgpu::Buffer,
    bind: wgpu::BindGroup,
}

impl Chunk {
    fn new(
        ctx: &GpuContext,
        step: &Kernel,
        params: &LugreParams,
        first: usize,
        patches: &[Patch],
    ) -> Result<Self, GpuError> {
        let mut descs = Vec::with_capacity(patches.len());
        let mut weights: Vec<f32> = Vec::new();
        for p in patches {
            let s = &p.shape;
            descs.push(PatchDesc {
                nx: s.nx as u32,
                ny: s.ny as u32,
                offset: weights.len() as u32,
                _pad: 0,
                h: s.h as f32,
                f_n: p.f_n as f32,
                cop: [s.cop[0] as f32, s.cop[1] as f32],
            });
            weights.extend(s.weights.iter().map(|&w| w as f32));
        }
        let n = patches.len();
        fits(ctx, "patch z", 8 * weights.len() as u64)?;
        fits(ctx, "patch out", 48 * n as u64)?;
        let uniform =
            buffers::uniform_from(ctx, "patch params", &GpuParams::new(params, 1e-3, 0, n));
        let descs_b = buffers::storage_from(ctx, "patch descs", &descs)?;
        let z = buffers::storage_zeroed(ctx, "patch z", 8 * weights.len() as u64)?;
        let weights_b = buffers::storage_from(ctx, "patch weights", &weights)?;
        // The twists, then the lagged twists of FLAG_LINEARISED.
        let twists = buffers::storage_zeroed(ctx, "patch twists", 32 * n as u64)?;
        let out = buffers::storage_zeroed(ctx, "patch out", 48 * n as u64)?;
        let bind = step.bind(ctx, &[&uniform, &descs_b, &weights_b, &twists, &z, &out]);
        Ok(Chunk {
            first,
            count: n,
            cells: weights.len(),
            uniform,
            descs: descs_b,
            weights: weights_b,
            twists,
            z,
            out,
            bind,
        })
    }
}

/// Splits `patches` into runs of at most `max_cells` cells each (a patch never splits).
fn chunk_ranges(patches: &[Patch], max_cells: usize) -> Vec<std::ops::Range<usize>> {
    let mut out = Vec::new();
    let (mut start, mut cells) = (0, 0);
    for (k, p) in patches.iter().enumerate() {
        let c = p.shape.weights.len();
        if k > start && cells + c > max_cells {
            out.push(start..k);
            (start, cells) = (k, 0);
        }
        cells += c;
    }
    if start < patches.len() {
        out.push(start..patches.len());
    }
    out
}

/// The distributed model on the GPU: the patches' cell states in chunks that each fit a
/// storage binding, dispatched one after the other in the same pass (each patch is one
/// independent invocation, so the results do not depend on the split).
pub struct DistributedGpu {
    pub params: LugreParams,
    step: Kernel,
    steady: Kernel,
    cops: Vec<[f64; 2]>,
    count: usize,
    chunks: Vec<Chunk>,
    shapes: Vec<super::PatchShape>,
    f_ns: Vec<f64>,
}

impl DistributedGpu {
    /// All patches, in as few chunks as the adapter's storage binding limit allows.
    pub fn new(ctx: &GpuContext, params: LugreParams, patches: &[Patch]) -> Result<Self, GpuError> {
        // The deflections (8 bytes a cell) are the largest per-chunk buffer.
        let max_cells = (ctx.max_binding() / 8) as usize;
        Self::with_chunk_cells(ctx, params, patches, max_cells)
    }

    /// As [`Self::new`] with chunks of at most `max_cells` cells (and one patch at least):
    /// smaller chunks test the split without 10⁵ patches.
    pub fn with_chunk_cells(
        ctx: &GpuContext,
        params: LugreParams,
        patches: &[Patch],
        max_cells: usize,
    ) -> Result<Self, GpuError> {
        let step = Kernel::new(ctx, ShaderSource::by_name("patch_step").unwrap())?;
        let steady = Kernel::new(ctx, ShaderSource::by_name("patch_steady").unwrap())?;
        let chunks = chunk_ranges(patches, max_cells)
            .into_iter()
            .map(|r| Chunk::new(ctx, &step, &params, r.start, &patches[r]))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(DistributedGpu {
            params,
            step,
            steady,
            cops: patches.iter().map(|p| p.shape.cop).collect(),
            count: patches.len(),
            chunks,
            shapes: patches.iter().map(|p| p.shape.clone()).collect(),
            f_ns: patches.iter().map(|p| p.f_n).collect(),
        })
    }

    pub fn len(&self) -> usize {
        self.count
    }

    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// Number of chunks the patches were split into.
    pub fn chunks(&self) -> usize {
        self.chunks.len()
    }

    /// Sets every patch's twist for the following steps.
    pub fn set_twists(&self, ctx: &GpuContext, twists: &[Twist]) {
        self.write_twists(ctx, twists, false);
    }

    /// The twists (`lagged` false) or the lagged twists of the linearised step.
    fn write_twists(&self, ctx: &GpuContext, twists: &[Twist], lagged: bool) {
        assert_eq!(twists.len(), self.count, "one twist per patch");
        for c in &self.chunks {
            let t: Vec<[f32; 4]> = twists[c.first..c.first + c.count]
                .iter()
                .map(twist4)
                .collect();
            let at = if lagged { 16 * c.count as u64 } else { 0 };
            ctx.queue
                .write_buffer(&c.twists, at, bytemuck::cast_slice(&t));
        }
    }

    /// Records and submits `steps` steps under the current twists (no readback).
    pub fn run(&self, ctx: &GpuContext, steps: usize, dt: f64, int: Integrator) {
        self.run_flags(ctx, steps, dt, int_flag(int));
    }

    fn run_flags(&self, ctx: &GpuContext, steps: usize, dt: f64, flags: u32) {
        for c in &self.chunks {
            let p = GpuParams::new(&self.params, dt, flags, c.count);
            ctx.queue
                .write_buffer(&c.uniform, 0, bytemuck::bytes_of(&p));
        }
        let mut enc = ctx.device.create_command_encoder(&Default::default());
        {
            let mut pass = enc.begin_compute_pass(&Default::default());
            for _ in 0..steps {
                for c in &self.chunks {
                    let groups = (c.count as u32).div_ceil(STEP_WG);
                    self.step
                        .dispatch_groups(&mut pass, "step", &c.bind, groups);
                }
            }
        }
        ctx.queue.submit([enc.finish()]);
    }

    /// One step under `twists`; returns the wrenches.
    pub fn step(
        &self,
        ctx: &GpuContext,
        twists: &[Twist],
        dt: f64,
        int: Integrator,
    ) -> Result<Vec<Wrench>, GpuError> {
        Ok(self.step_affine(ctx, twists, dt, int)?.0)
    }

    /// One step; for the implicit integrator also the affine form of the step's wrench in
    /// the twist (rate factors frozen at `twists`), what a solver row needs.
    pub fn step_affine(
        &self,
        ctx: &GpuContext,
        twists: &[Twist],
        dt: f64,
        int: Integrator,
    ) -> Result<(Vec<Wrench>, Vec<AffineWrench>), GpuError> {
        self.set_twists(ctx, twists);
        self.run(ctx, 1, dt, int);
        self.read_out(ctx, int == Integrator::Implicit)
    }

    /// The affine blocks of the next implicit step with the rate factors frozen at `lin`
    /// (a coupled solver's rows before its solve: `lin` = the last step's twists); the cells
    /// are left as they are. Twin: [`super::cpu::DistributedCpu::affine`].
    pub fn affine_at(
        &self,
        ctx: &GpuContext,
        lin: &[Twist],
        dt: f64,
    ) -> Result<Vec<AffineWrench>, GpuError> {
        self.set_twists(ctx, lin);
        self.write_twists(ctx, lin, true);
        self.run_flags(ctx, 1, dt, FLAG_IMPLICIT | FLAG_LINEARISED | FLAG_KEEP);
        Ok(self.read_out(ctx, true)?.1)
    }

    /// One implicit step under the solved `twists` with the rate factors frozen at `lin`
    /// (the cells' update after a coupled solve); returns the wrenches, which equal
    /// [`Self::affine_at`]`(lin)` evaluated at `twists`. Twin:
    /// [`super::cpu::DistributedCpu::step_linearised`].
    pub fn step_linearised(
        &self,
        ctx: &GpuContext,
        twists: &[Twist],
        lin: &[Twist],
        dt: f64,
    ) -> Result<Vec<Wrench>, GpuError> {
        self.set_twists(ctx, twists);
        self.write_twists(ctx, lin, true);
        self.run_flags(ctx, 1, dt, FLAG_IMPLICIT | FLAG_LINEARISED);
        Ok(self.read_out(ctx, false)?.0)
    }

    /// The last dispatch's wrenches and, with `affine`, its affine blocks.
    fn read_out(
        &self,
        ctx: &GpuContext,
        affine: bool,
    ) -> Result<(Vec<Wrench>, Vec<AffineWrench>), GpuError> {
        let mut raw: Vec<[f32; 4]> = Vec::with_capacity(3 * self.count);
        for c in &self.chunks {
            raw.extend(buffers::read_buffer::<[f32; 4]>(ctx, &c.out, 3 * c.count)?);
        }
        let mut w = Vec::with_capacity(self.count);
        let mut a = Vec::with_capacity(self.count);
        for k in 0..self.count {
            let f = raw[3 * k];
            w.push(Wrench::about_centre(
                f[0] as f64,
                f[1] as f64,
                f[2] as f64,
                self.cops[k],
            ));
            if affine {
                let (b, c) = (raw[3 * k + 1], raw[3 * k + 2]);
                let s = [b[0], b[1], b[2], b[3], c[0], c[1], c[2]].map(|x| x as f64);
                a.push(affine_from_sums(&s, self.f_ns[k]));
            }
        }
        Ok((w, a))
    }

    /// Current deflections of all cells, patch after patch.
    pub fn deflections(&self, ctx: &GpuContext) -> Result<Vec<[f32; 2]>, GpuError> {
        let mut out = Vec::new();
        for c in &self.chunks {
            out.extend(buffers::read_buffer::<[f32; 2]>(ctx, &c.z, c.cells)?);
        }
        Ok(out)
    }

    /// Steady-state wrenches for `(patch, twist)` jobs; `unit_friction` evaluates with
    /// μ_c = μ_s = 1 and σ2 = 0 (the limit surface). Each chunk evaluates its patches' jobs.
    pub fn steady(
        &self,
        ctx: &GpuContext,
        jobs: &[(usize, Twist)],
        unit_friction: bool,
    ) -> Result<Vec<Wrench>, GpuError> {
        let mut p = self.params;
        if unit_friction {
            p.mu_c = 1.0;
            p.mu_s = 1.0;
            p.sigma2 = 0.0;
        }
        assert!(
            jobs.iter().all(|j| j.0 < self.count),
            "steady job for a patch out of range"
        );
        let mut out = vec![Wrench::about_centre(0.0, 0.0, 0.0, [0.0; 2]); jobs.len()];
        for c in &self.chunks {
            let mine: Vec<usize> = (0..jobs.len())
                .filter(|&j| (c.first..c.first + c.count).contains(&jobs[j].0))
                .collect();
            let local: Vec<(usize, Twist)> = mine
                .iter()
                .map(|&j| (jobs[j].0 - c.first, jobs[j].1))
                .collect();
            let got = self.steady_chunk(ctx, c, &p, &local)?;
            for (j, f) in mine.into_iter().zip(got) {
                let k = jobs[j].0;
                out[j] = Wrench::about_centre(f[0], f[1], f[2], self.cops[k]);
            }
        }
        Ok(out)
    }

    /// Steady (f_x, f_y, τ about the centre) of jobs on the chunk's patches (local indices).
    fn steady_chunk(
        &self,
        ctx: &GpuContext,
        c: &Chunk,
        p: &LugreParams,
        jobs: &[(usize, Twist)],
    ) -> Result<Vec<[f64; 3]>, GpuError> {
        if jobs.is_empty() {
            return Ok(Vec::new());
        }
        fits(ctx, "patch steady out", 16 * jobs.len() as u64)?;
        let gp = GpuParams::new(p, 1e-3, FLAG_STEADY, jobs.len());
        let uniform = buffers::uniform_from(ctx, "patch steady params", &gp);
        let js: Vec<SteadyJob> = jobs
            .iter()
            .map(|(k, t)| SteadyJob {
                twist: twist4(t),
                patch: *k as u32,
                _pad: [0; 3],
            })
            .collect();
        let jobs_b = buffers::storage_from(ctx, "patch steady jobs", &js)?;
        let out = buffers::storage_zeroed(ctx, "patch steady out", 16 * jobs.len() as u64)?;
        let bind = self
            .steady
            .bind(ctx, &[&uniform, &c.descs, &c.weights, &jobs_b, &out]);
        let mut enc = ctx.device.create_command_encoder(&Default::default());
        {
            let mut pass = enc.begin_compute_pass(&Default::default());
            self.steady
                .dispatch_groups(&mut pass, "steady", &bind, jobs.len() as u32);
        }
        ctx.queue.submit([enc.finish()]);
        let raw: Vec<[f32; 4]> = buffers::read_buffer(ctx, &out, jobs.len())?;
        Ok(raw.iter().map(|f| [0, 1, 2].map(|i| f[i] as f64)).collect())
    }

    /// Every patch's limit surface, each table corner one steady-state job on the GPU.
    pub fn limit_surfaces(
        &self,
        ctx: &GpuContext,
        n_ls: usize,
    ) -> Result<Vec<LimitSurface>, GpuError> {
        let mut err = None;
        let out = limit::build_many(&self.shapes, n_ls, |jobs| {
            match self.steady(ctx, jobs, true) {
                Ok(w) => w,
                Err(e) => {
                    err = Some(e);
                    vec![
                        Wrench {
                            fx: 1.0,
                            fy: 0.0,
                            tau: 1.0,
                            tau_cop: 1.0
                        };
                        jobs.len()
                    ]
                }
            }
        });
        match err {
            Some(e) => Err(e),
            None => Ok(out),
        }
    }
}

#[repr(C)]
#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
struct ReducedDesc {
    r: f32,
    visc: f32,
    cop: [f32; 2],
    delta: [f32; 2],
    f_n: f32,
    n_ls: u32,
    offset: u32,
    ellipsoid: u32,
    _pad: [u32; 2],
}

/// The reduced model on the GPU: 3 states per patch, limit-surface tables in one buffer.
pub struct ReducedGpu {
    pub params: LugreParams,
    kernel: Kernel,
    cops: Vec<[f64; 2]>,
    count: usize,
    uniform: wgpu::Buffer,
    twists: wgpu::Buffer,
    out: wgpu::Buffer,
    bind: wgpu::BindGroup,
}

impl ReducedGpu {
    pub fn new(
        ctx: &GpuContext,
        params: LugreParams,
        patches: &[ReducedPatch],
    ) -> Result<Self, GpuError> {
        let kernel = Kernel::new(ctx, ShaderSource::by_name("patch_reduced").unwrap())?;
        let mut descs = Vec::with_capacity(patches.len());
        let mut table: Vec<[f32; 4]> = Vec::new();
        // Patches with the same surface share one table.
        let mut seen: std::collections::HashMap<Vec<u64>, u32> = std::collections::HashMap::new();
        for p in patches {
            let ls = &p.ls;
            let key: Vec<u64> = ls.points.iter().flatten().map(|x| x.to_bits()).collect();
            let offset = *seen.entry(key).or_insert_with(|| {
                let o = table.len() as u32;
                table.extend(
                    ls.points
                        .iter()
                        .map(|q| [q[0] as f32, q[1] as f32, q[2] as f32, 0.0]),
                );
                o
            });
            descs.push(ReducedDesc {
                r: ls.r as f32,
                visc: ls.visc as f32,
                cop: ls.cop.map(|x| x as f32),
                delta: ls.delta.map(|x| x as f32),
                f_n: p.f_n as f32,
                n_ls: ls.n_ls as u32,
                offset,
                ellipsoid: p.ellipsoid as u32,
                _pad: [0; 2],
            });
        }
        let n = patches.len();
        fits(ctx, "reduced table", 16 * table.len() as u64)?;
        fits(ctx, "reduced descs", 48 * n as u64)?;
        let uniform =
            buffers::uniform_from(ctx, "reduced params", &GpuParams::new(&params, 1e-3, 0, n));
        let descs_b = buffers::storage_from(ctx, "reduced descs", &descs)?;
        let table_b = buffers::storage_from(ctx, "reduced table", &table)?;
        let twists = buffers::storage_zeroed(ctx, "reduced twists", 16 * n as u64)?;
        let z = buffers::storage_zeroed(ctx, "reduced z", 16 * n as u64)?;
        let out = buffers::storage_zeroed(ctx, "reduced out", 16 * n as u64)?;
        let bind = kernel.bind(ctx, &[&uniform, &descs_b, &table_b, &twists, &z, &out]);
        Ok(ReducedGpu {
            params,
            kernel,
            cops: patches.iter().map(|p| p.ls.cop).collect(),
            count: n,
            uniform,
            twists,
            out,
            bind,
        })
    }

    pub fn set_twists(&self, ctx: &GpuContext, twists: &[Twist]) {
        assert_eq!(twists.len(), self.count, "one twist per patch");
        let t: Vec<[f32; 4]> = twists.iter().map(twist4).collect();
        ctx.queue
            .write_buffer(&self.twists, 0, bytemuck::cast_slice(&t));
    }

    /// Records and submits `steps` steps under the current twists (no readback).
    pub fn run(&self, ctx: &GpuContext, steps: usize, dt: f64, int: Integrator) {
        self.run_flags(ctx, steps, dt, int_flag(int));
    }

    fn run_flags(&self, ctx: &GpuContext, steps: usize, dt: f64, flags: u32) {
        let p = GpuParams::new(&self.params, dt, flags, self.count);
        ctx.queue
            .write_buffer(&self.uniform, 0, bytemuck::bytes_of(&p));
        let mut enc = ctx.device.create_command_encoder(&Default::default());
        {
            let mut pass = enc.begin_compute_pass(&Default::default());
            for _ in 0..steps {
                self.kernel
                    .dispatch(&mut pass, "reduced", &self.bind, self.count as u32);
            }
        }
        ctx.queue.submit([enc.finish()]);
    }

    fn read(&self, ctx: &GpuContext) -> Result<Vec<Wrench>, GpuError> {
        let raw: Vec<[f32; 4]> = buffers::read_buffer(ctx, &self.out, self.count)?;
        Ok(raw
            .iter()
            .zip(&self.cops)
            .map(|(f, c)| Wrench::about_cop(f[0] as f64, f[1] as f64, f[2] as f64, *c))
            .collect())
    }

    pub fn step(
        &self,
        ctx: &GpuContext,
        twists: &[Twist],
        dt: f64,
        int: Integrator,
    ) -> Result<Vec<Wrench>, GpuError> {
        self.set_twists(ctx, twists);
        self.run(ctx, 1, dt, int);
        self.read(ctx)
    }

    /// Steady-state wrenches (states untouched).
    pub fn steady(&self, ctx: &GpuContext, twists: &[Twist]) -> Result<Vec<Wrench>, GpuError> {
        self.set_twists(ctx, twists);
        self.run_flags(ctx, 1, 1e-3, FLAG_STEADY);
        self.read(ctx)
    }
}

/// An error instead of a wgpu validation panic when a buffer exceeds the binding limit.
fn fits(ctx: &GpuContext, what: &str, bytes: u64) -> Result<(), GpuError> {
    if bytes > ctx.max_binding() {
        return Err(GpuError::TooLarge {
            what: what.into(),
            needed: bytes,
            limit: ctx.max_binding(),
        });
    }
    Ok(())
}

/// The records this stage shares with its shaders have one layout on both sides.
#[cfg(test)]
#[test]
fn records_have_the_shaders_layout() {
    use crate::gpu::layout::{check, rust_words};
    let patch = rust_words!(GpuParams {
        mu_c,
        mu_s,
        v_s,
        gamma,
        sigma0,
        sigma1,
        sigma2,
        z_ba_ratio,
        dt,
        flags,
        count,
        _pad,
    });
    check("patch_step", "PatchParams", patch);
    check(
        "patch_step",
        "PatchDesc",
        rust_words!(PatchDesc {
            nx,
            ny,
            offset,
            _pad,
            h,
            f_n,
            cop
        }),
    );
    check(
        "patch_steady",
        "SteadyJob",
        rust_words!(SteadyJob { twist, patch, _pad }),
    );
    let reduced = rust_words!(ReducedDesc {
        r,
        visc,
        cop,
        delta,
        f_n,
        n_ls,
        offset,
        ellipsoid,
        _pad,
    });
    check("patch_reduced", "ReducedDesc", reduced);
}
