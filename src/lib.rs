//! Bristlecone: a GPU many-body frictional contact engine.
//!
//! The compute runs as WGSL compute shaders through `wgpu`; the CPU builds the scene,
//! records command buffers and reads back results at output frames. Every GPU stage has a
//! plain f64 CPU twin in [`reference`] that tests compare against.

pub mod bench;
pub mod bodies;
pub mod clump;
pub mod collide;
pub mod convex;
pub mod gpu;
pub mod io;
pub mod joints;
pub mod limits;
pub mod measure;
pub mod patch;
pub mod plot;
pub mod realtime;
pub mod reference;
pub mod render;
pub mod run;
pub mod scene;
pub mod setup;
pub mod solve;
pub mod step;
