//! The time step, recorded as a sequence of GPU stages (book: Architecture, "The step"):
//! free velocity → collision → solve (+ velocity update) → position update → statistics.
//!
//! Several steps are recorded into one command buffer; per-step statistics are copied into
//! a readback ring and read once per batch, so nothing inside a step waits on the CPU.
//! Contact buffers are sized ahead; if a step of the batch overflows them, the batch is
//! rolled back from a GPU-side snapshot, the buffers grow, and the batch is redone — a
//! contact is never dropped.

mod batched;
pub mod bench;
pub mod integrate;
mod lemke;
mod lemke_cpu;
mod parking;
mod periodic;
#[cfg(test)]
mod shared_ids;
pub mod stats;

pub use batched::BatchedState;
pub use bench::BenchKnobs;
pub use lemke::LemkeStepLog;
pub use lemke_cpu::{LemkeStep, CPU_STEP_MAX_BODIES};
pub use parking::Activation;

use crate::bodies::{BodyState, GpuBodies};
use crate::collide::{self, BoundaryShape, Collide, CollideSettings, ContactRecord};
use crate::gpu::{buffers, GpuContext, GpuError};
use crate::patch::stage::PatchStage;
use crate::solve::{Solve, SolveInputs, SolverSettings};
pub use stats::BodyTotals;
use std::sync::Arc;

/// What contact handling needs: boundary shapes (indexed by a boundary body's shape index),
/// collision settings and solver settings.
#[derive(Clone, Debug)]
pub struct ContactSetup {
    pub shapes: Vec<BoundaryShape>,
    pub collide: CollideSettings,
    pub solver: SolverSettings,
    /// Per-material contact model table (`model::rows::material_row`); empty = all Coulomb.
    pub models: Vec<crate::model::rows::MaterialRow>,
    /// Grid side of the `lugre_patch` cells (0: no material has the model).
    pub patch_cells: u32,
}

/// Settings the step needs (the scene's simulation and solver sections reduce to this).
#[derive(Clone, Debug)]
pub struct StepSettings {
    pub dt: f64,
    pub gravity: [f64; 3],
    /// None: bodies fly through each other (pure integration).
    pub contact: Option<ContactSetup>,
}

/// Statistics of one step, as read back from the GPU.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct StepRecord {
    pub step: u64,
    pub time: f64,
    pub totals: BodyTotals,
    pub contacts: u32,
    pub iterations: u32,
    /// The returned impulses' residual as the tolerance measures it: RMS per contact row
    /// (m/s). Lemke stepping: the LCP's ‖min(z, Mz + q)‖₂.
    pub residual: f64,
    pub max_penetration: f64,
    /// Cone problems solved (exact cone: outer iterations; 1 for the relaxed cone).
    pub outer_iterations: u32,
    /// Sliding contacts with A ≤ 0 (Painlevé diagnostic, Song et al. 2001).
    pub painleve: u32,
}

/// One step's slot of the statistics ring ([`RING_SLOT`] bytes), decoded: the body totals
/// and the `step_stats` words (see the contract and [`STEP_STATS_WORDS`]).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
struct StepStats {
    totals: BodyTotals,
    contacts: u32,
    /// The contact buffers overflowed: the batch is redone with [`StepStats::contacts_needed`].
    overflow: bool,
    iterations: u32,
    residual: f32,
    max_penetration: f32,
    contacts_needed: u32,
    painleve: u32,
    cone_problems: u32,
}

impl StepStats {
    /// The first `n` slots of a ring read back as 16-byte words (4 per slot).
    fn decode_ring(raw: &[[u32; 4]], n: u32) -> Vec<StepStats> {
        let f = |w: [u32; 4]| w.map(f32::from_bits);
        raw.chunks_exact(4)
            .take(n as usize)
            .map(|slot| {
                let (words, more) = (slot[2], slot[3]);
                StepStats {
                    totals: stats::Stats::decode(&[f(slot[0]), f(slot[1])]),
                    contacts: words[0],
                    overflow: words[1] != 0,
                    iterations: words[2],
                    residual: f32::from_bits(words[3]),
                    max_penetration: f32::from_bits(more[0]),
                    contacts_needed: more[1],
                    painleve: more[2],
                    cone_problems: more[3],
                }
            })
            .collect()
    }
}

/// The records of the steps `first + 1 ..= first + ring.len()`, for every step whose index
/// is a multiple of `every` and for the last one.
fn records_from_ring(ring: &[StepStats], first: u64, every: u64, dt: f64) -> Vec<StepRecord> {
    let n = ring.len();
    ring.iter()
        .enumerate()
        .filter_map(|(k, st)| {
            let s = first + k as u64 + 1;
            if !s.is_multiple_of(every) && k + 1 != n {
                return None;
            }
            Some(StepRecord {
                step: s,
                time: s as f64 * dt,
                totals: st.totals,
                contacts: st.contacts,
                iterations: st.iterations,
                residual: st.residual as f64,
                max_penetration: st.max_penetration as f64,
                outer_iterations: st.cone_problems,
                painleve: st.painleve,
            })
        })
        .collect()
}

/// Contacts the next batch may reach, from a batch's counts per step: its peak plus twice
/// its rise (first to last step); a steady or falling count predicts its peak.
pub fn contacts_ahead(contacts: &[u32]) -> u64 {
    let (Some(&first), Some(&last)) = (contacts.first(), contacts.last()) else {
        return 0;
    };
    let peak = contacts.iter().copied().max().unwrap_or(0) as u64;
    peak + 2 * (last as u64).saturating_sub(first as u64)
}

/// Most steps [`Simulation::advance`] records in one submission.
pub const MAX_BATCH: u32 = 32;

/// What the collision pipelines must handle beyond the scene's shapes and contact models:
/// a periodic cell and grains parked by an inflow or outflow. Known when the simulation
/// opens ([`Simulation::open`]), the pipelines are compiled once for it, and a contact stage
/// rebuilt later (a restored checkpoint) is built alike.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct CollideScope {
    pub periodic: Option<collide::PeriodicCell>,
    /// Grains may be parked during the run ([`Simulation::park`]).
    pub parking: bool,
}

/// The smallest number of sweeps recorded per solve (see `Simulation::adapt_sweep_budget`).
pub const MIN_SWEEP_BUDGET: u32 = 8;

/// Bytes per step in the statistics ring: body totals (32) + step stats (32).
const RING_SLOT: u64 = 64;
/// `step_stats` words (see the contract): [0] contacts, [1] overflow, [2] iterations,
/// [3] residual bits, [4] max penetration bits, [5] contacts needed, [6] Painlevé contacts, [7] cone problems.
const STEP_STATS_WORDS: u64 = 8;

struct ContactStages {
    collide: Collide,
    solve: Solve,
    step_stats: wgpu::Buffer,
    /// Joint blocks appended after the contacts (src/joints), if the scene has joints.
    joints: Option<crate::joints::Joints>,
    /// The `lugre_patch` cells (src/patch/stage.rs), if a material has the model.
    patches: Option<PatchStage>,
    /// Whether some grain can make a Painlevé contact ([`painleve_possible`]).
    painleve_grains: bool,
}

/// Whether a contact between these bodies can have A = J_N M⁻¹ (J_N + μ J_f̂)ᵀ ≤ 0 (the
/// Painlevé diagnostic's count): not where every grain is a dynamic sphere. A sphere's
/// contact point lies on its normal through the centre (r × n = 0), so its share of A is
/// m⁻¹ (1 + μ n·f̂) = m⁻¹ > 0, and a boundary's is 0: A > 0 for every contact, whatever μ.
fn painleve_possible(state: &BodyState) -> bool {
    let nb = boundary_count(state);
    (nb..state.len())
        .any(|b| state.info[b][2] != crate::bodies::SHAPE_SPHERE || state.mass_props[b][3] <= 0.0)
}

impl ContactStages {
    fn new(
        ctx: &GpuContext,
        bodies: &GpuBodies,
        state: &BodyState,
        setup: &ContactSetup,
        dt: f32,
        capacity: Option<u32>,
        scope: &CollideScope,
    ) -> Result<Self, GpuError> {
        // Collide::new's default capacity, within what the solver's arrays can hold.
        let capacity = capacity.map_or_else(|| Collide::default_capacity(state), u64::from);
        let capacity = capacity.min(Simulation::max_contacts(ctx)) as u32;
        // Patch friction models (book: Contact patches): collision emits patch records for them.
        let patch: Vec<u8> = setup
            .models
            .iter()
            .map(crate::model::rows::patch_kind)
            .collect();
        let spec = collide::Specialisation {
            patches: patch.iter().any(|&p| p > 0),
            periodic: scope.periodic.is_some(),
            parking: scope.parking,
        };
        let (shapes, settings) = (&setup.shapes, &setup.collide);
        let mut collide =
            Collide::specialised(ctx, bodies, state, shapes, settings, capacity, spec)?;
        collide.set_patch_materials(ctx, &setup.collide.friction, &patch)?;
        if let Some(cell) = &scope.periodic {
            collide.set_periodic(ctx, state, cell, setup.collide.envelope)?;
        }
        // One model row per material (or none: all Coulomb), never a silent fallback.
        if !setup.models.is_empty() && setup.models.len() != setup.collide.friction.len() {
            return Err(GpuError::Invalid(format!(
                "{} contact model rows for {} materials",
                setup.models.len(),
                setup.collide.friction.len()
            )));
        }
        let mut solve = Solve::new(ctx, bodies, collide.capacity(), &setup.solver, dt)?;
        solve.set_models(ctx, &setup.models)?;
        if let Some(cell) = &scope.periodic {
            let flow = cell.gpu(0.0)[2];
            solve.set_shear_flow(ctx, [flow[0], flow[1], flow[2]]);
        }
        let painleve_grains = painleve_possible(state);
        solve.set_painleve(painleve_grains);
        let step_stats = buffers::storage_zeroed(ctx, "step stats", STEP_STATS_WORDS * 4)?;
        let patches = Self::patch_stage(ctx, state, setup)?;
        let mut c = ContactStages {
            collide,
            solve,
            step_stats,
            joints: None,
            patches,
            painleve_grains,
        };
        c.bind_patches(ctx, bodies);
        Ok(c)
    }

    /// The lugre_patch stage: 6 slots per box body (one per face; more face–face patches
    /// than that in a step is reported by `Simulation::advance`), at least 16.
    fn patch_stage(
        ctx: &GpuContext,
        state: &BodyState,
        setup: &ContactSetup,
    ) -> Result<Option<PatchStage>, GpuError> {
        let dist = setup
            .models
            .iter()
            .any(|r| crate::model::rows::patch_kind(r) == 2);
        if !dist || setup.patch_cells == 0 {
            return Ok(None);
        }
        let boxes = state
            .info
            .iter()
            .filter(|i| i[2] == crate::bodies::SHAPE_BOX)
            .count() as u32;
        Ok(Some(PatchStage::new(
            ctx,
            setup.patch_cells,
            (6 * boxes).max(16),
        )?))
    }

    /// (Re)binds the patch stage to the collision and solver buffers (after growth).
    fn bind_patches(&mut self, ctx: &GpuContext, bodies: &GpuBodies) {
        let Some(p) = self.patches.as_mut() else {
            return;
        };
        let (models, n_models, gam, seg_aux, seg_state) = self.solve.patch_inputs();
        let inputs = crate::patch::stage::StageInputs {
            contacts: self.collide.contacts(),
            counts: self.collide.counts(),
            vel: &bodies.vel,
            omega: &bodies.omega,
            models,
            n_models,
            gam,
            seg_aux,
            seg_state,
            contact_cap: self.collide.capacity().min(self.solve.capacity()),
        };
        p.bind(ctx, &inputs, self.solve.dt() as f64);
    }

    /// Collision, then its counts into the step's stats.
    fn record_collide(&self, ctx: &GpuContext, bodies: &GpuBodies, enc: &mut wgpu::CommandEncoder) {
        self.collide.record(enc);
        if let Some(j) = &self.joints {
            j.record(
                ctx,
                enc,
                &bodies.pos,
                &bodies.rot,
                self.collide.counts(),
                self.collide.contacts(),
                self.solve.rhs_buffer(),
            );
        }
        // Contacts, overflow flag and needed count into the step's stats.
        enc.copy_buffer_to_buffer(self.collide.counts(), 0, &self.step_stats, 0, 8);
        enc.copy_buffer_to_buffer(self.collide.counts(), 8, &self.step_stats, 20, 4);
        if let Some(p) = &self.patches {
            let mut pass = enc.begin_compute_pass(&wgpu::ComputePassDescriptor {
                label: Some("patch prepare"),
                timestamp_writes: None,
            });
            p.record_prepare(&mut pass);
        }
    }

    /// The solve and velocity update, after [`ContactStages::record_collide`].
    fn record_solve(&self, ctx: &GpuContext, enc: &mut wgpu::CommandEncoder) {
        let inputs = SolveInputs {
            contacts: self.collide.contacts(),
            counts: self.collide.counts(),
            body_offsets: self.collide.body_offsets(),
            body_entries: self.collide.body_entries(),
            step_stats: &self.step_stats,
        };
        self.solve.record(ctx, enc, inputs);
        if let Some(p) = &self.patches {
            p.record_advance(enc);
        }
    }

    /// Most contacts the buffers may grow to: the records' and the solver's arrays.
    fn max_contacts(&self, ctx: &GpuContext) -> u64 {
        self.collide
            .max_capacity(ctx)
            .min(self.solve.max_capacity(ctx))
    }

    fn grow(&mut self, ctx: &GpuContext, bodies: &GpuBodies, needed: u32) -> Result<(), GpuError> {
        self.collide.limit_capacity(self.solve.max_capacity(ctx));
        self.collide.grow(ctx, needed, 0)?;
        self.solve.grow(ctx, self.collide.capacity())?;
        self.joint_params(ctx);
        self.bind_patches(ctx, bodies);
        Ok(())
    }

    /// Sets the joint stage and the solver's joint lists (no growth: see `set_joints`).
    fn attach_joints(
        &mut self,
        ctx: &GpuContext,
        joints: &[crate::joints::Joint],
        n_bodies: usize,
    ) -> Result<(), GpuError> {
        let s = *self.solve.settings();
        let dt = self.solve.dt();
        let stage = crate::joints::Joints::new(ctx, joints, n_bodies, dt, s.recovery_speed)?;
        let nb = stage.n_blocks();
        self.solve.set_joints(ctx, nb, &stage.lists)?;
        // Joint rows have arms off their normals.
        self.solve.set_painleve(self.painleve_grains || nb > 0);
        self.joints = (nb > 0).then_some(stage);
        self.joint_params(ctx);
        Ok(())
    }

    /// The joint stage's capacity, dt and recovery speed from the solver's.
    fn joint_params(&self, ctx: &GpuContext) {
        if let Some(j) = &self.joints {
            let s = self.solve.settings();
            let cap = self.collide.capacity().min(self.solve.capacity());
            j.set_params(ctx, cap, self.solve.dt(), s.recovery_speed);
        }
    }
}

/// Names of the stages that [`BenchKnobs::set_stage_timing`] and
/// [`BenchKnobs::step_stages_wall`] time, in order.
pub const STAGE_NAMES: [&str; 4] = ["free velocity", "collision", "solve", "integrate+stats"];

/// Seconds spent in each stage of one step, in the order of [`STAGE_NAMES`].
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct StageTimes {
    pub seconds: [f64; 4],
}

impl StageTimes {
    pub fn total(&self) -> f64 {
        self.seconds.iter().sum()
    }
}

/// Timestamps written per timed step: start of free velocity, end of free velocity, end of
/// collision, start and end of the position update + statistics pass.
const STAMPS_PER_STEP: u32 = 5;
/// Steps per batch that get timestamps (wgpu allows at most 4096 queries per set).
pub const MAX_TIMED_STEPS: u32 = 4096 / STAMPS_PER_STEP;

/// GPU timestamp queries around the stages of each step (BOTTOM_OF_PIPE on Vulkan, so a
/// stamp is taken once all earlier work has finished).
struct StageTimer {
    set: wgpu::QuerySet,
    resolve: wgpu::Buffer,
    readback: wgpu::Buffer,
    /// Nanoseconds per timestamp tick.
    period: f64,
    /// Stage times of the steps of the last `advance` (of each of its batches, the first
    /// [`MAX_TIMED_STEPS`]).
    last: Vec<StageTimes>,
}

impl StageTimer {
    fn new(ctx: &GpuContext) -> Self {
        let n = MAX_TIMED_STEPS * STAMPS_PER_STEP;
        let set = ctx.device.create_query_set(&wgpu::QuerySetDescriptor {
            label: Some("stage timestamps"),
            ty: wgpu::QueryType::Timestamp,
            count: n,
        });
        let size = n as u64 * 8;
        let resolve = ctx.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("stage timestamps resolve"),
            size,
            usage: wgpu::BufferUsages::QUERY_RESOLVE | wgpu::BufferUsages::COPY_SRC,
            mapped_at_creation: false,
        });
        let readback = ctx.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("stage timestamps readback"),
            size,
            usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        StageTimer {
            set,
            resolve,
            readback,
            period: ctx.queue.get_timestamp_period() as f64,
            last: Vec::new(),
        }
    }

    /// A compute pass that does nothing but take timestamp `index` when it begins.
    fn mark(&self, enc: &mut wgpu::CommandEncoder, index: u32) {
        let _pass = enc.begin_compute_pass(&wgpu::ComputePassDescriptor {
            label: Some("stage timestamp"),
            timestamp_writes: Some(wgpu::ComputePassTimestampWrites {
                query_set: &self.set,
                beginning_of_pass_write_index: Some(index),
                end_of_pass_write_index: None,
            }),
        });
    }

    fn writes(&self, first: u32, last: u32) -> wgpu::ComputePassTimestampWrites<'_> {
        wgpu::ComputePassTimestampWrites {
            query_set: &self.set,
            beginning_of_pass_write_index: Some(first),
            end_of_pass_write_index: Some(last),
        }
    }

    fn record_resolve(&self, enc: &mut wgpu::CommandEncoder, steps: u32) {
        let n = steps * STAMPS_PER_STEP;
        enc.resolve_query_set(&self.set, 0..n, &self.resolve, 0);
        enc.copy_buffer_to_buffer(&self.resolve, 0, &self.readback, 0, n as u64 * 8);
    }

    fn read(&mut self, ctx: &GpuContext, steps: u32) -> Result<(), GpuError> {
        let n = (steps * STAMPS_PER_STEP) as usize;
        let raw: Vec<[u32; 2]> = buffers::map_and_read(ctx, &self.readback, n)?;
        let t: Vec<u64> = raw
            .iter()
            .map(|w| w[0] as u64 | ((w[1] as u64) << 32))
            .collect();
        let sec = |a: u64, b: u64| b.saturating_sub(a) as f64 * self.period * 1e-9;
        self.last.extend(
            t.chunks_exact(STAMPS_PER_STEP as usize)
                .map(|s| StageTimes {
                    seconds: [
                        sec(s[0], s[1]),
                        sec(s[1], s[2]),
                        sec(s[2], s[3]),
                        sec(s[3], s[4]),
                    ],
                }),
        );
        Ok(())
    }
}

/// The three ways a step is taken; [`Simulation::advance`] runs one of them, each in its own
/// file: batched GPU solves with rollback and sweep budgets (`batched.rs`), the exact LCP
/// with collision on the GPU (`lemke.rs`), and the exact LCP with the whole step on the CPU
/// (`lemke_cpu.rs`, small scenes: the state then lives on the CPU until read back).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StepPath {
    Batched,
    LemkeOnGpu,
    LemkeOnCpu,
}

pub struct Simulation {
    pub ctx: Arc<GpuContext>,
    pub bodies: GpuBodies,
    pub settings: StepSettings,
    integrate: integrate::Integrate,
    stats: stats::Stats,
    contact: Option<ContactStages>,
    /// The statistics ring every path's steps write and a batch reads back once.
    ring: Option<(wgpu::Buffer, wgpu::Buffer, u64)>,
    step_index: u64,
    timer: Option<StageTimer>,
    /// How many times a batch was redone after a contact-buffer overflow (either path).
    pub regrowths: u32,
    /// The batched GPU path's own state (snapshot, sweep budgets, counters).
    pub batched: batched::BatchedState,
    /// The exact LCP path's own state, when it replaces the GPU solver
    /// ([`Simulation::set_lemke`]); with the whole step on the CPU it holds the bodies too.
    lemke: Option<lemke::LemkeStage>,
    /// What collision is compiled for beyond shapes and models.
    scope: CollideScope,
    /// The image offsets of a sheared periodic cell ([`Simulation::set_periodic`]).
    shear: Option<periodic::ShearSchedule>,
}

impl Simulation {
    pub fn new(
        ctx: Arc<GpuContext>,
        state: &BodyState,
        settings: StepSettings,
    ) -> Result<Self, GpuError> {
        Self::open(ctx, state, settings, CollideScope::default())
    }

    /// As [`Simulation::new`], with collision compiled for `scope` from the start (a
    /// periodic cell is then applied as by [`Simulation::set_periodic`]).
    pub fn open(
        ctx: Arc<GpuContext>,
        state: &BodyState,
        settings: StepSettings,
        scope: CollideScope,
    ) -> Result<Self, GpuError> {
        let bodies = GpuBodies::upload(&ctx, state)?;
        let g = settings.gravity.map(|x| x as f32);
        let dt = settings.dt as f32;
        let integrate = integrate::Integrate::new(&ctx, &bodies, g, dt)?;
        let stats = stats::Stats::new(&ctx, &bodies)?;
        let contact = match &settings.contact {
            Some(setup) => {
                let mut c = ContactStages::new(&ctx, &bodies, state, setup, dt, None, &scope)?;
                c.solve.set_gravity(&ctx, g);
                Some(c)
            }
            None => None,
        };
        let mut sim = Simulation {
            scope,
            ctx,
            bodies,
            settings,
            integrate,
            stats,
            contact,
            ring: None,
            step_index: 0,
            timer: None,
            regrowths: 0,
            batched: batched::BatchedState::default(),
            lemke: None,
            shear: None,
        };
        sim.choose_fused(sim.first_contact_estimate());
        if let Some(cell) = &scope.periodic {
            sim.set_periodic(cell)?;
        }
        Ok(sim)
    }

    /// Most contacts a step can hold on this adapter (plain Coulomb row layout): the
    /// chunked contact records (`gpu::chunked`), one binding of CSR entries, and the
    /// solver's arrays ([`Solve::max_capacity_for`]).
    pub fn max_contacts(ctx: &GpuContext) -> u64 {
        // The APGD layout: Jacobi's holds more.
        let plain = crate::solve::Layout::plain(crate::solve::SolverKind::Apgd);
        Collide::record_limit(ctx).min(Solve::max_capacity_for(ctx, plain))
    }

    /// Steps taken so far.
    pub fn step_index(&self) -> u64 {
        self.step_index
    }

    /// Simulated time, computed (not accumulated) so a resumed run agrees bit for bit.
    pub fn time(&self) -> f64 {
        self.step_index as f64 * self.settings.dt
    }

    fn ring(&mut self, slots: u64) -> (wgpu::Buffer, wgpu::Buffer) {
        let need = slots.max(1) * RING_SLOT;
        if self.ring.as_ref().is_none_or(|r| r.2 < need) {
            let dev = &self.ctx.device;
            let gpu = dev.create_buffer(&wgpu::BufferDescriptor {
                label: Some("stats ring"),
                size: need,
                usage: wgpu::BufferUsages::COPY_SRC | wgpu::BufferUsages::COPY_DST,
                mapped_at_creation: false,
            });
            let host = dev.create_buffer(&wgpu::BufferDescriptor {
                label: Some("stats ring readback"),
                size: need,
                usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
                mapped_at_creation: false,
            });
            self.ring = Some((gpu, host, need));
        }
        let r = self.ring.as_ref().unwrap();
        (r.0.clone(), r.1.clone())
    }

    /// Records one step and copies its statistics into ring slot `slot`.
    fn record_step(&self, enc: &mut wgpu::CommandEncoder, ring: &wgpu::Buffer, slot: u64) {
        // Timestamps for the first MAX_TIMED_STEPS steps of the batch when timing is on.
        let timer = self
            .timer
            .as_ref()
            .filter(|_| slot < MAX_TIMED_STEPS as u64);
        let base = slot as u32 * STAMPS_PER_STEP;
        self.record_shear_offsets(enc, slot);
        {
            let mut pass = enc.begin_compute_pass(&wgpu::ComputePassDescriptor {
                label: Some("free velocity"),
                timestamp_writes: timer.map(|t| t.writes(base, base + 1)),
            });
            self.integrate.record_free_velocity(&mut pass);
        }
        if let Some(c) = &self.contact {
            c.record_collide(&self.ctx, &self.bodies, enc);
        }
        if let Some(t) = timer {
            t.mark(enc, base + 2);
        }
        if let Some(c) = &self.contact {
            c.record_solve(&self.ctx, enc);
        }
        {
            let mut pass = enc.begin_compute_pass(&wgpu::ComputePassDescriptor {
                label: Some("positions and stats"),
                timestamp_writes: timer.map(|t| t.writes(base + 3, base + 4)),
            });
            self.integrate.record_update_positions(&mut pass);
            self.stats.record(&mut pass);
        }
        enc.copy_buffer_to_buffer(self.stats.totals_buffer(), 0, ring, slot * RING_SLOT, 32);
        if let Some(c) = &self.contact {
            enc.copy_buffer_to_buffer(&c.step_stats, 0, ring, slot * RING_SLOT + 32, 32);
        }
    }

    fn body_buffers(&self) -> [&wgpu::Buffer; 4] {
        let b = &self.bodies;
        [&b.pos, &b.rot, &b.vel, &b.omega]
    }

    /// Advances `n` steps and returns the statistics of every step whose index (after the
    /// step) is a multiple of `stats_every` (and of the last step), on the stepper
    /// [`Simulation::path`] names. On the batched path the steps are submitted in batches of
    /// at most [`MAX_BATCH`], each read back once: the sweep budget follows the steps a batch
    /// before (a settling start needs the cap, the bed after it a few sweeps), and an
    /// overflow redoes one batch, not all `n` steps. Results do not depend on the batching.
    pub fn advance(&mut self, n: u32, stats_every: u64) -> Result<Vec<StepRecord>, GpuError> {
        if n == 0 {
            return Ok(Vec::new());
        }
        match self.path() {
            StepPath::LemkeOnCpu => self.advance_lemke_cpu(n, stats_every),
            StepPath::LemkeOnGpu => self.advance_lemke(n, stats_every),
            StepPath::Batched => self.advance_batched(n, stats_every),
        }
    }

    /// Which of the three steppers [`Simulation::advance`] runs now.
    pub fn path(&self) -> StepPath {
        if self.lemke_on_cpu() {
            StepPath::LemkeOnCpu
        } else if self.lemke.is_some() {
            StepPath::LemkeOnGpu
        } else {
            StepPath::Batched
        }
    }

    /// Solver iterations, residual and max penetration of the last step with contacts
    /// (from the `step_stats` buffer); None without contacts.
    pub fn last_step_stats(&self) -> Result<Option<(u32, f64, f64)>, GpuError> {
        let Some(c) = &self.contact else {
            return Ok(None);
        };
        if let Some(l) = self.lemke.as_ref().filter(|l| l.cpu.is_some()) {
            return Ok(Some(l.last_stats));
        }
        let w: Vec<u32> = buffers::read_buffer(&self.ctx, &c.step_stats, 8)?;
        Ok(Some((
            w[2],
            f32::from_bits(w[3]) as f64,
            f32::from_bits(w[4]) as f64,
        )))
    }

    /// Bytes of GPU memory held for bodies (fixed per body) and for contacts (at the
    /// current capacity): (body arrays, collision fixed buffers, per-capacity contact
    /// buffers of collision + solver, solver per-body buffers).
    pub fn memory_bytes(&self) -> MemoryUse {
        let n = self.bodies.count as u64;
        let bodies = n * 128;
        match &self.contact {
            None => MemoryUse {
                bodies,
                ..Default::default()
            },
            Some(c) => {
                let (fixed, per_cap) = c.collide.memory_bytes();
                let cap = c.collide.capacity() as u64;
                MemoryUse {
                    bodies,
                    collide_fixed: fixed,
                    contacts: per_cap + cap * c.solve.bytes_per_contact(),
                    solver_bodies: n * crate::solve::BYTES_PER_BODY,
                    contact_capacity: cap,
                }
            }
        }
    }

    /// Reads every body back (from the CPU when the exact solver steps there).
    pub fn read_state(&self) -> Result<BodyState, GpuError> {
        match self.cpu_held() {
            Some(s) => Ok(s.clone()),
            None => self.bodies.download(&self.ctx),
        }
    }

    /// Positions, orientations and velocities of every body (the other fields empty), as
    /// [`GpuBodies::download_kinematics`] reads them, or from the CPU when it holds them.
    pub fn download_kinematics(&self) -> Result<BodyState, GpuError> {
        match self.cpu_held() {
            Some(s) => Ok(BodyState {
                pos: s.pos.clone(),
                rot: s.rot.clone(),
                vel: s.vel.clone(),
                omega: s.omega.clone(),
                info: s.info.clone(),
                ..Default::default()
            }),
            None => self.bodies.download_kinematics(&self.ctx),
        }
    }

    /// The contacts of the last step (sorted by key) and their impulses γ = (n, u, w)·dt·force.
    pub fn read_contacts(&self) -> Result<(Vec<ContactRecord>, Vec<[f32; 4]>), GpuError> {
        let Some(c) = &self.contact else {
            return Ok((Vec::new(), Vec::new()));
        };
        // The exact solver: the contacts its last LCP held (those with a dynamic body).
        if let Some(l) = &self.lemke {
            let (contacts, gamma) = &l.last;
            let imp = gamma
                .iter()
                .map(|g| [g[0], g[1], g[2], 0.0].map(|x| x as f32));
            return Ok((contacts.clone(), imp.collect()));
        }
        let contacts = c.collide.read_contacts(&self.ctx)?;
        let impulses = c.solve.read_impulses(&self.ctx, contacts.len() as u32)?;
        Ok((contacts, impulses))
    }

    /// Adds joints (src/joints) to the step: their row blocks are solved with the contacts
    /// from the next step on. Needs contact handling (`StepSettings::contact`); replaces any
    /// joints set before. With the Lemke solver the rows go into its LCP.
    pub fn set_joints(&mut self, joints: &[crate::joints::Joint]) -> Result<(), GpuError> {
        let refuse = |m: &str| GpuError::Invalid(format!("joints: {m}"));
        let n = self.bodies.count as usize;
        for j in joints {
            let bad = |b: u32| b as usize >= n;
            if bad(j.body_b) || j.body_a.is_some_and(bad) || j.body_a == Some(j.body_b) {
                return Err(refuse(
                    "a joint names a missing body or the same body twice",
                ));
            }
        }
        let ctx = self.ctx.clone();
        let Some(c) = &mut self.contact else {
            return Err(refuse("joints need contact handling (a solver)"));
        };
        c.attach_joints(&ctx, joints, n)?;
        // Room for the contacts seen so far plus every joint row.
        let need = c.collide.capacity() + c.solve.joint_blocks();
        c.grow(&ctx, &self.bodies, need)?;
        self.batched.snapshot = None;
        self.lemke_sync_joints();
        Ok(())
    }

    /// The joints set by [`Simulation::set_joints`].
    pub fn joints(&self) -> &[crate::joints::Joint] {
        match self.contact.as_ref().and_then(|c| c.joints.as_ref()) {
            Some(j) => &j.joints,
            None => &[],
        }
    }

    /// The joint block records and impulses of the last step (after the contacts).
    pub fn read_joint_rows(&self) -> Result<(Vec<ContactRecord>, Vec<[f32; 4]>), GpuError> {
        let Some(c) = &self.contact else {
            return Ok((Vec::new(), Vec::new()));
        };
        let Some(j) = &c.joints else {
            return Ok((Vec::new(), Vec::new()));
        };
        // The exact solver: the block records and impulses of its last LCP.
        if let Some(l) = &self.lemke {
            let (recs, lambda) = &l.last_joints;
            let imp = lambda
                .iter()
                .map(|g| [g[0], g[1], g[2], 0.0].map(|x| x as f32));
            return Ok((recs.clone(), imp.collect()));
        }
        let nc = c.collide.read_counts(&self.ctx)?.contacts as usize;
        let total = (nc + j.n_blocks() as usize).min(c.collide.capacity() as usize);
        let recs: Vec<ContactRecord> =
            buffers::read_buffer(&self.ctx, c.collide.contacts(), total)?;
        let imp = c.solve.read_impulses(&self.ctx, total as u32)?;
        Ok((
            recs[nc.min(total)..].to_vec(),
            imp[nc.min(total)..].to_vec(),
        ))
    }

    /// Force and torque of every joint on its body B over the last step, and its motor's.
    pub fn joint_reactions(&self) -> Result<Vec<crate::joints::JointReaction>, GpuError> {
        let (recs, imp) = self.read_joint_rows()?;
        Ok(crate::joints::reactions(
            self.joints(),
            &recs,
            &imp,
            self.settings.dt,
        ))
    }

    /// Contact buffer capacity (0 without contacts).
    pub fn contact_capacity(&self) -> u32 {
        self.contact.as_ref().map_or(0, |c| c.collide.capacity())
    }

    /// Replaces the body state (same count) and the step counter.
    pub fn restore(&mut self, step_index: u64, state: &BodyState) {
        self.bodies.write(&self.ctx, state);
        if let Some(s) = self.cpu_held_mut() {
            *s = state.clone();
        }
        self.step_index = step_index;
        self.batched.contacts_sized = false;
    }

    /// Changes gravity from the next step on: a uniform load that varies in time (the LuGre
    /// tests' ramped and oscillating tangential pulls).
    pub fn set_gravity(&mut self, gravity: [f64; 3]) {
        self.settings.gravity = gravity;
        let g = gravity.map(|x| x as f32);
        self.integrate.set_dt(&self.ctx, g, self.settings.dt as f32);
        if let Some(c) = &mut self.contact {
            c.solve.set_gravity(&self.ctx, g);
        }
    }

    /// Sets the velocity of a kinematic body (e.g. a boundary's prescribed motion changes).
    pub fn set_velocity(&mut self, body: u32, velocity: [f32; 3], angular: [f32; 3]) {
        let q = &self.ctx.queue;
        let off = body as u64 * 16;
        q.write_buffer(
            &self.bodies.vel,
            off,
            bytemuck::cast_slice(&[velocity[0], velocity[1], velocity[2], 0.0]),
        );
        q.write_buffer(
            &self.bodies.omega,
            off,
            bytemuck::cast_slice(&[angular[0], angular[1], angular[2], 0.0]),
        );
        if let Some(s) = self.cpu_held_mut() {
            s.vel[body as usize] = [velocity[0], velocity[1], velocity[2], 0.0];
            s.omega[body as usize] = [angular[0], angular[1], angular[2], 0.0];
        }
    }

    /// Makes a body dynamic with these mass properties (a scheduled release).
    pub fn set_dynamic(&mut self, body: u32, mass_props: [f32; 4]) {
        let q = &self.ctx.queue;
        let off = body as u64 * 16;
        q.write_buffer(
            &self.bodies.mass_props,
            off,
            bytemuck::cast_slice(&mass_props),
        );
        q.write_buffer(
            &self.bodies.info,
            off,
            bytemuck::bytes_of(&crate::bodies::MOTION_DYNAMIC),
        );
        if let Some(s) = self.cpu_held_mut() {
            s.mass_props[body as usize] = mass_props;
            s.info[body as usize][0] = crate::bodies::MOTION_DYNAMIC;
        }
    }

    /// Everything the next step depends on, as named byte sections for a checkpoint: the
    /// bodies, and with contacts the buffer capacity and the solver's warm start.
    pub fn checkpoint_sections(&self) -> Result<Vec<(String, Vec<u8>)>, GpuError> {
        let mut out = vec![("bodies".to_string(), self.read_state()?.to_bytes())];
        if let Some(c) = &self.contact {
            let (keys, gam) = c.solve.read_warm_start(&self.ctx)?;
            out.push((
                "contact_capacity".into(),
                c.collide.capacity().to_le_bytes().to_vec(),
            ));
            out.push((
                "warm_start_keys".into(),
                bytemuck::cast_slice(&keys).to_vec(),
            ));
            out.push((
                "warm_start_impulses".into(),
                bytemuck::cast_slice(&gam).to_vec(),
            ));
        }
        // The lugre_patch cells (their keys, frozen twists and deflections).
        if let Some(p) = self.contact.as_ref().and_then(|c| c.patches.as_ref()) {
            let (meta, cells) = p.read_state(&self.ctx)?;
            out.push(("patch_meta".into(), bytemuck::cast_slice(&meta).to_vec()));
            out.push(("patch_cells".into(), bytemuck::cast_slice(&cells).to_vec()));
        }
        // The exact solver's warm-start basis: the next step's pivots depend on it.
        if let Some(l) = &self.lemke {
            out.push(("lemke_basis".into(), l.basis_bytes()));
        }
        Ok(out)
    }

    /// Restores a state written by [`Simulation::checkpoint_sections`].
    pub fn restore_sections(
        &mut self,
        step_index: u64,
        ck: &impl CheckpointSections,
    ) -> Result<(), String> {
        let section = |name: &str| ck.section_bytes(name);
        let state = BodyState::from_bytes(section("bodies")?)
            .ok_or_else(|| "the 'bodies' section is malformed".to_string())?;
        if state.len() as u32 != self.bodies.count {
            return Err(format!(
                "it holds {} bodies but the scene has {}",
                state.len(),
                self.bodies.count
            ));
        }
        self.restore_carried(step_index, &state, ck, true)
    }

    /// Restores `state` at `step_index` and the contact state a checkpoint carries (warm
    /// start, patch cells, Lemke's basis). `strict`: every section this simulation carries
    /// must be present (a resume); otherwise (a restart with changed parameters) a section
    /// the checkpoint lacks starts fresh, as at step 0.
    pub fn restore_carried(
        &mut self,
        step_index: u64,
        state: &BodyState,
        ck: &impl CheckpointSections,
        strict: bool,
    ) -> Result<(), String> {
        let section = |name: &str| ck.section_bytes(name);
        let present = |name: &str| strict || ck.has_section(name);
        self.restore(step_index, state);
        let carried = present("contact_capacity");
        if let Some(setup) = self.settings.contact.clone().filter(|_| carried) {
            let cap = section("contact_capacity")?;
            let cap = u32::from_le_bytes(cap.try_into().map_err(|_| "bad contact_capacity")?);
            let keys: Vec<[u32; 4]> = bytemuck::pod_collect_to_vec(section("warm_start_keys")?);
            let gam: Vec<[u32; 4]> = bytemuck::pod_collect_to_vec(section("warm_start_impulses")?);
            if keys.len() != gam.len() {
                return Err("warm-start keys and impulses differ in length".into());
            }
            // Same capacity as the run that wrote it, so the resumed run is bit-identical;
            // the joints carry over (their blocks are defined by the scene, not the state).
            let joints = self.joints().to_vec();
            let mut c = ContactStages::new(
                &self.ctx,
                &self.bodies,
                state,
                &setup,
                self.settings.dt as f32,
                Some(cap),
                &self.scope,
            )
            .map_err(|e| e.to_string())?;
            c.solve
                .set_gravity(&self.ctx, self.settings.gravity.map(|x| x as f32));
            c.solve
                .write_warm_start(&self.ctx, &keys, &gam)
                .map_err(|e| e.to_string())?;
            if let Some(p) = c.patches.as_ref().filter(|_| present("patch_meta")) {
                let meta: Vec<[u32; 4]> = bytemuck::pod_collect_to_vec(section("patch_meta")?);
                let cells: Vec<[f32; 4]> = bytemuck::pod_collect_to_vec(section("patch_cells")?);
                p.write_state(&self.ctx, &meta, &cells)?;
            }
            if !joints.is_empty() {
                c.attach_joints(&self.ctx, &joints, self.bodies.count as usize)
                    .map_err(|e| e.to_string())?;
            }
            self.contact = Some(c);
            self.batched.snapshot = None;
        }
        if let Some(l) = self.lemke.as_mut().filter(|_| present("lemke_basis")) {
            l.set_basis_bytes(section("lemke_basis")?)?;
        }
        Ok(())
    }

    /// Totals of the current state.
    pub fn totals(&self) -> Result<BodyTotals, GpuError> {
        if let Some(s) = self.cpu_held() {
            return Ok(lemke_cpu::totals(s));
        }
        let mut enc = self.ctx.device.create_command_encoder(&Default::default());
        {
            let mut pass = enc.begin_compute_pass(&Default::default());
            self.stats.record(&mut pass);
        }
        self.ctx.queue.submit([enc.finish()]);
        self.stats.read(&self.ctx)
    }
}

/// A checkpoint's named byte sections, as [`Simulation::restore_sections`] reads them (the
/// file format is the app's).
pub trait CheckpointSections {
    /// The bytes of section `name`, or an error that says which sections there are.
    fn section_bytes(&self, name: &str) -> Result<&[u8], String>;
    /// Whether the checkpoint has section `name` (one written before a feature existed
    /// lacks its section).
    fn has_section(&self, name: &str) -> bool;
}

/// GPU memory of a [`Simulation`], in bytes (see [`Simulation::memory_bytes`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MemoryUse {
    /// Body arrays (8 × vec4 = 128 B per body).
    pub bodies: u64,
    /// Collision buffers sized by the body count (grid, sort, row counts, CSR offsets).
    pub collide_fixed: u64,
    /// Buffers sized by the contact capacity (collision records + CSR entries, solver state).
    pub contacts: u64,
    /// Solver buffers sized by the body count.
    pub solver_bodies: u64,
    pub contact_capacity: u64,
}

/// Number of leading boundary bodies of a state.
pub fn boundary_count(state: &BodyState) -> usize {
    collide::boundary_count(state)
}

#[cfg(test)]
mod tests {
    use super::{contacts_ahead, painleve_possible};
    use crate::bodies::{BodyInit, BodyState, SHAPE_BOX, SHAPE_PLANE};

    /// Only a scene whose every grain is a dynamic sphere skips the Painlevé diagnostic.
    #[test]
    fn painleve_runs_unless_every_grain_is_a_dynamic_sphere() {
        let plane = BodyInit::fixed(SHAPE_PLANE, 0, [0.0; 3], 1.0);
        let ball = BodyInit::sphere([0.0, 0.0, 1.0], 0.1, 1000.0);
        let spheres = [plane, ball, ball];
        assert!(!painleve_possible(&BodyState::from_inits(&spheres)));
        let mut held = ball;
        held.inv_mass = 0.0;
        assert!(painleve_possible(&BodyState::from_inits(&[
            plane, ball, held
        ])));
        let mut cube = ball;
        cube.shape = SHAPE_BOX;
        assert!(painleve_possible(&BodyState::from_inits(&[
            plane, ball, cube
        ])));
    }

    #[test]
    fn contacts_ahead_extends_a_rise_and_keeps_a_steady_peak() {
        assert_eq!(contacts_ahead(&[100, 150, 300]), 300 + 2 * 200);
        assert_eq!(contacts_ahead(&[500, 520, 500]), 520);
        assert_eq!(contacts_ahead(&[900, 400]), 900);
        assert_eq!(contacts_ahead(&[]), 0);
    }
}
