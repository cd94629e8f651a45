//! The time step, recorded as a sequence of GPU stages (DESIGN §1):
//! free velocity → (collision → solve) → position update → statistics.
//!
//! Several steps are recorded into one command buffer; per-step statistics are copied into
//! a readback ring and read once per batch, so nothing inside a step waits on the CPU.

pub mod integrate;
pub mod stats;

use crate::bodies::{BodyState, GpuBodies};
use crate::gpu::{GpuContext, GpuError};
pub use stats::BodyTotals;
use std::sync::Arc;

/// Settings the step needs (the scene's simulation and solver sections reduce to this).
#[derive(Clone, Debug)]
pub struct StepSettings {
    pub dt: f64,
    pub gravity: [f64; 3],
}

/// Statistics of one step, as read back from the GPU.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct StepRecord {
    pub step: u64,
    pub time: f64,
    pub totals: BodyTotals,
    pub contacts: u32,
    pub iterations: u32,
    pub residual: f64,
    pub max_penetration: f64,
}

/// Bytes per step in the statistics readback ring.
const RING_SLOT: u64 = 64;

pub struct Simulation {
    pub ctx: Arc<GpuContext>,
    pub bodies: GpuBodies,
    pub settings: StepSettings,
    integrate: integrate::Integrate,
    stats: stats::Stats,
    ring: Option<(wgpu::Buffer, wgpu::Buffer, u64)>,
    step_index: u64,
}

impl Simulation {
    pub fn new(
        ctx: Arc<GpuContext>,
        state: &BodyState,
        settings: StepSettings,
    ) -> Result<Self, GpuError> {
        let bodies = GpuBodies::upload(&ctx, state)?;
        let g = settings.gravity.map(|x| x as f32);
        let integrate = integrate::Integrate::new(&ctx, &bodies, g, settings.dt as f32)?;
        let stats = stats::Stats::new(&ctx, &bodies)?;
        Ok(Simulation {
            ctx,
            bodies,
            settings,
            integrate,
            stats,
            ring: None,
            step_index: 0,
        })
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

    /// Records one step into `enc`; when `stats_slot` is given, also reduces the statistics
    /// and copies them into that ring slot.
    fn record_step(
        &self,
        enc: &mut wgpu::CommandEncoder,
        stats_slot: Option<(&wgpu::Buffer, u64)>,
    ) {
        {
            let mut pass = enc.begin_compute_pass(&wgpu::ComputePassDescriptor {
                label: Some("step"),
                timestamp_writes: None,
            });
            self.integrate.record_free_velocity(&mut pass);
            self.integrate.record_update_positions(&mut pass);
            if stats_slot.is_some() {
                self.stats.record(&mut pass);
            }
        }
        if let Some((ring, slot)) = stats_slot {
            enc.copy_buffer_to_buffer(self.stats.totals_buffer(), 0, ring, slot * RING_SLOT, 32);
        }
    }

    /// Advances `n` steps in one submission and returns the statistics of every step whose
    /// index (after the step) is a multiple of `stats_every` (and of the last step).
    pub fn advance(&mut self, n: u32, stats_every: u64) -> Result<Vec<StepRecord>, GpuError> {
        if n == 0 {
            return Ok(Vec::new());
        }
        let every = stats_every.max(1);
        let first = self.step_index;
        let wanted: Vec<u64> = (1..=n as u64)
            .map(|k| first + k)
            .filter(|s| s % every == 0 || *s == first + n as u64)
            .collect();
        let (ring, host) = self.ring(wanted.len() as u64);
        let mut enc = self.ctx.device.create_command_encoder(&Default::default());
        let mut slot = 0;
        for k in 1..=n as u64 {
            let s = first + k;
            let want = wanted.get(slot as usize) == Some(&s);
            self.record_step(&mut enc, want.then_some((&ring, slot)));
            if want {
                slot += 1;
            }
        }
        enc.copy_buffer_to_buffer(&ring, 0, &host, 0, slot * RING_SLOT);
        self.ctx.queue.submit([enc.finish()]);
        self.step_index += n as u64;
        let raw: Vec<[f32; 4]> =
            crate::gpu::buffers::map_and_read(&self.ctx, &host, (slot * RING_SLOT / 16) as usize)?;
        Ok(wanted
            .iter()
            .enumerate()
            .map(|(k, &s)| StepRecord {
                step: s,
                time: s as f64 * self.settings.dt,
                totals: stats::Stats::decode(&raw[k * 4..k * 4 + 2]),
                ..Default::default()
            })
            .collect())
    }

    /// Reads every body back.
    pub fn read_state(&self) -> Result<BodyState, GpuError> {
        self.bodies.download(&self.ctx)
    }

    /// Replaces the body state (same count) and the step counter.
    pub fn restore(&mut self, step_index: u64, state: &BodyState) {
        self.bodies.write(&self.ctx, state);
        self.step_index = step_index;
    }

    /// Everything the next step depends on, as named byte sections for a checkpoint.
    pub fn checkpoint_sections(&self) -> Result<Vec<(String, Vec<u8>)>, GpuError> {
        Ok(vec![("bodies".into(), self.read_state()?.to_bytes())])
    }

    /// Restores a state written by [`Simulation::checkpoint_sections`].
    pub fn restore_sections(
        &mut self,
        step_index: u64,
        ck: &crate::io::Checkpoint,
    ) -> Result<(), String> {
        let bytes = ck.section("bodies").map_err(|e| e.to_string())?;
        let state = BodyState::from_bytes(bytes)
            .ok_or_else(|| "the 'bodies' section is malformed".to_string())?;
        if state.len() as u32 != self.bodies.count {
            return Err(format!(
                "it holds {} bodies but the scene has {}",
                state.len(),
                self.bodies.count
            ));
        }
        self.restore(step_index, &state);
        Ok(())
    }

    /// Totals of the current state.
    pub fn totals(&self) -> Result<BodyTotals, GpuError> {
        let mut enc = self.ctx.device.create_command_encoder(&Default::default());
        {
            let mut pass = enc.begin_compute_pass(&Default::default());
            self.stats.record(&mut pass);
        }
        self.ctx.queue.submit([enc.finish()]);
        self.stats.read(&self.ctx)
    }
}
