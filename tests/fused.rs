//! The one-workgroup solver (shaders/solve_fused.wgsl) against the
//! multi-workgroup path: the same scene stepped with every solve fused and with none must
//! end bit-identical — positions, velocities, sweeps and residuals of every step — since a
//! simulation switches between the two paths by problem size from batch to batch. Covered:
//! APGD on the default scene at 300 beads (several blocks of contacts, impacts at the cap,
//! backtracking, early exits), Jacobi on a small pour,
//! joints (pendulum chain), a compliance model with rolling and spinning rows, a solve of
//! 1500 sweeps and a body with a 1200-contact row (both split over dispatches on a CPU
//! adapter).

use crate::common::assert_same_bodies;
use bristlecone::gpu::shared_context;
use bristlecone::scene;
use bristlecone::setup;
use bristlecone::step::{Simulation, StepRecord};
use std::path::Path;

fn scene_text(rel: &str) -> String {
    std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join(rel)).unwrap()
}

/// Steps `text` (generated grain counts × `scale`) for `batches` × `per` steps with every
/// solve fused (`fused`) or none.
fn run(
    text: &str,
    scale: f64,
    fused: bool,
    batches: u32,
    per: u32,
) -> (Simulation, Vec<StepRecord>) {
    let path = Path::new("fused_test.toml");
    let scene = scene::parse_str_scaled(text, path, scale).unwrap();
    let mut sim = Simulation::new(
        shared_context(),
        &setup::build_bodies(&scene),
        setup::step_settings(&scene),
    )
    .unwrap();
    sim.set_fused_max(if fused { u32::MAX } else { 0 });
    let mut records = Vec::new();
    for _ in 0..batches {
        records.extend(sim.advance(per, 1).unwrap());
    }
    (sim, records)
}

/// Runs both paths and requires the same bits; returns the fused run's records.
fn same_both_ways(text: &str, scale: f64, batches: u32, per: u32) -> Vec<StepRecord> {
    let (a, ra) = run(text, scale, true, batches, per);
    let (b, rb) = run(text, scale, false, batches, per);
    assert_eq!(
        a.batched.fused_batches, batches as u64,
        "fused run did not fuse"
    );
    assert_eq!(b.batched.fused_batches, 0, "multi-workgroup run fused");
    let sweeps = |r: &[StepRecord]| r.iter().map(|s| s.iterations).collect::<Vec<_>>();
    assert_eq!(sweeps(&ra), sweeps(&rb), "sweeps per step differ");
    let res = |r: &[StepRecord]| r.iter().map(|s| s.residual.to_bits()).collect::<Vec<_>>();
    assert_eq!(res(&ra), res(&rb), "residuals differ");
    assert_same_bodies(&a, &b);
    assert!(ra.iter().any(|s| s.iterations > 1), "nothing was solved");
    ra
}

fn pour(kind: &str) -> String {
    let text = scene_text("tests/fixtures/scenes/small_pour.toml");
    text.replace(
        "[[material]]",
        &format!("[solver]\nkind = \"{kind}\"\nmax_iterations = 60\n\n[[material]]"),
    )
}

#[test]
fn apgd_pour_is_the_same_fused_or_not() {
    // The default scene at 300 beads: more than one block of WG contacts
    // (partial sums over blocks), the impact at the cap, backtracking, early exits.
    let text = scene_text("assets/scenes/default.toml");
    let r = same_both_ways(&text, 0.1, 5, 30);
    assert!(r.iter().any(|s| s.iterations >= 40), "no long solve");
    assert!(r.iter().any(|s| s.iterations < 100), "no early exit");
    let peak = r.iter().map(|s| s.contacts).max().unwrap();
    assert!(peak > 256, "one block of contacts only: {peak}");
}

#[test]
fn jacobi_pour_is_the_same_fused_or_not() {
    same_both_ways(&pour("jacobi"), 1.0, 3, 25);
}

#[test]
fn joints_are_the_same_fused_or_not() {
    let text = scene_text("assets/scenes/pendulum_chain.toml");
    same_both_ways(&text, 1.0, 2, 20);
}

#[test]
fn models_and_rolling_rows_are_the_same_fused_or_not() {
    let text = pour("apgd").replace(
        "friction = 0.5",
        "friction = 0.5\nrolling_friction = 0.05\nspinning_friction = 0.02\n\
         model = { kind = \"compliant\", stiffness = 2e4, damping = 5.0 }",
    );
    same_both_ways(&text, 1.0, 3, 25);
}

/// A solve that runs to a cap of 1500 sweeps in one workgroup: on lavapipe, where an
/// invocation's loops end after 65 535 iterations in all, one dispatch stopped this one at
/// 1149 sweeps (of 3000), silently; the sweeps are now split over dispatches
/// (`Solve::loop_budget`) and end where the multi-workgroup path ends.
#[test]
fn a_long_solve_runs_to_its_cap_fused() {
    let text = scene_text("assets/scenes/pendulum_chain.toml").replace(
        "max_iterations = 200\ntolerance = 1e-5",
        "max_iterations = 1500\ntolerance = 1e-14",
    );
    let r = same_both_ways(&text, 1.0, 1, 15);
    assert_eq!(r.last().unwrap().iterations, 1500, "{:?}", r.last());
}

/// One body with 1200 contacts in a one-workgroup solve: a slab resting on 300 fixed posts
/// (4 contacts each). The lane that gathers the slab's row runs 1200 loop iterations a
/// sweep, so on lavapipe (65 535 loop iterations per invocation in all) a dispatch may take
/// only ~50 sweeps; a sweep count sized for rows of ~50 contacts cut the row short, silently.
#[test]
fn a_body_with_a_long_row_is_the_same_fused_or_not() {
    let mut text = String::from(
        "[simulation]\nname = \"slab\"\ndt = 1e-3\nduration = 0.01\n\n\
         [solver]\nmax_iterations = 400\ntolerance = 1e-14\n\n\
         [[material]]\nname = \"m\"\ndensity = 2000.0\nfriction = 0.5\n\n\
         [[body]]\nshape = \"box\"\nhalf_extents = [0.22, 0.165, 0.02]\n\
         position = [0.209, 0.154, 0.06005]\nmaterial = \"m\"\n",
    );
    for k in 0..300 {
        let (x, y) = ((k % 20) as f64 * 0.022, (k / 20) as f64 * 0.022);
        text += &format!(
            "\n[[body]]\nshape = \"box\"\nmotion = \"fixed\"\nhalf_extents = [0.01, 0.01, 0.02]\n\
             position = [{x:.4}, {y:.4}, 0.02]\nmaterial = \"m\"\n"
        );
    }
    let r = same_both_ways(&text, 1.0, 1, 4);
    let last = r.last().unwrap();
    assert_eq!(last.contacts, 1200, "{last:?}");
    assert!(last.iterations > 200, "{last:?}");
}
