//! Bristlecone: a GPU many-body frictional contact engine.
//!
//! The compute runs as WGSL compute shaders through `wgpu` in the engine crate
//! (`crates/engine`, re-exported here under [`gpu`], [`step`], [`solve`], …); this crate
//! reads the scene, turns it into the engine's bodies and settings ([`setup`]), runs the
//! loop and writes the outputs. Every GPU stage has a plain f64 CPU twin in
//! [`reference`](mod@reference) that tests compare against.
//!
//! The manual is the book in `docs/` (`mdbook build docs`); the scene format is in its
//! "Scene reference" page and in [`scene`].
//!
//! # Example
//!
//! A steel ball dropped on a plane, stepped from Rust: a scene parsed from TOML text, its
//! bodies built ([`setup`]: boundaries first, then the bodies), and a [`step::Simulation`]
//! advanced on the GPU adapter (lavapipe on a machine without a GPU).
//!
//! ```
//! use std::path::Path;
//! use bristlecone::{gpu::shared_context, scene, setup, step::Simulation};
//!
//! let text = r#"
//! [simulation]
//! dt = 1e-3
//! steps = 200
//! [[material]]
//! name = "steel"
//! density = 7800.0
//! friction = 0.3
//! [[body]]
//! radius = 0.01
//! position = [0.0, 0.0, 0.015]
//! [[boundary]]
//! kind = "plane"
//! point = [0.0, 0.0, 0.0]
//! normal = [0.0, 0.0, 1.0]
//! "#;
//! let scene = scene::parse_str(text, Path::new("ball.toml"))?;
//! let state = setup::build_bodies(&scene);
//! let mut sim = Simulation::new(shared_context(), &state, setup::step_settings(&scene))?;
//! let records = sim.advance(200, 1)?; // 200 steps, statistics of every step
//! assert_eq!(records.len(), 200);
//! let ball = sim.read_state()?.pos[setup::boundary_count(&scene)];
//! // Fallen 5 mm and at rest on the plane: its centre one radius above it.
//! assert!((ball[2] - 0.01).abs() < 1e-4, "z = {}", ball[2]);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

pub mod bench;
pub mod facade;
pub mod io;
pub mod limits;
pub mod measure;
pub mod plot;
pub mod realtime;
pub mod render;
pub mod run;
pub mod setup;

// The engine crate's modules, under the paths they had before the workspace split.
pub use bristlecone_engine::{
    bodies, clump, collide, convex, gpu, joints, model, reference, shapes, solve, step,
};

/// Contact patches: the engine's patch models and stage, and the patch command's file
/// format (`bristlecone patch`).
pub mod patch {
    pub use bristlecone_engine::patch::*;
    pub mod file;
}

/// Scene files (TOML → a validated `Scene`) and the size-capped reading of input files.
pub use bristlecone_scene::{self as scene, input};

pub use facade::Simulation;
