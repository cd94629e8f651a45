//! Clump frames: `frames/clumps_STEP.vtp` (index `clumps.pvd`), one point per member sphere
//! with the arrays of the particle frames (position, radius, velocity of the member's
//! centre v + ω × r, angular velocity, id = the clump's body id) plus `member` (its index in
//! the clump). In ParaView: open `clumps.pvd`, Glyph → Sphere, Scale Array = radius, Scale
//! Factor = 2 (a glyph sphere has radius 0.5), colour by `id` to tell the clumps apart.
//! `particles.pvd` still holds one point per body (the centre of mass, radius = bounding
//! radius).

use std::path::Path;
use std::sync::Arc;

use glam::{Quat, Vec3};

use super::{vtk, Collection, IoError};
use crate::bodies::BodyState;
use crate::clump::ClumpMass;
use crate::scene::{BodyShape, Scene};

pub struct ClumpFrames {
    /// (body index, members in the body frame).
    clumps: Vec<(usize, Arc<ClumpMass>)>,
    pvd: Collection,
}

impl ClumpFrames {
    /// `None` when the scene has no clumps. `resume_at`: continue `clumps.pvd` up to that
    /// time (after `--resume`).
    pub fn new(
        scene: &Scene,
        first_body: usize,
        dir: &Path,
        resume_at: Option<f64>,
    ) -> Result<Option<Self>, IoError> {
        let clumps: Vec<(usize, Arc<ClumpMass>)> = scene
            .bodies
            .iter()
            .enumerate()
            .filter_map(|(k, b)| match &b.shape {
                BodyShape::Clump(c) => Some((first_body + k, c.clone())),
                _ => None,
            })
            .collect();
        if clumps.is_empty() {
            return Ok(None);
        }
        let pvd = Collection::open(dir.join("clumps.pvd"), resume_at)?;
        Ok(Some(ClumpFrames { clumps, pvd }))
    }

    pub fn write(
        &mut self,
        dir: &Path,
        step: u64,
        time: f64,
        s: &BodyState,
    ) -> Result<(), IoError> {
        let (mut pos, mut rad, mut vel, mut omega, mut ids, mut member) = (
            Vec::new(),
            Vec::new(),
            Vec::new(),
            Vec::new(),
            Vec::new(),
            Vec::new(),
        );
        let v3 = |a: [f32; 4]| Vec3::new(a[0], a[1], a[2]);
        for (b, c) in &self.clumps {
            let (x, q) = (v3(s.pos[*b]), Quat::from_array(s.rot[*b]));
            let (v, w) = (v3(s.vel[*b]), v3(s.omega[*b]));
            for (k, m) in c.members.iter().enumerate() {
                let r = q * Vec3::new(m[0] as f32, m[1] as f32, m[2] as f32);
                pos.push((x + r).to_array());
                rad.push(m[3] as f32);
                vel.push((v + w.cross(r)).to_array());
                omega.push(w.to_array());
                ids.push(*b as u32);
                member.push(k as f32);
            }
        }
        let name = format!("frames/clumps_{step:08}.vtp");
        let frame = vtk::ParticleFrame {
            step,
            time,
            positions: &pos,
            radii: &rad,
            velocities: &vel,
            angular_velocities: &omega,
            ids: &ids,
            scalars: vec![("member", &member)],
            vectors: Vec::new(),
        };
        vtk::write_particles(&dir.join(&name), &frame)?;
        self.pvd.add(time, name)?;
        Ok(())
    }
}
