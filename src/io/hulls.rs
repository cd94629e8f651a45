//! Convex hull frames: `frames/hulls_STEP.vtp` (index `hulls.pvd`), every hull body's
//! surface as polygons (one per face, its vertex loop counter-clockwise seen from outside)
//! with cell data `id` (the body) and `face`. In ParaView: open `hulls.pvd`, colour by `id`.
//! `particles.pvd` still holds one point per body (the centre of mass, radius = bounding
//! radius).

use std::path::Path;
use std::sync::Arc;

use glam::{Quat, Vec3};
use vtkio::model::Attribute;

use super::vtk::check_finite3;
use super::{Collection, IoError};
use crate::bodies::BodyState;
use crate::convex::ConvexHull;
use crate::scene::{BodyShape, Scene};

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
    let (mut points, mut connectivity, mut offsets) = (Vec::new(), Vec::new(), Vec::new());
    let (mut ids, mut faces) = (Vec::new(), Vec::new());
    for (&(id, h), &(c, q)) in hulls.iter().zip(poses) {
        let base = points.len() as u64;
        let (c, q) = (Vec3::from_array(c), Quat::from_array(q));
        for v in &h.vertices {
            points.push((c + q * v.as_vec3()).to_array());
        }
        for (k, f) in h.faces.iter().enumerate() {
            connectivity.extend(f.verts.iter().map(|&i| base + i as u64));
            offsets.push(connectivity.len() as u64);
            ids.push(id);
            faces.push(k as u32);
        }
    }
    check_finite3(path, "vertex", &points)?;
    super::vtk::write_polygons(
        path,
        &points,
        connectivity,
        offsets,
        vec![
            Attribute::generic("id", 1).with_data(ids),
            Attribute::generic("face", 1).with_data(faces),
        ],
    )
}
