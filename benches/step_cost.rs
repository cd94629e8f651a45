//! Where a step of the default scene spends its time, and what the solver's pipeline
//! specialisation saves, in one process: `generic` = the solver pipelines with
//! the joint, compliance-model and model-state code compiled in (as before the
//! specialisation), `special` = the pipelines a Coulomb sphere scene gets. The variants
//! advance in alternating batches of 30 steps, so a change of machine load hits both alike.
//!
//! Per phase (fall, impact, settling, settled): sweeps per step, sweeps recorded (the
//! adaptive budget), wall ms per step, and the GPU time per stage from timestamp queries
//! (free velocity, collision, solve, integration + statistics), the solve's ms per recorded
//! sweep, and the worst penetration. At the end: wall time, kinetic energy over the last 100
//! steps, and the results' bitwise equality (specialisation must not change a bit).
//!
//! `BRISTLECONE_STEP_SCALE` (default 0.3: 900 grains), `BRISTLECONE_STEP_STEPS` (default
//! 600) and `BRISTLECONE_STEP_VARIANTS` (default `generic,special`; also `whole`: the special
//! pipelines recording the whole sweep cap in every solve, `counted`: APGD's step with the
//! count-scaled η it took before the plain diagonal, `cap=N`, `tol=X`).
//! `BRISTLECONE_STEP_DUMP=FILE` writes the first variant's timed steps as CSV (step, sweeps,
//! sweeps recorded, solve and collision ms from the timestamps), for fits of a solve's cost
//! against its sweeps.

mod common;

use bristlecone::gpu::shared_context;
use bristlecone::scene;
use bristlecone::setup;
use bristlecone::step::{BenchKnobs, Simulation, StepRecord};
use common::env;
use std::path::Path;
use std::time::Instant;

const BATCH: u32 = 30;
const PHASES: [(&str, u64, u64); 4] = [
    ("fall", 0, 100),
    ("impact", 100, 300),
    ("settling", 300, 500),
    ("settled", 500, u64::MAX),
];

struct Variant {
    name: String,
    sim: Simulation,
    records: Vec<StepRecord>,
    /// Per step: wall seconds (the batch's mean), sweeps recorded, GPU stage seconds (None
    /// for steps without timestamps).
    wall: Vec<f64>,
    budget: Vec<u32>,
    stages: Vec<Option<[f64; 4]>>,
    /// The sweep cap (a batch redone for its budget records it).
    cap: u32,
}

fn main() {
    let scale: f64 = env("BRISTLECONE_STEP_SCALE", 0.3);
    let steps: u64 = env("BRISTLECONE_STEP_STEPS", 600);
    let names: String = env("BRISTLECONE_STEP_VARIANTS", "generic,special".to_string());
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/scenes/default.toml");
    let text = std::fs::read_to_string(&path).expect("default scene");
    let sc = scene::parse_str_scaled(&text, &path, scale).expect("default scene parses");
    let ctx = shared_context();
    println!("adapter: {}", ctx.describe());
    let state = setup::build_bodies(&sc);
    let mut vs: Vec<Variant> = names
        .split(',')
        .map(|name| {
            let mut st = setup::step_settings(&sc);
            let solver = &mut st.contact.as_mut().expect("contacts").solver;
            // `cap=N` and `tol=X`: the scene's solver with another sweep cap or tolerance.
            let generic = match name.split_once('=') {
                Some(("cap", n)) => {
                    solver.max_iterations = n.parse().expect("cap=N");
                    false
                }
                Some(("tol", x)) => {
                    solver.tolerance = x.parse().expect("tol=X");
                    false
                }
                None if name == "generic" => true,
                None if name == "special" || name == "whole" || name == "counted" => false,
                _ => panic!(
                    "unknown variant {name} (generic, special, whole, counted, cap=N, tol=X)"
                ),
            };
            let cap = solver.max_iterations;
            let mut sim = Simulation::new(ctx.clone(), &state, st).expect("simulation");
            sim.set_generic_solver(generic);
            // `counted`: APGD's step with the count-scaled η (before the plain diagonal).
            sim.set_counted_step(name == "counted");
            // `whole`: every solve records the whole sweep cap (no adaptive budget).
            sim.batched.adaptive_sweeps = name != "whole";
            let timed = sim.set_stage_timing(true);
            println!("{name}: timestamps {timed}");
            Variant {
                name: name.to_string(),
                sim,
                records: Vec::new(),
                wall: Vec::new(),
                budget: Vec::new(),
                stages: Vec::new(),
                cap,
            }
        })
        .collect();
    println!(
        "{} grains, {steps} steps (scale {scale}), batches of {BATCH} alternating",
        state.len() - setup::boundary_count(&sc)
    );
    let mut done = 0;
    while done < steps {
        let n = BATCH.min((steps - done) as u32);
        for v in &mut vs {
            let budget = v.sim.sweep_budget().unwrap_or(0);
            let redos = v.sim.batched.budget_redos;
            let t = Instant::now();
            let r = v.sim.advance(n, 1).expect("advance");
            let per = t.elapsed().as_secs_f64() / n as f64;
            let timed = v.sim.stage_times();
            for k in 0..n as usize {
                v.stages.push(timed.get(k).map(|s| s.seconds));
            }
            v.wall.extend(std::iter::repeat_n(per, n as usize));
            // A batch redone (with the whole cap) recorded both budgets' sweeps.
            let budget = budget
                + if v.sim.batched.budget_redos > redos {
                    v.cap
                } else {
                    0
                };
            v.budget.extend(std::iter::repeat_n(budget, n as usize));
            v.records.extend(r);
        }
        done += n as u64;
        if done == 300 || done == steps {
            profile(&mut vs[0], done);
        }
    }
    report(&vs, steps);
    if let Ok(path) = std::env::var("BRISTLECONE_STEP_DUMP") {
        dump(&vs[0], &path);
    }
}

/// Per timed step of `v`: step, sweeps, sweeps recorded, solve ms, collision ms (CSV).
fn dump(v: &Variant, path: &str) {
    let mut out = String::from("step,sweeps,budget,solve_ms,collide_ms\n");
    for (k, r) in v.records.iter().enumerate() {
        if let Some(t) = v.stages[k] {
            let (solve, collide) = (t[2] * 1e3, t[1] * 1e3);
            let (step, sweeps, budget) = (r.step, r.iterations, v.budget[k]);
            out += &format!("{step},{sweeps},{budget},{solve},{collide}\n");
        }
    }
    std::fs::write(path, out).expect("writing the step dump");
}

/// The sweep kernels one by one on the current state (first variant): ms per dispatch from
/// `REPEATS` dispatches after a solve's set-up, minus the set-up alone (best of 3 each).
fn profile(v: &mut Variant, step: u64) {
    const REPEATS: u32 = 40;
    let best = |v: &mut Variant, k: &str, r: u32| {
        (0..3)
            .map(|_| v.sim.time_solver_kernel(k, r).expect("profile"))
            .fold(f64::MAX, f64::min)
    };
    let base = best(v, "apgd_step", 0);
    let contacts = v.records.last().map_or(0, |r| r.contacts);
    print!(
        "profile ({}) at step {step}, {contacts} contacts: set-up {:.2} ms;",
        v.name,
        base * 1e3
    );
    let mut sum = 0.0;
    for k in ["apgd_step", "gather_trial", "product_trial", "reduce_apgd"] {
        let t = (best(v, k, REPEATS) - base) / REPEATS as f64 * 1e3;
        sum += t;
        print!(" {k} {t:.3}");
    }
    println!(" ms per dispatch; sweep {sum:.3} ms");
    print!("  set-up kernels:");
    let mut sum = 0.0;
    for k in [
        "assemble",
        "gather_gamma",
        "product_init",
        "reduce_init",
        "gather_gamma_minus_one",
        "product_lip",
        "reduce_lip",
        "painleve",
    ] {
        let t = (best(v, k, REPEATS) - base) / REPEATS as f64 * 1e3;
        sum += t;
        print!(" {k} {t:.3}");
    }
    println!(" ms per dispatch; sum {sum:.3} ms");
}

fn mean(xs: impl Iterator<Item = f64>) -> f64 {
    let (s, n) = xs.fold((0.0, 0usize), |(s, n), x| (s + x, n + 1));
    s / n.max(1) as f64
}

fn report(vs: &[Variant], steps: u64) {
    println!(
        "\n{:<8} {:<9} {:>7} {:>7} {:>8} | {:>7} {:>8} {:>8} {:>7} | {:>9} {:>9}",
        "variant",
        "phase",
        "sweeps",
        "budget",
        "wall ms",
        "free_v",
        "collide",
        "solve",
        "integr",
        "ms/sweep",
        "max pen"
    );
    for v in vs {
        for (phase, lo, hi) in PHASES {
            let idx: Vec<usize> = (0..v.records.len())
                .filter(|&k| v.records[k].step > lo && v.records[k].step <= hi)
                .collect();
            if idx.is_empty() {
                continue;
            }
            let sweeps = mean(idx.iter().map(|&i| v.records[i].iterations as f64));
            let budget = mean(idx.iter().map(|&i| v.budget[i] as f64));
            let wall = mean(idx.iter().map(|&i| v.wall[i])) * 1e3;
            let timed: Vec<[f64; 4]> = idx.iter().filter_map(|&i| v.stages[i]).collect();
            let st: Vec<f64> = (0..4)
                .map(|s| mean(timed.iter().map(|t| t[s])) * 1e3)
                .collect();
            let pen = idx
                .iter()
                .map(|&i| v.records[i].max_penetration)
                .fold(0.0, f64::max);
            println!(
                "{:<8} {:<9} {sweeps:>7.1} {budget:>7.1} {wall:>8.1} | {:>7.2} {:>8.2} {:>8.2} {:>7.2} | {:>9.3} {pen:>9.2e}",
                v.name,
                phase,
                st[0],
                st[1],
                st[2],
                st[3],
                st[2] / budget.max(1.0),
            );
        }
    }
    println!(
        "\n{:<8} {:>8} {:>12} {:>10} {:>9} {:>6}",
        "variant", "wall s", "sweeps/step", "max pen m", "KE J", "redos"
    );
    let mut wall = Vec::new();
    for v in vs {
        let tail = v.records.len().saturating_sub(100);
        let ke = mean(v.records[tail..].iter().map(|r| r.totals.kinetic_energy));
        let sweeps = v.records.iter().map(|r| r.iterations as f64).sum::<f64>() / steps as f64;
        let pen = v
            .records
            .iter()
            .map(|r| r.max_penetration)
            .fold(0.0, f64::max);
        let w: f64 = v.wall.iter().sum();
        wall.push(w);
        println!(
            "{:<8} {w:>8.1} {sweeps:>12.1} {pen:>10.2e} {ke:>9.2e} {:>6}",
            v.name, v.sim.batched.budget_redos
        );
    }
    if vs.len() == 2 {
        let a = vs[0].sim.read_state().expect("state");
        let b = vs[1].sim.read_state().expect("state");
        let same = a.pos == b.pos && a.vel == b.vel && a.omega == b.omega;
        println!(
            "\n{} is {:.2}× faster than {} (wall, same process); final states bit-identical: {same}",
            vs[1].name,
            wall[0] / wall[1],
            vs[0].name
        );
    }
}
