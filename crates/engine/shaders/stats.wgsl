// Per-step statistics: kinetic energy, linear and angular momentum of dynamic bodies.
// Two-level tree reduction in a fixed order (no float atomics): bit-identical run to run.

struct StatsParams {
    bodies: u32,
    groups: u32, // partial sums: the workgroups of pass 1
    _pad0: u32,
    _pad1: u32,
}

@group(0) @binding(0) var<uniform> params: StatsParams;
@group(0) @binding(1) var<storage, read> pos: array<vec4<f32>>;
@group(0) @binding(2) var<storage, read> rot: array<vec4<f32>>;
@group(0) @binding(3) var<storage, read> vel: array<vec4<f32>>;
@group(0) @binding(4) var<storage, read> omega: array<vec4<f32>>;
@group(0) @binding(5) var<storage, read> mass_props: array<vec4<f32>>;
@group(0) @binding(6) var<storage, read> info: array<vec4<u32>>;
// Two vec4 per partial: (energy, px, py, pz), (Lx, Ly, Lz, max speed).
@group(0) @binding(7) var<storage, read_write> partials: array<vec4<f32>>;
@group(0) @binding(8) var<storage, read_write> totals: array<vec4<f32>>;

var<workgroup> sh_a: array<vec4<f32>, WG>;
var<workgroup> sh_b: array<vec4<f32>, WG>;

fn tree_reduce(lid: u32) {
    for (var s = WG / 2u; s > 0u; s >>= 1u) {
        workgroupBarrier();
        if lid < s {
            sh_a[lid] += sh_a[lid + s];
            let o = sh_b[lid + s];
            sh_b[lid] = vec4<f32>(sh_b[lid].xyz + o.xyz, max(sh_b[lid].w, o.w));
        }
    }
    workgroupBarrier();
}

@compute @workgroup_size(256)
fn reduce_bodies(
    @builtin(global_invocation_id) gid: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
    @builtin(local_invocation_index) lid: u32,
    @builtin(workgroup_id) wid: vec3<u32>,
) {
    let i = linear_index(gid, nwg);
    var a = vec4<f32>(0.0);
    var b = vec4<f32>(0.0);
    if i < params.bodies && info[i].x == MOTION_DYNAMIC {
        let mp = mass_props[i];
        let m = select(0.0, 1.0 / mp.w, mp.w > 0.0);
        let v = vel[i].xyz;
        let q = rot[i];
        let wb = quat_rotate_inv(q, omega[i].xyz);
        let inertia = select(vec3<f32>(0.0), 1.0 / mp.xyz, mp.xyz > vec3<f32>(0.0));
        let lb = inertia * wb;
        a = vec4<f32>(0.5 * (m * dot(v, v) + dot(wb, lb)), m * v);
        b = vec4<f32>(cross(pos[i].xyz, m * v) + quat_rotate(q, lb), length(v));
    }
    sh_a[lid] = a;
    sh_b[lid] = b;
    tree_reduce(lid);
    if lid == 0u {
        let g = wid.x + wid.y * nwg.x;
        partials[2u * g] = sh_a[0];
        partials[2u * g + 1u] = sh_b[0];
    }
}

@compute @workgroup_size(256)
fn reduce_partials(@builtin(local_invocation_index) lid: u32) {
    var a = vec4<f32>(0.0);
    var b = vec4<f32>(0.0);
    for (var g = lid; g < params.groups; g += WG) {
        a += partials[2u * g];
        let o = partials[2u * g + 1u];
        b = vec4<f32>(b.xyz + o.xyz, max(b.w, o.w));
    }
    sh_a[lid] = a;
    sh_b[lid] = b;
    tree_reduce(lid);
    if lid == 0u {
        totals[0] = sh_a[0];
        totals[1] = sh_b[0];
    }
}
