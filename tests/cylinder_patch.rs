//! Cylinder end-disc patches (book: Contact patches): a cylinder whose whole end disc lies on a
//! plane or a container's wall, floor or lid gets a `lugre_reduced` patch record for the
//! disc (uniform pressure: r = 2R/3, visc = 9/8). GPU records against the f64 twin
//! (`reference::patch_collide::detect_with_patches`) on random configurations; the spin-down and the
//! slide of a cylinder standing on its end against the disc's analysis; scene checks.

use bristlecone::bodies::*;
use bristlecone::collide::{BoundaryShape, Collide, CollideSettings, ContactRecord};
use bristlecone::gpu::shared_context;
use bristlecone::patch::couple::PATCH_FEATURE;
use bristlecone::reference::patch_collide::detect_with_patches;
use bristlecone::scene::parse_str;
use bristlecone::setup;
use bristlecone::step::Simulation;
use glam::{DQuat, DVec3};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::collections::BTreeMap;
use std::path::Path;

/// One cylinder (material 1: patch kind 1, μ 0.4) among a plane (at z = −1.2), a box
/// container (±1.5) and a cylinder container (r 1.6, floor at −1.4), all material 0.
fn world(c: DVec3, q: DQuat, r: f32, hl: f32) -> (BodyState, Vec<BoundaryShape>) {
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
            radius: r,
            half_length: hl,
        },
    ];
    let inits = vec![
        BodyInit::fixed(SHAPE_PLANE, 0, [0.0, 0.0, -1.2], 0.0),
        BodyInit::fixed(SHAPE_BOX_CONTAINER, 1, [0.0, 0.0, 0.0], 2.6),
        BodyInit::fixed(SHAPE_CYLINDER_CONTAINER, 2, [0.0, 0.0, -1.4], 3.4),
        BodyInit {
            orientation: q.as_quat().to_array(),
            shape: SHAPE_CYLINDER,
            shape_index: 3,
            radius: r.hypot(hl),
            material: 1,
            ..BodyInit::sphere([c.x as f32, c.y as f32, c.z as f32], 1.0, 1000.0)
        },
    ];
    (BodyState::from_inits(&inits), shapes)
}

fn by_pair(v: &[ContactRecord]) -> Pairs {
    let mut m: BTreeMap<(u32, u32), Vec<ContactRecord>> = BTreeMap::new();
    for r in v {
        m.entry((r.ids[0], r.ids[1])).or_default().push(*r);
    }
    m
}

/// 48 placements ([`placement`]) of one cylinder among the boundaries, compared per pair
/// ([`compare`]; μ is 0 on a patch wall's points). At most 2 % of the pairs may differ in
/// their contact set (an f32/f64 flat-band or envelope decision), and at least 16 patches
/// must be compared.
#[test]
fn gpu_cylinder_disc_patch_records_match_the_twin() {
    let ctx = shared_context();
    let mut rng = ChaCha8Rng::seed_from_u64(23);
    let settings = CollideSettings {
        envelope: 2e-3,
        friction: vec![0.5, 0.4],
    };
    let patch = [0u8, 1];
    let (mut patches, mut pairs, mut amb) = (0, 0, 0);
    // 4 cylinder sizes, 12 placements each (one Collide per size: its pipelines are built
    // once, the bodies rewritten per placement).
    for size in 0..4 {
        let r = rng.random_range(0.05..0.2f32);
        let hl = rng.random_range(0.03..0.2f32);
        let (state0, shapes) = world(DVec3::ZERO, DQuat::IDENTITY, r, hl);
        let bodies = GpuBodies::upload(&ctx, &state0).unwrap();
        let mut collide = Collide::new(&ctx, &bodies, &state0, &shapes, &settings).unwrap();
        collide
            .set_patch_materials(&ctx, &settings.friction, &patch)
            .unwrap();
        for round in 0..12 {
            let (c, q) = placement(&mut rng, round + 12 * size, r as f64, hl as f64);
            let (state, _) = world(c, q, r, hl);
            bodies.write(&ctx, &state);
            assert_eq!(collide.detect(&ctx).unwrap().overflow, 0);
            let gpu = by_pair(&collide.read_contacts(&ctx).unwrap());
            let twin = by_pair(&detect_with_patches(&state, &shapes, &settings, &patch));
            compare(&gpu, &twin, &mut patches, &mut pairs, &mut amb);
        }
    }
    eprintln!("cylinder disc patches: {patches} patches, {amb} of {pairs} pairs ambiguous");
    assert!(patches >= 16, "too few patches to mean anything: {patches}");
    assert!(
        amb as f64 <= 0.02 * pairs as f64,
        "{amb} of {pairs} ambiguous"
    );
}

/// Placement `round` of a cylinder (radius r, half length hl): standing or upside down on
/// the plane, the box container's floor or the cylinder container's floor (its lowest rim
/// point 1 mm into the envelope; tilted inside the flat band, or just outside it every
/// fourth round), lying along x with its disc flat on the box container's +x wall, or at a
/// random orientation near the plane.
fn placement(rng: &mut ChaCha8Rng, round: usize, r: f64, hl: f64) -> (DVec3, DQuat) {
    use std::f64::consts::{FRAC_PI_2, PI, TAU};
    let yaw = DQuat::from_rotation_z(rng.random_range(0.0..TAU));
    let tilt = if round % 4 == 3 {
        0.02
    } else {
        rng.random_range(0.0..0.008)
    };
    let flip = if round.is_multiple_of(2) {
        DQuat::IDENTITY
    } else {
        DQuat::from_rotation_x(PI)
    };
    let q = yaw * DQuat::from_rotation_x(tilt) * flip;
    let drop = hl * tilt.cos() + r * tilt.sin() - 1e-3;
    let xy = DVec3::new(
        rng.random_range(-0.8..0.8),
        rng.random_range(-0.8..0.8),
        0.0,
    );
    match round % 6 {
        0 | 1 => (xy + DVec3::Z * (-1.2 + drop), q),
        2 => (xy + DVec3::Z * (-1.5 + drop), q),
        3 => (DVec3::new(0.0, 0.0, -1.4 + drop), q),
        4 => (
            DVec3::new(1.5 - hl + 1e-3, xy.y, -0.5),
            DQuat::from_rotation_y(FRAC_PI_2),
        ),
        // Touching the plane or not (centre up to its bounding radius above it).
        _ => {
            let v: [f64; 4] = std::array::from_fn(|_| rng.random_range(-1.0..1.0));
            let z = -1.2 + rng.random_range(0.0..r.hypot(hl));
            (xy + DVec3::Z * z, DQuat::from_array(v).normalize())
        }
    }
}

type Pairs = BTreeMap<(u32, u32), Vec<ContactRecord>>;

/// Per pair: the same features, normals 1e-4, lever arms 3e-5 m, μ exactly, the patch's r
/// and visc to 1e-4 relative; a pair whose feature list differs, or that only one side
/// has, counts as ambiguous.
fn compare(gpu: &Pairs, twin: &Pairs, patches: &mut usize, pairs: &mut usize, amb: &mut usize) {
    for (k, ts) in twin {
        *pairs += 1;
        let Some(gs) = gpu.get(k) else {
            *amb += 1;
            continue;
        };
        let f = |v: &[ContactRecord]| v.iter().map(|r| r.ids[2]).collect::<Vec<_>>();
        if f(gs) != f(ts) {
            *amb += 1;
            continue;
        }
        for (a, b) in gs.iter().zip(ts) {
            let d = |x: [f32; 4], y: [f32; 4]| {
                (0..3).map(|i| (x[i] - y[i]).abs()).fold(0.0f32, f32::max)
            };
            assert!(d(a.n_gap, b.n_gap) < 1e-4, "{k:?} normal {a:?} {b:?}");
            assert!(d(a.ra, b.ra) < 3e-5, "{k:?} ra {a:?} {b:?}");
            assert!(d(a.rb, b.rb) < 3e-5, "{k:?} rb {a:?} {b:?}");
            assert_eq!(a.ra[3], b.ra[3], "{k:?} μ");
            if b.ids[2] == PATCH_FEATURE {
                *patches += 1;
                assert!((a.rb[3] - b.rb[3]).abs() < 1e-4 * b.rb[3], "{k:?} r");
                assert!((a.n_gap[3] - b.n_gap[3]).abs() < 1e-4 * b.n_gap[3], "visc");
                assert_eq!(a.ids[3], b.ids[3]);
            }
        }
    }
    for k in gpu.keys().filter(|k| !twin.contains_key(k)) {
        *pairs += 1;
        *amb += 1;
        eprintln!("GPU-only pair {k:?}");
    }
}

const LUGRE: &str = r#"{ kind = "lugre_reduced", sigma0 = 1e5, sigma1 = 300.0, sigma2 = 0.0, mu_static = 0.3, v_stribeck = 1e-3 }"#;

/// A cylinder (R = 5 cm, half length 2 cm, 1000 kg/m³) standing on a plane, μ = 0.3,
/// material `model`, launched with `vel` and spin `omega` about its axis.
fn standing(model: &str, vel: f64, omega: f64) -> Simulation {
    // The exact cone: the relaxed one lifts a sliding point contact (book: Architecture, "The step"), which
    // would take load off the Coulomb rim points of the comparison.
    let text = format!(
        r#"
[simulation]
dt = 1e-3
duration = 0.2
[solver]
max_iterations = 100
tolerance = 1e-6
cone = "exact"
[[material]]
name = "m"
density = 1000.0
friction = 0.3
{model}
[[body]]
shape = "cylinder"
radius = 0.05
half_length = 0.02
position = [0.0, 0.0, 0.02]
velocity = [{vel}, 0.0, 0.0]
angular_velocity = [0.0, 0.0, {omega}]
material = "m"
[[boundary]]
kind = "plane"
point = [0.0, 0.0, 0.0]
normal = [0.0, 0.0, 1.0]
material = "m"
"#
    );
    let scene = parse_str(&text, Path::new("disc.toml")).unwrap();
    let state = setup::build_bodies(&scene);
    Simulation::new(shared_context(), &state, setup::step_settings(&scene)).unwrap()
}

fn d3(v: [f32; 4]) -> DVec3 {
    DVec3::new(v[0] as f64, v[1] as f64, v[2] as f64)
}

/// Angular deceleration between 0.02 s and 0.1 s of a cylinder spun at 20 rad/s on its
/// end, and its drift speed at 0.1 s.
fn spin_down(model: &str) -> (f64, f64) {
    let mut sim = standing(model, 0.0, 20.0);
    sim.advance(20, 0).unwrap();
    let w1 = d3(sim.read_state().unwrap().omega[1]).z;
    sim.advance(80, 0).unwrap();
    let st = sim.read_state().unwrap();
    let w2 = d3(st.omega[1]).z;
    assert!(w2 > 1.0, "stopped early: ω = {w2}");
    ((w1 - w2) / 0.08, d3(st.vel[1]).length())
}

/// The disc under uniform pressure: torque μ m g (2R/3), I = m R²/2, so the spin decays at
/// 4 μ g / (3 R) = 78.48 rad/s², within 3 %; the cylinder does not wander (|v| < 1e-3 m/s).
/// With Coulomb friction on the 4 rim points the torque is μ m g R (117.7 rad/s², 50 %
/// more): the check can tell the patch from the points, and that case is measured too. A
/// pure slide (v0 = 0.5 m/s) decelerates at μ g within 2 %, without turning.
#[test]
fn cylinder_on_its_end_spins_down_at_the_disc_torque_with_lugre_reduced() {
    let (g, mu, r) = (9.81, 0.3, 0.05);
    let want = 4.0 * mu * g / (3.0 * r);
    let model = format!("model = {LUGRE}");
    let (got, drift) = spin_down(&model);
    let (points, _) = spin_down("");
    eprintln!("disc spin-down: {got:.3} rad/s² vs {want:.3}; Coulomb rim points {points:.3} (2μg/R = {:.3})", 2.0 * mu * g / r);
    assert!(
        (got - want).abs() < 0.03 * want,
        "spin-down {got} vs {want}"
    );
    assert!(drift < 1e-3, "wanders: {drift} m/s");
    assert!(
        (points - 2.0 * mu * g / r).abs() < 0.03 * 2.0 * mu * g / r,
        "rim points {points}"
    );

    let mut sim = standing(&model, 0.5, 0.0);
    sim.advance(20, 0).unwrap();
    let v1 = d3(sim.read_state().unwrap().vel[1]).x;
    sim.advance(60, 0).unwrap();
    let st = sim.read_state().unwrap();
    let got = (v1 - d3(st.vel[1]).x) / 0.06;
    eprintln!("disc slide: {got:.4} m/s² vs {:.4}", mu * g);
    assert!((got - mu * g).abs() < 0.02 * mu * g, "slide {got}");
    assert!(
        d3(st.omega[1]).length() < 1e-3,
        "turns: {}",
        d3(st.omega[1])
    );
}

/// `lugre_reduced` with cylinders and no box is accepted; `lugre_patch` (box faces only) is
/// refused naming the material's model line.
#[test]
fn cylinder_patch_models_are_checked_by_file_line_field() {
    let scene = |model: &str, extra: &str| {
        let text = format!(
            r#"[simulation]
dt = 1e-3
steps = 2
[[material]]
name = "m"
density = 1000.0
friction = 0.3
model = {model}
[[body]]
shape = "cylinder"
radius = 0.05
half_length = 0.02
position = [0.0, 0.0, 0.02]
material = "m"
{extra}[[boundary]]
kind = "plane"
point = [0.0, 0.0, 0.0]
normal = [0.0, 0.0, 1.0]
material = "m"
"#
        );
        parse_str(&text, Path::new("disc.toml"))
    };
    scene(LUGRE, "").unwrap();
    let dist = r#"{ kind = "lugre_patch", sigma0 = 1e5, sigma1 = 300.0, sigma2 = 0.0, mu_static = 0.3, v_stribeck = 1e-3 }"#;
    let e = scene(dist, "").unwrap_err().to_string();
    assert!(
        e.contains("disc.toml:8")
            && e.contains("material[0].model.kind")
            && e.contains("no box body"),
        "{e}"
    );
}
