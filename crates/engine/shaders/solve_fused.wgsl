// CCP solver in one workgroup: the whole cone problem after assembly —
// Nγ⁰ and its residual, APGD's Lipschitz estimate, the sweeps until the tolerance or the cap,
// and the returned impulses into slot 0 — in one dispatch. A sweep is 4 dispatches on the
// multi-workgroup path (solve_iterate / solve_schur / solve_reduce), each with a launch cost on
// lavapipe whatever its size (book: Benchmarks, "Small problems in one dispatch"); here the stages of a sweep are separated by
// barriers and the loop ends when the solve has converged. One workgroup runs on one core
// (one SM on a GPU), so this pays only for problems of up to a few thousand contacts
// (`Simulation::set_fused_max`). `solve_tail`
// finishes a multi-workgroup solve whose recorded sweeps did not reach the tolerance.
//
// Same arithmetic as the multi-workgroup path, bit for bit: the per-constraint work is the
// same functions (common/solve_sweep.wgsl, solve_gather.wgsl), the partial sums are taken as
// there (a sweep's per lane of product_trial, the set-up's per block of WG constraints as per
// workgroup), and summed by the same code (common/solve_scalar.wgsl) — so a scene may switch
// between the paths between batches.

@group(0) @binding(0) var<uniform> params: SolveParams;
@group(0) @binding(1) var<storage, read> contacts: array<Contact>; // chunked(4)
@group(0) @binding(2) var<storage, read> body_offsets: array<u32>;
@group(0) @binding(3) var<storage, read> body_entries: array<u32>;
@group(0) @binding(4) var<storage, read> rot: array<vec4<f32>>;
@group(0) @binding(5) var<storage, read> mass_props: array<vec4<f32>>;
@group(0) @binding(6) var<storage, read_write> gam: array<vec4<f32>>; // chunked(8)
@group(0) @binding(7) var<storage, read_write> dv: array<vec4<f32>>;
@group(0) @binding(8) var<storage, read> counts: array<u32>;
@group(0) @binding(9) var<storage, read> jcsr: array<u32>;
@group(0) @binding(10) var<storage, read_write> nv: array<vec4<f32>>; // chunked(4)
@group(0) @binding(11) var<storage, read_write> rhs: array<vec4<f32>>;
@group(0) @binding(12) var<storage, read_write> partials: array<vec4<f32>>;
@group(0) @binding(13) var<storage, read_write> scal: Scalars;
@group(0) @binding(14) var<storage, read_write> args: array<u32>;
@group(0) @binding(15) var<storage, read_write> history: array<vec4<f32>>;
@group(0) @binding(16) var<storage, read_write> step_stats: array<u32>;
// The next continuation's indirect arguments (`continue_if_unfinished`).
@group(0) @binding(17) var<storage, read_write> next_args: array<u32>;

// Lever arm of side A (else B) of contact ci from its record (common/solve_gather.wgsl).
// solve_schur loads the one row through a second, chunked view of the records; here that
// view's 4 bindings would pass lavapipe's 32 storage bindings (this stage has 30).
fn lever_arm(ci: u32, c: Contact, side_a: bool) -> vec3<f32> {
    return select(c.rb.xyz, c.ra.xyz, side_a);
}

// Storage written by some invocations is read by others in the next stage.
fn sync() {
    storageBarrier();
    workgroupBarrier();
}

// Δv of every body from gam slot `slot` (− shift), as solve_schur's gather kernels.
fn gather_all(lid: u32, slot: u32, shift: f32) {
    for (var b = lid; b < params.bodies; b += WG) {
        gather(b, slot, shift);
    }
    sync();
}

// One of solve_iterate's set-up products over every constraint, its partial sums per
// block of WG constraints in partials[block], then their total as solve_reduce takes it.
// `which`: 0 product_init, 1 product_lip (a uniform value).
fn product_pass(lid: u32, which: u32, ng: u32, n: u32) -> vec4<f32> {
    for (var k = 0u; k < ng; k++) {
        let i = k * WG + lid;
        var v = vec4<f32>(0.0);
        if i < n {
            if which == 0u {
                v = product_init_item(i);
            } else {
                v = product_lip_item(i);
            }
        }
        reduce_to_partial(v, lid, k, which == 0u);
        // Lane 0 reads sh until here; the next block overwrites it.
        workgroupBarrier();
    }
    sync();
    let s = reduce_partials(lid, which == 0u);
    sync();
    return s;
}

// A sweep's product: product_trial's partials (its n_parts lanes, as solve_iterate), then
// their total as solve_reduce takes it.
fn trial_pass(lid: u32, n: u32) -> vec4<f32> {
    let t = scal.n_parts;
    for (var j = lid; j < t; j += WG) {
        partials[j] = product_trial_lane(j, t, n);
    }
    sync();
    let s = reduce_parts(lid);
    sync();
    return s;
}

// Runs `f` (0 finish, 1 APGD step, 2 Jacobi step) for every constraint.
fn per_constraint(lid: u32, f: u32, n: u32) {
    for (var i = lid; i < n; i += WG) {
        if f == 0u {
            finish_item(i);
        } else if f == 1u {
            apgd_item(i);
        } else {
            jacobi_item(i);
        }
    }
    sync();
}

var<workgroup> sh_iters: u32;

// Sweeps taken so far (scal.iters), the same for every invocation.
fn sweeps_done(lid: u32) -> u32 {
    if lid == 0u {
        sh_iters = scal.iters;
    }
    return workgroupUniformLoad(&sh_iters);
}

// Whether the solve has ended: converged, or `sweep_cap` (max_iterations) sweeps in all.
fn solve_ended(lid: u32) -> bool {
    return uniform_state(lid).y != 0u || sweeps_done(lid) >= u32(params.sweep_cap);
}

// Loop iterations an invocation runs in one sweep, at most over the workgroup (the same in
// every invocation): its bodies' rows (gather) and ~3 per WG constraints, with margins.
// llvmpipe ends an invocation's loops, silently, once they have run 65 535 iterations in
// all (common/collide_keys.wgsl), and one body's row is gathered by one invocation: a slab
// on 300 posts (1200 contacts in its row) must take fewer sweeps per dispatch than a pile.
var<workgroup> sh_cost: array<u32, 256>;
var<workgroup> sh_cost_max: u32;

fn sweep_cost(lid: u32, n: u32) -> u32 {
    let nb = params.bodies;
    var c = 3u * ((n + WG - 1u) / WG) + 64u;
    for (var b = lid; b < nb; b += WG) {
        c += body_offsets[b + 1u] - body_offsets[b] + 16u;
        if joints_on() {
            c += jcsr[b + 1u] - jcsr[b];
        }
    }
    sh_cost[lid] = c;
    workgroupBarrier();
    if lid == 0u {
        var m = 0u;
        for (var l = 0u; l < WG; l++) {
            m = max(m, sh_cost[l]);
        }
        sh_cost_max = m;
    }
    return workgroupUniformLoad(&sh_cost_max);
}

// The next continuation's indirect arguments (src/solve `record_one_workgroup`): one
// workgroup while the solve has not ended, none after (a zero-group dispatch costs next to
// nothing).
fn continue_if_unfinished(lid: u32) {
    let more = select(1u, 0u, solve_ended(lid));
    if lid == 0u {
        next_args[0] = more;
        next_args[1] = more;
        next_args[2] = more;
    }
}

// Sweeps from the current state until the solve ends, or, on a CPU adapter (`loop_budget`: a
// budget of loop iterations per dispatch, src/solve `loop_budget`), as many as that budget
// allows after `spent` sweeps' worth of set-up; the host records enough continuations for
// any row lengths, and those after the end are empty.
fn sweeps_until_done(lid: u32, apgd: bool, ng: u32, n: u32, spent: u32) {
    let budget = u32(params.loop_budget);
    var stop = 0xffffffffu;
    if budget != 0u {
        let per = budget / sweep_cost(lid, n);
        stop = sweeps_done(lid) + max(per, spent + 1u) - spent;
    }
    loop {
        if solve_ended(lid) || sweeps_done(lid) >= stop {
            break;
        }
        per_constraint(lid, select(2u, 1u, apgd), n);
        gather_all(lid, roles().trial, 0.0);
        let s = trial_pass(lid, n);
        if lid == 0u {
            if apgd {
                decide_apgd(s);
            } else {
                decide_jacobi(s);
            }
        }
        sync();
    }
}

// The whole cone problem after assembly; continued on a CPU adapter by indirect dispatches
// of itself while sweeps remain (`continue_if_unfinished`): a later dispatch skips the
// set-up (sweeps done). One entry point for both, as
// a second one would be compiled again (seconds on lavapipe, for every simulation).
@compute @workgroup_size(256)
fn solve_fused(@builtin(local_invocation_index) lid: u32) {
    if solve_ended(lid) {
        continue_if_unfinished(lid);
        return;
    }
    let apgd = params.kind != 0u;
    let ng = uniform_state(lid).x;
    let n = scal.n_contacts;
    // The set-up costs about two sweeps.
    var spent = 0u;
    if sweeps_done(lid) == 0u {
        solve_setup(lid, apgd, ng, n);
        spent = 2u;
    }
    sweeps_until_done(lid, apgd, ng, n, spent);
    // The returned impulses into slot 0, once the solve has ended.
    if solve_ended(lid) {
        per_constraint(lid, 0u, n);
    }
    continue_if_unfinished(lid);
}

// Nγ⁰ and its residual, and APGD's Lipschitz estimate.
fn solve_setup(lid: u32, apgd: bool, ng: u32, n: u32) {
    gather_all(lid, 0u, 0.0);
    let s0 = product_pass(lid, 0u, ng, n);
    if lid == 0u {
        decide_init(s0);
    }
    sync();
    if apgd && uniform_state(lid).y == 0u {
        gather_all(lid, 0u, 1.0);
        let sl = product_pass(lid, 1u, ng, n);
        if lid == 0u {
            decide_lip(sl);
        }
        sync();
    }
}

// The tail of a multi-workgroup solve (relaxed cone): after its recorded sweeps (the sweep
// budget), the sweeps it still needs, here; its `finish` stays a multi-workgroup dispatch.
// So a budget below what a step needs costs a few single-workgroup sweeps instead of a
// redone batch, and the budget can follow the typical step rather than the
// worst one (src/step `adapt_sweep_budget`). A converged solve exits at once.
@compute @workgroup_size(256)
fn solve_tail(@builtin(local_invocation_index) lid: u32) {
    let apgd = params.kind != 0u;
    sweeps_until_done(lid, apgd, uniform_state(lid).x, scal.n_contacts, 0u);
    continue_if_unfinished(lid);
}
