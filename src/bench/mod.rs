//! `bristlecone bench`: a fixed ladder of sizes of two scenes (a settled pile and a hopper
//! discharge, see [`scenes`]), timed stage by stage, with results users can compare between
//! machines (bandwidth ratios, cost growth with N) and, with the `peer` feature, against
//! Rapier on the same machine (`peer`, with the `peer` feature).
//!
//! Per run (scene × size): `warmup` unmeasured steps (`bench --warmup`; the first also
//! compiles the shaders), then `steps` measured steps in one [`Simulation::advance`] (batches
//! of up to 32 steps): steps/s is bodies-independent wall-clock throughput of those steps
//! including their readbacks. The stage split comes from
//! GPU timestamps around every stage of every measured step when the adapter has them
//! (`ctx.timestamps`), else from extra steps with every stage submitted and waited for on its
//! own ([`BenchKnobs::step_stages_wall`], CPU clock; each stage then includes one submission).
//!
//! Effective bandwidth of a stage = the bytes it must move at least (the model in
//! [`stage_bytes`]) ÷ its time; it is reported ÷ the copy bandwidth of the adapter measured in
//! the same run (`gpu::bandwidth::copy_bandwidth`), a ratio that carries over between
//! adapters (book: Benchmarks).

pub mod scenes;

#[cfg(feature = "peer")]
pub mod peer;

use crate::gpu::{bandwidth, GpuContext, GpuError};
use crate::solve::{SolverKind, SolverSettings};
use crate::step::{BenchKnobs, Simulation, StageTimes, STAGE_NAMES};
pub use scenes::{BenchScene, Pack, SceneKind, Wall};
use serde::Serialize;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

/// The default ladder of sizes.
pub const DEFAULT_SIZES: [usize; 4] = [1_000, 10_000, 100_000, 1_000_000];

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Timing {
    /// Timestamps where the adapter has them, else wall clock.
    Auto,
    /// CPU wall clock per separately submitted stage.
    Wall,
}

#[derive(Clone, Debug)]
pub struct BenchOptions {
    pub sizes: Vec<usize>,
    /// Depths of the lattices in layers, in place of `sizes` when not empty (each scene's
    /// grains for that depth: [`SceneKind::grains_for_layers`]).
    pub layers: Vec<usize>,
    /// The packs each scene and size runs as, in this order.
    pub packs: Vec<Pack>,
    /// Where settled random packs are saved and found again; None: settled and not saved.
    pub packs_dir: Option<PathBuf>,
    /// Measured steps per run; None: [`default_steps`].
    pub steps: Option<u32>,
    pub warmup: u32,
    pub scenes: Vec<SceneKind>,
    /// The solvers to run each scene and size with, one after the other in this order (so
    /// that their ratios come from one run).
    pub solvers: Vec<SolverSettings>,
    pub timing: Timing,
    /// Where bench.csv and bench.json go; None: nothing written.
    pub out: Option<PathBuf>,
    /// Elements of the copy kernel for the bandwidth yardstick (vec4 each); None:
    /// [`default_copy_elements`].
    pub copy_elements: Option<u32>,
    /// Gauss–Seidel recolours every step instead of keeping its colouring while the
    /// constraint graph is unchanged (the cost before; the results are the same).
    pub recolour_every_step: bool,
}

/// The engine's solver as the bench runs it: APGD, at most 50 sweeps, tolerance 1e-5 m/s,
/// recovery speed 0.1 m/s, warm start, the scene default slop (1e-4 × r = 5e-7 m).
pub fn bench_solver() -> SolverSettings {
    SolverSettings {
        kind: SolverKind::Apgd,
        max_iterations: 50,
        tolerance: 1e-5,
        recovery_speed: 0.1,
        slop: (crate::scene::DEFAULT_SLOP_PER_RADIUS * scenes::RADIUS as f64) as f32,
        ..SolverSettings::default()
    }
}

impl Default for BenchOptions {
    fn default() -> Self {
        BenchOptions {
            sizes: DEFAULT_SIZES.to_vec(),
            layers: Vec::new(),
            packs: vec![Pack::Lattice],
            packs_dir: None,
            steps: None,
            warmup: 2,
            scenes: vec![SceneKind::Pile, SceneKind::Hopper],
            solvers: vec![bench_solver()],
            timing: Timing::Auto,
            out: None,
            copy_elements: None,
            recolour_every_step: false,
        }
    }
}

/// The copy yardstick's size: 64 MiB per buffer on a CPU adapter (lavapipe: its caches are
/// a few MiB), 1 GiB on a GPU, whose last-level cache (50 MB on an H100) would otherwise hold
/// much of a 64 MiB copy and flatter the yardstick.
pub fn default_copy_elements(ctx: &GpuContext) -> u32 {
    if ctx.info.device_type == wgpu::DeviceType::Cpu {
        1 << 22
    } else {
        1 << 26
    }
}

/// Measured steps for `n` grains: enough steps for a stable rate at small sizes, few at
/// large ones (keeps the default ladder within minutes on a software adapter).
pub fn default_steps(n: usize) -> u32 {
    (200_000 / n.max(1)).clamp(5, 100) as u32
}

/// One measured run.
#[derive(Clone, Debug, Serialize)]
pub struct BenchRow {
    pub scene: SceneKind,
    pub pack: Pack,
    /// Layers of the lattice (of a random pack: of the lattice with its grains).
    pub layers: usize,
    pub grains: usize,
    pub bodies: usize,
    pub steps: u32,
    /// Mean contacts per measured step.
    pub contacts: f64,
    /// Wall-clock throughput of the measured batch.
    pub steps_per_s: f64,
    /// Wall-clock seconds per step (1 / steps_per_s).
    pub wall_s_per_step: f64,
    /// "timestamps" or "wall".
    pub timing: &'static str,
    /// Mean seconds per step of each stage (order of `stage_names`).
    pub stage_s: [f64; 4],
    /// Sum of the stages.
    pub timed_s_per_step: f64,
    pub iterations_mean: f64,
    pub iterations_max: u32,
    /// Measured steps that used the whole sweep cap (`max_iterations`).
    pub capped_steps: u32,
    /// The solver's `[solver] kind` name (apgd, jacobi, gauss_seidel).
    pub solver: &'static str,
    pub residual_mean: f64,
    pub residual_max: f64,
    pub max_penetration: f64,
    /// Height of the bed's top (the highest grain's top) after the measured steps, m.
    pub bed_height: f64,
    pub kinetic_energy_end: f64,
    /// GPU bytes per body (body arrays + collision and solver per-body buffers).
    pub bytes_per_body: f64,
    /// GPU bytes per contact of capacity (collision records + CSR + solver state).
    pub bytes_per_contact: f64,
    pub contact_capacity: u64,
    /// Effective bandwidth of each stage ÷ the copy bandwidth.
    pub bandwidth_ratio: [f64; 4],
    /// (time per step ÷ that of the previous size) ÷ (size ratio); None for the first size.
    pub growth: Option<f64>,
    pub regrowths: u32,
    /// Solver throughput: contacts × sweeps per step ÷ the solve stage's seconds per step.
    pub contact_iterations_per_s: f64,
    /// Simulated body-seconds per wall-clock second: grains × dt ÷ wall seconds per step.
    pub body_seconds_per_s: f64,
    /// Gauss–Seidel: the fraction of the measured steps' solves that kept the stored
    /// colouring (the constraint graph unchanged); None for the other solvers.
    pub colourings_kept: Option<f64>,
    /// The slab correction: corrections tried and kept per measured step; None without it.
    pub slab_corrections: Option<(f64, f64)>,
}

#[derive(Clone, Debug, Serialize)]
pub struct Skipped {
    pub scene: SceneKind,
    pub pack: Pack,
    pub grains: usize,
    pub reason: String,
}

#[derive(Clone, Debug, Serialize)]
pub struct BenchReport {
    pub adapter: String,
    pub timestamps: bool,
    pub max_binding_bytes: u64,
    pub copy_bandwidth_bytes_per_s: f64,
    pub stage_names: [&'static str; 4],
    /// Each solver's settings, in the order they ran.
    pub solvers: Vec<String>,
    /// Unmeasured steps before each run's measured ones.
    pub warmup: u32,
    pub scene_note: &'static str,
    pub rows: Vec<BenchRow>,
    pub skipped: Vec<Skipped>,
    pub elapsed_s: f64,
}

/// Bytes each stage must move at least, per step, for `n` bodies, `c` contacts and `it`
/// solver sweeps (f32 vec4 = 16 B; contact record 64 B):
/// * free velocity: reads info, mass, vel, force, rot, omega, torque, writes vel, omega: 144 B/body;
/// * collision: per grain keys + counting sort + row counts + CSR ≈ 160 B, per contact the
///   record written and read back for the CSR (128 B) + CSR entries (16 B);
/// * solve: per sweep ([`sweep_bytes`]), plus assembly, impulse application and the
///   warm-start save ≈ 200 B/contact + 160 B/body, plus Gauss–Seidel's colouring in the
///   fraction `recoloured` of the steps that recomputed it;
/// * integrate+stats: position update 112 B/body + statistics reduction 96 B/body.
pub fn stage_bytes(n: f64, c: f64, it: f64, kind: SolverKind, recoloured: f64) -> [f64; 4] {
    let (per_contact, per_body) = sweep_bytes(kind);
    // Gauss–Seidel checks its constraint graph every step (the record's ids and the stored
    // pair, ≈ 24 B) and the counting sort writes its list slot (16 B); when it recolours,
    // each of the 24 Jones–Plassmann rounds reads a constraint's record ids and its
    // neighbours' colour words through its two bodies' lists (≈ 48 B).
    let colouring = if kind == SolverKind::GaussSeidel {
        (24.0 + 16.0 + recoloured * 24.0 * 48.0) * c
    } else {
        0.0
    };
    [
        144.0 * n,
        160.0 * n + 144.0 * c,
        it * (per_contact * c + per_body * n) + 200.0 * c + 160.0 * n + colouring,
        208.0 * n,
    ]
}

/// Bytes a solver sweep moves at least, (per contact, per body):
/// * APGD and Jacobi (step, gather, product, commit) ≈ 456 B/contact + 72 B/body;
/// * Gauss–Seidel: the colour's visit reads the record (64 B), reads and writes the impulse
///   (32 B) and both bodies' Δv (128 B); the residual reads the record, the impulse and
///   both Δv again (144 B); the momentum step reads and writes the impulse and its previous
///   sweep's (64 B) and each body's Δv and its previous (96 B/body): ≈ 432 B/contact +
///   96 B/body.
pub fn sweep_bytes(kind: SolverKind) -> (f64, f64) {
    match kind {
        SolverKind::GaussSeidel => (432.0, 96.0),
        _ => (456.0, 72.0),
    }
}

/// The `[solver] kind` name of a solver.
pub fn solver_name(s: &SolverSettings) -> &'static str {
    match s.kind {
        SolverKind::Apgd => "apgd",
        SolverKind::Jacobi => "jacobi",
        SolverKind::GaussSeidel if s.coarse_slab > 0.0 => "gauss_seidel_slabs",
        SolverKind::GaussSeidel => "gauss_seidel",
    }
}

/// `--solver gauss_seidel_slabs`'s slab height: two grain diameters (book: Solver depth).
pub const BENCH_SLAB_HEIGHT: f32 = 4.0 * scenes::RADIUS;

fn solver_label(s: &SolverSettings) -> String {
    format!(
        "{:?}, max {} sweeps, tolerance {:e} m/s, recovery {} m/s, slop {:e} m, warm start {}",
        s.kind, s.max_iterations, s.tolerance, s.recovery_speed, s.slop, s.warm_start
    )
}

pub const SCENE_NOTE: &str = "FCC lattice of r = 5 mm spheres built at rest (no settling run): \
pile = on a floor plane between 4 solid-box walls, as tall as wide; hopper = twice as tall as \
wide in a square bin of solid-box walls, floor of 4 solid-box plates around a 6 d square \
orifice, catch plane one bin height below; column = the pile's bin 6 grains wide at any depth. \
random pack = the same grains and bin as a random_fill at solid fraction 0.45, settled under \
gravity before the run. dt = 1 ms, mu = 0.5, restitution 0.";

/// Why a run of `n` grains cannot fit this adapter, if it cannot.
pub fn fits(ctx: &GpuContext, n: usize) -> Result<(), String> {
    let est = BenchScene::estimated_contacts(n);
    let n = n as u64;
    // The collision stage starts at 4 contacts per grain and grows to what the step needs,
    // up to what the chunked records and the solver's arrays hold (`Simulation::max_contacts`).
    let contacts = est.max(4 * n + 1024);
    let limit = Simulation::max_contacts(ctx);
    if contacts > limit {
        return Err(format!(
            "~{contacts} contacts; this adapter's bindings ({} MiB each) hold at most {limit}",
            ctx.max_binding() >> 20
        ));
    }
    Ok(())
}

/// Runs one scene at one size.
pub fn run_one(
    ctx: &Arc<GpuContext>,
    scene: &BenchScene,
    opts: &BenchOptions,
    solver: &SolverSettings,
    copy_bw: f64,
) -> Result<BenchRow, GpuError> {
    let n = scene.grains.len();
    let steps = opts.steps.unwrap_or_else(|| default_steps(n)).max(1);
    let state = scene.body_state();
    let mut sim = Simulation::new(ctx.clone(), &state, scene.step_settings(*solver))?;
    sim.set_colour_reuse(!opts.recolour_every_step);
    let stamps = opts.timing == Timing::Auto && sim.set_stage_timing(true);
    if opts.warmup > 0 {
        sim.advance(opts.warmup, u64::MAX)?;
    }
    let (checked, kept) = sim.colourings_kept()?;
    let slabs_before = sim.slab_corrections()?;
    let t = Instant::now();
    let recs = sim.advance(steps, 1)?;
    let wall = t.elapsed().as_secs_f64() / steps as f64;
    let colourings = sim.colourings_kept()?;
    let per_step = |a: u32, b: u32| (a - b) as f64 / steps as f64;
    let slab_corrections = (sim.slab_corrections()?)
        .zip(slabs_before)
        .map(|(now, then)| (per_step(now.0, then.0), per_step(now.1, then.1)));
    let end = sim.read_state()?;
    let bed_height = (end.pos.iter().zip(&end.info))
        .filter(|(_, info)| info[0] == crate::bodies::MOTION_DYNAMIC)
        .map(|(p, _)| (p[2] + p[3]) as f64)
        .fold(0.0, f64::max);
    let colourings_kept = (solver.kind == SolverKind::GaussSeidel)
        .then(|| (colourings.1 - kept) as f64 / (colourings.0 - checked).max(1) as f64);
    let times: Vec<StageTimes> = if stamps {
        sim.stage_times().to_vec()
    } else {
        let k = steps.clamp(1, 5);
        (0..k)
            .map(|_| sim.step_stages_wall())
            .collect::<Result<_, _>>()?
    };
    let mut stage_s = [0.0; 4];
    for t in &times {
        for (a, b) in stage_s.iter_mut().zip(t.seconds) {
            *a += b / times.len().max(1) as f64;
        }
    }
    let k = recs.len().max(1) as f64;
    let contacts = recs.iter().map(|r| r.contacts as f64).sum::<f64>() / k;
    let iterations_mean = recs.iter().map(|r| r.iterations as f64).sum::<f64>() / k;
    let mem = sim.memory_bytes();
    let bodies = state.len();
    let recoloured = 1.0 - colourings_kept.unwrap_or(0.0);
    let bytes = stage_bytes(
        bodies as f64,
        contacts,
        iterations_mean,
        solver.kind,
        recoloured,
    );
    let mut bandwidth_ratio = [0.0; 4];
    for i in 0..4 {
        if stage_s[i] > 0.0 {
            bandwidth_ratio[i] = bytes[i] / stage_s[i] / copy_bw;
        }
    }
    Ok(BenchRow {
        scene: scene.kind,
        pack: scene.pack,
        layers: scene.layers,
        grains: n,
        bodies,
        steps,
        contacts,
        steps_per_s: 1.0 / wall,
        wall_s_per_step: wall,
        timing: if stamps { "timestamps" } else { "wall" },
        stage_s,
        timed_s_per_step: stage_s.iter().sum(),
        iterations_mean,
        iterations_max: recs.iter().map(|r| r.iterations).max().unwrap_or(0),
        // At the sweep cap and above the tolerance (the slab correction's iterations count
        // its corrections as well as its sweeps).
        capped_steps: (recs.iter())
            .filter(|r| {
                r.iterations >= solver.max_iterations && r.residual > solver.tolerance as f64
            })
            .count() as u32,
        solver: solver_name(solver),
        residual_mean: recs.iter().map(|r| r.residual).sum::<f64>() / k,
        residual_max: recs.iter().map(|r| r.residual).fold(0.0, f64::max),
        max_penetration: recs.iter().map(|r| r.max_penetration).fold(0.0, f64::max),
        bed_height,
        kinetic_energy_end: recs.last().map_or(0.0, |r| r.totals.kinetic_energy),
        bytes_per_body: (mem.bodies + mem.collide_fixed + mem.solver_bodies) as f64 / bodies as f64,
        bytes_per_contact: mem.contacts as f64 / mem.contact_capacity.max(1) as f64,
        contact_capacity: mem.contact_capacity,
        bandwidth_ratio,
        growth: None,
        regrowths: sim.regrowths,
        contact_iterations_per_s: contacts * iterations_mean / stage_s[2].max(f64::MIN_POSITIVE),
        body_seconds_per_s: n as f64 * scene.dt / wall,
        colourings_kept,
        slab_corrections,
    })
}

/// Fills in the growth column: consecutive sizes of the same scene, by timed time per step.
fn fill_growth(rows: &mut [BenchRow]) {
    for i in 1..rows.len() {
        let b = &rows[i];
        // The same scene's previous size with the same solver.
        let previous = rows[..i]
            .iter()
            .rev()
            .find(|a| a.scene == b.scene && a.pack == b.pack && a.solver == b.solver);
        if let Some(a) = previous {
            if b.grains > a.grains && a.timed_s_per_step > 0.0 {
                let g =
                    (b.timed_s_per_step / a.timed_s_per_step) / (b.grains as f64 / a.grains as f64);
                rows[i].growth = Some(g);
            }
        }
    }
}

/// One run's point of the depth figure.
pub struct DepthPoint {
    /// The line it belongs to (scene, pack and solver).
    pub line: String,
    pub layers: usize,
    /// Mean sweeps per measured step.
    pub sweeps: f64,
    /// Worst penetration over the measured steps ÷ the grains' diameter.
    pub penetration_d: f64,
    pub wall_ms: f64,
}

/// Mean sweeps per step, worst penetration ÷ d and wall time per step against the depth in
/// layers, a line per scene, pack and solver, into the PNG at `path`; `Ok(false)` (nothing
/// written) when no line has two depths.
pub fn depth_figure(path: &Path, points: &[DepthPoint]) -> Result<bool, crate::plot::PlotError> {
    type Line = (String, Vec<(f64, f64)>);
    let mut sweeps: Vec<Line> = Vec::new();
    let mut penetration: Vec<Line> = Vec::new();
    let mut wall: Vec<Line> = Vec::new();
    for p in points {
        let at = |lines: &mut Vec<Line>, y: f64| {
            let x = p.layers as f64;
            match lines.iter_mut().find(|(l, _)| *l == p.line) {
                Some((_, points)) => points.push((x, y)),
                None => lines.push((p.line.clone(), vec![(x, y)])),
            }
        };
        at(&mut sweeps, p.sweeps);
        at(&mut penetration, p.penetration_d);
        at(&mut wall, p.wall_ms);
    }
    if sweeps.iter().all(|(_, points)| points.len() < 2) {
        return Ok(false);
    }
    let panel = |title: &str, y_label: &str, series: Vec<Line>| crate::plot::LinePanel {
        title: title.into(),
        x_label: "depth (layers)".into(),
        y_label: y_label.into(),
        series,
    };
    crate::plot::plot_lines_scaled(
        path,
        vec![
            (panel("Sweeps per step", "mean sweeps", sweeps), false),
            (
                panel("Worst penetration", "penetration / d", penetration),
                true,
            ),
            (panel("Wall time per step", "ms", wall), true),
        ],
    )
}

/// Runs `scene` with each solver of `opts` in turn.
fn run_solvers(
    ctx: &Arc<GpuContext>,
    scene: &BenchScene,
    opts: &BenchOptions,
    copy_bw: f64,
    rows: &mut Vec<BenchRow>,
    skipped: &mut Vec<Skipped>,
    log: &mut dyn FnMut(&str),
) -> Result<(), String> {
    let (kind, n, pack) = (scene.kind.name(), scene.grains.len(), scene.pack.name());
    for solver in &opts.solvers {
        let name = solver_name(solver);
        let t = Instant::now();
        match run_one(ctx, scene, opts, solver, copy_bw) {
            Ok(row) => {
                let slabs = row.slab_corrections.map_or(String::new(), |(tried, kept)| {
                    format!(" ({tried:.1} slab corrections, {kept:.1} kept)")
                });
                log(&format!(
                    "{kind} {pack} {n} {name}: {:.1} steps/s, {:.0} contacts, {:.1} sweeps{slabs} \
                     ({:.1} s)",
                    row.steps_per_s,
                    row.contacts,
                    row.iterations_mean,
                    t.elapsed().as_secs_f64()
                ));
                rows.push(row);
            }
            Err(e @ GpuError::TooLarge { .. }) => {
                let reason = format!("{name}: {e}");
                log(&format!("skip {kind} {pack} {n}: {reason}"));
                skipped.push(Skipped {
                    scene: scene.kind,
                    pack: scene.pack,
                    grains: n,
                    reason,
                });
            }
            Err(e) => return Err(e.to_string()),
        }
    }
    Ok(())
}

/// The seed of every random pack's fill.
const PACK_SEED: u64 = 1;
/// Steps a random pack settles in, at most, in batches of [`SETTLE_BATCH`].
const SETTLE_MAX_STEPS: u32 = 8000;
const SETTLE_BATCH: u32 = 200;
/// A pack has settled when its kinetic energy per grain is below this fraction of m·g·d
/// (every grain slower than about 1.4 mm/s).
const SETTLED_ENERGY: f64 = 1e-5;

/// The random pack of `lattice`'s grains and bin, settled under gravity (APGD, 100 sweeps
/// a step, the bench's tolerance) until its kinetic energy per grain falls below
/// [`SETTLED_ENERGY`] · m g d: read from `dir` when it was saved there before, else settled
/// and saved there (one line `x,y,z` per grain after a `#` header).
pub fn settled(
    ctx: &Arc<GpuContext>,
    lattice: &BenchScene,
    dir: Option<&Path>,
    log: &mut dyn FnMut(&str),
) -> Result<BenchScene, String> {
    let n = lattice.grains.len();
    let name = format!(
        "{}_{}_layers_{n}_grains_seed_{PACK_SEED}.csv",
        lattice.kind.name(),
        lattice.layers
    );
    let path = dir.map(|d| d.join(name));
    let fill = lattice.random_fill(PACK_SEED)?;
    if let Some(path) = &path {
        match read_pack(path, n) {
            Ok(Some(grains)) => return Ok(fill.with_grains(grains)),
            Ok(None) => {}
            Err(e) => log(&format!("{e}; settling it again")),
        }
    }
    let t = Instant::now();
    let mut solver = bench_solver();
    solver.max_iterations = 100;
    let mut sim = Simulation::new(ctx.clone(), &fill.body_state(), fill.step_settings(solver))
        .map_err(|e| e.to_string())?;
    let scale = n as f64 * fill.grain_mass() as f64 * 9.81 * 2.0 * fill.radius as f64;
    let mut steps = 0;
    let mut energy = f64::INFINITY;
    while steps < SETTLE_MAX_STEPS && energy > SETTLED_ENERGY * scale {
        sim.advance(SETTLE_BATCH, u64::MAX)
            .map_err(|e| e.to_string())?;
        steps += SETTLE_BATCH;
        energy = sim.totals().map_err(|e| e.to_string())?.kinetic_energy;
    }
    let state = sim.read_state().map_err(|e| e.to_string())?;
    let grains: Vec<[f32; 3]> = (state.pos.iter().zip(&state.info))
        .filter(|(_, info)| info[0] == crate::bodies::MOTION_DYNAMIC)
        .map(|(p, _)| [p[0], p[1], p[2]])
        .collect();
    let pack = fill.with_grains(grains);
    log(&format!(
        "{} random {n}: settled in {steps} steps ({:.1} s), kinetic energy {:.2e} of m·g·d per grain, bed {:.1} d high",
        lattice.kind.name(),
        t.elapsed().as_secs_f64(),
        energy / scale,
        pack.top / (2.0 * pack.radius)
    ));
    if let Some(path) = &path {
        write_pack(path, &pack, steps, energy / scale)
            .map_err(|e| format!("cannot save the settled pack to {}: {e}", path.display()))?;
    }
    Ok(pack)
}

/// The grains of a saved pack; None when there is none; an error naming the file and line
/// when it is not a pack of `n` grains.
fn read_pack(path: &Path, n: usize) -> Result<Option<Vec<[f32; 3]>>, String> {
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(format!("{}: {e}", path.display())),
    };
    let mut grains = Vec::with_capacity(n);
    for (k, line) in text.lines().enumerate() {
        if line.starts_with('#') || line.trim().is_empty() {
            continue;
        }
        let xyz: Vec<f32> = (line.split(','))
            .map(|x| x.trim().parse::<f32>())
            .collect::<Result<_, _>>()
            .map_err(|e| format!("{}:{}: not x,y,z: {e}", path.display(), k + 1))?;
        match xyz[..] {
            [x, y, z] if xyz.iter().all(|v| v.is_finite()) => grains.push([x, y, z]),
            _ => return Err(format!("{}:{}: not x,y,z", path.display(), k + 1)),
        }
    }
    if grains.len() != n {
        return Err(format!(
            "{}: {} grains, the scene has {n}",
            path.display(),
            grains.len()
        ));
    }
    Ok(Some(grains))
}

fn write_pack(path: &Path, pack: &BenchScene, steps: u32, energy: f64) -> std::io::Result<()> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    let mut s = format!(
        "# {} random pack, {} grains (the {}-layer lattice's), random_fill seed {PACK_SEED}, \
         settled {steps} steps to a kinetic energy of {energy:.2e} m·g·d per grain\n",
        pack.kind.name(),
        pack.grains.len(),
        pack.layers
    );
    for p in &pack.grains {
        s += &format!("{},{},{}\n", p[0], p[1], p[2]);
    }
    let tmp = path.with_extension("csv.partial");
    std::fs::write(&tmp, s)?;
    std::fs::rename(tmp, path)
}

/// Runs the whole ladder; `log` gets a line per run as it finishes.
pub fn run(
    ctx: &Arc<GpuContext>,
    opts: &BenchOptions,
    log: &mut dyn FnMut(&str),
) -> Result<BenchReport, String> {
    let start = Instant::now();
    let n_copy = opts
        .copy_elements
        .unwrap_or_else(|| default_copy_elements(ctx))
        .min((ctx.max_binding() / 16).min(u32::MAX as u64) as u32)
        .max(1024);
    let copy_bw = bandwidth::copy_bandwidth_for(ctx, n_copy, 0.05).map_err(|e| e.to_string())?;
    log(&format!(
        "copy bandwidth {:.2} GB/s ({} MiB copied per pass)",
        copy_bw * 1e-9,
        (n_copy as u64 * 32) >> 20
    ));
    let mut rows = Vec::new();
    let mut skipped = Vec::new();
    for &kind in &opts.scenes {
        let lattices: Vec<usize> = if opts.layers.is_empty() {
            opts.sizes.clone()
        } else {
            opts.layers
                .iter()
                .map(|&l| kind.grains_for_layers(l))
                .collect()
        };
        for (k, &n) in lattices.iter().enumerate() {
            if let Err(reason) = fits(ctx, n) {
                log(&format!("skip {} {n}: {reason}", kind.name()));
                for &pack in &opts.packs {
                    let reason = reason.clone();
                    skipped.push(Skipped {
                        scene: kind,
                        pack,
                        grains: n,
                        reason,
                    });
                }
                continue;
            }
            let lattice = match opts.layers.get(k) {
                Some(&layers) => BenchScene::with_layers(kind, layers),
                None => BenchScene::build(kind, n),
            };
            for &pack in &opts.packs {
                let scene = match pack {
                    Pack::Lattice => lattice.clone(),
                    Pack::Random => settled(ctx, &lattice, opts.packs_dir.as_deref(), log)?,
                };
                run_solvers(ctx, &scene, opts, copy_bw, &mut rows, &mut skipped, log)?;
            }
        }
    }
    fill_growth(&mut rows);
    let report = BenchReport {
        adapter: ctx.describe(),
        timestamps: ctx.timestamps,
        max_binding_bytes: ctx.max_binding(),
        copy_bandwidth_bytes_per_s: copy_bw,
        stage_names: STAGE_NAMES,
        solvers: opts.solvers.iter().map(solver_label).collect(),
        warmup: opts.warmup,
        scene_note: SCENE_NOTE,
        rows,
        skipped,
        elapsed_s: start.elapsed().as_secs_f64(),
    };
    if let Some(dir) = &opts.out {
        report.write(dir).map_err(|e| e.to_string())?;
    }
    Ok(report)
}

fn fmt_opt(x: Option<f64>) -> String {
    x.map_or("-".into(), |g| format!("{g:.2}"))
}

impl BenchReport {
    /// The human-readable table.
    pub fn table(&self) -> String {
        let mut s = String::new();
        s += &format!("adapter: {}\n", self.adapter);
        s += &format!(
            "copy bandwidth: {:.2} GB/s; max storage binding {} MiB; timestamps: {}\n",
            self.copy_bandwidth_bytes_per_s * 1e-9,
            self.max_binding_bytes >> 20,
            self.timestamps
        );
        for solver in &self.solvers {
            s += &format!("solver: {solver}\n");
        }
        s += &format!("warm-up: {} unmeasured steps per run\n", self.warmup);
        s += &format!("scenes: {}\n\n", self.scene_note);
        s += &format!(
            "{:<7} {:<7} {:>6} {:<12} {:>8} {:>5} {:>9} {:>8} {:>9} {:>6} {:>5} {:>9} {:>8} {:>7} | {:>8} {:>8} {:>8} {:>8} | {:>5} {:>5} {:>5} {:>5} | {:>6} {:>6} {:>6} | {:>7} {:>8}\n",
            "scene", "pack", "layers", "solver", "grains", "steps", "contacts", "steps/s", "ms/step", "iters", "capped", "residual",
            "pen/d", "top/d", "free_v", "collide", "solve", "integr", "bw_fv", "bw_co", "bw_so", "bw_in",
            "B/body", "B/cont", "growth", "Mci/s", "body·s/s"
        );
        for r in &self.rows {
            let ms = |x: f64| format!("{:.2}", x * 1e3);
            s += &format!(
                "{:<7} {:<7} {:>6} {:<12} {:>8} {:>5} {:>9.0} {:>8.2} {:>9} {:>6.1} {:>5} {:>9.2e} {:>8.1e} {:>7.1} | {:>8} {:>8} {:>8} {:>8} | {:>5.2} {:>5.2} {:>5.2} {:>5.2} | {:>6.0} {:>6.0} {:>6} | {:>7.2} {:>8.2}\n",
                r.scene.name(),
                r.pack.name(),
                r.layers,
                r.solver,
                r.grains,
                r.steps,
                r.contacts,
                r.steps_per_s,
                ms(r.wall_s_per_step),
                r.iterations_mean,
                r.capped_steps,
                r.residual_mean,
                r.max_penetration / (2.0 * scenes::RADIUS as f64),
                r.bed_height / (2.0 * scenes::RADIUS as f64),
                ms(r.stage_s[0]),
                ms(r.stage_s[1]),
                ms(r.stage_s[2]),
                ms(r.stage_s[3]),
                r.bandwidth_ratio[0],
                r.bandwidth_ratio[1],
                r.bandwidth_ratio[2],
                r.bandwidth_ratio[3],
                r.bytes_per_body,
                r.bytes_per_contact,
                fmt_opt(r.growth),
                r.contact_iterations_per_s * 1e-6,
                r.body_seconds_per_s,
            );
        }
        let timing: Vec<&str> = self.rows.iter().map(|r| r.timing).collect();
        let how = if timing.iter().all(|t| *t == "timestamps") {
            "GPU timestamp queries around each stage of every measured step"
        } else if timing.iter().all(|t| *t == "wall") {
            "CPU wall clock, each stage submitted and waited for on its own"
        } else {
            "mixed (see the timing column of the CSV)"
        };
        s += &format!(
            "\nstage times (ms per step): {how}; ms/step and steps/s: wall clock of the whole batch.\n\
             bw_*: effective bandwidth of the stage (bytes model in bench::stage_bytes) / copy bandwidth. \
             growth: (time per step / previous size's) / (size ratio), from the stage times.\n\
             capped: measured steps that used the whole sweep cap. \
             pen/d: max penetration / diameter over the measured steps. \
             top/d: the bed's top after them / diameter. layers: of the lattice (a random pack: of the lattice with its grains). \
             Mci/s: 10^6 contact-iterations per second of the solve stage (contacts x sweeps / its time). \
             body·s/s: simulated body-seconds per wall-clock second (grains x dt / wall time per step).\n"
        );
        for r in self.rows.iter().filter(|r| r.colourings_kept.is_some()) {
            let kept = r.colourings_kept.unwrap_or(0.0);
            s += &format!(
                "{} {} {} {}: the colouring was kept in {:.0} % of the measured steps' solves\n",
                r.scene.name(),
                r.pack.name(),
                r.solver,
                r.grains,
                100.0 * kept
            );
        }
        for k in &self.skipped {
            s += &format!(
                "skipped {} {} {}: {}\n",
                k.scene.name(),
                k.pack.name(),
                k.grains,
                k.reason
            );
        }
        s += &format!("elapsed {:.1} s\n", self.elapsed_s);
        s
    }

    pub fn csv(&self) -> String {
        let mut s = String::from(
            "scene,grains,bodies,steps,contacts,steps_per_s,wall_s_per_step,timing,\
             free_velocity_s,collision_s,solve_s,integrate_stats_s,timed_s_per_step,\
             iterations_mean,iterations_max,residual_mean,residual_max,max_penetration_m,\
             kinetic_energy_end_j,bytes_per_body,bytes_per_contact,contact_capacity,\
             bw_ratio_free_velocity,bw_ratio_collision,bw_ratio_solve,bw_ratio_integrate_stats,\
             growth,regrowths,contact_iterations_per_s,body_seconds_per_s,\
             copy_bandwidth_bytes_per_s,capped_steps,solver_kind,colourings_kept,pack,layers,\
             bed_height_m,slab_corrections,slab_corrections_kept\n",
        );
        for r in &self.rows {
            s += &format!(
                "{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}\n",
                r.scene.name(),
                r.grains,
                r.bodies,
                r.steps,
                r.contacts,
                r.steps_per_s,
                r.wall_s_per_step,
                r.timing,
                r.stage_s[0],
                r.stage_s[1],
                r.stage_s[2],
                r.stage_s[3],
                r.timed_s_per_step,
                r.iterations_mean,
                r.iterations_max,
                r.residual_mean,
                r.residual_max,
                r.max_penetration,
                r.kinetic_energy_end,
                r.bytes_per_body,
                r.bytes_per_contact,
                r.contact_capacity,
                r.bandwidth_ratio[0],
                r.bandwidth_ratio[1],
                r.bandwidth_ratio[2],
                r.bandwidth_ratio[3],
                r.growth.map_or(String::new(), |g| g.to_string()),
                r.regrowths,
                r.contact_iterations_per_s,
                r.body_seconds_per_s,
                self.copy_bandwidth_bytes_per_s,
                r.capped_steps,
                r.solver,
                r.colourings_kept.map_or(String::new(), |k| k.to_string()),
                r.pack.name(),
                r.layers,
                r.bed_height,
                r.slab_corrections.map_or(String::new(), |c| c.0.to_string()),
                r.slab_corrections.map_or(String::new(), |c| c.1.to_string()),
            );
        }
        s
    }

    /// Writes `bench.csv` and `bench.json` into `dir`, and `depth.png` ([`Self::depth_figure`])
    /// when the runs span two depths or more.
    pub fn write(&self, dir: &Path) -> std::io::Result<()> {
        std::fs::create_dir_all(dir)?;
        std::fs::write(dir.join("bench.csv"), self.csv())?;
        let json = serde_json::to_string_pretty(self).map_err(std::io::Error::other)?;
        std::fs::write(dir.join("bench.json"), json)?;
        self.depth_figure(&dir.join("depth.png"))
            .map(|_| ())
            .map_err(std::io::Error::other)
    }

    /// The depth figure of these rows ([`depth_figure`]).
    pub fn depth_figure(&self, path: &Path) -> Result<bool, crate::plot::PlotError> {
        let points: Vec<DepthPoint> = (self.rows.iter())
            .map(|r| DepthPoint {
                line: format!("{} {} {}", r.scene.name(), r.pack.name(), r.solver),
                layers: r.layers,
                sweeps: r.iterations_mean,
                penetration_d: r.max_penetration / (2.0 * scenes::RADIUS as f64),
                wall_ms: r.wall_s_per_step * 1e3,
            })
            .collect();
        depth_figure(path, &points)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gpu::shared_context;

    /// The bench path end to end at the smallest size: a few steps of both scenes, the
    /// table, CSV and JSON.
    #[test]
    fn smallest_size_runs_and_reports() {
        let ctx = shared_context();
        let dir = tempfile::tempdir().unwrap();
        let opts = BenchOptions {
            sizes: vec![200],
            steps: Some(3),
            warmup: 1,
            out: Some(dir.path().to_path_buf()),
            copy_elements: Some(1 << 16),
            ..Default::default()
        };
        let report = run(&ctx, &opts, &mut |_| {}).unwrap();
        assert_eq!(report.rows.len(), 2);
        for r in &report.rows {
            assert_eq!(r.grains, 200);
            assert_eq!(r.steps, 3);
            // A resting FCC lattice: about 6 contacts per grain once in contact.
            assert!(r.contacts > 3.0 * 200.0, "{} contacts", r.contacts);
            assert!(r.steps_per_s > 0.0 && r.steps_per_s.is_finite());
            assert!(r.stage_s.iter().all(|t| t.is_finite() && *t >= 0.0));
            assert!(r.stage_s[2] > 0.0, "the solve stage took no time");
            // A warm-started pile at rest may meet the per-row tolerance with no sweep.
            let cap = bench_solver().max_iterations as f64;
            assert!(
                (0.0..=cap).contains(&r.iterations_mean),
                "{} sweeps per step",
                r.iterations_mean
            );
            // Record + CSR, then APGD's γ slots, Nγ slots (the warm-start keys in the second
            // between steps) and rhs (Coulomb contacts, relaxed cone: no aux segment).
            assert_eq!(r.bytes_per_contact, 72.0 + 64.0 + 48.0 + 16.0);
            assert!(r.bytes_per_body >= 128.0);
            assert_eq!(r.timing, if ctx.timestamps { "timestamps" } else { "wall" });
        }
        // The pile starts at rest and must stay (nearly) at rest over a few steps.
        let pile = &report.rows[0];
        assert_eq!(pile.scene, SceneKind::Pile);
        let lattice = BenchScene::build(SceneKind::Pile, 200);
        assert_eq!((pile.pack, pile.layers), (Pack::Lattice, lattice.layers));
        // At rest: the bed's top where the lattice's was (to a hundredth of a diameter).
        assert!((pile.bed_height - lattice.top as f64).abs() < 0.01 * 2.0 * 0.005);
        let m = lattice.grain_mass() as f64;
        assert!(
            pile.kinetic_energy_end < 200.0 * 0.5 * m * 0.01f64.powi(2),
            "pile KE {}",
            pile.kinetic_energy_end
        );
        let table = report.table();
        assert!(table.contains("pile") && table.contains("hopper"));
        assert!(
            table.contains("warm-up: 1 unmeasured steps per run"),
            "{table}"
        );
        let csv = std::fs::read_to_string(dir.path().join("bench.csv")).unwrap();
        assert_eq!(csv.lines().count(), 3);
        assert!(csv
            .lines()
            .next()
            .unwrap()
            .ends_with(",pack,layers,bed_height_m,slab_corrections,slab_corrections_kept"));
        // APGD colours nothing: an empty colourings column.
        assert!(
            csv.lines().skip(1).all(|l| l.contains(",apgd,,lattice,")),
            "{csv}"
        );
        // Growth compares a size with the same scene's previous size under the same solver,
        // also where the solvers' rows alternate.
        let mut rows = vec![pile.clone(); 4];
        rows[1].solver = "gauss_seidel";
        rows[1].timed_s_per_step = 3.0 * pile.timed_s_per_step;
        for r in &mut rows[2..] {
            r.grains = 2 * pile.grains;
            r.timed_s_per_step = 8.0 * pile.timed_s_per_step;
        }
        rows[3].solver = "gauss_seidel";
        fill_growth(&mut rows);
        let growth: Vec<f64> = rows.iter().map(|r| r.growth.unwrap_or(-1.0)).collect();
        let expected = [-1.0, -1.0, 4.0, 8.0 / 3.0 / 2.0];
        assert!(
            growth
                .iter()
                .zip(expected)
                .all(|(g, e)| (g - e).abs() < 1e-12),
            "{growth:?}"
        );
        let json: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(dir.path().join("bench.json")).unwrap())
                .unwrap();
        assert_eq!(json["rows"].as_array().unwrap().len(), 2);
        assert_eq!(json["warmup"], 1);
    }

    /// Wall-clock stage timing (the fallback for adapters without timestamps) gives the same
    /// steps as the batched path.
    #[test]
    fn wall_timing_matches_batched_step() {
        let ctx = shared_context();
        let scene = BenchScene::build(SceneKind::Hopper, 150);
        let state = scene.body_state();
        let mut a =
            Simulation::new(ctx.clone(), &state, scene.step_settings(bench_solver())).unwrap();
        let mut b =
            Simulation::new(ctx.clone(), &state, scene.step_settings(bench_solver())).unwrap();
        a.advance(3, 1).unwrap();
        for _ in 0..3 {
            let t = b.step_stages_wall().unwrap();
            assert!(t.seconds.iter().all(|s| *s > 0.0), "{t:?}");
        }
        assert_eq!(b.step_index(), 3);
        let (sa, sb) = (a.read_state().unwrap(), b.read_state().unwrap());
        assert_eq!(sa.pos, sb.pos);
        assert_eq!(sa.vel, sb.vel);
    }

    #[test]
    fn skips_what_does_not_fit() {
        let ctx = shared_context();
        let n = (Simulation::max_contacts(&ctx) / 4) as usize + 10;
        let err = fits(&ctx, n).unwrap_err();
        assert!(err.contains("MiB each"), "{err}");
        assert!(fits(&ctx, 1000).is_ok());
    }

    #[test]
    fn a_saved_pack_reads_back_and_a_damaged_one_names_its_line() {
        let dir = std::env::temp_dir().join(format!("bench_pack_{}", std::process::id()));
        let path = dir.join("pack.csv");
        let pack = BenchScene::with_layers(SceneKind::Column, 3);
        let mut grains = pack.grains.clone();
        grains[1][2] = 0.1 + f32::EPSILON; // a value that needs every digit
        let pack = pack.with_grains(grains);
        assert_eq!(read_pack(&path, pack.grains.len()), Ok(None));
        write_pack(&path, &pack, 400, 1e-6).unwrap();
        let back = read_pack(&path, pack.grains.len()).unwrap().unwrap();
        assert_eq!(back, pack.grains, "bit for bit");
        let err = read_pack(&path, 5).unwrap_err();
        assert!(err.contains("grains, the scene has 5"), "{err}");
        let text = std::fs::read_to_string(&path).unwrap();
        let damaged = text.replacen("\n", "\n0.1,nan,0.2\n", 1);
        std::fs::write(&path, damaged).unwrap();
        let err = read_pack(&path, pack.grains.len()).unwrap_err();
        assert!(err.contains("pack.csv:2: not x,y,z"), "{err}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
