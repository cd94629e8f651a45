//! The batched GPU stepper: up to [`MAX_BATCH`] steps recorded into one submission and read
//! back once, the solver's sweep budget adapted from the batch before, and a batch redone from
//! a snapshot when its contacts overflowed the buffers or a solve ran past its budget.

use super::{
    contacts_ahead, records_from_ring, Simulation, StepRecord, StepStats, MAX_BATCH,
    MAX_TIMED_STEPS, MIN_SWEEP_BUDGET, RING_SLOT,
};
use crate::gpu::{buffers, GpuError};
use crate::solve::Cone;

/// GPU copies of everything a batch changes, to roll back an overflowing batch.
pub(super) struct Snapshot {
    bodies: [wgpu::Buffer; 4],
    /// The solver's warm-start keys, impulses and per-body rows (`Solve::warm_start_parts`).
    warm: Vec<wgpu::Buffer>,
    /// The lugre_patch cells' carried state (`PatchStage::state_buffers`).
    patch: Vec<wgpu::Buffer>,
}

/// The batched path's own state: what it rolls back to, how it sizes and budgets its batches,
/// and what it counts.
pub struct BatchedState {
    pub(super) snapshot: Option<Snapshot>,
    /// Whether the contact buffers were sized by a detection on the current state
    /// ([`Simulation::size_contacts`]); cleared by [`Simulation::restore`].
    pub(super) contacts_sized: bool,
    /// Whether the sweeps recorded per solve follow what recent steps needed (default) or
    /// are always the whole cap (for tests that check the two agree bit for bit).
    pub adaptive_sweeps: bool,
    /// How many times a batch was redone because a solve ran out of its sweep budget.
    pub budget_redos: u32,
    /// Steps (of this process) whose solve ran the whole iteration cap: not converged to the
    /// tolerance, or converged on the very last sweep.
    pub capped_steps: u64,
    /// Constraints (contacts + joint blocks) up to which a batch's solves run in one
    /// workgroup ([`Simulation::set_fused_max`]).
    pub(super) fused_max: u32,
    /// Batches whose solves ran in one workgroup (solve_fused).
    pub fused_batches: u64,
}

impl Default for BatchedState {
    fn default() -> Self {
        BatchedState {
            snapshot: None,
            contacts_sized: false,
            adaptive_sweeps: true,
            budget_redos: 0,
            capped_steps: 0,
            fused_max: crate::solve::FUSED_MAX_DEFAULT,
            fused_batches: 0,
        }
    }
}

impl Simulation {
    /// Solves of up to `max` constraints run in one workgroup (solve_fused; 0: never). The
    /// choice is made per batch from the last batch's largest contact count (before the
    /// first batch: from the body count), and never changes a result, only the cost.
    pub fn set_fused_max(&mut self, max: u32) {
        self.batched.fused_max = max;
        self.choose_fused(self.first_contact_estimate());
    }

    /// Contacts expected before any step: 4 per body (a settled sphere pile has ~4.5).
    pub(super) fn first_contact_estimate(&self) -> u32 {
        self.bodies.count.saturating_mul(4)
    }

    /// Multi-workgroup solves end in solve_tail, which takes the sweeps a step needs past the
    /// recorded budget (default), or — off — a step that needs them has its batch redone.
    /// Either way the results are the same bits; only the cost differs.
    pub fn set_sweep_tail(&mut self, on: bool) {
        if let Some(c) = self.contact.as_mut() {
            c.solve.set_tail(on);
        }
    }

    pub(super) fn choose_fused(&mut self, contacts: u32) {
        let max = self.batched.fused_max;
        if let Some(c) = self.contact.as_mut() {
            let n = contacts.saturating_add(c.solve.joint_blocks());
            c.solve.set_fused(max > 0 && n <= max);
        }
    }

    pub(super) fn fused_active(&self) -> bool {
        self.contact
            .as_ref()
            .is_some_and(|c| c.solve.fused_active(&self.ctx))
    }

    /// Records copies of the state a batch changes into the snapshot buffers.
    pub(super) fn record_snapshot(&mut self, enc: &mut wgpu::CommandEncoder) {
        let warm_sizes: Vec<u64> = self.contact.as_ref().map_or(Vec::new(), |c| {
            c.solve.warm_start_parts().iter().map(|p| p.2).collect()
        });
        let stale = self
            .batched
            .snapshot
            .as_ref()
            .is_none_or(|s| s.warm.iter().map(|w| w.size()).collect::<Vec<_>>() != warm_sizes);
        if stale {
            let make = |label: &str, size: u64| {
                self.ctx.device.create_buffer(&wgpu::BufferDescriptor {
                    label: Some(label),
                    size,
                    usage: wgpu::BufferUsages::COPY_SRC | wgpu::BufferUsages::COPY_DST,
                    mapped_at_creation: false,
                })
            };
            let bodies = self.body_buffers().map(|b| make("snapshot", b.size()));
            let warm = warm_sizes
                .iter()
                .map(|&s| make("snapshot warm start", s))
                .collect();
            let patch = self
                .patch_state_buffers()
                .iter()
                .map(|b| make("snapshot patch cells", b.size()))
                .collect();
            self.batched.snapshot = Some(Snapshot {
                bodies,
                warm,
                patch,
            });
        }
        let snap = self.batched.snapshot.as_ref().unwrap();
        for (src, dst) in self.body_buffers().iter().zip(&snap.bodies) {
            enc.copy_buffer_to_buffer(src, 0, dst, 0, src.size());
        }
        if let Some(c) = &self.contact {
            for ((src, offset, _), w) in c.solve.warm_start_parts().into_iter().zip(&snap.warm) {
                enc.copy_buffer_to_buffer(src, offset, w, 0, w.size());
            }
        }
        for (src, dst) in self.patch_state_buffers().iter().zip(&snap.patch) {
            enc.copy_buffer_to_buffer(src, 0, dst, 0, src.size());
        }
    }

    pub(super) fn patch_state_buffers(&self) -> Vec<&wgpu::Buffer> {
        self.contact
            .as_ref()
            .and_then(|c| c.patches.as_ref())
            .map_or(Vec::new(), |p| p.state_buffers().to_vec())
    }

    pub(super) fn restore_snapshot(&self) {
        let snap = self
            .batched
            .snapshot
            .as_ref()
            .expect("snapshot taken before the batch");
        let mut enc = self.ctx.device.create_command_encoder(&Default::default());
        for (dst, src) in self.body_buffers().iter().zip(&snap.bodies) {
            enc.copy_buffer_to_buffer(src, 0, dst, 0, src.size());
        }
        if let Some(c) = &self.contact {
            for ((dst, offset, _), w) in c.solve.warm_start_parts().into_iter().zip(&snap.warm) {
                enc.copy_buffer_to_buffer(w, 0, dst, offset, w.size());
            }
        }
        for (dst, src) in self.patch_state_buffers().iter().zip(&snap.patch) {
            enc.copy_buffer_to_buffer(src, 0, dst, 0, src.size());
        }
        self.ctx.queue.submit([enc.finish()]);
    }

    /// [`Simulation::advance`] on the batched path: batches of at most [`MAX_BATCH`] steps.
    pub(super) fn advance_batched(
        &mut self,
        n: u32,
        stats_every: u64,
    ) -> Result<Vec<StepRecord>, GpuError> {
        self.size_contacts()?;
        if let Some(t) = &mut self.timer {
            t.last.clear();
        }
        let batches = n.div_ceil(MAX_BATCH);
        let mut records = Vec::new();
        let mut left = n;
        for b in 0..batches {
            let k = left.div_ceil(batches - b);
            left -= k;
            records.extend(self.advance_batch(k, stats_every, left == 0)?);
        }
        Ok(records)
    }

    /// One batch of [`Simulation::advance`] in one submission (`last`: it ends the call, so
    /// its last step's statistics are returned whatever `stats_every`).
    pub(super) fn advance_batch(
        &mut self,
        n: u32,
        stats_every: u64,
        last: bool,
    ) -> Result<Vec<StepRecord>, GpuError> {
        let every = stats_every.max(1);
        let first = self.step_index;
        loop {
            let ring = self.submit_batch(n)?;
            // Any step of the batch that overflowed invalidates the rest of the batch.
            let needed = ring
                .iter()
                .filter(|st| st.overflow)
                .map(|st| st.contacts_needed)
                .max();
            if let Some(needed) = needed {
                self.restore_snapshot();
                self.contact
                    .as_mut()
                    .unwrap()
                    .grow(&self.ctx, &self.bodies, needed)?;
                self.regrowths += 1;
                continue;
            }
            let iterations = ring.iter().map(|st| st.iterations);
            let fused = self.fused_active();
            if !fused && self.adapt_sweep_budget(iterations) {
                self.restore_snapshot();
                self.batched.budget_redos += 1;
                continue;
            }
            self.accept_batch(&ring, fused)?;
            let mut records = records_from_ring(&ring, first, every, self.settings.dt);
            if !last {
                records.retain(|r| r.step.is_multiple_of(every));
            }
            return Ok(records);
        }
    }

    /// Records `n` steps after a snapshot, submits them and reads the statistics ring.
    pub(super) fn submit_batch(&mut self, n: u32) -> Result<Vec<StepStats>, GpuError> {
        let (ring, host) = self.ring(n as u64);
        self.write_shear_offsets(n);
        let mut enc = self.ctx.device.create_command_encoder(&Default::default());
        if self.contact.is_some() {
            self.record_snapshot(&mut enc);
        }
        for k in 0..n as u64 {
            self.record_step(&mut enc, &ring, k);
        }
        enc.copy_buffer_to_buffer(&ring, 0, &host, 0, n as u64 * RING_SLOT);
        if let Some(t) = &self.timer {
            t.record_resolve(&mut enc, n.min(MAX_TIMED_STEPS));
        }
        self.ctx.queue.submit([enc.finish()]);
        let raw = buffers::map_and_read(&self.ctx, &host, (n as u64 * RING_SLOT / 16) as usize)?;
        Ok(StepStats::decode_ring(&raw, n))
    }

    /// The bookkeeping of a batch that stands (`ring`: its steps' statistics): capped steps,
    /// stage times, patch slots, contact buffers grown ahead, the next batch's solve path.
    pub(super) fn accept_batch(&mut self, ring: &[StepStats], fused: bool) -> Result<(), GpuError> {
        let n = ring.len() as u32;
        if let Some(c) = self.contact.as_ref().filter(|c| {
            // Relaxed cone: one cone problem per step (the exact cone stops its outer
            // iterations when a problem hits the cap, see solve_reduce::outer_reduce).
            c.solve.settings().cone == Cone::Relaxed
        }) {
            let cap = c.solve.settings().max_iterations;
            let capped = ring.iter().filter(|st| st.iterations >= cap).count();
            self.batched.capped_steps += capped as u64;
        }
        if let Some(t) = &mut self.timer {
            t.read(&self.ctx, n.min(MAX_TIMED_STEPS))?;
        }
        self.check_patch_slots()?;
        self.batched.fused_batches += fused as u64;
        let contacts: Vec<u32> = ring.iter().map(|st| st.contacts).collect();
        self.grow_ahead(&contacts)?;
        self.choose_fused(contacts.iter().copied().max().unwrap_or(0));
        self.step_index += n as u64;
        Ok(())
    }

    /// Before the first batch (and after a restore): one detection on the current state
    /// sizes the contact buffers and picks the solve path from the real contact count. The
    /// estimate of 4 per grain is short for a packed start (an FCC pile has ~5.7), and an
    /// overflow on step 1 would run the whole batch and then redo it; the detection is
    /// step 1's own (positions at the start of the step), so it changes no result.
    pub(super) fn size_contacts(&mut self) -> Result<(), GpuError> {
        if self.batched.contacts_sized {
            return Ok(());
        }
        self.batched.contacts_sized = true;
        let Some(c) = self.contact.as_mut() else {
            return Ok(());
        };
        let counts = c.collide.detect_once(&self.ctx)?;
        if counts.overflow != 0 {
            c.grow(&self.ctx, &self.bodies, counts.needed_contacts)?;
        }
        self.choose_fused(counts.needed_contacts);
        Ok(())
    }

    /// After a batch whose contact count rose (a pour, an impact): grows the buffers now if
    /// the next batch, rising as much again twice over, would overflow them — an overflow
    /// costs the whole batch run and then redone. A steady count never grows them.
    pub(super) fn grow_ahead(&mut self, contacts: &[u32]) -> Result<(), GpuError> {
        let Some(c) = self.contact.as_mut() else {
            return Ok(());
        };
        let next = contacts_ahead(contacts);
        if next > c.collide.capacity() as u64 {
            let limit = c.max_contacts(&self.ctx);
            c.grow(&self.ctx, &self.bodies, next.min(limit) as u32)?;
        }
        Ok(())
    }

    /// A step with more lugre_patch patches than the stage has slots left some unmodelled:
    /// an error that names the numbers, never a silent loss of friction.
    pub(super) fn check_patch_slots(&self) -> Result<(), GpuError> {
        let Some(p) = self.contact.as_ref().and_then(|c| c.patches.as_ref()) else {
            return Ok(());
        };
        let needed = p.needed(&self.ctx)?;
        if needed > p.capacity() {
            return Err(GpuError::Solver(format!(
                "lugre_patch: a step had {needed} face–face patches, more than the {} slots \
                 (6 per box body); their friction would be missing",
                p.capacity()
            )));
        }
        Ok(())
    }

    /// Adapts the sweeps recorded per solve to what the last batch needed (`iterations`: per
    /// step). With solve_tail (the relaxed cone, see `Solve::tail_active`) a step that needs
    /// more finishes in one workgroup, so the budget is the batch's 90th percentile. Without
    /// it, returns true when a step used its whole budget below the iteration cap: it may
    /// not have converged, so the batch must be redone with the full cap. Otherwise the next
    /// budget is the batch's peak + 25 % + 2 (at least [`MIN_SWEEP_BUDGET`]): a settled bed
    /// varies by ±20 % from step to step, and a redo costs a whole batch. Converged solves are
    /// bit-identical whatever the budget, so the budget changes the cost and never a result.
    pub(super) fn adapt_sweep_budget(&mut self, iterations: impl Iterator<Item = u32>) -> bool {
        // With the exact cone a step's count adds up several cone problems, so it says
        // nothing about one problem's budget: record the whole cap.
        let Some(c) = self
            .contact
            .as_mut()
            .filter(|c| self.batched.adaptive_sweeps && c.solve.settings().cone == Cone::Relaxed)
        else {
            return false;
        };
        let (cap, budget) = (c.solve.settings().max_iterations, c.solve.sweep_budget());
        if c.solve.tail_active(&self.ctx) {
            // Sweeps past the budget run in solve_tail: nothing to redo. An empty recorded
            // sweep costs ~0.05 ms on lavapipe (its reduce and its recording; zero-group
            // indirect dispatches are nearly free), a tail sweep about 2 multi-workgroup ones
            // (one core): record what 9 steps in 10 of the last batch needed (the batch's
            // peak instead ran the default scene 2–4 % slower).
            let mut all: Vec<u32> = iterations.collect();
            all.sort_unstable();
            let p90 = all.get(all.len() * 9 / 10).copied().unwrap_or(0);
            c.solve.set_sweep_budget((p90 + 1).max(MIN_SWEEP_BUDGET));
            return false;
        }
        let peak = iterations.max().unwrap_or(0);
        if peak >= budget && budget < cap {
            c.solve.set_sweep_budget(cap);
            return true;
        }
        c.solve
            .set_sweep_budget((peak + peak / 4 + 2).max(MIN_SWEEP_BUDGET));
        false
    }

    /// Sweeps recorded per solve for the next batch (the whole cap unless adaptive).
    pub fn sweep_budget(&self) -> Option<u32> {
        self.contact.as_ref().map(|c| c.solve.sweep_budget())
    }
}
