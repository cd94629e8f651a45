//! Planar LuGre patch throughput (Arslan Waltersson & Karayiannidis): cell-updates/s of the distributed model and
//! patch-steps/s of the reduced model at 10³, 10⁴ and 10⁵ patches of 21 × 21 cells on the
//! GPU, beside the f64 CPU twins on one thread, in one run on one adapter. The paper's
//! single-thread C++ figures: 1.1·10⁴ steps/s of a 21 × 21 patch (≈ 4.9·10⁶ cell-updates/s)
//! and 8.6·10⁵ steps/s of the reduced model.

use bristlecone::gpu::shared_context;
use bristlecone::patch::cpu::{self, Patch, ReducedPatch};
use bristlecone::patch::limit::build_many;
use bristlecone::patch::{
    DistributedCpu, DistributedGpu, Integrator, LugreParams, Outline, PatchShape, Pressure,
    ReducedCpu, ReducedGpu, Twist,
};
use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use std::time::{Duration, Instant};

const PAPER_CELLS: f64 = 4.9e6;
const PAPER_REDUCED: f64 = 8.6e5;

fn disc() -> Patch {
    let shape = PatchShape::new(
        &Pressure::Uniform(Outline::Circle { radius: 0.01 }),
        21,
        21,
        None,
        1.0,
    )
    .unwrap();
    Patch { shape, f_n: 1.0 }
}

fn twists(n: usize) -> Vec<Twist> {
    (0..n)
        .map(|k| Twist::new(1e-3 * (k % 7) as f64, -1e-3, 0.05 * (k % 5) as f64 - 0.1))
        .collect()
}

fn best_of(reps: usize, mut f: impl FnMut()) -> f64 {
    (0..reps)
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed().as_secs_f64()
        })
        .fold(f64::MAX, f64::min)
}

fn bench(c: &mut Criterion) {
    let ctx = shared_context();
    eprintln!("adapter: {}", ctx.describe());
    let params = LugreParams::default();
    let p = disc();
    let cells = p.shape.weights.len() as f64; // 441 (the zero-weight corners are updated too)
    let unit = LugreParams {
        mu_c: 1.0,
        mu_s: 1.0,
        sigma2: 0.0,
        ..params
    };
    let ls = build_many(std::slice::from_ref(&p.shape), 20, |jobs| {
        jobs.iter()
            .map(|(_, t)| cpu::steady(&unit, &p, *t))
            .collect()
    })
    .remove(0);
    let rp = ReducedPatch {
        ls,
        f_n: 1.0,
        ellipsoid: false,
    };
    let mut rows = Vec::new();

    // CPU twins, one thread, f64.
    let mut dc = DistributedCpu::new(params, vec![p.clone(); 10]);
    let tw = twists(10);
    for int in [Integrator::Explicit, Integrator::Implicit] {
        let t = best_of(3, || {
            for _ in 0..20 {
                dc.step(&tw, 1e-5, int);
            }
        });
        rows.push((
            format!("distributed cpu f64 1 thread {int:?}"),
            10,
            200.0 * cells / t,
            PAPER_CELLS,
        ));
    }
    let mut rc = ReducedCpu::new(params, vec![rp.clone(); 1000]);
    let tw = twists(1000);
    let t = best_of(3, || {
        for _ in 0..20 {
            rc.step(&tw, 1e-5, Integrator::Explicit);
        }
    });
    rows.push((
        "reduced cpu f64 1 thread".into(),
        1000,
        20_000.0 / t,
        PAPER_REDUCED,
    ));

    for n in [1_000usize, 10_000, 100_000] {
        // 10⁵ patches (4.4·10⁷ cells a step) only enter the summary: criterion's ten
        // samples would take minutes on a CPU adapter.
        let steps = (10_000 / n).max(1);
        let with_criterion = n <= 10_000;
        let patches = vec![p.clone(); n];
        match DistributedGpu::new(&ctx, params, &patches) {
            Err(e) => eprintln!("distributed, {n} patches: skipped ({e})"),
            Ok(g) => {
                g.set_twists(&ctx, &twists(n));
                for int in [Integrator::Explicit, Integrator::Implicit] {
                    if with_criterion {
                        let mut grp = c.benchmark_group(format!("patch_distributed_{n}_{int:?}"));
                        grp.sample_size(10)
                            .measurement_time(Duration::from_secs(2))
                            .warm_up_time(Duration::from_millis(300));
                        grp.throughput(Throughput::Elements((n * steps) as u64 * cells as u64));
                        grp.bench_function("step", |b| {
                            b.iter(|| {
                                g.run(&ctx, steps, 1e-5, int);
                                ctx.wait();
                            })
                        });
                        grp.finish();
                    }
                    let t = best_of(2, || {
                        g.run(&ctx, steps, 1e-5, int);
                        ctx.wait();
                    });
                    rows.push((
                        format!("distributed gpu {int:?}"),
                        n,
                        (n * steps) as f64 * cells / t,
                        PAPER_CELLS,
                    ));
                }
            }
        }
        let rps = vec![rp.clone(); n];
        let g = ReducedGpu::new(&ctx, params, &rps).unwrap();
        g.set_twists(&ctx, &twists(n));
        if with_criterion {
            let mut grp = c.benchmark_group(format!("patch_reduced_{n}"));
            grp.sample_size(10)
                .measurement_time(Duration::from_secs(2))
                .warm_up_time(Duration::from_millis(300));
            grp.throughput(Throughput::Elements((n * steps) as u64));
            grp.bench_function("step", |b| {
                b.iter(|| {
                    g.run(&ctx, steps, 1e-5, Integrator::Explicit);
                    ctx.wait();
                })
            });
            grp.finish();
        }
        let t = best_of(3, || {
            g.run(&ctx, 10, 1e-5, Integrator::Explicit);
            ctx.wait();
        });
        rows.push(("reduced gpu".into(), n, (n * 10) as f64 / t, PAPER_REDUCED));
    }

    println!(
        "\nplanar LuGre patches (21 x 21 cells) on {}",
        ctx.describe()
    );
    println!(
        "{:<40} {:>8} {:>14} {:>10}",
        "model", "patches", "rate [1/s]", "/ paper"
    );
    for (name, n, rate, paper) in rows {
        let unit = if name.starts_with("reduced") {
            "patch-steps"
        } else {
            "cell-updates"
        };
        println!(
            "{name:<40} {n:>8} {rate:>14.3e} {:>10.1}   ({unit})",
            rate / paper
        );
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
