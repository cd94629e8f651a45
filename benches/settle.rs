//! The default scene end to end, the classic stabilisation against the shipped one, in one
//! process: `classic` = no slop, β = 1, tolerance 1e-5 m/s (the solver settings before the
//! slop); `shipped` = `assets/scenes/default.toml` as it is (slop 1e-4 × r_min, β = 1, its
//! tolerance); `tol T` = shipped with tolerance T, one per value of
//! `BRISTLECONE_SETTLE_TOLERANCES` (comma-separated m/s; none by default;
//! `BRISTLECONE_SETTLE_NO_CLASSIC=1` leaves classic out). The simulations advance in
//! alternating batches of 30 steps (the scene's frame interval), so a change of machine load
//! hits all alike.
//!
//! Per phase (fall, impact, settling, settled): sweeps per step, wall ms per step and the
//! worst penetration; at the end: kinetic energy over the last 100 steps and the load
//! balance (vertical force of the grains on the bin ÷ their weight). Wall times exclude
//! frames and statistics files (the `run` command's own cost).
//!
//! `BRISTLECONE_SETTLE_SCALE` (default 0.3: 900 grains) and `BRISTLECONE_SETTLE_STEPS`
//! (default 800) shrink the run; 1 and 1500 are the default scene itself.

mod common;

use bristlecone::gpu::shared_context;
use bristlecone::run::contact_forces;
use bristlecone::scene;
use bristlecone::setup;
use bristlecone::step::{Simulation, StepRecord};
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
    /// Wall seconds per step (each step of a batch gets the batch's mean).
    wall: Vec<f64>,
}

fn main() {
    let scale: f64 = env("BRISTLECONE_SETTLE_SCALE", 0.3);
    let steps: u64 = env("BRISTLECONE_SETTLE_STEPS", 800);
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/scenes/default.toml");
    let text = std::fs::read_to_string(&path).expect("default scene");
    let sc = scene::parse_str_scaled(&text, &path, scale).expect("default scene parses");
    let ctx = shared_context();
    println!("adapter: {}", ctx.describe());
    let state = setup::build_bodies(&sc);
    let shipped = setup::step_settings(&sc);
    let mut classic = shipped.clone();
    {
        let s = &mut classic.contact.as_mut().unwrap().solver;
        s.slop = 0.0;
        s.stabilisation = 1.0;
        s.tolerance = 1e-5;
    }
    // Tolerance variants of the shipped settings (`BRISTLECONE_SETTLE_TOLERANCES`, m/s).
    let mut variants = vec![
        ("classic".to_string(), classic),
        ("shipped".to_string(), shipped.clone()),
    ];
    for t in env::<String>("BRISTLECONE_SETTLE_TOLERANCES", String::new())
        .split(',')
        .filter(|t| !t.trim().is_empty())
    {
        let tol: f32 = t
            .trim()
            .parse()
            .expect("BRISTLECONE_SETTLE_TOLERANCES: numbers");
        let mut v = shipped.clone();
        v.contact.as_mut().unwrap().solver.tolerance = tol;
        variants.push((format!("tol {tol:.1e}"), v));
    }
    if env::<String>("BRISTLECONE_SETTLE_NO_CLASSIC", String::new()) == "1" {
        variants.remove(0);
    }
    let mut vs: Vec<Variant> = variants
        .into_iter()
        .map(|(name, st)| {
            let s = &st.contact.as_ref().unwrap().solver;
            println!(
                "{name}: slop {:.1e} m, stabilisation {}, tolerance {:.1e} m/s, cap {}",
                s.slop, s.stabilisation, s.tolerance, s.max_iterations
            );
            Variant {
                name,
                sim: Simulation::new(ctx.clone(), &state, st).expect("simulation"),
                records: Vec::new(),
                wall: Vec::new(),
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
            let t = Instant::now();
            let r = v.sim.advance(n, 1).expect("advance");
            let per = t.elapsed().as_secs_f64() / n as f64;
            v.wall.extend(std::iter::repeat_n(per, n as usize));
            v.records.extend(r);
        }
        done += n as u64;
    }
    report(&sc, &mut vs, steps);
}

fn report(sc: &scene::Scene, vs: &mut [Variant], steps: u64) {
    println!(
        "\n{:<9} {:<9} {:>7} {:>9} {:>10}",
        "variant", "phase", "sweeps", "ms/step", "max pen m"
    );
    for v in vs.iter() {
        for (phase, lo, hi) in PHASES {
            let idx: Vec<usize> = (0..v.records.len())
                .filter(|&k| v.records[k].step > lo && v.records[k].step <= hi)
                .collect();
            if idx.is_empty() {
                continue;
            }
            let k = idx.len() as f64;
            let sweeps = idx
                .iter()
                .map(|&i| v.records[i].iterations as f64)
                .sum::<f64>()
                / k;
            let ms = idx.iter().map(|&i| v.wall[i]).sum::<f64>() / k * 1e3;
            let pen = idx
                .iter()
                .map(|&i| v.records[i].max_penetration)
                .fold(0.0, f64::max);
            println!(
                "{:<9} {:<9} {sweeps:>7.1} {ms:>9.1} {pen:>10.2e}",
                v.name, phase
            );
        }
    }
    let nb = setup::boundary_count(sc);
    println!(
        "\n{:<9} {:>8} {:>12} {:>10} {:>9} {:>8} {:>8}",
        "variant", "wall s", "sweeps/step", "max pen m", "KE J", "load", "redos"
    );
    let mut wall = Vec::new();
    for v in vs.iter_mut() {
        let tail = v.records.len().saturating_sub(100);
        let ke = v.records[tail..]
            .iter()
            .map(|r| r.totals.kinetic_energy)
            .sum::<f64>()
            / (v.records.len() - tail).max(1) as f64;
        let state = v.sim.read_state().expect("state");
        let (contacts, impulses) = v.sim.read_contacts().expect("contacts");
        let forces = contact_forces(&state, &contacts, &impulses, sc.sim.dt);
        let fz: f64 = (0..nb as u32)
            .map(|b| bristlecone::measure::boundary_wrench(&forces, b, [0.0; 3]).0[2])
            .sum();
        let g = -sc.sim.gravity[2];
        let weight: f64 = (nb..state.len())
            .map(|b| g / state.mass_props[b][3] as f64)
            .sum();
        let sweeps = v.records.iter().map(|r| r.iterations as f64).sum::<f64>() / steps as f64;
        let pen = v
            .records
            .iter()
            .map(|r| r.max_penetration)
            .fold(0.0, f64::max);
        let w: f64 = v.wall.iter().sum();
        wall.push(w);
        println!(
            "{:<9} {w:>8.1} {sweeps:>12.1} {pen:>10.2e} {ke:>9.2e} {:>8.4} {:>8}",
            v.name,
            -fz / weight,
            v.sim.batched.budget_redos
        );
    }
    let shipped = vs.iter().position(|v| v.name == "shipped").unwrap_or(0);
    for (v, w) in vs.iter().zip(&wall) {
        println!(
            "{} takes {:.2}× the wall time of shipped (same process)",
            v.name,
            w / wall[shipped]
        );
    }
}
