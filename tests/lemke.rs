//! Lemke's algorithm (`reference::lemke`) on known LCPs, the LCP of a step (`reference::lcp`) against
//! Golle et al.'s planar examples with analytic answers, and against the interior-point oracle and
//! the GPU Jacobi/APGD solvers on small 3-D contact sets where the friction polygon and the
//! cone coincide (planar motion) or nearly do (many directions).

use bristlecone::bodies::{BodyInit, BodyState, MOTION_DYNAMIC, MOTION_FIXED, SHAPE_PLANE};
use bristlecone::gpu::{buffers, shared_context, GpuContext};
use bristlecone::reference::integrate::{to_f64, Body64};
use bristlecone::reference::lcp::{apply_impulses, LcpFriction, LcpSettings, StepLcp};
use bristlecone::reference::lemke::{self, LemkeError, LemkeOptions};
use bristlecone::reference::oracle;
use bristlecone::solve::{
    build_csr, counts_words, Contact, Solve, SolveInputs, SolverKind, SolverSettings,
};
use glam::{DQuat, DVec3};
use nalgebra::{DMatrix, DVector};

const G: f64 = 9.81;

fn check_lcp(m: &DMatrix<f64>, q: &DVector<f64>, z: &DVector<f64>, tol: f64) {
    let w = m * z + q;
    for i in 0..q.len() {
        assert!(z[i] >= -tol, "z[{i}] = {}", z[i]);
        assert!(w[i] >= -tol, "w[{i}] = {}", w[i]);
        assert!((z[i] * w[i]).abs() <= tol, "z w [{i}] = {}", z[i] * w[i]);
    }
}

fn opts() -> LemkeOptions {
    LemkeOptions::default()
}

// ---------------------------------------------------------------------------------------
// Known LCPs.

/// Murty (1978; "Linear Complementarity, Linear and Nonlinear Programming", §6.3): M̃(n) lower
/// triangular with 1 on the diagonal and 2 below, q_i = −Σ_{j=n−i+1..n} 2ʲ. With covering
/// vector e the complementary pivot method takes 2ⁿ pivots (z₀'s entry and exit included).
fn murty(n: usize) -> (DMatrix<f64>, DVector<f64>) {
    let m = DMatrix::from_fn(n, n, |i, j| match i.cmp(&j) {
        std::cmp::Ordering::Equal => 1.0,
        std::cmp::Ordering::Greater => 2.0,
        std::cmp::Ordering::Less => 0.0,
    });
    let q = DVector::from_fn(n, |i, _| {
        -((n - i)..=n).map(|j| 2f64.powi(j as i32)).sum::<f64>()
    });
    (m, q)
}

#[test]
fn murty_example_takes_exponentially_many_pivots() {
    for n in 1..=12 {
        let (m, q) = murty(n);
        let o = LemkeOptions {
            max_pivots: 1 << n,
            ..opts()
        };
        let s = lemke::solve(&m, &q, None, &o).unwrap();
        check_lcp(&m, &q, &s.z, 1e-9);
        assert_eq!(s.pivots, 1 << n, "n = {n}");
        assert!(s.residual() < 1e-9);
    }
}

/// Kostreva's (1979) example on which Lemke's algorithm cycles without an anticycling rule:
/// every first-step ratio ties and the solution z = e/3 is degenerate (w = 0).
#[test]
fn cycling_example_solved_with_lexicographic_rule() {
    let m = DMatrix::from_row_slice(3, 3, &[1.0, 2.0, 0.0, 0.0, 1.0, 2.0, 2.0, 0.0, 1.0]);
    let q = DVector::from_element(3, -1.0);
    let s = lemke::solve(&m, &q, None, &opts()).unwrap();
    check_lcp(&m, &q, &s.z, 1e-12);
    for i in 0..3 {
        assert!((s.z[i] - 1.0 / 3.0).abs() < 1e-12, "z = {}", s.z);
    }
    assert!(s.residual() < 1e-12);
}

/// Degenerate problems: repeated rows (a continuum of solutions) and zero entries of q.
#[test]
fn degenerate_examples_solved() {
    let m = DMatrix::from_row_slice(3, 3, &[1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 2.0, 2.0, 3.0]);
    let q = DVector::from_row_slice(&[-1.0, -1.0, -2.0]);
    let s = lemke::solve(&m, &q, None, &opts()).unwrap();
    check_lcp(&m, &q, &s.z, 1e-12);
    assert!(
        (s.z.sum() - 1.0).abs() < 1e-12 || (s.z[2] > 0.0),
        "z = {}",
        s.z
    );
    // q with zeros: degenerate first bases.
    let m = DMatrix::from_row_slice(
        4,
        4,
        &[
            2.0, 1.0, 0.0, 0.0, 1.0, 2.0, 1.0, 0.0, 0.0, 1.0, 2.0, 1.0, 0.0, 0.0, 1.0, 2.0,
        ],
    );
    let q = DVector::from_row_slice(&[0.0, -1.0, 0.0, -1.0]);
    let s = lemke::solve(&m, &q, None, &opts()).unwrap();
    check_lcp(&m, &q, &s.z, 1e-12);
}

/// No solution: w = −z − 1 < 0 for every z ≥ 0; and the 2×2 problem with M = [[0, −1],
/// [1, 0]]-like structure that is infeasible. Both must end in ray termination, not a panic.
#[test]
fn infeasible_problem_is_ray_termination() {
    let m = DMatrix::from_element(1, 1, -1.0);
    let q = DVector::from_element(1, -1.0);
    let e = lemke::solve(&m, &q, None, &opts()).unwrap_err();
    assert!(matches!(e, LemkeError::Ray { .. }), "{e}");
    // w1 = z2 − 1, w2 = −z1 − 1: w2 < 0 always.
    let m = DMatrix::from_row_slice(2, 2, &[0.0, 1.0, -1.0, 0.0]);
    let q = DVector::from_row_slice(&[-1.0, -1.0]);
    let e = lemke::solve(&m, &q, None, &opts()).unwrap_err();
    assert!(matches!(e, LemkeError::Ray { .. }), "{e}");
    assert!(e.to_string().contains("ray termination"));
}

#[test]
fn pivot_limit_and_bad_input_are_errors() {
    let (m, q) = murty(10);
    let o = LemkeOptions {
        max_pivots: 100,
        ..opts()
    };
    assert_eq!(
        lemke::solve(&m, &q, None, &o).unwrap_err(),
        LemkeError::PivotLimit { limit: 100 }
    );
    let mut q2 = q.clone();
    q2[3] = f64::NAN;
    assert_eq!(
        lemke::solve(&m, &q2, None, &opts()).unwrap_err(),
        LemkeError::NonFinite { row: 3 }
    );
}

/// A warm start from the solution's own basis (or one still feasible) takes no pivot; an
/// infeasible one starts cold.
#[test]
fn warm_start_from_previous_basis() {
    let n = 30;
    let a = DMatrix::from_fn(n, n, |i, j| ((i * 7 + j * 13) % 11) as f64 / 11.0 - 0.5);
    let m = &a * a.transpose() + DMatrix::identity(n, n) * 0.1;
    let q = DVector::from_fn(n, |i, _| ((i * 5) % 9) as f64 - 5.0);
    let cold = lemke::solve(&m, &q, None, &opts()).unwrap();
    check_lcp(&m, &q, &cold.z, 1e-9);
    let again = lemke::solve(&m, &q, Some(&cold.basis), &opts()).unwrap();
    assert_eq!(again.pivots, 0);
    assert!(again.warm_started);
    assert!((&again.z - &cold.z).amax() < 1e-12);
    let q2 = q.map(|x| x * 1.01 + 0.01);
    let cold2 = lemke::solve(&m, &q2, None, &opts()).unwrap();
    let warm2 = lemke::solve(&m, &q2, Some(&cold.basis), &opts()).unwrap();
    check_lcp(&m, &q2, &warm2.z, 1e-9);
    assert!(
        (&warm2.z - &cold2.z).amax() < 1e-9,
        "unique solution (M positive definite)"
    );
    assert!(warm2.pivots <= cold2.pivots);
    // A basis that stays feasible under a small change of q is reused without a pivot.
    let q3 = q.map(|x| x * (1.0 + 1e-9));
    let warm3 = lemke::solve(&m, &q3, Some(&cold.basis), &opts()).unwrap();
    assert_eq!(warm3.pivots, 0);
    check_lcp(&m, &q3, &warm3.z, 1e-9);
}

// ---------------------------------------------------------------------------------------
// Seed 004's planar examples against analytic answers (f64 LCP, integrated in the test).

const DT: f64 = 1.0 / 1024.0;

fn plane64() -> Body64 {
    Body64 {
        pos: DVec3::ZERO,
        radius: 1.0,
        rot: DQuat::IDENTITY,
        vel: DVec3::ZERO,
        omega: DVec3::ZERO,
        inv_inertia: DVec3::ZERO,
        inv_mass: 0.0,
        force: DVec3::ZERO,
        torque: DVec3::ZERO,
        motion: MOTION_FIXED,
    }
}

/// A block: translation only (infinite inertia), so friction cannot make it roll.
fn block64(mass: f64, vel: DVec3) -> Body64 {
    Body64 {
        pos: DVec3::new(0.0, 0.0, 0.05),
        inv_mass: 1.0 / mass,
        vel,
        motion: MOTION_DYNAMIC,
        ..plane64()
    }
}

fn contact(ids: [u32; 3], n: [f32; 3], gap: f32, ra: [f32; 3], rb: [f32; 3], mu: f32) -> Contact {
    Contact {
        n_gap: [n[0], n[1], n[2], gap],
        ra: [ra[0], ra[1], ra[2], mu],
        rb: [rb[0], rb[1], rb[2], 0.0],
        ids: [ids[0], ids[1], ids[2], 0],
    }
}

fn floor_contact(gap: f32, mu: f32) -> Contact {
    contact(
        [0, 1, 0],
        [0.0, 0.0, 1.0],
        gap,
        [0.0; 3],
        [0.0, 0.0, -0.05],
        mu,
    )
}

/// The exact friction models: the pyramid with ±u among its directions, and Golle et al.'s form.
fn exact_models() -> Vec<LcpSettings> {
    [
        LcpFriction::Pyramid { directions: 4 },
        LcpFriction::Pyramid { directions: 8 },
        LcpFriction::Pyramid { directions: 2 },
        LcpFriction::Surplus,
    ]
    .into_iter()
    .map(|friction| LcpSettings {
        friction,
        ..Default::default()
    })
    .collect()
}

/// One step of a body set: v* (gravity + applied force), the LCP, v⁺. Returns the first
/// contact's γ.
fn step64(bodies: &mut [Body64], contacts: &[Contact], s: &LcpSettings) -> [f64; 3] {
    for b in bodies.iter_mut().filter(|b| b.motion == MOTION_DYNAMIC) {
        b.vel += DT * (DVec3::new(0.0, 0.0, -G) + b.inv_mass * b.force);
    }
    let lcp = StepLcp::new(bodies, contacts, DT, s);
    let sol = lcp.solve(None, contacts).unwrap();
    assert!(sol.lemke.residual() < 1e-12, "{}", sol.lemke.residual());
    let v = apply_impulses(bodies, contacts, &sol.gamma);
    for (b, v) in bodies.iter_mut().zip(v) {
        b.vel = v.0;
        b.omega = v.1;
    }
    sol.gamma[0]
}

#[test]
fn block_slides_to_rest_at_mu_g() {
    let (m, mu, v0) = (2.0, 0.5, 0.3);
    for s in exact_models() {
        let mut bodies = [plane64(), block64(m, DVec3::new(v0, 0.0, 0.0))];
        let c = [floor_contact(0.0, mu as f32)];
        let mut stopped_at = None;
        for k in 1..=80 {
            let g = step64(&mut bodies, &c, &s);
            let v = bodies[1].vel;
            let expect = (v0 - k as f64 * mu * G * DT).max(0.0);
            assert!(
                (v.x - expect).abs() < 1e-9,
                "{s:?} step {k}: {} vs {expect}",
                v.x
            );
            assert!(
                v.z.abs() < 1e-12 && v.y.abs() < 1e-12,
                "{s:?} step {k}: {v}"
            );
            assert!(
                (g[0] - m * G * DT).abs() < 1e-9 * m * G * DT,
                "γ_n {}",
                g[0]
            );
            if expect == 0.0 && stopped_at.is_none() {
                stopped_at = Some(k);
            }
        }
        // v0 / (μ g dt) = 62.6: stops in step 63 and stays.
        assert_eq!(stopped_at, Some(63));
    }
}

#[test]
fn block_sticks_below_the_friction_limit_and_slides_above() {
    // μ exactly representable in the f32 contact record.
    let (m, mu) = (1.5, 0.375);
    for s in exact_models() {
        for ratio in [0.8, 1.5] {
            let f = ratio * mu * m * G;
            let mut bodies = [plane64(), block64(m, DVec3::ZERO)];
            bodies[1].force = DVec3::new(f, 0.0, 0.0);
            let c = [floor_contact(0.0, mu as f32)];
            for k in 1..=50 {
                let g = step64(&mut bodies, &c, &s);
                let expect = (k as f64 * DT * (f - mu * m * G) / m).max(0.0);
                let vx = bodies[1].vel.x;
                assert!(
                    (vx - expect).abs() < 1e-9,
                    "{s:?} F/μmg = {ratio} step {k}: {vx} vs {expect}"
                );
                let friction = if ratio < 1.0 {
                    -f * DT
                } else {
                    -mu * m * G * DT
                };
                assert!(
                    (g[1] - friction).abs() < 1e-9,
                    "{s:?}: γ_u {} vs {friction}",
                    g[1]
                );
            }
        }
    }
}

#[test]
fn inelastic_impact_closes_the_gap_in_one_step() {
    let (m, mu, gap) = (1.0, 0.5, 1e-3f32);
    for s in exact_models() {
        // Oblique impact: slides through (v_x = 1) or sticks (v_x = 0.2).
        for vx in [1.0, 0.2] {
            let mut bodies = [plane64(), block64(m, DVec3::new(vx, 0.0, -2.0))];
            let c = [floor_contact(gap, mu as f32)];
            let g = step64(&mut bodies, &c, &s);
            let v = bodies[1].vel;
            let phi = gap as f64;
            assert!((v.z + phi / DT).abs() < 1e-9, "lands exactly: {}", v.z);
            let jn = m * (2.0 + G * DT - phi / DT);
            assert!((g[0] - jn).abs() < 1e-9);
            let expect = (vx - mu * jn / m).max(0.0);
            assert!(
                (v.x - expect).abs() < 1e-9,
                "{s:?} vx {vx}: {} vs {expect}",
                v.x
            );
        }
        // Head-on impact of two bodies without gravity: they move on together.
        let mut a = block64(1.0, DVec3::new(1.0, 0.0, 0.0));
        let mut b = block64(3.0, DVec3::new(-0.5, 0.0, 0.0));
        a.pos = DVec3::ZERO;
        b.pos = DVec3::new(0.1, 0.0, 0.0);
        let mut bodies = [a, b];
        let c = [contact(
            [0, 1, 0],
            [1.0, 0.0, 0.0],
            0.0,
            [0.05, 0.0, 0.0],
            [-0.05, 0.0, 0.0],
            0.5,
        )];
        let lcp = StepLcp::new(&bodies, &c, DT, &s);
        let sol = lcp.solve(None, &c).unwrap();
        let v = apply_impulses(&bodies, &c, &sol.gamma);
        for (body, (lin, _)) in bodies.iter_mut().zip(v) {
            body.vel = lin;
        }
        for body in &bodies {
            assert!((body.vel.x - (-0.125)).abs() < 1e-12, "{}", body.vel.x);
        }
    }
}

/// A ray inside a step's LCP is an error naming the contacts involved (the contact's row and
/// those sharing a body), never a panic.
#[test]
fn step_lcp_failure_names_the_contacts() {
    let bodies = [plane64(), block64(1.0, DVec3::new(0.0, 0.0, -1.0))];
    let c = [floor_contact(0.0, 0.5)];
    let s = LcpSettings::default();
    let mut lcp = StepLcp::new(&bodies, &c, DT, &s);
    lcp.m = -DMatrix::identity(lcp.q.len(), lcp.q.len());
    let e = lcp.solve(None, &c).unwrap_err();
    assert!(matches!(e.error, LemkeError::Ray { .. }));
    assert_eq!(e.contacts, vec![(0, 0, 1)]);
    assert!(
        e.to_string().contains("contacts involved: #0 (bodies 0–1)"),
        "{e}"
    );
}

// ---------------------------------------------------------------------------------------
// Small 3-D contact sets against the interior-point oracle and the GPU solvers.

const DTF: f32 = 1e-3;

struct Problem {
    state: BodyState,
    contacts: Vec<Contact>,
}

fn plane_init() -> BodyInit {
    BodyInit::fixed(SHAPE_PLANE, 0, [0.0; 3], 1.0)
}

/// One sphere on the plane with free velocity `v` (gravity step included) and spin `w`.
fn sphere_on_plane(v: [f32; 3], w: [f32; 3]) -> Problem {
    let r = 0.05;
    let mut s = BodyInit::sphere([0.0, 0.0, r], r, 2500.0);
    s.velocity = [v[0], v[1], v[2] - 9.81 * DTF];
    s.angular_velocity = w;
    let c = contact(
        [0, 1, 0],
        [0.0, 0.0, 1.0],
        0.0,
        [0.0; 3],
        [0.0, 0.0, -r],
        0.5,
    );
    Problem {
        state: BodyState::from_inits(&[plane_init(), s]),
        contacts: vec![c],
    }
}

/// Two spheres on the plane, slightly apart, and a third resting on both, in the x–z plane
/// (contact normals in that plane, so their u tangent is too: a planar problem).
fn pyramid3(top_vx: f32) -> Problem {
    let (r, s) = (0.05f32, 0.002f32);
    let x = r + s;
    let h = ((2.0 * r) * (2.0 * r) - x * x).sqrt();
    let mut inits = vec![plane_init()];
    for (px, pz) in [(-x, r), (x, r), (0.0, r + h)] {
        let mut b = BodyInit::sphere([px, 0.0, pz], r, 2500.0);
        b.velocity = [0.0, 0.0, -9.81 * DTF];
        inits.push(b);
    }
    inits[3].velocity[0] = top_vx;
    let mut contacts = vec![
        contact(
            [0, 1, 0],
            [0.0, 0.0, 1.0],
            0.0,
            [-x, 0.0, 0.0],
            [0.0, 0.0, -r],
            0.3,
        ),
        contact(
            [0, 2, 0],
            [0.0, 0.0, 1.0],
            0.0,
            [x, 0.0, 0.0],
            [0.0, 0.0, -r],
            0.3,
        ),
    ];
    for (a, sx) in [(1u32, -x), (2, x)] {
        let n = DVec3::new(-sx as f64, 0.0, h as f64).normalize();
        let f = |v: DVec3| [v.x as f32, v.y as f32, v.z as f32];
        contacts.push(contact(
            [a, 3, 0],
            f(n),
            0.0,
            f(n * r as f64),
            f(-n * r as f64),
            0.3,
        ));
    }
    Problem {
        state: BodyState::from_inits(&inits),
        contacts,
    }
}

/// A box (half extents 0.1 × 0.05 × 0.03, 2 kg) on four corner contacts: N is singular
/// (four normal rows for three constrained motions), the impulses are not unique but v⁺ is.
fn box_on_four(v: [f32; 3], w: [f32; 3]) -> Problem {
    let (hx, hy, hz, m) = (0.1f32, 0.05f32, 0.03f32, 2.0f32);
    let mut b = BodyInit::sphere([0.0, 0.0, hz], 0.12, 2500.0);
    b.inv_mass = 1.0 / m;
    let i = |a: f32, c: f32| m * (a * a + c * c) * 4.0 / 12.0;
    b.inv_inertia = [1.0 / i(hy, hz), 1.0 / i(hx, hz), 1.0 / i(hx, hy)];
    b.velocity = [v[0], v[1], v[2] - 9.81 * DTF];
    b.angular_velocity = w;
    let contacts = [(-1.0, -1.0), (-1.0, 1.0), (1.0, -1.0), (1.0, 1.0)]
        .iter()
        .enumerate()
        .map(|(k, (sx, sy))| {
            let (x, y) = (sx * hx, sy * hy);
            contact(
                [0, 1, k as u32],
                [0.0, 0.0, 1.0],
                0.0,
                [x, y, 0.0],
                [x, y, -hz],
                0.4,
            )
        })
        .collect();
    Problem {
        state: BodyState::from_inits(&[plane_init(), b]),
        contacts,
    }
}

/// v⁺ (stacked linear, angular per body) from Lemke's solution of the relaxed pyramid.
fn lemke_velocities(pb: &Problem, directions: u32) -> Vec<f64> {
    let bodies = to_f64(&pb.state);
    let s = LcpSettings {
        friction: LcpFriction::Pyramid { directions },
        relaxed: true,
        recovery_speed: 0.5,
        ..Default::default()
    };
    let lcp = StepLcp::new(&bodies, &pb.contacts, DTF as f64, &s);
    let sol = lcp.solve(None, &pb.contacts).unwrap();
    assert!(sol.lemke.residual() < 1e-10, "{}", sol.lemke.residual());
    stack(apply_impulses(&bodies, &pb.contacts, &sol.gamma))
}

fn stack(v: Vec<(DVec3, DVec3)>) -> Vec<f64> {
    v.iter()
        .flat_map(|(l, a)| [l.x, l.y, l.z, a.x, a.y, a.z])
        .collect()
}

fn oracle_velocities(pb: &Problem) -> Vec<f64> {
    let bodies = to_f64(&pb.state);
    let ccp = oracle::DenseCcp::new(&bodies, &pb.contacts, DTF as f64, 0.5);
    let sol = oracle::solve(&ccp, 1e-12);
    let g = DVector::from_iterator(
        3 * pb.contacts.len(),
        sol.gamma.iter().flat_map(|g| g.iter().copied()),
    );
    stack(ccp.velocities(&bodies, &g))
}

fn gpu_velocities(ctx: &GpuContext, pb: &Problem, kind: SolverKind, sweeps: u32) -> Vec<f64> {
    let settings = SolverSettings {
        kind,
        max_iterations: sweeps,
        tolerance: 1e-9,
        omega: 0.6,
        recovery_speed: 0.5,
        slop: 0.0,
        stabilisation: 1.0,
        warm_start: false,
        cone: bristlecone::solve::Cone::Relaxed,
        max_outer: 1,
        coarse_slab: 0.0,
    };
    let bodies = bristlecone::bodies::GpuBodies::upload(ctx, &pb.state).unwrap();
    let solve = Solve::new(ctx, &bodies, pb.contacts.len() as u32, &settings, DTF).unwrap();
    let (off, ent) = build_csr(pb.state.len(), &pb.contacts);
    let n = pb.contacts.len() as u32;
    let contacts = buffers::storage_from(ctx, "contacts", &pb.contacts).unwrap();
    let counts = buffers::storage_from(ctx, "counts", &counts_words(n)).unwrap();
    let offsets = buffers::storage_from(ctx, "offsets", &off).unwrap();
    let entries = buffers::storage_from(ctx, "entries", &ent).unwrap();
    let stats = buffers::storage_from(ctx, "stats", &[0u32; 8]).unwrap();
    let mut enc = ctx.device.create_command_encoder(&Default::default());
    let inputs = SolveInputs {
        contacts: &contacts,
        counts: &counts,
        body_offsets: &offsets,
        body_entries: &entries,
        step_stats: &stats,
    };
    solve.record(ctx, &mut enc, inputs);
    ctx.queue.submit([enc.finish()]);
    let s = bodies.download_kinematics(ctx).unwrap();
    let v3 = |a: [f32; 4]| DVec3::new(a[0] as f64, a[1] as f64, a[2] as f64);
    stack(
        (0..s.len())
            .map(|i| (v3(s.vel[i]), v3(s.omega[i])))
            .collect(),
    )
}

/// max |a − b| over the linear velocities and the angular ones times the body's radius
/// (so both are in m/s), relative to the largest free speed.
fn velocity_error(pb: &Problem, a: &[f64], b: &[f64]) -> f64 {
    let mut scale: f64 = 9.81 * DTF as f64;
    for i in 0..pb.state.len() {
        for k in 0..3 {
            scale = scale.max((pb.state.vel[i][k] as f64).abs());
        }
    }
    let mut e: f64 = 0.0;
    for i in 0..pb.state.len() {
        let r = pb.state.pos[i][3] as f64;
        for k in 0..3 {
            e = e.max((a[6 * i + k] - b[6 * i + k]).abs());
            e = e.max(r * (a[6 * i + 3 + k] - b[6 * i + 3 + k]).abs());
        }
    }
    e / scale
}

fn planar_problems() -> Vec<(&'static str, Problem)> {
    vec![
        (
            "sphere sliding on a plane",
            sphere_on_plane([0.4, 0.0, 0.0], [0.0, 3.0, 0.0]),
        ),
        ("3-sphere pyramid", pyramid3(0.05)),
        (
            "box on four contacts",
            box_on_four([0.3, 0.0, 0.0], [0.0, 0.5, 0.0]),
        ),
    ]
}

/// Planar problems: the pyramid with directions ±u, ±w is the cone restricted to the plane of
/// motion, so Lemke on the relaxed pyramid solves the oracle's QP exactly.
#[test]
fn planar_problems_match_the_interior_point_oracle() {
    for (name, pb) in planar_problems() {
        let l = lemke_velocities(&pb, 4);
        let o = oracle_velocities(&pb);
        let e = velocity_error(&pb, &l, &o);
        println!("{name}: Lemke vs oracle {e:.2e}");
        assert!(e < 1e-7, "{name}: {e:e}");
    }
}

/// 3-D problems: with k directions the friction impulse of a sliding contact takes a vertex
/// of the inscribed k-gon, up to π/k off the slip direction, so v⁺ approaches the oracle's
/// (the cone's) as O(1/k).
#[test]
fn spatial_problems_approach_the_oracle_with_many_directions() {
    let problems = [
        (
            "sphere sliding and spinning",
            sphere_on_plane([0.3, -0.2, 0.0], [1.0, -2.0, 4.0]),
        ),
        (
            "box sliding and turning",
            box_on_four([0.3, -0.2, 0.0], [0.3, 0.2, 2.0]),
        ),
    ];
    for (name, pb) in problems {
        let o = oracle_velocities(&pb);
        let e: Vec<f64> = [8, 32, 128]
            .iter()
            .map(|&k| {
                let e = velocity_error(&pb, &lemke_velocities(&pb, k), &o);
                println!("{name}: Lemke ({k} directions) vs oracle {e:.2e}");
                assert!(
                    e < 0.5 * std::f64::consts::PI / k as f64,
                    "{name}, {k}: {e:e}"
                );
                e
            })
            .collect();
        assert!(
            e[2] < e[0] / 5.0,
            "{name}: more directions approach the cone"
        );
    }
}

/// The GPU solvers (f32, iterative) against Lemke's exact answer on the planar problems.
#[test]
fn gpu_solvers_match_lemke_on_planar_problems() {
    let ctx = shared_context();
    for (name, pb) in planar_problems() {
        let l = lemke_velocities(&pb, 4);
        let a = velocity_error(&pb, &l, &gpu_velocities(&ctx, &pb, SolverKind::Apgd, 400));
        let j = velocity_error(
            &pb,
            &l,
            &gpu_velocities(&ctx, &pb, SolverKind::Jacobi, 1500),
        );
        let g = velocity_error(
            &pb,
            &l,
            &gpu_velocities(&ctx, &pb, SolverKind::GaussSeidel, 400),
        );
        println!(
            "{name}: GPU APGD vs Lemke {a:.2e}, GPU Jacobi vs Lemke {j:.2e}, \
             GPU Gauss–Seidel vs Lemke {g:.2e}"
        );
        assert!(a < 1e-6, "{name}: APGD {a:e}");
        assert!(j < 5e-6, "{name}: Jacobi {j:e}");
        assert!(g < 1e-6, "{name}: Gauss–Seidel {g:e}");
    }
}

// ---------------------------------------------------------------------------------------
// Scenes: `[solver] kind = "lemke"` validation and a run through the GPU step.

const SCENE: &str = r#"[simulation]
dt = 1e-3
steps = 10

[[material]]
name = "glass"
density = 2500.0
friction = 0.5

[[body]]
radius = 0.01
position = [0.0, 0.0, 0.01]

[[boundary]]
kind = "plane"
point = [0.0, 0.0, 0.0]
normal = [0.0, 0.0, 1.0]

[solver]
"#;

fn parse(solver: &str) -> Result<bristlecone::scene::Scene, bristlecone::scene::SceneError> {
    bristlecone::scene::parse_str(&format!("{SCENE}{solver}"), std::path::Path::new("t.toml"))
}

#[test]
fn lemke_settings_are_validated_with_file_line_field() {
    let s = parse("kind = \"lemke\"\nlcp_friction = \"surplus\"\nmax_pivots = 500\n").unwrap();
    assert_eq!(s.solver.lcp_friction, LcpFriction::Surplus);
    assert_eq!(s.solver.max_pivots, 500);
    let l = bristlecone::setup::lemke_settings(&s).unwrap();
    assert_eq!(l.friction, LcpFriction::Surplus);
    use bristlecone::step::LemkeStep;
    assert_eq!(s.solver.lemke_step, LemkeStep::Auto);
    for (text, step) in [("cpu", LemkeStep::Cpu), ("gpu", LemkeStep::Gpu)] {
        let s = parse(&format!("kind = \"lemke\"\nlemke_step = \"{text}\"\n")).unwrap();
        assert_eq!(s.solver.lemke_step, step);
    }
    let s = parse("kind = \"lemke\"\nfriction_directions = 16\n").unwrap();
    assert_eq!(
        s.solver.lcp_friction,
        LcpFriction::Pyramid { directions: 16 }
    );
    let cases = [
        (
            "kind = \"lemke\"\nomega = 0.3\n",
            "solver.omega",
            21,
            "does not apply to solver `lemke`",
        ),
        (
            "kind = \"lemke\"\nmax_iterations = 9\n",
            "solver.max_iterations",
            21,
            "does not apply",
        ),
        (
            "kind = \"lemke\"\ncone = \"exact\"\n",
            "solver.cone",
            21,
            "does not apply to solver `lemke`",
        ),
        (
            "kind = \"lemke\"\nslop = 1e-6\n",
            "solver.slop",
            21,
            "does not apply to solver `lemke`",
        ),
        (
            "friction_directions = 8\n",
            "solver.friction_directions",
            20,
            "does not apply to solver `apgd`",
        ),
        (
            "kind = \"lemke\"\nfriction_directions = 1\n",
            "solver.friction_directions",
            21,
            "between 2 and 64 (got 1)",
        ),
        (
            "kind = \"lemke\"\nlcp_friction = \"cone\"\n",
            "solver.lcp_friction",
            21,
            "unknown LCP friction `cone`",
        ),
        (
            "kind = \"lemke\"\nlcp_friction = \"surplus\"\nfriction_directions = 8\n",
            "solver.friction_directions",
            22,
            "applies to lcp_friction = \"pyramid\"",
        ),
        (
            "kind = \"lemke\"\ncompliance = -1.0\n",
            "solver.compliance",
            21,
            "non-negative",
        ),
        (
            "kind = \"lemke\"\nlemke_step = \"fpga\"\n",
            "solver.lemke_step",
            21,
            "unknown lemke_step `fpga` (expected one of: auto, cpu, gpu)",
        ),
        (
            "lemke_step = \"cpu\"\n",
            "solver.lemke_step",
            20,
            "does not apply to solver `apgd`",
        ),
    ];
    for (text, field, line, msg) in cases {
        let e = parse(text).unwrap_err();
        assert_eq!(e.field, field, "{e}");
        assert_eq!(e.line, Some(line), "{e}");
        assert!(e.message.contains(msg), "{e}");
        assert!(e.to_string().starts_with(&format!("t.toml:{line}:")), "{e}");
    }
}

/// A material model the Lemke path would not honour is refused at the material, not dropped.
#[test]
fn lemke_refuses_material_models_it_does_not_solve() {
    let text = SCENE.replace(
        "friction = 0.5\n",
        "friction = 0.5\nmodel = { kind = \"compliant\", stiffness = 1e5, damping = 10.0 }\n",
    );
    let full = format!("{text}kind = \"lemke\"\n");
    let e = bristlecone::scene::parse_str(&full, std::path::Path::new("t.toml")).unwrap_err();
    assert_eq!(e.field, "material[0].model.kind", "{e}");
    assert_eq!(e.line, Some(9), "{e}");
    assert!(e.message.contains("GPU solvers only"), "{e}");
    // The same material with the GPU solver is accepted.
    let ok = format!("{text}kind = \"apgd\"\n");
    bristlecone::scene::parse_str(&ok, std::path::Path::new("t.toml")).unwrap();
}

#[test]
fn lemke_scene_runs_through_the_gpu_step_with_pivots_in_the_statistics() {
    use bristlecone::run::{run_scene_realtime, RunOptions, Silent};
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.toml");
    // The sphere starts sliding at 0.35 m/s: exact Coulomb friction (μ = 0.5) makes it roll
    // without slipping at 5/7 of that after t = 2 v₀/(7 μ g) = 20.4 ms.
    let text = format!("{SCENE}kind = \"lemke\"\nfriction_directions = 8\n")
        .replace(
            "position = [0.0, 0.0, 0.01]",
            "position = [0.0, 0.0, 0.01]\nvelocity = [0.35, 0.0, 0.0]",
        )
        .replace("steps = 10", "steps = 40");
    std::fs::write(&path, text).unwrap();
    let opts = RunOptions {
        out_dir: Some(dir.path().join("out")),
        steps: None,
        resume: None,
        from: None,
        overwrite: false,
    };
    let stop = std::sync::atomic::AtomicBool::new(false);
    // Two steps of pre-roll before the clock: solved like the others, reported apart.
    let (r, rt) =
        run_scene_realtime(shared_context(), &path, &opts, None, &stop, &mut Silent, 2).unwrap();
    assert_eq!(r.steps_done, 40);
    assert_eq!((rt.steps, rt.preroll), (38, 2));
    assert!(rt.csv.exists() && rt.solve.is_some());
    let csv = std::fs::read_to_string(&rt.csv).unwrap();
    let lines: Vec<Vec<&str>> = csv.lines().map(|l| l.split(',').collect()).collect();
    assert_eq!(
        lines[0],
        [
            "step",
            "step_ms",
            "solve_ms",
            "margin_ms",
            "pivots",
            "retries",
            "perturbation"
        ]
    );
    assert_eq!(lines.len(), 41);
    // Pre-roll rows have no margin; clocked rows do, and their misses are the report's.
    assert!(lines[1..3].iter().all(|l| l[3].is_empty()));
    let margins: Vec<f64> = lines[3..].iter().map(|l| l[3].parse().unwrap()).collect();
    assert_eq!(
        margins.iter().filter(|m| **m < 0.0).count() as u64,
        rt.misses
    );
    // One sphere on a plane: the exact LCP, no fallback, in both per-step files.
    let lemke = std::fs::read_to_string(r.out_dir.join("lemke.csv")).unwrap();
    let rows_l: Vec<Vec<&str>> = lemke.lines().map(|l| l.split(',').collect()).collect();
    assert_eq!(
        rows_l[0],
        [
            "step",
            "rows",
            "pivots",
            "retries",
            "perturbation",
            "solve_ms"
        ]
    );
    assert_eq!(rows_l.len(), 41);
    for (l, rt_l) in rows_l[1..].iter().zip(&lines[1..]) {
        assert_eq!(
            (l[0], l[2], l[3], l[4]),
            (rt_l[0], rt_l[4], rt_l[5], rt_l[6])
        );
        assert_eq!((l[1], l[3], l[4]), ("10", "0", "0e0"), "{l:?}");
    }
    let rows = bristlecone::io::read_stats(&r.stats).unwrap();
    assert_eq!(rows.len(), 40);
    assert!(rows.iter().all(|r| r.contacts == 1));
    assert!(rows[0].iterations > 0, "pivots of the first step");
    assert!(rows.iter().all(|r| r.residual < 1e-9));
    let state = r.out_dir.join("frames");
    assert!(state.exists());
    // Rolling: v = 5/7 v₀ (f32 state: 1e-5 relative).
    let last = rows.last().unwrap();
    let m = 2500.0 * 4.0 / 3.0 * std::f64::consts::PI * 1e-6;
    let v = last.momentum[0] / m;
    assert!((v - 0.25).abs() < 1e-5 * 0.35 + 1e-6, "v = {v}");
    assert!(
        last.momentum[2].abs() < 1e-9,
        "no lift-off: {}",
        last.momentum[2]
    );
}

// ---------------------------------------------------------------------------------------
// The CPU step path (`[solver] lemke_step`).

/// The realtime scene (`assets/scenes/realtime.toml`) with its top bead dropped from 5 mm,
/// moving sideways at 2 cm/s: a flight, an inelastic impact on the 2×2 layer, then rest, so
/// both paths move bodies, make contacts and pivot. (Throwing the 2×2 layer sideways in its
/// pockets instead makes the rigid LCP's solution non-unique: the two paths' f32 rounding
/// then picks different solutions, 4 mm/s apart after a few steps; no tolerance applies.)
fn realtime_scene_in_motion() -> (bristlecone::scene::Scene, BodyState) {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/scenes/realtime.toml");
    let (scene, _) = bristlecone::run::load_scene(&path).unwrap();
    let mut state = bristlecone::setup::build_bodies(&scene);
    let n = state.len();
    state.pos[n - 1][2] += 0.005;
    state.vel[n - 1] = [0.02, 0.0, 0.0, 0.0];
    (scene, state)
}

fn lemke_sim(
    scene: &bristlecone::scene::Scene,
    state: &BodyState,
    step: bristlecone::step::LemkeStep,
) -> bristlecone::step::Simulation {
    let settings = bristlecone::setup::step_settings(scene);
    let mut sim = bristlecone::step::Simulation::new(shared_context(), state, settings).unwrap();
    sim.set_lemke(bristlecone::setup::lemke_settings(scene));
    sim.set_lemke_step(step).unwrap();
    sim
}

/// The CPU path (f64 twin collision, everything on the CPU) and the GPU-collision path
/// (collision and integration in f32 on the GPU, the solve on the CPU) agree on the realtime
/// scene in motion: the same contacts (count and keys) every step, and positions and
/// velocities within what f32 rounding inside a step explains.
#[test]
fn cpu_step_matches_the_gpu_collision_step_on_the_realtime_scene() {
    use bristlecone::step::LemkeStep;
    let (scene, state) = realtime_scene_in_motion();
    // The automatic rule picks the CPU for this 15-body scene.
    let auto = lemke_sim(&scene, &state, LemkeStep::Auto);
    assert!(auto.lemke_on_cpu());
    let mut cpu = lemke_sim(&scene, &state, LemkeStep::Cpu);
    let mut gpu = lemke_sim(&scene, &state, LemkeStep::Gpu);
    assert!(cpu.lemke_on_cpu() && !gpu.lemke_on_cpu());
    let steps = 150;
    let (mut dx, mut dv, mut dn, mut dw) = (0.0f64, 0.0f64, 0.0f64, 0.0f64);
    let mut pivots = [0u64; 2];
    for _ in 0..steps {
        let a = cpu.advance(1, 1).unwrap()[0];
        let b = gpu.advance(1, 1).unwrap()[0];
        assert_eq!(a.contacts, b.contacts, "step {}", a.step);
        pivots[0] += a.iterations as u64;
        pivots[1] += b.iterations as u64;
        let (ca, _) = cpu.read_contacts().unwrap();
        let (cb, _) = gpu.read_contacts().unwrap();
        let keys = |c: &[Contact]| c.iter().map(|c| c.key()).collect::<Vec<_>>();
        assert_eq!(keys(&ca), keys(&cb), "step {}", a.step);
        for (x, y) in ca.iter().zip(&cb) {
            for k in 0..4 {
                dn = dn.max((x.n_gap[k] - y.n_gap[k]).abs() as f64);
            }
        }
        let (sa, sb) = (cpu.read_state().unwrap(), gpu.read_state().unwrap());
        for i in 0..sa.len() {
            let r = sa.pos[i][3];
            for k in 0..3 {
                dx = dx.max((sa.pos[i][k] - sb.pos[i][k]).abs() as f64);
                dv = dv.max((sa.vel[i][k] - sb.vel[i][k]).abs() as f64);
                dw = dw.max(((sa.omega[i][k] - sb.omega[i][k]) * r).abs() as f64);
            }
        }
    }
    eprintln!(
        "CPU vs GPU-collision path over {steps} steps: max |Δn, Δgap| = {dn:.2e}, |Δx| = {dx:.2e} m, \
         |Δv| = {dv:.2e} m/s, |Δω| r = {dw:.2e} m/s; pivots {pivots:?}"
    );
    assert!(pivots[0] > 0 && pivots[1] > 0);
    // Contact normals and gaps from f32 positions a few ulps apart.
    assert!(dn < 1e-4, "contact normals or gaps differ by {dn}");
    // The impact at 0.31 m/s with friction on four contacts is sensitive: f32 rounding inside
    // a step moves the top bead's rebound by ~3e-4 m/s and its spin by ~1e-2 m/s (ω r) for a
    // step (measured); the positions stay within 1e-6 m (a 1e-4 fraction of the radius).
    assert!(dx < 1e-6, "positions differ by {dx} m");
    assert!(dv < 1e-3, "velocities differ by {dv} m/s");
    assert!(dw < 3e-2, "spins differ by {dw} m/s");
    // Something moved: the comparison is not of two bodies at rest.
    let moved = cpu.read_state().unwrap().pos[14][2] - state.pos[14][2];
    assert!(moved < -0.004, "the top bead fell {moved} m");
}

/// The realtime scene file with the top bead dropped (as [`realtime_scene_in_motion`]),
/// `steps` steps, frames every 20, on `lemke_step`.
fn realtime_file_in_motion(
    dir: &std::path::Path,
    steps: u64,
    lemke_step: &str,
) -> std::path::PathBuf {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/scenes/realtime.toml");
    let text = std::fs::read_to_string(path)
        .unwrap()
        .replace(
            "position = [0.0, 0.0, 0.038001]",
            "position = [0.0, 0.0, 0.043001]\nvelocity = [0.02, 0.0, 0.0]",
        )
        .replace("steps = 10000", &format!("steps = {steps}"))
        .replace("frame_every = 1000", "frame_every = 20")
        .replace(
            "friction_directions = 4\n",
            &format!("friction_directions = 4\nlemke_step = \"{lemke_step}\"\n"),
        );
    assert!(text.contains("0.043001") && text.contains("lemke_step"));
    let out = dir.join(format!("motion_{lemke_step}.toml"));
    std::fs::write(&out, text).unwrap();
    out
}

fn run_to(
    scene: &std::path::Path,
    out: &std::path::Path,
    steps: Option<u64>,
    resume: Option<std::path::PathBuf>,
) -> bristlecone::run::RunReport {
    use bristlecone::run::{run_scene, RunOptions, Silent};
    let opts = RunOptions {
        out_dir: Some(out.to_path_buf()),
        steps,
        resume,
        from: None,
        overwrite: false,
    };
    let stop = std::sync::atomic::AtomicBool::new(false);
    run_scene(shared_context(), scene, &opts, &stop, &mut Silent).unwrap()
}

/// stats.csv without its last (wall-clock) column.
fn stats_columns(path: &std::path::Path) -> Vec<String> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|l| l.rsplit_once(',').unwrap().0.to_string())
        .collect()
}

/// The Lemke basis rides in the checkpoint: a Lemke run resumed after the impact is
/// bit-identical to one run straight through (checkpoint, last frame, statistics with the
/// pivot counts), on both step paths; resumed from a checkpoint whose basis was emptied, the
/// pivot counts differ (the basis is what makes it identical).
#[test]
fn resumed_lemke_run_is_bit_identical_on_both_paths() {
    let dir = tempfile::tempdir().unwrap();
    for path in ["cpu", "gpu"] {
        let scene = realtime_file_in_motion(dir.path(), 60, path);
        let (full, split) = (
            dir.path().join(format!("full_{path}")),
            dir.path().join(format!("split_{path}")),
        );
        run_to(&scene, &full, None, None);
        let half = run_to(&scene, &split, Some(40), None);
        let saved = dir.path().join(format!("half_{path}.bin"));
        std::fs::copy(&half.checkpoint, &saved).unwrap();
        // The same checkpoint with an empty basis: a cold start at step 41.
        let mut ck = bristlecone::io::read_checkpoint(&saved).unwrap();
        let basis = ck
            .sections
            .iter_mut()
            .find(|s| s.0 == "lemke_basis")
            .unwrap();
        assert!(basis.1.len() > 8, "the basis has entries");
        basis.1.truncate(8);
        basis.1[..4].copy_from_slice(&0u32.to_le_bytes());
        let cold_ck = dir.path().join(format!("cold_{path}.bin"));
        bristlecone::io::write_checkpoint(&cold_ck, &ck).unwrap();
        let cold = dir.path().join(format!("cold_{path}"));
        std::fs::create_dir_all(&cold).unwrap();
        std::fs::copy(split.join("stats.csv"), cold.join("stats.csv")).unwrap();
        run_to(&scene, &split, None, Some(saved));
        run_to(&scene, &cold, None, Some(cold_ck));
        for f in ["checkpoint.bin", "frames/particles_00000060.vtp"] {
            let x = std::fs::read(full.join(f)).unwrap();
            let y = std::fs::read(split.join(f)).unwrap();
            assert!(
                x == y,
                "{path}: {f} of the resumed run differs from the straight run"
            );
        }
        let (a, b) = (
            stats_columns(&full.join("stats.csv")),
            stats_columns(&split.join("stats.csv")),
        );
        assert_eq!(a, b, "{path}: statistics");
        assert_ne!(
            a,
            stats_columns(&cold.join("stats.csv")),
            "{path}: an emptied basis changes nothing"
        );
    }
}

/// `run --realtime` hands frames and statistics to a writer thread: its output files are
/// byte-identical to a run without the clock (frames, contact frames' index, checkpoint,
/// statistics without the wall-clock column).
#[test]
fn realtime_writer_thread_writes_what_the_inline_writer_writes() {
    use bristlecone::run::{run_scene_realtime, RunOptions, Silent};
    let dir = tempfile::tempdir().unwrap();
    let scene = realtime_file_in_motion(dir.path(), 60, "cpu");
    let inline = dir.path().join("inline");
    run_to(&scene, &inline, None, None);
    let clocked = dir.path().join("clocked");
    let opts = RunOptions {
        out_dir: Some(clocked.clone()),
        steps: None,
        resume: None,
        from: None,
        overwrite: false,
    };
    let stop = std::sync::atomic::AtomicBool::new(false);
    run_scene_realtime(shared_context(), &scene, &opts, None, &stop, &mut Silent, 0).unwrap();
    let frames = std::fs::read_dir(inline.join("frames")).unwrap().count();
    assert!(frames >= 4, "frames every 20 steps: {frames}");
    for e in std::fs::read_dir(inline.join("frames")).unwrap() {
        let name = e.unwrap().file_name();
        let a = std::fs::read(inline.join("frames").join(&name)).unwrap();
        let b = std::fs::read(clocked.join("frames").join(&name)).unwrap();
        assert!(a == b, "{name:?} differs");
    }
    for f in ["checkpoint.bin", "particles.pvd"] {
        let a = std::fs::read(inline.join(f)).unwrap();
        assert!(a == std::fs::read(clocked.join(f)).unwrap(), "{f} differs");
    }
    assert_eq!(
        stats_columns(&inline.join("stats.csv")),
        stats_columns(&clocked.join("stats.csv"))
    );
}

/// A vertical stack of `n` identical spheres exactly touching on a plane (gaps 0: every
/// normal row degenerate at the start), as a scene text.
fn stack_scene(n: usize, directions: u32, warm: bool, lemke_step: &str) -> String {
    let mut text = format!(
        "[simulation]\ndt = 1e-3\nsteps = 30\n\n[solver]\nkind = \"lemke\"\nfriction_directions = {directions}\nwarm_start = {warm}\nlemke_step = \"{lemke_step}\"\n\n[[material]]\nname = \"glass\"\ndensity = 2500.0\nfriction = 0.5\n\n[[boundary]]\nkind = \"plane\"\npoint = [0.0, 0.0, 0.0]\nnormal = [0.0, 0.0, 1.0]\n"
    );
    for k in 0..n {
        text.push_str(&format!(
            "\n[[body]]\nradius = 0.01\nposition = [0.0, 0.0, {}]\n",
            0.01 + 0.02 * k as f64
        ));
    }
    text
}

/// Degenerate stacks: every cold start of a stack of identical spheres on a plane (all gaps
/// zero, ties in every ratio test) is solved on both paths, with 4 and 8 friction directions
/// and 2 to 8 spheres, and the stack stays at rest.
#[test]
fn degenerate_stacks_are_solved_from_cold_starts() {
    let dir = tempfile::tempdir().unwrap();
    let mut pivots = 0u64;
    for path in ["cpu", "gpu"] {
        for (n, k) in [(2, 4), (4, 8), (6, 4), (8, 8)] {
            let scene = dir.path().join(format!("stack_{path}_{n}_{k}.toml"));
            std::fs::write(&scene, stack_scene(n, k, false, path)).unwrap();
            let out = dir.path().join(format!("out_{path}_{n}_{k}"));
            let r = run_to(&scene, &out, None, None);
            assert_eq!(r.steps_done, 30);
            let rows = bristlecone::io::read_stats(&r.stats).unwrap();
            assert!(rows.iter().all(|r| r.contacts as usize == n));
            pivots += rows.iter().map(|r| r.iterations as u64).sum::<u64>();
            let ke = rows.last().unwrap().kinetic_energy;
            assert!(
                ke < 1e-12,
                "{path}, {n} spheres, {k} directions: kinetic energy {ke} J"
            );
        }
    }
    assert!(pivots > 0);
}

/// The realtime scene's stack is rank-deficient (24 contacts on 5 beads): its first step is
/// solved on the perturbed LCP (`reference::lcp::LEVELS[1]`, found singular from the guessed
/// basis), recorded per step in lemke.csv, and the answer still solves the exact LCP (the
/// residual in stats.csv is against it). Later steps reuse the basis without a pivot.
#[test]
fn rank_deficient_stack_records_its_fallback_per_step() {
    let dir = tempfile::tempdir().unwrap();
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/scenes/realtime.toml");
    let r = run_to(&path, &dir.path().join("out"), Some(6), None);
    let stats = bristlecone::io::read_stats(&r.stats).unwrap();
    let lemke = std::fs::read_to_string(r.out_dir.join("lemke.csv")).unwrap();
    let rows: Vec<Vec<f64>> = lemke
        .lines()
        .skip(1)
        .map(|l| l.split(',').map(|x| x.parse().unwrap()).collect())
        .collect();
    assert_eq!(rows.len(), 6);
    for (row, st) in rows.iter().zip(&stats) {
        assert_eq!(row[0] as u64, st.step);
        assert_eq!(row[1], 144.0, "24 contacts × 6 rows");
        assert_eq!(row[2] as u32, st.iterations, "pivots");
        assert!(row[4] == 0.0 || row[4] == 1e-8, "perturbation {}", row[4]);
        assert!(st.residual < 1e-8, "exact residual {}", st.residual);
    }
    assert_eq!(rows[0][4], 1e-8, "the first step is solved perturbed");
    assert!(rows[0][2] > 0.0, "and pivots from the guessed basis");
    assert!(
        rows[3..].iter().all(|r| r[2] == 0.0),
        "at rest the basis is reused: {rows:?}"
    );
}
