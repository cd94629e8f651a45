//! CCP solver benchmark on a settled pile: the FCC lattice pile of `bristlecone bench`
//! (spheres of r = 5 mm resting in a walled box, 12 neighbours each, ≈ 6.5 contacts per
//! sphere), every grain preloaded by one step of gravity (v* = −g dt).
//!
//! Reports, for 10⁴ and 10⁵ spheres: sweeps (= matrix-free products) for APGD and projected
//! Jacobi to reach residuals of 1e-2, 1e-3 and 1e-4 relative to ‖p‖ (the headline ratio; a
//! sweep cap is stated where Jacobi does not get there), time per sweep, effective bandwidth
//! of the matrix-free product relative to the `copy` kernel measured in the same run, and warm
//! start on vs off (a perturbed copy of the same contact set solved cold and warm-started).
//! Criterion times one 20-sweep solve at 10⁴ spheres.
//!
//! `BRISTLECONE_BENCH_MAX=10000` skips the 10⁵ case (≈ 15 minutes on lavapipe).

use bristlecone::bench::scenes::{BenchScene, SceneKind};
use bristlecone::bodies::{BodyState, GpuBodies};
use bristlecone::gpu::{buffers, shared_context, GpuContext, Kernel, ShaderSource};
use bristlecone::model::rows::{material_row, MaterialRow};
use bristlecone::reference::collide::detect;
use bristlecone::reference::integrate::to_f64;
use bristlecone::reference::solve as cpu;
use bristlecone::scene::FrictionModel;
use bristlecone::solve::{
    build_csr, counts_words, Cone, Contact, Solve, SolveInputs, SolverKind, SolverSettings,
};
use criterion::Criterion;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::time::Instant;

const DT: f32 = 1e-3;

struct Pile {
    state: BodyState,
    contacts: Vec<Contact>,
    /// Walls come first among the bodies.
    walls: usize,
}

/// The settled pile of `bristlecone bench` (`bench::scenes`, kind pile): an FCC lattice
/// resting on a floor inside four walls, about as tall as wide, every grain with 4 contacts
/// below, 4 above and 4 in-plane (so its weight spreads sideways into the walls, as in a real
/// pile). One step into its life: every grain carries the free velocity v* = −g dt, and the
/// contacts are those of the CPU collision twin (identical to the GPU's, `tests/collide.rs`).
fn pile(n: usize) -> Pile {
    let sc = BenchScene::build(SceneKind::Pile, n);
    let mut state = sc.body_state();
    let walls = sc.walls.len();
    for v in state.vel.iter_mut().skip(walls) {
        v[2] = -9.81 * DT;
    }
    let setup = sc
        .step_settings(SolverSettings::default())
        .contact
        .expect("the bench scene has contacts");
    let contacts = detect(&state, &setup.shapes, &setup.collide)
        .iter()
        .map(Contact::from)
        .collect();
    Pile {
        state,
        contacts,
        walls,
    }
}

struct Rig {
    bodies: GpuBodies,
    /// The pile's state with every free velocity perturbed by ±5 % of g dt (a "next step").
    perturbed: BodyState,
    contacts: wgpu::Buffer,
    counts: wgpu::Buffer,
    offsets: wgpu::Buffer,
    entries: wgpu::Buffer,
    stats: wgpu::Buffer,
    pile: Pile,
}

impl Rig {
    fn new(ctx: &GpuContext, pile: Pile) -> Rig {
        let (off, ent) = build_csr(pile.state.len(), &pile.contacts);
        let mut perturbed = pile.state.clone();
        let mut rng = ChaCha8Rng::seed_from_u64(2);
        for v in perturbed.vel.iter_mut().skip(pile.walls) {
            for x in v.iter_mut().take(3) {
                *x += 0.05 * 9.81 * DT * rng.random_range(-1.0f32..1.0);
            }
        }
        Rig {
            perturbed,
            bodies: GpuBodies::upload(ctx, &pile.state).unwrap(),
            contacts: buffers::storage_from(ctx, "contacts", &pile.contacts).unwrap(),
            counts: buffers::storage_from(ctx, "counts", &counts_words(pile.contacts.len() as u32))
                .unwrap(),
            offsets: buffers::storage_from(ctx, "offsets", &off).unwrap(),
            entries: buffers::storage_from(ctx, "entries", &ent).unwrap(),
            stats: buffers::storage_from(ctx, "stats", &[0u32; 8]).unwrap(),
            pile,
        }
    }

    fn inputs(&self) -> SolveInputs<'_> {
        SolveInputs {
            contacts: &self.contacts,
            counts: &self.counts,
            body_offsets: &self.offsets,
            body_entries: &self.entries,
            step_stats: &self.stats,
        }
    }

    fn solve(&self, ctx: &GpuContext, s: &Solve) -> f64 {
        self.solve_from(ctx, s, &self.pile.state)
    }

    fn solve_from(&self, ctx: &GpuContext, s: &Solve, state: &BodyState) -> f64 {
        self.bodies.write(ctx, state);
        ctx.wait();
        let t = Instant::now();
        let mut enc = ctx.device.create_command_encoder(&Default::default());
        s.record(ctx, &mut enc, self.inputs());
        ctx.queue.submit([enc.finish()]);
        ctx.wait();
        t.elapsed().as_secs_f64()
    }

    fn products(&self, ctx: &GpuContext, s: &Solve, repeats: u32) -> f64 {
        ctx.wait();
        let t = Instant::now();
        let mut enc = ctx.device.create_command_encoder(&Default::default());
        s.record_products(ctx, &mut enc, self.inputs(), repeats);
        ctx.queue.submit([enc.finish()]);
        ctx.wait();
        t.elapsed().as_secs_f64()
    }
}

fn settings(kind: SolverKind, max_iterations: u32, tolerance: f32, warm: bool) -> SolverSettings {
    SolverSettings {
        kind,
        max_iterations,
        tolerance,
        omega: 0.6,
        recovery_speed: 0.1,
        slop: 0.0,
        stabilisation: 1.0,
        warm_start: warm,
        cone: Cone::Relaxed,
        max_outer: 1,
        coarse_slab: 0.0,
    }
}

/// Copy-kernel bandwidth (bytes read + written per second).
fn copy_bandwidth(ctx: &GpuContext) -> f64 {
    let n: u32 = 4 << 20; // 4 Mi vec4 = 64 MiB
    let k = Kernel::new(ctx, ShaderSource::by_name("copy").unwrap()).unwrap();
    let params = buffers::uniform_from(ctx, "copy params", &[n, 0, 0, 0]);
    let src = buffers::storage_zeroed(ctx, "src", n as u64 * 16).unwrap();
    let dst = buffers::storage_zeroed(ctx, "dst", n as u64 * 16).unwrap();
    let bg = k.bind(ctx, &[&params, &src, &dst]);
    let run = |reps: u32| {
        ctx.wait();
        let t = Instant::now();
        let mut enc = ctx.device.create_command_encoder(&Default::default());
        {
            let mut pass = enc.begin_compute_pass(&Default::default());
            for _ in 0..reps {
                k.dispatch(&mut pass, "copy", &bg, n);
            }
        }
        ctx.queue.submit([enc.finish()]);
        ctx.wait();
        t.elapsed().as_secs_f64()
    };
    run(1);
    let t = (run(6) - run(2)) / 4.0;
    2.0 * n as f64 * 16.0 / t
}

fn report(ctx: &GpuContext, n_spheres: usize, apgd_cap: u32, jacobi_cap: u32) {
    let p = pile(n_spheres);
    let (nb, nc) = (p.state.len(), p.contacts.len());
    let grains = nb - p.walls;
    let b64 = to_f64(&p.state);
    let (rhs, _) = cpu::assemble(&b64, &p.contacts, DT as f64, 0.1);
    let pnorm = rhs.iter().flatten().map(|x| x * x).sum::<f64>().sqrt();
    let rig = Rig::new(ctx, p);
    println!(
        "\n== settled FCC pile: {grains} spheres, {nc} contacts ({:.2} per sphere), ‖p‖ = {pnorm:.3e} m/s",
        nc as f64 / grains as f64
    );
    let levels = [1e-2, 1e-3, 1e-4];
    // Warm start on vs off is compared at this level (the 1e-4 solves of Jacobi would not end).
    let warm_level = 1e-3;
    let mut reach = Vec::new();
    for (kind, cap) in [
        (SolverKind::Apgd, apgd_cap),
        (SolverKind::Jacobi, jacobi_cap),
    ] {
        // Sweeps to each residual level: one cold solve of `cap` sweeps (tolerance 0); the
        // history holds the best residual after every sweep.
        let mut sw = Solve::new(
            ctx,
            &rig.bodies,
            nc as u32,
            &settings(kind, cap, 0.0, true),
            DT,
        )
        .unwrap();
        let t_full = rig.solve(ctx, &sw);
        let hist = sw.read_history(ctx).unwrap();
        let first = |lvl: f64| {
            hist.iter()
                .position(|h| h[1] as f64 <= lvl * pnorm)
                .map(|k| k as u32 + 1)
        };
        let r: Vec<Option<u32>> = levels.iter().map(|&l| first(l)).collect();
        // Where the cap is hit first: sweeps to each level extrapolated at the geometric rate
        // of the last half of the history. The rate only slows as a first-order method goes
        // on, so this underestimates the sweeps still needed (a conservative ratio).
        let rate = {
            let (h, k) = (hist.len(), hist.len() / 2);
            let (a, b) = (
                hist[k][1].max(1e-30) as f64,
                hist[h - 1][1].max(1e-30) as f64,
            );
            (b / a).ln() / (h - 1 - k) as f64
        };
        let estimate: Vec<Option<f64>> = levels
            .iter()
            .zip(&r)
            .map(|(&l, reached)| {
                let last = hist.last().map_or(0.0, |h| h[1] as f64);
                (reached.is_none() && rate < 0.0)
                    .then(|| hist.len() as f64 + (l * pnorm / last).ln() / rate)
            })
            .collect();
        // Warm start on vs off: the same contact set with every free velocity perturbed by
        // ±5 % of g dt (a stand-in for the next step), solved cold by a fresh solver and
        // warm-started from the solution above (which is what `sw` holds).
        // The solver's tolerance is an RMS per row (3 rows per contact).
        let tol = (warm_level * pnorm / (3.0 * nc as f64).sqrt()) as f32;
        sw.set_settings(ctx, &settings(kind, cap, tol, true))
            .unwrap();
        let sc = Solve::new(
            ctx,
            &rig.bodies,
            nc as u32,
            &settings(kind, cap, tol, false),
            DT,
        )
        .unwrap();
        let t_cold = rig.solve_from(ctx, &sc, &rig.perturbed);
        let cold = sc.read_scalars(ctx).unwrap();
        let t_warm = rig.solve_from(ctx, &sw, &rig.perturbed);
        let warm = sw.read_scalars(ctx).unwrap();
        // Time per sweep: difference of two fixed-length solves (tolerance 0).
        let (a, b) = (10u32, 30u32);
        let sa = Solve::new(
            ctx,
            &rig.bodies,
            nc as u32,
            &settings(kind, a, 0.0, false),
            DT,
        )
        .unwrap();
        let sb = Solve::new(
            ctx,
            &rig.bodies,
            nc as u32,
            &settings(kind, b, 0.0, false),
            DT,
        )
        .unwrap();
        rig.solve(ctx, &sa);
        let per_sweep = (rig.solve(ctx, &sb) - rig.solve(ctx, &sa)) / (b - a) as f64;
        let fmt = |x: Option<u32>| x.map_or(format!("> {cap}"), |v| v.to_string());
        let conv = |sc: &bristlecone::solve::SolverScalars| {
            if sc.converged != 0 {
                format!("{}", sc.iterations)
            } else {
                format!("> {}", sc.iterations)
            }
        };
        println!(
            "{kind:?}: sweeps to residual 1e-2/1e-3/1e-4·‖p‖: {} / {} / {} (best after {cap}: {:.2e}·‖p‖, {:.1} s); \
             {:.2} ms per sweep; perturbed next step to {warm_level:e}·‖p‖: cold {} sweeps ({:.2} s) vs warm-started {} sweeps ({:.2} s)",
            fmt(r[0]),
            fmt(r[1]),
            fmt(r[2]),
            hist.last().map_or(f32::NAN, |h| h[1]) as f64 / pnorm,
            t_full,
            per_sweep * 1e3,
            conv(&cold),
            t_cold,
            conv(&warm),
            t_warm
        );
        if estimate.iter().any(|e| e.is_some()) {
            println!(
                "{kind:?}: rate over the last half {rate:.3e} per sweep (×{:.3} per 1000 sweeps); extrapolated sweeps to 1e-2/1e-3/1e-4·‖p‖: {}",
                (1000.0 * rate).exp(),
                estimate
                    .iter()
                    .map(|e| e.map_or("-".into(), |v| format!("≈{v:.0}")))
                    .collect::<Vec<_>>()
                    .join(" / ")
            );
        }
        reach.push((r, estimate));
    }
    for (k, l) in levels.iter().enumerate() {
        let (apgd, jac) = (&reach[0], &reach[1]);
        match (apgd.0[k], jac.0[k], jac.1[k]) {
            (Some(a), Some(j), _) => println!(
                "headline at {l:e}·‖p‖: Jacobi/APGD = {j}/{a} = {:.1}",
                j as f64 / a as f64
            ),
            (Some(a), None, Some(e)) => println!(
                "headline at {l:e}·‖p‖: Jacobi/APGD ≈ {e:.0}/{a} = {:.0} (Jacobi extrapolated; measured > {jacobi_cap}/{a} = {:.1})",
                e / a as f64,
                jacobi_cap as f64 / a as f64
            ),
            (Some(a), None, None) => println!(
                "headline at {l:e}·‖p‖: Jacobi/APGD > {jacobi_cap}/{a} = {:.1} (Jacobi did not reach it)",
                jacobi_cap as f64 / a as f64
            ),
            _ => println!("headline at {l:e}·‖p‖: APGD did not reach it within {apgd_cap} sweeps"),
        }
    }
    // Matrix-free product bandwidth.
    let s = Solve::new(
        ctx,
        &rig.bodies,
        nc as u32,
        &settings(SolverKind::Apgd, 1, 0.0, false),
        DT,
    )
    .unwrap();
    // Product and copy measured back to back, best of three each, so that both see the same
    // machine (lavapipe shares the CPU with everything else running).
    rig.products(ctx, &s, 2);
    let mut t = f64::MAX;
    let mut copy_bw: f64 = 0.0;
    for _ in 0..3 {
        t = t.min((rig.products(ctx, &s, 22) - rig.products(ctx, &s, 2)) / 20.0);
        copy_bw = copy_bw.max(copy_bandwidth(ctx));
    }
    let bytes = 72.0 * nb as f64 + 360.0 * nc as f64;
    let bw = bytes / t;
    println!(
        "matrix-free product N·γ: {:.2} ms, {:.0} nominal bytes → {:.2} GB/s = {:.0}% of copy ({:.2} GB/s)",
        t * 1e3,
        bytes,
        bw / 1e9,
        100.0 * bw / copy_bw,
        copy_bw / 1e9
    );
}

fn main() {
    let ctx = shared_context();
    println!("adapter: {}", ctx.describe());
    let copy_bw = copy_bandwidth(&ctx);
    println!("copy kernel: {:.2} GB/s", copy_bw / 1e9);
    let max: usize = std::env::var("BRISTLECONE_BENCH_MAX")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(100_000);
    if max >= 10_000 {
        report(&ctx, 10_000, 2000, 6000);
    }
    if max >= 100_000 {
        report(&ctx, 100_000, 4000, 2000);
    }

    // Criterion: one solve of 20 sweeps at 10⁴ spheres (APGD and Jacobi).
    let p = pile(10_000);
    let nc = p.contacts.len() as u32;
    let rig = Rig::new(&ctx, p);
    let mut c = Criterion::default()
        .sample_size(10)
        .warm_up_time(std::time::Duration::from_millis(500))
        .measurement_time(std::time::Duration::from_secs(3))
        .configure_from_args();
    for kind in [SolverKind::Apgd, SolverKind::Jacobi] {
        let s = Solve::new(&ctx, &rig.bodies, nc, &settings(kind, 20, 0.0, false), DT).unwrap();
        c.bench_function(&format!("solve/{kind:?}/10k spheres/20 sweeps"), |b| {
            b.iter(|| rig.solve(&ctx, &s))
        });
    }
    // Contact models (src/model/rows): the same 20 sweeps with every contact Coulomb (no
    // table), Kelvin–Voigt, Hunt–Crossley, bristle, tanh and point LuGre (material 0 carries
    // the model; tanh and LuGre have their records from the previous iteration's solve).
    let models: [(&str, Vec<MaterialRow>); 9] = [
        ("coulomb", Vec::new()),
        (
            "kelvin-voigt",
            vec![material_row(&FrictionModel::Compliant {
                stiffness: 1e6,
                damping: 100.0,
            })],
        ),
        (
            "hunt-crossley",
            vec![material_row(&FrictionModel::HuntCrossley {
                stiffness: 1e8,
                exponent: 1.5,
                damping: 0.2,
            })],
        ),
        (
            "kv-restitution",
            vec![material_row(&FrictionModel::CompliantRestitution {
                stiffness: 1e6,
                restitution: 0.5,
            })],
        ),
        (
            "hertz",
            vec![material_row(&FrictionModel::HuntCrossleyHertz {
                youngs_modulus: 1e9,
                poisson_ratio: 0.3,
                restitution: 0.5,
            })],
        ),
        (
            "bristle",
            vec![material_row(&FrictionModel::Bristle { stiffness: 1e5 })],
        ),
        (
            "bristle-box",
            vec![material_row(&FrictionModel::BristleBox { stiffness: 1e5 })],
        ),
        (
            "tanh",
            vec![material_row(&FrictionModel::Tanh {
                slip_velocity: 1e-3,
            })],
        ),
        (
            "lugre",
            vec![material_row(&FrictionModel::LuGre {
                sigma0: 1e5,
                sigma1: 300.0,
                sigma2: 0.4,
                mu_static: 1.0,
                v_stribeck: 0.01,
                breakaway_ratio: None,
            })],
        ),
    ];
    let solves: Vec<(&str, Solve)> = models
        .iter()
        .map(|(name, table)| {
            let st = settings(SolverKind::Apgd, 20, 0.0, false);
            let mut s = Solve::new(&ctx, &rig.bodies, nc, &st, DT).unwrap();
            s.set_models(&ctx, table).unwrap();
            (*name, s)
        })
        .collect();
    // Interleaved rounds, best of each (the machine's load drifts more than the models
    // differ): the cost ratios the book reports (Contact models).
    let mut best = vec![f64::MAX; solves.len()];
    for _ in 0..16 {
        for (k, (_, s)) in solves.iter().enumerate() {
            best[k] = best[k].min(rig.solve(&ctx, s));
        }
    }
    // Per contact-iteration: the solve's time over contacts × 20 sweeps.
    let per = |t: f64| t / (nc as f64 * 20.0) * 1e9;
    for (k, (name, _)) in solves.iter().enumerate() {
        println!(
            "model cost, best of 16 interleaved: {name:>14} {:7.1} ms = {:.1} ns per contact-iteration = {:.2} × coulomb",
            best[k] * 1e3,
            per(best[k]),
            best[k] / best[0]
        );
    }
    // Sweeps to the same residual (APGD, no warm start, 1e-4 m/s RMS per row, cap 500), each
    // model's second solve (the first leaves the records tanh, LuGre, bristle and the
    // Hunt–Crossley impact speed read).
    for (name, table) in &models {
        let st = settings(SolverKind::Apgd, 500, 1e-4, false);
        let mut s = Solve::new(&ctx, &rig.bodies, nc, &st, DT).unwrap();
        s.set_models(&ctx, table).unwrap();
        rig.solve(&ctx, &s);
        rig.solve(&ctx, &s);
        let sc = s.read_scalars(&ctx).unwrap();
        println!(
            "model sweeps to 1e-4 m/s: {name:>14} {:4} sweeps (converged {}, residual {:.2e})",
            sc.iterations,
            sc.converged != 0,
            sc.best
        );
    }
    for (name, s) in &solves {
        c.bench_function(&format!("solve/model {name}/10k spheres/20 sweeps"), |b| {
            b.iter(|| rig.solve(&ctx, s))
        });
    }
    c.final_summary();
}
