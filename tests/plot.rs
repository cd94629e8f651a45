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

/// Minimal PNG decoder for what `encode_png` writes: 8-bit RGB, non-interlaced, zlib with
/// stored or fixed-Huffman deflate blocks, any of the five row filters. Checks every CRC
/// and the Adler-32.
fn decode_png(bytes: &[u8]) -> Image {
    assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n", "PNG signature");
    let mut at = 8;
    let (mut width, mut height) = (0, 0);
    let mut idat = Vec::new();
    loop {
        let len = u32::from_be_bytes(bytes[at..at + 4].try_into().unwrap()) as usize;
        let kind = &bytes[at + 4..at + 8];
        let data = &bytes[at + 8..at + 8 + len];
        let crc = u32::from_be_bytes(bytes[at + 8 + len..at + 12 + len].try_into().unwrap());
        assert_eq!(crc, crc32(&bytes[at + 4..at + 8 + len]), "chunk CRC");
        match kind {
            b"IHDR" => {
                width = u32::from_be_bytes(data[0..4].try_into().unwrap());
                height = u32::from_be_bytes(data[4..8].try_into().unwrap());
                assert_eq!(&data[8..], &[8, 2, 0, 0, 0], "8-bit RGB, no interlace");
            }
            b"IDAT" => idat.extend_from_slice(data),
            b"IEND" => break,
            _ => {}
        }
        at += 12 + len;
    }
    assert_eq!(idat[0] & 0x0F, 8, "zlib deflate");
    assert_eq!(
        ((idat[0] as u32) << 8 | idat[1] as u32) % 31,
        0,
        "zlib check"
    );
    let raw = inflate(&idat[2..idat.len() - 4]);
    let adler = u32::from_be_bytes(idat[idat.len() - 4..].try_into().unwrap());
    assert_eq!(adler, adler32(&raw), "Adler-32");
    let stride = width as usize * 3;
    assert_eq!(raw.len(), (stride + 1) * height as usize, "image data size");
    let mut rgb = vec![0u8; stride * height as usize];
    for y in 0..height as usize {
        let filter = raw[y * (stride + 1)];
        let line = &raw[y * (stride + 1) + 1..(y + 1) * (stride + 1)];
        for x in 0..stride {
            let a = if x >= 3 { rgb[y * stride + x - 3] } else { 0 };
            let b = if y > 0 { rgb[(y - 1) * stride + x] } else { 0 };
            let c = if x >= 3 && y > 0 {
                rgb[(y - 1) * stride + x - 3]
            } else {
                0
            };
            let pred = match filter {
                0 => 0,
                1 => a,
                2 => b,
                3 => ((a as u16 + b as u16) / 2) as u8,
                4 => {
                    let p = a as i16 + b as i16 - c as i16;
                    let (pa, pb, pc) = (
                        (p - a as i16).abs(),
                        (p - b as i16).abs(),
                        (p - c as i16).abs(),
                    );
                    if pa <= pb && pa <= pc {
                        a
                    } else if pb <= pc {
                        b
                    } else {
                        c
                    }
                }
                f => panic!("bad filter type {f}"),
            };
            rgb[y * stride + x] = line[x].wrapping_add(pred);
        }
    }
    Image { width, height, rgb }
}

fn crc32(data: &[u8]) -> u32 {
    let mut c = !0u32;
    for &b in data {
        c ^= b as u32;
        for _ in 0..8 {
            c = if c & 1 != 0 {
                0xEDB8_8320 ^ (c >> 1)
            } else {
                c >> 1
            };
        }
    }
    !c
}

fn adler32(data: &[u8]) -> u32 {
    let (mut a, mut b) = (1u32, 0u32);
    for &x in data {
        a = (a + x as u32) % 65521;
        b = (b + a) % 65521;
    }
    b << 16 | a
}

struct Bits<'a> {
    data: &'a [u8],
    pos: usize,
}

impl Bits<'_> {
    fn bit(&mut self) -> u32 {
        let b = (self.data[self.pos / 8] >> (self.pos % 8)) & 1;
        self.pos += 1;
        b as u32
    }
    fn bits(&mut self, n: u32) -> u32 {
        (0..n).fold(0, |v, i| v | self.bit() << i)
    }
    /// A Huffman code of `n` bits, most significant first.
    fn code(&mut self, n: u32) -> u32 {
        (0..n).fold(0, |v, _| v << 1 | self.bit())
    }
}

fn inflate(data: &[u8]) -> Vec<u8> {
    const LEN_BASE: [usize; 29] = [
        3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 15, 17, 19, 23, 27, 31, 35, 43, 51, 59, 67, 83, 99, 115,
        131, 163, 195, 227, 258,
    ];
    const LEN_EXTRA: [u32; 29] = [
        0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0,
    ];
    const DIST_BASE: [usize; 30] = [
        1, 2, 3, 4, 5, 7, 9, 13, 17, 25, 33, 49, 65, 97, 129, 193, 257, 385, 513, 769, 1025, 1537,
        2049, 3073, 4097, 6145, 8193, 12289, 16385, 24577,
    ];
    let mut out = Vec::new();
    let mut r = Bits { data, pos: 0 };
    loop {
        let last = r.bit();
        match r.bits(2) {
            0 => {
                r.pos = r.pos.div_ceil(8) * 8;
                let len = r.bits(16) as usize;
                let _nlen = r.bits(16);
                let start = r.pos / 8;
                out.extend_from_slice(&data[start..start + len]);
                r.pos += len * 8;
            }
            1 => loop {
                let mut c = r.code(7);
                let sym = if c <= 0x17 {
                    256 + c
                } else {
                    c = c << 1 | r.bit();
                    if (0x30..=0xBF).contains(&c) {
                        c - 0x30
                    } else if (0xC0..=0xC7).contains(&c) {
                        280 + c - 0xC0
                    } else {
                        c = c << 1 | r.bit();
                        144 + c - 0x190
                    }
                };
                match sym {
                    0..=255 => out.push(sym as u8),
                    256 => break,
                    _ => {
                        let k = (sym - 257) as usize;
                        let len = LEN_BASE[k] + r.bits(LEN_EXTRA[k]) as usize;
                        let d = r.code(5) as usize;
                        let extra = if d < 4 { 0 } else { (d as u32 - 2) / 2 };
                        let dist = DIST_BASE[d] + r.bits(extra) as usize;
                        for _ in 0..len {
                            out.push(out[out.len() - dist]);
                        }
                    }
                }
            },
            t => panic!("unsupported deflate block type {t}"),
        }
        if last == 1 {
            return out;
        }
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
    let mut flow = String::from("time,flow_rate,cumulative_mass\n");
    for i in 0..=50 {
        let t = 0.02 * i as f64;
        let rate = 0.8 + 0.05 * (t * 20.0).sin();
        flow.push_str(&format!("{t},{rate},{}\n", 0.8 * t));
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
        let expected_h = if p.ends_with("solver.png") { 1120 } else { 560 };
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
