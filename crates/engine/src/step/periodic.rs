//! A periodic cell for the step: collision by the minimum image, grains wrapped into the
//! cell after each position update (`collide::periodic`).

use super::{boundary_count, Simulation};
use crate::collide::PeriodicCell;
use crate::gpu::GpuError;

impl Simulation {
    /// Makes the cell periodic along the axes of `cell` with a period. Grains outside the
    /// cell are wrapped into it now. Refused without contacts, on the exact solver's CPU
    /// step (it detects with the non-periodic twin), and for a period no longer than twice
    /// a contact's reach ([`PeriodicCell::check_reach`]).
    pub fn set_periodic(&mut self, cell: &PeriodicCell) -> Result<(), GpuError> {
        let refuse = |m: &str| Err(GpuError::Invalid(format!("periodic cell: {m}")));
        if self.contact.is_none() {
            return refuse("the step has no contact handling");
        }
        if self.cpu_held().is_some() {
            return refuse("the exact solver's CPU step does not support a periodic cell");
        }
        let mut state = self.read_state()?;
        let nb = boundary_count(&state);
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
        self.bodies.write(&self.ctx, &state);
        self.integrate.set_periodic(&self.ctx, cell, nb as u32);
        self.contacts_sized = false;
        Ok(())
    }
}
