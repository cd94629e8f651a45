//! Helpers shared by the test files (`mod common;`): the GPU = f64 twin comparison of
//! contact sets used by the shape tests (boxes, capsules, clumps), and incline runs.
#![allow(dead_code)] // helpers some test modules use and the build may not reach

use bristlecone::bodies::BodyState;
use bristlecone::bodies::GpuBodies;
use bristlecone::collide::{BoundaryShape, Collide, CollideSettings, ContactRecord};
use bristlecone::gpu::shared_context;
use bristlecone::reference::collide::{detect, Contact64};
use glam::DVec3;
use std::collections::BTreeMap;

pub fn d3(v: [f32; 4]) -> DVec3 {
    DVec3::new(v[0] as f64, v[1] as f64, v[2] as f64)
}

/// One GPU collision pass on `state`; the contact list must not overflow.
pub fn gpu_contacts(
    state: &BodyState,
    shapes: &[BoundaryShape],
    settings: &CollideSettings,
) -> Vec<ContactRecord> {
    let ctx = shared_context();
    let bodies = GpuBodies::upload(&ctx, state).unwrap();
    let mut c = Collide::new(&ctx, &bodies, state, shapes, settings).unwrap();
    let counts = c.detect(&ctx).unwrap();
    assert_eq!(counts.overflow, 0);
    c.read_contacts(&ctx).unwrap()
}

/// What [`compare_contact_sets`] saw: every pair either side reported, the pairs whose
/// contact *set* (feature list) differs between f32 and f64, and the twin contacts of the
/// pairs that agree (each checked).
pub struct Comparison {
    pub pairs: Vec<(u32, u32)>,
    pub ambiguous: Vec<(u32, u32)>,
    pub matched: Vec<Contact64>,
}

type PairMap<T> = BTreeMap<(u32, u32), Vec<T>>;

/// GPU collision against the f64 twin, per pair. The GPU list must be sorted by key. Where
/// both report the same features, every contact must agree within the f32 bounds: gap and
/// lever arms to 2e-5 m (+1e-6 relative), the normal to `normal_tol(twin contact)`, the
/// materials and μ exactly.
pub fn compare_contact_sets(
    state: &BodyState,
    shapes: &[BoundaryShape],
    settings: &CollideSettings,
    normal_tol: impl Fn(&Contact64) -> f64,
) -> Comparison {
    compare_contact_sets_with(state, shapes, settings, normal_tol, |_| 2e-5)
}

/// As [`compare_contact_sets`] with the lever arms' tolerance per twin contact (m, plus
/// 1e-6 relative).
pub fn compare_contact_sets_with(
    state: &BodyState,
    shapes: &[BoundaryShape],
    settings: &CollideSettings,
    normal_tol: impl Fn(&Contact64) -> f64,
    arm_tol: impl Fn(&Contact64) -> f64,
) -> Comparison {
    let gpu = gpu_contacts(state, shapes, settings);
    let key = |c: &ContactRecord| (c.ids[0], c.ids[1], c.ids[2]);
    for w in gpu.windows(2) {
        assert!(
            key(&w[0]) < key(&w[1]),
            "GPU list not sorted: {:?} {:?}",
            w[0].ids,
            w[1].ids
        );
    }
    let mut g: PairMap<ContactRecord> = BTreeMap::new();
    for c in gpu {
        g.entry((c.ids[0], c.ids[1])).or_default().push(c);
    }
    let mut t: PairMap<Contact64> = BTreeMap::new();
    for c in detect(state, shapes, settings) {
        t.entry((c.a, c.b)).or_default().push(c);
    }
    let mut pairs: Vec<_> = g.keys().chain(t.keys()).copied().collect();
    pairs.sort();
    pairs.dedup();
    let (mut ambiguous, mut matched) = (Vec::new(), Vec::new());
    for k in &pairs {
        let gs = g.get(k).cloned().unwrap_or_default();
        let ts = t.get(k).cloned().unwrap_or_default();
        let gf: Vec<u32> = gs.iter().map(|c| c.ids[2]).collect();
        let tf: Vec<u32> = ts.iter().map(|c| c.feature).collect();
        if gf != tf {
            ambiguous.push(*k);
            continue;
        }
        for (gc, tc) in gs.iter().zip(ts) {
            check_contact(k, gc, &tc, normal_tol(&tc), arm_tol(&tc));
            matched.push(tc);
        }
    }
    Comparison {
        pairs,
        ambiguous,
        matched,
    }
}

fn check_contact(k: &(u32, u32), gc: &ContactRecord, tc: &Contact64, ntol: f64, atol: f64) {
    let what = format!("pair {k:?} feature {:#x}", tc.feature);
    assert!(
        (gc.n_gap[3] as f64 - tc.gap).abs() <= 2e-5,
        "{what}: gap {} vs {}",
        gc.n_gap[3],
        tc.gap
    );
    assert!(
        (d3(gc.n_gap) - tc.normal).length() <= ntol,
        "{what}: normal {:?} vs {}",
        gc.n_gap,
        tc.normal
    );
    let arm = |g: [f32; 4], t: DVec3| (d3(g) - t).length() <= atol + 1e-6 * t.length();
    assert!(arm(gc.ra, tc.ra), "{what}: ra {:?} vs {}", gc.ra, tc.ra);
    assert!(arm(gc.rb, tc.rb), "{what}: rb {:?} vs {}", gc.rb, tc.rb);
    assert_eq!(gc.ids[3], tc.materials, "{what}: materials");
    assert_eq!(gc.ra[3] as f64, tc.mu, "{what}: mu");
}

// ---------------------------------------------------------------- random solver problems

use bristlecone::bodies::{BodyInit, MOTION_FIXED, SHAPE_PLANE};
use bristlecone::solve::Contact;
use glam::DQuat;
use rand::Rng;
use rand_chacha::ChaCha8Rng;

/// Random bodies: 2 fixed walls first, then spheres (radius 0.05–0.15 m) with random
/// orientation, anisotropic inertia, velocities up to 0.5 m/s and spins up to `spin` rad/s.
pub fn random_bodies(rng: &mut ChaCha8Rng, n_bodies: usize, spin: f32) -> BodyState {
    let mut inits = Vec::new();
    for i in 0..n_bodies {
        let mut b = BodyInit::sphere(
            [
                rng.random_range(-1.0..1.0),
                rng.random_range(-1.0..1.0),
                rng.random_range(0.0..1.0),
            ],
            rng.random_range(0.05..0.15),
            2500.0,
        );
        let q = DQuat::from_euler(
            glam::EulerRot::XYZ,
            rng.random_range(0.0..6.0),
            rng.random_range(0.0..6.0),
            rng.random_range(0.0..6.0),
        );
        b.orientation = [q.x as f32, q.y as f32, q.z as f32, q.w as f32];
        for k in 0..3 {
            b.inv_inertia[k] *= rng.random_range(0.5..2.0);
            b.velocity[k] = rng.random_range(-0.5..0.5);
            b.angular_velocity[k] = rng.random_range(-spin..spin);
        }
        if i < 2 {
            b.motion = MOTION_FIXED;
            b.inv_mass = 0.0;
            b.inv_inertia = [0.0; 3];
            b.shape = SHAPE_PLANE;
        }
        inits.push(b);
    }
    BodyState::from_inits(&inits)
}

/// `n_contacts` random contacts between the bodies of `state`, sorted unique keys (A < B,
/// feature 0 or 1): random normals, lever arms of the bodies' radii, gaps −4…+1 mm,
/// μ 0.1–0.8, materials word from `materials`.
pub fn random_contacts(
    rng: &mut ChaCha8Rng,
    state: &BodyState,
    n_contacts: usize,
    mut materials: impl FnMut(&mut ChaCha8Rng) -> u32,
) -> Vec<Contact> {
    let n_bodies = state.len();
    let mut keys = std::collections::BTreeSet::new();
    while keys.len() < n_contacts {
        let a = rng.random_range(0..n_bodies as u32);
        let b = rng.random_range(0..n_bodies as u32);
        if a != b {
            keys.insert((a.min(b), a.max(b), rng.random_range(0..2u32)));
        }
    }
    let unit = |rng: &mut ChaCha8Rng| loop {
        let v = DVec3::new(
            rng.random_range(-1.0..1.0),
            rng.random_range(-1.0..1.0),
            rng.random_range(-1.0..1.0),
        );
        if v.length() > 0.1 && v.length() < 1.0 {
            return v.normalize();
        }
    };
    keys.into_iter()
        .map(|(a, b, f)| {
            let n = unit(rng);
            let (la, lb) = (state.pos[a as usize][3], state.pos[b as usize][3]);
            let ra = (n + 0.3 * unit(rng)).normalize() * la as f64;
            let rb = (-n + 0.3 * unit(rng)).normalize() * lb as f64;
            let gap = rng.random_range(-0.004..0.001);
            let mu = rng.random_range(0.1..0.8);
            Contact {
                n_gap: [n.x as f32, n.y as f32, n.z as f32, gap],
                ra: [ra.x as f32, ra.y as f32, ra.z as f32, mu],
                rb: [rb.x as f32, rb.y as f32, rb.z as f32, 0.0],
                ids: [a, b, f, materials(rng)],
            }
        })
        .collect()
}

// ---------------------------------------------------------------- incline runs

/// `[simulation]` and `[solver]` of an incline test: dt 1 ms for `seconds`, gravity
/// 9.81 m/s² tilted by θ about y (the incline's frame), the exact cone, ≤ 60 sweeps to 1e-7.
pub fn incline_header(theta: f64, seconds: f64) -> String {
    let (s, c) = theta.sin_cos();
    format!(
        "[simulation]\ndt = 1e-3\nduration = {seconds}\ngravity = [{}, 0.0, {}]\n\
         [solver]\ncone = \"exact\"\nmax_iterations = 60\ntolerance = 1e-7\n",
        9.81 * s,
        -9.81 * c
    )
}

/// Parses a scene text (`name` in its errors) and runs it for its duration: the scene and
/// the final state.
pub fn run_text(text: &str, name: &str) -> (bristlecone::scene::Scene, BodyState) {
    use bristlecone::{setup, step::Simulation};
    let scene = bristlecone::scene::parse_str(text, std::path::Path::new(name)).unwrap();
    let state = setup::build_bodies(&scene);
    let mut sim = Simulation::new(shared_context(), &state, setup::step_settings(&scene)).unwrap();
    sim.advance(scene.sim.steps as u32, 0).unwrap();
    let st = sim.read_state().unwrap();
    (scene, st)
}

/// A body (index 2) sliding on a slab (index 1) down an incline of θ for t seconds at
/// friction μ: [`assert_body_slides`], and the slab stays.
pub fn assert_slides(name: &str, st: &BodyState, q0: DQuat, theta: f64, mu: f64, t: f64) {
    assert_body_slides(name, st, 2, q0, theta, mu, t);
    let slab = d3(st.vel[1]);
    assert!(slab.length() < 1e-3, "the slab moves: {slab}");
}

/// Body `b` sliding down an incline of θ for t seconds at friction μ: its velocity is
/// g(sinθ − μcosθ)·t within 1 %, it neither lifts nor turns (rotation < 1e-4 rad from
/// `q0`). Prints the measures under `name`.
pub fn assert_body_slides(
    name: &str,
    st: &BodyState,
    b: usize,
    q0: DQuat,
    theta: f64,
    mu: f64,
    t: f64,
) {
    let (s, c) = theta.sin_cos();
    let rot = turned(q0, st.rot[b]);
    let v = d3(st.vel[b]);
    let want = 9.81 * (s - mu * c) * t;
    eprintln!(
        "{name}: v = {:.5} m/s vs {want:.5}, v_z = {:.2e}, rotation {rot:.2e}",
        v.x, v.z
    );
    assert!(
        (v.x - want).abs() <= 0.01 * want,
        "slides: {} vs {want}",
        v.x
    );
    assert!(v.z.abs() < 1e-3 * want, "lifts: v_z = {}", v.z);
    assert!(rot < 1e-4, "rotation {rot}");
}

/// The angle (rad, 0..π) of the rotation taking q0 to q.
pub fn turned(q0: DQuat, q: [f32; 4]) -> f64 {
    let q1 = DQuat::from_xyzw(q[0] as f64, q[1] as f64, q[2] as f64, q[3] as f64);
    let angle = (q1 * q0.inverse()).to_axis_angle().1;
    angle.min(std::f64::consts::TAU - angle)
}

/// Requires two simulations' bodies to hold the same bits (positions, velocities, angular
/// velocities): for paths that must never change a result.
pub fn assert_same_bodies(a: &bristlecone::step::Simulation, b: &bristlecone::step::Simulation) {
    let bits = |v: &[[f32; 4]]| {
        v.iter()
            .flatten()
            .map(|x| x.to_bits())
            .collect::<Vec<u32>>()
    };
    let (sa, sb) = (a.read_state().unwrap(), b.read_state().unwrap());
    assert_eq!(bits(&sa.pos), bits(&sb.pos), "positions differ");
    assert_eq!(bits(&sa.vel), bits(&sb.vel), "velocities differ");
    assert_eq!(
        bits(&sa.omega),
        bits(&sb.omega),
        "angular velocities differ"
    );
}

/// The largest difference of any body's linear or angular velocity between two solutions of
/// the same problem by the twin (e.g. Gauss–Seidel's against APGD's).
fn max_velocity_gap(
    a: &bristlecone::reference::solve::SolveOutput,
    b: &bristlecone::reference::solve::SolveOutput,
) -> f64 {
    let linear = a.vel.iter().zip(&b.vel);
    let angular = a.omega.iter().zip(&b.omega);
    linear
        .chain(angular)
        .map(|(x, y)| (*x - *y).length())
        .fold(0.0, f64::max)
}

/// Asserts that two solutions of the same problem by the twin give every body the same
/// velocities to 1e-6 of `scale`, after printing `what` with both sweep counts (`a`'s first).
pub fn assert_same_velocities(
    a: &bristlecone::reference::solve::SolveOutput,
    b: &bristlecone::reference::solve::SolveOutput,
    scale: f64,
    what: &str,
) {
    let dv = max_velocity_gap(a, b);
    eprintln!(
        "{what}, sweeps {} / {}, max |Δv| {dv:.2e} (scale {scale:.2})",
        a.iterations, b.iterations
    );
    assert!(
        dv <= 1e-6 * scale,
        "{what}: velocities differ by {dv} (scale {scale})"
    );
}
