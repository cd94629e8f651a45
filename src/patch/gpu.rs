//! GPU stages of the patch models: `shaders/patch_step.wgsl` (distributed, one workgroup
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

/// The distributed model on the GPU: all patches' cell states in one buffer.
pub struct DistributedGpu {
    pub params: LugreParams,
    step: Kernel,
    steady: Kernel,
    cops: Vec<[f64; 2]>,
    count: usize,
    uniform: wgpu::Buffer,
    descs: wgpu::Buffer,
    weights: wgpu::Buffer,
    twists: wgpu::Buffer,
    z: wgpu::Buffer,
    out: wgpu::Buffer,
    bind: wgpu::BindGroup,
    shapes: Vec<super::PatchShape>,
    f_ns: Vec<f64>,
}

impl DistributedGpu {
    pub fn new(ctx: &GpuContext, params: LugreParams, patches: &[Patch]) -> Result<Self, GpuError> {
        let step = Kernel::new(ctx, ShaderSource::by_name("patch_step").unwrap())?;
        let steady = Kernel::new(ctx, ShaderSource::by_name("patch_steady").unwrap())?;
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
        fits(ctx, "patch weights", 4 * weights.len() as u64)?;
        let uniform =
            buffers::uniform_from(ctx, "patch params", &GpuParams::new(&params, 1e-3, 0, n));
        let descs_b = buffers::storage_from(ctx, "patch descs", &descs);
        let z = buffers::storage_zeroed(ctx, "patch z", 8 * weights.len() as u64)?;
        let weights_b = buffers::storage_from(ctx, "patch weights", &weights);
        let twists = buffers::storage_zeroed(ctx, "patch twists", 16 * n as u64)?;
        let out = buffers::storage_zeroed(ctx, "patch out", 48 * n as u64)?;
        let bind = step.bind(ctx, &[&uniform, &descs_b, &weights_b, &twists, &z, &out]);
        Ok(DistributedGpu {
            params,
            step,
            steady,
            cops: patches.iter().map(|p| p.shape.cop).collect(),
            count: n,
            uniform,
            descs: descs_b,
            weights: weights_b,
            twists,
            z,
            out,
            bind,
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

    /// Sets every patch's twist for the following steps.
    pub fn set_twists(&self, ctx: &GpuContext, twists: &[Twist]) {
        assert_eq!(twists.len(), self.count, "one twist per patch");
        let t: Vec<[f32; 4]> = twists.iter().map(twist4).collect();
        ctx.queue
            .write_buffer(&self.twists, 0, bytemuck::cast_slice(&t));
    }

    /// Records and submits `steps` steps under the current twists (no readback).
    pub fn run(&self, ctx: &GpuContext, steps: usize, dt: f64, int: Integrator) {
        let p = GpuParams::new(&self.params, dt, int_flag(int), self.count);
        ctx.queue
            .write_buffer(&self.uniform, 0, bytemuck::bytes_of(&p));
        let mut enc = ctx.device.create_command_encoder(&Default::default());
        {
            let mut pass = enc.begin_compute_pass(&Default::default());
            for _ in 0..steps {
                self.step
                    .dispatch_groups(&mut pass, "step", &self.bind, self.count as u32);
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
        let raw: Vec<[f32; 4]> = buffers::read_buffer(ctx, &self.out, 3 * self.count)?;
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
            if int == Integrator::Implicit {
                let (b, c) = (raw[3 * k + 1], raw[3 * k + 2]);
                let s = [b[0], b[1], b[2], b[3], c[0], c[1], c[2]].map(|x| x as f64);
                a.push(affine_from_sums(&s, self.f_ns[k]));
            }
        }
        Ok((w, a))
    }

    /// Current deflections of all cells, patch after patch.
    pub fn deflections(&self, ctx: &GpuContext) -> Result<Vec<[f32; 2]>, GpuError> {
        let n: usize = self.shapes.iter().map(|s| s.weights.len()).sum();
        buffers::read_buffer(ctx, &self.z, n)
    }

    /// Steady-state wrenches for `(patch, twist)` jobs; `unit_friction` evaluates with
    /// μ_c = μ_s = 1 and σ2 = 0 (the limit surface).
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
        let gp = GpuParams::new(&p, 1e-3, FLAG_STEADY, jobs.len());
        let uniform = buffers::uniform_from(ctx, "patch steady params", &gp);
        let js: Vec<SteadyJob> = jobs
            .iter()
            .map(|(k, t)| SteadyJob {
                twist: twist4(t),
                patch: *k as u32,
                _pad: [0; 3],
            })
            .collect();
        let jobs_b = buffers::storage_from(ctx, "patch steady jobs", &js);
        let out = buffers::storage_zeroed(ctx, "patch steady out", 16 * jobs.len() as u64)?;
        let bind = self
            .steady
            .bind(ctx, &[&uniform, &self.descs, &self.weights, &jobs_b, &out]);
        let mut enc = ctx.device.create_command_encoder(&Default::default());
        {
            let mut pass = enc.begin_compute_pass(&Default::default());
            self.steady
                .dispatch_groups(&mut pass, "steady", &bind, jobs.len() as u32);
        }
        ctx.queue.submit([enc.finish()]);
        let raw: Vec<[f32; 4]> = buffers::read_buffer(ctx, &out, jobs.len())?;
        Ok(raw
            .iter()
            .zip(jobs)
            .map(|(f, (k, _))| {
                Wrench::about_centre(f[0] as f64, f[1] as f64, f[2] as f64, self.cops[*k])
            })
            .collect())
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
        let descs_b = buffers::storage_from(ctx, "reduced descs", &descs);
        let table_b = buffers::storage_from(ctx, "reduced table", &table);
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
