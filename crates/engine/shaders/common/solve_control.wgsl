// stages: solve_reduce, solve_fused, solve_slabs_step
// What every stage that decides a solve's course shares (solve_reduce, solve_fused and the
// slab correction's decisions): the indirect arguments (x y z and a spare word per slot;
// past 65535 workgroups the grid turns 2-D, kernels use `linear_index`), the fixed-order
// total of the partials, and the convergence test and its end of the sweeps.

var<workgroup> sh_u: vec2<u32>;

fn set_args(slot: u32, groups: u32) {
    let x = min(groups, 65535u);
    let y = select(0u, (groups + x - 1u) / max(x, 1u), groups > 0u);
    args[slot] = x;
    args[slot + 1u] = y;
    args[slot + 2u] = select(0u, 1u, groups > 0u);
    args[slot + 3u] = 0u;
}

fn body_groups() -> u32 {
    return (params.bodies + WG - 1u) / WG;
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
    let t = tree_total(acc, lid, w_max);
    if lid == 0u {
        sh[0] = t;
    }
    workgroupBarrier();
    return sh[0];
}

// (number of set-up partials, converged flag), loaded so that every invocation sees the same
// value.
fn uniform_state(lid: u32) -> vec2<u32> {
    return uniform_count(lid, scal.n_groups);
}

// (count, converged flag) as invocation 0 read them, the same in every invocation (a loop
// bound with barriers inside).
fn uniform_count(lid: u32, count: u32) -> vec2<u32> {
    if lid == 0u {
        sh_u = vec2<u32>(count, scal.converged);
    }
    return workgroupUniformLoad(&sh_u);
}

// The convergence test (book: Architecture, "The step"): the RMS of the residual over the 3 rows of every contact,
// in m/s, against the tolerance. An absolute 2-norm grows with √contacts and sits above any
// fixed tolerance at the f32 floor of a large settled bed; a per-row measure does not.
fn rms_converged(sum_sq: f32) -> bool {
    let rows = f32(3u * max(scal.n_contacts, 1u));
    return sqrt(sum_sq / rows) <= params.tolerance;
}

fn converge() {
    scal.converged = 1u;
    set_args(0u, 0u);
    set_args(4u, 0u);
    set_args(8u, 0u);
    // Coloured Gauss–Seidel's colours, left-over gather, extrapolation and hubs' gather (its
    // arguments buffer is longer).
    if arrayLength(&args) > GS_ARGS {
        for (var k = 0u; k <= GS_COLOURS + 1u; k++) {
            set_args(GS_ARGS + 4u * k, 0u);
        }
        set_args(GS_ARGS + 4u * (GS_COLOURS + 3u), 0u);
    }
}
