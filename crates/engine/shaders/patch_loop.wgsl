// lugre_patch in the loop (book: Contact patches): the distributed planar LuGre model on the
// contact patches of a step, between collision and the solve and after it. Rust wrapper and
// f64 twin: src/patch/stage.rs. Three kernels per step:
//   slots    one workgroup: the step's lugre_patch records (feature PATCH_FEATURE_DIST) in
//            contact order → slots k (slot_table[1 + 2k] = (A, B, feature, contact index)); the
//            list is sorted by key, so the slots are too. slot_table[0] = (count, needed, most
//            needed by any step so far, 0).
//   prepare  one workgroup per slot: the patch polygon (the pair's points before the record
//            that share its normal, in the patch frame u, w about the patch centre), its
//            n × n cell weights (uniform pressure), the cells carried by key from the last
//            step (prev_table, prev_cells; a new patch at rest), and the affine sums of the
//            implicit step with the rate factors frozen at the last step's twist (a new
//            patch: at rest) per unit normal load, written into the record's solver aux and
//            state segments for `assemble_dist_patch` (solve_assemble.wgsl).
//   advance  one workgroup per slot, after the solve: the cells' implicit step under the
//            post-solve twist v⁺ with the same frozen rate factors (what the rows assumed);
//            slot_table[2 + 2k] = (v⁺, h), the next step's frozen twist.
// The caller then copies slot_table → prev_table and cells → prev_cells.

struct LoopParams {
    cap: u32,       // slot capacity
    n: u32,         // grid side
    seg_aux: u32,   // offset of the solver's aux segment in gam (SEG_AUX × contact capacity)
    seg_state: u32, // offset of its state segment
    dt: f32,
    materials: u32, // rows of the model table
    contact_cap: u32,
    _pad: u32,
}

@group(0) @binding(0) var<uniform> lp: LoopParams;
@group(0) @binding(1) var<storage, read> contacts: array<Contact>; // chunked(4)
@group(0) @binding(2) var<storage, read> counts: array<u32>;
@group(0) @binding(3) var<storage, read> models: array<vec4<f32>>;
@group(0) @binding(4) var<storage, read> vel: array<vec4<f32>>;
@group(0) @binding(5) var<storage, read> omega: array<vec4<f32>>;
@group(0) @binding(6) var<storage, read_write> gam: array<vec4<f32>>; // chunked(8)
@group(0) @binding(7) var<storage, read_write> slot_table: array<vec4<u32>>;
@group(0) @binding(8) var<storage, read> prev_table: array<vec4<u32>>;
@group(0) @binding(9) var<storage, read_write> cells: array<vec4<f32>>; // (z, w, 0)
@group(0) @binding(10) var<storage, read> prev_cells: array<vec4<f32>>;

const PATCH_FEATURE_DIST: u32 = 0xfffffffeu;
const MODEL_LUGRE_PATCH: u32 = 7u;
const JOINT_BIT: u32 = 0x80000000u;

fn is_dist(c: Contact) -> bool {
    return c.ids.z == PATCH_FEATURE_DIST && (c.ids.w & JOINT_BIT) == 0u;
}

// Fixed-order tree sums of two vec4 per invocation over the 256-wide workgroup of a patch
// (prepare: the affine sums; few patches per step, so one workgroup each).
var<workgroup> red_b: array<vec4<f32>, 256>;
var<workgroup> red_c: array<vec4<f32>, 256>;

fn reduce2(lid: u32, b: vec4<f32>, c: vec4<f32>) {
    red_b[lid] = b;
    red_c[lid] = c;
    workgroupBarrier();
    for (var s = 128u; s > 0u; s = s >> 1u) {
        if lid < s {
            red_b[lid] += red_b[lid + s];
            red_c[lid] += red_c[lid + s];
        }
        workgroupBarrier();
    }
}

// ---------------------------------------------------------------- slots
var<workgroup> wsum: array<u32, 256>;

@compute @workgroup_size(256)
fn slots(@builtin(local_invocation_index) lid: u32) {
    let nc = min(counts[0], lp.contact_cap);
    let per = (nc + 255u) / 256u;
    let first = min(lid * per, nc);
    let last = min(first + per, nc);
    var mine = 0u;
    for (var i = first; i < last; i++) {
        mine += select(0u, 1u, is_dist(contacts_at(i)));
    }
    wsum[lid] = mine;
    workgroupBarrier();
    // Fixed-order serial prefix by lane 0 (256 adds; one workgroup per step).
    if lid == 0u {
        var s = 0u;
        for (var j = 0u; j < 256u; j++) {
            let x = wsum[j];
            wsum[j] = s;
            s += x;
        }
        // z: the most any step has needed (the host checks it against the capacity).
        slot_table[0] = vec4<u32>(min(s, lp.cap), s, max(s, prev_table[0].z), 0u);
    }
    workgroupBarrier();
    var k = wsum[lid];
    for (var i = first; i < last; i++) {
        let c = contacts_at(i);
        if is_dist(c) {
            if k < lp.cap {
                slot_table[1u + 2u * k] = vec4<u32>(c.ids.xyz, i);
            }
            k += 1u;
        }
    }
}

// ---------------------------------------------------------------- the pair's parameters
fn series(a: f32, b: f32) -> f32 {
    return select(0.0, a * b / (a + b), a + b > 0.0);
}

// The pair's LuGre parameters (rows::pair_model / pair_ext for the model: σ0, σ1 in series,
// σ2, μ_s, v_s and the break-away ratio by min when both sides have it), μ_c = the record's
// μ; Stribeck exponent 2 (the solver's LuGre curve).
fn pair_params(c: Contact) -> PatchParams {
    let ka = 2u * min(c.ids.w >> 16u, lp.materials - 1u);
    let kb = 2u * min(c.ids.w & 0xffffu, lp.materials - 1u);
    let a = models[ka];
    let b = models[kb];
    let a_on = u32(a.x) == MODEL_LUGRE_PATCH;
    let b_on = u32(b.x) == MODEL_LUGRE_PATCH;
    var m = select(b, a, a_on);
    var e = select(models[kb + 1u], models[ka + 1u], a_on);
    var ratio = 2.0 * (m.x - f32(MODEL_LUGRE_PATCH));
    if a_on && b_on {
        m = vec4<f32>(a.x, series(a.y, b.y), series(a.z, b.z), min(a.w, b.w));
        e = min(models[ka + 1u], models[kb + 1u]);
        ratio = 2.0 * (min(a.x, b.x) - f32(MODEL_LUGRE_PATCH));
    }
    var p: PatchParams;
    p.mu_c = c.ra.w;
    p.mu_s = e.x;
    p.v_s = e.y;
    p.gamma = 2.0;
    p.sigma0 = m.y;
    p.sigma1 = m.z;
    p.sigma2 = m.w;
    p.z_ba_ratio = ratio;
    p.dt = lp.dt;
    p.flags = select(0u, FLAG_EP, ratio > 0.0);
    return p;
}

// B's twist relative to A at the patch centre (spin about n, u, w): as `patch_twist` in
// solve_assemble.wgsl; the patch model's (v_x, v_y, ω) is (u, w, spin).
fn twist_of(c: Contact) -> vec3<f32> {
    let a = c.ids.x;
    let b = c.ids.y;
    let n = c.n_gap.xyz;
    let rel = (vel[b].xyz + cross(omega[b].xyz, c.rb.xyz)) - (vel[a].xyz + cross(omega[a].xyz, c.ra.xyz));
    return vec3<f32>(dot(tangent_u(n), rel), dot(tangent_w(n), rel), dot(n, omega[b].xyz - omega[a].xyz));
}

// ---------------------------------------------------------------- prepare
// The patch polygon: the ≤ 8 points before record ci of the same pair with its normal, in
// the patch frame, sorted by angle about their mean (insertion sort, as `patch_geom`).
fn patch_polygon(ci: u32, c: Contact) -> Polygon {
    let n = c.n_gap.xyz;
    let u = tangent_u(n);
    let w = tangent_w(n);
    var q: array<vec2<f32>, 8>;
    var k = 0u;
    var j = ci;
    while j > 0u && k < 8u {
        j -= 1u;
        let p = contacts_at(j);
        if p.ids.x != c.ids.x || p.ids.y != c.ids.y {
            break;
        }
        if dot(p.n_gap.xyz, n) > 0.9999 {
            let d = p.ra.xyz - c.ra.xyz;
            q[k] = vec2<f32>(dot(d, u), dot(d, w));
            k += 1u;
        }
    }
    var mean = vec2<f32>(0.0);
    for (var i = 0u; i < k; i++) {
        mean += q[i];
    }
    mean /= max(f32(k), 1.0);
    for (var i = 1u; i < k; i++) {
        var m = i;
        while m > 0u {
            let da = q[m - 1u] - mean;
            let db = q[m] - mean;
            if atan2(da.y, da.x) <= atan2(db.y, db.x) {
                break;
            }
            let t = q[m];
            q[m] = q[m - 1u];
            q[m - 1u] = t;
            m -= 1u;
        }
    }
    var poly: Polygon;
    poly.count = k;
    for (var i = 0u; i < 4u; i++) {
        poly.v[i] = vec4<f32>(q[2u * i], q[2u * i + 1u]);
    }
    return poly;
}

// Slot of `key` among the previous step's sorted slots, or -1.
fn find_prev_slot(key: vec3<u32>) -> i32 {
    var lo = 0u;
    var hi = prev_table[0].x;
    while lo < hi {
        let mid = (lo + hi) / 2u;
        let o = prev_table[1u + 2u * mid].xyz;
        if all(o == key) {
            return i32(mid);
        }
        let before = o.x < key.x || (o.x == key.x && (o.y < key.y || (o.y == key.y && o.z < key.z)));
        if before {
            lo = mid + 1u;
        } else {
            hi = mid;
        }
    }
    return -1;
}

fn cell_at(i: u32, n: u32, h: f32) -> vec2<f32> {
    return (vec2<f32>(f32(i % n), f32(i / n)) + 0.5 - 0.5 * f32(n)) * h;
}

// The implicit step's rate factor a = 1/(1 + dt κ) of a cell, κ frozen at the lagged cell
// velocity vl (and β at the cell's deflection z0 for the elasto-plastic variant).
fn rate_factor(p: PatchParams, z0: vec2<f32>, vl: vec2<f32>) -> f32 {
    let vn = length(vl);
    let g = stribeck(p, vn);
    var kap = p.sigma0 * vn / g;
    if (p.flags & FLAG_EP) != 0u {
        let zn = length(z0);
        let cosine = dot(z0 / (zn + 1e-10), vl / (vn + 1e-10));
        kap *= beta_ep(zn, select(0.0, g / p.sigma0, vn > 0.0), cosine, p.z_ba_ratio);
    }
    return 1.0 / (1.0 + p.dt * kap);
}

@compute @workgroup_size(256)
fn prepare(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
           @builtin(local_invocation_index) lid: u32) {
    let k = group_index(wid, nwg);
    if k >= slot_table[0].x {
        return;
    }
    let hdr = slot_table[1u + 2u * k];
    let c = contacts_at(hdr.w);
    let p = pair_params(c);
    let poly = patch_polygon(hdr.w, c);
    let n = lp.n;
    let nn = n * n;
    let h = select(0.0, polygon_cell_size(poly, n), poly.count >= 3u);
    let kp = find_prev_slot(hdr.xyz);
    // A new patch freezes its rate factors at the free twist (its best guess of v⁺): at the
    // twist 0 its first step would be a pure stick, winding the cells up by dt·v.
    var lin = twist_of(c);
    if kp >= 0 {
        lin = bitcast<vec4<f32>>(prev_table[2u + 2u * u32(kp)]).xyz;
    }
    // Raw coverage first (its sum normalises the weights).
    var acc = vec4<f32>(0.0);
    for (var i = lid; i < nn; i += 256u) {
        var w = 0.0;
        if h > 0.0 {
            w = cell_coverage(poly, cell_at(i, n, h), h);
        }
        var z0 = vec2<f32>(0.0);
        if kp >= 0 {
            z0 = prev_cells[u32(kp) * nn + i].xy;
        }
        cells[k * nn + i] = vec4<f32>(z0, w, 0.0);
        acc.x += w;
    }
    reduce1(lid, acc);
    let sum = red_a[0].x;
    let inv = select(0.0, 1.0 / sum, sum > 0.0);
    workgroupBarrier();
    let big = p.sigma0 + p.sigma1 / p.dt;
    var b = vec4<f32>(0.0);
    var cc = vec4<f32>(0.0);
    for (var i = lid; i < nn; i += 256u) {
        let cell = cells[k * nn + i];
        let w = cell.z * inv;
        cells[k * nn + i] = vec4<f32>(cell.xy, w, 0.0);
        if w == 0.0 {
            continue;
        }
        let r = cell_at(i, n, h);
        let aa = rate_factor(p, cell.xy, cell_velocity(lin, r));
        let c1 = big * aa * p.dt + p.sigma2;
        let c0 = big * aa * cell.xy - p.sigma1 * cell.xy / p.dt;
        b += w * c1 * vec4<f32>(1.0, r.x, r.y, dot(r, r));
        cc += w * vec4<f32>(c0, r.x * c0.y - r.y * c0.x, 0.0);
    }
    reduce2(lid, b, cc);
    if lid == 0u {
        gam_put(lp.seg_aux + hdr.w, red_b[0]);
        gam_put(lp.seg_state + hdr.w, red_c[0]);
        slot_table[2u + 2u * k] = bitcast<vec4<u32>>(vec4<f32>(lin, h));
    }
}

// ---------------------------------------------------------------- advance
@compute @workgroup_size(256)
fn advance(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
           @builtin(local_invocation_index) lid: u32) {
    let k = group_index(wid, nwg);
    if k >= slot_table[0].x {
        return;
    }
    let hdr = slot_table[1u + 2u * k];
    let c = contacts_at(hdr.w);
    let p = pair_params(c);
    let lh = bitcast<vec4<f32>>(slot_table[2u + 2u * k]);
    let v = twist_of(c);
    // A dead block (no normal impulse last step: guard radius 0 in the solver's aux) carried
    // no friction: its bristles carry no load either and relax.
    let live = gam_at(lp.seg_aux + hdr.w).x > 0.0;
    let n = lp.n;
    let nn = n * n;
    for (var i = lid; i < nn; i += 256u) {
        let cell = cells[k * nn + i];
        if cell.z == 0.0 {
            continue;
        }
        let r = cell_at(i, n, lh.w);
        let aa = rate_factor(p, cell.xy, cell_velocity(lh.xyz, r));
        let z = aa * (cell.xy + p.dt * cell_velocity(v, r));
        cells[k * nn + i] = vec4<f32>(select(vec2<f32>(0.0), z, live), cell.z, 0.0);
    }
    workgroupBarrier();
    if lid == 0u {
        slot_table[2u + 2u * k] = bitcast<vec4<u32>>(vec4<f32>(v, lh.w));
    }
}
