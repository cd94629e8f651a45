//! Convex hull frames: `frames/hulls_STEP.vtp` (index `hulls.pvd`), every hull body's
//! surface as polygons (one per face, its vertex loop counter-clockwise seen from outside)
//! with cell data `id` (the body) and `face`. In ParaView: open `hulls.pvd`, colour by `id`.
//! `particles.pvd` still holds one point per body (the centre of mass, radius = bounding
//! radius).

use std::path::Path;
use std::sync::Arc;

use vtkio::model::Attribute;

use super::vtk::{check_finite3, pose_surfaces};
use super::{Collection, IoError};
use crate::bodies::BodyState;
use crate::convex::ConvexHull;
use crate::scene::{BodyShape, Scene};
use crate::shapes::{Solid, Surface};

pub struct HullFrames {
    /// (body index, hull in the body frame).
    hulls: Vec<(usize, Arc<ConvexHull>)>,
    pvd: Collection,
}

impl HullFrames {
    /// `None` when the scene has no hulls. `resume_at`: continue `hulls.pvd` up to that
    /// time (after `--resume`).
    pub fn new(
        scene: &Scene,
        first_body: usize,
        dir: &Path,
        resume_at: Option<f64>,
    ) -> Result<Option<Self>, IoError> {
        let hulls: Vec<(usize, Arc<ConvexHull>)> = scene
            .bodies
            .iter()
            .enumerate()
            .filter_map(|(k, b)| match &b.shape {
                BodyShape::Convex(c) => Some((first_body + k, c.clone())),
                _ => None,
            })
            .collect();
        if hulls.is_empty() {
            return Ok(None);
        }
        let pvd = Collection::open(dir.join("hulls.pvd"), resume_at)?;
        Ok(Some(HullFrames { hulls, pvd }))
    }

    pub fn write(
        &mut self,
        dir: &Path,
        step: u64,
        time: f64,
        s: &BodyState,
    ) -> Result<(), IoError> {
        let name = format!("frames/hulls_{step:08}.vtp");
        let poses: Vec<([f32; 3], [f32; 4])> = self
            .hulls
            .iter()
            .map(|(b, _)| ([s.pos[*b][0], s.pos[*b][1], s.pos[*b][2]], s.rot[*b]))
            .collect();
        let hulls: Vec<(u32, &ConvexHull)> =
            self.hulls.iter().map(|(b, h)| (*b as u32, &**h)).collect();
        write_hulls(&dir.join(&name), &hulls, &poses)?;
        self.pvd.add(time, name)?;
        Ok(())
    }
}

/// Writes the hulls (body id, hull) at their poses (centre, quaternion body → world) as
/// polygons with cell data `id` and `face`. Atomic; refuses NaN/inf.
pub fn write_hulls(
    path: &Path,
    hulls: &[(u32, &ConvexHull)],
    poses: &[([f32; 3], [f32; 4])],
) -> Result<(), IoError> {
    // Hulls past the last pose are left out.
    let hulls = &hulls[..hulls.len().min(poses.len())];
    let surfaces: Vec<Surface> = hulls.iter().filter_map(|(_, h)| h.surface()).collect();
    let centers: Vec<[f32; 3]> = poses.iter().map(|p| p.0).collect();
    let rotations: Vec<[f32; 4]> = poses.iter().map(|p| p.1).collect();
    let ids: Vec<u32> = hulls.iter().map(|h| h.0).collect();
    let posed = pose_surfaces(&surfaces, &centers, &rotations, &ids);
    check_finite3(path, "vertex", &posed.points)?;
    super::vtk::write_polygons(
        path,
        &posed.points,
        posed.connectivity,
        posed.offsets,
        vec![
            Attribute::generic("id", 1).with_data(posed.ids),
            Attribute::generic("face", 1).with_data(posed.polygon),
        ],
    )
}
