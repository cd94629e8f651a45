// Distributed planar LuGre at steady state (Arslan Waltersson & Karayiannidis eq. 12 in 13-14): one workgroup per
// job (a patch and a twist), with the paper's bilinear blend of the four pure rotations
// about the cell corners around the centre of rotation when it lies inside the grid.
// Also builds the reduced model's limit-surface tables: each corner is one job.

struct SteadyJob {
    twist: vec4<f32>,
    patch_id: u32,
    _pad0: u32,
    _pad1: u32,
    _pad2: u32,
}

@group(0) @binding(0) var<uniform> params: PatchParams;
@group(0) @binding(1) var<storage, read> descs: array<PatchDesc>;
@group(0) @binding(2) var<storage, read> weights: array<f32>;
@group(0) @binding(3) var<storage, read> jobs: array<SteadyJob>;
@group(0) @binding(4) var<storage, read_write> out: array<vec4<f32>>;

fn steady_cell(v: vec2<f32>) -> vec2<f32> {
    return params.sigma0 * z_steady(params, v) + params.sigma2 * v;
}

@compute @workgroup_size(256)
fn steady(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
          @builtin(local_invocation_index) lid: u32) {
    let j = group_index(wid, nwg);
    if j >= params.count {
        return;
    }
    let job = jobs[j];
    let d = descs[job.patch_id];
    let t = job.twist.xyz;
    // Blend: up to four (weight, twist) pairs.
    var s = vec4<f32>(1.0, 0.0, 0.0, 0.0);
    var tw = array<vec3<f32>, 4>(t, t, t, t);
    if t.z != 0.0 {
        let cor = vec2<f32>(-t.y / t.z, t.x / t.z);
        let x0 = 0.5 * f32(d.nx) * d.h;
        let y0 = 0.5 * f32(d.ny) * d.h;
        let f = (cor + vec2<f32>(x0, y0)) / d.h;
        let i = floor(f);
        if i.x >= 0.0 && i.x < f32(d.nx) && i.y >= 0.0 && i.y < f32(d.ny) {
            let df = f - i;
            s = vec4<f32>((1.0 - df.x) * (1.0 - df.y), df.x * (1.0 - df.y), (1.0 - df.x) * df.y, df.x * df.y);
            for (var q = 0u; q < 4u; q++) {
                let o = vec2<f32>(f32(q & 1u), f32(q >> 1u));
                let c = (i + o) * d.h - vec2<f32>(x0, y0);
                tw[q] = vec3<f32>(t.z * c.y, -t.z * c.x, t.z);
            }
        }
    }
    var a = vec4<f32>(0.0);
    let n = d.nx * d.ny;
    for (var i = lid; i < n; i += 256u) {
        let w = weights[d.offset + i];
        if w == 0.0 {
            continue;
        }
        let r = cell_centre(d, i);
        var l = vec2<f32>(0.0);
        for (var q = 0u; q < 4u; q++) {
            if s[q] != 0.0 {
                l += s[q] * steady_cell(cell_velocity(tw[q], r));
            }
        }
        a += w * vec4<f32>(l, r.x * l.y - r.y * l.x, 0.0);
    }
    reduce1(lid, a);
    if lid == 0u {
        out[j] = -d.f_n * red_a[0];
    }
}
