//! Running a scene file: the loop that steps the simulation in batches and writes frames,
//! statistics and checkpoints. Shared by the command line and the tests.

use crate::gpu::{GpuContext, GpuError};
use crate::io::{self, Checkpoint, Collection, IoError, ParticleFrame, StatsRow, StatsWriter};
use crate::scene::{self, Scene, SceneError};
use crate::setup;
use crate::step::{Simulation, StepRecord};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Instant;

/// Most steps recorded into one submission: bounds the latency of Ctrl-C and progress.
const MAX_BATCH: u64 = 50;

#[derive(Clone, Debug, Default)]
pub struct RunOptions {
    /// Output directory; default: the scene's `[output].dir`.
    pub out_dir: Option<PathBuf>,
    /// Total steps to reach (counted from step 0, also when resuming); default: the scene's.
    pub steps: Option<u64>,
    /// Continue from this checkpoint.
    pub resume: Option<PathBuf>,
}

#[derive(Clone, Debug)]
pub struct RunReport {
    pub out_dir: PathBuf,
    pub scene_name: String,
    pub bodies: usize,
    pub steps_done: u64,
    pub total_steps: u64,
    pub frames_written: usize,
    pub interrupted: bool,
    pub pvd: PathBuf,
    pub stats: PathBuf,
    pub checkpoint: PathBuf,
    pub wall_seconds: f64,
}

#[derive(Debug, thiserror::Error)]
pub enum RunError {
    #[error("{0}")]
    Scene(#[from] SceneError),
    #[error("{0}")]
    Gpu(#[from] GpuError),
    #[error("{0}")]
    Io(#[from] IoError),
    #[error("cannot read scene file {path}: {source}")]
    ReadScene {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("cannot create output directory {path}: {source}")]
    OutDir {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("cannot resume from {path}: {message}")]
    Resume { path: PathBuf, message: String },
    #[error("the simulation diverged at step {step} (t = {time} s): {what}; nothing from this step was written")]
    Diverged { step: u64, time: f64, what: String },
}

/// Receives progress; the command line shows a bar or log lines.
pub trait Progress {
    fn start(&mut self, _done: u64, _total: u64) {}
    fn advance(&mut self, _step: u64) {}
    fn message(&mut self, _msg: &str) {}
    fn finish(&mut self) {}
}

/// No progress output (tests, library use).
pub struct Silent;
impl Progress for Silent {}

struct Outputs {
    dir: PathBuf,
    pvd: Collection,
    stats: StatsWriter,
    frames: usize,
    n_boundaries: usize,
    vtk: bool,
}

impl Outputs {
    fn frame_name(step: u64) -> String {
        format!("frames/particles_{step:08}.vtp")
    }

    fn write_frame(&mut self, sim: &Simulation) -> Result<(), RunError> {
        if !self.vtk {
            return Ok(());
        }
        let s = sim.bodies.download_kinematics(&sim.ctx)?;
        let nb = self.n_boundaries;
        let xyz = |v: &[[f32; 4]]| -> Vec<[f32; 3]> {
            v[nb..].iter().map(|p| [p[0], p[1], p[2]]).collect()
        };
        let positions = xyz(&s.pos);
        let radii: Vec<f32> = s.pos[nb..].iter().map(|p| p[3]).collect();
        let velocities = xyz(&s.vel);
        let angular = xyz(&s.omega);
        let ids: Vec<u32> = (nb as u32..s.len() as u32).collect();
        let name = Self::frame_name(sim.step_index());
        let frame = ParticleFrame {
            step: sim.step_index(),
            time: sim.time(),
            positions: &positions,
            radii: &radii,
            velocities: &velocities,
            angular_velocities: &angular,
            ids: &ids,
            scalars: Vec::new(),
            vectors: Vec::new(),
        };
        io::write_particles(&self.dir.join(&name), &frame).map_err(|e| match e {
            IoError::NonFinite { .. } => RunError::Diverged {
                step: sim.step_index(),
                time: sim.time(),
                what: e.to_string(),
            },
            e => e.into(),
        })?;
        self.pvd.add(sim.time(), name)?;
        self.frames += 1;
        Ok(())
    }
}

fn checkpoint(sim: &Simulation, scene_hash: u64) -> Result<Checkpoint, RunError> {
    Ok(Checkpoint {
        step: sim.step_index(),
        time: sim.time(),
        scene_hash,
        sections: sim.checkpoint_sections()?,
    })
}

fn stats_row(r: &StepRecord, wall_ms: f64) -> Result<StatsRow, RunError> {
    let t = &r.totals;
    let finite = t.kinetic_energy.is_finite()
        && t.momentum
            .iter()
            .chain(&t.angular_momentum)
            .all(|x| x.is_finite());
    if !finite {
        return Err(RunError::Diverged {
            step: r.step,
            time: r.time,
            what: format!(
                "non-finite statistics (kinetic energy {})",
                t.kinetic_energy
            ),
        });
    }
    Ok(StatsRow {
        step: r.step,
        time: r.time,
        kinetic_energy: t.kinetic_energy,
        momentum: t.momentum,
        angular_momentum: t.angular_momentum,
        contacts: r.contacts as u64,
        iterations: r.iterations,
        residual: r.residual,
        max_penetration: r.max_penetration,
        wall_ms,
    })
}

/// Loads and validates a scene file, returning it with the hash of its text.
pub fn load_scene(path: &Path) -> Result<(Scene, u64), RunError> {
    let text = std::fs::read_to_string(path).map_err(|source| RunError::ReadScene {
        path: path.to_path_buf(),
        source,
    })?;
    let scene = scene::parse_str(&text, path)?;
    Ok((scene, io::hash_bytes(text.as_bytes())))
}

/// Runs a scene file to completion (or until `stop` is set), writing its outputs.
pub fn run_scene(
    ctx: Arc<GpuContext>,
    scene_path: &Path,
    opts: &RunOptions,
    stop: &AtomicBool,
    progress: &mut dyn Progress,
) -> Result<RunReport, RunError> {
    let started = Instant::now();
    let (scene, scene_hash) = load_scene(scene_path)?;
    for w in &scene.warnings {
        progress.message(&format!("warning: {w}"));
    }
    let dir = opts
        .out_dir
        .clone()
        .unwrap_or_else(|| scene.output.dir.clone());
    std::fs::create_dir_all(dir.join("frames")).map_err(|source| RunError::OutDir {
        path: dir.clone(),
        source,
    })?;
    let state = setup::build_bodies(&scene);
    let mut sim = Simulation::new(ctx, &state, setup::step_settings(&scene))?;
    let total = opts.steps.unwrap_or(scene.sim.steps);
    let stats_path = dir.join("stats.csv");
    let pvd_path = dir.join("particles.pvd");
    let ckpt_path = dir.join("checkpoint.bin");
    let mut out = if let Some(from) = &opts.resume {
        let ck = io::read_checkpoint(from)?;
        let fail = |message: String| RunError::Resume {
            path: from.clone(),
            message,
        };
        if ck.scene_hash != scene_hash {
            return Err(fail(format!(
                "it was written for a different scene file than {} (scene hash {:016x}, this file {:016x})",
                scene_path.display(),
                ck.scene_hash,
                scene_hash
            )));
        }
        sim.restore_sections(ck.step, &ck).map_err(fail)?;
        let mut pvd = if pvd_path.exists() {
            Collection::read(&pvd_path)?
        } else {
            Collection::new(&pvd_path)
        };
        pvd.retain_until(ck.time);
        Outputs {
            dir: dir.clone(),
            pvd,
            stats: StatsWriter::append_to(&stats_path, ck.step)?,
            frames: 0,
            n_boundaries: setup::boundary_count(&scene),
            vtk: scene.output.vtk,
        }
    } else {
        let _ = std::fs::copy(scene_path, dir.join("scene.toml"));
        let mut o = Outputs {
            dir: dir.clone(),
            pvd: Collection::new(&pvd_path),
            stats: StatsWriter::create(&stats_path)?,
            frames: 0,
            n_boundaries: setup::boundary_count(&scene),
            vtk: scene.output.vtk,
        };
        o.write_frame(&sim)?;
        o
    };
    let frame_every = scene.output.frame_every.max(1);
    let ckpt_every = scene.output.checkpoint_every;
    let next_multiple = |s: u64, k: u64| (s / k + 1) * k;
    progress.start(sim.step_index(), total);
    let mut last_frame = sim.step_index();
    let mut result = Ok(());
    while sim.step_index() < total && !stop.load(Ordering::SeqCst) {
        let s = sim.step_index();
        let mut until = total.min(next_multiple(s, frame_every)).min(s + MAX_BATCH);
        if ckpt_every > 0 {
            until = until.min(next_multiple(s, ckpt_every));
        }
        let t0 = Instant::now();
        let records = match sim.advance((until - s) as u32, scene.output.stats_every) {
            Ok(r) => r,
            Err(e) => {
                result = Err(e.into());
                break;
            }
        };
        let wall_ms = t0.elapsed().as_secs_f64() * 1e3 / (until - s) as f64;
        for r in &records {
            match stats_row(r, wall_ms) {
                Ok(row) => out.stats.append(&row)?,
                Err(e) => {
                    result = Err(e);
                    break;
                }
            }
        }
        if result.is_err() {
            break;
        }
        let s = sim.step_index();
        if s % frame_every == 0 || s == total {
            if let Err(e) = out.write_frame(&sim) {
                result = Err(e);
                break;
            }
            last_frame = s;
            out.stats.flush()?;
        }
        if ckpt_every > 0 && s % ckpt_every == 0 {
            io::write_checkpoint(&ckpt_path, &checkpoint(&sim, scene_hash)?)?;
        }
        progress.advance(s);
    }
    progress.finish();
    // Whatever happened, keep what was computed: statistics so far, and on a clean stop
    // (finished or Ctrl-C) the last frame and a checkpoint to resume from.
    out.stats.flush()?;
    result?;
    if sim.step_index() != last_frame {
        out.write_frame(&sim)?;
    }
    io::write_checkpoint(&ckpt_path, &checkpoint(&sim, scene_hash)?)?;
    out.stats.finish()?;
    Ok(RunReport {
        out_dir: dir,
        scene_name: scene.name.clone(),
        bodies: scene.bodies.len(),
        steps_done: sim.step_index(),
        total_steps: total,
        frames_written: out.frames,
        interrupted: sim.step_index() < total,
        pvd: pvd_path,
        stats: stats_path,
        checkpoint: ckpt_path,
        wall_seconds: started.elapsed().as_secs_f64(),
    })
}
