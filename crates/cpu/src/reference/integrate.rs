//! f64 twin of `shaders/integrate.wgsl` and `shaders/stats.wgsl`, the oracle for tests.

use crate::model::body::{BodyState, MOTION_DYNAMIC, MOTION_FIXED, MOTION_PARKED};
use glam::{DQuat, DVec3};

/// Same fixed-point iteration count as the shader.
const GYRO_ITERATIONS: usize = 6;

/// A body in f64.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Body64 {
    pub pos: DVec3,
    pub radius: f64,
    pub rot: DQuat,
    pub vel: DVec3,
    pub omega: DVec3,
    pub inv_inertia: DVec3,
    pub inv_mass: f64,
    pub force: DVec3,
    pub torque: DVec3,
    pub motion: u32,
}

pub fn to_f64(s: &BodyState) -> Vec<Body64> {
    let v3 = |a: [f32; 4]| DVec3::new(a[0] as f64, a[1] as f64, a[2] as f64);
    (0..s.len())
        .map(|i| {
            let r = s.rot[i];
            Body64 {
                pos: v3(s.pos[i]),
                radius: s.pos[i][3] as f64,
                rot: DQuat::from_xyzw(r[0] as f64, r[1] as f64, r[2] as f64, r[3] as f64),
                vel: v3(s.vel[i]),
                omega: v3(s.omega[i]),
                inv_inertia: v3(s.mass_props[i]),
                inv_mass: s.mass_props[i][3] as f64,
                force: v3(s.force[i]),
                torque: v3(s.torque[i]),
                motion: s.info[i][0],
            }
        })
        .collect()
}

/// Free velocity: v* = v + dt M⁻¹ (f − gyroscopic), implicit-midpoint gyroscopic term.
pub fn free_velocity(b: &mut Body64, gravity: DVec3, dt: f64) {
    if b.motion != MOTION_DYNAMIC {
        return;
    }
    b.vel += dt * (gravity + b.inv_mass * b.force);
    let w0 = b.rot.inverse() * b.omega;
    let inv_i = b.inv_inertia;
    let forced = w0 + dt * inv_i * (b.rot.inverse() * b.torque);
    let mut w = forced;
    if inv_i.min_element() > 0.0 {
        let inertia = DVec3::ONE / inv_i;
        for _ in 0..GYRO_ITERATIONS {
            let wm = 0.5 * (w0 + w);
            w = forced - dt * inv_i * wm.cross(inertia * wm);
        }
    }
    b.omega = b.rot * w;
}

/// x⁺ = x + dt v⁺, q⁺ = normalize(q + dt/2 (ω⁺, 0) q).
pub fn update_position(b: &mut Body64, dt: f64) {
    if b.motion == MOTION_FIXED || b.motion == MOTION_PARKED {
        return;
    }
    b.pos += dt * b.vel;
    let w = DQuat::from_xyzw(b.omega.x, b.omega.y, b.omega.z, 0.0);
    let dq = w * b.rot;
    b.rot = DQuat::from_xyzw(
        b.rot.x + 0.5 * dt * dq.x,
        b.rot.y + 0.5 * dt * dq.y,
        b.rot.z + 0.5 * dt * dq.z,
        b.rot.w + 0.5 * dt * dq.w,
    )
    .normalize();
}

/// One contact-free step of every body.
pub fn step(bodies: &mut [Body64], gravity: DVec3, dt: f64) {
    for b in bodies {
        free_velocity(b, gravity, dt);
        update_position(b, dt);
    }
}

/// Mass and principal inertia (zero for infinite ones), from the inverse values.
fn mass_and_inertia(b: &Body64) -> (f64, DVec3) {
    let m = if b.inv_mass > 0.0 {
        1.0 / b.inv_mass
    } else {
        0.0
    };
    let inertia = DVec3::select(
        b.inv_inertia.cmpgt(DVec3::ZERO),
        DVec3::ONE / b.inv_inertia,
        DVec3::ZERO,
    );
    (m, inertia)
}

/// Kinetic energy of one body.
pub fn kinetic_energy(b: &Body64) -> f64 {
    let (m, inertia) = mass_and_inertia(b);
    let wb = b.rot.inverse() * b.omega;
    0.5 * (m * b.vel.length_squared() + wb.dot(inertia * wb))
}

/// Angular momentum about the origin.
pub fn angular_momentum(b: &Body64) -> DVec3 {
    let (m, inertia) = mass_and_inertia(b);
    let wb = b.rot.inverse() * b.omega;
    b.pos.cross(m * b.vel) + b.rot * (inertia * wb)
}
