//! What a new user trips over: a quiet start without a display, the closing line
//! of a resumed run, the packing `random_fill` reaches per region kind, time steps the GPU
//! cannot represent, and no outputs from a run whose inputs are bad.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::atomic::AtomicBool;

use bristlecone::gpu::shared_context;
use bristlecone::run::{run_scene, RunOptions, Silent};
use bristlecone::scene::{self, BodyShape, Scene, SceneError};

fn fixture() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/scenes/small_pour.toml")
}

fn cli(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_bristlecone"))
        .args(args)
        .output()
        .unwrap()
}

fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

// ---------------------------------------------------------------------------------------
// 1. A headless start: nothing labelled "error" when there is no display.

#[test]
fn info_without_a_display_prints_no_error() {
    let o = Command::new(env!("CARGO_BIN_EXE_bristlecone"))
        .arg("info")
        .env_remove("XDG_RUNTIME_DIR")
        .env_remove("WAYLAND_DISPLAY")
        .env_remove("DISPLAY")
        .output()
        .unwrap();
    let all = text(&o);
    assert!(o.status.success(), "{all}");
    assert!(all.contains("adapter"), "{all}");
    let bad: Vec<&str> = all
        .lines()
        .filter(|l| {
            // libwayland's `error: XDG_RUNTIME_DIR ...`, and EGL's `[.. ERROR wgpu_hal::gles]`.
            l.trim_start().to_ascii_lowercase().starts_with("error") || l.contains("ERROR")
        })
        .collect();
    assert!(bad.is_empty(), "lines labelled error: {bad:?}\n{all}");
}

// ---------------------------------------------------------------------------------------
// 2. The closing line of a resumed run: the steps this process ran, their rate, and where
//    it resumed from.

#[test]
fn a_resumed_run_reports_its_own_steps_and_where_it_resumed() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().to_str().unwrap();
    let scene = fixture();
    let scene = scene.to_str().unwrap();
    let o = cli(&["run", scene, "--out", out, "--steps", "20"]);
    assert!(o.status.success(), "{}", text(&o));
    let first = String::from_utf8_lossy(&o.stdout)
        .lines()
        .next()
        .unwrap()
        .to_string();
    assert!(first.contains("20/20 steps"), "{first}");
    let ck = dir.path().join("at20.bin");
    std::fs::copy(dir.path().join("checkpoint.bin"), &ck).unwrap();
    let ck = ck.to_str().unwrap();
    let o = cli(&["run", scene, "--out", out, "--steps", "30", "--resume", ck]);
    assert!(o.status.success(), "{}", text(&o));
    let line = String::from_utf8_lossy(&o.stdout)
        .lines()
        .next()
        .unwrap()
        .to_string();
    assert!(
        line.contains("10 steps (20 to 30 of 30)"),
        "the closing line counts this run's steps: {line}"
    );
    assert!(
        line.contains(&format!("resumed from {ck} at step 20")),
        "{line}"
    );
    // The rate is this run's 10 steps over this run's time (seconds printed to 0.1 s, the
    // rate to 0.01 below 10 steps/s and to 1 above).
    let secs: f64 = between(&line, " in ", " s (").parse().unwrap();
    let rate: f64 = between(&line, " s (", " steps/s").parse().unwrap();
    let (lo, hi) = (
        10.0 / (secs + 0.05) - 0.5,
        10.0 / (secs - 0.05).max(1e-9) + 0.5,
    );
    assert!(
        (lo..=hi).contains(&rate),
        "rate {rate} steps/s, but 10 steps in {secs} s is {lo}..{hi}: {line}"
    );
}

fn between<'a>(s: &'a str, a: &str, b: &str) -> &'a str {
    let i = s.find(a).unwrap_or_else(|| panic!("no `{a}` in {s}")) + a.len();
    let j = s[i..].find(b).unwrap_or_else(|| panic!("no `{b}` in {s}")) + i;
    &s[i..j]
}

// ---------------------------------------------------------------------------------------
// 3. random_fill reaches the packing the scene format documents, in every region kind.

/// What `assets/scenes/default.toml` promises for `random_fill`.
const DOCUMENTED_PHI: f64 = 0.55;

fn sphere_radius(b: &scene::BodyDesc) -> f64 {
    match b.shape {
        BodyShape::Sphere { radius } => radius,
        _ => panic!("generators make spheres"),
    }
}

/// A random fill to the documented solid fraction.
fn fill(region: &str, radius: &str) -> Result<Scene, SceneError> {
    let text = format!(
        "[simulation]\ndt = 1e-4\nsteps = 1\n[[material]]\nname = \"g\"\ndensity = 2500.0\nfriction = 0.5\n[[generator]]\nkind = \"random_fill\"\nradius = {radius}\nvolume_fraction = {DOCUMENTED_PHI}\nseed = 1\nregion = {region}\n"
    );
    scene::parse_str(&text, Path::new("fill.toml"))
}

/// Solid fraction of the bodies in a region of `volume`, after checking that none overlaps
/// another (brute force) and each lies inside `inside`.
fn packed_fraction(s: &Scene, volume: f64, inside: impl Fn([f64; 3], f64) -> bool) -> f64 {
    let b = &s.bodies;
    for i in 0..b.len() {
        let (ci, ri) = (b[i].position, sphere_radius(&b[i]));
        assert!(
            inside(ci, ri),
            "sphere {i} at {ci:?} sticks out of the region"
        );
        for (j, bj) in b.iter().enumerate().skip(i + 1) {
            let (cj, rj) = (bj.position, sphere_radius(bj));
            let d = (0..3).map(|k| (ci[k] - cj[k]).powi(2)).sum::<f64>().sqrt();
            assert!(d >= (ri + rj) * (1.0 - 1e-9), "spheres {i} and {j} overlap");
        }
    }
    let v: f64 = b
        .iter()
        .map(|b| 4.0 / 3.0 * std::f64::consts::PI * sphere_radius(b).powi(3))
        .sum();
    v / volume
}

#[test]
fn random_fill_reaches_the_documented_packing_in_a_box() {
    let h = 0.03f64;
    let region = format!(
        "{{ kind = \"box\", min = [{m}, {m}, {m}], max = [{h}, {h}, {h}] }}",
        m = -h
    );
    let s = fill(&region, "0.003").unwrap_or_else(|e| panic!("{e}"));
    let e = 1e-12;
    let phi = packed_fraction(&s, (2.0 * h).powi(3), |c, r| {
        c.iter().all(|&x| x - r >= -h - e && x + r <= h + e)
    });
    assert!(phi >= DOCUMENTED_PHI, "box: φ = {phi}");
}

#[test]
fn random_fill_reaches_the_documented_packing_in_a_cylinder() {
    // A narrow cylinder (10 mean diameters across), where the walls cost the most room:
    // random sequential addition alone jams near φ = 0.27 here.
    let (radius, height) = (0.03f64, 0.06f64);
    let volume = std::f64::consts::PI * radius * radius * height;
    let region = format!(
        "{{ kind = \"cylinder\", base = [0.0, 0.0, 0.0], radius = {radius}, height = {height} }}"
    );
    for dist in ["0.003", "{ min = 0.002, max = 0.004 }"] {
        let s = fill(&region, dist).unwrap_or_else(|e| panic!("{dist}: {e}"));
        let e = 1e-12;
        let phi = packed_fraction(&s, volume, |c, r| {
            c[0].hypot(c[1]) + r <= radius + e && c[2] - r >= -e && c[2] + r <= height + e
        });
        assert!(phi >= DOCUMENTED_PHI, "cylinder, radius {dist}: φ = {phi}");
    }
}

/// A fill packed beyond what its region takes (φ = 0.59, under the 0.6 where `random_fill`
/// stops trying; 73 spheres in a box 4 diameters wide) is refused once overlap removal stops
/// converging, well before its cap of 4000 sweeps, with the sweeps spent in the message.
#[test]
fn an_unreachable_random_fill_is_refused_early() {
    let region = "{ kind = \"box\", min = [0.0, 0.0, 0.0], max = [0.024, 0.024, 0.024] }";
    let text = format!(
        "[simulation]\ndt = 1e-4\nsteps = 1\n[[material]]\nname = \"g\"\ndensity = 2500.0\nfriction = 0.5\n[[generator]]\nkind = \"random_fill\"\nradius = 0.003\nvolume_fraction = 0.59\nseed = 1\nregion = {region}\n"
    );
    let e = scene::parse_str(&text, Path::new("fill.toml")).unwrap_err();
    assert_eq!(
        (e.field.as_str(), e.line),
        ("generator[0].volume_fraction", Some(11)),
        "{e}"
    );
    let sweeps: usize = e
        .message
        .split("overlap removal gave up after ")
        .nth(1)
        .and_then(|t| t.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no sweep count in: {e}"));
    assert!(sweeps <= 2000, "gave up only after {sweeps} sweeps: {e}");
}

// ---------------------------------------------------------------------------------------
// 4. Time steps the GPU cannot represent, or whose first step means nothing, are errors
//    naming the field; numbers in messages are readable.

fn scene_with(dt: &str, extra: &str) -> Result<Scene, SceneError> {
    let text = format!(
        "[simulation]\ndt = {dt}\nsteps = 10\n[[material]]\nname = \"g\"\ndensity = 2500.0\nfriction = 0.5\n[[body]]\nradius = 0.01\nposition = [0.0, 0.0, 0.1]\n{extra}"
    );
    scene::parse_str(&text, Path::new("t.toml"))
}

#[test]
fn a_time_step_the_gpu_cannot_hold_is_an_error_naming_the_field() {
    for (dt, said) in [("1e300", "1e300"), ("1e-300", "1e-300"), ("1e39", "1e39")] {
        let e = scene_with(dt, "").unwrap_err();
        assert_eq!(
            (e.field.as_str(), e.line),
            ("simulation.dt", Some(2)),
            "{e}"
        );
        assert!(
            e.message
                .contains(&format!("{said} is beyond the GPU's 32-bit floats")),
            "{e}"
        );
        assert!(e.to_string().len() < 200, "a short message: {e}");
    }
    // Any other field too: a position the GPU would see as infinity.
    let e = scene::parse_str(
        "[simulation]\ndt = 1e-3\nsteps = 1\n[[material]]\nname = \"g\"\ndensity = 1.0\nfriction = 0.5\n[[body]]\nradius = 0.01\nposition = [0.0, 0.0, 5e38]\n",
        Path::new("t.toml"),
    )
    .unwrap_err();
    assert_eq!(e.field, "body[0].position[2]", "{e}");
}

#[test]
fn a_time_step_whose_first_step_means_nothing_is_an_error() {
    // Representable in f32, but one step drops the grain 1e21 m.
    let e = scene_with("1e10", "").unwrap_err();
    assert_eq!(
        (e.field.as_str(), e.line),
        ("simulation.dt", Some(2)),
        "{e}"
    );
    assert!(
        e.message
            .contains("dt = 1e10 s makes the first step meaningless"),
        "{e}"
    );
    // The limit it names is accepted, just above it is not (a lone 2 cm grain under
    // gravity; the scene's size is its bounding box's diagonal: 9.81·dt² ≤ 100 · 0.02·√3 m).
    let limit = (100.0 * 0.02 * 3f64.sqrt() / 9.81).sqrt();
    assert!(
        e.message.contains(&format!("use dt ≤ {limit:.3e} s")),
        "{e}"
    );
    assert!(scene_with(&format!("{}", 0.999 * limit), "").is_ok());
    assert!(scene_with(&format!("{}", 1.001 * limit), "").is_err());
    // Without gravity, the initial speed counts, and it is the speed's field that is named.
    let text = "[simulation]\ndt = 1.0\nsteps = 10\ngravity = [0.0, 0.0, 0.0]\n[[material]]\nname = \"g\"\ndensity = 2500.0\nfriction = 0.5\n[[body]]\nradius = 0.01\nposition = [0.0, 0.0, 0.1]\nvelocity = [4.0, 0.0, 0.0]\n";
    let e = scene::parse_str(text, Path::new("t.toml")).unwrap_err();
    assert_eq!(
        (e.field.as_str(), e.line),
        ("body[0].velocity", Some(12)),
        "{e}"
    );
    let e = scene::parse_str(
        &text.replace("4.0, 0.0, 0.0", "3.0, 0.0, 0.0"),
        Path::new("t.toml"),
    );
    assert!(
        e.is_ok(),
        "3 m in a step is under 100 times the 3.46 cm scene"
    );
}

/// A sound `dt` with a huge initial speed: the first step's travel comes from the `velocity`
/// line (a body's or a generator's), which the error or warning names, not `simulation.dt`.
#[test]
fn a_huge_initial_speed_is_named_not_dt() {
    let body = |v: &str| scene_with("1e-4", &format!("velocity = [{v}, 0.0, 0.0]\n"));
    // 1e7 m/s · 1e-4 s = 1 km, over 100 times the 3.46 cm scene; gravity alone moves 1e-7 m.
    let e = body("1e7").unwrap_err();
    assert_eq!(
        (e.field.as_str(), e.line),
        ("body[0].velocity", Some(11)),
        "{e}"
    );
    assert!(e.message.contains("an initial speed of 1e7 m/s"), "{e}");
    // 100 m/s moves the 1 cm grain 1 cm per step: a warning on the same line.
    let s = body("100.0").unwrap_or_else(|e| panic!("{e}"));
    let w = s.warnings.join("\n");
    assert!(
        w.contains("t.toml:11: body[0].velocity: body[0] moves"),
        "{w}"
    );
    // A generator's speed: its own `velocity` line.
    let text = "[simulation]\ndt = 1e-4\nsteps = 10\n[[material]]\nname = \"g\"\ndensity = 2500.0\nfriction = 0.5\n[[generator]]\nkind = \"lattice\"\nradius = 0.01\nspacing = 0.03\nregion = { kind = \"box\", min = [0.0, 0.0, 0.0], max = [0.06, 0.06, 0.03] }\nvelocity = [0.0, 0.0, -1e7]\n";
    let e = scene::parse_str(text, Path::new("t.toml")).unwrap_err();
    assert_eq!(
        (e.field.as_str(), e.line),
        ("generator[0].velocity", Some(13)),
        "{e}"
    );
    // Gravity and speed each carry the grain beyond the scene: dt, which they share, is named.
    let e = scene_with("1e10", "velocity = [1.0, 0.0, 0.0]\n").unwrap_err();
    assert_eq!(e.field, "simulation.dt", "{e}");
}

#[test]
fn numbers_in_messages_are_readable() {
    // Large and tiny values within f32's range: f64's Display writes them with 30+ digits.
    let density = |d: &str| {
        scene::parse_str(
            &format!("[simulation]\ndt = 1e-4\nsteps = 1\n[[material]]\nname = \"g\"\ndensity = {d}\nfriction = 0.5\n[[body]]\nradius = 0.01\nposition = [0.0, 0.0, 0.1]\n"),
            Path::new("t.toml"),
        )
    };
    let e = density("-1e30").unwrap_err();
    assert!(e.message.contains("(got -1e30)"), "{e}");
    let e = scene_with(
        "1e-4",
        "[[body]]\nradius = 0.01\nposition = [1e-9, 0.0, 0.1]\n",
    )
    .unwrap_err();
    assert!(
        e.message
            .contains("centre distance 1e-9 < sum of radii 0.02"),
        "{e}"
    );
    // A warning's numbers: a large dt with a tiny grain.
    let s = scene::parse_str(
        "[simulation]\ndt = 1e-4\nsteps = 1\n[[material]]\nname = \"g\"\ndensity = 2500.0\nfriction = 0.5\n[[body]]\nradius = 1e-7\nposition = [0.0, 0.0, 0.1]\n",
        Path::new("t.toml"),
    );
    let s = s.unwrap_or_else(|e| panic!("{e}"));
    let w = s.warnings.join("\n");
    assert!(w.contains("smallest body radius 1e-7 m"), "{w}");
}

// ---------------------------------------------------------------------------------------
// 5. Outputs only once the inputs are good.

#[test]
fn a_bad_checkpoint_leaves_no_output_behind() {
    let dir = tempfile::tempdir().unwrap();
    let opts = |out: &Path, steps, resume: Option<PathBuf>| RunOptions {
        out_dir: Some(out.to_path_buf()),
        steps,
        resume,
        from: None,
        overwrite: false,
    };
    let stop = AtomicBool::new(false);
    let first = dir.path().join("first");
    let r = run_scene(
        shared_context(),
        &fixture(),
        &opts(&first, Some(5), None),
        &stop,
        &mut Silent,
    )
    .unwrap();
    let bytes = std::fs::read(&r.checkpoint).unwrap();
    let cut = dir.path().join("cut.bin");
    std::fs::write(&cut, &bytes[..bytes.len() / 2]).unwrap();
    let other = dir.path().join("other.toml");
    let changed = std::fs::read_to_string(fixture())
        .unwrap()
        .replace("seed = 3", "seed = 4");
    std::fs::write(&other, changed).unwrap();
    let missing = dir.path().join("missing.bin");
    for (scene, ck, what) in [
        (fixture(), cut, "truncated"),
        (fixture(), missing, "missing"),
        (other, r.checkpoint.clone(), "other scene's"),
    ] {
        let out = dir.path().join(format!("out-{}", what.replace(' ', "-")));
        let e = run_scene(
            shared_context(),
            &scene,
            &opts(&out, Some(10), Some(ck)),
            &stop,
            &mut Silent,
        )
        .expect_err(what);
        assert!(
            !out.exists(),
            "{what} checkpoint ({e}): {} was created",
            out.display()
        );
    }
}
