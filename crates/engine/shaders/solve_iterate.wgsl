// CCP solver, per-contact passes of the iterations (book: Architecture, "The step"): the second half of the
// matrix-free product, (Nγ)_i = D_iᵀ (Δv_A, Δv_B), fused with the per-workgroup partial sums
// the scalar logic needs; the projected Jacobi and APGD steps. Every sweep is 4 dispatches:
//   step (here) → gather (solve_schur) → product (here) → reduce (solve_reduce).
// The scalar state (L, θ, β, residuals, flags) is read from `scal`; solve_reduce owns it.
// Dispatch sizes come from indirect arguments that solve_reduce zeroes once converged. The
// iterates' slots are renamed on acceptance, not copied (common/solve_roles.wgsl).
// Residual of γ (per contact, g_d = η_i): r_i = (γ_i − Π_K(γ_i − η_i (Nγ + p)_i)) / η_i.
// APGD works in the metric diag(1/η) (see solve_assemble): step y − (η/L)∘∇f, and the
// sufficient-decrease test dᵀN d ≤ L Σ_i ‖d_i‖²/η_i.

// Segments of `gam` and `nv`: SEG_* in common/solve.wgsl. The per-contact arithmetic is in
// common/solve_sweep.wgsl (shared with solve_fused).

@group(0) @binding(0) var<uniform> params: SolveParams;
@group(0) @binding(1) var<storage, read> contacts: array<Contact>; // chunked(4)
@group(0) @binding(2) var<storage, read> dv: array<vec4<f32>>;
@group(0) @binding(3) var<storage, read_write> gam: array<vec4<f32>>; // chunked(8)
@group(0) @binding(4) var<storage, read_write> nv: array<vec4<f32>>; // chunked(4)
// read_write: the exact cone's outer pass rewrites p_n.
@group(0) @binding(5) var<storage, read_write> rhs: array<vec4<f32>>;
@group(0) @binding(6) var<storage, read_write> partials: array<vec4<f32>>;
// Uniform here (solve_reduce and solve_fused write it as storage, in other dispatches):
// llvmpipe loads a storage value once per SIMD lane, in a loop, and a uniform once.
@group(0) @binding(7) var<uniform> scal: Scalars;
// For the Painlevé diagnostic (M⁻¹ in world frame).
@group(0) @binding(8) var<storage, read> rot: array<vec4<f32>>;
@group(0) @binding(9) var<storage, read> mass_props: array<vec4<f32>>;

// Setup: Nγ⁰ and Ny⁰; partials of the residual of γ⁰ and the penetration.
@compute @workgroup_size(256)
fn product_init(
    @builtin(global_invocation_id) gid: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
    @builtin(local_invocation_index) lid: u32,
    @builtin(workgroup_id) wid: vec3<u32>,
) {
    let i = linear_index(gid, nwg);
    var v = vec4<f32>(0.0);
    if i < scal.n_contacts {
        v = product_init_item(i);
    }
    reduce_to_partial(v, lid, wid.x + wid.y * nwg.x, true);
}

// Setup (APGD): partials of the initial Lipschitz estimate.
@compute @workgroup_size(256)
fn product_lip(
    @builtin(global_invocation_id) gid: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
    @builtin(local_invocation_index) lid: u32,
    @builtin(workgroup_id) wid: vec3<u32>,
) {
    let i = linear_index(gid, nwg);
    var v = vec4<f32>(0.0);
    if i < scal.n_contacts {
        v = product_lip_item(i);
    }
    reduce_to_partial(v, lid, wid.x + wid.y * nwg.x, false);
}

// A projected Jacobi step.
@compute @workgroup_size(256)
fn jacobi_step(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = linear_index(gid, nwg);
    if i >= scal.n_contacts {
        return;
    }
    jacobi_item(i);
}

// An APGD step.
@compute @workgroup_size(256)
fn apgd_step(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = linear_index(gid, nwg);
    if i >= scal.n_contacts {
        return;
    }
    apgd_item(i);
}

// N·trial and the partials of the residual and of APGD's sufficient-decrease test: one per
// invocation, over its constraints (common/solve_sweep.wgsl `product_trial_lane`).
@compute @workgroup_size(256)
fn product_trial(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let j = linear_index(gid, nwg);
    let t = scal.n_parts;
    if j < t {
        partials[j] = product_trial_lane(j, t, scal.n_contacts);
    }
}

// After the sweeps: the returned impulses into slot 0 (see `finish_item`).
@compute @workgroup_size(256)
fn finish(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = linear_index(gid, nwg);
    if i >= scal.n_contacts {
        return;
    }
    finish_item(i);
}

// Exact cone, outer pass (De Saxcé / Acary–Cadoux fixed point; src/model/rows): from the
// current γ (Δv gathered by solve_schur), u = Nγ + p with the uncorrected p_n, the new
// correction s = μ‖u_T‖ and p_n ← aux.x + s; Nγ restarts at γ (outer_reduce resets the slots).
// Partials (‖r(γ)‖² at the new offset, 0, contacts whose s moved by more than the tolerance,
// max penetration). solve_reduce's outer_reduce decides whether another cone problem runs.
@compute @workgroup_size(256)
fn outer_offset(
    @builtin(global_invocation_id) gid: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
    @builtin(local_invocation_index) lid: u32,
    @builtin(workgroup_id) wid: vec3<u32>,
) {
    let i = linear_index(gid, nwg);
    var v = vec4<f32>(0.0);
    if i < scal.n_contacts {
        let cap = params.capacity;
        let c = contacts_at(i);
        let ng = product_e(c, i, gam_at(SEG_GAMMA * cap + i));
        let a = gam_at(SEG_AUX * cap + i);
        let q = rhs[i];
        let s = slip_offset(c, friction_of(c), ng.x + a.x, ng.yz + q.yz, q.w > 0.0);
        // Patch blocks have no normal row: no correction, their aux and p stay as assembled.
        let pb = is_patch(c);
        let moved = abs(s - a.y) > params.tolerance && !pb;
        gam_put(SEG_AUX * cap + i, select(vec4<f32>(a.x, s, a.zw), a, pb));
        let p = select(vec3<f32>(a.x + s, q.yz), q.xyz, pb);
        rhs[i] = vec4<f32>(p, q.w);
        nv_put(SEG_NGAMMA * cap + i, ng);
        let g = gam_at(SEG_GAMMA * cap + i);
        let r2 = residual_sq(g, ng + vec4<f32>(p, 0.0), row_eta(i, c, res_eta(c, q.w)), c, i);
        v = vec4<f32>(r2, 0.0, select(0.0, 1.0, moved), max(-c.n_gap.w, 0.0));
        if HAS_ROLL {
            v.x += ext_restart(c, i);
        }
    }
    reduce_to_partial(v, lid, wid.x + wid.y * nwg.x, true);
}

// Painlevé diagnostic (Song et al. 2001), for contacts with rigid tangential rows (E_T = 0: Coulomb,
// compliant normal): a contact is sliding when its free tangential velocity
// v_T = (p_u, p_w) exceeds the solver tolerance; friction then acts along f̂ = −v_T/‖v_T‖ and
// A = J_N M⁻¹ (J_N + μ J_f̂)ᵀ ≤ 0 means that a normal impulse with its friction makes the
// bodies approach faster: the rigid problem has no or several solutions there.
// Partials (number of such contacts, 0, 0, 0); solve_reduce's `painleve_count` sums them.
@compute @workgroup_size(256)
fn painleve(
    @builtin(global_invocation_id) gid: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
    @builtin(local_invocation_index) lid: u32,
    @builtin(workgroup_id) wid: vec3<u32>,
) {
    let i = linear_index(gid, nwg);
    var v = vec4<f32>(0.0);
    if i < scal.n_contacts {
        let c = contacts_at(i);
        let q = rhs[i];
        let mu = friction_of(c);
        let t = length(q.yz);
        // Rigid tangential rows only: a bristle / tanh / LuGre contact (E_T > 0) is compliant
        // tangentially, and its p_T holds the model's offset (−E_T γ_T⁻, c0/c1), not v_T.
        var rigid = true;
        if models_on() {
            rigid = gam_at(SEG_AUX * params.capacity + i).w == 0.0;
        }
        if mu > 0.0 && q.w > 0.0 && t > params.tolerance && rigid {
            let n = c.n_gap.xyz;
            let f = -(q.y * tangent_u(n) + q.z * tangent_w(n)) / t;
            let pdir = n + mu * f;
            // The normal velocity change per unit normal impulse of direction P = n + μ f̂.
            let a = body_inverse_mass_between(c.ids.x, c.ra.xyz, n, pdir)
                + body_inverse_mass_between(c.ids.y, c.rb.xyz, n, pdir);
            v.x = select(0.0, 1.0, a <= 0.0);
        }
    }
    reduce_to_partial(v, lid, wid.x + wid.y * nwg.x, false);
}

// Rolling and spinning rows 3–5 (src/model/rows, "Rolling and spinning"): read and written
// only by HAS_ROLL pipelines, in gam segments 6–11 and nv segments 3–5.

