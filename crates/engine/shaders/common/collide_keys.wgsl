// stages: collide_pairs, collide_csr
// Sorting collision's rows: sphere rows (collide_pairs `write_sphere_row`) and CSR rows
// (collide_csr `sort_b`) of up to 16 distinct u32 keys are sorted in registers as they are
// read (`Keys`); longer ones by a heap sort in place (`entries_heap_sort`). On llvmpipe
// every storage access is a loop over the SIMD lanes, so an insertion sort in storage (n²
// reads and moves) costs far more than these vector selects; a private array indexed per
// lane would live in scratch memory, each access such a loop.

const NO_KEY: u32 = 0xffffffffu;

// An ascending list of 16 ids in 4 vectors (empty slots NO_KEY).
struct Keys {
    a: vec4<u32>,
    b: vec4<u32>,
    c: vec4<u32>,
    d: vec4<u32>,
}

// Vector v of the list after inserting x (left: the id before v's first slot, 0 for the
// first): a slot takes its left neighbour when that is above x, x where x goes, else keeps
// its id (the ids of a row are distinct).
fn keys_insert4(v: vec4<u32>, left: u32, x: u32) -> vec4<u32> {
    let prev = vec4<u32>(left, v.xyz);
    let xs = vec4<u32>(x);
    return select(select(v, xs, v > xs), prev, prev > xs);
}

// Inserts x: selects on whole slots, nothing indexed per lane.
fn keys_insert(k: Keys, x: u32) -> Keys {
    return Keys(
        keys_insert4(k.a, 0u, x),
        keys_insert4(k.b, k.a.w, x),
        keys_insert4(k.c, k.b.w, x),
        keys_insert4(k.d, k.c.w, x),
    );
}

// Id m (< 16) of the list.
fn keys_pick(k: Keys, m: u32) -> u32 {
    var q = k.a;
    q = select(q, k.b, m >= 4u);
    q = select(q, k.c, m >= 8u);
    q = select(q, k.d, m >= 12u);
    let c = m & 3u;
    return select(select(q.x, q.y, c == 1u), select(q.z, q.w, c == 3u), c >= 2u);
}

// ---------------------------------------------------------------- long rows
// Why O(n log n) and not an insertion sort: llvmpipe (lavapipe) ends every loop of an
// invocation, silently, once that invocation has run 65 535 loop iterations in all
// (gallivm's LP_MAX_TGSI_LOOP_ITERATIONS, shared by every loop of a shader). An insertion
// sort of a 428-entry row needs up to 91 000 moves, so the sort stopped part-way whenever
// the visit order (atomic ranks, thread timing) needed more: a contact list that changed
// from run to run. A heap sort of n entries takes about 2 n log2 n iterations (16 000 for
// 500), whatever the input order.

// Restores the max-heap below `root` in body_entries[s .. s + end).
fn entries_sift(s: u32, root0: u32, end: u32) {
    var root = root0;
    loop {
        let l = 2u * root + 1u;
        if l >= end {
            break;
        }
        var m = root;
        var vm = body_entries[s + root];
        let vl = body_entries[s + l];
        if vl > vm {
            m = l;
            vm = vl;
        }
        if l + 1u < end && body_entries[s + l + 1u] > vm {
            m = l + 1u;
            vm = body_entries[s + m];
        }
        if m == root {
            break;
        }
        body_entries[s + m] = body_entries[s + root];
        body_entries[s + root] = vm;
        root = m;
    }
}

// Ascending heap sort of body_entries[s .. s + n) (n = 0: nothing, no loop entered).
fn entries_heap_sort(s: u32, n: u32) {
    for (var k = n / 2u; k > 0u; k--) {
        entries_sift(s, k - 1u, n);
    }
    for (var e = n; e > 1u; e--) {
        let top = body_entries[s];
        body_entries[s] = body_entries[s + e - 1u];
        body_entries[s + e - 1u] = top;
        entries_sift(s, 0u, e - 1u);
    }
}
