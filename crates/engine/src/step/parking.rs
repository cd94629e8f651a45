//! Parked grains: bodies allocated for the whole run but held out of the scene
//! ([`crate::bodies::MOTION_PARKED`]: collision, integration and statistics skip them). An
//! inflow activates them one by one; an outflow parks them again. The body count and every
//! per-body buffer stay fixed, so no stage's size changes when grains come and go.

use super::Simulation;
use crate::bodies::{MOTION_DYNAMIC, MOTION_PARKED};
use crate::gpu::GpuError;

/// Where and how a grain enters the scene.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Activation {
    pub position: [f32; 3],
    pub orientation: [f32; 4],
    pub velocity: [f32; 3],
    pub angular_velocity: [f32; 3],
}

impl Simulation {
    /// Makes parked grain `body` dynamic at `a` (its bounding radius, mass and shape stay
    /// those it was allocated with). Takes effect from the next step.
    pub fn activate(&mut self, body: u32, radius: f32, a: &Activation) {
        let [x, y, z] = a.position;
        let [vx, vy, vz] = a.velocity;
        let [wx, wy, wz] = a.angular_velocity;
        self.write_body_kinematics(
            body,
            [x, y, z, radius],
            a.orientation,
            [vx, vy, vz, 0.0],
            [wx, wy, wz, 0.0],
        );
        self.write_motion(body, MOTION_DYNAMIC);
    }

    /// Takes grain `body` out of the scene: at rest at `place` (kept for its bounding radius
    /// `radius`), skipped by every stage from the next step on. The first park of a
    /// simulation not opened for parking ([`super::CollideScope::parking`]) rebuilds the
    /// collision pipelines with the parked-grain tests.
    pub fn park(&mut self, body: u32, place: [f32; 3], radius: f32) -> Result<(), GpuError> {
        if !self.scope.parking {
            if let Some(c) = self.contact.as_mut() {
                c.collide.allow_parking(&self.ctx)?;
            }
            self.scope.parking = true;
        }
        let [x, y, z] = place;
        self.write_body_kinematics(
            body,
            [x, y, z, radius],
            [0.0, 0.0, 0.0, 1.0],
            [0.0; 4],
            [0.0; 4],
        );
        self.write_motion(body, MOTION_PARKED);
        Ok(())
    }

    fn write_body_kinematics(
        &mut self,
        body: u32,
        pos: [f32; 4],
        rot: [f32; 4],
        vel: [f32; 4],
        omega: [f32; 4],
    ) {
        let q = &self.ctx.queue;
        let off = body as u64 * 16;
        q.write_buffer(&self.bodies.pos, off, bytemuck::cast_slice(&pos));
        q.write_buffer(&self.bodies.rot, off, bytemuck::cast_slice(&rot));
        q.write_buffer(&self.bodies.vel, off, bytemuck::cast_slice(&vel));
        q.write_buffer(&self.bodies.omega, off, bytemuck::cast_slice(&omega));
        if let Some(s) = self.cpu_held_mut() {
            let b = body as usize;
            (s.pos[b], s.rot[b], s.vel[b], s.omega[b]) = (pos, rot, vel, omega);
        }
    }

    fn write_motion(&mut self, body: u32, motion: u32) {
        let off = body as u64 * 16;
        self.ctx
            .queue
            .write_buffer(&self.bodies.info, off, bytemuck::bytes_of(&motion));
        if let Some(s) = self.cpu_held_mut() {
            s.info[body as usize][0] = motion;
        }
    }
}
