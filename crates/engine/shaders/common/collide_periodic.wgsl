// stages: collide_pairs
// ---------------------------------------------------------------- periodic cell
// f64 twin: src/reference/periodic.rs; the cell: src/collide/periodic.rs. Along an axis with
// period L > 0 (params.cell_period), grains live in [origin, origin + L) (integrate.wgsl wraps
// them) and a pair touches through its minimum image (Allen & Tildesley 2017, §1.6). The
// period exceeds twice a contact's reach (checked on the host), so the image is unique.
//
// Lees–Edwards shear (Lees & Edwards 1972; params.shear_flow / shear_gradient, zero without):
// the images one period up the gradient axis are also shifted by δ along the flow axis and
// move along it at γ̇ L_g relative to the grain. Without shear every shift below is an exact
// zero, so a plain periodic cell computes what it computed before.

// Periods up the gradient axis from `p` to `q`, rounded (0 without shear).
fn gradient_periods(p: vec3<f32>, q: vec3<f32>) -> f32 {
    let eg = params.shear_gradient.xyz;
    let lg = dot(params.cell_period.xyz, eg);
    return select(0.0, round(dot(q - p, eg) / lg), lg > 0.0);
}

// The shift of the image n periods up the gradient axis: n (L_g along it, δ along the flow).
fn gradient_image_shift(n: f32) -> vec3<f32> {
    let eg = params.shear_gradient.xyz;
    let lg = dot(params.cell_period.xyz, eg);
    return n * (lg * eg + params.shear_gradient.w * params.shear_flow.xyz);
}

// The image of `pj` nearest to `pi`: pj shifted by whole periods along the periodic axes
// (first along the gradient axis of a sheared cell, with its flow offset).
fn nearest_image(pi: vec3<f32>, pj: vec3<f32>) -> vec3<f32> {
    if !PERIODIC {
        return pj;
    }
    let l = params.cell_period.xyz;
    let periodic = l > vec3<f32>(0.0);
    let q = pj - gradient_image_shift(gradient_periods(pi, pj));
    let d = q - pi;
    let k = select(vec3<f32>(0.0), round(d / select(vec3<f32>(1.0), l, periodic)), periodic);
    return q - k * l;
}

// The flow velocity of the image at `image` of the grain stored at `stored` relative to the
// grain: γ̇ L_g per period up the gradient axis (0 without shear). Collision writes it to a
// contact's rb.w; the assembly adds it to B's velocity (solve_assemble.wgsl).
fn image_flow_speed(image: vec3<f32>, stored: vec3<f32>) -> f32 {
    return gradient_periods(stored, image) * params.shear_flow.w;
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

// Image shift number `s` (bits 0..2 pick which axes' seam shifts to apply) of grain `p`
// whose seam shifts are `t`; w = 0 when one of the picked shifts is 0 (that image is not
// visited). In a sheared cell the image beyond a gradient face is also shifted by ±δ along
// the flow and brought back into the cell along it; its own flow seam shift (not p's) then
// decides whether and where the flow is shifted too. The 27 cells around the image are
// visited whatever its offset, so a shifted image straddling cells finds its neighbours.
fn image_shift(p: vec3<f32>, t: vec3<f32>, s: u32, reach: f32) -> vec4<f32> {
    let pick = vec3<bool>((s & 1u) != 0u, (s & 2u) != 0u, (s & 4u) != 0u);
    let picked = select(vec3<f32>(0.0), t, pick);
    // ±1 when the gradient axis is picked with a shift, else 0 (always 0 without shear).
    let up = sign(dot(picked, params.shear_gradient.xyz));
    let ef = params.shear_flow.xyz;
    let lf = dot(params.cell_period.xyz, ef);
    let pf = dot(p - params.cell_origin.xyz, ef) + up * params.shear_gradient.w;
    let along = up * params.shear_gradient.w - select(0.0, floor(pf / lf) * lf, up != 0.0);
    let tq = seam_shift(p + along * ef, reach);
    let used = !any(pick & (tq == vec3<f32>(0.0)));
    return vec4<f32>(select(vec3<f32>(0.0), tq, pick) + along * ef, select(0.0, 1.0, used));
}
