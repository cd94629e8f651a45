//! Lemke's exact LCP solve (`reference::lcp`, `reference::lemke`, CPU f64) against the GPU APGD solver
//! on the same contact sets, from 1 to a few hundred contacts, in one run.
//!
//! Problems: an n × n layer of beads (r = 5 mm, 0.1 mm apart, within the collision envelope)
//! on a floor with an (n−1) × (n−1) layer resting in its pockets, one step of gravity as the
//! load (v* = −g dt); contacts from the CPU collision twin (identical to the GPU's). n = 1 … 8
//! gives 1 … 372 contacts. Lemke: pyramid with 4 directions (6 LCP rows per contact), cold
//! start, and warm-started from its own basis after a perturbation of v* by ±5 % of g dt (the
//! basis is reused directly while feasible, else pivoted from with the covering vector B₀e). APGD: the GPU solver (lavapipe here) to
//! a residual of 1e-6 m/s or 2000 sweeps, timed as one submission + wait.
//!
//! Prints a table (contacts, LCP rows, pivots, failed starts and the perturbation of the LCP
//! that solved (`reference::lcp::LADDER`), Lemke ms, warm pivots and ms, APGD sweeps and ms); criterion times the cold Lemke solve at n = 4 (88 contacts).
//!
//! First, the whole step of `kind = "lemke"` on the realtime scene on its two paths
//! (`[solver] lemke_step`): collision on the GPU with a readback every step, and everything on
//! the CPU; per-step median, p99 and max against the 1 ms budget.

use bristlecone::bodies::{BodyInit, BodyState, GpuBodies, SHAPE_PLANE};
use bristlecone::collide::{BoundaryShape, CollideSettings};
use bristlecone::gpu::{buffers, shared_context, GpuContext};
use bristlecone::reference::collide::detect;
use bristlecone::reference::integrate::to_f64;
use bristlecone::reference::lcp::{LcpFriction, LcpSettings, StepLcp, LEVELS};
use bristlecone::solve::{
    build_csr, counts_words, Contact, Solve, SolveInputs, SolverKind, SolverSettings,
};
use bristlecone::step::{LemkeStep, Simulation};
use criterion::Criterion;
use std::time::Instant;

const DT: f32 = 1e-3;
const R: f32 = 0.005;

fn problem(n: usize) -> (BodyState, Vec<Contact>) {
    let d = 2.0 * R + 1e-4;
    let mut inits = vec![BodyInit::fixed(SHAPE_PLANE, 0, [0.0; 3], 1.0)];
    let c = (n as f32 - 1.0) / 2.0;
    for i in 0..n {
        for j in 0..n {
            inits.push(BodyInit::sphere(
                [(i as f32 - c) * d, (j as f32 - c) * d, R],
                R,
                2500.0,
            ));
        }
    }
    let dh = d * std::f32::consts::FRAC_1_SQRT_2;
    let h = ((2.0 * R) * (2.0 * R) - dh * dh).sqrt();
    for i in 0..n.saturating_sub(1) {
        for j in 0..n.saturating_sub(1) {
            let p = [(i as f32 + 0.5 - c) * d, (j as f32 + 0.5 - c) * d, R + h];
            inits.push(BodyInit::sphere(p, R, 2500.0));
        }
    }
    for b in inits.iter_mut().skip(1) {
        b.velocity[2] = -9.81 * DT;
    }
    let state = BodyState::from_inits(&inits);
    let settings = CollideSettings {
        envelope: 0.05 * R,
        friction: vec![0.5],
    };
    let contacts = detect(&state, &[BoundaryShape::Plane], &settings)
        .iter()
        .map(Contact::from)
        .collect();
    (state, contacts)
}

fn lcp_settings() -> LcpSettings {
    LcpSettings {
        friction: LcpFriction::Pyramid { directions: 4 },
        recovery_speed: 0.1,
        ..Default::default()
    }
}

/// (pivots, seconds) of a cold solve, and of a solve warm-started from that basis after a
/// ±5 % perturbation of v*; an LCP that no rung of the ladder solves accurately is reported.
type LemkeRun = ([(usize, f64); 2], (u32, f64));

fn lemke(state: &BodyState, contacts: &[Contact]) -> Result<LemkeRun, String> {
    let mut bodies = to_f64(state);
    let s = lcp_settings();
    let t = Instant::now();
    let lcp = StepLcp::new(&bodies, contacts, DT as f64, &s);
    let cold = lcp
        .solve(None, contacts)
        .map_err(|e| format!("cold solve: {:?}", e.error))?;
    let t_cold = t.elapsed().as_secs_f64();
    for (k, b) in bodies.iter_mut().enumerate() {
        b.vel.z *= 1.0 + 0.05 * (((k * 7) % 5) as f64 - 2.0) / 2.0;
    }
    let t = Instant::now();
    let lcp = StepLcp::new(&bodies, contacts, DT as f64, &s);
    let warm = lcp
        .solve(Some(&cold.lemke.basis), contacts)
        .map_err(|e| format!("warm solve: {:?}", e.error))?;
    let t_warm = t.elapsed().as_secs_f64();
    Ok((
        [(cold.lemke.pivots, t_cold), (warm.lemke.pivots, t_warm)],
        (cold.lemke.retries, LEVELS[cold.level]),
    ))
}

/// (sweeps, seconds) of the GPU APGD solve.
fn apgd(ctx: &GpuContext, state: &BodyState, contacts: &[Contact]) -> (u32, f64) {
    let settings = SolverSettings {
        kind: SolverKind::Apgd,
        max_iterations: 2000,
        tolerance: 1e-6,
        omega: 0.6,
        recovery_speed: 0.1,
        slop: 0.0,
        stabilisation: 1.0,
        warm_start: false,
        cone: bristlecone::solve::Cone::Relaxed,
        max_outer: 1,
        coarse_slab: 0.0,
    };
    let bodies = GpuBodies::upload(ctx, state).unwrap();
    let solve = Solve::new(ctx, &bodies, contacts.len() as u32, &settings, DT).unwrap();
    let (off, ent) = build_csr(state.len(), contacts);
    let cbuf = buffers::storage_from(ctx, "contacts", contacts).unwrap();
    let counts =
        buffers::storage_from(ctx, "counts", &counts_words(contacts.len() as u32)).unwrap();
    let offsets = buffers::storage_from(ctx, "offsets", &off).unwrap();
    let entries = buffers::storage_from(ctx, "entries", &ent).unwrap();
    let stats = buffers::storage_from(ctx, "stats", &[0u32; 8]).unwrap();
    let inputs = SolveInputs {
        contacts: &cbuf,
        counts: &counts,
        body_offsets: &offsets,
        body_entries: &entries,
        step_stats: &stats,
    };
    let run = || {
        let mut enc = ctx.device.create_command_encoder(&Default::default());
        solve.record(ctx, &mut enc, inputs);
        ctx.queue.submit([enc.finish()]);
        ctx.wait();
    };
    run(); // warm-up (pipeline creation)
    bodies.write(ctx, state);
    let t = Instant::now();
    run();
    let secs = t.elapsed().as_secs_f64();
    (solve.read_scalars(ctx).unwrap().iterations, secs)
}

/// Per-step wall time of the realtime scene (`assets/scenes/realtime.toml`, 14 beads, dt =
/// 1 ms) on the two Lemke step paths, one `advance(1)` per step as `run --realtime` takes them:
/// (median, p99, max) in ms over `steps` steps after 50 warm-up steps.
fn step_path(ctx: &std::sync::Arc<GpuContext>, step: LemkeStep, steps: usize) -> [f64; 3] {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/scenes/realtime.toml");
    let (scene, _) = bristlecone::run::load_scene(&path).unwrap();
    let state = bristlecone::setup::build_bodies(&scene);
    let settings = bristlecone::setup::step_settings(&scene);
    let mut sim = Simulation::new(ctx.clone(), &state, settings).unwrap();
    sim.set_lemke(bristlecone::setup::lemke_settings(&scene));
    sim.set_lemke_step(step).unwrap();
    for _ in 0..50 {
        sim.advance(1, 1).unwrap();
    }
    let mut ms: Vec<f64> = (0..steps)
        .map(|_| {
            let t = Instant::now();
            sim.advance(1, 1).unwrap();
            t.elapsed().as_secs_f64() * 1e3
        })
        .collect();
    ms.sort_by(f64::total_cmp);
    let q = |p: f64| ms[((ms.len() - 1) as f64 * p).round() as usize];
    [q(0.5), q(0.99), ms[ms.len() - 1]]
}

fn main() {
    let ctx = shared_context();
    // The two step paths of kind = "lemke" on the realtime scene (BRISTLECONE_BENCH_STEPS
    // steps each, default 2000), against the 1 ms real-time budget.
    let steps = std::env::var("BRISTLECONE_BENCH_STEPS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(2000);
    println!("realtime scene, {steps} steps per path: ms per step (median / p99 / max)");
    let gpu = step_path(&ctx, LemkeStep::Gpu, steps);
    let cpu = step_path(&ctx, LemkeStep::Cpu, steps);
    for (name, t) in [("GPU collision + CPU solve", gpu), ("all on the CPU", cpu)] {
        println!("  {name:26} {:.3} / {:.3} / {:.3}", t[0], t[1], t[2]);
    }
    println!(
        "  median ratio GPU-collision / CPU: {:.1}; p99 ratio {:.1}",
        gpu[0] / cpu[0],
        gpu[1] / cpu[1]
    );
    println!(
        "contacts  rows  pivots  retries  perturb  lemke_ms  warm_pivots  warm_ms  apgd_sweeps  apgd_ms  apgd/lemke"
    );
    for n in 1..=8 {
        let (state, contacts) = problem(n);
        let (sw, at) = apgd(&ctx, &state, &contacts);
        let ([(p, t), (wp, wt)], (retries, eps)) = match lemke(&state, &contacts) {
            Ok(r) => r,
            Err(e) => {
                println!(
                    "{:8}  {:4}  Lemke failed ({e}); APGD {sw} sweeps, {:.2} ms",
                    contacts.len(),
                    6 * contacts.len(),
                    at * 1e3
                );
                continue;
            }
        };
        println!(
            "{:8}  {:4}  {:6}  {:7}  {:7.0e}  {:8.3}  {:11}  {:7.3}  {:11}  {:7.2}  {:10.2}",
            contacts.len(),
            6 * contacts.len(),
            p,
            retries,
            eps,
            t * 1e3,
            wp,
            wt * 1e3,
            sw,
            at * 1e3,
            at / t
        );
    }
    let (state, contacts) = problem(4);
    let mut c = Criterion::default()
        .configure_from_args()
        .sample_size(10)
        .warm_up_time(std::time::Duration::from_millis(500))
        .measurement_time(std::time::Duration::from_secs(2));
    let name = format!("lemke cold, {} contacts", contacts.len());
    c.bench_function(&name, |b| {
        b.iter(|| lemke(&state, &contacts).expect("the n = 4 layer solves"))
    });
    c.final_summary();
}
