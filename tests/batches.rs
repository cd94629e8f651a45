//! How `Simulation::advance` batches its steps (src/step/mod.rs): submissions of at most
//! `MAX_BATCH` steps, contact buffers sized by a detection before the first step and grown
//! ahead of a rising contact count (the rule: `step::contacts_ahead`, unit-tested there).
//! None of it may change a result; each must avoid the redone batches it exists for.

use crate::common::assert_same_bodies;
use bristlecone::bench::bench_solver;
use bristlecone::bench::scenes::{BenchScene, SceneKind};
use bristlecone::gpu::shared_context;
use bristlecone::setup;
use bristlecone::step::{Simulation, StepRecord, MAX_BATCH};
use std::path::Path;

fn small_pour(count: u32) -> Simulation {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/scenes/small_pour.toml");
    let text = std::fs::read_to_string(&path)
        .unwrap()
        .replace("count = 400", &format!("count = {count}"));
    let scene = bristlecone::scene::parse_str(&text, &path).unwrap();
    Simulation::new(
        shared_context(),
        &setup::build_bodies(&scene),
        setup::step_settings(&scene),
    )
    .unwrap()
}

fn key(r: &StepRecord) -> (u64, u32, u32, u32) {
    (
        r.step,
        r.contacts,
        r.iterations,
        r.residual.to_bits() as u32,
    )
}

/// One call of 75 steps (3 submissions) against 15 calls of 5: the same bodies bit for
/// bit, and the statistics of steps 10, 20, …, 70 and of the last step 75, no others.
#[test]
fn batching_never_changes_a_result_or_the_steps_reported() {
    const { assert!(75 > 2 * MAX_BATCH, "the long call must span 3 submissions") };
    let mut a = small_pour(400);
    let long = a.advance(75, 10).unwrap();
    let mut b = small_pour(400);
    let mut short = Vec::new();
    for _ in 0..15 {
        short.extend(b.advance(5, 1).unwrap());
    }
    let steps: Vec<u64> = long.iter().map(|r| r.step).collect();
    assert_eq!(steps, vec![10, 20, 30, 40, 50, 60, 70, 75]);
    let same: Vec<_> = short
        .iter()
        .filter(|r| steps.contains(&r.step))
        .map(key)
        .collect();
    assert_eq!(long.iter().map(key).collect::<Vec<_>>(), same);
    assert!(long.iter().any(|r| r.contacts > 0), "nothing touched");
    assert_same_bodies(&a, &b);
}

/// An FCC pile holds ~5.7 contacts per grain, past the first estimate of 4: sized by a
/// detection on the initial state, its first batch runs once.
#[test]
fn a_packed_start_is_sized_before_its_first_step() {
    let scene = BenchScene::build(SceneKind::Pile, 2000);
    let mut sim = Simulation::new(
        shared_context(),
        &scene.body_state(),
        scene.step_settings(bench_solver()),
    )
    .unwrap();
    let recs = sim.advance(20, 1).unwrap();
    let contacts = recs[0].contacts;
    assert!(
        contacts > 4 * 2000 + 1024,
        "{contacts} contacts fit the first estimate: the test checks nothing"
    );
    assert_eq!(sim.regrowths, 0, "the first batch was redone");
    assert!(sim.contact_capacity() >= contacts);
}
