//! Gauss–Seidel against APGD on a small pile with rolling resistance, in one process: the
//! default scene's grains (`BRISTLECONE_GS_ROLLING_SCALE`, default 0.1: 300 beads) with
//! μ_r = `BRISTLECONE_GS_ROLLING_MU_R` (default 0.1) on glass, falling into the bin and
//! settling for `BRISTLECONE_GS_ROLLING_STEPS` (default 600) steps, solved by `apgd` and by
//! `gauss_seidel` (ω = 1) with the scene's cap and tolerance. The two advance in
//! alternating batches of 30 steps, so a change of machine load hits both alike.
//!
//! Reports per solver: mean sweeps per step, steps at the sweep cap, the worst penetration,
//! the kinetic energy over the last 100 steps (the pile at rest or not), and the wall time
//! (stepping only) with its ratio to APGD's.

mod common;

use bristlecone::gpu::shared_context;
use bristlecone::scene;
use bristlecone::setup;
use bristlecone::solve::SolverKind;
use bristlecone::step::{Simulation, StepRecord};
use common::env;
use std::path::Path;
use std::time::Instant;

const BATCH: u32 = 30;

fn main() {
    let scale: f64 = env("BRISTLECONE_GS_ROLLING_SCALE", 0.1);
    let steps: u64 = env("BRISTLECONE_GS_ROLLING_STEPS", 600);
    let mu_r: f64 = env("BRISTLECONE_GS_ROLLING_MU_R", 0.1);
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/scenes/default.toml");
    let text = std::fs::read_to_string(&path).expect("default scene");
    let glass = "name = \"glass\"\ndensity = 2500.0\nfriction = 0.4\n";
    assert!(text.contains(glass), "the default scene's glass material");
    let text = text.replace(glass, &format!("{glass}rolling_friction = {mu_r}\n"));
    let sc = scene::parse_str_scaled(&text, &path, scale).expect("scene parses");
    let ctx = shared_context();
    println!("adapter: {}", ctx.describe());
    let state = setup::build_bodies(&sc);
    let grains = state.len() - setup::boundary_count(&sc);
    println!("{grains} grains, μ_r = {mu_r}, {steps} steps, batches of {BATCH} alternating");
    let mut runs: Vec<(SolverKind, Simulation, Vec<StepRecord>, f64)> =
        [SolverKind::Apgd, SolverKind::GaussSeidel]
            .into_iter()
            .map(|kind| {
                let mut st = setup::step_settings(&sc);
                let s = &mut st.contact.as_mut().expect("contacts").solver;
                s.kind = kind;
                if kind == SolverKind::GaussSeidel {
                    s.omega = 1.0;
                }
                let sim = Simulation::new(ctx.clone(), &state, st).expect("simulation");
                (kind, sim, Vec::new(), 0.0)
            })
            .collect();
    let cap = setup::step_settings(&sc)
        .contact
        .expect("contacts")
        .solver
        .max_iterations;
    let mut done = 0;
    while done < steps {
        let n = BATCH.min((steps - done) as u32);
        for (_, sim, records, wall) in &mut runs {
            let t = Instant::now();
            records.extend(sim.advance(n, 1).expect("advance"));
            *wall += t.elapsed().as_secs_f64();
        }
        done += n as u64;
    }
    println!(
        "\n{:<13} {:>12} {:>11} {:>10} {:>10} {:>8} {:>7}",
        "solver", "sweeps/step", "capped", "max pen m", "KE J", "wall s", "÷ apgd"
    );
    let apgd_wall = runs[0].3;
    for (kind, _, records, wall) in &runs {
        let k = records.len() as f64;
        let sweeps = records.iter().map(|r| r.iterations as f64).sum::<f64>() / k;
        let capped = records.iter().filter(|r| r.iterations >= cap).count();
        let pen = records
            .iter()
            .map(|r| r.max_penetration)
            .fold(0.0, f64::max);
        let tail = &records[records.len().saturating_sub(100)..];
        let ke = tail.iter().map(|r| r.totals.kinetic_energy).sum::<f64>() / tail.len() as f64;
        println!(
            "{:<13} {sweeps:>12.1} {:>11} {pen:>10.2e} {ke:>10.2e} {wall:>8.1} {:>7.2}",
            format!("{kind:?}"),
            format!("{capped}/{}", records.len()),
            wall / apgd_wall
        );
    }
}
