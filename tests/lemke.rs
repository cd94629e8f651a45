//! Lemke's algorithm (`solve::lemke`) on known LCPs, the LCP of a step (`solve::lcp`) against
//! seed 004's planar examples with analytic answers, and against the interior-point oracle and
//! the GPU Jacobi/APGD solvers on small 3-D contact sets where the friction polygon and the
//! cone coincide (planar motion) or nearly do (many directions).

use bristlecone::bodies::{BodyInit, BodyState, MOTION_DYNAMIC, MOTION_FIXED, SHAPE_PLANE};
use bristlecone::gpu::{buffers, shared_context, GpuContext};
use bristlecone::reference::integrate::{to_f64, Body64};
use bristlecone::reference::oracle;
use bristlecone::solve::lcp::{apply_impulses, LcpFriction, LcpSettings, StepLcp};
use bristlecone::solve::lemke::{self, LemkeError, LemkeOptions};
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
    assert!((s.z.sum() - 1.0).abs() < 1e-12 || (s.z[2] > 0.0), "z = {}", s.z);
    // q with zeros: degenerate first bases.
    let m = DMatrix::from_row_slice(4, 4, &[
        2.0, 1.0, 0.0, 0.0, 1.0, 2.0, 1.0, 0.0, 0.0, 1.0, 2.0, 1.0, 0.0, 0.0, 1.0, 2.0,
    ]);
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

/// A warm start from the solution's own basis takes no pivot; from a nearby problem's basis
/// fewer than cold.
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
    assert!((&warm2.z - &cold2.z).amax() < 1e-9, "unique solution (M positive definite)");
    assert!(
        warm2.pivots < cold2.pivots,
        "warm {} cold {}",
        warm2.pivots,
        cold2.pivots
    );
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
    contact([0, 1, 0], [0.0, 0.0, 1.0], gap, [0.0; 3], [0.0, 0.0, -0.05], mu)
}

/// The exact friction models: the pyramid with ±u among its directions, and seed 004's form.
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
            assert!((v.x - expect).abs() < 1e-9, "{s:?} step {k}: {} vs {expect}", v.x);
            assert!(v.z.abs() < 1e-12 && v.y.abs() < 1e-12, "{s:?} step {k}: {v}");
            assert!((g[0] - m * G * DT).abs() < 1e-9 * m * G * DT, "γ_n {}", g[0]);
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
                assert!((vx - expect).abs() < 1e-9, "{s:?} F/μmg = {ratio} step {k}: {vx} vs {expect}");
                let friction = if ratio < 1.0 { -f * DT } else { -mu * m * G * DT };
                assert!((g[1] - friction).abs() < 1e-9, "{s:?}: γ_u {} vs {friction}", g[1]);
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
            assert!((v.x - expect).abs() < 1e-9, "{s:?} vx {vx}: {} vs {expect}", v.x);
        }
        // Head-on impact of two bodies without gravity: they move on together.
        let mut a = block64(1.0, DVec3::new(1.0, 0.0, 0.0));
        let mut b = block64(3.0, DVec3::new(-0.5, 0.0, 0.0));
        a.pos = DVec3::ZERO;
        b.pos = DVec3::new(0.1, 0.0, 0.0);
        let mut bodies = [a, b];
        let c = [contact([0, 1, 0], [1.0, 0.0, 0.0], 0.0, [0.05, 0.0, 0.0], [-0.05, 0.0, 0.0], 0.5)];
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
    assert!(e.to_string().contains("contacts involved: #0 (bodies 0–1)"), "{e}");
}
