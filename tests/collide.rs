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
        orientation: rot,
        ..BodyInit::fixed(shape, index, pos, 0.0)
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
    // Widen the reference's envelope just enough to see every contact of the ambiguous band.
    let xmax = state
        .pos
        .iter()
        .map(|p| d3(*p).length())
        .fold(0.0, f64::max);
    let wide = CollideSettings {
        envelope: s.envelope + (2e-6 + 4e-6 * xmax) as f32,
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

/// 10⁵ polydisperse grains in a dense packing, with walls.
#[test]
fn hundred_thousand_grains_match_the_reference() {
    let s = settings(0.002);
    let sc = random_scene(9, 100_000, true, false);
    let (gpu, c) = gpu_detect(&sc.state, &sc.shapes, &s);
    let (m, a) = compare(&gpu, &sc.state, &sc.shapes, &s);
    assert!(m > 100_000, "only {m} contacts");
    check_csr(&c, &gpu, sc.state.len());
    eprintln!("1e5 grains: {m} contacts matched, {a} ambiguous");
}

/// Sphere rows of 15, 16, 17 and 40 contacts (a grain below the large-grain ratio with
/// smaller grains on its surface, all of higher index): the write pass sorts rows of up to
/// 16 ids in registers and ranks longer ones by counting, in the same SIMD groups. The same
/// clusters with the big grain last make it B of 15 … 40 contacts: the CSR's per-body sort
/// of B entries takes the same two paths.
#[test]
fn long_sphere_rows_match_the_reference() {
    let mut state = BodyState::default();
    state.push(&boundary(SHAPE_PLANE, 0, [0.0, 0.0, -1.0], ID));
    let (big, small) = (0.01f32, 0.004f32);
    let (mut rows, mut cols) = (Vec::new(), Vec::new());
    for (k, n) in [15usize, 16, 17, 40, 15, 16, 17, 40]
        .into_iter()
        .enumerate()
    {
        let c = [0.1 * k as f32, 0.0, 0.0];
        let last = k >= 4;
        if !last {
            rows.push((state.len() as u32, n));
            state.push(&BodyInit::sphere(c, big, 2500.0));
        }
        // Fibonacci points on the big grain's surface, 0.5 mm gap: inside the envelope.
        let golden = std::f32::consts::PI * (3.0 - 5f32.sqrt());
        for m in 0..n {
            let z = 1.0 - 2.0 * (m as f32 + 0.5) / n as f32;
            let (s, a) = ((1.0 - z * z).sqrt(), golden * m as f32);
            let d = big + small + 5e-4;
            let p = [c[0] + d * s * a.cos(), c[1] + d * s * a.sin(), c[2] + d * z];
            state.push(&BodyInit::sphere(p, small, 2500.0));
        }
        if last {
            cols.push((state.len() as u32, n));
            state.push(&BodyInit::sphere(c, big, 2500.0));
        }
    }
    let s = settings(0.002);
    let shapes = [BoundaryShape::Plane];
    let (gpu, c) = gpu_detect(&state, &shapes, &s);
    compare(&gpu, &state, &shapes, &s);
    check_csr(&c, &gpu, state.len());
    for (a, n) in rows {
        let row = gpu.iter().filter(|c| c.ids[0] == a).count();
        assert_eq!(row, n, "grain {a}: a row of {n} contacts expected");
    }
    for (b, n) in cols {
        let col = gpu.iter().filter(|c| c.ids[1] == b).count();
        assert_eq!(col, n, "grain {b}: B of {n} contacts expected");
    }
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

// ------------------------------------------------------------------ analytic boundary tests

/// One boundary body plus spheres; returns the boundary contacts of each sphere (by index).
fn boundary_contacts(
    shape: BoundaryShape,
    kind: u32,
    pose: ([f32; 3], [f32; 4]),
    spheres: &[([f32; 3], f32)],
    envelope: f32,
) -> Vec<Vec<ContactRecord>> {
    let mut state = BodyState::default();
    state.push(&boundary(kind, 0, pose.0, pose.1));
    for (p, r) in spheres {
        state.push(&BodyInit::sphere(*p, *r, 1000.0));
    }
    let shapes = vec![shape];
    let s = settings(envelope);
    let (gpu, _) = gpu_detect(&state, &shapes, &s);
    // The reference agrees on these too.
    compare(&gpu, &state, &shapes, &s);
    let mut out = vec![Vec::new(); spheres.len()];
    for c in gpu.iter().filter(|c| c.ids[0] == 0) {
        out[c.ids[1] as usize - 1].push(*c);
    }
    out
}

const TOL: f64 = 2e-6;

/// Asserts one contact: feature, gap, normal, and the contract's contact point.
fn expect(
    c: &ContactRecord,
    pose: [f32; 3],
    centre: [f32; 3],
    r: f32,
    feature: u32,
    gap: f64,
    n: [f64; 3],
) {
    let n = DVec3::from(n).normalize();
    assert_eq!(c.ids[2], feature, "{c:?}");
    assert!(
        (c.n_gap[3] as f64 - gap).abs() <= TOL,
        "gap {} vs {gap}",
        c.n_gap[3]
    );
    assert!(
        (d3(c.n_gap) - n).length() <= TOL,
        "normal {:?} vs {n}",
        c.n_gap
    );
    let xb = DVec3::from(centre.map(|v| v as f64));
    let p = xb - n * (r as f64 + 0.5 * gap);
    assert!((d3(c.rb) - (p - xb)).length() <= TOL, "rb {:?}", c.rb);
    let xa = DVec3::from(pose.map(|v| v as f64));
    assert!((d3(c.ra) - (p - xa)).length() <= TOL, "ra {:?}", c.ra);
}

#[test]
fn plane_contacts_are_exact() {
    let pose = [0.0, 0.0, 0.5];
    let sp = [
        ([0.3, -0.2, 0.55], 0.1),
        ([1.0, 1.0, 0.608], 0.1),
        ([2.0, 0.0, 0.2], 0.1),
    ];
    let c = boundary_contacts(BoundaryShape::Plane, SHAPE_PLANE, (pose, ID), &sp, 0.01);
    expect(
        &c[0][0],
        pose,
        sp[0].0,
        0.1,
        0,
        0.55f32 as f64 - 0.5 - 0.1,
        [0.0, 0.0, 1.0],
    );
    expect(
        &c[1][0],
        pose,
        sp[1].0,
        0.1,
        0,
        0.608f32 as f64 - 0.5 - 0.1,
        [0.0, 0.0, 1.0],
    );
    expect(
        &c[2][0],
        pose,
        sp[2].0,
        0.1,
        0,
        0.2f32 as f64 - 0.5 - 0.1,
        [0.0, 0.0, 1.0],
    );
    // A tilted plane: +90° about x maps local +z to world -y.
    let h = std::f32::consts::FRAC_1_SQRT_2;
    let sp = [([0.0, -0.105, 0.0], 0.1), ([0.0, -0.2, 0.0], 0.1)];
    let c = boundary_contacts(
        BoundaryShape::Plane,
        SHAPE_PLANE,
        ([0.0; 3], [h, 0.0, 0.0, h]),
        &sp,
        0.01,
    );
    assert_eq!(c[0].len(), 1);
    assert!(c[1].is_empty(), "gap 0.1 is beyond the envelope");
    assert!((c[0][0].n_gap[3] as f64 - 0.005).abs() < 1e-6);
    assert!((d3(c[0][0].n_gap) - DVec3::new(0.0, -1.0, 0.0)).length() < 1e-6);
}

#[test]
fn box_container_walls_edges_and_corners() {
    let f = |x: f32| x as f64;
    let shape = |open_top| BoundaryShape::BoxContainer {
        half_extents: [1.0, 1.0, 1.0],
        open_top,
    };
    let r = 0.1;
    let sp = [
        ([0.0, 0.0, 0.0], r),      // centre: nothing
        ([0.95, 0.0, 0.0], r),     // +x wall
        ([-0.92, 0.93, -0.95], r), // corner: -x, +y, -z
        ([0.95, -0.96, 0.0], r),   // edge: +x, -y
        ([0.0, 0.0, 0.95], r),     // top
        ([0.0, 0.0, 1.5], r),      // above the box: nothing
    ];
    for open in [false, true] {
        let c = boundary_contacts(shape(open), SHAPE_BOX_CONTAINER, ([0.0; 3], ID), &sp, 0.01);
        let o = [0.0; 3];
        assert!(c[0].is_empty());
        assert_eq!(c[1].len(), 1);
        expect(
            &c[1][0],
            o,
            sp[1].0,
            r,
            1,
            1.0 - f(0.95) - f(r),
            [-1.0, 0.0, 0.0],
        );
        assert_eq!(c[2].len(), 3, "corner: three walls");
        expect(
            &c[2][0],
            o,
            sp[2].0,
            r,
            0,
            f(-0.92) + 1.0 - f(r),
            [1.0, 0.0, 0.0],
        );
        expect(
            &c[2][1],
            o,
            sp[2].0,
            r,
            3,
            1.0 - f(0.93) - f(r),
            [0.0, -1.0, 0.0],
        );
        expect(
            &c[2][2],
            o,
            sp[2].0,
            r,
            4,
            f(-0.95) + 1.0 - f(r),
            [0.0, 0.0, 1.0],
        );
        assert_eq!(c[3].len(), 2, "edge: two walls");
        expect(
            &c[3][0],
            o,
            sp[3].0,
            r,
            1,
            1.0 - f(0.95) - f(r),
            [-1.0, 0.0, 0.0],
        );
        expect(
            &c[3][1],
            o,
            sp[3].0,
            r,
            2,
            f(-0.96) + 1.0 - f(r),
            [0.0, 1.0, 0.0],
        );
        if open {
            assert!(c[4].is_empty(), "open top has no +z wall");
        } else {
            expect(
                &c[4][0],
                o,
                sp[4].0,
                r,
                5,
                1.0 - f(0.95) - f(r),
                [0.0, 0.0, -1.0],
            );
        }
        assert!(c[5].is_empty());
    }
    // A moved container: the pose comes from the body.
    let pose = [10.0, -3.0, 2.0];
    let sp = [([10.95, -3.0, 2.0], r)];
    let c = boundary_contacts(shape(false), SHAPE_BOX_CONTAINER, (pose, ID), &sp, 0.01);
    assert_eq!(c[0].len(), 1);
    expect(
        &c[0][0],
        pose,
        sp[0].0,
        r,
        1,
        11.0 - f(10.95) - f(r),
        [-1.0, 0.0, 0.0],
    );
    assert!((c[0][0].n_gap[3] as f64 - (1.0 - 0.95 - 0.1)).abs() < 2e-6);
}

#[test]
fn solid_box_faces_corners_and_inside() {
    let pose = [2.0, 0.0, 0.0];
    let shape = BoundaryShape::SolidBox {
        half_extents: [0.5, 0.5, 0.5],
    };
    let sp = [
        ([2.6, 0.0, 0.0], 0.15),
        ([2.6, 0.6, 0.6], 0.2),
        ([2.4, 0.1, 0.0], 0.05),
        ([3.0, 0.0, 0.0], 0.1),
    ];
    let c = boundary_contacts(shape, SHAPE_SOLID_BOX, (pose, ID), &sp, 0.01);
    let f = |x: f32| x as f64;
    expect(
        &c[0][0],
        pose,
        sp[0].0,
        0.15,
        0,
        f(2.6) - 2.5 - f(0.15),
        [1.0, 0.0, 0.0],
    );
    let d = DVec3::new(f(2.6) - 2.5, f(0.6) - 0.5, f(0.6) - 0.5);
    expect(
        &c[1][0],
        pose,
        sp[1].0,
        0.2,
        0,
        d.length() - f(0.2),
        d.to_array(),
    );
    expect(
        &c[2][0],
        pose,
        sp[2].0,
        0.05,
        0,
        -(2.5 - f(2.4)) - f(0.05),
        [1.0, 0.0, 0.0],
    );
    assert!(c[3].is_empty());
}

#[test]
fn cylinder_container_side_bottom_top() {
    let f = |x: f32| x as f64;
    let r = 0.1;
    let sp = [
        ([0.95, 0.0, 1.0], r),
        ([0.6, 0.72, 1.0], r),
        ([0.95, 0.0, 0.05], r),
        ([0.0, 0.0, 1.95], r),
        ([0.0, 0.0, 1.0], r),
    ];
    for open in [false, true] {
        let shape = BoundaryShape::CylinderContainer {
            radius: 1.0,
            height: 2.0,
            open_top: open,
        };
        let c = boundary_contacts(shape, SHAPE_CYLINDER_CONTAINER, ([0.0; 3], ID), &sp, 0.1);
        let o = [0.0; 3];
        assert_eq!(c[0].len(), 1);
        expect(
            &c[0][0],
            o,
            sp[0].0,
            r,
            0,
            1.0 - f(0.95) - f(r),
            [-1.0, 0.0, 0.0],
        );
        let rho = (f(0.6).powi(2) + f(0.72).powi(2)).sqrt();
        assert_eq!(c[1].len(), 1);
        expect(
            &c[1][0],
            o,
            sp[1].0,
            r,
            0,
            1.0 - rho - f(r),
            [-f(0.6) / rho, -f(0.72) / rho, 0.0],
        );
        assert_eq!(c[2].len(), 2, "side and bottom");
        expect(
            &c[2][0],
            o,
            sp[2].0,
            r,
            0,
            1.0 - f(0.95) - f(r),
            [-1.0, 0.0, 0.0],
        );
        expect(&c[2][1], o, sp[2].0, r, 1, f(0.05) - f(r), [0.0, 0.0, 1.0]);
        if open {
            assert!(c[3].is_empty());
        } else {
            expect(
                &c[3][0],
                o,
                sp[3].0,
                r,
                2,
                2.0 - f(1.95) - f(r),
                [0.0, 0.0, -1.0],
            );
        }
        assert!(c[4].is_empty());
    }
}

#[test]
fn solid_cylinder_side_top_and_rim() {
    let f = |x: f32| x as f64;
    let pose = [5.0, 0.0, 0.0];
    let shape = BoundaryShape::SolidCylinder {
        radius: 0.5,
        height: 1.0,
    };
    let sp = [
        ([5.6, 0.0, 0.5], 0.15),
        ([5.0, 0.2, 1.1], 0.15),
        ([5.6, 0.0, 1.1], 0.15),
        ([5.0, 0.4, 0.5], 0.15),
    ];
    let c = boundary_contacts(shape, SHAPE_SOLID_CYLINDER, (pose, ID), &sp, 0.01);
    expect(
        &c[0][0],
        pose,
        sp[0].0,
        0.15,
        0,
        f(5.6) - 5.5 - f(0.15),
        [1.0, 0.0, 0.0],
    );
    expect(
        &c[1][0],
        pose,
        sp[1].0,
        0.15,
        0,
        f(1.1) - 1.0 - f(0.15),
        [0.0, 0.0, 1.0],
    );
    let d = DVec3::new(f(5.6) - 5.5, 0.0, f(1.1) - 1.0);
    expect(
        &c[2][0],
        pose,
        sp[2].0,
        0.15,
        0,
        d.length() - f(0.15),
        d.to_array(),
    );
    // Inside, nearest the side: depth 0.5 - 0.4.
    expect(
        &c[3][0],
        pose,
        sp[3].0,
        0.15,
        0,
        -(0.5 - f(0.4)) - f(0.15),
        [0.0, 1.0, 0.0],
    );
}

fn square() -> BoundaryShape {
    BoundaryShape::Mesh {
        vertices: vec![
            [0.0, 0.0, 0.0],
            [1.0, 0.0, 0.0],
            [1.0, 1.0, 0.0],
            [0.0, 1.0, 0.0],
        ],
        triangles: vec![[0, 1, 2], [0, 2, 3]],
    }
}

#[test]
fn mesh_face_edge_and_vertex_contacts() {
    let f = |x: f32| x as f64;
    let r = 0.1;
    let sp = [
        ([0.7, 0.2, 0.05], r),     // face of triangle 0 (above)
        ([0.7, 0.2, -0.05], r),    // face of triangle 0 (below: two-sided)
        ([0.2, 0.7, 0.05], r),     // face of triangle 1
        ([0.5, -0.05, 0.05], r),   // boundary edge 0 of triangle 0
        ([-0.05, -0.05, 0.05], r), // vertex 0 (owned by triangle 0, its vertex 0)
        ([1.05, 1.05, 0.05], r),   // vertex 2 (shared; owned by triangle 0, its vertex 2)
        ([-0.05, 1.05, 0.05], r),  // vertex 3 (triangle 1 only, its vertex 2)
        ([0.5, 0.5, 0.05], r),     // exactly over the shared diagonal: one contact
        ([0.5, 0.5, 0.3], r),      // too far
    ];
    let o = [0.0; 3];
    let c = boundary_contacts(square(), SHAPE_MESH, (o, ID), &sp, 0.01);
    for (i, list) in c.iter().enumerate().take(8) {
        assert_eq!(list.len(), 1, "sphere {i}: {list:?}");
    }
    expect(&c[0][0], o, sp[0].0, r, 0, f(0.05) - f(r), [0.0, 0.0, 1.0]);
    expect(&c[1][0], o, sp[1].0, r, 0, f(0.05) - f(r), [0.0, 0.0, -1.0]);
    expect(&c[2][0], o, sp[2].0, r, 7, f(0.05) - f(r), [0.0, 0.0, 1.0]);
    let d = DVec3::new(0.0, f(-0.05), f(0.05));
    expect(&c[3][0], o, sp[3].0, r, 1, d.length() - f(r), d.to_array());
    let d = DVec3::new(f(-0.05), f(-0.05), f(0.05));
    expect(&c[4][0], o, sp[4].0, r, 4, d.length() - f(r), d.to_array());
    let d = DVec3::new(f(1.05) - 1.0, f(1.05) - 1.0, f(0.05));
    expect(&c[5][0], o, sp[5].0, r, 6, d.length() - f(r), d.to_array());
    let d = DVec3::new(f(-0.05), f(1.05) - 1.0, f(0.05));
    expect(&c[6][0], o, sp[6].0, r, 13, d.length() - f(r), d.to_array());
    assert!((c[7][0].n_gap[3] as f64 - (f(0.05) - f(r))).abs() < TOL);
    assert!((d3(c[7][0].n_gap) - DVec3::Z).length() < TOL);
    assert!(c[8].is_empty());
}

/// A sweep of spheres over a flat two-triangle square: the distance to a flat convex square is
/// unique, so every touching sphere must get exactly one contact, with the exact gap.
#[test]
fn mesh_has_no_duplicate_contacts_on_a_sweep() {
    let mut sp = Vec::new();
    for i in 0..25 {
        for j in 0..25 {
            let (x, y) = (-0.1 + 0.05 * i as f32, -0.1 + 0.05 * j as f32);
            sp.push(([x, y, 0.04 + 0.002 * ((i + j) % 5) as f32], 0.1f32));
        }
    }
    let c = boundary_contacts(square(), SHAPE_MESH, ([0.0; 3], ID), &sp, 0.01);
    for (k, ((p, r), list)) in sp.iter().zip(&c).enumerate() {
        let q = DVec3::new(
            (p[0] as f64).clamp(0.0, 1.0),
            (p[1] as f64).clamp(0.0, 1.0),
            0.0,
        );
        let gap = (DVec3::from(p.map(|v| v as f64)) - q).length() - *r as f64;
        if gap <= 0.01 - 1e-6 {
            assert_eq!(list.len(), 1, "sphere {k} at {p:?}: {list:?}");
            assert!((list[0].n_gap[3] as f64 - gap).abs() < TOL, "sphere {k}");
        } else if gap > 0.01 + 1e-6 {
            assert!(list.is_empty(), "sphere {k}");
        }
    }
}

/// Every boundary kind in a random pose, plus a bumpy height-field mesh, against the
/// reference with thousands of random spheres.
#[test]
fn boundaries_in_random_poses_match_the_reference() {
    let mut rng = ChaCha8Rng::seed_from_u64(99);
    // Height field 12 x 12 cells.
    let m = 12;
    let mut vertices = Vec::new();
    for j in 0..=m {
        for i in 0..=m {
            let (x, y) = (
                i as f32 / m as f32 * 2.0 - 1.0,
                j as f32 / m as f32 * 2.0 - 1.0,
            );
            vertices.push([x, y, 0.15 * (3.0 * x).sin() * (2.0 * y).cos()]);
        }
    }
    let mut triangles = Vec::new();
    for j in 0..m {
        for i in 0..m {
            let v = j * (m + 1) + i;
            triangles.push([v, v + 1, v + m + 2]);
            triangles.push([v, v + m + 2, v + m + 1]);
        }
    }
    let shapes = vec![
        BoundaryShape::Plane,
        BoundaryShape::BoxContainer {
            half_extents: [1.0, 0.8, 0.6],
            open_top: true,
        },
        BoundaryShape::SolidBox {
            half_extents: [0.3, 0.2, 0.4],
        },
        BoundaryShape::CylinderContainer {
            radius: 0.9,
            height: 1.2,
            open_top: false,
        },
        BoundaryShape::SolidCylinder {
            radius: 0.3,
            height: 0.5,
        },
        BoundaryShape::Mesh {
            vertices,
            triangles,
        },
    ];
    let kinds = [
        SHAPE_PLANE,
        SHAPE_BOX_CONTAINER,
        SHAPE_SOLID_BOX,
        SHAPE_CYLINDER_CONTAINER,
        SHAPE_SOLID_CYLINDER,
        SHAPE_MESH,
    ];
    let mut state = BodyState::default();
    for (i, &k) in kinds.iter().enumerate() {
        let axis = DVec3::new(rng.random(), rng.random(), rng.random()).normalize();
        let q = glam::DQuat::from_axis_angle(axis, rng.random_range(-0.5..0.5));
        let p = [0.0; 3].map(|_| rng.random_range(-0.2f32..0.2));
        state.push(&boundary(
            k,
            i as u32,
            p,
            [q.x as f32, q.y as f32, q.z as f32, q.w as f32],
        ));
    }
    for _ in 0..4000 {
        let p = [0.0; 3].map(|_| rng.random_range(-1.2f32..1.2));
        state.push(&BodyInit::sphere(p, rng.random_range(0.01..0.05), 1000.0));
    }
    let s = settings(0.005);
    let (gpu, c) = gpu_detect(&state, &shapes, &s);
    let (matched, amb) = compare(&gpu, &state, &shapes, &s);
    let per_kind: Vec<usize> = (0..6)
        .map(|w| gpu.iter().filter(|c| c.ids[0] == w).count())
        .collect();
    eprintln!("boundary scene: {matched} matched, {amb} ambiguous, per boundary {per_kind:?}");
    assert!(per_kind.iter().all(|&k| k > 5), "{per_kind:?}");
    check_csr(&c, &gpu, state.len());
}

/// A sphere and a box grain resting on the last of `n` solid boxes in a row (`mesh`: with a
/// one-triangle mesh far away, which brings the mesh narrow phase into the walls stage): their
/// contacts with that box, as (sphere's, box grain's).
fn contacts_on_the_last_of(n: usize, mesh: bool) -> (usize, usize) {
    let h = 0.004f32;
    let mut shapes = vec![BoundaryShape::SolidBox {
        half_extents: [h; 3],
    }];
    let mut inits = Vec::new();
    for k in 0..n {
        inits.push(boundary(
            SHAPE_SOLID_BOX,
            0,
            [k as f32 * 0.01, 0.0, 0.0],
            ID,
        ));
    }
    if mesh {
        shapes.push(BoundaryShape::Mesh {
            vertices: vec![[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]],
            triangles: vec![[0, 1, 2]],
        });
        inits.push(boundary(SHAPE_MESH, 1, [0.0, 0.0, -5.0], ID));
    }
    let last = (n - 1) as f32 * 0.01;
    let r = 0.002;
    inits.push(BodyInit::sphere(
        [last - 0.002, 0.0, h + r - 1e-4],
        r,
        2500.0,
    ));
    shapes.push(BoundaryShape::GrainBox {
        half_extents: [0.0015; 3],
    });
    inits.push(BodyInit {
        shape: SHAPE_BOX,
        shape_index: shapes.len() as u32 - 1,
        radius: 3f32.sqrt() * 0.0015,
        ..BodyInit::sphere([last + 0.002, 0.0, h + 0.0015 - 1e-4], 1.0, 2500.0)
    });
    let state = BodyState::from_inits(&inits);
    let (list, _) = gpu_detect(&state, &shapes, &settings(1e-3));
    let (sphere, cube) = (state.len() as u32 - 2, state.len() as u32 - 1);
    let wall = (n - 1) as u32;
    let on = |g: u32| {
        list.iter()
            .filter(|c| c.ids[0] == wall && c.ids[1] == g)
            .count()
    };
    let other_walls = list.iter().filter(|c| c.ids[0] < wall).count();
    assert_eq!(
        other_walls, 0,
        "contacts with boxes the grains do not touch"
    );
    (on(sphere), on(cube))
}

/// Every grain is tested against every boundary, and on lavapipe every boundary costs the
/// grain's invocation loop iterations (~25 each here, ~50 with a mesh in the scene) against
/// llvmpipe's silent limit of 65 535. With all boundaries in one dispatch, the grains on the
/// last of 3000 boxes lost all their contacts (the last of 1500 with a mesh); the count pass
/// now tests blocks of `WALL_BLOCK_CPU` boundaries per dispatch on a CPU adapter. The
/// contacts must be those of the same grains on a single box: one for the sphere, a
/// four-point manifold for the box grain.
#[test]
fn grains_on_the_last_of_thousands_of_boundaries_have_their_contacts() {
    let one = contacts_on_the_last_of(1, true);
    assert_eq!(one, (1, 4));
    assert_eq!(contacts_on_the_last_of(3000, true), one);
    assert_eq!(contacts_on_the_last_of(3000, false), one);
}
