// Plain copy: the bandwidth yardstick every kernel is measured against on the same adapter.

struct CopyParams {
    counts: vec4<u32>, // x = number of vec4 elements
}

@group(0) @binding(0) var<uniform> params: CopyParams;
@group(0) @binding(1) var<storage, read> src: array<vec4<f32>>;
@group(0) @binding(2) var<storage, read_write> dst: array<vec4<f32>>;

@compute @workgroup_size(256)
fn copy(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = linear_index(gid, nwg);
    if i >= params.counts.x {
        return;
    }
    dst[i] = src[i];
}
