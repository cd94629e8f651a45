//! ParaView `.pvd` time-series index, rewritten atomically after every frame so a run in
//! progress can already be opened (and reloaded) in ParaView.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use super::{write_atomic, IoError};

/// The frames written so far: (simulation time, file name relative to the `.pvd`'s
/// directory).
#[derive(Clone, Debug)]
pub struct Collection {
    path: PathBuf,
    entries: Vec<(f64, String)>,
}

impl Collection {
    /// An empty collection that will be written to `path` (nothing is written yet).
    pub fn new(path: impl Into<PathBuf>) -> Self {
        Collection {
            path: path.into(),
            entries: Vec::new(),
        }
    }

    /// Reads a `.pvd` previously written by this type, e.g. to continue it after a restart.
    /// Only the format [`Collection::write`] produces is understood.
    pub fn read(path: impl Into<PathBuf>) -> Result<Self, IoError> {
        let path = path.into();
        let text = std::fs::read_to_string(&path).map_err(|e| IoError::os(&path, e))?;
        let mut entries = Vec::new();
        for (i, line) in text.lines().enumerate() {
            if !line.trim_start().starts_with("<DataSet ") {
                continue;
            }
            let parse_err = |message: String| IoError::Parse {
                path: path.clone(),
                line: i + 1,
                message,
            };
            let time = attr(line, "timestep")
                .ok_or_else(|| parse_err("DataSet without timestep".into()))?;
            let time: f64 = time
                .parse()
                .map_err(|e| parse_err(format!("timestep {time:?}: {e}")))?;
            let file =
                attr(line, "file").ok_or_else(|| parse_err("DataSet without file".into()))?;
            entries.push((time, file.to_string()));
        }
        Ok(Collection { path, entries })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    pub fn entries(&self) -> &[(f64, String)] {
        &self.entries
    }

    /// Drops frames later than `time` (for resuming from a checkpoint) without writing.
    pub fn retain_until(&mut self, time: f64) {
        self.entries.retain(|(t, _)| *t <= time);
    }

    /// A fresh collection at `path`, or, after `--resume` (`resume_at` = the checkpoint's
    /// time), the existing one with the frames up to that time.
    pub fn open(path: PathBuf, resume_at: Option<f64>) -> Result<Self, IoError> {
        match resume_at {
            Some(t) if path.exists() => {
                let mut c = Collection::read(&path)?;
                c.retain_until(t);
                Ok(c)
            }
            _ => Ok(Collection::new(path)),
        }
    }

    /// Records a frame and rewrites the index. `file` is relative to the `.pvd`'s
    /// directory, which keeps the output folder relocatable.
    pub fn add(&mut self, time: f64, file: impl Into<String>) -> Result<(), IoError> {
        let file = file.into();
        let invalid = |message: String| IoError::InvalidInput {
            path: self.path.clone(),
            message,
        };
        if !time.is_finite() {
            return Err(invalid(format!("frame time {time} is not finite")));
        }
        if file.is_empty()
            || Path::new(&file).is_absolute()
            || file
                .chars()
                .any(|c| c.is_control() || matches!(c, '<' | '>' | '&' | '"' | '\''))
        {
            return Err(invalid(format!(
                "frame file {file:?} must be a non-empty relative path without XML-special characters"
            )));
        }
        self.entries.push((time, file));
        self.write()
    }

    /// Writes the index atomically.
    pub fn write(&self) -> Result<(), IoError> {
        let mut s = String::from(
            "<?xml version=\"1.0\"?>\n<VTKFile type=\"Collection\" version=\"0.1\" byte_order=\"LittleEndian\">\n  <Collection>\n",
        );
        for (time, file) in &self.entries {
            // `{}` on f64 is the shortest decimal that round-trips: deterministic, exact.
            let _ = writeln!(
                s,
                "    <DataSet timestep=\"{time}\" group=\"\" part=\"0\" file=\"{file}\"/>"
            );
        }
        s.push_str("  </Collection>\n</VTKFile>\n");
        write_atomic(&self.path, |w| w.write_all(s.as_bytes()))
            .map_err(|e| IoError::os(&self.path, e))
    }
}

/// Value of `name="..."` in a line we wrote ourselves (no escaping is ever needed).
fn attr<'l>(line: &'l str, name: &str) -> Option<&'l str> {
    let key = format!(" {name}=\"");
    let start = line.find(&key)? + key.len();
    let len = line[start..].find('"')?;
    Some(&line[start..start + len])
}
