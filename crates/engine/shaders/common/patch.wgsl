// Planar LuGre patches (Arslan Waltersson & Karayiannidis): shared structs and per-cell maths. CPU twin:
// src/patch/cpu.rs (f64).

struct PatchParams {
    mu_c: f32,
    mu_s: f32,
    v_s: f32,
    gamma: f32,
    sigma0: f32,
    sigma1: f32,
    sigma2: f32,
    z_ba_ratio: f32,
    dt: f32,
    // bit 0 elasto-plastic, bit 1 stability clamp, bit 2 implicit, bit 3 steady state,
    // bit 4 rate factors from the lagged twists, bit 5 cells kept (affine sums only)
    flags: u32,
    count: u32,
    _pad: u32,
}

const FLAG_EP: u32 = 1u;
const FLAG_STABILITY: u32 = 2u;
const FLAG_IMPLICIT: u32 = 4u;
const FLAG_STEADY: u32 = 8u;
const FLAG_LINEARISED: u32 = 16u;
const FLAG_KEEP: u32 = 32u;

// One patch of the distributed model: cells `offset .. offset + nx*ny` of the cell arrays.
struct PatchDesc {
    nx: u32,
    ny: u32,
    offset: u32,
    _pad: u32,
    h: f32,
    f_n: f32,
    cop_x: f32,
    cop_y: f32,
}

fn stribeck(p: PatchParams, v: f32) -> f32 {
    let x = abs(v / p.v_s);
    // γ = 2 (Table I, and the solver's LuGre) without pow's exp(γ log x).
    var e = x * x;
    if p.gamma != 2.0 {
        e = pow(x, p.gamma);
    }
    return p.mu_c + (p.mu_s - p.mu_c) * exp(-e);
}

// Elasto-plastic factor (Arslan Waltersson & Karayiannidis eqs. 16-18), any dimension via the norms and the cosine.
fn beta_ep(zn: f32, z_max: f32, cosine: f32, ratio: f32) -> f32 {
    let z_ba = ratio * z_max;
    var b = 1.0;
    if zn <= z_ba {
        b = 0.0;
    } else if zn < z_max {
        b = 0.5 * sin(3.14159265358979 * (zn - 0.5 * (z_max + z_ba)) / (z_max - z_ba)) + 0.5;
    }
    return b * (cosine + 1.0) * 0.5;
}

fn cell_centre(d: PatchDesc, i: u32) -> vec2<f32> {
    let ix = f32(i % d.nx);
    let iy = f32(i / d.nx);
    return vec2<f32>((ix + 0.5 - 0.5 * f32(d.nx)) * d.h, (iy + 0.5 - 0.5 * f32(d.ny)) * d.h);
}

// Velocity of the body point at c for the twist t = (v_x, v_y, omega).
fn cell_velocity(t: vec3<f32>, c: vec2<f32>) -> vec2<f32> {
    return vec2<f32>(t.x - t.z * c.y, t.y + t.z * c.x);
}

// Steady-state deflection g(|v|) v / (sigma0 |v|), 0 at rest.
fn z_steady(p: PatchParams, v: vec2<f32>) -> vec2<f32> {
    let vn = length(v);
    if vn == 0.0 {
        return vec2<f32>(0.0);
    }
    return v * (stribeck(p, vn) / (p.sigma0 * vn));
}

// Fixed-order tree reduction of one vec4 per invocation over a 256-wide workgroup (the
// steady-state and weight kernels; the step kernel sums its cells in one invocation).
var<workgroup> red_a: array<vec4<f32>, 256>;

fn reduce1(lid: u32, a: vec4<f32>) {
    red_a[lid] = a;
    workgroupBarrier();
    for (var s = 128u; s > 0u; s = s >> 1u) {
        if lid < s {
            red_a[lid] += red_a[lid + s];
        }
        workgroupBarrier();
    }
}

fn group_index(wid: vec3<u32>, nwg: vec3<u32>) -> u32 {
    return wid.x + wid.y * nwg.x;
}

// ---------------------------------------------------------------- patch polygons
// A patch polygon (≤ 8 vertices, patch frame, origin at the patch centre) and its cells'
// area fractions: shaders/patch_weights.wgsl and shaders/patch_loop.wgsl (lugre_patch in
// the loop). CPU twin: PatchShape::new with Pressure::Uniform(Outline::Polygon).
struct Polygon {
    v: array<vec4<f32>, 4>, // vertices (x0, y0, x1, y1), (x2, y2, x3, y3), …
    count: u32,
    _pad0: u32,
    _pad1: u32,
    _pad2: u32,
}

fn vertex(p: Polygon, i: u32) -> vec2<f32> {
    let q = p.v[i / 2u];
    return select(q.xy, q.zw, (i & 1u) == 1u);
}

// Even-odd crossing rule, as Outline::contains.
fn inside(p: Polygon, x: f32, y: f32) -> bool {
    var r = false;
    for (var i = 0u; i < p.count; i++) {
        let a = vertex(p, i);
        let b = vertex(p, (i + p.count - 1u) % p.count);
        if (a.y > y) != (b.y > y) && x < (b.x - a.x) * (y - a.y) / (b.y - a.y) + a.x {
            r = !r;
        }
    }
    return r;
}

// Side of the n × n square cells covering the polygon's bounding box about the origin.
fn polygon_cell_size(p: Polygon, n: u32) -> f32 {
    var half = vec2<f32>(0.0);
    for (var i = 0u; i < p.count; i++) {
        half = max(half, abs(vertex(p, i)));
    }
    return max(2.0 * half.x, 2.0 * half.y) / f32(n);
}

// Area fraction of the cell centred at c (side h) inside the polygon: 8 × 8 sub-samples.
fn cell_coverage(p: Polygon, c: vec2<f32>, h: f32) -> f32 {
    var hits = 0u;
    for (var s = 0u; s < 64u; s++) {
        let o = (vec2<f32>(f32(s % 8u), f32(s / 8u)) + 0.5) / 8.0 - 0.5;
        let q = c + o * h;
        hits += select(0u, 1u, inside(p, q.x, q.y));
    }
    return f32(hits) / 64.0;
}
