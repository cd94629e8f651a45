//! Periodic cells (`collide::periodic`): GPU detection by the minimum image against the f64
//! twin (`reference::periodic`), a pair touching across the seam against the same pair in the
//! middle of the cell, and a periodic box that keeps every grain in the cell.
//!
//! Tolerances as in `collide.rs`: f32 positions give gaps within a few ulps of the
//! coordinates (eps = 1e-6 + 1e-6 (|x_A| + |x_B| + period)); contacts within eps of the
//! envelope may be kept or dropped.

use bristlecone::bodies::*;
use bristlecone::collide::{
    tangent_basis, BoundaryShape, Collide, CollideSettings, ContactRecord, LeesEdwards,
    PeriodicCell,
};
use bristlecone::gpu::shared_context;
use bristlecone::reference::integrate::to_f64;
use bristlecone::reference::periodic::{detect_periodic, detect_periodic_at, image_flow_speed};
use bristlecone::reference::solve as cpu;
use bristlecone::solve::SolverSettings;
use bristlecone::step::{ContactSetup, Simulation, StepSettings};
use glam::DVec3;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::collections::HashMap;

fn d3(v: [f32; 4]) -> DVec3 {
    DVec3::new(v[0] as f64, v[1] as f64, v[2] as f64)
}

/// Random spheres (radii 4–10 mm, two large ones of 40 mm: the broad phase's large-grain
/// path) in a cell periodic along x and y, a third of them placed within 12 mm of a seam or
/// a corner of seams, some touching a partner across it. A floor plane at z = 0.
fn random_periodic_set(seed: u64, n: usize) -> (BodyState, Vec<BoundaryShape>, PeriodicCell) {
    let cell = PeriodicCell {
        origin: [-0.1, 0.05, 0.0],
        length: [0.3, 0.25, 0.0],
        shear: None,
    };
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut state = BodyState::default();
    state.push(&BodyInit::fixed(SHAPE_PLANE, 0, [0.0, 0.0, 0.0], 0.0));
    for i in 0..n {
        let large = i == n / 3 || i == n - 1;
        let r = if large {
            0.04
        } else {
            rng.random_range(0.004f32..0.01)
        };
        let mut p = [0, 1, 2].map(|k| {
            let (o, l) = (cell.origin[k] as f32, cell.length[k].max(0.2) as f32);
            rng.random_range(o..o + l)
        });
        if i % 3 == 1 {
            // Near a seam (x, y or both): just inside the lower or the upper face.
            let axis = rng.random_range(0..3usize);
            for (k, pk) in p.iter_mut().enumerate().take(2) {
                if axis == k || axis == 2 {
                    let (o, l) = (cell.origin[k] as f32, cell.length[k] as f32);
                    let off = rng.random_range(0.0f32..0.012);
                    *pk = if rng.random() { o + off } else { o + l - off };
                }
            }
        }
        if i % 5 == 2 && i > 0 {
            // Touching the previous grain, perhaps through the seam: then wrapped.
            let q = state.pos[state.len() - 1];
            let dir = DVec3::new(rng.random(), rng.random(), rng.random()).normalize();
            let dist = (q[3] + r) as f64 * rng.random_range(0.97..1.01);
            let x = d3(q) + dir * dist;
            let w = cell.wrap(x);
            p = [w.x as f32, w.y as f32, w.z as f32];
        }
        let mut b = BodyInit::sphere(p, r, 2500.0);
        b.material = (i % 2) as u32;
        state.push(&b);
    }
    (state, vec![BoundaryShape::Plane], cell)
}

#[test]
fn periodic_contacts_match_the_twin() {
    let settings = CollideSettings {
        envelope: 0.002,
        friction: vec![0.5, 0.3],
    };
    let ctx = shared_context();
    let (mut seams, mut matched) = (0, 0);
    for seed in [11, 12, 13] {
        let (state, shapes, cell) = random_periodic_set(seed, 600);
        let bodies = GpuBodies::upload(&ctx, &state).unwrap();
        let mut c = Collide::new(&ctx, &bodies, &state, &shapes, &settings).unwrap();
        c.set_periodic(&ctx, &state, &cell, settings.envelope)
            .unwrap();
        assert_eq!(c.detect(&ctx).unwrap().overflow, 0);
        let gpu = c.read_contacts(&ctx).unwrap();
        let twin = detect_periodic(&state, &shapes, &settings, &cell);
        let span = cell.length.iter().fold(0.0f64, |a, &b| a.max(b));
        let eps = |a: u32, b: u32| {
            1e-6 + 1e-6
                * (d3(state.pos[a as usize]).length() + d3(state.pos[b as usize]).length() + span)
        };
        let env = settings.envelope as f64;
        let twin_by_key: HashMap<_, _> = twin.iter().map(|t| (t.key(), *t)).collect();
        let gpu_by_key: HashMap<_, _> = gpu
            .iter()
            .map(|g| ((g.ids[0], g.ids[1], g.ids[2]), *g))
            .collect();
        for w in gpu.windows(2) {
            assert!(key(&w[0]) < key(&w[1]), "GPU list not sorted: {w:?}");
        }
        for t in &twin {
            let near_envelope = (t.gap - env).abs() <= eps(t.a, t.b);
            let Some(g) = gpu_by_key.get(&t.key()) else {
                assert!(near_envelope, "seed {seed}: GPU misses {t:?}");
                continue;
            };
            let e = eps(t.a, t.b);
            assert!(
                (g.n_gap[3] as f64 - t.gap).abs() <= e,
                "{:?}: gap {} vs {}",
                t.key(),
                g.n_gap[3],
                t.gap
            );
            let en = (8.0 * e / (t.ra - t.rb).length().max(1e-12)).min(1.0);
            assert!(
                (d3(g.n_gap) - t.normal).length() <= en,
                "{:?}: normal {:?} vs {}",
                t.key(),
                g.n_gap,
                t.normal
            );
            let el = 8.0 * e + en * t.ra.length().max(t.rb.length());
            assert!(
                (d3(g.ra) - t.ra).length() <= el,
                "{:?}: ra {:?} vs {}",
                t.key(),
                g.ra,
                t.ra
            );
            assert!(
                (d3(g.rb) - t.rb).length() <= el,
                "{:?}: rb {:?} vs {}",
                t.key(),
                g.rb,
                t.rb
            );
            assert_eq!(g.ra[3] as f64, t.mu);
            matched += 1;
            let direct = d3(state.pos[t.b as usize]) - d3(state.pos[t.a as usize]);
            if t.a > 0 && (direct - (t.ra - t.rb)).length() > 1e-3 {
                seams += 1;
            }
        }
        for g in &gpu {
            let k = key(g);
            let t = twin_by_key.get(&k);
            assert!(
                t.is_some() || (g.n_gap[3] as f64 - env).abs() <= eps(k.0, k.1),
                "seed {seed}: GPU has {g:?}, the twin has not"
            );
        }
    }
    eprintln!("periodic twin: {matched} contacts matched, {seams} of them across a seam");
    assert!(
        seams > 50,
        "only {seams} contacts across a seam: the test misses its point"
    );
}

fn key(c: &ContactRecord) -> (u32, u32, u32) {
    (c.ids[0], c.ids[1], c.ids[2])
}

/// A step of spheres without gravity (period 0.2 m along x, y and z where `axes` says).
fn simulation(bodies: &[BodyInit], cell: Option<PeriodicCell>) -> Simulation {
    let state = BodyState::from_inits(bodies);
    let settings = StepSettings {
        dt: 1e-3,
        gravity: [0.0; 3],
        contact: Some(ContactSetup {
            models: Vec::new(),
            patch_cells: 0,
            shapes: Vec::new(),
            collide: CollideSettings {
                envelope: 0.002,
                friction: vec![0.4],
            },
            solver: SolverSettings::default(),
        }),
    };
    let mut sim = Simulation::new(shared_context(), &state, settings).unwrap();
    if let Some(c) = cell {
        sim.set_periodic(&c).unwrap();
    }
    sim
}

/// Asserts that the pair in the middle (`m`) and at the seam (`s`) have the same contacts,
/// keys and forces (within 1e-3 of each force) at `step`; the number of contacts.
fn same_forces(step: u32, m: &Simulation, s: &Simulation) -> usize {
    let (fm, fs) = (forces(m), forces(s));
    assert_eq!(fm.len(), fs.len(), "step {step}: contact counts");
    for ((km, a), (ks, b)) in fm.iter().zip(&fs) {
        assert_eq!(km, ks, "step {step}: contact keys");
        let tol = 1e-3 * a.length().max(1e-3);
        assert!(
            (*a - *b).length() <= tol,
            "step {step}: force {a} in the middle, {b} at the seam"
        );
    }
    fm.len()
}

/// Contact forces (normal, tangential magnitudes) of the last step, by key.
fn forces(sim: &Simulation) -> Vec<((u32, u32), DVec3)> {
    let (contacts, gamma) = sim.read_contacts().unwrap();
    contacts
        .iter()
        .zip(&gamma)
        .map(|(c, g)| {
            let n = d3(c.n_gap);
            let (u, w) = tangent_basis(n);
            let f = (g[0] as f64 * n + g[1] as f64 * u + g[2] as f64 * w) / sim.settings.dt;
            ((c.ids[0], c.ids[1]), f)
        })
        .collect()
}

/// Two spheres pressed together and sheared, drifting along +x: once in the middle of a cell
/// periodic along x, once straddling the seam (they cross it during the run). Each step's
/// contact force must agree, and so must the motion modulo the period.
#[test]
fn a_pair_across_the_seam_feels_what_it_feels_in_the_middle() {
    let cell = PeriodicCell {
        origin: [0.0; 3],
        length: [0.2, 0.0, 0.0],
        shear: None,
    };
    let pair = |xa: f32, xb: f32| {
        let mut a = BodyInit::sphere([xa, 0.0, 0.0], 0.01, 2500.0);
        let mut b = BodyInit::sphere([xb, 0.003, 0.0], 0.01, 2500.0);
        a.velocity = [0.8, 0.05, 0.0];
        b.velocity = [0.2, -0.05, 0.01];
        [a, b]
    };
    // Centres 19.5 mm apart along x (0.5 mm overlap after the 3 mm offset in y is counted).
    let middle = simulation(&pair(0.09, 0.1095), Some(cell));
    let seam = simulation(&pair(0.19, 0.0095), Some(cell));
    let (mut m, mut s) = (middle, seam);
    let mut touching = 0;
    for step in 0..40 {
        m.advance(1, 1).unwrap();
        s.advance(1, 1).unwrap();
        touching += same_forces(step, &m, &s);
        let (pm, ps) = (m.read_state().unwrap(), s.read_state().unwrap());
        for i in 0..2 {
            let d = cell.image_delta(d3(pm.pos[i]) - DVec3::new(0.1, 0.0, 0.0), d3(ps.pos[i]));
            assert!(
                d.length() < 1e-5,
                "step {step} body {i}: positions differ by {d}"
            );
            assert!(
                (0.0..0.2).contains(&ps.pos[i][0]),
                "body {i} left the cell: {:?}",
                ps.pos[i]
            );
            assert!(
                (d3(pm.vel[i]) - d3(ps.vel[i])).length() < 1e-5,
                "step {step} body {i}: velocities"
            );
        }
    }
    assert!(touching >= 10, "the pair touched in only {touching} steps");
}

/// 80 spheres at random in a cell periodic along x, y and z, with random velocities and no
/// walls: after 300 steps (many crossings) every grain is still in the cell and the momentum
/// is what it was (contacts only exchange it).
#[test]
fn a_periodic_box_keeps_every_grain() {
    let cell = PeriodicCell {
        origin: [-0.05, -0.05, -0.05],
        length: [0.1, 0.1, 0.1],
        shear: None,
    };
    let mut rng = ChaCha8Rng::seed_from_u64(7);
    let mut inits = Vec::new();
    while inits.len() < 80 {
        let p = [0; 3].map(|_| rng.random_range(-0.05f32..0.05));
        let far = inits.iter().all(|b: &BodyInit| {
            (0..3)
                .map(|k| {
                    let d = (b.position[k] - p[k]).abs();
                    d.min(0.1 - d).powi(2)
                })
                .sum::<f32>()
                > 0.0121f32.powi(2)
        });
        if far {
            let mut b = BodyInit::sphere(p, 0.006, 2500.0);
            b.velocity = [0; 3].map(|_| rng.random_range(-1.0f32..1.0));
            inits.push(b);
        }
    }
    let mut sim = simulation(&inits, Some(cell));
    let momentum = |s: &BodyState| s.vel.iter().map(|v| d3(*v)).sum::<DVec3>();
    let p0 = momentum(&BodyState::from_inits(&inits));
    let mut crossings = 0;
    let mut last = BodyState::from_inits(&inits);
    let mut contacts = 0;
    for _ in 0..30 {
        let rec = sim.advance(10, 1).unwrap();
        contacts += rec.iter().map(|r| r.contacts as usize).sum::<usize>();
        let st = sim.read_state().unwrap();
        assert_eq!(st.len(), 80);
        for (i, p) in st.pos.iter().enumerate() {
            assert!(
                (0..3).all(|k| (-0.05..0.05).contains(&p[k])),
                "grain {i} left the cell: {p:?}"
            );
            crossings += (0..3)
                .filter(|&k| (p[k] - last.pos[i][k]).abs() > 0.05)
                .count();
        }
        let p = momentum(&st);
        assert!(
            (p - p0).length() < 1e-3 * (1.0 + p0.length()),
            "momentum {p} vs {p0}"
        );
        last = st;
    }
    eprintln!("periodic box: {crossings} seam crossings, {contacts} contacts over 300 steps");
    assert!(crossings > 40, "only {crossings} crossings");
    assert!(contacts > 0, "no contact in 300 steps");
}

// ---------------------------------------------------------------- the `[periodic]` table

/// A scene of two spheres (radius 10 mm) over a floor, with `periodic` appended from line 18.
fn scene_with(periodic: &str) -> Result<bristlecone::scene::Scene, bristlecone::scene::SceneError> {
    let text = format!(
        "[simulation]\ndt = 1e-3\nsteps = 10\n\n[[material]]\nname = \"glass\"\ndensity = 2500.0\n\
         friction = 0.5\n\n[[body]]\nradius = 0.01\nposition = [0.0, 0.0, 0.1]\n\n[[body]]\n\
         radius = 0.01\nposition = [0.05, 0.0, 0.1]\n\n{periodic}"
    );
    bristlecone::scene::parse_str(&text, std::path::Path::new("t.toml"))
}

#[track_caller]
fn refused(periodic: &str, field: &str, line: usize, msg: &str) {
    let e = scene_with(periodic).expect_err(periodic);
    assert_eq!(e.field, field, "field of: {e}");
    assert_eq!(e.line, Some(line), "line of: {e}");
    assert!(e.message.contains(msg), "message of `{e}` lacks `{msg}`");
}

#[test]
fn the_periodic_table_is_read_and_checked_at_its_lines() {
    let s = scene_with("[periodic]\nx = [-0.1, 0.2]\nz = [0.0, 0.5]\n").unwrap();
    let c = s.periodic.expect("the cell");
    assert_eq!(c.origin, [-0.1, 0.0, 0.0]);
    assert!((c.length[0] - 0.3).abs() < 1e-15 && c.length[1] == 0.0 && c.length[2] == 0.5);
    refused("[periodic]\nx = [0.2, 0.1]\n", "periodic.x", 19, "is empty");
    refused("[periodic]\n", "periodic", 18, "no periodic axis");
    // 2 × (20 mm + the default envelope, 0.5 mm) = 41 mm.
    refused(
        "[periodic]\ny = [-0.02, 0.02]\n",
        "periodic.y",
        19,
        "must exceed",
    );
    refused(
        "[periodic]\nx = [-0.1, 0.04]\n",
        "periodic.x",
        19,
        "placed on line 16) lies at x = 0.05",
    );
    refused(
        "[periodic]\nx = [-0.1, 0.1]\n\n[[boundary]]\nkind = \"plane\"\npoint = [0.0, 0.0, 0.0]\nnormal = [0.1, 0.0, 1.0]\n",
        "boundary[0].normal",
        24,
        "not perpendicular to the periodic axis x",
    );
    refused(
        "[periodic]\nx = [-0.1, 0.1]\n\n[[boundary]]\nkind = \"box_container\"\nhalf_extents = [0.2, 0.2, 0.2]\n",
        "boundary[0].kind",
        22,
        "is a container",
    );
    refused(
        "[periodic]\nx = [-0.1, 0.1]\n\n[solver]\nkind = \"lemke\"\n",
        "periodic",
        19,
        "solver kind",
    );
    refused(
        "[periodic]\nw = [0.0, 1.0]\n",
        "periodic.w",
        19,
        "unknown field",
    );
}

// ---------------------------------------------------------------- stress and solid fraction

use bristlecone::measure::{region_stress, solid_fraction, Region};

/// Two grains touching across the seam of a cell periodic along x (A at x = 0.195, B at
/// 0.005: B's image at 0.205), A resting on a floor, both moving, and a third grain outside the
/// region: the stress is the dyads' sum, worked out by hand.
#[test]
fn the_stress_of_a_constructed_state_is_the_sum_of_its_dyads() {
    let (r, m) = (0.005f32, 2.0f32);
    let grain = |x: f32, v: f32| {
        let mut b = BodyInit::sphere([x, 0.0, 0.0], r, 2500.0);
        b.inv_mass = 1.0 / m;
        b.velocity = [v, 0.5 * v, 0.0];
        b
    };
    let state = BodyState::from_inits(&[
        BodyInit::fixed(SHAPE_PLANE, 0, [0.0, 0.0, -0.005], 0.0),
        grain(0.195, 1.0),
        grain(0.005, -1.0),
        grain(0.5, 3.0),
    ]);
    let dt = 1e-3;
    let (f, t, w) = (4.0f64, 1.5f64, 7.0f64);
    let contact = |a: u32, b: u32, n: [f32; 3], ra: [f32; 3], rb: [f32; 3]| ContactRecord {
        n_gap: [n[0], n[1], n[2], 0.0],
        ra: [ra[0], ra[1], ra[2], 0.5],
        rb: [rb[0], rb[1], rb[2], 0.0],
        ids: [a, b, 0, 0],
    };
    let records = [
        // The floor under A (the plane's own arm does not count: it is not a grain).
        contact(0, 1, [0.0, 0.0, 1.0], [0.195, 0.0, 0.0], [0.0, 0.0, -r]),
        // A and B's image: normal +x, B's arm from its own centre.
        contact(1, 2, [1.0, 0.0, 0.0], [r, 0.0, 0.0], [-r, 0.0, 0.0]),
    ];
    let impulses = [
        [(w * dt) as f32, 0.0, 0.0, 0.0],
        [(f * dt) as f32, (t * dt) as f32, 0.0, 0.0],
    ];
    let region = Region {
        min: [0.0, -0.1, -0.1],
        max: [0.2, 0.1, 0.1],
    };
    let s = region_stress(&state, 1, &records, &impulses, dt, &region, None);
    let v = region.volume();
    // The pair: ℓ = (2r, 0, 0), force on B = f n + t u (u: the tangent basis' first vector).
    let (u, _) = tangent_basis(DVec3::X);
    let fb = f * DVec3::X + t * u;
    let l = 2.0 * r as f64;
    let mut want = [[0.0; 3]; 3];
    for i in 0..3 {
        want[0][i] += 0.5 * l * fb[i] / v;
        want[i][0] += 0.5 * l * fb[i] / v;
    }
    // The floor: r × w along z on A's side.
    want[2][2] += r as f64 * w / v;
    for (i, row) in want.iter().enumerate() {
        for (j, &x) in row.iter().enumerate() {
            let got = s.contact.col(j)[i];
            assert!(
                (got - x).abs() <= 1e-6 * (1.0 + x.abs()),
                "contact σ[{i}][{j}] = {got}, want {x}"
            );
        }
    }
    // Kinetic: mean velocity 0, each grain m v v.
    let vv = DVec3::new(1.0, 0.5, 0.0);
    for i in 0..3 {
        for j in 0..3 {
            let want = 2.0 * m as f64 * vv[i] * vv[j] / v;
            let got = s.kinetic.col(j)[i];
            assert!(
                (got - want).abs() <= 1e-9 * (1.0 + want.abs()),
                "kinetic σ[{i}][{j}] = {got}, want {want}"
            );
        }
    }
    let vol = 4.0 / 3.0 * std::f64::consts::PI * (r as f64).powi(3);
    let phi = solid_fraction(&state, 1, &[vol, vol, vol], &region);
    assert!((phi - 2.0 * vol / v).abs() < 1e-15, "solid fraction {phi}");
}

/// Grains of a Lees–Edwards cell moving on its shear profile (plus a common drift) with one
/// velocity fluctuation each: about the profile the kinetic stress is the fluctuations' dyads
/// alone, worked out by hand; about the mean velocity alone (no shear given) it also holds the
/// mean flow, m γ̇² Σ (z − z̄)² in σ_xx.
#[test]
fn a_sheared_cells_kinetic_stress_is_taken_about_its_profile() {
    let (r, m, rate, drift) = (0.005f32, 2.0f64, 20.0f64, 0.3f64);
    // (z, fluctuation): z̄ = 0.05; the fluctuations sum to zero so the mean stays the drift.
    let grains = [
        (0.02, [0.1, 0.0, 0.2]),
        (0.05, [-0.2, 0.1, 0.0]),
        (0.08, [0.1, -0.1, -0.2]),
    ];
    let mut inits = vec![BodyInit::fixed(SHAPE_PLANE, 0, [0.0, 0.0, -1.0], 0.0)];
    for (z, c) in grains {
        let mut b = BodyInit::sphere([0.05, 0.05, z as f32], r, 2500.0);
        b.inv_mass = (1.0 / m) as f32;
        let u = drift + rate * (z - 0.05);
        b.velocity = [(u + c[0]) as f32, c[1] as f32, c[2] as f32];
        inits.push(b);
    }
    let state = BodyState::from_inits(&inits);
    let region = Region {
        min: [0.0; 3],
        max: [0.1; 3],
    };
    let shear = LeesEdwards {
        rate,
        flow: 0,
        gradient: 2,
    };
    let about_profile = region_stress(&state, 1, &[], &[], 1e-3, &region, Some(&shear));
    let about_mean = region_stress(&state, 1, &[], &[], 1e-3, &region, None);
    let v = region.volume();
    for i in 0..3 {
        for j in 0..3 {
            let dyads: f64 = grains.iter().map(|(_, c)| m * c[i] * c[j]).sum();
            let got = about_profile.kinetic.col(j)[i];
            // f32 velocities: a part in 10⁷ of the largest speed squared.
            let tol = 1e-6 * m * 1.0 / v;
            assert!(
                (got - dyads / v).abs() < tol,
                "σ[{i}][{j}] = {got}, want {}",
                dyads / v
            );
        }
    }
    let flow: f64 = grains
        .iter()
        .map(|(z, _)| m * (rate * (z - 0.05)).powi(2))
        .sum();
    let cross: f64 = grains
        .iter()
        .map(|(z, c)| 2.0 * m * rate * (z - 0.05) * c[0])
        .sum();
    let xx = about_mean.kinetic.x_axis.x;
    let want = about_profile.kinetic.x_axis.x + (flow + cross) / v;
    assert!(
        (xx - want).abs() < 1e-5 * want,
        "σ_xx about the mean {xx}, want {want}"
    );
}

/// Four layers of 5 × 5 spheres (simple cubic, touching their images across the seams of a
/// cell periodic along x and y) settle on a floor: the mean σ_zz over the layers is half the
/// weight per area (the mean of a stress that grows linearly from 0 at the top to W/A at the
/// floor), the shear stresses vanish, and the solid fraction is π/6.
#[test]
fn a_periodic_pack_under_gravity_carries_its_weight() {
    let (r, n, layers) = (0.005f32, 5usize, 4usize);
    let l = 2.0 * r * n as f32;
    let cell = PeriodicCell {
        origin: [0.0; 3],
        length: [l as f64, l as f64, 0.0],
        shear: None,
    };
    let mut inits = vec![BodyInit::fixed(SHAPE_PLANE, 0, [0.0; 3], 0.0)];
    for k in 0..layers {
        for i in 0..n {
            for j in 0..n {
                let p = [
                    (2 * i + 1) as f32 * r,
                    (2 * j + 1) as f32 * r,
                    (2 * k + 1) as f32 * r,
                ];
                inits.push(BodyInit::sphere(p, r, 2500.0));
            }
        }
    }
    let state = BodyState::from_inits(&inits);
    let settings = StepSettings {
        dt: 1e-3,
        gravity: [0.0, 0.0, -9.81],
        contact: Some(ContactSetup {
            models: Vec::new(),
            patch_cells: 0,
            shapes: vec![BoundaryShape::Plane],
            collide: CollideSettings {
                envelope: 2.5e-4,
                friction: vec![0.4],
            },
            solver: SolverSettings {
                tolerance: 1e-7,
                max_iterations: 400,
                ..SolverSettings::default()
            },
        }),
    };
    let mut sim = Simulation::new(shared_context(), &state, settings).unwrap();
    sim.set_periodic(&cell).unwrap();
    sim.advance(50, 50).unwrap();
    let st = sim.read_state().unwrap();
    let (records, impulses) = sim.read_contacts().unwrap();
    let region = Region {
        min: [0.0, 0.0, 0.0],
        max: [l as f64, l as f64, (2 * layers) as f64 * r as f64],
    };
    let s = region_stress(&st, 1, &records, &impulses, 1e-3, &region, None);
    let mass = 1.0 / st.mass_props[1][3] as f64;
    let weight = mass * 9.81 * (n * n * layers) as f64;
    let want = weight / (l as f64 * l as f64) / 2.0;
    let total = s.total();
    let szz = total.z_axis.z;
    println!(
        "periodic pack: σ_zz = {szz:.3} Pa, W/(2A) = {want:.3} Pa, σ_xx = {:.3e}, σ_xz = {:.3e}",
        total.x_axis.x, total.z_axis.x
    );
    assert!(
        (szz / want - 1.0).abs() < 0.01,
        "σ_zz = {szz} Pa, want {want} Pa"
    );
    for (i, j) in [(0, 1), (0, 2), (1, 2)] {
        assert!(
            total.col(j)[i].abs() < 1e-3 * want,
            "σ[{i}][{j}] = {}",
            total.col(j)[i]
        );
    }
    assert!(
        s.kinetic.z_axis.z.abs() < 1e-4 * want,
        "kinetic σ_zz = {}",
        s.kinetic.z_axis.z
    );
    let vol = 4.0 / 3.0 * std::f64::consts::PI * (r as f64).powi(3);
    let phi = solid_fraction(&st, 1, &vec![vol; n * n * layers], &region);
    assert!(
        (phi - std::f64::consts::PI / 6.0).abs() < 1e-3,
        "solid fraction {phi}"
    );
}

// ---------------------------------------------------------------- shaped grains

/// Boxes (random orientations) and spheres in a cell periodic along x, many straddling the
/// seam and touching across it: the GPU's box manifolds by the minimum image against the
/// twin's, pair by pair (features, gaps and lever arms; a pair whose feature list differs in
/// f32 and f64 is set aside, and few may be).
#[test]
fn box_grains_touch_across_the_seam_as_the_twin_says() {
    let cell = PeriodicCell {
        origin: [0.0; 3],
        length: [0.1, 0.0, 0.0],
        shear: None,
    };
    let mut rng = ChaCha8Rng::seed_from_u64(21);
    let mut shapes = Vec::new();
    let mut inits = Vec::new();
    for i in 0..80 {
        let mut p = [
            rng.random_range(0.0f32..0.1),
            rng.random_range(0.0f32..0.04),
            rng.random_range(0.0f32..0.04),
        ];
        if i % 2 == 1 {
            p[0] = if rng.random() {
                rng.random_range(0.0..0.006)
            } else {
                rng.random_range(0.094..0.1)
            };
        }
        if i % 4 == 3 {
            // Near the previous grain's image beyond the seam.
            let q: [f32; 4] = inits
                .last()
                .map(|b: &BodyInit| [b.position[0], b.position[1], b.position[2], 0.0])
                .unwrap();
            let x = cell.wrap(
                d3(q)
                    + DVec3::new(
                        rng.random_range(-0.012..0.012),
                        rng.random_range(-0.006..0.006),
                        rng.random_range(-0.006..0.006),
                    ),
            );
            p = [x.x as f32, x.y as f32, x.z as f32];
        }
        if i % 3 == 0 {
            inits.push(BodyInit::sphere(p, 0.004, 1000.0));
        } else {
            let h = [0.006f32, 0.004, 0.003];
            shapes.push(BoundaryShape::GrainBox { half_extents: h });
            let q = glam::DQuat::from_xyzw(
                rng.random_range(-1.0..1.0),
                rng.random_range(-1.0..1.0),
                rng.random_range(-1.0..1.0),
                rng.random_range(-1.0..1.0),
            );
            inits.push(BodyInit {
                orientation: q.normalize().as_quat().to_array(),
                shape: SHAPE_BOX,
                shape_index: shapes.len() as u32 - 1,
                radius: (h[0] * h[0] + h[1] * h[1] + h[2] * h[2]).sqrt(),
                ..BodyInit::sphere(p, 1.0, 1000.0)
            });
        }
    }
    let state = BodyState::from_inits(&inits);
    let settings = CollideSettings {
        envelope: 0.001,
        friction: vec![0.5],
    };
    let ctx = shared_context();
    let bodies = GpuBodies::upload(&ctx, &state).unwrap();
    let mut c = Collide::new(&ctx, &bodies, &state, &shapes, &settings).unwrap();
    c.set_periodic(&ctx, &state, &cell, settings.envelope)
        .unwrap();
    assert_eq!(c.detect(&ctx).unwrap().overflow, 0);
    let mut gpu: HashMap<(u32, u32), Vec<ContactRecord>> = HashMap::new();
    for g in c.read_contacts(&ctx).unwrap() {
        gpu.entry((g.ids[0], g.ids[1])).or_default().push(g);
    }
    let mut twin: HashMap<(u32, u32), Vec<_>> = HashMap::new();
    for t in detect_periodic(&state, &shapes, &settings, &cell) {
        twin.entry((t.a, t.b)).or_default().push(t);
    }
    let (mut matched, mut ambiguous, mut seams) = (0, 0, 0);
    let mut pairs: Vec<_> = gpu.keys().chain(twin.keys()).copied().collect();
    pairs.sort();
    pairs.dedup();
    for k in &pairs {
        let (gs, ts) = (
            gpu.get(k).cloned().unwrap_or_default(),
            twin.get(k).cloned().unwrap_or_default(),
        );
        if gs.iter().map(|g| g.ids[2]).ne(ts.iter().map(|t| t.feature)) {
            ambiguous += 1;
            continue;
        }
        for (g, t) in gs.iter().zip(&ts) {
            assert!(
                (g.n_gap[3] as f64 - t.gap).abs() <= 2e-5,
                "{k:?}: gap {} vs {}",
                g.n_gap[3],
                t.gap
            );
            assert!(
                (d3(g.n_gap) - t.normal).length() <= 1e-3,
                "{k:?}: normal {:?} vs {}",
                g.n_gap,
                t.normal
            );
            assert!(
                (d3(g.ra) - t.ra).length() <= 3e-5,
                "{k:?}: ra {:?} vs {}",
                g.ra,
                t.ra
            );
            assert!(
                (d3(g.rb) - t.rb).length() <= 3e-5,
                "{k:?}: rb {:?} vs {}",
                g.rb,
                t.rb
            );
            matched += 1;
        }
        let direct = d3(state.pos[k.1 as usize]) - d3(state.pos[k.0 as usize]);
        if ts
            .first()
            .is_some_and(|t| (direct - (t.ra - t.rb)).length() > 1e-3)
        {
            seams += 1;
        }
    }
    eprintln!("periodic boxes: {matched} contacts matched in {} pairs ({seams} across the seam), {ambiguous} pairs set aside", pairs.len());
    assert!(seams >= 8, "only {seams} pairs across the seam");
    assert!(
        ambiguous * 10 <= pairs.len(),
        "{ambiguous} of {} pairs differ",
        pairs.len()
    );
}

// ---------------------------------------------------------------- resume

/// Two spheres on a floor touching across the seam of a cell periodic along x, and a third
/// resting on both, one of them through the seam: a run resumed from a checkpoint ends
/// bit-identical to the run straight through (the resumed contact stage keeps the cell;
/// built without it, the top sphere loses its seam contact and falls between the two).
#[test]
fn a_resumed_periodic_run_is_bit_identical() {
    use bristlecone::run::{run_scene, RunOptions, Silent};
    use std::path::{Path, PathBuf};
    let dir = tempfile::tempdir().unwrap();
    let scene = dir.path().join("seam.toml");
    let sphere =
        |x: f64, z: f64| format!("[[body]]\nradius = 0.01\nposition = [{x}, 0.0, {z}]\n\n");
    std::fs::write(
        &scene,
        format!(
            "[simulation]\ndt = 1e-3\nsteps = 30\n\n[[material]]\nname = \"glass\"\n\
             density = 2500.0\nfriction = 0.5\n\n{}{}{}[[boundary]]\nkind = \"plane\"\n\
             point = [0.0, 0.0, 0.0]\nnormal = [0.0, 0.0, 1.0]\n\n[periodic]\nx = [0.0, 0.1]\n",
            sphere(0.01, 0.01),
            sphere(0.09, 0.01),
            sphere(0.0, 0.02733)
        ),
    )
    .unwrap();
    let run = |out: &Path, steps: u64, resume: Option<PathBuf>| {
        let opts = RunOptions {
            out_dir: Some(out.to_path_buf()),
            steps: Some(steps),
            resume,
            from: None,
            overwrite: false,
        };
        let stop = std::sync::atomic::AtomicBool::new(false);
        run_scene(shared_context(), &scene, &opts, &stop, &mut Silent).unwrap()
    };
    let (full, split) = (dir.path().join("full"), dir.path().join("split"));
    run(&full, 30, None);
    let half = run(&split, 15, None);
    let saved = dir.path().join("half.bin");
    std::fs::copy(&half.checkpoint, &saved).unwrap();
    run(&split, 30, Some(saved));
    let stats = |d: &Path| std::fs::read_to_string(d.join("stats.csv")).unwrap();
    // Three floor contacts and two touching the seam pair (the contact column of step 15).
    let contacts_at_15: u32 = stats(&full)
        .lines()
        .find(|l| l.starts_with("15,"))
        .and_then(|l| l.split(',').nth(9))
        .and_then(|c| c.parse().ok())
        .unwrap();
    assert!(contacts_at_15 == 5, "{contacts_at_15} contacts at step 15");
    let x = std::fs::read(full.join("checkpoint.bin")).unwrap();
    let y = std::fs::read(split.join("checkpoint.bin")).unwrap();
    assert!(
        x == y,
        "the resumed periodic run differs from the straight run"
    );
}

// ---------------------------------------------------------------- Lees–Edwards shear

/// A cell periodic along x and z with period 0.2 m, sheared along x with gradient z at `rate`.
fn sheared_cell(rate: f64) -> PeriodicCell {
    PeriodicCell {
        origin: [0.0; 3],
        length: [0.2, 0.0, 0.2],
        shear: Some(LeesEdwards {
            rate,
            flow: 0,
            gradient: 2,
        }),
    }
}

/// A sphere of radius 10 mm at `p` whose velocity relative to the shear profile
/// γ̇ z e_x is `u`.
fn on_profile(p: [f32; 3], u: [f32; 3], rate: f32) -> BodyInit {
    let mut b = BodyInit::sphere(p, 0.01, 2500.0);
    b.velocity = [u[0] + rate * p[2], u[1], u[2]];
    b
}

/// Two spheres pressed together along the gradient axis of a sheared cell (γ̇ = 5/s, so the
/// images across the seam move at ±1 m/s), drifting up: once in the middle of the cell, once
/// straddling the gradient seam, which the lower one crosses during the run. Simple shear is
/// the same seen from any height, so each step's contact (key and force) must agree, and so
/// must each grain's velocity relative to the profile γ̇ z e_x (kept across the seam).
#[test]
fn a_pair_across_the_sheared_seam_feels_what_it_feels_in_the_middle() {
    let rate = 5.0f32;
    let cell = sheared_cell(rate as f64);
    let pair = |za: f32, zb: f32| {
        [
            on_profile([0.1, 0.0, za], [0.05, 0.0, 0.8], rate),
            on_profile([0.103, 0.0, zb], [-0.05, 0.0, 0.2], rate),
        ]
    };
    // Centres 19.5 mm apart along z (B's image across the seam at 0.2095).
    let mut m = simulation(&pair(0.09, 0.1095), Some(cell));
    let mut s = simulation(&pair(0.19, 0.0095), Some(cell));
    let relative = |st: &BodyState, i: usize| {
        d3(st.vel[i]) - DVec3::new(rate as f64 * st.pos[i][2] as f64, 0.0, 0.0)
    };
    let (mut touching, mut crossed) = (0, false);
    for step in 0..40 {
        m.advance(1, 1).unwrap();
        s.advance(1, 1).unwrap();
        touching += same_forces(step, &m, &s);
        let (pm, ps) = (m.read_state().unwrap(), s.read_state().unwrap());
        crossed |= ps.pos[0][2] < 0.1;
        for i in 0..2 {
            let (um, us) = (relative(&pm, i), relative(&ps, i));
            assert!(
                (um - us).length() < 2e-5,
                "step {step} body {i}: velocity relative to the profile {um} vs {us}"
            );
            assert!(
                (0.0..0.2).contains(&ps.pos[i][2]) && (0.0..0.2).contains(&ps.pos[i][0]),
                "body {i} left the cell: {:?}",
                ps.pos[i]
            );
        }
    }
    assert!(crossed, "the lower grain never crossed the seam");
    assert!(touching >= 10, "the pair touched in only {touching} steps");
}

/// 40 spheres with random velocities in a cell periodic along x, y and z: sheared at rate 0
/// it must step bit for bit as the plain periodic cell (every Lees–Edwards shift is an exact
/// zero then).
#[test]
fn a_cell_sheared_at_rate_zero_is_the_plain_periodic_cell() {
    let plain = PeriodicCell {
        origin: [-0.05; 3],
        length: [0.1; 3],
        shear: None,
    };
    let sheared = PeriodicCell {
        shear: Some(LeesEdwards {
            rate: 0.0,
            flow: 0,
            gradient: 2,
        }),
        ..plain
    };
    let mut rng = ChaCha8Rng::seed_from_u64(5);
    let inits: Vec<BodyInit> = (0..40)
        .map(|_| {
            let mut b = BodyInit::sphere(
                [0; 3].map(|_| rng.random_range(-0.05f32..0.05)),
                0.008,
                2500.0,
            );
            b.velocity = [0; 3].map(|_| rng.random_range(-1.0f32..1.0));
            b
        })
        .collect();
    let (mut a, mut b) = (
        simulation(&inits, Some(plain)),
        simulation(&inits, Some(sheared)),
    );
    let ra = a.advance(30, 30).unwrap();
    b.advance(30, 30).unwrap();
    let (sa, sb) = (a.read_state().unwrap(), b.read_state().unwrap());
    assert!(ra[0].contacts > 0, "no contact: the test misses its point");
    assert_eq!(sa.pos, sb.pos);
    assert_eq!(sa.vel, sb.vel);
    assert_eq!(sa.omega, sb.omega);
}

/// One step of 60 random spheres (pairs touching, half of them across the gradient seam)
/// in a cell periodic along x, y and z, sheared along x with gradient z at step 123 (image
/// offset δ = 61.5 mm): the GPU's contacts (keys, image speeds) and projected Jacobi's
/// impulses against the f64 twin's (`reference::periodic`, `reference::solve` with the
/// flow axis), and the impulses without the images' velocity far from them.
#[test]
fn sheared_contacts_and_impulses_match_the_twin() {
    let (l, rate, dt, step) = (0.1f64, 10.0f64, 1e-3f64, 123u64);
    let cell = PeriodicCell {
        origin: [0.0; 3],
        length: [l; 3],
        shear: Some(LeesEdwards {
            rate,
            flow: 0,
            gradient: 2,
        }),
    };
    let offset = cell.shear_offset(step as f64 * dt);
    let mut rng = ChaCha8Rng::seed_from_u64(9);
    let mut inits = Vec::new();
    for k in 0..30 {
        let (ra, rb) = (
            rng.random_range(0.005..0.008),
            rng.random_range(0.005..0.008),
        );
        let z = if k % 2 == 0 {
            l - rng.random_range(0.0..0.006)
        } else {
            rng.random_range(0.02..0.08)
        };
        let a = DVec3::new(rng.random_range(0.0..l), rng.random_range(0.0..l), z);
        let dir = DVec3::new(
            rng.random_range(-1.0..1.0),
            rng.random_range(-1.0..1.0),
            1.0,
        )
        .normalize();
        let b = a + dir * (ra + rb) * 0.97;
        // Velocities on the profile γ̇ z e_x plus a random part; B wrapped as the step would.
        let mut vel = |p: DVec3| {
            DVec3::new(rate * p.z, 0.0, 0.0)
                + DVec3::new(
                    rng.random_range(-0.3..0.3),
                    0.0,
                    rng.random_range(-0.3..0.3),
                )
        };
        let (va, vb) = (vel(a), vel(b));
        let (b, vb) = cell.wrap_sheared(b, vb, offset);
        for (p, v, r) in [(a, va, ra), (b, vb, rb)] {
            let mut g = BodyInit::sphere([p.x as f32, p.y as f32, p.z as f32], r as f32, 2500.0);
            g.velocity = [v.x as f32, v.y as f32, v.z as f32];
            inits.push(g);
        }
    }
    let state = BodyState::from_inits(&inits);
    let settings = CollideSettings {
        envelope: 0.001,
        friction: vec![0.4],
    };
    let solver = SolverSettings {
        kind: bristlecone::solve::SolverKind::Jacobi,
        max_iterations: 40,
        tolerance: 0.0,
        ..SolverSettings::default()
    };
    let step_settings = StepSettings {
        dt,
        gravity: [0.0; 3],
        contact: Some(ContactSetup {
            models: Vec::new(),
            patch_cells: 0,
            shapes: Vec::new(),
            collide: settings.clone(),
            solver,
        }),
    };
    let mut sim = Simulation::new(shared_context(), &state, step_settings).unwrap();
    sim.set_periodic(&cell).unwrap();
    sim.restore(step, &state);
    sim.advance(1, 1).unwrap();
    let (gpu, gamma) = sim.read_contacts().unwrap();

    let twin = detect_periodic_at(&state, &[], &settings, &cell, offset);
    let records: Vec<ContactRecord> = twin
        .iter()
        .map(|t| {
            let f = |v: DVec3, w: f64| [v.x as f32, v.y as f32, v.z as f32, w as f32];
            ContactRecord {
                n_gap: f(t.normal, t.gap),
                ra: f(t.ra, t.mu),
                rb: f(t.rb, image_flow_speed(&state, &cell, t)),
                ids: [t.a, t.b, t.feature, t.materials],
            }
        })
        .collect();
    assert_eq!(gpu.len(), records.len(), "contact counts");
    let across = records.iter().filter(|r| r.rb[3] != 0.0).count();
    assert!(
        across >= 10,
        "only {across} contacts across the gradient seam"
    );
    for (g, t) in gpu.iter().zip(&records) {
        assert_eq!(key(g), key(t));
        assert!(
            (g.rb[3] - t.rb[3]).abs() < 1e-5,
            "{:?}: image speed {} vs {}",
            key(g),
            g.rb[3],
            t.rb[3]
        );
    }
    let b64 = to_f64(&state);
    let solve = |flow: [f64; 3]| {
        let extra = cpu::Extra {
            shear_flow: flow,
            ..cpu::Extra::default()
        };
        cpu::solve_with(&b64, &records, &solver, dt, None, extra).gamma
    };
    let (with, without) = (solve([1.0, 0.0, 0.0]), solve([0.0; 3]));
    let scale = with.iter().flatten().fold(0.0f64, |a, x| a.max(x.abs()));
    let diff = |c: &[[f64; 3]]| {
        gamma
            .iter()
            .zip(c)
            .flat_map(|(g, c)| (0..3).map(move |k| (g[k] as f64 - c[k]).abs()))
            .fold(0.0, f64::max)
    };
    assert!(
        diff(&with) <= 1e-4 * scale,
        "GPU vs twin: {} of {scale}",
        diff(&with)
    );
    assert!(
        diff(&without) > 0.05 * scale,
        "the images' velocity does not matter here"
    );
}
