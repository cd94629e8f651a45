// The slab correction's coarse problem Pᵀ A P δ = −Pᵀ u (solve_slabs_step's header), assembled
// body by body after solve_slabs_step `slab_rows` marked the fine rows:
//
// - `slab_bases`: each moving body's base, the lowest slab of its fine rows; a body's
//   window is its base … base + 2 (three slabs: more than a grain's height at slabs of 2 d);
// - `slab_windows`: a row outside the window of one of its moving bodies leaves the fine
//   set (a body larger than the slabs' height), so that every sum below sees the same rows;
// - `slab_sums`: per body S_k = Σ D_fᵀ w_f over its fine rows in window slab k;
// - `slab_prolong`: per fine row, the smoothed prolongator's row over the five slabs
//   σ − 2 … σ + 2: P = w (1 − ω E/D) in its own slab, minus ω/D Σ_bodies D_fᵀ M⁻¹ S;
// - `slab_scale` and `slab_add`: per body T_j = Σ D_fᵀ P_f,j over the seven slabs base − 2 …
//   base + 4, its terms T_jᵀ M⁻¹ T_l of Pᵀ N P, and for the rows it owns (body A, or B when A
//   does not move) E P_j P_l and −P_j u_f; the largest magnitude first, then each term added
//   as a 64-bit fixed-point integer (two u32 atomics with a carry): integer sums do not
//   depend on the order of the additions, so the coarse problem has the same bits run to
//   run without a sort.

@group(0) @binding(0) var<uniform> params: SolveParams;
@group(0) @binding(1) var<storage, read> contacts: array<Contact>; // chunked(4)
@group(0) @binding(2) var<storage, read> body_offsets: array<u32>;
@group(0) @binding(3) var<storage, read> body_entries: array<u32>;
@group(0) @binding(4) var<storage, read> rot: array<vec4<f32>>;
@group(0) @binding(5) var<storage, read> mass_props: array<vec4<f32>>;
@group(0) @binding(6) var<storage, read_write> gam: array<vec4<f32>>; // chunked(8)
@group(0) @binding(7) var<uniform> scal: Scalars;
// The buffer after the coarse accumulators (V0 = 0 here) and the accumulators.
@group(0) @binding(8) var<storage, read_write> slab_words: array<vec4<u32>>;
@group(0) @binding(9) var<storage, read_write> coarse: array<atomic<u32>>;
@group(0) @binding(10) var<uniform> sp: SlabParams;

const V0: u32 = 0u;

fn row_slab(i: u32) -> u32 {
    return slab_words[slab_row_at(i)].x;
}

fn body_base(b: u32) -> i32 {
    return bitcast<i32>(slab_words[slab_body_at(b)].x);
}

@compute @workgroup_size(256)
fn slab_bases(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let b = linear_index(gid, nwg);
    if b >= params.bodies {
        return;
    }
    var base = NO_SLAB;
    if moves(b) {
        let end = body_offsets[b + 1u];
        var lowest = bitcast<i32>(NO_SLAB);
        for (var k = body_offsets[b]; k < end; k++) {
            let s = row_slab(body_entries[k] >> 1u);
            if s != NO_SLAB {
                lowest = min(lowest, bitcast<i32>(s));
            }
        }
        base = bitcast<u32>(lowest);
    }
    slab_words[slab_body_at(b)] = vec4<u32>(base, 0u, 0u, 0u);
    if base != NO_SLAB {
        let biased = u32(bitcast<i32>(base) + SLAB_BIAS);
        atomicMin(&coarse[COARSE_MIN], biased);
        atomicMax(&coarse[COARSE_MAX], biased);
    }
}

// Whether slab s lies in moving body b's window (a world or fixed body has none to keep).
fn in_window(b: u32, s: i32) -> bool {
    if !moves(b) {
        return true;
    }
    let base = body_base(b);
    return s >= base && s <= base + 2;
}

@compute @workgroup_size(256)
fn slab_windows(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = linear_index(gid, nwg);
    if i >= scal.n_contacts {
        return;
    }
    let s = row_slab(i);
    if s == NO_SLAB {
        return;
    }
    let c = contacts_at(i);
    let k = bitcast<i32>(s);
    if !in_window(c.ids.x, k) || !in_window(c.ids.y, k) {
        slab_words[slab_row_at(i)].x = NO_SLAB;
    }
}

// Body b's side of contact c's normal row: (linear, angular) Jacobian, side A when `a`.
fn normal_jacobian(c: Contact, a: bool) -> array<vec3<f32>, 2> {
    let n = c.n_gap.xyz;
    if a {
        return array<vec3<f32>, 2>(-n, -cross(c.ra.xyz, n));
    }
    return array<vec3<f32>, 2>(n, cross(c.rb.xyz, n));
}

@compute @workgroup_size(256)
fn slab_sums(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let b = linear_index(gid, nwg);
    if b >= params.bodies || !moves(b) {
        return;
    }
    let base = body_base(b);
    var lin = array<vec3<f32>, 3>(vec3<f32>(0.0), vec3<f32>(0.0), vec3<f32>(0.0));
    var ang = array<vec3<f32>, 3>(vec3<f32>(0.0), vec3<f32>(0.0), vec3<f32>(0.0));
    let end = body_offsets[b + 1u];
    for (var k = body_offsets[b]; k < end; k++) {
        let e = body_entries[k];
        let i = e >> 1u;
        let s = row_slab(i);
        if s == NO_SLAB {
            continue;
        }
        let row = slab_get(slab_row_at(i));
        let j = u32(bitcast<i32>(s) - base);
        let jac = normal_jacobian(contacts_at(i), (e & 1u) == 0u);
        lin[j] += row.y * jac[0];
        ang[j] += row.y * jac[1];
    }
    let at = slab_body_at(b);
    for (var j = 0u; j < 3u; j++) {
        slab_put(at + 1u + 2u * j, vec4<f32>(lin[j], 0.0));
        slab_put(at + 2u + 2u * j, vec4<f32>(ang[j], 0.0));
    }
}

// D_f,bᵀ-side product J·M⁻¹S of body b's window slab j with contact c's normal row.
fn side_product(b: u32, j: u32, jac: array<vec3<f32>, 2>) -> f32 {
    let at = slab_body_at(b);
    let l = slab_get(at + 1u + 2u * j).xyz;
    let a = slab_get(at + 2u + 2u * j).xyz;
    return mass_props[b].w * dot(jac[0], l) + dot(jac[1], inv_inertia(b, a));
}

@compute @workgroup_size(256)
fn slab_prolong(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = linear_index(gid, nwg);
    if i >= scal.n_contacts {
        return;
    }
    let at = slab_row_at(i);
    let row = slab_get(at);
    let s = row_slab(i);
    if s == NO_SLAB {
        return;
    }
    let sigma = bitcast<i32>(s);
    let c = contacts_at(i);
    let d = row.z;
    let om = sp.omega / d;
    var p = array<f32, 5>(0.0, 0.0, row.y * (1.0 - om * slab_compliance(i).x), 0.0, 0.0);
    for (var side = 0u; side < 2u; side++) {
        let b = select(c.ids.y, c.ids.x, side == 0u);
        if !moves(b) {
            continue;
        }
        let jac = normal_jacobian(c, side == 0u);
        let base = body_base(b);
        for (var j = 0u; j < 3u; j++) {
            // Window slab j is column base + j = σ − 2 + k.
            let k = base + i32(j) - sigma + 2;
            if k >= 0 && k < 5 {
                p[u32(k)] -= om * side_product(b, j, jac);
            }
        }
    }
    slab_put(at + 1u, vec4<f32>(p[0], p[1], p[2], p[3]));
    slab_put(at + 2u, vec4<f32>(p[4], 0.0, 0.0, 0.0));
}

// Body b's terms of the coarse problem over its seven window slabs: the 28 entries (j, l),
// j ≤ l, of the band in row order, then the 7 of the right-hand side.
fn contributions(b: u32) -> array<f32, 35> {
    var out: array<f32, 35>;
    let base = body_base(b);
    var tl: array<vec3<f32>, 7>;
    var ta: array<vec3<f32>, 7>;
    let end = body_offsets[b + 1u];
    for (var k = body_offsets[b]; k < end; k++) {
        let e = body_entries[k];
        let i = e >> 1u;
        let at = slab_row_at(i);
        let row = slab_get(at);
        let s = row_slab(i);
        if s == NO_SLAB {
            continue;
        }
        let c = contacts_at(i);
        let side_a = (e & 1u) == 0u;
        let jac = normal_jacobian(c, side_a);
        let q = slab_get(at + 1u);
        let p = array<f32, 5>(q.x, q.y, q.z, q.w, slab_get(at + 2u).x);
        let first = u32(bitcast<i32>(s) - base);
        for (var m = 0u; m < 5u; m++) {
            tl[first + m] += p[m] * jac[0];
            ta[first + m] += p[m] * jac[1];
        }
        // The row's own terms, once: by body A, or by B when A does not move.
        let owner = select(c.ids.y, c.ids.x, moves(c.ids.x));
        if owner == b && side_a == (owner == c.ids.x) {
            let ec = slab_compliance(i).x;
            for (var m = 0u; m < 5u; m++) {
                out[28u + first + m] -= p[m] * row.w;
                for (var n = m; n < 5u; n++) {
                    out[entry(first + m, first + n)] += ec * p[m] * p[n];
                }
            }
        }
    }
    let m = mass_props[b].w;
    for (var j = 0u; j < 7u; j++) {
        let ia = inv_inertia(b, ta[j]);
        for (var l = j; l < 7u; l++) {
            out[entry(j, l)] += m * dot(tl[l], tl[j]) + dot(ta[l], ia);
        }
    }
    return out;
}

// Index of entry (j, l), j ≤ l < 7, in row order.
fn entry(j: u32, l: u32) -> u32 {
    return j * 7u - j * (j - 1u) / 2u + (l - j);
}

@compute @workgroup_size(256)
fn slab_scale(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let b = linear_index(gid, nwg);
    if b >= params.bodies || !moves(b) || body_base(b) == bitcast<i32>(NO_SLAB) {
        return;
    }
    let t = contributions(b);
    var largest = vec2<f32>(0.0);
    for (var k = 0u; k < 35u; k++) {
        let m = abs(t[k]);
        if k < 28u {
            largest.x = max(largest.x, m);
        } else {
            largest.y = max(largest.y, m);
        }
    }
    // Finite, non-negative f32 bits order as the values do.
    let bits = bitcast<vec2<u32>>(min(largest, vec2<f32>(3.0e38)));
    atomicMax(&coarse[COARSE_MAGNITUDE], bits.x);
    atomicMax(&coarse[COARSE_MAGNITUDE_RHS], bits.y);
}

@compute @workgroup_size(256)
fn slab_add(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let b = linear_index(gid, nwg);
    if b >= params.bodies || !moves(b) || body_base(b) == bitcast<i32>(NO_SLAB) {
        return;
    }
    let lo = i32(atomicLoad(&coarse[COARSE_MIN])) - SLAB_BIAS;
    let hi = i32(atomicLoad(&coarse[COARSE_MAX])) - SLAB_BIAS;
    if u32(hi - lo) + SLAB_WINDOW > SLAB_MAX {
        return;
    }
    let scale = fixed_scale(bitcast<f32>(atomicLoad(&coarse[COARSE_MAGNITUDE])));
    let scale_rhs = fixed_scale(bitcast<f32>(atomicLoad(&coarse[COARSE_MAGNITUDE_RHS])));
    let t = contributions(b);
    let r0 = u32(body_base(b) - lo);
    for (var j = 0u; j < 7u; j++) {
        for (var l = j; l < 7u; l++) {
            add_fixed(r0 + j, l - j, t[entry(j, l)] * scale);
        }
        add_fixed(r0 + j, 7u, t[28u + j] * scale_rhs);
    }
}

// Adds round(x) to band entry (s, k) as a two's-complement 64-bit integer.
fn add_fixed(s: u32, k: u32, x: f32) {
    let v = round(x);
    if v == 0.0 {
        return;
    }
    let a = abs(v);
    let h = floor(a / 4294967296.0);
    var hi = u32(h);
    var lo = u32(a - h * 4294967296.0);
    if v < 0.0 {
        hi = ~hi + select(0u, 1u, lo == 0u);
        lo = ~lo + 1u;
    }
    let at = COARSE_BAND + 2u * (8u * s + k);
    let old = atomicAdd(&coarse[at], lo);
    let carry = select(0u, 1u, old > 0xffffffffu - lo);
    atomicAdd(&coarse[at + 1u], hi + carry);
}
