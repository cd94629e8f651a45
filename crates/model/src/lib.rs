//! Bristlecone's vocabulary: what the scene loader, the CPU implementations (`bristlecone-cpu`)
//! and the GPU engine (`bristlecone-engine`) all speak.
//!
//! - the contact and friction models a material selects and their parameters ([`friction`]),
//!   the row math those models share between the WGSL kernels and the f64 twins ([`rows`],
//!   [`elasto_plastic`]), and the solver's defaults ([`defaults`]);
//! - the bodies in their GPU layout with the motion and shape ids ([`body`]), the contact
//!   record, shape table and collision settings ([`contact`]), the periodic cell
//!   ([`periodic`]), the joints and their row blocks ([`joint`]), and the solver's settings
//!   ([`solver`]);
//! - what is wrong with a key a friction model or a shape family reads ([`keys`]).
//!
//! It sits below every other crate and names none of them, nor `wgpu`; its only dependencies
//! are `glam` (the f64 vectors of a joint's anchors and frames, and of the periodic cell's
//! images) and `bytemuck` (the records that go to the GPU as they are), so a CPU-only user
//! builds it without a GPU stack (`tests/module_graph.rs` checks the manifest and the code).

pub mod body;
pub mod contact;
pub mod defaults;
pub mod elasto_plastic;
pub mod friction;
pub mod joint;
pub mod keys;
pub mod periodic;
pub mod restitution;
pub mod rows;
pub mod solver;
