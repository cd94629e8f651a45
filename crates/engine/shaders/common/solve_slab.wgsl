// stages: solve_slabs, solve_slabs_step
// The slab correction's layout and shared arithmetic (solve_slabs_step's header). `slab` is
// one buffer: first the coarse accumulators (u32 words: the lowest and highest body base +
// SLAB_BIAS, the largest magnitudes' f32 bits (the band's, the right-hand side's), then per slab row s < SLAB_MAX
// and entry k < 8 a 64-bit fixed-point sum as (low, high) words: k < 7 the band entry
// (s, s + k) of Pᵀ A P, k = 7 the right-hand side −Pᵀu), padded to 256 bytes; then, in vec4s
// from V0: a header (SLAB_HEAD: last residual, the sweep's objective fall, wait, rejections
// in a row; then corrections, kept, solved flag, lowest base + SLAB_BIAS; then the totals
// since the buffer was made), the Cholesky rows (two vec4 per slab: the band, then b and δ),
// per body SLAB_BODY_VEC4S (base; S per window slab as linear, angular; the trial's Δv) and
// per constraint 3 (slab, w, diagonal, u_n; P for columns σ − 2 … σ + 1; P for σ + 2 and Δγ).

struct SlabParams {
    // xyz: up (against gravity, unit); w: the slabs' height (m).
    up: vec4<f32>,
    // The sweep cap: no correction once the sweeps reached it.
    cap: u32,
    // A correction follows a sweep whose residual is above this × the one before.
    stall: f32,
    // The smoothing's ω = 4 / (3ρ), ρ the assumed spectral radius of D⁻¹A.
    omega: f32,
    // vec4 index (from V0) of the constraints' records.
    rows_at: u32,
}

// Most slab rows of a coarse problem (its bases' span + SLAB_WINDOW); a larger one is not
// solved (the correction is skipped).
const SLAB_MAX: u32 = 512u;
// A body's T window (base − 2 … base + 4): the coarse matrix's bandwidth + 1.
const SLAB_WINDOW: u32 = 7u;
const SLAB_BIAS: i32 = 1073741824;
const NO_SLAB: u32 = 0x7fffffffu;
const COARSE_MIN: u32 = 0u;
const COARSE_MAX: u32 = 1u;
const COARSE_MAGNITUDE: u32 = 2u;
const COARSE_MAGNITUDE_RHS: u32 = 3u;
const COARSE_BAND: u32 = 4u;
const SLAB_COARSE_WORDS: u32 = COARSE_BAND + 16u * SLAB_MAX;
// The accumulators in vec4s, rounded up to 256 bytes (a storage binding offset).
const SLAB_COARSE_VEC4S: u32 = (SLAB_COARSE_WORDS + 63u) / 64u * 16u;
const SLAB_HEAD: u32 = 0u;
const SLAB_CHOL: u32 = 4u;
const SLAB_BODIES: u32 = SLAB_CHOL + 2u * SLAB_MAX;
const SLAB_BODY_VEC4S: u32 = 9u;
const SLAB_BODY_DV: u32 = 7u;
// Indirect arguments (words of solve_reduce's `args`, after Gauss–Seidel's): the fine rows
// and trial (per constraint), the bodies' kernels, the coarse solve and decision (one
// group), the kept trial's update, the residual after a correction.
const SLAB_ARGS_ROWS: u32 = 104u;
const SLAB_ARGS_BODIES: u32 = 108u;
const SLAB_ARGS_ONE: u32 = 112u;
const SLAB_ARGS_APPLY: u32 = 116u;
const SLAB_ARGS_RESIDUAL: u32 = 120u;

fn moves(b: u32) -> bool {
    return b != WORLD && mass_props[b].w != 0.0;
}

// I⁻¹ v in the world frame for body b (its inverse inertia is diagonal in the body frame).
fn inv_inertia(b: u32, v: vec3<f32>) -> vec3<f32> {
    let q = rot[b];
    return quat_rotate(q, mass_props[b].xyz * quat_rotate_inv(q, v));
}

fn slab_row_at(i: u32) -> u32 {
    return sp.rows_at + 3u * i;
}

fn slab_body_at(b: u32) -> u32 {
    return SLAB_BODIES + SLAB_BODY_VEC4S * b;
}

// (E_n, E_T) of contact i (compliant and bristle rows: aux.zw); 0 for rigid rows.
fn slab_compliance(i: u32) -> vec2<f32> {
    if !models_on() {
        return vec2<f32>(0.0);
    }
    return gam_at(SEG_AUX * params.capacity + i).zw;
}

// The fixed-point scale 2^e of the coarse sums: each of at most `bodies` terms of an entry
// is below 2^(x+1), x the largest magnitude's exponent, so every sum stays below 2^60.
fn fixed_scale(largest: f32) -> f32 {
    if !(largest > 0.0) {
        return 1.0;
    }
    let x = i32((bitcast<u32>(largest) >> 23u) & 0xffu) - 127;
    let terms = 32 - i32(countLeadingZeros(params.bodies + 1u));
    return exp2(f32(clamp(60 - (x + 1) - terms, -120, 120)));
}

// `slab` holds words: floats are stored by their bits, and integers (slabs, counts, the
// fixed-point sums) never pass through a float, where a NaN pattern or a denormal might not
// keep its bits.
fn slab_get(at: u32) -> vec4<f32> {
    return bitcast<vec4<f32>>(slab_words[at]);
}

fn slab_put(at: u32, v: vec4<f32>) {
    slab_words[at] = bitcast<vec4<u32>>(v);
}
