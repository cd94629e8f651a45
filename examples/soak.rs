//! A soak: one scene stepped for a long time on the device, reporting what a long run
//! would suffer from: drift of the total energy (kinetic + gravitational), growth of the
//! process's resident memory, and the largest wall time of one step.
//!
//! ```text
//! nice -n 19 cargo run --release --example soak -- SCENE [--scale S] [--steps N] [--every K] [--batch B]
//! ```
//!
//! Every K steps (default 1000) a line `step,time_s,kinetic_J,potential_J,total_J,rss_MiB,
//! max_step_ms,steps_per_s` goes to standard output; the summary at the end gives the total
//! energy's change since the first report, the resident memory's change since the first
//! report and the largest step time. By default steps are advanced one at a time so that
//! the largest step time is that of one step, not of a batch's mean; `--batch B` (a divisor
//! of K) advances B steps per call, as a run does between frames (results do not depend on
//! the batching), and the largest step time is then the largest batch's mean per step.

use bristlecone::bodies::BodyState;
use bristlecone::step::Simulation;
use std::path::PathBuf;
use std::time::Instant;

struct Args {
    scene: PathBuf,
    scale: Option<f64>,
    steps: u64,
    every: u64,
    batch: u64,
}

fn parse_args() -> Result<Args, String> {
    let mut args = std::env::args().skip(1);
    let scene = args
        .next()
        .ok_or("usage: soak SCENE [--scale S] [--steps N] [--every K] [--batch B]")?;
    let mut out = Args {
        scene: scene.into(),
        scale: None,
        steps: 1_000_000,
        every: 1000,
        batch: 1,
    };
    while let Some(flag) = args.next() {
        let value = args.next().ok_or(format!("{flag}: a value is missing"))?;
        let bad = |e: &dyn std::fmt::Display| format!("{flag} {value}: {e}");
        match flag.as_str() {
            "--scale" => out.scale = Some(value.parse().map_err(|e| bad(&e))?),
            "--steps" => out.steps = value.parse().map_err(|e| bad(&e))?,
            "--every" => out.every = value.parse().map_err(|e| bad(&e))?,
            "--batch" => out.batch = value.parse().map_err(|e| bad(&e))?,
            _ => return Err(format!("unknown option {flag}")),
        }
    }
    if out.steps == 0 || out.every == 0 || out.batch == 0 {
        return Err("--steps, --every and --batch must be positive".into());
    }
    if !out.every.is_multiple_of(out.batch) {
        return Err(format!(
            "--batch {} must divide --every {}",
            out.batch, out.every
        ));
    }
    Ok(out)
}

/// Resident memory of this process (`VmRSS` of /proc/self/status), MiB.
fn rss_mib() -> f64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            let line = s.lines().find(|l| l.starts_with("VmRSS:"))?;
            line.split_whitespace().nth(1)?.parse::<f64>().ok()
        })
        .map_or(f64::NAN, |kib| kib / 1024.0)
}

/// Gravitational potential energy Σ −m g·x of the dynamic bodies (inverse mass in
/// `mass_props.w`; fixed and kinematic bodies hold 0 there).
fn potential(state: &BodyState, gravity: [f64; 3]) -> f64 {
    state
        .pos
        .iter()
        .zip(&state.mass_props)
        .filter(|(_, m)| m[3] > 0.0)
        .map(|(p, m)| {
            let mass = 1.0 / m[3] as f64;
            -mass * (0..3).map(|i| gravity[i] * p[i] as f64).sum::<f64>()
        })
        .sum()
}

fn report(sim: &Simulation, kinetic: f64, gravity: [f64; 3]) -> Result<(f64, f64), String> {
    let state = sim.read_state().map_err(|e| e.to_string())?;
    let p = potential(&state, gravity);
    Ok((p, kinetic + p))
}

fn main() {
    let args = parse_args().unwrap_or_else(|e| {
        eprintln!("{e}");
        std::process::exit(2)
    });
    let (scene, _) =
        bristlecone::run::load_scene_scaled(&args.scene, args.scale).unwrap_or_else(|e| {
            eprintln!("{e}");
            std::process::exit(1)
        });
    let state = bristlecone::setup::build_bodies(&scene);
    let ctx = bristlecone::gpu::shared_context();
    eprintln!(
        "soak: {} ({} bodies, {} joints), {} steps of {} s on {}",
        scene.name,
        scene.bodies.len(),
        scene.joints.len(),
        args.steps,
        scene.sim.dt,
        ctx.describe()
    );
    let mut sim = bristlecone::run::open_simulation(ctx, &scene, &state).unwrap_or_else(|e| {
        eprintln!("{e}");
        std::process::exit(1)
    });
    let gravity = scene.sim.gravity;
    println!("step,time_s,kinetic_J,potential_J,total_J,rss_MiB,max_step_ms,steps_per_s");
    let mut first: Option<(f64, f64)> = None;
    let (mut max_step_ms, mut max_step_at, mut window_max) = (0.0f64, 0u64, 0.0f64);
    let (mut last_energy, mut last_rss) = (f64::NAN, f64::NAN);
    let mut window = Instant::now();
    while sim.step_index() < args.steps {
        let t0 = Instant::now();
        let batch = args.batch.min(args.steps - sim.step_index());
        let records = match sim.advance(batch as u32, batch) {
            Ok(r) => r,
            Err(e) => {
                eprintln!("step {}: {e}", sim.step_index());
                std::process::exit(1);
            }
        };
        let ms = t0.elapsed().as_secs_f64() * 1e3 / batch as f64;
        window_max = window_max.max(ms);
        // The first steps compile the kernels: not a step time a long run sees again.
        if sim.step_index() > 10.max(args.batch) && ms > max_step_ms {
            (max_step_ms, max_step_at) = (ms, sim.step_index());
        }
        let s = sim.step_index();
        if s.is_multiple_of(args.every) || s == args.steps {
            let rec = records.last().expect("a step's record");
            let kinetic = rec.totals.kinetic_energy;
            let (p, total) = report(&sim, kinetic, gravity).unwrap_or_else(|e| {
                eprintln!("step {s}: {e}");
                std::process::exit(1)
            });
            let rss = rss_mib();
            first.get_or_insert((total, rss));
            (last_energy, last_rss) = (total, rss);
            let rate = args.every as f64 / window.elapsed().as_secs_f64();
            println!(
                "{s},{:.6},{kinetic:.9e},{p:.9e},{total:.9e},{rss:.1},{window_max:.3},{rate:.1}",
                rec.time
            );
            window = Instant::now();
            window_max = 0.0;
        }
    }
    let (e0, rss0) = first.unwrap_or((f64::NAN, f64::NAN));
    eprintln!(
        "soak: {} steps; total energy {e0:.6e} J -> {last_energy:.6e} J (change {:.3e} J, \
         {:.3e} of the first); RSS {rss0:.1} -> {last_rss:.1} MiB; largest step {max_step_ms:.2} \
         ms (step {max_step_at})",
        sim.step_index(),
        last_energy - e0,
        (last_energy - e0) / e0.abs(),
    );
}
