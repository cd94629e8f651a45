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
// Joint blocks (params.joint_blocks > 0): the static per-body lists (offsets[0..=bodies], then
// entries block * 2 + side) and the contact count, after which the blocks are stored.
@group(0) @binding(8) var<storage, read> counts: array<u32>;
@group(0) @binding(9) var<storage, read> jcsr: array<u32>;
// The iterates' slots (common/solve_roles.wgsl); uniform as in solve_iterate.
@group(0) @binding(10) var<uniform> scal: Scalars;
// The saved list's per-body rows (written by save_rows, read by the next step's assembly).
@group(0) @binding(11) var<storage, read_write> warm_rows: array<vec2<u32>>;
// The contact records again, as rows of 16 B: with ARM_FROM_ROW a gather entry loads only
// its side's lever arm (row 1 for A, 2 for B) instead of both and a select — on lavapipe
// every load is a loop over the SIMD lanes, so one load fewer per entry is a fifth of the
// entry's loads.
@group(0) @binding(12) var<storage, read> contact_rows: array<vec4<f32>>; // chunked(4)
// On a GPU the record's two arms share its cache lines, and a second chunked view adds a
// select over its live chunks to every entry; there the arm comes from the record
// (`ARM_FROM_ROW` false, common/solve.wgsl).

// Lever arm of side A (else B) of contact ci (common/solve_gather.wgsl).
fn lever_arm(ci: u32, c: Contact, side_a: bool) -> vec3<f32> {
    if ARM_FROM_ROW {
        return contact_rows_at(4u * ci + select(2u, 1u, side_a)).xyz;
    }
    return select(c.rb.xyz, c.ra.xyz, side_a);
}

// Δv from the current iterate γ (segment 0).
@compute @workgroup_size(256)
fn gather_gamma(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let b = linear_index(gid, nwg);
    if b >= params.bodies {
        return;
    }
    gather(b, 0u, 0.0);
}

// Δv from the trial iterate (its slot; rolling rows: the same ext slot, see `gather`).
@compute @workgroup_size(256)
fn gather_trial(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let b = linear_index(gid, nwg);
    if b >= params.bodies {
        return;
    }
    gather(b, roles().trial, 0.0);
}

// Δv from γ − 1 (APGD's initial Lipschitz estimate, as Chrono: ‖N(γ⁰ − 1)‖ / ‖γ⁰ − 1‖).
@compute @workgroup_size(256)
fn gather_gamma_minus_one(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let b = linear_index(gid, nwg);
    if b >= params.bodies {
        return;
    }
    gather(b, 0u, 1.0);
}

// After save_warm (the keys (B, feature) by contact): body b's row of the saved list, (first
// contact with A = b, count). collide_csr puts a body's side-A entries (even) at the end of
// its row, after its side-B ones (odd), so a binary search for the first even entry finds
// them without reading a record. Row `bodies` holds the joint blocks (A = WORLD), saved
// after the contacts.
@compute @workgroup_size(256)
fn save_rows(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let b = linear_index(gid, nwg);
    let n = params.bodies;
    if b > n {
        return;
    }
    if b == n {
        let first = min(counts[0], params.capacity);
        warm_rows[n] = vec2<u32>(first, max(scal.n_contacts, first) - first);
        return;
    }
    let end = body_offsets[b + 1u];
    var lo = body_offsets[b];
    var hi = end;
    while lo < hi {
        let mid = (lo + hi) / 2u;
        if (body_entries[mid] & 1u) == 1u {
            lo = mid + 1u;
        } else {
            hi = mid;
        }
    }
    var row = vec2<u32>(0u, 0u);
    if lo < end {
        row = vec2<u32>(body_entries[lo] >> 1u, end - lo);
    }
    warm_rows[b] = row;
}
