//! Knobs and timers only the benchmarks use: they change what a step costs (or measure it),
//! never its result, so they stay off [`Simulation`]'s own methods. Bring them into scope with
//! `use bristlecone_engine::step::BenchKnobs`.

use super::{Simulation, StageTimer, StageTimes};
use crate::gpu::GpuError;
use crate::solve::SolveInputs;

/// The benchmark-only extension of [`Simulation`].
pub trait BenchKnobs {
    /// The solver's pipelines with every path compiled in
    /// ([`crate::solve::Solve::set_generic`]); results are the same either way.
    fn set_generic_solver(&mut self, on: bool);
    /// APGD steps with the count-scaled η as before the plain diagonal
    /// ([`crate::solve::Solve::set_counted_step`]).
    fn set_counted_step(&mut self, on: bool);
    /// Where the gather takes a contact's lever arm: a row load of its own (a CPU adapter's
    /// default) or the record already loaded (a GPU's); [`crate::solve::Solve::set_arm_from_row`].
    /// Results are the same either way.
    fn set_arm_from_row(&mut self, on: bool);
    /// Gauss–Seidel's colouring kept while the constraint graph is unchanged (the default)
    /// or recomputed every step ([`crate::solve::Solve::set_colour_reuse`]); results are the
    /// same either way. A restored checkpoint's solver starts with the default.
    fn set_colour_reuse(&mut self, on: bool);
    /// Gauss–Seidel solves that checked their constraint graph so far and those among them
    /// that kept the stored colouring ([`crate::solve::Solve::colourings_kept`]); (0, 0)
    /// for the other kinds. Reads the GPU.
    fn colourings_kept(&self) -> Result<(u32, u32), GpuError>;
    /// The hub bodies Gauss–Seidel's last colouring listed
    /// ([`crate::solve::Solve::gauss_hubs`]); 0 for the other kinds. Reads the GPU.
    fn gauss_hubs(&self) -> Result<u32, GpuError>;
    /// Gauss–Seidel's slab corrections tried and kept so far
    /// ([`crate::solve::Solve::slab_corrections`]); None without them. Reads the GPU.
    fn slab_corrections(&self) -> Result<Option<(u32, u32)>, GpuError>;
    /// Wall seconds of one submission that runs collision on the current state, the set-up
    /// of a solve and `repeats` dispatches of one sweep kernel; the state does not advance.
    fn time_solver_kernel(&mut self, kernel: &str, repeats: u32) -> Result<f64, GpuError>;
    /// Turns GPU timestamp queries around each stage on or off; returns whether timing is on.
    fn set_stage_timing(&mut self, on: bool) -> bool;
    /// Stage times of the timed steps of the last [`Simulation::advance`].
    fn stage_times(&self) -> &[StageTimes];
    /// One step with every stage submitted on its own and timed by the CPU clock.
    fn step_stages_wall(&mut self) -> Result<StageTimes, GpuError>;
}

impl BenchKnobs for Simulation {
    /// For benchmarks: the solver's pipelines with every path compiled in
    /// ([`crate::solve::Solve::set_generic`]); results are the same either way.
    fn set_generic_solver(&mut self, on: bool) {
        if let Some(c) = self.contact.as_mut() {
            c.solve.set_generic(on);
        }
    }

    /// For benchmarks: APGD steps with the count-scaled η as before the plain diagonal
    /// ([`crate::solve::Solve::set_counted_step`]).
    fn set_counted_step(&mut self, on: bool) {
        if let Some(c) = self.contact.as_mut() {
            c.solve.set_counted_step(on);
        }
    }

    fn set_arm_from_row(&mut self, on: bool) {
        if let Some(c) = self.contact.as_mut() {
            c.solve.set_arm_from_row(on);
        }
    }

    fn set_colour_reuse(&mut self, on: bool) {
        if let Some(c) = self.contact.as_mut() {
            c.solve.set_colour_reuse(&self.ctx, on);
        }
    }

    fn colourings_kept(&self) -> Result<(u32, u32), GpuError> {
        match &self.contact {
            Some(c) => c.solve.colourings_kept(&self.ctx),
            None => Ok((0, 0)),
        }
    }

    fn gauss_hubs(&self) -> Result<u32, GpuError> {
        match &self.contact {
            Some(c) => c.solve.gauss_hubs(&self.ctx),
            None => Ok(0),
        }
    }

    fn slab_corrections(&self) -> Result<Option<(u32, u32)>, GpuError> {
        match &self.contact {
            Some(c) => c.solve.slab_corrections(&self.ctx),
            None => Ok(None),
        }
    }

    /// For benchmarks: wall seconds of one submission that runs collision on the current
    /// state, the set-up of a solve and `repeats` dispatches of one sweep kernel
    /// ([`crate::solve::Solve::record_kernel_repeats`]); the state does not advance.
    fn time_solver_kernel(&mut self, kernel: &str, repeats: u32) -> Result<f64, GpuError> {
        let Some(c) = &self.contact else {
            return Ok(0.0);
        };
        let ctx = &self.ctx;
        let mut enc = ctx.device.create_command_encoder(&Default::default());
        c.record_collide(ctx, &self.bodies, &mut enc);
        let inputs = SolveInputs {
            contacts: c.collide.contacts(),
            counts: c.collide.counts(),
            body_offsets: c.collide.body_offsets(),
            body_entries: c.collide.body_entries(),
            step_stats: &c.step_stats,
        };
        c.solve
            .record_kernel_repeats(ctx, &mut enc, inputs, kernel, repeats);
        // Nγ⁰ and the sweeps write `nv`'s first segments, which hold the warm-start impulses
        // and keys between steps: keep the warm-start data aside (untimed), so that timing
        // leaves the next step as it was.
        let parts = c.solve.warm_start_parts();
        let mut keep = ctx.device.create_command_encoder(&Default::default());
        let kept: Vec<wgpu::Buffer> = parts
            .iter()
            .map(|&(buffer, offset, bytes)| {
                let k = ctx.device.create_buffer(&wgpu::BufferDescriptor {
                    label: Some("kept warm start"),
                    size: bytes,
                    usage: wgpu::BufferUsages::COPY_SRC | wgpu::BufferUsages::COPY_DST,
                    mapped_at_creation: false,
                });
                keep.copy_buffer_to_buffer(buffer, offset, &k, 0, bytes);
                k
            })
            .collect();
        ctx.queue.submit([keep.finish()]);
        ctx.wait();
        let t = std::time::Instant::now();
        ctx.queue.submit([enc.finish()]);
        ctx.wait();
        let elapsed = t.elapsed().as_secs_f64();
        let mut back = ctx.device.create_command_encoder(&Default::default());
        for (&(buffer, offset, bytes), k) in parts.iter().zip(&kept) {
            back.copy_buffer_to_buffer(k, 0, buffer, offset, bytes);
        }
        ctx.queue.submit([back.finish()]);
        ctx.wait();
        Ok(elapsed)
    }

    /// Turns GPU timestamp queries around each stage on or off. Returns whether timing is on:
    /// false when the adapter lacks timestamp queries inside passes (`ctx.timestamps`).
    /// While on, [`Simulation::advance`] records the stage times of the first
    /// [`super::MAX_TIMED_STEPS`] steps of each batch; read them with [`BenchKnobs::stage_times`].
    fn set_stage_timing(&mut self, on: bool) -> bool {
        if !on || !self.ctx.timestamps {
            self.timer = None;
            return false;
        }
        if self.timer.is_none() {
            self.timer = Some(StageTimer::new(&self.ctx));
        }
        true
    }

    /// Stage times (GPU timestamps) of the timed steps of the last [`Simulation::advance`];
    /// empty when timing is off.
    fn stage_times(&self) -> &[StageTimes] {
        self.timer.as_ref().map_or(&[], |t| &t.last)
    }

    /// One step with every stage submitted on its own and waited for, timed by the CPU
    /// clock (for adapters without timestamp queries). Each time includes one submission
    /// and one wait. A contact-buffer overflow grows the buffers and redoes the collision
    /// (outside the timed part); positions do not change before the collision, so the step
    /// is the same as one of [`Simulation::advance`].
    fn step_stages_wall(&mut self) -> Result<StageTimes, GpuError> {
        let ctx = self.ctx.clone();
        let submit = |enc: wgpu::CommandEncoder| {
            let t = std::time::Instant::now();
            ctx.queue.submit([enc.finish()]);
            ctx.wait();
            t.elapsed().as_secs_f64()
        };
        let new_enc = || ctx.device.create_command_encoder(&Default::default());
        let mut out = StageTimes::default();
        let mut enc = new_enc();
        {
            let mut pass = enc.begin_compute_pass(&Default::default());
            self.integrate.record_free_velocity(&mut pass);
        }
        out.seconds[0] = submit(enc);
        if let Some(c) = &mut self.contact {
            loop {
                let mut enc = new_enc();
                c.record_collide(&ctx, &self.bodies, &mut enc);
                out.seconds[1] = submit(enc);
                let counts = c.collide.read_counts(&ctx)?;
                if counts.overflow == 0 {
                    break;
                }
                c.grow(&ctx, &self.bodies, counts.needed_contacts)?;
                self.batched.snapshot = None;
                self.regrowths += 1;
            }
            let mut enc = new_enc();
            c.record_solve(&ctx, &mut enc);
            out.seconds[2] = submit(enc);
        }
        let mut enc = new_enc();
        {
            let mut pass = enc.begin_compute_pass(&Default::default());
            self.integrate.record_update_positions(&mut pass);
            self.stats.record(&mut pass);
        }
        out.seconds[3] = submit(enc);
        self.step_index += 1;
        Ok(out)
    }
}
