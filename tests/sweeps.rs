//! The solver's sweep budget (`Simulation::adapt_sweep_budget`): recording fewer sweeps than
//! the cap saves dispatches but must never change a result. A pour (impacts that need the
//! whole cap, then quieter steps) stepped with the adaptive budget and with the whole cap
//! recorded every step ends bit-identical, and the adaptive run really recorded fewer sweeps.

use bristlecone::gpu::shared_context;
use bristlecone::run::load_scene;
use bristlecone::setup;
use bristlecone::step::Simulation;
use std::path::Path;

fn pour(adaptive: bool) -> (Simulation, Vec<u32>, Vec<u32>) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/scenes/small_pour.toml");
    let (scene, _) = load_scene(&path).unwrap();
    let mut sim = Simulation::new(
        shared_context(),
        &setup::build_bodies(&scene),
        setup::step_settings(&scene),
    )
    .unwrap();
    sim.adaptive_sweeps = adaptive;
    // The budget is what this test checks: the multi-workgroup path (solve_fused loops to
    // convergence and records no budget).
    sim.set_fused_max(0);
    let (mut budgets, mut iterations) = (Vec::new(), Vec::new());
    for _ in 0..12 {
        budgets.push(sim.sweep_budget().unwrap());
        iterations.extend(sim.advance(10, 1).unwrap().iter().map(|r| r.iterations));
    }
    (sim, budgets, iterations)
}

#[test]
fn the_adaptive_sweep_budget_never_changes_a_result() {
    let (a, budgets, it_a) = pour(true);
    let (b, full, it_b) = pour(false);
    let cap = full[0];
    assert!(
        full.iter().all(|&s| s == cap),
        "fixed budget moved: {full:?}"
    );
    assert_eq!(it_a, it_b, "sweeps per step differ");
    // The budget followed the steps: below the cap in some batch (so the test exercises the
    // shortened recording), and whenever a step needed the cap the batch was redone.
    assert!(
        budgets.iter().any(|&s| s < cap),
        "budget never below the cap {cap}: {budgets:?} (sweeps {it_a:?})"
    );
    assert!(it_a.iter().any(|&i| i > 0), "no step solved anything");
    let (sa, sb) = (a.read_state().unwrap(), b.read_state().unwrap());
    let bits = |v: &Vec<[f32; 4]>| v.iter().flatten().map(|x| x.to_bits()).collect::<Vec<_>>();
    assert_eq!(bits(&sa.pos), bits(&sb.pos), "positions differ");
    assert_eq!(bits(&sa.vel), bits(&sb.vel), "velocities differ");
    assert_eq!(
        bits(&sa.omega),
        bits(&sb.omega),
        "angular velocities differ"
    );
    eprintln!(
        "budgets {budgets:?}, redone batches {}, sweeps per step {it_a:?}",
        a.budget_redos
    );
}
