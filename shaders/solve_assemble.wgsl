// CCP solver, assembly (DESIGN §2): per contact the right-hand side
//   p_i = [max(Φ/dt, −v_recover), 0, 0] + D_iᵀ v*
// and the diagonal scaling η_i = 3 / trace(B_ii), stored together as rhs[i] = (p, η), where
// B_ii is N_ii with each body's inverse mass and inertia multiplied by its number of contacts
// n_b. Since (Σ_c x_c)ᵀ A (Σ_c x_c) ≤ n Σ_c x_cᵀ A x_c, N ≤ blockdiag(B_ii) ≤ diag(3/η_i), so
// projected Jacobi with step ω η_i converges for every ω < 2/3 whatever the contact graph
// (Chrono's 3/trace(N_ii) diverges with ω = 0.3 once a body has more than ~6 contacts), and
// APGD run in the metric diag(1/η) has a Lipschitz constant L ≤ 3 independent of masses,
// sizes and coordination (η is a per-contact scalar, so the cone projection is unchanged).
// the starting impulse γ⁰ (warm start: the previous step's impulse of the contact with the
// same key (A, B, feature), found by binary search in the previous step's sorted key list);
// and, at the end of a solve, the copy of this step's keys and impulses for the next one.
// CPU twin: `reference::solve`.

// Segments of `gam` (each `capacity` long).
const SEG_GAMMA: u32 = 0u;
const SEG_Y: u32 = 1u;
const SEG_TRIAL: u32 = 2u;
const SEG_BEST: u32 = 3u;
// The row layout's aux vector (src/solve/rows): x = assembled p_n (before the exact cone's
// correction), y = the correction s = μ‖u_T‖ (0 until the first outer pass).
const SEG_AUX: u32 = 4u;

@group(0) @binding(0) var<uniform> params: SolveParams;
@group(0) @binding(1) var<storage, read> contacts: array<Contact>;
@group(0) @binding(2) var<storage, read> counts: array<u32>;
@group(0) @binding(3) var<storage, read> rot: array<vec4<f32>>;
@group(0) @binding(4) var<storage, read> mass_props: array<vec4<f32>>;
@group(0) @binding(5) var<storage, read> vel: array<vec4<f32>>;
@group(0) @binding(6) var<storage, read> omega: array<vec4<f32>>;
@group(0) @binding(7) var<storage, read_write> gam: array<vec4<f32>>;
@group(0) @binding(8) var<storage, read_write> rhs: array<vec4<f32>>;
// prev[0].x = number of saved contacts; prev[1 + k] = key k (A, B, feature, 0);
// prev[1 + capacity + k] = impulse k (f32 bits).
@group(0) @binding(9) var<storage, read_write> prev: array<vec4<u32>>;
// Per-body contact lists (CSR offsets): n_b = offsets[b + 1] − offsets[b].
@group(0) @binding(10) var<storage, read> body_offsets: array<u32>;
// Per material: (model id, stiffness k, damping c, 0) (src/solve/rows `MaterialRow`).
@group(0) @binding(11) var<storage, read> models: array<vec4<f32>>;
// Joint blocks per body (src/joints): offsets[0..=bodies], then entries (block * 2 + side).
// Read only when the step has joint blocks (params.model.z).
@group(0) @binding(12) var<storage, read> jcsr: array<u32>;

const MODEL_COULOMB: u32 = 0u;
const MODEL_COMPLIANT: u32 = 1u;
const MODEL_BRISTLE: u32 = 2u;
const MODEL_HUNT_CROSSLEY: u32 = 3u;

fn series(x: f32, y: f32) -> f32 {
    return select(0.0, x * y / (x + y), x + y > 0.0);
}

// The mixed model of the contact's material pair (rows::pair_model): (id, k, c, 0).
fn pair_model(mats: u32) -> vec4<f32> {
    let nm = params.model.y;
    let a = models[min(mats >> 16u, nm - 1u)];
    let b = models[min(mats & 0xffffu, nm - 1u)];
    let ia = u32(a.x);
    let ib = u32(b.x);
    if ia == ib && ia != MODEL_COULOMB {
        // Hunt–Crossley: α and n by min; otherwise dampings in series.
        let c = select(series(a.z, b.z), min(a.z, b.z), ia == MODEL_HUNT_CROSSLEY);
        return vec4<f32>(a.x, series(a.y, b.y), c, min(a.w, b.w));
    }
    if ib == MODEL_COULOMB {
        return a;
    }
    if ia == MODEL_COULOMB {
        return b;
    }
    return vec4<f32>(0.0);
}

// (E_n, normal stabilisation) of a contact with gap phi (rows::normal_rows): Kelvin–Voigt
// gives v_n⁺ + E_n γ_n + Φ/(dt + c/k) = 0 with E_n = 1/(dt² k + dt c); Hunt–Crossley,
// linearised at δ₀ = −Φ (F₀ = k δ₀ⁿ, k₁ = n k δ₀ⁿ⁻¹, c₁ = 3/2 α k δ₀ⁿ), E_n = 1/(dt² k₁ + dt c₁)
// and offset −F₀/(dt k₁ + c₁), E_n < 0 marking "no force this step"; open contacts and
// Coulomb keep max(Φ/dt, −v_recover).
fn normal_rows(m: vec4<f32>, phi: f32, dt: f32) -> vec2<f32> {
    let id = u32(m.x);
    if id == MODEL_HUNT_CROSSLEY && m.y > 0.0 {
        if phi > 0.0 {
            return vec2<f32>(-1.0, 0.0); // open: no force before touching
        }
        let d0 = -phi;
        var f0 = 0.0;
        var k1 = 0.0;
        if d0 > 0.0 {
            f0 = m.y * pow(d0, m.w);
            k1 = m.w * m.y * pow(d0, m.w - 1.0);
        } else if m.w == 1.0 {
            k1 = m.y;
        }
        let c1 = 1.5 * m.z * f0;
        let s = dt * k1 + c1;
        if s <= 0.0 {
            return vec2<f32>(-1.0, 0.0);
        }
        return vec2<f32>(1.0 / (dt * s), -f0 / s);
    }
    if id != MODEL_COMPLIANT || m.y <= 0.0 {
        return vec2<f32>(0.0, max(phi / dt, -params.coef.z));
    }
    let e = 1.0 / (dt * dt * m.y + dt * m.z);
    return vec2<f32>(e, select(phi / (dt + m.z / m.y), phi / dt, phi > 0.0));
}

// Bristle: E_T = 1/(k_b dt²) (rows::tangent_compliance).
fn tangent_compliance(m: vec4<f32>, dt: f32) -> f32 {
    return select(0.0, 1.0 / (m.y * dt * dt), u32(m.x) == MODEL_BRISTLE && m.y > 0.0);
}

// Constraints on body b (contacts, and joint blocks when there are any): the n_b of the bound.
fn contact_count(b: u32) -> f32 {
    var n = body_offsets[b + 1u] - body_offsets[b];
    if params.model.z != 0u {
        n += jcsr[b + 1u] - jcsr[b];
    }
    return f32(max(n, 1u));
}

// Constraints: the contacts, then the joint blocks (params.model.z).
fn n_contacts() -> u32 {
    return min(counts[0] + params.model.z, params.counts.y);
}

// Projection onto K = { γ_n ≥ 0, ‖(γ_u, γ_w)‖ ≤ μ γ_n } (the three cases of the second-order cone).
// World inverse inertia times v: R diag(I⁻¹) Rᵀ v.
fn inv_inertia(b: u32, v: vec3<f32>) -> vec3<f32> {
    let q = rot[b];
    return quat_rotate(q, mass_props[b].xyz * quat_rotate_inv(q, v));
}

// Σ_j (r×t_j)ᵀ I⁻¹ (r×t_j) + 3 m⁻¹: body b's share of trace(N_ii).
fn trace_share(b: u32, r: vec3<f32>, n: vec3<f32>, u: vec3<f32>, w: vec3<f32>) -> f32 {
    let cn = cross(r, n);
    let cu = cross(r, u);
    let cw = cross(r, w);
    return 3.0 * mass_props[b].w + dot(cn, inv_inertia(b, cn)) + dot(cu, inv_inertia(b, cu))
        + dot(cw, inv_inertia(b, cw));
}

// Lexicographic comparison of (A, B, feature): −1, 0, 1.
fn key_cmp(a: vec3<u32>, b: vec3<u32>) -> i32 {
    if a.x != b.x {
        return select(1, -1, a.x < b.x);
    }
    if a.y != b.y {
        return select(1, -1, a.y < b.y);
    }
    if a.z != b.z {
        return select(1, -1, a.z < b.z);
    }
    return 0;
}

// Index of `key` in the previous step's sorted keys, or -1.
fn find_prev(key: vec3<u32>) -> i32 {
    var lo = 0u;
    var hi = prev[0].x;
    while lo < hi {
        let mid = (lo + hi) / 2u;
        let k = key_cmp(prev[1u + mid].xyz, key);
        if k == 0 {
            return i32(mid);
        }
        if k < 0 {
            lo = mid + 1u;
        } else {
            hi = mid;
        }
    }
    return -1;
}

@compute @workgroup_size(256)
fn assemble(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = linear_index(gid, nwg);
    if i >= n_contacts() {
        return;
    }
    let c = contacts[i];
    if is_joint(c.ids.w) {
        assemble_joint(i, c);
        return;
    }
    let a = c.ids.x;
    let b = c.ids.y;
    let n = c.n_gap.xyz;
    let u = tangent_u(n);
    let w = tangent_w(n);
    let ra = c.ra.xyz;
    let rb = c.rb.xyz;
    // Relative velocity of B w.r.t. A at the contact point (world angular velocities).
    let rel = (vel[b].xyz + cross(omega[b].xyz, rb)) - (vel[a].xyz + cross(omega[a].xyz, ra));
    let dt = params.coef.x;
    // The pair's model (Coulomb unless a material has one; uniform flag).
    var m = vec4<f32>(0.0);
    if params.model.x != 0u {
        m = pair_model(c.ids.w);
    }
    let nr = normal_rows(m, c.n_gap.w, dt);
    let e_t = tangent_compliance(m, dt);
    // E adds to the diagonal bound: N + E ≤ diag(tr + E_n + E_T) (see the header).
    let tr = contact_count(a) * trace_share(a, ra, n, u, w)
        + contact_count(b) * trace_share(b, rb, n, u, w);
    let eta = select(0.0, 3.0 / (tr + nr.x + e_t), tr > 0.0 && nr.x >= 0.0);

    // The previous impulse by key: the warm start, and the bristle's γ_T⁻ (looked up for a
    // bristle contact even without warm start: it is the model's state).
    let cap = params.counts.y;
    var g0 = vec4<f32>(0.0);
    var last = vec4<f32>(0.0);
    if (params.counts.w != 0u || e_t > 0.0) && eta > 0.0 {
        let k = find_prev(warm_key(c));
        if k >= 0 {
            last = bitcast<vec4<f32>>(prev[1u + cap + u32(k)]);
            if params.counts.w != 0u {
                g0 = project_cone(last, c.ra.w);
            }
        }
    }
    // Bristle offset −E_T γ_T⁻: v_T⁺ + E_T (γ_T − γ_T⁻) = 0 while sticking.
    let p = vec3<f32>(nr.y + dot(n, rel), dot(u, rel) - e_t * last.y, dot(w, rel) - e_t * last.z);
    rhs[i] = vec4<f32>(p, eta);
    gam[SEG_AUX * cap + i] = vec4<f32>(p.x, 0.0, max(nr.x, 0.0), e_t);

    gam[SEG_GAMMA * cap + i] = g0;
    gam[SEG_Y * cap + i] = g0;
    gam[SEG_TRIAL * cap + i] = g0;
    gam[SEG_BEST * cap + i] = g0;
}

// After a solve: this step's keys and impulses become the warm-start data of the next step.
@compute @workgroup_size(256)
fn save_warm(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = linear_index(gid, nwg);
    let nc = n_contacts();
    if i == 0u {
        prev[0] = vec4<u32>(nc, 0u, 0u, 0u);
    }
    if i >= nc {
        return;
    }
    let cap = params.counts.y;
    prev[1u + i] = vec4<u32>(warm_key(contacts[i]), 0u);
    prev[1u + cap + i] = bitcast<vec4<u32>>(gam[SEG_GAMMA * cap + i]);
}

// Velocity (linear, angular) of a joint block's body; the world (A = WORLD) is at rest.
fn joint_body_vel(b: u32) -> array<vec3<f32>, 2> {
    if b == WORLD {
        return array<vec3<f32>, 2>(vec3<f32>(0.0), vec3<f32>(0.0));
    }
    return array<vec3<f32>, 2>(vel[b].xyz, omega[b].xyz);
}

// Body b's share of the diagonal of N_ii on the block's rows t_k: linear rows
// m⁻¹ + (r×t)ᵀ I⁻¹ (r×t), angular rows tᵀ I⁻¹ t; times b's constraint count (the bound).
fn joint_diag(b: u32, r: vec3<f32>, t: array<vec3<f32>, 3>, angular: bool) -> vec3<f32> {
    if b == WORLD {
        return vec3<f32>(0.0);
    }
    var s = vec3<f32>(0.0);
    for (var k = 0u; k < 3u; k++) {
        if angular {
            s[k] = dot(t[k], inv_inertia(b, t[k]));
        } else {
            let x = cross(r, t[k]);
            s[k] = mass_props[b].w + dot(x, inv_inertia(b, x));
        }
    }
    return contact_count(b) * s;
}

// A joint block (src/solve/rows, "Joints"): p = offset + G v* on its rows (the joint stage
// wrote the offset — drift stabilisation, motor target — into rhs[i].xyz); per-row scaling
// η_k = 3/(k B_kk) for its k rows (B ≤ k diag(B) for a PSD k×k block, so the bound
// N ≤ diag(3/η) of the contacts holds; unlike 3/trace, rows of very different stiffness —
// a lever arm's rotation against a translation — each get their own step): η_0 in rhs.w
// (the first active row's η when row 0 is off, so rhs.w > 0 still means "active"), η_1, η_2
// in aux.zw. Warm start by the block's key, no compliance.
fn assemble_joint(i: u32, c: Contact) {
    let flags = c.ids.w;
    let angular = (flags & JOINT_ANGULAR) != 0u;
    let m = joint_mask(flags);
    let n = c.n_gap.xyz;
    let t = array<vec3<f32>, 3>(n, tangent_u(n), tangent_w(n));
    let va = joint_body_vel(c.ids.x);
    let vb = joint_body_vel(c.ids.y);
    var rel = vb[1] - va[1];
    if !angular {
        rel = (vb[0] + cross(vb[1], c.rb.xyz)) - (va[0] + cross(va[1], c.ra.xyz));
    }
    let off = rhs[i].xyz;
    let p = (off + vec3<f32>(dot(t[0], rel), dot(t[1], rel), dot(t[2], rel))) * m;
    let diag = joint_diag(c.ids.x, c.ra.xyz, t, angular) + joint_diag(c.ids.y, c.rb.xyz, t, angular);
    let rows = dot(m, vec3<f32>(1.0));
    var e = vec3<f32>(0.0);
    for (var k = 0u; k < 3u; k++) {
        e[k] = select(0.0, 3.0 / (rows * diag[k]), m[k] != 0.0 && diag[k] > 0.0);
    }
    // Inactive lanes take the first active row's η (any positive value: they stay 0).
    let first = select(select(e.z, e.y, m.y != 0.0), e.x, m.x != 0.0);
    let eta = select(first, 0.0, first <= 0.0);
    let ev = select(vec3<f32>(eta), e, m != vec3<f32>(0.0));
    let cap = params.counts.y;
    var g0 = vec4<f32>(0.0);
    if params.counts.w != 0u && eta > 0.0 {
        let k = find_prev(warm_key(c));
        if k >= 0 {
            g0 = project_joint(bitcast<vec4<f32>>(prev[1u + cap + u32(k)]), flags, c.ra.w);
        }
    }
    rhs[i] = vec4<f32>(p, eta);
    gam[SEG_AUX * cap + i] = vec4<f32>(p.x, 0.0, ev.y, ev.z);
    gam[SEG_GAMMA * cap + i] = g0;
    gam[SEG_Y * cap + i] = g0;
    gam[SEG_TRIAL * cap + i] = g0;
    gam[SEG_BEST * cap + i] = g0;
}
