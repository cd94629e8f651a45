//! `run --realtime`: stepping against the wall clock at the scene's dt.
//!
//! Step k (counted from the run's first step) is released at `t₀ + k·dt` and due at
//! `t₀ + (k+1)·dt`. A step that finishes early waits for the next release (sleep, then a short
//! spin for the last 200 µs, since a sleep overshoots by tens of µs); a late step is counted as
//! a deadline miss and the next one starts at once — it is never skipped and the state never
//! changes outside a whole step, so a late step costs time, not correctness. The schedule is
//! absolute: one long step makes the following ones late until the slack is caught up.

use crate::io::{atomic, IoError};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// What a real-time run measured.
#[derive(Clone, Debug, PartialEq)]
pub struct RealtimeReport {
    pub steps: u64,
    pub dt: f64,
    pub misses: u64,
    /// Smallest `deadline − finish` over all steps, in seconds (negative: the worst miss).
    pub worst_margin: f64,
    /// Per-step CPU solve time (exact solver only; None with the GPU solvers, whose solve is
    /// part of the step): median, 99th percentile, maximum, in seconds.
    pub solve: Option<[f64; 3]>,
    /// Per-step wall time from release to finish: median, 99th percentile, maximum.
    pub step: [f64; 3],
    /// `realtime.csv`: step, step_ms, solve_ms, margin_ms.
    pub csv: PathBuf,
}

impl std::fmt::Display for RealtimeReport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let ms = |x: f64| x * 1e3;
        write!(
            f,
            "real time at dt = {} ms: {} steps, {} deadline misses, worst margin {:.3} ms; step {:.3} / {:.3} / {:.3} ms (median / p99 / max)",
            ms(self.dt),
            self.steps,
            self.misses,
            ms(self.worst_margin),
            ms(self.step[0]),
            ms(self.step[1]),
            ms(self.step[2])
        )?;
        if let Some(s) = self.solve {
            write!(
                f,
                "; solve {:.3} / {:.3} / {:.3} ms",
                ms(s[0]),
                ms(s[1]),
                ms(s[2])
            )?;
        }
        Ok(())
    }
}

/// The wall clock of a real-time run.
pub(crate) struct Clock {
    start: Instant,
    first: u64,
    dt: f64,
    /// (step, step seconds, solve seconds or NaN, margin seconds).
    rows: Vec<(u64, f64, f64, f64)>,
    released: Instant,
}

impl Clock {
    pub(crate) fn new(dt: f64, first_step: u64) -> Self {
        let now = Instant::now();
        Clock {
            start: now,
            first: first_step,
            dt,
            rows: Vec::new(),
            released: now,
        }
    }

    fn at(&self, step: u64) -> Instant {
        self.start + Duration::from_secs_f64((step - self.first) as f64 * self.dt)
    }

    /// Waits until step `s` (0-based index of the step about to be taken) is released.
    pub(crate) fn wait_release(&mut self, s: u64) {
        let release = self.at(s);
        loop {
            let now = Instant::now();
            if now >= release {
                break;
            }
            let left = release - now;
            if left > Duration::from_micros(200) {
                std::thread::sleep(left - Duration::from_micros(200));
            } else {
                std::hint::spin_loop();
            }
        }
        self.released = Instant::now().max(release);
    }

    /// Records the step that just finished, `s_after` being the step count after it.
    pub(crate) fn finished(&mut self, s_after: u64, solve_seconds: Option<f64>) {
        let now = Instant::now();
        let deadline = self.at(s_after);
        let margin = if now <= deadline {
            (deadline - now).as_secs_f64()
        } else {
            -(now - deadline).as_secs_f64()
        };
        let step = now.saturating_duration_since(self.released).as_secs_f64();
        self.rows
            .push((s_after, step, solve_seconds.unwrap_or(f64::NAN), margin));
    }

    /// Writes `realtime.csv` into `dir` and summarises.
    pub(crate) fn finish(self, dir: &Path) -> Result<RealtimeReport, IoError> {
        let mut text = String::from("step,step_ms,solve_ms,margin_ms\n");
        for (s, st, so, m) in &self.rows {
            let so = if so.is_nan() {
                String::new()
            } else {
                format!("{:.6}", so * 1e3)
            };
            text.push_str(&format!("{s},{:.6},{so},{:.6}\n", st * 1e3, m * 1e3));
        }
        let csv = dir.join("realtime.csv");
        atomic::write_atomic(&csv, |w| w.write_all(text.as_bytes()))
            .map_err(|e| IoError::os(&csv, e))?;
        let stats = |mut v: Vec<f64>| -> [f64; 3] {
            if v.is_empty() {
                return [0.0; 3];
            }
            v.sort_by(f64::total_cmp);
            let q = |p: f64| v[((v.len() - 1) as f64 * p).round() as usize];
            [q(0.5), q(0.99), v[v.len() - 1]]
        };
        let solve: Vec<f64> = self.rows.iter().map(|r| r.2).collect();
        Ok(RealtimeReport {
            steps: self.rows.len() as u64,
            dt: self.dt,
            misses: self.rows.iter().filter(|r| r.3 < 0.0).count() as u64,
            worst_margin: self.rows.iter().map(|r| r.3).fold(f64::INFINITY, f64::min),
            solve: solve.iter().all(|x| !x.is_nan()).then(|| stats(solve)),
            step: stats(self.rows.iter().map(|r| r.1).collect()),
            csv,
        })
    }
}
