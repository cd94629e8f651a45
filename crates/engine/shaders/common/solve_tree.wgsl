// stages: solve_iterate, solve_reduce, solve_fused, solve_gauss, solve_slabs_step
// Fixed-order reduction helpers shared by the partial sums (solve_iterate), their total
// (solve_reduce) and the one-workgroup solver (solve_fused), so all three sum in one order.

var<workgroup> sh: array<vec4<f32>, WG>;

// The fixed-order total of every lane's `v` (sums; .w is a max when `w_max`), valid in lane 0
// only: the binary tree of halving strides (128, 64, …, 1) in two levels — 16 lanes each run
// its first four levels in registers on the 16 values congruent mod 16, then one lane the
// last four — bit-identical to the 8-barrier ladder with 2 barriers: lavapipe switches every
// fiber of the workgroup at each barrier.
fn tree_total(v: vec4<f32>, lid: u32, w_max: bool) -> vec4<f32> {
    sh[lid] = v;
    workgroupBarrier();
    if lid < 16u {
        sh[lid] = tree16(lid, 16u, w_max);
    }
    workgroupBarrier();
    var t = vec4<f32>(0.0);
    if lid == 0u {
        t = tree16(0u, 1u, w_max);
    }
    return t;
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
