// stages: solve_iterate, solve_schur, solve_reduce, solve_fused, solve_gauss
// Roles of the iterate slots (no commit copies). The iterates live in slots of
// `gam` (4) and `nv` (3); which slot plays which role is `scal.roles`, so accepting a trial
// renames slots instead of copying γ, Nγ and the best iterate per contact. The roles:
// `cur` γ_k (and `ncur` Nγ_k), `prev` γ_{k−1} (`nprev`), `trial` (`ntrial`), `best`, and `y`
// (`ny`): where the first step after an acceptance stores APGD's extrapolation
// y = γ_k + β (γ_k − γ_{k−1}) and Ny = (1 + β) Nγ_k − β Nγ_{k−1} (N is linear: no product),
// over γ_{k−1} unless that is the best iterate; later steps (after a rejected trial) and the
// products read them there. Formed once and stored, as the copies did, so every kernel sees
// the same bits (recomputing them where read let the compiler round them differently in
// each kernel, and the sufficient-decrease test then lost its consistency near the f32 floor).
// The returned impulses (best; Jacobi: the last) end in slot 0 (`finish_item`).
//
// Slot k is segment k of `gam` / `nv`, or 0 for all in plain Jacobi's layout (SLOTS false),
// which computes in place; rolling rows 3–5 use ext slot k (ext_at(k, i)) in every layout.

struct Roles {
    cur: u32,
    prev: u32,
    trial: u32,
    best: u32,
    y: u32,
    ncur: u32,
    nprev: u32,
    ntrial: u32,
    ny: u32,
    // Whether y and Ny are stored in their slots (a trial was rejected since they were formed).
    formed: bool,
}

// Slots 2 bits each (cur, prev, trial, best, y, ncur, nprev, ntrial, ny), then `formed`.
fn unpack_roles(r: u32) -> Roles {
    return Roles(r & 3u, (r >> 2u) & 3u, (r >> 4u) & 3u, (r >> 6u) & 3u, (r >> 8u) & 3u, (r >> 10u) & 3u, (r >> 12u) & 3u, (r >> 14u) & 3u, (r >> 16u) & 3u, (r >> 18u) != 0u);
}

fn pack_roles(s: Roles) -> u32 {
    return s.cur | (s.prev << 2u) | (s.trial << 4u) | (s.best << 6u) | (s.y << 8u) | (s.ncur << 10u) | (s.nprev << 12u) | (s.ntrial << 14u) | (s.ny << 16u) | (select(0u, 1u, s.formed) << 18u);
}

// Before the first sweep: γ⁰ in slot 0 is current, previous, best and y⁰; Nγ⁰ in nv slot 0
// is Ny⁰ too (formed).
fn initial_roles() -> u32 {
    return pack_roles(Roles(0u, 0u, 2u, 0u, 0u, 0u, 0u, 2u, 0u, true));
}

fn roles() -> Roles {
    return unpack_roles(scal.roles);
}

// Segment of `gam` slot k (plain Jacobi: every slot is γ, segment 0).
fn gam_seg(k: u32) -> u32 {
    return select(0u, k, SLOTS);
}

// Segment of `nv` slot k.
fn nv_seg(k: u32) -> u32 {
    return select(0u, k, SLOTS);
}

// Index of ext slot k of constraint i in `gam` (rolling rows 3–5).
fn ext_at(k: u32, i: u32) -> u32 {
    return (SEG_EXT + k) * params.capacity + i;
}
