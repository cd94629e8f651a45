// stages: solve_iterate, solve_fused, solve_gauss
// The per-contact arithmetic of the sweeps (see solve_iterate), shared with the one-workgroup
// solver (solve_fused). Reads and writes the bindings those stages declare alike.

// Δv (linear, angular) of a joint block's body; none for the world.
fn joint_dv(b: u32) -> array<vec3<f32>, 2> {
    if b == WORLD {
        return array<vec3<f32>, 2>(vec3<f32>(0.0), vec3<f32>(0.0));
    }
    return array<vec3<f32>, 2>(dv[2u * b].xyz, dv[2u * b + 1u].xyz);
}

// G_iᵀ (Δv_A, Δv_B) of a joint block: linear rows like a contact's, angular rows
// t·(Δω_B − Δω_A); rows outside the mask are 0.
fn joint_product(c: Contact) -> vec4<f32> {
    let da = joint_dv(c.ids.x);
    let db = joint_dv(c.ids.y);
    var rel = db[1] - da[1];
    if (c.ids.w & JOINT_ANGULAR) == 0u {
        rel = (db[0] + cross(db[1], c.rb.xyz)) - (da[0] + cross(da[1], c.ra.xyz));
    }
    let n = c.n_gap.xyz;
    let v = vec3<f32>(dot(n, rel), dot(tangent_u(n), rel), dot(tangent_w(n), rel));
    return vec4<f32>(v * joint_mask(c.ids.w), 0.0);
}

// (Nγ)_i = D_iᵀ (Δv_A, Δv_B) from the Δv that solve_schur gathered.
fn product(c: Contact) -> vec4<f32> {
    if is_joint(c.ids.w) {
        return joint_product(c);
    }
    let a = c.ids.x;
    let b = c.ids.y;
    let n = c.n_gap.xyz;
    let rel = (dv[2u * b].xyz + cross(dv[2u * b + 1u].xyz, c.rb.xyz))
        - (dv[2u * a].xyz + cross(dv[2u * a + 1u].xyz, c.ra.xyz));
    var x = dot(n, rel);
    if is_patch(c) {
        x = dot(n, dv[2u * b + 1u].xyz - dv[2u * a + 1u].xyz); // the spin row
    }
    return vec4<f32>(x, dot(tangent_u(n), rel), dot(tangent_w(n), rel), 0.0);
}

// (N + E)γ_i: the product plus the compliance diag(E_n, E_T, E_T) γ (aux.zw, written at
// assembly: compliant contact, bristle). Coulomb-only scenes (params.has_models = 0, uniform) skip the aux read.
fn product_e(c: Contact, i: u32, g: vec4<f32>) -> vec4<f32> {
    let ng = product(c);
    if !models_on() || is_joint(c.ids.w) {
        return ng;
    }
    let e = gam_at(SEG_AUX * params.capacity + i).zw; // (E_n, E_T)
    if is_dist_patch(c) {
        // The full symmetric E (lanes spin, u, w): E_ss, E_uu in aux.zw, (E_ww, E_su, E_sw,
        // E_uw) in the state segment (solve_assemble `assemble_dist_patch`).
        let s = gam_at(SEG_STATE * params.capacity + i);
        let eg = vec3<f32>(
            e.x * g.x + s.y * g.y + s.z * g.z,
            s.y * g.x + e.y * g.y + s.w * g.z,
            s.z * g.x + s.w * g.y + s.x * g.z,
        );
        return ng + vec4<f32>(eg, 0.0);
    }
    return ng + vec4<f32>(e.x * g.x, e.y * g.yz, 0.0);
}

// Whether the steps may take a contact's μ from the iterates' w lane instead of its record
// (ra.w): every constraint is a contact projected on its Coulomb cone (no joint blocks, patch
// blocks or model state). Assembly puts μ in γ⁰.w; the steps carry it into every trial
// (y = γ + β(γ − γ⁻) keeps it exactly), so a step reads no record — one 64 B line per contact
// and sweep less, ~5 % of a sweep's memory traffic at 10⁵ spheres. The w lane takes part in
// no arithmetic (products and projections set it 0, the sums read xyz or multiply it by 0).
fn mu_in_w() -> bool {
    return !joints_on() && !HAS_PATCHES && !state_on();
}

// Constraint i's projection: a joint block's rule; a contact's cone of ra.w (uniform branch:
// a table without state reads nothing more); a patch block's guard ball; else the set its
// state segment encodes (common/solve.wgsl `project_state`).
fn project_i(g: vec4<f32>, c: Contact, i: u32) -> vec4<f32> {
    if is_joint(c.ids.w) {
        return project_joint(g, c.ids.w, c.ra.w);
    }
    if !state_on() {
        return project_cone(g, c.ra.w);
    }
    if is_patch(c) {
        // The guard radius is in aux.x (the state segment's w holds a(s⁻)).
        return project_patch(g, gam_at(SEG_AUX * params.capacity + i).x, c.rb.w);
    }
    return project_state(g, gam_at(SEG_STATE * params.capacity + i), c.ra.w);
}

// Squared norm of the per-contact projected gradient of γ given its gradient g = Nγ + p.
// Per-row scaling of constraint i with block scalar η = rhs[i].w: η for a contact; a joint
// block's rows have their own (rhs.w, aux.z, aux.w) (src/model/rows, "Joints").
fn row_eta(i: u32, c: Contact, eta: f32) -> vec4<f32> {
    if is_patch(c) {
        // Patch blocks: η of the spin lane in rhs.w, of the u, w lanes in aux.y.
        let t = gam_at(SEG_AUX * params.capacity + i).y;
        return vec4<f32>(eta, t, t, eta);
    }
    if is_joint(c.ids.w) {
        let a = gam_at(SEG_AUX * params.capacity + i);
        return vec4<f32>(eta, a.z, a.w, eta);
    }
    return vec4<f32>(eta);
}

// The η of constraint i's residual: with APGD (!COUNT_BOUND) a contact's step η is the plain
// diagonal's and its residual keeps the count-scaled one, which assembly wrote to rb.w, so
// the tolerance means the same for both solvers (solve_assemble's header).
fn res_eta(c: Contact, eta: f32) -> f32 {
    if !COUNT_BOUND && !is_joint(c.ids.w) && !is_patch(c) {
        return c.rb.w;
    }
    return eta;
}

// Σ_k d_k² / η_k over the rows (the metric diag(1/η)).
fn sq_over_eta(d: vec4<f32>, e: vec4<f32>, c: Contact) -> f32 {
    if is_joint(c.ids.w) || is_patch(c) {
        return dot(d.xyz, d.xyz / e.xyz);
    }
    return dot(d.xyz, d.xyz) / e.x;
}

fn residual_sq(gamma: vec4<f32>, g: vec4<f32>, e: vec4<f32>, c: Contact, i: u32) -> f32 {
    if e.x <= 0.0 {
        return 0.0;
    }
    let r = (gamma - project_i(gamma - e * g, c, i)) / e;
    return dot(r.xyz, r.xyz);
}

// Fixed-order workgroup reduction of `v` (sums; .w is a max when `w_max`), written to
// partials[slot] (the workgroup, or the one-workgroup solver's block of WG constraints).
// Deterministic run to run (common/solve_tree.wgsl).
fn reduce_to_partial(v: vec4<f32>, lid: u32, slot: u32, w_max: bool) {
    let t = tree_total(v, lid, w_max);
    if lid == 0u {
        partials[slot] = t;
    }
}

// Constraint i's vector in `gam` / `nv` slot k (common/solve_roles.wgsl).
fn gam_slot(k: u32, i: u32) -> vec4<f32> {
    return gam_at(gam_seg(k) * params.capacity + i);
}

fn nv_slot(k: u32, i: u32) -> vec4<f32> {
    return nv_at(nv_seg(k) * params.capacity + i);
}

// After the sweeps: the returned impulses (APGD: the best iterate; Jacobi: the last) into
// slot 0, where every later stage reads γ (common/solve_roles.wgsl).
fn finish_item(i: u32) {
    let b = roles().best;
    if gam_seg(b) != 0u {
        gam_put(SEG_GAMMA * params.capacity + i, gam_slot(b, i));
    }
    if HAS_ROLL && b != 0u {
        gam_put(ext_at(0u, i), gam_at(ext_at(b, i)));
    }
}

// APGD's extrapolation of constraint i: y = γ_k + β (γ_k − γ_{k−1}) and Ny, formed and
// stored by the first step after an acceptance (for every constraint, as the products read
// them), else read where that step stored them (common/solve_roles.wgsl).
fn y_and_ny(s: Roles, i: u32) -> array<vec4<f32>, 2> {
    let cap = params.capacity;
    return extrapolate(
        s.formed,
        vec3<u32>(gam_seg(s.y), gam_seg(s.cur), gam_seg(s.prev)) * cap + i,
        vec3<u32>(nv_seg(s.ny), nv_seg(s.ncur), nv_seg(s.nprev)) * cap + i,
    );
}

// y = γ_k + β(γ_k − γ_{k−1}) and Ny = (1 + β)Nγ_k − βNγ_{k−1} from the `gam` and `nv`
// indices (y, γ_k, γ_{k−1}) and (Ny, Nγ_k, Nγ_{k−1}); stored unless already formed.
fn extrapolate(formed: bool, g: vec3<u32>, n: vec3<u32>) -> array<vec4<f32>, 2> {
    if formed {
        return array<vec4<f32>, 2>(gam_at(g.x), nv_at(n.x));
    }
    let beta = scal.beta;
    let t = gam_at(g.y);
    let nt = nv_at(n.y);
    let y = t + beta * (t - gam_at(g.z));
    let ny = (1.0 + beta) * nt - beta * nv_at(n.z);
    gam_put(g.x, y);
    nv_put(n.x, ny);
    return array<vec4<f32>, 2>(y, ny);
}

// (p_e, η_e) of constraint i (η_e = 0: no rows 3–5).
fn ext_rhs(i: u32) -> vec4<f32> {
    return gam_at(SEG_EXT_RHS * params.capacity + i);
}

fn ext_bounds(i: u32) -> vec2<f32> {
    return gam_at(SEG_EXT_BOUND * params.capacity + i).xy;
}

// (Δω_B − Δω_A)·(n, u, w); joint blocks have no rows 3–5.
fn ext_product(c: Contact) -> vec3<f32> {
    if is_joint(c.ids.w) {
        return vec3<f32>(0.0);
    }
    let rel = dv[2u * c.ids.y + 1u].xyz - dv[2u * c.ids.x + 1u].xyz;
    let n = c.n_gap.xyz;
    return vec3<f32>(dot(n, rel), dot(tangent_u(n), rel), dot(tangent_w(n), rel));
}

fn ext_residual_sq(g: vec3<f32>, grad: vec3<f32>, eta: f32, i: u32) -> f32 {
    if eta <= 0.0 {
        return 0.0;
    }
    let r = (g - project_ext(g - eta * grad, ext_bounds(i))) / eta;
    return dot(r, r);
}

// Nγ_e (nv ext slot 0) from the gathered Δv; returns the rows' squared residual.
fn ext_restart(c: Contact, i: u32) -> f32 {
    let cap = params.capacity;
    let ne = ext_product(c);
    nv_put((NV_EXT + 0u) * cap + i, vec4<f32>(ne, 0.0));
    let qe = ext_rhs(i);
    return ext_residual_sq(gam_at(ext_at(0u, i)).xyz, ne + qe.xyz, qe.w, i);
}

// Rows 3–5's y and Ny (as y_and_ny).
fn ext_y_and_ny(s: Roles, i: u32) -> array<vec3<f32>, 2> {
    let cap = params.capacity;
    let yn = extrapolate(
        s.formed,
        vec3<u32>(ext_at(s.y, i), ext_at(s.cur, i), ext_at(s.prev, i)),
        (NV_EXT + vec3<u32>(s.ny, s.ncur, s.nprev)) * cap + i,
    );
    return array<vec3<f32>, 2>(yn[0].xyz, yn[1].xyz);
}

// N·trial of rows 3–5 and their share of product_trial's partials.
fn ext_trial(c: Contact, i: u32, s: Roles) -> vec4<f32> {
    let cap = params.capacity;
    let t = gam_at(ext_at(s.trial, i)).xyz;
    let nt = ext_product(c);
    nv_put((NV_EXT + s.ntrial) * cap + i, vec4<f32>(nt, 0.0));
    let qe = ext_rhs(i);
    var v = vec4<f32>(ext_residual_sq(t, nt + qe.xyz, qe.w, i), 0.0, 0.0, 0.0);
    if params.kind != 0u {
        let ny = nv_at((NV_EXT + s.ny) * cap + i).xyz;
        let d = t - gam_at(ext_at(s.y, i)).xyz;
        let dd = select(0.0, dot(d, d) / qe.w, qe.w > 0.0);
        v = vec4<f32>(v.x, dot(d, nt - ny), dd, dot(ny + qe.xyz, t - gam_at(ext_at(s.cur, i)).xyz));
    }
    return v;
}

// The per-constraint work of the sweep kernels, as functions of the constraint index i
// (< scal.n_contacts): solve_iterate's entry points run one per invocation, the
// one-workgroup solver (solve_fused) loops over i, so both do the same arithmetic.

// Setup: Nγ⁰ (nv slot 0; y⁰ = γ⁰, so Ny⁰ = Nγ⁰); returns (‖r(γ⁰)‖², 0, 0, max penetration).
fn product_init_item(i: u32) -> vec4<f32> {
    let cap = params.capacity;
    let c = contacts_at(i);
    let g = gam_at(SEG_GAMMA * cap + i);
    let ng = product_e(c, i, g);
    nv_put(SEG_NGAMMA * cap + i, ng);
    let q = rhs[i];
    let e = row_eta(i, c, res_eta(c, q.w));
    var v = vec4<f32>(residual_sq(g, ng + vec4<f32>(q.xyz, 0.0), e, c, i), 0.0, 0.0, max(-c.n_gap.w, 0.0));
    if HAS_ROLL {
        v.x += ext_restart(c, i);
    }
    return v;
}

// Setup (APGD): (η‖N(γ⁰ − 1)‖², ‖γ⁰ − 1‖²/η, 0, 0) for the initial Lipschitz estimate in
// the metric diag(1/η) (Chrono's ‖N(γ⁰ − 1)‖ / ‖γ⁰ − 1‖, preconditioned).
fn product_lip_item(i: u32) -> vec4<f32> {
    var v = vec4<f32>(0.0);
    let eta = rhs[i].w;
    if eta > 0.0 {
        let c = contacts_at(i);
        let e = row_eta(i, c, eta);
        let d = gam_at(SEG_GAMMA * params.capacity + i) - vec4<f32>(1.0, 1.0, 1.0, 0.0);
        let ng = product_e(c, i, d);
        let a = select(eta * dot(ng.xyz, ng.xyz), dot(ng.xyz, e.xyz * ng.xyz), is_joint(c.ids.w) || is_patch(c));
        v = vec4<f32>(a, sq_over_eta(d, e, c), 0.0, 0.0);
        if HAS_ROLL {
            let qe = ext_rhs(i);
            if qe.w > 0.0 {
                let de = gam_at(ext_at(0u, i)).xyz - vec3<f32>(1.0);
                let ne = ext_product(c);
                v += vec4<f32>(qe.w * dot(ne, ne), dot(de, de) / qe.w, 0.0, 0.0);
            }
        }
    }
    return v;
}

// A step's trial: Π_K(base − (mul η_i / div) ∘ grad) for constraint i with block scalar η
// (Jacobi: mul = ω, div = 1; APGD: mul = 1, div = L — exact identities, so both round as
// their own formulas). With `mu_in_w` the cone's μ comes from base.w and stays in the trial's.
fn project_step(base: vec4<f32>, grad: vec4<f32>, mul: f32, div: f32, eta: f32, i: u32) -> vec4<f32> {
    if mu_in_w() {
        var t = project_cone(base - ((mul * eta) / div) * grad, base.w);
        t.w = base.w;
        return t;
    }
    let c = contacts_at(i);
    return project_i(base - ((mul * row_eta(i, c, eta)) / div) * grad, c, i);
}

// Projected Jacobi: trial = Π_K(γ − ω η (Nγ + p)).
fn jacobi_item(i: u32) {
    let cap = params.capacity;
    let s = roles();
    let q = rhs[i];
    let g = gam_slot(s.cur, i);
    var t = vec4<f32>(0.0);
    if q.w > 0.0 {
        let grad = nv_slot(s.ncur, i) + vec4<f32>(q.xyz, 0.0);
        t = project_step(g, grad, params.omega, 1.0, q.w, i);
    }
    gam_put(gam_seg(s.trial) * cap + i, t);
    if HAS_ROLL {
        let qe = ext_rhs(i);
        var te = vec3<f32>(0.0);
        if qe.w > 0.0 {
            let grad = nv_at((NV_EXT + s.ncur) * cap + i).xyz + qe.xyz;
            te = project_ext(gam_at(ext_at(s.cur, i)).xyz - (params.omega * qe.w) * grad, ext_bounds(i));
        }
        gam_put(ext_at(s.trial, i), vec4<f32>(te, 0.0));
    }
}

// APGD: trial = Π_K(y − (η/L) ∘ (Ny + p)).
fn apgd_item(i: u32) {
    let cap = params.capacity;
    let s = roles();
    let yn = y_and_ny(s, i);
    let q = rhs[i];
    var t = vec4<f32>(0.0);
    if q.w > 0.0 {
        let grad = yn[1] + vec4<f32>(q.xyz, 0.0);
        t = project_step(yn[0], grad, 1.0, scal.lip, q.w, i);
    }
    gam_put(gam_seg(s.trial) * cap + i, t);
    if HAS_ROLL {
        let ye = ext_y_and_ny(s, i);
        let qe = ext_rhs(i);
        var te = vec3<f32>(0.0);
        if qe.w > 0.0 {
            let grad = ye[1] + qe.xyz;
            te = project_ext(ye[0] - (qe.w / scal.lip) * grad, ext_bounds(i));
        }
        gam_put(ext_at(s.trial, i), vec4<f32>(te, 0.0));
    }
}

// Lane j's partial of a sweep's product (t lanes): product_trial_item summed in ascending
// order over its constraints (< n) — the same sums on the multi-workgroup path and in
// solve_fused, whatever the dispatch. LANES_STRIDED (GPUs): j, j + t, j + 2t, …, so that a
// warp reads consecutive records; else (CPU adapters) a run of ⌈n/t⌉ consecutive ones, so
// that each SIMD lane streams through its own lines (strided, lavapipe's 10⁵-sphere sweep
// ran 20 % slower: too many interleaved streams for the prefetchers).
fn product_trial_lane(j: u32, t: u32, n: u32) -> vec4<f32> {
    var first = j;
    var step = t;
    var end = n;
    if !LANES_STRIDED {
        let run = (n + t - 1u) / t;
        first = j * run;
        step = 1u;
        end = min(first + run, n);
    }
    var acc = vec4<f32>(0.0);
    for (var i = first; i < end; i += step) {
        acc += product_trial_item(i);
    }
    return acc;
}

// N·trial; returns (‖r(trial)‖², dᵀ(N trial − Ny), Σ‖d_i‖²/η_i, gᵀ(trial − γ)) with
// d = trial − y and g = Ny + p: APGD's sufficient-decrease test f(trial) ≤ f(y) + gᵀd + L/2‖d‖²
// (metric diag(1/η)) is exactly dᵀN d ≤ L Σ‖d_i‖²/η_i for a quadratic f, which avoids the
// cancellation of f32 objectives.
fn product_trial_item(i: u32) -> vec4<f32> {
    let cap = params.capacity;
    let s = roles();
    let c = contacts_at(i);
    let t = gam_slot(s.trial, i);
    let nt = product_e(c, i, t);
    nv_put(nv_seg(s.ntrial) * cap + i, nt);
    let q = rhs[i];
    let p = vec4<f32>(q.xyz, 0.0);
    let e = row_eta(i, c, q.w);
    let r2 = residual_sq(t, nt + p, row_eta(i, c, res_eta(c, q.w)), c, i);
    var v = vec4<f32>(r2, 0.0, 0.0, 0.0);
    if params.kind != 0u {
        let ny = nv_slot(s.ny, i);
        let d = t - gam_slot(s.y, i);
        let g = ny + p;
        let dd = select(0.0, sq_over_eta(d, e, c), q.w > 0.0);
        v = vec4<f32>(r2, dot(d, nt - ny), dd, dot(g, t - gam_slot(s.cur, i)));
    }
    if HAS_ROLL {
        v += ext_trial(c, i, s);
    }
    return v;
}
