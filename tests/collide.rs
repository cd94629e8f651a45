//! Collision detection on the GPU against the f64 reference (`reference::collide`) and
//! against analytic contacts for every boundary kind.
//!
//! Tolerances. Positions are f32, so a gap computed on the GPU differs from the f64 gap by a
//! few ulps of the coordinates involved: eps = 1e-6 + 1e-6·(|x_A| + |x_B|) (about 8 ulps).
//! Contacts whose reference gap lies within eps of the envelope may legitimately be kept or
//! dropped; all others must match exactly (same keys, same order). Gaps agree to eps,
//! normals to 8·eps / distance between the centres (capped), lever arms to 8·eps + that
//! normal error times the lever length.

use bristlecone::bodies::*;
use bristlecone::collide::{BoundaryShape, Collide, CollideSettings, ContactRecord};
use bristlecone::gpu::shared_context;
use bristlecone::reference::collide::{detect, Contact64};
use glam::DVec3;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::collections::{HashMap, HashSet};

fn boundary(shape: u32, index: u32, pos: [f32; 3], rot: [f32; 4]) -> BodyInit {
    BodyInit {
        position: pos,
        radius: 0.0,
        orientation: rot,
        velocity: [0.0; 3],
        angular_velocity: [0.0; 3],
        inv_mass: 0.0,
        inv_inertia: [0.0; 3],
        motion: MOTION_FIXED,
        material: 0,
        shape,
        shape_index: index,
    }
}

const ID: [f32; 4] = [0.0, 0.0, 0.0, 1.0];

fn settings(envelope: f32) -> CollideSettings {
    CollideSettings {
        envelope,
        friction: vec![0.5, 0.3, 0.8],
    }
}

fn gpu_detect(
    state: &BodyState,
    shapes: &[BoundaryShape],
    s: &CollideSettings,
) -> (Vec<ContactRecord>, Collide) {
    let ctx = shared_context();
    let bodies = GpuBodies::upload(&ctx, state).unwrap();
    let mut c = Collide::new(&ctx, &bodies, state, shapes, s).unwrap();
    let counts = c.detect(&ctx).unwrap();
    assert_eq!(counts.overflow, 0);
    let out = c.read_contacts(&ctx).unwrap();
    assert_eq!(out.len() as u32, counts.contacts);
    (out, c)
}

fn key(c: &ContactRecord) -> (u32, u32, u32) {
    (c.ids[0], c.ids[1], c.ids[2])
}

fn d3(v: [f32; 4]) -> DVec3 {
    DVec3::new(v[0] as f64, v[1] as f64, v[2] as f64)
}

/// Compares a GPU contact list with the reference; returns (matched, ambiguous) counts.
fn compare(
    gpu: &[ContactRecord],
    state: &BodyState,
    shapes: &[BoundaryShape],
    s: &CollideSettings,
) -> (usize, usize) {
    let env = s.envelope as f64;
    let wide = CollideSettings {
        envelope: s.envelope + 0.05,
        ..s.clone()
    };
    let reference = detect(state, shapes, &wide);
    let eps = |c: &Contact64| {
        1e-6 + 1e-6 * (d3(state.pos[c.a as usize]).length() + d3(state.pos[c.b as usize]).length())
    };
    let mut ambiguous = HashSet::new();
    let mut inside = Vec::new();
    let mut by_key = HashMap::new();
    for c in &reference {
        let e = eps(c);
        if (c.gap - env).abs() <= e {
            ambiguous.insert(c.key());
        } else if c.gap < env {
            inside.push(*c);
        }
        by_key.insert(c.key(), *c);
    }
    for w in gpu.windows(2) {
        assert!(
            key(&w[0]) < key(&w[1]),
            "GPU list not strictly sorted: {w:?}"
        );
    }
    let kept: Vec<&ContactRecord> = gpu
        .iter()
        .filter(|c| !ambiguous.contains(&key(c)))
        .collect();
    let gk: Vec<_> = kept.iter().map(|c| key(c)).collect();
    let rk: Vec<_> = inside.iter().map(|c| c.key()).collect();
    if gk != rk {
        let g: HashSet<_> = gk.iter().collect();
        let r: HashSet<_> = rk.iter().collect();
        let extra: Vec<_> = g.difference(&r).take(5).collect();
        let missing: Vec<_> = r.difference(&g).take(5).collect();
        panic!(
            "contact sets differ: GPU {} vs reference {}; extra on GPU {extra:?} (ref {:?}), missing {missing:?} (ref {:?})",
            gk.len(),
            rk.len(),
            extra.first().and_then(|k| by_key.get(*k)),
            missing.first().and_then(|k| by_key.get(*k)),
        );
    }
    for (g, r) in kept.iter().zip(&inside) {
        let e = eps(r);
        let dist = (d3(state.pos[r.b as usize]) - d3(state.pos[r.a as usize])).length();
        let en = (8.0 * e / dist.max(1e-12)).clamp(1e-6, 2.0);
        let gn = d3(g.n_gap);
        assert!(
            (g.n_gap[3] as f64 - r.gap).abs() <= e,
            "{:?}: gap {} vs {} (eps {e:e})",
            r.key(),
            g.n_gap[3],
            r.gap
        );
        if en < 1.0 {
            assert!(
                (gn - r.normal).length() <= en,
                "{:?}: normal {gn} vs {}",
                r.key(),
                r.normal
            );
        }
        let lever = r.ra.length().max(r.rb.length());
        let el = 8.0 * e + en * lever;
        if en < 1.0 {
            assert!(
                (d3(g.ra) - r.ra).length() <= el,
                "{:?}: ra {:?} vs {}",
                r.key(),
                g.ra,
                r.ra
            );
            assert!(
                (d3(g.rb) - r.rb).length() <= el,
                "{:?}: rb {:?} vs {}",
                r.key(),
                g.rb,
                r.rb
            );
        }
        assert_eq!(g.ra[3] as f64, r.mu, "{:?}: mu", r.key());
        assert_eq!(g.rb[3], 0.0);
        assert_eq!(g.ids[3], r.materials, "{:?}: materials", r.key());
    }
    (kept.len(), gpu.len() - kept.len())
}

/// Checks the per-body CSR lists against the contact list.
fn check_csr(c: &Collide, contacts: &[ContactRecord], n: usize) {
    let ctx = shared_context();
    let (offsets, entries) = c.read_csr(&ctx).unwrap();
    let mut want: Vec<Vec<u32>> = vec![Vec::new(); n];
    for (i, k) in contacts.iter().enumerate() {
        want[k.ids[0] as usize].push(2 * i as u32);
        want[k.ids[1] as usize].push(2 * i as u32 + 1);
    }
    assert_eq!(offsets.len(), n + 1);
    for b in 0..n {
        let row = &entries[offsets[b] as usize..offsets[b + 1] as usize];
        let mut w = want[b].clone();
        w.sort_unstable();
        assert_eq!(row, &w[..], "CSR row of body {b}");
    }
}

/// A random scene: a floor plane, a box container around the region, then grains.
struct Scene {
    state: BodyState,
    shapes: Vec<BoundaryShape>,
}

fn random_scene(seed: u64, n: usize, dense: bool, far: bool) -> Scene {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut state = BodyState::default();
    let shapes = vec![
        BoundaryShape::Plane,
        BoundaryShape::BoxContainer {
            half_extents: [1.0, 1.0, 1.0],
            open_top: true,
        },
    ];
    state.push(&boundary(SHAPE_PLANE, 0, [0.0, 0.0, -1.0], ID));
    state.push(&boundary(SHAPE_BOX_CONTAINER, 1, [0.0, 0.0, 0.0], ID));
    // Polydisperse radii, ratio 1:5; the region's size sets the packing density.
    let (rmin, rmax) = (0.004f32, 0.02f32);
    let mean_vol = 4.0 / 3.0 * std::f32::consts::PI * 0.012f32.powi(3);
    let frac = if dense { 0.6 } else { 0.05 };
    let side = (n as f32 * mean_vol / frac).cbrt();
    for i in 0..n {
        let r = rng.random_range(rmin..rmax);
        let mut p = [0.0f32; 3].map(|_| rng.random_range(-0.5 * side..0.5 * side));
        if i % 7 == 3 && i > 0 {
            // Near-touching / exactly touching / deep overlap with the previous grain.
            let q = state.pos[state.len() - 1];
            let dir = DVec3::new(rng.random(), rng.random(), rng.random()).normalize();
            let kind = rng.random_range(0..3);
            let dist = match kind {
                0 => (q[3] + r) as f64 * (1.0 + rng.random_range(-1e-3..1e-3)),
                1 => (q[3] + r) as f64,
                _ => (q[3] + r) as f64 * rng.random_range(0.0..0.5),
            };
            p = [0, 1, 2].map(|a| q[a] + (dir[a] * dist) as f32);
        }
        if far && i % 97 == 5 {
            p = [0.0; 3].map(|_| rng.random_range(-1e4f32..1e4));
        }
        let mut b = BodyInit::sphere(p, r, 2500.0);
        b.material = rng.random_range(0..3);
        state.push(&b);
    }
    Scene { state, shapes }
}

#[test]
fn random_polydisperse_scenes_match_the_reference() {
    let s = settings(0.002);
    let mut total = (0, 0);
    for (seed, n, dense, far) in [
        (1, 1000, true, false),
        (2, 1000, false, true),
        (3, 3000, true, true),
        (4, 3000, false, false),
        (5, 10000, true, true),
        (6, 20000, true, false),
        (7, 2000, true, true),
        (8, 500, true, false),
    ] {
        let sc = random_scene(seed, n, dense, far);
        let (gpu, c) = gpu_detect(&sc.state, &sc.shapes, &s);
        let (m, a) = compare(&gpu, &sc.state, &sc.shapes, &s);
        assert!(m > n / 10, "seed {seed}: only {m} contacts");
        check_csr(&c, &gpu, sc.state.len());
        total.0 += m;
        total.1 += a;
    }
    eprintln!(
        "random scenes: {} contacts matched, {} in the ambiguous band",
        total.0, total.1
    );
}

#[test]
fn detection_is_deterministic_byte_for_byte() {
    let sc = random_scene(11, 5000, true, true);
    let s = settings(0.002);
    let ctx = shared_context();
    let (a, c1) = gpu_detect(&sc.state, &sc.shapes, &s);
    let csr_a = c1.read_csr(&ctx).unwrap();
    // Same object, second run, and a fresh object.
    c1.detect_once(&ctx).unwrap();
    let b = c1.read_contacts(&ctx).unwrap();
    let (c, c2) = gpu_detect(&sc.state, &sc.shapes, &s);
    let csr_c = c2.read_csr(&ctx).unwrap();
    assert_eq!(
        bytemuck::cast_slice::<_, u8>(&a),
        bytemuck::cast_slice::<_, u8>(&b)
    );
    assert_eq!(
        bytemuck::cast_slice::<_, u8>(&a),
        bytemuck::cast_slice::<_, u8>(&c)
    );
    assert_eq!(csr_a, csr_c);
}

#[test]
fn overflow_is_flagged_and_growing_recovers_everything() {
    let sc = random_scene(21, 2000, true, false);
    let s = settings(0.002);
    let ctx = shared_context();
    let bodies = GpuBodies::upload(&ctx, &sc.state).unwrap();
    let mut c = Collide::with_capacity(&ctx, &bodies, &sc.state, &sc.shapes, &s, 16).unwrap();
    let counts = c.detect_once(&ctx).unwrap();
    let reference = detect(&sc.state, &sc.shapes, &s);
    assert_eq!(counts.overflow, bristlecone::collide::OVERFLOW_CONTACTS);
    assert_eq!(counts.needed_contacts as usize, reference.len());
    assert_eq!(
        counts.indirect,
        [0, 1, 1],
        "no per-contact work on overflow"
    );
    assert!(c.ensure_capacity(&ctx).unwrap());
    assert!(c.capacity() as usize >= reference.len());
    let counts = c.detect_once(&ctx).unwrap();
    assert_eq!(counts.overflow, 0);
    assert_eq!(counts.contacts as usize, reference.len());
    assert_eq!(
        counts.indirect,
        [(reference.len() as u32).div_ceil(256), 1, 1]
    );
    let gpu = c.read_contacts(&ctx).unwrap();
    compare(&gpu, &sc.state, &sc.shapes, &s);
    check_csr(&c, &gpu, sc.state.len());
    assert!(!c.ensure_capacity(&ctx).unwrap());
}
