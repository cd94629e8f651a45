//! Scene files: loading, validation messages, generators and meshes.

use std::path::{Path, PathBuf};

use bristlecone::scene::{
    self, BodyShape, BoundaryShape, FrictionModel, Motion, Scene, SceneError, SolverKind,
};

/// Lines 1–8; snippets appended to it start on line 9.
const BASE: &str = r#"[simulation]
dt = 1e-3
steps = 10

[[material]]
name = "glass"
density = 2500.0
friction = 0.5
"#;

/// A valid sphere on lines 9–11.
const SPHERE: &str = r#"[[body]]
radius = 0.01
position = [0.0, 0.0, 0.1]
"#;

fn parse(text: &str) -> Result<Scene, SceneError> {
    scene::parse_str(text, Path::new("t.toml"))
}

fn ok(text: &str) -> Scene {
    match parse(text) {
        Ok(s) => s,
        Err(e) => panic!("unexpected error: {e}"),
    }
}

fn err(text: &str) -> SceneError {
    match parse(text) {
        Ok(_) => panic!("expected an error for:\n{text}"),
        Err(e) => e,
    }
}

/// Asserts field path, line and a message substring.
#[track_caller]
fn check(e: &SceneError, field: &str, line: Option<usize>, msg: &str) {
    assert_eq!(e.field, field, "field of: {e}");
    assert_eq!(e.line, line, "line of: {e}");
    assert!(e.message.contains(msg), "message of `{e}` lacks `{msg}`");
    assert_eq!(e.file, PathBuf::from("t.toml"));
}

fn base_with(extra: &str) -> String {
    format!("{BASE}{extra}")
}

fn radius(b: &scene::BodyDesc) -> f64 {
    match b.shape {
        BodyShape::Sphere { radius } => radius,
        _ => panic!("these scenes hold spheres"),
    }
}

fn dist(a: [f64; 3], b: [f64; 3]) -> f64 {
    ((a[0] - b[0]).powi(2) + (a[1] - b[1]).powi(2) + (a[2] - b[2]).powi(2)).sqrt()
}

fn assert_no_overlap_brute(bodies: &[scene::BodyDesc]) {
    for i in 0..bodies.len() {
        for j in i + 1..bodies.len() {
            let d = dist(bodies[i].position, bodies[j].position);
            assert!(
                d >= (radius(&bodies[i]) + radius(&bodies[j])) * (1.0 - 1e-9),
                "bodies {i} and {j} overlap"
            );
        }
    }
}

/// Overlap check via a uniform grid (cell = largest diameter), independent of the crate's.
fn assert_no_overlap_grid(bodies: &[scene::BodyDesc]) {
    use std::collections::HashMap;
    let r_max = bodies.iter().map(radius).fold(0.0, f64::max);
    let h = 2.0 * r_max;
    let key = |p: [f64; 3]| {
        (
            (p[0] / h).floor() as i64,
            (p[1] / h).floor() as i64,
            (p[2] / h).floor() as i64,
        )
    };
    let mut cells: HashMap<(i64, i64, i64), Vec<usize>> = HashMap::new();
    for (i, b) in bodies.iter().enumerate() {
        cells.entry(key(b.position)).or_default().push(i);
    }
    let mut pairs = 0usize;
    for (i, b) in bodies.iter().enumerate() {
        let (x, y, z) = key(b.position);
        for dz in -1..=1 {
            for dy in -1..=1 {
                for dx in -1..=1 {
                    for &j in cells.get(&(x + dx, y + dy, z + dz)).into_iter().flatten() {
                        if j <= i {
                            continue;
                        }
                        pairs += 1;
                        let d = dist(b.position, bodies[j].position);
                        assert!(
                            d >= (radius(b) + radius(&bodies[j])) * (1.0 - 1e-9),
                            "bodies {i} and {j} overlap"
                        );
                    }
                }
            }
        }
    }
    assert!(pairs > 0);
}

// ---------------------------------------------------------------------------------------
// Default scene

#[test]
fn default_scene_round_trip() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/scenes/default.toml");
    let s = scene::load(&path).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(s.name, "default");
    assert!(s.warnings.is_empty(), "warnings: {:?}", s.warnings);
    assert_eq!(s.sim.dt, 1e-3);
    assert_eq!(s.sim.steps, 1500);
    assert_eq!(s.sim.gravity, [0.0, 0.0, -9.81]);
    assert_eq!(s.solver.kind, SolverKind::Apgd);
    assert_eq!(s.solver.max_iterations, 100);
    assert_eq!(s.solver.tolerance, 1e-5);
    assert_eq!(s.solver.omega, 0.6);
    assert_eq!(s.solver.recovery_speed, 0.1);
    // slop: 1e-4 × the smallest radius (≥ 4 mm, the generator's minimum); stabilisation 1.
    assert!(
        (s.solver.slop - 4e-7).abs() < 1e-9,
        "slop {}",
        s.solver.slop
    );
    assert_eq!(s.solver.stabilisation, 1.0);
    assert!(s.solver.warm_start);
    assert_eq!(s.materials.len(), 2);
    assert_eq!(s.materials[0].name, "glass");
    assert_eq!(s.materials[0].model, FrictionModel::Coulomb);
    assert_eq!(s.bodies.len(), 3000);
    let r_min = s.bodies.iter().map(radius).fold(f64::INFINITY, f64::min);
    let r_max = s.bodies.iter().map(radius).fold(0.0, f64::max);
    assert!((0.004..0.0041).contains(&r_min), "r_min {r_min}");
    assert!((0.0059..=0.006).contains(&r_max), "r_max {r_max}");
    // Set in the file: falling grains move up to 2 mm per step.
    assert_eq!(s.solver.envelope, 0.0025);
    assert_eq!(s.min_body_radius(), r_min);
    for b in &s.bodies {
        assert_eq!(b.material, 0);
        assert_eq!(b.motion, Motion::Dynamic);
        assert_eq!(b.orientation, [0.0, 0.0, 0.0, 1.0]);
        let r = radius(b);
        let m = 2500.0 * 4.0 / 3.0 * std::f64::consts::PI * r.powi(3);
        assert!((b.mass - m).abs() < 1e-12 * m);
        assert!((b.inertia[0] - 0.4 * m * r * r).abs() < 1e-12 * b.inertia[0]);
        assert!(b.position[2] - r >= 0.02 - 1e-12 && b.position[2] + r <= 0.2 + 1e-12);
        assert!(b.position[0].abs() + r <= 0.095 + 1e-12);
        assert!(b.position[1].abs() + r <= 0.095 + 1e-12);
    }
    assert_no_overlap_grid(&s.bodies);
    assert_eq!(s.boundaries.len(), 1);
    let bin = &s.boundaries[0];
    assert_eq!(bin.name, "bin");
    assert_eq!(bin.material, 1);
    assert_eq!(bin.motion, Motion::Fixed);
    assert_eq!(bin.position, [0.0, 0.0, 0.15]);
    assert_eq!(
        bin.shape,
        BoundaryShape::BoxContainer {
            half_extents: [0.1, 0.1, 0.15],
            open_top: true
        }
    );
    assert_eq!(s.output.dir, PathBuf::from("out/default"));
    assert_eq!(s.output.frame_every, 30);
    assert!(s.output.vtk);
    assert!(!s.output.contacts);
    assert_eq!(s.output.checkpoint_every, 0);
    assert_eq!(s.output.stats_every, 1);
}

#[test]
fn defaults_and_explicit_body() {
    let s = ok(&base_with(
        r#"[[body]]
name = "probe"
radius = 0.02
position = [1.0, 2.0, 3.0]
velocity = [0.1, 0.0, 0.0]
angular_velocity = [0.0, 0.0, 1.0]
orientation = [0.0, 0.0, 0.0, 1.0001]
motion = "kinematic"
"#,
    ));
    assert_eq!(s.name, "t");
    assert_eq!(s.sim.steps, 10);
    assert_eq!(s.sim.gravity, [0.0, 0.0, -9.81]);
    assert_eq!(s.output.dir, PathBuf::from("out/t"));
    assert_eq!(s.output.frame_every, 1);
    assert_eq!(s.solver.envelope, 0.05 * 0.02);
    let b = &s.bodies[0];
    assert_eq!(b.motion, Motion::Kinematic);
    assert_eq!(b.velocity, [0.1, 0.0, 0.0]);
    assert_eq!(b.angular_velocity, [0.0, 0.0, 1.0]);
    assert!((b.orientation[3] - 1.0).abs() < 1e-15, "normalized");
    let m = 2500.0 * 4.0 / 3.0 * std::f64::consts::PI * 0.02f64.powi(3);
    assert!((b.mass - m).abs() < 1e-12 * m);
    assert!((b.inertia[2] - 0.4 * m * 0.0004).abs() < 1e-15);
}

#[test]
fn explicit_mass_and_inertia() {
    let s = ok(&base_with(
        r#"[[body]]
radius = 0.01
position = [0.0, 0.0, 0.0]
mass = 2.0
inertia = [1.0, 2.0, 2.5]
[[body]]
radius = 0.01
position = [1.0, 0.0, 0.0]
mass = 3.0
"#,
    ));
    assert_eq!(s.bodies[0].mass, 2.0);
    assert_eq!(s.bodies[0].inertia, [1.0, 2.0, 2.5]);
    assert_eq!(s.bodies[1].mass, 3.0);
    assert!((s.bodies[1].inertia[0] - 0.4 * 3.0 * 1e-4).abs() < 1e-15);
    assert!(s.warnings.is_empty());
}

#[test]
fn duration_steps_and_frame_interval() {
    let s = ok(r#"[simulation]
name = "x"
dt = 1e-3
duration = 1.5
[[material]]
name = "a"
density = 1.0
friction = 0.0
[[body]]
radius = 0.5
position = [0.0, 0.0, 1.0]
[output]
frame_interval = 0.01
dir = "elsewhere"
contacts = true
checkpoint_every = 100
stats_every = 10
[solver]
kind = "jacobi"
omega = 0.5
envelope = 0.001
warm_start = false
"#);
    assert_eq!(s.name, "x");
    assert_eq!(s.sim.steps, 1500);
    assert_eq!(s.output.frame_every, 10);
    assert_eq!(s.output.dir, PathBuf::from("elsewhere"));
    assert!(s.output.contacts);
    assert_eq!(s.output.checkpoint_every, 100);
    assert_eq!(s.output.stats_every, 10);
    assert_eq!(s.solver.kind, SolverKind::Jacobi);
    assert_eq!(s.solver.omega, 0.5);
    assert_eq!(s.solver.envelope, 0.001);
    assert!(!s.solver.warm_start);
    // The body sits in no container and there is none: no warnings (dt is fine for r = 0.5).
    assert!(s.warnings.is_empty(), "{:?}", s.warnings);
}

/// tanh and LuGre are solved (book: Contact models): accepted with their table rows; LuGre's μ_s below the
/// material's friction (μ_c) is refused at `model.mu_static`.
#[test]
fn tanh_and_lugre_models_are_accepted_and_checked() {
    let body = "[[body]]\nradius = 0.01\nposition = [0.0, 0.0, 0.1]\nmaterial = \"x\"\n";
    let mat = |m: &str, mu: f64| {
        base_with(&format!(
            "[[material]]\nname = \"x\"\ndensity = 1.0\nfriction = {mu}\nmodel = {m}\n{body}"
        ))
    };
    let s = ok(&mat("{ kind = \"tanh\", slip_velocity = 1e-3 }", 0.1));
    assert_eq!(
        bristlecone::model::rows::material_row(&s.materials[1].model),
        [4.0, 1e-3, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]
    );
    let lugre = "{ kind = \"lugre\", sigma0 = 1e5, sigma1 = 300.0, sigma2 = 0.4, mu_static = 0.5, v_stribeck = 0.01 }";
    let s = ok(&mat(lugre, 0.4));
    assert_eq!(
        bristlecone::model::rows::material_row(&s.materials[1].model),
        [5.0, 1e5, 300.0, 0.4, 0.5, 0.01, 0.0, 0.0]
    );
    let e = err(&mat(lugre, 0.6));
    assert_eq!(e.field, "material[1].model.mu_static", "{e}");
    assert!(e.line.is_some(), "{e}");
    assert!(e.message.contains("≥ the material's friction"), "{e}");
}

/// Elasto-plastic LuGre (`elasto_plastic = true`, `breakaway_ratio`): accepted with the ratio
/// packed in the table row's lane 0 (5 + ratio/2; default 0.9); a ratio outside (0, 1), a
/// ratio without `elasto_plastic = true`, and the keys on another kind are refused at the
/// field, with its line.
#[test]
fn elasto_plastic_lugre_is_accepted_and_checked() {
    let body = "[[body]]\nradius = 0.01\nposition = [0.0, 0.0, 0.1]\nmaterial = \"x\"\n";
    let mat = |extra: &str, kind: &str| {
        let m = format!(
            "{{ kind = \"{kind}\", sigma0 = 1e5, sigma1 = 300.0, sigma2 = 0.4, mu_static = 0.5, v_stribeck = 0.01{extra} }}"
        );
        base_with(&format!(
            "[[material]]\nname = \"x\"\ndensity = 1.0\nfriction = 0.4\nmodel = {m}\n{body}"
        ))
    };
    let row = |text: &str| {
        let s = ok(text);
        bristlecone::model::rows::material_row(&s.materials[1].model)
    };
    let r = row(&mat(
        ", elasto_plastic = true, breakaway_ratio = 0.7",
        "lugre",
    ));
    assert!((r[0] - 5.35).abs() < 1e-6, "{r:?}");
    assert!((bristlecone::model::rows::breakaway_ratio(r) - 0.7).abs() < 1e-6);
    assert!((row(&mat(", elasto_plastic = true", "lugre"))[0] - 5.45).abs() < 1e-6);
    assert_eq!(row(&mat(", elasto_plastic = false", "lugre"))[0], 5.0);
    let line = Some(BASE.lines().count() + 5);
    for bad in [
        ", elasto_plastic = true, breakaway_ratio = 1.0",
        ", elasto_plastic = true, breakaway_ratio = 0.0",
    ] {
        let e = err(&mat(bad, "lugre"));
        check(
            &e,
            "material[1].model.breakaway_ratio",
            line,
            "must lie in (0, 1)",
        );
    }
    let e = err(&mat(", breakaway_ratio = 0.5", "lugre"));
    check(
        &e,
        "material[1].model.breakaway_ratio",
        line,
        "elasto_plastic = true",
    );
    let e = err(&mat(", elasto_plastic = true", "lugre_reduced"));
    check(
        &e,
        "material[1].model.elasto_plastic",
        line,
        "does not apply",
    );
}

/// A scene with only Coulomb materials parses as before.
#[test]
fn coulomb_model_parses() {
    let s = ok(r#"[simulation]
dt = 1e-3
steps = 1
[[material]]
name = "e"
density = 1.0
friction = 0.1
model = { kind = "coulomb" }
[[body]]
radius = 0.5
material = "e"
position = [0.0, 0.0, 1.0]
"#);
    assert_eq!(s.materials[0].model, FrictionModel::Coulomb);
}

/// Kelvin–Voigt compliant contact is solved: accepted, its table row reaches the solver, and
/// bad parameters name the field.
#[test]
fn compliant_model_parses_and_bad_parameters_name_the_field() {
    let mat = |m: &str| {
        base_with(&format!(
            "[[material]]\nname = \"x\"\ndensity = 1.0\nfriction = 0.1\nmodel = {m}\n"
        ))
    };
    let body = "[[body]]\nradius = 0.01\nposition = [0.0, 0.0, 0.1]\nmaterial = \"x\"\n";
    let text = mat("{ kind = \"compliant\", stiffness = 1e5, damping = 10.0 }");
    let s = ok(&format!("{text}{body}"));
    let m = &s.materials[1].model;
    assert_eq!(
        *m,
        FrictionModel::Compliant {
            stiffness: 1e5,
            damping: 10.0
        }
    );
    assert_eq!(
        bristlecone::model::rows::material_row(m),
        [1.0, 1e5, 10.0, 0.0, 0.0, 0.0, 0.0, 0.0]
    );
    for (bad, field) in [
        (
            "stiffness = -1e5, damping = 10.0",
            "material[1].model.stiffness",
        ),
        (
            "stiffness = 0.0, damping = 10.0",
            "material[1].model.stiffness",
        ),
        (
            "stiffness = 1e5, damping = -1.0",
            "material[1].model.damping",
        ),
        ("damping = 1.0", "material[1].model.stiffness"),
    ] {
        let e = err(&mat(&format!("{{ kind = \"compliant\", {bad} }}")));
        assert_eq!(e.field, field, "{e}");
        assert!(e.line.is_some(), "{e}");
    }
}

/// Bristle friction is solved; two different non-Coulomb models in one scene are refused at
/// the second one's `model.kind` (no mixing rule), Coulomb with either is fine.
#[test]
fn bristle_parses_and_two_different_models_are_refused() {
    let mat = |name: &str, m: &str| {
        format!("[[material]]\nname = \"{name}\"\ndensity = 1.0\nfriction = 0.1\nmodel = {m}\n")
    };
    let body = "[[body]]\nradius = 0.01\nposition = [0.0, 0.0, 0.1]\nmaterial = \"x\"\n";
    let bristle = "{ kind = \"bristle\", stiffness = 1e5 }";
    let s = ok(&base_with(&format!("{}{body}", mat("x", bristle))));
    assert_eq!(
        bristlecone::model::rows::material_row(&s.materials[1].model),
        [2.0, 1e5, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]
    );
    let e = err(&base_with(&mat(
        "x",
        "{ kind = \"bristle\", stiffness = -3.0 }",
    )));
    assert_eq!(e.field, "material[1].model.stiffness", "{e}");
    let both = format!(
        "{}{}",
        mat("x", bristle),
        mat(
            "y",
            "{ kind = \"compliant\", stiffness = 1e5, damping = 1.0 }"
        )
    );
    let e = err(&base_with(&format!("{both}{body}")));
    assert_eq!(e.field, "material[2].model.kind", "{e}");
    assert!(e.line.is_some(), "{e}");
    assert!(e.message.contains("one non-Coulomb model"), "{e}");
}

/// Hunt–Crossley is solved: its row carries (k, α, n); a bad exponent or stiffness names the
/// field.
#[test]
fn hunt_crossley_parses_and_bad_parameters_name_the_field() {
    let mat = |m: &str| {
        base_with(&format!(
            "[[material]]\nname = \"x\"\ndensity = 1.0\nfriction = 0.1\nmodel = {m}\n"
        ))
    };
    let body = "[[body]]\nradius = 0.01\nposition = [0.0, 0.0, 0.1]\nmaterial = \"x\"\n";
    let text = mat("{ kind = \"hunt_crossley\", stiffness = 1e6, exponent = 1.5, damping = 0.2 }");
    let s = ok(&format!("{text}{body}"));
    assert_eq!(
        bristlecone::model::rows::material_row(&s.materials[1].model),
        [3.0, 1e6, 0.2, 1.5, 0.0, 0.0, 0.0, 0.0]
    );
    for (bad, field) in [
        (
            "stiffness = 1e6, exponent = 0.5, damping = 0.2",
            "material[1].model.exponent",
        ),
        (
            "stiffness = 1e6, exponent = -1.0, damping = 0.2",
            "material[1].model.exponent",
        ),
        (
            "stiffness = -1e6, exponent = 1.5, damping = 0.2",
            "material[1].model.stiffness",
        ),
        (
            "stiffness = 1e6, exponent = 1.5, damping = -0.2",
            "material[1].model.damping",
        ),
        (
            "stiffness = 1e6, damping = 0.2",
            "material[1].model.exponent",
        ),
    ] {
        let e = err(&mat(&format!("{{ kind = \"hunt_crossley\", {bad} }}")));
        assert_eq!(e.field, field, "{e}");
        assert!(e.line.is_some(), "{e}");
    }
}

/// Compliant models given as physical quantities (`rows::compliant`): Kelvin–Voigt with a
/// restitution, Hunt–Crossley from Young's modulus, Poisson ratio and restitution; every bad
/// value names its field and line, the two parameter sets cannot be mixed in one material nor
/// across materials of one model.
#[test]
fn physical_compliant_parameters_parse_and_bad_values_name_the_field() {
    let mat = |name: &str, m: &str| {
        format!("[[material]]\nname = \"{name}\"\ndensity = 1.0\nfriction = 0.1\nmodel = {m}\n")
    };
    let body = "[[body]]\nradius = 0.01\nposition = [0.0, 0.0, 0.1]\nmaterial = \"x\"\n";
    let hertz = "{ kind = \"hunt_crossley\", youngs_modulus = 2e9, poisson_ratio = 0.3, restitution = 0.8 }";
    let s = ok(&base_with(&format!("{}{body}", mat("x", hertz))));
    let row = bristlecone::model::rows::material_row(&s.materials[1].model);
    assert_eq!(row[..4], [3.0, 0.0, 0.0, 1.5]);
    assert_eq!(row[4], ((1.0 - 0.09) / 2e9) as f32);
    let kv = "{ kind = \"compliant\", stiffness = 1e5, restitution = 0.5 }";
    let s = ok(&base_with(&format!("{}{body}", mat("x", kv))));
    assert_eq!(
        s.materials[1].model,
        FrictionModel::CompliantRestitution {
            stiffness: 1e5,
            restitution: 0.5
        }
    );
    for (kind, bad, field, msg) in [
        (
            "hunt_crossley",
            "youngs_modulus = 0.0, poisson_ratio = 0.3, restitution = 0.5",
            "youngs_modulus",
            "positive",
        ),
        (
            "hunt_crossley",
            "youngs_modulus = 1e9, poisson_ratio = 0.5, restitution = 0.5",
            "poisson_ratio",
            "(−1, 0.5)",
        ),
        (
            "hunt_crossley",
            "youngs_modulus = 1e9, poisson_ratio = -1.0, restitution = 0.5",
            "poisson_ratio",
            "(−1, 0.5)",
        ),
        (
            "hunt_crossley",
            "youngs_modulus = 1e9, poisson_ratio = 0.3, restitution = 1.5",
            "restitution",
            "(0, 1]",
        ),
        (
            "hunt_crossley",
            "youngs_modulus = 1e9, poisson_ratio = 0.3, restitution = 0.0",
            "restitution",
            "(0, 1]",
        ),
        (
            "hunt_crossley",
            "youngs_modulus = 1e9, poisson_ratio = 0.3",
            "restitution",
            "missing",
        ),
        (
            "hunt_crossley",
            "stiffness = 1e6, youngs_modulus = 1e9, poisson_ratio = 0.3, restitution = 0.5",
            "stiffness",
            "cannot be mixed",
        ),
        (
            "hunt_crossley",
            "stiffness = 1e6, exponent = 1.5, restitution = 0.5",
            "stiffness",
            "cannot be mixed",
        ),
        (
            "compliant",
            "stiffness = 1e5, restitution = 0.1",
            "restitution",
            "at least",
        ),
        (
            "compliant",
            "stiffness = 1e5, damping = 1.0, restitution = 0.5",
            "damping",
            "cannot be mixed",
        ),
        ("compliant", "restitution = 0.5", "stiffness", "missing"),
    ] {
        let e = err(&base_with(&format!(
            "{}{body}",
            mat("x", &format!("{{ kind = \"{kind}\", {bad} }}"))
        )));
        check(&e, &format!("material[1].model.{field}"), e.line, msg);
        assert!(e.line.is_some(), "{e}");
    }
    // Two materials of one model with different parameter sets: no mixing rule.
    let direct = "{ kind = \"hunt_crossley\", stiffness = 1e6, exponent = 1.5, damping = 0.2 }";
    let e = err(&base_with(&format!(
        "{}{}{body}",
        mat("x", hertz),
        mat("y", direct)
    )));
    check(&e, "material[2].model", e.line, "same parameter set");
    assert!(e.line.is_some(), "{e}");
}

/// Bristle's projection option: "cone" (default) or "box" (Peiret et al.'s per-component bound);
/// anything else, or the option on another model, names the field.
#[test]
fn bristle_projection_option_parses_and_bad_values_name_the_field() {
    let mat = |name: &str, m: &str| {
        format!("[[material]]\nname = \"{name}\"\ndensity = 1.0\nfriction = 0.1\nmodel = {m}\n")
    };
    let body = "[[body]]\nradius = 0.01\nposition = [0.0, 0.0, 0.1]\nmaterial = \"x\"\n";
    let boxed = "{ kind = \"bristle\", stiffness = 1e5, projection = \"box\" }";
    let s = ok(&base_with(&format!("{}{body}", mat("x", boxed))));
    assert_eq!(
        s.materials[1].model,
        FrictionModel::BristleBox { stiffness: 1e5 }
    );
    assert_eq!(
        bristlecone::model::rows::material_row(&s.materials[1].model),
        [2.0, 1e5, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0]
    );
    let cone = "{ kind = \"bristle\", stiffness = 1e5, projection = \"cone\" }";
    let s = ok(&base_with(&format!("{}{body}", mat("x", cone))));
    assert_eq!(
        s.materials[1].model,
        FrictionModel::Bristle { stiffness: 1e5 }
    );
    let e = err(&base_with(&format!(
        "{}{body}",
        mat(
            "x",
            "{ kind = \"bristle\", stiffness = 1e5, projection = \"disk\" }"
        )
    )));
    check(
        &e,
        "material[1].model.projection",
        Some(13),
        "unknown projection",
    );
    let e = err(&base_with(&format!(
        "{}{body}",
        mat(
            "x",
            "{ kind = \"tanh\", slip_velocity = 1e-3, projection = \"box\" }"
        )
    )));
    check(
        &e,
        "material[1].model.projection",
        Some(13),
        "does not apply",
    );
    let e = err(&base_with(&format!(
        "{}{}{body}",
        mat("x", boxed),
        mat("y", cone)
    )));
    check(&e, "material[2].model", Some(18), "same parameter set");
}

#[test]
fn solver_cone_parses_and_bad_values_name_the_field() {
    let s = ok(&base_with(&format!(
        "{SPHERE}[solver]\ncone = \"relaxed\"\nmax_outer = 3\n"
    )));
    assert_eq!(s.solver.cone, bristlecone::solve::Cone::Relaxed);
    assert_eq!(s.solver.max_outer, 3);
    let e = err(&base_with(&format!("{SPHERE}[solver]\ncone = \"round\"\n")));
    assert!(e.line.is_some(), "{e}");
    check(&e, "solver.cone", e.line, "unknown cone `round`");
    let e = err(&base_with(&format!("{SPHERE}[solver]\nmax_outer = 0\n")));
    assert_eq!(e.field, "solver.max_outer", "{e}");
}

#[test]
fn boundaries_parse() {
    let s = ok(&base_with(&format!(
        r#"{SPHERE}[[boundary]]
name = "floor"
kind = "plane"
point = [0.0, 0.0, -1.0]
normal = [1.0, 0.0, 0.0]
[[boundary]]
kind = "cylinder_container"
position = [0.0, 0.0, -0.5]
radius = 1.0
height = 2.0
open_top = true
[[boundary]]
kind = "cylinder"
axis = [0.0, 1.0, 0.0]
position = [5.0, 0.0, 0.0]
radius = 0.1
height = 0.3
motion = "kinematic"
angular_velocity = [0.0, 1.0, 0.0]
[[boundary]]
kind = "box"
position = [5.0, 5.0, 0.0]
half_extents = [0.1, 0.2, 0.3]
"#
    )));
    assert!(s.warnings.is_empty(), "{:?}", s.warnings);
    let plane = &s.boundaries[0];
    assert_eq!(plane.name, "floor");
    assert_eq!(plane.shape, BoundaryShape::Plane);
    assert_eq!(plane.position, [0.0, 0.0, -1.0]);
    let q = glam::DQuat::from_array(plane.orientation);
    assert!((q * glam::DVec3::Z - glam::DVec3::X).length() < 1e-12);
    assert_eq!(s.boundaries[1].name, "boundary[1]");
    assert_eq!(
        s.boundaries[1].shape,
        BoundaryShape::CylinderContainer {
            radius: 1.0,
            height: 2.0,
            open_top: true
        }
    );
    let cyl = &s.boundaries[2];
    assert_eq!(cyl.motion, Motion::Kinematic);
    assert_eq!(cyl.angular_velocity, [0.0, 1.0, 0.0]);
    let q = glam::DQuat::from_array(cyl.orientation);
    assert!((q * glam::DVec3::Z - glam::DVec3::Y).length() < 1e-12);
    assert_eq!(
        s.boundaries[3].shape,
        BoundaryShape::SolidBox {
            half_extents: [0.1, 0.2, 0.3]
        }
    );
}

// ---------------------------------------------------------------------------------------
// Errors

#[test]
fn display_format() {
    let e = err(&base_with(
        "[[body]]\nradius = -1.0\nposition = [0.0, 0.0, 0.0]\n",
    ));
    assert_eq!(
        e.to_string(),
        "t.toml:10:10: body[0].radius: must be positive (got -1)"
    );
    let e = SceneError {
        file: "x.toml".into(),
        line: None,
        column: None,
        field: "body".into(),
        message: "m".into(),
    };
    assert_eq!(e.to_string(), "x.toml: body: m");
    let _: &dyn std::error::Error = &e;
}

#[test]
fn syntax_error() {
    let e = err("[simulation]\ndt = 1e-3\nsteps = = 3\n");
    assert_eq!(e.line, Some(3));
    assert!(e.message.contains("TOML syntax error"), "{e}");
    let e = err("[simulation\n");
    assert_eq!(e.line, Some(1));
    assert!(e.message.contains("TOML syntax error"), "{e}");
}

#[test]
fn duplicate_key() {
    let e = err(&base_with(
        "[[body]]\nradius = 1.0\nradius = 2.0\nposition = [0.0, 0.0, 0.0]\n",
    ));
    assert_eq!(e.line, Some(11));
    assert!(e.message.contains("duplicate key"), "{e}");
}

#[test]
fn unknown_key() {
    let e = err(&base_with(&format!("{SPHERE}colour = \"red\"\n")));
    check(&e, "body[0].colour", Some(12), "unknown field `colour`");
    assert_eq!(e.column, Some(1));
    let e = err("[simulation]\ndt = 1e-3\nsteps = 1\nstep = 2\n");
    check(&e, "simulation.step", Some(4), "unknown field `step`");
    let e = err(&base_with("[sim]\n"));
    check(&e, "sim", Some(9), "unknown field `sim`");
    let e = err(&base_with(&format!(
        "{SPHERE}[[boundary]]\nkind = \"plane\"\nradius = 1.0\n"
    )));
    check(
        &e,
        "boundary[0].radius",
        Some(14),
        "`radius` does not apply to boundary kind `plane`",
    );
    let e = err(&base_with("[[material]]\nname = \"x\"\ndensity = 1.0\nfriction = 0.1\nmodel = { kind = \"tanh\", stiffness = 1.0 }\n"));
    check(
        &e,
        "material[1].model.stiffness",
        Some(13),
        "`stiffness` does not apply to friction model `tanh`",
    );
}

#[test]
fn wrong_types() {
    let e = err(&base_with(
        "[[body]]\nradius = \"big\"\nposition = [0.0, 0.0, 0.0]\n",
    ));
    check(
        &e,
        "body[0].radius",
        Some(10),
        "invalid type: string \"big\", expected f64",
    );
    let e = err(&base_with(
        "[[body]]\nradius = 1.0\nposition = [0.0, 0.0]\n",
    ));
    check(&e, "body[0].position", Some(11), "invalid length 2");
    let e = err("[simulation]\ndt = 1e-3\nsteps = 1.5\n");
    check(
        &e,
        "simulation.steps",
        Some(3),
        "invalid type: floating point `1.5`, expected i64",
    );
    let e = err(&base_with("[output]\nvtk = 1\n"));
    check(
        &e,
        "output.vtk",
        Some(10),
        "invalid type: integer `1`, expected a boolean",
    ); // A friction model's keys are read by its model at the type it asks for: a wrong type
       // is named at the key (never read as absent), an integer serves as a number, and a key
       // no model takes lists the keys there are.
    let model = |m: &str| {
        base_with(&format!(
            "[[material]]\nname = \"x\"\ndensity = 1.0\nfriction = 0.1\nmodel = {{ {m} }}\n"
        ))
    };
    let e = err(&model("kind = \"compliant\", stiffness = \"big\""));
    check(
        &e,
        "material[1].model.stiffness",
        Some(13),
        "invalid type: string \"big\", expected f64",
    );
    let e = err(&model(
        "kind = \"bristle\", stiffness = 1e4, projection = 1",
    ));
    check(
        &e,
        "material[1].model.projection",
        Some(13),
        "invalid type: integer `1`, expected a string",
    );
    let e = err(&model(
        "kind = \"lugre_patch\", sigma0 = 1e5, sigma1 = 300.0, sigma2 = 0.0, \
         mu_static = 0.5, v_stribeck = 0.01, elasto_plastic = 1, cells = 21",
    ));
    check(
        &e,
        "material[1].model.elasto_plastic",
        Some(13),
        "invalid type: integer `1`, expected a boolean",
    );
    let e = err(&model("kind = \"compliant\", stiffnes = 1e4"));
    check(
        &e,
        "material[1].model.stiffnes",
        Some(13),
        "unknown field `stiffnes`, expected one of `kind`, ",
    );
    assert!(e.message.contains("`stiffness`"), "{e}");
    let given = model("kind = \"compliant\", stiffness = 10000, damping = 5");
    let ok = parse(&format!("{given}{SPHERE}material = \"x\"\n")).unwrap();
    assert_eq!(
        ok.materials[1].model,
        scene::FrictionModel::Compliant {
            stiffness: 1e4,
            damping: 5.0
        }
    );
}

#[test]
fn missing_fields() {
    let e = err(&base_with("[[body]]\nradius = 1.0\n"));
    check(&e, "body[0].position", Some(9), "missing field `position`");
    let e = err("[simulation]\nsteps = 3\n");
    check(&e, "simulation.dt", Some(1), "missing field `dt`");
    let e = err(&base_with("[[material]]\nname = \"x\"\ndensity = 1.0\n"));
    check(
        &e,
        "material[1].friction",
        Some(9),
        "missing field `friction`",
    );
    let e = err(&base_with(&format!(
        "{SPHERE}[[boundary]]\nkind = \"box_container\"\n"
    )));
    check(
        &e,
        "boundary[0].half_extents",
        Some(12),
        "missing field `half_extents` (required for boundary kind `box_container`)",
    );
    let e = err(&base_with("[[body]]\nposition = [0.0, 0.0, 0.0]\n"));
    check(
        &e,
        "body[0].radius",
        Some(9),
        "missing field `radius` (required for shape `sphere`)",
    );
    let e = err(&base_with("[[material]]\nname = \"x\"\ndensity = 1.0\nfriction = 0.1\nmodel = { kind = \"bristle\" }\n"));
    check(
        &e,
        "material[1].model.stiffness",
        Some(13),
        "missing field `stiffness` (required for friction model `bristle`)",
    );
    let e = err("[[material]]\nname = \"x\"\ndensity = 1.0\nfriction = 0.1\n");
    check(&e, "simulation", None, "missing [simulation] table");
}

#[test]
fn non_positive_values() {
    let e = err(&base_with(
        "[[body]]\nradius = 0.0\nposition = [0.0, 0.0, 0.0]\n",
    ));
    check(&e, "body[0].radius", Some(10), "must be positive (got 0)");
    let e = err(&base_with(&format!("{SPHERE}mass = -2.0\n")));
    check(&e, "body[0].mass", Some(12), "must be positive (got -2)");
    let e = err(&base_with(&format!("{SPHERE}inertia = [1.0, 0.0, 1.0]\n")));
    check(
        &e,
        "body[0].inertia",
        Some(12),
        "principal moments must be positive (got 0)",
    );
    let e = err(&format!("[simulation]\ndt = -1e-3\nsteps = 1\n{SPHERE}"));
    check(
        &e,
        "simulation.dt",
        Some(2),
        "must be positive (got -0.001)",
    );
    let e = err("[simulation]\ndt = 1e-3\nsteps = 0\n");
    check(&e, "simulation.steps", Some(3), "must be positive (got 0)");
    let e = err(&format!("[simulation]\ndt = 1e-3\nsteps = 1\n[[material]]\nname = \"a\"\ndensity = 0\nfriction = 0.1\n{SPHERE}"));
    check(
        &e,
        "material[0].density",
        Some(6),
        "must be positive (got 0)",
    );
    let e = err(&base_with(&format!(
        "{SPHERE}[[boundary]]\nkind = \"cylinder\"\nradius = -1\nheight = 1\n"
    )));
    check(
        &e,
        "boundary[0].radius",
        Some(14),
        "must be positive (got -1)",
    );
    let e = err(&base_with(&format!("{SPHERE}[output]\nframe_every = 0\n")));
    check(
        &e,
        "output.frame_every",
        Some(13),
        "must be positive (got 0)",
    );
    let e = err(&base_with(&format!("{SPHERE}[solver]\ntolerance = 0.0\n")));
    check(&e, "solver.tolerance", Some(13), "must be positive (got 0)");
    let e = err(&base_with(&format!(
        "{SPHERE}[solver]\nstabilisation = 1.5\n"
    )));
    check(
        &e,
        "solver.stabilisation",
        Some(13),
        "must be at most 1 (got 1.5)",
    );
    let e = err(&base_with(&format!(
        "{SPHERE}[solver]\nstabilisation = 0.0\n"
    )));
    check(
        &e,
        "solver.stabilisation",
        Some(13),
        "must be positive (got 0)",
    );
    let e = err(&base_with(&format!("{SPHERE}[solver]\nslop = -1e-6\n")));
    check(&e, "solver.slop", Some(13), "must be non-negative");
}

#[test]
fn negative_friction() {
    let e = err("[simulation]\ndt = 1e-3\nsteps = 1\n[[material]]\nname = \"a\"\ndensity = 1.0\nfriction = -0.1\n");
    check(
        &e,
        "material[0].friction",
        Some(7),
        "must be non-negative (got -0.1)",
    );
}

#[test]
fn non_finite_numbers() {
    let e = err(&base_with(
        "[[body]]\nradius = nan\nposition = [0.0, 0.0, 0.0]\n",
    ));
    check(
        &e,
        "body[0].radius",
        Some(10),
        "must be a finite number (got `nan`)",
    );
    let e = err(&base_with(
        "[[body]]\nradius = 1.0\nposition = [0.0, +inf, 0.0]\n",
    ));
    check(
        &e,
        "body[0].position[1]",
        Some(11),
        "must be a finite number (got `+inf`)",
    );
    assert_eq!(e.column, Some(18));
    let e = err("[simulation]\ndt = 1e-3\nsteps = 1\ngravity = [0.0, 0.0, -inf]\n");
    check(
        &e,
        "simulation.gravity[2]",
        Some(4),
        "must be a finite number (got `-inf`)",
    );
    let e = err(&base_with(
        "[[material]]\nname = \"b\"\ndensity = inf\nfriction = 0.1\n",
    ));
    check(
        &e,
        "material[1].density",
        Some(11),
        "must be a finite number",
    );
}

#[test]
fn unknown_material() {
    let e = err(&base_with(&format!("{SPHERE}material = \"wood\"\n")));
    check(
        &e,
        "body[0].material",
        Some(12),
        "unknown material `wood` (defined: glass)",
    );
    let two = base_with("[[material]]\nname = \"steel\"\ndensity = 7800.0\nfriction = 0.2\n");
    let e = err(&format!("{two}{SPHERE}"));
    check(
        &e,
        "body[0].material",
        Some(13),
        "missing field `material` (required when the scene defines more than one material)",
    );
    let e = err(&format!("[simulation]\ndt = 1e-3\nsteps = 1\n{SPHERE}"));
    check(&e, "body[0].material", Some(4), "no materials defined");
    let e = err(&base_with(
        "[[material]]\nname = \"glass\"\ndensity = 1.0\nfriction = 0.1\n",
    ));
    check(
        &e,
        "material[1].name",
        Some(10),
        "duplicate material name `glass` (first defined on line 6)",
    );
}

/// Capsules and clumps may share a scene (capsule–clump narrow phase); an explicit clump
/// overlapping a capsule is refused at the later body (exact: members against the
/// segment), while one that clears it by 1 mm is accepted.
#[test]
fn capsules_and_clumps_together_overlap_exactly() {
    let with = |x: f64| {
        base_with(&format!(
            "[[body]]\nshape = \"capsule\"\nradius = 0.02\nhalf_length = 0.05\nposition = [0.0, 0.0, 0.1]\n\
             [[body]]\nshape = \"clump\"\nspheres = [[0.0, 0.0, 0.0, 0.02], [0.03, 0.0, 0.0, 0.02]]\nposition = [{x}, 0.0, 0.1]\n"
        ))
    };
    // `position` places the members' frame: the near member (r 0.02) is centred at x and
    // touches the capsule's side (r 0.02, axis along z at the origin) at x = 0.04.
    let s = ok(&with(0.041));
    assert_eq!(s.bodies.len(), 2);
    let e = err(&with(0.035));
    check(&e, "body[1].position", Some(17), "overlaps body[0]");
    assert!(e.message.contains("defined on line 13"), "{e}");
}

#[test]
fn unknown_kinds() {
    let e = err(&base_with(
        "[[body]]\nshape = \"cone\"\nradius = 1.0\nposition = [0.0, 0.0, 0.0]\n",
    ));
    check(&e, "body[0].shape", Some(10), "unknown shape kind `cone`");
    let e = err(&base_with(
        "[[body]]\nshape = \"mesh\"\nposition = [0.0, 0.0, 0.0]\n",
    ));
    check(
        &e,
        "body[0].shape",
        Some(10),
        "shape `mesh` is not supported yet for bodies (supported: sphere, box, capsule, cylinder, clump, convex)",
    );
    let e = err(&base_with(&format!(
        "{SPHERE}[[boundary]]\nkind = \"torus\"\n"
    )));
    check(
        &e,
        "boundary[0].kind",
        Some(13),
        "unknown boundary kind `torus`",
    );
    let e = err(&base_with("[[generator]]\nkind = \"spiral\"\nradius = 0.01\nregion = { kind = \"box\", min = [0, 0, 0], max = [1, 1, 1] }\n"));
    check(
        &e,
        "generator[0].kind",
        Some(10),
        "unknown generator kind `spiral` (expected one of: lattice, random_fill)",
    );
    let e = err(&base_with("[[generator]]\nkind = \"lattice\"\nradius = 0.01\nregion = { kind = \"sphere\", min = [0, 0, 0] }\n"));
    check(
        &e,
        "generator[0].region.kind",
        Some(12),
        "unknown region kind `sphere`",
    );
    let e = err(&base_with("[[material]]\nname = \"x\"\ndensity = 1.0\nfriction = 0.1\nmodel = { kind = \"viscous\" }\n"));
    check(
        &e,
        "material[1].model.kind",
        Some(13),
        "unknown friction model kind `viscous`",
    );
    let e = err(&base_with(&format!("{SPHERE}motion = \"floating\"\n")));
    check(&e, "body[0].motion", Some(12), "unknown motion `floating`");
    let e = err(&base_with(&format!("{SPHERE}[solver]\nkind = \"gauss\"\n")));
    check(&e, "solver.kind", Some(13), "unknown solver kind `gauss`");
}

#[test]
fn steps_and_duration() {
    let e = err("[simulation]\ndt = 1e-3\nsteps = 10\nduration = 1.0\n");
    check(
        &e,
        "simulation.duration",
        Some(4),
        "give either `steps` or `duration`, not both",
    );
    let e = err("# comment\n[simulation]\ndt = 1e-3\n");
    check(
        &e,
        "simulation.steps",
        Some(2),
        "missing `steps` or `duration` (give exactly one)",
    );
    let e = err("[simulation]\ndt = 1e-3\nduration = -1.0\n");
    check(&e, "simulation.duration", Some(3), "must be positive");
    let e = err(&base_with(&format!(
        "{SPHERE}[output]\nframe_every = 3\nframe_interval = 0.1\n"
    )));
    check(
        &e,
        "output.frame_interval",
        Some(14),
        "give either `frame_every` or `frame_interval`, not both",
    );
}

#[test]
fn overlapping_bodies() {
    let e = err(&base_with(
        r#"[[body]]
name = "a"
radius = 0.1
position = [0.0, 0.0, 0.0]
[[body]]
radius = 0.1
position = [5.0, 0.0, 0.0]
[[body]]
name = "c"
radius = 0.1
position = [0.15, 0.0, 0.0]
"#,
    ));
    check(
        &e,
        "body[2].position",
        Some(19),
        "body[2] (\"c\") overlaps body[0] (\"a\") defined on line 12",
    );
    // Exactly touching is fine.
    ok(&base_with(
        "[[body]]\nradius = 0.1\nposition = [0.0, 0.0, 0.0]\n[[body]]\nradius = 0.1\nposition = [0.2, 0.0, 0.0]\n",
    ));
}

#[test]
fn zero_length_directions() {
    let e = err(&base_with(&format!(
        "{SPHERE}[[boundary]]\nkind = \"plane\"\nnormal = [0.0, 0.0, 0.0]\n"
    )));
    check(&e, "boundary[0].normal", Some(14), "zero-length normal");
    let e = err(&base_with(&format!(
        "{SPHERE}[[boundary]]\nkind = \"cylinder_container\"\naxis = [0, 0, 0]\nradius = 1.0\nheight = 1.0\n"
    )));
    check(&e, "boundary[0].axis", Some(14), "zero-length axis");
    let e = err(&base_with(&format!(
        "{SPHERE}[[boundary]]\nkind = \"cylinder\"\naxis = [0, 0, 1]\norientation = [0, 0, 0, 1]\nradius = 1.0\nheight = 1.0\n"
    )));
    check(
        &e,
        "boundary[0].axis",
        Some(14),
        "give either `orientation` or `axis`, not both",
    );
}

#[test]
fn orientations() {
    let e = err(&base_with(&format!(
        "{SPHERE}orientation = [0.0, 0.0, 0.0, 0.0]\n"
    )));
    check(
        &e,
        "body[0].orientation",
        Some(12),
        "orientation is a zero quaternion",
    );
    let e = err(&base_with(&format!(
        "{SPHERE}orientation = [0.0, 0.0, 0.0, 2.0]\n"
    )));
    check(
        &e,
        "body[0].orientation",
        Some(12),
        "orientation is not a unit quaternion (|q| = 2)",
    );
    let s = ok(&base_with(&format!(
        "{SPHERE}orientation = [0.0, 0.0, 0.70710, 0.70710]\n"
    )));
    let q = s.bodies[0].orientation;
    let n: f64 = q.iter().map(|x| x * x).sum();
    assert!((n - 1.0).abs() < 1e-14);
}

#[test]
fn motion_rules() {
    let e = err(&base_with(&format!(
        "{SPHERE}motion = \"fixed\"\nvelocity = [1.0, 0.0, 0.0]\n"
    )));
    check(&e, "body[0].velocity", Some(13), "a fixed body cannot move");
    let e = err(&base_with(&format!(
        "{SPHERE}[[boundary]]\nkind = \"plane\"\nmotion = \"dynamic\"\n"
    )));
    // A dynamic boundary needs explicit mass properties (tests/joints.rs: the motorised drum).
    check(
        &e,
        "boundary[0].mass",
        Some(12),
        "a dynamic boundary needs an explicit `mass`",
    );
    let s = ok(&base_with(&format!("{SPHERE}motion = \"fixed\"\n")));
    assert_eq!(s.bodies[0].motion, Motion::Fixed);
    assert!(s.bodies[0].mass > 0.0);
}

#[test]
fn empty_scene() {
    let e = err(BASE);
    check(&e, "body", None, "the scene has no bodies");
}

#[test]
fn load_missing_file() {
    let e = scene::load(Path::new("/nonexistent/scene.toml")).unwrap_err();
    assert!(e.message.contains("cannot read scene file"), "{e}");
    assert_eq!(e.line, None);
}

#[test]
fn never_panics_on_odd_input() {
    for text in [
        "",
        "\u{0}",
        "[[body]]\n[[body]]\n",
        "simulation = 3",
        "[simulation]\ndt = 1e-300\nduration = 1e300\n[[material]]\nname=\"a\"\ndensity=1e300\nfriction=0\n[[body]]\nradius=1e300\nposition=[0,0,0]\n",
        "[simulation]\ndt = 1\nsteps = 1\n[[material]]\nname=\"a\"\ndensity=1\nfriction=0\n[[generator]]\nkind=\"lattice\"\nradius=1e-300\nregion={kind=\"box\",min=[0,0,0],max=[1,1,1]}\n",
        "[simulation]\ndt = 1\nsteps = 1\n[[material]]\nname=\"a\"\ndensity=1\nfriction=0\n[[generator]]\nkind=\"random_fill\"\nradius=1e-300\nvolume_fraction=0.5\nregion={kind=\"box\",min=[0,0,0],max=[1,1,1]}\n",
    ] {
        let _ = parse(text);
    }
}

// ---------------------------------------------------------------------------------------
// Warnings

#[test]
fn warnings() {
    // dt too large for r = 1 mm: 0.1·sqrt(0.001/9.81) ≈ 1.0e-3.
    let s = ok(
        "[simulation]\ndt = 0.01\nsteps = 1\n[[material]]\nname=\"a\"\ndensity=1.0\nfriction=2.5\n[[body]]\nradius = 0.001\nposition = [0.0, 0.0, 5.0]\n[[boundary]]\nkind = \"box_container\"\nhalf_extents = [1.0, 1.0, 1.0]\n[[boundary]]\nkind = \"plane\"\npoint = [0.0, 0.0, 10.0]\n",
    );
    let all = s.warnings.join("\n");
    assert_eq!(s.warnings.len(), 4, "{all}");
    assert!(
        all.contains(
            "t.toml:2: simulation.dt: dt = 0.01 s is large for the smallest body radius 0.001 m"
        ),
        "{all}"
    );
    assert!(
        all.contains("t.toml:7: material[0].friction: friction coefficient 2.5 > 2"),
        "{all}"
    );
    assert!(
        all.contains("t.toml:10: body[0]: 1 of 1 bodies start outside every container"),
        "{all}"
    );
    assert!(
        all.contains("1 bodies start below plane `boundary[1]`"),
        "{all}"
    );
    let s = ok(&base_with(&format!(
        "{SPHERE}velocity = [100.0, 0.0, 0.0]\ninertia = [1.0, 1.0, 3.0]\n"
    )));
    let all = s.warnings.join("\n");
    assert!(all.contains("moves 1.000e-1 m per step"), "{all}");
    assert!(
        all.contains("body[0].inertia: principal moments violate the triangle inequality"),
        "{all}"
    );
    // Jacobi with ω ≥ 2/3 (outside the proven convergence range); APGD ignores ω.
    let jac = |kind: &str, omega: f64| {
        ok(&format!(
            "{}[solver]\nkind = \"{kind}\"\nomega = {omega}\n",
            base_with(SPHERE)
        ))
        .warnings
        .join("\n")
    };
    let all = jac("jacobi", 0.7);
    assert!(
        all.contains("solver.omega: omega = 0.7 is ≥ 2/3: projected Jacobi is only guaranteed"),
        "{all}"
    );
    assert!(!jac("jacobi", 0.6).contains("solver.omega"));
    assert!(!jac("apgd", 0.7).contains("solver.omega"));
}

// ---------------------------------------------------------------------------------------
// Generators

fn fill_scene(count: usize, radius: &str, seed: u64, region: &str) -> String {
    format!(
        "{BASE}[[generator]]\nkind = \"random_fill\"\ncount = {count}\nradius = {radius}\nseed = {seed}\nregion = {region}\n"
    )
}

const BOX: &str = "{ kind = \"box\", min = [0.0, 0.0, 0.0], max = [0.2, 0.2, 0.2] }";

#[test]
fn random_fill_deterministic() {
    let a = ok(&fill_scene(500, "{ min = 0.002, max = 0.004 }", 7, BOX));
    let b = ok(&fill_scene(500, "{ min = 0.002, max = 0.004 }", 7, BOX));
    let c = ok(&fill_scene(500, "{ min = 0.002, max = 0.004 }", 8, BOX));
    assert_eq!(a.bodies, b.bodies);
    assert_ne!(a.bodies, c.bodies);
    assert_eq!(a.bodies.len(), 500);
    // Pin a value so that cross-platform / cross-version drift is noticed.
    let first = a.bodies[0].position;
    let again = ok(&fill_scene(500, "{ min = 0.002, max = 0.004 }", 7, BOX));
    assert_eq!(again.bodies[0].position, first);
}

#[test]
fn random_fill_no_overlap_brute_force_2000() {
    let s = ok(&fill_scene(2000, "{ min = 0.003, max = 0.006 }", 3, BOX));
    assert_eq!(s.bodies.len(), 2000);
    assert_no_overlap_brute(&s.bodies);
    for b in &s.bodies {
        let r = radius(b);
        assert!((0.003..=0.006).contains(&r));
        assert!(b
            .position
            .iter()
            .all(|&x| x - r >= -1e-12 && x + r <= 0.2 + 1e-12));
    }
}

#[test]
fn random_fill_100k_fast_and_clean() {
    let t = std::time::Instant::now();
    let s = ok(&fill_scene(
        100_000,
        "0.004",
        11,
        "{ kind = \"box\", min = [-0.5, -0.5, 0.0], max = [0.5, 0.5, 0.5] }",
    ));
    let elapsed = t.elapsed();
    assert_eq!(s.bodies.len(), 100_000);
    assert_no_overlap_grid(&s.bodies);
    for b in &s.bodies {
        let p = b.position;
        assert!(p[0].abs() <= 0.496 + 1e-12 && p[1].abs() <= 0.496 + 1e-12);
        assert!(p[2] >= 0.004 - 1e-12 && p[2] <= 0.496 + 1e-12);
    }
    assert!(elapsed.as_secs_f64() < 10.0, "took {elapsed:?}");
}

#[test]
fn random_fill_polydisperse_1_to_5_in_cylinder() {
    let s = ok(&fill_scene(
        3000,
        "{ min = 0.002, max = 0.010 }",
        5,
        "{ kind = \"cylinder\", base = [1.0, 2.0, 0.5], radius = 0.15, height = 0.3 }",
    ));
    assert_eq!(s.bodies.len(), 3000);
    assert_no_overlap_grid(&s.bodies);
    let (mut lo, mut hi) = (f64::INFINITY, 0.0f64);
    for b in &s.bodies {
        let r = radius(b);
        lo = lo.min(r);
        hi = hi.max(r);
        let p = b.position;
        let rho = ((p[0] - 1.0).powi(2) + (p[1] - 2.0).powi(2)).sqrt();
        assert!(rho + r <= 0.15 + 1e-12);
        assert!(p[2] - r >= 0.5 - 1e-12 && p[2] + r <= 0.8 + 1e-12);
    }
    assert!(hi / lo > 4.5, "ratio {}", hi / lo);
}

#[test]
fn random_fill_volume_fraction() {
    let s = ok(&format!(
        "{BASE}[[generator]]\nkind = \"random_fill\"\nvolume_fraction = 0.2\nradius = 0.01\nregion = {BOX}\n"
    ));
    let v: f64 = s
        .bodies
        .iter()
        .map(|b| 4.0 / 3.0 * std::f64::consts::PI * radius(b).powi(3))
        .sum();
    let phi = v / 0.008;
    assert!((0.2..0.21).contains(&phi), "phi {phi}");
}

#[test]
fn random_fill_count_not_reachable() {
    let text = format!(
        "{BASE}[[generator]]\nkind = \"random_fill\"\ncount = 5000\nradius = 0.01\nmax_attempts = 200\nregion = {BOX}\n"
    );
    let e = err(&text);
    check(&e, "generator[0].count", Some(11), "could place only");
    assert!(e.message.contains("of 5000 spheres"), "{e}");
    let e = err(&format!(
        "{BASE}[[generator]]\nkind = \"random_fill\"\ncount = 5\nradius = 0.5\nregion = {BOX}\n"
    ));
    check(
        &e,
        "generator[0].region",
        Some(13),
        "the region is too small for spheres of radius 0.5",
    );
    let e = err(&format!(
        "{BASE}[[generator]]\nkind = \"random_fill\"\nradius = 0.01\nregion = {BOX}\n"
    ));
    check(
        &e,
        "generator[0].count",
        Some(9),
        "random_fill needs `count` and/or `volume_fraction`",
    );
    let e = err(&format!(
        "{BASE}[[generator]]\nkind = \"random_fill\"\ncount = 5\nradius = {{ min = 0.02, max = 0.01 }}\nregion = {BOX}\n"
    ));
    check(
        &e,
        "generator[0].radius.max",
        Some(12),
        "must be at least `min`",
    );
    let e = err(&format!(
        "{BASE}[[generator]]\nkind = \"random_fill\"\ncount = 5\nradius = {{ min = 0.01, mean = 0.02 }}\nregion = {BOX}\n"
    ));
    check(
        &e,
        "generator[0].radius.mean",
        Some(12),
        "unknown field `mean`",
    );
    let e = err(&format!(
        "{BASE}[[generator]]\nkind = \"random_fill\"\ncount = 5\nspacing = 0.1\nradius = 0.01\nregion = {BOX}\n"
    ));
    check(
        &e,
        "generator[0].spacing",
        Some(12),
        "`spacing` does not apply to generator `random_fill`",
    );
}

#[test]
fn generators_avoid_explicit_bodies_and_each_other() {
    let s = ok(&format!(
        "{BASE}[[body]]\nradius = 0.05\nposition = [0.1, 0.1, 0.1]\n\
         [[generator]]\nkind = \"lattice\"\nradius = 0.01\nregion = {BOX}\n\
         [[generator]]\nkind = \"random_fill\"\ncount = 200\nradius = 0.005\nregion = {{ kind = \"box\", min = [0.0, 0.0, 0.2], max = [0.2, 0.2, 0.4] }}\n"
    ));
    assert_eq!(s.bodies[0].shape, BodyShape::Sphere { radius: 0.05 });
    assert!(s.bodies.len() > 201);
    assert_no_overlap_brute(&s.bodies);
}

#[test]
fn lattice_generator() {
    let text = |extra: &str| {
        format!("{BASE}[[generator]]\nkind = \"lattice\"\nradius = 0.01\nspacing = 0.025\nregion = {BOX}\nvelocity = [0.0, 0.0, -1.0]\n{extra}")
    };
    let s = ok(&text(""));
    // Sites at 0.01 + k·0.025 ≤ 0.19: k = 0..=7 → 8 per axis.
    assert_eq!(s.bodies.len(), 512);
    assert_eq!(s.bodies[0].position, [0.01, 0.01, 0.01]);
    assert_eq!(s.bodies[1].position, [0.035, 0.01, 0.01]);
    assert!(s.bodies.iter().all(|b| b.velocity == [0.0, 0.0, -1.0]));
    // Lowest layer first.
    assert!(s
        .bodies
        .windows(2)
        .all(|w| w[0].position[2] <= w[1].position[2]));
    let s = ok(&text("max_count = 70\n"));
    assert_eq!(s.bodies.len(), 70);
    let a = ok(&text("jitter = 0.002\nseed = 1\n"));
    let b = ok(&text("jitter = 0.002\nseed = 1\n"));
    let c = ok(&text("jitter = 0.002\nseed = 2\n"));
    assert_eq!(a.bodies, b.bodies);
    assert_ne!(a.bodies, c.bodies);
    assert_no_overlap_brute(&a.bodies);
    for body in &a.bodies {
        assert!(body
            .position
            .iter()
            .all(|&x| (0.01 - 1e-12..=0.19 + 1e-12).contains(&x)));
    }
    let e = err(&text("jitter = 0.01\n"));
    check(
        &e,
        "generator[0].spacing",
        Some(12),
        "must be at least 2·radius + 2·jitter",
    );
    let e = err(&format!(
        "{BASE}[[generator]]\nkind = \"lattice\"\nradius = {{ min = 0.01, max = 0.02 }}\nregion = {BOX}\n"
    ));
    check(
        &e,
        "generator[0].radius",
        Some(11),
        "a lattice needs a single radius",
    );
    let e = err(&format!(
        "{BASE}[[generator]]\nkind = \"lattice\"\nradius = 1.0\nregion = {BOX}\n"
    ));
    check(
        &e,
        "generator[0].region",
        Some(12),
        "the region holds no free lattice site",
    );
    let e = err(&format!(
        "{BASE}[[generator]]\nkind = \"lattice\"\nradius = 0.01\nregion = {{ kind = \"box\", min = [0, 0, 0], max = [1, 0, 1] }}\n"
    ));
    check(
        &e,
        "generator[0].region.max",
        Some(12),
        "must exceed `min` on every axis",
    );
}

#[test]
fn lattice_in_cylinder() {
    let s = ok(&format!(
        "{BASE}[[generator]]\nkind = \"lattice\"\nradius = 0.01\nregion = {{ kind = \"cylinder\", base = [0, 0, 0], radius = 0.1, height = 0.05 }}\n"
    ));
    assert!(!s.bodies.is_empty());
    for b in &s.bodies {
        let p = b.position;
        assert!(p[0].hypot(p[1]) + 0.01 <= 0.1 + 1e-12);
    }
}

// ---------------------------------------------------------------------------------------
// Beads on a box slab: overlaps and generator clearance by the actual shapes

/// A fixed box slab 0.1 × 0.1 × 0.01 m lying on z = 0 (top face at z = 0.01), on lines 9–13.
const SLAB: &str = r#"[[body]]
shape = "box"
half_extents = [0.05, 0.05, 0.005]
position = [0, 0, 0.005]
motion = "fixed"
"#;

/// The slab's half extents and centre, as in [`SLAB`].
const SLAB_H: [f64; 3] = [0.05, 0.05, 0.005];
const SLAB_C: [f64; 3] = [0.0, 0.0, 0.005];

/// The signed gap of a sphere to the (axis-aligned) slab, computed here independently of
/// the crate: the distance to the box less the radius, or minus the depth inside it.
fn slab_gap(c: [f64; 3], r: f64) -> f64 {
    let l: Vec<f64> = (0..3).map(|i| c[i] - SLAB_C[i]).collect();
    let out: f64 = (0..3)
        .map(|i| (l[i].abs() - SLAB_H[i]).max(0.0).powi(2))
        .sum::<f64>()
        .sqrt();
    let inside = (0..3)
        .map(|i| l[i].abs() - SLAB_H[i])
        .fold(f64::NEG_INFINITY, f64::max)
        .min(0.0);
    out + inside - r
}

/// Every sphere of the scene but the slab (body 0) clears the slab, to the relative
/// tolerance validation allows a touch.
#[track_caller]
fn assert_clear_of_slab(s: &Scene) {
    let slab_r = SLAB_H.iter().map(|h| h * h).sum::<f64>().sqrt();
    for (k, b) in s.bodies.iter().enumerate().skip(1) {
        let r = radius(b);
        let gap = slab_gap(b.position, r);
        assert!(
            gap >= -1e-9 * (r + slab_r),
            "grain {k} at {:?} overlaps the slab by {}",
            b.position,
            -gap
        );
    }
}

#[test]
fn beads_resting_on_a_box_are_accepted_and_a_sunk_one_is_refused() {
    let bead = |x: f64, z: f64| format!("[[body]]\nradius = 0.005\nposition = [{x}, 0.0, {z}]\n");
    // Exactly touching the top face (z = 0.01), whichever of the two comes first.
    let s = ok(&base_with(&format!(
        "{SLAB}{}{}",
        bead(0.0, 0.015),
        bead(0.03, 0.015)
    )));
    assert_eq!(s.bodies.len(), 3);
    ok(&base_with(&format!("{}{SLAB}", bead(0.0, 0.015))));
    // On the edge and at the corner too.
    ok(&base_with(&format!("{SLAB}{}", bead(0.055, 0.005))));
    ok(&base_with(&format!(
        "{SLAB}[[body]]\nradius = 0.005\nposition = [0.05, 0.05, 0.015]\n"
    )));
    // Sunk 1 mm into the slab: refused at the bead's position, naming the slab and depth.
    let e = err(&base_with(&format!(
        "{SLAB}{}{}",
        bead(0.0, 0.015),
        bead(0.03, 0.014)
    )));
    check(
        &e,
        "body[2].position",
        Some(19),
        "body[2] overlaps body[0] defined on line 12 by ",
    );
    let depth = |e: &SceneError| -> f64 {
        let after = e.message.split(" by ").nth(1).expect("a depth");
        after.split(' ').next().unwrap().parse().unwrap()
    };
    assert!((depth(&e) - 0.001).abs() < 1e-12, "{e}");
    // The slab placed onto a sunk bead is refused at the slab.
    let e = err(&base_with(&format!("{}{SLAB}", bead(0.0, 0.014))));
    check(
        &e,
        "body[1].position",
        Some(15),
        "overlaps body[0] defined on line 11 by ",
    );
    assert!((depth(&e) - 0.001).abs() < 1e-12, "{e}");
}

#[test]
fn lattice_over_a_box_slab_fills_every_site_clear_of_it() {
    let lattice = |region: &str| {
        format!(
            "{BASE}{SLAB}[[generator]]\nkind = \"lattice\"\nradius = 0.004\nregion = {region}\n"
        )
    };
    // 9 × 9 sites a layer, 2 layers, the lowest 1 mm above the slab: all are free, though
    // nearly all lie inside the slab's bounding sphere (radius 0.0709 m about its centre).
    let s = ok(&lattice(
        "{ kind = \"box\", min = [-0.04, -0.04, 0.011], max = [0.04, 0.04, 0.03] }",
    ));
    assert_eq!(s.bodies.len(), 1 + 162);
    assert_clear_of_slab(&s);
    // The lowest layer's sites next to the slab's axis, 1 cm above its centre.
    let over_centre = s.bodies[1..]
        .iter()
        .filter(|b| b.position[0].hypot(b.position[1]) < 0.006 && b.position[2] < 0.02)
        .count();
    assert_eq!(over_centre, 3);
    // A region reaching into the slab: its layers inside it or cutting its top face are
    // left out, the one above is kept.
    let s = ok(&lattice(
        "{ kind = \"box\", min = [-0.04, -0.04, 0.0], max = [0.04, 0.04, 0.025] }",
    ));
    assert_clear_of_slab(&s);
    assert_eq!(s.bodies.len(), 1 + 81);
    assert!(s.bodies[1..].iter().all(|b| b.position[2] > 0.014));
    // A cylinder region above the slab.
    let s = ok(&lattice(
        "{ kind = \"cylinder\", base = [0.0, 0.0, 0.01], radius = 0.04, height = 0.02 }",
    ));
    assert_clear_of_slab(&s);
    assert!(s.bodies[1..]
        .iter()
        .any(|b| b.position[0].hypot(b.position[1]) < 0.006 && b.position[2] < 0.02));
}

#[test]
fn random_fill_over_a_box_slab_clears_it_and_is_deterministic() {
    // Part of the region lies inside the slab. With one attempt per grain, the first grain
    // that lands in the slab starts overlap removal, which must push grains out of it too.
    for attempts in [1000, 1] {
        let fill = |seed: u64| {
            ok(&format!(
                "{BASE}{SLAB}[[generator]]\nkind = \"random_fill\"\ncount = 300\nradius = 0.003\n\
                 max_attempts = {attempts}\nseed = {seed}\n\
                 region = {{ kind = \"box\", min = [-0.04, -0.04, 0.0], max = [0.04, 0.04, 0.03] }}\n"
            ))
        };
        let a = fill(5);
        assert_eq!(a.bodies.len(), 1 + 300);
        assert_clear_of_slab(&a);
        assert_no_overlap_brute(&a.bodies[1..]);
        // Grains rest within the bounding sphere of the slab, right above its top face.
        assert!(a.bodies[1..]
            .iter()
            .any(|b| b.position[0].hypot(b.position[1]) < 0.02 && b.position[2] < 0.016));
        assert_eq!(a.bodies, fill(5).bodies);
        assert_ne!(a.bodies, fill(6).bodies);
    }
}

#[test]
fn a_region_inside_a_body_is_covered_and_one_beside_it_is_not() {
    let gen = |body: &str, region: &str| {
        format!(
            "{BASE}{body}[[generator]]\nkind = \"lattice\"\nradius = 0.002\nregion = {region}\n"
        )
    };
    let inside_slab = "{ kind = \"box\", min = [-0.04, -0.04, 0.001], max = [0.04, 0.04, 0.009] }";
    let e = err(&gen(SLAB, inside_slab));
    check(
        &e,
        "body[0].half_extents",
        Some(11),
        "body[0] holds the whole region of generator[0] (line 17) inside its shape",
    );
    // Inside the slab's bounding sphere but above the slab: grains are placed.
    let above = "{ kind = \"box\", min = [-0.02, -0.02, 0.011], max = [0.02, 0.02, 0.03] }";
    assert!(ok(&gen(SLAB, above)).bodies.len() > 1);
    // Half in the slab, with room for no grain above it: the generator says so itself.
    let e = err(&gen(
        SLAB,
        "{ kind = \"box\", min = [-0.02, -0.02, 0.0], max = [0.02, 0.02, 0.012] }",
    ));
    check(
        &e,
        "generator[0].region",
        Some(17),
        "the region holds no free lattice site",
    );
    // Capsules and cylinders answer by their own shapes.
    let small = "{ kind = \"box\", min = [-0.01, -0.01, -0.02], max = [0.01, 0.01, 0.02] }";
    for shape in ["capsule", "cylinder"] {
        let body = format!(
            "[[body]]\nshape = \"{shape}\"\nradius = 0.02\nhalf_length = 0.05\nposition = [0, 0, 0]\n"
        );
        let e = err(&gen(&body, small));
        assert_eq!(e.field, "body[0].radius", "{e}");
        assert!(
            e.message.contains("holds the whole region of generator[0]"),
            "{e}"
        );
        let beside = "{ kind = \"box\", min = [0.021, -0.01, -0.02], max = [0.04, 0.01, 0.02] }";
        assert!(ok(&gen(&body, beside)).bodies.len() > 1);
    }
}

// ---------------------------------------------------------------------------------------
// Meshes

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/scenes")
}

#[test]
fn mesh_boundaries_load() {
    let s = scene::load(&fixtures().join("mesh_scene.toml")).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(s.name, "mesh_scene");
    let BoundaryShape::Mesh {
        source,
        vertices,
        triangles,
    } = &s.boundaries[0].shape
    else {
        panic!("not a mesh")
    };
    assert_eq!(source, &fixtures().join("tetra.obj"));
    assert_eq!(vertices.len(), 4);
    assert_eq!(triangles.len(), 4);
    assert!(vertices.contains(&[2.0, 0.0, 0.0]), "scaled: {vertices:?}");
    // First face `f 1 3 2` of the file, whatever the vertex numbering.
    let t = triangles[0].map(|i| vertices[i as usize]);
    assert_eq!(t, [[0.0, 0.0, 0.0], [0.0, 2.0, 0.0], [2.0, 0.0, 0.0]]);
    let BoundaryShape::Mesh {
        vertices,
        triangles,
        ..
    } = &s.boundaries[1].shape
    else {
        panic!("not a mesh")
    };
    assert_eq!(vertices.len(), 4);
    assert_eq!(triangles.len(), 2);
    assert_eq!(s.boundaries[1].position, [0.0, 0.0, -0.1]);
}

fn mesh_err(file: &str) -> SceneError {
    let text = format!("{BASE}{SPHERE}[[boundary]]\nkind = \"mesh\"\nfile = \"{file}\"\n");
    let scene_file = fixtures().join("inline.toml");
    scene::parse_str(&text, &scene_file).unwrap_err()
}

#[test]
fn mesh_errors() {
    let e = mesh_err("nope.obj");
    assert_eq!((e.field.as_str(), e.line), ("boundary[0].file", Some(14)));
    assert!(
        e.message.contains("mesh file")
            && e.message.contains("nope.obj")
            && e.message.contains("not found"),
        "{e}"
    );
    for bad in ["broken.obj", "broken.stl"] {
        let e = mesh_err(bad);
        assert_eq!(
            (e.field.as_str(), e.line),
            ("boundary[0].file", Some(14)),
            "{e}"
        );
        assert!(e.message.contains(bad), "{e}");
        assert!(
            e.message.contains("cannot load mesh file") || e.message.contains("no triangles"),
            "{e}"
        );
    }
    let e = mesh_err("mesh_scene.toml");
    assert!(e.message.contains("unsupported mesh format"), "{e}");
}

#[test]
fn repose_angle_measure_parses_and_bad_fields_are_named() {
    use bristlecone::measure::HeapAxis;
    let m = |extra: &str| {
        base_with(&format!(
            "{SPHERE}\n[[measure]]\nname = \"heap\"\nkind = \"repose_angle\"\n{extra}"
        ))
    };
    let s = ok(&m(""));
    assert_eq!(
        s.measures[0].kind,
        scene::MeasureKind::ReposeAngle {
            axis: HeapAxis::Radial,
            centre: None,
            flank: None
        }
    );
    let s = ok(&m(
        "axis = \"x\"\npoint = [0.1, 0.2, 0.0]\nrange = [0.01, 0.05]\n",
    ));
    assert_eq!(
        s.measures[0].kind,
        scene::MeasureKind::ReposeAngle {
            axis: HeapAxis::X,
            centre: Some([0.1, 0.2]),
            flank: Some([0.01, 0.05])
        }
    );
    // Lines: BASE 1–8, SPHERE 9–11, blank 12, [[measure]] 13–15, the field on 16.
    check(
        &err(&m("axis = \"z\"\n")),
        "measure[0].axis",
        Some(16),
        "unknown axis",
    );
    check(
        &err(&m("range = [0.05, 0.01]\n")),
        "measure[0].range",
        Some(16),
        "low < high",
    );
    check(&err(&m("bins = 4\n")), "measure[0].bins", Some(16), "");
}

#[test]
fn rolling_and_spinning_friction_parse_and_bad_values_name_the_field() {
    // Lines: BASE 1–8 ([[material]] on 5), the new field on line 9.
    let with = |extra: &str| format!("{BASE}{extra}\n{SPHERE}");
    let s = ok(&with("rolling_friction = 0.1\nspinning_friction = 0.05"));
    assert_eq!(s.materials[0].rolling_friction, 0.1);
    assert_eq!(s.materials[0].spinning_friction, 0.05);
    let s = ok(&with(""));
    assert_eq!(s.materials[0].rolling_friction, 0.0);
    assert_eq!(s.materials[0].spinning_friction, 0.0);
    check(
        &err(&with("rolling_friction = 1.5")),
        "material[0].rolling_friction",
        Some(9),
        "at most 1",
    );
    check(
        &err(&with("spinning_friction = -0.1")),
        "material[0].spinning_friction",
        Some(9),
        "",
    );
    // The Lemke path has no rows for them: refused, not ignored.
    let lemke = format!(
        "{}\n[solver]\nkind = \"lemke\"\n",
        with("rolling_friction = 0.1")
    );
    check(
        &err(&lemke),
        "material[0].rolling_friction",
        Some(9),
        "GPU solvers only",
    );
}

#[test]
fn gauss_seidel_is_read_with_its_omega_and_takes_rolling_rows_and_patch_models() {
    let with = |extra: &str| format!("{BASE}{extra}\n{SPHERE}");
    let gs = |material: &str, solver: &str| {
        format!(
            "{}\n[solver]\nkind = \"gauss_seidel\"\n{solver}\n",
            with(material)
        )
    };
    let s = ok(&gs("", ""));
    assert_eq!(s.solver.kind, SolverKind::GaussSeidel);
    assert_eq!(s.solver.omega, 1.0, "its own default ω");
    assert_eq!(ok(&gs("", "omega = 1.5")).solver.omega, 1.5);
    let text = gs("", "omega = 2.0");
    let line = text.lines().position(|l| l == "omega = 2.0").map(|k| k + 1);
    check(&err(&text), "solver.omega", line, "below 2");
    // Rolling and spinning rows and patch blocks have their block steps.
    let s = ok(&gs("rolling_friction = 0.1\nspinning_friction = 0.05", ""));
    assert_eq!(s.materials[0].rolling_friction, 0.1);
    let patch = "model = { kind = \"lugre_patch\", sigma0 = 1e5, sigma1 = 300.0, sigma2 = 0.0, \
                 mu_static = 0.6, v_stribeck = 1e-3 }";
    let boxed = format!(
        "{BASE}{patch}\n[[body]]\nshape = \"box\"\nhalf_extents = [0.01, 0.01, 0.01]\n\
         position = [0.0, 0.0, 0.1]\n[solver]\nkind = \"gauss_seidel\"\n"
    );
    let s = ok(&boxed);
    assert_eq!(s.solver.kind, SolverKind::GaussSeidel);
    assert!(matches!(
        s.materials[0].model,
        FrictionModel::LuGrePatch { .. }
    ));
}

// ---------------------------------------------------------------------------------------
// Generators of non-sphere shapes (`template`)

/// A random fill of `count` `template` grains, bounding radii drawn in [0.01, 0.02].
fn template_fill(template: &str, count: usize) -> String {
    format!(
        "{BASE}[[generator]]\nkind = \"random_fill\"\ncount = {count}\nradius = {{ min = 0.01, max = 0.02 }}\nseed = 5\nregion = {BOX}\ntemplate = {template}\n"
    )
}

fn template_scene(template: &str) -> String {
    template_fill(template, 40)
}

/// Scale of a generated shape against its template, from a size field.
fn scale_of(shape: &BodyShape, template: &BodyShape) -> f64 {
    shape.bounding_radius() / template.bounding_radius()
}

#[test]
fn generator_templates_fill_regions_with_every_shape_at_random_orientations() {
    // The template's fields: as an inline table, and (one per line) as a `[[body]]`.
    let templates: [&[&str]; 5] = [
        &["shape = \"box\"", "half_extents = [0.03, 0.02, 0.01]"],
        &["shape = \"capsule\"", "radius = 0.01", "half_length = 0.03"],
        &[
            "shape = \"cylinder\"",
            "radius = 0.02",
            "half_length = 0.01",
        ],
        &[
            "shape = \"convex\"",
            "points = [[0, 0, 0], [0.04, 0, 0], [0, 0.03, 0], [0, 0, 0.02]]",
        ],
        &[
            "shape = \"clump\"",
            "spheres = [[-0.01, 0, 0, 0.01], [0.01, 0, 0, 0.01]]",
        ],
    ];
    let density = 2500.0;
    for fields in templates {
        let t = format!("{{ {} }}", fields.join(", "));
        let n = 40;
        let text = template_fill(&t, n);
        let s = ok(&text);
        assert_eq!(s.bodies, ok(&text).bodies, "{t}: not deterministic");
        assert_eq!(s.bodies.len(), n, "{t}");
        let body = format!(
            "[[body]]\nposition = [0.0, 0.0, 1.0]\n{}\n",
            fields.join("\n")
        );
        let one = ok(&base_with(&body));
        let tmpl = &one.bodies[0].shape;
        let mut radii = Vec::new();
        for b in &s.bodies {
            let r = b.shape.bounding_radius();
            assert!(
                (0.01..=0.02).contains(&(r * (1.0 - 1e-12))),
                "{t}: radius {r}"
            );
            radii.push(r);
            // Same shape up to scale: the mass is the template's times scale³.
            let k = scale_of(&b.shape, tmpl);
            let (m, i) = b.shape.mass_properties(density);
            let (m0, i0) = tmpl.mass_properties(density);
            assert!((m / (m0 * k.powi(3)) - 1.0).abs() < 1e-12, "{t}: mass");
            assert!((b.mass / m - 1.0).abs() < 1e-12, "{t}: body mass");
            for a in 0..3 {
                assert!(
                    (i[a] / (i0[a] * k.powi(5)) - 1.0).abs() < 1e-9,
                    "{t}: inertia"
                );
            }
            let q = b.orientation;
            let n = q.iter().map(|x| x * x).sum::<f64>().sqrt();
            assert!((n - 1.0).abs() < 1e-12, "{t}: orientation not unit");
        }
        assert!(
            std::mem::discriminant(&s.bodies[0].shape) == std::mem::discriminant(tmpl),
            "{t}: wrong kind"
        );
        let qs: Vec<[f64; 4]> = s.bodies.iter().map(|b| b.orientation).collect();
        assert!(
            qs.windows(2).all(|w| w[0] != w[1]),
            "{t}: orientations repeat"
        );
        // Orientations are spread: the body z axes point into both hemispheres.
        let up = qs
            .iter()
            .filter(|q| 1.0 - 2.0 * (q[0] * q[0] + q[1] * q[1]) > 0.0)
            .count();
        assert!(
            (8..=32).contains(&up),
            "{t}: {up} of 40 body z axes point up"
        );
        // Bounding spheres never overlap (so no two grains do).
        for i in 0..s.bodies.len() {
            for j in i + 1..s.bodies.len() {
                let d = dist(s.bodies[i].position, s.bodies[j].position);
                assert!(
                    d >= (radii[i] + radii[j]) * (1.0 - 1e-9),
                    "{t}: {i} and {j} overlap"
                );
            }
        }
    }
}

#[test]
fn generator_template_errors_name_the_field() {
    let e = err(&template_scene(
        "{ shape = \"box\", half_extents = [0.03, 0.0, 0.01] }",
    ));
    check(
        &e,
        "generator[0].template.half_extents",
        Some(15),
        "every half extent must be positive",
    );
    let e = err(&template_scene("{ shape = \"box\", radius = 0.01 }"));
    check(
        &e,
        "generator[0].template.radius",
        Some(15),
        "does not apply",
    );
    let e = err(&template_scene("{ shape = \"torus\", radius = 0.01 }"));
    check(
        &e,
        "generator[0].template.shape",
        Some(15),
        "unknown shape kind `torus`",
    );
    let e = err(&template_scene(
        "{ shape = \"convex\", points = [[0, 0, 0], [1, 0, 0], [0, 1, 0]] }",
    ));
    assert_eq!(e.field, "generator[0].template.points", "{e}");
    let e = err(&format!(
        "{}spheres = [[0.0, 0.0, 0.0, 0.01]]\n",
        template_scene("{ shape = \"box\", half_extents = [0.01, 0.01, 0.01] }")
    ));
    check(&e, "generator[0].template", Some(15), "not both");
}

/// `[solver] coarse_slab`: read for `gauss_seidel` (and handed to the engine), refused with
/// file, line and field for the other kinds and when not positive.
#[test]
fn coarse_slab_is_read_for_gauss_seidel_only() {
    let parse = |solver: &str| {
        let text = format!(
            "[simulation]\ndt = 0.001\nsteps = 1\n\n[[material]]\nname = \"g\"\n\
             density = 2500.0\nfriction = 0.5\n\n[[body]]\nradius = 0.01\n\
             position = [0.0, 0.0, 0.01]\n\n[solver]\n{solver}"
        );
        bristlecone::scene::parse_str(&text, std::path::Path::new("t.toml"))
    };
    let s = parse("kind = \"gauss_seidel\"\ncoarse_slab = 0.04\n").unwrap();
    assert_eq!(s.solver.coarse_slab, 0.04);
    assert_eq!(bristlecone::setup::solver_settings(&s).coarse_slab, 0.04);
    assert_eq!(
        parse("kind = \"gauss_seidel\"\n")
            .unwrap()
            .solver
            .coarse_slab,
        0.0
    );
    for (solver, line, says) in [
        ("coarse_slab = 0.04\n", 15, "gauss_seidel"),
        (
            "kind = \"jacobi\"\ncoarse_slab = 0.04\n",
            16,
            "gauss_seidel",
        ),
        (
            "kind = \"lemke\"\ncoarse_slab = 0.04\n",
            16,
            "does not apply",
        ),
        (
            "kind = \"gauss_seidel\"\ncoarse_slab = -1.0\n",
            16,
            "positive",
        ),
    ] {
        let e = parse(solver).unwrap_err().to_string();
        assert!(
            e.contains(&format!("t.toml:{line}"))
                && e.contains("solver.coarse_slab")
                && e.contains(says),
            "{solver}: {e}"
        );
    }
}
