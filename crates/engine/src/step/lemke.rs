//! The step with the exact LCP solver (`[solver] kind = "lemke"`, Golle et al.): free velocity and
//! collision on the GPU, the LCP assembled and solved by Lemke's algorithm on the CPU in f64,
//! `v⁺ = v* + M⁻¹ D γ` on the CPU, then positions and statistics on the GPU.
//!
//! Why the update runs on the CPU rather than uploading γ into the GPU update kernel: the CPU
//! already holds v*, the inverse masses and the contact frames it assembled the LCP from, so
//! the update is a few flops per contact in f64 and costs one upload of the velocities (32 B
//! per body); uploading γ instead would cost as much and need the GPU solver's buffers and
//! warm-start layout bound for a solve that never ran there.
//!
//! One GPU round trip per step: free velocity, collision and a copy of the counts, contacts
//! and body arrays into one mapped buffer are one submission; after the CPU solve the
//! velocities and the solver's statistics are written and the position update + statistics
//! are queued (no wait). A contact-buffer overflow grows the buffers and redoes only the
//! collision (positions have not moved yet), as in [`BenchKnobs::step_stages_wall`](crate::step::BenchKnobs::step_stages_wall).
//!
//! Debugging: with `BRISTLECONE_LCP_DUMP=FILE` set, a failed solve writes its q (first line)
//! and M (one row per line) to FILE.

use super::lemke_cpu::{CpuStep, LemkeStep};
use super::{ContactStages, Simulation, StepRecord, RING_SLOT};
use crate::bodies::BodyState;
use crate::collide::ContactRecord;
use crate::gpu::{buffers, GpuError};
use crate::joints::Block;
use crate::reference::integrate::{to_f64, Body64};
use crate::reference::joints::write_blocks;
use crate::reference::lcp::{
    apply_impulses, apply_impulses_joints, JointPart, LcpFriction, LcpSettings, StepLcp, LEVELS,
};
use crate::reference::solve::Vec3;
use std::time::Instant;

/// How one step's LCP was solved (`lemke.csv`, `realtime.csv`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LemkeStepLog {
    pub step: u64,
    /// LCP rows (rows per contact × contacts with a dynamic body).
    pub rows: u32,
    /// Pivots over every start, failed ones included.
    pub pivots: u32,
    /// Failed starts (rays or rejected answers) before the one that solved.
    pub retries: u32,
    /// Relative diagonal perturbation of the LCP that solved (0: the exact LCP).
    pub perturbation: f64,
    /// Assembly + Lemke + velocity update, seconds (monotonic clock).
    pub solve_seconds: f64,
}

/// State of the exact solver between steps.
pub(super) struct LemkeStage {
    pub(super) settings: LcpSettings,
    /// Previous step's contact keys (sorted, as collision writes them) and per LCP row whether
    /// z was basic.
    warm: Vec<((u32, u32, u32), Vec<bool>)>,
    /// Seconds spent in the CPU solve (assembly + Lemke + velocity update) per step of the
    /// last advance.
    pub(super) solve_seconds: Vec<f64>,
    /// How each step of the last advance was solved (the fallback used).
    pub(super) log: Vec<LemkeStepLog>,
    /// The perturbation level the last step solved at (an index of [`LEVELS`]): the next
    /// step starts its ladder there (after a cheap try of the exact LCP), so a rank-deficient
    /// stack does not pay a failing exact pivoting run every step. In the checkpoint.
    level: usize,
    staging: Option<(wgpu::Buffer, u64)>,
    /// The contacts of the last solve (those with a dynamic body) and their impulses (n, u, w).
    pub(super) last: (Vec<ContactRecord>, Vec<Vec3>),
    /// Where the step runs (requested; `cpu` holds the state once the CPU path has started).
    pub(super) step: LemkeStep,
    pub(super) cpu: Option<CpuStep>,
    /// Statistics of the last step: pivots, residual, max penetration.
    pub(super) last_stats: (u32, f64, f64),
    /// Joint row blocks (`joints::blocks_of`), solved in the LCP with the contacts.
    pub(super) blocks: Vec<Block>,
    /// Per joint block (key (WORLD, 0, block)): whether z was basic on each of its LCP rows
    /// in the last solve (empty: no basis yet). In the checkpoint.
    warm_joints: Vec<Vec<bool>>,
    /// The joint block records of the last solve and their impulses (n, u, w).
    pub(super) last_joints: (Vec<ContactRecord>, Vec<Vec3>),
}

impl LemkeStage {
    pub(super) fn new(settings: LcpSettings) -> Self {
        LemkeStage {
            settings,
            warm: Vec::new(),
            solve_seconds: Vec::new(),
            log: Vec::new(),
            level: 0,
            staging: None,
            last: (Vec::new(), Vec::new()),
            step: LemkeStep::Auto,
            cpu: None,
            last_stats: (0, 0.0, 0.0),
            blocks: Vec::new(),
            warm_joints: Vec::new(),
            last_joints: (Vec::new(), Vec::new()),
        }
    }

    /// The warm-start basis as checkpoint bytes: entry count and rows per contact (u32 each),
    /// then per contact its key (3 × u32) and one byte per LCP row (1: z basic), then the
    /// perturbation level (u32; absent in older checkpoints: 0), then with joints the joint
    /// blocks' count (u32) and per block its LCP row count (u32) and one byte per row.
    pub(super) fn basis_bytes(&self) -> Vec<u8> {
        let rows = self.settings.rows_per_contact();
        let mut out = Vec::with_capacity(8 + self.warm.len() * (12 + rows));
        out.extend((self.warm.len() as u32).to_le_bytes());
        out.extend((rows as u32).to_le_bytes());
        for ((a, b, f), flags) in &self.warm {
            for x in [a, b, f] {
                out.extend(x.to_le_bytes());
            }
            out.extend(flags.iter().map(|&z| z as u8));
        }
        out.extend((self.level as u32).to_le_bytes());
        if !self.warm_joints.is_empty() {
            out.extend((self.warm_joints.len() as u32).to_le_bytes());
            for flags in &self.warm_joints {
                out.extend((flags.len() as u32).to_le_bytes());
                out.extend(flags.iter().map(|&z| z as u8));
            }
        }
        out
    }

    /// The joint blocks' basis from checkpoint bytes (after the level); None if malformed.
    fn joint_basis(bytes: &[u8]) -> Option<Vec<Vec<bool>>> {
        let word = |at: usize| -> Option<usize> {
            let b = bytes.get(at..at + 4)?;
            Some(u32::from_le_bytes(b.try_into().ok()?) as usize)
        };
        if bytes.is_empty() {
            return Some(Vec::new());
        }
        let n = word(0)?;
        let mut at = 4;
        let mut out = Vec::with_capacity(n.min(bytes.len()));
        for _ in 0..n {
            let k = word(at)?;
            let flags = bytes.get(at + 4..at + 4 + k)?;
            out.push(flags.iter().map(|&z| z != 0).collect());
            at += 4 + k;
        }
        (at == bytes.len()).then_some(out)
    }

    /// Restores [`LemkeStage::basis_bytes`]; an error says what is wrong with them.
    pub(super) fn set_basis_bytes(&mut self, bytes: &[u8]) -> Result<(), String> {
        let bad = |what: &str| format!("the 'lemke_basis' section is malformed: {what}");
        let word = |k: usize| -> Result<u32, String> {
            let b = bytes
                .get(4 * k..4 * k + 4)
                .ok_or_else(|| bad("truncated"))?;
            Ok(u32::from_le_bytes(b.try_into().unwrap()))
        };
        let (n, rows) = (word(0)? as usize, word(1)? as usize);
        if rows != self.settings.rows_per_contact() {
            return Err(bad(&format!(
                "{rows} LCP rows per contact, the scene's solver has {}",
                self.settings.rows_per_contact()
            )));
        }
        let end = 8 + n * (12 + rows);
        let level = match bytes.len() - end.min(bytes.len()) {
            _ if bytes.len() < end => None,
            0 => Some(0),
            _ if bytes.len() < end + 4 => None,
            _ => Some(word(end / 4)? as usize).filter(|&l| l < LEVELS.len()),
        };
        let level = level.ok_or_else(|| {
            bad("its length does not match its entry count, or its level is out of range")
        })?;
        let joints = Self::joint_basis(bytes.get(end + 4..).unwrap_or(&[]))
            .filter(|j| j.is_empty() || j.len() == self.blocks.len())
            .ok_or_else(|| bad("its joint basis does not match the scene's joints"))?;
        let mut warm = Vec::with_capacity(n);
        for e in bytes[8..end].chunks_exact(12 + rows) {
            let w = |k: usize| u32::from_le_bytes(e[4 * k..4 * k + 4].try_into().unwrap());
            let flags = e[12..].iter().map(|&z| z != 0).collect();
            warm.push(((w(0), w(1), w(2)), flags));
        }
        if !warm.is_sorted_by(|x, y| x.0 < y.0) {
            return Err(bad("its contact keys are not sorted"));
        }
        self.warm = warm;
        self.level = level;
        self.warm_joints = joints;
        Ok(())
    }

    /// The warm-start basis of this step: per contact the previous step's flags (matched by
    /// contact key), and for a new contact a guess — z basic on its normal row when it is
    /// approaching (`q_n < 0`: it needs an impulse), no friction (for the surplus form s⁺
    /// basic, γ_t = s⁺ − μγ_n = 0). Without a previous basis (the first step) every contact
    /// is new: on the realtime scene's cold 24-contact stack this guess is the solution (a
    /// 24 × 24 LU, no pivot) where a cold start took ~400 pivots through the fallbacks.
    fn warm_flags(&self, contacts: &[ContactRecord], q: &[f64]) -> Option<Vec<bool>> {
        if !self.settings.warm_start {
            return None;
        }
        let rows = self.settings.rows_per_contact();
        let surplus = matches!(self.settings.friction, LcpFriction::Surplus);
        let mut flags = vec![false; rows * contacts.len()];
        for (i, c) in contacts.iter().enumerate() {
            let f = &mut flags[rows * i..rows * (i + 1)];
            match self.warm.binary_search_by_key(&c.key(), |w| w.0) {
                Ok(k) => f.copy_from_slice(&self.warm[k].1),
                Err(_) if q[rows * i] < 0.0 => {
                    f[0] = true;
                    if surplus {
                        (f[1], f[3]) = (true, true);
                    }
                }
                Err(_) => {}
            }
        }
        Some(flags)
    }

    /// The joint rows' part of the warm basis: each block's last flags, or for a block
    /// without (first step, or a changed row count) a guess: a unilateral row basic where it
    /// is approaching (`q < 0`), a box row with s⁺ basic (inside its bound, γ = 0).
    fn warm_joint_flags(&self, part: &JointPart, q: &[f64]) -> Vec<bool> {
        let mut flags = Vec::with_capacity(part.lcp_rows);
        for (b, &(first, n)) in part.block_rows.iter().enumerate() {
            match self.warm_joints.get(b).filter(|f| f.len() == n) {
                Some(f) => flags.extend(f),
                None => {
                    flags.extend((first..first + n).map(|r| q[r] < 0.0 || part.is_box_first(r)))
                }
            }
        }
        flags
    }

    /// The exact solve of one step on bodies holding their free velocities: assembles the
    /// LCP of `contacts`, solves it from the last basis, keeps the new basis and sets the
    /// bodies' velocities to `v⁺`. Returns (pivots, residual); the seconds spent are pushed
    /// to `solve_seconds`, the contacts and impulses kept in `last`.
    pub(super) fn solve_step(
        &mut self,
        bodies: &mut [Body64],
        contacts: &[ContactRecord],
        dt: f64,
        step_no: u64,
    ) -> Result<(usize, f64), GpuError> {
        let t0 = Instant::now();
        let (records, offsets) = if self.blocks.is_empty() {
            (Vec::new(), Vec::new())
        } else {
            write_blocks(bodies, &self.blocks, dt, self.settings.recovery_speed)
        };
        let lcp = StepLcp::with_joints(bodies, contacts, (&records, &offsets), dt, &self.settings);
        let mut warm = self.warm_flags(contacts, lcp.q.as_slice());
        if let (Some(w), Some(part)) = (warm.as_mut(), lcp.joint_part()) {
            w.extend(self.warm_joint_flags(part, lcp.q.as_slice()));
        }
        let sol = lcp
            .solve_from_level(warm.as_deref(), contacts, self.level)
            .inspect_err(|_| dump_lcp(&lcp))
            .map_err(|e| {
                GpuError::Solver(format!(
                    "step {step_no} (t = {} s): the exact LCP solve (Lemke) failed: {e}",
                    step_no as f64 * dt
                ))
            })?;
        let rows = self.settings.rows_per_contact();
        self.warm = contacts
            .iter()
            .enumerate()
            .map(|(i, c)| (c.key(), sol.lemke.basis[rows * i..rows * (i + 1)].to_vec()))
            .collect();
        let v = match lcp.joint_part() {
            None => apply_impulses(bodies, contacts, &sol.gamma),
            Some(part) => {
                let basis = &sol.lemke.basis;
                self.warm_joints = part
                    .block_rows
                    .iter()
                    .map(|&(first, n)| basis[first..first + n].to_vec())
                    .collect();
                apply_impulses_joints(bodies, contacts, &sol.gamma, &records, &sol.joint_gamma)
            }
        };
        self.last_joints = (records, sol.joint_gamma.clone());
        for (b, (lin, ang)) in bodies.iter_mut().zip(v) {
            b.vel = lin;
            b.omega = ang;
        }
        let seconds = t0.elapsed().as_secs_f64();
        self.solve_seconds.push(seconds);
        self.level = sol.level;
        self.log.push(LemkeStepLog {
            step: step_no,
            rows: lcp.q.len() as u32,
            pivots: sol.lemke.pivots as u32,
            retries: sol.lemke.retries,
            perturbation: LEVELS[sol.level],
            solve_seconds: seconds,
        });
        self.last = (contacts.to_vec(), sol.gamma);
        Ok((sol.lemke.pivots, sol.lemke.residual()))
    }
}

/// With `BRISTLECONE_LCP_DUMP=FILE` set, writes a failed LCP's q (first line) and M (one row
/// per line) to FILE.
fn dump_lcp(lcp: &StepLcp) {
    let Ok(path) = std::env::var("BRISTLECONE_LCP_DUMP") else {
        return;
    };
    let row = |v: Vec<f64>| {
        v.iter()
            .map(|x| format!("{x:e}"))
            .collect::<Vec<_>>()
            .join(" ")
    };
    let mut text = row(lcp.q.iter().copied().collect());
    for i in 0..lcp.q.len() {
        text.push('\n');
        text.push_str(&row(lcp.m.row(i).iter().copied().collect()));
    }
    let _ = std::fs::write(path, text);
}

/// Bytes of the readback of one step: counts (64), contacts, then rot, vel, omega, mass_props,
/// info and pos (16 B per body each; pos for the joint rows).
fn staging_size(capacity: u32, bodies: u32) -> u64 {
    64 + capacity as u64 * 64 + 6 * bodies as u64 * 16
}

impl Simulation {
    /// Switches the contact solve to the exact LCP solver (None: back to the GPU solver).
    /// Needs contacts ([`super::StepSettings::contact`]); otherwise this does nothing. Joints
    /// set before or after are solved in the same LCP (`reference::lcp`, module `joints`).
    pub fn set_lemke(&mut self, settings: Option<LcpSettings>) {
        // The CPU path held the bodies: the GPU takes them back.
        if let Some(state) = self.lemke.take().and_then(|l| l.cpu).map(|c| c.state) {
            self.bodies.write(&self.ctx, &state);
        }
        self.lemke = settings
            .filter(|_| self.contact.is_some())
            .map(LemkeStage::new);
        self.lemke_sync_joints();
    }

    /// Gives the exact solver the joints' row blocks (after [`Simulation::set_joints`]).
    pub(super) fn lemke_sync_joints(&mut self) {
        let blocks = crate::joints::blocks_of(self.joints()).0;
        if let Some(l) = self.lemke.as_mut() {
            if l.blocks != blocks {
                l.warm_joints.clear();
            }
            l.blocks = blocks;
        }
    }

    /// The exact solver's settings when it is on.
    pub fn lemke_settings(&self) -> Option<&LcpSettings> {
        self.lemke.as_ref().map(|l| &l.settings)
    }

    /// CPU seconds of the exact solve (assembly, Lemke, velocity update) of each step of the
    /// last [`Simulation::advance`]; empty with the GPU solvers.
    pub fn solve_seconds(&self) -> &[f64] {
        self.lemke.as_ref().map_or(&[], |l| &l.solve_seconds)
    }

    /// How each step of the last [`Simulation::advance`] was solved (pivots, failed starts,
    /// perturbation, seconds); empty with the GPU solvers.
    pub fn lemke_log(&self) -> &[LemkeStepLog] {
        self.lemke.as_ref().map_or(&[], |l| &l.log)
    }

    /// [`Simulation::advance`] with the exact solver: one step at a time.
    pub(super) fn advance_lemke(
        &mut self,
        n: u32,
        stats_every: u64,
    ) -> Result<Vec<StepRecord>, GpuError> {
        let every = stats_every.max(1);
        let first = self.step_index;
        let (ring, host) = self.ring(n as u64);
        if let Some(l) = self.lemke.as_mut() {
            l.solve_seconds.clear();
            l.log.clear();
        }
        for k in 0..n as u64 {
            self.lemke_step(&ring, k)?;
        }
        let mut enc = self.ctx.device.create_command_encoder(&Default::default());
        enc.copy_buffer_to_buffer(&ring, 0, &host, 0, n as u64 * RING_SLOT);
        self.ctx.queue.submit([enc.finish()]);
        let raw: Vec<[u32; 4]> =
            buffers::map_and_read(&self.ctx, &host, (n as u64 * RING_SLOT / 16) as usize)?;
        self.step_index = first + n as u64;
        // One LCP per step; the Painlevé count is a diagnostic of the GPU solvers (an LCP
        // without a solution ends in a ray error instead), so it stays 0.
        let ring = super::StepStats::decode_ring(&raw, n);
        let mut records = super::records_from_ring(&ring, first, every, self.settings.dt);
        for r in &mut records {
            r.outer_iterations = 1;
        }
        Ok(records)
    }

    /// Free velocity + collision + readback, grown and redone until nothing overflows.
    fn lemke_collide(&mut self) -> Result<(Vec<ContactRecord>, BodyState), GpuError> {
        let ctx = self.ctx.clone();
        let nb = self.bodies.count;
        let mut first = true;
        loop {
            let c: &mut ContactStages = self.contact.as_mut().expect("lemke needs contacts");
            let size = staging_size(c.collide.capacity(), nb);
            let l = self.lemke.as_mut().expect("lemke stage");
            if l.staging.as_ref().is_none_or(|s| s.1 < size) {
                let buf = ctx.device.create_buffer(&wgpu::BufferDescriptor {
                    label: Some("lemke readback"),
                    size,
                    usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
                    mapped_at_creation: false,
                });
                l.staging = Some((buf, size));
            }
            let staging = l.staging.as_ref().unwrap().0.clone();
            let mut enc = ctx.device.create_command_encoder(&Default::default());
            if first {
                let mut pass = enc.begin_compute_pass(&Default::default());
                self.integrate.record_free_velocity(&mut pass);
            }
            c.record_collide(&ctx, &self.bodies, &mut enc);
            let cap = c.collide.capacity() as u64;
            enc.copy_buffer_to_buffer(c.collide.counts(), 0, &staging, 0, 64);
            enc.copy_buffer_to_buffer(c.collide.contacts(), 0, &staging, 64, cap * 64);
            let b = &self.bodies;
            let body_bytes = nb as u64 * 16;
            for (k, buf) in [&b.rot, &b.vel, &b.omega, &b.mass_props, &b.info, &b.pos]
                .into_iter()
                .enumerate()
            {
                let off = 64 + cap * 64 + k as u64 * body_bytes;
                enc.copy_buffer_to_buffer(buf, 0, &staging, off, body_bytes);
            }
            ctx.queue.submit([enc.finish()]);
            first = false;
            let words: Vec<u32> = buffers::map_and_read(&ctx, &staging, (size / 4) as usize)?;
            if words[1] != 0 {
                c.grow(&ctx, &self.bodies, words[2])?;
                self.batched.snapshot = None;
                self.regrowths += 1;
                continue;
            }
            let n = (words[0] as usize).min(cap as usize);
            let contacts: Vec<ContactRecord> =
                bytemuck::pod_collect_to_vec(&words[16..16 + 16 * n]);
            let at = |k: usize| 16 + 16 * cap as usize + 4 * k * nb as usize;
            let arr = |k: usize| -> Vec<[f32; 4]> {
                bytemuck::pod_collect_to_vec(&words[at(k)..at(k + 1)])
            };
            let info: Vec<[u32; 4]> = bytemuck::pod_collect_to_vec(&words[at(4)..at(5)]);
            let state = BodyState {
                pos: arr(5),
                rot: arr(0),
                vel: arr(1),
                omega: arr(2),
                mass_props: arr(3),
                force: vec![[0.0; 4]; nb as usize],
                torque: vec![[0.0; 4]; nb as usize],
                info,
            };
            return Ok((contacts, state));
        }
    }

    /// One step with the exact solver; its statistics go to ring slot `slot`.
    fn lemke_step(&mut self, ring: &wgpu::Buffer, slot: u64) -> Result<(), GpuError> {
        let (all, state) = self.lemke_collide()?;
        // Contacts between two non-dynamic bodies (fixed grains on a floor) carry nothing.
        let dynamic = |b: u32| state.mass_props[b as usize][3] > 0.0;
        let contacts: Vec<ContactRecord> = all
            .into_iter()
            .filter(|c| dynamic(c.ids[0]) || dynamic(c.ids[1]))
            .collect();
        let step_no = self.step_index + slot + 1;
        let dt = self.settings.dt;
        let mut bodies = to_f64(&state);
        let l = self.lemke.as_mut().expect("lemke stage");
        let (pivots, residual) = l.solve_step(&mut bodies, &contacts, dt, step_no)?;
        let vel: Vec<[f32; 4]> = bodies
            .iter()
            .map(|b| [b.vel.x as f32, b.vel.y as f32, b.vel.z as f32, 0.0])
            .collect();
        let omega: Vec<[f32; 4]> = bodies
            .iter()
            .map(|b| [b.omega.x as f32, b.omega.y as f32, b.omega.z as f32, 0.0])
            .collect();
        let pen = contacts
            .iter()
            .map(|c| (-c.n_gap[3]).max(0.0))
            .fold(0.0f32, f32::max);
        let q = &self.ctx.queue;
        q.write_buffer(&self.bodies.vel, 0, bytemuck::cast_slice(&vel));
        q.write_buffer(&self.bodies.omega, 0, bytemuck::cast_slice(&omega));
        let c = self.contact.as_ref().expect("contacts");
        let words = [pivots as u32, (residual as f32).to_bits(), pen.to_bits()];
        q.write_buffer(&c.step_stats, 8, bytemuck::cast_slice(&words));
        let mut enc = self.ctx.device.create_command_encoder(&Default::default());
        {
            let mut pass = enc.begin_compute_pass(&Default::default());
            self.integrate.record_update_positions(&mut pass);
            self.stats.record(&mut pass);
        }
        enc.copy_buffer_to_buffer(self.stats.totals_buffer(), 0, ring, slot * RING_SLOT, 32);
        enc.copy_buffer_to_buffer(&c.step_stats, 0, ring, slot * RING_SLOT + 32, 32);
        self.ctx.queue.submit([enc.finish()]);
        Ok(())
    }
}
