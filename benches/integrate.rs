//! Integration kernel throughput at 10⁴, 10⁵, 10⁶ bodies, against the same adapter's copy
//! bandwidth measured in the same run. Prints bodies/s, effective bandwidth and the ratio.
//!
//! Bytes per body and step: free_velocity reads 7 vec4 and writes 2, update_positions reads
//! 5 and writes 2 — 16 vec4 = 256 B.

use bristlecone::bodies::{BodyInit, BodyState};
use bristlecone::gpu::{bandwidth, shared_context};
use bristlecone::step::{Simulation, StepSettings};
use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use std::time::Duration;

const BYTES_PER_BODY_STEP: u64 = 256;
const STEPS_PER_SAMPLE: u32 = 20;

fn lattice(n: usize) -> BodyState {
    let side = (n as f64).cbrt().ceil() as usize;
    let inits: Vec<BodyInit> = (0..n)
        .map(|i| {
            let (x, y, z) = (i % side, (i / side) % side, i / (side * side));
            BodyInit::sphere(
                [x as f32 * 0.03, y as f32 * 0.03, z as f32 * 0.03],
                0.01,
                2500.0,
            )
        })
        .collect();
    BodyState::from_inits(&inits)
}

fn bench(c: &mut Criterion) {
    let ctx = shared_context();
    eprintln!("adapter: {}", ctx.describe());
    let mut summary = Vec::new();
    for n in [10_000u32, 100_000, 1_000_000] {
        let mut sim = Simulation::new(
            ctx.clone(),
            &lattice(n as usize),
            StepSettings {
                dt: 1e-4,
                gravity: [0.0, 0.0, -9.81],
                contact: None,
            },
        )
        .unwrap();
        let copy = bandwidth::CopyKernel::new(&ctx, n * 8).unwrap(); // same bytes as one step
        let mut g = c.benchmark_group(format!("integrate_{n}"));
        g.sample_size(10)
            .measurement_time(Duration::from_secs(3))
            .warm_up_time(Duration::from_millis(500));
        g.throughput(Throughput::Bytes(
            BYTES_PER_BODY_STEP * n as u64 * STEPS_PER_SAMPLE as u64,
        ));
        g.bench_function("integrate", |b| {
            b.iter(|| sim.advance(STEPS_PER_SAMPLE, u64::MAX).unwrap())
        });
        g.bench_function("copy", |b| {
            b.iter_custom(|iters| {
                Duration::from_secs_f64((0..iters).map(|_| copy.time(&ctx, STEPS_PER_SAMPLE)).sum())
            })
        });
        g.finish();
        // Direct ratio from one back-to-back measurement, for the summary.
        let t_int = (0..3)
            .map(|_| {
                let t = std::time::Instant::now();
                sim.advance(STEPS_PER_SAMPLE, u64::MAX).unwrap();
                t.elapsed().as_secs_f64()
            })
            .fold(f64::MAX, f64::min);
        let t_copy = (0..3)
            .map(|_| copy.time(&ctx, STEPS_PER_SAMPLE))
            .fold(f64::MAX, f64::min);
        let bw_int = (BYTES_PER_BODY_STEP * n as u64 * STEPS_PER_SAMPLE as u64) as f64 / t_int;
        let bw_copy = copy.bytes() as f64 * STEPS_PER_SAMPLE as f64 / t_copy;
        summary.push((
            n,
            n as f64 * STEPS_PER_SAMPLE as f64 / t_int,
            bw_int,
            bw_copy,
        ));
    }
    println!("\nbodies     bodies·steps/s   integrate GB/s   copy GB/s   ratio");
    for (n, rate, bi, bc) in summary {
        println!(
            "{n:>9}  {rate:>14.3e}   {:>13.2}   {:>9.2}   {:.2}",
            bi / 1e9,
            bc / 1e9,
            bi / bc
        );
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
