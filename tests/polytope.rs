//! Polytope pairs: convex hull grains against hulls, boxes and solid boxes (separating
//! axes and a clipped face manifold, `reference::polytope`), hulls in cylinder containers,
//! and clump members against hulls and cylinders; GPU against the f64 twin on random and built configurations, and a hull
//! sliding on a hull on an incline.
//!
//! Tolerances of the GPU = twin comparison as for boxes (tests/shapes.rs): gaps and points
//! to 2e-5 m, normals to 1e-4 (2e-3 for short differences below 1 cm); a pair whose
//! contact *set* differs (an f32/f64 decision at a threshold: equally good axes, a clip
//! point at the envelope or a side plane) is ambiguous: at most 3 % of the random pairs,
//! none of the built ones.

use crate::common::*;
use bristlecone::bodies::*;
use bristlecone::collide::{BoundaryShape, CollideSettings};
use bristlecone::convex::ConvexHull;
use bristlecone::reference::polytope::EDGE_FEATURE;
use glam::{DQuat, DVec3};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::collections::BTreeMap;

const ENV: f32 = 0.01;

fn settings() -> CollideSettings {
    CollideSettings {
        envelope: ENV,
        friction: vec![0.5],
    }
}

fn ntol(tc: &bristlecone::reference::collide::Contact64) -> f64 {
    if tc.gap.abs() < 1e-2 {
        2e-3
    } else {
        1e-4
    }
}

fn rand_q(rng: &mut ChaCha8Rng) -> DQuat {
    let mut r = || rng.random_range(-1.0..1.0);
    DQuat::from_xyzw(r(), r(), r(), r()).normalize()
}

/// A random hull: `n` points in a ball of radius `r`, stretched.
fn random_hull(rng: &mut ChaCha8Rng, n: usize, r: f64) -> ConvexHull {
    let pts: Vec<[f64; 3]> = (0..n)
        .map(|_| {
            let mut u = || rng.random_range(-1.0..1.0);
            let v = DVec3::new(u(), u(), u()).normalize();
            (v * r * rng.random_range(0.7..1.0) * DVec3::new(1.3, 1.0, 0.7)).to_array()
        })
        .collect();
    ConvexHull::new(&pts).unwrap()
}

fn cube(h: f64) -> ConvexHull {
    let pts: Vec<[f64; 3]> = (0..8)
        .map(|k| [0, 1, 2].map(|b| if (k >> b) & 1 == 1 { h } else { -h }))
        .collect();
    ConvexHull::new(&pts).unwrap()
}

fn f3(v: DVec3) -> [f32; 3] {
    [v.x as f32, v.y as f32, v.z as f32]
}

/// A scene under construction: a box container (half 0.3) first, then grains.
struct World {
    shapes: Vec<BoundaryShape>,
    inits: Vec<BodyInit>,
}

impl World {
    fn new() -> Self {
        World {
            shapes: vec![BoundaryShape::BoxContainer {
                half_extents: [0.3, 0.3, 0.3],
                open_top: false,
            }],
            inits: vec![BodyInit::fixed(SHAPE_BOX_CONTAINER, 0, [0.0; 3], 0.6)],
        }
    }

    /// No boundaries.
    fn bare() -> Self {
        World {
            shapes: Vec::new(),
            inits: Vec::new(),
        }
    }

    /// A cylinder container (radius 0.25, height 0.5, base at z = −0.25) and a solid box
    /// (half 0.1 × 0.08 × 0.05 at z = −0.12, turned 0.3 rad about z) instead of the box.
    fn cylinder_and_solid() -> Self {
        World {
            shapes: vec![
                BoundaryShape::CylinderContainer {
                    radius: 0.25,
                    height: 0.5,
                    open_top: false,
                },
                BoundaryShape::SolidBox {
                    half_extents: [0.1, 0.08, 0.05],
                },
            ],
            inits: vec![
                BodyInit::fixed(SHAPE_CYLINDER_CONTAINER, 0, [0.0, 0.0, -0.25], 0.6),
                BodyInit {
                    orientation: DQuat::from_rotation_z(0.3).as_quat().to_array(),
                    ..BodyInit::fixed(SHAPE_SOLID_BOX, 1, [0.0, 0.0, -0.12], 0.138)
                },
            ],
        }
    }

    fn grain(&mut self, shape: BoundaryShape, kind: u32, bound: f64, c: DVec3, q: DQuat) {
        self.shapes.push(shape);
        self.inits.push(BodyInit {
            orientation: q.as_quat().to_array(),
            shape: kind,
            shape_index: self.shapes.len() as u32 - 1,
            radius: bound as f32,
            ..BodyInit::sphere(f3(c), 1.0, 1000.0)
        });
    }

    fn hull(&mut self, h: &ConvexHull, c: DVec3, q: DQuat) {
        self.grain(h.grain_shape(), SHAPE_CONVEX, h.bounding_radius(), c, q);
    }

    fn cuboid(&mut self, h: [f64; 3], c: DVec3, q: DQuat) {
        let half_extents = h.map(|v| v as f32);
        let bound = DVec3::from_array(h).length();
        self.grain(
            BoundaryShape::GrainBox { half_extents },
            SHAPE_BOX,
            bound,
            c,
            q,
        );
    }

    fn clump(&mut self, members: Vec<[f32; 4]>, c: DVec3, q: DQuat) {
        let bound = members
            .iter()
            .map(|m| (m[0] * m[0] + m[1] * m[1] + m[2] * m[2]).sqrt() + m[3])
            .fold(0.0, f32::max) as f64;
        self.grain(
            BoundaryShape::GrainClump { members },
            SHAPE_CLUMP,
            bound,
            c,
            q,
        );
    }

    fn cylinder(&mut self, radius: f32, half_length: f32, c: DVec3, q: DQuat) {
        let bound = (radius as f64).hypot(half_length as f64);
        let shape = BoundaryShape::GrainCylinder {
            radius,
            half_length,
        };
        self.grain(shape, SHAPE_CYLINDER, bound, c, q);
    }

    fn capsule(&mut self, radius: f32, half_length: f32, c: DVec3, q: DQuat) {
        let bound = (radius + half_length) as f64;
        let shape = BoundaryShape::GrainCapsule {
            radius,
            half_length,
        };
        self.grain(shape, SHAPE_CAPSULE, bound, c, q);
    }

    fn sphere(&mut self, c: DVec3, r: f64) {
        self.inits.push(BodyInit::sphere(f3(c), r as f32, 1000.0));
    }

    fn state(&self) -> BodyState {
        BodyState::from_inits(&self.inits)
    }
}

fn random_clump(rng: &mut ChaCha8Rng) -> Vec<[f32; 4]> {
    let r = rng.random_range(0.02..0.035);
    let n = rng.random_range(2..4);
    (0..n)
        .map(|k| [1.2 * r * k as f32 - 1.2 * r, 0.0, 0.0, r])
        .collect()
}

fn rand_point(rng: &mut ChaCha8Rng, a: f64) -> DVec3 {
    let mut u = || rng.random_range(-a..a);
    DVec3::new(u(), u(), u())
}

/// Per pair kind (A's kind, B's kind), the contacts compared; the ambiguous and all pairs.
fn tally(worlds: &[World]) -> (BTreeMap<(u32, u32), usize>, usize, usize, usize) {
    let (mut kinds, mut amb, mut pairs, mut edges) = (BTreeMap::new(), 0, 0, 0);
    for w in worlds {
        let state = w.state();
        let cmp = compare_contact_sets(&state, &w.shapes, &settings(), ntol);
        pairs += cmp.pairs.len();
        amb += cmp.ambiguous.len();
        for m in &cmp.matched {
            let k = (state.info[m.a as usize][2], state.info[m.b as usize][2]);
            *kinds.entry(k).or_insert(0) += 1;
            let poly = |k| k == SHAPE_CONVEX || k == SHAPE_BOX;
            if poly(k.0) && poly(k.1) && m.feature >= EDGE_FEATURE {
                edges += 1;
            }
        }
    }
    (kinds, amb, pairs, edges)
}

fn count(kinds: &BTreeMap<(u32, u32), usize>, a: u32, b: u32) -> usize {
    let n = |k| kinds.get(&k).copied().unwrap_or(0);
    n((a, b)) + if a == b { 0 } else { n((b, a)) }
}

/// Random hulls (8–30 points), boxes, clumps and spheres packed so that bounding spheres
/// overlap: hull–hull, hull–box and clump–hull pairs, touching to deep, face and edge
/// axes; hulls in a cylinder container around a solid box; and a cylinder among clumps.
#[test]
fn gpu_polytope_contacts_match_the_twin_on_random_configurations() {
    let mut rng = ChaCha8Rng::seed_from_u64(11);
    let mut worlds = Vec::new();
    // One pack per world (each world builds its pipelines: seconds on lavapipe).
    for _ in 0..1 {
        let mut w = World::new();
        for _ in 0..16 {
            let n = rng.random_range(8..30);
            let h = random_hull(&mut rng, n, 0.06);
            let (c, q) = (rand_point(&mut rng, 0.14), rand_q(&mut rng));
            w.hull(&h, c, q);
        }
        for _ in 0..6 {
            let h = [0.02, 0.03, 0.05].map(|x| x * rng.random_range(0.8..1.2));
            let (c, q) = (rand_point(&mut rng, 0.15), rand_q(&mut rng));
            w.cuboid(h, c, q);
        }
        for _ in 0..6 {
            let (m, c, q) = (
                random_clump(&mut rng),
                rand_point(&mut rng, 0.15),
                rand_q(&mut rng),
            );
            w.clump(m, c, q);
        }
        for _ in 0..6 {
            let (r, hl) = (rng.random_range(0.01..0.025), rng.random_range(0.02..0.05));
            w.capsule(r, hl, rand_point(&mut rng, 0.15), rand_q(&mut rng));
        }
        for _ in 0..12 {
            let (c, r) = (rand_point(&mut rng, 0.22), rng.random_range(0.01..0.03));
            w.sphere(c, r);
        }
        worlds.push(w);
    }
    for _ in 0..1 {
        let mut w = World::cylinder_and_solid();
        for _ in 0..14 {
            let n = rng.random_range(8..30);
            let h = random_hull(&mut rng, n, 0.06);
            let c = rand_point(&mut rng, 0.2) * DVec3::new(1.0, 1.0, 0.6) - DVec3::Z * 0.1;
            w.hull(&h, c, rand_q(&mut rng));
        }
        worlds.push(w);
    }
    for _ in 0..1 {
        let mut w = World::new();
        let (c, q) = (rand_point(&mut rng, 0.05), rand_q(&mut rng));
        w.cylinder(0.05, 0.07, c, q);
        for _ in 0..10 {
            let (m, c, q) = (
                random_clump(&mut rng),
                rand_point(&mut rng, 0.1),
                rand_q(&mut rng),
            );
            w.clump(m, c, q);
        }
        worlds.push(w);
    }
    let (kinds, amb, pairs, edges) = tally(&worlds);
    eprintln!("polytopes: {amb} ambiguous of {pairs} pairs; {edges} edge contacts; {kinds:?}");
    let need = [
        (SHAPE_CONVEX, SHAPE_CONVEX, 20),
        (SHAPE_CONVEX, SHAPE_BOX, 10),
        (SHAPE_CONVEX, SHAPE_CLUMP, 5),
        (SHAPE_CONVEX, SHAPE_CAPSULE, 5),
        (SHAPE_CLUMP, SHAPE_CYLINDER, 5),
        (SHAPE_SOLID_BOX, SHAPE_CONVEX, 5),
        (SHAPE_CYLINDER_CONTAINER, SHAPE_CONVEX, 5),
    ];
    for (a, b, min) in need {
        let n = count(&kinds, a, b);
        assert!(n >= min, "({a}, {b}) met {n} times: {kinds:?}");
    }
    assert!(edges >= 3, "{edges} edge–edge contacts");
    assert!(
        amb as f64 <= 0.03 * pairs as f64,
        "{amb} of {pairs} pairs differ"
    );
}

/// Built cases, each with its analytic contact set: a cube hull on a cube hull (1 mm deep:
/// 4 points, the top face's corners), turned 30° about z (4 of the octagon's points), on
/// a box grain (the same 4 corners), two cubes crossed edge on edge (1 point), a capsule
/// lying on a cube's face (its 2 ends) and across a cube's ridge (1 point).
#[test]
fn gpu_polytope_contacts_match_the_twin_on_built_cases() {
    let h = 0.05;
    let c = cube(h);
    let (z, s2) = (DVec3::Z, 2f64.sqrt());
    let top = z * (2.0 * h - 0.001);
    let turn = DQuat::from_rotation_z(std::f64::consts::FRAC_PI_6);
    let ridge = DQuat::from_rotation_x(std::f64::consts::FRAC_PI_4);
    let valley = DQuat::from_rotation_y(std::f64::consts::FRAC_PI_4);
    // One world (one pipeline build), the cases 1 m apart along x: bodies 2k and 2k + 1.
    let mut w = World::bare();
    let at = |k: usize| DVec3::X * k as f64;
    w.hull(&c, at(0), DQuat::IDENTITY);
    w.hull(&c, at(0) + top, DQuat::IDENTITY);
    w.hull(&c, at(1), DQuat::IDENTITY);
    w.hull(&c, at(1) + top, turn);
    w.cuboid([h; 3], at(2), DQuat::IDENTITY);
    w.hull(&c, at(2) + top, DQuat::IDENTITY);
    w.hull(&c, at(3), ridge);
    w.hull(&c, at(3) + z * (2.0 * h * s2 - 0.001), valley);
    let (r, hl) = (0.02, 0.04);
    let along_x = DQuat::from_rotation_y(std::f64::consts::FRAC_PI_2);
    let along_y = DQuat::from_rotation_x(std::f64::consts::FRAC_PI_2);
    w.hull(&c, at(4), DQuat::IDENTITY);
    w.capsule(r as f32, hl as f32, at(4) + z * (h + r - 0.001), along_x);
    w.hull(&c, at(5), ridge);
    w.capsule(
        r as f32,
        hl as f32,
        at(5) + z * (h * s2 + r - 0.001),
        along_y,
    );
    let state = w.state();
    let cmp = compare_contact_sets(&state, &w.shapes, &settings(), ntol);
    assert!(cmp.ambiguous.is_empty(), "{:?}", cmp.ambiguous);
    let cases = [
        ("stacked", 4),
        ("turned", 4),
        ("on a box", 4),
        ("edges", 1),
        ("rod on a face", 2),
        ("rod on a ridge", 1),
    ];
    for (k, (name, points)) in cases.into_iter().enumerate() {
        let a = 2 * k as u32;
        let got: Vec<_> = cmp
            .matched
            .iter()
            .filter(|m| m.a == a && m.b == a + 1)
            .collect();
        assert_eq!(got.len(), points, "{name}: {got:?}");
        // Contact points relative to the lower body's centre.
        let rel = |m: &bristlecone::reference::collide::Contact64| {
            d3(state.pos[a as usize]) + m.ra - at(k)
        };
        for m in &got {
            assert!((m.gap + 0.001).abs() < 2e-6, "{name}: gap {}", m.gap);
            assert!(
                (m.normal - z).length() < 1e-6,
                "{name}: normal {}",
                m.normal
            );
            let p = rel(m);
            assert!(
                (p.z - (top.z - h + 0.0005)).abs() < 3e-6 || points == 1,
                "{name}: {p}"
            );
        }
        if name == "stacked" || name == "on a box" {
            for m in &got {
                let p = rel(m);
                assert!(
                    (p.x.abs() - h).abs() < 2e-6 && (p.y.abs() - h).abs() < 2e-6,
                    "{name}: {p}"
                );
            }
        }
        if name == "rod on a face" {
            let f: Vec<u32> = got.iter().map(|m| m.feature).collect();
            assert_eq!(f, [1, 2], "{name}");
            for m in &got {
                let p = rel(m);
                assert!(
                    (p.x.abs() - hl).abs() < 2e-6 && p.y.abs() < 2e-6,
                    "{name}: {p}"
                );
            }
        }
        if name == "rod on a ridge" {
            let p = rel(got[0]);
            assert!((p - z * (h * s2 - 0.0005)).length() < 3e-6, "{name}: {p}");
        }
        if name == "edges" {
            assert!(got[0].feature >= EDGE_FEATURE, "{name}: {:?}", got[0]);
            let p = rel(got[0]);
            assert!((p - z * (h * s2 - 0.0005)).length() < 3e-6, "{name}: {p}");
        }
    }
}

/// A frustum hull (square base 10 cm, μ = 0.3 against the slab) on a hull slab (30 × 30 ×
/// 2 cm, μ = 0.9, held by the plane's friction) on an incline of θ: it slides at
/// g(sinθ − μcosθ) within 1 %, without rocking (rotation < 1e-4 rad), while the slab stays.
#[test]
fn hull_slides_on_a_hull_at_the_coulomb_rate() {
    let (mu, t, theta) = (0.3f64, 0.1, 0.45f64);
    let text = format!(
        r#"{header}
[[material]]
name = "rough"
density = 1000.0
friction = 0.9
[[material]]
name = "slick"
density = 1000.0
friction = {mu}
[[body]]
shape = "convex"
points = [[-0.15,-0.15,0],[0.15,-0.15,0],[0.15,0.15,0],[-0.15,0.15,0],
          [-0.15,-0.15,0.02],[0.15,-0.15,0.02],[0.15,0.15,0.02],[-0.15,0.15,0.02]]
position = [0.0, 0.0, 0.0]
material = "rough"
[[body]]
shape = "convex"
points = [[-0.05,-0.05,0.02],[0.05,-0.05,0.02],[0.05,0.05,0.02],[-0.05,0.05,0.02],
          [-0.03,-0.03,0.07],[0.03,-0.03,0.07],[0.03,0.03,0.07],[-0.03,0.03,0.07]]
position = [0.0, 0.0, 0.0]
material = "slick"
[[boundary]]
kind = "plane"
point = [0.0, 0.0, 0.0]
normal = [0.0, 0.0, 1.0]
material = "rough"
"#,
        header = incline_header(theta, t)
    );
    let (scene, st) = run_text(&text, "hulls.toml");
    let q0 = DQuat::from_array(scene.bodies[1].orientation);
    assert_slides("hull on hull", &st, q0, theta, mu, t);
}
