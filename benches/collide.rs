//! Collision detection alone (no solver) on a dense packing: a jittered simple-cubic lattice
//! of spheres at 0.998 diameter spacing, so each sphere overlaps its 6 face neighbours
//! slightly (3 contacts per sphere in the list, 6 per sphere in the CSR) and nothing else is
//! within the envelope. Reports time per detection, contacts/s, memory per contact and per
//! sphere, and the bandwidth of `shaders/copy.wgsl` on the same adapter in the same run.
//!
//! Then mixed sizes: the same lattice with 10 spheres of 10× the radius resting on it,
//! detected with the large grains kept apart (`collide::GridPlan`) and with one grid sized by
//! the largest grain (the baseline), beside the plain lattice, in one run.
//!
//! `cargo bench --bench collide` (sizes: BRISTLECONE_BENCH_SIZES=10000,100000,1000000;
//! mixed sizes: BRISTLECONE_BENCH_MIXED=10000,100000, the one-grid baseline up to 20000).

use bristlecone::bodies::{BodyInit, BodyState, GpuBodies};
use bristlecone::collide::{Collide, CollideSettings, BYTES_PER_CONTACT};
use bristlecone::gpu::GpuError;
use bristlecone::gpu::{buffers, shared_context, GpuContext, Kernel, ShaderSource};
use criterion::Criterion;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::time::{Duration, Instant};

fn lattice(n: usize, r: f32) -> BodyState {
    let side = (n as f64).cbrt().ceil() as usize;
    let a = 2.0 * r * 0.998;
    let mut rng = ChaCha8Rng::seed_from_u64(1);
    let mut s = BodyState::default();
    'outer: for k in 0..side {
        for j in 0..side {
            for i in 0..side {
                if s.len() == n {
                    break 'outer;
                }
                let jit = 2e-4 * r;
                let p = [i, j, k].map(|x| x as f32 * a + rng.random_range(-jit..jit));
                s.push(&BodyInit::sphere(p, r, 2500.0));
            }
        }
    }
    s
}

/// The lattice with `large` spheres of 10× the radius resting on its top, in a row.
fn lattice_with_boulders(n: usize, r: f32, large: usize) -> BodyState {
    let mut s = lattice(n, r);
    let top = s.pos.iter().map(|p| p[2]).fold(0.0f32, f32::max);
    let side = (n as f64).cbrt().ceil() as f32 * 2.0 * r;
    for k in 0..large {
        let x = side * (k as f32 + 0.5) / large as f32;
        let p = [x, 0.5 * side, top + r + 10.0 * r * 0.999];
        s.push(&BodyInit::sphere(p, 10.0 * r, 2500.0));
    }
    s
}

/// Median seconds per detection of `state` with large grains above `ratio` × the median
/// radius kept apart (infinite: one grid), and the contact count.
fn detect_time(
    ctx: &GpuContext,
    state: &BodyState,
    settings: &CollideSettings,
    ratio: f32,
) -> Result<(f64, u32), GpuError> {
    let bodies = GpuBodies::upload(ctx, state)?;
    let mut c = Collide::new(ctx, &bodies, state, &[], settings)?;
    c.set_large_ratio(ctx, state, ratio)?;
    let counts = c.detect(ctx)?;
    let run = || {
        let mut enc = ctx.device.create_command_encoder(&Default::default());
        c.record(&mut enc);
        ctx.queue.submit([enc.finish()]);
        wait(ctx);
    };
    Ok((median(5, run), counts.contacts))
}

fn mixed_sizes(ctx: &GpuContext, settings: &CollideSettings) {
    let sizes: Vec<usize> = std::env::var("BRISTLECONE_BENCH_MIXED")
        .ok()
        .map(|s| s.split(',').filter_map(|x| x.trim().parse().ok()).collect())
        .unwrap_or_else(|| vec![10_000, 100_000]);
    let ratio = bristlecone::collide::LARGE_RATIO;
    for n in sizes {
        let plain = detect_time(ctx, &lattice(n, 0.01), settings, ratio);
        let mixed = lattice_with_boulders(n, 0.01, 10);
        let split = detect_time(ctx, &mixed, settings, ratio);
        let one = (n <= 20_000).then(|| detect_time(ctx, &mixed, settings, f32::INFINITY));
        let (Ok(plain), Ok(split)) = (plain, split) else {
            eprintln!("mixed sizes, n = {n}: does not fit this adapter");
            continue;
        };
        eprint!(
            "mixed sizes, {n} spheres + 10 of 10× radius: large apart {:.2} ms ({} contacts) \
             = {:.2}× the plain lattice ({:.2} ms)",
            split.0 * 1e3,
            split.1,
            split.0 / plain.0,
            plain.0 * 1e3
        );
        match one {
            Some(Ok(one)) => eprintln!(
                "; one grid {:.2} ms ({} contacts) = {:.1}× large apart",
                one.0 * 1e3,
                one.1,
                one.0 / split.0
            ),
            _ => eprintln!(),
        }
    }
}

fn wait(ctx: &GpuContext) {
    ctx.wait();
}

/// Median seconds of `reps` runs of `f` (each submits and waits).
fn median(reps: usize, mut f: impl FnMut()) -> f64 {
    let mut t: Vec<f64> = (0..reps)
        .map(|_| {
            let t0 = Instant::now();
            f();
            t0.elapsed().as_secs_f64()
        })
        .collect();
    t.sort_by(f64::total_cmp);
    t[reps / 2]
}

fn copy_bandwidth(ctx: &GpuContext) -> f64 {
    let n: u32 = 1 << 22; // 64 MiB per buffer
    let k = Kernel::new(ctx, ShaderSource::by_name("copy").unwrap()).unwrap();
    let src = buffers::storage_zeroed(ctx, "src", n as u64 * 16).unwrap();
    let dst = buffers::storage_zeroed(ctx, "dst", n as u64 * 16).unwrap();
    let params = buffers::uniform_from(ctx, "copy params", &[n, 0, 0, 0]);
    let bg = k.bind(ctx, &[&params, &src, &dst]);
    let run = || {
        let mut enc = ctx.device.create_command_encoder(&Default::default());
        {
            let mut pass = enc.begin_compute_pass(&Default::default());
            k.dispatch(&mut pass, "copy", &bg, n);
        }
        ctx.queue.submit([enc.finish()]);
        wait(ctx);
    };
    run();
    let t = median(7, run);
    2.0 * n as f64 * 16.0 / t
}

fn main() {
    let ctx = shared_context();
    eprintln!("adapter: {}", ctx.describe());
    let sizes: Vec<usize> = std::env::var("BRISTLECONE_BENCH_SIZES")
        .ok()
        .map(|s| s.split(',').filter_map(|x| x.trim().parse().ok()).collect())
        .unwrap_or_else(|| vec![10_000, 100_000, 1_000_000]);
    let bw = copy_bandwidth(&ctx);
    eprintln!("copy kernel bandwidth: {:.2} GB/s (read + write)", bw / 1e9);
    let settings = CollideSettings {
        envelope: 0.001,
        friction: vec![0.5],
    };
    let mut crit = Criterion::default()
        .sample_size(10)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(3))
        .configure_from_args();
    let mut summary = Vec::new();
    for &n in &sizes {
        let state = lattice(n, 0.01);
        let bodies = match GpuBodies::upload(&ctx, &state) {
            Ok(b) => b,
            Err(e) => {
                eprintln!("n = {n}: does not fit this adapter: {e}");
                continue;
            }
        };
        let mut c = match Collide::new(&ctx, &bodies, &state, &[], &settings) {
            Ok(c) => c,
            Err(e) => {
                eprintln!("n = {n}: does not fit this adapter: {e}");
                continue;
            }
        };
        let counts = match c.detect(&ctx) {
            Ok(k) => k,
            Err(e) => {
                eprintln!("n = {n}: the contact list does not fit this adapter: {e}");
                continue;
            }
        };
        let run = || {
            let mut enc = ctx.device.create_command_encoder(&Default::default());
            c.record(&mut enc);
            ctx.queue.submit([enc.finish()]);
            wait(&ctx);
        };
        crit.bench_function(&format!("collide/detect/{n}"), |b| b.iter(run));
        let t = median(if n >= 1_000_000 { 3 } else { 7 }, run);
        let (fixed, per_contact) = c.memory_bytes();
        let m = counts.contacts as f64;
        eprintln!(
            "n = {n}: {} contacts ({:.2} per sphere), {:.2} ms per detection, {:.3e} contacts/s, \
             memory {:.1} B/sphere fixed + {} B/contact (capacity {} = {:.1} MB)",
            counts.contacts,
            m / n as f64,
            t * 1e3,
            m / t,
            fixed as f64 / n as f64,
            BYTES_PER_CONTACT,
            c.capacity(),
            per_contact as f64 / 1e6,
        );
        // Traffic estimate relative to the copy kernel: the bytes the stage must at least
        // touch (positions read ~4x, sorted copies, counts, the records and CSR written).
        let bytes = n as f64 * (16.0 * 4.0 + 16.0 * 2.0 + 4.0 * 8.0) + m * (64.0 + 16.0);
        eprintln!(
            "    effective bandwidth {:.2} GB/s = {:.1}% of copy",
            bytes / t / 1e9,
            100.0 * bytes / t / bw
        );
        summary.push((n, t));
    }
    let find = |n| summary.iter().find(|s| s.0 == n).map(|s| s.1);
    if let (Some(a), Some(b)) = (find(100_000), find(1_000_000)) {
        eprintln!("t(1e6) / t(1e5) = {:.2}", b / a);
    } else if let (Some(a), Some(b)) = (find(10_000), find(100_000)) {
        eprintln!("t(1e6) unavailable; t(1e5) / t(1e4) = {:.2}", b / a);
    }
    mixed_sizes(&ctx, &settings);
    crit.final_summary();
}
