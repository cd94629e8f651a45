//! The engine's vocabulary: the contact and friction models a material selects and their
//! parameters ([`friction`]), the row math those models share between the WGSL kernels and the
//! f64 twins ([`rows`], [`elasto_plastic`]), and the solver's defaults ([`defaults`]).
//!
//! It sits below every other module: the GPU stages (`solve`, `patch`, `step`) and the CPU
//! implementations (`reference`) all read it, and it reads none of them and never names
//! `wgpu` (`tests/module_graph.rs` checks both), so that it can become a crate of its own
//! that a CPU-only user builds without a GPU stack.

pub mod defaults;
pub mod elasto_plastic;
pub mod friction;
pub mod rows;
