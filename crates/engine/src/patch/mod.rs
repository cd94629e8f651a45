//! Planar LuGre friction on contact patches (Arslan Waltersson & Karayiannidis) on the GPU:
//! the cell grids, the distributed and reduced models as kernels, and the stage of a step.
//!
//! The models' parameters and conventions (frame, twist, wrench), the CPU models and the rows
//! a patch couples to the solver are the CPU crate's (`bristlecone_cpu::patch`), re-exported
//! here whole so that both sides read one definition.

pub use bristlecone_cpu::patch::*;

pub mod cells;
pub mod gpu;
pub mod stage;

pub use gpu::{DistributedGpu, ReducedGpu};
