//! Plain CPU (f64) twins of the GPU stages: the oracles the tests compare against.

pub mod avbd;
pub mod block_gs;
pub mod boxes;
pub mod capsule;
pub mod clumps;
pub mod collide;
pub mod convex;
pub mod cylinder;
pub mod depth;
pub mod gauss_seidel;
pub mod integrate;
pub mod joints;
pub mod lcp;
pub mod lemke;
pub mod multilevel;
pub mod oracle;
pub mod patch_collide;
pub mod periodic;
pub mod polytope;
pub mod solve;
pub mod support;

/// The contact frame's tangent basis is defined with the contact records
/// (`crate::model::contact`), which the joint rows read too.
pub use crate::model::contact::tangent_basis;
