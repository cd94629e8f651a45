//! The exact-LCP step entirely on the CPU, for small systems (`[solver] lemke_step`).
//!
//! Why: a step of a few bodies is a few microseconds of arithmetic, but any GPU round trip
//! (submit, wait, map the readback) costs a fixed latency: ~1 ms on lavapipe, tens to hundreds
//! of µs on a discrete GPU behind PCIe and a driver. The GPU-collision Lemke path
//! ([`super::lemke`]) must wait for the contacts before it can solve, so that latency is paid
//! every step and alone exceeds a 1 ms real-time budget on lavapipe. Here every stage runs on
//! the CPU with no GPU work per step: free velocity ([`reference::integrate::free_velocity`]),
//! collision (the f64 twin [`reference::collide::detect`], every boundary kind, its records
//! rounded to f32 as the GPU writes them), the Lemke solve, the velocity and position update
//! ([`reference::integrate::update_position`]) and the statistics.
//!
//! The state stays f32 ([`BodyState`], as on the GPU) between steps; a step computes in f64
//! from it and rounds its result. So a checkpoint of the CPU state is exact, and the two paths
//! differ only by f32 rounding inside a step (`tests/lemke.rs` compares them).
//!
//! Once the CPU path has started, the CPU holds the state and the GPU body buffers are stale:
//! every reader goes through [`Simulation`] ([`Simulation::read_state`],
//! [`Simulation::download_kinematics`], [`Simulation::read_contacts`], the checkpoint).
//!
//! [`reference::integrate::free_velocity`]: crate::reference::integrate::free_velocity
//! [`reference::collide::detect`]: crate::reference::collide::detect
//! [`reference::integrate::update_position`]: crate::reference::integrate::update_position

use super::{Simulation, StepRecord};
use crate::bodies::{BodyState, MOTION_DYNAMIC};
use crate::collide::ContactRecord;
use crate::gpu::GpuError;
use crate::reference::collide::detect;
use crate::reference::integrate::{
    angular_momentum, free_velocity, kinetic_energy, to_f64, update_position, Body64,
};
use crate::step::BodyTotals;
use glam::DVec3;

/// Where a Lemke step runs is the vocabulary's choice (`crate::model::solver`).
pub use crate::model::solver::{LemkeStep, CPU_STEP_MAX_BODIES};

/// The CPU path's state: the bodies as the GPU would hold them.
pub(super) struct CpuStep {
    pub(super) state: BodyState,
}

/// Totals over dynamic bodies, as `shaders/stats.wgsl` reduces them (in f64 here).
pub(super) fn totals(state: &BodyState) -> BodyTotals {
    let mut t = BodyTotals::default();
    for b in to_f64(state).iter().filter(|b| b.motion == MOTION_DYNAMIC) {
        let m = if b.inv_mass > 0.0 {
            1.0 / b.inv_mass
        } else {
            0.0
        };
        let l = angular_momentum(b);
        t.kinetic_energy += kinetic_energy(b);
        for k in 0..3 {
            t.momentum[k] += m * b.vel[k];
            t.angular_momentum[k] += l[k];
        }
        t.max_speed = t.max_speed.max(b.vel.length());
    }
    t
}

/// Writes the kinematic fields of f64 bodies back into the f32 state.
fn store(state: &mut BodyState, bodies: &[Body64]) {
    let f = |v: DVec3, w: f32| [v.x as f32, v.y as f32, v.z as f32, w];
    for (i, b) in bodies.iter().enumerate() {
        state.pos[i] = f(b.pos, state.pos[i][3]);
        state.rot[i] = [b.rot.x, b.rot.y, b.rot.z, b.rot.w].map(|x| x as f32);
        state.vel[i] = f(b.vel, 0.0);
        state.omega[i] = f(b.omega, 0.0);
    }
}

impl Simulation {
    /// Chooses where the exact solver's step runs (see [`LemkeStep`]); without the exact
    /// solver this does nothing. Returns whether it steps on the CPU.
    pub fn set_lemke_step(&mut self, step: LemkeStep) -> Result<bool, GpuError> {
        let on_cpu = self.lemke_step_on_cpu_for(step);
        if on_cpu && self.scope.periodic.is_some() {
            return Err(GpuError::Invalid(
                "periodic cell: the exact solver's CPU step does not support a periodic cell"
                    .into(),
            ));
        }
        let Some(l) = self.lemke.as_ref() else {
            return Ok(false);
        };
        if let Some(cpu) = l.cpu.as_ref().filter(|_| !on_cpu) {
            // Back to the GPU: it takes the CPU's state.
            self.bodies.write(&self.ctx, &cpu.state);
        }
        let l = self.lemke.as_mut().unwrap();
        l.step = step;
        if !on_cpu {
            l.cpu = None;
        } else {
            // Load the state now (one readback), not in the first step: a real-time run's
            // first step is then a step like the others.
            self.cpu_state()?;
        }
        Ok(on_cpu)
    }

    fn lemke_step_on_cpu_for(&self, step: LemkeStep) -> bool {
        let shapes = self
            .settings
            .contact
            .as_ref()
            .map_or(&[][..], |c| &c.shapes);
        self.lemke.is_some() && step.on_cpu(self.bodies.count, shapes)
    }

    /// Whether the exact solver steps on the CPU ([`Simulation::set_lemke_step`]).
    pub fn lemke_on_cpu(&self) -> bool {
        self.lemke
            .as_ref()
            .is_some_and(|l| self.lemke_step_on_cpu_for(l.step))
    }

    /// The CPU state, loaded from the GPU (one readback) the first time.
    fn cpu_state(&mut self) -> Result<&mut BodyState, GpuError> {
        if self.lemke.as_ref().is_some_and(|l| l.cpu.is_none()) {
            let state = self.bodies.download(&self.ctx)?;
            self.lemke.as_mut().unwrap().cpu = Some(CpuStep { state });
        }
        Ok(&mut self
            .lemke
            .as_mut()
            .expect("lemke stage")
            .cpu
            .as_mut()
            .unwrap()
            .state)
    }

    /// The CPU path's state when it holds the bodies (None: the GPU holds them).
    pub(super) fn cpu_held(&self) -> Option<&BodyState> {
        self.lemke.as_ref()?.cpu.as_ref().map(|c| &c.state)
    }

    pub(super) fn cpu_held_mut(&mut self) -> Option<&mut BodyState> {
        self.lemke.as_mut()?.cpu.as_mut().map(|c| &mut c.state)
    }

    /// [`Simulation::advance`] with the exact solver on the CPU.
    pub(super) fn advance_lemke_cpu(
        &mut self,
        n: u32,
        stats_every: u64,
    ) -> Result<Vec<StepRecord>, GpuError> {
        let every = stats_every.max(1);
        self.cpu_state()?;
        if let Some(l) = self.lemke.as_mut() {
            l.solve_seconds.clear();
            l.log.clear();
        }
        let mut records = Vec::new();
        for k in 0..n {
            let r = self.cpu_step()?;
            if r.step.is_multiple_of(every) || k + 1 == n {
                records.push(r);
            }
        }
        Ok(records)
    }

    /// One step on the CPU: free velocity, collision, Lemke, positions, statistics.
    fn cpu_step(&mut self) -> Result<StepRecord, GpuError> {
        let dt = self.settings.dt;
        let g = DVec3::from(self.settings.gravity);
        let step_no = self.step_index + 1;
        let setup = self
            .settings
            .contact
            .as_ref()
            .expect("lemke needs contacts");
        let l = self.lemke.as_mut().expect("lemke stage");
        let state = &mut l.cpu.as_mut().expect("cpu state loaded").state;
        let mut bodies = to_f64(state);
        for b in &mut bodies {
            free_velocity(b, g, dt);
        }
        // Positions have not moved since the last step: collide the stored state.
        let all: Vec<ContactRecord> = detect(state, &setup.shapes, &setup.collide)
            .iter()
            .map(ContactRecord::from)
            .collect();
        // As on the GPU path: contacts between two non-dynamic bodies carry nothing.
        let dynamic = |b: u32| state.mass_props[b as usize][3] > 0.0;
        let contacts: Vec<ContactRecord> = all
            .iter()
            .filter(|c| dynamic(c.ids[0]) || dynamic(c.ids[1]))
            .copied()
            .collect();
        let pen = contacts
            .iter()
            .map(|c| (-c.n_gap[3]).max(0.0))
            .fold(0.0f32, f32::max);
        let (pivots, residual) = l.solve_step(&mut bodies, &contacts, dt, step_no)?;
        for b in &mut bodies {
            update_position(b, dt);
        }
        let state = &mut l.cpu.as_mut().unwrap().state;
        store(state, &bodies);
        // The statistics as the GPU path reads them back (f32 words).
        let residual = (residual as f32) as f64;
        l.last_stats = (pivots as u32, residual, pen as f64);
        self.step_index = step_no;
        Ok(StepRecord {
            step: step_no,
            time: step_no as f64 * dt,
            totals: totals(state),
            contacts: all.len() as u32,
            iterations: pivots as u32,
            residual,
            max_penetration: pen as f64,
            outer_iterations: 1,
            painleve: 0,
        })
    }
}
