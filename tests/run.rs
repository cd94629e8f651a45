//! Running scene files end to end: outputs, checkpoint/resume, determinism, interruption,
//! and the command line's error reporting.

use bristlecone::gpu::shared_context;
use bristlecone::io;
use bristlecone::run::{run_scene, RunOptions, Silent};
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;

fn fixture() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/scenes/small_pour.toml")
}

fn run(out: &Path, steps: Option<u64>, resume: Option<PathBuf>) -> bristlecone::run::RunReport {
    run_file(&fixture(), out, steps, resume)
}

fn run_file(
    scene: &Path,
    out: &Path,
    steps: Option<u64>,
    resume: Option<PathBuf>,
) -> bristlecone::run::RunReport {
    let opts = RunOptions {
        out_dir: Some(out.to_path_buf()),
        steps,
        resume,
        from: None,
        overwrite: false,
    };
    run_scene(
        shared_context(),
        scene,
        &opts,
        &AtomicBool::new(false),
        &mut Silent,
    )
    .unwrap()
}

/// Stats CSV without the wall-clock column, which is the only non-deterministic one.
fn stats_without_wall(path: &Path) -> Vec<String> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|l| l.rsplit_once(',').unwrap().0.to_string())
        .collect()
}

#[test]
fn a_run_writes_frames_statistics_and_a_checkpoint() {
    let dir = tempfile::tempdir().unwrap();
    let r = run(dir.path(), None, None);
    assert_eq!(r.steps_done, 120);
    assert!(!r.interrupted);
    assert_eq!(r.frames_written, 4, "frames at steps 0, 40, 80, 120");
    for s in [0, 40, 80, 120] {
        assert!(dir
            .path()
            .join(format!("frames/particles_{s:08}.vtp"))
            .exists());
    }
    let pvd = io::Collection::read(&r.pvd).unwrap();
    assert_eq!(pvd.entries().len(), 4);
    let rows = io::read_stats(&r.stats).unwrap();
    assert_eq!(rows.len(), 120);
    assert_eq!(rows.last().unwrap().step, 120);
    // Free fall until collisions exist: momentum grows as m g t.
    assert!(rows[119].momentum[2] < rows[0].momentum[2]);
    let ck = io::read_checkpoint(&r.checkpoint).unwrap();
    assert_eq!(ck.step, 120);
    assert!(dir.path().join("scene.toml").exists());
}

#[test]
fn two_runs_are_byte_identical() {
    let (a, b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    run(a.path(), None, None);
    run(b.path(), None, None);
    for f in [
        "frames/particles_00000040.vtp",
        "frames/particles_00000120.vtp",
        "checkpoint.bin",
        "particles.pvd",
    ] {
        let (x, y) = (
            std::fs::read(a.path().join(f)).unwrap(),
            std::fs::read(b.path().join(f)).unwrap(),
        );
        assert!(x == y, "{f} differs between two runs");
    }
    assert_eq!(
        stats_without_wall(&a.path().join("stats.csv")),
        stats_without_wall(&b.path().join("stats.csv"))
    );
}

#[test]
fn resuming_from_a_checkpoint_is_bit_identical_to_running_through() {
    let (full, split) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    run(full.path(), None, None);
    // Stop at a frame step (80) so the frame index matches too; the state is what matters.
    let half = run(split.path(), Some(80), None);
    assert_eq!(half.steps_done, 80);
    let saved = split.path().join("half.bin");
    std::fs::copy(&half.checkpoint, &saved).unwrap();
    let rest = run(split.path(), None, Some(saved));
    assert_eq!(rest.steps_done, 120);
    for f in [
        "checkpoint.bin",
        "frames/particles_00000120.vtp",
        "particles.pvd",
    ] {
        let x = std::fs::read(full.path().join(f)).unwrap();
        let y = std::fs::read(split.path().join(f)).unwrap();
        assert!(x == y, "{f}: resumed run differs from the straight run");
    }
    assert_eq!(
        stats_without_wall(&full.path().join("stats.csv")),
        stats_without_wall(&split.path().join("stats.csv"))
    );
}

/// Runs the small pour with `model` on its material straight through and resumed from a
/// checkpoint at step 80; asserts the final checkpoints are identical.
fn resume_with_model_is_bit_identical(name: &str, model: &str) {
    resume_with_edit_is_bit_identical(
        name,
        "friction = 0.5\n",
        &format!("friction = 0.5\nmodel = {model}\n"),
    );
}

/// The small pour with `from` replaced by `to`, run straight through and resumed from a
/// checkpoint at step 80: the final checkpoints are identical.
fn resume_with_edit_is_bit_identical(name: &str, from: &str, to: &str) {
    let dir = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string(fixture()).unwrap();
    assert!(text.contains(from), "{from:?} not in the fixture");
    let text = text.replace(from, to);
    let scene = dir.path().join(format!("{name}_pour.toml"));
    std::fs::write(&scene, text).unwrap();
    let (full, split) = (dir.path().join("full"), dir.path().join("split"));
    run_file(&scene, &full, None, None);
    let half = run_file(&scene, &split, Some(80), None);
    let saved = dir.path().join("half.bin");
    std::fs::copy(&half.checkpoint, &saved).unwrap();
    run_file(&scene, &split, None, Some(saved));
    let x = std::fs::read(full.join("checkpoint.bin")).unwrap();
    let y = std::fs::read(split.join("checkpoint.bin")).unwrap();
    assert!(x == y, "resumed {name} run differs from the straight run");
}

/// The bristle model's state (the last friction impulse by contact key) lives in the
/// warm-start buffer that checkpoints save: a resumed bristle pour is bit-identical too.
#[test]
fn resuming_a_bristle_scene_is_bit_identical_to_running_through() {
    resume_with_model_is_bit_identical("bristle", "{ kind = \"bristle\", stiffness = 1e4 }");
}

/// LuGre's bristle state z and slip speed ride in the saved records (`src/model/rows`; tanh's
/// slip speed the same way, in their `w` lane), which checkpoints carry: a resumed LuGre
/// pour is bit-identical. The material is elasto-plastic, whose record holds κ/σ0 = β s/g
/// in the `w` lane where plain LuGre keeps s (the same four lanes; the variants differ
/// only in what `w` means).
#[test]
fn resuming_a_lugre_scene_is_bit_identical_to_running_through() {
    resume_with_model_is_bit_identical(
        "lugre",
        "{ kind = \"lugre\", sigma0 = 1e5, sigma1 = 300.0, sigma2 = 0.4, mu_static = 0.6, v_stribeck = 0.01, elasto_plastic = true, breakaway_ratio = 0.8 }",
    );
}

/// Hunt–Crossley from (E, ν, e): each contact's impact speed v₀ rides in the `w` lane of its
/// saved record (`src/model/rows/compliant.rs`), which checkpoints carry: a resumed pour is
/// bit-identical.
#[test]
fn resuming_a_hertz_restitution_scene_is_bit_identical_to_running_through() {
    resume_with_model_is_bit_identical(
        "hertz",
        "{ kind = \"hunt_crossley\", youngs_modulus = 1e7, poisson_ratio = 0.3, restitution = 0.5 }",
    );
}

/// Gauss–Seidel keeps its colouring between steps while the contact graph holds, and the
/// exact cone's offsets follow each contact's slip within a sweep; neither is saved: a
/// resumed run recolours its first step's graph, which gives the same colours, and the
/// offsets start from the saved impulses as in the straight run. So a resumed pour under
/// Gauss–Seidel with the exact cone is bit-identical.
#[test]
fn resuming_a_gauss_seidel_exact_cone_scene_is_bit_identical_to_running_through() {
    resume_with_edit_is_bit_identical(
        "gauss_seidel",
        "steps = 120\n",
        "steps = 120\n\n[solver]\nkind = \"gauss_seidel\"\ncone = \"exact\"\n",
    );
}

#[test]
fn a_stop_request_still_writes_a_frame_and_a_checkpoint() {
    let dir = tempfile::tempdir().unwrap();
    let opts = RunOptions {
        out_dir: Some(dir.path().to_path_buf()),
        ..Default::default()
    };
    let stop = AtomicBool::new(true);
    let r = run_scene(shared_context(), &fixture(), &opts, &stop, &mut Silent).unwrap();
    assert!(r.interrupted);
    assert_eq!(r.steps_done, 0);
    assert!(io::read_checkpoint(&r.checkpoint).is_ok());
    assert!(dir.path().join("frames/particles_00000000.vtp").exists());
}

#[test]
fn resuming_with_another_scene_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let r = run(dir.path(), Some(10), None);
    let other = dir.path().join("other.toml");
    let text = std::fs::read_to_string(fixture())
        .unwrap()
        .replace("seed = 3", "seed = 4");
    std::fs::write(&other, text).unwrap();
    let opts = RunOptions {
        out_dir: Some(dir.path().join("o2")),
        steps: None,
        resume: Some(r.checkpoint.clone()),
        from: None,
        overwrite: false,
    };
    let err = run_scene(
        shared_context(),
        &other,
        &opts,
        &AtomicBool::new(false),
        &mut Silent,
    )
    .unwrap_err()
    .to_string();
    assert!(err.contains("different scene file"), "{err}");
}

fn cli(args: &[&str]) -> std::process::Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_bristlecone"))
        .args(args)
        .output()
        .unwrap()
}

#[test]
fn the_command_line_reports_a_bad_scene_with_file_line_and_field_and_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.toml");
    let text = std::fs::read_to_string(fixture())
        .unwrap()
        .replace("dt = 1e-3", "dt = -1e-3");
    std::fs::write(&bad, text).unwrap();
    let out_dir = dir.path().join("out");
    let o = cli(&[
        "run",
        bad.to_str().unwrap(),
        "--out",
        out_dir.to_str().unwrap(),
    ]);
    assert!(!o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("bad.toml:4:"), "{err}");
    assert!(err.contains("simulation.dt"), "{err}");
    assert!(!out_dir.exists(), "nothing is written for an invalid scene");
    let o = cli(&["validate", fixture().to_str().unwrap()]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(String::from_utf8_lossy(&o.stdout).contains("400 bodies"));
}

#[test]
fn the_command_line_runs_a_scene_and_says_where_results_went() {
    let dir = tempfile::tempdir().unwrap();
    let o = cli(&[
        "run",
        fixture().to_str().unwrap(),
        "--out",
        dir.path().to_str().unwrap(),
        "--steps",
        "20",
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(stdout.contains("particles.pvd"), "{stdout}");
    assert!(stdout.contains("stats.csv"), "{stdout}");
    assert_eq!(
        io::read_stats(dir.path().join("stats.csv")).unwrap().len(),
        20
    );
}

#[test]
fn without_an_adapter_the_error_says_how_to_install_one() {
    // No Metal adapter exists on Linux: the same path as a machine with no driver at all.
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_bristlecone"))
        .arg("info")
        .env("WGPU_BACKEND", "metal")
        .output()
        .unwrap();
    assert!(!o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("no usable GPU adapter"), "{err}");
    assert!(err.contains("mesa-vulkan-drivers"), "{err}");
    assert!(!err.contains("panicked"), "{err}");
}

/// A box resting flat on a plane: each contact frame carries its manifold, the 4 bottom
/// corners (±hx, ±hy at the floor), one point each with a distinct feature id, normals
/// up, forces summing to the weight.
#[test]
fn contact_frames_carry_the_manifold_points_of_a_resting_box() {
    use vtkio::model::{Attribute, DataSet, IOBuffer, Piece};
    let dir = tempfile::tempdir().unwrap();
    let scene = dir.path().join("box.toml");
    let (hx, hy, hz) = (0.05, 0.03, 0.02);
    std::fs::write(
        &scene,
        format!(
            "[simulation]\ndt = 1e-3\nsteps = 20\n[[material]]\nname = \"m\"\ndensity = 1000.0\n\
             friction = 0.5\n[[boundary]]\nkind = \"plane\"\npoint = [0.0, 0.0, 0.0]\n\
             normal = [0.0, 0.0, 1.0]\n[[body]]\nshape = \"box\"\nhalf_extents = [{hx}, {hy}, {hz}]\n\
             position = [0.0, 0.0, {hz}]\n[output]\nframe_every = 10\ncontacts = true\n"
        ),
    )
    .unwrap();
    let out = dir.path().join("out");
    run_file(&scene, &out, None, None);
    let vtk = vtkio::Vtk::import(out.join("frames/contacts_00000020.vtp")).unwrap();
    let DataSet::PolyData { mut pieces, .. } = vtk.data else {
        panic!("not polydata")
    };
    let Piece::Inline(p) = pieces.remove(0) else {
        panic!("not inline")
    };
    let get = |name: &str| {
        p.data
            .point
            .iter()
            .find_map(|a| match a {
                Attribute::DataArray(d) if d.name == name => Some(d.data.clone()),
                _ => None,
            })
            .unwrap_or_else(|| panic!("no {name}"))
    };
    let pts: Vec<f32> = p.points.cast_into().unwrap();
    assert_eq!(pts.len(), 12, "4 manifold points");
    let IOBuffer::U32(mut features) = get("feature") else {
        panic!("feature is not u32")
    };
    features.sort_unstable();
    features.dedup();
    assert_eq!(features.len(), 4, "features {features:?} are not distinct");
    let mut corners: Vec<(i32, i32)> = pts
        .chunks_exact(3)
        .map(|q| {
            assert!(q[2].abs() < 1e-4, "point {q:?} is not at the floor");
            assert!((q[0].abs() - hx as f32).abs() < 1e-4 && (q[1].abs() - hy as f32).abs() < 1e-4);
            (q[0].signum() as i32, q[1].signum() as i32)
        })
        .collect();
    corners.sort_unstable();
    corners.dedup();
    assert_eq!(corners.len(), 4, "not the 4 corners: {corners:?}");
    let f: Vec<f32> = get("force").cast_into().unwrap();
    let fz: f32 = f.chunks_exact(3).map(|v| v[2]).sum();
    let weight = 1000.0 * 8.0 * hx * hy * hz * 9.81;
    assert!(
        (fz as f64 / weight - 1.0).abs() < 0.01,
        "forces {fz} vs weight {weight}"
    );
}

/// Mesa's software adapter splits each dispatch's workgroups between its pool threads
/// (`LP_NUM_THREADS`; one per core by default); no result may depend on how. 1500 grains of
/// the default scene into their impact, with 1 and with 3 threads (two processes: Mesa reads
/// the variable when an instance is created): multi-workgroup solves (more constraints than
/// solve_fused takes), collision passes split in two layers, and every statistic but the
/// wall time, the frames and the checkpoint byte-identical. On a GPU adapter the variable
/// is ignored and the runs agree trivially.
#[test]
fn the_software_adapters_thread_count_changes_no_bit() {
    let scene = Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/scenes/default.toml");
    let dirs: Vec<tempfile::TempDir> = ["1", "3"]
        .into_iter()
        .map(|threads| {
            let dir = tempfile::tempdir().unwrap();
            let o = std::process::Command::new(env!("CARGO_BIN_EXE_bristlecone"))
                .env("LP_NUM_THREADS", threads)
                .args(["run", scene.to_str().unwrap(), "--scale", "0.5"])
                .args(["--steps", "140", "--out"])
                .arg(dir.path())
                .output()
                .unwrap();
            assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
            dir
        })
        .collect();
    let rows = io::read_stats(dirs[0].path().join("stats.csv")).unwrap();
    // Solves with more constraints than one workgroup takes (solve_fused: 2048).
    let wide = rows
        .iter()
        .filter(|r| r.iterations > 0 && r.contacts > 2048)
        .count();
    assert!(wide >= 20, "{wide} multi-workgroup solves");
    for f in [
        "checkpoint.bin",
        "particles.pvd",
        "frames/particles_00000120.vtp",
    ] {
        let (x, y) = (
            std::fs::read(dirs[0].path().join(f)).unwrap(),
            std::fs::read(dirs[1].path().join(f)).unwrap(),
        );
        assert!(x == y, "{f} differs between 1 and 3 threads");
    }
    assert_eq!(
        stats_without_wall(&dirs[0].path().join("stats.csv")),
        stats_without_wall(&dirs[1].path().join("stats.csv"))
    );
}

/// Collects the run's progress messages (warnings).
#[derive(Default)]
struct Messages(Vec<String>);

impl bristlecone::run::Progress for Messages {
    fn message(&mut self, msg: &str) {
        self.0.push(msg.to_string());
    }
}

/// A sphere that crosses the contact envelope in one step (−20 m/s at dt = 1 ms, 1 mm above
/// a plane) ends its step 19 mm inside it: the run warns once, naming the step and the
/// depth. The same sphere set down at 0.1 m/s is held and gives no warning.
#[test]
fn a_penetration_the_solver_did_not_hold_is_warned_once() {
    let dir = tempfile::tempdir().unwrap();
    let warnings = |speed: f64| {
        let scene = dir.path().join(format!("drop_{speed}.toml"));
        std::fs::write(
            &scene,
            format!(
                "[simulation]\ndt = 1e-3\nsteps = 30\n[[material]]\nname = \"m\"\n\
                 density = 2500.0\nfriction = 0.5\n[[boundary]]\nkind = \"plane\"\n\
                 point = [0.0, 0.0, 0.0]\nnormal = [0.0, 0.0, 1.0]\n[[body]]\nradius = 0.01\n\
                 position = [0.0, 0.0, 0.011]\nvelocity = [0.0, 0.0, -{speed}]\n\
                 [output]\nframe_every = 30\n"
            ),
        )
        .unwrap();
        let opts = RunOptions {
            out_dir: Some(dir.path().join(format!("out_{speed}"))),
            steps: None,
            resume: None,
            from: None,
            overwrite: false,
        };
        let mut m = Messages::default();
        run_scene(
            shared_context(),
            &scene,
            &opts,
            &AtomicBool::new(false),
            &mut m,
        )
        .unwrap();
        m.0.into_iter()
            .filter(|w| w.contains("penetrates"))
            .collect::<Vec<_>>()
    };
    let fast = warnings(20.0);
    assert_eq!(fast.len(), 1, "{fast:?}");
    assert!(
        fast[0].starts_with("warning: step 2: a contact penetrates 1.9"),
        "{}",
        fast[0]
    );
    assert!(fast[0].contains("max_iterations"), "{}", fast[0]);
    let gentle = warnings(0.1);
    assert!(gentle.is_empty(), "{gentle:?}");
}
