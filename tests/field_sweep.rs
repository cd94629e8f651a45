//! Every number of a scene file, set to 0, a negative, a tiny, a huge, a non-finite value in
//! turn: `validate` either accepts the scene or refuses it with an error that names that
//! number's own field and line, never a panic and never another field.

use bristlecone::scene::{parse_str_scaled, SceneError};
use std::ops::Range;
use std::path::Path;

/// Values each number is set to.
const VALUES: &[&str] = &["0", "-1", "-1e30", "1e-30", "1e30", "nan", "inf"];

/// A number of the scene text: its byte range, 1-based line, and the key it belongs to (the
/// nearest `key =` before it on its line).
struct Number {
    range: Range<usize>,
    line: usize,
    key: String,
}

/// The numbers of a TOML text outside strings and comments.
fn numbers(text: &str) -> Vec<Number> {
    let mut out = Vec::new();
    let mut offset = 0;
    for (i, line) in text.split_inclusive('\n').enumerate() {
        let bytes = line.as_bytes();
        let (mut k, mut in_string, mut key) = (0, false, String::new());
        let mut word_start: Option<usize> = None;
        while k < bytes.len() {
            let c = bytes[k] as char;
            if in_string {
                in_string = c != '"';
            } else if c == '"' {
                in_string = true;
            } else if c == '#' {
                break;
            } else if c == '=' {
                // The key is the last word before `=`.
                let before = line[..k].trim_end();
                let start = before
                    .rfind(|ch: char| !(ch.is_ascii_alphanumeric() || ch == '_'))
                    .map_or(0, |p| p + 1);
                key = before[start..].to_string();
            } else if (c.is_ascii_digit() || c == '-' || c == '+' || c == '.')
                && word_start.is_none()
                && (k == 0
                    || !(bytes[k - 1] as char).is_ascii_alphanumeric() && bytes[k - 1] != b'_')
            {
                word_start = Some(k);
            }
            if let Some(s) = word_start {
                let end = k + 1 == bytes.len()
                    || !matches!(
                        bytes[k + 1] as char,
                        '0'..='9' | '.' | 'e' | 'E' | '-' | '+' | '_'
                    );
                if end {
                    let token = &line[s..=k];
                    if token.parse::<f64>().is_ok() && !key.is_empty() {
                        out.push(Number {
                            range: offset + s..offset + k + 1,
                            line: i + 1,
                            key: key.clone(),
                        });
                    }
                    word_start = None;
                }
            }
            k += 1;
        }
        offset += line.len();
    }
    out
}

/// Whether `e` is about `n` (set to `v`, on the line `line`): on its line, its field names
/// the number's key, or the inline table that holds it (`region = { … }`), or (a relation
/// between two fields of one line such as `max < min`) its message names the key; or the
/// message quotes `key = v` (a relation such as `duration / dt` refused at the other field)
/// or names the number's line (a relation refused at the other field: an overlap between two
/// bodies, spheres too large for a region).
fn names_its_field(e: &SceneError, n: &Number, v: &str, line: &str) -> bool {
    let key = n.key.as_str();
    let field_last = e.field.rsplit('.').next().unwrap_or("");
    let field_key = field_last.split('[').next().unwrap_or("");
    let holder = !field_key.is_empty() && line.contains(&format!("{field_key} = {{"));
    let here = e.line == Some(n.line) && (field_key == key || holder || e.message.contains(key));
    here || e.message.contains(&format!("{key} = {v}")) || mentions_line(&e.message, n.line)
}

/// Whether `message` says `line N` for exactly this N (not `line N0`).
fn mentions_line(message: &str, n: usize) -> bool {
    let needle = format!("line {n}");
    message
        .match_indices(&needle)
        .any(|(i, _)| !message[i + needle.len()..].starts_with(|c: char| c.is_ascii_digit()))
}

fn sweep(scene: &Path, scale: f64) -> Vec<String> {
    let text = std::fs::read_to_string(scene).unwrap();
    let found = numbers(&text);
    assert!(
        found.len() >= 5,
        "{}: {} numbers",
        scene.display(),
        found.len()
    );
    let mut failures = Vec::new();
    for n in &found {
        for v in VALUES {
            let mutated = format!("{}{v}{}", &text[..n.range.start], &text[n.range.end..]);
            let result = std::panic::catch_unwind(|| parse_str_scaled(&mutated, scene, scale));
            let what = format!("{}:{} {} = {v}", scene.display(), n.line, n.key);
            match result {
                Err(_) => failures.push(format!("{what}: panicked")),
                Ok(Ok(_)) => {}
                Ok(Err(e)) if names_its_field(&e, n, v, text.lines().nth(n.line - 1).unwrap()) => {}
                Ok(Err(e)) => failures.push(format!("{what}: {e}")),
            }
        }
    }
    failures
}

#[test]
fn every_number_of_the_test_scenes_is_accepted_or_refused_by_its_own_field() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut failures = Vec::new();
    // Spheres, boxes, capsules, cylinders, clumps, mesh and container boundaries, joints,
    // schedules, measurements and both generator kinds, at 5 % of their generated grains;
    // every shipped scene.
    let scenes = [
        "tests/fixtures/scenes/small_pour.toml",
        "assets/scenes/mixed_heap.toml",
        "assets/scenes/pendulum_chain.toml",
        "assets/scenes/brick_wall.toml",
        "assets/scenes/capsule_heap.toml",
        "assets/scenes/chute.toml",
        "assets/scenes/clump_pile.toml",
        "assets/scenes/column_collapse.toml",
        "assets/scenes/cylinder_roll.toml",
        "assets/scenes/default.toml",
        "assets/scenes/gravel.toml",
        "assets/scenes/patch_spin.toml",
        "assets/scenes/timber.toml",
        "assets/scenes/ball_drop.toml",
        "assets/scenes/convex_drop.toml",
        "assets/scenes/drum.toml",
        "assets/scenes/hopper.toml",
        "assets/scenes/motor_drum.toml",
        "assets/scenes/patch_push.toml",
        "assets/scenes/periodic_chute.toml",
        "assets/scenes/realtime.toml",
        "tests/fixtures/scenes/mesh_scene.toml",
    ];
    for (scene, scale) in scenes.map(|s| (s, 0.05)) {
        failures.extend(sweep(&root.join(scene), scale));
    }
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn the_number_finder_sees_keys_arrays_and_inline_tables() {
    let text = "a = 1\nb = [2.0, -3e-4]\n# c = 4\nd = { e = 5, f = \"6\" }\nname = \"x7\"\n";
    let found: Vec<(usize, String, &str)> = numbers(text)
        .into_iter()
        .map(|n| (n.line, n.key, &text[n.range]))
        .collect();
    let want = [
        (1, "a", "1"),
        (2, "b", "2.0"),
        (2, "b", "-3e-4"),
        (4, "e", "5"),
    ];
    let want: Vec<(usize, String, &str)> = want
        .iter()
        .map(|&(l, k, v)| (l, k.to_string(), v))
        .collect();
    assert_eq!(found, want);
}

fn small_pour() -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/scenes/small_pour.toml");
    std::fs::read_to_string(path).unwrap()
}

/// The scene error of `text` (as file `s.toml`): (line, field, message).
fn refusal(text: &str, dir: &Path) -> (Option<usize>, String, String) {
    let file = dir.join("s.toml");
    std::fs::write(&file, text).unwrap();
    let e = parse_str_scaled(text, &file, 1.0).expect_err(text);
    (e.line, e.field, e.message)
}

fn line_of(text: &str, needle: &str) -> Option<usize> {
    text.lines().position(|l| l.contains(needle)).map(|i| i + 1)
}

/// Numbers that made a run impossible, each refused at `validate` by its own field: a sweep
/// cap whose history buffer could not be allocated, a duration past the step counter, a
/// lattice of grains whose inverse mass overflows f32 (once blamed on `dt`).
#[test]
fn numbers_that_make_a_run_impossible_are_refused_by_their_own_field() {
    let dir = tempfile::tempdir().unwrap();
    let pour = small_pour();
    let cases = [
        (
            pour.replace(
                "[output]",
                "[solver]\nmax_iterations = 4000000000\n\n[output]",
            ),
            "max_iterations",
            "solver.max_iterations",
        ),
        (
            pour.replace("steps = 120", "duration = 1e30"),
            "duration",
            "simulation.duration",
        ),
        (
            pour.replace("kind = \"random_fill\"", "kind = \"lattice\"")
                .replace("radius = { min = 0.004, max = 0.006 }", "radius = 1e-30")
                .replace("count = 400\n", "max_count = 10\n"),
            "radius = 1e-30",
            "generator[0].radius",
        ),
    ];
    for (text, needle, field) in cases {
        let (line, got, message) = refusal(&text, dir.path());
        assert_eq!(
            (line, got.as_str()),
            (line_of(&text, needle), field),
            "{message}"
        );
        assert!(!message.contains("NaN"), "{message}");
    }
}

fn mesh_scene(dir: &Path, file: &str, contents: &[u8]) -> String {
    std::fs::write(dir.join(file), contents).unwrap();
    format!(
        "[simulation]\ndt = 1e-3\nsteps = 10\n[[material]]\nname = \"m\"\ndensity = 1000.0\n\
         friction = 0.3\n[[body]]\nradius = 0.05\nposition = [0.2, 0.2, 0.5]\n[[boundary]]\n\
         kind = \"mesh\"\nfile = \"{file}\"\n"
    )
}

/// Mesh files a scene cannot use are refused at the boundary's `file`, saying why: a face
/// of two vertices (with its line), a mesh of degenerate triangles only, an empty STL.
#[test]
fn unusable_meshes_are_refused_with_the_reason() {
    let dir = tempfile::tempdir().unwrap();
    let cases: [(&str, &[u8], &str); 4] = [
        (
            "two.obj",
            b"v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 3\nf 1 2\n",
            "line 5: a face needs at least 3 vertices (this one has 2)",
        ),
        (
            "flat.obj",
            b"v 0 0 0\nv 1 0 0\nv 2 0 0\nf 1 2 3\nf 1 1 2\n",
            "none of its 2 triangles has an area",
        ),
        ("empty.stl", b"", "the file is empty"),
        (
            "short.stl",
            b"\0\0\0\0\0\0\0\0\0\0",
            "too short for a binary STL",
        ),
    ];
    for (file, contents, why) in cases {
        let text = mesh_scene(dir.path(), file, contents);
        let (line, field, message) = refusal(&text, dir.path());
        assert_eq!(line, line_of(&text, "file ="), "{file}: {message}");
        assert!(
            field.starts_with("boundary[0]"),
            "{file}: {field}: {message}"
        );
        assert!(message.contains(why), "{file}: {message}");
    }
}

/// `[render] width = 0` names its line and field.
#[test]
fn a_render_width_of_zero_names_its_line_and_field() {
    let text = format!("{}\n[render]\nfov = 40.0\nwidth = 0\n", small_pour());
    let e = bristlecone::render::settings::read_table(&text, Path::new("s.toml"))
        .unwrap_err()
        .to_string();
    let line = line_of(&text, "width = 0").unwrap();
    assert!(e.contains(&format!("s.toml:{line}:")), "{e}");
    assert!(e.contains("render.width") && e.contains("(got 0)"), "{e}");
}

fn cli(args: &[&str]) -> std::process::Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_bristlecone"))
        .args(args)
        .output()
        .unwrap()
}

/// Counts of zero on the command line are refused before anything runs, naming the option.
#[test]
fn zero_steps_and_zero_grain_benchmarks_are_refused() {
    let scene = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/scenes/small_pour.toml");
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let runs = [
        vec![
            "run",
            scene.to_str().unwrap(),
            "--steps",
            "0",
            "--out",
            out.to_str().unwrap(),
        ],
        vec!["bench", "--sizes", "1000,0", "--out", out.to_str().unwrap()],
    ];
    for args in runs {
        let o = cli(&args);
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(!o.status.success(), "{args:?} was accepted");
        // The option given the zero: the word before it.
        let zero = args
            .iter()
            .position(|a| a.split(',').any(|v| v == "0"))
            .unwrap();
        let option = args[zero - 1];
        assert!(err.contains(option) && err.contains('0'), "{args:?}: {err}");
        assert!(!out.exists(), "{args:?} wrote {}", out.display());
    }
}

/// A width the adapter cannot draw is refused quoting the width asked for (not the width of
/// the texture the scene is drawn into, which leaves out the legend strip).
#[test]
fn a_render_width_beyond_the_adapter_quotes_the_width_asked_for() {
    let scene = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/scenes/small_pour.toml");
    let dir = tempfile::tempdir().unwrap();
    let run = dir.path().join("run");
    let o = cli(&[
        "run",
        scene.to_str().unwrap(),
        "--steps",
        "1",
        "--out",
        run.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let o = cli(&["render", run.to_str().unwrap(), "--width", "100000"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success(), "a 100000-pixel image was drawn");
    assert!(err.contains("image 100000x600"), "{err}");
    assert!(!err.contains("panicked"), "{err}");
}

/// A kinematic body driven far from the origin during the run (here 200 km in 2000 s) has
/// the f32 resolution of where it goes, not of where it starts: refused at the velocity that
/// takes it there, its initial one or its schedule's.
#[test]
fn a_kinematic_body_driven_far_away_is_refused_at_its_velocity() {
    let dir = tempfile::tempdir().unwrap();
    let body = "[[body]]\nradius = 0.01\nposition = [0.0, 0.0, 0.5]\nmotion = \"kinematic\"\n";
    let cases = [
        (
            format!("{body}velocity = [100.0, 0.0, 0.0]\n"),
            "velocity = [100.0",
            "body[0].velocity",
        ),
        (
            format!("{body}schedule = [{{ t = 0.01, velocity = [0.0, -100.0, 0.0] }}]\n"),
            "schedule = [",
            "body[0].schedule[0].velocity",
        ),
    ];
    for (table, needle, field) in cases {
        let pour = small_pour().replace("steps = 120", "steps = 2000000");
        let text = format!("{pour}\n{table}");
        let (line, got, message) = refusal(&text, dir.path());
        assert_eq!(
            (line, got.as_str()),
            (line_of(&text, needle), field),
            "{message}"
        );
        assert!(message.contains("prescribed travel"), "{message}");
    }
}
