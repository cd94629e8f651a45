//! Who owns a run directory: a lock file while a run writes into it, and a record of what
//! produced its outputs, so that no run overwrites or splices another's.
//!
//! * `run.lock` (`pid` and `host`) is created atomically (`create_new`) before the first
//!   output and removed when the run ends, also on an error. A second run into the same
//!   directory is refused, naming the directory and the pid. A lock whose pid no longer runs
//!   on this host (a run killed by SIGKILL or a second Ctrl-C) is stale: it is taken over,
//!   with a message. A lock from another host is never taken over (its pid means nothing
//!   here): the message says to remove it once that run is gone.
//! * `run.toml` records the scene file, its hash (text and `--scale`), the scale, the
//!   binary's version, the step of the directory's last checkpoint and the last step with
//!   statistics on disk. A fresh run refuses a directory that holds another run's outputs
//!   unless told to overwrite them; a resume refuses one whose record is of another scene or
//!   scale, or whose statistics do not continue from the checkpoint.

use crate::io::{self, IoError};
use serde::{Deserialize, Serialize};
use std::io::Write;
use std::path::{Path, PathBuf};

use super::RunError;

pub const LOCK_FILE: &str = "run.lock";
pub const RECORD_FILE: &str = "run.toml";

/// The files and folders a run writes at the top of its directory (`frames/` and
/// `measurements/` count when they hold anything).
const OUTPUT_FILES: &[&str] = &[
    RECORD_FILE,
    "stats.csv",
    "checkpoint.bin",
    "lemke.csv",
    "realtime.csv",
];
const OUTPUT_DIRS: &[&str] = &["frames", "measurements"];

/// This host's name (Linux: the kernel's; elsewhere `HOSTNAME`), to tell a local stale lock
/// from another machine's on a shared file system.
fn host_name() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .ok()
        .or_else(|| std::env::var("HOSTNAME").ok())
        .map(|h| h.trim().to_string())
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| "unknown".into())
}

/// Whether process `pid` runs on this host; `None` where that cannot be told (no `/proc`).
fn pid_alive(pid: u32) -> Option<bool> {
    Path::new("/proc/self")
        .exists()
        .then(|| Path::new(&format!("/proc/{pid}")).exists())
}

fn os_error(path: &Path, e: std::io::Error) -> RunError {
    IoError::os(path, e).into()
}

/// The held lock of a run directory; dropping it removes `run.lock`.
pub struct RunLock {
    path: PathBuf,
    text: String,
}

impl RunLock {
    /// Takes `dir/run.lock`, taking over a stale one (said through `note`).
    pub fn acquire(dir: &Path, note: &mut dyn FnMut(&str)) -> Result<RunLock, RunError> {
        let path = dir.join(LOCK_FILE);
        let host = host_name();
        let text = format!("pid = {}\nhost = {:?}\n", std::process::id(), host);
        for _ in 0..2 {
            match std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(&path)
            {
                Ok(mut f) => {
                    f.write_all(text.as_bytes())
                        .and_then(|_| f.sync_all())
                        .map_err(|e| os_error(&path, e))?;
                    return Ok(RunLock { path, text });
                }
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
                Err(e) => return Err(os_error(&path, e)),
            }
            let held = std::fs::read_to_string(&path).unwrap_or_default();
            let field = |name: &str| {
                held.lines()
                    .find_map(|l| l.strip_prefix(name)?.trim().strip_prefix('='))
                    .map(|v| v.trim().trim_matches('"').to_string())
            };
            let (pid, lock_host) = (field("pid"), field("host"));
            let pid_num = pid.as_deref().and_then(|p| p.parse::<u32>().ok());
            let stale = lock_host.as_deref() == Some(host.as_str())
                && pid_num.is_some_and(|p| pid_alive(p) == Some(false));
            if !stale {
                return Err(RunError::Busy {
                    dir: dir.to_path_buf(),
                    message: format!(
                        "another run (pid {} on host {}) is writing into it (lock {}); pass \
                         another --out, or remove the lock once that run is gone",
                        pid.as_deref().unwrap_or("?"),
                        lock_host.as_deref().unwrap_or("?"),
                        path.display()
                    ),
                });
            }
            note(&format!(
                "note: taking over the stale lock {} (pid {} no longer runs on {host})",
                path.display(),
                pid.as_deref().unwrap_or("?")
            ));
            std::fs::remove_file(&path).map_err(|e| os_error(&path, e))?;
        }
        Err(RunError::Busy {
            dir: dir.to_path_buf(),
            message: format!(
                "another run took its lock {} at the same time",
                path.display()
            ),
        })
    }
}

impl Drop for RunLock {
    fn drop(&mut self) {
        // Only our own lock: never one another run took over after a stale-lock check.
        if std::fs::read_to_string(&self.path).is_ok_and(|t| t == self.text) {
            let _ = std::fs::remove_file(&self.path);
        }
    }
}

/// `run.toml`: what produced a run directory.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunRecord {
    /// The scene file as given to the run.
    pub scene: String,
    /// Hash of the scene text and `--scale` (as in checkpoints), hexadecimal.
    pub scene_hash: String,
    /// `--scale`, when given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scale: Option<f64>,
    /// The version of the binary that wrote the directory last.
    pub version: String,
    /// The step of `checkpoint.bin` (none before the first checkpoint).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub checkpoint_step: Option<u64>,
    /// The last step whose statistics are on disk.
    pub steps_written: u64,
}

impl RunRecord {
    pub fn new(scene: &Path, scene_hash: u64, scale: Option<f64>, first_step: u64) -> Self {
        RunRecord {
            scene: scene.display().to_string(),
            scene_hash: format!("{scene_hash:016x}"),
            scale,
            version: env!("CARGO_PKG_VERSION").to_string(),
            checkpoint_step: None,
            steps_written: first_step,
        }
    }

    pub fn read(dir: &Path) -> Result<Option<RunRecord>, RunError> {
        let path = dir.join(RECORD_FILE);
        let text = match std::fs::read_to_string(&path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(os_error(&path, e)),
        };
        toml::from_str(&text).map(Some).map_err(|e| {
            IoError::InvalidInput {
                path,
                message: format!("not a run record: {}", e.message()),
            }
            .into()
        })
    }

    /// Writes `dir/run.toml` atomically.
    pub fn write(&self, dir: &Path) -> Result<(), RunError> {
        let path = dir.join(RECORD_FILE);
        let text = toml::to_string(self).expect("a run record serialises");
        io::write_atomic(&path, |w| {
            writeln!(
                w,
                "# What produced this run directory (written by bristlecone run)."
            )?;
            w.write_all(text.as_bytes())
        })
        .map_err(|e| os_error(&path, e))
    }
}

/// The outputs of an earlier run in `dir` (names relative to it), in a fixed order.
pub fn existing_outputs(dir: &Path) -> Vec<String> {
    let mut found: Vec<String> = OUTPUT_FILES
        .iter()
        .filter(|f| dir.join(f).exists())
        .map(|f| f.to_string())
        .collect();
    let mut pvd: Vec<String> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".pvd") || super::kept::kept_step(n).is_some())
        .collect();
    pvd.sort();
    found.extend(pvd);
    for d in OUTPUT_DIRS {
        let nonempty = std::fs::read_dir(dir.join(d)).is_ok_and(|mut r| r.next().is_some());
        if nonempty {
            found.push(format!("{d}/"));
        }
    }
    found
}

/// Removes the outputs [`existing_outputs`] found (`--overwrite`).
pub fn remove_outputs(dir: &Path, outputs: &[String]) -> Result<(), RunError> {
    for name in outputs {
        let path = dir.join(name.trim_end_matches('/'));
        let removed = if path.is_dir() {
            std::fs::remove_dir_all(&path)
        } else {
            std::fs::remove_file(&path)
        };
        removed.map_err(|e| os_error(&path, e))?;
    }
    Ok(())
}

/// What the run writes into its directory: a fresh set of outputs (from step 0, or from a
/// checkpoint's step into a directory without outputs), or the continuation of the
/// directory's own run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outputs {
    Fresh,
    Continue,
}

/// The refusal of a fresh run into a directory that holds another run's outputs.
fn occupied(dir: &Path, outputs: &[String]) -> RunError {
    RunError::Busy {
        dir: dir.to_path_buf(),
        message: format!(
            "it holds the outputs of an earlier run ({}); pass another --out, or --overwrite to \
             replace them",
            outputs.join(", ")
        ),
    }
}

/// Decides (and with `overwrite` prepares) what a run writes into `dir`, given the checkpoint
/// it resumes from (`resume`: its path, step and scene hash) and the directory's contents.
pub fn claim(
    dir: &Path,
    resume: Option<(&Path, u64, u64)>,
    overwrite: bool,
) -> Result<Outputs, RunError> {
    let outputs = existing_outputs(dir);
    if outputs.is_empty() {
        return Ok(Outputs::Fresh);
    }
    if overwrite {
        remove_outputs(dir, &outputs)?;
        return Ok(Outputs::Fresh);
    }
    let Some((from, step, hash)) = resume else {
        return Err(occupied(dir, &outputs));
    };
    let refuse = |why: String| RunError::Resume {
        path: from.to_path_buf(),
        message: format!(
            "{why}; pass another --out (a new directory starts fresh outputs from the \
             checkpoint), or --overwrite to replace the outputs in {}",
            dir.display()
        ),
    };
    let record = RunRecord::read(dir)?;
    if let Some(r) = &record {
        if r.scene_hash != format!("{hash:016x}") {
            return Err(refuse(format!(
                "{} holds another run's outputs (run.toml: scene {}, scale {}, hash {}; the \
                 checkpoint's hash is {hash:016x})",
                dir.display(),
                r.scene,
                r.scale.map_or("1".into(), |s| s.to_string()),
                r.scene_hash
            )));
        }
    }
    check_statistics(dir, step, record.as_ref()).map_err(refuse)?;
    Ok(Outputs::Continue)
}

/// The statistics in `dir` continue from a checkpoint at `step`: they have its row (a batch
/// always ends with a row at a checkpoint's step), and rows past it only when the checkpoint
/// is the directory's own last one (a run stopped between two checkpoints, whose later rows
/// the resume recomputes).
fn check_statistics(dir: &Path, step: u64, record: Option<&RunRecord>) -> Result<(), String> {
    let path = dir.join("stats.csv");
    let rows = match io::read_stats(&path) {
        Ok(rows) => rows,
        Err(e) => return Err(format!("its statistics cannot be continued: {e}")),
    };
    let last = rows.last().map_or(0, |r| r.step);
    if step > 0 && !rows.iter().any(|r| r.step == step) {
        return Err(format!(
            "{} has no row at the checkpoint's step {step} (its last is step {last}): its \
             statistics do not continue from the checkpoint",
            path.display()
        ));
    }
    let own = record.and_then(|r| r.checkpoint_step) == Some(step);
    if last > step && !own {
        let whose = match record.and_then(|r| r.checkpoint_step) {
            Some(s) => format!("this directory's last checkpoint is at step {s}"),
            None => "this directory has no record of its checkpoint (run.toml)".into(),
        };
        return Err(format!(
            "{} runs to step {last}, past the checkpoint's step {step}, and {whose}: resuming \
             would splice two histories",
            path.display()
        ));
    }
    Ok(())
}

/// `s` quoted for a POSIX shell where it needs it (spaces, quotes, `$`, …).
pub fn shell_word(s: &str) -> String {
    match shlex::try_quote(s) {
        Ok(q) => q.into_owned(),
        // Only a NUL byte cannot be quoted; no path holds one.
        Err(_) => s.to_string(),
    }
}
