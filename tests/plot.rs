//! Plots of a synthetic run directory: the PNGs exist, decode, have the right size and are
//! not blank; odd data does not panic; malformed CSV errors name the file and line.

use std::path::{Path, PathBuf};

use bristlecone::io::{StatsRow, StatsWriter};
use bristlecone::plot::{encode_png, plot_run, PlotError};

/// A decoded 8-bit RGB PNG.
struct Image {
    width: u32,
    height: u32,
    rgb: Vec<u8>,
}

impl Image {
    fn pixel(&self, x: u32, y: u32) -> [u8; 3] {
        let i = (y as usize * self.width as usize + x as usize) * 3;
        [self.rgb[i], self.rgb[i + 1], self.rgb[i + 2]]
    }

    /// Pixels that are neither the white background nor grey (axes, grid, text).
    fn coloured_pixels(&self) -> usize {
        self.rgb
            .chunks(3)
            .filter(|p| {
                let (mx, mn) = (p.iter().max().unwrap(), p.iter().min().unwrap());
                mx - mn > 60
            })
            .count()
    }

    fn non_background_pixels(&self) -> usize {
        self.rgb.chunks(3).filter(|p| p != &[255, 255, 255]).count()
    }
}

/// Decodes a PNG written by `encode_png` (8-bit RGB) with the `png` crate.
fn decode_png(bytes: &[u8]) -> Image {
    let mut reader = png::Decoder::new(bytes).read_info().expect("valid PNG");
    let mut buf = vec![0; reader.output_buffer_size()];
    let info = reader.next_frame(&mut buf).expect("PNG frame");
    assert_eq!(info.color_type, png::ColorType::Rgb);
    assert_eq!(info.bit_depth, png::BitDepth::Eight);
    buf.truncate(info.buffer_size());
    Image {
        width: info.width,
        height: info.height,
        rgb: buf,
    }
}

fn row(
    step: u64,
    time: f64,
    ke: f64,
    contacts: u64,
    iterations: u32,
    residual: f64,
    pen: f64,
) -> StatsRow {
    StatsRow {
        step,
        time,
        kinetic_energy: ke,
        contacts,
        iterations,
        residual,
        max_penetration: pen,
        wall_ms: 1.0,
        ..Default::default()
    }
}

fn write_stats(dir: &Path, rows: &[StatsRow]) {
    let mut w = StatsWriter::create(dir.join("stats.csv")).unwrap();
    for r in rows {
        w.append(r).unwrap();
    }
    w.finish().unwrap();
}

fn write_measurement(dir: &Path, name: &str, text: &str) -> PathBuf {
    let m = dir.join("measurements");
    std::fs::create_dir_all(&m).unwrap();
    let p = m.join(name);
    std::fs::write(&p, text).unwrap();
    p
}

fn names(paths: &[PathBuf]) -> Vec<String> {
    paths
        .iter()
        .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
        .collect()
}

/// A settling run: energy decays over decades, contacts grow, the solver converges.
fn settling_stats() -> Vec<StatsRow> {
    (0..400)
        .map(|i| {
            let t = i as f64 * 1e-3;
            row(
                i,
                t,
                2.0 * (-t / 0.03).exp(),
                (600.0 * (1.0 - (-t / 0.05).exp())) as u64,
                20 + (i % 7) as u32 * 3,
                1e-4 * (-t / 0.1).exp() * (1.0 + 0.5 * (i as f64 * 0.7).sin()),
                1e-5 * (1.0 - (-t / 0.02).exp()),
            )
        })
        .collect()
}

#[test]
fn plots_a_run_directory() {
    let dir = tempfile::tempdir().unwrap();
    write_stats(dir.path(), &settling_stats());
    // A mass_flow measurement: masses (kg) and a rate (kg/s) go on two panels.
    let mut flow = String::from("time,net_mass,mass_positive,mass_negative,rate\n");
    for i in 0..=50 {
        let t = 0.02 * i as f64;
        let rate = 0.8 + 0.05 * (t * 20.0).sin();
        let m = 0.8 * t;
        flow.push_str(&format!("{t},{m},{m},0,{rate}\n"));
    }
    write_measurement(dir.path(), "hopper_flow.csv", &flow);

    let paths = plot_run(dir.path()).unwrap();
    assert_eq!(
        names(&paths),
        [
            "kinetic_energy.png",
            "solver.png",
            "contacts.png",
            "max_penetration.png",
            "measurement_hopper_flow.png"
        ]
    );
    for p in &paths {
        assert_eq!(p.parent().unwrap(), dir.path().join("plots"));
        let img = decode_png(&std::fs::read(p).unwrap());
        assert_eq!(img.width, 1000, "{}", p.display());
        let two_panels = p.ends_with("solver.png") || p.ends_with("measurement_hopper_flow.png");
        let expected_h = if two_panels { 1120 } else { 560 };
        assert_eq!(img.height, expected_h, "{}", p.display());
        assert_eq!(img.pixel(0, 0), [255, 255, 255], "white background");
        assert!(
            img.non_background_pixels() > 5000,
            "{} looks blank",
            p.display()
        );
        assert!(
            img.coloured_pixels() > 300,
            "{} has no data line",
            p.display()
        );
        // No temp files left behind.
        let leftovers: Vec<_> = std::fs::read_dir(dir.path().join("plots"))
            .unwrap()
            .filter_map(|e| e.ok())
            .filter(|e| e.file_name().to_string_lossy().starts_with('.'))
            .collect();
        assert!(leftovers.is_empty());
    }
    // Kept for looking at by hand when BRISTLECONE_KEEP_PLOTS names a directory.
    if let Some(keep) = std::env::var_os("BRISTLECONE_KEEP_PLOTS") {
        std::fs::create_dir_all(&keep).unwrap();
        for p in &paths {
            std::fs::copy(p, Path::new(&keep).join(p.file_name().unwrap())).unwrap();
        }
    }
}

#[test]
fn odd_data_does_not_panic() {
    // Header-only stats, an empty measurement, a one-row one, NaN/inf, constant and
    // all-zero columns, a header-only one, an unterminated torn last line.
    let dir = tempfile::tempdir().unwrap();
    write_stats(dir.path(), &[]);
    write_measurement(dir.path(), "empty.csv", "");
    write_measurement(dir.path(), "header_only.csv", "time,a,b\n");
    write_measurement(dir.path(), "one_row.csv", "time,a\n0.5,3\n");
    write_measurement(dir.path(), "zeros.csv", "time,a,b\n0,0,0\n1,0,0\n");
    write_measurement(
        dir.path(),
        "messy.csv",
        "time,nan_col,const,zero,inf_mixed\n\
         0,NaN,2,0,1\n\
         1,nan,2,0,inf\n\
         2,NaN,2,0,-inf\n\
         NaN,1,2,0,3\n\
         3,,2,0,2\n\
         4,NaN,2,0,1e30\n\
         5,1,2,0,1",
    );
    write_measurement(dir.path(), "torn.csv", "time,a\n0,1\n1,2\n2,");
    let paths = plot_run(dir.path()).unwrap();
    assert_eq!(
        names(&paths),
        [
            "measurement_messy.png",
            "measurement_one_row.png",
            "measurement_torn.png"
        ]
    );
    for p in &paths {
        let img = decode_png(&std::fs::read(p).unwrap());
        assert!(img.coloured_pixels() > 20, "{} has no data", p.display());
    }

    // A single stats row and constant data.
    let dir = tempfile::tempdir().unwrap();
    write_stats(dir.path(), &[row(0, 0.0, 1.0, 5, 10, 1e-6, 0.0)]);
    let paths = plot_run(dir.path()).unwrap();
    assert_eq!(
        names(&paths),
        ["kinetic_energy.png", "solver.png", "contacts.png"]
    );

    // Completely empty stats file.
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("stats.csv"), "").unwrap();
    assert!(plot_run(dir.path()).unwrap().is_empty());
    assert!(!dir.path().join("plots").exists());
}

#[test]
fn malformed_csv_names_file_and_line() {
    let dir = tempfile::tempdir().unwrap();
    write_stats(dir.path(), &settling_stats()[..3]);
    let bad = write_measurement(dir.path(), "bad.csv", "time,a\n0,1\n1,x\n2,3\n");
    match plot_run(dir.path()) {
        Err(PlotError::Parse {
            path,
            line,
            message,
        }) => {
            assert_eq!(path, bad);
            assert_eq!(line, 3);
            assert!(message.contains("`a`"), "{message}");
        }
        other => panic!("expected a parse error, got {other:?}"),
    }
    let msg = plot_run(dir.path()).unwrap_err().to_string();
    assert!(msg.contains("bad.csv:3:"), "{msg}");

    std::fs::write(&bad, "time,a\n0,1,2\n").unwrap();
    let msg = plot_run(dir.path()).unwrap_err().to_string();
    assert!(
        msg.contains("bad.csv:2:") && msg.contains("2 comma-separated"),
        "{msg}"
    );

    std::fs::remove_file(&bad).unwrap();
    std::fs::write(dir.path().join("stats.csv"), "step,time\n1,2\n").unwrap();
    let msg = plot_run(dir.path()).unwrap_err().to_string();
    assert!(msg.contains("stats.csv:1:"), "{msg}");

    std::fs::remove_file(dir.path().join("stats.csv")).unwrap();
    let e = plot_run(dir.path()).unwrap_err();
    assert!(matches!(e, PlotError::Io { .. }), "{e}");
    assert!(e.to_string().contains("stats.csv"), "{e}");
}

#[test]
fn png_encoder_round_trips() {
    // Runs, pixel runs, noise and long rows: every path of the encoder.
    for (w, h) in [(1, 1), (3, 2), (300, 7), (1000, 3)] {
        let mut rgb = vec![0u8; w * h * 3];
        let mut s = 12345u32;
        for (i, b) in rgb.iter_mut().enumerate() {
            s = s.wrapping_mul(1_103_515_245).wrapping_add(12345);
            *b = match (i / 97) % 4 {
                0 => 255,
                1 => [10, 200, 30][i % 3],
                2 => (s >> 24) as u8,
                _ => (i / 5) as u8,
            };
        }
        let img = decode_png(&encode_png(&rgb, w as u32, h as u32));
        assert_eq!((img.width, img.height), (w as u32, h as u32));
        assert!(img.rgb == rgb, "{w}x{h} round trip");
    }
}

/// Measured points over a law are drawn as unconnected markers: two points at opposite
/// corners colour a few marker discs, where the same two points as a polyline colour the
/// whole diagonal between them.
#[test]
fn measured_points_are_markers_not_a_polyline() {
    use bristlecone::plot::{plot_lines, plot_points_on_lines, LinePanel};
    let dir = tempfile::tempdir().unwrap();
    let corners = vec![(0.0, 0.0), (1.0, 1.0)];
    let panel = |series| LinePanel {
        title: "t".into(),
        x_label: "x [1]".into(),
        y_label: "y [1]".into(),
        series,
    };
    let (marked, joined) = (dir.path().join("m.png"), dir.path().join("l.png"));
    let points = vec![("measured".to_string(), corners.clone())];
    assert!(plot_points_on_lines(&marked, panel(vec![]), points).unwrap());
    let line = vec![("measured".to_string(), corners)];
    assert!(plot_lines(&joined, vec![panel(line)]).unwrap());
    let count = |p: &Path| decode_png(&std::fs::read(p).unwrap()).coloured_pixels();
    let (m, l) = (count(&marked), count(&joined));
    assert!(m > 20, "the markers are drawn: {m} coloured pixels");
    assert!(3 * m < l, "markers {m} px, polyline {l} px");
}
