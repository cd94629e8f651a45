//! Broad phase with mixed sizes (`collide::GridPlan`): a few grains 10× the others are kept
//! out of the grid and paired apart. The contact list must be the f64 twin's (which pairs
//! all grains without a grid plan) and byte-identical to the one-grid baseline.

use super::common::compare_contact_sets;
use bristlecone::bodies::*;
use bristlecone::collide::{BoundaryShape, Collide, CollideSettings, GridPlan, LARGE_RATIO};
use bristlecone::gpu::shared_context;
use glam::DQuat;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

fn settings() -> CollideSettings {
    CollideSettings {
        envelope: 0.001,
        friction: vec![0.5],
    }
}

fn rand_q(rng: &mut ChaCha8Rng) -> [f32; 4] {
    let c = [0; 4].map(|_| rng.random_range(-1.0..1.0));
    DQuat::from_xyzw(c[0], c[1], c[2], c[3])
        .normalize()
        .as_quat()
        .to_array()
}

/// `small` spheres of radius 4–6 mm at a solid fraction of 0.3 around `large` bodies of
/// bounding radius 40–80 mm (spheres, and boxes every third), which sit at spread-out
/// indices, the first grain among them.
fn mixed(seed: u64, small: usize, large: usize) -> (BodyState, Vec<BoundaryShape>) {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let side =
        (small as f64 * 4.0 / 3.0 * std::f64::consts::PI * 0.005f64.powi(3) / 0.3).cbrt() as f32;
    let mut shapes = vec![BoundaryShape::Plane];
    let mut inits = vec![BodyInit::fixed(SHAPE_PLANE, 0, [0.0, 0.0, -side], 0.0)];
    let n = small + large;
    let mut nbig = 0;
    for i in 0..n {
        let p = [0; 3].map(|_| rng.random_range(-0.5 * side..0.5 * side));
        if (i * large) % n >= large {
            inits.push(BodyInit::sphere(p, rng.random_range(0.004..0.006), 2500.0));
            continue;
        }
        nbig += 1;
        if nbig % 3 == 2 {
            let h = [0; 3].map(|_| rng.random_range(0.025..0.045f32));
            shapes.push(BoundaryShape::GrainBox { half_extents: h });
            inits.push(BodyInit {
                orientation: rand_q(&mut rng),
                shape: SHAPE_BOX,
                shape_index: shapes.len() as u32 - 1,
                radius: (h[0] * h[0] + h[1] * h[1] + h[2] * h[2]).sqrt(),
                ..BodyInit::sphere(p, 1.0, 1000.0)
            });
        } else {
            inits.push(BodyInit::sphere(p, rng.random_range(0.04..0.06), 2500.0));
        }
    }
    (BodyState::from_inits(&inits), shapes)
}

#[test]
fn large_grains_are_planned_apart_and_match_the_twin() {
    let (state, shapes) = mixed(3, 2400, 12);
    let s = settings();
    let plan = GridPlan::new(&state, s.envelope, LARGE_RATIO);
    assert_eq!(plan.large, 12);
    assert!(
        plan.cell < 0.0131,
        "cell {} follows the small grains",
        plan.cell
    );
    let c = compare_contact_sets(&state, &shapes, &s, |_| 1e-4);
    let large_ids: Vec<u32> = (1..state.len() as u32)
        .filter(|&b| state.pos[b as usize][3] > plan.large_radius)
        .collect();
    assert_eq!(large_ids.len(), 12);
    assert!(large_ids[0] == 1 && *large_ids.last().unwrap() > 2200);
    let touching_large = c
        .pairs
        .iter()
        .filter(|p| large_ids.contains(&p.0) || large_ids.contains(&p.1))
        .count();
    let large_large = c
        .pairs
        .iter()
        .filter(|p| large_ids.contains(&p.0) && large_ids.contains(&p.1))
        .count();
    assert!(
        touching_large > 300 && large_large > 3,
        "{touching_large} pairs with a large grain, {large_large} between two"
    );
    assert!(c.ambiguous.len() <= 5, "{:?}", c.ambiguous);
    eprintln!(
        "1:10 sizes: {} pairs ({touching_large} with a large grain, {large_large} large–large), \
         {} ambiguous",
        c.pairs.len(),
        c.ambiguous.len()
    );
}

#[test]
fn the_split_changes_no_byte_of_the_contact_list() {
    let (state, shapes) = mixed(5, 3000, 20);
    let ctx = shared_context();
    let bodies = GpuBodies::upload(&ctx, &state).unwrap();
    let mut c = Collide::new(&ctx, &bodies, &state, &shapes, &settings()).unwrap();
    let run = |c: &mut Collide| {
        let counts = c.detect(&ctx).unwrap();
        assert_eq!(counts.overflow, 0);
        (c.read_contacts(&ctx).unwrap(), c.read_csr(&ctx).unwrap())
    };
    assert_eq!(c.grid_plan().large, 20);
    let split = run(&mut c);
    let again = run(&mut c);
    c.set_large_ratio(&ctx, &state, f32::INFINITY).unwrap();
    assert_eq!(c.grid_plan().large, 0);
    assert!(c.cell_size() > 0.1, "one grid: cell {}", c.cell_size());
    let one = run(&mut c);
    assert!(split.0.len() > 3000, "{} contacts", split.0.len());
    let bytes =
        |v: &[bristlecone::collide::ContactRecord]| bytemuck::cast_slice::<_, u8>(v).to_vec();
    assert_eq!(bytes(&split.0), bytes(&again.0));
    assert_eq!(bytes(&split.0), bytes(&one.0));
    assert_eq!(split.1, one.1);
}

#[test]
fn too_many_or_no_large_grains_keep_one_grid() {
    let s = settings();
    let (state, _) = mixed(7, 500, 0);
    let plan = GridPlan::new(&state, s.envelope, LARGE_RATIO);
    assert_eq!((plan.large, plan.large_radius), (0, f32::MAX));
    let (state, _) = mixed(7, 500, 100);
    let plan = GridPlan::new(&state, s.envelope, LARGE_RATIO);
    assert_eq!(plan.large, 0, "100 large grains > LARGE_MAX: one grid");
    assert!(plan.cell > 0.08);
}

/// A 700-contact row (a boulder in a shell of small grains, one grid): its visit order
/// interleaves the cells, ~10⁵ inversions. lavapipe ends an invocation's loops once they have
/// run 65 535 iterations in all, which cut an insertion sort short (the row came out partly
/// unsorted, by how much depending on thread timing); the heap sort and the per-pair scans of
/// collide_pairs stay far below that.
#[test]
fn a_long_row_comes_out_sorted_every_time() {
    let mut rng = ChaCha8Rng::seed_from_u64(11);
    let mut inits = vec![BodyInit::fixed(SHAPE_PLANE, 0, [0.0, 0.0, -1.0], 0.0)];
    inits.push(BodyInit::sphere([0.0; 3], 0.05, 2500.0));
    for _ in 0..700 {
        let d = glam::DVec3::from_array([0; 3].map(|_| rng.random_range(-1.0..1.0f64)));
        let p = (d.normalize() * 0.054).as_vec3().to_array();
        inits.push(BodyInit::sphere(p, 0.005, 2500.0));
    }
    let state = BodyState::from_inits(&inits);
    let ctx = shared_context();
    let bodies = GpuBodies::upload(&ctx, &state).unwrap();
    let shapes = [BoundaryShape::Plane];
    let mut c = Collide::new(&ctx, &bodies, &state, &shapes, &settings()).unwrap();
    c.set_large_ratio(&ctx, &state, f32::INFINITY).unwrap();
    let mut first = None;
    for run in 0..4 {
        c.detect(&ctx).unwrap();
        let list = c.read_contacts(&ctx).unwrap();
        let keys: Vec<_> = list
            .iter()
            .map(|r| (r.ids[0], r.ids[1], r.ids[2]))
            .collect();
        let row = keys.iter().filter(|k| k.0 == 1).count();
        assert_eq!(row, 700, "run {run}: the boulder touches every grain");
        let out = keys.windows(2).filter(|w| w[0] >= w[1]).count();
        assert_eq!(out, 0, "run {run}: {out} records out of order");
        let csr = c.read_csr(&ctx).unwrap();
        let unsorted = csr.0.windows(2).any(|o| {
            let r = &csr.1[o[0] as usize..o[1] as usize];
            r.windows(2).any(|w| w[0] >= w[1])
        });
        assert!(!unsorted, "run {run}: a CSR row out of order");
        let bytes = bytemuck::cast_slice::<_, u8>(&list).to_vec();
        assert_eq!(
            first.get_or_insert(bytes.clone()),
            &bytes,
            "run {run} differs"
        );
    }
}

/// A boulder among 70 560 small grains, touched only by the 150 grains of highest index
/// among them (`with_box`: a box grain far from all of them takes the detection off the
/// sphere-only path). A large grain's row is scanned, in one invocation, over every grain of
/// higher index; lavapipe ends an invocation's loops after 65 535 iterations in all, so with
/// the boulder first that scan stopped before these grains and the row came out with 1 of
/// its 150 contacts, silently. The boulder first: a CPU adapter must refuse the scene with an
/// error that names the body, and a GPU must find every contact. The boulder last (after the
/// small grains, whose rows then hold it): every adapter must find every contact. The
/// lattice's grains are 2 mm apart, the shell's ~15 mm, so these are the only contacts.
fn boulder_past_the_loop_limit(with_box: bool, boulder_last: bool) {
    let mut inits = vec![BodyInit::fixed(SHAPE_PLANE, 0, [0.0, 0.0, -1.0], 0.0)];
    let (r_big, r) = (0.05f32, 0.005f32);
    let centre = [-0.3f32, 0.25, 0.25];
    let boulder = BodyInit::sphere(centre, r_big, 2500.0);
    if !boulder_last {
        inits.push(boulder);
    }
    for k in 0..42 * 42 * 40 {
        let p = [k % 42, (k / 42) % 42, k / (42 * 42)].map(|c| c as f32 * 0.012);
        inits.push(BodyInit::sphere(p, r, 2500.0));
    }
    let shell = 150;
    let first_touching = inits.len() as u32;
    for k in 0..shell {
        // Fibonacci directions: evenly spread, ~15 mm apart on the shell.
        let z = 1.0 - 2.0 * (k as f32 + 0.5) / shell as f32;
        let a = k as f32 * std::f32::consts::PI * (3.0 - 5f32.sqrt());
        let u = [
            (1.0 - z * z).sqrt() * a.cos(),
            (1.0 - z * z).sqrt() * a.sin(),
            z,
        ];
        let d = r_big + r - 2e-4;
        inits.push(BodyInit::sphere(
            [0, 1, 2].map(|c| centre[c] + d * u[c]),
            r,
            2500.0,
        ));
    }
    let mut shapes = vec![BoundaryShape::Plane];
    if with_box {
        // Far from everything: it only takes the detection off the sphere-only path.
        let h = 0.004;
        shapes.push(BoundaryShape::GrainBox {
            half_extents: [h; 3],
        });
        inits.push(BodyInit {
            shape: SHAPE_BOX,
            shape_index: 1,
            radius: 3f32.sqrt() * h,
            ..BodyInit::sphere([1.0; 3], 1.0, 1000.0)
        });
    }
    if boulder_last {
        inits.push(boulder);
    }
    let b = inits.iter().position(|i| i.radius == r_big).unwrap() as u32;
    let state = BodyState::from_inits(&inits);
    assert!(state.len() > 70_000);
    let ctx = shared_context();
    let bodies = GpuBodies::upload(&ctx, &state).unwrap();
    let made = Collide::new(&ctx, &bodies, &state, &shapes, &settings());
    if !boulder_last && ctx.loop_limited() {
        let err = made
            .err()
            .expect("a CPU adapter must refuse the boulder's long scan");
        let msg = err.to_string();
        assert!(msg.contains(&format!("body {b} is a large grain")), "{msg}");
        assert!(
            msg.contains("Place the large grains after the small ones"),
            "{msg}"
        );
        return;
    }
    let mut c = made.unwrap();
    assert_eq!(c.grid_plan().large, 1);
    assert_eq!(c.detect(&ctx).unwrap().overflow, 0);
    let list = c.read_contacts(&ctx).unwrap();
    let expected: Vec<u32> = (first_touching..first_touching + shell).collect();
    let mut partners: Vec<u32> = list
        .iter()
        .filter(|r| r.ids[0] == b || r.ids[1] == b)
        .map(|r| r.ids[0] + r.ids[1] - b)
        .collect();
    partners.sort_unstable();
    assert_eq!(
        partners.len(),
        expected.len(),
        "the boulder has {} of its {} contacts",
        partners.len(),
        expected.len()
    );
    assert_eq!(partners, expected);
    assert_eq!(list.len(), expected.len(), "contacts besides the boulder's");
}

#[test]
fn a_large_grain_with_a_scan_past_the_loop_limit_is_refused_on_a_cpu() {
    boulder_past_the_loop_limit(false, false);
}

#[test]
fn a_large_grain_with_a_scan_past_the_loop_limit_is_refused_with_shaped_grains() {
    boulder_past_the_loop_limit(true, false);
}

#[test]
fn a_large_grain_after_the_small_ones_has_every_contact() {
    boulder_past_the_loop_limit(false, true);
}

#[test]
fn a_large_grain_after_the_small_ones_has_every_contact_with_shaped_grains() {
    boulder_past_the_loop_limit(true, true);
}
