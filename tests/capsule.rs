//! Capsule bodies: scene format and mass properties, the GPU capsule narrow phase against
//! its f64 twin (`reference::capsule` via `reference::collide::detect`), and a capsule
//! rolling down an incline against the rigid-body answer.
//!
//! Tolerances of the GPU = twin comparison (f32 kernels vs the f64 twin on the same f32
//! inputs), as for boxes (tests/shapes.rs): coordinates are O(1) m; the axis comes from an
//! f32 quaternion rotation and segment parameters from a few divisions, so gaps and points
//! agree to 2e-5 m and normals to 1e-4 (2e-3 where two surface points are closer than
//! 1e-2 m: a normal from a short difference loses relative precision). A pair whose
//! contact *set* differs (an f32/f64 decision flipped: the parallel or face-parallel
//! threshold, a tie between candidates, a point at the envelope) is ambiguous; at most 2 %
//! of the contacting pairs may be, and none of the built cases.

use crate::common::*;
use bristlecone::bodies::*;
use bristlecone::collide::{BoundaryShape, CollideSettings};
use bristlecone::gpu::shared_context;
use bristlecone::reference::capsule::capsule_mass;
use bristlecone::reference::collide::{detect, Contact64};
use bristlecone::scene::{parse_str, BodyShape};
use bristlecone::setup;
use bristlecone::step::Simulation;
use glam::{DQuat, DVec3};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::collections::BTreeMap;
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

/// Mass and moments by slicing along the axis: ∫ρπa²dz, I_z = ∫ρπa⁴/2 dz,
/// I_x = ∫ρ(πa⁴/4 + πa²z²)dz with a(z) the section radius; the integrands are polynomials
/// of degree ≤ 4 on each piece (cylinder, two caps), integrated exactly by 3-point
/// Gauss–Legendre: an independent route to the closed form.
fn sliced(rho: f64, r: f64, hl: f64) -> (f64, [f64; 3]) {
    let pi = std::f64::consts::PI;
    let gl = [
        (-(0.6f64).sqrt(), 5.0 / 9.0),
        (0.0, 8.0 / 9.0),
        ((0.6f64).sqrt(), 5.0 / 9.0),
    ];
    let a2 = |z: f64| {
        let e = z.abs() - hl;
        if e <= 0.0 {
            r * r
        } else {
            r * r - e * e
        }
    };
    let mut m = 0.0;
    let mut ix = 0.0;
    let mut iz = 0.0;
    for (lo, hi) in [(-hl - r, -hl), (-hl, hl), (hl, hl + r)] {
        let (c, h) = (0.5 * (lo + hi), 0.5 * (hi - lo));
        for (x, w) in gl {
            let z = c + h * x;
            let s = a2(z);
            m += w * h * rho * pi * s;
            iz += w * h * rho * pi * s * s / 2.0;
            ix += w * h * rho * (pi * s * s / 4.0 + pi * s * z * z);
        }
    }
    (m, [ix, ix, iz])
}

#[test]
fn capsule_mass_properties_are_analytic() {
    let s = scene(
        r#"
[[body]]
shape = "capsule"
radius = 0.05
half_length = 0.12
position = [0.0, 0.0, 1.0]
material = "m"
"#,
    )
    .unwrap();
    let b = &s.bodies[0];
    assert_eq!(
        b.shape,
        BodyShape::Capsule {
            radius: 0.05,
            half_length: 0.12
        }
    );
    for (r, hl) in [(0.05, 0.12), (1.0, 0.01), (0.3, 7.0)] {
        let (m, i) = capsule_mass(2000.0, r, hl);
        let (mw, iw) = sliced(2000.0, r, hl);
        assert!((m - mw).abs() <= 1e-9 * mw, "mass {m} vs {mw}");
        for k in 0..3 {
            assert!(
                (i[k] - iw[k]).abs() <= 1e-9 * iw[k],
                "I[{k}] {} vs {}",
                i[k],
                iw[k]
            );
        }
    }
    let (m, i) = capsule_mass(2000.0, 0.05, 0.12);
    assert_eq!((b.mass, b.inertia), (m, i));
    // Sphere limit: half_length → 0 gives 2/5 m r².
    let (m0, i0) = capsule_mass(1.0, 1.0, 0.0);
    assert!((m0 - 4.0 / 3.0 * std::f64::consts::PI).abs() < 1e-12);
    assert!((i0[0] - 0.4 * m0).abs() < 1e-12 && (i0[2] - 0.4 * m0).abs() < 1e-12);
    // Bounding sphere for the broad phase.
    assert!((b.shape.bounding_radius() - 0.17).abs() < 1e-15);
}

#[test]
fn capsule_scene_errors_name_line_and_field() {
    let cases = [
        (
            "[[body]]\nshape = \"capsule\"\nradius = 0.1\nposition = [0.0, 0.0, 1.0]\nmaterial = \"m\"\n",
            "body[0]",
            "half_length",
        ),
        (
            "[[body]]\nshape = \"capsule\"\nradius = 0.1\nhalf_length = -0.2\nposition = [0.0, 0.0, 1.0]\nmaterial = \"m\"\n",
            "body[0].half_length",
            "positive",
        ),
        (
            "[[body]]\nshape = \"capsule\"\nradius = 0.0\nhalf_length = 0.2\nposition = [0.0, 0.0, 1.0]\nmaterial = \"m\"\n",
            "body[0].radius",
            "positive",
        ),
        (
            "[[body]]\nshape = \"capsule\"\nradius = 0.1\nhalf_length = 0.2\nhalf_extents = [1.0, 1.0, 1.0]\nposition = [0.0, 0.0, 1.0]\nmaterial = \"m\"\n",
            "body[0]",
            "half_extents",
        ),
        (
            "[[body]]\nshape = \"sphere\"\nradius = 0.1\nhalf_length = 0.2\nposition = [0.0, 0.0, 1.0]\nmaterial = \"m\"\n",
            "body[0]",
            "half_length",
        ),
        // Two capsules crossing at their centres' heights 0.15 apart (radii 0.1): overlap.
        (
            "[[body]]\nshape = \"capsule\"\nradius = 0.1\nhalf_length = 0.5\nposition = [0.0, 0.0, 1.0]\nmaterial = \"m\"\n[[body]]\nshape = \"capsule\"\nradius = 0.1\nhalf_length = 0.5\nposition = [0.3, 0.0, 1.15]\norientation = [0.0, 0.7071067811865476, 0.0, 0.7071067811865476]\nmaterial = \"m\"\n",
            "body[1].position",
            "overlaps",
        ),
    ];
    for (body, field, msg) in cases {
        let e = scene(body).expect_err(body).to_string();
        assert!(e.contains("t.toml:"), "{e}");
        assert!(e.contains(field), "{field} not in {e}");
        assert!(e.contains(msg), "{msg} not in {e}");
    }
    // Lying side by side (bounding spheres overlap, capsules do not): accepted.
    let lying = "[[body]]\nshape = \"capsule\"\nradius = 0.1\nhalf_length = 0.5\nposition = [0.0, 0.0, 1.0]\nmaterial = \"m\"\n[[body]]\nshape = \"capsule\"\nradius = 0.1\nhalf_length = 0.5\nposition = [0.21, 0.0, 1.0]\nmaterial = \"m\"\n[[body]]\nradius = 0.1\nposition = [-0.21, 0.0, 1.0]\nmaterial = \"m\"\n";
    scene(lying).unwrap();
}

// ---------------------------------------------------------------- GPU = twin

const ENV: f32 = 0.01;

#[derive(Clone, Copy)]
enum G {
    Sphere(f32),
    Box([f32; 3]),
    Capsule(f32, f32),
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

/// Four boundaries (tilted plane, box container, rotated solid box, cylinder container),
/// then the grains.
fn world(grains: &[(DVec3, DQuat, G)]) -> (BodyState, Vec<BoundaryShape>) {
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
    let mut inits = vec![
        BodyInit {
            orientation: DQuat::from_rotation_y(0.05).as_quat().to_array(),
            ..BodyInit::fixed(SHAPE_PLANE, 0, [0.0, 0.0, -1.2], 0.0)
        },
        BodyInit::fixed(SHAPE_BOX_CONTAINER, 1, [0.0, 0.0, 0.0], 2.6),
        BodyInit {
            orientation: DQuat::from_rotation_z(0.3).as_quat().to_array(),
            ..BodyInit::fixed(SHAPE_SOLID_BOX, 2, [0.0, 0.0, 0.0], 0.44)
        },
        BodyInit::fixed(SHAPE_CYLINDER_CONTAINER, 3, [0.0, 0.0, -1.4], 3.4),
    ];
    for &(c, q, g) in grains {
        let p = [c.x as f32, c.y as f32, c.z as f32];
        let (shape, bound) = match g {
            G::Sphere(r) => {
                inits.push(BodyInit::sphere(p, r, 1000.0));
                continue;
            }
            G::Box(h) => (
                BoundaryShape::GrainBox { half_extents: h },
                (h[0] * h[0] + h[1] * h[1] + h[2] * h[2]).sqrt(),
            ),
            G::Capsule(r, hl) => (
                BoundaryShape::GrainCapsule {
                    radius: r,
                    half_length: hl,
                },
                r + hl,
            ),
        };
        let kind = match g {
            G::Box(_) => SHAPE_BOX,
            _ => SHAPE_CAPSULE,
        };
        shapes.push(shape);
        inits.push(BodyInit {
            orientation: q.normalize().as_quat().to_array(),
            shape: kind,
            shape_index: shapes.len() as u32 - 1,
            radius: bound,
            ..BodyInit::sphere(p, 1.0, 1000.0)
        });
    }
    (BodyState::from_inits(&inits), shapes)
}

fn settings() -> CollideSettings {
    CollideSettings {
        envelope: ENV,
        friction: vec![0.5],
    }
}

/// Contacting pairs per (kind of A, kind of B).
type KindCounts = BTreeMap<(u32, u32), usize>;

/// Compares per pair (`common::compare_contact_sets`; normals to 1e-4, 2e-3 below 1 cm
/// gaps); returns (pairs compared, the ambiguous pairs, pairs per kind pair).
fn compare(state: &BodyState, shapes: &[BoundaryShape]) -> (usize, Vec<(u32, u32)>, KindCounts) {
    let ntol = |tc: &Contact64| if tc.gap.abs() < 1e-2 { 2e-3 } else { 1e-4 };
    let c = compare_contact_sets(state, shapes, &settings(), ntol);
    let mut kinds = KindCounts::new();
    for k in &c.pairs {
        let kk = (state.info[k.0 as usize][2], state.info[k.1 as usize][2]);
        *kinds.entry(kk).or_insert(0) += 1;
    }
    (c.pairs.len(), c.ambiguous, kinds)
}

/// Random capsules among boxes and spheres at random orientations, packed so that many
/// bounding spheres overlap: every capsule partner (sphere, capsule, box, the four
/// boundaries) is met, shallow and deep.
#[test]
fn gpu_capsule_contacts_match_the_twin_on_random_configurations() {
    let mut rng = ChaCha8Rng::seed_from_u64(11);
    let mut total = 0;
    let mut amb = 0;
    let mut kinds = KindCounts::new();
    for _round in 0..3 {
        let mut grains = Vec::new();
        for _ in 0..150 {
            let c = DVec3::new(
                rng.random_range(-1.3..1.3),
                rng.random_range(-1.3..1.3),
                rng.random_range(-1.4..1.4),
            );
            let u: f64 = rng.random_range(0.0..1.0);
            let g = if u < 0.6 {
                G::Capsule(rng.random_range(0.03..0.1), rng.random_range(0.02..0.2))
            } else if u < 0.8 {
                G::Box([
                    rng.random_range(0.05..0.15),
                    rng.random_range(0.05..0.15),
                    rng.random_range(0.05..0.15),
                ])
            } else {
                G::Sphere(rng.random_range(0.05..0.12))
            };
            grains.push((c, rand_q(&mut rng), g));
        }
        let (state, shapes) = world(&grains);
        let (n, a, k) = compare(&state, &shapes);
        total += n;
        amb += a.len();
        for (key, v) in k {
            *kinds.entry(key).or_insert(0) += v;
        }
    }
    eprintln!("random capsules: {amb} ambiguous of {total} pairs; per kind pair {kinds:?}");
    // Grain pairs in either order (the lower body id is A).
    let met = |a: u32, b: u32| {
        kinds.get(&(a, b)).copied().unwrap_or(0)
            + if a != b {
                kinds.get(&(b, a)).copied().unwrap_or(0)
            } else {
                0
            }
    };
    for need in [
        (SHAPE_CAPSULE, SHAPE_CAPSULE),
        (SHAPE_CAPSULE, SHAPE_BOX),
        (SHAPE_CAPSULE, SHAPE_SPHERE),
        (SHAPE_PLANE, SHAPE_CAPSULE),
        (SHAPE_BOX_CONTAINER, SHAPE_CAPSULE),
        (SHAPE_SOLID_BOX, SHAPE_CAPSULE),
        (SHAPE_CYLINDER_CONTAINER, SHAPE_CAPSULE),
    ] {
        assert!(
            met(need.0, need.1) >= 3,
            "kind pair {need:?} met too rarely: {kinds:?}"
        );
    }
    assert!(
        amb as f64 <= 0.02 * total as f64,
        "{amb} of {total} pairs differ in their contact sets"
    );
}

/// Built cases with a clear answer; none may be ambiguous.
#[test]
fn gpu_capsule_contacts_match_the_twin_on_touching_deep_and_parallel_cases() {
    let lying = DQuat::from_rotation_y(std::f64::consts::FRAC_PI_2); // axis along x
    let across = DQuat::from_rotation_x(std::f64::consts::FRAC_PI_2); // axis along y
    let cap = G::Capsule(0.05, 0.15);
    let grains = vec![
        // 4, 5: parallel capsules side by side, touching (gap 0), offset along the axis:
        // two points at the ends of the overlap.
        (DVec3::new(0.5, 0.8, 0.5), lying, cap),
        (DVec3::new(0.55, 0.9, 0.5), lying, cap),
        // 6, 7: crossed capsules, 2 cm deep: one point.
        (DVec3::new(-0.6, 0.8, 0.5), lying, cap),
        (DVec3::new(-0.6, 0.8, 0.58), across, cap),
        // 8, 9: a capsule lying on a box's top face (gap 1 mm): two points.
        (
            DVec3::new(0.7, -0.7, 0.5),
            DQuat::IDENTITY,
            G::Box([0.2, 0.2, 0.1]),
        ),
        (DVec3::new(0.7, -0.7, 0.651), lying, cap),
        // 10, 11: a capsule beyond a box's edge (axis along y, parallel to the +x top
        // edge, its axis 3 cm out in x and z): one point, against the edge.
        (
            DVec3::new(-0.7, -0.7, 0.5),
            DQuat::IDENTITY,
            G::Box([0.1, 0.1, 0.1]),
        ),
        (DVec3::new(-0.57, -0.7, 0.63), across, cap),
        // 12: lying on the container floor (z = -1.5), gap 1 mm: two points.
        (DVec3::new(0.0, 0.9, -1.449), lying, cap),
        // 13, 14: a sphere on a capsule's side, 5 mm deep.
        (DVec3::new(0.0, -0.9, 0.0), lying, cap),
        (
            DVec3::new(0.05, -0.9, 0.145),
            DQuat::IDENTITY,
            G::Sphere(0.1),
        ),
        // 15: standing on the container floor on its end: one point (the other end high).
        (DVec3::new(0.9, 0.0, -1.3), DQuat::IDENTITY, cap),
    ];
    let (state, shapes) = world(&grains);
    let twin = detect(&state, &shapes, &settings());
    let (n, amb, _) = compare(&state, &shapes);
    assert!(amb.is_empty(), "ambiguous pairs {amb:?}");
    let of = |a: u32, b: u32| -> Vec<&Contact64> {
        twin.iter().filter(|c| c.a == a && c.b == b).collect()
    };
    let pp = of(4, 5);
    assert_eq!(pp.len(), 2, "parallel capsules");
    for c in &pp {
        assert!(
            c.gap.abs() < 1e-6 && (c.normal - DVec3::Y).length() < 1e-6,
            "{c:?}"
        );
    }
    // The two points sit at the overlap's ends, x = 0.55 − 0.15 and 0.5 + 0.15.
    let xs: Vec<f64> = pp.iter().map(|c| 0.5 + c.ra.x).collect();
    assert!(
        (xs[0] - 0.4).abs() < 1e-6 && (xs[1] - 0.65).abs() < 1e-6,
        "{xs:?}"
    );
    let cr = of(6, 7);
    assert_eq!(cr.len(), 1, "crossed");
    assert!((cr[0].gap + 0.02).abs() < 1e-6, "crossed gap {}", cr[0].gap);
    let bf = of(8, 9);
    assert_eq!(bf.len(), 2, "lying on a box face");
    for c in &bf {
        assert!((c.gap - 0.001).abs() < 1e-6 && (c.normal - DVec3::Z).length() < 1e-9);
    }
    let be = of(10, 11);
    assert_eq!(be.len(), 1, "across a box edge");
    let want = (2.0f64 * 0.03 * 0.03).sqrt() - 0.05;
    assert!(
        (be[0].gap - want).abs() < 1e-6,
        "edge gap {} vs {want}",
        be[0].gap
    );
    let fl = of(1, 12);
    assert_eq!(fl.len(), 2, "container floor");
    assert!(fl.iter().all(|c| (c.gap - 0.001).abs() < 1e-6));
    let sp = of(13, 14);
    assert_eq!(sp.len(), 1);
    assert!((sp[0].gap + 0.005).abs() < 1e-6, "sphere gap {}", sp[0].gap);
    let st = of(1, 15);
    assert_eq!(st.len(), 1, "standing: one end");
    assert!((st[0].gap).abs() < 1e-6, "standing gap {}", st[0].gap);
    assert!(n >= 8);
}

// ---------------------------------------------------------------- physics

/// A capsule (r = 2 cm, half length 5 cm) lying across an incline (axis horizontal,
/// perpendicular to the slope), released from rest, rolls without slipping when μ is
/// large enough. Rigid-body analysis: with I the moment about the axis and the contact
/// force on the hemispherical ends' lowest points (distance r below the axis),
///   m a = m g sinθ − F,  I α = F r,  a = α r  ⇒  a = g sinθ / (1 + I/(m r²)),
/// F = m g sinθ · k/(1 + k) with k = I/(m r²); rolling needs μ ≥ tanθ · k/(1 + k).
/// For a capsule k = (m_c/2 + 4 m_h/5)/m (`capsule_mass`), between a sphere's 2/5 and a
/// cylinder's 1/2: here k = 0.479, a = 0.676 g sinθ (a sliding capsule would get
/// g(sinθ − μ cosθ), a frictionless one g sinθ: both differ by far more than 1 %).
/// Checked: velocity after 0.2 s within 1 % of a·t, the spin ω = v/r within 1 %, and the
/// axis stays horizontal (both ends on the plane: the two-point contact).
#[test]
fn capsule_rolls_down_an_incline_at_the_rigid_body_rate() {
    let (r, hl, rho) = (0.02f64, 0.05f64, 1000.0);
    let theta: f64 = 0.3;
    let g = 9.81;
    let t = 0.2;
    let (m, i) = capsule_mass(rho, r, hl);
    let k = i[2] / (m * r * r);
    assert!(k > 0.4 && k < 0.5, "k = {k}");
    let a = g * theta.sin() / (1.0 + k);
    let mu_need = theta.tan() * k / (1.0 + k);
    let mu = 2.0 * mu_need;
    let text = format!(
        r#"{header}
[[material]]
name = "m"
density = {rho}
friction = {mu}
[[body]]
shape = "capsule"
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
    let scene = parse_str(&text, Path::new("roll.toml")).unwrap();
    let state = setup::build_bodies(&scene);
    let mut sim = Simulation::new(shared_context(), &state, setup::step_settings(&scene)).unwrap();
    sim.advance(scene.sim.steps as u32, 0).unwrap();
    let st = sim.read_state().unwrap();
    let v = d3(st.vel[1]);
    let w = d3(st.omega[1]);
    let q = st.rot[1];
    let axis = DQuat::from_xyzw(q[0] as f64, q[1] as f64, q[2] as f64, q[3] as f64) * DVec3::Z;
    let want = a * t;
    eprintln!(
        "capsule roll: v = {:.5} m/s vs a·t = {want:.5} (k = {k:.4}, μ = {mu:.3}), ω_y r = {:.5}, axis z {:.2e}, v_z {:.2e}",
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

/// Rigid-body answer for a capsule (radius r, segment half length hl, mass m, transverse
/// moment I about its centre) whose lower end rests on a frictionless horizontal plane,
/// released at rest with its axis at θ0 above the horizontal. No horizontal force: the
/// centre of mass falls vertically; the lower cap's centre stays at height r, so
/// z = r + hl·sinθ, and with L = ½(m hl² cos²θ + I) θ̇² − m g (r + hl sinθ):
///   (m hl² cos²θ + I) θ̈ = m hl² cosθ sinθ θ̇² − m g hl cosθ.
/// (The normal force stays positive to the ground for a rod from rest, so the end never
/// lifts.) With `pinned`, the end held by friction instead (a hinge):
///   (I + m hl²) θ̈ = −m g hl cosθ.
/// Integrated by RK4 at 1e-5 s; returns θ at the sample times `ts`.
fn falling_rod(m: f64, i: f64, hl: f64, theta0: f64, ts: &[f64], pinned: bool) -> Vec<f64> {
    let g = 9.81;
    let acc = |th: f64, w: f64| {
        let (s, c) = th.sin_cos();
        if pinned {
            return -m * g * hl * c / (i + m * hl * hl);
        }
        (m * hl * hl * c * s * w * w - m * g * hl * c) / (m * hl * hl * c * c + i)
    };
    let h = 1e-5;
    let (mut th, mut w, mut t) = (theta0, 0.0f64, 0.0f64);
    let mut out = Vec::new();
    for &want in ts {
        while t < want - 0.5 * h {
            let (k1t, k1w) = (w, acc(th, w));
            let (k2t, k2w) = (
                w + 0.5 * h * k1w,
                acc(th + 0.5 * h * k1t, w + 0.5 * h * k1w),
            );
            let (k3t, k3w) = (
                w + 0.5 * h * k2w,
                acc(th + 0.5 * h * k2t, w + 0.5 * h * k2w),
            );
            let (k4t, k4w) = (w + h * k3w, acc(th + h * k3t, w + h * k3w));
            th += h / 6.0 * (k1t + 2.0 * k2t + 2.0 * k3t + k4t);
            w += h / 6.0 * (k1w + 2.0 * k2w + 2.0 * k3w + k4w);
            t += h;
        }
        out.push(th);
    }
    out
}

/// A capsule rod (r = 1 cm, 2·hl = 20 cm) released at θ0 = 0.5 rad on a frictionless
/// plane slides and falls as [`falling_rod`] predicts: θ(t) every 10 ms until it is nearly
/// flat (θ < 0.1 rad, ~0.1 s) within 0.01 rad (2 % of θ0; measured 3.5e-3, a one-step lag
/// of the time stepping; a rod pinned at its end, the high-friction answer, differs by
/// more than 0.03 rad, checked), its centre of mass moves < 1e-4 m sideways and its lower end
/// stays on the plane (within 2e-4 m). Budget: ~100 steps of one capsule.
#[test]
fn capsule_rod_falls_on_a_frictionless_plane_as_the_rigid_body_predicts() {
    let (r, hl, rho, theta0) = (0.01f64, 0.1f64, 1000.0, 0.5f64);
    let (m, i) = capsule_mass(rho, r, hl);
    let phi = std::f64::consts::FRAC_PI_2 - theta0;
    let text = format!(
        r#"
[simulation]
dt = 1e-3
duration = 1.0
[solver]
max_iterations = 60
tolerance = 1e-7
[[material]]
name = "m"
density = {rho}
friction = 0.0
[[body]]
shape = "capsule"
radius = {r}
half_length = {hl}
position = [0.0, 0.0, {z}]
orientation = [0.0, {qy}, 0.0, {qw}]
material = "m"
[[boundary]]
kind = "plane"
point = [0.0, 0.0, 0.0]
normal = [0.0, 0.0, 1.0]
material = "m"
"#,
        z = r + hl * theta0.sin(),
        qy = (0.5 * phi).sin(),
        qw = (0.5 * phi).cos()
    );
    let scene = parse_str(&text, Path::new("rod.toml")).unwrap();
    let state = setup::build_bodies(&scene);
    let mut sim = Simulation::new(shared_context(), &state, setup::step_settings(&scene)).unwrap();
    // Samples every 10 ms while the rigid-body rod is above θ = 0.1 (before it lands).
    let grid: Vec<f64> = (1..=40).map(|k| 0.01 * k as f64).collect();
    let want: Vec<f64> = falling_rod(m, i[0], hl, theta0, &grid, false)
        .into_iter()
        .take_while(|&th| th > 0.1)
        .collect();
    let ts = &grid[..want.len()];
    let (mut got, mut side, mut lift) = (Vec::new(), 0.0f64, 0.0f64);
    for _ in ts {
        sim.advance(10, 0).unwrap();
        let st = sim.read_state().unwrap();
        let q = st.rot[1];
        let axis = DQuat::from_xyzw(q[0] as f64, q[1] as f64, q[2] as f64, q[3] as f64) * DVec3::Z;
        let c = d3(st.pos[1]);
        side = side.max(c.truncate().length());
        // The lower cap's centre stays at height r (in contact, not lifted nor sunk).
        lift = lift.max((c.z - hl * axis.z - r).abs());
        got.push(axis.z.asin());
    }
    let pinned = falling_rod(m, i[0], hl, theta0, ts, true);
    for ((t, g), w) in ts.iter().zip(&got).zip(&want) {
        eprintln!("rod: t = {t:.2} s θ = {g:.4} vs {w:.4}");
    }
    let worst = got
        .iter()
        .zip(&want)
        .map(|(g, w)| (g - w).abs())
        .fold(0.0, f64::max);
    eprintln!(
        "rod: worst |Δθ| {worst:.2e} rad over {} samples, sideways {side:.2e} m, end off the plane {lift:.2e} m",
        ts.len()
    );
    let apart = want
        .iter()
        .zip(&pinned)
        .map(|(a, b)| (a - b).abs())
        .fold(0.0, f64::max);
    eprintln!("rod: the pinned (hinged) rod differs from the sliding one by {apart:.3} rad");
    assert!(
        apart > 0.03,
        "the test cannot tell sliding from pinned: {apart}"
    );
    assert!(
        ts.len() >= 8,
        "fell too fast to compare: {} samples",
        ts.len()
    );
    assert!(worst < 0.01, "θ(t) off by {worst} rad");
    assert!(side < 1e-4, "centre of mass moved {side} m sideways");
    assert!(lift < 2e-4, "the lower end left the plane by {lift} m");
}

// ---------------------------------------------------------------- output

/// Capsule surfaces in VTK: read back with vtkio, every vertex lies on the capsule's
/// surface (distance r from its axis segment), 84 cells per capsule carrying its id.
#[test]
fn capsule_surfaces_read_back_with_vtkio() {
    use bristlecone::io::{write_capsules, CapsuleFrame};
    use vtkio::model::{Attribute, DataSet, IOBuffer, Piece, Vtk};
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("c.vtp");
    let q = DQuat::from_euler(glam::EulerRot::XYZ, 0.3, -0.7, 1.1);
    let centers = [[0.1f32, 0.2, 0.3], [-1.0, 0.5, 2.0]];
    let rotations = [q.as_quat().to_array(), [0.0, 0.0, 0.0, 1.0]];
    let (radii, hls) = ([0.05f32, 0.2], [0.1f32, 0.0]);
    let frame = CapsuleFrame {
        centers: &centers,
        rotations: &rotations,
        radii: &radii,
        half_lengths: &hls,
        ids: &[7, 9],
    };
    write_capsules(&path, &frame).unwrap();
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
    assert_eq!(pts.len(), 3 * 2 * 74);
    for (k, p) in pts.chunks(3).enumerate() {
        let b = k / 74;
        let c = DVec3::new(
            centers[b][0] as f64,
            centers[b][1] as f64,
            centers[b][2] as f64,
        );
        let r = rotations[b];
        let a = DQuat::from_xyzw(r[0] as f64, r[1] as f64, r[2] as f64, r[3] as f64) * DVec3::Z;
        let x = DVec3::new(p[0] as f64, p[1] as f64, p[2] as f64);
        let t = (x - c).dot(a).clamp(-hls[b] as f64, hls[b] as f64);
        let d = (x - (c + a * t)).length();
        assert!(
            (d - radii[b] as f64).abs() < 1e-5,
            "vertex {k}: {d} from the axis"
        );
    }
    let polys = piece.polys.unwrap();
    assert_eq!(polys.num_cells(), 2 * 84);
    let ids = piece
        .data
        .cell
        .iter()
        .find_map(|a| match a {
            Attribute::Field { .. } => None,
            Attribute::DataArray(d) if d.name == "id" => Some(d.data.clone()),
            _ => None,
        })
        .unwrap();
    let ids: Vec<f64> = match ids {
        IOBuffer::U32(v) => v.iter().map(|&x| x as f64).collect(),
        other => panic!("ids {other:?}"),
    };
    assert!(ids[..84].iter().all(|&x| x == 7.0) && ids[84..].iter().all(|&x| x == 9.0));
}
