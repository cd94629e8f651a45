//! A periodic cell for the step: collision by the minimum image, grains wrapped into the
//! cell after each position update (`collide::periodic`). A sheared (Lees–Edwards) cell also
//! gives each step its image offset δ ([`ShearSchedule`]).

use super::{boundary_count, Simulation, MAX_BATCH};
use crate::collide::PeriodicCell;
use crate::gpu::GpuError;

/// The image offsets δ of a sheared cell's steps. A batch records its steps in one
/// submission, so each step copies its own δ into the params before it runs: from slot k of
/// `offsets` (δ at the start of the batch's step k) to the collision's, and from slot k + 1
/// (δ at its end) to the wrap's. δ is computed in f64 from the step index, so it is not
/// carried state: a resumed run gets the same δ bit for bit.
pub(super) struct ShearSchedule {
    cell: PeriodicCell,
    offsets: wgpu::Buffer,
}

impl Simulation {
    /// Makes the cell periodic along the axes of `cell` with a period (sheared when
    /// `cell.shear` is set). Grains outside the cell are wrapped into it now. Refused
    /// without contacts, on the exact solver's steps (the CPU one detects with the
    /// non-periodic twin; neither takes the shear's offsets), and for a period no longer
    /// than twice a contact's reach ([`PeriodicCell::check_reach`]).
    pub fn set_periodic(&mut self, cell: &PeriodicCell) -> Result<(), GpuError> {
        let refuse = |m: &str| Err(GpuError::Invalid(format!("periodic cell: {m}")));
        if self.contact.is_none() {
            return refuse("the step has no contact handling");
        }
        if self.cpu_held().is_some() {
            return refuse("the exact solver's CPU step does not support a periodic cell");
        }
        if cell.shear.is_some() && self.lemke.is_some() {
            return refuse("the exact solver's steps do not support Lees–Edwards shear");
        }
        let mut state = self.read_state()?;
        let nb = boundary_count(&state);
        if cell.shear.is_some() {
            if let Some(why) = self.unsheared(&state, nb) {
                return refuse(&why);
            }
        }
        for p in &mut state.pos[nb..] {
            let w = cell.wrap(glam::DVec3::new(p[0] as f64, p[1] as f64, p[2] as f64));
            // A grain inside comes back unchanged: the f64 wrap leaves it exact.
            p[..3].copy_from_slice(&[w.x as f32, w.y as f32, w.z as f32]);
        }
        let envelope = self
            .settings
            .contact
            .as_ref()
            .map_or(0.0, |c| c.collide.envelope);
        let c = self.contact.as_mut().expect("checked above");
        c.collide.set_periodic(&self.ctx, &state, cell, envelope)?;
        self.scope.periodic = cell.any().then_some(*cell);
        let flow = cell.gpu(0.0)[2];
        c.solve
            .set_shear_flow(&self.ctx, [flow[0], flow[1], flow[2]]);
        self.bodies.write(&self.ctx, &state);
        self.integrate.set_periodic(&self.ctx, cell, nb as u32);
        self.shear = cell.shear.map(|_| ShearSchedule {
            cell: *cell,
            offsets: self.ctx.device.create_buffer(&wgpu::BufferDescriptor {
                label: Some("shear offsets"),
                size: 4 * (MAX_BATCH as u64 + 1),
                usage: wgpu::BufferUsages::COPY_SRC | wgpu::BufferUsages::COPY_DST,
                mapped_at_creation: false,
            }),
        });
        self.batched.contacts_sized = false;
        Ok(())
    }

    /// Why a Lees–Edwards cell cannot hold these grains and contact models, if it cannot:
    /// only the sphere pair's narrow phase writes the image's velocity into its contacts,
    /// and tanh and LuGre save a slip speed of their own after the assembly, without it.
    fn unsheared(&self, state: &crate::bodies::BodyState, nb: usize) -> Option<String> {
        use crate::model::rows::{MODEL_LUGRE, MODEL_TANH};
        if let Some(b) =
            (nb..state.len()).find(|&b| state.info[b][2] != crate::bodies::SHAPE_SPHERE)
        {
            return Some(format!(
                "Lees–Edwards shear takes sphere grains only (body {b} is not a sphere)"
            ));
        }
        let models = self
            .settings
            .contact
            .as_ref()
            .map_or(&[][..], |c| &c.models[..]);
        if models.iter().any(|m| {
            let id = m[0] as u32;
            id == MODEL_TANH || id == MODEL_LUGRE
        }) {
            return Some(
                "Lees–Edwards shear does not take the tanh or LuGre friction models".into(),
            );
        }
        None
    }

    /// Before a batch of `n` steps from the current step index: δ at each step boundary.
    pub(super) fn write_shear_offsets(&self, n: u32) {
        let Some(s) = &self.shear else {
            return;
        };
        let dt = self.settings.dt;
        let offsets: Vec<f32> = (0..=n as u64)
            .map(|k| s.cell.shear_offset((self.step_index + k) as f64 * dt) as f32)
            .collect();
        self.ctx
            .queue
            .write_buffer(&s.offsets, 0, bytemuck::cast_slice(&offsets));
    }

    /// Step `slot` of a batch: its δ into the collision's and the wrap's params.
    pub(super) fn record_shear_offsets(&self, enc: &mut wgpu::CommandEncoder, slot: u64) {
        let (Some(s), Some(c)) = (&self.shear, &self.contact) else {
            return;
        };
        let (collide_at, wrap_at) = (
            crate::collide::SHEAR_OFFSET_BYTE,
            super::integrate::SHEAR_OFFSET_BYTE,
        );
        let params = c.collide.params_buffer();
        enc.copy_buffer_to_buffer(&s.offsets, 4 * slot, params, collide_at, 4);
        let wrap = self.integrate.params_buffer();
        enc.copy_buffer_to_buffer(&s.offsets, 4 * (slot + 1), wrap, wrap_at, 4);
    }
}
