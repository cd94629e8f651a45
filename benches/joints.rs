//! Joint rows (book: Joints): sweeps to a residual for a chain of 10³ links hanging from the
//! world on spherical joints (balls r = 1 cm, links 5 cm, 20 g), released at rest with one
//! step of gravity (v* = −g dt), no warm start: the first solve of the hanging chain.
//! Projected Jacobi vs APGD, in one run on one adapter; the sweep cap is stated where a
//! solver does not get there. Chains are hard for Jacobi: information travels one link per
//! sweep and the tension must build up over the whole length.
//!
//! `BRISTLECONE_BENCH_LINKS=N` changes the number of links; `BRISTLECONE_BENCH_CAP` the cap.

use bristlecone::bodies::{BodyInit, BodyState, GpuBodies};
use bristlecone::gpu::{buffers, shared_context};
use bristlecone::joints::{block_lists, blocks_of, Joint, JointKind};
use bristlecone::reference::integrate::to_f64;
use bristlecone::reference::joints as cpu_joints;
use bristlecone::solve::{
    build_csr, counts_words, Contact, Solve, SolveInputs, SolverKind, SolverSettings,
};
use glam::DVec3;
use std::time::Instant;

const DT: f32 = 1e-3;

fn env(name: &str, default: u32) -> u32 {
    std::env::var(name)
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(default)
}

fn main() {
    let n = env("BRISTLECONE_BENCH_LINKS", 1000) as usize;
    let cap = env("BRISTLECONE_BENCH_CAP", 20000);
    let (l, r, m) = (0.05f64, 0.01, 0.02);
    let i = 0.4 * m * r * r;
    let inits: Vec<BodyInit> = (0..n)
        .map(|k| BodyInit {
            inv_mass: (1.0 / m) as f32,
            inv_inertia: [(1.0 / i) as f32; 3],
            velocity: [0.0, 0.0, -9.81 * DT],
            ..BodyInit::sphere([0.0, 0.0, (-(k as f64 + 0.5) * l) as f32], r as f32, 1.0)
        })
        .collect();
    let state = BodyState::from_inits(&inits);
    let joints: Vec<Joint> = (0..n)
        .map(|k| {
            let a = (k > 0).then(|| k as u32 - 1);
            let p = DVec3::new(0.0, 0.0, -(k as f64) * l);
            Joint::new(JointKind::Spherical, a, k as u32).at(&state, p, DVec3::Z)
        })
        .collect();
    let (blocks, _) = blocks_of(&joints);
    let (recs, offs) = cpu_joints::write_blocks(&to_f64(&state), &blocks, DT as f64, 0.5);
    let ctx = shared_context();
    let nb = blocks.len();
    let rhs: Vec<[f32; 4]> = offs
        .iter()
        .map(|o| [o[0] as f32, o[1] as f32, o[2] as f32, 0.0])
        .collect();
    let none: Vec<Contact> = Vec::new();
    let (csr_off, csr_ent) = build_csr(n, &none);
    let rows = (3 * nb) as f64;
    println!(
        "chain of {n} links ({nb} joint blocks, {} rows), first solve, cap {cap} sweeps; adapter: {}",
        3 * nb,
        ctx.info.name
    );
    // Time: a second identical solve recording only the sweeps the first one used (the
    // sweep budget), so empty sweeps after convergence are not counted.
    println!("| solver | 1e-3 m/s | 1e-4 m/s | 1e-5 m/s | ms per sweep |");
    println!("|---|---|---|---|---|");
    for kind in [SolverKind::Apgd, SolverKind::Jacobi] {
        let st = SolverSettings {
            kind,
            max_iterations: cap,
            tolerance: 1e-5,
            warm_start: false,
            recovery_speed: 0.5,
            ..SolverSettings::default()
        };
        let bodies = GpuBodies::upload(&ctx, &state).unwrap();
        let mut solve = Solve::new(&ctx, &bodies, nb as u32, &st, DT).unwrap();
        solve
            .set_joints(&ctx, nb as u32, &block_lists(n, &blocks))
            .expect("joint lists");
        let rec_buf = buffers::storage_from(&ctx, "contacts", &recs).unwrap();
        let counts = buffers::storage_from(&ctx, "counts", &counts_words(0)).unwrap();
        let o = buffers::storage_from(&ctx, "offsets", &csr_off).unwrap();
        let e = buffers::storage_from(&ctx, "entries", &[csr_ent.clone(), vec![0u32]].concat())
            .unwrap();
        let stats = buffers::storage_from(&ctx, "stats", &[0u32; 8]).unwrap();
        ctx.queue
            .write_buffer(solve.rhs_buffer(), 0, bytemuck::cast_slice(&rhs));
        let mut enc = ctx.device.create_command_encoder(&Default::default());
        let inputs = SolveInputs {
            contacts: &rec_buf,
            counts: &counts,
            body_offsets: &o,
            body_entries: &e,
            step_stats: &stats,
        };
        solve.record(&ctx, &mut enc, inputs);
        ctx.queue.submit([enc.finish()]);
        let sc = solve.read_scalars(&ctx).unwrap();
        let hist = solve.read_history(&ctx).unwrap();
        solve.set_sweep_budget(sc.iterations);
        bodies.write(&ctx, &state);
        let mut enc = ctx.device.create_command_encoder(&Default::default());
        let t = Instant::now();
        solve.record(&ctx, &mut enc, inputs);
        ctx.queue.submit([enc.finish()]);
        let again = solve.read_scalars(&ctx).unwrap();
        let secs = t.elapsed().as_secs_f64();
        assert_eq!(
            again.iterations, sc.iterations,
            "the timed solve repeats the first"
        );
        let reach = |target: f64| {
            hist.iter()
                .position(|h| (h[1] as f64) / rows.sqrt() <= target)
                .map_or(format!("> {cap}"), |k| format!("{}", k + 1))
        };
        println!(
            "| {kind:?} | {} | {} | {} | {:.3} |",
            reach(1e-3),
            reach(1e-4),
            reach(1e-5),
            1e3 * secs / sc.iterations.max(1) as f64
        );
    }
}
