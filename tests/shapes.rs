//! Box bodies: scene format and mass properties, the GPU box narrow phase against its f64
//! twin (`reference::boxes` via `reference::collide::detect`), and box physics (incline,
//! stack) against analytic answers.
//!
//! Tolerances of the GPU = twin comparison (f32 kernels vs f64 twin on the same f32 inputs):
//! coordinates are O(1) m here, and a box's vertices pass through an f32 rotation matrix
//! (from the quaternion) and a clip in reference-face coordinates: each step costs a few
//! ulps, so gaps and points agree to 2e-5 m and normals to 1e-4. A pair whose contact
//! *set* differs (an f32/f64 decision flipped: a separating axis within the 1e-3 bias of
//! another, a clipped point at the envelope, a corner tie) is counted as ambiguous; at most
//! 2 % of the contacting pairs may be, and never a pair of a touching or parallel-face case
//! built to have a clear answer.

use crate::common::*;
use bristlecone::bodies::*;
use bristlecone::collide::{BoundaryShape, CollideSettings};
use bristlecone::gpu::shared_context;
use bristlecone::reference::boxes::box_mass;
use bristlecone::reference::collide::detect;
use bristlecone::scene::{parse_str, BodyShape};
use bristlecone::setup;
use bristlecone::step::Simulation;
use glam::{DQuat, DVec3};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::path::Path;

// ---------------------------------------------------------------- scene format, mass

const HEAD: &str = r#"
[simulation]
dt = 1e-3
steps = 10
[[material]]
name = "m"
density = 2000.0
friction = 0.5
"#;

fn scene(body: &str) -> Result<bristlecone::scene::Scene, bristlecone::scene::SceneError> {
    parse_str(&format!("{HEAD}{body}"), Path::new("t.toml"))
}

#[test]
fn box_mass_properties_are_analytic() {
    let s = scene(
        r#"
[[body]]
shape = "box"
half_extents = [0.1, 0.2, 0.3]
position = [0.0, 0.0, 1.0]
material = "m"
"#,
    )
    .unwrap();
    let b = &s.bodies[0];
    assert_eq!(
        b.shape,
        BodyShape::Box {
            half_extents: [0.1, 0.2, 0.3]
        }
    );
    // m = ρ·abc (full sides a, b, c), I_x = m(b² + c²)/12, …
    let (a, bb, c) = (0.2f64, 0.4f64, 0.6f64);
    let m = 2000.0 * a * bb * c;
    let want = [
        m * (bb * bb + c * c) / 12.0,
        m * (a * a + c * c) / 12.0,
        m * (a * a + bb * bb) / 12.0,
    ];
    assert!((b.mass - m).abs() <= 1e-9 * m, "{} vs {m}", b.mass);
    for (got, want) in b.inertia.iter().zip(want) {
        assert!((got - want).abs() <= 1e-9 * want, "{got} vs {want}");
    }
    assert_eq!(box_mass(2000.0, [0.1, 0.2, 0.3]).0, b.mass);
    // Explicit mass scales the moments; explicit inertia is taken as given.
    let s = scene(
        r#"
[[body]]
shape = "box"
half_extents = [0.1, 0.2, 0.3]
position = [0.0, 0.0, 1.0]
material = "m"
mass = 2.0
"#,
    )
    .unwrap();
    assert_eq!(s.bodies[0].mass, 2.0);
    assert!((s.bodies[0].inertia[0] - 2.0 * (bb * bb + c * c) / 12.0).abs() < 1e-12);
    let s = scene(
        r#"
[[body]]
shape = "box"
half_extents = [0.1, 0.2, 0.3]
position = [0.0, 0.0, 1.0]
material = "m"
inertia = [1.0, 2.0, 2.5]
"#,
    )
    .unwrap();
    assert_eq!(s.bodies[0].inertia, [1.0, 2.0, 2.5]);
}

#[test]
fn box_scene_errors_name_line_and_field() {
    let e = scene(
        r#"
[[body]]
shape = "box"
half_extents = [0.1, 0.0, 0.3]
position = [0.0, 0.0, 1.0]
material = "m"
"#,
    )
    .unwrap_err()
    .to_string();
    assert!(
        e.starts_with("t.toml:12:") && e.contains("body[0].half_extents") && e.contains("positive"),
        "{e}"
    );
    let e = scene(
        r#"
[[body]]
shape = "box"
radius = 0.1
position = [0.0, 0.0, 1.0]
material = "m"
"#,
    )
    .unwrap_err()
    .to_string();
    assert!(
        e.contains("body[0].radius") && e.contains("does not apply"),
        "{e}"
    );
    let e = scene(
        r#"
[[body]]
shape = "box"
position = [0.0, 0.0, 1.0]
material = "m"
"#,
    )
    .unwrap_err()
    .to_string();
    assert!(e.contains("missing field `half_extents`"), "{e}");
    // Every boundary kind meets boxes: a solid cylinder is accepted.
    let s = scene(
        r#"
[[body]]
shape = "box"
half_extents = [0.1, 0.1, 0.1]
position = [0.0, 0.0, 1.0]
material = "m"
[[boundary]]
kind = "cylinder"
radius = 0.1
height = 0.2
position = [3.0, 0.0, 0.0]
"#,
    )
    .unwrap();
    assert_eq!(s.boundaries.len(), 1);
}

// ---------------------------------------------------------------- GPU = twin

const ENV: f32 = 0.01;

fn box_body(p: [f32; 3], q: DQuat, index: u32, bound: f32) -> BodyInit {
    BodyInit {
        orientation: q.normalize().as_quat().to_array(),
        shape: SHAPE_BOX,
        shape_index: index,
        radius: bound,
        ..BodyInit::sphere(p, 1.0, 1000.0)
    }
}

fn rand_q(rng: &mut ChaCha8Rng) -> DQuat {
    DQuat::from_xyzw(
        rng.random_range(-1.0..1.0),
        rng.random_range(-1.0..1.0),
        rng.random_range(-1.0..1.0),
        rng.random_range(-1.0..1.0),
    )
    .normalize()
}

/// A world: four boundaries (plane, box container, solid box, cylinder container), then
/// grains. Returns (state, shapes).
fn world(grains: &[(DVec3, DQuat, Option<[f32; 3]>, f32)]) -> (BodyState, Vec<BoundaryShape>) {
    let mut shapes = vec![
        BoundaryShape::Plane,
        BoundaryShape::BoxContainer {
            half_extents: [1.5, 1.5, 1.5],
            open_top: false,
        },
        BoundaryShape::SolidBox {
            half_extents: [0.3, 0.2, 0.25],
        },
        BoundaryShape::CylinderContainer {
            radius: 1.6,
            height: 3.0,
            open_top: false,
        },
    ];
    let tilt = DQuat::from_rotation_y(0.05).as_quat().to_array();
    let mut inits = vec![
        BodyInit {
            orientation: tilt,
            ..BodyInit::fixed(SHAPE_PLANE, 0, [0.0, 0.0, -1.2], 0.0)
        },
        BodyInit::fixed(SHAPE_BOX_CONTAINER, 1, [0.0, 0.0, 0.0], 2.6),
        BodyInit {
            orientation: DQuat::from_rotation_z(0.3).as_quat().to_array(),
            ..BodyInit::fixed(SHAPE_SOLID_BOX, 2, [0.0, 0.0, 0.0], 0.44)
        },
        BodyInit::fixed(SHAPE_CYLINDER_CONTAINER, 3, [0.0, 0.0, -1.4], 3.4),
    ];
    for &(c, q, h, r) in grains {
        let p = [c.x as f32, c.y as f32, c.z as f32];
        match h {
            Some(h) => {
                shapes.push(BoundaryShape::GrainBox { half_extents: h });
                let bound = (h[0] * h[0] + h[1] * h[1] + h[2] * h[2]).sqrt();
                inits.push(box_body(p, q, shapes.len() as u32 - 1, bound));
            }
            None => inits.push(BodyInit::sphere(p, r, 1000.0)),
        }
    }
    (BodyState::from_inits(&inits), shapes)
}

fn settings() -> CollideSettings {
    CollideSettings {
        envelope: ENV,
        friction: vec![0.5],
    }
}

/// Compares per pair (`common::compare_contact_sets`, normals to 1e-4); returns (pairs
/// compared, the ambiguous pairs).
fn compare(state: &BodyState, shapes: &[BoundaryShape]) -> (usize, Vec<(u32, u32)>) {
    let c = compare_contact_sets(state, shapes, &settings(), |_| 1e-4);
    (c.pairs.len(), c.ambiguous)
}

/// Random boxes and spheres at random orientations, packed densely enough that many
/// bounding spheres overlap (deep and shallow contacts, edge–edge, vertex–face).
#[test]
fn gpu_box_contacts_match_the_twin_on_random_configurations() {
    let mut rng = ChaCha8Rng::seed_from_u64(10);
    let mut total = 0;
    let mut amb = 0;
    for _round in 0..3 {
        let mut grains = Vec::new();
        for _ in 0..100 {
            let c = DVec3::new(
                rng.random_range(-0.9..0.9),
                rng.random_range(-0.9..0.9),
                rng.random_range(-0.9..0.9),
            );
            if rng.random_bool(0.7) {
                let h = [
                    rng.random_range(0.05..0.2f32),
                    rng.random_range(0.05..0.2f32),
                    rng.random_range(0.05..0.2f32),
                ];
                grains.push((c, rand_q(&mut rng), Some(h), 0.0));
            } else {
                grains.push((c, DQuat::IDENTITY, None, rng.random_range(0.05..0.15f32)));
            }
        }
        let (state, shapes) = world(&grains);
        let (n, a) = compare(&state, &shapes);
        total += n;
        amb += a.len();
    }
    eprintln!("random boxes: {amb} ambiguous of {total} pairs");
    assert!(
        total > 150,
        "too few contacting pairs to mean anything: {total}"
    );
    assert!(
        amb as f64 <= 0.02 * total as f64,
        "{amb} of {total} pairs differ in their contact sets"
    );
}

/// Built cases with a clear answer: a box resting exactly on another (touching, parallel
/// faces: 4 points at gap 0), a deep overlap with parallel faces, a box resting on the
/// plane and on the container floor, a rotated box on a box (clipped octagon → 4 corners),
/// a crossed edge–edge pair, and a sphere on a box face. No pair may be ambiguous.
#[test]
fn gpu_box_contacts_match_the_twin_on_touching_deep_and_parallel_cases() {
    let h = Some([0.1f32, 0.1, 0.1]);
    let id = DQuat::IDENTITY;
    let grains = vec![
        // Touching stack (gap 0), offset in x: parallel faces, clipped to the overlap.
        (DVec3::new(0.8, 0.8, 0.2), id, h, 0.0),
        (DVec3::new(0.83, 0.8, 0.4), id, h, 0.0),
        // Deep parallel overlap (3 cm).
        (DVec3::new(-0.8, 0.8, 0.2), id, h, 0.0),
        (DVec3::new(-0.8, 0.81, 0.37), id, h, 0.0),
        // Rotated 0.5 rad about z on a box: octagon, 4 corners kept.
        (DVec3::new(0.8, -0.8, 0.2), id, h, 0.0),
        (
            DVec3::new(0.8, -0.8, 0.399),
            DQuat::from_rotation_z(0.5),
            h,
            0.0,
        ),
        // Edge on edge: crossed, each rotated 45° about a horizontal axis.
        (
            DVec3::new(-0.8, -0.8, 0.2),
            DQuat::from_rotation_x(std::f64::consts::FRAC_PI_4),
            h,
            0.0,
        ),
        (
            DVec3::new(-0.8, -0.8, 0.2 + 0.2 * std::f64::consts::SQRT_2 - 0.004),
            DQuat::from_rotation_y(std::f64::consts::FRAC_PI_4),
            h,
            0.0,
        ),
        // Resting on the container floor (z = -1.5): 4 vertices at gap 0.001.
        (DVec3::new(0.0, 0.9, -1.399), id, h, 0.0),
        // Sphere on a box's top face.
        (DVec3::new(0.0, -0.9, 0.0), id, h, 0.0),
        (DVec3::new(0.0, -0.9, 0.199), id, None, 0.1),
    ];
    let (state, shapes) = world(&grains);
    let twin = detect(&state, &shapes, &settings());
    let (n, amb) = compare(&state, &shapes);
    assert!(amb.is_empty(), "ambiguous pairs {amb:?}");
    let count = |a: u32, b: u32| twin.iter().filter(|c| c.a == a && c.b == b).count();
    let nb = 4;
    assert_eq!(count(nb, nb + 1), 4, "touching stack");
    assert_eq!(count(nb + 2, nb + 3), 4, "deep parallel");
    assert_eq!(count(nb + 4, nb + 5), 4, "rotated: octagon reduced to 4");
    assert_eq!(count(nb + 6, nb + 7), 1, "edge–edge");
    assert_eq!(count(1, nb + 8), 4, "container floor");
    assert_eq!(count(nb + 9, nb + 10), 1, "sphere on box");
    for c in twin.iter().filter(|c| c.a == nb + 2) {
        assert!((c.gap + 0.03).abs() < 1e-6, "deep gap {}", c.gap);
        assert!((c.normal - DVec3::Z).length() < 1e-9);
    }
    let ee = twin.iter().find(|c| c.a == nb + 6).unwrap();
    assert!((ee.gap + 0.004).abs() < 1e-6, "edge–edge gap {}", ee.gap);
    assert!(n >= 6);
}

// ---------------------------------------------------------------- physics

fn run_box_scene(text: &str) -> (Simulation, bristlecone::scene::Scene) {
    let scene = parse_str(text, Path::new("box.toml")).unwrap();
    let state = setup::build_bodies(&scene);
    let sim = Simulation::new(shared_context(), &state, setup::step_settings(&scene)).unwrap();
    (sim, scene)
}

/// Box (10 × 10 × 5 cm, μ = 0.3) on a horizontal plane under gravity tilted by θ (the
/// incline's frame), exact Coulomb cone. Resting flat on 4 contacts from the start.
fn incline(theta: f64, seconds: f64) -> (DVec3, f64) {
    let text = format!(
        r#"{header}
[[material]]
name = "m"
density = 1000.0
friction = 0.3
[[body]]
shape = "box"
half_extents = [0.05, 0.05, 0.025]
position = [0.0, 0.0, 0.025]
material = "m"
[[boundary]]
kind = "plane"
point = [0.0, 0.0, 0.0]
normal = [0.0, 0.0, 1.0]
material = "m"
"#,
        header = incline_header(theta, seconds)
    );
    let (mut sim, scene) = run_box_scene(&text);
    sim.advance(scene.sim.steps as u32, 0).unwrap();
    let st = sim.read_state().unwrap();
    let v = d3(st.vel[1]);
    let q = st.rot[1];
    let angle = 2.0 * DVec3::new(q[0] as f64, q[1] as f64, q[2] as f64).length();
    (v, angle)
}

/// Sticks for tanθ < μ; slides with a = g(sinθ − μ cosθ) (1 %) above, without rocking
/// (rotation < 1e-4 rad). Budget: 2 × 200 steps of one box.
#[test]
fn box_on_incline_sticks_below_and_slides_above_the_friction_angle() {
    let g = 9.81;
    let mu: f64 = 0.3;
    let below = mu.atan() - 0.05;
    let (v, rot) = incline(below, 0.2);
    assert!(v.length() < 1e-3, "sticks: v = {v}");
    assert!(rot < 1e-4, "rotation {rot}");
    let above = mu.atan() + 0.15;
    let t = 0.2;
    let (v, rot) = incline(above, t);
    let want = g * (above.sin() - mu * above.cos()) * t;
    eprintln!(
        "incline: v = {:.5} m/s vs {want:.5}, v_z = {:.2e}, rotation {rot:.2e} rad",
        v.x, v.z
    );
    assert!(
        (v.x - want).abs() <= 0.01 * want,
        "slides: v = {} vs {want}",
        v.x
    );
    assert!(v.z.abs() < 1e-3 * want, "lifts: v_z = {}", v.z);
    assert!(rot < 1e-4, "rotation {rot}");
}

const GROUND: &str = r#"
[simulation]
dt = 1e-3
duration = DURATION
[solver]
max_iterations = 30
tolerance = 1e-7
[[material]]
name = "m"
density = 1000.0
friction = 0.5
[[boundary]]
kind = "plane"
point = [0.0, 0.0, 0.0]
normal = [0.0, 0.0, 1.0]
material = "m"
"#;

fn box_at(h: [f64; 3], p: [f64; 3]) -> String {
    format!(
        "[[body]]\nshape = \"box\"\nhalf_extents = [{}, {}, {}]\nposition = [{}, {}, {}]\nmaterial = \"m\"\n",
        h[0], h[1], h[2], p[0], p[1], p[2]
    )
}

/// Largest sideways (x, y) and downward displacement of bodies 1.. after the run.
/// `GROUND` asks 30 solver iterations, enough here (stack drift 7.8e-6 m, wall 5.4e-6 m,
/// 1/13 of the bound) and a third of the cost of 100; with 3 both tests fail (drift
/// 1.4e-2 m and 3.5e-3 m).
fn settle(text: &str) -> (f64, f64) {
    let (mut sim, scene) = run_box_scene(text);
    let p0 = sim.read_state().unwrap().pos;
    sim.advance(scene.sim.steps as u32, 0).unwrap();
    let p1 = sim.read_state().unwrap().pos;
    let (mut side, mut sink) = (0.0f64, 0.0f64);
    for (a, b) in p0.iter().zip(&p1).skip(1) {
        let d = d3(*b) - d3(*a);
        side = side.max(d.truncate().length());
        sink = sink.max(-d.z);
    }
    (side, sink)
}

/// A stack of 10 cubes (10 cm, 1e-4 m apart, offset and turned a little) stands: no box drifts sideways more than 1e-3
/// of its size, none sinks more than the closed gaps plus 1 mm. Why it can fail: the
/// column's contact forces grow 1…10 × the top box's weight, and the solver must carry
/// them through 9 face–face manifolds; with too few iterations or a manifold that rocks
/// (points that swap between steps), the column sinks and the top boxes slide or tip.
/// CI runs 0.2 s (200 steps on lavapipe); the 5 s run is `cargo run --release --example box_stack` (book: Shapes).
#[test]
fn stack_of_ten_boxes_stands() {
    let n = 10;
    let mut text = GROUND.replace("DURATION", "0.2");
    for k in 0..n {
        // Offsets of ±1 mm and yaws of up to 0.09 rad (a stack as a hand builds it: the
        // manifolds are not aligned, so a wrong one pushes sideways).
        let (x, y) = (((k % 3) as f64 - 1.0) * 1e-3, ((k % 2) as f64 - 0.5) * 2e-3);
        let z = 0.05 + 0.1 * k as f64 + 1e-4 * k as f64;
        text += &box_at([0.05; 3], [x, y, z]);
        text += &format!(
            "orientation = [0.0, 0.0, {}, {}]\n",
            (0.005 * k as f64).sin(),
            (0.005 * k as f64).cos()
        );
    }
    let (side, sink) = settle(&text);
    eprintln!("stack of {n}: drift {side:.2e} m, sink {sink:.2e} m");
    assert!(side < 1e-4, "a box drifted {side} m sideways");
    assert!(sink < 1e-3 + 1e-4 * n as f64, "a box sank {sink} m");
}

/// A 10 × 10 wall of bricks (20 × 10 × 10 cm, 2 mm joints) in running bond (rows offset
/// by a quarter brick, so every brick above the first row rests on two below and each
/// row's end brick keeps its centre over its support) stands: no brick drifts sideways
/// more than 1e-3 of its height, none sinks more than 1 mm + the closed gaps. Fails when
/// the manifolds spanning two bricks below are lost or the 100-body system is not carried
/// (the wall sags). CI runs 0.1 s (100 steps).
#[test]
fn wall_of_bricks_stands() {
    let mut text = GROUND.replace("DURATION", "0.1");
    let h = [0.1, 0.05, 0.05];
    for row in 0..10 {
        let shift = if row % 2 == 1 { 0.05 } else { 0.0 };
        for i in 0..10 {
            let x = 0.202 * i as f64 + shift;
            let z = 0.05 + 0.1 * row as f64 + 1e-4 * row as f64;
            text += &box_at(h, [x, 0.0, z]);
        }
    }
    let (side, sink) = settle(&text);
    eprintln!("wall 10 × 10: drift {side:.2e} m, sink {sink:.2e} m");
    assert!(side < 1e-4, "a brick drifted {side} m sideways");
    assert!(sink < 1e-3 + 1e-3, "a brick sank {sink} m");
}
