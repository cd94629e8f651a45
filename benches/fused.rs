//! The one-workgroup solver (shaders/solve_fused.wgsl) against the multi-workgroup path on
//! the default scene at several sizes, in one process: the two variants
//! advance in alternating batches of 30 steps, so a change of machine load hits both alike.
//! Per size: mean contacts, sweeps per step, wall ms per step of each path and their ratio,
//! and whether the two ended bit-identical (they must). The crossover sets
//! `solve::FUSED_MAX_DEFAULT`.
//!
//! `BRISTLECONE_FUSED_SCALES` (default `0.05,0.1,0.2,0.4,0.7`: 150–2100 beads),
//! `BRISTLECONE_FUSED_STEPS` (default 240: the fall and the impact) and
//! `BRISTLECONE_FUSED_PLOT` (default `target/fused_bench.png`: ms per step against contacts).

mod common;

use bristlecone::gpu::{shared_context, GpuContext};
use bristlecone::plot::{plot_lines, LinePanel};
use bristlecone::scene;
use bristlecone::setup;
use bristlecone::step::Simulation;
use common::env;
use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

const BATCH: u32 = 30;

/// One size: mean contacts and sweeps per step, ms per step fused and not, same bits.
struct Row {
    beads: usize,
    contacts: f64,
    sweeps: f64,
    ms: [f64; 2],
    same: bool,
}

fn main() {
    let scales: String = env(
        "BRISTLECONE_FUSED_SCALES",
        "0.05,0.1,0.2,0.4,0.7".to_string(),
    );
    let steps: u32 = env("BRISTLECONE_FUSED_STEPS", 240);
    let plot: String = env(
        "BRISTLECONE_FUSED_PLOT",
        "target/fused_bench.png".to_string(),
    );
    let ctx = shared_context();
    println!("adapter: {}", ctx.describe());
    println!(
        "{:>6} {:>8} {:>9} {:>11} {:>11} {:>11} {:>12}",
        "beads", "contacts", "sweeps", "fused ms", "multi ms", "multi/fused", "bit-identical"
    );
    let mut rows = Vec::new();
    for scale in scales.split(',').map(|s| s.parse::<f64>().expect("scale")) {
        let r = measure(&ctx, scale, steps);
        println!(
            "{:>6} {:>8.0} {:>9.1} {:>11.2} {:>11.2} {:>11.2} {:>12}",
            r.beads,
            r.contacts,
            r.sweeps,
            r.ms[0],
            r.ms[1],
            r.ms[1] / r.ms[0],
            r.same
        );
        rows.push(r);
    }
    draw(&rows, &plot);
}

/// The default scene at `scale`, `steps` steps with every solve fused and with none.
fn measure(ctx: &Arc<GpuContext>, scale: f64, steps: u32) -> Row {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/scenes/default.toml");
    let text = std::fs::read_to_string(&path).expect("default scene");
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
        let v = st.pos.iter().chain(&st.vel).flatten();
        v.map(|x| x.to_bits()).collect::<Vec<_>>()
    };
    Row {
        beads: state.len() - setup::boundary_count(&sc),
        contacts: contacts as f64 / steps as f64,
        sweeps: sweeps as f64 / steps as f64,
        ms: wall.map(|w| w * 1e3 / steps as f64),
        same: bits(&sims[0]) == bits(&sims[1]),
    }
}

/// ms per step of both paths against the mean contact count, as a PNG at `path`.
fn draw(rows: &[Row], path: &str) {
    let line = |k: usize| rows.iter().map(|r| (r.contacts, r.ms[k])).collect();
    let panel = LinePanel {
        title: "default scene, fall and impact: solver in one workgroup vs 4 dispatches a sweep"
            .into(),
        x_label: "contacts (mean over the run)".into(),
        y_label: "ms per step".into(),
        series: vec![
            ("one workgroup (solve_fused)".into(), line(0)),
            ("4 dispatches per sweep".into(), line(1)),
        ],
    };
    match plot_lines(Path::new(path), vec![panel]) {
        Ok(true) => println!("plot: {path}"),
        Ok(false) => println!("plot: nothing to draw"),
        Err(e) => println!("plot: {e}"),
    }
}
