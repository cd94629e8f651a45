//! Continuous inflow and outflow (`[[inflow]]`, `[[outflow]]`): the mass a feed places, no
//! overlap at placement, removal and its count, a bit-identical resume across an insertion,
//! the library's simulation stepping them as the command line does, and the keys' errors.

use bristlecone::bodies::{BodyState, MOTION_DYNAMIC, MOTION_PARKED};
use bristlecone::gpu::shared_context;
use bristlecone::io;
use bristlecone::run::{run_scene, RunOptions, RunReport, Silent};
use bristlecone::scene::parse_str;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;

/// Grains of r = 5 mm, ρ = 2500 kg/m³.
const GRAIN_MASS: f64 = 2500.0 * 4.0 / 3.0 * std::f64::consts::PI * 0.005 * 0.005 * 0.005;
const SLOP: f64 = 1e-6;

fn scene_text(gravity: f64, steps: u64, flow: &str) -> String {
    format!(
        r#"[simulation]
dt = 1e-3
steps = {steps}
gravity = [0.0, 0.0, {gravity}]

[solver]
slop = {SLOP}

[[material]]
name = "glass"
density = 2500.0
friction = 0.5

{flow}

[output]
vtk = false
"#
    )
}

/// A feed of 0.2 kg/s from a 8 × 8 × 4 cm box, every 10 steps.
const FEED: &str = r#"[[inflow]]
name = "feed"
region = { kind = "box", min = [-0.04, -0.04, 0.05], max = [0.04, 0.04, 0.09] }
radius = 0.005
mass_rate = 0.2
velocity = [0.0, 0.0, -0.5]
velocity_spread = 0.1
seed = 7
every = 10
"#;

fn write_scene(dir: &Path, name: &str, text: &str) -> PathBuf {
    let path = dir.join(format!("{name}.toml"));
    std::fs::write(&path, text).unwrap();
    path
}

fn run(scene: &Path, out: &Path, steps: Option<u64>, resume: Option<&Path>) -> RunReport {
    let opts = RunOptions {
        out_dir: Some(out.to_path_buf()),
        steps,
        resume: resume.map(Path::to_path_buf),
        ..Default::default()
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

fn final_bodies(report: &RunReport) -> BodyState {
    let ck = io::read_checkpoint(&report.checkpoint).unwrap();
    BodyState::from_bytes(ck.section("bodies").unwrap()).unwrap()
}

/// The rows of `measurements/NAME.csv` (time first).
fn rows(report: &RunReport, name: &str) -> Vec<Vec<f64>> {
    let path = report
        .out_dir
        .join("measurements")
        .join(format!("{name}.csv"));
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .skip(1)
        .map(|l| l.split(',').map(|x| x.parse().unwrap()).collect())
        .collect()
}

/// A feed of R kg/s for T s places R·T kg within one grain's mass, without gravity (so that
/// grains stay where they were placed) and without any overlap above the slop.
#[test]
fn a_feed_places_its_mass_without_overlap() {
    let dir = tempfile::tempdir().unwrap();
    // No gravity, 0.5 m/s down: each wave leaves the region's bottom within 0.08 s, so the
    // region never fills.
    // One velocity for all: grains never meet after placement.
    let feed = FEED.replace("velocity_spread = 0.1", "velocity_spread = 0.0");
    let scene = write_scene(dir.path(), "feed", &scene_text(0.0, 200, &feed));
    let report = run(&scene, &dir.path().join("out"), None, None);
    let s = final_bodies(&report);
    let live: Vec<usize> = (0..s.len())
        .filter(|&b| s.info[b][0] == MOTION_DYNAMIC)
        .collect();
    let mass: f64 = live.iter().map(|&b| 1.0 / s.mass_props[b][3] as f64).sum();
    // The last wave is at step 190 (t = 0.19 s): R·t = 0.038 kg there.
    let due = 0.2 * 0.19;
    assert!(
        mass <= due * (1.0 + 1e-6) && mass > due - GRAIN_MASS * (1.0 + 1e-6),
        "{} grains, {mass} kg for {due} kg due (one grain: {GRAIN_MASS} kg)",
        live.len()
    );
    let parked = (0..s.len())
        .filter(|&b| s.info[b][0] == MOTION_PARKED)
        .count();
    assert!(parked >= 1, "the pool holds the run's need plus one");
    let feed = rows(&report, "feed");
    let last = feed.last().unwrap();
    assert_eq!(last[1] as usize, live.len());
    assert!((last[2] - mass).abs() < 1e-6 * mass, "{last:?} vs {mass}");
    assert_eq!(last[3], 0.0, "nothing waits for room: {last:?}");
    // Placed clear of each other: no pair overlaps by more than the slop, and no contact
    // ever did (the statistics' deepest penetration).
    for (k, &a) in live.iter().enumerate() {
        for &b in &live[k + 1..] {
            let d: f64 = (0..3)
                .map(|i| (s.pos[a][i] as f64 - s.pos[b][i] as f64).powi(2))
                .sum::<f64>()
                .sqrt();
            assert!(
                d >= 0.01 - SLOP,
                "grains {a} and {b} overlap by {}",
                0.01 - d
            );
        }
    }
    let stats = std::fs::read_to_string(&report.stats).unwrap();
    let header: Vec<&str> = stats.lines().next().unwrap().split(',').collect();
    let col = |name: &str| header.iter().position(|h| *h == name).unwrap();
    let (pen, contacts) = (col("max_penetration"), col("contacts"));
    for line in stats.lines().skip(1) {
        let cell = |k: usize| -> f64 { line.split(',').nth(k).unwrap().parse().unwrap() };
        assert!(cell(pen) <= SLOP, "penetration at {line}");
        // The pool waits at the region's centre, all in one place: parked grains have no
        // contacts (and placed ones, all at one velocity, never meet).
        assert_eq!(cell(contacts), 0.0, "contacts at {line}");
    }
}

/// Grains that fall below z = 0 are taken out by a half-space outflow: all of them, their
/// mass counted, the state's grains parked, and the live mass down to zero.
#[test]
fn an_outflow_removes_grains_and_counts_their_mass() {
    let dir = tempfile::tempdir().unwrap();
    let flow = r#"[[generator]]
kind = "lattice"
region = { kind = "box", min = [-0.02, -0.02, 0.03], max = [0.02, 0.02, 0.05] }
radius = 0.005
spacing = 0.02

[[outflow]]
name = "drain"
point = [0.0, 0.0, 0.0]
normal = [0.0, 0.0, -1.0]
every = 5
"#;
    let scene = write_scene(dir.path(), "drain", &scene_text(-9.81, 150, flow));
    let n = bristlecone::run::load_scene(&scene).unwrap().0.bodies.len();
    assert!(n >= 4, "{n} grains");
    let report = run(&scene, &dir.path().join("out"), None, None);
    let s = final_bodies(&report);
    assert!(s.info.iter().all(|i| i[0] == MOTION_PARKED), "{:?}", s.info);
    let drain = rows(&report, "drain");
    let first = &drain[0];
    let last = drain.last().unwrap();
    assert_eq!(first[1], 0.0);
    assert!(
        (first[3] - n as f64 * GRAIN_MASS).abs() < 1e-6 * first[3],
        "{first:?}"
    );
    assert_eq!(last[1] as usize, n, "{last:?}");
    assert!(
        (last[2] - n as f64 * GRAIN_MASS).abs() < 1e-6 * last[2],
        "{last:?}"
    );
    assert_eq!(last[3], 0.0);
    // Removal happens after the grains cross z = 0, at t = √(2·0.025/9.81) ≈ 0.071 s or
    // later, and within `every` steps of it.
    let when = drain.iter().find(|r| r[1] > 0.0).unwrap()[0];
    assert!((0.07..0.12).contains(&when), "first removal at {when} s");
}

/// A run resumed from a checkpoint taken at an insertion step (the wave comes after the
/// checkpoint) ends bit-identical to the run that went straight through: bodies, warm start
/// and the inflow and outflow counters.
#[test]
fn a_resume_across_an_insertion_is_bit_identical() {
    let dir = tempfile::tempdir().unwrap();
    let flow = format!(
        "{FEED}\n[[outflow]]\nname = \"drain\"\npoint = [0.0, 0.0, 0.0]\nnormal = [0.0, 0.0, -1.0]\n"
    );
    let scene = write_scene(dir.path(), "loop", &scene_text(-9.81, 160, &flow));
    let straight = run(&scene, &dir.path().join("straight"), None, None);
    let first = run(&scene, &dir.path().join("first"), Some(60), None);
    let resumed = run(
        &scene,
        &dir.path().join("first"),
        None,
        Some(&first.checkpoint),
    );
    let a = io::read_checkpoint(&straight.checkpoint).unwrap();
    let b = io::read_checkpoint(&resumed.checkpoint).unwrap();
    assert_eq!(a.step, 160);
    let names = |c: &io::Checkpoint| c.sections.iter().map(|s| s.0.clone()).collect::<Vec<_>>();
    assert_eq!(names(&a), names(&b));
    assert!(names(&a).iter().any(|n| n == "flow"));
    for ((name, x), (_, y)) in a.sections.iter().zip(&b.sections) {
        assert!(x == y, "section `{name}` differs");
    }
    assert_eq!(rows(&straight, "feed"), rows(&resumed, "feed"));
    assert_eq!(rows(&straight, "drain"), rows(&resumed, "drain"));
    // Grains were both inserted and removed.
    let drain = rows(&straight, "drain");
    assert!(drain.last().unwrap()[1] >= 1.0, "{drain:?}");
    the_library_feeds_and_drains_as_the_command_line_does(&scene, &straight);
}

/// The library's simulation carries out the waves and removals `bristlecone run` does: its
/// inflow and outflow measurements are the rows of the command line's CSV files (at step 60
/// the first six waves), and at step 160 its checkpoint is the straight run's, section for
/// section.
fn the_library_feeds_and_drains_as_the_command_line_does(scene: &Path, straight: &RunReport) {
    let (parsed, hash) = bristlecone::run::load_scene(scene).unwrap();
    let mut sim = bristlecone::Simulation::with_hash(parsed, hash, shared_context()).unwrap();
    let library_rows = |sim: &bristlecone::Simulation, name: &str| -> Vec<Vec<f64>> {
        let kept = sim.measurements();
        let m = kept.iter().find(|m| m.name == name).expect(name).clone();
        let rows = m.times.iter().zip(m.rows);
        rows.map(|(t, r)| [vec![*t], r].concat()).collect()
    };
    sim.step(60).unwrap();
    for name in ["feed", "drain"] {
        let cli = rows(straight, name);
        assert_eq!(library_rows(&sim, name), cli[..6], "`{name}` at step 60");
    }
    sim.step(100).unwrap();
    for name in ["feed", "drain"] {
        let cli = rows(straight, name);
        assert_eq!(library_rows(&sim, name), cli, "`{name}` at step 160");
    }
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("library.bin");
    sim.checkpoint(&path).unwrap();
    let a = io::read_checkpoint(&straight.checkpoint).unwrap();
    let b = io::read_checkpoint(&path).unwrap();
    assert_eq!(a.step, b.step);
    let names = |c: &io::Checkpoint| c.sections.iter().map(|s| s.0.clone()).collect::<Vec<_>>();
    assert_eq!(names(&a), names(&b));
    for ((name, x), (_, y)) in a.sections.iter().zip(&b.sections) {
        assert!(x == y, "section `{name}` differs from the command line's");
    }
}

/// A pool of 6 grains recycled many times (fed above, taken out below z = 0): a mass-flow
/// disc between them counts every passage down and none up (the jump of a grain from the
/// outflow back to the inflow is no crossing), and its net mass follows the removed mass.
#[test]
fn a_recycled_pool_crosses_a_measuring_disc_downwards_only() {
    let dir = tempfile::tempdir().unwrap();
    let flow = r#"[[inflow]]
name = "feed"
region = { kind = "box", min = [-0.04, -0.04, 0.05], max = [0.04, 0.04, 0.09] }
radius = 0.005
rate = 60.0
count = 6
every = 5

[[outflow]]
name = "drain"
point = [0.0, 0.0, 0.0]
normal = [0.0, 0.0, -1.0]
every = 5

[[measure]]
name = "disc"
kind = "mass_flow"
point = [0.0, 0.0, 0.02]
normal = [0.0, 0.0, -1.0]
radius = 0.2
every = 5
"#;
    let scene = write_scene(dir.path(), "recycle", &scene_text(-9.81, 400, flow));
    let report = run(&scene, &dir.path().join("out"), None, None);
    let drain = rows(&report, "drain");
    let disc = rows(&report, "disc");
    let (removed, removed_mass) = (drain.last().unwrap()[1], drain.last().unwrap()[2]);
    assert!(
        removed >= 12.0,
        "the pool of 6 went round twice: {removed} removed"
    );
    let last = disc.last().unwrap();
    // time, net_mass, mass_positive, mass_negative, rate
    assert_eq!(last[3], 0.0, "a grain crossed upwards: {last:?}");
    assert!((last[1] - last[2]).abs() < 1e-12, "{last:?}");
    assert!(
        last[1] >= removed_mass - 1e-12 && last[1] <= removed_mass + 6.0 * GRAIN_MASS,
        "{} kg through the disc, {removed_mass} kg removed",
        last[1]
    );
}

fn parsed(flow: &str) -> Result<(), String> {
    let text = scene_text(-9.81, 100, flow);
    let text = format!(
        "{text}\n[[boundary]]\nname = \"floor\"\nkind = \"plane\"\npoint = [0.0, 0.0, 0.0]\nnormal = [0.0, 0.0, 1.0]\n"
    );
    parse_str(&text, Path::new("flow.toml"))
        .map(|_| ())
        .map_err(|e| e.to_string())
}

fn error_of(flow: &str) -> String {
    parsed(flow).unwrap_err()
}

/// Each key's error names the file, the line and the field.
#[test]
fn bad_flow_keys_are_refused_at_their_line() {
    let feed = |rate: &str, region: &str| {
        format!("[[inflow]]\nname = \"feed\"\nregion = {region}\nradius = 0.005\n{rate}\n")
    };
    let good_region = r#"{ kind = "box", min = [-0.04, -0.04, 0.05], max = [0.04, 0.04, 0.09] }"#;
    let e = error_of(&feed("mass_rate = -1.0", good_region));
    assert!(
        e.contains("flow.toml:") && e.contains("inflow[0].mass_rate") && e.contains("positive"),
        "{e}"
    );
    let e = error_of(&feed("rate = 0.0", good_region));
    assert!(
        e.contains("inflow[0].rate") && e.contains("positive"),
        "{e}"
    );
    let e = error_of(&feed("", good_region));
    assert!(e.contains("inflow[0].rate") && e.contains("missing"), "{e}");
    let below = r#"{ kind = "box", min = [-0.04, -0.04, -0.02], max = [0.04, 0.04, 0.02] }"#;
    let e = error_of(&feed("rate = 10.0", below));
    assert!(
        e.contains("inflow[0].region") && e.contains("plane `floor`"),
        "{e}"
    );
    // 5000 grains/s in waves of 10 steps: 50 grains of 0.52 cm³ in 25.6 cm³ is 10 %; 20000
    // grains/s is 41 %, past the jamming of random placement.
    parsed(&feed("rate = 5000.0", good_region)).unwrap();
    let e = error_of(&feed("rate = 20000.0", good_region));
    assert!(
        e.contains("inflow[0].rate") && e.contains("without overlap"),
        "{e}"
    );
    let e = error_of(
        "[[outflow]]\nname = \"drain\"\npoint = [0.0, 0.0, 0.0]\n[[body]]\nradius = 0.01\nposition = [0.0, 0.0, 0.1]\n",
    );
    assert!(
        e.contains("outflow[0].normal") && e.contains("missing"),
        "{e}"
    );
    let e = error_of(&format!(
        "{}\n[[outflow]]\nname = \"feed\"\npoint = [0.0, 0.0, 0.0]\nnormal = [0.0, 0.0, -1.0]\n",
        feed("rate = 10.0", good_region)
    ));
    assert!(
        e.contains("outflow[0].name") && e.contains("already"),
        "{e}"
    );
}
