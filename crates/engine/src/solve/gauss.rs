//! Coloured nonsmooth Gauss–Seidel (`kind = "gauss_seidel"`): the constraints are coloured
//! so that no two of a colour share a moving body (Jones & Plassmann 1993, on the GPU
//! whenever the constraint graph changes), and a sweep visits the colours in order, each
//! constraint solving its block from its neighbours' impulses of the same sweep (Jean 1999;
//! Preclik & Rüde 2015) and writing its bodies' Δv at once. The arithmetic is in
//! `shaders/solve_gauss.wgsl`; the f64 twin is `reference::gauss_seidel`; why it takes
//! fewer sweeps than projected Jacobi and APGD on a deep bed is in the book (Solver depth).
//!
//! Per solve, after assembly: `colour_check` (does any constraint couple other moving
//! bodies than in the graph the stored colouring was computed for?), `colour_plan` (keep or
//! recolour) and solve_reduce's `colour_rounds_args`; then `colour_reset`,
//! [`COLOUR_ROUNDS`] Jones–Plassmann rounds and `colour_close` over every constraint when
//! recolouring and over none when the colouring is kept (the colours are a function of that
//! graph alone, so keeping them changes no bit; a bed at rest keeps them step after step);
//! then `colour_sort` every step (the constraints listed by colour, and each block's
//! majorant, which depends on the step's poses). What invalidates the stored graph is in
//! `shaders/solve_gauss.wgsl` and the book (Coloured Gauss–Seidel, "Keeping the
//! colouring"). Per cone problem, `colour_args` (solve_reduce) writes each colour's
//! indirect arguments from its count (zero once converged); per sweep, one dispatch per
//! colour over its list, the hubs' gather of Δv (`hub_gather`, a workgroup per hub: a body
//! with twice as many constraints as colours or more links nothing in the colouring and
//! takes a Jacobi step per sweep; book: Coloured Gauss–Seidel, "Hub bodies"), the left-over
//! class's gather of Δv (solve_schur, empty unless some constraint was left over; it covers
//! the hubs too, and the hubs' gather is then empty), the residual from the bodies' Δv, `reduce_gauss` (the stop
//! test and the momentum) and the extrapolation of γ and of the bodies' Δv in one dispatch.
//! With rolling or spinning resistance a contact's rows 3–5 are a second block stepped in
//! the contact's visit (same colour, same bodies).

use super::slabs::SlabBinds;
use super::{Layout, Solve, SolveInputs, SolveKernels};
use crate::gpu::{buffers, GpuContext, GpuError, Kernel};

/// The colour and round counts are the vocabulary's: the CPU twin reads them too.
pub use crate::model::solver::{COLOUR_ROUNDS, GS_COLOURS};
/// Phase uniforms: one per colour and per round.
const PHASES: u32 = if GS_COLOURS > COLOUR_ROUNDS {
    GS_COLOURS
} else {
    COLOUR_ROUNDS
};
/// Byte offset of colour 0's indirect arguments in the solver's `args` (`GS_ARGS` words).
const ARGS_COLOURS: u64 = 24 * 4;
/// The left-over class's gather of Δv, after the colours'.
const ARGS_LEFT_OVER_BODY: u64 = ARGS_COLOURS + 16 * GS_COLOURS as u64;
/// The extrapolation (one invocation per constraint and per body), after the gather's.
pub(super) const ARGS_EXTRAPOLATE: u64 = ARGS_LEFT_OVER_BODY + 16;
/// The colouring's reset, rounds and close: every constraint, or none while the stored
/// colouring is kept (solve_reduce `colour_rounds_args`).
const ARGS_RECOLOUR: u64 = ARGS_EXTRAPOLATE + 16;
/// The hubs' gather after a sweep's colours (a workgroup per hub; none when the left-over
/// class's gather covers every body).
const ARGS_HUBS: u64 = ARGS_RECOLOUR + 16;
/// Bytes of the solver's indirect arguments buffer.
pub(super) const ARGS_BYTES: u64 = ARGS_HUBS + 16;
/// Stride of the phase uniforms (the largest uniform offset alignment an adapter may ask).
const PHASE_STRIDE: u64 = 256;

/// Bytes per constraint of capacity of [`colour_buffer`]: its colour word, its list slot and
/// the stored graph's two bodies (one binding); the hubs' list adds [`hub_words`].
pub const COLOUR_BYTES_PER_CONSTRAINT: u64 = 16;

/// Words of the hubs' list (solve_gauss `max_hubs`): a hub has `GS_HUB_CONSTRAINTS` (32) or
/// more constraints and a constraint moves two bodies at most.
fn hub_words(capacity: u64) -> u64 {
    capacity * 2 / crate::model::solver::GS_HUB_CONSTRAINTS as u64 + 1
}
/// Bytes per constraint of capacity of [`previous_buffer`]: the previous sweep's impulse and
/// the block's majorant, a vec4 each (one binding).
pub const PREVIOUS_BYTES_PER_CONSTRAINT: u64 = 32;

/// For Gauss–Seidel, a colour word per constraint of capacity, the constraints listed by
/// colour (`colour_sort`), the graph the colours were computed for (two words per
/// constraint), its header and the hubs; else a placeholder. A new buffer is zeroed: its
/// header says no colouring is stored, so the first solve recolours.
pub(super) fn colour_buffer(
    ctx: &GpuContext,
    layout: Layout,
    capacity: u64,
) -> Result<wgpu::Buffer, GpuError> {
    let bytes = if layout.gauss {
        COLOUR_BYTES_PER_CONSTRAINT * capacity + 4 * (GRAPH_HEADER_WORDS + hub_words(capacity))
    } else {
        4
    };
    buffers::storage_zeroed(ctx, "solve colours", bytes)
}

/// Most constraints Gauss–Seidel's own arrays hold in one binding of `max_binding` bytes.
pub fn max_constraints(max_binding: u64) -> u64 {
    // 16 B and a sixteenth of a hub word per constraint: 65 words per 16 constraints.
    let words = max_binding / 4 - GRAPH_HEADER_WORDS - 1;
    (words * 16 / 65).min(max_binding / PREVIOUS_BYTES_PER_CONSTRAINT)
}

/// Words of the stored graph's header (solve_gauss `graph_header`: valid, constraints,
/// contacts, a spare word).
const GRAPH_HEADER_WORDS: u64 = 4;

/// The colour counts' words after the counts and claimed slots (`GS_*` in
/// shaders/common/solve.wgsl): whether the stored graph differs, whether this step
/// recolours (`GS_RECOLOUR`, the shaders' alone), the solves checked and kept, and the
/// hubs listed.
pub(crate) const GS_GRAPH_DIFFERS: u32 = 2 * GS_COLOURS;
pub(crate) const GS_STEPS_CHECKED: u32 = GS_GRAPH_DIFFERS + 2;
pub(crate) const GS_STEPS_KEPT: u32 = GS_GRAPH_DIFFERS + 3;
pub(crate) const GS_HUBS: u32 = GS_GRAPH_DIFFERS + 4;

/// Words of the colour counts: constraints per colour, the slots `colour_sort` claimed per
/// colour, then the words from [`GS_GRAPH_DIFFERS`] on.
pub(super) const COLOUR_COUNT_WORDS: u64 = GS_HUBS as u64 + 1;

/// Words per body of the solver's Δv: (linear, angular) vec4s, and for Gauss–Seidel the same
/// again for the previous sweep's Δv (its momentum extrapolates Δv per body).
pub fn dv_words_per_body(kind: super::SolverKind) -> u64 {
    if kind == super::SolverKind::GaussSeidel {
        16
    } else {
        8
    }
}

/// For Gauss–Seidel, the previous sweep's impulses per constraint of capacity (the
/// momentum's) and each block's diagonal majorant (set once per solve); else a placeholder.
pub(super) fn previous_buffer(
    ctx: &GpuContext,
    layout: Layout,
    capacity: u64,
) -> Result<wgpu::Buffer, GpuError> {
    let bytes = if layout.gauss {
        PREVIOUS_BYTES_PER_CONSTRAINT * capacity
    } else {
        16
    };
    buffers::storage_zeroed(ctx, "solve previous sweep", bytes)
}

/// One phase uniform (`Phase` in solve_gauss.wgsl): the colour a sweep's dispatch solves and
/// the round a colouring dispatch decides.
#[repr(C)]
#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
struct Phase {
    colour: u32,
    round: u32,
    _pad: [u32; 2],
}

/// The phase uniforms: slot k (256 B apart, bound at a dynamic offset) holds colour k of a
/// sweep and round k of the colouring.
pub(super) fn phase_buffer(ctx: &GpuContext) -> wgpu::Buffer {
    const WORDS: usize = (PHASE_STRIDE / 4) as usize;
    let mut words = [0u32; WORDS * PHASES as usize];
    for k in 0..PHASES {
        let phase = Phase {
            colour: k,
            round: k,
            _pad: [0; 2],
        };
        let at = k as usize * WORDS;
        words[at..at + 4].copy_from_slice(bytemuck::cast_slice(&[phase]));
    }
    buffers::uniform_from(ctx, "solve gauss phases", &words)
}

/// solve_gauss's bind group: the phase uniform is chosen per dispatch by its dynamic offset.
pub(super) struct GaussBinds {
    group: wgpu::BindGroup,
}

impl GaussBinds {
    /// The bind group with phase index k's uniform (colour k of a sweep, round k).
    fn phase(&self, k: u32) -> (&wgpu::BindGroup, &'static [u32]) {
        const OFFSETS: [u32; PHASES as usize] = {
            let mut o = [0u32; PHASES as usize];
            let mut k = 0;
            while k < PHASES as usize {
                o[k] = k as u32 * PHASE_STRIDE as u32;
                k += 1;
            }
            o
        };
        (&self.group, std::slice::from_ref(&OFFSETS[k as usize]))
    }
}

impl Solve {
    fn gauss_kernel<'k>(&self, k: &'k SolveKernels) -> Option<&'k Kernel> {
        k.gauss.as_ref().filter(|_| self.c.layout.gauss)
    }

    /// solve_gauss's bind group for this step's collision buffers; `None` for the other kinds.
    pub(super) fn bind_gauss(&self, ctx: &GpuContext, inputs: SolveInputs) -> Option<GaussBinds> {
        let kernel = self.gauss_kernel(self.kernels(ctx))?;
        let c = &self.c;
        let group = kernel.bind_ranges(
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
                inputs.counts,
                &self.jcsr,
                &c.nv,
                &c.rhs,
                &c.partials,
                &self.scal,
                &c.colour,
                &self.colour_count,
                &self.phases,
                &c.previous,
            ],
            &[(16, 0, 16)],
        );
        Some(GaussBinds { group })
    }

    /// The colouring of this step's constraints and their lists by colour (after assembly,
    /// before the first cone problem). With the colouring kept while the constraint graph
    /// is unchanged (the default), `colour_check` and `colour_plan` decide on the GPU whether
    /// the reset, rounds and close run over every constraint or over none; else they run
    /// every step.
    pub(super) fn record_colouring(
        &self,
        k: &SolveKernels,
        p: &mut wgpu::ComputePass,
        binds: &GaussBinds,
        red: &wgpu::BindGroup,
    ) {
        let kernel = self.gauss_kernel(k).expect("a Gauss–Seidel solve");
        let (args, all) = (&self.args, super::ARGS_ALL);
        let rounds = if self.colour_reuse {
            kernel.dispatch_indirect_at(p, "colour_check", binds.phase(0), args, all);
            kernel.dispatch_groups(p, "colour_plan", &binds.group, 1);
            k.reduce.dispatch_groups(p, "colour_rounds_args", red, 1);
            ARGS_RECOLOUR
        } else {
            all
        };
        kernel.dispatch_indirect_at(p, "colour_reset", binds.phase(0), args, rounds);
        for round in 0..COLOUR_ROUNDS {
            kernel.dispatch_indirect_at(p, "colour_round", binds.phase(round), args, rounds);
        }
        kernel.dispatch_indirect_at(p, "colour_close", binds.phase(0), args, rounds);
        kernel.dispatch_indirect_at(p, "colour_sort", binds.phase(0), args, all);
    }

    /// Whether the colouring is kept while the constraint graph is unchanged (the default)
    /// or recomputed every step, which gives the same colours (for tests and benchmarks).
    /// Turning it on forgets the stored colouring, whose graph was not kept up to date.
    pub fn set_colour_reuse(&mut self, ctx: &GpuContext, on: bool) {
        if on && !self.colour_reuse {
            self.forget_colouring(ctx);
        }
        self.colour_reuse = on;
    }

    /// Marks the stored colouring invalid, so that the next solve recolours: for what the
    /// colouring reads that the stored graph does not record (the joint lists).
    pub(super) fn forget_colouring(&self, ctx: &GpuContext) {
        if self.c.layout.gauss {
            let header = 4 * 4 * self.c.capacity as u64;
            ctx.queue.write_buffer(&self.c.colour, header, &[0u8; 4]);
        }
    }

    /// Gauss–Seidel solves recorded with the colouring check so far, and those among them
    /// that kept the stored colouring (reads the GPU: not for the step loop).
    pub fn colourings_kept(&self, ctx: &GpuContext) -> Result<(u32, u32), GpuError> {
        let words =
            buffers::read_buffer::<u32>(ctx, &self.colour_count, COLOUR_COUNT_WORDS as usize)?;
        let word = |k: u32| words[k as usize];
        Ok((word(GS_STEPS_CHECKED), word(GS_STEPS_KEPT)))
    }

    /// The hub bodies the last colouring listed (`colour_close`; reads the GPU: not for the
    /// step loop).
    pub fn gauss_hubs(&self, ctx: &GpuContext) -> Result<u32, GpuError> {
        let words =
            buffers::read_buffer::<u32>(ctx, &self.colour_count, COLOUR_COUNT_WORDS as usize)?;
        Ok(words[GS_HUBS as usize])
    }

    /// One cone problem's sweeps (Nγ, residual and scalar state set up), at most the sweep
    /// budget; γ stays in slot 0 throughout.
    pub(super) fn record_gauss_sweeps(
        &self,
        ctx: &GpuContext,
        k: &SolveKernels,
        p: &mut wgpu::ComputePass,
        (binds, slabs): (&GaussBinds, Option<&SlabBinds>),
        sch: &wgpu::BindGroup,
        red: &wgpu::BindGroup,
    ) {
        let kernel = self.gauss_kernel(k).expect("a Gauss–Seidel solve");
        let args = &self.args;
        let b = binds.phase(0);
        k.reduce.dispatch_groups(p, "colour_args", red, 1);
        if let Some(s) = slabs {
            self.record_slab_start(ctx, p, s);
        }
        for _ in 0..self.sweep_budget {
            for colour in 0..GS_COLOURS {
                let at = ARGS_COLOURS + 16 * colour as u64;
                kernel.dispatch_indirect_at(p, "gauss_phase", binds.phase(colour), args, at);
            }
            kernel.dispatch_indirect_at(p, "hub_gather", b, args, ARGS_HUBS);
            k.schur
                .dispatch_indirect(p, "gather_gamma", sch, args, ARGS_LEFT_OVER_BODY);
            kernel.dispatch_indirect_at(p, "gauss_residual", b, args, super::ARGS_WORK);
            k.reduce.dispatch_groups(p, "reduce_gauss", red, 1);
            if let Some(s) = slabs {
                self.record_slab_correction(ctx, p, s, (kernel, b));
            }
            kernel.dispatch_indirect_at(p, "gauss_extrapolate", b, args, ARGS_EXTRAPOLATE);
        }
        kernel.dispatch_indirect_at(p, "gauss_finish", b, args, super::ARGS_ALL);
        if let Some(s) = slabs {
            self.record_slab_finish(ctx, p, s);
        }
    }
}

/// The phase uniform has one layout in Rust and in its shader.
#[cfg(test)]
#[test]
fn phase_has_the_shaders_layout() {
    use crate::gpu::layout::{check, rust_words};
    check(
        "solve_gauss",
        "Phase",
        rust_words!(Phase {
            colour,
            round,
            _pad
        }),
    );
}
