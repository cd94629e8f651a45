//! Restarts with changed parameters (`run SCENE --from CHECKPOINT`) and the checkpoints a run
//! keeps (`[output] keep`).

use bristlecone::bodies::BodyState;
use bristlecone::gpu::shared_context;
use bristlecone::io;
use bristlecone::run::{run_scene, RunError, RunOptions, RunReport, Silent};
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;

/// A sphere (r = 1 cm) resting on a plane under gravity tilted by 15° (tan 15° = 0.268), with
/// rolling resistance μ_r = 0.5 so it cannot roll: it holds while μ > tan 15° and slides at
/// a = g (sin 15° − μ cos 15°) below.
fn slope_scene(dir: &Path, name: &str, friction: f64, extra: &str) -> PathBuf {
    let path = dir.join(format!("{name}.toml"));
    let text = format!(
        r#"[simulation]
name = "{name}"
dt = 1e-3
steps = 100
gravity = [2.5390, 0.0, -9.4757]

[[material]]
name = "m"
density = 2500.0
friction = {friction}
rolling_friction = 0.5

[[boundary]]
kind = "plane"
point = [0.0, 0.0, 0.0]
normal = [0.0, 0.0, 1.0]

[[body]]
radius = 0.01
position = [0.0, 0.0, 0.01]

[output]
vtk = false
{extra}
"#
    );
    std::fs::write(&path, text).unwrap();
    path
}

fn run(
    scene: &Path,
    out: &Path,
    steps: Option<u64>,
    from: Option<&Path>,
) -> Result<RunReport, RunError> {
    let opts = RunOptions {
        out_dir: Some(out.to_path_buf()),
        steps,
        from: from.map(Path::to_path_buf),
        ..Default::default()
    };
    run_scene(
        shared_context(),
        scene,
        &opts,
        &AtomicBool::new(false),
        &mut Silent,
    )
}

/// The bodies of a checkpoint.
fn bodies(checkpoint: &Path) -> (u64, BodyState) {
    let ck = io::read_checkpoint(checkpoint).unwrap();
    let state = BodyState::from_bytes(ck.section("bodies").unwrap()).unwrap();
    (ck.step, state)
}

/// Every file under `dir` with its bytes.
fn snapshot(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut files: Vec<_> = walk(dir)
        .into_iter()
        .map(|p| {
            let bytes = std::fs::read(&p).unwrap();
            (p, bytes)
        })
        .collect();
    files.sort();
    files
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .flat_map(|e| match e.path() {
            p if p.is_dir() => walk(&p),
            p => vec![p],
        })
        .collect()
}

/// A bed settled at μ = 0.8 restarted with μ = 0.1 slides at the new μ's rate, while the same
/// restart at μ = 0.8 stays put; the run it started from is untouched.
#[test]
fn a_restart_with_lower_friction_slides_and_leaves_the_old_run_alone() {
    let dir = tempfile::tempdir().unwrap();
    let held = slope_scene(dir.path(), "held", 0.8, "");
    let settled = run(&held, &dir.path().join("settled"), None, None).unwrap();
    let (step, before) = bodies(&settled.checkpoint);
    assert_eq!(step, 100);
    assert!(before.vel[1][0].abs() < 1e-3, "{:?}", before.vel[1]);
    let old = snapshot(&dir.path().join("settled"));

    let slides = slope_scene(dir.path(), "slides", 0.1, "");
    let low = run(
        &slides,
        &dir.path().join("low"),
        Some(200),
        Some(&settled.checkpoint),
    )
    .unwrap();
    let again = run(
        &held,
        &dir.path().join("high"),
        Some(200),
        Some(&settled.checkpoint),
    )
    .unwrap();
    assert_eq!((low.first_step, low.steps_done), (100, 200));
    let (_, low_end) = bodies(&low.checkpoint);
    let (_, high_end) = bodies(&again.checkpoint);

    // 0.1 s of sliding from rest at g (sin 15° − 0.1 cos 15°) = 1.591 m/s².
    let expected = (2.5390 - 0.1 * 9.4757) * 0.1;
    let v = low_end.vel[1][0] as f64;
    assert!((v - expected).abs() < 0.1 * expected, "{v} vs {expected}");
    assert!(high_end.vel[1][0].abs() < 1e-3, "{:?}", high_end.vel[1]);
    // The restart starts where the checkpoint was: it moved on from there, not from step 0.
    let moved = low_end.pos[1][0] - before.pos[1][0];
    assert!(moved > 0.5 * (0.5 * 1.591 * 0.01) as f32, "{moved}");
    let stats = std::fs::read_to_string(&low.stats).unwrap();
    assert!(stats.lines().nth(1).unwrap().starts_with("101,"), "{stats}");

    assert_eq!(snapshot(&dir.path().join("settled")), old);
}

/// A restart of the unchanged scene carries everything a resume does (bodies, warm start):
/// its statistics and final state equal those of `--resume` into a new directory bit for bit.
#[test]
fn a_restart_of_the_same_scene_equals_a_resume() {
    let dir = tempfile::tempdir().unwrap();
    let scene = slope_scene(dir.path(), "same", 0.8, "");
    let first = run(&scene, &dir.path().join("first"), Some(50), None).unwrap();
    let opts = RunOptions {
        out_dir: Some(dir.path().join("resumed")),
        steps: Some(120),
        resume: Some(first.checkpoint.clone()),
        ..Default::default()
    };
    let stop = AtomicBool::new(false);
    let resumed = run_scene(shared_context(), &scene, &opts, &stop, &mut Silent).unwrap();
    let restarted = run(
        &scene,
        &dir.path().join("restarted"),
        Some(120),
        Some(&first.checkpoint),
    )
    .unwrap();
    let rows = |p: &Path| -> Vec<String> {
        let text = std::fs::read_to_string(p).unwrap();
        text.lines()
            .map(|l| l.rsplit_once(',').unwrap().0.to_string())
            .collect()
    };
    assert_eq!(rows(&resumed.stats), rows(&restarted.stats));
    assert!(rows(&restarted.stats).len() > 60);
    let ck = |p: &Path| io::read_checkpoint(p).unwrap().sections;
    assert_eq!(ck(&resumed.checkpoint), ck(&restarted.checkpoint));
}

/// A restart refuses a checkpoint of other bodies, naming the first difference, and the
/// directory of the run it starts from.
#[test]
fn a_restart_refuses_other_bodies_and_its_own_directory() {
    let dir = tempfile::tempdir().unwrap();
    let held = slope_scene(dir.path(), "held", 0.8, "");
    let settled = run(&held, &dir.path().join("settled"), Some(2), None).unwrap();

    let bigger = dir.path().join("bigger.toml");
    let text = std::fs::read_to_string(&held).unwrap();
    std::fs::write(&bigger, text.replace("radius = 0.01", "radius = 0.012")).unwrap();
    let err = run(
        &bigger,
        &dir.path().join("b"),
        None,
        Some(&settled.checkpoint),
    )
    .unwrap_err()
    .to_string();
    assert!(err.contains("body 0 differs: its bounding radius"), "{err}");

    let two = dir.path().join("two.toml");
    std::fs::write(
        &two,
        format!("{text}\n[[body]]\nradius = 0.01\nposition = [0.1, 0.0, 0.01]\n"),
    )
    .unwrap();
    let err = run(&two, &dir.path().join("t"), None, Some(&settled.checkpoint))
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("it holds 2 bodies") && err.contains("has 3"),
        "{err}"
    );

    let err = run(
        &held,
        &dir.path().join("settled"),
        None,
        Some(&settled.checkpoint),
    )
    .unwrap_err()
    .to_string();
    assert!(err.contains("pass another --out"), "{err}");
}

/// `keep = 2` leaves the two newest checkpoints: `checkpoint.bin` and the one before it.
#[test]
fn keep_two_leaves_the_two_newest_checkpoints() {
    let dir = tempfile::tempdir().unwrap();
    let scene = slope_scene(dir.path(), "kept", 0.8, "checkpoint_every = 10\nkeep = 2");
    let out = dir.path().join("out");
    let r = run(&scene, &out, Some(45), None).unwrap();
    let mut names: Vec<String> = std::fs::read_dir(&out)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("checkpoint"))
        .collect();
    names.sort();
    assert_eq!(names, ["checkpoint.bin", "checkpoint_00000040.bin"]);
    assert_eq!(bodies(&r.checkpoint).0, 45);
    assert_eq!(bodies(&out.join("checkpoint_00000040.bin")).0, 40);
}

/// `keep` above 1 needs periodic checkpoints (there would be one only).
#[test]
fn keep_without_checkpoint_every_is_refused_at_its_line() {
    let dir = tempfile::tempdir().unwrap();
    let scene = slope_scene(dir.path(), "k", 0.8, "keep = 3");
    let text = std::fs::read_to_string(&scene).unwrap();
    let e = bristlecone::scene::parse_str(&text, &scene).unwrap_err();
    assert_eq!((e.field.as_str(), e.line), ("output.keep", Some(24)), "{e}");
    assert!(e.message.contains("checkpoint_every"), "{e}");
}
