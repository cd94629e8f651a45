//! The solver's sweep budget (`Simulation::adapt_sweep_budget`): recording fewer sweeps than
//! the cap saves dispatches but must never change a result. A pour (impacts that need the
//! whole cap, then quieter steps) stepped with the adaptive budget and with the whole cap
//! recorded every step ends bit-identical, and the adaptive run really recorded fewer sweeps
//! — both when a step past its budget finishes in one workgroup (solve_tail, the default)
//! and when its batch is redone with the full cap.

use crate::common::assert_same_bodies;
use bristlecone::gpu::shared_context;
use bristlecone::run::load_scene;
use bristlecone::setup;
use bristlecone::step::Simulation;
use std::path::Path;

struct Pour {
    sim: Simulation,
    budgets: Vec<u32>,
    iterations: Vec<u32>,
}

fn pour(adaptive: bool, tail: bool) -> Pour {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/scenes/small_pour.toml");
    let (scene, _) = load_scene(&path).unwrap();
    let mut sim = Simulation::new(
        shared_context(),
        &setup::build_bodies(&scene),
        setup::step_settings(&scene),
    )
    .unwrap();
    sim.batched.adaptive_sweeps = adaptive;
    // The budget is what this test checks: the multi-workgroup path (solve_fused loops to
    // convergence and records no budget).
    sim.set_fused_max(0);
    sim.set_sweep_tail(tail);
    let (mut budgets, mut iterations) = (Vec::new(), Vec::new());
    for _ in 0..12 {
        budgets.push(sim.sweep_budget().unwrap());
        iterations.extend(sim.advance(10, 1).unwrap().iter().map(|r| r.iterations));
    }
    Pour {
        sim,
        budgets,
        iterations,
    }
}

/// The adaptive run (tail on or off) against the whole cap recorded every step.
fn adaptive_equals_full(tail: bool) -> Pour {
    let a = pour(true, tail);
    let b = pour(false, false);
    let cap = b.budgets[0];
    assert!(
        b.budgets.iter().all(|&s| s == cap),
        "fixed budget moved: {:?}",
        b.budgets
    );
    assert_eq!(a.iterations, b.iterations, "sweeps per step differ");
    // The budget followed the steps: below the cap in some batch, so the test exercises the
    // shortened recording.
    assert!(
        a.budgets.iter().any(|&s| s < cap),
        "budget never below the cap {cap}: {:?} (sweeps {:?})",
        a.budgets,
        a.iterations
    );
    assert!(
        a.iterations.iter().any(|&i| i > 0),
        "no step solved anything"
    );
    assert_same_bodies(&a.sim, &b.sim);
    eprintln!(
        "tail {tail}: budgets {:?}, redone batches {}, sweeps per step {:?}",
        a.budgets, a.sim.batched.budget_redos, a.iterations
    );
    a
}

#[test]
fn the_adaptive_sweep_budget_never_changes_a_result() {
    adaptive_equals_full(false);
}

#[test]
fn sweeps_past_the_budget_finish_in_one_workgroup_with_the_same_result() {
    let a = adaptive_equals_full(true);
    assert_eq!(
        a.sim.batched.budget_redos, 0,
        "a batch was redone with the tail on"
    );
    // Some step needed more sweeps than its batch recorded: solve_tail took them.
    let over = a
        .iterations
        .chunks(10)
        .zip(&a.budgets)
        .any(|(steps, &b)| steps.iter().any(|&i| i > b));
    assert!(
        over,
        "no step past its budget: {:?} {:?}",
        a.budgets, a.iterations
    );
}
