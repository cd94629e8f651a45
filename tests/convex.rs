//! Convex hull bodies: the hull and its mass properties against analytic values, hull
//! and scene errors, the GPU hull narrow phase (hull–plane, hull–box container walls,
//! sphere–hull) against its f64 twin (`reference::convex` via `reference::collide::detect`),
//! and a hull on an incline.
//!
//! Tolerances of the GPU = twin comparison, as for boxes and capsules: coordinates O(0.1–1)
//! m from f32 quaternion rotations, so gaps and points agree to 2e-5 m and normals to 1e-4
//! (2e-3 below 1 cm from an edge or vertex: the normal of a short difference). A pair whose
//! contact *set* differs (an f32/f64 tie between equally deep vertices, a point at the
//! envelope) is ambiguous: at most 2 % of the random pairs, none of the built ones.

use crate::common::*;
use bristlecone::bodies::*;
use bristlecone::collide::{BoundaryShape, CollideSettings};
use bristlecone::convex::{ConvexHull, HullError};
use bristlecone::reference::collide::Contact64;
use bristlecone::scene::parse_str;
use glam::{DQuat, DVec3};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::path::Path;

fn rel(a: f64, b: f64) -> f64 {
    (a - b).abs() / b.abs().max(1e-300)
}

fn box_corners(h: [f64; 3]) -> Vec<[f64; 3]> {
    (0..8)
        .map(|k| {
            let s = |b: usize| if (k >> b) & 1 == 1 { 1.0 } else { -1.0 };
            [s(0) * h[0], s(1) * h[1], s(2) * h[2]]
        })
        .collect()
}

#[test]
fn hull_of_box_corners_is_the_box() {
    let h = [0.3, 0.2, 0.1];
    // Corners, shifted and turned, plus points inside and on faces and edges (not vertices).
    let q = DQuat::from_axis_angle(DVec3::new(1.0, 2.0, 3.0).normalize(), 0.7);
    let t = DVec3::new(1.0, -2.0, 0.5);
    let mut pts = box_corners(h);
    pts.extend([
        [0.0, 0.0, 0.0],
        [0.3, 0.0, 0.0],
        [0.1, 0.2, 0.1],
        [0.0, 0.0, -0.1],
    ]);
    let pts: Vec<[f64; 3]> = pts
        .iter()
        .map(|&p| (t + q * DVec3::from(p)).to_array())
        .collect();
    let hull = ConvexHull::new(&pts).unwrap();
    assert_eq!(hull.vertices.len(), 8, "only the corners are vertices");
    assert_eq!(hull.faces.len(), 6, "coplanar triangles merge into 6 faces");
    assert!(hull.faces.iter().all(|f| f.verts.len() == 4));
    let (m, i) = hull.mass_properties(2.0);
    let (hx, hy, hz) = (h[0], h[1], h[2]);
    let m0 = 2.0 * 8.0 * hx * hy * hz;
    assert!(rel(m, m0) < 1e-9, "mass {m} vs {m0}");
    // Principal moments ascending: about the longest axis first.
    let want = [
        m0 / 3.0 * (hy * hy + hz * hz),
        m0 / 3.0 * (hx * hx + hz * hz),
        m0 / 3.0 * (hx * hx + hy * hy),
    ];
    for k in 0..3 {
        assert!(
            rel(i[k], want[k]) < 1e-9,
            "moment {k}: {} vs {}",
            i[k],
            want[k]
        );
    }
    assert!((hull.com - t).length() < 1e-12, "centre {:?}", hull.com);
    // Body x axis = the input box's x axis (longest, least inertia), up to sign.
    let ax = hull.axes * DVec3::X;
    assert!(ax.dot(q * DVec3::X).abs() > 1.0 - 1e-12);
    // Face loops counter-clockwise seen from outside (their area vector along the normal).
    for f in &hull.faces {
        let v = |k: usize| hull.vertices[f.verts[k % f.verts.len()] as usize];
        let area: DVec3 = (0..f.verts.len()).map(|k| v(k).cross(v(k + 1))).sum();
        assert!(area.dot(f.normal) > 0.0);
    }
}

#[test]
fn tetrahedron_mass_properties() {
    // Corner tetrahedron (0, e1, e2, e3): volume 1/6, centre (1/4)³, moments about the
    // centre 1/80 on the diagonal, products −1/480 → principal 1/96, 1/96, 1/60 (axis 111).
    let hull =
        ConvexHull::new(&[[0.0; 3], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]]).unwrap();
    assert!(rel(hull.volume, 1.0 / 6.0) < 1e-9);
    assert!((hull.com - DVec3::splat(0.25)).length() < 1e-12);
    let want = [1.0 / 96.0, 1.0 / 96.0, 1.0 / 60.0];
    for (k, w) in want.iter().enumerate() {
        assert!(rel(hull.principal[k], *w) < 1e-9, "{:?}", hull.principal);
    }
    let axis = hull.axes * DVec3::Z;
    assert!(axis.dot(DVec3::ONE.normalize()).abs() > 1.0 - 1e-9);
    // Regular tetrahedron of edge a: V = a³/(6√2), every moment m a²/20.
    let a = 0.05;
    let s = a / (2.0 * 2f64.sqrt());
    let reg = [[s, s, s], [s, -s, -s], [-s, s, -s], [-s, -s, s]];
    let hull = ConvexHull::new(&reg).unwrap();
    let v0 = a * a * a / (6.0 * 2f64.sqrt());
    let (m, i) = hull.mass_properties(1000.0);
    assert!(rel(m, 1000.0 * v0) < 1e-9);
    for x in i {
        assert!(rel(x, m * a * a / 20.0) < 1e-9, "{i:?}");
    }
    assert!(rel(hull.bounding_radius(), s * 3f64.sqrt()) < 1e-9);
}

#[test]
fn hull_errors() {
    let e = |p: &[[f64; 3]]| ConvexHull::new(p).unwrap_err();
    assert_eq!(
        e(&[[0.0; 3], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]),
        HullError::TooFew(3)
    );
    let flat = [[0.0; 3], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [1.0, 1.0, 0.0]];
    assert!(matches!(e(&flat), HullError::Degenerate(w) if w.contains("coplanar")));
    let line = [[0.0; 3], [1.0, 0.0, 0.0], [2.0, 0.0, 0.0], [3.0, 0.0, 0.0]];
    assert!(matches!(e(&line), HullError::Degenerate("collinear")));
    assert!(matches!(
        e(&[[1.0; 3]; 5]),
        HullError::Degenerate("coincident")
    ));
    let mut nan = flat.to_vec();
    nan[2][1] = f64::NAN;
    assert_eq!(e(&nan), HullError::NonFinite(2));
    // 200 points on a sphere: too many vertices for the GPU layout.
    let many: Vec<[f64; 3]> = (0..200)
        .map(|k| {
            let z = 1.0 - 2.0 * (k as f64 + 0.5) / 200.0;
            let t = k as f64 * 2.399963;
            let r = (1.0 - z * z).sqrt();
            [r * t.cos(), r * t.sin(), z]
        })
        .collect();
    let err = e(&many);
    assert!(matches!(err, HullError::TooMany { max: 64, .. }), "{err}");
    assert!(err.to_string().contains("at most 64"), "{err}");
}

// ---------------------------------------------------------------- scene format

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
fn convex_scene_body_frame_and_errors() {
    // A box of corners as a hull: mass from the density, body at the centre of mass.
    let s = scene(
        r#"
[[body]]
shape = "convex"
points = [[0,0,0],[0.2,0,0],[0,0.1,0],[0.2,0.1,0],[0,0,0.05],[0.2,0,0.05],[0,0.1,0.05],[0.2,0.1,0.05]]
position = [1.0, 0.0, 0.0]
material = "m"
"#,
    )
    .unwrap();
    let b = &s.bodies[0];
    assert!(rel(b.mass, 2000.0 * 0.2 * 0.1 * 0.05) < 1e-9, "{}", b.mass);
    let p = DVec3::from_array(b.position);
    assert!((p - DVec3::new(1.1, 0.05, 0.025)).length() < 1e-12, "{p}");
    let err = |body: &str| scene(body).unwrap_err().to_string();
    let e = err(r#"
[[body]]
shape = "convex"
points = [[0,0,0],[1,0,0],[0,1,0],[1,1,0]]
position = [0.0, 0.0, 0.0]
material = "m"
"#);
    assert!(
        e.contains("t.toml:") && e.contains("body[0].points") && e.contains("coplanar"),
        "{e}"
    );
    let e = err(r#"
[[body]]
shape = "convex"
points = [[0,0,0],[1,0,0],[0,1,0],[0,0,1]]
radius = 0.1
position = [0.0, 0.0, 0.0]
material = "m"
"#);
    assert!(e.contains("body[0].radius"), "{e}");
    let e = err(r#"
[[body]]
shape = "convex"
position = [0.0, 0.0, 0.0]
material = "m"
"#);
    assert!(e.contains("body[0].points") && e.contains("file"), "{e}");
    let e = err(r#"
[[body]]
shape = "convex"
file = "missing.obj"
position = [0.0, 0.0, 0.0]
material = "m"
"#);
    assert!(e.contains("body[0].file") && e.contains("not found"), "{e}");
    // A hull overlapping a cylinder is refused at the later body (the narrow phase at zero
    // envelope), naming both.
    let e = err(r#"
[[body]]
shape = "convex"
points = [[0,0,0],[0.1,0,0],[0,0.1,0],[0,0,0.1]]
position = [0.0, 0.0, 0.0]
material = "m"
[[body]]
shape = "cylinder"
radius = 0.05
half_length = 0.1
position = [0.06, 0.0, 0.0]
material = "m"
"#);
    assert!(
        e.contains("body[1].position") && e.contains("line") && e.contains("overlaps"),
        "{e}"
    );
    // Every boundary kind meets hulls: a solid cylinder is accepted.
    let s = scene(
        r#"
[[body]]
shape = "convex"
points = [[0,0,0],[0.1,0,0],[0,0.1,0],[0,0,0.1]]
position = [0.0, 0.0, 0.0]
material = "m"
[[boundary]]
kind = "cylinder"
radius = 1.0
height = 1.0
position = [3.0, 0.0, -0.5]
material = "m"
"#,
    )
    .unwrap();
    assert_eq!(s.boundaries.len(), 1);
    // A sphere overlapping the hull is refused; one beside it is fine.
    let two = |z: f64| {
        scene(&format!(
            r#"
[[body]]
shape = "convex"
points = [[0,0,0],[0.1,0,0],[0,0.1,0],[0,0,0.1]]
position = [0.0, 0.0, 0.0]
material = "m"
[[body]]
radius = 0.05
position = [0.02, 0.02, {z}]
material = "m"
"#
        ))
    };
    assert!(two(-0.06).is_ok());
    let e = two(-0.04).map(|_| ()).unwrap_err().to_string();
    assert!(
        e.contains("body[1].position") && e.contains("overlaps"),
        "{e}"
    );
    // Hull on hull and hull on box: exact (the polytope narrow phase at zero envelope).
    let stacked = |second: &str, z: f64| {
        scene(&format!(
            r#"
[[body]]
shape = "convex"
points = [[0,0,0],[0.1,0,0],[0,0.1,0],[0.1,0.1,0],[0,0,0.1],[0.1,0,0.1],[0,0.1,0.1],[0.1,0.1,0.1]]
position = [0.0, 0.0, 0.0]
material = "m"
[[body]]
{second}
position = [0.05, 0.05, {z}]
material = "m"
"#
        ))
    };
    let rod = "shape = \"capsule\"\nradius = 0.02\nhalf_length = 0.04\norientation = [0.70710678, 0.0, 0.0, 0.70710678]";
    assert!(stacked(rod, 0.1201).is_ok());
    let e = stacked(rod, 0.119).map(|_| ()).unwrap_err().to_string();
    assert!(
        e.contains("body[1].position") && e.contains("overlaps"),
        "{e}"
    );
    let cube = "shape = \"convex\"\npoints = [[-0.05,-0.05,-0.05],[0.05,-0.05,-0.05],[-0.05,0.05,-0.05],[0.05,0.05,-0.05],[-0.05,-0.05,0.05],[0.05,-0.05,0.05],[-0.05,0.05,0.05],[0.05,0.05,0.05]]";
    let bx = "shape = \"box\"\nhalf_extents = [0.05, 0.05, 0.05]";
    for second in [cube, bx] {
        assert!(stacked(second, 0.1501).is_ok(), "{second}");
        let e = stacked(second, 0.149).map(|_| ()).unwrap_err().to_string();
        assert!(
            e.contains("body[1].position") && e.contains("overlaps"),
            "{second}: {e}"
        );
    }
}

/// `file = "part.obj"`: the hull of the file's vertices (a cube of side 0.1 written as 12
/// triangles), found relative to the scene file; mass and moments of the cube.
#[test]
fn convex_from_an_obj_file() {
    use bristlecone::scene::{load, BodyShape};
    let dir = tempfile::tempdir().unwrap();
    let mut obj = String::new();
    for v in box_corners([0.05; 3]) {
        obj += &format!("v {} {} {}\n", v[0], v[1], v[2]);
    }
    // Faces (1-based) of the corner numbering k = x + 2y + 4z.
    for f in [
        [1, 3, 4, 2],
        [5, 6, 8, 7],
        [1, 2, 6, 5],
        [3, 7, 8, 4],
        [1, 5, 7, 3],
        [2, 4, 8, 6],
    ] {
        obj += &format!(
            "f {} {} {}\nf {} {} {}\n",
            f[0], f[1], f[2], f[0], f[2], f[3]
        );
    }
    std::fs::write(dir.path().join("cube.obj"), obj).unwrap();
    let path = dir.path().join("s.toml");
    let body = "[[body]]\nshape = \"convex\"\nfile = \"cube.obj\"\nposition = [0.0, 0.0, 0.5]\nmaterial = \"m\"\n";
    std::fs::write(&path, format!("{HEAD}{body}")).unwrap();
    let s = load(&path).unwrap();
    let BodyShape::Convex(h) = &s.bodies[0].shape else {
        panic!("not a hull")
    };
    assert_eq!((h.vertices.len(), h.faces.len()), (8, 6));
    // OBJ coordinates are f32 (tobj): ~3e-8 relative rounding per coordinate.
    assert!(
        rel(s.bodies[0].mass, 2000.0 * 1e-3) < 1e-6,
        "{}",
        s.bodies[0].mass
    );
    assert!(rel(s.bodies[0].inertia[0], 2.0 * 0.05 * 0.05 * 2.0 / 3.0) < 1e-6);
}

// ---------------------------------------------------------------- GPU = twin

const ENV: f32 = 0.01;

fn settings() -> CollideSettings {
    CollideSettings {
        envelope: ENV,
        friction: vec![0.5],
    }
}

/// A random hull: `n` points in a ball of radius `r` (stretched along x).
fn random_hull(rng: &mut ChaCha8Rng, n: usize, r: f64) -> ConvexHull {
    let pts: Vec<[f64; 3]> = (0..n)
        .map(|_| {
            let v = DVec3::new(
                rng.random_range(-1.0..1.0),
                rng.random_range(-1.0..1.0),
                rng.random_range(-1.0..1.0),
            );
            (v.normalize() * r * rng.random_range(0.7..1.0) * DVec3::new(1.4, 1.0, 0.8)).to_array()
        })
        .collect();
    ConvexHull::new(&pts).unwrap()
}

/// A tilted plane, a box container, one hull at (c, q), spheres (centre, radius).
fn world(
    hull: &ConvexHull,
    c: DVec3,
    q: DQuat,
    plane_z: f64,
    spheres: &[(DVec3, f64)],
) -> (BodyState, Vec<BoundaryShape>) {
    let shapes = vec![
        BoundaryShape::Plane,
        BoundaryShape::BoxContainer {
            half_extents: [0.3, 0.3, 0.3],
            open_top: false,
        },
        hull.grain_shape(),
    ];
    let f = |v: DVec3| [v.x as f32, v.y as f32, v.z as f32];
    let mut inits = vec![
        BodyInit {
            orientation: DQuat::from_rotation_y(0.2).as_quat().to_array(),
            ..BodyInit::fixed(SHAPE_PLANE, 0, [0.0, 0.0, plane_z as f32], 0.0)
        },
        BodyInit::fixed(SHAPE_BOX_CONTAINER, 1, [0.0, 0.0, 0.0], 0.6),
        BodyInit {
            orientation: q.as_quat().to_array(),
            shape: SHAPE_CONVEX,
            shape_index: 2,
            radius: hull.bounding_radius() as f32,
            ..BodyInit::sphere(f(c), 1.0, 1000.0)
        },
    ];
    for &(p, r) in spheres {
        inits.push(BodyInit::sphere(f(p), r as f32, 1000.0));
    }
    (BodyState::from_inits(&inits), shapes)
}

fn ntol(tc: &Contact64) -> f64 {
    if tc.gap.abs() < 1e-2 {
        2e-3
    } else {
        1e-4
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

/// Random hulls (8–40 points) among spheres in a small box container cut by a tilted
/// plane: every partner (plane, container walls, spheres outside, on and inside the hull).
#[test]
fn gpu_convex_contacts_match_the_twin_on_random_configurations() {
    let mut rng = ChaCha8Rng::seed_from_u64(5);
    let (mut pairs, mut amb, mut points) = (0, 0, 0);
    let mut kinds = std::collections::BTreeMap::new();
    for _ in 0..6 {
        let n = rng.random_range(8..40);
        let hull = random_hull(&mut rng, n, 0.15);
        let c = DVec3::new(
            rng.random_range(-0.22..0.22),
            rng.random_range(-0.22..0.22),
            rng.random_range(-0.22..0.22),
        );
        let spheres: Vec<(DVec3, f64)> = (0..60)
            .map(|_| {
                let p = DVec3::new(
                    rng.random_range(-0.27..0.27),
                    rng.random_range(-0.27..0.27),
                    rng.random_range(-0.27..0.27),
                );
                (p, rng.random_range(0.01..0.04))
            })
            .collect();
        let (state, shapes) = world(&hull, c, rand_q(&mut rng), c.z - 0.1, &spheres);
        let cmp = compare_contact_sets(&state, &shapes, &settings(), ntol);
        pairs += cmp.pairs.len();
        amb += cmp.ambiguous.len();
        for m in &cmp.matched {
            let k = (state.info[m.a as usize][2], state.info[m.b as usize][2]);
            if k.0 == SHAPE_CONVEX || k.1 == SHAPE_CONVEX {
                *kinds.entry(k).or_insert(0) += 1;
                points += 1;
            }
        }
    }
    eprintln!("random hulls: {amb} ambiguous of {pairs} pairs; hull contacts per kind {kinds:?}");
    for need in [
        (SHAPE_PLANE, SHAPE_CONVEX),
        (SHAPE_BOX_CONTAINER, SHAPE_CONVEX),
        (SHAPE_CONVEX, SHAPE_SPHERE),
    ] {
        let n = kinds.get(&need).copied().unwrap_or(0);
        assert!(n >= 5, "{need:?} met {n} times: {kinds:?}");
    }
    assert!(points > 40);
    assert!(
        amb as f64 <= 0.02 * pairs as f64,
        "{amb} of {pairs} pairs differ"
    );
}

/// Built cases: a cube hull resting flat on the plane (4 points, the bottom corners), a
/// sphere on a face, on an edge, on a vertex and with its centre inside the hull.
#[test]
fn gpu_convex_contacts_match_the_twin_on_built_cases() {
    let h = 0.05;
    let hull = ConvexHull::new(&box_corners([h, h, h])).unwrap();
    let c = DVec3::new(0.0, 0.0, -0.1);
    let (x, y, z) = (DVec3::X, DVec3::Y, DVec3::Z);
    let r = 0.02;
    let spheres = vec![
        (c + z * (h + r + 0.001), r), // on the top face
        (
            c + (x + y).normalize() * (h * 2f64.sqrt() + r - 0.002) + y * 0.0,
            r,
        ), // on a vertical edge
        (
            c + DVec3::new(-1.0, -1.0, 1.0).normalize() * (h * 3f64.sqrt() + r - 0.001),
            r,
        ), // on a vertex
        (c + DVec3::new(0.0, -0.03, 0.0), r), // centre inside
    ];
    // The plane level (untilted) at the cube's bottom face: every bottom corner touches.
    let (mut state, shapes) = world(&hull, c, DQuat::IDENTITY, c.z - h, &spheres);
    state.rot[0] = [0.0, 0.0, 0.0, 1.0];
    let cmp = compare_contact_sets(&state, &shapes, &settings(), ntol);
    assert!(cmp.ambiguous.is_empty(), "ambiguous: {:?}", cmp.ambiguous);
    let hull_body = 2u32;
    let plane: Vec<&Contact64> = cmp.matched.iter().filter(|m| m.a == 0).collect();
    assert_eq!(plane.len(), 4, "resting flat: 4 corners");
    assert!(plane.iter().all(|m| m.gap.abs() < 1e-6 && m.b == hull_body));
    for (k, &(p, r)) in spheres.iter().enumerate() {
        let b = hull_body + 1 + k as u32;
        let m = cmp
            .matched
            .iter()
            .find(|m| m.a == hull_body && m.b == b)
            .unwrap_or_else(|| panic!("sphere {k}: no contact"));
        // The normal from the hull to the sphere; the gap from the geometry.
        let want_gap = match k {
            0 => 0.001,
            1 => -0.002,
            2 => -0.001,
            _ => -(h - 0.03) - r,
        };
        // f32 inputs (positions, the hull's data): 1e-6.
        assert!(
            (m.gap - want_gap).abs() < 1e-6,
            "sphere {k}: gap {} vs {want_gap}",
            m.gap
        );
        if k < 3 {
            assert!(
                (m.normal - (p - c).normalize()).length() < 1e-5,
                "sphere {k}: {}",
                m.normal
            );
        } else {
            assert!((m.normal + y).length() < 1e-6, "inside: {}", m.normal);
        }
    }
}

// ---------------------------------------------------------------- physics

/// A frustum hull (square base 10 cm, top 6 cm, 5 cm high; μ = 0.3) resting on its base
/// on a plane under gravity tilted by θ (the incline's frame), exact Coulomb cone:
/// (velocity, rotation angle) after `seconds`.
fn frustum_incline(theta: f64, seconds: f64) -> (DVec3, f64, DVec3) {
    let text = format!(
        r#"{header}
[[material]]
name = "m"
density = 1000.0
friction = 0.3
[[body]]
shape = "convex"
points = [[-0.05,-0.05,0],[0.05,-0.05,0],[0.05,0.05,0],[-0.05,0.05,0],
          [-0.03,-0.03,0.05],[0.03,-0.03,0.05],[0.03,0.03,0.05],[-0.03,0.03,0.05]]
position = [0.0, 0.0, 0.0]
material = "m"
[[boundary]]
kind = "plane"
point = [0.0, 0.0, 0.0]
normal = [0.0, 0.0, 1.0]
material = "m"
"#,
        header = incline_header(theta, seconds)
    );
    let (scene, st) = run_text(&text, "frustum.toml");
    let angle = turned(DQuat::from_array(scene.bodies[0].orientation), st.rot[1]);
    let p0 = DVec3::from_array(scene.bodies[0].position);
    (d3(st.vel[1]), angle, d3(st.pos[1]) - p0)
}

/// Sticks (stays put) for tanθ < μ; slides at a = g(sinθ − μ cosθ) within 1 % above,
/// without rocking (rotation < 1e-4 rad). Budget: 2 × 100 steps of one hull.
#[test]
fn hull_on_incline_sticks_below_and_slides_above_the_friction_angle() {
    let (g, mu, t) = (9.81, 0.3f64, 0.1);
    let below = mu.atan() - 0.05;
    let (v, rot, dx) = frustum_incline(below, t);
    eprintln!("hull incline below: v = {v}, rotation {rot:.2e}, drift {dx}");
    assert!(v.length() < 1e-3, "sticks: v = {v}");
    assert!(dx.length() < 1e-4, "stays put: moved {dx}");
    assert!(rot < 1e-4, "rotation {rot}");
    let above = mu.atan() + 0.15;
    let (v, rot, _) = frustum_incline(above, t);
    let want = g * (above.sin() - mu * above.cos()) * t;
    eprintln!(
        "hull incline above: v = {:.5} m/s vs {want:.5}, v_z = {:.2e}, rotation {rot:.2e}",
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

// ---------------------------------------------------------------- output

/// Hull surfaces in VTK: read back with vtkio, one polygon per face whose vertices lie on
/// that face's plane at the pose, cell data `id` per hull.
#[test]
fn hull_surfaces_read_back_with_vtkio() {
    use bristlecone::io::hulls::write_hulls;
    use vtkio::model::{Attribute, DataSet, IOBuffer, Piece, VertexNumbers, Vtk};
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("h.vtp");
    let mut rng = ChaCha8Rng::seed_from_u64(3);
    let hull = random_hull(&mut rng, 20, 0.1);
    let q = DQuat::from_euler(glam::EulerRot::XYZ, 0.3, -0.7, 1.1);
    let c = [0.1f32, 0.2, 0.3];
    write_hulls(&path, &[(7, &hull)], &[(c, q.as_quat().to_array())]).unwrap();
    let piece = match Vtk::import(&path).unwrap().data {
        DataSet::PolyData { mut pieces, .. } => match pieces.remove(0) {
            Piece::Inline(p) => *p,
            other => panic!("unexpected piece {other:?}"),
        },
        other => panic!("not poly data: {other:?}"),
    };
    let IOBuffer::F32(pts) = piece.points else {
        panic!("points not f32")
    };
    assert_eq!(pts.len(), 3 * hull.vertices.len());
    let Some(VertexNumbers::XML {
        connectivity,
        offsets,
    }) = piece.polys
    else {
        panic!("no XML polygons")
    };
    assert_eq!(offsets.len(), hull.faces.len());
    let qf = q.as_quat();
    let q = DQuat::from_xyzw(qf.x as f64, qf.y as f64, qf.z as f64, qf.w as f64);
    let cw = DVec3::new(c[0] as f64, c[1] as f64, c[2] as f64);
    let mut start = 0usize;
    for (f, &end) in hull.faces.iter().zip(&offsets) {
        let (n, d) = (q * f.normal, f.offset + (q * f.normal).dot(cw));
        for &v in &connectivity[start..end as usize] {
            let p = &pts[3 * v as usize..3 * v as usize + 3];
            let x = DVec3::new(p[0] as f64, p[1] as f64, p[2] as f64);
            assert!((n.dot(x) - d).abs() < 1e-6, "vertex {v} off its face plane");
        }
        start = end as usize;
    }
    let ids = piece
        .data
        .cell
        .iter()
        .find_map(|a| match a {
            Attribute::DataArray(d) if d.name == "id" => Some(d.data.clone()),
            _ => None,
        })
        .unwrap();
    let IOBuffer::U32(ids) = ids else {
        panic!("ids {ids:?}")
    };
    assert!(ids.len() == hull.faces.len() && ids.iter().all(|&x| x == 7));
}
