//! Plain CPU (f64) twins of the GPU stages: the oracles the tests compare against.

pub mod block_gs;
pub mod boxes;
pub mod capsule;
pub mod clumps;
pub mod collide;
pub mod convex;
pub mod cylinder;
pub mod depth;
pub mod integrate;
pub mod joints;
pub mod oracle;
pub mod polytope;
pub mod solve;
pub mod support;

use glam::DVec3;

/// Tangent basis (u, w) of a unit normal, the same formula as `tangent_u`/`tangent_w` in
/// `shaders/prelude.wgsl` (Duff et al. 2017).
pub fn tangent_basis(n: DVec3) -> (DVec3, DVec3) {
    let s = if n.z >= 0.0 { 1.0 } else { -1.0 };
    let a = -1.0 / (s + n.z);
    let b = n.x * n.y * a;
    (
        DVec3::new(1.0 + s * n.x * n.x * a, s * b, -s * n.x),
        DVec3::new(b, s + n.y * n.y * a, -n.y),
    )
}
