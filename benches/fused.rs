//! The one-workgroup solver (shaders/solve_fused.wgsl) against the multi-workgroup path on
//! the default scene at several sizes, in one process (issue #13, item 4): the two variants
//! advance in alternating batches of 30 steps, so a change of machine load hits both alike.
//! Per size: mean contacts, sweeps per step, wall ms per step of each path and their ratio,
//! and whether the two ended bit-identical (they must). The crossover sets
//! `solve::FUSED_MAX_DEFAULT`.
//!
//! `BRISTLECONE_FUSED_SCALES` (default `0.05,0.1,0.2,0.4,0.7`: 150–2100 beads) and
//! `BRISTLECONE_FUSED_STEPS` (default 300: the fall and the impact).

mod common;

use bristlecone::gpu::shared_context;
use bristlecone::scene;
use bristlecone::setup;
use bristlecone::step::Simulation;
use common::env;
use std::path::Path;
use std::time::Instant;

const BATCH: u32 = 30;

fn main() {
    let scales: String = env(
        "BRISTLECONE_FUSED_SCALES",
        "0.05,0.1,0.2,0.4,0.7".to_string(),
    );
    let steps: u32 = env("BRISTLECONE_FUSED_STEPS", 300);
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/scenes/default.toml");
    let text = std::fs::read_to_string(&path).expect("default scene");
    let ctx = shared_context();
    println!("adapter: {}", ctx.describe());
    println!(
        "{:>6} {:>8} {:>9} {:>11} {:>11} {:>11} {:>12}",
        "beads", "contacts", "sweeps", "fused ms", "multi ms", "multi/fused", "bit-identical"
    );
    for scale in scales.split(',').map(|s| s.parse::<f64>().expect("scale")) {
        let sc = scene::parse_str_scaled(&text, &path, scale).expect("default scene parses");
        let state = setup::build_bodies(&sc);
        let mut sims: Vec<Simulation> = [u32::MAX, 0]
            .iter()
            .map(|&max| {
                let mut s =
                    Simulation::new(ctx.clone(), &state, setup::step_settings(&sc)).expect("sim");
                s.set_fused_max(max);
                s
            })
            .collect();
        let mut wall = [0.0f64; 2];
        let (mut contacts, mut sweeps) = (0u64, 0u64);
        let mut done = 0;
        while done < steps {
            let n = BATCH.min(steps - done);
            for (k, sim) in sims.iter_mut().enumerate() {
                let t = Instant::now();
                let r = sim.advance(n, 1).expect("advance");
                wall[k] += t.elapsed().as_secs_f64();
                if k == 0 {
                    contacts += r.iter().map(|s| s.contacts as u64).sum::<u64>();
                    sweeps += r.iter().map(|s| s.iterations as u64).sum::<u64>();
                }
            }
            done += n;
        }
        let bits = |s: &Simulation| {
            let st = s.read_state().expect("state");
            st.pos
                .iter()
                .chain(&st.vel)
                .flatten()
                .map(|x| x.to_bits())
                .collect::<Vec<_>>()
        };
        let same = bits(&sims[0]) == bits(&sims[1]);
        let ms = |w: f64| w * 1e3 / steps as f64;
        println!(
            "{:>6} {:>8.0} {:>9.1} {:>11.2} {:>11.2} {:>11.2} {:>12}",
            state.len() - setup::boundary_count(&sc),
            contacts as f64 / steps as f64,
            sweeps as f64 / steps as f64,
            ms(wall[0]),
            ms(wall[1]),
            wall[1] / wall[0],
            same
        );
    }
}
