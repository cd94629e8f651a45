// Exclusive prefix sum of a u32 array, in place, any length (multi-level, deterministic:
// integer adds in a fixed tree). One workgroup scans a block of 1024 elements (4 per
// invocation) and writes the block total to `sums`; the host scans `sums` the same way
// (recursively) and `scan_add` adds each block's scanned offset back.
// Used by collision for the hash-grid histogram, the per-(row) contact counts and the
// per-body CSR row lengths. Scanning n+1 elements whose last is 0 leaves the total at [n].

struct ScanParams {
    count: u32, // elements
    _pad0: u32,
    _pad1: u32,
    _pad2: u32,
}

@group(0) @binding(0) var<uniform> sp: ScanParams;
@group(0) @binding(1) var<storage, read_write> data: array<u32>;
@group(0) @binding(2) var<storage, read_write> sums: array<u32>;

const SCAN_BLOCK: u32 = 1024u;

var<workgroup> sh: array<u32, 256>;
// Exclusive prefix of the 16 chunk totals (second level).
var<workgroup> sh2: array<u32, 16>;

@compute @workgroup_size(256)
fn scan_block(
    @builtin(local_invocation_index) li: u32,
    @builtin(workgroup_id) wid: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
) {
    let n = sp.count;
    let block = wid.x + wid.y * nwg.x;
    let base = block * SCAN_BLOCK + li * 4u;
    var v: array<u32, 4>;
    var s = 0u;
    for (var k = 0u; k < 4u; k++) {
        let i = base + k;
        var x = 0u;
        if i < n {
            x = data[i];
        }
        v[k] = s;
        s += x;
    }
    // Inclusive scan of the 256 lane totals in two levels of 16 (3 barriers, not a
    // Hillis–Steele ladder's 17: lavapipe switches every fiber of the workgroup at each).
    sh[li] = s;
    workgroupBarrier();
    if li < 16u {
        var acc = 0u;
        for (var k = 0u; k < 16u; k++) {
            acc += sh[li * 16u + k];
            sh[li * 16u + k] = acc;
        }
    }
    workgroupBarrier();
    if li == 0u {
        var acc = 0u;
        for (var k = 1u; k < 16u; k++) {
            acc += sh[k * 16u - 1u];
            sh2[k] = acc;
        }
        sh2[0] = 0u;
    }
    workgroupBarrier();
    // Each lane reads back only its own entry (lane 255 the block total): no barrier.
    sh[li] += sh2[li / 16u];
    let excl = sh[li] - s;
    for (var k = 0u; k < 4u; k++) {
        let i = base + k;
        if i < n {
            data[i] = excl + v[k];
        }
    }
    if li == 255u {
        sums[block] = sh[255];
    }
}

@compute @workgroup_size(256)
fn scan_add(
    @builtin(local_invocation_index) li: u32,
    @builtin(workgroup_id) wid: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
) {
    let n = sp.count;
    let block = wid.x + wid.y * nwg.x;
    let add = sums[block];
    let base = block * SCAN_BLOCK + li * 4u;
    for (var k = 0u; k < 4u; k++) {
        let i = base + k;
        if i < n {
            data[i] += add;
        }
    }
}
