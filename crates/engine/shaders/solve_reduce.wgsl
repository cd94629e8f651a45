// CCP solver, scalar logic (book: Architecture, "The step"): one workgroup reduces the per-workgroup partials of
// solve_iterate in a fixed order (deterministic), then one thread runs the branchy scalar
// logic of projected Jacobi or APGD (Mazhar et al. 2015 / Chrono's ChSolverAPGD) on the state
// in `scal`, and writes the indirect dispatch arguments of the next sweep: zero groups once
// converged (so the remaining recorded sweeps cost a few empty dispatches each, no CPU sync).
// An accepted trial becomes the current iterate by renaming slots (`scal.roles`,
// common/solve_roles.wgsl); a rejected APGD trial (backtracking: L ← 2L, retry from the same
// y) leaves them.

@group(0) @binding(0) var<uniform> params: SolveParams;
@group(0) @binding(1) var<storage, read> counts: array<u32>;
@group(0) @binding(2) var<storage, read> partials: array<vec4<f32>>;
@group(0) @binding(3) var<storage, read_write> scal: Scalars;
// Indirect arguments (x, y, z, pad): [0] per-contact work, [4] per-body work, [8] a sweep's
// product (n_parts invocations), [12] every contact (never zeroed: setup and the end of the
// solve), [16] per-contact and [20] per-body work of the exact cone's outer pass (zeroed at
// its fixed point).
@group(0) @binding(4) var<storage, read_write> args: array<u32>;
// One vec4 per sweep: (residual of the trial, best residual, L, accepted).
@group(0) @binding(5) var<storage, read_write> history: array<vec4<f32>>;
@group(0) @binding(6) var<storage, read_write> step_stats: array<u32>;
// Coloured Gauss–Seidel: constraints per colour (solve_gauss's colouring), then the words
// from GS_GRAPH_DIFFERS on.
@group(0) @binding(7) var<storage, read> colour_count: array<u32>;

@compute @workgroup_size(256)
fn init_args(@builtin(local_invocation_index) lid: u32) {
    if lid != 0u {
        return;
    }
    // Contacts, then the joint blocks the joint stage appended (params.joint_blocks).
    let nc = min(counts[0] + params.joint_blocks, params.capacity);
    let ng = (nc + WG - 1u) / WG;
    scal.n_contacts = nc;
    scal.n_groups = ng;
    scal.n_parts = parts_for(nc);
    scal.lip = 1.0;
    scal.theta = 1.0;
    scal.beta = 0.0;
    scal.best = 0.0;
    scal.res = 0.0;
    scal.res0 = 0.0;
    scal.pen = 0.0;
    scal.accepted = 0u;
    scal.roles = initial_roles();
    scal.converged = 0u;
    scal.iters = 0u;
    // Painlevé contacts: painleve_count overwrites it where the diagnostic runs.
    step_stats[6] = 0u;
    set_args(0u, ng);
    set_args(4u, body_groups());
    set_args(8u, scal.n_parts / WG);
    set_args(12u, ng);
    scal.outer = 0u;
    scal.outer_done = 0u;
    set_args(16u, ng);
    set_args(20u, body_groups());
}

// Coloured Gauss–Seidel, before a cone problem's sweeps: each colour's dispatch covers every
// constraint (each checks its colour) when the colour has constraints, and the left-over
// class's gather of Δv covers every body when it has some, else the hubs' gather every hub
// (a workgroup each); nothing once the solve converged.
@compute @workgroup_size(256)
fn colour_args(@builtin(local_invocation_index) lid: u32) {
    if lid != 0u {
        return;
    }
    let on = scal.converged == 0u;
    // The momentum starts afresh with each cone problem (solve_scalar `decide_gauss`).
    scal.theta = 1.0;
    scal.beta = 0.0;
    for (var k = 0u; k < GS_COLOURS; k++) {
        set_args(GS_ARGS + 4u * k, select(0u, (colour_count[k] + WG - 1u) / WG, on));
    }
    // After the colours: every body's Δv gathered again when some constraint is left over,
    // else each hub's (solve_gauss `hub_gather`, a workgroup per hub).
    let left = colour_count[GS_COLOURS - 1u] != 0u;
    set_args(GS_ARGS + 4u * GS_COLOURS, select(0u, body_groups(), on && left));
    set_args(GS_ARGS + 4u * (GS_COLOURS + 3u), select(0u, colour_count[GS_HUBS], on && !left));
    // The extrapolation's invocations: one per constraint and one per body.
    let extrapolate = max(scal.n_groups, body_groups());
    set_args(GS_ARGS + 4u * (GS_COLOURS + 1u), select(0u, extrapolate, on));
}

// Coloured Gauss–Seidel, before the colouring: the arguments of its reset, rounds and close
// (solve_gauss), every constraint when `colour_plan` decided to recolour, none when the
// stored colouring is this step's graph's.
@compute @workgroup_size(256)
fn colour_rounds_args(@builtin(local_invocation_index) lid: u32) {
    if lid != 0u {
        return;
    }
    let recolour = colour_count[GS_RECOLOUR] != 0u;
    set_args(GS_ARGS + 4u * (GS_COLOURS + 2u), select(0u, scal.n_groups, recolour));
}

// After a Gauss–Seidel sweep and its residual (solve_gauss `gauss_residual`).
@compute @workgroup_size(256)
fn reduce_gauss(@builtin(local_invocation_index) lid: u32) {
    let s = reduce_partials(lid, false);
    if lid == 0u && scal.converged == 0u {
        decide_gauss(s);
    }
}

// After product_init: residual of γ⁰, max penetration.
@compute @workgroup_size(256)
fn reduce_init(@builtin(local_invocation_index) lid: u32) {
    let s = reduce_partials(lid, true);
    if lid == 0u {
        decide_init(s);
    }
}

// After product_lip (APGD): the initial Lipschitz estimate.
@compute @workgroup_size(256)
fn reduce_lip(@builtin(local_invocation_index) lid: u32) {
    let s = reduce_partials(lid, false);
    if lid == 0u && scal.converged == 0u {
        decide_lip(s);
    }
}

@compute @workgroup_size(256)
fn reduce_jacobi(@builtin(local_invocation_index) lid: u32) {
    let s = reduce_parts(lid);
    if lid == 0u && scal.converged == 0u {
        decide_jacobi(s);
    }
}

@compute @workgroup_size(256)
fn reduce_apgd(@builtin(local_invocation_index) lid: u32) {
    let s = reduce_parts(lid);
    if lid == 0u && scal.converged == 0u {
        decide_apgd(s);
    }
}

// Solver statistics into the contract's step_stats: [2] iterations, [3] residual of the
// returned impulses as the tolerance measures it (RMS per row, m/s; f32 bits), [4] max
// penetration (f32 bits).
@compute @workgroup_size(256)
fn finish(@builtin(local_invocation_index) lid: u32) {
    if lid != 0u {
        return;
    }
    step_stats[2] = scal.iters;
    step_stats[3] = bitcast<u32>(scal.best / sqrt(f32(3u * max(scal.n_contacts, 1u))));
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
    // γ (slot 0, where `finish` left the last problem's answer) starts the next.
    scal.roles = initial_roles();
    scal.converged = 0u;
    scal.res = r;
    scal.best = r;
    set_args(0u, scal.n_groups);
    set_args(4u, body_groups());
    set_args(8u, scal.n_parts / WG);
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
