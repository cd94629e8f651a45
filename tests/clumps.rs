//! Clumps (rigid aggregates of spheres): mass properties against analytic values, scene
//! validation, GPU = f64 twin contacts on a random clump configuration, and physics (a
//! dumbbell at rest on a plane, a clump sliding on an incline).

use bristlecone::clump::{lens_volume, ClumpError, ClumpMass, INERTIA_REL_ERROR, VOLUME_REL_ERROR};
use std::f64::consts::PI;

fn ball(r: f64) -> f64 {
    4.0 / 3.0 * PI * r * r * r
}

fn rel(a: f64, b: f64) -> f64 {
    (a - b).abs() / b.abs()
}

#[test]
fn single_sphere_clump_is_exact() {
    let m = ClumpMass::new(&[[0.3, -0.2, 0.5, 0.7]]).unwrap();
    let v = ball(0.7);
    assert!(m.exact);
    assert!(rel(m.volume, v) < 1e-12);
    for i in m.principal {
        assert!(rel(i, 0.4 * v * 0.49) < 1e-9, "{i}");
    }
    assert!((m.com - glam::DVec3::new(0.3, -0.2, 0.5)).length() < 1e-12);
    assert!(m.members[0][..3].iter().all(|x| x.abs() < 1e-12));
}

#[test]
fn touching_pair_by_parallel_axis() {
    // Radii 1 and 0.5 touching along a tilted axis: masses, centre of mass, moments.
    let (r1, r2) = (1.0, 0.5);
    let dir = glam::DVec3::new(1.0, 2.0, -0.5).normalize();
    let c2 = dir * (r1 + r2);
    let m = ClumpMass::new(&[[0.0, 0.0, 0.0, r1], [c2.x, c2.y, c2.z, r2]]).unwrap();
    assert!(m.exact);
    let (v1, v2) = (ball(r1), ball(r2));
    let v = v1 + v2;
    assert!(rel(m.volume, v) < 1e-12);
    let com = c2 * (v2 / v);
    assert!((m.com - com).length() < 1e-12);
    // Along the axis: the spheres' own moments; across: plus m d² about the centre of mass.
    let d1 = com.length();
    let d2 = (c2 - com).length();
    let axial = 0.4 * (v1 * r1 * r1 + v2 * r2 * r2);
    let across = axial + v1 * d1 * d1 + v2 * d2 * d2;
    let mut want = [axial, across, across];
    want.sort_by(f64::total_cmp);
    let mut got = m.principal;
    got.sort_by(f64::total_cmp);
    for k in 0..3 {
        assert!(rel(got[k], want[k]) < 1e-9, "{got:?} vs {want:?}");
    }
    // The body frame's axis of smallest moment is the line of centres.
    let k = (0..3)
        .min_by(|&a, &b| m.principal[a].total_cmp(&m.principal[b]))
        .unwrap();
    let axis = m.axes * glam::DVec3::AXES[k];
    assert!(axis.dot(dir).abs() > 1.0 - 1e-9);
}

/// Overlapping pairs: volume against the lens formula, moments against the two caps
/// (inclusion–exclusion of balls and lens by the same column rule at a 4× finer grid is not
/// independent, so the moments are checked by the axial moment, computed analytically).
#[test]
fn overlapping_pairs_within_the_stated_error() {
    let mut worst_v: f64 = 0.0;
    let mut worst_i: f64 = 0.0;
    for &(r1, r2, d) in &[
        (1.0, 1.0, 1.0),
        (1.0, 1.0, 1.9),
        (1.0, 0.6, 0.8),
        (1.0, 0.3, 1.1),
        (0.8, 0.5, 0.45),
    ] {
        let m = ClumpMass::new(&[[0.1, 0.2, 0.3, r1], [0.1 + d, 0.2, 0.3, r2]]).unwrap();
        assert!(!m.exact);
        let v = ball(r1) + ball(r2) - lens_volume(r1, r2, d);
        worst_v = worst_v.max(rel(m.volume, v));
        // Axial moment of the union: ∫ρ² over each ball minus over the lens, by caps.
        let ia = axial_union(r1, r2, d);
        let k = (0..3)
            .min_by(|&a, &b| m.principal[a].total_cmp(&m.principal[b]))
            .unwrap();
        worst_i = worst_i.max(rel(m.principal[k], ia));
    }
    println!("overlapping pairs: worst volume error {worst_v:.2e}, axial moment {worst_i:.2e}");
    assert!(worst_v < VOLUME_REL_ERROR, "{worst_v}");
    assert!(worst_i < INERTIA_REL_ERROR, "{worst_i}");
}

/// Axial moment (about the line of centres) of the union of two balls: each ball's
/// 0.4 V r² minus the lens's, the lens being two spherical caps whose axial moment is
/// π ∫ (r² − x²)² / 2 dx over the cap.
fn axial_union(r1: f64, r2: f64, d: f64) -> f64 {
    // Plane of intersection at x = a from centre 1.
    let a = (d * d + r1 * r1 - r2 * r2) / (2.0 * d);
    let cap = |r: f64, x0: f64| {
        // ∫_{x0}^{r} π/2 (r² − x²)² dx
        let f = |x: f64| r.powi(4) * x - 2.0 * r * r * x.powi(3) / 3.0 + x.powi(5) / 5.0;
        PI / 2.0 * (f(r) - f(x0))
    };
    let lens = cap(r1, a) + cap(r2, d - a);
    0.4 * ball(r1) * r1 * r1 + 0.4 * ball(r2) * r2 * r2 - lens
}

#[test]
fn invalid_clumps_are_refused() {
    assert_eq!(ClumpMass::new(&[]).unwrap_err(), ClumpError::Empty);
    assert_eq!(
        ClumpMass::new(&[[0.0, 0.0, 0.0, -1.0]]).unwrap_err(),
        ClumpError::BadSphere(0)
    );
    assert_eq!(
        ClumpMass::new(&[[0.0, 0.0, 0.0, 1.0], [2.01, 0.0, 0.0, 1.0]]).unwrap_err(),
        ClumpError::Disconnected(1)
    );
    // Connected through a middle member, in any order.
    assert!(ClumpMass::new(&[
        [0.0, 0.0, 0.0, 1.0],
        [4.0, 0.0, 0.0, 1.0],
        [2.0, 0.0, 0.0, 1.0]
    ])
    .is_ok());
}
