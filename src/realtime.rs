//! `run --realtime`: stepping against the wall clock at the scene's dt.
//!
//! Step k (counted from the run's first step) is released at `t₀ + k·dt` and due at
//! `t₀ + (k+1)·dt`. A step that finishes early waits for the next release (sleep, then a spin
//! for the last [`SPIN`]); a late step is counted as
//! a deadline miss and the next one starts at once — it is never skipped and the state never
//! changes outside a whole step, so a late step costs time, not correctness. The schedule is
//! absolute: one long step makes the following ones late until the slack is caught up.

use crate::io::{atomic, IoError};

/// The last part of a wait spent spinning instead of sleeping. A sleep overshoots by tens of
/// µs on an idle machine, but on this project's loaded 2-core VM (load average ~10) a
/// SCHED_FIFO thread woke up to ~1.8 ms late: with a 200 µs spin that cost 20 misses in 10⁴
/// steps of the realtime scene. 600 µs absorbs wake-ups up to ~1.4 ms late (with its
/// 0.2 ms steps at dt = 1 ms) while the thread still sleeps ~20 % of each period: a real-time
/// thread busy for more than 95 % of a second is throttled by Linux for the rest of it
/// (`sched_rt_runtime_us`), which would cost far more.
pub const SPIN: Duration = Duration::from_micros(600);
use crate::step::LemkeStepLog;
use std::io::Write;
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
    /// Steps taken before the clock started (`--preroll`): solved and checked like the
    /// others, not scheduled; not in `steps`, `misses` or the statistics above.
    pub preroll: u64,
    /// The longest pre-roll step, seconds (0 without one).
    pub preroll_max: f64,
    /// Steps whose LCP was solved perturbed (a fallback; `lemke.csv` says which and how).
    pub perturbed: u64,
    /// `realtime.csv`: step, step_ms, solve_ms, margin_ms, pivots, retries, perturbation.
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
        if self.preroll > 0 {
            write!(
                f,
                "; after a pre-roll of {} steps before the clock (longest {:.3} ms)",
                self.preroll,
                ms(self.preroll_max)
            )?;
        }
        if self.perturbed > 0 {
            write!(f, "; {} steps solved perturbed", self.perturbed)?;
        }
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
    /// Steps before the clock starts.
    preroll: u64,
    dt: f64,
    /// (step, step seconds, the exact solver's log, margin seconds); preallocated.
    rows: Vec<(u64, f64, Option<LemkeStepLog>, f64)>,
    released: Instant,
}

impl Clock {
    /// A clock for `steps` steps from `first_step` (its record is allocated here, not in the
    /// loop). Starts at the first [`Clock::wait_release`].
    pub(crate) fn new(dt: f64, first_step: u64, steps: u64, preroll: u64) -> Self {
        let now = Instant::now();
        Clock {
            start: now,
            first: first_step,
            preroll,
            dt,
            rows: Vec::with_capacity(steps as usize),
            released: now,
        }
    }

    /// The release of step `step` (0-based count of steps before it), for clocked steps.
    fn at(&self, step: u64) -> Instant {
        let k = step.saturating_sub(self.first + self.preroll);
        self.start + Duration::from_secs_f64(k as f64 * self.dt)
    }

    fn clocked(&self, step: u64) -> bool {
        step >= self.first + self.preroll
    }

    /// Waits until step `s` (0-based index of the step about to be taken) is released.
    pub(crate) fn wait_release(&mut self, s: u64) {
        if !self.clocked(s) {
            self.released = Instant::now();
            return;
        }
        if s == self.first + self.preroll {
            // t₀ is the first clocked release: setup (and the pre-roll) is not charged to it.
            self.start = Instant::now();
        }
        let release = self.at(s);
        loop {
            let now = Instant::now();
            if now >= release {
                break;
            }
            let left = release - now;
            if left > SPIN {
                std::thread::sleep(left - SPIN);
            } else {
                std::hint::spin_loop();
            }
        }
        self.released = Instant::now().max(release);
    }

    /// Records the step that just finished, `s_after` being the step count after it.
    pub(crate) fn finished(&mut self, s_after: u64, lemke: Option<LemkeStepLog>) {
        let now = Instant::now();
        let deadline = self.at(s_after);
        let margin = if !self.clocked(s_after - 1) {
            f64::NAN
        } else if now <= deadline {
            (deadline - now).as_secs_f64()
        } else {
            -(now - deadline).as_secs_f64()
        };
        let step = now.saturating_duration_since(self.released).as_secs_f64();
        self.rows.push((s_after, step, lemke, margin));
    }

    /// Writes `realtime.csv` into `dir` and summarises.
    pub(crate) fn finish(self, dir: &Path) -> Result<RealtimeReport, IoError> {
        let mut text =
            String::from("step,step_ms,solve_ms,margin_ms,pivots,retries,perturbation\n");
        for (s, st, l, m) in &self.rows {
            let lemke = match l {
                Some(l) => format!(
                    "{:.6},{:.6},{},{},{:e}",
                    l.solve_seconds * 1e3,
                    m * 1e3,
                    l.pivots,
                    l.retries,
                    l.perturbation
                ),
                None => format!(",{:.6},,,", m * 1e3),
            };
            let lemke = lemke.replace("NaN", "");
            text.push_str(&format!("{s},{:.6},{lemke}\n", st * 1e3));
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
        type Row = (u64, f64, Option<LemkeStepLog>, f64);
        let (pre, rows): (Vec<&Row>, Vec<&Row>) = self.rows.iter().partition(|r| r.3.is_nan());
        let solve: Vec<f64> = rows
            .iter()
            .map(|r| r.2.map_or(f64::NAN, |l| l.solve_seconds))
            .collect();
        Ok(RealtimeReport {
            steps: rows.len() as u64,
            dt: self.dt,
            misses: rows.iter().filter(|r| r.3 < 0.0).count() as u64,
            worst_margin: rows.iter().map(|r| r.3).fold(f64::INFINITY, f64::min),
            solve: solve.iter().all(|x| !x.is_nan()).then(|| stats(solve)),
            step: stats(rows.iter().map(|r| r.1).collect()),
            preroll: pre.len() as u64,
            preroll_max: pre.iter().map(|r| r.1).fold(0.0, f64::max),
            perturbed: self
                .rows
                .iter()
                .filter(|r| r.2.is_some_and(|l| l.perturbation > 0.0))
                .count() as u64,
            csv,
        })
    }
}

/// `lemke.csv`: how each step's LCP was solved with `kind = "lemke"` — step, LCP rows,
/// pivots (over every start), retries (failed starts before the one that solved: rays or
/// answers rejected by the residual check), perturbation (the relative diagonal perturbation
/// of the LCP that solved, 0 = exact; see `reference::lcp::LEVELS`), solve_ms. Rows are queued
/// and written at [`LemkeCsv::flush`] (output frames), not per step.
pub(crate) struct LemkeCsv {
    path: PathBuf,
    pending: String,
}

const LEMKE_HEADER: &str = "step,rows,pivots,retries,perturbation,solve_ms";

impl LemkeCsv {
    /// A new file with its header, or on a resume (`after_step`) the existing one cut after
    /// that step (an absent file starts anew).
    pub(crate) fn open(path: PathBuf, after_step: Option<u64>) -> Result<Self, IoError> {
        let mut text = format!("{LEMKE_HEADER}\n");
        if let Some(after) = after_step {
            if let Ok(old) = std::fs::read_to_string(&path) {
                let keep = |l: &&str| {
                    l.ends_with(|c: char| c.is_ascii_digit())
                        && l.split(',')
                            .next()
                            .and_then(|s| s.parse::<u64>().ok())
                            .is_some_and(|s| s <= after)
                };
                for l in old.lines().skip(1).filter(keep) {
                    text.push_str(l);
                    text.push('\n');
                }
            }
        }
        atomic::write_atomic(&path, |w| w.write_all(text.as_bytes()))
            .map_err(|e| IoError::os(&path, e))?;
        Ok(LemkeCsv {
            path,
            pending: String::new(),
        })
    }

    pub(crate) fn push(&mut self, log: &[LemkeStepLog]) {
        use std::fmt::Write as _;
        for l in log {
            let _ = writeln!(
                self.pending,
                "{},{},{},{},{:e},{:.6}",
                l.step,
                l.rows,
                l.pivots,
                l.retries,
                l.perturbation,
                l.solve_seconds * 1e3
            );
        }
    }

    pub(crate) fn flush(&mut self) -> Result<(), IoError> {
        if self.pending.is_empty() {
            return Ok(());
        }
        let mut f = std::fs::OpenOptions::new()
            .append(true)
            .open(&self.path)
            .map_err(|e| IoError::os(&self.path, e))?;
        f.write_all(self.pending.as_bytes())
            .map_err(|e| IoError::os(&self.path, e))?;
        self.pending.clear();
        Ok(())
    }
}
