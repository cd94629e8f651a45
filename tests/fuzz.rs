//! Fuzzing every file a user hands the engine: scene text, patch files, OBJ and STL meshes,
//! checkpoints and run directories (`run.toml`, `run.lock`, `stats.csv`).
//!
//! The oracle for every input: no panic, an error that names its file and says what is wrong
//! (a non-empty message; a scene error's line inside the text), and at most
//! [`CPU_LIMIT`] of CPU time (more counts as a hang).
//!
//! Inputs are built from raw bytes with `arbitrary` and driven by `arbtest`: both run on
//! stable Rust without compiler instrumentation (cargo-fuzz and libFuzzer need nightly),
//! both are small and dependency-free (bolero builds libFuzzer's C++ and proptest brings its
//! own strategy and shrinking machinery for value trees we do not need), and `arbtest` runs a
//! property for a time budget and prints the seed of a failing input, which
//! `arbtest(..).seed(..)` replays. The generation is structure-aware: scene and patch files
//! are mutated from the shipped files and recombined table by table from them, meshes and
//! checkpoints are written by small grammars and then damaged.
//!
//! The suite runs each target for a fraction of a second; `examples/fuzz.rs` (which includes
//! this file) runs them for as long as asked and counts executions, panics and hangs.

use arbitrary::{Result, Unstructured};
use bristlecone::io::checkpoint::{crc32, read_checkpoint, write_checkpoint, Checkpoint};
use bristlecone::run::owner::{claim, RunLock, RunRecord};
use std::fmt::Display;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;
use std::time::Duration;

/// CPU time one input may take before it counts as a hang.
pub const CPU_LIMIT: Duration = Duration::from_secs(5);

/// Inputs run, and inputs over [`CPU_LIMIT`], over all targets in this process.
pub static EXECUTIONS: AtomicU64 = AtomicU64::new(0);
pub static HANGS: AtomicU64 = AtomicU64::new(0);

/// One kind of input: a name and a property that builds an input from the bytes and judges
/// what the engine makes of it (returning `Err` only when the bytes ran out).
pub struct Target {
    pub name: &'static str,
    pub property: fn(&mut Unstructured) -> Result<()>,
}

pub const TARGETS: &[Target] = &[
    Target {
        name: "scene_mutated",
        property: scene_mutated,
    },
    Target {
        name: "scene_recombined",
        property: scene_recombined,
    },
    Target {
        name: "patch_file",
        property: patch_file,
    },
    Target {
        name: "obj_mesh",
        property: obj_mesh,
    },
    Target {
        name: "stl_mesh",
        property: stl_mesh,
    },
    Target {
        name: "checkpoint",
        property: checkpoint,
    },
    Target {
        name: "run_directory",
        property: run_directory,
    },
];

/// Runs `target` on the input in `u` under the oracle's time limit.
pub fn execute(target: &Target, u: &mut Unstructured) -> Result<()> {
    let start = thread_cpu_time();
    let result = (target.property)(u);
    let spent = thread_cpu_time().saturating_sub(start);
    EXECUTIONS.fetch_add(1, Ordering::Relaxed);
    if spent > CPU_LIMIT {
        HANGS.fetch_add(1, Ordering::Relaxed);
        panic!(
            "{}: one input took {:.1} s of CPU (limit {} s)",
            target.name,
            spent.as_secs_f64(),
            CPU_LIMIT.as_secs()
        );
    }
    result
}

/// CPU time of the calling thread (Linux: `utime + stime` of `/proc/thread-self/stat`, in
/// clock ticks of 1/100 s); elsewhere wall time since first asked, which only overcounts.
fn thread_cpu_time() -> Duration {
    let ticks = std::fs::read_to_string("/proc/thread-self/stat")
        .ok()
        .and_then(|s| {
            // Fields after the command name (which may hold spaces) start at `state`.
            let rest = &s[s.rfind(')')? + 1..];
            let f: Vec<&str> = rest.split_whitespace().collect();
            Some(f.get(11)?.parse::<u64>().ok()? + f.get(12)?.parse::<u64>().ok()?)
        });
    match ticks {
        Some(t) => Duration::from_millis(t * 10),
        None => {
            static START: OnceLock<std::time::Instant> = OnceLock::new();
            START.get_or_init(std::time::Instant::now).elapsed()
        }
    }
}

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// A scratch directory of this thread (targets write their inputs as files), in memory
/// where the system has a tmpfs (checkpoints and run records are synced to disk as written).
pub fn scratch() -> PathBuf {
    thread_local! {
        static DIR: tempfile::TempDir = tempfile::tempdir_in("/dev/shm")
            .or_else(|_| tempfile::tempdir())
            .expect("a scratch directory");
    }
    DIR.with(|d| d.path().to_path_buf())
}

/// The shipped scene files (and the test fixtures), read once: (path, text).
fn shipped_scenes() -> &'static [(PathBuf, String)] {
    static SCENES: OnceLock<Vec<(PathBuf, String)>> = OnceLock::new();
    SCENES.get_or_init(|| {
        let mut out = Vec::new();
        for dir in ["assets/scenes", "tests/fixtures/scenes"] {
            let mut paths: Vec<PathBuf> = std::fs::read_dir(root().join(dir))
                .expect("scene directory")
                .map(|e| e.expect("directory entry").path())
                .filter(|p| p.extension().is_some_and(|e| e == "toml"))
                .collect();
            paths.sort();
            for p in paths {
                let text = std::fs::read_to_string(&p).expect("a shipped scene reads");
                out.push((p, text));
            }
        }
        out
    })
}

/// Numbers that sit on the edges of what a field accepts or of f32, f64 and the integers.
const EDGE_NUMBERS: &[&str] = &[
    "0",
    "-0.0",
    "1",
    "-1",
    "2",
    "3",
    "0.5",
    "1e-30",
    "-1e-30",
    "1e30",
    "-1e30",
    "1e308",
    "5e-324",
    "nan",
    "inf",
    "-inf",
    "255",
    "256",
    "65535",
    "65536",
    "2147483647",
    "2147483648",
    "4294967295",
    "4294967296",
    "9007199254740993",
    "9223372036854775807",
    "1e6",
    "1e9",
    "3.4e38",
    "3.5e38",
    "1.2e-38",
    "0.001",
    "100000",
    "100001",
];

/// Pieces of TOML syntax and of the scene vocabulary a mutation inserts.
const TOKENS: &[&str] = &[
    "=",
    "[",
    "]",
    "[[",
    "]]",
    "{",
    "}",
    ",",
    "\"",
    "'",
    "\n",
    "#",
    ".",
    "-",
    "\"\"\"",
    "[[body]]\n",
    "[[boundary]]\n",
    "[[generator]]\n",
    "[[joint]]\n",
    "[[material]]\n",
    "[[measure]]\n",
    "[simulation]\n",
    "[solver]\n",
    "[output]\n",
    "[render]\n",
    "[contact]\n",
    "kind = ",
    "shape = ",
    "file = \"",
    "radius = ",
    "position = [",
    "count = ",
    "material = ",
    "dt = ",
    "steps = ",
    "duration = ",
    "true",
    "false",
    "\u{1F600}",
    "\0",
    "\r\n",
];

/// An f64 from the input: an edge number, or any bit pattern.
fn number(u: &mut Unstructured) -> Result<String> {
    Ok(if u.ratio(3, 4)? {
        u.choose(EDGE_NUMBERS)?.to_string()
    } else {
        let v = f64::from_bits(u.arbitrary()?);
        if v.is_finite() {
            format!("{v:e}")
        } else {
            "nan".into()
        }
    })
}

/// Byte ranges of the numbers of a TOML text (digits after `=`, `[`, `,` or `{`), rough but
/// enough to aim a mutation at a value.
fn number_ranges(text: &str) -> Vec<std::ops::Range<usize>> {
    let b = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let starts = (b[i].is_ascii_digit() || b[i] == b'-')
            && i > 0
            && matches!(b[i - 1], b' ' | b'=' | b'[' | b',' | b'{');
        if starts {
            let s = i;
            while i < b.len() && matches!(b[i], b'0'..=b'9' | b'.' | b'e' | b'E' | b'-' | b'+') {
                i += 1;
            }
            out.push(s..i);
        } else {
            i += 1;
        }
    }
    out
}

/// Applies 1 to 4 mutations to `text`: a number set to an edge value, a token inserted, a
/// range deleted or duplicated, two lines swapped, a byte changed, the text cut short.
fn mutate(u: &mut Unstructured, text: &str) -> Result<String> {
    let mut bytes = text.as_bytes().to_vec();
    for _ in 0..u.int_in_range(1..=4)? {
        let len = bytes.len();
        let at = u.int_in_range(0..=len)?;
        match u.int_in_range(0..=6)? {
            0 | 1 => {
                let s = String::from_utf8_lossy(&bytes).into_owned();
                let ranges = number_ranges(&s);
                if !ranges.is_empty() {
                    let r = u.choose(&ranges)?.clone();
                    let v = number(u)?;
                    bytes = format!("{}{v}{}", &s[..r.start], &s[r.end..]).into_bytes();
                }
            }
            2 => {
                let t = u.choose(TOKENS)?;
                bytes.splice(at..at, t.bytes());
            }
            3 => {
                let end = (at + u.int_in_range(1..=64)?).min(len);
                bytes.drain(at..end);
            }
            4 => {
                let end = (at + u.int_in_range(1..=256)?).min(len);
                let copy = bytes[at..end].to_vec();
                let to = u.int_in_range(0..=len)?;
                bytes.splice(to..to, copy);
            }
            5 => {
                let s = String::from_utf8_lossy(&bytes).into_owned();
                let mut lines: Vec<&str> = s.split('\n').collect();
                let (i, j) = (u.choose_index(lines.len())?, u.choose_index(lines.len())?);
                lines.swap(i, j);
                bytes = lines.join("\n").into_bytes();
            }
            _ => {
                if at < len && u.ratio(1, 2)? {
                    bytes[at] = u.arbitrary()?;
                } else {
                    bytes.truncate(at);
                }
            }
        }
    }
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}

/// The oracle on a scene or patch file's error: it points into the file (a line, or the
/// field at fault) besides naming it and saying something.
fn judge_scene_error(e: &bristlecone::scene::SceneError, path: &Path, text: &str) {
    let lines = text.split('\n').count();
    assert!(
        e.line.is_none_or(|l| l >= 1 && l <= lines),
        "line {:?} outside the {lines} lines of the text: {e}\ninput:\n{text}",
        e.line
    );
    assert!(
        e.line.is_some() || !e.field.is_empty(),
        "the error names neither a line nor a field: {e}\ninput:\n{text}"
    );
    judge_error(e, path, text);
}

/// The oracle on an error: it names its file (or directory) and says something.
fn judge_error(error: &dyn Display, names: &Path, input: &str) {
    let shown = error.to_string();
    assert!(
        shown.contains(&names.display().to_string()),
        "the error does not name {}: {shown}\ninput:\n{input}",
        names.display()
    );
    let after_file = shown.rsplit(": ").next().unwrap_or("");
    assert!(
        after_file.trim().len() >= 3,
        "the error says nothing: {shown}\ninput:\n{input}"
    );
}

/// Validates a scene text as the file `path` at `scale` and judges the outcome.
fn judge_scene(text: &str, path: &Path, scale: f64) {
    match bristlecone::scene::parse_str_scaled(text, path, scale) {
        Ok(scene) => {
            // A scene that validates hands the engine finite numbers.
            assert!(
                scene.sim.dt.is_finite() && scene.sim.dt > 0.0,
                "a scene with dt = {} validated:\n{text}",
                scene.sim.dt
            );
            for (i, b) in scene.bodies.iter().enumerate() {
                let numbers = b
                    .position
                    .iter()
                    .chain(&b.velocity)
                    .chain(&b.angular_velocity);
                assert!(
                    numbers.copied().all(f64::is_finite) && b.shape.bounding_radius().is_finite(),
                    "body {i} of a scene that validated is not finite: {b:?}\n{text}"
                );
            }
        }
        Err(e) => judge_scene_error(&e, path, text),
    }
}

/// Scale of a mutated scene's generators: mostly small (a mutation that keeps the scene valid
/// then costs milliseconds), sometimes the full size a user runs.
fn scale(u: &mut Unstructured) -> Result<f64> {
    Ok(if u.ratio(1, 16)? { 1.0 } else { 0.05 })
}

fn scene_mutated(u: &mut Unstructured) -> Result<()> {
    let (path, text) = u.choose(shipped_scenes())?;
    let mutated = mutate(u, text)?;
    judge_scene(&mutated, path, scale(u)?);
    Ok(())
}

/// The tables of every shipped scene: (header, its `key = value` lines).
fn shipped_tables() -> &'static [(String, Vec<String>)] {
    static TABLES: OnceLock<Vec<(String, Vec<String>)>> = OnceLock::new();
    TABLES.get_or_init(|| {
        let mut out: Vec<(String, Vec<String>)> = Vec::new();
        for (_, text) in shipped_scenes() {
            for line in text.lines() {
                let line = line.split(" #").next().unwrap_or("").trim_end();
                if line.starts_with('[') {
                    out.push((line.to_string(), Vec::new()));
                } else if line.contains('=') && !line.trim_start().starts_with('#') {
                    if let Some((_, lines)) = out.last_mut() {
                        lines.push(line.to_string());
                    }
                }
            }
        }
        out
    })
}

/// A scene assembled from shipped tables: each table keeps its header and takes its lines
/// from any shipped table of the same header, some numbers set to edge values.
fn scene_recombined(u: &mut Unstructured) -> Result<()> {
    let tables = shipped_tables();
    let mut text = String::new();
    for _ in 0..u.int_in_range(1..=8)? {
        let (header, _) = u.choose(tables)?;
        text.push_str(header);
        text.push('\n');
        let same: Vec<&Vec<String>> = tables
            .iter()
            .filter(|(h, _)| h == header)
            .map(|(_, l)| l)
            .collect();
        for _ in 0..u.int_in_range(0..=8)? {
            let lines = u.choose(&same)?;
            if lines.is_empty() {
                continue;
            }
            let line = u.choose(lines)?;
            if u.ratio(1, 4)? {
                text.push_str(&mutate(u, line)?);
            } else {
                text.push_str(line);
            }
            text.push('\n');
        }
    }
    // Mesh files are named relative to the scene: place it beside the shipped ones.
    let path = root().join("assets/scenes/recombined.toml");
    judge_scene(&text, &path, scale(u)?);
    Ok(())
}

fn patch_file(u: &mut Unstructured) -> Result<()> {
    static PATCH: OnceLock<String> = OnceLock::new();
    let path = root().join("assets/patches/disc_slide_spin.toml");
    let text = PATCH.get_or_init(|| std::fs::read_to_string(&path).expect("shipped patch file"));
    let mutated = mutate(u, text)?;
    if let Err(e) = bristlecone::patch::file::parse_str(&mutated, &path) {
        judge_scene_error(&e, &path, &mutated);
    }
    Ok(())
}

/// A scene with one sphere above a mesh boundary read from `file`, written to scratch.
fn judge_mesh(file: &str, contents: &[u8]) {
    let dir = scratch();
    std::fs::write(dir.join(file), contents).expect("scratch write");
    let text = format!(
        "[simulation]\ndt = 1e-3\nsteps = 10\n[[material]]\nname = \"m\"\ndensity = 1000.0\n\
         friction = 0.3\n[[body]]\nradius = 0.05\nposition = [0.2, 0.2, 0.5]\n[[boundary]]\n\
         kind = \"mesh\"\nfile = \"{file}\"\n"
    );
    let shown = String::from_utf8_lossy(&contents[..contents.len().min(4096)]).into_owned();
    match bristlecone::scene::parse_str(&text, &dir.join("mesh.toml")) {
        Ok(_) => {}
        Err(e) => {
            assert!(
                e.to_string().contains(file),
                "the error does not name the mesh {file}: {e}\nmesh:\n{shown}"
            );
            judge_error(&e, &dir.join("mesh.toml"), &shown);
        }
    }
}

/// An OBJ of a few vertices and faces (indices in and out of range, negative, with texture
/// and normal indices), other statements, then mutated; or a shipped OBJ mutated.
fn obj_mesh(u: &mut Unstructured) -> Result<()> {
    let text = if u.ratio(1, 3)? {
        let shipped = ["assets/meshes/chute.obj", "tests/fixtures/scenes/tetra.obj"];
        let text = std::fs::read_to_string(root().join(u.choose(&shipped)?)).expect("shipped OBJ");
        mutate(u, &text)?
    } else {
        let mut text = String::new();
        let n_vertices: i32 = u.int_in_range(0..=8)?;
        for _ in 0..n_vertices {
            let c: [i8; 3] = u.arbitrary()?;
            if u.ratio(1, 8)? {
                text.push_str(&format!("v {} {} {}\n", number(u)?, c[1], c[2]));
            } else {
                text.push_str(&format!("v {} {} {}\n", c[0], c[1], c[2]));
            }
        }
        for _ in 0..u.int_in_range(0..=8)? {
            let mut line = String::from("f");
            for _ in 0..u.int_in_range(0..=5)? {
                let i: i32 = u.int_in_range(-n_vertices - 2..=n_vertices + 2)?;
                let suffix = *u.choose(&["", "/1", "//1", "/1/1", "/"])?;
                line.push_str(&format!(" {i}{suffix}"));
            }
            text.push_str(&line);
            text.push('\n');
        }
        for _ in 0..u.int_in_range(0..=2)? {
            let other = [
                "vt 0 0", "vn 0 0 1", "o part", "g group", "s 1", "l 1 2", "p 1",
            ];
            text.push_str(u.choose(&other)?);
            text.push('\n');
        }
        if u.ratio(1, 3)? {
            mutate(u, &text)?
        } else {
            text
        }
    };
    judge_mesh("fuzz.obj", text.as_bytes());
    Ok(())
}

/// A binary STL (header, triangle count that may disagree with the data, triangles with
/// edge coordinates) or an ASCII STL (possibly mutated), or a shipped STL damaged.
fn stl_mesh(u: &mut Unstructured) -> Result<()> {
    let bytes = match u.int_in_range(0..=2)? {
        0 => {
            let mut b = vec![0u8; 80];
            if u.ratio(1, 4)? {
                b[..5].copy_from_slice(b"solid");
            }
            let n = u.int_in_range(0..=6u32)?;
            let stated = if u.ratio(1, 4)? { u.arbitrary()? } else { n };
            b.extend_from_slice(&stated.to_le_bytes());
            for _ in 0..n {
                for _ in 0..12 {
                    let v: f32 = if u.ratio(1, 2)? {
                        u.int_in_range(-3i8..=3)? as f32
                    } else {
                        number(u)?.parse::<f32>().unwrap_or(f32::NAN)
                    };
                    b.extend_from_slice(&v.to_le_bytes());
                }
                b.extend_from_slice(&[0, 0]);
            }
            if u.ratio(1, 4)? {
                let cut = u.int_in_range(0..=b.len())?;
                b.truncate(cut);
            }
            b
        }
        1 => {
            let mut t = String::from("solid s\n");
            for _ in 0..u.int_in_range(0..=4)? {
                t.push_str("facet normal 0 0 1\nouter loop\n");
                for _ in 0..3 {
                    t.push_str(&format!(
                        "vertex {} {} {}\n",
                        number(u)?,
                        number(u)?,
                        number(u)?
                    ));
                }
                t.push_str("endloop\nendfacet\n");
            }
            t.push_str("endsolid s\n");
            if u.ratio(1, 2)? {
                mutate(u, &t)?.into_bytes()
            } else {
                t.into_bytes()
            }
        }
        _ => {
            let shipped = [
                "tests/fixtures/scenes/quad.stl",
                "tests/fixtures/scenes/broken.stl",
            ];
            let mut b = std::fs::read(root().join(u.choose(&shipped)?)).expect("shipped STL");
            for _ in 0..u.int_in_range(1..=4)? {
                let at = u
                    .choose_index(b.len().max(1))?
                    .min(b.len().saturating_sub(1));
                if !b.is_empty() {
                    b[at] = u.arbitrary()?;
                }
            }
            b
        }
    };
    judge_mesh("fuzz.stl", &bytes);
    Ok(())
}

/// A checkpoint as a run writes it (a `bodies` section and others), then damaged: cut
/// short, bits flipped, bits flipped with the checksum recomputed (so the structure behind
/// it is read), a length field set to an edge value, bytes appended.
fn checkpoint_bytes(u: &mut Unstructured) -> Result<Vec<u8>> {
    let mut sections = vec![];
    let bodies: u8 = u.int_in_range(0..=3)?;
    let mut b = (bodies as u64).to_le_bytes().to_vec();
    b.resize(8 + bodies as usize * 128, 0);
    sections.push(("bodies".to_string(), b));
    for _ in 0..u.int_in_range(0..=3)? {
        let name = u.choose(&[
            "contact_capacity",
            "warm_start_keys",
            "lemke_basis",
            "x",
            "",
        ])?;
        if sections.iter().all(|(n, _)| n != name) {
            let len = u.int_in_range(0..=40)?;
            sections.push((name.to_string(), u.bytes(len)?.to_vec()));
        }
    }
    let c = Checkpoint {
        step: u.arbitrary()?,
        time: f64::from_bits(u.arbitrary()?),
        scene_hash: u.arbitrary()?,
        sections,
    };
    let path = scratch().join("written.bin");
    write_checkpoint(&path, &c).expect("a checkpoint writes");
    let mut bytes = std::fs::read(&path).expect("a checkpoint reads back");
    for _ in 0..u.int_in_range(0..=3)? {
        let len = bytes.len();
        match u.int_in_range(0..=4)? {
            0 => bytes.truncate(u.int_in_range(0..=len)?),
            1 if len > 0 => {
                let at = u.choose_index(len)?;
                bytes[at] ^= 1 << u.int_in_range(0..=7)?;
            }
            2 if len > 4 => {
                let at = u.choose_index(len - 4)?;
                bytes[at] ^= 1 << u.int_in_range(0..=7)?;
                let crc = crc32(&bytes[..len - 4]);
                bytes[len - 4..].copy_from_slice(&crc.to_le_bytes());
            }
            3 if len >= 50 + 8 + 4 => {
                // The section count, first name length or first data length (the first
                // section is `bodies`: a 6-byte name).
                let at = *u.choose(&[36usize, 40, 40 + 4 + 6])?;
                let v: u64 = *u.choose(&[0, 1, u32::MAX as u64, u64::MAX, 1 << 40])?;
                let width = if at == 50 { 8 } else { 4 };
                bytes[at..at + width].copy_from_slice(&v.to_le_bytes()[..width]);
                let crc = crc32(&bytes[..len - 4]);
                bytes[len - 4..].copy_from_slice(&crc.to_le_bytes());
            }
            _ => {
                let n = u.int_in_range(0..=16)?;
                bytes.extend_from_slice(u.bytes(n)?);
            }
        }
    }
    Ok(bytes)
}

fn checkpoint(u: &mut Unstructured) -> Result<()> {
    let bytes = checkpoint_bytes(u)?;
    let path = scratch().join("checkpoint.bin");
    std::fs::write(&path, &bytes).expect("scratch write");
    match read_checkpoint(&path) {
        Ok(c) => {
            if let Ok(b) = c.section("bodies") {
                let _ = bristlecone::bodies::BodyState::from_bytes(b);
            }
        }
        Err(e) => judge_error(&e, &path, &format!("{} bytes", bytes.len())),
    }
    Ok(())
}

/// A run directory: `run.toml`, `run.lock`, `stats.csv` and `checkpoint.bin`, each written
/// as a run writes it, mutated, or left out; then claimed for a resume, for a fresh run, and
/// locked.
fn run_directory(u: &mut Unstructured) -> Result<()> {
    let dir = scratch().join("run");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch directory");
    let step = *u.choose(&[0u64, 10, 20, u64::MAX])?;
    let hash: u64 = *u.choose(&[0x1234u64, 0])?;
    let mut record = RunRecord::new(Path::new("scene.toml"), 0x1234, None, 0);
    record.checkpoint_step = u.arbitrary::<Option<u8>>()?.map(|s| s as u64 * 10);
    record.steps_written = u.int_in_range(0..=30)?;
    let record_text = toml::to_string(&record).expect("a record serialises");
    let stats = {
        let mut t = format!("{}\n", bristlecone::io::STATS_HEADER);
        let columns = bristlecone::io::STATS_HEADER.split(',').count();
        for s in 0..u.int_in_range(0..=4)? {
            let mut row = vec![(s * 10).to_string()];
            row.extend((1..columns).map(|_| "0".to_string()));
            t.push_str(&row.join(","));
            t.push('\n');
        }
        t
    };
    let lock = format!(
        "pid = {}\nhost = {:?}\n",
        u.choose(&[1u32, std::process::id(), u32::MAX, 999_999])?,
        std::fs::read_to_string("/proc/sys/kernel/hostname")
            .unwrap_or_default()
            .trim()
    );
    let files = [
        ("run.toml", record_text),
        ("stats.csv", stats),
        ("run.lock", lock),
    ];
    let mut shown = String::new();
    for (name, text) in files {
        match u.int_in_range(0..=3)? {
            0 => continue,
            1 => {}
            _ => {
                let t = mutate(u, &text)?;
                std::fs::write(dir.join(name), &t).expect("scratch write");
                shown.push_str(&format!("--- {name}\n{t}\n"));
                continue;
            }
        }
        std::fs::write(dir.join(name), &text).expect("scratch write");
        shown.push_str(&format!("--- {name}\n{text}\n"));
    }
    if u.ratio(1, 2)? {
        let bytes = checkpoint_bytes(u)?;
        std::fs::write(dir.join("checkpoint.bin"), bytes).expect("scratch write");
    }
    let from = dir.join("checkpoint.bin");
    let overwrite = u.ratio(1, 8)?;
    for resume in [Some((from.as_path(), step, hash)), None] {
        if let Err(e) = claim(&dir, resume, overwrite) {
            judge_error(&e, &dir, &shown);
        }
    }
    match RunLock::acquire(&dir, &mut |_| {}) {
        Ok(held) => drop(held),
        Err(e) => judge_error(&e, &dir, &shown),
    }
    if let Err(e) = RunRecord::read(&dir) {
        judge_error(&e, &dir.join("run.toml"), &shown);
    }
    if let Err(e) = bristlecone::io::read_stats(dir.join("stats.csv")) {
        judge_error(&e, &dir.join("stats.csv"), &shown);
    }
    Ok(())
}

/// Each target for a fixed share of a few seconds; a failure prints the seed that replays
/// it (`arbtest(..).seed(SEED)`).
#[test]
fn every_input_kind_survives_a_short_fuzz_run() {
    let before = EXECUTIONS.load(Ordering::Relaxed);
    for target in TARGETS {
        arbtest::arbtest(|u| execute(target, u))
            .budget(Duration::from_millis(400))
            .run();
    }
    let ran = EXECUTIONS.load(Ordering::Relaxed) - before;
    // Fewer would mean a target gives up on its input at once (the bytes run out before
    // anything reaches the engine) rather than a slow machine.
    assert!(ran >= 100, "only {ran} inputs ran");
}

/// The sections of a checkpoint of a small pour after a few steps (so that it has contacts
/// and warm starts), and of another scene (the pendulum chain: other bodies, joints).
fn restorable_sections() -> [Vec<(String, Vec<u8>)>; 2] {
    let open = |scene: &str, scale| {
        let path = root().join(scene);
        let (scene, _) = bristlecone::run::load_scene_scaled(&path, scale).expect("scene");
        let state = bristlecone::setup::build_bodies(&scene);
        let ctx = bristlecone::gpu::shared_context();
        bristlecone::run::open_simulation(ctx, &scene, &state).expect("simulation")
    };
    let mut pour = open("tests/fixtures/scenes/small_pour.toml", Some(0.1));
    pour.advance(20, 10).expect("steps");
    let chain = open("assets/scenes/pendulum_chain.toml", None);
    [pour, chain].map(|s| s.checkpoint_sections().expect("sections"))
}

/// Checkpoints whose checksum is valid but whose sections are another scene's, cut,
/// extended, overwritten or given edge contact capacities, restored into the small pour on
/// the device: restored, or refused with a message; never a panic.
#[test]
fn checkpoints_of_another_scene_or_damaged_behind_their_checksum_restore_or_are_refused() {
    let [own, other] = restorable_sections();
    let path = root().join("tests/fixtures/scenes/small_pour.toml");
    let (scene, _) = bristlecone::run::load_scene_scaled(&path, Some(0.1)).expect("scene");
    let state = bristlecone::setup::build_bodies(&scene);
    let ctx = bristlecone::gpu::shared_context();
    let mut sim = bristlecone::run::open_simulation(ctx, &scene, &state).expect("simulation");
    let (mut restored, mut refused) = (0, 0);
    arbtest::arbtest(|u| {
        let mut sections = if u.ratio(1, 4)? {
            other.clone()
        } else {
            own.clone()
        };
        for _ in 0..u.int_in_range(0..=3)? {
            if sections.is_empty() {
                break;
            }
            let k = u.choose_index(sections.len())?;
            let bytes = &mut sections[k].1;
            match u.int_in_range(0..=4)? {
                0 => {
                    sections.remove(k);
                }
                1 => bytes.truncate(u.int_in_range(0..=bytes.len())?),
                2 => {
                    let n = u.int_in_range(1..=64)?;
                    bytes.extend_from_slice(u.bytes(n)?);
                }
                3 if !bytes.is_empty() => {
                    let at = u.choose_index(bytes.len())?;
                    bytes[at] = u.arbitrary()?;
                }
                _ => {
                    if let Some((_, cap)) =
                        sections.iter_mut().find(|(n, _)| n == "contact_capacity")
                    {
                        let v: u32 = *u.choose(&[0, 1, 1 << 20, 1 << 30, u32::MAX])?;
                        *cap = v.to_le_bytes().to_vec();
                    }
                }
            }
        }
        let ck = Checkpoint {
            step: 20,
            time: 0.02,
            scene_hash: 0,
            sections,
        };
        match sim.restore_sections(20, &ck) {
            Ok(()) => restored += 1,
            Err(e) => {
                assert!(e.len() >= 3, "an empty refusal");
                refused += 1;
            }
        }
        EXECUTIONS.fetch_add(1, Ordering::Relaxed);
        Ok(())
    })
    .budget(Duration::from_millis(1500))
    .run();
    // Both outcomes reached: the damage is neither always fatal nor never looked at.
    assert!(
        restored > 0 && refused > 0,
        "{restored} restored, {refused} refused"
    );
}
