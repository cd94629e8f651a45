// ---------------------------------------------------------------- convex hull narrow phase
// f64 twin: src/reference/convex.rs (same algorithm, decisions and feature ids). A hull's
// data lies in the collide `shapes` table (src/collide/mod.rs, `convex_record`): record
// [0] = (vertices, faces, first vertex, first plane) as u32 bits; vertices (xyz), planes
// (outward n, offset d), face headers (first loop entry, count), loop vertex indices
// packed 4 per vec4. The functions that read the table live in the stages that bind it
// (collide_pairs: sphere–hull; collide_walls: hull against planes and box containers).

// Pipeline-overridable: false when the scene has no convex grains (see HAS_BOXES); such
// scenes' pipelines are also built without the text between `convex:begin` and
// `convex:end` (src/collide/mod.rs, `stage_source`).
override HAS_CONVEX: bool = true;

// convex:begin
// Closest point of segment [a, b] to x.
fn hull_seg_closest(a: vec3<f32>, b: vec3<f32>, x: vec3<f32>) -> vec3<f32> {
    let e = b - a;
    let l2 = dot(e, e);
    var t = 0.0;
    if l2 > 0.0 {
        t = clamp(dot(x - a, e) / l2, 0.0, 1.0);
    }
    return a + e * t;
}

// (gap, vertex) pairs ordered lexicographically: the deepest-4 selection's order (ties to
// the lower vertex, as boxes).
fn hull_before(g: f32, k: u32, h: f32, j: u32) -> bool {
    return g < h || (g == h && k < j);
}
// convex:end
