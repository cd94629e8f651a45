//! The block Gauss–Seidel prototypes (`reference::block_gs`, `reference::multilevel`,
//! `reference::avbd`; f64, CPU only): they reach the CCP solution APGD reaches, the chosen
//! ones hold a 40-layer column to 1 % of a diameter with 30 sweeps a step where projected
//! Jacobi with the same budget does not, and rerun bit-identical.

use crate::common::{random_bodies, random_contacts};
use bristlecone::reference::avbd::{self, Avbd};
use bristlecone::reference::block_gs::{self, Aggregates, BlockSettings, SweepOrder, TwoLevel};
use bristlecone::reference::depth::{diameter, Candidate, Column, Packing};
use bristlecone::reference::gauss_seidel::{hub_slab, solve_hub_split};
use bristlecone::reference::integrate::{to_f64, Body64};
use bristlecone::reference::multilevel::{self, CoarseRows, CoarseSolve, Multilevel};
use bristlecone::reference::solve as cpu;
use bristlecone::solve::{Cone, Contact, SolverKind, SolverSettings};
use glam::DVec3;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

const DT: f64 = 1e-3;

/// The candidate the depth benchmark chose (see docs/solver-depth.md).
fn chosen() -> BlockSettings {
    BlockSettings {
        order: SweepOrder::Colours,
        relaxation: 1.5,
        two_level: Some(TwoLevel {
            aggregates: Aggregates::Cells {
                edge: 2.0 * diameter(),
            },
            stall: 0.5,
        }),
        ..BlockSettings::coloured(diameter())
    }
}

/// Smoothed aggregation on the normal and friction rows under the same smoother ("sa-all-sor"
/// of the depth benchmark, the one recommended in docs/solver-depth.md).
fn smoothed() -> Multilevel {
    Multilevel {
        smoother: BlockSettings {
            relaxation: 1.5,
            ..BlockSettings::coloured(diameter())
        },
        momentum: false,
        aggregates: Aggregates::Cells {
            edge: 2.0 * diameter(),
        },
        stall: 0.5,
        smoothed: true,
        radius: None,
        rows: CoarseRows::All,
        solve: CoarseSolve::Direct,
        line_search: false,
        gain_check: true,
        bound_passes: 0,
    }
}

/// Gap of each contact after a step with the solve's velocities (Φ + dt·u_n).
fn gaps_after(bodies: &[Body64], contacts: &[Contact], out: &cpu::SolveOutput) -> Vec<f64> {
    let v = |a: [f32; 4]| DVec3::new(a[0] as f64, a[1] as f64, a[2] as f64);
    contacts
        .iter()
        .map(|c| {
            let (a, b) = (c.ids[0] as usize, c.ids[1] as usize);
            let at = |i: usize, r: DVec3| out.vel[i] + out.omega[i].cross(r);
            let _ = bodies;
            let rel = at(b, v(c.rb)) - at(a, v(c.ra));
            c.n_gap[3] as f64 + DT * v(c.n_gap).dot(rel)
        })
        .collect()
}

type Solver = dyn Fn(&[Body64], &[Contact], &SolverSettings) -> cpu::SolveOutput;

fn reaches_apgd(cone: Cone, name: &str, solve: &Solver) {
    let mut rng = ChaCha8Rng::seed_from_u64(3);
    let state = random_bodies(&mut rng, 24, 2.0);
    let contacts = random_contacts(&mut rng, &state, 18, |_| 0);
    let bodies = to_f64(&state);
    let tight = SolverSettings {
        max_iterations: 20_000,
        tolerance: 1e-10,
        warm_start: false,
        cone,
        max_outer: 20,
        ..SolverSettings::default()
    };
    let apgd = cpu::solve(
        &bodies,
        &contacts,
        &SolverSettings {
            kind: SolverKind::Apgd,
            ..tight
        },
        DT,
        None,
    );
    let block = solve(&bodies, &contacts, &tight);
    assert!(
        apgd.converged,
        "APGD did not reach 1e-10: {}",
        apgd.residual
    );
    assert!(
        block.converged,
        "{name} did not reach 1e-10: {}",
        block.residual
    );
    let scale = apgd
        .gamma
        .iter()
        .flatten()
        .fold(0.0f64, |m, x| m.max(x.abs()));
    assert!(scale > 0.0, "no contact carries load");
    let diff = apgd
        .gamma
        .iter()
        .zip(&block.gamma)
        .flat_map(|(a, b)| (0..3).map(move |k| (a[k] - b[k]).abs()))
        .fold(0.0f64, f64::max);
    assert!(
        diff <= 1e-6 * scale,
        "impulses differ by {diff:e} (largest {scale:e})"
    );
    let worst = |out: &cpu::SolveOutput| {
        gaps_after(&bodies, &contacts, out)
            .into_iter()
            .fold(f64::INFINITY, f64::min)
    };
    let (wa, wb) = (worst(&apgd), worst(&block));
    assert!(
        (wa - wb).abs() <= 1e-9,
        "worst gap after the step: APGD {wa:e}, {name} {wb:e}"
    );
    eprintln!(
        "{cone:?}: APGD {} sweeps, {name} {} sweeps, max |Δγ| {diff:.1e} of {scale:.1e}",
        apgd.iterations, block.iterations
    );
}

fn solve_block(b: &[Body64], c: &[Contact], st: &SolverSettings) -> cpu::SolveOutput {
    block_gs::solve(b, c, st, &chosen(), DT, None)
}

fn solve_multilevel(b: &[Body64], c: &[Contact], st: &SolverSettings) -> cpu::SolveOutput {
    multilevel::solve(b, c, st, &smoothed(), DT, None)
}

fn solve_avbd(b: &[Body64], c: &[Contact], st: &SolverSettings) -> cpu::SolveOutput {
    let a = Avbd {
        order: BlockSettings::coloured(diameter()),
        stiffness: 10.0,
        ramp: 1.0,
        stiffness_max: 10.0,
    };
    avbd::solve(b, c, st, &a, DT, None)
}

/// The hub candidate with every body of 3 or more contacts a hub, so that most constraints
/// share a hub with others of their colour.
fn solve_hubs(b: &[Body64], c: &[Contact], st: &SolverSettings) -> cpu::SolveOutput {
    solve_hub_split(b, c, st, DT, None, 3)
}

#[test]
fn hub_split_gauss_seidel_reaches_the_apgd_solution() {
    reaches_apgd(Cone::Relaxed, "hub split", &solve_hubs);
    reaches_apgd(Cone::Exact, "hub split", &solve_hubs);
}

/// A bed 6 × 6 × 4 on one dynamic slab (36 contacts on it): with the slab linking its
/// contacts in the colouring as a grain does, it keeps at most one per colour and leaves the
/// rest, with much of the bottom layer, to the left-over class's Jacobi steps; Gauss–Seidel
/// with the slab a hub colours them with the grains and splits the slab's mass over them. It
/// reaches APGD's impulses and needs at most half the sweeps, for a slab lighter and heavier
/// than the bed.
#[test]
fn hub_split_gauss_seidel_holds_a_bed_on_a_slab_in_fewer_sweeps() {
    for ratio in [0.1, 10.0] {
        let (state, contacts) = hub_slab(6, 4, ratio, DT as f32);
        let bodies = to_f64(&state);
        let st = |kind: SolverKind| SolverSettings {
            kind,
            max_iterations: 20_000,
            tolerance: 1e-11,
            omega: kind.default_omega() as f32,
            warm_start: false,
            slop: 0.0,
            ..SolverSettings::default()
        };
        let apgd = cpu::solve(&bodies, &contacts, &st(SolverKind::Apgd), DT, None);
        let gs_st = st(SolverKind::GaussSeidel);
        let gs = solve_hub_split(&bodies, &contacts, &gs_st, DT, None, usize::MAX);
        let split = cpu::solve(&bodies, &contacts, &gs_st, DT, None);
        for (name, out) in [
            ("APGD", &apgd),
            ("Gauss–Seidel, slab linked", &gs),
            ("hub split", &split),
        ] {
            assert!(out.converged, "{ratio}: {name} at {}", out.residual);
        }
        let scale = (apgd.gamma.iter().flatten()).fold(0.0f64, |m, x| m.max(x.abs()));
        let diff = (apgd.gamma.iter().flatten())
            .zip(split.gamma.iter().flatten())
            .fold(0.0f64, |m, (a, b)| m.max((a - b).abs()));
        assert!(
            diff <= 1e-5 * scale,
            "{ratio}: impulses {diff:e} of {scale:e} apart"
        );
        assert!(
            2 * split.iterations <= gs.iterations,
            "{ratio}: hub split {} sweeps, slab linked {}",
            split.iterations,
            gs.iterations
        );
        eprintln!(
            "slab {ratio} x the bed: APGD {}, slab linked {}, hub split {} sweeps",
            apgd.iterations, gs.iterations, split.iterations
        );
    }
}

#[test]
fn block_gauss_seidel_reaches_the_apgd_solution() {
    reaches_apgd(Cone::Relaxed, "block GS", &solve_block);
}

#[test]
fn block_gauss_seidel_reaches_the_apgd_solution_with_the_exact_cone() {
    reaches_apgd(Cone::Exact, "block GS", &solve_block);
}

#[test]
fn smoothed_aggregation_reaches_the_apgd_solution() {
    reaches_apgd(Cone::Relaxed, "smoothed aggregation", &solve_multilevel);
}

#[test]
fn smoothed_aggregation_reaches_the_apgd_solution_with_the_exact_cone() {
    reaches_apgd(Cone::Exact, "smoothed aggregation", &solve_multilevel);
}

#[test]
fn augmented_lagrangian_descent_reaches_the_apgd_solution() {
    reaches_apgd(Cone::Relaxed, "AVBD-style descent", &solve_avbd);
}

/// A 40-layer column (3 × 3 grains a layer, the random pack of `benches/depth.rs`: ballistic
/// deposition settled 40 steps by APGD with up to 300 sweeps), then stepped by `candidate`
/// with `budget` sweeps a step: the worst penetration over the steps ÷ d, the sweeps of each
/// step, and the column.
fn column_run(candidate: &Candidate, budget: u32, steps: usize) -> (f64, Vec<u32>, Column) {
    let settle = SolverSettings {
        max_iterations: 300,
        ..SolverSettings::default()
    };
    let mut column = Column::new(Packing::Random, 40, 3, 7);
    for _ in 0..40 {
        column.step(&Candidate::Twin(SolverKind::Apgd), &settle);
    }
    let st = SolverSettings {
        max_iterations: budget,
        ..SolverSettings::default()
    };
    let mut worst = 0.0f64;
    let mut sweeps = Vec::new();
    for _ in 0..steps {
        let s = column.step(candidate, &st);
        worst = worst.max(s.penetration);
        sweeps.push(s.sweeps);
    }
    (worst / diameter(), sweeps, column)
}

#[test]
fn a_40_layer_column_is_held_within_30_sweeps_where_jacobi_is_not() {
    let (held, sweeps, _) = column_run(&Candidate::Block(chosen()), 30, 20);
    assert!(
        held <= 0.01 && sweeps.iter().all(|&s| s <= 30),
        "block GS: worst penetration {held:.3e} d (sweeps {sweeps:?})"
    );
    let (jacobi, j_sweeps, _) = column_run(&Candidate::Twin(SolverKind::Jacobi), 30, 20);
    assert!(
        jacobi > 0.01,
        "projected Jacobi held the column within 30 sweeps too ({jacobi:.3e} d, sweeps \
         {j_sweeps:?}): the case does not tell the solvers apart"
    );
    eprintln!("block GS {held:.2e} d {sweeps:?}; Jacobi {jacobi:.2e} d {j_sweeps:?}");
}

#[test]
fn smoothed_aggregation_holds_a_40_layer_column_within_30_sweeps() {
    let (held, sweeps, _) = column_run(&Candidate::Multilevel(smoothed()), 30, 20);
    assert!(
        held <= 0.01 && sweeps.iter().all(|&s| s <= 30),
        "smoothed aggregation: worst penetration {held:.3e} d (sweeps {sweeps:?})"
    );
    eprintln!("smoothed aggregation {held:.2e} d {sweeps:?}");
}

/// Two runs of `candidate` on the 40-layer column: the same sweeps and the same bits.
fn reruns_bit_identical(candidate: &Candidate) {
    let bits = |c: &Column| -> Vec<u64> {
        c.bodies
            .iter()
            .flat_map(|b| [b.pos, b.vel, b.omega])
            .flat_map(|v| v.to_array())
            .map(f64::to_bits)
            .collect()
    };
    let (_, s1, a) = column_run(candidate, 30, 3);
    let (_, s2, b) = column_run(candidate, 30, 3);
    assert_eq!(s1, s2, "sweeps differ");
    assert!(bits(&a) == bits(&b), "bodies differ between two runs");
}

#[test]
fn block_gauss_seidel_reruns_bit_identical() {
    reruns_bit_identical(&Candidate::Block(chosen()));
}

#[test]
fn smoothed_aggregation_reruns_bit_identical() {
    reruns_bit_identical(&Candidate::Multilevel(smoothed()));
}

/// One step of a small lattice column (2 × 2 grains, 16 layers, loaded at rest) from zero
/// impulses, solved to 10⁻¹⁰ m/s by APGD and by `ml`: the same impulses, and `ml`'s coarse
/// corrections were kept (so the solution is not the smoother's alone).
fn column_reaches_apgd(name: &str, ml: &Multilevel) {
    use bristlecone::reference::depth::{DT as COLUMN_DT, GRAVITY};
    use bristlecone::reference::integrate::free_velocity;
    let column = Column::new(Packing::Lattice, 16, 2, 7);
    let mut bodies = column.bodies.clone();
    for b in &mut bodies {
        free_velocity(b, GRAVITY, COLUMN_DT);
    }
    let tight = SolverSettings {
        max_iterations: 20_000,
        tolerance: 1e-10,
        warm_start: false,
        ..SolverSettings::default()
    };
    let apgd = cpu::solve(
        &bodies,
        &column.contacts,
        &SolverSettings {
            kind: SolverKind::Apgd,
            ..tight
        },
        COLUMN_DT,
        None,
    );
    let out = multilevel::solve(&bodies, &column.contacts, &tight, ml, COLUMN_DT, None);
    assert!(apgd.converged, "APGD: residual {:e}", apgd.residual);
    assert!(out.converged, "{name}: residual {:e}", out.residual);
    let scale = apgd
        .gamma
        .iter()
        .flatten()
        .fold(0.0f64, |m, x| m.max(x.abs()));
    let diff = apgd
        .gamma
        .iter()
        .zip(&out.gamma)
        .flat_map(|(a, b)| (0..3).map(move |k| (a[k] - b[k]).abs()))
        .fold(0.0f64, f64::max);
    assert!(scale > 0.0, "no contact carries load");
    assert!(
        diff <= 1e-6 * scale,
        "{name}: impulses differ from APGD's by {diff:e} (largest {scale:e})"
    );
    // A correction's record carries its cost (≥ 1) and whether it was kept; a sweep's has
    // 0 (block sweeps) or the momentum β < 1 there.
    let kept = out
        .history
        .iter()
        .filter(|h| h[2] >= 1.0 && h[3] == 1.0)
        .count();
    assert!(kept > 0, "{name}: no coarse correction was kept");
    eprintln!(
        "{name}: {} sweeps ({kept} corrections kept), APGD {}; max |Δγ| {diff:.1e} of \
         {scale:.1e}",
        out.iterations, apgd.iterations
    );
}

/// Slabs 2 d high spanning the bed in place of cubic cells, under the recommended
/// smoothed aggregation (sa-all-sor) and under the GPU's Gauss–Seidel with momentum.
#[test]
fn slab_coarse_levels_reach_the_apgd_solution_on_a_column() {
    let slabs = Aggregates::Slabs {
        height: 2.0 * diameter(),
    };
    column_reaches_apgd(
        "sa-all-sor with slabs",
        &Multilevel {
            aggregates: slabs,
            ..smoothed()
        },
    );
    column_reaches_apgd(
        "momentum Gauss–Seidel with the slab correction",
        &Multilevel {
            momentum: true,
            aggregates: slabs,
            ..smoothed()
        },
    );
}
