//! Cylinders against boxes, hulls, capsules and cylinders (`common/collide_support.wgsl`,
//! twin `reference::support`): GPU = twin on random placements at set gaps (separated
//! within the envelope, touching, shallow, deep past the core margins) and on built
//! face–face, segment–face and segment–segment cases; then a cylinder sliding and one
//! rolling on an incline against the rigid-body results.

use crate::common::*;
use bristlecone::bodies::*;
use bristlecone::collide::{BoundaryShape, CollideSettings};
use bristlecone::convex::ConvexHull;
use bristlecone::reference::collide::Contact64;
use bristlecone::reference::convex::Hull;
use bristlecone::reference::support::{
    gjk, normal_and_gap, solid_box, solid_cylinder, Kind, Shape, FEATURE_WITNESS, FEATURE_X,
};
use glam::{DQuat, DVec3};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

const ENV: f32 = 0.005;

fn settings() -> CollideSettings {
    CollideSettings {
        envelope: ENV,
        friction: vec![0.5],
    }
}

fn rand_q(rng: &mut ChaCha8Rng) -> DQuat {
    let mut r = || rng.random_range(-1.0..1.0);
    DQuat::from_xyzw(r(), r(), r(), r()).normalize()
}

/// A grain: its shape record, kind and bounding radius.
#[derive(Clone)]
enum Part {
    Cylinder(f64, f64),
    Box([f64; 3]),
    Capsule(f64, f64),
    Hull(ConvexHull),
}

impl Part {
    fn record(&self) -> (BoundaryShape, u32, f64) {
        match self {
            Part::Cylinder(r, hl) => (
                BoundaryShape::GrainCylinder {
                    radius: *r as f32,
                    half_length: *hl as f32,
                },
                SHAPE_CYLINDER,
                (r * r + hl * hl).sqrt(),
            ),
            Part::Box(h) => (
                BoundaryShape::GrainBox {
                    half_extents: h.map(|v| v as f32),
                },
                SHAPE_BOX,
                DVec3::from_array(*h).length(),
            ),
            Part::Capsule(r, hl) => (
                BoundaryShape::GrainCapsule {
                    radius: *r as f32,
                    half_length: *hl as f32,
                },
                SHAPE_CAPSULE,
                r + hl,
            ),
            Part::Hull(h) => (h.grain_shape(), SHAPE_CONVEX, h.bounding_radius()),
        }
    }

    /// The twin's shape at (c, q) (hull: built into `keep`).
    fn shape<'a>(&self, c: DVec3, q: DQuat, keep: &'a mut Option<Hull>) -> Shape<'a> {
        let (rec, _, bound) = self.record();
        let kind = match self {
            Part::Cylinder(r, hl) => Kind::Cylinder { r: *r, hl: *hl },
            Part::Box(h) => Kind::Box {
                h: DVec3::from_array(*h),
            },
            Part::Capsule(r, hl) => Kind::Capsule { r: *r, hl: *hl },
            Part::Hull(_) => Kind::Hull(keep.insert(Hull::new(c, q, &rec))),
        };
        Shape::grain(kind, c, q, bound)
    }
}

#[derive(Default)]
struct World {
    shapes: Vec<BoundaryShape>,
    /// Boundary bodies (the lowest ids in the state), then grains.
    walls: Vec<BodyInit>,
    inits: Vec<BodyInit>,
}

impl World {
    fn add(&mut self, p: &Part, c: DVec3, q: DQuat) {
        let (rec, kind, bound) = p.record();
        self.shapes.push(rec);
        self.inits.push(BodyInit {
            orientation: q.as_quat().to_array(),
            shape: kind,
            shape_index: self.shapes.len() as u32 - 1,
            radius: bound as f32,
            ..BodyInit::sphere(c.as_vec3().to_array(), 1.0, 1000.0)
        });
    }

    /// A cylinder at `at` and `x` placed along direction u so that the twin's gap is `gap`
    /// (bisection on the distance); `gap` = None: 2 mm nearer than where the cores start to
    /// intersect (deep: the normal is the centres' direction there, a jump in the gap that
    /// the placement keeps away from).
    #[allow(clippy::too_many_arguments)]
    fn place(
        &mut self,
        cyl: &Part,
        qc: DQuat,
        x: &Part,
        qx: DQuat,
        u: DVec3,
        gap: Option<f64>,
        at: DVec3,
    ) {
        let (mut k1, mut k2) = (None, None);
        let mut apart = |s: f64| {
            let a = cyl.shape(at, qc, &mut k1);
            let b = x.shape(at + u * s, qx, &mut k2);
            match gap {
                Some(g) => normal_and_gap(&a, &b).1 >= g,
                None => !gjk(&a, &b).hit,
            }
        };
        let (lo, _) = bisect(0.0, 1.0, &mut apart);
        let s = if gap.is_some() { lo } else { lo - 0.002 };
        self.add(cyl, at, qc);
        self.add(x, at + u * s, qx);
    }

    /// A mesh boundary at `xa` (after the walls so far).
    fn add_mesh(&mut self, mesh: &BoundaryShape, xa: DVec3) {
        self.shapes.push(mesh.clone());
        let index = self.shapes.len() as u32 - 1;
        let at = xa.as_vec3().to_array();
        self.walls.push(BodyInit::fixed(SHAPE_MESH, index, at, 3.0));
    }

    fn state(&self) -> BodyState {
        let all: Vec<BodyInit> = self.walls.iter().chain(&self.inits).cloned().collect();
        BodyState::from_inits(&all)
    }

    /// A solid boundary at (xa, qa) and grain x placed along u from `at` so that the
    /// twin's gap is `gap` (bisection on the distance, as [`World::place`]).
    #[allow(clippy::too_many_arguments)]
    fn place_on_wall(
        &mut self,
        wall: &Wall,
        xa: DVec3,
        qa: DQuat,
        x: &Part,
        qx: DQuat,
        u: DVec3,
        gap: f64,
        at: DVec3,
    ) {
        let mut keep = None;
        let mut apart = |s: f64| {
            let b = x.shape(at + u * s, qx, &mut keep);
            normal_and_gap(&wall.shape(xa, qa, &b), &b).1 >= gap
        };
        let (lo, _) = bisect(0.0, 2.0, &mut apart);
        self.shapes.push(wall.record());
        self.walls.push(BodyInit {
            orientation: qa.as_quat().to_array(),
            ..BodyInit::fixed(
                wall.kind(),
                self.shapes.len() as u32 - 1,
                xa.as_vec3().to_array(),
                wall.bound() as f32,
            )
        });
        self.add(x, at + u * lo, qx);
    }
}

/// A solid boundary: cylinder (radius, height; base at its position) or box (half extents).
enum Wall {
    Cylinder(f64, f64),
    Box([f64; 3]),
}

impl Wall {
    fn record(&self) -> BoundaryShape {
        match self {
            Wall::Cylinder(r, h) => BoundaryShape::SolidCylinder {
                radius: *r as f32,
                height: *h as f32,
            },
            Wall::Box(h) => BoundaryShape::SolidBox {
                half_extents: h.map(|v| v as f32),
            },
        }
    }

    fn kind(&self) -> u32 {
        match self {
            Wall::Cylinder(..) => SHAPE_SOLID_CYLINDER,
            Wall::Box(_) => SHAPE_SOLID_BOX,
        }
    }

    fn bound(&self) -> f64 {
        match self {
            Wall::Cylinder(r, h) => r.hypot(*h),
            Wall::Box(h) => DVec3::from_array(*h).length(),
        }
    }

    /// The twin's shape of the boundary against grain x.
    fn shape<'a>(&self, xa: DVec3, qa: DQuat, x: &Shape) -> Shape<'a> {
        match self {
            Wall::Cylinder(r, h) => solid_cylinder(xa, qa, *r, *h, x),
            Wall::Box(h) => solid_box(xa, qa, DVec3::from_array(*h)),
        }
    }
}

/// GJK's witness point (mesh features are 64 × triangle + the pair's).
fn witness(tc: &Contact64) -> bool {
    tc.feature % 64 == FEATURE_WITNESS
}

/// Normals: 1e-3 for feature points (a face's or disc's own normal); GJK's witness point
/// 2e-2 rad, its point within 0.2 mm on these 4–5 cm shapes: f32 GJK between two curved
/// cores (rim against rim or side) stops short of the twin's f64 (its stopping test, 1e-6
/// of the squared distance, is at f32's floor there).
fn ntol(tc: &Contact64) -> f64 {
    if witness(tc) {
        5e-2
    } else {
        1e-3
    }
}

/// Lever arms: 2e-5 m for feature points, 2e-4 m for the witness point; past the margins
/// (cores intersecting: the depth along the axis of least overlap, the point the
/// cylinder's support there, which an axis ⟂ its own makes a tie that f32 and f64 break
/// apart) only within the pair's reach: depth and normal are compared as for the others.
fn atol(tc: &Contact64) -> f64 {
    match (witness(tc), tc.gap < -0.001) {
        (true, true) => 0.12,
        (true, false) => 2e-4,
        _ => 2e-5,
    }
}

fn partners(rng: &mut ChaCha8Rng) -> Vec<Part> {
    let hull = {
        let pts: Vec<[f64; 3]> = (0..14)
            .map(|_| {
                let mut u = || rng.random_range(-1.0..1.0);
                let v = DVec3::new(u(), u(), u()).normalize();
                (v * 0.06 * rng.random_range(0.7..1.0)).to_array()
            })
            .collect();
        ConvexHull::new(&pts).unwrap()
    };
    vec![
        Part::Box([0.05, 0.035, 0.02]),
        Part::Hull(hull),
        Part::Capsule(0.02, 0.05),
        Part::Cylinder(0.04, 0.025),
    ]
}

#[test]
fn random_cylinder_pairs_match_the_twin() {
    let mut rng = ChaCha8Rng::seed_from_u64(17);
    let mut w = World::default();
    let cyl = Part::Cylinder(0.05, 0.04);
    let mut k = 0;
    for _ in 0..6 {
        for x in partners(&mut rng) {
            // Gaps: in the envelope, touching, shallow, past both margins (cores overlap).
            for gap in [Some(0.6 * ENV as f64), Some(0.0), Some(-2e-4), None] {
                let u = rand_q(&mut rng) * DVec3::X;
                let (qc, qx) = (rand_q(&mut rng), rand_q(&mut rng));
                let at = DVec3::new(0.5 * (k % 10) as f64, 0.5 * (k / 10) as f64, 0.0);
                w.place(&cyl, qc, &x, qx, u, gap, at);
                k += 1;
            }
        }
    }
    let st = w.state();
    let c = compare_contact_sets_with(&st, &w.shapes, &settings(), ntol, atol);
    eprintln!(
        "random cylinder pairs: {} pairs, {} contacts matched, {} ambiguous",
        c.pairs.len(),
        c.matched.len(),
        c.ambiguous.len()
    );
    assert!(c.pairs.len() >= 90, "{} pairs in contact", c.pairs.len());
    assert!(c.ambiguous.len() <= 3, "{:?}", c.ambiguous);
    let deep = c.matched.iter().filter(|m| m.gap < -0.002).count();
    assert!(deep >= 10, "{deep} deep contacts");
}

/// A heightfield mesh over [0, 2]² (local): 8 × 8 cells, a bump h = 0.15 sin(3x) cos(2y)
/// where positive and flat (coplanar triangles) elsewhere: faces, slopes, ridges, seams.
fn terrain() -> BoundaryShape {
    let n = 8;
    let h = terrain_height;
    let mut vertices = Vec::new();
    for j in 0..=n {
        for i in 0..=n {
            let (x, y) = (2.0 * i as f64 / n as f64, 2.0 * j as f64 / n as f64);
            vertices.push([x as f32, y as f32, h(x, y) as f32]);
        }
    }
    let mut triangles = Vec::new();
    let at = |i: u32, j: u32| j * (n + 1) + i;
    for j in 0..n {
        for i in 0..n {
            let (a, b, c, d) = (at(i, j), at(i + 1, j), at(i + 1, j + 1), at(i, j + 1));
            triangles.push([a, b, c]);
            triangles.push([a, c, d]);
        }
    }
    BoundaryShape::Mesh {
        vertices,
        triangles,
    }
}

fn terrain_height(x: f64, y: f64) -> f64 {
    (0.15 * (3.0 * x).sin() * (2.0 * y).cos()).max(0.0)
}

/// Bisection on [lo, hi] for the smallest s with `apart(s)` (60 halvings): the final
/// (lo, hi).
fn bisect(mut lo: f64, mut hi: f64, apart: &mut impl FnMut(f64) -> bool) -> (f64, f64) {
    for _ in 0..60 {
        let mid = 0.5 * (lo + hi);
        if apart(mid) {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    (lo, hi)
}

/// Grain x (rotation q) over the terrain mesh at `xm`, above local (x, y), at the twin's
/// gap `gap`: bisection on the height from the centre on the surface (the mesh is
/// two-sided: below it, the gap grows again).
fn over_mesh(
    mesh: &BoundaryShape,
    xm: DVec3,
    p: &Part,
    q: DQuat,
    x: f64,
    y: f64,
    gap: f64,
) -> DVec3 {
    let at = |z: f64| xm + DVec3::new(x, y, z);
    let mut apart = |z: f64| mesh_gap(mesh, xm, p, at(z), q) >= gap;
    at(bisect(terrain_height(x, y), 0.5, &mut apart).1)
}

/// The twin's gap between grain x at (c, q) and the mesh (its smallest contact gap).
fn mesh_gap(mesh: &BoundaryShape, xa: DVec3, x: &Part, c: DVec3, q: DQuat) -> f64 {
    let mut w = World::default();
    w.shapes.push(mesh.clone());
    w.walls
        .push(BodyInit::fixed(SHAPE_MESH, 0, xa.as_vec3().to_array(), 3.0));
    w.add(x, c, q);
    let far = CollideSettings {
        envelope: 1.0,
        friction: vec![0.5],
    };
    let contacts = bristlecone::reference::collide::detect(&w.state(), &w.shapes, &far);
    contacts.iter().map(|c| c.gap).fold(f64::INFINITY, f64::min)
}

/// Solid cylinder boundaries against boxes, hulls, capsules and cylinders, solid boxes
/// against cylinders, and a mesh against all four (`wall_support`): GPU = twin at gaps in
/// the envelope, touching and shallow, on random orientations. One world, so that one
/// pipeline variant is compiled.
#[test]
fn random_solid_and_mesh_boundary_pairs_match_the_twin() {
    let mut rng = ChaCha8Rng::seed_from_u64(23);
    let mut w = World::default();
    let mut k = 0;
    let mut spot = || {
        k += 1;
        DVec3::new(0.8 * (k % 8) as f64, 0.8 * (k / 8) as f64, 0.0)
    };
    let gaps = [0.6 * ENV as f64, 0.0, -2e-4];
    for _ in 0..3 {
        for x in partners(&mut rng) {
            for gap in gaps {
                let (qa, qx) = (rand_q(&mut rng), rand_q(&mut rng));
                let u = rand_q(&mut rng) * DVec3::X;
                let xa = spot();
                let wall = Wall::Cylinder(0.15, 0.12);
                // From the cylinder's middle outwards: side, rim or disc.
                let mid = xa + qa * DVec3::new(0.0, 0.0, 0.06);
                w.place_on_wall(&wall, xa, qa, &x, qx, u, gap, mid);
            }
        }
        for gap in gaps {
            let (qa, qx) = (rand_q(&mut rng), rand_q(&mut rng));
            let u = rand_q(&mut rng) * DVec3::X;
            let xa = spot();
            let x = Part::Cylinder(0.04, 0.025);
            w.place_on_wall(&Wall::Box([0.12, 0.09, 0.06]), xa, qa, &x, qx, u, gap, xa);
        }
    }
    let walls = w.walls.len();
    // The mesh, beside the solids, and grains over it at set gaps (bisection on height).
    let (mesh, xa) = (terrain(), DVec3::new(-3.0, 0.0, 0.0));
    w.add_mesh(&mesh, xa);
    let mut on_mesh = 0;
    for _ in 0..4 {
        for x in partners(&mut rng) {
            for gap in gaps {
                let q = rand_q(&mut rng);
                let (px, py) = (rng.random_range(0.2..1.8), rng.random_range(0.2..1.8));
                w.add(&x, over_mesh(&mesh, xa, &x, q, px, py, gap), q);
                on_mesh += 1;
            }
        }
    }
    let st = w.state();
    let c = compare_contact_sets_with(&st, &w.shapes, &settings(), ntol, atol);
    let mesh_id = walls as u32;
    let mesh_pairs = c.pairs.iter().filter(|p| p.0 == mesh_id).count();
    eprintln!(
        "random solid and mesh boundary pairs: {} pairs ({mesh_pairs} of {on_mesh} grains on \
         the mesh), {} contacts matched, {} ambiguous",
        c.pairs.len(),
        c.matched.len(),
        c.ambiguous.len()
    );
    assert!(
        c.pairs.len() >= 40 + 40,
        "{} pairs in contact",
        c.pairs.len()
    );
    assert!(mesh_pairs >= 40, "{mesh_pairs} grains touch the mesh");
    assert!(c.ambiguous.len() <= 3, "{:?}", c.ambiguous);
}

/// Built cases, each checked against its known contact set (and GPU = twin).
#[test]
fn flat_cylinder_contacts_are_manifolds() {
    let cyl = Part::Cylinder(0.05, 0.04);
    let mut w = World::default();
    let up = DQuat::IDENTITY;
    let lying = DQuat::from_rotation_x(std::f64::consts::FRAC_PI_2);
    let spin = DQuat::from_rotation_z(0.3);
    let z = DVec3::Z;
    let x0 = |k: f64| DVec3::new(0.6 * k, 0.0, 0.0);
    // 1. cylinder standing on a big box: 4 rim points.
    w.place(
        &cyl,
        spin,
        &Part::Box([0.2, 0.2, 0.02]),
        up,
        -z,
        Some(-1e-4),
        x0(0.0),
    );
    // 2. small box on the cylinder's disc: its 4 corners.
    w.place(
        &cyl,
        up,
        &Part::Box([0.03, 0.02, 0.02]),
        spin,
        z,
        Some(-1e-4),
        x0(1.0),
    );
    // 3. cylinder lying on a box face: 2 generator points.
    w.place(
        &cyl,
        lying * spin,
        &Part::Box([0.2, 0.2, 0.02]),
        up,
        -z,
        Some(-1e-4),
        x0(2.0),
    );
    // 4. capsule lying on the disc: its segment clipped to the circle, 2 points.
    w.place(
        &cyl,
        up,
        &Part::Capsule(0.01, 0.08),
        lying,
        z,
        Some(-1e-4),
        x0(3.0),
    );
    // 5. two cylinders side by side, parallel: the generators' overlap, 2 points.
    w.place(
        &cyl,
        lying,
        &Part::Cylinder(0.03, 0.02),
        lying,
        z,
        Some(-1e-4),
        x0(4.0),
    );
    // 6. coaxial stack of cylinders: rim points of both discs inside the other.
    w.place(
        &cyl,
        up,
        &Part::Cylinder(0.04, 0.02),
        spin,
        z,
        Some(-1e-4),
        x0(5.0),
    );
    // 7. crossed cylinders lying across: one point.
    let across = DQuat::from_rotation_y(std::f64::consts::FRAC_PI_2);
    w.place(
        &cyl,
        lying,
        &Part::Cylinder(0.03, 0.06),
        across,
        z,
        Some(-1e-4),
        x0(6.0),
    );
    let st = w.state();
    let c = compare_contact_sets_with(&st, &w.shapes, &settings(), ntol, atol);
    assert!(c.ambiguous.is_empty(), "{:?}", c.ambiguous);
    let feats = |pair: usize| -> Vec<u32> {
        let (a, b) = ((2 * pair) as u32, (2 * pair + 1) as u32);
        c.matched
            .iter()
            .filter(|m| (m.a, m.b) == (a, b))
            .map(|m| m.feature)
            .collect()
    };
    let x = FEATURE_X;
    assert_eq!(feats(0), vec![0, 1, 2, 3], "standing on a box");
    assert_eq!(feats(1), vec![x, x + 1, x + 2, x + 3], "box on the disc");
    assert_eq!(feats(2), vec![8, 9], "lying on a box");
    assert_eq!(feats(3), vec![x + 8, x + 9], "capsule on the disc");
    assert_eq!(feats(4), vec![8, 9], "side by side");
    let stack = feats(5);
    // The upper cylinder is narrower: its bottom rim lies on the lower disc, and the lower's
    // rim outside the upper disc.
    assert_eq!(stack, vec![x, x + 1, x + 2, x + 3], "stack");
    assert_eq!(feats(6), vec![FEATURE_WITNESS], "crossed");
    for m in &c.matched {
        assert!(
            (m.gap + 1e-4).abs() < 2e-6 || m.feature == FEATURE_WITNESS,
            "flat contact gap {} (feature {})",
            m.gap,
            m.feature
        );
    }
    eprintln!("flat cylinder contacts: {} points", c.matched.len());
}

fn incline_scene(theta: f64, seconds: f64, mu: f64, cylinder: &str) -> String {
    format!(
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
shape = "box"
half_extents = [0.4, 0.3, 0.02]
position = [0.0, 0.0, 0.02]
material = "rough"
[[body]]
shape = "cylinder"
{cylinder}
material = "slick"
[[boundary]]
kind = "plane"
point = [0.0, 0.0, 0.0]
normal = [0.0, 0.0, 1.0]
material = "rough"
"#,
        header = incline_header(theta, seconds)
    )
}

/// A cylinder standing on a box slab (μ = 0.3) on an incline of θ = 0.45 rad slides at
/// g(sinθ − μcosθ) within 1 %, without rocking, while the slab stays.
#[test]
fn standing_cylinder_slides_at_the_coulomb_rate() {
    let (mu, t, theta) = (0.3f64, 0.1, 0.45f64);
    let text = incline_scene(
        theta,
        t,
        mu,
        "radius = 0.05\nhalf_length = 0.03\nposition = [0.0, 0.0, 0.07]",
    );
    let (scene, st) = run_text(&text, "cylinder_on_box.toml");
    let q0 = DQuat::from_array(scene.bodies[1].orientation);
    assert_slides("cylinder on box", &st, q0, theta, mu, t);
}

/// A cylinder lying across an incline of θ = 0.2 rad on a box slab (μ = 0.5 > tanθ/3)
/// rolls without slipping: its centre accelerates at (2/3) g sinθ (solid cylinder,
/// I = m r²/2), its spin ω = v / r, within 1 %.
#[test]
fn lying_cylinder_rolls_at_two_thirds_g_sin_theta() {
    let (g, t, theta) = (9.81, 0.1, 0.2f64);
    let text = incline_scene(
        theta,
        t,
        0.5,
        "radius = 0.04\nhalf_length = 0.1\nposition = [0.0, 0.0, 0.08]\n\
         orientation = [0.7071067811865476, 0.0, 0.0, 0.7071067811865476]",
    );
    let (_, st) = run_text(&text, "cylinder_rolls.toml");
    let (v, w) = (d3(st.vel[2]), d3(st.omega[2]));
    let want = 2.0 / 3.0 * g * theta.sin() * t;
    eprintln!(
        "cylinder rolling: v = {:.5} m/s vs {want:.5}, ω r = {:.5}, v_z = {:.2e}",
        v.x,
        w.y * 0.04,
        v.z
    );
    assert!(
        (v.x - want).abs() <= 0.01 * want,
        "rolls: {} vs {want}",
        v.x
    );
    assert!(
        (w.y * 0.04 - v.x).abs() <= 0.01 * want,
        "slips: ω r = {}",
        w.y * 0.04
    );
    assert!(v.z.abs() < 1e-2 * want, "lifts: v_z = {}", v.z);
}

/// Built boundary cases with their contact counts and flat gaps (and GPU = twin): a box
/// flat on a solid cylinder's top (its 4 corners), the same 6 mm deep, past the box's
/// 4 mm core margin (the axis of least overlap: still its 4 corners, at the depth), a
/// cylinder standing on a solid box (its 4 rim points), a capsule lying across a seam of
/// the mesh's flat part (its segment clipped by each triangle: 2 + 2 points) and a box
/// lying across a seam (its corners over each triangle: 4 in all).
#[test]
fn flat_boundary_contacts_are_manifolds() {
    let mut w = World::default();
    let up = DQuat::IDENTITY;
    let spin = DQuat::from_rotation_z(0.3);
    let lying = DQuat::from_rotation_y(std::f64::consts::FRAC_PI_2);
    let z = DVec3::Z;
    let solid = Wall::Cylinder(0.15, 0.12);
    let small = Part::Box([0.05, 0.035, 0.02]);
    let top = |x: f64| (DVec3::new(x, 0.0, 0.0), DVec3::new(x, 0.0, 0.12));
    let (xa, at) = top(0.0);
    w.place_on_wall(&solid, xa, up, &small, spin, z, -1e-4, at);
    let (xa, at) = top(0.8);
    w.place_on_wall(&solid, xa, up, &small, spin, z, -0.006, at);
    let slab = Wall::Box([0.2, 0.2, 0.05]);
    let (xa, _) = top(1.6);
    let cyl = Part::Cylinder(0.04, 0.025);
    w.place_on_wall(&slab, xa, up, &cyl, spin, z, -1e-4, xa + 0.05 * z);
    let walls = w.walls.len() as u32;
    // The mesh's flat part (x 1.25..2, y 0..0.75 local): seams x = y + 1 in its cells.
    let (mesh, xm) = (terrain(), DVec3::new(-3.0, 0.0, 0.0));
    w.add_mesh(&mesh, xm);
    let on_mesh = |p: &Part, q: DQuat, x: f64, y: f64| over_mesh(&mesh, xm, p, q, x, y, -1e-4);
    let capsule = Part::Capsule(0.01, 0.05);
    let c = on_mesh(&capsule, lying, 1.6, 0.6);
    w.add(&capsule, c, lying);
    let c = on_mesh(&small, spin, 1.62, 0.38);
    w.add(&small, c, spin);
    let st = w.state();
    let c = compare_contact_sets_with(&st, &w.shapes, &settings(), ntol, atol);
    assert!(c.ambiguous.is_empty(), "{:?}", c.ambiguous);
    let grain = |k: u32| walls + 1 + k;

    let pts = |a: u32, b: u32| -> Vec<&Contact64> {
        c.matched.iter().filter(|m| (m.a, m.b) == (a, b)).collect()
    };
    let flat = |v: &[&Contact64], gap: f64, n: usize, what: &str| {
        let f: Vec<u32> = v.iter().map(|m| m.feature).collect();
        assert_eq!(v.len(), n, "{what}: features {f:?}");
        for m in v {
            assert!(
                (m.gap - gap).abs() < 2e-6,
                "{what}: gap {} (feature {})",
                m.gap,
                m.feature
            );
        }
    };
    flat(&pts(0, grain(0)), -1e-4, 4, "box on a solid cylinder");
    flat(&pts(1, grain(1)), -0.006, 4, "box deep in a solid cylinder");
    flat(&pts(2, grain(2)), -1e-4, 4, "cylinder on a solid box");
    flat(
        &pts(walls, grain(3)),
        -1e-4,
        4,
        "capsule across a mesh seam",
    );
    flat(&pts(walls, grain(4)), -1e-4, 4, "box across a mesh seam");
    let tris: std::collections::BTreeSet<u32> = pts(walls, grain(4))
        .iter()
        .map(|m| m.feature / 64)
        .collect();
    assert_eq!(
        tris.len(),
        2,
        "the box's corners over two triangles: {tris:?}"
    );
    eprintln!("flat boundary contacts: {} points", c.matched.len());
}

/// A box (μ = 0.3) resting across the diagonal seam of a two-triangle mesh quad on an
/// incline of θ = 0.45 rad slides at g(sinθ − μcosθ) within 1 %, without rocking or
/// lifting: each triangle gives the box corners over it, with its face normal (no ghost
/// contact at the flat inner edge).
#[test]
fn box_slides_across_a_mesh_seam_at_the_coulomb_rate() {
    let (mu, t, theta) = (0.3f64, 0.1, 0.45f64);
    let text = format!(
        "{}[[material]]\nname = \"m\"\ndensity = 1000.0\nfriction = {mu}\n\
         [[body]]\nshape = \"box\"\nhalf_extents = [0.1, 0.08, 0.03]\n\
         position = [0.5, 0.5, 0.03]\norientation = [0.0, 0.0, 0.14944759, 0.98877108]\n\
         material = \"m\"\n\
         [[boundary]]\nkind = \"mesh\"\nfile = \"quad.stl\"\nmaterial = \"m\"\n",
        incline_header(theta, t)
    );
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/scenes/box_on_mesh.toml");
    let (scene, st) = run_text(&text, path.to_str().unwrap());
    let q0 = DQuat::from_array(scene.bodies[0].orientation);
    assert_body_slides("box on a mesh seam", &st, 1, q0, theta, mu, t);
}
