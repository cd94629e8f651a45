// stages: solve_schur, solve_fused, solve_gauss
// The first half of the matrix-free product, per body (see solve_schur): shared with the
// one-workgroup solver (solve_fused) and Gauss–Seidel's gather of its hubs (solve_gauss).

// Body b's (linear, angular) impulse sum over its joint blocks (after its contacts, so the
// order is fixed). Angular blocks carry a torque only.
fn gather_joints(b: u32, base: u32, shift: f32) -> array<vec3<f32>, 2> {
    var lin = vec3<f32>(0.0);
    var ang = vec3<f32>(0.0);
    let cap = params.capacity;
    let first = min(counts[0], cap);
    let nb = params.bodies;
    let end = jcsr[b + 1u];
    for (var k = jcsr[b]; k < end; k++) {
        let e = jcsr[nb + 1u + k];
        let ci = first + (e >> 1u);
        if ci >= cap {
            break;
        }
        let c = contacts_at(ci);
        let m = joint_mask(c.ids.w);
        let g = (gam_at(base + ci).xyz - vec3<f32>(shift)) * m;
        let n = c.n_gap.xyz;
        var f = g.x * n + g.y * tangent_u(n) + g.z * tangent_w(n);
        var r = c.rb.xyz;
        if (e & 1u) == 0u {
            f = -f;
            r = c.ra.xyz;
        }
        if (c.ids.w & JOINT_ANGULAR) != 0u {
            ang += f;
        } else {
            lin += f;
            ang += cross(r, f);
        }
    }
    return array<vec3<f32>, 2>(lin, ang);
}

// Contact entry e of a body's list (contact * 2 + side) added to the body's impulse sums
// (`lin`, `ang`: world force and torque), from `gam` at `base` (slot `slot`, − shift).
fn add_entry(
    e: u32,
    base: u32,
    slot: u32,
    shift: f32,
    lin: ptr<function, vec3<f32>>,
    ang: ptr<function, vec3<f32>>,
) {
    let ci = e >> 1u;
    let c = contacts_at(ci);
    let g = gam_at(base + ci).xyz - vec3<f32>(shift);
    let n = c.n_gap.xyz;
    // World impulse on B: γ_n n + γ_u u + γ_w w; A takes the negative.
    var f = g.x * n + g.y * tangent_u(n) + g.z * tangent_w(n);
    // A patch block's lane x is a torque about n, not a normal force.
    var tq = vec3<f32>(0.0);
    if is_patch(c) {
        tq = g.x * n;
        f -= tq;
    }
    let side_a = (e & 1u) == 0u;
    let r = lever_arm(ci, c, side_a);
    if side_a {
        f = -f;
        tq = -tq;
    }
    *lin += f;
    *ang += cross(r, f) + tq;
    if HAS_ROLL {
        // Rows 3–5: a pure torque γ_s n + γ_ru u + γ_rw w on B, its negative on A.
        let ge = gam_at(ext_at(slot, ci)).xyz - vec3<f32>(shift);
        let te = ge.x * n + ge.y * tangent_u(n) + ge.z * tangent_w(n);
        *ang += select(te, -te, side_a);
    }
}

// Body b's Δv from its impulse sums: M_b⁻¹ (lin, ang), the inverse inertia `mp.xyz` of the
// body frame rotated to the world.
fn put_dv(b: u32, mp: vec4<f32>, lin: vec3<f32>, ang: vec3<f32>) {
    let q = rot[b];
    dv[2u * b] = vec4<f32>(mp.w * lin, 0.0);
    dv[2u * b + 1u] = vec4<f32>(quat_rotate(q, mp.xyz * quat_rotate_inv(q, ang)), 0.0);
}

// Δv of body b from `gam` slot `slot` (− shift; common/solve_roles.wgsl).
fn gather(b: u32, slot: u32, shift: f32) {
    let mp = mass_props[b];
    if mp.w == 0.0 {
        dv[2u * b] = vec4<f32>(0.0);
        dv[2u * b + 1u] = vec4<f32>(0.0);
        return;
    }
    let base = gam_seg(slot) * params.capacity;
    var lin = vec3<f32>(0.0);
    var ang = vec3<f32>(0.0);
    let end = body_offsets[b + 1u];
    for (var k = body_offsets[b]; k < end; k++) {
        add_entry(body_entries[k], base, slot, shift, &lin, &ang);
    }
    if joints_on() {
        let j = gather_joints(b, base, shift);
        lin += j[0];
        ang += j[1];
    }
    put_dv(b, mp, lin, ang);
}
