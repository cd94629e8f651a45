//! The `bristlecone` command line: run, validate and inspect scenes.

use bristlecone::gpu::{BackendChoice, GpuContext};
use bristlecone::run::{self, Progress, RunOptions};
use bristlecone::scene::Num;
use bristlecone::solve::SolverKind;
use clap::{Parser, Subcommand};
use indicatif::{ProgressBar, ProgressStyle};
use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

#[derive(Parser)]
#[command(
    name = "bristlecone",
    version,
    about = "GPU granular and frictional contact engine"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run a scene and write frames (VTK), statistics (CSV) and a checkpoint.
    Run {
        /// Scene file (TOML); default: the packaged default scene.
        scene: Option<PathBuf>,
        /// Output directory (default: the scene's [output].dir).
        #[arg(long)]
        out: Option<PathBuf>,
        /// Total number of steps (default: the scene's; at least 1).
        #[arg(long, value_parser = clap::value_parser!(u64).range(1..))]
        steps: Option<u64>,
        /// Continue from a checkpoint written by an earlier run of the same scene (into a new
        /// --out: fresh outputs from the checkpoint's step).
        #[arg(long)]
        resume: Option<PathBuf>,
        /// Restart from a checkpoint of a scene with the same bodies, taking its positions,
        /// velocities, contact state and time and everything else (materials, solver,
        /// outputs, duration, schedules) from SCENE; fresh outputs into a new --out.
        #[arg(long, conflicts_with = "resume")]
        from: Option<PathBuf>,
        /// Replace the outputs of an earlier run in the output directory (refused otherwise).
        #[arg(long)]
        overwrite: bool,
        /// Shrink the scene: multiplies generated grain counts (e.g. 0.25 for a quick look).
        #[arg(long)]
        scale: Option<f64>,
        /// Graphics backend: auto (honours WGPU_BACKEND), vulkan or gl.
        #[arg(long, default_value = "auto")]
        backend: BackendChoice,
        /// Step against the wall clock at the scene's dt; report per-step solve time, deadline
        /// misses and the worst margin (also written to OUT/realtime.csv).
        #[arg(long)]
        realtime: bool,
        /// With --realtime: take the first N steps before the clock starts (a stated pre-roll;
        /// they are solved and checked like every step, their times reported apart).
        #[arg(long, default_value_t = 0, requires = "realtime")]
        preroll: u64,
    },
    /// Print the GPU adapter, its limits and features.
    Info {
        #[arg(long, default_value = "auto")]
        backend: BackendChoice,
    },
    /// Check a scene file and print its summary and warnings.
    Validate { scene: PathBuf },
    /// Draw PNG plots of a run's statistics and measurements into RUN_DIR/plots.
    Plot { run_dir: PathBuf },
    /// Benchmark a ladder of sizes of a settled pile and a hopper discharge; prints a table
    /// and writes bench.csv and bench.json.
    Bench(BenchArgs),
    /// Draw a run's frames to PNG (headless, any adapter): one frame, or all with an
    /// animated PNG, a contact sheet and an MP4 (when ffmpeg is on the PATH).
    Render(RenderArgs),
    /// Evaluate a planar LuGre contact patch (Arslan Waltersson & Karayiannidis) under a twist history; writes
    /// wrench.csv and wrench.png into --out.
    Patch {
        /// Patch description (TOML; see `bristlecone::patch::file`).
        file: PathBuf,
        /// Output directory.
        #[arg(long, default_value = "patch_out")]
        out: PathBuf,
        #[arg(long, default_value = "auto")]
        backend: BackendChoice,
    },
}

/// A progress bar on a terminal; plain log lines (every 10 %) otherwise.
struct CliProgress {
    bar: Option<ProgressBar>,
    total: u64,
    /// The step the run started from (a resumed run's checkpoint step).
    first: u64,
    next_log: u64,
    started: std::time::Instant,
}

impl Progress for CliProgress {
    fn start(&mut self, done: u64, total: u64) {
        self.total = total;
        self.first = done;
        self.started = std::time::Instant::now();
        if std::io::stderr().is_terminal() {
            let bar = ProgressBar::new(total).with_position(done);
            bar.set_style(
                ProgressStyle::with_template(
                    "{bar:40} {pos}/{len} steps  {per_sec}  ETA {eta}  {msg}",
                )
                .unwrap(),
            );
            self.bar = Some(bar);
        } else {
            self.next_log = done + total.div_ceil(10).max(1);
        }
    }
    fn advance(&mut self, step: u64) {
        if let Some(b) = &self.bar {
            b.set_position(step);
        } else if step >= self.next_log || step == self.total {
            let rate = (step - self.first) as f64 / self.started.elapsed().as_secs_f64().max(1e-9);
            eprintln!("step {step}/{} ({rate:.0} steps/s)", self.total);
            self.next_log = step + self.total.div_ceil(10).max(1);
        }
    }
    fn message(&mut self, msg: &str) {
        match &self.bar {
            Some(b) => b.println(msg),
            None => eprintln!("{msg}"),
        }
    }
    fn finish(&mut self) {
        if let Some(b) = self.bar.take() {
            b.finish_and_clear();
        }
    }
    fn compile_lines(&self) -> Option<run::LineSink> {
        Some(Box::new(|line| eprintln!("{line}")))
    }
}

/// `assets/scenes/default.toml` from the working directory, else from the source tree.
fn default_scene() -> PathBuf {
    let rel = PathBuf::from("assets/scenes/default.toml");
    if rel.exists() {
        rel
    } else {
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(rel)
    }
}

fn open(backend: BackendChoice) -> Result<Arc<GpuContext>, String> {
    let ctx = GpuContext::new(backend).map_err(|e| e.to_string())?;
    eprintln!("adapter: {}", ctx.describe());
    Ok(Arc::new(ctx))
}

fn main() -> ExitCode {
    env_logger::Builder::from_env(env_logger::Env::default().default_filter_or("error")).init();
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Run {
            scene,
            out,
            steps,
            resume,
            from,
            overwrite,
            scale,
            backend,
            realtime,
            preroll,
        } => cmd_run(
            scene.unwrap_or_else(default_scene),
            RunOptions {
                out_dir: out,
                steps,
                resume,
                from,
                overwrite,
            },
            scale,
            backend,
            realtime.then_some(preroll),
        ),
        Command::Info { backend } => cmd_info(backend),
        Command::Validate { scene } => cmd_validate(scene),
        Command::Plot { run_dir } => cmd_plot(run_dir),
        Command::Bench(args) => cmd_bench(args),
        Command::Render(args) => cmd_render(args),
        Command::Patch { file, out, backend } => cmd_patch(file, out, backend),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}

fn cmd_run(
    scene: PathBuf,
    opts: RunOptions,
    scale: Option<f64>,
    backend: BackendChoice,
    realtime: Option<u64>,
) -> Result<(), String> {
    // Validate before opening the GPU, so a bad file fails fast with its message.
    run::load_scene(&scene).map_err(|e| e.to_string())?;
    let ctx = open(backend)?;
    let stop = Arc::new(AtomicBool::new(false));
    {
        let stop = stop.clone();
        let _ = ctrlc::set_handler(move || {
            if stop.swap(true, Ordering::SeqCst) {
                std::process::exit(130);
            }
            // Ctrl-C, SIGTERM (what a batch scheduler sends at its time limit) or SIGHUP.
            eprintln!("\ninterrupted: finishing the current steps and writing the last frame, statistics and checkpoint (a second Ctrl-C or signal aborts)");
        });
    }
    let mut progress = CliProgress {
        bar: None,
        total: 0,
        first: 0,
        next_log: 0,
        started: std::time::Instant::now(),
    };
    let (r, rt) = if let Some(preroll) = realtime {
        let (r, rt) =
            run::run_scene_realtime(ctx, &scene, &opts, scale, &stop, &mut progress, preroll)
                .map_err(|e| e.to_string())?;
        (r, Some(rt))
    } else {
        let r = run::run_scene_scaled(ctx, &scene, &opts, scale, &stop, &mut progress)
            .map_err(|e| e.to_string())?;
        (r, None)
    };
    if let Some(rt) = &rt {
        println!("{rt}");
        println!("  per step    {}", rt.csv.display());
    }
    println!("{}", r.summary());
    println!("results in {}:", r.out_dir.display());
    println!(
        "  frames      {} (ParaView: open this; {} frames written)",
        r.pvd.display(),
        r.frames_written
    );
    println!("  statistics  {}", r.stats.display());
    if r.capped_steps > 0 {
        println!(
            "note: {} steps used the whole solver cap (max_iterations sweeps); the iterations \
             and residual columns of the statistics show which",
            r.capped_steps
        );
    }
    if r.budget_redos > 0 {
        println!(
            "note: {} batches were redone with the full sweep cap (a solve used its whole \
             adaptive sweep budget)",
            r.budget_redos
        );
    }
    if r.regrowths > 0 {
        println!(
            "note: {} batches were redone after a step overflowed the contact buffers (they \
             grew to fit)",
            r.regrowths
        );
    }
    println!("  checkpoint  {}", r.checkpoint.display());
    if r.interrupted {
        println!(
            "resume with: {}",
            resume_command(&scene, &r, &opts, scale, backend, realtime)
        );
    }
    Ok(())
}

/// The command that continues an interrupted run as it was started: the same scene, output
/// directory, step count, scale, backend and clock, from its checkpoint; every word quoted
/// for a POSIX shell where it needs it.
fn resume_command(
    scene: &std::path::Path,
    r: &run::RunReport,
    opts: &RunOptions,
    scale: Option<f64>,
    backend: BackendChoice,
    realtime: Option<u64>,
) -> String {
    let path = |p: &std::path::Path| run::owner::shell_word(&p.display().to_string());
    let mut words = vec!["bristlecone run".to_string(), path(scene)];
    words.extend(["--out".into(), path(&r.out_dir)]);
    words.extend(["--resume".into(), path(&r.checkpoint)]);
    if opts.steps.is_some() {
        words.extend(["--steps".into(), r.total_steps.to_string()]);
    }
    if let Some(f) = scale {
        words.extend(["--scale".into(), f.to_string()]);
    }
    match backend {
        BackendChoice::Auto => {}
        BackendChoice::Vulkan => words.extend(["--backend".into(), "vulkan".into()]),
        BackendChoice::Gl => words.extend(["--backend".into(), "gl".into()]),
    }
    if let Some(preroll) = realtime {
        words.extend(["--realtime".into(), "--preroll".into(), preroll.to_string()]);
    }
    words.join(" ")
}

fn cmd_info(backend: BackendChoice) -> Result<(), String> {
    let ctx = open(backend)?;
    let l = &ctx.limits;
    println!("adapter        {}", ctx.info.name);
    println!("backend        {:?}", ctx.info.backend);
    println!("device type    {:?}", ctx.info.device_type);
    println!(
        "driver         {} {}",
        ctx.info.driver, ctx.info.driver_info
    );
    println!(
        "max storage buffer binding  {} MiB",
        l.max_storage_buffer_binding_size >> 20
    );
    println!(
        "max buffer size             {} MiB",
        l.max_buffer_size >> 20
    );
    println!(
        "storage buffers per stage   {}",
        l.max_storage_buffers_per_shader_stage
    );
    println!("timestamp queries           {}", ctx.timestamps);
    let max_bodies = l.max_storage_buffer_binding_size / 16;
    println!("max bodies (16 B per array element)  {max_bodies}");
    Ok(())
}

fn cmd_validate(scene: PathBuf) -> Result<(), String> {
    let (s, _) = run::load_scene(&scene).map_err(|e| e.to_string())?;
    // The [render] table is the renderer's; check it here too.
    let text =
        bristlecone::io::capped::read_toml(&scene, "scene file").map_err(|e| e.to_string())?;
    bristlecone::render::settings::read_table(&text, &scene).map_err(|e| e.to_string())?;
    let pools: usize = s.inflows.iter().map(|f| f.pool.len()).sum();
    let pools = match pools {
        0 => String::new(),
        n => format!(" (and {n} that inflows insert)"),
    };
    println!(
        "{}: valid. '{}': {} bodies{pools}, {} boundaries, {} materials, dt = {} s, {} steps ({} s)",
        scene.display(),
        s.name,
        s.bodies.len(),
        s.boundaries.len(),
        s.materials.len(),
        Num(s.sim.dt),
        s.sim.steps,
        Num(s.sim.steps as f64 * s.sim.dt)
    );
    for w in &s.warnings {
        println!("warning: {w}");
    }
    let memory = bristlecone::limits::validate_lines(&s);
    for line in memory.map_err(|e| format!("{}: {e}", scene.display()))? {
        println!("{line}");
    }
    Ok(())
}

fn cmd_plot(run_dir: PathBuf) -> Result<(), String> {
    let written = bristlecone::plot::plot_run(&run_dir).map_err(|e| e.to_string())?;
    if written.is_empty() {
        println!(
            "nothing to plot in {} (no non-zero series)",
            run_dir.display()
        );
    }
    for p in written {
        println!("{}", p.display());
    }
    Ok(())
}

#[derive(clap::Args)]
struct BenchArgs {
    /// Grain counts (comma-separated, each at least 1).
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "1000,10000,100000,1000000",
        value_parser = grain_count
    )]
    sizes: Vec<usize>,
    /// Measured steps per run (default: 100 at 10^3, 20 at 10^4, 5 from 10^5 on).
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..))]
    steps: Option<u32>,
    /// Unmeasured steps run before the measured ones. The scenes start as cold lattices, so
    /// the default measures their settling; e.g. 100 measures the 10^3 and 10^4 piles at rest.
    #[arg(long, default_value_t = 2)]
    warmup: u32,
    /// Output directory for bench.csv and bench.json.
    #[arg(long, default_value = "out/bench")]
    out: PathBuf,
    /// pile, hopper, column, all (pile and hopper) or a comma-separated list.
    #[arg(long, default_value = "all")]
    scene: String,
    /// Depths in layers (comma-separated), in place of --sizes: each scene's lattice that
    /// many layers deep (column: 6 grains wide at any depth; pile: as tall as wide).
    #[arg(long, value_delimiter = ',', value_parser = layer_count, conflicts_with = "sizes")]
    layers: Vec<usize>,
    /// The packs (comma-separated): lattice (built at rest) and random (the same grains as a
    /// random_fill, settled under gravity and saved under --packs, measured from there).
    #[arg(long, value_delimiter = ',', default_value = "lattice", value_parser = ["lattice", "random"])]
    pack: Vec<String>,
    /// Where settled random packs are saved and found again (default: OUT/packs).
    #[arg(long)]
    packs: Option<PathBuf>,
    /// Maximum solver sweeps per step (1 to 100000, as `[solver] max_iterations`).
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=100_000))]
    iterations: Option<u32>,
    /// The solvers (as `[solver] kind`), comma-separated: apgd (the default), jacobi,
    /// gauss_seidel, and gauss_seidel_slabs (with `coarse_slab` = 2 grain diameters); each
    /// scene and size runs with each in turn, so their ratios come from one run.
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "apgd",
        value_parser = ["apgd", "jacobi", "gauss_seidel", "gauss_seidel_slabs"]
    )]
    solver: Vec<String>,
    /// Relaxation ω (as `[solver] omega`) for every solver listed: Jacobi's step, or
    /// Gauss–Seidel's over-relaxation (below 2); each solver's default when not given.
    #[arg(long)]
    omega: Option<f32>,
    /// Time stages by the CPU clock (separate submissions) even where timestamps exist.
    #[arg(long)]
    wall_timing: bool,
    /// Also run the same scenes in Rapier (needs a build with `--features peer`).
    #[arg(long)]
    peer: bool,
    /// Grain counts for the Rapier comparison.
    #[arg(long, value_delimiter = ',', default_value = "1000,10000", value_parser = grain_count)]
    peer_sizes: Vec<usize>,
    /// Steps of each Rapier comparison run (both engines).
    #[arg(long, default_value_t = 200)]
    peer_steps: u32,
    /// Gauss–Seidel recolours every step (the cost before it kept its colouring while the
    /// constraint graph is unchanged; the same results).
    #[arg(long, hide = true)]
    recolour_every_step: bool,
    #[arg(long, default_value = "auto")]
    backend: BackendChoice,
}

/// The bench's solver of `[solver] kind` name `kind`, with the sweep cap and ω given.
fn bench_solver_settings(
    kind: &str,
    iterations: Option<u32>,
    omega: Option<f32>,
) -> Result<bristlecone::solve::SolverSettings, String> {
    let mut solver = bristlecone::bench::bench_solver();
    if let Some(it) = iterations {
        solver.max_iterations = it.max(1);
    }
    solver.kind = match kind {
        "jacobi" => SolverKind::Jacobi,
        "gauss_seidel" | "gauss_seidel_slabs" => SolverKind::GaussSeidel,
        _ => SolverKind::Apgd,
    };
    if kind == "gauss_seidel_slabs" {
        solver.coarse_slab = bristlecone::bench::BENCH_SLAB_HEIGHT;
    }
    solver.omega = solver.kind.default_omega() as f32;
    if let Some(omega) = omega {
        let gauss_seidel = solver.kind == SolverKind::GaussSeidel;
        if !(omega > 0.0 && (omega < 2.0 || !gauss_seidel)) {
            return Err(format!(
                "--omega {omega}: must be positive{}",
                if gauss_seidel {
                    " and below 2 for gauss_seidel"
                } else {
                    ""
                }
            ));
        }
        solver.omega = omega;
    }
    Ok(solver)
}

/// A benchmark depth: a whole number of layers, at least 2.
fn layer_count(s: &str) -> Result<usize, String> {
    match s.trim().parse::<usize>() {
        Ok(n) if n < 2 => Err(format!("a depth must be at least 2 layers (got {n})")),
        Ok(n) => Ok(n),
        Err(e) => Err(format!("{s:?} is not a layer count: {e}")),
    }
}

/// A benchmark size: a whole number of grains, at least 1.
fn grain_count(s: &str) -> Result<usize, String> {
    match s.trim().parse::<usize>() {
        Ok(0) => Err("a size must be at least 1 grain (got 0)".into()),
        Ok(n) => Ok(n),
        Err(e) => Err(format!("{s:?} is not a grain count: {e}")),
    }
}

fn cmd_bench(a: BenchArgs) -> Result<(), String> {
    use bristlecone::bench::{self, BenchOptions, Pack, SceneKind, Timing};
    let mut scenes = Vec::new();
    for name in a.scene.split(',').map(str::trim) {
        match name {
            "pile" => scenes.push(SceneKind::Pile),
            "hopper" => scenes.push(SceneKind::Hopper),
            "column" => scenes.push(SceneKind::Column),
            "all" => scenes.extend([SceneKind::Pile, SceneKind::Hopper]),
            other => {
                return Err(format!(
                    "unknown scene '{other}' (expected pile, hopper, column or all)"
                ))
            }
        }
    }
    let packs: Vec<Pack> = (a.pack.iter())
        .map(|p| {
            if p == "random" {
                Pack::Random
            } else {
                Pack::Lattice
            }
        })
        .collect();
    if a.packs.is_some() && !packs.contains(&Pack::Random) {
        return Err("--packs DIR: only random packs are saved there; add --pack random".into());
    }
    if a.peer && !cfg!(feature = "peer") {
        return Err(
            "--peer needs a build with the Rapier peer: cargo run --release --features peer -- bench --peer"
                .into(),
        );
    }
    let solvers = (a.solver.iter())
        .map(|kind| bench_solver_settings(kind, a.iterations, a.omega))
        .collect::<Result<Vec<_>, _>>()?;
    let opts = BenchOptions {
        sizes: a.sizes,
        layers: a.layers,
        packs,
        packs_dir: Some(a.packs.unwrap_or_else(|| a.out.join("packs"))),
        steps: a.steps,
        warmup: a.warmup,
        scenes,
        solvers,
        timing: if a.wall_timing {
            Timing::Wall
        } else {
            Timing::Auto
        },
        out: Some(a.out.clone()),
        recolour_every_step: a.recolour_every_step,
        ..Default::default()
    };
    let ctx = open(a.backend)?;
    let report = bench::run(&ctx, &opts, &mut |line| eprintln!("{line}"))?;
    println!("{}", report.table());
    println!(
        "wrote {} and {}",
        a.out.join("bench.csv").display(),
        a.out.join("bench.json").display()
    );
    #[cfg(feature = "peer")]
    if a.peer {
        let t = std::time::Instant::now();
        let peer = bench::peer::compare(
            &ctx,
            &opts.scenes,
            &a.peer_sizes,
            a.peer_steps,
            opts.solvers[0],
            &mut |line| eprintln!("{line}"),
        )?;
        println!("{}", peer.table());
        peer.write(&a.out).map_err(|e| e.to_string())?;
        println!(
            "wrote {} and {} ({:.1} s)",
            a.out.join("peer.csv").display(),
            a.out.join("peer.json").display(),
            t.elapsed().as_secs_f64()
        );
    }
    #[cfg(not(feature = "peer"))]
    let _ = (a.peer_sizes, a.peer_steps);
    Ok(())
}

#[derive(clap::Args)]
struct RenderArgs {
    /// A run's output directory (particles.pvd, frames/, scene.toml).
    run_dir: PathBuf,
    /// Frame to draw (0-based index in particles.pvd); default: the last.
    #[arg(long, conflicts_with = "all")]
    frame: Option<usize>,
    /// Every frame, plus animation.png (APNG), contact_sheet.png and animation.mp4.
    #[arg(long)]
    all: bool,
    /// Output directory (default: RUN_DIR/render).
    #[arg(long)]
    out: Option<PathBuf>,
    /// Scene file (default: RUN_DIR/scene.toml; give the original when it has relative paths).
    #[arg(long)]
    scene: Option<PathBuf>,
    /// The --scale of the run (to colour by material).
    #[arg(long)]
    scale: Option<f64>,
    /// iso, front or top (framed on the scene's bounds).
    #[arg(long)]
    camera: Option<bristlecone::render::camera::Preset>,
    /// Explicit camera position x,y,z (with --target).
    #[arg(long, value_delimiter = ',', allow_hyphen_values = true)]
    eye: Option<Vec<f64>>,
    /// Point looked at x,y,z (with --eye).
    #[arg(long, value_delimiter = ',', allow_hyphen_values = true)]
    target: Option<Vec<f64>>,
    /// Vertical field of view in degrees.
    #[arg(long)]
    fov: Option<f64>,
    /// Image width in pixels.
    #[arg(long)]
    width: Option<u32>,
    /// Image height in pixels.
    #[arg(long)]
    height: Option<u32>,
    /// Background: #rrggbb, white or black.
    #[arg(long)]
    background: Option<String>,
    /// speed or material.
    #[arg(long)]
    color_by: Option<bristlecone::render::ColorBy>,
    /// Speed colour range min,max in m/s.
    #[arg(long, value_delimiter = ',', allow_hyphen_values = true)]
    range: Option<Vec<f64>>,
    /// Draw force chains from the contact frames.
    #[arg(long)]
    force_chains: bool,
    /// No shadows.
    #[arg(long)]
    no_shadows: bool,
    /// Supersampling factor per side (1..=4).
    #[arg(long)]
    supersample: Option<u32>,
    /// Animation frames per second.
    #[arg(long)]
    fps: Option<u32>,
    #[arg(long, default_value = "auto")]
    backend: BackendChoice,
}

fn cmd_render(a: RenderArgs) -> Result<(), String> {
    use bristlecone::render::{self, FrameSelect, RenderOptions, ViewLayer};
    let v3 = |name: &str, v: Option<Vec<f64>>| match v.as_deref() {
        None => Ok(None),
        Some(&[x, y, z]) => Ok(Some([x, y, z])),
        Some(v) => Err(format!("--{name} needs x,y,z (got {} values)", v.len())),
    };
    let range = match a.range.as_deref() {
        None => None,
        Some(&[lo, hi]) => Some((lo, hi)),
        Some(v) => return Err(format!("--range needs min,max (got {} values)", v.len())),
    };
    let background = a
        .background
        .as_deref()
        .map(render::settings::parse_color)
        .transpose()?;
    let flags = ViewLayer {
        camera: a.camera,
        eye: v3("eye", a.eye)?,
        target: v3("target", a.target)?,
        fov: a.fov,
        width: a.width,
        height: a.height,
        background,
        color_by: a.color_by,
        range,
        force_chains: a.force_chains.then_some(true),
        shadows: a.no_shadows.then_some(false),
        supersample: a.supersample,
        fps: a.fps,
        ..Default::default()
    };
    let opts = RenderOptions {
        frames: match (a.all, a.frame) {
            (true, _) => FrameSelect::All,
            (false, Some(i)) => FrameSelect::Index(i),
            (false, None) => FrameSelect::Last,
        },
        out: a.out,
        scene: a.scene,
        scale: a.scale,
        flags,
    };
    // Read and check the run before opening the GPU, so bad input fails fast.
    let prepared = render::prepare(&a.run_dir, &opts).map_err(|e| e.to_string())?;
    let ctx = open(a.backend)?;
    let r =
        render::render_prepared(ctx, &prepared, &a.run_dir, &opts).map_err(|e| e.to_string())?;
    println!(
        "{} frame(s), {:.3} s per frame ({} bodies in the last)",
        r.frames, r.seconds_per_frame, r.spheres_last
    );
    if let Some(note) = r.mp4_note {
        println!("{note}");
    }
    for p in r.written {
        println!("{}", p.display());
    }
    Ok(())
}

fn cmd_patch(file: PathBuf, out: PathBuf, backend: BackendChoice) -> Result<(), String> {
    use bristlecone::patch::file;
    let pf = file::load(&file).map_err(|e| e.to_string())?;
    let ctx = if pf.gpu { Some(open(backend)?) } else { None };
    let hist = pf.run(ctx.as_deref())?;
    for p in file::write_outputs(&out, &hist, pf.patch.shape.cop)? {
        println!("wrote {}", p.display());
    }
    Ok(())
}
