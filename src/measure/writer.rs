//! Time series of measurements as CSV files, one per measurement.

use std::fmt::Write as _;
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};

use crate::io::{write_atomic, IoError};

/// Buffered rows of one file are written once this many bytes are pending.
const FLUSH_BYTES: usize = 1 << 16;

/// Handle to one measurement file of a [`MeasurementWriter`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct MeasurementId(usize);

struct Series {
    path: PathBuf,
    name: String,
    columns: usize,
    file: File,
    pending: String,
}

/// Writes `run_dir/measurements/NAME.csv`, one file per measurement, with the header
/// `time,COLUMN,…` and one row per sample.
///
/// As with [`crate::io::StatsWriter`], rows are formatted completely, queued, and written
/// as whole lines with one `write_all` at [`flush`](Self::flush) (call it at output frames),
/// so an interrupted run leaves whole lines only. Headers are written atomically. Floats use
/// shortest round-trip formatting (scientific for very small or large magnitudes); NaN and
/// infinities are written as `NaN`, `inf`, `-inf` (the plots skip them).
pub struct MeasurementWriter {
    dir: PathBuf,
    series: Vec<Series>,
}

impl MeasurementWriter {
    /// Creates `run_dir/measurements/` if needed. No file is touched until
    /// [`create`](Self::create) or [`resume`](Self::resume).
    pub fn new(run_dir: &Path) -> Result<Self, IoError> {
        let dir = run_dir.join("measurements");
        std::fs::create_dir_all(&dir).map_err(|e| IoError::os(&dir, e))?;
        Ok(MeasurementWriter {
            dir,
            series: Vec::new(),
        })
    }

    /// The `measurements` directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    pub fn path(&self, id: MeasurementId) -> &Path {
        &self.series[id.0].path
    }

    /// Starts (or replaces) `NAME.csv` with the header `time,columns…`.
    ///
    /// `name`: letters, digits, `_`, `-`; columns: non-empty, no `,`, quotes or line
    /// breaks, distinct, none called `time`. A name already added to this writer is refused.
    pub fn create(&mut self, name: &str, columns: &[&str]) -> Result<MeasurementId, IoError> {
        let (path, header) = self.check(name, columns)?;
        write_atomic(&path, |w| writeln!(w, "{header}")).map_err(|e| IoError::os(&path, e))?;
        self.open(name, path, columns.len())
    }

    /// Continues `NAME.csv` after a restart at `after_time`: keeps the rows with
    /// `time <= after_time` verbatim (an atomic rewrite), drops later ones and any
    /// unterminated last line, and appends after them. A missing file is created; a file
    /// whose header differs is an error (the measurement changed between runs).
    pub fn resume(
        &mut self,
        name: &str,
        columns: &[&str],
        after_time: f64,
    ) -> Result<MeasurementId, IoError> {
        let (path, header) = self.check(name, columns)?;
        let text = match std::fs::read_to_string(&path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return self.create(name, columns);
            }
            Err(e) => return Err(IoError::os(&path, e)),
        };
        let complete = text.rfind('\n').map_or("", |end| &text[..=end]);
        let mut kept = String::with_capacity(complete.len());
        for (i, line) in complete.lines().enumerate() {
            if i == 0 {
                if line != header {
                    return Err(IoError::Parse {
                        path,
                        line: 1,
                        message: format!("expected header {header:?}, found {line:?}"),
                    });
                }
            } else {
                let t = line.split(',').next().unwrap_or("");
                let t: f64 = t.parse().map_err(|e| IoError::Parse {
                    path: path.clone(),
                    line: i + 1,
                    message: format!("column `time`: {t:?}: {e}"),
                })?;
                if t > after_time {
                    continue;
                }
            }
            kept.push_str(line);
            kept.push('\n');
        }
        if kept.is_empty() {
            kept = format!("{header}\n");
        }
        write_atomic(&path, |w| w.write_all(kept.as_bytes())).map_err(|e| IoError::os(&path, e))?;
        self.open(name, path, columns.len())
    }

    fn check(&self, name: &str, columns: &[&str]) -> Result<(PathBuf, String), IoError> {
        let path = self.dir.join(format!("{name}.csv"));
        let invalid = |message: String| IoError::InvalidInput {
            path: path.clone(),
            message,
        };
        if name.is_empty()
            || !name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
        {
            return Err(invalid(format!(
                "measurement name {name:?} must be non-empty letters, digits, `_` or `-`"
            )));
        }
        if self.series.iter().any(|s| s.name == name) {
            return Err(invalid(format!("measurement {name:?} added twice")));
        }
        for (i, c) in columns.iter().enumerate() {
            if c.is_empty() || c.contains([',', '"', '\n', '\r']) || c.trim() != *c {
                return Err(invalid(format!(
                    "column name {c:?} must be non-empty, without commas, quotes, line breaks or surrounding spaces"
                )));
            }
            if *c == "time" || columns[..i].contains(c) {
                return Err(invalid(format!("column name {c:?} is used twice")));
            }
        }
        let header = std::iter::once("time")
            .chain(columns.iter().copied())
            .collect::<Vec<_>>()
            .join(",");
        Ok((path, header))
    }

    fn open(
        &mut self,
        name: &str,
        path: PathBuf,
        columns: usize,
    ) -> Result<MeasurementId, IoError> {
        let file = OpenOptions::new()
            .append(true)
            .open(&path)
            .map_err(|e| IoError::os(&path, e))?;
        self.series.push(Series {
            path,
            name: name.to_string(),
            columns,
            file,
            pending: String::new(),
        });
        Ok(MeasurementId(self.series.len() - 1))
    }

    /// Queues one row `time,values…`; it reaches the file at the next flush. Refuses a row
    /// with the wrong number of values.
    pub fn append(&mut self, id: MeasurementId, time: f64, values: &[f64]) -> Result<(), IoError> {
        let s = &mut self.series[id.0];
        if values.len() != s.columns {
            return Err(IoError::LengthMismatch {
                path: s.path.clone(),
                array: "values".into(),
                expected: s.columns,
                actual: values.len(),
            });
        }
        push_f64(&mut s.pending, time);
        for v in values {
            s.pending.push(',');
            push_f64(&mut s.pending, *v);
        }
        s.pending.push('\n');
        if s.pending.len() >= FLUSH_BYTES {
            flush_series(s)?;
        }
        Ok(())
    }

    /// Writes every queued row (whole lines, one `write_all` per file). Call at frames.
    pub fn flush(&mut self) -> Result<(), IoError> {
        self.series.iter_mut().try_for_each(flush_series)
    }

    /// Drops every queued row unwritten: after the statistics failed to reach a step, its
    /// samples must not reach the files either (no measurement past the last statistics row).
    pub fn discard_pending(&mut self) {
        self.series.iter_mut().for_each(|s| s.pending.clear());
    }

    /// Flushes and fsyncs every file; the end of a run.
    pub fn finish(mut self) -> Result<(), IoError> {
        self.flush()?;
        for s in &self.series {
            s.file.sync_all().map_err(|e| IoError::os(&s.path, e))?;
        }
        Ok(())
    }
}

fn flush_series(s: &mut Series) -> Result<(), IoError> {
    if !s.pending.is_empty() {
        s.file
            .write_all(s.pending.as_bytes())
            .map_err(|e| IoError::os(&s.path, e))?;
        s.pending.clear();
    }
    Ok(())
}

impl Drop for MeasurementWriter {
    fn drop(&mut self) {
        // Best effort for early exits; `finish` reports errors.
        let _ = self.flush();
    }
}

/// Shortest round-trip formatting, scientific outside [1e-4, 1e15) (as the stats CSV).
fn push_f64(s: &mut String, x: f64) {
    let a = x.abs();
    let _ = if x == 0.0 || (1e-4..1e15).contains(&a) || !x.is_finite() {
        write!(s, "{x}")
    } else {
        write!(s, "{x:e}")
    };
}
