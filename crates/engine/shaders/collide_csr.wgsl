// Collision, per-body contact lists (CSR) for the solver's gather.
// count_b:     per contact (indirect), deg[B] += 1 (u32 atomics: the total is order-free).
// row_degrees: per body, row length = contacts as A (known from the row offsets) + deg;
//              resets deg to 0 so it serves as the B cursor below.
// (host)       exclusive scan of body_offsets (bodies + 1 entries).
// fill:        per contact (indirect): A entry at a fixed place (A's own rows are contiguous
//              and ascending), B entry through the atomic cursor.
// sort_b:      per body, sort of its B entries (in registers when at most 16, else a heap
//              sort in place). Every B
//              entry of a body precedes its A entries (rows are sorted by A, and A < B), so
//              the row ends up ascending.
// Entry = contact index * 2 + side (0: the body is A, 1: it is B).

@group(0) @binding(0) var<uniform> params: CollideParams;
@group(0) @binding(1) var<storage, read> counts: array<u32>;
@group(0) @binding(2) var<storage, read> offs: array<u32>;
@group(0) @binding(3) var<storage, read> contacts: array<Contact>; // chunked(4)
@group(0) @binding(4) var<storage, read_write> deg: array<atomic<u32>>;
@group(0) @binding(5) var<storage, read_write> body_offsets: array<u32>;
@group(0) @binding(6) var<storage, read_write> body_entries: array<u32>;

// First contact of body b's rows as A, and their number.
fn rows_a(b: u32) -> vec2<u32> {
    let nb = params.boundaries;
    let ng = params.grains;
    if b < nb {
        let s = offs[b * ng];
        return vec2<u32>(s, offs[(b + 1u) * ng] - s);
    }
    let i = nb * ng + (b - nb);
    let s = offs[i];
    return vec2<u32>(s, offs[i + 1u] - s);
}

@compute @workgroup_size(256)
fn count_b(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let c = linear_index(gid, nwg);
    if c >= counts[0] {
        return;
    }
    atomicAdd(&deg[contacts_at(c).ids.y], 1u);
}

@compute @workgroup_size(256)
fn row_degrees(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let b = linear_index(gid, nwg);
    let n = params.bodies;
    if b == n {
        body_offsets[n] = 0u;
    }
    if b >= n {
        return;
    }
    var len = atomicLoad(&deg[b]);
    atomicStore(&deg[b], 0u);
    if counts[1] == 0u {
        len += rows_a(b).y;
    }
    body_offsets[b] = len;
}

@compute @workgroup_size(256)
fn fill(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let c = linear_index(gid, nwg);
    if c >= counts[0] {
        return;
    }
    let ids = contacts_at(c).ids;
    let ra = rows_a(ids.x);
    body_entries[body_offsets[ids.x + 1u] - ra.y + (c - ra.x)] = 2u * c;
    let k = atomicAdd(&deg[ids.y], 1u);
    body_entries[body_offsets[ids.y] + k] = 2u * c + 1u;
}

@compute @workgroup_size(256)
fn sort_b(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let b = linear_index(gid, nwg);
    if b >= params.bodies || counts[1] != 0u {
        return;
    }
    let s = body_offsets[b];
    let e = body_offsets[b + 1u] - rows_a(b).y;
    // Up to 16 entries: sorted in registers as they are read, written once each
    // (common/collide_keys.wgsl), cheaper than an insertion sort in storage (book: Benchmarks,
    // measurement history).
    let short = e - s <= 16u;
    let ns = select(0u, e - s, short);
    var keys = Keys(vec4<u32>(NO_KEY), vec4<u32>(NO_KEY), vec4<u32>(NO_KEY), vec4<u32>(NO_KEY));
    for (var m = 0u; m < ns; m++) {
        keys = keys_insert(keys, body_entries[s + m]);
    }
    for (var m = 0u; m < ns; m++) {
        body_entries[s + m] = keys_pick(keys, m);
    }
    // Longer rows: a heap sort in place (common/collide_keys.wgsl says why not an insertion
    // sort; no lane enters its loops unless some lane's row is long).
    entries_heap_sort(s, select(e - s, 0u, short));
}
