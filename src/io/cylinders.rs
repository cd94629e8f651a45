//! Cylinder frames: `frames/cylinders_STEP.vtp` (index `cylinders.pvd`), every cylinder
//! body's surface as polygons (`shapes::cylinder::surface`: 16 side quads and two 16-triangle end fans, 34 points),
//! with cell data `id` (the body). Open `cylinders.pvd` in ParaView beside
//! `particles.pvd` (which holds one point per body, radius = bounding radius).

use std::path::Path;

use vtkio::model::Attribute;

use super::vtk::{check_finite3, check_len, pose_surfaces};
use super::{Collection, IoError};
use crate::bodies::BodyState;
use crate::scene::{BodyShape, Scene};
use crate::shapes::{cylinder, Surface};

/// Cylinder bodies of one frame, indexed by cylinder: centre, orientation (unit quaternion
/// `[x, y, z, w]`, body → world; the axis is body z), radius, half length, body id.
#[derive(Clone, Debug)]
pub struct CylinderFrame<'a> {
    pub centers: &'a [[f32; 3]],
    pub rotations: &'a [[f32; 4]],
    pub radii: &'a [f32],
    pub half_lengths: &'a [f32],
    pub ids: &'a [u32],
}

/// Writes every cylinder's surface (see the module doc). Atomic; refuses mismatched
/// lengths and NaN/inf.
pub fn write_cylinders(path: &Path, frame: &CylinderFrame) -> Result<(), IoError> {
    let n = frame.centers.len();
    check_len(path, "rotation", n, frame.rotations.len())?;
    check_len(path, "radius", n, frame.radii.len())?;
    check_len(path, "half_length", n, frame.half_lengths.len())?;
    check_len(path, "id", n, frame.ids.len())?;
    check_finite3(path, "center", frame.centers)?;
    let surfaces: Vec<Surface> = (frame.radii.iter().zip(frame.half_lengths))
        .map(|(&r, &hl)| cylinder::surface(r, hl))
        .collect();
    let posed = pose_surfaces(&surfaces, frame.centers, frame.rotations, frame.ids);
    check_finite3(path, "vertex", &posed.points)?;
    super::vtk::write_polygons(
        path,
        &posed.points,
        posed.connectivity,
        posed.offsets,
        vec![Attribute::generic("id", 1).with_data(posed.ids)],
    )
}

/// The run's cylinder frames and their index.
pub struct CylinderFrames {
    /// (body index, radius, half length).
    cylinders: Vec<(usize, f32, f32)>,
    pvd: Collection,
}

impl CylinderFrames {
    /// `None` when the scene has no cylinders. `resume_at`: continue `cylinders.pvd` up to
    /// that time (after `--resume`).
    pub fn new(
        scene: &Scene,
        first_body: usize,
        dir: &Path,
        resume_at: Option<f64>,
    ) -> Result<Option<Self>, IoError> {
        let cylinders: Vec<(usize, f32, f32)> = scene
            .bodies
            .iter()
            .enumerate()
            .filter_map(|(k, b)| match b.shape {
                BodyShape::Cylinder {
                    radius,
                    half_length,
                } => Some((first_body + k, radius as f32, half_length as f32)),
                _ => None,
            })
            .collect();
        if cylinders.is_empty() {
            return Ok(None);
        }
        let pvd = Collection::open(dir.join("cylinders.pvd"), resume_at)?;
        Ok(Some(CylinderFrames { cylinders, pvd }))
    }

    pub fn write(
        &mut self,
        dir: &Path,
        step: u64,
        time: f64,
        s: &BodyState,
    ) -> Result<(), IoError> {
        let c = &self.cylinders;
        let centers: Vec<[f32; 3]> = c
            .iter()
            .map(|&(b, ..)| [s.pos[b][0], s.pos[b][1], s.pos[b][2]])
            .collect();
        let rotations: Vec<[f32; 4]> = c.iter().map(|&(b, ..)| s.rot[b]).collect();
        let radii: Vec<f32> = c.iter().map(|&(_, r, _)| r).collect();
        let half_lengths: Vec<f32> = c.iter().map(|&(.., h)| h).collect();
        let ids: Vec<u32> = c.iter().map(|&(b, ..)| b as u32).collect();
        let name = format!("frames/cylinders_{step:08}.vtp");
        let frame = CylinderFrame {
            centers: &centers,
            rotations: &rotations,
            radii: &radii,
            half_lengths: &half_lengths,
            ids: &ids,
        };
        write_cylinders(&dir.join(&name), &frame)?;
        self.pvd.add(time, name)
    }
}
