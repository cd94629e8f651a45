// Time integration, half-implicit symplectic Euler (Negrut et al. 2017, eq. 5), split around the
// contact solve: `free_velocity` gives v* before collision/solve, `update_positions`
// moves bodies with the final v+.

struct StepParams {
    gravity: vec3<f32>,
    dt: f32,
    bodies: u32,
    first_grain: u32, // grains (wrapped into a periodic cell) are the bodies from this one on
    _pad0: u32,
    _pad1: u32,
    // Periodic cell (src/collide/periodic.rs): origin, and the period per axis (0 = none).
    cell_origin: vec4<f32>,
    cell_period: vec4<f32>,
    // Lees–Edwards shear (zero without): xyz = the flow axis, w = γ̇ L_g; xyz = the gradient
    // axis, w = the offset δ at the end of this step.
    shear_flow: vec4<f32>,
    shear_gradient: vec4<f32>,
}

@group(0) @binding(0) var<uniform> params: StepParams;
@group(0) @binding(1) var<storage, read_write> pos: array<vec4<f32>>;   // xyz, w = bounding radius
@group(0) @binding(2) var<storage, read_write> rot: array<vec4<f32>>;   // unit quaternion
@group(0) @binding(3) var<storage, read_write> vel: array<vec4<f32>>;   // linear, world
@group(0) @binding(4) var<storage, read_write> omega: array<vec4<f32>>; // angular, world
@group(0) @binding(5) var<storage, read> mass_props: array<vec4<f32>>;  // principal inverse inertia xyz (body frame), w = inverse mass
@group(0) @binding(6) var<storage, read> force: array<vec4<f32>>;       // applied force, world
@group(0) @binding(7) var<storage, read> torque: array<vec4<f32>>;      // applied torque, world
@group(0) @binding(8) var<storage, read> info: array<vec4<u32>>;        // motion, material, shape kind, shape index

const GYRO_ITERATIONS: u32 = 6u;

// v* = v + dt M^-1 (f_ext - gyroscopic). Kinematic and fixed bodies keep their velocity.
@compute @workgroup_size(256)
fn free_velocity(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = linear_index(gid, nwg);
    if i >= params.bodies || info[i].x != MOTION_DYNAMIC {
        return;
    }
    let dt = params.dt;
    let mp = mass_props[i];
    vel[i] = vec4<f32>(vel[i].xyz + dt * (params.gravity + mp.w * force[i].xyz), 0.0);

    // Angular part in the body frame, where the inertia is diagonal. The gyroscopic term is
    // taken at the midpoint (implicit midpoint rule, solved by fixed-point iteration): it
    // conserves kinetic energy and |L| of a torque-free body, where explicit Euler gains
    // energy every step. Isotropic bodies (spheres) give cross(w, I w) = 0 exactly.
    // Rotating with an exactly normalised q keeps f32 rounding from biasing |w| each step.
    let q = normalize(rot[i]);
    let w0 = quat_rotate_inv(q, omega[i].xyz);
    let inv_i = mp.xyz;
    let w_forced = w0 + dt * inv_i * quat_rotate_inv(q, torque[i].xyz);
    var w = w_forced;
    if all(inv_i > vec3<f32>(0.0)) {
        let inertia = 1.0 / inv_i;
        for (var k = 0u; k < GYRO_ITERATIONS; k++) {
            let wm = 0.5 * (w0 + w);
            w = w_forced - dt * inv_i * cross(wm, inertia * wm);
        }
    }
    omega[i] = vec4<f32>(quat_rotate(q, w), 0.0);
}

// x wrapped into the periodic cell along its periodic axes (f64 twin:
// `collide::PeriodicCell::wrap`); a step moves a grain far less than a period, so one shift
// of whole periods, then a guard against rounding onto the upper face.
fn wrap_into_cell(x: vec3<f32>) -> vec3<f32> {
    let o = params.cell_origin.xyz;
    let l = params.cell_period.xyz;
    let periodic = l > vec3<f32>(0.0);
    let k = floor((x - o) / select(vec3<f32>(1.0), l, periodic));
    var w = x - select(vec3<f32>(0.0), k * l, periodic);
    w = select(w, o, periodic & (w >= o + l));
    return w;
}

// A grain that left through a gradient face of a sheared cell (f64 twin:
// `collide::PeriodicCell::wrap_sheared`) comes back through the other one where its image
// was: moved by ∓(L_g along the gradient, δ along the flow), its flow velocity changed by
// ∓γ̇ L_g, so its velocity relative to the shear profile is kept (Lees & Edwards 1972).
// Returns k, the faces crossed (0: none, and always without shear).
fn faces_crossed(x: vec3<f32>) -> f32 {
    let eg = params.shear_gradient.xyz;
    let lg = dot(params.cell_period.xyz, eg);
    return select(0.0, floor(dot(x - params.cell_origin.xyz, eg) / lg), lg > 0.0);
}

// x+ = x + dt v+, q+ = normalize(q + dt/2 (w+, 0) q). Fixed and parked bodies do not move.
@compute @workgroup_size(256)
fn update_positions(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = linear_index(gid, nwg);
    if i >= params.bodies || info[i].x == MOTION_FIXED || info[i].x == MOTION_PARKED {
        return;
    }
    let dt = params.dt;
    let p = pos[i];
    var x = p.xyz + dt * vel[i].xyz;
    if i >= params.first_grain {
        let k = faces_crossed(x);
        if k != 0.0 {
            let lg = dot(params.cell_period.xyz, params.shear_gradient.xyz);
            let ef = params.shear_flow.xyz;
            x -= k * (lg * params.shear_gradient.xyz + params.shear_gradient.w * ef);
            vel[i] = vec4<f32>(vel[i].xyz - k * params.shear_flow.w * ef, vel[i].w);
        }
        x = wrap_into_cell(x);
    }
    pos[i] = vec4<f32>(x, p.w);
    let q = rot[i];
    rot[i] = normalize(q + 0.5 * dt * quat_mul(vec4<f32>(omega[i].xyz, 0.0), q));
}
