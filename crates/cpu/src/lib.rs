//! Bristlecone's CPU implementations, in f64 and with no GPU stack: the plain twin of every GPU
//! stage that the tests compare against, with the exact CPU path, Lemke's algorithm and the LCP
//! of a step ([`reference`](mod@reference)); the grain shape families — support functions, bounding radii,
//! mass properties, surfaces — with the hull and clump builders ([`shapes`], also as
//! [`convex`] and [`clump`]); the mesh boundaries' topology ([`mesh`]); the broad phase's
//! plan ([`grid`]); and the contact patches' models and rows ([`patch`]).
//!
//! It reads the vocabulary, the crate `bristlecone-model`, re-exported as [`model`]; the GPU
//! engine (`bristlecone-engine`) sits above it and re-exports each module under its old path.

pub mod grid;
pub mod mesh;
pub mod patch;
pub mod reference;
pub mod shapes;

/// The vocabulary crate under the path the CPU code has always used for it.
pub use bristlecone_model as model;

/// The hull and clump families, also under the short paths `convex` and `clump`.
pub use shapes::{clump, convex};
