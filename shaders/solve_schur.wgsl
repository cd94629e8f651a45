// CCP solver, first half of the matrix-free product (N γ) with N = Dᵀ M⁻¹ D never assembled:
// per body, Δv_b = M_b⁻¹ Σ_{contacts c of b} D_cb γ_c, a gather over the per-body contact list
// (CSR, entry = contact * 2 + side), so there are no float atomics and the sum order is fixed.
// Bodies with zero inverse mass get Δv = 0. The second half (per contact D_iᵀ Δv) is in
// solve_iterate. dv[2b] = linear, dv[2b + 1] = angular (world).

@group(0) @binding(0) var<uniform> params: SolveParams;
@group(0) @binding(1) var<storage, read> contacts: array<Contact>; // chunked(4)
@group(0) @binding(2) var<storage, read> body_offsets: array<u32>;
@group(0) @binding(3) var<storage, read> body_entries: array<u32>;
@group(0) @binding(4) var<storage, read> rot: array<vec4<f32>>;
@group(0) @binding(5) var<storage, read> mass_props: array<vec4<f32>>;
@group(0) @binding(6) var<storage, read> gam: array<vec4<f32>>; // chunked(8)
@group(0) @binding(7) var<storage, read_write> dv: array<vec4<f32>>;
// Joint blocks (params.model.w > 0): the static per-body lists (offsets[0..=bodies], then
// entries block * 2 + side) and the contact count, after which the blocks are stored.
@group(0) @binding(8) var<storage, read> counts: array<u32>;
@group(0) @binding(9) var<storage, read> jcsr: array<u32>;
// The iterates' slots (common/solve_roles.wgsl).
@group(0) @binding(10) var<storage, read> scal: Scalars;

// Δv from the current iterate γ (segment 0).
@compute @workgroup_size(256)
fn gather_gamma(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let b = linear_index(gid, nwg);
    if b >= params.counts.x {
        return;
    }
    gather(b, 0u, 0.0);
}

// Δv from the trial iterate (its slot; rolling rows: the same ext slot, see `gather`).
@compute @workgroup_size(256)
fn gather_trial(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let b = linear_index(gid, nwg);
    if b >= params.counts.x {
        return;
    }
    gather(b, roles().trial, 0.0);
}

// Δv from γ − 1 (APGD's initial Lipschitz estimate, as Chrono: ‖N(γ⁰ − 1)‖ / ‖γ⁰ − 1‖).
@compute @workgroup_size(256)
fn gather_gamma_minus_one(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let b = linear_index(gid, nwg);
    if b >= params.counts.x {
        return;
    }
    gather(b, 0u, 1.0);
}
