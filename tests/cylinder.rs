//! Cylinder bodies: scene format and mass properties, the GPU cylinder narrow phase against
//! its f64 twin (`reference::cylinder` via `reference::collide::detect`), a cylinder standing
//! on its end and one rolling down an incline against the rigid-body answers, VTK surfaces.
//!
//! Tolerances of the GPU = twin comparison (f32 kernels vs the f64 twin on the same f32
//! inputs), as for capsules (tests/capsule.rs): gaps and points to 2e-5 m, normals to 1e-4
//! (2e-3 below 1 cm gaps, or when a sphere's centre is within 1 cm of the cylinder's
//! surface point: a normal from a short difference). A pair whose contact *set* differs (an f32/f64 decision flipped:
//! the flat-disc threshold, a point at the envelope) is ambiguous; at most 2 % of the
//! contacting pairs may be, and none of the built cases.

use crate::common::*;
use bristlecone::bodies::*;
use bristlecone::collide::{BoundaryShape, CollideSettings};
use bristlecone::gpu::shared_context;
use bristlecone::reference::collide::{detect, Contact64};
use bristlecone::reference::cylinder::cylinder_mass;
use bristlecone::scene::{parse_str, BodyShape};
use bristlecone::setup;
use bristlecone::step::Simulation;
use glam::{DQuat, DVec3};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::collections::BTreeMap;
use std::f64::consts::{FRAC_PI_2, PI};
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

/// Mass and moments by 4-point Gauss–Legendre in cylindrical coordinates (ρ, z; the
/// integrands ρ, ρ³, ρz² are polynomials of degree ≤ 3 in each): m = ∫ρ_m 2πρ dρ dz,
/// I_z = ∫ρ_m 2πρ³, I_x = ∫ρ_m π(ρ³ + 2ρz²) (the mean of y² over a ring is ρ²/2): an
/// independent route to the closed form.
fn integrated(dens: f64, r: f64, hl: f64) -> (f64, [f64; 3]) {
    let x = [0.3399810435848563, 0.8611363115940526];
    let w = [0.6521451548625461, 0.3478548451374538];
    let nodes: Vec<(f64, f64)> = (0..4)
        .map(|k| (if k < 2 { -x[k] } else { x[k - 2] }, w[k % 2]))
        .collect();
    let (mut m, mut ix, mut iz) = (0.0, 0.0, 0.0);
    for &(a, wa) in &nodes {
        let rho = 0.5 * r * (a + 1.0);
        for &(b, wb) in &nodes {
            let z = hl * b;
            let dv = wa * wb * 0.5 * r * hl * dens;
            m += dv * 2.0 * PI * rho;
            iz += dv * 2.0 * PI * rho.powi(3);
            ix += dv * PI * (rho.powi(3) + 2.0 * rho * z * z);
        }
    }
    (m, [ix, ix, iz])
}

#[test]
fn cylinder_mass_properties_are_analytic() {
    let s = scene(
        "[[body]]\nshape = \"cylinder\"\nradius = 0.05\nhalf_length = 0.12\nposition = [0.0, 0.0, 1.0]\nmaterial = \"m\"\n",
    )
    .unwrap();
    let b = &s.bodies[0];
    let want = BodyShape::Cylinder {
        radius: 0.05,
        half_length: 0.12,
    };
    assert_eq!(b.shape, want);
    for (r, hl) in [(0.05, 0.12), (1.0, 0.01), (0.3, 7.0)] {
        let (m, i) = cylinder_mass(2000.0, r, hl);
        let (mw, iw) = integrated(2000.0, r, hl);
        assert!((m - mw).abs() <= 1e-9 * mw, "mass {m} vs {mw}");
        for k in 0..3 {
            let ok = (i[k] - iw[k]).abs() <= 1e-9 * iw[k];
            assert!(ok, "I[{k}] {} vs {}", i[k], iw[k]);
        }
    }
    assert_eq!((b.mass, b.inertia), cylinder_mass(2000.0, 0.05, 0.12));
    assert!((b.shape.bounding_radius() - 0.13).abs() < 1e-15);
}

#[test]
fn cylinder_scene_errors_name_line_and_field() {
    let c = "[[body]]\nshape = \"cylinder\"\nradius = 0.1\nhalf_length = 0.2\nposition = [0.0, 0.0, 1.0]\nmaterial = \"m\"\n";
    let cases = [
        (c.replace("half_length = 0.2\n", ""), "body[0]", "half_length"),
        (c.replace("= 0.2", "= -0.2"), "body[0].half_length", "positive"),
        (c.replace("radius = 0.1", "radius = 0.0"), "body[0].radius", "positive"),
        (
            c.replace("radius = 0.1\n", "radius = 0.1\nhalf_extents = [1.0, 1.0, 1.0]\n"),
            "body[0]",
            "half_extents",
        ),
        // A sphere whose centre is 0.12 from the axis at mid-height (radii 0.1 + 0.05).
        (
            format!("{c}[[body]]\nradius = 0.05\nposition = [0.12, 0.0, 1.0]\nmaterial = \"m\"\n"),
            "body[1].position",
            "overlaps",
        ),
        // A second cylinder and a box overlapping it (the narrow phase at zero envelope).
        (
            format!("{c}{}", c.replace("[0.0, 0.0, 1.0]", "[0.19, 0.0, 1.0]")),
            "body[1].position",
            "overlaps",
        ),
        (
            format!("[[body]]\nshape = \"box\"\nhalf_extents = [0.1, 0.1, 0.1]\nposition = [0.0, 0.0, 1.25]\nmaterial = \"m\"\n{c}"),
            "body[1].position",
            "overlaps",
        ),
    ];
    for (text, field, msg) in cases {
        let e = scene(&text).expect_err(&text).to_string();
        assert!(e.contains("t.toml:"), "{e}");
        assert!(e.contains(field), "{field} not in {e}");
        assert!(e.contains(msg), "{msg} not in {e}");
    }
    // The same sphere beyond the rim (0.16 from the axis): accepted, with a plane.
    let ok = format!("{c}[[body]]\nradius = 0.05\nposition = [0.16, 0.0, 1.0]\nmaterial = \"m\"\n[[boundary]]\nkind = \"plane\"\npoint = [0.0, 0.0, 0.0]\nnormal = [0.0, 0.0, 1.0]\nmaterial = \"m\"\n");
    scene(&ok).unwrap();
    // With a second cylinder, a box, a capsule and a hull clear of it: accepted.
    let others = "[[body]]\nshape = \"box\"\nhalf_extents = [0.1, 0.1, 0.1]\nposition = [0.0, 0.0, 1.31]\nmaterial = \"m\"\n\
        [[body]]\nshape = \"capsule\"\nradius = 0.05\nhalf_length = 0.1\nposition = [0.0, 0.5, 1.0]\nmaterial = \"m\"\n\
        [[body]]\nshape = \"convex\"\npoints = [[0,0,0],[0.1,0,0],[0,0.1,0],[0,0,0.1]]\nposition = [0.0, -0.5, 1.0]\nmaterial = \"m\"\n";
    let cyl2 = c.replace("[0.0, 0.0, 1.0]", "[-0.21, 0.0, 1.0]");
    scene(&format!("{ok}{cyl2}{others}")).unwrap();
}

// ---------------------------------------------------------------- GPU = twin

const ENV: f32 = 0.01;

/// Three boundaries (a plane at height `plane_z` tilted by `tilt` about y, a box container
/// of half size 1.5 about the origin, a cylinder container of radius 1.6 from z = −1.4 to
/// 1.6), one cylinder (centre, orientation, radius, half length), then spheres.
fn world(
    plane: (f64, f64),
    cyl: (DVec3, DQuat, f32, f32),
    spheres: &[(DVec3, f32)],
) -> (BodyState, Vec<BoundaryShape>) {
    let f3 = |v: DVec3| [v.x as f32, v.y as f32, v.z as f32];
    let shapes = vec![
        BoundaryShape::Plane,
        BoundaryShape::BoxContainer {
            half_extents: [1.5, 1.5, 1.5],
            open_top: false,
        },
        BoundaryShape::CylinderContainer {
            radius: 1.6,
            height: 3.0,
            open_top: false,
        },
        BoundaryShape::GrainCylinder {
            radius: cyl.2,
            half_length: cyl.3,
        },
    ];
    let mut inits = vec![
        BodyInit {
            orientation: DQuat::from_rotation_y(plane.1).as_quat().to_array(),
            ..BodyInit::fixed(SHAPE_PLANE, 0, [0.0, 0.0, plane.0 as f32], 0.0)
        },
        BodyInit::fixed(SHAPE_BOX_CONTAINER, 1, [0.0, 0.0, 0.0], 2.6),
        BodyInit::fixed(SHAPE_CYLINDER_CONTAINER, 2, [0.0, 0.0, -1.4], 3.4),
        BodyInit {
            orientation: cyl.1.normalize().as_quat().to_array(),
            shape: SHAPE_CYLINDER,
            shape_index: 3,
            radius: cyl.2.hypot(cyl.3),
            ..BodyInit::sphere(f3(cyl.0), 1.0, 1000.0)
        },
    ];
    for &(c, r) in spheres {
        inits.push(BodyInit::sphere(f3(c), r, 1000.0));
    }
    (BodyState::from_inits(&inits), shapes)
}

fn settings() -> CollideSettings {
    CollideSettings {
        envelope: ENV,
        friction: vec![0.5],
    }
}

/// Per pair (`common::compare_contact_sets`); returns the pairs compared, the ambiguous
/// ones and the cylinder's contacting pairs per partner kind.
fn compare(state: &BodyState, shapes: &[BoundaryShape]) -> (usize, usize, BTreeMap<u32, usize>) {
    // A cylinder–sphere normal is the direction from a surface point to the sphere's
    // centre, gap + r_s long: short differences lose relative precision too.
    let centre_dist = |tc: &Contact64| match state.info[tc.b as usize][2] {
        SHAPE_SPHERE if tc.a >= 3 => tc.gap + state.pos[tc.b as usize][3] as f64,
        _ => f64::INFINITY,
    };
    let ntol = |tc: &Contact64| {
        if tc.gap.abs() < 1e-2 || centre_dist(tc) < 1e-2 {
            2e-3
        } else {
            1e-4
        }
    };
    let c = compare_contact_sets(state, shapes, &settings(), ntol);
    let mut kinds = BTreeMap::new();
    for &(a, b) in &c.pairs {
        if b == 3 || a == 3 {
            let other = if a == 3 { b } else { a };
            *kinds.entry(state.info[other as usize][2]).or_insert(0) += 1;
        }
    }
    (c.pairs.len(), c.ambiguous.len(), kinds)
}

fn rand_q(rng: &mut ChaCha8Rng) -> DQuat {
    let v: [f64; 4] = std::array::from_fn(|_| rng.random_range(-1.0..1.0));
    DQuat::from_array(v).normalize()
}

/// One cylinder per round (the narrow phase has no cylinder–cylinder pair) near a plane,
/// a box-container wall, the cylinder container's wall or free, upright, lying or at a
/// random orientation, with 30 spheres packed around it: every partner is met, shallow
/// and deep, flat discs and rims.
#[test]
fn gpu_cylinder_contacts_match_the_twin_on_random_configurations() {
    let mut rng = ChaCha8Rng::seed_from_u64(12);
    let (mut total, mut amb) = (0, 0);
    let mut kinds = BTreeMap::new();
    for round in 0..12 {
        let (r, hl): (f32, f32) = (rng.random_range(0.05..0.2), rng.random_range(0.03..0.25));
        let spin = DQuat::from_rotation_z(rng.random_range(0.0..6.3));
        let q = match rng.random_range(0..4) {
            0 => spin,
            1 => DQuat::from_rotation_x(FRAC_PI_2) * spin,
            2 => DQuat::from_rotation_x(rng.random_range(-0.3..0.3)) * spin,
            _ => rand_q(&mut rng),
        };
        // The cylinder's half extent along a wall's normal n, less a random gap.
        let a = q * DVec3::Z;
        let ext = |n: DVec3| hl as f64 * a.dot(n).abs() + r as f64 * a.cross(n).length();
        let mut u = |lo: f64, hi: f64| rng.random_range(lo..hi);
        let c = match round % 4 {
            0 => {
                let n = DQuat::from_rotation_y(0.05) * DVec3::Z;
                let (x, y) = (u(-1.0, 1.0), u(-1.0, 1.0));
                let z = -1.2 - 0.05f64.tan() * x + (ext(n) + u(-0.03, 0.008)) / 0.05f64.cos();
                DVec3::new(x, y, z)
            }
            1 => DVec3::new(
                1.5 - ext(DVec3::X) - u(-0.03, 0.008),
                u(-0.8, 0.8),
                u(-0.8, 0.8),
            ),
            2 => {
                let phi = u(0.6, 1.0);
                let n = DVec3::new(phi.cos(), phi.sin(), 0.0);
                n * (1.6 - ext(n) - u(-0.03, 0.008)) + DVec3::Z * u(-0.8, 0.8)
            }
            _ => DVec3::new(u(-0.5, 0.5), u(-0.5, 0.5), u(-0.5, 0.5)),
        };
        let spheres: Vec<(DVec3, f32)> = (0..30)
            .map(|_| {
                let rs = rng.random_range(0.03..0.1);
                let d = rand_q(&mut rng) * DVec3::X;
                let dist = (r as f64 + rs as f64) * rng.random_range(0.5..1.6);
                (
                    c + d * dist + q * DVec3::Z * rng.random_range(-hl..hl) as f64,
                    rs,
                )
            })
            .collect();
        let (state, shapes) = world((-1.2, 0.05), (c, q, r, hl), &spheres);
        let (n, a, k) = compare(&state, &shapes);
        total += n;
        amb += a;
        for (key, v) in k {
            *kinds.entry(key).or_insert(0) += v;
        }
    }
    eprintln!("random cylinders: {amb} ambiguous of {total} pairs; cylinder partners {kinds:?}");
    for need in [
        SHAPE_SPHERE,
        SHAPE_PLANE,
        SHAPE_BOX_CONTAINER,
        SHAPE_CYLINDER_CONTAINER,
    ] {
        let met = kinds.get(&need).copied().unwrap_or(0);
        assert!(met >= 3, "partner kind {need} met too rarely: {kinds:?}");
    }
    assert!(
        amb as f64 <= 0.02 * total as f64,
        "{amb} of {total} pairs differ in their contact sets"
    );
}

/// The twin's contacts of the pair (a, b) after checking GPU = twin with no ambiguity.
fn built(
    plane: (f64, f64),
    cyl: (DVec3, DQuat, f32, f32),
    spheres: &[(DVec3, f32)],
) -> impl Fn(u32, u32) -> Vec<Contact64> {
    let (state, shapes) = world(plane, cyl, spheres);
    let (_, amb, _) = compare(&state, &shapes);
    assert_eq!(amb, 0, "ambiguous pairs in a built case");
    let twin = detect(&state, &shapes, &settings());
    move |a, b| {
        twin.iter()
            .filter(|c| c.a == a && c.b == b)
            .copied()
            .collect()
    }
}

fn close(a: DVec3, b: DVec3, tol: f64) -> bool {
    (a - b).length() <= tol
}

/// Built cases with a clear answer (f32 inputs: gaps to 1e-6 m).
#[test]
fn gpu_cylinder_contacts_match_the_twin_on_touching_deep_and_parallel_cases() {
    let (r, hl) = (0.1f32, 0.2f32);
    let (rd, hd) = (r as f64, hl as f64);
    let far = (-5.0, 0.0);
    // A: standing on the plane (z = −1.2, level), 1 mm above, turned 0.3 about z: the end
    // disc's 4 rim points at body ±x, ±y. Spheres: 5 mm into the top face, touching the
    // side, 2 mm off the top rim diagonally, and a centre inside near the side.
    let c = DVec3::new(0.3, 0.2, -1.2 + hd + 0.001);
    let q = DQuat::from_rotation_z(0.3);
    let top = c.z + hd;
    let x = q * DVec3::X;
    let diag = (x + DVec3::Z).normalize();
    let spheres = [
        (DVec3::new(c.x, c.y, top + 0.045), 0.05f32),
        (c - x * (rd + 0.05), 0.05),
        (c + DVec3::Z * hd + x * rd + diag * 0.052, 0.05),
        (c + q * DVec3::Y * (rd - 0.01), 0.02),
    ];
    let of = built((-1.2, 0.0), (c, q, r, hl), &spheres);
    let st = of(0, 3);
    assert_eq!(
        st.iter().map(|p| p.feature).collect::<Vec<_>>(),
        [0, 1, 2, 3]
    );
    for (k, p) in st.iter().enumerate() {
        let rim = q * DQuat::from_rotation_z(FRAC_PI_2 * k as f64) * DVec3::X * rd;
        let want = c + rim - DVec3::Z * (hd + 0.0005);
        assert!((p.gap - 0.001).abs() < 1e-6, "standing gap {}", p.gap);
        assert!(
            close(p.normal, DVec3::Z, 1e-9) && close(c + p.rb, want, 1e-6),
            "{p:?}"
        );
    }
    let gaps: Vec<(f64, DVec3)> = (4..8)
        .map(|b| of(3, b))
        .map(|v| (v[0].gap, v[0].normal))
        .collect();
    assert!(
        (gaps[0].0 + 0.005).abs() < 1e-6 && close(gaps[0].1, DVec3::Z, 1e-6),
        "top {gaps:?}"
    );
    assert!(
        gaps[1].0.abs() < 1e-6 && close(gaps[1].1, -x, 1e-6),
        "side {gaps:?}"
    );
    assert!(
        (gaps[2].0 - 0.002).abs() < 1e-6 && close(gaps[2].1, diag, 1e-5),
        "rim {gaps:?}"
    );
    let inside = q * DVec3::Y;
    assert!(
        (gaps[3].0 + 0.03).abs() < 1e-6 && close(gaps[3].1, inside, 1e-6),
        "inside {gaps:?}"
    );

    // B: lying (axis along y) on the box container's floor (z = −1.5), touching, rolled
    // 0.7 about its axis: two points along the generator (floor = wall 4: 40 + 8 + e).
    let q = DQuat::from_rotation_x(FRAC_PI_2) * DQuat::from_rotation_z(0.7);
    let c = DVec3::new(-0.4, 0.1, -1.5 + rd);
    let of = built(far, (c, q, r, hl), &[]);
    let fl = of(1, 3);
    assert_eq!(fl.iter().map(|p| p.feature).collect::<Vec<_>>(), [48, 49]);
    for p in &fl {
        assert!(
            p.gap.abs() < 1e-6 && close(p.normal, DVec3::Z, 1e-9),
            "{p:?}"
        );
        assert!(
            (p.rb.z + rd).abs() < 1e-6 && (p.rb.y.abs() - hd).abs() < 1e-6,
            "{p:?}"
        );
    }

    // C: tilted 0.3 rad about x, the lower rim 5 mm into the level plane: one point.
    let q = DQuat::from_rotation_x(0.3);
    let low = hd * 0.3f64.cos() + rd * 0.3f64.sin();
    let c = DVec3::new(0.0, -0.3, -1.2 + low - 0.005);
    let of = built((-1.2, 0.0), (c, q, r, hl), &[]);
    let rim = of(0, 3);
    assert_eq!(rim.len(), 1, "on its rim: {rim:?}");
    assert!(
        rim[0].feature == 8 && (rim[0].gap + 0.005).abs() < 1e-6,
        "{rim:?}"
    );

    // D: upright against the cylinder container's wall (1 mm), standing 1 mm above its
    // floor (z = −1.4): side points at both ends (0, 1), the disc's 4 floor points (10..13).
    let phi = 0.8f64;
    let rho = 1.6 - rd - 0.001;
    let c = DVec3::new(rho * phi.cos(), rho * phi.sin(), -1.4 + hd + 0.001);
    let of = built(far, (c, DQuat::IDENTITY, r, hl), &[]);
    let wall = of(2, 3);
    let feats: Vec<u32> = wall.iter().map(|p| p.feature).collect();
    assert_eq!(feats, [0, 1, 10, 11, 12, 13]);
    let inward = -DVec3::new(phi.cos(), phi.sin(), 0.0);
    for p in &wall[..2] {
        assert!(
            (p.gap - 0.001).abs() < 1e-6 && close(p.normal, inward, 1e-6),
            "{p:?}"
        );
    }
    assert!(wall[2..].iter().all(|p| (p.gap - 0.001).abs() < 1e-6));
}

/// The library API accepts a second cylinder and a solid box boundary (every pair has a
/// narrow phase), and refuses a cylinder body whose shape index is not a cylinder record.
#[test]
fn collide_checks_cylinder_records() {
    use bristlecone::collide::Collide;
    let ctx = shared_context();
    let cyl = (DVec3::ZERO, DQuat::IDENTITY, 0.1, 0.2);
    let sphere = [(DVec3::new(0.5, 0.0, 0.0), 0.05f32)];
    let (mut two, mut two_shapes) = world((-1.2, 0.0), cyl, &sphere);
    two.info[4][2] = SHAPE_CYLINDER;
    two.info[4][3] = two_shapes.len() as u32;
    two_shapes.push(BoundaryShape::GrainCylinder {
        radius: 0.05,
        half_length: 0.05,
    });
    let bodies = GpuBodies::upload(&ctx, &two).unwrap();
    Collide::new(&ctx, &bodies, &two, &two_shapes, &settings()).expect("two cylinders");
    let (mut solid, mut solid_shapes) = world((-1.2, 0.0), cyl, &sphere);
    solid.info[0][2] = SHAPE_SOLID_BOX;
    solid_shapes[0] = BoundaryShape::SolidBox {
        half_extents: [0.1, 0.1, 0.1],
    };
    let bodies = GpuBodies::upload(&ctx, &solid).unwrap();
    Collide::new(&ctx, &bodies, &solid, &solid_shapes, &settings()).expect("solid box");
    solid.info[3][3] = 0;
    let bodies = GpuBodies::upload(&ctx, &solid).unwrap();
    let e = Collide::new(&ctx, &bodies, &solid, &solid_shapes, &settings())
        .err()
        .expect("refused")
        .to_string();
    assert!(
        e.contains("cylinder body 3") && e.contains("not its grain shape record"),
        "{e}"
    );
}

// ---------------------------------------------------------------- physics

fn run_scene(text: &str) -> BodyState {
    let scene = parse_str(text, Path::new("cyl.toml")).unwrap();
    let state = setup::build_bodies(&scene);
    let mut sim = Simulation::new(shared_context(), &state, setup::step_settings(&scene)).unwrap();
    sim.advance(scene.sim.steps as u32, 0).unwrap();
    sim.read_state().unwrap()
}

fn axis_of(q: [f32; 4]) -> DVec3 {
    DQuat::from_xyzw(q[0] as f64, q[1] as f64, q[2] as f64, q[3] as f64) * DVec3::Z
}

/// A cylinder (r = 5 cm, half length 10 cm) released on its end tilted by 2 mrad (inside
/// the flat band, on the low rim) settles on its 4 disc points and stands: after 0.1 s the
/// axis is within 1e-4 rad of vertical and the body at rest. With one deepest point per
/// disc instead, the contact would hop around the rim and the cylinder rock.
#[test]
fn cylinder_stands_on_its_end_without_rocking() {
    let (r, hl, tilt) = (0.05f64, 0.1f64, 0.002f64);
    let z = hl * tilt.cos() + r * tilt.sin();
    let qx = (0.5 * tilt).sin();
    let qw = (0.5 * tilt).cos();
    let text = format!(
        r#"
[simulation]
dt = 1e-3
duration = 0.1
gravity = [0.0, 0.0, -9.81]
[solver]
max_iterations = 60
tolerance = 1e-7
[[material]]
name = "m"
density = 1000.0
friction = 0.5
[[body]]
shape = "cylinder"
radius = {r}
half_length = {hl}
position = [0.0, 0.0, {z}]
orientation = [{qx}, 0.0, 0.0, {qw}]
material = "m"
[[boundary]]
kind = "plane"
point = [0.0, 0.0, 0.0]
normal = [0.0, 0.0, 1.0]
material = "m"
"#
    );
    let st = run_scene(&text);
    let a = axis_of(st.rot[1]);
    let tilt_end = a.truncate().length();
    let (v, w) = (d3(st.vel[1]).length(), d3(st.omega[1]).length());
    eprintln!(
        "standing cylinder: tilt {tilt_end:.2e} rad, v {v:.2e} m/s, ω {w:.2e} rad/s, z {}",
        st.pos[1][2]
    );
    assert!(tilt_end < 1e-4, "tilt {tilt_end}");
    assert!(v < 1e-3 && w < 1e-2, "still moving: v {v}, ω {w}");
    assert!(
        (st.pos[1][2] as f64 - hl).abs() < 1e-4,
        "height {}",
        st.pos[1][2]
    );
}

/// A cylinder (r = 2 cm, half length 5 cm) lying across an incline (θ = 0.3), released
/// from rest, rolls without slipping: m a = m g sinθ − F, I α = F r, a = α r with
/// I = m r²/2 give a = (2/3) g sinθ, needing μ ≥ tanθ/3 (here twice that). Checked: the
/// velocity after 0.1 s within 1 % of a·t, ω r = v within 1 %, the axis stays level (the
/// two-point contact along the generator).
#[test]
fn cylinder_rolls_down_an_incline_at_two_thirds_g_sin_theta() {
    let (r, hl) = (0.02f64, 0.05f64);
    let (theta, g, t) = (0.3f64, 9.81, 0.1);
    let a = 2.0 / 3.0 * g * theta.sin();
    let mu = 2.0 * theta.tan() / 3.0;
    let text = format!(
        r#"{header}
[[material]]
name = "m"
density = 1000.0
friction = {mu}
[[body]]
shape = "cylinder"
radius = {r}
half_length = {hl}
position = [0.0, 0.0, {r}]
orientation = [0.7071067811865476, 0.0, 0.0, 0.7071067811865476]
material = "m"
[[boundary]]
kind = "plane"
point = [0.0, 0.0, 0.0]
normal = [0.0, 0.0, 1.0]
material = "m"
"#,
        header = incline_header(theta, t)
    );
    let st = run_scene(&text);
    let (v, w) = (d3(st.vel[1]), d3(st.omega[1]));
    let axis = axis_of(st.rot[1]);
    let want = a * t;
    eprintln!(
        "cylinder roll: v = {:.5} m/s vs a·t = {want:.5}, ω_y r = {:.5}, axis z {:.2e}, v_z {:.2e}",
        v.x,
        w.y * r,
        axis.z,
        v.z
    );
    assert!((v.x - want).abs() <= 0.01 * want, "v = {} vs {want}", v.x);
    assert!(
        (w.y * r - v.x).abs() <= 0.01 * want,
        "ω r = {} vs v {}",
        w.y * r,
        v.x
    );
    assert!(axis.z.abs() < 1e-3, "the axis tilted: {axis}");
    assert!(v.z.abs() < 1e-3 * want, "lifts: v_z = {}", v.z);
}

// ---------------------------------------------------------------- output

/// Cylinder surfaces in VTK: read back with vtkio, every vertex lies on the cylinder's
/// surface (on the side, or on an end disc), 48 cells per cylinder carrying its id.
#[test]
fn cylinder_surfaces_read_back_with_vtkio() {
    use bristlecone::io::cylinders::{write_cylinders, CylinderFrame};
    use vtkio::model::{Attribute, DataSet, IOBuffer, Piece, Vtk};
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("c.vtp");
    let q = DQuat::from_euler(glam::EulerRot::XYZ, 0.3, -0.7, 1.1);
    let centers = [[0.1f32, 0.2, 0.3], [-1.0, 0.5, 2.0]];
    let rotations = [q.as_quat().to_array(), [0.0, 0.0, 0.0, 1.0]];
    let (radii, hls) = ([0.05f32, 0.2], [0.1f32, 0.02]);
    let frame = CylinderFrame {
        centers: &centers,
        rotations: &rotations,
        radii: &radii,
        half_lengths: &hls,
        ids: &[7, 9],
    };
    write_cylinders(&path, &frame).unwrap();
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
    assert_eq!(pts.len(), 3 * 2 * 34);
    for (k, p) in pts.chunks(3).enumerate() {
        let b = k / 34;
        let c = d3([centers[b][0], centers[b][1], centers[b][2], 0.0]);
        let r = rotations[b];
        let qb = DQuat::from_xyzw(r[0] as f64, r[1] as f64, r[2] as f64, r[3] as f64);
        let l = qb.inverse() * (DVec3::new(p[0] as f64, p[1] as f64, p[2] as f64) - c);
        let (rho, z) = (l.truncate().length(), l.z.abs());
        let (rb, hb) = (radii[b] as f64, hls[b] as f64);
        let on_side = (rho - rb).abs() < 1e-5 && z <= hb + 1e-5;
        let on_end = (z - hb).abs() < 1e-5 && rho <= rb + 1e-5;
        assert!(
            on_side || on_end,
            "vertex {k} off the surface: ρ {rho}, z {z}"
        );
    }
    let polys = piece.polys.unwrap();
    assert_eq!(polys.num_cells(), 2 * 48);
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
        panic!("ids not u32")
    };
    assert!(ids[..48].iter().all(|&x| x == 7) && ids[48..].iter().all(|&x| x == 9));
}
