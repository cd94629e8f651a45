//! Output: per-frame VTK files with a ParaView time-series index, per-step statistics CSV,
//! and binary checkpoints the engine restarts from bit-identically.
//!
//! Every file is written through [`write_atomic`], so a killed run leaves either the previous
//! version of a file or the new one, never a torn one.

pub mod atomic;
pub mod boundaries;
pub mod checkpoint;
pub mod clumps;
pub mod contact_forces;
pub mod cylinders;
mod error;
pub mod hulls;
pub mod pvd;
pub mod shapes;
pub mod stats;
pub mod vtk;

/// Input files are read with a size cap by [`crate::input`] (its old path).
pub use crate::input as capped;
pub use atomic::write_atomic;
pub use checkpoint::{
    hash_bytes, read_checkpoint, write_checkpoint, Checkpoint, CHECKPOINT_MAGIC,
    CHECKPOINT_VERSION, SUPPORTED_CHECKPOINT_VERSIONS,
};
pub use error::IoError;
pub use pvd::Collection;
pub use stats::{read_stats, StatsRow, StatsWriter, STATS_HEADER};
pub use vtk::{
    write_boxes, write_contacts, write_joints, write_particles, BoxFrame, ContactFrame, JointFrame,
    ParticleFrame,
};
pub use vtk::{write_capsules, write_particles_with_tensors, CapsuleFrame};
