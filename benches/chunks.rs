//! What the chunked storage accessors cost (src/gpu/chunked.rs): the bench pile at
//! `BRISTLECONE_CHUNK_SIZE` grains (default 10⁵) stepped with the adapter's largest chunk
//! (every per-contact array within one binding: each accessor is one plain index) and with
//! 16 MiB chunks (records, `gam`, `nv` spread over several bindings: lavapipe runs all LIVE
//! arms of the selection), alternating twice in one process; ms per step by stage from GPU
//! timestamps. Issue #13's 10⁵ → 10⁶ growth: at 10⁶ the records span 4 chunks of 128 MiB.

mod common;

use bristlecone::bench::scenes::{BenchScene, SceneKind};
use bristlecone::bench::{bench_solver, run_one, BenchOptions};
use bristlecone::gpu::{BackendChoice, GpuContext};
use common::env;
use std::sync::Arc;

fn main() {
    let n: usize = env("BRISTLECONE_CHUNK_SIZE", 100_000);
    let scene = BenchScene::build(SceneKind::Pile, n);
    let opts = BenchOptions {
        steps: Some(2),
        warmup: 1,
        solvers: vec![bench_solver()],
        ..Default::default()
    };
    println!("pile of {n} grains, ms per step (GPU timestamps)");
    println!(
        "{:>14} {:>9} {:>9} {:>9} {:>10}",
        "chunk", "collide", "solve", "wall", "contacts"
    );
    for small in [false, true, false, true] {
        let mut ctx = GpuContext::new(BackendChoice::Auto).expect("adapter");
        if small {
            ctx.set_chunk_log2(24);
        }
        let label = format!("2^{} B", ctx.chunk_log2());
        let row =
            run_one(&Arc::new(ctx), &scene, &opts, &opts.solvers[0], 1.0).expect("bench pile");
        println!(
            "{label:>14} {:>9.1} {:>9.1} {:>9.1} {:>10.0}",
            row.stage_s[1] * 1e3,
            row.stage_s[2] * 1e3,
            row.wall_s_per_step * 1e3,
            row.contacts
        );
    }
}
