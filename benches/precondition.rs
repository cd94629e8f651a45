//! APGD's step scaling: the plain diagonal η_i = 3/trace(N_ii) that APGD steps
//! with now, against projected Jacobi's count-scaled η (each body's inverse mass and inertia
//! times its number of contacts), which APGD used before. The f64 twin solves the settled
//! pile of `bristlecone bench` (FCC lattice in a walled box, one step of gravity as load)
//! from a cold start and reports the sweeps to a residual of 1e-2 / 1e-3 / 1e-4 × ‖p‖. The
//! residual is the same count-scaled one in both (the tolerance's meaning is unchanged), so
//! the sweep counts compare directly. No GPU: the twin takes the GPU's branch decisions
//! (tests/solve.rs checks them sweep for sweep).
//!
//! `BRISTLECONE_BENCH_SIZES` (default `2000,10000`), `BRISTLECONE_BENCH_SWEEPS` (cap, 2000).

mod common;

use bristlecone::bench::scenes::{BenchScene, SceneKind};
use bristlecone::reference::collide::detect;
use bristlecone::reference::integrate::to_f64;
use bristlecone::reference::solve as cpu;
use bristlecone::solve::{Contact, SolverKind, SolverSettings};
use common::env;
use std::time::Instant;

const DT: f64 = 1e-3;

/// Sweeps until the best residual is at most x·‖p‖, for each x (None: not within the cap).
fn sweeps_to(out: &cpu::SolveOutput, xs: &[f64]) -> Vec<Option<usize>> {
    let p: f64 = out.p.iter().flatten().map(|v| v * v).sum::<f64>().sqrt();
    xs.iter()
        .map(|x| {
            out.history
                .iter()
                .position(|h| h[1] <= x * p)
                .map(|k| k + 1)
        })
        .collect()
}

fn main() {
    let sizes: String = env("BRISTLECONE_BENCH_SIZES", "2000,10000".to_string());
    let cap: u32 = env("BRISTLECONE_BENCH_SWEEPS", 2000);
    let xs = [1e-2, 1e-3, 1e-4];
    println!("APGD from cold on the bench pile, f64 twin: sweeps to 1e-2 / 1e-3 / 1e-4 × ‖p‖");
    println!("spheres contacts | plain diagonal (now) | count-scaled (before) | ratio at 1e-4");
    for n in sizes
        .split(',')
        .map(|s| s.trim().parse::<usize>().expect("size"))
    {
        let sc = BenchScene::build(SceneKind::Pile, n);
        let mut state = sc.body_state();
        for v in state.vel.iter_mut().skip(sc.walls.len()) {
            v[2] = -9.81 * DT as f32;
        }
        let setup = sc
            .step_settings(SolverSettings::default())
            .contact
            .expect("the bench scene has contacts");
        let contacts: Vec<Contact> = detect(&state, &setup.shapes, &setup.collide)
            .iter()
            .map(Contact::from)
            .collect();
        let bodies = to_f64(&state);
        let settings = SolverSettings {
            kind: SolverKind::Apgd,
            max_iterations: cap,
            tolerance: 0.0,
            ..SolverSettings::default()
        };
        let t = Instant::now();
        let now = sweeps_to(&cpu::solve(&bodies, &contacts, &settings, DT, None), &xs);
        let counted = cpu::Extra {
            counted_step: true,
            ..cpu::Extra::default()
        };
        let before = sweeps_to(
            &cpu::solve_with(&bodies, &contacts, &settings, DT, None, counted),
            &xs,
        );
        let show = |v: &[Option<usize>]| {
            v.iter()
                .map(|k| k.map_or(format!("> {cap}"), |k| k.to_string()))
                .collect::<Vec<_>>()
                .join(" / ")
        };
        let ratio = match (now[2], before[2]) {
            (Some(a), Some(b)) => format!("{:.2}×", b as f64 / a as f64),
            _ => "-".into(),
        };
        println!(
            "{n:7} {:8} | {:20} | {:21} | {ratio} ({:.0} s)",
            contacts.len(),
            show(&now),
            show(&before),
            t.elapsed().as_secs_f64()
        );
    }
}
