// Cell states of the distributed model carried by patch key (book: Contact patches, `lugre_patch`):
// after collision the step's patches (keys sorted, as the contact list) take the cells of
// the previous step's patch with the same key, a new patch starts at rest. One invocation
// per cell of the new buffer, a binary search per invocation (no shared state, any order).
// CPU twin: patch::cells::remap_cells.

struct RemapParams {
    count: u32,
    prev_count: u32,
    cells: u32,
    _pad: u32,
}

@group(0) @binding(0) var<uniform> rp: RemapParams;
@group(0) @binding(1) var<storage, read> prev_keys: array<vec4<u32>>;
@group(0) @binding(2) var<storage, read> keys: array<vec4<u32>>;
@group(0) @binding(3) var<storage, read> prev_z: array<vec2<f32>>;
@group(0) @binding(4) var<storage, read_write> z: array<vec2<f32>>;

// -1, 0, 1 as a is before, equal to or after b (lexicographic).
fn key_order(a: vec3<u32>, b: vec3<u32>) -> i32 {
    for (var d = 0u; d < 3u; d++) {
        if a[d] != b[d] {
            return select(1, -1, a[d] < b[d]);
        }
    }
    return 0;
}

// Slot of `key` among the previous step's sorted keys, or -1.
fn find_prev_patch(key: vec3<u32>) -> i32 {
    var lo = 0u;
    var hi = rp.prev_count;
    while lo < hi {
        let mid = (lo + hi) / 2u;
        let o = key_order(prev_keys[mid].xyz, key);
        if o == 0 {
            return i32(mid);
        }
        if o < 0 {
            lo = mid + 1u;
        } else {
            hi = mid;
        }
    }
    return -1;
}

@compute @workgroup_size(256)
fn remap(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = linear_index(gid, nwg);
    if i >= rp.count * rp.cells {
        return;
    }
    let k = i / rp.cells;
    let kp = find_prev_patch(keys[k].xyz);
    var v = vec2<f32>(0.0);
    if kp >= 0 {
        v = prev_z[u32(kp) * rp.cells + i % rp.cells];
    }
    z[i] = v;
}
