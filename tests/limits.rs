//! Size limits: arrays past one storage binding, the memory estimate, input file caps and
//! f32 resolution far from the origin. Big cases use a lowered limit, never a big scene.

use std::path::{Path, PathBuf};
use std::time::Instant;

use bristlecone::gpu::{BackendChoice, GpuContext, GpuError};
use bristlecone::limits::{self, DeviceLimits};
use bristlecone::scene::{self, Scene};

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/scenes")
}

const BASE: &str = "[simulation]\ndt = 1e-4\nsteps = 10\n\n[[material]]\nname = \"glass\"\n\
                    density = 2500.0\nfriction = 0.5\n";

fn parse(text: &str) -> Result<Scene, scene::SceneError> {
    scene::parse_str(text, &fixtures().join("inline.toml"))
}

/// A device whose storage bindings hold `bytes`.
fn lowered(bytes: u64) -> DeviceLimits {
    DeviceLimits {
        max_binding: bytes,
        ..DeviceLimits::COMMON
    }
}

/// The estimate of `scene` refused at a binding one byte smaller than `label` needs.
fn refused_below(scene: &Scene, label: &str) -> String {
    let est = limits::estimate(scene);
    let array = est
        .arrays
        .iter()
        .find(|a| a.label == label)
        .unwrap_or_else(|| panic!("no array {label}"));
    let e = limits::check_device(&est, &lowered(array.bytes - 1)).expect_err(label);
    assert!(e.contains(&array.bytes.to_string()), "{e}");
    assert!(e.contains(&(array.bytes - 1).to_string()), "{e}");
    e
}

#[test]
fn a_mesh_past_one_binding_is_refused_naming_the_file_and_its_triangles() {
    let s = scene::load(&fixtures().join("mesh_scene.toml")).unwrap();
    let e = refused_below(&s, "mesh ints");
    assert!(
        e.contains("mesh ints") && e.contains("tetra.obj") && e.contains("4 triangles"),
        "{e}"
    );
}

#[test]
fn hull_grains_and_clumps_past_one_binding_are_refused_naming_them() {
    let fill = |template: &str| {
        format!(
            "{BASE}[[generator]]\nkind = \"random_fill\"\ncount = 20\nradius = 0.01\nseed = 5\n\
             region = {{ kind = \"box\", min = [0.0, 0.0, 0.0], max = [0.2, 0.2, 0.2] }}\n\
             template = {template}\n"
        )
    };
    let hulls = parse(&fill(
        "{ shape = \"convex\", points = [[0, 0, 0], [0.04, 0, 0], [0, 0.03, 0], [0, 0, 0.02]] }",
    ))
    .unwrap();
    let e = refused_below(&hulls, "boundary shapes");
    assert!(e.contains("20 hull grains"), "{e}");
    let clumps = parse(&fill(
        "{ shape = \"clump\", spheres = [[-0.01, 0, 0, 0.01], [0.01, 0, 0, 0.01]] }",
    ))
    .unwrap();
    let e = refused_below(&clumps, "boundary shapes");
    assert!(e.contains("20 clumps with 40 spheres"), "{e}");
}

#[test]
fn the_estimate_counts_every_body_and_validate_prints_it() {
    let text = format!(
        "{BASE}[[generator]]\nkind = \"lattice\"\nradius = 0.01\n\
         region = {{ kind = \"box\", min = [0.0, 0.0, 0.0], max = [0.1, 0.1, 0.1] }}\n\
         [[boundary]]\nkind = \"plane\"\n"
    );
    let s = parse(&text).unwrap();
    let est = limits::estimate(&s);
    // The grains and the plane, 8 arrays of 16 B each.
    let n = (s.bodies.len() + 1) as u64;
    assert!(n > 2, "{n}");
    assert_eq!(est.bodies, n * 128);
    assert!(est.contacts > 0 && est.grid > 0 && est.host > 0, "{est:?}");
    let lines = limits::validate_lines(&s).unwrap();
    assert!(lines[0].starts_with("memory: GPU"), "{lines:?}");
    assert!(
        lines[0].contains("largest single array: solve dv"),
        "{lines:?}"
    );
    assert_eq!(lines.len(), 1, "no warning for a small scene: {lines:?}");
}

/// With the device's binding limit lowered below the mesh arrays, building the collision
/// stage returns an error naming the array (wgpu stopped the process when it was bound).
#[test]
fn the_device_refuses_a_binding_past_its_limit_with_an_error() {
    let mut ctx = GpuContext::new(BackendChoice::Auto).unwrap_or_else(|e| panic!("{e}"));
    let s = scene::load(&fixtures().join("mesh_scene.toml")).unwrap();
    let mesh_ints = limits::estimate(&s)
        .arrays
        .iter()
        .find(|a| a.label == "mesh ints")
        .unwrap()
        .bytes;
    ctx.lower_binding_limit(mesh_ints - 4);
    let state = bristlecone::setup::build_bodies(&s);
    let settings = bristlecone::setup::step_settings(&s);
    match bristlecone::step::Simulation::new(std::sync::Arc::new(ctx), &state, settings) {
        Err(GpuError::TooLarge { what, needed, .. }) => {
            assert_eq!((what.as_str(), needed), ("mesh ints", mesh_ints));
        }
        Err(e) => panic!("another error: {e}"),
        Ok(_) => panic!("built past the binding limit"),
    }
}

/// Gauss–Seidel's colours and previous sweep are one binding each (32 B per contact of
/// capacity in the larger): the solver's capacity stops where they fill it, below where
/// APGD's chunked arrays stop, and the estimate refuses a Gauss–Seidel scene naming the array
/// (and the slab correction's state, likewise).
#[test]
fn gauss_seidel_capacity_stops_at_its_own_bindings() {
    use bristlecone::solve::{gauss, Layout, Solve, SolverKind};
    let mut ctx = GpuContext::new(BackendChoice::Auto).unwrap_or_else(|e| panic!("{e}"));
    ctx.lower_binding_limit(1 << 20);
    let apgd = Solve::max_capacity_for(&ctx, Layout::plain(SolverKind::Apgd));
    let gs = Solve::max_capacity_for(&ctx, Layout::plain(SolverKind::GaussSeidel));
    assert!(
        gs * gauss::PREVIOUS_BYTES_PER_CONSTRAINT <= ctx.max_binding(),
        "{gs} contacts of capacity"
    );
    assert!(gs < apgd, "Gauss–Seidel {gs}, APGD {apgd}");
    let text = format!(
        "{BASE}[solver]\nkind = \"gauss_seidel\"\n[[generator]]\nkind = \"lattice\"\n\
         radius = 0.01\nregion = {{ kind = \"box\", min = [0.0, 0.0, 0.0], max = [0.1, 0.1, 0.1] }}\n\
         [[boundary]]\nkind = \"plane\"\n"
    );
    let e = refused_below(&parse(&text).unwrap(), "solve previous sweep");
    assert!(e.contains("gauss_seidel"), "{e}");
    // The slab correction's state is one binding too.
    let slabs = text.replace("[[generator]]", "coarse_slab = 0.04\n[[generator]]");
    let e = refused_below(&parse(&slabs).unwrap(), "slab state");
    assert!(e.contains("coarse_slab"), "{e}");
}

#[test]
fn devices_and_oversized_scene_files_are_refused_before_reading() {
    let started = Instant::now();
    let e = scene::load(Path::new("/dev/zero")).unwrap_err();
    assert!(e.message.contains("not a regular file"), "{e}");
    let e = bristlecone::patch::file::load(Path::new("/dev/zero")).unwrap_err();
    assert!(e.message.contains("not a regular file"), "{e}");
    assert!(started.elapsed().as_secs_f64() < 1.0);
    // A sparse file past the cap: refused from its size, nothing read.
    let dir = tempfile::tempdir().unwrap();
    let big = dir.path().join("big.toml");
    let f = std::fs::File::create(&big).unwrap();
    f.set_len(bristlecone::io::capped::TEXT_CAP + 1).unwrap();
    let e = scene::load(&big).unwrap_err();
    assert!(e.message.contains("at most 64 MiB"), "{e}");
    // A mesh file past its cap, likewise.
    let mesh = dir.path().join("big.stl");
    let f = std::fs::File::create(&mesh).unwrap();
    f.set_len(bristlecone::io::capped::MESH_CAP + 1).unwrap();
    let text = format!(
        "{BASE}[[body]]\nradius = 0.01\nposition = [0.0, 0.0, 0.1]\n[[boundary]]\nkind = \"mesh\"\nfile = \"{}\"\n",
        mesh.display()
    );
    let e = parse(&text).unwrap_err();
    assert!(e.message.contains("at most 2 GiB"), "{e}");
}

fn spheres_at(x: f64, radius: f64) -> String {
    format!(
        "{BASE}[[body]]\nradius = {radius}\nposition = [{x}, 0.0, 0.1]\n\
         [[body]]\nradius = {radius}\nposition = [{x}, 0.0, 0.2]\n"
    )
}

#[test]
fn far_from_the_origin_a_scene_is_warned_about_or_refused() {
    // Near the origin: nothing.
    let s = parse(&spheres_at(1.0, 0.01)).unwrap();
    assert!(
        !s.warnings.iter().any(|w| w.contains("f32")),
        "{:?}",
        s.warnings
    );
    // 1 km: f32 spacing 61 µm, 6e-3 of a 1 cm radius: a warning saying where to move.
    let s = parse(&spheres_at(1000.0, 0.01)).unwrap();
    let w = s
        .warnings
        .iter()
        .find(|w| w.contains("f32"))
        .expect("warned");
    assert!(
        w.contains("body[1]") && w.contains("reach 1000.01 m"),
        "{w}"
    );
    // 500 km: 31 mm spacing, three radii: refused.
    let e = parse(&spheres_at(5e5, 0.01)).unwrap_err();
    assert!(
        e.field.starts_with("body[") && e.message.contains("move the origin"),
        "{e}"
    );
}

/// A lattice there visited its 5·10⁷ layers of sites, every one rounded (in f64) onto the
/// first layer and rejected as overlapping it, until the generator's visit bound: 38 s.
#[test]
fn a_region_far_beyond_f32_is_refused_at_once() {
    for fill in [
        "kind = \"random_fill\"\ncount = 100",
        "kind = \"lattice\"\nmax_count = 100",
    ] {
        let started = Instant::now();
        let text = format!(
            "{BASE}[[generator]]\n{fill}\nradius = 0.01\nregion = {{ kind = \"box\", \
             min = [0.0, 0.0, 9e18], max = [1.0, 1.0, 9.000000000001e18] }}\n"
        );
        let e = parse(&text).unwrap_err();
        assert_eq!(e.field, "generator[0].region", "{e}");
        assert!(e.message.contains("move the origin"), "{e}");
        assert!(started.elapsed().as_secs_f64() < 1.0, "{fill}");
    }
}
