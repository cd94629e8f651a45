// Cell weights of a lugre_patch contact (book: Contact patches): uniform pressure over the patch
// polygon (≤ 8 vertices in the patch frame, origin at the patch centre), an n × n grid of
// square cells covering the polygon's bounding box about the origin, each cell's area
// fraction from 8 × 8 sub-samples (even-odd rule), normalised to Σ w = 1. One workgroup per
// patch, a fixed-order tree reduction for the sums. CPU twin: PatchShape::new with
// Pressure::Uniform(Outline::Polygon) (src/patch/pressure.rs).
// out[k] = (h, cop_x, cop_y, Σ raw weight in cells); a polygon covering no sample gets
// zero weights (a dead patch, no NaN).

struct WeightsParams {
    count: u32,
    n: u32,
    _pad0: u32,
    _pad1: u32,
}

@group(0) @binding(0) var<uniform> wp: WeightsParams;
@group(0) @binding(1) var<storage, read> polys: array<Polygon>;
@group(0) @binding(2) var<storage, read_write> weights: array<f32>;
@group(0) @binding(3) var<storage, read_write> out: array<vec4<f32>>;

@compute @workgroup_size(256)
fn weights_main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                @builtin(local_invocation_index) lid: u32) {
    let k = group_index(wid, nwg);
    if k >= wp.count {
        return;
    }
    let p = polys[k];
    let n = wp.n;
    let h = polygon_cell_size(p, n);
    var acc = vec4<f32>(0.0);
    for (var i = lid; i < n * n; i += 256u) {
        let c = (vec2<f32>(f32(i % n), f32(i / n)) + 0.5 - 0.5 * f32(n)) * h;
        let w = cell_coverage(p, c, h);
        weights[k * n * n + i] = w;
        acc += vec4<f32>(w, w * c, 0.0);
    }
    reduce1(lid, acc);
    let sum = red_a[0].x;
    let inv = select(0.0, 1.0 / sum, sum > 0.0);
    for (var i = lid; i < n * n; i += 256u) {
        weights[k * n * n + i] *= inv;
    }
    if lid == 0u {
        out[k] = vec4<f32>(h, red_a[0].yz * inv, sum);
    }
}
