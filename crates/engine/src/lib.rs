//! The GPU engine of Bristlecone: the stages of a step as WGSL compute shaders run through
//! `wgpu` (collision, the CCP solver, joints, contact patches, integration), the
//! [`step::Simulation`] that records them. Below it, with no `wgpu`, sit the CPU
//! implementations, the crate `bristlecone-cpu` (re-exported as [`reference`](mod@reference),
//! [`shapes`], [`convex`], [`clump`]): a plain f64 twin of every stage that the tests compare
//! against, the exact CPU path, Lemke's algorithm and the LCP of a step, the shape families;
//! and the vocabulary both read, the crate `bristlecone-model`, re-exported as [`model`]: the
//! records and ids, the settings, the friction models and the row math in f64.
//!
//! The engine takes bodies ([`bodies::BodyState`]) and an engine configuration
//! ([`step::StepSettings`]); it never reads a scene file. The app crate `bristlecone` turns a
//! scene into both and runs the loop (outputs, checkpoints, the command line).

pub mod bodies;
pub mod collide;
pub mod gpu;
pub mod joints;
pub mod patch;
pub mod solve;
pub mod step;

/// The vocabulary crate under the path the engine's modules have always used for it.
pub use bristlecone_model as model;

/// The CPU implementations (crate `bristlecone-cpu`) under the paths the engine's modules have
/// always used for them: the twins and the exact path, the shape families, and the hull and
/// clump families under the short paths `convex` and `clump`.
pub use bristlecone_cpu::{clump, convex, reference, shapes};
