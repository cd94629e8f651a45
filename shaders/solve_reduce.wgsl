// CCP solver, scalar logic (DESIGN §2): one workgroup reduces the per-workgroup partials of
// solve_iterate in a fixed order (deterministic), then one thread runs the branchy scalar
// logic of projected Jacobi or APGD (Mazhar et al. 2015 / Chrono's ChSolverAPGD) on the state
// in `scal`, and writes the indirect dispatch arguments of the next sweep: zero groups once
// converged (so the remaining recorded sweeps cost a few empty dispatches each, no CPU sync).
// An accepted trial is committed lazily by the next sweep's step kernel (or by `commit` after
// the sweeps), which reads `scal.accepted`; a rejected APGD trial (backtracking: L ← 2L, retry
// from the same y) clears it.

@group(0) @binding(0) var<uniform> params: SolveParams;
@group(0) @binding(1) var<storage, read> counts: array<u32>;
@group(0) @binding(2) var<storage, read> partials: array<vec4<f32>>;
@group(0) @binding(3) var<storage, read_write> scal: Scalars;
// Indirect arguments (x, y, z, pad): [0] per-contact work, [4] per-body work, [8] commit,
// [12] every contact (never zeroed: setup and the end of the solve), [16] per-contact and
// [20] per-body work of the exact cone's outer pass (zeroed at its fixed point).
@group(0) @binding(4) var<storage, read_write> args: array<u32>;
// One vec4 per sweep: (residual of the trial, best residual, L, accepted).
@group(0) @binding(5) var<storage, read_write> history: array<vec4<f32>>;
@group(0) @binding(6) var<storage, read_write> step_stats: array<u32>;

var<workgroup> sh: array<vec4<f32>, WG>;
var<workgroup> sh_u: vec2<u32>;

fn set_args(slot: u32, groups: u32) {
    let x = min(groups, 65535u);
    let y = select(0u, (groups + x - 1u) / max(x, 1u), groups > 0u);
    args[slot] = x;
    args[slot + 1u] = y;
    args[slot + 2u] = select(0u, 1u, groups > 0u);
    args[slot + 3u] = 0u;
}

fn contact_groups() -> u32 {
    return scal.n_groups;
}

fn body_groups() -> u32 {
    return (params.counts.x + WG - 1u) / WG;
}

// Sum (.w: max when `w_max`) of partials[0 .. n_groups], in a fixed order; result in sh[0].
// Also returns (via `uniform_state`) whether the solve has converged.
fn reduce_partials(lid: u32, w_max: bool) -> vec4<f32> {
    // Nothing to reduce once converged (the recorded sweeps left are then almost free).
    let st = uniform_state(lid);
    return sum_partials(lid, select(st.x, 0u, st.y != 0u), w_max);
}

// Sum (.w: max when `w_max`) of partials[0 .. ng] in a fixed order: strided per lane, then
// the halving-stride tree in two levels of 16 (bit-identical to the 8-barrier ladder with 3
// barriers: lavapipe switches every fiber of the workgroup at each barrier).
fn sum_partials(lid: u32, ng: u32, w_max: bool) -> vec4<f32> {
    var acc = vec4<f32>(0.0);
    for (var g = lid; g < ng; g += WG) {
        let o = partials[g];
        acc = vec4<f32>(acc.xyz + o.xyz, select(acc.w + o.w, max(acc.w, o.w), w_max));
    }
    sh[lid] = acc;
    workgroupBarrier();
    if lid < 16u {
        sh[lid] = tree16(lid, 16u, w_max);
    }
    workgroupBarrier();
    if lid == 0u {
        sh[0] = tree16(0u, 1u, w_max);
    }
    workgroupBarrier();
    return sh[0];
}

// The halving-stride tree over sh[base + stride * j], j < 16: (j, j + 8), (j, j + 4), …
// Written out: a local array indexed in loops lives in per-lane scratch memory on lavapipe
// and cost 5× the barriers it saves.
fn tree16(base: u32, s: u32, w_max: bool) -> vec4<f32> {
    let a0 = combine(sh[base], sh[base + 8u * s], w_max);
    let a1 = combine(sh[base + s], sh[base + 9u * s], w_max);
    let a2 = combine(sh[base + 2u * s], sh[base + 10u * s], w_max);
    let a3 = combine(sh[base + 3u * s], sh[base + 11u * s], w_max);
    let a4 = combine(sh[base + 4u * s], sh[base + 12u * s], w_max);
    let a5 = combine(sh[base + 5u * s], sh[base + 13u * s], w_max);
    let a6 = combine(sh[base + 6u * s], sh[base + 14u * s], w_max);
    let a7 = combine(sh[base + 7u * s], sh[base + 15u * s], w_max);
    let b0 = combine(a0, a4, w_max);
    let b1 = combine(a1, a5, w_max);
    let b2 = combine(a2, a6, w_max);
    let b3 = combine(a3, a7, w_max);
    return combine(combine(b0, b2, w_max), combine(b1, b3, w_max), w_max);
}

// One node of the tree: m the lower half's value, o the upper's (the ladder's order).
fn combine(m: vec4<f32>, o: vec4<f32>, w_max: bool) -> vec4<f32> {
    return vec4<f32>(m.xyz + o.xyz, select(m.w + o.w, max(m.w, o.w), w_max));
}

// (number of partials, converged flag), loaded so that every invocation sees the same value.
fn uniform_state(lid: u32) -> vec2<u32> {
    if lid == 0u {
        sh_u = vec2<u32>(scal.n_groups, scal.converged);
    }
    return workgroupUniformLoad(&sh_u);
}

// The convergence test (DESIGN §2): the RMS of the residual over the 3 rows of every contact,
// in m/s, against the tolerance. An absolute 2-norm grows with √contacts and sits above any
// fixed tolerance at the f32 floor of a large settled bed; a per-row measure does not.
fn rms_converged(sum_sq: f32) -> bool {
    let rows = f32(3u * max(scal.n_contacts, 1u));
    return sqrt(sum_sq / rows) <= params.coef.w;
}

fn converge() {
    scal.converged = 1u;
    set_args(0u, 0u);
    set_args(4u, 0u);
}

@compute @workgroup_size(256)
fn init_args(@builtin(local_invocation_index) lid: u32) {
    if lid != 0u {
        return;
    }
    // Contacts, then the joint blocks the joint stage appended (params.model.w).
    let nc = min(counts[0] + params.model.w, params.counts.y);
    let ng = (nc + WG - 1u) / WG;
    scal.n_contacts = nc;
    scal.n_groups = ng;
    scal.lip = 1.0;
    scal.theta = 1.0;
    scal.beta = 0.0;
    scal.best = 0.0;
    scal.res = 0.0;
    scal.res0 = 0.0;
    scal.pen = 0.0;
    scal.accepted = 0u;
    scal.is_best = 0u;
    scal.converged = 0u;
    scal.iters = 0u;
    set_args(0u, ng);
    set_args(4u, body_groups());
    set_args(8u, ng);
    set_args(12u, ng);
    scal.outer = 0u;
    scal.outer_done = 0u;
    set_args(16u, ng);
    set_args(20u, body_groups());
}

// After product_init: residual of γ⁰, max penetration.
@compute @workgroup_size(256)
fn reduce_init(@builtin(local_invocation_index) lid: u32) {
    let s = reduce_partials(lid, true);
    if lid != 0u {
        return;
    }
    let r = sqrt(s.x);
    scal.res0 = r;
    scal.res = r;
    scal.best = r;
    scal.pen = s.w;
    if rms_converged(s.x) {
        converge();
    }
}

// After product_lip (APGD): L⁰ = ‖N(γ⁰ − 1)‖ / ‖γ⁰ − 1‖ in the metric diag(1/η)
// (1 when that is 0 or not finite; the metric bounds the true L by 3).
@compute @workgroup_size(256)
fn reduce_lip(@builtin(local_invocation_index) lid: u32) {
    let s = reduce_partials(lid, false);
    if lid != 0u || scal.converged != 0u {
        return;
    }
    let l = sqrt(s.x) / sqrt(s.y);
    // `l == l` is false for NaN; the bound rejects +inf.
    scal.lip = select(1.0, l, l > 0.0 && l < 3.0e38);
    scal.theta = 1.0;
}

@compute @workgroup_size(256)
fn reduce_jacobi(@builtin(local_invocation_index) lid: u32) {
    let s = reduce_partials(lid, false);
    if lid != 0u {
        return;
    }
    if scal.converged != 0u {
        return;
    }
    let k = scal.iters;
    scal.iters = k + 1u;
    let r = sqrt(s.x);
    scal.res = r;
    scal.best = r;
    scal.accepted = 1u;
    history[k] = vec4<f32>(r, r, 0.0, 1.0);
    set_args(8u, scal.n_groups);
    if rms_converged(s.x) {
        converge();
    }
}

@compute @workgroup_size(256)
fn reduce_apgd(@builtin(local_invocation_index) lid: u32) {
    let s = reduce_partials(lid, false);
    if lid != 0u {
        return;
    }
    if scal.converged != 0u {
        return;
    }
    let k = scal.iters;
    scal.iters = k + 1u;
    let r = sqrt(s.x);
    scal.res = r;
    let lip = scal.lip;
    if s.y > lip * s.z {
        // Sufficient decrease failed: double L and retry from the same y (no commit).
        scal.lip = 2.0 * lip;
        scal.accepted = 0u;
        scal.is_best = 0u;
        history[k] = vec4<f32>(r, scal.best, lip, 0.0);
        set_args(8u, 0u);
        return;
    }
    let th = scal.theta;
    var th_new = 0.5 * (-th * th + th * sqrt(th * th + 4.0));
    var beta = th * (1.0 - th) / (th * th + th_new);
    // Adaptive restart when the gradient and the step disagree.
    if s.w > 0.0 {
        beta = 0.0;
        th_new = 1.0;
    }
    let better = r < scal.best;
    scal.is_best = select(0u, 1u, better);
    if better {
        scal.best = r;
    }
    scal.theta = th_new;
    scal.beta = beta;
    scal.lip = 0.9 * lip;
    scal.accepted = 1u;
    history[k] = vec4<f32>(r, scal.best, lip, 1.0);
    set_args(8u, scal.n_groups);
    if rms_converged(s.x) {
        converge();
    }
}

// Solver statistics into the contract's step_stats: [2] iterations, [3] residual of the
// returned impulses (f32 bits), [4] max penetration (f32 bits).
@compute @workgroup_size(256)
fn finish(@builtin(local_invocation_index) lid: u32) {
    if lid != 0u {
        return;
    }
    step_stats[2] = scal.iters;
    step_stats[3] = bitcast<u32>(scal.best);
    step_stats[4] = bitcast<u32>(scal.pen);
    // [6] Painlevé contacts (written by painleve_count), [7] cone problems solved (1 for the
    // relaxed cone).
    step_stats[7] = max(scal.outer, 1u);
}

// Exact cone, after solve_iterate's outer_offset: the first call (before any solve) takes the
// residual of γ⁰ and the penetration like reduce_init; a later one ends the outer iterations
// when no contact's correction s moved by more than the tolerance (γ already solves the
// problem with the new offset up to that) or the last cone problem was not solved to the
// tolerance, else restarts the scalar state of the solver for
// one more cone problem from the current γ.
@compute @workgroup_size(256)
fn outer_reduce(@builtin(local_invocation_index) lid: u32) {
    if lid == 0u {
        sh_u = vec2<u32>(scal.n_groups, scal.outer_done);
    }
    let st = workgroupUniformLoad(&sh_u);
    let s = sum_partials(lid, select(st.x, 0u, st.y != 0u), true);
    if lid != 0u || st.y != 0u {
        return;
    }
    let r = sqrt(s.x);
    if scal.outer == 0u {
        scal.pen = s.w;
        scal.res0 = r;
    } else if s.z == 0.0 || scal.converged == 0u {
        // The fixed point, or the last cone problem hit the sweep cap: its error then hides
        // any better offset, and the offset of its solution is carried to the next step
        // through the warm start instead (the fixed point iterated in time).
        scal.outer_done = 1u;
        scal.accepted = 0u;
        converge();
        set_args(16u, 0u);
        set_args(20u, 0u);
        return;
    }
    scal.outer += 1u;
    scal.lip = 1.0;
    scal.theta = 1.0;
    scal.beta = 0.0;
    scal.accepted = 0u;
    scal.is_best = 0u;
    scal.converged = 0u;
    scal.res = r;
    scal.best = r;
    set_args(0u, scal.n_groups);
    set_args(4u, body_groups());
    if rms_converged(s.x) {
        converge();
    }
}

// After solve_iterate's painleve: step_stats[6] = sliding contacts with A ≤ 0 (the partials
// are exact small integers in f32, summed in a fixed order).
@compute @workgroup_size(256)
fn painleve_count(@builtin(local_invocation_index) lid: u32) {
    let s = sum_partials(lid, scal.n_groups, false);
    if lid == 0u {
        step_stats[6] = u32(s.x);
    }
}
