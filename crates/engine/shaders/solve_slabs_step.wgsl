// Coloured Gauss–Seidel's coarse correction on horizontal slabs (book: Solver depth, "The slab
// correction on the GPU"): the stall test after each sweep, the fine rows, the coarse solve,
// the trial step and its objective check, and the bookkeeping. The coarse problem itself is
// assembled by solve_slabs. The f64 twin is `reference::multilevel` (`Multilevel` with
// momentum, slabs, the normal rows, ρ assumed, the gain check).
//
// A sweep of Gauss–Seidel moves a load about a layer down a bed, so the sweeps a deep bed
// needs grow with its depth; what is slow is the smooth part of the error, which a few
// unknowns describe: one per horizontal slab of height h (aggregation along gravity). After
// a sweep whose residual fell by less than half (the stall test), the correction minimises
// the cone problem's objective over γ + P δ, P the smoothed aggregation prolongator of the
// active contacts' normal rows (Vaněk, Mandel & Brezina 1996): P₀ puts weight w = |n·ĝ| on a
// contact's row in the column of its slab, P = (I − ω D⁻¹ A) P₀ with ω = 4 / (3ρ) and ρ the
// assumed spectral radius of D⁻¹ A. Its coarse matrix Pᵀ A P is banded (a body's contacts lie
// in at most three adjacent slabs), so one invocation solves it by banded Cholesky. The step
// γ ← Π(γ + P δ) is kept when the objective falls (the projection can raise it where the
// active set changes) and the momentum restarts after it; a rejected correction, or one that
// gains less than the sweep before it, waits 2, 4, 8, … stalled sweeps before the next.
//
// Everything is summed in a fixed order or as integers (solve_slabs): same scene, adapter
// and binary → same bits.

@group(0) @binding(0) var<uniform> params: SolveParams;
@group(0) @binding(1) var<storage, read> contacts: array<Contact>; // chunked(4)
@group(0) @binding(2) var<storage, read> body_offsets: array<u32>;
@group(0) @binding(3) var<storage, read> body_entries: array<u32>;
@group(0) @binding(4) var<storage, read> rot: array<vec4<f32>>;
@group(0) @binding(5) var<storage, read> mass_props: array<vec4<f32>>;
@group(0) @binding(6) var<storage, read_write> gam: array<vec4<f32>>; // chunked(8)
@group(0) @binding(7) var<storage, read_write> dv: array<vec4<f32>>;
@group(0) @binding(8) var<storage, read> rhs: array<vec4<f32>>;
@group(0) @binding(9) var<storage, read_write> partials: array<vec4<f32>>;
@group(0) @binding(10) var<storage, read_write> scal: Scalars;
// solve_reduce's indirect arguments for the one-workgroup decisions (`slab_stall`,
// `slab_decide`, `slab_residual`, dispatched directly); a placeholder for the kernels
// dispatched from them, as a dispatch may not write the buffer it is dispatched from.
@group(0) @binding(11) var<storage, read_write> args: array<u32>;
@group(0) @binding(12) var<storage, read_write> previous: array<vec4<f32>>;
@group(0) @binding(13) var<storage, read> pos: array<vec4<f32>>;
// The slabs' state (solve_slabs's header comment has the layout); this stage binds it whole.
@group(0) @binding(14) var<storage, read_write> slab_words: array<vec4<u32>>;
@group(0) @binding(15) var<uniform> sp: SlabParams;

// This stage sees the coarse accumulators at the start of `slab`, the rest after them.
const V0: u32 = SLAB_COARSE_VEC4S;

// Constraint i's impulse.
fn gamma_of(i: u32) -> vec4<f32> {
    return gam_at(SEG_GAMMA * params.capacity + i);
}

// (N γ)_i of a contact from the bodies' Δv (solve_sweep `product`, contacts only).
fn contact_product(c: Contact) -> vec3<f32> {
    let a = c.ids.x;
    let b = c.ids.y;
    let n = c.n_gap.xyz;
    let rel = (dv[2u * b].xyz + cross(dv[2u * b + 1u].xyz, c.rb.xyz))
        - (dv[2u * a].xyz + cross(dv[2u * a + 1u].xyz, c.ra.xyz));
    return vec3<f32>(dot(n, rel), dot(tangent_u(n), rel), dot(tangent_w(n), rel));
}

// u = (N + E)γ + p of contact i.
fn contact_velocity(c: Contact, i: u32, g: vec3<f32>) -> vec3<f32> {
    let e = slab_compliance(i);
    return contact_product(c) + vec3<f32>(e.x, e.y, e.y) * g + rhs[i].xyz;
}

// Contact i's projection on its set (solve_sweep `project_i` for a contact that is neither a
// joint nor a patch block).
fn project_contact(g: vec4<f32>, c: Contact, i: u32) -> vec4<f32> {
    if !state_on() {
        return project_cone(g, c.ra.w);
    }
    return project_state(g, gam_at(SEG_STATE * params.capacity + i), c.ra.w);
}

fn slab_args(on: bool) {
    let ng = scal.n_groups;
    set_args(SLAB_ARGS_ROWS, select(0u, ng, on));
    set_args(SLAB_ARGS_BODIES, select(0u, body_groups(), on));
    set_args(SLAB_ARGS_ONE, select(0u, 1u, on));
    set_args(SLAB_ARGS_APPLY, 0u);
    set_args(SLAB_ARGS_RESIDUAL, select(0u, ng, on));
}

// ------------------------------------------------------------------ around the sweeps

// Before a cone problem's sweeps (after reduce_init): γ⁰ and its Δv become the "previous
// sweep" the first sweep's objective fall is measured from, and the back-off starts afresh.
// Per constraint and per body (`SLAB_ARGS_EACH`: max of the two).
@compute @workgroup_size(256)
fn slab_start(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = linear_index(gid, nwg);
    if i < scal.n_contacts {
        previous[i] = gamma_of(i);
    }
    let n = params.bodies;
    if i < n {
        dv[2u * (n + i)] = dv[2u * i];
        dv[2u * (n + i) + 1u] = dv[2u * i + 1u];
    }
    if i == 0u {
        // (last residual, the sweep's objective fall, wait, rejections in a row)
        slab_words[V0 + SLAB_HEAD] = vec4<u32>(bitcast<u32>(scal.res), 0u, 0u, 0u);
    }
}

// After a sweep (and reduce_gauss): the objective's change from the last swept impulses
// x_{k−1} (`previous`, Δv in the body's second half of `dv`) to this sweep's x_k,
// f(x_k) − f(x_{k−1}) = Σ_i Δγ_i·(p_i + ½ E (x_k + x_{k−1})_i) + ½ Σ_b Δv_bᵀ M_b (v_k + v_{k−1})_b
// (f = ½ γᵀ(N + E)γ + pᵀγ, N γ = D Δv): partials per workgroup, constraints then bodies.
@compute @workgroup_size(256)
fn slab_sweep_gain(
    @builtin(global_invocation_id) gid: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
    @builtin(local_invocation_index) lid: u32,
    @builtin(workgroup_id) wid: vec3<u32>,
) {
    let i = linear_index(gid, nwg);
    var f = 0.0;
    if i < scal.n_contacts {
        let x = gamma_of(i).xyz;
        let xp = previous[i].xyz;
        let e = slab_compliance(i);
        f = dot(x - xp, rhs[i].xyz + 0.5 * vec3<f32>(e.x, e.y, e.y) * (x + xp));
    }
    var fb = 0.0;
    let n = params.bodies;
    if i < n && mass_props[i].w != 0.0 {
        let mp = mass_props[i];
        let q = rot[i];
        let l = dv[2u * i].xyz;
        let lp = dv[2u * (n + i)].xyz;
        let w = quat_rotate_inv(q, dv[2u * i + 1u].xyz);
        let wp = quat_rotate_inv(q, dv[2u * (n + i) + 1u].xyz);
        // M (v_k + v_{k−1}) in the body frame: the inertia is diagonal there.
        let inertia = select(vec3<f32>(0.0), 1.0 / mp.xyz, mp.xyz != vec3<f32>(0.0));
        fb = 0.5 * (dot(l - lp, l + lp) / mp.w + dot(w - wp, inertia * (w + wp)));
    }
    slab_partial(vec4<f32>(f + fb, 0.0, 0.0, 0.0), lid, wid.x + wid.y * nwg.x);
}

// After a sweep's objective fall: the stall test. A sweep whose residual is above `stall`
// × the one before it, with sweeps left, is followed by a correction unless the back-off
// says wait; the coarse accumulators are cleared for it.
@compute @workgroup_size(256)
fn slab_stall(@builtin(local_invocation_index) lid: u32) {
    let st = uniform_state(lid);
    let parts = max(scal.n_groups, body_groups());
    let gain = -sum_partials(lid, select(parts, 0u, st.y != 0u), false).x;
    var on = false;
    if lid == 0u {
        let h = slab_words[V0 + SLAB_HEAD];
        let r = scal.res;
        var wait = h.z;
        let stalled = st.y == 0u && r > sp.stall * bitcast<f32>(h.x) && scal.iters < sp.cap;
        if stalled && wait > 0u {
            wait -= 1u;
        } else if stalled {
            on = true;
        }
        slab_words[V0 + SLAB_HEAD] = vec4<u32>(bitcast<u32>(r), bitcast<u32>(gain), wait, h.w);
        slab_words[V0 + SLAB_HEAD + 3u] = vec4<u32>(select(0u, 1u, on), 0u, 0u, 0u);
        slab_args(on);
        sh_u = vec2<u32>(select(0u, 1u, on), 0u);
    }
    if workgroupUniformLoad(&sh_u).x != 0u {
        clear_coarse(lid);
    }
}

// The coarse accumulators (the band's 64-bit words and the header's extremes) to their
// starting values, by the stall test's workgroup.
fn clear_coarse(lid: u32) {
    let words = SLAB_COARSE_WORDS;
    for (var k = lid; k < words; k += WG) {
        var v = 0u;
        if k == COARSE_MIN {
            v = 0xffffffffu;
        }
        slab_words[k / 4u][k % 4u] = v;
    }
}

// ------------------------------------------------------------------ the correction

// The fine rows: contact i's normal row is one when the contact is a plain contact (not a
// joint or patch block) with a step (η > 0) that carries load or is approaching
// (γ_n > 0 or u_n ≤ 0). Writes (slab, w = |n·ĝ|, the row's diagonal of N + E, u_n), the slab
// a sentinel for the others.
@compute @workgroup_size(256)
fn slab_rows(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = linear_index(gid, nwg);
    if i >= scal.n_contacts {
        return;
    }
    let at = V0 + slab_row_at(i);
    let c = contacts_at(i);
    let g = gamma_of(i).xyz;
    var row = vec4<f32>(0.0);
    var key = NO_SLAB;
    let plain = !is_joint(c.ids.w) && !is_patch(c);
    if plain && rhs[i].w > 0.0 && (moves(c.ids.x) || moves(c.ids.y)) {
        let u = contact_velocity(c, i, g);
        if g.x > 0.0 || u.x <= 0.0 {
            let n = c.n_gap.xyz;
            let s = i32(floor(dot(contact_point(c), sp.up.xyz) / sp.up.w));
            key = bitcast<u32>(s);
            row = vec4<f32>(0.0, abs(dot(n, sp.up.xyz)), normal_diagonal(c, i), u.x);
        }
    }
    slab_put(at, row);
    slab_words[at].x = key;
    slab_put(at + 1u, vec4<f32>(0.0));
    slab_put(at + 2u, vec4<f32>(0.0));
}

// The contact's point in the world: body A's position and lever arm, or B's when A is the
// world.
fn contact_point(c: Contact) -> vec3<f32> {
    if c.ids.x != WORLD {
        return pos[c.ids.x].xyz + c.ra.xyz;
    }
    return pos[c.ids.y].xyz + c.rb.xyz;
}

// Body b's share m⁻¹ + (r × n)·I⁻¹(r × n) of a normal row at lever arm r.
fn normal_share(b: u32, r: vec3<f32>, n: vec3<f32>) -> f32 {
    if !moves(b) {
        return 0.0;
    }
    let a = cross(r, n);
    return mass_props[b].w + dot(a, inv_inertia(b, a));
}

fn normal_diagonal(c: Contact, i: u32) -> f32 {
    let n = c.n_gap.xyz;
    return normal_share(c.ids.x, c.ra.xyz, n) + normal_share(c.ids.y, c.rb.xyz, n)
        + slab_compliance(i).x;
}

// The coarse problem (assembled by solve_slabs) solved by banded Cholesky in one invocation:
// the band's 64-bit sums back to f32, then L Lᵀ δ = b over the slabs from the lowest base − 2.
// A slab without fine rows (zero diagonal) gets δ = 0; a pivot that is not positive (the
// rounding of a nearly singular problem) cancels the correction.
@compute @workgroup_size(1)
fn slab_solve() {
    let lo = i32(slab_word(COARSE_MIN)) - SLAB_BIAS;
    let hi = i32(slab_word(COARSE_MAX)) - SLAB_BIAS;
    var ok = hi >= lo && u32(hi - lo) + SLAB_WINDOW <= SLAB_MAX;
    let ns = select(0u, u32(hi - lo) + SLAB_WINDOW, ok);
    let scale = fixed_scale(bitcast<f32>(slab_word(COARSE_MAGNITUDE)));
    let scale_rhs = fixed_scale(bitcast<f32>(slab_word(COARSE_MAGNITUDE_RHS)));
    // Unpack into the Cholesky rows: entries (s, s + k), k < 7, then the right-hand side.
    for (var s = 0u; s < ns; s++) {
        var a: array<f32, 8>;
        for (var k = 0u; k < 7u; k++) {
            a[k] = fixed_value(s, k) / scale;
        }
        a[7] = fixed_value(s, 7u) / scale_rhs;
        if a[0] <= 0.0 {
            for (var k = 1u; k < 7u; k++) {
                a[k] = 0.0;
            }
            a[0] = 1.0;
            a[7] = 0.0;
        }
        chol_put(s, a);
    }
    // A = L Lᵀ in place (row s holds L[s + k][s] at k), forward substitution on the way.
    for (var s = 0u; s < ns && ok; s++) {
        var a = chol_get(s);
        for (var k = 1u; k < SLAB_WINDOW && k <= s; k++) {
            let p = chol_get(s - k);
            // Entries of row s − k that reach row s and beyond.
            a[0] -= p[k] * p[k];
            for (var j = 1u; k + j < SLAB_WINDOW; j++) {
                a[j] -= p[k] * p[k + j];
            }
            a[7] -= p[k] * p[7];
        }
        if !(a[0] > 0.0) {
            ok = false;
            break;
        }
        let d = sqrt(a[0]);
        a[0] = d;
        for (var j = 1u; j < SLAB_WINDOW; j++) {
            a[j] /= d;
        }
        a[7] /= d;
        chol_put(s, a);
    }
    // Back substitution: δ_s = (y_s − Σ_k L[s + k][s] δ_{s+k}) / L[s][s], into lane 7.
    for (var t = 0u; t < ns && ok; t++) {
        let s = ns - 1u - t;
        var a = chol_get(s);
        var y = a[7];
        for (var k = 1u; k < SLAB_WINDOW && s + k < ns; k++) {
            y -= a[k] * chol_get(s + k)[7];
        }
        a[7] = y / a[0];
        chol_put(s, a);
    }
    slab_words[V0 + SLAB_HEAD + 1u].z = select(0u, 1u, ok && ns > 0u);
    slab_words[V0 + SLAB_HEAD + 1u].w = bitcast<u32>(lo + SLAB_BIAS);
}

fn chol_get(s: u32) -> array<f32, 8> {
    let at = V0 + SLAB_CHOL + 2u * s;
    let x = slab_get(at);
    let y = slab_get(at + 1u);
    return array<f32, 8>(x.x, x.y, x.z, x.w, y.x, y.y, y.z, y.w);
}

fn chol_put(s: u32, a: array<f32, 8>) {
    let at = V0 + SLAB_CHOL + 2u * s;
    slab_put(at, vec4<f32>(a[0], a[1], a[2], a[3]));
    slab_put(at + 1u, vec4<f32>(a[4], a[5], a[6], a[7]));
}

// Word k of the coarse accumulators (the start of `slab`).
fn slab_word(k: u32) -> u32 {
    return slab_words[k / 4u][k % 4u];
}

// Entry (s, k) of the band (k = 7: the right-hand side) from its two's-complement 64-bit
// fixed-point sum.
fn fixed_value(s: u32, k: u32) -> f32 {
    let at = COARSE_BAND + 2u * (8u * s + k);
    let lo = slab_word(at);
    let hi = bitcast<i32>(slab_word(at + 1u));
    return f32(hi) * 4294967296.0 + f32(lo);
}

// The trial γ' = Π(γ + P δ) of each fine row (the whole contact projected) and its objective
// change Δγ·u + ½ Δγᵀ E Δγ from the impulses before it; Δγ in the row's third vec4.
@compute @workgroup_size(256)
fn slab_trial(
    @builtin(global_invocation_id) gid: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
    @builtin(local_invocation_index) lid: u32,
    @builtin(workgroup_id) wid: vec3<u32>,
) {
    let i = linear_index(gid, nwg);
    var f = 0.0;
    let h = slab_words[V0 + SLAB_HEAD + 1u];
    if i < scal.n_contacts && h.z != 0u {
        let at = V0 + slab_row_at(i);
        let s = bitcast<i32>(slab_words[at].x);
        let p = slab_get(at + 1u);
        let p4 = slab_get(at + 2u).x;
        if s != bitcast<i32>(NO_SLAB) {
            // Column σ − 2 + k is Cholesky row σ − lo + k (rows start at the lowest base − 2).
            let base = u32(s - (bitcast<i32>(h.w) - SLAB_BIAS));
            var d = 0.0;
            let pk = array<f32, 5>(p.x, p.y, p.z, p.w, p4);
            for (var k = 0u; k < 5u; k++) {
                d += pk[k] * chol_get(base + k)[7];
            }
            let c = contacts_at(i);
            let g = gamma_of(i);
            let t = project_contact(g + vec4<f32>(d, 0.0, 0.0, 0.0), c, i);
            let dg = t.xyz - g.xyz;
            let e = slab_compliance(i);
            let u = contact_velocity(c, i, g.xyz);
            f = dot(dg, u) + 0.5 * dot(dg, vec3<f32>(e.x, e.y, e.y) * dg);
            slab_put(at + 2u, vec4<f32>(p4, dg));
        }
    }
    slab_partial(vec4<f32>(f, 0.0, 0.0, 0.0), lid, wid.x + wid.y * nwg.x);
}

// Each body's Δv from the trial's Δγ (M⁻¹ Dᵀ Δγ over its contacts, in its list's order) into
// its slab record, and ½ Δvᵀ M Δv = ½ (Dᵀ Δγ)ᵀ M⁻¹ (Dᵀ Δγ) to the partials after the
// constraints'.
@compute @workgroup_size(256)
fn slab_change(
    @builtin(global_invocation_id) gid: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
    @builtin(local_invocation_index) lid: u32,
    @builtin(workgroup_id) wid: vec3<u32>,
) {
    let b = linear_index(gid, nwg);
    var f = 0.0;
    let h = slab_words[V0 + SLAB_HEAD + 1u];
    if b < params.bodies && moves(b) && h.z != 0u {
        var lin = vec3<f32>(0.0);
        var ang = vec3<f32>(0.0);
        let end = body_offsets[b + 1u];
        for (var k = body_offsets[b]; k < end; k++) {
            let e = body_entries[k];
            let ci = e >> 1u;
            if slab_row_is_fine(ci) {
                let c = contacts_at(ci);
                let g = slab_get(V0 + slab_row_at(ci) + 2u).yzw;
                let n = c.n_gap.xyz;
                var force = g.x * n + g.y * tangent_u(n) + g.z * tangent_w(n);
                var r = c.rb.xyz;
                if (e & 1u) == 0u {
                    force = -force;
                    r = c.ra.xyz;
                }
                lin += force;
                ang += cross(r, force);
            }
        }
        let mp = mass_props[b];
        let iang = inv_inertia(b, ang);
        f = 0.5 * (mp.w * dot(lin, lin) + dot(ang, iang));
        let at = V0 + slab_body_at(b) + SLAB_BODY_DV;
        slab_put(at, vec4<f32>(mp.w * lin, 0.0));
        slab_put(at + 1u, vec4<f32>(iang, 0.0));
    }
    slab_partial(vec4<f32>(f, 0.0, 0.0, 0.0), lid, scal.n_groups + wid.x + wid.y * nwg.x);
}

fn slab_row_is_fine(i: u32) -> bool {
    return slab_words[V0 + slab_row_at(i)].x != NO_SLAB;
}

// The objective check: the trial is kept when the objective fell; under the gain check a
// correction that gained less than the sweep before it backs off as a rejected one does.
// A kept correction restarts the momentum. Counts the correction (`SLAB_HEAD + 1`).
@compute @workgroup_size(256)
fn slab_decide(@builtin(local_invocation_index) lid: u32) {
    if !scheduled(lid) {
        return;
    }
    let st = uniform_state(lid);
    let change = sum_partials(lid, select(scal.n_groups + body_groups(), 0u, st.y != 0u), false).x;
    if lid != 0u {
        return;
    }
    var h = slab_words[V0 + SLAB_HEAD];
    var c = slab_words[V0 + SLAB_HEAD + 1u];
    let gain = -change;
    let kept = c.z != 0u && gain > 0.0;
    let worth = kept && gain > bitcast<f32>(h.y);
    var rejected = h.w;
    var wait = 0u;
    if worth {
        rejected = 0u;
    } else {
        rejected += 1u;
        wait = 1u << min(rejected, 16u);
    }
    h.z = wait;
    h.w = rejected;
    slab_words[V0 + SLAB_HEAD] = h;
    c.x += 1u;
    c.y += select(0u, 1u, kept);
    c.z = select(0u, 1u, kept);
    slab_words[V0 + SLAB_HEAD + 1u] = c;
    if kept {
        scal.theta = 1.0;
        scal.beta = 0.0;
    }
    set_args(SLAB_ARGS_APPLY, select(0u, max(scal.n_groups, body_groups()), kept));
}

// A kept trial: γ += Δγ per fine row, Δv += the body's change.
@compute @workgroup_size(256)
fn slab_apply(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = linear_index(gid, nwg);
    if i < scal.n_contacts && slab_row_is_fine(i) {
        let at = SEG_GAMMA * params.capacity + i;
        let g = gam_at(at);
        gam_put(at, vec4<f32>(g.xyz + slab_get(V0 + slab_row_at(i) + 2u).yzw, g.w));
    }
    if i < params.bodies && moves(i) {
        let at = V0 + slab_body_at(i) + SLAB_BODY_DV;
        dv[2u * i] += slab_get(at);
        dv[2u * i + 1u] += slab_get(at + 1u);
    }
}

// After the correction and its residual (solve_gauss `gauss_residual`): the residual the
// next stall test compares with, and the convergence test.
@compute @workgroup_size(256)
fn slab_residual(@builtin(local_invocation_index) lid: u32) {
    if !scheduled(lid) {
        return;
    }
    let st = uniform_state(lid);
    let s = sum_partials(lid, select(scal.n_groups, 0u, st.y != 0u), false);
    if lid != 0u {
        return;
    }
    slab_words[V0 + SLAB_HEAD + 3u] = vec4<u32>(0u);
    if st.y != 0u {
        return;
    }
    let r = sqrt(s.x);
    scal.res = r;
    scal.best = r;
    slab_words[V0 + SLAB_HEAD].x = bitcast<u32>(r);
    if rms_converged(s.x) {
        converge();
    }
}

// After the solve: the corrections count as sweeps in the step's statistics (each costs
// about a sweep's traffic), and their counts go to the header's second vec4 for the host.
@compute @workgroup_size(1)
fn slab_finish() {
    let c = slab_words[V0 + SLAB_HEAD + 1u];
    scal.iters += c.x;
    var t = slab_words[V0 + SLAB_HEAD + 2u];
    t.x += c.x;
    t.y += c.y;
    slab_words[V0 + SLAB_HEAD + 2u] = t;
    slab_words[V0 + SLAB_HEAD + 1u] = vec4<u32>(0u);
}

// ------------------------------------------------------------------ reductions

fn slab_partial(v: vec4<f32>, lid: u32, slot: u32) {
    let t = tree_total(v, lid, false);
    if lid == 0u {
        partials[slot] = t;
    }
}

// Whether the stall test scheduled a correction after this sweep (the same in every lane).
fn scheduled(lid: u32) -> bool {
    if lid == 0u {
        sh_u = vec2<u32>(slab_words[V0 + SLAB_HEAD + 3u].x, 0u);
    }
    return workgroupUniformLoad(&sh_u).x != 0u;
}
