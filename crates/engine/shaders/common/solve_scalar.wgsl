// stages: solve_reduce, solve_fused
// The solver's scalar state machine (see solve_reduce), shared with the one-workgroup solver
// (solve_fused).

fn contact_groups() -> u32 {
    return scal.n_groups;
}

// Sum (.w: max when `w_max`) of partials[0 .. n_groups] (the per-workgroup trees of the
// set-up products), in a fixed order; result in sh[0].
fn reduce_partials(lid: u32, w_max: bool) -> vec4<f32> {
    return reduce_count(lid, uniform_state(lid), w_max);
}

// Sum of a sweep's partials[0 .. n_parts] (product_trial's lanes), likewise.
fn reduce_parts(lid: u32) -> vec4<f32> {
    return reduce_count(lid, uniform_count(lid, scal.n_parts), false);
}

// Sum of the first `st.x` partials; nothing to reduce once converged (`st.y`: the recorded
// sweeps left are then almost free).
fn reduce_count(lid: u32, st: vec2<u32>, w_max: bool) -> vec4<f32> {
    return sum_partials(lid, select(st.x, 0u, st.y != 0u), w_max);
}

// product_trial's lanes for n constraints (T = n_parts, a multiple of WG): each takes at
// least PER_LANE_MIN, and there are at most PARTS_MAX + WG of them.
fn parts_for(n: u32) -> u32 {
    let per_lane = max(PER_LANE_MIN, (n + PARTS_MAX - 1u) / PARTS_MAX);
    return ((n + per_lane * WG - 1u) / (per_lane * WG)) * WG;
}

// The scalar decisions after each reduction, run by one invocation on the summed partials
// `s` (solve_reduce's entry points, and solve_fused after the same sums).

// After product_init: residual of γ⁰, max penetration.
fn decide_init(s: vec4<f32>) {
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
fn decide_lip(s: vec4<f32>) {
    let l = sqrt(s.x) / sqrt(s.y);
    // `l == l` is false for NaN; the bound rejects +inf.
    scal.lip = select(1.0, l, l > 0.0 && l < 3.0e38);
    scal.theta = 1.0;
}

// An accepted trial becomes the current iterate, the current the previous (and the trial
// the best when `better`); y goes over the previous unless that is the best, the next trial
// to a slot none of them holds (common/solve_roles.wgsl).
fn accept_trial(better: bool) {
    let s = roles();
    var n = s;
    n.prev = s.cur;
    n.cur = s.trial;
    n.best = select(s.best, s.trial, better);
    n.y = select(n.prev, free_slot(n.cur, n.prev, n.best, n.best), n.prev == n.best);
    n.trial = free_slot(n.cur, n.prev, n.best, n.y);
    n.nprev = s.ncur;
    n.ncur = s.ntrial;
    n.ny = n.nprev;
    n.ntrial = free_slot(n.ncur, n.nprev, n.nprev, n.nprev);
    n.formed = false;
    scal.roles = pack_roles(n);
    scal.accepted = 1u;
}

// The lowest slot that is none of a, b, c, d.
fn free_slot(a: u32, b: u32, c: u32, d: u32) -> u32 {
    var k = 0u;
    while k == a || k == b || k == c || k == d {
        k += 1u;
    }
    return k;
}

// A rejected trial: the next step starts from the same y, now stored.
fn reject_trial() {
    var s = roles();
    s.formed = true;
    scal.roles = pack_roles(s);
    scal.accepted = 0u;
}

// After a projected Jacobi sweep (not yet converged): the trial is always accepted (and is
// what the solve returns if it is the last).
fn decide_jacobi(s: vec4<f32>) {
    let k = scal.iters;
    scal.iters = k + 1u;
    let r = sqrt(s.x);
    scal.res = r;
    scal.best = r;
    accept_trial(true);
    history[k] = vec4<f32>(r, r, 0.0, 1.0);
    if rms_converged(s.x) {
        converge();
    }
}

// After a Gauss–Seidel sweep (not yet converged; s.x: the residual of the swept γ, s.y: the
// restart test's product Σ (y − x)·(x − x_prev) over the sweep's visits): the momentum of the
// extrapolation that follows (solve_gauss `gauss_extrapolate`), Nesterov's sequence as APGD's,
// restarted (β = 0) when the sweep's step y − x and the progress x − x_prev point apart —
// O'Donoghue & Candès's (2015) gradient restart, as APGD's, with the sweep's step in place of
// the gradient — or when the residual is above GS_MOMENTUM_RISE × the lowest since the
// momentum last (re)started (a diverging momentum, which over-relaxed steps can give). Not
// tested while θ = 1 (the cone problem's first sweep, whose x_prev is a stale slot, or the
// sweep after a restart, where the product is −‖y − x‖²).
fn decide_gauss(s: vec4<f32>) {
    let k = scal.iters;
    scal.iters = k + 1u;
    let r = sqrt(s.x);
    let th = scal.theta;
    let fresh = th == 1.0;
    let low = select(min(scal.low, r), r, fresh);
    var th_new = 0.5 * (-th * th + th * sqrt(th * th + 4.0));
    var beta = th * (1.0 - th) / (th * th + th_new);
    if !fresh && (s.y > 0.0 || r > f32(GS_MOMENTUM_RISE) * low) {
        beta = 0.0;
        th_new = 1.0;
    }
    scal.theta = th_new;
    scal.beta = beta;
    scal.res = r;
    scal.best = r;
    scal.low = low;
    history[k] = vec4<f32>(r, low, beta, 1.0);
    if rms_converged(s.x) {
        converge();
    }
}

// After an APGD sweep (not yet converged): accept the trial, or backtrack.
fn decide_apgd(s: vec4<f32>) {
    let k = scal.iters;
    scal.iters = k + 1u;
    let r = sqrt(s.x);
    scal.res = r;
    let lip = scal.lip;
    if s.y > lip * s.z {
        // Sufficient decrease failed: double L and retry from the same y.
        scal.lip = 2.0 * lip;
        reject_trial();
        history[k] = vec4<f32>(r, scal.best, lip, 0.0);
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
    if better {
        scal.best = r;
    }
    scal.theta = th_new;
    scal.beta = beta;
    scal.lip = 0.9 * lip;
    accept_trial(better);
    history[k] = vec4<f32>(r, scal.best, lip, 1.0);
    if rms_converged(s.x) {
        converge();
    }
}
