//! Runs that end badly still leave a run that can be resumed: a termination signal takes
//! the Ctrl-C path, a failed write tries a last checkpoint, and the outputs stay consistent
//! with each other (no measurement past the last statistics row).

use bristlecone::gpu::shared_context;
use bristlecone::io;
use bristlecone::run::{run_scene, Progress, RunError, RunOptions, Silent};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

fn fixture() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/scenes/small_pour.toml")
}

/// The small pour with a measurement every 10 steps and frames every 40.
fn measured_pour(dir: &Path) -> PathBuf {
    let text = std::fs::read_to_string(fixture()).unwrap()
        + "\n[[measure]]\nname = \"energy\"\nkind = \"kinetic_energy\"\nevery = 10\n";
    let path = dir.join("pour.toml");
    std::fs::write(&path, text).unwrap();
    path
}

fn last_stats_step(dir: &Path) -> u64 {
    io::read_stats(dir.join("stats.csv"))
        .unwrap()
        .last()
        .unwrap()
        .step
}

/// The time of the last row of a measurement CSV.
fn last_sample_time(path: &Path) -> f64 {
    let text = std::fs::read_to_string(path).unwrap();
    let last = text.lines().last().unwrap();
    last.split(',').next().unwrap().parse().unwrap()
}

/// Starts `cmd`, waits until `out/stats.csv` holds more than `rows` rows, sends SIGTERM and
/// returns what the run printed.
fn terminate_when_running(mut cmd: Command, out: &Path, rows: usize) -> (String, String) {
    let mut child = cmd
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let started = Instant::now();
    while std::fs::read_to_string(out.join("stats.csv")).map_or(0, |t| t.lines().count())
        <= rows + 1
    {
        assert!(
            started.elapsed() < Duration::from_secs(300),
            "the run never got going"
        );
        if let Some(status) = child.try_wait().unwrap() {
            let o = child.wait_with_output().unwrap();
            panic!(
                "ended early ({status}): {}",
                String::from_utf8_lossy(&o.stderr)
            );
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let kill = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(kill.success());
    let o = child.wait_with_output().unwrap();
    let (stdout, stderr) = (
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    );
    assert!(o.status.success(), "{:?}: {stderr}", o.status);
    (stdout, stderr)
}

/// SIGTERM (a scheduler's time limit) stops the run as Ctrl-C does: exit 0, the last frame,
/// statistics to the stopping step and a checkpoint of that step. The "resume with:" line,
/// run verbatim by a shell-like split (paths with spaces, `--out`, `--scale`), continues the
/// same directory: one unbroken history of statistics.
#[test]
fn sigterm_stops_cleanly_and_the_resume_hint_works_verbatim() {
    let dir = tempfile::tempdir().unwrap();
    let inputs = dir.path().join("my scenes");
    std::fs::create_dir(&inputs).unwrap();
    let scene = inputs.join("long pour.toml");
    let text = std::fs::read_to_string(fixture()).unwrap();
    std::fs::write(&scene, text.replace("steps = 120", "steps = 1000000")).unwrap();
    let out = dir.path().join("out dir");
    let mut first = Command::new(env!("CARGO_BIN_EXE_bristlecone"));
    first
        .arg("run")
        .arg(&scene)
        .args(["--scale", "0.5", "--out"])
        .arg(&out);
    let (stdout, _) = terminate_when_running(first, &out, 1);
    assert!(stdout.contains("stopped"), "{stdout}");
    let ck = io::read_checkpoint(&out.join("checkpoint.bin")).unwrap();
    assert!(ck.step > 0 && ck.step < 1_000_000);
    assert_eq!(last_stats_step(&out), ck.step);
    let frame = out.join(format!("frames/particles_{:08}.vtp", ck.step));
    assert!(frame.exists(), "no frame at the stopping step {}", ck.step);

    let hint = stdout
        .lines()
        .find_map(|l| l.strip_prefix("resume with: "))
        .unwrap_or_else(|| panic!("no resume hint: {stdout}"));
    let words = shlex::split(hint).unwrap();
    assert_eq!(words[0], "bristlecone", "{hint}");
    assert!(hint.contains("--scale 0.5"), "{hint}");
    let mut again = Command::new(env!("CARGO_BIN_EXE_bristlecone"));
    again.args(&words[1..]);
    let (stdout, _) = terminate_when_running(again, &out, ck.step as usize + 1);
    assert!(stdout.contains(&format!("at step {}", ck.step)), "{stdout}");
    let steps: Vec<u64> = io::read_stats(out.join("stats.csv"))
        .unwrap()
        .iter()
        .map(|r| r.step)
        .collect();
    assert!(steps.len() > ck.step as usize + 1);
    assert!(
        steps.iter().enumerate().all(|(i, s)| *s == i as u64 + 1),
        "statistics are not one history"
    );
}

/// Turns `frames/` into a plain file after step `at`: every later frame write fails.
struct BreakFramesAt {
    dir: PathBuf,
    at: u64,
    also_checkpoint: bool,
}

impl Progress for BreakFramesAt {
    fn advance(&mut self, step: u64) {
        if step >= self.at && self.dir.join("frames").is_dir() {
            std::fs::remove_dir_all(self.dir.join("frames")).unwrap();
            std::fs::write(self.dir.join("frames"), b"not a directory").unwrap();
            if self.also_checkpoint {
                // A directory where the checkpoint goes: its atomic rename fails.
                let ck = self.dir.join("checkpoint.bin");
                let _ = std::fs::remove_file(&ck);
                std::fs::create_dir_all(ck.join("blocked")).unwrap();
            }
        }
    }
}

fn run_until_frames_break(dir: &Path, also_checkpoint: bool) -> RunError {
    let scene = measured_pour(dir);
    let out = dir.join("out");
    let opts = RunOptions {
        out_dir: Some(out.clone()),
        ..Default::default()
    };
    let mut progress = BreakFramesAt {
        dir: out,
        at: 50,
        also_checkpoint,
    };
    run_scene(
        shared_context(),
        &scene,
        &opts,
        &AtomicBool::new(false),
        &mut progress,
    )
    .expect_err("a frame write fails")
}

/// A write that fails mid-run (here the frame at step 80) ends the run with that error and
/// a last checkpoint of the stopping step; statistics reach it and the measurements stop at
/// or before it. The run resumes from that checkpoint.
#[test]
fn a_failed_write_leaves_a_last_checkpoint_and_consistent_outputs() {
    let dir = tempfile::tempdir().unwrap();
    let e = run_until_frames_break(dir.path(), false).to_string();
    let out = dir.path().join("out");
    assert!(e.contains("particles_00000080"), "{e}");
    assert!(
        e.contains("wrote a last checkpoint") && e.contains("step 80"),
        "{e}"
    );
    let ck = io::read_checkpoint(&out.join("checkpoint.bin")).unwrap();
    assert_eq!(ck.step, 80);
    assert_eq!(last_stats_step(&out), 80);
    let sample = last_sample_time(&out.join("measurements/energy.csv"));
    assert!(
        sample <= ck.time + 1e-12,
        "sample at {sample} past {}",
        ck.time
    );

    std::fs::remove_file(out.join("frames")).unwrap();
    std::fs::create_dir(out.join("frames")).unwrap();
    let opts = RunOptions {
        out_dir: Some(out.clone()),
        resume: Some(out.join("checkpoint.bin")),
        from: None,
        ..Default::default()
    };
    let stop = AtomicBool::new(false);
    let scene = dir.path().join("pour.toml");
    let r = run_scene(shared_context(), &scene, &opts, &stop, &mut Silent).unwrap();
    assert_eq!((r.first_step, r.steps_done), (80, 120));
    assert_eq!(last_stats_step(&out), 120);
}

/// When the checkpoint cannot be written (here the periodic one at step 60 fails, and the
/// last one with it), the error says that nothing more could be written, names the
/// directory, and the statistics still stop at the stopping step.
#[test]
fn a_failed_last_checkpoint_says_nothing_more_could_be_written_and_where() {
    let dir = tempfile::tempdir().unwrap();
    let e = run_until_frames_break(dir.path(), true).to_string();
    let out = dir.path().join("out");
    assert!(e.contains("nothing more could be written to"), "{e}");
    assert!(e.contains(&out.display().to_string()), "{e}");
    assert!(e.contains("no checkpoint of this run exists"), "{e}");
    assert_eq!(last_stats_step(&out), 60);
}

fn opts(out: &Path, steps: Option<u64>, resume: Option<PathBuf>, overwrite: bool) -> RunOptions {
    RunOptions {
        out_dir: Some(out.to_path_buf()),
        steps,
        resume,
        from: None,
        overwrite,
    }
}

fn try_run(scene: &Path, o: &RunOptions) -> Result<bristlecone::run::RunReport, String> {
    let stop = AtomicBool::new(false);
    run_scene(shared_context(), scene, o, &stop, &mut Silent).map_err(|e| e.to_string())
}

/// The small pour with another seed: another scene (another hash).
fn other_pour(dir: &Path) -> PathBuf {
    let text = std::fs::read_to_string(fixture()).unwrap();
    let path = dir.join("other.toml");
    std::fs::write(&path, text.replace("seed = 3", "seed = 4")).unwrap();
    path
}

fn host() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .unwrap()
        .trim()
        .to_string()
}

/// A run directory is locked while a run writes into it: a live lock refuses the run,
/// naming the directory and the pid; a stale one (its pid gone) is taken over with a
/// message; the lock is gone after the run, also after a refused one.
#[test]
fn a_busy_run_directory_is_refused_and_a_stale_lock_taken_over() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    std::fs::create_dir(&out).unwrap();
    let lock = out.join("run.lock");
    let alive = std::process::id();
    std::fs::write(&lock, format!("pid = {alive}\nhost = \"{}\"\n", host())).unwrap();
    let e = try_run(&fixture(), &opts(&out, Some(2), None, false)).unwrap_err();
    assert!(
        e.contains(&out.display().to_string()) && e.contains(&format!("pid {alive}")),
        "{e}"
    );
    assert!(
        !out.join("stats.csv").exists(),
        "a refused run wrote outputs"
    );

    let mut gone = Command::new("true").spawn().unwrap();
    let dead = gone.id();
    gone.wait().unwrap();
    std::fs::write(&lock, format!("pid = {dead}\nhost = \"{}\"\n", host())).unwrap();
    let mut m = Messages::default();
    let stop = AtomicBool::new(false);
    let o = opts(&out, Some(2), None, false);
    run_scene(shared_context(), &fixture(), &o, &stop, &mut m).unwrap();
    assert!(m.0.iter().any(|l| l.contains("stale lock")), "{:?}", m.0);
    assert!(!lock.exists(), "the lock outlived its run");

    // Refused (the directory now holds outputs): the lock is released on the error too.
    try_run(&fixture(), &o).unwrap_err();
    assert!(!lock.exists(), "the lock outlived a refused run");
}

#[derive(Default)]
struct Messages(Vec<String>);

impl Progress for Messages {
    fn message(&mut self, msg: &str) {
        self.0.push(msg.to_string());
    }
}

/// `run.toml` records what produced the directory; a fresh run into a directory holding
/// another run's outputs is refused (naming them, saying what to do) unless told to
/// overwrite, and an overwrite leaves none of the old frames.
#[test]
fn a_run_records_itself_and_a_fresh_run_never_overwrites_silently() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    try_run(&fixture(), &opts(&out, Some(50), None, false)).unwrap();
    let record: toml::Table = std::fs::read_to_string(out.join("run.toml"))
        .unwrap()
        .parse()
        .unwrap();
    let ck = io::read_checkpoint(&out.join("checkpoint.bin")).unwrap();
    let want_hash = format!("{:016x}", ck.scene_hash);
    assert_eq!(record["scene_hash"].as_str(), Some(want_hash.as_str()));
    assert_eq!(record["version"].as_str(), Some(env!("CARGO_PKG_VERSION")));
    assert_eq!(record["steps_written"].as_integer(), Some(50));
    assert_eq!(record["checkpoint_step"].as_integer(), Some(50));

    let other = other_pour(dir.path());
    let e = try_run(&other, &opts(&out, Some(20), None, false)).unwrap_err();
    for word in [
        "stats.csv",
        "checkpoint.bin",
        "particles.pvd",
        "--out",
        "--overwrite",
    ] {
        assert!(e.contains(word), "{word}: {e}");
    }
    assert_eq!(
        last_stats_step(&out),
        50,
        "the refused run touched the statistics"
    );

    try_run(&other, &opts(&out, Some(20), None, true)).unwrap();
    assert_eq!(last_stats_step(&out), 20);
    assert!(
        !out.join("frames/particles_00000040.vtp").exists(),
        "an old frame is left"
    );
    let record = std::fs::read_to_string(out.join("run.toml")).unwrap();
    assert!(record.contains("other.toml"), "{record}");
}

/// A resume refuses a directory whose outputs are another run's (another scene's record),
/// whose statistics stop short of the checkpoint's step, or run past it when the checkpoint
/// is not the directory's own last one; into a new directory it starts fresh outputs there.
#[test]
fn a_resume_never_splices_two_histories() {
    let dir = tempfile::tempdir().unwrap();
    let (mine, theirs, fresh) = (
        dir.path().join("mine"),
        dir.path().join("theirs"),
        dir.path().join("new dir"),
    );
    let at40 = dir.path().join("at40.bin");
    try_run(&fixture(), &opts(&mine, Some(40), None, false)).unwrap();
    std::fs::copy(mine.join("checkpoint.bin"), &at40).unwrap();

    // Another scene's run in the target directory.
    try_run(
        &other_pour(dir.path()),
        &opts(&theirs, Some(60), None, false),
    )
    .unwrap();
    let e = try_run(&fixture(), &opts(&theirs, None, Some(at40.clone()), false)).unwrap_err();
    assert!(
        e.contains("another run's outputs") && e.contains("--out"),
        "{e}"
    );
    assert_eq!(last_stats_step(&theirs), 60);

    // Statistics cut short of the checkpoint's step.
    let stats = mine.join("stats.csv");
    let text = std::fs::read_to_string(&stats).unwrap();
    let short: Vec<&str> = text.lines().take(21).collect();
    std::fs::write(&stats, short.join("\n") + "\n").unwrap();
    let e = try_run(&fixture(), &opts(&mine, None, Some(at40.clone()), false)).unwrap_err();
    assert!(e.contains("no row at the checkpoint's step 40"), "{e}");

    // Statistics past the checkpoint, whose directory's own last checkpoint is later.
    try_run(&fixture(), &opts(&mine, Some(100), None, true)).unwrap();
    let e = try_run(&fixture(), &opts(&mine, None, Some(at40.clone()), false)).unwrap_err();
    assert!(e.contains("past the checkpoint's step 40"), "{e}");
    assert_eq!(last_stats_step(&mine), 100);

    // A new directory: fresh outputs from step 40, starting with its frame.
    let r = try_run(&fixture(), &opts(&fresh, None, Some(at40), false)).unwrap();
    assert_eq!((r.first_step, r.steps_done), (40, 120));
    let rows = io::read_stats(fresh.join("stats.csv")).unwrap();
    assert_eq!((rows[0].step, rows.len()), (41, 80));
    assert!(fresh.join("frames/particles_00000040.vtp").exists());
    assert!(fresh.join("frames/particles_00000120.vtp").exists());
}
