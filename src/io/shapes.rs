//! The per-shape frame writers beside `particles.pvd` (boundaries, clump members, cylinder
//! and hull surfaces), behind one interface so the run loop holds a list instead of a field each.

use std::path::Path;

use super::IoError;
use crate::bodies::BodyState;
use crate::scene::Scene;

/// One shape family's VTK frame per output frame, indexed by its own `.pvd`.
pub trait ShapeFrames: Send {
    fn write(&mut self, dir: &Path, step: u64, time: f64, s: &BodyState) -> Result<(), IoError>;
}

macro_rules! shape_frames {
    ($($t:ty),*) => {$(
        impl ShapeFrames for $t {
            fn write(&mut self, dir: &Path, step: u64, time: f64, s: &BodyState) -> Result<(), IoError> {
                <$t>::write(self, dir, step, time, s)
            }
        }
    )*};
}
shape_frames!(
    super::boundaries::BoundaryFrames,
    super::clumps::ClumpFrames,
    super::cylinders::CylinderFrames,
    super::hulls::HullFrames
);

/// The writers of the shape families `scene` has (bodies numbered from `first_body`);
/// `resume_at`: continue each `.pvd` up to the checkpoint's time.
pub fn shape_frames(
    scene: &Scene,
    first_body: usize,
    dir: &Path,
    resume_at: Option<f64>,
) -> Result<Vec<Box<dyn ShapeFrames>>, IoError> {
    let mut out: Vec<Box<dyn ShapeFrames>> = Vec::new();
    if let Some(w) = super::boundaries::BoundaryFrames::new(scene, dir, resume_at)? {
        out.push(Box::new(w));
    }
    if let Some(w) = super::clumps::ClumpFrames::new(scene, first_body, dir, resume_at)? {
        out.push(Box::new(w));
    }
    if let Some(w) = super::cylinders::CylinderFrames::new(scene, first_body, dir, resume_at)? {
        out.push(Box::new(w));
    }
    if let Some(w) = super::hulls::HullFrames::new(scene, first_body, dir, resume_at)? {
        out.push(Box::new(w));
    }
    Ok(out)
}
