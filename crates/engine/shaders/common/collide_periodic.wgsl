// stages: collide_pairs
// ---------------------------------------------------------------- periodic cell
// f64 twin: src/reference/periodic.rs; the cell: src/collide/periodic.rs. Along an axis with
// period L > 0 (params.cell_period), grains live in [origin, origin + L) (integrate.wgsl wraps
// them) and a pair touches through its minimum image (Allen & Tildesley 2017, §1.6). The
// period exceeds twice a contact's reach (checked on the host), so the image is unique.

// The image of `pj` nearest to `pi`: pj shifted by whole periods along the periodic axes.
fn nearest_image(pi: vec3<f32>, pj: vec3<f32>) -> vec3<f32> {
    if !PERIODIC {
        return pj;
    }
    let l = params.cell_period.xyz;
    let periodic = l > vec3<f32>(0.0);
    let d = pj - pi;
    let k = select(vec3<f32>(0.0), round(d / select(vec3<f32>(1.0), l, periodic)), periodic);
    return pj - k * l;
}

// The shift that takes grain p to its image beyond the nearer face of the cell, per
// periodic axis: +L within `reach` of the lower face, −L within it of the upper (the nearer
// face when both: a partner across the seam lies within the reach of the nearer one only),
// 0 elsewhere and along axes that are not periodic.
fn seam_shift(p: vec3<f32>, reach: f32) -> vec3<f32> {
    let l = params.cell_period.xyz;
    let below = p - params.cell_origin.xyz;
    let above = l - below;
    let up = (below < vec3<f32>(reach)) & (below <= above);
    let down = (above < vec3<f32>(reach)) & !up;
    let periodic = l > vec3<f32>(0.0);
    return select(vec3<f32>(0.0), select(-l, l, up), periodic & (up | down));
}

// Image shift number `s` (bits 0..2 pick which axes' seam shifts to apply) of a grain whose
// seam shifts are `t`; w = 0 when one of the picked shifts is 0 (that image is not visited).
fn image_shift(t: vec3<f32>, s: u32) -> vec4<f32> {
    let pick = vec3<bool>((s & 1u) != 0u, (s & 2u) != 0u, (s & 4u) != 0u);
    let used = !any(pick & (t == vec3<f32>(0.0)));
    return vec4<f32>(select(vec3<f32>(0.0), t, pick), select(0.0, 1.0, used));
}
