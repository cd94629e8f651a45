// CCP solver, assembly (book: Architecture, "The step"): per contact the right-hand side
//   p_i = [max(Φ/dt, −v_recover), 0, 0] + D_iᵀ v*
// and the diagonal scaling η_i = 3 / trace(B_ii), stored together as rhs[i] = (p, η), where
// B_ii is N_ii with each body's inverse mass and inertia multiplied by its number of contacts
// n_b. Since (Σ_c x_c)ᵀ A (Σ_c x_c) ≤ n Σ_c x_cᵀ A x_c, N ≤ blockdiag(B_ii) ≤ diag(3/η_i), so
// projected Jacobi with step ω η_i converges for every ω < 2/3 whatever the contact graph
// (Chrono's 3/trace(N_ii) diverges with ω = 0.3 once a body has more than ~6 contacts).
// APGD estimates and backtracks its own L, so a contact's step takes n_b = 1 instead
// (COUNT_BOUND false): η_i = 3/trace(N_ii), the inverse mean diagonal, which preconditions
// better where coordination varies (a bed's surface, walls, rattlers) — in the f64 twin the
// 10⁴-sphere bench pile reaches 1e-4·‖p‖ in 979 sweeps instead of 1425 (benches/
// precondition.rs). Its residual keeps the counted η (written to the record's rb.w), so the
// tolerance means what it meant and the two solvers stop at the same accuracy (the step's η
// there would weigh a spurious impulse on a grain with n_b contacts n_b times less). η is a
// per-contact scalar either way, so the cone projection is unchanged.
// the starting impulse γ⁰ (warm start: the previous step's impulse of the contact with the
// same key (A, B, feature), found by binary search in the previous step's sorted key list);
// and, at the end of a solve, the copy of this step's keys and impulses for the next one.
// CPU twin: `reference::solve`.

// Segments of `gam` (each `capacity` long): SEG_* in common/solve.wgsl. The aux vector
// (src/model/rows): x = assembled p_n (before the exact cone's correction), y = the
// correction s = μ‖u_T‖ (0 until the first outer pass). The per-contact state of stateful
// models (LuGre: z, dt; w: the disk radius of tanh and LuGre contacts, −1 for the others'
// cone) exists only when the table has one (params.has_state).

@group(0) @binding(0) var<uniform> params: SolveParams;
// rb.w of a contact: the residual's η (APGD; see the header).
@group(0) @binding(1) var<storage, read_write> contacts: array<Contact>; // chunked(4)
@group(0) @binding(2) var<storage, read> counts: array<u32>;
@group(0) @binding(3) var<storage, read> rot: array<vec4<f32>>;
@group(0) @binding(4) var<storage, read> mass_props: array<vec4<f32>>;
@group(0) @binding(5) var<storage, read> vel: array<vec4<f32>>;
@group(0) @binding(6) var<storage, read> omega: array<vec4<f32>>;
@group(0) @binding(7) var<storage, read_write> gam: array<vec4<f32>>; // chunked(8)
@group(0) @binding(8) var<storage, read_write> rhs: array<vec4<f32>>;
// The previous step's saved list (save_warm): prev[0].x = its length; prev[1 + k] = (B,
// feature) of entry k, whose A is given by the per-body rows `warm_rows`; its impulse (or
// the model's saved record) is warm[k].
@group(0) @binding(9) var<storage, read_write> prev: array<vec2<u32>>; // chunked(2)
// Per-body contact lists (CSR offsets): n_b = offsets[b + 1] − offsets[b].
@group(0) @binding(10) var<storage, read> body_offsets: array<u32>;
// Per material two vec4: (model id, k, c, n) and the extension (src/model/rows `MaterialRow`).
@group(0) @binding(11) var<storage, read> models: array<vec4<f32>>;
// Joint blocks per body (src/joints): offsets[0..=bodies], then entries (block * 2 + side).
// Read only when the step has joint blocks (params.joint_blocks).
@group(0) @binding(12) var<storage, read> jcsr: array<u32>;
// The warm-start impulses: `nv`'s first segment, free between solves (Nγ is formed anew from
// γ⁰ after assembly and read by no stage after the solve), bound alone (capacity vec4, one
// binding like `rhs`: plain indices, no chunk selection). save_warm writes them after the
// solve, the next step's assembly reads them at the matched index.
@group(0) @binding(13) var<storage, read_write> warm: array<vec4<f32>>;
// Per body b: (first entry with A = b, count) in the saved list; [bodies]: the joint blocks.
@group(0) @binding(14) var<storage, read> warm_rows: array<vec2<u32>>;

const MODEL_COULOMB: u32 = 0u;
const MODEL_COMPLIANT: u32 = 1u;
const MODEL_BRISTLE: u32 = 2u;
const MODEL_HUNT_CROSSLEY: u32 = 3u;
const MODEL_TANH: u32 = 4u;
const MODEL_LUGRE: u32 = 5u;

fn series(x: f32, y: f32) -> f32 {
    return select(0.0, x * y / (x + y), x + y > 0.0);
}

// The model table (src/model/rows `MaterialRow`): two vec4 per material, the main row
// (id, k, c, n) at 2m and the extension (LuGre: μ_s, v_s) at 2m + 1.
fn material(k: u32) -> u32 {
    return 2u * min(k, params.materials - 1u);
}

// The mixed model of the contact's material pair (rows::pair_model): (id, k, c, n).
fn pair_model(mats: u32) -> vec4<f32> {
    let a = models[material(mats >> 16u)];
    let b = models[material(mats & 0xffffu)];
    let ia = u32(a.x);
    let ib = u32(b.x);
    if ia == ib && ia != MODEL_COULOMB {
        // Hunt–Crossley: α and n by min; otherwise dampings in series; tanh's v_s by min.
        let c = select(series(a.z, b.z), min(a.z, b.z), ia == MODEL_HUNT_CROSSLEY);
        let k = select(series(a.y, b.y), min(a.y, b.y), ia == MODEL_TANH);
        return vec4<f32>(a.x, k, c, min(a.w, b.w));
    }
    if ib == MODEL_COULOMB {
        return a;
    }
    if ia == MODEL_COULOMB {
        return b;
    }
    return vec4<f32>(0.0);
}

// The pair's (F_0 in N, W in J/m²) (rows::pair_cohesion): table lanes 3 and 4 of two Coulomb
// or Kelvin–Voigt materials, by min and geometric mean; none with any other model.
fn pair_cohesion(mats: u32) -> vec2<f32> {
    let ka = material(mats >> 16u);
    let kb = material(mats & 0xffffu);
    let a = models[ka];
    let b = models[kb];
    let ok = u32(a.x) <= MODEL_COMPLIANT && u32(b.x) <= MODEL_COMPLIANT;
    let w = sqrt(models[ka + 1u].x * models[kb + 1u].x);
    return select(vec2<f32>(0.0), vec2<f32>(min(a.w, b.w), w), ok);
}

// rows::JKR_PULL_OFF: the JKR pull-off force of two spheres is 3/2 π W r_eff.
const JKR_PULL_OFF: f32 = 4.712389;

// A material's LuGre extension (μ_s, v_s, break-away ratio, 0): the ratio is packed in lane 0
// as 5 + ratio/2 (rows::lugre_lane; 0 = plain LuGre).
fn lugre_ext(k: u32) -> vec4<f32> {
    let id = models[k].x;
    let ratio = select(0.0, 2.0 * (id - f32(MODEL_LUGRE)), u32(id) == MODEL_LUGRE);
    return vec4<f32>(models[k + 1u].xy, ratio, 0.0);
}

// The pair's extension row (rows::pair_ext): by min when both have the model (a plain LuGre
// side, ratio 0, makes the pair plain).
fn pair_ext(mats: u32) -> vec4<f32> {
    let ka = material(mats >> 16u);
    let kb = material(mats & 0xffffu);
    let ia = u32(models[ka].x);
    let ib = u32(models[kb].x);
    if ia == ib {
        return min(lugre_ext(ka), lugre_ext(kb));
    }
    return lugre_ext(select(kb, ka, ib == MODEL_COULOMB));
}

// The elasto-plastic β (Arslan Waltersson & Karayiannidis eqs. 16–18): a copy of `beta_ep` in shaders/common/patch.wgsl
// (the patch family's file; keep the two identical; f64 twin: crate::model::elasto_plastic::beta).
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

// LuGre's frozen a = 1/(1 + dt κ) from the record's w lane (rows::lugre_relax): plain,
// w = s⁻ and κ = σ0 s⁻/g(s⁻); elasto-plastic (ext.z > 0), w = κ/σ0.
fn lugre_relax(m: vec4<f32>, ext: vec4<f32>, mu: f32, w: f32, dt: f32) -> f32 {
    var num = 1.0;
    var den = 1.0 + dt * m.y * w;
    if ext.z <= 0.0 {
        num = stribeck(mu, ext, w);
        den = num + dt * m.y * w;
    }
    return select(1.0, num / den, den > 0.0);
}

// κ/σ0 at the save (rows::lugre_rate): s/g(s), times β(z⁻, g(s)/σ0, v⁺) when elasto-plastic.
fn lugre_rate(m: vec4<f32>, ext: vec4<f32>, mu: f32, z: vec2<f32>, vt: vec2<f32>) -> f32 {
    let s = length(vt);
    let g = stribeck(mu, ext, s);
    var b = 1.0;
    if ext.z > 0.0 {
        let zn = length(z);
        b = beta_ep(zn, g / m.y, dot(z / (zn + 1e-10), vt / (s + 1e-10)), ext.z);
    }
    return b * s / g;
}

// (E_n, normal stabilisation) of a contact with gap phi (rows::normal_rows): Kelvin–Voigt
// gives v_n⁺ + E_n γ_n + Φ/(dt + c/k) = 0 with E_n = 1/(dt² k + dt c); Hunt–Crossley,
// linearised at δ₀ = −Φ (F₀ = k δ₀ⁿ, k₁ = n k δ₀ⁿ⁻¹, c₁ = 3/2 α k δ₀ⁿ), E_n = 1/(dt² k₁ + dt c₁)
// and offset −F₀/(dt k₁ + c₁), E_n < 0 marking "no force this step"; open contacts and
// Coulomb keep `rigid_offset`.
fn normal_rows(m: vec4<f32>, phi: f32, dt: f32) -> vec2<f32> {
    let id = u32(m.x);
    if id == MODEL_HUNT_CROSSLEY && m.y > 0.0 {
        if phi > 0.0 {
            return vec2<f32>(-1.0, 0.0); // open: no force before touching
        }
        let d0 = -phi;
        var f0 = 0.0;
        var k1 = 0.0;
        if d0 > 0.0 {
            f0 = m.y * pow(d0, m.w);
            k1 = m.w * m.y * pow(d0, m.w - 1.0);
        } else if m.w == 1.0 {
            k1 = m.y;
        }
        let c1 = 1.5 * m.z * f0;
        let s = dt * k1 + c1;
        if s <= 0.0 {
            return vec2<f32>(-1.0, 0.0);
        }
        return vec2<f32>(1.0 / (dt * s), -f0 / s);
    }
    if id != MODEL_COMPLIANT || m.y <= 0.0 {
        return vec2<f32>(0.0, rigid_offset(phi, dt));
    }
    let e = 1.0 / (dt * dt * m.y + dt * m.z);
    return vec2<f32>(e, select(phi / (dt + m.z / m.y), phi / dt, phi > 0.0));
}

// Physical compliant parameters (rows::compliant): lanes 4, 5 of the table, s = (1 − ν²)/E
// (summed over the pair) and ζ or χ from the restitution (max over the pair).
fn pair_physical(mats: u32) -> vec2<f32> {
    let a = models[material(mats >> 16u) + 1u];
    let b = models[material(mats & 0xffffu) + 1u];
    return vec2<f32>(a.x + b.x, max(a.y, b.y));
}

// The contact's effective normal mass 1/(J_n M⁻¹ J_nᵀ), 0 when neither body moves.
fn normal_mass(c: Contact) -> f32 {
    let n = c.n_gap.xyz;
    let ca = cross(c.ra.xyz, n);
    let cb = cross(c.rb.xyz, n);
    let d = mass_props[c.ids.x].w + mass_props[c.ids.y].w + dot(ca, inv_inertia(c.ids.x, ca))
        + dot(cb, inv_inertia(c.ids.y, cb));
    return select(0.0, 1.0 / d, d > 0.0);
}

// rows::compliant::contact_model: Hertz k = 4/3 √R* / (s_A + s_B) for Hunt–Crossley given E,
// ν; Kelvin–Voigt damping c = 2ζ√(k m*) given a restitution.
fn contact_physical(m: vec4<f32>, phys: vec2<f32>, c: Contact) -> vec4<f32> {
    var r = m;
    let id = u32(m.x);
    if id == MODEL_HUNT_CROSSLEY && phys.x > 0.0 {
        let reff = rolling_radius(c.ids.x, c.ids.y, c.ra.xyz, c.rb.xyz);
        r.y = 4.0 / 3.0 * sqrt(reff) / phys.x;
    }
    if id == MODEL_COMPLIANT && phys.y > 0.0 {
        r.z = 2.0 * phys.y * sqrt(r.y * normal_mass(c));
    }
    return r;
}

// rows::compliant::impact_speed: the saved v₀, else this step's approach speed (≥ V0_MIN).
fn impact_speed(saved: f32, phi: f32, vn: f32) -> f32 {
    if phi > 0.0 {
        return 0.0;
    }
    return select(max(-vn, 1e-3), saved, saved > 0.0);
}

// A rigid contact's normal offset (rows::rigid_offset): a gap closes in one step (Φ/dt); a
// penetration deeper than the slop s is recovered at the rate β/dt, capped at v_recover:
// β min(Φ + s, 0)/dt. Continuous in Φ; a resting contact settles inside the band, where the
// f32 jitter of positions (~1e-8 m) no longer feeds ~1e-5 m/s of noise into the rows.
fn rigid_offset(phi: f32, dt: f32) -> f32 {
    if phi >= 0.0 {
        return phi / dt;
    }
    return max(params.stabilisation * min(phi + params.slop, 0.0) / dt, -params.recovery_speed);
}

// Bristle: E_T = 1/(k_b dt²) (rows::tangent_compliance).
fn tangent_compliance(m: vec4<f32>, dt: f32) -> f32 {
    return select(0.0, 1.0 / (m.y * dt * dt), u32(m.x) == MODEL_BRISTLE && m.y > 0.0);
}

// Tangential rows of tanh and LuGre (rows::stateful_rows): compliance, offset, projection
// (kind and bound, common/solve.wgsl `encode_projection`), the model's state lanes (LuGre: z)
// and the tangential warm start.
struct TangentRows {
    e_t: f32,
    kind: u32, // PROJECTION_*: the contact's cone (of ra.w), a disk or a box
    r: f32, // the disk's radius or the box's half-width
    off: vec2<f32>,
    st: vec2<f32>,
    warm: vec2<f32>,
}

// LuGre's Stribeck curve (rows::stribeck), ext = (μ_s, v_s, ..), μ_c = mu.
fn stribeck(mu: f32, ext: vec4<f32>, s: f32) -> f32 {
    let r = s / ext.y;
    return mu + (ext.x - mu) * exp(-r * r);
}

// From the saved record last = (γ_n⁻, y, z, s⁻), the free tangential velocity vt and μ.
fn stateful_rows(m: vec4<f32>, ext: vec4<f32>, mu: f32, last: vec4<f32>, vt: vec2<f32>, dt: f32) -> TangentRows {
    var t = TangentRows(0.0, PROJECTION_DISK, 0.0, vec2<f32>(0.0), vec2<f32>(0.0), last.yz);
    let gn = last.x;
    let s = last.w;
    if u32(m.x) == MODEL_TANH {
        // Secant of tanh at the last slip: v_T + E_T γ_T = 0, E_T = s⁻/(μ γ_n⁻ tanh(s⁻/v_s)).
        if mu * gn > 0.0 && m.y > 0.0 {
            let x = s / m.y;
            t.e_t = select(m.y / (mu * gn), s / (mu * gn * tanh(x)), x > 1e-4);
            t.r = mu * gn;
        }
        return t;
    }
    // LuGre: κ = σ0 s⁻/g(s⁻) frozen, z⁺ = a (z + dt v⁺), l = c0 + c1 v⁺, γ_T = −γ_n⁻ l.
    let a = lugre_relax(m, ext, mu, s, dt);
    let big = m.y + m.z / dt;
    let c1 = big * a * dt + m.w;
    let c0 = (big * a - m.z / dt) * last.yz;
    t.st = last.yz;
    t.warm = vec2<f32>(0.0);
    if gn > 0.0 {
        t.e_t = 1.0 / (gn * c1);
        t.off = c0 / c1;
        t.r = (2.0 * ext.x + (m.z + m.w) * length(vt)) * gn;
        t.warm = -gn * (c0 + c1 * vt);
    }
    return t;
}


// Constraints on body b (contacts, and joint blocks when there are any): the n_b of the bound.
fn contact_count(b: u32) -> f32 {
    var n = body_offsets[b + 1u] - body_offsets[b];
    if joints_on() {
        n += jcsr[b + 1u] - jcsr[b];
    }
    return f32(max(n, 1u));
}

// Constraints: the contacts, then the joint blocks (params.joint_blocks).
fn n_contacts() -> u32 {
    return min(counts[0] + params.joint_blocks, params.capacity);
}

// Projection onto K = { γ_n ≥ 0, ‖(γ_u, γ_w)‖ ≤ μ γ_n } (the three cases of the second-order cone).
// World inverse inertia times v: R diag(I⁻¹) Rᵀ v.
fn inv_inertia(b: u32, v: vec3<f32>) -> vec3<f32> {
    let q = rot[b];
    return quat_rotate(q, mass_props[b].xyz * quat_rotate_inv(q, v));
}

// Σ_j (r×t_j)ᵀ I⁻¹ (r×t_j) + 3 m⁻¹: body b's share of trace(N_ii).
fn trace_share(b: u32, r: vec3<f32>, n: vec3<f32>, u: vec3<f32>, w: vec3<f32>) -> f32 {
    let cn = cross(r, n);
    let cu = cross(r, u);
    let cw = cross(r, w);
    return 3.0 * mass_props[b].w + dot(cn, inv_inertia(b, cn)) + dot(cu, inv_inertia(b, cu))
        + dot(cw, inv_inertia(b, cw));
}

// Index of `key` in the previous step's saved list, or -1: a binary search for (B, feature)
// within A's row of that list (warm_rows, solve_schur's `save_rows`), which is sorted by
// (A, B, feature) like the contacts; a few loads per contact.
fn find_prev(key: vec3<u32>) -> i32 {
    let nc = prev_at(0).x;
    let n = params.bodies;
    let a = select(key.x, n, key.x == WORLD);
    if nc == 0u || a > n {
        return -1;
    }
    let row = warm_rows[a];
    var lo = row.x;
    var hi = min(row.x + row.y, nc);
    while lo < hi {
        let mid = (lo + hi) / 2u;
        let k = prev_at(1u + mid);
        if k.x == key.y && k.y == key.z {
            return i32(mid);
        }
        if k.x < key.y || (k.x == key.y && k.y < key.z) {
            lo = mid + 1u;
        } else {
            hi = mid;
        }
    }
    return -1;
}

@compute @workgroup_size(256)
fn assemble(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = linear_index(gid, nwg);
    if i >= n_contacts() {
        return;
    }
    let c = contacts_at(i);
    if is_joint(c.ids.w) {
        assemble_joint(i, c);
        return;
    }
    if is_dist_patch(c) {
        assemble_dist_patch(i, c);
        if HAS_ROLL {
            clear_ext(i);
        }
        return;
    }
    if is_patch(c) {
        assemble_patch(i, c);
        if HAS_ROLL {
            clear_ext(i);
        }
        return;
    }
    let a = c.ids.x;
    let b = c.ids.y;
    let n = c.n_gap.xyz;
    let u = tangent_u(n);
    let w = tangent_w(n);
    let ra = c.ra.xyz;
    let rb = c.rb.xyz;
    // Relative velocity of B w.r.t. A at the contact point (world angular velocities); in a
    // sheared periodic cell B's image moves along the flow at rb.w relative to B (collision
    // wrote it there; 0 otherwise, and the flow axis is zero without shear).
    let v_image = c.rb.w * params.shear_flow.xyz;
    let rel = (vel[b].xyz + v_image + cross(omega[b].xyz, rb)) - (vel[a].xyz + cross(omega[a].xyz, ra));
    let dt = params.dt;
    // The pair's model (Coulomb unless a material has one; uniform flag).
    var m = vec4<f32>(0.0);
    var phys = vec2<f32>(0.0);
    if models_on() {
        phys = pair_physical(c.ids.w);
        m = contact_physical(pair_model(c.ids.w), phys, c);
    }
    var nr = normal_rows(m, c.n_gap.w, dt);
    var e_t = tangent_compliance(m, dt);
    // E adds to the diagonal bound: N + E ≤ diag(tr + E_n + E_T) (see the header).
    let sa = trace_share(a, ra, n, u, w);
    let sb = trace_share(b, rb, n, u, w);
    let tr = contact_count(a) * sa + contact_count(b) * sb;
    let live = tr > 0.0 && nr.x >= 0.0;
    let id = u32(m.x);
    let stateful = id == MODEL_TANH || id == MODEL_LUGRE;
    let hc_v0 = id == MODEL_HUNT_CROSSLEY && phys.y > 0.0;

    // The previous record by key: the warm start, the bristle's γ_T⁻ and the state of tanh and
    // LuGre (looked up for those even without warm start: it is the model's state).
    let cap = params.capacity;
    var found = false;
    var last = vec4<f32>(0.0);
    if (params.warm_start != 0u || e_t > 0.0 || stateful || HAS_ROLL || hc_v0) && live {
        let k = find_prev(warm_key(c));
        if k >= 0 {
            last = warm[k];
            found = true;
        }
    }
    var t = TangentRows(e_t, PROJECTION_CONE, 0.0, vec2<f32>(0.0), vec2<f32>(0.0), last.yz);
    if hc_v0 && live {
        // α = 2χ/(3 v₀) (rows::compliant): the damping needs the impact speed, liveness not.
        let v0 = impact_speed(last.w, c.n_gap.w, dot(n, rel));
        m.z = 2.0 * phys.y / (3.0 * v0);
        nr = normal_rows(m, c.n_gap.w, dt);
        t.st.x = v0;
    }
    let vt = vec2<f32>(dot(u, rel), dot(w, rel));
    var pt = vt - e_t * last.yz; // bristle: v_T⁺ + E_T (γ_T − γ_T⁻) = 0 while sticking
    if stateful {
        t = stateful_rows(m, pair_ext(c.ids.w), c.ra.w, last, vt, dt);
        e_t = t.e_t;
        pt = vt + t.off;
    }
    var eta = select(0.0, 3.0 / (tr + nr.x + e_t), live);
    // APGD's step: the plain diagonal (the header); the residual keeps eta.
    var eta_step = select(eta, select(0.0, 3.0 / (sa + sb + nr.x + e_t), live), !COUNT_BOUND);
    if HAS_ROLL {
        // Rows 3–5 live: the 6-row block's bound halves the linear rows' step.
        if assemble_ext(i, c, live, last.x) {
            eta = 1.5 / (tr + nr.x + e_t);
            eta_step = eta;
        }
    }
    if !COUNT_BOUND {
        contacts_put(i, Contact(c.n_gap, c.ra, vec4<f32>(c.rb.xyz, eta), c.ids));
    }
    if id == MODEL_BRISTLE && m.w > 0.0 {
        // rows::bristle_box: the paper's box |γ_u|, |γ_w| ≤ μ γ_n⁻.
        t.kind = PROJECTION_BOX;
        t.r = c.ra.w * max(last.x, 0.0);
    }
    var shift = 0.0;
    if state_on() && t.kind == PROJECTION_CONE {
        // Cohesion: the cone's shift F_c dt (rows::with_cohesion).
        let coh = pair_cohesion(c.ids.w);
        let r_eff = rolling_radius(a, b, ra, rb);
        shift = (coh.x + JKR_PULL_OFF * coh.y * r_eff) * dt;
    }
    let st = encode_projection(t.st, t.kind, t.r, shift);
    var g0 = vec4<f32>(0.0);
    if found && params.warm_start != 0u {
        g0 = project_state(vec4<f32>(last.x, t.warm, 0.0), st, c.ra.w);
    }
    g0.w = c.ra.w; // μ for the steps (common/solve_sweep.wgsl `mu_in_w`)
    let p = vec3<f32>(nr.y + dot(n, rel), pt);
    rhs[i] = vec4<f32>(p, eta_step);
    if HAS_AUX {
        gam_put(SEG_AUX * cap + i, vec4<f32>(p.x, 0.0, max(nr.x, 0.0), e_t));
    }
    if state_on() {
        gam_put(SEG_STATE * cap + i, st);
    }

    gam_put(SEG_GAMMA * cap + i, g0);
}

// After a solve: this step's keys and impulses become the warm-start data of the next step.
@compute @workgroup_size(256)
fn save_warm(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = linear_index(gid, nwg);
    let nc = n_contacts();
    if i == 0u {
        prev_put(0, vec2<u32>(nc, 0u));
    }
    if i >= nc {
        return;
    }
    let cap = params.capacity;
    let c = contacts_at(i);
    prev_put(1u + i, warm_key(c).yz);
    var rec = gam_at(SEG_GAMMA * cap + i);
    if is_dist_patch(c) {
        // The cells are the state (src/patch/stage.rs steps and carries them); γ for the record.
        warm[i] = rec;
        return;
    }
    if is_patch(c) {
        warm[i] = patch_saved(c, gam_at(SEG_STATE * cap + i));
        return;
    }
    rec.w = 0.0; // γ.w carried μ (`mu_in_w`); the models below put their state here
    if models_on() && !is_joint(c.ids.w) {
        // tanh and LuGre save their state (rows::saved_record): the slip speed s⁺ = ‖v_T⁺‖
        // (v⁺ is in vel/omega by now) and, for LuGre, in place of γ_T the bristle state
        // z⁺ = (z + dt v_T⁺)/(1 + dt σ0 s⁺/g(s⁺)), implicit in the known v⁺.
        let m = pair_model(c.ids.w);
        let id = u32(m.x);
        if id == MODEL_HUNT_CROSSLEY && state_on() {
            // Hunt–Crossley with restitution: the impact speed v₀ (0 for the others).
            rec.w = gam_at(SEG_STATE * cap + i).x;
        }
        if id == MODEL_TANH || id == MODEL_LUGRE {
            let a = c.ids.x;
            let b = c.ids.y;
            let rel = (vel[b].xyz + cross(omega[b].xyz, c.rb.xyz))
                - (vel[a].xyz + cross(omega[a].xyz, c.ra.xyz));
            let n = c.n_gap.xyz;
            let vt = vec2<f32>(dot(tangent_u(n), rel), dot(tangent_w(n), rel));
            rec.w = length(vt);
            if id == MODEL_LUGRE {
                // Plain: w = s⁺; elasto-plastic: w = κ⁺/σ0 with β at (z⁻, v⁺).
                let st = gam_at(SEG_STATE * cap + i);
                let ext = pair_ext(c.ids.w);
                if ext.z > 0.0 {
                    rec.w = lugre_rate(m, ext, c.ra.w, st.xy, vt);
                }
                let dt = params.dt;
                let k = lugre_relax(m, ext, c.ra.w, rec.w, dt);
                rec = vec4<f32>(rec.x, k * (st.xy + dt * vt), rec.w);
            }
        }
    }
    warm[i] = rec;
}

// Velocity (linear, angular) of a joint block's body; the world (A = WORLD) is at rest.
fn joint_body_vel(b: u32) -> array<vec3<f32>, 2> {
    if b == WORLD {
        return array<vec3<f32>, 2>(vec3<f32>(0.0), vec3<f32>(0.0));
    }
    return array<vec3<f32>, 2>(vel[b].xyz, omega[b].xyz);
}

// Body b's share of the diagonal of N_ii on the block's rows t_k: linear rows
// m⁻¹ + (r×t)ᵀ I⁻¹ (r×t), angular rows tᵀ I⁻¹ t; times b's constraint count (the bound).
fn joint_diag(b: u32, r: vec3<f32>, t: array<vec3<f32>, 3>, angular: bool) -> vec3<f32> {
    if b == WORLD {
        return vec3<f32>(0.0);
    }
    var s = vec3<f32>(0.0);
    for (var k = 0u; k < 3u; k++) {
        if angular {
            s[k] = dot(t[k], inv_inertia(b, t[k]));
        } else {
            let x = cross(r, t[k]);
            s[k] = mass_props[b].w + dot(x, inv_inertia(b, x));
        }
    }
    return contact_count(b) * s;
}

// A joint block (src/model/rows, "Joints"): p = offset + G v* on its rows (the joint stage
// wrote the offset — drift stabilisation, motor target — into rhs[i].xyz); per-row scaling
// η_k = 3/(k B_kk) for its k rows (B ≤ k diag(B) for a PSD k×k block, so the bound
// N ≤ diag(3/η) of the contacts holds; unlike 3/trace, rows of very different stiffness —
// a lever arm's rotation against a translation — each get their own step): η_0 in rhs.w
// (the first active row's η when row 0 is off, so rhs.w > 0 still means "active"), η_1, η_2
// in aux.zw. Warm start by the block's key, no compliance.
fn assemble_joint(i: u32, c: Contact) {
    let flags = c.ids.w;
    let angular = (flags & JOINT_ANGULAR) != 0u;
    let m = joint_mask(flags);
    let n = c.n_gap.xyz;
    let t = array<vec3<f32>, 3>(n, tangent_u(n), tangent_w(n));
    let va = joint_body_vel(c.ids.x);
    let vb = joint_body_vel(c.ids.y);
    var rel = vb[1] - va[1];
    if !angular {
        rel = (vb[0] + cross(vb[1], c.rb.xyz)) - (va[0] + cross(va[1], c.ra.xyz));
    }
    let off = rhs[i].xyz;
    let p = (off + vec3<f32>(dot(t[0], rel), dot(t[1], rel), dot(t[2], rel))) * m;
    let diag = joint_diag(c.ids.x, c.ra.xyz, t, angular) + joint_diag(c.ids.y, c.rb.xyz, t, angular);
    let rows = dot(m, vec3<f32>(1.0));
    var e = vec3<f32>(0.0);
    for (var k = 0u; k < 3u; k++) {
        e[k] = select(0.0, 3.0 / (rows * diag[k]), m[k] != 0.0 && diag[k] > 0.0);
    }
    // Inactive lanes take the first active row's η (any positive value: they stay 0).
    let first = select(select(e.z, e.y, m.y != 0.0), e.x, m.x != 0.0);
    let eta = select(first, 0.0, first <= 0.0);
    let ev = select(vec3<f32>(eta), e, m != vec3<f32>(0.0));
    let cap = params.capacity;
    var g0 = vec4<f32>(0.0);
    if params.warm_start != 0u && eta > 0.0 {
        let k = find_prev(warm_key(c));
        if k >= 0 {
            g0 = project_joint(warm[k], flags, c.ra.w);
        }
    }
    rhs[i] = vec4<f32>(p, eta);
    if HAS_ROLL {
        clear_ext(i);
    }
    gam_put(SEG_AUX * cap + i, vec4<f32>(p.x, 0.0, ev.y, ev.z));
    gam_put(SEG_GAMMA * cap + i, g0);
}

// Rolling and spinning rows 3–5 (src/model/rows, "Rolling and spinning"; HAS_ROLL only).

// The pair's (μ_r, μ_spin) (rows::pair_rolling): each by min; lanes 6, 7 of the table.
fn pair_rolling(mats: u32) -> vec2<f32> {
    let a = models[material(mats >> 16u) + 1u];
    let b = models[material(mats & 0xffffu) + 1u];
    return min(a.zw, b.zw);
}

// r_eff = r_A r_B/(r_A + r_B) from the lever arms; a body with zero inverse mass is flat.
fn rolling_radius(a: u32, b: u32, ra: vec3<f32>, rb: vec3<f32>) -> f32 {
    let la = length(ra);
    let lb = length(rb);
    if mass_props[a].w == 0.0 {
        return lb;
    }
    if mass_props[b].w == 0.0 {
        return la;
    }
    return select(0.0, la * lb / (la + lb), la + lb > 0.0);
}

// Σ_k t_kᵀ I⁻¹ t_k over (n, u, w): body b's share of the angular rows' trace.
fn ang_trace(b: u32, n: vec3<f32>, u: vec3<f32>, w: vec3<f32>) -> f32 {
    return dot(n, inv_inertia(b, n)) + dot(u, inv_inertia(b, u)) + dot(w, inv_inertia(b, w));
}

// Rows 3–5 of contact i: p_e = (ω_B − ω_A)·(n, u, w), η_e = 3/(2 trace), the lagged bounds
// (μ_spin, μ_r) r_eff γ_n⁻; γ⁰ = 0 (no warm start). Returns whether the rows are live.
fn assemble_ext(i: u32, c: Contact, live: bool, gn_last: f32) -> bool {
    let cap = params.capacity;
    let a = c.ids.x;
    let b = c.ids.y;
    let n = c.n_gap.xyz;
    let u = tangent_u(n);
    let w = tangent_w(n);
    let coef = pair_rolling(c.ids.w);
    let reff = rolling_radius(a, b, c.ra.xyz, c.rb.xyz);
    let g = max(gn_last, 0.0) * reff;
    let bounds = vec2<f32>(coef.y * g, coef.x * g);
    let tr = contact_count(a) * ang_trace(a, n, u, w) + contact_count(b) * ang_trace(b, n, u, w);
    let on = live && tr > 0.0 && (bounds.x > 0.0 || bounds.y > 0.0);
    let relw = omega[b].xyz - omega[a].xyz;
    let p = vec3<f32>(dot(n, relw), dot(u, relw), dot(w, relw));
    gam_put(SEG_EXT_RHS * cap + i, vec4<f32>(p, select(0.0, 1.5 / tr, on)));
    gam_put(SEG_EXT_BOUND * cap + i, vec4<f32>(bounds, reff, 0.0));
    for (var k = 0u; k < 4u; k++) {
        gam_put((SEG_EXT + k) * cap + i, vec4<f32>(0.0));
    }
    return on;
}

// A joint block has no rows 3–5: η_e = 0 keeps its extension lanes at 0.
fn clear_ext(i: u32) {
    let cap = params.capacity;
    gam_put(SEG_EXT_RHS * cap + i, vec4<f32>(0.0));
    gam_put(SEG_EXT_BOUND * cap + i, vec4<f32>(0.0));
    for (var k = 0u; k < 4u; k++) {
        gam_put((SEG_EXT + k) * cap + i, vec4<f32>(0.0));
    }
}

// ---------------------------------------------------------------- patch blocks (book: Contact patches)
// The reduced planar LuGre model on a contact patch (src/patch/couple.rs, f64 twin
// `PatchModel`): lanes (spin about n, u, w at the patch centre), diagonal compliance
// (aux.z on the spin lane, aux.w on u and w), state (z, guard radius) in the state segment.

// B's twist relative to A at the patch centre: (spin about n, u, w).
fn patch_twist(c: Contact) -> vec3<f32> {
    let a = c.ids.x;
    let b = c.ids.y;
    let n = c.n_gap.xyz;
    let rel = (vel[b].xyz + cross(omega[b].xyz, c.rb.xyz)) - (vel[a].xyz + cross(omega[a].xyz, c.ra.xyz));
    return vec3<f32>(dot(n, omega[b].xyz - omega[a].xyz), dot(tangent_u(n), rel), dot(tangent_w(n), rel));
}

// ‖v‖_A = √(r² ω² + v_u² + v_w²).
fn patch_slip(v: vec3<f32>, r: f32) -> f32 {
    return length(vec3<f32>(r * v.x, v.yz));
}

// 1/(1 + dt κ) with κ = σ0 s/g(s).
fn patch_a(m: vec4<f32>, ext: vec4<f32>, mu: f32, s: f32, dt: f32) -> f32 {
    let g = stribeck(mu, ext, s);
    let den = g + dt * m.y * s;
    return select(1.0, g / den, den > 0.0);
}

// The last total normal impulse of the patch's points: the pair's contacts before the patch
// record (contiguous: the list is sorted by key) with the patch's normal, by their keys.
fn patch_last_normal(i: u32, c: Contact) -> f32 {
    var gn = 0.0;
    var j = i;
    while j > 0u {
        j -= 1u;
        let p = contacts_at(j);
        if p.ids.x != c.ids.x || p.ids.y != c.ids.y {
            break;
        }
        if dot(p.n_gap.xyz, c.n_gap.xyz) > 0.9999 {
            let k = find_prev(p.ids.xyz);
            if k >= 0 {
                gn += warm[k].x;
            }
        }
    }
    return gn;
}

// Body b's share of the block's diagonal (count-scaled as the bound): spin nᵀI⁻¹n, and
// the larger of the u, w rows' m⁻¹ + |r×t|²_I⁻¹.
fn patch_diag(b: u32, r: vec3<f32>, n: vec3<f32>) -> vec2<f32> {
    let cu = cross(r, tangent_u(n));
    let cw = cross(r, tangent_w(n));
    let t = mass_props[b].w + max(dot(cu, inv_inertia(b, cu)), dot(cw, inv_inertia(b, cw)));
    return contact_count(b) * vec2<f32>(dot(n, inv_inertia(b, n)), t);
}

fn assemble_patch(i: u32, c: Contact) {
    let cap = params.capacity;
    let dt = params.dt;
    let m = pair_model(c.ids.w);
    let ext = pair_ext(c.ids.w);
    let mu = c.ra.w;
    let r = c.rb.w;
    let n = c.n_gap.xyz;
    let v = patch_twist(c);
    var last = vec4<f32>(0.0);
    let k = find_prev(c.ids.xyz);
    if k >= 0 {
        last = warm[k];
    }
    let gn = patch_last_normal(i, c);
    let a = patch_a(m, ext, mu, last.w, dt);
    let big = m.y + m.z / dt;
    let sc = vec3<f32>(r * r, 1.0, 1.0);
    let vis = vec3<f32>(c.n_gap.w, 1.0, 1.0);
    let c1 = (big * a * dt + m.w * vis) * sc;
    let c0 = (big * a - m.z / dt) * last.xyz;
    let bd = patch_diag(c.ids.x, c.ra.xyz, n) + patch_diag(c.ids.y, c.rb.xyz, n);
    var e = vec2<f32>(0.0);
    var off = vec3<f32>(0.0);
    var radius = 0.0;
    var g0 = vec4<f32>(0.0);
    if gn > 0.0 {
        e = vec2<f32>(1.0 / (gn * c1.x), 1.0 / (gn * c1.y));
        off = c0 / c1;
        radius = (2.0 * ext.x + (m.z + m.w) * patch_slip(v, r)) * gn;
        g0 = project_patch(vec4<f32>(-gn * (c0 + c1 * v), 0.0), radius, r);
    }
    // Per-lane scaling (the spin and the sliding lanes differ by ~r² in scale and
    // compliance): η_k = 3/(3 B_kk + E_k), B ≤ 3 diag(B) for the PSD 3×3 block, so the
    // bound N + E ≤ diag(3/η) of the contacts holds. η_spin in rhs.w, η_T in aux.y.
    let live = bd.x + bd.y > 0.0 && gn > 0.0;
    let eta = select(vec2<f32>(0.0), 3.0 / (3.0 * bd + e), live);
    let p = v + off;
    rhs[i] = vec4<f32>(p, eta.x);
    gam_put(SEG_AUX * cap + i, vec4<f32>(radius, eta.y, e));
    // A new patch (no record: no s⁻) saves with a(s⁺) instead (flag a = −1).
    gam_put(SEG_STATE * cap + i, vec4<f32>(last.xyz, select(-1.0, a, k >= 0)));
    gam_put(SEG_GAMMA * cap + i, g0);
}

// The saved record (z⁺, s⁺) from the kept state st = (z, a) and the post-solve twist (in
// vel/omega): z⁺ = a (z + dt A v⁺) with the step's own a = a(s⁻), so the saved state is the
// one the step's force used (a(s⁺) here, as the point LuGre does, makes σ1 (z⁺ − z)/dt see
// a jump every step: a decelerating slide then loses 4 % of its friction at dt = 1e-3).
fn patch_saved(c: Contact, st: vec4<f32>) -> vec4<f32> {
    let dt = params.dt;
    let r = c.rb.w;
    let v = patch_twist(c);
    let s = patch_slip(v, r);
    var a = st.w;
    if a < 0.0 {
        a = patch_a(pair_model(c.ids.w), pair_ext(c.ids.w), c.ra.w, s, dt);
    }
    return vec4<f32>(a * (st.xyz + dt * vec3<f32>(r * r, 1.0, 1.0) * v), s);
}

// ---------------------------------------------------------------- lugre_patch blocks
// The distributed model (src/patch/couple.rs `distributed_rows`, f64 twin): the patch
// stage (shaders/patch_loop.wgsl `prepare`) wrote the cells' affine sums per unit normal
// load into this contact's aux and state segments — (S0, Sx, Sy, Srr) and (Σ w c0_x,
// Σ w c0_y, Σ w (x c0_y − y c0_x)) in the patch frame (x = u, y = w about the patch
// centre). Lanes (spin, u, w): C = [[Srr, −Sy, Sx], [−Sy, S0, 0], [Sx, 0, S0]],
// c0 = (c0_τ, c0_x, c0_y); the row v + E γ + C⁻¹ c0 = 0 with E = (γ_n⁻ C)⁻¹.
fn assemble_dist_patch(i: u32, c: Contact) {
    let cap = params.capacity;
    let m = pair_model(c.ids.w);
    let ext = pair_ext(c.ids.w);
    let s = gam_at(SEG_AUX * cap + i);
    let k0 = gam_at(SEG_STATE * cap + i);
    let cm = mat3x3<f32>(
        vec3<f32>(s.w, -s.z, s.y),
        vec3<f32>(-s.z, s.x, 0.0),
        vec3<f32>(s.y, 0.0, s.x),
    );
    let c0 = vec3<f32>(k0.z, k0.x, k0.y);
    let v = patch_twist(c);
    let gn = patch_last_normal(i, c);
    let det = determinant(cm);
    let bd = patch_diag(c.ids.x, c.ra.xyz, c.n_gap.xyz) + patch_diag(c.ids.y, c.rb.xyz, c.n_gap.xyz);
    var e = mat3x3<f32>(vec3<f32>(0.0), vec3<f32>(0.0), vec3<f32>(0.0));
    var off = vec3<f32>(0.0);
    var radius = 0.0;
    var g0 = vec4<f32>(0.0);
    var eta = vec3<f32>(0.0);
    if gn > 0.0 && det > 0.0 && bd.x + bd.y > 0.0 {
        let inv = inverse3(cm, det);
        e = inv * (1.0 / gn);
        off = inv * c0;
        radius = (2.0 * ext.x + (m.z + m.w) * patch_slip(v, c.rb.w)) * gn;
        g0 = project_patch(vec4<f32>(-gn * (cm * v + c0), 0.0), radius, c.rb.w);
        // η_k = 3/(3 B_kk + Σ_j |E_kj|) (Gershgorin: N + E ≤ diag(3/η)); u and w share one.
        let row = vec3<f32>(
            abs(e[0].x) + abs(e[1].x) + abs(e[2].x),
            abs(e[0].y) + abs(e[1].y) + abs(e[2].y),
            abs(e[0].z) + abs(e[1].z) + abs(e[2].z),
        );
        eta = 3.0 / (3.0 * vec3<f32>(bd.x, bd.y, bd.y) + row);
    }
    rhs[i] = vec4<f32>(v + off, eta.x);
    gam_put(SEG_AUX * cap + i, vec4<f32>(radius, min(eta.y, eta.z), e[0].x, e[1].y));
    gam_put(SEG_STATE * cap + i, vec4<f32>(e[2].z, e[1].x, e[2].x, e[2].y));
    gam_put(SEG_GAMMA * cap + i, g0);
}

// The inverse of a 3 × 3 matrix with determinant det ≠ 0 (adjugate / det).
fn inverse3(m: mat3x3<f32>, det: f32) -> mat3x3<f32> {
    let a = m[0];
    let b = m[1];
    let c = m[2];
    return transpose(mat3x3<f32>(cross(b, c), cross(c, a), cross(a, b))) * (1.0 / det);
}
