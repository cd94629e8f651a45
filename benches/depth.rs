//! Sweeps to the tolerance against the depth of the bed, every solver side by side, in the
//! f64 twin (no GPU): columns of equal spheres (`reference::depth`: `width × width` grains a
//! layer in an open box; a simple-cubic lattice loaded at rest, and a random pack from
//! ballistic deposition settled a little) 25 … 200 layers deep. Each column is first brought
//! to a loaded state with APGD (a few steps for the lattice, `BRISTLECONE_DEPTH_SETTLE` for the
//! random pack); then, from that same state, each solver takes one step from zero impulses
//! (cold) and `BRISTLECONE_DEPTH_STEPS` steps warm-started from the previous step's impulses.
//! Printed: sweeps to the default tolerance (RMS per row), capped steps, worst penetration
//! after the steps ÷ d and CPU ms per step; the CSV goes to `benches/results/depth_twin.csv`.
//!
//! `BRISTLECONE_DEPTH_LAYERS` (default `25,50,100,200`), `BRISTLECONE_DEPTH_WIDTH` (4),
//! `BRISTLECONE_DEPTH_SWEEPS` (cap, 200), `BRISTLECONE_DEPTH_STEPS` (5),
//! `BRISTLECONE_DEPTH_SETTLE` (40), `BRISTLECONE_DEPTH_CSV` (output path),
//! `BRISTLECONE_DEPTH_SOLVERS` (names, comma-separated; default all),
//! `BRISTLECONE_DEPTH_PACKINGS` (`lattice`, `random`, `heap`; default `lattice,random`),
//! `BRISTLECONE_DEPTH_HISTORY` (1: print each cold step's residuals to stderr).
//!
//! `BRISTLECONE_DEPTH_SCENE` (a scene file of spheres in fixed boundaries, stepped at the
//! twin's 1 ms and gravity): in place of the columns, the bed that scene reaches after
//! `BRISTLECONE_DEPTH_SCENE_STEPS` (150) steps on the GPU under its own solver, read back;
//! the candidates take the scene's solver settings but for the cap, each from the same
//! read-back state (cold, then warm). `assets/scenes/default.toml` at 150 steps is its
//! impact (book: Coloured Gauss–Seidel, "The default scene's impact").

mod common;

use bristlecone::gpu::BackendChoice;
use bristlecone::model::defaults::GAUSS_SEIDEL_OMEGA;
use bristlecone::reference::avbd::Avbd;
use bristlecone::reference::block_gs::{Aggregates, BlockSettings, SweepOrder, TwoLevel};
use bristlecone::reference::depth::{diameter, Candidate, Column, Packing, StepStats, DT, GRAVITY};
use bristlecone::reference::multilevel::{CoarseRows, CoarseSolve, Multilevel};
use bristlecone::solve::{SolverKind, SolverSettings};
use bristlecone::Simulation;
use common::env;
use std::fmt::Write as _;
use std::path::Path;

/// The solvers compared, by name.
fn candidates() -> Vec<(&'static str, Candidate)> {
    let d = diameter();
    let gs = BlockSettings::coloured(d);
    let with = |order, relaxation, two_level| {
        Candidate::Block(BlockSettings {
            order,
            relaxation,
            two_level,
            ..gs
        })
    };
    let coarse_of = |aggregates| {
        Some(TwoLevel {
            aggregates,
            stall: 0.5,
        })
    };
    let coarse = |cells: f64| coarse_of(Aggregates::Cells { edge: cells * d });
    let all = vec![
        ("jacobi", Candidate::Twin(SolverKind::Jacobi)),
        ("apgd", Candidate::Twin(SolverKind::Apgd)),
        ("gauss-seidel", Candidate::Twin(SolverKind::GaussSeidel)),
        ("gs", with(SweepOrder::Colours, 1.0, None)),
        ("gs-down", with(SweepOrder::TopDown, 1.0, None)),
        ("gs-up", with(SweepOrder::BottomUp, 1.0, None)),
        ("gs-alt", with(SweepOrder::Alternating, 1.0, None)),
        ("sor1.5", with(SweepOrder::Colours, 1.5, None)),
        ("sor1.5-alt", with(SweepOrder::Alternating, 1.5, None)),
        ("2level", with(SweepOrder::Colours, 1.0, coarse(2.0))),
        (
            "2level-alt",
            with(SweepOrder::Alternating, 1.0, coarse(2.0)),
        ),
        (
            "2level4-alt",
            with(SweepOrder::Alternating, 1.0, coarse(4.0)),
        ),
        ("2level-sor", with(SweepOrder::Colours, 1.5, coarse(2.0))),
        (
            "2level-slab-alt",
            with(
                SweepOrder::Alternating,
                1.0,
                coarse_of(Aggregates::Slabs { height: 2.0 * d }),
            ),
        ),
        (
            "2level-box8-alt",
            with(
                SweepOrder::Alternating,
                1.0,
                coarse_of(Aggregates::Boxes {
                    horizontal: 8.0 * d,
                    height: 2.0 * d,
                }),
            ),
        ),
    ];
    let all = all
        .into_iter()
        .chain(multilevel())
        .chain(avbd())
        .collect::<Vec<_>>();
    let only: String = env("BRISTLECONE_DEPTH_SOLVERS", String::new());
    all.into_iter()
        .filter(|(name, _)| only.is_empty() || only.split(',').any(|o| o.trim() == *name))
        .collect()
}

/// The settings a candidate runs with: those of a scene with `kind = "gauss_seidel"` and no
/// `omega` where it sweeps as the GPU's Gauss–Seidel (ω = 1, not projected Jacobi's 0.6).
fn settings_for(candidate: &Candidate, st: &SolverSettings) -> SolverSettings {
    let gauss = match candidate {
        Candidate::Twin(kind) => *kind == SolverKind::GaussSeidel,
        Candidate::Multilevel(ml) => ml.momentum,
        _ => false,
    };
    SolverSettings {
        omega: if gauss {
            GAUSS_SEIDEL_OMEGA as f32
        } else {
            st.omega
        },
        ..*st
    }
}

/// The multilevel variants (`reference::multilevel`): smoothed aggregation or not, the
/// coarse rows, the coarse solve, the line search and the gain check, one or two changes at
/// a time from "sa-alt"; the aggregates' shape (cubic cells, `slab`: horizontal slabs 2 d
/// high, `box8`: boxes 8 d wide and 2 d high); `gsm`: the GPU's Gauss–Seidel with momentum
/// as the smoother; `r3`: the smoothing's ω from an assumed ρ(D⁻¹A) = 3 in place of the power
/// iteration.
fn multilevel() -> Vec<(&'static str, Candidate)> {
    let d = diameter();
    let base = Multilevel {
        smoother: BlockSettings {
            order: SweepOrder::Alternating,
            ..BlockSettings::coloured(d)
        },
        momentum: false,
        aggregates: Aggregates::Cells { edge: 2.0 * d },
        stall: 0.5,
        smoothed: true,
        radius: None,
        rows: CoarseRows::Normal,
        solve: CoarseSolve::Direct,
        line_search: false,
        gain_check: false,
        bound_passes: 0,
    };
    let sor = BlockSettings {
        relaxation: 1.5,
        ..BlockSettings::coloured(d)
    };
    let v = |ml| Candidate::Multilevel(ml);
    let slabs = Aggregates::Slabs { height: 2.0 * d };
    let boxes = Aggregates::Boxes {
        horizontal: 8.0 * d,
        height: 2.0 * d,
    };
    let sa_all_sor = Multilevel {
        smoother: sor,
        rows: CoarseRows::All,
        gain_check: true,
        ..base
    };
    // The GPU's coloured Gauss–Seidel with momentum (ω from the solver settings) as the
    // smoother, under the unsmoothed slab correction (a tridiagonal coarse matrix) or the
    // smoothed one on the normal and friction rows.
    let momentum = Multilevel {
        momentum: true,
        aggregates: slabs,
        ..base
    };
    vec![
        (
            "sa-all-sor-slab",
            v(Multilevel {
                aggregates: slabs,
                ..sa_all_sor
            }),
        ),
        (
            "sa-all-sor-box8",
            v(Multilevel {
                aggregates: boxes,
                ..sa_all_sor
            }),
        ),
        (
            "sa-all-alt-slab",
            v(Multilevel {
                aggregates: slabs,
                rows: CoarseRows::All,
                ..base
            }),
        ),
        (
            "gsm-2level-slab",
            v(Multilevel {
                smoothed: false,
                ..momentum
            }),
        ),
        (
            "gsm-sa-all-slab",
            v(Multilevel {
                rows: CoarseRows::All,
                gain_check: true,
                ..momentum
            }),
        ),
        (
            "gsm-sa-normal-slab",
            v(Multilevel {
                gain_check: true,
                ..momentum
            }),
        ),
        (
            "gsm-sa-normal-slab-r3",
            v(Multilevel {
                gain_check: true,
                radius: Some(3.0),
                ..momentum
            }),
        ),
        (
            "gsm-sa-normal-slab-r3-nogain",
            v(Multilevel {
                radius: Some(3.0),
                ..momentum
            }),
        ),
        (
            "gsm-sa-normal-slab-r3-ls",
            v(Multilevel {
                gain_check: true,
                radius: Some(3.0),
                line_search: true,
                ..momentum
            }),
        ),
        (
            "gsm-sa-normal-slab-r3-b3",
            v(Multilevel {
                gain_check: true,
                radius: Some(3.0),
                bound_passes: 3,
                ..momentum
            }),
        ),
        (
            "gsm-sa-ray-slab-r3",
            v(Multilevel {
                rows: CoarseRows::Ray,
                gain_check: true,
                radius: Some(3.0),
                ..momentum
            }),
        ),
        (
            "gsm-sa-all-slab-r3",
            v(Multilevel {
                rows: CoarseRows::All,
                gain_check: true,
                radius: Some(3.0),
                ..momentum
            }),
        ),
        (
            "gsm-2level-slab-gain",
            v(Multilevel {
                smoothed: false,
                gain_check: true,
                ..momentum
            }),
        ),
        (
            "gsm-sa-all-box8",
            v(Multilevel {
                rows: CoarseRows::All,
                gain_check: true,
                aggregates: boxes,
                ..momentum
            }),
        ),
        (
            "gsm-sa-all-cells",
            v(Multilevel {
                rows: CoarseRows::All,
                gain_check: true,
                aggregates: base.aggregates,
                ..momentum
            }),
        ),
        ("sa-alt", v(base)),
        (
            "sa-gain-alt",
            v(Multilevel {
                gain_check: true,
                ..base
            }),
        ),
        (
            "2level-ls-alt",
            v(Multilevel {
                smoothed: false,
                line_search: true,
                gain_check: true,
                ..base
            }),
        ),
        (
            "sa-ls-alt",
            v(Multilevel {
                line_search: true,
                gain_check: true,
                ..base
            }),
        ),
        (
            "sa-all-alt",
            v(Multilevel {
                rows: CoarseRows::All,
                ..base
            }),
        ),
        (
            "sa-all-gain-alt",
            v(Multilevel {
                rows: CoarseRows::All,
                gain_check: true,
                ..base
            }),
        ),
        (
            "sa-all-sor",
            v(Multilevel {
                smoother: sor,
                rows: CoarseRows::All,
                gain_check: true,
                ..base
            }),
        ),
        (
            "sa-all-sor-v1",
            v(Multilevel {
                smoother: sor,
                rows: CoarseRows::All,
                gain_check: true,
                solve: CoarseSolve::VCycles(1),
                ..base
            }),
        ),
        (
            "sa-ray-alt",
            v(Multilevel {
                rows: CoarseRows::Ray,
                ..base
            }),
        ),
        (
            "sa-b2-alt",
            v(Multilevel {
                bound_passes: 2,
                ..base
            }),
        ),
        (
            "sa-v1-alt",
            v(Multilevel {
                solve: CoarseSolve::VCycles(1),
                ..base
            }),
        ),
        (
            "sa-sor",
            v(Multilevel {
                smoother: sor,
                ..base
            }),
        ),
        (
            "sa-sor-gain",
            v(Multilevel {
                smoother: sor,
                gain_check: true,
                ..base
            }),
        ),
    ]
}

/// Augmented-Lagrangian block descent over bodies (`reference::avbd`): the stiffness κ (× η)
/// fixed or ramped from 1 to 100 by 10 % a sweep, bands along gravity alternating or colours.
fn avbd() -> Vec<(&'static str, Candidate)> {
    let d = diameter();
    let base = Avbd {
        order: BlockSettings {
            order: SweepOrder::Alternating,
            ..BlockSettings::coloured(d)
        },
        stiffness: 1.0,
        ramp: 1.1,
        stiffness_max: 100.0,
    };
    let v = |a| Candidate::Avbd(a);
    let fixed = |k| {
        v(Avbd {
            stiffness: k,
            ramp: 1.0,
            stiffness_max: k,
            ..base
        })
    };
    vec![
        ("avbd-k1", fixed(1.0)),
        ("avbd-k10", fixed(10.0)),
        ("avbd-k100", fixed(100.0)),
        ("avbd-ramp", v(base)),
        (
            "avbd-k10-col",
            v(Avbd {
                order: BlockSettings::coloured(d),
                stiffness: 10.0,
                ramp: 1.0,
                stiffness_max: 10.0,
            }),
        ),
    ]
}

/// The loaded state every solver starts from.
fn prepare(packing: Packing, layers: usize, width: usize, settle: usize) -> Column {
    let mut column = Column::new(packing, layers, width, 7);
    let apgd = Candidate::Twin(SolverKind::Apgd);
    let (steps, cap) = match packing {
        Packing::Lattice | Packing::Heap | Packing::Staggered => (3, 3000),
        Packing::Random => (settle, 300),
    };
    let st = SolverSettings {
        max_iterations: cap,
        // The conditions of the measurements in docs/src/solver-depth.md.
        recovery_speed: 1.0,
        ..SolverSettings::default()
    };
    for _ in 0..steps {
        column.step(&apgd, &st);
    }
    column
}

struct Row {
    cold: StepStats,
    warm: Vec<StepStats>,
}

fn measure(prepared: &Column, candidate: &Candidate, st: &SolverSettings, steps: usize) -> Row {
    let mut cold = prepared.clone();
    cold.forget_warm_start();
    let cold = cold.step(candidate, st);
    let mut column = prepared.clone();
    let warm = (0..steps).map(|_| column.step(candidate, st)).collect();
    Row { cold, warm }
}

/// The bed a row describes (layers and width 0 for a scene's).
struct Bed {
    layers: usize,
    width: usize,
    packing: &'static str,
}

/// Every candidate on one prepared bed: a printed line and a CSV row each.
fn run_candidates(
    bed: &Bed,
    prepared: &Column,
    st: &SolverSettings,
    steps: usize,
    history: bool,
    csv: &mut String,
) {
    let (l, width, packing) = (bed.layers, bed.width, bed.packing);
    let d = diameter();
    let grains = prepared.bodies.len() - 1;
    for (name, candidate) in candidates() {
        let r = measure(prepared, &candidate, &settings_for(&candidate, st), steps);
        if history {
            let h: Vec<String> = r.cold.history.iter().map(|x| format!("{x:.1e}")).collect();
            eprintln!("{l} {packing} {name} cold residuals: {}", h.join(" "));
        }
        let mean = r.warm.iter().map(|s| s.sweeps as f64).sum::<f64>() / r.warm.len() as f64;
        let max = r.warm.iter().map(|s| s.sweeps).max().unwrap_or(0);
        let capped = r.warm.iter().filter(|s| !s.converged).count();
        let pen = r.warm.iter().map(|s| s.penetration).fold(0.0, f64::max) / d;
        let ms = 1e3 * r.warm.iter().map(|s| s.seconds).sum::<f64>() / r.warm.len() as f64;
        let cold_pen = r.cold.penetration / d;
        let cold_mark = if r.cold.converged { "" } else { "*" };
        println!(
            "{l:>6} {packing:>8} {name:>11} {:>7} | {:>4}{cold_mark:1} {cold_pen:>9.2e} | \
             {mean:>6.1} {max:>5} {capped:>4}/{:<1} {pen:>9.2e} | {ms:>8.1}",
            r.cold.contacts,
            r.cold.sweeps,
            r.warm.len(),
        );
        writeln!(
            csv,
            "{l},{width},{packing},{name},{grains},{},{},{},{cold_pen:.4e},{mean:.2},{max},{capped},{},\
             {pen:.4e},{ms:.2}",
            r.cold.contacts,
            r.cold.sweeps,
            !r.cold.converged,
            r.warm.len(),
        )
        .expect("write to a string");
    }
}

/// The bed the scene file `path` reaches after `steps` steps on the GPU (its own solver),
/// and the scene's solver settings.
fn scene_bed(path: &str, steps: u64) -> (Column, SolverSettings) {
    let fail = |what: &str, e: &dyn std::fmt::Display| -> ! {
        eprintln!("BRISTLECONE_DEPTH_SCENE {path}: {what}: {e}");
        std::process::exit(2);
    };
    let mut sim = Simulation::from_scene_file(Path::new(path), BackendChoice::Auto)
        .unwrap_or_else(|e| fail("loading", &e));
    let (dt, gravity) = (sim.engine().settings.dt, sim.engine().settings.gravity);
    if dt != DT || gravity != GRAVITY.to_array() {
        let twin = format!("{DT} s and {GRAVITY} m/s², the twin's");
        fail(
            "time step and gravity",
            &format!("{dt} s and {gravity:?} m/s², not {twin}"),
        );
    }
    sim.step(steps).unwrap_or_else(|e| fail("stepping", &e));
    let state = sim
        .engine()
        .read_state()
        .unwrap_or_else(|e| fail("reading", &e));
    let Some(contact) = sim.engine().settings.contact.clone() else {
        fail("contacts", &"the scene has none")
    };
    let column = Column::from_state(state, contact.shapes, contact.collide);
    (column, contact.solver)
}

fn main() {
    let layers: String = env("BRISTLECONE_DEPTH_LAYERS", "25,50,100,200".to_string());
    let width: usize = env("BRISTLECONE_DEPTH_WIDTH", 4);
    let cap: u32 = env("BRISTLECONE_DEPTH_SWEEPS", 200);
    let steps: usize = env("BRISTLECONE_DEPTH_STEPS", 5);
    let settle: usize = env("BRISTLECONE_DEPTH_SETTLE", 40);
    let history = env("BRISTLECONE_DEPTH_HISTORY", 0) != 0;
    let packings: String = env("BRISTLECONE_DEPTH_PACKINGS", "lattice,random".to_string());
    let packings: Vec<Packing> = packings
        .split(',')
        .map(|p| match p.trim() {
            "lattice" => Packing::Lattice,
            "random" => Packing::Random,
            "heap" => Packing::Heap,
            "staggered" => Packing::Staggered,
            other => {
                eprintln!("BRISTLECONE_DEPTH_PACKINGS: lattice, random or heap, got {other:?}");
                std::process::exit(2);
            }
        })
        .collect();
    let csv_path: String = env(
        "BRISTLECONE_DEPTH_CSV",
        concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/benches/results/depth_twin.csv"
        )
        .to_string(),
    );
    let st = SolverSettings {
        max_iterations: cap,
        // The conditions of the measurements in docs/src/solver-depth.md.
        recovery_speed: 1.0,
        ..SolverSettings::default()
    };
    let scene: String = env("BRISTLECONE_DEPTH_SCENE", String::new());
    if scene.is_empty() {
        println!(
            "f64 twin, {width}x{width} grains a layer, cap {cap} sweeps, tolerance {} m/s RMS \
             per row",
            st.tolerance
        );
    } else {
        println!("f64 twin, the bed of {scene}, cap {cap} sweeps, the scene's tolerance");
    }
    println!(
        "{:>6} {:>8} {:>11} {:>7} | {:>5} {:>9} | {:>6} {:>5} {:>6} {:>9} | {:>8}",
        "layers",
        "packing",
        "solver",
        "contact",
        "cold",
        "pen/d",
        "warm",
        "max",
        "capped",
        "pen/d",
        "ms/step"
    );
    let mut csv = String::from(
        "layers,width,packing,solver,grains,contacts,cold_sweeps,cold_capped,cold_penetration_d,\
         warm_sweeps_mean,warm_sweeps_max,warm_capped,warm_steps,warm_penetration_d,ms_per_step\n",
    );
    let layers: Vec<usize> = match layers
        .split(',')
        .map(|s| s.trim().parse::<usize>().ok().filter(|&l| l > 0))
        .collect::<Option<Vec<_>>>()
    {
        Some(l) => l,
        None => {
            eprintln!(
                "BRISTLECONE_DEPTH_LAYERS: expected positive integers separated by commas, \
                 got {layers:?}"
            );
            std::process::exit(2);
        }
    };
    if !scene.is_empty() {
        let lead_in: u64 = env("BRISTLECONE_DEPTH_SCENE_STEPS", 150);
        let (prepared, scene_st) = scene_bed(&scene, lead_in);
        let st = SolverSettings {
            kind: SolverKind::Apgd,
            omega: SolverKind::Apgd.default_omega() as f32,
            max_iterations: cap,
            ..scene_st
        };
        let bed = Bed {
            layers: 0,
            width: 0,
            packing: "scene",
        };
        run_candidates(&bed, &prepared, &st, steps, history, &mut csv);
    }
    for l in layers.into_iter().filter(|_| scene.is_empty()) {
        for &packing in &packings {
            let prepared = prepare(packing, l, width, settle);
            let bed = Bed {
                layers: l,
                width,
                packing: packing.name(),
            };
            run_candidates(&bed, &prepared, &st, steps, history, &mut csv);
        }
    }
    match std::fs::write(&csv_path, csv) {
        Ok(()) => println!("wrote {csv_path}"),
        Err(e) => eprintln!("could not write {csv_path}: {e}"),
    }
    println!("* = the cold step reached the cap");
}
