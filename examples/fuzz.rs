//! The long fuzz run: every target of `tests/fuzz.rs` in turn, one second each, for as long
//! as asked, counting executions, panics and hangs (an input over 5 s of CPU).
//!
//! ```text
//! nice -n 19 cargo run --release --example fuzz -- --seconds 3600
//! ```
//!
//! A panic prints its message and the seed that replays it; the run goes on and exits with
//! status 1 at the end. An input that does not return within a minute of wall time stops the
//! run at once (its target named), since a thread cannot be stopped from outside.

#[allow(dead_code)]
#[path = "../tests/fuzz.rs"]
mod fuzz;

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

fn seconds_asked() -> Result<u64, String> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.as_slice() {
        [] => Ok(60),
        [flag, n] if flag == "--seconds" => n
            .parse()
            .ok()
            .filter(|&n| n > 0)
            .ok_or_else(|| format!("--seconds: expected a positive whole number, got `{n}`")),
        _ => Err("usage: fuzz [--seconds N]".into()),
    }
}

/// Stops the process when no input has finished for a minute: an input that loops forever
/// is a hang the per-input CPU clock never gets to report.
fn watchdog(current: Arc<AtomicU64>) {
    std::thread::spawn(move || {
        let mut last = (u64::MAX, Instant::now());
        loop {
            std::thread::sleep(Duration::from_secs(5));
            let executions = fuzz::EXECUTIONS.load(Ordering::Relaxed);
            if executions != last.0 {
                last = (executions, Instant::now());
            } else if last.1.elapsed() > Duration::from_secs(60) {
                let target = fuzz::TARGETS[current.load(Ordering::Relaxed) as usize].name;
                eprintln!("hang: an input of target `{target}` has run for over a minute");
                std::process::exit(2);
            }
        }
    });
}

fn main() {
    let seconds = match seconds_asked() {
        Ok(s) => s,
        Err(e) => {
            eprintln!("{e}");
            std::process::exit(2);
        }
    };
    let current = Arc::new(AtomicU64::new(0));
    watchdog(current.clone());
    let start = Instant::now();
    let mut per_target = vec![(0u64, 0u64); fuzz::TARGETS.len()];
    let mut panics = 0u64;
    while start.elapsed() < Duration::from_secs(seconds) {
        for (i, target) in fuzz::TARGETS.iter().enumerate() {
            current.store(i as u64, Ordering::Relaxed);
            let before = fuzz::EXECUTIONS.load(Ordering::Relaxed);
            let outcome = std::panic::catch_unwind(|| {
                arbtest::arbtest(|u| fuzz::execute(target, u))
                    .budget(Duration::from_secs(1))
                    .run()
            });
            per_target[i].0 += fuzz::EXECUTIONS.load(Ordering::Relaxed) - before;
            if outcome.is_err() {
                per_target[i].1 += 1;
                panics += 1;
            }
        }
    }
    // The main thread's scratch directory outlives `main` (no thread-local destructors run
    // at process exit).
    let _ = std::fs::remove_dir_all(fuzz::scratch());
    let executions = fuzz::EXECUTIONS.load(Ordering::Relaxed);
    let hangs = fuzz::HANGS.load(Ordering::Relaxed);
    for (target, (n, p)) in fuzz::TARGETS.iter().zip(&per_target) {
        println!("{:<18} {n:>10} executions {p:>4} panics", target.name);
    }
    println!(
        "total {executions} executions in {:.0} s, {} panics (hangs included), {hangs} hangs \
         over {} s of CPU",
        start.elapsed().as_secs_f64(),
        panics,
        fuzz::CPU_LIMIT.as_secs()
    );
    if panics > 0 {
        std::process::exit(1);
    }
}
