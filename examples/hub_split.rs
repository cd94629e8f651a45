//! Gauss–Seidel with a hub body, in the f64 twin (book: Coloured Gauss–Seidel, "Hub bodies"):
//! a simple-cubic bed on one dynamic slab (`reference::gauss_seidel::hub_slab`), solved from
//! a cold start to the tolerance by APGD, by coloured Gauss–Seidel with the slab linking its
//! contacts in the colouring as a grain does (they yield to the grains' contacts, and those
//! left without a colour take the left-over class's Jacobi steps) and by the engine's
//! Gauss–Seidel, where the slab is a hub: it links nothing, its contacts take the grains'
//! colours, and its mass is split over them (`HubSplitGaussSeidel`), for slabs from a tenth
//! of the bed's mass to a hundred times it. Prints the sweeps each takes, the residual
//! reached and how far its impulses are from APGD's.
//! Run: `cargo run --release --example hub_split [WIDTH LAYERS]`.

use bristlecone::model::solver::GS_COLOURS;
use bristlecone::reference::gauss_seidel::{colours, hub_slab, solve_hub_split, HUB_CONSTRAINTS};
use bristlecone::reference::integrate::to_f64;
use bristlecone::reference::solve::{self as twin, Schur, SolveOutput};
use bristlecone::solve::{Cone, SolverKind, SolverSettings};

const DT: f32 = 1e-3;

fn main() {
    let args: Vec<usize> = std::env::args()
        .skip(1)
        .map(|a| a.parse().expect("WIDTH LAYERS: two counts"))
        .collect();
    let (width, layers) = (*args.first().unwrap_or(&12), *args.get(1).unwrap_or(&8));
    let settings = |kind: SolverKind| SolverSettings {
        kind,
        max_iterations: 5000,
        tolerance: 1e-6,
        omega: kind.default_omega() as f32,
        warm_start: false,
        cone: Cone::Relaxed,
        slop: 0.0,
        ..SolverSettings::default()
    };
    println!(
        "bed {width} x {width} x {layers} on a slab ({} contacts on it); tolerance 1e-6 m/s, cap 5000",
        width * width
    );
    println!("slab/bed mass | solver | sweeps | converged | residual (2-norm) | max |γ − γ_APGD| / max γ");
    for ratio in [0.1, 1.0, 10.0, 100.0] {
        let (state, contacts) = hub_slab(width, layers, ratio, DT);
        let bodies = to_f64(&state);
        let schur = Schur::new(&bodies, &contacts);
        let left = colours(&schur, contacts.len())
            .iter()
            .filter(|&&k| k == GS_COLOURS - 1)
            .count();
        let apgd = twin::solve(
            &bodies,
            &contacts,
            &settings(SolverKind::Apgd),
            DT as f64,
            None,
        );
        let gs_settings = settings(SolverKind::GaussSeidel);
        let linked = solve_hub_split(
            &bodies,
            &contacts,
            &gs_settings,
            DT as f64,
            None,
            usize::MAX,
        );
        let split = twin::solve(&bodies, &contacts, &gs_settings, DT as f64, None);
        let hub = solve_hub_split(
            &bodies,
            &contacts,
            &gs_settings,
            DT as f64,
            None,
            HUB_CONSTRAINTS,
        );
        assert_eq!(
            hub.iterations, split.iterations,
            "the twin's Gauss–Seidel splits hubs"
        );
        let row = |name: &str, out: &SolveOutput| {
            let scale = apgd
                .gamma
                .iter()
                .flatten()
                .fold(0.0f64, |m, x| m.max(x.abs()));
            let diff = (out.gamma.iter().flatten())
                .zip(apgd.gamma.iter().flatten())
                .fold(0.0f64, |m, (a, b)| m.max((a - b).abs()));
            println!(
                "{ratio:>6} | {name:<22} | {:>6} | {:>9} | {:.2e} | {:.1e}",
                out.iterations,
                out.converged,
                out.residual,
                diff / scale
            );
        };
        row("apgd", &apgd);
        row("gauss_seidel, slab linked", &linked);
        row(&format!("gauss_seidel ({left} left)"), &split);
    }
}
