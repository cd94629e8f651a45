// Shared by every stage: constants, indexing, quaternion maths.
// Quaternions are vec4(x, y, z, w), unit length, rotating body frame -> world frame.

const WG: u32 = 256u;

// Body motion kinds (info.x).
const MOTION_DYNAMIC: u32 = 0u;
const MOTION_KINEMATIC: u32 = 1u;
const MOTION_FIXED: u32 = 2u;
// A grain held out of the scene (an inflow's pool, or removed by an outflow): no collision,
// no integration, no statistics, until the run loop activates it (src/run/flow.rs).
const MOTION_PARKED: u32 = 3u;

// Shape kinds (info.z). Boundaries are bodies too, so moving walls need no special case.
const SHAPE_SPHERE: u32 = 0u;
const SHAPE_PLANE: u32 = 1u;
const SHAPE_BOX_CONTAINER: u32 = 2u;
const SHAPE_SOLID_BOX: u32 = 3u;
const SHAPE_CYLINDER_CONTAINER: u32 = 4u;
const SHAPE_SOLID_CYLINDER: u32 = 5u;
const SHAPE_MESH: u32 = 6u;
// Grain (dynamic-body) shapes other than spheres; parameters in the collide `shapes` table.
const SHAPE_BOX: u32 = 7u;
const SHAPE_CAPSULE: u32 = 9u;
const SHAPE_CLUMP: u32 = 10u;
const SHAPE_CYLINDER: u32 = 12u;
const SHAPE_CONVEX: u32 = 11u;

// Flat invocation index of a (possibly 2-D) grid of WG-wide workgroups.
fn linear_index(gid: vec3<u32>, nwg: vec3<u32>) -> u32 {
    return gid.x + gid.y * nwg.x * WG;
}

// Flat invocation index across z layers too (layer after layer; `Kernel::dispatch_layers`).
fn layered_index(gid: vec3<u32>, nwg: vec3<u32>) -> u32 {
    return linear_index(gid, nwg) + gid.z * nwg.x * nwg.y * WG;
}

fn quat_mul(a: vec4<f32>, b: vec4<f32>) -> vec4<f32> {
    return vec4<f32>(a.w * b.xyz + b.w * a.xyz + cross(a.xyz, b.xyz), a.w * b.w - dot(a.xyz, b.xyz));
}

fn quat_rotate(q: vec4<f32>, v: vec3<f32>) -> vec3<f32> {
    let t = 2.0 * cross(q.xyz, v);
    return v + q.w * t + cross(q.xyz, t);
}

fn quat_rotate_inv(q: vec4<f32>, v: vec3<f32>) -> vec3<f32> {
    return quat_rotate(vec4<f32>(-q.xyz, q.w), v);
}

// Tangent basis (u, w) of a unit normal n: a deterministic, branch-light function of n
// (Duff et al. 2017, "Building an orthonormal basis, revisited"). The CPU twin is
// `reference::tangent_basis`; friction impulses are expressed in this basis.
fn tangent_u(n: vec3<f32>) -> vec3<f32> {
    let s = select(-1.0, 1.0, n.z >= 0.0);
    let a = -1.0 / (s + n.z);
    let b = n.x * n.y * a;
    return vec3<f32>(1.0 + s * n.x * n.x * a, s * b, -s * n.x);
}

fn tangent_w(n: vec3<f32>) -> vec3<f32> {
    let s = select(-1.0, 1.0, n.z >= 0.0);
    let a = -1.0 / (s + n.z);
    let b = n.x * n.y * a;
    return vec3<f32>(b, s + n.y * n.y * a, -n.y);
}

// The contact record (64 bytes): see src/collide (ContactRecord) for the field meanings.
struct Contact {
    n_gap: vec4<f32>,
    ra: vec4<f32>,
    rb: vec4<f32>,
    ids: vec4<u32>,
}
