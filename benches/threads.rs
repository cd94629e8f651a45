//! The software adapter's thread count (Mesa's `LP_NUM_THREADS`, read when a Vulkan instance
//! is created): the default scene stepped on one `GpuContext` per count, in one process,
//! alternating batches of 30 steps (so the shared machine's drift hits every count alike;
//! between processes this machine's wall time spread by up to 30 %), with every step's
//! iterations, residual and kinetic energy compared bit for bit across counts. Prints wall
//! seconds per 300 steps and in total. On a GPU the variable is ignored.
//!
//! `BRISTLECONE_THREADS` (default `C,2C` for C cores), `BRISTLECONE_THREADS_SCALE` (default
//! 1: 3000 grains) and `BRISTLECONE_THREADS_STEPS` (default 1500).

mod common;

use bristlecone::gpu::{BackendChoice, GpuContext};
use bristlecone::step::Simulation;
use bristlecone::{scene, setup};
use common::env;
use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

const BATCH: u32 = 30;
const REPORT: u64 = 300;

fn main() {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let counts: String = env("BRISTLECONE_THREADS", format!("{cores},{}", 2 * cores));
    let scale: f64 = env("BRISTLECONE_THREADS_SCALE", 1.0);
    let steps: u64 = env("BRISTLECONE_THREADS_STEPS", 1500);
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/scenes/default.toml");
    let text = std::fs::read_to_string(&path).expect("default scene");
    let sc = scene::parse_str_scaled(&text, &path, scale).expect("default scene parses");
    let state = setup::build_bodies(&sc);
    let mut sims: Vec<(String, Simulation, f64, f64)> = counts
        .split(',')
        .map(|n| {
            // Before the context's instance exists; nothing else runs in this process.
            std::env::set_var("LP_NUM_THREADS", n.trim());
            let ctx = GpuContext::new(BackendChoice::Auto).expect("adapter");
            println!("{}", ctx.describe());
            let sim = Simulation::new(Arc::new(ctx), &state, setup::step_settings(&sc))
                .expect("simulation");
            (format!("{} threads", n.trim()), sim, 0.0, 0.0)
        })
        .collect();
    println!(
        "{} grains, {steps} steps, batches of {BATCH} alternating",
        state.len() - setup::boundary_count(&sc)
    );
    let mut done = 0;
    while done < steps {
        let n = BATCH.min((steps - done) as u32);
        let mut first: Option<Vec<(u32, u64, u64)>> = None;
        for (name, sim, part, total) in &mut sims {
            let t = Instant::now();
            let recs = sim.advance(n, 1).expect("advance");
            let w = t.elapsed().as_secs_f64();
            *part += w;
            *total += w;
            let key: Vec<(u32, u64, u64)> = recs
                .iter()
                .map(|r| {
                    (
                        r.iterations,
                        r.residual.to_bits(),
                        r.totals.kinetic_energy.to_bits(),
                    )
                })
                .collect();
            match &first {
                None => first = Some(key),
                Some(k) => assert!(
                    *k == key,
                    "{name}: steps {done}.. differ from the first count"
                ),
            }
        }
        done += n as u64;
        if done % REPORT == 0 || done == steps {
            let parts: Vec<String> = sims
                .iter_mut()
                .map(|(name, _, part, _)| format!("{name} {:.1} s", std::mem::take(part)))
                .collect();
            println!("steps ..{done}: {}", parts.join(", "));
        }
    }
    let totals: Vec<String> = sims
        .iter()
        .map(|(name, _, _, total)| format!("{name} {total:.1} s"))
        .collect();
    println!("total: {} (results bit-identical)", totals.join(", "));
}
