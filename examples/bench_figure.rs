//! The book's benchmark-ladder figure from `bristlecone bench` CSV files: wall ms per step
//! and solver bandwidth ÷ copy bandwidth against the grain count, one line per adapter and
//! scene.
//!
//! ```sh
//! cargo run --release --example bench_figure -- assets/images/bench_ladder.png \
//!     "H200=benches/results/h200/ladder_1.csv" "H200=benches/results/h200/ladder_2.csv" \
//!     "lavapipe=benches/results/lavapipe/ladder.csv"
//! ```
//!
//! Arguments after the output path are LABEL=CSV; files with the same label are merged (a
//! size measured twice keeps the later file's row).

use bristlecone::plot::{plot_lines_log, LinePanel};
use std::collections::BTreeMap;
use std::path::Path;
use std::process::ExitCode;

/// (label, scene) → grains → (ms per step, solver bandwidth ÷ copy).
type Curves = BTreeMap<(String, String), BTreeMap<u64, (f64, f64)>>;

fn read(curves: &mut Curves, label: &str, path: &str) -> Result<(), String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{path}: {e}"))?;
    let mut lines = text.lines();
    let header: Vec<&str> = lines
        .next()
        .ok_or(format!("{path}: empty"))?
        .split(',')
        .collect();
    let col = |name: &str| {
        header
            .iter()
            .position(|h| *h == name)
            .ok_or(format!("{path}: no column '{name}'"))
    };
    let (scene, grains, wall, bw) = (
        col("scene")?,
        col("grains")?,
        col("wall_s_per_step")?,
        col("bw_ratio_solve")?,
    );
    for (i, line) in lines.enumerate().filter(|(_, l)| !l.is_empty()) {
        let f: Vec<&str> = line.split(',').collect();
        if f.len() != header.len() {
            return Err(format!(
                "{path}:{}: {} fields, the header has {}",
                i + 2,
                f.len(),
                header.len()
            ));
        }
        let num = |c: usize| -> Result<f64, String> {
            f.get(c).and_then(|v| v.parse().ok()).ok_or(format!(
                "{path}:{}: column {} is not a number",
                i + 2,
                header[c]
            ))
        };
        let key = (label.to_string(), f[scene].to_string());
        let row = (num(wall)? * 1e3, num(bw)?);
        curves
            .entry(key)
            .or_default()
            .insert(num(grains)? as u64, row);
    }
    Ok(())
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some((out, inputs)) = args.split_first() else {
        eprintln!("usage: bench_figure OUT.png LABEL=bench.csv [LABEL=bench.csv ...]");
        return ExitCode::FAILURE;
    };
    let mut curves = Curves::new();
    for arg in inputs {
        let Some((label, path)) = arg.split_once('=') else {
            eprintln!("'{arg}': expected LABEL=CSV");
            return ExitCode::FAILURE;
        };
        if let Err(e) = read(&mut curves, label, path) {
            eprintln!("error: {e}");
            return ExitCode::FAILURE;
        }
    }
    let series = |pick: fn(&(f64, f64)) -> f64| {
        curves
            .iter()
            .map(|((label, scene), rows)| {
                let pts = rows.iter().map(|(n, r)| ((*n as f64).log10(), pick(r)));
                (format!("{label} {scene}"), pts.collect())
            })
            .collect()
    };
    let panels = vec![
        LinePanel {
            title: "wall time per step".into(),
            x_label: "log10 grains".into(),
            y_label: "ms per step".into(),
            series: series(|r| r.0),
        },
        LinePanel {
            title: "solver bandwidth / copy bandwidth (same run)".into(),
            x_label: "log10 grains".into(),
            y_label: "ratio".into(),
            series: series(|r| r.1),
        },
    ];
    match plot_lines_log(Path::new(out), panels) {
        Ok(true) => {
            println!("wrote {out}");
            ExitCode::SUCCESS
        }
        Ok(false) => {
            eprintln!("nothing to draw");
            ExitCode::FAILURE
        }
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}
