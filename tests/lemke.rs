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
        let s = lemke::solve(&m, &q, None, &opts()).unwrap();
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
