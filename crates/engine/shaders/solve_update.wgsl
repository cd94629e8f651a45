// CCP solver, velocity update: v⁺ = v* + M⁻¹ D γ for dynamic bodies, with Δv = M⁻¹ D γ gathered
// by solve_schur (gather_gamma) from the returned impulses.

@group(0) @binding(0) var<uniform> params: SolveParams;
@group(0) @binding(1) var<storage, read> dv: array<vec4<f32>>;
@group(0) @binding(2) var<storage, read_write> vel: array<vec4<f32>>;
@group(0) @binding(3) var<storage, read_write> omega: array<vec4<f32>>;
@group(0) @binding(4) var<storage, read> info: array<vec4<u32>>;

@compute @workgroup_size(256)
fn apply_impulses(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let b = linear_index(gid, nwg);
    if b >= params.bodies || info[b].x != MOTION_DYNAMIC {
        return;
    }
    vel[b] = vec4<f32>(vel[b].xyz + dv[2u * b].xyz, vel[b].w);
    omega[b] = vec4<f32>(omega[b].xyz + dv[2u * b + 1u].xyz, omega[b].w);
}
