//! Stage: the cone complementarity (CCP) contact solver (book: Architecture, "The step"), projected Jacobi or
//! APGD, matrix-free, entirely on the GPU. CPU twin: `reference::solve`; independent oracle for
//! small problems: `reference::oracle`.
//!
//! One [`Solve::record`] records, with no CPU round-trip:
//!
//! 1. `solve_reduce::init_args` — contact count from `counts[0]` (clamped to the capacity),
//!    indirect dispatch arguments, scalar state reset;
//! 2. `solve_assemble::assemble` — `p_i`, `η_i = 3/trace(B_ii)` (N_ii with each body's inverse
//!    mass and inertia times its contact count: a bound N ≤ diag(3/η) that makes Jacobi
//!    convergent for ω < 2/3 and preconditions APGD), warm-started `γ⁰`;
//! 3. setup product `Nγ⁰` (and, for APGD, `N(γ⁰ − 1)` for the initial Lipschitz estimate);
//! 4. up to `max_iterations` sweeps (the sweep budget, see [`Solve::set_sweep_budget`]) of 4
//!    dispatches, each `step → gather (Δv per body) → product (+ partial sums) → reduce (one
//!    workgroup: scalar logic; converged once the RMS residual per row is below the
//!    tolerance)`; an accepted trial becomes the iterate by renaming slots
//!    (shaders/common/solve_roles.wgsl), and `finish` puts the returned one in slot 0.
//!    Sweeps after convergence are dispatched with zero workgroups (the reduce kernel zeroes
//!    the indirect arguments), so they cost a few empty dispatches each and never a CPU sync;
//! 5. the returned impulses (APGD: the iterate with the smallest residual), `v⁺ = v* + M⁻¹Dγ`,
//!    the warm-start data (keys (B, feature) and γ by contact, `save_warm`; per-body rows
//!    for A, `save_rows`) and the statistics.
//!
//! Every "iteration" counted and reported is one sweep, i.e. one matrix-free product; a
//! rejected APGD backtracking trial (L ← 2L) counts as an iteration too, so iteration counts of
//! Jacobi and APGD compare like for like in work.

pub mod gauss;
mod slabs;
pub use slabs::{state_bytes as slab_state_bytes, SLAB_MAX};

/// The settings' friction model and cone are the vocabulary's (`crate::model`).
pub use crate::model::friction::FrictionModel;
use crate::model::rows;
pub use crate::model::rows::Cone;

use crate::bodies::GpuBodies;
use crate::gpu::kernel::grid;
use crate::gpu::{buffers, GpuContext, GpuError, Kernel, ShaderSource, WORKGROUP_SIZE};
use crate::joints::WORLD;
use std::sync::OnceLock;

/// Rows per contact in the main slot: normal + 2 tangential (rolling and spinning rows 3–5
/// live in extension segments that exist only when a material has them; see [`rows`]).
pub const ROWS: usize = 3;

/// The contact record (`Contact`) and the solver's settings are the vocabulary's.
pub use crate::model::solver::{Contact, SolverKind, SolverSettings};

/// The solver's uniform (`SolveParams` in shaders/common/solve.wgsl, where each field says
/// what reads it).
#[repr(C)]
#[derive(Clone, Copy, Debug, bytemuck::Pod, bytemuck::Zeroable)]
struct SolveParams {
    bodies: u32,
    /// Contact capacity: the length of each segment of `gam` and `nv`.
    capacity: u32,
    /// 0 projected Jacobi (and Gauss–Seidel's scalar logic), 1 APGD.
    kind: u32,
    warm_start: u32,
    dt: f32,
    omega: f32,
    recovery_speed: f32,
    /// RMS per row (m/s); solve_iterate's velocity threshold too.
    tolerance: f32,
    /// 1 when a material has a non-Coulomb model.
    has_models: u32,
    /// Entries of the model table.
    materials: u32,
    /// 1 when the table has a stateful model (the state segment exists).
    has_state: u32,
    /// Joint blocks appended after the contacts this step.
    joint_blocks: u32,
    slop: f32,
    /// β of a rigid contact's penetration.
    stabilisation: f32,
    /// The sweep cap (solve_fused's loop bound).
    sweep_cap: f32,
    /// Loop iterations one invocation of solve_fused / solve_tail may run per dispatch
    /// ([`Solve::loop_budget`]; 0: no bound).
    loop_budget: f32,
    /// Lees–Edwards: xyz = the flow axis (unit; zero without shear). A contact's rb.w from
    /// collision is then the flow velocity of B's image relative to B (`collide::periodic`).
    shear_flow: [f32; 4],
}

/// The scalar state of the GPU solver (layout of `Scalars` in the shaders).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
pub struct SolverScalars {
    pub lip: f32,
    pub theta: f32,
    pub beta: f32,
    /// Residual of the impulses returned (APGD: the best iterate; Jacobi: the last).
    pub best: f32,
    /// Residual of the last trial iterate.
    pub res: f32,
    /// Residual of the starting impulses γ⁰.
    pub res0: f32,
    pub max_penetration: f32,
    /// Which `gam` / `nv` slot holds which iterate (shaders/common/solve_roles.wgsl).
    pub roles: u32,
    /// Whether the last trial was accepted.
    pub accepted: u32,
    /// Partial sums of a sweep's product (one per invocation of `product_trial`).
    pub n_parts: u32,
    pub converged: u32,
    pub iterations: u32,
    pub n_contacts: u32,
    pub n_groups: u32,
    /// Exact cone: cone problems solved in the last solve (0 with the relaxed cone).
    pub outer: u32,
    /// Exact cone: 1 when the outer iterations reached their fixed point before the cap.
    pub outer_done: u32,
    /// Gauss–Seidel: the lowest residual since the momentum last (re)started.
    pub low: f32,
}

/// Segments of `gam` and `nv` (the `SEG_*` pipeline constants of shaders/common/solve.wgsl),
/// each `capacity` vec4 long. APGD: 4 iterate slots (γ_k, γ_{k−1} or y, trial, best: which
/// is which is renamed on acceptance, see shaders/common/solve_roles.wgsl; the answer ends in
/// slot 0), aux (the row layout's, see [`rows`]), then the state of stateful models (LuGre)
/// when the table has one; `nv`: 3 slots (Nγ_k, Nγ_{k−1} or Ny, N·trial). Between solves
/// `nv`'s segment 0 holds the warm-start impulses (no stage reads Nγ after a solve, and the
/// next one forms it from γ⁰ after assembly).
/// Jacobi needs no y, trial, best, Ny or N·trial: γ, aux, (state); Nγ (its steps accept every
/// trial, so they write it in place: every slot is segment 0). The aux segment
/// exists only where something reads it ([`Layout::aux`]). Rolling and spinning rows 3–5
/// (see [`rows`], "Rolling and spinning") keep the full layout and add ext γ, y, trial,
/// best, (p_e, η_e), bounds at 6..11 and ext Nγ, Ny, N·trial at 3..5.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Layout {
    pub apgd: bool,
    pub stateful: bool,
    pub rolling: bool,
    /// The aux segment (the row layout's per-contact extras: compliance, joint and patch
    /// row scalings, the exact cone's offset). Plain Coulomb contacts with the relaxed cone
    /// read none of it (`HAS_AUX` false: SEG_AUX aliases γ and is never written).
    pub aux: bool,
    /// Coloured Gauss–Seidel: a colour word per constraint ([`gauss`]).
    pub gauss: bool,
}

impl Layout {
    /// Whether the iterates have their own slots (APGD, rolling rows): plain Jacobi accepts
    /// every trial and computes it in place (contact i's step reads only its own γ_i and Nγ_i
    /// before writing them), so every slot is segment 0 (shaders/common/solve_roles.wgsl).
    fn slots(&self) -> bool {
        self.apgd || self.rolling
    }

    /// (aux, state) segment indices: after the 4 iterate slots, or after γ in place. Without
    /// aux, SEG_AUX = 0 (γ, never written: HAS_AUX) and the state segment moves up.
    fn indices(&self) -> (u32, u32) {
        let a = self.aux as u32;
        let first = if self.slots() { 4 } else { 1 };
        (if self.aux { first } else { 0 }, first + a)
    }

    /// Segments of `gam` and of `nv`.
    pub fn segments(&self) -> (u64, u64) {
        match (self.rolling, self.apgd) {
            (true, _) => (12, 6),
            (false, true) => (4 + self.aux as u64 + self.stateful as u64, 3),
            (false, false) => (1 + self.aux as u64 + self.stateful as u64, 1),
        }
    }

    /// Offsets (in vec4) of the aux and state segments.
    pub fn aux_state(&self, capacity: u32) -> (u32, u32) {
        let (aux, state) = self.indices();
        (aux * capacity, state * capacity)
    }

    /// Plain Coulomb rows for a solver kind.
    pub fn plain(kind: SolverKind) -> Self {
        Layout {
            apgd: kind == SolverKind::Apgd,
            stateful: false,
            rolling: false,
            aux: false,
            gauss: kind == SolverKind::GaussSeidel,
        }
    }

    fn constants(&self) -> [(&'static str, f64); 4] {
        let flag = |b: bool| if b { 1.0 } else { 0.0 };
        let (aux, state) = self.indices();
        [
            ("HAS_AUX", flag(self.aux)),
            ("SLOTS", flag(self.slots())),
            ("SEG_AUX", f64::from(aux)),
            ("SEG_STATE", f64::from(state)),
        ]
    }
}

/// Bytes of solver state per body (Δv linear + angular).
pub const BYTES_PER_BODY: u64 = 40;

/// Contact capacities are rounded up to a multiple of this, so that every segment of `gam`
/// and `nv` (capacity × 16 B) starts on a 256 B boundary, the largest storage binding offset
/// alignment an adapter may ask: the warm-start keys are bound at `nv`'s segment 1.
const CAPACITY_ALIGN: u32 = 16;

/// Per-capacity buffers (reallocated by [`Solve::grow`]).
struct ContactBuffers {
    capacity: u32,
    layout: Layout,
    gam: wgpu::Buffer,
    nv: wgpu::Buffer,
    rhs: wgpu::Buffer,
    /// The warm-start keys' own buffer, only without iterate slots (plain Jacobi): with
    /// them (APGD, rolling rows) the keys live in `nv`'s segment 1, free between solves like
    /// segment 0 (see [`Self::keys`]).
    prev: Option<wgpu::Buffer>,
    partials: wgpu::Buffer,
    /// Coloured Gauss–Seidel's colour words and previous sweep's impulses (placeholders for
    /// the other solvers).
    colour: wgpu::Buffer,
    previous: wgpu::Buffer,
}

impl ContactBuffers {
    fn new(ctx: &GpuContext, capacity: u32, layout: Layout) -> Result<Self, GpuError> {
        let capacity = capacity.max(1).next_multiple_of(CAPACITY_ALIGN);
        let cap = capacity as u64;
        let (segments, nv_segments) = layout.segments();
        Ok(ContactBuffers {
            capacity,
            layout,
            gam: chunked(ctx, "gam", "solve gamma", segments * cap * 16)?,
            nv: chunked(ctx, "nv", "solve N gamma", nv_segments * cap * 16)?,
            rhs: buffers::storage_zeroed(ctx, "solve rhs", cap * 16)?,
            prev: keys_buffer(ctx, layout, cap)?,
            partials: buffers::storage_zeroed(ctx, "solve partials", partials_len(capacity) * 16)?,
            colour: gauss::colour_buffer(ctx, layout, cap)?,
            previous: gauss::previous_buffer(ctx, layout, cap)?,
        })
    }

    /// Where the warm-start keys live, as (buffer, offset, bytes): `[0].x` = saved entries
    /// k, then k (B, feature), vec2 each. With iterate slots, in `nv`'s segment 1 (capacity ×
    /// 16 B, room for the (1 + capacity) × 8 B): save_warm writes them after the sweeps and
    /// the next step's assembly reads them before any stage writes `nv` again (Nγ⁰ goes to
    /// segment 0, y's Ny to segment 1 only from the first sweep on).
    fn keys(&self) -> (&wgpu::Buffer, u64, u64) {
        let cap = self.capacity as u64;
        match &self.prev {
            Some(p) => (p, 0, p.size()),
            None => (&self.nv, cap * 16, (1 + cap) * 8),
        }
    }

    /// The buffers for another row layout at the same capacity: new `gam`, `nv` and keys
    /// (the warm-start data copied over), the same `rhs` and partials.
    fn relaid(&self, ctx: &GpuContext, layout: Layout) -> Result<Self, GpuError> {
        let cap = self.capacity as u64;
        let (segments, nv_segments) = layout.segments();
        let new = ContactBuffers {
            capacity: self.capacity,
            layout,
            gam: chunked(ctx, "gam", "solve gamma", segments * cap * 16)?,
            nv: chunked(ctx, "nv", "solve N gamma", nv_segments * cap * 16)?,
            rhs: self.rhs.clone(),
            prev: keys_buffer(ctx, layout, cap)?,
            partials: self.partials.clone(),
            colour: gauss::colour_buffer(ctx, layout, cap)?,
            previous: gauss::previous_buffer(ctx, layout, cap)?,
        };
        self.copy_warm_start(ctx, &new);
        Ok(new)
    }

    /// Copies the warm-start keys and impulses (`nv`'s segment 0) into `new`, whose capacity
    /// is at least this one's (a grown capacity or another row layout).
    fn copy_warm_start(&self, ctx: &GpuContext, new: &ContactBuffers) {
        let cap = self.capacity as u64;
        let (from, at, _) = self.keys();
        let (to, to_at, _) = new.keys();
        let mut enc = ctx.device.create_command_encoder(&Default::default());
        enc.copy_buffer_to_buffer(from, at, to, to_at, (1 + cap) * 8);
        enc.copy_buffer_to_buffer(&self.nv, 0, &new.nv, 0, cap * 16);
        ctx.queue.submit([enc.finish()]);
    }
}

/// The warm-start keys' own buffer where `nv` has no free segment 1 (plain Jacobi).
fn keys_buffer(
    ctx: &GpuContext,
    layout: Layout,
    cap: u64,
) -> Result<Option<wgpu::Buffer>, GpuError> {
    if layout.slots() {
        return Ok(None);
    }
    Ok(Some(chunked(
        ctx,
        "prev",
        "solve warm start keys",
        (1 + cap) * 8,
    )?))
}

/// Most partial sums of a solve over `capacity` constraints: one per workgroup of the set-up
/// products, or one per invocation of a sweep's product (shaders/common/solve_scalar.wgsl
/// `parts_for`: at most min(constraints, PARTS_MAX) + one workgroup).
fn partials_len(capacity: u32) -> u64 {
    let (gx, gy) = grid(capacity.max(1).div_ceil(WORKGROUP_SIZE));
    let parts = capacity.clamp(1, PARTS_MAX) + WORKGROUP_SIZE;
    ((gx * gy).max(parts)) as u64
}

/// Per-body rows (first entry, count) of a warm-start list sorted by (A, B, feature), row
/// `bodies` for the joint blocks (A = WORLD); an unsorted list or an A that is no body of
/// this solve is an error (a checkpoint of another scene).
fn warm_rows(bodies: u32, keys: &[[u32; 4]]) -> Result<Vec<[u32; 2]>, GpuError> {
    let mut rows = vec![[0u32; 2]; bodies as usize + 1];
    for (i, k) in keys.iter().enumerate() {
        let a = match k[0] {
            WORLD => bodies,
            b if b < bodies => b,
            b => {
                return Err(GpuError::Invalid(format!(
                    "warm-start key {i}: body {b} is not one of the {bodies} bodies"
                )))
            }
        };
        if i > 0 && keys[i - 1][..3] >= k[..3] {
            return Err(GpuError::Invalid(format!(
                "warm-start keys {} and {i} are not in ascending (A, B, feature) order",
                i - 1
            )));
        }
        let row = &mut rows[a as usize];
        if row[1] == 0 {
            row[0] = i as u32;
        }
        row[1] += 1;
    }
    Ok(rows)
}

/// Most partial sums of a sweep's product (the pipeline constant PARTS_MAX): what one
/// workgroup of solve_reduce sums per sweep.
const PARTS_MAX: u32 = 65536;

/// A buffer for the stages' chunked array `array` (`gpu::chunked`).
fn chunked(
    ctx: &GpuContext,
    array: &str,
    label: &str,
    bytes: u64,
) -> Result<wgpu::Buffer, GpuError> {
    buffers::storage_chunked(ctx, label, bytes, ShaderSource::chunks_of(array))
}

/// Warm-start keys (A, B, feature, 0) and impulses (f32 bits) of the last solve.
pub type WarmStartData = (Vec<[u32; 4]>, Vec<[u32; 4]>);

/// The per-step bind groups of the solver's kernels.
struct Binds {
    asm: wgpu::BindGroup,
    sch: wgpu::BindGroup,
    it: wgpu::BindGroup,
    red: wgpu::BindGroup,
}

/// What collision hands the solver every step (see the collision ↔ solver contract): the
/// sorted contact records, the counts block, the per-body CSR, and the step statistics the
/// solver adds to.
#[derive(Clone, Copy)]
pub struct SolveInputs<'a> {
    pub contacts: &'a wgpu::Buffer,
    pub counts: &'a wgpu::Buffer,
    pub body_offsets: &'a wgpu::Buffer,
    pub body_entries: &'a wgpu::Buffer,
    pub step_stats: &'a wgpu::Buffer,
}

pub struct Solve {
    settings: SolverSettings,
    /// Sweeps recorded per solve (≤ max_iterations); see [`Solve::set_sweep_budget`].
    sweep_budget: u32,
    dt: f32,
    n_bodies: u32,
    /// The four solver stages, compiled on first use for the scene content
    /// ([`Specialisation`]); `set_models` / `set_joints` drop them when that changes.
    kernels: OnceLock<SolveKernels>,
    /// Benchmarks: compile every path in, whatever the scene ([`Solve::set_generic`]).
    generic: bool,
    /// Benchmarks: APGD steps with the count-scaled η ([`Solve::set_counted_step`]).
    counted_step: bool,
    /// The GPU layout of a sweep's product lanes ([`Solve::set_gpu_lanes`]).
    gpu_lanes: bool,
    /// The gather's lever arm as a row of its own ([`Solve::set_arm_from_row`]).
    arm_from_row: bool,
    /// The adapter bounds shader loops ([`GpuContext::loop_limited`]): one-workgroup sweeps
    /// are split over dispatches ([`Solve::loop_budget`]).
    loop_limited: bool,
    /// Record the next solves in one workgroup (solve_fused; see [`Solve::set_fused`]).
    fused: bool,
    /// End multi-workgroup solves in solve_tail (see [`Solve::set_tail`]).
    tail: bool,
    /// Whether the Painlevé diagnostic runs (see [`Solve::set_painleve`]).
    painleve: bool,
    /// Gauss–Seidel keeps its colouring while the constraint graph is unchanged
    /// ([`Solve::set_colour_reuse`]).
    colour_reuse: bool,
    /// The flow axis of a sheared periodic cell ([`Solve::set_shear_flow`]).
    shear_flow: [f32; 3],
    update: Kernel,
    params: wgpu::Buffer,
    scal: wgpu::Buffer,
    args: wgpu::Buffer,
    /// Coloured Gauss–Seidel: constraints per colour (solve_reduce reads it for every kind)
    /// and the phase uniforms ([`gauss`]).
    colour_count: wgpu::Buffer,
    phases: wgpu::Buffer,
    /// The one-workgroup solver's continuation arguments, written by one dispatch and read
    /// (indirect) by the next: two, as a dispatch may not bind for writing the buffer it is
    /// dispatched from (solve_fused `continue_if_unfinished`).
    next_args: [wgpu::Buffer; 2],
    history: wgpu::Buffer,
    dv: wgpu::Buffer,
    /// Per body (and one row for the joint blocks): (first entry with A = b, count) of the
    /// saved warm-start list, whose keys then need only (B, feature).
    warm_rows: wgpu::Buffer,
    rot: wgpu::Buffer,
    mass_props: wgpu::Buffer,
    vel: wgpu::Buffer,
    omega: wgpu::Buffer,
    update_bind: wgpu::BindGroup,
    c: ContactBuffers,
    /// Per-material model table ([`rows::MaterialRow`]) and whether any entry is not Coulomb.
    models: wgpu::Buffer,
    n_models: u32,
    any_model: bool,
    /// Some material has a patch friction model (patch blocks in the contact list).
    any_patch: bool,
    /// Joint blocks appended after the contacts every step (0: none; `params.model.w`) and
    /// their static per-body lists (`src/joints`; a 1-word dummy without joints).
    n_joint_blocks: u32,
    jcsr: wgpu::Buffer,
    /// Bodies' positions (the slab correction's slabs).
    pos: wgpu::Buffer,
    /// Gauss–Seidel's slab correction (`coarse_slab`), else `None`.
    slabs: Option<slabs::Slabs>,
    /// The slabs are stacked along it ([`Solve::set_gravity`]).
    gravity: [f32; 3],
}

const ARGS_WORK: u64 = 0;
const ARGS_BODY: u64 = 16;
const ARGS_PARTS: u64 = 32;
const ARGS_ALL: u64 = 48;
const ARGS_OUTER: u64 = 64;
const ARGS_OUTER_BODY: u64 = 80;
/// The one-workgroup kernel and its two bind groups ([`Solve::record_one_workgroup`]).
type OneWorkgroup<'a> = (&'a Kernel, &'a [wgpu::BindGroup; 2]);
/// See [`Solve::loop_budget`].
const ONE_WORKGROUP_LOOP_BUDGET: u32 = 20_000;

/// One vec4 per sweep of every cone problem.
fn history_bytes(s: &SolverSettings) -> u64 {
    let problems = match s.cone {
        Cone::Relaxed => 1,
        Cone::Exact => s.max_outer.max(1),
    };
    (s.max_iterations.max(1) * problems) as u64 * 16
}

fn kernel(ctx: &GpuContext, name: &str) -> Result<Kernel, GpuError> {
    Kernel::new(
        ctx,
        ShaderSource::by_name(name).expect("solver shader registered"),
    )
}

/// What a scene's solver pipelines are compiled for (the `override` constants of
/// shaders/common/solve.wgsl). lavapipe executes both sides of every branch, so the joint
/// and model code of the kernels cost a plain Coulomb scene as much as if it ran them;
/// pipelines without it are what such a scene runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Specialisation {
    /// Joint blocks after the contacts (`params.model.w`).
    pub joints: bool,
    /// Some non-Coulomb material model (`params.model.x`).
    pub models: bool,
    /// A stateful model (tanh, LuGre: `params.model.z`).
    pub state: bool,
    /// Rolling / spinning resistance rows 3–5 (their extension segments exist only then).
    pub rolling: bool,
    /// Patch blocks of a patch friction model (book: Contact patches).
    pub patches: bool,
    /// The segments of `gam` and `nv`.
    pub layout: Layout,
    /// How a sweep's product lanes take their constraints: GPU (4 or more each, strided) or
    /// CPU adapter (16 or more each, consecutive); see [`Solve::set_gpu_lanes`].
    pub gpu_lanes: bool,
    /// The gather loads its side's lever arm as a row of its own (`ARM_FROM_ROW` in
    /// solve_schur) rather than from the loaded record: on a CPU adapter, see
    /// [`Solve::set_arm_from_row`].
    pub arm_from_row: bool,
    /// APGD steps with projected Jacobi's count-scaled η, as before the plain diagonal (for
    /// benchmarks, [`Solve::set_counted_step`]).
    pub counted_step: bool,
}

impl Specialisation {
    fn constants(&self) -> Vec<(&'static str, f64)> {
        let f = |b: bool| if b { 1.0 } else { 0.0 };
        let mut c = vec![
            ("HAS_JOINTS", f(self.joints)),
            ("HAS_MODELS", f(self.models)),
            ("HAS_STATE", f(self.state)),
            ("HAS_ROLL", f(self.rolling)),
            ("HAS_PATCHES", f(self.patches)),
            ("PER_LANE_MIN", if self.gpu_lanes { 4.0 } else { 16.0 }),
            ("LANES_STRIDED", f(self.gpu_lanes)),
            ("ARM_FROM_ROW", f(self.arm_from_row)),
            ("PARTS_MAX", PARTS_MAX as f64),
            // The step's η with contact counts: Jacobi's bound (solve_assemble's header).
            ("COUNT_BOUND", f(!self.layout.apgd || self.counted_step)),
        ];
        c.extend(self.layout.constants());
        c
    }
}

struct SolveKernels {
    assemble: Kernel,
    schur: Kernel,
    iterate: Kernel,
    reduce: Kernel,
    /// Coloured Gauss–Seidel's colouring and sweeps (solve_gauss), for that kind only.
    gauss: Option<Kernel>,
    /// The one-workgroup solver (solve_fused), compiled on first use; `None` where the
    /// adapter cannot build it (its 17 bindings, 29 with chunk slots, exceed a limit).
    fused: OnceLock<Option<Kernel>>,
    /// The slab correction's two stages, compiled on first use.
    slabs: OnceLock<slabs::SlabKernels>,
    consts: Vec<(&'static str, f64)>,
}

impl SolveKernels {
    fn new(ctx: &GpuContext, spec: Specialisation) -> Result<Self, GpuError> {
        let consts = spec.constants();
        let k = |name: &str| {
            Kernel::with_constants(
                ctx,
                ShaderSource::by_name(name).expect("solver shader registered"),
                &consts,
            )
        };
        Ok(SolveKernels {
            assemble: k("solve_assemble")?,
            schur: k("solve_schur")?,
            iterate: k("solve_iterate")?,
            reduce: k("solve_reduce")?,
            gauss: if spec.layout.gauss {
                Some(k("solve_gauss")?)
            } else {
                None
            },
            fused: OnceLock::new(),
            slabs: OnceLock::new(),
            consts,
        })
    }

    fn fused(&self, ctx: &GpuContext) -> Option<&Kernel> {
        self.fused
            .get_or_init(|| {
                let src = ShaderSource::by_name("solve_fused").expect("solver shader registered");
                fits_one_stage(ctx, &src)
                    .then(|| Kernel::with_constants(ctx, src, &self.consts).ok())
                    .flatten()
            })
            .as_ref()
    }
}

/// Whether every buffer `src` binds (chunk slots included) fits the device's per-stage limits.
fn fits_one_stage(ctx: &GpuContext, src: &ShaderSource) -> bool {
    let Ok(module) = src.validate() else {
        return false;
    };
    let (mut storage, mut all) = (0, 0);
    for (_, g) in module.global_variables.iter() {
        if g.binding.is_some() {
            all += 1;
            storage += matches!(g.space, naga::AddressSpace::Storage { .. }) as u32;
        }
    }
    let l = &ctx.limits;
    storage <= l.max_storage_buffers_per_shader_stage
        && all <= l.max_buffers_and_acceleration_structures_per_shader_stage
}

/// Constraints (contacts + joint blocks) up to which a solve runs in one workgroup
/// (solve_fused) by default. Measured on lavapipe (`cargo bench --bench fused`): below it the
/// one dispatch beats 4 dispatches per sweep (~40 µs each) on one of two cores.
pub const FUSED_MAX_DEFAULT: u32 = 2048;

impl Solve {
    pub fn new(
        ctx: &GpuContext,
        bodies: &GpuBodies,
        contact_capacity: u32,
        settings: &SolverSettings,
        dt: f32,
    ) -> Result<Self, GpuError> {
        let update = kernel(ctx, "solve_update")?;
        let dv_bytes = bodies.count.max(1) as u64 * 4 * gauss::dv_words_per_body(settings.kind);
        let dv = buffers::storage_zeroed(ctx, "solve dv", dv_bytes)?;
        let params =
            buffers::uniform_from(ctx, "solve params", &[0u32; size_of::<SolveParams>() / 4]);
        let update_bind = update.bind(
            ctx,
            &[&params, &dv, &bodies.vel, &bodies.omega, &bodies.info],
        );
        let mut s = Solve {
            settings: *settings,
            sweep_budget: settings.max_iterations,
            dt,
            n_bodies: bodies.count,
            kernels: OnceLock::new(),
            generic: false,
            counted_step: false,
            gpu_lanes: ctx.info.device_type != wgpu::DeviceType::Cpu,
            arm_from_row: ctx.info.device_type == wgpu::DeviceType::Cpu,
            loop_limited: ctx.loop_limited(),
            fused: false,
            tail: true,
            painleve: true,
            colour_reuse: true,
            shear_flow: [0.0; 3],
            update,
            params,
            scal: buffers::scalars_zeroed(
                ctx,
                "solve scalars",
                std::mem::size_of::<SolverScalars>() as u64,
            )?,
            args: buffers::storage_zeroed(ctx, "solve dispatch args", slabs::ARGS_BYTES)?,
            colour_count: buffers::storage_zeroed(
                ctx,
                "solve colour counts",
                4 * gauss::COLOUR_COUNT_WORDS,
            )?,
            phases: gauss::phase_buffer(ctx),
            next_args: [
                buffers::storage_zeroed(ctx, "one-workgroup continuation args 0", 16)?,
                buffers::storage_zeroed(ctx, "one-workgroup continuation args 1", 16)?,
            ],
            history: buffers::storage_zeroed(ctx, "solve history", history_bytes(settings))?,
            dv,
            warm_rows: buffers::storage_zeroed(
                ctx,
                "solve warm-start rows",
                (bodies.count as u64 + 1) * 8,
            )?,
            rot: bodies.rot.clone(),
            mass_props: bodies.mass_props.clone(),
            vel: bodies.vel.clone(),
            omega: bodies.omega.clone(),
            update_bind,
            c: ContactBuffers::new(
                ctx,
                contact_capacity,
                Layout {
                    aux: settings.cone == Cone::Exact,
                    ..Layout::plain(settings.kind)
                },
            )?,
            models: buffers::storage_from(ctx, "solve models", &[[0.0f32; 8]])?,
            n_models: 1,
            any_model: false,
            any_patch: false,
            n_joint_blocks: 0,
            jcsr: buffers::storage_from(ctx, "solve joint lists", &[0u32; 4])?,
            pos: bodies.pos.clone(),
            slabs: None,
            gravity: [0.0; 3],
        };
        s.configure_slabs(ctx)?;
        s.write_params(ctx);
        Ok(s)
    }

    /// The per-material model table (index = material; see [`rows::material_row`]). An
    /// empty table or one of Coulomb rows only keeps the plain Coulomb kernels' cost.
    pub fn set_models(
        &mut self,
        ctx: &GpuContext,
        rows: &[rows::MaterialRow],
    ) -> Result<(), GpuError> {
        let before = self.specialisation();
        let table: Vec<rows::MaterialRow> = if rows.is_empty() {
            vec![[0.0; 8]]
        } else {
            rows.to_vec()
        };
        self.any_model = table.iter().any(|r| r[0] as u32 != rows::MODEL_COULOMB);
        self.any_patch = rows::has_patches(&table);
        self.relayout(
            ctx,
            Layout {
                stateful: rows::has_state(&table),
                rolling: rows::has_rolling(&table),
                ..self.c.layout
            },
        )?;
        self.n_models = table.len() as u32;
        self.models = buffers::storage_from(ctx, "solve models", &table)?;
        self.write_params(ctx);
        self.respecialise(before);
        Ok(())
    }

    /// Joint blocks: `n_blocks` records that the joint stage appends after the contacts
    /// every step (src/model/rows, "Joints"), with their per-body lists `jcsr`
    /// (offsets[0..=bodies], then entries block * 2 + side). 0 blocks: no joint reads at all.
    pub fn set_joints(
        &mut self,
        ctx: &GpuContext,
        n_blocks: u32,
        jcsr: &[u32],
    ) -> Result<(), GpuError> {
        let before = self.specialisation();
        self.n_joint_blocks = n_blocks;
        self.relayout(ctx, self.c.layout)?;
        self.respecialise(before);
        let mut words = jcsr.to_vec();
        words.resize(words.len().max(4), 0);
        self.jcsr = buffers::storage_from(ctx, "solve joint lists", &words)?;
        // The colouring reads the joint lists, which its stored graph does not record.
        self.forget_colouring(ctx);
        self.write_params(ctx);
        Ok(())
    }

    /// What the solver pipelines are compiled for: the current model table and joints.
    pub fn specialisation(&self) -> Specialisation {
        Specialisation {
            joints: self.generic || self.n_joint_blocks > 0,
            models: self.generic || self.any_model,
            state: self.generic || self.c.layout.stateful,
            // Not with `generic`: these read segments that exist only when they are used.
            rolling: self.c.layout.rolling,
            patches: self.any_patch,
            layout: self.c.layout,
            gpu_lanes: self.gpu_lanes,
            arm_from_row: self.arm_from_row,
            counted_step: self.counted_step,
        }
    }

    /// How a sweep's product lanes take their constraints (shaders/common/solve.wgsl
    /// `PER_LANE_MIN`, `LANES_STRIDED`): by default the GPU layout except on a CPU adapter.
    /// On lavapipe a workgroup's reduction tree cost more than the products (every SIMD fiber
    /// runs its masked levels), so there lanes are few and long, each over consecutive
    /// constraints (strided, the 10⁵-sphere sweep lost 20 % to interleaved streams); a GPU
    /// keeps its threads busy with 4 per lane, strided so that a warp reads consecutive
    /// records; there the CPU adapter's layout takes twice the solve's time (book:
    /// Benchmarks, "The product lanes on a GPU"). Tests run the GPU layout on lavapipe.
    pub fn set_gpu_lanes(&mut self, on: bool) {
        let before = self.specialisation();
        self.gpu_lanes = on;
        self.respecialise(before);
    }

    /// Where the gather takes a contact's lever arm (solve_schur `ARM_FROM_ROW`): by default
    /// a row load of its own on a CPU adapter, where each load is a loop over the SIMD lanes
    /// and one fewer per entry paid, and the record already loaded on a GPU, where the second
    /// chunked view's selection over live chunks costs more than the arm it saves (book:
    /// Benchmarks, "The 10⁷ slowdown: the gather's lever arm"). Results are the same either
    /// way.
    pub fn set_arm_from_row(&mut self, on: bool) {
        let before = self.specialisation();
        self.arm_from_row = on;
        self.respecialise(before);
    }

    /// For benchmarks: pipelines with every path compiled in (the cost before
    /// [`Specialisation`]) when `on`; results are the same either way.
    pub fn set_generic(&mut self, on: bool) {
        let before = self.specialisation();
        self.generic = on;
        self.respecialise(before);
    }

    /// For benchmarks: APGD steps with projected Jacobi's count-scaled η (the step before
    /// the plain diagonal, solve_assemble's header) when `on`; the residual is the same.
    pub fn set_counted_step(&mut self, on: bool) {
        let before = self.specialisation();
        self.counted_step = on;
        self.respecialise(before);
    }

    /// The solver pipelines for the current [`Specialisation`], compiled on first use.
    fn kernels(&self, ctx: &GpuContext) -> &SolveKernels {
        self.kernels.get_or_init(|| {
            SolveKernels::new(ctx, self.specialisation())
                .expect("solver shaders compile (validated by tests/shaders)")
        })
    }

    /// Drops the compiled pipelines if `before` is no longer the specialisation.
    fn respecialise(&mut self, before: Specialisation) {
        if self.specialisation() != before {
            self.kernels = OnceLock::new();
        }
    }

    /// Joint blocks appended per step (0: none).
    pub fn joint_blocks(&self) -> u32 {
        self.n_joint_blocks
    }

    /// The right-hand side buffer (p, η) per constraint; the joint stage writes its blocks'
    /// offsets into it before assembly.
    pub fn rhs_buffer(&self) -> &wgpu::Buffer {
        &self.c.rhs
    }

    fn write_params(&self, ctx: &GpuContext) {
        let st = &self.settings;
        let p = SolveParams {
            bodies: self.n_bodies,
            capacity: self.c.capacity,
            // Gauss–Seidel's scalar logic is projected Jacobi's (every sweep accepted).
            kind: match st.kind {
                SolverKind::Jacobi | SolverKind::GaussSeidel => 0,
                SolverKind::Apgd => 1,
            },
            warm_start: st.warm_start as u32,
            dt: self.dt,
            omega: st.omega,
            recovery_speed: st.recovery_speed,
            tolerance: st.tolerance,
            has_models: self.any_model as u32,
            materials: self.n_models,
            has_state: self.c.layout.stateful as u32,
            joint_blocks: self.n_joint_blocks,
            slop: st.slop,
            stabilisation: st.stabilisation,
            sweep_cap: st.max_iterations as f32,
            loop_budget: self.loop_budget() as f32,
            shear_flow: [
                self.shear_flow[0],
                self.shear_flow[1],
                self.shear_flow[2],
                0.0,
            ],
        };
        ctx.queue
            .write_buffer(&self.params, 0, bytemuck::bytes_of(&p));
    }

    /// Lees–Edwards: the flow axis (unit vector), along which a contact across the gradient
    /// seam adds its rb.w (the image's velocity) to B's velocity in the assembly.
    pub fn set_shear_flow(&mut self, ctx: &GpuContext, flow: [f32; 3]) {
        self.shear_flow = flow;
        self.write_params(ctx);
    }

    pub fn settings(&self) -> &SolverSettings {
        &self.settings
    }

    /// What the `lugre_patch` stage ([`crate::patch::stage`]) binds: the model table and its
    /// rows, `gam`, and the offsets (in vec4) of `gam`'s aux and state segments.
    pub fn patch_inputs(&self) -> (&wgpu::Buffer, u32, &wgpu::Buffer, u32, u32) {
        let cap = self.c.capacity;
        let (aux, state) = self.c.layout.aux_state(cap);
        (&self.models, self.n_models, &self.c.gam, aux, state)
    }

    pub fn capacity(&self) -> u32 {
        self.c.capacity
    }

    /// Most contacts this solver's arrays can hold with its current row layout: `gam`, `nv`
    /// and the warm-start keys are chunked (`gpu::chunked`), `rhs` is one binding.
    pub fn max_capacity(&self, ctx: &GpuContext) -> u64 {
        Self::max_capacity_for(ctx, self.c.layout)
    }

    /// [`Solve::max_capacity`] for a row layout (with or without the state and rolling
    /// segments, and Gauss–Seidel's colours and previous sweep, each one binding).
    pub fn max_capacity_for(ctx: &GpuContext, layout: Layout) -> u64 {
        let (segments, nv_segments) = layout.segments();
        let bytes = |array: &str| ctx.chunked_capacity(ShaderSource::chunks_of(array));
        let mut most = (bytes("gam") / (segments * 16))
            .min(bytes("nv") / (nv_segments * 16))
            .min(bytes("prev") / 8 - 1)
            .min(ctx.max_binding() / 16);
        if layout.gauss {
            most = most.min(gauss::max_constraints(ctx.max_binding()));
        }
        // Down to the alignment, which every allocated capacity is rounded up to.
        most / CAPACITY_ALIGN as u64 * CAPACITY_ALIGN as u64
    }

    /// Changes the settings (e.g. solver kind or iteration cap) for the next recorded solve.
    pub fn set_settings(
        &mut self,
        ctx: &GpuContext,
        settings: &SolverSettings,
    ) -> Result<(), GpuError> {
        if history_bytes(settings) > self.history.size() {
            self.history = buffers::storage_zeroed(ctx, "solve history", history_bytes(settings))?;
        }
        let before = self.specialisation();
        self.settings = *settings;
        self.relayout(
            ctx,
            Layout {
                apgd: settings.kind == SolverKind::Apgd,
                gauss: settings.kind == SolverKind::GaussSeidel,
                ..self.c.layout
            },
        )?;
        self.sweep_budget = settings.max_iterations;
        self.configure_slabs(ctx)?;
        self.write_params(ctx);
        self.respecialise(before);
        Ok(())
    }

    /// Sweeps recorded per solve from now on, clamped to `1..=max_iterations`. Recording
    /// fewer sweeps than the cap saves the (empty, but not free) dispatches of the sweeps
    /// after convergence. A solve that converges within the budget is bit-identical to one
    /// recorded with the full cap; one that used the whole budget must be redone with a
    /// larger one (see `step::Simulation::advance`), so the budget never changes a result.
    pub fn set_sweep_budget(&mut self, sweeps: u32) {
        self.sweep_budget = sweeps.clamp(1, self.settings.max_iterations.max(1));
    }

    pub fn sweep_budget(&self) -> u32 {
        self.sweep_budget
    }

    pub fn dt(&self) -> f32 {
        self.dt
    }

    pub fn set_dt(&mut self, ctx: &GpuContext, dt: f32) {
        self.dt = dt;
        self.write_params(ctx);
    }

    /// Re-allocates `gam` and `nv` for `layout` if it differs (scratch of one solve, but for
    /// the warm-start impulses in `nv`'s segment 0, which are copied over); pipelines follow
    /// through [`Solve::specialisation`].
    fn relayout(&mut self, ctx: &GpuContext, layout: Layout) -> Result<(), GpuError> {
        let layout = Layout {
            aux: self.any_model
                || self.any_patch
                || self.n_joint_blocks > 0
                || self.settings.cone == Cone::Exact
                || layout.stateful
                || layout.rolling,
            ..layout
        };
        if layout != self.c.layout {
            self.c = self.c.relaid(ctx, layout)?;
        }
        Ok(())
    }

    /// Bytes of solver state per contact of capacity, from the buffers as allocated (see
    /// [`Layout`]; the warm-start keys' 8 B header not counted).
    pub fn bytes_per_contact(&self) -> u64 {
        let c = &self.c;
        let keys = c.prev.as_ref().map_or(0, |p| p.size() - 8);
        let colour = if c.layout.gauss {
            c.colour.size() + c.previous.size()
        } else {
            0
        };
        (c.gam.size() + c.nv.size() + c.rhs.size() + keys + colour) / c.capacity as u64
    }

    /// Grows the per-contact buffers, keeping the warm-start data (previous keys and impulses).
    pub fn grow(&mut self, ctx: &GpuContext, contact_capacity: u32) -> Result<(), GpuError> {
        if contact_capacity <= self.c.capacity {
            return Ok(());
        }
        let new = ContactBuffers::new(ctx, contact_capacity, self.c.layout)?;
        self.c.copy_warm_start(ctx, &new);
        self.c = new;
        if let Some(slabs) = &mut self.slabs {
            slabs.grow(ctx, contact_capacity, self.settings.max_iterations)?;
        }
        self.write_params(ctx);
        Ok(())
    }

    /// Where the warm-start data live, as (buffer, offset, bytes): the keys (`[0].x` = saved
    /// entries k, then k (B, feature), vec2 each), the impulses (`nv`'s segment 0, vec4
    /// each) and the per-body rows (first entry with A = b, count). Snapshots copy them.
    pub fn warm_start_parts(&self) -> [(&wgpu::Buffer, u64, u64); 3] {
        let cap = self.c.capacity as u64 * 16;
        [
            self.c.keys(),
            (&self.c.nv, 0, cap),
            (&self.warm_rows, 0, self.warm_rows.size()),
        ]
    }

    /// Warm-start data independent of the capacity: (keys (A, B, feature, 0), impulses) of
    /// the last solve.
    pub fn read_warm_start(&self, ctx: &GpuContext) -> Result<WarmStartData, GpuError> {
        let cap = self.c.capacity as usize;
        let (kb, at, _) = self.c.keys();
        let pairs = buffers::read_buffer_at::<[u32; 2]>(ctx, kb, at, 1 + cap)?;
        let k = (pairs[0][0] as usize).min(cap);
        let n = self.n_bodies as usize;
        let rows = buffers::read_buffer::<[u32; 2]>(ctx, &self.warm_rows, n + 1)?;
        let mut keys: Vec<[u32; 4]> = pairs[1..1 + k].iter().map(|p| [0, p[0], p[1], 0]).collect();
        for (b, r) in rows.iter().enumerate() {
            let a = if b == n { WORLD } else { b as u32 };
            let end = (r[0] as usize + r[1] as usize).min(k);
            for key in keys.iter_mut().take(end).skip(r[0] as usize) {
                key[0] = a;
            }
        }
        let impulses = buffers::read_buffer::<[u32; 4]>(ctx, &self.c.nv, k)?;
        Ok((keys, impulses))
    }

    /// Restores what [`Solve::read_warm_start`] returned (grows first if needed). The keys
    /// must be sorted by (A, B, feature) with A a body of this solve or the joint blocks'
    /// `WORLD`, as every saved list is.
    pub fn write_warm_start(
        &mut self,
        ctx: &GpuContext,
        keys: &[[u32; 4]],
        impulses: &[[u32; 4]],
    ) -> Result<(), GpuError> {
        assert_eq!(keys.len(), impulses.len());
        let rows = warm_rows(self.n_bodies, keys)?;
        self.grow(ctx, keys.len() as u32)?;
        let q = &ctx.queue;
        let (kb, at, _) = self.c.keys();
        q.write_buffer(kb, at, bytemuck::bytes_of(&[keys.len() as u32, 0]));
        if !keys.is_empty() {
            let pairs: Vec<[u32; 2]> = keys.iter().map(|k| [k[1], k[2]]).collect();
            q.write_buffer(kb, at + 8, bytemuck::cast_slice(&pairs));
            q.write_buffer(&self.c.nv, 0, bytemuck::cast_slice(impulses));
        }
        q.write_buffer(&self.warm_rows, 0, bytemuck::cast_slice(&rows));
        Ok(())
    }

    /// The direction of gravity, which the slab correction's slabs are stacked along.
    pub fn set_gravity(&mut self, ctx: &GpuContext, gravity: [f32; 3]) {
        self.gravity = gravity;
        let cap = self.settings.max_iterations;
        if let Some(s) = &mut self.slabs {
            s.set_gravity(ctx, gravity, cap);
        }
    }

    /// The slab correction as the settings ask: made, changed (height, sweep cap) or dropped.
    fn configure_slabs(&mut self, ctx: &GpuContext) -> Result<(), GpuError> {
        let st = &self.settings;
        if st.coarse_slab <= 0.0 || st.kind != SolverKind::GaussSeidel {
            self.slabs = None;
            return Ok(());
        }
        let mut s = slabs::Slabs::new(
            ctx,
            st.coarse_slab,
            self.n_bodies,
            self.c.capacity,
            st.max_iterations,
        )?;
        s.set_gravity(ctx, self.gravity, st.max_iterations);
        self.slabs = Some(s);
        Ok(())
    }

    /// Forgets the warm-start data (e.g. after a scene change).
    pub fn reset_warm_start(&self, ctx: &GpuContext) {
        let (kb, at, _) = self.c.keys();
        ctx.queue.write_buffer(kb, at, &[0u8; 8]);
    }

    /// Records one whole solve + velocity update, after collision has written contacts,
    /// counts and the per-body CSR. Bind groups for the given buffers are created here (a few
    /// microseconds per step), so the caller may pass different buffers every step.
    pub fn record(&self, ctx: &GpuContext, enc: &mut wgpu::CommandEncoder, inputs: SolveInputs) {
        let Binds { asm, sch, it, red } = self.bind_all(ctx, inputs);
        let k = self.kernels(ctx);
        let args = &self.args;
        let mut pass = enc.begin_compute_pass(&wgpu::ComputePassDescriptor {
            label: Some("solve"),
            timestamp_writes: None,
        });
        let p = &mut pass;
        k.reduce.dispatch_groups(p, "init_args", &red, 1);
        k.assemble
            .dispatch_indirect(p, "assemble", &asm, args, ARGS_ALL);
        let gauss = self.bind_gauss(ctx, inputs);
        let slab_binds = self.bind_slabs(ctx, inputs);
        if let Some(binds) = &gauss {
            self.record_colouring(k, p, binds, &red);
        }
        // The one-workgroup stage runs the whole solve (fused), or the sweeps a step needs
        // past the recorded budget (tail); bound only when it is dispatched.
        let one = self.one_workgroup_kernel(ctx);
        let fused = one.filter(|_| self.fused);
        let budget_short = self.sweep_budget < self.settings.max_iterations;
        let tail = one.filter(|_| self.tail_active(ctx) && budget_short);
        let bind = fused.or(tail).map(|k| self.bind_fused(ctx, k, inputs));
        if let (Some(k), Some(b)) = (fused, &bind) {
            let cap = self.settings.max_iterations;
            self.record_one_workgroup(p, (k, b), "solve_fused", cap);
        }
        let tail = tail.zip(bind.as_ref());
        for _ in 0..self.cone_problems_recorded(ctx) {
            if self.settings.cone == Cone::Exact {
                // Offset s = μ‖u_T‖ from the current γ; ends the outer loop at its fixed point.
                k.schur
                    .dispatch_indirect(p, "gather_gamma", &sch, args, ARGS_OUTER_BODY);
                k.iterate
                    .dispatch_indirect(p, "outer_offset", &it, args, ARGS_OUTER);
                k.reduce.dispatch_groups(p, "outer_reduce", &red, 1);
            } else {
                k.schur
                    .dispatch_indirect(p, "gather_gamma", &sch, args, ARGS_BODY);
                k.iterate
                    .dispatch_indirect(p, "product_init", &it, args, ARGS_WORK);
                k.reduce.dispatch_groups(p, "reduce_init", &red, 1);
            }
            match &gauss {
                Some(binds) => {
                    self.record_gauss_sweeps(ctx, k, p, (binds, slab_binds.as_ref()), &sch, &red)
                }
                None => self.record_sweeps(k, p, &sch, &it, &red, tail),
            }
        }
        if self.painleve {
            k.iterate
                .dispatch_indirect(p, "painleve", &it, args, ARGS_ALL);
            k.reduce.dispatch_groups(p, "painleve_count", &red, 1);
        }
        // v⁺ = v* + M⁻¹ D γ (direct dispatch: the work arguments are zero once converged).
        k.schur.dispatch(p, "gather_gamma", &sch, self.n_bodies);
        self.update
            .dispatch(p, "apply_impulses", &self.update_bind, self.n_bodies);
        k.assemble
            .dispatch_indirect(p, "save_warm", &asm, args, ARGS_ALL);
        k.schur.dispatch(p, "save_rows", &sch, self.n_bodies + 1);
        k.reduce.dispatch_groups(p, "finish", &red, 1);
    }

    /// Loop iterations an invocation of the one-workgroup solver may run per dispatch
    /// (`stab.w`); 0 for no bound (a GPU). llvmpipe ends every loop of an invocation,
    /// silently, once the invocation has run 65 535 loop iterations in all
    /// (common/collide_keys.wgsl): one dispatch of a fused solve stopped the pendulum chain
    /// at 1149 sweeps of 3000, and a slab's 1200-contact row was gathered only in part. The
    /// kernel takes as many sweeps per dispatch as this budget allows for its longest rows
    /// (solve_fused `sweep_cost`, an estimate with margins: a third of the limit).
    fn loop_budget(&self) -> u32 {
        if self.loop_limited {
            ONE_WORKGROUP_LOOP_BUDGET
        } else {
            0
        }
    }

    /// One-workgroup dispatches that cover `sweeps` sweeps and the set-up on a CPU adapter
    /// whatever the rows (every CSR entry and joint row in one invocation); 0 on a GPU, where
    /// the callers' one dispatch takes them all. All but the first are indirect and empty
    /// once the solve has ended (solve_fused `continue_if_unfinished`): a zero-group dispatch
    /// costs next to nothing (100 more per step: the 10³ pile's step 18.3 against 18.5 ms,
    /// two runs each, within this machine's drift).
    fn one_workgroup_dispatches(&self, sweeps: u32) -> u32 {
        if !self.loop_limited {
            return 0;
        }
        let blocks = |n: u32| n.max(1).div_ceil(WORKGROUP_SIZE);
        let constraints = self.c.capacity + self.n_joint_blocks;
        let worst = 3 * blocks(constraints) + 64 + 16 * blocks(self.n_bodies) + 2 * constraints;
        let per = (ONE_WORKGROUP_LOOP_BUDGET / worst).max(1);
        (sweeps + 2).div_ceil(per) + 1
    }

    /// Records the one-workgroup stage `entry` for `sweeps` sweeps: one dispatch, and on a CPU
    /// adapter its indirect continuations, each from the arguments the one before wrote
    /// (bind group k % 2 writes `next_args[k % 2]`).
    fn record_one_workgroup(
        &self,
        p: &mut wgpu::ComputePass,
        (kernel, binds): OneWorkgroup,
        entry: &str,
        sweeps: u32,
    ) {
        kernel.dispatch_groups(p, entry, &binds[0], 1);
        for k in 1..self.one_workgroup_dispatches(sweeps) as usize {
            let from = &self.next_args[(k - 1) % 2];
            kernel.dispatch_indirect(p, entry, &binds[k % 2], from, 0);
        }
    }

    /// Multi-workgroup cone problems recorded per solve: none when solve_fused runs it.
    fn cone_problems_recorded(&self, ctx: &GpuContext) -> u32 {
        if self.fused_kernel(ctx).is_some() {
            0
        } else {
            self.cone_problems()
        }
    }

    /// Whether the next solves run in one workgroup: asked for ([`Solve::set_fused`]), the
    /// relaxed cone (the exact cone's outer loop is not fused), and the kernel builds here.
    pub fn fused_active(&self, ctx: &GpuContext) -> bool {
        self.fused_kernel(ctx).is_some()
    }

    fn fused_kernel(&self, ctx: &GpuContext) -> Option<&Kernel> {
        self.one_workgroup_kernel(ctx).filter(|_| self.fused)
    }

    /// solve_fused's stage (its entry points `solve_fused` and `solve_tail`), for the relaxed
    /// cone where the adapter builds it.
    fn one_workgroup_kernel(&self, ctx: &GpuContext) -> Option<&Kernel> {
        // Gauss–Seidel's colours are dispatches of their own (no one-workgroup version yet).
        if self.settings.cone != Cone::Relaxed || self.settings.kind == SolverKind::GaussSeidel {
            return None;
        }
        self.kernels(ctx).fused(ctx)
    }

    /// Whether multi-workgroup solves end in `solve_tail` (sweeps past the recorded budget in
    /// one workgroup): then a budget below a step's need costs no redone batch.
    pub fn tail_active(&self, ctx: &GpuContext) -> bool {
        self.tail && !self.fused && self.one_workgroup_kernel(ctx).is_some()
    }

    /// Ends multi-workgroup solves in `solve_tail` (default) or in `finish` only
    /// (then the sweep budget must cover every step, see `Simulation::adapt_sweep_budget`).
    pub fn set_tail(&mut self, on: bool) {
        self.tail = on;
    }

    /// Runs the Painlevé diagnostic (default) or not: a caller turns it off only where it is
    /// zero by construction (`step::Simulation`: every grain a dynamic sphere, no joints;
    /// the statistics then read 0, which `init_args` writes every solve).
    pub fn set_painleve(&mut self, on: bool) {
        self.painleve = on;
    }

    /// Runs the next solves in one workgroup (solve_fused) or on the multi-workgroup path.
    /// Both give the same bits (tests/fused.rs), so a caller may switch between batches by
    /// the size of the problem; fused solves loop to convergence, so the sweep budget is
    /// set to the cap (a budget below it would only be redone).
    pub fn set_fused(&mut self, on: bool) {
        if on && !self.fused {
            self.sweep_budget = self.settings.max_iterations.max(1);
        }
        self.fused = on;
    }

    /// Cone problems recorded per solve: 1, or `max_outer` for the exact cone.
    fn cone_problems(&self) -> u32 {
        match self.settings.cone {
            Cone::Relaxed => 1,
            Cone::Exact => self.settings.max_outer.max(1),
        }
    }

    /// One cone problem's sweeps from the current γ (Nγ, residual and state set up), ending
    /// with the returned impulses in γ.
    fn record_sweeps(
        &self,
        k: &SolveKernels,
        p: &mut wgpu::ComputePass,
        sch: &wgpu::BindGroup,
        it: &wgpu::BindGroup,
        red: &wgpu::BindGroup,
        tail: Option<OneWorkgroup>,
    ) {
        let apgd = self.settings.kind == SolverKind::Apgd;
        let args = &self.args;
        if apgd {
            k.schur
                .dispatch_indirect(p, "gather_gamma_minus_one", sch, args, ARGS_BODY);
            k.iterate
                .dispatch_indirect(p, "product_lip", it, args, ARGS_WORK);
            k.reduce.dispatch_groups(p, "reduce_lip", red, 1);
        }
        let (step, reduce) = if apgd {
            ("apgd_step", "reduce_apgd")
        } else {
            ("jacobi_step", "reduce_jacobi")
        };
        for _ in 0..self.sweep_budget {
            k.iterate.dispatch_indirect(p, step, it, args, ARGS_WORK);
            k.schur
                .dispatch_indirect(p, "gather_trial", sch, args, ARGS_BODY);
            k.iterate
                .dispatch_indirect(p, "product_trial", it, args, ARGS_PARTS);
            k.reduce.dispatch_groups(p, reduce, red, 1);
        }
        if let Some((kernel, bind)) = tail {
            // The sweeps past the budget that the step needs, in one workgroup.
            let past = self
                .settings
                .max_iterations
                .saturating_sub(self.sweep_budget);
            self.record_one_workgroup(p, (kernel, bind), "solve_tail", past);
        }
        // The returned impulses (APGD: the best iterate) into slot 0, where γ is read.
        k.iterate.dispatch_indirect(p, "finish", it, args, ARGS_ALL);
    }

    /// Bind groups of the solver's kernels for this step's collision buffers (made per call:
    /// the collision buffers may be reallocated between steps).
    fn bind_all(&self, ctx: &GpuContext, inputs: SolveInputs) -> Binds {
        let SolveInputs {
            contacts,
            counts,
            body_offsets,
            body_entries,
            step_stats,
        } = inputs;
        let c = &self.c;
        let k = self.kernels(ctx);
        let warm = (13, 0, c.capacity as u64 * 16);
        let (keys, keys_at, keys_bytes) = c.keys();
        let asm = k.assemble.bind_ranges(
            ctx,
            &[
                &self.params,
                contacts,
                counts,
                &self.rot,
                &self.mass_props,
                &self.vel,
                &self.omega,
                &c.gam,
                &c.rhs,
                keys,
                body_offsets,
                &self.models,
                &self.jcsr,
                &c.nv,
                &self.warm_rows,
            ],
            &[(9, keys_at, keys_bytes), warm],
        );
        let sch = k.schur.bind(
            ctx,
            &[
                &self.params,
                contacts,
                body_offsets,
                body_entries,
                &self.rot,
                &self.mass_props,
                &c.gam,
                &self.dv,
                counts,
                &self.jcsr,
                &self.scal,
                &self.warm_rows,
                contacts,
            ],
        );
        let it = k.iterate.bind(
            ctx,
            &[
                &self.params,
                contacts,
                &self.dv,
                &c.gam,
                &c.nv,
                &c.rhs,
                &c.partials,
                &self.scal,
                &self.rot,
                &self.mass_props,
            ],
        );
        let red = k.reduce.bind(
            ctx,
            &[
                &self.params,
                counts,
                &c.partials,
                &self.scal,
                &self.args,
                &self.history,
                step_stats,
                &self.colour_count,
            ],
        );
        Binds { asm, sch, it, red }
    }

    fn bind_fused(
        &self,
        ctx: &GpuContext,
        fused: &Kernel,
        inputs: SolveInputs,
    ) -> [wgpu::BindGroup; 2] {
        let c = &self.c;
        let bind = |next: &wgpu::Buffer| {
            fused.bind(
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
                    &self.args,
                    &self.history,
                    inputs.step_stats,
                    next,
                ],
            )
        };
        // A GPU dispatches no continuation: one bind group serves (no second made per step).
        let first = bind(&self.next_args[0]);
        let second = if self.loop_limited {
            bind(&self.next_args[1])
        } else {
            first.clone()
        };
        [first, second]
    }

    /// For benchmarks: records `repeats` matrix-free products N γ (gather over the CSR, then
    /// per-contact Dᵀ Δv with its partial sums), after the argument setup, and nothing else
    /// (Nγ goes where the warm-start impulses wait between solves).
    pub fn record_products(
        &self,
        ctx: &GpuContext,
        enc: &mut wgpu::CommandEncoder,
        inputs: SolveInputs,
        repeats: u32,
    ) {
        let Binds { sch, it, red, .. } = self.bind_all(ctx, inputs);
        let k = self.kernels(ctx);
        let mut pass = enc.begin_compute_pass(&Default::default());
        let p = &mut pass;
        k.reduce.dispatch_groups(p, "init_args", &red, 1);
        for _ in 0..repeats {
            k.schur
                .dispatch_indirect(p, "gather_gamma", &sch, &self.args, ARGS_BODY);
            k.iterate
                .dispatch_indirect(p, "product_init", &it, &self.args, ARGS_WORK);
        }
    }

    /// For benchmarks: the set-up of an APGD solve (arguments, assembly, Nγ⁰, the Lipschitz
    /// estimate), then `repeats` dispatches of one kernel of a sweep: `apgd_step`,
    /// `gather_trial`, `product_trial` or `reduce_apgd` (the last two keep the contact work
    /// arguments unless the solve converges: benchmark with tolerance 0), or of the set-up:
    /// `assemble`, `gather_gamma`, `product_init`, `reduce_init`, `gather_gamma_minus_one`,
    /// `product_lip`, `reduce_lip`, `painleve` (none writes the bodies; Nγ⁰ and the sweeps
    /// write over the warm-start impulses in `nv`, which
    /// [`crate::step::BenchKnobs::time_solver_kernel`] keeps aside). With `repeats` = 0 the
    /// set-up alone, to subtract.
    pub fn record_kernel_repeats(
        &self,
        ctx: &GpuContext,
        enc: &mut wgpu::CommandEncoder,
        inputs: SolveInputs,
        kernel: &str,
        repeats: u32,
    ) {
        let Binds { asm, sch, it, red } = self.bind_all(ctx, inputs);
        let k = self.kernels(ctx);
        let args = &self.args;
        let mut pass = enc.begin_compute_pass(&Default::default());
        let p = &mut pass;
        k.reduce.dispatch_groups(p, "init_args", &red, 1);
        k.assemble
            .dispatch_indirect(p, "assemble", &asm, args, ARGS_ALL);
        k.schur
            .dispatch_indirect(p, "gather_gamma", &sch, args, ARGS_BODY);
        k.iterate
            .dispatch_indirect(p, "product_init", &it, args, ARGS_WORK);
        k.reduce.dispatch_groups(p, "reduce_init", &red, 1);
        k.schur
            .dispatch_indirect(p, "gather_gamma_minus_one", &sch, args, ARGS_BODY);
        k.iterate
            .dispatch_indirect(p, "product_lip", &it, args, ARGS_WORK);
        k.reduce.dispatch_groups(p, "reduce_lip", &red, 1);
        for _ in 0..repeats {
            match kernel {
                "apgd_step" => k.iterate.dispatch_indirect(p, kernel, &it, args, ARGS_WORK),
                "product_trial" => k
                    .iterate
                    .dispatch_indirect(p, kernel, &it, args, ARGS_PARTS),
                "gather_trial" => k.schur.dispatch_indirect(p, kernel, &sch, args, ARGS_BODY),
                "reduce_apgd" => k.reduce.dispatch_groups(p, kernel, &red, 1),
                "assemble" => k
                    .assemble
                    .dispatch_indirect(p, kernel, &asm, args, ARGS_ALL),
                "painleve" => k.iterate.dispatch_indirect(p, kernel, &it, args, ARGS_ALL),
                "product_init" | "product_lip" => {
                    k.iterate.dispatch_indirect(p, kernel, &it, args, ARGS_WORK)
                }
                "gather_gamma" | "gather_gamma_minus_one" => {
                    k.schur.dispatch_indirect(p, kernel, &sch, args, ARGS_BODY)
                }
                "reduce_init" | "reduce_lip" => k.reduce.dispatch_groups(p, kernel, &red, 1),
                other => panic!("record_kernel_repeats: no sweep or set-up kernel {other}"),
            }
        }
    }

    /// The impulses γ (n, u, w; w reads 0) of the last solve; contact forces are γ/dt.
    pub fn read_impulses(
        &self,
        ctx: &GpuContext,
        n_contacts: u32,
    ) -> Result<Vec<[f32; 4]>, GpuError> {
        let g: Vec<[f32; 4]> =
            buffers::read_buffer(ctx, &self.c.gam, n_contacts.min(self.c.capacity) as usize)?;
        // Lane w carries the steps' μ (solve_sweep `mu_in_w`), not an impulse.
        Ok(g.into_iter().map(|[x, y, z, _]| [x, y, z, 0.0]).collect())
    }

    /// The scalar state after the last solve (iterations, residuals, L, …).
    pub fn read_scalars(&self, ctx: &GpuContext) -> Result<SolverScalars, GpuError> {
        Ok(buffers::read_buffer::<SolverScalars>(ctx, &self.scal, 1)?[0])
    }

    /// Per sweep of the last solve (all its cone problems): (residual of the trial, best
    /// residual, L, accepted).
    pub fn read_history(&self, ctx: &GpuContext) -> Result<Vec<[f32; 4]>, GpuError> {
        let s = self.read_scalars(ctx)?;
        buffers::read_buffer(ctx, &self.history, s.iterations as usize)
    }

    /// The impulses of rows 3–5 (spin, roll u, roll w; angular impulses) of the last solve;
    /// empty when the scene has no rolling or spinning resistance.
    pub fn read_rolling_impulses(
        &self,
        ctx: &GpuContext,
        n_contacts: u32,
    ) -> Result<Vec<[f32; 4]>, GpuError> {
        if !self.c.layout.rolling {
            return Ok(Vec::new());
        }
        let cap = self.c.capacity as usize;
        let n = n_contacts.min(self.c.capacity) as usize;
        let all = buffers::read_buffer::<[f32; 4]>(ctx, &self.c.gam, 7 * cap)?;
        Ok(all[6 * cap..6 * cap + n].to_vec())
    }

    /// The assembled right-hand side (p, η) of the last solve.
    pub fn read_rhs(&self, ctx: &GpuContext, n_contacts: u32) -> Result<Vec<[f32; 4]>, GpuError> {
        buffers::read_buffer(ctx, &self.c.rhs, n_contacts.min(self.c.capacity) as usize)
    }
}

/// Per-body contact lists in the contract's CSR format (entry = contact * 2 + side), built on
/// the CPU: for tests, benchmarks and hosts without the collision stage. With A < B in every
/// contact (as collision writes them) each row holds its side-B entries before its side-A
/// ones, which `save_rows` relies on.
pub fn build_csr(n_bodies: usize, contacts: &[Contact]) -> (Vec<u32>, Vec<u32>) {
    let mut offsets = vec![0u32; n_bodies + 1];
    for c in contacts {
        offsets[c.ids[0] as usize + 1] += 1;
        offsets[c.ids[1] as usize + 1] += 1;
    }
    for b in 0..n_bodies {
        offsets[b + 1] += offsets[b];
    }
    let mut fill = offsets.clone();
    let mut entries = vec![0u32; 2 * contacts.len()];
    // Contacts in ascending order, so every body's entries come out ascending.
    for (i, c) in contacts.iter().enumerate() {
        for side in 0..2 {
            let b = c.ids[side] as usize;
            entries[fill[b] as usize] = 2 * i as u32 + side as u32;
            fill[b] += 1;
        }
    }
    (offsets, entries)
}

/// The contract's `counts` words for `n` contacts (no overflow).
pub fn counts_words(n: u32) -> [u32; 16] {
    let mut w = [0u32; 16];
    w[0] = n;
    w[2] = n;
    w[4] = n.div_ceil(WORKGROUP_SIZE);
    w[5] = 1;
    w[6] = 1;
    w
}

/// The records this stage shares with its shaders have one layout on both sides.
#[cfg(test)]
#[test]
fn records_have_the_shaders_layout() {
    use crate::gpu::layout::{check, rust_words};
    let solve = rust_words!(SolveParams {
        bodies,
        capacity,
        kind,
        warm_start,
        dt,
        omega,
        recovery_speed,
        tolerance,
        has_models,
        materials,
        has_state,
        joint_blocks,
        slop,
        stabilisation,
        sweep_cap,
        loop_budget,
        shear_flow,
    });
    check("solve_iterate", "SolveParams", solve);
    let scalars = rust_words!(SolverScalars {
        lip,
        theta,
        beta,
        best,
        res,
        res0,
        max_penetration,
        roles,
        accepted,
        n_parts,
        converged,
        iterations,
        n_contacts,
        n_groups,
        outer,
        outer_done,
        low,
    });
    check("solve_iterate", "Scalars", scalars);
}
