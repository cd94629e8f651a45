//! The whole test suite as one test binary: one link instead of one per file, and the test
//! harness spreads every file's tests over the cores together (`cargo test --test suite
//! physics::` runs one file's tests). Each file below is a module named after it.

mod common;

mod batches;
mod broad_phase;
mod capsule;
mod chunked;
mod clumps;
mod cohesion;
mod collide;
mod column;
mod contact_models;
mod convex;
mod cylinder;
mod cylinder_pairs;
mod cylinder_patch;
mod depth;
mod device_loss;
mod docs;
mod field_sweep;
mod flow;
mod friction_registry;
mod fused;
mod fuzz;
mod integrate;
mod io;
mod joints;
mod lemke;
mod lemke_joints;
mod limits;
mod measure;
mod module_graph;
mod newuser;
mod output;
mod patch;
mod patch_coupling;
mod periodic;
mod physics;
mod plot;
mod polytope;
mod render;
mod restart;
mod rolling;
mod run;
mod run_safety;
mod scene;
mod scenes;
mod shaders;
mod shape_registry;
mod shapes;
mod solve;
mod sweeps;
