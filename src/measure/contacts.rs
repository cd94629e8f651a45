//! Measurements from velocities and contacts: kinetic energy by group, coordination
//! number, force and torque on a boundary.

use glam::{DQuat, DVec3};

use crate::bodies::BodyState;

pub use crate::io::contact_forces::ContactForce;

/// Kinetic energy (translational + rotational) summed per group: `groups[i]` is the group
/// of body `i`, and the result has `max(groups) + 1` entries (J) (empty when there are no
/// bodies). Bodies with inverse mass 0 (fixed, kinematic) contribute nothing, as in the
/// per-step statistics; rotational energy is `½ ωᵦ · I ωᵦ` with `ωᵦ` the angular velocity
/// in the body frame and `I` the principal inertia from `mass_props`.
///
/// Needs `vel`, `omega`, `rot` and `mass_props` (a full download, not the kinematics-only
/// one). Panics if `groups` or those arrays do not have one entry per body.
pub fn kinetic_energy_by_group(state: &BodyState, groups: &[u32]) -> Vec<f64> {
    let n = state.len();
    assert_eq!(
        groups.len(),
        n,
        "kinetic_energy_by_group: one group per body"
    );
    for (name, len) in [
        ("vel", state.vel.len()),
        ("omega", state.omega.len()),
        ("rot", state.rot.len()),
        ("mass_props", state.mass_props.len()),
    ] {
        assert_eq!(
            len, n,
            "kinetic_energy_by_group: BodyState.{name} has {len} entries for {n} bodies"
        );
    }
    let Some(&max) = groups.iter().max() else {
        return Vec::new();
    };
    let mut out = vec![0.0; max as usize + 1];
    for i in 0..n {
        let mp = state.mass_props[i];
        if mp[3] <= 0.0 {
            continue;
        }
        let m = 1.0 / mp[3] as f64;
        let v = vec3(&state.vel[i]);
        let r = state.rot[i];
        let q = DQuat::from_xyzw(r[0] as f64, r[1] as f64, r[2] as f64, r[3] as f64);
        let wb = q.inverse() * vec3(&state.omega[i]);
        let inertia = [mp[0], mp[1], mp[2]].map(|ii| if ii > 0.0 { 1.0 / ii as f64 } else { 0.0 });
        let rot = wb.dot(DVec3::from_array(inertia) * wb);
        out[groups[i] as usize] += 0.5 * (m * v.length_squared() + rot);
    }
    out
}

fn vec3(a: &[f32; 4]) -> DVec3 {
    DVec3::new(a[0] as f64, a[1] as f64, a[2] as f64)
}

/// Mean number of distinct contacting bodies per grain (grains are bodies
/// `first_grain..n_bodies`).
///
/// Pairs are unordered and deduplicated (several contact points between the same two
/// bodies count once); self pairs are ignored. A grain–wall contact counts for the grain
/// only, a grain–grain contact for both, a wall–wall contact for neither. Every grain is in
/// the mean, rattlers (grains with no contact) included. NaN when there are no grains.
/// O(C log C) for C contacts. Panics on a body index ≥ `n_bodies`.
pub fn coordination_number(contacts: &[(u32, u32)], n_bodies: usize, first_grain: usize) -> f64 {
    let grains = n_bodies.saturating_sub(first_grain);
    if grains == 0 {
        return f64::NAN;
    }
    let mut pairs: Vec<(u32, u32)> = contacts
        .iter()
        .filter(|(a, b)| a != b)
        .map(|&(a, b)| {
            assert!(
                (a as usize) < n_bodies && (b as usize) < n_bodies,
                "coordination_number: contact ({a}, {b}) names a body ≥ n_bodies = {n_bodies}"
            );
            (a.min(b), a.max(b))
        })
        .collect();
    pairs.sort_unstable();
    pairs.dedup();
    let ends: usize = pairs
        .iter()
        .map(|&(a, b)| (a as usize >= first_grain) as usize + (b as usize >= first_grain) as usize)
        .sum();
    ends as f64 / grains as f64
}

/// Total force (N) and torque about `about` (N·m) exerted on body `boundary` by the
/// contacts that involve it: `force_on_b` where it is body B, the negative where it is
/// body A, each applied at the contact point.
pub fn boundary_wrench(
    contacts: &[ContactForce],
    boundary: u32,
    about: [f64; 3],
) -> ([f64; 3], [f64; 3]) {
    let about = DVec3::from_array(about);
    let (mut f, mut t) = (DVec3::ZERO, DVec3::ZERO);
    for c in contacts {
        let sign = match (c.body_a == boundary, c.body_b == boundary) {
            (false, true) => 1.0,
            (true, false) => -1.0,
            _ => continue,
        };
        let fc = sign * DVec3::from_array(c.force_on_b);
        f += fc;
        t += (DVec3::from_array(c.point) - about).cross(fc);
    }
    (f.to_array(), t.to_array())
}
