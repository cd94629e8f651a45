// stages: solve_iterate, solve_gauss
// The exact cone's offset (src/model/rows, "The cone"): shared by the outer pass between
// cone problems (solve_iterate `outer_offset`) and Gauss–Seidel's visits, which take each
// contact's offset from its own slip as they go (solve_gauss `follow_slip`); and the
// inverse mass a contact's block has along a direction, which the Painlevé test uses too.

// The exact cone's offset s = μ‖u_T‖ for the slip u_T the contact keeps and the normal
// velocity u_n with the uncorrected p_n, both at the current γ (before the first cone
// problem: the warm start). A contact still approaching (u_n < 0) is owed at least the normal
// impulse −u_n / N_nn that stops it, whose friction can take μ (N_TT / N_nn)(−u_n) off the
// slip along its direction (N_dd: the block's diagonal along d); the offset counts only the
// slip left after that. Without it a grain landing with a tangential speed v_T, whose impact
// ends in sticking, would keep s = μ v_T with u_T = 0 and sink by s·dt (an offset is safe
// when it does not exceed μ‖u_T‖ of the problem's solution). At the fixed point u_n = 0 and
// the offset is μ‖u_T‖ as before.
fn slip_offset(c: Contact, mu: f32, u_n: f32, u_t: vec2<f32>, cone: bool) -> f32 {
    let slip = length(u_t);
    if !cone || slip == 0.0 || mu == 0.0 {
        return 0.0;
    }
    let n = c.n_gap.xyz;
    let f = (u_t.x * tangent_u(n) + u_t.y * tangent_w(n)) / slip;
    let n_nn = inverse_mass_along(c, n);
    let k = select(0.0, inverse_mass_along(c, f) / n_nn, n_nn > 0.0);
    return mu * max(slip - mu * k * max(-u_n, 0.0), 0.0);
}

// The block's diagonal along the world direction d: Σ over the contact's bodies of
// m⁻¹ + (r × d)·I⁻¹(r × d), a body without inverse mass counting nothing.
fn inverse_mass_along(c: Contact, d: vec3<f32>) -> f32 {
    return body_inverse_mass_between(c.ids.x, c.ra.xyz, d, d)
        + body_inverse_mass_between(c.ids.y, c.rb.xyz, d, d);
}

// Body b's velocity change along a per unit impulse along d at the lever r:
// m⁻¹ a·d + (r × a)·I⁻¹(r × d), I⁻¹ in the world frame; a body without inverse mass counts
// nothing. Also the Painlevé test's normal share (solve_iterate `painleve`).
fn body_inverse_mass_between(b: u32, r: vec3<f32>, a: vec3<f32>, d: vec3<f32>) -> f32 {
    let mp = mass_props[b];
    if mp.w == 0.0 {
        return 0.0;
    }
    let rd = cross(r, d);
    return mp.w * dot(a, d) + dot(cross(r, a), quat_rotate(rot[b], mp.xyz * quat_rotate_inv(rot[b], rd)));
}
