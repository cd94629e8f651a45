//! Output off the step loop for `run --realtime`: frames (VTK with their atomic write and
//! fsync, the .pvd indexes) and statistics rows go to a writer thread, so a clocked step never
//! waits on the file system. Between steps the loop only copies what a frame needs (a
//! [`FrameSnapshot`]: kinematics, the last step's contacts and joint reactions, all already
//! on the host with the CPU step path) and sends it; the thread writes it exactly as the
//! inline writer does (same files, same bytes). An error in the thread stops the run at its
//! next frame and is reported when the run ends.

use super::{Outputs, RunError};
use crate::bodies::BodyState;
use crate::collide::ContactRecord;
use crate::gpu::GpuError;
use crate::io::StatsRow;
use crate::joints::{Joint, JointReaction};
use crate::step::Simulation;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{channel, Sender};
use std::sync::Arc;
use std::thread::JoinHandle;

/// What [`super::FrameFiles`] reads from the simulation to write a frame.
pub(crate) trait FrameSource {
    fn step_index(&self) -> u64;
    fn time(&self) -> f64;
    fn dt(&self) -> f64;
    fn download_kinematics(&self) -> Result<BodyState, GpuError>;
    fn read_contacts(&self) -> Result<(Vec<ContactRecord>, Vec<[f32; 4]>), GpuError>;
    fn joints(&self) -> &[Joint];
    fn joint_reactions(&self) -> Result<Vec<JointReaction>, GpuError>;
}

impl FrameSource for Simulation {
    fn step_index(&self) -> u64 {
        Simulation::step_index(self)
    }
    fn time(&self) -> f64 {
        Simulation::time(self)
    }
    fn dt(&self) -> f64 {
        self.settings.dt
    }
    fn download_kinematics(&self) -> Result<BodyState, GpuError> {
        Simulation::download_kinematics(self)
    }
    fn read_contacts(&self) -> Result<(Vec<ContactRecord>, Vec<[f32; 4]>), GpuError> {
        Simulation::read_contacts(self)
    }
    fn joints(&self) -> &[Joint] {
        Simulation::joints(self)
    }
    fn joint_reactions(&self) -> Result<Vec<JointReaction>, GpuError> {
        Simulation::joint_reactions(self)
    }
}

/// A frame's inputs copied from the simulation between two steps.
pub(super) struct FrameSnapshot {
    step: u64,
    time: f64,
    dt: f64,
    state: BodyState,
    contacts: (Vec<ContactRecord>, Vec<[f32; 4]>),
    joints: Vec<Joint>,
    reactions: Vec<JointReaction>,
}

impl FrameSnapshot {
    pub(super) fn of(sim: &Simulation) -> Result<Self, GpuError> {
        let joints = sim.joints().to_vec();
        let reactions = if joints.is_empty() || sim.step_index() == 0 {
            Vec::new()
        } else {
            sim.joint_reactions()?
        };
        Ok(FrameSnapshot {
            step: sim.step_index(),
            time: sim.time(),
            dt: sim.settings.dt,
            state: sim.download_kinematics()?,
            contacts: sim.read_contacts()?,
            joints,
            reactions,
        })
    }
}

impl FrameSource for FrameSnapshot {
    fn step_index(&self) -> u64 {
        self.step
    }
    fn time(&self) -> f64 {
        self.time
    }
    fn dt(&self) -> f64 {
        self.dt
    }
    fn download_kinematics(&self) -> Result<BodyState, GpuError> {
        Ok(self.state.clone())
    }
    fn read_contacts(&self) -> Result<(Vec<ContactRecord>, Vec<[f32; 4]>), GpuError> {
        Ok(self.contacts.clone())
    }
    fn joints(&self) -> &[Joint] {
        &self.joints
    }
    fn joint_reactions(&self) -> Result<Vec<JointReaction>, GpuError> {
        Ok(self.reactions.clone())
    }
}

enum Job {
    Stats(StatsRow),
    /// The queued statistics rows written (before a checkpoint).
    FlushStats,
    /// A frame, then the statistics flushed (as the inline loop does at frames).
    Frame(Box<FrameSnapshot>),
}

/// The writer thread: owns the outputs until [`Background::finish`] hands them back.
pub(super) struct Background {
    tx: Sender<Job>,
    handle: JoinHandle<(Outputs, Result<(), RunError>)>,
    failed: Arc<AtomicBool>,
    dir: std::path::PathBuf,
}

impl Background {
    pub(super) fn start(mut out: Outputs) -> Self {
        let (tx, rx) = channel::<Job>();
        let failed = Arc::new(AtomicBool::new(false));
        let flag = failed.clone();
        let dir = out.files.dir.clone();
        let handle = std::thread::spawn(move || {
            let mut result = Ok(());
            for job in rx {
                if result.is_err() {
                    continue;
                }
                result = match job {
                    Job::Stats(row) => out.stats.append(&row).map_err(RunError::from),
                    Job::FlushStats => out.stats.flush().map_err(RunError::from),
                    Job::Frame(f) => out.frame(&*f).and_then(|_| Ok(out.stats.flush()?)),
                };
                if result.is_err() {
                    flag.store(true, Ordering::SeqCst);
                }
            }
            (out, result)
        });
        Background {
            tx,
            handle,
            failed,
            dir,
        }
    }

    pub(super) fn stats(&self, row: StatsRow) {
        let _ = self.tx.send(Job::Stats(row));
    }

    pub(super) fn frame(&self, f: FrameSnapshot) {
        let _ = self.tx.send(Job::Frame(Box::new(f)));
    }

    /// Whether a write has failed (the run should stop; [`Background::finish`] says why).
    pub(super) fn failed(&self) -> bool {
        self.failed.load(Ordering::SeqCst)
    }

    /// Waits for every queued write and hands the outputs back with the first error of the
    /// thread, if any (the outputs stay usable: the run's closing writes still need them).
    pub(super) fn finish(self) -> Result<(Outputs, Result<(), RunError>), RunError> {
        drop(self.tx);
        Ok(self
            .handle
            .join()
            .map_err(|_| crate::io::IoError::InvalidInput {
                path: self.dir,
                message: "the output writer thread panicked".into(),
            })?)
    }
}

/// Where the step loop's output goes: written inline, or handed to the writer thread.
pub(super) enum Sink {
    Inline(Box<Outputs>),
    Background(Background),
}

impl Sink {
    pub(super) fn new(out: Outputs, background: bool) -> Self {
        if background {
            Sink::Background(Background::start(out))
        } else {
            Sink::Inline(Box::new(out))
        }
    }

    pub(super) fn stats(&mut self, row: StatsRow) -> Result<(), RunError> {
        match self {
            Sink::Inline(out) => Ok(out.stats.append(&row)?),
            Sink::Background(b) => {
                b.stats(row);
                Ok(())
            }
        }
    }

    /// A frame of the current state, its contacts, and the statistics flushed.
    pub(super) fn frame(&mut self, sim: &Simulation) -> Result<(), RunError> {
        match self {
            Sink::Inline(out) => {
                out.frame(sim)?;
                Ok(out.stats.flush()?)
            }
            Sink::Background(b) if b.failed() => {
                Err(super::RunError::Io(crate::io::IoError::InvalidInput {
                    path: b.dir.clone(),
                    message: "an output write failed (reported at the end of the run)".into(),
                }))
            }
            Sink::Background(b) => {
                b.frame(FrameSnapshot::of(sim)?);
                Ok(())
            }
        }
    }

    /// The statistics rows so far written (inline) or queued to be written next (thread).
    pub(super) fn flush_stats(&mut self) -> Result<(), RunError> {
        match self {
            Sink::Inline(out) => Ok(out.stats.flush()?),
            Sink::Background(b) => {
                let _ = b.tx.send(Job::FlushStats);
                Ok(())
            }
        }
    }

    /// Every queued write done; the outputs back with the first error of the thread, if any
    /// (`Err` only when the thread is gone).
    pub(super) fn finish(self) -> Result<(Outputs, Result<(), RunError>), RunError> {
        match self {
            Sink::Inline(out) => Ok((*out, Ok(()))),
            Sink::Background(b) => b.finish(),
        }
    }
}
