//! Coloured Gauss–Seidel's slab correction (`[solver] coarse_slab`): after a sweep whose
//! residual fell by less than half, a Galerkin correction on one unknown per horizontal slab
//! of the bed, with the smoothed aggregation prolongator of the active contacts' normal
//! rows, kept when it lowers the cone problem's objective. Why and how it converges is in
//! the book (Solver depth, "The slab correction on the GPU"); the arithmetic is in
//! `shaders/solve_slabs_step.wgsl` (stall test, fine rows, coarse solve, trial, decision)
//! and `shaders/solve_slabs.wgsl` (the coarse problem, body by body, summed as integers);
//! the f64 twin is `reference::multilevel` (`Multilevel` with momentum, slabs, the normal
//! rows, ρ assumed, the gain check).
//!
//! Per cone problem: `slab_start` before the sweeps; per sweep, after `reduce_gauss`:
//! `slab_sweep_gain` and `slab_stall` (every sweep), then the correction's dispatches, each
//! indirect and empty unless the stall test scheduled one; `slab_finish` after the sweeps.

use super::{Solve, SolveInputs, SolveKernels};
use crate::gpu::{buffers, GpuContext, GpuError, Kernel};

/// Slab rows a coarse problem may have (`SLAB_MAX` in shaders/common/solve_slab.wgsl): the
/// span of its bodies' bases + 7. A taller bed skips the correction.
pub const SLAB_MAX: u64 = 512;
/// Words of the coarse accumulators and their vec4s rounded up to 256 bytes.
const COARSE_WORDS: u64 = 4 + 16 * SLAB_MAX;
const COARSE_VEC4S: u64 = COARSE_WORDS.div_ceil(64) * 16;
/// The header and the Cholesky rows, in vec4s (`SLAB_BODIES`).
const FIXED_VEC4S: u64 = 4 + 2 * SLAB_MAX;
const BODY_VEC4S: u64 = 9;
const ROW_VEC4S: u64 = 3;
/// Bytes of the correction's state (one binding) for `bodies` bodies and `capacity`
/// constraints: the coarse accumulators, the header and Cholesky rows, 144 B per body and
/// 48 B per constraint.
pub fn state_bytes(bodies: u64, capacity: u64) -> u64 {
    16 * (COARSE_VEC4S + FIXED_VEC4S + BODY_VEC4S * bodies + ROW_VEC4S * capacity)
}
/// The residual must fall below this × the one before a sweep, or the sweep stalled.
pub const STALL: f32 = 0.5;
/// The spectral radius ρ(D⁻¹A) the smoothing's ω = 4 / (3ρ) assumes: the power iteration
/// measures 2.4–2.9 on sphere columns (book: Solver depth), and over-estimating ρ only
/// damps the smoothing.
pub const ASSUMED_RADIUS: f32 = 3.0;
/// Byte offsets of the correction's indirect arguments in the solver's `args`
/// (`SLAB_ARGS_*` in shaders/common/solve_slab.wgsl), after Gauss–Seidel's.
const ARGS_ROWS: u64 = super::gauss::ARGS_BYTES;
const ARGS_BODIES: u64 = ARGS_ROWS + 16;
const ARGS_ONE: u64 = ARGS_BODIES + 16;
const ARGS_APPLY: u64 = ARGS_ONE + 16;
const ARGS_RESIDUAL: u64 = ARGS_APPLY + 16;
/// Bytes of the solver's `args` with the slab correction's.
pub(super) const ARGS_BYTES: u64 = ARGS_RESIDUAL + 16;

/// `SlabParams` of shaders/common/solve_slab.wgsl.
#[repr(C)]
#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
struct SlabParams {
    up: [f32; 4],
    cap: u32,
    stall: f32,
    omega: f32,
    rows_at: u32,
}

/// The slab correction's buffers.
pub(super) struct Slabs {
    /// Slab height (m).
    height: f32,
    /// Against gravity, unit (z up without gravity).
    up: [f32; 3],
    bodies: u32,
    capacity: u32,
    state: wgpu::Buffer,
    params: wgpu::Buffer,
    /// The `args` placeholder of the step stage's indirect dispatches.
    no_args: wgpu::Buffer,
}

impl Slabs {
    pub(super) fn new(
        ctx: &GpuContext,
        height: f32,
        bodies: u32,
        capacity: u32,
        cap: u32,
    ) -> Result<Slabs, GpuError> {
        let mut s = Slabs {
            height,
            up: [0.0, 0.0, 1.0],
            bodies,
            capacity: 0,
            state: buffers::storage_zeroed(ctx, "slab state", 16)?,
            params: buffers::uniform_from(ctx, "slab params", &[0u32; 8]),
            no_args: buffers::storage_zeroed(ctx, "slab args placeholder", 16)?,
        };
        s.grow(ctx, capacity, cap)?;
        Ok(s)
    }

    /// Bytes of the state for `capacity` constraints.
    fn bytes(&self, capacity: u32) -> u64 {
        state_bytes(self.bodies as u64, capacity as u64)
    }

    /// Room for `capacity` constraints (a new state: the totals restart).
    pub(super) fn grow(
        &mut self,
        ctx: &GpuContext,
        capacity: u32,
        cap: u32,
    ) -> Result<(), GpuError> {
        if capacity > self.capacity {
            self.state = buffers::storage_zeroed(ctx, "slab state", self.bytes(capacity))?;
            self.capacity = capacity;
        }
        self.write_params(ctx, cap);
        Ok(())
    }

    /// The direction of gravity (its opposite is "up"; z when there is none).
    pub(super) fn set_gravity(&mut self, ctx: &GpuContext, gravity: [f32; 3], cap: u32) {
        let g = glam::Vec3::from(gravity);
        self.up = if g.length() > 0.0 {
            (-g.normalize()).into()
        } else {
            [0.0, 0.0, 1.0]
        };
        self.write_params(ctx, cap);
    }

    fn write_params(&self, ctx: &GpuContext, cap: u32) {
        let p = SlabParams {
            up: [self.up[0], self.up[1], self.up[2], self.height],
            cap,
            stall: STALL,
            omega: 4.0 / (3.0 * ASSUMED_RADIUS),
            rows_at: (FIXED_VEC4S + BODY_VEC4S * self.bodies as u64) as u32,
        };
        ctx.queue
            .write_buffer(&self.params, 0, bytemuck::bytes_of(&p));
    }

    /// Corrections tried and kept since the state was made (reads the GPU: not for the step
    /// loop).
    pub(super) fn counts(&self, ctx: &GpuContext) -> Result<(u32, u32), GpuError> {
        let at = 16 * (COARSE_VEC4S + 2);
        let w = buffers::read_buffer_at::<u32>(ctx, &self.state, at, 2)?;
        Ok((w[0], w[1]))
    }
}

/// The slab stages' bind groups for one solve.
pub(super) struct SlabBinds {
    build: wgpu::BindGroup,
    /// The step stage with solve_reduce's `args` (the decisions, dispatched directly) and
    /// with the placeholder (the rest, dispatched from `args`).
    decide: wgpu::BindGroup,
    each: wgpu::BindGroup,
}

/// The two slab stages, compiled with the solver's constants.
pub(super) struct SlabKernels {
    build: Kernel,
    step: Kernel,
}

impl SlabKernels {
    pub(super) fn new(ctx: &GpuContext, consts: &[(&'static str, f64)]) -> Result<Self, GpuError> {
        let k = |name: &str| {
            Kernel::with_constants(
                ctx,
                crate::gpu::ShaderSource::by_name(name).expect("slab shader registered"),
                consts,
            )
        };
        Ok(SlabKernels {
            build: k("solve_slabs")?,
            step: k("solve_slabs_step")?,
        })
    }
}

impl Solve {
    /// The slab stages' bind groups; `None` without the correction.
    pub(super) fn bind_slabs(&self, ctx: &GpuContext, inputs: SolveInputs) -> Option<SlabBinds> {
        let slabs = self.slabs.as_ref()?;
        let k = self.slab_kernels(ctx);
        let c = &self.c;
        let state = &slabs.state;
        let coarse = 16 * COARSE_VEC4S;
        let rest = state.size() - coarse;
        let build = k.build.bind_ranges(
            ctx,
            &[
                &self.params,
                inputs.contacts,
                inputs.body_offsets,
                inputs.body_entries,
                &self.rot,
                &self.mass_props,
                &c.gam,
                &self.scal,
                state,
                state,
                &slabs.params,
            ],
            &[(8, coarse, rest), (9, 0, coarse)],
        );
        let step = |args: &wgpu::Buffer| {
            k.step.bind(
                ctx,
                &[
                    &self.params,
                    inputs.contacts,
                    inputs.body_offsets,
                    inputs.body_entries,
                    &self.rot,
                    &self.mass_props,
                    &c.gam,
                    &self.dv,
                    &c.rhs,
                    &c.partials,
                    &self.scal,
                    args,
                    &c.previous,
                    &self.pos,
                    state,
                    &slabs.params,
                ],
            )
        };
        Some(SlabBinds {
            build,
            decide: step(&self.args),
            each: step(&slabs.no_args),
        })
    }

    fn slab_kernels(&self, ctx: &GpuContext) -> &SlabKernels {
        let k: &SolveKernels = self.kernels(ctx);
        k.slabs
            .get_or_init(|| SlabKernels::new(ctx, &k.consts).expect("slab shaders compile"))
    }

    /// Before a cone problem's sweeps.
    pub(super) fn record_slab_start(
        &self,
        ctx: &GpuContext,
        p: &mut wgpu::ComputePass,
        b: &SlabBinds,
    ) {
        let k = self.slab_kernels(ctx);
        k.step.dispatch_indirect(
            p,
            "slab_start",
            &b.each,
            &self.args,
            super::gauss::ARGS_EXTRAPOLATE,
        );
    }

    /// After a sweep's `reduce_gauss`: the stall test, and the correction when it asks.
    pub(super) fn record_slab_correction(
        &self,
        ctx: &GpuContext,
        p: &mut wgpu::ComputePass,
        b: &SlabBinds,
        gauss: (&Kernel, (&wgpu::BindGroup, &[u32])),
    ) {
        let k = self.slab_kernels(ctx);
        let args = &self.args;
        let (step, build) = (&k.step, &k.build);
        step.dispatch_indirect(
            p,
            "slab_sweep_gain",
            &b.each,
            args,
            super::gauss::ARGS_EXTRAPOLATE,
        );
        step.dispatch_groups(p, "slab_stall", &b.decide, 1);
        step.dispatch_indirect(p, "slab_rows", &b.each, args, ARGS_ROWS);
        build.dispatch_indirect(p, "slab_bases", &b.build, args, ARGS_BODIES);
        build.dispatch_indirect(p, "slab_windows", &b.build, args, ARGS_ROWS);
        build.dispatch_indirect(p, "slab_sums", &b.build, args, ARGS_BODIES);
        build.dispatch_indirect(p, "slab_prolong", &b.build, args, ARGS_ROWS);
        build.dispatch_indirect(p, "slab_scale", &b.build, args, ARGS_BODIES);
        build.dispatch_indirect(p, "slab_add", &b.build, args, ARGS_BODIES);
        step.dispatch_indirect(p, "slab_solve", &b.each, args, ARGS_ONE);
        step.dispatch_indirect(p, "slab_trial", &b.each, args, ARGS_ROWS);
        step.dispatch_indirect(p, "slab_change", &b.each, args, ARGS_BODIES);
        step.dispatch_groups(p, "slab_decide", &b.decide, 1);
        step.dispatch_indirect(p, "slab_apply", &b.each, args, ARGS_APPLY);
        let (kernel, bind) = gauss;
        kernel.dispatch_indirect_at(p, "gauss_residual", bind, args, ARGS_RESIDUAL);
        step.dispatch_groups(p, "slab_residual", &b.decide, 1);
    }

    /// After a cone problem's sweeps: the corrections join the sweep count.
    pub(super) fn record_slab_finish(
        &self,
        ctx: &GpuContext,
        p: &mut wgpu::ComputePass,
        b: &SlabBinds,
    ) {
        self.slab_kernels(ctx)
            .step
            .dispatch_groups(p, "slab_finish", &b.decide, 1);
    }

    /// Slab corrections tried and kept since the correction was turned on (or the contact
    /// capacity grew); `None` without it. Reads the GPU: not for the step loop.
    pub fn slab_corrections(&self, ctx: &GpuContext) -> Result<Option<(u32, u32)>, GpuError> {
        self.slabs.as_ref().map(|s| s.counts(ctx)).transpose()
    }
}

/// The uniform has one layout in Rust and in its shader.
#[cfg(test)]
#[test]
fn slab_params_have_the_shaders_layout() {
    use crate::gpu::layout::{check, rust_words};
    check(
        "solve_slabs",
        "SlabParams",
        rust_words!(SlabParams {
            up,
            cap,
            stall,
            omega,
            rows_at
        }),
    );
}
