//! Per-step statistics as CSV.
//!
//! Rows are formatted completely before they are written, and written with one
//! `write_all`, so an interrupted run leaves whole lines only. Floats use Rust's shortest
//! round-trip formatting, so the file is a deterministic function of the run except for
//! `wall_ms`.

use std::fmt::Write as _;
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};

use super::{write_atomic, IoError};

pub const STATS_HEADER: &str = "step,time,kinetic_energy,momentum_x,momentum_y,momentum_z,\
angular_momentum_x,angular_momentum_y,angular_momentum_z,contacts,iterations,residual,\
max_penetration,outer_iterations,painleve,wall_ms";

const COLUMNS: usize = 16;

/// Buffered rows are written once this many bytes are pending, even between frames.
const FLUSH_BYTES: usize = 1 << 16;

#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct StatsRow {
    pub step: u64,
    pub time: f64,
    pub kinetic_energy: f64,
    pub momentum: [f64; 3],
    pub angular_momentum: [f64; 3],
    pub contacts: u64,
    pub iterations: u32,
    pub residual: f64,
    pub max_penetration: f64,
    /// Cone problems solved (exact cone: the outer iterations; 1 for the relaxed cone).
    pub outer_iterations: u32,
    /// Sliding contacts with a non-positive friction-coupled normal inverse mass (Painlevé).
    pub painleve: u32,
    /// Wall-clock time of the step: the only non-deterministic column.
    pub wall_ms: f64,
}

impl StatsRow {
    /// The CSV line for this row, newline included.
    pub fn to_csv_line(&self) -> String {
        let mut s = String::with_capacity(256);
        let _ = write!(s, "{},", self.step);
        for x in [self.time, self.kinetic_energy]
            .iter()
            .chain(&self.momentum)
            .chain(&self.angular_momentum)
        {
            push_f64(&mut s, *x);
            s.push(',');
        }
        let _ = write!(s, "{},{},", self.contacts, self.iterations);
        push_f64(&mut s, self.residual);
        s.push(',');
        push_f64(&mut s, self.max_penetration);
        let _ = write!(s, ",{},{},", self.outer_iterations, self.painleve);
        push_f64(&mut s, self.wall_ms);
        s.push('\n');
        s
    }
}

/// Shortest round-trip formatting; scientific outside a human-friendly range so that a
/// residual of 1e-30 stays short. Both forms parse back to the identical f64.
fn push_f64(s: &mut String, x: f64) {
    let a = x.abs();
    let _ = if x == 0.0 || (1e-4..1e15).contains(&a) || !x.is_finite() {
        write!(s, "{x}")
    } else {
        write!(s, "{x:e}")
    };
}

/// Appends statistics rows to a CSV file.
pub struct StatsWriter {
    path: PathBuf,
    file: File,
    pending: String,
}

impl StatsWriter {
    /// Creates (or replaces) the file with just the header.
    pub fn create(path: impl Into<PathBuf>) -> Result<Self, IoError> {
        let path = path.into();
        write_atomic(&path, |w| writeln!(w, "{STATS_HEADER}"))
            .map_err(|e| IoError::os(&path, e))?;
        Self::open_append(path)
    }

    /// Resumes an existing file: keeps the rows with `step <= after_step` (verbatim),
    /// drops the rest, and continues appending after them. The truncation is an atomic
    /// rewrite. An unterminated last line (a write cut short by a crash) is discarded.
    pub fn append_to(path: impl Into<PathBuf>, after_step: u64) -> Result<Self, IoError> {
        let path = path.into();
        let text = std::fs::read_to_string(&path).map_err(|e| IoError::os(&path, e))?;
        let complete = match text.rfind('\n') {
            Some(end) => &text[..=end],
            None => "",
        };
        let mut kept = String::with_capacity(complete.len());
        for (i, line) in complete.lines().enumerate() {
            if i == 0 {
                check_header(&path, line)?;
            } else if parse_row(&path, i + 1, line)?.step > after_step {
                continue;
            }
            kept.push_str(line);
            kept.push('\n');
        }
        if kept.is_empty() {
            return Err(IoError::Parse {
                path,
                line: 1,
                message: "missing header line".into(),
            });
        }
        write_atomic(&path, |w| w.write_all(kept.as_bytes())).map_err(|e| IoError::os(&path, e))?;
        Self::open_append(path)
    }

    fn open_append(path: PathBuf) -> Result<Self, IoError> {
        let file = OpenOptions::new()
            .append(true)
            .open(&path)
            .map_err(|e| IoError::os(&path, e))?;
        Ok(StatsWriter {
            path,
            file,
            pending: String::new(),
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Queues a row; it reaches the file at the next [`flush`](Self::flush) (or earlier
    /// when enough rows are pending).
    pub fn append(&mut self, row: &StatsRow) -> Result<(), IoError> {
        self.pending.push_str(&row.to_csv_line());
        if self.pending.len() >= FLUSH_BYTES {
            self.flush()?;
        }
        Ok(())
    }

    /// Writes all queued rows (whole lines, one `write_all`). Call at output frames.
    pub fn flush(&mut self) -> Result<(), IoError> {
        if !self.pending.is_empty() {
            self.file
                .write_all(self.pending.as_bytes())
                .map_err(|e| IoError::os(&self.path, e))?;
            self.pending.clear();
        }
        Ok(())
    }

    /// Flushes and fsyncs; the end of a run.
    pub fn finish(mut self) -> Result<(), IoError> {
        self.flush()?;
        self.file.sync_all().map_err(|e| IoError::os(&self.path, e))
    }
}

impl Drop for StatsWriter {
    fn drop(&mut self) {
        // Best effort for early exits (errors, Ctrl-C unwinding); `finish` reports errors.
        let _ = self.flush();
    }
}

/// Reads a statistics file written by [`StatsWriter`]. Errors name the file and line.
pub fn read_stats(path: impl AsRef<Path>) -> Result<Vec<StatsRow>, IoError> {
    let path = path.as_ref();
    let text = std::fs::read_to_string(path).map_err(|e| IoError::os(path, e))?;
    let mut lines = text.lines();
    check_header(path, lines.next().unwrap_or(""))?;
    lines
        .enumerate()
        .map(|(i, line)| parse_row(path, i + 2, line))
        .collect()
}

fn check_header(path: &Path, line: &str) -> Result<(), IoError> {
    if line == STATS_HEADER {
        Ok(())
    } else {
        Err(IoError::Parse {
            path: path.to_path_buf(),
            line: 1,
            message: format!("expected header {STATS_HEADER:?}, found {line:?}"),
        })
    }
}

fn parse_row(path: &Path, line_no: usize, line: &str) -> Result<StatsRow, IoError> {
    let err = |message: String| IoError::Parse {
        path: path.to_path_buf(),
        line: line_no,
        message,
    };
    let fields: Vec<&str> = line.split(',').collect();
    if fields.len() != COLUMNS {
        return Err(err(format!(
            "expected {COLUMNS} comma-separated fields, found {}",
            fields.len()
        )));
    }
    let names: Vec<&str> = STATS_HEADER.split(',').collect();
    fn field<T: std::str::FromStr>(fields: &[&str], names: &[&str], i: usize) -> Result<T, String>
    where
        T::Err: std::fmt::Display,
    {
        fields[i]
            .parse()
            .map_err(|e| format!("column `{}`: {:?}: {e}", names[i], fields[i]))
    }
    let f = |i| field::<f64>(&fields, &names, i).map_err(err);
    Ok(StatsRow {
        step: field(&fields, &names, 0).map_err(err)?,
        time: f(1)?,
        kinetic_energy: f(2)?,
        momentum: [f(3)?, f(4)?, f(5)?],
        angular_momentum: [f(6)?, f(7)?, f(8)?],
        contacts: field(&fields, &names, 9).map_err(err)?,
        iterations: field(&fields, &names, 10).map_err(err)?,
        residual: f(11)?,
        max_penetration: f(12)?,
        outer_iterations: field(&fields, &names, 13).map_err(err)?,
        painleve: field(&fields, &names, 14).map_err(err)?,
        wall_ms: f(15)?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn floats_round_trip_exactly() {
        for x in [
            0.0,
            -0.0,
            1.0,
            0.1,
            1e-30,
            -3.5e20,
            f64::MIN_POSITIVE,
            f64::MAX,
            123456.789,
            f64::NAN,
            f64::INFINITY,
        ] {
            let mut s = String::new();
            push_f64(&mut s, x);
            let y: f64 = s.parse().unwrap();
            assert!(
                x.to_bits() == y.to_bits() || (x.is_nan() && y.is_nan()),
                "{x} -> {s}"
            );
        }
        let mut s = String::new();
        push_f64(&mut s, 1e-30);
        assert_eq!(s, "1e-30");
    }
}
