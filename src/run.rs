//! Running a scene file: the loop that steps the simulation in batches and writes frames,
//! statistics, measurements and checkpoints. Shared by the command line and the tests.
//!
//! Batches end at output frames, checkpoints, measurement samples and schedule changes, so
//! each of those happens at exactly its step:
//! * **schedules** (`schedule = [...]` on kinematic bodies and boundaries): before step `s`
//!   the entries with `step == s` set the body's velocities
//!   ([`Simulation::set_velocity`]); a `release` entry also makes the body dynamic (its
//!   `info.x` and `mass_props` are rewritten from the scene's mass and inertia);
//! * **measurements** (`[[measure]]`): after step `s` with `s % every == 0` (and at step 0
//!   of a fresh run) one row is appended to `measurements/NAME.csv`;
//! * **contacts** (`[output] contacts = true`): at each output frame after step 0, the
//!   contacts of the step just taken go to `frames/contacts_STEP.vtp`, indexed by
//!   `contacts.pvd` (points, normals, gaps, forces = impulse/dt in world frame, body ids),
//!   and to `frames/contacts_STEP.csv`; the grain frames then carry each grain's net
//!   contact force and average stress (`run::frame_loads`).
//! * **joints** (a scene with `[[joint]]` and VTK output): with every particle frame,
//!   `frames/joints_STEP.vtp`, indexed by `joints.pvd`: per joint its two world anchors
//!   joined by a line, the axes, and the reaction of the last step (zero at step 0).

use crate::bodies::BodyState;
use crate::collide::ContactRecord;
use crate::gpu::{GpuContext, GpuError};
use crate::io::{
    self, Checkpoint, Collection, ContactFrame, IoError, ParticleFrame, StatsRow, StatsWriter,
};
use crate::measure::{self, ContactForce, MassFlow, MeasurementId, MeasurementWriter};
use crate::scene::{self, MeasureKind, Scene, SceneError};
use crate::setup;
use crate::step::{Simulation, StepRecord};
pub(crate) use writer::FrameSource;

pub mod changed;
pub(crate) mod flow;
mod frame_loads;
pub mod kept;
pub mod owner;
mod restart;
mod writer;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Most steps recorded into one submission: bounds the latency of Ctrl-C and progress.
pub(crate) const MAX_BATCH: u64 = 50;

#[derive(Clone, Debug, Default)]
pub struct RunOptions {
    /// Output directory; default: the scene's `[output].dir`.
    pub out_dir: Option<PathBuf>,
    /// Total steps to reach (counted from step 0, also when resuming); default: the scene's.
    pub steps: Option<u64>,
    /// Continue from this checkpoint.
    pub resume: Option<PathBuf>,
    /// Restart from this checkpoint of a scene with the same bodies, with the new scene's
    /// parameters (see the `restart` module).
    pub from: Option<PathBuf>,
    /// Replace the outputs of an earlier run in the output directory (otherwise refused, see
    /// [`owner`]).
    pub overwrite: bool,
}

#[derive(Clone, Debug)]
pub struct RunReport {
    pub out_dir: PathBuf,
    pub scene_name: String,
    pub bodies: usize,
    pub steps_done: u64,
    pub total_steps: u64,
    /// The step this run started from: 0, or the checkpoint's step when resuming.
    pub first_step: u64,
    /// The checkpoint this run resumed from.
    pub resumed_from: Option<PathBuf>,
    pub frames_written: usize,
    pub interrupted: bool,
    pub pvd: PathBuf,
    pub stats: PathBuf,
    pub checkpoint: PathBuf,
    /// `measurements/NAME.csv` of each `[[measure]]`, in file order.
    pub measurements: Vec<PathBuf>,
    /// `contacts.pvd` when the scene writes contacts.
    pub contacts_pvd: Option<PathBuf>,
    pub wall_seconds: f64,
    /// Steps run by this process whose solve used the whole iteration cap.
    pub capped_steps: u64,
    /// Batches redone at the full cap because a solve used its whole sweep budget
    /// (`step::Simulation::budget_redos`): the price of the adaptive budget.
    pub budget_redos: u32,
    /// Batches redone because a step overflowed the contact buffers, which then grew
    /// (`step::Simulation::regrowths`).
    pub regrowths: u32,
}

impl RunReport {
    /// The closing line: the steps this run took and their rate (after a resume, not the
    /// steps before it), and where it resumed from.
    pub fn summary(&self) -> String {
        let ran = self.steps_done - self.first_step;
        let rate = ran as f64 / self.wall_seconds.max(1e-9);
        let rate = if rate >= 10.0 {
            format!("{rate:.0}")
        } else {
            format!("{rate:.2}")
        };
        let state = if self.interrupted {
            "stopped"
        } else {
            "finished"
        };
        let head = format!("{state} '{}': {} bodies, ", self.scene_name, self.bodies);
        let wall = self.wall_seconds;
        match &self.resumed_from {
            None => format!(
                "{head}{}/{} steps in {wall:.1} s ({rate} steps/s)",
                self.steps_done, self.total_steps
            ),
            Some(ck) => format!(
                "{head}{ran} steps ({} to {} of {}) in {wall:.1} s ({rate} steps/s), resumed from {} at step {}",
                self.first_step,
                self.steps_done,
                self.total_steps,
                ck.display(),
                self.first_step
            ),
        }
    }
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
    #[error("cannot write into {dir}: {message}")]
    Busy { dir: PathBuf, message: String },
    #[error("cannot resume from {path}: {message}")]
    Resume { path: PathBuf, message: String },
    #[error("cannot restart from {path}: {message}")]
    Restart { path: PathBuf, message: String },
    /// The GPU device went away during the run (see [`GpuError::DeviceLost`]).
    #[error("the GPU device was lost during the run ({why}); {last_checkpoint}")]
    DeviceLost {
        why: String,
        last_checkpoint: String,
    },
    #[error("{error}; {last_checkpoint}")]
    WriteFailed {
        error: Box<RunError>,
        /// Where the last checkpoint went, or why there is none.
        last_checkpoint: String,
    },
    #[error("the simulation diverged at step {step} (t = {time} s): {what}; nothing from this step was written")]
    Diverged { step: u64, time: f64, what: String },
}

/// Where lines from another thread go (see [`Progress::compile_lines`]).
pub type LineSink = Box<dyn Fn(&str) + Send>;

/// Receives progress; the command line shows a bar or log lines.
pub trait Progress {
    fn start(&mut self, _done: u64, _total: u64) {}
    fn advance(&mut self, _step: u64) {}
    fn message(&mut self, _msg: &str) {}
    fn finish(&mut self) {}
    /// Where lines about a long GPU kernel compile go: they come from another thread while
    /// this one waits on the driver. None: not shown.
    fn compile_lines(&self) -> Option<LineSink> {
        None
    }
}

/// How long opening the simulation may take before the run says it is compiling kernels.
const COMPILE_NOTICE_AFTER: Duration = Duration::from_secs(1);
/// How often a long compile reports the pipelines built so far.
const COMPILE_PROGRESS_EVERY: Duration = Duration::from_secs(10);

/// Runs `work` (building the scene's GPU pipelines); when it takes longer than `after`, says
/// through `lines` that kernels are compiling, then every `every` how many pipelines
/// (`built()`) are done, and at the end the total. A driver compiles a pipeline when it is
/// created: the first run of a scene with shaped grains or meshes on a software adapter
/// spends minutes there, later runs seconds (the driver's shader cache).
fn with_compile_notice<T>(
    lines: Option<LineSink>,
    first_line: &'static str,
    (after, every): (Duration, Duration),
    built: fn() -> u64,
    work: impl FnOnce() -> T,
) -> T {
    let Some(lines) = lines else {
        return work();
    };
    let (done_tx, done_rx) = std::sync::mpsc::channel::<()>();
    let started = Instant::now();
    let before = built();
    let watcher = std::thread::spawn(move || {
        use std::sync::mpsc::RecvTimeoutError::Timeout;
        if done_rx.recv_timeout(after) != Err(Timeout) {
            return;
        }
        lines(first_line);
        while done_rx.recv_timeout(every) == Err(Timeout) {
            lines(&format!(
                "still compiling GPU kernels: {:.0} s ({} pipelines created)",
                started.elapsed().as_secs_f64(),
                built() - before
            ));
        }
        lines(&format!(
            "compiled GPU kernels in {:.1} s ({} pipelines created)",
            started.elapsed().as_secs_f64(),
            built() - before
        ));
    });
    let out = work();
    let _ = done_tx.send(());
    let _ = watcher.join();
    out
}

/// No progress output (tests, library use).
pub struct Silent;
impl Progress for Silent {}

/// What a run writes as it goes besides measurements: its frames and its statistics.
struct Outputs {
    files: FrameFiles,
    stats: StatsWriter,
}

impl Outputs {
    /// A frame of the current state and the contacts of the step that led to it.
    fn frame(&mut self, sim: &impl FrameSource) -> Result<(), RunError> {
        self.files.write_frame(sim)?;
        self.files.write_contacts(sim)
    }
}

/// The files of each output frame (particles, body and boundary surfaces, contacts, joints)
/// and their `.pvd` indexes. Shared by the run loop and
/// [`crate::facade::Simulation::write_frame`], so both write the same bytes.
pub(crate) struct FrameFiles {
    dir: PathBuf,
    pvd: Collection,
    contacts_pvd: Option<Collection>,
    joints_pvd: Option<Collection>,
    frames: usize,
    n_boundaries: usize,
    vtk: bool,
    /// Box bodies (body index, half extents) and their surfaces' index `boxes.pvd`.
    boxes: Vec<(usize, [f32; 3])>,
    boxes_pvd: Option<Collection>,
    /// Capsule bodies (body index, radius, half length) and `capsules.pvd`.
    capsules: Vec<(usize, f32, f32)>,
    capsules_pvd: Option<Collection>,
    /// Clump members, cylinder and hull surfaces (`clumps.pvd`, …), see `io::shapes`.
    shapes: Vec<Box<dyn crate::io::shapes::ShapeFrames>>,
    /// With contact output: each grain's volume (m³), for its stress in the grain frames.
    grain_volumes: Option<Vec<f64>>,
    /// `[output] contact_force_min` (N).
    contact_force_min: f64,
}

/// The scene's capsule bodies: (body index, radius, half length).
fn capsule_bodies(scene: &Scene) -> Vec<(usize, f32, f32)> {
    let nb = setup::boundary_count(scene);
    scene
        .bodies
        .iter()
        .enumerate()
        .filter_map(|(k, b)| match b.shape {
            crate::scene::BodyShape::Capsule {
                radius,
                half_length,
            } => Some((nb + k, radius as f32, half_length as f32)),
            _ => None,
        })
        .collect()
}

/// The scene's box bodies: (body index, half extents).
fn box_bodies(scene: &Scene) -> Vec<(usize, [f32; 3])> {
    let nb = setup::boundary_count(scene);
    scene
        .bodies
        .iter()
        .enumerate()
        .filter_map(|(k, b)| match b.shape {
            crate::scene::BodyShape::Box { half_extents } => {
                Some((nb + k, half_extents.map(|x| x as f32)))
            }
            _ => None,
        })
        .collect()
}

/// A frame writer's error: a non-finite value means the run diverged (named with its step and
/// time, nothing written); any other is an I/O error.
fn frame_error(e: IoError, sim: &impl FrameSource) -> RunError {
    match e {
        IoError::NonFinite { .. } => RunError::Diverged {
            step: sim.step_index(),
            time: sim.time(),
            what: e.to_string(),
        },
        e => e.into(),
    }
}

/// The grains' net contact forces and average stresses written into a particle frame.
pub(crate) type GrainLoads<'a> = (&'a [[f32; 3]], &'a [[f32; 9]]);

/// A particle frame's file in the run directory.
pub(crate) fn particle_frame_name(step: u64) -> String {
    format!("frames/particles_{step:08}.vtp")
}

/// One particle frame (`frames/particles_STEP.vtp`): the grains' (bodies from `nb` on)
/// positions, bounding radii, velocities and ids, and with contact output their net contact
/// force and stress; parked grains (an inflow's pool, those an outflow took out) are left
/// out. Shared by the run loop and [`crate::facade::Simulation::write_frame`].
pub(crate) fn write_particle_frame(
    path: &Path,
    (step, time): (u64, f64),
    s: &BodyState,
    nb: usize,
    loads: Option<GrainLoads<'_>>,
) -> Result<(), IoError> {
    let live: Vec<usize> = (nb..s.len())
        .filter(|&b| {
            s.info
                .get(b)
                .is_none_or(|i| i[0] != crate::bodies::MOTION_PARKED)
        })
        .collect();
    let xyz = |v: &[[f32; 4]]| -> Vec<[f32; 3]> {
        live.iter().map(|&b| [v[b][0], v[b][1], v[b][2]]).collect()
    };
    let positions = xyz(&s.pos);
    let radii: Vec<f32> = live.iter().map(|&b| s.pos[b][3]).collect();
    let velocities = xyz(&s.vel);
    let angular = xyz(&s.omega);
    let ids: Vec<u32> = live.iter().map(|&b| b as u32).collect();
    let mut frame = ParticleFrame {
        step,
        time,
        positions: &positions,
        radii: &radii,
        velocities: &velocities,
        angular_velocities: &angular,
        ids: &ids,
        scalars: Vec::new(),
        vectors: Vec::new(),
    };
    let mut tensors = Vec::new();
    let loads = loads.map(|(force, stress)| {
        let f: Vec<[f32; 3]> = live.iter().map(|&b| force[b - nb]).collect();
        let t: Vec<[f32; 9]> = live.iter().map(|&b| stress[b - nb]).collect();
        (f, t)
    });
    if let Some((force, stress)) = &loads {
        frame.vectors.push(("contact_force", force));
        tensors.push(("stress", &stress[..]));
    }
    io::write_particles_with_tensors(path, &frame, &tensors)
}

impl FrameFiles {
    /// The frame files of `scene` in `dir` (a run directory; its `frames/` must exist): fresh
    /// indexes, or with `resume_at`, the existing ones continued after their frames up to
    /// that time.
    pub(crate) fn open(
        scene: &Scene,
        dir: &Path,
        resume_at: Option<f64>,
    ) -> Result<Self, RunError> {
        let open = |name: &str| Collection::open(dir.join(name), resume_at);
        let nb = setup::boundary_count(scene);
        let (boxes, capsules) = (box_bodies(scene), capsule_bodies(scene));
        let joint_frames = scene.output.vtk && !scene.joints.is_empty();
        Ok(FrameFiles {
            dir: dir.to_path_buf(),
            pvd: open("particles.pvd")?,
            contacts_pvd: scene
                .output
                .contacts
                .then(|| open("contacts.pvd"))
                .transpose()?,
            joints_pvd: joint_frames.then(|| open("joints.pvd")).transpose()?,
            frames: 0,
            n_boundaries: nb,
            vtk: scene.output.vtk,
            boxes_pvd: (!boxes.is_empty()).then(|| open("boxes.pvd")).transpose()?,
            boxes,
            capsules_pvd: (!capsules.is_empty())
                .then(|| open("capsules.pvd"))
                .transpose()?,
            capsules,
            shapes: crate::io::shapes::shape_frames(scene, nb, dir, resume_at)?,
            grain_volumes: scene.output.contacts.then(|| frame_loads::volumes(scene)),
            contact_force_min: scene.output.contact_force_min,
        })
    }

    /// Writes the frame whether or not the scene asks for VTK output (`[output] vtk`).
    pub(crate) fn always(mut self) -> Self {
        self.vtk = true;
        self
    }

    fn frame_name(step: u64) -> String {
        particle_frame_name(step)
    }

    /// The particle frame's path (in the run directory) of step `step`.
    pub(crate) fn particle_frame(&self, step: u64) -> PathBuf {
        self.dir.join(Self::frame_name(step))
    }

    pub(crate) fn write_frame(&mut self, sim: &impl FrameSource) -> Result<(), RunError> {
        if !self.vtk {
            return Ok(());
        }
        let s = sim.download_kinematics()?;
        let nb = self.n_boundaries;
        let name = Self::frame_name(sim.step_index());
        let loads = match &self.grain_volumes {
            Some(v) => Some(frame_loads::grain_arrays(sim, &s, nb, v)?),
            None => None,
        };
        let loads = loads.as_ref().map(|(f, t)| (&f[..], &t[..]));
        let at = (sim.step_index(), sim.time());
        write_particle_frame(&self.dir.join(&name), at, &s, nb, loads)
            .map_err(|e| frame_error(e, sim))?;
        self.pvd.add(sim.time(), name)?;
        self.frames += 1;
        self.write_boxes(sim, &s)?;
        self.write_capsules(sim, &s)?;
        for w in &mut self.shapes {
            w.write(&self.dir, sim.step_index(), sim.time(), &s)
                .map_err(|e| frame_error(e, sim))?;
        }
        self.write_joints(sim, &s)
    }

    /// The joints' world anchors, axes and reactions at this frame (see the module doc).
    fn write_joints(&mut self, sim: &impl FrameSource, s: &BodyState) -> Result<(), RunError> {
        let Some(pvd) = self.joints_pvd.as_mut() else {
            return Ok(());
        };
        let step = sim.step_index();
        let joints = sim.joints();
        let reactions = if step == 0 {
            vec![crate::joints::JointReaction::default(); joints.len()]
        } else {
            sim.joint_reactions()?
        };
        let f3 = |v: glam::DVec3| [v.x as f32, v.y as f32, v.z as f32];
        let frames: Vec<_> = joints.iter().map(|j| j.world_frames(s)).collect();
        let pick = |f: fn(&([glam::DVec3; 2], [glam::DVec3; 2])) -> glam::DVec3| -> Vec<[f32; 3]> {
            frames.iter().map(|w| f3(f(w))).collect()
        };
        let (anchor_a, anchor_b) = (pick(|w| w.0[0]), pick(|w| w.0[1]));
        let (axis_a, axis_b) = (pick(|w| w.1[0]), pick(|w| w.1[1]));
        let body_a: Vec<i32> = joints
            .iter()
            .map(|j| j.body_a.map_or(-1, |b| b as i32))
            .collect();
        let body_b: Vec<i32> = joints.iter().map(|j| j.body_b as i32).collect();
        let force: Vec<[f32; 3]> = reactions.iter().map(|r| f3(r.force)).collect();
        let torque: Vec<[f32; 3]> = reactions.iter().map(|r| f3(r.torque)).collect();
        let motor: Vec<f32> = reactions.iter().map(|r| r.motor as f32).collect();
        let name = format!("frames/joints_{step:08}.vtp");
        let frame = io::JointFrame {
            anchor_a: &anchor_a,
            anchor_b: &anchor_b,
            axis_a: &axis_a,
            axis_b: &axis_b,
            body_a: &body_a,
            body_b: &body_b,
            force: &force,
            torque: &torque,
            motor: &motor,
        };
        io::write_joints(&self.dir.join(&name), &frame).map_err(|e| frame_error(e, sim))?;
        pvd.add(sim.time(), name)?;
        Ok(())
    }

    /// Box surfaces as polygons (`frames/boxes_*.vtp`, index `boxes.pvd`).
    fn write_boxes(
        &mut self,
        sim: &impl FrameSource,
        s: &crate::bodies::BodyState,
    ) -> Result<(), RunError> {
        let Some(pvd) = self.boxes_pvd.as_mut() else {
            return Ok(());
        };
        let centers: Vec<[f32; 3]> = self
            .boxes
            .iter()
            .map(|&(b, _)| [s.pos[b][0], s.pos[b][1], s.pos[b][2]])
            .collect();
        let rotations: Vec<[f32; 4]> = self.boxes.iter().map(|&(b, _)| s.rot[b]).collect();
        let half_extents: Vec<[f32; 3]> = self.boxes.iter().map(|&(_, h)| h).collect();
        let ids: Vec<u32> = self.boxes.iter().map(|&(b, _)| b as u32).collect();
        let name = format!("frames/boxes_{:08}.vtp", sim.step_index());
        let frame = io::BoxFrame {
            centers: &centers,
            rotations: &rotations,
            half_extents: &half_extents,
            ids: &ids,
        };
        io::write_boxes(&self.dir.join(&name), &frame).map_err(|e| frame_error(e, sim))?;
        pvd.add(sim.time(), name)?;
        Ok(())
    }

    /// Capsule surfaces as polygons (`frames/capsules_*.vtp`, index `capsules.pvd`).
    fn write_capsules(
        &mut self,
        sim: &impl FrameSource,
        s: &crate::bodies::BodyState,
    ) -> Result<(), RunError> {
        let Some(pvd) = self.capsules_pvd.as_mut() else {
            return Ok(());
        };
        let c = &self.capsules;
        let centers: Vec<[f32; 3]> = c
            .iter()
            .map(|&(b, ..)| [s.pos[b][0], s.pos[b][1], s.pos[b][2]])
            .collect();
        let rotations: Vec<[f32; 4]> = c.iter().map(|&(b, ..)| s.rot[b]).collect();
        let radii: Vec<f32> = c.iter().map(|&(_, r, _)| r).collect();
        let half_lengths: Vec<f32> = c.iter().map(|&(.., h)| h).collect();
        let ids: Vec<u32> = c.iter().map(|&(b, ..)| b as u32).collect();
        let name = format!("frames/capsules_{:08}.vtp", sim.step_index());
        let frame = io::CapsuleFrame {
            centers: &centers,
            rotations: &rotations,
            radii: &radii,
            half_lengths: &half_lengths,
            ids: &ids,
        };
        io::write_capsules(&self.dir.join(&name), &frame).map_err(|e| frame_error(e, sim))?;
        pvd.add(sim.time(), name)?;
        Ok(())
    }

    /// The contacts of the last step at this frame (nothing at step 0: no step taken yet).
    pub(crate) fn write_contacts(&mut self, sim: &impl FrameSource) -> Result<(), RunError> {
        let step = sim.step_index();
        let Some(pvd) = self.contacts_pvd.as_mut() else {
            return Ok(());
        };
        if step == 0 {
            return Ok(());
        }
        let s = sim.download_kinematics()?;
        let (contacts, impulses) = sim.read_contacts()?;
        let forces = contact_forces(&s, &contacts, &impulses, sim.dt());
        // `[output] contact_force_min`: the weak contacts left out of both files.
        let (contacts, forces) = frame_loads::strong(contacts, forces, self.contact_force_min);
        let csv = self.dir.join(format!("frames/contacts_{step:08}.csv"));
        io::contact_forces::write_contact_forces(&csv, &frame_loads::rows(&contacts, &forces))
            .map_err(|e| frame_error(e, sim))?;
        let f3 = |v: [f64; 3]| v.map(|x| x as f32);
        let points: Vec<[f32; 3]> = forces.iter().map(|c| f3(c.point)).collect();
        let force: Vec<[f32; 3]> = forces.iter().map(|c| f3(c.force_on_b)).collect();
        let normals: Vec<[f32; 3]> = contacts
            .iter()
            .map(|c| [c.n_gap[0], c.n_gap[1], c.n_gap[2]])
            .collect();
        let gaps: Vec<f32> = contacts.iter().map(|c| c.n_gap[3]).collect();
        let body_a: Vec<u32> = contacts.iter().map(|c| c.ids[0]).collect();
        let body_b: Vec<u32> = contacts.iter().map(|c| c.ids[1]).collect();
        let features: Vec<u32> = contacts.iter().map(|c| c.ids[2]).collect();
        let name = format!("frames/contacts_{step:08}.vtp");
        let frame = ContactFrame {
            points: &points,
            normals: &normals,
            gaps: &gaps,
            forces: Some(&force),
            body_a: &body_a,
            body_b: &body_b,
            features: &features,
        };
        io::write_contacts(&self.dir.join(&name), &frame).map_err(|e| frame_error(e, sim))?;
        pvd.add(sim.time(), name)?;
        Ok(())
    }
}

/// Contact forces in the world frame: point `x_A + r_A`, force on B
/// `(γ_n n + γ_u u + γ_w w) / dt` with `(u, w)` the contract's tangent basis of `n`.
/// `state` needs positions (`download_kinematics` is enough).
pub fn contact_forces(
    state: &BodyState,
    contacts: &[ContactRecord],
    impulses: &[[f32; 4]],
    dt: f64,
) -> Vec<ContactForce> {
    contacts
        .iter()
        .zip(impulses)
        .map(|(c, g)| {
            let n = glam::DVec3::new(c.n_gap[0] as f64, c.n_gap[1] as f64, c.n_gap[2] as f64);
            let (u, w) = crate::reference::tangent_basis(n);
            let f = (g[0] as f64 * n + g[1] as f64 * u + g[2] as f64 * w) / dt;
            let a = state.pos[c.ids[0] as usize];
            let point = [0, 1, 2].map(|k| a[k] as f64 + c.ra[k] as f64);
            ContactForce {
                body_a: c.ids[0],
                body_b: c.ids[1],
                point,
                force_on_b: f.to_array(),
            }
        })
        .collect()
}

/// The columns of a measurement's CSV file after `time`.
pub(crate) fn measure_columns(spec: &scene::Measure, scene: &Scene) -> Vec<String> {
    Probe::columns(spec, scene)
}

/// One `[[measure]]` while running.
struct Probe {
    spec: scene::Measure,
    /// Its CSV file (none in memory, see [`Probes::in_memory`]).
    id: Option<MeasurementId>,
    flow: Option<MassFlow>,
    /// Mass-flow totals carried over from before a resume (net, positive, negative).
    offsets: [f64; 3],
}

impl Probe {
    fn columns(spec: &scene::Measure, scene: &Scene) -> Vec<String> {
        match &spec.kind {
            MeasureKind::MassFlow { .. } => {
                vec!["net_mass", "mass_positive", "mass_negative", "rate"]
                    .into_iter()
                    .map(String::from)
                    .collect()
            }
            MeasureKind::BedHeight { .. } => vec!["height".into()],
            MeasureKind::SurfaceProfile { axis, bins, range } => {
                let w = (range[1] - range[0]) / *bins as f64;
                let a = ["x", "y"][*axis];
                (0..*bins)
                    .map(|b| format!("{a}={}", range[0] + (b as f64 + 0.5) * w))
                    .collect()
            }
            MeasureKind::KineticEnergy => scene
                .materials
                .iter()
                .map(|m| m.name.clone())
                .chain(std::iter::once("total".to_string()))
                .collect(),
            MeasureKind::Coordination => vec!["z".into(), "contacts".into()],
            MeasureKind::BoundaryForce { .. } => ["fx", "fy", "fz", "tx", "ty", "tz"]
                .into_iter()
                .map(String::from)
                .collect(),
            MeasureKind::ReposeAngle { .. } => ["angle", "slope", "apex", "bins", "flank_rms"]
                .into_iter()
                .map(String::from)
                .collect(),
            MeasureKind::Stress { .. } => measure::STRESS_COLUMNS
                .into_iter()
                .map(String::from)
                .collect(),
            MeasureKind::SolidFraction { .. } => vec!["phi".into()],
        }
    }

    /// Fresh running state at `time` (mass flows count from `state`).
    fn new(spec: &scene::Measure, state: &BodyState, nb: usize, time: f64) -> Self {
        let flow = match &spec.kind {
            MeasureKind::MassFlow {
                point,
                normal,
                radius,
            } => {
                let f = MassFlow::new(*point, *normal, state, nb, time);
                Some(match radius {
                    Some(r) => f.with_radius(*r),
                    None => f,
                })
            }
            _ => None,
        };
        Probe {
            spec: spec.clone(),
            id: None,
            flow,
            offsets: [0.0; 3],
        }
    }

    fn needs_contacts(&self) -> bool {
        matches!(
            self.spec.kind,
            MeasureKind::Coordination
                | MeasureKind::BoundaryForce { .. }
                | MeasureKind::Stress { .. }
        )
    }
}

/// One sample of a measurement: its time (s) and its row.
pub(crate) type Sample = (f64, Vec<f64>);

/// The scene's measurements: their writer and running state.
pub(crate) struct Probes {
    writer: Option<MeasurementWriter>,
    /// In memory instead (see [`Probes::in_memory`]): per measurement its samples.
    kept: Option<Vec<Vec<Sample>>>,
    probes: Vec<Probe>,
    /// Material index of every body (boundaries: 0; they have no kinetic energy).
    groups: Vec<u32>,
    n_boundaries: usize,
    n_materials: usize,
    /// Each grain's volume (m³), for the solid fraction.
    volumes: Vec<f64>,
    /// The cell's Lees–Edwards shear: the stress's kinetic part is taken about its profile.
    shear: Option<crate::collide::LeesEdwards>,
    /// `measurements/joints.csv` when the scene has joints: per joint its force and torque
    /// on body B and its motor's force or torque, sampled with the frames.
    joints: Option<MeasurementId>,
}

/// Columns of `joints.csv`: per joint k, `jk_fx, jk_fy, jk_fz, jk_tx, jk_ty, jk_tz, jk_motor`.
fn joint_columns(n: usize) -> Vec<String> {
    (0..n)
        .flat_map(|k| ["fx", "fy", "fz", "tx", "ty", "tz", "motor"].map(|c| format!("j{k}_{c}")))
        .collect()
}

impl Probes {
    /// The scene's measurements kept in memory rather than written (the library's
    /// [`crate::facade::Simulation::measurements`]), counted from `state` at `time`.
    pub(crate) fn in_memory(scene: &Scene, state: &BodyState, time: f64) -> Self {
        let nb = setup::boundary_count(scene);
        let mut groups = vec![0u32; nb];
        groups.extend(scene.bodies.iter().map(|b| b.material as u32));
        let probes: Vec<Probe> = scene
            .measures
            .iter()
            .map(|spec| Probe::new(spec, state, nb, time))
            .collect();
        Probes {
            writer: None,
            kept: Some(vec![Vec::new(); probes.len()]),
            probes,
            groups,
            n_boundaries: nb,
            n_materials: scene.materials.len(),
            volumes: frame_loads::volumes(scene),
            shear: scene.periodic.and_then(|c| c.shear),
            joints: None,
        }
    }

    /// The samples kept in memory: per measurement its (time, row) pairs, in scene order.
    pub(crate) fn kept(&self) -> &[Vec<Sample>] {
        self.kept.as_deref().unwrap_or(&[])
    }

    /// Opens the CSV files (fresh, or continued after `resume_time`).
    fn new(
        scene: &Scene,
        dir: &Path,
        state: &BodyState,
        time: f64,
        resume_time: Option<f64>,
    ) -> Result<Self, RunError> {
        let nb = setup::boundary_count(scene);
        let mut groups = vec![0u32; nb];
        groups.extend(scene.bodies.iter().map(|b| b.material as u32));
        if scene.measures.is_empty() && scene.joints.is_empty() {
            return Ok(Probes {
                writer: None,
                kept: None,
                probes: Vec::new(),
                groups,
                n_boundaries: nb,
                n_materials: scene.materials.len(),
                volumes: Vec::new(),
                shear: None,
                joints: None,
            });
        }
        let mut writer = MeasurementWriter::new(dir)?;
        let mut probes = Vec::new();
        for spec in &scene.measures {
            let cols = Probe::columns(spec, scene);
            let cols: Vec<&str> = cols.iter().map(|c| c.as_str()).collect();
            let id = match resume_time {
                None => writer.create(&spec.name, &cols)?,
                Some(t) => writer.resume(&spec.name, &cols, t)?,
            };
            let mut probe = Probe::new(spec, state, nb, time);
            if probe.flow.is_some() && resume_time.is_some() {
                probe.offsets = last_flow_row(writer.path(id))?;
            }
            probe.id = Some(id);
            probes.push(probe);
        }
        let joints = if scene.joints.is_empty() {
            None
        } else {
            let cols = joint_columns(scene.joints.len());
            let cols: Vec<&str> = cols.iter().map(|c| c.as_str()).collect();
            Some(match resume_time {
                None => writer.create("joints", &cols)?,
                Some(t) => writer.resume("joints", &cols, t)?,
            })
        };
        Ok(Probes {
            writer: Some(writer),
            kept: None,
            probes,
            groups,
            n_boundaries: nb,
            n_materials: scene.materials.len(),
            volumes: frame_loads::volumes(scene),
            shear: scene.periodic.and_then(|c| c.shear),
            joints,
        })
    }

    /// One row of `joints.csv` (the reactions of the last step), if the scene has joints.
    fn sample_joints(&mut self, sim: &Simulation) -> Result<(), RunError> {
        let (Some(id), Some(w)) = (self.joints, self.writer.as_mut()) else {
            return Ok(());
        };
        let row: Vec<f64> = sim
            .joint_reactions()?
            .iter()
            .flat_map(|r| {
                let (f, t) = (r.force, r.torque);
                [f.x, f.y, f.z, t.x, t.y, t.z, r.motor]
            })
            .collect();
        w.append(id, sim.time(), &row)?;
        Ok(())
    }

    /// Steps at which some measurement samples, after `s`: the next multiple of any `every`.
    pub(crate) fn next_sample(&self, s: u64) -> Option<u64> {
        self.probes
            .iter()
            .map(|p| (s / p.spec.every + 1) * p.spec.every)
            .min()
    }

    /// Samples every measurement due at the current step (all of them when `all`).
    pub(crate) fn sample(&mut self, sim: &Simulation, all: bool) -> Result<(), RunError> {
        let s = sim.step_index();
        let due: Vec<usize> = (0..self.probes.len())
            .filter(|&k| all || s.is_multiple_of(self.probes[k].spec.every))
            .collect();
        if due.is_empty() {
            return Ok(());
        }
        let t = sim.time();
        let state = sim.read_state()?;
        let (records, impulses) = if due.iter().any(|&k| self.probes[k].needs_contacts()) && s > 0 {
            sim.read_contacts()?
        } else {
            (Vec::new(), Vec::new())
        };
        let dt = sim.settings.dt;
        let forces = contact_forces(&state, &records, &impulses, dt);
        let contacts = Sampled {
            records: &records,
            impulses: &impulses,
            dt,
            forces: &forces,
        };
        for &k in &due {
            let row = self.row(k, (s, t), &state, &contacts);
            if let (Some(w), Some(id)) = (self.writer.as_mut(), self.probes[k].id) {
                w.append(id, t, &row)?;
            }
            if let Some(kept) = self.kept.as_mut() {
                kept[k].push((t, row));
            }
        }
        Ok(())
    }

    /// Measurement `k`'s row at step `s`, time `t`: what its CSV file gets.
    fn row(
        &mut self,
        k: usize,
        (s, t): (u64, f64),
        state: &BodyState,
        contacts: &Sampled,
    ) -> Vec<f64> {
        let nb = self.n_boundaries;
        let forces = contacts.forces;
        // Parked grains (inflow pools, grains an outflow took out) are in no measurement.
        let live = flow::live_view(state, nb);
        let p = &mut self.probes[k];
        match &p.spec.kind {
            MeasureKind::MassFlow { .. } => {
                let f = p.flow.as_mut().expect("mass flow state");
                let o = p.offsets;
                if s == 0 {
                    vec![o[0], o[1], o[2], f64::NAN]
                } else {
                    let x = f.update(state, t);
                    vec![
                        o[0] + x.net_mass,
                        o[1] + x.mass_positive,
                        o[2] + x.mass_negative,
                        x.rate,
                    ]
                }
            }
            MeasureKind::BedHeight { quantile } => {
                vec![measure::bed_height(&live, nb, *quantile)]
            }
            MeasureKind::SurfaceProfile { axis, bins, range } => {
                measure::surface_profile(&live, nb, *axis, *bins, (range[0], range[1]))
                    .into_iter()
                    .map(|(_, z)| z)
                    .collect()
            }
            MeasureKind::KineticEnergy => {
                let mut e = measure::kinetic_energy_by_group(state, &self.groups);
                e.resize(self.n_materials, 0.0);
                let total = e.iter().sum();
                e.push(total);
                e
            }
            MeasureKind::Coordination => {
                // Force-bearing contacts only: those with a positive normal force.
                let pairs: Vec<(u32, u32)> = forces
                    .iter()
                    .filter(|c| {
                        let n = &c.force_on_b;
                        n.iter().any(|x| *x != 0.0)
                    })
                    .map(|c| (c.body_a, c.body_b))
                    .collect();
                // Contacts per live grain.
                let grains = (state.len() - nb) as f64 / (live.len() - nb) as f64;
                vec![
                    measure::coordination_number(&pairs, state.len(), nb) * grains,
                    pairs.len() as f64,
                ]
            }
            MeasureKind::BoundaryForce { boundary, about } => {
                let (f, tq) = measure::boundary_wrench(forces, *boundary as u32, *about);
                vec![f[0], f[1], f[2], tq[0], tq[1], tq[2]]
            }
            MeasureKind::ReposeAngle {
                axis,
                centre,
                flank,
            } => {
                let r = measure::repose_angle(&live, nb, *axis, *centre, *flank);
                vec![r.angle_deg, r.slope, r.apex, r.bins as f64, r.flank_rms]
            }
            MeasureKind::Stress { min, max } => {
                let region = measure::Region {
                    min: *min,
                    max: *max,
                };
                let (c, shear) = (contacts, self.shear.as_ref());
                measure::region_stress(state, nb, c.records, c.impulses, c.dt, &region, shear).row()
            }
            MeasureKind::SolidFraction { min, max } => {
                let region = measure::Region {
                    min: *min,
                    max: *max,
                };
                vec![measure::solid_fraction(state, nb, &self.volumes, &region)]
            }
        }
    }

    fn flush(&mut self) -> Result<(), RunError> {
        if let Some(w) = self.writer.as_mut() {
            w.flush()?;
        }
        Ok(())
    }

    /// Bodies that left or entered the scene (`run::flow`): no mass flow counts their jump.
    pub(crate) fn forget(&mut self, bodies: &[usize]) {
        for f in self.probes.iter_mut().filter_map(|p| p.flow.as_mut()) {
            for &b in bodies {
                f.forget(b);
            }
        }
    }

    /// Drops the queued samples unwritten (see [`MeasurementWriter::discard_pending`]).
    fn discard_pending(&mut self) {
        if let Some(w) = self.writer.as_mut() {
            w.discard_pending();
        }
    }

    fn finish(self) -> Result<Vec<PathBuf>, RunError> {
        let paths = match &self.writer {
            Some(w) => self
                .probes
                .iter()
                .filter_map(|p| p.id.map(|id| w.path(id).to_path_buf()))
                .collect(),
            None => Vec::new(),
        };
        let mut paths = paths;
        if let (Some(id), Some(w)) = (self.joints, &self.writer) {
            paths.push(w.path(id).to_path_buf());
        }
        if let Some(w) = self.writer {
            w.finish()?;
        }
        Ok(paths)
    }
}

/// The contacts a sample step read back, for the measurements that need them (none when no
/// due measurement does).
struct Sampled<'a> {
    records: &'a [ContactRecord],
    impulses: &'a [[f32; 4]],
    dt: f64,
    forces: &'a [ContactForce],
}

/// The cumulative columns of the last row of a mass-flow CSV (zeros when it has none).
fn last_flow_row(path: &Path) -> Result<[f64; 3], RunError> {
    let text = std::fs::read_to_string(path).map_err(|e| IoError::os(path, e))?;
    let Some(last) = text.lines().skip(1).last() else {
        return Ok([0.0; 3]);
    };
    let v: Vec<f64> = last
        .split(',')
        .skip(1)
        .take(3)
        .map(|x| x.parse().unwrap_or(f64::NAN))
        .collect();
    match v[..] {
        [a, b, c] if a.is_finite() && b.is_finite() && c.is_finite() => Ok([a, b, c]),
        _ => Err(IoError::Parse {
            path: path.to_path_buf(),
            line: text.lines().count(),
            message: format!("cannot read the cumulative masses of {last:?}"),
        }
        .into()),
    }
}

/// (step, body index, velocity, angular velocity, on release: its `mass_props`).
type Change = (u64, u32, [f32; 3], [f32; 3], Option<[f32; 4]>);

/// Prescribed motion: every schedule entry with its body index, sorted by step.
pub(crate) struct Schedules {
    changes: Vec<Change>,
}

impl Schedules {
    pub(crate) fn new(scene: &Scene) -> Self {
        let nb = setup::boundary_count(scene);
        let f3 = |a: [f64; 3]| a.map(|x| x as f32);
        let mut changes = Vec::new();
        for (k, b) in scene.boundaries.iter().enumerate() {
            for e in &b.schedule {
                changes.push((
                    e.step,
                    k as u32,
                    f3(e.velocity),
                    f3(e.angular_velocity),
                    None,
                ));
            }
        }
        for (i, b) in scene.bodies.iter().enumerate() {
            for e in &b.schedule {
                let release = e.release.then(|| {
                    let ii = b.inertia.map(|x| (1.0 / x) as f32);
                    [ii[0], ii[1], ii[2], (1.0 / b.mass) as f32]
                });
                changes.push((
                    e.step,
                    (nb + i) as u32,
                    f3(e.velocity),
                    f3(e.angular_velocity),
                    release,
                ));
            }
        }
        changes.sort_by_key(|c| (c.0, c.1));
        Schedules { changes }
    }

    /// The first change after step `s`.
    pub(crate) fn next_after(&self, s: u64) -> Option<u64> {
        self.changes.iter().map(|c| c.0).find(|&t| t > s)
    }

    /// Applies the changes due before step `s`.
    pub(crate) fn apply(&self, sim: &mut Simulation, s: u64) {
        for c in self.changes.iter().filter(|c| c.0 == s) {
            sim.set_velocity(c.1, c.2, c.3);
            if let Some(mp) = c.4 {
                sim.set_dynamic(c.1, mp);
            }
        }
    }
}

pub(crate) fn checkpoint(sim: &Simulation, scene_hash: u64) -> Result<Checkpoint, RunError> {
    Ok(Checkpoint {
        step: sim.step_index(),
        time: sim.time(),
        scene_hash,
        sections: sim.checkpoint_sections()?,
    })
}

pub(crate) fn stats_row(r: &StepRecord, wall_ms: f64) -> Result<StatsRow, RunError> {
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
        outer_iterations: r.outer_iterations,
        painleve: r.painleve,
        wall_ms,
    })
}

/// Restores `sim` of `scene` from the checkpoint at `from`, written by a run of the same
/// scene file, with the parameters changed from the library that it carries
/// ([`changed::ChangedParameters`]).
pub(crate) fn restore(
    sim: &mut Simulation,
    scene: &Scene,
    from: &Path,
    scene_path: &Path,
    scene_hash: u64,
) -> Result<Checkpoint, RunError> {
    let ck = io::read_checkpoint(from)?;
    let fail = |message: String| RunError::Resume {
        path: from.to_path_buf(),
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
    changed::ChangedParameters::of(&ck)
        .and_then(|c| c.apply(sim, scene))
        .map_err(fail)?;
    sim.restore_sections(ck.step, &ck).map_err(fail)?;
    Ok(ck)
}

/// Loads and validates a scene file, returning it with the hash of its text.
pub fn load_scene(path: &Path) -> Result<(Scene, u64), RunError> {
    load_scene_scaled(path, None)
}

/// [`load_scene`] with the generators shrunk by `scale` (see [`scene::parse_str_scaled`]);
/// the hash then covers the scale too, so a checkpoint of a scaled run only resumes a run
/// at the same scale.
pub fn load_scene_scaled(path: &Path, scale: Option<f64>) -> Result<(Scene, u64), RunError> {
    let text = io::capped::read_toml(path, "scene file").map_err(|source| RunError::ReadScene {
        path: path.to_path_buf(),
        source,
    })?;
    parse_scene_scaled(&text, path, scale)
}

/// [`load_scene_scaled`] of scene text already read (`path` names it in messages and is the
/// base of its relative mesh paths).
pub fn parse_scene_scaled(
    text: &str,
    path: &Path,
    scale: Option<f64>,
) -> Result<(Scene, u64), RunError> {
    match scale {
        None => {
            let scene = scene::parse_str(text, path)?;
            Ok((scene, io::hash_bytes(text.as_bytes())))
        }
        Some(f) => {
            let scene = scene::parse_str_scaled(text, path, f)?;
            let mut bytes = text.as_bytes().to_vec();
            bytes.extend_from_slice(b"\nscale=");
            bytes.extend_from_slice(&f.to_le_bytes());
            Ok((scene, io::hash_bytes(&bytes)))
        }
    }
}

/// Runs a scene file to completion (or until `stop` is set), writing its outputs.
pub fn run_scene(
    ctx: Arc<GpuContext>,
    scene_path: &Path,
    opts: &RunOptions,
    stop: &AtomicBool,
    progress: &mut dyn Progress,
) -> Result<RunReport, RunError> {
    run_scene_scaled(ctx, scene_path, opts, None, stop, progress)
}

/// [`run_scene`] with the scene's generators shrunk by `scale` (0 < scale ≤ 1; `None` =
/// full size): a quick run of a full-size scene, for tests. Combine with
/// [`RunOptions::steps`] to cap the number of steps.
pub fn run_scene_scaled(
    ctx: Arc<GpuContext>,
    scene_path: &Path,
    opts: &RunOptions,
    scale: Option<f64>,
    stop: &AtomicBool,
    progress: &mut dyn Progress,
) -> Result<RunReport, RunError> {
    run_inner(ctx, scene_path, opts, scale, stop, progress, None).map(|r| r.0)
}

/// [`run_scene_scaled`] against the wall clock (`run --realtime`, see [`crate::realtime`]):
/// one step per batch, each released at its time and checked against its deadline; also
/// writes `realtime.csv` (per step: wall time, CPU solve time with the exact solver, margin).
/// The first `preroll` steps are taken before the clock starts (stated in the report, their
/// times in the CSV without a margin); 0 clocks every step.
pub fn run_scene_realtime(
    ctx: Arc<GpuContext>,
    scene_path: &Path,
    opts: &RunOptions,
    scale: Option<f64>,
    stop: &AtomicBool,
    progress: &mut dyn Progress,
    preroll: u64,
) -> Result<(RunReport, crate::realtime::RealtimeReport), RunError> {
    let (report, clock) = run_inner(ctx, scene_path, opts, scale, stop, progress, Some(preroll))?;
    let clock = clock.expect("a real-time run keeps its clock");
    let rt = clock.finish(&report.out_dir)?;
    Ok((report, rt))
}

/// Warnings about the statistics that a run gives once: a Lemke step with many contacts,
/// Painlevé contacts, and a penetration the rigid contacts did not hold.
#[derive(Default)]
struct OnceWarnings {
    lemke_contacts: bool,
    painleve: bool,
    /// Penetration (m) past which a rigid scene warns: a tenth of its smallest grain's
    /// bounding radius; None for scenes whose contacts are compliant by design.
    deep: Option<f64>,
}

/// Fraction of the smallest grain's bounding radius a rigid contact may penetrate before
/// the run warns (the envelope and the recovery keep a held contact far below it: the
/// default scene's worst is ~2 % of its smallest bead's radius).
const DEEP_PENETRATION: f64 = 0.1;

impl OnceWarnings {
    fn new(scene: &Scene, state: &BodyState) -> Self {
        let rows: Vec<_> = scene
            .materials
            .iter()
            .map(|m| crate::model::rows::material_row(&m.model))
            .collect();
        let compliant = crate::model::rows::has_compliant_normal(&rows);
        let smallest = (0..state.len())
            .filter(|&i| state.mass_props[i][3] > 0.0)
            .map(|i| state.pos[i][3] as f64)
            .fold(f64::INFINITY, f64::min);
        OnceWarnings {
            deep: (!compliant && smallest.is_finite()).then_some(DEEP_PENETRATION * smallest),
            ..Default::default()
        }
    }

    fn check(&mut self, records: &[StepRecord], lemke: bool, progress: &mut dyn Progress) {
        if let Some(limit) = self.deep {
            if let Some(r) = records.iter().find(|r| r.max_penetration > limit) {
                self.deep = None;
                progress.message(&format!(
                    "warning: step {}: a contact penetrates {:.3e} m, more than {:.0} % of the \
                     smallest grain's radius: the solver did not hold it (a step at the sweep \
                     cap, column iterations of stats.csv) or a grain crossed the contact \
                     envelope in one step; raise [solver] max_iterations or lower dt (warned \
                     once per run)",
                    r.step,
                    r.max_penetration,
                    100.0 * DEEP_PENETRATION
                ));
            }
        }
        if let Some(r) = records.iter().find(|r| lemke && r.contacts > 300) {
            if !self.lemke_contacts {
                self.lemke_contacts = true;
                progress.message(&format!(
                    "warning: step {}: {} contacts for kind = \"lemke\": its dense pivoting costs grow with the cube of the LCP's rows; apgd suits this size",
                    r.step, r.contacts
                ));
            }
        }
        if let Some(r) = records.iter().find(|r| r.painleve > 0) {
            if !self.painleve {
                self.painleve = true;
                progress.message(&format!(
                    "warning: step {}: {} sliding contact(s) with A = J_N M⁻¹ (J_N + μ J_T)ᵀ ≤ 0 \
                     (Painlevé: the rigid problem has no or several solutions; counted per step \
                     in stats.csv, column painleve; warned once per run)",
                    r.step, r.painleve
                ));
            }
        }
    }
}

/// The scene's simulation on the device: its bodies, joints and solver path.
pub fn open_simulation(
    ctx: Arc<GpuContext>,
    scene: &Scene,
    state: &BodyState,
) -> Result<Simulation, RunError> {
    let scope = crate::step::CollideScope {
        periodic: scene.periodic,
        parking: !scene.inflows.is_empty() || !scene.outflows.is_empty(),
    };
    let mut sim = Simulation::open(ctx, state, setup::step_settings(scene), scope)?;
    if !scene.joints.is_empty() {
        let bc = setup::boundary_count(scene);
        sim.set_joints(&crate::scene::joints::build_joints(
            &scene.joints,
            bc,
            state,
        ))?;
    }
    sim.set_lemke(setup::lemke_settings(scene));
    sim.set_lemke_step(scene.solver.lemke_step)?;
    Ok(sim)
}

/// The run's output files: created (with the first frame and measurement sample), or, when
/// resuming, reopened and cut back to the checkpoint's time so that frames, statistics and
/// measurements continue where the checkpoint was taken.
fn open_outputs(
    scene: &Scene,
    scene_path: &Path,
    dir: &Path,
    sim: &Simulation,
    state: &BodyState,
    resumed: Option<&Checkpoint>,
) -> Result<(Outputs, Probes), RunError> {
    let at = resumed.map(|ck| ck.time);
    let fresh_from_checkpoint = resumed.is_some() && !dir.join("stats.csv").exists();
    if resumed.is_none() || fresh_from_checkpoint {
        let _ = std::fs::copy(scene_path, dir.join("scene.toml"));
    }
    let stats_path = dir.join("stats.csv");
    let mut out = Outputs {
        files: FrameFiles::open(scene, dir, at)?,
        stats: match resumed {
            Some(ck) if !fresh_from_checkpoint => StatsWriter::append_to(&stats_path, ck.step)?,
            _ => StatsWriter::create(&stats_path)?,
        },
    };
    if let Some(t) = at {
        // Measurements continue their files; the sample at the checkpoint's step is kept.
        let probes = Probes::new(scene, dir, &sim.read_state()?, t, Some(t))?;
        if fresh_from_checkpoint {
            // A new directory's outputs start with the state they start from.
            out.files.write_frame(sim)?;
        }
        return Ok((out, probes));
    }
    out.files.write_frame(sim)?;
    let mut probes = Probes::new(scene, dir, state, sim.time(), None)?;
    probes.sample(sim, true)?;
    probes.flush()?;
    Ok((out, probes))
}

/// The step the batch starting at `s` ends at: the next frame, checkpoint, schedule change
/// or measurement sample, and at most [`MAX_BATCH`] steps on.
fn batch_end(s: u64, total: u64, scene: &Scene, schedules: &Schedules, files: &RunFiles) -> u64 {
    let probes = &files.probes;
    let next_multiple = |k: u64| (s / k + 1) * k;
    let mut until = total
        .min(next_multiple(scene.output.frame_every.max(1)))
        .min(s + MAX_BATCH);
    if scene.output.checkpoint_every > 0 {
        until = until.min(next_multiple(scene.output.checkpoint_every));
    }
    if let Some(n) = schedules.next_after(s) {
        until = until.min(n);
    }
    if let Some(n) = probes.next_sample(s) {
        until = until.min(n);
    }
    if let Some(n) = files.flow.next_after(s) {
        until = until.min(n);
    }
    until
}

/// What a finished run wrote, for its report.
struct Closed {
    frames: usize,
    contacts_pvd: Option<PathBuf>,
    measurements: Vec<PathBuf>,
}

/// The files a run writes as it goes (statistics and frames through the sink, measurement
/// samples, Lemke's log, checkpoints), and when.
struct RunFiles {
    sink: writer::Sink,
    probes: Probes,
    lemke_csv: Option<crate::realtime::LemkeCsv>,
    checkpoints: Checkpoints,
    flow: flow::Flow,
    frame_every: u64,
    ckpt_every: u64,
    total: u64,
    realtime: bool,
    /// The step of the last frame written.
    last_frame: u64,
}

/// Where the run's checkpoints go, and `run.toml`, rewritten with each.
struct Checkpoints {
    path: PathBuf,
    /// `[output] keep`: how many of the newest stay on disk (see [`kept`]).
    keep: u64,
    scene_hash: u64,
    /// The parameters changed from the library that the resumed checkpoint carried: carried
    /// on into every checkpoint of this run.
    changed: Option<(String, Vec<u8>)>,
    record: owner::RunRecord,
    dir: PathBuf,
    /// The inflow and outflow counters as of the current step ([`flow::Flow::section`]).
    flow_section: Option<Vec<u8>>,
}

impl Checkpoints {
    /// A checkpoint of the current step, then its record.
    fn write(&mut self, sim: &Simulation) -> Result<(), RunError> {
        self.checkpoint_only(sim)?;
        self.record(sim.step_index())
    }

    fn checkpoint_only(&self, sim: &Simulation) -> Result<(), RunError> {
        let mut ck = checkpoint(sim, self.scene_hash)?;
        ck.sections.extend(self.changed.clone());
        if let Some(bytes) = &self.flow_section {
            ck.sections.push((flow::SECTION.into(), bytes.clone()));
        }
        kept::set_aside(&self.path, self.keep, ck.step)?;
        io::write_checkpoint(&self.path, &ck)?;
        Ok(kept::prune(&self.path, self.keep, ck.step)?)
    }

    /// `run.toml` after a checkpoint of `step` (statistics reach it).
    fn record(&mut self, step: u64) -> Result<(), RunError> {
        self.record.checkpoint_step = Some(step);
        self.record.steps_written = step;
        self.record.write(&self.dir)
    }

    /// After a failed write (a full disk, a vanished directory): a checkpoint of the current
    /// step into the same directory, written atomically, so the run resumes from where it
    /// stopped once the outputs can be written again. Not tried when the statistics could not
    /// reach this step (the checkpoint would not match them; the earlier one stays). The
    /// returned error says which happened.
    fn last(&mut self, sim: &Simulation, error: RunError, stats_complete: bool) -> RunError {
        let step = sim.step_index();
        let path = self.path.clone();
        let written = if stats_complete {
            let written = self.checkpoint_only(sim).map_err(|e| e.to_string());
            if written.is_ok() {
                // The record's own failure changes nothing: the checkpoint is the one to
                // resume from.
                let _ = self.record(step);
            }
            written
        } else {
            Err("the statistics could not be written up to this step".into())
        };
        let last_checkpoint = match written {
            Ok(()) => format!(
                "the run stopped at step {step} and wrote a last checkpoint there, {} (resume \
                 from it once the outputs can be written again)",
                path.display()
            ),
            Err(why) => {
                let dir = path.parent().unwrap_or(Path::new("."));
                let earlier = match io::read_checkpoint(&path) {
                    Ok(c) => format!(
                        "{} (step {}) is the last one written",
                        path.display(),
                        c.step
                    ),
                    Err(_) => "no checkpoint of this run exists".into(),
                };
                format!(
                    "the run stopped at step {step} and nothing more could be written to {}: a \
                     last checkpoint failed too ({why}); {earlier}",
                    dir.display()
                )
            }
        };
        RunError::WriteFailed {
            error: Box::new(error),
            last_checkpoint,
        }
    }
}

impl Checkpoints {
    /// After the device was lost: the state on it is gone, so no checkpoint is written (it
    /// could only hold what the device no longer has); the one on disk, written atomically
    /// before the loss, is where the run resumes.
    fn after_device_loss(&self, why: String) -> RunError {
        let last_checkpoint = match io::read_checkpoint(&self.path) {
            Ok(c) => format!(
                "the last checkpoint, {} (step {}), is intact: resume from it with --resume {}",
                self.path.display(),
                c.step,
                owner::shell_word(&self.path.display().to_string())
            ),
            Err(_) => "no checkpoint of this run was written before the loss".into(),
        };
        RunError::DeviceLost {
            why,
            last_checkpoint,
        }
    }
}

impl RunFiles {
    /// After a batch: its statistics rows and measurement samples, and at a frame or
    /// checkpoint step the frame and the checkpoint.
    fn after_batch(
        &mut self,
        sim: &Simulation,
        records: &[StepRecord],
        wall_ms: f64,
    ) -> Result<(), RunError> {
        for r in records {
            self.sink.stats(stats_row(r, wall_ms)?)?;
        }
        let s = sim.step_index();
        self.probes.sample(sim, false)?;
        if s.is_multiple_of(self.frame_every) || s == self.total {
            self.probes.sample_joints(sim)?;
            self.sink.frame(sim)?;
            self.last_frame = s;
            // Against the clock these wait for the end of the run (no file I/O in the loop).
            if !self.realtime {
                if let Some(l) = self.lemke_csv.as_mut() {
                    l.flush()?;
                }
                self.probes.flush()?;
                self.flow.flush()?;
            }
        }
        if self.ckpt_every > 0 && s.is_multiple_of(self.ckpt_every) {
            // Statistics, then measurements, then the checkpoint: a run stopped at any point
            // leaves statistics that reach the checkpoint's step, and no sample past them.
            self.sink.flush_stats()?;
            self.probes.flush()?;
            self.flow.flush()?;
            self.checkpoints.write(sim)?;
        }
        Ok(())
    }

    /// Whatever happened (`result`: the loop's), keeps what was computed: statistics so far,
    /// and on a clean stop (finished, Ctrl-C or a termination signal) the last frame and a
    /// checkpoint to resume from. A failed write (of this loop or of the writer thread, whose
    /// error is then the run's) still tries a last checkpoint, see [`Checkpoints::last`].
    fn close(mut self, sim: &Simulation, result: Result<(), RunError>) -> Result<Closed, RunError> {
        let (mut out, written) = self.sink.finish()?;
        let mut result = result.and(written);
        // Statistics first: when they cannot be written, the samples queued with them are
        // dropped, so no measurement file reaches past the last statistics row.
        let stats_complete = match out.stats.flush() {
            Ok(()) => true,
            Err(e) => {
                self.probes.discard_pending();
                result = result.and(Err(e.into()));
                false
            }
        };
        if stats_complete {
            if let Some(l) = self.lemke_csv.as_mut() {
                result = result.and(l.flush().map_err(RunError::from));
            }
            result = result.and(self.probes.flush());
            result = result.and(self.flow.flush());
        }
        match result {
            Ok(()) => {}
            Err(error @ RunError::Io(_)) => {
                return Err(self.checkpoints.last(sim, error, stats_complete));
            }
            Err(RunError::Gpu(GpuError::DeviceLost(why))) => {
                return Err(self.checkpoints.after_device_loss(why));
            }
            Err(error) => return Err(error),
        }
        if sim.step_index() != self.last_frame {
            out.frame(sim)?;
        }
        self.checkpoints.write(sim)?;
        let frames = out.files.frames;
        let contacts_pvd = out
            .files
            .contacts_pvd
            .as_ref()
            .map(|c| c.path().to_path_buf());
        out.stats.finish()?;
        Ok(Closed {
            frames,
            contacts_pvd,
            measurements: self.probes.finish()?,
        })
    }
}

fn run_inner(
    ctx: Arc<GpuContext>,
    scene_path: &Path,
    opts: &RunOptions,
    scale: Option<f64>,
    stop: &AtomicBool,
    progress: &mut dyn Progress,
    realtime: Option<u64>,
) -> Result<(RunReport, Option<crate::realtime::Clock>), RunError> {
    let started = Instant::now();
    let mut run = open_run(ctx, scene_path, opts, scale, progress, realtime.is_some())?;
    let first_step = run.sim.step_index();
    let mut clock = realtime.map(|preroll| {
        let dt = run.scene.sim.dt;
        let left = run.total.saturating_sub(first_step);
        crate::realtime::Clock::new(dt, first_step, left, preroll)
    });
    let result = run.step_batches(&mut clock, stop, progress);
    progress.finish();
    // The output directory's lock (`run._lock`) is held until this function returns.
    let closed = run.files.close(&run.sim, result)?;
    let (sim, dir) = (&run.sim, &run.dir);
    let report = RunReport {
        out_dir: dir.clone(),
        scene_name: run.scene.name.clone(),
        bodies: run.scene.bodies.len(),
        steps_done: sim.step_index(),
        total_steps: run.total,
        first_step,
        resumed_from: opts.resume.clone().or_else(|| opts.from.clone()),
        frames_written: closed.frames,
        interrupted: sim.step_index() < run.total,
        pvd: dir.join("particles.pvd"),
        stats: dir.join("stats.csv"),
        checkpoint: dir.join("checkpoint.bin"),
        measurements: closed.measurements,
        contacts_pvd: closed.contacts_pvd,
        wall_seconds: started.elapsed().as_secs_f64(),
        capped_steps: sim.batched.capped_steps,
        budget_redos: sim.batched.budget_redos,
        regrowths: sim.regrowths,
    };
    Ok((report, clock))
}

/// A run opened and ready to step: its scene, simulation and output files, with the output
/// directory's lock held until it is dropped.
struct OpenRun {
    scene: Scene,
    dir: PathBuf,
    sim: Simulation,
    files: RunFiles,
    schedules: Schedules,
    warnings: OnceWarnings,
    total: u64,
    _lock: owner::RunLock,
}

/// Loads the scene and checks every input (scene, device, checkpoint) before the first output
/// exists; then claims the output directory and opens the outputs, fresh or continued.
fn open_run(
    ctx: Arc<GpuContext>,
    scene_path: &Path,
    opts: &RunOptions,
    scale: Option<f64>,
    progress: &mut dyn Progress,
    realtime: bool,
) -> Result<OpenRun, RunError> {
    let (scene, scene_hash) = load_scene_scaled(scene_path, scale)?;
    for w in &scene.warnings {
        progress.message(&format!("warning: {w}"));
    }
    let dir = opts
        .out_dir
        .clone()
        .unwrap_or_else(|| scene.output.dir.clone());
    let state = setup::build_bodies(&scene);
    crate::limits::check_run(&scene, &ctx)?;
    let mut sim = with_compile_notice(
        progress.compile_lines(),
        "compiling GPU kernels for this scene (the driver caches them: later runs start sooner) ...",
        (COMPILE_NOTICE_AFTER, COMPILE_PROGRESS_EVERY),
        crate::gpu::kernel::pipelines_built,
        || open_simulation(ctx, &scene, &state),
    )?;
    let resumed = match &opts.resume {
        Some(from) => Some(restore(&mut sim, &scene, from, scene_path, scene_hash)?),
        None => None,
    };
    let changed = match &resumed {
        Some(ck) => changed::ChangedParameters::of(ck).unwrap_or_default(),
        None => changed::ChangedParameters::default(),
    };
    if !changed.is_empty() {
        progress.message(&format!(
            "the checkpoint continues with parameters changed from the scene file: {}",
            changed.describe()
        ));
    }
    // A restart's outputs start fresh from its state, as a new run's from step 0.
    let state = match &opts.from {
        Some(from) => {
            restart::restore_from(&mut sim, from, &scene, &state)?;
            sim.read_state()?
        }
        None => state,
    };
    std::fs::create_dir_all(&dir).map_err(|source| RunError::OutDir {
        path: dir.clone(),
        source,
    })?;
    if let Some(from) = &opts.from {
        restart::check_out_dir(from, &dir)?;
    }
    let lock = owner::RunLock::acquire(&dir, &mut |m| progress.message(m))?;
    let claim = resumed.as_ref().zip(opts.resume.as_deref());
    let claim = claim.map(|(ck, from)| (from, ck.step, ck.scene_hash));
    let continuing = owner::claim(&dir, claim, opts.overwrite)? == owner::Outputs::Continue;
    let record = match owner::RunRecord::read(&dir)? {
        Some(mut r) if continuing => {
            r.version = env!("CARGO_PKG_VERSION").to_string();
            r
        }
        _ => owner::RunRecord::new(scene_path, scene_hash, scale, sim.step_index()),
    };
    std::fs::create_dir_all(dir.join("frames")).map_err(|source| RunError::OutDir {
        path: dir.clone(),
        source,
    })?;
    let total = opts.steps.unwrap_or(scene.sim.steps);
    let schedules = Schedules::new(&scene);
    let (out, probes) = open_outputs(&scene, scene_path, &dir, &sim, &state, resumed.as_ref())?;
    // A restart takes the inflow and outflow counters of its checkpoint.
    let from_checkpoint = match &opts.from {
        Some(from) if !scene.inflows.is_empty() || !scene.outflows.is_empty() => {
            Some(io::read_checkpoint(from)?)
        }
        _ => None,
    };
    record.write(&dir)?;
    progress.start(sim.step_index(), total);
    let mut files = RunFiles {
        // Against the wall clock, frames and statistics are written by a thread (`run::writer`).
        sink: writer::Sink::new(out, realtime),
        probes,
        lemke_csv: match sim.lemke_settings() {
            Some(_) => Some(crate::realtime::LemkeCsv::open(
                dir.join("lemke.csv"),
                resumed.as_ref().map(|ck| ck.step),
            )?),
            None => None,
        },
        checkpoints: Checkpoints {
            path: dir.join("checkpoint.bin"),
            keep: scene.output.keep,
            scene_hash,
            changed: changed.section(),
            record,
            dir: dir.clone(),
            flow_section: None,
        },
        flow: flow::Flow::new(
            &scene,
            Some(&dir),
            resumed.as_ref(),
            from_checkpoint.as_ref(),
        )?,
        frame_every: scene.output.frame_every.max(1),
        ckpt_every: scene.output.checkpoint_every,
        total,
        realtime,
        last_frame: sim.step_index(),
    };
    files.checkpoints.flow_section = files.flow.section();
    let warnings = OnceWarnings::new(&scene, &state);
    Ok(OpenRun {
        scene,
        dir,
        sim,
        files,
        schedules,
        warnings,
        total,
        _lock: lock,
    })
}

impl OpenRun {
    /// Steps in batches (up to the next frame, checkpoint, schedule change or measurement)
    /// until the run's last step or a stop request; the first error ends the stepping, and
    /// `RunFiles::close` then writes what can still be written.
    fn step_batches(
        &mut self,
        clock: &mut Option<crate::realtime::Clock>,
        stop: &AtomicBool,
        progress: &mut dyn Progress,
    ) -> Result<(), RunError> {
        let (sim, files, scene) = (&mut self.sim, &mut self.files, &self.scene);
        let total = self.total;
        let first_step = sim.step_index();
        while sim.step_index() < total && !stop.load(Ordering::SeqCst) {
            let s = sim.step_index();
            self.schedules.apply(sim, s);
            let changed = files.flow.apply(sim, s)?;
            files.probes.forget(&changed);
            files.checkpoints.flow_section = files.flow.section();
            let mut until = batch_end(s, total, scene, &self.schedules, files);
            if let Some(c) = clock.as_mut() {
                until = s + 1;
                c.wait_release(s);
            }
            let t0 = Instant::now();
            let steps = (until - s) as u32;
            let advance = |sim: &mut Simulation| sim.advance(steps, scene.output.stats_every);
            // A driver may compile a pipeline at its first dispatch rather than at its creation.
            let records = if s == first_step {
                with_compile_notice(
                    progress.compile_lines(),
                    "the first steps compile the GPU kernels they dispatch (the driver caches them) ...",
                    (COMPILE_NOTICE_AFTER, COMPILE_PROGRESS_EVERY),
                    crate::gpu::kernel::pipelines_built,
                    || advance(&mut *sim),
                )
            } else {
                advance(sim)
            }?;
            if let Some(c) = clock.as_mut() {
                c.finished(sim.step_index(), sim.lemke_log().first().copied());
            }
            if let Some(l) = files.lemke_csv.as_mut() {
                l.push(sim.lemke_log());
            }
            self.warnings
                .check(&records, sim.lemke_settings().is_some(), progress);
            let wall_ms = t0.elapsed().as_secs_f64() * 1e3 / (until - s) as f64;
            files.after_batch(sim, &records, wall_ms)?;
            progress.advance(sim.step_index());
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::{Arc, Mutex};

    fn lines_of(work_ms: u64, after_ms: u64) -> Vec<String> {
        let seen = Arc::new(Mutex::new(Vec::new()));
        let sink = seen.clone();
        let lines: LineSink = Box::new(move |l| sink.lock().unwrap().push(l.to_string()));
        let periods = (Duration::from_millis(after_ms), Duration::from_millis(100));
        let out = with_compile_notice(
            Some(lines),
            "compiling",
            periods,
            || 7,
            || {
                std::thread::sleep(Duration::from_millis(work_ms));
                42
            },
        );
        assert_eq!(out, 42);
        let seen = seen.lock().unwrap().clone();
        seen
    }

    /// A compile longer than the notice delay is announced, reports progress while it lasts
    /// and its end; a shorter one prints nothing.
    #[test]
    fn a_long_kernel_compile_is_announced_with_progress() {
        let long = lines_of(450, 50);
        assert_eq!(long[0], "compiling", "{long:?}");
        assert!(long.len() >= 4, "{long:?}");
        assert!(
            long[1].starts_with("still compiling GPU kernels: "),
            "{long:?}"
        );
        assert!(long[1].ends_with(" s (0 pipelines created)"), "{long:?}");
        let last = long.last().unwrap();
        assert!(last.starts_with("compiled GPU kernels in"), "{long:?}");
        assert!(last.ends_with("(0 pipelines created)"), "{long:?}");
        assert!(lines_of(20, 2_000).is_empty());
    }
}
