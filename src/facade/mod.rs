//! The library's front door: a scene's simulation stepped from code — what the command
//! line's run loop does, without its output directory — with its state and contacts as
//! arrays, setters between steps, checkpoints the command line resumes (and the other way
//! round), and the command line's VTK frames. The Python package is a thin layer over it.
//!
//! Steps are taken in the run loop's batches, with the scene's prescribed motion
//! (`schedule = [...]`) applied at its steps, so a scene stepped here reaches the same bits
//! as `bristlecone run` of the same file.
//!
//! # Example
//!
//! ```
//! use bristlecone::{gpu::BackendChoice, scene, Simulation};
//! use std::path::Path;
//!
//! let text = r#"
//! [simulation]
//! dt = 1e-3
//! steps = 100
//! [[material]]
//! name = "steel"
//! density = 7800.0
//! friction = 0.3
//! [[body]]
//! radius = 0.01
//! position = [0.0, 0.0, 0.015]
//! [[boundary]]
//! kind = "plane"
//! point = [0.0, 0.0, 0.0]
//! normal = [0.0, 0.0, 1.0]
//! "#;
//! let scene = scene::parse_str(text, Path::new("ball.toml"))?;
//! let mut sim = Simulation::new(scene, BackendChoice::Auto)?;
//! sim.step(200)?;
//! let state = sim.state()?;
//! let ball = state.first_grain; // the plane is body 0
//! assert!((state.positions[ball][2] - 0.01).abs() < 1e-4); // at rest on the plane
//! let contacts = sim.contacts()?;
//! assert_eq!(contacts.len(), 1);
//! // The plane carries the ball's weight, m g = 7800 · 4/3 π 0.01³ · 9.81 N.
//! let weight = 7800.0 * 4.0 / 3.0 * std::f64::consts::PI * 1e-6 * 9.81;
//! assert!((contacts.forces[0][2].abs() - weight).abs() < 1e-3 * weight);
//! sim.set_gravity([0.0, 0.0, 9.81])?; // now it lifts off
//! sim.step(10)?;
//! assert!(sim.state()?.velocities[ball][2] > 0.0);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod measurements;
mod state;

pub use measurements::Measurement;
pub use state::{Contacts, State};

use crate::bodies::{MOTION_FIXED, MOTION_KINEMATIC};
use crate::gpu::{BackendChoice, GpuContext, GpuError};
use crate::io::{self, IoError};
use crate::run::changed::ChangedParameters;
use crate::run::flow::{self, Flow};
use crate::run::{self, FrameFiles, Probes, RunError, Schedules};
use crate::scene::{Scene, SceneError};
use crate::setup;
use crate::step::StepRecord;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

/// What went wrong in a [`Simulation`] call. A call that fails leaves the simulation as it
/// was, except [`Error::Run`] from a step (the device failed or the run diverged).
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A scene file, the device, a checkpoint or an output file.
    #[error("{0}")]
    Run(#[from] RunError),
    /// An argument out of its range (the message names it and the range).
    #[error("{0}")]
    Argument(String),
    /// A picture: its settings, or drawing it.
    #[error("{0}")]
    Render(crate::render::RenderError),
}

impl From<SceneError> for Error {
    fn from(e: SceneError) -> Self {
        Error::Run(e.into())
    }
}
impl From<GpuError> for Error {
    fn from(e: GpuError) -> Self {
        Error::Run(e.into())
    }
}
impl From<crate::render::RenderError> for Error {
    fn from(e: crate::render::RenderError) -> Self {
        Error::Render(e)
    }
}
impl From<IoError> for Error {
    fn from(e: IoError) -> Self {
        Error::Run(e.into())
    }
}

/// One device per backend choice for the whole process: simulations made with the same
/// choice share it (their submissions queue on it; each keeps its own buffers).
pub fn context(backend: BackendChoice) -> Result<Arc<GpuContext>, GpuError> {
    static OPEN: Mutex<Vec<(BackendChoice, Arc<GpuContext>)>> = Mutex::new(Vec::new());
    let mut open = OPEN.lock().unwrap_or_else(|e| e.into_inner());
    if let Some((_, ctx)) = open.iter().find(|(b, _)| *b == backend) {
        return Ok(ctx.clone());
    }
    let ctx = Arc::new(GpuContext::new(backend)?);
    open.push((backend, ctx.clone()));
    Ok(ctx)
}

/// A scene's simulation on a device (see the module documentation).
pub struct Simulation {
    scene: Scene,
    /// The hash that checkpoints carry: of the scene file's text, as the command line's.
    scene_hash: u64,
    sim: crate::step::Simulation,
    schedules: Schedules,
    n_boundaries: usize,
    last_record: Option<StepRecord>,
    /// The scene's `[[measure]]` samples, taken at the run loop's steps.
    probes: Probes,
    /// The parameters set since the scene (its checkpoints carry them).
    changed: ChangedParameters,
    /// The scene's inflows and outflows: their waves and removals, counters and rows.
    flow: Flow,
}

impl Simulation {
    /// The scene in `path`, as `bristlecone run path` loads it.
    pub fn from_scene_file(path: &Path, backend: BackendChoice) -> Result<Self, Error> {
        Self::from_scene_file_scaled(path, None, backend)
    }

    /// [`Simulation::from_scene_file`] with the generators shrunk as `run --scale` does.
    pub fn from_scene_file_scaled(
        path: &Path,
        scale: Option<f64>,
        backend: BackendChoice,
    ) -> Result<Self, Error> {
        let (scene, hash) = run::load_scene_scaled(path, scale)?;
        Self::with_hash(scene, hash, context(backend)?)
    }

    /// A scene parsed or built in code. Its checkpoints carry the hash of the scene's
    /// source text when it came with one (see [`Simulation::with_hash`]); here, 0.
    pub fn new(scene: Scene, backend: BackendChoice) -> Result<Self, Error> {
        Self::with_hash(scene, 0, context(backend)?)
    }

    /// A scene whose source text hashes to `scene_hash` ([`crate::io::hash_bytes`] of the
    /// file's bytes: what the command line writes into its checkpoints and checks on resume).
    pub fn with_hash(scene: Scene, scene_hash: u64, ctx: Arc<GpuContext>) -> Result<Self, Error> {
        let state = setup::build_bodies(&scene);
        crate::limits::check_run(&scene, &ctx)?;
        let sim = run::open_simulation(ctx, &scene, &state)?;
        // As a fresh run: every measurement sampled at step 0.
        let mut probes = Probes::in_memory(&scene, &state, sim.time());
        probes.sample(&sim, true)?;
        let flow = Flow::new(&scene, None, None, None)?;
        Ok(Simulation {
            schedules: Schedules::new(&scene),
            n_boundaries: setup::boundary_count(&scene),
            scene,
            scene_hash,
            sim,
            last_record: None,
            probes,
            changed: ChangedParameters::default(),
            flow,
        })
    }

    /// `scene`'s simulation continued from a checkpoint written by [`Simulation::checkpoint`]
    /// or by `bristlecone run` of the same scene text (`scene_hash` as in
    /// [`Simulation::with_hash`]), with the parameters set before that checkpoint was
    /// written (gravity, friction, motor targets), which its later checkpoints carry on.
    pub fn resume(
        scene: Scene,
        scene_hash: u64,
        ctx: Arc<GpuContext>,
        checkpoint: &Path,
    ) -> Result<Self, Error> {
        let mut sim = Self::with_hash(scene, scene_hash, ctx)?;
        let label = PathBuf::from(format!("scene '{}'", sim.scene.name));
        let ck = run::restore(&mut sim.sim, &sim.scene, checkpoint, &label, scene_hash)?;
        sim.changed = ChangedParameters::of(&ck).map_err(|message| RunError::Resume {
            path: checkpoint.to_path_buf(),
            message,
        })?;
        sim.changed.write_into(&mut sim.scene);
        sim.flow = Flow::new(&sim.scene, None, Some(&ck), None)?;
        // Measurements count from the checkpoint's state; as a resumed run, the next sample
        // is the first after its step.
        let state = sim.sim.read_state()?;
        sim.probes = Probes::in_memory(&sim.scene, &state, sim.time());
        Ok(sim)
    }

    /// Takes `n` steps in the run loop's batches (prescribed motion applied at its steps).
    /// A step whose statistics are not finite is an error naming it: the run diverged.
    pub fn step(&mut self, n: u64) -> Result<(), Error> {
        let total = self.sim.step_index() + n;
        while self.sim.step_index() < total {
            self.step_batch(total)?;
        }
        Ok(())
    }

    /// One batch towards step `total`: at most `run::MAX_BATCH` steps, ending at the next
    /// prescribed-motion change or measurement sample. The caller may stop between batches
    /// (Ctrl-C in Python).
    pub fn step_batch(&mut self, total: u64) -> Result<(), Error> {
        let s = self.sim.step_index();
        if s >= total {
            return Ok(());
        }
        self.schedules.apply(&mut self.sim, s);
        let changed = self.flow.apply(&mut self.sim, s)?;
        self.probes.forget(&changed);
        let mut until = total.min(s + run::MAX_BATCH);
        if let Some(change) = self.schedules.next_after(s) {
            until = until.min(change);
        }
        if let Some(event) = self.flow.next_after(s) {
            until = until.min(event);
        }
        if let Some(sample) = self.probes.next_sample(s) {
            until = until.min(sample);
        }
        let records = self
            .sim
            .advance((until - s) as u32, self.scene.output.stats_every)?;
        for r in &records {
            run::stats_row(r, 0.0)?;
        }
        self.last_record = records.last().cloned().or(self.last_record.take());
        self.probes.sample(&self.sim, false)?;
        Ok(())
    }

    /// The scene's `[[measure]]` time series sampled so far, in scene order, then each
    /// `[[inflow]]`'s and `[[outflow]]`'s counters at its waves and removals: the rows
    /// `bristlecone run` writes to `measurements/NAME.csv` at the same steps (from step 0, or
    /// after a resume from the first sample after the checkpoint; a resumed mass flow counts
    /// from the checkpoint, inflow and outflow counters from the start).
    pub fn measurements(&self) -> Vec<Measurement> {
        let measures = self.scene.measures.iter().zip(self.probes.kept());
        let measures = measures.map(|(spec, samples)| Measurement::new(spec, &self.scene, samples));
        let flows = self.flow.kept().into_iter().map(Measurement::of_flow);
        measures.chain(flows).collect()
    }

    /// Steps taken since step 0 (a resumed simulation counts from its checkpoint's).
    pub fn step_index(&self) -> u64 {
        self.sim.step_index()
    }

    /// Simulated time (s).
    pub fn time(&self) -> f64 {
        self.sim.time()
    }

    /// The scene as loaded (with the friction coefficients set since).
    pub fn scene(&self) -> &Scene {
        &self.scene
    }

    /// The statistics of the last recorded step (`[output] stats_every`), if any.
    pub fn last_record(&self) -> Option<&StepRecord> {
        self.last_record.as_ref()
    }

    /// The engine's simulation, for what this facade does not cover.
    pub fn engine(&self) -> &crate::step::Simulation {
        &self.sim
    }

    /// Every body's state now.
    pub fn state(&self) -> Result<State, Error> {
        let s = self.sim.read_state()?;
        Ok(State::new(
            self.step_index(),
            self.time(),
            &s,
            &self.scene,
            self.n_boundaries,
        ))
    }

    /// The contacts of the last step (empty before the first step).
    pub fn contacts(&self) -> Result<Contacts, Error> {
        if self.step_index() == 0 || self.sim.settings.contact.is_none() {
            return Ok(Contacts::default());
        }
        let s = self.sim.download_kinematics()?;
        let (records, impulses) = self.sim.read_contacts()?;
        Ok(Contacts::new(&s, &records, &impulses, self.sim.settings.dt))
    }

    fn body_motion(&self, body: usize, what: &str) -> Result<u32, Error> {
        let n = self.sim.bodies.count as usize;
        if body >= n {
            return Err(Error::Argument(format!(
                "{what}: body {body} does not exist (the simulation has bodies 0..{n})"
            )));
        }
        Ok(self.sim.read_state()?.info[body][0])
    }

    /// Sets a dynamic or kinematic body's velocity (m/s) and angular velocity (rad/s, world
    /// frame) from the next step on. A fixed body refuses.
    pub fn set_velocity(
        &mut self,
        body: usize,
        velocity: [f64; 3],
        angular_velocity: [f64; 3],
    ) -> Result<(), Error> {
        finite("set_velocity: velocity", &velocity)?;
        finite("set_velocity: angular_velocity", &angular_velocity)?;
        if self.body_motion(body, "set_velocity")? == MOTION_FIXED {
            return Err(Error::Argument(format!(
                "set_velocity: body {body} is fixed (only dynamic and kinematic bodies move)"
            )));
        }
        let f32s = |v: [f64; 3]| v.map(|x| x as f32);
        self.sim
            .set_velocity(body as u32, f32s(velocity), f32s(angular_velocity));
        Ok(())
    }

    /// Moves a kinematic body (a boundary or a `motion = "kinematic"` body) to `position`
    /// (m) with `orientation` (unit quaternion `[x, y, z, w]`) before the next step.
    pub fn set_kinematic_pose(
        &mut self,
        body: usize,
        position: [f64; 3],
        orientation: [f64; 4],
    ) -> Result<(), Error> {
        finite("set_kinematic_pose: position", &position)?;
        finite("set_kinematic_pose: orientation", &orientation)?;
        let norm = orientation.iter().map(|x| x * x).sum::<f64>().sqrt();
        if (norm - 1.0).abs() > 1e-6 {
            return Err(Error::Argument(format!(
                "set_kinematic_pose: orientation must be a unit quaternion [x, y, z, w] (its norm is {norm})"
            )));
        }
        if self.body_motion(body, "set_kinematic_pose")? != MOTION_KINEMATIC {
            return Err(Error::Argument(format!(
                "set_kinematic_pose: body {body} is not kinematic (only kinematic bodies are placed; give it motion = \"kinematic\")"
            )));
        }
        let mut s = self.sim.read_state()?;
        let w = s.pos[body][3];
        s.pos[body] = [
            position[0] as f32,
            position[1] as f32,
            position[2] as f32,
            w,
        ];
        s.rot[body] = orientation.map(|x| x as f32);
        self.sim.restore(self.sim.step_index(), &s);
        Ok(())
    }

    /// Gravity (m/s²) from the next step on.
    pub fn set_gravity(&mut self, gravity: [f64; 3]) -> Result<(), Error> {
        finite("set_gravity: gravity", &gravity)?;
        self.sim.set_gravity(gravity);
        self.scene.sim.gravity = gravity;
        self.changed.set_gravity(gravity);
        Ok(())
    }

    /// The Coulomb friction coefficient of the material named `material` (≥ 0) from the
    /// next step on: the contact stages are rebuilt with it around the current state, warm
    /// start and buffer sizes, exactly as a run of the changed scene resumed here would be.
    pub fn set_friction(&mut self, material: &str, friction: f64) -> Result<(), Error> {
        let Some(k) = self.scene.materials.iter().position(|m| m.name == material) else {
            let names: Vec<_> = self
                .scene
                .materials
                .iter()
                .map(|m| m.name.as_str())
                .collect();
            return Err(Error::Argument(format!(
                "set_friction: no material '{material}' (the scene has {names:?})"
            )));
        };
        if !(friction.is_finite() && friction >= 0.0) {
            return Err(Error::Argument(format!(
                "set_friction: material '{material}': friction must be ≥ 0 (got {friction})"
            )));
        }
        self.rebuild_contacts(|sim| {
            if let Some(c) = sim.settings.contact.as_mut() {
                c.collide.friction[k] = friction as f32;
            }
            Ok(())
        })?;
        self.scene.materials[k].friction = friction;
        self.changed.set_friction(material, friction);
        Ok(())
    }

    /// The motor target of joint `joint` (order of the scene's `[[joint]]` tables): a
    /// velocity (m/s or rad/s) for a velocity motor, a position (m or rad) for a position
    /// motor; its kind and force limit stay.
    pub fn set_motor_target(&mut self, joint: usize, target: f64) -> Result<(), Error> {
        if !target.is_finite() {
            return Err(Error::Argument(format!(
                "set_motor_target: target must be finite (got {target})"
            )));
        }
        let mut joints = self.sim.joints().to_vec();
        let n = joints.len();
        let Some(j) = joints.get_mut(joint) else {
            return Err(Error::Argument(format!(
                "set_motor_target: joint {joint} does not exist (the scene has {n} joints)"
            )));
        };
        let Some(motor) = j.motor.as_mut() else {
            return Err(Error::Argument(format!(
                "set_motor_target: joint {joint} has no motor"
            )));
        };
        use crate::joints::MotorTarget;
        motor.target = match motor.target {
            MotorTarget::Velocity(_) => MotorTarget::Velocity(target),
            MotorTarget::Position(_) => MotorTarget::Position(target),
        };
        self.rebuild_contacts(|sim| sim.set_joints(&joints))?;
        self.changed.set_motor_target(joint, target);
        Ok(())
    }

    /// Changes what the contact stages are built from, then rebuilds them around the current
    /// state as a resume does (same buffer capacity, warm start and patch state).
    fn rebuild_contacts(
        &mut self,
        change: impl FnOnce(&mut crate::step::Simulation) -> Result<(), GpuError>,
    ) -> Result<(), Error> {
        let step = self.sim.step_index();
        let ck = run::checkpoint(&self.sim, self.scene_hash)?;
        let settings = self.sim.settings.clone();
        let joints = self.sim.joints().to_vec();
        let outcome = change(&mut self.sim)
            .map_err(Error::from)
            .and_then(|()| self.sim.restore_sections(step, &ck).map_err(rebuild_error));
        if let Err(e) = outcome {
            // As it was: the old settings and joints around the same sections.
            self.sim.settings = settings;
            let _ = self.sim.set_joints(&joints);
            self.sim
                .restore_sections(step, &ck)
                .map_err(rebuild_error)?;
            return Err(e);
        }
        Ok(())
    }

    /// A checkpoint of the current step at `path` (written atomically), in the command
    /// line's format: `bristlecone run --resume path` continues it for the same scene file,
    /// with the parameters set since the scene (gravity, friction, motor targets; without
    /// any, the checkpoint is the command line's byte for byte).
    pub fn checkpoint(&self, path: &Path) -> Result<(), Error> {
        let mut ck = run::checkpoint(&self.sim, self.scene_hash)?;
        ck.sections.extend(self.changed.section());
        if let Some(bytes) = self.flow.section() {
            ck.sections.push((flow::SECTION.into(), bytes));
        }
        Ok(io::write_checkpoint(path, &ck)?)
    }

    /// The command line's output frame of the current step into the run directory `dir`:
    /// the same files `bristlecone run` writes at a frame of this step, byte for byte
    /// (`frames/particles_STEP.vtp`; the boundaries', boxes', capsules', clumps', cylinders'
    /// and hulls' surfaces; with `[output] contacts = true` the last step's contacts and each
    /// grain's load; joints), each indexed by its `.pvd` in `dir` (entries from this time on
    /// are replaced, as a resumed run does). Written whatever `[output] vtk` says. Returns
    /// the particle frame's path.
    pub fn write_frame(&self, dir: &Path) -> Result<PathBuf, Error> {
        let frames = dir.join("frames");
        std::fs::create_dir_all(&frames).map_err(|source| RunError::OutDir {
            path: frames.clone(),
            source,
        })?;
        let before = self.time() - self.sim.settings.dt / 2.0;
        let mut files = FrameFiles::open(&self.scene, dir, Some(before))?.always();
        files.write_frame(&self.sim)?;
        files.write_contacts(&self.sim)?;
        Ok(files.particle_frame(self.step_index()))
    }
}

impl Simulation {
    /// The current state drawn as `bristlecone render` draws a run's frame of this step
    /// ([`Simulation::write_frame`] into a private temporary directory, removed after):
    /// `view` holds the settings (the scene's `[render]` table overridden by the caller's).
    /// Returns the RGB image (height × width × 3, rows from the top) and its width and height.
    pub fn render(&self, view: &crate::render::ViewLayer) -> Result<(Vec<u8>, u32, u32), Error> {
        let dir = crate::render::tempdir().map_err(|e| {
            Error::Render(crate::render::RenderError::Draw(format!(
                "cannot create a temporary directory: {e}"
            )))
        })?;
        let drawn = self.write_frame(&dir).and_then(|_| {
            let ctx = self.sim.ctx.clone();
            Ok(crate::render::render_last_frame(
                ctx,
                &dir,
                self.scene.clone(),
                view,
            )?)
        });
        let _ = std::fs::remove_dir_all(&dir);
        drawn
    }
}

fn rebuild_error(message: String) -> Error {
    Error::Run(RunError::Gpu(GpuError::Invalid(format!(
        "rebuilding the contact stages: {message}"
    ))))
}

fn finite(what: &str, values: &[f64]) -> Result<(), Error> {
    match values.iter().find(|x| !x.is_finite()) {
        Some(x) => Err(Error::Argument(format!("{what} must be finite (got {x})"))),
        None => Ok(()),
    }
}
