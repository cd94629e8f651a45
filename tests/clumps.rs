//! Clumps (rigid aggregates of spheres): mass properties against analytic values, scene
//! validation, GPU = f64 twin contacts on a random clump configuration, and physics (a
//! dumbbell at rest on a plane, a clump sliding on an incline).

use crate::common::*;
use bristlecone::clump::{lens_volume, ClumpError, ClumpMass, INERTIA_REL_ERROR, VOLUME_REL_ERROR};
use std::f64::consts::PI;

fn ball(r: f64) -> f64 {
    4.0 / 3.0 * PI * r * r * r
}

fn rel(a: f64, b: f64) -> f64 {
    (a - b).abs() / b.abs()
}

#[test]
fn single_sphere_clump_is_exact() {
    let m = ClumpMass::new(&[[0.3, -0.2, 0.5, 0.7]]).unwrap();
    let v = ball(0.7);
    assert!(m.exact);
    assert!(rel(m.volume, v) < 1e-12);
    for i in m.principal {
        assert!(rel(i, 0.4 * v * 0.49) < 1e-9, "{i}");
    }
    assert!((m.com - glam::DVec3::new(0.3, -0.2, 0.5)).length() < 1e-12);
    assert!(m.members[0][..3].iter().all(|x| x.abs() < 1e-12));
}

#[test]
fn touching_pair_by_parallel_axis() {
    // Radii 1 and 0.5 touching along a tilted axis: masses, centre of mass, moments.
    let (r1, r2) = (1.0, 0.5);
    let dir = glam::DVec3::new(1.0, 2.0, -0.5).normalize();
    let c2 = dir * (r1 + r2);
    let m = ClumpMass::new(&[[0.0, 0.0, 0.0, r1], [c2.x, c2.y, c2.z, r2]]).unwrap();
    assert!(m.exact);
    let (v1, v2) = (ball(r1), ball(r2));
    let v = v1 + v2;
    assert!(rel(m.volume, v) < 1e-12);
    let com = c2 * (v2 / v);
    assert!((m.com - com).length() < 1e-12);
    // Along the axis: the spheres' own moments; across: plus m d² about the centre of mass.
    let d1 = com.length();
    let d2 = (c2 - com).length();
    let axial = 0.4 * (v1 * r1 * r1 + v2 * r2 * r2);
    let across = axial + v1 * d1 * d1 + v2 * d2 * d2;
    let mut want = [axial, across, across];
    want.sort_by(f64::total_cmp);
    let mut got = m.principal;
    got.sort_by(f64::total_cmp);
    for k in 0..3 {
        assert!(rel(got[k], want[k]) < 1e-9, "{got:?} vs {want:?}");
    }
    // The body frame's axis of smallest moment is the line of centres.
    let k = (0..3)
        .min_by(|&a, &b| m.principal[a].total_cmp(&m.principal[b]))
        .unwrap();
    let axis = m.axes * glam::DVec3::AXES[k];
    assert!(axis.dot(dir).abs() > 1.0 - 1e-9);
}

/// Overlapping pairs: volume against the lens formula, moments against the two caps
/// (inclusion–exclusion of balls and lens by the same column rule at a 4× finer grid is not
/// independent, so the moments are checked by the axial moment, computed analytically).
#[test]
fn overlapping_pairs_within_the_stated_error() {
    let mut worst_v: f64 = 0.0;
    let mut worst_i: f64 = 0.0;
    for &(r1, r2, d) in &[
        (1.0, 1.0, 1.0),
        (1.0, 1.0, 1.9),
        (1.0, 0.6, 0.8),
        (1.0, 0.3, 1.1),
        (0.8, 0.5, 0.45),
    ] {
        let m = ClumpMass::new(&[[0.1, 0.2, 0.3, r1], [0.1 + d, 0.2, 0.3, r2]]).unwrap();
        assert!(!m.exact);
        let v = ball(r1) + ball(r2) - lens_volume(r1, r2, d);
        worst_v = worst_v.max(rel(m.volume, v));
        // Axial moment of the union: ∫ρ² over each ball minus over the lens, by caps.
        let ia = axial_union(r1, r2, d);
        let k = (0..3)
            .min_by(|&a, &b| m.principal[a].total_cmp(&m.principal[b]))
            .unwrap();
        worst_i = worst_i.max(rel(m.principal[k], ia));
    }
    println!("overlapping pairs: worst volume error {worst_v:.2e}, axial moment {worst_i:.2e}");
    assert!(worst_v < VOLUME_REL_ERROR, "{worst_v}");
    assert!(worst_i < INERTIA_REL_ERROR, "{worst_i}");
}

/// Axial moment (about the line of centres) of the union of two balls: each ball's
/// 0.4 V r² minus the lens's, the lens being two spherical caps whose axial moment is
/// π ∫ (r² − x²)² / 2 dx over the cap.
fn axial_union(r1: f64, r2: f64, d: f64) -> f64 {
    // Plane of intersection at x = a from centre 1.
    let a = (d * d + r1 * r1 - r2 * r2) / (2.0 * d);
    let cap = |r: f64, x0: f64| {
        // ∫_{x0}^{r} π/2 (r² − x²)² dx
        let f = |x: f64| r.powi(4) * x - 2.0 * r * r * x.powi(3) / 3.0 + x.powi(5) / 5.0;
        PI / 2.0 * (f(r) - f(x0))
    };
    let lens = cap(r1, a) + cap(r2, d - a);
    0.4 * ball(r1) * r1 * r1 + 0.4 * ball(r2) * r2 * r2 - lens
}

#[test]
fn invalid_clumps_are_refused() {
    assert_eq!(ClumpMass::new(&[]).unwrap_err(), ClumpError::Empty);
    assert_eq!(
        ClumpMass::new(&[[0.0, 0.0, 0.0, -1.0]]).unwrap_err(),
        ClumpError::BadSphere(0)
    );
    assert_eq!(
        ClumpMass::new(&[[0.0, 0.0, 0.0, 1.0], [2.01, 0.0, 0.0, 1.0]]).unwrap_err(),
        ClumpError::Disconnected(1)
    );
    // Connected through a middle member, in any order.
    assert!(ClumpMass::new(&[
        [0.0, 0.0, 0.0, 1.0],
        [4.0, 0.0, 0.0, 1.0],
        [2.0, 0.0, 0.0, 1.0]
    ])
    .is_ok());
}

// ---------------------------------------------------------------- scene format

use bristlecone::bodies::*;
use bristlecone::collide::{BoundaryShape, CollideSettings};
use bristlecone::gpu::shared_context;
use bristlecone::scene::{parse_str, BodyShape};
use bristlecone::setup;
use bristlecone::step::Simulation;
use glam::{DQuat, DVec3};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::path::Path;

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

fn scene_err(body: &str) -> String {
    scene(body).unwrap_err().to_string()
}

#[test]
fn clump_scene_errors_name_line_and_field() {
    let e = scene_err(
        r#"
[[body]]
shape = "clump"
spheres = [
  [0.0, 0.0, 0.0, 0.1],
  [0.1, 0.0, 0.0, -0.1],
]
position = [0.0, 0.0, 1.0]
"#,
    );
    assert!(
        e.starts_with("t.toml:14:") && e.contains("body[0].spheres[1]") && e.contains("positive"),
        "{e}"
    );
    let e = scene_err(
        r#"
[[body]]
shape = "clump"
spheres = [
  [0.0, 0.0, 0.0, 0.1],
  [0.15, 0.0, 0.0, 0.05],
  [0.5, 0.0, 0.0, 0.1],
]
position = [0.0, 0.0, 1.0]
"#,
    );
    assert!(
        e.starts_with("t.toml:15:") && e.contains("body[0].spheres[2]") && e.contains("connected"),
        "{e}"
    );
    let e = scene_err(
        r#"
[[body]]
shape = "clump"
spheres = []
position = [0.0, 0.0, 1.0]
"#,
    );
    assert!(
        e.contains("body[0].spheres") && e.contains("at least one"),
        "{e}"
    );
    let e = scene_err(
        r#"
[[body]]
shape = "clump"
radius = 0.1
spheres = [[0.0, 0.0, 0.0, 0.1]]
position = [0.0, 0.0, 1.0]
"#,
    );
    assert!(
        e.contains("body[0].radius") && e.contains("does not apply"),
        "{e}"
    );
    let e = scene_err(
        r#"
[[body]]
shape = "clump"
position = [0.0, 0.0, 1.0]
"#,
    );
    assert!(e.contains("missing field `spheres`"), "{e}");
    // Two clumps whose members overlap (bounding spheres overlap in any case).
    let e = scene_err(
        r#"
[[body]]
shape = "clump"
spheres = [[-0.1, 0.0, 0.0, 0.1], [0.1, 0.0, 0.0, 0.1]]
position = [0.0, 0.0, 1.0]
[[body]]
shape = "clump"
spheres = [[-0.1, 0.0, 0.0, 0.1], [0.1, 0.0, 0.0, 0.1]]
position = [0.0, 0.15, 1.0]
"#,
    );
    assert!(
        e.contains("body[1].position") && e.contains("overlaps"),
        "{e}"
    );
    // Crossed dumbbells whose bounding spheres overlap but whose members do not: accepted.
    scene(
        r#"
[[body]]
shape = "clump"
spheres = [[-0.1, 0.0, 0.0, 0.1], [0.1, 0.0, 0.0, 0.1]]
position = [0.0, 0.0, 1.0]
[[body]]
shape = "clump"
spheres = [[-0.1, 0.0, 0.0, 0.1], [0.1, 0.0, 0.0, 0.1]]
position = [0.0, 0.0, 1.21]
orientation = [0.0, 0.0, 0.7071067811865476, 0.7071067811865476]
"#,
    )
    .unwrap();
}

/// The body frame is the centre of mass with principal axes; the position names the frame
/// the spheres were written in; explicit mass and inertia override the computed ones.
#[test]
fn clump_body_frame_and_overrides() {
    let s = scene(
        r#"
[[body]]
shape = "clump"
spheres = [[0.0, 0.0, 0.0, 0.1], [0.0, 0.15, 0.0, 0.05]]
position = [1.0, 2.0, 3.0]
[[body]]
shape = "clump"
spheres = [[0.0, 0.0, 0.0, 0.1], [0.0, 0.15, 0.0, 0.05]]
position = [5.0, 2.0, 3.0]
mass = 2.0
inertia = [0.1, 0.2, 0.3]
"#,
    )
    .unwrap();
    let b = &s.bodies[0];
    let BodyShape::Clump(c) = &b.shape else {
        panic!("not a clump")
    };
    let (v1, v2) = (ball(0.1), ball(0.05));
    let com_y = 0.15 * v2 / (v1 + v2);
    assert!(
        (b.position[1] - (2.0 + com_y)).abs() < 1e-12,
        "{:?}",
        b.position
    );
    assert!(rel(b.mass, 2000.0 * (v1 + v2)) < 1e-12);
    assert!(rel(b.inertia[0], 2000.0 * c.principal[0]) < 1e-12);
    // Members in the body frame, as the frame maps them back to the file's points.
    let q = DQuat::from_array(b.orientation);
    let p0 = DVec3::from_array(b.position)
        + q * DVec3::new(c.members[0][0], c.members[0][1], c.members[0][2]);
    assert!((p0 - DVec3::new(1.0, 2.0, 3.0)).length() < 1e-12, "{p0}");
    let o = &s.bodies[1];
    assert_eq!(o.mass, 2.0);
    assert_eq!(o.inertia, [0.1, 0.2, 0.3]);
}

/// A generator fills with a clump template at seeded random orientations.
#[test]
fn generator_fills_with_clumps_deterministically() {
    let text = r#"
[[generator]]
kind = "random_fill"
region = { kind = "box", min = [0.0, 0.0, 0.0], max = [0.5, 0.5, 0.5] }
radius = 0.04
count = 30
seed = 7
spheres = [[-0.01, 0.0, 0.0, 0.01], [0.01, 0.0, 0.0, 0.01], [0.0, 0.015, 0.0, 0.01]]
"#;
    let a = scene(text).unwrap();
    let b = scene(text).unwrap();
    assert_eq!(a.bodies, b.bodies);
    assert_eq!(a.bodies.len(), 30);
    let qs: Vec<[f64; 4]> = a.bodies.iter().map(|b| b.orientation).collect();
    assert!(qs.windows(2).all(|w| w[0] != w[1]), "orientations repeat");
    for b in &a.bodies {
        let BodyShape::Clump(c) = &b.shape else {
            panic!("not a clump")
        };
        assert!((c.bounding_radius() - 0.04).abs() < 1e-12);
        assert_eq!(c.members.len(), 3);
    }
    let e = scene_err(&text.replace("0.015, 0.0, 0.01]]", "0.5, 0.0, 0.01]]"));
    assert!(e.contains("generator[0].spheres[2]"), "{e}");
}

// ---------------------------------------------------------------- GPU = twin
//
// Tolerances: members pass through one f32 quaternion rotation (a few ulps at O(1) m), so
// gaps, points and lever arms agree to 2e-5 m and normals to 1e-4, as for boxes
// (tests/shapes.rs). A pair whose contact set differs (a member at the envelope's edge
// in f32 but not in f64, a sphere–box face tie) is ambiguous: at most 1 % of the pairs.

const ENV: f32 = 0.01;

fn rand_q(rng: &mut ChaCha8Rng) -> [f32; 4] {
    DQuat::from_xyzw(
        rng.random_range(-1.0..1.0),
        rng.random_range(-1.0..1.0),
        rng.random_range(-1.0..1.0),
        rng.random_range(-1.0..1.0),
    )
    .normalize()
    .as_quat()
    .to_array()
}

/// A random connected clump of 2–5 members around the origin; (members, bounding radius).
fn rand_clump(rng: &mut ChaCha8Rng) -> (Vec<[f32; 4]>, f32) {
    let n = rng.random_range(2..=5);
    let mut m: Vec<[f32; 4]> = vec![[0.0, 0.0, 0.0, rng.random_range(0.04..0.1)]];
    while m.len() < n {
        let p = m[rng.random_range(0..m.len())];
        let r = rng.random_range(0.03..0.1f32);
        let dir = DVec3::new(
            rng.random_range(-1.0..1.0),
            rng.random_range(-1.0..1.0),
            rng.random_range(-1.0..1.0),
        )
        .normalize();
        // Touching or overlapping the parent.
        let d = (p[3] + r) * rng.random_range(0.5..1.0f32);
        let c = d3(p) + dir * d as f64;
        m.push([c.x as f32, c.y as f32, c.z as f32, r]);
    }
    let bound = m
        .iter()
        .map(|s| d3(*s).length() as f32 + s[3])
        .fold(0.0, f32::max);
    (m, bound * (1.0 + 1e-6))
}

/// Which grains beside clumps and spheres a random world holds.
#[derive(Clone, Copy, PartialEq)]
enum Others {
    None,
    Boxes,
    Capsules,
}

/// Six boundaries (plane, box container, solid box, cylinder container, solid cylinder,
/// a two-triangle mesh), then clumps (60 %), spheres and boxes or capsules (20 %) at random
/// poses. With boxes or capsules, the solid cylinder and the mesh are left out (they cannot
/// meet them yet).
fn random_world(
    rng: &mut ChaCha8Rng,
    grains: usize,
    others: Others,
) -> (BodyState, Vec<BoundaryShape>) {
    let boxes = others == Others::Boxes;
    let mut shapes = vec![
        BoundaryShape::Plane,
        BoundaryShape::BoxContainer {
            half_extents: [1.0, 1.0, 1.0],
            open_top: false,
        },
        BoundaryShape::SolidBox {
            half_extents: [0.3, 0.2, 0.25],
        },
        BoundaryShape::CylinderContainer {
            radius: 1.1,
            height: 2.0,
            open_top: false,
        },
        BoundaryShape::SolidCylinder {
            radius: 0.2,
            height: 0.5,
        },
        BoundaryShape::Mesh {
            vertices: vec![
                [-1.0, -1.0, 0.0],
                [1.0, -1.0, 0.1],
                [1.0, 1.0, 0.0],
                [-1.0, 1.0, -0.1],
            ],
            triangles: vec![[0, 1, 2], [0, 2, 3]],
        },
    ];
    let tilt = DQuat::from_rotation_y(0.05).as_quat().to_array();
    let mut inits = vec![
        BodyInit {
            orientation: tilt,
            ..BodyInit::fixed(SHAPE_PLANE, 0, [0.0, 0.0, -0.8], 0.0)
        },
        BodyInit::fixed(SHAPE_BOX_CONTAINER, 1, [0.0, 0.0, 0.0], 1.8),
        BodyInit {
            orientation: DQuat::from_rotation_z(0.3).as_quat().to_array(),
            ..BodyInit::fixed(SHAPE_SOLID_BOX, 2, [0.0, 0.0, 0.0], 0.44)
        },
        BodyInit::fixed(SHAPE_CYLINDER_CONTAINER, 3, [0.0, 0.0, -1.0], 2.3),
        BodyInit::fixed(SHAPE_SOLID_CYLINDER, 4, [0.5, 0.5, -0.3], 0.35),
        BodyInit::fixed(SHAPE_MESH, 5, [0.0, 0.0, 0.5], 1.5),
    ];
    if others != Others::None {
        shapes.truncate(4);
        inits.truncate(4);
    }
    for _ in 0..grains {
        let p = [
            rng.random_range(-0.85..0.85f32),
            rng.random_range(-0.85..0.85f32),
            rng.random_range(-0.85..0.85f32),
        ];
        let u: f64 = rng.random();
        if u < 0.6 {
            let (members, bound) = rand_clump(rng);
            shapes.push(BoundaryShape::GrainClump { members });
            inits.push(BodyInit {
                orientation: rand_q(rng),
                shape: SHAPE_CLUMP,
                shape_index: shapes.len() as u32 - 1,
                radius: bound,
                ..BodyInit::sphere(p, 1.0, 1000.0)
            });
        } else if u < 0.8 && boxes {
            let h = [
                rng.random_range(0.04..0.12f32),
                rng.random_range(0.04..0.12f32),
                rng.random_range(0.04..0.12f32),
            ];
            shapes.push(BoundaryShape::GrainBox { half_extents: h });
            inits.push(BodyInit {
                orientation: rand_q(rng),
                shape: SHAPE_BOX,
                shape_index: shapes.len() as u32 - 1,
                radius: (h[0] * h[0] + h[1] * h[1] + h[2] * h[2]).sqrt(),
                ..BodyInit::sphere(p, 1.0, 1000.0)
            });
        } else if u < 0.8 && others == Others::Capsules {
            let (r, hl) = (
                rng.random_range(0.03..0.08f32),
                rng.random_range(0.02..0.15f32),
            );
            shapes.push(BoundaryShape::GrainCapsule {
                radius: r,
                half_length: hl,
            });
            inits.push(BodyInit {
                orientation: rand_q(rng),
                shape: SHAPE_CAPSULE,
                shape_index: shapes.len() as u32 - 1,
                radius: r + hl,
                ..BodyInit::sphere(p, 1.0, 1000.0)
            });
        } else {
            inits.push(BodyInit::sphere(p, rng.random_range(0.04..0.1), 1000.0));
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

/// Per pair (`common::compare_contact_sets`): the same features, and within the f32 bounds
/// the same gaps, normals (1e-4), lever arms, materials and μ. Returns (pairs, ambiguous
/// pairs, clump contacts checked).
fn compare(state: &BodyState, shapes: &[BoundaryShape]) -> (usize, usize, usize) {
    let c = compare_contact_sets(state, shapes, &settings(), |_| 1e-4);
    let clump = |b: u32| state.info[b as usize][2] == SHAPE_CLUMP;
    let clump_contacts = c
        .matched
        .iter()
        .filter(|t| clump(t.a) || clump(t.b))
        .count();
    (c.pairs.len(), c.ambiguous.len(), clump_contacts)
}

#[test]
fn gpu_clump_contacts_match_the_twin_on_random_configurations() {
    let mut rng = ChaCha8Rng::seed_from_u64(11);
    let (mut pairs, mut amb, mut clump) = (0, 0, 0);
    for others in [Others::None, Others::Boxes] {
        let (state, shapes) = random_world(&mut rng, 150, others);
        let (p, a, c) = compare(&state, &shapes);
        pairs += p;
        amb += a;
        clump += c;
    }
    eprintln!("random clumps: {amb} ambiguous of {pairs} pairs; {clump} clump contacts compared");
    assert!(
        clump > 300,
        "too few clump contacts to mean anything: {clump}"
    );
    assert!(
        amb as f64 <= 0.01 * pairs as f64,
        "{amb} of {pairs} pairs differ"
    );
}

/// Capsule–clump pairs (each member against the capsule: capsule–sphere) on a random pack
/// of clumps, capsules and spheres with the four boundaries capsules meet, then built
/// cases with a clear answer (a member touching the capsule's side, one touching a cap,
/// one deep across the axis): no pair may differ there, ≤ 1 % of the random pairs.
#[test]
fn gpu_capsule_clump_contacts_match_the_twin() {
    let mut rng = ChaCha8Rng::seed_from_u64(12);
    let (state, shapes) = random_world(&mut rng, 150, Others::Capsules);
    let c = compare_contact_sets(&state, &shapes, &settings(), |_| 1e-4);
    let kind = |b: u32| state.info[b as usize][2];
    let mixed = |a: u32, b: u32| {
        let (ka, kb) = (kind(a), kind(b));
        (ka == SHAPE_CLUMP && kb == SHAPE_CAPSULE) || (ka == SHAPE_CAPSULE && kb == SHAPE_CLUMP)
    };
    let n = c.matched.iter().filter(|t| mixed(t.a, t.b)).count();
    eprintln!(
        "capsule–clump: {n} contacts compared; {} ambiguous of {} pairs",
        c.ambiguous.len(),
        c.pairs.len()
    );
    assert!(
        n >= 20,
        "too few capsule–clump contacts to mean anything: {n}"
    );
    assert!(c.ambiguous.len() as f64 <= 0.01 * c.pairs.len() as f64);
    // Built: capsule (r 0.05, hl 0.2) along x at the origin; a dumbbell clump whose member
    // touches the side (gap 0), a sphere at a cap's tip 1 mm in, and a clump deep across.
    let members = vec![[0.0, 0.0, 0.0, 0.05], [0.0, 0.0, 0.09, 0.05]];
    let shapes = vec![
        BoundaryShape::Plane,
        BoundaryShape::GrainCapsule {
            radius: 0.05,
            half_length: 0.2,
        },
        BoundaryShape::GrainClump { members },
    ];
    let along_x = DQuat::from_rotation_y(std::f64::consts::FRAC_PI_2)
        .as_quat()
        .to_array();
    let clump = |p: [f32; 3], q: [f32; 4]| BodyInit {
        orientation: q,
        shape: SHAPE_CLUMP,
        shape_index: 2,
        radius: 0.14,
        ..BodyInit::sphere(p, 1.0, 1000.0)
    };
    let inits = vec![
        BodyInit::fixed(SHAPE_PLANE, 0, [0.0, 0.0, -5.0], 0.0),
        BodyInit {
            orientation: along_x,
            shape: SHAPE_CAPSULE,
            shape_index: 1,
            radius: 0.25,
            ..BodyInit::sphere([0.0, 0.0, 0.0], 1.0, 1000.0)
        },
        clump([0.1, 0.0, 0.1], [0.0, 0.0, 0.0, 1.0]),
        clump([0.299, 0.0, -0.09], [0.0, 0.0, 0.0, 1.0]),
        clump([-0.1, 0.0, -0.045], along_x),
    ];
    let state = BodyState::from_inits(&inits);
    let c = compare_contact_sets(&state, &shapes, &settings(), |_| 1e-4);
    assert!(
        c.ambiguous.is_empty(),
        "built cases differ: {:?}",
        c.ambiguous
    );
    let gap = |b: u32, f: u32| {
        c.matched
            .iter()
            .find(|t| t.a == 1 && t.b == b && t.feature == f)
            .unwrap_or_else(|| panic!("no contact capsule–{b} member {f}"))
            .gap
    };
    assert!(gap(2, 0).abs() < 1e-6, "side touch gap {}", gap(2, 0));
    assert!((gap(3, 1) + 1e-3).abs() < 1e-6, "cap gap {}", gap(3, 1));
    assert!(gap(4, 0) < -0.05 && gap(4, 1) < -0.05, "deep");
}

/// A clump touching itself is never a contact: a single clump whose members overlap deeply
/// gives no contact, and a clump resting on a plane gives one per member below the envelope.
#[test]
fn members_of_one_clump_never_collide() {
    let shapes = vec![
        BoundaryShape::Plane,
        BoundaryShape::GrainClump {
            members: vec![
                [-0.05, 0.0, 0.0, 0.08],
                [0.05, 0.0, 0.0, 0.08],
                [0.0, 0.05, 0.0, 0.08],
            ],
        },
    ];
    let inits = vec![
        BodyInit::fixed(SHAPE_PLANE, 0, [0.0, 0.0, 0.0], 0.0),
        BodyInit {
            shape: SHAPE_CLUMP,
            shape_index: 1,
            radius: 0.14,
            ..BodyInit::sphere([0.0, 0.0, 0.08], 1.0, 1000.0)
        },
    ];
    let state = BodyState::from_inits(&inits);
    let gpu = gpu_contacts(&state, &shapes, &settings());
    let f: Vec<u32> = gpu.iter().map(|c| c.ids[2]).collect();
    assert_eq!(f, vec![0, 1 << 24, 2 << 24], "{gpu:?}");
    assert!(gpu.iter().all(|c| c.ids[0] == 0 && c.ids[1] == 1));
    assert_eq!(compare(&state, &shapes), (1, 0, 3));
}

// ---------------------------------------------------------------- physics

fn sim_of(text: &str) -> (Simulation, bristlecone::scene::Scene) {
    let scene = parse_str(text, Path::new("clump.toml")).unwrap();
    let state = setup::build_bodies(&scene);
    let sim = Simulation::new(shared_context(), &state, setup::step_settings(&scene)).unwrap();
    (sim, scene)
}

fn dumbbell_scene(seconds: f64, gravity: [f64; 3], z: f64, yaw: f64) -> String {
    let (s, c) = (0.5 * yaw).sin_cos();
    format!(
        r#"
[simulation]
dt = 1e-3
duration = {seconds}
gravity = [{}, {}, {}]
[solver]
cone = "exact"
max_iterations = 60
tolerance = 1e-7
[[material]]
name = "m"
density = 1000.0
friction = 0.3
[[body]]
shape = "clump"
spheres = [[-0.01, 0.0, 0.0, 0.01], [0.01, 0.0, 0.0, 0.01]]
position = [0.0, 0.0, {z}]
orientation = [0.0, 0.0, {s}, {c}]
material = "m"
[[boundary]]
kind = "plane"
point = [0.0, 0.0, 0.0]
normal = [0.0, 0.0, 1.0]
material = "m"
"#,
        gravity[0], gravity[1], gravity[2]
    )
}

/// A two-sphere dumbbell (r = 1 cm, touching) dropped flat from 2 mm onto a plane comes to
/// rest on both spheres: no rocking (tilt < 1e-4 rad, |ω| < 1e-3 rad/s), each contact
/// carries half the weight within 1 %, the two together the weight within 1 %.
#[test]
fn dumbbell_rests_on_both_spheres() {
    let (mut sim, scene) = sim_of(&dumbbell_scene(0.12, [0.0, 0.0, -9.81], 0.012, 0.7));
    sim.advance(scene.sim.steps as u32, 0).unwrap();
    let st = sim.read_state().unwrap();
    let q = DQuat::from_xyzw(
        st.rot[1][0] as f64,
        st.rot[1][1] as f64,
        st.rot[1][2] as f64,
        st.rot[1][3] as f64,
    );
    let tilt = (q * DVec3::Z).angle_between(DVec3::Z);
    let w = d3(st.omega[1]).length();
    let (contacts, imp) = sim.read_contacts().unwrap();
    let loads: Vec<(u32, f64)> = contacts
        .iter()
        .zip(&imp)
        .filter(|(c, _)| c.ids[0] == 0 && c.ids[1] == 1)
        .map(|(c, g)| (c.ids[2], g[0] as f64))
        .collect();
    let weight = scene.bodies[0].mass * 9.81 * 1e-3;
    eprintln!(
        "dumbbell: tilt {tilt:.2e} rad, |w| {w:.2e}, loads {loads:?}, weight·dt {weight:.4e}"
    );
    assert!(tilt < 1e-4, "tilt {tilt}");
    assert!(w < 1e-3, "omega {w}");
    assert_eq!(
        loads.iter().map(|l| l.0).collect::<Vec<_>>(),
        vec![0, 1 << 24]
    );
    for (_, l) in &loads {
        assert!(
            (l - 0.5 * weight).abs() <= 0.01 * 0.5 * weight,
            "load {l} vs {}",
            0.5 * weight
        );
    }
    let total: f64 = loads.iter().map(|l| l.1).sum();
    assert!(
        (total - weight).abs() <= 0.01 * weight,
        "total {total} vs {weight}"
    );
}

/// The dumbbell (axis along the slope) slides down an incline with θ = atan μ + 0.15 at
/// a = g(sinθ − μ cosθ) within 1 % after 0.2 s, without tipping (rotation < 1e-3 rad).
#[test]
fn clump_slides_on_incline() {
    let (g, mu) = (9.81, 0.3f64);
    let theta = mu.atan() + 0.15;
    let (s, c) = theta.sin_cos();
    let t = 0.2;
    let (mut sim, scene) = sim_of(&dumbbell_scene(t, [g * s, 0.0, -g * c], 0.01, 0.0));
    sim.advance(scene.sim.steps as u32, 0).unwrap();
    let st = sim.read_state().unwrap();
    let v = d3(st.vel[1]);
    let q = st.rot[1];
    let rot = 2.0 * DVec3::new(q[0] as f64, q[1] as f64, q[2] as f64).length();
    let want = g * (s - mu * c) * t;
    eprintln!(
        "clump incline: v = {:.5} m/s vs {want:.5}, v_z = {:.2e}, rotation {rot:.2e}",
        v.x, v.z
    );
    assert!((v.x - want).abs() <= 0.01 * want, "v = {} vs {want}", v.x);
    assert!(v.z.abs() < 1e-3 * want, "lifts: v_z = {}", v.z);
    assert!(rot < 1e-3, "rotation {rot}");
}
