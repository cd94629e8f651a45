//! The depth figure (`depth.png`, which `bristlecone bench --layers …` writes itself) from
//! one or more `bench.csv` files of depth runs: mean sweeps per step, worst penetration ÷ d
//! and wall time per step against the depth in layers, a line per scene, pack and solver.
//!
//! ```sh
//! cargo run --example depth_figure -- assets/images/depth_column_lavapipe.png \
//!     benches/results/depth_column_lavapipe.csv
//! ```

use bristlecone::bench::{depth_figure, DepthPoint};
use std::path::Path;
use std::process::ExitCode;

fn read(path: &str, points: &mut Vec<DepthPoint>) -> Result<(), String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{path}: {e}"))?;
    let mut lines = text.lines();
    let header: Vec<&str> = (lines.next().ok_or(format!("{path}: empty"))?)
        .split(',')
        .collect();
    let col = |name: &str| {
        (header.iter().position(|h| *h == name)).ok_or(format!("{path}: no column '{name}'"))
    };
    let names = ["scene", "pack", "solver_kind"].map(col);
    let numbers = [
        "layers",
        "iterations_mean",
        "max_penetration_m",
        "wall_s_per_step",
    ]
    .map(col);
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
        let mut v = [0.0; 4];
        for (x, c) in v.iter_mut().zip(&numbers) {
            let c = c.clone()?;
            *x = f[c]
                .parse()
                .map_err(|_| format!("{path}:{}: column {} is not a number", i + 2, header[c]))?;
        }
        let mut line = Vec::new();
        for c in &names {
            line.push(f[c.clone()?]);
        }
        points.push(DepthPoint {
            line: line.join(" "),
            layers: v[0] as usize,
            sweeps: v[1],
            penetration_d: v[2] / (2.0 * bristlecone::bench::scenes::RADIUS as f64),
            wall_ms: v[3] * 1e3,
        });
    }
    Ok(())
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some((out, csvs)) = args.split_first().filter(|(_, c)| !c.is_empty()) else {
        eprintln!("usage: depth_figure OUT.png BENCH.csv …");
        return ExitCode::FAILURE;
    };
    let mut points = Vec::new();
    for csv in csvs {
        if let Err(e) = read(csv, &mut points) {
            eprintln!("{e}");
            return ExitCode::FAILURE;
        }
    }
    match depth_figure(Path::new(out), &points) {
        Ok(true) => {
            println!("wrote {out}");
            ExitCode::SUCCESS
        }
        Ok(false) => {
            eprintln!("no line has two depths: nothing to draw");
            ExitCode::FAILURE
        }
        Err(e) => {
            eprintln!("{out}: {e}");
            ExitCode::FAILURE
        }
    }
}
